#!/usr/bin/env bash
# scripts/test.sh -- install everything the tests need, start the lab, run every test.
# This is the README's test command and what .ci/run calls. Needs: the Rust toolchain,
# python3 (3.11) and node 20 with npm (the conformance suite's node 22 comes from npm), and root
# for apt (nginx-light, openssl) on a fresh Debian 12 machine. Safe to re-run; stops the lab it
# started on every exit.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# One build from scratch: incremental caches would only cost disk (several GB) and time.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

step() { printf '\n== %s\n' "$*"; }

step "lab: install (pip venvs, npm, apt if missing)"
lab/install.sh

step "lab: start on free loopback ports"
# mcp-collect honours HTTPS_PROXY/HTTP_PROXY and does not bypass loopback implicitly: a
# proxy the machine needs for installs must not carry the lab's loopback traffic (the
# connectivity tests set their own proxy variables).
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY no_proxy NO_PROXY
trap 'lab/down.sh' EXIT
lab/up.sh >/dev/null || { tail -n 20 lab/run/*.log; exit 1; }
set -a; . lab/run/env; set +a

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Every intra-doc link of the API docs resolves (and none points at a private item).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "tests (unit, property, CLI, lab integration)"
# The grader's lab tests run mcp-collect, a binary of another package: build it first.
cargo build --workspace --bins --locked
cargo test --workspace --locked

step "conformance: the MCP conformance suite's client scenarios against mcp-collect (docs/conformance.md)"
# node 22 and @modelcontextprotocol/conformance were installed by lab/install.sh into
# lab/conformance; loopback only (its own network namespace), about 1.5 min, bounded by
# per-scenario timeouts. Fails on a failure not in lab/conformance/expected-failures.txt,
# on a stale entry there, and on a test-server secret in a bundle or the client's output.
scripts/conformance.sh

step "end to end: collect every lab MCP server, verify with mcp-grade"
work=$(mktemp -d); trap 'lab/down.sh; rm -rf "$work"' EXIT
export MCP_PROBE_HOME="$work/home"
targets=("$LAB_PY2" "$LAB_PY2_SL_JSON" "$LAB_PY2_NODNS" "$LAB_PY1" "$LAB_FASTMCP" "$LAB_FASTMCP_AUTO" "$LAB_TS2" "$LAB_TS2_REJECT" "$LAB_PY2_PAGED" "$LAB_NOSTORE" "$LAB_PY2_SLOPPY" "$LAB_RS")
# $LAB_RS wants an OAuth credential and none is given: it is sealed without an MCP
# session, so exit 3 is expected, and it must name $LAB_RS. Any other non-zero fails.
# stdin is not a terminal, so no browser login is attempted even from an interactive shell.
rc=0
target/debug/mcp-collect -q -o "$work/out" "${targets[@]}" </dev/null >"$work/paths" 2>"$work/collect.err" || rc=$?
cat "$work/collect.err" >&2
[ "$rc" -eq 3 ] || { echo "mcp-collect exited $rc, expected 3 (only \$LAB_RS unreached)"; exit 1; }
grep -q "1 of ${#targets[@]} target(s) sealed without an MCP session (exit 3): $LAB_RS\$" "$work/collect.err" \
  || { echo "exit 3 did not name \$LAB_RS alone"; exit 1; }
[ "$(wc -l <"$work/paths")" -eq "${#targets[@]}" ] || { echo "expected ${#targets[@]} bundles"; cat "$work/paths"; exit 1; }
target/debug/mcp-collect --public-key >"$work/collector.pub"
xargs target/debug/mcp-grade verify --trust "$work/collector.pub" <"$work/paths"

step "examples: the committed bundles still verify against their key"
target/debug/mcp-grade verify --trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/*.mcpev

# Grading findings (exit 1 a FAIL, 4 an ERROR) are verdicts about the servers, not test
# failures; 2 (usage, unreadable input, output not written) and 3 (a bundle failed
# verification) are failures of the tool or the evidence and stop the script.
graded() {
  local rc=0
  "$@" || rc=$?
  case $rc in
    0|1|4) echo "mcp-grade exit $rc (findings, not a test failure)" >&2 ;;
    *) echo "mcp-grade exited $rc: $*" >&2; exit 1 ;;
  esac
}
mapfile -t lab_bundles <"$work/paths"

step "grade: the examples and the freshly collected lab bundles (text)"
graded target/debug/mcp-grade --trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/*.mcpev >"$work/examples.txt"
graded target/debug/mcp-grade --trust "$work/collector.pub" "${lab_bundles[@]}" >"$work/lab.txt"
grep -q '^CIS MCP Server Benchmark' "$work/examples.txt" "$work/lab.txt"

step "grade: --format json parses and has every server and check; baselines are stored and used"
graded target/debug/mcp-grade --format json -o "$work/examples.json" --trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/*.mcpev
graded target/debug/mcp-grade --update-baseline --trust "$work/collector.pub" "${lab_bundles[@]}" >/dev/null
graded target/debug/mcp-grade --format json -o "$work/lab.json" --trust "$work/collector.pub" "${lab_bundles[@]}"
python3 - "$work/examples.json" "$(ls examples/*.mcpev | wc -l)" "$work/lab.json" "${#lab_bundles[@]}" <<'PY'
import json, sys
args = sys.argv[1:]
for path, n in zip(args[0::2], args[1::2]):
    d = json.load(open(path))
    assert d["schema"] == "mcp-grade-report/1", path
    assert len(d["servers"]) == int(n), (path, len(d["servers"]), n)
    assert len(d["checks"]) == 36 and d["graded"]["total"] == 36, path
    for c in d["checks"]:
        assert len(c["results"]) == (len(d["servers"]) if c["graded"] else 0), (path, c["id"])
    print(f"{path}: {d['graded']['count']} of 36 checks graded over {n} servers; totals {d['totals']}")
lab = json.load(open(args[2]))
for s in lab["servers"]:
    if s["negotiated_revision"] and s["run_status"] == "complete":
        b = s["baseline"] or {}
        assert b.get("mode") == "stored" and b.get("used"), (s["endpoint"], b)
PY

step "grade: every report format on the lab bundles (SARIF, JUnit, Markdown, HTML), and diff"
for f in sarif junit markdown html; do
  graded target/debug/mcp-grade -q --format "$f" -o "$work/lab.$f" --trust "$work/collector.pub" "${lab_bundles[@]}"
  [ -s "$work/lab.$f" ] || { echo "empty $f report"; exit 1; }
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"]=="2.1.0" and d["runs"][0]["results"]' "$work/lab.sarif"
target/debug/mcp-grade diff --trust "$work/collector.pub" "${lab_bundles[0]}" "${lab_bundles[0]}" >/dev/null

step "grade: OSCAL and XCCDF reports of the examples and the lab bundles, deterministic and valid (scripts/validate-formats.sh)"
scripts/validate-formats.sh
scripts/validate-formats.sh --trust "$work/collector.pub" "${lab_bundles[@]}"

step "grade: a signed statement (--attest) verified by mcp-grade and by securesystemslib; altered copies refused"
graded target/debug/mcp-grade -q --format json -o "$work/attested.json" --attest "$work/statement.json" --trust "$work/collector.pub" "${lab_bundles[@]}"
target/debug/mcp-grade verify-statement "$work/statement.json" --trust "$MCP_PROBE_HOME/keys/grader.pub" "$work/attested.json" "${lab_bundles[@]}" | tail -n 1
lab/.venv-dsse/bin/python scripts/verify-statement.py --tampered "$work/statement.json" --trust "$MCP_PROBE_HOME/keys/grader.pub" "$work/attested.json" "${lab_bundles[@]}"

step "change cost: a check by an existing rule is one definition row, a new rule five files (docs/benchmarks.md)"
scripts/change-cost.sh

step "release artefacts: scripts/dist.sh, the static binaries in an empty root and in the container image, a second build compared (docs/install.md)"
# Root in CI (chroot). Builds the dist profile twice (this checkout and a clean clone of
# HEAD elsewhere); the pinned cargo-auditable and cargo-cyclonedx are installed first.
dist_start=$SECONDS
scripts/test-dist.sh
echo "release artefacts: $((SECONDS - dist_start)) s"

echo
echo "e2e: ${#targets[@]} passed, 0 failed"
