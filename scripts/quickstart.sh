#!/usr/bin/env bash
# scripts/quickstart.sh -- build, then verify, read and grade the evidence bundles
# shipped in examples/ (recorded from the real lab servers). Needs no server and no
# network beyond what cargo needs to build. Grading uses a throw-away state directory,
# so your own ~/.mcp-probe baselines are neither read nor written.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p mcp-probe-evaluator
grade=target/release/mcp-grade
MCP_PROBE_HOME=$(mktemp -d); export MCP_PROBE_HOME
trap 'rm -rf "$MCP_PROBE_HOME"' EXIT

# Grading exits 0 (no FAIL, no ERROR), 1 (a FAIL) or 4 (an ERROR, no FAIL): findings
# about the example servers, not a failure of this script. 2 and 3 are.
graded() { local rc=0; "$@" || rc=$?; case $rc in 0|1|4) return 0 ;; *) echo "mcp-grade exited $rc" >&2; return "$rc" ;; esac; }
echo "== mcp-grade verify: signature, hash chain and format of every example bundle"
"$grade" verify --trust examples/collector.pub examples/*.mcpev
echo
echo "== mcp-grade examples/*.mcpev: the check-centric report (offline, from the bundles alone)"
graded "$grade" --trust examples/collector.pub examples/*.mcpev
echo
echo "== the same as JSON (mcp-grade-report/1, docs/report.md): verdict counts per check"
graded "$grade" --format json --trust examples/collector.pub examples/*.mcpev | python3 -c '
import json, sys
d = json.load(sys.stdin)
g = d["graded"]
print("graded {} of {} checks over {} servers; totals {}".format(g["count"], g["total"], len(d["servers"]), d["totals"]))
for c in d["checks"]:
    if c["graded"]:
        s = ", ".join("{} {}".format(k, v) for k, v in c["summary"].items() if v)
        print("  {:6} L{}  {}".format(c["id"], c["level"], s))'
echo
echo "== mcp-grade show examples/py2-paged.mcpev (first 60 lines of the transcript)"
"$grade" show examples/py2-paged.mcpev | head -n 60
echo "..."
echo
echo "== inventory of each example, from mcp-grade show --json"
for b in examples/*.mcpev; do
  "$grade" show --json "$b" | python3 -c '
import json, sys
d = json.load(sys.stdin); inv = d.get("inventory") or {}
n = lambda k: "-" if inv.get(k) is None else str(len(inv[k]))
si = d.get("server_info") or {}
rev = d.get("negotiated_revision") or "(none)"
print("{:34} {:11} {:24} tools={} resources={} templates={} prompts={}".format(
    sys.argv[1], rev, si.get("name", "?"), n("tools"), n("resources"), n("resource_templates"), n("prompts")))' "$(basename "$b")"
done
