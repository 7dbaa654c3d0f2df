//! Records, tokens and bundles the OAuth checks' tests share.

pub(crate) use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, TokenFacts};
pub(crate) use mcp_probe_schema::vocab::{leg, LegId};
pub(crate) use serde_json::{json, Value};

pub(crate) use crate::check::{Check, Context};
pub(crate) use crate::evidence::Bundle;
pub(crate) use crate::verdict::{Outcome, SubOutcome, Verdict};

pub(crate) use crate::fixture::sub as sub_of;
pub(crate) use crate::fixture::{evidence, examples, exchange, session, skipped, ENDPOINT as EP};
pub(crate) use base64::Engine;
pub(crate) use mcp_probe_schema::model::{Header, Record, TransportError};
pub(crate) use mcp_probe_schema::redact::decode_jwt;
pub(crate) use mcp_probe_schema::testkit;

pub(crate) const PRM_PATH: &str = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp";
pub(crate) const PRM_ROOT: &str = "http://127.0.0.1:8080/.well-known/oauth-protected-resource";
pub(crate) const AS: &str = "http://127.0.0.1:9000";
pub(crate) const AS_FORM: &str = "http://127.0.0.1:9000/.well-known/oauth-authorization-server";
pub(crate) const AS_OIDC: &str = "http://127.0.0.1:9000/.well-known/openid-configuration";
pub(crate) const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
pub(crate) const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;

// ----- records

pub(crate) fn get(l: LegId, url: &str, status: u16, body: &str) -> Record {
    let mut r = testkit::http_record(&[l], url, "", status, body.as_bytes());
    if let Observation::Http(x) = &mut r.observation {
        x.request.method = "GET".into();
        x.request.headers = vec![Header::new("Accept", "application/json")];
    }
    r
}

pub(crate) fn failed(l: LegId, url: &str, kind: ErrorKind) -> Record {
    let mut r = get(l, url, 200, "");
    if let Observation::Http(x) = &mut r.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind,
            message: format!("{} for {url}", kind.as_str()),
        });
    }
    r
}

pub(crate) fn with_credential(mut r: Record) -> Record {
    if let Observation::Http(x) = &mut r.observation {
        x.request
            .headers
            .push(Header::new("Authorization", "Bearer redacted:sha256:00"));
    }
    r
}

pub(crate) fn detect_ok() -> Record {
    exchange(
        &[leg::ENDPOINT_DETECT],
        INIT,
        200,
        "application/json",
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#,
        &[],
    )
}

pub(crate) fn detect_401(www: &[&str]) -> Record {
    let headers: Vec<(&str, &str)> = www.iter().map(|w| ("WWW-Authenticate", *w)).collect();
    exchange(
        &[leg::ENDPOINT_DETECT],
        INIT,
        401,
        "application/json",
        r#"{"error": "invalid_token", "error_description": "Authentication required"}"#,
        &headers,
    )
}

pub(crate) fn challenge(rm: &str) -> String {
    format!(
        r#"Bearer error="invalid_token", error_description="Authentication required", resource_metadata="{rm}""#
    )
}

pub(crate) fn prm_doc(resource: &str, servers: Value, scopes: Option<Value>) -> String {
    let mut d = json!({"resource": resource, "authorization_servers": servers,
                       "bearer_methods_supported": ["header"]});
    if let Some(s) = scopes {
        d["scopes_supported"] = s;
    }
    d.to_string()
}

pub(crate) fn as_meta(issuer: &str) -> String {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/auth"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/reg"),
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": ["openid", "offline_access", "mcp:tools", "mcp:read"],
    })
    .to_string()
}

/// The lab's py2-auth as discovery records it: 401 naming the path-inserted URL,
/// that document, a 404 at the root, the AS metadata at its first form.
pub(crate) fn lab_auth_records() -> Vec<Record> {
    vec![
        detect_401(&[&challenge(PRM_PATH)]),
        get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(EP, json!([AS]), Some(json!(["mcp:tools"]))),
        ),
        get(leg::PRM, PRM_ROOT, 404, "Not Found"),
        get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
    ]
}

pub(crate) fn no_oauth_records() -> Vec<Record> {
    vec![
        detect_ok(),
        get(leg::PRM, PRM_PATH, 404, "Not Found"),
        get(leg::PRM, PRM_ROOT, 404, "Not Found"),
        skipped(
            &[leg::AS_META],
            "not sent: no protected-resource metadata document was served (no 200 JSON object)",
        ),
    ]
}

