//! Property test of the redactor: a random secret, written in a random encoding, put in
//! a random place of a record (or cut there), never survives `redact_and_learn` plus
//! `encode_record` in any encoding, nor `scrub_str` / `scrub_json` / `scrub_serde`; and
//! a record without the secret is left exactly as it was. The echo may also have changed
//! the letter case of what it wrote (lower, upper, mixed; inside percent-encoding and
//! JSON escapes too), and the oracle ignores case. Client ids and states that share
//! prefixes and suffixes with the client secret, registered as public values, stay
//! intact where the secret goes.
//!
//! The oracle is written here, independently of the redactor: for every encoding
//! family it encodes the secret's first 8 and last 8 bytes (any longer prefix or suffix,
//! and the whole secret, contains one of those, encoded), the stable middle of its
//! base64 and base64url forms at each byte phase, and its hex in both cases, and looks
//! for each of them in the output bytes.
//!
//! Runs 384 cases (`cases()`; about 10 s in a debug build on a 2-core machine); set
//! `PROPTEST_CASES` to run more or fewer.

use base64::Engine as _;
use mcp_probe_schema::bundle::{encode_record, fingerprint};
use mcp_probe_schema::model::*;
use mcp_probe_schema::redact::Redactor;
use mcp_probe_schema::testkit::{body, http_record};
use proptest::prelude::*;

const MAX_LEN: usize = 80;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(384)
}

/// How the server wrote the secret.
#[derive(Debug, Clone)]
enum Enc {
    Raw,
    /// Percent-encoding: a byte is encoded when `mask` says so (and `%` always), in
    /// upper case where `upper` says so.
    Pct {
        mask: Vec<bool>,
        upper: Vec<bool>,
    },
    /// `application/x-www-form-urlencoded`.
    Form,
    /// A JSON string body: serde's escapes, plus `\u00XX` where `mask` says so (hex in
    /// upper case where `upper` says so), and `/` as `\/` when `slash`.
    Json {
        mask: Vec<bool>,
        upper: Vec<bool>,
        slash: bool,
    },
    /// base64 of `lead + secret + tail`.
    Base64 {
        url: bool,
        pad: bool,
        lead: String,
        tail: String,
    },
    /// `Basic base64(user:secret)`.
    Basic {
        user: String,
    },
    Hex {
        upper: bool,
    },
}

impl Enc {
    /// True for encodings that write the secret byte by byte, so that a cut piece of
    /// the encoded form is the encoding of a piece of the secret.
    fn bytewise(&self) -> bool {
        matches!(
            self,
            Enc::Raw | Enc::Pct { .. } | Enc::Form | Enc::Json { .. }
        )
    }

    /// The encoding of `secret[range]` (masks indexed by position in the secret).
    fn piece(&self, secret: &[u8], range: std::ops::Range<usize>) -> String {
        let mut out = String::new();
        for i in range.clone() {
            let b = secret[i];
            match self {
                Enc::Raw => out.push(b as char),
                Enc::Pct { mask, upper } => {
                    if mask[i] || b == b'%' {
                        out.push_str(&if upper[i] {
                            format!("%{b:02X}")
                        } else {
                            format!("%{b:02x}")
                        });
                    } else {
                        out.push(b as char);
                    }
                }
                Enc::Form => out.extend(url::form_urlencoded::byte_serialize(&[b])),
                Enc::Json { mask, upper, slash } => {
                    if mask[i] {
                        out.push_str(&if upper[i] {
                            format!("\\u{:04X}", b)
                        } else {
                            format!("\\u{:04x}", b)
                        });
                    } else if b == b'/' && *slash {
                        out.push_str("\\/");
                    } else {
                        let j = serde_json::to_string(&(b as char).to_string()).expect("a string");
                        out.push_str(&j[1..j.len() - 1]);
                    }
                }
                Enc::Base64 { .. } | Enc::Basic { .. } | Enc::Hex { .. } => {
                    unreachable!("not bytewise")
                }
            }
        }
        out
    }

