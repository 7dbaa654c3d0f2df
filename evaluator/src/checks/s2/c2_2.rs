//! Check 2.2: TLS required, plaintext disallowed (spec/checks.md §11.2), graded from the
//! bundle alone, with the corrections of spec/checks.md §17 items 1 and 2.
//!
//! Legs:
//!
//! * **2.2a plaintext**: the `http.plaintext` GET (no redirect followed). A refused or
//!   reset port passes, a 2xx fails ("plaintext served"), 426 passes, a redirect passes
//!   only to an `https://` location, anything else passes "(review)". A plain-http target
//!   fails here outright: MCP itself is served in clear.
//! * **2.2b / 2.2c TLS 1.0 / 1.1**: the hand-written ClientHello (`tls.v1_0`, `tls.v1_1`)
//!   and the server's first bytes, read with [`tlswire::parse_server`]. A ServerHello at
//!   the offered version fails; an alert or a clean close is a refusal; a network error
//!   (connect, timeout, reset) decides nothing (ERROR for that leg, §17 item 2), and so
//!   does an answer that is not TLS.
//! * **2.2d negotiated version**: the `tls.modern` record of the first connection.
//!   TLS 1.2/1.3 passes; a handshake that died on a server alert fails (attributable);
//!   any other handshake failure is ERROR.
//! * **2.2e certificate**: the recorded leaf re-validated offline *at the collection time*
//!   (`run.started_at`), whether or not the collector could use the connection (§17 item
//!   1: the original could never fail on an invalid certificate): validity dates, the
//!   endpoint host against the subjectAltName (DNS with the one-label wildcard rule; IP
//!   SANs for IP hosts; no CN fallback), and a self-signed leaf that chains to no anchor.
//! * **2.2f trust**: the collection-time store results (`bundled` public roots, `os`,
//!   `extra` = the operator's `--ca-file`) plus an offline path-building check with
//!   rustls-webpki against webpki-roots and the recorded `--ca-file` certificates. Public
//!   roots or the operator's file pass (the latter is said to be the operator's private
//!   PKI); trusted by the OS store alone means an inspecting proxy may have answered
//!   (spec §3.2): then every leg becomes UNKNOWN, because the certificate, the versions
//!   and the plaintext answer may all be the proxy's.
//!
//! Aggregation is worst-first (fail > error > unknown > pass).

use std::net::IpAddr;

use mcp_probe_schema::model::{
    ErrorKind, HttpOutcome, LegacyTlsProbe, Observation, Record, TlsHandshake,
};
use mcp_probe_schema::tlswire::{self, ServerAnswer};
use mcp_probe_schema::vocab::{header, leg, LegId};
use rustls_pki_types::{CertificateDer, TrustAnchor, UnixTime};
use serde_json::{json, Value};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;

use crate::check::{Check, Context, Legs, Needs};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::line;
use crate::verdict::{Leg, LegOutcome, Outcome};
use mcp_probe_schema::model::Era;

/// 2.2: TLS required, plaintext disallowed.
#[derive(Debug)]
pub struct Check2_2;
/// The 2.2 check.
pub static C2_2: Check2_2 = Check2_2;

/// What a black-box probe of one host and port cannot see.
pub const REDUCTION_2_2: &str = "Only the endpoint's own host and port and one plaintext port \
     (--plaintext-port) were probed: other ports, hosts and load-balancer members are not seen. \
     HSTS is not read. Cipher policy is seen only as far as the eight TLS 1.0/1.1 suites offered \
     and the suite the collector's own TLS 1.2/1.3 stack negotiated; SSLv3 and weak TLS 1.2 suites \
     are not offered. Revocation (OCSP, CRL) and certificate transparency are not checked. The \
     certificate is re-validated offline at the collection time from the recorded chain.";

impl Check for Check2_2 {
    /// The transport facts are recorded (sent or skipped) before endpoint detection on
    /// every run. `tls.modern` is optional: it is recorded only for connections that
    /// reached a TLS handshake, so a plain-http target or an unreachable one has none,
    /// and its absence is graded here (2.2d-f ERROR naming why).
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT],
            &[leg::TLS_MODERN],
        )
    }

    /// A bad certificate stops the collector before any MCP session (it never sends
    /// over an untrusted connection), and that is exactly what this check must grade.
    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let base = match url::Url::parse(&ev.payload.target.base_url) {
            Ok(u) => u,
            Err(e) => {
                return Outcome::single(
                    crate::verdict::Verdict::Error,
                    format!(
                        "the target's base URL {} does not parse ({e})",
                        line(&ev.payload.target.base_url)
                    ),
                    REDUCTION_2_2,
                )
            }
        };
        match base.scheme() {
            "http" => plaintext_target(ev, &base),
            "https" => tls_target(ev, &base),
            other => Outcome::single(
                crate::verdict::Verdict::Error,
                format!(
                    "the target's scheme {} is neither http nor https",
                    line(other)
                ),
                REDUCTION_2_2,
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Plain-http target

/// A plain-http target: MCP (or at least HTTP) is served in clear; the TLS legs were not
/// sent (the collector records them as skipped) and are listed as dropped.
fn plaintext_target(ev: &Evidence, base: &url::Url) -> Outcome {
    let served = ev.records.iter().find_map(|r| match &r.observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Response(resp) if same_origin(&x.request.url, base) => {
                Some((r.seq, resp.status, x.request.url.clone()))
            }
            _ => None,
        },
        _ => None,
    });
    let a = match (&ev.payload.target.endpoint, &served) {
        (Some(endpoint), _) => Leg::new(
            "2.2a",
            LegOutcome::Fail,
            format!(
                "the MCP endpoint {} is plain http: MCP is served in clear",
                line(endpoint)
            ),
        ),
        (None, Some((_, status, url))) => Leg::new(
            "2.2a",
            LegOutcome::Fail,
            format!(
                "the target is plain http and {} answered HTTP {status} in clear (no MCP endpoint was \
                 detected, but plaintext HTTP is served)",
                line(url)
            ),
        ),
        (None, None) => Leg::new(
            "2.2a",
            LegOutcome::Error,
            format!(
                "the target {} is plain http but nothing answered, so no plaintext service was observed",
                line(base.as_str())
            ),
        ),
    };
    let reason = |l: LegId| {
        ev.skipped(l)
            .map(skip_note)
            .unwrap_or_else(|| "not probed: the target is plain http".into())
    };
    let legs = vec![
        a,
        Leg::new("2.2b", LegOutcome::Dropped, reason(leg::TLS_V1_0)),
        Leg::new("2.2c", LegOutcome::Dropped, reason(leg::TLS_V1_1)),
        Leg::new(
            "2.2d",
            LegOutcome::Dropped,
            "not probed: the target is plain http",
        ),
        Leg::new(
            "2.2e",
            LegOutcome::Dropped,
            "not probed: the target is plain http",
        ),
        Leg::new(
            "2.2f",
            LegOutcome::Dropped,
            "not probed: the target is plain http",
        ),
    ];
    let mut out = Outcome::from_legs(legs, REDUCTION_2_2)
        .with_records(served.as_ref().map(|s| s.0))
        .with_detail("scheme", "http")
        .with_detail("plaintext", "endpoint served in clear")
        .with_detail("tls_intercepted", false);
    if let Some((_, status, _)) = served {
        out = out.with_detail("plaintext_status", status);
    }
    out
}

fn same_origin(url: &str, base: &url::Url) -> bool {
    url::Url::parse(url).is_ok_and(|u| {
        u.scheme() == base.scheme()
            && u.host() == base.host()
            && u.port_or_known_default() == base.port_or_known_default()
    })
}

// ---------------------------------------------------------------------------------------
// TLS target

