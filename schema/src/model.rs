//! The data model of an `mcp-evidence/1` bundle.
//!
//! A bundle is a COSE_Sign1 whose payload is an [`Evidence`] map. Records are stored as
//! individually encoded CBOR byte strings (`records: [bstr]`) so that the hash chain is
//! computed over the exact bytes that were written, never over a re-encoding: a decoder
//! that normalises nothing cannot break the chain. `docs/bundle.md` documents every field.

use serde::{Deserialize, Serialize};

/// Format id written into every bundle; bumped on any incompatible change.
pub const FORMAT_ID: &str = "mcp-evidence/1";

/// Microseconds since the Unix epoch, UTC.
pub type Micros = i64;

/// The signed payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Always [`FORMAT_ID`] for this version.
    pub format: String,
    /// Who collected it.
    pub collector: CollectorInfo,
    /// The run: id, times, status, options.
    pub run: Run,
    /// What was probed.
    pub target: Target,
    /// What the collector established with the server (absent when no endpoint answered).
    pub session: Option<Session>,
    /// Facts about the access tokens presented (never the tokens).
    pub tokens: Vec<TokenFacts>,
    /// Facts about the access tokens the collector's own probe grants obtained (the
    /// 3.3.1b wrong-audience mint and the refresh-chain restore), never the tokens. Not
    /// the run's credential: kept apart from `tokens`, whose entries the grader reads as
    /// the tokens presented. Absent when no probe grant answered a token, and in bundles
    /// of collector builds from before the field (docs/bundle.md, `MintedToken`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub minted_tokens: Vec<MintedToken>,
    /// The records, each an encoded [`Record`], in order.
    pub records: Vec<serde_bytes::ByteBuf>,
    /// SHA-256 of the last record's bytes (or the genesis hash when there is none).
    #[serde(with = "serde_bytes")]
    pub chain_head: Vec<u8>,
}

/// The collector build that wrote the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectorInfo {
    /// Program name (`mcp-collect`).
    pub name: String,
    /// Crate version.
    pub version: String,
    /// Build identifier (git commit when known).
    pub build: String,
    /// The target triple the collector was compiled for (`x86_64-unknown-linux-gnu`).
    /// Absent in bundles of collectors before 0.2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The compiler that built the collector (`rustc 1.95.0`). Absent in bundles of
    /// collectors before 0.2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
}

/// One run of the collector against one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Random id (hex), also bound into the chain genesis.
    pub run_id: String,
    /// When collection of this target started.
    pub started_at: Micros,
    /// When the bundle was sealed.
    pub finished_at: Micros,
    /// How the run ended.
    pub status: RunStatus,
    /// Why the run did not complete or did not reach an MCP endpoint.
    pub failure: Option<String>,
    /// Options in force.
    pub options: Options,
    /// Operator probe inputs in force for this target, verbatim.
    pub inputs: Option<serde_json::Value>,
    /// Seq of the first record written after the journal reached `--bundle-cap`: from
    /// that record on, every HTTP body is stored as its length and SHA-256 only (`bytes`
    /// empty), so an inventory or answer read from those records is incomplete. Absent
    /// when the cap was not reached (and in bundles from before the cap existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_capped_from: Option<u64>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every leg ran (an unreachable server is still a complete observation).
    Complete,
    /// Stopped early: Ctrl-C, a leg that failed inside the collector, or a deadline.
    Interrupted,
    /// The target could not be probed at all (no MCP endpoint, unreachable host).
    Failed,
    /// Sealed afterwards by `mcp-collect --recover` from the journal of a run that was
    /// killed (SIGKILL, power loss): the records up to the last intact one.
    Recovered,
}

impl RunStatus {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Recovered => "recovered",
        }
    }
}

/// Collector options that shape what was observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Per-request timeout, milliseconds.
    pub timeout_ms: u64,
    /// Response bodies are stored up to this many bytes.
    pub body_cap: u64,
    /// At most this many pages are read per list method.
    pub max_pages: u32,
    /// `--info` mode (connect and enumerate only).
    pub info_only: bool,
    /// Name of the environment variable the bearer token came from, if any.
    pub token_env: Option<String>,
    /// Extra trust anchor file and its SHA-256 (hex), if any.
    pub ca_file: Option<CaFile>,
    /// Port of the plaintext probe (`http.plaintext`); absent in bundles from before
    /// the probe existed, read as 80.
    #[serde(default = "default_plaintext_port")]
    pub plaintext_port: u16,
    /// Per-target deadline (`--target-timeout`), milliseconds; absent in bundles from
    /// before the deadline existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_timeout_ms: Option<u64>,
    /// `--bundle-cap`, bytes: once the journal held this many, later bodies were stored
    /// as length and SHA-256 only (see `Run::bundle_capped_from`). Absent in bundles from
    /// before the cap existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_cap: Option<u64>,
    /// `--header`, the proxy and `--client-cert` (docs/bundle.md, "Connectivity");
    /// absent when none was used and in bundles from before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectivity: Option<crate::connectivity::Connectivity>,
    /// `--client-id` (and `--client-secret-env`): an OAuth client the operator registered
    /// with the authorization server beforehand. Dynamic client registration was then
    /// neither used for the login nor probed (the 3.3.5 scratch registrations were not
    /// sent). Absent when not given and in bundles from before the flag existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_registered_client: Option<PreRegisteredClient>,
    /// The login flags other than the client (`--grant`, `--client-key-file`,
    /// `--client-metadata-url`, `--audience`, `--no-resource-indicator` and the names of
    /// the variables the unattended grants read). Absent when every one had its default
    /// and in bundles from before the flags existed: the login was then the browser login
    /// (authorization code), with `resource` and without `audience`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login: Option<LoginOptions>,
}

