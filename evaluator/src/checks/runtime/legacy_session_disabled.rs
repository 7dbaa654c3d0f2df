//! Rule `legacy-session-disabled`: legacy Streamable HTTP session and stream resumption
//! disabled.
//!
//! 2026-07-28 only: on an older negotiated revision the check is NO-REV (sessions and
//! resumption are the legacy transport itself; the collector sends no probe and records
//! the legs as skipped, which the NO-REV outcome cites). On 2026-07-28 every leg is
//! required: a bundle lacking one is ERROR naming it.
//!
//! * a/b: a standalone `GET` (`Accept: text/event-stream`) and a `DELETE` without a
//!   session id must be refused, 405 preferred. A refusal, whoever produced it, keeps the
//!   legacy surface unreachable at this endpoint, so any other 4xx passes naming the
//!   deviation; a 2xx exposes the surface; a 401/403 never reached method handling.
//! * c: a complete `tools/list`, then the same with `Last-Event-ID: 1`: the header
//!   must be ignored. Near-vacuous: resumption replays a broken stream, and a POST answer
//!   shows only that the header does not derail the request.
//! * d: a complete `tools/list`, then the same with a client-supplied
//!   `Mcp-Session-Id`: no response of the check may carry `Mcp-Session-Id` (minted or
//!   echoed; read from the recorded response headers), and the supplied id must be
//!   ignored.
//!
//! In c and d only the header differs from the control, so a JSON-RPC error (or an answer
//! without a response) on the second request after a tools result on the control is
//! attributed to the header: FAIL. A bare status there is ERROR.

use std::collections::BTreeMap;

use mcp_probe_schema::vocab::{header, leg, LegId, REV_2026_07_28};
use serde::Serialize;

use crate::check::{Check, Context, Legs};
use crate::checks::common::wire::{self, read, skipped_leg, Answer, Reply};
use crate::evidence::{Bundle, Exchange};
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Legacy Streamable HTTP session and stream resumption disabled.
#[derive(Debug)]
pub struct LegacySessionDisabled;
/// The id the collector supplies in sub-verdict d.
pub use mcp_probe_schema::vocab::probe::SUPPLIED_SESSION_ID;

const LEGS: [LegId; 6] = mcp_probe_schema::vocab::family::LEGACY_SURFACE;

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "Not probed: whether a streamed response is scoped to its originating request \
     (needs a second identity). ",
    crate::here!("c"),
    " is near-vacuous: Last-Event-ID governs the replay of a broken stream, and a \
     POST answer shows only that the header does not derail the request. GET and DELETE are sent without a session \
     id (a live id would end a session)."
);

/// The details of a graded outcome.
#[derive(Serialize)]
struct SessionFacts {
    /// Each leg's outcome, by leg id (a .. d, in order, as references).
    legs: BTreeMap<String, SubOutcome>,
    /// The status the GET and the DELETE drew, by collector leg (null: no response).
    http_status: BTreeMap<String, Option<u16>>,
    /// Some response of the check carried `Mcp-Session-Id`.
    session_id_returned: bool,
}

/// The recorded exchange of `leg`, or the leg outcome and note when there is none.
fn exchange_of<'a>(
    ev: &'a Bundle,
    l: LegId,
    what: &str,
) -> Result<Exchange<'a>, (SubOutcome, String)> {
    match wire::last(ev, l) {
        Some(Ok(x)) => Ok(x),
        Some(Err(reason)) => Err(skipped_leg(what, &reason)),
        None => Err((
            SubOutcome::Error,
            crate::format_exact!(
                "{what}: the leg's records hold neither an HTTP exchange nor a skip"
            ),
        )),
    }
}

