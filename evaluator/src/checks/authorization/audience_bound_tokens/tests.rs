//! Tests of rule `audience-bound-tokens`.

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
use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::model::{
    Header, HttpExchange, HttpOutcome, MintedToken, Observation, Record, TransportError,
};

const RS: &str = "http://127.0.0.1:8080/mcp";
const LIST: &str = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#;
const OK: &str = r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#;

fn jwt_facts(aud: Value) -> TokenFacts {
    TokenFacts {
        source: "oauth".into(),
        fingerprint: fingerprint(b"own-token"),
        jwt_header: Some(json!({"alg": "RS256"})),
        jwt_claims: Some(json!({"aud": aud, "iss": "http://127.0.0.1:9", "exp": 2, "iat": 1})),
        expires_in: Some(600),
        scope: Some("mcp:tools".into()),
        token_type: Some("Bearer".into()),
    }
}

fn opaque() -> TokenFacts {
    TokenFacts {
        jwt_header: None,
        jwt_claims: None,
        ..jwt_facts(json!(RS))
    }
}

fn prm_404(url: &str) -> Record {
    let mut r = exchange(&[leg::PRM], "", 404, "text/plain", "not found", &[]);
    if let Observation::Http(x) = &mut r.observation {
        x.request.method = "GET".into();
        x.request.url = url.into();
    }
    r
}

fn prm_doc(resource: &str) -> Record {
    let body =
        json!({"resource": resource, "authorization_servers": ["http://127.0.0.1:9"]}).to_string();
    let mut r = exchange(&[leg::PRM], "", 200, "application/json", &body, &[]);
    if let Observation::Http(x) = &mut r.observation {
        x.request.method = "GET".into();
        x.request.url = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp".into();
    }
    r
}

fn detect(status: u16) -> Record {
    exchange(
        &[leg::ENDPOINT_DETECT],
        LIST,
        status,
        "application/json",
        OK,
        &[],
    )
}

fn with_auth(mut r: Record, token: &[u8]) -> Record {
    if let Observation::Http(x) = &mut r.observation {
        x.request.headers.push(Header::new(
            "Authorization",
            format!("Bearer {}", fingerprint(token)),
        ));
    }
    r
}

fn get(url: &str, status: u16, token: bool) -> Record {
    let mut r = exchange(
        &[leg::DOWNSTREAM],
        "",
        status,
        "application/json",
        "{}",
        &[],
    );
    if let Observation::Http(x) = &mut r.observation {
        x.request.method = "GET".into();
        x.request.url = url.into();
    }
    if token {
        with_auth(r, b"own-token")
    } else {
        r
    }
}

fn refused(url: &str, why: &str) -> Record {
    let mut r = get(url, 0, false);
    if let Observation::Http(x) = &mut r.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::RefusedByGuard,
            message: why.into(),
        });
        x.connection = None;
    }
    r
}

fn mint(status: u16, body: Value, resource: &str) -> Record {
    let req = format!(
        "grant_type=refresh_token&refresh_token={}&resource={}&client_id=c",
        fingerprint(b"rt"),
        url::form_urlencoded::byte_serialize(resource.as_bytes()).collect::<String>()
    );
    token_request(leg::FOREIGN_MINT, &req, status, &body)
}

/// A request to the token endpoint serving `l`, answered `status` with `body`.
fn token_request(l: LegId, req: &str, status: u16, body: &Value) -> Record {
    let mut r = exchange(
        &[l],
        req,
        status,
        "application/json",
        &body.to_string(),
        &[],
    );
    if let Observation::Http(x) = &mut r.observation {
        x.request.url = "http://127.0.0.1:9/token".into();
    }
    r
}

fn minted_body() -> Value {
    json!({"access_token": fingerprint(b"foreign"), "token_type": "Bearer",
           "refresh_token": fingerprint(b"rt2"), "expires_in": 600})
}

fn restore(status: u16) -> Record {
    let body = if status == 200 {
        json!({"access_token": fingerprint(b"own2"), "token_type": "Bearer"})
    } else {
        json!({"error": "invalid_grant"})
    };
    token_request(
        leg::FOREIGN_RESTORE,
        "grant_type=refresh_token",
        status,
        &body,
    )
}

fn pair(control: u16, foreign: u16) -> Vec<Record> {
    let body = |s: u16| {
        if s == 200 {
            OK
        } else {
            r#"{"error":"invalid_token"}"#
        }
    };
    vec![
        with_auth(
            exchange(
                &[leg::FOREIGN_CONTROL],
                LIST,
                control,
                "application/json",
                body(control),
                &[],
            ),
            b"own-token",
        ),
        with_auth(
            exchange(
                &[leg::FOREIGN_TOKEN],
                LIST,
                foreign,
                "application/json",
                body(foreign),
                &[],
            ),
            b"foreign",
        ),
    ]
}

