//! Tests of rule `static-client-safeguards`.

use super::*;
use crate::fixture::{evidence, exchange, session, skipped};
/// The rule graded directly, rendered outside any definition (local names).
fn run(
    check: &dyn crate::check::Check,
    ev: &crate::evidence::Bundle,
    cx: &crate::check::Context<'_>,
) -> crate::verdict::Outcome {
    crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
}
use mcp_probe_schema::model::{Observation, Record, TransportError};

const AS: &str = "http://127.0.0.1:9";
const UP: &str = "https://upstream.example/authorize";

fn http(
    l: LegId,
    method: &str,
    url: &str,
    status: u16,
    body: &str,
    headers: &[(&str, &str)],
) -> Record {
    let mut r = exchange(&[l], "", status, "application/json", body, headers);
    if let Observation::Http(x) = &mut r.observation {
        x.request.method = method.to_string().into();
        x.request.url = url.into();
    }
    r
}

fn failed(mut r: Record, kind: ErrorKind) -> Record {
    if let Observation::Http(x) = &mut r.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind,
            message: "connection refused".into(),
        });
        x.connection = None;
    }
    r
}

fn prm(status: u16) -> Record {
    let body = if status == 200 {
        json!({"resource": "http://127.0.0.1:8080/mcp", "authorization_servers": [AS]}).to_string()
    } else {
        "not found".into()
    };
    http(
        leg::PRM,
        "GET",
        "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
        status,
        &body,
        &[],
    )
}

fn meta(auth: &str) -> Record {
    let body = json!({"issuer": AS, "authorization_endpoint": auth, "registration_endpoint": format!("{AS}/reg"),
                      "token_endpoint": format!("{AS}/token")});
    http(
        leg::AS_META,
        "GET",
        &format!("{AS}/.well-known/oauth-authorization-server"),
        200,
        &body.to_string(),
        &[],
    )
}

fn reg(l: LegId, id: &str) -> Record {
    http(
        l,
        "POST",
        &format!("{AS}/reg"),
        201,
        &json!({"client_id": id}).to_string(),
        &[],
    )
}

fn auth(l: LegId, id: &str, status: u16, loc: Option<&str>) -> Record {
    let url = format!("{AS}/auth?response_type=code&client_id={id}");
    match loc {
        Some(l2) => http(l, "GET", &url, status, "", &[("location", l2)]),
        None => http(l, "GET", &url, status, "<html>consent</html>", &[]),
    }
}

fn grade(records: Vec<Record>) -> Outcome {
    let mut all = vec![prm(200)];
    all.extend(records);
    let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), all);
    run(&StaticClientSafeguards, &ev, &Context::default())
}

fn static_pre() -> Vec<Record> {
    let onward =
        format!("{UP}?client_id=static-1&redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fcallback");
    vec![
        meta(&format!("{AS}/auth")),
        reg(leg::DEPUTY_REGISTER, "c1"),
        auth(leg::DEPUTY_AUTHORIZE, "c1", 302, Some(&onward)),
        reg(leg::DEPUTY_REGISTER, "c2"),
        auth(leg::DEPUTY_AUTHORIZE, "c2", 302, Some(&onward)),
    ]
}

fn callback(status: u16, control: u16, body: &str, loc: Option<&str>) -> Vec<Record> {
    let h: Vec<(&str, &str)> = loc.map(|l| vec![("location", l)]).unwrap_or_default();
    vec![
        http(leg::DEPUTY_CALLBACK, "GET", "http://127.0.0.1:8080/callback?code=cis-probe-fabricated-code&state=cis-probe-unissued-state", status, body, &h),
        http(leg::DEPUTY_CALLBACK, "GET", "http://127.0.0.1:8080/cis-probe-no-such-path", control, "nf", &[]),
    ]
}

fn full(a: Record, b: Vec<Record>, c: Vec<Record>) -> Outcome {
    let mut r = static_pre();
    r.push(a);
    r.extend(b);
    r.extend(c);
    grade(r)
}

fn varied(status: u16, loc: Option<&str>) -> Record {
    let mut r = auth(leg::DEPUTY_REDIRECT, "c1", status, loc);
    if loc.is_none() && status == 400 {
        r = http(
            leg::DEPUTY_REDIRECT,
            "GET",
            &format!("{AS}/auth?client_id=c1"),
            400,
            r#"{"error":"invalid_redirect_uri"}"#,
            &[],
        );
    }
    r
}

