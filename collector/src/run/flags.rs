//! Command-line flags of `mcp-collect`. Parsing and validation only. [`command`] is the
//! source of `--help`, the man page and completions (docs/man, docs/completions) and of
//! what collector/tests/docs_help.rs holds README.md and docs/ to.

use std::path::PathBuf;

use clap::{CommandFactory, Parser};

/// Connect to MCP servers (Streamable HTTP, the legacy HTTP+SSE transport, or a local
/// server over stdio) and record signed evidence bundles.
///
/// Prints one bundle path per target on stdout; progress goes to stderr. Every target
/// gets a sealed bundle, an unreachable one included (that is recorded evidence).
/// With --stdio, launches a local server instead; with --recover, seals a killed run's
/// journal; `mcp-collect timestamp` renews the timestamp of bundles already sealed.
#[derive(Debug, Parser)]
#[command(name = "mcp-collect", version = env!("MCP_PROBE_LONG_VERSION"), about, long_about)]
#[command(after_help = super::exit::help_footer())]
// The first word decides: `timestamp` is the subcommand, anything else a target (a
// target literally named `timestamp` is written as a URL). No `help` subcommand: `help`
// stays a word like any other.
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
pub struct Flags {
    /// A subcommand instead of collecting.
    #[command(subcommand)]
    pub subcommand: Option<Subcommand>,

    /// Targets: a domain (mcp.example.com) or an endpoint URL.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,

    /// File with one target per line; '#' starts a comment.
    #[arg(long, value_name = "FILE")]
    pub servers_file: Option<PathBuf>,

    /// Directory the bundles are written to.
    #[arg(short, long, value_name = "DIR", default_value = "evidence")]
    pub out: PathBuf,

    /// Connect and enumerate only; print endpoint, revision, server and inventory counts.
    #[arg(long)]
    pub info: bool,

    /// Operator probe inputs, JSON keyed by target as typed
    /// (default: ~/.mcp-probe/probe-inputs.json when it exists).
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<PathBuf>,

    /// The approved baseline for 1.3's tool selection: an earlier bundle of the same
    /// endpoint (default: the store `mcp-grade --update-baseline` writes).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Take a bearer token from this environment variable (unattended runs).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,

    /// OAuth client id registered with the authorization server beforehand (for servers
    /// that do not allow dynamic client registration): the login uses it instead of
    /// registering a client. A public value, recorded in the bundle.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,

    /// Take the --client-id's secret from this environment variable (never a flag
    /// value); without it the client is public. Sent as client_secret_basic or
    /// client_secret_post, as the authorization server's metadata allows; never recorded.
    #[arg(long, value_name = "VAR", requires = "client_id")]
    pub client_secret_env: Option<String>,

    /// How to obtain a token when the endpoint wants one and none is cached: the browser
    /// login (authorization-code, the default), or an unattended grant with the
    /// --client-id client: client-credentials (with --client-secret-env or
    /// --client-key-file), jwt-bearer (a workload identity token from --assertion-env) or
    /// enterprise-managed (--idp-token-endpoint and --id-token-env: token exchange at the
    /// identity provider, then a JWT-bearer grant).
    #[arg(long, value_name = "GRANT", value_enum, default_value_t = crate::oauth::Grant::AuthorizationCode)]
    pub grant: crate::oauth::Grant,

