//! OAuth 2.1 login for a protected MCP endpoint (docs/collector.md, "Credentials").
//!
//! Given the endpoint, its authorization server's metadata (RFC 8414) and its
//! protected-resource metadata (RFC 9728), [`Login::obtain`] returns an access token, in
//! this order of preference:
//!
//! 1. the cached access token, when it still has [`Login::min_validity`] left;
//! 2. a refresh-token grant with the cached refresh token (the rotated refresh token
//!    the server returns replaces the old one in the cache);
//! 3. an interactive login: dynamic client registration (RFC 7591) unless a cached
//!    registration exists, an authorization-code flow with PKCE S256 (RFC 7636), the
//!    RFC 8707 `resource`, and RFC 9207 issuer identification on the redirect.
//!
//! Choices that matter:
//! * The loopback redirect port is **stable per registration**: a cached
//!   registration is reused on the port it registered, and only when that port is busy
//!   is a new client registered on a new port (said on stderr). Some servers pin the
//!   redirect URI exactly, so a new port every run forced a new login every run.
//! * The authorization URL goes to **stderr**, never stdout: stdout carries
//!   only bundle paths.
//! * The cache file holds secrets, so it is written **0600 in a 0700 directory**
//!   atomically (a temporary file renamed into place).
//! * The `iss` of the authorization response is checked against the issuer before the
//!   code is spent (RFC 9207 mix-up defence), and the callback must carry our `state`.
//!
//! Every request of the flow goes through the recording [`Client`] and becomes a
//! record under `oauth.register`, `oauth.token` or `oauth.refresh`. Every secret the
//! collector holds or receives (tokens, client secret, authorization code, PKCE
//! verifier) is registered with the journal's redactor *before* the exchange that
//! carries it is recorded, so no record is ever hashed with a secret in it. A
//! credential-bearing request is only sent over https, or plain http between loopback
//! hosts (the lab), to a URL the network guard allows; redirects are never followed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::host::is_local_url as is_loopback;
use mcp_probe_schema::model::{BodyEnd, ErrorKind, Header, HttpOutcome, Observation, TokenFacts};
use mcp_probe_schema::redact::decode_jwt;
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::cache::{
    forget, load_all, save, Entry, PreRegistered, Registration, Tokens, CACHE_VERSION,
    CREDENTIALS_DIR,
};
use super::callback::wait_for_code;
use super::error::LoginError;
use super::metadata::{resource_for, scope_for, AsMetadata};
use super::pkce::{pkce_challenge, random_b64};
use super::response::{response_publics, response_secrets};
use crate::journal::{lock, Journal};
use crate::oauth::guard::{self, AddrClass};
use crate::printer::Printer;
use crate::transport::http::{self, Client, Request};

/// How long the loopback listener waits for the browser's redirect by default.
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// A cached access token is used only with at least this much lifetime left.
pub const MIN_VALIDITY: Duration = Duration::from_secs(60);
/// The stderr line that carries the authorization URL (`--no-browser`), before the URL.
pub const URL_LINE: &str = "mcp-collect: open this URL to log in: ";

/// How a credential was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Obtained {
    /// The cached access token was still valid.
    Cache,
    /// A refresh-token grant.
    Refresh,
    /// An interactive authorization-code login.
    Login,
    /// An unattended grant (`--grant`: client credentials, JWT bearer,
    /// enterprise-managed).
    Grant,
}

/// An access token ready for `Authorization: Bearer`.
#[derive(Clone)]
pub struct Credential {
    /// The access token (already registered with the journal's redactor).
    pub access_token: String,
    /// `token_type` (`Bearer`).
    pub token_type: String,
    /// When it expires (UTC seconds), if known.
    pub expires_at: Option<i64>,
    /// The granted scope (the token response's, else the requested one).
    pub scope: Option<String>,
    /// The RFC 8707 resource it was asked for.
    pub resource: String,
    /// The registered client.
    pub client_id: String,
    /// How it was obtained.
    pub obtained: Obtained,
    /// What the bundle says about it (also pushed to the journal's `tokens`).
    pub facts: TokenFacts,
    /// The cache file holding it.
    pub cache_file: PathBuf,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("access_token", &self.facts.fingerprint)
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("resource", &self.resource)
            .field("client_id", &self.client_id)
            .field("obtained", &self.obtained)
            .finish()
    }
}

