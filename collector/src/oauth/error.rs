//! Why the login gave no token ([`LoginError`]), and why an authorization response was
//! refused ([`CallbackError`]).

use std::path::PathBuf;
use std::time::Duration;

use mcp_probe_schema::model::TransportError;
use mcp_probe_schema::vocab::LegId;

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
    #[error("authorization server {issuer} has no registration_endpoint (RFC 7591) and no client is registered ({})", if *.cimd { "it supports client ID metadata documents: give yours with --client-metadata-url, or a pre-registered client with --client-id" } else { "it does not support client ID metadata documents either: give a pre-registered client with --client-id" })]
    NoRegistration {
        /// The issuer.
        issuer: String,
        /// The server advertises `client_id_metadata_document_supported`.
        cimd: bool,
    },
    /// The authorization server refused the dynamic client registration (Okta without an
    /// administrator token, Keycloak's Trusted Hosts policy, a loopback redirect URI it
    /// does not accept).
    #[error("the authorization server {issuer} refused dynamic client registration (HTTP {status}{}{}{}); give a pre-registered client with --client-id{}", .error.as_deref().map(|e| format!(" {e}")).unwrap_or_default(), .description.as_deref().map(|d| format!(": {d}")).unwrap_or_default(), if .error.as_deref() == Some("invalid_redirect_uri") { "; it does not accept the loopback redirect URI http://127.0.0.1:PORT/callback (RFC 8252 §7.3)" } else { "" }, if *.cimd { ", or your client ID metadata document with --client-metadata-url" } else { "" })]
    RegistrationRefused {
        /// The issuer.
        issuer: String,
        /// HTTP status.
        status: u16,
        /// OAuth `error` (or the provider's own error code).
        error: Option<String>,
        /// OAuth `error_description` (or the provider's own summary).
        description: Option<String>,
        /// The server advertises `client_id_metadata_document_supported`.
        cimd: bool,
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
    #[error("no authorization response on the loopback redirect within {} s{}: the login waited for the browser to come back from the authorization server; when that server shows an error page instead of redirecting (a client id it no longer knows: --reauth registers anew; a client not allowed the authorization code grant), it never comes", .waited.as_secs(), if *.ignored > 0 { format!(" ({} callback(s) with a wrong state were ignored)", .ignored) } else { String::new() })]
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
    /// The `--client-key-file` key cannot sign what the server accepts.
    #[error("--client-key-file: {0}")]
    ClientKey(String),
    /// The OS random source failed.
    #[error("OS random source failed: {0}")]
    Random(String),
    /// RFC 9449 DPoP: demanded and not possible (the line says why), or a proof could
    /// not be made.
    #[error("{0}")]
    Dpop(String),
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
