//! OAuth 2.1 login for a protected MCP endpoint (design.md §4, checks.md §5.2, §5.3).
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
//! Why it differs from the reference prober (checks.md §17):
//! * The loopback redirect port is **stable per registration** (item 20): a cached
//!   registration is reused on the port it registered, and only when that port is busy
//!   is a new client registered on a new port (said on stderr). Some servers pin the
//!   redirect URI exactly, so a new port every run forced a new login every run.
//! * The authorization URL goes to **stderr**, never stdout (item 17): stdout carries
//!   only bundle paths.
//! * The cache file holds secrets, so it is written **0600 in a 0700 directory**
//!   (item 21), atomically (a temporary file renamed into place).
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

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine as _;
use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::host::is_local_url as is_loopback;
use mcp_probe_schema::model::{
    Body, BodyEnd, ErrorKind, Header, HttpExchange, HttpOutcome, HttpRequest, Observation,
    TokenFacts, TransportError,
};
use mcp_probe_schema::redact::decode_jwt;
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::journal::Journal;
use crate::oauth::guard::{self, AddrClass};
use crate::transport::http::{Client, Request};

/// `client_name` of the dynamic client registration.
pub const CLIENT_NAME: &str = "mcp-collect";
/// Path of the loopback redirect URI (`http://127.0.0.1:<port>/callback`).
pub const CALLBACK_PATH: &str = "/callback";
/// How long the loopback listener waits for the browser's redirect by default.
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// A cached access token is used only with at least this much lifetime left.
pub const MIN_VALIDITY: Duration = Duration::from_secs(60);
/// The stderr line that carries the authorization URL (`--no-browser`), before the URL.
pub const URL_LINE: &str = "mcp-collect: open this URL to log in: ";
/// Subdirectory of the state directory holding the token cache.
pub const CREDENTIALS_DIR: &str = "credentials";

/// Version of the cache file layout.
const CACHE_VERSION: u32 = 1;
/// A connection to the loopback listener must send its request head within this time.
const CALLBACK_HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest request head the loopback listener reads.
const CALLBACK_HEAD_MAX: usize = 16 * 1024;

/// Why no token was obtained.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The authorization server metadata lacks a field or has a bad value.
    #[error("authorization server metadata: {0}")]
    Metadata(String),
    /// The authorization server does not advertise PKCE S256 (MCP clients must refuse).
    #[error("authorization server {issuer} does not advertise PKCE S256 (code_challenge_methods_supported); refusing to log in")]
    NoPkce {
        /// The issuer.
        issuer: String,
    },
    /// No client is registered and the server offers no registration endpoint.
    #[error("authorization server {issuer} has no registration_endpoint (RFC 7591) and no client is registered")]
    NoRegistration {
        /// The issuer.
        issuer: String,
    },
    /// The protected-resource metadata names a resource that does not cover the endpoint.
    #[error("protected-resource metadata names resource {resource}, which does not cover the endpoint {endpoint}")]
    ResourceMismatch {
        /// The advertised resource.
        resource: String,
        /// The endpoint.
        endpoint: String,
    },
    /// A credential-bearing request was refused by the gate (nothing was sent).
    #[error("refusing to send credentials to {url}: {why}")]
    Refused {
        /// The URL.
        url: String,
        /// Why.
        why: String,
    },
    /// The request failed below HTTP.
    #[error("{leg} {url}: {error}")]
    Transport {
        /// The leg id.
        leg: LegId,
        /// The URL.
        url: String,
        /// What happened.
        error: TransportError,
    },
    /// The server answered with an error (OAuth `error` code when given).
    #[error("{leg} {url}: HTTP {status}{}{}", .error.as_deref().map(|e| format!(" {e}")).unwrap_or_default(), .description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Server {
        /// The leg id.
        leg: LegId,
        /// The URL.
        url: String,
        /// HTTP status.
        status: u16,
        /// OAuth `error`.
        error: Option<String>,
        /// OAuth `error_description`.
        description: Option<String>,
    },
    /// The authorization response was refused.
    #[error("authorization response: {0}")]
    Callback(#[from] CallbackError),
    /// The browser never came back.
    #[error("no authorization response on the loopback redirect within {} s{}", .waited.as_secs(), if *.ignored > 0 { format!(" ({} callback(s) with a wrong state were ignored)", .ignored) } else { String::new() })]
    CallbackTimeout {
        /// How long was waited.
        waited: Duration,
        /// Callbacks ignored because their `state` was not ours.
        ignored: u32,
    },
    /// The loopback listener could not be bound.
    #[error("cannot listen on 127.0.0.1 for the OAuth redirect: {0}")]
    Listen(std::io::Error),
    /// The token cache could not be read or written.
    #[error("token cache {path}: {source}")]
    Cache {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The OS random source failed.
    #[error("OS random source failed: {0}")]
    Random(String),
}

/// Why an authorization response (the redirect to the loopback listener) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// `state` missing, repeated or not ours: not the answer to our request.
    #[error("state missing or not the one sent")]
    State,
    /// RFC 9207: `iss` names another issuer (a mix-up attack or a misconfigured server).
    #[error("iss {got:?} is not the issuer {expected:?} (RFC 9207); the code was not exchanged")]
    IssuerMismatch {
        /// The authorization server's issuer.
        expected: String,
        /// What `iss` said.
        got: String,
    },
    /// RFC 9207: the server promised `iss` (`authorization_response_iss_parameter_supported`)
    /// and did not send it.
    #[error("iss missing although the issuer {expected:?} advertises authorization_response_iss_parameter_supported (RFC 9207); the code was not exchanged")]
    IssuerMissing {
        /// The authorization server's issuer.
        expected: String,
    },
    /// The server (or the user) refused the authorization.
    #[error("the authorization server answered error={error}{}", .description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Denied {
        /// OAuth `error`.
        error: String,
        /// OAuth `error_description`.
        description: Option<String>,
    },
    /// Neither `code` nor `error`, or `code` repeated.
    #[error("no single authorization code in the response")]
    NoCode,
}

