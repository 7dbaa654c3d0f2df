//! Rule `static-client-safeguards`: confused-deputy safeguards for static OAuth client ids
//! (docs/checks.md, under the row this rule grades).
//! Pre-authentication behaviour only: the collector never
//! logs in for these legs (collector/src/legs_deputy.rs).
//!
//! Gate `-pre` (rendered after the row's number), re-derived from the records (the collector's skip notes are only
//! quoted):
//!
//! * No authorization-server metadata (the first `discovery.as` answer that is a JSON
//!   object with an `issuer`): UNKNOWN when protected-resource discovery was unread or an
//!   AS form went unanswered (anything but a clean 404), else N/A (absence observed).
//! * No `authorization_endpoint` or no `registration_endpoint` → N/A; one that is not an
//!   http(s) URL → UNKNOWN. The authorization endpoint on the MCP endpoint's own
//!   host:port → N/A ("authorizes for itself"). Host means host and port (default ports
//!   filled in): another port is another origin and another service.
//! * A scratch registration refused (HTTP status, no `client_id`) → UNKNOWN: the
//!   condition is not established, which is not "does not apply"; a
//!   transport failure → ERROR.
//! * The two authorization answers must name the same onward `client_id` in `Location`;
//!   otherwise N/A (no static client id is seen in use).
//!
//! Legs (worst first with pre = pass):
//!
//! * a: the varied `redirect_uri` drew a `Location` carrying `code` → fail; its host
//!   is the varied host → fail; a 4xx or an OAuth `error=` in `Location` → pass; the
//!   registered request not answered 2xx/3xx → error; otherwise unknown.
//! * b: a fabricated callback on the registered path against the control path
//!   (see `sub_b`).
//! * c: fails only on evidence of a hand-off to the upstream AS on the shared client
//!   id, i.e. a 3xx whose `Location` names the static `client_id` for the new client #3;
//!   a redirect elsewhere (a login page, a corporate IdP) or a page on the AS passes.

use mcp_probe_schema::model::{ErrorKind, HttpOutcome};
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use url::Url;

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::oauth::gate::{legs_map, no_endpoint, Gated};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::preconditions::missing_legs;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};
use mcp_probe_schema::model::Era;

/// Confused-deputy safeguards for static OAuth client ids.
#[derive(Debug)]
pub struct StaticClientSafeguards;

/// The pre-condition's local id: the runner prefixes the row's number (`-pre` reads
/// `3.3.5-pre` under v1.0.0).
const PRE: &str = "-pre";
const SUB_A: &str = "a";
const SUB_B: &str = "b";
const SUB_C: &str = "c";

/// The unregistered redirect URI host of sub-verdict a (collector `VARIED_REDIRECT`).
const VARIED_HOST: &str = "cis-probe-attacker.invalid";
/// Sub-verdict b's paths (collector `CALLBACK_PATH`, `CONTROL_PATH`).
const CALLBACK_PATH: &str = "/callback";
const CONTROL_PATH: &str = "/cis-probe-no-such-path";

const REDUCTION: &str = concat!(
    "no interactive login, so only pre-authentication behaviour is observable: a server that \
     shows its own consent step before handing off reveals no static client id and reads as N/A; ",
    crate::here!("b"),
    "'s \
     fabricated code alone may explain a refusal; scratch clients are registered at the authorization server and \
     not deleted"
);

fn host_port(u: &Url) -> Option<(String, u16)> {
    let h = u
        .host_str()?
        .trim_end_matches('.')
        .to_ascii_lowercase()
        .trim_matches(['[', ']'])
        .to_string();
    Some((h, u.port_or_known_default()?))
}

/// The body parsed ([`Exchange::body_json_cow`]), borrowed from the bundle's memo;
/// `null` when it is not JSON.
fn json_of<'a>(x: &Exchange<'a>) -> Cow<'a, Value> {
    x.body_json_cow().unwrap_or(Cow::Owned(Value::Null))
}

fn body_text(x: &Exchange<'_>) -> String {
    x.response()
        .map(|r| {
            let t = String::from_utf8_lossy(&r.body.bytes);
            escape_line(&t.chars().take(200).collect::<String>())
        })
        .unwrap_or_default()
}

