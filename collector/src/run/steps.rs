//! The steps of one target, as data: [`STEPS`] lists them in order over a shared
//! context (the MCP session and what earlier steps found), and the run walks it. The
//! order is the order of the records in the bundle. Also: the per-target deadline's
//! bookkeeping (`Stage`) and the OAuth login of a run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::plan::Plan;
use super::target::Target;
use crate::journal::{lock, SharedJournal as Shared};
use crate::mcp::{Ending, Probe};
use crate::oauth::discovery::Discovered;
use crate::oauth::{Login, LoginError, Obtained};

/// The default of `--target-timeout` (for a plan whose options do not record one).
pub(super) const DEFAULT_TARGET_TIMEOUT_MS: u64 = 300_000;

/// How a target's task ended.
#[derive(Debug)]
pub(super) enum End {
    /// The pipeline ran to its end.
    Finished(Ending),
    /// The per-target deadline passed; the text says when.
    Deadline(String),
}

/// Where a target's run is, so that a deadline can say what it cut: the stage, and the
/// request in flight when the probe knows it.
#[derive(Debug, Clone, Default)]
pub(super) struct Stage {
    stage: Arc<Mutex<&'static str>>,
    in_flight: Arc<Mutex<Option<String>>>,
    /// Time not counted against the deadline: what was excluded so far, and since when
    /// the current exclusion runs.
    excluded: Arc<Mutex<(Duration, Option<std::time::Instant>)>>,
}

impl Stage {
    pub(super) fn set(&self, stage: &'static str) {
        *self.stage.lock().unwrap_or_else(|p| p.into_inner()) = stage;
    }

    /// Stop (`true`) or resume (`false`) counting time against the deadline.
    pub(super) fn exclude(&self, on: bool) {
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
    pub(super) fn counted(&self, start: std::time::Instant) -> Duration {
        let g = self.excluded.lock().unwrap_or_else(|p| p.into_inner());
        let running = g.1.map_or(Duration::ZERO, |since| since.elapsed());
        start.elapsed().saturating_sub(g.0 + running)
    }

    /// The request in flight, shared with the probe that sends it.
    pub(super) fn in_flight(&self) -> Arc<Mutex<Option<String>>> {
        self.in_flight.clone()
    }

    pub(super) fn describe(&self) -> String {
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

/// The context the steps of one target share: its probe (the MCP session), where it
/// stands, and what earlier steps found.
struct TargetRun<'p> {
    target: &'p Target,
    journal: &'p Shared,
    plan: &'p Plan,
    stage: &'p Stage,
    probe: Probe<'p>,
    /// How detection ended (`None` before it ran).
    ending: Option<Ending>,
    /// What OAuth discovery found (empty when it did not run).
    discovered: Discovered,
    /// The login, when this run logged in.
    login: Option<Login>,
}

/// One step of a target's run. [`STEPS`] is their order; each step runs only when
/// `Step::applies` says so, after the stage is set to [`Step::stage`] (what a deadline
/// message names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// TLS 1.0/1.1 acceptance and the plaintext port ([`crate::legs::c2_2_tls`]), on the
    /// first candidate.
    TransportFacts,
    /// Endpoint detection, revision negotiation and the inventory ([`crate::mcp`]).
    Detection,
    /// OAuth discovery, on every endpoint found: an observed absence of metadata is
    /// evidence too (the OAuth checks are N/A only when it was observed).
    Discovery,
    /// The OAuth login when the endpoint answered 401 and no credential is held, then
    /// detection and the inventory again with the credential. Its time is not counted
    /// against the target deadline.
    Login,
    /// The probe legs after the inventory ([`crate::legs::AFTER_INVENTORY`]).
    ProbeLegs,
    /// The per-era families on a session of each other era the server serves
    /// ([`crate::legs::eras`]).
    OtherEras,
    /// The operator's out-of-scope call ([`crate::legs::c3_3_4_scope`]).
    ScopeLeg,
    /// The consented tool calls of 1.3 and 7.2.2 ([`crate::legs::c1_3_7_2_2_tools`]),
    /// after the read-only probe legs.
    ToolCalls,
    /// The confused-deputy legs ([`crate::legs::c3_3_5_deputy`]).
    DeputyLegs,
    /// The audience legs ([`crate::legs::c3_3_1_audience`]). Last: the credential
    /// operations of 3.3.1 (the refresh grant for a foreign resource may rotate or spend
    /// the refresh token) and 7.2.1.
    AudienceLegs,
}

/// The steps of one target, in order (the order of the records in its bundle).
pub const STEPS: &[Step] = &[
    Step::TransportFacts,
    Step::Detection,
    Step::Discovery,
    Step::Login,
    Step::ProbeLegs,
    Step::OtherEras,
    Step::ScopeLeg,
    Step::ToolCalls,
    Step::DeputyLegs,
    Step::AudienceLegs,
];

impl Step {
    /// What a deadline message says the target was doing.
    pub fn stage(self) -> &'static str {
        match self {
            Step::TransportFacts => "the transport facts",
            Step::Detection => "endpoint detection and the inventory",
            Step::Discovery => "OAuth discovery",
            Step::Login => "the OAuth login",
            Step::ProbeLegs => "the probe legs",
            Step::OtherEras => "the legs on the other eras",
            Step::ScopeLeg => "the scope probe leg",
            Step::ToolCalls => "the tool calls",
            Step::DeputyLegs => "the deputy legs",
            Step::AudienceLegs => "the audience legs",
        }
    }

