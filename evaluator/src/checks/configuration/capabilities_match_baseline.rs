//! Rule `capabilities-match-baseline`: advertised capability configuration matches the
//! recorded baseline.
//!
//! The capabilities the server advertised on this run (the `initialize` result's on the
//! handshake revisions, the `server/discover` result's on 2026-07-28), compared with
//! those of a baseline bundle of the same endpoint value by value: every leaf of the
//! capabilities object counts, nested settings included, not only the names. Sub-verdict b
//! lists tool, resource and prompt names new since the baseline; it is evidence only.
//! No request is sent for it. docs/checks.md states the rules under the row this rule
//! grades.

use std::collections::BTreeMap;

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs};
use crate::checks::common::baseline::{baseline_for, describe_baseline};
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::shared_items::SharedItems;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::tape::Json;

/// Advertised capability configuration matches the recorded baseline.
#[derive(Debug)]
pub struct CapabilitiesMatchBaseline;

const SUB_A: &str = "a";
const SUB_B: &str = "b";

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "compared against the probe's own recorded baseline, not a registry-approved \
     configuration under change control; only what the server advertises is compared (what it would do \
     beyond its advertisement is ",
    crate::rule_ref!("new-tools-gated"),
    "'s); a withdrawal is reported, not failed"
);

/// Every leaf of a capabilities object: dotted path → value. An empty object is a leaf
/// (`tools: {}` advertises the capability with no settings).
pub(crate) fn leaves(caps: &Value) -> BTreeMap<String, Value> {
    fn walk(v: &Value, path: &str, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        crate::format_exact!("{path}.{k}")
                    };
                    walk(x, &p, out);
                }
            }
            _ => {
                out.insert(path.to_string(), v.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Value::Object(m) = caps {
        for (k, x) in m {
            walk(x, k, &mut out);
        }
    }
    out
}

/// The capabilities `ev` advertised, only when a session was negotiated.
fn advertised(ev: &Bundle) -> Option<&Value> {
    ev.revision().and(ev.capabilities())
}

/// Which result the capabilities came from (the "substrate").
fn substrate(ev: &Bundle) -> &'static str {
    match ev.session().and_then(|s| s.era) {
        Some(Era::Modern) => "server/discover result",
        _ => "initialize result",
    }
}

fn path_value(path: &str, v: &Value) -> String {
    let text = crate::fmt::excerpt(v.to_string().as_bytes(), 80);
    crate::format_exact!(
        "{}={}",
        crate::fmt::Line(path),
        crate::fmt::Line(&text.text)
    )
}

