//! 7.2.1: alerts on audience and issuer validation failures. The observable part
//! (leg a): a token minted for another resource (by 3.3.1b's refresh grant; no second
//! grant is spent) draws 401/403 on a complete `tools/list` that the probe's own token
//! gets accepted (collector legs [`leg::FOREIGN_CONTROL`], [`leg::FOREIGN_TOKEN`]).
//! Logging, alerting and client-side issuer validation are out of a client's reach (the
//! reduction).

use std::collections::BTreeMap;

use mcp_probe_schema::vocab::leg;
use serde::Serialize;

use crate::check::{Check, Context, Legs};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::line;
use crate::verdict::{Leg, LegOutcome, Outcome};
use mcp_probe_schema::model::Era;

/// 7.2.1: alerts on audience and issuer validation failures.
#[derive(Debug)]
pub struct Check7_2_1;
/// The 7.2.1 check.
pub static C7_2_1: Check7_2_1 = Check7_2_1;

const LEG_7_2_1A: &str = "7.2.1a";

/// The details of the outcome.
#[derive(Serialize)]
struct AudienceFacts {
    /// The leg's outcome, by leg id.
    legs: BTreeMap<&'static str, LegOutcome>,
    /// The status the control (the probe's own token) drew, if it was answered.
    control_status: Option<u16>,
    /// The status the foreign-audience token drew, if it was answered.
    wrong_audience_status: Option<u16>,
    /// A token minted for another resource was presented.
    had_foreign_audience_token: bool,
}

const REDUCTION_7_2_1: &str = "not covered: 7.2.1b (the refusal is logged as a structured event with an \
     error code), 7.2.1c (an alert rule fires and is routed), 7.2.1d (client-side issuer validation binds \
     the client, not the server); only the server's refusal of a foreign-audience token is observed";

impl Check for Check7_2_1 {
    /// The foreign-token leg is recorded by every current collector (sent, or skipped
    /// saying why); the control and the mint are read when present, and a missing
    /// control leaves the leg UNKNOWN.
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::FOREIGN_TOKEN],
            &[leg::FOREIGN_CONTROL, leg::FOREIGN_MINT],
        )
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let control = ev.exchanges(leg::FOREIGN_CONTROL).last();
        let foreign = ev.exchanges(leg::FOREIGN_TOKEN).last();
        let mut seqs = ev.seqs(leg::FOREIGN_CONTROL);
        seqs.extend(ev.seqs(leg::FOREIGN_TOKEN));
        seqs.extend(ev.seqs(leg::FOREIGN_MINT));
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
            .with_facts(&AudienceFacts {
                legs: BTreeMap::from([(LEG_7_2_1A, outcome)]),
                control_status: control.as_ref().and_then(Exchange::status),
                wrong_audience_status: foreign.as_ref().and_then(Exchange::status),
                had_foreign_audience_token: foreign.is_some(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::grade::run;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
    use mcp_probe_schema::vocab::LegId;
    use serde_json::json;

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
