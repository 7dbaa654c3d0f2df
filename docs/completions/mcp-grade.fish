# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mcp_grade_global_optspecs
    string join \n format= o/output= benchmark= level= baseline= update-baseline policy= waivers= attestations= v/verbose group-by= strict-waivers fail-on= trust= trust-list= tsa-cert= j/jobs= attest= attest-key= q/quiet h/help V/version
end

function __fish_mcp_grade_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mcp_grade_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mcp_grade_using_subcommand
    set -l cmd (__fish_mcp_grade_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l format -d 'Report format: text, json, sarif, junit, markdown, html, oscal or xccdf (case-insensitive)' -r
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -s o -l output -d 'Write the report to FILE (atomically) instead of stdout' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l benchmark -d 'Grade under this benchmark definition: an embedded id (`mcp-grade benchmarks` lists them), a definition file, or a tailoring file that extends an embedded one (selects, deselects, refines parameters). Default: the newest embedded. An unusable definition is a usage error naming file, line and key (exit 2)' -r
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l level -d 'Restrict to the checks of a profile level: 1 (L1 only) or 2 (L1 and L2)' -r
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l baseline -d 'Compare drift checks with this earlier bundle of the same endpoint (verified like any bundle; every graded bundle must be of its endpoint)' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l policy -d 'The operator\'s policy (TOML, or JSON for a .json file): approved revisions, authorization servers and scopes, allowed origins, the longest token lifetime (docs/schemas/policy.schema.json). The report names it and its SHA-256' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l waivers -d 'Accepted findings (TOML `[[waiver]]` tables: check, endpoint (exact or glob), reason, expires): a waived result is shown with its reason and does not set the exit status; an expired waiver no longer applies; one that waives nothing is reported as stale' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l attestations -d 'The operator\'s attestations (TOML `[[attestation]]` tables: recommendation, status, by, date, evidence, expires, comment): they complete reported-only and unreachable recommendations, and never change a verdict from the wire (a contradicting one is shown as a CONFLICT); an expired one counts as not attested' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l group-by -d 'Text summary and HTML: list the servers grouped by where their targets came from (`source`: the MCP client and configuration file a `mcp-collect --from-config` bundle names; other bundles under "given as targets")' -r -f -a "source\t''"
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l fail-on -d 'Which verdicts fail the run: fail (exit 1 on FAIL only), error (also exit 4 on ERROR; the default), unknown (also exit 5 on UNKNOWN)' -r
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l trust -d 'Pin a collector public key (SPKI PEM, 64 hex digits, or base64); repeatable. With pins, a bundle signed by any other key fails verification' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l trust-list -d 'Collector keys with periods and revocation (TOML `[[key]]` tables: public_key, name, not_before, not_after, revoked_at, comment; docs/bundle.md section 6). A bundle\'s signer must be listed (or pinned with --trust); its verified RFC 3161 timestamp, else its claimed seal time, must lie in the key\'s period; a revoked key\'s bundle needs a verified timestamp before the revocation' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l tsa-cert -d 'Trust anchor(s) for the bundles\' RFC 3161 timestamp tokens (PEM certificate file, repeatable): the report shows each bundle\'s TSA and time, or why not' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -s j -l jobs -d 'How many bundles are verified and graded at once (default: the number of cores). The output is the same bytes whatever the number: reports, lines and messages come out in argument order' -r
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l attest -d 'Write a signed statement to FILE (an in-toto Statement in a DSSE envelope, signed with the grader key): every graded bundle and the report by SHA-256, with the definition, policy, waivers, totals and grader build. `mcp-grade verify-statement` checks it' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l attest-key -d 'The grader key signing --attest statements (Ed25519 PKCS#8 PEM; default keys/grader.key under $MCP_PROBE_HOME or ~/.mcp-probe, created on first use)' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l update-baseline -d 'Store each graded bundle as its endpoint\'s baseline (under $MCP_PROBE_HOME or ~/.mcp-probe, baselines/); comparing checks report UNKNOWN in this run'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -s v -l verbose -d 'Text report: the whole check-centric report with every result\'s evidence, instead of the summary-first one'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -l strict-waivers -d 'A stale waiver (one that waives nothing) or an expired one is a usage error (exit 2)'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -s q -l quiet -d 'Print no warnings, notes or progress line on stderr (errors are still printed)'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -s V -l version -d 'Print version'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "verify" -d 'Verify bundles: format, record chain, signature, the signer against --trust and --trust-list, the RFC 3161 timestamp when the bundle carries one, and its renewals (the detached tokens BUNDLE.tsr, BUNDLE.tsr.2, ... beside it, written by `mcp-collect timestamp`)'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "show" -d 'Show what a bundle recorded: readable transcript, JSON, or HAR'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "diff" -d 'What changed between two bundles, or between two JSON reports (mcp-grade --format json): revision and eras, identity, capabilities, inventory, verdicts'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "benchmarks" -d 'List the benchmark definitions embedded in this build: id, name and version, date, number of checks, SHA-256; the default is marked'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "checks" -d 'List the checks of a benchmark definition: number, level, status, verdict source, the rule that grades it and its parameters, transports, eras and the legs the rule reads'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "verify-statement" -d 'Verify a signed grading statement (mcp-grade --attest): its DSSE signature by a --trust key over the PAE of the payload, the in-toto statement type, and that each FILE given (a bundle or the report) is one of its subjects by SHA-256'
complete -c mcp-grade -n "__fish_mcp_grade_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -l trust -d 'Pin a collector public key (SPKI PEM, 64 hex digits, or base64); repeatable. With pins, a bundle signed by any other key fails verification' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -l trust-list -d 'Collector keys with periods and revocation (TOML `[[key]]` tables: public_key, name, not_before, not_after, revoked_at, comment; docs/bundle.md section 6). A bundle\'s signer must be listed (or pinned with --trust); its verified RFC 3161 timestamp, else its claimed seal time, must lie in the key\'s period; a revoked key\'s bundle needs a verified timestamp before the revocation' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -l tsa-cert -d 'Trust anchor(s) for RFC 3161 timestamp tokens, embedded and detached: PEM certificate file (repeatable). Without it, a TSA certificate must chain to the public roots the grader ships' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -s j -l jobs -d 'How many bundles are verified at once (default: the number of cores). The output is the same bytes whatever the number: lines and messages come out in argument order' -r
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -l json -d 'One JSON object per bundle on stdout (JSON Lines): file, valid, reason, signer, collected_at, endpoint, status, records, timestamp (and key, with --trust-list; renewal, when the bundle has sidecars)'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -s q -l quiet -d 'Print no warnings or notes on stderr (errors are still printed)'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -l trust -d 'Pin a collector public key (SPKI PEM, 64 hex digits, or base64); repeatable. With pins, a bundle signed by any other key fails verification' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -l trust-list -d 'Collector keys with periods and revocation (TOML `[[key]]` tables: public_key, name, not_before, not_after, revoked_at, comment; docs/bundle.md section 6). A bundle\'s signer must be listed (or pinned with --trust); its verified RFC 3161 timestamp, else its claimed seal time, must lie in the key\'s period; a revoked key\'s bundle needs a verified timestamp before the revocation' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -l tsa-cert -d 'With --trust-list: trust anchor(s) for the bundle\'s RFC 3161 timestamp, whose genTime a listed key\'s period is judged on (PEM certificate file, repeatable; default: the public roots the grader ships)' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -l json -d 'Emit the whole decoded bundle as one JSON document'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -l har -d 'Emit the HTTP exchanges as a HAR 1.2 log'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -s q -l quiet -d 'Print no warnings or notes on stderr (errors are still printed)'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -l format -d 'Output format: text or json (case-insensitive)' -r
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -l match -d 'How servers are paired: endpoint (the URL; the default) or identity (serverInfo name and transport, so the same server on another port or host matches)' -r
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -l trust -d 'Pin a collector public key (SPKI PEM, 64 hex digits, or base64); repeatable. With pins, a bundle signed by any other key fails verification' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -l trust-list -d 'Collector keys with periods and revocation (TOML `[[key]]` tables: public_key, name, not_before, not_after, revoked_at, comment; docs/bundle.md section 6). A bundle\'s signer must be listed (or pinned with --trust); its verified RFC 3161 timestamp, else its claimed seal time, must lie in the key\'s period; a revoked key\'s bundle needs a verified timestamp before the revocation' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -l tsa-cert -d 'With --trust-list: trust anchor(s) for the bundles\' RFC 3161 timestamps, whose genTime a listed key\'s period is judged on (PEM certificate file, repeatable; default: the public roots the grader ships)' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -s q -l quiet -d 'Print no warnings or notes on stderr (errors are still printed)'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand benchmarks" -l format -d 'Output format: text or json (JSON Lines, one definition per line)' -r
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand benchmarks" -s h -l help -d 'Print help'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand checks" -l benchmark -d 'The definition to list: an embedded id (see `mcp-grade benchmarks`), a definition file, or a tailoring file (default: the newest embedded)' -r
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand checks" -l format -d 'Output format: text or json (docs/schemas/checks.schema.json)' -r
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand checks" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify-statement" -l trust -d 'The grader\'s public key (SPKI PEM, 64 hex digits, or base64; the grader.pub beside the grader key); repeatable: any of them may have signed' -r -F
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand verify-statement" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "verify" -d 'Verify bundles: format, record chain, signature, the signer against --trust and --trust-list, the RFC 3161 timestamp when the bundle carries one, and its renewals (the detached tokens BUNDLE.tsr, BUNDLE.tsr.2, ... beside it, written by `mcp-collect timestamp`)'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "show" -d 'Show what a bundle recorded: readable transcript, JSON, or HAR'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "diff" -d 'What changed between two bundles, or between two JSON reports (mcp-grade --format json): revision and eras, identity, capabilities, inventory, verdicts'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "benchmarks" -d 'List the benchmark definitions embedded in this build: id, name and version, date, number of checks, SHA-256; the default is marked'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "checks" -d 'List the checks of a benchmark definition: number, level, status, verdict source, the rule that grades it and its parameters, transports, eras and the legs the rule reads'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "verify-statement" -d 'Verify a signed grading statement (mcp-grade --attest): its DSSE signature by a --trust key over the PAE of the payload, the in-toto statement type, and that each FILE given (a bundle or the report) is one of its subjects by SHA-256'
complete -c mcp-grade -n "__fish_mcp_grade_using_subcommand help; and not __fish_seen_subcommand_from verify show diff benchmarks checks verify-statement help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
