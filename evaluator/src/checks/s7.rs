//! Section 7 checks: observability and audit.
//!
//! Every recommendation of this section has an audit-log half no client can reach
//! (spec/checks.md §11.5). This build grades:
//!
//! * 7.1.1 and 7.1.3, reported only (always N/A). 7.1.1 records what the wire shows
//!   about lifecycle metadata: whether each collected result names its server in
//!   `_meta["io.modelcontextprotocol/serverInfo"]` and whether the deprecated `logging`
//!   capability is advertised.
//! * 7.1.2 leg a, on the wire: one `tools/list` with `"id": null` (collector leg
//!   [`leg::NULL_ID`]), complete and valid for the negotiated revision otherwise, so a
//!   refusal can only be about the id. A refusal needs a JSON-RPC error object; an
//!   acceptance needs a result, or a 2xx that treated the request as a notification
//!   (spec/checks.md §17 item 4: an empty 2xx answer to a request is an acceptance, as in
//!   1.1). A bare status without a JSON-RPC body is ERROR: a gateway produces exactly
//!   that (§15).

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{BodyEnd, HttpOutcome, Observation};
use mcp_probe_schema::vocab::{code, header, leg, meta, REV_2026_07_28};
use serde_json::{json, Value};

use super::common::reported::reported_only;
use super::common::values::or_null;
use crate::check::{Check, Context, Legs, Needs};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::{excerpt, line};
use crate::verdict::{Leg, LegOutcome, Outcome};
use mcp_probe_schema::model::Era;

/// 7.1.1: lifecycle and invocation metadata recorded.
#[derive(Debug)]
pub struct Check7_1_1;
/// The 7.1.1 check.
pub static C7_1_1: Check7_1_1 = Check7_1_1;

/// One JSON-RPC result the bundle holds, and whether it names its server.
struct ResultMeta {
    method: String,
    names_server: bool,
    seq: u64,
}

/// Every JSON-RPC message with a `result` in every HTTP response of the bundle, with
/// the method of the request it answered.
fn results(ev: &Evidence) -> Vec<ResultMeta> {
    let mut out = Vec::new();
    for record in &ev.records {
        let Observation::Http(http) = &record.observation else {
            continue;
        };
        let x = ev
            .exchange_of(record)
            .unwrap_or(Exchange::new(record, http));
        // Per-result serverInfo is a 2026-07-28 field: on a 2026-07-28 session, results
        // of legacy-shaped requests (the 1.1a initialize sweep) are not counted.
        let asserted =
            mcp_probe_schema::derive::header(&http.request.headers, header::PROTOCOL_VERSION)
                .map(|h| h.value_str().into_owned());
        if ev.is_modern() && asserted.as_deref() != Some(mcp_probe_schema::vocab::REV_2026_07_28) {
            continue;
        }
        let method = x
            .request_json()
            .and_then(|r| r.get("method").and_then(Value::as_str).map(line))
            .unwrap_or_else(|| "(no method)".into());
        for m in x.messages() {
            let Some(result) = m.get("result") else {
                continue;
            };
            let names_server = result
                .get("_meta")
                .and_then(|m| m.get(meta::SERVER_INFO))
                .and_then(Value::as_object)
                .is_some_and(|o| !o.is_empty());
            out.push(ResultMeta {
                method: method.clone(),
                names_server,
                seq: record.seq,
            });
        }
    }
    out
}

/// The distinct methods of `rs`, in first-seen order.
fn methods<'a>(rs: impl Iterator<Item = &'a ResultMeta>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for r in rs {
        if !seen.contains(&r.method.as_str()) {
            seen.push(&r.method);
        }
    }
    seen.join(", ")
}

/// The per-result identity observation.
fn naming_observation(rs: &[ResultMeta]) -> String {
    let n = rs.len();
    let k = rs.iter().filter(|r| r.names_server).count();
    let carry = format!(
        "{k} of {n} carry a non-empty _meta[\"{}\"]",
        meta::SERVER_INFO
    );
    if n == 0 {
        "no result collected, so whether results name their server was not observed".into()
    } else if k == n {
        format!(
            "every result names its server ({carry}; methods: {})",
            methods(rs.iter())
        )
    } else if k == 0 {
        format!(
            "no result names its server ({carry}; methods: {})",
            methods(rs.iter())
        )
    } else {
        format!(
            "some results name their server and some do not ({carry}; naming: {}; not naming: {})",
            methods(rs.iter().filter(|r| r.names_server)),
            methods(rs.iter().filter(|r| !r.names_server))
        )
    }
}

