//! Rule `null-id-rejected`: non-null JSON-RPC request ids enforced.
//!
//! Sub-verdict a, on the wire: one `tools/list` with `"id": null` (collector leg
//! [`leg::NULL_ID`]), complete and valid for the negotiated revision otherwise, so a
//! refusal can only be about the id. A refusal needs a JSON-RPC error object; an
//! acceptance needs a result, or a 2xx that treated the request as a notification (an
//! empty 2xx answer to a request is an acceptance, as in `revisions-pinned`). A bare
//! status without a JSON-RPC body is ERROR: a gateway produces exactly that. Sub-verdicts b
//! (colliding ids) and c (ids in the audit log) are out of a client's reach (the
//! reduction).
//!
//! The recommended refusal is HTTP 400 with -32600 (Invalid Request). The error's code
//! is read by the one refusal classifier ([`refusal::Class::of_code`]); a refusal with
//! another code is what the rule's `refusal_with_other_code` says (default: PASS with
//! the deviation named, since the benchmark text recommends the code rather than
//! requiring it). A status other than 400 is named, never failed.

use std::collections::BTreeMap;

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{BodyEnd, HttpOutcome, HttpResponse, Observation};
use mcp_probe_schema::vocab::{code, leg};
use serde::Serialize;
use serde_json::{json, Value};

use crate::check::{Check, Context, Legs, ParamSpec};
use crate::checks::common::refusal::{self, Class, Strictness};
use crate::checks::common::wire::{self, short, skipped_leg};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Non-null JSON-RPC request ids enforced.
#[derive(Debug)]
pub struct NullIdRejected;
/// The one graded leg.
const SUB_A: &str = "a";

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    crate::here!("b"),
    " (a request whose id collides with one still outstanding is refused) is \
     not testable over discrete HTTP requests; ",
    crate::here!("c"),
    " (the id appears on every audit entry) lives in the \
     server's audit log, which a client cannot read; neither is covered"
);

/// What a refusal of the null id with a code other than -32600 is (v1.0.0: PASS, the
/// deviation named).
const STRICTNESS: ParamSpec = refusal::param(Strictness::Pass);

/// The details of the outcome.
#[derive(Serialize)]
struct NullIdFacts {
    /// The leg's outcome, by leg id (a reference).
    legs: BTreeMap<String, SubOutcome>,
    /// The status the null-id request drew (null: no response, or not recorded).
    http_status: Option<u16>,
    /// The JSON-RPC error it drew, `code` and `message` as answered (null: none).
    jsonrpc_error: Option<Value>,
}

/// Sub-verdict a's verdict on one recorded exchange, with the facts the evidence names.
struct Judgement {
    outcome: SubOutcome,
    note: String,
    status: Option<u16>,
    error: Option<Value>,
    /// HTTP+SSE: the follow-up request whose answer the verdict rests on.
    followup: Option<u64>,
}

impl Judgement {
    fn new(outcome: SubOutcome, note: String, status: Option<u16>) -> Judgement {
        Judgement {
            outcome,
            note,
            status,
            error: None,
            followup: None,
        }
    }
}

