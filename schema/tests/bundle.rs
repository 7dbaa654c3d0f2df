//! Sealing, opening and tampering with bundles: every region of a bundle, when altered,
//! must make `open` fail with an error that names what failed. Bytes altered after sealing
//! read as damage (header or "signature invalid"); a payload that is signed but malformed
//! (built here by re-sealing altered evidence) is named by what is wrong with it.
//!
//! Regions are located by searching the encoded bytes for values we know (decoded back
//! from the bundle or computed independently), never by hard-coded offsets.

use coset::{CborSerializable, CoseSign1, TaggedCborSerializable};
use mcp_probe_schema::bundle::{
    self, decode_record, encode_record, genesis, sha256, PemProblem, PublicKeyError,
    SecretKeyError, CONTENT_TYPE, PUBLIC_KEY_LABEL,
};
use mcp_probe_schema::testkit::{evidence, http_record, sample_bundle, test_key};
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::{
    open, open_unverified, seal, Evidence, PublicKey, SecretKey, VerifyError, FORMAT_ID,
};

const URL: &str = "http://127.0.0.1:8080/mcp";
const N: usize = 4;

/// Every start offset of `needle` in `hay`.
fn positions(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return Vec::new();
    }
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// The single offset of `needle` in `hay` (panics when absent or ambiguous).
fn find_unique(hay: &[u8], needle: &[u8]) -> usize {
    let p = positions(hay, needle);
    assert_eq!(
        p.len(),
        1,
        "expected exactly one occurrence of {:?}",
        String::from_utf8_lossy(needle)
    );
    p[0]
}

fn flipped(bytes: &[u8], at: usize) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] ^= 0x01;
    b
}

fn err_of(bytes: &[u8]) -> VerifyError {
    match open(bytes, &[]) {
        Ok(_) => panic!("a tampered bundle verified"),
        Err(e) => e,
    }
}

fn sample() -> Vec<u8> {
    sample_bundle(&test_key(1), N, 300)
}

/// The decoded payload of a (valid) bundle.
fn payload(bytes: &[u8]) -> Evidence {
    open(bytes, &[]).expect("valid").evidence
}

fn sign1(bytes: &[u8]) -> CoseSign1 {
    CoseSign1::from_tagged_slice(bytes).expect("a COSE_Sign1")
}

