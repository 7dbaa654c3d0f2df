//! Rule `stdio-logs-separated`: logs separated from the protocol stream in stdio mode.
//!
//! On a stdio bundle every line the server wrote on stdout is recorded, in order, marked
//! when it is not a JSON-RPC message (a log line, a banner, a blank line). Such a line is
//! the failure itself: the server wrote something other than protocol messages on the
//! protocol stream. FAIL names the first such line (its position among the stdout lines,
//! its record, an excerpt) and counts the others; PASS needs a complete run in which
//! every stdout line was a JSON-RPC message. A line stored cut (longer than the body
//! cap) is not judged. Lines a record counted instead of storing (`unkept`, past the
//! run's share of `--bundle-cap`) are judged from their counts: a non-JSON-RPC one is
//! a FAIL too, a cut one is not judged. On HTTP the recommendation has no subject: N/A,
//! as before.

use mcp_probe_schema::model::{Era, RunStatus};
use mcp_probe_schema::vocab::leg;
use serde::Serialize;

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::reported::reported_only;
use crate::checks::common::stdio::{stdout_lines, unkept_lines};
use crate::checks::common::wire::short;
use crate::evidence::Bundle;
use crate::verdict::{Outcome, Verdict};

/// Logs separated from protocol stream in stdio mode.
#[derive(Debug)]
pub struct StdioLogsSeparated;
const NOT_STDIO: &str = "transport mismatch: the recommendation governs stdio servers (protocol messages on \
     stdout, logs elsewhere); this bundle was collected over HTTP, where a server's output streams are not seen";
const REDUCTION_HTTP: &str =
    "the whole recommendation is host-side on HTTP: a server's output streams are \
     visible only to whoever launches the process; nothing is probed";
const REDUCTION: &str = "read from the stdout of one launch of the server, during the requests this run sent: \
     a log line the server writes only on other paths (errors, other tools, later in its life) is not seen; \
     where stderr or the log files go is not judged";

/// The details of the outcome.
#[derive(Serialize)]
struct Facts {
    /// `stdio` (or the HTTP transport, where the check is N/A).
    transport: &'static str,
    /// Stdout lines read.
    stdout_lines: usize,
    /// Of them, lines that are not JSON-RPC messages.
    non_protocol_lines: usize,
    /// Position (1-based, among the stdout lines) of the first such line.
    first_position: Option<usize>,
    /// Lines stored cut, not judged.
    cut_lines: usize,
    /// Lines counted but not stored (past the run's share of `--bundle-cap`).
    unkept_lines: u64,
    /// Of them, lines that are not JSON-RPC messages (and not cut).
    unkept_non_protocol: u64,
    /// Of them, lines cut at the body cap, not judged.
    unkept_cut: u64,
}

