//! A run over many targets: validation of every input before any traffic, concurrent
//! targets (`--concurrency`), progress on stderr, bundle paths on stdout, and sealing on
//! every way out (success, failure, a panicking leg, Ctrl-C).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_probe_schema::bundle::SecretKey;
use mcp_probe_schema::model::{CaFile, Options, RunStatus, Target as TargetRecord, TokenFacts};
use mcp_probe_schema::redact::decode_jwt;
use tokio::task::JoinSet;

pub mod cli;
pub mod flags;
pub mod inputs;
pub mod target;

pub use cli::{Exit, Printer, Signal, UsageError};
use flags::Flags;
use target::{dedup, read_servers_file, Target};

use crate::journal::Journal;
use crate::mcp::{Ending, Probe};
use crate::transport::http::Client;

/// The stopping signals, registered once for the whole run (a signal that arrives
/// between two turns of the select loop is not lost).
struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn register() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next stopping signal.
    async fn next(&mut self) -> Signal {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                let delivered = match s {
                    Some(s) => s.recv().await.is_some(),
                    None => false,
                };
                if !delivered {
                    // Not registered (or the stream ended): this signal never stops the run.
                    std::future::pending::<()>().await;
                }
            }
            tokio::select! {
                _ = one(&mut self.int) => Signal::Int,
                _ = one(&mut self.term) => Signal::Term,
                _ = one(&mut self.hup) => Signal::Hup,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Signal::Int,
                Err(_) => std::future::pending().await,
            }
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, UsageError> {
    std::fs::read(path).map_err(|source| UsageError::Read {
        path: path.into(),
        source,
    })
}

/// Everything validated, ready to collect.
pub struct Plan {
    targets: Vec<Target>,
    key: SecretKey,
    client: Arc<Client>,
    token: Option<(String, String)>,
    inputs: Option<serde_json::Value>,
    options: Options,
    out: PathBuf,
    concurrency: usize,
    info: bool,
    plaintext_port: u16,
    no_browser: bool,
    reauth: bool,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plan({} targets)", self.targets.len())
    }
}

