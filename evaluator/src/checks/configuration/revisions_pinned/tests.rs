//! Unit tests of rule `revisions-pinned`.

use super::*;
use crate::checks::common::wire::testing::{JSON, META};
use crate::fixture::assert_sub as has;
use crate::fixture::{evidence, exchange, session, skipped};
/// The rule graded directly, rendered outside any definition (local names).
fn run(
    check: &dyn crate::check::Check,
    ev: &crate::evidence::Bundle,
    cx: &crate::check::Context<'_>,
) -> crate::verdict::Outcome {
    crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
}
use crate::verdict::Verdict;
use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
use serde_json::json;

fn discover(result: Value) -> Record {
    let req =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#);
    let body = json!({"jsonrpc": "2.0", "id": 1, "result": result}).to_string();
    exchange(&[leg::ENDPOINT_DETECT], &req, 200, JSON, &body, &[])
}

fn sweep(rev: &str, status: u16, body: &str) -> Record {
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": rev, "capabilities": {},
                   "clientInfo": {"name": "cis-benchmark-audit", "version": "1.0"}}})
    .to_string();
    exchange(&[leg::V_SWEEP], &req, status, JSON, body, &[])
}

fn echo(rev: &str) -> Record {
    let body = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": rev,
        "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}})
    .to_string();
    sweep(rev, 200, &body)
}

fn refused(rev: &str) -> Record {
    sweep(
        rev,
        400,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}"#,
    )
}

fn probe(l: LegId, status: u16, ct: &str, body: &str) -> Record {
    let req = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{{META}}}}}"#);
    exchange(&[l], &req, status, ct, body, &[])
}

fn err(code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 5, "error": {"code": code, "message": message}}).to_string()
}

fn rejects(l: LegId, code: i64) -> Record {
    probe(l, 400, JSON, &err(code, "refused"))
}

fn failed(l: LegId) -> Record {
    let mut r = probe(l, 200, JSON, "");
    if let Observation::Http(x) = &mut r.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::Reset,
            message: "connection reset by peer".into(),
        });
    }
    r
}

const TOOLS: &str = r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"add"}]}}"#;

/// A bundle of one session: endpoint detection, the sweep, then sub-verdicts b-e.
struct B {
    rev: &'static str,
    detect: Vec<Record>,
    sweep: Vec<Record>,
    b: Record,
    c: Record,
    d: Record,
    e: Record,
}

impl B {
    /// 2026-07-28, every leg answered as the spec requires (ts2 reject).
    fn modern() -> B {
        B {
            rev: REV_2026_07_28,
            detect: vec![discover(
                json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
            )],
            sweep: vec![refused("2024-11-05"), refused("2025-03-26")],
            b: rejects(leg::V_BOGUS, -32022),
            c: rejects(leg::V_NO_HEADER, -32020),
            d: rejects(leg::V_NO_META_VERSION, -32602),
            e: rejects(leg::V_MISMATCH, -32020),
        }
    }

    /// A legacy session whose b and c refuse as required; d and e skipped by the
    /// collector.
    fn legacy(rev: &'static str) -> B {
        B {
            rev,
            detect: vec![{
                let req = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
                );
                exchange(
                    &[leg::ENDPOINT_DETECT],
                    &req,
                    400,
                    JSON,
                    r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#,
                    &[],
                )
            }],
            sweep: vec![refused("2024-11-05"), refused("2025-03-26")],
            b: rejects(leg::V_BOGUS, -32022),
            c: rejects(leg::V_NO_HEADER, -32020),
            d: skipped(
                &[leg::V_NO_META_VERSION],
                "not sent: 2026-07-28 only (negotiated 2025-11-25)",
            ),
            e: skipped(
                &[leg::V_MISMATCH],
                "not sent: 2026-07-28 only (negotiated 2025-11-25)",
            ),
        }
    }

    fn grade(self) -> Outcome {
        self.grade_in(&Context::default())
    }

    fn grade_in(self, cx: &Context<'_>) -> Outcome {
        let mut records = self.detect;
        records.extend(self.sweep);
        records.extend([self.b, self.c, self.d, self.e]);
        let ev = evidence(
            Some(session(Some(self.rev), json!({"tools": {}}), None)),
            records,
        );
        run(&RevisionsPinned, &ev, cx)
    }
}

/// `b` graded `verdict`, with leg `id` at `outcome` and its note holding `words`.
fn expect(b: B, verdict: Verdict, (id, outcome): (&str, SubOutcome), words: &[&str]) -> Outcome {
    let o = b.grade();
    assert_eq!(o.verdict, verdict, "{o:?}");
    has(&o, id, outcome, words);
    o
}

