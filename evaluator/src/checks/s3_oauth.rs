//! Section 3 OAuth checks on the wire: 3.1.2, 3.2.2, 3.3.2 and 3.3.4 (spec/checks.md
//! §11.3, with §5.1 for discovery, §6.5 for resource coverage, §7 for reading tokens and
//! §15 for "unread" versus "observed absent").
//!
//! Nothing here sends anything: the collector records, this module decides. It reads
//!
//! * the unauthenticated challenge: the 401 on `endpoint.detect` when the run presented
//!   no credential, else the `2.3.unauthenticated` leg (the one request sent without the
//!   run's credential); its `WWW-Authenticate` is parsed from the raw bytes by
//!   [`www_authenticate::parse`] (RFC 9110 §11.6.1; never panics, so a non-ASCII byte
//!   cannot turn 3.1.2 into ERROR, spec §17 item 29b);
//! * `discovery.prm`: one GET per RFC 9728 candidate URL, and `discovery.as`: the RFC 8414
//!   / OIDC forms per advertised authorization server (at most [`AS_LIST_CAP`]);
//! * `payload.tokens`: facts about the access tokens the run held (never the tokens).
//!
//! "Offers OAuth" (spec §3.6) is any of: the endpoint refused an unauthenticated request
//! with 401/403 (unless every challenge names a non-OAuth scheme only, such as `Basic`),
//! a token is held, a protected-resource metadata (PRM) document was parsed, AS metadata
//! resolved, or the challenge names a `scope`. A server that observably offers none of
//! these gets N/A on 3.2.2, 3.3.2 and 3.3.4 — but only when the absence was observed:
//! every PRM candidate answered a clean 404. A guard refusal, a transport failure, a 5xx
//! or a 200 that is not a JSON object leaves discovery *unread*, and the verdict is
//! UNKNOWN, never N/A (§15). 3.1.2a fails on such a server: an unauthenticated request
//! reached a response.
//!
//! The discovery legs are required only once an endpoint answered (a bundle without an
//! endpoint is ERROR "no MCP endpoint"); a bundle from a collector that predates
//! discovery is ERROR naming the missing leg, with the runner's wording.

use std::collections::BTreeSet;

use mcp_probe_schema::derive;
use mcp_probe_schema::host;
use mcp_probe_schema::model::{BodyEnd, ErrorKind, HttpOutcome, Observation, TokenFacts};
use mcp_probe_schema::vocab::{header, leg, LegId};
use mcp_probe_schema::www_authenticate::{self, Challenge};
use serde_json::{json, Map, Value};
use url::Url;

use super::common::values::or_null;
use crate::check::{Check, Context, Legs, Needs};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::{line, utc};
use crate::grade::missing_legs;
use crate::verdict::{aggregate, Leg, LegOutcome, Outcome, Verdict};
use mcp_probe_schema::model::Era;

/// The longest issued access-token lifetime 3.1.2b accepts, in seconds: the benchmark's
/// baseline for a "short-lived" token (3600 s). A constant until the operator policy
/// file exists; a policy value will then replace it and the evidence will name which
/// limit was applied.
pub const MAX_TOKEN_LIFETIME_SECS: i64 = 3600;

pub use mcp_probe_schema::vocab::well_known::AS_LIST_CAP;
use mcp_probe_schema::vocab::well_known::{
    AS as AS_WELL_KNOWN, OIDC as OIDC_WELL_KNOWN, PRM as PRM_WELL_KNOWN,
};

// ---------------------------------------------------------------------------------------
// URIs (spec §6.5, §11.3 3.2.2 step 4)
// ---------------------------------------------------------------------------------------

/// The canonical resource URI of an endpoint (RFC 8707; the SDK's
/// `resource_url_from_server_url`): the URL with its fragment dropped, scheme and host
/// lower-cased. `None` when the endpoint is not a hierarchical URL.
pub fn canonical_resource(endpoint: &str) -> Option<String> {
    let mut u = Url::parse(endpoint).ok()?;
    if u.cannot_be_a_base() || u.host_str().is_none() {
        return None;
    }
    u.set_fragment(None);
    Some(u.to_string())
}

/// Does `configured` cover `requested` (the SDK's `check_resource_allowed`): same scheme,
/// host and port, and the requested path at or below the configured path, compared with
/// a trailing `/` on both so `/api123` is not under `/api`. `None` when either is not
/// parsable as a URI.
pub fn resource_covers(configured: &str, requested: &str) -> Option<bool> {
    let c = Url::parse(configured).ok()?;
    let r = Url::parse(requested).ok()?;
    if c.scheme() != r.scheme()
        || c.host_str() != r.host_str()
        || c.port_or_known_default() != r.port_or_known_default()
    {
        return Some(false);
    }
    let (mut cp, mut rp) = (c.path().to_string(), r.path().to_string());
    if rp.len() < cp.len() {
        return Some(false);
    }
    if !cp.ends_with('/') {
        cp.push('/');
    }
    if !rp.ends_with('/') {
        rp.push('/');
    }
    Some(rp.starts_with(&cp))
}

/// One trailing slash removed (the 3.2.2 audience comparison).
fn strip_slash(s: &str) -> &str {
    s.strip_suffix('/').unwrap_or(s)
}

/// A URL in the form used to match records to expected URLs: parsed and re-serialised
/// (case, default port), fragment dropped, one trailing slash removed.
fn norm(u: &str) -> String {
    match Url::parse(u) {
        Ok(mut p) => {
            p.set_fragment(None);
            strip_slash(p.as_str()).to_string()
        }
        Err(_) => strip_slash(u.trim()).to_string(),
    }
}

/// How a URL's transport reads for 3.3.2a/c.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Tls,
    LoopbackPlain,
    Plain,
}

fn transport_of(url: &str) -> Transport {
    match Url::parse(url) {
        Ok(u) if u.scheme() == "https" => Transport::Tls,
        Ok(u) if host::is_loopback_url(&u) => Transport::LoopbackPlain,
        _ => Transport::Plain,
    }
}

/// The RFC 9728 candidates a client derives from the endpoint: the path-inserted
/// well-known URL (the endpoint's path and query after the well-known suffix), then the
/// root one (one URL when the endpoint has no path).
fn prm_well_known(endpoint: &str) -> Vec<String> {
    let Ok(u) = Url::parse(endpoint) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path();
    let root = format!("{origin}{PRM_WELL_KNOWN}");
    if path.is_empty() || path == "/" {
        return vec![root];
    }
    let mut inserted = format!("{origin}{PRM_WELL_KNOWN}{path}");
    if let Some(q) = u.query() {
        inserted.push('?');
        inserted.push_str(q);
    }
    vec![inserted, root]
}

/// The RFC 8414 / OIDC discovery URLs of an issuer (spec §5.1 item 4, plus the RFC 8414
/// form appended to the issuer, which some clients try); `None` when the issuer is not
/// an http(s) URL.
fn as_forms(issuer: &str) -> Option<Vec<String>> {
    let u = Url::parse(issuer).ok()?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return None;
    }
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    Some(if path.is_empty() {
        vec![
            format!("{origin}{AS_WELL_KNOWN}"),
            format!("{origin}{OIDC_WELL_KNOWN}"),
        ]
    } else {
        let base = format!("{origin}{path}");
        vec![
            format!("{origin}{AS_WELL_KNOWN}{path}"),
            format!("{origin}{OIDC_WELL_KNOWN}{path}"),
            format!("{base}{OIDC_WELL_KNOWN}"),
            format!("{base}{AS_WELL_KNOWN}"),
        ]
    })
}

// ---------------------------------------------------------------------------------------
// Tokens (spec §7)
// ---------------------------------------------------------------------------------------

fn claims(t: &TokenFacts) -> Option<&Map<String, Value>> {
    t.jwt_claims.as_ref().and_then(Value::as_object)
}

/// A number claim as f64 (integers and finite floats).
fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|f| f.is_finite())
}

/// The issued lifetime in seconds and where it came from: `expires_in` from the token
/// response, else `exp - iat` (rounded up). Never the wall clock: a token read late in
/// its life would look shorter than issued.
pub fn issued_lifetime(t: &TokenFacts) -> Option<(i64, &'static str)> {
    if let Some(e) = t.expires_in {
        return Some((e, "expires_in of the token response"));
    }
    let c = claims(t)?;
    let (exp, iat) = (num(c.get("exp"))?, num(c.get("iat"))?);
    let d = (exp - iat).ceil();
    (d.abs() < 1e15).then_some((d as i64, "exp - iat of the JWT claims"))
}

/// Granted scopes (spec §7 `observed_scopes`): the token response's `scope` wins even
/// when empty; else claim `scope`, else `scp` (a string split on whitespace, or a list's
/// strings); a claim of another type is skipped. `None` (unobserved) is not `Some([])`
/// (observed empty).
pub fn observed_scopes(
    scope_field: Option<&str>,
    claims: Option<&Map<String, Value>>,
) -> Option<Vec<String>> {
    if let Some(s) = scope_field {
        return Some(dedup(s.split_whitespace().map(str::to_string)));
    }
    let c = claims?;
    for name in ["scope", "scp"] {
        match c.get(name) {
            Some(Value::String(s)) => return Some(dedup(s.split_whitespace().map(str::to_string))),
            Some(Value::Array(a)) => {
                return Some(dedup(
                    a.iter().filter_map(Value::as_str).map(str::to_string),
                ))
            }
            _ => {}
        }
    }
    None
}

/// `aud` as a list: a string, or a list's strings.
pub fn audiences(claims: Option<&Map<String, Value>>) -> Vec<String> {
    match claims.and_then(|c| c.get("aud")) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Scopes whose last colon-separated segment is exactly `*` (`*`, `admin:*`).
pub fn wildcards(scopes: &[String]) -> Vec<String> {
    scopes
        .iter()
        .filter(|s| s.rsplit(':').next() == Some("*"))
        .cloned()
        .collect()
}

/// Scopes whose first colon-separated segment is `admin`.
pub fn admin_tier(scopes: &[String]) -> Vec<String> {
    scopes
        .iter()
        .filter(|s| s.split(':').next() == Some("admin"))
        .cloned()
        .collect()
}

fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// "the token (env:MCP_TOKEN)" or "token #2 (oauth)".
fn token_label(i: usize, t: &TokenFacts, n: usize) -> String {
    if n == 1 {
        format!("the token ({})", line(&t.source))
    } else {
        format!("token #{} ({})", i + 1, line(&t.source))
    }
}

/// A list for evidence: JSON array syntax, escaped for one line.
fn shown(items: &[String]) -> String {
    line(&serde_json::to_string(items).unwrap_or_default())
}

/// A JSON value for evidence, cut at 160 characters.
fn shown_value(v: &Value) -> String {
    let s = v.to_string();
    let cut: String = s.chars().take(160).collect();
    let more = if cut.len() < s.len() { "…" } else { "" };
    format!("{}{more}", line(&cut))
}

// ---------------------------------------------------------------------------------------
// Discovery records (spec §5.1)
// ---------------------------------------------------------------------------------------

/// What one discovery record got.
#[derive(Debug, Clone)]
enum Got {
    /// HTTP 200 whose body parses as a JSON object.
    Doc(Map<String, Value>),
    /// Any other response: the status and a description.
    Answer(u16, String),
    /// No response: the transport error (a guard refusal included: nothing was sent).
    Failed(ErrorKind, String),
    /// A response the collector recorded but did not use (its skipped note follows it:
    /// the answer came from an address the guard refuses, DNS rebinding).
    NotUsed(String),
    /// A skipped record: the reason.
    Skipped(String),
}

/// One discovery record.
#[derive(Debug, Clone)]
struct Attempt {
    seq: u64,
    url: String,
    got: Got,
}

impl Attempt {
    fn read(r: &mcp_probe_schema::model::Record) -> Option<Attempt> {
        match &r.observation {
            Observation::Http(x) => {
                let got = match &x.outcome {
                    HttpOutcome::Error(e) => Got::Failed(e.kind, line(&e.message)),
                    HttpOutcome::Response(resp) => {
                        let whole = matches!(
                            resp.body.end,
                            BodyEnd::Complete | BodyEnd::StoppedAfterResponse
                        );
                        let doc = (resp.status == 200 && whole)
                            .then(|| serde_json::from_slice::<Value>(&resp.body.bytes).ok())
                            .flatten();
                        match doc {
                            Some(Value::Object(m)) => Got::Doc(m),
                            _ if resp.status == 200 && !whole => Got::Answer(
                                200,
                                "HTTP 200 whose body was not read whole".to_string(),
                            ),
                            _ if resp.status == 200 => Got::Answer(
                                200,
                                "HTTP 200 whose body is not a JSON object".to_string(),
                            ),
                            _ => Got::Answer(resp.status, format!("HTTP {}", resp.status)),
                        }
                    }
                };
                Some(Attempt {
                    seq: r.seq,
                    url: x.request.url.clone(),
                    got,
                })
            }
            Observation::Skipped { reason } => Some(Attempt {
                seq: r.seq,
                url: String::new(),
                got: Got::Skipped(line(reason)),
            }),
            _ => None,
        }
    }

    /// The records of `l`, a "not used" note marking the exchange it follows.
    fn of_leg(ev: &Evidence, l: LegId) -> Vec<Attempt> {
        let mut out: Vec<Attempt> = Vec::new();
        for a in ev.records_for(l).filter_map(Attempt::read) {
            if let (Got::Skipped(reason), Some(prev)) = (&a.got, out.last_mut()) {
                if reason.starts_with("not used")
                    && !prev.url.is_empty()
                    && reason.contains(prev.url.as_str())
                    && prev.is_fetch()
                {
                    prev.got = Got::NotUsed(reason.clone());
                    continue;
                }
            }
            out.push(a);
        }
        out
    }

    fn doc(&self) -> Option<&Map<String, Value>> {
        match &self.got {
            Got::Doc(m) => Some(m),
            _ => None,
        }
    }

    fn clean_404(&self) -> bool {
        matches!(self.got, Got::Answer(404, _))
    }

    fn guard_refused(&self) -> bool {
        matches!(self.got, Got::Failed(ErrorKind::RefusedByGuard, _))
    }

    fn is_fetch(&self) -> bool {
        !matches!(self.got, Got::Skipped(_))
    }

    fn why(&self) -> String {
        match &self.got {
            Got::Doc(_) => "HTTP 200 with a JSON document".into(),
            Got::Answer(_, what) => what.clone(),
            Got::Failed(ErrorKind::RefusedByGuard, m) => {
                format!("refused by the network guard, nothing sent: {m}")
            }
            Got::Failed(k, m) => format!("no response: {}: {m}", k.as_str()),
            Got::NotUsed(r) => format!("answer not used by the collector: {r}"),
            Got::Skipped(r) => format!("not fetched: {r}"),
        }
    }

    /// "<url> (record #n: why)".
    fn shown(&self) -> String {
        if self.url.is_empty() {
            format!("record #{} ({})", self.seq, self.why())
        } else {
            format!("{} (record #{}: {})", line(&self.url), self.seq, self.why())
        }
    }
}

/// The `authorization_servers` member of the selected PRM document.
#[derive(Debug, Clone)]
struct AsList {
    /// Non-blank strings, in advertised order.
    entries: Vec<String>,
    /// Elements that are not non-blank strings.
    discarded: usize,
    /// The member as served (null when absent).
    raw: Value,
}

/// One advertised authorization server and the discovery records attributed to it.
#[derive(Debug, Clone)]
struct AsView {
    entry: String,
    forms: Option<Vec<String>>,
    attempts: Vec<Attempt>,
}

impl AsView {
    /// The first attempt that served metadata carrying a non-empty string `issuer`.
    fn resolved(&self) -> Option<(&Attempt, &Map<String, Value>)> {
        self.attempts.iter().find_map(|a| {
            let d = a.doc()?;
            d.get("issuer")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|_| (a, d))
        })
    }

    fn issuer(&self) -> Option<&str> {
        self.resolved()
            .and_then(|(_, d)| d.get("issuer").and_then(Value::as_str))
    }

    /// Why it did not resolve.
    fn unresolved_why(&self) -> String {
        if self.forms.is_none() {
            return "the entry is not an http(s) URL, so no discovery form can be built from it"
                .into();
        }
        if self.attempts.is_empty() {
            return "no discovery form was attempted (the bundle holds no discovery.as record \
                    for it)"
                .into();
        }
        let tried: Vec<String> = self.attempts.iter().map(Attempt::shown).collect();
        format!(
            "no discovery form served metadata carrying an issuer; {} form(s) tried: {}",
            self.attempts.len(),
            tried.join(", ")
        )
    }
}

