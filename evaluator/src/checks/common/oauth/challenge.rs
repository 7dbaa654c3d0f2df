//! The unauthenticated request and its `WWW-Authenticate` challenge.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::HttpOutcome;
use mcp_probe_schema::vocab::{header, leg, LegId};
use mcp_probe_schema::www_authenticate::{self, Challenge};

use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;

/// The unauthenticated request and what it drew.
#[derive(Debug, Clone)]
pub(crate) enum Unauth {
    /// It reached a response (the endpoint requires no credential).
    Reached { seq: u64, what: String },
    /// Refused with 401/403.
    Challenged(Challenged),
    /// Answered otherwise: neither a response nor a 401/403 challenge.
    Other { seq: u64, what: String },
    /// Sent, no response.
    NoResponse { seq: u64, why: String },
    /// Not observed (why).
    NotObserved(String),
}

/// A 401/403 and its `WWW-Authenticate` fields.
#[derive(Debug, Clone)]
pub(crate) struct Challenged {
    pub(crate) seq: u64,
    pub(crate) status: u16,
    /// The leg the record serves.
    pub(crate) source: LegId,
    /// Every `WWW-Authenticate` field, as text for one line.
    pub(crate) fields: Vec<String>,
    /// The lenient reading (the one the collector followed).
    pub(crate) challenges: Vec<Challenge>,
    /// The strict RFC 9110 reading of the same fields.
    pub(crate) well_formed: Vec<Challenge>,
    /// Some element was not RFC 9110 syntax.
    pub(crate) malformed: bool,
}