fn tls_target(ev: &Evidence, base: &url::Url) -> Outcome {
    let at = ev.payload.run.started_at;
    let mut records = Vec::new();
    let mut details = serde_json::Map::new();
    details.insert("scheme".into(), "https".into());

    let (a, a_seq) = plaintext_leg(ev, &mut details);
    records.extend(a_seq);
    let (b, b_seq, b_acc) = legacy_leg(ev, "2.2b", leg::TLS_V1_0, tlswire::TLS1_0);
    let (c, c_seq, c_acc) = legacy_leg(ev, "2.2c", leg::TLS_V1_1, tlswire::TLS1_1);
    records.extend(b_seq);
    records.extend(c_seq);
    let accepted: Vec<&str> = [(b_acc, "TLSv1_0"), (c_acc, "TLSv1_1")]
        .into_iter()
        .filter_map(|(a, v)| a.then_some(v))
        .collect();
    details.insert("weak_tls_accepted".into(), json!(accepted));

    let tls = first_tls(ev);
    if let Some((r, _)) = tls {
        records.push(r.seq);
    }
    let tls = tls.map(|(_, t)| t);
    let d = version_leg(ev, tls, &mut details);
    let cert = tls.and_then(|t| t.chain.first()).map(|der| der.as_ref());
    let chain_ders: Vec<&[u8]> = tls
        .map(|t| t.chain.iter().map(|c| c.as_ref()).collect())
        .unwrap_or_default();
    let parsed = cert.map(|der| X509Certificate::from_der(der).map(|(_, c)| c));
    let offline = offline_verify(ev, &chain_ders, at);
    let trust = TrustState::of(tls, &offline);
    let host = base.host().map(|h| h.to_owned());
    let (e, f) = match (tls, parsed) {
        (None, _) => {
            let why = "no TLS handshake was recorded, so no certificate was seen";
            (
                Leg::new("2.2e", LegOutcome::Error, why),
                Leg::new("2.2f", LegOutcome::Error, why),
            )
        }
        (Some(t), None) => {
            let why = match &t.error {
                Some(err) => format!(
                    "no certificate was recorded: the handshake failed before it ({})",
                    line(&err.to_string())
                ),
                None => "no certificate was recorded".to_string(),
            };
            (
                Leg::new("2.2e", LegOutcome::Error, why.clone()),
                Leg::new("2.2f", LegOutcome::Error, why),
            )
        }
        (Some(t), Some(Err(err))) => {
            let why = format!("the leaf certificate does not parse as X.509 ({err})");
            (
                Leg::new("2.2e", LegOutcome::Error, why.clone()),
                trust_leg(ev, t, None, &offline, &trust),
            )
        }
        (Some(t), Some(Ok(leaf))) => {
            cert_details(&leaf, &mut details);
            (
                certificate_leg(&leaf, host.as_ref(), at, &trust),
                trust_leg(ev, t, Some(&leaf), &offline, &trust),
            )
        }
    };
    details.insert(
        "trusted_by".into(),
        json!(tls
            .map(|t| t
                .verification
                .iter()
                .filter(|c| c.ok)
                .map(|c| c.store.clone())
                .collect::<Vec<_>>())
            .unwrap_or_default()),
    );
    let intercepted = matches!(trust, TrustState::OsOnly);
    details.insert("tls_intercepted".into(), intercepted.into());

    let mut a = a;
    if tls.is_none() && a.outcome == LegOutcome::Pass {
        // spec rule 2: a refused plaintext port on a dead deployment proves little.
        a.note
            .push_str(" (proves little: the TLS port gave no handshake either)");
    }
    let mut legs = vec![a, b, c, d, e, f];
    if intercepted {
        // spec §3.2 rule 3: what was seen may be the proxy's, not the server's.
        for l in &mut legs {
            if matches!(l.outcome, LegOutcome::Pass | LegOutcome::Fail) {
                let was = if l.outcome == LegOutcome::Pass {
                    "pass"
                } else {
                    "fail"
                };
                l.outcome = LegOutcome::Unknown;
                l.note = format!(
                    "{} (would be {was}, but read through a suspected TLS-inspecting proxy)",
                    l.note
                );
            }
        }
    }
    let mut out = Outcome::from_legs(legs, REDUCTION_2_2).with_records(records);
    out.details.extend(details);
    out
}

/// The first `tls.modern` handshake record (the first connection to the endpoint).
fn first_tls(ev: &Evidence) -> Option<(&Record, &TlsHandshake)> {
    ev.records_for(leg::TLS_MODERN)
        .find_map(|r| match &r.observation {
            Observation::Tls(t) => Some((r, t)),
            _ => None,
        })
}

// ---------------------------------------------------------------------------------------
// 2.2a plaintext

fn plaintext_leg(
    ev: &Evidence,
    details: &mut serde_json::Map<String, Value>,
) -> (Leg, Option<u64>) {
    let Some(x) = ev.exchanges(leg::PLAINTEXT).next() else {
        let why = ev
            .skipped(leg::PLAINTEXT)
            .map(skip_note)
            .unwrap_or_else(|| "no plaintext request was recorded".into());
        details.insert("plaintext".into(), Value::Null);
        return (Leg::new("2.2a", LegOutcome::Unknown, why), None);
    };
    let url = line(&x.http.request.url);
    details.insert("plaintext_url".into(), url.clone().into());
    let (outcome, note) = plaintext_decision(&x, &url, details);
    (Leg::new("2.2a", outcome, note), Some(x.seq()))
}

fn plaintext_decision(
    x: &Exchange<'_>,
    url: &str,
    details: &mut serde_json::Map<String, Value>,
) -> (LegOutcome, String) {
    let resp = match &x.http.outcome {
        HttpOutcome::Response(r) => r,
        HttpOutcome::Error(e) => {
            details.insert("plaintext".into(), e.kind.as_str().into());
            let msg = line(&e.message);
            return match e.kind {
                ErrorKind::Connect => (
                    LegOutcome::Pass,
                    format!("{url}: port refused ({msg}); no plaintext service"),
                ),
                ErrorKind::Reset => (
                    LegOutcome::Pass,
                    format!("{url}: port refused (connection reset before any response: {msg})"),
                ),
                ErrorKind::Timeout => (
                    LegOutcome::Pass,
                    format!(
                        "{url}: no answer within the timeout ({msg}): filtered or silently dropped, so no \
                         plaintext service was observed, though a slow one is not excluded"
                    ),
                ),
                ErrorKind::Protocol => (
                    LegOutcome::Pass,
                    format!("{url}: the port answered something that is not HTTP ({msg}) (review)"),
                ),
                _ => (
                    LegOutcome::Error,
                    format!("{url}: {} error ({msg}): decides nothing", e.kind.as_str()),
                ),
            };
        }
    };
    let status = resp.status;
    details.insert("plaintext".into(), status.into());
    match status {
        200..=299 => (
            LegOutcome::Fail,
            format!("{url}: HTTP {status}: plaintext served"),
        ),
        426 => (
            LegOutcome::Pass,
            format!("{url}: HTTP 426 Upgrade Required"),
        ),
        301 | 302 | 303 | 307 | 308 => {
            let loc = x.header(header::LOCATION).map(|l| l.trim().to_string());
            details.insert(
                "plaintext_redirect_target".into(),
                loc.clone().map_or(Value::Null, |l| line(&l).into()),
            );
            match loc.filter(|l| !l.is_empty()) {
                None => (
                    LegOutcome::Fail,
                    format!("{url}: HTTP {status} redirect with an empty target (no Location)"),
                ),
                Some(l) if l.len() >= 8 && l[..8].eq_ignore_ascii_case("https://") => (
                    LegOutcome::Pass,
                    format!("{url}: HTTP {status} redirect to {}", line(&l)),
                ),
                Some(l) => (
                    LegOutcome::Fail,
                    format!(
                        "{url}: HTTP {status} redirect to {}, which is not an https:// location (the \
                         plaintext request is served onward in clear)",
                        line(&l)
                    ),
                ),
            }
        }
        _ => (
            LegOutcome::Pass,
            format!("{url}: HTTP {status}: neither served nor redirected to https (review)"),
        ),
    }
}

