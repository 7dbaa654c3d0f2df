//! Shared vocabulary: protocol revisions, header names, leg ids, error codes.
//!
//! One place per fact: the collector sends with these names and the grader
//! reads with them, so a typo cannot make the two disagree.

/// An MCP protocol revision the tool knows, newest first.
pub const REVISIONS: [&str; 5] = [
    REV_2026_07_28,
    REV_2025_11_25,
    REV_2025_06_18,
    REV_2025_03_26,
    REV_2024_11_05,
];

/// The stateless revision: `server/discover`, per-request headers and `_meta` envelope.
pub const REV_2026_07_28: &str = "2026-07-28";
/// Newest revision that uses the `initialize` handshake.
pub const REV_2025_11_25: &str = "2025-11-25";
/// First revision with the `MCP-Protocol-Version` header.
pub const REV_2025_06_18: &str = "2025-06-18";
/// First Streamable HTTP revision.
pub const REV_2025_03_26: &str = "2025-03-26";
/// HTTP+SSE revision.
pub const REV_2024_11_05: &str = "2024-11-05";

/// Handshake revisions the collector offers in `initialize`, in fallback order.
pub const HANDSHAKE_REVISIONS: [&str; 4] = [
    REV_2025_11_25,
    REV_2025_06_18,
    REV_2025_03_26,
    REV_2024_11_05,
];

/// True when `rev` is one of the revisions this tool knows.
pub fn is_known_revision(rev: &str) -> bool {
    REVISIONS.contains(&rev)
}

/// True when requests at `rev` must carry `MCP-Protocol-Version` after the handshake
/// (2025-06-18 and later).
pub fn sends_version_header(rev: &str) -> bool {
    // ISO dates compare correctly as strings.
    rev >= REV_2025_06_18
}

/// The `User-Agent` the collector of this build sends with every request (and with a
/// proxy's CONNECT): the workspace's version, which every crate of it shares.
pub const COLLECTOR_USER_AGENT: &str = concat!("mcp-collect/", env!("CARGO_PKG_VERSION"));

/// HTTP header names, in the case the collector sends them.
pub mod header {
    /// Negotiated (or per-request) protocol revision.
    pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
    /// Session id issued on the `initialize` response (2025-03-26 .. 2025-11-25).
    pub const SESSION_ID: &str = "Mcp-Session-Id";
    /// 2026-07-28 routing header: the JSON-RPC method.
    pub const METHOD: &str = "Mcp-Method";
    /// 2026-07-28 routing header: tool name, prompt name or resource URI.
    pub const NAME: &str = "Mcp-Name";
    /// SEP-2243 (2026-07-28): `Mcp-Param-{Name}` mirrors the `tools/call` argument at a
    /// property marked `"x-mcp-header": "{Name}"` in the tool's `inputSchema`.
    pub const PARAM_PREFIX: &str = "Mcp-Param-";
    /// Bearer credentials; always redacted in bundles.
    pub const AUTHORIZATION: &str = "Authorization";
    /// RFC 9449 DPoP proof (a signed JWT) on a request; always redacted in bundles.
    pub const DPOP: &str = "DPoP";
    /// RFC 9449 server-supplied nonce for the next DPoP proof (not a credential).
    pub const DPOP_NONCE: &str = "DPoP-Nonce";
    /// Client cookies; always redacted in bundles.
    pub const COOKIE: &str = "Cookie";
    /// Server cookies; always redacted in bundles.
    pub const SET_COOKIE: &str = "Set-Cookie";
    /// Auth challenge on 401/403.
    pub const WWW_AUTHENTICATE: &str = "WWW-Authenticate";
    /// Media type of a body.
    pub const CONTENT_TYPE: &str = "Content-Type";
    /// What the client accepts.
    pub const ACCEPT: &str = "Accept";
    /// Where a request came from (browser origin; the DNS-rebinding legs set it).
    pub const ORIGIN: &str = "Origin";
    /// Redirect target of a 3xx.
    pub const LOCATION: &str = "Location";
    /// SSE resumption cursor (the 5.2.3c leg sends it).
    pub const LAST_EVENT_ID: &str = "Last-Event-ID";
    /// Request target authority.
    pub const HOST: &str = "Host";
    /// Client product token.
    pub const USER_AGENT: &str = "User-Agent";
    /// Body length in bytes.
    pub const CONTENT_LENGTH: &str = "Content-Length";
    /// Transfer codings of a body (`chunked`).
    pub const TRANSFER_ENCODING: &str = "Transfer-Encoding";
    /// Connection options (`close`).
    pub const CONNECTION: &str = "Connection";
    /// Caching directives of a response.
    pub const CACHE_CONTROL: &str = "Cache-Control";
}

