//! The `Check` trait, the legs a check declares, and the context a check is graded in.
//!
//! This is the kit a rule is written with, beside [`crate::verdict`], [`crate::evidence`]
//! and [`crate::preconditions`]: a rule never imports the registry that lists it
//! ([`crate::rules`]) nor the benchmark definitions that number it ([`crate::benchmark`]).
//! A rule declares the legs it reads ([`Check::legs`]) and its parameters
//! ([`Check::params`]); the runner ([`crate::preconditions::run_rule`]) gives ERROR naming a required
//! leg that a bundle lacks, and the leg contract test fails when a rule reads a leg it did
//! not declare.

use std::collections::BTreeMap;

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::LegId;

use crate::evidence::Bundle;
use crate::verdict::Outcome;

/// Everything besides the bundle that a check may read. Pure data: grading does no I/O.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The rule's parameter values, as the benchmark definition's row states them
    /// (`params`); empty outside a definition (unit tests), where a rule uses the value
    /// its parameter declares as the default ([`ParamSpec::default`]).
    pub params: &'a Params,
    /// Why the recommendation is out of a probe's reach, as the definition's row states it
    /// (`unreached`); reported-only rules print it.
    pub unreached: Option<&'a str>,
    /// An earlier, verified bundle of the same endpoint, if any.
    pub baseline: Option<&'a Bundle>,
    /// This run records new baselines: comparing checks report UNKNOWN.
    pub updating_baseline: bool,
    /// The operator's policy as it applies to this bundle's endpoint (`--policy`).
    pub policy: Option<&'a crate::policy::Applied>,
}

static NO_PARAMS: Params = Params(BTreeMap::new());

impl Default for Context<'_> {
    fn default() -> Self {
        Context {
            params: &NO_PARAMS,
            unreached: None,
            baseline: None,
            updating_baseline: false,
            policy: None,
        }
    }
}

impl Context<'_> {
    /// The integer parameter `spec` of the check's rule: the definition's value, else the
    /// declared default.
    pub fn int(&self, spec: &ParamSpec) -> i64 {
        match self.params.0.get(spec.name) {
            Some(ParamValue::Int(i)) => *i,
            _ => match spec.default {
                ParamValue::Int(i) => i,
                ParamValue::Text(_) => 0,
            },
        }
    }

    /// The text parameter `spec` of the check's rule: the definition's value, else the
    /// declared default.
    pub fn text(&self, spec: &ParamSpec) -> &str {
        match self.params.0.get(spec.name) {
            Some(ParamValue::Text(t)) => t,
            _ => match &spec.default {
                ParamValue::Text(t) => t,
                ParamValue::Int(_) => "",
            },
        }
    }
}

/// A rule parameter's value, as a benchmark definition states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// An integer (`max_token_lifetime_seconds = 3600`).
    Int(i64),
    /// A string (`revision_floor = "2025-06-18"`).
    Text(&'static str),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Text(t) => write!(f, "{t:?}"),
        }
    }
}

/// The parameter values of one check's rule, by name, in name order.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(transparent)]
pub struct Params(pub BTreeMap<&'static str, ParamValue>);

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer within `min..=max`.
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A protocol revision, `YYYY-MM-DD`.
    Revision,
    /// One of a fixed set of words. A definition may leave it out: the rule then uses
    /// the declared default, which is the rule's behaviour from before the choice
    /// existed, so a definition written earlier grades (and reports) as it did.
    Choice(&'static [&'static str]),
}

/// One parameter a rule declares: the benchmark definition must give it a value, unless
/// it is a [`ParamKind::Choice`].
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Its key in the definition's `params`.
    pub name: &'static str,
    /// What values it takes.
    pub kind: ParamKind,
    /// The value a rule uses outside a benchmark definition (unit tests).
    pub default: ParamValue,
    /// What it sets, for `mcp-grade checks`.
    pub doc: &'static str,
}

/// Does the check need an MCP session (a negotiated revision) to grade?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: grades any bundle (reported-only checks, transport checks).
    Nothing,
    /// A negotiated session; without one the runner decides (ERROR, or UNKNOWN when the
    /// endpoint wanted credentials that were not given).
    Session,
}

/// The legs a check reads on one revision era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Legs {
    /// Legs every bundle of a current collector holds for this era: a bundle lacking
    /// one is graded ERROR naming it (an older collector did not record it).
    pub required: &'static [LegId],
    /// Legs read when present: the collector sends them only when the server or the
    /// operator's inputs call for them (OAuth discovery, credential legs, operator
    /// probes), and the check decides what their absence means.
    pub optional: &'static [LegId],
}

impl Legs {
    /// No leg: the check reads only the session, the run or the inventory.
    pub const NONE: Legs = Legs {
        required: &[],
        optional: &[],
    };

    /// Only required legs.
    pub const fn required(required: &'static [LegId]) -> Legs {
        Legs {
            required,
            optional: &[],
        }
    }

    /// Required and optional legs.
    pub const fn with_optional(required: &'static [LegId], optional: &'static [LegId]) -> Legs {
        Legs { required, optional }
    }

    /// True when `leg` is declared, required or optional.
    pub fn declares(&self, leg: &str) -> bool {
        self.required.iter().chain(self.optional).any(|l| *l == leg)
    }
}

/// One benchmark check. Implementations are pure functions of evidence and context.
pub trait Check: Sync + Send {
    /// The rule's stable id, the name a benchmark definition's `rule` gives it
    /// (`origin-validated`): never renamed, never reused (docs/benchmarks.md).
    fn id(&self) -> &'static str;
    /// What the legacy HTTP+SSE transport (2024-11-05) keeps this rule from observing, when
    /// it changes what the rule can see: one sentence the runner adds to the reduction of
    /// an HTTP+SSE bundle (docs/checks.md, "HTTP+SSE: what the transport shows").
    fn on_http_sse(&self) -> Option<&'static str> {
        None
    }
    /// The legs this check reads on `era` (`None`: no revision was negotiated).
    fn legs(&self, era: Option<Era>) -> Legs;
    /// What the check needs before `grade` is called.
    fn needs(&self) -> Needs {
        Needs::Session
    }
    /// The parameters the rule reads from [`Context::params`]; a benchmark definition
    /// must give each a value (a [`ParamKind::Choice`] may be left out) and may give no
    /// other.
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    /// Grade one bundle.
    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome;
}
