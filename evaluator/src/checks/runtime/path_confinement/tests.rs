use super::*;
use crate::check::Context;
use crate::fixture::{exchange, session, skipped, ENDPOINT};
use crate::preconditions::run_rule;
use mcp_probe_schema::model::Record;
use serde_json::json;

const CONTROL: &str = "file:///docs/readme.txt";

fn bundle(records: Vec<Record>, inputs: Option<Value>) -> Bundle {
    let mut payload = mcp_probe_schema::testkit::evidence(ENDPOINT, records);
    payload.session = Some(session(Some("2025-11-25"), json!({"resources": {}}), None));
    payload.run.inputs = inputs;
    let bytes = mcp_probe_schema::seal(&payload, &mcp_probe_schema::testkit::test_key(7));
    Bundle::new(
        "t.mcpev",
        mcp_probe_schema::open(&bytes, &[]).expect("verifies"),
    )
}

fn read(l: LegId, id: i64, uri: &str, status: u16, ctype: &str, body: &str) -> Record {
    let req =
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
            .to_string();
    exchange(&[l], &req, status, ctype, body, &[])
}

fn result(id: i64, contents: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"contents": contents}}).to_string()
}

fn refused(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "Resource not found"}})
        .to_string()
}

fn up(target: &str) -> String {
    format!("{CONTROL}/{}{target}", "../".repeat(12))
}

fn control_ok() -> Record {
    read(
        leg::TRAVERSAL_CONTROL,
        1,
        CONTROL,
        200,
        "application/json",
        &result(1, json!([{"uri": CONTROL, "text": "read me"}])),
    )
}

/// A bundle whose traversal legs answered `unix`, `windows`, `encoded` (id, body).
fn graded(control: Record, answers: [(u16, &str, String); 3], inputs: Option<Value>) -> Outcome {
    let legs = [
        (leg::TRAVERSAL_UNIX, up("etc/passwd")),
        (leg::TRAVERSAL_WINDOWS, up("windows/win.ini")),
        (
            leg::TRAVERSAL_ENCODED,
            format!("{CONTROL}/{}etc/passwd", "..%2F".repeat(12)),
        ),
    ];
    let mut records = vec![control];
    for (n, ((l, uri), (status, ctype, body))) in legs.into_iter().zip(answers).enumerate() {
        records.push(read(l, n as i64 + 2, &uri, status, ctype, &body));
    }
    run_rule(
        &PathConfinement,
        &bundle(records, inputs),
        &Context::default(),
    )
}

const J: &str = "application/json";