    /// Whether the step runs, given what the earlier ones did.
    fn applies(self, run: &TargetRun<'_>) -> bool {
        match self {
            Step::TransportFacts => !run.target.candidates.is_empty(),
            Step::Detection => true,
            Step::Discovery => !matches!(run.ending, None | Some(Ending::NoEndpoint(_))),
            Step::Login => run.ending == Some(Ending::AuthRequired) && run.probe.token.is_none(),
            Step::ProbeLegs
            | Step::OtherEras
            | Step::ScopeLeg
            | Step::ToolCalls
            | Step::DeputyLegs
            | Step::AudienceLegs => run.ending == Some(Ending::Complete),
        }
    }

    async fn run(self, run: &mut TargetRun<'_>) {
        let info = run.plan.info;
        let p = &mut run.probe;
        match self {
            Step::TransportFacts => {
                if let Some(first) = run.target.candidates.first() {
                    p.transport_facts(first, info).await;
                }
            }
            Step::Detection => run.ending = Some(p.run(&run.target.candidates).await),
            Step::Discovery => {
                let challenge = p.challenge.clone();
                run.discovered = p.discovery(challenge).await;
            }
            Step::Login => run.log_in().await,
            Step::ProbeLegs => p.probe_legs(info).await,
            Step::OtherEras => p.other_eras(info).await,
            Step::ScopeLeg => p.scope_probe_leg(info).await,
            Step::ToolCalls => {
                p.tool_calls(run.plan.baseline.as_deref(), info).await;
                run.step_up().await;
            }
            Step::DeputyLegs => p.deputy_legs(&run.discovered, info).await,
            Step::AudienceLegs => p.audience_legs(run.login.as_ref(), info).await,
        }
    }
}

impl TargetRun<'_> {
    /// [`Step::Login`]: the login outside the deadline's count, then detection again.
    /// A cached or refreshed token the endpoint refuses (revoked, or its key rotated) is
    /// replaced once: the cached access token is dropped, and the login refreshes or
    /// logs in again. A token still refused is named as what it was (from the cache, a
    /// refresh, the browser login or an unattended grant) with the endpoint's `error` and
    /// `error_description`.
    async fn log_in(&mut self) {
        self.stage.exclude(true);
        let logged_in = login(&mut self.probe, &self.discovered, self.plan, self.journal).await;
        self.stage.exclude(false);
        let (mut cred, mut l) = match logged_in {
            Ok(x) => x,
            Err(why) => {
                lock(self.journal).set_failure(format!("no credential: {why}"));
                return;
            }
        };
        let Some(endpoint) = self.probe.endpoint.clone() else {
            self.probe.token = Some(cred.access_token.clone());
            self.login = Some(l);
            return;
        };
        for attempt in 0..2 {
            self.probe.token = Some(cred.access_token.clone());
            self.stage
                .set("endpoint detection and the inventory after the login");
            self.ending = Some(self.probe.run(std::slice::from_ref(&endpoint)).await);
            let refused = self.ending == Some(Ending::AuthRequired);
            let stored = matches!(cred.obtained, Obtained::Cache | Obtained::Refresh);
            if !(refused && stored && attempt == 0) {
                break;
            }
            let what = obtained_name(cred.obtained);
            l.notice(&format!(
                "{endpoint}: the endpoint refused the {what} ({}); replacing it once",
                refusal(self.probe.challenge.as_deref())
            ));
            self.stage.exclude(true);
            let again = match l.forget_access_token() {
                Ok(()) => l.obtain(&self.plan.client, self.journal).await,
                Err(e) => Err(e),
            };
            self.stage.exclude(false);
            match again {
                Ok(c) => {
                    self.probe.dpop = crate::oauth::dpop::prover_for(&l, &c, self.journal);
                    cred = c;
                }
                Err(why) => {
                    lock(self.journal).set_failure(format!(
                        "the endpoint refused the {what} ({}); no other credential: {why}",
                        refusal(self.probe.challenge.as_deref())
                    ));
                    self.login = Some(l);
                    return;
                }
            }
        }
        if self.ending == Some(Ending::AuthRequired) {
            lock(self.journal).set_failure(format!(
                "the endpoint refused the {} (HTTP 401: {})",
                obtained_name(cred.obtained),
                refusal(self.probe.challenge.as_deref())
            ));
        }
        self.login = Some(l);
    }
}

