//! `bundle::decode_record` reads the records collectors write with a hand-written decoder
//! (`record_decode`) and leaves every other input to the serde decoder
//! (`bundle::decode_record_reference`, cbor4ii). These tests hold the two to the same
//! answer, value or error:
//!
//! * every record of the example and compatibility bundles, which the hand-written
//!   decoder must read itself when it is one of the kinds it knows;
//! * generated records of those kinds, as ciborium writes them;
//! * the same records written in every other form CBOR allows for them (longer heads,
//!   indefinite lengths, chunked strings, `undefined` for `null`, keys in another order,
//!   a key twice, a key unknown, a field left out), then damaged;
//! * damaged example records and arbitrary bytes.
//!
//! And where the hand-written decoder reads a record to its last byte, the strict walk
//! of the verifier finds nothing wrong with it (what lets the verifier skip that walk for
//! such records: `bundle::strict_decoded_record`), on all of the above.

use std::sync::OnceLock;

use ciborium::Value;
use mcp_probe_schema::bundle::{decode_record, decode_record_reference, encode_record};
use mcp_probe_schema::connectivity::ClientAuth;
use mcp_probe_schema::model::*;
use mcp_probe_schema::open_unverified;
use mcp_probe_schema::record_decode;
use mcp_probe_schema::testkit;
use proptest::prelude::*;

#[path = "support/damage.rs"]
mod damage;
use damage::{apply, damaged, mutation, Mutation};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::bundles;

/// The encoded records of every example bundle.
fn corpus() -> &'static [Vec<u8>] {
    static C: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    C.get_or_init(|| {
        let mut records = Vec::new();
        for p in bundles() {
            let bytes = std::fs::read(&p).expect("an example bundle reads");
            let mut u = open_unverified(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            for r in std::mem::take(&mut u.evidence.records) {
                records.push(r.into_vec());
            }
        }
        assert!(records.len() > 500, "the corpus is the examples' records");
        records
    })
}

/// Whether the hand-written decoder knows the record's kind (and so must read it when it
/// is written as collectors write it).
fn known_kind(r: &Record) -> bool {
    match &r.observation {
        Observation::Http(x) => x.refused.is_none(),
        Observation::Skipped { .. }
        | Observation::Dns(_)
        | Observation::Tls(_)
        | Observation::LegacyTls(_) => true,
        _ => false,
    }
}

/// The answer of `decode_record` is the reference decoder's, value or error; and when the
/// hand-written decoder reads the bytes, its value is the reference's.
fn same_answer(bytes: &[u8]) -> Result<(), TestCaseError> {
    let want = decode_record_reference(bytes);
    prop_assert_eq!(decode_record(bytes), want.clone());
    if let Some((got, end)) = record_decode::record(bytes) {
        prop_assert_eq!(Ok(got), want, "the hand-written decoder read another value");
        if end == bytes.len() {
            prop_assert_eq!(
                testkit::strict_record(bytes),
                Ok(()),
                "read by hand to its end, yet not strict"
            );
        }
    }
    Ok(())
}

#[test]
fn every_example_record_reads_the_same_and_the_known_kinds_by_hand() {
    let mut by_hand = 0;
    for (n, r) in corpus().iter().enumerate() {
        let want = decode_record_reference(r).unwrap_or_else(|e| panic!("record {n}: {e}"));
        assert_eq!(decode_record(r).as_ref(), Ok(&want), "record {n}");
        match record_decode::record(r) {
            Some((got, end)) => {
                assert_eq!(got, want, "record {n}");
                assert_eq!(end, r.len(), "record {n} is read to its end");
                assert_eq!(testkit::strict_record(r), Ok(()), "record {n} is strict");
                by_hand += 1;
            }
            None => assert!(
                !known_kind(&want),
                "record {n} is of a kind the hand-written decoder reads: {:?}",
                want.observation
            ),
        }
    }
    assert!(
        by_hand * 10 > corpus().len() * 9,
        "most example records ({by_hand} of {}) are read by hand",
        corpus().len()
    );
}

// ---------------------------------------------------------------------------------------
// Generated records.

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,6}",
        "[ -~]{0,40}",
        any::<String>().prop_map(|s| s.chars().take(30).collect()),
        "[a-z]{24,300}",
    ]
}

/// A header name, method, version or reason phrase: any text, or one of the values the
/// decoder answers without allocating, or one of them in another case.
fn wire_text() -> impl Strategy<Value = WireText> {
    prop_oneof![
        text(),
        prop::sample::select(vec![
            "Content-Type",
            "content-type",
            "Content-type",
            "HTTP/1.1",
            "http/1.1",
            "GET",
            "get",
            "OK",
            "Method Not Allowed",
            "MCP-Protocol-Version",
        ])
        .prop_map(str::to_string),
    ]
    .prop_map(WireText::from)
}

