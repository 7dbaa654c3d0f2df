//! Rule `size-limits`: request/response body limits, token budgets, per-principal quotas.
//! docs/checks.md states the rules under the row this rule grades.
//!
//! Of the six obligations only the inbound request-body limit is probed (sub-verdict a): the
//! collector re-sends the first `tools/list` of the inventory (the control) padded past
//! the probe size, with the same headers. The other five obligations are named on every
//! run (sub-verdict b, `dropped`). The probe size is the operator's `max_request_bytes`
//! (a probe input), else 1 MiB; the size actually sent is the padded record's body
//! length. A 413 proves a limit at or below that size; an acceptance fails only against
//! a limit the operator stated, because "no limit at or below that size" is not "no
//! limit".

use mcp_probe_schema::model::HttpOutcome;
use mcp_probe_schema::vocab::leg;
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs};
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Request/response body limits, token budgets, per-principal quotas.
#[derive(Debug)]
pub struct SizeLimits;
/// Probe size without an operator input: ordinary traffic, no consent needed.
pub const DEFAULT_PROBE_BYTES: u64 = 1 << 20;
/// Above this, `oversize_authorised` must be the JSON boolean `true`.
pub const CONSENT_ABOVE: u64 = 1 << 20;
/// Never sent, whatever the inputs say.
pub const HARD_MAX: u64 = 10 << 20;

/// The inbound request-body limit, probed.
const SUB_A: &str = "a";
/// The other five obligations, named and not probed.
const SUB_B: &str = "b";

const DROPPED: &str = "not probed: the non-streaming response payload bound, the per-message bound on \
     streamed responses, token budgets, per-principal quota exhaustion behaviour, and enforcement at both \
     the proxy and the application middleware";

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "only the inbound request-body limit is probed, with one padded tools/list at one \
     size; of the six obligations the other five (",
    crate::here!("b"),
    ") are not observable without server-side evidence or \
     traffic the probe may not send; a 413 may come from any hop, so where the limit is enforced is not known"
);

/// The probe size the inputs ask for: `Ok(None)` when no limit is
/// stated (the default applies), `Ok(Some(n))` for a stated limit the rules accept,
/// `Err(reason)` when the stated value is refused (nothing is sent).
pub fn resolve_size(inputs: Option<&Value>) -> Result<Option<u64>, String> {
    let get = |k: &str| inputs.and_then(|i| i.get(k));
    let Some(v) = get("max_request_bytes") else {
        return Ok(None);
    };
    // Booleans, strings, fractions and non-positive numbers are refused.
    let n = match v.as_u64() {
        Some(n) if n > 0 => n,
        _ => {
            return Err(crate::format_exact!(
                "max_request_bytes {} is not a positive integer",
                crate::fmt::Line(&v.to_string())
            ))
        }
    };
    if n > HARD_MAX {
        return Err(crate::format_exact!(
            "max_request_bytes {n} is above the 10 MiB ceiling ({HARD_MAX} bytes), refused whatever the consent"
        ));
    }
    if n > CONSENT_ABOVE && get("oversize_authorised") != Some(&Value::Bool(true)) {
        return Err(crate::format_exact!(
            "max_request_bytes {n} is above 1 MiB and oversize_authorised is not the JSON boolean true"
        ));
    }
    Ok(Some(n))
}

/// "1048576 bytes (1.0 MiB)".
fn bytes(n: u64) -> String {
    crate::format_exact!("{n} bytes ({:.1} MiB)", n as f64 / (1u64 << 20) as f64)
}

/// Sub-verdict a and the facts for the details.
struct Judgement {
    outcome: SubOutcome,
    note: String,
    control_status: Option<u16>,
    padded_status: Option<u16>,
    bytes_sent: Option<u64>,
}

impl Judgement {
    fn new(outcome: SubOutcome, note: impl Into<String>) -> Judgement {
        Judgement {
            outcome,
            note: note.into(),
            control_status: None,
            padded_status: None,
            bytes_sent: None,
        }
    }
}

