use super::*;
use crate::fixture::{assert_sub, evidence, exchange, session, skipped};
use crate::preconditions::run_rule;
use crate::verdict::Verdict;
use mcp_probe_schema::model::Record;
use serde_json::json;

const INFO: &str = r#"{"name":"srv","version":"1"}"#;

fn progress(token: &str, meta: bool) -> String {
    let meta = if meta {
        format!(r#","_meta":{{"{SERVER_INFO}":{INFO}}}"#)
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"{token}","progress":1{meta}}}}}"#
    )
}

fn sse(events: &[String]) -> String {
    events
        .iter()
        .map(|e| format!("event: message\ndata: {e}\n\n"))
        .collect()
}

fn call(token: Option<&str>, events: &[String]) -> Record {
    let meta = token
        .map(|t| format!(r#","_meta":{{"progressToken":"{t}"}}"#))
        .unwrap_or_default();
    let req = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo","arguments":{{}}{meta}}}}}"#
    );
    let mut all = events.to_vec();
    all.push(r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#.to_string());
    exchange(
        &[leg::NOTIFY_PROGRESS_CALL],
        &req,
        200,
        "text/event-stream",
        &sse(&all),
        &[],
    )
}

fn bundle(rev: &str, records: Vec<Record>) -> Bundle {
    let mut r = records;
    if !r
        .iter()
        .any(|x| x.legs.iter().any(|l| l == leg::NOTIFY_CHANNEL.as_str()))
    {
        r.push(skipped(&[leg::NOTIFY_CHANNEL], "not opened: no GET stream"));
    }
    evidence(Some(session(Some(rev), json!({"tools": {}}), None)), r)
}

fn grade(ev: &Bundle) -> Outcome {
    crate::fixture::local(run_rule(&NotificationIdentity, ev, &Context::default()))
}

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

#[test]
fn nothing_arrived_is_unknown_naming_the_channel() {
    let o = grade(&bundle(LEGACY, vec![call(Some("t1"), &[])]));
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Unknown,
        &["no notification arrived", "not opened: no GET stream"],
    );
    assert_sub(&o, SUB_A, SubOutcome::Unknown, &["no notification arrived"]);
    let legs = [leg::NOTIFY_CHANNEL, leg::NOTIFY_PROGRESS_CALL];
    let o = grade(&bundle(
        LEGACY,
        vec![skipped(
            &legs,
            "not sent: tool_calls_authorised is not true",
        )],
    ));
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Unknown,
        &[
            "0 tool call(s)",
            "the progress call was not made: not sent: tool_calls_authorised",
        ],
    );
}

#[test]
fn named_senders_and_issued_tokens_pass() {
    let o = grade(&bundle(
        MODERN,
        vec![call(Some("t1"), &[progress("t1", true)])],
    ));
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Pass,
        &["all 1 notification(s)", "notifications/progress ×1"],
    );
    assert_sub(&o, SUB_A, SubOutcome::Pass, &["t1"]);
    assert_eq!(o.details["progress_tokens_sent"], json!(["t1"]));
}

#[test]
fn an_unnamed_sender_fails_on_2026_07_28_only() {
    let recs = || {
        vec![call(
            Some("t1"),
            &[progress("t1", false), progress("t1", true)],
        )]
    };
    let o = grade(&bundle(MODERN, recs()));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Fail,
        &["1 of 2 notification(s)", "notifications/progress ×1"],
    );
    let o = grade(&bundle(LEGACY, recs()));
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    // The one rule (a leg that did not arise never weakens the others): on 2025-11-25
    // f's key is one the revision does not define, so f did not arise (named in the
    // evidence) and does not weaken a's PASS.
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::REVISION_UNSUPPORTED,
        &["only 2026-07-28 defines", "2025-11-25"],
    );
    assert_sub(&o, SUB_A, SubOutcome::Pass, &[]);
    assert!(o.evidence.starts_with("f: 1 of 2"), "{}", o.evidence);
    assert_eq!(o.not_arisen, None);
    assert_eq!(o.details["legs"]["f"], "revision_unsupported");
}

#[test]
fn a_token_never_sent_fails_and_every_legs_tokens_count() {
    let o = grade(&bundle(
        MODERN,
        vec![call(Some("t1"), &[progress("zz", true)])],
    ));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_sub(&o, SUB_A, SubOutcome::Fail, &["zz (record #0)", "sent: t1"]);
    // A token another check's call sent (`scopes-minimized` e) is one the bundle issued.
    let scope = exchange(
        &[leg::SCOPE_PROBE_CALL],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":7}}}"#,
        200,
        "application/json",
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#,
        &[],
    );
    let numeric = progress("7", true).replace("\"7\"", "7");
    let o = grade(&bundle(MODERN, vec![scope, call(Some("t1"), &[numeric])]));
    assert_sub(&o, SUB_A, SubOutcome::Pass, &["7, t1"]);
}