#[test]
fn seal_open_roundtrip() {
    let key = test_key(1);
    let records = (0..3)
        .map(|i| {
            http_record(
                &[leg::INVENTORY_TOOLS],
                URL,
                &format!(r#"{{"id":{i}}}"#),
                200,
                b"{}",
            )
        })
        .collect::<Vec<_>>();
    let ev = evidence(URL, records.clone());
    let bytes = seal(&ev, &key);
    let v = open(&bytes, &[key.public()]).expect("verifies");
    assert_eq!(v.evidence, ev);
    assert_eq!(v.signer, key.public());
    assert_eq!(v.records.len(), 3);
    for (i, (got, mut want)) in v.records.iter().zip(records).enumerate() {
        want.seq = i as u64;
        want.prev = if i == 0 {
            genesis(&ev.run.run_id).to_vec()
        } else {
            sha256(&ev.records[i - 1]).to_vec()
        };
        assert_eq!(got, &want);
        // The stored bytes are exactly the canonical encoding of the record.
        assert_eq!(encode_record(got), ev.records[i].to_vec());
    }
    assert_eq!(
        v.evidence.chain_head,
        sha256(ev.records.last().expect("records")).to_vec()
    );
    // Sealing is deterministic (Ed25519 signatures are).
    assert_eq!(seal(&ev, &key), bytes);
    // The bundle is a tagged COSE_Sign1 with the documented headers.
    let s = sign1(&bytes);
    assert_eq!(
        s.protected.header.key_id,
        hex::decode(key.public().key_id()).expect("hex")
    );
    assert_eq!(
        s.protected.header.content_type,
        Some(coset::ContentType::Text(CONTENT_TYPE.into()))
    );
    assert_eq!(bytes[0], 0xd2, "CBOR tag 18");
}

#[test]
fn empty_chain_roundtrips_with_genesis_head() {
    let key = test_key(1);
    let ev = evidence(URL, Vec::new());
    assert_eq!(ev.chain_head, genesis(&ev.run.run_id).to_vec());
    let v = open(&seal(&ev, &key), &[]).expect("verifies");
    assert!(v.records.is_empty());
}

#[test]
fn key_id_is_truncated_sha256_of_the_public_key() {
    let pk = test_key(1).public();
    assert_eq!(pk.key_id(), hex::encode(&sha256(&pk.to_bytes())[..16]));
    assert_eq!(pk.key_id().len(), 32);
}

#[test]
fn public_key_parses_from_pem_hex_and_base64() {
    use base64::Engine;
    let pk = test_key(3).public();
    assert_eq!(PublicKey::parse(pk.to_pem().as_bytes()), Ok(pk.clone()));
    assert_eq!(
        PublicKey::parse(hex::encode(pk.to_bytes()).as_bytes()),
        Ok(pk.clone())
    );
    let b64 = base64::engine::general_purpose::STANDARD.encode(pk.to_bytes());
    assert_eq!(
        PublicKey::parse(format!("{b64}\n").as_bytes()),
        Ok(pk.clone())
    );
    assert_eq!(PublicKey::parse(b"not a key"), Err(PublicKeyError::Format));
    assert_eq!(
        PublicKey::parse(&[0xff, 0xfe]),
        Err(PublicKeyError::NotText)
    );
    assert_eq!(
        PublicKey::parse(hex::encode([7u8; 31]).as_bytes()),
        Err(PublicKeyError::Length(31))
    );
    // A private key is not a public key.
    let sk_pem = test_key(3).to_pem().expect("pem");
    assert_eq!(
        PublicKey::parse(sk_pem.as_bytes()),
        Err(PublicKeyError::Pem(PemProblem::Undecodable))
    );
}

#[test]
fn key_errors_are_typed_and_worded_in_plain_words() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    // About half of all 32-byte strings are not a curve point; the first one found.
    let off_curve = (0u8..=255)
        .map(|b| PublicKey::from_bytes(&[b; 32]))
        .find(Result::is_err)
        .expect("some byte pattern is off the curve");
    assert_eq!(off_curve, Err(PublicKeyError::NotACurvePoint));
    assert_eq!(
        PublicKeyError::NotACurvePoint.to_string(),
        "not an Ed25519 public key: the 32 bytes are not a point on the curve"
    );
    // The same SPKI with the X25519 algorithm OID (1.3.101.110) instead of Ed25519's.
    let pem = test_key(3).public().to_pem();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let mut der = b64.decode(body).expect("base64");
    let at = der
        .windows(3)
        .position(|w| w == [0x2b, 0x65, 0x70])
        .expect("Ed25519 OID");
    der[at + 2] = 0x6e;
    let x25519 = format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        b64.encode(der)
    );
    let e = PublicKey::parse(x25519.as_bytes()).expect_err("not Ed25519");
    assert_eq!(e, PublicKeyError::Pem(PemProblem::OtherAlgorithm));
    assert_eq!(
        e.to_string(),
        "not an Ed25519 public key PEM: the key is for another algorithm than Ed25519"
    );
    // A public key is not a private key.
    let e = SecretKey::from_pem(&pem).expect_err("public");
    assert_eq!(e, SecretKeyError::Pem(PemProblem::Undecodable));
    assert_eq!(
        e.to_string(),
        "not an Ed25519 PKCS#8 PEM private key: the PEM or the key structure inside it does not decode"
    );
    assert_eq!(
        decode_record(&[0xff])
            .expect_err("not a record")
            .to_string(),
        bundle::RECORD_DOES_NOT_DECODE
    );
}

#[test]
fn secret_key_pem_roundtrip() {
    let k = test_key(9);
    let pem = k.to_pem().expect("pem");
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    let back = mcp_probe_schema::SecretKey::from_pem(&pem).expect("parses");
    assert_eq!(back.public(), k.public());
}

#[test]
fn every_byte_of_the_protected_header_is_covered() {
    let bytes = sample();
    let prot = sign1(&bytes)
        .protected
        .original_data
        .expect("protected bytes kept");
    let at = find_unique(&bytes, &prot);
    // Content type and key id live here, as does the algorithm.
    assert!(!positions(&prot, CONTENT_TYPE.as_bytes()).is_empty());
    for i in at..at + prot.len() {
        let e = err_of(&flipped(&bytes, i));
        assert!(
            matches!(e, VerifyError::Header(_)),
            "byte {i} of the protected header gave {e}"
        );
        assert!(e.to_string().starts_with("malformed header"), "{e}");
    }
    // The same through the bstr length of the protected header.
    let e = err_of(&flipped(&bytes, at - 1));
    assert!(!matches!(e, VerifyError::Signature), "{e}");
}