/// `"HTTP 303"` or `"no answer (<kind>: <message>)"`.
fn answer_of(x: &Exchange<'_>) -> String {
    match &x.http.outcome {
        HttpOutcome::Response(r) => crate::format_exact!("HTTP {}", r.status),
        HttpOutcome::Error(e) if e.kind == ErrorKind::RefusedByGuard => {
            crate::format_exact!(
                "not sent (refused by the network guard: {})",
                crate::fmt::Line(&e.message)
            )
        }
        HttpOutcome::Error(e) => crate::format_exact!(
            "no answer ({}: {})",
            e.kind.as_str(),
            crate::fmt::Line(&e.message)
        ),
    }
}

/// The `Location` of an answer, resolved against the request URL.
fn location(x: &Exchange<'_>) -> Option<Url> {
    let l = x.header(header::LOCATION)?;
    Url::parse(&x.http.request.url).ok()?.join(l.trim()).ok()
}

/// Query parameter `name` of a URL, or of its fragment read as a form.
fn param(u: &Url, name: &str, fragment_too: bool) -> Option<String> {
    u.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .or_else(|| {
            fragment_too.then(|| u.fragment()).flatten().and_then(|f| {
                url::form_urlencoded::parse(f.as_bytes())
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.into_owned())
            })
        })
}

fn carries_code(x: &Exchange<'_>) -> bool {
    location(x).is_some_and(|u| param(&u, "code", true).is_some())
}

fn record_note(x: &Exchange<'_>) -> String {
    crate::format_exact!("record #{}", x.seq())
}

/// What one registration drew.
enum Registered {
    Id(String),
    /// Refused or malformed: the condition is not established.
    Refused(String),
    /// Not answered (transport error, or the guard refused to send).
    Failed(String),
}

fn registered(x: &Exchange<'_>) -> Registered {
    let Some(status) = x.status() else {
        return Registered::Failed(crate::format_exact!(
            "the registration at {} ({}) drew {}",
            crate::fmt::Line(&x.http.request.url),
            record_note(x),
            answer_of(x)
        ));
    };
    let j = json_of(x);
    match (
        status,
        j.get("client_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty()),
    ) {
        (200 | 201, Some(id)) => Registered::Id(id.to_string()),
        _ => Registered::Refused(crate::format_exact!(
            "the registration at {} ({}) was answered HTTP {status}{}",
            crate::fmt::Line(&x.http.request.url),
            record_note(x),
            match j.get("error").and_then(Value::as_str) {
                Some(e) => crate::format_exact!(" with error {}", crate::fmt::Line(e)),
                None if (200..300).contains(&status) => " without a client_id".to_string(),
                None => String::new(),
            }
        )),
    }
}

/// The first resolved authorization-server metadata: `(seq, document)`. A document the
/// collector refused (its issuer is not the one it was fetched for) is never read: no
/// client of the collector used it, and nothing in it is the server's word.
fn metadata(ev: &Bundle) -> Option<(u64, Map<String, Value>)> {
    ev.exchanges(leg::AS_META).find_map(|x| {
        if x.status() != Some(200) || x.http.refused.is_some() {
            return None;
        }
        match json_of(&x).into_owned() {
            Value::Object(m)
                if m.get("issuer")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty()) =>
            {
                Some((x.seq(), m))
            }
            _ => None,
        }
    })
}

