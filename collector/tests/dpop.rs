//! RFC 9449 DPoP through the real `mcp-collect`, against scripted loopback servers named
//! `localhost`: an authorization server that lists ES256 in
//! `dpop_signing_alg_values_supported`, registers clients and issues DPoP-bound tokens
//! only for a valid proof, asking for a nonce first; and an MCP resource server whose
//! 401 challenges with the `DPoP` scheme only and that asks for a nonce of its own. Both
//! servers check every proof the way the MCP conformance suite does (typ, alg, public
//! jwk, signature, htm, htu with the host as written, iat, ath, one key, no replayed
//! jti) and note what is wrong instead of refusing, so a bad proof fails the test even
//! when the run goes on. Also: a server demanding DPoP whose authorization server lists
//! nothing the collector signs gets one clear line before anything is registered.

mod support;

use std::collections::HashSet;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use mcp_probe_schema::model::Observation;
use mcp_probe_schema::vocab::leg;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::*;

const ACCESS: &str = "dpop-bound-access-7c1e93a05b2d4f68";
const CODE: &str = "dpop-code-5e6f7a8b9c0d1e2f";
const AS_NONCE: &str = "as-nonce-0b1c2d3e";
const RS_NONCE: &str = "rs-nonce-4f5a6b7c";

fn b64d(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap_or_default()
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// What the servers saw of the proofs.
#[derive(Default)]
struct Seen {
    /// Every problem with a proof, as `who: what`.
    problems: Vec<String>,
    jtis: HashSet<String>,
    /// The RFC 7638 thumbprint of every proof's jwk.
    jkts: HashSet<String>,
    /// Proofs that carried the right nonce: (AS, RS).
    nonced: (u32, u32),
    /// Authorization schemes seen at the resource server.
    schemes: Vec<String>,
}

/// Check one proof as the suite does; `Ok(claims)` or the problem.
fn check_proof(
    r: &Req,
    htu: &str,
    token: Option<&str>,
    seen: &Mutex<Seen>,
) -> Result<Value, String> {
    let n = r
        .head
        .lines()
        .filter(|l| {
            l.split_once(':')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("dpop"))
        })
        .count();
    if n != 1 {
        return Err(format!("{n} DPoP headers"));
    }
    let proof = r.header("dpop").unwrap_or_default();
    let p: Vec<&str> = proof.split('.').collect();
    let [h, c, sig] = p.as_slice() else {
        return Err("not a compact JWS".into());
    };
    let header: Value = serde_json::from_slice(&b64d(h)).map_err(|e| e.to_string())?;
    let claims: Value = serde_json::from_slice(&b64d(c)).map_err(|e| e.to_string())?;
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
        return Err(format!("header {header}"));
    }
    let jwk = &header["jwk"];
    if jwk.get("d").is_some() || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
        return Err(format!("jwk {jwk}"));
    }
    let mut point = vec![4u8];
    point.extend(b64d(jwk["x"].as_str().unwrap_or("")));
    point.extend(b64d(jwk["y"].as_str().unwrap_or("")));
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point)
        .verify(format!("{h}.{c}").as_bytes(), &b64d(sig))
        .map_err(|_| "signature".to_string())?;
    if claims["htm"] != r.method.as_str() {
        return Err(format!("htm {}", claims["htm"]));
    }
    if claims["htu"] != htu {
        return Err(format!("htu {} (want {htu})", claims["htu"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    if claims["iat"].as_i64().is_none_or(|i| (i - now).abs() > 300) {
        return Err(format!("iat {}", claims["iat"]));
    }
    if let Some(t) = token {
        if claims["ath"] != b64(&Sha256::digest(t.as_bytes())) {
            return Err(format!("ath {}", claims["ath"]));
        }
    }
    let canonical = format!(
        r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#,
        jwk["x"], jwk["y"]
    );
    let mut s = seen.lock().expect("seen");
    let jti = claims["jti"].as_str().unwrap_or("").to_string();
    if jti.is_empty() || !s.jtis.insert(jti) {
        return Err("jti missing or replayed".into());
    }
    s.jkts.insert(b64(&Sha256::digest(canonical.as_bytes())));
    Ok(claims)
}

/// The authorization server: metadata listing `algs`, DCR, and a token endpoint that
/// wants a valid proof and, first, a nonce.
fn authorization_server(algs: Value, seen: Arc<Mutex<Seen>>) -> (Scripted, String) {
    let base = Arc::new(OnceLock::<String>::new());
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
                    "token_endpoint_auth_methods_supported": ["none"],
                    "dpop_signing_alg_values_supported": algs,
                })
                .to_string(),
            ),
            "/register" => json_response(
                201,
                &[],
                &json!({"client_id": "dpop-client", "redirect_uris": r.json()["redirect_uris"]})
                    .to_string(),
            ),
            "/token" => match check_proof(r, &format!("{base}/token"), None, &seen) {
                Err(e) => {
                    seen.lock().expect("seen").problems.push(format!("AS: {e}"));
                    json_response(400, &[], r#"{"error":"invalid_dpop_proof"}"#)
                }
                Ok(c) if c["nonce"] != AS_NONCE => json_response(
                    400,
                    &[("DPoP-Nonce", AS_NONCE)],
                    r#"{"error":"use_dpop_nonce"}"#,
                ),
                Ok(_) => {
                    seen.lock().expect("seen").nonced.0 += 1;
                    json_response(
                        200,
                        &[],
                        &json!({"access_token": ACCESS, "token_type": "DPoP", "expires_in": 600})
                            .to_string(),
                    )
                }
            },
            _ => json_response(404, &[], "{}"),
        }
    }));
    let localhost = srv.url.replace("127.0.0.1", "localhost");
    let as_base = localhost.trim_end_matches("/mcp").to_string();
    let _ = base.set(as_base.clone());
    (srv, as_base)
}