/// How the run was told to log in ([`Options::login`]). No secret is recorded: for each
/// one, the name of the environment variable it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginOptions {
    /// `--grant` when not the browser login: `client-credentials`, `jwt-bearer` or
    /// `enterprise-managed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    /// RFC 7638 JWK SHA-256 thumbprint of the `--client-key-file` key's public half (the
    /// client authenticated with `private_key_jwt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key_thumbprint: Option<String>,
    /// `--assertion-env`: the variable the JWT-bearer assertion came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion_env: Option<String>,
    /// `--idp-token-endpoint`: the identity provider of an enterprise-managed login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_token_endpoint: Option<String>,
    /// `--id-token-env`: the variable the ID token came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_env: Option<String>,
    /// `--idp-client-id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_client_id: Option<String>,
    /// `--client-metadata-url`: the client ID metadata document offered as the client id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// `--audience`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// `--no-resource-indicator`: the login sent no RFC 8707 `resource`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_resource_indicator: bool,
}

/// `--client-id`: the pre-registered OAuth client of a run ([`Options::pre_registered_client`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreRegisteredClient {
    /// The client id (a public value, as sent).
    pub client_id: String,
    /// Name of the environment variable the client secret came from (`--client-secret-env`);
    /// absent for a public client. The secret itself is never recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_env: Option<String>,
}

fn default_plaintext_port() -> u16 {
    80
}

/// An extra trust anchor used for this run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaFile {
    /// Path as given.
    pub path: String,
    /// SHA-256 of the file bytes, hex.
    pub sha256: String,
    /// The certificates (DER) it contained.
    pub certificates: Vec<serde_bytes::ByteBuf>,
}

/// The target as typed and as resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Exactly what the operator typed.
    pub as_typed: String,
    /// `scheme://host[:port]`.
    pub base_url: String,
    /// Endpoint candidates, in the order tried.
    pub candidates: Vec<String>,
    /// The endpoint that answered as MCP (or with 401), if any.
    pub endpoint: Option<String>,
    /// Addresses the host resolved to (`ip:port`).
    pub addresses: Vec<String>,
    /// The transport the collector spoke to the endpoint. Absent in bundles written
    /// before this field existed, which were all Streamable HTTP.
    #[serde(default)]
    pub transport: Transport,
    /// HTTP+SSE only: the URL the stream's `endpoint` event named, resolved against the
    /// stream URL (`endpoint`), to which the collector POSTed its messages. Absent for
    /// other transports, when no `endpoint` event arrived, and in older bundles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_endpoint: Option<String>,
    /// `mcp-collect --from-config`: the MCP client configuration entry the target came
    /// from (docs/bundle.md, "ConfigSource"). Absent for targets typed on the command
    /// line or in a servers file, and in bundles from before the flag existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ConfigSource>,
}

/// Where a `--from-config` target came from ([`Target::source`]): the client
/// configuration file and entry, how each value the entry gives was written, and whether
/// the credential it configures was used. No value appears in clear: each as its
/// fingerprint (`redacted:sha256:<hex>`) only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigSource {
    /// The client whose file it is: `claude-desktop`, `claude-code`, `cursor`,
    /// `windsurf`, `kiro`, `vscode`, `opencode`, `gemini` or `unknown`.
    pub client: String,
    /// `user`, `project` or `local` (one project, kept in the user's file).
    pub scope: String,
    /// The file, as found or given.
    pub file: String,
    /// SHA-256 of the file's bytes as read, hex.
    pub file_sha256: String,
    /// `local` scope: the project path the entry is kept under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The entry's name in the file.
    pub entry: String,
    /// How the file says the client reaches the server: `streamable-http`, `sse` or
    /// `stdio`.
    pub transport: String,
    /// stdio entries: the environment variables the entry sets, in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<ConfigValue>,
    /// Remote entries: the headers the entry sends, in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<ConfigValue>,
    /// Placeholders that could not be resolved (`${input:ID}`, an unset variable), each
    /// as `WHERE: PLACEHOLDER` (`env.API_KEY: ${input:api-key}`, `args[2]: ${DB_DSN}`):
    /// the entry was collected without the value they stand in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
    /// The entry configures a credential: a secret-looking header or environment value,
    /// or a sensitive URL query parameter.
    #[serde(default)]
    pub credential_configured: bool,
    /// The configured credential was given to the server (`--use-config-credentials`);
    /// `false` when it was configured but not supplied, or none was configured.
    #[serde(default)]
    pub credential_supplied: bool,
    /// stdio entries: how the operator allowed the command to run: `allow-exec` (the
    /// `--allow-exec` flag) or `prompt` (answered yes at the terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<String>,
}

