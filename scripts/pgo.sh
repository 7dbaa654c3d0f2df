#!/usr/bin/env bash
# scripts/pgo.sh -- make the profile the release build of mcp-grade is optimised with
# (docs/install.md, "Profile-guided optimisation").
#
#   scripts/pgo.sh    writes build/pgo/mcp-grade.profdata.gz and build/pgo/mcp-grade.profile.txt
#
# 1. scripts/dist.sh builds mcp-grade alone, instrumented (MCP_PROBE_PGO=generate:DIR), with
#    the release build's flags, wrapper and cargo run, so every function's name and shape
#    match.
# 2. The instrumented mcp-grade grades the compat bundles (examples/compat: bundles that
#    earlier collectors wrote, not the examples the benchmarks time), one job at a time,
#    as a JSON report, as the text summary, and verifies them.
# 3. llvm-profdata merges the counts (sparse: functions never run are left out) and the
#    result is written gzipped, with the toolchain and commit it was made with.
#
# The counts differ a little from run to run (thread timing, hash seeds), so the profile
# is made here and committed, not made by every release build: the release stays
# reproducible. Run it again after changes to the grader (a stale profile only loses
# speed: functions whose shape changed are optimised without counts) and after a
# toolchain update (dist.sh uses a profile only with the LLVM that wrote it).
# Needs: rustup's llvm-tools component (installed here when missing), what dist.sh needs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
if [ ! -x "$profdata" ]; then
  rustup component add llvm-tools >&2
fi
[ -x "$profdata" ] || { echo "pgo.sh: no llvm-profdata at $profdata" >&2; exit 1; }

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
MCP_PROBE_PGO=generate:$work/raw scripts/dist.sh --bins-only
grade=target/x86_64-unknown-linux-gnu/dist/mcp-grade

mapfile -t bundles < <(find examples/compat -name '*.mcpev' | sort)
[ "${#bundles[@]}" -gt 0 ] || { echo "pgo.sh: no bundles under examples/compat" >&2; exit 1; }
trust=()
while IFS= read -r key; do trust+=(--trust "$key"); done < <(find examples/compat -name collector.pub | sort)
mkdir -p "$work/home"
run() { # exit 1, 4 and 5 are the bundles' verdicts; 2 and 3 (input, verification) are not
  local rc=0
  MCP_PROBE_HOME=$work/home LLVM_PROFILE_FILE=$work/raw/%p.profraw "$grade" "$@" >/dev/null 2>"$work/err" || rc=$?
  if [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || [ "$rc" -gt 5 ]; then
    echo "pgo.sh: mcp-grade $1 ... exited $rc: $(tail -n 3 "$work/err")" >&2
    exit 1
  fi
}
run --jobs 1 --format json "${trust[@]}" "${bundles[@]}"
run --jobs 1 "${trust[@]}" "${bundles[@]}"
run verify --jobs 1 "${trust[@]}" "${bundles[@]}"

mkdir -p build/pgo
"$profdata" merge --sparse -o "$work/merged.profdata" "$work/raw"
gzip -9n <"$work/merged.profdata" >build/pgo/mcp-grade.profdata.gz
{
  echo "# The profile scripts/pgo.sh made; scripts/dist.sh uses it only with this LLVM."
  echo "llvm: $(rustc -vV | sed -n 's/^LLVM version: //p')"
  echo "rustc: $(rustc -V)"
  echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD -- Cargo.toml Cargo.lock collector evaluator schema || echo ' (with uncommitted changes to the sources)')"
  echo "bundles: ${#bundles[@]} under examples/compat (grade --format json, grade, verify; one job)"
  echo "sha256: $(sha256sum <"$work/merged.profdata" | cut -d' ' -f1)"
} >build/pgo/mcp-grade.profile.txt
echo "pgo.sh: build/pgo/mcp-grade.profdata.gz ($(stat -c %s build/pgo/mcp-grade.profdata.gz) bytes):" >&2
cat build/pgo/mcp-grade.profile.txt >&2
