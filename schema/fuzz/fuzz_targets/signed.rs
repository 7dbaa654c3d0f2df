//! The input as a bundle's payload, signed with a fixed test key, then read every way the
//! grader reads a bundle: `verify` (the verify pass and `mcp-grade verify`), `open_decoded`
//! (grading), `decode_verified` (the second read of a bundle that verified), `open` and
//! `open_unverified` (`show`), `stamp_of` (the timestamp entries). The signature is valid,
//! so every input gets past checks 1 to 8 and reaches the strict payload walk, the split of
//! the records, the payload and record decoders and the chain check, which the `open`
//! target reaches only through a signature it cannot forge. Never a panic, and the readers
//! agree: the same error, or the same record count.
//! Seed corpus: payloads of example bundles (seeds/signed/).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::bundle::{decode_verified, open_decoded, verify};
use mcp_probe_schema::testkit::{protected_header, sign_raw, test_key, unprotected_header};
use mcp_probe_schema::{open, open_unverified, tsp};

fuzz_target!(|data: &[u8]| {
    let key = test_key(1);
    let bundle = sign_raw(
        &key,
        &protected_header(&key),
        &unprotected_header(&key),
        data,
    );
    let pins = [key.public()];
    let opened = open(&bundle, &pins);
    let checked = verify(&bundle, &pins);
    let decoded = open_decoded(&bundle, &pins);
    match (&opened, &checked, &decoded) {
        (Ok(o), Ok(c), Ok(d)) => {
            assert_eq!(o.records.len(), c.records);
            assert_eq!(o.records, d.records);
            let again = decode_verified(&bundle).expect("a verified bundle decodes");
            assert_eq!(again.records, o.records);
        }
        (Err(o), Err(c), Err(d)) => {
            assert_eq!(o, c);
            assert_eq!(o, d);
        }
        _ => panic!("the readers disagree: {opened:?} / {checked:?} / {decoded:?}"),
    }
    match open_unverified(&bundle) {
        Ok(u) => assert_eq!(u.problem, opened.as_ref().err().cloned()),
        Err(e) => assert_eq!(Some(e), opened.err()),
    }
    let _ = tsp::stamp_of(&bundle);
    // Signed by a key outside the pins: refused before the payload is read.
    let other = test_key(2);
    let foreign = sign_raw(
        &other,
        &protected_header(&other),
        &unprotected_header(&other),
        data,
    );
    assert!(matches!(
        verify(&foreign, &pins),
        Err(mcp_probe_schema::VerifyError::Untrusted { .. })
    ));
});