/// Fixed values the collector's probes send and the grader recognises.
pub mod probe {
    /// The foreign `Origin` of the 2.5 DNS-rebinding leg ([`super::leg::ORIGIN_HOSTILE`]).
    pub const HOSTILE_ORIGIN: &str = "https://cis-rebinding-probe.example";
    /// The session id the 5.2.3d leg supplies without the server having issued it.
    pub const SUPPLIED_SESSION_ID: &str = "cis-audit-supplied-000";
    /// A tool name no server offers (the 2.4 header legs call it).
    pub const NO_SUCH_TOOL: &str = "cis-audit-no-such-tool";
    /// The `Mcp-Name` value of the 2.4 name-mismatch legs.
    pub const MISMATCH_NAME: &str = "cis-audit-mismatch-probe";
    /// The value 5.1.2c puts in a template's first variable (a resource that cannot exist).
    pub const NO_SUCH_VALUE: &str = "cis-audit-no-such-value";
    /// The value 5.1.3c's control gives every declared prompt argument.
    pub const PROMPT_PLACEHOLDER: &str = "cis-audit-placeholder";
    /// A prompt name no server offers (5.1.3d).
    pub const NO_SUCH_PROMPT: &str = "cis-audit-no-such-prompt";
}

/// OAuth discovery: well-known URL suffixes and limits.
pub mod well_known {
    /// RFC 9728 protected-resource metadata suffix.
    pub const PRM: &str = "/.well-known/oauth-protected-resource";
    /// RFC 8414 authorization-server metadata suffix.
    pub const AS: &str = "/.well-known/oauth-authorization-server";
    /// OpenID Connect discovery suffix.
    pub const OIDC: &str = "/.well-known/openid-configuration";
    /// At most this many distinct advertised authorization servers are resolved; the
    /// collector notes the rest in a skipped `discovery.as` record.
    pub const AS_LIST_CAP: usize = 5;
}

/// `_meta` keys of the 2026-07-28 per-request envelope.
pub mod meta {
    /// Required: the revision of this request; equals the HTTP header.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Required: client capabilities (`{}` for none).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Optional: client identity.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Server identity carried on results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

/// JSON-RPC error codes.
pub mod code {
    /// Parse error.
    pub const PARSE_ERROR: i64 = -32700;
    /// Invalid request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Method not found.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid params.
    pub const INVALID_PARAMS: i64 = -32602;
    /// 2026-07-28: a standard header is missing or differs from the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: a client capability the request did not declare is required.
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: protocol version unknown or unsupported; `data.supported` lists others.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

    /// True for the error codes by which a 2026-07-28 server identifies itself when it
    /// rejects a request (era detection).
    pub fn is_modern_rejection(code: i64) -> bool {
        matches!(
            code,
            HEADER_MISMATCH | MISSING_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
        )
    }
}

/// The id of one leg: the name every record of a live request carries, so the collector
/// that sends it and the check that reads it agree by type, not by spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LegId(&'static str);

impl LegId {
    /// A leg id (only the constants of [`leg`] and test fixtures make one).
    pub const fn new(id: &'static str) -> LegId {
        LegId(id)
    }

    /// The id as recorded in bundles.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// Every leg id this build knows.
    pub fn all() -> &'static [LegId] {
        leg::ALL
    }

    /// The known leg recorded as `name`.
    pub fn parse(name: &str) -> Option<LegId> {
        leg::ALL.iter().copied().find(|l| l.0 == name)
    }

    /// The id recorded for this leg on a session of another era: `<id>@<revision>`.
    pub fn on_revision(self, revision: &str) -> String {
        format!("{}@{revision}", self.0)
    }

    /// True when `recorded` is this leg on `revision` (`<id>@<revision>`), without
    /// allocating.
    pub fn is_on_revision(self, recorded: &str, revision: &str) -> bool {
        recorded
            .strip_suffix(revision)
            .and_then(|s| s.strip_suffix('@'))
            == Some(self.0)
    }

