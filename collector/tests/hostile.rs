//! The real `mcp-collect` against scripted servers that misbehave in ways the real SDKs
//! do not (echoed credentials, cookies, token-bearing bodies, malformed HTTP, endless
//! bodies, silence), and against bad operator input.

mod support;

use std::sync::Arc;

use mcp_probe_schema::model::{BodyEnd, ErrorKind, HttpOutcome, Observation, RunStatus};
use serde_json::json;
use support::*;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJhbGljZSIsImF1ZCI6Imh0dHA6Ly8xMjcuMC4wLjEvbWNwIiwic2NvcGUiOiJtY3A6dG9vbHMifQ.c2lnbmF0dXJlLWJ5dGVzLXRoYXQtbXVzdC1uZXZlci1hcHBlYXI";
const COOKIE_SECRET: &str = "sess-9f8e7d6c5b4a39281706";
const REFRESH: &str = "rt-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const ACCESS2: &str = "at-ffeeddccbbaa99887766554433221100";
const SECRET: &str = "cs-topsecret-client-secret-value-42";

/// A legacy MCP server that leaks credentials every way it can.
fn leaky(req: &Req) -> Vec<u8> {
    let id = req.rpc_id();
    match req.rpc_method().as_str() {
        "server/discover" => json_response(400, &[("Set-Cookie", &format!("sid={COOKIE_SECRET}; Path=/; HttpOnly"))],
            &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32600,"message":format!("unknown; your header was {:?}", req.header("authorization"))}}).to_string()),
        "initialize" => json_response(200, &[("Mcp-Session-Id", "s-1"), ("Set-Cookie", &format!("sid={COOKIE_SECRET}"))],
            &json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},
                "serverInfo":{"name":"leaky","version":"1"},
                "instructions": format!("login exchange: access_token={ACCESS2}&refresh_token={REFRESH}&client_secret={SECRET}")}}).to_string()),
        "notifications/initialized" => b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec(),
        "tools/list" => json_response(200, &[],
            &json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}],
                "_meta":{"access_token":ACCESS2,"refresh_token":REFRESH,"client_secret":SECRET,
                         "echo": req.header("authorization"), "cookie": req.header("cookie")}}}).to_string()),
        _ => json_response(404, &[], "{}"),
    }
}