/// A header value: any bytes, or one of the values the decoder answers without
/// allocating, or one of them in another case.
fn wire_bytes() -> impl Strategy<Value = WireBytes> {
    prop_oneof![
        bytes(),
        prop::sample::select(vec![
            "application/json",
            "Application/json",
            "keep-alive",
            "Keep-Alive",
            "2025-11-25",
            "0",
            concat!("mcp-collect/", env!("CARGO_PKG_VERSION")),
            "mcp-collect/0.0.0",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
    ]
    .prop_map(WireBytes::from)
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 250..300),
    ]
}

fn uint() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..24,
        24u64..256,
        256u64..65_536,
        65_536u64..(1 << 32),
        any::<u64>()
    ]
}

fn error_kind() -> impl Strategy<Value = ErrorKind> {
    prop_oneof![
        Just(ErrorKind::Dns),
        Just(ErrorKind::Connect),
        Just(ErrorKind::Timeout),
        Just(ErrorKind::TlsAlert),
        Just(ErrorKind::TlsCertificate),
        Just(ErrorKind::Tls),
        Just(ErrorKind::Reset),
        Just(ErrorKind::Protocol),
        Just(ErrorKind::RefusedByGuard),
        Just(ErrorKind::Io),
        Just(ErrorKind::Proxy),
    ]
}

fn transport_error() -> BoxedStrategy<TransportError> {
    (error_kind(), text())
        .prop_map(|(kind, message)| TransportError { kind, message })
        .boxed()
}

fn header() -> BoxedStrategy<Header> {
    (wire_text(), wire_bytes())
        .prop_map(|(name, value)| Header { name, value })
        .boxed()
}

fn body() -> BoxedStrategy<Body> {
    let end = prop_oneof![
        Just(BodyEnd::Complete),
        Just(BodyEnd::StoppedAfterResponse),
        Just(BodyEnd::LimitReached),
        Just(BodyEnd::HeadOnly),
        transport_error().prop_map(BodyEnd::Error),
    ];
    (bytes(), uint(), bytes(), end)
        .prop_map(|(bytes, length, sha256, end)| Body {
            bytes,
            length,
            sha256,
            end,
        })
        .boxed()
}

fn exchange() -> BoxedStrategy<HttpExchange> {
    let request = (
        wire_text(),
        text(),
        wire_text(),
        prop::collection::vec(header(), 0..6),
        body(),
    )
        .prop_map(|(method, url, version, headers, body)| HttpRequest {
            method,
            url,
            version,
            headers,
            body,
        });
    let response = (
        wire_text(),
        any::<u16>(),
        wire_text(),
        prop::collection::vec(header(), 0..6),
        body(),
        prop_oneof![Just(0u32), any::<u32>()],
    )
        .prop_map(
            |(version, status, reason, headers, body, interim)| HttpResponse {
                version,
                status,
                reason,
                headers,
                body,
                interim,
            },
        );
    let outcome = prop_oneof![
        response.prop_map(HttpOutcome::Response),
        transport_error().prop_map(HttpOutcome::Error),
    ];
    (
        request,
        outcome,
        prop::option::of(uint()),
        prop::option::of(transport_error()),
    )
        .prop_map(
            |(request, outcome, connection, first_attempt)| HttpExchange {
                request,
                outcome,
                connection,
                first_attempt,
                refused: None,
            },
        )
        .boxed()
}

fn tls() -> BoxedStrategy<TlsHandshake> {
    let check = (text(), any::<bool>(), prop::option::of(text()))
        .prop_map(|(store, ok, error)| TrustCheck { store, ok, error });
    (
        (
            uint(),
            prop::option::of(text()),
            text(),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(bytes()),
        ),
        (
            prop::collection::vec(bytes().prop_map(serde_bytes::ByteBuf::from), 0..3),
            prop::collection::vec(check, 0..3),
            prop::option::of(transport_error()),
            prop::option::of(text()),
            prop::option::of(prop::option::of(text()).prop_map(|sent| ClientAuth { sent })),
        ),
    )
        .prop_map(
            |(
                (connection, sni, peer, version, cipher_suite, alpn),
                (chain, verification, error, via_proxy, client_auth),
            )| TlsHandshake {
                connection,
                sni,
                peer,
                version,
                cipher_suite,
                alpn,
                chain,
                verification,
                error,
                via_proxy,
                client_auth,
            },
        )
        .boxed()
}

