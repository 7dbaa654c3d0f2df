//! Redaction: no credential survives into the sealed bytes, in any encoding, and the
//! evidence that is not a credential is left exactly as it was.

use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::redact::{decode_jwt, Redactor};
use mcp_probe_schema::testkit::{body, evidence, http_record, test_key};
use mcp_probe_schema::{open, seal, Header, HttpOutcome, Observation, Record, Redaction};

const BEARER: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz";
const COOKIE: &str = "sid-7f3a9c1e55aa";
const SET_COOKIE: &str = "srv-session-0b1c2d3e";
const ACCESS: &str = "at_9a8b7c6d5e4f3a2b";
const REFRESH: &str = "rt_1122334455667788";
const CODE_FORM: &str = "authcode-form-ZXCVBN";
const VERIFIER: &str = "pkce-verifier-Qwertyuiop1234567890asdfghjklZXCVBNM-._~";
const CLIENT_SECRET: &str = "cl1ent/secret+with=specials&more";
const CODE_QUERY: &str = "authcode-query-ASDFGH";

fn secrets() -> [&'static str; 9] {
    [
        BEARER,
        COOKIE,
        SET_COOKIE,
        ACCESS,
        REFRESH,
        CODE_FORM,
        VERIFIER,
        CLIENT_SECRET,
        CODE_QUERY,
    ]
}

fn pct(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn http(record: &mut Record) -> &mut mcp_probe_schema::HttpExchange {
    match &mut record.observation {
        Observation::Http(x) => x,
        _ => unreachable!("an HTTP record"),
    }
}

/// The token exchange: form request with code, verifier and secret; JSON token response
/// that sets a cookie.
fn token_exchange() -> Record {
    let form = format!(
        "grant_type=authorization_code&code={}&code_verifier={}&client_secret={}&redirect_uri={}",
        pct(CODE_FORM),
        pct(VERIFIER),
        pct(CLIENT_SECRET),
        pct("http://127.0.0.1:33418/callback"),
    );
    let resp = format!(
        r#"{{"access_token":"{ACCESS}","token_type":"Bearer","expires_in":3600,"refresh_token":"{REFRESH}","scope":"mcp"}}"#
    );
    let mut r = http_record(
        &["oauth.token"],
        "https://as.example/token",
        &form,
        200,
        resp.as_bytes(),
    );
    let x = http(&mut r);
    x.request.headers = vec![Header::new(
        "Content-Type",
        "application/x-www-form-urlencoded",
    )];
    if let HttpOutcome::Response(resp) = &mut x.outcome {
        resp.headers.push(Header::new(
            "Set-Cookie",
            format!("s={SET_COOKIE}; Path=/; HttpOnly"),
        ));
    }
    r
}

/// An MCP request with a bearer token, a cookie and a code in the query string, answered
/// with a JSON-RPC error that echoes the token.
fn echoing_call() -> Record {
    let url = format!("https://mcp.example/mcp?code={CODE_QUERY}&state=abc");
    let req = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let resp = format!(
        r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32600,"message":"token {BEARER} is not valid for this resource"}}}}"#
    );
    let mut r = http_record(&["inventory.tools"], &url, req, 401, resp.as_bytes());
    let x = http(&mut r);
    x.request
        .headers
        .push(Header::new("Authorization", format!("Bearer {BEARER}")));
    x.request
        .headers
        .push(Header::new("Cookie", format!("sid={COOKIE}; theme=dark")));
    r
}

