//! Rule `path-confinement`: path traversal and arbitrary filesystem access prevented,
//! graded from the `resources/read` legs the collector sends only with the operator's
//! consent (`traversal_authorised: true`): a control read (sub-verdict `a.control`), then
//! the control URI climbing with `../` to `etc/passwd` (`a.unix`) and `windows/win.ini`
//! (`a.windows`), and with `..%2F` to `etc/passwd` (`a.encoded`).
//!
//! Rules per traversal leg: contents carrying a marker of the target file that the
//! control's contents do not carry → FAIL (the URI as sent and the matching line are
//! quoted); a JSON-RPC error or an empty `contents` → PASS; contents without a marker →
//! UNKNOWN (dot-segment removal may map the URI onto an in-root resource); a refusal
//! that carries no JSON-RPC answer (an HTML 403 from a WAF or front), HTTP 401, or no
//! `contents` → UNKNOWN: the server itself was not seen refusing; no response → ERROR.
//! Any JSON-RPC error refuses here (the recommendation names no code), so the refusal
//! classifier's strictness (`checks::common::refusal`) has nothing to decide.
//! A control that returned no contents leaves the check UNKNOWN (the collector then
//! sends no traversal). A leg skipped at a collector gate (no consent, no control URI,
//! a control URI without a path to escape) is UNKNOWN, never PASS.

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};

use super::live::{self, Recorded};
use crate::check::{Check, Context, Legs};
use crate::checks::common::text::{quote, truncate};
use crate::checks::common::wire::{AnswerFacts, Reply, ResultValue};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};
use mcp_probe_schema::model::Era;
use mcp_probe_schema::tape::Json;
use mcp_probe_schema::vocab::{family, leg, LegId};

/// Path traversal and arbitrary filesystem access prevented.
#[derive(Debug)]
pub struct PathConfinement;
/// What this rule cannot reach.
const REDUCTION: &str = "one resource URI (the control) is probed, through resources/read only: other \
     resources and templates, path-taking tools (never called: they may have side effects), symlinks inside the \
     root (testing them needs a filesystem write) and how the server canonicalises (only its answer is seen) are \
     not observed; a server that refuses these three URIs may still be reachable through another spelling";

/// The probe input naming the control URI.
const INPUT_CONTROL: &str = "traversal_control_uri";

/// Markers of `etc/passwd`.
const UNIX_MARKERS: [&str; 4] = ["root:", "/bin/", "/usr/bin/", "nologin"];
/// Markers of `windows/win.ini` (compared case-insensitively).
const WINDOWS_MARKERS: [&str; 4] = [
    "[fonts]",
    "[extensions]",
    "[mci extensions]",
    "for 16-bit app support",
];

/// This rule's details.
#[derive(Serialize)]
struct TraversalFacts {
    /// The control URI, when a control was sent.
    control_uri: Option<String>,
    /// `operator` (traversal_control_uri) or `derived` (the first listed resource).
    control_origin: Option<&'static str>,
    /// Per traversal leg sent: its URI and the answer's status and code.
    probes: Map<String, Value>,
}

impl Check for PathConfinement {
    fn id(&self) -> &'static str {
        "path-confinement"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&family::TRAVERSAL)
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let seqs = live::seqs(ev, &family::TRAVERSAL);
        let mut facts = TraversalFacts {
            control_uri: None,
            control_origin: None,
            probes: Map::new(),
        };
        let what = crate::format_exact!("{} (control and traversal)", crate::refs::here("a"));
        let control = match live::recorded(ev, leg::TRAVERSAL_CONTROL, &what) {
            Recorded::NotSent(g) => {
                return done(vec![SubVerdict::new("a", g.0, g.1)], seqs, &facts);
            }
            Recorded::Sent(a, req) => (a, req),
        };
        let uri = control.1.uri.clone().unwrap_or_default();
        let operator = ev
            .payload
            .run
            .inputs
            .as_ref()
            .and_then(|i| i.get(INPUT_CONTROL))
            .and_then(Value::as_str)
            == Some(uri.as_str());
        let origin = if operator { "operator" } else { "derived" };
        facts.control_uri = Some(uri.clone());
        facts.control_origin = Some(origin);
        let what = crate::format_exact!(
            "the control resources/read of {} ({})",
            live::uri(&uri),
            if operator {
                "the operator's traversal_control_uri"
            } else {
                "derived from the first listed resource"
            }
        );
        let control_texts = match live::items(&control.0, "contents") {
            Some(n) if n > 0 => texts(live::result(&control.0)),
            _ => {
                let g = live::control(ev, leg::TRAVERSAL_CONTROL, "contents", &what)
                    .err()
                    .unwrap_or((SubOutcome::Unknown, what.clone()));
                return done(vec![SubVerdict::new("a.control", g.0, g.1)], seqs, &facts);
            }
        };
        let mut legs = vec![SubVerdict::new(
            "a.control",
            SubOutcome::Observed,
            crate::format_exact!(
                "{what} returned {}",
                crate::checks::common::text::count(
                    live::items(&control.0, "contents").unwrap_or(0),
                    "content item"
                )
            ),
        )];
        for (l, id, markers) in [
            (leg::TRAVERSAL_UNIX, "a.unix", &UNIX_MARKERS),
            (leg::TRAVERSAL_WINDOWS, "a.windows", &WINDOWS_MARKERS),
            (leg::TRAVERSAL_ENCODED, "a.encoded", &UNIX_MARKERS),
        ] {
            let (o, note) = traversal(ev, l, markers, &control_texts, &mut facts.probes);
            legs.push(SubVerdict::new(id, o, note));
        }
        done(legs, seqs, &facts)
    }
}