/// One environment variable or header of a [`ConfigSource`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigValue {
    /// The variable's or header's name.
    pub name: String,
    /// `literal` (the value is written in the file) or `reference` (the value is or holds
    /// a placeholder: `${env:VAR}`, `${VAR}`, `$VAR`, `${input:ID}`).
    pub written: String,
    /// Fingerprint (`redacted:sha256:<hex>`) of the value as resolved; absent when a
    /// placeholder in it could not be resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The name or the value looks like a secret (token, key, password, ... in the name;
    /// a well-known token shape in the value).
    #[serde(default)]
    pub secret_like: bool,
    /// The value was given to the server (a header sent, a variable set).
    #[serde(default)]
    pub supplied: bool,
}

/// How the collector reached the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// Streamable HTTP (2025-03-26 and later): one endpoint, POST and optional GET.
    #[default]
    StreamableHttp,
    /// The HTTP+SSE transport of 2024-11-05: a GET event stream whose `endpoint` event
    /// names the URL messages are POSTed to; answers arrive on the stream.
    HttpSse,
    /// A local server launched as a child process, JSON-RPC over its stdin and stdout.
    Stdio,
}

impl Transport {
    /// The name reports print: `streamable-http`, `http+sse`, `stdio`.
    pub fn label(self) -> &'static str {
        match self {
            Transport::StreamableHttp => "streamable-http",
            Transport::HttpSse => "http+sse",
            Transport::Stdio => "stdio",
        }
    }
}

/// The era of the protocol a session uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// 2026-07-28: per-request headers and `_meta`, `server/discover`.
    Modern,
    /// 2024-11-05 .. 2025-11-25: `initialize` handshake.
    Legacy,
}

/// What the collector established with the endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The endpoint URL.
    pub endpoint: String,
    /// True when the endpoint answered 401 without credentials.
    pub auth_required: bool,
    /// True when requests carried a bearer token.
    pub authenticated: bool,
    /// Era of the negotiated revision (absent when none was negotiated).
    pub era: Option<Era>,
    /// Negotiated revision (absent when none was negotiated).
    pub revision: Option<String>,
    /// `serverInfo` as the server reported it (self-reported by the server).
    pub server_info: Option<serde_json::Value>,
    /// Server capabilities object.
    pub capabilities: Option<serde_json::Value>,
    /// `Mcp-Session-Id` issued on the handshake, if any.
    pub session_id: Option<String>,
    /// Seq of the record that established the revision.
    pub negotiated_in: Option<u64>,
    /// Sessions of other eras the server also serves, probed after the negotiated one
    /// (a 2026-07-28 server that still answers `initialize`). Their records carry the
    /// legs of [`crate::vocab::family::PER_ERA`] qualified with `@<revision>`. Absent
    /// in bundles written before this field existed, and when no other era was served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_eras: Vec<EraSession>,
    /// The MCP 2025-03-26 default authorization endpoints (`/authorize`, `/token`,
    /// `/register` on the endpoint's origin) the login used because the server published
    /// neither protected-resource nor authorization-server metadata. Absent otherwise and
    /// in bundles from before the fallback existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_defaults: Option<AuthorizationDefaults>,
    /// The step-up re-authorization of the run (at most one): a consented call answered
    /// 403 `insufficient_scope`, and the login asked again for the union of the scopes.
    /// Absent when none was needed and in bundles from before step-up existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_up: Option<StepUp>,
    /// Seq of the token request the authorization server refused because it carried the
    /// RFC 8707 `resource` parameter (`invalid_target`, or Microsoft Entra ID's
    /// AADSTS901002): the login then sent its token requests without it. Absent when no
    /// such refusal was seen and in bundles from before the retry existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_refused_in: Option<u64>,
    /// RFC 9449 DPoP as the login met it: who demanded it, whether the token was bound
    /// to the run's key, the key's thumbprint, and which servers required a nonce. Absent
    /// when neither the authorization server's metadata nor the resource server's
    /// challenge asked for DPoP, and in bundles from before DPoP was supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop: Option<DpopFacts>,
}

