//! Rule `audience-bound-tokens`: tokens audience-bound via Resource Indicators (RFC 8707;
//! docs/checks.md, under the row this rule grades).
//! Sub-verdicts in evaluation order a, c, b:
//!
//! * a (no request): every token the run held names the canonical resource among its
//!   audiences. The canonical resource is the one `no-token-passthrough` uses (the
//!   protected-resource metadata `resource` when it covers the endpoint's canonical URI,
//!   else that URI), read from that rule's outcome so the two rules cannot disagree about
//!   it. Opaque token or no `aud` → unknown; among (one trailing slash ignored) → pass;
//!   else fail.
//! * c (collector leg `3.3.1c.downstream`): per candidate URL, the GET with the token
//!   against the same GET without it. With-token 401 → pass; with-token 200/403 and a
//!   different status without → fail (the downstream API authenticated the token); same
//!   status or anything else → unknown. Any fail → fail; else any pass → pass; else
//!   unknown.
//! * b (collector legs `3.3.1b.mint`, `.restore`, `.control`, `.foreign`): the
//!   authorization server refusing to mint a token for a resource it does not serve is the
//!   conforming answer, but it leaves the server's own audience validation untested →
//!   unknown. A minted token is presented on a complete `tools/list` (session id, version
//!   header, `_meta`) next to the same request with the probe's own token (a refusal of an
//!   incomplete request would say nothing about the audience): control not accepted →
//!   unknown (not attributable); foreign 401/403 → pass; foreign 2xx → fail. The minted
//!   token's recorded facts (`payload.minted_tokens`, `checks::common::oauth::mint`) come
//!   first: a JWT naming the audited resource means the authorization server ignored
//!   `resource` and nothing foreign was presented → unknown, whatever the answer; an opaque
//!   token (or a JWT without `aud`) accepted → unknown (the binding is unverified); a
//!   bundle whose collector did not record the facts is graded as before, the note naming
//!   what is missing.
//!
//! Gate (shared with `no-token-passthrough`, by delegation): no endpoint → ERROR; no token
//! held → UNKNOWN when the server offers OAuth (or discovery was unread), N/A when the
//! absence of OAuth was observed.

use mcp_probe_schema::model::{ErrorKind, HttpOutcome, TokenFacts};
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::borrow::Cow;

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::authorization::no_token_passthrough::NoTokenPassthrough;
use crate::checks::common::oauth::challenge::carries_credential;
use crate::checks::common::oauth::gate::{combine, legs_map};
use crate::checks::common::oauth::mint::{binding, Binding};
use crate::checks::common::oauth::tokens::{audiences, binding_note, claims, is_url_audience};
use crate::checks::common::oauth::uris::strip_slash;
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};
use mcp_probe_schema::model::Era;

/// Tokens audience-bound via Resource Indicators.
#[derive(Debug)]
pub struct AudienceBoundTokens;

const SUB_A: &str = "a";
const SUB_B: &str = "b";
const SUB_C: &str = "c";

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    crate::here!("c"),
    " candidates are guesses (derived api.<rest> and <rest> hosts, or \
     operator-named downstream_endpoints); the credential gate refuses hosts off the endpoint's registrable \
     domain, so a genuine downstream API elsewhere is never reached; ",
    crate::here!("b"),
    " cannot confirm that an opaque \
     minted token really carries the resource asked for; opaque tokens are not introspected for ",
    crate::here!("a")
);

/// The `Authorization` value sent (already a fingerprint in a bundle).
fn credential_of(x: &Exchange<'_>) -> Option<String> {
    x.http
        .request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(header::AUTHORIZATION))
        .map(|h| h.value_str().trim().to_string())
}

/// One status or the transport error, for notes.
pub fn answer_of(x: &Exchange<'_>) -> String {
    match &x.http.outcome {
        HttpOutcome::Response(r) => crate::format_exact!("HTTP {}", r.status),
        HttpOutcome::Error(e) => {
            crate::format_exact!("no answer ({})", crate::fmt::Line(&e.message))
        }
    }
}

fn form_param(body: &[u8], name: &str) -> Option<String> {
    url::form_urlencoded::parse(body)
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The body parsed ([`Exchange::body_json_cow`]), borrowed from the bundle's memo;
/// `null` when it is not JSON.
fn response_json<'a>(x: &Exchange<'a>) -> Cow<'a, Value> {
    x.body_json_cow().unwrap_or(Cow::Owned(Value::Null))
}

