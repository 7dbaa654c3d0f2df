//! `--stdio -- COMMAND ARGS...`: one target launched as a child process and spoken to
//! over its stdin and stdout (docs/collector.md, "stdio targets").
//!
//! The steps: launch ([`crate::transport::stdio`]: clean environment, own process
//! group), revision detection, the inventory, the protocol-level probe legs, and the
//! process record. Detection: a complete 2026-07-28 `server/discover` first; a result
//! that is a `DiscoverResult` (not `{}`: `negotiation::discover_result`),
//! or a JSON-RPC error with one of the 2026-07-28 codes, means the server speaks
//! 2026-07-28 (a refusal that names `data.supported` handshake revisions is followed by
//! an `initialize` offering the newest of them); any other error, or no answer within
//! `--timeout`, means a legacy server, which gets `initialize` offering 2025-11-25 and
//! `notifications/initialized`. The legs that exist only on HTTP (TLS, Origin,
//! headers, OAuth, HTTP sessions, body limits) are recorded as skipped with the reason
//! `stdio`, so a bundle says what was not sent and why.
//!
//! The process record (`stdio.process`) is written when the journal is sealed,
//! whichever way the run ends: the server is stopped first (stdin closed and a short
//! grace at the end of a run; at once on a deadline or a signal), so its exit status
//! and the whole of its stderr are in the bundle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{Era, StdioProcess};
use mcp_probe_schema::vocab::{self, code, leg, method, LegId};

use super::cli::UsageError;
use super::target::Target;
use crate::journal::{lock, now_us, SharedJournal as Shared};
use crate::legs::Family;
use crate::mcp::{Ending, Probe};
use crate::transport::stdio::{shown_argv, Launch, ShownArgv, StdioChild, Stop};

/// How long a server may take to exit once its stdin is closed at the end of a run,
/// before it is sent SIGTERM.
const GRACE: Duration = Duration::from_millis(1000);

/// A validated `--stdio` target.
#[derive(Debug, Clone)]
pub struct StdioPlan {
    /// What to launch.
    pub launch: Launch,
    /// The command line as it may be recorded.
    pub shown: ShownArgv,
}

impl StdioPlan {
    /// The names of the `--env` variables, in order.
    pub fn env_names(&self) -> Vec<String> {
        self.launch.env.iter().map(|(n, _)| n.clone()).collect()
    }
}

/// The families of [`crate::legs::AFTER_INVENTORY`] sent over stdio, in that order: the
/// ones whose requests are plain JSON-RPC.
const STDIO_FAMILIES: &[Family] = &[
    Family::NullId,
    Family::SchemaCall,
    Family::TemplateReads,
    Family::PromptGets,
    Family::Traversal,
];

/// Why the other legs are not sent (the word `stdio` is what the grader's reading of a
/// skip names).
const NOT_ON_STDIO: &str = "not sent: stdio (the leg exists only on HTTP: headers, TLS, Origin, OAuth, HTTP sessions or body limits)";

/// Validate `--stdio`: a command, `--env NAME=VALUE` pairs, and a program that can be
/// started (found on the child's `PATH`, or a path to an executable file). Registers
/// every credential-looking argument and every `--env` value with `redactor` first, so
/// no later line, record or bundle field can carry them.
pub fn plan_stdio(
    command: &[String],
    env: &[String],
    redactor: &crate::journal::SharedRedactor,
) -> Result<(StdioPlan, Target), UsageError> {
    let mut pairs = Vec::new();
    for e in env {
        let Some((name, value)) = e.split_once('=') else {
            return Err(UsageError::Stdio(format!(
                "--env {:?}: expected NAME=VALUE",
                e.split('=').next().unwrap_or("")
            )));
        };
        if name.is_empty()
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(UsageError::Stdio(format!(
                "--env {name:?}: not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"
            )));
        }
        redactor.add_given_secret(value.as_bytes(), "environment-value");
        pairs.push((name.to_string(), value.to_string()));
    }
    plan_launch(command, pairs, redactor)
}

