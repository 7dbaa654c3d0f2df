//! Unit tests of rule `tls-required`.

use super::cert::{dns_matches, WrongName};
use super::*;
use crate::fixture::sub as sub_of;
use crate::fixture::{evidence, session};
/// The rule graded directly, rendered outside any definition (local names).
fn run(
    check: &dyn crate::check::Check,
    ev: &crate::evidence::Bundle,
    cx: &crate::check::Context<'_>,
) -> crate::verdict::Outcome {
    crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
}
use crate::verdict::Verdict;
use mcp_probe_schema::model::{
    CaFile, Header, HttpExchange, HttpRequest, HttpResponse, TransportError, TrustCheck,
};
use mcp_probe_schema::testkit;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls_pki_types::CertificateDer;
use serde_json::json;

#[test]
fn wrong_name_messages_name_what_failed() {
    assert_eq!(
        WrongName::NoSubjectAltName {
            subject: "CN=x".into()
        }
        .to_string(),
        "wrong name: the certificate has no subjectAltName, so it names no host (CN=x is not \
         used for name matching by current clients)"
    );
    assert_eq!(
        WrongName::Unparsable.to_string(),
        "wrong name: the subjectAltName does not parse"
    );
    assert_eq!(
        WrongName::NoMatch {
            want: "host a.example".into(),
            entries: "DNS:b.example".into()
        }
        .to_string(),
        "wrong name: host a.example matches none of the subjectAltName entries [DNS:b.example]"
    );
}

const BASE: &str = "https://127.0.0.1:8443";
/// Before the fixture's collection time (2025-11-30T05:20:00Z).
const PAST: (i32, u8, u8) = (2025, 1, 1);
const FUTURE: (i32, u8, u8) = (2027, 1, 1);

// --- certificates -----------------------------------------------------------------

fn params(cn: &str, names: &[&str], from: (i32, u8, u8), to: (i32, u8, u8)) -> CertificateParams {
    let mut p = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        .expect("params");
    p.distinguished_name = rcgen::DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, cn);
    p.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
    p.not_after = rcgen::date_time_ymd(to.0, to.1, to.2);
    p
}

fn ca(cn: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut p = params(cn, &[], (2020, 1, 1), (2040, 1, 1));
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    CertifiedIssuer::self_signed(p, KeyPair::generate().expect("key")).expect("ca")
}

fn leaf_params(names: &[&str], from: (i32, u8, u8), to: (i32, u8, u8)) -> CertificateParams {
    let mut p = params("leaf.test", names, from, to);
    p.is_ca = IsCa::ExplicitNoCa;
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    p
}

/// A leaf for `names` valid `from`..`to`, issued by `issuer`.
fn issued(
    issuer: &CertifiedIssuer<'static, KeyPair>,
    names: &[&str],
    from: (i32, u8, u8),
    to: (i32, u8, u8),
) -> Vec<u8> {
    let key = KeyPair::generate().expect("key");
    leaf_params(names, from, to)
        .signed_by(&key, issuer)
        .expect("leaf")
        .der()
        .to_vec()
}

fn self_signed(names: &[&str]) -> Vec<u8> {
    let key = KeyPair::generate().expect("key");
    let mut p = params("localhost", names, PAST, FUTURE);
    // Like `openssl req -x509`: CA:TRUE on a leaf.
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.self_signed(&key).expect("self-signed").der().to_vec()
}

// --- records ----------------------------------------------------------------------

fn record(legs: &[LegId], observation: Observation) -> Record {
    let mut r = testkit::http_record(legs, BASE, "{}", 200, b"");
    r.observation = observation;
    r
}

fn terr(kind: ErrorKind, message: &str) -> TransportError {
    TransportError {
        kind,
        message: message.into(),
    }
}