/// Why discovery did not decide whether metadata exists (empty: the absence was
/// observed).
fn unread(ev: &Bundle) -> Vec<String> {
    let mut out = Vec::new();
    let prm: Vec<Exchange<'_>> = ev.exchanges(leg::PRM).collect();
    let prm_doc = prm
        .iter()
        .any(|x| x.status() == Some(200) && json_of(x).is_object());
    if !prm_doc {
        if prm.is_empty() {
            out.push("no protected-resource metadata discovery was recorded".to_string());
        }
        for x in prm.iter().filter(|x| x.status() != Some(404)) {
            out.push(crate::format_exact!(
                "{} ({}: {})",
                crate::fmt::Line(&x.http.request.url),
                record_note(x),
                answer_of(x)
            ));
        }
    }
    for x in ev
        .exchanges(leg::AS_META)
        .filter(|x| x.status() != Some(404))
    {
        match &x.http.refused {
            Some(r) => out.push(crate::format_exact!(
                "{} ({}: refused by the collector: {})",
                crate::fmt::Line(&x.http.request.url),
                record_note(&x),
                crate::checks::common::oauth::discovery::refusal_text(r)
            )),
            None => out.push(crate::format_exact!(
                "{} ({}: {})",
                crate::fmt::Line(&x.http.request.url),
                record_note(&x),
                answer_of(&x)
            )),
        }
    }
    out
}

/// The gate from metadata: the open endpoints, or the verdict.
fn gate(ev: &Bundle) -> Result<(Url, u64), Box<Outcome>> {
    let Some((seq, m)) = metadata(ev) else {
        let why = unread(ev);
        return Err(Box::new(if why.is_empty() {
            Outcome::single(
                Verdict::NotApplicable,
                "no authorization-server metadata exists: every discovery attempt answered a clean 404 or none \
                 was advertised, so no authorization server is fronted and nothing was registered",
                REDUCTION,
            )
            .with_facts(&StaticClientSafeguardsFacts::legs(json!({})))
        } else {
            Outcome::single(
                Verdict::Unknown,
                crate::format_exact!(
                    "whether an authorization server is fronted is undecided: no authorization-server metadata \
                     was read ({})",
                    why.join(", ")
                ),
                REDUCTION,
            )
            .with_facts(&StaticClientSafeguardsFacts::legs(pre_legs("unknown")))
        }));
    };
    let issuer = m
        .get("issuer")
        .and_then(Value::as_str)
        .map(escape_line)
        .unwrap_or_default();
    let url_of = |name: &str| -> Result<Url, Box<Outcome>> {
        match m.get(name).filter(|v| !v.is_null()) {
            None => Err(Box::new(Outcome::single(
                Verdict::NotApplicable,
                crate::format_exact!(
                    "the metadata of {issuer} (record #{seq}) has no {name}, so no client can be registered and \
                     authorized there (no scratch client was registered)"
                ),
                REDUCTION,
            )
            .with_facts(&StaticClientSafeguardsFacts::legs(json!({}))))),
            Some(v) => match v.as_str().map(Url::parse) {
                Some(Ok(u)) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(u),
                _ => Err(Box::new(Outcome::single(
                    Verdict::Unknown,
                    crate::format_exact!(
                        "the {name} {} in the metadata of {issuer} (record #{seq}) is not an http(s) URL",
                        crate::fmt::Line(&v.to_string())
                    ),
                    REDUCTION,
                )
                .with_facts(&StaticClientSafeguardsFacts::legs(pre_legs("unknown"))))),
            },
        }
    };
    let authorize = url_of("authorization_endpoint")?;
    // A server that takes clients only by client ID metadata document: clients can be
    // authorized there, but the scratch clients register dynamically only, so the
    // safeguards were not probed (not "nothing can be registered").
    let cimd = m
        .get("client_id_metadata_document_supported")
        .and_then(Value::as_bool)
        == Some(true);
    if cimd && m.get("registration_endpoint").is_none_or(Value::is_null) {
        return Err(Box::new(
            Outcome::single(
                Verdict::Unknown,
                crate::format_exact!(
                    "the metadata of {issuer} (record #{seq}) has no registration_endpoint but accepts client ID \
                     metadata documents (client_id_metadata_document_supported): clients are authorized there, \
                     and the probe's scratch clients register dynamically only, so the safeguards were not probed"
                ),
                REDUCTION,
            )
            .with_facts(&StaticClientSafeguardsFacts::legs(pre_legs("unknown"))),
        ));
    }
    url_of("registration_endpoint")?;
    let endpoint = Url::parse(&ev.endpoint()).ok();
    if endpoint.as_ref().and_then(host_port).is_some()
        && endpoint.as_ref().and_then(host_port) == host_port(&authorize)
    {
        return Err(Box::new(Outcome::single(
            Verdict::NotApplicable,
            crate::format_exact!(
                "the authorization endpoint {} (metadata record #{seq}) is on the MCP endpoint's own host:port: it \
                 authorizes for itself and fronts no separate authorization server (no scratch client was \
                 registered)",
                crate::fmt::Line(authorize.as_str())
            ),
            REDUCTION,
        )
        .with_facts(&StaticClientSafeguardsFacts::legs(json!({})))));
    }
    Ok((authorize, seq))
}

