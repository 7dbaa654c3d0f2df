//! Rule `auth-before-stream`: authentication enforced before a request-scoped SSE
//! response (through proxies).
//!
//! A server that answers without a credential is decided from the negotiation (and the
//! first `tools/list` page): FAIL. Otherwise the pair of collector legs
//! `2.3.unauthenticated` / `2.3.authenticated`, the same complete `tools/list` without and
//! with the run's credential, decides: a refusal (401/403) of the first and an event stream
//! for the second pass. A FAIL is earned by a positive observation: a result or an event
//! stream given to a request that should have been refused. docs/checks.md states the rules
//! under the row this rule grades.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{Observation, Record};
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde::Serialize;

use crate::check::{Check, Context, Legs};
use crate::checks::common::response::{answer, Answer, Kind, Resp};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::preconditions::missing_legs;
use crate::verdict::{NotArisen, Outcome, Verdict};
use mcp_probe_schema::model::Era;

/// Authentication enforced before a request-scoped SSE response (through proxies).
#[derive(Debug)]
pub struct AuthBeforeStream;

/// What this rule cannot reach.
const REDUCTION: &str = "the probe sends tools/list where the benchmark names a server-specific safe \
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
fn unauthenticated_answers(ev: &Bundle) -> Option<Vec<(u64, String)>> {
    let seq = ev.session()?.negotiated_in?;
    let record: &Record = ev.record(seq)?;
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
        x.request_method()
            .map_or_else(|| "(no method)".into(), |m| escape_line(&m))
    };
    let mut out = vec![(
        seq,
        crate::format_exact!(
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
                    crate::format_exact!(
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

impl Check for AuthBeforeStream {
    fn id(&self) -> &'static str {
        "auth-before-stream"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "on HTTP+SSE (2024-11-05) no response stream is scoped to a request: every answer \
             arrives on the session's one event stream, opened by a GET (leg endpoint.sse) before \
             any request, and a POST draws only an acknowledgement",
        )
    }

    /// The negotiation (under `endpoint.detect`) is always read. A server that answered
    /// it without a credential is decided from it and the first `inventory.tools` page
    /// (when tools were listed); otherwise the pair (`2.3.unauthenticated`,
    /// `2.3.authenticated`) decides, and a bundle lacking it is ERROR naming it (a
    /// bundle recorded before the collector sent the pair is still decided from its
    /// negotiation).
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::ENDPOINT_DETECT],
            &[leg::INVENTORY_TOOLS, leg::AUTH_NONE, leg::AUTH_WITH],
        )
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
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
                    crate::format_exact!(
                        "authentication is not required: an unauthenticated request reaches a response \
                         (auth_required=false): {text}"
                    ),
                    REDUCTION,
                )
                .with_records(seqs)
                .with_facts(&AuthBeforeStreamFacts::unobserved_pair());
            }
        }
        let none = answer(ev, leg::AUTH_NONE);
        let with = answer(ev, leg::AUTH_WITH);
        let out = judge_pair(ev, auth_required, &none, &with);
        let records: Vec<u64> = [leg::AUTH_NONE, leg::AUTH_WITH]
            .iter()
            .flat_map(|l| ev.records_for(*l).map(|r| r.seq))
            .collect();
        let (ct, sse) = match &with {
            Answer::Response(r) => (r.content_type.clone(), Some(r.streamed())),
            _ => (None, None),
        };
        let facts = AuthBeforeStreamFacts {
            auth_required,
            unauthenticated_status: none.status(),
            authenticated_status: with.status(),
            authenticated_content_type: ct,
            response_streamed_sse: sse,
            per_hop_verification: NOT_VERIFIED,
        };
        out.with_records(records).with_facts(&facts)
    }
}

