//! Section 2 checks: transport and connectivity.
//!
//! This module grades 2.1, which is reported only (spec/checks.md §11.2): whether a
//! local, single-user deployment runs over stdio is decided on the host, so the verdict
//! is always N/A and the evidence records what the bundle shows about the transport.
//!
//! It also holds [`reported_only`], the one shape every reported-only check of this
//! build shares (sections 2, 3 and 7): N/A, the reason the recommendation is out of a
//! network probe's reach, and the observations the spec names, stated in the evidence
//! and kept in the details. A reported-only check grades any bundle, even one where no
//! endpoint answered: the observations then say what was not seen.

use super::common::reported::reported_only;
use crate::check::{Check, Context, Legs, Needs};
use crate::evidence::Evidence;
use crate::verdict::Outcome;
use mcp_probe_schema::model::Era;

/// 2.1: stdio preferred for local, single-user servers.
#[derive(Debug)]
pub struct Check2_1;
/// The 2.1 check.
pub static C2_1: Check2_1 = Check2_1;

impl Check for Check2_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        reported_only(
            ev,
            "whether a local, single-user deployment uses stdio is decided on the host (its unit and \
             listener inventory and the operator's transport decision), which a network probe cannot see; \
             a server reached over the network is by construction not a stdio deployment",
            &[],
            "the whole recommendation is host-side: the unit and listener inventory and the transport \
             decision are not read; nothing is probed",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, session};
    use crate::grade::run;
    use crate::verdict::Verdict;
    use serde_json::json;

    #[test]
    fn na_with_transport_on_a_session() {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({}), None)),
            Vec::new(),
        );
        let o = run(&C2_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert!(o.evidence.contains("transport streamable-http"), "{o:?}");
        assert!(o.evidence.contains("host"), "{o:?}");
        assert_eq!(o.details["transport"], "streamable-http");
        assert!(!o.reduction.is_empty());
    }

    #[test]
    fn na_without_any_session() {
        let ev = evidence(None, Vec::new());
        let o = run(&C2_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert!(o.evidence.contains("transport unknown"), "{o:?}");
        assert_eq!(o.details["transport"], "unknown");
    }
}