/// Protected-resource discovery past the session gate (with a session the endpoint
/// answered, so it was recorded); read when present: authorization-server discovery
/// (sent per advertised server) and this rule's legs (sent only once the metadata names a
/// separate authorization server and a session was established; their absence is graded).
const LEGS: Gated = Gated {
    legs: &[
        leg::PRM,
        leg::AS_META,
        leg::DEPUTY_REGISTER,
        leg::DEPUTY_AUTHORIZE,
        leg::DEPUTY_REDIRECT,
        leg::DEPUTY_CALLBACK,
        leg::DEPUTY_CONSENT,
    ],
    gated: 1,
};

/// What `static-client-safeguards` reports besides its legs, in report order:
/// `registrations` once scratch clients were registered, `downstream_client_ids` once their
/// authorization answers were compared.
#[derive(Serialize)]
struct StaticClientSafeguardsFacts<'a> {
    legs: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    registrations: Option<&'a [String]>,
    /// The onward `client_id` each authorization answer named.
    #[serde(skip_serializing_if = "Option::is_none")]
    downstream_client_ids: Option<&'a [Option<String>]>,
}

/// The `legs` detail holding only the pre-condition's `outcome`, keyed like [`legs_map`].
fn pre_legs(outcome: impl Serialize) -> Value {
    let mut m = Map::new();
    m.insert(
        crate::refs::here(PRE),
        serde_json::to_value(outcome).unwrap_or(Value::Null),
    );
    Value::Object(m)
}

impl StaticClientSafeguardsFacts<'_> {
    /// Only the legs: none (N/A) or the pre-condition's outcome.
    fn legs(legs: Value) -> Self {
        StaticClientSafeguardsFacts {
            legs,
            registrations: None,
            downstream_client_ids: None,
        }
    }
}