/// Sub-verdict a: the advertised capabilities against the baseline's.
fn sub_a(ev: &Bundle, cx: &Context<'_>, now: Option<&BTreeMap<String, Value>>) -> SubVerdict {
    let unknown = |note: String| SubVerdict::new(SUB_A, SubOutcome::Unknown, note);
    let Some(now) = now else {
        return unknown("this run observed no capabilities object, so nothing was compared".into());
    };
    let b = match baseline_for(
        ev,
        cx,
        SUB_A,
        &crate::format_exact!("{} capability leaves", now.len()),
    ) {
        Ok(b) => b,
        Err(l) => return l,
    };
    let Some(then) = advertised(b).map(leaves) else {
        return unknown(crate::format_exact!(
            "the {} recorded no capabilities object",
            describe_baseline(b)
        ));
    };
    if substrate(b) != substrate(ev) {
        return unknown(crate::format_exact!(
            "the {} holds the capabilities of the {}, this run those of the {}: two different objects, \
             not drift",
            describe_baseline(b),
            substrate(b),
            substrate(ev)
        ));
    }
    let added: Vec<String> = now
        .iter()
        .filter(|(k, _)| !then.contains_key(*k))
        .map(|(k, v)| path_value(k, v))
        .collect();
    let changed: Vec<String> = now
        .iter()
        .filter_map(|(k, v)| {
            let old = then.get(k)?;
            (old != v).then(|| {
                crate::format_exact!(
                    "{} (was {})",
                    path_value(k, v),
                    crate::fmt::Line(&old.to_string())
                )
            })
        })
        .collect();
    let withdrawn: Vec<String> = then
        .iter()
        .filter(|(k, _)| !now.contains_key(*k))
        .map(|(k, v)| path_value(k, v))
        .collect();
    let list = |label: &str, v: &[String]| {
        (!v.is_empty()).then(|| crate::format_exact!("{label}: {}", v.join(", ")))
    };
    let parts: Vec<String> = [
        list("unapproved", &added),
        list("changed", &changed),
        list("withdrawn", &withdrawn),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !added.is_empty() || !changed.is_empty() {
        return SubVerdict::new(
            SUB_A,
            SubOutcome::Fail,
            crate::format_exact!(
                "advertised capabilities differ from the {}: {}; re-approve with --update-baseline if the \
                 change is intended",
                describe_baseline(b),
                parts.join("; ")
            ),
        );
    }
    if !withdrawn.is_empty() && now.is_empty() {
        return unknown(crate::format_exact!(
            "every capability of the {} is withdrawn ({}): more likely a failed read than a \
             reconfiguration",
            describe_baseline(b),
            withdrawn.join(", ")
        ));
    }
    let tail = if withdrawn.is_empty() {
        String::new()
    } else {
        crate::format_exact!("; {}", parts.join("; "))
    };
    SubVerdict::new(
        SUB_A,
        SubOutcome::Pass,
        crate::format_exact!(
            "the {} advertised capability leaves are within the {}{tail}",
            now.len(),
            describe_baseline(b)
        ),
    )
}

/// Tool names, resource URIs and prompt names of `ev`'s inventory.
fn names(ev: &Bundle) -> [(&'static str, Vec<String>); 3] {
    let of = |items: &SharedItems, key: &str| -> Vec<String> {
        items
            .iter()
            .filter_map(|i| i.get(key).and_then(Json::as_str).map(str::to_string))
            .collect()
    };
    let inv = &ev.inventory;
    [
        ("tools", of(&inv.tools.items, "name")),
        ("resources", of(&inv.resources.items, "uri")),
        ("prompts", of(&inv.prompts.items, "name")),
    ]
}

/// Sub-verdict b: names new since the baseline (evidence only; `new-tools-gated` is where
/// a new tool is exercised).
fn sub_b(ev: &Bundle, cx: &Context<'_>) -> SubVerdict {
    let observed = |note: String| SubVerdict::new(SUB_B, SubOutcome::Observed, note);
    let Some(b) = cx.baseline.filter(|b| b.endpoint() == ev.endpoint()) else {
        return observed("no baseline of this endpoint to list new names against".into());
    };
    let then = names(b);
    let mut new = Vec::new();
    for ((kind, now), (_, before)) in names(ev).iter().zip(then.iter()) {
        let fresh: Vec<String> = now
            .iter()
            .filter(|n| !before.contains(n))
            .map(|n| escape_line(n))
            .collect();
        if !fresh.is_empty() {
            new.push(crate::format_exact!("{kind} {}", fresh.join(", ")));
        }
    }
    if new.is_empty() {
        observed(crate::format_exact!(
            "no tool, resource or prompt is new since the {}",
            describe_baseline(b)
        ))
    } else {
        observed(crate::format_exact!(
            "new since the {}: {}",
            describe_baseline(b),
            new.join("; ")
        ))
    }
}

impl Check for CapabilitiesMatchBaseline {
    fn id(&self) -> &'static str {
        "capabilities-match-baseline"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        // The capabilities come from the negotiation; the names from the inventory pages
        // (read through the inventory derived at load).
        Legs::with_optional(
            &[leg::ENDPOINT_DETECT],
            &[
                leg::INVENTORY_TOOLS,
                leg::INVENTORY_RESOURCES,
                leg::INVENTORY_PROMPTS,
            ],
        )
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let now = advertised(ev).map(leaves);
        let a = sub_a(ev, cx, now.as_ref());
        let b = sub_b(ev, cx);
        let facts = CapabilitiesMatchBaselineFacts {
            legs: leg_outcomes([&a, &b]),
            capability_leaves_advertised: now.as_ref().map(BTreeMap::len),
            capability_substrate: substrate(ev),
        };
        Outcome::from_subs(vec![a, b], REDUCTION)
            .with_records(ev.session().and_then(|s| s.negotiated_in))
            .with_facts(&facts)
    }
}

/// The details of `capabilities-match-baseline`, in report order.
#[derive(Debug, Serialize)]
struct CapabilitiesMatchBaselineFacts {
    /// Leg id → outcome.
    legs: Keyed<String, SubOutcome>,
    /// How many capability leaves this run advertised; null when none was observed.
    capability_leaves_advertised: Option<usize>,
    /// The result the capabilities were read from.
    capability_substrate: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The rule graded directly, rendered outside any definition (local names).
    fn run(check: &dyn Check, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
    }
    use crate::verdict::Verdict;
    use serde_json::json;

    fn bundle(rev: &str, caps: Value) -> Bundle {
        crate::fixture::negotiated(rev, caps, None)
    }

    fn against(now: &Bundle, base: &Bundle) -> Outcome {
        run(
            &CapabilitiesMatchBaseline,
            now,
            &Context {
                baseline: Some(base),
                ..Context::default()
            },
        )
    }

    fn sub<'a>(o: &'a Outcome, id: &str) -> &'a SubVerdict {
        o.subs.iter().find(|l| l.id == id).expect("leg")
    }

    const BASE: &str = "2025-11-25";

    #[test]
    fn leaves_are_dotted_and_empty_objects_count() {
        let l =
            leaves(&json!({"tools": {"listChanged": true}, "logging": {}, "x": {"y": {"z": 1}}}));
        let keys: Vec<&str> = l.keys().map(String::as_str).collect();
        assert_eq!(keys, ["logging", "tools.listChanged", "x.y.z"]);
    }

    #[test]
    fn no_baseline_or_recording_is_unknown() {
        let ev = bundle(BASE, json!({"tools": {}}));
        let o = run(&CapabilitiesMatchBaseline, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(sub(&o, "a").note.contains("no baseline"), "{o:?}");
        let o = run(
            &CapabilitiesMatchBaseline,
            &ev,
            &Context {
                updating_baseline: true,
                ..Context::default()
            },
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(sub(&o, "a")
            .note
            .contains("records the baseline (1 capability leaves)"));
        assert_eq!(o.details["capability_leaves_advertised"], 1);
    }

    #[test]
    fn a_changed_or_added_leaf_fails_value_by_value() {
        let base = bundle(BASE, json!({"tools": {"listChanged": false}}));
        let o = against(
            &bundle(BASE, json!({"tools": {"listChanged": true}})),
            &base,
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            sub(&o, "a")
                .note
                .contains("changed: tools.listChanged=true (was false)"),
            "{o:?}"
        );
        let o = against(
            &bundle(
                BASE,
                json!({"tools": {"listChanged": false}, "resources": {"subscribe": true}}),
            ),
            &base,
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            sub(&o, "a")
                .note
                .contains("unapproved: resources.subscribe=true"),
            "{o:?}"
        );
    }

    #[test]
    fn the_same_configuration_passes_and_withdrawals_are_named() {
        let base = bundle(BASE, json!({"tools": {"listChanged": true}, "prompts": {}}));
        let o = against(
            &bundle(BASE, json!({"tools": {"listChanged": true}, "prompts": {}})),
            &base,
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        let o = against(
            &bundle(BASE, json!({"tools": {"listChanged": true}})),
            &base,
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(sub(&o, "a").note.contains("withdrawn: prompts={}"), "{o:?}");
        // Everything withdrawn reads as a failed read, not a pass.
        let o = against(&bundle(BASE, json!({})), &base);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    }

    #[test]
    fn another_substrate_or_endpoint_is_not_drift() {
        let base = bundle(BASE, json!({"tools": {}}));
        let o = against(&bundle("2026-07-28", json!({"tools": {}, "x": {}})), &base);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(sub(&o, "a").note.contains("not drift"), "{o:?}");
    }

    #[test]
    fn the_examples_pass_against_themselves() {
        for ev in crate::fixture::example_bundles() {
            if ev.revision().is_none() {
                continue;
            }
            let o = against(&ev, &ev);
            assert_eq!(o.verdict, Verdict::Pass, "{}: {o:?}", ev.path);
            assert_eq!(sub(&o, "b").outcome, SubOutcome::Observed);
        }
    }
}
