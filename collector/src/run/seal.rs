//! Sealing one target: the run status and failure note from how its steps ended, the
//! `--tsa` timestamp over the signature, the bundle path on stdout, and the `--info`
//! block.
//!
//! With `--tsa`, the bundle is signed first (under the journal's lock), the TSA is asked
//! for a token over the signature without the lock (other targets keep running; the
//! target's `--concurrency` permit is already released), and the bundle is written with
//! the token, or the reason there is none, in its unprotected header. A TSA failure is a
//! warning: the bundle is sealed and valid, and the exit code is the one it would be
//! without `--tsa`.

use mcp_probe_schema::model::RunStatus;

use super::cli::Printer;
use super::plan::Plan;
use super::steps::End;
use super::target::Target;
use crate::journal::{lock, Journal, SharedJournal as Shared};
use crate::mcp::Ending;

/// What sealing one target produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sealed {
    /// The bundle was written; `session` says whether an MCP session was established.
    Written {
        /// An MCP session was negotiated with the target.
        session: bool,
    },
    /// The bundle could not be written.
    NotWritten,
}

/// Seal one finished target and print its path (and `--info` block).
pub(super) async fn finish(
    t: &Target,
    j: &Shared,
    end: End,
    plan: &Plan,
    printer: &Printer,
) -> Sealed {
    let (status, session, info) = conclude(t, j, &end, plan, printer);
    let written = match &plan.tsa {
        None => lock(j).seal(status, &plan.key),
        Some(tsa) => {
            let signed = lock(j).sign(status, &plan.key);
            match signed {
                Err(e) => Err(e),
                Ok(signed) => {
                    let extra = match tsa.entries(signed.signature()).await {
                        Ok(entries) => {
                            printer.progress(&format!(
                                "{}: timestamped by {}",
                                t.as_typed,
                                tsa.url()
                            ));
                            entries
                        }
                        Err(why) => {
                            printer.warn(&format!(
                                "{}: no timestamp (the bundle is sealed without one): {why}",
                                t.as_typed
                            ));
                            crate::transport::tsa::error_entry(&why)
                        }
                    };
                    lock(j).write_signed(signed, &extra)
                }
            }
        }
    };
    match written {
        Ok(p) => {
            printer.progress(&format!(
                "{}: sealed {} ({})",
                t.as_typed,
                p.display(),
                status.as_str()
            ));
            printer.out(&p.display().to_string());
            if let Some(block) = info {
                printer.out(&block);
            }
            // After the connection result, and only where a session was held: what the
            // run left undecided for want of a probe input (not under --info).
            if session && !plan.info {
                let mine = plan.inputs.as_ref().and_then(|d| d.get(&t.as_typed));
                if let Some(n) = super::notice::notice(&t.as_typed, mine, plan.verbose) {
                    printer.notice(&n);
                }
            }
            Sealed::Written { session }
        }
        Err(e) => {
            printer.error(&format!("{}: {e}", t.as_typed));
            Sealed::NotWritten
        }
    }
}

/// How the target ended: its run status, whether an MCP session was established, and
/// the `--info` block; the failure note is set on the journal and printed.
fn conclude(
    t: &Target,
    j: &Shared,
    end: &End,
    plan: &Plan,
    printer: &Printer,
) -> (RunStatus, bool, Option<String>) {
    let mut g = lock(j);
    let (status, session) = match end {
        End::Finished(Ending::Complete) => (RunStatus::Complete, true),
        End::Finished(Ending::AuthRequired) => {
            if g.failure().is_none() {
                let source = g.target().source.as_ref();
                let configured = source.is_some_and(|s| s.credential_configured);
                let supplied = source.is_some_and(|s| s.credential_supplied);
                g.set_failure(if supplied {
                    "the endpoint refused the credential the configuration entry gives (HTTP 401)"
                } else if configured {
                    "the endpoint requires authentication (HTTP 401); the configuration entry gives a credential, not supplied without --use-config-credentials"
                } else if plan.token.is_some() {
                    "the endpoint refused the --token-env credential (HTTP 401)"
                } else {
                    "the endpoint requires authentication (HTTP 401); no credential was given (--token-env)"
                });
            }
            (RunStatus::Complete, false)
        }
        End::Finished(Ending::NoEndpoint(why)) => {
            g.set_failure(format!("no MCP endpoint: {why}"));
            (RunStatus::Failed, false)
        }
        End::Deadline(why) => {
            // The deadline is why the run stopped; an earlier note (a login that
            // failed) stays after it.
            let failure = match g.failure() {
                Some(earlier) => format!("{why}; earlier: {earlier}"),
                None => why.clone(),
            };
            g.set_failure(failure);
            let negotiated = g.session().is_some_and(|s| s.revision.is_some());
            (RunStatus::Interrupted, negotiated)
        }
    };
    if !matches!(end, End::Finished(Ending::Complete)) {
        printer.error(&format!(
            "{}: {}",
            t.as_typed,
            g.failure().unwrap_or_default()
        ));
    }
    let info = plan.info.then(|| info_block(&g));
    (status, session, info)
}

/// The `--info` lines of a target (indented under its bundle path).
fn info_block(j: &Journal) -> String {
    let s = j.session();
    // Computed from the journal's records, which are redacted before they are written;
    // read back one at a time, keeping only the inventory's.
    let mut listed = Vec::new();
    j.for_each_record_of(
        |legs| legs.iter().any(|l| l.starts_with("inventory.")),
        |r| {
            listed.push(r);
            true
        },
    );
    let inv = mcp_probe_schema::derive::inventory(&listed);
    let count = |l: &mcp_probe_schema::derive::ListInventory| {
        if !l.observed {
            "not listed".to_string()
        } else if l.complete {
            l.items.len().to_string()
        } else {
            format!(
                "{} (incomplete: {})",
                l.items.len(),
                l.stopped.as_deref().unwrap_or("a page failed")
            )
        }
    };
    let server = s
        .and_then(|s| s.server_info.as_ref())
        .map(|i| {
            format!(
                "{} {}",
                i.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                i.get("version").and_then(|v| v.as_str()).unwrap_or("?")
            )
        })
        .unwrap_or_else(|| "(unknown)".into());
    let mut lines = vec![
        format!("  target: {}", j.target().as_typed),
        format!(
            "  endpoint: {}",
            j.target().endpoint.as_deref().unwrap_or("(none)")
        ),
        format!("  transport: {}", j.target().transport.label()),
        format!(
            "  revision: {}",
            s.and_then(|s| s.revision.as_deref()).unwrap_or("(none)")
        ),
        format!("  server: {server}"),
        format!(
            "  auth required: {}",
            s.map(|s| if s.auth_required { "yes" } else { "no" })
                .unwrap_or("unknown")
        ),
        format!("  tools: {}", count(&inv.tools)),
        format!("  resources: {}", count(&inv.resources)),
        format!("  resource templates: {}", count(&inv.resource_templates)),
        format!("  prompts: {}", count(&inv.prompts)),
    ];
    if let Some(seq) = j.bundle_capped_from() {
        lines.push(format!(
            "  note: --bundle-cap reached: bodies from record {seq} on are stored as length and SHA-256 only, so the counts above may be short"
        ));
    }
    if let Some(f) = j.failure() {
        lines.push(format!("  note: {f}"));
    }
    lines.join("\n")
}