/// Attribute a `discovery.as` URL to an advertised entry: one of its discovery forms,
/// else the entry on the same origin whose issuer path the URL contains (the longest; a
/// root issuer last). `None` when no entry fits.
fn attribute(url: &str, views: &[AsView]) -> Option<usize> {
    if let Some(i) = views.iter().position(|v| v.entry == url) {
        // A refusal recorded under the issuer string itself (not a URL).
        return Some(i);
    }
    let n = norm(url);
    if let Some(i) = views.iter().position(|v| {
        v.forms
            .as_ref()
            .is_some_and(|f| f.iter().any(|f| norm(f) == n))
    }) {
        return Some(i);
    }
    let u = Url::parse(url).ok()?;
    views
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let e = Url::parse(&v.entry).ok()?;
            let p = e.path().trim_end_matches('/').to_string();
            (e.origin() == u.origin() && (p.is_empty() || u.path().contains(p.as_str())))
                .then_some((i, p.len()))
        })
        .max_by_key(|(i, len)| (*len, std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// The unauthenticated request and what it drew.
#[derive(Debug, Clone)]
enum Unauth {
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
struct Challenged {
    seq: u64,
    status: u16,
    /// The leg the record serves.
    source: LegId,
    /// Every `WWW-Authenticate` field, as text for one line.
    fields: Vec<String>,
    /// The lenient reading (the one the collector followed).
    challenges: Vec<Challenge>,
    /// The strict RFC 9110 reading of the same fields.
    well_formed: Vec<Challenge>,
    /// Some element was not RFC 9110 syntax.
    malformed: bool,
}

impl Challenged {
    fn read(x: &Exchange<'_>, source: LegId) -> Challenged {
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
                fields.push(line(&h.value_str()));
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
    fn param(&self, name: &str) -> Option<&str> {
        self.challenges
            .iter()
            .filter(|c| c.is_scheme("Bearer"))
            .find_map(|c| c.param(name))
            .or_else(|| self.challenges.iter().find_map(|c| c.param(name)))
    }

    fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// True when the strict RFC 9110 reading names `rm` as a `resource_metadata` too (a
    /// strict client finds it).
    fn resource_metadata_well_formed(&self, rm: &str) -> bool {
        self.well_formed
            .iter()
            .any(|c| c.param("resource_metadata") == Some(rm))
    }

    fn scope(&self) -> Option<&str> {
        self.param("scope")
    }

    /// Every challenge names a scheme other than Bearer/DPoP and no OAuth parameter
    /// (`Basic realm=…` only): the 401 is not an OAuth signal.
    fn non_oauth_only(&self) -> bool {
        !self.challenges.is_empty()
            && self.challenges.iter().all(|c| {
                !c.is_scheme("Bearer")
                    && !c.is_scheme("DPoP")
                    && c.param("resource_metadata").is_none()
                    && c.param("scope").is_none()
            })
    }

    /// "the endpoint.detect request (record #1) was refused with HTTP 401".
    fn refused(&self) -> String {
        format!(
            "the unauthenticated {} request (record #{}) was refused with HTTP {}",
            self.source, self.seq, self.status
        )
    }

    fn quoted(&self) -> String {
        self.fields
            .iter()
            .map(|f| format!("\"{f}\""))
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

fn carries_credential(x: &Exchange<'_>) -> bool {
    derive::header(&x.http.request.headers, header::AUTHORIZATION).is_some()
}

fn method_of(x: &Exchange<'_>) -> String {
    x.request_json()
        .and_then(|j| j.get("method").and_then(Value::as_str).map(line))
        .unwrap_or_else(|| "(no method)".into())
}

/// The request sent without the run's credential, and its answer: the 401 that ended
/// an unauthenticated detection (kept when a second, credentialed detection followed a
/// login); else, when no detection request carried a credential, the negotiation that
/// reached a response; else the `2.3.unauthenticated` leg.
fn read_unauth(ev: &Evidence) -> Unauth {
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
                what: format!(
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
            Some(r) => format!(
                "the run presented its credential from the first request and {} was not sent ({})",
                leg::AUTH_NONE,
                line(r)
            ),
            None => format!(
                "the run presented its credential from the first request and the bundle holds no \
                 {} record",
                leg::AUTH_NONE
            ),
        });
    };
    let Some(r) = x.response() else {
        let why = match &x.http.outcome {
            HttpOutcome::Error(e) => line(&e.to_string()),
            HttpOutcome::Response(_) => "no response".into(),
        };
        return Unauth::NoResponse { seq: x.seq(), why };
    };
    let answer = x.answer();
    let error = answer.as_ref().and_then(|a| a.get("error")).is_some();
    let result = answer
        .as_ref()
        .and_then(|a| a.get("result"))
        .is_some_and(|v| !v.is_null());
    let streamed = derive::media_type(&r.headers).as_deref() == Some("text/event-stream");
    match r.status {
        401 | 403 => Unauth::Challenged(Challenged::read(&x, leg::AUTH_NONE)),
        200..=299 if !error && (result || streamed || r.body.length == 0) => Unauth::Reached {
            seq: x.seq(),
            what: format!(
                "{} without a credential ({} record #{}) was answered HTTP {}",
                method_of(&x),
                leg::AUTH_NONE,
                x.seq(),
                r.status
            ),
        },
        st => Unauth::Other {
            seq: x.seq(),
            what: format!(
                "{} record #{} was answered HTTP {st}{}",
                leg::AUTH_NONE,
                x.seq(),
                if error { " with a JSON-RPC error" } else { "" }
            ),
        },
    }
}

/// Everything the four checks read, derived once per grading of one check.
struct Facts<'a> {
    ev: &'a Evidence,
    endpoint: String,
    auth_required: bool,
    unauth: Unauth,
    prm: Vec<Attempt>,
    /// Candidate URLs a client derives (challenge URL, path-inserted, root), for
    /// "never attempted".
    expected_prm: Vec<String>,
    advertised: Option<AsList>,
    /// The advertised servers within the cap.
    servers: Vec<AsView>,
    /// `discovery.as` records attributed to no advertised server, and skipped ones.
    as_other: Vec<Attempt>,
}

impl<'a> Facts<'a> {
    /// `None` when no endpoint answered.
    fn new(ev: &'a Evidence) -> Option<Facts<'a>> {
        let session = ev.session()?;
        let endpoint = ev.endpoint();
        let unauth = read_unauth(ev);
        let prm = Attempt::of_leg(ev, leg::PRM);
        let mut expected_prm = Vec::new();
        if let Unauth::Challenged(c) = &unauth {
            if let Some(rm) = c.resource_metadata().filter(|s| !s.trim().is_empty()) {
                if Url::parse(rm).is_ok() {
                    expected_prm.push(rm.to_string());
                }
            }
        }
        for u in prm_well_known(&endpoint) {
            if !expected_prm.iter().any(|e| norm(e) == norm(&u)) {
                expected_prm.push(u);
            }
        }
        let advertised = prm.iter().find_map(Attempt::doc).map(|d| {
            let raw = d
                .get("authorization_servers")
                .cloned()
                .unwrap_or(Value::Null);
            let (entries, discarded) = match &raw {
                Value::Array(a) => {
                    let e: Vec<String> = a
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                        .map(str::to_string)
                        .collect();
                    let n = e.len();
                    (e, a.len() - n)
                }
                _ => (Vec::new(), 0),
            };
            AsList {
                entries,
                discarded,
                raw,
            }
        });
        let mut servers: Vec<AsView> = advertised
            .iter()
            .flat_map(|a| a.entries.iter().take(AS_LIST_CAP))
            .map(|e| AsView {
                entry: e.clone(),
                forms: as_forms(e),
                attempts: Vec::new(),
            })
            .collect();
        let mut as_other = Vec::new();
        for a in Attempt::of_leg(ev, leg::AS_META) {
            match (a.is_fetch(), attribute(&a.url, &servers)) {
                (true, Some(i)) => servers[i].attempts.push(a),
                _ => as_other.push(a),
            }
        }
        Some(Facts {
            ev,
            endpoint,
            auth_required: session.auth_required,
            unauth,
            prm,
            expected_prm,
            advertised,
            servers,
            as_other,
        })
    }

    fn challenge(&self) -> Option<&Challenged> {
        match &self.unauth {
            Unauth::Challenged(c) => Some(c),
            _ => None,
        }
    }

    fn tokens(&self) -> &'a [TokenFacts] {
        &self.ev.payload.tokens
    }

    fn docs(&self) -> impl Iterator<Item = &Attempt> {
        self.prm.iter().filter(|a| a.doc().is_some())
    }

    /// The first PRM document in candidate (record) order.
    fn selected(&self) -> Option<(&Attempt, &Map<String, Value>)> {
        self.prm.iter().find_map(|a| a.doc().map(|d| (a, d)))
    }

    /// The PRM document at `url`, if one was served there.
    fn doc_at(&self, url: &str) -> Option<(&Attempt, &Map<String, Value>)> {
        let n = norm(url);
        self.prm
            .iter()
            .filter(|a| norm(&a.url) == n)
            .find_map(|a| a.doc().map(|d| (a, d)))
    }

    /// Why PRM discovery did not decide (spec §11.3 `unread("prm:")`): empty when a
    /// document was parsed, or when every candidate answered a clean 404 (the absence
    /// was observed).
    fn prm_unread(&self) -> Vec<String> {
        if self.docs().next().is_some() {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .prm
            .iter()
            .filter(|a| !a.clean_404())
            .map(Attempt::shown)
            .collect();
        for e in &self.expected_prm {
            let n = norm(e);
            if !self.prm.iter().any(|a| norm(&a.url) == n) {
                out.push(format!("{} (never attempted)", line(e)));
            }
        }
        if self.prm.is_empty() && out.is_empty() {
            out.push("no protected-resource metadata discovery was attempted at all".into());
        }
        out
    }

    /// The clean 404s, for the "observed absent" evidence.
    fn prm_404s(&self) -> Vec<String> {
        self.prm
            .iter()
            .filter(|a| a.clean_404())
            .map(|a| format!("{} (record #{})", line(&a.url), a.seq))
            .collect()
    }

    fn guard_refused_urls(&self) -> Vec<String> {
        self.prm
            .iter()
            .chain(self.servers.iter().flat_map(|s| s.attempts.iter()))
            .chain(self.as_other.iter())
            .filter(|a| a.guard_refused())
            .map(|a| a.url.clone())
            .collect()
    }

    fn resolved(&self) -> impl Iterator<Item = (&AsView, &Map<String, Value>)> {
        self.servers
            .iter()
            .filter_map(|s| s.resolved().map(|(_, d)| (s, d)))
    }

    /// Advertised entries beyond the cap.
    fn past_cap(&self) -> usize {
        self.advertised
            .as_ref()
            .map_or(0, |a| a.entries.len().saturating_sub(AS_LIST_CAP))
    }

    /// Why the server is seen to offer OAuth (spec §3.6 `offers_oauth`); empty when it
    /// is not.
    fn signals(&self) -> Vec<String> {
        let mut out = Vec::new();
        let non_oauth = self.challenge().is_some_and(Challenged::non_oauth_only);
        if self.auth_required && !non_oauth {
            out.push("the endpoint refuses an unauthenticated request (auth_required)".into());
        }
        for (i, t) in self.tokens().iter().enumerate() {
            out.push(format!(
                "{} is held",
                token_label(i, t, self.tokens().len())
            ));
        }
        if let Some((a, _)) = self.selected() {
            out.push(format!(
                "a protected-resource metadata document is published at {}",
                line(&a.url)
            ));
        }
        for (s, _) in self.resolved() {
            out.push(format!(
                "authorization-server metadata resolved for {}",
                line(&s.entry)
            ));
        }
        if let Some(s) = self.challenge().and_then(Challenged::scope) {
            out.push(format!("the challenge names scope \"{}\"", line(s)));
        }
        out
    }

    /// What was observed absent, for an N/A.
    fn absence(&self) -> String {
        let unauth = match &self.unauth {
            Unauth::Reached { what, .. } => format!("no 401: {what}"),
            Unauth::Challenged(c) => format!(
                "{} whose challenge names no OAuth scheme ({})",
                c.refused(),
                c.quoted()
            ),
            _ => "no 401 was observed".into(),
        };
        format!(
            "{unauth}; no token held; every protected-resource metadata candidate answered a clean \
             404 ({}); no challenge scope; no authorization server advertised",
            self.prm_404s().join(", ")
        )
    }

    /// Granted scopes across the tokens held (`None` when no token states any).
    fn granted(&self) -> Option<Vec<String>> {
        let per: Vec<Vec<String>> = self
            .tokens()
            .iter()
            .filter_map(|t| observed_scopes(t.scope.as_deref(), claims(t)))
            .collect();
        (!per.is_empty()).then(|| dedup(per.into_iter().flatten()))
    }

    /// The selected PRM document's `scopes_supported` strings (`None` when absent or not
    /// a list).
    fn resource_scopes(&self) -> Option<Vec<String>> {
        let (_, d) = self.selected()?;
        let a = d.get("scopes_supported")?.as_array()?;
        Some(dedup(
            a.iter().filter_map(Value::as_str).map(str::to_string),
        ))
    }

    /// The union of `scopes_supported` over resolved AS metadata (`None` when no resolved
    /// document lists any field).
    fn as_scopes(&self) -> Option<Vec<String>> {
        let lists: Vec<Vec<String>> = self
            .resolved()
            .filter_map(|(_, d)| d.get("scopes_supported").and_then(Value::as_array))
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        (!lists.is_empty()).then(|| dedup(lists.into_iter().flatten()))
    }

    /// Seqs of the challenge and of every discovery record.
    fn seqs(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.prm.iter().map(|a| a.seq).collect();
        v.extend(
            self.servers
                .iter()
                .flat_map(|s| s.attempts.iter().map(|a| a.seq)),
        );
        v.extend(self.as_other.iter().map(|a| a.seq));
        match &self.unauth {
            Unauth::Reached { seq, .. }
            | Unauth::Other { seq, .. }
            | Unauth::NoResponse { seq, .. } => v.push(*seq),
            Unauth::Challenged(c) => v.push(c.seq),
            Unauth::NotObserved(_) => {}
        }
        v
    }

    fn attempts_shown(&self) -> Vec<String> {
        self.prm
            .iter()
            .chain(self.servers.iter().flat_map(|s| s.attempts.iter()))
            .chain(self.as_other.iter())
            .map(Attempt::shown)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Shared outcome helpers
// ---------------------------------------------------------------------------------------

/// ERROR: no endpoint answered.
fn no_endpoint(ev: &Evidence) -> Outcome {
    let failure = ev
        .payload
        .run
        .failure
        .as_deref()
        .map_or_else(|| "no session was recorded".to_string(), line);
    Outcome::single(
        Verdict::Error,
        format!("no MCP endpoint answered, so there is nothing to grade: {failure}"),
        "",
    )
}

/// The endpoint gate and the legs required past it.
fn prelude<'a>(ev: &'a Evidence, legs: &[LegId]) -> Result<Facts<'a>, Box<Outcome>> {
    let Some(f) = Facts::new(ev) else {
        return Err(Box::new(no_endpoint(ev)));
    };
    let absent: Vec<LegId> = legs.iter().copied().filter(|l| !ev.has_leg(*l)).collect();
    if !absent.is_empty() {
        return Err(Box::new(missing_legs(ev, &absent)));
    }
    Ok(f)
}

fn legs_map(legs: &[Leg]) -> Map<String, Value> {
    legs.iter()
        .map(|l| {
            (
                l.id.clone(),
                serde_json::to_value(l.outcome).unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// "baseline <path> collected <time>".
fn describe_baseline(b: &Evidence) -> String {
    format!(
        "baseline {} collected {}",
        line(&b.path),
        utc(b.payload.run.started_at)
    )
}

/// The baseline to compare with, or the unknown leg that says why there is none.
fn baseline_for<'b>(
    ev: &Evidence,
    cx: &Context<'b>,
    id: &str,
    now: &str,
) -> Result<&'b Evidence, Leg> {
    if cx.updating_baseline {
        return Err(Leg::new(
            id,
            LegOutcome::Unknown,
            format!(
                "this run records the baseline ({now}); a run that compares nothing cannot pass"
            ),
        ));
    }
    let Some(b) = cx.baseline else {
        return Err(Leg::new(
            id,
            LegOutcome::Unknown,
            "no baseline is recorded for this endpoint, so there is nothing to compare with; record \
             one with --update-baseline (or give --baseline) and the next run decides",
        ));
    };
    if b.endpoint() != ev.endpoint() {
        return Err(Leg::new(
            id,
            LegOutcome::Unknown,
            format!(
                "the {} is of endpoint {}, not of {}; different endpoints are not compared",
                describe_baseline(b),
                line(&b.endpoint()),
                line(&ev.endpoint())
            ),
        ));
    }
    Ok(b)
}

/// Worst of per-item outcomes (fail > error > unknown > pass), as one leg.
fn combine(id: &str, parts: Vec<(LegOutcome, String)>) -> Leg {
    let probe: Vec<Leg> = parts.iter().map(|(o, _)| Leg::new(id, *o, "")).collect();
    let outcome = match aggregate(&probe) {
        Verdict::Fail => LegOutcome::Fail,
        Verdict::Error => LegOutcome::Error,
        Verdict::Pass => LegOutcome::Pass,
        _ => LegOutcome::Unknown,
    };
    let note = parts
        .into_iter()
        .map(|(_, n)| n)
        .collect::<Vec<_>>()
        .join("; ");
    Leg::new(id, outcome, note)
}

// ---------------------------------------------------------------------------------------
// 3.1.2
// ---------------------------------------------------------------------------------------

/// 3.1.2: OAuth 2.1 / OIDC or short-lived tokens for remote servers.
#[derive(Debug)]
pub struct Check3_1_2;
/// The 3.1.2 check.
pub static C3_1_2: Check3_1_2 = Check3_1_2;

const REDUCTION_3_1_2: &str = "the lifetime limit is the benchmark's baseline (3600 s), not an operator \
     policy (no policy file is read yet); the lifetime is the one issued (expires_in, else exp - iat), \
     never the time left, and an opaque token without a token response has none readable; revocation and \
     refresh-token lifetimes are not observed; 3.1.2c and d record authorization-server metadata (RFC 9207 \
     iss parameter, dynamic client registration, client authentication methods) and never move the \
     verdict; the authorization server's OAuth 2.1 / OIDC conformance is not tested beyond that metadata";

impl Check for Check3_1_2 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // Required in `grade`, after the endpoint gate: endpoint.detect. Read when
        // present: 2.3.unauthenticated (when the run presented a credential from the
        // start), discovery.prm and discovery.as (legs c and d).
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        // The challenge and the discovery precede any session: a 401-only bundle grades.
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let f = match prelude(ev, &[leg::ENDPOINT_DETECT]) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let a = leg_3_1_2a(&f);
        let (b, lifetimes) = leg_3_1_2b(&f);
        let (c, d, server) = legs_3_1_2cd(&f);
        let legs = vec![a, b, c, d];
        let challenge = f.challenge();
        Outcome::from_legs(legs.clone(), REDUCTION_3_1_2)
            .with_records(f.seqs())
            .with_detail("legs", legs_map(&legs))
            .with_detail("auth_required", f.auth_required)
            .with_detail("challenge_source", or_null(challenge.map(|c| c.source)))
            .with_detail(
                "www_authenticate",
                challenge.map_or(Value::Null, |c| json!(c.fields)),
            )
            .with_detail(
                "resource_metadata",
                or_null(challenge.and_then(|c| c.resource_metadata()).map(line)),
            )
            .with_detail("token_lifetimes_seconds", Value::Array(lifetimes))
            .with_detail("lifetime_limit_seconds", MAX_TOKEN_LIFETIME_SECS)
            .with_detail("authorization_server", or_null(server))
    }
}

fn leg_3_1_2a(f: &Facts<'_>) -> Leg {
    const ID: &str = "3.1.2a";
    match &f.unauth {
        Unauth::Reached { what, .. } => Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "authentication is not required: an unauthenticated request reached a response instead \
                 of a 401 challenge ({what})"
            ),
        ),
        Unauth::Challenged(c) => {
            let caveat = if c.status == 403 {
                " (403 where RFC 6750 expects 401 for a request without credentials; accepted as the \
                 refusal)"
            } else {
                ""
            };
            let syntax = if c.malformed {
                "; part of the field is not RFC 9110 syntax"
            } else {
                ""
            };
            if c.fields.is_empty() {
                return Leg::new(
                    ID,
                    LegOutcome::Fail,
                    format!(
                        "{}{caveat} without WWW-Authenticate, so no resource_metadata is named (RFC 9728 \
                         §5.1; a client cannot discover the authorization server)",
                        c.refused()
                    ),
                );
            }
            match c.resource_metadata() {
                Some(rm) if !rm.trim().is_empty() && !c.resource_metadata_well_formed(rm) => {
                    Leg::new(
                        ID,
                        LegOutcome::Fail,
                        format!(
                            "{}{caveat}; its WWW-Authenticate {} names resource_metadata=\"{}\" only \
                             outside RFC 9110 syntax (an unquoted URL is not a token), so a strict \
                             client finds no resource_metadata (RFC 9728 §5.1); the collector \
                             followed it{syntax}",
                            c.refused(),
                            c.quoted(),
                            line(rm)
                        ),
                    )
                }
                Some(rm) if !rm.trim().is_empty() => Leg::new(
                    ID,
                    LegOutcome::Pass,
                    format!(
                        "{}{caveat}; its WWW-Authenticate names resource_metadata=\"{}\"",
                        c.refused(),
                        line(rm)
                    ),
                ),
                Some(_) => Leg::new(
                    ID,
                    LegOutcome::Fail,
                    format!(
                        "{}{caveat}; its WWW-Authenticate {} names an empty resource_metadata{syntax}",
                        c.refused(),
                        c.quoted()
                    ),
                ),
                None => Leg::new(
                    ID,
                    LegOutcome::Fail,
                    format!(
                        "{}{caveat}; its WWW-Authenticate {} names no resource_metadata (RFC 9728 \
                         §5.1){syntax}",
                        c.refused(),
                        c.quoted()
                    ),
                ),
            }
        }
        Unauth::Other { what, .. } => Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "{what}: neither a response nor a 401/403 challenge, so whether authentication is \
                 required is not decided (a refusal for another reason is not counted)"
            ),
        ),
        Unauth::NoResponse { seq, why } => Leg::new(
            ID,
            LegOutcome::Error,
            format!(
                "the unauthenticated request (record #{seq}) drew no response ({why}): the observation \
                 was never made"
            ),
        ),
        Unauth::NotObserved(why) => Leg::new(
            ID,
            LegOutcome::Unknown,
            format!("no challenge observed: {why}"),
        ),
    }
}

