//! Redaction and derivations on arbitrary bodies, header values, secrets and texts of
//! any record kind: never a panic, a bearer token never survives in the record, and
//! what `scrub_bytes` leaves is never reported by `leaks` (the two agree).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::model::{ErrorKind, Header, HttpOutcome, Observation, TransportError};
use mcp_probe_schema::testkit::http_record;
use mcp_probe_schema::{bundle, derive, redact};

const TOKEN: &str = "fuzz-bearer-token-0123456789";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fuzz_target!(|data: &[u8]| {
    let split = data.len() / 2;
    let (a, b) = data.split_at(split);
    let request = String::from_utf8_lossy(a);
    let mut r = http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
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
    let mut redactor = redact::Redactor::new();
    // The first bytes of the input as a secret the collector holds.
    redactor.add_secret(&a[..a.len().min(40)], "fuzz");
    redactor.redact_and_learn(&mut r);
    let enc = bundle::encode_record(&r);
    assert!(!contains(&enc, TOKEN.as_bytes()));

    // The token learned above, in a transport error of a later record.
    let mut later = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    if let Observation::Http(x) = &mut later.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::Protocol,
            message: format!("{request}{TOKEN}{request}"),
        });
    }
    redactor.redact_and_learn(&mut later);
    assert!(!contains(&bundle::encode_record(&later), TOKEN.as_bytes()));

    // scrub and leaks agree on arbitrary bytes.
    let mut bytes = b.to_vec();
    redactor.scrub_bytes(&mut bytes);
    assert!(!redactor.leaks(&bytes));
    let _ = redactor.scrub_str(&request);
    let _ = redact::decode_jwt(&request);
});