/// The parts of RFC 8414 metadata the login uses, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsMetadata {
    /// `issuer`.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: url::Url,
    /// `token_endpoint`.
    pub token_endpoint: url::Url,
    /// `registration_endpoint`, when dynamic registration is offered.
    pub registration_endpoint: Option<url::Url>,
    /// `authorization_response_iss_parameter_supported` (RFC 9207): `iss` is then
    /// required on the redirect.
    pub iss_parameter_supported: bool,
}

impl AsMetadata {
    /// Read and validate metadata: an issuer, http(s) authorization and token endpoints,
    /// and S256 among `code_challenge_methods_supported` (an absent list means no PKCE,
    /// and MCP clients must then refuse to proceed).
    pub fn parse(v: &Value) -> Result<AsMetadata, LoginError> {
        let issuer = v
            .get("issuer")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| LoginError::Metadata("no issuer".into()))?
            .to_string();
        let endpoint = |name: &str| -> Result<Option<url::Url>, LoginError> {
            match v.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => match url::Url::parse(s) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(Some(u)),
                    _ => Err(LoginError::Metadata(format!(
                        "{name} {s:?} is not an http(s) URL"
                    ))),
                },
                Some(other) => Err(LoginError::Metadata(format!(
                    "{name} is not a string: {other}"
                ))),
            }
        };
        let required =
            |name: &str| endpoint(name)?.ok_or_else(|| LoginError::Metadata(format!("no {name}")));
        let authorization_endpoint = required("authorization_endpoint")?;
        let token_endpoint = required("token_endpoint")?;
        let registration_endpoint = endpoint("registration_endpoint")?;
        let s256 = v
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|m| m.as_str() == Some("S256")));
        if !s256 {
            return Err(LoginError::NoPkce { issuer });
        }
        Ok(AsMetadata {
            issuer,
            authorization_endpoint,
            token_endpoint,
            registration_endpoint,
            iss_parameter_supported: v
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

/// The RFC 8707 resource to ask a token for: the protected-resource metadata's
/// `resource` when it covers the endpoint (same origin, endpoint path at or below it),
/// else — when the metadata names none — the endpoint URL itself. A `resource` that
/// does not cover the endpoint is refused: a token for it would be a token for
/// another server.
pub fn resource_for(endpoint: &url::Url, prm: Option<&Value>) -> Result<String, LoginError> {
    let mut own = endpoint.clone();
    own.set_fragment(None);
    let Some(advertised) = prm.and_then(|p| p.get("resource")).and_then(Value::as_str) else {
        return Ok(own.to_string());
    };
    let mismatch = || LoginError::ResourceMismatch {
        resource: advertised.to_string(),
        endpoint: endpoint.to_string(),
    };
    let r = url::Url::parse(advertised).map_err(|_| mismatch())?;
    let slash = |p: &str| {
        if p.ends_with('/') {
            p.to_string()
        } else {
            format!("{p}/")
        }
    };
    if r.origin() == own.origin() && slash(own.path()).starts_with(&slash(r.path())) {
        Ok(advertised.to_string())
    } else {
        Err(mismatch())
    }
}

/// The scope to request (MCP scope selection): the challenge's `scope` when the 401
/// named one, else every string of the protected-resource metadata's
/// `scopes_supported`, else none (the parameter is omitted).
pub fn scope_for(challenge_scope: Option<&str>, prm: Option<&Value>) -> Option<String> {
    if let Some(s) = challenge_scope.map(str::trim).filter(|s| !s.is_empty()) {
        return Some(s.to_string());
    }
    let list: Vec<&str> = prm
        .and_then(|p| p.get("scopes_supported"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    (!list.is_empty()).then(|| list.join(" "))
}

/// Check an authorization response (the query of the redirect to the loopback
/// listener) and return its code. Order: our `state` (else [`CallbackError::State`]:
/// the listener ignores such a request and keeps waiting), then RFC 9207 `iss` (must
/// equal `issuer` when present, and be present when `iss_required`), then `error`,
/// then exactly one `code`.
pub fn validate_callback(
    query: &str,
    expected_state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, CallbackError> {
    let mut params: HashMap<String, Vec<String>> = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        params
            .entry(k.into_owned())
            .or_default()
            .push(v.into_owned());
    }
    let one = |name: &str| -> Result<Option<&str>, ()> {
        match params.get(name).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([v]) => Ok(Some(v.as_str())),
            Some(_) => Err(()),
        }
    };
    match one("state") {
        Ok(Some(s)) if s == expected_state => {}
        _ => return Err(CallbackError::State),
    }
    match one("iss") {
        Ok(Some(got)) if got == issuer => {}
        Ok(Some(got)) => {
            return Err(CallbackError::IssuerMismatch {
                expected: issuer.to_string(),
                got: got.to_string(),
            })
        }
        Ok(None) if iss_required => {
            return Err(CallbackError::IssuerMissing {
                expected: issuer.to_string(),
            })
        }
        Ok(None) => {}
        Err(()) => {
            return Err(CallbackError::IssuerMismatch {
                expected: issuer.to_string(),
                got: params.get("iss").map(|v| v.join(", ")).unwrap_or_default(),
            })
        }
    }
    if let Some(error) = params.get("error").and_then(|v| v.first()) {
        return Err(CallbackError::Denied {
            error: error.clone(),
            description: params
                .get("error_description")
                .and_then(|v| v.first())
                .cloned(),
        });
    }
    match one("code") {
        Ok(Some(code)) if !code.is_empty() => Ok(code.to_string()),
        _ => Err(CallbackError::NoCode),
    }
}

/// Name of a cache file: the first 16 hex digits of SHA-256 of
/// `endpoint|issuer|client_id|scope` (an absent scope is empty), plus `.json`.
pub fn cache_file_name(
    endpoint: &str,
    issuer: &str,
    client_id: &str,
    scope: Option<&str>,
) -> String {
    let key = format!("{endpoint}|{issuer}|{client_id}|{}", scope.unwrap_or(""));
    format!(
        "{}.json",
        &hex::encode(Sha256::digest(key.as_bytes()))[..16]
    )
}

/// `--reauth`: delete every cached registration and token of `endpoint` under
/// `state_dir`. Returns how many files were removed.
pub fn forget(state_dir: &Path, endpoint: &str) -> Result<usize, LoginError> {
    let mut n = 0;
    for (path, entry) in load_all(&state_dir.join(CREDENTIALS_DIR))? {
        if entry.endpoint == endpoint {
            std::fs::remove_file(&path).map_err(|source| LoginError::Cache {
                path: path.clone(),
                source,
            })?;
            n += 1;
        }
    }
    Ok(n)
}

/// How a credential was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Obtained {
    /// The cached access token was still valid.
    Cache,
    /// A refresh-token grant.
    Refresh,
    /// An interactive authorization-code login.
    Login,
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

/// A dynamic client registration, as cached.
#[derive(Clone, Serialize, Deserialize)]
struct Registration {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    /// RFC 7591: 0 or absent means it does not expire.
    #[serde(default)]
    client_secret_expires_at: Option<i64>,
    /// `none`, `client_secret_post` or `client_secret_basic` (as the server answered).
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    /// Port of the loopback redirect URI registered.
    redirect_port: u16,
    redirect_uri: String,
    registered_at: i64,
}

/// Tokens, as cached.
#[derive(Clone, Serialize, Deserialize)]
struct Tokens {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    /// UTC seconds; absent when the server said nothing about the lifetime.
    #[serde(default)]
    expires_at: Option<i64>,
    /// `expires_in` as issued (the bundle reports the issued lifetime, never the
    /// remaining one: checks.md §7).
    #[serde(default)]
    expires_in: Option<i64>,
    /// `scope` of the token response, if it had one.
    #[serde(default)]
    scope: Option<String>,
    token_type: String,
    /// The RFC 8707 resource the token was asked for.
    resource: String,
    obtained_at: i64,
}

/// One cache file.
#[derive(Clone, Serialize, Deserialize)]
struct Entry {
    version: u32,
    endpoint: String,
    issuer: String,
    scope: Option<String>,
    client: Registration,
    tokens: Option<Tokens>,
    updated_at: i64,
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

fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

fn lock(j: &Mutex<Journal>) -> MutexGuard<'_, Journal> {
    // A poisoned lock means a leg panicked; the journal is still consistent.
    j.lock().unwrap_or_else(|p| p.into_inner())
}

impl Login {
    /// One line on stderr, redacted with the run's redactor and escaped for the terminal
    /// (issuers and URLs come from server metadata).
    fn say(&self, line: &str) {
        let line = mcp_probe_schema::term::line(&self.redactor.scrub_str(line));
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }

    /// A progress notice of the login.
    fn notice(&self, line: &str) {
        self.say(&format!("mcp-collect: {line}"));
    }
}

fn random_b64(n: usize) -> Result<String, LoginError> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| LoginError::Random(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
}

/// PKCE S256 challenge of a verifier: BASE64URL(SHA-256(ASCII(verifier))).
pub fn pkce_challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The scheme rule for a credential-bearing OAuth request (registration, token,
/// refresh) and for the authorization URL: no userinfo, and https — or plain http when
/// both the endpoint and the URL are loopback (the lab). Unlike
/// [`guard::credential_allowed`] the host is not held to the endpoint's registrable
/// domain: an authorization server legitimately lives on another domain.
fn scheme_gate(url: &url::Url, endpoint: &url::Url) -> Result<(), String> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the URL carries userinfo".into());
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(endpoint) && is_loopback(url) => Ok(()),
        s => Err(format!(
            "scheme {s} (credentials go over https only, or plain http between loopback hosts)"
        )),
    }
}

/// The address class a target has when nothing better is known: the class of an
/// IP-literal host, loopback for `localhost`, else public (the strictest).
fn default_class(endpoint: &url::Url) -> AddrClass {
    match endpoint.host() {
        Some(url::Host::Ipv4(a)) => guard::classify(a.into()),
        Some(url::Host::Ipv6(a)) => guard::classify(a.into()),
        Some(url::Host::Domain(_)) if is_loopback(endpoint) => AddrClass::Loopback,
        _ => AddrClass::Public,
    }
}

fn cache_err(path: &Path) -> impl FnOnce(std::io::Error) -> LoginError + '_ {
    move |source| LoginError::Cache {
        path: path.to_path_buf(),
        source,
    }
}

/// Create `dir` (and missing parents) 0700, and tighten it to 0700 if it exists.
fn private_dir(dir: &Path) -> Result<(), LoginError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(cache_err(dir))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(cache_err(dir))
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).map_err(cache_err(dir))
    }
}

