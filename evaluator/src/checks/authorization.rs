//! Authentication and authorization rules.
//!
//! The graded rules each have their file under `authorization/`: `short-lived-tokens`,
//! `no-token-passthrough`, `audience-bound-tokens`, `oauth-discovery-validated`,
//! `scopes-minimized` and `static-client-safeguards`, with the OAuth reading they share in
//! `common::oauth`; `stdio-credentials` (its own file) reads the launch command line of a
//! stdio bundle. This file holds the three reported-only rules of the section:
//! `per-tool-authorization`, `annotations-not-authorization` and
//! `no-shared-downstream-identity` (docs/checks.md). Each is always N/A, because what it
//! governs is host-side or binds the consumer rather than the server; each records what
//! the bundle shows that bears on it. `per-tool-authorization` and
//! `annotations-not-authorization` read the tool inventory across every page
//! (`inventory.tools`), keeping "not listed" apart from "listed, none": an unobserved list
//! is never reported as an empty one.

pub mod stdio_credentials;
pub use stdio_credentials::StdioCredentials;
pub mod audience_bound_tokens;
pub mod no_token_passthrough;
pub mod oauth_discovery_validated;
pub mod scopes_minimized;
pub mod short_lived_tokens;
pub mod static_client_safeguards;

use mcp_probe_schema::vocab::leg;

use super::common::reported::{nothing, Observed, ReportedOnly};
use crate::check::{Context, Legs};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::shared_items::SharedItems;

/// The tool annotations `annotations-not-authorization` counts (the MCP tool annotations),
/// in the specification's order.
const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// What the bundle shows about the tool list.
enum ToolsListed<'a> {
    /// No page of `tools/list` answered (never requested, skipped, or refused).
    NotListed(String),
    /// Items of every page read; `incomplete` says why reading stopped early.
    Listed {
        tools: &'a SharedItems,
        pages: u32,
        incomplete: Option<String>,
    },
}

impl ToolsListed<'_> {
    fn of(ev: &Bundle) -> ToolsListed<'_> {
        let inv = &ev.inventory.tools;
        if !inv.observed {
            return ToolsListed::NotListed("the bundle holds no tools/list exchange".into());
        }
        if inv.pages == 0 {
            let why = inv
                .stopped
                .as_deref()
                .map_or_else(|| "no page answered".to_string(), escape_line);
            return ToolsListed::NotListed(why);
        }
        ToolsListed::Listed {
            tools: &inv.items,
            pages: inv.pages,
            incomplete: (!inv.complete).then(|| {
                inv.stopped.as_deref().map_or_else(
                    || "the last page read had a nextCursor".to_string(),
                    escape_line,
                )
            }),
        }
    }

    /// The count for `tools_listed`: `None` when not listed (distinct from 0).
    fn count(&self) -> Option<usize> {
        match self {
            ToolsListed::NotListed(_) => None,
            ToolsListed::Listed { tools, .. } => Some(tools.len()),
        }
    }

    /// "3 tools listed across 2 pages" / "tools not listed (…)".
    fn observation(&self) -> String {
        match self {
            ToolsListed::NotListed(why) => crate::format_exact!("tools not listed ({why})"),
            ToolsListed::Listed {
                tools,
                pages,
                incomplete,
            } => {
                let n = tools.len();
                let mut s = crate::format_exact!(
                    "{n} tool{} listed across {pages} page{}",
                    if n == 1 { "" } else { "s" },
                    if *pages == 1 { "" } else { "s" }
                );
                if let Some(why) = incomplete {
                    s.push_str(&crate::format_exact!(
                        " (listing incomplete, so at least that many: {why})"
                    ));
                }
                s
            }
        }
    }
}

/// Rule `per-tool-authorization`: per-tool authorization enforced.
pub static PER_TOOL_AUTHORIZATION: ReportedOnly = ReportedOnly {
    id: "per-tool-authorization",
    reduction: "the whole recommendation is decided by the operator: no second credential, no privileged \
             tool invocation and no decision log are used; the tool count is recorded for the reviewer",
    legs: TOOLS_LEG,
    observe: observe_tool_count,
};

/// The tool list, read when the collector listed tools (it does not when no session was
/// negotiated or the capabilities advertise none).
const TOOLS_LEG: Legs = Legs::with_optional(&[], &[leg::INVENTORY_TOOLS]);