#[test]
fn modern_compliant_passes() {
    let o = expect(
        B::modern(),
        Verdict::Pass,
        ("a", SubOutcome::Pass),
        &[
            "server/discover (record #0) lists 2026-07-28",
            "no sub-floor",
        ],
    );
    has(
        &o,
        "b",
        SubOutcome::Pass,
        &["-32022", "the required answer"],
    );
    has(
        &o,
        "c",
        SubOutcome::Pass,
        &["-32020 (HeaderMismatch) at HTTP 400"],
    );
    has(&o, "d", SubOutcome::Pass, &["-32602 (Invalid params)"]);
    has(&o, "e", SubOutcome::Pass, &["-32020"]);
    assert_eq!(o.details["floor"], "2025-06-18");
    assert!(o.details["mechanism"].as_str().unwrap().contains("_meta"));
    assert_eq!(o.details["legs"]["d"], "pass");
    assert_eq!(o.details["supported_versions"], json!(["2026-07-28"]));
    assert_eq!(o.details["sweep"]["2024-11-05"], "not_served");
    assert_eq!(o.details["probes"]["b"]["code"], -32022);
    assert_eq!(o.records, vec![0, 1, 2, 3, 4, 5, 6]);
    assert!(o.reduction.contains("f") && o.reduction.contains("allowlist"));
}

#[test]
fn discover_listing_old_or_malformed_revisions_fails() {
    let mut b = B::modern();
    b.detect = vec![discover(
        json!({"supportedVersions": ["2026-07-28", "2025-03-26", "latest"]}),
    )];
    expect(
        b,
        Verdict::Fail,
        ("a", SubOutcome::Fail),
        &[
            "2025-03-26 earlier than the 2025-06-18 floor",
            "\"latest\" not a YYYY-MM-DD revision",
            "allowlist",
        ],
    );
}

#[test]
fn discover_without_supported_versions_is_unknown() {
    let mut b = B::modern();
    b.detect = vec![discover(json!({"capabilities": {}}))];
    let o = expect(
        b,
        Verdict::Unknown,
        ("a", SubOutcome::Unknown),
        &["no well-formed supportedVersions"],
    );
    assert!(o.details["supported_versions"].is_null());
}

/// py2, fastmcp, ts2: initialize echoes both sub-floor revisions.
#[test]
fn sweep_serving_sub_floor_revisions_fails() {
    let mut b = B::modern();
    b.sweep = vec![echo("2024-11-05"), echo("2025-03-26")];
    let o = expect(
        b,
        Verdict::Fail,
        ("a", SubOutcome::Fail),
        &[
            "lists 2026-07-28",
            "initialize serves 2024-11-05 (record #1), 2025-03-26 (record #2)",
            "floor",
        ],
    );
    assert_eq!(o.details["sweep"]["2025-03-26"], "served");
}

#[test]
fn sweep_counter_offer_is_not_served() {
    let mut b = B::modern();
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}).to_string();
    b.sweep = vec![sweep("2024-11-05", 200, &body), refused("2025-03-26")];
    expect(
        b,
        Verdict::Pass,
        ("a", SubOutcome::Pass),
        &["2024-11-05 answered with 2025-11-25", "2025-03-26 refused"],
    );
}

#[test]
fn sweep_unreached_is_unknown_unless_something_failed() {
    let mut b = B::modern();
    let mut gone = refused("2024-11-05");
    if let Observation::Http(x) = &mut gone.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::Connect,
            message: "connection refused".into(),
        });
    }
    b.sweep = vec![gone.clone(), refused("2025-03-26")];
    let o = expect(
        b,
        Verdict::Unknown,
        ("a", SubOutcome::Unknown),
        &["unreached for 2024-11-05 no response (connect", "might be"],
    );
    assert_eq!(o.details["sweep"]["2024-11-05"], "unreached");
    let mut b = B::modern();
    b.sweep = vec![gone, echo("2025-03-26")];
    let o = b.grade();
    has(
        &o,
        "a",
        SubOutcome::Fail,
        &["serves 2025-03-26", "2024-11-05 no response"],
    );
    let mut b = B::modern();
    b.sweep = vec![
        sweep("2024-11-05", 502, "<html>Bad Gateway</html>"),
        refused("2025-03-26"),
    ];
    has(
        &b.grade(),
        "a",
        SubOutcome::Unknown,
        &["HTTP 502", "not a version decision"],
    );
    let mut b = B::modern();
    b.sweep = vec![skipped(&[leg::V_SWEEP], "not sent: --info run")];
    has(
        &b.grade(),
        "a",
        SubOutcome::Unknown,
        &["not sent: --info run"],
    );
}

