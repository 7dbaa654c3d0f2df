#!/usr/bin/env bash
# scripts/test-dist.sh -- the release artefacts, tested the way a jump host uses them
# (docs/install.md). Called by scripts/test.sh after the lab is up and the debug build
# exists; needs lab/run/env (LAB_PY2, LAB_TLS_MODERN, LAB_TLS_CA).
#
# 1. scripts/dist.sh: the tarball, image, SBOMs and SHA256SUMS; both binaries static (`ldd`),
#    with no NSS in them, and the dependency list embedded (cargo-auditable's section);
#    built with the profile of build/pgo/ when this rustc's LLVM is the one that made it.
# 2. Empty root: a directory holding only the two binaries, /etc/hosts, /etc/resolv.conf
#    and a CA file (no /dev: randomness comes from the getrandom system call); mcp-collect
#    runs there under chroot with `env -i` against a lab
#    server by address, by a name from that /etc/hosts, and over TLS by `localhost`;
#    mcp-grade verifies and grades the bundles there. The verdicts equal those the debug
#    build's bundle of the same server gets.
# 3. Container image: the OCI archive's layout, config and layer are read back (only the
#    two binaries, user 65532:65532, /work, /tmp 1777, the labels); podman (with runc,
#    installed by apt-get when missing) loads it, mcp-collect in it collects a lab server
#    over HTTP and over TLS into a mounted directory, with its key created in the mounted
#    state directory, and mcp-grade in it grades the bundles: the verdicts equal the debug
#    build's, and every file the container wrote is owned by 65532:65532 on the host.
# 4. Reproducible: a second clean checkout of HEAD under another path, with a copy of the
#    pinned helpers under another path too, builds the binaries and the image again
#    (scripts/dist.sh --bins-and-image); the SHA-256s must be equal.
#
# chroot and podman need root (CI runs as root). Not root, or podman unable to run a
# container here: those parts say why they skip, unless CI is set, where they fail. MCP_PROBE_DIST_REPRO=0 skips step 4 (a working tree
# with uncommitted changes cannot be compared with a checkout of HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# LAB_ENV: the env file of a lab started elsewhere (default: the one lab/up.sh wrote here).
set -a; . "${LAB_ENV:-lab/run/env}"; set +a

