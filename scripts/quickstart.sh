#!/usr/bin/env bash
# scripts/quickstart.sh -- build, then verify and read the evidence bundles shipped in
# examples/ (recorded from the real lab servers). Needs no server and no network
# beyond what cargo needs to build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p mcp-probe-evaluator
grade=target/release/mcp-grade
echo "== mcp-grade verify: signature, hash chain and format of every example bundle"
"$grade" verify --trust examples/collector.pub examples/*.mcpev
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
print(f"{sys.argv[1]:34} {d.get(\"negotiated_revision\") or \"(none)\":11} {si.get(\"name\",\"?\"):24} tools={n(\"tools\")} resources={n(\"resources\")} templates={n(\"resource_templates\")} prompts={n(\"prompts\")}")' "$(basename "$b")"
done
