//! Section 2 checks on the wire: 2.3 (authentication before a request-scoped response
//! stream) and 2.5 (Origin validated on every request), spec/checks.md §11.2 with the
//! corrections of §17 items 6 and 7.
//!
//! Both read complete `tools/list` requests that differ from each other in one property
//! only (the credential for 2.3; the `Origin` header for 2.5), so a difference in the
//! answers is attributable to that property. A FAIL is earned by a positive observation:
//! a result or an event stream given to a request that should have been refused. A 2xx
//! whose body is not JSON-RPC, or a 5xx without a JSON-RPC error, is not attributed to
//! the server (a gateway may have produced it, §15): ERROR.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{HttpOutcome, Observation, Record};
use mcp_probe_schema::vocab::{header, leg, LegId, REV_2025_11_25};
use serde_json::{json, Value};

use super::common::values::or_null;
use crate::check::{Check, Context, Legs};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::{excerpt, line};
use crate::grade::missing_legs;
use crate::verdict::{Outcome, Verdict};
use mcp_probe_schema::model::Era;

/// The Origin the collector sends on the hostile leg (docs/collector.md); the recorded
/// header is quoted when present.
pub use mcp_probe_schema::vocab::probe::HOSTILE_ORIGIN;

// ---------------------------------------------------------------------------------------
// Reading one recorded answer
// ---------------------------------------------------------------------------------------

/// What a response shows, read the same way for every leg of 2.3 and 2.5.
#[derive(Debug, Clone)]
struct Resp {
    seq: u64,
    status: u16,
    /// Media type essence, lower-cased.
    media: Option<String>,
    /// `Content-Type` as sent.
    content_type: Option<String>,
    /// A JSON-RPC result (non-null) to the request.
    has_result: bool,
    /// A JSON-RPC error object: `(code, message)`.
    error: Option<(Option<i64>, String)>,
    /// Zero-length body.
    empty: bool,
    /// `WWW-Authenticate`, if any.
    challenge: Option<String>,
    /// The start of the body, for the evidence.
    body_excerpt: String,
}

/// How a response is read before any check-specific rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// 2xx with a result, an event stream, or an empty body (an acceptance, §17 item 4).
    Accepted,
    /// A status >= 400 that is not a bare 5xx, or a JSON-RPC error at any status.
    Refused,
    /// 3xx: not followed.
    Redirect,
    /// A 2xx whose body is not JSON-RPC, or a 5xx without a JSON-RPC error.
    Unattributable,
}

/// One leg as recorded.
#[derive(Debug, Clone)]
enum Answer {
    /// The leg is absent from the bundle.
    Missing,
    /// Recorded as not sent.
    Skipped(String),
    /// Sent, no response head (transport failure).
    NoResponse { seq: u64, why: String },
    /// A response.
    Response(Resp),
}

impl Resp {
    fn read(x: &Exchange<'_>) -> Option<Resp> {
        let r = x.response()?;
        let answer = x.answer();
        let error = answer
            .as_ref()
            .and_then(|a| a.get("error"))
            .and_then(Value::as_object)
            .map(|e| {
                (
                    e.get("code").and_then(Value::as_i64),
                    e.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                )
            });
        let has_result = answer
            .as_ref()
            .and_then(|a| a.get("result"))
            .is_some_and(|r| !r.is_null());
        let e = excerpt(&r.body.bytes, 80);
        Some(Resp {
            seq: x.seq(),
            status: r.status,
            media: derive::media_type(&r.headers),
            content_type: x.header(header::CONTENT_TYPE),
            has_result,
            error,
            empty: r.body.length == 0,
            challenge: x.header(header::WWW_AUTHENTICATE),
            body_excerpt: format!("{}{}", line(&e.text), if e.cut { "…" } else { "" }),
        })
    }

    fn kind(&self) -> Kind {
        match self.status {
            200..=299 => {
                if self.error.is_some() {
                    Kind::Refused
                } else if self.has_result || self.streamed() || self.empty {
                    Kind::Accepted
                } else {
                    Kind::Unattributable
                }
            }
            300..=399 => Kind::Redirect,
            400..=499 => Kind::Refused,
            500.. if self.error.is_some() => Kind::Refused,
            _ => Kind::Unattributable,
        }
    }

    fn streamed(&self) -> bool {
        self.media.as_deref() == Some("text/event-stream")
    }

    /// "HTTP 401 (application/json)".
    fn shown(&self) -> String {
        match &self.content_type {
            Some(ct) => format!("HTTP {} ({})", self.status, line(ct)),
            None => format!("HTTP {} (no Content-Type)", self.status),
        }
    }

