//! Strict verification: bundles that carry a valid Ed25519 signature (re-signed here with
//! a test key) but that a strict reader must refuse, each with its own message. Every
//! hostile bundle is built part by part ([`testkit::sign_raw`]), so that only the
//! strictness of `open` stands between it and a verdict.
//!
//! - bytes after the payload item, or after a record's item;
//! - a `crit` header parameter (RFC 9052 §3.1: we understand no critical parameter);
//! - a map key twice, in either COSE header, in the payload and in a record (two
//!   decoders would read two different bundles);
//! - a small-order or non-canonical signer key, a signature whose R is small-order
//!   (what `verify_strict` refuses);
//! - with `--trust` pins, an unpinned signer, before its payload is decoded.

use ciborium::value::Value;
use mcp_probe_schema::bundle::{self, sha256, PUBLIC_KEY_LABEL};
use mcp_probe_schema::testkit::{
    assemble, protected_header, sample_bundle, sig_structure, sign_raw, test_key,
    unprotected_header,
};
use mcp_probe_schema::{open, open_unverified, Evidence, SecretKey, VerifyError};

/// The payload bytes of a bundle as sealed by the collector's code.
fn good_payload() -> Vec<u8> {
    let bundle = sample_bundle(&test_key(1), 3, 200);
    let v = open(&bundle, &[]).expect("valid");
    let mut out = Vec::new();
    ciborium::into_writer(&v.evidence, &mut out).expect("encodes");
    out
}

fn encode(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(v, &mut out).expect("encodes");
    out
}

fn decode(b: &[u8]) -> Value {
    ciborium::from_reader(b).expect("CBOR")
}

/// `payload` signed by test key 1 with the standard headers.
fn signed(payload: &[u8]) -> Vec<u8> {
    let key = test_key(1);
    sign_raw(
        &key,
        &protected_header(&key),
        &unprotected_header(&key),
        payload,
    )
}

fn refusal(bundle: &[u8]) -> VerifyError {
    let e = open(bundle, &[]).expect_err("a strict reader refuses it");
    // Every way of verifying agrees.
    assert_eq!(
        bundle::verify(bundle, &[]).expect_err("verify refuses it"),
        e
    );
    assert_eq!(
        bundle::open_decoded(bundle, &[]).expect_err("open_decoded refuses it"),
        e
    );
    match open_unverified(bundle) {
        Ok(u) => assert_eq!(u.problem.as_ref(), Some(&e)),
        Err(u) => assert_eq!(u, e),
    }
    e
}