#[test]
fn no_credential_reaches_the_bundle_bytes() {
    let srv = serve(Arc::new(leaky));
    let run = collect(
        &["--token-env", "PROBE_TOKEN", &srv.url],
        &[("PROBE_TOKEN", TOKEN)],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    let path = &run.bundles()[0];
    let bytes = std::fs::read(path).unwrap();
    // The server really saw the token (so there was something to redact).
    let reqs = srv.requests.lock().unwrap().clone();
    // Every MCP request carried it except 2.3's unauthenticated tools/list, which exists
    // to be sent without it; discovery's metadata GETs never carry a credential.
    let bearer = format!("Bearer {TOKEN}");
    let without: Vec<&Req> = reqs
        .iter()
        .filter(|r| r.method == "POST" && r.header("authorization").as_deref() != Some(&bearer))
        .collect();
    assert_eq!(without.len(), 1, "{without:?}");
    assert_eq!(without[0].rpc_method(), "tools/list");
    assert_eq!(without[0].header("authorization"), None);
    let gets: Vec<&Req> = reqs.iter().filter(|r| r.method == "GET").collect();
    assert!(
        gets.iter()
            .all(|r| r.path.starts_with("/.well-known/") && r.header("authorization").is_none()),
        "{gets:?}"
    );
    for secret in [TOKEN, COOKIE_SECRET, REFRESH, ACCESS2, SECRET] {
        let hay = String::from_utf8_lossy(&bytes);
        assert!(!hay.contains(secret), "{secret} leaked into the bundle");
        // The signature part of the JWT must not survive either.
        assert!(!hay.contains("c2lnbmF0dXJlLWJ5dGVzLXRoYXQtbXVzdC1uZXZlci1hcHBlYXI"));
    }
    assert!(!run.stdout().contains(TOKEN) && !run.stderr().contains(TOKEN));
    let v = open(path);
    let fp = mcp_probe_schema::bundle::fingerprint(TOKEN.as_bytes());
    assert!(String::from_utf8_lossy(&bytes).contains(&fp));
    // JWT kept as decoded header and claims only.
    let t = &v.evidence.tokens[0];
    assert_eq!(t.source, "env:PROBE_TOKEN");
    assert_eq!(t.fingerprint, fp);
    assert_eq!(
        t.jwt_claims.as_ref().and_then(|c| c.get("sub")),
        Some(&json!("alice"))
    );
    assert_eq!(
        t.jwt_header.as_ref().and_then(|h| h.get("typ")),
        Some(&json!("at+jwt"))
    );
    // Records list what they redacted.
    let redactions: Vec<String> = v
        .records
        .iter()
        .flat_map(|r| r.redactions.iter().map(|x| x.what.clone()))
        .collect();
    for what in [
        "bearer-token",
        "cookie",
        "refresh_token",
        "access_token",
        "client_secret",
    ] {
        assert!(
            redactions.iter().any(|w| w == what),
            "{what} not listed in {redactions:?}"
        );
    }
    assert_eq!(
        v.evidence
            .session
            .as_ref()
            .and_then(|s| s.revision.as_deref()),
        Some("2025-11-25")
    );
}

#[test]
fn unreachable_target_gets_a_sealed_bundle_and_one_line() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let run = collect(&[&url], &[]);
    assert_eq!(
        run.code(),
        3,
        "an unreachable server is sealed evidence, and exit 3 says no session was reached: {}",
        run.describe()
    );
    let v = open(&run.bundles()[0]);
    assert_eq!(v.evidence.run.status, RunStatus::Failed);
    assert!(
        failure(&v).contains("connect"),
        "{:?}",
        v.evidence.run.failure
    );
    let errors: Vec<_> = run
        .stderr()
        .lines()
        .filter(|l| l.contains("error:"))
        .map(str::to_string)
        .collect();
    // One line for the target, one summary naming every target without a session.
    assert_eq!(errors.len(), 2, "{}", run.describe());
    assert!(errors[0].contains(&url));
    assert!(
        errors[1].contains("1 of 1 target(s) sealed without an MCP session (exit 3)")
            && errors[1].contains(&url),
        "{}",
        run.describe()
    );
    match &first_detect(&v).observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Error(e) => assert_eq!(e.kind, ErrorKind::Connect),
            o => panic!("{o:?}"),
        },
        o => panic!("{o:?}"),
    }
}

#[test]
fn non_mcp_server_is_recorded_as_no_endpoint_after_both_candidates() {
    let srv = serve(Arc::new(|_r: &Req| {
        b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\nnot here\n"
            .to_vec()
    }));
    let base = srv.url.trim_end_matches("/mcp").to_string();
    let run = collect(&[&base], &[]);
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    let v = open(&run.bundles()[0]);
    assert_eq!(v.evidence.run.status, RunStatus::Failed);
    let paths: Vec<String> = srv
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(
        paths,
        ["/mcp", "/mcp", "/", "/", "/sse"],
        "discover then initialize on /mcp, then on /, then the HTTP+SSE stream (every POST \
         answered 404 without a JSON-RPC body: the fallback rule)"
    );
    assert_eq!(
        v.records
            .iter()
            .filter(|r| r.legs.iter().any(|l| l == "endpoint.detect"))
            .count(),
        4
    );
    assert!(failure(&v).contains("HTTP 404"));
    assert!(
        failure(&v).contains("(HTTP+SSE GET): HTTP 404"),
        "{}",
        failure(&v)
    );
}

#[test]
fn malformed_http_is_a_protocol_error() {
    let srv = serve(Arc::new(|_r: &Req| b"SSH-2.0-OpenSSH_9.2\r\n\r\n".to_vec()));
    let run = collect(&[&srv.url], &[]);
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    let v = open(&run.bundles()[0]);
    match &first_detect(&v).observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Error(e) => assert_eq!(e.kind, ErrorKind::Protocol, "{e}"),
            o => panic!("{o:?}"),
        },
        o => panic!("{o:?}"),
    }
}