/// The MCP resource server: a DPoP-only challenge without the token, a nonce asked for,
/// then a legacy server.
fn resource_server(as_base: String, seen: Arc<Mutex<Seen>>) -> (Scripted, String) {
    let me = Arc::new(OnceLock::<String>::new());
    let m = me.clone();
    let srv = serve(Arc::new(move |r: &Req| {
        let url = m.get().cloned().unwrap_or_default();
        let origin = url.trim_end_matches("/mcp").to_string();
        let path = r.path.split('?').next().unwrap_or("");
        if path.starts_with("/.well-known/oauth-protected-resource") {
            return json_response(
                200,
                &[],
                &json!({"resource": url, "authorization_servers": [as_base]}).to_string(),
            );
        }
        if path != "/mcp" {
            return json_response(404, &[], "{}");
        }
        let rm = format!("resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\"");
        let Some(auth) = r.header("authorization") else {
            return json_response(401, &[("WWW-Authenticate", &format!("DPoP {rm}"))], "{}");
        };
        let (scheme, token) = auth.split_once(' ').unwrap_or((&auth, ""));
        seen.lock().expect("seen").schemes.push(scheme.to_string());
        match check_proof(r, &url, Some(token), &seen) {
            Err(e) => seen.lock().expect("seen").problems.push(format!("RS: {e}")),
            Ok(c) if c["nonce"] != RS_NONCE => {
                let ch = format!("DPoP error=\"use_dpop_nonce\", {rm}");
                return json_response(
                    401,
                    &[("WWW-Authenticate", &ch), ("DPoP-Nonce", RS_NONCE)],
                    r#"{"error":"use_dpop_nonce"}"#,
                );
            }
            Ok(_) => seen.lock().expect("seen").nonced.1 += 1,
        }
        if !scheme.eq_ignore_ascii_case("dpop") || token != ACCESS {
            return json_response(401, &[("WWW-Authenticate", &format!("DPoP {rm}"))], "{}");
        }
        let id = r.rpc_id();
        match r.rpc_method().as_str() {
            "server/discover" => legacy_only(&id),
            "initialize" => json_response(
                200,
                &[],
                &json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-11-25",
                    "capabilities":{"tools":{}},"serverInfo":{"name":"dpop","version":"1"}}})
                .to_string(),
            ),
            "notifications/initialized" => {
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
            }
            "tools/list" => json_response(
                200,
                &[],
                &json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}).to_string(),
            ),
            _ => json_response(
                400,
                &[],
                &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"no"}})
                    .to_string(),
            ),
        }
    }));
    let url = srv.url.replace("127.0.0.1", "localhost");
    let _ = me.set(url.clone());
    (srv, url)
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    logged_in: bool,
}

/// `mcp-collect --no-browser URL`, playing the user: the authorization URL is answered
/// with [`CODE`] and its state (the issuer as `iss` is not promised, so not sent).
fn run(home: &std::path::Path, url: &str) -> Ran {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
    cmd.env("MCP_PROBE_HOME", home)
        .env_remove("HOME")
        .args(["--no-browser", "-o"])
        .arg(home.join("out"))
        .arg(url);
    let mut logged_in = false;
    let ran = headless::run_playing(cmd, Duration::from_secs(120), |u| {
        answer_login(u, CODE);
        logged_in = true;
    });
    Ran {
        code: ran.code,
        stdout: ran.stdout,
        stderr: ran.stderr,
        logged_in,
    }
}