impl Check for StaticClientSafeguards {
    fn id(&self) -> &'static str {
        "static-client-safeguards"
    }

    fn legs(&self, era: Option<Era>) -> Legs {
        LEGS.legs(era)
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        if ev.session().is_none() {
            return no_endpoint(ev);
        }
        let missing = |l: LegId| missing_legs(ev, &[l]);
        if !ev.has_leg(leg::PRM) {
            return missing(leg::PRM);
        }
        let mut records: Vec<u64> = ev.seqs(leg::PRM);
        records.extend(ev.seqs(leg::AS_META));
        let (authorize, _meta_seq) = match gate(ev) {
            Ok(g) => g,
            Err(o) => return (*o).with_records(records),
        };
        for l in &LEGS.legs[2..] {
            records.extend(ev.seqs(*l));
        }
        let pre_only = |verdict: Verdict,
                        outcome: SubOutcome,
                        text: String,
                        registrations: Option<&[String]>| {
            Outcome::single(verdict, text, REDUCTION)
                .with_records(records.clone())
                .with_facts(&StaticClientSafeguardsFacts {
                    registrations,
                    ..StaticClientSafeguardsFacts::legs(pre_legs(outcome))
                })
        };
        // A pre-registered client (`--client-id`): the collector sent no scratch
        // registration, so whether a static client id fronts the server is not probed.
        if let Some(p) = &ev.payload.run.options.pre_registered_client {
            if ev.exchanges(leg::DEPUTY_REGISTER).next().is_none() {
                return pre_only(
                    Verdict::Unknown,
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "pre-registered client: registration not probed (the run used --client-id {}, so the \
                         {} scratch registrations were not sent; collect without --client-id to probe \
                         the registration endpoint)",
                        crate::fmt::Line(&p.client_id),
                        crate::here!("")
                    ),
                    None,
                );
            }
        }
        if !ev.has_leg(leg::DEPUTY_REGISTER) {
            if ev.revision().is_none() {
                return pre_only(
                    Verdict::Unknown,
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "the authorization endpoint {} is on another host, but no MCP session was established, so \
                         the {} legs were not sent",
                        crate::fmt::Line(authorize.as_str()),
                        crate::here!("")
                    ),
                    None,
                );
            }
            return missing(leg::DEPUTY_REGISTER).with_records(records);
        }
        let mut ids = match scratch_clients(ev, &pre_only) {
            Ok(ids) => ids,
            Err(o) => return *o,
        };
        let auths: Vec<Exchange<'_>> = ev.exchanges(leg::DEPUTY_AUTHORIZE).collect();
        let (static_id, onward) = match shared_client_id(&auths, &ids, &records, &pre_only) {
            Ok(found) => found,
            Err(o) => return *o,
        };
        let pre = SubVerdict::new(
            PRE,
            SubOutcome::Pass,
            crate::format_exact!(
                "two fresh clients ({}, {}) were both handed on with client_id {} (records #{}, #{}): a static \
                 client id fronts the authorization server",
                crate::fmt::Line(&ids[0]),
                crate::fmt::Line(&ids[1]),
                crate::fmt::Line(&static_id),
                auths[0].seq(),
                auths[1].seq()
            ),
        );
        let a = sub_a(ev, &auths[0]);
        let b = sub_b(ev);
        let (c, third) = sub_c(ev, &static_id);
        if let Some(id) = third {
            ids.push(id);
        }
        let legs = vec![pre, a, b, c];
        Outcome::from_subs(legs.clone(), REDUCTION)
            .with_records(records)
            .with_facts(&StaticClientSafeguardsFacts {
                legs: Value::Object(legs_map(&legs)),
                registrations: Some(&ids),
                downstream_client_ids: Some(&onward),
            })
    }
}

/// The outcome of the pre-condition alone, with the records read so far.
type PreOnly<'a> = &'a dyn Fn(Verdict, SubOutcome, String, Option<&[String]>) -> Outcome;

/// Scratch clients #1 and #2: their client ids, or the outcome that ends the grading.
fn scratch_clients(ev: &Bundle, pre_only: PreOnly<'_>) -> Result<Vec<String>, Box<Outcome>> {
    let regs: Vec<Exchange<'_>> = ev.exchanges(leg::DEPUTY_REGISTER).collect();
    let mut ids: Vec<String> = Vec::new();
    for x in regs.iter().take(2) {
        match registered(x) {
            Registered::Id(id) => ids.push(id),
            Registered::Refused(why) => {
                return Err(Box::new(
                    pre_only(
                        Verdict::Unknown,
                        SubOutcome::Unknown,
                        crate::format_exact!(
                            "whether a static client id is in use is not established: {why} (a refused \
                             registration says nothing about the deputy)"
                        ),
                        Some(&ids),
                    ),
                ));
            }
            Registered::Failed(why) => {
                return Err(Box::new(pre_only(
                    Verdict::Error,
                    SubOutcome::Error,
                    why,
                    Some(&ids),
                )));
            }
        }
    }
    if ids.len() < 2 {
        let why = ev
            .skipped(leg::DEPUTY_REGISTER)
            .or_else(|| ev.skipped(leg::DEPUTY_AUTHORIZE))
            .map(escape_line)
            .unwrap_or_else(|| {
                crate::format_exact!("{} scratch registration(s) recorded, two needed", ids.len())
            });
        return Err(Box::new(pre_only(
            Verdict::Unknown,
            SubOutcome::Unknown,
            why,
            Some(&ids),
        )));
    }
    Ok(ids)
}