impl Check for StdioLogsSeparated {
    fn id(&self) -> &'static str {
        "stdio-logs-separated"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        // Stdout lines are read from every stdio record, whichever leg it served; the
        // process record says the stream was the server's.
        Legs::with_optional(&[], &[leg::STDIO_PROCESS])
    }

    fn needs(&self) -> Needs {
        // A log line before the server died is a finding even without a session.
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        if !ev.is_stdio() {
            return reported_only(ev, NOT_STDIO, &[], REDUCTION_HTTP);
        }
        let lines = stdout_lines(ev);
        let cut = lines
            .iter()
            .filter(|l| (l.line.bytes.len() as u64) < l.line.length)
            .count();
        let bad: Vec<_> = lines
            .iter()
            .filter(|l| !l.line.jsonrpc && (l.line.bytes.len() as u64) == l.line.length)
            .collect();
        let unkept = unkept_lines(ev);
        let sum = |f: fn(&mcp_probe_schema::model::StdioUnkept) -> u64| -> u64 {
            unkept.iter().map(|(_, u)| f(u)).sum()
        };
        let facts = Facts {
            transport: ev.transport(),
            stdout_lines: lines.len(),
            non_protocol_lines: bad.len(),
            first_position: bad.first().map(|l| l.position),
            cut_lines: cut,
            unkept_lines: sum(|u| u.lines),
            unkept_non_protocol: sum(|u| u.non_protocol()),
            unkept_cut: sum(|u| u.cut),
        };
        let counted = if facts.unkept_lines == 0 {
            String::new()
        } else {
            crate::format_exact!(
                "; {} more line(s) were counted, not stored (the run's share of --bundle-cap for stdout lines \
                 was spent, from record #{}): {} not JSON-RPC, {} cut",
                facts.unkept_lines,
                unkept.first().map_or(0, |(s, _)| *s),
                facts.unkept_non_protocol,
                facts.unkept_cut
            )
        };
        if let Some(first) = bad.first() {
            let more = match bad.len() {
                1 => String::new(),
                n => crate::format_exact!(
                    "; {} more such line(s), at position(s) {}",
                    n - 1,
                    bad[1..]
                        .iter()
                        .take(10)
                        .map(|l| l.position.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            return Outcome::single(
                Verdict::Fail,
                crate::format_exact!(
                    "stdout line {} of {} (record #{}) is not a JSON-RPC message: \"{}\"{more}{counted}",
                    first.position,
                    lines.len(),
                    first.seq,
                    short(&String::from_utf8_lossy(&first.line.bytes))
                ),
                REDUCTION,
            )
            .with_records(bad.iter().map(|l| l.seq))
            .with_facts(&facts);
        }
        let bad_unkept: Vec<u64> = unkept
            .iter()
            .filter(|(_, u)| u.non_protocol() > 0)
            .map(|(s, _)| *s)
            .collect();
        if let Some(first) = bad_unkept.first() {
            return Outcome::single(
                Verdict::Fail,
                crate::format_exact!(
                    "{} stdout line(s) counted past the run's share of --bundle-cap are not JSON-RPC messages \
                     (first in record #{first}; only their count, length and hash were kept); the {} stored \
                     line(s) were JSON-RPC messages",
                    facts.unkept_non_protocol,
                    lines.len()
                ),
                REDUCTION,
            )
            .with_records(bad_unkept)
            .with_facts(&facts);
        }
        let complete = ev.payload.run.status == RunStatus::Complete && ev.revision().is_some();
        let records = lines.iter().map(|l| l.seq);
        let records = records.chain(unkept.iter().map(|(s, _)| *s));
        if cut > 0 || facts.unkept_cut > 0 {
            return Outcome::single(
                Verdict::Unknown,
                crate::format_exact!(
                    "{} stdout line(s) read; {} cut (longer than the body cap) could not be judged; the \
                     others were JSON-RPC messages{counted}",
                    lines.len() as u64 + facts.unkept_lines,
                    cut as u64 + facts.unkept_cut
                ),
                REDUCTION,
            )
            .with_records(records)
            .with_facts(&facts);
        }
        if !complete || lines.is_empty() {
            return Outcome::single(
                Verdict::Unknown,
                crate::format_exact!(
                    "{} stdout line(s) read, every one a JSON-RPC message, but the run did not complete a session \
                     (run status {}{}): the stream was not observed over a whole run",
                    lines.len() as u64 + facts.unkept_lines,
                    ev.payload.run.status.as_str(),
                    ev.payload
                        .run
                        .failure
                        .as_deref()
                        .map(|f| crate::format_exact!(": {}", crate::fmt::Line(f)))
                        .unwrap_or_default()
                ),
                REDUCTION,
            )
            .with_records(records)
            .with_facts(&facts);
        }
        Outcome::single(
            Verdict::Pass,
            crate::format_exact!(
                "every one of the {} stdout line(s) of a complete run was a JSON-RPC message{}",
                lines.len() as u64 + facts.unkept_lines,
                if facts.unkept_lines > 0 {
                    crate::format_exact!(
                        " ({} of them counted, not stored: the run's share of --bundle-cap for stdout lines was spent)",
                        facts.unkept_lines
                    )
                } else {
                    String::new()
                }
            ),
            REDUCTION,
        )
        .with_records(records)
        .with_facts(&facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, session, stdio_evidence, stdio_process, stdio_record};
    use crate::preconditions::run_rule;
    use mcp_probe_schema::vocab::leg;
    use serde_json::json;

    const REQ: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;

    fn graded(records: Vec<mcp_probe_schema::model::Record>, with_session: bool) -> Outcome {
        let s = with_session.then(|| session(Some("2026-07-28"), json!({}), None));
        run_rule(
            &StdioLogsSeparated,
            &stdio_evidence(s, records),
            &Context::default(),
        )
    }

    #[test]
    fn a_log_line_fails_naming_its_position_and_record() {
        let o = graded(
            vec![
                stdio_record(&[leg::STDIO_STREAM], None, &["starting up"]),
                stdio_record(&[leg::INVENTORY_TOOLS], Some(REQ), &[ANSWER, "", "done"]),
                stdio_process(&["server"], Vec::new(), &[]),
            ],
            true,
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            o.evidence.starts_with(
                "stdout line 1 of 4 (record #0) is not a JSON-RPC message: \"starting up\""
            ),
            "{}",
            o.evidence
        );
        assert!(
            o.evidence
                .contains("2 more such line(s), at position(s) 3, 4"),
            "{}",
            o.evidence
        );
        assert_eq!(o.details["non_protocol_lines"], 3);
        assert_eq!(o.records, [0, 1]);
    }

    #[test]
    fn a_clean_complete_run_passes_and_an_incomplete_one_stays_unknown() {
        let clean = || {
            vec![
                stdio_record(&[leg::INVENTORY_TOOLS], Some(REQ), &[ANSWER]),
                stdio_process(&["server"], Vec::new(), &[]),
            ]
        };
        let o = graded(clean(), true);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert_eq!(o.details["stdout_lines"], 1);
        let o = graded(clean(), false);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(
            o.evidence.contains("did not complete a session"),
            "{}",
            o.evidence
        );
    }

    fn with_unkept(
        mut r: mcp_probe_schema::model::Record,
        lines: u64,
        jsonrpc: u64,
        cut: u64,
    ) -> mcp_probe_schema::model::Record {
        if let mcp_probe_schema::model::Observation::Stdio(x) = &mut r.observation {
            x.unkept = Some(mcp_probe_schema::model::StdioUnkept {
                lines,
                bytes: lines * 80,
                jsonrpc,
                cut,
                sha256: vec![0; 32],
                first_at_us: 1,
                last_at_us: 2,
            });
        }
        r
    }

    #[test]
    fn counted_lines_past_the_bundle_cap_are_judged_from_their_counts() {
        let run_with = |jsonrpc: u64, cut: u64| {
            graded(
                vec![
                    stdio_record(&[leg::STDIO_STREAM], None, &[ANSWER]),
                    with_unkept(
                        stdio_record(&[leg::INVENTORY_TOOLS], Some(REQ), &[ANSWER]),
                        1000,
                        jsonrpc,
                        cut,
                    ),
                    stdio_process(&["server"], Vec::new(), &[]),
                ],
                true,
            )
        };
        // Log lines among the counted ones: FAIL, naming the record.
        let o = run_with(990, 0);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            o.evidence.contains("10 stdout line(s) counted"),
            "{}",
            o.evidence
        );
        assert!(o.evidence.contains("record #1"), "{}", o.evidence);
        assert_eq!(o.details["unkept_non_protocol"], 10);
        assert_eq!(o.records, [1]);
        // Cut ones only: UNKNOWN.
        let o = run_with(990, 10);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("10 cut"), "{}", o.evidence);
        // Every counted line JSON-RPC: PASS, saying they were counted.
        let o = run_with(1000, 0);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(o.evidence.contains("1002 stdout line(s)"), "{}", o.evidence);
        assert!(
            o.evidence.contains("1000 of them counted, not stored"),
            "{}",
            o.evidence
        );
        assert_eq!(o.details["unkept_lines"], 1000);
    }

    #[test]
    fn na_on_http() {
        let ev = evidence(Some(session(Some("2026-07-28"), json!({}), None)), vec![]);
        let o = run_rule(&StdioLogsSeparated, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert_eq!(o.details["transport"], "streamable-http");
    }
}