fn bundle_bytes(r: &Ran) -> Vec<u8> {
    let path = r
        .stdout
        .lines()
        .find(|l| !l.starts_with(' ') && !l.is_empty())
        .expect("a bundle path");
    std::fs::read(path).expect("bundle")
}

#[test]
fn a_dpop_demanding_server_gets_a_session_with_bound_tokens_and_nonces() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (as_srv, as_base) = authorization_server(json!(["ES256"]), seen.clone());
    let (_rs, rs_url) = resource_server(as_base, seen.clone());
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(&tmp.path().join("home"), &rs_url);
    let describe = format!(
        "exit {}\n--- stdout\n{}\n--- stderr\n{}",
        r.code, r.stdout, r.stderr
    );
    assert!(r.logged_in, "{describe}");
    assert_eq!(r.code, 0, "{describe}");
    let s = seen.lock().expect("seen");
    assert!(s.problems.is_empty(), "{:?}\n{describe}", s.problems);
    assert_eq!(s.jkts.len(), 1, "one key for the whole run");
    assert!(s.nonced.0 >= 1 && s.nonced.1 >= 2, "{:?}", s.nonced);
    assert!(s.schemes.iter().all(|x| x == "DPoP"), "{:?}", s.schemes);
    let jkt = s.jkts.iter().next().cloned().expect("a thumbprint");
    drop(s);
    // Exactly two token requests: the one refused for want of a nonce and its retry
    // with the same code.
    let tokens: Vec<Req> = as_srv
        .requests
        .lock()
        .expect("requests")
        .iter()
        .filter(|q| q.path == "/token")
        .cloned()
        .collect();
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0].body, tokens[1].body, "the same request again");

    // The bundle: the facts, no token, no proof, the nonce challenges under dpop.nonce.
    let bytes = bundle_bytes(&r);
    for secret in [ACCESS, CODE] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} is in the bundle"
        );
        assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
    }
    assert!(
        !bytes.windows(14).any(|w| w == b"eyJ0eXAiOiJkcG"),
        "a DPoP proof is in the bundle"
    );
    let v = mcp_probe_schema::open(&bytes, &[]).expect("verifies");
    let session = v.evidence.session.as_ref().expect("a session");
    assert!(session.authenticated && session.revision.is_some());
    let d = session.dpop.as_ref().expect("session.dpop");
    assert_eq!(d.as_algs, Some(vec!["ES256".to_string()]));
    assert!(d.rs_demanded && d.used && d.as_nonce_required && d.rs_nonce_required);
    assert_eq!(d.alg.as_deref(), Some("ES256"));
    assert_eq!(d.jkt.as_deref(), Some(jkt.as_str()));
    assert_eq!(
        v.evidence.tokens[0].token_type.as_deref(),
        Some("DPoP"),
        "{:?}",
        v.evidence.tokens
    );
    let nonce_records: Vec<_> = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l == leg::DPOP_NONCE))
        .collect();
    assert_eq!(nonce_records.len(), 2, "one at the AS, one at the RS");
    for rec in nonce_records {
        let Observation::Http(x) = &rec.observation else {
            panic!("an HTTP record")
        };
        let proof = x
            .request
            .headers
            .iter()
            .find(|h| h.name == "DPoP")
            .expect("the proof header, redacted");
        assert!(proof.value_str().starts_with("redacted:sha256:"));
    }
}

#[test]
fn a_dpop_demand_without_a_signable_algorithm_stops_before_registration() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (as_srv, as_base) = authorization_server(json!(["RS256"]), seen.clone());
    let (_rs, rs_url) = resource_server(as_base, seen);
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(&tmp.path().join("home"), &rs_url);
    assert!(!r.logged_in);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("demands DPoP-bound tokens")
            && r.stderr.contains("[\"RS256\"]")
            && r.stderr.contains("ES256 only"),
        "{}",
        r.stderr
    );
    let reqs = as_srv.requests.lock().expect("requests").clone();
    assert!(
        reqs.iter()
            .all(|q| !q.path.starts_with("/register") && q.path != "/token"),
        "nothing is registered or spent"
    );
    let v = mcp_probe_schema::open(&bundle_bytes(&r), &[]).expect("verifies");
    let d = v
        .evidence
        .session
        .as_ref()
        .and_then(|s| s.dpop.as_ref())
        .expect("session.dpop");
    assert!(d.rs_demanded && !d.used && d.jkt.is_none());
}
