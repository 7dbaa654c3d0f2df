//! A run over many targets: validation of every input before any traffic, concurrent
//! targets (`--concurrency`), progress on stderr, bundle paths on stdout, and sealing on
//! every way out (success, failure, a panicking leg, Ctrl-C).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_probe_schema::bundle::SecretKey;
use mcp_probe_schema::model::{CaFile, Options, RunStatus, Target as TargetRecord, TokenFacts};
use mcp_probe_schema::redact::{decode_jwt, Redactor};
use tokio::task::JoinSet;

use crate::flags::Flags;
use crate::http::Client;
use crate::journal::Journal;
use crate::probe::{Ending, Probe};
use crate::target::{dedup, read_servers_file, Target, TargetError};

/// How the process ends (design.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every target has a sealed bundle.
    Ok,
    /// A bundle could not be written.
    WriteFailed,
    /// Ctrl-C: every started target was sealed as `interrupted`.
    Interrupted,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::WriteFailed => 1,
            Exit::Interrupted => 130,
        }
    }
}

/// Bad operator input: exit 2, before any traffic.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// No target given.
    #[error("no target given (pass TARGET... or --servers-file FILE)")]
    NoTargets,
    /// A target did not parse.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file has bad contents.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--token-env` names an unset variable.
    #[error("--token-env {0}: the environment variable is not set or empty")]
    TokenEnv(String),
    /// The bearer token would travel in clear to a remote host.
    #[error("refusing to send the --token-env credential to {0} over plain http (only https or a loopback target)")]
    PlaintextToken(String),
    /// Signing key problem.
    #[error(transparent)]
    Key(#[from] crate::keys::KeyError),
    /// Trust store problem.
    #[error(transparent)]
    Trust(#[from] crate::tls::TrustError),
}

/// Writes bundle paths to stdout and progress to stderr; the only printer.
#[derive(Debug, Clone)]
pub struct Printer {
    quiet: bool,
}

impl Printer {
    /// A printer; `quiet` silences progress.
    pub fn new(quiet: bool) -> Printer {
        Printer { quiet }
    }

    /// A line on stdout.
    pub fn out(&self, line: &str) {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    }

    /// A progress line on stderr.
    pub fn progress(&self, line: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "mcp-collect: {line}");
        }
    }

    /// An error line on stderr (never silenced).
    pub fn error(&self, line: &str) {
        let _ = writeln!(std::io::stderr().lock(), "mcp-collect: error: {line}");
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

    let inputs = crate::inputs::load(flags.inputs.as_deref(), &targets)?;

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
    let trust = crate::tls::Trust::load(ca_path.as_deref().map(|p| (p, ca_certs.as_slice())))?;
    let options = Options {
        timeout_ms: flags.timeout * 1000,
        body_cap: flags.body_cap,
        max_pages: flags.max_pages,
        info_only: flags.info,
        token_env: flags.token_env.clone(),
        ca_file: ca_record,
        plaintext_port: flags.plaintext_port,
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
    let plan = Arc::new(plan);
    let mut journals: Vec<(Target, Shared)> = Vec::new();
    let mut write_failed = false;
    for t in &plan.targets {
        let mut redactor = Redactor::new();
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
                j.tokens = tokens;
                j.inputs = plan
                    .inputs
                    .as_ref()
                    .and_then(|i| i.get(&t.as_typed))
                    .cloned();
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
            let token = plan.token.as_ref().map(|(_, v)| v.clone());
            let mut probe = Probe::new(&plan.client, j.clone(), token, plan.options.max_pages);
            probe.inputs = lock(&j).inputs.clone();
            probe.plaintext_port = plan.plaintext_port;
            if let Some(first) = t.candidates.first() {
                probe.transport_facts(first, plan.info).await;
            }
            let mut ending = probe.run(&t.candidates).await;
            let mut oauth_login: Option<crate::oauth::Login> = None;
            let mut discovered = crate::discovery::Discovered::default();
            if !matches!(ending, Ending::NoEndpoint(_)) {
                // Discovery runs on every endpoint: an observed absence of metadata is
                // evidence too (the OAuth checks are N/A only when it was observed).
                let challenge = probe.challenge.clone();
                let found = probe.discovery(challenge).await;
                discovered = found.clone();
                if ending == Ending::AuthRequired && probe.token.is_none() {
                    match login(&mut probe, &found, &plan, &j).await {
                        Ok((token, l)) => {
                            probe.token = Some(token);
                            oauth_login = Some(l);
                            if let Some(endpoint) = probe.endpoint.clone() {
                                ending = probe.run(std::slice::from_ref(&endpoint)).await;
                            }
                        }
                        Err(why) => lock(&j).failure = Some(format!("no credential: {why}")),
                    }
                }
            }
            if ending == Ending::Complete {
                probe.probe_legs(plan.info).await;
                probe.scope_probe_leg(plan.info).await;
                probe.deputy_legs(&discovered, plan.info).await;
                // Last: the credential operations of 3.3.1 (the refresh grant for a
                // foreign resource may rotate or spend the refresh token) and 7.2.1.
                probe.audience_legs(oauth_login.as_ref(), plan.info).await;
            }
            if let Some(u) = t.candidates.first() {
                plan.client.close(u).await;
            }
            (i, ending)
        });
    }

    let mut interrupted = false;
    let mut done = vec![false; journals.len()];
    loop {
        tokio::select! {
            joined = set.join_next_with_id() => {
                let Some(joined) = joined else { break };
                match joined {
                    Ok((_, (i, ending))) => {
                        done[i] = true;
                        let (t, j) = &journals[i];
                        if !finish(t, j, ending, &plan, printer) {
                            write_failed = true;
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
            _ = tokio::signal::ctrl_c() => {
                interrupted = true;
                set.abort_all();
                break;
            }
        }
    }
    let reason = if interrupted {
        "interrupted by Ctrl-C"
    } else {
        "interrupted: a leg failed inside the collector"
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
            g.failure = Some(reason.to_string());
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
    } else if interrupted {
        Exit::Interrupted
    } else {
        Exit::Ok
    }
}

/// Log in to the endpoint's authorization server (cache, refresh, or an interactive
/// login) and return the access token. An interactive login needs a person: it is tried
/// only when stdin is a terminal (a browser is opened) or `--no-browser` was given (the
/// URL is printed on stderr for whoever drives the run); otherwise the run goes on
/// without a credential and says so, instead of waiting for a callback that never comes.
async fn login(
    probe: &mut Probe<'_>,
    found: &crate::discovery::Discovered,
    plan: &Plan,
    j: &Shared,
) -> Result<(String, crate::oauth::Login), String> {
    use std::io::IsTerminal;
    let endpoint = probe.endpoint.clone().ok_or("no endpoint")?;
    let Some((_, meta)) = found.as_metadata.first() else {
        return Err("the endpoint requires authentication (HTTP 401) but no authorization server metadata \
                    was discovered (see the discovery.prm and discovery.as records); use --token-env"
            .into());
    };
    let state = crate::keys::state_dir().map_err(|e| e.to_string())?;
    let scope = found.challenge.as_ref().and_then(|c| c.scope());
    let mut login = crate::oauth::Login::new(&endpoint, meta, found.prm.as_ref(), scope, &state)
        .map_err(|e| e.to_string())?;
    login.no_browser = plan.no_browser;
    login.reauth = plan.reauth;
    let addrs: Vec<std::net::IpAddr> = lock(j)
        .target
        .addresses
        .iter()
        .filter_map(|a| a.parse::<std::net::SocketAddr>().ok().map(|s| s.ip()))
        .collect();
    login.target_class = crate::guard::target_class(&addrs);
    let interactive = plan.no_browser || std::io::stdin().is_terminal();
    if !interactive {
        let cached = !plan.reauth && login.cache_file().ok().flatten().is_some();
        if !cached {
            return Err("the endpoint requires authentication (HTTP 401) and no credential is cached; not a \
                        terminal, so no browser login is attempted (use --token-env, or --no-browser to print the \
                        login URL)"
                .into());
        }
        // A cached credential may still need a refresh; if that is refused, there is no
        // one to complete a login: give up at once instead of waiting for a callback.
        login.callback_timeout = std::time::Duration::from_secs(1);
    }
    let cred = login
        .obtain(&plan.client, j)
        .await
        .map_err(|e| e.to_string())?;
    Ok((cred.access_token, login))
}

/// Seal one finished target and print its path (and `--info` block). False when the
/// bundle could not be written.
fn finish(t: &Target, j: &Shared, ending: Ending, plan: &Plan, printer: &Printer) -> bool {
    let mut g = lock(j);
    let status = match &ending {
        Ending::Complete => RunStatus::Complete,
        Ending::AuthRequired => {
            g.failure = g.failure.take().or(Some(if plan.token.is_some() {
                "the endpoint refused the --token-env credential (HTTP 401)".into()
            } else {
                "the endpoint requires authentication (HTTP 401); no credential was given (--token-env)".into()
            }));
            RunStatus::Complete
        }
        Ending::NoEndpoint(why) => {
            g.failure = Some(format!("no MCP endpoint: {why}"));
            RunStatus::Failed
        }
    };
    match &ending {
        Ending::Complete => {}
        _ => printer.error(&format!(
            "{}: {}",
            t.as_typed,
            g.failure.clone().unwrap_or_default()
        )),
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
            true
        }
        Err(e) => {
            printer.error(&format!("{}: {e}", t.as_typed));
            false
        }
    }
}

/// The `--info` lines of a target (indented under its bundle path).
fn info_block(j: &Journal) -> String {
    let s = j.session.as_ref();
    let inv = mcp_probe_schema::derive::inventory(&j.records());
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
        format!("  target: {}", j.target.as_typed),
        format!(
            "  endpoint: {}",
            j.target.endpoint.as_deref().unwrap_or("(none)")
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
    if let Some(f) = &j.failure {
        lines.push(format!("  note: {f}"));
    }
    lines.join("\n")
}