    /// "HTTP 403 (text/plain) \"Invalid Origin header\"", or with the JSON-RPC error.
    fn described(&self) -> String {
        let mut s = self.shown();
        if let Some((code, msg)) = &self.error {
            let code =
                code.map_or_else(|| "without an integer code".into(), |c| format!("code {c}"));
            s.push_str(&format!(" with JSON-RPC error {code} \"{}\"", line(msg)));
        } else if self.has_result {
            s.push_str(" with a result");
        } else if self.empty {
            s.push_str(" with an empty body");
        } else if !self.body_excerpt.is_empty() {
            s.push_str(&format!(" \"{}\"", self.body_excerpt));
        }
        s
    }
}

/// The last record of `l` (one request is sent; should one be repeated, the last stands).
fn answer(ev: &Evidence, l: LegId) -> Answer {
    if let Some(x) = ev.exchanges(l).last() {
        return match Resp::read(&x) {
            Some(r) => Answer::Response(r),
            None => Answer::NoResponse {
                seq: x.seq(),
                why: match &x.http.outcome {
                    HttpOutcome::Error(e) => line(&e.to_string()),
                    HttpOutcome::Response(_) => "no response".into(),
                },
            },
        };
    }
    match ev.skipped(l) {
        Some(reason) => Answer::Skipped(line(reason)),
        None if ev.has_leg(l) => Answer::Skipped("recorded without an HTTP exchange".into()),
        None => Answer::Missing,
    }
}

/// The status of an answer, for details.
fn status_of(a: &Answer) -> Value {
    match a {
        Answer::Response(r) => json!(r.status),
        _ => Value::Null,
    }
}

/// True when the recorded request carried an `Authorization` header (its value is
/// redacted in the bundle; its presence is what matters).
fn carries_credential(x: &Exchange<'_>) -> bool {
    derive::header(&x.http.request.headers, header::AUTHORIZATION).is_some()
}

/// The recorded request's header `name`, as text.
fn request_header(ev: &Evidence, l: LegId, name: &str) -> Option<String> {
    ev.exchanges(l)
        .last()
        .and_then(|x| derive::header(&x.http.request.headers, name).map(|h| line(&h.value_str())))
}

// ---------------------------------------------------------------------------------------
// 2.3
// ---------------------------------------------------------------------------------------

/// 2.3: authentication enforced before a request-scoped SSE response (through proxies).
#[derive(Debug)]
pub struct Check2_3;
/// The 2.3 check.
pub static C2_3: Check2_3 = Check2_3;

const REDUCTION_2_3: &str = "the probe sends tools/list where the benchmark names a server-specific safe \
     streaming tool (its name is unknown and calling it may have side effects); enforcement at every proxy \
     hop is not verifiable from outside: only the answer of the outermost hop is observed (backend evidence \
     needed)";

const PER_HOP: &str =
    "per-hop forwarding not verified (only the outermost hop's answer is observed; \
     backend evidence needed)";

/// The record that shows an answer given without a credential: the negotiation
/// (initialize or server/discover), plus the first tools/list page when it too was
/// answered without one. `None` when the negotiation carried a credential or drew no
/// answer.
fn unauthenticated_answers(ev: &Evidence) -> Option<Vec<(u64, String)>> {
    let seq = ev.session()?.negotiated_in?;
    let record: &Record = ev.records.iter().find(|r| r.seq == seq)?;
    let Observation::Http(http) = &record.observation else {
        return None;
    };
    let x = ev
        .exchange_of(record)
        .unwrap_or(Exchange::new(record, http));
    if carries_credential(&x) {
        return None;
    }
    let r = Resp::read(&x)?;
    if !(200..300).contains(&r.status) || r.error.is_some() {
        return None;
    }
    let method = |x: &Exchange<'_>| {
        x.request_json()
            .and_then(|j| j.get("method").and_then(Value::as_str).map(line))
            .unwrap_or_else(|| "(no method)".into())
    };
    let mut out = vec![(
        seq,
        format!(
            "{} without a credential (record #{seq}) was answered {}",
            method(&x),
            r.described()
        ),
    )];
    if let Some(t) = ev.exchanges(leg::INVENTORY_TOOLS).next() {
        if !carries_credential(&t) {
            if let Some(tr) = Resp::read(&t).filter(|tr| tr.kind() == Kind::Accepted) {
                out.push((
                    t.seq(),
                    format!(
                        "{} without a credential (record #{}) was answered {}",
                        method(&t),
                        t.seq(),
                        tr.described()
                    ),
                ));
            }
        }
    }
    Some(out)
}

