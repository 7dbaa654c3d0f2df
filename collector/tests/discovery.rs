//! OAuth discovery and the network guard through the library: against the real lab
//! (py2-auth resource server + oidc-provider AS), and against a scripted
//! server on 127.0.0.1 that advertises internal URLs. Nothing here ever connects to a
//! non-loopback address: those URLs must be refused before any connect.
#![allow(clippy::unwrap_used)]

mod support;

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_probe_collector::journal::Journal;
use mcp_probe_collector::mcp::{Ending, Probe};
use mcp_probe_collector::oauth::discovery::Discovered;
use mcp_probe_collector::oauth::guard::{check_fetch, AddrClass};
use mcp_probe_collector::transport::http::Client;
use mcp_probe_collector::transport::tls::Trust;
use mcp_probe_schema::model::{
    ErrorKind, HttpExchange, HttpOutcome, Observation, Options, Record, Target,
};
use mcp_probe_schema::redact::Redactor;
use mcp_probe_schema::vocab::{leg, LegId};
use serde_json::{json, Value};

use support::lab;

struct Rig {
    client: Client,
    journal: Arc<Mutex<Journal>>,
    _dir: tempfile::TempDir,
}

impl Rig {
    fn new(endpoint: &str) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let target = Target {
            as_typed: endpoint.to_string(),
            base_url: url::Url::parse(endpoint)
                .unwrap()
                .origin()
                .ascii_serialization(),
            candidates: vec![endpoint.to_string()],
            endpoint: None,
            addresses: Vec::new(),
            transport: Default::default(),
            message_endpoint: None,
            source: None,
        };
        let options = Options {
            timeout_ms: 5000,
            max_pages: 10,
            ..mcp_probe_schema::testkit::options()
        };
        let journal =
            Journal::create(dir.path(), "discovery", target, options, Redactor::new()).unwrap();
        Rig {
            client: Client::new(Trust::load(None).unwrap(), Duration::from_secs(5), 1 << 20),
            journal: Arc::new(Mutex::new(journal)),
            _dir: dir,
        }
    }

    fn probe(&self, token: Option<&str>) -> Probe<'_> {
        Probe::new(
            &self.client,
            self.journal.clone(),
            token.map(str::to_string),
            10,
        )
    }

    fn records(&self, l: LegId) -> Vec<Record> {
        self.journal
            .lock()
            .unwrap()
            .records()
            .into_iter()
            .filter(|r| r.legs.iter().any(|x| x == l))
            .collect()
    }

    /// The raw `WWW-Authenticate` of the 401 that ended detection.
    fn challenge(&self) -> Vec<u8> {
        let detect = self.records(leg::ENDPOINT_DETECT);
        let x = http(detect.last().unwrap());
        let HttpOutcome::Response(r) = &x.outcome else {
            panic!("detection got no response: {:?}", x.outcome)
        };
        assert_eq!(r.status, 401);
        mcp_probe_schema::derive::header(&r.headers, "www-authenticate")
            .unwrap()
            .value
            .to_vec()
    }
}

fn http(r: &Record) -> &HttpExchange {
    match &r.observation {
        Observation::Http(x) => x,
        other => panic!("not an HTTP record: {other:?}"),
    }
}

fn status(r: &Record) -> Option<u16> {
    match &http(r).outcome {
        HttpOutcome::Response(resp) => Some(resp.status),
        HttpOutcome::Error(_) => None,
    }
}

/// Asserts the record is a guard refusal of `url` with nothing sent.
fn assert_refused(r: &Record, url: &str, address: &str) {
    let x = http(r);
    assert_eq!(x.request.url, url);
    assert_eq!(x.connection, None, "{url}: a connection was made");
    assert_eq!(r.duration_us, 0);
    match &x.outcome {
        HttpOutcome::Error(e) => {
            assert_eq!(e.kind, ErrorKind::RefusedByGuard, "{url}: {e}");
            assert!(e.message.contains(address), "{url}: {}", e.message);
            assert!(e.message.contains(url), "{url}: {}", e.message);
        }
        other => panic!("{url} was fetched: {other:?}"),
    }
}

fn skipped(r: &Record) -> Option<&str> {
    match &r.observation {
        Observation::Skipped { reason } => Some(reason),
        _ => None,
    }
}

