//! Sub-verdicts e and f of rule `tls-required`: the recorded leaf certificate re-validated
//! offline at the collection time (validity dates, the endpoint host against the
//! subjectAltName, a self-signed leaf chaining to no anchor), and the trust the chain
//! earns: the collection-time store results combined with an offline path-building check
//! against webpki-roots and the recorded `--ca-file` certificates.

use std::net::IpAddr;

use mcp_probe_schema::model::{CaFile, TlsHandshake};
use rustls_pki_types::{CertificateDer, TrustAnchor, UnixTime};
use serde::Serialize;
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;

use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{SubOutcome, SubVerdict};

// ---------------------------------------------------------------------------------------
// e: certificate

/// Why the certificate does not name the endpoint host ([`host_matches`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum WrongName {
    /// No subjectAltName extension (the subject, shown, is not used for matching).
    #[error(
        "wrong name: the certificate has no subjectAltName, so it names no host ({subject} is not \
         used for name matching by current clients)"
    )]
    NoSubjectAltName {
        /// The certificate's subject, escaped.
        subject: String,
    },
    /// The subjectAltName extension does not decode.
    #[error("wrong name: the subjectAltName does not parse")]
    Unparsable,
    /// No entry matches the host.
    #[error("wrong name: {want} matches none of the subjectAltName entries [{entries}]")]
    NoMatch {
        /// The host wanted (`host x` or `IP address x`).
        want: String,
        /// The entries, shown and comma-separated.
        entries: String,
    },
}

/// The host the certificate must name: the matching entry (`DNS:x`, `IP:x`), or why none.
fn host_matches(leaf: &X509Certificate<'_>, host: &url::Host<String>) -> Result<String, WrongName> {
    let sans = match leaf.subject_alternative_name() {
        Ok(Some(ext)) => ext.value.general_names.clone(),
        Ok(None) => {
            return Err(WrongName::NoSubjectAltName {
                subject: escape_line(&leaf.subject().to_string()),
            })
        }
        Err(_) => return Err(WrongName::Unparsable),
    };
    let want = match host {
        url::Host::Domain(d) => HostId::Dns(normalise_dns(d)),
        url::Host::Ipv4(a) => HostId::Ip(IpAddr::V4(*a)),
        url::Host::Ipv6(a) => HostId::Ip(IpAddr::V6(*a)),
    };
    for n in &sans {
        match (n, &want) {
            (GeneralName::DNSName(p), HostId::Dns(h)) if dns_matches(p, h) => {
                return Ok(crate::format_exact!("DNS:{}", crate::fmt::Line(p)))
            }
            (GeneralName::IPAddress(b), HostId::Ip(ip)) if ip_bytes(ip) == *b => {
                return Ok(crate::format_exact!("IP:{ip}"))
            }
            _ => {}
        }
    }
    Err(WrongName::NoMatch {
        want: want.to_string(),
        entries: san_list(&sans).join(", "),
    })
}

enum HostId {
    Dns(String),
    Ip(IpAddr),
}

impl std::fmt::Display for HostId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostId::Dns(d) => write!(f, "host {d}"),
            HostId::Ip(ip) => write!(f, "IP address {ip}"),
        }
    }
}