impl Check for Check2_3 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // A server that needs no credential is decided from the negotiation alone; the
        // pair (2.3.unauthenticated, 2.3.authenticated) is read, and required, only when
        // the endpoint asked for credentials or the run presented one from the start.
        Legs::required(&[leg::ENDPOINT_DETECT])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let auth_required = ev.session().is_some_and(|s| s.auth_required);
        if !auth_required {
            if let Some(answers) = unauthenticated_answers(ev) {
                let seqs: Vec<u64> = answers.iter().map(|(s, _)| *s).collect();
                let text = answers
                    .into_iter()
                    .map(|(_, t)| t)
                    .collect::<Vec<_>>()
                    .join("; ");
                return Outcome::single(
                    Verdict::Fail,
                    format!(
                        "authentication is not required: an unauthenticated request reaches a response \
                         (auth_required=false): {text}"
                    ),
                    REDUCTION_2_3,
                )
                .with_records(seqs)
                .with_detail("auth_required", false)
                .with_detail("unauthenticated_status", Value::Null)
                .with_detail("authenticated_status", Value::Null)
                .with_detail("authenticated_content_type", Value::Null)
                .with_detail("response_streamed_sse", Value::Null)
                .with_detail("per_hop_verification", "not verified");
            }
        }
        let none = answer(ev, leg::AUTH_NONE);
        let with = answer(ev, leg::AUTH_WITH);
        let out = judge_pair(ev, auth_required, &none, &with);
        let records: Vec<u64> = [leg::AUTH_NONE, leg::AUTH_WITH]
            .iter()
            .flat_map(|l| ev.seqs(*l))
            .collect();
        let (ct, sse) = match &with {
            Answer::Response(r) => (or_null(r.content_type.clone()), json!(r.streamed())),
            _ => (Value::Null, Value::Null),
        };
        out.with_records(records)
            .with_detail("auth_required", auth_required)
            .with_detail("unauthenticated_status", status_of(&none))
            .with_detail("authenticated_status", status_of(&with))
            .with_detail("authenticated_content_type", ct)
            .with_detail("response_streamed_sse", sse)
            .with_detail("per_hop_verification", "not verified")
    }
}

/// Grade the unauthenticated/authenticated pair (spec/checks.md §11.2 with §17 item 6).
fn judge_pair(ev: &Evidence, auth_required: bool, none: &Answer, with: &Answer) -> Outcome {
    let single = |v: Verdict, text: String| Outcome::single(v, text, REDUCTION_2_3);
    let unobserved = if auth_required {
        String::new()
    } else {
        "; the negotiation carried the run's credential, so whether the endpoint requires one was not \
         observed there either"
            .to_string()
    };
    let absent: Vec<LegId> = [(leg::AUTH_NONE, none), (leg::AUTH_WITH, with)]
        .iter()
        .filter(|(_, a)| matches!(a, Answer::Missing))
        .map(|(l, _)| *l)
        .collect();
    if !absent.is_empty() {
        return missing_legs(ev, &absent);
    }
    for (l, a) in [(leg::AUTH_NONE, none), (leg::AUTH_WITH, with)] {
        if let Answer::Skipped(reason) = a {
            return single(
                Verdict::Unknown,
                format!("the authentication pair was not observed: {l} {reason}{unobserved}"),
            );
        }
    }
    for (l, a) in [(leg::AUTH_NONE, none), (leg::AUTH_WITH, with)] {
        if let Answer::NoResponse { seq, why } = a {
            return single(
                Verdict::Error,
                format!(
                    "{l} (record #{seq}) drew no response ({why}): the observation was never made"
                ),
            );
        }
    }
    let (Answer::Response(u), Answer::Response(a)) = (none, with) else {
        unreachable!("every other shape returned above")
    };
    // The pair must differ in the credential, or it does not test the rule.
    let cred = |l: LegId| {
        ev.exchanges(l)
            .last()
            .is_some_and(|x| carries_credential(&x))
    };
    if cred(leg::AUTH_NONE) {
        return single(
            Verdict::Error,
            format!(
                "the recorded unauthenticated request (record #{}) carries an Authorization header, so it \
                 does not test the rule",
                u.seq
            ),
        );
    }
    if !cred(leg::AUTH_WITH) {
        return single(
            Verdict::Error,
            format!(
                "the recorded authenticated request (record #{}) carries no Authorization header, so the \
                 pair does not differ in the credential",
                a.seq
            ),
        );
    }
    let un = format!(
        "unauthenticated tools/list (record #{}): {}",
        u.seq,
        u.described()
    );
    // Unauthenticated leg first: a stream or a result given without a credential fails,
    // whatever the authenticated leg shows.
    if (200..300).contains(&u.status) && u.streamed() {
        return single(
            Verdict::Fail,
            format!(
                "{un}: a response stream was established for a request without a credential, so \
                 authentication is not enforced before the stream"
            ),
        );
    }
    match u.kind() {
        Kind::Accepted => {
            return single(
                Verdict::Fail,
                format!("{un}: not refused; an unauthenticated request reaches a response"),
            )
        }
        Kind::Unattributable => {
            return single(
                Verdict::Error,
                format!(
                    "{un}: neither a refusal nor a JSON-RPC answer; a gateway or proxy may have produced it, \
                     so it is not attributed to the server"
                ),
            )
        }
        Kind::Redirect => {
            return single(
                Verdict::Unknown,
                format!(
                    "{un}: redirected (not followed); a redirect is not the 401/403 refusal this check looks \
                     for, and where it leads was not observed"
                ),
            )
        }
        Kind::Refused if !matches!(u.status, 401 | 403) => {
            return single(
                Verdict::Unknown,
                format!(
                    "{un}: refused, but not with 401/403, so the refusal answers another question (e.g. a \
                     malformed or session-less request) and is not counted as authentication enforcement"
                ),
            )
        }
        Kind::Refused => {}
    }
    let challenge = match &u.challenge {
        Some(c) => format!("with WWW-Authenticate: {}", line(c)),
        None => "without a WWW-Authenticate challenge (RFC 6750 and MCP authorization expect one)"
            .into(),
    };
    let au = format!(
        "authenticated tools/list (record #{}): {}",
        a.seq,
        a.described()
    );
    let refused = format!("{un}, {challenge}");
    if !(200..300).contains(&a.status) {
        let why = if matches!(a.status, 401 | 403) {
            "the run's credential was refused too (expired, retired, wrong audience or insufficient scope?), so \
             the pair does not isolate the credential"
        } else {
            "the authenticated request was not accepted, so the refusal is not shown to depend on the credential"
        };
        return single(Verdict::Unknown, format!("{refused}; {au}: {why}"));
    }
    if !a.streamed() {
        return single(
            Verdict::Unknown,
            format!(
                "{refused}; {au}: accepted, but answered as {} rather than an event stream, so the SSE \
                 assertion (authentication before a response stream) was not exercised; re-run against a \
                 server or method that streams",
                a.media.as_deref().map(line).unwrap_or_else(|| "a body of no media type".into())
            ),
        );
    }
    single(
        Verdict::Pass,
        format!(
            "{refused}; {au}: accepted as an event stream, so the stream is established only with a \
             credential; {PER_HOP}"
        ),
    )
}

