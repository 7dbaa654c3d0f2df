//! Reported-only checks as data. A recommendation that is wholly operator-side is
//! always N/A: a [`ReportedOnly`] value names why no network probe can decide it, what
//! part of the recommendation is out of reach, and a function that gathers what the
//! bundle does show (the observations), so a reader sees the evidence next to the N/A.
//! A reported-only check grades any bundle, even one where no endpoint answered: the
//! observations then say what was not seen.

use crate::check::{Check, Context, Legs, Needs};
use crate::details::Details;
use crate::evidence::Bundle;
use crate::fmt::escape_line_into;
use crate::verdict::{Outcome, Verdict};
use mcp_probe_schema::model::Era;

/// What a reported-only check observed in one bundle.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Observed {
    /// Observations, in order, each a short sentence.
    pub notes: Vec<String>,
    /// Facts kept in the report's details (besides `transport`, which every one has).
    pub details: Details,
    /// Records the observations were read from.
    pub records: Vec<u64>,
}

/// One reported-only check.
#[derive(Debug, Clone, Copy)]
pub struct ReportedOnly {
    /// The rule's stable id.
    pub id: &'static str,
    /// What part of the recommendation a black-box probe cannot reach.
    pub reduction: &'static str,
    /// The legs `observe` reads.
    pub legs: Legs,
    /// What the bundle shows that bears on the recommendation.
    pub observe: fn(&Bundle, &Context<'_>) -> Observed,
}

/// For a reported-only check with nothing to observe besides the transport.
pub fn nothing(_ev: &Bundle, _cx: &Context<'_>) -> Observed {
    Observed::default()
}

impl Check for ReportedOnly {
    fn id(&self) -> &'static str {
        self.id
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        self.legs
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let seen = (self.observe)(ev, cx);
        reported_only_with(ev, reason(cx), &seen.notes, self.reduction, seen.details)
            .with_records(seen.records)
    }
}

/// Why the recommendation is out of a network probe's reach: the benchmark definition's
/// `unreached` for the check (every reported-only row states one).
pub fn reason<'a>(cx: &Context<'a>) -> &'a str {
    cx.unreached
        .unwrap_or("the benchmark definition states no reason for this check")
}

/// An N/A outcome for a reported-only check: `reason` says why the recommendation is
/// operator-side, then the transport observation and `observations` follow, in that
/// order, in the evidence. Details carry `transport`.
pub fn reported_only(
    ev: &Bundle,
    reason: &str,
    observations: &[String],
    reduction: &'static str,
) -> Outcome {
    reported_only_with(ev, reason, observations, reduction, Details::new())
}

/// [`reported_only`], with `details` after `transport` in the details: the details are made
/// once with room for all of them.
fn reported_only_with(
    ev: &Bundle,
    reason: &str,
    observations: &[String],
    reduction: &'static str,
    details: Details,
) -> Outcome {
    // `reported only: <reason>; <transport>; <observation>; …`, written into one string.
    let mut evidence = String::with_capacity(
        128 + reason.len() + observations.iter().map(|o| o.len() + 2).sum::<usize>(),
    );
    evidence.push_str("reported only: ");
    evidence.push_str(reason);
    evidence.push_str("; ");
    push_transport_observation(ev, &mut evidence);
    for o in observations {
        evidence.push_str("; ");
        evidence.push_str(o);
    }
    let mut o = Outcome::single(Verdict::NotApplicable, evidence, reduction);
    o.details = Details::with_capacity(1 + details.len());
    o.details.insert("transport".into(), ev.transport().into());
    o.details.extend(details);
    o
}

/// "transport streamable-http (endpoint …)" or "transport unknown (no MCP endpoint …)",
/// appended to `out`.
fn push_transport_observation(ev: &Bundle, out: &mut String) {
    out.push_str("transport ");
    out.push_str(ev.transport());
    match &ev.payload.target.endpoint {
        Some(endpoint) => {
            out.push_str(" (endpoint ");
            escape_line_into(out, endpoint);
        }
        None => {
            out.push_str(" (no MCP endpoint answered for target ");
            escape_line_into(out, &ev.payload.target.as_typed);
        }
    }
    out.push(')');
}