fn ip_bytes(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

fn normalise_dns(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// RFC 6125, section 6.4, as current clients apply it: exact (case-insensitive) match, or a
/// wildcard that is the whole left-most label and stands for exactly one non-empty
/// label, never over a single remaining label (`*.com`), never for IP hosts (handled by
/// the caller), never partial (`f*.example.com`).
pub(super) fn dns_matches(pattern: &str, host: &str) -> bool {
    let p = normalise_dns(pattern);
    let h = normalise_dns(host);
    if p.is_empty() || h.is_empty() {
        return false;
    }
    if !p.contains('*') {
        return p == h;
    }
    let Some(rest) = p.strip_prefix("*.") else {
        return false;
    };
    if rest.contains('*') || !rest.contains('.') {
        return false;
    }
    match h.split_once('.') {
        Some((first, hrest)) => !first.is_empty() && hrest == rest,
        None => false,
    }
}

fn san_list(sans: &[GeneralName<'_>]) -> Vec<String> {
    sans.iter()
        .map(|n| match n {
            GeneralName::DNSName(d) => crate::format_exact!("DNS:{}", crate::fmt::Line(d)),
            GeneralName::IPAddress(b) => match b.len() {
                4 => crate::format_exact!(
                    "IP:{}",
                    IpAddr::from(<[u8; 4]>::try_from(*b).unwrap_or_default())
                ),
                16 => crate::format_exact!(
                    "IP:{}",
                    IpAddr::from(<[u8; 16]>::try_from(*b).unwrap_or_default())
                ),
                _ => crate::format_exact!("IP:{}", crate::fmt::hex(b)),
            },
            other => escape_line(&crate::format_exact!("{other}")),
        })
        .collect()
}

fn is_self_signed(leaf: &X509Certificate<'_>) -> bool {
    leaf.subject().as_raw() == leaf.issuer().as_raw()
}

fn date(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| crate::format_exact!("(time {secs})"))
}

/// A name for humans: the CN, else the O, else the whole DN.
fn short_name(n: &x509_parser::x509::X509Name<'_>) -> String {
    let cn = n
        .iter_common_name()
        .find_map(|a| a.as_str().ok().map(str::to_string));
    let org = || {
        n.iter_organization()
            .find_map(|a| a.as_str().ok().map(str::to_string))
    };
    escape_line(&cn.or_else(org).unwrap_or_else(|| n.to_string()))
}

/// The leaf certificate in the details of `tls-required`.
#[derive(Debug, Serialize)]
pub(super) struct CertFacts {
    /// Subject DN.
    cert_subject: String,
    /// Issuer DN.
    cert_issuer: String,
    /// The issuer's CN, else O, else DN.
    observed_issuer: String,
    /// notBefore.
    cert_not_before: String,
    /// notAfter.
    cert_not_after: String,
    /// subjectAltName entries, absent without the extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_names: Option<Vec<String>>,
}

/// What the details say of `leaf`.
pub(super) fn cert_facts(leaf: &X509Certificate<'_>) -> CertFacts {
    let v = leaf.validity();
    CertFacts {
        cert_subject: escape_line(&leaf.subject().to_string()),
        cert_issuer: escape_line(&leaf.issuer().to_string()),
        observed_issuer: short_name(leaf.issuer()),
        cert_not_before: date(v.not_before.timestamp()),
        cert_not_after: date(v.not_after.timestamp()),
        cert_names: match leaf.subject_alternative_name() {
            Ok(Some(san)) => Some(san_list(&san.value.general_names)),
            _ => None,
        },
    }
}

pub(super) fn certificate_leg(
    leaf: &X509Certificate<'_>,
    host: Option<&url::Host<String>>,
    at_micros: i64,
    trust: &TrustState,
) -> SubVerdict {
    let at = at_micros.div_euclid(1_000_000);
    let v = leaf.validity();
    let (nb, na) = (v.not_before.timestamp(), v.not_after.timestamp());
    let mut problems = Vec::new();
    if nb > at {
        problems.push(crate::format_exact!(
            "not yet valid: notBefore {} is after the collection time {}",
            date(nb),
            date(at)
        ));
    }
    if na < at {
        problems.push(crate::format_exact!(
            "expired: notAfter {} is before the collection time {} ({} days earlier)",
            date(na),
            date(at),
            (at - na) / 86_400
        ));
    }
    let matched = match host {
        None => {
            problems.push("the target names no host to match".into());
            None
        }
        Some(h) => match host_matches(leaf, h) {
            Ok(m) => Some(m),
            Err(e) => {
                problems.push(e.to_string());
                None
            }
        },
    };
    if is_self_signed(leaf) && !trust.anchored() {
        problems.push(crate::format_exact!(
            "self-signed ({} issued itself) and chaining to no trust anchor",
            short_name(leaf.subject())
        ));
    }
    let who = crate::format_exact!(
        "{} issued by {}",
        short_name(leaf.subject()),
        short_name(leaf.issuer())
    );
    if problems.is_empty() {
        SubVerdict::new(
            "e",
            SubOutcome::Pass,
            crate::format_exact!(
                "{who}, valid {} to {} ({} days left at collection), {} matches {}",
                date(nb),
                date(na),
                (na - at) / 86_400,
                host.map(|h| h.to_string()).unwrap_or_default(),
                matched.unwrap_or_default()
            ),
        )
    } else {
        SubVerdict::new(
            "e",
            SubOutcome::Fail,
            crate::format_exact!("{who}: {}", problems.join("; ")),
        )
    }
}

// ---------------------------------------------------------------------------------------
// f: trust

/// Where the chain leads, offline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Offline {
    /// To a webpki-roots anchor.
    Public,
    /// To a certificate of the recorded `--ca-file`.
    Operator,
    /// Not verified: webpki's reason.
    Failed(String, FailKind),
    /// Nothing to verify (no chain, or the leaf does not parse for webpki).
    NotRun(String),
}

/// webpki's failures, grouped by what they mean for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FailKind {
    /// No path to any anchor.
    UnknownIssuer,
    /// A defect of the chain itself: dates, signature, CA/EE misuse, usage.
    Defect,
    /// Something this grader cannot judge (unsupported algorithm, malformed input).
    Undecided,
}

/// The operator's `--ca-file` as recorded in the run's options.
fn ca_file(ev: &Bundle) -> Option<&CaFile> {
    ev.payload.run.options.ca_file.as_ref()
}

