//! Hostile input: opening, parsing and deriving never panic, whatever the bytes.

use std::sync::OnceLock;

use mcp_probe_schema::testkit::{http_record, sample_bundle, test_key};
use mcp_probe_schema::{derive, open, open_unverified, redact, sse, VerifyError};
use proptest::prelude::*;

#[path = "support/damage.rs"]
mod damage;
use damage::{apply, mutation, Mutation};

/// How a bundle altered after sealing may be reported: plain words, nothing else. (The
/// "signed but malformed" messages need a valid signature, which damage cannot produce.)
const DAMAGE: [&str; 5] = [
    "signature invalid: the bundle was altered or damaged after signing",
    "truncated: the file ends inside the bundle structure",
    "not a bundle: ",
    "trailing data: ",
    "malformed header: ",
];

/// What must never reach a user: decoder internals and Debug formatting.
const INTERNALS: [&str; 14] = [
    "Semantic",
    "Syntax",
    "missing field",
    "invalid type",
    "invalid value",
    "unknown variant",
    "Some(",
    "None",
    "Text(",
    "Integer(",
    "Bytes(",
    "Io(",
    "`",
    "{",
];

/// `e` is one plain line from the damage set.
fn assert_damage(e: &VerifyError, what: &str) {
    let m = e.to_string();
    assert!(
        DAMAGE.iter().any(|p| m.starts_with(p)),
        "{what}: not a damage message: {m}"
    );
    assert!(!m.contains('\n') && !m.contains('\r'), "{what}: {m:?}");
    assert!(m.chars().all(|c| !c.is_control()), "{what}: {m:?}");
    for bad in INTERNALS {
        assert!(!m.contains(bad), "{what}: {bad:?} in {m}");
    }
}

fn valid() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| sample_bundle(&test_key(1), 3, 200))
}

/// Both entry points, and their agreement: `open_unverified` fails exactly when the
/// payload cannot be read, and otherwise reports the same problem `open` does.
fn open_both(bytes: &[u8]) -> Result<(), VerifyError> {
    let verified = open(bytes, &[]);
    match open_unverified(bytes) {
        Ok(u) => {
            assert_eq!(u.problem, verified.as_ref().err().cloned());
            if let Ok(v) = &verified {
                assert_eq!(u.evidence, v.evidence);
            }
        }
        Err(e) => assert_eq!(Some(e), verified.as_ref().err().cloned()),
    }
    verified.map(|_| ())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        if let Err(e) = open_both(&bytes) {
            assert_damage(&e, "arbitrary bytes");
        }
    }

    #[test]
    fn arbitrary_bytes_behind_the_cose_tag_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let mut b = vec![0xd2, 0x84];
        b.extend(bytes);
        let e = open_both(&b).expect_err("no signature");
        assert_damage(&e, "behind the tag");
    }

    #[test]
    fn single_byte_changes_never_verify(at in any::<usize>(), mask in 1u8..=255) {
        let mut b = valid().to_vec();
        apply(&mut b, &Mutation::Flip { at, mask });
        let e = open_both(&b).expect_err("altered");
        assert_damage(&e, "one byte changed");
    }

    #[test]
    fn truncations_are_reported_as_truncated(len in any::<usize>()) {
        let b = valid();
        let len = len % b.len();
        let e = open_both(&b[..len]).expect_err("truncated");
        if len == 0 {
            prop_assert!(matches!(e, VerifyError::NotABundle(_)));
        } else {
            prop_assert_eq!(e, VerifyError::Truncated);
        }
    }

    #[test]
    fn mutated_bundles_never_panic(ms in prop::collection::vec(mutation(16, 32), 1..6)) {
        let mut b = valid().to_vec();
        for m in &ms {
            if b.is_empty() {
                break;
            }
            apply(&mut b, m);
        }
        let r = open_both(&b);
        if let Err(e) = &r {
            assert_damage(e, "mutated");
        }
        if b != valid() {
            // Insertions and deletions may in principle cancel out; anything else that
            // changed the bytes must not verify.
            if ms.iter().all(|m| matches!(m, Mutation::Flip { .. } | Mutation::Truncate { .. })) {
                prop_assert!(r.is_err());
            }
        }
    }

    #[test]
    fn sse_parse_never_panics_and_chunking_does_not_matter(
        bytes in prop::collection::vec(prop_oneof![
            Just(b'\r'), Just(b'\n'), Just(b':'), Just(b' '), Just(b'd'), Just(b'a'), Just(b't'),
            Just(0xEF), Just(0xBB), Just(0xBF), any::<u8>()
        ], 0..512),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = sse::parse(&bytes);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut p = sse::Parser::new();
        let mut events = Vec::new();
        let mut last = 0;
        for c in cuts.into_iter().chain([bytes.len()]) {
            events.extend(p.feed(&bytes[last..c]));
            last = c;
        }
        prop_assert_eq!(&events, &whole.events);
        prop_assert_eq!(p.pending(), whole.incomplete);
    }

    #[test]
    fn sse_events_carry_the_data_lines(lines in prop::collection::vec("[a-zA-Z0-9 {}\":,]{0,40}", 1..6), crlf in any::<bool>()) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = String::new();
        for l in &lines {
            text.push_str(&format!("data: {l}{nl}"));
        }
        text.push_str(nl);
        let p = sse::parse(text.as_bytes());
        prop_assert_eq!(p.events.len(), 1);
        prop_assert_eq!(&p.events[0].data, &lines.join("\n"));
        prop_assert!(!p.incomplete);
    }

    #[test]
    fn decode_jwt_never_panics(s in ".{0,200}") {
        let _ = redact::decode_jwt(&s);
    }

    #[test]
    fn decode_jwt_on_jwt_shaped_strings(a in "[A-Za-z0-9_=-]{0,60}", b in "[A-Za-z0-9_=-]{0,60}", c in "[A-Za-z0-9_.=-]{0,60}") {
        let _ = redact::decode_jwt(&format!("{a}.{b}.{c}"));
    }

    #[test]
    fn decode_jwt_roundtrips_json_objects(claims in prop::collection::btree_map("[a-z]{1,8}", "[ -~]{0,20}", 0..5)) {
        use base64::Engine;
        let enc = |v: &serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let h = serde_json::json!({"alg": "ES256", "typ": "at+jwt"});
        let c = serde_json::to_value(&claims).expect("json");
        let token = format!("{}.{}.sig", enc(&h), enc(&c));
        prop_assert_eq!(redact::decode_jwt(&token), Some((h, c)));
    }

    #[test]
    fn derivations_never_panic_on_arbitrary_bodies(
        body in prop::collection::vec(any::<u8>(), 0..512),
        request in ".{0,64}",
        sse_type in any::<bool>(),
    ) {
        let mut r = http_record(&["inventory.tools", "inventory.prompts"], "http://h/mcp", &request, 200, &body);
        if sse_type {
            if let mcp_probe_schema::Observation::Http(x) = &mut r.observation {
                if let mcp_probe_schema::HttpOutcome::Response(resp) = &mut x.outcome {
                    resp.headers[0].value = b"text/event-stream".to_vec().into();
                }
            }
        }
        let _ = derive::inventory(&[r.clone(), r.clone()]);
        let mut red = redact::Redactor::new();
        red.add_secret(&body, "x");
        red.redact(&mut r);
    }

    #[test]
    fn an_echoed_bearer_token_never_survives(
        token in "[A-Za-z0-9._~+/-]{8,64}",
        prefix in "[ -~]{0,40}",
        suffix in "[ -~]{0,40}",
    ) {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": format!("{prefix}{token}{suffix}")}});
        let mut r = http_record(&["x"], "http://h/mcp", "{}", 401, body.to_string().as_bytes());
        if let mcp_probe_schema::Observation::Http(x) = &mut r.observation {
            x.request.headers.push(mcp_probe_schema::Header::new("Authorization", format!("Bearer {token}")));
        }
        redact::Redactor::new().redact(&mut r);
        let enc = mcp_probe_schema::bundle::encode_record(&r);
        prop_assert!(!enc.windows(token.len()).any(|w| w == token.as_bytes()));
    }
}