fn graded(tokens: Vec<TokenFacts>, records: Vec<Record>, session_rev: Option<&str>) -> Outcome {
    graded_minted(tokens, records, session_rev, Vec::new())
}

/// As [`graded`], with the collector's facts of the tokens its probe grants obtained.
fn graded_minted(
    tokens: Vec<TokenFacts>,
    mut records: Vec<Record>,
    session_rev: Option<&str>,
    minted: Vec<MintedToken>,
) -> Outcome {
    let mut all = vec![detect(200), prm_doc(RS)];
    all.append(&mut records);
    let mut ev = evidence(Some(session(session_rev, json!({"tools": {}}), None)), all);
    if let Some(s) = ev.payload_mut().session.as_mut() {
        s.auth_required = true;
        s.authenticated = !tokens.is_empty();
    }
    ev.payload_mut().tokens = tokens;
    ev.payload_mut().minted_tokens = minted;
    run(&AudienceBoundTokens, &ev, &Context::default())
}

fn full(records: Vec<Record>) -> Outcome {
    graded(vec![jwt_facts(json!(RS))], records, Some("2025-11-25"))
}

fn sub_of(o: &Outcome, id: &str) -> SubOutcome {
    o.subs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.outcome)
        .expect(id)
}

fn note_of<'a>(o: &'a Outcome, id: &str) -> &'a str {
    &o.subs.iter().find(|l| l.id == id).expect(id).note
}

fn no_downstream() -> Record {
    skipped(
        &[leg::DOWNSTREAM],
        "no derived candidates: the endpoint host 127.0.0.1 is an IP address",
    )
}

fn refused_mint() -> Vec<Record> {
    vec![
        no_downstream(),
        mint(
            400,
            json!({"error": "invalid_target", "error_description": "resource indicator is missing, or unknown"}),
            "https://cis-probe.invalid/wrong-audience",
        ),
        skipped(
            &[
                leg::FOREIGN_RESTORE,
                leg::FOREIGN_CONTROL,
                leg::FOREIGN_TOKEN,
            ],
            "not sent: the authorization server refused to mint",
        ),
    ]
}

#[test]
fn no_oauth_observed_is_na() {
    let ev = evidence(
        Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
        vec![
            detect(200),
            prm_404("http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"),
            prm_404("http://127.0.0.1:8080/.well-known/oauth-protected-resource"),
        ],
    );
    let o = run(&AudienceBoundTokens, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert!(o.evidence.contains("no OAuth"), "{}", o.evidence);
}

#[test]
fn oauth_without_token_is_unknown() {
    let o = graded(vec![], vec![], Some("2025-11-25"));
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(o.evidence.contains("no token is held"), "{}", o.evidence);
    assert_eq!(o.details["legs"]["b"], json!("unknown"));
    assert_eq!(o.details["hosts_probed"], json!([]));
}

#[test]
fn no_endpoint_is_error() {
    let ev = evidence(None, vec![]);
    let o = run(&AudienceBoundTokens, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Error, "{o:?}");
}

#[test]
fn leg_a_branches() {
    let o = full(refused_mint());
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Pass, "{o:?}");
    // Among the audiences (an extra one is `no-token-passthrough`'s business), trailing slash ignored.
    let o = graded(
        vec![jwt_facts(json!(["http://x.example/", format!("{RS}/")]))],
        refused_mint(),
        Some("2025-11-25"),
    );
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Pass, "{o:?}");
    let o = graded(
        vec![jwt_facts(json!("http://127.0.0.1:1/mcp"))],
        refused_mint(),
        Some("2025-11-25"),
    );
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Fail, "{o:?}");
    assert_eq!(o.verdict, Verdict::Fail);
    let o = graded(vec![opaque()], refused_mint(), Some("2025-11-25"));
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Unknown, "{o:?}");
    assert!(note_of(&o, SUB_A).contains("opaque"));
    let mut no_aud = jwt_facts(json!(RS));
    no_aud.jwt_claims = Some(json!({"iss": "x"}));
    let o = graded(vec![no_aud], refused_mint(), Some("2025-11-25"));
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Unknown, "{o:?}");
    // An application id (Microsoft Entra ID) may be this server's own name: not a FAIL.
    let o = graded(
        vec![jwt_facts(json!("6731de76-14a6-49ae-97bc-6eba6914391e"))],
        refused_mint(),
        Some("2025-11-25"),
    );
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        "application id or API identifier",
    );
    // A web address that is not this resource still fails, beside an identifier.
    let o = graded(
        vec![jwt_facts(json!([
            "6731de76-14a6-49ae-97bc-6eba6914391e",
            "https://other.example/api"
        ]))],
        refused_mint(),
        Some("2025-11-25"),
    );
    assert_eq!(sub_of(&o, SUB_A), SubOutcome::Fail, "{o:?}");
}