    fn whole(&self, secret: &[u8]) -> String {
        use base64::engine::general_purpose as g;
        match self {
            Enc::Base64 {
                url,
                pad,
                lead,
                tail,
            } => {
                let mut buf = lead.as_bytes().to_vec();
                buf.extend_from_slice(secret);
                buf.extend_from_slice(tail.as_bytes());
                match (url, pad) {
                    (false, false) => g::STANDARD_NO_PAD.encode(buf),
                    (false, true) => g::STANDARD.encode(buf),
                    (true, false) => g::URL_SAFE_NO_PAD.encode(buf),
                    (true, true) => g::URL_SAFE.encode(buf),
                }
            }
            Enc::Basic { user } => {
                let mut buf = format!("{user}:").into_bytes();
                buf.extend_from_slice(secret);
                format!("Basic {}", g::STANDARD.encode(buf))
            }
            Enc::Hex { upper } => {
                if *upper {
                    hex::encode_upper(secret)
                } else {
                    hex::encode(secret)
                }
            }
            _ => self.piece(secret, 0..secret.len()),
        }
    }
}

/// Where the encoded secret goes.
#[derive(Debug, Clone, Copy)]
enum Place {
    RequestHeader,
    ResponseHeader,
    ResponseHeaderName,
    RequestBody,
    ResponseJsonString,
    JsonRpcErrorMessage,
    SseData,
    UrlQuery,
    ReasonPhrase,
    SkippedReason,
    TransportError,
    BodyEndError,
    FirstAttempt,
    TlsError,
    TlsVerificationError,
    LegacyTlsServerBytes,
    DnsHost,
    DnsError,
    /// The stored body ends part way through the encoded secret (a body cap).
    CutAtBodyCap,
    /// The encoded secret is split across two SSE events.
    SplitAcrossSse,
}

const PLACES: &[Place] = &[
    Place::RequestHeader,
    Place::ResponseHeader,
    Place::ResponseHeaderName,
    Place::RequestBody,
    Place::ResponseJsonString,
    Place::JsonRpcErrorMessage,
    Place::SseData,
    Place::UrlQuery,
    Place::ReasonPhrase,
    Place::SkippedReason,
    Place::TransportError,
    Place::BodyEndError,
    Place::FirstAttempt,
    Place::TlsError,
    Place::TlsVerificationError,
    Place::LegacyTlsServerBytes,
    Place::DnsHost,
    Place::DnsError,
    Place::CutAtBodyCap,
    Place::CutAtBodyCap,
    Place::SplitAcrossSse,
    Place::SplitAcrossSse,
];

fn terr(message: String) -> TransportError {
    TransportError {
        kind: ErrorKind::Protocol,
        message,
    }
}

fn http(r: &mut Record) -> &mut HttpExchange {
    match &mut r.observation {
        Observation::Http(x) => x,
        _ => unreachable!("an HTTP record"),
    }
}

fn response(r: &mut Record) -> &mut HttpResponse {
    match &mut http(r).outcome {
        HttpOutcome::Response(resp) => resp,
        HttpOutcome::Error(_) => unreachable!("a response"),
    }
}

fn plain() -> Record {
    http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        "https://h.example/mcp",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        200,
        br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
    )
}

fn tls(error: Option<TransportError>, verification_error: Option<String>) -> Record {
    let mut r = plain();
    r.observation = Observation::Tls(mcp_probe_schema::testkit::tls_handshake(
        "h.example",
        &[0x30, 0x82, 0x01, 0x0a],
        vec![TrustCheck {
            store: "bundled".into(),
            ok: verification_error.is_none(),
            error: verification_error,
        }],
        error,
    ));
    r
}

