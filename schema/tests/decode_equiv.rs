//! The records and payloads of bundles are decoded with cbor4ii (`bundle::decode_record`,
//! and the payload in `open`/`verify`/`decode_verified`), for speed; ciborium wrote every
//! one of them and read them before. These tests hold the new decoder to ciborium:
//!
//! * every record and payload of the example and compatibility bundles decodes to the
//!   same value with both;
//! * on thousands of damaged records and payloads, whenever both read a value it is the
//!   same value; where only one of them reads the bytes, they are bytes no collector
//!   writes (ciborium reads an integer map key as a field's index; cbor4ii does not check
//!   the UTF-8 of a text it skips, the value of a field it does not know), and the value
//!   read, written again the way every collector writes it, reads the same with the other.
//!
//! So a record any collector wrote reads the same; only bytes no collector writes (which
//! could reach the grader only signed by a trusted key) may read differently
//! (docs/bundle.md, "Decoding").

use std::sync::OnceLock;

use mcp_probe_schema::bundle::decode_record;
use mcp_probe_schema::model::{Evidence, Record};
use mcp_probe_schema::open_unverified;
use proptest::prelude::*;

#[path = "support/damage.rs"]
mod damage;
use damage::{damaged, mutation};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::bundles;

/// The encoded records and the payloads (records emptied, encoded again with ciborium as
/// the collector writes them) of every example bundle.
struct Corpus {
    records: Vec<Vec<u8>>,
    payloads: Vec<Vec<u8>>,
}

fn corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        let mut records = Vec::new();
        let mut payloads = Vec::new();
        for p in bundles() {
            let bytes = std::fs::read(&p).expect("an example bundle reads");
            let mut u = open_unverified(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            for r in std::mem::take(&mut u.evidence.records) {
                records.push(r.into_vec());
            }
            let mut payload = Vec::new();
            ciborium::into_writer(&u.evidence, &mut payload).expect("a payload encodes");
            payloads.push(payload);
        }
        assert!(records.len() > 500, "the corpus is the examples' records");
        Corpus { records, payloads }
    })
}

fn reference_record(bytes: &[u8]) -> Option<Record> {
    ciborium::from_reader(bytes).ok()
}

fn reference_payload(bytes: &[u8]) -> Option<Evidence> {
    ciborium::from_reader(bytes).ok()
}

fn fast_payload(bytes: &[u8]) -> Option<Evidence> {
    cbor4ii::serde::from_slice(bytes).ok()
}

#[test]
fn every_example_record_decodes_to_the_same_value() {
    for (n, r) in corpus().records.iter().enumerate() {
        let want = reference_record(r).expect("the reference decodes it");
        assert_eq!(decode_record(r).ok(), Some(want), "record {n}");
    }
}

#[test]
fn every_example_payload_decodes_to_the_same_value() {
    for (n, p) in corpus().payloads.iter().enumerate() {
        let want = reference_payload(p).expect("the reference decodes it");
        assert_eq!(fast_payload(p), Some(want), "payload {n}");
    }
}

#[test]
fn bytes_after_the_record_are_not_read_by_either() {
    let mut r = corpus().records[0].clone();
    let want = reference_record(&r).unwrap();
    r.extend_from_slice(&[0xff, 0x00, 0x61]);
    assert_eq!(reference_record(&r).as_ref(), Some(&want));
    assert_eq!(decode_record(&r).ok(), Some(want));
}

#[test]
fn nesting_past_the_limit_is_refused_by_both() {
    // A record whose `served`-like JSON value nests 10,000 arrays deep: both decoders
    // stop at their depth limit (256) instead of exhausting the stack.
    let mut deep = vec![0x81u8; 10_000];
    deep.push(0x00);
    assert!(reference_record(&deep).is_none());
    assert!(decode_record(&deep).is_err());
}

/// The new decoder's answer on `bytes` against ciborium's: the same value when both
/// read one; and where only one of them reads the bytes (a form no collector writes), the
/// value it read, written again the way every collector writes it, is read to the same
/// value by the other.
fn same_where_it_matters<T>(
    bytes: &[u8],
    fast: impl Fn(&[u8]) -> Option<T>,
    reference: impl Fn(&[u8]) -> Option<T>,
) -> Result<(), TestCaseError>
where
    T: serde::Serialize + PartialEq + std::fmt::Debug,
{
    let canonical = |v: &T| {
        let mut out = Vec::new();
        ciborium::into_writer(v, &mut out).expect("a value encodes");
        out
    };
    match (fast(bytes), reference(bytes)) {
        (Some(got), Some(want)) => {
            prop_assert_eq!(got, want, "the two decoders read different values")
        }
        (None, None) => {}
        (None, Some(want)) => {
            let again = fast(&canonical(&want));
            prop_assert_eq!(again.as_ref(), Some(&want), "the writer's form is refused");
        }
        (Some(got), None) => {
            let again = reference(&canonical(&got));
            prop_assert_eq!(
                again.as_ref(),
                Some(&got),
                "a value ciborium cannot read back"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn a_damaged_record_gets_the_same_answer_where_it_matters(pick in any::<usize>(), ms in prop::collection::vec(mutation(9, 9), 1..4)) {
        let r = damaged(&corpus().records, pick, &ms);
        same_where_it_matters(&r, |b| decode_record(b).ok(), reference_record)?;
    }

    #[test]
    fn a_damaged_payload_gets_the_same_answer_where_it_matters(pick in any::<usize>(), ms in prop::collection::vec(mutation(9, 9), 1..4)) {
        let p = damaged(&corpus().payloads, pick, &ms);
        same_where_it_matters(&p, fast_payload, reference_payload)?;
    }

    #[test]
    fn arbitrary_bytes_get_the_same_answer_where_it_matters(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        same_where_it_matters(&bytes, |b| decode_record(b).ok(), reference_record)?;
    }
}
