#!/usr/bin/env python3
"""scripts/oci-image.py -- the release's container image as an OCI image layout tarball.

Called by scripts/dist.sh; no container engine, no registry, Python 3 standard library only:

    oci-image.py --bins DIR --version V --revision COMMIT --source URL --licenses SPDX \
                 --epoch SOURCE_DATE_EPOCH --out FILE.oci.tar

One layer: DIR/mcp-collect and DIR/mcp-grade in /bin (static: nothing else to load), /tmp
(1777, where mcp-grade spills a large report), /work (the working directory, the user's)
and the user's home holding the state directory (MCP_PROBE_HOME, where mcp-collect
creates its signing key on first use). No CA file: mcp-collect has the public roots
compiled in (webpki-roots). The user is 65532:65532, by number (no /etc/passwd).

Reproducible: every time is --epoch, entries sorted, owners numeric with no names,
gzip without a file name or time, JSON with sorted keys: the same binaries and arguments
give the same bytes. Prints the manifest digest on stdout.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import time

UID = GID = 65532
HOME = "/home/mcp-probe"
STATE = HOME + "/.mcp-probe"
WORKDIR = "/work"
BINS = ("mcp-collect", "mcp-grade")


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def tar_bytes(entries, epoch):
    """entries: (name, mode, uid, gid, data or None for a directory), any order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, mode, uid, gid, data in sorted(entries, key=lambda e: e[0]):
            info = tarfile.TarInfo(name)
            info.mode, info.uid, info.gid = mode, uid, gid
            info.uname = info.gname = ""
            info.mtime = epoch
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for a in ("bins", "version", "revision", "source", "licenses", "out"):
        p.add_argument("--" + a, required=True)
    p.add_argument("--epoch", required=True, type=int)
    args = p.parse_args()
    epoch = args.epoch
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))

    root = []
    for d in ("bin", "home", "tmp"):
        root.append((d, 0o1777 if d == "tmp" else 0o755, 0, 0, None))
    for d, mode in ((HOME, 0o700), (STATE, 0o700), (WORKDIR, 0o755)):
        root.append((d.lstrip("/"), mode, UID, GID, None))
    for b in BINS:
        with open(os.path.join(args.bins, b), "rb") as f:
            root.append(("bin/" + b, 0o755, 0, 0, f.read()))
    layer_tar = tar_bytes(root, epoch)
    gz = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=gz, compresslevel=9, mtime=0) as g:
        g.write(layer_tar)
    layer = gz.getvalue()

    labels = {
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.version": args.version,
        "org.opencontainers.image.revision": args.revision,
        "org.opencontainers.image.source": args.source,
        "org.opencontainers.image.licenses": args.licenses,
        "org.opencontainers.image.title": "mcp-probe",
        "org.opencontainers.image.description":
            "mcp-collect and mcp-grade: signed evidence bundles from MCP servers, graded offline",
    }
    config = canonical({
        "created": created,
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "User": f"{UID}:{GID}",
            "Env": ["PATH=/bin", f"HOME={HOME}", f"MCP_PROBE_HOME={STATE}"],
            "WorkingDir": WORKDIR,
            "Cmd": ["mcp-collect", "--help"],
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer_tar).hexdigest()]},
        "history": [{"created": created, "created_by": "scripts/dist.sh (scripts/oci-image.py)"}],
    })

    def descriptor(media_type, blob):
        return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(blob).hexdigest(),
                "size": len(blob)}

    manifest = canonical({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": descriptor("application/vnd.oci.image.config.v1+json", config),
        "layers": [descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layer)],
        "annotations": labels,
    })
    mdesc = descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
    # The name `podman load` gives the image (localhost/mcp-probe:VERSION); skopeo copies
    # the archive's only image whatever it is called.
    mdesc["annotations"] = {"org.opencontainers.image.ref.name": f"mcp-probe:{args.version}"}
    index = canonical({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [mdesc],
    })

    layout = [("blobs", 0o755, 0, 0, None), ("blobs/sha256", 0o755, 0, 0, None),
              ("oci-layout", 0o644, 0, 0, canonical({"imageLayoutVersion": "1.0.0"})),
              ("index.json", 0o644, 0, 0, index)]
    for blob in (config, layer, manifest):
        layout.append(("blobs/sha256/" + hashlib.sha256(blob).hexdigest(), 0o644, 0, 0, blob))
    tmp = args.out + ".part"
    with open(tmp, "wb") as f:
        f.write(tar_bytes(layout, epoch))
    os.replace(tmp, args.out)
    print(mdesc["digest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