    /// A recorded name split into its leg and the revision it names, when it is a
    /// known leg qualified with `@<revision>`.
    pub fn parse_on_revision(name: &str) -> Option<(LegId, &str)> {
        let (id, rev) = name.rsplit_once('@')?;
        Some((LegId::parse(id)?, rev))
    }
}

impl std::fmt::Display for LegId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::ops::Deref for LegId {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl AsRef<str> for LegId {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl PartialEq<str> for LegId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for LegId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<LegId> for String {
    fn eq(&self, other: &LegId) -> bool {
        self == other.0
    }
}

impl PartialEq<LegId> for &String {
    fn eq(&self, other: &LegId) -> bool {
        *self == other.0
    }
}

impl PartialEq<LegId> for str {
    fn eq(&self, other: &LegId) -> bool {
        self == other.0
    }
}

impl PartialEq<LegId> for &str {
    fn eq(&self, other: &LegId) -> bool {
        *self == other.0
    }
}

impl serde::Serialize for LegId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl From<LegId> for serde_json::Value {
    fn from(l: LegId) -> serde_json::Value {
        serde_json::Value::String(l.0.to_string())
    }
}

impl From<LegId> for String {
    fn from(l: LegId) -> String {
        l.0.to_string()
    }
}

/// Leg ids: every live request belongs to one (docs/bundle.md, records).
pub mod leg {
    pub use super::LegId;

    /// Endpoint detection and revision negotiation requests.
    pub const ENDPOINT_DETECT: LegId = LegId("endpoint.detect");
    /// The legacy HTTP+SSE (2024-11-05) transport, tried when no candidate answered as
    /// Streamable HTTP: the `GET` of the event stream, every event that answers no
    /// request (the `endpoint` event, notifications), and how the stream ended.
    pub const ENDPOINT_SSE: LegId = LegId("endpoint.sse");
    /// The `initialize` handshake (legacy revisions).
    pub const SESSION_INITIALIZE: LegId = LegId("session.initialize");
    /// The `notifications/initialized` notification after the handshake.
    pub const SESSION_INITIALIZED: LegId = LegId("session.initialized");
    /// The `initialize` that opens a session of another era on a 2026-07-28 server
    /// (offering 2025-11-25, then the newest revision a refusal names), and its
    /// `notifications/initialized`; a refusal is the observation that the server
    /// serves 2026-07-28 only.
    pub const ERA_INITIALIZE: LegId = LegId("era.initialize");
    /// Every page of `tools/list`.
    pub const INVENTORY_TOOLS: LegId = LegId("inventory.tools");
    /// Every page of `resources/list`.
    pub const INVENTORY_RESOURCES: LegId = LegId("inventory.resources");
    /// Every page of `resources/templates/list`.
    pub const INVENTORY_RESOURCE_TEMPLATES: LegId = LegId("inventory.resource_templates");
    /// Every page of `prompts/list`.
    pub const INVENTORY_PROMPTS: LegId = LegId("inventory.prompts");
    /// Modern TLS handshake facts of a connection.
    pub const TLS_MODERN: LegId = LegId("tls.modern");
    /// DNS resolution of the target host.
    pub const DNS: LegId = LegId("dns");
    /// 7.1.2: a request with `"id": null`, otherwise complete and valid for the
    /// negotiated revision and authenticated when a credential is held.
    pub const NULL_ID: LegId = LegId("7.1.2.null_id");

    // Transport facts. `tls.modern` above is the TLS record of the first
    // connection to the endpoint.
    /// TLS 1.0 acceptance: a hand-written ClientHello and the server's first bytes.
    pub const TLS_V1_0: LegId = LegId("tls.v1_0");
    /// TLS 1.1 acceptance.
    pub const TLS_V1_1: LegId = LegId("tls.v1_1");
    /// `GET http://host[:plaintext port]/`, redirects not followed, no credential.
    pub const PLAINTEXT: LegId = LegId("http.plaintext");

