#!/usr/bin/env bash
# Byte comparison of two mcp-grade binaries' output on every bundle in examples/: for a
# change that must not change what the grader writes (a speed-up, a refactoring).
#
# Usage: scripts/bytecmp.sh OLD NEW
#   OLD and NEW are mcp-grade executables (say, a copy of the binary built before the
#   change, and target/release/mcp-grade). Both run, with the same arguments and an empty
#   MCP_PROBE_HOME, on:
#   - all of examples/*.mcpev and examples/compat/**/*.mcpev in one report, every
#     collector.pub under examples/ as --trust and examples/tsa/ca.pem as --tsa-cert
#     (not for `show`), in each format: the text summary, the --verbose text, json,
#     sarif, junit, markdown, html, oscal and xccdf;
#   - the same bundles twice over (links under other names), in each of those formats:
#     at 64 bundles and more the grader spills its outcomes to a file and reads them back,
#     which the set above (fewer) never does;
#   - each of those bundles alone, --format json;
#   - `verify` of all of them;
#   - `show`, `show --json` and `show --har` of examples/py2.mcpev and
#     examples/fastmcp.mcpev.
#   Standard output, standard error and the exit status of each run are compared. The one
#   difference allowed is the grader's build: each binary's commit (from its --version)
#   is replaced by COMMIT in its output before comparing, and the build as the text
#   report states it (`mcp-grade VERSION (commit ..., TARGET, RUSTC)`, which a longer
#   commit such as `-dirty` may wrap at another place) by BUILD, so two builds of
#   different commits compare equal when nothing else differs.
# Prints one line per comparison; exits 0 when all are the same, 1 when any differs
# (the outputs are kept in the directory it names), 2 on a usage error.
set -uo pipefail

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "bytecmp.sh: usage: scripts/bytecmp.sh OLD_MCP_GRADE NEW_MCP_GRADE (two executables)" >&2
  exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/bytecmp.XXXXXX")
export MCP_PROBE_HOME=$work/home
mkdir -p "$MCP_PROBE_HOME"

# The commit a binary states (its --version: `mcp-grade X (commit HEX[-dirty], ...)`).
commit_of() { "$1" --version | sed -nE 's/.*\(commit ([0-9a-f]+)(-dirty)?,.*/\1/p'; }
old_commit=$(commit_of "$old")
new_commit=$(commit_of "$new")

trust=()
while IFS= read -r k; do trust+=(--trust "$k"); done < <(find examples -name collector.pub | sort)
# `show` takes --tsa-cert only with --trust-list: it gets the keys alone.
keys=("${trust[@]}")
# The stamped example's TSA root, so its token is checked to the end (not refused at
# `chain`).
trust+=(--tsa-cert examples/tsa/ca.pem)
mapfile -t bundles < <(
  ls examples/*.mcpev
  find examples/compat -name '*.mcpev' | sort
)

differ=0
count=0
# run NAME ARGS...: both binaries, outputs normalised and compared.
run() {
  local name=$1
  shift
  local side bin commit rc
  for side in old new; do
    if [ $side = old ]; then bin=$old commit=$old_commit; else bin=$new commit=$new_commit; fi
    rc=0
    "$bin" "$@" >"$work/$name.$side.out" 2>"$work/$name.$side.err" || rc=$?
    echo "exit $rc" >>"$work/$name.$side.err"
    if [ -n "$commit" ]; then
      # The full commit starts with the short one; a -dirty mark goes with it. The build
      # as the text report states it, `mcp-grade VERSION (commit ..., TARGET, RUSTC)`,
      # may be wrapped at another place when the commit is longer (-dirty): one token.
      sed -i -E "s/$commit[0-9a-f]*(-dirty)?/COMMIT/g" "$work/$name.$side.out" "$work/$name.$side.err"
      perl -0 -pi -e 's/mcp-grade [0-9][^()\s]*\s+\(commit\s+COMMIT,[^)]*\)/mcp-grade BUILD/g' \
        "$work/$name.$side.out" "$work/$name.$side.err"
    fi
  done
  count=$((count + 1))
  if cmp -s "$work/$name.old.out" "$work/$name.new.out" && cmp -s "$work/$name.old.err" "$work/$name.new.err"; then
    echo "same     $name"
  else
    echo "DIFFERS  $name"
    differ=1
  fi
}

# every_format PREFIX BUNDLES...: one report of BUNDLES in each format (the text summary,
# the --verbose text and the seven others), compared as PREFIX.FORMAT.
every_format() {
  local prefix=$1 f
  shift
  for f in text verbose json sarif junit markdown html oscal xccdf; do
    case $f in
      text) a=() ;;
      verbose) a=(--verbose) ;;
      *) a=(--format "$f") ;;
    esac
    run "$prefix.$f" "${a[@]}" "${trust[@]}" "$@"
  done
}

every_format all "${bundles[@]}"
# The same bundles twice over (102 links under other names): from 64 bundles on the
# grader keeps its outcomes in a spill file and reads them back to write the report, a
# path the set above, under 64, never takes.
mkdir -p "$work/spilled"
spilled=()
for copy in 1 2; do
  for b in "${bundles[@]}"; do
    l="$work/spilled/$copy-$(echo "$b" | tr / _)"
    ln -s "$PWD/$b" "$l"
    spilled+=("$l")
  done
done
every_format spilled "${spilled[@]}"
for b in "${bundles[@]}"; do
  run "one.$(echo "$b" | tr / _).json" --format json "${trust[@]}" "$b"
done
run verify verify "${trust[@]}" "${bundles[@]}"
for b in examples/py2.mcpev examples/fastmcp.mcpev; do
  n=$(basename "$b" .mcpev)
  run "show.$n" show "${keys[@]}" "$b"
  run "show.$n.json" show --json "${keys[@]}" "$b"
  run "show.$n.har" show --har "${keys[@]}" "$b"
done

if [ $differ = 0 ]; then
  echo "bytecmp.sh: all $count outputs the same (old commit ${old_commit:-?}, new ${new_commit:-?})"
  rm -rf "$work"
  exit 0
fi
echo "bytecmp.sh: some outputs differ; both sides are in $work" >&2
exit 1
