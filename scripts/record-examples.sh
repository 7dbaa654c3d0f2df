#!/usr/bin/env bash
# Re-record the bundles in examples/ from the running lab, signed by a fresh examples
# key whose public half replaces examples/collector.pub (the private half is deleted at
# the end: nobody can add a bundle that verifies against it).
#
#   lab/up.sh && set -a && . lab/run/env && set +a
#   cargo build --workspace --bins
#   scripts/record-examples.sh
#
# examples/compat/ is never re-recorded: it shows what an older collector's bundle looks
# like, and keeps the key it was signed with (examples/compat/collector.pub).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LAB_PY2:?start the lab first: lab/up.sh; set -a; . lab/run/env; set +a}"
bin=${CARGO_TARGET_DIR:-target}/debug/mcp-collect
[ -x "$bin" ] || { echo "record-examples: build first: cargo build --workspace --bins" >&2; exit 2; }
home=$(mktemp -d)
trap 'kill "${tsa_pid:-}" 2>/dev/null; rm -rf "$home"' EXIT
export MCP_PROBE_HOME=$home
port() { echo "${1##*:}"; }

# A lab RFC 3161 time-stamping authority (openssl ts behind lab/tsa/tsa.py) for the one
# stamped example (py2): its root and TSA certificates are kept in examples/tsa/, the
# chain an auditor archives beside the bundle (`mcp-grade verify --tsa-cert
# examples/tsa/ca.pem`); the keys are deleted with $home.
bash lab/tsa/make-certs.sh "$home/tsa" p256 >/dev/null
exec {tsa_out}< <(exec python3 lab/tsa/tsa.py "$home/tsa" 0)
tsa_pid=$!
read -r tsa_line <&"$tsa_out"
tsa_port=${tsa_line#listening }
[ "$tsa_port" != "$tsa_line" ] || { echo "record-examples: the lab TSA did not start: $tsa_line" >&2; exit 1; }
mkdir -p examples/tsa
cp "$home/tsa/ca.pem" examples/tsa/ca.pem
cp "$home/tsa/tsa.pem" examples/tsa/tsa.pem

# name, then the arguments of mcp-collect (the target last).
record() {
  local name=$1; shift
  local out
  out=$("$bin" -q -o "$home/out/$name" "$@")
  cp "$out" "examples/$name.mcpev"
  echo "examples/$name.mcpev <- ${*: -1}"
}

record py2 --tsa "http://127.0.0.1:$tsa_port/tsa" "$LAB_PY2"
record py2-sl-json "$LAB_PY2_SL_JSON"
record py1 "$LAB_PY1"
record fastmcp "$LAB_FASTMCP"
record ts2 "$LAB_TS2"
record ts2-reject "$LAB_TS2_REJECT"
record py2-paged "$LAB_PY2_PAGED"
record py2-sloppy "$LAB_PY2_SLOPPY"
record nostore "$LAB_NOSTORE"
# With the operator's consent to the path-traversal reads (5.4.1): a server that joins
# paths naively serves /etc/passwd.
printf '{"%s": {"traversal_authorised": true}}\n' "$LAB_PY2_FILES_NAIVE" >"$home/files.json"
record files-naive --inputs "$home/files.json" "$LAB_PY2_FILES_NAIVE"
record tls-modern --ca-file "$LAB_TLS_CA" --plaintext-port "$(port "$LAB_PLAIN_301")" "https://$LAB_TLS_MODERN/mcp"
record tls-legacy --ca-file "$LAB_TLS_CA" --plaintext-port "$(port "$LAB_PLAIN_200")" "https://$LAB_TLS_LEGACY/mcp"
# The resource server without a credential: the challenge only (exit 3 by design).
out=$("$bin" -q -o "$home/out/py2-auth" "$LAB_RS" || true)
cp "$out" examples/py2-auth.mcpev && echo "examples/py2-auth.mcpev <- $LAB_RS"

# The same resource server after a headless OAuth login: mcp-collect prints the
# authorization URL; lab/oidc/browser.sh plays the user and delivers the redirect.
log=$home/login.err
"$bin" --no-browser -o "$home/out/login" "$LAB_RS" >"$home/login.out" 2>"$log" &
pid=$!
for _ in $(seq 1 600); do
  url=$(sed -n 's/^mcp-collect: open this URL to log in: //p' "$log" | head -1)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "${url:-}" ] || { cat "$log" >&2; echo "record-examples: no authorization URL" >&2; exit 1; }
bash lab/oidc/browser.sh "$url" --deliver >/dev/null
wait "$pid"
cp "$(tail -1 "$home/login.out")" examples/py2-auth-login.mcpev && echo "examples/py2-auth-login.mcpev <- $LAB_RS (login)"

"$bin" --public-key >examples/collector.pub
echo "examples/collector.pub replaced; verify: mcp-grade verify --trust examples/collector.pub examples/*.mcpev"