#[test]
fn content_type_and_key_id_are_named() {
    let bytes = sample();
    let at = find_unique(&bytes, CONTENT_TYPE.as_bytes());
    let e = err_of(&flipped(&bytes, at + 3));
    assert!(e.to_string().contains("content type"), "{e}");

    let kid = hex::decode(test_key(1).public().key_id()).expect("hex");
    let at = find_unique(&bytes, &kid);
    let e = err_of(&flipped(&bytes, at + 5));
    assert_eq!(
        e.to_string(),
        "malformed header: key id does not match the signer public key"
    );
}

#[test]
fn a_signer_key_accepted_before_is_still_held_to_its_key_id() {
    // The verifier keeps the signer key it last accepted; a bundle carrying that same
    // key with another key id, verified right after a good one on the same thread,
    // fails exactly as it does on its own.
    let bytes = sample();
    let kid = hex::decode(test_key(1).public().key_id()).expect("hex");
    let wrong = flipped(&bytes, find_unique(&bytes, &kid) + 5);
    let alone = std::thread::spawn({
        let wrong = wrong.clone();
        move || err_of(&wrong).to_string()
    })
    .join()
    .expect("thread");
    open(&bytes, &[]).expect("the untouched bundle verifies");
    assert_eq!(err_of(&wrong).to_string(), alone);
    assert_eq!(
        alone,
        "malformed header: key id does not match the signer public key"
    );
    // Then another signer, and the first again: each verifies.
    open(&sample_bundle(&test_key(2), N, 300), &[]).expect("a second signer verifies");
    open(&bytes, &[]).expect("the first signer verifies again");
    // A tampered key right after its untampered self is still refused.
    let pk = test_key(1).public().to_bytes();
    let at = find_unique(&bytes, &pk);
    let e = err_of(&flipped(&bytes, at + 31));
    assert!(matches!(e, VerifyError::Header(_)), "{e}");
}

#[test]
fn unprotected_public_key_tampering_is_a_header_error() {
    let bytes = sample();
    let pk = test_key(1).public().to_bytes();
    let at = find_unique(&bytes, &pk);
    for i in at..at + pk.len() {
        let e = err_of(&flipped(&bytes, i));
        assert!(
            matches!(e, VerifyError::Header(_)),
            "public key byte {} gave {e}",
            i - at
        );
    }
    // The label that carries it.
    let at = find_unique(&bytes, PUBLIC_KEY_LABEL.as_bytes());
    let e = err_of(&flipped(&bytes, at + 2));
    assert_eq!(
        e.to_string(),
        "malformed header: no signer public key in the unprotected header"
    );
}

#[test]
fn substituting_another_public_key_fails_the_key_id_or_signature() {
    // An attacker swaps in their own key but cannot change the signed kid.
    let bytes = sample();
    let pk = test_key(1).public().to_bytes();
    let other = test_key(2).public().to_bytes();
    let at = find_unique(&bytes, &pk);
    let mut b = bytes.clone();
    b[at..at + 32].copy_from_slice(&other);
    let e = err_of(&b);
    assert!(e.to_string().contains("key id does not match"), "{e}");
}

#[test]
fn payload_fields_outside_records_are_covered_by_the_signature() {
    let key = test_key(1);
    let mut ev = evidence(
        URL,
        vec![http_record(&[leg::INVENTORY_TOOLS], URL, "{}", 200, b"{}")],
    );
    ev.target.as_typed = "mcp.unique-target.example".into();
    ev.collector.build = "build-deadbeef".into();
    let bytes = seal(&ev, &key);
    // The signature is checked before anything in the payload is decoded: the run id
    // (bound into the chain genesis) and the format id read as damage too, not as a broken
    // chain or an unknown format.
    for (needle, offset) in [
        ("mcp.unique-target.example", 4),
        ("build-deadbeef", 4),
        (ev.run.run_id.as_str(), 1),
        (FORMAT_ID, FORMAT_ID.len() - 1),
    ] {
        let at = find_unique(&bytes, needle.as_bytes());
        let e = err_of(&flipped(&bytes, at + offset));
        assert_eq!(e, VerifyError::Signature, "{needle}");
        assert_eq!(
            e.to_string(),
            "signature invalid: the bundle was altered or damaged after signing"
        );
    }
}