/// Sub-verdicts a/b: the status of a standalone GET or DELETE decides.
fn surface(a: &Answer, what: &str, authenticated: bool) -> (SubOutcome, String) {
    let said = a.summary();
    let Some(status) = a.status else {
        return (
            SubOutcome::Error,
            crate::format_exact!("{what}: {said}: the answer was never observed"),
        );
    };
    let (o, why) = match status {
        405 => (
            SubOutcome::Pass,
            "refused with 405, the recommended answer".to_string(),
        ),
        200..=299 => (
            SubOutcome::Fail,
            if what.starts_with("GET") {
                "served: the legacy standalone event stream is exposed".to_string()
            } else {
                "accepted: the legacy session-termination surface is exposed".to_string()
            },
        ),
        401 | 403 => (
            SubOutcome::Unknown,
            crate::format_exact!(
                "refused at authentication {}, so method handling was never reached",
                if authenticated {
                    "although it carried the run's credential"
                } else {
                    "and the run held no credential"
                }
            ),
        ),
        300..=399 => (
            SubOutcome::Unknown,
            "a redirect (not followed) is not the endpoint's answer".to_string(),
        ),
        400..=499 => {
            let by = if a.error().is_some() {
                "a JSON-RPC refusal"
            } else {
                "a bare refusal (no JSON-RPC body: an intermediary may have answered, which keeps the surface \
                 unreachable at this endpoint all the same)"
            };
            (
                SubOutcome::Pass,
                crate::format_exact!("{by}, a deviation from the recommended 405"),
            )
        }
        500.. => (
            SubOutcome::Error,
            "a server error is neither a refusal nor an acceptance".to_string(),
        ),
        _ => (
            SubOutcome::Unknown,
            "an informational status decides nothing".to_string(),
        ),
    };
    (
        o,
        crate::format_exact!("{what} (record #{}): {said}: {why}", a.seq),
    )
}

/// The control of c or d: `Ok` when it is a tools result.
fn control<'a>(
    ev: &'a Bundle,
    l: LegId,
    seqs: &mut Vec<u64>,
) -> Result<Answer<'a>, (SubOutcome, String)> {
    let x =
        exchange_of(ev, l, "the control tools/list").inspect_err(|_| seqs.extend(ev.seqs(l)))?;
    let a = read(&x);
    seqs.push(a.seq);
    if a.tools().is_some() {
        return Ok(a);
    }
    let o = match a.reply {
        Reply::NoResponse(_) => SubOutcome::Error,
        _ => SubOutcome::Unknown,
    };
    Err((
        o,
        crate::format_exact!(
            "the control tools/list (record #{}) answered {}, not a tools result, so there is nothing to compare \
             with",
            a.seq,
            a.summary()
        ),
    ))
}

/// The second request of c or d, after a control that returned a tools result: only
/// `header` differs, so a changed answer is the header's doing.
fn variant(a: &Answer, control_seq: u64, what: &str, authenticated: bool) -> (SubOutcome, String) {
    let said = a.summary();
    // Written into the note that names them, with no string of their own.
    let head = crate::fmt::lazy(|f| write!(f, "{what} (record #{}) answered {said}", a.seq));
    let base =
        crate::fmt::lazy(|f| write!(f, "the control (record #{control_seq}) got a tools result"));
    match &a.reply {
        Reply::Result(_) if a.tools().is_some() => (
            SubOutcome::Pass,
            crate::format_exact!("{head}, like the control: the header was ignored"),
        ),
        _ if matches!(a.status, Some(401 | 403)) => (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{head}: refused at authentication {}; {base}, but a credential change between the two cannot be \
                 excluded",
                if authenticated {
                    "although it carried the run's credential"
                } else {
                    "and the run held no credential"
                }
            ),
        ),
        Reply::Error(_) | Reply::Empty | Reply::StreamWithoutAnswer => (
            SubOutcome::Fail,
            crate::format_exact!("{head}: {base} and only the header differs, so the header was acted on instead of ignored"),
        ),
        Reply::Result(_) => (
            SubOutcome::Unknown,
            crate::format_exact!("{head}: a result that is not a tools result ({base}) decides nothing"),
        ),
        Reply::NoResponse(_) => (
            SubOutcome::Error,
            crate::format_exact!("{what}: {said}: the answer was never observed"),
        ),
        Reply::Bare(_) => (
            SubOutcome::Error,
            crate::format_exact!(
                "{head}: a bare status a gateway or proxy may have produced; the change is not attributed to the \
                 server"
            ),
        ),
    }
}