/// A record holding `text` (an encoded secret, or a filler) at `place`; `cut` and
/// `split` are byte positions in `text` for the cut places.
fn record(place: Place, text: &str, cut: usize, split: usize) -> Record {
    let mut r = plain();
    let json = |t: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{t}"}}}}"#);
    match place {
        Place::RequestHeader => http(&mut r)
            .request
            .headers
            .push(Header::new("X-Echo", text)),
        Place::ResponseHeader => response(&mut r)
            .headers
            .push(Header::new("X-Echo", format!("v={text}"))),
        Place::ResponseHeaderName => response(&mut r)
            .headers
            .push(Header::new(format!("X-{text}"), "1")),
        Place::RequestBody => {
            http(&mut r).request.body = body(
                format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"s":"{text}"}}}}}}"#)
                    .as_bytes(),
            )
        }
        Place::ResponseJsonString => response(&mut r).body = body(json(text).as_bytes()),
        Place::JsonRpcErrorMessage => {
            response(&mut r).body = body(
                format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32001,"message":"bad credential {text} for h.example"}}}}"#)
                    .as_bytes(),
            )
        }
        Place::SseData => {
            let resp = response(&mut r);
            resp.headers = vec![Header::new("Content-Type", "text/event-stream")];
            resp.body = body(format!("event: message\ndata: {}\n\n", json(text)).as_bytes());
        }
        Place::UrlQuery => {
            http(&mut r).request.url = format!("https://h.example/mcp?cursor={text}&page=2")
        }
        Place::ReasonPhrase => response(&mut r).reason = format!("Denied {text}").into(),
        Place::SkippedReason => {
            r.observation = Observation::Skipped {
                reason: format!("repeated nextCursor {text}"),
            }
        }
        Place::TransportError => {
            http(&mut r).outcome =
                HttpOutcome::Error(terr(format!("not HTTP: first bytes {text}")))
        }
        Place::BodyEndError => {
            response(&mut r).body.end = BodyEnd::Error(terr(format!("bad chunk size {text}")))
        }
        Place::FirstAttempt => http(&mut r).first_attempt = Some(terr(format!("reset {text}"))),
        Place::TlsError => r = tls(Some(terr(format!("alert after {text}"))), None),
        Place::TlsVerificationError => r = tls(None, Some(format!("invalid for name {text}"))),
        Place::LegacyTlsServerBytes => {
            r.observation = Observation::LegacyTls(LegacyTlsProbe {
                offered: "TLSv1_0".into(),
                client_hello: vec![0x16, 0x03, 0x01, 0x00, 0x05],
                server_bytes: format!("HTTP/1.1 400 Bad\r\n\r\n{text}").into_bytes(),
                error: None,
            })
        }
        Place::DnsHost | Place::DnsError => {
            r.observation = Observation::Dns(DnsLookup {
                host: match place {
                    Place::DnsHost => format!("{text}.h.example"),
                    _ => "h.example".into(),
                },
                addresses: vec![],
                error: match place {
                    Place::DnsError => Some(terr(format!("no such host {text}"))),
                    _ => None,
                },
            })
        }
        Place::CutAtBodyCap => {
            let stored = &text.as_bytes()[..cut.min(text.len())];
            let mut b = br#"{"jsonrpc":"2.0","id":1,"result":{"text":""#.to_vec();
            b.extend_from_slice(stored);
            let resp = response(&mut r);
            resp.body = body(&b);
            resp.body.length = b.len() as u64 + 4096;
            resp.body.end = BodyEnd::LimitReached;
        }
        Place::SplitAcrossSse => {
            let at = split.min(text.len());
            let (a, b) = text.as_bytes().split_at(at);
            let mut s = b"event: message\ndata: {\"a\":\"".to_vec();
            s.extend_from_slice(a);
            s.extend_from_slice(b"\"}\n\nevent: message\ndata: {\"b\":\"");
            s.extend_from_slice(b);
            s.extend_from_slice(b"\"}\n\n");
            let resp = response(&mut r);
            resp.headers = vec![Header::new("Content-Type", "text/event-stream")];
            resp.body = body(&s);
        }
    }
    r
}