/// The onward client id both authorization answers name, with what each named; or the
/// outcome that ends the grading (an unanswered request, or no shared id: N/A).
fn shared_client_id(
    auths: &[Exchange<'_>],
    ids: &[String],
    records: &[u64],
    pre_only: PreOnly<'_>,
) -> Result<(String, Vec<Option<String>>), Box<Outcome>> {
    if let Some(x) = auths.iter().take(2).find(|x| x.status().is_none()) {
        return Err(Box::new(pre_only(
            Verdict::Unknown,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the authorization request at {} ({}) drew {}, so whether the clients share an onward client id \
                 is not established",
                crate::fmt::Line(&x.http.request.url),
                record_note(x),
                answer_of(x)
            ),
            Some(ids),
        )));
    }
    let onward: Vec<Option<String>> = auths
        .iter()
        .take(2)
        .map(|x| location(x).and_then(|u| param(&u, "client_id", false)))
        .collect();
    let static_id = match onward.as_slice() {
        [Some(a), Some(b)] if a == b => a.clone(),
        _ => {
            let shown: Vec<String> = (0..2)
                .map(|i| {
                    let what = auths
                        .get(i)
                        .map(|x| {
                            crate::format_exact!(
                                "{} to {}",
                                answer_of(x),
                                location(x).map_or_else(
                                    || "no Location".into(),
                                    |u| escape_line(u.as_str())
                                )
                            )
                        })
                        .unwrap_or_else(|| "not recorded".into());
                    crate::format_exact!(
                        "client #{} ({}): {what}, onward client_id {}",
                        i + 1,
                        crate::fmt::Line(&ids[i]),
                        onward
                            .get(i)
                            .cloned()
                            .flatten()
                            .map_or("none".into(), |s| escape_line(&s))
                    )
                })
                .collect();
            return Err(Box::new(Outcome::single(
                Verdict::NotApplicable,
                crate::format_exact!(
                    "not one shared static client id: the authorization answers of two fresh clients name no \
                     common onward client_id ({})",
                    shown.join("; ")
                ),
                REDUCTION,
            )
            .with_records(records.iter().copied())
            .with_facts(&StaticClientSafeguardsFacts {
                registrations: Some(ids),
                downstream_client_ids: Some(&onward),
                ..StaticClientSafeguardsFacts::legs(json!({}))
            })));
        }
    };
    Ok((static_id, onward))
}

fn not_recorded(ev: &Bundle, id: &str, l: LegId) -> SubVerdict {
    match ev.skipped(l) {
        Some(r) => SubVerdict::new(id, SubOutcome::Unknown, escape_line(r)),
        None => SubVerdict::new(
            id,
            SubOutcome::Error,
            crate::format_exact!(
                "leg {l} missing from this bundle, written by {} {} (build {}); re-collect with a \
                 collector that records it",
                crate::fmt::Line(&ev.payload.collector.name),
                crate::fmt::Line(&ev.payload.collector.version),
                crate::fmt::Line(&ev.payload.collector.build)
            ),
        ),
    }
}