impl TargetRun<'_> {
    /// The run's one step-up, when a consented call was answered 403
    /// `insufficient_scope` ([`crate::legs::step_up`]): a new token for the union of the
    /// scopes, then that call again. Its time is not counted against the deadline.
    async fn step_up(&mut self) {
        let Some(p) = self.probe.take_step_up() else {
            return;
        };
        let Some(login) = self.login.as_mut() else {
            let why = "the credential is not from a login of this run (--token-env): nothing to re-authorize";
            let scope = p.challenged_scope.clone().unwrap_or_default();
            self.probe.finish_step_up(&p, scope, Err(why.into())).await;
            return;
        };
        let scope =
            crate::legs::step_up::union(login.scope.as_deref(), p.challenged_scope.as_deref())
                .unwrap_or_default();
        if Some(scope.as_str()) == login.scope.as_deref() {
            let why = format!(
                "the challenge names no scope beyond the token's ({scope}): a new authorization would ask for the same"
            );
            self.probe.finish_step_up(&p, scope, Err(why)).await;
            return;
        }
        login.notice(&format!(
            "{}: a consented call was answered 403 insufficient_scope; authorizing again for scope {scope:?}",
            login.endpoint
        ));
        self.stage.exclude(true);
        let r = login
            .step_up(&self.plan.client, self.journal, scope.clone())
            .await;
        self.stage.exclude(false);
        if let Ok(c) = &r {
            self.probe.dpop = crate::oauth::dpop::prover_for(login, c, self.journal);
        }
        let token = r.map(|c| c.access_token).map_err(|e| e.to_string());
        self.probe.finish_step_up(&p, scope, token).await;
    }
}

/// What a credential was, for a refusal line.
fn obtained_name(o: Obtained) -> &'static str {
    match o {
        Obtained::Cache => "cached OAuth access token",
        Obtained::Refresh => "OAuth access token from a refresh grant",
        Obtained::Login => "OAuth access token of this run's browser login",
        Obtained::Grant => "OAuth access token of this run's --grant",
    }
}

/// The endpoint's refusal, from its `WWW-Authenticate` challenge: `error` and
/// `error_description` (redacted and escaped where printed), or that it gave none.
pub(super) fn refusal(challenge: Option<&[u8]>) -> String {
    let parsed = challenge.map(mcp_probe_schema::www_authenticate::parse);
    let c = parsed.as_ref().and_then(|p| {
        p.challenges
            .iter()
            .find(|c| c.param("error").is_some())
            .or_else(|| p.challenges.first())
    });
    match c {
        Some(c) => match (c.param("error"), c.param("error_description")) {
            (Some(e), Some(d)) => format!("{} error={e}: {d}", c.scheme),
            (Some(e), None) => format!("{} error={e}", c.scheme),
            (None, _) => format!("a {} challenge without an error code", c.scheme),
        },
        None => "no WWW-Authenticate challenge".into(),
    }
}

/// One target's whole run: every step of [`STEPS`] that applies, in order.
pub(super) async fn collect_target<'p>(
    t: &'p Target,
    j: &'p Shared,
    plan: &'p Plan,
    configured: Option<&'p super::plan::PerTarget>,
    stage: &'p Stage,
) -> Ending {
    let config_stdio = configured.and_then(|c| c.config.stdio.as_ref());
    if let Some(sp) = plan.stdio.as_ref().or(config_stdio) {
        let set = |s: &'static str| stage.set(s);
        let run = super::stdio::StdioRun {
            client: &plan.client,
            options: &plan.options,
            info: plan.info,
            baseline: plan.baseline.as_deref(),
            in_flight: stage.in_flight(),
            stage: &set,
        };
        return super::stdio::collect_stdio(t, j, sp, run).await;
    }
    let token = configured
        .and_then(|c| c.config.token.clone())
        .or_else(|| plan.token.as_ref().map(|(_, v)| v.clone()));
    let client = configured
        .and_then(|c| c.client.as_deref())
        .unwrap_or(&plan.client);
    let mut probe = Probe::new(client, j.clone(), token, plan.options.max_pages);
    probe.inputs = lock(j).inputs().cloned();
    probe.plaintext_port = plan.plaintext_port;
    probe.in_flight = stage.in_flight.clone();
    let mut run = TargetRun {
        target: t,
        journal: j,
        plan,
        stage,
        probe,
        ending: None,
        discovered: Discovered::default(),
        login: None,
    };
    for step in STEPS {
        if step.applies(&run) {
            stage.set(step.stage());
            step.run(&mut run).await;
        }
    }
    // Events an HTTP+SSE stream carried after the last answer are evidence too.
    run.probe.close_sse().await;
    // Detection always runs; the fallback is never used.
    run.ending
        .unwrap_or_else(|| Ending::NoEndpoint("no candidate".into()))
}