#[test]
fn bytes_across_the_payload_read_as_damage() {
    // Sampled (Ed25519 is slow in a debug build): about 50 offsets spread over the whole
    // payload, its first and last byte included. robust.rs flips every bit outside it.
    let bytes = sample();
    let payload = sign1(&bytes).payload.expect("embedded");
    let at = find_unique(&bytes, &payload);
    let step = (payload.len() / 50).max(1);
    for i in (0..payload.len()).step_by(step).chain([payload.len() - 1]) {
        let e = err_of(&flipped(&bytes, at + i));
        assert_eq!(e, VerifyError::Signature, "payload byte {i}");
    }
}

/// Re-seal `ev` after `edit` changed it: a bundle its signer really signed.
fn resealed(edit: impl FnOnce(&mut Evidence)) -> Vec<u8> {
    let mut ev = payload(&sample());
    edit(&mut ev);
    seal(&ev, &test_key(1))
}

/// Replace record `i` with `record` re-encoded (its chain successors keep their links).
fn replace_record(ev: &mut Evidence, i: usize, record: &mcp_probe_schema::Record) {
    ev.records[i] = serde_bytes::ByteBuf::from(encode_record(record));
}

#[test]
fn a_signed_run_id_that_does_not_match_the_chain_is_named() {
    let bytes = resealed(|ev| ev.run.run_id = "another-run".into());
    let e = err_of(&bytes);
    assert_eq!(
        e.to_string(),
        "signed but malformed: chain broken at record 0: its prev is not the genesis hash of this run"
    );
}

#[test]
fn a_signed_record_changed_after_chaining_breaks_the_next_link_or_the_head() {
    for i in 0..N {
        let bytes = resealed(|ev| {
            let mut r = decode_record(&ev.records[i]).expect("decodes");
            r.legs.push("changed".into());
            replace_record(ev, i, &r);
        });
        let e = err_of(&bytes);
        if i + 1 < N {
            assert_eq!(
                e,
                VerifyError::Chain {
                    index: i + 1,
                    detail: format!("its prev does not match the hash of record {i}")
                },
                "record {i}"
            );
            assert!(
                e.to_string().starts_with(&format!(
                    "signed but malformed: chain broken at record {}",
                    i + 1
                )),
                "{e}"
            );
        } else {
            assert_eq!(e, VerifyError::ChainHead, "last record");
            assert_eq!(
                e.to_string(),
                "signed but malformed: the chain head does not match the last record"
            );
        }
    }
}

#[test]
fn each_signed_records_prev_link_is_checked() {
    for i in 0..N {
        let bytes = resealed(|ev| {
            let mut r = decode_record(&ev.records[i]).expect("decodes");
            r.prev[7] ^= 1;
            replace_record(ev, i, &r);
        });
        let e = err_of(&bytes);
        assert!(
            matches!(e, VerifyError::Chain { index, .. } if index == i),
            "record {i}: {e}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "signed but malformed: chain broken at record {i}:"
            )),
            "{e}"
        );
    }
}

#[test]
fn a_signed_record_that_does_not_decode_is_named() {
    for i in 0..N {
        let bytes = resealed(|ev| {
            // One field more in the record's map header than the record holds: the
            // bytes end inside the map.
            assert_eq!(ev.records[i][0] & 0xe0, 0xa0, "a map of a few fields");
            ev.records[i][0] += 1;
        });
        let e = err_of(&bytes);
        assert_eq!(
            e,
            VerifyError::Record {
                index: i,
                detail: bundle::RECORD_DOES_NOT_DECODE.into()
            },
            "record {i}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "signed but malformed: record {i}: the bytes do not decode as a record of this format"
            )
        );
    }
}

