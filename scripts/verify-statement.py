#!/usr/bin/env python3
"""Verify a signed grading statement (mcp-grade --attest) without mcp-grade.

An implementation independent of the grader's Rust code: the DSSE envelope is read and
its signature checked by securesystemslib (its dsse.Envelope, which computes the PAE
itself, and an SSlibKey made from the grader's PEM public key with pyca/cryptography);
the key id, the statement type, the predicate type and the subject digests are checked
here. scripts/test.sh runs it on a statement the grader wrote (lab/.venv-dsse holds
securesystemslib; lab/install.sh installs it).

usage: verify-statement.py STATEMENT --trust GRADER_PUB_PEM [--tampered] [FILE...]

Exit 0 when the statement verifies and every FILE's SHA-256 is a subject, 1 otherwise
(one line saying why). With --tampered, three altered copies of the statement (a payload
byte flipped, a signature byte flipped, a subject digest changed) must each be refused.
"""

import argparse
import base64
import copy
import hashlib
import json
import sys

from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_public_key,
)
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://mcp-probe.dev/grading/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"


def check(doc, public, files):
    """Raise on anything in the envelope `doc` that does not verify with `public`;
    return a line saying what did."""
    doc = copy.deepcopy(doc)  # Envelope.from_dict rewrites the signatures it reads
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    # The grader's key id: hex SHA-256 of the raw 32 public-key bytes.
    keyid = hashlib.sha256(raw).hexdigest()
    key = SSlibKey.from_crypto(public, keyid=keyid)
    payload_b64 = doc["payload"]
    # The signatures are base64 in the file, as DSSE says; from_dict reads them so (and
    # keeps them by key id).
    envelope = Envelope.from_dict(doc)
    if list(envelope.signatures) != [keyid]:
        raise ValueError(f"signature key ids {list(envelope.signatures)} != [{keyid}]")
    # Verifies the signature over the PAE of payloadType and payload; raises otherwise.
    envelope.verify([key], 1)
    if envelope.payload_type != PAYLOAD_TYPE:
        raise ValueError(f"payloadType {envelope.payload_type!r}")
    # The PAE the signature covers, spelled out as DSSE defines it.
    pae = b"DSSEv1 %d %b %d %b" % (
        len(PAYLOAD_TYPE),
        PAYLOAD_TYPE.encode(),
        len(envelope.payload),
        envelope.payload,
    )
    if envelope.pae() != pae:
        raise ValueError("securesystemslib's PAE differs from DSSE's")
    if envelope.payload != base64.b64decode(payload_b64):
        raise ValueError("payload")

    statement = json.loads(envelope.payload)
    if statement.get("_type") != STATEMENT_TYPE:
        raise ValueError(f"_type {statement.get('_type')!r}")
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise ValueError(f"predicateType {statement.get('predicateType')!r}")
    subjects = {s["digest"]["sha256"]: s["name"] for s in statement["subject"]}
    predicate = statement["predicate"]
    report = predicate["report"]["name"]
    if report not in subjects.values():
        raise ValueError(f"the report {report!r} is not a subject")
    for path in files:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest not in subjects:
            raise ValueError(f"{path}: sha256 {digest} is not a subject")
    totals = predicate["totals"]
    return (
        f"{len(subjects)} subjects, {len(files)} file(s) matched, signed by {keyid[:16]}, "
        f"{predicate['benchmark']['id']}, totals {totals}"
    )


def tampered(doc):
    """Altered copies of the envelope `doc`, each of which must be refused."""
    b64 = base64.b64encode

    def edited(name, edit):
        d = copy.deepcopy(doc)
        edit(d)
        return name, d

    def flip_payload(d):
        p = bytearray(base64.b64decode(d["payload"]))
        p[len(p) // 2] ^= 0x01
        d["payload"] = b64(bytes(p)).decode()

    def flip_sig(d):
        s = bytearray(base64.b64decode(d["signatures"][0]["sig"]))
        s[0] ^= 0x01
        d["signatures"][0]["sig"] = b64(bytes(s)).decode()

    def change_subject(d):
        st = json.loads(base64.b64decode(d["payload"]))
        old = st["subject"][0]["digest"]["sha256"]
        st["subject"][0]["digest"]["sha256"] = ("0" if old[0] != "0" else "1") + old[1:]
        d["payload"] = b64(json.dumps(st, separators=(",", ":")).encode()).decode()

    return [
        edited("a payload byte flipped", flip_payload),
        edited("a signature byte flipped", flip_sig),
        edited("a subject digest changed", change_subject),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("statement")
    p.add_argument("--trust", required=True)
    p.add_argument("--tampered", action="store_true")
    p.add_argument("files", nargs="*")
    a = p.parse_intermixed_args()
    with open(a.trust, "rb") as f:
        public = load_pem_public_key(f.read())
    with open(a.statement, "rb") as f:
        doc = json.load(f)
    try:
        what = check(doc, public, a.files)
    except Exception as e:  # noqa: BLE001 -- any failure is a refusal, said in one line
        print(f"verify-statement.py: {a.statement}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"verified {a.statement}: {what}")
    if a.tampered:
        for name, d in tampered(doc):
            try:
                check(d, public, a.files)
            except Exception as e:  # noqa: BLE001
                print(f"refused ({name}): {type(e).__name__}: {e}")
                continue
            print(f"verify-statement.py: {a.statement} with {name} verified", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