#[test]
fn endless_body_is_capped_hashed_and_stopped() {
    // Announces 64 MiB, sends it all: stored up to the cap, read up to the hard limit.
    let srv = serve(Arc::new(|_r: &Req| {
        let n = 64usize << 20;
        let mut v = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {n}\r\n\r\n"
        )
        .into_bytes();
        v.extend(std::iter::repeat_n(b'a', n));
        v
    }));
    let run = collect(&["--body-cap", "4096", &srv.url], &[]);
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    let v = open(&run.bundles()[0]);
    let resp = match &first_detect(&v).observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Response(r) => r.clone(),
            o => panic!("{o:?}"),
        },
        o => panic!("{o:?}"),
    };
    assert_eq!(resp.body.bytes.len(), 4096);
    assert!(resp.body.length > 4096);
    assert_eq!(resp.body.end, BodyEnd::LimitReached);
    assert!(std::fs::metadata(&run.bundles()[0]).unwrap().len() < 200_000);
}

#[test]
fn silent_server_times_out_per_request() {
    let srv = serve(Arc::new(|_r: &Req| Vec::new()));
    let t0 = std::time::Instant::now();
    let run = collect(&["--timeout", "1", &srv.url], &[]);
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    assert!(t0.elapsed().as_secs() < 20);
    let v = open(&run.bundles()[0]);
    match &first_detect(&v).observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Error(e) => assert_eq!(e.kind, ErrorKind::Timeout),
            o => panic!("{o:?}"),
        },
        o => panic!("{o:?}"),
    }
    assert_eq!(v.evidence.run.options.timeout_ms, 1000);
}