fn get(url: &str) -> HttpRequest {
    HttpRequest {
        method: "GET".into(),
        url: url.into(),
        version: "HTTP/1.1".into(),
        headers: vec![Header::new("Accept", "*/*")],
        body: testkit::body(b""),
    }
}

fn plain_status(status: u16, headers: &[(&str, &str)]) -> Record {
    record(
        &[leg::PLAINTEXT],
        Observation::Http(HttpExchange {
            request: get("http://127.0.0.1:80/"),
            outcome: HttpOutcome::Response(HttpResponse {
                version: "HTTP/1.1".into(),
                status,
                reason: "".into(),
                headers: headers.iter().map(|(k, v)| Header::new(*k, *v)).collect(),
                body: testkit::body(b"plain HTTP\n"),
                interim: 0,
            }),
            connection: Some(9),
            first_attempt: None,
            refused: None,
        }),
    )
}

fn plain_error(kind: ErrorKind) -> Record {
    record(
        &[leg::PLAINTEXT],
        Observation::Http(HttpExchange {
            request: get("http://127.0.0.1:80/"),
            outcome: HttpOutcome::Error(terr(kind, "127.0.0.1:80: observed")),
            connection: None,
            first_attempt: None,
            refused: None,
        }),
    )
}

/// A legacy probe of `version` answered with a ServerHello at that version.
fn accepted_legacy(l: LegId, version: u16) -> Record {
    legacy(l, version, &server_hello(version), None)
}

fn legacy(l: LegId, version: u16, server: &[u8], error: Option<TransportError>) -> Record {
    record(
        &[l],
        Observation::LegacyTls(LegacyTlsProbe {
            offered: tlswire::version_text(version),
            client_hello: tlswire::client_hello(version, [3; 32], None),
            server_bytes: server.to_vec(),
            error,
        }),
    )
}

const ALERT_70: &[u8] = &[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 70];

/// A ServerHello record choosing `version` and suite 0xc014.
fn server_hello(version: u16) -> Vec<u8> {
    let mut body = version.to_be_bytes().to_vec();
    body.extend_from_slice(&[9; 32]);
    body.push(0);
    body.extend_from_slice(&[0xc0, 0x14, 0x00]);
    let mut hs = vec![2, 0, 0, body.len() as u8];
    hs.extend_from_slice(&body);
    let mut rec = vec![0x16, 0x03, 0x01, 0, hs.len() as u8];
    rec.extend_from_slice(&hs);
    rec
}

fn tls(
    chain: &[&[u8]],
    version: Option<&str>,
    stores: &[(&str, bool)],
    error: Option<TransportError>,
) -> Record {
    record(
        &[leg::TLS_MODERN],
        Observation::Tls(TlsHandshake {
            connection: 1,
            sni: None,
            peer: "127.0.0.1:8443".into(),
            version: version.map(str::to_string),
            cipher_suite: version.map(|_| "TLS13_AES_256_GCM_SHA384".to_string()),
            alpn: None,
            chain: chain
                .iter()
                .map(|c| serde_bytes::ByteBuf::from(c.to_vec()))
                .collect(),
            verification: stores
                .iter()
                .map(|(s, ok)| TrustCheck {
                    store: s.to_string(),
                    ok: *ok,
                    error: (!ok).then(|| "invalid peer certificate: UnknownIssuer".to_string()),
                })
                .collect(),
            error,
            via_proxy: None,
            client_auth: None,
        }),
    )
}

/// Refusals on both legacy legs and a refused plaintext port.
fn clean_transport() -> Vec<Record> {
    vec![
        legacy(leg::TLS_V1_0, tlswire::TLS1_0, ALERT_70, None),
        legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
        plain_error(ErrorKind::Connect),
    ]
}