/// Decide sub-verdict a in the fixed order docs/checks.md states for this rule.
fn judge(ev: &Bundle, size: &Result<Option<u64>, String>) -> Judgement {
    // Step 2: a refused stated value means nothing was (or should have been) sent.
    let stated = match size {
        Err(reason) => {
            let skip = ev
                .skipped(leg::PADDED)
                .map(|r| crate::format_exact!(" (collector: {})", crate::fmt::Line(r)))
                .unwrap_or_default();
            return Judgement::new(
                SubOutcome::Unknown,
                crate::format_exact!("the probe size was refused: {reason}; nothing is sent{skip}"),
            );
        }
        Ok(s) => *s,
    };
    let probe = stated.unwrap_or(DEFAULT_PROBE_BYTES);
    let source = match stated {
        Some(_) => "the operator's stated limit",
        None => "the tool's default",
    };
    // Step 3: the control, the first tools/list page of the inventory.
    let Some(control) = ev.exchanges(leg::INVENTORY_TOOLS).next() else {
        let why = ev
            .skipped(leg::INVENTORY_TOOLS)
            .map(|r| crate::format_exact!("tools/list was {}", crate::fmt::Line(r)))
            .unwrap_or_else(|| "no tools/list was recorded".into());
        return Judgement::new(
            SubOutcome::Unknown,
            crate::format_exact!(
                "no control request ({why}); the padded body is not sent without one"
            ),
        );
    };
    let control_status = match &control.http.outcome {
        HttpOutcome::Error(e) => {
            return Judgement::new(
                SubOutcome::Error,
                crate::format_exact!(
                    "the control tools/list (record #{}) drew no response ({}); the padded body was not sent",
                    control.seq(),
                    crate::fmt::Line(&e.to_string())
                ),
            )
        }
        HttpOutcome::Response(r) => r.status,
    };
    if !(200..300).contains(&control_status) {
        let mut j = Judgement::new(
            SubOutcome::Unknown,
            crate::format_exact!(
                "the control tools/list (record #{}) was answered HTTP {control_status}, so the normal request is \
                 not accepted and a 413 to the padded one would prove nothing; the padded body is not sent",
                control.seq()
            ),
        );
        j.control_status = Some(control_status);
        return j;
    }
    let control_text = crate::format_exact!(
        "control tools/list (record #{}) HTTP {control_status}",
        control.seq()
    );
    // Step 4: the padded request.
    let Some(padded) = ev.exchanges(leg::PADDED).last() else {
        let why = ev
            .skipped(leg::PADDED)
            .map(escape_line)
            .unwrap_or_else(|| "recorded without an HTTP exchange".into());
        let mut j = Judgement::new(
            SubOutcome::Unknown,
            crate::format_exact!(
                "{control_text}; the padded request was not sent ({why}); a full run decides"
            ),
        );
        j.control_status = Some(control_status);
        return j;
    };
    let sent = padded.http.request.body.length;
    let size_text = crate::format_exact!(
        "{} (probe size {} from {source}) in record #{}",
        bytes(sent),
        probe,
        padded.seq()
    );
    let mut j = match &padded.http.outcome {
        HttpOutcome::Error(e) => Judgement::new(
            SubOutcome::Unknown,
            crate::format_exact!(
                "{control_text}; the padded tools/list of {size_text} drew no response ({}): the connection \
                 failed while the body was sent or answered; confirm whether that is size enforcement",
                crate::fmt::Line(&e.to_string())
            ),
        ),
        HttpOutcome::Response(r) => {
            let status = r.status;
            let head = crate::format_exact!("{control_text}; the padded tools/list of {size_text} was answered HTTP {status}");
            let (outcome, why) = padded_answer(status, sent, stated);
            let mut j = Judgement::new(outcome, crate::format_exact!("{head}: {why}"));
            j.padded_status = Some(status);
            j
        }
    };
    j.control_status = Some(control_status);
    j.bytes_sent = Some(sent);
    j
}

/// Sub-verdict a from the padded request's status: 413 passes, an acceptance fails only against
/// a stated limit the body exceeds, anything else decides nothing.
fn padded_answer(status: u16, sent: u64, stated: Option<u64>) -> (SubOutcome, String) {
    match status {
        413 => (
            SubOutcome::Pass,
            crate::format_exact!(
                "a request-body limit at or below {sent} bytes is enforced (whatever was configured)"
            ),
        ),
        300..=399 => (
            SubOutcome::Unknown,
            "a redirect is not followed (re-sending the body to a server-chosen location would bypass \
             the host guard), so whether the body would be accepted was not observed"
                .to_string(),
        ),
        200..=299 => match stated {
            Some(limit) if sent > limit => (
                SubOutcome::Fail,
                crate::format_exact!(
                    "accepted, although the operator states a limit of {}: the stated limit is not \
                     enforced",
                    bytes(limit)
                ),
            ),
            Some(limit) => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "accepted, but the body sent does not exceed the stated limit of {}, so it does \
                     not test it",
                    bytes(limit)
                ),
            ),
            None => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "accepted: there is no limit at or below {sent} bytes, which is not \"no limit\"; \
                     state max_request_bytes (with oversize_authorised above 1 MiB) to test the \
                     configured limit"
                ),
            ),
        },
        _ => (
            SubOutcome::Unknown,
            crate::format_exact!("HTTP {status} is neither 413 nor an acceptance, so it is not read as size enforcement"),
        ),
    }
}