#[test]
fn without_consent_nothing_was_sent_and_the_check_is_unknown() {
    let ev = bundle(
        vec![skipped(
            &family::TRAVERSAL,
            "not sent: traversal_authorised is not true in the probe inputs (the path-traversal reads are an attack \
             payload, sent only with the operator's consent)",
        )],
        None,
    );
    let o = run_rule(&PathConfinement, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    assert!(o.evidence.contains("operator's consent"), "{}", o.evidence);
}

#[test]
fn a_served_passwd_line_fails_quoting_the_uri_and_the_line() {
    let passwd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin";
    let o = graded(
        control_ok(),
        [
            (200, J, result(2, json!([{"uri": "x", "text": passwd}]))),
            (200, J, refused(3)),
            (200, J, refused(4)),
        ],
        None,
    );
    assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
    let note = &crate::fixture::sub(&o, "a.unix").note;
    assert!(note.contains(&up("etc/passwd")), "{note}");
    assert!(note.contains("`root:x:0:0:root:/root:/bin/bash`"), "{note}");
    assert!(
        o.evidence
            .contains("derived from the first listed resource"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["control_origin"], "derived");
    assert_eq!(
        o.details["probes"][leg::TRAVERSAL_WINDOWS.as_str()]["code"],
        -32602
    );
}

#[test]
fn refusals_and_empty_contents_pass() {
    let o = graded(
        control_ok(),
        [
            (200, J, refused(2)),
            (200, J, result(3, json!([]))),
            (400, J, refused(4)),
        ],
        Some(json!({"traversal_control_uri": CONTROL, "traversal_authorised": true})),
    );
    assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
    assert!(
        o.evidence.contains("the operator's traversal_control_uri"),
        "{}",
        o.evidence
    );
    assert!(o.evidence.contains("refused every traversal URI"));
}

#[test]
fn contents_without_a_marker_a_waf_page_or_a_401_are_unknown() {
    let o = graded(
        control_ok(),
        [
            (200, J, result(2, json!([{"uri": "x", "text": "read me"}]))),
            (
                403,
                "text/html",
                "<html><body>Request blocked</body></html>".into(),
            ),
            (401, J, refused(4)),
        ],
        None,
    );
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    crate::fixture::assert_sub(&o, "a.unix", SubOutcome::Unknown, &["dot-segment removal"]);
    crate::fixture::assert_sub(&o, "a.windows", SubOutcome::Unknown, &["WAF"]);
    crate::fixture::assert_sub(&o, "a.encoded", SubOutcome::Unknown, &["authentication"]);
}

#[test]
fn a_marker_the_control_carries_too_is_not_a_finding_and_blobs_are_read() {
    let control = read(
        leg::TRAVERSAL_CONTROL,
        1,
        CONTROL,
        200,
        J,
        &result(1, json!([{"uri": CONTROL, "text": "#!/bin/sh\necho hi"}])),
    );
    let blob = base64::engine::general_purpose::STANDARD.encode("[fonts]\n[extensions]\n");
    let o = graded(
        control,
        [
            (
                200,
                J,
                result(2, json!([{"uri": "x", "text": "#!/bin/sh\necho hi"}])),
            ),
            (200, J, result(3, json!([{"uri": "x", "blob": blob}]))),
            (200, J, refused(4)),
        ],
        None,
    );
    assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
    crate::fixture::assert_sub(&o, "a.unix", SubOutcome::Unknown, &[]);
    crate::fixture::assert_sub(&o, "a.windows", SubOutcome::Fail, &["[fonts]"]);
}

#[test]
fn a_control_without_contents_leaves_the_check_unknown() {
    let ev = bundle(
        vec![
            read(leg::TRAVERSAL_CONTROL, 1, CONTROL, 200, J, &refused(1)),
            skipped(
                &family::TRAVERSAL[1..],
                "not sent: the control read of \"file:///docs/readme.txt\" did not return a non-empty `contents`",
            ),
        ],
        None,
    );
    let o = run_rule(&PathConfinement, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    crate::fixture::assert_sub(
        &o,
        "a.control",
        SubOutcome::Unknown,
        &["did not return a non-empty `contents`"],
    );
}

#[test]
fn a_read_that_climbs_nothing_tests_nothing() {
    let o = graded(
        control_ok(),
        [
            (200, J, refused(2)),
            (200, J, refused(3)),
            (200, J, refused(4)),
        ],
        None,
    );
    assert_eq!(o.verdict, Verdict::Pass);
    let ev = bundle(
        vec![
            control_ok(),
            read(
                leg::TRAVERSAL_UNIX,
                2,
                "file:///etc/passwd",
                200,
                J,
                &refused(2),
            ),
            read(
                leg::TRAVERSAL_WINDOWS,
                3,
                &up("windows/win.ini"),
                200,
                J,
                &refused(3),
            ),
            read(
                leg::TRAVERSAL_ENCODED,
                4,
                &up("etc/passwd"),
                200,
                J,
                &refused(4),
            ),
        ],
        None,
    );
    let o = run_rule(&PathConfinement, &ev, &Context::default());
    crate::fixture::assert_sub(&o, "a.unix", SubOutcome::Error, &["tests nothing"]);
}

#[test]
fn an_old_bundle_without_the_legs_is_error_naming_them() {
    let o = run_rule(&PathConfinement, &bundle(vec![], None), &Context::default());
    assert_eq!(o.verdict, Verdict::Error);
    assert!(
        o.evidence.contains(leg::TRAVERSAL_CONTROL.as_str()),
        "{}",
        o.evidence
    );
}