/// Every parsable cache file in `dir` (a missing directory is an empty cache; a file
/// that does not parse is skipped: it is not ours to delete).
fn load_all(dir: &Path) -> Result<Vec<(PathBuf, Entry)>, LoginError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(cache_err(dir)(e)),
    };
    let mut out = Vec::new();
    for de in rd.flatten() {
        let path = de.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if let Ok(e) = serde_json::from_slice::<Entry>(&bytes) {
            if e.version == CACHE_VERSION {
                out.push((path, e));
            }
        }
    }
    Ok(out)
}

/// Write `entry` 0600 (temporary file renamed into place) and remove the other files
/// for the same endpoint, issuer and scope (a registration replaced on a new port).
fn save(dir: &Path, entry: &Entry) -> Result<PathBuf, LoginError> {
    private_dir(dir)?;
    let name = cache_file_name(
        &entry.endpoint,
        &entry.issuer,
        &entry.client.client_id,
        entry.scope.as_deref(),
    );
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}.{}.tmp", random_b64(6)?));
    let bytes = serde_json::to_vec_pretty(entry).expect("cache entry encodes");
    crate::keys::write_private(&tmp, &bytes).map_err(cache_err(&tmp))?;
    if let Err(e) = std::fs::rename(&tmp, &path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(cache_err(&path)(e));
    }
    for (other, e) in load_all(dir)? {
        if other != path
            && e.endpoint == entry.endpoint
            && e.issuer == entry.issuer
            && e.scope == entry.scope
        {
            let _ = std::fs::remove_file(&other);
        }
    }
    Ok(path)
}

