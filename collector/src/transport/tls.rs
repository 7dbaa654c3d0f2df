//! TLS for recorded connections.
//!
//! Every TLS connection is made with a *recording* verifier: it captures the chain the
//! server sent, verifies it separately against each trust store (the bundled public
//! roots, the OS store, and the operator's `--ca-file`), and lets the handshake finish
//! whatever the outcome, so the chain is evidence even when it is bad.
//! The connection is then used only when at least one store accepted the chain; the
//! caller turns a rejected chain into a `tls-certificate` transport error and sends
//! nothing over it.

use std::sync::{Arc, Mutex};

use mcp_probe_schema::connectivity::ClientAuth;
use mcp_probe_schema::model::{ErrorKind, TlsHandshake, TransportError, TrustCheck};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Trust stores loaded once per process.
#[derive(Clone)]
pub struct Trust {
    provider: Arc<CryptoProvider>,
    stores: Vec<(String, Arc<WebPkiServerVerifier>)>,
}

impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.stores.iter().map(|(n, _)| n.as_str()).collect();
        write!(f, "Trust({names:?})")
    }
}

/// A trust store could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The `--ca-file` held no usable certificate.
    #[error("--ca-file {path}: {reason}")]
    CaFile {
        /// Path as given.
        path: String,
        /// What was wrong.
        reason: String,
    },
}

impl Trust {
    /// Bundled public roots (webpki-roots), the OS store (when it has certificates),
    /// and `extra` (DER certificates from `--ca-file`).
    pub fn load(extra: Option<(&str, &[CertificateDer<'static>])>) -> Result<Trust, TrustError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut stores = Vec::new();
        let bundled = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        if let Some(v) = verifier(bundled, &provider) {
            stores.push(("bundled".to_string(), v));
        }
        let mut os = RootCertStore::empty();
        let native = rustls_native_certs::load_native_certs();
        let _ = os.add_parsable_certificates(native.certs);
        if !os.is_empty() {
            if let Some(v) = verifier(os, &provider) {
                stores.push(("os".to_string(), v));
            }
        }
        if let Some((path, certs)) = extra {
            let mut store = RootCertStore::empty();
            let (added, _) = store.add_parsable_certificates(certs.iter().cloned());
            if added == 0 {
                return Err(TrustError::CaFile {
                    path: path.into(),
                    reason: "no usable certificate".into(),
                });
            }
            match verifier(store, &provider) {
                Some(v) => stores.push(("extra".to_string(), v)),
                None => {
                    return Err(TrustError::CaFile {
                        path: path.into(),
                        reason: "not a usable trust anchor".into(),
                    })
                }
            }
        }
        Ok(Trust { provider, stores })
    }

    /// A client config for one connection, with its own recorder. `client` is the
    /// certificate and key offered when the server asks for one (`--client-cert`, to the
    /// targets only); the recorder notes whether the server asked.
    pub fn config(
        &self,
        client: Option<Arc<CertifiedKey>>,
    ) -> (Arc<rustls::ClientConfig>, Arc<Recorder>) {
        let rec = Arc::new(Recorder {
            provider: self.provider.clone(),
            stores: self.stores.clone(),
            seen: Mutex::new(None),
            client,
            asked: Mutex::new(None),
        });
        let mut cfg = rustls::ClientConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default versions")
            .dangerous()
            .with_custom_certificate_verifier(rec.clone())
            .with_client_cert_resolver(rec.clone());
        // HTTP/1.1 only: the recorder speaks HTTP/1.1 so the wire bytes are the evidence.
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        (Arc::new(cfg), rec)
    }
}

fn verifier(
    store: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Option<Arc<WebPkiServerVerifier>> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
        .build()
        .ok()
}

/// What the recorder saw during one handshake.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The chain, leaf first.
    pub chain: Vec<Vec<u8>>,
    /// One result per store.
    pub checks: Vec<TrustCheck>,
}

impl Seen {
    /// True when any store accepted the chain.
    pub fn trusted(&self) -> bool {
        self.checks.iter().any(|c| c.ok)
    }
}

/// Records the chain and each store's verdict; never fails the handshake itself. Also
/// answers a server's CertificateRequest (with the configured client certificate, or
/// none) and records that it was asked.
pub struct Recorder {
    provider: Arc<CryptoProvider>,
    stores: Vec<(String, Arc<WebPkiServerVerifier>)>,
    seen: Mutex<Option<Seen>>,
    client: Option<Arc<CertifiedKey>>,
    asked: Mutex<Option<ClientAuth>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}

impl Recorder {
    /// What was seen (after the handshake).
    pub fn seen(&self) -> Option<Seen> {
        self.seen.lock().ok().and_then(|s| s.clone())
    }