/// A step-up re-authorization ([`Session::step_up`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepUp {
    /// Seq of the record whose 403 `insufficient_scope` asked for it.
    pub challenge_in: u64,
    /// The `scope` the challenge named (absent when it named none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenged_scope: Option<String>,
    /// The scope the new authorization asked for: the run's scope and the challenged
    /// one, each scope once.
    pub requested_scope: String,
    /// Whether a token was obtained; when not, why (one line).
    pub obtained: bool,
    /// Why no token was obtained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Seq of the call sent again with the new token (leg `step_up.retry`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_in: Option<u64>,
}

/// What a run did about RFC 9449 DPoP ([`Session::dpop`]). The per-run private key is
/// never recorded; its public JWK's thumbprint is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DpopFacts {
    /// The authorization server's metadata listed `dpop_signing_alg_values_supported`:
    /// the list as served (absent when the metadata had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_algs: Option<Vec<String>>,
    /// The resource server's unauthenticated 401 challenged with the `DPoP` scheme and no
    /// `Bearer` one: it demands DPoP-bound tokens.
    #[serde(default)]
    pub rs_demanded: bool,
    /// The access token the probe presented is DPoP-bound (`token_type` `DPoP`): every
    /// request carrying it had `Authorization: DPoP` and a fresh proof.
    #[serde(default)]
    pub used: bool,
    /// The JWS algorithm of the proofs (`ES256`), when proofs were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
    /// RFC 7638 SHA-256 thumbprint (base64url) of the per-run public key, when proofs
    /// were sent: the `cnf.jkt` a bound token carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
    /// The authorization server answered a token request with `use_dpop_nonce` and a
    /// `DPoP-Nonce` (the request was sent again with the nonce).
    #[serde(default)]
    pub as_nonce_required: bool,
    /// The resource server answered a request with a `DPoP error="use_dpop_nonce"`
    /// challenge and a `DPoP-Nonce` (the request was sent again with the nonce).
    #[serde(default)]
    pub rs_nonce_required: bool,
}

/// The 2025-03-26 default endpoints a login used ([`Session::authorization_defaults`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationDefaults {
    /// The authorization base URL: the endpoint's origin.
    pub base: String,
    /// `<base>/authorize`.
    pub authorization_endpoint: String,
    /// `<base>/token`.
    pub token_endpoint: String,
    /// `<base>/register`.
    pub registration_endpoint: String,
    /// The seqs of the discovery records that found no metadata (every protected-resource
    /// form and the origin's `/.well-known/oauth-authorization-server`).
    pub absent_in: Vec<u64>,
}

/// A session of another era than the negotiated one, on the same endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EraSession {
    /// Its era.
    pub era: Era,
    /// The revision the server agreed to.
    pub revision: String,
    /// `serverInfo` as the server reported it on that session.
    pub server_info: Option<serde_json::Value>,
    /// The capabilities it advertised on that session.
    pub capabilities: Option<serde_json::Value>,
    /// `Mcp-Session-Id` issued on its handshake, if any.
    pub session_id: Option<String>,
    /// Seq of the record that established it.
    pub negotiated_in: u64,
}

impl EraSession {
    /// What its records append to a leg id: `@<revision>`.
    pub fn suffix(&self) -> String {
        format!("@{}", self.revision)
    }
}

/// Facts kept about an access token. The token itself never enters a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenFacts {
    /// Where it came from (`env:VAR`, `oauth`, …).
    pub source: String,
    /// `redacted:sha256:<hex>` of the token.
    pub fingerprint: String,
    /// Decoded JOSE header when the token is a JWT.
    pub jwt_header: Option<serde_json::Value>,
    /// Decoded claims when the token is a JWT (the signature is never kept).
    pub jwt_claims: Option<serde_json::Value>,
    /// `expires_in` from the token response, if known.
    pub expires_in: Option<i64>,
    /// `scope` from the token response, if known.
    pub scope: Option<String>,
    /// `token_type` from the token response, if known.
    pub token_type: Option<String>,
}

/// An access token a probe grant of the collector obtained ([`Evidence::minted_tokens`]):
/// which grant, the resource it named, and the token's facts. The token itself never
/// enters a bundle (`token.fingerprint` is its fingerprint, as in the grant's record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MintedToken {
    /// The leg of the token request that answered it (`3.3.1b.mint`, `3.3.1b.restore`).
    pub leg: String,
    /// Seq of the record of that token request, when the journal returned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The RFC 8707 `resource` the request named (absent when it named none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_resource: Option<String>,
    /// The RFC 8707 `resource` the run's own credential was asked for (the login's: the
    /// audited resource), to compare the token's audiences with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_resource: Option<String>,
    /// The token's facts: fingerprint, decoded JWT header and claims (as `tokens[]`
    /// keeps them), and the answer's `expires_in`, `scope` and `token_type`. `source` is
    /// `oauth-grant`.
    pub token: TokenFacts,
}