/// What a token endpoint answered, when it was a success.
struct TokenResponse {
    access_token: String,
    token_type: String,
    expires_in: Option<i64>,
    refresh_token: Option<String>,
    scope: Option<String>,
}

fn str_field(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_string)
}

/// Secrets of an OAuth JSON response (registered before the response is recorded).
fn response_secrets(v: &Value) -> Vec<(String, &'static str)> {
    [
        ("access_token", "access-token"),
        ("refresh_token", "refresh-token"),
        ("id_token", "id-token"),
        ("client_secret", "client-secret"),
        ("registration_access_token", "registration-access-token"),
    ]
    .iter()
    .filter_map(|(k, what)| str_field(v, k).map(|s| (s, *what)))
    .collect()
}

/// What one recorded OAuth request produced.
struct Answer {
    status: u16,
    json: Value,
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
        Ok(Login {
            endpoint: endpoint.clone(),
            metadata: AsMetadata::parse(as_metadata)?,
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
        })
    }

    /// The token cache directory.
    pub fn cache_dir(&self) -> PathBuf {
        self.state_dir.join(CREDENTIALS_DIR)
    }

    /// The cache file of this endpoint, issuer and scope, if one exists.
    pub fn cache_file(&self) -> Result<Option<PathBuf>, LoginError> {
        Ok(self.cached()?.map(|(p, _)| p))
    }

    fn cached(&self) -> Result<Option<(PathBuf, Entry)>, LoginError> {
        Ok(load_all(&self.cache_dir())?
            .into_iter()
            .filter(|(_, e)| {
                e.endpoint == self.endpoint.as_str()
                    && e.issuer == self.metadata.issuer
                    && e.scope == self.scope
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
                if let Some(s) = &entry.client.client_secret {
                    j.add_secret(s.as_bytes(), "client-secret");
                }
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
                if fresh && t.resource == self.resource {
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
        self.login(client, journal, registration).await
    }

    fn credential(
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
    async fn send(
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
            Err(why) => Some((ErrorKind::RefusedByGuard, why)),
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
                Header::new(header::HOST, crate::transport::http::authority(&req.url)),
                Header::new(header::USER_AGENT, crate::transport::http::USER_AGENT),
            ];
            headers.extend(req.headers.iter().cloned());
            let exchange = HttpExchange {
                request: HttpRequest {
                    method: req.method.clone(),
                    url: url.clone(),
                    version: "HTTP/1.1".into(),
                    headers,
                    body: Body {
                        bytes: req.body.clone(),
                        length: req.body.len() as u64,
                        sha256: Sha256::digest(&req.body).to_vec(),
                        end: BodyEnd::Complete,
                    },
                },
                outcome: HttpOutcome::Error(TransportError {
                    kind,
                    message: why.clone(),
                }),
                connection: None,
                first_attempt: None,
            };
            lock(journal).record(&[leg], now_us(), 0, Observation::Http(exchange));
            return Err(LoginError::Refused { url, why });
        }
        let same_authority = crate::transport::http::authority(&req.url)
            == crate::transport::http::authority(&self.endpoint);
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
            for (v, what) in response_secrets(&a.json) {
                j.add_secret(v.as_bytes(), what);
            }
        }
        if let Some(tls) = sent.tls {
            // Another host's handshake belongs to this leg, not to the endpoint's
            // transport (`tls.modern`); linked to the exchange by connection id.
            let tls_leg = if same_authority { leg::TLS_MODERN } else { leg };
            j.record(&[tls_leg], sent.started_at, 0, Observation::Tls(tls));
        }
        j.record(
            &[leg],
            sent.started_at,
            sent.duration.as_micros() as u64,
            Observation::Http(sent.exchange),
        );
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

    /// POST `form` to the token endpoint, authenticating the client the way its
    /// registration says (`none`, `client_secret_post`, `client_secret_basic`), with every
    /// secret registered for redaction before the exchange is recorded under `leg`.
    async fn post_token_form(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        mut form: Vec<(&str, &str)>,
        secrets: &[(&str, &str)],
    ) -> Result<Answer, LoginError> {
        let mut headers = vec![
            Header::new(header::CONTENT_TYPE, "application/x-www-form-urlencoded"),
            Header::new(header::ACCEPT, "application/json"),
        ];
        let mut secrets = secrets.to_vec();
        if let Some(s) = &reg.client_secret {
            secrets.push((s, "client-secret"));
            match reg.token_endpoint_auth_method.as_deref().unwrap_or("none") {
                "client_secret_basic" => {
                    let enc = |v: &str| {
                        url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
                    };
                    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
                        "{}:{}",
                        enc(&reg.client_id),
                        enc(s)
                    ));
                    headers.push(Header::new(header::AUTHORIZATION, format!("Basic {basic}")));
                }
                "client_secret_post" => form.push(("client_secret", s)),
                _ => {}
            }
        }
        form.push(("client_id", &reg.client_id));
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter())
            .finish()
            .into_bytes();
        let req = Request {
            method: "POST".into(),
            url: self.metadata.token_endpoint.clone(),
            headers,
            body,
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        self.send(client, journal, leg, req, &secrets).await
    }

    /// POST a form to the token endpoint with the client's authentication.
    async fn token_request(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        form: Vec<(&str, &str)>,
        secrets: &[(&str, &str)],
    ) -> Result<TokenResponse, LoginError> {
        let a = self
            .post_token_form(client, journal, leg, reg, form, secrets)
            .await?;
        let url = self.metadata.token_endpoint.to_string();
        let access = str_field(&a.json, "access_token").filter(|s| !s.is_empty());
        let (200..=299, Some(access_token)) = (a.status, access) else {
            return Err(LoginError::Server {
                leg,
                url,
                status: a.status,
                error: str_field(&a.json, "error")
                    .or_else(|| (a.status < 300).then(|| "no access_token in the response".into())),
                description: str_field(&a.json, "error_description"),
            });
        };
        let token_type = str_field(&a.json, "token_type").unwrap_or_default();
        if !token_type.eq_ignore_ascii_case("bearer") {
            return Err(LoginError::Server {
                leg,
                url,
                status: a.status,
                error: Some(format!(
                    "unsupported token_type {token_type:?} (Bearer expected)"
                )),
                description: None,
            });
        }
        let expires_in = match a.json.get("expires_in") {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        Ok(TokenResponse {
            access_token,
            token_type,
            expires_in,
            refresh_token: str_field(&a.json, "refresh_token").filter(|s| !s.is_empty()),
            scope: str_field(&a.json, "scope"),
        })
    }

    fn tokens(&self, r: TokenResponse, previous_refresh: Option<&str>) -> Tokens {
        let now = now_s();
        let expires_at = r.expires_in.map(|e| now + e).or_else(|| {
            decode_jwt(&r.access_token).and_then(|(_, c)| c.get("exp").and_then(Value::as_i64))
        });
        Tokens {
            access_token: r.access_token,
            // RFC 6749 §6: without a new refresh token, the old one stays valid.
            refresh_token: r
                .refresh_token
                .or_else(|| previous_refresh.map(str::to_string)),
            expires_at,
            expires_in: r.expires_in,
            scope: r.scope,
            token_type: r.token_type,
            resource: self.resource.clone(),
            obtained_at: now,
        }
    }

    async fn refresh(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        reg: &Registration,
        refresh_token: &str,
    ) -> Result<Tokens, LoginError> {
        let form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", self.resource.as_str()),
        ];
        let r = self
            .token_request(
                client,
                journal,
                leg::OAUTH_REFRESH,
                reg,
                form,
                &[(refresh_token, "refresh-token")],
            )
            .await?;
        Ok(self.tokens(r, Some(refresh_token)))
    }

    /// RFC 7591 registration of a public client with the loopback redirect on `port`.
    async fn register(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        port: u16,
    ) -> Result<Registration, LoginError> {
        let endpoint = self.metadata.registration_endpoint.clone().ok_or_else(|| {
            LoginError::NoRegistration {
                issuer: self.metadata.issuer.clone(),
            }
        })?;
        let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
        let mut body = json!({
            "client_name": CLIENT_NAME,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        if let Some(s) = &self.scope {
            body["scope"] = Value::from(s.as_str());
        }
        let req = Request {
            method: "POST".into(),
            url: endpoint.clone(),
            headers: vec![
                Header::new(header::CONTENT_TYPE, "application/json"),
                Header::new(header::ACCEPT, "application/json"),
            ],
            body: serde_json::to_vec(&body).expect("json encodes"),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        let a = self
            .send(client, journal, leg::OAUTH_REGISTER, req, &[])
            .await?;
        let client_id = str_field(&a.json, "client_id").filter(|s| !s.is_empty());
        let (200..=299, Some(client_id)) = (a.status, client_id) else {
            return Err(LoginError::Server {
                leg: leg::OAUTH_REGISTER,
                url: endpoint.to_string(),
                status: a.status,
                error: str_field(&a.json, "error")
                    .or_else(|| (a.status < 300).then(|| "no client_id in the response".into())),
                description: str_field(&a.json, "error_description"),
            });
        };
        Ok(Registration {
            client_id,
            client_secret: str_field(&a.json, "client_secret").filter(|s| !s.is_empty()),
            client_secret_expires_at: a
                .json
                .get("client_secret_expires_at")
                .and_then(Value::as_i64),
            token_endpoint_auth_method: str_field(&a.json, "token_endpoint_auth_method"),
            redirect_port: port,
            redirect_uri,
            registered_at: now_s(),
        })
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
                why,
            });
        }
        let (listener, reg) = match registration {
            Some(reg) => match TcpListener::bind(("127.0.0.1", reg.redirect_port)).await {
                Ok(l) => (l, reg),
                Err(e) => {
                    let l = TcpListener::bind(("127.0.0.1", 0))
                        .await
                        .map_err(LoginError::Listen)?;
                    let port = l.local_addr().map_err(LoginError::Listen)?.port();
                    self.notice(&format!(
                        "{}: loopback port {} of the cached OAuth client registration is busy ({e}); registering a new client on port {port}",
                        self.endpoint, reg.redirect_port
                    ));
                    (l, self.register(client, journal, port).await?)
                }
            },
            None => {
                let l = TcpListener::bind(("127.0.0.1", 0))
                    .await
                    .map_err(LoginError::Listen)?;
                let port = l.local_addr().map_err(LoginError::Listen)?.port();
                (l, self.register(client, journal, port).await?)
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
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", &self.resource);
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
        let form = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", reg.redirect_uri.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", self.resource.as_str()),
        ];
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

/// Serve the loopback redirect until an authorization response with our `state`
/// arrives (then validated: [`validate_callback`]) or `timeout` passes. Other paths get
/// 404; a callback with another `state` gets 400 and is ignored.
async fn wait_for_code(
    listener: TcpListener,
    state: &str,
    issuer: &str,
    iss_required: bool,
    timeout: Duration,
) -> Result<String, LoginError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let (tx, mut rx) = mpsc::channel::<(String, TcpStream)>(16);
    let mut readers = tokio::task::JoinSet::new();
    let mut ignored = 0u32;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {
                return Err(LoginError::CallbackTimeout { waited: timeout, ignored });
            }
            accepted = listener.accept() => {
                while readers.try_join_next().is_some() {}
                match accepted {
                    Ok((stream, _)) => {
                        let tx = tx.clone();
                        readers.spawn(async move {
                            if let Some(hit) = read_callback(stream).await {
                                let _ = tx.send(hit).await;
                            }
                        });
                    }
                    // Out of descriptors and the like: do not spin.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            Some((query, mut stream)) = rx.recv() => {
                match validate_callback(&query, state, issuer, iss_required) {
                    Ok(code) => {
                        respond(&mut stream, 200, "Login complete",
                            "mcp-collect received the authorization. You can close this window.").await;
                        return Ok(code);
                    }
                    Err(CallbackError::State) => {
                        ignored += 1;
                        respond(&mut stream, 400, "Not this login",
                            "This redirect does not carry the state of the pending mcp-collect login.").await;
                    }
                    Err(e) => {
                        respond(&mut stream, 400, "Login failed", &e.to_string()).await;
                        return Err(e.into());
                    }
                }
            }
        }
    }
}

