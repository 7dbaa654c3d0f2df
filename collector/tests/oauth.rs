//! Lab tests of the OAuth login (collector/src/oauth.rs) against the real `oidc-provider`
//! authorization server and the py2-auth resource server. The browser step
//! is played headlessly by `lab/oidc/browser.sh URL --deliver`, which walks login and
//! consent and delivers the redirect to the login's loopback listener.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use mcp_probe_collector::journal::Journal;
use mcp_probe_collector::oauth::{
    cache_file_name, validate_callback, CallbackError, LoginError, Obtained,
};
use mcp_probe_collector::transport::http::Request;
use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::model::{Header, HttpOutcome};
use mcp_probe_schema::redact::{decode_jwt, Redactor};
use mcp_probe_schema::vocab::leg;
use serde_json::{json, Value};
use support::oauth_lab::{
    contains, http, obtain_interactive, records_of, scratch, seal_with_test_key, status, Lab,
};

fn journal(dir: &Path, endpoint: &str) -> Mutex<Journal> {
    let ev = mcp_probe_schema::testkit::evidence(endpoint, Vec::new());
    Mutex::new(
        Journal::create(dir, "oauth", ev.target, ev.run.options, Redactor::new()).expect("journal"),
    )
}

fn param(u: &url::Url, name: &str) -> String {
    u.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("{name} missing in {u}"))
}

/// Seal the journal with a test key and return the bundle bytes.
fn sealed(j: &Mutex<Journal>) -> Vec<u8> {
    std::fs::read(seal_with_test_key(j)).expect("bundle")
}

fn cache(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("cache file")).expect("cache json")
}