fn map_entries(v: &mut Value) -> &mut Vec<(Value, Value)> {
    match v {
        Value::Map(m) => m,
        other => panic!("not a map: {other:?}"),
    }
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

#[test]
fn the_plain_parts_verify() {
    // The helpers build exactly what the collector's code seals.
    let key = test_key(1);
    let payload = good_payload();
    let rebuilt = signed(&payload);
    let ev: Evidence = open(&rebuilt, &[key.public()]).expect("valid").evidence;
    assert_eq!(rebuilt, mcp_probe_schema::seal(&ev, &key));
}

#[test]
fn bytes_after_the_payload_item_are_refused() {
    let mut payload = good_payload();
    payload.push(0x00);
    let e = refusal(&signed(&payload));
    assert_eq!(
        e.to_string(),
        "signed but malformed: 1 bytes follow the payload's CBOR item"
    );
    // Several bytes, and a whole second item.
    let mut twice = good_payload();
    twice.extend(good_payload());
    assert_eq!(
        refusal(&signed(&twice)),
        VerifyError::Payload(format!(
            "{} bytes follow the payload's CBOR item",
            good_payload().len()
        ))
    );
}

/// The evidence of `payload` with its last record replaced by `bytes` (the chain head
/// follows it, so only the record itself is wrong).
fn with_last_record(bytes: Vec<u8>) -> Vec<u8> {
    let mut ev = decode(&good_payload());
    let m = map_entries(&mut ev);
    for (k, v) in m.iter_mut() {
        match (k, v) {
            (Value::Text(k), Value::Array(records)) if k == "records" => {
                *records.last_mut().expect("a record") = Value::Bytes(bytes.clone());
            }
            (Value::Text(k), v) if k == "chain_head" => {
                *v = Value::Bytes(sha256(&bytes).to_vec());
            }
            _ => {}
        }
    }
    encode(&ev)
}

fn last_record() -> Vec<u8> {
    let ev: Evidence = ciborium::from_reader(&good_payload()[..]).expect("evidence");
    ev.records.last().expect("a record").to_vec()
}

#[test]
fn bytes_after_a_record_item_are_refused() {
    // The control: the same record unchanged verifies.
    open(&signed(&with_last_record(last_record())), &[]).expect("valid");
    let mut record = last_record();
    record.extend_from_slice(&[0xf6, 0xf6]);
    // Both decoders read the first item and stop: only the strict check sees the rest.
    assert!(bundle::decode_record(&record).is_ok());
    let e = refusal(&signed(&with_last_record(record)));
    assert_eq!(
        e,
        VerifyError::Record {
            index: 2,
            detail: "2 bytes follow the record's CBOR item".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "signed but malformed: record 2: 2 bytes follow the record's CBOR item"
    );
}

#[test]
fn a_crit_header_parameter_is_refused() {
    let key = test_key(1);
    let payload = good_payload();
    // crit (label 2) listing the content type, in the protected header.
    let mut prot = decode(&protected_header(&key));
    map_entries(&mut prot).push((
        Value::Integer(2.into()),
        Value::Array(vec![Value::Integer(3.into())]),
    ));
    let e = refusal(&sign_raw(
        &key,
        &encode(&prot),
        &unprotected_header(&key),
        &payload,
    ));
    assert_eq!(
        e.to_string(),
        "malformed header: the protected header has a crit (critical parameters) entry; \
         this verifier understands no critical parameter"
    );
    // And in the unprotected header (where RFC 9052 does not even allow it).
    let mut unprot = decode(&unprotected_header(&key));
    map_entries(&mut unprot).push((Value::Integer(2.into()), Value::Array(vec![text("x")])));
    let e = refusal(&sign_raw(
        &key,
        &protected_header(&key),
        &encode(&unprot),
        &payload,
    ));
    assert_eq!(
        e,
        VerifyError::Header(
            "the unprotected header has a crit (critical parameters) entry; \
             this verifier understands no critical parameter"
                .into()
        )
    );
}

#[test]
fn a_header_label_twice_is_refused() {
    let key = test_key(1);
    let payload = good_payload();
    // alg twice: EdDSA first (what a first-copy decoder reads), ES256 last (what a
    // last-copy decoder reads).
    let mut prot = decode(&protected_header(&key));
    map_entries(&mut prot).push((Value::Integer(1.into()), Value::Integer((-7).into())));
    let e = refusal(&sign_raw(
        &key,
        &encode(&prot),
        &unprotected_header(&key),
        &payload,
    ));
    assert_eq!(
        e.to_string(),
        "malformed header: the protected header has the label 1 twice"
    );
    // The public key twice in the unprotected header (another key in the second copy).
    let mut unprot = decode(&unprotected_header(&key));
    map_entries(&mut unprot).push((
        text(PUBLIC_KEY_LABEL),
        Value::Bytes(test_key(2).public().to_bytes().to_vec()),
    ));
    let e = refusal(&sign_raw(
        &key,
        &protected_header(&key),
        &encode(&unprot),
        &payload,
    ));
    assert_eq!(
        e,
        VerifyError::Header(format!(
            "the unprotected header has the label {PUBLIC_KEY_LABEL:?} twice"
        ))
    );
    // The same label written once in shortest form and once with a one-byte length head
    // is the same key.
    let prot = protected_header(&key);
    assert_eq!(prot[0], 0xa3, "three labels");
    let mut longer = vec![0xa4];
    longer.extend_from_slice(&prot[1..]);
    longer.extend_from_slice(&[0x18, 0x03, 0x61, b'x']); // 3 (content type) as 0x18 0x03
    let e = refusal(&sign_raw(
        &key,
        &longer,
        &unprotected_header(&key),
        &payload,
    ));
    assert_eq!(
        e.to_string(),
        "malformed header: the protected header has the label 3 twice"
    );
}

#[test]
fn a_payload_key_twice_is_refused_wherever_the_map_is() {
    // Decoders do not agree on such maps: serde's derived structs refuse a known field
    // twice, but a `serde_json::Value` map (server_info, capabilities, inputs) keeps the
    // last copy, an unknown field is skipped whatever it holds, and a first-copy reader
    // sees another bundle. Shown here: ciborium decodes a payload with two
    // `server_info.name` entries without complaint.
    let mut ev = decode(&good_payload());
    for (k, v) in map_entries(&mut ev).iter_mut() {
        if matches!(k, Value::Text(k) if k == "session") {
            for (k, v) in map_entries(v).iter_mut() {
                if matches!(k, Value::Text(k) if k == "server_info") {
                    map_entries(v).push((text("name"), text("another-server")));
                }
            }
        }
    }
    let payload = encode(&ev);
    let lax: Evidence = ciborium::from_reader(&payload[..]).expect("a lax decode");
    assert_eq!(
        lax.session.and_then(|s| s.server_info),
        Some(serde_json::json!({"name": "another-server", "version": "1.0.0"}))
    );
    let e = refusal(&signed(&payload));
    assert_eq!(
        e.to_string(),
        "signed but malformed: the payload has a map with the key \"name\" twice"
    );
    // At the top level: `format` twice.
    let mut ev = decode(&good_payload());
    map_entries(&mut ev).push((text("format"), text("mcp-evidence/2")));
    assert_eq!(
        refusal(&signed(&encode(&ev))),
        VerifyError::Payload("the payload has a map with the key \"format\" twice".into())
    );
    // An unknown key twice.
    let mut ev = decode(&good_payload());
    map_entries(&mut ev).push((text("x-extra"), Value::Null));
    map_entries(&mut ev).push((text("x-extra"), Value::Bool(true)));
    assert_eq!(
        refusal(&signed(&encode(&ev))),
        VerifyError::Payload("the payload has a map with the key \"x-extra\" twice".into())
    );
}

#[test]
fn a_record_key_twice_is_refused() {
    let mut record = decode(&last_record());
    map_entries(&mut record).push((text("seq"), Value::Integer(2.into())));
    let e = refusal(&signed(&with_last_record(encode(&record))));
    assert_eq!(
        e.to_string(),
        "signed but malformed: record 2: the record has a map with the key \"seq\" twice"
    );
}

/// Ed25519's base point, encoded.
const BASE_POINT: [u8; 32] = [
    0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
];

/// The identity point, encoded (y = 1).
fn identity() -> [u8; 32] {
    let mut p = [0u8; 32];
    p[0] = 1;
    p
}

/// A protected header naming `raw` as the key (key id = its truncated SHA-256).
fn protected_for(raw: &[u8; 32]) -> Vec<u8> {
    let mut prot = decode(&protected_header(&test_key(1)));
    for (k, v) in map_entries(&mut prot).iter_mut() {
        if *k == Value::Integer(4.into()) {
            *v = Value::Bytes(sha256(raw)[..16].to_vec());
        }
    }
    encode(&prot)
}

fn unprotected_for(raw: &[u8; 32]) -> Vec<u8> {
    encode(&Value::Map(vec![(
        text(PUBLIC_KEY_LABEL),
        Value::Bytes(raw.to_vec()),
    )]))
}

#[test]
fn a_small_order_signer_key_is_refused() {
    // The identity as the public key: R = B and s = 1 satisfy the verification
    // equation [s]B = R + [k]A for every message, with no secret key at all.
    let payload = good_payload();
    let key = identity();
    let mut sig = BASE_POINT.to_vec();
    let mut s = [0u8; 32];
    s[0] = 1;
    sig.extend_from_slice(&s);
    let bundle = assemble(&protected_for(&key), &unprotected_for(&key), &payload, &sig);
    let e = refusal(&bundle);
    assert_eq!(
        e.to_string(),
        "malformed header: the signer public key is a small-order (weak) Ed25519 key"
    );
}

#[test]
fn a_non_canonical_signer_key_is_refused() {
    // y = p + n for small n: the same points as y = n, encoded out of range.
    let mut refused = 0;
    for n in 0u8..19 {
        let mut raw = [0xffu8; 32];
        raw[31] = 0x7f;
        raw[0] = 0xed + n; // p = 2^255 - 19, so p + n for n < 19
        if mcp_probe_schema::PublicKey::from_bytes(&raw).is_err() {
            continue; // not on the curve
        }
        let bundle = assemble(
            &protected_for(&raw),
            &unprotected_for(&raw),
            &good_payload(),
            &[0u8; 64],
        );
        assert_eq!(
            refusal(&bundle).to_string(),
            "malformed header: the signer public key is not in canonical encoding \
             (its y coordinate is not reduced)",
            "y = p + {n}"
        );
        refused += 1;
    }
    assert!(refused > 0, "some y = p + n is on the curve");
}

/// `bytes` (little-endian, 64 bytes) reduced modulo the group order, in the scalar type
/// of `like` (the type is not named: it lives in a crate this one reaches only through
/// ed25519-dalek).
fn reduce<S>(like: S, bytes: &[u8; 64]) -> S
where
    S: Copy + From<u64> + std::ops::Mul<Output = S> + std::ops::Add<Output = S>,
{
    let _ = like;
    bytes.iter().rev().fold(S::from(0), |acc, b| {
        acc * S::from(256) + S::from(u64::from(*b))
    })
}

#[test]
fn a_signature_with_a_small_order_r_is_refused() {
    use sha2::{Digest, Sha512};
    // With R the identity and s = k·a (k = H(R || A || M)), [s]B - [k]A is the identity:
    // the cofactorless equation holds, the strict reading refuses R.
    let seed = [1u8; 32];
    let key = SecretKey::from_seed(seed);
    let public = key.public().to_bytes();
    let payload = good_payload();
    let prot = protected_header(&key);
    let message = sig_structure(&prot, &payload);
    let r = identity();
    let h: [u8; 64] = Sha512::new()
        .chain_update(r)
        .chain_update(public)
        .chain_update(&message)
        .finalize()
        .into();
    let a = ed25519_dalek::hazmat::ExpandedSecretKey::from(&seed).scalar;
    let s = reduce(a, &h) * a;
    let mut sig = r.to_vec();
    sig.extend_from_slice(&s.to_bytes());
    // The lax (non-strict) verification accepts it.
    let vk = ed25519_dalek::VerifyingKey::from_bytes(&public).expect("a key");
    let signature = ed25519_dalek::Signature::from_slice(&sig).expect("64 bytes");
    assert!(vk.verify_strict(&message, &signature).is_err());
    use ed25519_dalek::Verifier;
    assert!(
        vk.verify(&message, &signature).is_ok(),
        "lax verify accepts it"
    );
    let bundle = assemble(&prot, &unprotected_header(&key), &payload, &sig);
    let e = refusal(&bundle);
    assert_eq!(e, VerifyError::WeakSignature);
    assert_eq!(
        e.to_string(),
        "signature refused: its R is a small-order point, which strict Ed25519 \
         verification refuses"
    );
}

#[test]
fn an_unpinned_signer_is_refused_before_its_payload_is_decoded() {
    let pinned = [test_key(1).public()];
    let other = test_key(2);
    // A payload no decoder can read (not even CBOR), signed by a key that is not pinned.
    let garbage = [0xff, 0x00, 0x1c, 0x5f];
    let bundle = sign_raw(
        &other,
        &protected_header(&other),
        &unprotected_header(&other),
        &garbage,
    );
    let untrusted = VerifyError::Untrusted {
        key_id: other.public().key_id(),
    };
    assert_eq!(open(&bundle, &pinned).unwrap_err(), untrusted);
    assert_eq!(bundle::verify(&bundle, &pinned).unwrap_err(), untrusted);
    assert_eq!(
        bundle::open_decoded(&bundle, &pinned).unwrap_err(),
        untrusted
    );
    // Without pins, the same bundle is refused for its payload.
    assert_eq!(
        open(&bundle, &[]).unwrap_err(),
        VerifyError::Payload("the payload is not one CBOR item".into())
    );
}

#[test]
fn every_example_bundle_is_strict() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
    let mut seen = 0;
    for sub in ["", "/compat"] {
        let mut stack = vec![std::path::PathBuf::from(format!("{dir}{sub}"))];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("examples") {
                let p = entry.expect("entry").path();
                if p.is_dir() && sub == "/compat" {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "mcpev") {
                    let bytes = std::fs::read(&p).expect("read");
                    open(&bytes, &[]).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    seen += 1;
                }
            }
        }
    }
    assert!(seen >= 10, "{seen} examples");
}
