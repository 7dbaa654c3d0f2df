use super::*;
use crate::fixture::{assert_sub, evidence, exchange, list_page, session, skipped};
/// The rule graded directly, rendered outside any definition (local names).
fn run(
    check: &dyn crate::check::Check,
    ev: &crate::evidence::Bundle,
    cx: &crate::check::Context<'_>,
) -> crate::verdict::Outcome {
    crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
}
use crate::verdict::Verdict;
use mcp_probe_schema::model::Record;
use serde_json::json;

fn tools_page(names: &[&str]) -> Record {
    let tools: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
    list_page(
        leg::INVENTORY_TOOLS,
        "tools/list",
        2,
        json!({"tools": tools}),
    )
}

fn call(l: mcp_probe_schema::vocab::LegId, id: i64, tool: &str, answer: Value) -> Record {
    let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}})
    .to_string();
    let mut body = json!({"jsonrpc": "2.0", "id": id});
    for (k, v) in answer.as_object().expect("object") {
        body[k] = v.clone();
    }
    exchange(&[l], &req, 200, "application/json", &body.to_string(), &[])
}

fn ok() -> Value {
    json!({"result": {"content": [{"type": "text", "text": "done"}]}})
}

fn consent() -> Value {
    json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"old": {"a": 1}}})
}

fn bundle(inputs: Option<Value>, mut records: Vec<Record>) -> Bundle {
    records.insert(0, tools_page(&["new", "old"]));
    let mut e = evidence(
        Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
        records,
    );
    e.payload_mut().run.inputs = inputs;
    e
}

fn base() -> Bundle {
    evidence(
        Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
        vec![tools_page(&["old"])],
    )
}

fn grade(ev: &Bundle, b: Option<&Bundle>) -> Outcome {
    run(
        &NewToolsGated,
        ev,
        &Context {
            baseline: b,
            ..Context::default()
        },
    )
}

fn pair(staged: Value) -> Vec<Record> {
    vec![
        call(leg::STAGED_CONTROL, 10, "old", ok()),
        call(leg::STAGED_CALL, 11, "new", staged),
    ]
}

#[test]
fn without_consent_or_baseline_it_is_unknown() {
    let legs = [leg::STAGED_CONTROL, leg::STAGED_CALL];
    let ev = bundle(
        None,
        vec![skipped(
            &legs,
            "not sent: tool_calls_authorised is not true",
        )],
    );
    let b = base();
    let o = grade(&ev, Some(&b));
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["tool_calls_authorised is not true"],
    );
    let ev = bundle(
        Some(json!({INPUT_CONSENT: true})),
        vec![skipped(&legs, "x")],
    );
    assert_sub(
        &grade(&ev, Some(&b)),
        SUB_A,
        SubOutcome::Unknown,
        &["no tool_arguments"],
    );
    let ev = bundle(Some(consent()), pair(ok()));
    let o = grade(&ev, None);
    assert_sub(&o, SUB_A, SubOutcome::Unknown, &["no baseline"]);
}

#[test]
fn an_executed_staged_tool_fails() {
    let b = base();
    let o = grade(&bundle(Some(consent()), pair(ok())), Some(&b));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Fail,
        &["`new`", "executed", "no approval gate"],
    );
    assert_eq!(o.details["staged_tool"], "new");
    assert_eq!(o.details["control_tool"], "old");
}

#[test]
fn a_worded_denial_passes_quoting_it() {
    let b = base();
    for answer in [
        json!({"result": {"isError": true, "content": [{"type": "text", "text": "Tool pending approval"}]}}),
        json!({"error": {"code": -32000, "message": "Forbidden: tool not approved"}}),
    ] {
        let o = grade(&bundle(Some(consent()), pair(answer)), Some(&b));
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert_sub(
            &o,
            SUB_A,
            SubOutcome::Pass,
            &["refused as unapproved", "control `old` executed cleanly"],
        );
    }
    let long = "denied ".repeat(60);
    let o = grade(
        &bundle(
            Some(consent()),
            pair(json!({"error": {"code": 1, "message": long}})),
        ),
        Some(&b),
    );
    assert!(crate::fixture::sub(&o, SUB_A).note.len() < 400, "{o:?}");
}