fn edit_cache(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v = cache(path);
    f(&mut v);
    std::fs::write(path, serde_json::to_vec(&v).expect("json")).expect("write cache");
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("credentials dir")
        .map(|e| e.expect("entry").path())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_then_cache_then_refresh_then_stable_port_then_reauth() {
    let Some(lab) = Lab::up().await else { return };
    let (_tmp, state, out) = scratch();
    let (mut login, mut rx) = lab.login(&state);
    assert_eq!(login.resource, lab.rs_url, "the PRM resource");
    assert_eq!(
        login.scope.as_deref(),
        Some("mcp:tools"),
        "scopes_supported"
    );

    // 1. Interactive login: DCR, PKCE S256, resource, iss checked, code exchanged.
    let j1 = journal(&out, &lab.rs_url);
    let (cred, auth, redirect) =
        obtain_interactive(&mut login, &mut rx, &lab.client, &j1, None).await;
    assert_eq!(cred.obtained, Obtained::Login);
    assert_eq!(
        format!("{}://{}{}", auth.scheme(), auth.authority(), auth.path()),
        format!("{}/auth", lab.as_url)
    );
    assert_eq!(param(&auth, "response_type"), "code");
    assert_eq!(param(&auth, "client_id"), cred.client_id);
    assert_eq!(param(&auth, "scope"), "mcp:tools");
    assert_eq!(param(&auth, "code_challenge_method"), "S256");
    assert_eq!(param(&auth, "resource"), lab.rs_url);
    let redirect_uri = url::Url::parse(&param(&auth, "redirect_uri")).expect("redirect_uri");
    assert_eq!(redirect_uri.host_str(), Some("127.0.0.1"));
    assert_eq!(redirect_uri.path(), "/callback");
    let port = redirect_uri.port().expect("port");
    assert_eq!(param(&redirect, "state"), param(&auth, "state"));
    assert_eq!(
        param(&redirect, "iss"),
        lab.as_url,
        "RFC 9207 iss delivered"
    );
    let code = param(&redirect, "code");

    // The token: a JWT for this resource from this issuer, and the RS accepts it.
    let (h, claims) = decode_jwt(&cred.access_token).expect("a JWT access token");
    assert_eq!(h["typ"], "at+jwt");
    assert_eq!(claims["aud"], lab.rs_url.as_str());
    assert_eq!(claims["iss"], lab.as_url.as_str());
    assert_eq!(claims["client_id"], cred.client_id.as_str());
    assert_eq!(cred.token_type, "Bearer");
    assert_eq!(cred.facts.source, "oauth");
    assert_eq!(
        cred.facts.fingerprint,
        fingerprint(cred.access_token.as_bytes())
    );
    assert_eq!(cred.facts.jwt_claims.as_ref(), Some(&claims));
    assert_eq!(cred.facts.expires_in, Some(600));
    assert_eq!(cred.facts.token_type.as_deref(), Some("Bearer"));
    assert_eq!(
        j1.lock().unwrap().tokens().to_vec(),
        vec![cred.facts.clone()]
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-test", "version": "0"}}});
    let sent = lab
        .client
        .send(Request {
            method: "POST".into(),
            url: url::Url::parse(&lab.rs_url).expect("url"),
            headers: vec![
                Header::new("Content-Type", "application/json"),
                Header::new("Accept", "application/json, text/event-stream"),
                Header::new("Authorization", format!("Bearer {}", cred.access_token)),
            ],
            body: serde_json::to_vec(&init).expect("json"),
            await_id: Some(json!(1)),
            head_only_stream: false,
            connect_to: None,
        })
        .await;
    match &sent.exchange.outcome {
        HttpOutcome::Response(r) => assert_eq!(r.status, 200, "the RS accepts the token"),
        HttpOutcome::Error(e) => panic!("RS: {e}"),
    }

    // The cache: 0600 in a 0700 directory, named by endpoint|issuer|client_id|scope.
    let file = login.cache_file().expect("cache").expect("a cache file");
    assert_eq!(file, cred.cache_file);
    assert_eq!(
        file.file_name().and_then(|n| n.to_str()),
        Some(
            cache_file_name(&lab.rs_url, &lab.as_url, &cred.client_id, Some("mcp:tools")).as_str()
        )
    );
    #[cfg(unix)]
    {
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().expect("dir")), 0o700);
    }
    let c1 = cache(&file);
    assert_eq!(c1["client"]["redirect_port"], port);
    assert_eq!(c1["tokens"]["access_token"], cred.access_token.as_str());
    let refresh1 = c1["tokens"]["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_string();

    // The records: registration 201 and token 200, every secret redacted before hashing.
    let recs = j1.lock().unwrap().records();
    let reg = records_of(&recs, leg::OAUTH_REGISTER);
    assert_eq!(reg.len(), 1);
    assert_eq!(status(reg[0]), 201);
    let dcr: Value = serde_json::from_slice(&http(reg[0]).request.body.bytes).expect("DCR json");
    assert_eq!(dcr["client_name"], "mcp-collect");
    assert_eq!(dcr["application_type"], "native", "SEP-837");
    assert_eq!(dcr["redirect_uris"], json!([redirect_uri.as_str()]));
    assert_eq!(
        dcr["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(dcr["token_endpoint_auth_method"], "none");
    let tok = records_of(&recs, leg::OAUTH_TOKEN);
    assert_eq!(tok.len(), 1);
    assert_eq!(status(tok[0]), 200);
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&http(tok[0]).request.body.bytes)
        .into_owned()
        .collect();
    let field = |k: &str| {
        form.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{k} missing in the token request"))
    };
    assert_eq!(field("grant_type"), "authorization_code");
    assert_eq!(field("resource"), lab.rs_url);
    assert_eq!(field("redirect_uri"), redirect_uri.as_str());
    assert_eq!(field("code"), fingerprint(code.as_bytes()));
    // The verifier never appears; its fingerprint is SHA-256 of the verifier, which is
    // exactly what the S256 challenge sent in the authorization URL encodes.
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(param(&auth, "code_challenge"))
        .expect("challenge");
    assert_eq!(
        field("code_verifier"),
        format!("redacted:sha256:{}", hex::encode(challenge))
    );
    let bundle = sealed(&j1);
    for (what, secret) in [
        ("access token", cred.access_token.as_str()),
        ("refresh token", refresh1.as_str()),
        ("authorization code", code.as_str()),
    ] {
        assert!(!contains(&bundle, secret), "the {what} is in the bundle");
    }
    assert!(contains(
        &bundle,
        &fingerprint(cred.access_token.as_bytes())
    ));

    // 2. Second call: the cached token, no authorization URL, no request.
    let j2 = journal(&out, &lab.rs_url);
    let again = login.obtain(&lab.client, &j2).await.expect("cached");
    assert_eq!(again.obtained, Obtained::Cache);
    assert_eq!(again.access_token, cred.access_token);
    assert!(
        rx.try_recv().is_err(),
        "no authorization URL for a cached token"
    );
    assert!(j2.lock().unwrap().records().is_empty(), "nothing sent");
    assert_eq!(
        j2.lock().unwrap().tokens().to_vec(),
        vec![again.facts.clone()]
    );

    // 3. Expired access token: a refresh grant, and the rotated refresh token is stored.
    edit_cache(&file, |v| {
        v["tokens"]["expires_at"] = json!(chrono::Utc::now().timestamp() - 10)
    });
    let j3 = journal(&out, &lab.rs_url);
    let refreshed = login.obtain(&lab.client, &j3).await.expect("refresh");
    assert_eq!(refreshed.obtained, Obtained::Refresh);
    assert_ne!(refreshed.access_token, cred.access_token);
    assert!(rx.try_recv().is_err(), "no authorization URL for a refresh");
    let c3 = cache(&file);
    let refresh2 = c3["tokens"]["refresh_token"]
        .as_str()
        .expect("refresh token")
        .to_string();
    assert_ne!(
        refresh2, refresh1,
        "rotation: a new refresh token is stored"
    );
    assert_eq!(
        c3["tokens"]["access_token"],
        refreshed.access_token.as_str()
    );
    #[cfg(unix)]
    assert_eq!(mode(&file), 0o600);
    let (_, claims3) = decode_jwt(&refreshed.access_token).expect("JWT");
    assert_eq!(claims3["aud"], lab.rs_url.as_str());
    let recs3 = j3.lock().unwrap().records();
    assert_eq!(recs3.len(), 1, "one refresh request");
    let rr = records_of(&recs3, leg::OAUTH_REFRESH);
    assert_eq!(status(rr[0]), 200);
    let bundle3 = sealed(&j3);
    for secret in [&refresh1, &refresh2, &refreshed.access_token] {
        assert!(
            !contains(&bundle3, secret),
            "a token is in the refresh bundle"
        );
    }

    // 4. No usable token but a cached registration: the same client on the same port.
    edit_cache(&file, |v| v["tokens"] = Value::Null);
    let j4 = journal(&out, &lab.rs_url);
    let (c4, auth4, _) = obtain_interactive(&mut login, &mut rx, &lab.client, &j4, None).await;
    assert_eq!(c4.obtained, Obtained::Login);
    assert_eq!(c4.client_id, cred.client_id, "registration reused");
    assert_eq!(
        param(&auth4, "redirect_uri"),
        redirect_uri.as_str(),
        "same port"
    );
    let recs4 = j4.lock().unwrap().records();
    assert!(records_of(&recs4, leg::OAUTH_REGISTER).is_empty());
    assert_eq!(records_of(&recs4, leg::OAUTH_TOKEN).len(), 1);

    // 5. The registered port is busy: a new client on a new port, replacing the old one.
    let busy = std::net::TcpListener::bind(("127.0.0.1", port)).expect("occupy the port");
    edit_cache(&file, |v| v["tokens"] = Value::Null);
    let j5 = journal(&out, &lab.rs_url);
    let (c5, auth5, _) = obtain_interactive(&mut login, &mut rx, &lab.client, &j5, None).await;
    drop(busy);
    assert_eq!(c5.obtained, Obtained::Login);
    assert_ne!(c5.client_id, cred.client_id, "re-registered");
    let port5 = url::Url::parse(&param(&auth5, "redirect_uri"))
        .expect("redirect_uri")
        .port();
    assert_ne!(port5, Some(port));
    assert_eq!(
        records_of(&j5.lock().unwrap().records(), leg::OAUTH_REGISTER).len(),
        1
    );
    assert_eq!(
        cache_files(&login.cache_dir()),
        vec![c5.cache_file.clone()],
        "the old registration is replaced"
    );

    // 6. --reauth: the cache is dropped and a new login (and registration) happens.
    login.reauth = true;
    let j6 = journal(&out, &lab.rs_url);
    let (c6, _, _) = obtain_interactive(&mut login, &mut rx, &lab.client, &j6, None).await;
    assert!(!login.reauth, "reauth applies once");
    assert_eq!(c6.obtained, Obtained::Login);
    assert_ne!(c6.client_id, c5.client_id);
    assert_eq!(
        records_of(&j6.lock().unwrap().records(), leg::OAUTH_REGISTER).len(),
        1
    );
    assert_eq!(cache_files(&login.cache_dir()), vec![c6.cache_file.clone()]);
}

/// GET `path_and_query` on the loopback listener; returns the status code.
fn deliver(port: u16, path_and_query: &str) -> u16 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "GET {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut resp = String::new();
    s.read_to_string(&mut resp).expect("read");
    resp.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_iss_is_refused_and_no_code_is_exchanged() {
    // The validation function itself.
    let iss = "http://127.0.0.1:1";
    assert!(matches!(
        validate_callback(
            "code=abcdef&state=S&iss=http%3A%2F%2Fevil.example",
            "S",
            iss,
            false
        ),
        Err(CallbackError::IssuerMismatch { .. })
    ));
    assert!(matches!(
        validate_callback("code=abcdef&state=S", "S", iss, true),
        Err(CallbackError::IssuerMissing { .. })
    ));
    assert_eq!(
        validate_callback(
            "code=abcdef&state=S&iss=http%3A%2F%2F127.0.0.1%3A1",
            "S",
            iss,
            true
        ),
        Ok("abcdef".to_string())
    );

    // Through the listener of a real login: another path is 404, another state is
    // ignored (400), a wrong iss ends the login before any token request.
    let Some(lab) = Lab::up().await else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mut login, mut rx) = lab.login(&tmp.path().join("state"));
    let j = journal(&tmp.path().join("out"), &lab.rs_url);
    let attacker = async {
        let url = rx.recv().await.expect("authorization URL");
        let auth = url::Url::parse(&url).expect("url");
        let state = param(&auth, "state");
        let port = url::Url::parse(&param(&auth, "redirect_uri"))
            .expect("redirect_uri")
            .port()
            .expect("port");
        tokio::task::spawn_blocking(move || {
            let q = |state: &str, iss: &str| {
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("code", "forged-code-123456")
                    .append_pair("state", state)
                    .append_pair("iss", iss)
                    .finish()
            };
            [
                deliver(port, "/favicon.ico"),
                deliver(port, &format!("/callback?{}", q("not-ours", "x"))),
                deliver(
                    port,
                    &format!("/callback?{}", q(&state, "http://evil.example")),
                ),
            ]
        })
        .await
        .expect("deliver")
    };
    let (result, statuses) = tokio::join!(login.obtain(&lab.client, &j), attacker);
    assert_eq!(statuses, [404, 400, 400]);
    match result {
        Err(LoginError::Callback(CallbackError::IssuerMismatch { expected, got })) => {
            assert_eq!(expected, lab.as_url);
            assert_eq!(got, "http://evil.example");
        }
        other => panic!("expected an iss mismatch, got {other:?}"),
    }
    let recs = j.lock().unwrap().records();
    assert_eq!(records_of(&recs, leg::OAUTH_REGISTER).len(), 1);
    assert!(
        records_of(&recs, leg::OAUTH_TOKEN).is_empty(),
        "the code was exchanged"
    );
    assert!(j.lock().unwrap().tokens().is_empty());
    // The registration is kept for the next attempt, without tokens.
    let file = login.cache_file().expect("cache").expect("cache file");
    assert!(cache(&file)["tokens"].is_null());
}

#[tokio::test]
async fn no_redirect_within_the_timeout_is_a_clear_error() {
    let Some(lab) = Lab::up().await else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mut login, _rx) = lab.login(&tmp.path().join("state"));
    login.callback_timeout = Duration::from_secs(1);
    let j = journal(&tmp.path().join("out"), &lab.rs_url);
    let e = login
        .obtain(&lab.client, &j)
        .await
        .expect_err("no browser came back");
    assert!(matches!(e, LoginError::CallbackTimeout { .. }), "{e:?}");
    assert!(e.to_string().contains("within 1 s"), "{e}");
}

