//! The journal as a redaction boundary (docs/collector.md, "The journal"): a token a
//! server echoes into session fields, failure texts, skip reasons or terminal escapes
//! never reaches a bundle byte, stdout or stderr; one redactor serves every target.

mod support;

use std::sync::Arc;

use mcp_probe_collector::journal::{Journal, SharedRedactor};
use mcp_probe_schema::model::{Observation, RunStatus};
use mcp_probe_schema::redact::Redactor;
use serde_json::json;
use support::*;

/// 34 characters, as in the issue.
const TOKEN: &str = "tk_live_9Zq4Xw7Vb2Nm5Lk8Jh3Gf6Dd1Sa";

fn leaks_token(bytes: &[u8]) -> bool {
    let mut r = Redactor::new();
    r.add_secret(TOKEN.as_bytes(), "bearer-token");
    r.leaks(bytes) || String::from_utf8_lossy(bytes).contains(TOKEN)
}

/// A legacy server that puts the bearer token it receives into every session field:
/// `serverInfo`, `capabilities`, `Mcp-Session-Id`, plus a terminal escape in its name.
fn echoing(req: &Req) -> Vec<u8> {
    let id = req.rpc_id();
    let tok = req
        .header("authorization")
        .and_then(|a| a.strip_prefix("Bearer ").map(str::to_string))
        .unwrap_or_default();
    match req.rpc_method().as_str() {
        "server/discover" => legacy_only(&id),
        "initialize" => json_response(
            200,
            &[("Mcp-Session-Id", &tok)],
            &json!({"jsonrpc":"2.0","id":id,"result":{
                "protocolVersion":"2025-11-25",
                "capabilities":{"tools":{}, "experimental":{"echo": tok}},
                "serverInfo":{"name": format!("srv \u{1b}]0;pwned\u{7} {tok}"), "version": tok}}})
            .to_string(),
        ),
        "notifications/initialized" => b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec(),
        "tools/list" => json_response(
            200,
            &[],
            &json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}})
                .to_string(),
        ),
        _ => json_response(404, &[], "{}"),
    }
}

#[test]
fn a_token_echoed_into_session_fields_reaches_no_bundle_byte_and_no_output() {
    let srv = serve(Arc::new(echoing));
    let run = collect(
        &["--info", "--token-env", "PROBE_TOKEN", &srv.url],
        &[("PROBE_TOKEN", TOKEN)],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    // The server really echoed it (so there was something to redact).
    let reqs = srv.requests.lock().unwrap().clone();
    assert!(reqs
        .iter()
        .any(|r| r.header("authorization").as_deref() == Some(&format!("Bearer {TOKEN}"))));
    let path = &run.bundles()[0];
    let bytes = std::fs::read(path).unwrap();
    assert!(!leaks_token(&bytes), "the token is in the bundle");
    let v = open(path);
    let s = v.evidence.session.as_ref().expect("session");
    let fp = mcp_probe_schema::bundle::fingerprint(TOKEN.as_bytes());
    assert_eq!(s.revision.as_deref(), Some("2025-11-25"));
    assert_eq!(s.session_id.as_deref(), Some(fp.as_str()));
    let info = s.server_info.as_ref().expect("server info").to_string();
    assert!(info.contains(&fp), "{info}");
    let caps = s.capabilities.as_ref().expect("capabilities").to_string();
    assert!(caps.contains(&fp), "{caps}");
    // Derived views and progress: redacted and escaped.
    for (what, text) in [("stdout", run.stdout()), ("stderr", run.stderr())] {
        assert!(!leaks_token(text.as_bytes()), "{what}: {text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{what}: {text:?}"
        );
    }
    assert!(
        run.stdout()
            .contains("server: srv \\u{1b}]0;pwned\\u{7} redacted:sha256:"),
        "{}",
        run.stdout()
    );
    // No journal is left behind.
    let left: Vec<_> = std::fs::read_dir(run.dir.path().join("out"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.iter().all(|n| n.ends_with(".mcpev")), "{left:?}");
}

/// Not MCP: both detection requests are refused with a JSON-RPC error that echoes the
/// Authorization header and carries terminal escapes; the reason becomes `run.failure`
/// and the stderr error line.
fn refusing(req: &Req) -> Vec<u8> {
    let id = req.rpc_id();
    let auth = req.header("authorization").unwrap_or_default();
    json_response(
        400,
        &[],
        &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32600,
            "message": format!("\u{1b}[2J\u{1b}]0;owned\u{7}bad credential {auth}")}})
        .to_string(),
    )
}

