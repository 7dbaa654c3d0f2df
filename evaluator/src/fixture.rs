//! Build graded-ready [`Bundle`] from hand-made records, for unit tests and
//! benchmarks of checks (one small bundle per branch of a rule). Sealed with a fixed
//! test key and opened again, so fixtures pass the same verification as real bundles.

use mcp_probe_schema::model::{Era, Record, Session};
use mcp_probe_schema::testkit;
use mcp_probe_schema::vocab::LegId;

use crate::evidence::Bundle;

/// Fixture endpoint.
pub const ENDPOINT: &str = "http://127.0.0.1:8080/mcp";

/// A session at `revision` (era derived from it) with `capabilities` and `server_info`.
pub fn session(
    revision: Option<&str>,
    capabilities: serde_json::Value,
    server_info: Option<serde_json::Value>,
) -> Session {
    Session {
        endpoint: ENDPOINT.into(),
        auth_required: false,
        authenticated: false,
        era: revision.map(|r| {
            if r == "2026-07-28" {
                Era::Modern
            } else {
                Era::Legacy
            }
        }),
        revision: revision.map(str::to_string),
        server_info,
        capabilities: Some(capabilities),
        session_id: None,
        negotiated_in: Some(0),
        other_eras: Vec::new(),
        authorization_defaults: None,
        step_up: None,
        resource_refused_in: None,
        dpop: None,
    }
}

/// A bundle with `session` and `records` (chained in order; seqs are assigned).
pub fn evidence(session: Option<Session>, records: Vec<Record>) -> Bundle {
    let mut payload = testkit::evidence(ENDPOINT, records);
    if session.is_none() {
        payload.target.endpoint = None;
    }
    payload.session = session;
    let key = testkit::test_key(7);
    let bytes = mcp_probe_schema::seal(&payload, &key);
    let v = mcp_probe_schema::open(&bytes, &[]).expect("fixture bundle verifies");
    Bundle::new("fixture.mcpev", v)
}

/// A JSON-RPC POST record for `legs`: request `request`, answered `status` with
/// `content_type` and `body`, plus extra response headers.
pub fn exchange<L: AsRef<str>>(
    legs: &[L],
    request: &str,
    status: u16,
    content_type: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> Record {
    let mut r = testkit::http_record(legs, ENDPOINT, request, status, body.as_bytes());
    if let mcp_probe_schema::model::Observation::Http(x) = &mut r.observation {
        if let mcp_probe_schema::model::HttpOutcome::Response(resp) = &mut x.outcome {
            resp.headers = vec![mcp_probe_schema::model::Header::new(
                "content-type",
                content_type,
            )];
            for (k, v) in headers {
                resp.headers
                    .push(mcp_probe_schema::model::Header::new(*k, *v));
            }
        }
    }
    r
}

/// A skipped-leg record.
pub fn skipped<L: AsRef<str>>(legs: &[L], reason: &str) -> Record {
    let mut r = testkit::http_record(legs, ENDPOINT, "{}", 200, b"");
    r.observation = mcp_probe_schema::model::Observation::Skipped {
        reason: reason.into(),
    };
    r
}

/// A list page record answering `method` with `result` (a JSON object).
pub fn list_page(leg: LegId, method: &str, id: i64, result: serde_json::Value) -> Record {
    let req =
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}).to_string();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    exchange(&[leg], &req, 200, "application/json", &body, &[])
}

/// The sub-verdict `id` of `o` (panics, printing the outcome, when there is none).
pub fn sub<'a>(o: &'a crate::verdict::Outcome, id: &str) -> &'a crate::verdict::SubVerdict {
    o.subs
        .iter()
        .find(|l| l.id == id)
        .unwrap_or_else(|| panic!("no sub-verdict {id} in {o:#?}"))
}

/// Assert that sub-verdict `id` of `o` has `outcome` and that its note contains every word.
pub fn assert_sub(
    o: &crate::verdict::Outcome,
    id: &str,
    outcome: crate::verdict::SubOutcome,
    words: &[&str],
) {
    let l = sub(o, id);
    assert_eq!(l.outcome, outcome, "{id}: {l:?}");
    for w in words {
        assert!(l.note.contains(w), "{id}: {w:?} not in {:?}", l.note);
    }
}

/// A bundle of a session negotiated at `rev` with `capabilities` and `server_info`,
/// holding only the negotiation record (the leg every session check requires).
pub fn negotiated(
    rev: &str,
    capabilities: serde_json::Value,
    server_info: Option<serde_json::Value>,
) -> Bundle {
    let negotiation = exchange(
        &[mcp_probe_schema::vocab::leg::ENDPOINT_DETECT],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        200,
        "application/json",
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        &[],
    );
    evidence(
        Some(session(Some(rev), capabilities, server_info)),
        vec![negotiation],
    )
}