/// Validate flags and inputs. Nothing touches the network here.
pub fn plan(flags: &Flags, printer: &Printer) -> Result<Plan, UsageError> {
    let mut raw = flags.targets.clone();
    if let Some(p) = &flags.servers_file {
        let bytes = read(p)?;
        let text = String::from_utf8(bytes).map_err(|_| UsageError::Invalid {
            path: p.clone(),
            reason: "not UTF-8 text".into(),
        })?;
        raw.extend(read_servers_file(&text));
    }
    let raw = dedup(raw);
    if raw.is_empty() {
        return Err(UsageError::NoTargets);
    }
    let targets = raw
        .iter()
        .map(|t| Target::parse(t))
        .collect::<Result<Vec<_>, _>>()?;

    let token = match &flags.token_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Some((var.clone(), v.trim().to_string())),
            _ => return Err(UsageError::TokenEnv(var.clone())),
        },
        None => None,
    };
    if token.is_some() {
        if let Some(t) = targets
            .iter()
            .find(|t| t.base_url.scheme() == "http" && !t.is_loopback())
        {
            return Err(UsageError::PlaintextToken(t.as_typed.clone()));
        }
    }

    let (inputs, warnings) = crate::run::inputs::load(flags.inputs.as_deref(), &targets)?;
    warnings.iter().for_each(|w| printer.warn(w));

    let (ca_record, ca_certs) = match &flags.ca_file {
        Some(p) => {
            let bytes = read(p)?;
            let certs: Vec<rustls_pki_types::CertificateDer<'static>> = {
                use rustls_pki_types::pem::PemObject;
                rustls_pki_types::CertificateDer::pem_slice_iter(&bytes)
                    .collect::<Result<_, _>>()
                    .map_err(|e| UsageError::Invalid {
                        path: p.clone(),
                        reason: format!("not PEM certificates: {e}"),
                    })?
            };
            if certs.is_empty() {
                return Err(UsageError::Invalid {
                    path: p.clone(),
                    reason: "no PEM certificate in the file".into(),
                });
            }
            let rec = CaFile {
                path: p.display().to_string(),
                sha256: hex::encode(mcp_probe_schema::bundle::sha256(&bytes)),
                certificates: certs
                    .iter()
                    .map(|c| serde_bytes::ByteBuf::from(c.as_ref().to_vec()))
                    .collect(),
            };
            (Some(rec), certs)
        }
        None => (None, Vec::new()),
    };
    let key = match &flags.key {
        Some(p) => crate::keys::load(p)?,
        None => {
            let (k, path, created) = crate::keys::load_or_create_default()?;
            if created {
                printer.progress(&format!(
                    "created signing key {} (key id {}); public key in {}",
                    path.display(),
                    k.public().key_id(),
                    path.with_extension("pub").display()
                ));
            }
            k
        }
    };

    let ca_path = flags.ca_file.as_ref().map(|p| p.display().to_string());
    let trust =
        crate::transport::tls::Trust::load(ca_path.as_deref().map(|p| (p, ca_certs.as_slice())))?;
    let options = Options {
        timeout_ms: flags.timeout * 1000,
        body_cap: flags.body_cap,
        max_pages: flags.max_pages,
        info_only: flags.info,
        token_env: flags.token_env.clone(),
        ca_file: ca_record,
        plaintext_port: flags.plaintext_port,
        target_timeout_ms: Some(flags.target_timeout * 1000),
        bundle_cap: Some(flags.bundle_cap),
    };
    Ok(Plan {
        targets,
        key,
        client: Arc::new(Client::new(
            trust,
            Duration::from_secs(flags.timeout),
            flags.body_cap,
        )),
        token,
        inputs,
        options,
        out: flags.out.clone(),
        concurrency: flags.concurrency as usize,
        info: flags.info,
        plaintext_port: flags.plaintext_port,
        no_browser: flags.no_browser,
        reauth: flags.reauth,
    })
}

type Shared = Arc<Mutex<Journal>>;

fn lock(j: &Shared) -> std::sync::MutexGuard<'_, Journal> {
    j.lock().unwrap_or_else(|p| p.into_inner())
}