/// Decide sub-verdict a from the recorded null-id exchange, step by step: the request must
/// carry `"id": null`; no response is ERROR; 401/403 never reached id validation; a
/// JSON-RPC error refuses (with another code than -32600: as `strictness` says); a
/// result, an empty 2xx or an answerless event stream accepts; anything else is a bare
/// status not attributed to the server.
fn judge(ev: &Bundle, x: &Exchange<'_>, strictness: Strictness) -> Judgement {
    if let Some(j) = not_a_null_id(x) {
        return j;
    }
    let resp = match &x.http.outcome {
        HttpOutcome::Response(r) => r,
        HttpOutcome::Error(e) => {
            return Judgement::new(
                SubOutcome::Error,
                crate::format_exact!(
                    "the null-id request drew no response ({e}): the observation was never made"
                ),
                None,
            )
        }
    };
    let status = resp.status;
    let status_label = x.status_label().unwrap_or_default();
    if status == 401 || status == 403 {
        return at_authentication(ev, &status_label, status);
    }
    // The answer's head (its error, whether its result is null, the length of the
    // result's `tools`): the answer is not built whole for it.
    let answer = x.with_answer_head(|h| h.cloned());
    if let Some(err) = answer
        .as_ref()
        .and_then(|a| a.error.as_ref())
        .filter(|e| e.object)
    {
        return refused(
            err.code.as_ref(),
            err.message.as_ref(),
            &status_label,
            status,
            strictness,
        );
    }
    if let Some(a) = answer.as_ref().filter(|a| a.result == Some(false)) {
        return accepted_with(a.result_array_len("tools"), &status_label, status);
    }
    let broken = match &resp.body.end {
        BodyEnd::Error(e) => Some(crate::format_exact!("the body broke off ({e})")),
        BodyEnd::LimitReached => Some("the body exceeded the read limit".to_string()),
        BodyEnd::HeadOnly => Some("the body was not read (head only)".to_string()),
        BodyEnd::Complete | BodyEnd::StoppedAfterResponse => None,
    };
    if (200..300).contains(&status) && broken.is_none() {
        // HTTP+SSE: the POST's 2xx is the transport's acknowledgement; a refusal would
        // have come on the event stream. A current collector follows the request with a
        // normal `tools/list` (as on stdio): when that was answered and nothing answered
        // the null id, the server dropped it silently.
        // The collector then ends the wait for the null id with a `timeout` record (what
        // an older collector wrote at --timeout, so an older grader reads UNKNOWN too);
        // a stream that ended instead (a reset) is not attributed to the server.
        if let Some(f) = answer
            .is_none()
            .then(|| sse_followup_answered(ev))
            .flatten()
            .filter(|_| {
                x.stream_error()
                    .is_none_or(|e| e.kind == mcp_probe_schema::model::ErrorKind::Timeout)
            })
        {
            let mut j = Judgement::new(
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{status_label}, the HTTP+SSE acknowledgement, and no answer to the null id on the event stream, \
                     while the tools/list sent after it (record #{f}) was answered: the server dropped it \
                     silently. The transport acknowledges every message so, as on stdio, a message dropped \
                     as invalid and a request taken for a notification look the same; neither a refusal nor \
                     an acceptance is observed (a JSON-RPC error answering the null id would have been the \
                     refusal){}",
                    sse_unkept_note(ev, x.seq())
                ),
                Some(status),
            );
            j.followup = Some(f);
            return j;
        }
        // Before the follow-up: no refusal came within the per-request timeout.
        if let Some(e) = x
            .stream_error()
            .filter(|e| e.kind == mcp_probe_schema::model::ErrorKind::Timeout)
        {
            return Judgement::new(
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{status_label}, the HTTP+SSE acknowledgement, and no refusal arrived on the event stream \
                     ({}): the transport acknowledges every message so, as on stdio, a message the server \
                     dropped as invalid and a request it took for a notification look the same; neither a \
                     refusal nor an acceptance is observed{}",
                    e.message,
                    sse_unkept_note(ev, x.seq())
                ),
                Some(status),
            );
        }
        let null_result = answer.is_some_and(|a| a.result.is_some());
        if let Some(j) = acknowledged(resp, null_result, &status_label) {
            return j;
        }
    }
    bare(resp, broken, &status_label)
}

/// HTTP+SSE: what the events counted past the bundle cap (`SseEvent.unkept`) from the
/// null-id request (record `from`) on mean for the silence read here; empty when none.
/// The first answer to each request is stored whatever the cap, so a refusal answering
/// the null id is never among them; a refusal under another id might be.
fn sse_unkept_note(ev: &Bundle, from: u64) -> String {
    let (events, mut records) = ev
        .sse_events()
        .filter(|(r, _)| r.seq > from)
        .filter_map(|(r, e)| e.unkept.as_ref().map(|u| (u.events, r.seq)))
        .fold((0u64, Vec::new()), |(n, mut v), (e, s)| {
            v.push(crate::format_exact!("#{s}"));
            (n + e, v)
        });
    if events == 0 {
        return String::new();
    }
    let more = records.len().saturating_sub(5);
    records.truncate(5);
    if more > 0 {
        records.push(crate::format_exact!("{more} more"));
    }
    crate::format_exact!(
        "; {events} stream event(s) read after the null-id request were counted, not stored (the bundle \
         cap was reached; records {}): a first answer to the null id is always stored, so none of them \
         answered it, but their contents are not seen",
        records.join(", ")
    )
}