/// The details of `auth-before-stream`, in report order (absent values are null).
#[derive(Debug, Serialize)]
struct AuthBeforeStreamFacts {
    /// The endpoint refused a request without a credential (`session.auth_required`).
    auth_required: bool,
    /// HTTP status of `2.3.unauthenticated`.
    unauthenticated_status: Option<u16>,
    /// HTTP status of `2.3.authenticated`.
    authenticated_status: Option<u16>,
    /// `Content-Type` of the authenticated answer.
    authenticated_content_type: Option<String>,
    /// The authenticated answer is an event stream.
    response_streamed_sse: Option<bool>,
    /// Always `not verified`: only the outermost hop is observed.
    per_hop_verification: &'static str,
}

impl AuthBeforeStreamFacts {
    /// Decided from the negotiation: the pair is not read.
    fn unobserved_pair() -> AuthBeforeStreamFacts {
        AuthBeforeStreamFacts {
            auth_required: false,
            unauthenticated_status: None,
            authenticated_status: None,
            authenticated_content_type: None,
            response_streamed_sse: None,
            per_hop_verification: NOT_VERIFIED,
        }
    }
}

/// `per_hop_verification`.
const NOT_VERIFIED: &str = "not verified";

/// Grade the unauthenticated/authenticated pair (docs/checks.md, under the rule's row):
/// both observed and differing in the credential, the unauthenticated request refused with
/// 401/403, then the authenticated one answered with an event stream.
fn judge_pair(ev: &Bundle, auth_required: bool, none: &Answer, with: &Answer) -> Outcome {
    let (u, a) = match observed_pair(ev, auth_required, none, with) {
        Ok(pair) => pair,
        Err(o) => return *o,
    };
    match refused_unauthenticated(u) {
        Ok(un) => judge_authenticated(u, a, &un),
        Err(o) => *o,
    }
}

/// An outcome of this rule with its reduction.
fn single(v: Verdict, text: String) -> Outcome {
    Outcome::single(v, text, REDUCTION)
}

/// The two answers, when both legs drew a response and the pair differs in the
/// credential; otherwise the outcome that says why the pair decides nothing.
fn observed_pair<'a>(
    ev: &Bundle,
    auth_required: bool,
    none: &'a Answer,
    with: &'a Answer,
) -> Result<(&'a Resp, &'a Resp), Box<Outcome>> {
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
        return Err(Box::new(missing_legs(ev, &absent)));
    }
    for (l, a) in [(leg::AUTH_NONE, none), (leg::AUTH_WITH, with)] {
        if let Answer::Skipped(reason) = a {
            return Err(Box::new(single(
                Verdict::Unknown,
                crate::format_exact!(
                    "the authentication pair was not observed: {l} {reason}{unobserved}"
                ),
            )));
        }
    }
    for (l, a) in [(leg::AUTH_NONE, none), (leg::AUTH_WITH, with)] {
        if let Answer::NoResponse { seq, why } = a {
            return Err(Box::new(single(
                Verdict::Error,
                crate::format_exact!(
                    "{l} (record #{seq}) drew no response ({why}): the observation was never made"
                ),
            )));
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
        return Err(Box::new(single(
            Verdict::Error,
            crate::format_exact!(
                "the recorded unauthenticated request (record #{}) carries an Authorization header, so it \
                 does not test the rule",
                u.seq
            ),
        )));
    }
    if !cred(leg::AUTH_WITH) {
        return Err(Box::new(single(
            Verdict::Error,
            crate::format_exact!(
                "the recorded authenticated request (record #{}) carries no Authorization header, so the \
                 pair does not differ in the credential",
                a.seq
            ),
        )));
    }
    Ok((u, a))
}

