# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mcp_collect_global_optspecs
    string join \n servers-file= o/out= info inputs= baseline= token-env= client-id= client-secret-env= grant= client-key-file= assertion-env= idp-token-endpoint= id-token-env= idp-client-id= idp-client-secret-env= client-metadata-url= audience= no-resource-indicator reauth no-browser key= public-key ca-file= tsa= timeout= target-timeout= concurrency= max-pages= body-cap= bundle-cap= recover= plaintext-port= shard= manifest= header= proxy= client-cert= client-key= q/quiet v/verbose stdio env= list-config= from-config= allow-exec= use-config-credentials format= h/help V/version
end

function __fish_mcp_collect_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mcp_collect_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mcp_collect_using_subcommand
    set -l cmd (__fish_mcp_collect_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l servers-file -d 'File with one target per line; \'#\' starts a comment' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -s o -l out -d 'Directory the bundles are written to' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l inputs -d 'Operator probe inputs, JSON keyed by target as typed (default: ~/.mcp-probe/probe-inputs.json when it exists)' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l baseline -d 'The approved baseline for 1.3\'s tool selection: an earlier bundle of the same endpoint (default: the store `mcp-grade --update-baseline` writes)' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l token-env -d 'Take a bearer token from this environment variable (unattended runs)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l client-id -d 'OAuth client id registered with the authorization server beforehand (for servers that do not allow dynamic client registration): the login uses it instead of registering a client. A public value, recorded in the bundle' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l client-secret-env -d 'Take the --client-id\'s secret from this environment variable (never a flag value); without it the client is public. Sent as client_secret_basic or client_secret_post, as the authorization server\'s metadata allows; never recorded' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l grant -d 'How to obtain a token when the endpoint wants one and none is cached: the browser login (authorization-code, the default), or an unattended grant with the --client-id client: client-credentials (with --client-secret-env or --client-key-file), jwt-bearer (a workload identity token from --assertion-env) or enterprise-managed (--idp-token-endpoint and --id-token-env: token exchange at the identity provider, then a JWT-bearer grant)' -r -f -a "authorization-code\t'The browser login: authorization code with PKCE (the default)'
client-credentials\t'OAuth client credentials: a machine client with a secret or a key'
jwt-bearer\t'RFC 7523 JWT bearer: a workload identity token as the assertion'
enterprise-managed\t'Enterprise-managed authorization: token exchange at the identity provider, then a JWT-bearer grant with the identity assertion'"
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l client-key-file -d 'Private key (PEM: PKCS#8, or PKCS#1 for RSA) of the --client-id client: the client authenticates with RFC 7523 client assertions (private_key_jwt), signed with an algorithm the authorization server lists. Never recorded' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l assertion-env -d 'Take the --grant jwt-bearer assertion (a workload identity token, such as a CI system\'s OIDC token) from this environment variable' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l idp-token-endpoint -d '--grant enterprise-managed: the enterprise identity provider\'s token endpoint, where the ID token is exchanged for an identity assertion (RFC 8693)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l id-token-env -d '--grant enterprise-managed: take the operator\'s ID token from this environment variable' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l idp-client-id -d '--grant enterprise-managed: the client id at the identity provider, if it wants one' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l idp-client-secret-env -d '--grant enterprise-managed: take the --idp-client-id\'s secret from this environment variable (sent as client_secret_basic; never recorded)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l client-metadata-url -d 'URL of the client ID metadata document the operator hosts (https; http only on loopback): used as the client id where the authorization server advertises client_id_metadata_document_supported, before dynamic client registration' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l audience -d 'An `audience` parameter sent with every authorization and token request of the login, for authorization servers that want their own (Auth0: the API identifier)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l key -d 'Ed25519 signing key, PKCS#8 PEM (default ~/.mcp-probe/keys/collector.key, created 0600 on first use)' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l ca-file -d 'Extra trust anchor(s), PEM, for a private PKI (recorded in the bundle)' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l tsa -d 'RFC 3161 time-stamping authority (http or https URL): each bundle\'s COSE signature is timestamped and the token stored in the bundle\'s unprotected header. A TSA that fails is recorded in the bundle and warned about on stderr; the bundle is sealed all the same and the exit code does not change. The request has the --timeout deadline. Bundles sealed after a signal are not timestamped' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l timeout -d 'Per-request deadline in seconds, for the request as a whole (connect, TLS, head and body, event-stream keepalives included), not the gap between bytes' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l target-timeout -d 'Per-target deadline in seconds: when it passes, the target\'s run stops sending and its bundle is sealed `interrupted` with the evidence collected so far' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l concurrency -d 'Targets probed at once (requests to one server are never concurrent)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l max-pages -d 'Most pages read per list method before stopping (recorded in the bundle)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l body-cap -d 'Response bodies are stored up to this many bytes (longer ones are hashed whole)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l bundle-cap -d 'Once a target\'s journal holds this many bytes, later HTTP bodies are stored as their length and SHA-256 only (recorded in the bundle: `run.bundle_capped_from`)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l recover -d 'Seal the journal a killed run left (`<bundle>.mcpev.journal`) into a bundle with status `recovered`, after checking its hash chain; records past a torn write are dropped and counted. Takes no target' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l plaintext-port -d 'Port of the plaintext probe (`GET http://host:PORT/`); 80 unless the deployment exposes its plaintext door elsewhere' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l shard -d 'Collect only this machine\'s share of the targets: `K/N` (0 <= K < N) keeps the targets whose stable hash (SHA-256 of the target as typed) modulo N is K, so N machines given 0/N .. (N-1)/N (a Kubernetes Indexed Job, a CI matrix) split a servers file without overlap or gap' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l manifest -d 'Write one JSON line per target to FILE once the run ends: target, bundle, status, revision, seconds (written atomically; also after a signal)' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l header -d 'Extra request header `NAME: VALUE`, sent on every request to the targets\' origins (repeatable; never to another origin such as an authorization server elsewhere). Names the probe sets or varies itself (Host, Authorization, Origin, Accept, Content-Type, Mcp-Session-Id, MCP-Protocol-Version, ...) are refused; values of sensitive names (Cookie, names containing token, secret, key, auth, session, password) appear only as fingerprints' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l proxy -d 'HTTP CONNECT proxy for every connection, `http://[user:pass@]host:port` (default: HTTPS_PROXY / HTTP_PROXY by the URL\'s scheme; NO_PROXY applies to both)' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l client-cert -d 'Client certificate (PEM, leaf first) for mutual TLS with the targets; needs --client-key' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l client-key -d 'Private key (PEM) of --client-cert; never recorded' -r -F
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l env -d 'An environment variable for the `--stdio` server (repeatable). Only its name is recorded; the value is redacted wherever it appears' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l list-config -d 'Print the MCP servers that MCP client configuration files name (Claude Desktop, Claude Code, Cursor, Windsurf, Kiro, VS Code, OpenCode, Gemini CLI) and exit, contacting and running nothing: FILE, or `auto` (the default) for the current user\'s and the working directory\'s well-known files. Secret-looking values appear only as fingerprints' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l from-config -d 'Collect every MCP server that MCP client configuration files name, each as if it were given as a target (a remote entry as its URL, a stdio entry as a --stdio target): FILE, or `auto` (the default) for the files --list-config reads. A stdio entry runs only with --allow-exec or a yes at the terminal; configured credentials are used only with --use-config-credentials' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l allow-exec -d '--from-config: the stdio entries (by entry name; `all` for every one) whose command may run without asking' -r
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l format -d 'Output of --list-config, and only of it (it needs --list-config): a table (text, the default) or a JSON array (json)' -r -f -a "text\t'One line per entry, columns padded'
json\t'A JSON array of objects'"
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l info -d 'Connect and enumerate only; print endpoint, revision, server and inventory counts'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l no-resource-indicator -d 'Do not send the RFC 8707 `resource` parameter in the login (for authorization servers that refuse it). The probe\'s own wrong-audience grant (3.3.1b) still names one'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l reauth -d 'Forget the cached OAuth client registration and tokens of each target\'s endpoint and log in again'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l no-browser -d 'Do not open a browser for an OAuth login: print the authorization URL on stderr'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l public-key -d 'Print the signing key\'s public key (SPKI PEM) on stdout and exit'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -s q -l quiet -d 'No progress lines on stderr'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -s v -l verbose -d 'Longer notices on stderr: after each target with an MCP session, what every probe input it lacked is and which checks it decides (one short line without)'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l stdio -d 'Launch a local MCP server (the command after `--`) and speak JSON-RPC over its stdin and stdout. The server gets a clean environment: the `--env` variables, plus PATH, HOME, LANG and TMPDIR from this process when set'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -l use-config-credentials -d '--from-config: give the servers the credentials their entries configure (secret-looking header and environment values, sensitive URL query parameters); each is redacted wherever it appears. Without it the entry is collected without them, and the bundle says a credential was configured but not supplied'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -s V -l version -d 'Print version'
complete -c mcp-collect -n "__fish_mcp_collect_needs_command" -a "timestamp" -d 'Renew the RFC 3161 timestamp of sealed bundles: one detached token per BUNDLE, written beside it in the next free slot (BUNDLE.tsr, then BUNDLE.tsr.2, ...)'
complete -c mcp-collect -n "__fish_mcp_collect_using_subcommand timestamp" -l tsa -d 'RFC 3161 time-stamping authority (http or https URL), asked once per BUNDLE' -r
complete -c mcp-collect -n "__fish_mcp_collect_using_subcommand timestamp" -l timeout -d 'Deadline in seconds of each TSA request as a whole (connect, TLS, head and body)' -r
complete -c mcp-collect -n "__fish_mcp_collect_using_subcommand timestamp" -l concurrency -d 'Bundles timestamped at once' -r
complete -c mcp-collect -n "__fish_mcp_collect_using_subcommand timestamp" -s q -l quiet -d 'No progress lines on stderr'
complete -c mcp-collect -n "__fish_mcp_collect_using_subcommand timestamp" -s h -l help -d 'Print help (see more with \'--help\')'
