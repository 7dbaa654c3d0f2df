//! `mcp_probe_schema::www_authenticate::parse` on arbitrary bytes: never a panic; the
//! accessors the discovery code uses work on whatever either reading returns; and a
//! `Bearer` challenge with a quoted `resource_metadata` appended after a comma is still
//! read, as the last challenge of the lenient reading, whatever came before (asserted
//! when the fuzzed prefix holds no `"`, which could leave a quoted string open).
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
    let last = www_authenticate::parse(&joined).challenges.pop();
    // Without a `"` the prefix cannot leave a quoted string open to swallow the comma,
    // and every other element of the lenient reading ends at a comma.
    if !data.contains(&b'"') {
        let last = last.expect("the appended challenge is read");
        assert!(last.is_bearer(), "{last:?}");
        assert_eq!(
            last.resource_metadata(),
            Some("https://x.example/prm"),
            "{last:?}"
        );
    }
});