/// Collect every target of the plan.
pub async fn execute(plan: Plan, printer: &Printer) -> Exit {
    // Registered before anything is written: from here on, SIGINT, SIGTERM and SIGHUP
    // seal instead of killing the process.
    let mut signals = Signals::register();
    let plan = Arc::new(plan);
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

    let sem = Arc::new(tokio::sync::Semaphore::new(plan.concurrency));
    let mut set = JoinSet::new();
    let total = journals.len();
    let deadline = Duration::from_millis(
        plan.options
            .target_timeout_ms
            .unwrap_or(DEFAULT_TARGET_TIMEOUT_MS),
    );
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
            // The deadline covers the whole target: when it passes, the target's work is
            // dropped (no further byte is sent) and what was recorded is sealed.
            let stage = Stage::default();
            let start = std::time::Instant::now();
            let work = collect_target(&t, &j, &plan, &stage);
            tokio::pin!(work);
            let end = loop {
                // Time spent in the OAuth login (which may wait for a person in the
                // browser) is not counted against the deadline.
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
            };
            if let Some(u) = t.candidates.first() {
                plan.client.close(u).await;
            }
            (i, end)
        });
    }

    let mut stopped_by: Option<Signal> = None;
    let mut done = vec![false; journals.len()];
    let mut no_session: Vec<String> = Vec::new();
    loop {
        tokio::select! {
            joined = set.join_next_with_id() => {
                let Some(joined) = joined else { break };
                match joined {
                    Ok((_, (i, end))) => {
                        done[i] = true;
                        let (t, j) = &journals[i];
                        match finish(t, j, end, &plan, printer) {
                            Sealed::Written { session: true } => {}
                            Sealed::Written { session: false } => no_session.push(t.as_typed.clone()),
                            Sealed::NotWritten => write_failed = true,
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
                stopped_by = Some(sig);
                set.abort_all();
                break;
            }
        }
    }
    let reason = match stopped_by {
        Some(sig) => format!("interrupted by {}", sig.name()),
        None => "interrupted: a leg failed inside the collector".to_string(),
    };
    for (i, (t, j)) in journals.iter().enumerate() {
        if done[i] {
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
                write_failed = true;
            }
        }
    }
    if write_failed {
        Exit::WriteFailed
    } else if let Some(sig) = stopped_by {
        Exit::Interrupted(sig)
    } else if !no_session.is_empty() {
        printer.error(&format!(
            "{} of {total} target(s) sealed without an MCP session (exit 3): {}",
            no_session.len(),
            no_session.join(", ")
        ));
        Exit::NoSession
    } else {
        Exit::Ok
    }
}

/// The default of `--target-timeout` (for a plan whose options do not record one).
const DEFAULT_TARGET_TIMEOUT_MS: u64 = 300_000;

/// How a target's task ended.
#[derive(Debug)]
enum End {
    /// The pipeline ran to its end.
    Finished(Ending),
    /// The per-target deadline passed; the text says when.
    Deadline(String),
}

/// Where a target's run is, so that a deadline can say what it cut: the stage, and the
/// request in flight when the probe knows it.
#[derive(Debug, Clone, Default)]
struct Stage {
    stage: Arc<Mutex<&'static str>>,
    in_flight: Arc<Mutex<Option<String>>>,
    /// Time not counted against the deadline: what was excluded so far, and since when
    /// the current exclusion runs.
    excluded: Arc<Mutex<(Duration, Option<std::time::Instant>)>>,
}

impl Stage {
    fn set(&self, stage: &'static str) {
        *self.stage.lock().unwrap_or_else(|p| p.into_inner()) = stage;
    }

    /// Stop (`true`) or resume (`false`) counting time against the deadline.
    fn exclude(&self, on: bool) {
        let mut g = self.excluded.lock().unwrap_or_else(|p| p.into_inner());
        match (on, g.1) {
            (true, None) => g.1 = Some(std::time::Instant::now()),
            (false, Some(since)) => {
                g.0 += since.elapsed();
                g.1 = None;
            }
            _ => {}
        }
    }

    /// Time counted against the deadline since `start`.
    fn counted(&self, start: std::time::Instant) -> Duration {
        let g = self.excluded.lock().unwrap_or_else(|p| p.into_inner());
        let running = g.1.map_or(Duration::ZERO, |since| since.elapsed());
        start.elapsed().saturating_sub(g.0 + running)
    }

    fn describe(&self) -> String {
        let stage = *self.stage.lock().unwrap_or_else(|p| p.into_inner());
        let stage = if stage.is_empty() { "the start" } else { stage };
        match self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            Some(req) => format!("{stage} ({req} in flight)"),
            None => stage.to_string(),
        }
    }
}