    /// Whether the server asked for a client certificate, and what was presented.
    pub fn client_auth(&self) -> Option<ClientAuth> {
        self.asked.lock().ok().and_then(|s| s.clone())
    }
}

impl ResolvesClientCert for Recorder {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        let sent = self
            .client
            .as_ref()
            .and_then(|k| k.cert.first())
            .map(|c| hex::encode(mcp_probe_schema::bundle::sha256(c.as_ref())));
        if let Ok(mut a) = self.asked.lock() {
            *a = Some(ClientAuth { sent });
        }
        self.client.clone()
    }

    fn has_certs(&self) -> bool {
        self.client.is_some()
    }
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checks = self
            .stores
            .iter()
            .map(|(name, v)| {
                match v.verify_server_cert(
                    end_entity,
                    intermediates,
                    server_name,
                    ocsp_response,
                    now,
                ) {
                    Ok(_) => TrustCheck {
                        store: name.clone(),
                        ok: true,
                        error: None,
                    },
                    Err(e) => TrustCheck {
                        store: name.clone(),
                        ok: false,
                        error: Some(e.to_string()),
                    },
                }
            })
            .collect();
        let mut chain = vec![end_entity.as_ref().to_vec()];
        chain.extend(intermediates.iter().map(|c| c.as_ref().to_vec()));
        if let Ok(mut s) = self.seen.lock() {
            *s = Some(Seen { chain, checks });
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Classify a TLS handshake failure.
pub fn classify(err: &std::io::Error) -> TransportError {
    if let Some(r) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        let kind = match r {
            rustls::Error::AlertReceived(_) => ErrorKind::TlsAlert,
            rustls::Error::InvalidCertificate(_) => ErrorKind::TlsCertificate,
            _ => ErrorKind::Tls,
        };
        return TransportError {
            kind,
            message: r.to_string(),
        };
    }
    super::error::io_error(err)
}

/// Build the TLS record of a finished handshake.
pub fn handshake_record(
    connection: u64,
    sni: Option<String>,
    peer: String,
    conn: &rustls::ClientConnection,
    seen: Option<Seen>,
) -> TlsHandshake {
    TlsHandshake {
        version: conn.protocol_version().map(|v| format!("{v:?}")),
        cipher_suite: conn
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite())),
        alpn: conn.alpn_protocol().map(|a| a.to_vec()),
        ..failed_record(connection, sni, peer, seen, None)
    }
}

/// The TLS record of a handshake that did not finish (`error` says why): the chain and
/// the stores' verdicts when the server got that far, no version, cipher or ALPN.
pub fn failed_record(
    connection: u64,
    sni: Option<String>,
    peer: String,
    seen: Option<Seen>,
    error: Option<TransportError>,
) -> TlsHandshake {
    let seen = seen.unwrap_or(Seen {
        chain: Vec::new(),
        checks: Vec::new(),
    });
    TlsHandshake {
        connection,
        sni,
        peer,
        version: None,
        cipher_suite: None,
        alpn: None,
        chain: seen
            .chain
            .into_iter()
            .map(serde_bytes::ByteBuf::from)
            .collect(),
        verification: seen.checks,
        error,
        via_proxy: None,
        client_auth: None,
    }
}