/// Log in to the endpoint's authorization server (cache, refresh, or an interactive
/// login) and return the access token. An interactive login needs a person: it is tried
/// only when stdin is a terminal (a browser is opened) or `--no-browser` was given (the
/// URL is printed on stderr for whoever drives the run); otherwise the run goes on
/// without a credential and says so, instead of waiting for a callback that never comes.
async fn login(
    probe: &mut Probe<'_>,
    found: &Discovered,
    plan: &Plan,
    j: &Shared,
) -> Result<(crate::oauth::Credential, Login), NoCredential> {
    use std::io::IsTerminal;
    let endpoint = probe.endpoint.clone().ok_or(NoCredential::NoEndpoint)?;
    // MCP 2025-03-26: no metadata at all, so the default endpoints on the endpoint's own
    // origin (the operator's target; no other origin is contacted). PKCE S256 is
    // required of every client in that revision, so it is used as metadata would say.
    let defaults = found
        .defaults
        .as_ref()
        .filter(|_| found.as_metadata.is_empty());
    let synthetic = defaults.map(|d| {
        serde_json::json!({
            "issuer": d.base,
            "authorization_endpoint": d.authorization_endpoint,
            "token_endpoint": d.token_endpoint,
            "registration_endpoint": d.registration_endpoint,
            "code_challenge_methods_supported": ["S256"],
        })
    });
    let first = found
        .as_metadata
        .first()
        .map(|(_, m)| m)
        .or(synthetic.as_ref());
    let Some(meta) = first else {
        // Metadata was served but refused (another issuer, another resource): say so,
        // not that none was discovered.
        if let Some((url, r)) = found.refused.first() {
            return Err(NoCredential::Refused(
                crate::oauth::metadata::describe_refusal(url, r),
            ));
        }
        return Err(NoCredential::NoMetadata);
    };
    if let Some(d) = defaults {
        let d = d.clone();
        lock(j).update_session(|s| s.authorization_defaults = Some(d));
    }
    let state = crate::keys::state_dir()?;
    let scope = found.challenge.as_ref().and_then(|c| c.scope());
    let mut login = Login::new_for(
        &endpoint,
        meta,
        found.prm.as_ref(),
        scope,
        &state,
        plan.login.grant,
    )?;
    login.no_browser = plan.no_browser;
    login.pre_registered = plan.oauth_client.clone();
    login.grant = plan.login.grant;
    login.unattended = plan.login.unattended.clone();
    login.audience = plan.login.audience.clone();
    login.resource_indicator = plan.login.resource_indicator;
    login.client_metadata_url = plan.login.client_metadata_url.clone();
    login.reauth = plan.reauth;
    login.redactor = lock(j).redactor().clone();
    let addrs = lock(j).target_ips();
    login.target_class = crate::oauth::guard::target_class(&addrs);
    // RFC 9449 DPoP, decided before anything is registered or a code spent.
    crate::oauth::dpop::prepare(&mut login, meta, found, j)?;
    // An unattended grant needs no person.
    let interactive =
        plan.login.grant.unattended() || plan.no_browser || std::io::stdin().is_terminal();
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
    probe.dpop = crate::oauth::dpop::prover_for(&login, &cred, j);
    Ok((cred, login))
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
    /// HTTP 401, and the metadata served was refused (the line says which and why).
    #[error("{0}")]
    Refused(String),
    /// The state directory (for the token cache) is unknown.
    #[error(transparent)]
    StateDir(#[from] crate::keys::KeyError),
    /// The login itself failed.
    #[error(transparent)]
    Login(#[from] LoginError),
    /// Nothing cached, and no person to complete an interactive login.
    #[error(
        "the endpoint requires authentication (HTTP 401) and no credential is cached; not a \
         terminal, so no browser login is attempted (use --token-env, or --no-browser to print the \
         login URL)"
    )]
    NotInteractive,
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