    // 1.1: version assertions. 1.1a reads the `endpoint.detect` discover on 2026-07-28.
    /// 1.1a on legacy sessions: `initialize` offering 2024-11-05, then 2025-03-26 (one
    /// record each), with no session id and no version header.
    pub const V_SWEEP: LegId = LegId("1.1a.sweep");
    /// 1.1b: `tools/list` asserting the never-published version 2024-01-01.
    pub const V_BOGUS: LegId = LegId("1.1b.bogus_version");
    /// 1.1c: `tools/list` without the `MCP-Protocol-Version` header.
    pub const V_NO_HEADER: LegId = LegId("1.1c.no_header");
    /// 1.1d (2026-07-28 only): `_meta` without its protocolVersion, header present.
    pub const V_NO_META_VERSION: LegId = LegId("1.1d.no_meta_version");
    /// 1.1e (2026-07-28 only): header 2025-03-26, `_meta` 2026-07-28.
    pub const V_MISMATCH: LegId = LegId("1.1e.header_mismatch");

    // 2.3: authentication before the response.
    /// `tools/list` without credential or session id (otherwise identical to the next).
    pub const AUTH_NONE: LegId = LegId("2.3.unauthenticated");
    /// The same `tools/list` with the credential and session.
    pub const AUTH_WITH: LegId = LegId("2.3.authenticated");

    // 2.4 (2026-07-28 only): routing headers.
    /// `tools/list` without `Mcp-Method`.
    pub const HDR_NO_METHOD: LegId = LegId("2.4.no_method");
    /// `tools/call` of a tool that cannot exist, without `Mcp-Name`.
    pub const HDR_NO_NAME: LegId = LegId("2.4.no_name");
    /// `tools/call` whose `Mcp-Name` differs from the body's name.
    pub const HDR_NAME_MISMATCH: LegId = LegId("2.4.name_mismatch");
    /// As above with the header value Base64-encoded (`=?base64?…?=`).
    pub const HDR_NAME_ENCODED: LegId = LegId("2.4.name_encoded_mismatch");

    // 2.5: Origin.
    /// `tools/list` with `Origin: https://cis-rebinding-probe.example`.
    pub const ORIGIN_HOSTILE: LegId = LegId("2.5.origin.hostile");
    /// The same with the endpoint's own origin (stand-in for the allowlist).
    pub const ORIGIN_OWN: LegId = LegId("2.5.origin.own");
    /// The same without `Origin`.
    pub const ORIGIN_NONE: LegId = LegId("2.5.origin.none");

    // 5.2.3 (2026-07-28 only): legacy session surface.
    /// `GET` with `Accept: text/event-stream`.
    pub const LEGACY_GET: LegId = LegId("5.2.3a.get");
    /// `DELETE` (never with a live session id).
    pub const LEGACY_DELETE: LegId = LegId("5.2.3b.delete");
    /// `tools/list` control for 5.2.3c.
    pub const RESUME_CONTROL: LegId = LegId("5.2.3c.control");
    /// The same with `Last-Event-ID: 1`.
    pub const RESUME_LAST_EVENT_ID: LegId = LegId("5.2.3c.last_event_id");
    /// `tools/list` control for 5.2.3d.
    pub const SESSION_CONTROL: LegId = LegId("5.2.3d.control");
    /// The same with a client-supplied `Mcp-Session-Id`.
    pub const SESSION_SUPPLIED: LegId = LegId("5.2.3d.session_id");

    // Section 10.
    /// `GET` of the operator's `static_resource_path`, never with a credential.
    pub const STATIC_RESOURCE: LegId = LegId("10.1a.static");
    /// `tools/list` padded past the probe size (control: the first `inventory.tools` page).
    pub const PADDED: LegId = LegId("10.2a.padded");