#[tokio::test]
async fn lab_protected_resource_and_authorization_server() {
    let (Some(rs), Some(as_url)) = (lab("LAB_RS"), lab("LAB_AS")) else {
        return;
    };
    let endpoint = url::Url::parse(&rs).unwrap();
    let rig = Rig::new(&rs);
    let mut probe = rig.probe(None);
    assert_eq!(
        probe.run(std::slice::from_ref(&endpoint)).await,
        Ending::AuthRequired
    );
    let challenge = rig.challenge();
    let found: Discovered = probe.discovery(Some(challenge)).await;

    // The challenge.
    let bearer = found.challenge.as_ref().expect("a Bearer challenge");
    let origin = endpoint.origin().ascii_serialization();
    let inserted = format!(
        "{origin}/.well-known/oauth-protected-resource{}",
        endpoint.path()
    );
    let root = format!("{origin}/.well-known/oauth-protected-resource");
    assert_eq!(bearer.resource_metadata(), Some(inserted.as_str()));

    // PRM: the challenge URL equals the path-inserted one, so two requests.
    let prm = rig.records(leg::PRM);
    let urls: Vec<&str> = prm.iter().map(|r| http(r).request.url.as_str()).collect();
    assert_eq!(urls, vec![inserted.as_str(), root.as_str()]);
    assert_eq!(status(&prm[0]), Some(200));
    assert_eq!(status(&prm[1]), Some(404));
    for r in &prm {
        let x = http(r);
        assert!(x
            .request
            .headers
            .iter()
            .all(|h| !h.name.eq_ignore_ascii_case("authorization")));
        assert!(x
            .request
            .headers
            .iter()
            .any(|h| h.name == "Accept" && &*h.value == b"application/json"));
    }
    let doc = found.prm.as_ref().expect("PRM document");
    assert_eq!(found.prm_url.as_deref(), Some(inserted.as_str()));
    assert_eq!(doc["resource"], json!(rs));
    assert_eq!(doc["authorization_servers"], json!([as_url]));

    // AS metadata: the root issuer's RFC 8414 form answers first.
    let as_recs = rig.records(leg::AS_META);
    assert_eq!(as_recs.len(), 1, "{as_recs:?}");
    assert_eq!(
        http(&as_recs[0]).request.url,
        format!("{as_url}/.well-known/oauth-authorization-server")
    );
    assert_eq!(status(&as_recs[0]), Some(200));
    assert_eq!(found.as_metadata.len(), 1);
    let (advertised, meta) = &found.as_metadata[0];
    assert_eq!(advertised, &as_url);
    assert_eq!(meta["issuer"], json!(as_url));
    assert!(meta["token_endpoint"].is_string());
}

/// A scripted HTTP/1.1 server on 127.0.0.1 answering by path; keeps connections alive.
struct Scripted {
    base: String,
    seen: Arc<Mutex<Vec<(String, String, String)>>>,
}

type Handler = dyn Fn(&str, &str, &str) -> (u16, Vec<(String, String)>, String) + Send + Sync;

fn serve(handler: Arc<Handler>) -> Scripted {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s2, b2) = (seen.clone(), base.clone());
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (h, seen, base) = (handler.clone(), s2.clone(), b2.clone());
            std::thread::spawn(move || conn(s, &*h, &seen, &base));
        }
    });
    Scripted { base, seen }
}

fn conn(s: TcpStream, h: &Handler, seen: &Mutex<Vec<(String, String, String)>>, base: &str) {
    let Ok(mut w) = s.try_clone() else { return };
    let mut r = BufReader::new(s);
    while let Some(support::Req {
        method, path, head, ..
    }) = support::read_request(&mut r)
    {
        seen.lock()
            .unwrap()
            .push((method.clone(), path.clone(), head.clone()));
        let (code, headers, text) = h(&method, &path, base);
        let mut out = format!("HTTP/1.1 {code} X\r\nContent-Length: {}\r\n", text.len());
        for (k, v) in headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&text);
        if w.write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}

fn unauthorized(resource_metadata: &str) -> (u16, Vec<(String, String)>, String) {
    (
        401,
        vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "WWW-Authenticate".into(),
                format!(
                    r#"Bearer error="invalid_token", scope="mcp:tools", resource_metadata="{resource_metadata}""#
                ),
            ),
        ],
        r#"{"error":"invalid_token"}"#.into(),
    )
}

fn json_200(v: Value) -> (u16, Vec<(String, String)>, String) {
    (
        200,
        vec![("Content-Type".into(), "application/json".into())],
        v.to_string(),
    )
}