/// Leg `id` of `o` has `outcome`, and its note contains `part`.
fn assert_sub(o: &Outcome, id: &str, outcome: SubOutcome, part: &str) {
    assert_eq!(sub_of(o, id), outcome, "{o:?}");
    assert!(note_of(o, id).contains(part), "{o:?}");
}

#[test]
fn leg_a_uses_a_covering_prm_resource() {
    let mut recs = vec![detect(200), prm_doc("http://127.0.0.1:8080/")];
    recs.extend(refused_mint());
    let mut ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), recs);
    ev.payload_mut().tokens = vec![jwt_facts(json!("http://127.0.0.1:8080/"))];
    let o = run(&AudienceBoundTokens, &ev, &Context::default());
    assert_sub(&o, SUB_A, SubOutcome::Pass, "protected-resource metadata");
}

#[test]
fn leg_b_refused_to_mint_is_unknown_naming_invalid_target() {
    let o = full(refused_mint());
    assert_eq!(sub_of(&o, SUB_B), SubOutcome::Unknown, "{o:?}");
    let n = note_of(&o, SUB_B);
    assert!(
        n.contains("refused to mint") && n.contains("invalid_target"),
        "{n}"
    );
    assert_eq!(
        o.details["wrong_resource"],
        json!("https://cis-probe.invalid/wrong-audience")
    );
    assert_eq!(o.verdict, Verdict::Unknown);
}

fn minted(control: u16, foreign: u16, restored: Option<u16>) -> Outcome {
    let mut r = vec![
        no_downstream(),
        mint(200, minted_body(), "http://127.0.0.1:1/mcp"),
    ];
    match restored {
        Some(s) => r.push(restore(s)),
        None => r.push(skipped(&[leg::FOREIGN_RESTORE], "not sent: the wrong-audience grant did not rotate the refresh token (the cached one still stands)")),
    }
    r.extend(pair(control, foreign));
    full(r)
}

#[test]
fn leg_b_foreign_refused_passes_and_names_the_restore() {
    let o = minted(200, 401, Some(200));
    assert_sub(&o, SUB_B, SubOutcome::Pass, "chain was restored");
    let o = minted(200, 403, None);
    assert_sub(&o, SUB_B, SubOutcome::Pass, "still stands");
    let o = minted(200, 401, Some(400));
    assert_sub(&o, SUB_B, SubOutcome::Pass, "restore did not succeed");
}

#[test]
fn leg_b_foreign_accepted_fails() {
    let o = minted(200, 200, Some(200));
    assert_eq!(sub_of(&o, SUB_B), SubOutcome::Fail, "{o:?}");
    assert_eq!(o.verdict, Verdict::Fail);
}

#[test]
fn leg_b_control_refused_is_unknown() {
    let o = minted(401, 401, Some(200));
    assert_sub(&o, SUB_B, SubOutcome::Unknown, "not attributable");
    let o = minted(200, 400, Some(200));
    assert_eq!(sub_of(&o, SUB_B), SubOutcome::Unknown, "{o:?}");
}

#[test]
fn leg_b_current_token_again_is_unknown() {
    let body = json!({"access_token": fingerprint(b"own-token"), "token_type": "Bearer"});
    let o = full(vec![
        no_downstream(),
        mint(200, body, "https://cis-probe.invalid/wrong-audience"),
        skipped(&[leg::FOREIGN_RESTORE], "not sent: no rotation"),
        skipped(
            &[leg::FOREIGN_CONTROL, leg::FOREIGN_TOKEN],
            "not sent: the authorization server answered with the current access token again",
        ),
    ]);
    assert_sub(&o, SUB_B, SubOutcome::Unknown, "current access token");
}