/// One endpoint's login: what to ask for, where to cache it, how to interact.
pub struct Login {
    /// The MCP endpoint (the cache key's first part).
    pub endpoint: url::Url,
    /// The authorization server.
    pub metadata: AsMetadata,
    /// The RFC 8707 resource to request ([`resource_for`]).
    pub resource: String,
    /// The scope to request ([`scope_for`]); `None` omits the parameter.
    pub scope: Option<String>,
    /// The state directory (`keys::state_dir()`); the cache lives in its
    /// [`CREDENTIALS_DIR`].
    pub state_dir: PathBuf,
    /// Print the authorization URL on stderr instead of opening a browser.
    pub no_browser: bool,
    /// Delete this endpoint's cache before the next [`Login::obtain`] (cleared by it).
    pub reauth: bool,
    /// The endpoint's address class for the network guard's same-class exception: set
    /// it to the class discovery used (from the endpoint's resolved addresses);
    /// [`Login::new`] derives it from an IP-literal or `localhost` host, else public.
    pub target_class: AddrClass,
    /// How long to wait for the browser's redirect.
    pub callback_timeout: Duration,
    /// A cached access token is used only with this much lifetime left.
    pub min_validity: Duration,
    /// Receives every authorization URL as it is issued (tests, a UI).
    pub on_authorize_url: Option<mpsc::UnboundedSender<String>>,
    /// The run's redactor: every line the login writes on stderr passes it, as the
    /// printer's lines do (`mcp-collect` sets the printer's; a fresh one otherwise).
    pub redactor: crate::journal::SharedRedactor,
    /// `--client-id`: use this client and never register one (its cache entries are the
    /// only ones used; without it, entries of a pre-registered client are not used).
    pub pre_registered: Option<PreRegistered>,
    /// `--grant`: how a token is obtained when none is cached.
    pub grant: super::flow::Grant,
    /// What the unattended grants need beyond the client (the assertion, the identity
    /// provider).
    pub unattended: Option<super::flow::Unattended>,
    /// Send the RFC 8707 `resource` parameter (`--no-resource-indicator` clears it, for
    /// authorization servers that refuse it).
    pub resource_indicator: bool,
    /// `--audience`: an `audience` parameter for authorization servers that want their
    /// own (sent with `resource`).
    pub audience: Option<String>,
    /// `--client-metadata-url`: the URL of the operator's client ID metadata document,
    /// used as the client id where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// The token endpoint refused the RFC 8707 `resource` parameter once: later requests
    /// of the login leave it out.
    pub resource_refused: std::sync::atomic::AtomicBool,
    /// The run's RFC 9449 DPoP key, when the login uses DPoP (`dpop::prepare`): every
    /// token request then carries a proof.
    pub dpop: Option<std::sync::Arc<super::proof::Dpop>>,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Login({} at {}, resource {}, scope {:?})",
            self.endpoint, self.metadata.issuer, self.resource, self.scope
        )
    }
}

pub(super) fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

pub(super) fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

impl Login {
    /// One line on stderr, redacted with the run's redactor and escaped for the terminal
    /// (issuers and URLs come from server metadata).
    pub(super) fn say(&self, line: &str) {
        Printer::with_redactor(false, self.redactor.clone()).raw(line);
    }

    /// A progress notice of the login (one stderr line, redacted and escaped).
    pub fn notice(&self, line: &str) {
        self.say(&format!("mcp-collect: {line}"));
    }
}

/// The scheme rule for a credential-bearing OAuth request (registration, token,
/// refresh) and for the authorization URL: no userinfo, and https — or plain http when
/// both the endpoint and the URL are loopback (the lab). Unlike
/// [`guard::credential_allowed`] the host is not held to the endpoint's registrable
/// domain: an authorization server legitimately lives on another domain.
pub(super) fn scheme_gate(url: &url::Url, endpoint: &url::Url) -> Result<(), SchemeRefusal> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err(SchemeRefusal::Userinfo);
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(endpoint) && is_loopback(url) => Ok(()),
        s => Err(SchemeRefusal::Scheme(s.to_string())),
    }
}

/// Why `scheme_gate` refused a credential-bearing OAuth request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemeRefusal {
    /// The URL carries userinfo.
    #[error("the URL carries userinfo")]
    Userinfo,
    /// Not https, and not plain http between loopback hosts.
    #[error("scheme {0} (credentials go over https only, or plain http between loopback hosts)")]
    Scheme(String),
}