fn sub_a(ev: &Bundle, registered: &Exchange<'_>) -> SubVerdict {
    let Some(v) = ev.exchanges(leg::DEPUTY_REDIRECT).last() else {
        return not_recorded(ev, SUB_A, leg::DEPUTY_REDIRECT);
    };
    if carries_code(&v) {
        return SubVerdict::new(
            SUB_A,
            SubOutcome::Fail,
            crate::format_exact!(
                "the request with the unregistered redirect_uri ({}) was answered with a code in Location ({}): the \
                 code goes to a target the client never registered",
                record_note(&v),
                location(&v).map(|u| escape_line(u.as_str())).unwrap_or_default()
            ),
        );
    }
    let Some(status) = v.status() else {
        return SubVerdict::new(
            SUB_A,
            SubOutcome::Error,
            crate::format_exact!(
                "the request with the unregistered redirect_uri drew {}",
                answer_of(&v)
            ),
        );
    };
    match registered.status() {
        None | Some(400..=499) => {
            return SubVerdict::new(
                SUB_A,
                SubOutcome::Error,
                crate::format_exact!(
                    "the registered request itself ({}) drew {}, so a refusal of the varied one is not attributable \
                     to the redirect_uri",
                    record_note(registered),
                    answer_of(registered)
                ),
            )
        }
        _ => {}
    }
    match status {
        400..=499 => SubVerdict::new(
            SUB_A,
            SubOutcome::Pass,
            crate::format_exact!(
                "the unregistered redirect_uri was refused with HTTP {status} ({}): \"{}\"",
                record_note(&v),
                body_text(&v)
            ),
        ),
        300..=399 => {
            let loc = location(&v);
            let shown = loc.as_ref().map_or_else(|| "no Location".into(), |u| escape_line(u.as_str()));
            if loc
                .as_ref()
                .and_then(Url::host_str)
                .is_some_and(|h| h.eq_ignore_ascii_case(VARIED_HOST))
            {
                SubVerdict::new(
                    SUB_A,
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "the unregistered redirect_uri was followed: HTTP {status} to {shown} ({})",
                        record_note(&v)
                    ),
                )
            } else if loc.as_ref().is_some_and(|u| param(u, "error", true).is_some()) {
                SubVerdict::new(
                    SUB_A,
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "the unregistered redirect_uri drew an OAuth error: HTTP {status} to {shown} ({})",
                        record_note(&v)
                    ),
                )
            } else {
                SubVerdict::new(
                    SUB_A,
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "the flow continued without refusing up front (HTTP {status} to {shown}, {}); an \
                         authorization server that validates after login answers the same",
                        record_note(&v)
                    ),
                )
            }
        }
        s => SubVerdict::new(
            SUB_A,
            SubOutcome::Unknown,
            crate::format_exact!(
                "HTTP {s} without a redirect ({}): no redirect says nothing; an authorization server that validates \
                 after login answers the same",
                record_note(&v)
            ),
        ),
    }
}

/// An OAuth error in the body (JSON `error` member or `error=` form text) or Location.
fn oauth_error(x: &Exchange<'_>) -> bool {
    json_of(x).get("error").is_some_and(Value::is_string)
        || x.response()
            .is_some_and(|r| String::from_utf8_lossy(&r.body.bytes).contains("error="))
        || location(x).is_some_and(|u| param(&u, "error", true).is_some())
}

fn sub_b(ev: &Bundle) -> SubVerdict {
    let xs: Vec<Exchange<'_>> = ev.exchanges(leg::DEPUTY_CALLBACK).collect();
    let path = |x: &Exchange<'_>| {
        Url::parse(&x.http.request.url)
            .map(|u| u.path().to_string())
            .ok()
    };
    let callback = xs
        .iter()
        .find(|x| path(x).as_deref() == Some(CALLBACK_PATH));
    let control = xs.iter().find(|x| path(x).as_deref() == Some(CONTROL_PATH));
    let Some(cb) = callback else {
        return not_recorded(ev, SUB_B, leg::DEPUTY_CALLBACK);
    };
    let o = |outcome: SubOutcome, note: String| SubVerdict::new(SUB_B, outcome, note);
    if carries_code(cb) {
        return o(
            SubOutcome::Fail,
            crate::format_exact!(
                "the fabricated callback ({}) was answered with a code in Location ({})",
                record_note(cb),
                location(cb)
                    .map(|u| escape_line(u.as_str()))
                    .unwrap_or_default()
            ),
        );
    }
    let Some(s) = cb.status() else {
        return o(
            SubOutcome::Error,
            crate::format_exact!("the fabricated callback drew {}", answer_of(cb)),
        );
    };
    let Some(cs) = control.and_then(|x| x.status()).filter(|c| *c < 500) else {
        return o(
            SubOutcome::Error,
            crate::format_exact!(
                "the control path drew {}, so the callback's HTTP {s} has no baseline",
                control.map_or_else(|| "nothing recorded".into(), answer_of)
            ),
        );
    };
    if s == cs {
        return o(
            SubOutcome::Error,
            crate::format_exact!(
                "the callback path answered HTTP {s} like the control path {CONTROL_PATH}: no callback handler is \
                 observable there"
            ),
        );
    }
    match s {
        300..=399 => o(
            SubOutcome::Pass,
            crate::format_exact!(
                "the fabricated code with an unissued state was redirected (HTTP {s} to {}, {}) without a code",
                location(cb).map_or_else(|| "no Location".into(), |u| escape_line(u.as_str())),
                record_note(cb)
            ),
        ),
        400..=499 if oauth_error(cb) => o(
            SubOutcome::Pass,
            crate::format_exact!(
                "the fabricated code with an unissued state was refused with HTTP {s} and an OAuth error ({}): \"{}\"",
                record_note(cb),
                body_text(cb)
            ),
        ),
        400..=499 => o(
            SubOutcome::Error,
            crate::format_exact!(
                "a bare HTTP {s} without an OAuth error ({}); a gateway answers the same",
                record_note(cb)
            ),
        ),
        200..=299 => o(
            SubOutcome::Fail,
            crate::format_exact!(
                "the fabricated code with a state the server never issued was accepted: HTTP {s} ({}), control HTTP \
                 {cs}",
                record_note(cb)
            ),
        ),
        _ => o(SubOutcome::Error, crate::format_exact!("HTTP {s} ({})", record_note(cb))),
    }
}

