//! `--header`, `--proxy` (and the proxy environment) and `--client-cert`/`--client-key`
//! validated before any traffic (docs/collector.md, "Headers, proxy, client
//! certificate"): what the HTTP client applies ([`Net`]), what the bundle records
//! ([`Connectivity`]), and every secret among them registered with the run's redactor.

use std::path::Path;
use std::sync::Arc;

use mcp_probe_schema::bundle::{fingerprint, sha256};
use mcp_probe_schema::connectivity::{
    ClientCert, Connectivity, ExtraHeader, ProxySettings, ProxyUse,
};
use mcp_probe_schema::model::Header;

use super::flags::Flags;
use super::target::Target;
use crate::journal::SharedRedactor;
use crate::transport::net::{origin, Net};
use crate::transport::proxy::{Proxies, Proxy, ProxyError};

/// Header names `--header` may not set: the probe writes them itself, a leg varies them
/// (2.3 withholds and forges `Authorization`, 2.5 varies `Origin` and `Host`, the
/// session legs `Mcp-Session-Id`, the negotiation `MCP-Protocol-Version`, ...), or they
/// frame the message on the connection (a wrong one would desynchronise it).
pub const REFUSED_HEADERS: &[&str] = &[
    "host",
    "user-agent",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "proxy-connection",
    "proxy-authorization",
    "accept",
    "origin",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// Names whose values are credentials, and name parts that make a name sensitive.
const SENSITIVE_NAMES: &[&str] = &["authorization", "cookie", "proxy-authorization"];
const SENSITIVE_PARTS: &[&str] = &[
    "token", "secret", "key", "auth", "session", "password", "cookie",
];

/// Shortest sensitive value accepted: the redactor chases values of at least this many
/// bytes wherever they occur.
const MIN_SENSITIVE_LEN: usize = 6;

/// Whether a header name carries a credential (its value is fingerprinted everywhere).
pub fn is_sensitive(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SENSITIVE_NAMES.contains(&n.as_str()) || SENSITIVE_PARTS.iter().any(|p| n.contains(p))
}

/// A connectivity option that cannot be used (exit 2, before any traffic).
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A `--header` was refused.
    #[error("--header {name:?}: {reason}")]
    Header {
        /// The name (never the value).
        name: String,
        /// Why.
        reason: String,
    },
    /// A proxy URL was refused.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    /// `--client-cert` without `--client-key` or the reverse.
    #[error("{0} needs {1} as well (PEM files, both or neither)")]
    Pair(&'static str, &'static str),
    /// A certificate or key file could not be used.
    #[error("{flag} {path}: {reason}")]
    File {
        /// `--client-cert` or `--client-key`.
        flag: &'static str,
        /// The file as given.
        path: String,
        /// Why.
        reason: String,
    },
}

/// What the plan keeps: the client's options and the bundle's record.
#[derive(Debug, Default)]
pub struct Planned {
    /// For the HTTP client.
    pub net: Net,
    /// For `run.options.connectivity` (absent when no option was used).
    pub record: Option<Connectivity>,
}