/// Leg b and the per-token lifetimes (null where unreadable).
fn leg_3_1_2b(f: &Facts<'_>) -> (Leg, Vec<Value>) {
    const ID: &str = "3.1.2b";
    let tokens = f.tokens();
    if tokens.is_empty() {
        return (
            Leg::new(
                ID,
                LegOutcome::Unknown,
                "no access token is held, so no issued lifetime is readable",
            ),
            Vec::new(),
        );
    }
    let mut parts = Vec::new();
    let mut lifetimes = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let label = token_label(i, t, tokens.len());
        match issued_lifetime(t) {
            None => {
                lifetimes.push(Value::Null);
                let why = if claims(t).is_some() {
                    "is a JWT without numeric exp and iat, and no token response (expires_in) was seen"
                } else {
                    "is opaque (not a JWT) and no token response (expires_in) was seen"
                };
                parts.push((
                    LegOutcome::Unknown,
                    format!("{label} {why}, so its issued lifetime is not readable"),
                ));
            }
            Some((secs, from)) if secs <= 0 => {
                lifetimes.push(json!(secs));
                parts.push((
                    LegOutcome::Unknown,
                    format!(
                        "{label} states a lifetime of {secs} s ({from}), which is not a lifetime"
                    ),
                ));
            }
            Some((secs, from)) => {
                lifetimes.push(json!(secs));
                let (o, verb) = if secs > MAX_TOKEN_LIFETIME_SECS {
                    (LegOutcome::Fail, "exceeds")
                } else {
                    (LegOutcome::Pass, "is within")
                };
                parts.push((
                    o,
                    format!(
                        "{label}: issued lifetime {secs} s ({from}) {verb} the benchmark baseline of \
                         {MAX_TOKEN_LIFETIME_SECS} s"
                    ),
                ));
            }
        }
    }
    (combine(ID, parts), lifetimes)
}

/// Legs c and d (observed only) and the issuer whose metadata they quote.
fn legs_3_1_2cd(f: &Facts<'_>) -> (Leg, Leg, Option<String>) {
    let Some((s, d)) = f.resolved().next() else {
        let why = if !f.ev.has_leg(leg::PRM) {
            "discovery is not recorded in this bundle; the collector predates it".to_string()
        } else if f.selected().is_none() {
            "no protected-resource metadata document was parsed".to_string()
        } else if f.servers.is_empty() {
            "the protected-resource metadata advertises no authorization server".to_string()
        } else {
            format!(
                "none of the {} advertised authorization server(s) resolved",
                f.servers.len()
            )
        };
        let note = format!("no authorization-server metadata resolved: {why}");
        return (
            Leg::new("3.1.2c", LegOutcome::Observed, note.clone()),
            Leg::new("3.1.2d", LegOutcome::Observed, note),
            None,
        );
    };
    let who = format!("authorization server {}", line(&s.entry));
    let iss = match d.get("authorization_response_iss_parameter_supported") {
        Some(Value::Bool(true)) => {
            "authorization_response_iss_parameter_supported is true (RFC 9207: the authorization \
             response names its issuer)"
                .to_string()
        }
        Some(v) => format!(
            "authorization_response_iss_parameter_supported is {} (RFC 9207 iss not promised)",
            shown_value(v)
        ),
        None => {
            "authorization_response_iss_parameter_supported is absent (RFC 9207 iss not promised)"
                .to_string()
        }
    };
    let reg = match d.get("registration_endpoint") {
        Some(Value::String(u)) => format!(
            "registration_endpoint {} (dynamic client registration offered)",
            line(u)
        ),
        Some(v) => format!(
            "registration_endpoint {} (not a URL string)",
            shown_value(v)
        ),
        None => "no registration_endpoint (no dynamic client registration advertised)".to_string(),
    };
    let methods = match d.get("token_endpoint_auth_methods_supported") {
        Some(v) => format!("token_endpoint_auth_methods_supported {}", shown_value(v)),
        None => {
            "token_endpoint_auth_methods_supported absent (RFC 8414 default: client_secret_basic)"
                .to_string()
        }
    };
    (
        Leg::new("3.1.2c", LegOutcome::Observed, format!("{who}: {iss}")),
        Leg::new(
            "3.1.2d",
            LegOutcome::Observed,
            format!("{who}: {reg}; {methods}"),
        ),
        Some(s.entry.clone()),
    )
}

// ---------------------------------------------------------------------------------------
// 3.2.2
// ---------------------------------------------------------------------------------------

/// 3.2.2: token passthrough to downstream APIs forbidden.
#[derive(Debug)]
pub struct Check3_2_2;
/// The 3.2.2 check.
pub static C3_2_2: Check3_2_2 = Check3_2_2;

const REDUCTION_3_2_2: &str = "the token's audience stands in for \"no passthrough\": whether the server \
     forwards a client's token downstream is not observable from outside; an extra audience may be a \
     genuine downstream API the token was also issued for (the token alone cannot say); opaque tokens are \
     not introspected";