impl Check for Check7_1_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let rs = results(ev);
        let logging = ev.capabilities().map(|c| c.get("logging").is_some());
        let logging_text = match logging {
            None => "server capabilities not observed, so the deprecated logging capability was not seen either way"
                .to_string(),
            Some(true) => format!(
                "the server advertises the logging capability, deprecated in {REV_2026_07_28}"
            ),
            Some(false) => format!(
                "the server does not advertise the logging capability (deprecated in {REV_2026_07_28})"
            ),
        };
        let revision = match ev.revision() {
            Some(r) => format!("negotiated revision {}", line(r)),
            None => "no revision negotiated".into(),
        };
        let remark = format!(
            "per-result server identity is an optional {REV_2026_07_28} recommendation, so its absence is \
             not a failure"
        );
        let k = rs.iter().filter(|r| r.names_server).count();
        let mut seqs: Vec<u64> = rs.iter().map(|r| r.seq).collect();
        seqs.extend(ev.session().and_then(|s| s.negotiated_in));
        reported_only(
            ev,
            "lifecycle and invocation metadata are recorded in the server's audit log, which no client \
             can read",
            &[naming_observation(&rs), logging_text, revision, remark],
            "the whole recommendation is about the server's audit records, which are not read; the \
             per-result identity and the logging capability are recorded for the reviewer",
        )
        .with_detail("negotiated_version", or_null(ev.revision()))
        .with_detail("results_naming_server", k)
        .with_detail("results_not_naming_server", rs.len() - k)
        .with_detail("advertises_deprecated_logging", or_null(logging))
        .with_records(seqs)
    }
}

/// 7.1.3: audit timestamps accurate and monotonic.
#[derive(Debug)]
pub struct Check7_1_3;
/// The 7.1.3 check.
pub static C7_1_3: Check7_1_3 = Check7_1_3;

impl Check for Check7_1_3 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        reported_only(
            ev,
            "the requirement is stated against the timestamps of the server's audit log entries, and MCP \
             messages carry no timestamp a client could compare",
            &[],
            "the whole recommendation is about audit log values, which are not read; nothing is probed",
        )
    }
}

/// 7.1.2: non-null JSON-RPC request ids enforced.
#[derive(Debug)]
pub struct Check7_1_2;
/// The 7.1.2 check.
pub static C7_1_2: Check7_1_2 = Check7_1_2;

const LEG_A: &str = "7.1.2a";

const REDUCTION_7_1_2: &str = "7.1.2b (a request whose id collides with one still outstanding is refused) is \
     not testable over discrete HTTP requests; 7.1.2c (the id appears on every audit entry) lives in the \
     server's audit log, which a client cannot read; neither is covered";

/// Words in a skip reason that mark a decision of the run (operator choice), after which
/// a later run may decide: UNKNOWN. Any other skip means the observation failed: ERROR.
const RUN_CHOICE_MARKERS: [&str; 3] = ["--info", "consent", "operator"];

/// Leg 7.1.2a's verdict on one recorded exchange, with the facts the evidence names.
struct Judgement {
    outcome: LegOutcome,
    note: String,
    status: Option<u16>,
    error: Option<Value>,
}

impl Judgement {
    fn new(outcome: LegOutcome, note: String, status: Option<u16>) -> Judgement {
        Judgement {
            outcome,
            note,
            status,
            error: None,
        }
    }
}

/// The first 120 characters of untrusted text, on one line.
fn short(s: &str) -> String {
    let e = excerpt(s.as_bytes(), 120);
    format!("{}{}", line(&e.text), if e.cut { "…" } else { "" })
}

/// "HTTP 400 (application/json)".
fn status_line(status: u16, content_type: Option<&str>) -> String {
    match content_type {
        Some(ct) => format!("HTTP {status} ({})", line(ct)),
        None => format!("HTTP {status} (no Content-Type)"),
    }
}