    // OAuth. Discovery runs after endpoint detection on every target; its
    // requests never carry a credential and never follow a redirect. A URL the network
    // guard refuses is recorded as an HTTP exchange whose outcome is a
    // `refused_by_guard` transport error (nothing was sent).
    /// RFC 9728 protected-resource metadata: one GET per candidate URL (the challenge's
    /// `resource_metadata`, the path-inserted well-known URL, the root well-known URL).
    pub const PRM: LegId = LegId("discovery.prm");
    /// RFC 8414 / OIDC metadata: one GET per discovery form per advertised
    /// authorization server (at most 5 servers).
    pub const AS_META: LegId = LegId("discovery.as");
    /// RFC 7591 dynamic client registration (POST JSON).
    pub const OAUTH_REGISTER: LegId = LegId("oauth.register");
    /// The authorization-code grant at the token endpoint (POST form, PKCE verifier,
    /// `resource`).
    pub const OAUTH_TOKEN: LegId = LegId("oauth.token");
    /// A refresh-token grant at the token endpoint.
    pub const OAUTH_REFRESH: LegId = LegId("oauth.refresh");
    /// Enterprise-managed authorization's RFC 8693 token exchange at the identity
    /// provider's token endpoint (the operator's ID token for an identity assertion).
    pub const OAUTH_EXCHANGE: LegId = LegId("oauth.exchange");
    /// The consented call that a 403 `insufficient_scope` answered, sent again after the
    /// step-up re-authorization with the new token (the first answer stays under its own
    /// leg).
    pub const STEP_UP_RETRY: LegId = LegId("step_up.retry");
    /// RFC 9449: a request (token endpoint or resource) a server answered with
    /// `use_dpop_nonce` and a `DPoP-Nonce`; the same request was sent once more with a
    /// fresh proof carrying the nonce, recorded under its own legs.
    pub const DPOP_NONCE: LegId = LegId("dpop.nonce");
    /// 3.3.4e: one complete `tools/call` of the operator's `scope_probe_tool` (a tool outside
    /// the token's grant), with the credential, `Mcp-Name` on 2026-07-28 and a progressToken.
    pub const SCOPE_PROBE_CALL: LegId = LegId("3.3.4e.call");

    // 3.3.1 / 7.2.1: audience binding (credential operations, sent last).
    /// 3.3.1c: GET of a candidate downstream URL with the bearer token, then without.
    pub const DOWNSTREAM: LegId = LegId("3.3.1c.downstream");
    /// 3.3.1b: refresh grant naming a foreign `resource`.
    pub const FOREIGN_MINT: LegId = LegId("3.3.1b.mint");
    /// 3.3.1b: refresh grant naming the audited resource again after a rotation.
    pub const FOREIGN_RESTORE: LegId = LegId("3.3.1b.restore");
    /// 3.3.1b / 7.2.1: complete `tools/list` with the probe's own token (control).
    pub const FOREIGN_CONTROL: LegId = LegId("3.3.1b.control");
    /// 3.3.1b / 7.2.1: the same `tools/list` with the foreign-audience token.
    pub const FOREIGN_TOKEN: LegId = LegId("3.3.1b.foreign");

    // 3.3.5: confused-deputy safeguards (pre-authentication behaviour).
    /// Scratch client registrations (never the working client).
    pub const DEPUTY_REGISTER: LegId = LegId("3.3.5.register");
    /// GETs of the authorization endpoint for the scratch clients (no redirect followed).
    pub const DEPUTY_AUTHORIZE: LegId = LegId("3.3.5.authorize");
    /// 3.3.5a: the authorization request with an unregistered `redirect_uri`.
    pub const DEPUTY_REDIRECT: LegId = LegId("3.3.5a.redirect");
    /// 3.3.5b: a fabricated callback and its control path.
    pub const DEPUTY_CALLBACK: LegId = LegId("3.3.5b.callback");
    /// 3.3.5c: a third scratch client's authorization request.
    pub const DEPUTY_CONSENT: LegId = LegId("3.3.5c.consent");
    // 1.3 / 7.2.2: tool calls made only with the operator's consent
    // (`tool_calls_authorised: true` and `tool_arguments`).
    /// 1.3: the `tools/call` of a tool the baseline recorded (the control).
    pub const STAGED_CONTROL: LegId = LegId("1.3.control");
    /// 1.3a: the `tools/call` of a tool advertised beyond the baseline (sent only when
    /// the control executed cleanly).
    pub const STAGED_CALL: LegId = LegId("1.3a.staged");
    /// 7.2.2: the session's standalone GET event stream (legacy revisions), read while
    /// the progress call runs.
    pub const NOTIFY_CHANNEL: LegId = LegId("7.2.2.channel");
    /// 7.2.2: one `tools/call` carrying `_meta.progressToken`, its response stream read
    /// until the response.
    pub const NOTIFY_PROGRESS_CALL: LegId = LegId("7.2.2.progress_call");
    /// 7.2.2 on 2026-07-28: the `subscriptions/listen` stream (the revision's
    /// notification channel), opened beside the progress call when `server/discover`
    /// advertises a `listChanged` capability, read until the call's answer arrived plus
    /// a short grace.
    pub const NOTIFY_LISTEN: LegId = LegId("7.2.2.listen");