    /// Private key (PEM: PKCS#8, or PKCS#1 for RSA) of the --client-id client: the client
    /// authenticates with RFC 7523 client assertions (private_key_jwt), signed with an
    /// algorithm the authorization server lists. Never recorded.
    #[arg(
        long,
        value_name = "PEM",
        requires = "client_id",
        conflicts_with = "client_secret_env"
    )]
    pub client_key_file: Option<PathBuf>,

    /// Take the --grant jwt-bearer assertion (a workload identity token, such as a CI
    /// system's OIDC token) from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub assertion_env: Option<String>,

    /// --grant enterprise-managed: the enterprise identity provider's token endpoint,
    /// where the ID token is exchanged for an identity assertion (RFC 8693).
    #[arg(long, value_name = "URL")]
    pub idp_token_endpoint: Option<String>,

    /// --grant enterprise-managed: take the operator's ID token from this environment
    /// variable.
    #[arg(long, value_name = "VAR")]
    pub id_token_env: Option<String>,

    /// --grant enterprise-managed: the client id at the identity provider, if it wants one.
    #[arg(long, value_name = "ID")]
    pub idp_client_id: Option<String>,

    /// --grant enterprise-managed: take the --idp-client-id's secret from this
    /// environment variable (sent as client_secret_basic; never recorded).
    #[arg(long, value_name = "VAR", requires = "idp_client_id")]
    pub idp_client_secret_env: Option<String>,

    /// URL of the client ID metadata document the operator hosts (https; http only on
    /// loopback): used as the client id where the authorization server advertises
    /// client_id_metadata_document_supported, before dynamic client registration.
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<String>,

    /// An `audience` parameter sent with every authorization and token request of the
    /// login, for authorization servers that want their own (Auth0: the API identifier).
    #[arg(long, value_name = "VALUE")]
    pub audience: Option<String>,

    /// Do not send the RFC 8707 `resource` parameter in the login (for authorization
    /// servers that refuse it). The probe's own wrong-audience grant (3.3.1b) still names
    /// one.
    #[arg(long)]
    pub no_resource_indicator: bool,

    /// Forget the cached OAuth client registration and tokens of each target's endpoint
    /// and log in again.
    #[arg(long)]
    pub reauth: bool,

    /// Do not open a browser for an OAuth login: print the authorization URL on stderr.
    #[arg(long)]
    pub no_browser: bool,

    /// Ed25519 signing key, PKCS#8 PEM (default ~/.mcp-probe/keys/collector.key,
    /// created 0600 on first use).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,

    /// Print the signing key's public key (SPKI PEM) on stdout and exit.
    #[arg(long)]
    pub public_key: bool,

    /// Extra trust anchor(s), PEM, for a private PKI (recorded in the bundle).
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,

    /// RFC 3161 time-stamping authority (http or https URL): each bundle's COSE signature
    /// is timestamped and the token stored in the bundle's unprotected header. A TSA that
    /// fails is recorded in the bundle and warned about on stderr; the bundle is sealed
    /// all the same and the exit code does not change. The request has the --timeout
    /// deadline. Bundles sealed after a signal are not timestamped.
    #[arg(long, value_name = "URL", conflicts_with = "recover")]
    pub tsa: Option<String>,

    /// Per-request deadline in seconds, for the request as a whole (connect, TLS, head and
    /// body, event-stream keepalives included), not the gap between bytes.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,

    /// Per-target deadline in seconds: when it passes, the target's run stops sending
    /// and its bundle is sealed `interrupted` with the evidence collected so far.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub target_timeout: u64,

    /// Targets probed at once (requests to one server are never concurrent).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: u32,

    /// Most pages read per list method before stopping (recorded in the bundle).
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub max_pages: u32,

    /// Response bodies are stored up to this many bytes (longer ones are hashed whole).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1024..=(64 << 20)))]
    pub body_cap: u64,

    /// Once a target's journal holds this many bytes, later HTTP bodies are stored as
    /// their length and SHA-256 only (recorded in the bundle: `run.bundle_capped_from`).
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range((64 << 10)..))]
    pub bundle_cap: u64,

    /// Seal the journal a killed run left (`<bundle>.mcpev.journal`) into a bundle with
    /// status `recovered`, after checking its hash chain; records past a torn write are
    /// dropped and counted. Takes no target.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["targets", "servers_file", "public_key"])]
    pub recover: Option<PathBuf>,

    /// Port of the plaintext probe (`GET http://host:PORT/`); 80 unless the deployment
    /// exposes its plaintext door elsewhere.
    #[arg(long, value_name = "PORT", default_value_t = 80, value_parser = clap::value_parser!(u16).range(1..))]
    pub plaintext_port: u16,

    /// Collect only this machine's share of the targets: `K/N` (0 <= K < N) keeps the
    /// targets whose stable hash (SHA-256 of the target as typed) modulo N is K, so N
    /// machines given 0/N .. (N-1)/N (a Kubernetes Indexed Job, a CI matrix) split a
    /// servers file without overlap or gap.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,

    /// Write one JSON line per target to FILE once the run ends: target, bundle, status,
    /// revision, seconds (written atomically; also after a signal).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,

    /// Extra request header `NAME: VALUE`, sent on every request to the targets' origins
    /// (repeatable; never to another origin such as an authorization server elsewhere).
    /// Names the probe sets or varies itself (Host, Authorization, Origin, Accept,
    /// Content-Type, Mcp-Session-Id, MCP-Protocol-Version, ...) are refused; values of
    /// sensitive names (Cookie, names containing token, secret, key, auth, session,
    /// password) appear only as fingerprints.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub header: Vec<String>,

    /// HTTP CONNECT proxy for every connection, `http://[user:pass@]host:port` (default:
    /// HTTPS_PROXY / HTTP_PROXY by the URL's scheme; NO_PROXY applies to both).
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,

    /// Client certificate (PEM, leaf first) for mutual TLS with the targets; needs
    /// --client-key.
    #[arg(long, value_name = "FILE")]
    pub client_cert: Option<PathBuf>,

    /// Private key (PEM) of --client-cert; never recorded.
    #[arg(long, value_name = "FILE")]
    pub client_key: Option<PathBuf>,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// Longer notices on stderr: after each target with an MCP session, what every
    /// probe input it lacked is and which checks it decides (one short line without).
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,

    /// Launch a local MCP server (the command after `--`) and speak JSON-RPC over its
    /// stdin and stdout. The server gets a clean environment: the `--env` variables, plus
    /// PATH, HOME, LANG and TMPDIR from this process when set.
    #[arg(long, conflicts_with_all = ["targets", "servers_file", "recover", "shard"])]
    pub stdio: bool,

    /// An environment variable for the `--stdio` server (repeatable). Only its name is
    /// recorded; the value is redacted wherever it appears.
    #[arg(long = "env", value_name = "NAME=VALUE", requires = "stdio")]
    pub env: Vec<String>,

    /// Print the MCP servers that MCP client configuration files name (Claude Desktop,
    /// Claude Code, Cursor, Windsurf, Kiro, VS Code, OpenCode, Gemini CLI) and exit,
    /// contacting and running nothing: FILE, or `auto` (the default) for the current
    /// user's and the working directory's well-known files. Secret-looking values appear
    /// only as fingerprints.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        default_missing_value = "auto",
        conflicts_with_all = ["targets", "servers_file", "stdio", "recover", "public_key"]
    )]
    pub list_config: Option<String>,

    /// Collect every MCP server that MCP client configuration files name, each as if it
    /// were given as a target (a remote entry as its URL, a stdio entry as a --stdio
    /// target): FILE, or `auto` (the default) for the files --list-config reads. A stdio
    /// entry runs only with --allow-exec or a yes at the terminal; configured credentials
    /// are used only with --use-config-credentials.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        default_missing_value = "auto",
        conflicts_with_all = ["targets", "servers_file", "stdio", "list_config", "recover", "public_key", "shard"]
    )]
    pub from_config: Option<String>,

    /// --from-config: the stdio entries (by entry name; `all` for every one) whose command
    /// may run without asking.
    #[arg(long, value_name = "NAME", num_args = 1.., value_delimiter = ',', requires = "from_config")]
    pub allow_exec: Vec<String>,

    /// --from-config: give the servers the credentials their entries configure
    /// (secret-looking header and environment values, sensitive URL query parameters);
    /// each is redacted wherever it appears. Without it the entry is collected without
    /// them, and the bundle says a credential was configured but not supplied.
    #[arg(long, requires = "from_config")]
    pub use_config_credentials: bool,

    /// Output of --list-config, and only of it (it needs --list-config): a table (text,
    /// the default) or a JSON array (json).
    #[arg(long, value_name = "FORMAT", value_enum, requires = "list_config")]
    pub format: Option<Format>,

    /// The `--stdio` server's command and arguments (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// What `mcp-collect` does instead of collecting.