/// The address class a target has when nothing better is known: the class of an
/// IP-literal host, loopback for `localhost`, else public (the strictest).
pub(super) fn default_class(endpoint: &url::Url) -> AddrClass {
    match endpoint.host() {
        Some(url::Host::Ipv4(a)) => guard::classify(a.into()),
        Some(url::Host::Ipv6(a)) => guard::classify(a.into()),
        Some(url::Host::Domain(_)) if is_loopback(endpoint) => AddrClass::Loopback,
        _ => AddrClass::Public,
    }
}

/// What one recorded OAuth request produced.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) json: Value,
    /// Seq of the record of the exchange.
    pub(super) seq: u64,
    pub(super) headers: Vec<Header>,
}

impl Login {
    /// A login for `endpoint` with the authorization server's metadata (RFC 8414 JSON),
    /// the protected-resource metadata (RFC 9728 JSON, if any) and the scope of the 401
    /// challenge (if any). Defaults: browser, no reauth, [`CALLBACK_TIMEOUT`],
    /// [`MIN_VALIDITY`].
    pub fn new(
        endpoint: &url::Url,
        as_metadata: &Value,
        prm: Option<&Value>,
        challenge_scope: Option<&str>,
        state_dir: &Path,
    ) -> Result<Login, LoginError> {
        Self::new_for(
            endpoint,
            as_metadata,
            prm,
            challenge_scope,
            state_dir,
            super::flow::Grant::AuthorizationCode,
        )
    }

    /// [`Login::new`] for `grant`: PKCE S256 is required of the metadata only for the
    /// browser login (an unattended grant has no authorization code to protect).
    pub fn new_for(
        endpoint: &url::Url,
        as_metadata: &Value,
        prm: Option<&Value>,
        challenge_scope: Option<&str>,
        state_dir: &Path,
        grant: super::flow::Grant,
    ) -> Result<Login, LoginError> {
        Ok(Login {
            endpoint: endpoint.clone(),
            metadata: AsMetadata::parse_for(as_metadata, !grant.unattended())?,
            resource: resource_for(endpoint, prm)?,
            scope: scope_for(challenge_scope, prm),
            state_dir: state_dir.to_path_buf(),
            no_browser: false,
            reauth: false,
            target_class: default_class(endpoint),
            callback_timeout: CALLBACK_TIMEOUT,
            min_validity: MIN_VALIDITY,
            on_authorize_url: None,
            redactor: crate::journal::SharedRedactor::new(),
            pre_registered: None,
            grant,
            unattended: None,
            resource_indicator: true,
            audience: None,
            client_metadata_url: None,
            resource_refused: std::sync::atomic::AtomicBool::new(false),
            dpop: None,
        })
    }

    /// Step-up (a 403 `insufficient_scope`): a new token for `scope` from the same client
    /// (no new registration), by the browser login or the run's unattended grant. The
    /// login's scope becomes `scope`.
    pub async fn step_up(
        &mut self,
        client: &Client,
        journal: &Mutex<Journal>,
        scope: String,
    ) -> Result<Credential, LoginError> {
        let registration = self.cached()?.map(|(_, e)| e.client);
        self.scope = Some(scope);
        if self.grant.unattended() {
            return self.unattended(client, journal).await;
        }
        self.login(client, journal, registration).await
    }

    /// Drop the cached access token of this login (the endpoint refused it), keeping the
    /// client and a refresh token: the next [`Login::obtain`] refreshes, else logs in.
    pub fn forget_access_token(&self) -> Result<(), LoginError> {
        let Some((_, mut entry)) = self.cached_entry()? else {
            return Ok(());
        };
        match entry.tokens.as_mut() {
            Some(t) if t.refresh_token.is_some() => t.expires_at = Some(0),
            _ => entry.tokens = None,
        }
        entry.updated_at = now_s();
        save(&self.cache_dir(), &entry)?;
        Ok(())
    }

    /// The token cache directory.
    pub fn cache_dir(&self) -> PathBuf {
        self.state_dir.join(CREDENTIALS_DIR)
    }

    /// The cache file of this endpoint, issuer and scope, if one exists.
    pub fn cache_file(&self) -> Result<Option<PathBuf>, LoginError> {
        Ok(self.cached()?.map(|(p, _)| p))
    }