#[test]
fn a_failure_echoing_the_token_is_redacted_in_the_bundle_and_on_stderr_even_quiet() {
    let srv = serve(Arc::new(refusing));
    let run = collect(
        &["-q", "--token-env", "PROBE_TOKEN", &srv.url],
        &[("PROBE_TOKEN", TOKEN)],
    );
    assert!(!run.bundles().is_empty(), "{}", run.describe());
    let path = &run.bundles()[0];
    let bytes = std::fs::read(path).unwrap();
    assert!(!leaks_token(&bytes), "the token is in the bundle");
    let v = open(path);
    assert_eq!(v.evidence.run.status, RunStatus::Failed);
    let failure = v.evidence.run.failure.clone().unwrap_or_default();
    assert!(failure.contains("bad credential"), "{failure}");
    assert!(failure.contains("redacted:sha256:"), "{failure}");
    let err = run.stderr();
    // -q silences progress, not the error line; that line is redacted and escaped.
    assert!(err.contains("bad credential"), "{err}");
    assert!(!leaks_token(err.as_bytes()), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains("\\u{1b}[2J"), "{err}");
}

fn target() -> mcp_probe_schema::model::Target {
    mcp_probe_schema::testkit::evidence("https://mcp.example/mcp", Vec::new()).target
}

fn options() -> mcp_probe_schema::model::Options {
    mcp_probe_schema::testkit::evidence("https://mcp.example/mcp", Vec::new())
        .run
        .options
}

#[test]
fn a_secret_learned_by_one_target_is_redacted_in_every_other() {
    let dir = tempfile::tempdir().unwrap();
    let shared = SharedRedactor::new();
    let mut a = Journal::create(dir.path(), "a", target(), options(), shared.clone()).unwrap();
    let mut b = Journal::create(dir.path(), "b", target(), options(), shared.clone()).unwrap();
    let refresh = "rt-5f0e1d2c3b4a59687766554433221100";
    // Target a's server leaks a refresh token in a token-shaped field: learned.
    let leak = mcp_probe_schema::testkit::http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        "https://a.example/mcp",
        "{}",
        200,
        json!({"refresh_token": refresh}).to_string().as_bytes(),
    );
    a.record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        1,
        1,
        leak.observation,
    );
    // Target b then puts it in places no field rule knows: a skip reason, the session,
    // the failure text; and the printer (same redactor) would print it.
    b.skip(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        format!("repeated cursor {refresh}"),
    );
    b.set_failure(format!("server said {refresh}"));
    b.set_endpoint(format!("https://b.example/mcp?c={refresh}"));
    assert!(!b.failure().unwrap_or_default().contains(refresh));
    assert!(!shared.scrub_str(refresh).contains(refresh));
    let key = mcp_probe_schema::SecretKey::from_seed([3; 32]);
    for j in [&mut a, &mut b] {
        let p = j.seal(RunStatus::Complete, &key).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(refresh),
            "{}",
            p.display()
        );
        mcp_probe_schema::open(&bytes, &[key.public()]).unwrap();
    }
    let v = mcp_probe_schema::open(
        &std::fs::read(b.sealed().unwrap()).unwrap(),
        &[key.public()],
    )
    .unwrap();
    let Observation::Skipped { reason } = &v.records[0].observation else {
        panic!("{:?}", v.records[0])
    };
    assert!(
        reason.starts_with("repeated cursor redacted:sha256:"),
        "{reason}"
    );
}

#[test]
fn the_journal_on_disk_holds_only_redacted_values() {
    let dir = tempfile::tempdir().unwrap();
    let shared = SharedRedactor::new();
    shared.add_secret(TOKEN.as_bytes(), "bearer-token");
    let mut j = Journal::create(dir.path(), "j", target(), options(), shared).unwrap();
    j.skip(
        &[mcp_probe_schema::vocab::LegId::new("x")],
        format!("reason with {TOKEN}"),
    );
    j.set_failure(format!("failure with {TOKEN}"));
    j.set_inputs(Some(
        json!({"static_resource_path": format!("/r?t={TOKEN}")}),
    ));
    let on_disk = std::fs::read(j.journal_path()).unwrap();
    assert!(on_disk.len() > 100);
    assert!(!leaks_token(&on_disk));
    assert!(String::from_utf8_lossy(&on_disk).contains("failure with redacted:sha256:"));
}
