//! A run over many targets: validation of every input before any traffic ([`plan()`]),
//! concurrent targets (`--concurrency`), each walking the [`steps::STEPS`] under its
//! deadline, progress on stderr, bundle paths on stdout, and sealing on every way out
//! (success, failure, a panicking leg, a signal).
//!
//! * [`cli`]: exit statuses, signals, usage errors; [`flags`]: the command line;
//!   [`target`]: what the operator typed; [`inputs`]: the probe inputs file.
//! * [`mod@plan`]: the validated plan; [`steps`]: one target's steps; [`seal`]: sealing one
//!   target; [`signals`]: the stopping signals.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_probe_schema::model::{RunStatus, Target as TargetRecord, TokenFacts};
use mcp_probe_schema::redact::decode_jwt;
use tokio::task::JoinSet;

pub mod cli;
pub mod flags;
pub mod inputs;
pub mod notice;
pub mod plan;
pub mod seal;
pub mod signals;
pub mod steps;
pub mod target;

pub use cli::{ExitStatus, Printer, Signal, UsageError};
pub use plan::{plan, Plan};
use seal::{finish, Sealed};
use signals::Signals;
use steps::{collect_target, End, Stage, DEFAULT_TARGET_TIMEOUT_MS};
use target::Target;

use crate::journal::{lock, Journal, SharedJournal as Shared};

/// Collect every target of the plan: open a journal per target, run the targets
/// (at most `--concurrency` at once) until all finished or a signal stops the run, seal
/// what is left as interrupted, and say how the run ends.
pub async fn execute(plan: Plan, printer: &Printer) -> ExitStatus {
    // Registered before anything is written: from here on, SIGINT, SIGTERM and SIGHUP
    // seal instead of killing the process.
    let mut signals = Signals::register();
    let plan = Arc::new(plan);
    let (journals, open_failed) = open_journals(&plan, printer);
    let mut set = spawn_targets(&plan, &journals, printer);
    let mut outcome = await_targets(&mut set, &mut signals, &journals, &plan, printer).await;
    outcome.write_failed |= open_failed;
    outcome.write_failed |= !seal_unfinished(&journals, &outcome, &plan, printer);
    if let Some(path) = &plan.manifest {
        if let Err(e) = write_manifest(path, &journals, printer) {
            printer.error(&format!("--manifest {}: {e}", path.display()));
            outcome.write_failed = true;
        }
    }
    exit_status(&outcome, journals.len(), printer)
}

/// `--manifest FILE`: one JSON line per target (`target`, `bundle`, `status`,
/// `revision`, `seconds`), in the order of the targets, written atomically (a temporary
/// file beside it, synced, renamed). Every line passes the run's redactor, as stdout
/// and stderr do: a target typed with a credential in it leaves only its fingerprint.
fn write_manifest(
    path: &std::path::Path,
    journals: &[(Target, Shared)],
    printer: &Printer,
) -> std::io::Result<()> {
    let mut text = String::new();
    for (t, j) in journals {
        let j = lock(j);
        let (status, seconds) = match j.sealed_as() {
            Some((s, secs)) => (Some(s.as_str()), Some((secs * 1000.0).round() / 1000.0)),
            None => (None, None),
        };
        let line = serde_json::json!({
            "target": t.as_typed,
            "bundle": j.sealed().map(|p| p.display().to_string()),
            "status": status,
            "revision": j.session().and_then(|s| s.revision.clone()),
            "seconds": seconds,
        });
        text.push_str(&printer.redactor().scrub_str(&line.to_string()));
        text.push('\n');
    }
    mcp_probe_schema::fsutil::write_atomic(path, text.as_bytes(), false)
}

/// Where the run stands once it stopped waiting for targets.
struct Outcome {
    /// Which targets finished (and were sealed by [`finish`]).
    done: Vec<bool>,
    /// Targets sealed without an MCP session.
    no_session: Vec<String>,
    /// A bundle (or a journal) could not be written.
    write_failed: bool,
    /// The signal that stopped the run, if one did.
    stopped_by: Option<Signal>,
}

/// One journal per target, each with the target record, the `--token-env` token facts
/// and the target's probe inputs. `true` when a journal could not be created.
fn open_journals(plan: &Plan, printer: &Printer) -> (Vec<(Target, Shared)>, bool) {
    let mut journals: Vec<(Target, Shared)> = Vec::new();
    let mut write_failed = false;
    for t in &plan.targets {
        // One redactor for every target and the printer: a secret learned anywhere is
        // redacted everywhere.
        let redactor = printer.redactor().clone();
        let mut tokens = Vec::new();
        if let Some((var, tok)) = &plan.token {
            redactor.add_secret(tok.as_bytes(), "bearer-token");
            let (h, c) = decode_jwt(tok).map_or((None, None), |(h, c)| (Some(h), Some(c)));
            tokens.push(TokenFacts {
                source: format!("env:{var}"),
                fingerprint: mcp_probe_schema::bundle::fingerprint(tok.as_bytes()),
                jwt_header: h,
                jwt_claims: c,
                expires_in: None,
                scope: None,
                token_type: Some("Bearer".into()),
            });
        }
        let record = TargetRecord {
            as_typed: t.as_typed.clone(),
            base_url: t.base_url.as_str().trim_end_matches('/').to_string(),
            candidates: t.candidates.iter().map(|u| u.to_string()).collect(),
            endpoint: None,
            addresses: Vec::new(),
            transport: Default::default(),
            message_endpoint: None,
        };
        match Journal::create(&plan.out, &t.slug(), record, plan.options.clone(), redactor) {
            Ok(mut j) => {
                tokens.into_iter().for_each(|f| j.push_token(f));
                j.set_inputs(
                    plan.inputs
                        .as_ref()
                        .and_then(|i| i.get(&t.as_typed))
                        .cloned(),
                );
                journals.push((t.clone(), Arc::new(Mutex::new(j))));
            }
            Err(e) => {
                printer.error(&format!("{}: {e}", t.as_typed));
                write_failed = true;
            }
        }
    }
    (journals, write_failed)
}

