#!/usr/bin/env bash
# Instructions per bundle of grading, of verification and of the floor, counted by
# valgrind's callgrind (docs/performance.md, "Instructions per bundle (callgrind)").
# Wall and CPU times on this shared machine drift by ±15 % from run to run; instruction
# counts of the same binary on the same inputs do not, so they show what a change to the
# grader costs or saves per bundle.
#
# Three programs, each on one thread, under `valgrind --tool=callgrind`:
#   grade   mcp-grade --jobs 1 --format json --trust KEY... BUNDLES  (report to /dev/null)
#   verify  mcp-grade verify --jobs 1 --trust KEY... BUNDLES         (lines to /dev/null)
#   floor   the floor program (evaluator/examples/floor.rs): per bundle SHA-256 and
#           SHA-512 over its bytes, one Ed25519 verification and one decode
#           (mcp_probe_schema::bundle::decode_verified), nothing else
# Method: each program runs on the set of bundles (n files), then on the set followed by
# a copy of it under other names (2n files). Instructions per bundle are
# (I(2n) - I(n)) / n, so the process's fixed start-up (the runtime, clap, loading the
# keys, the report's frame) cancels out; the fixed part is printed too: 2 I(n) - I(2n).
# The grading report goes to standard output, sent to /dev/null: `-o /dev/null` would
# write a temporary file beside /dev/null and rename it over it (as root it replaces the
# device with a regular file).
#
# Sets: `examples` (examples/*.mcpev, --trust examples/collector.pub), and with
# --compat also `compat` (every examples/compat/**/*.mcpev, with every collector.pub
# under examples/compat as --trust).
#
# Usage: scripts/instructions.sh [--compat] [--no-build]
#   Builds mcp-grade and the floor program with the release profile (the same settings
#   as the `bench` profile docs/performance.md uses: opt-level 3, debug = 1) into
#   ${CARGO_TARGET_DIR:-target}/release, unless --no-build. Needs valgrind: exits 2
#   without it. Keeps the callgrind files in $INSTRUCTIONS_KEEP when that is set.
#   Valgrind's CPU has no SHA-NI, so SHA-256 runs its portable code under it (in
#   grading, verification and the floor alike): about half the floor's instructions,
#   where on the hardware it is about a tenth of the floor's time. The script therefore
#   also prints each program's SHA-256 instructions (callgrind_annotate, inclusive, of
#   sha2's compress256) and the ratios without them. Instructions are not time either:
#   hashing runs more instructions a cycle than grading's allocations and branches.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

compat=0
build=1
for a in "$@"; do
  case $a in
    --compat) compat=1 ;;
    --no-build) build=0 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "instructions.sh: unknown argument $a (usage: scripts/instructions.sh [--compat] [--no-build])" >&2; exit 2 ;;
  esac
done

if ! command -v valgrind >/dev/null 2>&1; then
  echo "instructions.sh: valgrind is missing (apt-get install valgrind); nothing measured" >&2
  exit 2
fi

target=${CARGO_TARGET_DIR:-$root/target}
if [ "$build" = 1 ]; then
  echo "== building mcp-grade and the floor program (release profile) in $target" >&2
  cargo build --quiet --release -p mcp-probe-evaluator --bin mcp-grade
  cargo build --quiet --release -p mcp-probe-evaluator --example floor
fi
grade=$target/release/mcp-grade
floor=$target/release/examples/floor
for b in "$grade" "$floor"; do
  [ -x "$b" ] || { echo "instructions.sh: $b is missing (run without --no-build)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT
# No stored baseline is read or written.
export MCP_PROBE_HOME=$work/home
mkdir -p "$MCP_PROBE_HOME"

# Ir of one program run under callgrind: instr NAME ACCEPTED_EXIT_CODES CMD...
instr() {
  local name=$1 ok=$2
  shift 2
  local out=$work/$name.callgrind rc=0
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$work/$name.stderr" || rc=$?
  case " $ok " in
    *" $rc "*) ;;
    *)
      echo "instructions.sh: $name exited $rc under valgrind:" >&2
      tail -n 20 "$work/$name.stderr" >&2
      exit 1
      ;;
  esac
  if [ -n "${INSTRUCTIONS_KEEP:-}" ]; then
    mkdir -p "$INSTRUCTIONS_KEEP"
    cp "$out" "$INSTRUCTIONS_KEEP/"
  fi
  local total sha=-1
  total=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
  [ -n "$total" ] || { echo "instructions.sh: no total in $out" >&2; exit 1; }
  # The instructions spent in SHA-256's compression function, all callers (inclusive).
  if command -v callgrind_annotate >/dev/null 2>&1; then
    sha=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
      awk '!found && /sha256\.rs:sha2::sha256::compress256 \[/ { gsub(",", "", $1); print $1; found = 1 }' || true)
    [ -n "$sha" ] || sha=-1
  fi
  echo "$total $sha"
}