/// One observation in the hash chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 0-based position; equals the index in `records`.
    pub seq: u64,
    /// Legs this observation serves.
    pub legs: Vec<String>,
    /// Start, UTC microseconds.
    pub started_at: Micros,
    /// Duration in microseconds.
    pub duration_us: u64,
    /// SHA-256 of the previous record's bytes (genesis hash for record 0).
    #[serde(with = "serde_bytes")]
    pub prev: Vec<u8>,
    /// What was observed.
    pub observation: Observation,
    /// Credentials replaced by fingerprints in this record.
    pub redactions: Vec<Redaction>,
}

/// What a record observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Observation {
    /// An HTTP request and its response or transport error.
    Http(HttpExchange),
    /// A TLS handshake (TLS 1.2/1.3) and the chain the server sent.
    Tls(TlsHandshake),
    /// A hand-written TLS 1.0/1.1 ClientHello and the server's first bytes.
    LegacyTls(LegacyTlsProbe),
    /// Resolution of a host name.
    Dns(DnsLookup),
    /// A leg that was not sent, and why.
    Skipped {
        /// The gate's reason.
        reason: String,
    },
    /// One JSON-RPC message written to a stdio server's stdin and every line its stdout
    /// carried until the answer (or lines read while no request was pending).
    Stdio(StdioExchange),
    /// The stdio server's process: the command line, the environment variable names,
    /// its stderr and how it ended. Written once, when the run stops the process.
    StdioProcess(StdioProcess),
    /// One event read from an HTTP+SSE (2024-11-05) event stream, or how reading it
    /// ended. Absent from bundles of other transports.
    SseEvent(SseEvent),
}

/// One JSON-RPC message sent to a stdio server and the stdout lines read while it was
/// pending, in order. A stdout line is recorded whatever it holds: a line that is not a
/// JSON-RPC message is what 5.3.1 reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StdioExchange {
    /// The message written to stdin (one line, without its newline); absent on a record of
    /// lines read while no request was pending (before the first request, or a stream
    /// drained at the end of the run).
    #[serde(default, with = "serde_bytes", skip_serializing_if = "Option::is_none")]
    pub sent: Option<Vec<u8>>,
    /// The lines read on stdout, in order.
    pub received: Vec<StdioLine>,
    /// Why the awaited answer did not arrive (a timeout, stdout closed, a write that
    /// failed), typed as a transport error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TransportError>,
    /// Stdout lines read while this record was open but not stored in `received`: the
    /// run had already stored as many lines as its share of `--bundle-cap` allows
    /// (`run.bundle_capped_from`). Absent when every line read is in `received`, and in
    /// bundles from before the bound existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unkept: Option<StdioUnkept>,
}

/// Stdout lines counted, measured and hashed instead of stored (see
/// [`StdioExchange::unkept`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StdioUnkept {
    /// How many lines.
    pub lines: u64,
    /// Their whole lengths, summed (newlines not counted).
    pub bytes: u64,
    /// Of them, lines that parsed as one JSON-RPC 2.0 message or batch.
    pub jsonrpc: u64,
    /// Of them, lines longer than the run's body cap (not judged: neither JSON-RPC nor
    /// not).
    pub cut: u64,
    /// SHA-256 of the lines as they would have been stored (each line's bytes up to the
    /// body cap, before redaction, followed by one `\n`), in order.
    #[serde(with = "serde_bytes")]
    pub sha256: Vec<u8>,
    /// Microseconds after the record's `started_at` when the first of them was read.
    pub first_at_us: u64,
    /// The same for the last.
    pub last_at_us: u64,
}

impl StdioUnkept {
    /// The lines that are neither JSON-RPC messages nor cut: lines the server wrote on
    /// stdout that are not protocol messages.
    pub fn non_protocol(&self) -> u64 {
        self.lines
            .saturating_sub(self.jsonrpc)
            .saturating_sub(self.cut)
    }
}

/// One line read on a stdio server's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StdioLine {
    /// Microseconds since the record's `started_at` when the line was read.
    pub at_us: u64,
    /// The line as read (without its newline), capped at the run's body cap.
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
    /// Length of the whole line, which may exceed `bytes.len()`.
    pub length: u64,
    /// The line parsed as one JSON-RPC message (an object, or a batch array of objects,
    /// with `"jsonrpc": "2.0"`). False for a log line, a blank line, or anything else.
    pub jsonrpc: bool,
}