impl Check for SizeLimits {
    fn id(&self) -> &'static str {
        "size-limits"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "on HTTP+SSE (2024-11-05) the padded body is POSTed to the message URL and the status of \
             that POST is graded",
        )
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[leg::INVENTORY_TOOLS, leg::PADDED])
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let size = resolve_size(ev.payload.run.inputs.as_ref());
        let j = judge(ev, &size);
        let stated = size.as_ref().ok().copied().flatten();
        let mut records = ev.seqs(leg::PADDED);
        records.extend(ev.exchanges(leg::INVENTORY_TOOLS).next().map(|x| x.seq()));
        let legs = vec![
            SubVerdict::new(SUB_A, j.outcome, j.note),
            SubVerdict::new(SUB_B, SubOutcome::Dropped, DROPPED),
        ];
        let facts = SizeLimitsFacts {
            legs: leg_outcomes(&legs),
            control_status: j.control_status,
            padded_status: j.padded_status,
            bytes_sent: j.bytes_sent,
            stated_limit: stated,
            probe_size: size.as_ref().ok().map(|s| s.unwrap_or(DEFAULT_PROBE_BYTES)),
        };
        Outcome::from_subs(legs, REDUCTION)
            .with_records(records)
            .with_facts(&facts)
    }
}

/// The details of this rule, in report order (absent values are null).
#[derive(Debug, Serialize)]
struct SizeLimitsFacts {
    /// Sub-verdict a → its outcome, sub-verdict b → `dropped` (keys are references).
    legs: Keyed<String, SubOutcome>,
    /// The control's HTTP status.
    control_status: Option<u16>,
    /// The padded request's HTTP status.
    padded_status: Option<u16>,
    /// The padded request body's length.
    bytes_sent: Option<u64>,
    /// The operator's `max_request_bytes`, when stated and accepted.
    stated_limit: Option<u64>,
    /// The size probed; null when the stated size was refused.
    probe_size: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::preconditions::run_rule;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{ErrorKind, Observation, Record, TransportError};
    use serde_json::json;

    const REQ: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#;
    const OK: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#;

    fn control(status: u16) -> Record {
        exchange(
            &[leg::INVENTORY_TOOLS],
            REQ,
            status,
            "application/json",
            if status == 200 { OK } else { "" },
            &[],
        )
    }