#[test]
fn leg_b_skipped_and_transport_error_are_unknown() {
    let o = full(vec![
        no_downstream(),
        skipped(
            &[leg::FOREIGN_MINT, leg::FOREIGN_RESTORE, leg::FOREIGN_CONTROL, leg::FOREIGN_TOKEN],
            "not sent: no refresh token (the credential was not obtained by an OAuth login of this run, e.g. --token-env)",
        ),
    ]);
    assert_sub(&o, SUB_B, SubOutcome::Unknown, "no refresh token");
    let mut m = mint(200, json!({}), "https://cis-probe.invalid/wrong-audience");
    if let Observation::Http(HttpExchange { outcome, .. }) = &mut m.observation {
        *outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::Timeout,
            message: "timed out".into(),
        });
    }
    let o = full(vec![no_downstream(), m]);
    assert_sub(&o, SUB_B, SubOutcome::Unknown, "no answer");
}

#[test]
fn legs_missing_from_an_old_bundle_are_error() {
    let o = full(vec![]);
    assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    assert!(
        note_of(&o, SUB_B).contains(leg::FOREIGN_MINT.as_str()),
        "{o:?}"
    );
    // Without a session (the credential was refused) the legs were never sent.
    let o = graded(vec![jwt_facts(json!(RS))], vec![], None);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Unknown, "{o:?}");
}

fn downstream(records: Vec<Record>) -> Outcome {
    let mut r = records;
    r.extend(refused_mint().into_iter().skip(1));
    full(r)
}

#[test]
fn leg_c_branches() {
    let api = "https://api.example.com/me";
    let apex = "https://example.com/user";
    // 401 with the token: pass.
    let o = downstream(vec![get(api, 401, true), get(api, 401, false)]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Pass, "{o:?}");
    assert_eq!(o.details["downstream_outcomes"][api], json!("pass"));
    assert_eq!(o.details["hosts_probed"], json!(["api.example.com"]));
    // 200 with, 401 without: accepted -> fail.
    let o = downstream(vec![get(api, 200, true), get(api, 401, false)]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Fail, "{o:?}");
    // 403 with, 401 without: authenticated then denied -> fail.
    let o = downstream(vec![get(api, 403, true), get(api, 401, false)]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Fail, "{o:?}");
    // Same status both ways: unknown.
    let o = downstream(vec![get(api, 200, true), get(api, 200, false)]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Unknown, "{o:?}");
    assert!(note_of(&o, SUB_C).contains("none produced a usable comparison"));
    // Any pass beats unknowns; any fail beats passes.
    let o = downstream(vec![
        get(api, 404, true),
        get(api, 404, false),
        get(apex, 401, true),
        get(apex, 200, false),
    ]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Pass, "{o:?}");
    let o = downstream(vec![
        get(api, 200, true),
        get(api, 401, false),
        get(apex, 401, true),
        get(apex, 401, false),
    ]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Fail, "{o:?}");
}

#[test]
fn leg_c_refused_candidates_are_listed() {
    let o = downstream(vec![
        no_downstream(),
        refused("https://evil.example/me", "refused https://evil.example/me: no credential to https://evil.example/me: evil.example is not the endpoint host 127.0.0.1"),
    ]);
    assert_eq!(sub_of(&o, SUB_C), SubOutcome::Unknown, "{o:?}");
    let n = note_of(&o, SUB_C);
    assert!(
        n.contains("no candidate probed") && n.contains("IP address") && n.contains("1 refused"),
        "{n}"
    );
    assert!(o.details["candidates_refused"]["https://evil.example/me"]
        .as_str()
        .is_some_and(|s| s.contains("not the endpoint host")));
}

// ---------------------------------------------------------------------------------------
// b: what the minted token's recorded facts say
// ---------------------------------------------------------------------------------------

const FOREIGN: &str = "http://127.0.0.1:1/mcp";

/// The collector's facts of the token the wrong-audience grant minted (fingerprint of
/// `b"foreign"`, as [`minted_body`] answers): a JWT naming `aud`, or opaque (`None`).
fn mint_facts(aud: Option<Value>) -> MintedToken {
    let mut token = jwt_facts(aud.clone().unwrap_or(Value::Null));
    token.source = "oauth-grant".into();
    token.fingerprint = fingerprint(b"foreign");
    if aud.is_none() {
        token.jwt_header = None;
        token.jwt_claims = None;
    }
    MintedToken {
        leg: leg::FOREIGN_MINT.to_string(),
        seq: Some(3),
        requested_resource: Some(FOREIGN.into()),
        login_resource: Some(RS.into()),
        token,
    }
}