fn not_found() -> (u16, Vec<(String, String)>, String) {
    (404, Vec::new(), "not found".into())
}

const INTERNAL: [(&str, &str); 3] = [
    (
        "http://10.0.0.1/.well-known/oauth-protected-resource",
        "10.0.0.1",
    ),
    (
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "169.254.169.254",
    ),
    ("http://[fd00::1]:8443/prm", "fd00::1"),
];

#[tokio::test]
async fn check_fetch_refuses_internal_urls_for_a_public_target() {
    for (u, addr) in INTERNAL {
        let t0 = Instant::now();
        let r = check_fetch(&url::Url::parse(u).unwrap(), AddrClass::Public)
            .await
            .unwrap_err();
        assert_eq!(r.kind, ErrorKind::RefusedByGuard);
        assert_eq!(r.address, Some(addr.parse().unwrap()));
        assert!(r.reason.contains(u) && r.reason.contains(addr), "{r}");
        assert!(t0.elapsed() < Duration::from_secs(1));
    }
}

#[tokio::test]
async fn internal_resource_metadata_is_refused_for_a_public_target() {
    for (rm, addr) in INTERNAL {
        let rm_owned = rm.to_string();
        let srv = serve(Arc::new(
            move |method: &str, _: &str, _: &str| match method {
                "POST" => unauthorized(&rm_owned),
                _ => json_200(json!({"resource": "x"})),
            },
        ));
        let endpoint = format!("{}/mcp", srv.base);
        let rig = Rig::new(&endpoint);
        let mut probe = rig.probe(None);
        let ep = url::Url::parse(&endpoint).unwrap();
        assert_eq!(probe.run(&[ep]).await, Ending::AuthRequired);
        let challenge = rig.challenge();
        let before = srv.seen.lock().unwrap().len();
        let t0 = Instant::now();
        // The scripted server is on loopback; classify the target as public explicitly,
        // so every candidate (its own well-known URLs too) must be refused.
        let found = probe
            .discovery_for(Some(challenge), AddrClass::Public)
            .await;
        assert!(t0.elapsed() < Duration::from_secs(2), "a connect was tried");
        assert_eq!(srv.seen.lock().unwrap().len(), before, "something was sent");
        assert_eq!(
            found.challenge.as_ref().and_then(|c| c.resource_metadata()),
            Some(rm)
        );
        assert_eq!(
            found.challenge.as_ref().and_then(|c| c.scope()),
            Some("mcp:tools")
        );
        assert!(found.prm.is_none());
        let prm = rig.records(leg::PRM);
        assert_eq!(prm.len(), 3);
        assert_refused(&prm[0], rm, addr);
        assert_refused(
            &prm[1],
            &format!("{}/.well-known/oauth-protected-resource/mcp", srv.base),
            "127.0.0.1",
        );
        assert_refused(
            &prm[2],
            &format!("{}/.well-known/oauth-protected-resource", srv.base),
            "127.0.0.1",
        );
        let as_recs = rig.records(leg::AS_META);
        assert_eq!(as_recs.len(), 1);
        assert!(skipped(&as_recs[0])
            .unwrap()
            .contains("no protected-resource metadata document was served"));
    }
}