/// HTTP+SSE: the seq of the follow-up `tools/list` (leg [`leg::NULL_ID_FOLLOWUP`]) when
/// the event stream carried its answer. `None` in a bundle from before the follow-up.
fn sse_followup_answered(ev: &Bundle) -> Option<u64> {
    if !ev.is_sse() {
        return None;
    }
    let f = wire::last(ev, leg::NULL_ID_FOLLOWUP)?.ok()?;
    let sent = f.request_id_sent()?;
    f.with_answer(|a| a.is_some_and(|a| a.get("id") == Some(&sent)))
        .then(|| f.seq())
}

/// ERROR when the recorded request does not carry `"id": null`: it tests nothing here.
fn not_a_null_id(x: &Exchange<'_>) -> Option<Judgement> {
    let sent_id = x.request_id_sent();
    if sent_id == Some(Value::Null) {
        return None;
    }
    let sent = sent_id.map_or_else(|| "no id".to_string(), |v| short(&v.to_string()));
    Some(Judgement::new(
        SubOutcome::Error,
        crate::format_exact!(
            "the recorded request carries {sent}, not \"id\": null, so it does not test this rule"
        ),
        None,
    ))
}

/// 401/403: refused before the id was looked at.
fn at_authentication(ev: &Bundle, status_label: &str, status: u16) -> Judgement {
    let held = if ev.authenticated() {
        "although it carried the run's credential (expired, retired or insufficient)"
    } else {
        "and the run held no credential"
    };
    Judgement::new(
        SubOutcome::Unknown,
        crate::format_exact!(
            "{status_label}: refused at authentication {held}, so the request never reached id validation"
        ),
        Some(status),
    )
}

/// A JSON-RPC error object (its `code` and `message` members): PASS, naming any
/// deviation from HTTP 400 with -32600; a code other than -32600 is what `strictness`
/// says.
fn refused(
    code_member: Option<&Value>,
    message_member: Option<&Value>,
    status_label: &str,
    status: u16,
    strictness: Strictness,
) -> Judgement {
    let code_v = code_member.and_then(Value::as_i64);
    let class = Class::of_code(code_v, &[code::INVALID_REQUEST]);
    let message = message_member.and_then(Value::as_str).unwrap_or("");
    let code_text = code_v.map_or_else(
        || "without an integer code".to_string(),
        |c| crate::format_exact!("code {c}"),
    );
    let refused = crate::format_exact!(
        "{status_label} with JSON-RPC error {code_text} \"{}\"",
        short(message)
    );
    let mut deviations = Vec::new();
    if status != 400 {
        deviations.push(crate::format_exact!("status {status} instead of 400"));
    }
    if class != Class::Required(code::INVALID_REQUEST) {
        deviations.push(crate::format_exact!(
            "{code_text} instead of {}",
            code::INVALID_REQUEST
        ));
    }
    let outcome = class.judged(strictness);
    let note = if deviations.is_empty() {
        crate::format_exact!("rejected as Invalid Request: {refused}, the recommended shape")
    } else if outcome == SubOutcome::Fail {
        crate::format_exact!(
            "rejected, but not as Invalid Request: {refused}; the rule requires {} (Invalid Request): {}",
            code::INVALID_REQUEST,
            deviations.join(", ")
        )
    } else {
        crate::format_exact!(
            "rejected: {refused}; a refusal is positive evidence, though it deviates from the recommended \
             HTTP 400 with {} (Invalid Request): {}",
            code::INVALID_REQUEST,
            deviations.join(", ")
        )
    };
    let mut j = Judgement::new(outcome, note, Some(status));
    j.error = Some(json!({"code": code_member.cloned().unwrap_or(Value::Null),
                          "message": message_member.cloned().unwrap_or(Value::Null)}));
    j
}