/// The minted pair (control `control`, foreign `foreign`) with the mint's facts.
fn minted_with(control: u16, foreign: u16, facts: Option<MintedToken>) -> Outcome {
    let mut r = vec![
        no_downstream(),
        mint(200, minted_body(), FOREIGN),
        restore(200),
    ];
    r.extend(pair(control, foreign));
    graded_minted(
        vec![jwt_facts(json!(RS))],
        r,
        Some("2025-11-25"),
        facts.into_iter().collect(),
    )
}

#[test]
fn leg_b_a_mint_naming_the_audited_resource_is_unknown_not_fail() {
    // The AS ignored `resource`: the "foreign" token names the audited resource (one
    // trailing slash ignored, a string or an array), and the server rightly accepts it.
    for aud in [json!(RS), json!(format!("{RS}/")), json!([RS])] {
        let o = minted_with(200, 200, Some(mint_facts(Some(aud.clone()))));
        assert_ne!(o.verdict, Verdict::Fail, "{aud}: {o:?}");
        assert_sub(
            &o,
            SUB_B,
            SubOutcome::Unknown,
            "the authorization server ignored the RFC 8707 resource parameter: the token minted for \
             http://127.0.0.1:1/mcp names",
        );
        assert!(
            note_of(&o, SUB_B).contains("no foreign token was presented"),
            "{o:?}"
        );
        assert_eq!(o.details["minted_binding"], json!("audited_resource"));
    }
    // Refused all the same: still not decidable (nothing foreign was presented).
    let o = minted_with(200, 401, Some(mint_facts(Some(json!(RS)))));
    assert_sub(
        &o,
        SUB_B,
        SubOutcome::Unknown,
        "not decidable from this pair",
    );
}

#[test]
fn leg_b_a_mint_naming_the_foreign_or_another_audience_and_accepted_fails() {
    let o = minted_with(200, 200, Some(mint_facts(Some(json!(FOREIGN)))));
    assert_sub(
        &o,
        SUB_B,
        SubOutcome::Fail,
        "the token minted for http://127.0.0.1:1/mcp names http://127.0.0.1:1/mcp",
    );
    assert_eq!(o.verdict, Verdict::Fail);
    assert_eq!(o.details["minted_binding"], json!("foreign"));
    // A tenant's default audience that is not the audited resource: a token for another
    // resource all the same.
    let o = minted_with(
        200,
        200,
        Some(mint_facts(Some(json!("https://api.example.com")))),
    );
    assert_sub(&o, SUB_B, SubOutcome::Fail, "not the audited resource");
    // Refused: pass, as before.
    let o = minted_with(200, 401, Some(mint_facts(Some(json!(FOREIGN)))));
    assert_eq!(sub_of(&o, SUB_B), SubOutcome::Pass, "{o:?}");
}

#[test]
fn leg_b_an_opaque_or_audienceless_mint_accepted_is_unknown_refused_passes() {
    let o = minted_with(200, 200, Some(mint_facts(None)));
    assert_sub(&o, SUB_B, SubOutcome::Unknown, "the binding is unverified");
    assert!(note_of(&o, SUB_B).contains("opaque"), "{o:?}");
    assert_ne!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(o.details["minted_binding"], json!("unverified"));
    let mut no_aud = mint_facts(Some(json!(RS)));
    no_aud.token.jwt_claims = Some(json!({"iss": "http://127.0.0.1:9"}));
    let o = minted_with(200, 200, Some(no_aud));
    assert_sub(&o, SUB_B, SubOutcome::Unknown, "without an aud claim");
    // A refusal of it is still a refusal.
    let o = minted_with(200, 403, Some(mint_facts(None)));
    assert_eq!(sub_of(&o, SUB_B), SubOutcome::Pass, "{o:?}");
}

#[test]
fn leg_b_an_older_bundle_without_the_mint_facts_keeps_its_verdict_and_says_so() {
    let o = minted_with(200, 200, None);
    assert_sub(
        &o,
        SUB_B,
        SubOutcome::Fail,
        "the minted token's claims were not recorded by the collector that wrote this bundle \
         (mcp-collect 0.0.0-test, build test: no minted_tokens entry for 3.3.1b.mint)",
    );
    assert_eq!(o.verdict, Verdict::Fail);
    assert_eq!(o.details["minted_binding"], json!("not_recorded"));
    let o = minted_with(200, 401, None);
    assert_sub(&o, SUB_B, SubOutcome::Pass, "were not recorded");
    // Facts of another token (the restore's) do not stand for the mint's.
    let mut other = mint_facts(Some(json!(RS)));
    other.leg = leg::FOREIGN_RESTORE.to_string();
    let o = minted_with(200, 200, Some(other));
    assert_sub(&o, SUB_B, SubOutcome::Fail, "were not recorded");
}
