//! Rule `tls-required`: TLS required, plaintext disallowed, graded from the bundle alone.
//! docs/checks.md states the rules under the row this rule grades.
//!
//! Sub-verdicts:
//!
//! * **a plaintext**: the `http.plaintext` GET (no redirect followed). A refused or
//!   reset port passes, a 2xx fails ("plaintext served"), 426 passes, a redirect passes
//!   only to an `https://` location, anything else passes "(review)". A plain-http target
//!   fails here outright: MCP itself is served in clear.
//! * **b / c TLS 1.0 / 1.1**: the hand-written ClientHello (`tls.v1_0`, `tls.v1_1`)
//!   and the server's first bytes, read with [`tlswire::parse_server`]. A ServerHello at
//!   the offered version fails; an alert or a clean close is a refusal; a network error
//!   (connect, timeout, reset) decides nothing (ERROR for that leg), and so
//!   does an answer that is not TLS.
//! * **d negotiated version**: the `tls.modern` record of the first connection.
//!   TLS 1.2/1.3 passes; a handshake that died on a server alert fails (attributable);
//!   any other handshake failure is ERROR.
//! * **e certificate**: the recorded leaf re-validated offline *at the collection time*
//!   (`run.started_at`), whether or not the collector could use the connection (so an
//!   invalid certificate fails even when it stopped the collector): validity dates, the
//!   endpoint host against the subjectAltName (DNS with the one-label wildcard rule; IP
//!   SANs for IP hosts; no CN fallback), and a self-signed leaf that chains to no anchor.
//! * **f trust**: the collection-time store results (`bundled` public roots, `os`,
//!   `extra` = the operator's `--ca-file`) plus an offline path-building check with
//!   rustls-webpki against webpki-roots and the recorded `--ca-file` certificates. Public
//!   roots or the operator's file pass (the latter is said to be the operator's private
//!   PKI); trusted by the OS store alone means an inspecting proxy may have answered
//!   instead: then every leg becomes UNKNOWN, because the certificate, the versions
//!   and the plaintext answer may all be the proxy's. e and f are graded in the
//!   `cert` module.
//!
//! Aggregation is worst-first (fail > error > unknown > pass).

use mcp_probe_schema::model::{
    ErrorKind, HttpOutcome, LegacyTlsProbe, Observation, Record, TlsHandshake,
};
use mcp_probe_schema::tlswire::{self, ServerAnswer};
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde::Serialize;
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

mod cert;

use crate::check::{Check, Context, Legs, Needs};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use cert::{cert_facts, certificate_leg, offline_verify, trust_leg, CertFacts, TrustState};
use mcp_probe_schema::model::Era;

/// TLS required, plaintext disallowed.
#[derive(Debug)]
pub struct TlsRequired;

/// What a black-box probe of one host and port cannot see.
pub const REDUCTION: &str = "Only the endpoint's own host and port and one plaintext port \
     (--plaintext-port) were probed: other ports, hosts and load-balancer members are not seen. \
     HSTS is not read. Cipher policy is seen only as far as the eight TLS 1.0/1.1 suites offered \
     and the suite the collector's own TLS 1.2/1.3 stack negotiated; SSLv3 and weak TLS 1.2 suites \
     are not offered. Revocation (OCSP, CRL) and certificate transparency are not checked. The \
     certificate is re-validated offline at the collection time from the recorded chain.";