impl Check for Check3_2_2 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // Required in `grade`, after the endpoint gate: endpoint.detect, discovery.prm
        // (the PRM `resource` replaces the canonical URI; "no OAuth" needs the observed
        // absence). Read when present: 2.3.unauthenticated, discovery.as.
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let f = match prelude(ev, &[leg::ENDPOINT_DETECT, leg::PRM]) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let seqs = f.seqs();
        let tokens = f.tokens();
        if tokens.is_empty() {
            let signals = f.signals();
            let unread = f.prm_unread();
            let (v, text) = if !signals.is_empty() {
                (
                    Verdict::Unknown,
                    format!(
                        "the server offers OAuth ({}), but the run holds no access token, so there is \
                         no audience to read",
                        signals.join("; ")
                    ),
                )
            } else if !unread.is_empty() {
                (
                    Verdict::Unknown,
                    format!(
                        "no token is held, and whether the server offers OAuth is undecided: \
                         protected-resource metadata discovery was not read ({})",
                        unread.join(", ")
                    ),
                )
            } else {
                (
                    Verdict::NotApplicable,
                    format!(
                        "no OAuth is offered: {}; there is no token whose audience could be confined",
                        f.absence()
                    ),
                )
            };
            return Outcome::single(v, text, REDUCTION_3_2_2)
                .with_records(seqs)
                .with_detail("legs", Map::new())
                .with_detail("extra_audiences", Value::Null);
        }
        let Some(endpoint_uri) = canonical_resource(&f.endpoint) else {
            return Outcome::single(
                Verdict::Error,
                format!(
                    "the endpoint {} is not a hierarchical URL, so it has no canonical resource URI",
                    line(&f.endpoint)
                ),
                REDUCTION_3_2_2,
            );
        };
        let prm_resource = f
            .selected()
            .and_then(|(a, d)| d.get("resource").and_then(Value::as_str).map(|r| (a, r)));
        let (canonical, basis) = match prm_resource {
            Some((a, r)) if resource_covers(r, &endpoint_uri) == Some(true) => (
                r.to_string(),
                format!(
                    "the protected-resource metadata resource at {}, which covers the endpoint's \
                     canonical URI {}",
                    line(&a.url),
                    line(&endpoint_uri)
                ),
            ),
            _ => (
                endpoint_uri.clone(),
                "the endpoint's canonical URI".to_string(),
            ),
        };
        let mut parts = Vec::new();
        let mut extras_all: Vec<String> = Vec::new();
        let mut auds_all: Vec<String> = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let label = token_label(i, t, tokens.len());
            let Some(c) = claims(t) else {
                parts.push((
                    LegOutcome::Unknown,
                    format!("{label} is opaque (not a JWT), so its audience is not readable"),
                ));
                continue;
            };
            let auds = audiences(Some(c));
            if auds.is_empty() {
                parts.push((
                    LegOutcome::Unknown,
                    format!("{label} is a JWT without an aud claim naming any audience"),
                ));
                continue;
            }
            auds_all.extend(auds.iter().cloned());
            let extras: Vec<String> = auds
                .iter()
                .filter(|a| strip_slash(a) != strip_slash(&canonical))
                .cloned()
                .collect();
            if extras.is_empty() {
                parts.push((
                    LegOutcome::Pass,
                    format!(
                        "{label} is confined to this resource: aud {} equals {} ({basis})",
                        shown(&auds),
                        line(&canonical)
                    ),
                ));
            } else {
                parts.push((
                    LegOutcome::Fail,
                    format!(
                        "{label} carries audience(s) beyond this resource: {} (aud {}, resource {} from \
                         {basis}); a token also valid for another service is what passthrough needs, \
                         though the token alone cannot say whether the extra is a genuine downstream API",
                        shown(&extras),
                        shown(&auds),
                        line(&canonical)
                    ),
                ));
                extras_all.extend(extras);
            }
        }
        let l = combine("3.2.2a", parts);
        let legs = vec![l];
        Outcome::from_legs(legs.clone(), REDUCTION_3_2_2)
            .with_records(seqs)
            .with_detail("legs", legs_map(&legs))
            .with_detail("extra_audiences", json!(dedup(extras_all)))
            .with_detail("audiences", json!(dedup(auds_all)))
            .with_detail("canonical_resource", canonical)
    }
}

// ---------------------------------------------------------------------------------------
// 3.3.2
// ---------------------------------------------------------------------------------------

/// 3.3.2: OAuth discovery metadata over TLS and validated.
#[derive(Debug)]
pub struct Check3_3_2;
/// The 3.3.2 check.
pub static C3_3_2: Check3_3_2 = Check3_3_2;

const REDUCTION_3_3_2: &str = "bounded discovery: at most 5 advertised authorization servers are resolved \
     (the number advertised and past the cap is stated), each fetch bounded by the collector's timeout; \
     change control of the authorization-server list is drift against a self-recorded baseline, not an \
     approved list; not graded by design: the collector's network guard itself and write permissions on \
     the metadata source";

impl Check for Check3_3_2 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // Required in `grade`, after the endpoint gate: endpoint.detect, discovery.prm.
        // discovery.as is read per advertised server (an advertised server with no record
        // is reported as never attempted, 3.3.2g).
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, cx: &Context<'_>) -> Outcome {
        let f = match prelude(ev, &[leg::ENDPOINT_DETECT, leg::PRM]) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let details = |o: Outcome, f: &Facts<'_>, legs: &[Leg]| {
            let advertised = f
                .advertised
                .as_ref()
                .map_or(Value::Null, |a| json!(a.entries));
            let resolved: Vec<&str> = f.resolved().map(|(s, _)| s.entry.as_str()).collect();
            o.with_records(f.seqs())
                .with_detail("legs", legs_map(legs))
                .with_detail(
                    "discovery_paths_answered",
                    json!(f.docs().map(|a| a.url.clone()).collect::<Vec<_>>()),
                )
                .with_detail("discovery_attempts", json!(f.attempts_shown()))
                .with_detail("authorization_servers_advertised", advertised)
                .with_detail("authorization_servers_resolved", json!(resolved))
                .with_detail("authorization_servers_cap", AS_LIST_CAP)
                .with_detail("authorization_servers_past_cap", f.past_cap())
                .with_detail("guard_refused_urls", json!(f.guard_refused_urls()))
        };
        let unread = f.prm_unread();
        let no_doc = f.selected().is_none();
        let signals = f.signals();
        if no_doc && unread.is_empty() && signals.is_empty() {
            let o = Outcome::single(
                Verdict::NotApplicable,
                format!(
                    "no OAuth is offered: {}; the discovery chain the recommendation governs does not \
                     exist",
                    f.absence()
                ),
                REDUCTION_3_3_2,
            );
            return details(o, &f, &[]);
        }
        let a = match transport_of(&f.endpoint) {
            Transport::Tls => Leg::new("3.3.2a", LegOutcome::Pass, "the endpoint is served over TLS (https)"),
            Transport::LoopbackPlain => Leg::new(
                "3.3.2a",
                LegOutcome::Pass,
                format!(
                    "the endpoint {} is plain http on a loopback host: graded as a lab endpoint, since \
                     loopback traffic never leaves the host (a non-loopback http endpoint is UNKNOWN here: \
                     2.2 owns transport)",
                    line(&f.endpoint)
                ),
            ),
            Transport::Plain => {
                let legs = vec![Leg::new(
                    "3.3.2a",
                    LegOutcome::Unknown,
                    format!(
                        "the endpoint {} is not served over TLS and is not on a loopback host: 2.2 owns \
                         transport, and metadata fetched in the clear is not assessed here",
                        line(&f.endpoint)
                    ),
                )];
                let o = Outcome::from_legs(legs.clone(), REDUCTION_3_3_2);
                return details(o, &f, &legs);
            }
        };
        if no_doc {
            let (v, text) = if !unread.is_empty() {
                (
                    Verdict::Unknown,
                    format!(
                        "no protected-resource metadata document was read, and the chain's existence is \
                         undecided: {}",
                        unread.join(", ")
                    ),
                )
            } else {
                (
                    Verdict::Fail,
                    format!(
                        "the server offers OAuth ({}) but publishes no protected-resource metadata: every \
                         candidate answered a clean 404 ({}), so a client cannot discover the \
                         authorization server",
                        signals.join("; "),
                        f.prm_404s().join(", ")
                    ),
                )
            };
            let o = Outcome::single(v, text, REDUCTION_3_3_2);
            return details(o, &f, &[]);
        }
        let legs = vec![
            a,
            leg_3_3_2b(&f),
            leg_3_3_2c(&f),
            leg_3_3_2d(&f),
            leg_3_3_2e(&f),
            leg_3_3_2f(&f, cx),
            leg_3_3_2g(&f),
        ];
        let mut o = Outcome::from_legs(legs.clone(), REDUCTION_3_3_2);
        if let Some(a) = &f.advertised {
            let n = a.entries.len();
            o.evidence.push_str(&format!(
                "; {n} authorization server(s) advertised, {} past the cap of {AS_LIST_CAP}",
                f.past_cap()
            ));
        }
        let baseline = cx
            .baseline
            .and_then(Facts::new)
            .and_then(|b| b.advertised.map(|a| a.entries));
        details(o, &f, &legs)
            .with_detail(
                "canonical_resource",
                or_null(canonical_resource(&f.endpoint)),
            )
            .with_detail(
                "authorization_servers_baseline",
                or_null(baseline.map(|b| json!(b))),
            )
    }
}

/// Canonical key order, for byte comparison of two documents.
fn canonical_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// 3.3.2b: the document the challenge names against the path-inserted well-known one
/// (both describe this endpoint's resource). The spec compares the challenge document
/// with the *selected* one, which in candidate order is the challenge document itself
/// whenever it exists; comparing with the path-inserted document is what makes the leg
/// able to fail. The root document may describe another resource (RFC 9728 path
/// insertion) and is recorded, not compared.
fn leg_3_3_2b(f: &Facts<'_>) -> Leg {
    const ID: &str = "3.3.2b";
    let path_url = prm_well_known(&f.endpoint)
        .into_iter()
        .next()
        .unwrap_or_default();
    let named = f
        .challenge()
        .and_then(Challenged::resource_metadata)
        .filter(|s| !s.trim().is_empty());
    let Some(named) = named else {
        return Leg::new(
            ID,
            LegOutcome::Pass,
            "the challenge names no resource_metadata URL (or no challenge was observed): only the \
             well-known document(s) were consulted",
        );
    };
    let Some((ca, cd)) = f.doc_at(named) else {
        return Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "the URL the challenge names ({}) served no document: only the well-known document(s) \
                 were consulted",
                line(named)
            ),
        );
    };
    if norm(named) == norm(&path_url) {
        return Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "the challenge names the path-inserted well-known URL itself ({}, record #{}): one \
                 document describes this resource",
                line(&ca.url),
                ca.seq
            ),
        );
    }
    let Some((pa, pd)) = f.doc_at(&path_url) else {
        return Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "the challenge names {} (record #{}); the path-inserted well-known URL {} served no \
                 document, so only one document describes this resource",
                line(&ca.url),
                ca.seq,
                line(&path_url)
            ),
        );
    };
    let (c, p) = (Value::Object(cd.clone()), Value::Object(pd.clone()));
    if canonical_json(&c) == canonical_json(&p) {
        Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "the document the challenge names ({}, record #{}) equals the path-inserted well-known \
                 document ({}, record #{}) after canonical key ordering",
                line(&ca.url),
                ca.seq,
                line(&pa.url),
                pa.seq
            ),
        )
    } else {
        let keys: BTreeSet<&String> = cd.keys().chain(pd.keys()).collect();
        let differing: Vec<String> = keys
            .into_iter()
            .filter(|k| cd.get(*k).map(canonical_json) != pd.get(*k).map(canonical_json))
            .map(|k| line(k))
            .collect();
        Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "the document the challenge names ({}, record #{}) differs from the path-inserted \
                 well-known document ({}, record #{}) for the same resource, in member(s) {}: a client \
                 sees a different chain depending on the discovery path it takes",
                line(&ca.url),
                ca.seq,
                line(&pa.url),
                pa.seq,
                shown(&differing)
            ),
        )
    }
}

fn leg_3_3_2c(f: &Facts<'_>) -> Leg {
    const ID: &str = "3.3.2c";
    let answered: Vec<&Attempt> = f.docs().collect();
    let plain: Vec<String> = answered
        .iter()
        .filter(|a| transport_of(&a.url) == Transport::Plain)
        .map(|a| line(&a.url))
        .collect();
    if !plain.is_empty() {
        return Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "protected-resource metadata was served without TLS at {} (not https, not loopback)",
                plain.join(", ")
            ),
        );
    }
    let refused: Vec<String> = f
        .prm
        .iter()
        .filter(|a| a.guard_refused())
        .map(|a| line(&a.url))
        .collect();
    if !refused.is_empty() {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "the network guard refused candidate(s) {}, so not every discovery path was read",
                refused.join(", ")
            ),
        );
    }
    let loopback: Vec<String> = answered
        .iter()
        .filter(|a| transport_of(&a.url) == Transport::LoopbackPlain)
        .map(|a| line(&a.url))
        .collect();
    let urls: Vec<String> = answered.iter().map(|a| line(&a.url)).collect();
    // No plain-http document is left here: each is https or loopback http.
    let note = if loopback.is_empty() {
        format!("every document was served over https: {}", urls.join(", "))
    } else {
        format!(
            "every document was served over https, or plain http on a loopback host (graded as a lab \
             endpoint): {}",
            urls.join(", ")
        )
    };
    Leg::new(ID, LegOutcome::Pass, note)
}

fn leg_3_3_2d(f: &Facts<'_>) -> Leg {
    const ID: &str = "3.3.2d";
    let Some((a, d)) = f.selected() else {
        return Leg::new(ID, LegOutcome::Unknown, "no document");
    };
    let Some(canonical) = canonical_resource(&f.endpoint) else {
        return Leg::new(
            ID,
            LegOutcome::Error,
            format!("the endpoint {} has no canonical URI", line(&f.endpoint)),
        );
    };
    let at = format!("the document at {} (record #{})", line(&a.url), a.seq);
    match d.get("resource") {
        None => Leg::new(
            ID,
            LegOutcome::Unknown,
            format!("{at} has no resource member, so which resource it describes is not stated"),
        ),
        Some(Value::String(r)) if r.trim().is_empty() => Leg::new(
            ID,
            LegOutcome::Unknown,
            format!("{at} has a blank resource member"),
        ),
        Some(Value::String(r)) => match resource_covers(r, &canonical) {
            None => Leg::new(
                ID,
                LegOutcome::Fail,
                format!(
                    "{at} names resource \"{}\", which is not parsable as a URI (RFC 9728 §2 requires \
                     one)",
                    line(r)
                ),
            ),
            Some(true) if strip_slash(r) == strip_slash(&canonical) => Leg::new(
                ID,
                LegOutcome::Pass,
                format!(
                    "{at} names resource {} equal to the endpoint's canonical URI (rule: equal after \
                     one trailing slash)",
                    line(r)
                ),
            ),
            Some(true) => Leg::new(
                ID,
                LegOutcome::Pass,
                format!(
                    "{at} names resource {}, a hierarchical parent of the endpoint's canonical URI {} \
                     (rule: same origin, path at or below, the SDK's check_resource_allowed)",
                    line(r),
                    line(&canonical)
                ),
            ),
            Some(false) => Leg::new(
                ID,
                LegOutcome::Fail,
                format!(
                    "{at} names resource {}, which is neither the endpoint's canonical URI {} nor a \
                     hierarchical parent of it (rule: same origin, path at or below)",
                    line(r),
                    line(&canonical)
                ),
            ),
        },
        Some(v) => Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "{at} names resource {}, which is not a string and so not a URI (RFC 9728 §2)",
                shown_value(v)
            ),
        ),
    }
}