#[test]
fn a_record_with_the_wrong_seq_is_named() {
    let key = test_key(1);
    let mut ev = evidence(
        URL,
        vec![http_record(&[leg::INVENTORY_TOOLS], URL, "{}", 200, b"{}")],
    );
    let mut r = decode_record(&ev.records[0]).expect("decodes");
    r.seq = 5;
    let enc = encode_record(&r);
    ev.chain_head = sha256(&enc).to_vec();
    ev.records[0] = serde_bytes::ByteBuf::from(enc);
    let e = open(&seal(&ev, &key), &[]).expect_err("bad seq");
    assert_eq!(
        e.to_string(),
        "signed but malformed: record 0: its seq is 5"
    );
}

#[test]
fn removed_or_reordered_records_break_the_chain_even_when_resigned() {
    // Whoever holds the key can re-sign, but cannot drop or reorder records without the
    // chain showing it.
    let key = test_key(1);
    let ev = payload(&sample());

    let mut dropped = ev.clone();
    dropped.records.remove(1);
    let e = open(&seal(&dropped, &key), &[]).expect_err("dropped");
    assert!(matches!(e, VerifyError::Record { index: 1, .. }), "{e}"); // seq 2 at index 1

    let mut cut = ev.clone();
    cut.records.pop();
    assert_eq!(
        open(&seal(&cut, &key), &[]).expect_err("cut"),
        VerifyError::ChainHead
    );

    let mut swapped = ev.clone();
    swapped.records.swap(1, 2);
    assert!(open(&seal(&swapped, &key), &[]).is_err());
}

#[test]
fn chain_head_tampering_is_named() {
    // Altered after sealing: damage.
    let bytes = sample();
    let head = payload(&bytes).chain_head;
    let at = find_unique(&bytes, &head);
    assert_eq!(err_of(&flipped(&bytes, at + 31)), VerifyError::Signature);
    // Signed that way: a malformed payload.
    let e = err_of(&resealed(|ev| ev.chain_head[31] ^= 1));
    assert_eq!(e, VerifyError::ChainHead);
}

#[test]
fn signature_tampering_is_named() {
    let bytes = sample();
    let sig = sign1(&bytes).signature;
    assert_eq!(sig.len(), 64);
    let at = find_unique(&bytes, &sig);
    for i in [0, 1, 31, 32, 63] {
        let e = err_of(&flipped(&bytes, at + i));
        assert_eq!(e, VerifyError::Signature, "signature byte {i}");
        assert!(e.to_string().starts_with("signature invalid"), "{e}");
    }
}

#[test]
fn truncation_at_every_length() {
    let bytes = sample_bundle(&test_key(1), 2, 150);
    assert_eq!(err_of(&[]), VerifyError::NotABundle("empty file".into()));
    for len in 1..bytes.len() {
        let e = err_of(&bytes[..len]);
        assert_eq!(e, VerifyError::Truncated, "truncated to {len} bytes");
        assert_eq!(
            e.to_string(),
            "truncated: the file ends inside the bundle structure"
        );
        assert!(matches!(
            open_unverified(&bytes[..len]),
            Err(VerifyError::Truncated)
        ));
    }
}

#[test]
fn the_unsigned_container_may_use_a_longer_array_head() {
    // The COSE array around the signed parts is not itself signed: a (non-canonical)
    // two-byte head for the same four items is read the same way and still verifies.
    let bytes = sample();
    assert_eq!(&bytes[..2], &[0xd2, 0x84]);
    let mut long = vec![0xd2, 0x98, 0x04];
    long.extend_from_slice(&bytes[2..]);
    let v = open(&long, &[]).expect("verifies");
    assert_eq!(v.evidence, payload(&bytes));
    // Five items are not a COSE_Sign1.
    let mut five = vec![0xd2, 0x85];
    five.extend_from_slice(&bytes[2..]);
    five.push(0x00);
    assert!(matches!(err_of(&five), VerifyError::Header(_)));
}

#[test]
fn trailing_data_is_rejected() {
    let mut bytes = sample();
    bytes.extend_from_slice(b"\0\0\0");
    assert_eq!(err_of(&bytes), VerifyError::TrailingData(3));
    assert_eq!(
        err_of(&bytes).to_string(),
        "trailing data: 3 bytes after the end of the bundle"
    );
}

