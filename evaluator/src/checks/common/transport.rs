//! What the legacy HTTP+SSE transport (2024-11-05) can and cannot show, per check
//! (docs/checks.md, "HTTP+SSE: what the transport shows").
//!
//! Answers are read in one place for every check: a POST's JSON-RPC messages are the
//! events of the stream that belong to it (`Bundle` links them through
//! `mcp_probe_schema::derive::stream_answers`), so a check that reads answers finds
//! them on the stream without knowing it. What stays transport-specific is what a
//! check concludes from HTTP mechanics that this transport does not have (session and
//! version headers, the 2026-07-28 routing headers, a response stream per request):
//! each such rule states it ([`Check::on_http_sse`]) and the runner adds it to the
//! reduction, naming the transport, so the report says what this transport could not show.

use crate::check::Check;
use crate::evidence::Bundle;
use crate::verdict::Outcome;

/// `o` with the rule's own HTTP+SSE sentence ([`Check::on_http_sse`]) added to its
/// reduction when `ev` is an HTTP+SSE bundle.
pub fn qualify(rule: &dyn Check, ev: &Bundle, mut o: Outcome) -> Outcome {
    if !ev.is_sse() {
        return o;
    }
    if let Some(r) = rule.on_http_sse() {
        let reduction = o.reduction.to_mut();
        if !reduction.is_empty() {
            reduction.push_str("; ");
        }
        reduction.push_str(r);
    }
    o
}