impl Check for TlsRequired {
    fn id(&self) -> &'static str {
        "tls-required"
    }

    /// The transport facts are recorded (sent or skipped) before endpoint detection on
    /// every run. `tls.modern` is optional: it is recorded only for connections that
    /// reached a TLS handshake, so a plain-http target or an unreachable one has none,
    /// and its absence is graded here (sub-verdicts d-f ERROR naming why, the connection failure
    /// read from `endpoint.detect`).
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT],
            &[leg::TLS_MODERN, leg::ENDPOINT_DETECT],
        )
    }

    /// A bad certificate stops the collector before any MCP session (it never sends
    /// over an untrusted connection), and that is exactly what this check must grade.
    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let base = match url::Url::parse(&ev.payload.target.base_url) {
            Ok(u) => u,
            Err(e) => {
                return Outcome::single(
                    crate::verdict::Verdict::Error,
                    crate::format_exact!(
                        "the target's base URL {} does not parse ({e})",
                        crate::fmt::Line(&ev.payload.target.base_url)
                    ),
                    REDUCTION,
                )
            }
        };
        match base.scheme() {
            "http" => plaintext_target(ev, &base),
            "https" => tls_target(ev, &base),
            other => Outcome::single(
                crate::verdict::Verdict::Error,
                crate::format_exact!(
                    "the target's scheme {} is neither http nor https",
                    crate::fmt::Line(other)
                ),
                REDUCTION,
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Plain-http target

/// A plain-http target: MCP (or at least HTTP) is served in clear; the TLS legs were not
/// sent (the collector records them as skipped) and are listed as dropped.
fn plaintext_target(ev: &Bundle, base: &url::Url) -> Outcome {
    let served = ev.http_records().find_map(|(r, x)| match &x.outcome {
        HttpOutcome::Response(resp) if same_origin(&x.request.url, base) => {
            Some((r.seq, resp.status, x.request.url.clone()))
        }
        _ => None,
    });
    let a = match (&ev.payload.target.endpoint, &served) {
        (Some(endpoint), _) => SubVerdict::new(
            "a",
            SubOutcome::Fail,
            crate::format_exact!(
                "the MCP endpoint {} is plain http: MCP is served in clear",
                crate::fmt::Line(endpoint)
            ),
        ),
        (None, Some((_, status, url))) => SubVerdict::new(
            "a",
            SubOutcome::Fail,
            crate::format_exact!(
                "the target is plain http and {} answered HTTP {status} in clear (no MCP endpoint was \
                 detected, but plaintext HTTP is served)",
                crate::fmt::Line(url)
            ),
        ),
        (None, None) => SubVerdict::new(
            "a",
            SubOutcome::Error,
            crate::format_exact!(
                "the target {} is plain http but nothing answered, so no plaintext service was observed",
                crate::fmt::Line(base.as_str())
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
        SubVerdict::new("b", SubOutcome::Dropped, reason(leg::TLS_V1_0)),
        SubVerdict::new("c", SubOutcome::Dropped, reason(leg::TLS_V1_1)),
        SubVerdict::new(
            "d",
            SubOutcome::Dropped,
            "not probed: the target is plain http",
        ),
        SubVerdict::new(
            "e",
            SubOutcome::Dropped,
            "not probed: the target is plain http",
        ),
        SubVerdict::new(
            "f",
            SubOutcome::Dropped,
            "not probed: the target is plain http",
        ),
    ];
    let facts = PlainTargetFacts {
        scheme: "http",
        plaintext: "endpoint served in clear",
        tls_intercepted: false,
        plaintext_status: served.as_ref().map(|s| s.1),
    };
    Outcome::from_subs(legs, REDUCTION)
        .with_records(served.as_ref().map(|s| s.0))
        .with_facts(&facts)
}

/// The details of `tls-required` on a plain-http target.
#[derive(Debug, Serialize)]
struct PlainTargetFacts {
    /// `http`.
    scheme: &'static str,
    /// What was seen in clear.
    plaintext: &'static str,
    /// Always false: no TLS.
    tls_intercepted: bool,
    /// The status of the first answer in clear, absent when nothing answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    plaintext_status: Option<u16>,
}

/// The details of `tls-required` on an https target, in report order.
#[derive(Debug, Serialize)]
struct TlsTargetFacts {
    /// `https`.
    scheme: &'static str,
    #[serde(flatten)]
    plaintext: PlaintextFacts,
    /// The legacy versions the server accepted.
    weak_tls_accepted: Vec<&'static str>,
    #[serde(flatten)]
    version: VersionFacts,
    #[serde(flatten)]
    cert: Option<CertFacts>,
    /// The stores that accepted the chain at collection.
    trusted_by: Vec<String>,
    /// Trusted only by the OS store: a TLS-inspecting proxy may have answered.
    tls_intercepted: bool,
}

/// The plaintext request (sub-verdict a) in the details.
#[derive(Debug, Default, Serialize)]
struct PlaintextFacts {
    /// The URL requested in clear, absent when no request was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    plaintext_url: Option<String>,
    /// What it drew.
    plaintext: PlaintextSeen,
    /// A redirect's `Location` (null when absent); only for a redirect.
    #[serde(skip_serializing_if = "Option::is_none")]
    plaintext_redirect_target: Option<Option<String>>,
}

/// What the plaintext request drew: nothing recorded (null), a transport error's kind,
/// or an HTTP status.
#[derive(Debug, Default, Serialize)]
#[serde(untagged)]
enum PlaintextSeen {
    #[default]
    NotRecorded,
    Failed(&'static str),
    Status(u16),
}

/// The negotiated version (sub-verdict d) in the details: null without a handshake record.
#[derive(Debug, Serialize)]
struct VersionFacts {
    tls_version: Option<String>,
    /// Absent without a handshake record.
    #[serde(skip_serializing_if = "Option::is_none")]
    tls_cipher: Option<Option<String>>,
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

fn tls_target(ev: &Bundle, base: &url::Url) -> Outcome {
    let at = ev.payload.run.started_at;
    let mut records = Vec::new();
    let (a, a_seq, plaintext) = plaintext_leg(ev);
    records.extend(a_seq);
    let (b, b_seq, b_acc) = legacy_leg(ev, "b", leg::TLS_V1_0, tlswire::TLS1_0);
    let (c, c_seq, c_acc) = legacy_leg(ev, "c", leg::TLS_V1_1, tlswire::TLS1_1);
    records.extend(b_seq);
    records.extend(c_seq);
    let accepted: Vec<&'static str> = [(b_acc, "TLSv1_0"), (c_acc, "TLSv1_1")]
        .into_iter()
        .filter_map(|(a, v)| a.then_some(v))
        .collect();

    let tls = first_tls(ev);
    if let Some((r, _)) = tls {
        records.push(r.seq);
    }
    let tls = tls.map(|(_, t)| t);
    let (d, version) = version_leg(ev, tls);
    let leaf_der = tls.and_then(|t| t.chain.first()).map(|der| der.as_ref());
    let chain_ders: Vec<&[u8]> = tls
        .map(|t| t.chain.iter().map(|c| c.as_ref()).collect())
        .unwrap_or_default();
    let parsed = leaf_der.map(|der| X509Certificate::from_der(der).map(|(_, c)| c));
    let offline = offline_verify(ev, &chain_ders, at);
    let trust = TrustState::of(tls, &offline);
    let host = base.host().map(|h| h.to_owned());
    let mut cert = None;
    let (e, f) = match (tls, parsed) {
        (None, _) => {
            let why = "no TLS handshake was recorded, so no certificate was seen";
            (
                SubVerdict::new("e", SubOutcome::Error, why),
                SubVerdict::new("f", SubOutcome::Error, why),
            )
        }
        (Some(t), None) => {
            let why = match &t.error {
                Some(err) => crate::format_exact!(
                    "no certificate was recorded: the handshake failed before it ({})",
                    crate::fmt::Line(&err.to_string())
                ),
                None => "no certificate was recorded".to_string(),
            };
            (
                SubVerdict::new("e", SubOutcome::Error, why.clone()),
                SubVerdict::new("f", SubOutcome::Error, why),
            )
        }
        (Some(t), Some(Err(err))) => {
            let why = crate::format_exact!("the leaf certificate does not parse as X.509 ({err})");
            (
                SubVerdict::new("e", SubOutcome::Error, why.clone()),
                trust_leg(ev, t, None, &offline, &trust),
            )
        }
        (Some(t), Some(Ok(leaf))) => {
            cert = Some(cert_facts(&leaf));
            (
                certificate_leg(&leaf, host.as_ref(), at, &trust),
                trust_leg(ev, t, Some(&leaf), &offline, &trust),
            )
        }
    };
    let intercepted = matches!(trust, TrustState::OsOnly);
    let facts = TlsTargetFacts {
        scheme: "https",
        plaintext,
        weak_tls_accepted: accepted,
        version,
        cert,
        trusted_by: tls
            .map(|t| {
                t.verification
                    .iter()
                    .filter(|c| c.ok)
                    .map(|c| c.store.clone())
                    .collect()
            })
            .unwrap_or_default(),
        tls_intercepted: intercepted,
    };

    let mut a = a;
    if tls.is_none() && a.outcome == SubOutcome::Pass {
        // A refused plaintext port on a dead deployment proves little.
        a.note
            .push_str(" (proves little: the TLS port gave no handshake either)");
    }
    let mut legs = vec![a, b, c, d, e, f];
    if intercepted {
        // Through a suspected inspecting proxy, what was seen may be the proxy's, not the
        // server's.
        for l in &mut legs {
            if matches!(l.outcome, SubOutcome::Pass | SubOutcome::Fail) {
                let was = if l.outcome == SubOutcome::Pass {
                    "pass"
                } else {
                    "fail"
                };
                l.outcome = SubOutcome::Unknown;
                l.note = crate::format_exact!(
                    "{} (would be {was}, but read through a suspected TLS-inspecting proxy)",
                    l.note
                );
            }
        }
    }
    Outcome::from_subs(legs, REDUCTION)
        .with_records(records)
        .with_facts(&facts)
}

/// The first `tls.modern` handshake record (the first connection to the endpoint).
fn first_tls(ev: &Bundle) -> Option<(&Record, &TlsHandshake)> {
    ev.records_for(leg::TLS_MODERN)
        .find_map(|r| match &r.observation {
            Observation::Tls(t) => Some((r, t)),
            _ => None,
        })
}

// ---------------------------------------------------------------------------------------
// a: plaintext

/// Sub-verdict a, its record and its details.
fn plaintext_leg(ev: &Bundle) -> (SubVerdict, Option<u64>, PlaintextFacts) {
    let mut facts = PlaintextFacts::default();
    let Some(x) = ev.exchanges(leg::PLAINTEXT).next() else {
        let why = ev
            .skipped(leg::PLAINTEXT)
            .map(skip_note)
            .unwrap_or_else(|| "no plaintext request was recorded".into());
        return (SubVerdict::new("a", SubOutcome::Unknown, why), None, facts);
    };
    let url = escape_line(&x.http.request.url);
    facts.plaintext_url = Some(url.clone());
    let (outcome, note) = plaintext_decision(&x, &url, &mut facts);
    (SubVerdict::new("a", outcome, note), Some(x.seq()), facts)
}

fn plaintext_decision(
    x: &Exchange<'_>,
    url: &str,
    facts: &mut PlaintextFacts,
) -> (SubOutcome, String) {
    let resp = match &x.http.outcome {
        HttpOutcome::Response(r) => r,
        HttpOutcome::Error(e) => {
            facts.plaintext = PlaintextSeen::Failed(e.kind.as_str());
            let msg = escape_line(&e.message);
            return match e.kind {
                ErrorKind::Connect => (
                    SubOutcome::Pass,
                    crate::format_exact!("{url}: port refused ({msg}); no plaintext service"),
                ),
                ErrorKind::Reset => (
                    SubOutcome::Pass,
                    crate::format_exact!("{url}: port refused (connection reset before any response: {msg})"),
                ),
                ErrorKind::Timeout => (
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "{url}: no answer within the timeout ({msg}): filtered or silently dropped, so no \
                         plaintext service was observed, though a slow one is not excluded"
                    ),
                ),
                ErrorKind::Protocol => (
                    SubOutcome::Pass,
                    crate::format_exact!("{url}: the port answered something that is not HTTP ({msg}) (review)"),
                ),
                _ => (
                    SubOutcome::Error,
                    crate::format_exact!("{url}: {} error ({msg}): decides nothing", e.kind.as_str()),
                ),
            };
        }
    };
    let status = resp.status;
    facts.plaintext = PlaintextSeen::Status(status);
    match status {
        200..=299 => (
            SubOutcome::Fail,
            crate::format_exact!("{url}: HTTP {status}: plaintext served"),
        ),
        426 => (
            SubOutcome::Pass,
            crate::format_exact!("{url}: HTTP 426 Upgrade Required"),
        ),
        301 | 302 | 303 | 307 | 308 => {
            let loc = x.header(header::LOCATION).map(|l| l.trim().to_string());
            facts.plaintext_redirect_target = Some(loc.as_deref().map(escape_line));
            match loc.filter(|l| !l.is_empty()) {
                None => (
                    SubOutcome::Fail,
                    crate::format_exact!("{url}: HTTP {status} redirect with an empty target (no Location)"),
                ),
                Some(l) if l.len() >= 8 && l[..8].eq_ignore_ascii_case("https://") => (
                    SubOutcome::Pass,
                    crate::format_exact!("{url}: HTTP {status} redirect to {}", crate::fmt::Line(&l)),
                ),
                Some(l) => (
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{url}: HTTP {status} redirect to {}, which is not an https:// location (the \
                         plaintext request is served onward in clear)",
                        crate::fmt::Line(&l)
                    ),
                ),
            }
        }
        _ => (
            SubOutcome::Pass,
            crate::format_exact!(
                "{url}: HTTP {status}: neither served nor redirected to https (review)"
            ),
        ),
    }
}

// ---------------------------------------------------------------------------------------
// b / c: legacy versions

/// One legacy-version leg; also whether the version was accepted.
fn legacy_leg(
    ev: &Bundle,
    id: &str,
    leg_id: LegId,
    version: u16,
) -> (SubVerdict, Option<u64>, bool) {
    let name = tlswire::version_text(version);
    let Some((r, p)) = ev.records_for(leg_id).find_map(|r| match &r.observation {
        Observation::LegacyTls(p) => Some((r, p)),
        _ => None,
    }) else {
        let why = ev
            .skipped(leg_id)
            .map(|r| crate::format_exact!("{name} {}", skip_note(r)))
            .unwrap_or_else(|| crate::format_exact!("no {name} probe was recorded"));
        return (SubVerdict::new(id, SubOutcome::Unknown, why), None, false);
    };
    let (outcome, note, accepted) = legacy_decision(p, version);
    (SubVerdict::new(id, outcome, note), Some(r.seq), accepted)
}

/// Grade one recorded legacy probe that was meant to offer `version`.
pub fn legacy_decision(p: &LegacyTlsProbe, version: u16) -> (SubOutcome, String, bool) {
    let name = tlswire::version_text(version);
    // The recorded offer must be the one the leg claims: a probe that offered something
    // else answers a different question.
    match tlswire::parse_client_hello(&p.client_hello) {
        Some(h) if h.client_version == version && p.offered == name => {}
        Some(h) => {
            return (
                SubOutcome::Error,
                crate::format_exact!(
                    "the recorded probe offered {} (labelled {}), not {name}: it answers another question",
                    tlswire::version_text(h.client_version),
                    crate::fmt::Line(&p.offered)
                ),
                false,
            )
        }
        None => {
            return (
                SubOutcome::Error,
                crate::format_exact!(
                    "the recorded {} ClientHello does not parse, so what was offered is not shown",
                    crate::fmt::Line(&p.offered)
                ),
                false,
            )
        }
    }
    let answer = tlswire::parse_server(&p.server_bytes);
    let offered = crate::format_exact!("offered only {name}");
    // A network failure before a complete answer decides nothing: a
    // reset or a timeout is not a refusal.
    if let Some(e) = &p.error {
        if !answer.is_complete() || answer == ServerAnswer::Closed {
            let so_far = if p.server_bytes.is_empty() {
                String::new()
            } else {
                crate::format_exact!(" after {} answer bytes", p.server_bytes.len())
            };
            return (
                SubOutcome::Error,
                crate::format_exact!(
                    "{offered}: network error ({}){so_far}: decides nothing about {name}",
                    crate::fmt::Line(&e.to_string())
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
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{offered}: accepted (ServerHello {name}, suite {})",
                        tlswire::suite_text(cipher_suite)
                    ),
                    true,
                )
            } else if chosen < version {
                (
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{offered}: the server chose the even older {} (suite {})",
                        tlswire::version_text(chosen),
                        tlswire::suite_text(cipher_suite)
                    ),
                    true,
                )
            } else {
                (
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "{offered}: refused: the server answered {} (a non-conformant ServerHello, \
                         but {name} is not negotiated)",
                        tlswire::version_text(chosen)
                    ),
                    false,
                )
            }
        }
        ServerAnswer::Alert { .. } => (
            SubOutcome::Pass,
            crate::format_exact!("{offered}: refused with {answer}"),
            false,
        ),
        ServerAnswer::Closed => (
            SubOutcome::Pass,
            crate::format_exact!("{offered}: refused (connection closed without an answer)"),
            false,
        ),
        ServerAnswer::NotTls { .. } => (
            SubOutcome::Error,
            crate::format_exact!(
                "{offered}: {answer}; the port does not speak TLS, so nothing is decided"
            ),
            false,
        ),
        other => (
            SubOutcome::Error,
            crate::format_exact!("{offered}: {other}: not an answer about TLS versions"),
            false,
        ),
    }
}

