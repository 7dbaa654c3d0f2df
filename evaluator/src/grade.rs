//! The grading runner: every catalogue check on every bundle, the uniform
//! preconditions (a session where the check needs one; every required leg present),
//! and "not graded" for checks this build does not implement (never a made-up verdict).

use crate::catalogue::{Entry, CATALOGUE};
use crate::check::{Check, Context, Needs};
use crate::evidence::Evidence;
use crate::verdict::{Outcome, Verdict};
use mcp_probe_schema::vocab::LegId;

/// One check's result on one bundle.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// The check.
    pub entry: &'static Entry,
    /// `None` when this build does not grade the check.
    pub outcome: Option<Outcome>,
}

/// The implemented check for `id`.
pub fn implemented(id: &str) -> Option<&'static dyn Check> {
    crate::catalogue::entry(id).and_then(|e| e.grader)
}

/// Grade every catalogue check (at `level` or below, when given) on `ev`.
pub fn grade(ev: &Evidence, cx: &Context<'_>, level: Option<u8>) -> Vec<CheckResult> {
    CATALOGUE
        .iter()
        .filter(|e| level.is_none_or(|l| e.level.number() <= l))
        .map(|entry| CheckResult {
            entry,
            outcome: entry.grader.map(|c| run(c, ev, cx)),
        })
        .collect()
}

/// Keep of `results` only what a report prints, for a report over many bundles: each
/// leg's note goes (no report prints it: the evidence text already carries every note,
/// and the JSON report lists each leg's outcome only), and no string or list keeps spare
/// capacity. Verdicts, evidence, reduction, records and details are unchanged.
pub fn compact(results: &mut [CheckResult]) {
    for o in results.iter_mut().filter_map(|r| r.outcome.as_mut()) {
        for l in &mut o.legs {
            l.note = String::new();
            l.id.shrink_to_fit();
        }
        o.legs.shrink_to_fit();
        o.evidence.shrink_to_fit();
        o.reduction.shrink_to_fit();
        o.records.shrink_to_fit();
    }
}

/// ERROR naming `legs`, which this bundle lacks: the runner's answer for a missing
/// required leg, and a check's for a leg it needs only on some paths.
pub fn missing_legs(ev: &Evidence, legs: &[LegId]) -> Outcome {
    let names: Vec<&str> = legs.iter().map(|l| l.as_str()).collect();
    Outcome::single(
        Verdict::Error,
        format!(
            "leg(s) {} missing from this bundle (collected by {} {}, run status {}); re-collect with a \
             collector that records them",
            names.join(", "),
            crate::fmt::line(&ev.payload.collector.name),
            crate::fmt::line(&ev.payload.collector.version),
            ev.payload.run.status.as_str()
        ),
        "",
    )
}

/// Grade one check with the uniform preconditions.
pub fn run(check: &dyn Check, ev: &Evidence, cx: &Context<'_>) -> Outcome {
    let reduction = "";
    if check.needs() == Needs::Session && ev.revision().is_none() {
        let s = ev.session();
        let failure = ev
            .payload
            .run
            .failure
            .clone()
            .unwrap_or_else(|| "no session was established".into());
        return match s {
            Some(s) if s.auth_required && !s.authenticated => Outcome::single(
                Verdict::Unknown,
                format!(
                    "the endpoint answered 401 and the run presented no credential, so nothing past the \
                     challenge was observed ({failure})"
                ),
                reduction,
            ),
            _ => Outcome::single(Verdict::Error, format!("no MCP session: {failure}"), reduction),
        };
    }
    let era = ev.session().and_then(|s| s.era);
    let missing: Vec<LegId> = check
        .legs(era)
        .required
        .iter()
        .copied()
        .filter(|l| !ev.has_leg(*l))
        .collect();
    if !missing.is_empty() {
        return missing_legs(ev, &missing);
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check.grade(ev, cx))) {
        Ok(o) => o,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Outcome::single(Verdict::Error, format!("check raised: {msg}"), reduction)
        }
    }
}