/// The chain verified offline at the collection time: against webpki-roots first, then
/// against the recorded `--ca-file` certificates. Path building and signatures only; the
/// name is matched by sub-verdict e.
pub(super) fn offline_verify(ev: &Bundle, chain: &[&[u8]], at_micros: i64) -> Offline {
    let Some((leaf, rest)) = chain.split_first() else {
        return Offline::NotRun("no chain recorded".into());
    };
    let leaf_der = CertificateDer::from(*leaf);
    let ee = match webpki::EndEntityCert::try_from(&leaf_der) {
        Ok(ee) => ee,
        Err(e) => {
            return Offline::NotRun(crate::format_exact!(
                "the leaf is not usable for path building ({e:?})"
            ))
        }
    };
    let intermediates: Vec<CertificateDer<'_>> =
        rest.iter().map(|c| CertificateDer::from(*c)).collect();
    let time = UnixTime::since_unix_epoch(std::time::Duration::from_secs(
        at_micros.div_euclid(1_000_000).max(0) as u64,
    ));
    let verify = |anchors: &[TrustAnchor<'_>]| {
        ee.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            anchors,
            &intermediates,
            time,
            webpki::KeyUsage::server_auth(),
            None,
            None,
        )
        .map(|_| ())
    };
    let public = verify(webpki_roots::TLS_SERVER_ROOTS);
    if public.is_ok() {
        return Offline::Public;
    }
    let ca_ders: Vec<CertificateDer<'_>> = ca_file(ev)
        .map(|f| {
            f.certificates
                .iter()
                .map(|c| CertificateDer::from(c.as_ref()))
                .collect()
        })
        .unwrap_or_default();
    let anchors: Vec<TrustAnchor<'_>> = ca_ders
        .iter()
        .filter_map(|c| webpki::anchor_from_trusted_cert(c).ok())
        .collect();
    let err = if anchors.is_empty() {
        public.err()
    } else {
        match verify(&anchors) {
            Ok(()) => return Offline::Operator,
            // Prefer the operator's answer: it is the anchor the operator meant.
            Err(e) => Some(e),
        }
    };
    match err {
        None => Offline::NotRun("no verification ran".into()),
        Some(e) => {
            let kind = match e {
                webpki::Error::UnknownIssuer => FailKind::UnknownIssuer,
                webpki::Error::CertExpired { .. }
                | webpki::Error::CertNotValidYet { .. }
                | webpki::Error::InvalidSignatureForPublicKey
                | webpki::Error::CaUsedAsEndEntity
                | webpki::Error::EndEntityUsedAsCa
                | webpki::Error::RequiredEkuNotFoundContext(_)
                | webpki::Error::PathLenConstraintViolated
                | webpki::Error::NameConstraintViolation
                | webpki::Error::CertDistrusted
                | webpki::Error::InvalidCertValidity => FailKind::Defect,
                _ => FailKind::Undecided,
            };
            Offline::Failed(webpki_text(&e), kind)
        }
    }
}

fn webpki_text(e: &webpki::Error) -> String {
    match e {
        webpki::Error::UnknownIssuer => "no path to a trust anchor (unknown issuer)".into(),
        webpki::Error::CertExpired { not_after, .. } => crate::format_exact!(
            "a certificate of the chain expired at {}",
            date(not_after.as_secs() as i64)
        ),
        webpki::Error::CertNotValidYet { not_before, .. } => crate::format_exact!(
            "a certificate of the chain is valid only from {}",
            date(not_before.as_secs() as i64)
        ),
        webpki::Error::InvalidSignatureForPublicKey => {
            "a signature of the chain does not verify".into()
        }
        webpki::Error::CaUsedAsEndEntity => "the leaf is a CA certificate (CA:TRUE)".into(),
        webpki::Error::RequiredEkuNotFoundContext(_) => {
            "the leaf is not for server authentication (extendedKeyUsage)".into()
        }
        other => crate::format_exact!("{other:?}"),
    }
}

/// The collection-time trust, combined with the offline result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TrustState {
    /// Public roots (the collector's `bundled` store, or webpki-roots offline).
    Public,
    /// The operator's `--ca-file` (`extra`, or offline against its certificates).
    Operator,
    /// Only the collecting machine's OS store: possibly an inspecting proxy.
    OsOnly,
    /// No store and no offline anchor.
    Untrusted,
    /// No handshake record.
    Unseen,
}

impl TrustState {
    pub(super) fn of(tls: Option<&TlsHandshake>, offline: &Offline) -> TrustState {
        let Some(t) = tls else {
            return TrustState::Unseen;
        };
        let ok = |s: &str| t.verification.iter().any(|c| c.store == s && c.ok);
        if ok("bundled") || *offline == Offline::Public {
            TrustState::Public
        } else if ok("extra") || *offline == Offline::Operator {
            TrustState::Operator
        } else if ok("os") {
            TrustState::OsOnly
        } else {
            TrustState::Untrusted
        }
    }