step() { printf '\n== dist: %s\n' "$*"; }
fail() { echo "test-dist: FAILED: $*" >&2; exit 1; }
# same_verdicts REPORT DEBUG_REPORT [WHAT TARGET DEBUG_TARGET]...: every graded check's
# verdict for TARGET in REPORT (a JSON report) equals the one for DEBUG_TARGET in DEBUG_REPORT.
same_verdicts() {
  python3 - "$@" <<'PY'
import json, sys
static, normal = (json.load(open(p)) for p in sys.argv[1:3])
rest = sys.argv[3:]
def index(report, target):
    return next(s["index"] for s in report["servers"] if s["target"] == target)
def verdicts(report, server):
    return {c["id"]: next(r["verdict"] for r in c["results"] if r["server"] == server)
            for c in report["checks"] if c["graded"]}
bad = 0
for what, ts, tn in zip(rest[0::3], rest[1::3], rest[2::3]):
    a, b = verdicts(static, index(static, ts)), verdicts(normal, index(normal, tn))
    diff = {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
    print(f"{what}: {ts}: {len(a)} verdicts, "
          f"{'equal to the debug build' if not diff else 'DIFFERENT (release, debug): ' + str(diff)}")
    bad += bool(diff)
sys.exit(1 if bad else 0)
PY
}
TRIPLE=x86_64-unknown-linux-gnu
built=$root/target/$TRIPLE/dist
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-dist-test.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

step "build the release artefacts (scripts/dist.sh)"
t0=$SECONDS
rc=0
scripts/dist.sh 2>"$work/dist.err" || rc=$?
cat "$work/dist.err" >&2
[ "$rc" -eq 0 ] || fail "scripts/dist.sh exited $rc"
echo "dist.sh took $((SECONDS - t0)) s"
# With the toolchain the committed profile was made with, the release must use it
# (docs/install.md, "Profile-guided optimisation"); with another, dist.sh says why not.
llvm=$(rustc -vV | sed -n 's/^LLVM version: //p')
if [ "$(sed -n 's/^llvm: //p' build/pgo/mcp-grade.profile.txt)" = "$llvm" ]; then
  grep -q '^dist.sh: profile-guided optimisation with build/pgo/' "$work/dist.err" \
    || fail "dist.sh did not use build/pgo/mcp-grade.profdata.gz (LLVM $llvm)"
  echo "the release build used the profile in build/pgo/ (LLVM $llvm)"
else
  grep -q '^dist.sh: the profile in build/pgo/ was made with LLVM' "$work/dist.err" \
    || fail "dist.sh did not say why it built without the profile"
  echo "note: the profile in build/pgo/ is for another LLVM: built without it"
fi
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

step "container image: the OCI layout, its config and its one layer"
image_tar=dist/mcp-probe-$version-x86_64-linux.oci.tar
python3 - "$image_tar" "$version" "$(git rev-parse HEAD)" <<'PY' || fail "$image_tar"
import hashlib, io, json, sys, tarfile
path, version, head = sys.argv[1:4]
outer = tarfile.open(path)
def blob(digest):
    data = outer.extractfile("blobs/sha256/" + digest.split(":", 1)[1]).read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == digest, digest
    return data
assert json.load(outer.extractfile("oci-layout")) == {"imageLayoutVersion": "1.0.0"}
index = json.load(outer.extractfile("index.json"))
[m] = index["manifests"]
manifest = json.loads(blob(m["digest"]))
config = json.loads(blob(manifest["config"]["digest"]))
[layer] = manifest["layers"]
entries = {e.name: e for e in tarfile.open(fileobj=io.BytesIO(blob(layer["digest"])), mode="r:gz")}
files = sorted(n for n, e in entries.items() if not e.isdir())
assert files == ["bin/mcp-collect", "bin/mcp-grade"], files
assert entries["tmp"].mode == 0o1777, oct(entries["tmp"].mode)
assert (entries["work"].uid, entries["work"].gid) == (65532, 65532)
c = config["config"]
assert c["User"] == "65532:65532" and c["WorkingDir"] == "/work", c
labels = c["Labels"]
assert labels["org.opencontainers.image.version"] == version, labels
assert labels["org.opencontainers.image.revision"] == head, labels
assert labels["org.opencontainers.image.created"] == config["created"], labels
print(f"{path}: manifest {m['digest']}, {len(entries)} entries, user {c['User']}, "
      f"working directory {c['WorkingDir']}, env {c['Env']}, created {config['created']}")
PY

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
# mcp-collect must fit in 8.5 MiB (docs/install.md, "Sizes").
[ "$(stat -c %s "$built/mcp-collect")" -le $((17 * 512 * 1024)) ] \
  || fail "mcp-collect is over 8.5 MiB (docs/install.md, \"Sizes\")"
echo "mcp-collect fits in 8.5 MiB"

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

  same_verdicts "$er/static.json" "$work/normal.json" "by address" "$by_addr" "$by_addr" \
    "by a name from /etc/hosts" "$by_name" "$by_name" \
    "TLS by localhost" "$tls" "https://$LAB_TLS_MODERN/mcp" || fail "verdicts differ"
  # collector.build, target and rustc of a bundle written in the empty root (show --json).
  inroot /bin/mcp-grade show --json "${sb[0]}" | python3 -c 'import json,sys; print("collector:", json.load(sys.stdin)["collector"])'
fi

step "container image: podman loads the archive and runs both binaries in it as the image's user"
# Why the step cannot run, or nothing: said as the reason it skips (and fails under CI).
podman_missing() {
  [ "$(id -u)" -eq 0 ] || { echo "podman (rootful, storage under a temp dir) needs root (uid $(id -u))"; return; }
  command -v podman >/dev/null && command -v runc >/dev/null && return
  command -v apt-get >/dev/null || { echo "podman or runc missing, and no apt-get to install them"; return; }
  echo "installing podman and runc (apt-get)" >&2
  { apt-get install -y -qq --no-install-recommends podman runc >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq --no-install-recommends podman runc; }; } >&2 \
    || { echo "apt-get could not install podman and runc"; return; }
}
why=$(podman_missing)
ct=$work/container
if [ -z "$why" ]; then
  t0=$SECONDS
  mkdir -p "$ct/storage" "$ct/run" "$ct/work/bundles" "$ct/state"
  # No systemd, no cgroup delegation, no registry: runc with cgroupfs, events to a file,
  # no default ulimits (raising RLIMIT_NOFILE can be refused in a container), and
  # storage of its own under $work (vfs: no overlay mounts to undo).
  printf '[containers]\ndefault_ulimits = []\n' >"$ct/containers.conf"
  export CONTAINERS_CONF=$ct/containers.conf
  pod=(podman --runtime=runc --cgroup-manager=cgroupfs --events-backend=file
       --root="$ct/storage" --runroot="$ct/run" --storage-driver=vfs)
  if ! "${pod[@]}" load -i "$image_tar" >"$ct/load.out" 2>&1; then
    why="podman load failed: $(tail -n1 "$ct/load.out")"
  elif ! "${pod[@]}" run --rm --network=host "localhost/mcp-probe:$version" mcp-collect --version >"$ct/run.out" 2>&1; then
    why="podman run failed: $(tail -n1 "$ct/run.out")"
  fi