/// Every needle whose presence means the secret (or a piece of 8 or more) is there.
fn needles(secret: &[u8], placed: &Enc) -> Vec<Vec<u8>> {
    use base64::engine::general_purpose as g;
    let n = secret.len();
    let all = vec![true; MAX_LEN];
    let none = vec![false; MAX_LEN];
    let mixed: Vec<bool> = (0..MAX_LEN).map(|i| i % 2 == 0).collect();
    let families = [
        Enc::Raw,
        Enc::Form,
        Enc::Pct {
            mask: all.clone(),
            upper: all.clone(),
        },
        Enc::Pct {
            mask: all.clone(),
            upper: none.clone(),
        },
        Enc::Pct {
            mask: all.clone(),
            upper: mixed.clone(),
        },
        Enc::Json {
            mask: none.clone(),
            upper: none.clone(),
            slash: false,
        },
        Enc::Json {
            mask: none.clone(),
            upper: none.clone(),
            slash: true,
        },
        Enc::Json {
            mask: all.clone(),
            upper: all.clone(),
            slash: false,
        },
        Enc::Json {
            mask: all.clone(),
            upper: none.clone(),
            slash: false,
        },
    ];
    let mut out = Vec::new();
    for f in families.iter().chain(placed.bytewise().then_some(placed)) {
        out.push(f.piece(secret, 0..8.min(n)).into_bytes());
        out.push(f.piece(secret, n.saturating_sub(8)..n).into_bytes());
    }
    // base64 at each byte phase: drop the characters that mix in a neighbouring byte.
    for lead in ["", "x", "xy"] {
        let mut buf = lead.as_bytes().to_vec();
        buf.extend_from_slice(secret);
        let skip = [0, 2, 3][lead.len()];
        for enc in [
            g::STANDARD_NO_PAD.encode(&buf),
            g::URL_SAFE_NO_PAD.encode(&buf),
        ] {
            let b = enc.as_bytes();
            if b.len() > skip + 2 + 4 {
                out.push(b[skip..b.len() - 2].to_vec());
            }
        }
    }
    out.push(hex::encode(secret).into_bytes());
    out.push(hex::encode_upper(secret).into_bytes());
    out
}

/// The first text or byte string of `r`'s observation for which `hit` says something.
fn in_values(r: &Record, hit: &dyn Fn(&[u8]) -> Option<String>) -> Option<String> {
    fn walk(v: &ciborium::Value, hit: &dyn Fn(&[u8]) -> Option<String>) -> Option<String> {
        match v {
            ciborium::Value::Text(t) => hit(t.as_bytes()),
            ciborium::Value::Bytes(b) => hit(b),
            ciborium::Value::Array(a) => a.iter().find_map(|x| walk(x, hit)),
            ciborium::Value::Map(m) => m
                .iter()
                .find_map(|(k, x)| walk(k, hit).or_else(|| walk(x, hit))),
            ciborium::Value::Tag(_, x) => walk(x, hit),
            _ => None,
        }
    }
    let tree = ciborium::Value::serialized(&r.observation).expect("observation as CBOR");
    walk(&tree, hit)
}

/// [`found`] in each text and byte string of `r`'s observation, one at a time.
fn found_in_values(r: &Record, needles: &[Vec<u8>]) -> Option<String> {
    in_values(r, &|b| found(b, needles))
}

/// [`Redactor::leaks`] on each text and byte string of `r`'s observation.
fn leaks_in_values(redactor: &Redactor, r: &Record) -> bool {
    in_values(r, &|b| redactor.leaks(b).then(String::new)).is_some()
}

/// The first needle in `hay`, ASCII case ignored (a credential in another letter case
/// is still the credential).
fn found(hay: &[u8], needles: &[Vec<u8>]) -> Option<String> {
    needles
        .iter()
        .find(|n| {
            !n.is_empty()
                && hay
                    .windows(n.len())
                    .any(|w| w.eq_ignore_ascii_case(n.as_slice()))
        })
        .map(|n| String::from_utf8_lossy(n).into_owned())
}

/// How an echo changed the letter case of what it wrote.
#[derive(Debug, Clone)]
enum Fold {
    Keep,
    Lower,
    Upper,
    /// Upper case where the mask says so, lower elsewhere.
    Mixed(Vec<bool>),
}

