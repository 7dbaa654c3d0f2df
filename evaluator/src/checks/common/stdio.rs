//! What a stdio bundle shows (the collector launched the server and spoke over its stdin
//! and stdout): the process record and every stdout line in order. Which checks have no
//! subject over stdio is data: the `transports` of each benchmark definition row.
//!
//! A stdio exchange is read by the checks of the protocol through
//! [`crate::evidence::Exchange`] like any other (see
//! [`crate::evidence::stdio_as_exchange`]); this module holds what only stdio has.

use mcp_probe_schema::model::{StdioLine, StdioProcess, StdioUnkept};

use crate::evidence::Bundle;

/// The process record and its seq, when the bundle has one.
pub fn process(ev: &Bundle) -> Option<(u64, &StdioProcess)> {
    ev.stdio_process()
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
pub fn stdout_lines(ev: &Bundle) -> Vec<Placed<'_>> {
    let mut out = Vec::new();
    for (r, x) in ev.stdio_exchanges() {
        for line in &x.received {
            out.push(Placed {
                seq: r.seq,
                position: out.len() + 1,
                line,
            });
        }
    }
    out
}

/// The stdout lines each record counted instead of storing (`unkept`: the run's share of
/// `--bundle-cap` for lines was spent), with the record's seq, in order.
pub fn unkept_lines(ev: &Bundle) -> Vec<(u64, &StdioUnkept)> {
    ev.stdio_exchanges()
        .filter_map(|(r, x)| x.unkept.as_ref().map(|u| (r.seq, u)))
        .collect()
}