/// The tool count, kept apart from "not listed".
fn observe_tool_count(ev: &Bundle, _cx: &Context<'_>) -> Observed {
    let listed = ToolsListed::of(ev);
    let mut details = crate::details::Details::new();
    details.insert("tools_listed".into(), listed.count().into());
    Observed {
        notes: vec![listed.observation()],
        details,
        records: ev.seqs(leg::INVENTORY_TOOLS),
    }
}

/// Rule `annotations-not-authorization`: tool annotations not relied upon for authorization
/// / HITL gating.
pub static ANNOTATIONS_NOT_AUTHORIZATION: ReportedOnly = ReportedOnly {
    id: "annotations-not-authorization",
    reduction: "the whole recommendation binds the consumer: how a client, host or gateway gates tool calls \
             is not observed; annotation counts are recorded for the reviewer",
    legs: TOOLS_LEG,
    observe: observe_annotations,
};

/// How many of `tools` assert each of [`HINTS`] (a non-null value under `annotations`).
fn hint_counts(tools: &SharedItems) -> [usize; 4] {
    HINTS.map(|hint| {
        tools
            .iter()
            .filter(|t| {
                t.get("annotations")
                    .and_then(|a| a.get(hint))
                    .is_some_and(|v| !v.is_null())
            })
            .count()
    })
}

/// The tool count and, per hint, how many listed tools assert it.
fn observe_annotations(ev: &Bundle, _cx: &Context<'_>) -> Observed {
    let listed = ToolsListed::of(ev);
    let counts = match &listed {
        ToolsListed::Listed { tools, .. } => Some(hint_counts(tools)),
        ToolsListed::NotListed(_) => None,
    };
    let mut notes = vec![listed.observation()];
    if let (Some(c), Some(n)) = (counts, listed.count()) {
        let per_hint: Vec<String> = HINTS
            .iter()
            .zip(c)
            .map(|(h, k)| crate::format_exact!("{h} by {k}"))
            .collect();
        notes.push(crate::format_exact!(
            "of the {n} listed, annotations assert {}",
            per_hint.join(", ")
        ));
    }
    let mut details = crate::details::Details::new();
    details.insert("tools_listed".into(), listed.count().into());
    for (i, hint) in HINTS.iter().enumerate() {
        details.insert((*hint).into(), counts.map(|c| c[i]).into());
    }
    Observed {
        notes,
        details,
        records: ev.seqs(leg::INVENTORY_TOOLS),
    }
}