/// The stdio server's process as launched and as it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StdioProcess {
    /// The command line: program then arguments, a credential-looking argument replaced
    /// by its `redacted:sha256:<hex>` fingerprint.
    pub argv: Vec<String>,
    /// The arguments that were replaced, and why (the value is never kept).
    #[serde(default)]
    pub credential_args: Vec<CredentialArg>,
    /// Names of the environment variables given with `--env` (never their values).
    #[serde(default)]
    pub env_names: Vec<String>,
    /// Names of the variables the collector passed on from its own environment (the
    /// minimal policy: `PATH`, `HOME`, …), never their values.
    #[serde(default)]
    pub inherited: Vec<String>,
    /// Process id while it ran (absent when it could not be started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Why the process could not be started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawn_error: Option<String>,
    /// How it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ProcessExit>,
    /// What stopped it: `exited` (on its own, before the collector stopped it),
    /// `stdin-closed` (it exited after the collector closed its stdin at the end of the
    /// run), `terminated` (SIGTERM), `killed` (SIGKILL).
    pub ended_by: String,
    /// The stderr stream, capped at the run's body cap.
    #[serde(with = "serde_bytes")]
    pub stderr: Vec<u8>,
    /// Bytes the stderr stream carried (may exceed `stderr.len()`).
    pub stderr_length: u64,
}

/// A command-line argument replaced by its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialArg {
    /// Position in `argv`.
    pub index: u32,
    /// The flag that named it (`--api-key`), when a flag did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// Why it was taken for a credential: `flag` (the value after a flag named like a
    /// credential), `flag=value` (the same in one argument), `entropy` (a long random
    /// looking value).
    pub why: String,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessExit {
    /// Exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// One event of an HTTP+SSE (2024-11-05) stream, recorded when the collector read it
/// (`started_at` of its record is the arrival time). The stream itself is the HTTP
/// record of the `GET` (`stream`), whose body is recorded `head_only`: its events are
/// these records, in arrival order. An event that belongs to a request names the
/// `POST` record of that request (`request`) and carries its legs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SseEvent {
    /// Seq of the HTTP record of the `GET` that opened the stream.
    pub stream: u64,
    /// Seq of the `POST` record of the request this event belongs to: the request
    /// whose `id` it answers; for a notification or a server request, the request
    /// whose answer was awaited when it arrived (as a Streamable HTTP response stream
    /// would carry it); on an `error` record, the request awaited when reading ended.
    /// Absent for the `endpoint` event and events read while no answer was awaited.
    pub request: Option<u64>,
    /// The `event` field (absent: the default type `message`).
    pub event: Option<String>,
    /// The `data` lines, joined with `\n`; at most the run's body cap, and emptied in
    /// records from `run.bundle_capped_from` on.
    pub data: String,
    /// The length in bytes of the `data` received, when `data` holds less of it (cut at
    /// the body cap, or emptied once the bundle cap was reached); absent when whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_length: Option<u64>,
    /// The `id` field.
    pub id: Option<String>,
    /// The `retry` field, milliseconds.
    pub retry: Option<u64>,
    /// Set when this record is not an event but says how reading ended: the server
    /// closed the stream (`reset`), it broke the framing or the read limit
    /// (`protocol`), or no awaited event came within the per-request timeout
    /// (`timeout`). The event fields are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TransportError>,
    /// Set on a record that stands for events read but not stored (past the bundle
    /// cap): how many, how long, how many JSON-RPC, their hash and times. The event
    /// fields are then empty but `data_length`, their data lengths summed (so a reader
    /// that does not know this field reads it as one event stored cut, never as an
    /// answer). Absent on every other record, and in bundles from before the bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unkept: Option<SseUnkept>,
}

/// Stream events counted, measured and hashed instead of stored (see
/// [`SseEvent::unkept`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SseUnkept {
    /// How many events.
    pub events: u64,
    /// Their `data` lengths, summed (bytes).
    pub bytes: u64,
    /// Of them, events whose whole `data` parsed as one JSON-RPC 2.0 message or batch.
    pub jsonrpc: u64,
    /// Of them, JSON-RPC responses (a `result` or an `error`): answers to requests
    /// already answered, or to no request of the run.
    pub responses: u64,
    /// SHA-256 over the events in order, each as its `data` length (8 bytes, big
    /// endian) followed by its whole `data`, before redaction.
    #[serde(with = "serde_bytes")]
    pub sha256: Vec<u8>,
    /// Microseconds after the record's `started_at` when the first of them arrived.
    pub first_at_us: u64,
    /// The same for the last.
    pub last_at_us: u64,
}

/// An HTTP/1.1 exchange exactly as sent and received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpExchange {
    /// The request.
    pub request: HttpRequest,
    /// Response, or the transport error that prevented one.
    pub outcome: HttpOutcome,
    /// Connection id (shared with the [`TlsHandshake`] of that connection).
    pub connection: Option<u64>,
    /// Set when the request was first written on a kept-alive connection that the
    /// server had closed meanwhile (reset before any response byte) and was then sent
    /// once more on a new connection: the error of that first attempt. Absent otherwise
    /// (and in bundles written before this field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_attempt: Option<TransportError>,
    /// Set on a metadata fetch whose answer the collector read and refused to use: the
    /// document names another `issuer` (RFC 8414 §3.3, OpenID Connect Discovery §4.3) or
    /// `resource` (RFC 9728 §3.3) than the one it was fetched for, so nothing it names
    /// was used (no request went to its endpoints). Absent otherwise (and in bundles
    /// written before this field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Box<MetadataRefusal>>,
}

