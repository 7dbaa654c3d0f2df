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
    let mut r = http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        &url,
        req,
        401,
        resp.as_bytes(),
    );
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

/// The header `name` of `headers`; `what` names it when it is missing.
fn header<'a>(headers: &'a [Header], name: &str, what: &str) -> &'a Header {
    headers.iter().find(|h| h.name == name).expect(what)
}

/// Whether `r` lists a redaction at `location` (of `what`, when given).
fn redacted(r: &Record, location: &str, what: Option<&str>) -> bool {
    r.redactions
        .iter()
        .any(|x| x.location == location && what.is_none_or(|w| x.what == w))
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
    let auth = header(&x.request.headers, "Authorization", "auth");
    assert_eq!(
        auth.value_str(),
        format!("Bearer {}", fingerprint(BEARER.as_bytes()))
    );
    let cookie = header(&x.request.headers, "Cookie", "cookie");
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
    let set = header(&resp.headers, "Set-Cookie", "set-cookie");
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
    assert!(redacted(&r, "response.header:X-Debug", None));
    assert!(redacted(&r, "response.body", Some("refresh_token")));
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
fn a_field_name_written_with_a_json_escape_is_still_a_field_name() {
    for (body, sse) in [
        (format!(r#"{{"access\u005ftoken":"{ACCESS}"}}"#), false),
        (format!(r#"{{"\u0061ccess_token":"{ACCESS}"}}"#), false),
        (
            format!("data: {{\"refresh\\u005Ftoken\":\"{ACCESS}\"}}\n\n"),
            true,
        ),
    ] {
        let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, body.as_bytes());
        if sse {
            if let HttpOutcome::Response(resp) = &mut http(&mut r).outcome {
                resp.headers = vec![Header::new("Content-Type", "text/event-stream")];
            }
        }
        Redactor::new().redact(&mut r);
        let enc = mcp_probe_schema::bundle::encode_record(&r);
        assert!(!contains(&enc, ACCESS.as_bytes()), "{body}");
        assert!(redacted(&r, "response.body", None), "{body}");
    }
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
    let cookie = header(&x.request.headers, "Cookie", "cookie");
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
    assert!(redacted(
        &r,
        "request.header:authorization",
        Some("bearer-token")
    ));
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

/// A 34-character token, as a `--token-env` token.
const TOKEN34: &str = "tok_3fA9-xQ7.Lm2~Zp8_Rv5-Kd1.Hs6~W";

fn holding_token() -> Redactor {
    let mut r = Redactor::new();
    r.add_secret(TOKEN34.as_bytes(), "bearer-token");
    r
}

fn encoded(r: &Record) -> Vec<u8> {
    mcp_probe_schema::bundle::encode_record(r)
}

#[test]
fn every_record_kind_and_text_field_is_redacted() {
    use mcp_probe_schema::{
        BodyEnd, DnsLookup, ErrorKind, LegacyTlsProbe, TlsHandshake, TransportError, TrustCheck,
    };
    let err = |m: &str| TransportError {
        kind: ErrorKind::Protocol,
        message: format!("{m} {TOKEN34}"),
    };
    let mut kinds = Vec::new();
    let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    r.observation = Observation::Skipped {
        reason: format!("repeated nextCursor {TOKEN34}"),
    };
    kinds.push((r.clone(), "skipped.reason"));
    let mut h = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    http(&mut h).outcome = HttpOutcome::Error(err("not HTTP:"));
    kinds.push((h.clone(), "http.outcome.error.message"));
    let mut h = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    http(&mut h).first_attempt = Some(err("reset:"));
    if let HttpOutcome::Response(resp) = &mut http(&mut h).outcome {
        resp.body.end = BodyEnd::Error(err("chunk:"));
        resp.reason = format!("Nope {TOKEN34}").into();
    }
    kinds.push((h.clone(), "http.first_attempt.message"));
    kinds.push((h.clone(), "http.outcome.response.body.end.error.message"));
    kinds.push((h, "http.outcome.response.reason"));
    r.observation = Observation::Tls(TlsHandshake {
        connection: 1,
        sni: None,
        peer: "127.0.0.1:1".into(),
        version: None,
        cipher_suite: None,
        alpn: None,
        chain: vec![],
        verification: vec![TrustCheck {
            store: "os".into(),
            ok: false,
            error: Some(format!("bad name {TOKEN34}")),
        }],
        error: Some(err("alert")),
        via_proxy: None,
        client_auth: None,
    });
    kinds.push((r.clone(), "tls.error.message"));
    kinds.push((r.clone(), "tls.verification.0.error"));
    r.observation = Observation::LegacyTls(LegacyTlsProbe {
        offered: "TLSv1_0".into(),
        client_hello: vec![0x16],
        server_bytes: format!("HTTP/1.1 400 {TOKEN34}").into_bytes(),
        error: None,
    });
    kinds.push((r.clone(), "legacy_tls.server_bytes"));
    r.observation = Observation::Dns(DnsLookup {
        host: format!("{TOKEN34}.example"),
        addresses: vec![],
        error: Some(err("nxdomain")),
    });
    kinds.push((r.clone(), "dns.host"));
    kinds.push((r, "dns.error.message"));

    let redactor = holding_token();
    let fp = fingerprint(TOKEN34.as_bytes());
    for (mut r, location) in kinds {
        redactor.redact(&mut r);
        assert!(!contains(&encoded(&r), TOKEN34.as_bytes()), "{location}");
        assert!(
            r.redactions.contains(&Redaction {
                location: location.into(),
                what: "bearer-token".into(),
                fingerprint: fp.clone(),
            }),
            "{location}: {:?}",
            r.redactions
        );
        assert!(!redactor.leaks(&encoded(&r)), "{location}");
    }
}

#[test]
fn a_field_name_in_an_error_message_is_learned_from_any_record_kind() {
    let mut redactor = Redactor::new();
    let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    r.observation = Observation::Skipped {
        reason: "token endpoint said refresh_token=rt-echoed-0123456789 is bad".into(),
    };
    redactor.redact_and_learn(&mut r);
    assert!(!contains(&encoded(&r), b"rt-echoed-0123456789"));
    // Learned: a later record of another kind is redacted of it, in another encoding.
    let mut later = http_record(&["x"], "https://h.example/mcp", "{}", 200, b"{}");
    http(&mut later).outcome = HttpOutcome::Error(mcp_probe_schema::TransportError {
        kind: mcp_probe_schema::ErrorKind::Protocol,
        message: "first bytes cnQtZWNob2VkLTAxMjM0NTY3ODk=".into(), // base64
    });
    redactor.redact_and_learn(&mut later);
    assert!(!contains(&encoded(&later), b"cnQtZWNob2VkLTAxMjM0NTY3"));
}

/// Every encoding docs/collector.md lists, each in a JSON-RPC error message of a body.
#[test]
fn every_common_encoding_is_found() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let t = TOKEN34;
    let pct_all_lower: String = t.bytes().map(|b| format!("%{b:02x}")).collect();
    // Some characters percent-encoded (either case), `~` and `_` left alone.
    let pct_tilde_kept = t.replace('.', "%2E").replace('-', "%2d");
    let json_u: String = t
        .bytes()
        .enumerate()
        .map(|(i, b)| {
            if i % 3 == 0 {
                format!("\\u{b:04X}")
            } else if i % 3 == 1 {
                format!("\\u{b:04x}")
            } else {
                (b as char).to_string()
            }
        })
        .collect();
    let forms = [
        t.to_string(),
        pct_all_lower,
        pct_tilde_kept,
        url::form_urlencoded::byte_serialize(t.as_bytes()).collect(),
        json_u,
        b64.encode(t),
        b64.encode(format!("client:{t}")),
        b64.encode(format!("ab:{t}:x")),
        b64url.encode(format!("a:{t}")),
        format!("Basic {}", b64.encode(format!("user:{t}"))),
        hex::encode(t),
        hex::encode_upper(t),
    ];
    let redactor = holding_token();
    for form in forms {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32001,"message":"bad {form}"}}}}"#
        );
        let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 401, body.as_bytes());
        redactor.redact(&mut r);
        let enc = encoded(&r);
        assert!(
            contains(&enc, fingerprint(t.as_bytes()).as_bytes()),
            "{form}"
        );
        // What is left of the form is at most the base64 edge characters.
        let left = String::from_utf8_lossy(&enc).into_owned();
        assert!(!left.contains(&form), "{form}");
        assert!(!redactor.leaks(&enc), "{form}");
        let msg: serde_json::Value = match &r.observation {
            Observation::Http(x) => match &x.outcome {
                HttpOutcome::Response(resp) => {
                    serde_json::from_slice(&resp.body.bytes).expect("JSON")
                }
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        assert_eq!(msg["error"]["code"], -32001, "{form}");
    }
    // JSON `\/` and serde's own escapes, with a secret that has them.
    let mut r2 = Redactor::new();
    r2.add_secret(br#"a/b"c\d-secret"#, "client_secret");
    assert_eq!(
        r2.scrub_str(r#"{"m":"a\/b\"c\\d-secret"}"#),
        format!(r#"{{"m":"{}"}}"#, fingerprint(br#"a/b"c\d-secret"#))
    );
}

#[test]
fn a_token_cut_by_the_body_cap_leaves_no_piece_of_eight() {
    // The stored body ends with the first 17 of the 34 characters.
    let half = &TOKEN34[..17];
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"echo {half}"#);
    let mut r = http_record(&["x"], "https://h.example/mcp", "{}", 200, body.as_bytes());
    let redactor = holding_token();
    redactor.redact(&mut r);
    let enc = encoded(&r);
    assert!(!contains(&enc, &TOKEN34.as_bytes()[..8]));
    assert!(contains(&enc, fingerprint(TOKEN34.as_bytes()).as_bytes()));
    // The last 9, percent-encoded in lower case, at the start of the next SSE event.
    let tail: String = TOKEN34[25..].bytes().map(|b| format!("%{b:02x}")).collect();
    let sse = format!("data: {{\"a\":\"x\"}}\n\ndata: {{\"b\":\"{tail}\"}}\n\n");
    assert_eq!(
        redactor.scrub_str(&sse),
        format!(
            "data: {{\"a\":\"x\"}}\n\ndata: {{\"b\":\"{}\"}}\n\n",
            fingerprint(TOKEN34.as_bytes())
        )
    );
    // Seven characters are not a piece: ordinary text is not eaten.
    assert_eq!(redactor.scrub_str(&TOKEN34[..7]), &TOKEN34[..7]);
    assert_eq!(redactor.scrub_str(&TOKEN34[27..]), &TOKEN34[27..]);
}

#[test]
fn scrub_serde_covers_every_text_and_keeps_the_shape() {
    let redactor = holding_token();
    let session = mcp_probe_schema::Session {
        endpoint: "https://h.example/mcp".into(),
        auth_required: false,
        authenticated: true,
        era: Some(mcp_probe_schema::Era::Modern),
        revision: Some("2026-07-28".into()),
        server_info: Some(
            serde_json::json!({"name": "s", "note": format!("t={TOKEN34}"), TOKEN34: 1}),
        ),
        capabilities: Some(serde_json::json!({"tools": {}})),
        session_id: Some(TOKEN34.into()),
        negotiated_in: Some(3),
        other_eras: Vec::new(),
        authorization_defaults: None,
        step_up: None,
        resource_refused_in: None,
        dpop: None,
    };
    let clean = redactor.scrub_serde(&session);
    let text = serde_json::to_string(&clean).expect("json");
    assert!(!text.contains(&TOKEN34[..8]), "{text}");
    assert_eq!(clean.session_id, Some(fingerprint(TOKEN34.as_bytes())));
    assert_eq!(clean.era, session.era);
    assert_eq!(clean.negotiated_in, Some(3));
    assert_eq!(clean.capabilities, session.capabilities);
    // Nothing to replace: the value comes back as it was.
    assert_eq!(Redactor::new().scrub_serde(&session), session);

    // A learned "secret" equal to a serde variant name cannot break the value.
    let mut odd = Redactor::new();
    odd.add_secret(b"modern", "x");
    odd.add_secret(TOKEN34.as_bytes(), "bearer-token");
    let clean = odd.scrub_serde(&session);
    assert_eq!(clean.era, session.era);
    assert_eq!(clean.session_id, Some(fingerprint(TOKEN34.as_bytes())));
}

#[test]
fn leaks_agrees_with_scrub_and_ignores_the_fingerprint() {
    let redactor = holding_token();
    let mut b = format!("x {} y", TOKEN34.replace('~', "%7e")).into_bytes();
    assert!(redactor.leaks(&b));
    assert!(redactor.scrub_bytes(&mut b));
    assert!(!redactor.leaks(&b));
    assert!(!redactor.scrub_bytes(&mut b));
    assert!(!Redactor::new().leaks(TOKEN34.as_bytes()));
    assert!(!redactor.leaks(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#));
}

/// A registration answer whose client id that shares its first 12 characters
/// with the client secret.
fn registration(client_id: &str, secret: &str) -> Record {
    let resp = format!(
        r#"{{"client_id":"{client_id}","client_secret":"{secret}","token_endpoint_auth_method":"client_secret_post"}}"#
    );
    let mut r = http_record(
        &["oauth.register"],
        "https://as.example/register",
        r#"{"client_name":"mcp-collect"}"#,
        201,
        resp.as_bytes(),
    );
    if let HttpOutcome::Response(resp) = &mut http(&mut r).outcome {
        resp.headers
            .push(Header::new("Content-Type", "application/json"));
    }
    r
}

#[test]
fn a_client_id_sharing_a_prefix_with_the_secret_is_kept_when_registered_public() {
    let (id, secret) = ("test-client-id", "test-client-secret");
    let url = format!("https://as.example/authorize?response_type=code&client_id={id}&state=s");
    // Without the client id registered as public, its `test-client-` is a cut piece of
    // the secret (the behaviour the public values prevent).
    let mut bare = Redactor::new();
    bare.add_secret(secret.as_bytes(), "client-secret");
    assert_ne!(bare.scrub_str(&url), url);

    let mut redactor = Redactor::new();
    redactor.add_public(id.as_bytes());
    redactor.add_secret(secret.as_bytes(), "client-secret");
    assert_eq!(redactor.scrub_str(&url), url);
    assert!(!redactor.leaks(url.as_bytes()));
    let mut r = registration(id, secret);
    redactor.redact_and_learn(&mut r);
    let bytes = encoded(&r);
    assert!(!contains(&bytes, secret.as_bytes()));
    assert!(contains(
        &bytes,
        format!(r#""client_id":"{id}""#).as_bytes()
    ));
    // The label `client-secret` in the record's redactions is a suffix of the secret:
    // judged by value, the record does not leak (the encoding as a whole does).
    assert!(
        !redactor.leaks_record(&r),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    // A cut piece outside the client id is still replaced, and so is the whole secret
    // inside a public value.
    assert_eq!(
        redactor.scrub_str("echo test-client-secr"),
        format!("echo {}", fingerprint(secret.as_bytes()))
    );
    let mut holder = Redactor::new();
    holder.add_public(b"x-test-client-secret-y");
    holder.add_secret(secret.as_bytes(), "client-secret");
    assert_eq!(
        holder.scrub_str("x-test-client-secret-y"),
        format!("x-{}-y", fingerprint(secret.as_bytes()))
    );
}

#[test]
fn pieces_of_a_given_secret_are_never_shielded() {
    let token = "operator-token-0123456789";
    let mut redactor = Redactor::new();
    redactor.add_given_secret(token.as_bytes(), "bearer-token");
    // A server chose a client id holding most of the operator's token.
    redactor.add_public(b"operator-token-012345-client");
    let out = redactor.scrub_str("client_id=operator-token-012345-client");
    assert!(!out.contains("operator-token-0"), "{out}");
    assert!(redactor.leaks(b"operator-token-012345-client"));
}

#[test]
fn a_secret_in_another_letter_case_is_the_secret() {
    let token = "Tok3n-AbCdEf/GhIjKl+MnOp~QrStUv";
    let fp = fingerprint(token.as_bytes());
    let mut redactor = Redactor::new();
    redactor.add_secret(token.as_bytes(), "bearer-token");
    let lower = token.to_ascii_lowercase();
    let upper = token.to_ascii_uppercase();
    let pct_lower = pct(token).to_ascii_lowercase();
    let pct_upper = pct(token).to_ascii_uppercase();
    let json_upper = token
        .bytes()
        .map(|b| format!("\\u{b:04x}"))
        .collect::<String>()
        .to_ascii_uppercase();
    let b64_lower = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .encode(token)
            .to_ascii_lowercase()
    };
    for form in [lower, upper, pct_lower, pct_upper, json_upper, b64_lower] {
        let text = format!("echo {form} end");
        let out = redactor.scrub_str(&text);
        assert!(out.contains(&fp), "{form}: {out}");
        assert!(!redactor.leaks(out.as_bytes()), "{form}: {out}");
    }
    // A cut piece in another case too.
    let cut = &token.to_ascii_lowercase()[..12];
    assert!(redactor.leaks(cut.as_bytes()));
}

/// The unattended grants' form fields are credentials by name, even when the redactor
/// was never told the value: RFC 7523's `assertion` and `client_assertion`, RFC 8693's
/// `subject_token` and `actor_token`.
#[test]
fn assertion_and_token_exchange_fields_are_redacted_by_name() {
    let (assertion, client_assertion, subject, actor) = (
        "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJlLW9mLXRoZS1hc3NlcnRpb24",
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJjbGllbnQifQ.Y2xpZW50LWFzc2VydGlvbi1zaWduYXR1cmU",
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.aWQtdG9rZW4tc2lnbmF0dXJlLWJ5dGVz",
        "actor-token-opaque-0123456789",
    );
    let form = format!(
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}\
         &client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer\
         &client_assertion={client_assertion}&subject_token={subject}&actor_token={actor}"
    );
    let mut r = http_record(
        &["oauth.token"],
        "https://as.example/token",
        &form,
        400,
        b"{}",
    );
    http(&mut r).request.headers = vec![Header::new(
        "Content-Type",
        "application/x-www-form-urlencoded",
    )];
    Redactor::new().redact(&mut r);
    let bytes = mcp_probe_schema::bundle::encode_record(&r);
    for (name, v) in [
        ("assertion", assertion),
        ("client_assertion", client_assertion),
        ("subject_token", subject),
        ("actor_token", actor),
    ] {
        assert!(!contains(&bytes, v.as_bytes()), "{name} survived");
        assert!(
            contains(&bytes, fingerprint(v.as_bytes()).as_bytes()),
            "{name} is replaced by its fingerprint"
        );
    }
    // The grant type and the assertion type are not credentials.
    assert!(contains(&bytes, b"client-assertion-type"));
}

/// RFC 9449: `Authorization: DPoP <token>` keeps its scheme and loses the token, the
/// `DPoP` proof header is replaced whole, and neither survives anywhere in the record
/// (an echo of the proof in the body included). `DPoP-Nonce` is not a credential.
#[test]
fn dpop_token_and_proof_are_fingerprinted() {
    const TOKEN: &str = "eyJ0eXAiOiJhdCtqd3QifQ.eyJjbmYiOnsiamt0IjoiYWJjIn19.dG9rZW4tc2ln";
    const PROOF: &str =
        "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2In0.eyJodG0iOiJQT1NUIn0.cHJvb2Ytc2lnbmF0dXJl";
    let req = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let resp = format!(r#"{{"error":"invalid_dpop_proof","error_description":"bad {PROOF}"}}"#);
    let mut r = http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        "https://mcp.example/mcp",
        req,
        401,
        resp.as_bytes(),
    );
    let x = http(&mut r);
    x.request
        .headers
        .push(Header::new("Authorization", format!("DPoP {TOKEN}")));
    x.request.headers.push(Header::new("DPoP", PROOF));
    if let HttpOutcome::Response(resp) = &mut x.outcome {
        resp.headers
            .push(Header::new("DPoP-Nonce", "server-nonce-0123456789"));
    }
    Redactor::new().redact(&mut r);
    let x = http(&mut r);
    let auth = header(&x.request.headers, "Authorization", "Authorization kept");
    assert_eq!(
        auth.value_str(),
        format!("DPoP {}", fingerprint(TOKEN.as_bytes()))
    );
    let proof = header(&x.request.headers, "DPoP", "DPoP kept");
    assert_eq!(proof.value_str(), fingerprint(PROOF.as_bytes()));
    assert!(redacted(
        &r,
        "request.header:Authorization",
        Some("dpop-token")
    ));
    assert!(redacted(&r, "request.header:DPoP", Some("dpop-proof")));
    let enc = mcp_probe_schema::bundle::encode_record(&r);
    assert!(!contains(&enc, TOKEN.as_bytes()));
    assert!(!contains(&enc, PROOF.as_bytes()));
    assert!(contains(&enc, b"server-nonce-0123456789"));
}

/// An authorization server that approves at once answers an authorization request with a
/// redirect carrying the code (`Location: …?code=…`), or a token in the fragment: both are
/// credentials wherever they appear, whoever's client the request was for.
#[test]
fn a_redirect_carrying_a_code_or_token_is_redacted() {
    const CODE: &str = "scratch-code-5f4e3d2c1b0a";
    const FRAG: &str = "fragment-token-0123456789";
    let mut r = http_record(
        &["3.3.5.authorize"],
        "https://as.example/authorize?response_type=code&client_id=c1",
        "",
        302,
        b"",
    );
    if let HttpOutcome::Response(resp) = &mut http(&mut r).outcome {
        resp.headers.push(Header::new(
            "Location",
            format!("http://127.0.0.1:33418/callback?code={CODE}&state=cis-probe-authorize-state"),
        ));
        resp.headers.push(Header::new(
            "Content-Location",
            format!("/cb#access_token={FRAG}&token_type=Bearer"),
        ));
    }
    let mut r2 = r.clone();
    if let HttpOutcome::Response(resp) = &mut http(&mut r2).outcome {
        resp.headers[1] = Header::new(
            "Location",
            format!("/cb#access_token={FRAG}&token_type=Bearer"),
        );
        resp.headers.remove(0);
    }
    for mut rec in [r, r2] {
        Redactor::new().redact(&mut rec);
        let bytes = mcp_probe_schema::bundle::encode_record(&rec);
        assert!(!contains(&bytes, CODE.as_bytes()), "the code survived");
        assert!(
            !contains(&bytes, FRAG.as_bytes()),
            "the fragment token survived"
        );
        // The state and the client id are not credentials.
        assert!(
            contains(&bytes, b"cis-probe-authorize-state")
                || contains(&bytes, b"token_type=Bearer")
        );
    }
}
