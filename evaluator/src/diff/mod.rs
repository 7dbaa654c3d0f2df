//! `mcp-grade diff OLD NEW`: what changed between two bundles ([`bundle`]) or between two
//! JSON reports ([`report`], `mcp-grade --format json` output). The kind of each input
//! is told from its bytes ([`sniff`]): a bundle starts with the COSE_Sign1 tag, a report
//! is a JSON object whose `schema` is `mcp-grade-report/1`. Both inputs must be of one
//! kind. Servers are matched by endpoint (the default) or by [`Identity`]
//! (`--match identity`). Text, or `--format json` (`mcp-grade-diff/1` for bundles,
//! `mcp-grade-report-diff/1` for reports).
//!
//! Exit 0 when nothing changed, 1 when something did, 2 for a usage error (two kinds of
//! input, two bundles that do not match, an unreadable file), 3 for an input that
//! cannot be compared (a bundle that fails verification, a file that is neither a bundle
//! nor a report, a report that cannot be read).
//!
//! This module imports nothing from `commands`: its errors are its own ([`DiffError`]).

pub mod bundle;
pub mod common;
pub mod mapping;
pub mod report;
pub mod report_text;

use std::io::Write;
use std::path::Path;

use crate::exit::ExitStatus;
use crate::load::Error;
use crate::output::Diag;

pub use bundle::schema;
use common::{escaped_path, json_body};
pub use common::{sniff, DiffError, DiffOptions, Identity, Input, Match, REPORT_SCHEMA};
pub use report::schema as report_schema;

/// `mcp-grade diff OLD NEW`.
pub fn run(
    opts: &DiffOptions,
    out: &mut dyn Write,
    err: &mut Diag<'_>,
) -> Result<ExitStatus, DiffError> {
    let a = sniff(&opts.old)?;
    let b = sniff(&opts.new)?;
    let unusable = |p: &Path, reason: &str| DiffError::Unusable {
        path: escaped_path(p),
        reason: reason.to_string(),
    };
    let (body, changed) = match (a, b) {
        (Input::Other(r), _) => return Err(unusable(&opts.old, &r)),
        (_, Input::Other(r)) => return Err(unusable(&opts.new, &r)),
        (Input::Bundle, Input::Report(_)) => {
            return Err(DiffError::Mixed {
                bundle: escaped_path(&opts.old),
                report: escaped_path(&opts.new),
            })
        }
        (Input::Report(_), Input::Bundle) => {
            return Err(DiffError::Mixed {
                bundle: escaped_path(&opts.new),
                report: escaped_path(&opts.old),
            })
        }
        (Input::Bundle, Input::Bundle) => bundle::run(opts, err)?,
        (Input::Report(a), Input::Report(b)) => {
            if !opts.trust.is_empty() {
                let _ = err.note(
                    "--trust applies to bundles; a JSON report carries no signature, so it was not used",
                );
            }
            if opts.trust_list.is_some() {
                let _ = err.note(
                    "--trust-list applies to bundles; a JSON report carries no signature, so it was not used",
                );
            }
            let old = report::Report::read(&opts.old, a)?;
            let new = report::Report::read(&opts.new, b)?;
            let d = report::compare(&old, &new, opts.by);
            let body = if opts.json {
                json_body(&d)
            } else {
                report_text::text(&d)
            };
            (body, d.changed)
        }
    };
    out.write_all(body.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| DiffError::Load(Error::Output(e)))?;
    Ok(if changed {
        ExitStatus::Fail
    } else {
        ExitStatus::Pass
    })
}
