//! The unattended grants (`--grant`) through the real `mcp-collect`, against scripted
//! loopback servers: an MCP resource server and an authorization server on another port
//! that checks what each grant must send. Also the usage errors of the login flags (exit 2
//! before any traffic, naming the flag or variable), and that no secret, assertion or key
//! reaches a bundle byte or an output line.

mod support;

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use mcp_probe_schema::model::{HttpOutcome, Observation};
use ring::signature::{self, EcdsaKeyPair, KeyPair};
use serde_json::{json, Value};
use support::*;

const ACCESS: &str = "grant-access-7d6c5b4a39281706";
const SECRET: &str = "grant-secret-0a1b2c3d4e5f6a7b";
const WORKLOAD: &str =
    "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJjaS1qb2IifQ.d29ya2xvYWQtc2lnbmF0dXJlLWJ5dGVz";

/// The authorization server: metadata for `methods` and `algs`, no registration, and a
/// token endpoint that answers every request with [`ACCESS`] (the test judges what came).
fn authorization_server(methods: Value, grants: Value) -> Scripted {
    let base = Arc::new(std::sync::OnceLock::<String>::new());
    let b = base.clone();
    let srv = serve(Arc::new(move |r: &Req| {
        let base = b.get().cloned().unwrap_or_default();
        match r.path.split('?').next().unwrap_or("") {
            "/.well-known/oauth-authorization-server" => json_response(
                200,
                &[],
                &json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "grant_types_supported": grants,
                    "token_endpoint_auth_methods_supported": methods,
                    "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
                })
                .to_string(),
            ),
            "/token" => json_response(
                200,
                &[],
                &json!({"access_token": ACCESS, "token_type": "Bearer", "expires_in": 3600})
                    .to_string(),
            ),
            _ => json_response(404, &[], "{}"),
        }
    }));
    let _ = base.set(srv.url.trim_end_matches("/mcp").to_string());
    srv
}

/// The MCP resource server (support's scripted one, accepting [`ACCESS`]).
fn resource_server(as_base: String) -> Scripted {
    oauth_resource_server(as_base, ACCESS, json!({"scopes_supported": ["mcp:tools"]}))
}

/// The token requests the authorization server received, as form pairs, with the
/// `Authorization` header of each.
/// A token request as the server saw it: its form pairs and its `Authorization` header.
type TokenRequest = (Vec<(String, String)>, Option<String>);

fn token_requests(srv: &Scripted) -> Vec<TokenRequest> {
    srv.requests
        .lock()
        .expect("test setup")
        .iter()
        .filter(|r| r.path.starts_with("/token"))
        .map(|r| {
            (
                url::form_urlencoded::parse(&r.body).into_owned().collect(),
                r.header("authorization"),
            )
        })
        .collect()
}

fn get<'a>(form: &'a [(String, String)], k: &str) -> Option<&'a str> {
    form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

/// Every byte of the run's bundles and output is free of `secrets`.
fn assert_clean(run: &Run, secrets: &[&str]) {
    for b in run.bundles() {
        let bytes = std::fs::read(&b).expect("bundle");
        let hay = String::from_utf8_lossy(&bytes);
        for s in secrets {
            assert!(!hay.contains(s), "a secret reached {}", b.display());
        }
    }
    for s in secrets {
        assert!(
            !run.stdout().contains(s) && !run.stderr().contains(s),
            "a secret was printed"
        );
    }
}

fn b64url(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .expect("base64url")
}