    /// The chain leads to some anchor (so a self-signed leaf is a pinned one).
    fn anchored(&self) -> bool {
        matches!(
            self,
            TrustState::Public | TrustState::Operator | TrustState::OsOnly
        )
    }
}

/// The stores' verdicts at collection, one clause per distinct answer (`bundled, os:
/// UnknownIssuer; extra: ok`).
fn stores_text(t: &TlsHandshake) -> String {
    if t.verification.is_empty() {
        return "no store results recorded".into();
    }
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for c in &t.verification {
        let said = if c.ok {
            "ok".to_string()
        } else {
            escape_line(c.error.as_deref().unwrap_or("rejected"))
        };
        match groups.iter_mut().find(|(s, _)| *s == said) {
            Some((_, stores)) => stores.push(&c.store),
            None => groups.push((said, vec![&c.store])),
        }
    }
    groups
        .iter()
        .map(|(said, stores)| crate::format_exact!("{}: {said}", stores.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn trust_leg(
    ev: &Bundle,
    t: &TlsHandshake,
    leaf: Option<&X509Certificate<'_>>,
    offline: &Offline,
    trust: &TrustState,
) -> SubVerdict {
    let issuer = leaf
        .map(|l| short_name(l.issuer()))
        .unwrap_or_else(|| "an unreadable issuer".into());
    let stores = stores_text(t);
    let offline_note = match offline {
        Offline::Public => "offline: chains to webpki-roots".to_string(),
        Offline::Operator => "offline: chains to the recorded --ca-file".to_string(),
        Offline::Failed(why, _) => crate::format_exact!("offline: {why}"),
        Offline::NotRun(why) => crate::format_exact!("offline: not verified ({why})"),
    };
    match trust {
        TrustState::Public => SubVerdict::new(
            "f",
            SubOutcome::Pass,
            crate::format_exact!("chains to the public roots, issued by {issuer} (stores at collection: {stores}; {offline_note})"),
        ),
        TrustState::Operator => {
            let file = ca_file(ev)
                .map(|f| {
                    crate::format_exact!(
                        "{} (sha256 {})",
                        crate::fmt::Line(&f.path),
                        f.sha256.get(..16).unwrap_or(&f.sha256)
                    )
                })
                .unwrap_or_else(|| "the operator's --ca-file".into());
            SubVerdict::new(
                "f",
                SubOutcome::Pass,
                crate::format_exact!(
                    "not publicly trusted, but chains to the operator's --ca-file {file}, treated as the \
                     operator's private PKI; issued by {issuer} (stores at collection: {stores}; {offline_note})"
                ),
            )
        }
        TrustState::OsOnly => SubVerdict::new(
            "f",
            SubOutcome::Unknown,
            crate::format_exact!(
                "trusted only by the collecting machine's OS store, issued by {issuer}: not by the public \
                 roots and not by a --ca-file. This is what a TLS-inspecting proxy looks like, \
                 so the certificate and versions seen may be the proxy's; re-collect without interception, \
                 or pass the CA with --ca-file if it is the operator's own PKI (stores at collection: {stores})"
            ),
        ),
        TrustState::Untrusted | TrustState::Unseen => match offline {
            Offline::Failed(why, kind) => {
                let self_signed = leaf.is_some_and(is_self_signed);
                match kind {
                    FailKind::Defect => SubVerdict::new(
                        "f",
                        SubOutcome::Fail,
                        crate::format_exact!("not trusted: {why} (stores at collection: {stores})"),
                    ),
                    FailKind::UnknownIssuer if self_signed => SubVerdict::new(
                        "f",
                        SubOutcome::Fail,
                        crate::format_exact!(
                            "not trusted: self-signed by {issuer}, which no store and no --ca-file holds \
                             (stores at collection: {stores})"
                        ),
                    ),
                    FailKind::UnknownIssuer => SubVerdict::new(
                        "f",
                        SubOutcome::Unknown,
                        crate::format_exact!(
                            "issued by {issuer}, which is not an anchor of any store at collection time nor \
                             of a --ca-file; if it is the operator's private CA, re-collect with --ca-file \
                             (stores at collection: {stores})"
                        ),
                    ),
                    FailKind::Undecided => SubVerdict::new(
                        "f",
                        SubOutcome::Unknown,
                        crate::format_exact!("could not be validated offline: {why} (stores at collection: {stores})"),
                    ),
                }
            }
            other => SubVerdict::new(
                "f",
                SubOutcome::Error,
                crate::format_exact!(
                    "no store accepted the chain and it could not be checked offline ({other:?}; stores at \
                     collection: {stores})"
                ),
            ),
        },
    }
}