/// An https target at `base` with `records`, and `ca_file` certificates when given.
fn https_at(base: &str, records: Vec<Record>, ca_file: Option<Vec<Vec<u8>>>) -> Bundle {
    let mut ev = evidence(
        Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
        records,
    );
    ev.payload_mut().target.base_url = base.into();
    ev.payload_mut().target.as_typed = format!("{base}/mcp");
    ev.payload_mut().target.endpoint = Some(format!("{base}/mcp"));
    ev.payload_mut().run.options.ca_file = ca_file.map(|certs| CaFile {
        path: "/tmp/ca.crt".into(),
        sha256: "ab".repeat(32),
        certificates: certs.into_iter().map(serde_bytes::ByteBuf::from).collect(),
    });
    ev
}

fn https(records: Vec<Record>, ca_file: Option<Vec<Vec<u8>>>) -> Bundle {
    https_at(BASE, records, ca_file)
}

fn grade(ev: &Bundle) -> Outcome {
    run(&TlsRequired, ev, &Context::default())
}

/// The lab's modern endpoint collected with `--ca-file`: chain leaf + CA, trusted by
/// `extra` only.
fn modern(extra_records: Vec<Record>) -> Bundle {
    let ca = ca("MCP Probe Test CA");
    let leaf = issued(&ca, &["127.0.0.1", "localhost"], PAST, FUTURE);
    let mut records = vec![tls(
        &[&leaf, ca.der()],
        Some("TLSv1_3"),
        &[("bundled", false), ("os", false), ("extra", true)],
        None,
    )];
    records.extend(extra_records);
    https(records, Some(vec![ca.der().to_vec()]))
}

// --- whole-check cases ------------------------------------------------------------

#[test]
fn modern_with_operator_ca_passes() {
    let o = grade(&modern(clean_transport()));
    assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
    assert!(sub_of(&o, "f").note.contains("private PKI"), "{o:?}");
    assert!(sub_of(&o, "f").note.contains("/tmp/ca.crt"), "{o:?}");
    assert!(sub_of(&o, "e").note.contains("IP:127.0.0.1"), "{o:?}");
    assert!(sub_of(&o, "d").note.contains("TLSv1_3"), "{o:?}");
    assert!(sub_of(&o, "b").note.contains("protocol_version"), "{o:?}");
    assert!(sub_of(&o, "a").note.contains("port refused"), "{o:?}");
    assert_eq!(o.details["weak_tls_accepted"], json!([]));
    assert_eq!(o.details["tls_intercepted"], json!(false));
    assert_eq!(o.details["trusted_by"], json!(["extra"]));
    assert_eq!(o.details["observed_issuer"], json!("MCP Probe Test CA"));
    assert!(o.reduction.contains("HSTS") && o.reduction.contains("Revocation"));
    assert_eq!(o.records.len(), 4, "{:?}", o.records);
}

#[test]
fn plain_http_target_fails_whatever_else() {
    let ev = evidence(
        Some(session(Some("2025-11-25"), json!({}), None)),
        vec![
            crate::fixture::exchange(
                &[leg::ENDPOINT_DETECT],
                "{}",
                200,
                "application/json",
                "{}",
                &[],
            ),
            crate::fixture::skipped(
                &[leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT],
                "not sent: the target is plain http, so the endpoint itself is served without TLS",
            ),
        ],
    );
    let o = grade(&ev);
    assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
    assert!(sub_of(&o, "a").note.contains("served in clear"), "{o:?}");
    for l in ["b", "c", "d", "e", "f"] {
        assert_eq!(sub_of(&o, l).outcome, SubOutcome::Dropped, "{l}");
    }
    assert_eq!(o.details["scheme"], json!("http"));
}

#[test]
fn plain_http_target_without_any_answer_is_error() {
    let mut r = crate::fixture::exchange(&[leg::ENDPOINT_DETECT], "{}", 200, "", "", &[]);
    if let Observation::Http(x) = &mut r.observation {
        x.outcome = HttpOutcome::Error(terr(ErrorKind::Connect, "refused"));
    }
    let ev = evidence(
        None,
        vec![
            r,
            crate::fixture::skipped(&[leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT], "plain"),
        ],
    );
    let o = grade(&ev);
    assert_eq!(o.verdict, Verdict::Error, "{o:#?}");
}