#[test]
fn things_that_are_not_bundles() {
    for junk in [
        &b"hello, this is a text file\n"[..],
        b"{\"format\":\"mcp-evidence/1\"}",
        b"\x89PNG\r\n\x1a\n",
        &[0xd3, 0x80][..], // tag 19 (COSE_Mac0) around an empty array
        &[0x80][..],       // an empty CBOR array, untagged
    ] {
        let e = err_of(junk);
        assert!(
            matches!(e, VerifyError::NotABundle(_) | VerifyError::TrailingData(_)),
            "{:?}: {e}",
            String::from_utf8_lossy(junk)
        );
    }
    assert!(err_of(b"hello").to_string().starts_with("not a bundle"));
    // A COSE_Sign1 tag around something that is not a COSE_Sign1.
    assert!(matches!(err_of(&[0xd2, 0x80]), VerifyError::Header(_)));
}

#[test]
fn resigned_with_another_key_is_valid_alone_but_untrusted_when_pinned() {
    let k1 = test_key(1);
    let k2 = test_key(2);
    let ev = payload(&sample_bundle(&k1, 2, 100));
    let resigned = seal(&ev, &k2);
    let v = open(&resigned, &[]).expect("valid alone");
    assert_eq!(v.signer, k2.public());
    let e = open(&resigned, &[k1.public()]).expect_err("pinned to k1");
    assert_eq!(
        e,
        VerifyError::Untrusted {
            key_id: k2.public().key_id()
        }
    );
    assert!(e.to_string().contains("is not trusted"), "{e}");
    assert!(e.to_string().contains(&k2.public().key_id()));
    open(&resigned, &[k1.public(), k2.public()]).expect("k2 among the pins");
}

#[test]
fn a_future_format_is_reported_as_unknown() {
    let key = test_key(1);
    let mut ev = payload(&sample_bundle(&key, 1, 100));
    ev.format = "mcp-evidence/2".into();
    let e = open(&seal(&ev, &key), &[]).expect_err("future format");
    assert_eq!(e, VerifyError::UnknownFormat("mcp-evidence/2".into()));
    assert!(
        e.to_string()
            .starts_with("unknown format \"mcp-evidence/2\""),
        "{e}"
    );
}

#[test]
fn open_unverified_reads_a_tampered_bundle_and_says_why() {
    let bytes = sample();
    let head = payload(&bytes).chain_head;
    let bad = flipped(&bytes, find_unique(&bytes, &head));
    let u = open_unverified(&bad).expect("payload still decodes");
    assert_eq!(u.problem, Some(VerifyError::Signature));
    assert_eq!(u.records.len(), N);
    assert!(u.records.iter().all(Result::is_ok));
    assert_eq!(u.signer, Some(test_key(1).public()));
    // Signed but malformed: still readable, the problem named.
    let u = open_unverified(&resealed(|ev| ev.chain_head[0] ^= 1)).expect("decodes");
    assert_eq!(u.problem, Some(VerifyError::ChainHead));
    let u = open_unverified(&resealed(|ev| ev.records[1][0] ^= 1)).expect("decodes");
    assert!(matches!(
        u.problem,
        Some(VerifyError::Record { index: 1, .. })
    ));
    assert_eq!(u.records[1], Err(bundle::RecordDecodeError));
    assert!(u.records[0].is_ok() && u.records[2].is_ok());
    // A valid bundle has no problem.
    assert_eq!(open_unverified(&bytes).expect("ok").problem, None);
    // Headers are damaged: still readable, signer unknown.
    let kid = hex::decode(test_key(1).public().key_id()).expect("hex");
    let bad = flipped(&bytes, find_unique(&bytes, &kid));
    let u = open_unverified(&bad).expect("payload still decodes");
    assert!(matches!(u.problem, Some(VerifyError::Header(_))));
    assert_eq!(u.signer, None);
}

#[test]
fn bundle_module_helpers_agree_with_the_documentation() {
    // genesis = SHA-256("mcp-evidence/1" || 0x00 || run_id)
    let mut pre = FORMAT_ID.as_bytes().to_vec();
    pre.push(0);
    pre.extend_from_slice(b"run-1");
    assert_eq!(genesis("run-1"), sha256(&pre));
    assert_eq!(
        bundle::fingerprint(b"abc"),
        format!("redacted:sha256:{}", hex::encode(sha256(b"abc")))
    );
    // The whole COSE structure re-encodes to the same bytes (nothing normalised).
    let bytes = sample();
    assert_eq!(sign1(&bytes).to_tagged_vec().expect("encodes"), bytes);
    let _ = CoseSign1::from_slice(&bytes[1..]).expect("untagged body parses");
}