/// One target's whole pipeline: transport facts, detection, discovery, login, legs.
async fn collect_target(t: &Target, j: &Shared, plan: &Plan, stage: &Stage) -> Ending {
    let token = plan.token.as_ref().map(|(_, v)| v.clone());
    let mut probe = Probe::new(&plan.client, j.clone(), token, plan.options.max_pages);
    probe.inputs = lock(j).inputs().cloned();
    probe.plaintext_port = plan.plaintext_port;
    probe.in_flight = stage.in_flight.clone();
    if let Some(first) = t.candidates.first() {
        stage.set("the transport facts");
        probe.transport_facts(first, plan.info).await;
    }
    stage.set("endpoint detection and the inventory");
    let mut ending = probe.run(&t.candidates).await;
    let mut oauth_login: Option<crate::oauth::Login> = None;
    let mut discovered = crate::oauth::discovery::Discovered::default();
    if !matches!(ending, Ending::NoEndpoint(_)) {
        // Discovery runs on every endpoint: an observed absence of metadata is
        // evidence too (the OAuth checks are N/A only when it was observed).
        stage.set("OAuth discovery");
        let challenge = probe.challenge.clone();
        let found = probe.discovery(challenge).await;
        discovered = found.clone();
        if ending == Ending::AuthRequired && probe.token.is_none() {
            stage.set("the OAuth login");
            stage.exclude(true);
            let logged_in = login(&mut probe, &found, plan, j).await;
            stage.exclude(false);
            match logged_in {
                Ok((token, l)) => {
                    probe.token = Some(token);
                    oauth_login = Some(l);
                    if let Some(endpoint) = probe.endpoint.clone() {
                        stage.set("endpoint detection and the inventory after the login");
                        ending = probe.run(std::slice::from_ref(&endpoint)).await;
                    }
                }
                Err(why) => lock(j).set_failure(format!("no credential: {why}")),
            }
        }
    }
    if ending == Ending::Complete {
        stage.set("the probe legs");
        probe.probe_legs(plan.info).await;
        stage.set("the scope probe leg");
        probe.scope_probe_leg(plan.info).await;
        stage.set("the deputy legs");
        probe.deputy_legs(&discovered, plan.info).await;
        // Last: the credential operations of 3.3.1 (the refresh grant for a
        // foreign resource may rotate or spend the refresh token) and 7.2.1.
        stage.set("the audience legs");
        probe.audience_legs(oauth_login.as_ref(), plan.info).await;
    }
    ending
}

/// Log in to the endpoint's authorization server (cache, refresh, or an interactive
/// login) and return the access token. An interactive login needs a person: it is tried
/// only when stdin is a terminal (a browser is opened) or `--no-browser` was given (the
/// URL is printed on stderr for whoever drives the run); otherwise the run goes on
/// without a credential and says so, instead of waiting for a callback that never comes.
async fn login(
    probe: &mut Probe<'_>,
    found: &crate::oauth::discovery::Discovered,
    plan: &Plan,
    j: &Shared,
) -> Result<(String, crate::oauth::Login), NoCredential> {
    use std::io::IsTerminal;
    let endpoint = probe.endpoint.clone().ok_or(NoCredential::NoEndpoint)?;
    let Some((_, meta)) = found.as_metadata.first() else {
        return Err(NoCredential::NoMetadata);
    };
    let state = crate::keys::state_dir()?;
    let scope = found.challenge.as_ref().and_then(|c| c.scope());
    let mut login = crate::oauth::Login::new(&endpoint, meta, found.prm.as_ref(), scope, &state)?;
    login.no_browser = plan.no_browser;
    login.reauth = plan.reauth;
    login.redactor = lock(j).redactor().clone();
    let addrs: Vec<std::net::IpAddr> = lock(j)
        .target()
        .addresses
        .iter()
        .filter_map(|a| a.parse::<std::net::SocketAddr>().ok().map(|s| s.ip()))
        .collect();
    login.target_class = crate::oauth::guard::target_class(&addrs);
    let interactive = plan.no_browser || std::io::stdin().is_terminal();
    if !interactive {
        let cached = !plan.reauth && login.cache_file().ok().flatten().is_some();
        if !cached {
            return Err(NoCredential::NotInteractive);
        }
        // A cached credential may still need a refresh; if that is refused, there is no
        // one to complete a login: give up at once instead of waiting for a callback.
        login.callback_timeout = std::time::Duration::from_secs(1);
    }
    let cred = login.obtain(&plan.client, j).await?;
    Ok((cred.access_token, login))
}

/// Why the OAuth login gave no credential (the run records it as "no credential: ...").
#[derive(Debug, thiserror::Error)]
enum NoCredential {
    /// The probe found no MCP endpoint to log in for.
    #[error("no endpoint")]
    NoEndpoint,
    /// HTTP 401, but no authorization server metadata was discovered.
    #[error(
        "the endpoint requires authentication (HTTP 401) but no authorization server metadata \
         was discovered (see the discovery.prm and discovery.as records); use --token-env"
    )]
    NoMetadata,
    /// The state directory (for the token cache) is unknown.
    #[error(transparent)]
    StateDir(#[from] crate::keys::KeyError),
    /// The login itself failed.
    #[error(transparent)]
    Login(#[from] crate::oauth::LoginError),
    /// Nothing cached, and no person to complete an interactive login.
    #[error(
        "the endpoint requires authentication (HTTP 401) and no credential is cached; not a \
         terminal, so no browser login is attempted (use --token-env, or --no-browser to print the \
         login URL)"
    )]
    NotInteractive,
}

