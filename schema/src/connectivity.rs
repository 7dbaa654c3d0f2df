//! What a run's enterprise connectivity options were (`--header`, `--proxy` and the proxy
//! environment, `--client-cert`), as recorded in `run.options.connectivity`
//! (docs/bundle.md, "Connectivity"). Every field is public information: values of
//! sensitive headers and proxy credentials are recorded as fingerprints only, and the
//! client's private key is never recorded.

use serde::{Deserialize, Serialize};

/// The connectivity options in force for a run (absent: none was used).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connectivity {
    /// `--header` lines, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<ExtraHeader>,
    /// The proxies in use (absent: every connection was direct).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxySettings>,
    /// The client certificate offered to the targets (`--client-cert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<ClientCert>,
}

/// One `--header`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtraHeader {
    /// The name, as given.
    pub name: String,
    /// The value; for a sensitive name, `redacted:sha256:<hex>` of the value.
    pub value: String,
    /// Whether the name is sensitive (its value is fingerprinted everywhere).
    #[serde(default)]
    pub sensitive: bool,
}

/// The proxies of a run and where they came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProxySettings {
    /// The proxy for `https` URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https: Option<ProxyUse>,
    /// The proxy for plain `http` URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<ProxyUse>,
    /// The bypass list (`NO_PROXY`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
    /// Where the bypass list came from (`env:NO_PROXY`, `env:no_proxy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_proxy_source: Option<String>,
}

/// One proxy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxyUse {
    /// `http://host:port`, without credentials.
    pub url: String,
    /// `--proxy`, or `env:NAME` for the environment variable it came from.
    pub source: String,
    /// `redacted:sha256:<hex>` of `user:password` when the URL carried credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// The client certificate of `--client-cert` (public; the key is never recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientCert {
    /// The certificate file, as given.
    pub path: String,
    /// SHA-256 of the leaf certificate (DER), hex.
    pub sha256: String,
    /// The leaf's subject (RFC 4514 text).
    pub subject: String,
    /// The certificates of the file (DER), leaf first.
    pub certificates: Vec<serde_bytes::ByteBuf>,
}

/// What a server asked of the client's certificate during one handshake (recorded only
/// when the server sent a CertificateRequest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientAuth {
    /// SHA-256 (hex) of the certificate the collector presented; absent when it had
    /// none for this server and answered with an empty certificate list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
}