// ---------------------------------------------------------------------------------------
// d: negotiated version

/// Sub-verdict d and its details.
fn version_leg(ev: &Bundle, tls: Option<&TlsHandshake>) -> (SubVerdict, VersionFacts) {
    let Some(t) = tls else {
        // No handshake record: the connection failed before TLS, or the leg was skipped.
        let why = ev
            .skipped(leg::TLS_MODERN)
            .map(skip_note)
            .or_else(|| {
                ev.exchanges(leg::ENDPOINT_DETECT)
                    .find_map(|x| match &x.http.outcome {
                        HttpOutcome::Error(e) => Some(crate::format_exact!(
                            "no TLS handshake was recorded: the connection to {} failed ({})",
                            crate::fmt::Line(&x.http.request.url),
                            crate::fmt::Line(&e.to_string())
                        )),
                        _ => None,
                    })
            })
            .unwrap_or_else(|| "no TLS handshake was recorded".into());
        let facts = VersionFacts {
            tls_version: None,
            tls_cipher: None,
        };
        return (SubVerdict::new("d", SubOutcome::Error, why), facts);
    };
    let facts = VersionFacts {
        tls_version: t.version.clone(),
        tls_cipher: Some(t.cipher_suite.clone()),
    };
    (version_decision(t), facts)
}

