//! 5.3.1: logs separated from the protocol stream in stdio mode.
//!
//! On a stdio bundle every line the server wrote on stdout is recorded, in order, marked
//! when it is not a JSON-RPC message (a log line, a banner, a blank line). Such a line is
//! the failure itself: the server wrote something other than protocol messages on the
//! protocol stream. FAIL names the first such line (its position among the stdout lines,
//! its record, an excerpt) and counts the others; PASS needs a complete run in which
//! every stdout line was a JSON-RPC message. A line stored cut (longer than the body
//! cap) is not judged. On HTTP the recommendation has no subject: N/A, as before.

use mcp_probe_schema::model::{Era, RunStatus};
use mcp_probe_schema::vocab::leg;
use serde::Serialize;

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::reported::reported_only;
use crate::checks::common::stdio::stdout_lines;
use crate::checks::common::wire::short;
use crate::evidence::Evidence;
use crate::verdict::{Outcome, Verdict};

/// 5.3.1: logs separated from protocol stream in stdio mode.
#[derive(Debug)]
pub struct Check5_3_1;
/// The 5.3.1 check.
pub static C5_3_1: Check5_3_1 = Check5_3_1;

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
}

impl Check for Check5_3_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // Stdout lines are read from every stdio record, whichever leg it served; the
        // process record says the stream was the server's.
        Legs::with_optional(&[], &[leg::STDIO_PROCESS])
    }

    fn needs(&self) -> Needs {
        // A log line before the server died is a finding even without a session.
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
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
        let facts = Facts {
            transport: ev.transport(),
            stdout_lines: lines.len(),
            non_protocol_lines: bad.len(),
            first_position: bad.first().map(|l| l.position),
            cut_lines: cut,
        };
        if let Some(first) = bad.first() {
            let more = match bad.len() {
                1 => String::new(),
                n => format!(
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
                format!(
                    "stdout line {} of {} (record #{}) is not a JSON-RPC message: \"{}\"{more}",
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
        let complete = ev.payload.run.status == RunStatus::Complete && ev.revision().is_some();
        let records = lines.iter().map(|l| l.seq);
        if cut > 0 {
            return Outcome::single(
                Verdict::Unknown,
                format!(
                    "{} stdout line(s) read; {cut} stored cut (longer than the body cap) could not be judged; the \
                     others were JSON-RPC messages",
                    lines.len()
                ),
                REDUCTION,
            )
            .with_records(records)
            .with_facts(&facts);
        }
        if !complete || lines.is_empty() {
            return Outcome::single(
                Verdict::Unknown,
                format!(
                    "{} stdout line(s) read, every one a JSON-RPC message, but the run did not complete a session \
                     (run status {}{}): the stream was not observed over a whole run",
                    lines.len(),
                    ev.payload.run.status.as_str(),
                    ev.payload
                        .run
                        .failure
                        .as_deref()
                        .map(|f| format!(": {}", crate::fmt::line(f)))
                        .unwrap_or_default()
                ),
                REDUCTION,
            )
            .with_records(records)
            .with_facts(&facts);
        }
        Outcome::single(
            Verdict::Pass,
            format!(
                "every one of the {} stdout line(s) of a complete run was a JSON-RPC message",
                lines.len()
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
    use crate::grade::run;
    use mcp_probe_schema::vocab::leg;
    use serde_json::json;

    const REQ: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;

    fn graded(records: Vec<mcp_probe_schema::model::Record>, with_session: bool) -> Outcome {
        let s = with_session.then(|| session(Some("2026-07-28"), json!({}), None));
        run(&C5_3_1, &stdio_evidence(s, records), &Context::default())
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

    #[test]
    fn na_on_http() {
        let ev = evidence(Some(session(Some("2026-07-28"), json!({}), None)), vec![]);
        let o = run(&C5_3_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert_eq!(o.details["transport"], "streamable-http");
    }
}
