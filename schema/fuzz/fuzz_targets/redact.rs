//! Redaction and derivations on arbitrary bodies and header values: never a panic, and a
//! bearer token never survives in the record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::model::{Header, HttpOutcome, Observation};
use mcp_probe_schema::testkit::http_record;
use mcp_probe_schema::{bundle, derive, redact};

const TOKEN: &str = "fuzz-bearer-token-0123456789";

fuzz_target!(|data: &[u8]| {
    let split = data.len() / 2;
    let (a, b) = data.split_at(split);
    let request = String::from_utf8_lossy(a);
    let mut r = http_record(
        &["inventory.tools"],
        "https://h.example/mcp?code=abcdefgh",
        &request,
        200,
        b,
    );
    if let Observation::Http(x) = &mut r.observation {
        x.request
            .headers
            .push(Header::new("Authorization", format!("Bearer {TOKEN}")));
        x.request.headers.push(Header::new("Cookie", a.to_vec()));
        if let HttpOutcome::Response(resp) = &mut x.outcome {
            resp.headers.push(Header::new("Set-Cookie", b.to_vec()));
            let mut echoed = b.to_vec();
            echoed.extend_from_slice(TOKEN.as_bytes());
            resp.body.bytes = echoed;
        }
    }
    let _ = derive::inventory(std::slice::from_ref(&r));
    redact::Redactor::new().redact(&mut r);
    let enc = bundle::encode_record(&r);
    assert!(!enc.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()));
    let _ = redact::decode_jwt(&request);
});