# Measure one set: measure SETNAME KEYS_FILE BUNDLE...
measure() {
  local set=$1 keys=$2
  shift 2
  local n=$#
  local once=() twice=() trust=() i=0 p
  mkdir -p "$work/$set/a" "$work/$set/b"
  # The copies have other names, in another directory: two inputs, not one given twice.
  for p in "$@"; do
    i=$((i + 1))
    cp "$p" "$work/$set/a/$(printf '%04d' "$i").mcpev"
    cp "$p" "$work/$set/b/$(printf '%04d' "$i").mcpev"
  done
  for i in $(seq -f '%04g' 1 "$n"); do once+=("$work/$set/a/$i.mcpev"); done
  twice=("${once[@]}")
  for i in $(seq -f '%04g' 1 "$n"); do twice+=("$work/$set/b/$i.mcpev"); done
  while IFS= read -r k; do trust+=(--trust "$k"); done <"$keys"
  # The stamped example (py2) is checked against the lab TSA root kept beside it.
  trust+=(--tsa-cert "$root/examples/tsa/ca.pem")

  local g1 g2 v1 v2 f1 f2 gs1 gs2 vs1 vs2 fs1 fs2
  # Grading exits 0, 1 (a FAIL), 4 (an ERROR) or 5 (undecided); 2 and 3 mean nothing
  # was graded.
  read -r g1 gs1 < <(instr "$set-grade-1" "0 1 4 5" "$grade" --jobs 1 --format json "${trust[@]}" "${once[@]}") || true
  read -r g2 gs2 < <(instr "$set-grade-2" "0 1 4 5" "$grade" --jobs 1 --format json "${trust[@]}" "${twice[@]}") || true
  read -r v1 vs1 < <(instr "$set-verify-1" "0" "$grade" verify --jobs 1 "${trust[@]}" "${once[@]}") || true
  read -r v2 vs2 < <(instr "$set-verify-2" "0" "$grade" verify --jobs 1 "${trust[@]}" "${twice[@]}") || true
  read -r f1 fs1 < <(instr "$set-floor-1" "0" "$floor" "${once[@]}") || true
  read -r f2 fs2 < <(instr "$set-floor-2" "0" "$floor" "${twice[@]}") || true
  [ -n "${g1:-}" ] && [ -n "${g2:-}" ] && [ -n "${v1:-}" ] && [ -n "${v2:-}" ] && [ -n "${f1:-}" ] && [ -n "${f2:-}" ] ||
    { echo "instructions.sh: a run of set $set failed (above)" >&2; exit 1; }

  local bytes
  bytes=$(cat "$@" | wc -c)
  awk -v set="$set" -v n="$n" -v bytes="$bytes" \
    -v g1="$g1" -v g2="$g2" -v v1="$v1" -v v2="$v2" -v f1="$f1" -v f2="$f2" \
    -v gs1="$gs1" -v gs2="$gs2" -v vs1="$vs1" -v vs2="$vs2" -v fs1="$fs1" -v fs2="$fs2" 'BEGIN {
    g = (g2 - g1) / n; v = (v2 - v1) / n; f = (f2 - f1) / n
    known = gs1 >= 0 && gs2 >= 0 && vs1 >= 0 && vs2 >= 0 && fs1 >= 0 && fs2 >= 0
    gs = (gs2 - gs1) / n; vs = (vs2 - vs1) / n; fs = (fs2 - fs1) / n
    printf "set %s: %d bundles, mean %.1f KB\n", set, n, bytes / n / 1000
    printf "  %-7s %16s %16s %16s %16s %8s\n", "", "Ir (n)", "Ir (2n)", "fixed", "per bundle", "x floor"
    printf "  %-7s %16d %16d %16d %16.0f %8.2f\n", "grade", g1, g2, 2 * g1 - g2, g, g / f
    printf "  %-7s %16d %16d %16d %16.0f %8.2f\n", "verify", v1, v2, 2 * v1 - v2, v, v / f
    printf "  %-7s %16d %16d %16d %16.0f %8.2f\n", "floor", f1, f2, 2 * f1 - f2, f, 1
    if (known) {
      # Valgrind runs SHA-256 in its portable code (no SHA-NI), about half the floor
      # here; on the hardware it is about a tenth. The same ratios without it:
      printf "  SHA-256 per bundle (portable code under valgrind): grade %.0f, verify %.0f, floor %.0f\n", gs, vs, fs
      printf "  without SHA-256: grade %.0f = %.2f x floor %.0f; verify %.0f = %.2f x floor\n",
        g - gs, (g - gs) / (f - fs), f - fs, v - vs, (v - vs) / (f - fs)
    } else {
      printf "  (callgrind_annotate did not give the SHA-256 share)\n"
    }
    printf "  target grade <= 2.00 x floor: %s by all instructions (%.2f)", (g / f <= 2.0 ? "met" : "not met"), g / f
    if (known) printf ", %s without SHA-256 (%.2f)", ((g - gs) / (f - fs) <= 2.0 ? "met" : "not met"), (g - gs) / (f - fs)
    printf "\n  target verify <= 1.25 x floor (80 %% of its rate): %s by all instructions (%.2f)", (v / f <= 1.25 ? "met" : "not met"), v / f
    if (known) printf ", %s without SHA-256 (%.2f)", ((v - vs) / (f - fs) <= 1.25 ? "met" : "not met"), (v - vs) / (f - fs)
    printf "\n"
  }'
}

echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo ' (with uncommitted changes)'), $(date -u +%Y-%m-%d), $(valgrind --version)"
echo "$root/examples/collector.pub" >"$work/examples.keys"
measure examples "$work/examples.keys" examples/*.mcpev

if [ "$compat" = 1 ]; then
  find examples/compat -name collector.pub | sort >"$work/compat.keys"
  mapfile -t compat_bundles < <(find examples/compat -name '*.mcpev' | sort)
  measure compat "$work/compat.keys" "${compat_bundles[@]}"
fi
