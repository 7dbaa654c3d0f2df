//! A pre-registered OAuth client (`--client-id`, `--client-secret-env`) through the real
//! `mcp-collect`, against scripted loopback servers: an MCP resource server and an
//! authorization server on another port whose registration endpoint answers 404. The
//! login must skip dynamic registration, authenticate the token request with the given
//! client, keep the secret out of every bundle byte and output line, and record that the
//! client was pre-registered. Also the MCP 2025-03-26 default endpoints, used when a
//! server publishes no metadata at all.

mod support;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use mcp_probe_schema::model::Observation;
use mcp_probe_schema::vocab::leg;
use serde_json::json;
use support::*;

const ID: &str = "corp-mcp-client";
const SECRET: &str = "corp-secret-5c1d9a7e3b2f4d6a";
const ACCESS: &str = "corp-access-0f9e8d7c6b5a4930";
const CODE: &str = "corp-code-1a2b3c4d5e6f7a8b";

fn accepted() -> Vec<u8> {
    b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
}

/// The authorization server: metadata, a token endpoint, and no registration (404).
fn authorization_server(auth_methods: serde_json::Value) -> Scripted {
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
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": auth_methods,
                })
                .to_string(),
            ),
            "/token" => json_response(
                200,
                &[],
                &json!({"access_token": ACCESS, "token_type": "Bearer", "expires_in": 3600})
                    .to_string(),
            ),
            "/register" => json_response(404, &[], r#"{"error":"registration disabled"}"#),
            _ => json_response(404, &[], "{}"),
        }
    }));
    let _ = base.set(srv.url.trim_end_matches("/mcp").to_string());
    srv
}

/// The MCP resource server (support's scripted one, accepting [`ACCESS`]).
fn resource_server(as_base: String) -> Scripted {
    oauth_resource_server(as_base, ACCESS, json!({}))
}

struct Login {
    code: i32,
    stdout: String,
    stderr: String,
    auth_url: Option<url::Url>,
}

/// Run `mcp-collect --no-browser ARGS URL` with `envs`, playing the user: the
/// authorization URL on stderr is answered with [`CODE`] and its state.
fn run_login(home: &std::path::Path, url: &str, args: &[&str], envs: &[(&str, &str)]) -> Login {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
    c.env("MCP_PROBE_HOME", home)
        .env_remove("HOME")
        .args(["--no-browser", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(url);
    for (k, v) in envs {
        c.env(k, v);
    }
    let mut auth_url = None;
    let ran = headless::run_playing(c, Duration::from_secs(120), |u| {
        auth_url = Some(answer_login(u, CODE));
    });
    Login {
        code: ran.code,
        stdout: ran.stdout,
        stderr: ran.stderr,
        auth_url,
    }
}

fn param(u: &url::Url, k: &str) -> Option<String> {
    u.query_pairs()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.into_owned())
}

#[test]
fn a_pre_registered_client_logs_in_without_registration() {
    let as_ = authorization_server(json!(["client_secret_basic", "client_secret_post"]));
    let as_base = as_.url.trim_end_matches("/mcp").to_string();
    let rs = resource_server(as_base.clone());
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let run = run_login(
        &home,
        &rs.url,
        &["--client-id", ID, "--client-secret-env", "CORP_SECRET"],
        &[("CORP_SECRET", SECRET)],
    );
    let describe = format!(
        "exit {}\n--- stdout\n{}\n--- stderr\n{}",
        run.code, run.stdout, run.stderr
    );
    assert_eq!(run.code, 0, "{describe}");
    let auth = run.auth_url.expect("an authorization URL was printed");
    assert_eq!(param(&auth, "client_id").as_deref(), Some(ID));
    assert_eq!(auth.path(), "/authorize");

    // Nothing was registered: no request reached /register.
    let reqs = as_.requests.lock().expect("requests").clone();
    assert!(
        reqs.iter().all(|r| !r.path.starts_with("/register")),
        "a registration was sent"
    );
    // The token request authenticates with the given client (client_secret_basic).
    let token = reqs
        .iter()
        .find(|r| r.path == "/token")
        .expect("a token request");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{ID}:{SECRET}"));
    assert_eq!(
        token.header("authorization").as_deref(),
        Some(format!("Basic {basic}").as_str())
    );
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&token.body)
        .into_owned()
        .collect();
    assert!(form.contains(&("client_id".into(), ID.into())), "{form:?}");
    assert!(form.contains(&("code".into(), CODE.into())), "{form:?}");
    assert!(
        !form.iter().any(|(k, _)| k == "client_secret"),
        "basic, not post"
    );

    // The bundle: no secret, the client id intact, the pre-registered client recorded.
    let bundles: Vec<_> = run
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .collect();
    let bytes = std::fs::read(bundles[0]).expect("bundle");
    for secret in [SECRET, ACCESS, CODE, basic.as_str()] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} is in the bundle"
        );
        assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
    }
    let v = mcp_probe_schema::open(&bytes, &[]).expect("verifies");
    let p = v
        .evidence
        .run
        .options
        .pre_registered_client
        .as_ref()
        .expect("the pre-registered client is recorded");
    assert_eq!(p.client_id, ID);
    assert_eq!(p.secret_env.as_deref(), Some("CORP_SECRET"));
    assert!(v.evidence.session.as_ref().is_some_and(|s| s.authenticated));
    let skip = |l: mcp_probe_schema::vocab::LegId| {
        v.records
            .iter()
            .filter(|r| r.legs.iter().any(|x| x == l))
            .find_map(|r| match &r.observation {
                Observation::Skipped { reason } => Some(reason.clone()),
                _ => None,
            })
    };
    assert!(skip(leg::OAUTH_REGISTER).is_some_and(|r| r.contains("pre-registered client")));
    assert!(
        skip(leg::DEPUTY_REGISTER)
            .is_some_and(|r| r.contains("pre-registered client: registration not probed")),
        "{:?}",
        skip(leg::DEPUTY_REGISTER)
    );
    assert!(!v
        .records
        .iter()
        .any(|r| r.legs.iter().any(|x| x == leg::DEPUTY_REGISTER)
            && matches!(r.observation, Observation::Http(_))));

    // The cache holds the tokens but never the secret.
    for f in std::fs::read_dir(home.join("credentials")).expect("credentials") {
        let text = std::fs::read_to_string(f.expect("entry").path()).expect("cache");
        assert!(!text.contains(SECRET), "the secret was cached");
    }
    // A second run: the cached token for the same client, no login.
    let run2 = run_login(
        &home,
        &rs.url,
        &["--client-id", ID, "--client-secret-env", "CORP_SECRET"],
        &[("CORP_SECRET", SECRET)],
    );
    assert_eq!(run2.code, 0, "{}", run2.stderr);
    assert!(run2.auth_url.is_none(), "a second login");
}