/// Read one request head; a `GET /callback?…` is handed on with its query, anything
/// else is answered 404 here.
async fn read_callback(mut stream: TcpStream) -> Option<(String, TcpStream)> {
    let mut buf = Vec::with_capacity(1024);
    let head = tokio::time::timeout(CALLBACK_HEAD_TIMEOUT, async {
        let mut chunk = [0u8; 2048];
        loop {
            if buf.windows(4).any(|w| w == b"\r\n\r\n") {
                return true;
            }
            if buf.len() > CALLBACK_HEAD_MAX {
                return false;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    if head != Ok(true) {
        return None;
    }
    let mut hs = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut hs);
    let target = match req.parse(&buf) {
        Ok(httparse::Status::Complete(_)) if req.method == Some("GET") => {
            req.path.unwrap_or("").to_string()
        }
        _ => String::new(),
    };
    let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
    if path == CALLBACK_PATH {
        return Some((query.to_string(), stream));
    }
    respond(&mut stream, 404, "Not found", "Nothing here.").await;
    None
}

fn html_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&#39;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

async fn respond(stream: &mut TcpStream, status: u16, title: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t}</title></head><body><h1>{t}</h1><p>{x}</p></body></html>\n",
        t = html_escape(title),
        x = html_escape(text)
    );
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    // The page's URL carries the code: no caching, no referrer.
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.flush().await?;
        stream.shutdown().await
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// 3.3.1b: a refresh grant naming another resource (never cached), and the chain restore
// (checks.md §5.3). Used by `legs_audience`.
// ---------------------------------------------------------------------------------------

/// What a token endpoint answered to a refresh grant, as it came (success or not). The
/// secrets in it are registered with the journal's redactor before it was recorded.
#[derive(Clone)]
pub struct RawGrant {
    /// HTTP status.
    pub status: u16,
    /// `access_token`, when the answer carried a non-empty one.
    pub access_token: Option<String>,
    /// `refresh_token`, when the answer carried a non-empty one.
    pub refresh_token: Option<String>,
    /// OAuth `error`.
    pub error: Option<String>,
    /// OAuth `error_description`.
    pub error_description: Option<String>,
}

impl std::fmt::Debug for RawGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawGrant")
            .field("status", &self.status)
            .field(
                "access_token",
                &self
                    .access_token
                    .as_ref()
                    .map(|t| fingerprint(t.as_bytes())),
            )
            .field("rotated", &self.refresh_token.is_some())
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

/// The cached refresh token and client registration of a login.
#[derive(Clone)]
pub struct CachedRefresh {
    /// The refresh token (registered with the redactor by [`Login::cached_refresh`]).
    pub refresh_token: String,
    /// The registered client id.
    pub client_id: String,
    /// The access token cached with it.
    pub access_token: String,
}

impl std::fmt::Debug for CachedRefresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedRefresh")
            .field("client_id", &self.client_id)
            .finish()
    }
}

