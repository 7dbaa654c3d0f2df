#!/usr/bin/env bash
# scripts/dist.sh -- build the release artefacts for x86_64 Linux (docs/install.md).
#
#   scripts/dist.sh             binaries, tarball, container image, SBOMs and SHA256SUMS into dist/
#   scripts/dist.sh --bins-only only the two static binaries (target/x86_64-unknown-linux-gnu/dist/)
#   scripts/dist.sh --bins-and-image
#                               the binaries and, in dist/, only the container image: what the
#                               reproducibility check rebuilds in a second checkout
#
# mcp-collect and mcp-grade are built fully static (glibc linked in, `+crt-static`) in the
# `dist` profile of Cargo.toml, with their dependency list embedded (cargo-auditable), and
# reproducibly: the same commit and toolchain give bit-identical binaries wherever the
# checkout lies (paths remapped, SOURCE_DATE_EPOCH from the commit, no timestamps).
# The container image (mcp-probe-VERSION-x86_64-linux.oci.tar, an OCI image layout tarball
# for `podman load` or `skopeo copy oci-archive:...`) holds the two binaries and nothing
# they do not need; scripts/oci-image.py writes it, reproducibly too.
# The pinned cargo-auditable and cargo-cyclonedx are installed into $MCP_PROBE_TOOLS
# (default target/dist-tools) when missing. Needs: git, cargo, cc, libc6-dev, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

TRIPLE=x86_64-unknown-linux-gnu
AUDITABLE_VERSION=0.7.7 # build() below passes it flags in this version's format
CYCLONEDX_VERSION=0.5.9
BINS=(mcp-collect mcp-grade)

bins_only=false image_only=false
case "${1:-}" in
  --bins-only) bins_only=true ;;
  --bins-and-image) image_only=true ;;
  "") ;;
  *) echo "dist.sh: unknown argument: $1 (expected --bins-only, --bins-and-image or nothing)" >&2; exit 2 ;;
esac

tools=${MCP_PROBE_TOOLS:-$root/target/dist-tools}
# Installed unless cargo's record of $tools lists that version (`cargo-auditable
# --version` prints nothing: it runs only through cargo).
tool() { # NAME VERSION
  if ! cargo install --list --root "$tools" 2>/dev/null | grep -qxF "$1 v$2:"; then
    cargo install --locked --quiet --version "$2" --root "$tools" "$1"
  fi
}
tool cargo-auditable "$AUDITABLE_VERSION"
$bins_only || $image_only || tool cargo-cyclonedx "$CYCLONEDX_VERSION"
export PATH="$tools/bin:$PATH"

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
[ -n "$version" ] || { echo "dist.sh: no version in Cargo.toml [workspace.package]" >&2; exit 1; }
# The commit's time, not the clock: the tarball's file times and the SBOMs' timestamp.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

# Reproducibility: every absolute path a compiler could embed (panic locations, C
# sources' __FILE__) is rewritten to a fixed prefix. RUSTFLAGS with --target apply to the
# target only, not to build scripts and proc macros (which could not be crt-static).
cargo_home=${CARGO_HOME:-$HOME/.cargo}
export CARGO_INCREMENTAL=0
# getrandom 0.3 and 0.4 look glibc's getrandom() up with dlsym, which finds nothing in a
# static binary, and then read /dev/urandom: this cfg makes them call it directly, so the
# binaries need no /dev (getrandom 0.2, used by ring, and std make the system call anyway).
export RUSTFLAGS="-C target-feature=+crt-static --cfg getrandom_backend=\"linux_getrandom\" --remap-path-prefix=$root=/mcp-probe --remap-path-prefix=$cargo_home=/cargo"
export CFLAGS="-ffile-prefix-map=$root=/mcp-probe -ffile-prefix-map=$cargo_home=/cargo"
unset CARGO_BUILD_RUSTFLAGS CARGO_ENCODED_RUSTFLAGS