    /// The cache entry of this endpoint, issuer, scope and client; a pre-registered
    /// client's entry with this run's secret and the method the metadata allows now
    /// (the secret is never cached).
    pub(super) fn cached(&self) -> Result<Option<(PathBuf, Entry)>, LoginError> {
        let Some((path, mut entry)) = self.cached_entry()? else {
            return Ok(None);
        };
        if let Some(p) = &self.pre_registered {
            entry.client.client_secret = p.client_secret.clone();
            entry.client.client_key = p.client_key.clone();
            entry.client.token_endpoint_auth_method = Some(
                super::cache::client_auth_method(
                    p.client_secret.is_some(),
                    p.client_key.is_some(),
                    self.metadata.token_endpoint_auth_methods.as_deref(),
                )?
                .to_string(),
            );
        }
        Ok(Some((path, entry)))
    }

    fn cached_entry(&self) -> Result<Option<(PathBuf, Entry)>, LoginError> {
        Ok(load_all(&self.cache_dir())?
            .into_iter()
            .filter(|(_, e)| {
                e.endpoint == self.endpoint.as_str()
                    && e.issuer == self.metadata.issuer
                    && e.scope == self.scope
                    && e.grant.as_deref() == self.grant.unattended().then(|| self.grant.as_str())
                    && match (&self.pre_registered, self.uses_cimd()) {
                        (Some(p), _) => {
                            e.client.pre_registered && e.client.client_id == p.client_id
                        }
                        (None, true) => {
                            e.client.registered_by.is_some()
                                && Some(&e.client.client_id) == self.client_metadata_url.as_ref()
                        }
                        (None, false) => {
                            !e.client.pre_registered && e.client.registered_by.is_none()
                        }
                    }
            })
            .max_by_key(|(_, e)| e.updated_at))
    }

    /// Obtain an access token: the cached one, else a refresh, else an interactive
    /// login (see the module docs). The token's [`TokenFacts`] are pushed to the
    /// journal's `tokens`; every secret is registered with its redactor.
    pub async fn obtain(
        &mut self,
        client: &Client,
        journal: &Mutex<Journal>,
    ) -> Result<Credential, LoginError> {
        if std::mem::take(&mut self.reauth) {
            let n = forget(&self.state_dir, self.endpoint.as_str())?;
            if n > 0 {
                self.notice(&format!(
                    "{}: --reauth: forgot {n} cached OAuth registration(s) and tokens",
                    self.endpoint
                ));
            }
        }
        let cached = self.cached()?;
        let mut registration = None;
        if let Some((path, mut entry)) = cached {
            {
                let mut j = lock(journal);
                entry.client.register(&mut j);
                if let Some(t) = &entry.tokens {
                    j.add_secret(t.access_token.as_bytes(), "access-token");
                    if let Some(r) = &t.refresh_token {
                        j.add_secret(r.as_bytes(), "refresh-token");
                    }
                }
            }
            let secret_expired = entry
                .client
                .client_secret_expires_at
                .is_some_and(|t| t != 0 && t <= now_s());
            if let Some(t) = entry.tokens.clone() {
                let fresh = t.expires_at.is_none_or(|at| {
                    at - now_s() > i64::try_from(self.min_validity.as_secs()).unwrap_or(i64::MAX)
                });
                if fresh && t.resource == self.resource && self.cached_token_usable(&t.token_type) {
                    return Ok(self.credential(journal, &entry, &t, path, Obtained::Cache));
                }
                if let (Some(rt), false) = (&t.refresh_token, secret_expired) {
                    match self.refresh(client, journal, &entry.client, rt).await {
                        Ok(tokens) => {
                            entry.tokens = Some(tokens.clone());
                            entry.updated_at = now_s();
                            let path = save(&self.cache_dir(), &entry)?;
                            return Ok(self.credential(
                                journal,
                                &entry,
                                &tokens,
                                path,
                                Obtained::Refresh,
                            ));
                        }
                        Err(LoginError::Server {
                            status: 400..=499,
                            error,
                            ..
                        }) => {
                            self.notice(&format!(
                                "{}: the refresh token was refused ({}); logging in again",
                                self.endpoint,
                                error.as_deref().unwrap_or("no error code")
                            ));
                            if error.as_deref() == Some("invalid_client") {
                                let _ = std::fs::remove_file(&path);
                            } else {
                                entry.tokens = None;
                                entry.updated_at = now_s();
                                save(&self.cache_dir(), &entry)?;
                                registration = Some(entry.client.clone());
                            }
                        }
                        Err(e) => return Err(e),
                    }
                } else if !secret_expired {
                    registration = Some(entry.client.clone());
                }
            } else if !secret_expired {
                registration = Some(entry.client.clone());
            }
        }
        if self.grant.unattended() {
            return self.unattended(client, journal).await;
        }
        self.login(client, journal, registration).await
    }

