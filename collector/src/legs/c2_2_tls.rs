//! The transport facts read by 2.2 (and 2.1): TLS 1.0 and 1.1 acceptance through
//! hand-built handshakes (`tls.v1_0`, `tls.v1_1`) and the plaintext port (`http.plaintext`),
//! sent before endpoint detection.

use mcp_probe_schema::model::{Header, Observation};
use mcp_probe_schema::vocab::{header, leg};

use crate::journal::lock;
use crate::mcp::Probe;

impl Probe<'_> {
    /// Transport facts before detection: TLS 1.0/1.1 acceptance and the plaintext port.
    /// `info_only` records them as skipped.
    pub async fn transport_facts(&mut self, first: &url::Url, info_only: bool) {
        let legs = [leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT];
        if info_only {
            self.skip(&legs, "not sent: --info run (connect and enumerate only)");
            return;
        }
        if first.scheme() != "https" {
            self.skip(
                &legs,
                "not sent: the target is plain http, so the endpoint itself is served without TLS",
            );
            return;
        }
        let host = first
            .host_str()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_string();
        let port = first.port_or_known_default().unwrap_or(443);
        let sni = matches!(first.host(), Some(url::Host::Domain(_))).then_some(host.as_str());
        // Through a proxy, the probes go through a CONNECT tunnel (the proxy resolves the
        // host); otherwise to the first address the host resolves to.
        let proxy = self.client.net().proxies.for_url(first).cloned();
        let addr = match &proxy {
            Some(_) => None,
            None => match crate::transport::resolve::lookup(&host, port)
                .await
                .map(|a| a.first().copied())
            {
                Ok(Some(a)) => Some(a),
                _ => {
                    self.skip(
                        &[leg::TLS_V1_0, leg::TLS_V1_1],
                        format!("not sent: {host} did not resolve"),
                    );
                    self.plaintext_probe(first).await;
                    return;
                }
            },
        };
        let target = crate::transport::http::authority(first);
        use crate::transport::legacy_tls::{probe, probe_via, LegacyVersion};
        for (l, v) in [
            (leg::TLS_V1_0, LegacyVersion::Tls1_0),
            (leg::TLS_V1_1, LegacyVersion::Tls1_1),
        ] {
            let started = chrono::Utc::now().timestamp_micros();
            let t0 = std::time::Instant::now();
            let timeout = self.client.timeout();
            let answer = match (&proxy, addr) {
                (Some(p), _) => probe_via(p, &target, sni, v, timeout).await,
                (None, Some(a)) => probe(a, sni, v, timeout).await,
                (None, None) => break,
            };
            lock(&self.journal).record(
                &[l],
                started,
                t0.elapsed().as_micros() as u64,
                Observation::LegacyTls(answer),
            );
        }
        self.plaintext_probe(first).await;
    }

    /// `http.plaintext`: `GET http://host:PORT/` (through the proxy when one applies).
    async fn plaintext_probe(&mut self, first: &url::Url) {
        let mut plain = first.clone();
        let _ = plain.set_scheme("http");
        let _ = plain.set_port(Some(self.plaintext_port));
        plain.set_path("/");
        plain.set_query(None);
        self.plain(
            leg::PLAINTEXT,
            "GET",
            plain,
            vec![Header::new(header::ACCEPT, "*/*")],
            false,
        )
        .await;
    }
}
