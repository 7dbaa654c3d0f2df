//! A run over many targets: validation of every input before any traffic ([`plan()`]),
//! concurrent targets (`--concurrency`), each walking the [`steps::STEPS`] under its
//! deadline, progress on stderr, bundle paths on stdout, and sealing on every way out
//! (success, failure, a panicking leg, a signal).
//!
//! * [`cli`]: exit statuses, signals, usage errors; [`flags`]: the command line;
//!   [`target`]: what the operator typed; [`inputs`]: the probe inputs file;
//!   [`client_config`]: `--list-config`, the servers MCP client configuration files name.
//! * [`mod@net`]: `--header`, the proxies and the client certificate;
//!   [`mod@plan`]: the validated plan; [`steps`]: one target's steps; [`seal`]: sealing one
//!   target; [`signals`]: the stopping signals.
//! * [`timestamp`]: `mcp-collect timestamp`, renewing sealed bundles' timestamps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_probe_schema::model::{RunStatus, Target as TargetRecord, TokenFacts};
use mcp_probe_schema::redact::decode_jwt;
use tokio::task::JoinSet;

pub mod cli;
pub mod client_config;
pub mod exit;
pub mod flags;
pub mod from_config;
pub mod inputs;
pub mod login_plan;
pub mod net;
pub mod notice;
pub mod plan;
pub mod seal;
pub mod signals;
pub mod stdio;
pub mod steps;
pub mod target;
pub mod timestamp;

pub use cli::{ExitStatus, Printer, Signal, UsageError};
pub use plan::{plan, Plan};
use seal::{finish, Sealed};
use signals::Signals;
use steps::{collect_target, End, Stage, DEFAULT_TARGET_TIMEOUT_MS};
use target::Target;

use crate::journal::{lock, Journal, SharedJournal as Shared};

/// The multi-threaded runtime a command runs on, or `None` after saying on stderr why it
/// could not start (the caller exits [`ExitStatus::Internal`]).
pub fn runtime(printer: &Printer) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            printer.error(&format!("cannot start the runtime: {e}"));
            None
        }
    }
}

/// Collect every target of the plan: at most `--concurrency` targets at once, each with
/// a journal opened when it starts; once all finished or a signal stopped the run, seal
/// what is left as interrupted (targets that never started included, so every target
/// has a bundle), write the manifest, and say how the run ends.
///
/// Only the targets in progress hold a journal file and a task: the run's memory and
/// open files follow the concurrency, not the number of targets (docs/performance.md).
pub async fn execute(plan: Plan, printer: &Printer) -> ExitStatus {
    // Registered before anything is written: from here on, SIGINT, SIGTERM and SIGHUP
    // seal instead of killing the process.
    let mut signals = Signals::register();
    let plan = Arc::new(plan);
    let mut run = Targets::new(&plan);
    let mut outcome = drive(&mut run, &mut signals, &plan, printer).await;
    outcome.write_failed |= !seal_unfinished(&mut run, &outcome, &plan, printer);
    if let Some(path) = &plan.manifest {
        if let Err(e) = write_manifest(path, &plan, &run, printer) {
            printer.error(&format!("--manifest {}: {e}", path.display()));
            outcome.write_failed = true;
        }
    }
    exit_status(&outcome, plan.targets.len(), printer)
}

/// The targets of a run and where each stands.
struct Targets {
    /// Each target: not started, in progress (its journal), or sealed (what the
    /// manifest needs, the journal dropped).
    slots: Vec<Slot>,
    /// The next target to start.
    next: usize,
    /// The tasks of the targets being probed (at most `--concurrency`).
    set: JoinSet<(usize, End)>,
    /// The tasks sealing a target (with its `--tsa` request): they no longer count
    /// against `--concurrency`, so the next target probes while one waits for its token.
    sealing: JoinSet<(usize, Sealed)>,
}

impl Targets {
    fn new(plan: &Plan) -> Targets {
        Targets {
            slots: (0..plan.targets.len()).map(|_| Slot::Waiting).collect(),
            next: 0,
            set: JoinSet::new(),
            sealing: JoinSet::new(),
        }
    }
}

/// Where one target stands.
enum Slot {
    /// Not started (or its journal could not be created).
    Waiting,
    /// In progress: its journal.
    Running(Shared),
    /// Sealed: the journal is dropped, its manifest facts kept.
    Done(Summary),
}