    pub(super) fn credential(
        &self,
        journal: &Mutex<Journal>,
        entry: &Entry,
        t: &Tokens,
        cache_file: PathBuf,
        obtained: Obtained,
    ) -> Credential {
        let (h, c) = decode_jwt(&t.access_token).map_or((None, None), |(h, c)| (Some(h), Some(c)));
        let facts = TokenFacts {
            source: "oauth".into(),
            fingerprint: fingerprint(t.access_token.as_bytes()),
            jwt_header: h,
            jwt_claims: c,
            expires_in: t.expires_in,
            scope: t.scope.clone(),
            token_type: Some(t.token_type.clone()),
        };
        lock(journal).push_token(facts.clone());
        Credential {
            access_token: t.access_token.clone(),
            token_type: t.token_type.clone(),
            expires_at: t.expires_at,
            scope: t.scope.clone().or_else(|| self.scope.clone()),
            resource: t.resource.clone(),
            client_id: entry.client.client_id.clone(),
            obtained,
            facts,
            cache_file,
        }
    }

    /// Send one OAuth request through the recording client and record it under `leg`.
    /// `secrets` are registered first; secrets in the JSON answer are registered before
    /// the answer is recorded. A refused URL is recorded as a `refused_by_guard`
    /// exchange and nothing is sent.
    pub(super) async fn send(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        req: Request,
        secrets: &[(&str, &str)],
    ) -> Result<Answer, LoginError> {
        let url = req.url.to_string();
        {
            let mut j = lock(journal);
            for (v, what) in secrets {
                j.add_secret(v.as_bytes(), what);
            }
        }
        let mut req = req;
        let refusal = match scheme_gate(&req.url, &self.endpoint) {
            Err(why) => Some((ErrorKind::RefusedByGuard, why.to_string())),
            Ok(()) => match guard::check_fetch(&req.url, self.target_class).await {
                // Connect to the addresses the guard checked, not a second DNS answer.
                Ok(addrs) => {
                    req.connect_to = Some(addrs);
                    None
                }
                Err(r) => Some((r.kind, r.reason)),
            },
        };
        if let Some((kind, why)) = refusal {
            let mut headers = vec![
                Header::new(header::HOST, http::authority(&req.url)),
                Header::new(
                    header::USER_AGENT,
                    mcp_probe_schema::vocab::COLLECTOR_USER_AGENT,
                ),
            ];
            headers.extend(req.headers.iter().cloned());
            let exchange = http::unsent(&req.method, &url, headers, &req.body, kind, why.clone());
            lock(journal).record(&[leg], now_us(), 0, Observation::Http(exchange));
            return Err(LoginError::Refused { url, why });
        }
        let tls_leg = http::tls_leg(&req.url, &self.endpoint, leg);
        let sent = client.send(req).await;
        let answer = match &sent.exchange.outcome {
            HttpOutcome::Response(r) => {
                let json = if matches!(r.body.end, BodyEnd::Complete) {
                    serde_json::from_slice(&r.body.bytes).unwrap_or(Value::Null)
                } else {
                    Value::Null
                };
                Ok(Answer {
                    status: r.status,
                    json,
                    headers: r.headers.clone(),
                    seq: 0,
                })
            }
            HttpOutcome::Error(e) => Err(LoginError::Transport {
                leg,
                url: url.clone(),
                error: e.clone(),
            }),
        };
        // The client resolves again when it connects: an answer from an address the
        // guard would refuse (DNS rebinding between the two lookups) is not used.
        let rebound = sent.resolved.as_ref().and_then(|addrs| {
            addrs.iter().find_map(|a| {
                guard::permitted(a.ip(), self.target_class)
                    .err()
                    .map(|c| (a.ip(), c))
            })
        });
        let mut j = lock(journal);
        if let Ok(a) = &answer {
            for v in response_publics(&a.json) {
                j.add_public(v.as_bytes());
            }
            for (v, what) in response_secrets(&a.json) {
                j.add_secret(v.as_bytes(), what);
            }
        }
        let leg = answer.as_ref().map_or(leg, |a| self.answer_leg(a, leg));
        let seq = sent.record(&mut j, tls_leg, leg);
        let answer = answer.map(|a| Answer { seq, ..a });
        if let Some((ip, class)) = rebound {
            return Err(LoginError::Refused {
                url,
                why: format!(
                    "the host resolved to {ip} ({}) when connecting and the target is {}; the answer is not used",
                    class.as_str(),
                    self.target_class.as_str()
                ),
            });
        }
        answer
    }