impl Login {
    /// The refresh token of this login's cache entry, read now (at use time), with its
    /// client id; `None` when no entry or no refresh token is cached. Every secret of
    /// the entry is registered with the journal's redactor first.
    pub fn cached_refresh(
        &self,
        journal: &Mutex<Journal>,
    ) -> Result<Option<CachedRefresh>, LoginError> {
        let Some((_, entry)) = self.cached()? else {
            return Ok(None);
        };
        let mut j = lock(journal);
        if let Some(s) = &entry.client.client_secret {
            j.add_secret(s.as_bytes(), "client-secret");
        }
        let Some(t) = &entry.tokens else {
            return Ok(None);
        };
        j.add_secret(t.access_token.as_bytes(), "access-token");
        let Some(rt) = t.refresh_token.as_ref().filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        j.add_secret(rt.as_bytes(), "refresh-token");
        Ok(Some(CachedRefresh {
            refresh_token: rt.clone(),
            client_id: entry.client.client_id.clone(),
            access_token: t.access_token.clone(),
        }))
    }

    /// A refresh grant spending `refresh_token` and naming `resource` (any string),
    /// recorded under `leg`, with the cached client's authentication. The answer is
    /// returned as it came and **never cached** (3.3.1b's wrong-audience pair). The token
    /// endpoint must pass the OAuth scheme rule and the network guard, as every OAuth
    /// request. `Err` only when nothing usable came back (refused, transport, no cached
    /// client).
    pub async fn refresh_raw(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        refresh_token: &str,
        resource: &str,
    ) -> Result<RawGrant, LoginError> {
        let Some((_, entry)) = self.cached()? else {
            return Err(LoginError::Metadata(
                "no cached client registration for this endpoint".into(),
            ));
        };
        let reg = entry.client;
        let secrets: Vec<(&str, &str)> = vec![(refresh_token, "refresh-token")];
        let form: Vec<(&str, &str)> = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", resource),
        ];
        let a = self
            .post_token_form(client, journal, leg, &reg, form, &secrets)
            .await?;
        Ok(RawGrant {
            status: a.status,
            access_token: str_field(&a.json, "access_token").filter(|s| !s.is_empty()),
            refresh_token: str_field(&a.json, "refresh_token").filter(|s| !s.is_empty()),
            error: str_field(&a.json, "error"),
            error_description: str_field(&a.json, "error_description"),
        })
    }

    /// The refresh-chain restore (checks.md §5.3): spend `refresh_token` (the one a
    /// wrong-audience grant rotated to) on a refresh grant naming this login's own
    /// resource, recorded under `leg`, and cache the answer, so the stored credential
    /// stays bound to the audited resource. The new access token's facts are not added
    /// to the journal's `tokens` (the run goes on with the token it holds).
    pub async fn restore_chain(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        refresh_token: &str,
    ) -> Result<PathBuf, LoginError> {
        let Some((_, mut entry)) = self.cached()? else {
            return Err(LoginError::Metadata(
                "no cached client registration for this endpoint".into(),
            ));
        };
        let form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", self.resource.as_str()),
        ];
        let r = self
            .token_request(
                client,
                journal,
                leg,
                &entry.client,
                form,
                &[(refresh_token, "refresh-token")],
            )
            .await?;
        let tokens = self.tokens(r, Some(refresh_token));
        entry.tokens = Some(tokens);
        entry.updated_at = now_s();
        save(&self.cache_dir(), &entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_checks_state_then_iss_then_error_then_code() {
        let iss = "http://127.0.0.1:9";
        let ok = |q: &str, req: bool| validate_callback(q, "S", iss, req);
        assert_eq!(
            ok("code=c0de&state=S&iss=http%3A%2F%2F127.0.0.1%3A9", true),
            Ok("c0de".into())
        );
        assert_eq!(ok("code=c0de&state=S", false), Ok("c0de".into()));
        assert_eq!(
            ok("code=c0de&state=T&iss=x", true),
            Err(CallbackError::State)
        );
        assert_eq!(ok("code=c0de", false), Err(CallbackError::State));
        assert_eq!(
            ok("code=c0de&state=S&state=S", false),
            Err(CallbackError::State)
        );
        assert!(matches!(
            ok("code=c0de&state=S&iss=http://evil", false),
            Err(CallbackError::IssuerMismatch { .. })
        ));
        assert!(matches!(
            ok("code=c0de&state=S", true),
            Err(CallbackError::IssuerMissing { .. })
        ));
        assert!(matches!(
            ok("error=access_denied&state=S", false),
            Err(CallbackError::Denied { .. })
        ));
        assert_eq!(ok("state=S&code=", false), Err(CallbackError::NoCode));
        assert_eq!(
            ok("state=S&code=a&code=b", false),
            Err(CallbackError::NoCode)
        );
    }

    #[test]
    fn resource_must_cover_the_endpoint() {
        let ep = url::Url::parse("https://h.example/mcp").unwrap();
        let prm = |r: &str| json!({ "resource": r });
        assert_eq!(resource_for(&ep, None).unwrap(), "https://h.example/mcp");
        assert_eq!(
            resource_for(&ep, Some(&prm("https://h.example/mcp"))).unwrap(),
            "https://h.example/mcp"
        );
        assert_eq!(
            resource_for(&ep, Some(&prm("https://h.example/"))).unwrap(),
            "https://h.example/"
        );
        for bad in [
            "https://h.example/mcpx",
            "https://other.example/mcp",
            "http://h.example/mcp",
            "nonsense",
        ] {
            assert!(resource_for(&ep, Some(&prm(bad))).is_err(), "{bad}");
        }
    }

    #[test]
    fn scope_prefers_the_challenge() {
        let prm = json!({ "scopes_supported": ["a", "b", 3] });
        assert_eq!(scope_for(Some("x y"), Some(&prm)).as_deref(), Some("x y"));
        assert_eq!(scope_for(None, Some(&prm)).as_deref(), Some("a b"));
        assert_eq!(scope_for(Some(" "), None), None);
    }

    #[test]
    fn metadata_requires_s256() {
        let mut m = json!({
            "issuer": "https://as.example", "authorization_endpoint": "https://as.example/auth",
            "token_endpoint": "https://as.example/token", "code_challenge_methods_supported": ["plain"],
        });
        assert!(matches!(
            AsMetadata::parse(&m),
            Err(LoginError::NoPkce { .. })
        ));
        m["code_challenge_methods_supported"] = json!(["S256"]);
        let p = AsMetadata::parse(&m).unwrap();
        assert!(!p.iss_parameter_supported && p.registration_endpoint.is_none());
        m["token_endpoint"] = json!("ftp://x");
        assert!(matches!(
            AsMetadata::parse(&m),
            Err(LoginError::Metadata(_))
        ));
    }

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

    #[test]
    fn pkce_verifier_is_43_chars_and_challenge_is_its_sha256() {
        let v = random_b64(32).unwrap();
        assert_eq!(v.len(), 43);
        let c = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(pkce_challenge(&v))
            .unwrap();
        assert_eq!(c, Sha256::digest(v.as_bytes()).to_vec());
    }
}
