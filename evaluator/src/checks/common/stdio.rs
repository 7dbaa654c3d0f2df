//! What a stdio bundle shows (the collector launched the server and spoke over its stdin
//! and stdout): the process record, every stdout line in order, and which checks have no
//! subject over stdio.
//!
//! A stdio exchange is read by the checks of the protocol through
//! [`crate::evidence::Exchange`] like any other (see
//! [`crate::evidence::stdio_as_exchange`]); this module holds what only stdio has.

use mcp_probe_schema::check_id::CheckId;
use mcp_probe_schema::model::{Observation, StdioLine, StdioProcess, StdioUnkept};

use crate::evidence::Evidence;
use crate::verdict::{Outcome, Verdict};

/// The checks whose subject exists only on HTTP (TLS, headers, Origin, OAuth and bearer
/// tokens, HTTP sessions and streams, HTTP caching and body limits), or whose legs and
/// rules this build defines only on HTTP (1.1: version assertions in the
/// `MCP-Protocol-Version` header and HTTP status rules). On a stdio bundle each is N/A
/// naming the transport.
pub const HTTP_ONLY: &[CheckId] = &[
    CheckId::C1_1,
    CheckId::C2_2,
    CheckId::C2_3,
    CheckId::C2_4,
    CheckId::C2_5,
    CheckId::C3_1_2,
    CheckId::C3_2_2,
    CheckId::C3_3_1,
    CheckId::C3_3_2,
    CheckId::C3_3_4,
    CheckId::C3_3_5,
    CheckId::C5_2_3,
    CheckId::C7_2_1,
    CheckId::C10_1,
    CheckId::C10_2,
];

/// N/A for an [`HTTP_ONLY`] check on a stdio bundle; `None` otherwise.
pub fn not_on_stdio(id: CheckId, ev: &Evidence) -> Option<Outcome> {
    if !ev.is_stdio() || !HTTP_ONLY.contains(&id) {
        return None;
    }
    Some(
        Outcome::single(
            Verdict::NotApplicable,
            format!(
                "transport stdio: the server was launched as a local process ({}) and spoken to over its stdin \
                 and stdout; what {id} reads exists only on HTTP",
                crate::fmt::line(&ev.payload.target.as_typed)
            ),
            "the check's subject is an HTTP property; a stdio server has none",
        )
        .with_detail("transport", ev.transport()),
    )
}

/// The process record and its seq, when the bundle has one.
pub fn process(ev: &Evidence) -> Option<(u64, &StdioProcess)> {
    ev.records.iter().find_map(|r| match &r.observation {
        Observation::StdioProcess(p) => Some((r.seq, p)),
        _ => None,
    })
}

/// One stdout line with where it was read: its record, and its position among every
/// stdout line of the run (1-based).
#[derive(Debug, Clone, Copy)]
pub struct Placed<'a> {
    /// Seq of the record holding it.
    pub seq: u64,
    /// Position among all stdout lines, from 1.
    pub position: usize,
    /// The line.
    pub line: &'a StdioLine,
}

/// Every stdout line the run read, in order.
pub fn stdout_lines(ev: &Evidence) -> Vec<Placed<'_>> {
    let mut out = Vec::new();
    for r in ev.records.iter() {
        if let Observation::Stdio(x) = &r.observation {
            for line in &x.received {
                out.push(Placed {
                    seq: r.seq,
                    position: out.len() + 1,
                    line,
                });
            }
        }
    }
    out
}

/// The stdout lines each record counted instead of storing (`unkept`: the run's share of
/// `--bundle-cap` for lines was spent), with the record's seq, in order.
pub fn unkept_lines(ev: &Evidence) -> Vec<(u64, &StdioUnkept)> {
    ev.records
        .iter()
        .filter_map(|r| match &r.observation {
            Observation::Stdio(x) => x.unkept.as_ref().map(|u| (r.seq, u)),
            _ => None,
        })
        .collect()
}