#[test]
fn missing_transport_legs_are_named() {
    let ev = https(Vec::new(), None);
    let o = grade(&ev);
    assert_eq!(o.verdict, Verdict::Error);
    assert!(o.evidence.contains("tls.v1_0"), "{o:?}");
}

// --- a: plaintext ----------------------------------------------------------------

fn plaintext_only(r: Record) -> Outcome {
    let mut records = vec![
        legacy(leg::TLS_V1_0, tlswire::TLS1_0, ALERT_70, None),
        legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
    ];
    records.push(r);
    grade(&modern(records))
}

#[test]
fn plaintext_served_fails() {
    let o = plaintext_only(plain_status(200, &[]));
    assert_eq!(o.verdict, Verdict::Fail);
    assert!(sub_of(&o, "a").note.contains("plaintext served"), "{o:?}");
    assert_eq!(o.details["plaintext"], json!(200));
    assert_eq!(
        plaintext_only(plain_status(204, &[])).verdict,
        Verdict::Fail
    );
}

#[test]
fn redirects_pass_only_to_https() {
    for s in [301, 302, 303, 307, 308] {
        let o = plaintext_only(plain_status(s, &[("Location", "HTTPS://127.0.0.1:8443/")]));
        assert_eq!(o.verdict, Verdict::Pass, "{s}: {o:?}");
        assert_eq!(
            o.details["plaintext_redirect_target"],
            json!("HTTPS://127.0.0.1:8443/")
        );
    }
    let bad = plaintext_only(plain_status(301, &[("Location", "http://127.0.0.1/")]));
    assert_eq!(bad.verdict, Verdict::Fail);
    assert!(
        sub_of(&bad, "a").note.contains("http://127.0.0.1/"),
        "{bad:?}"
    );
    let relative = plaintext_only(plain_status(308, &[("Location", "/mcp")]));
    assert_eq!(relative.verdict, Verdict::Fail);
    let empty = plaintext_only(plain_status(302, &[]));
    assert_eq!(empty.verdict, Verdict::Fail);
    assert!(
        sub_of(&empty, "a").note.contains("empty target"),
        "{empty:?}"
    );
}

#[test]
fn upgrade_required_and_other_statuses() {
    let o = plaintext_only(plain_status(426, &[]));
    assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass);
    let r = plaintext_only(plain_status(404, &[]));
    assert_eq!(sub_of(&r, "a").outcome, SubOutcome::Pass);
    assert!(sub_of(&r, "a").note.contains("(review)"), "{r:?}");
}

#[test]
fn plaintext_transport_errors() {
    let reset = plaintext_only(plain_error(ErrorKind::Reset));
    assert_eq!(sub_of(&reset, "a").outcome, SubOutcome::Pass);
    assert!(sub_of(&reset, "a").note.contains("port refused"));
    let timeout = plaintext_only(plain_error(ErrorKind::Timeout));
    assert_eq!(sub_of(&timeout, "a").outcome, SubOutcome::Pass);
    assert!(
        sub_of(&timeout, "a").note.contains("filtered"),
        "{timeout:?}"
    );
    let dns = plaintext_only(plain_error(ErrorKind::Dns));
    assert_eq!(sub_of(&dns, "a").outcome, SubOutcome::Error);
    assert_eq!(dns.verdict, Verdict::Error);
    let skipped = plaintext_only(crate::fixture::skipped(
        &[leg::PLAINTEXT],
        "not sent: --info run",
    ));
    assert_eq!(sub_of(&skipped, "a").outcome, SubOutcome::Unknown);
    assert!(sub_of(&skipped, "a").note.contains("--info"));
}

// --- b / c: legacy versions -------------------------------------------------------