    // Section 5 live legs (after the inventory, both eras).
    /// 5.1.1d: one complete `tools/call` of the operator's `schema_probe_tool` with its
    /// `schema_probe_arguments` minus the first required property supplied.
    pub const SCHEMA_CALL: LegId = LegId("5.1.1d.call");
    /// 5.1.2c: `resources/read` of the first listed resource (control).
    pub const TEMPLATE_CONTROL: LegId = LegId("5.1.2c.control");
    /// 5.1.2c: `resources/read` of the first template with its first variable set to a
    /// value that cannot exist.
    pub const TEMPLATE_MISSING: LegId = LegId("5.1.2c.missing");
    /// 5.1.3c: `prompts/get` of the first prompt with a required argument, every declared
    /// argument set to a placeholder (control).
    pub const PROMPT_CONTROL: LegId = LegId("5.1.3c.control");
    /// 5.1.3c: the same prompt with `arguments: {}`.
    pub const PROMPT_MISSING_ARG: LegId = LegId("5.1.3c.missing_arg");
    /// 5.1.3d: `prompts/get` of a prompt (the 5.1.3c one, else the first listed), every
    /// declared argument set to a placeholder (control; one record with 5.1.3c's when the
    /// prompt is the same).
    pub const PROMPT_NAME_CONTROL: LegId = LegId("5.1.3d.control");
    /// 5.1.3d: `prompts/get` of a prompt name that does not exist.
    pub const PROMPT_UNKNOWN: LegId = LegId("5.1.3d.unknown");
    /// 5.4.1a: `resources/read` of the control URI (operator's or the first listed
    /// resource), only with the operator's consent.
    pub const TRAVERSAL_CONTROL: LegId = LegId("5.4.1a.control");
    /// 5.4.1a: the control URI with `../` segments climbing to `etc/passwd`.
    pub const TRAVERSAL_UNIX: LegId = LegId("5.4.1a.unix");
    /// 5.4.1a: the same climbing to `windows/win.ini`.
    pub const TRAVERSAL_WINDOWS: LegId = LegId("5.4.1a.windows");
    /// 5.4.1a: the Unix climb with every `/` after `..` percent-encoded (`..%2F`).
    pub const TRAVERSAL_ENCODED: LegId = LegId("5.4.1a.encoded");
    /// The stdio server's process: command line, environment variable names, stderr,
    /// exit (one record, written when the run stops the process).
    pub const STDIO_PROCESS: LegId = LegId("stdio.process");
    /// Lines a stdio server wrote on stdout while no request was pending.
    pub const STDIO_STREAM: LegId = LegId("stdio.stream");
    /// 7.1.2 on stdio: the `tools/list` (a normal id) written right after the null-id
    /// request, which is sent without waiting. Its answer, read in order after whatever
    /// the server said to the null-id request, tells a request the server ignored from a
    /// slow one without holding the run for `--timeout`.
    pub const NULL_ID_FOLLOWUP: LegId = LegId("7.1.2.null_id_followup");
    /// Every leg id, in the order above.
    pub const ALL: &[LegId] = &[
        ENDPOINT_DETECT,
        ENDPOINT_SSE,
        SESSION_INITIALIZE,
        SESSION_INITIALIZED,
        ERA_INITIALIZE,
        INVENTORY_TOOLS,
        INVENTORY_RESOURCES,
        INVENTORY_RESOURCE_TEMPLATES,
        INVENTORY_PROMPTS,
        TLS_MODERN,
        DNS,
        NULL_ID,
        TLS_V1_0,
        TLS_V1_1,
        PLAINTEXT,
        V_SWEEP,
        V_BOGUS,
        V_NO_HEADER,
        V_NO_META_VERSION,
        V_MISMATCH,
        AUTH_NONE,
        AUTH_WITH,
        HDR_NO_METHOD,
        HDR_NO_NAME,
        HDR_NAME_MISMATCH,
        HDR_NAME_ENCODED,
        ORIGIN_HOSTILE,
        ORIGIN_OWN,
        ORIGIN_NONE,
        LEGACY_GET,
        LEGACY_DELETE,
        RESUME_CONTROL,
        RESUME_LAST_EVENT_ID,
        SESSION_CONTROL,
        SESSION_SUPPLIED,
        STATIC_RESOURCE,
        PADDED,
        PRM,
        AS_META,
        OAUTH_REGISTER,
        OAUTH_TOKEN,
        OAUTH_REFRESH,
        OAUTH_EXCHANGE,
        STEP_UP_RETRY,
        DPOP_NONCE,
        SCOPE_PROBE_CALL,
        DOWNSTREAM,
        FOREIGN_MINT,
        FOREIGN_RESTORE,
        FOREIGN_CONTROL,
        FOREIGN_TOKEN,
        DEPUTY_REGISTER,
        DEPUTY_AUTHORIZE,
        DEPUTY_REDIRECT,
        DEPUTY_CALLBACK,
        DEPUTY_CONSENT,
        STAGED_CONTROL,
        STAGED_CALL,
        NOTIFY_CHANNEL,
        NOTIFY_PROGRESS_CALL,
        NOTIFY_LISTEN,
        SCHEMA_CALL,
        TEMPLATE_CONTROL,
        TEMPLATE_MISSING,
        PROMPT_CONTROL,
        PROMPT_MISSING_ARG,
        PROMPT_NAME_CONTROL,
        PROMPT_UNKNOWN,
        TRAVERSAL_CONTROL,
        TRAVERSAL_UNIX,
        TRAVERSAL_WINDOWS,
        TRAVERSAL_ENCODED,
        STDIO_PROCESS,
        STDIO_STREAM,
        NULL_ID_FOLLOWUP,
    ];
}

/// The legs of each probe family that sends several, in the order the collector sends
/// them: the collector sends (or skips) exactly these, and the check that reads them
/// declares the same list.
pub mod family {
    use super::leg::*;
    use super::LegId;

