#!/usr/bin/env bash
# scripts/test-dist.sh -- the release artefacts, tested the way a jump host uses them
# (docs/install.md). Called by scripts/test.sh after the lab is up and the debug build
# exists; needs lab/run/env (LAB_PY2, LAB_TLS_MODERN, LAB_TLS_CA).
#
# 1. scripts/dist.sh: the tarball, SBOMs and SHA256SUMS; both binaries static (`ldd`),
#    with no NSS in them, and the dependency list embedded (cargo-auditable's section).
# 2. Empty root: a directory holding only the two binaries, /etc/hosts, /etc/resolv.conf
#    and a CA file (no /dev: randomness comes from the getrandom system call); mcp-collect
#    runs there under chroot with `env -i` against a lab
#    server by address, by a name from that /etc/hosts, and over TLS by `localhost`;
#    mcp-grade verifies and grades the bundles there. The verdicts equal those the debug
#    build's bundle of the same server gets.
# 3. Reproducible: a second clean checkout of HEAD under another path builds the binaries
#    again (scripts/dist.sh --bins-only); both SHA-256s must be equal.
#
# chroot needs root (CI runs as root). Not root: the empty-root part says why it skips,
# unless CI is set, where it fails. MCP_PROBE_DIST_REPRO=0 skips step 3 (a working tree
# with uncommitted changes cannot be compared with a checkout of HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# LAB_ENV: the env file of a lab started elsewhere (default: the one lab/up.sh wrote here).
set -a; . "${LAB_ENV:-lab/run/env}"; set +a

step() { printf '\n== dist: %s\n' "$*"; }
fail() { echo "test-dist: FAILED: $*" >&2; exit 1; }
TRIPLE=x86_64-unknown-linux-gnu
built=$root/target/$TRIPLE/dist
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-dist-test.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

step "build the release artefacts (scripts/dist.sh)"
t0=$SECONDS
scripts/dist.sh
echo "dist.sh took $((SECONDS - t0)) s"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
tarball=dist/mcp-probe-$version-x86_64-linux.tar.gz
(cd dist && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not match dist/"
tar -tzf "$tarball" >"$work/listing"
for f in bin/mcp-collect bin/mcp-grade LICENSE README.md CHANGELOG.md docs/install.md \
         man/man1/mcp-collect.1 man/man1/mcp-grade.1 completions/mcp-collect.bash; do
  grep -qx "mcp-probe-$version-x86_64-linux/$f" "$work/listing" || fail "$tarball lacks $f"
done
for b in mcp-collect mcp-grade; do
  python3 - "dist/$b-$version-x86_64-linux.cdx.json" "$b" <<'PY' || fail "SBOM of $2"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bomFormat"] == "CycloneDX", d.get("bomFormat")
names = {c["name"] for c in d.get("components", [])}
assert "mcp-probe-schema" in names or any("mcp-probe-schema" in n for n in names), sorted(names)[:20]
print(f"{sys.argv[1]}: CycloneDX {d['specVersion']}, {len(names)} components")
PY
done

step "static, no NSS, dependency list embedded"
for b in mcp-collect mcp-grade; do
  out=$(ldd "$built/$b" 2>&1 || true)
  echo "ldd $b: $out"
  case $out in *"not a dynamic executable"*|*"statically linked"*) ;; *) fail "$b is dynamically linked: $out" ;; esac
  # glibc's NSS code (what getaddrinfo, getpwnam and friends load modules with) names
  # its configuration file; a binary without that string cannot load an NSS module.
  if grep -aq 'nsswitch.conf' "$built/$b"; then fail "$b contains glibc's NSS code"; fi
  objdump -h "$built/$b" | grep -q '\.dep-v0' || fail "$b has no cargo-auditable .dep-v0 section"
  # Stripped: cargo once left the symbols in a package with a profile override (Cargo.toml).
  if readelf -S "$built/$b" | grep -q '\.symtab'; then fail "$b has a symbol table (not stripped)"; fi
  size=$(stat -c %s "$built/$b")
  awk -v b="$b" -v s="$size" 'BEGIN { printf "%s: %d bytes (%.2f MiB)\n", b, s, s / 1048576 }'
done
"$built/mcp-collect" --version
"$built/mcp-grade" --version
# mcp-collect must fit in 8 MiB, the goal of issue 24 (docs/install.md, "Sizes").
[ "$(stat -c %s "$built/mcp-collect")" -le $((8 * 1024 * 1024)) ] \
  || fail "mcp-collect is over 8 MiB (docs/install.md, \"Sizes\")"
echo "mcp-collect fits in 8 MiB"

step "empty root: collect, verify and grade with nothing but the binaries, hosts, resolv.conf and a CA file"
if [ "$(id -u)" -ne 0 ]; then
  [ -z "${CI:-}" ] || fail "the empty-root test needs root for chroot, and CI runs as root"
  echo "SKIP empty root: chroot needs root (uid $(id -u)); run as root to test the static binaries in an empty root"