fn redacted_bundle() -> (Vec<u8>, Vec<Record>) {
    let redactor = Redactor::new();
    let mut records = vec![token_exchange(), echoing_call()];
    for r in &mut records {
        redactor.redact(r);
    }
    let bytes = seal(&evidence("https://mcp.example/mcp", records), &test_key(1));
    let opened = open(&bytes, &[]).expect("verifies").records;
    (bytes, opened)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn no_secret_survives_in_the_bundle_bytes() {
    let (bytes, _) = redacted_bundle();
    for s in secrets() {
        assert!(!contains(&bytes, s.as_bytes()), "{s} in the bundle");
        assert!(
            !contains(&bytes, pct(s).as_bytes()),
            "{} (percent-encoded) in the bundle",
            pct(s)
        );
        assert!(
            contains(&bytes, fingerprint(s.as_bytes()).as_bytes()),
            "no fingerprint of {s}"
        );
    }
    // The JWT's parts do not survive either (the signature above all).
    assert!(!contains(&bytes, b"c2lnbmF0dXJlLWJ5dGVz"));
}

#[test]
fn non_credentials_are_untouched() {
    let (bytes, records) = redacted_bundle();
    assert!(contains(&bytes, br#""code":-32600"#));
    let call = &records[1];
    let Observation::Http(x) = &call.observation else {
        panic!("http")
    };
    let HttpOutcome::Response(resp) = &x.outcome else {
        panic!("response")
    };
    let msg: serde_json::Value = serde_json::from_slice(&resp.body.bytes).expect("still JSON");
    assert_eq!(msg["error"]["code"], -32600);
    assert_eq!(msg["id"], 1);
    assert_eq!(
        msg["error"]["message"],
        format!(
            "token {} is not valid for this resource",
            fingerprint(BEARER.as_bytes())
        )
    );
    // Scheme word, cookie names and attributes, other parameters stay.
    let auth = x
        .request
        .headers
        .iter()
        .find(|h| h.name == "Authorization")
        .expect("auth");
    assert_eq!(
        auth.value_str(),
        format!("Bearer {}", fingerprint(BEARER.as_bytes()))
    );
    let cookie = x
        .request
        .headers
        .iter()
        .find(|h| h.name == "Cookie")
        .expect("cookie");
    assert_eq!(
        cookie.value_str(),
        format!(
            "sid={}; theme={}",
            fingerprint(COOKIE.as_bytes()),
            fingerprint(b"dark")
        )
    );
    assert!(x.request.url.contains("state=abc"), "{}", x.request.url);
    assert!(
        x.request
            .url
            .starts_with("https://mcp.example/mcp?code=redacted:sha256:"),
        "{}",
        x.request.url
    );

    let token = &records[0];
    let Observation::Http(x) = &token.observation else {
        panic!("http")
    };
    let form = String::from_utf8(x.request.body.bytes.clone()).expect("text");
    assert!(
        form.starts_with("grant_type=authorization_code&code=redacted:sha256:"),
        "{form}"
    );
    assert!(
        form.contains(&format!(
            "&redirect_uri={}",
            pct("http://127.0.0.1:33418/callback")
        )),
        "{form}"
    );
    let HttpOutcome::Response(resp) = &x.outcome else {
        panic!("response")
    };
    let set = resp
        .headers
        .iter()
        .find(|h| h.name == "Set-Cookie")
        .expect("set-cookie");
    assert_eq!(
        set.value_str(),
        format!("s={}; Path=/; HttpOnly", fingerprint(SET_COOKIE.as_bytes()))
    );
    let tr: serde_json::Value = serde_json::from_slice(&resp.body.bytes).expect("still JSON");
    assert_eq!(tr["expires_in"], 3600);
    assert_eq!(tr["token_type"], "Bearer");
    assert_eq!(tr["scope"], "mcp");
    assert_eq!(tr["access_token"], fingerprint(ACCESS.as_bytes()));
}

#[test]
fn each_record_lists_what_it_redacted() {
    let (_, records) = redacted_bundle();
    let has = |r: &Record, location: &str, what: &str, secret: &str| {
        let want = Redaction {
            location: location.into(),
            what: what.into(),
            fingerprint: fingerprint(secret.as_bytes()),
        };
        assert!(
            r.redactions.contains(&want),
            "missing {want:?} in {:#?}",
            r.redactions
        );
    };
    let t = &records[0];
    has(t, "request.body", "code", CODE_FORM);
    has(t, "request.body", "code_verifier", VERIFIER);
    has(t, "request.body", "client_secret", CLIENT_SECRET);
    has(t, "response.header:Set-Cookie", "cookie", SET_COOKIE);
    has(t, "response.body", "access_token", ACCESS);
    has(t, "response.body", "refresh_token", REFRESH);
    let c = &records[1];
    has(c, "request.header:Authorization", "bearer-token", BEARER);
    has(c, "request.header:Cookie", "cookie", COOKIE);
    has(c, "request.url", "code", CODE_QUERY);
    has(c, "response.body", "bearer-token", BEARER);
    // Every listed fingerprint is actually in the record.
    for r in &records {
        let enc = mcp_probe_schema::bundle::encode_record(r);
        for red in &r.redactions {
            assert!(contains(&enc, red.fingerprint.as_bytes()), "{red:?}");
        }
    }
}

#[test]
fn redaction_is_idempotent() {
    let redactor = Redactor::new();
    let mut once = echoing_call();
    redactor.redact(&mut once);
    let mut twice = once.clone();
    redactor.redact(&mut twice);
    assert_eq!(once, twice);
}

#[test]
fn known_secrets_are_replaced_everywhere_even_without_a_field_name() {
    let mut redactor = Redactor::new();
    redactor.add_secret(b"opaque-refresh-0987654321", "refresh_token");
    let mut r = http_record(
        &["x"],
        "https://h.example/mcp",
        "{}",
        500,
        b"<html>opaque-refresh-0987654321</html>",
    );
    if let HttpOutcome::Response(resp) = &mut http(&mut r).outcome {
        resp.headers
            .push(Header::new("X-Debug", "t=opaque-refresh-0987654321"));
    }
    redactor.redact(&mut r);
    let enc = mcp_probe_schema::bundle::encode_record(&r);
    assert!(!contains(&enc, b"opaque-refresh-0987654321"));
    assert!(r
        .redactions
        .iter()
        .any(|x| x.location == "response.header:X-Debug"));
    assert!(r
        .redactions
        .iter()
        .any(|x| x.location == "response.body" && x.what == "refresh_token"));
}

#[test]
fn json_escaped_and_sse_carried_tokens_are_redacted() {
    let redactor = Redactor::new();
    let sse = format!("event: message\ndata: {{\"result\":{{\"access_token\":\"{ACCESS}\"}}}}\n\n");
    let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, sse.as_bytes());
    if let HttpOutcome::Response(resp) = &mut http(&mut r).outcome {
        resp.headers = vec![Header::new("Content-Type", "text/event-stream")];
    }
    redactor.redact(&mut r);
    let enc = mcp_probe_schema::bundle::encode_record(&r);
    assert!(!contains(&enc, ACCESS.as_bytes()));

    // A secret with characters JSON escapes, echoed in a JSON string.
    let mut redactor = Redactor::new();
    redactor.add_secret(br#"se"cret\value"#, "client_secret");
    let mut r = http_record(
        &["x"],
        "https://h.example/mcp",
        "{}",
        400,
        br#"{"msg":"bad se\"cret\\value"}"#,
    );
    redactor.redact(&mut r);
    let enc = mcp_probe_schema::bundle::encode_record(&r);
    assert!(!contains(&enc, br#"se\"cret\\value"#));
}

#[test]
fn short_cookie_values_are_redacted_in_place_only() {
    // `theme=1` is a cookie value, so it is fingerprinted in the header, but the byte
    // `1` must not be replaced across the record (it is the JSON-RPC id).
    let redactor = Redactor::new();
    let req = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut r = http_record(
        &["x"],
        "https://h.example/mcp",
        req,
        200,
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    );
    http(&mut r)
        .request
        .headers
        .push(Header::new("Cookie", "theme=1"));
    let before = r.clone();
    redactor.redact(&mut r);
    let (x, b) = (
        http(&mut r).clone(),
        match &before.observation {
            Observation::Http(x) => x.clone(),
            _ => unreachable!(),
        },
    );
    assert_eq!(x.request.body, b.request.body);
    assert_eq!(x.outcome, b.outcome);
    assert_eq!(x.request.url, b.request.url);
    let cookie = x
        .request
        .headers
        .iter()
        .find(|h| h.name == "Cookie")
        .expect("cookie");
    assert_eq!(cookie.value_str(), format!("theme={}", fingerprint(b"1")));
}

#[test]
fn non_http_records_are_left_alone() {
    let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    r.observation = Observation::Skipped {
        reason: "Bearer abcdefghijkl".into(),
    };
    let before = r.clone();
    Redactor::new().redact(&mut r);
    assert_eq!(r, before);
}

#[test]
fn body_of_unknown_type_keeps_bytes_but_known_secrets_still_go() {
    let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"");
    if let Observation::Http(x) = &mut r.observation {
        x.request
            .headers
            .push(Header::new("authorization", format!("bearer {BEARER}")));
        if let HttpOutcome::Response(resp) = &mut x.outcome {
            resp.headers = vec![Header::new("Content-Type", "text/plain")];
            resp.body = body(format!("you sent {BEARER}").as_bytes());
        }
    }
    Redactor::new().redact(&mut r);
    let enc = mcp_probe_schema::bundle::encode_record(&r);
    assert!(!contains(&enc, BEARER.as_bytes()));
    // Lower-case header names and scheme words are recognised.
    assert!(r
        .redactions
        .iter()
        .any(|x| x.location == "request.header:authorization" && x.what == "bearer-token"));
}

#[test]
fn jwt_decoding_keeps_header_and_claims_only() {
    let (h, c) = decode_jwt(BEARER).expect("a JWT");
    assert_eq!(h, serde_json::json!({"alg": "RS256"}));
    assert_eq!(c, serde_json::json!({"sub": "alice"}));
    assert_eq!(decode_jwt("opaque-token"), None);
    assert_eq!(decode_jwt("a.b.c.d"), None);
    assert_eq!(decode_jwt("e30.e30"), None); // two parts: not a JWS
    assert!(decode_jwt("e30.e30.").is_some()); // `{}` and `{}` with an empty signature
    assert_eq!(decode_jwt("W10.e30.x"), None); // header `[]` is not an object
}