    /// 1.1: version assertions (d and e on 2026-07-28 only).
    pub const VERSIONS: [LegId; 5] = [V_SWEEP, V_BOGUS, V_NO_HEADER, V_NO_META_VERSION, V_MISMATCH];
    /// 2.3: the same `tools/list` without and with the credential.
    pub const AUTH_PAIR: [LegId; 2] = [AUTH_NONE, AUTH_WITH];
    /// 2.4: routing headers (2026-07-28 only).
    pub const ROUTING_HEADERS: [LegId; 4] = [
        HDR_NO_METHOD,
        HDR_NO_NAME,
        HDR_NAME_MISMATCH,
        HDR_NAME_ENCODED,
    ];
    /// 2.5: hostile, own and no `Origin`.
    pub const ORIGINS: [LegId; 3] = [ORIGIN_HOSTILE, ORIGIN_OWN, ORIGIN_NONE];
    /// The legs sent once more on each other era a server serves (a 2026-07-28 server
    /// that still answers `initialize`), recorded as `<leg>@<revision>`: those whose
    /// answer comes from code a client picks by picking the era (authentication before a
    /// stream, Origin validation, request-id validation, and the Section 5 live legs:
    /// argument, URI and prompt validation and path confinement, which the request
    /// handler of each era may do differently and a gateway may key on the 2026-07-28
    /// routing headers the legacy era does not send). The checks that read them are
    /// graded on every era and combined by the one rule. A bundle collected before the
    /// Section 5 live legs were sent per era holds none of them qualified.
    pub const PER_ERA: [LegId; 17] = [
        AUTH_NONE,
        AUTH_WITH,
        ORIGIN_HOSTILE,
        ORIGIN_OWN,
        ORIGIN_NONE,
        NULL_ID,
        SCHEMA_CALL,
        TEMPLATE_CONTROL,
        TEMPLATE_MISSING,
        PROMPT_CONTROL,
        PROMPT_MISSING_ARG,
        PROMPT_NAME_CONTROL,
        PROMPT_UNKNOWN,
        TRAVERSAL_CONTROL,
        TRAVERSAL_UNIX,
        TRAVERSAL_WINDOWS,
        TRAVERSAL_ENCODED,
    ];
    /// 5.2.3: the legacy session surface (2026-07-28 only).
    pub const LEGACY_SURFACE: [LegId; 6] = [
        LEGACY_GET,
        LEGACY_DELETE,
        RESUME_CONTROL,
        RESUME_LAST_EVENT_ID,
        SESSION_CONTROL,
        SESSION_SUPPLIED,
    ];
    /// 1.3 and 7.2.2: the consented tool calls, in the order the collector sends them.
    pub const TOOL_CALLS: [LegId; 5] = [
        STAGED_CONTROL,
        STAGED_CALL,
        NOTIFY_CHANNEL,
        NOTIFY_PROGRESS_CALL,
        NOTIFY_LISTEN,
    ];
    /// 5.1.2c: control read, then the made-up template instance.
    pub const TEMPLATE_READS: [LegId; 2] = [TEMPLATE_CONTROL, TEMPLATE_MISSING];
    /// 5.1.3c and 5.1.3d: the controls and the two refusals.
    pub const PROMPT_GETS: [LegId; 4] = [
        PROMPT_CONTROL,
        PROMPT_MISSING_ARG,
        PROMPT_NAME_CONTROL,
        PROMPT_UNKNOWN,
    ];
    /// 5.4.1a: the control read and the traversal reads.
    pub const TRAVERSAL: [LegId; 4] = [
        TRAVERSAL_CONTROL,
        TRAVERSAL_UNIX,
        TRAVERSAL_WINDOWS,
        TRAVERSAL_ENCODED,
    ];
}

/// The inventory lists, read in full (every page) before any probe leg: the capability
/// that gates each, its method, the key of the item array in its result and the leg its
/// pages are recorded under. The collector sends them from this table
/// ([`LISTS`](inventory::LISTS), in that order) and the grader reads them back by it, so
/// the two cannot disagree on which capability or key belongs to which leg.
pub mod inventory {
    use super::{leg, method, LegId};

