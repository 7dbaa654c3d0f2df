//! Section 3 OAuth checks on the wire: 3.1.2, 3.2.2, 3.3.2 and 3.3.4 (spec/checks.md
//! §11.3, with §5.1 for discovery, §6.5 for resource coverage, §7 for reading tokens and
//! §15 for "unread" versus "observed absent").
//!
//! Nothing here sends anything: the collector records, this module decides. It reads
//!
//! * the unauthenticated challenge: the 401 on `endpoint.detect` when the run presented
//!   no credential, else the `2.3.unauthenticated` leg (the one request sent without the
//!   run's credential); its `WWW-Authenticate` is parsed from the raw bytes by
//!   [`parse_www_authenticate`] (RFC 9110 §11.6.1; never panics, so a non-ASCII byte
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
use mcp_probe_schema::model::{BodyEnd, ErrorKind, HttpOutcome, Observation, TokenFacts};
use mcp_probe_schema::vocab::{header, leg};
use serde_json::{json, Map, Value};
use url::{Host, Url};

use super::s2::or_null;
use crate::catalogue::{entry, Entry};
use crate::check::{Check, Context, Needs};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::{line, utc};
use crate::verdict::{aggregate, Leg, LegOutcome, Outcome, Verdict};

/// The checks of this module this build grades.
pub static CHECKS: &[&dyn Check] = &[&C3_1_2, &C3_2_2, &C3_3_2, &C3_3_4];

/// The longest issued access-token lifetime 3.1.2b accepts, in seconds: the benchmark's
/// baseline for a "short-lived" token (3600 s). A constant until the operator policy
/// file exists; a policy value will then replace it and the evidence will name which
/// limit was applied.
pub const MAX_TOKEN_LIFETIME_SECS: i64 = 3600;

/// At most this many advertised authorization servers are resolved (spec §5.1
/// `AS_LIST_CAP`); the collector notes the rest in a skipped `discovery.as` record.
pub const AS_LIST_CAP: usize = 5;

/// RFC 9728 well-known suffix.
const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
/// RFC 8414 well-known suffix.
const AS_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
/// OpenID Connect Discovery suffix.
const OIDC_WELL_KNOWN: &str = "/.well-known/openid-configuration";

// ---------------------------------------------------------------------------------------
// WWW-Authenticate (RFC 9110 §11.6.1)
// ---------------------------------------------------------------------------------------

/// One challenge of a `WWW-Authenticate` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The auth-scheme as sent (schemes compare case-insensitively).
    pub scheme: String,
    /// The token68 the challenge carries instead of parameters, if any.
    pub token68: Option<String>,
    /// The auth-params in order: name as sent, value with quoting removed (bytes outside
    /// UTF-8 replaced).
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The first parameter called `name` (case-insensitive, RFC 9110 §11.2).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// True when the scheme is `scheme` (case-insensitive).
    pub fn is_scheme(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }
}

/// Parse a `WWW-Authenticate` field value from its raw bytes: `#challenge`, each
/// `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`, params `token BWS "=" BWS ( token /
/// quoted-string )`. Best effort and total: an element that does not follow the syntax
/// is skipped up to the next top-level comma (a parameter whose value is followed by
/// anything but a comma is dropped whole, so an unquoted URL is never cut at its colon).
/// Never panics, on any input.
pub fn parse_www_authenticate(raw: &[u8]) -> Vec<Challenge> {
    parse_challenges(raw).0
}

/// [`parse_www_authenticate`], plus the byte offsets where elements were skipped as not
/// RFC 9110 syntax.
fn parse_challenges(raw: &[u8]) -> (Vec<Challenge>, Vec<usize>) {
    let mut c = Cursor { b: raw, i: 0 };
    let mut out = Vec::new();
    let mut errors = Vec::new();
    loop {
        c.skip_commas_ows();
        if c.at_end() {
            break;
        }
        let start = c.i;
        let Some(scheme) = c.token() else {
            errors.push(start);
            c.skip_element();
            continue;
        };
        let mut ch = Challenge {
            scheme: ascii(scheme),
            token68: None,
            params: Vec::new(),
        };
        match c.peek() {
            None | Some(b',') => {
                out.push(ch);
                continue;
            }
            Some(b' ' | b'\t') => {}
            Some(_) => {
                errors.push(start);
                c.skip_element();
                continue;
            }
        }
        c.ows();
        if matches!(c.peek(), None | Some(b',')) {
            out.push(ch);
            continue;
        }
        if let Some(t) = c.token68() {
            ch.token68 = Some(t);
            out.push(ch);
            continue;
        }
        c.params(&mut ch, &mut errors);
        out.push(ch);
    }
    (out, errors)
}