/// The unauthenticated leg, judged first: a stream or a result given without a
/// credential fails, whatever the authenticated leg shows. Its description when it was
/// refused with 401/403 (the refusal this check looks for), else the outcome.
fn refused_unauthenticated(u: &Resp) -> Result<String, Box<Outcome>> {
    let un = crate::format_exact!(
        "unauthenticated tools/list (record #{}): {}",
        u.seq,
        u.described()
    );
    if (200..300).contains(&u.status) && u.streamed() {
        return Err(Box::new(single(
            Verdict::Fail,
            crate::format_exact!(
                "{un}: a response stream was established for a request without a credential, so \
                 authentication is not enforced before the stream"
            ),
        )));
    }
    match u.kind() {
        Kind::Accepted => Err(Box::new(single(
            Verdict::Fail,
            crate::format_exact!("{un}: not refused; an unauthenticated request reaches a response"),
        ))),
        Kind::Unattributable => Err(Box::new(single(
            Verdict::Error,
            crate::format_exact!(
                "{un}: neither a refusal nor a JSON-RPC answer; a gateway or proxy may have produced it, \
                 so it is not attributed to the server"
            ),
        ))),
        Kind::Redirect => Err(Box::new(single(
            Verdict::Unknown,
            crate::format_exact!(
                "{un}: redirected (not followed); a redirect is not the 401/403 refusal this check looks \
                 for, and where it leads was not observed"
            ),
        ))),
        Kind::Refused if !matches!(u.status, 401 | 403) => Err(Box::new(single(
            Verdict::Unknown,
            crate::format_exact!(
                "{un}: refused, but not with 401/403, so the refusal answers another question (e.g. a \
                 malformed or session-less request) and is not counted as authentication enforcement"
            ),
        ))),
        Kind::Refused => Ok(un),
    }
}

/// The authenticated leg, once the unauthenticated one (`un`, described) was refused
/// with 401/403: an event stream passes.
fn judge_authenticated(u: &Resp, a: &Resp, un: &str) -> Outcome {
    let challenge = match &u.challenge {
        Some(c) => crate::format_exact!("with WWW-Authenticate: {}", crate::fmt::Line(c)),
        None => "without a WWW-Authenticate challenge (RFC 6750 and MCP authorization expect one)"
            .into(),
    };
    let au = crate::format_exact!(
        "authenticated tools/list (record #{}): {}",
        a.seq,
        a.described()
    );
    let refused = crate::format_exact!("{un}, {challenge}");
    if !(200..300).contains(&a.status) {
        let why = if matches!(a.status, 401 | 403) {
            "the run's credential was refused too (expired, retired, wrong audience or insufficient scope?), so \
             the pair does not isolate the credential"
        } else {
            "the authenticated request was not accepted, so the refusal is not shown to depend on the credential"
        };
        return single(
            Verdict::Unknown,
            crate::format_exact!("{refused}; {au}: {why}"),
        );
    }
    if !a.streamed() {
        // The rule's subject (a response stream) did not arise: not applicable on this
        // era, UNKNOWN when no era offered one (docs/checks.md, under the rule's row).
        return Outcome::not_arisen(
            NotArisen::NotOffered,
            crate::format_exact!(
                "{refused}; {au}: accepted, but answered as {} rather than an event stream, so the SSE \
                 assertion (authentication before a response stream) was not exercised; re-run against a \
                 server or method that streams",
                a.media.as_deref().map(escape_line).unwrap_or_else(|| "a body of no media type".into())
            ),
            REDUCTION,
        );
    }
    single(
        Verdict::Pass,
        crate::format_exact!(
            "{refused}; {au}: accepted as an event stream, so the stream is established only with a \
             credential; {PER_HOP}"
        ),
    )
}

