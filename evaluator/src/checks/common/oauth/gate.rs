//! The endpoint gate and the outcome pieces the OAuth checks share.

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::{leg, LegId};
use serde_json::{Map, Value};

use crate::check::Legs;
pub(crate) use crate::checks::common::baseline::{baseline_for, describe_baseline};
use crate::checks::common::oauth::facts::Facts;
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::preconditions::missing_legs;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};

/// A list for evidence: JSON array syntax, escaped for one line.
pub(crate) fn json_list(items: &[String]) -> String {
    escape_line(&serde_json::to_string(items).unwrap_or_default())
}

/// A JSON value for evidence, cut at 160 characters.
pub(crate) fn json_excerpt(v: &Value) -> String {
    let s = v.to_string();
    let cut: String = s.chars().take(160).collect();
    let more = if cut.len() < s.len() { "…" } else { "" };
    crate::format_exact!("{}{more}", crate::fmt::Line(&cut))
}

/// ERROR: no endpoint answered.
pub(crate) fn no_endpoint(ev: &Bundle) -> Outcome {
    let failure = ev
        .payload
        .run
        .failure
        .as_deref()
        .map_or_else(|| "no session was recorded".to_string(), escape_line);
    Outcome::single(
        Verdict::Error,
        crate::format_exact!("no MCP endpoint answered, so there is nothing to grade: {failure}"),
        "",
    )
}

/// The legs a check gated on the endpoint reads: the first `gated` are needed once an
/// endpoint answered (a bundle without them is ERROR naming them), the rest are read
/// when present.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gated {
    pub(crate) legs: &'static [LegId],
    pub(crate) gated: usize,
}

impl Gated {
    /// The declaration on `era`: with a session the endpoint answered, so a current
    /// collector recorded the gated legs (required); without one the endpoint gate comes
    /// first, so every leg is optional.
    pub(crate) fn legs(&self, era: Option<Era>) -> Legs {
        match era {
            Some(_) => Legs::with_optional(&self.legs[..self.gated], &self.legs[self.gated..]),
            None => Legs::with_optional(&[], self.legs),
        }
    }

    /// The endpoint gate, then the gated legs: [`Facts`], or the outcome that ends the
    /// grading (ERROR: no endpoint, or a gated leg missing).
    pub(crate) fn prelude<'a>(&self, ev: &'a Bundle) -> Result<Facts<'a>, Box<Outcome>> {
        let Some(f) = Facts::new(ev) else {
            return Err(Box::new(no_endpoint(ev)));
        };
        let absent: Vec<LegId> = self.legs[..self.gated]
            .iter()
            .copied()
            .filter(|l| !ev.has_leg(*l))
            .collect();
        if !absent.is_empty() {
            return Err(Box::new(missing_legs(ev, &absent)));
        }
        Ok(f)
    }
}

/// The legs [`Facts`] reads: detection, protected-resource discovery, then the
/// unauthenticated request (sent only when the run presented a credential from the start)
/// and authorization-server discovery (sent per advertised server).
const FACTS_LEGS: &[LegId] = &[leg::ENDPOINT_DETECT, leg::PRM, leg::AUTH_NONE, leg::AS_META];

/// [`FACTS_LEGS`] with detection needed past the gate (`short-lived-tokens`: discovery read
/// when present).
pub(crate) const DETECTION: Gated = Gated {
    legs: FACTS_LEGS,
    gated: 1,
};

/// [`FACTS_LEGS`] with detection and protected-resource discovery needed past the gate
/// (`no-token-passthrough`, `oauth-discovery-validated`: "no OAuth" needs the observed
/// absence of metadata).
pub(crate) const DISCOVERY: Gated = Gated {
    legs: FACTS_LEGS,
    gated: 2,
};

/// Each leg's outcome keyed by a reference to the leg ([`crate::refs::here`]), which the
/// runner renders as the row's sub-verdict (`3.3.2a`); an already numbered id is kept.
pub(crate) fn legs_map(legs: &[SubVerdict]) -> Map<String, Value> {
    legs.iter()
        .map(|l| {
            let key = if l.id.starts_with(|c: char| c.is_ascii_digit()) {
                l.id.clone()
            } else {
                crate::refs::here(&l.id)
            };
            (key, serde_json::to_value(l.outcome).unwrap_or(Value::Null))
        })
        .collect()
}

/// Per-item outcomes as one leg, combined by the one rule ([`crate::verdict::combine`]).
pub(crate) fn combine(id: &str, parts: Vec<(SubOutcome, String)>) -> SubVerdict {
    let outcome = crate::verdict::combine(parts.iter().map(|(o, _)| o.part())).sub();
    let note = parts
        .into_iter()
        .map(|(_, n)| n)
        .collect::<Vec<_>>()
        .join("; ");
    SubVerdict::new(id, outcome, note)
}