impl Fold {
    fn apply(&self, text: &str) -> String {
        match self {
            Fold::Keep => text.to_string(),
            Fold::Lower => text.to_ascii_lowercase(),
            Fold::Upper => text.to_ascii_uppercase(),
            Fold::Mixed(mask) => text
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if mask[i % mask.len()] {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect(),
        }
    }
}

fn fold() -> impl Strategy<Value = Fold> {
    prop_oneof![
        3 => Just(Fold::Keep),
        1 => Just(Fold::Lower),
        1 => Just(Fold::Upper),
        1 => mask().prop_map(Fold::Mixed),
    ]
}

fn alphabet() -> impl Strategy<Value = Vec<u8>> {
    let url_safe: Vec<u8> =
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".to_vec();
    let b64: Vec<u8> =
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".to_vec();
    let printable: Vec<u8> = (b' '..=b'~').collect();
    prop_oneof![Just(url_safe), Just(b64), Just(printable)]
}

fn secret() -> impl Strategy<Value = Vec<u8>> {
    (
        alphabet(),
        prop::collection::vec(any::<prop::sample::Index>(), 8..MAX_LEN),
    )
        .prop_map(|(a, idx)| idx.iter().map(|i| a[i.index(a.len())]).collect())
}

fn mask() -> impl Strategy<Value = Vec<bool>> {
    prop::collection::vec(any::<bool>(), MAX_LEN)
}

fn enc() -> impl Strategy<Value = Enc> {
    let word = prop::sample::select(vec!["", "u", "us", "user", "client-id", "{\"k\":1}"]);
    prop_oneof![
        2 => Just(Enc::Raw),
        3 => (mask(), mask()).prop_map(|(mask, upper)| Enc::Pct { mask, upper }),
        1 => Just(Enc::Form),
        3 => (mask(), mask(), any::<bool>())
            .prop_map(|(mask, upper, slash)| Enc::Json { mask, upper, slash }),
        2 => (any::<bool>(), any::<bool>(), word.clone(), word.clone())
            .prop_map(|(url, pad, lead, tail)| Enc::Base64 { url, pad, lead: lead.into(), tail: tail.into() }),
        1 => word.prop_map(|u| Enc::Basic { user: u.into() }),
        1 => any::<bool>().prop_map(|upper| Enc::Hex { upper }),
    ]
}

/// The headers a bearer token is sent in, so that the redactor learns it.
fn learning_record(secret: &[u8]) -> Record {
    let mut r = plain();
    let mut v = b"Bearer ".to_vec();
    v.extend_from_slice(secret);
    http(&mut r)
        .request
        .headers
        .push(Header::new("Authorization", v));
    r
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn a_secret_survives_in_no_encoding_and_no_place(
        secret in secret(),
        enc in enc(),
        place in prop::sample::select(PLACES),
        learn in any::<bool>(),
        cut in any::<prop::sample::Index>(),
        split in any::<prop::sample::Index>(),
        fold in fold(),
    ) {
        // The echo may also have changed the letter case of what it wrote (hex digits of
        // escapes, `\u` as `\U`, base64 included).
        let text = fold.apply(&enc.whole(&secret));
        // Cut places only for encodings written byte by byte (a cut base64 or hex form
        // is outside the guarantee): anything else is stored whole.
        let place = match place {
            Place::CutAtBodyCap | Place::SplitAcrossSse if !enc.bytewise() => Place::ResponseJsonString,
            p => p,
        };
        let cut = cut.index(text.len() + 1);
        let split = split.index(text.len() + 1);
        let needles = needles(&secret, &enc);
        let fp = fingerprint(&secret);

        let mut redactor = Redactor::new();
        // A token learned from the header it was sent in (only where the header rule
        // keeps it exactly: no spaces at its ends), or one the collector holds.
        if learn && !secret.starts_with(b" ") && !secret.ends_with(b" ") {
            let mut first = learning_record(&secret);
            redactor.redact_and_learn(&mut first);
            let bytes = encode_record(&first);
            prop_assert_eq!(found(&bytes, &needles), None, "learning record");
        } else {
            redactor.add_secret(&secret, "bearer-token");
        }

        let mut r = record(place, &text, cut, split);
        let before = encode_record(&r);
        let bytewise_whole = !matches!(place, Place::CutAtBodyCap | Place::SplitAcrossSse);
        let present = if bytewise_whole {
            found(&before, &needles).is_some()
        } else {
            found_in_values(&r, &needles).is_some()
        };
        // The oracle is not vacuous: the secret is there before redaction.
        prop_assert!(present || !bytewise_whole, "not placed: {}", text);

        redactor.redact_and_learn(&mut r);
        let after = encode_record(&r);
        // A cut or split piece is judged inside the value that holds it: across the
        // record's encoding, the framing byte after a body cut inside an escape (`%6`
        // then CBOR's `f` of "length") would complete a needle no reader of the body sees.
        let left = if bytewise_whole {
            found(&after, &needles)
        } else {
            found_in_values(&r, &needles)
        };
        prop_assert_eq!(left, None, "{:?} {:?} {:?}", place, enc, String::from_utf8_lossy(&after));
        if present {
            prop_assert!(r.redactions.iter().any(|x| x.fingerprint == fp), "{:?}", r.redactions);
        }
        for x in &r.redactions {
            prop_assert!(after.windows(x.fingerprint.len()).any(|w| w == x.fingerprint.as_bytes()), "{:?}", x);
        }
        if bytewise_whole {
            prop_assert!(!redactor.leaks(&after));
        } else {
            // Judged per value as above; on the encoded record the framing can complete
            // a piece, and the journal then withholds the record (fail closed).
            prop_assert!(!leaks_in_values(&redactor, &r));
        }

        // The scrubbing helpers on free text, JSON and any serialisable value.
        let t = format!("message: {text}; end");
        let s = redactor.scrub_str(&t);
        prop_assert_eq!(found(s.as_bytes(), &needles), None, "scrub_str {}", s);
        let mut j = serde_json::json!({"error": {"message": t.clone(), "data": [t.clone()]}, t.clone(): 1});
        redactor.scrub_json(&mut j);
        let js = serde_json::to_vec(&j).expect("json");
        prop_assert_eq!(found(&js, &needles), None, "scrub_json {}", String::from_utf8_lossy(&js));
        let session = Session {
            endpoint: "https://h.example/mcp".into(),
            auth_required: true,
            authenticated: true,
            era: Some(Era::Legacy),
            revision: Some("2025-06-18".into()),
            server_info: Some(serde_json::json!({"name": t.clone(), t.clone(): "k"})),
            capabilities: None,
            session_id: Some(text.clone()),
            negotiated_in: Some(0),
            other_eras: Vec::new(),
            authorization_defaults: None,
            step_up: None,
            resource_refused_in: None,
            dpop: None,
        };
        let clean = redactor.scrub_serde(&session);
        let mut cbor = Vec::new();
        ciborium::into_writer(&clean, &mut cbor).expect("cbor");
        prop_assert_eq!(found(&cbor, &needles), None, "scrub_serde {:?}", clean);
        prop_assert_eq!(clean.era, Some(Era::Legacy));
        prop_assert_eq!(clean.endpoint.as_str(), "https://h.example/mcp");
    }

    /// What `scrub_bytes` leaves, `leaks` never reports, even for secrets and bytes
    /// made of escape characters, hex digits and pieces of the replacement text.
    #[test]
    fn scrub_and_leaks_agree(
        secret in "[a-f0-9%\\\\u+ /:rdtsh\"A]{6,24}",
        hay in "[a-f0-9%\\\\u+ /:rdtsh\"A]{0,300}",
        at in any::<prop::sample::Index>(),
    ) {
        let mut redactor = Redactor::new();
        redactor.add_secret(secret.as_bytes(), "x");
        let mut bytes = hay.clone().into_bytes();
        bytes.splice(at.index(bytes.len() + 1)..at.index(bytes.len() + 1), secret.bytes());
        redactor.scrub_bytes(&mut bytes);
        prop_assert!(!redactor.leaks(&bytes), "{}", String::from_utf8_lossy(&bytes));
        let s = redactor.scrub_str(&hay);
        prop_assert!(!redactor.leaks(s.as_bytes()), "{}", s);
    }

    #[test]
    fn a_record_without_the_secret_is_unchanged(
        secret in secret(),
        place in prop::sample::select(PLACES),
        filler in "[A-Za-z0-9]{8,40}",
    ) {
        let mut redactor = Redactor::new();
        redactor.add_secret(&secret, "bearer-token");
        let filler = format!("filler-{filler}");
        let mut r = record(place, &filler, filler.len() / 2, filler.len() / 3);
        let before = r.clone();
        redactor.redact_and_learn(&mut r);
        prop_assert_eq!(&r, &before);
        prop_assert!(!redactor.leaks(&encode_record(&r)));
        prop_assert_eq!(redactor.scrub_str(&filler), filler);
    }

    /// A client id and a state that share prefixes and suffixes with the client
    /// secret, registered as public values, stay intact in the URL, the form body and the
    /// JSON answer (and in the URL as printed), while the secret, in any encoding and
    /// letter case, is gone from every recorded value.
    #[test]
    fn public_values_sharing_pieces_with_a_secret_stay_intact(
        pre in "[A-Za-z0-9-]{0,14}",
        suf in "[A-Za-z0-9-]{0,14}",
        id_mid in "[a-z0-9]{1,10}",
        secret_mid in "[A-Za-z0-9._~-]{4,20}",
        state_mid in "[A-Za-z0-9_-]{4,12}",
        learn in any::<bool>(),
        echo_fold in fold(),
        echo_enc in enc(),
    ) {
        let client_id = format!("{pre}{id_mid}{suf}");
        let secret = format!("{pre}{secret_mid}{suf}");
        // The state starts with the secret's end and ends with its start.
        let state = format!("{suf}{state_mid}{pre}");
        prop_assume!(secret.len() >= 8 && !client_id.contains(&secret) && !state.contains(&secret));
        let mut redactor = Redactor::new();
        redactor.add_public(client_id.as_bytes());
        redactor.add_public(state.as_bytes());
        if !learn {
            redactor.add_secret(secret.as_bytes(), "client-secret");
        }
        let pct = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
        let url = format!(
            "https://as.example/authorize?response_type=code&client_id={}&state={}",
            pct(&client_id),
            pct(&state)
        );
        let echo = echo_fold.apply(&echo_enc.whole(secret.as_bytes()));
        let answer = serde_json::json!({
            "client_id": client_id,
            "client_secret": secret,
            "error_description": format!("echo {echo} for {client_id}"),
        });
        let mut r = http_record(
            &["oauth.token"],
            &url,
            &format!(
                "grant_type=authorization_code&client_id={}&client_secret={}&state={}",
                pct(&client_id),
                pct(&secret),
                pct(&state)
            ),
            200,
            answer.to_string().as_bytes(),
        );
        {
            let x = http(&mut r);
            x.request.headers = vec![Header::new("Content-Type", "application/x-www-form-urlencoded")];
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                resp.headers = vec![Header::new("Content-Type", "application/json")];
            }
        }
        // What is sent is what was built: only a copy is redacted, and the URL as printed
        // (scrubbed with every secret known) is the URL itself.
        let sent = r.clone();
        redactor.redact_and_learn(&mut r);
        prop_assert_eq!(redactor.scrub_str(&url), url.clone());
        prop_assert_ne!(&r, &sent);

        // No whole secret, in any encoding or letter case, in any recorded value.
        let whole: Vec<Vec<u8>> = [
            Enc::Raw,
            Enc::Form,
            Enc::Pct { mask: vec![true; MAX_LEN], upper: vec![true; MAX_LEN] },
            Enc::Json { mask: vec![true; MAX_LEN], upper: vec![false; MAX_LEN], slash: false },
            Enc::Hex { upper: false },
        ]
        .iter()
        .map(|e| e.whole(secret.as_bytes()).into_bytes())
        .collect();
        prop_assert_eq!(found_in_values(&r, &whole), None);
        prop_assert!(!redactor.leaks_record(&r), "{:?}", r);

        // Every public value intact, where it was sent and where it was answered.
        let x = http(&mut r);
        let q: Vec<(String, String)> = url::Url::parse(&x.request.url)
            .expect("url")
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        prop_assert!(q.contains(&("client_id".into(), client_id.clone())), "{:?}", q);
        prop_assert!(q.contains(&("state".into(), state.clone())), "{:?}", q);
        let form: Vec<(String, String)> = url::form_urlencoded::parse(&x.request.body.bytes)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        prop_assert!(form.contains(&("client_id".into(), client_id.clone())), "{:?}", form);
        prop_assert!(form.contains(&("state".into(), state.clone())), "{:?}", form);
        prop_assert!(form.contains(&("client_secret".into(), fingerprint(secret.as_bytes()))), "{:?}", form);
        let HttpOutcome::Response(resp) = &x.outcome else { unreachable!("a response") };
        let back: serde_json::Value = serde_json::from_slice(&resp.body.bytes).expect("json");
        prop_assert_eq!(back["client_id"].as_str(), Some(client_id.as_str()));
        let fp = fingerprint(secret.as_bytes());
        prop_assert_eq!(back["client_secret"].as_str(), Some(fp.as_str()));
        let description = back["error_description"].as_str().unwrap_or_default();
        prop_assert!(description.ends_with(&format!(" for {client_id}")), "{}", description);
    }
}
