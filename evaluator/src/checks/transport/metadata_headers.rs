//! Rule `metadata-headers`: request metadata headers present and consistent with the
//! body. docs/checks.md states the rules under the row this rule grades.
//!
//! 2026-07-28 only: on an older negotiated revision the check is NO-REV before any leg is
//! read (the routing headers do not exist there; the collector records the probes as
//! skipped). On 2026-07-28 four complete requests each miss or falsify one routing header:
//! `tools/list` without `Mcp-Method`, and a `tools/call` of a tool that cannot exist
//! (`cis-audit-no-such-tool`, so an acceptance executes nothing) without `Mcp-Name`, with a
//! different plain `Mcp-Name`, and with a different Base64-encoded one. The required
//! answer is HTTP 400 with -32020 (HeaderMismatch).
//!
//! Reading a refusal that is not -32020 (see `judge`): the probes' bodies are valid apart
//! from the tool name, so a `tools/call` answered -32602 ("unknown tool") was looked up by
//! name. Inside a 2xx that is the dispatcher's answer to a request the transport accepted:
//! the header did not stop it (FAIL). At HTTP 400 it is a refusal of the body, and the spec
//! does not order body validation before or after header validation, so whether the
//! header is enforced at all is not shown (UNKNOWN) unless the message names the header
//! under test, which makes the refusal a header decision with the wrong code (PASS,
//! deviation named).

use mcp_probe_schema::vocab::{code, header, leg, LegId, REV_2026_07_28};
use serde::Serialize;

use crate::check::{Check, Context, Legs};
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::checks::common::wire::{self, read, skipped_leg, Answer, AnswerFacts, Reply};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Request metadata headers present and consistent with the body.
#[derive(Debug)]
pub struct MetadataHeaders;
/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "Decode-acceptance (a Base64-encoded Mcp-Name that matches the body must be \
     accepted) is not exercised: it would invoke a real tool. Not probed either: Mcp-Param-* headers, header \
     values holding invalid characters, and a missing or mismatched MCP-Protocol-Version (",
    crate::rule_ref!("revisions-pinned", "c"),
    " and ",
    crate::rule_ref!("revisions-pinned", "e"),
    " test those)."
);

/// One routing-header probe.
struct Probe {
    /// Leg id in the verdict.
    id: &'static str,
    /// Collector leg.
    leg: LegId,
    /// Label in evidence.
    label: &'static str,
    /// The header under test.
    header: &'static str,
    /// The body is a `tools/call` of a tool that cannot exist.
    call: bool,
}

const PROBES: [Probe; 4] = [
    Probe {
        id: "a",
        leg: leg::HDR_NO_METHOD,
        label: "missing Mcp-Method (tools/list)",
        header: header::METHOD,
        call: false,
    },
    Probe {
        id: "b",
        leg: leg::HDR_NO_NAME,
        label: "missing Mcp-Name (tools/call)",
        header: header::NAME,
        call: true,
    },
    Probe {
        id: "c",
        leg: leg::HDR_NAME_MISMATCH,
        label: "Mcp-Name differing from the body (tools/call)",
        header: header::NAME,
        call: true,
    },
    Probe {
        id: "d",
        leg: leg::HDR_NAME_ENCODED,
        label: "Base64-encoded Mcp-Name differing from the body (tools/call)",
        header: header::NAME,
        call: true,
    },
];

/// The details on 2026-07-28, in report order.
#[derive(Debug, Serialize)]
struct MetadataHeadersFacts {
    /// Sub-verdicts a-d → outcome.
    legs: Keyed<String, SubOutcome>,
    /// Collector leg → what its probe showed.
    probes: Keyed<LegId, ProbeFacts>,
}

/// One probe in the details: the answer's status and code when it was sent, its label
/// and outcome.
#[derive(Debug, Serialize)]
struct ProbeFacts {
    /// Absent when no exchange was recorded.
    #[serde(flatten)]
    answer: Option<AnswerFacts>,
    label: &'static str,
    outcome: SubOutcome,
}

/// The collector legs of [`PROBES`], in their order.
const COLLECTOR_LEGS: [LegId; 4] = [
    leg::HDR_NO_METHOD,
    leg::HDR_NO_NAME,
    leg::HDR_NAME_MISMATCH,
    leg::HDR_NAME_ENCODED,
];

