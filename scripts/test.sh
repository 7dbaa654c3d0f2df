#!/usr/bin/env bash
# scripts/test.sh -- install everything the tests need, start the lab, run every test.
# This is the README's test command and what .ci/run calls. Needs: the Rust toolchain,
# python3 (3.11) and node 20 with npm, and root for apt (nginx-light, openssl) on a
# fresh Debian 12 machine. Safe to re-run; stops the lab it started on every exit.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

step() { printf '\n== %s\n' "$*"; }

step "lab: install (pip venvs, npm, apt if missing)"
lab/install.sh

step "lab: start on free loopback ports"
trap 'lab/down.sh' EXIT
lab/up.sh >/dev/null || { tail -n 20 lab/run/*.log; exit 1; }
set -a; . lab/run/env; set +a

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

step "tests (unit, property, CLI, lab integration)"
cargo test --workspace --locked

step "end to end: collect every lab MCP server, verify with mcp-grade"
cargo build --workspace --bins --locked
work=$(mktemp -d); trap 'lab/down.sh; rm -rf "$work"' EXIT
export MCP_PROBE_HOME="$work/home"
targets=("$LAB_PY2" "$LAB_PY2_SL_JSON" "$LAB_PY2_NODNS" "$LAB_PY1" "$LAB_FASTMCP" "$LAB_FASTMCP_AUTO" "$LAB_TS2" "$LAB_TS2_REJECT" "$LAB_PY2_PAGED" "$LAB_RS")
target/debug/mcp-collect -q -o "$work/out" "${targets[@]}" >"$work/paths"
[ "$(wc -l <"$work/paths")" -eq "${#targets[@]}" ] || { echo "expected ${#targets[@]} bundles"; cat "$work/paths"; exit 1; }
target/debug/mcp-collect --public-key >"$work/collector.pub"
xargs target/debug/mcp-grade verify --trust "$work/collector.pub" <"$work/paths"

step "examples: the committed bundles still verify against their key"
target/debug/mcp-grade verify --trust examples/collector.pub examples/*.mcpev

echo
echo "e2e: ${#targets[@]} passed, 0 failed"