// ---------------------------------------------------------------------------------------
// a: the tokens' audiences
// ---------------------------------------------------------------------------------------

fn sub_a(
    tokens: &[TokenFacts],
    session: Option<&mcp_probe_schema::model::Session>,
    canonical: Option<&str>,
    basis: &str,
) -> SubVerdict {
    let Some(canonical) = canonical else {
        return SubVerdict::new(
            SUB_A,
            SubOutcome::Error,
            concat!(
                "no canonical resource URI could be derived for the endpoint (see ",
                crate::rule_ref!("no-token-passthrough"),
                ")"
            ),
        );
    };
    let n = tokens.len();
    let parts = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let label = if n == 1 {
                crate::format_exact!("the {} token", crate::fmt::Line(&t.source))
            } else {
                crate::format_exact!("token {} ({})", i + 1, crate::fmt::Line(&t.source))
            } + &binding_note(session, t);
            let Some(c) = claims(t) else {
                return (
                    SubOutcome::Unknown,
                    crate::format_exact!("{label} is opaque (not a JWT), so its audience is not readable"),
                );
            };
            let auds = audiences(Some(c));
            if auds.is_empty() {
                return (
                    SubOutcome::Unknown,
                    crate::format_exact!("{label} is a JWT without an aud claim naming any audience"),
                );
            }
            let shown = auds.iter().map(|a| escape_line(a)).collect::<Vec<_>>().join(", ");
            if auds
                .iter()
                .any(|a| strip_slash(a) == strip_slash(canonical))
            {
                (
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "{label} is bound to this resource: aud [{shown}] names {} ({basis})",
                        crate::fmt::Line(canonical)
                    ),
                )
            } else if !auds.iter().any(|a| is_url_audience(a)) {
                (
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "{label} names no web address: aud [{shown}] is an application id or API \
                         identifier, which may be this server's own name at its authorization server \
                         (Microsoft Entra ID names the application, not its URL); the token alone \
                         cannot tell whether it is bound to {} ({basis}){}",
                        crate::fmt::Line(canonical),
                        resource_refused_note(session)
                    ),
                )
            } else {
                (
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{label} is not bound to this resource: aud [{shown}] does not name {} ({basis}){}",
                        crate::fmt::Line(canonical),
                        resource_refused_note(session)
                    ),
                )
            }
        })
        .collect();
    combine(SUB_A, parts)
}