/// As [`evidence`], for a stdio target (`target.transport` `stdio`).
pub fn stdio_evidence(session: Option<Session>, records: Vec<Record>) -> Bundle {
    let mut payload = testkit::evidence(ENDPOINT, records);
    payload.target.transport = mcp_probe_schema::model::Transport::Stdio;
    payload.target.as_typed = "stdio: server --flag".into();
    payload.target.endpoint = session.as_ref().map(|_| "stdio:server".to_string());
    payload.session = session;
    let key = testkit::test_key(7);
    let bytes = mcp_probe_schema::seal(&payload, &key);
    let v = mcp_probe_schema::open(&bytes, &[]).expect("fixture bundle verifies");
    Bundle::new("fixture.mcpev", v)
}

/// As [`evidence`], for an HTTP+SSE target (`target.transport` `http-sse`).
pub fn sse_evidence(session: Option<Session>, records: Vec<Record>) -> Bundle {
    let mut payload = testkit::evidence(ENDPOINT, records);
    payload.target.transport = mcp_probe_schema::model::Transport::HttpSse;
    payload.session = session;
    let key = testkit::test_key(7);
    let bytes = mcp_probe_schema::seal(&payload, &key);
    let v = mcp_probe_schema::open(&bytes, &[]).expect("fixture bundle verifies");
    Bundle::new("fixture.mcpev", v)
}

/// A stdio record for `legs`: `sent` written to stdin (none on a stream record) and
/// `lines` read on stdout (each marked JSON-RPC when it parses as a message).
pub fn stdio_record<L: AsRef<str>>(legs: &[L], sent: Option<&str>, lines: &[&str]) -> Record {
    use mcp_probe_schema::model::{Observation, StdioExchange, StdioLine};
    let mut r = skipped(legs, "");
    r.observation = Observation::Stdio(StdioExchange {
        sent: sent.map(|s| s.as_bytes().to_vec()),
        received: lines
            .iter()
            .map(|l| StdioLine {
                at_us: 10,
                bytes: l.as_bytes().to_vec(),
                length: l.len() as u64,
                jsonrpc: serde_json::from_str::<serde_json::Value>(l)
                    .ok()
                    .is_some_and(|v| v.get("jsonrpc").is_some()),
            })
            .collect(),
        error: None,
        unkept: None,
    });
    r
}

/// The `stdio.process` record of `argv` with `credential_args` and `env_names`.
pub fn stdio_process(
    argv: &[&str],
    credential_args: Vec<mcp_probe_schema::model::CredentialArg>,
    env_names: &[&str],
) -> Record {
    use mcp_probe_schema::model::{Observation, ProcessExit, StdioProcess};
    let mut r = skipped(&[mcp_probe_schema::vocab::leg::STDIO_PROCESS], "");
    r.observation = Observation::StdioProcess(StdioProcess {
        argv: argv.iter().map(|a| a.to_string()).collect(),
        credential_args,
        env_names: env_names.iter().map(|a| a.to_string()).collect(),
        inherited: vec!["PATH".into()],
        pid: Some(4242),
        spawn_error: None,
        exit: Some(ProcessExit {
            code: Some(0),
            signal: None,
        }),
        ended_by: "stdin-closed".into(),
        stderr: Vec::new(),
        stderr_length: 0,
    });
    r
}

/// The first row of the newest embedded definition graded by rule `rule`.
fn row(rule: &str) -> &'static crate::benchmark::Entry {
    crate::benchmark::Benchmark::builtin()
        .checks
        .iter()
        .find(|e| e.rule == rule)
        .unwrap_or_else(|| panic!("no row graded by {rule}"))
}

/// The context the runner gives rule `rule` on its row of the newest embedded definition:
/// the row's parameters and `unreached` reason (for unit tests of one rule).
pub fn cx(rule: &str) -> crate::check::Context<'static> {
    let e = row(rule);
    crate::check::Context {
        params: &e.params,
        unreached: e.unreached,
        ..Default::default()
    }
}

/// Rule `rule`'s row of the newest embedded definition, graded on `ev` by the runner
/// (every era the bundle probed, the row's transports and parameters) and rendered
/// outside any definition ([`local`]): what `mcp-grade` reports, with local names.
pub fn graded(ev: &Bundle, rule: &str) -> crate::verdict::Outcome {
    let others = ev.other_eras();
    crate::benchmark::runner::grade_row(row(rule), ev, &others, &Default::default())
        .map(local)
        .unwrap_or_else(|| panic!("{rule} is not graded"))
}

/// `o` as a rule's unit test reads it: rendered outside any definition
/// ([`crate::refs::Local`]), so sub-verdicts carry their local names (`a`) and references
/// to other rules read as the rule id in brackets.
pub fn local(o: crate::verdict::Outcome) -> crate::verdict::Outcome {
    o.rendered(&crate::refs::Local)
}

/// The paths of the example bundles: the integration tests' list, included here.
#[cfg(test)]
#[path = "../tests/support/examples.rs"]
mod example_paths;
#[cfg(test)]
pub(crate) use example_paths::examples;

/// Every example bundle (`examples/*.mcpev`), verified (no trust list), in the order of
/// their paths ([`examples`]).
#[cfg(test)]
pub fn example_bundles() -> Vec<Bundle> {
    examples()
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            Bundle::new(p.display().to_string(), v)
        })
        .collect()
}
