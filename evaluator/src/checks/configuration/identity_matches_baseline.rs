//! Rule `identity-matches-baseline`: server identity matches the recorded identity.
//!
//! The identity the server asserts
//! (`serverInfo` `name|version`) compared with the identity recorded in a baseline, an
//! earlier verified bundle of the same endpoint. The identity is the session's
//! `serverInfo`: the `initialize` result's on the handshake revisions, and on 2026-07-28
//! the `_meta["io.modelcontextprotocol/serverInfo"]` of the `server/discover` result, from
//! which the collector took it. Because the baseline is a whole bundle rather than one
//! record shared by several checks, the 2026-07-28 identity is compared like any other.
//! docs/checks.md states the rules under the row this rule grades.

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs};
use crate::checks::common::baseline::describe_baseline;
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};

/// Server identity matches the recorded identity.
#[derive(Debug)]
pub struct IdentityMatchesBaseline;

const SUB_A: &str = "a";
const SUB_B: &str = "b";

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "registry export not read: this decides drift against a self-recorded identity \
     (the baseline), not membership of an approved-identity registry, and a registered identity that was not \
     observed is not reported; the client identity is not compared (the probe is the client); serverInfo is \
     self-reported (it names a build, not an authenticated asset); the per-result \
     _meta[\"io.modelcontextprotocol/serverInfo\"] of other results is not reconciled with it (",
    crate::rule_ref!("lifecycle-metadata-recorded"),
    " records it)"
);

/// A server's asserted identity: `name` and, when asserted, `version`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    name: String,
    version: Option<String>,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}|{}",
            escape_line(&self.name),
            escape_line(self.version.as_deref().unwrap_or(""))
        )
    }
}

/// Where the session's identity came from, for the evidence.
fn source(ev: &Bundle) -> &'static str {
    match ev.session().and_then(|s| s.era) {
        Some(Era::Modern) => "server/discover result _meta",
        _ => "initialize result serverInfo",
    }
}

/// The identity `ev` asserts, and sub-verdict a's note on its form (never gating).
fn identity(ev: &Bundle) -> (Option<Identity>, String) {
    let info = ev
        .session()
        .and_then(|s| s.server_info.as_ref())
        .filter(|v| !v.is_null());
    let Some(info) = info else {
        let note = if ev.is_modern() {
            "the server/discover result carries no _meta serverInfo: the server asserts no identity, \
             which the schema permits"
        } else {
            "the initialize result carries no serverInfo: the server asserts no identity (the handshake \
             schema requires one; a metadata finding)"
        };
        return (None, note.to_string());
    };
    let name = info
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.trim().is_empty());
    let Some(name) = name else {
        let shown = crate::fmt::excerpt(info.to_string().as_bytes(), 160);
        return (
            None,
            crate::format_exact!(
                "serverInfo ({}) carries no usable name: a metadata finding; no identity to compare",
                crate::fmt::Line(&shown.text)
            ),
        );
    };
    let id = Identity {
        name: name.to_string(),
        version: info
            .get("version")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string),
    };
    let mut remarks = Vec::new();
    if id.version.is_none() {
        remarks.push("no version asserted");
    }
    if id.name.contains('|') || id.version.as_deref().is_some_and(|v| v.contains('|')) {
        remarks.push("contains the `|` delimiter, so the name|version pair reads ambiguously");
    }
    if remarks.is_empty() {
        remarks.push("well formed");
    }
    let note = crate::format_exact!(
        "asserts {id} (from the {}): {}",
        source(ev),
        remarks.join("; ")
    );
    (Some(id), note)
}