#[test]
fn right_code_at_wrong_status_fails() {
    let mut b = B::modern();
    b.b = probe(
        leg::V_BOGUS,
        200,
        JSON,
        &err(-32022, "Unsupported protocol version"),
    );
    let o = b.grade();
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    has(&o, "b", SubOutcome::Fail, &["HTTP 200", "requires 400"]);
}

#[test]
fn acceptance_fails_and_empty_2xx_is_an_acceptance() {
    let mut b = B::modern();
    b.b = probe(leg::V_BOGUS, 200, JSON, TOOLS);
    has(
        &b.grade(),
        "b",
        SubOutcome::Fail,
        &[
            "result listing 1 tool",
            "accepted instead of refused with -32022",
        ],
    );
    let mut b = B::modern();
    b.b = probe(leg::V_BOGUS, 202, JSON, "");
    expect(
        b,
        Verdict::Fail,
        ("b", SubOutcome::Fail),
        &["HTTP 202", "empty body", "acknowledged like a notification"],
    );
    let mut b = B::modern();
    b.b = probe(leg::V_BOGUS, 200, "text/event-stream", ": ping\n\n");
    has(
        &b.grade(),
        "b",
        SubOutcome::Fail,
        &["event stream", "response stream"],
    );
}

#[test]
fn bare_statuses_and_transport_failures_are_errors() {
    for (status, ct, body, word) in [
        (400, JSON, "", "empty body"),
        (
            502,
            "text/html",
            "<html><body>Bad Gateway</body></html>",
            "Bad Gateway",
        ),
        (200, "text/html", "<html>login</html>", "no JSON-RPC answer"),
    ] {
        let mut b = B::modern();
        b.b = probe(leg::V_BOGUS, status, ct, body);
        expect(
            b,
            Verdict::Error,
            ("b", SubOutcome::Error),
            &[&format!("HTTP {status}"), word, "gateway"],
        );
    }
    let mut b = B::modern();
    b.c = failed(leg::V_NO_HEADER);
    expect(
        b,
        Verdict::Error,
        ("c", SubOutcome::Error),
        &["no response (reset", "never observed"],
    );
    let mut b = B::modern();
    b.b = probe(
        leg::V_BOGUS,
        400,
        JSON,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":"x","message":"m"}}"#,
    );
    has(
        &b.grade(),
        "b",
        SubOutcome::Error,
        &["without an integer code"],
    );
}

#[test]
fn authentication_refusal_is_unknown() {
    let mut b = B::modern();
    b.d = probe(
        leg::V_NO_META_VERSION,
        401,
        JSON,
        &err(-32001, "token expired"),
    );
    expect(
        b,
        Verdict::Unknown,
        ("d", SubOutcome::Unknown),
        &[
            "HTTP 401",
            "never reached version validation",
            "held no credential",
        ],
    );
}

#[test]
fn unexpected_code_passes_asking_for_confirmation() {
    let mut b = B::modern();
    b.b = rejects(leg::V_BOGUS, -32600);
    expect(
        b,
        Verdict::Pass,
        ("b", SubOutcome::Pass),
        &[
            "code -32600 instead of -32022",
            "confirm the rejection is version enforcement",
        ],
    );
}

#[test]
fn overrides() {
    let mut b = B::modern();
    b.c = rejects(leg::V_NO_HEADER, -32022);
    has(
        &b.grade(),
        "c",
        SubOutcome::Pass,
        &["reference-SDK divergence"],
    );
    for c in [-32020, -32022] {
        let mut b = B::modern();
        b.d = rejects(leg::V_NO_META_VERSION, c);
        has(&b.grade(), "d", SubOutcome::Pass, &["still a refusal"]);
    }
    let mut b = B::modern();
    b.e = rejects(leg::V_MISMATCH, -32022);
    expect(
        b,
        Verdict::Fail,
        ("e", SubOutcome::Fail),
        &["only HeaderMismatch is correct"],
    );
}

#[test]
fn error_inside_an_event_stream_is_an_answer() {
    let mut b = B::modern();
    let body = format!(
        "event: message\ndata: {}\n\n",
        err(-32022, "Unsupported protocol version")
    );
    b.b = probe(leg::V_BOGUS, 400, "text/event-stream", &body);
    has(
        &b.grade(),
        "b",
        SubOutcome::Pass,
        &["HTTP 400 (text/event-stream)", "-32022"],
    );
}