/// A non-null result (`tools`: the length of its `tools` member, when that is an
/// array): the null-id request was served.
fn accepted_with(tools: Option<usize>, status_label: &str, status: u16) -> Judgement {
    let what = match tools {
        Some(n) => crate::format_exact!(" listing {n} tool{}", if n == 1 { "" } else { "s" }),
        None => String::new(),
    };
    Judgement::new(
        SubOutcome::Fail,
        crate::format_exact!(
            "accepted: {status_label} answered the null-id request with a result{what} instead of rejecting it"
        ),
        Some(status),
    )
}

/// A whole 2xx body without an error: an empty body (the acknowledgement of a
/// notification), an event stream closed without an answer, or a null result all
/// accept the request. `None` when the body is none of these.
fn acknowledged(resp: &HttpResponse, null_result: bool, status_label: &str) -> Option<Judgement> {
    let status = resp.status;
    let note = if resp.body.length == 0 {
        crate::format_exact!(
            "accepted: {status_label} with an empty body, the acknowledgement of a notification; the server \
             treated a request it must reject as a notification"
        )
    } else if derive::media_type_is(&resp.headers, "text/event-stream") {
        crate::format_exact!(
            "accepted: {status_label} opened an event stream for the request and closed it with neither a \
             result nor an error"
        )
    } else if null_result {
        crate::format_exact!(
            "accepted: {status_label} answered with a JSON-RPC response carrying a null result"
        )
    } else {
        return None;
    };
    Some(Judgement::new(SubOutcome::Fail, note, Some(status)))
}

/// No JSON-RPC error or result: a bare status a gateway may have produced.
fn bare(resp: &HttpResponse, broken: Option<String>, status_label: &str) -> Judgement {
    let body = if resp.body.length == 0 {
        "an empty body".to_string()
    } else {
        crate::format_exact!(
            "a body that holds no JSON-RPC error object ({} bytes: \"{}\")",
            resp.body.length,
            short(&String::from_utf8_lossy(&resp.body.bytes))
        )
    };
    let broken = broken
        .map(|b| crate::format_exact!("; {b}"))
        .unwrap_or_default();
    Judgement::new(
        SubOutcome::Error,
        crate::format_exact!(
            "{status_label} with {body}{broken}: a bare status a gateway or proxy may have produced, so neither a \
             refusal nor an acceptance is attributed to the server"
        ),
        Some(resp.status),
    )
}