fn leg_3_3_2e(f: &Facts<'_>) -> Leg {
    const ID: &str = "3.3.2e";
    let Some(a) = &f.advertised else {
        return Leg::new(ID, LegOutcome::Unknown, "no document");
    };
    let discarded = if a.discarded > 0 {
        format!(
            " ({} element(s) that are not non-blank strings discarded)",
            a.discarded
        )
    } else {
        String::new()
    };
    if a.entries.is_empty() {
        Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "the document advertises no authorization server (authorization_servers is {}){discarded}: \
                 a document was served, so the requirement applies",
                shown_value(&a.raw)
            ),
        )
    } else {
        Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "authorization_servers advertises {}{discarded}",
                shown(&a.entries)
            ),
        )
    }
}

fn leg_3_3_2f(f: &Facts<'_>, cx: &Context<'_>) -> Leg {
    const ID: &str = "3.3.2f";
    let Some(now) = f.advertised.as_ref().map(|a| a.entries.clone()) else {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            "no authorization-server list observed",
        );
    };
    let b = match baseline_for(f.ev, cx, ID, &shown(&now)) {
        Ok(b) => b,
        Err(l) => return l,
    };
    if !b.has_leg(leg::PRM) {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "the {} predates discovery recording (no {} records), so it holds no \
                 authorization-server list",
                describe_baseline(b),
                leg::PRM
            ),
        );
    }
    let Some(bf) = Facts::new(b) else {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            format!("the {} has no endpoint", describe_baseline(b)),
        );
    };
    let Some(then) = bf.advertised.map(|a| a.entries) else {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "the {} holds no protected-resource metadata document, so it recorded no \
                 authorization-server list",
                describe_baseline(b)
            ),
        );
    };
    let added: Vec<String> = now.iter().filter(|e| !then.contains(e)).cloned().collect();
    let removed: Vec<String> = then.iter().filter(|e| !now.contains(e)).cloned().collect();
    if !added.is_empty() {
        return Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "authorization server(s) {} advertised now but not in the {} ({}); re-approve with \
                 --update-baseline if the change is intended",
                shown(&added),
                describe_baseline(b),
                shown(&then)
            ),
        );
    }
    let removed = if removed.is_empty() {
        String::new()
    } else {
        format!("; no longer advertised: {}", shown(&removed))
    };
    Leg::new(
        ID,
        LegOutcome::Pass,
        format!(
            "advertised {} is within the {} ({}){removed}",
            shown(&now),
            describe_baseline(b),
            shown(&then)
        ),
    )
}

fn leg_3_3_2g(f: &Facts<'_>) -> Leg {
    const ID: &str = "3.3.2g";
    if f.servers.is_empty() {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            "no authorization server is advertised, so no issuer to check",
        );
    }
    let mut parts = Vec::new();
    for s in &f.servers {
        let e = line(&s.entry);
        if s.forms.is_none() {
            parts.push((
                LegOutcome::Fail,
                format!(
                    "{e}: the advertised entry is not an http(s) issuer URL, so no client can resolve it"
                ),
            ));
            continue;
        }
        match (s.resolved(), s.issuer()) {
            (Some((a, _)), Some(iss)) if iss == s.entry => parts.push((
                LegOutcome::Pass,
                format!(
                    "{e}: metadata at {} (record #{}) names issuer {e}",
                    line(&a.url),
                    a.seq
                ),
            )),
            (Some((a, _)), Some(iss)) => {
                let hint = if strip_slash(iss) == strip_slash(&s.entry) {
                    " (they differ only by a trailing slash; RFC 8414 §3.3 requires identical strings)"
                } else {
                    ""
                };
                parts.push((
                    LegOutcome::Fail,
                    format!(
                        "{e}: metadata at {} (record #{}) names issuer \"{}\", not the advertised \
                         entry{hint}",
                        line(&a.url),
                        a.seq,
                        line(iss)
                    ),
                ));
            }
            _ if s.attempts.iter().any(Attempt::guard_refused) => parts.push((
                LegOutcome::Unknown,
                format!(
                    "{e}: not resolved, and the network guard refused some of its discovery forms \
                     ({})",
                    s.unresolved_why()
                ),
            )),
            _ => parts.push((
                LegOutcome::Error,
                format!("{e}: not resolved: {}", s.unresolved_why()),
            )),
        }
    }
    combine(ID, parts)
}

// ---------------------------------------------------------------------------------------
// 3.3.4
// ---------------------------------------------------------------------------------------

/// 3.3.4: OAuth scopes minimized and elevated progressively.
#[derive(Debug)]
pub struct Check3_3_4;
/// The 3.3.4 check.
pub static C3_3_4: Check3_3_4 = Check3_3_4;

const REDUCTION_3_3_4: &str = "reads the wire and a self-recorded baseline: the operator's documented scope \
     justification is not readable, so a documented exception would change 3.3.4b and d; the comparison is \
     against a self-recorded baseline, not an approved scope set; 3.3.4e needs the operator to name a tool \
     outside the grant (scope_probe_tool) and is decided only by an insufficient_scope refusal; step-up \
     elevation is not tested";

impl Check for Check3_3_4 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // Required in `grade`, after the endpoint gate: endpoint.detect, discovery.prm.
        // Read when present: 2.3.unauthenticated, discovery.as.
        Legs::required(&[])
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Evidence, cx: &Context<'_>) -> Outcome {
        let f = match prelude(ev, &[leg::ENDPOINT_DETECT, leg::PRM]) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let challenge_scope = f.challenge().and_then(Challenged::scope).map(line);
        let granted = f.granted();
        let resource_scopes = f.resource_scopes();
        let as_scopes = f.as_scopes();
        let finish = |o: Outcome, legs: &[Leg]| {
            o.with_records(f.seqs())
                .with_detail("legs", legs_map(legs))
                .with_detail("challenge_scope", or_null(challenge_scope.clone()))
                .with_detail("granted_scopes", or_null(granted.clone().map(|g| json!(g))))
                .with_detail(
                    "advertised_scopes",
                    or_null(resource_scopes.clone().map(|g| json!(g))),
                )
                .with_detail(
                    "authorization_server_scopes",
                    or_null(as_scopes.clone().map(|g| json!(g))),
                )
        };
        if f.signals().is_empty() {
            let unread = f.prm_unread();
            let o = if unread.is_empty() {
                Outcome::single(
                    Verdict::NotApplicable,
                    format!(
                        "no OAuth is offered: {}; no scope is granted or advertised",
                        f.absence()
                    ),
                    REDUCTION_3_3_4,
                )
            } else {
                Outcome::single(
                    Verdict::Unknown,
                    format!(
                        "whether the server offers OAuth is undecided: no 401, no token, and \
                         protected-resource metadata discovery was not read ({})",
                        unread.join(", ")
                    ),
                    REDUCTION_3_3_4,
                )
            };
            return finish(o, &[]);
        }
        let legs = vec![
            leg_3_3_4a(granted.as_deref()),
            leg_3_3_4b(granted.as_deref()),
            leg_3_3_4c(&f, cx, granted.as_deref()),
            leg_3_3_4d(&f, resource_scopes.as_deref()),
            super::s3_scope_probe::classify_scope_refusal(f.ev),
            leg_3_3_4f(&f, resource_scopes.as_deref(), as_scopes.as_deref()),
        ];
        let o = Outcome::from_legs(legs.clone(), REDUCTION_3_3_4);
        finish(o, &legs)
    }
}

fn leg_3_3_4a(granted: Option<&[String]>) -> Leg {
    const ID: &str = "3.3.4a";
    match granted {
        None => Leg::new(
            ID,
            LegOutcome::Unknown,
            "no granted scope is readable (no token, or neither a token-response scope nor a scope/scp \
             claim)",
        ),
        Some([]) => Leg::new(ID, LegOutcome::Pass, "the granted scope is stated and empty"),
        Some(g) => Leg::new(ID, LegOutcome::Pass, format!("granted scopes {}", shown(g))),
    }
}

fn leg_3_3_4b(granted: Option<&[String]>) -> Leg {
    const ID: &str = "3.3.4b";
    let Some(g) = granted else {
        return Leg::new(ID, LegOutcome::Unknown, "no granted scope is readable");
    };
    let (w, a) = (wildcards(g), admin_tier(g));
    if w.is_empty() && a.is_empty() {
        let what = if g.is_empty() {
            "no scope is granted".to_string()
        } else {
            format!("no wildcard or admin-tier scope among {}", shown(g))
        };
        return Leg::new(ID, LegOutcome::Pass, what);
    }
    let mut found = Vec::new();
    if !w.is_empty() {
        found.push(format!("wildcard {}", shown(&w)));
    }
    if !a.is_empty() {
        found.push(format!("admin-tier {}", shown(&a)));
    }
    Leg::new(
        ID,
        LegOutcome::Fail,
        format!(
            "granted {} (a documented exception, which the probe cannot read, would change this)",
            found.join(" and ")
        ),
    )
}

fn leg_3_3_4c(f: &Facts<'_>, cx: &Context<'_>, granted: Option<&[String]>) -> Leg {
    const ID: &str = "3.3.4c";
    let now = granted.map_or_else(|| "no readable granted scope".to_string(), shown);
    let b = match baseline_for(f.ev, cx, ID, &now) {
        Ok(b) => b,
        Err(l) => return l,
    };
    let Some(g) = granted else {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            "this run read no granted scope, so it compared nothing with the baseline",
        );
    };
    let then = Facts::new(b).and_then(|bf| bf.granted());
    let Some(then) = then else {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "the {} holds no readable granted scope (no token, or none stated), so there is nothing \
                 to compare {} with",
                describe_baseline(b),
                shown(g)
            ),
        );
    };
    let added: Vec<String> = g.iter().filter(|s| !then.contains(s)).cloned().collect();
    if added.is_empty() {
        Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "granted {} is within the {} ({})",
                shown(g),
                describe_baseline(b),
                shown(&then)
            ),
        )
    } else {
        Leg::new(
            ID,
            LegOutcome::Fail,
            format!(
                "scope(s) {} granted now but not in the {} ({}); re-approve with --update-baseline if \
                 the elevation is intended",
                shown(&added),
                describe_baseline(b),
                shown(&then)
            ),
        )
    }
}

fn leg_3_3_4d(f: &Facts<'_>, resource_scopes: Option<&[String]>) -> Leg {
    const ID: &str = "3.3.4d";
    let Some((a, _)) = f.selected() else {
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            "no protected-resource metadata document was parsed, so no advertised scope is readable",
        );
    };
    let s = match resource_scopes {
        Some(s) if !s.is_empty() => s,
        _ => {
            return Leg::new(
                ID,
                LegOutcome::Unknown,
                format!(
                    "the document at {} advertises no scopes_supported",
                    line(&a.url)
                ),
            )
        }
    };
    let (w, adm) = (wildcards(s), admin_tier(s));
    if w.is_empty() && adm.is_empty() {
        return Leg::new(
            ID,
            LegOutcome::Pass,
            format!(
                "scopes_supported {} at {} holds no wildcard or admin-tier scope",
                shown(s),
                line(&a.url)
            ),
        );
    }
    let flagged = dedup(w.into_iter().chain(adm));
    Leg::new(
        ID,
        LegOutcome::Fail,
        format!(
            "scopes_supported at {} advertises wildcard or admin-tier scope(s) {} (a documented \
             exception, which the probe cannot read, would change this)",
            line(&a.url),
            shown(&flagged)
        ),
    )
}