fn legacy_only(v0: Record, v1: Record) -> Outcome {
    grade(&modern(vec![v0, v1, plain_error(ErrorKind::Connect)]))
}

#[test]
fn accepted_legacy_versions_fail() {
    let o = legacy_only(
        accepted_legacy(leg::TLS_V1_0, tlswire::TLS1_0),
        accepted_legacy(leg::TLS_V1_1, tlswire::TLS1_1),
    );
    assert_eq!(o.verdict, Verdict::Fail);
    assert!(
        sub_of(&o, "b")
            .note
            .contains("accepted (ServerHello TLSv1_0, suite TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA)"),
        "{o:?}"
    );
    assert_eq!(sub_of(&o, "c").outcome, SubOutcome::Fail);
    assert_eq!(
        o.details["weak_tls_accepted"],
        json!(["TLSv1_0", "TLSv1_1"])
    );
}

#[test]
fn refusals_by_alert_and_by_close_pass() {
    let o = legacy_only(
        legacy(
            leg::TLS_V1_0,
            tlswire::TLS1_0,
            &[0x15, 3, 1, 0, 2, 2, 80],
            None,
        ),
        legacy(leg::TLS_V1_1, tlswire::TLS1_1, b"", None),
    );
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert!(sub_of(&o, "b").note.contains("internal_error"));
    assert!(sub_of(&o, "c").note.contains("closed"));
}

#[test]
fn network_errors_decide_nothing() {
    for kind in [ErrorKind::Reset, ErrorKind::Timeout, ErrorKind::Connect] {
        let o = legacy_only(
            legacy(leg::TLS_V1_0, tlswire::TLS1_0, b"", Some(terr(kind, "x"))),
            legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
        );
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Error, "{kind:?}");
        assert!(sub_of(&o, "b").note.contains("decides nothing"), "{o:?}");
        assert_eq!(o.verdict, Verdict::Error);
    }
    // A timeout part-way through a record is still no answer.
    let o = legacy_only(
        legacy(
            leg::TLS_V1_0,
            tlswire::TLS1_0,
            &[0x16, 3],
            Some(terr(ErrorKind::Timeout, "x")),
        ),
        legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
    );
    assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Error);
}

#[test]
fn not_tls_and_odd_answers_are_errors() {
    let o = legacy_only(
        legacy(
            leg::TLS_V1_0,
            tlswire::TLS1_0,
            b"HTTP/1.1 400 Bad Request\r\n",
            None,
        ),
        legacy(
            leg::TLS_V1_1,
            tlswire::TLS1_1,
            &[0x16, 3, 1, 0, 4, 0x0b, 0, 0, 0],
            None,
        ),
    );
    assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Error);
    assert!(sub_of(&o, "b").note.contains("HTTP/1.1"), "{o:?}");
    assert_eq!(sub_of(&o, "c").outcome, SubOutcome::Error);
}

#[test]
fn other_chosen_versions() {
    let (o, note, acc) = legacy_decision(
        &probe_of(tlswire::TLS1_0, &server_hello(tlswire::TLS1_2)),
        tlswire::TLS1_0,
    );
    assert_eq!((o, acc), (SubOutcome::Pass, false), "{note}");
    let (o, note, acc) = legacy_decision(
        &probe_of(tlswire::TLS1_1, &server_hello(tlswire::SSL3_0)),
        tlswire::TLS1_1,
    );
    assert_eq!((o, acc), (SubOutcome::Fail, true), "{note}");
    assert!(note.contains("SSLv3"));
}

fn probe_of(version: u16, server: &[u8]) -> LegacyTlsProbe {
    LegacyTlsProbe {
        offered: tlswire::version_text(version),
        client_hello: tlswire::client_hello(version, [1; 32], None),
        server_bytes: server.to_vec(),
        error: None,
    }
}