/// Decide leg 7.1.2a from the recorded null-id exchange (spec/checks.md §11.5 with the
/// §17 item 4 correction).
fn judge(ev: &Evidence, x: &Exchange<'_>) -> Judgement {
    let sent_id = x.request_json().and_then(|r| r.get("id").cloned());
    if sent_id != Some(Value::Null) {
        let shown = sent_id.map_or_else(|| "no id".to_string(), |v| short(&v.to_string()));
        return Judgement::new(
            LegOutcome::Error,
            format!(
                "the recorded request carries {shown}, not \"id\": null, so it does not test this rule"
            ),
            None,
        );
    }
    let resp = match &x.http.outcome {
        HttpOutcome::Response(r) => r,
        HttpOutcome::Error(e) => {
            return Judgement::new(
                LegOutcome::Error,
                format!(
                    "the null-id request drew no response ({e}): the observation was never made"
                ),
                None,
            )
        }
    };
    let status = resp.status;
    let content_type = x.header(header::CONTENT_TYPE);
    let shown = status_line(status, content_type.as_deref());
    if status == 401 || status == 403 {
        let held = if ev.authenticated() {
            "although it carried the run's credential (expired, retired or insufficient)"
        } else {
            "and the run held no credential"
        };
        return Judgement::new(
            LegOutcome::Unknown,
            format!(
                "{shown}: refused at authentication {held}, so the request never reached id validation"
            ),
            Some(status),
        );
    }
    let answer = x.answer();
    if let Some(err) = answer
        .as_ref()
        .and_then(|a| a.get("error"))
        .and_then(Value::as_object)
    {
        let code_v = err.get("code").and_then(Value::as_i64);
        let message = err.get("message").and_then(Value::as_str).unwrap_or("");
        let code_text = code_v.map_or_else(
            || "without an integer code".to_string(),
            |c| format!("code {c}"),
        );
        let refused = format!(
            "{shown} with JSON-RPC error {code_text} \"{}\"",
            short(message)
        );
        let mut deviations = Vec::new();
        if status != 400 {
            deviations.push(format!("status {status} instead of 400"));
        }
        if code_v != Some(code::INVALID_REQUEST) {
            deviations.push(format!("{code_text} instead of {}", code::INVALID_REQUEST));
        }
        let note = if deviations.is_empty() {
            format!("rejected as Invalid Request: {refused}, the recommended shape")
        } else {
            format!(
                "rejected: {refused}; a refusal is positive evidence, though it deviates from the recommended \
                 HTTP 400 with {} (Invalid Request): {}",
                code::INVALID_REQUEST,
                deviations.join(", ")
            )
        };
        let mut j = Judgement::new(LegOutcome::Pass, note, Some(status));
        j.error = Some(
            json!({"code": err.get("code").cloned().unwrap_or(Value::Null),
                               "message": err.get("message").cloned().unwrap_or(Value::Null)}),
        );
        return j;
    }
    if let Some(result) = answer
        .as_ref()
        .and_then(|a| a.get("result"))
        .filter(|r| !r.is_null())
    {
        let what = match result.get("tools").and_then(Value::as_array) {
            Some(t) => format!(
                " listing {} tool{}",
                t.len(),
                if t.len() == 1 { "" } else { "s" }
            ),
            None => String::new(),
        };
        return Judgement::new(
            LegOutcome::Fail,
            format!(
                "accepted: {shown} answered the null-id request with a result{what} instead of rejecting it"
            ),
            Some(status),
        );
    }
    let broken = match &resp.body.end {
        BodyEnd::Error(e) => Some(format!("the body broke off ({e})")),
        BodyEnd::LimitReached => Some("the body exceeded the read limit".to_string()),
        BodyEnd::HeadOnly => Some("the body was not read (head only)".to_string()),
        BodyEnd::Complete | BodyEnd::StoppedAfterResponse => None,
    };
    let media = derive::media_type(&resp.headers);
    if (200..300).contains(&status) && broken.is_none() {
        if resp.body.length == 0 {
            return Judgement::new(
                LegOutcome::Fail,
                format!(
                    "accepted: {shown} with an empty body, the acknowledgement of a notification; the server \
                     treated a request it must reject as a notification"
                ),
                Some(status),
            );
        }
        if media.as_deref() == Some("text/event-stream") {
            return Judgement::new(
                LegOutcome::Fail,
                format!(
                    "accepted: {shown} opened an event stream for the request and closed it with neither a \
                     result nor an error"
                ),
                Some(status),
            );
        }
        if answer.is_some_and(|a| a.get("result").is_some()) {
            return Judgement::new(
                LegOutcome::Fail,
                format!(
                    "accepted: {shown} answered with a JSON-RPC response carrying a null result"
                ),
                Some(status),
            );
        }
    }
    let body = if resp.body.length == 0 {
        "an empty body".to_string()
    } else {
        format!(
            "a body that holds no JSON-RPC error object ({} bytes: \"{}\")",
            resp.body.length,
            short(&String::from_utf8_lossy(&resp.body.bytes))
        )
    };
    let broken = broken.map(|b| format!("; {b}")).unwrap_or_default();
    Judgement::new(
        LegOutcome::Error,
        format!(
            "{shown} with {body}{broken}: a bare status a gateway or proxy may have produced, so neither a \
             refusal nor an acceptance is attributed to the server"
        ),
        Some(status),
    )
}