fn consent(loc: Option<&str>, status: u16) -> Vec<Record> {
    vec![
        reg(leg::DEPUTY_CONSENT, "c3"),
        auth(leg::DEPUTY_CONSENT, "c3", status, loc),
    ]
}

fn sub_of(o: &Outcome, id: &str) -> SubOutcome {
    o.subs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.outcome)
        .unwrap_or_else(|| panic!("{id}: {o:?}"))
}

#[test]
fn gate_no_metadata_na_or_unknown() {
    let ev = evidence(
        Some(session(Some("2025-11-25"), json!({}), None)),
        vec![prm(404)],
    );
    let o = run(&StaticClientSafeguards, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert_eq!(o.details["legs"], json!({}));
    let ev = evidence(
        Some(session(Some("2025-11-25"), json!({}), None)),
        vec![prm(503)],
    );
    let o = run(&StaticClientSafeguards, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(o.evidence.contains("HTTP 503"), "{}", o.evidence);
    // A PRM document whose AS did not answer: unanswered -> unknown.
    let o = grade(vec![failed(
        http(
            leg::AS_META,
            "GET",
            &format!("{AS}/.well-known/oauth-authorization-server"),
            0,
            "",
            &[],
        ),
        ErrorKind::Connect,
    )]);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    // No discovery leg at all: an old bundle.
    let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), vec![]);
    assert_eq!(
        run(&StaticClientSafeguards, &ev, &Context::default()).verdict,
        Verdict::Error
    );
    let ev = evidence(None, vec![]);
    assert_eq!(
        run(&StaticClientSafeguards, &ev, &Context::default()).verdict,
        Verdict::Error
    );
}