#[test]
fn a_probe_that_offered_something_else_answers_nothing() {
    let mut p = probe_of(tlswire::TLS1_1, &server_hello(tlswire::TLS1_1));
    let (o, note, _) = legacy_decision(&p, tlswire::TLS1_0);
    assert_eq!(o, SubOutcome::Error, "{note}");
    p.client_hello.clear();
    let (o, _, _) = legacy_decision(&p, tlswire::TLS1_1);
    assert_eq!(o, SubOutcome::Error);
}

// --- d: negotiated version --------------------------------------------------------

#[test]
fn negotiated_versions() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
    let stores = [("bundled", false), ("extra", true)];
    let mut r12 = clean_transport();
    r12.push(tls(&[&leaf], Some("TLSv1_2"), &stores, None));
    let o = grade(&https(r12, Some(vec![ca.der().to_vec()])));
    assert_eq!(sub_of(&o, "d").outcome, SubOutcome::Pass, "{o:?}");
    let mut r11 = clean_transport();
    r11.push(tls(&[&leaf], Some("TLSv1_1"), &stores, None));
    let o = grade(&https(r11, Some(vec![ca.der().to_vec()])));
    assert_eq!(sub_of(&o, "d").outcome, SubOutcome::Fail);
}

#[test]
fn handshake_failures() {
    let mut alert = clean_transport();
    alert.push(tls(
        &[],
        None,
        &[],
        Some(terr(
            ErrorKind::TlsAlert,
            "received fatal alert: ProtocolVersion",
        )),
    ));
    let o = grade(&https(alert, None));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(sub_of(&o, "d").note.contains("handshake failed"), "{o:?}");
    assert_eq!(sub_of(&o, "e").outcome, SubOutcome::Error);

    let mut reset = clean_transport();
    reset.push(tls(
        &[],
        None,
        &[],
        Some(terr(ErrorKind::Reset, "connection reset")),
    ));
    let o = grade(&https(reset, None));
    assert_eq!(sub_of(&o, "d").outcome, SubOutcome::Error);
    assert_eq!(o.verdict, Verdict::Error);
}

#[test]
fn no_handshake_names_the_connection_failure() {
    let mut r = crate::fixture::exchange(&[leg::ENDPOINT_DETECT], "{}", 200, "", "", &[]);
    if let Observation::Http(x) = &mut r.observation {
        x.request.url = format!("{BASE}/mcp");
        x.outcome = HttpOutcome::Error(terr(ErrorKind::Connect, "127.0.0.1:8443: refused"));
    }
    let mut records = clean_transport();
    records.push(r);
    let o = grade(&https(records, None));
    assert_eq!(o.verdict, Verdict::Error);
    assert!(sub_of(&o, "d").note.contains("refused"), "{o:?}");
}

// --- e / f: certificate and trust -------------------------------------------------

/// Grade one chain with refusing legacy legs and a refused plaintext port.
/// A leaf and its CA as the recorded chain, the CA as the operator's --ca-file, and no
/// store accepting it at collection.
fn chain_with_operator_ca(leaf: &[u8], ca: &CertifiedIssuer<'static, KeyPair>) -> Outcome {
    chain_case(
        BASE,
        &[leaf, ca.der()],
        NONE_OK,
        Some(vec![ca.der().to_vec()]),
    )
}

fn chain_case(
    base: &str,
    chain: &[&[u8]],
    stores: &[(&str, bool)],
    ca_file: Option<Vec<Vec<u8>>>,
) -> Outcome {
    let mut records = clean_transport();
    records.push(tls(chain, Some("TLSv1_3"), stores, None));
    grade(&https_at(base, records, ca_file))
}

const NONE_OK: &[(&str, bool)] = &[("bundled", false), ("os", false), ("extra", false)];