/// Validate `--header`, the proxies and the client certificate, register their secrets
/// with `redactor`, and say what the client applies and the bundle records.
pub fn plan(
    flags: &Flags,
    targets: &[Target],
    redactor: &SharedRedactor,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Planned, NetError> {
    let (headers, header_records) = headers(&flags.header, targets, redactor)?;
    let proxies = Proxies::from_sources(flags.proxy.as_deref(), env)?;
    for p in [&proxies.https, &proxies.http].into_iter().flatten() {
        if let Some(u) = p.userinfo() {
            redactor.add_given_secret(u.as_bytes(), "proxy-credentials");
        }
        if let Some(pw) = p.password() {
            redactor.add_given_secret(pw.as_bytes(), "proxy-password");
        }
    }
    let (client_cert, cert_record) =
        client_cert(flags.client_cert.as_deref(), flags.client_key.as_deref())?;
    let mut origins: Vec<String> = targets
        .iter()
        .flat_map(|t| std::iter::once(&t.base_url).chain(t.candidates.iter()))
        .map(origin)
        .collect();
    origins.sort();
    origins.dedup();
    let use_of = |p: &Option<Proxy>| {
        p.as_ref().map(|p| ProxyUse {
            url: p.display(),
            source: p.source.clone(),
            credentials: p.userinfo().map(|u| fingerprint(u.as_bytes())),
        })
    };
    let proxy_record = proxies.any().then(|| ProxySettings {
        https: use_of(&proxies.https),
        http: use_of(&proxies.http),
        no_proxy: proxies.no_proxy.as_ref().map(|(v, _)| v.clone()),
        no_proxy_source: proxies.no_proxy.as_ref().map(|(_, s)| s.clone()),
    });
    let record = Connectivity {
        headers: header_records,
        proxy: proxy_record,
        client_cert: cert_record,
    };
    let used = !record.headers.is_empty() || record.proxy.is_some() || record.client_cert.is_some();
    Ok(Planned {
        net: Net {
            proxies,
            headers,
            origins,
            client_cert,
        },
        record: used.then_some(record),
    })
}

/// Parse and check every `--header NAME: VALUE`.
fn headers(
    given: &[String],
    targets: &[Target],
    redactor: &SharedRedactor,
) -> Result<(Vec<Header>, Vec<ExtraHeader>), NetError> {
    let mut wire = Vec::new();
    let mut records = Vec::new();
    for raw in given {
        let (name, value) = raw.split_once(':').ok_or_else(|| NetError::Header {
            name: raw.chars().take(40).collect::<String>(),
            reason: "not NAME: VALUE (no colon)".into(),
        })?;
        let bad = |reason: String| NetError::Header {
            name: name.chars().take(64).collect(),
            reason,
        };
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(bad(
                "the name is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~, no spaces)"
                    .into(),
            ));
        }
        let value = value.trim_matches([' ', '\t']);
        if let Some(b) = value
            .bytes()
            .find(|b| (*b < 0x20 && *b != b'\t') || *b == 0x7f)
        {
            return Err(bad(format!(
                "the value holds the control byte 0x{b:02x} (CR, LF, NUL and other controls are refused)"
            )));
        }
        let lower = name.to_ascii_lowercase();
        if REFUSED_HEADERS.contains(&lower.as_str()) {
            let why = if lower == "authorization" {
                "the probe controls Authorization (its legs withhold and forge it); give a bearer token with --token-env".to_string()
            } else if lower == "proxy-authorization" {
                "proxy credentials go in the proxy URL (http://user:pass@host:port)".to_string()
            } else {
                "the probe sets or varies this header itself".to_string()
            };
            return Err(bad(why));
        }
        if wire
            .iter()
            .any(|h: &Header| h.name.eq_ignore_ascii_case(name))
        {
            return Err(bad("given twice (join the values with a comma)".into()));
        }
        let sensitive = is_sensitive(name);
        if sensitive {
            if value.len() < MIN_SENSITIVE_LEN {
                return Err(bad(format!(
                    "a sensitive value must be at least {MIN_SENSITIVE_LEN} bytes so that it can be redacted wherever it appears"
                )));
            }
            if let Some(t) = targets
                .iter()
                .find(|t| t.base_url.scheme() == "http" && !t.is_loopback())
            {
                return Err(bad(format!(
                    "refusing to send a sensitive header to {} over plain http (only https or a loopback target)",
                    t.as_typed
                )));
            }
            redactor.add_given_secret(value.as_bytes(), &format!("header:{name}"));
        }
        wire.push(Header::new(name, value.as_bytes().to_vec()));
        records.push(ExtraHeader {
            name: name.to_string(),
            value: if sensitive {
                fingerprint(value.as_bytes())
            } else {
                value.to_string()
            },
            sensitive,
        });
    }
    Ok((wire, records))
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

type ClientCertPlan = (Option<Arc<rustls::sign::CertifiedKey>>, Option<ClientCert>);

/// Load `--client-cert` and `--client-key` (PEM; both or neither) and check that the
/// key belongs to the certificate.
fn client_cert(cert: Option<&Path>, key: Option<&Path>) -> Result<ClientCertPlan, NetError> {
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok((None, None)),
        (Some(_), None) => return Err(NetError::Pair("--client-cert", "--client-key")),
        (None, Some(_)) => return Err(NetError::Pair("--client-key", "--client-cert")),
        (Some(c), Some(k)) => (c, k),
    };
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let file = |flag: &'static str, p: &Path, reason: String| NetError::File {
        flag,
        path: p.display().to_string(),
        reason,
    };
    let cert_bytes = std::fs::read(cert)
        .map_err(|e| file("--client-cert", cert, format!("cannot read: {e}")))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| file("--client-cert", cert, format!("not PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(file(
            "--client-cert",
            cert,
            "no PEM certificate in the file".into(),
        ));
    }
    let key_bytes =
        std::fs::read(key).map_err(|e| file("--client-key", key, format!("cannot read: {e}")))?;
    // The key's own error text is not repeated: it could quote key material.
    let der = PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|_| {
        file(
            "--client-key",
            key,
            "no PEM private key (PKCS#8, PKCS#1 or SEC1) in the file".into(),
        )
    })?;
    let provider = rustls::crypto::ring::default_provider();
    let certified =
        rustls::sign::CertifiedKey::from_der(certs.clone(), der, &provider).map_err(|e| {
            let why = match e {
                rustls::Error::InconsistentKeys(_) => format!(
                    "the key does not belong to the certificate in {}",
                    cert.display()
                ),
                _ => "not a usable private key (RSA, ECDSA P-256/P-384 or Ed25519)".to_string(),
            };
            file("--client-key", key, why)
        })?;
    let leaf = certs[0].as_ref();
    let subject = x509_parser::parse_x509_certificate(leaf)
        .map(|(_, c)| c.subject().to_string())
        .map_err(|e| {
            file(
                "--client-cert",
                cert,
                format!("not an X.509 certificate: {e}"),
            )
        })?;
    let record = ClientCert {
        path: cert.display().to_string(),
        sha256: hex::encode(sha256(leaf)),
        subject,
        certificates: certs
            .iter()
            .map(|c| serde_bytes::ByteBuf::from(c.as_ref().to_vec()))
            .collect(),
    };
    Ok((Some(Arc::new(certified)), Some(record)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn t(s: &str) -> Target {
        Target::parse(s).unwrap()
    }

    fn hdrs(given: &[&str], target: &str) -> Result<(Vec<Header>, Vec<ExtraHeader>), NetError> {
        let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
        headers(&given, &[t(target)], &SharedRedactor::new())
    }

    #[test]
    fn headers_are_tokens_with_clean_values() {
        let (w, r) = hdrs(
            &["X-Gateway:  blue ", "X-Api-Key: k-123456789"],
            "https://a.example/mcp",
        )
        .unwrap();
        assert_eq!(w[0].name, "X-Gateway");
        assert_eq!(w[0].value, b"blue".to_vec());
        assert!(!r[0].sensitive);
        assert!(r[1].sensitive);
        assert_eq!(r[1].value, fingerprint(b"k-123456789"));
        for bad in [
            "X Bad: v",
            ": v",
            "NoColon",
            "X-A: a\rb",
            "X-A: a\nb",
            "X-A: a\0b",
        ] {
            assert!(hdrs(&[bad], "https://a.example/").is_err(), "{bad:?}");
        }
        for refused in [
            "Host: x",
            "authorization: Bearer abcdefgh",
            "Mcp-Session-Id: x",
            "ORIGIN: x",
            "Content-Type: x",
            "Accept: x",
        ] {
            let e = hdrs(&[refused], "https://a.example/")
                .unwrap_err()
                .to_string();
            assert!(!e.contains("abcdefgh"), "{e}");
            assert!(e.starts_with("--header"), "{e}");
        }
        assert!(hdrs(&["X-Token: short"], "https://a.example/").is_err());
        assert!(hdrs(&["X-A: 1", "x-a: 2"], "https://a.example/").is_err());
        assert!(hdrs(&["X-Api-Key: k-123456789"], "http://remote.example/mcp").is_err());
        assert!(hdrs(&["X-Api-Key: k-123456789"], "http://127.0.0.1:9/mcp").is_ok());
    }

    #[test]
    fn sensitive_names() {
        for n in [
            "Cookie",
            "X-Api-Key",
            "X-Session",
            "x-auth-user",
            "Proxy-Authorization",
            "X-Secret",
            "Password",
        ] {
            assert!(is_sensitive(n), "{n}");
        }
        for n in ["X-Gateway", "X-Tenant", "Accept-Language"] {
            assert!(!is_sensitive(n), "{n}");
        }
    }
}