/// py2 SL+J: a request without the header, or with a handshake
/// revision in it, takes the legacy stateless path and is served.
#[test]
fn modern_header_fallback_is_served_and_fails() {
    let mut b = B::modern();
    b.c = probe(leg::V_NO_HEADER, 200, JSON, TOOLS);
    b.e = probe(leg::V_MISMATCH, 200, JSON, TOOLS);
    let o = expect(
        b,
        Verdict::Fail,
        ("c", SubOutcome::Fail),
        &["accepted", "pre-2025-06-18 clients", "below the floor"],
    );
    has(
        &o,
        "e",
        SubOutcome::Fail,
        &["accepted instead of refused with -32020"],
    );
}

#[test]
fn skipped_modern_probe() {
    let mut b = B::modern();
    b.d = skipped(
        &[leg::V_NO_META_VERSION],
        "not sent: --info run (connect and enumerate only)",
    );
    expect(
        b,
        Verdict::Unknown,
        ("d", SubOutcome::Unknown),
        &["--info", "a full run decides"],
    );
    let mut b = B::modern();
    b.e = skipped(&[leg::V_MISMATCH], "not sent: the run was interrupted");
    has(&b.grade(), "e", SubOutcome::Error, &["never made"]);
}

#[test]
fn legacy_compliant_passes_with_d_and_e_excluded() {
    let o = expect(
        B::legacy("2025-11-25"),
        Verdict::Pass,
        ("a", SubOutcome::Pass),
        &[
            "server/discover (record #0) answered HTTP 400",
            "initialize only",
        ],
    );
    has(
        &o,
        "b",
        SubOutcome::Pass,
        &["MCP-Protocol-Version header", "no _meta version"],
    );
    has(
        &o,
        "c",
        SubOutcome::Pass,
        &[
            "without the MCP-Protocol-Version header",
            "no _meta version to compare",
        ],
    );
    has(
        &o,
        "d",
        SubOutcome::REVISION_UNSUPPORTED,
        &["only 2026-07-28", "negotiated 2025-11-25"],
    );
    has(
        &o,
        "e",
        SubOutcome::REVISION_UNSUPPORTED,
        &["negotiated 2025-11-25"],
    );
    assert_eq!(o.details["legs"]["e"], "revision_unsupported");
    assert_eq!(
        o.details["mechanism"],
        "MCP-Protocol-Version header (2025-11-25)"
    );
    assert!(o.details["supported_versions"].is_null());
}

/// py1: initialize echoes both sub-floor revisions; the bogus
/// header draws 400 -32600 "Unsupported protocol version" with id "server-error"; a
/// request without the header is served on the session.
#[test]
fn lab_py1_legacy_fails() {
    let mut b = B::legacy("2025-11-25");
    b.sweep = vec![echo("2024-11-05"), echo("2025-03-26")];
    b.b = probe(
        leg::V_BOGUS,
        400,
        JSON,
        r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Unsupported protocol version: 2024-01-01. Supported versions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25"}}"#,
    );
    b.c = probe(
        leg::V_NO_HEADER,
        200,
        "text/event-stream",
        &format!("event: message\ndata: {TOOLS}\n\n"),
    );
    let o = expect(
        b,
        Verdict::Fail,
        ("a", SubOutcome::Fail),
        &["initialize serves 2024-11-05", "2025-03-26"],
    );
    has(
        &o,
        "b",
        SubOutcome::Pass,
        &[
            "code -32600 instead of -32022",
            "confirm",
            "(id \"server-error\", not the request's)",
            "Unsupported protocol version: 2024-01-01",
        ],
    );
    has(
        &o,
        "c",
        SubOutcome::Fail,
        &["accepted", "benchmark requires the refusal"],
    );
    has(&o, "d", SubOutcome::REVISION_UNSUPPORTED, &[]);
}