fn sub_c(ev: &Bundle, static_id: &str) -> (SubVerdict, Option<String>) {
    let xs: Vec<Exchange<'_>> = ev.exchanges(leg::DEPUTY_CONSENT).collect();
    let reg = xs.iter().find(|x| x.http.request.method == "POST");
    let Some(reg) = reg else {
        return (not_recorded(ev, SUB_C, leg::DEPUTY_CONSENT), None);
    };
    let id = match registered(reg) {
        Registered::Id(id) => id,
        Registered::Refused(why) => {
            return (
                SubVerdict::new(
                    SUB_C,
                    SubOutcome::Unknown,
                    crate::format_exact!("client #3 was not registered: {why}"),
                ),
                None,
            )
        }
        Registered::Failed(why) => return (SubVerdict::new(SUB_C, SubOutcome::Error, why), None),
    };
    let Some(auth) = xs.iter().find(|x| x.http.request.method == "GET") else {
        let mut l = not_recorded(ev, SUB_C, leg::DEPUTY_CONSENT);
        l.note = crate::format_exact!(
            "client #3 ({}) was registered but {}",
            crate::fmt::Line(&id),
            l.note
        );
        return (l, Some(id));
    };
    let leg = match auth.status() {
        None => SubVerdict::new(
            SUB_C,
            SubOutcome::Error,
            crate::format_exact!("the authorization request of client #3 drew {}", answer_of(auth)),
        ),
        Some(s @ 300..=399) => {
            let loc = location(auth);
            let shown = loc.as_ref().map_or_else(|| "no Location".into(), |u| escape_line(u.as_str()));
            if loc
                .as_ref()
                .and_then(|u| param(u, "client_id", false))
                .is_some_and(|c| c == static_id)
            {
                SubVerdict::new(
                    SUB_C,
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "the new client #3 ({}) was handed straight on with the shared client_id {} (HTTP {s} to \
                         {shown}, {}): no consent step for this client id before the upstream authorization server",
                        crate::fmt::Line(&id),
                        crate::fmt::Line(static_id),
                        record_note(auth)
                    ),
                )
            } else {
                SubVerdict::new(
                    SUB_C,
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "the new client #3 ({}) was not handed on with the shared client id: HTTP {s} to {shown} ({})",
                        crate::fmt::Line(&id),
                        record_note(auth)
                    ),
                )
            }
        }
        Some(s @ 200..=299) => SubVerdict::new(
            SUB_C,
            SubOutcome::Pass,
            crate::format_exact!(
                "the new client #3 ({}) got a page on the authorization server itself (HTTP {s}, {})",
                crate::fmt::Line(&id),
                record_note(auth)
            ),
        ),
        Some(s) => SubVerdict::new(
            SUB_C,
            SubOutcome::Error,
            crate::format_exact!(
                "the authorization request of the new client #3 ({}) was answered HTTP {s} ({})",
                crate::fmt::Line(&id),
                record_note(auth)
            ),
        ),
    };
    (leg, Some(id))
}

#[cfg(test)]
mod tests;