/// When the login's authorization server refused the RFC 8707 `resource` parameter
/// (`session.resource_refused_in`): said beside an audience that is not the resource.
fn resource_refused_note(session: Option<&mcp_probe_schema::model::Session>) -> String {
    match session.and_then(|s| s.resource_refused_in) {
        Some(seq) => crate::format_exact!(
            "; the authorization server refused the RFC 8707 resource parameter (record #{seq}), so \
             the login could not ask for a token bound to this resource"
        ),
        None => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// c: downstream APIs
// ---------------------------------------------------------------------------------------

/// What sub-verdict c read: the leg, refused candidates, per-URL outcomes, hosts probed.
struct Downstream {
    leg: SubVerdict,
    refused: Map<String, Value>,
    outcomes: Map<String, Value>,
    hosts: Vec<String>,
}

/// One downstream candidate: its URL, the request with the token and the one without.
type Pair<'a> = (String, Option<Exchange<'a>>, Option<Exchange<'a>>);

/// The candidates probed, in first-seen order, and those screened out before sending
/// (the credential gate, the network guard, or an unresolvable host), by URL.
fn candidates(ev: &Bundle) -> (Vec<Pair<'_>>, Map<String, Value>) {
    let mut refused = Map::new();
    let mut pairs: Vec<Pair<'_>> = Vec::new();
    for x in ev.exchanges(leg::DOWNSTREAM) {
        let url = x.http.request.url.clone();
        if let HttpOutcome::Error(e) = &x.http.outcome {
            if x.http.connection.is_none()
                && matches!(
                    e.kind,
                    ErrorKind::RefusedByGuard | ErrorKind::Dns | ErrorKind::Timeout
                )
                && !carries_credential(&x)
            {
                // Screened out before sending (gate, guard, or an unresolvable host).
                if !pairs.iter().any(|(u, _, _)| *u == url) {
                    refused.insert(url, Value::String(e.message.clone()));
                    continue;
                }
            }
        }
        let slot = match pairs.iter().position(|(u, _, _)| *u == url) {
            Some(i) => i,
            None => {
                pairs.push((url.clone(), None, None));
                pairs.len() - 1
            }
        };
        if carries_credential(&x) {
            pairs[slot].1 = Some(x);
        } else {
            pairs[slot].2 = Some(x);
        }
    }
    (pairs, refused)
}

/// One candidate's pair: the request with the token against the same request without.
fn compare(
    url: &str,
    with: &Option<Exchange<'_>>,
    without: &Option<Exchange<'_>>,
) -> (SubOutcome, String) {
    match (with, without) {
        (Some(w), wo) => match (w.status(), wo.and_then(|x| x.status())) {
            (Some(401), _) => (
                SubOutcome::Pass,
                crate::format_exact!("{} refused the token with 401", crate::fmt::Line(url)),
            ),
            (Some(s @ (200 | 403)), Some(n)) if n != s => (
                SubOutcome::Fail,
                crate::format_exact!(
                    "{} answered {s} with the token and {n} without it: it {} the token",
                    crate::fmt::Line(url),
                    if s == 200 {
                        "accepted"
                    } else {
                        "authenticated (then denied authorization for)"
                    }
                ),
            ),
            (Some(s), Some(n)) if n == s => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{} answered {s} with and without the token (no usable comparison)",
                    crate::fmt::Line(url)
                ),
            ),
            _ => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{} answered {} with the token and {} without (no usable comparison)",
                    crate::fmt::Line(url),
                    answer_of(w),
                    wo.map(|x| answer_of(&x))
                        .unwrap_or_else(|| "nothing recorded".into())
                ),
            ),
        },
        (None, _) => (
            SubOutcome::Unknown,
            crate::format_exact!("{} has no request with the token", crate::fmt::Line(url)),
        ),
    }
}

fn sub_c(ev: &Bundle) -> Downstream {
    let mut outcomes = Map::new();
    let mut hosts: Vec<String> = Vec::new();
    let (pairs, refused) = candidates(ev);
    let skips: Vec<String> = ev
        .records_for(leg::DOWNSTREAM)
        .filter_map(|r| match &r.observation {
            mcp_probe_schema::model::Observation::Skipped { reason } => Some(escape_line(reason)),
            _ => None,
        })
        .collect();
    let mut fails = Vec::new();
    let mut passes = Vec::new();
    let mut unknowns = Vec::new();
    for (url, with, without) in &pairs {
        if let Some(h) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
        }
        let (o, note) = compare(url, with, without);
        outcomes.insert(url.clone(), serde_json::to_value(o).unwrap_or(Value::Null));
        match o {
            SubOutcome::Fail => fails.push(note),
            SubOutcome::Pass => passes.push(note),
            _ => unknowns.push(note),
        }
    }
    let refused_note = if refused.is_empty() {
        String::new()
    } else {
        crate::format_exact!(
            "; {} candidate(s) refused by the credential gate or the network guard (nothing sent)",
            refused.len()
        )
    };
    let leg = if !fails.is_empty() {
        SubVerdict::new(
            SUB_C,
            SubOutcome::Fail,
            crate::format_exact!(
                "accepted by a downstream API: {}{refused_note}",
                fails.join("; ")
            ),
        )
    } else if !passes.is_empty() {
        SubVerdict::new(
            SUB_C,
            SubOutcome::Pass,
            crate::format_exact!("{}{refused_note}", passes.join("; ")),
        )
    } else if pairs.is_empty() {
        let why = if skips.is_empty() {
            String::new()
        } else {
            crate::format_exact!(" ({})", skips.join("; "))
        };
        SubVerdict::new(
            SUB_C,
            SubOutcome::Unknown,
            crate::format_exact!(
                "no candidate probed{why}{}",
                if refused.is_empty() {
                    String::new()
                } else {
                    crate::format_exact!("; {} refused by the gate", refused.len())
                }
            ),
        )
    } else {
        SubVerdict::new(
            SUB_C,
            SubOutcome::Unknown,
            crate::format_exact!(
                "none produced a usable comparison: {}{refused_note}",
                unknowns.join("; ")
            ),
        )
    };
    Downstream {
        leg,
        refused,
        outcomes,
        hosts,
    }
}