    /// The interactive login: a listener on the registration's port (or a new
    /// registration on a new port), the browser step, the code exchange.
    async fn login(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        registration: Option<Registration>,
    ) -> Result<Credential, LoginError> {
        // The browser is sent there with our client id and challenge: same scheme rule.
        let auth_endpoint = &self.metadata.authorization_endpoint;
        if let Err(why) = scheme_gate(auth_endpoint, &self.endpoint) {
            return Err(LoginError::Refused {
                url: auth_endpoint.to_string(),
                why: why.to_string(),
            });
        }
        let (listener, reg) = match registration {
            Some(reg) => {
                match TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, reg.redirect_port)).await {
                    Ok(l) => (l, reg),
                    Err(e) => {
                        let l = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
                            .await
                            .map_err(LoginError::Listen)?;
                        let port = l.local_addr().map_err(LoginError::Listen)?.port();
                        if let Some(p) = &self.pre_registered {
                            // A loopback redirect may use any port (RFC 8252 §7.3): the same
                            // client on another port, nothing registered.
                            self.notice(&format!(
                            "{}: loopback port {} of the cached OAuth login is busy ({e}); using port {port} for the pre-registered client",
                            self.endpoint, reg.redirect_port
                        ));
                            (l, self.pre_registration(p, journal, port)?)
                        } else if self.uses_cimd() {
                            // The metadata document's loopback redirect matches any port.
                            (l, self.new_client(client, journal, port).await?)
                        } else {
                            self.notice(&format!(
                            "{}: loopback port {} of the cached OAuth client registration is busy ({e}); registering a new client on port {port}",
                            self.endpoint, reg.redirect_port
                        ));
                            (l, self.register(client, journal, port).await?)
                        }
                    }
                }
            }
            None => {
                let l = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
                    .await
                    .map_err(LoginError::Listen)?;
                let port = l.local_addr().map_err(LoginError::Listen)?.port();
                let reg = self.new_client(client, journal, port).await?;
                (l, reg)
            }
        };
        // Keep the registration even if the login fails: the next run reuses it.
        let mut entry = Entry {
            version: CACHE_VERSION,
            endpoint: self.endpoint.to_string(),
            issuer: self.metadata.issuer.clone(),
            scope: self.scope.clone(),
            client: reg.clone(),
            tokens: None,
            updated_at: now_s(),
            grant: None,
        };
        save(&self.cache_dir(), &entry)?;

        let verifier = random_b64(32)?;
        let state = random_b64(16)?;
        let mut auth = self.metadata.authorization_endpoint.clone();
        {
            let mut q = auth.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &reg.client_id)
                .append_pair("redirect_uri", &reg.redirect_uri);
            if let Some(s) = &self.scope {
                q.append_pair("scope", s);
            }
            q.append_pair("state", &state)
                .append_pair("code_challenge", &pkce_challenge(&verifier))
                .append_pair("code_challenge_method", "S256");
            for (k, v) in self.resource_params() {
                q.append_pair(k, v);
            }
        }
        {
            // Nothing in the authorization URL is a credential: the URL printed (the one
            // the operator opens) and the values recorded later must be the real ones,
            // whatever pieces of a secret they share.
            let mut j = lock(journal);
            reg.register(&mut j);
            for v in [auth.as_str(), state.as_str(), self.resource.as_str()]
                .into_iter()
                .chain(self.scope.as_deref())
            {
                j.add_public(v.as_bytes());
            }
        }
        self.announce(auth.as_str());
        let code = wait_for_code(
            listener,
            &state,
            &self.metadata.issuer,
            self.metadata.iss_parameter_supported,
            self.callback_timeout,
        )
        .await?;
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", reg.redirect_uri.as_str()),
            ("code_verifier", verifier.as_str()),
        ];
        form.extend(self.resource_params());
        let r = self
            .token_request(
                client,
                journal,
                leg::OAUTH_TOKEN,
                &reg,
                form,
                &[
                    (code.as_str(), "authorization-code"),
                    (verifier.as_str(), "pkce-verifier"),
                ],
            )
            .await?;
        let tokens = self.tokens(r, None);
        entry.tokens = Some(tokens.clone());
        entry.updated_at = now_s();
        let path = save(&self.cache_dir(), &entry)?;
        Ok(self.credential(journal, &entry, &tokens, path, Obtained::Login))
    }

    fn announce(&self, url: &str) {
        if let Some(tx) = &self.on_authorize_url {
            let _ = tx.send(url.to_string());
        }
        let line = format!("{URL_LINE}{url}");
        if self.no_browser {
            self.say(&line);
            return;
        }
        match open::that_detached(url) {
            Ok(()) => self.notice(&format!(
                "opened a browser to log in at {}; waiting up to {} s for the redirect",
                self.metadata.issuer,
                self.callback_timeout.as_secs()
            )),
            Err(e) => {
                self.notice(&format!("could not open a browser ({e})"));
                self.say(&line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_go_over_https_or_between_loopback_hosts() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        let remote = u("https://mcp.example/mcp");
        let lab = u("http://127.0.0.1:8000/mcp");
        assert!(scheme_gate(&u("https://as.example/token"), &remote).is_ok());
        assert!(scheme_gate(&u("http://as.example/token"), &remote).is_err());
        assert!(scheme_gate(&u("http://127.0.0.1:9/token"), &lab).is_ok());
        assert!(scheme_gate(&u("http://as.example/token"), &lab).is_err());
        assert!(scheme_gate(&u("http://127.0.0.1:9/token"), &remote).is_err());
        assert!(scheme_gate(&u("https://u:p@as.example/token"), &remote).is_err());
        assert_eq!(default_class(&lab), AddrClass::Loopback);
        assert_eq!(
            default_class(&u("http://localhost:1/mcp")),
            AddrClass::Loopback
        );
        assert_eq!(default_class(&remote), AddrClass::Public);
    }

    #[tokio::test]
    async fn a_public_target_sends_nothing_to_a_loopback_or_metadata_address() {
        let client = Client::new(
            crate::transport::tls::Trust::load(None).unwrap(),
            Duration::from_secs(5),
            1 << 16,
        );
        let dir = tempfile::tempdir().unwrap();
        let journal = Mutex::new(
            Journal::create(
                dir.path(),
                "t",
                mcp_probe_schema::testkit::evidence("https://mcp.example/mcp", Vec::new()).target,
                mcp_probe_schema::testkit::evidence("https://mcp.example/mcp", Vec::new())
                    .run
                    .options,
                mcp_probe_schema::redact::Redactor::new(),
            )
            .unwrap(),
        );
        let meta = json!({
            "issuer": "https://169.254.169.254", "authorization_endpoint": "https://169.254.169.254/auth",
            "token_endpoint": "https://169.254.169.254/token", "registration_endpoint": "https://127.0.0.1/reg",
            "code_challenge_methods_supported": ["S256"],
        });
        let ep = url::Url::parse("https://mcp.example/mcp").unwrap();
        let login = Login::new(&ep, &meta, None, None, dir.path()).unwrap();
        let reg = login.register(&client, &journal, 1).await;
        assert!(
            matches!(reg, Err(LoginError::Refused { .. })),
            "{:?}",
            reg.err()
        );
        let recs = journal.lock().unwrap().records();
        let [rec] = recs.as_slice() else {
            panic!("one record expected")
        };
        assert_eq!(rec.legs, vec![leg::OAUTH_REGISTER.to_string()]);
        let Observation::Http(x) = &rec.observation else {
            panic!("http record expected")
        };
        assert!(
            matches!(&x.outcome, HttpOutcome::Error(e) if e.kind == ErrorKind::RefusedByGuard),
            "{:?}",
            x.outcome
        );
    }
}
