//! The baseline a comparing check reads: which one applies (none while
//! `--update-baseline` records one, none of another endpoint), and how the evidence
//! names it. Shared by `capabilities-match-baseline`, `identity-matches-baseline`,
//! `oauth-discovery-validated` (f) and `scopes-minimized` (c).

use crate::check::Context;
use crate::evidence::Bundle;
use crate::fmt::utc;
use crate::verdict::{SubOutcome, SubVerdict};

/// `"baseline <path> collected <time>"`.
pub(crate) fn describe_baseline(b: &Bundle) -> String {
    crate::format_exact!(
        "baseline {} collected {}",
        crate::fmt::Line(&b.path),
        utc(b.payload.run.started_at)
    )
}

/// The baseline to compare with, or the unknown leg that says why there is none.
pub(crate) fn baseline_for<'b>(
    ev: &Bundle,
    cx: &Context<'b>,
    id: &str,
    now: &str,
) -> Result<&'b Bundle, SubVerdict> {
    if cx.updating_baseline {
        return Err(SubVerdict::new(
            id,
            SubOutcome::Unknown,
            crate::format_exact!(
                "this run records the baseline ({now}); a run that compares nothing cannot pass"
            ),
        ));
    }
    let Some(b) = cx.baseline else {
        return Err(SubVerdict::new(
            id,
            SubOutcome::Unknown,
            "no baseline: no --baseline given and none is stored for this endpoint, so there is nothing to \
             compare with; record one with --update-baseline (or give --baseline) and the next run decides",
        ));
    };
    if b.endpoint() != ev.endpoint() {
        return Err(SubVerdict::new(
            id,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the {} is of endpoint {}, not of {}; different endpoints are not compared",
                describe_baseline(b),
                crate::fmt::Line(&b.endpoint()),
                crate::fmt::Line(&ev.endpoint())
            ),
        ));
    }
    Ok(b)
}