#[test]
fn client_credentials_with_a_key_sends_a_verifiable_assertion_and_no_browser() {
    let asrv = authorization_server(json!(["private_key_jwt"]), json!(["client_credentials"]));
    let as_base = asrv.url.trim_end_matches("/mcp").to_string();
    let rs = resource_server(as_base.clone());
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
        .expect("test setup");
    let pair = EcdsaKeyPair::from_pkcs8(
        &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        pkcs8.as_ref(),
        &rng,
    )
    .expect("test setup");
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
    );
    let dir = tempfile::tempdir().expect("test setup");
    let key = dir.path().join("client.key");
    std::fs::write(&key, &pem).expect("test setup");
    let run = collect(
        &[
            "--grant",
            "client-credentials",
            "--client-id",
            "ci-client",
            "--client-key-file",
            key.to_str().expect("test setup"),
            &rs.url,
        ],
        &[],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(
        !run.stderr().contains("open this URL"),
        "{}",
        run.describe()
    );
    let reqs = token_requests(&asrv);
    assert_eq!(reqs.len(), 1, "one token request: {reqs:?}");
    let (form, auth) = &reqs[0];
    assert_eq!(auth, &None, "no Basic credentials with private_key_jwt");
    assert_eq!(get(form, "grant_type"), Some("client_credentials"));
    assert_eq!(get(form, "resource"), Some(rs.url.as_str()));
    assert_eq!(get(form, "scope"), Some("mcp:tools"));
    assert_eq!(
        get(form, "client_assertion_type"),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let assertion = get(form, "client_assertion").expect("an assertion");
    let parts: Vec<&str> = assertion.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&b64url(parts[0])).expect("test setup");
    let claims: Value = serde_json::from_slice(&b64url(parts[1])).expect("test setup");
    assert_eq!(header["alg"], "ES256");
    assert_eq!(claims["iss"], "ci-client");
    assert_eq!(claims["sub"], "ci-client");
    assert_eq!(claims["aud"], as_base.as_str(), "aud is the issuer");
    let (iat, exp) = (
        claims["iat"].as_i64().expect("test setup"),
        claims["exp"].as_i64().expect("test setup"),
    );
    assert!(exp > iat && exp - iat <= 300, "short-lived: {claims}");
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
    signature::UnparsedPublicKey::new(
        &signature::ECDSA_P256_SHA256_FIXED,
        pair.public_key().as_ref(),
    )
    .verify(
        format!("{}.{}", parts[0], parts[1]).as_bytes(),
        &b64url(parts[2]),
    )
    .expect("the assertion verifies with the client's public key");
    // The bundle: authenticated, the grant and the key's thumbprint recorded, the
    // registration skipped naming the grant, no assertion or token anywhere.
    let v = open(&run.bundles()[0]);
    assert!(v.evidence.session.as_ref().is_some_and(|s| s.authenticated));
    let login = v.evidence.run.options.login.clone().expect("login options");
    assert_eq!(login.grant.as_deref(), Some("client-credentials"));
    assert_eq!(login.client_key_thumbprint.map(|t| t.len()), Some(43));
    let skipped = v.records.iter().any(|r| {
        r.legs.iter().any(|l| l == "oauth.register")
            && matches!(&r.observation, Observation::Skipped { reason } if reason.contains("--grant client-credentials"))
    });
    assert!(
        skipped,
        "oauth.register is recorded skipped naming the grant"
    );
    assert_clean(&run, &[assertion, parts[2], ACCESS]);
}