#[test]
fn unresolved_invalid_params_and_other_words_are_unknown() {
    let b = base();
    let cases = [
        (
            json!({"error": {"code": -32601, "message": "Unknown tool"}}),
            "did not resolve",
        ),
        (
            json!({"error": {"code": -32602, "message": "missing argument; denied"}}),
            "indistinguishable from a gate",
        ),
        (
            json!({"error": {"code": -32000, "message": "boom"}}),
            "name no missing approval",
        ),
        (
            json!({"result": {"isError": true, "content": [{"type": "text", "text": "bad input"}]}}),
            "name no missing approval",
        ),
    ];
    for (answer, words) in cases {
        let o = grade(&bundle(Some(consent()), pair(answer)), Some(&b));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert_sub(&o, SUB_A, SubOutcome::Unknown, &[words]);
    }
}

#[test]
fn a_control_that_did_not_execute_is_an_error_with_a_hint() {
    let b = base();
    let recs = vec![
        call(
            leg::STAGED_CONTROL,
            10,
            "old",
            json!({"result": {"isError": true, "content": []}}),
        ),
        skipped(
            &[leg::STAGED_CALL],
            "not sent: the control did not execute cleanly",
        ),
    ];
    let o = grade(
        &bundle(
            Some(json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {}})),
            recs,
        ),
        Some(&b),
    );
    assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Error,
        &["did not execute cleanly", "give arguments for `old`"],
    );
    let recs = vec![
        call(
            leg::STAGED_CONTROL,
            10,
            "old",
            json!({"error": {"code": -32603, "message": "x"}}),
        ),
        skipped(&[leg::STAGED_CALL], "not sent"),
    ];
    let o = grade(&bundle(Some(consent()), recs), Some(&b));
    assert_sub(&o, SUB_A, SubOutcome::Error, &["JSON-RPC error -32603"]);
    assert!(!crate::fixture::sub(&o, SUB_A)
        .note
        .contains("give arguments"));
}

#[test]
fn calls_against_another_baseline_are_unknown() {
    let b = base();
    let recs = vec![
        call(leg::STAGED_CONTROL, 10, "new", ok()),
        call(leg::STAGED_CALL, 11, "old", ok()),
    ];
    let o = grade(&bundle(Some(consent()), recs), Some(&b));
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["collected against another baseline", "control `new`"],
    );
    let recs = vec![
        call(leg::STAGED_CONTROL, 10, "old", ok()),
        call(leg::STAGED_CALL, 11, "old", ok()),
    ];
    let o = grade(&bundle(Some(consent()), recs), Some(&b));
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["staged tool `old` is in it"],
    );
}

#[test]
fn nothing_new_or_no_call_is_unknown() {
    let mut b = base();
    b = evidence(b.payload.session.clone(), vec![tools_page(&["new", "old"])]);
    let o = grade(&bundle(Some(consent()), pair(ok())), Some(&b));
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["no tool is advertised beyond", "2 advertised"],
    );
    let legs = [leg::STAGED_CONTROL, leg::STAGED_CALL];
    let o = grade(
        &bundle(
            Some(consent()),
            vec![skipped(&legs, "not sent: no baseline of this endpoint")],
        ),
        Some(&base()),
    );
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["no control was called", "no baseline of this endpoint"],
    );
}

#[test]
fn the_denial_words() {
    for t in [
        "PENDING",
        "not approved",
        "Unauthorised",
        "awaiting approval",
        "access denied",
    ] {
        assert!(is_denial(t), "{t}");
    }
    assert!(!is_denial("invalid arguments"));
}