// ---------------------------------------------------------------------------------------
// b: a wrong-audience token
// ---------------------------------------------------------------------------------------

/// What the wrong-audience grant read.
struct Mint {
    leg: SubVerdict,
    resource: Option<String>,
    /// How the presented minted token is bound ([`Binding::kind`]), when one was presented.
    binding: Option<&'static str>,
}

fn skip_reason(ev: &Bundle, l: LegId) -> Option<String> {
    ev.skipped(l).map(escape_line)
}

/// Whether the refresh chain was restored, for the note.
fn restore_note(ev: &Bundle) -> String {
    if let Some(x) = ev.exchanges(leg::FOREIGN_RESTORE).last() {
        let j = response_json(&x);
        let ok = x.status().is_some_and(|s| (200..300).contains(&s))
            && j.get("access_token").and_then(Value::as_str).is_some();
        let failed = skip_reason(ev, leg::FOREIGN_RESTORE)
            .map(|r| crate::format_exact!(" ({r})"))
            .unwrap_or_default();
        return if ok && failed.is_empty() {
            crate::format_exact!(
                "the grant rotated the refresh token and the chain was restored (record #{}: a token for the \
                 audited resource was cached)",
                x.seq()
            )
        } else {
            crate::format_exact!(
                "the grant rotated the refresh token and the restore did not succeed (record #{}, {}){failed}",
                x.seq(),
                answer_of(&x)
            )
        };
    }
    match skip_reason(ev, leg::FOREIGN_RESTORE) {
        Some(r) => r,
        None => "whether the refresh chain was restored is not recorded".into(),
    }
}

fn sub_b(ev: &Bundle, held: &[String]) -> Mint {
    let Some(m) = ev.exchanges(leg::FOREIGN_MINT).last() else {
        let why = skip_reason(ev, leg::FOREIGN_MINT)
            .unwrap_or_else(|| "the wrong-audience grant was not recorded".into());
        return Mint {
            leg: SubVerdict::new(SUB_B, SubOutcome::Unknown, why),
            resource: None,
            binding: None,
        };
    };
    let resource = form_param(&m.http.request.body.bytes, "resource");
    let named = resource
        .as_deref()
        .map(escape_line)
        .unwrap_or_else(|| "(no resource)".into());
    let unknown = |note: String| Mint {
        leg: SubVerdict::new(SUB_B, SubOutcome::Unknown, note),
        resource: resource.clone(),
        binding: None,
    };
    let Some(status) = m.status() else {
        return unknown(crate::format_exact!(
            "the refresh grant naming {named} got no answer (record #{}, {}), so no foreign-audience token \
             exists",
            m.seq(),
            answer_of(&m)
        ));
    };
    let j = response_json(&m);
    let minted = j
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && (200..300).contains(&status));
    let Some(minted) = minted else {
        let why = match j.get("error").and_then(Value::as_str) {
            Some(e) => crate::format_exact!("error {}", crate::fmt::Line(e)),
            None if String::from_utf8_lossy(
                &m.response()
                    .map(|r| r.body.bytes.clone())
                    .unwrap_or_default(),
            )
            .contains("invalid_target") =>
            {
                "invalid_target".into()
            }
            None => crate::format_exact!("HTTP {status}"),
        };
        return unknown(crate::format_exact!(
            "the authorization server refused to mint a token for {named} ({why}, record #{}) — the \
             conforming answer (RFC 8707 invalid_target), but the server's own audience validation is then \
             untested",
            m.seq()
        ));
    };
    let restored = restore_note(ev);
    if held.iter().any(|h| h == minted) {
        return unknown(crate::format_exact!(
            "the authorization server answered the grant naming {named} with the current access token \
             (record #{}); {restored}",
            m.seq()
        ));
    }
    let control = ev.exchanges(leg::FOREIGN_CONTROL).last();
    let foreign = ev.exchanges(leg::FOREIGN_TOKEN).last();
    let (Some(c), Some(f)) = (control, foreign) else {
        let why = skip_reason(ev, leg::FOREIGN_TOKEN)
            .or_else(|| skip_reason(ev, leg::FOREIGN_CONTROL))
            .unwrap_or_else(|| "the control/foreign pair is not recorded".into());
        return unknown(crate::format_exact!(
            "a token for {named} was minted (record #{}) but not presented: {why}; {restored}",
            m.seq()
        ));
    };
    let minted_sent = credential_of(&f).is_some_and(|v| v.ends_with(minted));
    if !minted_sent {
        return unknown(crate::format_exact!(
            "the request of record #{} does not carry the minted token; {restored}",
            f.seq()
        ));
    }
    let (cs, fs) = (c.status(), f.status());
    let bound = binding(ev, minted, resource.as_deref().unwrap_or("(no resource)"));
    let pair = crate::format_exact!(
        "control tools/list with the probe's own token {} (record #{}), the same with the token minted for \
         {named} {} (record #{})",
        answer_of(&c),
        c.seq(),
        answer_of(&f),
        f.seq()
    );
    let (o, verdict) = match (cs, fs) {
        (None, _) | (_, None) => (SubOutcome::Unknown, "a request was not answered"),
        (Some(c), _) if !(200..300).contains(&c) => (
            SubOutcome::Unknown,
            "the control was not accepted, so a refusal of the minted token is not attributable to its audience",
        ),
        // A token for the audited resource: neither a refusal nor an acceptance says
        // anything about the audience.
        _ if matches!(bound, Binding::Audited(_)) => (
            SubOutcome::Unknown,
            "not decidable from this pair",
        ),
        (_, Some(401 | 403)) => (
            SubOutcome::Pass,
            "the server refuses a token minted for another resource",
        ),
        (_, Some(f)) if (200..300).contains(&f) && bound.acceptance_fails() => (
            SubOutcome::Fail,
            "the server accepted a token minted for another resource (its audience is not validated)",
        ),
        (_, Some(f)) if (200..300).contains(&f) => (
            SubOutcome::Unknown,
            "the server accepted the minted token, which is not attributable to its audience validation",
        ),
        _ => (
            SubOutcome::Unknown,
            "the minted token drew neither 401/403 nor an acceptance",
        ),
    };
    // What the minted token's facts say: every reading but a foreign token that was
    // not accepted (the verdict says it all then).
    let facts = match &bound {
        Binding::Foreign(_) if o != SubOutcome::Fail => String::new(),
        b => crate::format_exact!("; {}", b.sentence()),
    };
    Mint {
        leg: SubVerdict::new(
            SUB_B,
            o,
            crate::format_exact!("{verdict}: {pair}{facts}; {restored}"),
        ),
        resource,
        binding: Some(bound.kind()),
    }
}

