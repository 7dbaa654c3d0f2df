#!/usr/bin/env bash
# scripts/quickstart.sh -- the main job, end to end, on this machine and nothing else:
#   1. build mcp-grade and grade the bundles shipped in examples/ (offline, from the
#      bundles alone): the first result, before anything else is built;
#   2. build mcp-collect, start one real MCP server on loopback (the Python SDK's, lab/py2;
#      only its venv is installed, in lab/.venv-mcp2, while the collector builds), collect
#      it, verify and grade the fresh bundle, and write the HTML report (its path is printed).
# Without python3 (and its venv module) the live server is skipped, saying so. MCP_PROBE_HOME,
# when set and non-empty, is the state directory used (its keys and baselines are read
# and written, and it is kept); otherwise a throw-away one is, removed on exit, so your
# own ~/.mcp-probe keys and baselines are neither read nor written. The server is
# stopped on exit.
#
# The binaries are built in cargo's dev profile (target/debug): it compiles in about a third
# of the release profile's time, the quick start's work takes well under a second either
# way, and scripts/test.sh reuses the same build. cargo prints its own progress. For the
# optimised binaries: cargo build --release --bins.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { printf '\n== [%dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }
grade=target/debug/mcp-grade
collect=target/debug/mcp-collect

scratch_home=
if [ -n "${MCP_PROBE_HOME:-}" ]; then
  echo "state directory: MCP_PROBE_HOME=$MCP_PROBE_HOME (kept)"
else
  scratch_home=$(mktemp -d); MCP_PROBE_HOME=$scratch_home
fi
export MCP_PROBE_HOME
server_pid=
pip_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -n "$pip_pid" ] && kill "$pip_pid" 2>/dev/null
  [ -n "$scratch_home" ] && rm -rf "$scratch_home"
  return 0
}
trap cleanup EXIT
out=${QUICKSTART_OUT:-quickstart-out}
mkdir -p "$out"

# Grading exits 0 (no FAIL, no ERROR), 1 (a FAIL) or 4 (an ERROR, no FAIL): findings
# about the servers, not a failure of this script. 2 and 3 are.
graded() { local rc=0; "$@" || rc=$?; case $rc in 0|1|4) return 0 ;; *) echo "mcp-grade exited $rc" >&2; return "$rc" ;; esac; }

live=
if command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; then
  live=1
  # The server's Python SDK installs while cargo builds (its output goes to a log).
  (
    [ -x lab/.venv-mcp2/bin/python ] || python3 -m venv lab/.venv-mcp2
    lab/.venv-mcp2/bin/pip install -q --disable-pip-version-check 'mcp[cli]==2.3.0'
  ) >"$out/pip.log" 2>&1 &
  pip_pid=$!
fi

if [ -x "$grade" ] && [ -x "$collect" ]; then
  stage "build mcp-grade (dev profile; up to date: seconds)"
else
  stage "build mcp-grade (dev profile; the first build takes about 1.5 minutes on 2 cores; cargo shows its progress)"
fi
cargo build --locked --bin mcp-grade -p mcp-probe-evaluator

stage "mcp-grade verify: every example bundle (signature, hash chain, format; pinned to examples/collector.pub; py2 also timestamped by the lab TSA whose root is examples/tsa/ca.pem)"
"$grade" verify --trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/*.mcpev
stage "mcp-grade examples/: the summary-first report of the shipped bundles (offline)"
graded "$grade" --trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/
graded "$grade" -q --format html -o "$out/examples.html" --trust examples/collector.pub --tsa-cert examples/tsa/ca.pem examples/
echo
echo "HTML report of the examples: $(cd "$out" && pwd)/examples.html"

if [ -z "$live" ]; then
  stage "python3 with venv is not available: the live server is skipped (the examples above are the result)"
  exit 0
fi

stage "build mcp-collect (dev profile; about 30 s more the first time)"
cargo build --locked --bin mcp-collect -p mcp-probe-collector

stage "a real MCP server: the Python SDK (mcp 2.3.0) on a free loopback port"
rc=0; wait "$pip_pid" || rc=$?; pip_pid=
[ "$rc" -eq 0 ] || { cat "$out/pip.log" >&2; echo "quickstart: installing the Python SDK failed (log above, $out/pip.log)" >&2; exit 2; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd lab/py2 && exec ../.venv-mcp2/bin/python server.py "$port") >"$out/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port/mcp"

stage "mcp-collect $url"
bundle=$("$collect" -o "$out" "$url")
echo "bundle: $bundle"

stage "mcp-grade verify (signature, hash chain, format; pinned to this run's key)"
"$collect" --public-key >"$out/collector.pub"
"$grade" verify --trust "$out/collector.pub" "$bundle"

stage "mcp-grade: the summary-first report of the fresh bundle"
graded "$grade" --trust "$out/collector.pub" "$bundle"
graded "$grade" -q --format html -o "$out/report.html" --trust "$out/collector.pub" "$bundle"
echo
echo "HTML report: $(cd "$out" && pwd)/report.html"
stage "done"
