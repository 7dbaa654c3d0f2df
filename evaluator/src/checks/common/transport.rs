//! What the legacy HTTP+SSE transport (2024-11-05) can and cannot show, per check
//! (docs/checks.md, "HTTP+SSE: what the transport shows").
//!
//! Answers are read in one place for every check: a POST's JSON-RPC messages are the
//! events of the stream that belong to it (`Evidence` links them through
//! `mcp_probe_schema::derive::stream_answers`), so a check that reads answers finds
//! them on the stream without knowing it. What stays transport-specific is what a
//! check concludes from HTTP mechanics that this transport does not have (session and
//! version headers, the 2026-07-28 routing headers, a response stream per request):
//! the runner adds the sentence below to the reduction of each such check, naming the
//! transport, so the report says what this transport could not show.

use crate::evidence::Evidence;
use crate::verdict::Outcome;

/// The sentence added to the reduction of rule `rule` (its id) on an HTTP+SSE bundle, if the transport
/// changes what the check can observe.
pub fn sse_reduction(rule: &str) -> Option<&'static str> {
    Some(match rule {
        "revisions-pinned" => {
            "on HTTP+SSE (2024-11-05) each probe is a POST to the message URL the stream's endpoint \
             event named, answered on the stream; the transport has no MCP-Protocol-Version header"
        }
        "auth-before-stream" => {
            "on HTTP+SSE (2024-11-05) no response stream is scoped to a request: every answer \
             arrives on the session's one event stream, opened by a GET (leg endpoint.sse) before \
             any request, and a POST draws only an acknowledgement"
        }
        "metadata-headers" => {
            "HTTP+SSE (2024-11-05) defines none of the request metadata headers (Mcp-Method, \
             Mcp-Name)"
        }
        "origin-validated" => {
            "on HTTP+SSE (2024-11-05) the Origin legs are POSTs to the message URL; the stream's \
             GET was sent without an Origin and was not probed with a hostile one"
        }
        "legacy-session-disabled" => {
            "HTTP+SSE (2024-11-05) has no Mcp-Session-Id, standalone GET or resumption: its \
             session is the event stream and the session parameter of its message URL"
        }
        "null-id-rejected" => {
            "on HTTP+SSE (2024-11-05) the POST is acknowledged before the server reads it: a \
             refusal arrives as an event on the stream, and an acknowledged request that draws no \
             answer within --timeout shows no refusal"
        }
        "notification-identity" => {
            "on HTTP+SSE (2024-11-05) notifications arrive on the session's one event stream: those \
             read while a call's answer was awaited are counted as that call's"
        }
        "cache-freshness" => {
            "on HTTP+SSE (2024-11-05) a list result arrives on the event stream: 10.1b reads the \
             caching headers of the stream's GET, not of the POST acknowledgement"
        }
        "size-limits" => {
            "on HTTP+SSE (2024-11-05) the padded body is POSTed to the message URL and the status of \
             that POST is graded"
        }
        _ => return None,
    })
}

/// `o` with [`sse_reduction`] added to its reduction when `ev` is an HTTP+SSE bundle.
pub fn qualify(rule: &str, ev: &Evidence, mut o: Outcome) -> Outcome {
    if !ev.is_sse() {
        return o;
    }
    if let Some(r) = sse_reduction(rule) {
        if !o.reduction.is_empty() {
            o.reduction.push_str("; ");
        }
        o.reduction.push_str(r);
    }
    o
}