/// Spawn one task per target; each waits for a `--concurrency` permit.
fn spawn_targets(
    plan: &Arc<Plan>,
    journals: &[(Target, Shared)],
    printer: &Printer,
) -> JoinSet<(usize, End)> {
    let sem = Arc::new(tokio::sync::Semaphore::new(plan.concurrency));
    let mut set = JoinSet::new();
    let total = journals.len();
    for (i, (t, j)) in journals.iter().enumerate() {
        let (t, j, plan, sem, printer) = (
            t.clone(),
            j.clone(),
            plan.clone(),
            sem.clone(),
            printer.clone(),
        );
        set.spawn(async move {
            let _permit = sem.acquire().await;
            printer.progress(&format!("[{}/{total}] {}: probing", i + 1, t.as_typed));
            let end = run_target(&t, &j, &plan).await;
            if let Some(u) = t.candidates.first() {
                plan.client.close(u).await;
            }
            (i, end)
        });
    }
    set
}

/// One target's steps under its deadline. The deadline covers the whole target: when
/// it passes, the target's work is dropped (no further byte is sent) and what was
/// recorded is sealed.
async fn run_target(t: &Target, j: &Shared, plan: &Plan) -> End {
    let deadline = Duration::from_millis(
        plan.options
            .target_timeout_ms
            .unwrap_or(DEFAULT_TARGET_TIMEOUT_MS),
    );
    let stage = Stage::default();
    let start = std::time::Instant::now();
    let work = collect_target(t, j, plan, &stage);
    tokio::pin!(work);
    loop {
        // Time spent in the OAuth login (which may wait for a person in the browser)
        // is not counted against the deadline.
        let left = deadline.saturating_sub(stage.counted(start));
        if left.is_zero() {
            break End::Deadline(format!(
                "target deadline of {} s passed during {}",
                deadline.as_secs(),
                stage.describe()
            ));
        }
        tokio::select! {
            ending = &mut work => break End::Finished(ending),
            _ = tokio::time::sleep(left) => {}
        }
    }
}

/// Seal each target as its task finishes, until every task ended or a signal stopped
/// the run (the remaining tasks are then aborted).
async fn await_targets(
    set: &mut JoinSet<(usize, End)>,
    signals: &mut Signals,
    journals: &[(Target, Shared)],
    plan: &Plan,
    printer: &Printer,
) -> Outcome {
    let mut outcome = Outcome {
        done: vec![false; journals.len()],
        no_session: Vec::new(),
        write_failed: false,
        stopped_by: None,
    };
    loop {
        tokio::select! {
            joined = set.join_next_with_id() => {
                let Some(joined) = joined else { break };
                match joined {
                    Ok((_, (i, end))) => {
                        outcome.done[i] = true;
                        let (t, j) = &journals[i];
                        match finish(t, j, end, plan, printer) {
                            Sealed::Written { session: true } => {}
                            Sealed::Written { session: false } => outcome.no_session.push(t.as_typed.clone()),
                            Sealed::NotWritten => outcome.write_failed = true,
                        }
                    }
                    Err(e) => {
                        // A leg panicked inside the collector: seal what exists as
                        // interrupted. The JoinError does not carry our index, so seal
                        // every journal that is not done yet once the others finish.
                        printer.error(&format!("internal error in a probe task: {e}"));
                    }
                }
            }
            sig = signals.next() => {
                outcome.stopped_by = Some(sig);
                set.abort_all();
                break;
            }
        }
    }
    outcome
}

/// Seal every target that did not finish as interrupted (a signal, or a task that
/// panicked). `false` when a bundle could not be written.
fn seal_unfinished(
    journals: &[(Target, Shared)],
    outcome: &Outcome,
    plan: &Plan,
    printer: &Printer,
) -> bool {
    let reason = match outcome.stopped_by {
        Some(sig) => format!("interrupted by {}", sig.name()),
        None => "interrupted: a leg failed inside the collector".to_string(),
    };
    let mut written = true;
    for (i, (t, j)) in journals.iter().enumerate() {
        if outcome.done[i] {
            continue;
        }
        let path = {
            let mut g = lock(j);
            if g.sealed().is_some() {
                continue;
            }
            g.set_failure(reason.clone());
            g.seal(RunStatus::Interrupted, &plan.key)
        };
        match path {
            Ok(p) => {
                printer.progress(&format!("{}: {reason}; sealed as interrupted", t.as_typed));
                printer.out(&p.display().to_string());
            }
            Err(e) => {
                printer.error(&format!("{}: {e}", t.as_typed));
                written = false;
            }
        }
    }
    written
}

/// How the run ends (precedence in [`ExitStatus`]).
fn exit_status(outcome: &Outcome, total: usize, printer: &Printer) -> ExitStatus {
    if outcome.write_failed {
        ExitStatus::WriteFailed
    } else if let Some(sig) = outcome.stopped_by {
        ExitStatus::Interrupted(sig)
    } else if !outcome.no_session.is_empty() {
        printer.error(&format!(
            "{} of {total} target(s) sealed without an MCP session (exit 3): {}",
            outcome.no_session.len(),
            outcome.no_session.join(", ")
        ));
        ExitStatus::NoSession
    } else {
        ExitStatus::Ok
    }
}