/// The answer the spec requires, as a format argument (no string of its own for text
/// written into a note): `HTTP 400 and -32020 (HeaderMismatch)`.
struct Required;

impl std::fmt::Display for Required {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP 400 and {} (HeaderMismatch)", code::HEADER_MISMATCH)
    }
}

/// Decide one probe from its answer.
fn judge(a: &Answer, p: &Probe, authenticated: bool) -> (SubOutcome, String) {
    if let Some(refused) =
        wire::refused_at_authentication(a, authenticated, "so the header check was never reached")
    {
        return refused;
    }
    let said = a.summary();
    let required = Required;
    let status = a.status.unwrap_or_default();
    match (&a.reply, a.code()) {
        (Reply::NoResponse(_), _) => (
            SubOutcome::Error,
            crate::format_exact!("{said}: the probe's answer was never observed"),
        ),
        (Reply::Error(_), Some(code::HEADER_MISMATCH)) if status == 400 => {
            (SubOutcome::Pass, crate::format_exact!("{said}: refused with {required}, the required answer"))
        }
        (Reply::Error(_), Some(code::HEADER_MISMATCH)) => (
            SubOutcome::Fail,
            crate::format_exact!(
                "{said}: the header was refused with the right code but at HTTP {status}, where the spec requires \
                 400 (clients and intermediaries act on the status)"
            ),
        ),
        (Reply::Error(_), Some(code::UNSUPPORTED_PROTOCOL_VERSION)) => (
            SubOutcome::Error,
            crate::format_exact!(
                "{said}: the endpoint refused the probe's own version ({REV_2026_07_28}), so the header test never \
                 ran"
            ),
        ),
        (Reply::Result(_) | Reply::Empty | Reply::StreamWithoutAnswer, _) if a.is_2xx() => {
            let how = match a.reply {
                Reply::Empty => " (an empty answer to a request is an acceptance)",
                Reply::StreamWithoutAnswer => " (a response stream was opened for it)",
                _ if p.call => " (the call of a tool that cannot exist was dispatched)",
                _ => "",
            };
            (
                SubOutcome::Fail,
                crate::format_exact!("{said}: accepted{how} instead of refused with {required}"),
            )
        }
        (Reply::Error(_), Some(code::INVALID_PARAMS)) if p.call && a.is_2xx() => (
            SubOutcome::Fail,
            crate::format_exact!(
                "{said}: the transport accepted the request and the body was dispatched: -32602 inside a 2xx is \
                 the tool lookup's answer for the name in the body (a tool that cannot exist), so the {} header \
                 was not validated before the body; the spec requires {required}",
                p.header
            ),
        ),
        (Reply::Error(e), Some(c)) if status == 400 && e.names(p.header) => (
            SubOutcome::Pass,
            crate::format_exact!(
                "{said}: refused at HTTP 400 with a message naming the {} header, so a header decision, though with \
                 code {c} instead of {} (deviation)",
                p.header,
                code::HEADER_MISMATCH
            ),
        ),
        (Reply::Error(_), Some(code::INVALID_PARAMS)) if p.call && status == 400 => (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{said}: the body names a tool that cannot exist, so -32602 answers the body, not the header: the \
                 server validated the body first, an order the spec does not fix, and whether it enforces {} at \
                 all is not shown",
                p.header
            ),
        ),
        (Reply::Error(_), Some(c)) => (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{said}: refused with code {c} instead of {required}; the refusal answers a different question, so \
                 whether the server enforces {} is not shown",
                p.header
            ),
        ),
        (Reply::Error(_), None) => (
            SubOutcome::Error,
            crate::format_exact!("{said}: an error object without an integer code is not a refusal that can be attributed"),
        ),
        (Reply::Result(_), _) => (
            SubOutcome::Unknown,
            crate::format_exact!("{said}: a result at a non-2xx status is neither a refusal nor a clean acceptance"),
        ),
        _ if (300..400).contains(&status) => (
            SubOutcome::Unknown,
            crate::format_exact!("{said}: a redirect (not followed) is not the endpoint's answer"),
        ),
        _ => (
            SubOutcome::Error,
            crate::format_exact!(
                "{said}: a bare status a gateway or proxy may have produced; neither a refusal nor an acceptance is \
                 attributed to the server"
            ),
        ),
    }
}

