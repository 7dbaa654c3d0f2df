//! The SSE parser on arbitrary bytes: never a panic, and feeding the bytes in two pieces
//! gives the same events as feeding them whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::sse;

fuzz_target!(|data: &[u8]| {
    let whole = sse::parse(data);
    let cut = data.first().map_or(0, |b| *b as usize) % (data.len() + 1);
    let mut p = sse::Parser::new();
    let mut events = p.feed(&data[..cut]);
    events.extend(p.feed(&data[cut..]));
    assert_eq!(events, whole.events);
    assert_eq!(p.pending(), whole.incomplete);
});