/// Sub-verdict a on stdio: the null-id request was written without waiting, then a
/// `tools/list` with a normal id (record `followup`). An answer to the null-id request is
/// a line, read in order up to the follow-up's answer, that responds to `"id": null`.
/// Nothing acknowledges a message on stdio, so silence while the follow-up is answered
/// is neither a refusal nor an acceptance: UNKNOWN, not FAIL.
fn judge_stdio(ev: &Bundle, null_seq: u64, followup: u64, strictness: Strictness) -> Judgement {
    let exchanges = || {
        ev.stdio_exchanges()
            .filter(|(r, _)| r.seq >= null_seq && r.seq <= followup)
            .map(|(_, x)| x)
    };
    // Lines counted past the run's share of --bundle-cap were not stored: an answer to
    // the null-id request may be among them, so silence is not observed.
    let unkept: u64 = exchanges()
        .filter_map(|x| x.unkept.as_ref())
        .map(|u| u.lines)
        .sum();
    let unkept_note = if unkept > 0 {
        crate::format_exact!(
            "; {unkept} stdout line(s) read meanwhile were counted, not stored (the run's share of --bundle-cap \
             for stdout lines was spent), so an answer among them is not seen"
        )
    } else {
        String::new()
    };
    let lines = exchanges().flat_map(|x| x.received.iter());
    let mut answered_followup = false;
    for l in lines {
        let Ok(msg) = serde_json::from_slice::<Value>(&l.bytes) else {
            continue;
        };
        let msgs = match msg {
            Value::Array(a) => a,
            m => vec![m],
        };
        for m in &msgs {
            let is_response = m.get("result").is_some() || m.get("error").is_some();
            if !is_response {
                continue;
            }
            if m.get("id") == Some(&Value::Null) {
                let status_label = "the server (stdio)";
                if let Some(err) = m.get("error").and_then(Value::as_object) {
                    let (code_m, message_m) = (err.get("code"), err.get("message"));
                    let mut j = refused(code_m, message_m, status_label, 0, strictness);
                    // No HTTP status on stdio: only the JSON-RPC code counts.
                    let c = err.get("code").and_then(Value::as_i64);
                    let code_text = c.map_or_else(
                        || "no integer code".into(),
                        |c| crate::format_exact!("code {c}"),
                    );
                    j.note = if c == Some(code::INVALID_REQUEST) {
                        crate::format_exact!("rejected as Invalid Request: {status_label} answered with JSON-RPC error {code_text}")
                    } else if j.outcome == SubOutcome::Fail {
                        crate::format_exact!(
                            "rejected, but not as Invalid Request: {status_label} answered with a JSON-RPC error \
                             ({code_text}); the rule requires {} (Invalid Request)",
                            code::INVALID_REQUEST
                        )
                    } else {
                        crate::format_exact!(
                            "rejected: {status_label} answered with a JSON-RPC error ({code_text}; the recommended \
                             code is {}); a refusal is positive evidence",
                            code::INVALID_REQUEST
                        )
                    };
                    j.status = None;
                    return j;
                }
                if let Some(result) = m.get("result").filter(|r| !r.is_null()) {
                    let tools = result.get("tools").and_then(Value::as_array).map(Vec::len);
                    let mut j = accepted_with(tools, status_label, 0);
                    j.status = None;
                    return j;
                }
            } else if m.get("id").is_some() {
                answered_followup = true;
            }
        }
    }
    if answered_followup {
        Judgement::new(
            SubOutcome::Unknown,
            crate::format_exact!(
                "no answer to the null-id request, while the tools/list written after it (record #{followup}) \
                 was answered: the server dropped it silently. Over stdio a message dropped as invalid and a \
                 request taken as a notification look the same, so neither a refusal nor an acceptance is \
                 observed (a JSON-RPC error response would have been the refusal){unkept_note}"
            ),
            None,
        )
    } else {
        Judgement::new(
            SubOutcome::Error,
            crate::format_exact!(
                "neither the null-id request nor the tools/list written after it (record #{followup}) was \
                 answered: the server did not answer at all, so the observation was never made{unkept_note}"
            ),
            None,
        )
    }
}