// ---------------------------------------------------------------------------------------
// 2.5
// ---------------------------------------------------------------------------------------

/// 2.5: Origin validated on all requests.
#[derive(Debug)]
pub struct Check2_5;
/// The 2.5 check.
pub static C2_5: Check2_5 = Check2_5;

const REDUCTION_2_5: &str = "the operator's Origin allowlist is not discoverable: the endpoint's own origin \
     stands in for it (a deployment whose allowlist excludes its own origin reads UNKNOWN); only POST \
     requests are probed (GET streams, DELETE and CORS preflight are not); the no-Origin request is \
     informational (non-browser clients send none)";

impl Check for Check2_5 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        // The no-Origin leg is informational and not required.
        Legs::required(&[leg::ORIGIN_HOSTILE, leg::ORIGIN_OWN])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let hostile = answer(ev, leg::ORIGIN_HOSTILE);
        let own = answer(ev, leg::ORIGIN_OWN);
        let no_origin = answer(ev, leg::ORIGIN_NONE);
        let hostile_origin = request_header(ev, leg::ORIGIN_HOSTILE, header::ORIGIN)
            .unwrap_or_else(|| HOSTILE_ORIGIN.into());
        let own_origin = request_header(ev, leg::ORIGIN_OWN, header::ORIGIN);
        let (verdict, text) =
            judge_origin(ev, &hostile, &own, &hostile_origin, own_origin.as_deref());
        let info = match &no_origin {
            Answer::Response(r) => format!(
                "no-Origin request (record #{}): {} (informational)",
                r.seq,
                r.shown()
            ),
            Answer::NoResponse { seq, why } => {
                format!("no-Origin request (record #{seq}): no response ({why}) (informational)")
            }
            Answer::Skipped(reason) => format!("no-Origin request not sent ({reason})"),
            Answer::Missing => "no-Origin request not recorded".into(),
        };
        let records: Vec<u64> = [leg::ORIGIN_HOSTILE, leg::ORIGIN_OWN, leg::ORIGIN_NONE]
            .iter()
            .flat_map(|l| ev.seqs(*l))
            .collect();
        Outcome::single(verdict, format!("{text}; {info}"), REDUCTION_2_5)
            .with_records(records)
            .with_detail("hostile_origin", hostile_origin)
            .with_detail("hostile_status", status_of(&hostile))
            .with_detail("allowed_origin_probed", or_null(own_origin))
            .with_detail("allowed_origin_status", status_of(&own))
            .with_detail("no_origin_status", status_of(&no_origin))
            .with_detail("negotiated_revision", or_null(ev.revision()))
    }
}