/// Sub-verdict b: the asserted identity against the baseline's.
fn compare(ev: &Bundle, cx: &Context<'_>, observed: Option<&Identity>) -> SubVerdict {
    let unknown = |note: String| SubVerdict::new(SUB_B, SubOutcome::Unknown, note);
    if cx.updating_baseline {
        let what = observed.map_or_else(|| "no identity".to_string(), |i| i.to_string());
        return unknown(crate::format_exact!(
            "this run records the baseline ({what}); a run that compares nothing cannot pass"
        ));
    }
    let Some(baseline) = cx.baseline else {
        return unknown(
            "no baseline: no --baseline given and none is stored for this endpoint, so there is nothing to \
             compare with; record one with --update-baseline (or give --baseline) and the next run decides"
                .into(),
        );
    };
    if baseline.endpoint() != ev.endpoint() {
        return unknown(crate::format_exact!(
            "the {} is of endpoint {}, not of {}; identities of different endpoints are not compared",
            describe_baseline(baseline),
            crate::fmt::Line(&baseline.endpoint()),
            crate::fmt::Line(&ev.endpoint())
        ));
    }
    let Some(observed) = observed else {
        return unknown("this run observed no identity to compare with the baseline".into());
    };
    let (recorded, _) = identity(baseline);
    let Some(recorded) = recorded else {
        return unknown(crate::format_exact!(
            "the {} recorded no identity to compare {observed} with",
            describe_baseline(baseline)
        ));
    };
    if recorded == *observed {
        SubVerdict::new(
            SUB_B,
            SubOutcome::Pass,
            crate::format_exact!(
                "observed {observed} matches the {} ({recorded})",
                describe_baseline(baseline)
            ),
        )
    } else {
        SubVerdict::new(
            SUB_B,
            SubOutcome::Fail,
            crate::format_exact!(
                "observed {observed} differs from {recorded} recorded in the {}; re-approve with \
                 --update-baseline if the change is intended",
                describe_baseline(baseline)
            ),
        )
    }
}

impl Check for IdentityMatchesBaseline {
    fn id(&self) -> &'static str {
        "identity-matches-baseline"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        // The identity comes from the negotiation (initialize or server/discover), both
        // recorded under endpoint detection.
        Legs::required(&[leg::ENDPOINT_DETECT])
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let (observed, note_a) = identity(ev);
        let sub_a = SubVerdict::new(SUB_A, SubOutcome::Pass, note_a);
        let sub_b = compare(ev, cx, observed.as_ref());
        let baseline_identity = cx
            .baseline
            .and_then(|b| identity(b).0)
            .map(|i| i.to_string());
        let facts = IdentityMatchesBaselineFacts {
            legs: leg_outcomes([&sub_a, &sub_b]),
            server_identity: observed.map(|i| i.to_string()),
            baseline_identity,
            identity_source: source(ev),
        };
        Outcome::from_subs(vec![sub_a, sub_b], REDUCTION)
            .with_records(ev.session().and_then(|s| s.negotiated_in))
            .with_facts(&facts)
    }
}

/// The details of `identity-matches-baseline`, in report order.
#[derive(Debug, Serialize)]
struct IdentityMatchesBaselineFacts {
    /// Leg id → outcome.
    legs: Keyed<String, SubOutcome>,
    /// This run's `name|version`, null when none was asserted.
    server_identity: Option<String>,
    /// The baseline's `name|version`, null without a baseline or an identity in it.
    baseline_identity: Option<String>,
    /// Where the identity was read from.
    identity_source: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::evidence;
    /// The rule graded directly, rendered outside any definition (local names).
    fn run(check: &dyn Check, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
    }
    use crate::verdict::Verdict;
    use serde_json::json;

    fn bundle(rev: &str, info: Option<Value>) -> Bundle {
        crate::fixture::negotiated(rev, json!({"tools": {}}), info)
    }

    fn legacy(name: &str, version: &str) -> Bundle {
        bundle(
            "2025-11-25",
            Some(json!({"name": name, "version": version})),
        )
    }

    /// The rule on `ev` compared with the baseline `base`.
    fn against(base: &Bundle, ev: &Bundle) -> Outcome {
        let cx = Context {
            baseline: Some(base),
            updating_baseline: false,
            ..Context::default()
        };
        run(&IdentityMatchesBaseline, ev, &cx)
    }