#[test]
fn ctrl_c_seals_the_journal_as_interrupted() {
    let srv = serve(Arc::new(|_r: &Req| Vec::new()));
    let dir = tempfile::tempdir().unwrap();
    let mut c = collect_cmd(&dir);
    c.args(["--timeout", "60", &srv.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    // Wait until the request is in flight.
    for _ in 0..100 {
        if !srv.requests.lock().unwrap().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = stdout.lines().next().expect("a bundle path");
    let v = open(std::path::Path::new(path));
    assert_eq!(v.evidence.run.status, RunStatus::Interrupted);
    assert!(failure(&v).contains("Ctrl-C"));
    // No journal is left behind once sealed.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn bad_operator_input_exits_2_with_one_line_naming_it() {
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (vec!["ftp://x.example"], vec![], "ftp://x.example"),
        (
            vec!["https://user:pw@x.example/"],
            vec![],
            "credentials in the URL",
        ),
        (vec![], vec![], "no target"),
        (
            vec!["--servers-file", "/nonexistent/list.txt"],
            vec![],
            "/nonexistent/list.txt",
        ),
        (
            vec!["--token-env", "NOPE_UNSET_VAR", "http://127.0.0.1:9/mcp"],
            vec![],
            "NOPE_UNSET_VAR",
        ),
        (
            vec!["--token-env", "T", "http://remote.example/mcp"],
            vec![("T", "secret-token-value")],
            "plain http",
        ),
        (
            vec!["--key", "/nonexistent/k.pem", "http://127.0.0.1:9/mcp"],
            vec![],
            "/nonexistent/k.pem",
        ),
        (
            vec!["--ca-file", "/nonexistent/ca.pem", "http://127.0.0.1:9/mcp"],
            vec![],
            "/nonexistent/ca.pem",
        ),
        (
            vec!["--inputs", "/nonexistent/in.json", "http://127.0.0.1:9/mcp"],
            vec![],
            "/nonexistent/in.json",
        ),
    ];
    for (args, envs, needle) in cases {
        let run = collect(&args, &envs);
        assert_eq!(run.code(), 2, "{args:?}: {}", run.describe());
        let err = run.stderr();
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"));
        assert!(run.stdout().is_empty());
        assert!(!err.contains("secret-token-value"));
    }
}

#[test]
fn key_is_created_0600_and_public_key_exports() {
    let srv = serve(Arc::new(leaky));
    let run = collect(&[&srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let key = run.home().join("keys/collector.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
    c.env("MCP_PROBE_HOME", run.home()).arg("--public-key");
    let out = c.output().unwrap();
    assert!(out.status.success());
    let pem = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"));
    let pk = mcp_probe_schema::PublicKey::parse(pem.as_bytes()).unwrap();
    let bytes = std::fs::read(&run.bundles()[0]).unwrap();
    assert!(
        mcp_probe_schema::open(&bytes, &[pk]).is_ok(),
        "the exported key verifies the bundle"
    );
    assert_eq!(
        std::fs::read_to_string(run.home().join("keys/collector.pub")).unwrap(),
        pem.trim_end().to_string() + "\n"
    );
}

#[test]
fn servers_file_targets_are_deduplicated() {
    let srv = serve(Arc::new(leaky));
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("servers.txt");
    std::fs::write(
        &list,
        format!("# fleet\n{}\n\n{} # again\n", srv.url, srv.url),
    )
    .unwrap();
    let run = collect(&["--servers-file", list.to_str().unwrap()], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_eq!(run.bundles().len(), 1);
}

/// The first endpoint-detection record (record 0 holds the skipped transport legs of a
/// plain-http target).
fn first_detect(v: &mcp_probe_schema::Verified) -> mcp_probe_schema::model::Record {
    v.records
        .iter()
        .find(|r| {
            r.legs
                .iter()
                .any(|l| l == mcp_probe_schema::vocab::leg::ENDPOINT_DETECT)
        })
        .cloned()
        .expect("an endpoint.detect record")
}

/// A pinned request connects to the addresses the guard checked and never resolves the
/// host again: a name that does not resolve at all still reaches the pinned address, so
/// a DNS answer changed between the guard's lookup and the connection cannot redirect
/// it (the network guard connects to the addresses it checked).
#[test]
fn pinned_requests_do_not_resolve_again() {
    let srv = serve(Arc::new(|_r: &Req| json_response(200, &[], "{}")));
    let port: u16 = srv
        .url
        .split(':')
        .nth(2)
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("port");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sent = rt.block_on(async {
        let trust = mcp_probe_collector::transport::tls::Trust::load(None).expect("trust");
        let client = mcp_probe_collector::transport::http::Client::new(
            trust,
            std::time::Duration::from_secs(5),
            4096,
        );
        client
            .send(mcp_probe_collector::transport::http::Request {
                method: "GET".into(),
                url: url::Url::parse(&format!("http://pinned-host.invalid:{port}/.well-known/x"))
                    .expect("url"),
                headers: Vec::new(),
                body: Vec::new(),
                await_id: None,
                head_only_stream: false,
                connect_to: Some(vec![std::net::SocketAddr::from(([127, 0, 0, 1], port))]),
            })
            .await
    });
    match &sent.exchange.outcome {
        HttpOutcome::Response(r) => assert_eq!(r.status, 200),
        HttpOutcome::Error(e) => panic!("the pinned address was not used: {e}"),
    }
    let reqs = srv.requests.lock().expect("lock").clone();
    assert_eq!(reqs.len(), 1);
    assert!(
        reqs[0].head.contains("Host: pinned-host.invalid:"),
        "{}",
        reqs[0].head
    );
}

/// A server that closes a kept-alive connection behind the client's back: the next
/// request is written on the dead connection, fails before any response byte, and is
/// sent once more on a new connection. The bundle says so on that exchange.
#[test]
fn a_retried_request_records_its_first_attempt() {
    let srv = serve(Arc::new(|r: &Req| {
        let id = r.rpc_id();
        match r.rpc_method().as_str() {
            "server/discover" => json_response(
                200,
                &[("X-Test-Close-After", "1")],
                &json!({"jsonrpc":"2.0","id":id,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}).to_string(),
            ),
            _ => json_response(404, &[], "{}"),
        }
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    let retried: Vec<_> = v
        .records
        .iter()
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => x.first_attempt.as_ref().map(|e| (r.seq, e.kind)),
            _ => None,
        })
        .collect();
    assert!(
        !retried.is_empty(),
        "the request after the closed connection was retried and recorded"
    );
    assert!(
        retried.iter().all(|(_, k)| *k == ErrorKind::Reset),
        "{retried:?}"
    );
}