else
  er=$work/root
  mkdir -p "$er/bin" "$er/etc/ssl/certs" "$er/state" "$er/out"
  cp "$built/mcp-collect" "$built/mcp-grade" "$er/bin/"
  # A name only this root knows, mapped to loopback; localhost from the file too.
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.0.1\tmcp-lab.test\n' >"$er/etc/hosts"
  # Only loopback: a name missing from hosts would be asked of 127.0.0.1, never elsewhere.
  printf 'nameserver 127.0.0.1\n' >"$er/etc/resolv.conf"
  cp "$LAB_TLS_CA" "$er/etc/ssl/certs/ca-certificates.crt"
  # No /dev: the signing key, nonces and PKCE verifiers come from the getrandom system
  # call (dist.sh's getrandom_backend cfg), never from /dev/urandom (docs/install.md).
  inroot() { env -i MCP_PROBE_HOME=/state /usr/sbin/chroot "$er" "$@"; }
  [ "$(find "$er" -type f | wc -l)" -eq 5 ] || fail "the empty root holds more than 5 files"
  [ "$(find "$er" ! -type f ! -type d | wc -l)" -eq 0 ] || fail "the empty root holds more than files and folders"
  [ ! -e "$er/dev" ] || fail "the empty root has a /dev"

  by_addr=$LAB_PY2
  # By name: the server without DNS-rebinding protection (py2 answers any other Host
  # than localhost and 127.0.0.1 with 421, a server policy, not a resolution failure).
  by_name=${LAB_PY2_NODNS/127.0.0.1/mcp-lab.test}
  tls=https://${LAB_TLS_MODERN/127.0.0.1/localhost}/mcp
  inroot /bin/mcp-collect -q -o /out "$by_addr" "$by_name" </dev/null >"$work/static.paths" \
    || fail "static mcp-collect in the empty root exited $?"
  inroot /bin/mcp-collect -q -o /out --ca-file /etc/ssl/certs/ca-certificates.crt "$tls" </dev/null >>"$work/static.paths" \
    || fail "static mcp-collect (TLS, localhost) in the empty root exited $?"
  cat "$work/static.paths"
  inroot /bin/mcp-collect --public-key >"$er/collector.pub"
  mapfile -t sb <"$work/static.paths"
  inroot /bin/mcp-grade verify --trust /collector.pub "${sb[@]}" || fail "verify in the empty root"
  rc=0; inroot /bin/mcp-grade --format json -o /static.json --trust /collector.pub "${sb[@]}" || rc=$?
  case $rc in 0|1|4) ;; *) fail "mcp-grade in the empty root exited $rc" ;; esac

  # The same servers, by the debug build outside the root (the TLS one by 127.0.0.1).
  export MCP_PROBE_HOME=$work/home
  # The name by the debug build too: in a private mount namespace whose /etc/hosts is the
  # root's (the host's file is not touched), so both bundles target the same URL.
  target/debug/mcp-collect -q -o "$work/normal" "$by_addr" </dev/null >"$work/normal.paths"
  unshare -m sh -c 'mount --bind "$1" /etc/hosts && exec "$2" -q -o "$3" "$4" </dev/null' _ \
    "$er/etc/hosts" "$root/target/debug/mcp-collect" "$work/normal" "$by_name" >>"$work/normal.paths"
  target/debug/mcp-collect -q -o "$work/normal" --ca-file "$LAB_TLS_CA" "https://$LAB_TLS_MODERN/mcp" </dev/null >>"$work/normal.paths"
  mapfile -t nb <"$work/normal.paths"
  rc=0; target/debug/mcp-grade --format json -o "$work/normal.json" "${nb[@]}" || rc=$?
  case $rc in 0|1|4) ;; *) fail "mcp-grade (debug) exited $rc" ;; esac

  python3 - "$er/static.json" "$work/normal.json" "$by_addr" "$by_name" "$tls" "https://$LAB_TLS_MODERN/mcp" <<'PY' || fail "verdicts differ"
import json, sys
static, normal = (json.load(open(p)) for p in sys.argv[1:3])
by_addr, by_name, tls_static, tls_normal = sys.argv[3:7]
def index(report, target):
    return next(s["index"] for s in report["servers"] if s["target"] == target)
def verdicts(report, server):
    return {c["id"]: next(r["verdict"] for r in c["results"] if r["server"] == server)
            for c in report["checks"] if c["graded"]}
pairs = [("by address", by_addr, by_addr), ("by a name from /etc/hosts", by_name, by_name),
         ("TLS by localhost", tls_static, tls_normal)]
bad = 0
for what, ts, tn in pairs:
    a, b = verdicts(static, index(static, ts)), verdicts(normal, index(normal, tn))
    diff = {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
    print(f"{what}: {ts}: {len(a)} verdicts, "
          f"{'equal to the debug build' if not diff else 'DIFFERENT (static, debug): ' + str(diff)}")
    bad += bool(diff)
sys.exit(1 if bad else 0)
PY
  # collector.build, target and rustc of a bundle written in the empty root (show --json).
  inroot /bin/mcp-grade show --json "${sb[0]}" | python3 -c 'import json,sys; print("collector:", json.load(sys.stdin)["collector"])'
fi

step "reproducible: a second clean checkout under another path builds the same bytes"
if [ "${MCP_PROBE_DIST_REPRO:-1}" = 0 ]; then
  echo "SKIP reproducibility: MCP_PROBE_DIST_REPRO=0"
else
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    fail "the working tree differs from HEAD: commit first (or MCP_PROBE_DIST_REPRO=0), a checkout of HEAD would build other sources"
  fi
  other=$work/elsewhere/second-checkout
  git clone -q --no-local "$root" "$other"
  git -C "$other" checkout -q "$(git rev-parse HEAD)"
  t0=$SECONDS
  MCP_PROBE_TOOLS=$root/target/dist-tools "$other/scripts/dist.sh" --bins-only
  echo "second build took $((SECONDS - t0)) s"
  for b in mcp-collect mcp-grade; do
    one=$(sha256sum <"$built/$b" | cut -d' ' -f1)
    two=$(sha256sum <"$other/target/$TRIPLE/dist/$b" | cut -d' ' -f1)
    echo "$b: $one ($root)"
    echo "$b: $two ($other)"
    [ "$one" = "$two" ] || fail "$b differs between two builds of $(git rev-parse --short HEAD)"
  done
  echo "reproducible: both binaries bit-identical"
fi