#[test]
fn a_public_pre_registered_client_posts_only_its_id() {
    let as_ = authorization_server(json!(["none"]));
    let rs = resource_server(as_.url.trim_end_matches("/mcp").to_string());
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = run_login(&tmp.path().join("home"), &rs.url, &["--client-id", ID], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reqs = as_.requests.lock().expect("requests").clone();
    assert!(reqs.iter().all(|r| !r.path.starts_with("/register")));
    let token = reqs.iter().find(|r| r.path == "/token").expect("token");
    assert_eq!(token.header("authorization"), None);
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&token.body)
        .into_owned()
        .collect();
    assert!(form.contains(&("client_id".into(), ID.into())));
}

#[test]
fn the_client_secret_comes_only_from_a_set_variable() {
    let run = collect(
        &[
            "--client-id",
            ID,
            "--client-secret-env",
            "NO_SUCH_SECRET_VAR",
            "http://127.0.0.1:9/mcp",
        ],
        &[],
    );
    assert_eq!(run.code(), 2, "{}", run.describe());
    assert!(
        run.stderr().contains("NO_SUCH_SECRET_VAR"),
        "{}",
        run.describe()
    );
    let run = collect(
        &[
            "--client-id",
            ID,
            "--client-secret-env",
            "EMPTY_SECRET",
            "http://127.0.0.1:9/mcp",
        ],
        &[("EMPTY_SECRET", " ")],
    );
    assert_eq!(run.code(), 2, "{}", run.describe());
    assert!(run.stderr().contains("EMPTY_SECRET"), "{}", run.describe());
    // A secret without a client id is refused by the flags.
    let run = collect(
        &["--client-secret-env", "X", "http://127.0.0.1:9/mcp"],
        &[("X", SECRET)],
    );
    assert_eq!(run.code(), 2, "{}", run.describe());
}