#[test]
fn expired_fails_with_dates() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["127.0.0.1"], (2020, 1, 1), (2020, 2, 1));
    let o = chain_with_operator_ca(&leaf, &ca);
    assert_eq!(o.verdict, Verdict::Fail);
    let e = &sub_of(&o, "e").note;
    assert!(
        e.contains("expired: notAfter 2020-02-01 00:00:00 UTC"),
        "{e}"
    );
    assert!(e.contains("2025-11-30 05:20:00 UTC"), "{e}");
    assert_eq!(sub_of(&o, "f").outcome, SubOutcome::Fail, "{o:?}");
    assert!(sub_of(&o, "f").note.contains("expired"), "{o:?}");
}

#[test]
fn not_yet_valid_fails() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["127.0.0.1"], (2026, 6, 1), (2027, 1, 1));
    let o = chain_case(BASE, &[&leaf], NONE_OK, Some(vec![ca.der().to_vec()]));
    assert_eq!(o.verdict, Verdict::Fail);
    assert!(sub_of(&o, "e").note.contains("not yet valid"), "{o:?}");
}

#[test]
fn wrong_name_fails_though_the_chain_is_the_operators() {
    let ca = ca("MCP Probe Test CA");
    let leaf = issued(&ca, &["wrong.example"], PAST, FUTURE);
    let o = chain_with_operator_ca(&leaf, &ca);
    assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
    let e = &sub_of(&o, "e").note;
    assert!(e.contains("wrong name"), "{e}");
    assert!(e.contains("IP address 127.0.0.1"), "{e}");
    assert!(e.contains("DNS:wrong.example"), "{e}");
    // The chain itself leads to the operator's anchor.
    assert_eq!(sub_of(&o, "f").outcome, SubOutcome::Pass, "{o:?}");
}

#[test]
fn ip_host_does_not_match_a_dns_san_spelling_it() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["localhost"], PAST, FUTURE);
    let o = chain_case(
        BASE,
        &[&leaf],
        &[("extra", true)],
        Some(vec![ca.der().to_vec()]),
    );
    assert_eq!(sub_of(&o, "e").outcome, SubOutcome::Fail);
}

#[test]
fn dns_hosts_and_wildcards() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["*.example.com", "192.0.2.1"], PAST, FUTURE);
    let ok = chain_case(
        "https://mcp.example.com",
        &[&leaf],
        &[("extra", true)],
        Some(vec![ca.der().to_vec()]),
    );
    assert_eq!(ok.verdict, Verdict::Pass, "{ok:?}");
    assert!(
        sub_of(&ok, "e").note.contains("DNS:*.example.com"),
        "{ok:?}"
    );
    let deep = chain_case(
        "https://a.mcp.example.com",
        &[&leaf],
        &[("extra", true)],
        Some(vec![ca.der().to_vec()]),
    );
    assert_eq!(sub_of(&deep, "e").outcome, SubOutcome::Fail);
    let ip6 = chain_case("https://[::1]:8443", &[&leaf], &[("extra", true)], None);
    assert_eq!(sub_of(&ip6, "e").outcome, SubOutcome::Fail);
}

#[test]
fn wildcard_rules() {
    assert!(dns_matches("*.example.com", "mcp.example.com"));
    assert!(dns_matches("*.Example.COM.", "MCP.example.com"));
    assert!(dns_matches("mcp.example.com", "mcp.example.com."));
    assert!(!dns_matches("*.example.com", "example.com"));
    assert!(!dns_matches("*.example.com", "a.b.example.com"));
    assert!(!dns_matches("*.com", "example.com"));
    assert!(!dns_matches("m*.example.com", "mcp.example.com"));
    assert!(!dns_matches("*.*.example.com", "a.b.example.com"));
    assert!(!dns_matches("", ""));
}