/// The outcome of `legs`.
fn done(legs: Vec<SubVerdict>, seqs: Vec<u64>, facts: &TraversalFacts) -> Outcome {
    let mut out = Outcome::from_subs(legs, REDUCTION)
        .with_records(seqs)
        .with_facts(facts);
    if out.verdict == Verdict::Pass {
        out.evidence
            .push_str("; the server refused every traversal URI");
    }
    out
}

/// Every text of a result's `contents` (text, or a blob decoded from base64).
fn texts(result: Option<&ResultValue<'_>>) -> Vec<String> {
    result.map(|r| r.with_json(texts_in)).unwrap_or_default()
}

/// [`texts`] of a result read.
fn texts_in(result: Json<'_>) -> Vec<String> {
    result
        .get("contents")
        .into_iter()
        .flat_map(Json::items)
        .filter_map(|c| {
            match (
                c.get("text").and_then(Json::as_str),
                c.get("blob").and_then(Json::as_str),
            ) {
                (Some(t), _) => Some(t.to_owned()),
                (_, Some(b)) => base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .ok()
                    .map(|d| String::from_utf8_lossy(&d).into_owned()),
                _ => None,
            }
        })
        .collect()
}

/// The first line of `texts` holding a marker that no control text holds, with it.
fn marked<'a>(
    texts: &[String],
    markers: &[&'a str],
    control: &[String],
) -> Option<(&'a str, String)> {
    let lower_control: Vec<String> = control.iter().map(|t| t.to_lowercase()).collect();
    for t in texts {
        for l in t.lines() {
            let lower = l.to_lowercase();
            for m in markers {
                if lower.contains(m) && !lower_control.iter().any(|c| c.contains(m)) {
                    return Some((m, l.to_string()));
                }
            }
        }
    }
    None
}

/// One traversal leg.
fn traversal(
    ev: &Bundle,
    l: LegId,
    markers: &[&str],
    control: &[String],
    probes: &mut Map<String, Value>,
) -> live::Graded {
    let (a, req) = match live::recorded(ev, l, "the traversal read") {
        Recorded::NotSent(g) => return g,
        Recorded::Sent(a, req) => (a, req),
    };
    let uri = req.uri.as_deref().unwrap_or("");
    let facts = AnswerFacts {
        http_status: a.status,
        code: a.code(),
    };
    probes.insert(
        l.to_string(),
        serde_json::json!({"uri": uri, "http_status": facts.http_status, "code": facts.code}),
    );
    let climbs = uri.contains("../") || uri.to_ascii_lowercase().contains("..%2f");
    if !climbs {
        return (
            SubOutcome::Error,
            crate::format_exact!(
                "the recorded read of {} climbs no directory, so it tests nothing",
                live::uri(uri)
            ),
        );
    }
    let sent = crate::format_exact!("resources/read of {} (sent as is)", live::uri(uri));
    let said = a.summary();
    if a.status == Some(401) {
        return (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{sent}: {said}: refused at authentication, so the path was never judged"
            ),
        );
    }
    match &a.reply {
        Reply::NoResponse(_) => (SubOutcome::Error, crate::format_exact!("{sent}: {said}: the observation was never made")),
        Reply::Error(_) => (SubOutcome::Pass, crate::format_exact!("{sent}: {said}: refused")),
        // The length of `contents` read from the result's outline: the result is built
        // whole only for the texts of a non-empty one.
        Reply::Result(r) => match r.array_len("contents") {
            Some(0) => (SubOutcome::Pass, crate::format_exact!("{sent}: {said} with an empty `contents`: nothing served")),
            Some(_) => match marked(&texts(Some(r)), markers, control) {
                Some((m, line)) => (
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{sent}: {said} whose contents carry {m:?}, a marker of the target file absent from the \
                         control: {}",
                        quote(&truncate(line.trim(), 120))
                    ),
                ),
                None => (
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "{sent}: {said} with contents carrying no marker of the target file{}: dot-segment removal \
                         may have mapped the URI onto a resource inside the root",
                        live::first_text(r).map(|t| crate::format_exact!(" (first text {t})")).unwrap_or_default()
                    ),
                ),
            },
            None => (SubOutcome::Unknown, crate::format_exact!("{sent}: {said} without `contents`")),
        },
        Reply::Bare(_) => (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{sent}: {said}: no JSON-RPC answer (a WAF or front may refuse such a URI before the server), so \
                 whether the server itself would serve it is not observed"
            ),
        ),
        Reply::Empty | Reply::StreamWithoutAnswer => (
            SubOutcome::Unknown,
            crate::format_exact!("{sent}: {said}: no JSON-RPC answer to judge"),
        ),
    }
}

#[cfg(test)]
mod tests;