fn observation() -> BoxedStrategy<Observation> {
    prop_oneof![
        4 => exchange().prop_map(Observation::Http),
        1 => text().prop_map(|reason| Observation::Skipped { reason }),
        1 => (text(), prop::collection::vec(text(), 0..3), prop::option::of(transport_error()))
            .prop_map(|(host, addresses, error)| Observation::Dns(DnsLookup { host, addresses, error })),
        1 => tls().prop_map(Observation::Tls),
        1 => (text(), bytes(), bytes(), prop::option::of(transport_error())).prop_map(
            |(offered, client_hello, server_bytes, error)| Observation::LegacyTls(LegacyTlsProbe {
                offered,
                client_hello,
                server_bytes,
                error,
            })
        ),
    ]
        .boxed()
}

fn record() -> BoxedStrategy<Record> {
    let redaction = (text(), text(), text()).prop_map(|(location, what, fingerprint)| Redaction {
        location,
        what,
        fingerprint,
    });
    (
        uint(),
        prop::collection::vec(text(), 0..3),
        prop_oneof![any::<i64>(), -30i64..30],
        uint(),
        bytes(),
        observation(),
        prop::collection::vec(redaction, 0..3),
    )
        .prop_map(
            |(seq, legs, started_at, duration_us, prev, observation, redactions)| Record {
                seq,
                legs,
                started_at,
                duration_us,
                prev,
                observation,
                redactions,
            },
        )
        .boxed()
}

// ---------------------------------------------------------------------------------------
// The same values in other CBOR forms.

/// How one item is written again ([`rewrite`]), chosen per item from a stream of choices.
/// `kinds` says which kinds of other forms are written at all (one kind alone half the
/// time, so that a record often differs from the writer's form in one way only and the
/// hand-written decoder's answer on it is tested).
struct Forms<'a> {
    choices: &'a [u8],
    next: usize,
    kinds: u8,
}

/// The kinds of other forms ([`Forms::kinds`]).
const WIDE_HEAD: u8 = 1;
const INDEFINITE: u8 = 2;
const CHUNKED: u8 = 4;
const UNDEFINED: u8 = 8;
const MAP_EDIT: u8 = 16;

impl Forms<'_> {
    fn new(choices: &[u8]) -> Forms<'_> {
        let first = choices.first().copied().unwrap_or(0);
        let kinds = if first & 0x80 == 0 {
            1 << (first % 5)
        } else {
            first & 0x1f
        };
        Forms {
            choices,
            next: 1,
            kinds,
        }
    }

    fn pick(&mut self, n: u8) -> u8 {
        let c = self.choices.get(self.next).copied().unwrap_or(1);
        self.next += 1;
        c % n
    }

    /// Whether this item is written in a form of `kind`: one time in `n` when the kind
    /// is on.
    fn chance(&mut self, kind: u8, n: u8) -> bool {
        self.kinds & kind != 0 && self.pick(n) == 0
    }
}

/// A head of major type `major` with argument `arg`, in the shortest form or (by `f`) a
/// longer one.
fn head(out: &mut Vec<u8>, major: u8, arg: u64, f: &mut Forms<'_>) {
    let shortest = match arg {
        0..=23 => 0,
        24..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 3,
        _ => 4,
    };
    // Mostly the shortest form; sometimes one of the longer ones.
    let width = if f.chance(WIDE_HEAD, 4) {
        shortest + f.pick(5 - shortest)
    } else {
        shortest
    };
    let m = major << 5;
    match width {
        0 => out.push(m | arg as u8),
        1 => out.extend([m | 24, arg as u8]),
        2 => {
            out.push(m | 25);
            out.extend((arg as u16).to_be_bytes());
        }
        3 => {
            out.push(m | 26);
            out.extend((arg as u32).to_be_bytes());
        }
        _ => {
            out.push(m | 27);
            out.extend(arg.to_be_bytes());
        }
    }
}