/// The launch of `command` with the environment `pairs` (whose secrets the caller
/// registered): credential-looking arguments registered with `redactor`, the program
/// checked startable.
pub(super) fn plan_launch(
    command: &[String],
    pairs: Vec<(String, String)>,
    redactor: &crate::journal::SharedRedactor,
) -> Result<(StdioPlan, Target), UsageError> {
    let shown = shown_argv(command);
    for s in &shown.secrets {
        redactor.add_given_secret(s.as_bytes(), "command-line-credential");
    }
    let Some(program) = command.first().filter(|p| !p.is_empty()) else {
        return Err(UsageError::Stdio(
            "--stdio needs a command after `--` (mcp-collect --stdio -- COMMAND ARGS...)".into(),
        ));
    };
    let path = pairs
        .iter()
        .rev()
        .find(|(n, _)| n == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    if !startable(program, &path) {
        return Err(UsageError::Stdio(format!(
            "--stdio: {program:?} cannot be started: not an executable file{}",
            if program.contains('/') {
                ""
            } else {
                " on the server's PATH"
            }
        )));
    }
    let target = Target::stdio(&shown.argv);
    Ok((
        StdioPlan {
            launch: Launch {
                argv: command.to_vec(),
                env: pairs,
            },
            shown,
        },
        target,
    ))
}

fn executable(p: &std::path::Path) -> bool {
    let Ok(m) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    m.is_file()
}

/// A path to an executable file, or a name found executable on `path`.
fn startable(program: &str, path: &str) -> bool {
    if program.contains('/') {
        return executable(std::path::Path::new(program));
    }
    std::env::split_paths(path).any(|d| executable(&d.join(program)))
}

/// What a stdio target's run takes from the plan and the run (passed in, so this module
/// imports neither: `plan` and `steps` import it).
pub(super) struct StdioRun<'a> {
    /// The client (unused on stdio; the probe context carries one).
    pub(super) client: &'a crate::transport::http::Client,
    /// The run's options (`timeout_ms`, `body_cap`, `max_pages`).
    pub(super) options: &'a mcp_probe_schema::model::Options,
    /// `--info`.
    pub(super) info: bool,
    /// `--baseline` (1.3's selection).
    pub(super) baseline: Option<&'a std::path::Path>,
    /// The request in flight, for a deadline message.
    pub(super) in_flight: Arc<std::sync::Mutex<Option<String>>>,
    /// Where the run is, for a deadline message.
    pub(super) stage: &'a (dyn Fn(&'static str) + Sync),
}

/// One stdio target's whole run.
pub(super) async fn collect_stdio(
    t: &Target,
    j: &Shared,
    sp: &StdioPlan,
    run: StdioRun<'_>,
) -> Ending {
    let stage = run.stage;
    stage("launching the stdio server");
    let spawned_at = now_us();
    let started = Instant::now();
    // Stdout lines may take half of the bundle cap: the rest is for the other records
    // (the process record, its stderr, the skipped legs) and the unkept counts.
    let bundle_cap = lock(j)
        .options()
        .bundle_cap
        .unwrap_or(crate::journal::DEFAULT_BUNDLE_CAP);
    let child = match StdioChild::spawn(&sp.launch, run.options.body_cap, bundle_cap / 2) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            let why = e.to_string();
            lock(j).record(
                &[leg::STDIO_PROCESS],
                spawned_at,
                0,
                mcp_probe_schema::model::Observation::StdioProcess(StdioProcess {
                    argv: sp.shown.argv.clone(),
                    credential_args: sp.shown.credential_args.clone(),
                    env_names: sp.env_names(),
                    inherited: crate::transport::stdio::inherited_names(),
                    pid: None,
                    spawn_error: Some(why.clone()),
                    exit: None,
                    ended_by: "not started".into(),
                    stderr: Vec::new(),
                    stderr_length: 0,
                }),
            );
            return Ending::NoEndpoint(why);
        }
    };
    stage("the stdio session");
    let finished = Arc::new(AtomicBool::new(false));
    {
        let (child, finished, shown, env_names) = (
            child.clone(),
            finished.clone(),
            sp.shown.clone(),
            sp.env_names(),
        );
        lock(j).before_seal(move |j| {
            let how = if finished.load(Ordering::SeqCst) {
                Stop::Polite(GRACE)
            } else {
                Stop::Now
            };
            if let Some(a) = child.abandoned() {
                // The message in flight when a deadline or a signal stopped the run.
                let started_at =
                    now_us() - a.start.elapsed().as_micros().min(i64::MAX as u128) as i64;
                j.record(
                    &a.legs,
                    started_at,
                    a.start.elapsed().as_micros() as u64,
                    mcp_probe_schema::model::Observation::Stdio(a.exchange),
                );
            }
            let process = child.process_record(&shown, env_names, how);
            if let Some((at, x)) = child.drain_now() {
                let started_at = now_us() - at.elapsed().as_micros().min(i64::MAX as u128) as i64;
                j.record(
                    &[leg::STDIO_STREAM],
                    started_at,
                    0,
                    mcp_probe_schema::model::Observation::Stdio(x),
                );
            }
            j.record(
                &[leg::STDIO_PROCESS],
                spawned_at,
                started.elapsed().as_micros() as u64,
                mcp_probe_schema::model::Observation::StdioProcess(process),
            );
        });
    }
    let mut probe = Probe::new(run.client, j.clone(), None, run.options.max_pages);
    probe.inputs = lock(j).inputs().cloned();
    probe.in_flight = run.in_flight.clone();
    probe.stdio = Some((child.clone(), Duration::from_millis(run.options.timeout_ms)));
    let endpoint = t.stdio_endpoint();
    probe.endpoint = Some(endpoint.clone());
    let ending = match detect(&mut probe, &endpoint).await {
        Ok(()) => {
            stage("the inventory");
            let ending = probe.inventory().await;
            stage("the probe legs");
            probe_legs(&mut probe, run.info).await;
            stage("the tool calls");
            tool_calls(&mut probe, run.info, run.baseline).await;
            ending
        }
        Err(why) => Ending::NoEndpoint(match child.exit_within(Duration::from_millis(200)) {
            Some(e) => format!(
                "the server exited ({}) before a session was established: {why}",
                match (e.code, e.signal) {
                    (Some(c), _) => format!("exit code {c}"),
                    (_, Some(s)) => format!("signal {s}"),
                    _ => "status unknown".into(),
                }
            ),
            None => why,
        }),
    };
    finished.store(true, Ordering::SeqCst);
    ending
}