#[test]
fn a_secret_client_uses_basic_and_a_workload_assertion_is_sent_once() {
    let asrv = authorization_server(
        json!(["client_secret_basic"]),
        json!(["client_credentials"]),
    );
    let rs = resource_server(asrv.url.trim_end_matches("/mcp").to_string());
    let run = collect(
        &[
            "--grant",
            "client-credentials",
            "--client-id",
            "ci-client",
            "--client-secret-env",
            "CI_SECRET",
            &rs.url,
        ],
        &[("CI_SECRET", SECRET)],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    let reqs = token_requests(&asrv);
    let (form, auth) = &reqs[0];
    assert_eq!(get(form, "grant_type"), Some("client_credentials"));
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("ci-client:{SECRET}"));
    assert_eq!(auth.as_deref(), Some(format!("Basic {basic}").as_str()));
    assert_eq!(get(form, "client_secret"), None);
    assert_clean(&run, &[SECRET, &basic, ACCESS]);

    let asrv = authorization_server(
        json!(["none"]),
        json!(["urn:ietf:params:oauth:grant-type:jwt-bearer"]),
    );
    let rs = resource_server(asrv.url.trim_end_matches("/mcp").to_string());
    let run = collect(
        &[
            "--grant",
            "jwt-bearer",
            "--assertion-env",
            "CI_OIDC_TOKEN",
            &rs.url,
        ],
        &[("CI_OIDC_TOKEN", WORKLOAD)],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    let reqs = token_requests(&asrv);
    assert_eq!(reqs.len(), 1, "sent once");
    let (form, _) = &reqs[0];
    assert_eq!(
        get(form, "grant_type"),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(get(form, "assertion"), Some(WORKLOAD));
    assert_eq!(get(form, "client_id"), None, "no client id was given");
    let v = open(&run.bundles()[0]);
    let token = v
        .records
        .iter()
        .find(|r| r.legs.iter().any(|l| l == "oauth.token"))
        .expect("the token request is recorded");
    let Observation::Http(x) = &token.observation else {
        panic!("http")
    };
    assert!(matches!(&x.outcome, HttpOutcome::Response(r) if r.status == 200));
    assert_eq!(
        v.evidence.run.options.login.and_then(|l| l.assertion_env),
        Some("CI_OIDC_TOKEN".into())
    );
    assert_clean(&run, &[WORKLOAD, ACCESS]);
}

/// Flags, environment, and the text the one-line usage error must contain.
type UsageCase<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn login_flags_are_checked_before_any_traffic() {
    let hits = Arc::new(Mutex::new(0u32));
    let h = hits.clone();
    let srv = serve(Arc::new(move |_r: &Req| {
        *h.lock().expect("test setup") += 1;
        json_response(500, &[], "{}")
    }));
    let dir = tempfile::tempdir().expect("test setup");
    let sec1 = dir.path().join("sec1.pem");
    std::fs::write(
        &sec1,
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n-----END EC PRIVATE KEY-----\n",
    )
    .expect("test setup");
    let cases: Vec<UsageCase> = vec![
        (
            vec!["--grant", "client-credentials"],
            vec![],
            "--grant client-credentials: needs --client-id with --client-secret-env or --client-key-file",
        ),
        (
            vec!["--grant", "jwt-bearer"],
            vec![],
            "--grant jwt-bearer: needs --assertion-env VAR",
        ),
        (
            vec!["--grant", "jwt-bearer", "--assertion-env", "NO_SUCH_ASSERTION_VAR"],
            vec![],
            "--assertion-env NO_SUCH_ASSERTION_VAR: the environment variable is not set or empty",
        ),
        (
            vec!["--assertion-env", "X"],
            vec![("X", WORKLOAD)],
            "--assertion-env is used only with --grant jwt-bearer",
        ),
        (
            vec!["--grant", "enterprise-managed", "--client-id", "c"],
            vec![],
            "needs --idp-token-endpoint URL and --id-token-env VAR",
        ),
        (
            vec![
                "--grant",
                "enterprise-managed",
                "--client-id",
                "c",
                "--idp-token-endpoint",
                "http://idp.example/token",
                "--id-token-env",
                "X",
            ],
            vec![("X", WORKLOAD)],
            "--idp-token-endpoint http://idp.example/token: plain http is allowed only for a loopback host",
        ),
        (
            vec!["--client-metadata-url", "https://probe.example/"],
            vec![],
            "a client ID metadata document URL has a path",
        ),
        (
            vec!["--client-metadata-url", "http://probe.example/client.json"],
            vec![],
            "plain http is allowed only for a loopback host",
        ),
        (
            vec!["--client-id", "c", "--client-key-file", sec1.to_str().expect("test setup")],
            vec![],
            "openssl pkcs8 -topk8",
        ),
        (
            vec!["--grant", "client-credentials", "--token-env", "T"],
            vec![("T", "tok-0123456789")],
            "--token-env gives the token itself",
        ),
    ];
    for (args, envs, want) in cases {
        let mut a = args.clone();
        a.push(&srv.url);
        let run = collect(&a, &envs);
        assert_eq!(run.code(), 2, "{args:?}: {}", run.describe());
        assert!(
            run.stderr().contains(want),
            "{args:?}: want {want:?}: {}",
            run.describe()
        );
        assert_eq!(
            run.stderr().lines().count(),
            1,
            "one line: {}",
            run.describe()
        );
    }
    assert_eq!(*hits.lock().expect("test setup"), 0, "nothing was sent");
}