/// Why the collector refused a metadata document it was served ([`HttpExchange::refused`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataRefusal {
    /// The member compared: `issuer` (authorization-server metadata) or `resource`
    /// (protected-resource metadata).
    pub member: String,
    /// What the document was fetched for: the issuer as the protected-resource metadata
    /// advertised it, or the endpoint URL.
    pub expected: String,
    /// The member as served (null when absent).
    pub served: serde_json::Value,
    /// The rule applied: `RFC 8414 §3.3`, `OpenID Connect Discovery §4.3` or
    /// `RFC 9728 §3.3`.
    pub rule: String,
}

/// A request as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpRequest {
    /// `GET`, `POST`, …
    pub method: WireText,
    /// Absolute URL.
    pub url: String,
    /// `HTTP/1.1`.
    pub version: WireText,
    /// Headers in the order and case sent.
    pub headers: Vec<Header>,
    /// The body.
    pub body: Body,
}

/// A short text of an HTTP exchange that is nearly always one of a few values: a header
/// name, a request method, an HTTP version, a reason phrase. The record decoder
/// ([`crate::record_decode`]) answers a value it knows, in the exact case read, with a
/// borrowed `&'static str` and allocates only for any other text: a bundle holds hundreds
/// of headers, and an owned `String` for each name was one heap allocation (and one free)
/// per header. Reads as a `str` (deref, `Display`, comparisons with `str` and `String`)
/// and is encoded as a plain text string in CBOR and JSON, whichever variant holds it.
pub type WireText = std::borrow::Cow<'static, str>;

/// A header; the value is kept as raw bytes (servers may send non-UTF-8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Name in original case.
    pub name: WireText,
    /// Raw value.
    #[serde(with = "wire_bytes")]
    pub value: WireBytes,
}

/// A header value: like [`WireText`], the record decoder borrows the values collectors
/// and servers send most (`application/json`, `keep-alive`, `chunked`, …) from a
/// table, exact bytes, so that a header whose value is one of them (more than half of the
/// headers of the example bundles) costs no heap allocation for its value either; any
/// other value is owned.
pub type WireBytes = std::borrow::Cow<'static, [u8]>;

/// Serde for a [`WireBytes`] field: the same as `serde_bytes` for a `Vec<u8>` (a byte
/// string written; read to an owned buffer by serde_bytes' reading of a `Vec<u8>`).
mod wire_bytes {
    use super::WireBytes;
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &WireBytes, s: S) -> Result<S::Ok, S::Error> {
        serde_bytes::serialize(&**v, s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<WireBytes, D::Error> {
        let v: Vec<u8> = serde_bytes::deserialize(d)?;
        Ok(WireBytes::Owned(v))
    }
}

impl Header {
    /// Build a header from text.
    pub fn new(name: impl Into<String>, value: impl Into<Vec<u8>>) -> Header {
        Header {
            name: WireText::Owned(name.into()),
            value: WireBytes::Owned(value.into()),
        }
    }

    /// The value as text (lossy).
    pub fn value_str(&self) -> std::borrow::Cow<'_, str> {
        lossy(&self.value)
    }
}

/// `String::from_utf8_lossy`, checking valid UTF-8 (nearly every header value and event
/// line) by `str::from_utf8`, which reads ASCII a word at a time where the lossy
/// decoder goes a byte at a time.
pub(crate) fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// The response or the error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HttpOutcome {
    /// A response head arrived (its body may still have ended in an error).
    Response(HttpResponse),
    /// No response head arrived.
    Error(TransportError),
}

/// A response as received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpResponse {
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: WireText,
    /// Status code.
    pub status: u16,
    /// Reason phrase as sent.
    pub reason: WireText,
    /// Headers in the order and case received.
    pub headers: Vec<Header>,
    /// The body (decoded from chunked transfer coding; no content decoding).
    pub body: Body,
    /// Interim (1xx other than 101) responses read and skipped before this one; absent
    /// when none (and in bundles from before it was counted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interim: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A body, possibly capped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// Stored bytes (after redaction), at most the run's body cap.
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
    /// Number of bytes that crossed the wire (may exceed `bytes.len()`).
    pub length: u64,
    /// SHA-256 of the bytes that crossed the wire.
    #[serde(with = "serde_bytes")]
    pub sha256: Vec<u8>,
    /// How reading ended.
    pub end: BodyEnd,
}

