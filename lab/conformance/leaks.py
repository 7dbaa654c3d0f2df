#!/usr/bin/env python3
"""lab/conformance/leaks.py OUT_DIR FILE... -- no secret of the suite's test servers in what mcp-collect wrote.

The suite's test authorization servers hand out fixed or predictable secrets: client
secrets (`test-client-secret`, `test-secret-<ms>`, `conformance-test-secret`,
`test-xaa-secret`), the authorization code `test-auth-code` and access tokens
(`test-token`, `test-token-<ms>`, `test-token-prereg-<ms>`, `test-token-as...`,
`cc-token-<ms>`). Scenarios with a MCP_CONFORMANCE_CONTEXT (pre-registered credentials,
keys, workload JWTs, ID tokens) add their secret-looking values (kept by client.py as
OUT_DIR/<scenario>.context.json). Some secrets no fixed string or context names: DPoP-bound
access tokens, the client's own DPoP proofs and client assertions, the identity assertion
an identity provider issues. They are signed JWTs, so any compact JWS (three base64url
segments, the first a JOSE header naming an `alg`) in a searched text is a hit: a bundle
keeps a token's decoded header and claims, never the token.

FILEs are the texts to search: each bundle decoded with `mcp-grade show --json`, the raw
bundles, and the client's stdout and stderr (the suite's own log is not searched: it is the
test server's view and prints what it issued). A hit is a secret in any letter case, raw,
percent-encoded or JSON-escaped, or inside a decoded `Basic` credential. The client id
(`test-client-id`, `test-client-<ms>`) is public and not searched for. Exit 1 on a hit,
naming the file and the secret's label, never the secret's surroundings.
"""
import base64
import binascii
import glob
import json
import os
import re
import sys
from urllib.parse import quote

FIXED = ["test-client-secret", "conformance-test-secret", "test-xaa-secret", "test-auth-code", "test-token"]
# Prefixes of per-run values: the whole value starts with them and is unknown in advance.
PREFIXES = ["test-secret-", "test-token-", "cc-token-"]
SECRETISH = re.compile(r"secret|token|assertion|private|key|password|jwt", re.I)
# A compact JWS of any kind (an access token, a DPoP proof, an identity or client assertion,
# a workload token): the collector keeps only a JWT's decoded header and claims, so a whole
# one is a credential that escaped. This catches the values no context names (the ID-JAG an
# identity provider issues, a DPoP-bound access token).
JWS = re.compile(r"eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{16,}")


def jws_header(segment):
    try:
        h = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (binascii.Error, ValueError):
        return None
    return h if isinstance(h, dict) and isinstance(h.get("alg"), str) else None


def context_secrets(out_dir):
    found = []
    for f in glob.glob(os.path.join(out_dir, "**", "*.context.json"), recursive=True):
        try:
            ctx = json.load(open(f, encoding="utf-8"))
        except (OSError, ValueError):
            continue

        def walk(v, key=""):
            if isinstance(v, dict):
                for k, x in v.items():
                    walk(x, k)
            elif isinstance(v, list):
                for x in v:
                    walk(x, key)
            elif isinstance(v, str) and SECRETISH.search(key) and len(v) >= 8 and not v.startswith(("http://", "https://")):
                found.append((f"{os.path.basename(f)}:{key}", v))

        walk(ctx)
    return found


def forms(s):
    return {s.lower(), quote(s, safe="").lower(), json.dumps(s)[1:-1].lower()}


def main():
    out_dir, *files = sys.argv[1:]
    secrets = [(s, s) for s in FIXED + PREFIXES] + context_secrets(out_dir)
    hits = 0
    for path in files:
        text = open(path, "rb").read().decode("utf-8", "replace")
        low = text.lower()
        for label, s in secrets:
            if any(f in low for f in forms(s)):
                print(f"conformance: LEAK: {path} holds the test server's {label}", file=sys.stderr)
                hits += 1
        for m in JWS.finditer(text):
            h = jws_header(m.group(0).split(".")[0])
            if h is not None:
                print(f"conformance: LEAK: {path} holds a signed JWT (typ {h.get('typ', 'none')!r}: an access token, DPoP proof or assertion)", file=sys.stderr)
                hits += 1
        for m in re.finditer(r"basic\s+([a-z0-9+/=_-]{8,})", low):
            # the base64 was lower-cased with the text: decode it from the original
            raw = text[m.start(1):m.end(1)]
            try:
                dec = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=False).decode("utf-8", "replace").lower()
            except (binascii.Error, ValueError):
                continue
            for label, s in secrets:
                if s.lower() in dec:
                    print(f"conformance: LEAK: {path} holds the test server's {label} in a Basic credential", file=sys.stderr)
                    hits += 1
    print(f"conformance: leak check: {len(files)} files, {len(secrets)} secret patterns, {hits} hits")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
