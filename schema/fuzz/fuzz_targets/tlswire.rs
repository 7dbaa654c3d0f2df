//! The legacy-TLS answer parser on arbitrary bytes: never a panic, and every proper
//! prefix of bytes that parse to a complete answer (other than "not TLS") is either the
//! same answer or not yet complete, so the collector's read-until-complete loop never
//! stops on a different answer than the full bytes give.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::tlswire::{parse_client_hello, parse_server, ServerAnswer};

fuzz_target!(|data: &[u8]| {
    let whole = parse_server(data);
    let _ = whole.to_string();
    let _ = parse_client_hello(data);
    if whole.is_complete() && !matches!(whole, ServerAnswer::NotTls { .. }) {
        for cut in 1..data.len() {
            let a = parse_server(&data[..cut]);
            if a.is_complete() {
                assert_eq!(a, whole, "prefix {cut} decided differently");
                break;
            }
        }
    }
});