/// Sub-verdict c: Last-Event-ID ignored.
fn sub_c(ev: &Bundle, seqs: &mut Vec<u64>) -> SubVerdict {
    let what = "tools/list with Last-Event-ID: 1";
    let (o, note) = match control(ev, leg::RESUME_CONTROL, seqs) {
        Err(e) => e,
        Ok(c) => match exchange_of(ev, leg::RESUME_LAST_EVENT_ID, what) {
            Err(e) => {
                seqs.extend(ev.seqs(leg::RESUME_LAST_EVENT_ID));
                e
            }
            Ok(x) => {
                let a = read(&x);
                seqs.push(a.seq);
                let (o, n) = variant(&a, c.seq, what, ev.authenticated());
                if o == SubOutcome::Pass {
                    (
                        o,
                        crate::format_exact!(
                            "{n} (near-vacuous: resumption replays a broken stream; this shows only that the \
                             header does not derail a request)"
                        ),
                    )
                } else {
                    (o, n)
                }
            }
        },
    };
    SubVerdict::new("c", o, note)
}

/// Every `Mcp-Session-Id` a response of this check carried: (what, record, minted or
/// echoed).
fn session_ids(ev: &Bundle) -> Vec<String> {
    // How each leg is named: constant text (a control by its reference, as
    // `refs::here` writes it), with no string made for a leg without a session id.
    let names: [(LegId, &str); 6] = [
        (leg::LEGACY_GET, "the GET"),
        (leg::LEGACY_DELETE, "the DELETE"),
        (
            leg::RESUME_CONTROL,
            concat!("the ", crate::here!("c"), " control"),
        ),
        (leg::RESUME_LAST_EVENT_ID, "the Last-Event-ID request"),
        (
            leg::SESSION_CONTROL,
            concat!("the ", crate::here!("d"), " control"),
        ),
        (leg::SESSION_SUPPLIED, "the request supplying an id"),
    ];
    let mut out = Vec::new();
    for (l, what) in names {
        for x in ev.exchanges(l) {
            let Some(resp) = x.response() else { continue };
            for h in resp
                .headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case(header::SESSION_ID))
            {
                let kind = if h.value_str().trim() == SUPPLIED_SESSION_ID {
                    "echoed the supplied id"
                } else {
                    "minted a session id"
                };
                out.push(crate::format_exact!(
                    "{what} (record #{}, HTTP {}) {kind}",
                    x.seq(),
                    resp.status
                ));
            }
        }
    }
    out
}

/// Sub-verdict d: no session id minted or echoed; a supplied one ignored.
fn sub_d(ev: &Bundle, seqs: &mut Vec<u64>) -> SubVerdict {
    let what = crate::format_exact!("tools/list with Mcp-Session-Id: {SUPPLIED_SESSION_ID}");
    let found = session_ids(ev);
    if !found.is_empty() {
        for l in LEGS {
            seqs.extend(
                ev.exchanges(l)
                    .filter(|x| x.header(header::SESSION_ID).is_some())
                    .map(|x| x.seq()),
            );
        }
        seqs.extend(ev.seqs(leg::SESSION_CONTROL));
        seqs.extend(ev.seqs(leg::SESSION_SUPPLIED));
        return SubVerdict::new(
            "d",
            SubOutcome::Fail,
            crate::format_exact!(
                "an Mcp-Session-Id response header: {} (read from the recorded response headers); a \
                 {REV_2026_07_28} server should ignore the header and neither mint nor echo one",
                found.join("; ")
            ),
        );
    }
    let (o, note) = match control(ev, leg::SESSION_CONTROL, seqs) {
        Err(e) => e,
        Ok(c) => match exchange_of(ev, leg::SESSION_SUPPLIED, &what) {
            Err(e) => {
                seqs.extend(ev.seqs(leg::SESSION_SUPPLIED));
                e
            }
            Ok(x) => {
                let a = read(&x);
                seqs.push(a.seq);
                let (o, n) = variant(&a, c.seq, &what, ev.authenticated());
                if o == SubOutcome::Pass {
                    (
                        o,
                        crate::format_exact!(
                            "{n}; no response of this check carries Mcp-Session-Id"
                        ),
                    )
                } else {
                    (o, n)
                }
            }
        },
    };
    SubVerdict::new("d", o, note)
}