/// `v` written again with forms chosen by `f`: longer heads, indefinite lengths, chunked
/// strings, `undefined` for `null`, map entries in another order, an entry twice, an
/// entry left out, an unknown entry.
fn rewrite(out: &mut Vec<u8>, v: &Value, f: &mut Forms<'_>) {
    match v {
        Value::Integer(i) => {
            let i = i128::from(*i);
            if i >= 0 {
                head(out, 0, i as u64, f);
            } else {
                head(out, 1, (-1 - i) as u64, f);
            }
        }
        Value::Bytes(b) => string(out, 2, b, f),
        Value::Text(t) => string(out, 3, t.as_bytes(), f),
        Value::Bool(b) => out.push(if *b { 0xf5 } else { 0xf4 }),
        Value::Null => out.push(if f.chance(UNDEFINED, 2) { 0xf7 } else { 0xf6 }),
        Value::Array(items) => {
            let indefinite = f.chance(INDEFINITE, 4);
            if indefinite {
                out.push(0x9f);
            } else {
                head(out, 4, items.len() as u64, f);
            }
            for x in items {
                rewrite(out, x, f);
            }
            if indefinite {
                out.push(0xff);
            }
        }
        Value::Map(entries) => {
            let mut entries: Vec<(Value, Value)> = entries.clone();
            match if f.chance(MAP_EDIT, 6) { f.pick(5) } else { 5 } {
                0 if entries.len() > 1 => {
                    let a = usize::from(f.pick(255)) % entries.len();
                    let b = usize::from(f.pick(255)) % entries.len();
                    entries.swap(a, b);
                }
                1 if !entries.is_empty() => {
                    let a = usize::from(f.pick(255)) % entries.len();
                    entries.push(entries[a].clone());
                }
                2 if !entries.is_empty() => {
                    let a = usize::from(f.pick(255)) % entries.len();
                    entries.remove(a);
                }
                3 => entries.push((Value::Text("unknown".into()), Value::Integer(1.into()))),
                4 if !entries.is_empty() => {
                    // A key as bytes, or as an integer (a field's index to ciborium).
                    let a = usize::from(f.pick(255)) % entries.len();
                    entries[a].0 = match &entries[a].0 {
                        Value::Text(t) => Value::Bytes(t.clone().into_bytes()),
                        _ => Value::Integer(0.into()),
                    };
                }
                _ => {}
            }
            let indefinite = f.chance(INDEFINITE, 4);
            if indefinite {
                out.push(0xbf);
            } else {
                head(out, 5, entries.len() as u64, f);
            }
            for (k, x) in &entries {
                rewrite(out, k, f);
                rewrite(out, x, f);
            }
            if indefinite {
                out.push(0xff);
            }
        }
        Value::Tag(t, x) => {
            head(out, 6, *t, f);
            rewrite(out, x, f);
        }
        Value::Float(x) => {
            out.push(0xfb);
            out.extend(x.to_be_bytes());
        }
        _ => {
            let mut b = Vec::new();
            ciborium::into_writer(v, &mut b).expect("a value encodes");
            out.extend(b);
        }
    }
}

fn string(out: &mut Vec<u8>, major: u8, content: &[u8], f: &mut Forms<'_>) {
    if f.chance(CHUNKED, 4) {
        // Chunked: an indefinite-length string of two definite chunks.
        out.push((major << 5) | 31);
        let cut = content.len() / 2;
        for part in [&content[..cut], &content[cut..]] {
            head(out, major, part.len() as u64, f);
            out.extend_from_slice(part);
        }
        out.push(0xff);
    } else {
        head(out, major, content.len() as u64, f);
        out.extend_from_slice(content);
    }
}

fn rewritten(record: &Record, choices: &[u8]) -> Vec<u8> {
    let v: Value = ciborium::from_reader(encode_record(record).as_slice()).expect("reads back");
    let mut out = Vec::new();
    rewrite(&mut out, &v, &mut Forms::new(choices));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn a_generated_record_is_read_by_hand_to_its_value(r in record()) {
        let bytes = encode_record(&r);
        prop_assert_eq!(decode_record_reference(&bytes), Ok(r.clone()));
        prop_assert_eq!(record_decode::record(&bytes), Some((r.clone(), bytes.len())));
        prop_assert_eq!(testkit::strict_record(&bytes), Ok(()));
        prop_assert_eq!(decode_record(&bytes), Ok(r));
    }

    #[test]
    fn a_record_in_other_forms_gets_the_same_answer(r in record(), choices in prop::collection::vec(any::<u8>(), 0..1000)) {
        same_answer(&rewritten(&r, &choices))?;
    }

    #[test]
    fn a_damaged_record_in_other_forms_gets_the_same_answer(
        r in record(),
        choices in prop::collection::vec(any::<u8>(), 0..1000),
        ms in prop::collection::vec(mutation(9, 9), 1..4),
    ) {
        let mut b = rewritten(&r, &choices);
        for m in &ms {
            if !b.is_empty() {
                apply(&mut b, m);
            }
        }
        same_answer(&b)?;
    }

    #[test]
    fn a_damaged_example_record_gets_the_same_answer(pick in any::<usize>(), ms in prop::collection::vec(mutation(9, 9), 1..4)) {
        same_answer(&damaged(corpus(), pick, &ms))?;
    }

    #[test]
    fn arbitrary_bytes_get_the_same_answer(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        same_answer(&bytes)?;
    }
}

/// Every example record with each of its bytes flipped in turn to each value of a few
/// masks: the two decoders agree on all of them.
#[test]
fn every_single_byte_change_of_some_example_records_gets_the_same_answer() {
    let records = corpus();
    for r in records.iter().step_by(records.len() / 12) {
        for at in 0..r.len() {
            for mask in [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff] {
                let mut b = r.clone();
                apply(&mut b, &Mutation::Flip { at, mask });
                same_answer(&b).unwrap_or_else(|e| panic!("byte {at} ^ {mask:#x}: {e}"));
            }
        }
    }
}