fn ascii(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// RFC 9110 `token68` characters (before the `=` padding).
fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }

    fn ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_commas_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > start).then(|| &self.b[start..self.i])
    }

    /// A token68 that is the whole rest of the element; the cursor is left unmoved
    /// otherwise.
    fn token68(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(is_token68_char) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        while self.peek() == Some(b'=') {
            self.i += 1;
        }
        let end = self.i;
        self.ows();
        if matches!(self.peek(), None | Some(b',')) {
            return Some(ascii(&self.b[start..end]));
        }
        self.i = start;
        None
    }

    /// A quoted-string; `None` (cursor past what was read) when unterminated or holding
    /// a byte the syntax forbids.
    fn quoted(&mut self) -> Option<Vec<u8>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.i += 1;
        let mut v = Vec::new();
        loop {
            let b = self.peek()?;
            self.i += 1;
            match b {
                b'"' => return Some(v),
                b'\\' => {
                    let n = self.peek()?;
                    if !(n == b'\t' || (0x20..=0x7e).contains(&n) || n >= 0x80) {
                        return None;
                    }
                    self.i += 1;
                    v.push(n);
                }
                b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e | 0x80..=0xff => v.push(b),
                _ => return None,
            }
        }
    }

    /// Advance to the next top-level comma (or the end), stepping over quoted strings.
    fn skip_element(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b',' => return,
                b'"' => {
                    self.i += 1;
                    while let Some(q) = self.peek() {
                        self.i += 1;
                        if q == b'\\' {
                            if self.peek().is_some() {
                                self.i += 1;
                            }
                        } else if q == b'"' {
                            break;
                        }
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// True when `token BWS "="` follows (an auth-param, not a new challenge).
    fn looks_like_param(&mut self) -> bool {
        let save = self.i;
        let yes = self.token().is_some() && {
            self.ows();
            self.peek() == Some(b'=')
        };
        self.i = save;
        yes
    }

    /// One `name=value` followed by OWS and then a comma or the end.
    fn param(&mut self) -> Option<(String, String)> {
        let name = ascii(self.token()?);
        self.ows();
        if self.peek() != Some(b'=') {
            return None;
        }
        self.i += 1;
        self.ows();
        let value = if self.peek() == Some(b'"') {
            String::from_utf8_lossy(&self.quoted()?).into_owned()
        } else {
            ascii(self.token()?)
        };
        self.ows();
        matches!(self.peek(), None | Some(b',')).then_some((name, value))
    }

    fn params(&mut self, ch: &mut Challenge, errors: &mut Vec<usize>) {
        loop {
            let start = self.i;
            match self.param() {
                Some(p) => ch.params.push(p),
                None => {
                    errors.push(start);
                    self.i = start;
                    self.skip_element();
                }
            }
            if self.at_end() {
                return;
            }
            // At a comma: another parameter of this challenge, or the next challenge.
            let save = self.i;
            self.skip_commas_ows();
            if self.at_end() {
                return;
            }
            if !self.looks_like_param() {
                self.i = save;
                return;
            }
        }
    }
}

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

/// True when the URL's host is loopback (127.0.0.0/8, ::1, `localhost`, `*.localhost`).
fn is_loopback(u: &Url) -> bool {
    match u.host() {
        Some(Host::Ipv4(a)) => a.is_loopback(),
        Some(Host::Ipv6(a)) => a.is_loopback(),
        Some(Host::Domain(d)) => {
            let d = d.to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        None => false,
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
        Ok(u) if is_loopback(&u) => Transport::LoopbackPlain,
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
    fn of_leg(ev: &Evidence, l: &str) -> Vec<Attempt> {
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
    source: &'static str,
    /// Every `WWW-Authenticate` field, as text for one line.
    fields: Vec<String>,
    challenges: Vec<Challenge>,
    /// Some element was not RFC 9110 syntax and was skipped.
    malformed: bool,
}

impl Challenged {
    fn read(x: &Exchange<'_>, source: &'static str) -> Challenged {
        let mut fields = Vec::new();
        let mut challenges = Vec::new();
        let mut malformed = false;
        if let Some(r) = x.response() {
            for h in r
                .headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case(header::WWW_AUTHENTICATE))
            {
                fields.push(line(&h.value_str()));
                let (c, errors) = parse_challenges(&h.value);
                challenges.extend(c);
                malformed |= !errors.is_empty();
            }
        }
        Challenged {
            seq: x.seq(),
            status: x.status().unwrap_or_default(),
            source,
            fields,
            challenges,
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

/// The request sent without the run's credential, and its answer.
fn read_unauth(ev: &Evidence) -> Unauth {
    let detect: Vec<Exchange<'_>> = ev.exchanges(leg::ENDPOINT_DETECT).collect();
    if !detect.iter().any(carries_credential) {
        let Some(s) = ev.session() else {
            return Unauth::NotObserved("no endpoint answered".into());
        };
        if s.auth_required {
            return match detect.iter().rev().find(|x| x.status() == Some(401)) {
                Some(x) => Unauth::Challenged(Challenged::read(x, leg::ENDPOINT_DETECT)),
                None => Unauth::NotObserved(
                    "the session records that authentication is required, but no endpoint.detect \
                     record holds the 401"
                        .into(),
                ),
            };
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

/// The runner's "leg missing" wording (grade.rs), for legs required after the endpoint
/// gate.
fn missing(ev: &Evidence, legs: &[&str]) -> Outcome {
    Outcome::single(
        Verdict::Error,
        format!(
            "leg(s) {} missing from this bundle (collected by {} {}, run status {}); re-collect with a \
             collector that records them",
            legs.join(", "),
            line(&ev.payload.collector.name),
            line(&ev.payload.collector.version),
            ev.payload.run.status.as_str()
        ),
        "",
    )
}

/// The endpoint gate and the legs required past it.
fn prelude<'a>(ev: &'a Evidence, legs: &[&'static str]) -> Result<Facts<'a>, Box<Outcome>> {
    let Some(f) = Facts::new(ev) else {
        return Err(Box::new(no_endpoint(ev)));
    };
    let absent: Vec<&str> = legs.iter().copied().filter(|l| !ev.has_leg(l)).collect();
    if !absent.is_empty() {
        return Err(Box::new(missing(ev, &absent)));
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
    fn entry(&self) -> &'static Entry {
        entry("3.1.2").expect("3.1.2 in the catalogue")
    }

    fn legs_read(&self) -> &'static [&'static str] {
        // Required in `grade`, after the endpoint gate: endpoint.detect. Read when
        // present: 2.3.unauthenticated (when the run presented a credential from the
        // start), discovery.prm and discovery.as (legs c and d).
        &[]
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
                "; part of the field is not RFC 9110 syntax and was skipped"
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
    fn entry(&self) -> &'static Entry {
        entry("3.2.2").expect("3.2.2 in the catalogue")
    }

    fn legs_read(&self) -> &'static [&'static str] {
        // Required in `grade`, after the endpoint gate: endpoint.detect, discovery.prm
        // (the PRM `resource` replaces the canonical URI; "no OAuth" needs the observed
        // absence). Read when present: 2.3.unauthenticated, discovery.as.
        &[]
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
    fn entry(&self) -> &'static Entry {
        entry("3.3.2").expect("3.3.2 in the catalogue")
    }

    fn legs_read(&self) -> &'static [&'static str] {
        // Required in `grade`, after the endpoint gate: endpoint.detect, discovery.prm.
        // discovery.as is read per advertised server (an advertised server with no record
        // is reported as never attempted, 3.3.2g).
        &[]
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
    let mut note = format!(
        "every document was served over TLS or on loopback: {}",
        urls.join(", ")
    );
    if !loopback.is_empty() {
        note = format!(
            "every document was served over https, or plain http on a loopback host (graded as a lab \
             endpoint): {}",
            urls.join(", ")
        );
    } else if answered
        .iter()
        .all(|a| transport_of(&a.url) == Transport::Tls)
    {
        note = format!("every document was served over https: {}", urls.join(", "));
    }
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
     against a self-recorded baseline, not an approved scope set; this build makes no out-of-scope call \
     (3.3.4e) and does not test step-up elevation";

/// The probe input naming a tool outside the run's grant (spec §9.3).
const SCOPE_PROBE_TOOL: &str = "scope_probe_tool";

impl Check for Check3_3_4 {
    fn entry(&self) -> &'static Entry {
        entry("3.3.4").expect("3.3.4 in the catalogue")
    }

    fn legs_read(&self) -> &'static [&'static str] {
        // Required in `grade`, after the endpoint gate: endpoint.detect, discovery.prm.
        // Read when present: 2.3.unauthenticated, discovery.as.
        &[]
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
            leg_3_3_4e(f.ev),
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

fn leg_3_3_4e(ev: &Evidence) -> Leg {
    const ID: &str = "3.3.4e";
    let tool = ev
        .payload
        .run
        .inputs
        .as_ref()
        .and_then(|i| i.get(SCOPE_PROBE_TOOL))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    match tool {
        None => Leg::new(
            ID,
            LegOutcome::Unknown,
            format!("no {SCOPE_PROBE_TOOL} in the probe inputs; no out-of-scope call made"),
        ),
        Some(t) => Leg::new(
            ID,
            LegOutcome::Unknown,
            format!(
                "the probe inputs name {SCOPE_PROBE_TOOL} \"{}\", but this collector build makes no \
                 out-of-scope call (no leg records one), so no refusal was observed",
                line(t)
            ),
        ),
    }
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