fn leg_3_3_4f(
    f: &Facts<'_>,
    resource_scopes: Option<&[String]>,
    as_scopes: Option<&[String]>,
) -> Leg {
    const ID: &str = "3.3.4f";
    let challenge: Option<Vec<String>> = f
        .challenge()
        .and_then(Challenged::scope)
        .map(|s| dedup(s.split_whitespace().map(str::to_string)));
    let mut present = Vec::new();
    if let Some(c) = challenge.as_ref().filter(|c| !c.is_empty()) {
        present.push(format!("challenge scope {}", shown(c)));
    }
    if let Some(r) = resource_scopes.filter(|r| !r.is_empty()) {
        present.push(format!("protected-resource scopes_supported {}", shown(r)));
    }
    if let Some(a) = as_scopes.filter(|a| !a.is_empty()) {
        present.push(format!(
            "authorization-server scopes_supported {}",
            shown(a)
        ));
    }
    if !present.is_empty() {
        let mut note = format!("scopes are discoverable: {}", present.join("; "));
        let advertised: BTreeSet<&String> = resource_scopes
            .unwrap_or_default()
            .iter()
            .chain(as_scopes.unwrap_or_default())
            .collect();
        if let Some(c) = challenge.as_ref().filter(|c| !c.is_empty()) {
            let cs: BTreeSet<&String> = c.iter().collect();
            if !advertised.is_empty() && cs != advertised {
                note.push_str(
                    "; the challenge's scope set differs from the advertised union (noted, not a \
                     failure)",
                );
            }
        }
        return Leg::new(ID, LegOutcome::Pass, note);
    }
    let mut reasons = Vec::new();
    if let Unauth::NotObserved(why) = &f.unauth {
        reasons.push(format!(
            "the unauthenticated challenge was not observed ({why})"
        ));
    }
    if f.selected().is_none() {
        reasons.extend(f.prm_unread());
    }
    for s in f.servers.iter().filter(|s| s.resolved().is_none()) {
        reasons.push(format!(
            "authorization server {} not resolved ({})",
            line(&s.entry),
            s.unresolved_why()
        ));
    }
    if f.past_cap() > 0 {
        reasons.push(format!(
            "{} advertised authorization server(s) past the cap of {AS_LIST_CAP} were not resolved",
            f.past_cap()
        ));
    }
    if !reasons.is_empty() {
        let refused: Vec<String> = f
            .servers
            .iter()
            .flat_map(|s| s.attempts.iter())
            .filter(|a| a.guard_refused())
            .map(|a| line(&a.url))
            .collect();
        let refused = if refused.is_empty() {
            String::new()
        } else {
            format!(
                "; guard-refused authorization-server URLs: {}",
                refused.join(", ")
            )
        };
        return Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "no scope found in what was read, but not every source was read: {}{refused}",
                reasons.join("; ")
            ),
        );
    }
    Leg::new(
        ID,
        LegOutcome::Fail,
        "no scope is discoverable: the challenge names none, the protected-resource metadata lists no \
         scopes_supported (or is observed absent), and no resolved authorization server lists any",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::leg as leg_of;
    use crate::fixture::{evidence, exchange, session, skipped, ENDPOINT as EP};
    use crate::grade::run;
    use base64::Engine;
    use mcp_probe_schema::model::{Header, Record, TransportError};
    use mcp_probe_schema::redact::decode_jwt;
    use mcp_probe_schema::testkit;

    const PRM_PATH: &str = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp";
    const PRM_ROOT: &str = "http://127.0.0.1:8080/.well-known/oauth-protected-resource";
    const AS: &str = "http://127.0.0.1:9000";
    const AS_FORM: &str = "http://127.0.0.1:9000/.well-known/oauth-authorization-server";
    const AS_OIDC: &str = "http://127.0.0.1:9000/.well-known/openid-configuration";
    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;

    // ----- records

    fn get(l: LegId, url: &str, status: u16, body: &str) -> Record {
        let mut r = testkit::http_record(&[l], url, "", status, body.as_bytes());
        if let Observation::Http(x) = &mut r.observation {
            x.request.method = "GET".into();
            x.request.headers = vec![Header::new("Accept", "application/json")];
        }
        r
    }

    fn failed(l: LegId, url: &str, kind: ErrorKind) -> Record {
        let mut r = get(l, url, 200, "");
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind,
                message: format!("{} for {url}", kind.as_str()),
            });
        }
        r
    }

    fn with_credential(mut r: Record) -> Record {
        if let Observation::Http(x) = &mut r.observation {
            x.request
                .headers
                .push(Header::new("Authorization", "Bearer redacted:sha256:00"));
        }
        r
    }

    fn detect_ok() -> Record {
        exchange(
            &[leg::ENDPOINT_DETECT],
            INIT,
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#,
            &[],
        )
    }

    fn detect_401(www: &[&str]) -> Record {
        let headers: Vec<(&str, &str)> = www.iter().map(|w| ("WWW-Authenticate", *w)).collect();
        exchange(
            &[leg::ENDPOINT_DETECT],
            INIT,
            401,
            "application/json",
            r#"{"error": "invalid_token", "error_description": "Authentication required"}"#,
            &headers,
        )
    }

    fn challenge(rm: &str) -> String {
        format!(
            r#"Bearer error="invalid_token", error_description="Authentication required", resource_metadata="{rm}""#
        )
    }

    fn prm_doc(resource: &str, servers: Value, scopes: Option<Value>) -> String {
        let mut d = json!({"resource": resource, "authorization_servers": servers,
                           "bearer_methods_supported": ["header"]});
        if let Some(s) = scopes {
            d["scopes_supported"] = s;
        }
        d.to_string()
    }

    fn as_meta(issuer: &str) -> String {
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/reg"),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "authorization_response_iss_parameter_supported": true,
            "scopes_supported": ["openid", "offline_access", "mcp:tools", "mcp:read"],
        })
        .to_string()
    }

    /// The lab's py2-auth as discovery records it: 401 naming the path-inserted URL,
    /// that document, a 404 at the root, the AS metadata at its first form.
    fn lab_auth_records() -> Vec<Record> {
        vec![
            detect_401(&[&challenge(PRM_PATH)]),
            get(
                leg::PRM,
                PRM_PATH,
                200,
                &prm_doc(EP, json!([AS]), Some(json!(["mcp:tools"]))),
            ),
            get(leg::PRM, PRM_ROOT, 404, "Not Found"),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]
    }

    fn no_oauth_records() -> Vec<Record> {
        vec![
            detect_ok(),
            get(leg::PRM, PRM_PATH, 404, "Not Found"),
            get(leg::PRM, PRM_ROOT, 404, "Not Found"),
            skipped(
                &[leg::AS_META],
                "not sent: no protected-resource metadata document was served (no 200 JSON object)",
            ),
        ]
    }

    /// A server that answers without a credential (negotiated in record 0).
    fn open_server(records: Vec<Record>) -> Evidence {
        evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        )
    }

    /// A server that answered 401 to a run without a credential: no revision.
    fn protected(records: Vec<Record>) -> Evidence {
        let mut s = session(None, json!({}), None);
        s.auth_required = true;
        s.capabilities = None;
        s.negotiated_in = None;
        evidence(Some(s), records)
    }

    /// A run that presented `tokens` from the first request (detection carried them).
    fn credentialed(
        auth_required: bool,
        records: Vec<Record>,
        tokens: Vec<TokenFacts>,
    ) -> Evidence {
        let mut s = session(Some("2025-11-25"), json!({"tools": {}}), None);
        s.auth_required = auth_required;
        s.authenticated = true;
        let mut ev = evidence(Some(s), records);
        ev.payload.tokens = tokens;
        ev
    }

    fn detect_ok_with_credential() -> Record {
        with_credential(detect_ok())
    }

    // ----- tokens

    fn b64(v: &Value) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    }

    fn jwt(claims: Value) -> String {
        format!(
            "{}.{}.c2lnbmF0dXJl",
            b64(&json!({"alg": "RS256", "typ": "at+jwt", "kid": "rs1"})),
            b64(&claims)
        )
    }

    fn jwt_token(claims: Value, expires_in: Option<i64>, scope: Option<&str>) -> TokenFacts {
        let (h, c) = decode_jwt(&jwt(claims)).expect("test JWT decodes");
        TokenFacts {
            source: "oauth".into(),
            fingerprint: "redacted:sha256:11".into(),
            jwt_header: Some(h),
            jwt_claims: Some(c),
            expires_in,
            scope: scope.map(str::to_string),
            token_type: Some("Bearer".into()),
        }
    }

    fn opaque(expires_in: Option<i64>, scope: Option<&str>) -> TokenFacts {
        assert!(decode_jwt("not-a-jwt").is_none());
        TokenFacts {
            source: "env:MCP_TOKEN".into(),
            fingerprint: "redacted:sha256:22".into(),
            jwt_header: None,
            jwt_claims: None,
            expires_in,
            scope: scope.map(str::to_string),
            token_type: None,
        }
    }

    fn lab_claims() -> Value {
        json!({"jti": "j", "sub": "alice", "iat": 1_764_480_000, "exp": 1_764_480_600,
               "scope": "mcp:tools mcp:read", "client_id": "c", "iss": AS, "aud": EP})
    }

    /// py2-auth after an OAuth login: detection without a credential (401), then the
    /// token from the AS.
    fn lab_auth_with_token(t: TokenFacts) -> Evidence {
        let mut ev = protected(lab_auth_records());
        ev.payload.tokens = vec![t];
        ev
    }

    fn grade(c: &dyn Check, ev: &Evidence) -> Outcome {
        run(c, ev, &Context::default())
    }

    // ----- helpers of §6.5 and §7

    #[test]
    fn resource_coverage_follows_the_sdk_rule() {
        assert_eq!(
            resource_covers("https://a.example/mcp", "https://a.example/mcp"),
            Some(true)
        );
        assert_eq!(
            resource_covers("https://a.example/", "https://a.example/mcp"),
            Some(true)
        );
        assert_eq!(
            resource_covers("https://a.example/api", "https://a.example/api123"),
            Some(false)
        );
        assert_eq!(
            resource_covers("https://a.example:8443/", "https://a.example/mcp"),
            Some(false)
        );
        assert_eq!(
            resource_covers("http://a.example/", "https://a.example/mcp"),
            Some(false)
        );
        assert_eq!(resource_covers("not a uri", "https://a.example/mcp"), None);
        assert_eq!(
            canonical_resource("HTTPS://A.example:443/mcp#frag").as_deref(),
            Some("https://a.example/mcp")
        );
    }

    #[test]
    fn scopes_keep_unobserved_apart_from_observed_empty() {
        let c = json!({"scope": "a b", "scp": ["x"]});
        let c = c.as_object();
        assert_eq!(observed_scopes(Some(""), c), Some(vec![]));
        assert_eq!(observed_scopes(None, c), Some(vec!["a".into(), "b".into()]));
        let scp = json!({"scp": ["x", 3, "y"]});
        assert_eq!(
            observed_scopes(None, scp.as_object()),
            Some(vec!["x".into(), "y".into()])
        );
        let other = json!({"scope": 5});
        assert_eq!(observed_scopes(None, other.as_object()), None);
        assert_eq!(observed_scopes(None, None), None);
        let s: Vec<String> = [
            "*",
            "admin:*",
            "a:b:*",
            "read:write",
            "admin",
            "administrator",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(wildcards(&s), ["*", "admin:*", "a:b:*"]);
        assert_eq!(admin_tier(&s), ["admin:*", "admin"]);
    }

    // ----- 3.1.2

    #[test]
    fn c3_1_2_fails_a_server_that_answers_without_credentials() {
        let o = grade(&C3_1_2, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Fail);
        assert!(a.note.contains("reached a response"), "{a:?}");
        assert!(a.note.contains("record #0"), "{a:?}");
        assert_eq!(o.details["auth_required"], false);
    }

    #[test]
    fn c3_1_2_a_passes_a_401_naming_resource_metadata() {
        let o = grade(&C3_1_2, &protected(lab_auth_records()));
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Pass, "{o:#?}");
        assert!(
            a.note
                .contains(&format!("resource_metadata=\"{PRM_PATH}\"")),
            "{a:?}"
        );
        // No token: b unknown, so the check is UNKNOWN; c and d observe the AS.
        assert_eq!(leg_of(&o, "3.1.2b").outcome, LegOutcome::Unknown);
        assert_eq!(o.verdict, Verdict::Unknown);
        let c = leg_of(&o, "3.1.2c");
        assert_eq!(c.outcome, LegOutcome::Observed);
        assert!(c.note.contains("iss_parameter_supported is true"), "{c:?}");
        let d = leg_of(&o, "3.1.2d");
        assert!(
            d.note
                .contains("registration_endpoint http://127.0.0.1:9000/reg"),
            "{d:?}"
        );
        assert!(d.note.contains("\"none\""), "{d:?}");
        assert_eq!(o.details["resource_metadata"], PRM_PATH);
        assert_eq!(o.details["authorization_server"], AS);
    }

    #[test]
    fn c3_1_2_a_fails_a_401_without_resource_metadata() {
        let o = grade(&C3_1_2, &protected(vec![detect_401(&[])]));
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Fail);
        assert!(a.note.contains("without WWW-Authenticate"), "{a:?}");
        assert_eq!(o.verdict, Verdict::Fail);

        let o = grade(
            &C3_1_2,
            &protected(vec![detect_401(&["Bearer realm=\"mcp\""])]),
        );
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Fail);
        assert!(a.note.contains("names no resource_metadata"), "{a:?}");
        assert!(a.note.contains(r#""Bearer realm="mcp"""#), "{a:?}");

        // Not RFC 9110 syntax: said so. The URL is the one the collector followed (the
        // lenient reading), but a strict client finds none, so the leg still fails.
        let o = grade(
            &C3_1_2,
            &protected(vec![detect_401(&["Bearer resource_metadata=http://x/y"])]),
        );
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Fail);
        assert!(a.note.contains("not RFC 9110 syntax"), "{a:?}");
        assert!(
            a.note
                .contains(r#"names resource_metadata="http://x/y" only outside"#),
            "{a:?}"
        );
        assert_eq!(o.details["resource_metadata"], "http://x/y");

        // The same URL quoted: well formed, pass.
        let o = grade(
            &C3_1_2,
            &protected(vec![detect_401(&[
                "Bearer resource_metadata=\"http://x/y\"",
            ])]),
        );
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Pass, "{a:?}");
        assert!(!a.note.contains("RFC 9110"), "{a:?}");
    }

    #[test]
    fn c3_1_2_a_unknown_when_no_challenge_was_observed() {
        // Credential presented from the first request, and no 2.3.unauthenticated leg.
        let ev = credentialed(
            false,
            vec![detect_ok_with_credential()],
            vec![opaque(Some(600), None)],
        );
        let o = grade(&C3_1_2, &ev);
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Unknown, "{o:#?}");
        assert!(a.note.contains("no challenge observed"), "{a:?}");
        assert_eq!(leg_of(&o, "3.1.2b").outcome, LegOutcome::Pass);
        assert_eq!(o.verdict, Verdict::Unknown);

        // The leg skipped: its reason is quoted.
        let ev = credentialed(
            false,
            vec![
                detect_ok_with_credential(),
                skipped(&[leg::AUTH_NONE, leg::AUTH_WITH], "not sent: --info"),
            ],
            vec![opaque(Some(600), None)],
        );
        let a = leg_of(&grade(&C3_1_2, &ev), "3.1.2a").clone();
        assert!(a.note.contains("not sent: --info"), "{a:?}");
    }

    #[test]
    fn c3_1_2_a_reads_the_2_3_unauthenticated_leg_when_a_credential_was_presented() {
        let unauth = exchange(
            &[leg::AUTH_NONE],
            LIST,
            401,
            "application/json",
            "{}",
            &[("WWW-Authenticate", &challenge(PRM_PATH))],
        );
        let ev = credentialed(
            true,
            vec![detect_ok_with_credential(), unauth],
            vec![opaque(Some(3600), None)],
        );
        let o = grade(&C3_1_2, &ev);
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Pass, "{o:#?}");
        assert!(a.note.contains("2.3.unauthenticated"), "{a:?}");
        assert_eq!(
            o.verdict,
            Verdict::Pass,
            "3600 s is within the limit: {o:#?}"
        );

        // The unauthenticated tools/list answered: not required.
        let open = exchange(
            &[leg::AUTH_NONE],
            LIST,
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
            &[],
        );
        let ev = credentialed(false, vec![detect_ok_with_credential(), open], vec![]);
        let a = leg_of(&grade(&C3_1_2, &ev), "3.1.2a").clone();
        assert_eq!(a.outcome, LegOutcome::Fail, "{a:?}");
        assert!(a.note.contains("reached a response"));

        // A 400 for another reason decides nothing.
        let other = exchange(
            &[leg::AUTH_NONE],
            LIST,
            400,
            "text/plain",
            "Bad Request",
            &[],
        );
        let ev = credentialed(false, vec![detect_ok_with_credential(), other], vec![]);
        let a = leg_of(&grade(&C3_1_2, &ev), "3.1.2a").clone();
        assert_eq!(a.outcome, LegOutcome::Unknown, "{a:?}");
        assert!(a.note.contains("HTTP 400"));
    }

    #[test]
    fn c3_1_2_a_keeps_the_detection_401_when_a_login_followed() {
        // Detection without a credential (401), the login, a second detection with the
        // token (200), then the 2.3 pair: the first 401 is the challenge.
        let unauth = exchange(
            &[leg::AUTH_NONE],
            LIST,
            401,
            "application/json",
            "{}",
            &[("WWW-Authenticate", "Bearer realm=\"other\"")],
        );
        let mut records = lab_auth_records();
        records.insert(1, detect_ok_with_credential());
        records.push(unauth);
        let mut s = session(Some("2025-11-25"), json!({"tools": {}}), None);
        s.auth_required = true;
        s.authenticated = true;
        s.negotiated_in = Some(1);
        let mut ev = evidence(Some(s), records);
        ev.payload.tokens = vec![jwt_token(lab_claims(), Some(600), None)];
        let o = grade(&C3_1_2, &ev);
        let a = leg_of(&o, "3.1.2a");
        assert_eq!(a.outcome, LegOutcome::Pass, "{o:#?}");
        assert!(
            a.note.contains("endpoint.detect request (record #0)"),
            "{a:?}"
        );
        assert_eq!(o.verdict, Verdict::Pass);
        assert_eq!(grade(&C3_3_2, &ev).legs.len(), 7);
    }

    #[test]
    fn c3_1_2_b_grades_the_issued_lifetime() {
        let cases: &[(TokenFacts, LegOutcome, &str)] = &[
            (
                opaque(Some(600), None),
                LegOutcome::Pass,
                "600 s (expires_in",
            ),
            (
                opaque(Some(86_100), None),
                LegOutcome::Fail,
                "86100 s (expires_in",
            ),
            (
                jwt_token(json!({"iat": 1000, "exp": 8200, "aud": EP}), None, None),
                LegOutcome::Fail,
                "7200 s (exp - iat",
            ),
            (
                jwt_token(json!({"iat": 1000, "exp": 4600, "aud": EP}), None, None),
                LegOutcome::Pass,
                "3600 s (exp - iat",
            ),
            // expires_in wins over the claims.
            (
                jwt_token(json!({"iat": 0, "exp": 99_999}), Some(300), None),
                LegOutcome::Pass,
                "300 s (expires_in",
            ),
            (opaque(None, None), LegOutcome::Unknown, "is opaque"),
            (
                jwt_token(json!({"exp": 5000}), None, None),
                LegOutcome::Unknown,
                "without numeric exp and iat",
            ),
        ];
        for (t, want, words) in cases {
            let o = grade(&C3_1_2, &lab_auth_with_token(t.clone()));
            let b = leg_of(&o, "3.1.2b");
            assert_eq!(b.outcome, *want, "{t:?}: {b:?}");
            assert!(b.note.contains(words), "{words}: {b:?}");
            if *want == LegOutcome::Fail {
                assert!(
                    b.note.contains("exceeds the benchmark baseline of 3600 s"),
                    "{b:?}"
                );
            }
        }
        let o = grade(
            &C3_1_2,
            &lab_auth_with_token(jwt_token(lab_claims(), Some(600), None)),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert_eq!(o.details["token_lifetimes_seconds"], json!([600]));
        assert_eq!(o.details["lifetime_limit_seconds"], 3600);
    }

    #[test]
    fn c3_1_2_needs_an_endpoint_and_the_detection_leg() {
        let o = grade(&C3_1_2, &evidence(None, vec![]));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("no MCP endpoint"), "{o:?}");
        let o = grade(&C3_1_2, &open_server(vec![]));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("endpoint.detect missing"), "{o:?}");
        // Without discovery legs c and d say so, and 3.1.2 still decides.
        let o = grade(&C3_1_2, &open_server(vec![detect_ok()]));
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            leg_of(&o, "3.1.2c").note.contains("collector predates it"),
            "{o:?}"
        );
    }

    // ----- 3.2.2

    #[test]
    fn c3_2_2_is_na_without_oauth_and_unknown_when_discovery_was_not_read() {
        let o = grade(&C3_2_2, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert!(o.evidence.contains("no OAuth is offered"), "{o:?}");
        assert!(o.evidence.contains("clean 404"), "{o:?}");

        for bad in [
            failed(leg::PRM, PRM_ROOT, ErrorKind::RefusedByGuard),
            failed(leg::PRM, PRM_ROOT, ErrorKind::Timeout),
            get(leg::PRM, PRM_ROOT, 503, "busy"),
            get(leg::PRM, PRM_ROOT, 200, "<html>"),
        ] {
            let ev = open_server(vec![detect_ok(), get(leg::PRM, PRM_PATH, 404, ""), bad]);
            let o = grade(&C3_2_2, &ev);
            assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
            assert!(o.evidence.contains("undecided"), "{o:?}");
        }
        // A candidate never attempted is unread too.
        let ev = open_server(vec![detect_ok(), get(leg::PRM, PRM_PATH, 404, "")]);
        let o = grade(&C3_2_2, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("never attempted"), "{o:?}");
    }

    #[test]
    fn c3_2_2_unknown_when_oauth_is_offered_but_no_token_is_held() {
        let o = grade(&C3_2_2, &protected(lab_auth_records()));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("holds no access token"), "{o:?}");
        assert!(o.evidence.contains("auth_required"), "{o:?}");
    }

    #[test]
    fn c3_2_2_reads_the_audience() {
        let o = grade(&C3_2_2, &lab_auth_with_token(opaque(Some(600), None)));
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("opaque"), "{o:?}");

        let o = grade(
            &C3_2_2,
            &lab_auth_with_token(jwt_token(json!({"sub": "a"}), None, None)),
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("without an aud"), "{o:?}");

        let o = grade(
            &C3_2_2,
            &lab_auth_with_token(jwt_token(lab_claims(), None, None)),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(o.evidence.contains("confined to this resource"), "{o:?}");
        assert_eq!(o.details["extra_audiences"], json!([]));

        let claims = json!({"aud": [format!("{EP}/"), "https://api.downstream.example/"]});
        let o = grade(&C3_2_2, &lab_auth_with_token(jwt_token(claims, None, None)));
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        assert!(
            o.evidence.contains("https://api.downstream.example/"),
            "{o:?}"
        );
        assert!(o.evidence.contains("beyond this resource"), "{o:?}");
        assert_eq!(
            o.details["extra_audiences"],
            json!(["https://api.downstream.example/"])
        );
    }

    #[test]
    fn c3_2_2_uses_the_prm_resource_when_it_covers_the_endpoint() {
        let parent = "http://127.0.0.1:8080/";
        let mut records = lab_auth_records();
        records[1] = get(leg::PRM, PRM_PATH, 200, &prm_doc(parent, json!([AS]), None));
        let mut ev = protected(records);
        ev.payload.tokens = vec![jwt_token(json!({"aud": parent}), None, None)];
        let o = grade(&C3_2_2, &ev);
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(o.evidence.contains("covers the endpoint"), "{o:?}");
        assert_eq!(o.details["canonical_resource"], parent);
    }

    #[test]
    fn c3_2_2_old_bundle_without_discovery_is_error_naming_the_leg() {
        let o = grade(&C3_2_2, &open_server(vec![detect_ok()]));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("discovery.prm missing"), "{o:?}");
        let o = grade(&C3_2_2, &evidence(None, vec![]));
        assert!(o.evidence.contains("no MCP endpoint"), "{o:?}");
    }

    // ----- 3.3.2

    fn with_baseline<'a>(b: &'a Evidence) -> Context<'a> {
        Context {
            baseline: Some(b),
            updating_baseline: false,
        }
    }

    #[test]
    fn c3_3_2_na_without_oauth_fail_when_oauth_publishes_no_prm() {
        let o = grade(&C3_3_2, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert!(o.evidence.contains("no OAuth is offered"), "{o:?}");

        let ev = protected(vec![
            detect_401(&["Bearer realm=\"mcp\""]),
            get(leg::PRM, PRM_PATH, 404, ""),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&C3_3_2, &ev);
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        assert!(
            o.evidence
                .contains("publishes no protected-resource metadata"),
            "{o:?}"
        );

        // Basic-only 401 with no PRM: no OAuth offered.
        let ev = protected(vec![
            detect_401(&["Basic realm=\"x\""]),
            get(leg::PRM, PRM_PATH, 404, ""),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&C3_3_2, &ev);
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert!(o.evidence.contains("names no OAuth scheme"), "{o:?}");
    }

    #[test]
    fn c3_3_2_unread_discovery_is_unknown() {
        let ev = protected(vec![
            detect_401(&[&challenge(PRM_PATH)]),
            failed(leg::PRM, PRM_PATH, ErrorKind::RefusedByGuard),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&C3_3_2, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("network guard"), "{o:?}");
        assert_eq!(o.details["guard_refused_urls"], json!([PRM_PATH]));
        // An answer the collector did not use (DNS rebinding) is unread as well.
        let ev = protected(vec![
            detect_401(&[&challenge(PRM_PATH)]),
            get(leg::PRM, PRM_PATH, 200, &prm_doc(EP, json!([AS]), None)),
            skipped(
                &[leg::PRM],
                &format!("not used: the answer from {PRM_PATH} came from 10.0.0.1 (private), which the guard refuses for a loopback target"),
            ),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&C3_3_2, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("not used"), "{o:?}");
    }

    #[test]
    fn c3_3_2_plain_http_off_loopback_is_unknown() {
        let ep = "http://mcp.example.com/mcp";
        let mut ev = protected(vec![
            detect_401(&[&challenge(
                "http://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            )]),
            get(
                leg::PRM,
                "http://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                200,
                &prm_doc(ep, json!([AS]), None),
            ),
        ]);
        ev.payload.target.endpoint = Some(ep.into());
        let o = grade(&C3_3_2, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert_eq!(o.legs.len(), 1);
        assert!(leg_of(&o, "3.3.2a").note.contains("2.2 owns transport"));
    }

    #[test]
    fn c3_3_2_lab_chain_passes_with_a_baseline_and_says_loopback() {
        let ev = protected(lab_auth_records());
        let o = grade(&C3_3_2, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "no baseline yet: {o:#?}");
        assert_eq!(leg_of(&o, "3.3.2f").outcome, LegOutcome::Unknown);
        for id in ["3.3.2a", "3.3.2b", "3.3.2c", "3.3.2d", "3.3.2e", "3.3.2g"] {
            assert_eq!(leg_of(&o, id).outcome, LegOutcome::Pass, "{id}: {o:#?}");
        }
        assert!(leg_of(&o, "3.3.2a").note.contains("loopback"), "{o:?}");
        assert!(leg_of(&o, "3.3.2b")
            .note
            .contains("path-inserted well-known URL itself"));
        assert!(leg_of(&o, "3.3.2d").note.contains("equal"));

        let base = protected(lab_auth_records());
        let o = run(&C3_3_2, &ev, &with_baseline(&base));
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert_eq!(o.details["authorization_servers_advertised"], json!([AS]));
        assert_eq!(o.details["authorization_servers_resolved"], json!([AS]));
        assert_eq!(o.details["discovery_paths_answered"], json!([PRM_PATH]));

        let o = run(
            &C3_3_2,
            &ev,
            &Context {
                baseline: Some(&base),
                updating_baseline: true,
            },
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(leg_of(&o, "3.3.2f").note.contains("records the baseline"));
    }

    #[test]
    fn c3_3_2_b_fails_when_two_documents_for_the_resource_differ() {
        let named = "http://127.0.0.1:8080/prm.json";
        let ev = protected(vec![
            detect_401(&[&challenge(named)]),
            get(leg::PRM, named, 200, &prm_doc(EP, json!([AS]), None)),
            get(
                leg::PRM,
                PRM_PATH,
                200,
                &prm_doc(EP, json!(["https://other.example"]), None),
            ),
            get(leg::PRM, PRM_ROOT, 404, ""),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]);
        let o = grade(&C3_3_2, &ev);
        let b = leg_of(&o, "3.3.2b");
        assert_eq!(b.outcome, LegOutcome::Fail, "{o:#?}");
        assert!(b.note.contains("authorization_servers"), "{b:?}");
        assert_eq!(o.verdict, Verdict::Fail);

        // Same members in another order: equal.
        let reordered =
            json!({"bearer_methods_supported": ["header"], "authorization_servers": [AS],
                               "resource": EP})
            .to_string();
        let ev = protected(vec![
            detect_401(&[&challenge(named)]),
            get(leg::PRM, named, 200, &prm_doc(EP, json!([AS]), None)),
            get(leg::PRM, PRM_PATH, 200, &reordered),
            get(leg::PRM, PRM_ROOT, 404, ""),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]);
        let b = leg_of(&grade(&C3_3_2, &ev), "3.3.2b").clone();
        assert_eq!(b.outcome, LegOutcome::Pass, "{b:?}");
        assert!(b.note.contains("equals"), "{b:?}");
    }

    #[test]
    fn c3_3_2_c_d_e_rules() {
        // An https endpoint whose challenge names PRM served over plain http elsewhere.
        let ep = "https://mcp.example.com/mcp";
        let plain = "http://meta.example.com/prm";
        let mut ev = protected(vec![
            detect_401(&[&challenge(plain)]),
            get(leg::PRM, plain, 200, &prm_doc(ep, json!([AS]), None)),
            get(
                leg::PRM,
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                404,
                "",
            ),
            get(
                leg::PRM,
                "https://mcp.example.com/.well-known/oauth-protected-resource",
                404,
                "",
            ),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]);
        ev.payload.target.endpoint = Some(ep.into());
        let o = grade(&C3_3_2, &ev);
        assert_eq!(leg_of(&o, "3.3.2a").outcome, LegOutcome::Pass);
        let c = leg_of(&o, "3.3.2c");
        assert_eq!(c.outcome, LegOutcome::Fail, "{o:#?}");
        assert!(c.note.contains(plain), "{c:?}");

        let doc = |resource: Value, servers: Value| {
            let mut r = lab_auth_records();
            r[1] = get(
                leg::PRM,
                PRM_PATH,
                200,
                &json!({"resource": resource, "authorization_servers": servers}).to_string(),
            );
            protected(r)
        };
        let d = |ev: &Evidence| leg_of(&grade(&C3_3_2, ev), "3.3.2d").clone();
        let l = d(&doc(json!("http://127.0.0.1:8080/other"), json!([AS])));
        assert_eq!(l.outcome, LegOutcome::Fail, "{l:?}");
        assert!(l.note.contains("neither"), "{l:?}");
        let l = d(&doc(json!("::not a uri::"), json!([AS])));
        assert_eq!(l.outcome, LegOutcome::Fail, "{l:?}");
        assert!(l.note.contains("not parsable"), "{l:?}");
        let l = d(&doc(json!(7), json!([AS])));
        assert_eq!(l.outcome, LegOutcome::Fail, "{l:?}");
        let l = d(&doc(json!("http://127.0.0.1:8080"), json!([AS])));
        assert_eq!(l.outcome, LegOutcome::Pass, "{l:?}");
        assert!(l.note.contains("hierarchical parent"), "{l:?}");
        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &json!({"authorization_servers": [AS]}).to_string(),
        );
        let l = d(&protected(r));
        assert_eq!(l.outcome, LegOutcome::Unknown, "{l:?}");

        let o = grade(&C3_3_2, &doc(json!(EP), json!(["", 3])));
        let e = leg_of(&o, "3.3.2e");
        assert_eq!(e.outcome, LegOutcome::Fail, "{o:#?}");
        assert!(e.note.contains("2 element(s)"), "{e:?}");
        assert_eq!(leg_of(&o, "3.3.2g").outcome, LegOutcome::Unknown);
    }

    #[test]
    fn c3_3_2_f_fails_on_an_added_authorization_server() {
        let base = protected(lab_auth_records());
        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(EP, json!([AS, "https://new-as.example"]), None),
        );
        let ev = protected(r);
        let o = run(&C3_3_2, &ev, &with_baseline(&base));
        let f = leg_of(&o, "3.3.2f");
        assert_eq!(f.outcome, LegOutcome::Fail, "{o:#?}");
        assert!(f.note.contains("https://new-as.example"), "{f:?}");
        assert!(f.note.contains("--update-baseline"), "{f:?}");

        // A baseline from before discovery was recorded decides nothing.
        let old = open_server(vec![detect_ok()]);
        let f = leg_of(
            &run(
                &C3_3_2,
                &protected(lab_auth_records()),
                &with_baseline(&old),
            ),
            "3.3.2f",
        )
        .clone();
        assert_eq!(f.outcome, LegOutcome::Unknown, "{f:?}");
    }

    #[test]
    fn c3_3_2_g_issuer_rules() {
        let mut r = lab_auth_records();
        r[3] = get(
            leg::AS_META,
            AS_FORM,
            200,
            &as_meta("http://127.0.0.1:9000/"),
        );
        let g = leg_of(&grade(&C3_3_2, &protected(r)), "3.3.2g").clone();
        assert_eq!(g.outcome, LegOutcome::Fail, "{g:?}");
        assert!(g.note.contains("only by a trailing slash"), "{g:?}");

        let mut r = lab_auth_records();
        r[3] = failed(leg::AS_META, AS_FORM, ErrorKind::RefusedByGuard);
        r.push(failed(leg::AS_META, AS_OIDC, ErrorKind::RefusedByGuard));
        let o = grade(&C3_3_2, &protected(r));
        let g = leg_of(&o, "3.3.2g");
        assert_eq!(g.outcome, LegOutcome::Unknown, "{o:#?}");
        assert!(g.note.contains("network guard"), "{g:?}");

        let mut r = lab_auth_records();
        r[3] = get(leg::AS_META, AS_FORM, 404, "");
        r.push(get(leg::AS_META, AS_OIDC, 200, r#"{"no_issuer": true}"#));
        let o = grade(&C3_3_2, &protected(r));
        let g = leg_of(&o, "3.3.2g");
        assert_eq!(g.outcome, LegOutcome::Error, "{o:#?}");
        assert!(g.note.contains("2 form(s) tried"), "{g:?}");
        assert_eq!(o.verdict, Verdict::Error);

        // Resolved at the second form.
        let mut r = lab_auth_records();
        r[3] = get(leg::AS_META, AS_FORM, 404, "");
        r.push(get(leg::AS_META, AS_OIDC, 200, &as_meta(AS)));
        let g = leg_of(&grade(&C3_3_2, &protected(r)), "3.3.2g").clone();
        assert_eq!(g.outcome, LegOutcome::Pass, "{g:?}");

        // No record for the advertised server at all.
        let mut r = lab_auth_records();
        r.truncate(3);
        let g = leg_of(&grade(&C3_3_2, &protected(r)), "3.3.2g").clone();
        assert_eq!(g.outcome, LegOutcome::Error, "{g:?}");
        assert!(g.note.contains("no discovery form was attempted"), "{g:?}");

        // An entry that is not a URL.
        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(EP, json!(["not a url"]), None),
        );
        r[3] = failed(leg::AS_META, "not a url", ErrorKind::RefusedByGuard);
        let g = leg_of(&grade(&C3_3_2, &protected(r)), "3.3.2g").clone();
        assert_eq!(g.outcome, LegOutcome::Fail, "{g:?}");
    }

    #[test]
    fn c3_3_2_old_bundle_is_error_naming_the_leg() {
        let o = grade(
            &C3_3_2,
            &protected(vec![detect_401(&[&challenge(PRM_PATH)])]),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:#?}");
        assert!(o.evidence.contains("discovery.prm missing"), "{o:?}");
    }

    // ----- 3.3.4

    #[test]
    fn c3_3_4_na_without_oauth_unknown_when_unread() {
        let o = grade(&C3_3_4, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert_eq!(o.details["legs"], json!({}));
        let ev = open_server(vec![
            detect_ok(),
            failed(leg::PRM, PRM_PATH, ErrorKind::Timeout),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&C3_3_4, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("timeout"), "{o:?}");
    }

    #[test]
    fn c3_3_4_lab_without_token() {
        let o = grade(&C3_3_4, &protected(lab_auth_records()));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert_eq!(leg_of(&o, "3.3.4a").outcome, LegOutcome::Unknown);
        assert_eq!(leg_of(&o, "3.3.4b").outcome, LegOutcome::Unknown);
        assert_eq!(leg_of(&o, "3.3.4c").outcome, LegOutcome::Unknown);
        assert_eq!(leg_of(&o, "3.3.4d").outcome, LegOutcome::Pass);
        let e = leg_of(&o, "3.3.4e");
        assert_eq!(e.outcome, LegOutcome::Unknown);
        assert!(e.note.contains("no out-of-scope call made"), "{e:?}");
        let f = leg_of(&o, "3.3.4f");
        assert_eq!(f.outcome, LegOutcome::Pass);
        assert!(f.note.contains("mcp:tools"), "{f:?}");
        assert!(o.details["granted_scopes"].is_null());
        assert_eq!(o.details["advertised_scopes"], json!(["mcp:tools"]));
    }

    #[test]
    fn c3_3_4_granted_scopes_none_versus_empty() {
        let o = grade(&C3_3_4, &lab_auth_with_token(opaque(Some(600), Some(""))));
        let a = leg_of(&o, "3.3.4a");
        assert_eq!(a.outcome, LegOutcome::Pass, "{o:#?}");
        assert!(a.note.contains("stated and empty"), "{a:?}");
        assert_eq!(o.details["granted_scopes"], json!([]));

        let o = grade(&C3_3_4, &lab_auth_with_token(opaque(Some(600), None)));
        assert_eq!(leg_of(&o, "3.3.4a").outcome, LegOutcome::Unknown);
        assert!(o.details["granted_scopes"].is_null());

        let t = jwt_token(json!({"scp": ["mcp:tools", "mcp:read"]}), None, None);
        let o = grade(&C3_3_4, &lab_auth_with_token(t));
        assert_eq!(leg_of(&o, "3.3.4a").outcome, LegOutcome::Pass);
        assert_eq!(leg_of(&o, "3.3.4b").outcome, LegOutcome::Pass);
        assert_eq!(
            o.details["granted_scopes"],
            json!(["mcp:tools", "mcp:read"])
        );
    }

    #[test]
    fn c3_3_4_b_and_d_fail_on_wildcard_or_admin_tier() {
        let o = grade(
            &C3_3_4,
            &lab_auth_with_token(opaque(Some(600), Some("read *"))),
        );
        let b = leg_of(&o, "3.3.4b");
        assert_eq!(b.outcome, LegOutcome::Fail, "{o:#?}");
        assert!(b.note.contains("wildcard [\"*\"]"), "{b:?}");
        assert_eq!(o.verdict, Verdict::Fail);

        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(
                EP,
                json!([AS]),
                Some(json!(["mcp:tools", "admin:all", "files:*"])),
            ),
        );
        let o = grade(&C3_3_4, &protected(r));
        let d = leg_of(&o, "3.3.4d");
        assert_eq!(d.outcome, LegOutcome::Fail, "{o:#?}");
        assert!(
            d.note.contains("admin:all") && d.note.contains("files:*"),
            "{d:?}"
        );

        let mut r = lab_auth_records();
        r[1] = get(leg::PRM, PRM_PATH, 200, &prm_doc(EP, json!([AS]), None));
        let d = leg_of(&grade(&C3_3_4, &protected(r)), "3.3.4d").clone();
        assert_eq!(d.outcome, LegOutcome::Unknown, "{d:?}");
    }

    #[test]
    fn c3_3_4_c_compares_with_the_baseline() {
        let base = lab_auth_with_token(opaque(Some(600), Some("mcp:tools")));
        let ev = lab_auth_with_token(opaque(Some(600), Some("mcp:tools mcp:admin-ish")));
        let c = leg_of(&run(&C3_3_4, &ev, &with_baseline(&base)), "3.3.4c").clone();
        assert_eq!(c.outcome, LegOutcome::Fail, "{c:?}");
        assert!(c.note.contains("mcp:admin-ish"), "{c:?}");

        let c = leg_of(&run(&C3_3_4, &base, &with_baseline(&ev)), "3.3.4c").clone();
        assert_eq!(c.outcome, LegOutcome::Pass, "{c:?}");

        let none = protected(lab_auth_records());
        let c = leg_of(&run(&C3_3_4, &ev, &with_baseline(&none)), "3.3.4c").clone();
        assert_eq!(c.outcome, LegOutcome::Unknown, "{c:?}");
        assert!(c.note.contains("holds no readable granted scope"), "{c:?}");

        let cx = Context {
            baseline: Some(&base),
            updating_baseline: true,
        };
        let c = leg_of(&run(&C3_3_4, &ev, &cx), "3.3.4c").clone();
        assert_eq!(c.outcome, LegOutcome::Unknown);
        assert!(c.note.contains("compares nothing"), "{c:?}");
    }

    #[test]
    fn c3_3_4_e_never_guesses() {
        let mut ev = lab_auth_with_token(opaque(Some(600), Some("mcp:tools")));
        ev.payload.run.inputs = Some(json!({"scope_probe_tool": "delete_everything"}));
        let e = leg_of(&grade(&C3_3_4, &ev), "3.3.4e").clone();
        assert_eq!(e.outcome, LegOutcome::Unknown);
        assert!(e.note.contains("delete_everything"), "{e:?}");
        assert!(e.note.contains("no out-of-scope call"), "{e:?}");
    }

    #[test]
    fn c3_3_4_f_sources() {
        // Nothing advertised anywhere, everything read: fail.
        let ev = protected(vec![
            detect_401(&["Bearer realm=\"mcp\""]),
            get(leg::PRM, PRM_PATH, 404, ""),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let f = leg_of(&grade(&C3_3_4, &ev), "3.3.4f").clone();
        assert_eq!(f.outcome, LegOutcome::Fail, "{f:?}");
        assert!(f.note.contains("no scope is discoverable"), "{f:?}");

        // The challenge's scope alone suffices, and a difference from the advertised
        // union is only noted.
        let mut r = lab_auth_records();
        r[0] = detect_401(&[&format!(
            "Bearer scope=\"mcp:read\", resource_metadata=\"{PRM_PATH}\""
        )]);
        let o = grade(&C3_3_4, &protected(r));
        let f = leg_of(&o, "3.3.4f");
        assert_eq!(f.outcome, LegOutcome::Pass, "{o:#?}");
        assert!(
            f.note.contains("differs from the advertised union"),
            "{f:?}"
        );
        assert_eq!(o.details["challenge_scope"], "mcp:read");

        // The advertised AS unresolved (guard) and no other source: unknown.
        let mut r = lab_auth_records();
        r[1] = get(leg::PRM, PRM_PATH, 200, &prm_doc(EP, json!([AS]), None));
        r[3] = failed(leg::AS_META, AS_FORM, ErrorKind::RefusedByGuard);
        let f = leg_of(&grade(&C3_3_4, &protected(r)), "3.3.4f").clone();
        assert_eq!(f.outcome, LegOutcome::Unknown, "{f:?}");
        assert!(f.note.contains("guard-refused"), "{f:?}");
    }

    #[test]
    fn lab_oauth_run_predictions() {
        // py2-auth after a login: JWT from oidc-provider (600 s, aud = the resource,
        // scope "mcp:tools mcp:read").
        let ev = lab_auth_with_token(jwt_token(
            lab_claims(),
            Some(600),
            Some("mcp:tools mcp:read"),
        ));
        assert_eq!(grade(&C3_1_2, &ev).verdict, Verdict::Pass);
        assert_eq!(grade(&C3_2_2, &ev).verdict, Verdict::Pass);
        let o = grade(&C3_3_4, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        let unknown: Vec<&str> = o
            .legs
            .iter()
            .filter(|l| l.outcome == LegOutcome::Unknown)
            .map(|l| l.id.as_str())
            .collect();
        assert_eq!(unknown, ["3.3.4c", "3.3.4e"]);
        let o = run(&C3_3_4, &ev, &with_baseline(&ev));
        let unknown: Vec<&str> = o
            .legs
            .iter()
            .filter(|l| l.outcome == LegOutcome::Unknown)
            .map(|l| l.id.as_str())
            .collect();
        assert_eq!(unknown, ["3.3.4e"]);
    }

    // ----- the lab's bundles

    /// Every bundle in examples/. The no-OAuth servers (all but py2-auth): 3.1.2 FAIL
    /// (an unauthenticated request reached a response); 3.2.2, 3.3.2 and 3.3.4 N/A once
    /// the bundle records discovery (the lab servers answer 404 at both well-known
    /// URLs), ERROR naming discovery.prm before. py2-auth (401 naming
    /// resource_metadata, no token): 3.1.2 UNKNOWN (a pass, b unknown); the others
    /// ERROR before discovery is recorded, and never N/A after (it offers OAuth).
    #[test]
    fn lab_bundles() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("examples dir") {
            let path = entry.expect("dir entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("mcpev") {
                continue;
            }
            seen += 1;
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let bytes = std::fs::read(&path).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            let ev = Evidence::new(path.display().to_string(), v);
            let outcomes: Vec<Outcome> = [&C3_1_2 as &dyn Check, &C3_2_2, &C3_3_2, &C3_3_4]
                .iter()
                .map(|c| grade(*c, &ev))
                .collect();
            for o in &outcomes {
                assert!(!o.evidence.contains("check raised"), "{name}: {o:#?}");
            }
            let recorded = ev.has_leg(leg::PRM);
            if name == "py2-auth-login.mcpev" {
                // After a headless login: 401 naming resource_metadata and a 600 s token
                // (3.1.2 PASS); the token's aud is exactly the resource (3.2.2 PASS).
                assert_eq!(
                    outcomes[0].verdict,
                    Verdict::Pass,
                    "{name}: {:#?}",
                    outcomes[0]
                );
                assert_eq!(
                    outcomes[1].verdict,
                    Verdict::Pass,
                    "{name}: {:#?}",
                    outcomes[1]
                );
                continue;
            }
            if name == "py2-auth.mcpev" {
                assert_eq!(
                    outcomes[0].verdict,
                    Verdict::Unknown,
                    "{name}: {:#?}",
                    outcomes[0]
                );
                assert_eq!(leg_of(&outcomes[0], "3.1.2a").outcome, LegOutcome::Pass);
                for o in &outcomes[1..] {
                    if recorded {
                        assert_ne!(o.verdict, Verdict::NotApplicable, "{name}: {o:#?}");
                    } else {
                        assert_eq!(o.verdict, Verdict::Error, "{name}: {o:#?}");
                        assert!(o.evidence.contains("discovery.prm"), "{name}: {o:?}");
                    }
                }
                if recorded {
                    assert_eq!(outcomes[1].verdict, Verdict::Unknown, "{name}");
                }
                continue;
            }
            assert_eq!(
                outcomes[0].verdict,
                Verdict::Fail,
                "{name}: {:#?}",
                outcomes[0]
            );
            assert!(
                outcomes[0].evidence.contains("reached a response"),
                "{name}"
            );
            for o in &outcomes[1..] {
                if recorded {
                    assert_eq!(o.verdict, Verdict::NotApplicable, "{name}: {o:#?}");
                } else {
                    assert_eq!(o.verdict, Verdict::Error, "{name}: {o:#?}");
                    assert!(
                        o.evidence.contains("discovery.prm missing"),
                        "{name}: {o:?}"
                    );
                }
            }
        }
        assert!(seen >= 12, "only {seen} bundles in {}", dir.display());
    }
}