    /// One list method.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct List {
        /// The leg holding every page.
        pub leg: LegId,
        /// The JSON-RPC method.
        pub method: &'static str,
        /// The key of the item array in a result.
        pub key: &'static str,
        /// The capability that gates the list (`resources` for templates too).
        pub capability: &'static str,
        /// What one item is called (in the grader's evidence).
        pub noun: &'static str,
    }

    /// `tools/list`.
    pub const TOOLS: List = List {
        leg: leg::INVENTORY_TOOLS,
        method: method::TOOLS_LIST,
        key: "tools",
        capability: "tools",
        noun: "tool",
    };
    /// `resources/list`.
    pub const RESOURCES: List = List {
        leg: leg::INVENTORY_RESOURCES,
        method: method::RESOURCES_LIST,
        key: "resources",
        capability: "resources",
        noun: "resource",
    };
    /// `resources/templates/list`.
    pub const TEMPLATES: List = List {
        leg: leg::INVENTORY_RESOURCE_TEMPLATES,
        method: method::RESOURCE_TEMPLATES_LIST,
        key: "resourceTemplates",
        capability: "resources",
        noun: "template",
    };
    /// `prompts/list`.
    pub const PROMPTS: List = List {
        leg: leg::INVENTORY_PROMPTS,
        method: method::PROMPTS_LIST,
        key: "prompts",
        capability: "prompts",
        noun: "prompt",
    };
    /// Every list, in the order the collector sends them.
    pub const LISTS: [List; 4] = [TOOLS, RESOURCES, TEMPLATES, PROMPTS];
}

/// JSON-RPC method names used by the collector.
pub mod method {
    /// 2026-07-28 discovery.
    pub const DISCOVER: &str = "server/discover";
    /// Legacy handshake.
    pub const INITIALIZE: &str = "initialize";
    /// Legacy handshake completion.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// Tool inventory.
    pub const TOOLS_LIST: &str = "tools/list";
    /// A tool call (5.1.1d).
    pub const TOOLS_CALL: &str = "tools/call";
    /// A resource read (5.1.2c, 5.4.1a).
    pub const RESOURCES_READ: &str = "resources/read";
    /// A prompt get (5.1.3c, 5.1.3d).
    pub const PROMPTS_GET: &str = "prompts/get";
    /// Resource inventory.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// Resource template inventory.
    pub const RESOURCE_TEMPLATES_LIST: &str = "resources/templates/list";
    /// Prompt inventory.
    pub const PROMPTS_LIST: &str = "prompts/list";
}
