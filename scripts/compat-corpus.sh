#!/usr/bin/env bash
# The compatibility corpus (examples/compat/collector-<commit>/, and examples-0.1.0/, the
# examples as collector 0.1.0 recorded them, kept as they are): bundles written by
# earlier collectors of this repository, graded by evaluator/tests/compat.rs.
#
#   scripts/compat-corpus.sh [COMMIT...]   rebuild each collector, collect, write expected.json
#   scripts/compat-corpus.sh --regrade     rewrite every folder's expected.json only (no build,
#                                          no lab): after a deliberate re-grading
#
# The commits, the lab targets each one probes and why it is in the corpus are listed in
# examples/compat/COMMITS (one line each: commit, targets, reason); with no COMMIT
# argument every listed commit is rebuilt. For each commit: `git archive` into a
# temporary directory, `cargo build` of the collector binary only, with one
# CARGO_TARGET_DIR shared by every commit (COMPAT_TARGET_DIR, default
# ${TMPDIR:-/tmp}/mcp-probe-compat-target) so dependencies are built once, the sources
# deleted again; then a run against the lab with a fresh signing key (HOME is a fresh
# directory: every collector since the first creates ~/.mcp-probe/keys/collector.key
# on first use), whose public key is kept as collector.pub. The secret key is
# discarded. expected.json holds the current grader's verdict of every check per
# bundle under cis-mcp-server-1.0.0, keyed by the check's rule id (not its number: a
# revision renumbers checks, a rule id is stable), and for each ERROR the legs its
# evidence names as missing.
#
# Needs the lab (`set -a; . lab/run/env; set +a`: LAB_PY2, LAB_PY1, LAB_PY1_SSE) and its
# venvs for the stdio target (MCP_PROBE_LAB, default lab/, must hold .venv-mcp2).
# Targets: py2 (LAB_PY2, both eras), py1 (LAB_PY1, legacy only), py1-sse (LAB_PY1_SSE,
# HTTP+SSE), py2-stdio (lab/stdio/py2_stdio.py over stdio), stdio-flood
# (collector/tests/support/stdio_flood.py over stdio, --bundle-cap 64 KiB: what a
# collector records past the cap), py2-config and py2-stdio-config (the same servers
# named by a client configuration file, collected with --from-config).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus=$root/examples/compat
list=$corpus/COMMITS
lab=${MCP_PROBE_LAB:-$root/lab}
target_dir=${COMPAT_TARGET_DIR:-${TMPDIR:-/tmp}/mcp-probe-compat-target}
export CARGO_INCREMENTAL=0

die() { echo "compat-corpus: $*" >&2; exit 1; }

# The current grader, which writes expected.json.
grader() {
    (cd "$root" && cargo build -q -p mcp-probe-evaluator --bin mcp-grade) >&2
    echo "${CARGO_TARGET_DIR:-$root/target}/debug/mcp-grade"
}