/// True when the recorded request carried an `Authorization` header (its value is
/// redacted in the bundle; its presence is what matters).
fn carries_credential(x: &Exchange<'_>) -> bool {
    derive::header(&x.http.request.headers, header::AUTHORIZATION).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::response::testing::{
        failed, has, with_request_header, OK, REQ, SSE_OK,
    };
    use crate::fixture::{evidence, example_bundles as examples, exchange, session, skipped};
    /// The rule graded directly, rendered outside any definition (local names).
    fn run(
        check: &dyn crate::check::Check,
        ev: &crate::evidence::Bundle,
        cx: &crate::check::Context<'_>,
    ) -> crate::verdict::Outcome {
        crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
    }
    use mcp_probe_schema::model::ErrorKind;
    use serde_json::json;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#;

    fn authed(r: Record) -> Record {
        with_request_header(r, "Authorization", "Bearer redacted:sha256:00")
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

    fn grade(auth_required: bool, credential: bool, pair: Vec<Record>) -> Outcome {
        let mut s = session(Some("2025-11-25"), json!({"tools": {}}), None);
        s.auth_required = auth_required;
        s.authenticated = credential;
        let mut records = vec![negotiation(credential)];
        records.extend(pair);
        run(
            &AuthBeforeStream,
            &evidence(Some(s), records),
            &Context::default(),
        )
    }

    fn unauth(status: u16, ct: &str, body: &str, headers: &[(&str, &str)]) -> Record {
        exchange(&[leg::AUTH_NONE], REQ, status, ct, body, headers)
    }

    /// A `tools/list` of `l` answered 200 with a result, without a credential.
    fn unauth_page(l: LegId) -> Record {
        exchange(&[l], REQ, 200, "application/json", OK, &[])
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
        let tools = unauth_page(leg::INVENTORY_TOOLS);
        let o = grade(
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
        let o = grade(false, false, vec![]);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    }

    #[test]
    fn credential_sent_from_the_start_and_pair_skipped_is_unknown() {
        let o = grade(
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
        let o = grade(false, true, vec![]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &[leg::AUTH_NONE.as_str(), "missing"]);
    }

    #[test]
    fn info_run_is_unknown() {
        let o = grade(
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
        let o = grade(
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
        let o = grade(
            true,
            true,
            vec![
                unauth(401, "application/json", "", &[CHALLENGE]),
                auth(200, "application/json", OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert_eq!(o.not_arisen, Some(NotArisen::NotOffered), "{o:?}");
        has(&o, &["application/json", "SSE assertion", "not exercised"]);
        assert_eq!(o.details["response_streamed_sse"], false);
        assert_eq!(o.details["authenticated_content_type"], "application/json");
    }

    #[test]
    fn unauthenticated_result_fails() {
        let o = grade(
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
        let o = grade(
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
        let o = grade(
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
        let o = grade(
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
        let o = grade(
            true,
            true,
            vec![
                unauth(502, "text/html", "<html>Bad Gateway</html>", &[]),
                auth(200, "text/event-stream", SSE_OK),
            ],
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["not attributed"]);
        let o = grade(
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
        let o = grade(
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
        let o = grade(
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
        let o = run(&AuthBeforeStream, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    }

    /// A dual-era OAuth server whose two sessions answer the authenticated pair `modern`
    /// (2026-07-28) and `legacy` (2025-11-25), each as (content type, body), after a 401
    /// refusal on both: graded as the runner grades it, on every era.
    fn dual_era(modern: (&str, &str), legacy: (&str, &str)) -> Outcome {
        dual_era_with(
            modern,
            (401, "application/json", ""),
            (200, legacy.0, legacy.1),
        )
    }

    /// As [`dual_era`], with the legacy pair's (status, content type, body) given.
    fn dual_era_with(
        modern: (&str, &str),
        legacy_none: (u16, &str, &str),
        legacy_with: (u16, &str, &str),
    ) -> Outcome {
        use mcp_probe_schema::model::EraSession;
        const REV: &str = "2025-11-25";
        let at = |l: LegId| format!("{}@{REV}", l.as_str());
        let mut s = session(Some("2026-07-28"), json!({"tools": {}}), None);
        s.auth_required = true;
        s.authenticated = true;
        s.other_eras = vec![EraSession {
            era: Era::Legacy,
            revision: REV.into(),
            server_info: None,
            capabilities: Some(json!({"tools": {}})),
            session_id: None,
            negotiated_in: 3,
        }];
        let legacy_negotiation = authed(exchange(
            &[at(leg::ENDPOINT_DETECT)],
            INIT,
            200,
            "application/json",
            INIT_OK,
            &[],
        ));
        let records = vec![
            negotiation(true),
            unauth(401, "application/json", "", &[CHALLENGE]),
            auth(200, modern.0, modern.1),
            legacy_negotiation,
            exchange(
                &[at(leg::AUTH_NONE)],
                REQ,
                legacy_none.0,
                legacy_none.1,
                legacy_none.2,
                &[CHALLENGE],
            ),
            authed(exchange(
                &[at(leg::AUTH_WITH)],
                REQ,
                legacy_with.0,
                legacy_with.1,
                legacy_with.2,
                &[],
            )),
        ];
        let ev = evidence(Some(s), records);
        crate::fixture::graded(&ev, "auth-before-stream")
    }

    /// Two eras, the 2026-07-28 session answering JSON (no stream: the rule's subject did
    /// not arise there) and the legacy one streaming with the credential only: PASS, the
    /// JSON era named as not applicable, rather than the worst era (UNKNOWN) deciding.
    #[test]
    fn dual_era_json_on_one_era_and_a_stream_on_the_other_passes() {
        let o = dual_era(("application/json", OK), ("text/event-stream", SSE_OK));
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert_eq!(o.not_arisen, None);
        has(
            &o,
            &[
                "on 2026-07-28: not applicable there (the answer it judges was not offered; UNKNOWN on its own)",
                "| on 2025-11-25: PASS",
                "accepted as an event stream",
            ],
        );
        assert_eq!(o.details["eras"][0]["applicable"], false);
        assert_eq!(o.details["eras"][0]["verdict"], "UNKNOWN");
        assert_eq!(o.details["eras"][1]["applicable"], true);
        // The same with the eras swapped.
        let o = dual_era(("text/event-stream", SSE_OK), ("application/json", OK));
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    }

    /// No era offered a stream: nothing applies, so the check stays UNKNOWN (the subject
    /// may arise on another request), still not applicable as a whole.
    #[test]
    fn dual_era_json_on_both_eras_stays_unknown() {
        let o = dual_era(("application/json", OK), ("application/json", OK));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert_eq!(o.not_arisen, Some(NotArisen::NotOffered));
    }

    /// A FAIL on one era is never hidden by the other era's subject not arising, and an
    /// UNKNOWN that arose (the credential refused too) still keeps a PASS from deciding.
    #[test]
    fn dual_era_fail_and_arisen_unknown_still_count() {
        let json = ("application/json", OK);
        let o = dual_era_with(
            json,
            (200, "text/event-stream", SSE_OK),
            (200, "text/event-stream", SSE_OK),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            &[
                "on 2026-07-28: not applicable there",
                "| on 2025-11-25: FAIL",
            ],
        );
        let o = dual_era_with(
            ("text/event-stream", SSE_OK),
            (401, "application/json", ""),
            (401, "application/json", ""),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert_eq!(o.not_arisen, None);
        has(
            &o,
            &["credential was refused too", "| on 2025-11-25: UNKNOWN"],
        );
    }

    /// On the recorded lab bundles: every server that negotiated without a credential
    /// fails the rule from its negotiation record; py2-auth (401, no credential) is UNKNOWN
    /// from the runner.
    #[test]
    fn example_bundles() {
        for ev in examples() {
            let o = run(&AuthBeforeStream, &ev, &Context::default());
            if ev
                .session()
                .is_some_and(|s| s.auth_required && s.authenticated)
            {
                // py2-auth-login: 401 without the token, 200 JSON with it: the streamed
                // response was not exercised, so UNKNOWN on 2026-07-28 alone; its legacy
                // session streams only with the credential, so graded on every era
                // (the report's verdict) the JSON era is not applicable: PASS.
                assert_eq!(
                    o.verdict,
                    Verdict::Unknown,
                    "auth-before-stream on {}: {o:?}",
                    ev.path
                );
                assert_eq!(o.not_arisen, Some(NotArisen::NotOffered), "{o:?}");
                let every = crate::fixture::graded(&ev, "auth-before-stream");
                assert_eq!(every.verdict, Verdict::Pass, "{every:?}");
            } else if ev.revision().is_some() {
                assert_eq!(
                    o.verdict,
                    Verdict::Fail,
                    "auth-before-stream on {}: {o:?}",
                    ev.path
                );
                assert!(o.evidence.contains("without a credential"), "{o:?}");
            } else {
                assert_eq!(
                    o.verdict,
                    Verdict::Unknown,
                    "auth-before-stream on {}: {o:?}",
                    ev.path
                );
            }
        }
    }
}