#[test]
fn gate_metadata_branches() {
    let o = grade(vec![http(
        leg::AS_META,
        "GET",
        AS,
        200,
        &json!({"issuer": AS, "registration_endpoint": "x"}).to_string(),
        &[],
    )]);
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert!(o.evidence.contains("no authorization_endpoint"));
    let o = grade(vec![meta("not a url")]);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    let o = grade(vec![http(
        leg::AS_META,
        "GET",
        AS,
        200,
        &json!({"issuer": AS, "authorization_endpoint": format!("{AS}/auth")}).to_string(),
        &[],
    )]);
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert!(o.evidence.contains("no registration_endpoint"));
    // Own host:port: authorizes for itself; another port is another service.
    let o = grade(vec![meta("http://127.0.0.1:8080/authorize")]);
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert!(
        o.evidence.contains("authorizes for itself"),
        "{}",
        o.evidence
    );
    let o = grade(vec![meta(&format!("{AS}/auth"))]);
    assert_eq!(o.verdict, Verdict::Error, "gate open, legs missing: {o:?}");
    // Gate open without a session: not sent, unknown.
    let ev = evidence(
        Some(session(None, json!({}), None)),
        vec![prm(200), meta(&format!("{AS}/auth"))],
    );
    let o = run(&StaticClientSafeguards, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    // Skipped (--info): unknown with the reason.
    let o = grade(vec![
        meta(&format!("{AS}/auth")),
        skipped(
            &[leg::DEPUTY_REGISTER, leg::DEPUTY_AUTHORIZE],
            "not sent: --info run",
        ),
    ]);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(o.evidence.contains("--info"), "{}", o.evidence);
}

#[test]
fn registration_refused_is_unknown_and_unanswered_is_error() {
    let o = grade(vec![
        meta(&format!("{AS}/auth")),
        http(
            leg::DEPUTY_REGISTER,
            "POST",
            &format!("{AS}/reg"),
            401,
            r#"{"error":"invalid_token"}"#,
            &[],
        ),
        skipped(
            &[leg::DEPUTY_AUTHORIZE],
            "not sent: scratch client registration #1 failed (HTTP 401 invalid_token)",
        ),
    ]);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence.contains("invalid_token") && o.evidence.contains("not established"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["legs"], json!({PRE: "unknown"}));
    let o = grade(vec![
        meta(&format!("{AS}/auth")),
        failed(reg(leg::DEPUTY_REGISTER, "x"), ErrorKind::Connect),
    ]);
    assert_eq!(o.verdict, Verdict::Error, "{o:?}");
}

#[test]
fn a_pre_registered_client_leaves_registration_unprobed() {
    let mut all = vec![
        prm(200),
        meta(&format!("{AS}/auth")),
        skipped(
            &[
                leg::DEPUTY_REGISTER,
                leg::DEPUTY_AUTHORIZE,
                leg::DEPUTY_REDIRECT,
                leg::DEPUTY_CALLBACK,
                leg::DEPUTY_CONSENT,
            ],
            "not sent: pre-registered client: registration not probed (--client-id)",
        ),
    ];
    let mut ev = evidence(
        Some(session(Some("2025-11-25"), json!({}), None)),
        all.clone(),
    );
    ev.payload_mut().run.options.pre_registered_client =
        Some(mcp_probe_schema::model::PreRegisteredClient {
            client_id: "corp-client".into(),
            secret_env: Some("CORP_SECRET".into()),
        });
    let o = run(&StaticClientSafeguards, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence
            .contains("pre-registered client: registration not probed")
            && o.evidence.contains("corp-client"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["legs"], json!({PRE: "unknown"}));
    // Without a registration endpoint the gate's N/A still comes first.
    all[1] = http(
        leg::AS_META,
        "GET",
        &format!("{AS}/.well-known/oauth-authorization-server"),
        200,
        &json!({"issuer": AS, "authorization_endpoint": format!("{AS}/auth")}).to_string(),
        &[],
    );
    let mut ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), all);
    ev.payload_mut().run.options.pre_registered_client =
        Some(mcp_probe_schema::model::PreRegisteredClient {
            client_id: "corp-client".into(),
            secret_env: None,
        });
    let o = run(&StaticClientSafeguards, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
}

#[test]
fn no_shared_onward_client_id_is_na() {
    let o = grade(vec![
        meta(&format!("{AS}/auth")),
        reg(leg::DEPUTY_REGISTER, "c1"),
        auth(leg::DEPUTY_AUTHORIZE, "c1", 303, Some("/interaction/abc")),
        reg(leg::DEPUTY_REGISTER, "c2"),
        auth(leg::DEPUTY_AUTHORIZE, "c2", 303, Some("/interaction/def")),
        skipped(
            &[
                leg::DEPUTY_REDIRECT,
                leg::DEPUTY_CALLBACK,
                leg::DEPUTY_CONSENT,
            ],
            "not sent",
        ),
    ]);
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert!(
        o.evidence.contains("not one shared static client id"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["registrations"], json!(["c1", "c2"]));
    assert_eq!(o.details["downstream_client_ids"], json!([null, null]));
    // Different per-client ids: not static.
    let o = grade(vec![
        meta(&format!("{AS}/auth")),
        reg(leg::DEPUTY_REGISTER, "c1"),
        auth(
            leg::DEPUTY_AUTHORIZE,
            "c1",
            302,
            Some("/login?client_id=c1"),
        ),
        reg(leg::DEPUTY_REGISTER, "c2"),
        auth(
            leg::DEPUTY_AUTHORIZE,
            "c2",
            302,
            Some("/login?client_id=c2"),
        ),
    ]);
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
}

fn good_b() -> Vec<Record> {
    callback(400, 404, r#"{"error":"invalid_request"}"#, None)
}

#[test]
fn all_safeguards_pass() {
    let o = full(varied(400, None), good_b(), consent(None, 200));
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(sub_of(&o, PRE), SubOutcome::Pass);
    assert_eq!(o.details["registrations"], json!(["c1", "c2", "c3"]));
    assert_eq!(
        o.details["downstream_client_ids"],
        json!(["static-1", "static-1"])
    );
}

#[test]
fn leg_a_branches() {
    let cases: Vec<(Record, SubOutcome)> = vec![
        (
            varied(
                302,
                Some("https://cis-probe-attacker.invalid/callback?code=abc"),
            ),
            SubOutcome::Fail,
        ),
        (
            varied(
                302,
                Some("https://cis-probe-attacker.invalid/callback#code=abc"),
            ),
            SubOutcome::Fail,
        ),
        (
            varied(302, Some("https://cis-probe-attacker.invalid/callback")),
            SubOutcome::Fail,
        ),
        (
            varied(
                302,
                Some("http://127.0.0.1:33418/callback?error=invalid_request"),
            ),
            SubOutcome::Pass,
        ),
        (
            varied(302, Some(&format!("{UP}?client_id=static-1"))),
            SubOutcome::Unknown,
        ),
        (varied(400, None), SubOutcome::Pass),
        (varied(200, None), SubOutcome::Unknown),
        (
            failed(varied(200, None), ErrorKind::Timeout),
            SubOutcome::Error,
        ),
    ];
    for (r, want) in cases {
        let o = full(r, good_b(), consent(None, 200));
        assert_eq!(sub_of(&o, SUB_A), want, "{o:?}");
    }
    let o = grade(
        vec![meta(&format!("{AS}/auth"))]
            .into_iter()
            .chain(static_pre().into_iter().skip(1))
            .chain([skipped(&[leg::DEPUTY_REDIRECT], "not sent: x")])
            .chain(good_b())
            .chain(consent(None, 200))
            .collect(),
    );
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Unknown, "{o:?}");
}

#[test]
fn leg_b_branches() {
    let cases: Vec<(Vec<Record>, SubOutcome)> = vec![
        (
            callback(
                302,
                404,
                "",
                Some("http://client.example/cb?code=cis-probe-fabricated-code"),
            ),
            SubOutcome::Fail,
        ),
        (callback(302, 404, "", Some("/error")), SubOutcome::Pass),
        (
            callback(400, 404, r#"{"error":"invalid_state"}"#, None),
            SubOutcome::Pass,
        ),
        (
            callback(400, 404, "error=invalid_request", None),
            SubOutcome::Pass,
        ),
        (callback(400, 404, "bad request", None), SubOutcome::Error),
        (callback(404, 404, "", None), SubOutcome::Error),
        (callback(200, 404, "ok", None), SubOutcome::Fail),
        (callback(502, 404, "", None), SubOutcome::Error),
        (
            callback(400, 503, r#"{"error":"x"}"#, None),
            SubOutcome::Error,
        ),
    ];
    for (b, want) in cases {
        let o = full(varied(400, None), b, consent(None, 200));
        assert_eq!(sub_of(&o, SUB_B), want, "{o:?}");
    }
}

#[test]
fn leg_c_fails_only_on_the_shared_client_id() {
    // A redirect to another host (a corporate IdP) is not a hand-off.
    let o = full(
        varied(400, None),
        good_b(),
        consent(Some("https://idp.corp.example/login?client_id=c3"), 302),
    );
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Pass, "{o:?}");
    let o = full(
        varied(400, None),
        good_b(),
        consent(Some(&format!("{UP}?client_id=static-1")), 302),
    );
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Fail, "{o:?}");
    assert_eq!(o.verdict, Verdict::Fail);
    let o = full(varied(400, None), good_b(), consent(None, 500));
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Error, "{o:?}");
    let refused = vec![http(
        leg::DEPUTY_CONSENT,
        "POST",
        &format!("{AS}/reg"),
        429,
        "{}",
        &[],
    )];
    let o = full(varied(400, None), good_b(), refused);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Unknown, "{o:?}");
    let o = full(
        varied(400, None),
        good_b(),
        vec![skipped(&[leg::DEPUTY_CONSENT], "not sent: y")],
    );
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Unknown, "{o:?}");
}