/// The protocol-level families over stdio, the others recorded as skipped (`stdio`).
async fn probe_legs(p: &mut Probe<'_>, info_only: bool) {
    let all: Vec<LegId> = crate::legs::AFTER_INVENTORY
        .iter()
        .flat_map(|f| f.legs().iter().copied())
        .collect();
    if info_only {
        lock(&p.journal).skip(&all, "not sent: --info run (connect and enumerate only)");
        return;
    }
    let sent: Vec<LegId> = STDIO_FAMILIES
        .iter()
        .flat_map(|f| f.legs().iter().copied())
        .collect();
    let http_only: Vec<LegId> = all.into_iter().filter(|l| !sent.contains(l)).collect();
    lock(&p.journal).skip(&http_only, NOT_ON_STDIO);
    // The per-era families are not sent again on another era: a stdio process serves
    // one session.
    for f in STDIO_FAMILIES {
        f.send(p).await;
    }
}

/// The tool calls of 1.3 and 7.2.2: without the operator's consent they are skipped
/// with the reason as on HTTP; with it they are not sent in this build (7.2.2 watches an
/// HTTP notification stream), and the skip says so.
async fn tool_calls(p: &mut Probe<'_>, info: bool, baseline: Option<&std::path::Path>) {
    let inputs = p.inputs.clone();
    if !info && crate::legs::c1_3_7_2_2_tools::consent(inputs.as_ref()).is_ok() {
        lock(&p.journal).skip(
            &vocab::family::TOOL_CALLS,
            "not sent: stdio (the consented tool calls of 1.3 and 7.2.2 are sent on HTTP only in this build)",
        );
        return;
    }
    p.tool_calls(baseline, info).await;
}

/// Revision detection over stdio (module docs). `Err` says why no session was
/// established.
async fn detect(p: &mut Probe<'_>, endpoint: &url::Url) -> Result<(), String> {
    let (h, body, id) = p.modern(method::DISCOVER, serde_json::Map::new());
    let r = p
        .rpc(&[leg::ENDPOINT_DETECT], endpoint, h, &body, Some(id))
        .await;
    // An empty or unrelated result (`{}`) is not a 2026-07-28 answer (negotiation.rs).
    if let Some(result) = crate::mcp::negotiation::discover_result(&r).cloned() {
        p.set_endpoint(endpoint, false);
        p.set_negotiated(Era::Modern, vocab::REV_2026_07_28, &result, r.seq);
        return Ok(());
    }
    if let Some(e) = r
        .error
        .as_ref()
        .filter(|e| e.kind != mcp_probe_schema::model::ErrorKind::Timeout)
    {
        // Stdout closed or stdin refused: the server is gone.
        return Err(format!("server/discover: {e}"));
    }
    let discover = crate::mcp::negotiation::describe_discover(&r);
    let modern_refusal = r.error_code().is_some_and(code::is_modern_rejection);
    let mut offers = crate::mcp::negotiation::supported_handshake(&r);
    if offers.is_empty() {
        offers.push(vocab::REV_2025_11_25.to_string());
    }
    let offer = offers.remove(0);
    let (h, body, id) = p.initialize_body(&offer);
    let r = p
        .rpc(
            &[leg::ENDPOINT_DETECT, leg::SESSION_INITIALIZE],
            endpoint,
            h,
            &body,
            Some(id),
        )
        .await;
    let Some(result) = r.result().cloned() else {
        return Err(format!(
            "server/discover: {discover}{}; initialize {offer}: {}",
            if modern_refusal {
                " (a 2026-07-28 refusal)"
            } else {
                ""
            },
            r.describe()
        ));
    };
    let echoed = mcp_probe_schema::derive::agreed_revision(&result).map_err(|echoed| {
        format!(
            "initialize answered protocolVersion {echoed:?}, which is not a handshake revision this tool speaks"
        )
    })?;
    p.finish_handshake(endpoint, &echoed, &result, r.seq).await;
    Ok(())
}