fi
if [ -n "$why" ]; then
  [ -z "${CI:-}" ] || fail "the container image test cannot run: $why"
  echo "SKIP container image: $why"
else
  cat "$ct/load.out" "$ct/run.out"
  image=localhost/mcp-probe:$version
  inspect() { "${pod[@]}" image inspect --format "$1" "$image"; }
  [ "$(inspect '{{.Config.User}}')" = 65532:65532 ] || fail "the image's user is '$(inspect '{{.Config.User}}')', not 65532:65532"
  [ "$(inspect '{{.Config.WorkingDir}}')" = /work ] || fail "the image's working directory is not /work"
  [ "$(inspect '{{index .Labels "org.opencontainers.image.revision"}}')" = "$(git rev-parse HEAD)" ] \
    || fail "the image's revision label is not HEAD"
  [ "$(inspect '{{index .Labels "org.opencontainers.image.version"}}')" = "$version" ] \
    || fail "the image's version label is not $version"
  echo "image $image: user $(inspect '{{.Config.User}}'), working directory $(inspect '{{.Config.WorkingDir}}'), $(inspect '{{.Size}}') bytes"
  # The host directories the user writes: a bind mount keeps the host's owner and mode.
  chown 65532:65532 "$ct/work" "$ct/work/bundles" "$ct/state"
  chmod 700 "$ct/state"
  cp "$LAB_TLS_CA" "$ct/ca.crt"
  # The state directory mounted as a fleet mounts it (docs/fleet.md): the key the
  # collector creates there on first use outlives the container, and mcp-grade trusts it.
  run() { "${pod[@]}" run --rm --network=host -v "$ct/work:/work" \
            -v "$ct/state:/home/mcp-probe/.mcp-probe" -v "$ct/ca.crt:/ca.crt:ro" "$image" "$@"; }
  tls_ip=https://$LAB_TLS_MODERN/mcp
  run mcp-collect -q -o bundles "$LAB_PY2" </dev/null >"$ct/paths" || fail "mcp-collect in the container exited $?"
  run mcp-collect -q -o bundles --ca-file /ca.crt "$tls_ip" </dev/null >>"$ct/paths" \
    || fail "mcp-collect (TLS) in the container exited $?"
  cat "$ct/paths"
  rc=0; run mcp-grade --format json -o oci.json --trust /home/mcp-probe/.mcp-probe/keys/collector.pub bundles || rc=$?
  case $rc in 0|1|4) ;; *) fail "mcp-grade in the container exited $rc" ;; esac
  # Files the container wrote, owned on the host by the image's user, never root.
  for f in "$ct/state/keys/collector.key" "$ct/work/oci.json" "$ct"/work/bundles/*.mcpev; do
    owner=$(stat -c %u:%g "$f")
    echo "$f: owner $owner"
    [ "$owner" = 65532:65532 ] || fail "$f was written by $owner in the container, not 65532:65532"
  done
  [ "$(find "$ct/work/bundles" -name '*.mcpev' | wc -l)" -eq 2 ] || fail "the container did not write 2 bundles"
  if [ -f "$work/normal.json" ]; then
    same_verdicts "$ct/work/oci.json" "$work/normal.json" "in the container" "$LAB_PY2" "$LAB_PY2" \
      "TLS in the container" "$tls_ip" "$tls_ip" || fail "verdicts differ (container, debug build)"
  fi
  "${pod[@]}" rmi -f "$image" >/dev/null
  echo "container image step took $((SECONDS - t0)) s"
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
  # The helpers copied, not shared: the second build must not depend on where they lie
  # (cargo hashes a workspace wrapper's path into symbol names; dist.sh names it instead).
  cp -a "${MCP_PROBE_TOOLS:-$root/target/dist-tools}" "$work/elsewhere/tools"
  t0=$SECONDS
  MCP_PROBE_TOOLS=$work/elsewhere/tools "$other/scripts/dist.sh" --bins-and-image
  echo "second build took $((SECONDS - t0)) s"
  for b in mcp-collect mcp-grade; do
    one=$(sha256sum <"$built/$b" | cut -d' ' -f1)
    two=$(sha256sum <"$other/target/$TRIPLE/dist/$b" | cut -d' ' -f1)
    echo "$b: $one ($root)"
    echo "$b: $two ($other)"
    [ "$one" = "$two" ] || fail "$b differs between two builds of $(git rev-parse --short HEAD)"
  done
  one=$(sha256sum <"$image_tar" | cut -d' ' -f1)
  two=$(sha256sum <"$other/$image_tar" | cut -d' ' -f1)
  echo "$(basename "$image_tar"): $one ($root)"
  echo "$(basename "$image_tar"): $two ($other)"
  [ "$one" = "$two" ] || fail "the image archive differs between two builds of $(git rev-parse --short HEAD)"
  echo "reproducible: both binaries and the image archive bit-identical"
fi