# Profile-guided optimisation (docs/install.md, "Profile-guided optimisation"): the
# profile in build/pgo/, made by scripts/pgo.sh by grading the compat bundles, is an input
# like the sources, so the binaries stay reproducible. It is used only with the LLVM
# that wrote it (its format is LLVM's); with another toolchain the binaries are built
# without it, and this says so. MCP_PROBE_PGO=off builds without it;
# MCP_PROBE_PGO=generate:DIR builds mcp-grade alone, instrumented, writing its counts
# into DIR (what scripts/pgo.sh does).
pgo=${MCP_PROBE_PGO:-use} pgo_flags=
profile_gz=$root/build/pgo/mcp-grade.profdata.gz
llvm=$(rustc -vV | sed -n 's/^LLVM version: //p')
case $pgo in
  use)
    made_with=$(sed -n 's/^llvm: //p' "$root/build/pgo/mcp-grade.profile.txt" 2>/dev/null || true)
    if [ ! -f "$profile_gz" ]; then
      echo "dist.sh: no profile at build/pgo/: building without profile-guided optimisation" >&2
    elif [ "$made_with" != "$llvm" ]; then
      echo "dist.sh: the profile in build/pgo/ was made with LLVM ${made_with:-(unknown)}, this rustc has LLVM $llvm: building without profile-guided optimisation (scripts/pgo.sh makes one for this toolchain)" >&2
    else
      mkdir -p "$root/target/pgo"
      gzip -dc "$profile_gz" >"$root/target/pgo/mcp-grade.profdata"
      pgo_flags="-Cprofile-use=$root/target/pgo/mcp-grade.profdata"
      echo "dist.sh: profile-guided optimisation with build/pgo/mcp-grade.profdata.gz (LLVM $llvm)" >&2
    fi ;;
  off) echo "dist.sh: MCP_PROBE_PGO=off: building without profile-guided optimisation" >&2 ;;
  generate:/*)
    pgo_flags="-Cprofile-generate=${pgo#generate:}"
    bins_only=true
    echo "dist.sh: instrumented build, counts into ${pgo#generate:}" >&2 ;;
  *) echo "dist.sh: MCP_PROBE_PGO=$pgo: expected use, off or generate:/ABSOLUTE/DIR" >&2; exit 2 ;;
esac

start=$SECONDS
# The C compiler reads SOURCE_DATE_EPOCH (for __DATE__ and __TIME__), so cc-built crates
# (ring) tell cargo to rebuild when it changes: the commit's time would rebuild them after
# every commit. The binaries get a constant instead; the commit's time is for the tarball.
# The checkout's own target/ whatever CARGO_TARGET_DIR says: the binaries are looked for
# there, and a second checkout must not build into (and compare with) the first one's.
# Two builds: the profile is mcp-grade's alone. Applied to the code mcp-collect shares
# with it, it made mcp-collect 8.97 MiB, over the limit of docs/install.md, "Sizes".
# Each is what `cargo auditable build --locked` does, with one difference: the wrapper is
# named, not given by its absolute path. Cargo mixes a workspace wrapper's path into the
# symbol names of the workspace's crates (`-C metadata`), so with the path the binaries
# depended on where $MCP_PROBE_TOOLS lies, and the profile's counts (found by name) were
# lost for the workspace's functions wherever the helpers lay elsewhere than for pgo.sh.
# A bare name is hashed as written and found on PATH ($tools/bin comes first).
# CARGO_AUDITABLE_ORIG_ARGS is how cargo-auditable hands its wrapper the cargo flags it
# needs for `cargo metadata`: its format is that of AUDITABLE_VERSION (check it on a bump).
build() { # PACKAGE EXTRA_RUSTFLAGS
  CARGO_TARGET_DIR=$root/target SOURCE_DATE_EPOCH=0 RUSTFLAGS="$RUSTFLAGS${2:+ $2}" \
    RUSTC_WORKSPACE_WRAPPER=cargo-auditable \
    CARGO_AUDITABLE_ORIG_ARGS='{"offline":false,"locked":true,"frozen":false,"config":[]}' \
    cargo build --locked --profile dist --target "$TRIPLE" -p "$1" --bins
}
case $pgo in generate:*) BINS=(mcp-grade) ;; *) build mcp-probe-collector "" ;; esac
build mcp-probe-evaluator "$pgo_flags"
built=target/$TRIPLE/dist
for b in "${BINS[@]}"; do
  # A static executable: `ldd` says "not a dynamic executable"; no program interpreter.
  if readelf -l "$built/$b" | grep -q 'INTERP'; then
    echo "dist.sh: $built/$b is dynamically linked" >&2; exit 1
  fi
done
echo "dist.sh: built in $((SECONDS - start)) s: $(cd "$built" && sha256sum "${BINS[@]}" | tr '\n' ' ')" >&2
$bins_only && exit 0

name=mcp-probe-$version-x86_64-linux
out=$root/dist
rm -rf "$out"; mkdir -p "$out"

# The container image. Its labels: the version, the commit, the repository and licence
# of Cargo.toml's [workspace.package], and the commit's time as its creation time.
manifest_field() { sed -n "s/^$1 = \"\(.*\)\"\$/\1/p" Cargo.toml | head -n1; }
image_digest=$(python3 scripts/oci-image.py --bins "$built" --out "$out/$name.oci.tar" \
  --version "$version" --revision "$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  --source "$(manifest_field repository)" --licenses "$(manifest_field license)" \
  --epoch "$SOURCE_DATE_EPOCH")
echo "dist.sh: $name.oci.tar: manifest $image_digest, archive sha256:$(sha256sum <"$out/$name.oci.tar" | cut -d' ' -f1)" >&2
$image_only && exit 0
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
pkg=$stage/$name
mkdir -p "$pkg/bin" "$pkg/man/man1" "$pkg/completions"
cp "$built/mcp-collect" "$built/mcp-grade" "$pkg/bin/"
cp LICENSE README.md CHANGELOG.md "$pkg/"
cp -r docs "$pkg/docs"
rm -rf "$pkg/docs/man" "$pkg/docs/completions"
cp docs/man/*.1 "$pkg/man/man1/"
cp -r docs/completions/. "$pkg/completions/"
# Fixed order, owner and times, no gzip header time: the tarball is reproducible too.
find "$pkg" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
tar --sort=name --owner=0 --group=0 --numeric-owner --format=gnu --mode='u+rwX,go+rX,go-w' \
  -C "$stage" -cf - "$name" | gzip -9n >"$out/$name.tar.gz"

# CycloneDX SBOM per binary (the dependency tree for this target, build dependencies
# included). cargo-cyclonedx writes beside each manifest; moved to dist/. It honours
# SOURCE_DATE_EPOCH (fixed timestamp, no random serial number).
for pkgdir in collector evaluator; do
  cargo cyclonedx --quiet --manifest-path "$pkgdir/Cargo.toml" --format json \
    --spec-version 1.5 --describe binaries --target "$TRIPLE"
done
for b in "${BINS[@]}"; do
  f=$(find collector evaluator -maxdepth 1 -name "${b}_bin.cdx.json" | head -n1)
  [ -n "$f" ] || { echo "dist.sh: cargo-cyclonedx wrote no SBOM for $b" >&2; exit 1; }
  # Path dependencies are named by their location: the checkout's path is not a fact
  # about the binary.
  sed "s|$root|/mcp-probe|g" "$f" >"$out/$b-$version-x86_64-linux.cdx.json"
  rm -f "$f"
done
find collector evaluator -maxdepth 1 -name '*.cdx.json' -delete

(cd "$out" && sha256sum -- *.tar.gz *.oci.tar *.cdx.json >SHA256SUMS)
echo "dist.sh: $out:" >&2
(cd "$out" && ls -l && cat SHA256SUMS) >&2
for b in "${BINS[@]}"; do
  stat -c %s "$built/$b" | awk -v b="$b" '{ printf "dist.sh: %s %d bytes (%.2f MiB)\n", b, $1, $1 / 1048576 }' >&2
done
