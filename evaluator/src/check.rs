//! The `Check` trait, the legs a check declares, and the context a check is graded in.
//!
//! A check is registered in one place, its row of [`crate::catalogue::CATALOGUE`]. It
//! declares the legs it reads ([`Check::legs`]); the runner ([`crate::grade::run`])
//! gives ERROR naming a required leg that a bundle lacks, and the contract test in
//! [`crate::grade`] fails when a check reads a leg it did not declare.

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::LegId;

use crate::evidence::Evidence;
use crate::verdict::Outcome;

/// Everything besides the bundle that a check may read. Pure data: grading does no I/O.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// An earlier, verified bundle of the same endpoint, if any.
    pub baseline: Option<&'a Evidence>,
    /// This run records new baselines: comparing checks report UNKNOWN.
    pub updating_baseline: bool,
    /// The operator's policy as it applies to this bundle's endpoint (`--policy`).
    pub policy: Option<&'a crate::policy::Applied>,
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
    /// The legs this check reads on `era` (`None`: no revision was negotiated).
    fn legs(&self, era: Option<Era>) -> Legs;
    /// What the check needs before `grade` is called.
    fn needs(&self) -> Needs {
        Needs::Session
    }
    /// Grade one bundle.
    fn grade(&self, ev: &Evidence, cx: &Context<'_>) -> Outcome;
}