# expected.json of one folder from the current grader's JSON reports.
write_expected() {
    local dir=$1 commit=$2 grade=$3 reports
    reports=$(mktemp -d)
    for b in "$dir"/*.mcpev; do
        local rc=0
        "$grade" --format json --benchmark cis-mcp-server-1.0.0 --trust "$dir/collector.pub" "$b" >"$reports/$(basename "$b").json" || rc=$?
        case $rc in 0 | 1 | 4 | 5) ;; *) die "$b: mcp-grade exited $rc" ;; esac
    done
    python3 - "$reports" "$commit" >"$dir/expected.json" <<'PY'
import json, os, re, sys
reports, commit = sys.argv[1], sys.argv[2]
bundles = {}
for name in sorted(os.listdir(reports)):
    r = json.load(open(os.path.join(reports, name)))
    verdicts, missing = {}, {}
    for c in r["checks"]:
        res = c["results"][0]
        verdicts[c["rule"]] = res["verdict"]
        if res["verdict"] == "ERROR":
            # Every leg the evidence names as missing ("leg(s) A, B missing: ...",
            # "leg A missing: ..."), in order.
            legs = []
            for m in re.finditer(r"\blegs?(?:\(s\))? ([^ ]+(?:, [^ ]+)*) missing\b", res["evidence"]):
                legs += [l for l in m.group(1).split(", ") if l not in legs]
            missing[c["rule"]] = legs
    bundles[name[: -len(".json")]] = {"verdicts": verdicts, "missing": missing}
json.dump(
    {
        "collector": commit,
        "note": "verdicts of the current grader, and for each ERROR the legs its evidence names as "
        "missing; a change here is a deliberate re-grading, named in the commit "
        "(scripts/compat-corpus.sh --regrade)",
        "bundles": bundles,
    },
    sys.stdout,
    indent=1,
    sort_keys=True,
)
print()
PY
    rm -rf "$reports"
}

# Build the collector of `commit`; prints the binary's path.
build() {
    local commit=$1 src bin=$target_dir/bin/mcp-collect-$1
    if [ -x "$bin" ]; then echo "$bin"; return; fi
    mkdir -p "$target_dir/bin"
    src=$(mktemp -d "${TMPDIR:-/tmp}/compat-src.XXXXXX")
    git -C "$root" archive "$commit" | tar -x -C "$src"
    # git archive gives every file the commit's time; cargo, seeing sources older than
    # another commit's build of the same crate in the shared target dir, would keep that
    # build. Fresh times make the workspace crates rebuild (dependencies stay shared).
    find "$src" -exec touch {} +
    (
        cd "$src"
        # Some early commits' Cargo.lock lacks dependency edges (not versions) of crates it
        # already pins: then cargo completes it offline, the versions unchanged.
        CARGO_TARGET_DIR=$target_dir cargo build -q --locked -p mcp-probe-collector --bin mcp-collect 2>/dev/null ||
            CARGO_TARGET_DIR=$target_dir cargo build -q --offline -p mcp-probe-collector --bin mcp-collect
    ) >&2
    cp "$target_dir/debug/mcp-collect" "$bin"
    rm -rf "$src"
    echo "$bin"
}

# Collect `target` (py2, py1, py1-sse, py2-stdio, stdio-flood, py2-config,
# py2-stdio-config) with `bin` into `dir`.
collect() {
    local bin=$1 target=$2 dir=$3 home=$4 commit=$5 name=$2 extra=() out cwd=$lab/.. args=()
    case $name in
        py2) args=("${LAB_PY2:?LAB_PY2 unset: set -a; . lab/run/env; set +a}") ;;
        py1) args=("${LAB_PY1:?LAB_PY1 unset}") ;;
        py1-sse) args=("${LAB_PY1_SSE:?LAB_PY1_SSE unset}") ;;
        py2-stdio)
            [ -x "$lab/.venv-mcp2/bin/python" ] || die "$lab/.venv-mcp2 missing (lab/install.sh; MCP_PROBE_LAB)"
            args=(--stdio -- lab/.venv-mcp2/bin/python lab/stdio/py2_stdio.py)
            ;;
        stdio-flood)
            # The flooding server of collector/tests/stdio_flood.rs, answering after a 3 MiB
            # burst: past half --bundle-cap its lines are counted, not kept.
            cp "$root/collector/tests/support/stdio_flood.py" "$home/"
            cwd=$home
            extra+=(--bundle-cap 65536 --target-timeout 60)
            args=(--stdio -- python3 stdio_flood.py notify flood.pid answer)
            ;;
        py2-config)
            # A Cursor-style entry naming py2 with a bearer header the run does not supply
            # (no --use-config-credentials): target.source, credential configured, not supplied.
            # The header's value is made up at each run (random hex), never a committed string.
            printf '{"mcpServers": {"remote": {"url": "%s", "headers": {"Authorization": "Bearer %s"}}}}\n' \
                "${LAB_PY2:?LAB_PY2 unset}" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$home/mcp.json"
            args=(--from-config "$home/mcp.json")
            ;;
        py2-stdio-config)
            # A Claude Desktop entry launching the stdio server with a secret-looking value
            # written in the file: target.source with env facts (stdio-credentials reads them).
            [ -x "$lab/.venv-mcp2/bin/python" ] || die "$lab/.venv-mcp2 missing (lab/install.sh; MCP_PROBE_LAB)"
            printf '{"mcpServers": {"files": {"command": "lab/.venv-mcp2/bin/python", "args": ["lab/stdio/py2_stdio.py"], "env": {"API_TOKEN": "%s", "LOG_LEVEL": "info"}}}}\n' \
                "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$home/claude_desktop_config.json"
            args=(--from-config "$home/claude_desktop_config.json" --allow-exec files)
            ;;
        *) die "unknown target $target" ;;
    esac
    # Consent to the tool calls (1.3, 7.2.2 and its listen stream) and the 5.4.1 reads, for
    # the commits whose probe-inputs schema knows both keys (older ones refuse or ignore
    # them); the same file for every target, keyed by the URL as typed.
    if git -C "$root" show "$commit:docs/schemas/probe-inputs.schema.json" 2>/dev/null |
        grep -q '"traversal_authorised"'; then
        printf '{"%s": {"tool_calls_authorised": true, "tool_arguments": {"echo": {"text": "x"}}, "traversal_authorised": true}}\n' \
            "$LAB_PY2" >"$home/inputs.json"
        extra+=(--inputs "$home/inputs.json")
    fi
    out=$(cd "$cwd" && HOME=$home "$bin" -q -o "$home/out" --timeout 10 "${extra[@]}" "${args[@]}" | tail -1)
    [ -f "$out" ] || die "$commit $target: no bundle written"
    mv "$out" "$dir/$name.mcpev"
}

if [ "${1:-}" = --regrade ]; then
    grade=$(grader)
    for dir in "$corpus"/collector-*/; do
        dir=${dir%/}
        write_expected "$dir" "${dir##*/collector-}" "$grade"
        echo "$dir/expected.json"
    done
    # Folders kept as they were recorded (not by a collector this script can rebuild):
    # the examples of collector 0.1.0.
    for dir in "$corpus"/examples-*/; do
        dir=${dir%/}
        write_expected "$dir" "${dir##*/examples-} (build unknown)" "$grade"
        echo "$dir/expected.json"
    done
    exit 0
fi

[ -f "$list" ] || die "$list missing"
want=("$@")
grade=$(grader)
while read -r commit targets _why; do
    case $commit in '' | '#'*) continue ;; esac
    if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $commit "* ]]; then continue; fi
    bin=$(build "$commit")
    dir=$corpus/collector-$commit
    home=$(mktemp -d "${TMPDIR:-/tmp}/compat-home.XXXXXX")
    rm -rf "$dir"
    mkdir -p "$dir"
    for t in ${targets//,/ }; do
        collect "$bin" "$t" "$dir" "$home" "$commit"
    done
    cp "$home/.mcp-probe/keys/collector.pub" "$dir/collector.pub"
    rm -rf "$home"
    write_expected "$dir" "$commit" "$grade"
    echo "$dir: $(ls "$dir" | tr '\n' ' ')"
    df -h / | tail -1 >&2
done <"$list"