    fn sub<'a>(o: &'a Outcome, id: &str) -> &'a SubVerdict {
        o.subs.iter().find(|l| l.id == id).expect("leg present")
    }

    #[test]
    fn unknown_without_baseline() {
        let ev = legacy("srv", "0.1.0");
        let o = run(&IdentityMatchesBaseline, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert_eq!(sub(&o, SUB_A).outcome, SubOutcome::Pass);
        assert!(o.evidence.contains("asserts srv|0.1.0"), "{o:?}");
        assert!(o.evidence.contains("well formed"), "{o:?}");
        assert!(o.evidence.contains("no baseline"), "{o:?}");
        assert!(o.reduction.contains("registry export not read"));
        assert_eq!(o.details["server_identity"], "srv|0.1.0");
        assert!(o.details["baseline_identity"].is_null());
        assert_eq!(o.records, vec![0]);
    }

    #[test]
    fn unknown_when_updating_even_with_a_baseline() {
        let ev = legacy("srv", "0.1.0");
        let cx = Context {
            baseline: Some(&ev),
            updating_baseline: true,
            ..Context::default()
        };
        let o = run(&IdentityMatchesBaseline, &ev, &cx);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(
            o.evidence.contains("records the baseline (srv|0.1.0)"),
            "{o:?}"
        );
        assert!(o.evidence.contains("compares nothing cannot pass"), "{o:?}");
    }

    #[test]
    fn pass_on_same_identity() {
        let base = legacy("srv", "0.1.0");
        let ev = legacy("srv", "0.1.0");
        let o = against(&base, &ev);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(o.evidence.contains("matches the baseline"), "{o:?}");
        assert_eq!(o.details["baseline_identity"], "srv|0.1.0");
    }

    #[test]
    fn fail_on_different_identity_naming_both() {
        let base = legacy("srv", "0.1.0");
        let ev = legacy("srv", "0.2.0");
        let o = against(&base, &ev);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(o.evidence.contains("observed srv|0.2.0"), "{o:?}");
        assert!(o.evidence.contains("srv|0.1.0 recorded"), "{o:?}");
        assert!(o.evidence.contains("--update-baseline"), "{o:?}");
    }

    #[test]
    fn modern_identity_from_discover_meta() {
        let info = Some(json!({"name": "m", "version": "2"}));
        let base = bundle("2026-07-28", info.clone());
        let ev = bundle("2026-07-28", info);
        let o = against(&base, &ev);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(o.evidence.contains("server/discover result _meta"), "{o:?}");
    }

    #[test]
    fn baseline_without_identity_is_unknown() {
        let base = bundle("2026-07-28", None);
        let ev = legacy("srv", "0.1.0");
        let o = against(&base, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("recorded no identity"), "{o:?}");
    }

    #[test]
    fn no_identity_this_run_is_unknown_and_a_is_a_finding() {
        let base = legacy("srv", "0.1.0");
        let ev = bundle("2025-11-25", None);
        let o = against(&base, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert_eq!(sub(&o, SUB_A).outcome, SubOutcome::Pass);
        assert!(o.evidence.contains("carries no serverInfo"), "{o:?}");
        assert!(o.evidence.contains("observed no identity"), "{o:?}");

        let nameless = bundle("2025-11-25", Some(json!({"version": "1"})));
        let o = against(&base, &nameless);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("no usable name"), "{o:?}");
    }

    #[test]
    fn form_remarks() {
        let o = run(
            &IdentityMatchesBaseline,
            &bundle("2025-11-25", Some(json!({"name": "a|b"}))),
            &Context::default(),
        );
        assert!(o.evidence.contains("no version asserted"), "{o:?}");
        assert!(o.evidence.contains("`|` delimiter"), "{o:?}");
    }

    #[test]
    fn baseline_of_another_endpoint_is_not_compared() {
        let mut base = legacy("srv", "0.0.9");
        base.payload_mut().target.endpoint = Some("http://127.0.0.1:9999/mcp".into());
        let ev = legacy("srv", "0.1.0");
        let o = against(&base, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("not of"), "{o:?}");
    }

    #[test]
    fn no_session_is_decided_by_the_runner() {
        let o = run(
            &IdentityMatchesBaseline,
            &evidence(None, Vec::new()),
            &Context::default(),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }
}