#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Renew the RFC 3161 timestamp of sealed bundles: one detached token per BUNDLE,
    /// written beside it in the next free slot (BUNDLE.tsr, then BUNDLE.tsr.2, ...).
    ///
    /// The first token is over SHA-256 of the bundle file (its embedded token
    /// included), each later one over the bundle file and every earlier sidecar, so a
    /// chain of renewals, each made before the previous TSA certificate expires, keeps
    /// proving the first time (`mcp-grade verify` checks it, offline). A sidecar is never
    /// overwritten. The existing sidecars are checked first (they must parse and extend
    /// the bundle), and a token dated after the previous token's TSA certificate expired
    /// is not written. One line per sidecar written on stdout; one error line per BUNDLE
    /// that got none, naming it. The grader never does this: it has no network stack.
    #[command(after_help = super::exit::timestamp_footer())]
    Timestamp(TimestampArgs),
}

/// Options of `mcp-collect timestamp`.
#[derive(Debug, clap::Args)]
pub struct TimestampArgs {
    /// Sealed bundles (.mcpev files) to timestamp.
    #[arg(value_name = "BUNDLE", required = true)]
    pub bundles: Vec<PathBuf>,

    /// RFC 3161 time-stamping authority (http or https URL), asked once per BUNDLE.
    #[arg(long, value_name = "URL", required = true)]
    pub tsa: String,

    /// Deadline in seconds of each TSA request as a whole (connect, TLS, head and body).
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,

    /// Bundles timestamped at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: u32,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--format`: the output of `--list-config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per entry, columns padded.
    Text,
    /// A JSON array of objects.
    Json,
}

/// The whole command line of `mcp-collect`, for the tests that hold the docs to it and for
/// the generated man page and shell completions.
pub fn command() -> clap::Command {
    Flags::command()
}

/// `K/N` with 0 <= K < N and 1 <= N <= 100000.
pub fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{s:?} is not K/N with 0 <= K < N (e.g. 0/4)");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: u32 = k.trim().parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || n > 100_000 || k >= n {
        return Err(bad());
    }
    Ok((k, n))
}