/// What the manifest says of a sealed target.
struct Summary {
    bundle: Option<String>,
    status: Option<&'static str>,
    revision: Option<String>,
    seconds: Option<f64>,
}

impl Summary {
    fn of(j: &Shared) -> Summary {
        let j = lock(j);
        let (status, seconds) = match j.sealed_as() {
            Some((s, secs)) => (Some(s.as_str()), Some((secs * 1000.0).round() / 1000.0)),
            None => (None, None),
        };
        Summary {
            bundle: j.sealed().map(|p| p.display().to_string()),
            status,
            revision: j.session().and_then(|s| s.revision.clone()),
            seconds,
        }
    }
}

/// `--manifest FILE`: one JSON line per target (`target`, `bundle`, `status`,
/// `revision`, `seconds`), in the order of the targets, written atomically (a temporary
/// file beside it, synced, renamed). Every line passes the run's redactor, as stdout
/// and stderr do: a target typed with a credential in it leaves only its fingerprint.
fn write_manifest(
    path: &std::path::Path,
    plan: &Plan,
    run: &Targets,
    printer: &Printer,
) -> std::io::Result<()> {
    let mut text = String::new();
    for (t, slot) in plan.targets.iter().zip(&run.slots) {
        let none = Summary {
            bundle: None,
            status: None,
            revision: None,
            seconds: None,
        };
        let (bundle, status, revision, seconds) = match slot {
            Slot::Done(d) => (&d.bundle, d.status, &d.revision, d.seconds),
            _ => (&none.bundle, none.status, &none.revision, none.seconds),
        };
        let line = serde_json::json!({
            "target": t.as_typed,
            "bundle": bundle,
            "status": status,
            "revision": revision,
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

/// The journal of target `t`, with the target record, the `--token-env` token facts
/// and the target's probe inputs.
fn open_journal(i: usize, t: &Target, plan: &Plan, printer: &Printer) -> Result<Shared, String> {
    let configured = plan.configured(i);
    // One redactor for every target and the printer: a secret learned anywhere is
    // redacted everywhere.
    let redactor = printer.redactor().clone();
    let mut tokens = Vec::new();
    if let Some((var, tok)) = &plan.token {
        redactor.add_given_secret(tok.as_bytes(), "bearer-token");
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
    if let Some((c, tok)) = configured.and_then(|c| c.config.token.as_ref().map(|t| (c, t))) {
        let (h, cl) = decode_jwt(tok).map_or((None, None), |(h, c)| (Some(h), Some(c)));
        tokens.push(TokenFacts {
            source: format!("config:{}", c.config.source.entry),
            fingerprint: mcp_probe_schema::bundle::fingerprint(tok.as_bytes()),
            jwt_header: h,
            jwt_claims: cl,
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
        transport: if t.is_stdio() {
            mcp_probe_schema::model::Transport::Stdio
        } else {
            Default::default()
        },
        message_endpoint: None,
        source: configured.map(|c| c.config.source.clone()),
    };
    let mut j = Journal::create(&plan.out, &t.slug(), record, plan.options.clone(), redactor)
        .map_err(|e| format!("{}: {e}", t.as_typed))?;
    tokens.into_iter().for_each(|f| j.push_token(f));
    j.set_inputs(
        plan.inputs
            .as_ref()
            .and_then(|i| i.get(&t.as_typed))
            .cloned(),
    );
    Ok(Arc::new(Mutex::new(j)))
}

/// Start targets while fewer than `--concurrency` run, and seal each as its task
/// finishes, until every target ended or a signal stopped the run (the tasks in
/// progress are then aborted).
async fn drive(
    run: &mut Targets,
    signals: &mut Signals,
    plan: &Arc<Plan>,
    printer: &Printer,
) -> Outcome {
    let total = plan.targets.len();
    let mut outcome = Outcome {
        done: vec![false; total],
        no_session: Vec::new(),
        write_failed: false,
        stopped_by: None,
    };
    loop {
        while run.set.len() < plan.concurrency.max(1) && run.next < total {
            let i = run.next;
            run.next += 1;
            let t = &plan.targets[i];
            let j = match open_journal(i, t, plan, printer) {
                Ok(j) => j,
                Err(e) => {
                    printer.error(&e);
                    outcome.write_failed = true;
                    outcome.done[i] = true;
                    continue;
                }
            };
            run.slots[i] = Slot::Running(j.clone());
            let (t, plan, printer) = (t.clone(), plan.clone(), printer.clone());
            run.set.spawn(async move {
                printer.progress(&format!("[{}/{total}] {}: probing", i + 1, t.as_typed));
                let end = run_target(i, &t, &j, &plan).await;
                if let Some(u) = t.candidates.first() {
                    plan.client.close(u).await;
                }
                (i, end)
            });
        }
        if run.set.is_empty() && run.sealing.is_empty() {
            break;
        }
        tokio::select! {
            Some(joined) = run.set.join_next(), if !run.set.is_empty() => {
                match joined {
                    Ok((i, end)) => {
                        let Slot::Running(j) = &run.slots[i] else { continue };
                        let (t, j, plan, printer) =
                            (plan.targets[i].clone(), j.clone(), plan.clone(), printer.clone());
                        run.sealing.spawn(async move {
                            (i, finish(&t, &j, end, &plan, &printer).await)
                        });
                    }
                    Err(e) => {
                        // A leg panicked inside the collector: seal what exists as
                        // interrupted. The JoinError does not carry our index, so seal
                        // every journal that is not done yet once the others finish.
                        printer.error(&format!("internal error in a probe task: {e}"));
                    }
                }
            }
            Some(joined) = run.sealing.join_next(), if !run.sealing.is_empty() => {
                match joined {
                    Ok((i, sealed)) => {
                        outcome.done[i] = true;
                        let t = &plan.targets[i];
                        match sealed {
                            Sealed::Written { session: true } => {}
                            Sealed::Written { session: false } => outcome.no_session.push(t.as_typed.clone()),
                            Sealed::NotWritten => outcome.write_failed = true,
                        }
                        if let Slot::Running(j) = &run.slots[i] {
                            run.slots[i] = Slot::Done(Summary::of(j));
                        }
                    }
                    Err(e) => printer.error(&format!("internal error while sealing: {e}")),
                }
            }
            sig = signals.next() => {
                outcome.stopped_by = Some(sig);
                run.set.abort_all();
                // A target waiting for its --tsa timestamp is sealed as interrupted
                // by seal_unfinished, without one.
                run.sealing.abort_all();
                break;
            }
        }
    }
    outcome
}

/// One target's steps under its deadline. The deadline covers the whole target: when
/// it passes, the target's work is dropped (no further byte is sent) and what was
/// recorded is sealed.
async fn run_target(i: usize, t: &Target, j: &Shared, plan: &Plan) -> End {
    let deadline = Duration::from_millis(
        plan.options
            .target_timeout_ms
            .unwrap_or(DEFAULT_TARGET_TIMEOUT_MS),
    );
    let stage = Stage::default();
    let start = std::time::Instant::now();
    let work = collect_target(t, j, plan, plan.configured(i), &stage);
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

/// Seal every target that did not finish as interrupted (a signal, or a task that
/// panicked), opening the journal of each target that never started: every target has a
/// bundle. `false` when a bundle could not be written.
fn seal_unfinished(run: &mut Targets, outcome: &Outcome, plan: &Plan, printer: &Printer) -> bool {
    let reason = match outcome.stopped_by {
        Some(sig) => format!("interrupted by {}", sig.name()),
        None => "interrupted: a leg failed inside the collector".to_string(),
    };
    let mut written = true;
    for (i, t) in plan.targets.iter().enumerate() {
        if outcome.done[i] {
            continue;
        }
        let j = match &run.slots[i] {
            Slot::Running(j) => j.clone(),
            Slot::Done(_) => continue,
            Slot::Waiting => match open_journal(i, t, plan, printer) {
                Ok(j) => j,
                Err(e) => {
                    printer.error(&e);
                    written = false;
                    continue;
                }
            },
        };
        let path = {
            let mut g = lock(&j);
            if g.sealed().is_some() {
                None
            } else {
                g.set_failure(reason.clone());
                // No timestamp after a signal: the operator asked to stop, and a TSA that
                // does not answer would hold the exit for up to --timeout. The bundle says so.
                let extra = match &plan.tsa {
                    Some(_) => crate::transport::tsa::error_entry(&format!(
                        "not requested: {reason}; the bundle was sealed without waiting for the TSA"
                    )),
                    None => Vec::new(),
                };
                Some(g.seal_with(RunStatus::Interrupted, &plan.key, &extra))
            }
        };
        run.slots[i] = Slot::Done(Summary::of(&j));
        let Some(path) = path else { continue };
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