/// py2 / fastmcp stateful (mcp 2.3.0 routes a request without the
/// header or with a handshake revision to the legacy session path, which answers 400
/// -32600 "Missing session ID"): c and e pass only as refusals to confirm, and
/// the rule fails on a.
#[test]
fn lab_py2_stateful_modern_fails_on_the_sweep() {
    let missing = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#;
    let mut b = B::modern();
    b.sweep = vec![echo("2024-11-05"), echo("2025-03-26")];
    b.b = probe(
        leg::V_BOGUS,
        400,
        JSON,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2024-01-01"}}}"#,
    );
    b.c = probe(leg::V_NO_HEADER, 400, JSON, missing);
    b.d = probe(
        leg::V_NO_META_VERSION,
        400,
        JSON,
        &err(-32602, "params._meta is missing the required envelope key(s): io.modelcontextprotocol/protocolVersion"),
    );
    b.e = probe(leg::V_MISMATCH, 400, JSON, missing);
    let o = expect(
        b,
        Verdict::Fail,
        ("a", SubOutcome::Fail),
        &["lists 2026-07-28", "initialize serves 2024-11-05"],
    );
    has(
        &o,
        "b",
        SubOutcome::Pass,
        &[
            "data.supported: 2026-07-28",
            "naming the supported versions",
        ],
    );
    has(
        &o,
        "c",
        SubOutcome::Pass,
        &["Missing session ID", "confirm"],
    );
    has(&o, "d", SubOutcome::Pass, &["the required answer"]);
    has(
        &o,
        "e",
        SubOutcome::Pass,
        &["Missing session ID", "confirm"],
    );
}

#[test]
fn legacy_before_the_header_says_so() {
    let mut b = B::legacy("2025-03-26");
    b.d = skipped(&[leg::V_NO_META_VERSION], "not sent: 2026-07-28 only");
    let o = b.grade();
    has(
        &o,
        "b",
        SubOutcome::Pass,
        &["predates the MCP-Protocol-Version header"],
    );
    has(
        &o,
        "d",
        SubOutcome::REVISION_UNSUPPORTED,
        &["negotiated 2025-03-26"],
    );
}

#[test]
fn missing_leg_is_error_naming_it() {
    let ev = evidence(
        Some(session(Some(REV_2026_07_28), json!({}), None)),
        vec![discover(json!({"supportedVersions": ["2026-07-28"]}))],
    );
    let o = run(&RevisionsPinned, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    assert!(
        o.evidence.contains(leg::V_SWEEP.as_str()) && o.evidence.contains("missing"),
        "{o:?}"
    );
}

#[test]
fn revision_dates() {
    assert!(is_revision_date("2025-06-18"));
    for bad in [
        "2025-6-18",
        "latest",
        "2025-13-01",
        "2025-06-00",
        "2025_06_18",
        "２０２５-06-18",
    ] {
        assert!(!is_revision_date(bad), "{bad}");
    }
}

#[test]
fn the_policy_s_approved_revisions_replace_the_floor() {
    let applied = |revs: &[&str]| crate::policy::Applied {
        file: "policy.toml".into(),
        decisions: crate::policy::Decisions {
            approved_revisions: Some(revs.iter().map(|r| r.to_string()).collect()),
            ..Default::default()
        },
    };
    let under = |p: &crate::policy::Applied, b: B| {
        b.grade_in(&Context {
            policy: Some(p),
            ..Context::default()
        })
    };
    // Modern: discover lists 2026-07-28; approved → pass, naming the policy.
    let ok = applied(&["2025-11-25", "2026-07-28"]);
    let o = under(&ok, B::modern());
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    has(
        &o,
        "a",
        SubOutcome::Pass,
        &[
            "all among the policy's approved_revisions (policy.toml: 2025-11-25, 2026-07-28)",
            "no unapproved",
        ],
    );
    // The same server under a policy that approves only 2025-11-25: 2026-07-28 is served
    // and not approved.
    let o = under(&applied(&["2025-11-25"]), B::modern());
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    has(
        &o,
        "a",
        SubOutcome::Fail,
        &["2026-07-28 not among the policy's approved_revisions"],
    );
    // Legacy: the negotiated revision must be approved too.
    let o = under(&applied(&["2026-07-28"]), B::legacy("2025-11-25"));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    has(
        &o,
        "a",
        SubOutcome::Fail,
        &["the negotiated revision 2025-11-25 is not among the policy's approved_revisions"],
    );
    let o = under(&applied(&["2025-11-25"]), B::legacy("2025-11-25"));
    has(
        &o,
        "a",
        SubOutcome::Pass,
        &["no unapproved revision offered"],
    );
    // A served revision the floor allows but the policy does not: 2025-06-18 echoed.
    let mut b = B::legacy("2025-11-25");
    b.sweep = vec![refused("2024-11-05"), refused("2025-03-26")];
    let o = under(&applied(&["2025-11-25"]), b);
    has(&o, "a", SubOutcome::Pass, &["no unapproved"]);
    let mut b = B::legacy("2025-11-25");
    b.sweep = vec![echo("2024-11-05"), refused("2025-03-26")];
    let o = under(&applied(&["2024-11-05", "2025-11-25"]), b);
    has(&o, "a", SubOutcome::Pass, &["2024-11-05 served"]);
}