impl Check for NullIdRejected {
    fn id(&self) -> &'static str {
        "null-id-rejected"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "on HTTP+SSE (2024-11-05) the POST is acknowledged before the server reads it: a \
             refusal arrives as an event on the stream, and an acknowledged request that draws no \
             answer within --timeout shows no refusal",
        )
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        // The follow-up exists on stdio (written after the null-id request there) and, in
        // bundles of a current collector, on HTTP+SSE when the null-id request was
        // acknowledged without an answer.
        Legs::with_optional(&[leg::NULL_ID], &[leg::NULL_ID_FOLLOWUP])
    }

    fn params(&self) -> &'static [ParamSpec] {
        &[STRICTNESS]
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let strictness = Strictness::of(cx, &STRICTNESS);
        let mut seqs = ev.seqs(leg::NULL_ID);
        let followup = ev.seqs(leg::NULL_ID_FOLLOWUP);
        // One request is sent; should a record ever be repeated, the last one stands.
        let j = match wire::last(ev, leg::NULL_ID) {
            Some(Ok(x)) => {
                let stdio = matches!(x.record.observation, Observation::Stdio(_));
                let mut j = match followup.last() {
                    Some(&f) if stdio => {
                        seqs.push(f);
                        judge_stdio(ev, x.seq(), f, strictness)
                    }
                    _ => judge(ev, &x, strictness),
                };
                seqs.extend(j.followup);
                let rev = ev
                    .revision()
                    .map(escape_line)
                    .unwrap_or_else(|| "no revision".into());
                let auth = if ev.authenticated() {
                    "authenticated"
                } else {
                    "unauthenticated"
                };
                j.note = crate::format_exact!(
                    "tools/list with \"id\": null (record #{}, {rev}, {auth}): {}",
                    x.seq(),
                    j.note
                );
                j
            }
            Some(Err(reason)) => {
                let (outcome, note) = skipped_leg("the null-id request", &reason);
                Judgement::new(outcome, note, None)
            }
            None => Judgement::new(
                SubOutcome::Error,
                "the leg's records hold neither an HTTP exchange nor a skip".into(),
                None,
            ),
        };
        let facts = NullIdFacts {
            legs: BTreeMap::from([(crate::refs::here(SUB_A), j.outcome)]),
            http_status: j.status,
            jsonrpc_error: j.error,
        };
        Outcome::from_subs(vec![SubVerdict::new(SUB_A, j.outcome, j.note)], REDUCTION)
            .with_records(seqs)
            .with_facts(&facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::preconditions::run_rule;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{ErrorKind, Observation, Record, TransportError};
    use mcp_probe_schema::vocab::LegId;

    const NULL_REQ: &str = r#"{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}"#;

    fn graded(records: Vec<Record>) -> Outcome {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        );
        crate::fixture::local(run_rule(&NullIdRejected, &ev, &Context::default()))
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

    /// The null-id request answered so: the verdict, and words of the evidence.
    fn null_id_is(status: u16, ct: &str, body: &str, verdict: Verdict, words: &[&str]) -> Outcome {
        let o = null_id(status, ct, body);
        assert_eq!(o.verdict, verdict, "{o:?}");
        has(&o, words);
        o
    }

    #[test]
    fn on_http_sse_an_acknowledged_null_id_never_answered_is_unknown_and_a_refusal_passes() {
        use mcp_probe_schema::model::SseEvent;
        let event = |data: &str, error: Option<TransportError>| {
            let mut r = skipped(&[leg::NULL_ID], "");
            r.observation = Observation::SseEvent(SseEvent {
                stream: 0,
                request: Some(0),
                event: None,
                data: data.into(),
                data_length: None,
                id: None,
                retry: None,
                error,
                unkept: None,
            });
            r
        };
        let ack = || {
            exchange(
                &[leg::NULL_ID],
                NULL_REQ,
                202,
                "text/plain",
                "Accepted",
                &[],
            )
        };
        let timeout = TransportError {
            kind: ErrorKind::Timeout,
            message: "no awaited event on the stream within the per-request timeout (5 s)".into(),
        };
        let o = graded(vec![ack(), event("", Some(timeout))]);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "HTTP+SSE acknowledgement",
                "no refusal arrived on the event stream",
            ],
        );
        let refusal =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
        let o = graded(vec![ack(), event(refusal, None)]);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        // A stream that ended before any answer is not attributed to the server.
        let reset = TransportError {
            kind: ErrorKind::Reset,
            message: "the server ended the event stream".into(),
        };
        let o = graded(vec![ack(), event("", Some(reset))]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn on_http_sse_a_null_id_unanswered_while_the_followup_was_answered_is_unknown_at_once() {
        use crate::fixture::sse_evidence;
        use mcp_probe_schema::model::SseEvent;
        let event = |legs: &[LegId], request: u64, data: &str| {
            let mut r = skipped(legs, "");
            r.observation = Observation::SseEvent(SseEvent {
                stream: 0,
                request: Some(request),
                event: None,
                data: data.into(),
                data_length: None,
                id: None,
                retry: None,
                error: None,
                unkept: None,
            });
            r
        };
        let ack =
            |legs: &[LegId], body: &str| exchange(legs, body, 202, "text/plain", "Accepted", &[]);
        const FOLLOWUP: &str = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#;
        let listed = r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#;
        let graded = |records: Vec<Record>| {
            let ev = sse_evidence(
                Some(session(Some("2024-11-05"), json!({"tools": {}}), None)),
                records,
            );
            run_rule(&NullIdRejected, &ev, &Context::default())
        };
        // Records: 0 the null-id POST, 1 the follow-up POST, 2 the follow-up's answer.
        let o = graded(vec![
            ack(&[leg::NULL_ID], NULL_REQ),
            ack(&[leg::NULL_ID_FOLLOWUP], FOLLOWUP),
            event(&[leg::NULL_ID_FOLLOWUP], 1, listed),
        ]);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["dropped it", "silently", "record #1"]);
        assert_eq!(o.records, vec![0, 1]);
        // What a current collector writes: the wait for the null id ends, once the
        // follow-up is answered, in a `timeout` record naming the null-id POST (the
        // record an older collector wrote at --timeout, which an older grader reads as
        // UNKNOWN). The current grader's reading and evidence are the same.
        let mut ended = event(&[leg::NULL_ID], 0, "");
        if let Observation::SseEvent(e) = &mut ended.observation {
            e.error = Some(TransportError {
                kind: ErrorKind::Timeout,
                message: "no answer to this request on the event stream by the time the follow-up \
                          request (record #1) was answered: the wait ended there, not at the \
                          per-request timeout (30 s)"
                    .into(),
            });
        }
        let with_timeout = vec![
            ack(&[leg::NULL_ID], NULL_REQ),
            ack(&[leg::NULL_ID_FOLLOWUP], FOLLOWUP),
            event(&[leg::NULL_ID_FOLLOWUP], 1, listed),
            ended.clone(),
        ];
        let o = graded(with_timeout.clone());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["dropped it", "silently", "record #1"]);
        assert_eq!(o.records, vec![0, 1, 3]);
        assert!(!o.evidence.contains("counted"), "{o:?}");
        // Events counted past the bundle cap after the null-id request are named.
        let mut counted = event(&[leg::NULL_ID_FOLLOWUP], 1, "");
        if let Observation::SseEvent(e) = &mut counted.observation {
            e.data_length = Some(1200);
            e.unkept = Some(mcp_probe_schema::model::SseUnkept {
                events: 10,
                bytes: 1200,
                jsonrpc: 10,
                ..Default::default()
            });
        }
        let mut records = with_timeout;
        records.insert(2, counted);
        let o = graded(records);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "silently",
                "10 stream event(s)",
                "counted, not stored",
                "#2",
            ],
        );
        // The follow-up's answer is read although counted events name its POST.
        assert!(!o.evidence.contains("cut"), "{o:?}");
        // A stream that ended (not a timeout) still reads by its stream record.
        if let Observation::SseEvent(e) = &mut ended.observation {
            e.error = Some(TransportError {
                kind: ErrorKind::Reset,
                message: "the server ended the event stream".into(),
            });
        }
        let o = graded(vec![
            ack(&[leg::NULL_ID], NULL_REQ),
            ack(&[leg::NULL_ID_FOLLOWUP], FOLLOWUP),
            event(&[leg::NULL_ID_FOLLOWUP], 1, listed),
            ended,
        ]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        // A refusal of the null id still passes, before or after the follow-up's answer.
        let refusal =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
        for late in [false, true] {
            let mut records = vec![
                ack(&[leg::NULL_ID], NULL_REQ),
                ack(&[leg::NULL_ID_FOLLOWUP], FOLLOWUP),
                event(&[leg::NULL_ID_FOLLOWUP], 1, listed),
            ];
            records.insert(if late { 3 } else { 1 }, event(&[leg::NULL_ID], 0, refusal));
            let o = graded(records);
            assert_eq!(o.verdict, Verdict::Pass, "late {late}: {o:?}");
        }
        // A follow-up that drew no answer proves nothing: as in an older bundle, the
        // null-id request without an answer then reads by its stream record.
        let o = graded(vec![
            ack(&[leg::NULL_ID], NULL_REQ),
            ack(&[leg::NULL_ID_FOLLOWUP], FOLLOWUP),
        ]);
        assert_ne!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(!o.evidence.contains("silently"), "{o:?}");
    }

    fn has(o: &Outcome, words: &[&str]) {
        for w in words {
            assert!(o.evidence.contains(w), "{w:?} not in {:?}", o.evidence);
        }
    }

    #[test]
    fn accepted_as_notification_fails() {
        let o = null_id_is(
            202,
            "application/json",
            "",
            Verdict::Fail,
            &["HTTP 202", "empty body", "notification"],
        );
        assert_eq!(o.details["http_status"], 202);
        assert!(o.details["jsonrpc_error"].is_null());
        assert_eq!(o.records, vec![0]);
        assert!(
            o.reduction.starts_with("b (a request whose id collides")
                && o.reduction
                    .contains("; c (the id appears on every audit entry)"),
            "{}",
            o.reduction
        );
    }

    #[test]
    fn answered_with_a_result_fails() {
        null_id_is(
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"result":{"tools":[{"name":"a"}]}}"#,
            Verdict::Fail,
            &["accepted", "HTTP 200", "result listing 1 tool"],
        );
    }

    #[test]
    fn invalid_request_400_passes() {
        let o = null_id_is(
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must not be null"}}"#,
            Verdict::Pass,
            &[
                "HTTP 400 (application/json)",
                "code -32600",
                "id must not be null",
                "recommended shape",
            ],
        );
        assert_eq!(o.details["jsonrpc_error"]["code"], -32600);
        assert_eq!(o.details["http_status"], 400);
        assert_eq!(o.details["legs"][SUB_A], "pass");
    }

    #[test]
    fn error_event_in_a_stream_passes() {
        let body = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bad id\"}}\n\n";
        null_id_is(
            400,
            "text/event-stream",
            body,
            Verdict::Pass,
            &["HTTP 400 (text/event-stream)", "code -32600", "bad id"],
        );
    }

    #[test]
    fn other_refusal_passes_naming_the_deviation() {
        null_id_is(
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"nope"}}"#,
            Verdict::Pass,
            &["status 200 instead of 400", "code -32602 instead of -32600"],
        );
    }

    #[test]
    fn a_strict_definition_fails_a_refusal_with_another_code() {
        let strict = crate::check::Params(
            [(STRICTNESS.name, crate::check::ParamValue::Text("fail"))].into(),
        );
        let cx = Context {
            params: &strict,
            ..Default::default()
        };
        let judged = |status: u16, code: i64| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":"nope"}}}}"#
            );
            let ev = evidence(
                Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
                vec![exchange(
                    &[leg::NULL_ID],
                    NULL_REQ,
                    status,
                    "application/json",
                    &body,
                    &[],
                )],
            );
            crate::fixture::local(run_rule(&NullIdRejected, &ev, &cx))
        };
        let o = judged(400, -32700);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            &["not as Invalid Request", "code -32700 instead of -32600"],
        );
        // The status stays a named deviation: only the code is the strictness's.
        let o = judged(200, -32600);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(&o, &["status 200 instead of 400"]);
    }

    #[test]
    fn bare_400_is_error() {
        let o = null_id_is(
            400,
            "application/json",
            "",
            Verdict::Error,
            &["HTTP 400", "empty body", "gateway"],
        );
        assert_eq!(o.details["http_status"], 400);
    }

    #[test]
    fn gateway_502_html_is_error() {
        null_id_is(
            502,
            "text/html",
            "<html><body>Bad Gateway</body></html>",
            Verdict::Error,
            &["HTTP 502 (text/html)", "Bad Gateway", "gateway"],
        );
    }

    #[test]
    fn html_200_is_not_attributed() {
        let o = null_id(200, "text/html", "<html>login</html>");
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn stream_closed_without_answer_fails() {
        null_id_is(
            200,
            "text/event-stream",
            ": keep-alive\n\n",
            Verdict::Fail,
            &["event stream", "neither a result nor an error"],
        );
    }

    #[test]
    fn unauthorized_is_unknown() {
        null_id_is(
            401,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#,
            Verdict::Unknown,
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
}
