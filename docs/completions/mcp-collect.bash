_mcp__collect() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="mcp__collect"
                ;;
            mcp__collect,timestamp)
                cmd="mcp__collect__subcmd__timestamp"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        mcp__collect)
            opts="-o -q -v -h -V --servers-file --out --info --inputs --baseline --token-env --client-id --client-secret-env --grant --client-key-file --assertion-env --idp-token-endpoint --id-token-env --idp-client-id --idp-client-secret-env --client-metadata-url --audience --no-resource-indicator --reauth --no-browser --key --public-key --ca-file --tsa --timeout --target-timeout --concurrency --max-pages --body-cap --bundle-cap --recover --plaintext-port --shard --manifest --header --proxy --client-cert --client-key --quiet --verbose --stdio --env --list-config --from-config --allow-exec --use-config-credentials --format --help --version timestamp"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --servers-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --inputs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-secret-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --grant)
                    COMPREPLY=($(compgen -W "authorization-code client-credentials jwt-bearer enterprise-managed" -- "${cur}"))
                    return 0
                    ;;
                --client-key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --assertion-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idp-token-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --id-token-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idp-client-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idp-client-secret-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-metadata-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audience)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tsa)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --target-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-pages)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --body-cap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bundle-cap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recover)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plaintext-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --manifest)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --list-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow-exec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mcp__collect__subcmd__timestamp)
            opts="-q -h --tsa --timeout --concurrency --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --tsa)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _mcp__collect -o nosort -o bashdefault -o default mcp-collect
else
    complete -F _mcp__collect -o bashdefault -o default mcp-collect
fi