/// Sub-verdict d from a recorded handshake.
fn version_decision(t: &TlsHandshake) -> SubVerdict {
    match (&t.version, &t.error) {
        (Some(v), _) => {
            let suite = t
                .cipher_suite
                .as_deref()
                .map(|s| crate::format_exact!(" with {}", crate::fmt::Line(s)))
                .unwrap_or_default();
            match v.as_str() {
                "TLSv1_2" | "TLSv1_3" => SubVerdict::new(
                    "d",
                    SubOutcome::Pass,
                    crate::format_exact!("negotiated {v}{suite}"),
                ),
                "TLSv1_0" | "TLSv1_1" | "SSLv3" | "SSLv2" => SubVerdict::new(
                    "d",
                    SubOutcome::Fail,
                    crate::format_exact!("negotiated the obsolete {v}{suite}"),
                ),
                other => SubVerdict::new(
                    "d",
                    SubOutcome::Unknown,
                    crate::format_exact!("negotiated a version this grader does not know ({}){suite}", crate::fmt::Line(other)),
                ),
            }
        }
        (None, Some(e)) if e.kind == ErrorKind::TlsAlert => SubVerdict::new(
            "d",
            SubOutcome::Fail,
            crate::format_exact!(
                "handshake failed: the server ended a TLS 1.2/1.3 handshake with an alert ({}), so no \
                 TLS 1.2+ connection was possible",
                crate::fmt::Line(&e.message)
            ),
        ),
        (None, Some(e)) => SubVerdict::new(
            "d",
            SubOutcome::Error,
            crate::format_exact!(
                "the TLS 1.2/1.3 handshake failed without an attributable alert ({}): decides nothing",
                crate::fmt::Line(&e.to_string())
            ),
        ),
        (None, None) => SubVerdict::new(
            "d",
            SubOutcome::Error,
            "the TLS record names no negotiated version",
        ),
    }
}

/// `not probed: <reason>` for a skipped leg (without the collector's own `not sent:`).
fn skip_note(reason: &str) -> String {
    let r = reason.strip_prefix("not sent: ").unwrap_or(reason);
    crate::format_exact!("not probed: {}", crate::fmt::Line(r))
}

#[cfg(test)]
mod tests;
