//! The `Check` trait and the context a check is graded in.

use crate::catalogue::Entry;
use crate::evidence::Evidence;
use crate::verdict::Outcome;

/// Everything besides the bundle that a check may read. Pure data: grading does no I/O.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// An earlier, verified bundle of the same endpoint, if any.
    pub baseline: Option<&'a Evidence>,
    /// This run records new baselines: comparing checks report UNKNOWN.
    pub updating_baseline: bool,
}

/// Does the check need an MCP session (a negotiated revision) to grade?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: grades any bundle (reported-only checks).
    Nothing,
    /// A negotiated session; without one the runner decides (ERROR, or UNKNOWN when the
    /// endpoint wanted credentials that were not given).
    Session,
}

/// One benchmark check. Implementations are pure functions of evidence and context.
pub trait Check: Sync + Send {
    /// Catalogue entry (id, level, title, source).
    fn entry(&self) -> &'static Entry;
    /// Collector legs this check reads; a bundle lacking one is ERROR naming it.
    fn legs_read(&self) -> &'static [&'static str];
    /// What the check needs before `grade` is called.
    fn needs(&self) -> Needs {
        Needs::Session
    }
    /// Grade one bundle.
    fn grade(&self, ev: &Evidence, cx: &Context<'_>) -> Outcome;
}
