//! Revision negotiation against scripted servers (docs/collector.md, "Pipeline per
//! target"): an empty `server/discover` result is not a 2026-07-28 answer, and a -32022
//! refusal naming revisions this tool speaks is retried once with the newest of them.

mod support;

use std::sync::Arc;

use serde_json::{json, Value};
use support::*;

fn ok(id: &Value, result: Value) -> Vec<u8> {
    json_response(
        200,
        &[],
        &json!({"jsonrpc":"2.0","id":id,"result":result}).to_string(),
    )
}

fn unsupported(id: &Value, supported: &[&str]) -> Vec<u8> {
    json_response(
        400,
        &[],
        &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32022,"message":"Unsupported protocol version",
            "data":{"supported":supported,"requested":"2026-07-28"}}})
        .to_string(),
    )
}

fn accepted() -> Vec<u8> {
    b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
}

/// The legacy part every server below shares: `initialize` echoes the offer when it is
/// in `speaks`, else refuses listing `speaks`.
fn legacy(req: &Req, speaks: &[&str]) -> Vec<u8> {
    let id = req.rpc_id();
    match req.rpc_method().as_str() {
        "initialize" => {
            let offered = req.json()["params"]["protocolVersion"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if speaks.contains(&offered.as_str()) {
                ok(
                    &id,
                    json!({"protocolVersion": offered, "capabilities": {},
                        "serverInfo": {"name": "scripted", "version": "1"}}),
                )
            } else {
                json_response(
                    400,
                    &[],
                    &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"Unsupported protocol version",
                        "data":{"supported":speaks,"requested":offered}}})
                    .to_string(),
                )
            }
        }
        "notifications/initialized" => accepted(),
        _ => json_response(404, &[], "{}"),
    }
}

/// (method, offered revision) of every JSON-RPC request the server saw.
fn sent(srv: &Scripted) -> Vec<(String, String)> {
    srv.requests
        .lock()
        .expect("requests")
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| {
            let j = r.json();
            let rev = j["params"]["protocolVersion"]
                .as_str()
                .or_else(|| {
                    j["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
                })
                .unwrap_or("")
                .to_string();
            (r.rpc_method(), rev)
        })
        .collect()
}

fn pair(m: &str, r: &str) -> (String, String) {
    (m.to_string(), r.to_string())
}

#[test]
fn an_empty_discover_result_is_not_a_2026_07_28_server() {
    let srv = serve(Arc::new(|req: &Req| match req.rpc_method().as_str() {
        // A server that answers every method with an empty result.
        "server/discover" => ok(&req.rpc_id(), json!({})),
        _ => legacy(req, &["2025-11-25"]),
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let seen = sent(&srv);
    assert_eq!(
        &seen[..2],
        &[
            pair("server/discover", "2026-07-28"),
            pair("initialize", "2025-11-25")
        ],
        "--info sends the initialize: {seen:?}"
    );
    let v = open(&run.bundles()[0]);
    let s = v.evidence.session.as_ref().expect("a session");
    assert_eq!(s.revision.as_deref(), Some("2025-11-25"));
    assert_eq!(
        s.server_info.as_ref().expect("server_info")["name"],
        "scripted"
    );
    let printed = format!("{}{}", run.stdout(), run.stderr());
    assert!(printed.contains("2025-11-25"), "{}", run.describe());
}

#[test]
fn a_discover_result_with_its_members_is_still_2026_07_28() {
    let srv = serve(Arc::new(|req: &Req| match req.rpc_method().as_str() {
        "server/discover" => ok(
            &req.rpc_id(),
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
        ),
        _ => legacy(req, &["2025-11-25"]),
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_eq!(sent(&srv), vec![pair("server/discover", "2026-07-28")]);
    let v = open(&run.bundles()[0]);
    assert_eq!(
        v.evidence
            .session
            .as_ref()
            .and_then(|s| s.revision.as_deref()),
        Some("2026-07-28")
    );
}

#[test]
fn a_32022_refusal_is_retried_once_with_the_newest_revision_it_names() {
    // Not 2025-11-25 blindly: the newest handshake revision the refusal lists.
    let srv = serve(Arc::new(|req: &Req| match req.rpc_method().as_str() {
        "server/discover" => unsupported(&req.rpc_id(), &["2024-11-05", "2025-06-18"]),
        _ => legacy(req, &["2025-06-18", "2024-11-05"]),
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_eq!(
        &sent(&srv)[..2],
        &[
            pair("server/discover", "2026-07-28"),
            pair("initialize", "2025-06-18")
        ]
    );
    let v = open(&run.bundles()[0]);
    assert_eq!(
        v.evidence
            .session
            .as_ref()
            .and_then(|s| s.revision.as_deref()),
        Some("2025-06-18")
    );
}

#[test]
fn a_32022_naming_2026_07_28_gets_one_more_discover() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let srv = serve(Arc::new(move |req: &Req| match req.rpc_method().as_str() {
        "server/discover" => {
            if c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                unsupported(&req.rpc_id(), &["2026-07-28"])
            } else {
                ok(
                    &req.rpc_id(),
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
                )
            }
        }
        _ => legacy(req, &[]),
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_eq!(
        sent(&srv),
        vec![
            pair("server/discover", "2026-07-28"),
            pair("server/discover", "2026-07-28")
        ]
    );

    // Refused again: no third discover, and the handshake is tried once.
    let srv = serve(Arc::new(|req: &Req| match req.rpc_method().as_str() {
        "server/discover" => unsupported(&req.rpc_id(), &["2026-07-28"]),
        _ => legacy(req, &[]),
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 3, "{}", run.describe());
    let seen: Vec<(String, String)> = sent(&srv)
        .into_iter()
        .filter(|(m, _)| m == "server/discover" || m == "initialize")
        .collect();
    assert_eq!(
        &seen[..3],
        &[
            pair("server/discover", "2026-07-28"),
            pair("server/discover", "2026-07-28"),
            pair("initialize", "2025-11-25"),
        ],
        "{seen:?}"
    );
}

#[test]
fn an_initialize_refusal_gets_one_retry_not_a_walk_down_the_list() {
    // discover names two handshake revisions; the newest is refused with no list: the
    // older one is not tried blindly.
    let srv = serve(Arc::new(|req: &Req| match req.rpc_method().as_str() {
        "server/discover" => unsupported(&req.rpc_id(), &["2025-06-18", "2025-03-26"]),
        "initialize" if req.json()["params"]["protocolVersion"] == "2025-06-18" => json_response(
            400,
            &[],
            &json!({"jsonrpc":"2.0","id":req.rpc_id(),"error":{"code":-32600,"message":"no"}})
                .to_string(),
        ),
        _ => legacy(req, &["2025-03-26"]),
    }));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 3, "{}", run.describe());
    let inits: Vec<String> = sent(&srv)
        .into_iter()
        .filter(|(m, _)| m == "initialize")
        .map(|(_, r)| r)
        .collect();
    assert_eq!(inits, vec!["2025-06-18".to_string()]);
}