/// A client id that shares its first 12 characters with the client secret
/// (`test-client-id`, `test-client-secret`) reaches the authorization URL (as printed),
/// the token endpoint and the bundle intact; only the secret is redacted, and no record
/// is withheld. A scripted authorization server on loopback, no lab needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_id_sharing_pieces_with_its_secret_is_sent_and_recorded_intact() {
    use mcp_probe_collector::oauth::Login;
    use support::{json_response, serve};
    const ID: &str = "test-client-id";
    const SECRET: &str = "test-client-secret";
    const ACCESS: &str = "test-client-access-0123456789";
    const CODE: &str = "test-client-code-0123456789";
    let server = serve(std::sync::Arc::new(|r: &support::Req| {
        match r.path.split('?').next().unwrap_or("") {
            "/register" => json_response(
                201,
                &[],
                &json!({"client_id": ID, "client_secret": SECRET,
                        "token_endpoint_auth_method": "client_secret_post"})
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
    let base = server.url.trim_end_matches("/mcp").to_string();
    let meta = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": ["S256"],
    });
    let (_tmp, state_dir, out) = scratch();
    let ep = url::Url::parse(&server.url).expect("endpoint");
    let j = journal(&out, ep.as_str());
    let mut login = Login::new(&ep, &meta, None, None, &state_dir).expect("login");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    login.no_browser = true;
    login.callback_timeout = Duration::from_secs(30);
    login.on_authorize_url = Some(tx);
    // As `mcp-collect` does: the login's stderr lines pass the journal's redactor.
    login.redactor = j.lock().expect("journal").redactor().clone();
    let redactor = login.redactor.clone();
    let client = support::oauth_lab::client();
    let user = async {
        let auth = url::Url::parse(&rx.recv().await.expect("an authorization URL")).expect("url");
        // What the operator is shown is the URL itself.
        assert_eq!(redactor.scrub_str(auth.as_str()), auth.as_str());
        let redirect = url::Url::parse(&param(&auth, "redirect_uri")).expect("redirect_uri");
        let port = redirect.port().expect("port");
        let query = format!(
            "{}?code={CODE}&state={}",
            redirect.path(),
            param(&auth, "state")
        );
        let status = tokio::task::spawn_blocking(move || deliver(port, &query))
            .await
            .expect("deliver");
        (auth, status)
    };
    let (cred, (auth, delivered)) = tokio::join!(login.obtain(&client, &j), user);
    let cred = cred.expect("login");
    assert!(delivered < 400, "callback answered {delivered}");
    assert_eq!(param(&auth, "client_id"), ID);
    assert_eq!(cred.client_id, ID);
    // The bytes sent: the real client id and secret.
    let requests = server.requests.lock().expect("requests").clone();
    let token = requests
        .iter()
        .find(|r| r.path == "/token")
        .expect("a token request");
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&token.body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    assert!(form.contains(&("client_id".into(), ID.into())), "{form:?}");
    assert!(
        form.contains(&("client_secret".into(), SECRET.into())),
        "{form:?}"
    );
    // The bytes recorded: the client id intact, no secret, nothing withheld.
    let bundle = sealed(&j);
    for secret in [SECRET, ACCESS, CODE] {
        assert!(!contains(&bundle, secret), "{secret} in the bundle");
    }
    assert!(contains(&bundle, &format!(r#""client_id":"{ID}""#)));
    assert!(contains(&bundle, &format!("client_id={ID}")));
    assert!(!contains(&bundle, "withheld"), "a record was withheld");
    assert!(!contains(&bundle, "test-clienredacted"));
    let v = mcp_probe_schema::open(&bundle, &[]).expect("verifies");
    let reg = records_of(&v.records, leg::OAUTH_REGISTER);
    assert_eq!(reg.len(), 1);
    assert!(reg[0]
        .redactions
        .iter()
        .any(|r| r.fingerprint == fingerprint(SECRET.as_bytes())));
}