/// Fingerprints of the access tokens the run held (as recorded in a bundle).
fn held(ev: &Bundle) -> Vec<String> {
    ev.payload
        .tokens
        .iter()
        .map(|t| t.fingerprint.clone())
        .collect()
}

/// What `audience-bound-tokens` reports besides its legs, in report order.
#[derive(Serialize)]
struct AudienceBoundTokensFacts {
    legs: Map<String, Value>,
    /// The resource the audiences are compared with (`no-token-passthrough`'s).
    canonical_resource: Option<String>,
    /// Sub-verdict c's candidates screened out before sending, by URL: why.
    candidates_refused: Map<String, Value>,
    /// The resource the wrong-audience token was asked for (sub-verdict b).
    wrong_resource: Option<String>,
    /// How the minted token presented by sub-verdict b is bound, from its recorded facts
    /// (`audited_resource`, `unverified`, `foreign`, `not_recorded`); null when none was
    /// presented.
    minted_binding: Option<&'static str>,
    hosts_probed: Vec<String>,
    /// Sub-verdict c's outcome per candidate URL.
    downstream_outcomes: Map<String, Value>,
}

/// What `audience-bound-tokens` reports when its gate (`no-token-passthrough`'s, or no
/// token) ends the grading.
#[derive(Serialize)]
struct GateFacts {
    legs: Map<String, Value>,
    hosts_probed: [String; 0],
}