/// Every bit of a small bundle, flipped one at a time: the message is always one plain line
/// from the damage set, from `open` and `open_unverified` alike. Every bit outside the
/// payload and signature contents is flipped (headers, CBOR heads). Inside them, where
/// each flip costs Ed25519 verifications (slow in a debug build), one bit of every 5th
/// byte, cycling through the bit positions (the proptests above add random ones); each
/// of those must read as a bad signature.
#[test]
fn every_flipped_bit_reads_as_damage_in_plain_words() {
    use coset::TaggedCborSerializable;
    let bytes = sample_bundle(&test_key(1), 1, 0);
    let sign1 = coset::CoseSign1::from_tagged_slice(&bytes).expect("cose");
    let region = |needle: &[u8]| {
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("found");
        at..at + needle.len()
    };
    let payload = region(sign1.payload.as_deref().expect("embedded"));
    let signature = region(&sign1.signature);
    let mut flips = 0;
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for at in 0..bytes.len() {
        let inside = payload.contains(&at) || signature.contains(&at);
        let bits = if !inside {
            0..8
        } else if at % 5 == 0 {
            let bit = (at / 5) % 8;
            bit..bit + 1
        } else {
            continue;
        };
        for bit in bits {
            let mut b = bytes.clone();
            b[at] ^= 1 << bit;
            let e = open_both(&b).expect_err("altered");
            assert_damage(&e, &format!("byte {at} bit {bit}"));
            if inside {
                assert_eq!(e, VerifyError::Signature, "byte {at} bit {bit}");
            }
            let shape: String = e
                .to_string()
                .chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect();
            *seen.entry(shape).or_default() += 1;
            flips += 1;
        }
    }
    assert!(flips > 8 * (bytes.len() - payload.len() - signature.len()));
    // What a reader would see, by message (shown with --nocapture).
    println!("{flips} flips of a {}-byte bundle:", bytes.len());
    for (m, n) in &seen {
        println!("{n:6}  {m}");
    }
}

#[test]
fn huge_declared_lengths_do_not_allocate_or_panic() {
    // A bstr, an array and a map that claim 2^64-1 entries, behind the COSE tag.
    for head in [0x5b_u8, 0x9b, 0xbb, 0x7b] {
        let mut b = vec![0xd2, head];
        b.extend([0xff; 8]);
        assert_eq!(
            open(&b, &[]).expect_err("huge"),
            VerifyError::Truncated,
            "major type head {head:#x}"
        );
    }
    // Inside the payload: the COSE array is fine, the payload is a bstr whose content
    // claims a huge array.
    let mut payload = vec![0x9b];
    payload.extend([0xff; 8]);
    let mut b = vec![0xd2, 0x84, 0x40, 0xa0, 0x40 | payload.len() as u8];
    b.extend(&payload);
    b.push(0x40);
    assert!(open(&b, &[]).is_err());
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    for opener in [0x81_u8, 0xa1, 0xc0] {
        let mut b = vec![0xd2];
        b.extend(std::iter::repeat_n(opener, 100_000));
        assert!(open(&b, &[]).is_err());
        assert!(open_unverified(&b).is_err());
    }
}
