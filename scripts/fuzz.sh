#!/usr/bin/env bash
# Run every fuzz target (schema/fuzz and collector/fuzz) for SECONDS each, one after the
# other; docs/fuzzing.md says what each reaches.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     SECONDS defaults to 60; TARGET names a
#                                             target of either fuzz crate (default: all)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain (`cargo +nightly`),
# or, without nightly, a stable one with RUSTC_BOOTSTRAP=1 (set here). Without cargo-fuzz
# it says so and exits 2; it installs nothing.
#
# Each target reads its checked-in seeds (fuzz/seeds/TARGET, when there are any) and keeps
# what it finds in fuzz/corpus/TARGET (not checked in); a crash is written to
# fuzz/artifacts/TARGET, and so is an input that runs longer than FUZZ_TIMEOUT seconds
# (default 10: a hang). At the end it prints, per target, libFuzzer's last status line
# and the size of its corpus. Exit status: 0 when every target ran its time without a
# failure, 1 when one failed, 2 when the tools are missing or the arguments are wrong.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
[[ $# -gt 0 ]] && shift
if ! [[ $secs =~ ^[0-9]+$ ]] || [[ $secs -eq 0 ]]; then
  echo "fuzz.sh: SECONDS must be a positive whole number, got '$secs'" >&2
  echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2
  exit 2
fi

if ! cargo fuzz --help >/dev/null 2>&1; then
  echo "fuzz.sh: cargo-fuzz is not installed (cargo fuzz: no such command)." >&2
  echo "fuzz.sh: install it with 'cargo install cargo-fuzz' (and a nightly toolchain:" >&2
  echo "fuzz.sh: 'rustup toolchain install nightly'), then run this again. Nothing was run." >&2
  exit 2
fi
if rustup run nightly rustc --version >/dev/null 2>&1; then
  fuzz=(cargo +nightly fuzz)
else
  echo "fuzz.sh: no nightly toolchain; using the default one with RUSTC_BOOTSTRAP=1" >&2
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi

# Every target of a fuzz crate: the [[bin]] names of its Cargo.toml.
targets_of() {
  awk '/^\[\[bin\]\]/ {bin=1; next} /^\[/ {bin=0} bin && /^name *=/ {gsub(/[" ]/, "", $0); sub(/name=/, "", $0); print}' "$1/fuzz/Cargo.toml"
}

declare -a plan=()
for crate in schema collector; do
  for t in $(targets_of "$crate"); do
    if [[ $# -eq 0 ]] || printf '%s\n' "$@" | grep -qx "$t"; then
      plan+=("$crate:$t")
    fi
  done
done
if [[ ${#plan[@]} -eq 0 ]]; then
  echo "fuzz.sh: no target named $* (targets: $(targets_of schema | tr '\n' ' ')$(targets_of collector | tr '\n' ' '))" >&2
  exit 2
fi

# One input running longer than this is a hang: libFuzzer writes it to
# fuzz/artifacts/TARGET/timeout-* and stops (its own default, 1200 s, would let a hang
# outlast any run).
timeout=${FUZZ_TIMEOUT:-10}
if ! [[ $timeout =~ ^[0-9]+$ ]] || [[ $timeout -eq 0 ]]; then
  echo "fuzz.sh: FUZZ_TIMEOUT must be a positive whole number of seconds, got '$timeout'" >&2
  exit 2
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
summary=()
for entry in "${plan[@]}"; do
  crate=${entry%%:*}
  t=${entry#*:}
  corpus=("fuzz/corpus/$t")
  mkdir -p "$crate/fuzz/corpus/$t"
  [[ -d $crate/fuzz/seeds/$t ]] && corpus+=("fuzz/seeds/$t")
  echo "== $crate/fuzz $t: ${secs}s (corpus: ${corpus[*]})"
  start=$(date +%s)
  if (cd "$crate" && "${fuzz[@]}" run "$t" "${corpus[@]}" -- \
        -max_total_time="$secs" -timeout="$timeout") 2>&1 | tee "$log"; then
    verdict="no failure"
  else
    verdict="FAILED (see $crate/fuzz/artifacts/$t)"
    failed+=("$t")
  fi
  # libFuzzer's last status line (#runs, cov, ft, corp) and the corpus kept on disk.
  stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  kept=$(find "$crate/fuzz/corpus/$t" -type f | wc -l)
  echo "== $t: ran $(( $(date +%s) - start ))s (build included), $verdict"
  summary+=("$t: $verdict; last status: ${stats:-none}; fuzz/corpus/$t: $kept files")
done

printf 'fuzz.sh: %s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#plan[@]} target(s), ${secs}s each, no failure"