#[tokio::test]
async fn internal_urls_refused_for_a_loopback_target_and_nothing_followed() {
    // A loopback target may fetch its own loopback URLs (same class), never private,
    // link-local or ULA ones, and no redirect is followed.
    let srv = serve(Arc::new(|method: &str, path: &str, base: &str| {
        match (method, path) {
            ("POST", _) => unauthorized("http://10.0.0.1/prm"),
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_200(json!({
                "resource": format!("{base}/mcp"),
                "authorization_servers": [
                    "http://169.254.169.254",
                    "http://[fd00::1]:8443/tenant",
                    "http://10.0.0.1/",
                    "https://user:pw@127.0.0.1/",
                ],
            })),
            ("GET", "/.well-known/oauth-protected-resource") => (
                302,
                vec![("Location".into(), format!("{base}/elsewhere"))],
                String::new(),
            ),
            _ => not_found(),
        }
    }));
    let endpoint = format!("{}/mcp", srv.base);
    let rig = Rig::new(&endpoint);
    // A held credential must not be sent on discovery.
    let mut probe = rig.probe(Some("tok-must-not-travel"));
    assert_eq!(
        probe.run(&[url::Url::parse(&endpoint).unwrap()]).await,
        Ending::AuthRequired
    );
    let challenge = rig.challenge();
    let t0 = Instant::now();
    let found = probe.discovery(Some(challenge)).await;
    assert!(t0.elapsed() < Duration::from_secs(3));

    let prm = rig.records(leg::PRM);
    assert_eq!(prm.len(), 3);
    assert_refused(&prm[0], "http://10.0.0.1/prm", "10.0.0.1");
    assert_eq!(status(&prm[1]), Some(200));
    assert_eq!(status(&prm[2]), Some(302));
    assert_eq!(
        found.prm_url.as_deref(),
        Some(format!("{}/.well-known/oauth-protected-resource/mcp", srv.base).as_str())
    );

    let as_recs = rig.records(leg::AS_META);
    let refused: Vec<&Record> = as_recs.iter().filter(|r| skipped(r).is_none()).collect();
    // Root issuer: two forms; issuer with a path: three.
    assert_eq!(refused.len(), 2 + 3 + 2 + 2, "{as_recs:#?}");
    assert_refused(
        refused[0],
        "http://169.254.169.254/.well-known/oauth-authorization-server",
        "169.254.169.254",
    );
    assert_refused(
        refused[1],
        "http://169.254.169.254/.well-known/openid-configuration",
        "169.254.169.254",
    );
    assert_refused(
        refused[2],
        "http://[fd00::1]:8443/.well-known/oauth-authorization-server/tenant",
        "fd00::1",
    );
    assert_refused(
        refused[3],
        "http://[fd00::1]:8443/.well-known/openid-configuration/tenant",
        "fd00::1",
    );
    assert_refused(
        refused[4],
        "http://[fd00::1]:8443/tenant/.well-known/openid-configuration",
        "fd00::1",
    );
    assert_refused(
        refused[5],
        "http://10.0.0.1/.well-known/oauth-authorization-server",
        "10.0.0.1",
    );
    for r in &refused[7..] {
        let HttpOutcome::Error(e) = &http(r).outcome else {
            panic!("userinfo URL fetched")
        };
        assert_eq!(e.kind, ErrorKind::RefusedByGuard);
        assert!(e.message.contains("userinfo"), "{e}");
    }
    assert!(found.as_metadata.is_empty());

    // What reached the server: detection, then exactly the two loopback well-known GETs,
    // without credential; the redirect target was never requested.
    let seen = srv.seen.lock().unwrap().clone();
    let gets: Vec<&(String, String, String)> = seen.iter().filter(|s| s.0 == "GET").collect();
    assert_eq!(
        gets.iter().map(|s| s.1.as_str()).collect::<Vec<_>>(),
        vec![
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource"
        ]
    );
    for g in gets {
        assert!(
            !g.2.to_ascii_lowercase().contains("authorization:"),
            "{}",
            g.2
        );
    }
}

