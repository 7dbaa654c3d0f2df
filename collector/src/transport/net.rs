//! The run's connectivity options as the HTTP client uses them (docs/collector.md,
//! "Headers, proxy, client certificate"): extra headers and the client certificate go
//! to the targets' origins only; the proxies apply to every connection.

use std::sync::Arc;

use mcp_probe_schema::model::Header;
use rustls::sign::CertifiedKey;

use super::proxy::Proxies;

/// What the client adds to its connections and requests.
#[derive(Clone, Default)]
pub struct Net {
    /// The proxies (every connection, `NO_PROXY` aside).
    pub proxies: Proxies,
    /// `--header`, sent on every request to a target's origin.
    pub headers: Vec<Header>,
    /// The targets' origins (`scheme://host:port`).
    pub origins: Vec<String>,
    /// `--client-cert` and `--client-key`, offered on TLS connections to a target's
    /// origin when the server asks.
    pub client_cert: Option<Arc<CertifiedKey>>,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Net({:?}, {} header(s), {} origin(s), client cert: {})",
            self.proxies,
            self.headers.len(),
            self.origins.len(),
            self.client_cert.is_some()
        )
    }
}

/// `scheme://host:port` of a URL (port defaulted by scheme).
pub fn origin(url: &url::Url) -> String {
    format!("{}://{}", url.scheme(), super::proxy::authority(url))
}

impl Net {
    /// Whether `url` is on one of the targets' origins (same scheme, host and port).
    pub fn is_target(&self, url: &url::Url) -> bool {
        !self.origins.is_empty() && self.origins.contains(&origin(url))
    }
}