impl Check for AudienceBoundTokens {
    fn id(&self) -> &'static str {
        "audience-bound-tokens"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        // Every leg is read when present: the gate is `no-token-passthrough`'s, whose outcome (a missing
        // detection or discovery leg included) is carried with this check's reduction
        // and details; the audience legs are sent only when a token was held and a
        // session established, and their absence is graded per leg.
        Legs::with_optional(
            &[],
            &[
                leg::ENDPOINT_DETECT,
                leg::AUTH_NONE,
                leg::PRM,
                leg::AS_META,
                leg::DOWNSTREAM,
                leg::FOREIGN_MINT,
                leg::FOREIGN_RESTORE,
                leg::FOREIGN_CONTROL,
                leg::FOREIGN_TOKEN,
            ],
        )
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let gate = NoTokenPassthrough.grade(ev, cx);
        let tokens = &ev.payload.tokens;
        let empty_legs = || {
            let m: Map<String, Value> = [SUB_A, SUB_C, SUB_B]
                .iter()
                .map(|l| (crate::refs::here(l), json!(SubOutcome::Unknown)))
                .collect();
            m
        };
        if tokens.is_empty() || gate.verdict == Verdict::Error && gate.subs.is_empty() {
            let (verdict, legs) = match gate.verdict {
                Verdict::NotApplicable => (Verdict::NotApplicable, Map::new()),
                Verdict::Error => (Verdict::Error, Map::new()),
                _ => (Verdict::Unknown, empty_legs()),
            };
            let text = match verdict {
                Verdict::Unknown if !tokens.is_empty() || gate.evidence.contains("no token") => {
                    gate.evidence.clone()
                }
                Verdict::Unknown => crate::format_exact!(
                    "{}; no token is held, so neither its audience nor the server's validation of a \
                     foreign audience can be observed",
                    gate.evidence
                ),
                _ => gate.evidence.clone(),
            };
            return Outcome::single(verdict, text, REDUCTION)
                .with_records(gate.records.iter().copied())
                .with_facts(&GateFacts {
                    legs,
                    hosts_probed: [],
                });
        }
        let canonical = gate
            .details
            .get("canonical_resource")
            .and_then(crate::details::Detail::as_str)
            .map(str::to_string);
        let basis = if gate
            .evidence
            .contains("protected-resource metadata resource")
        {
            "the protected-resource metadata resource, which covers the endpoint"
        } else {
            "the endpoint's canonical URI"
        };
        let a = sub_a(tokens, ev.session(), canonical.as_deref(), basis);
        let mut records: Vec<u64> = gate.records.clone();
        let no_session = ev.revision().is_none();
        let not_sent = |l: &str| {
            if no_session {
                SubVerdict::new(
                    l,
                    SubOutcome::Unknown,
                    "no MCP session was established with the credential, so the audience legs were not sent",
                )
            } else {
                SubVerdict::new(
                    l,
                    SubOutcome::Error,
                    crate::format_exact!(
                        "leg {} missing from this bundle, written by {} {} (build {}); re-collect with a \
                         collector that records it",
                        if l == SUB_C {
                            leg::DOWNSTREAM
                        } else {
                            leg::FOREIGN_MINT
                        },
                        crate::fmt::Line(&ev.payload.collector.name),
                        crate::fmt::Line(&ev.payload.collector.version),
                        crate::fmt::Line(&ev.payload.collector.build)
                    ),
                )
            }
        };
        let (c, refused, outcomes, hosts) = if ev.has_leg(leg::DOWNSTREAM) {
            records.extend(ev.seqs(leg::DOWNSTREAM));
            let d = sub_c(ev);
            (d.leg, d.refused, d.outcomes, d.hosts)
        } else {
            (not_sent(SUB_C), Map::new(), Map::new(), Vec::new())
        };
        let (b, resource, minted_binding) = if ev.has_leg(leg::FOREIGN_MINT) {
            for l in [
                leg::FOREIGN_MINT,
                leg::FOREIGN_RESTORE,
                leg::FOREIGN_CONTROL,
                leg::FOREIGN_TOKEN,
            ] {
                records.extend(ev.seqs(l));
            }
            let m = sub_b(ev, &held(ev));
            (m.leg, m.resource, m.binding)
        } else {
            (not_sent(SUB_B), None, None)
        };
        let legs = vec![a, c, b];
        Outcome::from_subs(legs.clone(), REDUCTION)
            .with_records(records)
            .with_facts(&AudienceBoundTokensFacts {
                legs: legs_map(&legs),
                canonical_resource: canonical,
                candidates_refused: refused,
                wrong_resource: resource,
                minted_binding,
                hosts_probed: hosts,
                downstream_outcomes: outcomes,
            })
    }
}

#[cfg(test)]
mod tests;