/// Rule `no-shared-downstream-identity`: no shared downstream service identities.
pub static NO_SHARED_DOWNSTREAM_IDENTITY: ReportedOnly = ReportedOnly {
    id: "no-shared-downstream-identity",
    reduction:
        "the whole recommendation is host-side: the identity inventory and per-server credential \
             configuration are not read; nothing is probed",
    legs: Legs::NONE,
    observe: nothing,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Check;
    use crate::fixture::{evidence, list_page, session, skipped};
    use serde_json::Value;
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

    fn modern(records: Vec<mcp_probe_schema::model::Record>) -> Bundle {
        evidence(
            Some(session(Some("2026-07-28"), json!({"tools": {}}), None)),
            records,
        )
    }

    fn tools_page(id: i64, tools: Value, next: Option<&str>) -> mcp_probe_schema::model::Record {
        let mut result = json!({ "tools": tools });
        if let Some(c) = next {
            result["nextCursor"] = json!(c);
        }
        list_page(leg::INVENTORY_TOOLS, "tools/list", id, result)
    }

    #[test]
    fn host_side_checks_are_na_on_any_bundle() {
        for ev in [modern(Vec::new()), evidence(None, Vec::new())] {
            for c in [
                &StdioCredentials as &dyn Check,
                &NO_SHARED_DOWNSTREAM_IDENTITY,
            ] {
                let o = run(c, &ev, &Context::default());
                assert_eq!(o.verdict, Verdict::NotApplicable, "{} is host-side", c.id());
                assert!(o.reduction.contains("host-side"), "{o:?}");
                assert!(o.evidence.starts_with("reported only: "), "{o:?}");
                assert!(o.evidence.contains("transport "), "{o:?}");
                assert!(o.details.contains_key("transport"));
            }
        }
    }

    #[test]
    fn tools_listed_across_pages() {
        let ev = modern(vec![
            tools_page(1, json!([{"name": "a"}, {"name": "b"}]), Some("p2")),
            tools_page(2, json!([{"name": "c"}]), None),
        ]);
        let o = run(
            &PER_TOOL_AUTHORIZATION,
            &ev,
            &crate::fixture::cx("per-tool-authorization"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert!(
            o.evidence.contains("3 tools listed across 2 pages"),
            "{o:?}"
        );
        assert!(o.evidence.contains("least-privileged credential"), "{o:?}");
        assert_eq!(o.details["tools_listed"], 3);
        assert_eq!(o.records, vec![0, 1]);
    }

    #[test]
    fn not_listed_is_not_zero() {
        let none = run(
            &PER_TOOL_AUTHORIZATION,
            &modern(Vec::new()),
            &crate::fixture::cx("per-tool-authorization"),
        );
        assert!(none.evidence.contains("tools not listed"), "{none:?}");
        assert!(none.details["tools_listed"].is_null());

        let skip = modern(vec![skipped(
            &[leg::INVENTORY_TOOLS],
            "not requested: the capabilities advertise no tools",
        )]);
        let o = run(
            &PER_TOOL_AUTHORIZATION,
            &skip,
            &crate::fixture::cx("per-tool-authorization"),
        );
        assert!(
            o.evidence.contains("tools not listed (not requested"),
            "{o:?}"
        );
        assert!(o.details["tools_listed"].is_null());

        let empty = modern(vec![tools_page(1, json!([]), None)]);
        let o = run(
            &PER_TOOL_AUTHORIZATION,
            &empty,
            &crate::fixture::cx("per-tool-authorization"),
        );
        assert!(o.evidence.contains("0 tools listed across 1 page"), "{o:?}");
        assert_eq!(o.details["tools_listed"], 0);
    }

    #[test]
    fn incomplete_listing_says_at_least() {
        let ev = modern(vec![tools_page(1, json!([{"name": "a"}]), Some("p2"))]);
        let o = run(
            &PER_TOOL_AUTHORIZATION,
            &ev,
            &crate::fixture::cx("per-tool-authorization"),
        );
        assert!(o.evidence.contains("1 tool listed across 1 page"), "{o:?}");
        assert!(o.evidence.contains("at least"), "{o:?}");
    }

    #[test]
    fn annotation_counts() {
        let tools = json!([
            {"name": "r", "annotations": {"readOnlyHint": true, "openWorldHint": false}},
            {"name": "d", "annotations": {"destructiveHint": true, "idempotentHint": false, "readOnlyHint": false}},
            {"name": "n", "annotations": {"readOnlyHint": null}},
            {"name": "bare"}
        ]);
        let ev = modern(vec![tools_page(1, tools, None)]);
        let o = run(
            &ANNOTATIONS_NOT_AUTHORIZATION,
            &ev,
            &crate::fixture::cx("annotations-not-authorization"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert_eq!(o.details["tools_listed"], 4);
        assert_eq!(o.details["readOnlyHint"], 2);
        assert_eq!(o.details["destructiveHint"], 1);
        assert_eq!(o.details["idempotentHint"], 1);
        assert_eq!(o.details["openWorldHint"], 1);
        assert!(
            o.evidence.contains(
                "of the 4 listed, annotations assert readOnlyHint by 2, destructiveHint by 1, \
                 idempotentHint by 1, openWorldHint by 1"
            ),
            "{o:?}"
        );
        assert!(o.evidence.contains("consumer"), "{o:?}");
    }

    #[test]
    fn annotation_counts_absent_when_not_listed() {
        let o = run(
            &ANNOTATIONS_NOT_AUTHORIZATION,
            &evidence(None, Vec::new()),
            &crate::fixture::cx("annotations-not-authorization"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert!(o.details["readOnlyHint"].is_null());
        assert!(o.details["tools_listed"].is_null());
        assert!(o.evidence.contains("tools not listed"), "{o:?}");
        assert!(!o.evidence.contains("annotations assert"), "{o:?}");
    }
}