/// How reading a body ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyEnd {
    /// The whole body was read.
    Complete,
    /// The collector stopped reading an event stream once the awaited JSON-RPC
    /// response had arrived.
    StoppedAfterResponse,
    /// The collector stopped at its hard read limit.
    LimitReached,
    /// An event stream of which the leg needed only the head (status and headers); the
    /// body was not read (a standalone GET stream may never end).
    HeadOnly,
    /// The read failed part way.
    Error(TransportError),
}

/// A failure below HTTP semantics, typed (a TLS alert is not a timeout is not a reset).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportError {
    /// The kind.
    pub kind: ErrorKind,
    /// Detail text.
    pub message: String,
}

/// Kinds of transport failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Name did not resolve.
    Dns,
    /// TCP connect refused or unreachable.
    Connect,
    /// A deadline passed.
    Timeout,
    /// The peer sent a TLS alert.
    TlsAlert,
    /// The certificate chain did not verify.
    TlsCertificate,
    /// Another TLS failure.
    Tls,
    /// Connection reset or closed before a complete message.
    Reset,
    /// The peer spoke something that is not valid HTTP (or TLS).
    Protocol,
    /// The network guard refused to send the request.
    RefusedByGuard,
    /// Another I/O failure.
    Io,
    /// The HTTP CONNECT proxy refused or failed to open the tunnel (the message names
    /// the proxy and its status line).
    Proxy,
}

impl ErrorKind {
    /// Stable name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Dns => "dns",
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::TlsAlert => "tls-alert",
            ErrorKind::TlsCertificate => "tls-certificate",
            ErrorKind::Tls => "tls",
            ErrorKind::Reset => "reset",
            ErrorKind::Protocol => "protocol",
            ErrorKind::RefusedByGuard => "refused-by-guard",
            ErrorKind::Io => "io",
            ErrorKind::Proxy => "proxy",
        }
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

/// A modern TLS handshake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlsHandshake {
    /// Connection id (HTTP exchanges on this connection carry the same id).
    pub connection: u64,
    /// SNI sent (absent for IP literals).
    pub sni: Option<String>,
    /// `ip:port` connected to.
    pub peer: String,
    /// `TLSv1_3`, `TLSv1_2`.
    pub version: Option<String>,
    /// IANA cipher suite name.
    pub cipher_suite: Option<String>,
    /// Negotiated ALPN protocol.
    #[serde(with = "serde_bytes")]
    pub alpn: Option<Vec<u8>>,
    /// Certificates as sent by the server, leaf first (DER).
    pub chain: Vec<serde_bytes::ByteBuf>,
    /// Verification results at collection time, one per trust store.
    pub verification: Vec<TrustCheck>,
    /// Set when the handshake failed.
    pub error: Option<TransportError>,
    /// The HTTP CONNECT proxy that carried the connection (`http://host:port`, no
    /// credentials); `peer` is then the `host:port` the tunnel was opened to. Absent for
    /// a direct connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via_proxy: Option<String>,
    /// Set when the server asked for a client certificate (a CertificateRequest), with
    /// what the collector presented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_auth: Option<crate::connectivity::ClientAuth>,
}

/// The verdict of one trust store on a chain, at collection time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustCheck {
    /// `bundled` (webpki roots), `os`, or `extra` (`--ca-file`).
    pub store: String,
    /// Whether the chain verified for the server name.
    pub ok: bool,
    /// The error when it did not.
    pub error: Option<String>,
}

/// A TLS 1.0/1.1 acceptance probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegacyTlsProbe {
    /// `TLSv1_0` or `TLSv1_1`.
    pub offered: String,
    /// The ClientHello record sent.
    #[serde(with = "serde_bytes")]
    pub client_hello: Vec<u8>,
    /// The first bytes the server answered with.
    #[serde(with = "serde_bytes")]
    pub server_bytes: Vec<u8>,
    /// Network error, if any.
    pub error: Option<TransportError>,
}

/// A DNS lookup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DnsLookup {
    /// Host name looked up.
    pub host: String,
    /// Addresses returned.
    pub addresses: Vec<String>,
    /// Failure, if any.
    pub error: Option<TransportError>,
}

/// One credential replaced by its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redaction {
    /// Where: `request.header:Authorization`, `response.body`, `request.url`, …
    pub location: String,
    /// What kind of credential (`bearer-token`, `cookie`, `refresh_token`, …).
    pub what: String,
    /// `redacted:sha256:<hex>` as it now appears in place of the value.
    pub fingerprint: String,
}

#[cfg(test)]
mod lossy_tests {
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// The decoding is `String::from_utf8_lossy`'s, for text valid or not.
        #[test]
        fn lossy_is_from_utf8_lossy(
            b in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::any::<u8>(),
                    proptest::sample::select(b"a \x80\xbf\xc3\xa9\xe2\x80\xa6\xf0\x9f\x98\x80\xed\xa0\x80".to_vec()),
                ],
                0..40,
            ),
        ) {
            proptest::prop_assert_eq!(super::lossy(&b), String::from_utf8_lossy(&b));
        }
    }
}