impl Check for MetadataHeaders {
    fn id(&self) -> &'static str {
        "metadata-headers"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "HTTP+SSE (2024-11-05) defines none of the request metadata headers (Mcp-Method, \
             Mcp-Name)",
        )
    }

    /// Required on 2026-07-28. Below it the check is NO-REV before any probe is judged:
    /// the collector records the legs as skipped, and they are read only to cite those
    /// records (an older bundle without them is NO-REV too).
    fn legs(&self, era: Option<Era>) -> Legs {
        wire::modern_only(era, &COLLECTOR_LEGS)
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        if !ev.is_modern() {
            return wire::no_rev(
                ev,
                &COLLECTOR_LEGS,
                &crate::format_exact!(
                    "the routing headers Mcp-Method and Mcp-Name and their validation (-32020) are defined by \
                     {REV_2026_07_28}"
                ),
                REDUCTION,
            );
        }
        let mut legs = Vec::new();
        let mut seqs = Vec::new();
        let mut probes = Keyed::default();
        for p in &PROBES {
            let (outcome, note, answer) = match wire::last(ev, p.leg) {
                None => (
                    SubOutcome::Error,
                    crate::format_exact!(
                        "{}: the leg's records hold neither an HTTP exchange nor a skip",
                        p.label
                    ),
                    None,
                ),
                Some(Err(reason)) => {
                    seqs.extend(ev.seqs(p.leg));
                    let (o, n) = skipped_leg("the probe", &reason);
                    (o, crate::format_exact!("{}: {n}", p.label), None)
                }
                Some(Ok(x)) => {
                    let a = read(&x);
                    seqs.push(a.seq);
                    let (o, n) = judge(&a, p, ev.authenticated());
                    (
                        o,
                        crate::format_exact!("{}: record #{}, {n}", p.label, a.seq),
                        Some(a.facts()),
                    )
                }
            };
            probes.push(
                p.leg,
                ProbeFacts {
                    answer,
                    label: p.label,
                    outcome,
                },
            );
            legs.push(SubVerdict::new(p.id, outcome, note));
        }
        let facts = MetadataHeadersFacts {
            legs: leg_outcomes(&legs),
            probes,
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

    fn request(l: LegId) -> String {
        if l == leg::HDR_NO_METHOD {
            format!(r#"{{"jsonrpc":"2.0","id":41,"method":"tools/list","params":{{{META}}}}}"#)
        } else {
            format!(
                r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"cis-audit-no-such-tool","arguments":{{}},{META}}}}}"#
            )
        }
    }

    fn answer(l: LegId, status: u16, ct: &str, body: &str) -> Record {
        exchange(&[l], &request(l), status, ct, body, &[])
    }

    fn err(l: LegId, code: i64, message: &str) -> String {
        let id = if l == leg::HDR_NO_METHOD { 41 } else { 42 };
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
    }

    fn mismatch(l: LegId) -> Record {
        answer(
            l,
            400,
            JSON,
            &err(
                l,
                -32020,
                "Mcp-Name header does not match the request body's 'name' parameter",
            ),
        )
    }

    /// Every probe refused with 400 -32020, except `l` answered by `r`.
    fn modern_with(l: LegId, r: Record) -> Outcome {
        let records = COLLECTOR_LEGS
            .iter()
            .map(|x| if *x == l { r.clone() } else { mismatch(*x) })
            .collect();
        graded(REV_2026_07_28, records)
    }

    /// Every probe refused with 400 -32020, except `l` answered `status`, `ct`, `body`.
    fn answered(l: LegId, status: u16, ct: &str, body: &str) -> Outcome {
        modern_with(l, answer(l, status, ct, body))
    }

    /// Every probe refused with 400 -32020, except `l` refused at `status` with `code`.
    fn refused(l: LegId, status: u16, code: i64, message: &str) -> Outcome {
        answered(l, status, JSON, &err(l, code, message))
    }

    fn graded(rev: &str, records: Vec<Record>) -> Outcome {
        let ev = evidence(
            Some(session(Some(rev), json!({"tools": {}}), None)),
            records,
        );
        crate::fixture::local(run(&MetadataHeaders, &ev, &Context::default()))
    }

    /// py2, fastmcp and ts2: every missing or mismatching routing header draws
    /// 400 -32020, as JSON (ts2 answers SSE-capable clients with JSON too).
    #[test]
    fn header_mismatch_at_400_passes() {
        let records = vec![
            answer(
                leg::HDR_NO_METHOD,
                400,
                JSON,
                &err(
                    leg::HDR_NO_METHOD,
                    -32020,
                    "Mcp-Method header does not match the request body's method",
                ),
            ),
            mismatch(leg::HDR_NO_NAME),
            mismatch(leg::HDR_NAME_MISMATCH),
            answer(
                leg::HDR_NAME_ENCODED,
                400,
                "text/event-stream",
                &format!(
                    "event: message\ndata: {}\n\n",
                    err(
                        leg::HDR_NAME_ENCODED,
                        -32020,
                        "Bad Request: the request headers and body disagree"
                    )
                ),
            ),
        ];
        let o = graded(REV_2026_07_28, records);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "a",
            SubOutcome::Pass,
            &[
                "missing Mcp-Method (tools/list)",
                "record #0",
                "refused with HTTP 400 and -32020 (HeaderMismatch)",
            ],
        );
        has(
            &o,
            "d",
            SubOutcome::Pass,
            &["Base64-encoded", "text/event-stream"],
        );
        assert_eq!(o.details["legs"]["b"], "pass");
        assert_eq!(
            o.details["probes"][leg::HDR_NO_NAME.as_str()]["code"],
            -32020
        );
        assert_eq!(
            o.details["probes"][leg::HDR_NO_NAME.as_str()]["http_status"],
            400
        );
        assert_eq!(o.records, vec![0, 1, 2, 3]);
        assert!(o.reduction.contains("Decode-acceptance"));
    }

    #[test]
    fn legacy_is_no_rev_with_or_without_skipped_legs() {
        let skips = COLLECTOR_LEGS
            .iter()
            .map(|l| skipped(&[l], "not sent: 2026-07-28 only (negotiated 2025-11-25)"))
            .collect();
        for records in [skips, Vec::new()] {
            let o = graded("2025-11-25", records);
            assert_eq!(o.verdict, Verdict::NoRev, "{o:?}");
            assert!(
                o.evidence.contains("defined by 2026-07-28")
                    && o.evidence.contains("negotiated 2025-11-25"),
                "{o:?}"
            );
            assert_eq!(o.details["required_revision"], "2026-07-28");
            assert_eq!(o.details["negotiated_revision"], "2025-11-25");
        }
    }

    #[test]
    fn modern_bundle_without_the_legs_is_error() {
        let o = graded(REV_2026_07_28, vec![mismatch(leg::HDR_NO_METHOD)]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        assert!(
            o.evidence.contains(leg::HDR_NO_NAME.as_str()) && o.evidence.contains("missing"),
            "{o:?}"
        );
    }

    #[test]
    fn acceptances_fail() {
        let o = answered(
            leg::HDR_NO_METHOD,
            200,
            JSON,
            r#"{"jsonrpc":"2.0","id":41,"result":{"tools":[]}}"#,
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "a",
            SubOutcome::Fail,
            &["result listing 0 tools", "accepted"],
        );
        let o = answered(
            leg::HDR_NO_NAME,
            200,
            JSON,
            r#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Unknown tool"}],"isError":true}}"#,
        );
        has(&o, "b", SubOutcome::Fail, &["isError: true", "dispatched"]);
        let o = answered(leg::HDR_NAME_MISMATCH, 202, JSON, "");
        has(
            &o,
            "c",
            SubOutcome::Fail,
            &["HTTP 202", "empty answer to a request is an acceptance"],
        );
    }

    #[test]
    fn unknown_tool_inside_200_fails() {
        let o = refused(
            leg::HDR_NAME_MISMATCH,
            200,
            -32602,
            "Unknown tool: cis-audit-no-such-tool",
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "c",
            SubOutcome::Fail,
            &["-32602 inside a 2xx", "not validated before the body"],
        );
    }

    #[test]
    fn unknown_tool_at_400_is_unknown_unless_it_names_the_header() {
        let o = refused(
            leg::HDR_NO_NAME,
            400,
            -32602,
            "Unknown tool: cis-audit-no-such-tool",
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            "b",
            SubOutcome::Unknown,
            &[
                "answers the body, not the header",
                "order the spec does not fix",
            ],
        );
        let o = refused(
            leg::HDR_NO_NAME,
            400,
            -32602,
            "Invalid params: missing mcp-name header",
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "b",
            SubOutcome::Pass,
            &[
                "naming the Mcp-Name header",
                "code -32602 instead of -32020 (deviation)",
            ],
        );
    }

    #[test]
    fn own_version_refused_is_error() {
        let o = refused(
            leg::HDR_NO_METHOD,
            400,
            -32022,
            "Unsupported protocol version",
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(
            &o,
            "a",
            SubOutcome::Error,
            &["probe's own version", "never ran"],
        );
    }

    #[test]
    fn other_refusals_are_unknown() {
        let o = refused(leg::HDR_NO_METHOD, 400, -32600, "Bad Request");
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            "a",
            SubOutcome::Unknown,
            &[
                "code -32600 instead of HTTP 400 and -32020",
                "different question",
            ],
        );
        let o = refused(leg::HDR_NAME_ENCODED, 404, -32601, "Method not found");
        has(&o, "d", SubOutcome::Unknown, &["HTTP 404", "-32601"]);
        let o = answered(leg::HDR_NO_NAME, 401, JSON, "");
        has(&o, "b", SubOutcome::Unknown, &["refused at authentication"]);
        let o = answered(leg::HDR_NO_NAME, 307, "text/plain", "");
        has(&o, "b", SubOutcome::Unknown, &["redirect"]);
    }

    #[test]
    fn right_code_at_wrong_status_fails() {
        let o = refused(leg::HDR_NO_METHOD, 200, -32020, "Mcp-Method missing");
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "a",
            SubOutcome::Fail,
            &["right code but at HTTP 200", "requires 400"],
        );
    }

    #[test]
    fn bare_statuses_and_transport_failures_are_errors() {
        for (status, ct, body) in [
            (400, JSON, ""),
            (502, "text/html", "<html>Bad Gateway</html>"),
            (200, "text/html", "<p>hi</p>"),
        ] {
            let o = answered(leg::HDR_NO_NAME, status, ct, body);
            assert_eq!(o.verdict, Verdict::Error, "{o:?}");
            has(
                &o,
                "b",
                SubOutcome::Error,
                &[&format!("HTTP {status}"), "gateway"],
            );
        }
        let mut r = mismatch(leg::HDR_NO_NAME);
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Timeout,
                message: "30 s".into(),
            });
        }
        let o = modern_with(leg::HDR_NO_NAME, r);
        has(
            &o,
            "b",
            SubOutcome::Error,
            &["no response (timeout", "never observed"],
        );
        let o = answered(
            leg::HDR_NO_NAME,
            400,
            JSON,
            r#"{"jsonrpc":"2.0","id":42,"error":{"message":"no code"}}"#,
        );
        has(&o, "b", SubOutcome::Error, &["without an integer code"]);
    }

    #[test]
    fn skipped_probes() {
        let o = modern_with(
            leg::HDR_NO_NAME,
            skipped(&[leg::HDR_NO_NAME], "not sent: --info run"),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        let words = ["--info", "a full run decides"];
        has(&o, "b", SubOutcome::Unknown, &words);
        let o = modern_with(
            leg::HDR_NO_NAME,
            skipped(&[leg::HDR_NO_NAME], "not sent: 2026-07-28 only"),
        );
        has(&o, "b", SubOutcome::Error, &["never made"]);
    }

    #[test]
    fn collector_legs_are_the_probes_legs() {
        let probes: Vec<LegId> = PROBES.iter().map(|p| p.leg).collect();
        assert_eq!(probes, COLLECTOR_LEGS);
    }
}
