//! The RFC 8414 §3.3 issuer check end to end: the real `mcp-collect` against a scripted
//! loopback server whose protected-resource metadata advertises the server itself as
//! authorization server, and whose authorization-server metadata names another issuer
//! (`https://attacker.example.com`, only a string: nothing resolves or contacts it). The
//! collector must refuse the metadata before any request to the endpoints it names, say
//! so in one line, record the refusal, and seal a bundle that verifies; the grader names
//! the refusal in `oauth-discovery-validated`. A second server serves protected-resource metadata for another
//! resource (RFC 9728 §3.3): refused the same way, no authorization server is fetched.
//!
//! `mcp-collect` is a binary of another package, so it must be built first
//! (`cargo build -p mcp-probe-collector --bins`); without it the test fails
//! (`support::lab::require_collector`).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::verdict::{SubOutcome, Verdict};
use serde_json::{json, Value};
use support::lab::sub;
use support::rules::run;

const EVIL: &str = "https://attacker.example.com";

/// What the scripted server serves: the issuer its AS metadata names (None: itself) and
/// the resource its PRM names (None: the endpoint).
#[derive(Clone)]
struct Script {
    issuer: Option<&'static str>,
    resource: Option<&'static str>,
}

struct Server {
    base: String,
    /// Every request line's path, in order.
    seen: Arc<Mutex<Vec<String>>>,
}

fn serve(script: Script) -> Server {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://127.0.0.1:{}", l.local_addr().expect("addr").port());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s2, b2) = (seen.clone(), base.clone());
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (seen, base, script) = (s2.clone(), b2.clone(), script.clone());
            std::thread::spawn(move || conn(s, &seen, &base, &script));
        }
    });
    Server { base, seen }
}

fn conn(s: TcpStream, seen: &Mutex<Vec<String>>, base: &str, script: &Script) {
    let Ok(mut w) = s.try_clone() else { return };
    let mut r = BufReader::new(s);
    loop {
        let mut first = String::new();
        if r.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let mut parts = first.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        seen.lock().expect("seen").push(path.to_string());
        let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
        let (status, extra, text) = match (method, path) {
            ("POST", "/mcp") => (
                401,
                format!("WWW-Authenticate: Bearer resource_metadata=\"{prm}\"\r\n"),
                r#"{"error":"invalid_token"}"#.to_string(),
            ),
            ("GET", "/.well-known/oauth-protected-resource/mcp") => (
                200,
                String::new(),
                json!({
                    "resource": script.resource.map_or(format!("{base}/mcp"), str::to_string),
                    "authorization_servers": [base],
                })
                .to_string(),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => (
                200,
                String::new(),
                json!({
                    "issuer": script.issuer.unwrap_or(base),
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "authorization_response_iss_parameter_supported": true,
                })
                .to_string(),
            ),
            _ => (404, String::new(), "not found".to_string()),
        };
        let out = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n{text}",
            text.len()
        );
        if w.write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}

fn no_request_to_the_oauth_endpoints(srv: &Server) {
    let seen = srv.seen.lock().expect("seen").clone();
    for p in ["/register", "/authorize", "/token"] {
        assert!(
            !seen.iter().any(|s| s.starts_with(p)),
            "a request reached {p}: {seen:?}"
        );
    }
}

#[test]
fn metadata_for_another_issuer_or_resource_is_refused_recorded_and_graded() {
    let Some(bin) = support::lab::require_collector() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");

    // 1. Authorization-server metadata naming another issuer.
    let srv = serve(Script {
        issuer: Some(EVIL),
        resource: None,
    });
    let home = tmp.path().join("issuer");
    let r = support::lab::collect_headless(&bin, &home, &format!("{}/mcp", srv.base), &[]);
    assert!(!r.logged_in, "{}", r.stderr);
    no_request_to_the_oauth_endpoints(&srv);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("issuer mismatch"))
        .unwrap_or_else(|| panic!("no issuer-mismatch line: {}", r.stderr));
    assert!(
        line.contains(EVIL) && line.contains(&srv.base) && line.contains("RFC 8414 §3.3"),
        "{line}"
    );
    // The refusal is recorded on the exchange that served the metadata.
    let refused: Vec<(String, Value)> = r
        .evidence
        .http_records()
        .filter_map(|(_, x)| {
            x.refused.as_ref().map(|f| {
                (
                    x.request.url.clone(),
                    json!([f.member, f.expected, f.served, f.rule]),
                )
            })
        })
        .collect();
    assert_eq!(
        refused,
        vec![(
            format!("{}/.well-known/oauth-authorization-server", srv.base),
            json!(["issuer", srv.base, EVIL, "RFC 8414 §3.3"])
        )]
    );
    let c = "oauth-discovery-validated";
    let o = run(c, &r.evidence, &Context::default());
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "g"), SubOutcome::Fail, "{o:?}");
    assert!(
        o.evidence
            .contains("the collector refused 1 metadata document(s)")
            && o.evidence.contains("issuer mismatch")
            && o.evidence.contains(EVIL),
        "{}",
        o.evidence
    );

    // 2. Protected-resource metadata for another resource: no authorization server is
    // fetched at all.
    let srv = serve(Script {
        issuer: None,
        resource: Some("https://attacker.example.com/mcp"),
    });
    let home = tmp.path().join("resource");
    let r = support::lab::collect_headless(&bin, &home, &format!("{}/mcp", srv.base), &[]);
    assert!(!r.logged_in, "{}", r.stderr);
    no_request_to_the_oauth_endpoints(&srv);
    let seen = srv.seen.lock().expect("seen").clone();
    assert!(
        !seen
            .iter()
            .any(|s| s.contains("oauth-authorization-server")),
        "{seen:?}"
    );
    assert!(
        r.stderr
            .lines()
            .any(|l| l.contains("resource mismatch") && l.contains("RFC 9728 §3.3")),
        "{}",
        r.stderr
    );
    let o = run(c, &r.evidence, &Context::default());
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "d"), SubOutcome::Fail, "{o:?}");
    assert!(o.evidence.contains("resource mismatch"), "{}", o.evidence);
}