#[test]
fn wildcard_rules_agree_with_webpki() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["*.example.com", "exact.test"], PAST, FUTURE);
    let der = CertificateDer::from(leaf.as_slice());
    let ee = webpki::EndEntityCert::try_from(&der).expect("ee");
    for host in [
        "mcp.example.com",
        "example.com",
        "a.b.example.com",
        "exact.test",
        "EXACT.test",
        "other.test",
    ] {
        let name = rustls_pki_types::ServerName::try_from(host).expect("name");
        let theirs = ee.verify_is_valid_for_subject_name(&name).is_ok();
        let ours = ["*.example.com", "exact.test"]
            .iter()
            .any(|p| dns_matches(p, host));
        assert_eq!(ours, theirs, "{host}");
    }
}

#[test]
fn self_signed_fails_unless_pinned() {
    let ss = self_signed(&["127.0.0.1", "localhost"]);
    let o = chain_case(BASE, &[&ss], NONE_OK, None);
    assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
    assert!(sub_of(&o, "e").note.contains("self-signed"), "{o:?}");
    assert_eq!(sub_of(&o, "f").outcome, SubOutcome::Fail);
    // The operator pinned it with --ca-file: private PKI.
    let pinned = chain_case(
        BASE,
        &[&ss],
        &[("bundled", false), ("extra", true)],
        Some(vec![ss.clone()]),
    );
    assert_eq!(sub_of(&pinned, "e").outcome, SubOutcome::Pass, "{pinned:?}");
    assert_eq!(sub_of(&pinned, "f").outcome, SubOutcome::Pass, "{pinned:?}");
}

#[test]
fn os_store_only_is_interception_unknown() {
    let ca = ca("Corp Inspection CA");
    let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
    let mut records = vec![
        accepted_legacy(leg::TLS_V1_0, tlswire::TLS1_0),
        legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
        plain_error(ErrorKind::Connect),
    ];
    records.push(tls(
        &[&leaf, ca.der()],
        Some("TLSv1_3"),
        &[("bundled", false), ("os", true)],
        None,
    ));
    let o = grade(&https(records, None));
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    assert!(sub_of(&o, "f").note.contains("Corp Inspection CA"), "{o:?}");
    assert!(sub_of(&o, "b").note.contains("would be fail"), "{o:?}");
    assert_eq!(o.details["tls_intercepted"], json!(true));
    assert_eq!(o.details["observed_issuer"], json!("Corp Inspection CA"));
}

#[test]
fn unknown_private_ca_is_unknown() {
    let ca = ca("Someone's CA");
    let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
    let o = chain_case(
        BASE,
        &[&leaf, ca.der()],
        &[("bundled", false), ("os", false)],
        None,
    );
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    assert!(sub_of(&o, "f").note.contains("--ca-file"), "{o:?}");
}

#[test]
fn a_forged_signature_fails_offline() {
    // Two CAs with the same name: the leaf is signed by the one not in --ca-file.
    let real = ca("Twin CA");
    let forger = ca("Twin CA");
    let leaf = issued(&forger, &["127.0.0.1"], PAST, FUTURE);
    let o = chain_case(BASE, &[&leaf], NONE_OK, Some(vec![real.der().to_vec()]));
    assert_eq!(sub_of(&o, "f").outcome, SubOutcome::Fail, "{o:#?}");
    assert!(sub_of(&o, "f").note.contains("signature"), "{o:?}");
}

#[test]
fn unparsable_leaf_is_error() {
    let o = chain_case(BASE, &[b"not a certificate"], NONE_OK, None);
    assert_eq!(sub_of(&o, "e").outcome, SubOutcome::Error, "{o:?}");
    assert_eq!(o.verdict, Verdict::Error);
}

#[test]
fn public_roots_in_the_store_pass_the_trust_leg() {
    let ca = ca("CA");
    let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
    let o = chain_case(BASE, &[&leaf], &[("bundled", true), ("os", true)], None);
    assert_eq!(sub_of(&o, "f").outcome, SubOutcome::Pass, "{o:?}");
    assert!(sub_of(&o, "f").note.contains("public roots"));
    assert_eq!(o.verdict, Verdict::Pass);
}
