//! `validate_callback` (the query of the browser's redirect to the loopback listener) on
//! arbitrary text: never a panic, and a code is only ever returned when the query carries
//! exactly our state and no `error`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_collector::oauth::validate_callback;

const STATE: &str = "st4te-0123456789";
const ISSUER: &str = "https://as.example";

fuzz_target!(|data: &[u8]| {
    let query = String::from_utf8_lossy(data);
    for iss_required in [false, true] {
        if let Ok(code) = validate_callback(&query, STATE, ISSUER, iss_required) {
            assert!(!code.is_empty());
            let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let states: Vec<&String> = pairs
                .iter()
                .filter(|(k, _)| k == "state")
                .map(|(_, v)| v)
                .collect();
            assert_eq!(states, [STATE], "{query:?}");
            assert!(!pairs.iter().any(|(k, _)| k == "error"), "{query:?}");
        }
    }
    // The state in place: the rest of the query is what the fuzzer controls.
    let with_state = format!("state={STATE}&{query}");
    let _ = validate_callback(&with_state, STATE, ISSUER, false);
});