/// A 2025-03-26-style server: a 401 with a bare `Bearer` challenge, no metadata of any
/// kind (every well-known URL 404), and the default `/register`, `/token` on its origin.
fn defaults_server(as_metadata: bool) -> Scripted {
    let me = Arc::new(std::sync::OnceLock::<String>::new());
    let m = me.clone();
    let srv = serve(Arc::new(move |r: &Req| {
        let origin = m
            .get()
            .cloned()
            .unwrap_or_default()
            .trim_end_matches("/mcp")
            .to_string();
        match r.path.split('?').next().unwrap_or("") {
            "/.well-known/oauth-authorization-server" if as_metadata => json_response(
                200,
                &[],
                &json!({"issuer": origin, "authorization_endpoint": format!("{origin}/login"),
                    "token_endpoint": format!("{origin}/oauth/token"),
                    "registration_endpoint": format!("{origin}/oauth/register"),
                    "code_challenge_methods_supported": ["S256"]})
                .to_string(),
            ),
            "/register" | "/oauth/register" => json_response(
                201,
                &[],
                &json!({"client_id": "dcr-client-1", "token_endpoint_auth_method": "none"})
                    .to_string(),
            ),
            "/token" | "/oauth/token" => json_response(
                200,
                &[],
                &json!({"access_token": ACCESS, "token_type": "Bearer", "expires_in": 3600})
                    .to_string(),
            ),
            "/mcp" => {
                if r.header("authorization").as_deref() != Some(&format!("Bearer {ACCESS}")) {
                    return json_response(401, &[("WWW-Authenticate", "Bearer")], "{}");
                }
                let id = r.rpc_id();
                match r.rpc_method().as_str() {
                    "server/discover" => legacy_only(&id),
                    "initialize" => json_response(
                        200,
                        &[],
                        &json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-03-26",
                            "capabilities":{},"serverInfo":{"name":"old","version":"1"}}})
                        .to_string(),
                    ),
                    "notifications/initialized" => accepted(),
                    _ => json_response(
                        400,
                        &[],
                        &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"no"}})
                            .to_string(),
                    ),
                }
            }
            _ => json_response(404, &[], "{}"),
        }
    }));
    let _ = me.set(srv.url.clone());
    srv
}

#[test]
fn without_any_metadata_the_2025_03_26_default_endpoints_are_used_and_recorded() {
    let srv = defaults_server(false);
    let origin = srv.url.trim_end_matches("/mcp").to_string();
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = run_login(&tmp.path().join("home"), &srv.url, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let auth = run.auth_url.expect("an authorization URL");
    assert_eq!(
        format!("{}://{}{}", auth.scheme(), auth.authority(), auth.path()),
        format!("{origin}/authorize")
    );
    let paths: Vec<String> = srv
        .requests
        .lock()
        .expect("requests")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(paths.iter().any(|p| p == "/register"), "{paths:?}");
    assert!(paths.iter().any(|p| p == "/token"), "{paths:?}");
    assert!(paths
        .iter()
        .any(|p| p == "/.well-known/oauth-authorization-server"));
    let bundle = run.stdout.lines().next().expect("a bundle").to_string();
    let v =
        mcp_probe_schema::open(&std::fs::read(&bundle).expect("bundle"), &[]).expect("verifies");
    let s = v.evidence.session.as_ref().expect("session");
    assert!(s.authenticated);
    let d = s
        .authorization_defaults
        .as_ref()
        .expect("the defaults are recorded");
    assert_eq!(d.base, origin);
    assert_eq!(d.token_endpoint, format!("{origin}/token"));
    // Every protected-resource form and the origin's AS metadata form: 404.
    assert_eq!(d.absent_in.len(), 3, "{d:?}");
}

#[test]
fn origin_metadata_wins_over_the_defaults() {
    let srv = defaults_server(true);
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = run_login(&tmp.path().join("home"), &srv.url, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let auth = run.auth_url.expect("an authorization URL");
    assert_eq!(auth.path(), "/login", "{auth}");
    let paths: Vec<String> = srv
        .requests
        .lock()
        .expect("requests")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(
        !paths.iter().any(|p| p == "/register" || p == "/token"),
        "{paths:?}"
    );
    let bundle = run.stdout.lines().next().expect("a bundle").to_string();
    let v =
        mcp_probe_schema::open(&std::fs::read(&bundle).expect("bundle"), &[]).expect("verifies");
    assert!(v
        .evidence
        .session
        .as_ref()
        .is_some_and(|s| s.authorization_defaults.is_none() && s.authenticated));
}