impl Check for LegacySessionDisabled {
    fn id(&self) -> &'static str {
        "legacy-session-disabled"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "HTTP+SSE (2024-11-05) has no Mcp-Session-Id, standalone GET or resumption: its \
             session is the event stream and the session parameter of its message URL",
        )
    }

    /// Required on 2026-07-28; below it NO-REV comes first and needs no leg, so the
    /// legs (recorded as skipped by a current collector) are only cited when present.
    fn legs(&self, era: Option<Era>) -> Legs {
        wire::modern_only(era, &LEGS)
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        if !ev.is_modern() {
            return wire::no_rev(
                ev,
                &LEGS,
                &crate::format_exact!(
                    "valid only for {REV_2026_07_28}: below it sessions and stream resumption are the transport \
                     itself"
                ),
                REDUCTION,
            );
        }
        let auth = ev.authenticated();
        let mut seqs = Vec::new();
        let mut statuses = BTreeMap::new();
        let mut legs = Vec::new();
        for (id, l, what) in [
            ("a", leg::LEGACY_GET, "GET with Accept: text/event-stream"),
            ("b", leg::LEGACY_DELETE, "DELETE without a session id"),
        ] {
            let (o, note) = match exchange_of(ev, l, what) {
                Err(e) => {
                    seqs.extend(ev.seqs(l));
                    e
                }
                Ok(x) => {
                    let a = read(&x);
                    seqs.push(a.seq);
                    statuses.insert(l.to_string(), a.status);
                    surface(&a, what, auth)
                }
            };
            legs.push(SubVerdict::new(id, o, note));
        }
        legs.push(sub_c(ev, &mut seqs));
        legs.push(sub_d(ev, &mut seqs));
        let facts = SessionFacts {
            legs: legs
                .iter()
                .map(|l| (crate::refs::here(&l.id), l.outcome))
                .collect(),
            http_status: statuses,
            session_id_returned: !session_ids(ev).is_empty(),
        };
        Outcome::from_subs(legs, REDUCTION)
            .with_records(seqs)
            .with_facts(&facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::wire::testing::{JSON, META};
    use crate::fixture::assert_sub as has;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::preconditions::run_rule;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{
        BodyEnd, ErrorKind, HttpOutcome, Observation, Record, TransportError,
    };
    use serde_json::json;

    /// A GET or DELETE of the endpoint; `head_only`: the event stream was not read.
    fn bare_method(
        l: LegId,
        method: &str,
        status: u16,
        ct: &str,
        body: &str,
        headers: &[(&str, &str)],
        head_only: bool,
    ) -> Record {
        let mut r = exchange(&[l], "", status, ct, body, headers);
        if let Observation::Http(x) = &mut r.observation {
            x.request.method = method.to_string().into();
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                if head_only {
                    resp.body.bytes.clear();
                    resp.body.length = 0;
                    resp.body.end = BodyEnd::HeadOnly;
                }
            }
        }
        r
    }

    fn get(status: u16, ct: &str, body: &str) -> Record {
        bare_method(leg::LEGACY_GET, "GET", status, ct, body, &[], false)
    }

    fn delete(status: u16, ct: &str, body: &str) -> Record {
        bare_method(leg::LEGACY_DELETE, "DELETE", status, ct, body, &[], false)
    }

    fn list(
        l: LegId,
        id: i64,
        status: u16,
        ct: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Record {
        let req =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{META}}}}}"#);
        exchange(&[l], &req, status, ct, body, headers)
    }

    /// The Last-Event-ID request of sub-verdict c, answered.
    fn resumed(status: u16, ct: &str, body: &str) -> Record {
        list(leg::RESUME_LAST_EVENT_ID, 2, status, ct, body, &[])
    }

    /// The request of sub-verdict d supplying a session id, answered.
    fn supplied(status: u16, ct: &str, body: &str) -> Record {
        list(leg::SESSION_SUPPLIED, 4, status, ct, body, &[])
    }

    fn tools(l: LegId, id: i64) -> Record {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "add"}]}}).to_string();
        list(l, id, 200, JSON, &body, &[])
    }

    fn err(id: i64, code: i64, message: &str) -> String {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
    }

    /// A 2026-07-28 bundle as the py2 lab server answers (GET → 405 `allow: POST`, empty
    /// body; the modern path never sets Mcp-Session-Id and ignores Last-Event-ID).
    struct B {
        a: Record,
        b: Record,
        c1: Record,
        c2: Record,
        d1: Record,
        d2: Record,
    }

    impl B {
        fn py2() -> B {
            B {
                a: bare_method(
                    leg::LEGACY_GET,
                    "GET",
                    405,
                    "text/plain",
                    "",
                    &[("allow", "POST")],
                    false,
                ),
                b: bare_method(
                    leg::LEGACY_DELETE,
                    "DELETE",
                    405,
                    "text/plain",
                    "",
                    &[("allow", "POST")],
                    false,
                ),
                c1: tools(leg::RESUME_CONTROL, 1),
                c2: tools(leg::RESUME_LAST_EVENT_ID, 2),
                d1: tools(leg::SESSION_CONTROL, 3),
                d2: tools(leg::SESSION_SUPPLIED, 4),
            }
        }

        /// Grade, asserting the verdict and the outcome and words of leg `id`.
        fn expect(self, verdict: Verdict, id: &str, leg: SubOutcome, words: &[&str]) -> Outcome {
            let o = self.grade();
            assert_eq!(o.verdict, verdict, "{o:?}");
            has(&o, id, leg, words);
            o
        }

        fn grade(self) -> Outcome {
            let records = vec![self.a, self.b, self.c1, self.c2, self.d1, self.d2];
            graded(REV_2026_07_28, records)
        }
    }

    fn graded(rev: &str, records: Vec<Record>) -> Outcome {
        let ev = evidence(
            Some(session(Some(rev), json!({"tools": {}}), None)),
            records,
        );
        crate::fixture::local(run_rule(&LegacySessionDisabled, &ev, &Context::default()))
    }

    #[test]
    fn lab_py2_passes() {
        let o = B::py2().grade();
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "a",
            SubOutcome::Pass,
            &["GET", "record #0", "HTTP 405", "recommended answer"],
        );
        has(&o, "b", SubOutcome::Pass, &["DELETE", "405"]);
        has(
            &o,
            "c",
            SubOutcome::Pass,
            &["Last-Event-ID", "like the control", "near-vacuous"],
        );
        has(
            &o,
            "d",
            SubOutcome::Pass,
            &[
                "cis-audit-supplied-000",
                "ignored",
                "no response of this check carries Mcp-Session-Id",
            ],
        );
        assert_eq!(o.details["legs"]["c"], "pass");
        assert_eq!(o.details["http_status"][leg::LEGACY_GET.as_str()], 405);
        assert_eq!(o.details["session_id_returned"], false);
        assert_eq!(o.records, vec![0, 1, 2, 3, 4, 5]);
        assert!(o.reduction.contains("second identity"));
    }

    /// The ts2 lab server: GET and DELETE → 405 with a JSON-RPC -32000 body.
    #[test]
    fn lab_ts2_json_405_passes() {
        let mut b = B::py2();
        let body = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method not allowed."},"id":null}"#;
        b.a = get(405, JSON, body);
        b.b = delete(405, JSON, body);
        b.expect(
            Verdict::Pass,
            "a",
            SubOutcome::Pass,
            &["-32000", "Method not allowed."],
        );
    }

    #[test]
    fn legacy_is_no_rev() {
        let skips = LEGS
            .iter()
            .map(|l| skipped(&[l], "not sent: 2026-07-28 only"))
            .collect();
        for records in [skips, Vec::new()] {
            let o = graded("2025-11-25", records);
            assert_eq!(o.verdict, Verdict::NoRev, "{o:?}");
            assert!(
                o.evidence.contains("negotiated 2025-11-25")
                    && o.evidence.contains("no probe sent"),
                "{o:?}"
            );
            assert_eq!(o.details["negotiated_revision"], "2025-11-25");
        }
    }

    #[test]
    fn modern_bundle_without_the_legs_is_error() {
        let o = graded(REV_2026_07_28, vec![get(405, "text/plain", "")]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        assert!(
            o.evidence.contains(leg::SESSION_SUPPLIED.as_str()) && o.evidence.contains("missing"),
            "{o:?}"
        );
    }

    #[test]
    fn open_stream_or_accepted_delete_fails() {
        let mut b = B::py2();
        b.a = bare_method(
            leg::LEGACY_GET,
            "GET",
            200,
            "text/event-stream",
            "",
            &[],
            true,
        );
        b.expect(
            Verdict::Fail,
            "a",
            SubOutcome::Fail,
            &[
                "HTTP 200 (text/event-stream)",
                "head only",
                "standalone event stream is exposed",
            ],
        );
        let mut b = B::py2();
        b.b = delete(200, JSON, "");
        has(
            &b.grade(),
            "b",
            SubOutcome::Fail,
            &["session-termination surface is exposed"],
        );
    }

    #[test]
    fn other_refusals_pass_naming_the_deviation() {
        let mut b = B::py2();
        b.a = get(
            400,
            JSON,
            &err(1, -32600, "Bad Request: Missing session ID"),
        );
        b.b = delete(404, "text/plain", "Not Found");
        let o = b.expect(
            Verdict::Pass,
            "a",
            SubOutcome::Pass,
            &["a JSON-RPC refusal", "deviation from the recommended 405"],
        );
        has(
            &o,
            "b",
            SubOutcome::Pass,
            &["HTTP 404", "bare refusal", "intermediary"],
        );
    }

    #[test]
    fn auth_redirect_server_error_and_no_response() {
        let mut b = B::py2();
        b.a = get(401, JSON, "");
        has(
            &b.grade(),
            "a",
            SubOutcome::Unknown,
            &["refused at authentication"],
        );
        let mut b = B::py2();
        b.a = get(302, "text/html", "");
        has(&b.grade(), "a", SubOutcome::Unknown, &["redirect"]);
        let mut b = B::py2();
        b.b = delete(503, "text/html", "<html>down</html>");
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, "b", SubOutcome::Error, &["server error"]);
        let mut b = B::py2();
        if let Observation::Http(x) = &mut b.a.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Reset,
                message: "reset".into(),
            });
        }
        has(
            &b.grade(),
            "a",
            SubOutcome::Error,
            &["no response (reset", "never observed"],
        );
    }

    #[test]
    fn resumption_acted_on_fails() {
        let mut b = B::py2();
        b.c2 = resumed(200, "text/event-stream", ": replay\n\n");
        b.expect(
            Verdict::Fail,
            "c",
            SubOutcome::Fail,
            &[
                "event stream",
                "control (record #2) got a tools result",
                "acted on",
            ],
        );
        let mut b = B::py2();
        b.c2 = resumed(400, JSON, &err(2, -32600, "No stream to resume"));
        has(&b.grade(), "c", SubOutcome::Fail, &["-32600", "acted on"]);
    }

    #[test]
    fn resumption_bare_answer_is_error_and_bad_control_unknown() {
        let mut b = B::py2();
        b.c2 = resumed(502, "text/html", "<html>Bad Gateway</html>");
        b.expect(
            Verdict::Error,
            "c",
            SubOutcome::Error,
            &["HTTP 502", "not attributed"],
        );
        let mut b = B::py2();
        b.c1 = list(
            leg::RESUME_CONTROL,
            1,
            400,
            JSON,
            &err(1, -32602, "params._meta must be an object"),
            &[],
        );
        b.expect(
            Verdict::Unknown,
            "c",
            SubOutcome::Unknown,
            &[
                "control tools/list (record #2)",
                "not a tools result",
                "-32602",
            ],
        );
    }

    #[test]
    fn session_id_minted_or_echoed_fails() {
        let mut b = B::py2();
        let body = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}).to_string();
        b.d1 = list(
            leg::SESSION_CONTROL,
            3,
            200,
            JSON,
            &body,
            &[("mcp-session-id", "2b34f0")],
        );
        let o = b.expect(
            Verdict::Fail,
            "d",
            SubOutcome::Fail,
            &[
                "the d control (record #4, HTTP 200) minted a session id",
                "recorded response headers",
            ],
        );
        assert_eq!(o.details["session_id_returned"], true);
        assert!(o.records.contains(&4));
        let mut b = B::py2();
        let body = json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}).to_string();
        b.d2 = list(
            leg::SESSION_SUPPLIED,
            4,
            200,
            JSON,
            &body,
            &[("Mcp-Session-Id", SUPPLIED_SESSION_ID)],
        );
        has(
            &b.grade(),
            "d",
            SubOutcome::Fail,
            &["echoed the supplied id"],
        );
        // Stateful Python servers mint an id even on error responses; any response of the
        // check counts.
        let mut b = B::py2();
        b.a = bare_method(
            leg::LEGACY_GET,
            "GET",
            405,
            "text/plain",
            "",
            &[("mcp-session-id", "9f1c")],
            false,
        );
        let o = b.grade();
        has(&o, "a", SubOutcome::Pass, &[]);
        has(
            &o,
            "d",
            SubOutcome::Fail,
            &["the GET (record #0, HTTP 405) minted"],
        );
        assert!(o.records.contains(&0));
    }

    #[test]
    fn supplied_session_id_acted_on_fails_and_bare_is_error() {
        let mut b = B::py2();
        b.d2 = supplied(404, JSON, &err(4, -32001, "Session not found"));
        b.expect(
            Verdict::Fail,
            "d",
            SubOutcome::Fail,
            &["HTTP 404", "-32001", "Session not found", "acted on"],
        );
        let mut b = B::py2();
        b.d2 = supplied(400, "text/plain", "Bad Request");
        has(&b.grade(), "d", SubOutcome::Error, &["bare status"]);
        let mut b = B::py2();
        b.d1 = list(leg::SESSION_CONTROL, 3, 500, "text/plain", "oops", &[]);
        has(
            &b.grade(),
            "d",
            SubOutcome::Unknown,
            &["not a tools result"],
        );
    }

    #[test]
    fn skipped_probes() {
        let records = LEGS
            .iter()
            .map(|l| skipped(&[l], "not sent: --info run"))
            .collect();
        let o = graded(REV_2026_07_28, records);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        for id in ["a", "b", "c", "d"] {
            has(&o, id, SubOutcome::Unknown, &["--info"]);
        }
        let mut b = B::py2();
        b.c2 = skipped(&[leg::RESUME_LAST_EVENT_ID], "not sent: interrupted");
        has(&b.grade(), "c", SubOutcome::Error, &["never made"]);
    }
}
