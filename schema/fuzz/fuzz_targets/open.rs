//! `open` and `open_unverified` on arbitrary bytes: never a panic, and the two agree.
//! Seeded with a real bundle (seeds/open/, scripts/fuzz.sh) so the
//! fuzzer mutates structure that already parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::{open, open_unverified};

fuzz_target!(|data: &[u8]| {
    let verified = open(data, &[]);
    match open_unverified(data) {
        Ok(u) => assert_eq!(u.problem, verified.as_ref().err().cloned()),
        Err(e) => assert_eq!(Some(e), verified.err()),
    }
});