/// Decide 2.5 from the hostile leg gated on the own-origin stand-in (spec/checks.md
/// §11.2 with §17 item 7; the 403 is required from 2025-11-25 on, mcp-protocol.md §2.6).
fn judge_origin(
    ev: &Evidence,
    hostile: &Answer,
    own: &Answer,
    hostile_origin: &str,
    own_origin: Option<&str>,
) -> (Verdict, String) {
    let own_origin = own_origin
        .map(line)
        .unwrap_or_else(|| "(no Origin recorded)".into());
    for (what, a) in [("hostile-Origin", hostile), ("own-Origin", own)] {
        match a {
            Answer::Skipped(reason) => {
                return (
                    Verdict::Unknown,
                    format!("the {what} request was not sent ({reason}); a full run decides"),
                )
            }
            Answer::NoResponse { seq, why } => {
                return (
                    Verdict::Error,
                    format!("the {what} request (record #{seq}) drew no response ({why}): the observation was never made"),
                )
            }
            Answer::Missing => unreachable!("the runner requires both legs"),
            Answer::Response(_) => {}
        }
    }
    let (Answer::Response(h), Answer::Response(o)) = (hostile, own) else {
        unreachable!("every other shape returned above")
    };
    let hs = format!(
        "Origin {} (record #{}): {}",
        line(hostile_origin),
        h.seq,
        h.described()
    );
    let os = format!(
        "own Origin {own_origin} (record #{}): {}",
        o.seq,
        o.described()
    );
    // A hostile Origin given a result or a stream is the failure itself, whatever the
    // stand-in shows.
    if h.kind() == Kind::Accepted {
        return (
            Verdict::Fail,
            format!("{hs}: accepted, so the server does not validate Origin (no DNS-rebinding protection); {os}"),
        );
    }
    if o.status == 400 {
        return (
            Verdict::Error,
            format!(
                "{hs}; {os}: the request with the endpoint's own Origin was refused with 400 too, so it was \
                 rejected before the Origin was evaluated (e.g. a header or session problem of the probe)"
            ),
        );
    }
    match o.kind() {
        Kind::Accepted => {}
        Kind::Unattributable => {
            return (
                Verdict::Error,
                format!("{hs}; {os}: the stand-in's answer is not attributable to the server (a gateway may have produced it)"),
            )
        }
        Kind::Redirect | Kind::Refused => {
            let why = match o.status {
                401 => "refused at authentication (an expired or missing credential masks the Origin decision; \
                        re-run with a valid credential)",
                403 => "forbidden as well (the own origin may not be on the allowlist; re-run with the real \
                        allowlisted Origin)",
                300..=399 => "redirected (not followed)",
                _ => "not accepted",
            };
            return (
                Verdict::Unknown,
                format!("{hs}; {os}: the stand-in was {why}, so the hostile leg's answer is not shown to depend on the Origin"),
            );
        }
    }
    let rev = ev.revision().unwrap_or("no revision");
    let fixed = rev >= REV_2025_11_25;
    match h.kind() {
        Kind::Accepted => unreachable!("handled above"),
        Kind::Refused if h.status == 403 => (
            Verdict::Pass,
            format!("{hs}: refused with 403 while {os}: accepted, so the Origin is validated on the request itself"),
        ),
        Kind::Refused if fixed => (
            Verdict::Fail,
            format!(
                "{hs}: refused with HTTP {} rather than 403 while {os}: accepted; {REV_2025_11_25} and later \
                 (negotiated: {}) require 403 for an invalid Origin (the only difference between the two \
                 requests is the Origin, though the refusal may not be an Origin decision)",
                h.status,
                line(rev)
            ),
        ),
        Kind::Refused => (
            Verdict::Pass,
            format!(
                "{hs}: refused while {os}: accepted, so the Origin is validated; deviation: HTTP {} rather than \
                 403, which the negotiated revision {} does not fix ({REV_2025_11_25} and later require 403)",
                h.status,
                line(rev)
            ),
        ),
        Kind::Redirect => (
            Verdict::Unknown,
            format!("{hs}: redirected (not followed) while {os}: accepted; where the redirect leads was not observed"),
        ),
        Kind::Unattributable => (
            Verdict::Error,
            format!(
                "{hs}: not attributable to the server (a gateway may have produced it) while {os}: accepted"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::grade::run;
    use mcp_probe_schema::model::{ErrorKind, Header, TransportError};

    const REQ: &str = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#;
    const OK: &str = r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#;
    const SSE_OK: &str =
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"tools\":[]}}\n\n";
    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#;

    fn has(o: &Outcome, words: &[&str]) {
        for w in words {
            assert!(o.evidence.contains(w), "{w:?} not in {:?}", o.evidence);
        }
    }

    fn with_request_header(mut r: Record, name: &str, value: &str) -> Record {
        if let Observation::Http(x) = &mut r.observation {
            x.request.headers.push(Header::new(name, value));
        }
        r
    }

    fn authed(r: Record) -> Record {
        with_request_header(r, "Authorization", "Bearer redacted:sha256:00")
    }

    fn failed(mut r: Record, kind: ErrorKind) -> Record {
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind,
                message: "gone".into(),
            });
        }
        r
    }

    fn negotiation(credential: bool) -> Record {
        let r = exchange(
            &[leg::ENDPOINT_DETECT],
            INIT,
            200,
            "application/json",
            INIT_OK,
            &[],
        );
        if credential {
            authed(r)
        } else {
            r
        }
    }

    // ---- 2.3 ----

    fn grade_2_3(auth_required: bool, credential: bool, pair: Vec<Record>) -> Outcome {
        let mut s = session(Some("2025-11-25"), json!({"tools": {}}), None);
        s.auth_required = auth_required;
        s.authenticated = credential;
        let mut records = vec![negotiation(credential)];
        records.extend(pair);
        run(&C2_3, &evidence(Some(s), records), &Context::default())
    }

    fn unauth(status: u16, ct: &str, body: &str, headers: &[(&str, &str)]) -> Record {
        exchange(&[leg::AUTH_NONE], REQ, status, ct, body, headers)
    }

    fn auth(status: u16, ct: &str, body: &str) -> Record {
        authed(exchange(&[leg::AUTH_WITH], REQ, status, ct, body, &[]))
    }

    const CHALLENGE: (&str, &str) = (
        "WWW-Authenticate",
        "Bearer resource_metadata=\"https://x/.well-known\"",
    );

    #[test]
    fn no_auth_required_fails_naming_the_negotiation() {
        let tools = exchange(
            &[leg::INVENTORY_TOOLS],
            REQ,
            200,
            "application/json",
            OK,
            &[],
        );
        let o = grade_2_3(
            false,
            false,
            vec![
                tools,
                skipped(
                    &[leg::AUTH_NONE, leg::AUTH_WITH],
                    "not sent: the endpoint did not ask",
                ),
            ],
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            &[
                "auth_required=false",
                "initialize without a credential (record #0)",
                "HTTP 200",
                "tools/list without a credential (record #1)",
            ],
        );
        assert_eq!(o.details["auth_required"], false);
        assert_eq!(o.records, vec![0, 1]);
    }

    #[test]
    fn no_auth_required_fails_even_on_a_bundle_without_the_pair() {
        let o = grade_2_3(false, false, vec![]);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    }

    #[test]
    fn credential_sent_from_the_start_and_pair_skipped_is_unknown() {
        let o = grade_2_3(
            false,
            true,
            vec![skipped(
                &[leg::AUTH_NONE, leg::AUTH_WITH],
                "not sent: the endpoint did not ask for credentials",
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "not observed",
                "did not ask",
                "carried the run's credential",
            ],
        );
    }

    #[test]
    fn pair_missing_from_an_old_bundle_is_error_when_needed() {
        let o = grade_2_3(false, true, vec![]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &[leg::AUTH_NONE.as_str(), "missing"]);
    }

    #[test]
    fn info_run_is_unknown() {
        let o = grade_2_3(
            true,
            true,
            vec![skipped(
                &[leg::AUTH_NONE, leg::AUTH_WITH],
                "not sent: --info run (connect and enumerate only)",
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["--info"]);
    }

    #[test]
    fn refused_401_then_streamed_passes_with_the_per_hop_caveat() {
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(
                    401,
                    "application/json",
                    r#"{"error":"invalid_token"}"#,
                    &[CHALLENGE],
                ),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &[
                "HTTP 401",
                "WWW-Authenticate: Bearer",
                "event stream",
                "per-hop forwarding not verified",
            ],
        );
        assert_eq!(o.details["unauthenticated_status"], 401);
        assert_eq!(o.details["authenticated_status"], 200);
        assert_eq!(o.details["response_streamed_sse"], true);
        assert_eq!(o.details["per_hop_verification"], "not verified");
        assert_eq!(o.records, vec![1, 2]);
    }

    #[test]
    fn accepted_as_json_is_unknown_sse_not_exercised() {
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(401, "application/json", "", &[CHALLENGE]),
                auth(200, "application/json", OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["application/json", "SSE assertion", "not exercised"]);
        assert_eq!(o.details["response_streamed_sse"], false);
        assert_eq!(o.details["authenticated_content_type"], "application/json");
    }

    #[test]
    fn unauthenticated_result_fails() {
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(200, "application/json", OK, &[]),
                auth(200, "application/json", OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["not refused", "with a result"]);
    }

    #[test]
    fn unauthenticated_stream_fails_even_with_an_error_event() {
        let body = "data: {\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32001,\"message\":\"auth\"}}\n\n";
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(200, "text/event-stream", body, &[]),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["response stream was established"]);
    }

    #[test]
    fn unrelated_400_is_not_auth_enforcement() {
        let body = r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#;
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(400, "application/json", body, &[]),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "HTTP 400",
                "Missing session ID",
                "not with 401/403",
                "another question",
            ],
        );
    }

    #[test]
    fn credential_refused_too_is_unknown() {
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(401, "application/json", "", &[CHALLENGE]),
                auth(401, "application/json", ""),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["credential was refused too"]);
    }

    #[test]
    fn gateway_html_and_transport_failures_are_error() {
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(502, "text/html", "<html>Bad Gateway</html>", &[]),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["not attributed"]);
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(401, "application/json", "", &[CHALLENGE]),
                failed(auth(200, "text/event-stream", SSE_OK), ErrorKind::Timeout),
            ],
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["drew no response", "timeout"]);
    }

    #[test]
    fn pair_not_differing_in_the_credential_is_error() {
        let o = grade_2_3(
            true,
            true,
            vec![
                authed(unauth(401, "application/json", "", &[CHALLENGE])),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["does not test the rule"]);
    }

    #[test]
    fn refusal_without_challenge_still_counts_and_says_so() {
        let o = grade_2_3(
            true,
            true,
            vec![
                unauth(403, "text/plain", "forbidden", &[]),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(&o, &["HTTP 403", "without a WWW-Authenticate challenge"]);
    }

    #[test]
    fn no_session_with_a_challenge_is_unknown_from_the_runner() {
        let mut s = session(None, json!({}), None);
        s.auth_required = true;
        s.capabilities = None;
        let ev = evidence(
            Some(s),
            vec![exchange(
                &[leg::ENDPOINT_DETECT],
                INIT,
                401,
                "application/json",
                "",
                &[],
            )],
        );
        let o = run(&C2_3, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    }

    // ---- 2.5 ----

    fn origin_leg(l: LegId, origin: Option<&str>, status: u16, ct: &str, body: &str) -> Record {
        let r = exchange(&[l], REQ, status, ct, body, &[]);
        match origin {
            Some(o) => with_request_header(r, "Origin", o),
            None => r,
        }
    }

    fn grade_2_5(rev: &str, hostile: (u16, &str, &str), own: (u16, &str, &str)) -> Outcome {
        let records = vec![
            origin_leg(
                leg::ORIGIN_HOSTILE,
                Some(HOSTILE_ORIGIN),
                hostile.0,
                hostile.1,
                hostile.2,
            ),
            origin_leg(
                leg::ORIGIN_OWN,
                Some("http://127.0.0.1:8080"),
                own.0,
                own.1,
                own.2,
            ),
            origin_leg(leg::ORIGIN_NONE, None, 200, "application/json", OK),
        ];
        let ev = evidence(
            Some(session(Some(rev), json!({"tools": {}}), None)),
            records,
        );
        run(&C2_5, &ev, &Context::default())
    }

    const ACCEPTED: (u16, &str, &str) = (200, "application/json", OK);

    #[test]
    fn hostile_403_own_accepted_passes() {
        let o = grade_2_5(
            "2026-07-28",
            (403, "text/plain", "Invalid Origin header"),
            ACCEPTED,
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &[
                "refused with 403",
                "Invalid Origin header",
                "own Origin http://127.0.0.1:8080",
                "informational",
            ],
        );
        assert_eq!(o.details["hostile_status"], 403);
        assert_eq!(o.details["allowed_origin_status"], 200);
        assert_eq!(o.details["no_origin_status"], 200);
        assert_eq!(o.details["hostile_origin"], HOSTILE_ORIGIN);
        assert_eq!(o.details["allowed_origin_probed"], "http://127.0.0.1:8080");
        assert_eq!(o.records, vec![0, 1, 2]);
    }

    #[test]
    fn hostile_accepted_fails() {
        let o = grade_2_5(
            "2025-11-25",
            (200, "text/event-stream", SSE_OK),
            (200, "text/event-stream", SSE_OK),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["HTTP 200", "accepted", "DNS-rebinding"]);
    }

    #[test]
    fn hostile_401_with_own_401_is_unknown_never_fail() {
        let o = grade_2_5(
            "2025-11-25",
            (401, "application/json", ""),
            (401, "application/json", ""),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["refused at authentication"]);
        let o = grade_2_5(
            "2025-11-25",
            (403, "text/plain", "x"),
            (403, "text/plain", "x"),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["allowlist"]);
    }

    #[test]
    fn other_refusal_fails_from_2025_11_25_on() {
        let body =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Invalid Origin"}}"#;
        let o = grade_2_5("2025-11-25", (400, "application/json", body), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["HTTP 400 rather than 403", "2025-11-25 and later"]);
        let o = grade_2_5("2026-07-28", (401, "application/json", ""), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    }

    #[test]
    fn other_refusal_passes_with_the_deviation_before_2025_11_25() {
        let o = grade_2_5("2025-06-18", (400, "text/plain", "bad origin"), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &[
                "deviation",
                "HTTP 400 rather than 403",
                "2025-06-18 does not fix",
            ],
        );
    }

    #[test]
    fn own_400_is_error() {
        let o = grade_2_5(
            "2025-11-25",
            (400, "application/json", ""),
            (400, "application/json", ""),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["before the Origin was evaluated"]);
    }

    #[test]
    fn unattributable_answers_are_error() {
        let o = grade_2_5(
            "2025-11-25",
            (502, "text/html", "<html>bad gateway</html>"),
            ACCEPTED,
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        let o = grade_2_5(
            "2025-11-25",
            (403, "text/plain", "x"),
            (200, "text/html", "<html>login</html>"),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn redirect_is_unknown() {
        let o = grade_2_5("2025-11-25", (302, "text/html", ""), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["redirected"]);
    }

    #[test]
    fn skipped_and_failed_legs() {
        let records = vec![skipped(
            &[leg::ORIGIN_HOSTILE, leg::ORIGIN_OWN, leg::ORIGIN_NONE],
            "not sent: --info run (connect and enumerate only)",
        )];
        let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), records);
        let o = run(&C2_5, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["--info"]);
        assert!(o.details["hostile_status"].is_null());

        let records = vec![
            failed(
                origin_leg(leg::ORIGIN_HOSTILE, Some(HOSTILE_ORIGIN), 200, "", ""),
                ErrorKind::Reset,
            ),
            origin_leg(
                leg::ORIGIN_OWN,
                Some("http://127.0.0.1:8080"),
                200,
                "application/json",
                OK,
            ),
        ];
        let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), records);
        let o = run(&C2_5, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(
            &o,
            &[
                "drew no response",
                "reset",
                "no-Origin request not recorded",
            ],
        );
    }

    #[test]
    fn bundle_without_the_legs_is_error_naming_them() {
        let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), vec![]);
        let o = run(&C2_5, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &[leg::ORIGIN_HOSTILE.as_str(), "missing"]);
    }

    /// On the recorded lab bundles: every server that negotiated without a credential
    /// fails 2.3 from its negotiation record; py2-auth (401, no credential) is UNKNOWN
    /// from the runner. 2.5 grades without panicking (ERROR naming the legs on bundles
    /// recorded before the collector sent them).
    #[test]
    fn example_bundles() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("examples dir") {
            let p = e.expect("dir entry").path();
            if p.extension().is_none_or(|x| x != "mcpev") {
                continue;
            }
            let v =
                mcp_probe_schema::open(&std::fs::read(&p).expect("read"), &[]).expect("verifies");
            let ev = Evidence::new(p.display().to_string(), v);
            let o = run(&C2_3, &ev, &Context::default());
            if ev
                .session()
                .is_some_and(|s| s.auth_required && s.authenticated)
            {
                // py2-auth-login: 401 without the token, 200 JSON with it: the streamed
                // response was not exercised, so UNKNOWN.
                assert_eq!(o.verdict, Verdict::Unknown, "2.3 on {}: {o:?}", p.display());
            } else if ev.revision().is_some() {
                assert_eq!(o.verdict, Verdict::Fail, "2.3 on {}: {o:?}", p.display());
                assert!(o.evidence.contains("without a credential"), "{o:?}");
            } else {
                assert_eq!(o.verdict, Verdict::Unknown, "2.3 on {}: {o:?}", p.display());
            }
            let o = run(&C2_5, &ev, &Context::default());
            if !ev.has_leg(leg::ORIGIN_HOSTILE) && ev.revision().is_some() {
                assert_eq!(o.verdict, Verdict::Error, "2.5 on {}: {o:?}", p.display());
            }
            n += 1;
        }
        assert!(n > 0);
    }
}