// ---------------------------------------------------------------------------------------
// 2.2b / 2.2c legacy versions

/// One legacy-version leg; also whether the version was accepted.
fn legacy_leg(ev: &Evidence, id: &str, leg_id: LegId, version: u16) -> (Leg, Option<u64>, bool) {
    let name = tlswire::version_text(version);
    let Some((r, p)) = ev.records_for(leg_id).find_map(|r| match &r.observation {
        Observation::LegacyTls(p) => Some((r, p)),
        _ => None,
    }) else {
        let why = ev
            .skipped(leg_id)
            .map(|r| format!("{name} {}", skip_note(r)))
            .unwrap_or_else(|| format!("no {name} probe was recorded"));
        return (Leg::new(id, LegOutcome::Unknown, why), None, false);
    };
    let (outcome, note, accepted) = legacy_decision(p, version);
    (Leg::new(id, outcome, note), Some(r.seq), accepted)
}

/// Grade one recorded legacy probe that was meant to offer `version`.
pub fn legacy_decision(p: &LegacyTlsProbe, version: u16) -> (LegOutcome, String, bool) {
    let name = tlswire::version_text(version);
    // The recorded offer must be the one the leg claims: a probe that offered something
    // else answers a different question.
    match tlswire::parse_client_hello(&p.client_hello) {
        Some(h) if h.client_version == version && p.offered == name => {}
        Some(h) => {
            return (
                LegOutcome::Error,
                format!(
                    "the recorded probe offered {} (labelled {}), not {name}: it answers another question",
                    tlswire::version_text(h.client_version),
                    line(&p.offered)
                ),
                false,
            )
        }
        None => {
            return (
                LegOutcome::Error,
                format!(
                    "the recorded {} ClientHello does not parse, so what was offered is not shown",
                    line(&p.offered)
                ),
                false,
            )
        }
    }
    let answer = tlswire::parse_server(&p.server_bytes);
    let offered = format!("offered only {name}");
    // A network failure before a complete answer decides nothing (spec §17 item 2): a
    // reset or a timeout is not a refusal.
    if let Some(e) = &p.error {
        if !answer.is_complete() || answer == ServerAnswer::Closed {
            let so_far = if p.server_bytes.is_empty() {
                String::new()
            } else {
                format!(" after {} answer bytes", p.server_bytes.len())
            };
            return (
                LegOutcome::Error,
                format!(
                    "{offered}: network error ({}){so_far}: decides nothing about {name}",
                    line(&e.to_string())
                ),
                false,
            );
        }
    }
    match answer {
        ServerAnswer::ServerHello { cipher_suite, .. } => {
            let chosen = answer.negotiated().unwrap_or(version);
            if chosen == version {
                (
                    LegOutcome::Fail,
                    format!(
                        "{offered}: accepted (ServerHello {name}, suite {})",
                        tlswire::suite_text(cipher_suite)
                    ),
                    true,
                )
            } else if chosen < version {
                (
                    LegOutcome::Fail,
                    format!(
                        "{offered}: the server chose the even older {} (suite {})",
                        tlswire::version_text(chosen),
                        tlswire::suite_text(cipher_suite)
                    ),
                    true,
                )
            } else {
                (
                    LegOutcome::Pass,
                    format!(
                        "{offered}: refused: the server answered {} (a non-conformant ServerHello, \
                         but {name} is not negotiated)",
                        tlswire::version_text(chosen)
                    ),
                    false,
                )
            }
        }
        ServerAnswer::Alert { .. } => (
            LegOutcome::Pass,
            format!("{offered}: refused with {answer}"),
            false,
        ),
        ServerAnswer::Closed => (
            LegOutcome::Pass,
            format!("{offered}: refused (connection closed without an answer)"),
            false,
        ),
        ServerAnswer::NotTls { .. } => (
            LegOutcome::Error,
            format!("{offered}: {answer}; the port does not speak TLS, so nothing is decided"),
            false,
        ),
        other => (
            LegOutcome::Error,
            format!("{offered}: {other}: not an answer about TLS versions"),
            false,
        ),
    }
}

// ---------------------------------------------------------------------------------------
// 2.2d negotiated version

fn version_leg(
    ev: &Evidence,
    tls: Option<&TlsHandshake>,
    details: &mut serde_json::Map<String, Value>,
) -> Leg {
    let Some(t) = tls else {
        // No handshake record: the connection failed before TLS, or the leg was skipped.
        let why = ev
            .skipped(leg::TLS_MODERN)
            .map(skip_note)
            .or_else(|| {
                ev.exchanges(leg::ENDPOINT_DETECT)
                    .find_map(|x| match &x.http.outcome {
                        HttpOutcome::Error(e) => Some(format!(
                            "no TLS handshake was recorded: the connection to {} failed ({})",
                            line(&x.http.request.url),
                            line(&e.to_string())
                        )),
                        _ => None,
                    })
            })
            .unwrap_or_else(|| "no TLS handshake was recorded".into());
        details.insert("tls_version".into(), Value::Null);
        return Leg::new("2.2d", LegOutcome::Error, why);
    };
    details.insert(
        "tls_version".into(),
        t.version.clone().map_or(Value::Null, Value::from),
    );
    details.insert(
        "tls_cipher".into(),
        t.cipher_suite.clone().map_or(Value::Null, Value::from),
    );
    match (&t.version, &t.error) {
        (Some(v), _) => {
            let suite = t
                .cipher_suite
                .as_deref()
                .map(|s| format!(" with {}", line(s)))
                .unwrap_or_default();
            match v.as_str() {
                "TLSv1_2" | "TLSv1_3" => Leg::new(
                    "2.2d",
                    LegOutcome::Pass,
                    format!("negotiated {v}{suite}"),
                ),
                "TLSv1_0" | "TLSv1_1" | "SSLv3" | "SSLv2" => Leg::new(
                    "2.2d",
                    LegOutcome::Fail,
                    format!("negotiated the obsolete {v}{suite}"),
                ),
                other => Leg::new(
                    "2.2d",
                    LegOutcome::Unknown,
                    format!("negotiated a version this grader does not know ({}){suite}", line(other)),
                ),
            }
        }
        (None, Some(e)) if e.kind == ErrorKind::TlsAlert => Leg::new(
            "2.2d",
            LegOutcome::Fail,
            format!(
                "handshake failed: the server ended a TLS 1.2/1.3 handshake with an alert ({}), so no \
                 TLS 1.2+ connection was possible",
                line(&e.message)
            ),
        ),
        (None, Some(e)) => Leg::new(
            "2.2d",
            LegOutcome::Error,
            format!(
                "the TLS 1.2/1.3 handshake failed without an attributable alert ({}): decides nothing",
                line(&e.to_string())
            ),
        ),
        (None, None) => Leg::new(
            "2.2d",
            LegOutcome::Error,
            "the TLS record names no negotiated version",
        ),
    }
}

// ---------------------------------------------------------------------------------------
// 2.2e certificate

/// Why the certificate does not name the endpoint host ([`host_matches`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum WrongName {
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
                subject: line(&leaf.subject().to_string()),
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
                return Ok(format!("DNS:{}", line(p)))
            }
            (GeneralName::IPAddress(b), HostId::Ip(ip)) if ip_bytes(ip) == *b => {
                return Ok(format!("IP:{ip}"))
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

/// RFC 6125 §6.4 as current clients apply it: exact (case-insensitive) match, or a
/// wildcard that is the whole left-most label and stands for exactly one non-empty
/// label, never over a single remaining label (`*.com`), never for IP hosts (handled by
/// the caller), never partial (`f*.example.com`).
pub fn dns_matches(pattern: &str, host: &str) -> bool {
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
            GeneralName::DNSName(d) => format!("DNS:{}", line(d)),
            GeneralName::IPAddress(b) => match b.len() {
                4 => format!(
                    "IP:{}",
                    IpAddr::from(<[u8; 4]>::try_from(*b).unwrap_or_default())
                ),
                16 => format!(
                    "IP:{}",
                    IpAddr::from(<[u8; 16]>::try_from(*b).unwrap_or_default())
                ),
                _ => format!("IP:{}", crate::fmt::hex(b)),
            },
            other => line(&format!("{other}")),
        })
        .collect()
}