    fn padded(size: usize, status: u16, ct: &str, body: &str) -> Record {
        let req = json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"pad":"X".repeat(size + 1)}})
            .to_string();
        exchange(&[leg::PADDED], &req, status, ct, body, &[])
    }

    fn graded(inputs: Option<Value>, records: Vec<Record>) -> Outcome {
        let mut ev = evidence(
            Some(session(Some("2026-07-28"), json!({"tools": {}}), None)),
            records,
        );
        ev.payload_mut().run.inputs = inputs;
        crate::fixture::local(run_rule(&SizeLimits, &ev, &Context::default()))
    }

    fn has(o: &Outcome, words: &[&str]) {
        for w in words {
            assert!(o.evidence.contains(w), "{w:?} not in {:?}", o.evidence);
        }
    }

    fn sub_a(o: &Outcome) -> SubOutcome {
        o.subs.iter().find(|l| l.id == SUB_A).expect("a").outcome
    }

    const SMALL: usize = 64;

    #[test]
    fn default_size_accepted_is_unknown_naming_the_size() {
        let o = graded(
            None,
            vec![control(200), padded(SMALL, 200, "application/json", OK)],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "the tool's default",
                "no limit at or below",
                "not \"no limit\"",
                "b: not probed",
                "token budgets",
            ],
        );
        assert_eq!(o.details["legs"][SUB_B], "dropped");
        assert_eq!(o.details["padded_status"], 200);
        assert_eq!(o.details["probe_size"], DEFAULT_PROBE_BYTES);
        assert!(o.details["stated_limit"].is_null());
        assert_eq!(o.records, vec![0, 1]);
    }

    #[test]
    fn accepted_above_a_stated_limit_fails() {
        let o = graded(
            Some(json!({"max_request_bytes": SMALL})),
            vec![control(200), padded(SMALL, 200, "application/json", OK)],
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            &["operator's stated limit", "stated limit is not enforced"],
        );
        assert_eq!(o.details["stated_limit"], SMALL);
        assert!(o.details["bytes_sent"].as_u64().unwrap() > SMALL as u64);
    }

    #[test]
    fn payload_too_large_passes() {
        let o = graded(
            Some(json!({"max_request_bytes": 5_000_000, "oversize_authorised": true})),
            vec![
                control(200),
                padded(SMALL, 413, "text/plain", "Request body too large"),
            ],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert_eq!(sub_a(&o), SubOutcome::Pass);
        has(&o, &["HTTP 413", "at or below"]);
    }

    #[test]
    fn refused_sizes_are_unknown_with_the_reason() {
        for (inputs, word) in [
            (json!({"max_request_bytes": true}), "not a positive integer"),
            (
                json!({"max_request_bytes": "1024"}),
                "not a positive integer",
            ),
            (json!({"max_request_bytes": 0}), "not a positive integer"),
            (
                json!({"max_request_bytes": 2_000_000, "oversize_authorised": "true"}),
                "oversize_authorised",
            ),
            (
                json!({"max_request_bytes": 20_000_000, "oversize_authorised": true}),
                "10 MiB ceiling",
            ),
        ] {
            let o = graded(
                Some(inputs),
                vec![
                    control(200),
                    skipped(&[leg::PADDED], "not sent: size refused"),
                ],
            );
            assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
            has(&o, &[word, "nothing is sent"]);
            assert!(o.details["probe_size"].is_null());
        }
    }

    #[test]
    fn control_not_accepted_is_unknown_and_control_failure_error() {
        let o = graded(
            None,
            vec![
                control(401),
                skipped(&[leg::PADDED], "not sent: no accepted control"),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["HTTP 401", "would prove nothing"]);
        let mut c = control(200);
        if let Observation::Http(x) = &mut c.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Connect,
                message: "refused".into(),
            });
        }
        let o = graded(
            None,
            vec![c, skipped(&[leg::PADDED], "not sent: no accepted control")],
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["drew no response", "connect"]);
    }

    #[test]
    fn info_run_is_unknown() {
        let o = graded(
            None,
            vec![
                control(200),
                skipped(
                    &[leg::PADDED],
                    "not sent: --info run (connect and enumerate only)",
                ),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["--info"]);
    }

    #[test]
    fn reset_while_sending_is_unknown() {
        let mut p = padded(SMALL, 200, "application/json", OK);
        if let Observation::Http(x) = &mut p.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Reset,
                message: "connection reset by peer".into(),
            });
        }
        let o = graded(None, vec![control(200), p]);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["reset", "confirm whether that is size enforcement"]);
        assert!(o.details["padded_status"].is_null());
    }

    #[test]
    fn redirect_and_other_statuses_are_unknown() {
        let o = graded(
            None,
            vec![control(200), padded(SMALL, 307, "text/html", "")],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["redirect is not followed"]);
        let o = graded(
            None,
            vec![control(200), padded(SMALL, 400, "application/json", "")],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["neither 413 nor an acceptance"]);
    }

    #[test]
    fn tools_not_listed_is_unknown() {
        let o = graded(
            None,
            vec![
                skipped(
                    &[leg::INVENTORY_TOOLS],
                    "not requested: no tools capability",
                ),
                skipped(&[leg::PADDED], "not sent: no accepted control"),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["no tools capability"]);
    }

    #[test]
    fn bundle_without_the_leg_is_error_naming_it() {
        let o = graded(None, vec![control(200)]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &[leg::PADDED.as_str(), "missing"]);
    }

    #[test]
    fn size_resolution() {
        assert_eq!(resolve_size(None), Ok(None));
        assert_eq!(resolve_size(Some(&json!({}))), Ok(None));
        assert_eq!(
            resolve_size(Some(&json!({"max_request_bytes": 1024}))),
            Ok(Some(1024))
        );
        assert_eq!(
            resolve_size(Some(&json!({"max_request_bytes": 1 << 20}))),
            Ok(Some(1 << 20))
        );
        assert!(resolve_size(Some(&json!({"max_request_bytes": (1 << 20) + 1}))).is_err());
        assert_eq!(
            resolve_size(Some(
                &json!({"max_request_bytes": 10 << 20, "oversize_authorised": true})
            )),
            Ok(Some(10 << 20))
        );
        assert!(resolve_size(Some(&json!({"max_request_bytes": 1.5}))).is_err());
        assert!(resolve_size(Some(&json!({"max_request_bytes": -1}))).is_err());
    }
}