impl Challenged {
    pub(crate) fn read(x: &Exchange<'_>, source: LegId) -> Challenged {
        let mut fields = Vec::new();
        let mut challenges = Vec::new();
        let mut well_formed = Vec::new();
        let mut malformed = false;
        if let Some(r) = x.response() {
            for h in r
                .headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case(header::WWW_AUTHENTICATE))
            {
                fields.push(escape_line(&h.value_str()));
                let parsed = www_authenticate::parse(&h.value);
                malformed |= parsed.is_malformed();
                challenges.extend(parsed.challenges);
                well_formed.extend(parsed.well_formed);
            }
        }
        Challenged {
            seq: x.seq(),
            status: x.status().unwrap_or_default(),
            source,
            fields,
            challenges,
            well_formed,
            malformed,
        }
    }

    /// `name` from the first `Bearer` challenge carrying it, else from any challenge.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.challenges
            .iter()
            .filter(|c| c.is_scheme("Bearer"))
            .find_map(|c| c.param(name))
            .or_else(|| self.challenges.iter().find_map(|c| c.param(name)))
    }

    pub(crate) fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// True when the strict RFC 9110 reading names `rm` as a `resource_metadata` too (a
    /// strict client finds it).
    pub(crate) fn resource_metadata_well_formed(&self, rm: &str) -> bool {
        self.well_formed
            .iter()
            .any(|c| c.param("resource_metadata") == Some(rm))
    }

    pub(crate) fn scope(&self) -> Option<&str> {
        self.param("scope")
    }

    /// Every challenge names a scheme other than Bearer/DPoP and no OAuth parameter
    /// (`Basic realm=…` only): the 401 is not an OAuth signal.
    pub(crate) fn non_oauth_only(&self) -> bool {
        !self.challenges.is_empty()
            && self.challenges.iter().all(|c| {
                !c.is_scheme("Bearer")
                    && !c.is_scheme("DPoP")
                    && c.param("resource_metadata").is_none()
                    && c.param("scope").is_none()
            })
    }

    /// "the endpoint.detect request (record #1) was refused with HTTP 401".
    pub(crate) fn refused(&self) -> String {
        crate::format_exact!(
            "the unauthenticated {} request (record #{}) was refused with HTTP {}",
            self.source,
            self.seq,
            self.status
        )
    }

    pub(crate) fn quoted(&self) -> String {
        self.fields
            .iter()
            .map(|f| crate::format_exact!("\"{f}\""))
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

pub(crate) fn carries_credential(x: &Exchange<'_>) -> bool {
    derive::header(&x.http.request.headers, header::AUTHORIZATION).is_some()
}

pub(crate) fn method_of(x: &Exchange<'_>) -> String {
    x.request_method()
        .map_or_else(|| "(no method)".into(), |m| escape_line(&m))
}

/// The request sent without the run's credential, and its answer: the 401 that ended
/// an unauthenticated detection (kept when a second, credentialed detection followed a
/// login); else, when no detection request carried a credential, the negotiation that
/// reached a response; else the `2.3.unauthenticated` leg.
pub(crate) fn read_unauth(ev: &Bundle) -> Unauth {
    let detect: Vec<Exchange<'_>> = ev.exchanges(leg::ENDPOINT_DETECT).collect();
    if let Some(x) = detect
        .iter()
        .rev()
        .find(|x| x.status() == Some(401) && !carries_credential(x))
    {
        return Unauth::Challenged(Challenged::read(x, leg::ENDPOINT_DETECT));
    }
    if !detect.iter().any(carries_credential) {
        let Some(s) = ev.session() else {
            return Unauth::NotObserved("no endpoint answered".into());
        };
        if s.auth_required {
            return Unauth::NotObserved(
                "the session records that authentication is required, but no endpoint.detect \
                 record holds the 401"
                    .into(),
            );
        }
        let x = detect
            .iter()
            .rev()
            .find(|x| Some(x.seq()) == s.negotiated_in)
            .or_else(|| {
                detect
                    .iter()
                    .rev()
                    .find(|x| x.status().is_some_and(|st| (200..300).contains(&st)))
            });
        return match x {
            Some(x) => Unauth::Reached {
                seq: x.seq(),
                what: crate::format_exact!(
                    "{} without a credential (endpoint.detect record #{}) was answered HTTP {}",
                    method_of(x),
                    x.seq(),
                    x.status().unwrap_or_default()
                ),
            },
            None => Unauth::NotObserved("no endpoint.detect record was answered".into()),
        };
    }
    let Some(x) = ev.exchanges(leg::AUTH_NONE).last() else {
        return Unauth::NotObserved(match ev.skipped(leg::AUTH_NONE) {
            Some(r) => crate::format_exact!(
                "the run presented its credential from the first request and {} was not sent ({})",
                leg::AUTH_NONE,
                crate::fmt::Line(r)
            ),
            None => crate::format_exact!(
                "the run presented its credential from the first request and the bundle holds no \
                 {} record",
                leg::AUTH_NONE
            ),
        });
    };
    let Some(r) = x.response() else {
        let why = match &x.http.outcome {
            HttpOutcome::Error(e) => escape_line(&e.to_string()),
            HttpOutcome::Response(_) => "no response".into(),
        };
        return Unauth::NoResponse { seq: x.seq(), why };
    };
    let (error, result) = x.with_answer(|answer| {
        (
            answer.and_then(|a| a.get("error")).is_some(),
            answer
                .and_then(|a| a.get("result"))
                .is_some_and(|v| !v.is_null()),
        )
    });
    let streamed = derive::media_type_is(&r.headers, "text/event-stream");
    match r.status {
        401 | 403 => Unauth::Challenged(Challenged::read(&x, leg::AUTH_NONE)),
        200..=299 if !error && (result || streamed || r.body.length == 0) => Unauth::Reached {
            seq: x.seq(),
            what: crate::format_exact!(
                "{} without a credential ({} record #{}) was answered HTTP {}",
                method_of(&x),
                leg::AUTH_NONE,
                x.seq(),
                r.status
            ),
        },
        st => Unauth::Other {
            seq: x.seq(),
            what: crate::format_exact!(
                "{} record #{} was answered HTTP {st}{}",
                leg::AUTH_NONE,
                x.seq(),
                if error { " with a JSON-RPC error" } else { "" }
            ),
        },
    }
}