impl Check for Check7_1_2 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[leg::NULL_ID])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let seqs = ev.seqs(leg::NULL_ID);
        // One request is sent; should a record ever be repeated, the last one stands.
        let j = match ev.exchanges(leg::NULL_ID).last() {
            Some(x) => {
                let mut j = judge(ev, &x);
                let rev = ev
                    .revision()
                    .map(line)
                    .unwrap_or_else(|| "no revision".into());
                let auth = if ev.authenticated() {
                    "authenticated"
                } else {
                    "unauthenticated"
                };
                j.note = format!(
                    "tools/list with \"id\": null (record #{}, {rev}, {auth}): {}",
                    x.seq(),
                    j.note
                );
                j
            }
            None => {
                match ev.skipped(leg::NULL_ID) {
                    Some(reason) => {
                        let reason = line(reason);
                        if RUN_CHOICE_MARKERS.iter().any(|m| reason.contains(m)) {
                            Judgement::new(
                            LegOutcome::Unknown,
                            format!("the null-id request was not sent ({reason}); a full run decides"),
                            None,
                        )
                        } else {
                            Judgement::new(
                            LegOutcome::Error,
                            format!(
                                "the null-id request was not sent ({reason}): the observation was never made"
                            ),
                            None,
                        )
                        }
                    }
                    None => Judgement::new(
                        LegOutcome::Error,
                        "the leg's records hold neither an HTTP exchange nor a skip".into(),
                        None,
                    ),
                }
            }
        };
        let legs_detail = json!({ LEG_A: j.outcome });
        Outcome::from_legs(vec![Leg::new(LEG_A, j.outcome, j.note)], REDUCTION_7_1_2)
            .with_records(seqs)
            .with_detail("legs", legs_detail)
            .with_detail("http_status", or_null(j.status))
            .with_detail("jsonrpc_error", j.error.unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, list_page, session, skipped};
    use crate::grade::run;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{ErrorKind, Record, TransportError};

    const NULL_REQ: &str = r#"{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}"#;

    fn graded(records: Vec<Record>) -> Outcome {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        );
        run(&C7_1_2, &ev, &Context::default())
    }

    fn null_id(status: u16, ct: &str, body: &str) -> Outcome {
        graded(vec![exchange(
            &[leg::NULL_ID],
            NULL_REQ,
            status,
            ct,
            body,
            &[],
        )])
    }

    fn has(o: &Outcome, words: &[&str]) {
        for w in words {
            assert!(o.evidence.contains(w), "{w:?} not in {:?}", o.evidence);
        }
    }

    #[test]
    fn accepted_as_notification_fails() {
        let o = null_id(202, "application/json", "");
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["HTTP 202", "empty body", "notification"]);
        assert_eq!(o.details["http_status"], 202);
        assert!(o.details["jsonrpc_error"].is_null());
        assert_eq!(o.records, vec![0]);
        assert!(o.reduction.contains("7.1.2b") && o.reduction.contains("7.1.2c"));
    }

    #[test]
    fn answered_with_a_result_fails() {
        let o = null_id(
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"result":{"tools":[{"name":"a"}]}}"#,
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["accepted", "HTTP 200", "result listing 1 tool"]);
    }

    #[test]
    fn invalid_request_400_passes() {
        let o = null_id(
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must not be null"}}"#,
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &[
                "HTTP 400 (application/json)",
                "code -32600",
                "id must not be null",
                "recommended shape",
            ],
        );
        assert_eq!(o.details["jsonrpc_error"]["code"], -32600);
        assert_eq!(o.details["http_status"], 400);
        assert_eq!(o.details["legs"][LEG_A], "pass");
    }

    #[test]
    fn error_event_in_a_stream_passes() {
        let body = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bad id\"}}\n\n";
        let o = null_id(400, "text/event-stream", body);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &["HTTP 400 (text/event-stream)", "code -32600", "bad id"],
        );
    }

    #[test]
    fn other_refusal_passes_naming_the_deviation() {
        let o = null_id(
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"nope"}}"#,
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &["status 200 instead of 400", "code -32602 instead of -32600"],
        );
    }

    #[test]
    fn bare_400_is_error() {
        let o = null_id(400, "application/json", "");
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["HTTP 400", "empty body", "gateway"]);
        assert_eq!(o.details["http_status"], 400);
    }

    #[test]
    fn gateway_502_html_is_error() {
        let o = null_id(502, "text/html", "<html><body>Bad Gateway</body></html>");
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["HTTP 502 (text/html)", "Bad Gateway", "gateway"]);
    }

    #[test]
    fn html_200_is_not_attributed() {
        let o = null_id(200, "text/html", "<html>login</html>");
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn stream_closed_without_answer_fails() {
        let o = null_id(200, "text/event-stream", ": keep-alive\n\n");
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["event stream", "neither a result nor an error"]);
    }

    #[test]
    fn unauthorized_is_unknown() {
        let o = null_id(
            401,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#,
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "HTTP 401",
                "never reached id validation",
                "held no credential",
            ],
        );
        let o = null_id(403, "text/plain", "forbidden");
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    }

    #[test]
    fn transport_error_is_error() {
        let mut r = exchange(&[leg::NULL_ID], NULL_REQ, 200, "application/json", "", &[]);
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Timeout,
                message: "no response within 30 s".into(),
            });
        }
        let o = graded(vec![r]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["drew no response", "timeout"]);
        assert!(o.details["http_status"].is_null());
    }

    #[test]
    fn skipped_by_info_is_unknown_other_skips_error() {
        let o = graded(vec![skipped(
            &[leg::NULL_ID],
            "not sent: --info run (connect and enumerate only)",
        )]);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["not sent", "--info"]);
        let o = graded(vec![skipped(
            &[leg::NULL_ID],
            "not sent: the run was interrupted",
        )]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn a_request_without_null_id_is_error() {
        let req = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#;
        let o = graded(vec![exchange(
            &[leg::NULL_ID],
            req,
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#,
            &[],
        )]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["does not test this rule"]);
    }

    #[test]
    fn missing_leg_is_error_naming_it() {
        let o = graded(Vec::new());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &[leg::NULL_ID.as_str(), "missing"]);
    }

    fn modern_results(metas: &[bool]) -> Evidence {
        let info = json!({"name": "m", "version": "1"});
        let records = metas
            .iter()
            .enumerate()
            .map(|(i, named)| {
                let mut result = json!({"tools": []});
                if *named {
                    result["_meta"] = json!({ meta::SERVER_INFO: info });
                } else {
                    result["_meta"] = json!({ meta::SERVER_INFO: {} });
                }
                let mut r = list_page(leg::INVENTORY_TOOLS, "tools/list", i as i64 + 1, result);
                if let Observation::Http(x) = &mut r.observation {
                    x.request.headers.push(mcp_probe_schema::model::Header::new(
                        "MCP-Protocol-Version",
                        REV_2026_07_28,
                    ));
                }
                r
            })
            .collect();
        evidence(
            Some(session(
                Some(REV_2026_07_28),
                json!({"tools": {}, "logging": {}}),
                Some(info.clone()),
            )),
            records,
        )
    }

    #[test]
    fn legacy_shaped_results_on_a_modern_session_are_not_counted() {
        // A 1.1a sweep initialize (no 2026-07-28 header) answers without _meta: it must
        // not turn "every result names its server" into "some do and some do not".
        let base = modern_results(&[true]);
        let sweep = list_page(
            leg::V_SWEEP,
            "initialize",
            9,
            json!({"protocolVersion": "2024-11-05"}),
        );
        let mut records = base.records.clone();
        records.push(sweep);
        let ev = crate::fixture::evidence(base.payload.session.clone(), records);
        let o = run(&C7_1_1, &ev, &Context::default());
        assert!(
            o.evidence.contains("every result names its server"),
            "{}",
            o.evidence
        );
    }

    #[test]
    fn every_result_names_its_server() {
        let o = run(&C7_1_1, &modern_results(&[true, true]), &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(
            &o,
            &[
                "every result names its server",
                "2 of 2",
                "advertises the logging capability, deprecated",
                "negotiated revision 2026-07-28",
                "optional 2026-07-28 recommendation",
                "audit log",
            ],
        );
        assert_eq!(o.details["results_naming_server"], 2);
        assert_eq!(o.details["results_not_naming_server"], 0);
        assert_eq!(o.details["advertises_deprecated_logging"], true);
        assert_eq!(o.details["negotiated_version"], REV_2026_07_28);
        assert_eq!(o.details["transport"], "streamable-http");
    }

    #[test]
    fn no_result_names_its_server() {
        let o = run(
            &C7_1_1,
            &modern_results(&[false, false]),
            &Context::default(),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(&o, &["no result names its server", "0 of 2"]);
        assert_eq!(o.details["results_not_naming_server"], 2);
    }

    #[test]
    fn some_results_name_their_server() {
        let o = run(
            &C7_1_1,
            &modern_results(&[true, false, true]),
            &Context::default(),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(
            &o,
            &["some results name their server and some do not", "2 of 3"],
        );
        assert_eq!(o.details["results_naming_server"], 2);
        assert_eq!(o.details["results_not_naming_server"], 1);
    }

    #[test]
    fn no_result_collected_and_no_session() {
        let o = run(&C7_1_1, &evidence(None, Vec::new()), &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(
            &o,
            &[
                "no result collected",
                "capabilities not observed",
                "no revision negotiated",
                "transport unknown",
            ],
        );
        assert!(o.details["advertises_deprecated_logging"].is_null());
        assert!(o.details["negotiated_version"].is_null());
    }

    #[test]
    fn legacy_without_logging() {
        let ev = evidence(
            Some(session(Some("2025-06-18"), json!({"tools": {}}), None)),
            vec![list_page(
                leg::INVENTORY_TOOLS,
                "tools/list",
                1,
                json!({"tools": []}),
            )],
        );
        let o = run(&C7_1_1, &ev, &Context::default());
        has(
            &o,
            &[
                "no result names its server (0 of 1 carry",
                "methods: tools/list",
                "does not advertise the logging",
            ],
        );
        assert_eq!(o.details["advertises_deprecated_logging"], false);
    }

    #[test]
    fn timestamps_are_na() {
        for ev in [modern_results(&[true]), evidence(None, Vec::new())] {
            let o = run(&C7_1_3, &ev, &Context::default());
            assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
            has(&o, &["reported only", "timestamp", "transport "]);
        }
    }
    /// Every example bundle grades without panicking: reported-only checks are N/A on
    /// all of them, 1.4 is UNKNOWN without a baseline and PASS against itself, and 7.1.2
    /// says its leg is missing (the examples predate it: an old bundle graded by a newer
    /// grader says so instead of guessing).
    #[test]
    fn example_bundles() {
        use crate::checks::{s1, s2, s3};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut paths: Vec<_> = [dir.clone(), dir.join("compat")]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).expect("examples dir"))
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "no bundles in {}", dir.display());
        let reported: [&dyn Check; 7] = [
            &s2::C2_1,
            &s3::C3_1_1,
            &s3::C3_2_1,
            &s3::C3_2_3,
            &s3::C3_3_3,
            &C7_1_1,
            &C7_1_3,
        ];
        for p in &paths {
            let bytes = std::fs::read(p).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            let ev = Evidence::new(p.display().to_string(), v);
            let name = p.display();
            let none = Context::default();
            for c in reported {
                let o = run(c, &ev, &none);
                assert_eq!(
                    o.verdict,
                    Verdict::NotApplicable,
                    "{} on {name}: {o:?}",
                    "a reported-only check"
                );
                assert!(
                    o.evidence.contains("transport "),
                    "{} on {name}",
                    o.evidence
                );
            }
            let own = Context {
                baseline: Some(&ev),
                updating_baseline: false,
            };
            let without = run(&s1::C1_4, &ev, &none);
            let against_self = run(&s1::C1_4, &ev, &own);
            let null_id = run(&C7_1_2, &ev, &none);
            assert_eq!(
                without.verdict,
                Verdict::Unknown,
                "1.4 on {name}: {without:?}"
            );
            if ev.revision().is_some() {
                assert_eq!(
                    against_self.verdict,
                    Verdict::Pass,
                    "1.4 on {name}: {against_self:?}"
                );
                if p.to_string_lossy().contains("compat") {
                    // Recorded by a collector that did not send the 7.1.2 leg yet: an old
                    // bundle graded by a newer grader says so instead of guessing.
                    assert_eq!(
                        null_id.verdict,
                        Verdict::Error,
                        "7.1.2 on {name}: {null_id:?}"
                    );
                    assert!(
                        null_id.evidence.contains(leg::NULL_ID.as_str())
                            && null_id.evidence.contains("missing"),
                        "7.1.2 on {name}: {null_id:?}"
                    );
                } else if ev.is_modern() {
                    // Every lab server refuses "id": null on the 2026-07-28 path with
                    // 400 and -32600 (lab.md §5).
                    assert_eq!(
                        null_id.verdict,
                        Verdict::Pass,
                        "7.1.2 on {name}: {null_id:?}"
                    );
                } else {
                    // py1 (legacy only) treats it as a notification: 202, empty body.
                    assert_eq!(
                        null_id.verdict,
                        Verdict::Fail,
                        "7.1.2 on {name}: {null_id:?}"
                    );
                    assert!(null_id.evidence.contains("202"), "{null_id:?}");
                }
            } else {
                // No session: the endpoint wanted a credential the run did not have, so
                // the runner's precondition decides before any leg is read.
                assert!(ev.session().is_some_and(|s| s.auth_required), "{name}");
                assert_eq!(against_self.verdict, Verdict::Unknown, "1.4 on {name}");
                assert_eq!(null_id.verdict, Verdict::Unknown, "7.1.2 on {name}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// 7.2.1
// ---------------------------------------------------------------------------------------

/// 7.2.1: alerts on audience and issuer validation failures (spec/checks.md §11.5). The
/// observable part: a token minted for another resource (by 3.3.1b's refresh grant; no
/// second grant is spent) draws 401/403 on a complete `tools/list` that the probe's own
/// token gets accepted (collector legs [`leg::FOREIGN_CONTROL`], [`leg::FOREIGN_TOKEN`]).
#[derive(Debug)]
pub struct Check7_2_1;
/// The 7.2.1 check.
pub static C7_2_1: Check7_2_1 = Check7_2_1;

const LEG_7_2_1A: &str = "7.2.1a";

const REDUCTION_7_2_1: &str = "not covered: 7.2.1b (the refusal is logged as a structured event with an \
     error code), 7.2.1c (an alert rule fires and is routed), 7.2.1d (client-side issuer validation binds \
     the client, not the server); only the server's refusal of a foreign-audience token is observed";

impl Check for Check7_2_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[leg::FOREIGN_TOKEN])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let control = ev.exchanges(leg::FOREIGN_CONTROL).last();
        let foreign = ev.exchanges(leg::FOREIGN_TOKEN).last();
        let mut seqs = ev.seqs(leg::FOREIGN_CONTROL);
        seqs.extend(ev.seqs(leg::FOREIGN_TOKEN));
        seqs.extend(ev.seqs(leg::FOREIGN_MINT));
        let status = |x: Option<&Exchange<'_>>| or_null(x.and_then(|x| x.status()));
        let shown = |x: &Exchange<'_>| match x.status() {
            Some(s) => format!("HTTP {s} (record #{})", x.seq()),
            None => format!("no answer (record #{})", x.seq()),
        };
        let (outcome, note) = match (&control, &foreign) {
            (_, None) => {
                let why = ev
                    .skipped(leg::FOREIGN_TOKEN)
                    .map(line)
                    .unwrap_or_else(|| "no record of it".into());
                (
                    LegOutcome::Unknown,
                    format!(
                        "no token minted for another resource was presented ({why}); the server's audience \
                         validation was not exercised"
                    ),
                )
            }
            (None, Some(f)) => (
                LegOutcome::Unknown,
                format!(
                    "the foreign-audience token answered {} but no control with the probe's own token is \
                     recorded, so a refusal is not attributable to the audience",
                    shown(f)
                ),
            ),
            (Some(c), Some(f)) => {
                let pair = format!(
                    "tools/list with the probe's own token: {}; the same with the foreign-audience token: {}",
                    shown(c),
                    shown(f)
                );
                match (c.status(), f.status()) {
                    (Some(cs), _) if !(200..300).contains(&cs) => (
                        LegOutcome::Unknown,
                        format!(
                            "{pair}; the control was not accepted, so a refusal of the foreign token is not \
                             attributable to its audience"
                        ),
                    ),
                    (None, _) => (
                        LegOutcome::Unknown,
                        format!("{pair}; the control got no answer"),
                    ),
                    (_, None) => (
                        LegOutcome::Error,
                        format!("{pair}; the foreign-audience request got no answer"),
                    ),
                    (_, Some(401 | 403)) => (
                        LegOutcome::Pass,
                        format!("{pair}: a token for another audience is refused"),
                    ),
                    (_, Some(fs)) if (200..300).contains(&fs) => (
                        LegOutcome::Fail,
                        format!(
                            "{pair}: a token minted for another resource was accepted (the server does not \
                             validate its own audience)"
                        ),
                    ),
                    _ => (
                        LegOutcome::Unknown,
                        format!("{pair}: neither 401/403 nor an acceptance"),
                    ),
                }
            }
        };
        Outcome::from_legs(vec![Leg::new(LEG_7_2_1A, outcome, note)], REDUCTION_7_2_1)
            .with_records(seqs)
            .with_detail("legs", json!({ LEG_7_2_1A: outcome }))
            .with_detail("control_status", status(control.as_ref()))
            .with_detail("wrong_audience_status", status(foreign.as_ref()))
            .with_detail("had_foreign_audience_token", foreign.is_some())
    }
}

#[cfg(test)]
mod tests_7_2_1 {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::grade::run;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
    use mcp_probe_schema::vocab::LegId;

    const LIST: &str = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#;

    fn rec(l: LegId, status: u16) -> Record {
        let body = if (200..300).contains(&status) {
            r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#
        } else {
            r#"{"error":"invalid_token"}"#
        };
        exchange(&[l], LIST, status, "application/json", body, &[])
    }

    fn graded(records: Vec<Record>) -> Outcome {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        );
        run(&C7_2_1, &ev, &Context::default())
    }

    fn pair(control: u16, foreign: u16) -> Outcome {
        graded(vec![
            rec(leg::FOREIGN_CONTROL, control),
            rec(leg::FOREIGN_TOKEN, foreign),
        ])
    }

    #[test]
    fn foreign_refused_passes() {
        for s in [401, 403] {
            let o = pair(200, s);
            assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
            assert_eq!(o.details["wrong_audience_status"], json!(s));
            assert_eq!(o.details["control_status"], json!(200));
            assert_eq!(o.details["had_foreign_audience_token"], json!(true));
        }
    }

    #[test]
    fn foreign_accepted_fails() {
        let o = pair(200, 200);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(o.evidence.contains("accepted"), "{}", o.evidence);
    }

    #[test]
    fn control_not_accepted_is_unknown() {
        let o = pair(401, 401);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("not attributable"), "{}", o.evidence);
    }

    #[test]
    fn other_foreign_status_is_unknown() {
        assert_eq!(pair(200, 400).verdict, Verdict::Unknown);
        assert_eq!(pair(200, 500).verdict, Verdict::Unknown);
    }

    #[test]
    fn no_foreign_token_is_unknown() {
        let o = graded(vec![skipped(
            &[leg::FOREIGN_RESTORE, leg::FOREIGN_CONTROL, leg::FOREIGN_TOKEN],
            "not sent: the authorization server refused to mint a token for https://cis-probe.invalid/wrong-audience (error invalid_target)",
        )]);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("invalid_target"), "{}", o.evidence);
        assert_eq!(o.details["had_foreign_audience_token"], json!(false));
    }

    #[test]
    fn foreign_transport_error_is_error() {
        let mut f = rec(leg::FOREIGN_TOKEN, 200);
        if let Observation::Http(x) = &mut f.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Reset,
                message: "connection reset".into(),
            });
        }
        let o = graded(vec![rec(leg::FOREIGN_CONTROL, 200), f]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn missing_leg_is_error() {
        let o = graded(vec![]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        assert!(
            o.evidence.contains(leg::FOREIGN_TOKEN.as_str()),
            "{}",
            o.evidence
        );
    }
}