/// A server that answers without a credential (negotiated in record 0).
pub(crate) fn open_server(records: Vec<Record>) -> Bundle {
    evidence(
        Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
        records,
    )
}

/// A server that answered 401 to a run without a credential: no revision.
pub(crate) fn protected(records: Vec<Record>) -> Bundle {
    let mut s = session(None, json!({}), None);
    s.auth_required = true;
    s.capabilities = None;
    s.negotiated_in = None;
    evidence(Some(s), records)
}

/// A run that presented `tokens` from the first request (detection carried them).
pub(crate) fn credentialed(
    auth_required: bool,
    records: Vec<Record>,
    tokens: Vec<TokenFacts>,
) -> Bundle {
    let mut s = session(Some("2025-11-25"), json!({"tools": {}}), None);
    s.auth_required = auth_required;
    s.authenticated = true;
    let mut ev = evidence(Some(s), records);
    ev.payload_mut().tokens = tokens;
    ev
}

pub(crate) fn detect_ok_with_credential() -> Record {
    with_credential(detect_ok())
}

// ----- tokens

pub(crate) fn b64(v: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

pub(crate) fn jwt(claims: Value) -> String {
    format!(
        "{}.{}.c2lnbmF0dXJl",
        b64(&json!({"alg": "RS256", "typ": "at+jwt", "kid": "rs1"})),
        b64(&claims)
    )
}

pub(crate) fn jwt_token(claims: Value, expires_in: Option<i64>, scope: Option<&str>) -> TokenFacts {
    let (h, c) = decode_jwt(&jwt(claims)).expect("test JWT decodes");
    TokenFacts {
        source: "oauth".into(),
        fingerprint: "redacted:sha256:11".into(),
        jwt_header: Some(h),
        jwt_claims: Some(c),
        expires_in,
        scope: scope.map(str::to_string),
        token_type: Some("Bearer".into()),
    }
}

pub(crate) fn opaque(expires_in: Option<i64>, scope: Option<&str>) -> TokenFacts {
    assert!(decode_jwt("not-a-jwt").is_none());
    TokenFacts {
        source: "env:MCP_TOKEN".into(),
        fingerprint: "redacted:sha256:22".into(),
        jwt_header: None,
        jwt_claims: None,
        expires_in,
        scope: scope.map(str::to_string),
        token_type: None,
    }
}

pub(crate) fn lab_claims() -> Value {
    json!({"jti": "j", "sub": "alice", "iat": 1_764_480_000, "exp": 1_764_480_600,
           "scope": "mcp:tools mcp:read", "client_id": "c", "iss": AS, "aud": EP})
}

/// py2-auth after an OAuth login: detection without a credential (401), then the
/// token from the AS.
pub(crate) fn lab_auth_with_token(t: TokenFacts) -> Bundle {
    let mut ev = protected(lab_auth_records());
    ev.payload_mut().tokens = vec![t];
    ev
}

pub(crate) fn grade(c: &dyn Check, ev: &Bundle) -> Outcome {
    run(c, ev, &Context::default())
}

pub(crate) fn with_baseline<'a>(b: &'a Bundle) -> Context<'a> {
    Context {
        baseline: Some(b),
        updating_baseline: false,
        ..Context::default()
    }
}

/// The policy `decisions` as read from `policy.toml`, for the checks that read it.
pub(crate) fn applied(decisions: crate::policy::Decisions) -> crate::policy::Applied {
    crate::policy::Applied {
        file: "policy.toml".into(),
        decisions,
    }
}

/// Grade `c` on `ev` under the policy `p`.
pub(crate) fn grade_with(c: &dyn Check, ev: &Bundle, p: &crate::policy::Applied) -> Outcome {
    run(
        c,
        ev,
        &Context {
            policy: Some(p),
            ..Context::default()
        },
    )
}

/// Check `c` graded directly on `ev`, rendered outside any definition (local names:
/// sub-verdict `a`, another rule as `[rule-id]`).
pub(crate) fn run(c: &dyn Check, ev: &Bundle, cx: &Context<'_>) -> Outcome {
    crate::fixture::local(crate::preconditions::run_rule(c, ev, cx))
}