#[tokio::test]
async fn authorization_servers_capped_and_forms_in_order() {
    let srv = serve(Arc::new(|method: &str, path: &str, base: &str| {
        let issuers: Vec<Value> = (1..=7)
            .map(|i| json!(format!("{base}/t{i}")))
            .chain([
                json!(""),
                json!(42),
                json!(null),
                json!(format!("{base}/t1")),
            ])
            .collect();
        match (method, path) {
            ("POST", _) => unauthorized(&format!("{base}/meta")),
            ("GET", "/meta") => json_200(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": issuers}),
            ),
            // t1: only the OIDC path-inserted form serves metadata.
            ("GET", "/.well-known/openid-configuration/t1") => {
                json_200(json!({"issuer": format!("{base}/t1")}))
            }
            // t2: the first form answers without an issuer, the third with one.
            ("GET", "/.well-known/oauth-authorization-server/t2") => json_200(json!({})),
            ("GET", "/t2/.well-known/openid-configuration") => {
                json_200(json!({"issuer": format!("{base}/t2")}))
            }
            _ => not_found(),
        }
    }));
    let endpoint = format!("{}/mcp", srv.base);
    let rig = Rig::new(&endpoint);
    let mut probe = rig.probe(None);
    assert_eq!(
        probe.run(&[url::Url::parse(&endpoint).unwrap()]).await,
        Ending::AuthRequired
    );
    let challenge = rig.challenge();
    let found = probe.discovery(Some(challenge)).await;

    let prm: Vec<String> = rig
        .records(leg::PRM)
        .iter()
        .map(|r| http(r).request.url.clone())
        .collect();
    assert_eq!(
        prm,
        vec![
            format!("{}/meta", srv.base),
            format!("{}/.well-known/oauth-protected-resource/mcp", srv.base),
            format!("{}/.well-known/oauth-protected-resource", srv.base),
        ]
    );
    assert_eq!(
        found.prm_url.as_deref(),
        Some(format!("{}/meta", srv.base).as_str())
    );

    let as_recs = rig.records(leg::AS_META);
    let notes: Vec<&str> = as_recs.iter().filter_map(skipped).collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].contains("3 authorization_servers entries"),
        "{}",
        notes[0]
    );
    assert!(
        notes[1].contains("2 authorization servers beyond the first 5")
            && notes[1].contains("/t6")
            && notes[1].contains("/t7"),
        "{}",
        notes[1]
    );
    let fetched: Vec<String> = as_recs
        .iter()
        .filter(|r| skipped(r).is_none())
        .map(|r| {
            http(r)
                .request
                .url
                .trim_start_matches(&srv.base)
                .to_string()
        })
        .collect();
    let mut want = vec![
        "/.well-known/oauth-authorization-server/t1".to_string(),
        "/.well-known/openid-configuration/t1".to_string(),
        "/.well-known/oauth-authorization-server/t2".to_string(),
        "/.well-known/openid-configuration/t2".to_string(),
        "/t2/.well-known/openid-configuration".to_string(),
    ];
    for i in 3..=5 {
        want.push(format!("/.well-known/oauth-authorization-server/t{i}"));
        want.push(format!("/.well-known/openid-configuration/t{i}"));
        want.push(format!("/t{i}/.well-known/openid-configuration"));
    }
    assert_eq!(fetched, want);
    let got: Vec<(&str, &Value)> = found
        .as_metadata
        .iter()
        .map(|(a, v)| (a.as_str(), &v["issuer"]))
        .collect();
    let (t1, t2) = (format!("{}/t1", srv.base), format!("{}/t2", srv.base));
    assert_eq!(
        got,
        vec![(t1.as_str(), &json!(t1)), (t2.as_str(), &json!(t2))]
    );
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused_and_recorded() {
    // The issuer has a path: the RFC 8414 form answers 404, the OIDC path-inserted form
    // serves metadata for another issuer (OpenID Connect Discovery §4.3). The third form
    // is not fetched: the first document with an issuer decides.
    let srv = serve(Arc::new(|method: &str, path: &str, base: &str| {
        match (method, path) {
            ("POST", _) => unauthorized(&format!("{base}/meta")),
            ("GET", "/meta") => json_200(json!({"resource": format!("{base}/mcp"),
                "authorization_servers": [format!("{base}/tenant")]})),
            ("GET", "/.well-known/openid-configuration/tenant") => json_200(json!({
                "issuer": "https://attacker.example.com",
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "code_challenge_methods_supported": ["S256"]})),
            _ => not_found(),
        }
    }));
    let endpoint = format!("{}/mcp", srv.base);
    let rig = Rig::new(&endpoint);
    let mut probe = rig.probe(None);
    assert_eq!(
        probe.run(&[url::Url::parse(&endpoint).unwrap()]).await,
        Ending::AuthRequired
    );
    let challenge = rig.challenge();
    let found = probe.discovery(Some(challenge)).await;
    assert!(found.as_metadata.is_empty(), "{found:?}");
    let oidc = format!("{}/.well-known/openid-configuration/tenant", srv.base);
    let [(url, r)] = found.refused.as_slice() else {
        panic!("one refusal expected: {found:?}")
    };
    assert_eq!(url, &oidc);
    assert_eq!(r.member, "issuer");
    assert_eq!(r.expected, format!("{}/tenant", srv.base));
    assert_eq!(r.served, json!("https://attacker.example.com"));
    assert_eq!(r.rule, "OpenID Connect Discovery §4.3");
    let as_recs = rig.records(leg::AS_META);
    let urls: Vec<&str> = as_recs
        .iter()
        .map(|r| http(r).request.url.as_str())
        .collect();
    assert_eq!(
        urls,
        vec![
            format!("{}/.well-known/oauth-authorization-server/tenant", srv.base).as_str(),
            oidc.as_str()
        ]
    );
    assert_eq!(http(&as_recs[0]).refused, None);
    assert_eq!(http(&as_recs[1]).refused.as_deref(), Some(r));
}