/// What sealing one target produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sealed {
    /// The bundle was written; `session` says whether an MCP session was established.
    Written {
        /// An MCP session was negotiated with the target.
        session: bool,
    },
    /// The bundle could not be written.
    NotWritten,
}

/// Seal one finished target and print its path (and `--info` block).
fn finish(t: &Target, j: &Shared, end: End, plan: &Plan, printer: &Printer) -> Sealed {
    let mut g = lock(j);
    let (status, session) = match &end {
        End::Finished(Ending::Complete) => (RunStatus::Complete, true),
        End::Finished(Ending::AuthRequired) => {
            if g.failure().is_none() {
                g.set_failure(if plan.token.is_some() {
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
    match g.seal(status, &plan.key) {
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
            Sealed::Written { session }
        }
        Err(e) => {
            printer.error(&format!("{}: {e}", t.as_typed));
            Sealed::NotWritten
        }
    }
}

/// The `--info` lines of a target (indented under its bundle path).
fn info_block(j: &Journal) -> String {
    let s = j.session();
    // Computed from the journal's records, which are redacted before they are written;
    // read back one at a time, keeping only the inventory's.
    let mut listed = Vec::new();
    j.for_each_record(|r| {
        if r.legs.iter().any(|l| l.starts_with("inventory.")) {
            listed.push(r);
        }
        true
    });
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

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn time_in_the_login_is_not_counted_against_the_target_deadline() {
        let stage = Stage::default();
        let start = std::time::Instant::now();
        std::thread::sleep(Duration::from_millis(50));
        stage.exclude(true);
        std::thread::sleep(Duration::from_millis(200));
        // While excluded, the count does not move on.
        let during = stage.counted(start);
        assert!(
            during + Duration::from_millis(200) <= start.elapsed(),
            "{during:?}"
        );
        stage.exclude(false);
        std::thread::sleep(Duration::from_millis(50));
        let counted = stage.counted(start);
        assert!(counted >= Duration::from_millis(100), "{counted:?}");
        assert!(
            counted + Duration::from_millis(200) <= start.elapsed(),
            "{counted:?}"
        );
    }

    #[test]
    fn signals_name_themselves_and_map_to_shell_exit_codes() {
        assert_eq!(Exit::Interrupted(Signal::Int).code(), 130);
        assert_eq!(Exit::Interrupted(Signal::Term).code(), 143);
        assert_eq!(Exit::Interrupted(Signal::Hup).code(), 129);
        assert_eq!(Exit::NoSession.code(), 3);
        assert_eq!(Exit::WriteFailed.code(), 1);
        assert_eq!(Exit::Ok.code(), 0);
        assert_eq!(Signal::Term.name(), "SIGTERM");
    }
}

#[cfg(test)]
mod no_credential_tests {
    use super::NoCredential;

    #[test]
    fn login_refusals_keep_their_wording() {
        assert_eq!(NoCredential::NoEndpoint.to_string(), "no endpoint");
        assert_eq!(
            NoCredential::NoMetadata.to_string(),
            "the endpoint requires authentication (HTTP 401) but no authorization server metadata \
             was discovered (see the discovery.prm and discovery.as records); use --token-env"
        );
        assert_eq!(
            NoCredential::NotInteractive.to_string(),
            "the endpoint requires authentication (HTTP 401) and no credential is cached; not a \
             terminal, so no browser login is attempted (use --token-env, or --no-browser to print \
             the login URL)"
        );
        let key = NoCredential::from(crate::keys::KeyError::NoHome);
        assert_eq!(
            key.to_string(),
            "cannot find the state directory: set MCP_PROBE_HOME or HOME"
        );
    }
}