/// Metadata the collector refused (its issuer is not the one it was fetched for) is never
/// read: the gate does not open on its endpoints, and the verdict names the refusal.
#[test]
fn refused_metadata_is_never_read() {
    let mut m = meta(&format!("{AS}/auth"));
    if let mcp_probe_schema::model::Observation::Http(x) = &mut m.observation {
        x.refused = Some(Box::new(mcp_probe_schema::model::MetadataRefusal {
            member: "issuer".into(),
            expected: "https://other.example".into(),
            served: json!(AS),
            rule: "RFC 8414 §3.3".into(),
        }));
    }
    let o = grade(vec![m]);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence.contains("refused by the collector") && o.evidence.contains("issuer mismatch"),
        "{}",
        o.evidence
    );
    assert!(
        !o.evidence.contains("/auth"),
        "its endpoints are not read: {}",
        o.evidence
    );
}

/// A server that takes clients only by client ID metadata document is not "nothing can
/// be registered" (N/A): it authorizes clients, and the probe did not reach them.
#[test]
fn a_metadata_document_only_server_is_unknown_not_na() {
    let o = grade(vec![http(
        leg::AS_META,
        "GET",
        AS,
        200,
        &json!({"issuer": AS, "authorization_endpoint": format!("{AS}/auth"),
                "client_id_metadata_document_supported": true})
        .to_string(),
        &[],
    )]);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence.contains("client ID metadata documents"),
        "{}",
        o.evidence
    );
}
