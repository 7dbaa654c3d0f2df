//! Transport and connectivity rules.
//!
//! `stdio-preferred` is reported only: whether a local, single-user deployment runs over
//! stdio is decided on the host, so the verdict is always N/A and the evidence records what
//! the bundle shows about the transport. The others are graded from the wire:
//! `tls-required` (TLS required, plaintext disallowed), `auth-before-stream`
//! (authentication before a request-scoped response stream), `metadata-headers` (request
//! metadata headers present and consistent with the body) and `origin-validated` (Origin
//! validated on all requests). docs/checks.md states the rules (Section 2 of CIS MCP Server
//! Benchmark v1.0.0).

pub mod auth_before_stream;
pub mod metadata_headers;
pub mod origin_validated;
pub mod tls_required;

use super::common::reported::{nothing, Observed, ReportedOnly};
use crate::check::Legs;

/// Rule `stdio-preferred`: stdio preferred for local, single-user servers.
pub static STDIO_PREFERRED: ReportedOnly = ReportedOnly {
    id: "stdio-preferred",
    reduction:
        "the whole recommendation is host-side: the unit and listener inventory and the transport \
                decision are not read; nothing is probed",
    legs: Legs::NONE,
    observe: observe_stdio,
};

/// On a stdio bundle: the collector launched the server over stdio, so the server
/// speaks it; whether the deployment runs it that way stays host-side (the verdict stays
/// N/A on every transport: docs/checks.md, under the rule's row).
fn observe_stdio(ev: &crate::evidence::Bundle, cx: &crate::check::Context<'_>) -> Observed {
    if !ev.is_stdio() {
        return nothing(ev, cx);
    }
    Observed {
        notes: vec![
            "the collector launched this server as a local process and spoke to it over stdin and stdout, so \
             it serves the stdio transport; whether the deployment runs it that way, rather than behind a \
             network listener, is not seen"
                .into(),
        ],
        ..Observed::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, session};
    /// The rule graded directly, rendered outside any definition (local names).
    fn run(
        check: &dyn crate::check::Check,
        ev: &crate::evidence::Bundle,
        cx: &crate::check::Context<'_>,
    ) -> crate::verdict::Outcome {
        crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
    }
    use crate::verdict::Verdict;
    use serde_json::json;

    #[test]
    fn na_with_transport_on_a_session() {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({}), None)),
            Vec::new(),
        );
        let o = run(
            &STDIO_PREFERRED,
            &ev,
            &crate::fixture::cx("stdio-preferred"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert!(o.evidence.contains("transport streamable-http"), "{o:?}");
        assert!(o.evidence.contains("host"), "{o:?}");
        assert_eq!(o.details["transport"], "streamable-http");
        assert!(!o.reduction.is_empty());
    }

    #[test]
    fn na_without_any_session() {
        let ev = evidence(None, Vec::new());
        let o = run(
            &STDIO_PREFERRED,
            &ev,
            &crate::fixture::cx("stdio-preferred"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert!(o.evidence.contains("transport unknown"), "{o:?}");
        assert_eq!(o.details["transport"], "unknown");
    }
}