fn is_self_signed(leaf: &X509Certificate<'_>) -> bool {
    leaf.subject().as_raw() == leaf.issuer().as_raw()
}

fn date(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| format!("(time {secs})"))
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
    line(&cn.or_else(org).unwrap_or_else(|| n.to_string()))
}

fn cert_details(leaf: &X509Certificate<'_>, details: &mut serde_json::Map<String, Value>) {
    let v = leaf.validity();
    details.insert(
        "cert_subject".into(),
        line(&leaf.subject().to_string()).into(),
    );
    details.insert(
        "cert_issuer".into(),
        line(&leaf.issuer().to_string()).into(),
    );
    details.insert("observed_issuer".into(), short_name(leaf.issuer()).into());
    details.insert(
        "cert_not_before".into(),
        date(v.not_before.timestamp()).into(),
    );
    details.insert(
        "cert_not_after".into(),
        date(v.not_after.timestamp()).into(),
    );
    if let Ok(Some(san)) = leaf.subject_alternative_name() {
        details.insert(
            "cert_names".into(),
            json!(san_list(&san.value.general_names)),
        );
    }
}

fn certificate_leg(
    leaf: &X509Certificate<'_>,
    host: Option<&url::Host<String>>,
    at_micros: i64,
    trust: &TrustState,
) -> Leg {
    let at = at_micros.div_euclid(1_000_000);
    let v = leaf.validity();
    let (nb, na) = (v.not_before.timestamp(), v.not_after.timestamp());
    let mut problems = Vec::new();
    if nb > at {
        problems.push(format!(
            "not yet valid: notBefore {} is after the collection time {}",
            date(nb),
            date(at)
        ));
    }
    if na < at {
        problems.push(format!(
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
        problems.push(format!(
            "self-signed ({} issued itself) and chaining to no trust anchor",
            short_name(leaf.subject())
        ));
    }
    let who = format!(
        "{} issued by {}",
        short_name(leaf.subject()),
        short_name(leaf.issuer())
    );
    if problems.is_empty() {
        Leg::new(
            "2.2e",
            LegOutcome::Pass,
            format!(
                "{who}, valid {} to {} ({} days left at collection), {} matches {}",
                date(nb),
                date(na),
                (na - at) / 86_400,
                host.map(|h| h.to_string()).unwrap_or_default(),
                matched.unwrap_or_default()
            ),
        )
    } else {
        Leg::new(
            "2.2e",
            LegOutcome::Fail,
            format!("{who}: {}", problems.join("; ")),
        )
    }
}

// ---------------------------------------------------------------------------------------
// 2.2f trust

/// Where the chain leads, offline.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Offline {
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
enum FailKind {
    /// No path to any anchor.
    UnknownIssuer,
    /// A defect of the chain itself: dates, signature, CA/EE misuse, usage.
    Defect,
    /// Something this grader cannot judge (unsupported algorithm, malformed input).
    Undecided,
}

/// The chain verified offline at the collection time: against webpki-roots first, then
/// against the recorded `--ca-file` certificates. Path building and signatures only; the
/// name is matched by 2.2e.
fn offline_verify(ev: &Evidence, chain: &[&[u8]], at_micros: i64) -> Offline {
    let Some((leaf, rest)) = chain.split_first() else {
        return Offline::NotRun("no chain recorded".into());
    };
    let leaf_der = CertificateDer::from(*leaf);
    let ee = match webpki::EndEntityCert::try_from(&leaf_der) {
        Ok(ee) => ee,
        Err(e) => {
            return Offline::NotRun(format!("the leaf is not usable for path building ({e:?})"))
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
    let ca_ders: Vec<CertificateDer<'_>> = ev
        .payload
        .run
        .options
        .ca_file
        .as_ref()
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
        webpki::Error::CertExpired { not_after, .. } => format!(
            "a certificate of the chain expired at {}",
            date(not_after.as_secs() as i64)
        ),
        webpki::Error::CertNotValidYet { not_before, .. } => format!(
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
        other => format!("{other:?}"),
    }
}

/// The collection-time trust, combined with the offline result.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TrustState {
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
    fn of(tls: Option<&TlsHandshake>, offline: &Offline) -> TrustState {
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
            line(c.error.as_deref().unwrap_or("rejected"))
        };
        match groups.iter_mut().find(|(s, _)| *s == said) {
            Some((_, stores)) => stores.push(&c.store),
            None => groups.push((said, vec![&c.store])),
        }
    }
    groups
        .iter()
        .map(|(said, stores)| format!("{}: {said}", stores.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "not probed: <reason>" for a skipped leg (without the collector's own "not sent:").
fn skip_note(reason: &str) -> String {
    let r = reason.strip_prefix("not sent: ").unwrap_or(reason);
    format!("not probed: {}", line(r))
}

fn trust_leg(
    ev: &Evidence,
    t: &TlsHandshake,
    leaf: Option<&X509Certificate<'_>>,
    offline: &Offline,
    trust: &TrustState,
) -> Leg {
    let issuer = leaf
        .map(|l| short_name(l.issuer()))
        .unwrap_or_else(|| "an unreadable issuer".into());
    let stores = stores_text(t);
    let offline_note = match offline {
        Offline::Public => "offline: chains to webpki-roots".to_string(),
        Offline::Operator => "offline: chains to the recorded --ca-file".to_string(),
        Offline::Failed(why, _) => format!("offline: {why}"),
        Offline::NotRun(why) => format!("offline: not verified ({why})"),
    };
    match trust {
        TrustState::Public => Leg::new(
            "2.2f",
            LegOutcome::Pass,
            format!("chains to the public roots, issued by {issuer} (stores at collection: {stores}; {offline_note})"),
        ),
        TrustState::Operator => {
            let file = ev
                .payload
                .run
                .options
                .ca_file
                .as_ref()
                .map(|f| {
                    format!(
                        "{} (sha256 {})",
                        line(&f.path),
                        f.sha256.get(..16).unwrap_or(&f.sha256)
                    )
                })
                .unwrap_or_else(|| "the operator's --ca-file".into());
            Leg::new(
                "2.2f",
                LegOutcome::Pass,
                format!(
                    "not publicly trusted, but chains to the operator's --ca-file {file}, treated as the \
                     operator's private PKI; issued by {issuer} (stores at collection: {stores}; {offline_note})"
                ),
            )
        }
        TrustState::OsOnly => Leg::new(
            "2.2f",
            LegOutcome::Unknown,
            format!(
                "trusted only by the collecting machine's OS store, issued by {issuer}: not by the public \
                 roots and not by a --ca-file. This is what a TLS-inspecting proxy looks like (spec §3.2), \
                 so the certificate and versions seen may be the proxy's; re-collect without interception, \
                 or pass the CA with --ca-file if it is the operator's own PKI (stores at collection: {stores})"
            ),
        ),
        TrustState::Untrusted | TrustState::Unseen => match offline {
            Offline::Failed(why, kind) => {
                let self_signed = leaf.is_some_and(is_self_signed);
                match kind {
                    FailKind::Defect => Leg::new(
                        "2.2f",
                        LegOutcome::Fail,
                        format!("not trusted: {why} (stores at collection: {stores})"),
                    ),
                    FailKind::UnknownIssuer if self_signed => Leg::new(
                        "2.2f",
                        LegOutcome::Fail,
                        format!(
                            "not trusted: self-signed by {issuer}, which no store and no --ca-file holds \
                             (stores at collection: {stores})"
                        ),
                    ),
                    FailKind::UnknownIssuer => Leg::new(
                        "2.2f",
                        LegOutcome::Unknown,
                        format!(
                            "issued by {issuer}, which is not an anchor of any store at collection time nor \
                             of a --ca-file; if it is the operator's private CA, re-collect with --ca-file \
                             (stores at collection: {stores})"
                        ),
                    ),
                    FailKind::Undecided => Leg::new(
                        "2.2f",
                        LegOutcome::Unknown,
                        format!("could not be validated offline: {why} (stores at collection: {stores})"),
                    ),
                }
            }
            other => Leg::new(
                "2.2f",
                LegOutcome::Error,
                format!(
                    "no store accepted the chain and it could not be checked offline ({other:?}; stores at \
                     collection: {stores})"
                ),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::leg as leg_of;
    use crate::fixture::{evidence, session};
    use crate::grade::run;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{
        CaFile, Header, HttpExchange, HttpRequest, HttpResponse, TransportError, TrustCheck,
    };
    use mcp_probe_schema::testkit;
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair, KeyUsagePurpose,
    };

    #[test]
    fn wrong_name_messages_name_what_failed() {
        assert_eq!(
            WrongName::NoSubjectAltName {
                subject: "CN=x".into()
            }
            .to_string(),
            "wrong name: the certificate has no subjectAltName, so it names no host (CN=x is not \
             used for name matching by current clients)"
        );
        assert_eq!(
            WrongName::Unparsable.to_string(),
            "wrong name: the subjectAltName does not parse"
        );
        assert_eq!(
            WrongName::NoMatch {
                want: "host a.example".into(),
                entries: "DNS:b.example".into()
            }
            .to_string(),
            "wrong name: host a.example matches none of the subjectAltName entries [DNS:b.example]"
        );
    }

    const BASE: &str = "https://127.0.0.1:8443";
    /// Before the fixture's collection time (2025-11-30T05:20:00Z).
    const PAST: (i32, u8, u8) = (2025, 1, 1);
    const FUTURE: (i32, u8, u8) = (2027, 1, 1);

    // --- certificates -----------------------------------------------------------------

    fn params(
        cn: &str,
        names: &[&str],
        from: (i32, u8, u8),
        to: (i32, u8, u8),
    ) -> CertificateParams {
        let mut p = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .expect("params");
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(DnType::CommonName, cn);
        p.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
        p.not_after = rcgen::date_time_ymd(to.0, to.1, to.2);
        p
    }

    fn ca(cn: &str) -> CertifiedIssuer<'static, KeyPair> {
        let mut p = params(cn, &[], (2020, 1, 1), (2040, 1, 1));
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        CertifiedIssuer::self_signed(p, KeyPair::generate().expect("key")).expect("ca")
    }

    fn leaf_params(names: &[&str], from: (i32, u8, u8), to: (i32, u8, u8)) -> CertificateParams {
        let mut p = params("leaf.test", names, from, to);
        p.is_ca = IsCa::ExplicitNoCa;
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        p
    }

    /// A leaf for `names` valid `from`..`to`, issued by `issuer`.
    fn issued(
        issuer: &CertifiedIssuer<'static, KeyPair>,
        names: &[&str],
        from: (i32, u8, u8),
        to: (i32, u8, u8),
    ) -> Vec<u8> {
        let key = KeyPair::generate().expect("key");
        leaf_params(names, from, to)
            .signed_by(&key, issuer)
            .expect("leaf")
            .der()
            .to_vec()
    }

    fn self_signed(names: &[&str]) -> Vec<u8> {
        let key = KeyPair::generate().expect("key");
        let mut p = params("localhost", names, PAST, FUTURE);
        // Like `openssl req -x509`: CA:TRUE on a leaf.
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.self_signed(&key).expect("self-signed").der().to_vec()
    }

    // --- records ----------------------------------------------------------------------

    fn record(legs: &[LegId], observation: Observation) -> Record {
        let mut r = testkit::http_record(legs, BASE, "{}", 200, b"");
        r.observation = observation;
        r
    }

    fn terr(kind: ErrorKind, message: &str) -> TransportError {
        TransportError {
            kind,
            message: message.into(),
        }
    }

    fn get(url: &str) -> HttpRequest {
        HttpRequest {
            method: "GET".into(),
            url: url.into(),
            version: "HTTP/1.1".into(),
            headers: vec![Header::new("Accept", "*/*")],
            body: testkit::body(b""),
        }
    }

    fn plain_status(status: u16, headers: &[(&str, &str)]) -> Record {
        record(
            &[leg::PLAINTEXT],
            Observation::Http(HttpExchange {
                request: get("http://127.0.0.1:80/"),
                outcome: HttpOutcome::Response(HttpResponse {
                    version: "HTTP/1.1".into(),
                    status,
                    reason: String::new(),
                    headers: headers.iter().map(|(k, v)| Header::new(*k, *v)).collect(),
                    body: testkit::body(b"plain HTTP\n"),
                    interim: 0,
                }),
                connection: Some(9),
                first_attempt: None,
            }),
        )
    }

    fn plain_error(kind: ErrorKind) -> Record {
        record(
            &[leg::PLAINTEXT],
            Observation::Http(HttpExchange {
                request: get("http://127.0.0.1:80/"),
                outcome: HttpOutcome::Error(terr(kind, "127.0.0.1:80: observed")),
                connection: None,
                first_attempt: None,
            }),
        )
    }

    fn legacy(l: LegId, version: u16, server: &[u8], error: Option<TransportError>) -> Record {
        record(
            &[l],
            Observation::LegacyTls(LegacyTlsProbe {
                offered: tlswire::version_text(version),
                client_hello: tlswire::client_hello(version, [3; 32], None),
                server_bytes: server.to_vec(),
                error,
            }),
        )
    }

    const ALERT_70: &[u8] = &[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 70];

    /// A ServerHello record choosing `version` and suite 0xc014.
    fn server_hello(version: u16) -> Vec<u8> {
        let mut body = version.to_be_bytes().to_vec();
        body.extend_from_slice(&[9; 32]);
        body.push(0);
        body.extend_from_slice(&[0xc0, 0x14, 0x00]);
        let mut hs = vec![2, 0, 0, body.len() as u8];
        hs.extend_from_slice(&body);
        let mut rec = vec![0x16, 0x03, 0x01, 0, hs.len() as u8];
        rec.extend_from_slice(&hs);
        rec
    }

    fn tls(
        chain: &[&[u8]],
        version: Option<&str>,
        stores: &[(&str, bool)],
        error: Option<TransportError>,
    ) -> Record {
        record(
            &[leg::TLS_MODERN],
            Observation::Tls(TlsHandshake {
                connection: 1,
                sni: None,
                peer: "127.0.0.1:8443".into(),
                version: version.map(str::to_string),
                cipher_suite: version.map(|_| "TLS13_AES_256_GCM_SHA384".to_string()),
                alpn: None,
                chain: chain
                    .iter()
                    .map(|c| serde_bytes::ByteBuf::from(c.to_vec()))
                    .collect(),
                verification: stores
                    .iter()
                    .map(|(s, ok)| TrustCheck {
                        store: s.to_string(),
                        ok: *ok,
                        error: (!ok).then(|| "invalid peer certificate: UnknownIssuer".to_string()),
                    })
                    .collect(),
                error,
            }),
        )
    }

    /// Refusals on both legacy legs and a refused plaintext port.
    fn clean_transport() -> Vec<Record> {
        vec![
            legacy(leg::TLS_V1_0, tlswire::TLS1_0, ALERT_70, None),
            legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
            plain_error(ErrorKind::Connect),
        ]
    }

    /// An https target at `base` with `records`, and `ca_file` certificates when given.
    fn https_at(base: &str, records: Vec<Record>, ca_file: Option<Vec<Vec<u8>>>) -> Evidence {
        let mut ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        );
        ev.payload.target.base_url = base.into();
        ev.payload.target.as_typed = format!("{base}/mcp");
        ev.payload.target.endpoint = Some(format!("{base}/mcp"));
        ev.payload.run.options.ca_file = ca_file.map(|certs| CaFile {
            path: "/tmp/ca.crt".into(),
            sha256: "ab".repeat(32),
            certificates: certs.into_iter().map(serde_bytes::ByteBuf::from).collect(),
        });
        ev
    }

    fn https(records: Vec<Record>, ca_file: Option<Vec<Vec<u8>>>) -> Evidence {
        https_at(BASE, records, ca_file)
    }

    fn grade(ev: &Evidence) -> Outcome {
        run(&C2_2, ev, &Context::default())
    }

    /// The lab's modern endpoint collected with `--ca-file`: chain leaf + CA, trusted by
    /// `extra` only.
    fn modern(extra_records: Vec<Record>) -> Evidence {
        let ca = ca("MCP Probe Test CA");
        let leaf = issued(&ca, &["127.0.0.1", "localhost"], PAST, FUTURE);
        let mut records = vec![tls(
            &[&leaf, ca.der()],
            Some("TLSv1_3"),
            &[("bundled", false), ("os", false), ("extra", true)],
            None,
        )];
        records.extend(extra_records);
        https(records, Some(vec![ca.der().to_vec()]))
    }

    // --- whole-check cases ------------------------------------------------------------

    #[test]
    fn modern_with_operator_ca_passes() {
        let o = grade(&modern(clean_transport()));
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(leg_of(&o, "2.2f").note.contains("private PKI"), "{o:?}");
        assert!(leg_of(&o, "2.2f").note.contains("/tmp/ca.crt"), "{o:?}");
        assert!(leg_of(&o, "2.2e").note.contains("IP:127.0.0.1"), "{o:?}");
        assert!(leg_of(&o, "2.2d").note.contains("TLSv1_3"), "{o:?}");
        assert!(
            leg_of(&o, "2.2b").note.contains("protocol_version"),
            "{o:?}"
        );
        assert!(leg_of(&o, "2.2a").note.contains("port refused"), "{o:?}");
        assert_eq!(o.details["weak_tls_accepted"], json!([]));
        assert_eq!(o.details["tls_intercepted"], json!(false));
        assert_eq!(o.details["trusted_by"], json!(["extra"]));
        assert_eq!(o.details["observed_issuer"], json!("MCP Probe Test CA"));
        assert!(o.reduction.contains("HSTS") && o.reduction.contains("Revocation"));
        assert_eq!(o.records.len(), 4, "{:?}", o.records);
    }

    #[test]
    fn plain_http_target_fails_whatever_else() {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({}), None)),
            vec![
                crate::fixture::exchange(
                    &[leg::ENDPOINT_DETECT],
                    "{}",
                    200,
                    "application/json",
                    "{}",
                    &[],
                ),
                crate::fixture::skipped(
                    &[leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT],
                    "not sent: the target is plain http, so the endpoint itself is served without TLS",
                ),
            ],
        );
        let o = grade(&ev);
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        assert!(leg_of(&o, "2.2a").note.contains("served in clear"), "{o:?}");
        for l in ["2.2b", "2.2c", "2.2d", "2.2e", "2.2f"] {
            assert_eq!(leg_of(&o, l).outcome, LegOutcome::Dropped, "{l}");
        }
        assert_eq!(o.details["scheme"], json!("http"));
    }

    #[test]
    fn plain_http_target_without_any_answer_is_error() {
        let mut r = crate::fixture::exchange(&[leg::ENDPOINT_DETECT], "{}", 200, "", "", &[]);
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(terr(ErrorKind::Connect, "refused"));
        }
        let ev = evidence(
            None,
            vec![
                r,
                crate::fixture::skipped(&[leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT], "plain"),
            ],
        );
        let o = grade(&ev);
        assert_eq!(o.verdict, Verdict::Error, "{o:#?}");
    }

    #[test]
    fn missing_transport_legs_are_named() {
        let ev = https(Vec::new(), None);
        let o = grade(&ev);
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("tls.v1_0"), "{o:?}");
    }

    // --- 2.2a -------------------------------------------------------------------------

    fn plaintext_only(r: Record) -> Outcome {
        let mut records = vec![
            legacy(leg::TLS_V1_0, tlswire::TLS1_0, ALERT_70, None),
            legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
        ];
        records.push(r);
        grade(&modern(records))
    }

    #[test]
    fn plaintext_served_fails() {
        let o = plaintext_only(plain_status(200, &[]));
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            leg_of(&o, "2.2a").note.contains("plaintext served"),
            "{o:?}"
        );
        assert_eq!(o.details["plaintext"], json!(200));
        assert_eq!(
            plaintext_only(plain_status(204, &[])).verdict,
            Verdict::Fail
        );
    }

    #[test]
    fn redirects_pass_only_to_https() {
        for s in [301, 302, 303, 307, 308] {
            let o = plaintext_only(plain_status(s, &[("Location", "HTTPS://127.0.0.1:8443/")]));
            assert_eq!(o.verdict, Verdict::Pass, "{s}: {o:?}");
            assert_eq!(
                o.details["plaintext_redirect_target"],
                json!("HTTPS://127.0.0.1:8443/")
            );
        }
        let bad = plaintext_only(plain_status(301, &[("Location", "http://127.0.0.1/")]));
        assert_eq!(bad.verdict, Verdict::Fail);
        assert!(
            leg_of(&bad, "2.2a").note.contains("http://127.0.0.1/"),
            "{bad:?}"
        );
        let relative = plaintext_only(plain_status(308, &[("Location", "/mcp")]));
        assert_eq!(relative.verdict, Verdict::Fail);
        let empty = plaintext_only(plain_status(302, &[]));
        assert_eq!(empty.verdict, Verdict::Fail);
        assert!(
            leg_of(&empty, "2.2a").note.contains("empty target"),
            "{empty:?}"
        );
    }

    #[test]
    fn upgrade_required_and_other_statuses() {
        let o = plaintext_only(plain_status(426, &[]));
        assert_eq!(leg_of(&o, "2.2a").outcome, LegOutcome::Pass);
        let r = plaintext_only(plain_status(404, &[]));
        assert_eq!(leg_of(&r, "2.2a").outcome, LegOutcome::Pass);
        assert!(leg_of(&r, "2.2a").note.contains("(review)"), "{r:?}");
    }

    #[test]
    fn plaintext_transport_errors() {
        let reset = plaintext_only(plain_error(ErrorKind::Reset));
        assert_eq!(leg_of(&reset, "2.2a").outcome, LegOutcome::Pass);
        assert!(leg_of(&reset, "2.2a").note.contains("port refused"));
        let timeout = plaintext_only(plain_error(ErrorKind::Timeout));
        assert_eq!(leg_of(&timeout, "2.2a").outcome, LegOutcome::Pass);
        assert!(
            leg_of(&timeout, "2.2a").note.contains("filtered"),
            "{timeout:?}"
        );
        let dns = plaintext_only(plain_error(ErrorKind::Dns));
        assert_eq!(leg_of(&dns, "2.2a").outcome, LegOutcome::Error);
        assert_eq!(dns.verdict, Verdict::Error);
        let skipped = plaintext_only(crate::fixture::skipped(
            &[leg::PLAINTEXT],
            "not sent: --info run",
        ));
        assert_eq!(leg_of(&skipped, "2.2a").outcome, LegOutcome::Unknown);
        assert!(leg_of(&skipped, "2.2a").note.contains("--info"));
    }

    // --- 2.2b / 2.2c ------------------------------------------------------------------

    fn legacy_only(v0: Record, v1: Record) -> Outcome {
        grade(&modern(vec![v0, v1, plain_error(ErrorKind::Connect)]))
    }

    #[test]
    fn accepted_legacy_versions_fail() {
        let o = legacy_only(
            legacy(
                leg::TLS_V1_0,
                tlswire::TLS1_0,
                &server_hello(tlswire::TLS1_0),
                None,
            ),
            legacy(
                leg::TLS_V1_1,
                tlswire::TLS1_1,
                &server_hello(tlswire::TLS1_1),
                None,
            ),
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            leg_of(&o, "2.2b").note.contains(
                "accepted (ServerHello TLSv1_0, suite TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA)"
            ),
            "{o:?}"
        );
        assert_eq!(leg_of(&o, "2.2c").outcome, LegOutcome::Fail);
        assert_eq!(
            o.details["weak_tls_accepted"],
            json!(["TLSv1_0", "TLSv1_1"])
        );
    }

    #[test]
    fn refusals_by_alert_and_by_close_pass() {
        let o = legacy_only(
            legacy(
                leg::TLS_V1_0,
                tlswire::TLS1_0,
                &[0x15, 3, 1, 0, 2, 2, 80],
                None,
            ),
            legacy(leg::TLS_V1_1, tlswire::TLS1_1, b"", None),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(leg_of(&o, "2.2b").note.contains("internal_error"));
        assert!(leg_of(&o, "2.2c").note.contains("closed"));
    }

    #[test]
    fn network_errors_decide_nothing() {
        for kind in [ErrorKind::Reset, ErrorKind::Timeout, ErrorKind::Connect] {
            let o = legacy_only(
                legacy(leg::TLS_V1_0, tlswire::TLS1_0, b"", Some(terr(kind, "x"))),
                legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
            );
            assert_eq!(leg_of(&o, "2.2b").outcome, LegOutcome::Error, "{kind:?}");
            assert!(leg_of(&o, "2.2b").note.contains("decides nothing"), "{o:?}");
            assert_eq!(o.verdict, Verdict::Error);
        }
        // A timeout part-way through a record is still no answer.
        let o = legacy_only(
            legacy(
                leg::TLS_V1_0,
                tlswire::TLS1_0,
                &[0x16, 3],
                Some(terr(ErrorKind::Timeout, "x")),
            ),
            legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
        );
        assert_eq!(leg_of(&o, "2.2b").outcome, LegOutcome::Error);
    }

    #[test]
    fn not_tls_and_odd_answers_are_errors() {
        let o = legacy_only(
            legacy(
                leg::TLS_V1_0,
                tlswire::TLS1_0,
                b"HTTP/1.1 400 Bad Request\r\n",
                None,
            ),
            legacy(
                leg::TLS_V1_1,
                tlswire::TLS1_1,
                &[0x16, 3, 1, 0, 4, 0x0b, 0, 0, 0],
                None,
            ),
        );
        assert_eq!(leg_of(&o, "2.2b").outcome, LegOutcome::Error);
        assert!(leg_of(&o, "2.2b").note.contains("HTTP/1.1"), "{o:?}");
        assert_eq!(leg_of(&o, "2.2c").outcome, LegOutcome::Error);
    }

    #[test]
    fn other_chosen_versions() {
        let (o, note, acc) = legacy_decision(
            &probe_of(tlswire::TLS1_0, &server_hello(tlswire::TLS1_2)),
            tlswire::TLS1_0,
        );
        assert_eq!((o, acc), (LegOutcome::Pass, false), "{note}");
        let (o, note, acc) = legacy_decision(
            &probe_of(tlswire::TLS1_1, &server_hello(tlswire::SSL3_0)),
            tlswire::TLS1_1,
        );
        assert_eq!((o, acc), (LegOutcome::Fail, true), "{note}");
        assert!(note.contains("SSLv3"));
    }

    fn probe_of(version: u16, server: &[u8]) -> LegacyTlsProbe {
        LegacyTlsProbe {
            offered: tlswire::version_text(version),
            client_hello: tlswire::client_hello(version, [1; 32], None),
            server_bytes: server.to_vec(),
            error: None,
        }
    }

    #[test]
    fn a_probe_that_offered_something_else_answers_nothing() {
        let mut p = probe_of(tlswire::TLS1_1, &server_hello(tlswire::TLS1_1));
        let (o, note, _) = legacy_decision(&p, tlswire::TLS1_0);
        assert_eq!(o, LegOutcome::Error, "{note}");
        p.client_hello.clear();
        let (o, _, _) = legacy_decision(&p, tlswire::TLS1_1);
        assert_eq!(o, LegOutcome::Error);
    }

    // --- 2.2d -------------------------------------------------------------------------

    #[test]
    fn negotiated_versions() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
        let stores = [("bundled", false), ("extra", true)];
        let mut r12 = clean_transport();
        r12.push(tls(&[&leaf], Some("TLSv1_2"), &stores, None));
        let o = grade(&https(r12, Some(vec![ca.der().to_vec()])));
        assert_eq!(leg_of(&o, "2.2d").outcome, LegOutcome::Pass, "{o:?}");
        let mut r11 = clean_transport();
        r11.push(tls(&[&leaf], Some("TLSv1_1"), &stores, None));
        let o = grade(&https(r11, Some(vec![ca.der().to_vec()])));
        assert_eq!(leg_of(&o, "2.2d").outcome, LegOutcome::Fail);
    }

    #[test]
    fn handshake_failures() {
        let mut alert = clean_transport();
        alert.push(tls(
            &[],
            None,
            &[],
            Some(terr(
                ErrorKind::TlsAlert,
                "received fatal alert: ProtocolVersion",
            )),
        ));
        let o = grade(&https(alert, None));
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            leg_of(&o, "2.2d").note.contains("handshake failed"),
            "{o:?}"
        );
        assert_eq!(leg_of(&o, "2.2e").outcome, LegOutcome::Error);

        let mut reset = clean_transport();
        reset.push(tls(
            &[],
            None,
            &[],
            Some(terr(ErrorKind::Reset, "connection reset")),
        ));
        let o = grade(&https(reset, None));
        assert_eq!(leg_of(&o, "2.2d").outcome, LegOutcome::Error);
        assert_eq!(o.verdict, Verdict::Error);
    }

    #[test]
    fn no_handshake_names_the_connection_failure() {
        let mut r = crate::fixture::exchange(&[leg::ENDPOINT_DETECT], "{}", 200, "", "", &[]);
        if let Observation::Http(x) = &mut r.observation {
            x.request.url = format!("{BASE}/mcp");
            x.outcome = HttpOutcome::Error(terr(ErrorKind::Connect, "127.0.0.1:8443: refused"));
        }
        let mut records = clean_transport();
        records.push(r);
        let o = grade(&https(records, None));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(leg_of(&o, "2.2d").note.contains("refused"), "{o:?}");
    }

    // --- 2.2e / 2.2f ------------------------------------------------------------------

    /// Grade one chain with refusing legacy legs and a refused plaintext port.
    fn chain_case(
        base: &str,
        chain: &[&[u8]],
        stores: &[(&str, bool)],
        ca_file: Option<Vec<Vec<u8>>>,
    ) -> Outcome {
        let mut records = clean_transport();
        records.push(tls(chain, Some("TLSv1_3"), stores, None));
        grade(&https_at(base, records, ca_file))
    }

    const NONE_OK: &[(&str, bool)] = &[("bundled", false), ("os", false), ("extra", false)];

    #[test]
    fn expired_fails_with_dates() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["127.0.0.1"], (2020, 1, 1), (2020, 2, 1));
        let o = chain_case(
            BASE,
            &[&leaf, ca.der()],
            NONE_OK,
            Some(vec![ca.der().to_vec()]),
        );
        assert_eq!(o.verdict, Verdict::Fail);
        let e = &leg_of(&o, "2.2e").note;
        assert!(
            e.contains("expired: notAfter 2020-02-01 00:00:00 UTC"),
            "{e}"
        );
        assert!(e.contains("2025-11-30 05:20:00 UTC"), "{e}");
        assert_eq!(leg_of(&o, "2.2f").outcome, LegOutcome::Fail, "{o:?}");
        assert!(leg_of(&o, "2.2f").note.contains("expired"), "{o:?}");
    }

    #[test]
    fn not_yet_valid_fails() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["127.0.0.1"], (2026, 6, 1), (2027, 1, 1));
        let o = chain_case(BASE, &[&leaf], NONE_OK, Some(vec![ca.der().to_vec()]));
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(leg_of(&o, "2.2e").note.contains("not yet valid"), "{o:?}");
    }

    #[test]
    fn wrong_name_fails_though_the_chain_is_the_operators() {
        let ca = ca("MCP Probe Test CA");
        let leaf = issued(&ca, &["wrong.example"], PAST, FUTURE);
        let o = chain_case(
            BASE,
            &[&leaf, ca.der()],
            NONE_OK,
            Some(vec![ca.der().to_vec()]),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        let e = &leg_of(&o, "2.2e").note;
        assert!(e.contains("wrong name"), "{e}");
        assert!(e.contains("IP address 127.0.0.1"), "{e}");
        assert!(e.contains("DNS:wrong.example"), "{e}");
        // The chain itself leads to the operator's anchor.
        assert_eq!(leg_of(&o, "2.2f").outcome, LegOutcome::Pass, "{o:?}");
    }

    #[test]
    fn ip_host_does_not_match_a_dns_san_spelling_it() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["localhost"], PAST, FUTURE);
        let o = chain_case(
            BASE,
            &[&leaf],
            &[("extra", true)],
            Some(vec![ca.der().to_vec()]),
        );
        assert_eq!(leg_of(&o, "2.2e").outcome, LegOutcome::Fail);
    }

    #[test]
    fn dns_hosts_and_wildcards() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["*.example.com", "10.0.0.1"], PAST, FUTURE);
        let ok = chain_case(
            "https://mcp.example.com",
            &[&leaf],
            &[("extra", true)],
            Some(vec![ca.der().to_vec()]),
        );
        assert_eq!(ok.verdict, Verdict::Pass, "{ok:?}");
        assert!(
            leg_of(&ok, "2.2e").note.contains("DNS:*.example.com"),
            "{ok:?}"
        );
        let deep = chain_case(
            "https://a.mcp.example.com",
            &[&leaf],
            &[("extra", true)],
            Some(vec![ca.der().to_vec()]),
        );
        assert_eq!(leg_of(&deep, "2.2e").outcome, LegOutcome::Fail);
        let ip6 = chain_case("https://[::1]:8443", &[&leaf], &[("extra", true)], None);
        assert_eq!(leg_of(&ip6, "2.2e").outcome, LegOutcome::Fail);
    }

    #[test]
    fn wildcard_rules() {
        assert!(dns_matches("*.example.com", "mcp.example.com"));
        assert!(dns_matches("*.Example.COM.", "MCP.example.com"));
        assert!(dns_matches("mcp.example.com", "mcp.example.com."));
        assert!(!dns_matches("*.example.com", "example.com"));
        assert!(!dns_matches("*.example.com", "a.b.example.com"));
        assert!(!dns_matches("*.com", "example.com"));
        assert!(!dns_matches("m*.example.com", "mcp.example.com"));
        assert!(!dns_matches("*.*.example.com", "a.b.example.com"));
        assert!(!dns_matches("", ""));
    }

    #[test]
    fn wildcard_rules_agree_with_webpki() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["*.example.com", "exact.test"], PAST, FUTURE);
        let der = CertificateDer::from(leaf.as_slice());
        let ee = webpki::EndEntityCert::try_from(&der).expect("ee");
        for host in [
            "mcp.example.com",
            "example.com",
            "a.b.example.com",
            "exact.test",
            "EXACT.test",
            "other.test",
        ] {
            let name = rustls_pki_types::ServerName::try_from(host).expect("name");
            let theirs = ee.verify_is_valid_for_subject_name(&name).is_ok();
            let ours = ["*.example.com", "exact.test"]
                .iter()
                .any(|p| dns_matches(p, host));
            assert_eq!(ours, theirs, "{host}");
        }
    }

    #[test]
    fn self_signed_fails_unless_pinned() {
        let ss = self_signed(&["127.0.0.1", "localhost"]);
        let o = chain_case(BASE, &[&ss], NONE_OK, None);
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        assert!(leg_of(&o, "2.2e").note.contains("self-signed"), "{o:?}");
        assert_eq!(leg_of(&o, "2.2f").outcome, LegOutcome::Fail);
        // The operator pinned it with --ca-file: private PKI.
        let pinned = chain_case(
            BASE,
            &[&ss],
            &[("bundled", false), ("extra", true)],
            Some(vec![ss.clone()]),
        );
        assert_eq!(
            leg_of(&pinned, "2.2e").outcome,
            LegOutcome::Pass,
            "{pinned:?}"
        );
        assert_eq!(
            leg_of(&pinned, "2.2f").outcome,
            LegOutcome::Pass,
            "{pinned:?}"
        );
    }

    #[test]
    fn os_store_only_is_interception_unknown() {
        let ca = ca("Corp Inspection CA");
        let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
        let mut records = vec![
            legacy(
                leg::TLS_V1_0,
                tlswire::TLS1_0,
                &server_hello(tlswire::TLS1_0),
                None,
            ),
            legacy(leg::TLS_V1_1, tlswire::TLS1_1, ALERT_70, None),
            plain_error(ErrorKind::Connect),
        ];
        records.push(tls(
            &[&leaf, ca.der()],
            Some("TLSv1_3"),
            &[("bundled", false), ("os", true)],
            None,
        ));
        let o = grade(&https(records, None));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(
            leg_of(&o, "2.2f").note.contains("Corp Inspection CA"),
            "{o:?}"
        );
        assert!(leg_of(&o, "2.2b").note.contains("would be fail"), "{o:?}");
        assert_eq!(o.details["tls_intercepted"], json!(true));
        assert_eq!(o.details["observed_issuer"], json!("Corp Inspection CA"));
    }

    #[test]
    fn unknown_private_ca_is_unknown() {
        let ca = ca("Someone's CA");
        let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
        let o = chain_case(
            BASE,
            &[&leaf, ca.der()],
            &[("bundled", false), ("os", false)],
            None,
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(leg_of(&o, "2.2f").note.contains("--ca-file"), "{o:?}");
    }

    #[test]
    fn a_forged_signature_fails_offline() {
        // Two CAs with the same name: the leaf is signed by the one not in --ca-file.
        let real = ca("Twin CA");
        let forger = ca("Twin CA");
        let leaf = issued(&forger, &["127.0.0.1"], PAST, FUTURE);
        let o = chain_case(BASE, &[&leaf], NONE_OK, Some(vec![real.der().to_vec()]));
        assert_eq!(leg_of(&o, "2.2f").outcome, LegOutcome::Fail, "{o:#?}");
        assert!(leg_of(&o, "2.2f").note.contains("signature"), "{o:?}");
    }

    #[test]
    fn unparsable_leaf_is_error() {
        let o = chain_case(BASE, &[b"not a certificate"], NONE_OK, None);
        assert_eq!(leg_of(&o, "2.2e").outcome, LegOutcome::Error, "{o:?}");
        assert_eq!(o.verdict, Verdict::Error);
    }

    #[test]
    fn public_roots_in_the_store_pass_the_trust_leg() {
        let ca = ca("CA");
        let leaf = issued(&ca, &["127.0.0.1"], PAST, FUTURE);
        let o = chain_case(BASE, &[&leaf], &[("bundled", true), ("os", true)], None);
        assert_eq!(leg_of(&o, "2.2f").outcome, LegOutcome::Pass, "{o:?}");
        assert!(leg_of(&o, "2.2f").note.contains("public roots"));
        assert_eq!(o.verdict, Verdict::Pass);
    }
}
