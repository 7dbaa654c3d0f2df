//! PLACEHOLDER being replaced by the TLS engineer: the API the collector calls.

use mcp_probe_schema::model::LegacyTlsProbe;

/// The version offered.
#[derive(Debug, Clone, Copy)]
pub enum LegacyVersion {
    /// TLS 1.0.
    Tls1_0,
    /// TLS 1.1.
    Tls1_1,
}

/// Probe one version.
pub async fn probe(
    _addr: std::net::SocketAddr,
    _sni: Option<&str>,
    version: LegacyVersion,
    _timeout: std::time::Duration,
) -> LegacyTlsProbe {
    LegacyTlsProbe {
        offered: format!("{version:?}"),
        client_hello: Vec::new(),
        server_bytes: Vec::new(),
        error: None,
    }
}