#[test]
fn no_progress_is_unknown_saying_why() {
    let log = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"x","_meta":{{"{SERVER_INFO}":{INFO}}}}}}}"#
    );
    let o = grade(&bundle(
        MODERN,
        vec![call(Some("t1"), std::slice::from_ref(&log))],
    ));
    assert_sub(&o, SUB_F, SubOutcome::Pass, &["notifications/message ×1"]);
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["no notifications/progress arrived for the 1"],
    );
    let o = grade(&bundle(MODERN, vec![call(None, &[log])]));
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["no request of the bundle carried a progressToken"],
    );
}

#[test]
fn the_channel_stream_is_read_and_named() {
    let mut get = exchange(
        &[leg::NOTIFY_CHANNEL],
        "",
        200,
        "text/event-stream",
        &sse(&[progress("t1", false)]),
        &[],
    );
    if let mcp_probe_schema::model::Observation::Http(x) = &mut get.observation {
        x.request.method = "GET".into();
        if let mcp_probe_schema::model::HttpOutcome::Response(r) = &mut x.outcome {
            r.body.end = mcp_probe_schema::model::BodyEnd::StoppedAfterResponse;
        }
    }
    let o = grade(&bundle(LEGACY, vec![call(Some("t1"), &[]), get]));
    assert_eq!(o.details["notification_channel"], json!(true));
    assert_eq!(o.details["notifications_seen"], json!(1));
    assert_sub(&o, SUB_A, SubOutcome::Pass, &["all 1 progress"]);
}

/// The `subscriptions/listen` stream of a 2026-07-28 session, holding `events`.
fn listen(events: &[String]) -> Record {
    let req = r#"{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}"#;
    exchange(
        &[leg::NOTIFY_LISTEN],
        req,
        200,
        "text/event-stream",
        &sse(events),
        &[],
    )
}

fn ack(meta: bool) -> String {
    let sender = if meta {
        format!(r#","{SERVER_INFO}":{INFO}"#)
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{{"_meta":{{"io.modelcontextprotocol/subscriptionId":9{sender}}},"notifications":{{"toolsListChanged":true}}}}}}"#
    )
}

/// On a stateless 2026-07-28 server the listen stream is the notification channel. Its
/// acknowledgement is a notification the server sent: one without the sender's `_meta`
/// fails sub-verdict f, one with it passes, where the progress call alone (no notification) left
/// sub-verdict f undecided.
#[test]
fn the_listen_stream_decides_f_on_2026_07_28() {
    let o = grade(&bundle(
        MODERN,
        vec![call(Some("t1"), &[]), listen(&[ack(false)])],
    ));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Fail,
        &[
            "1 of 1 notification(s)",
            "notifications/subscriptions/acknowledged",
        ],
    );
    assert_eq!(o.details["notification_channel"], json!(true));
    let o = grade(&bundle(
        MODERN,
        vec![
            call(Some("t1"), &[progress("t1", true)]),
            listen(&[ack(true)]),
        ],
    ));
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_sub(&o, SUB_F, SubOutcome::Pass, &["all 2 notification(s)"]);
    assert_eq!(o.details["notifications_seen"], json!(2));
    // The ack alone: f decided, a still waits for a progress notification.
    let o = grade(&bundle(
        MODERN,
        vec![call(Some("t1"), &[]), listen(&[ack(true)])],
    ));
    assert_sub(&o, SUB_F, SubOutcome::Pass, &[]);
    assert_sub(
        &o,
        SUB_A,
        SubOutcome::Unknown,
        &["no notifications/progress arrived"],
    );
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    // Before the leg existed (no 7.2.2.listen record): undecided, naming the GET skip.
    let o = grade(&bundle(MODERN, vec![call(Some("t1"), &[])]));
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Unknown,
        &["not opened: no GET stream"],
    );
    assert_eq!(o.details["notification_channel"], json!(null));
    // Not offered: the listen skip is named.
    let o = grade(&bundle(
        MODERN,
        vec![
            call(Some("t1"), &[]),
            skipped(
                &[leg::NOTIFY_LISTEN],
                "not opened: the server/discover capabilities advertise no listChanged",
            ),
        ],
    ));
    assert_sub(
        &o,
        SUB_F,
        SubOutcome::Unknown,
        &["advertise no listChanged"],
    );
}
