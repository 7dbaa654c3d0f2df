//! Reading the live legs of the runtime rules (`tool-schemas-validated` d,
//! `resource-templates-typed` c, `prompt-arguments-validated` c and d, `path-confinement`
//! a): one recorded request per leg, read with [`crate::checks::common::wire`]; a skip
//! the collector recorded at one of its gates; the positive controls; and the refusal
//! rule shared by `resource-templates-typed` c and `prompt-arguments-validated` c and d.
//!
//! A leg the collector recorded as `not sent: …` was held back at a gate (no operator
//! input, nothing listed to pick, a failed control, no consent): UNKNOWN, since a run
//! with the input or on a server that lists something may decide. Any other skip (a
//! record withheld because it still held a credential) is ERROR: the observation was
//! never made.

use mcp_probe_schema::derive::RequestParams;
use mcp_probe_schema::tape::Json;
use mcp_probe_schema::vocab::{code, LegId, REV_2026_07_28};
use std::borrow::Cow;

use crate::checks::common::refusal::{self, Class, Strictness, Unattributed};
use crate::checks::common::text::{quote, truncate};
use crate::checks::common::wire::{self, refused_at_authentication, Answer, Reply, ResultValue};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};

/// A leg's outcome and note.
pub(super) type Graded = (SubOutcome, String);

/// Of `required`, the names `sent` (a recorded request's arguments) leaves out, quoted.
pub(super) fn left_out(sent: &RequestParams, required: &[&str]) -> Vec<String> {
    required
        .iter()
        .filter(|r| !sent.has_argument(r))
        .map(|r| quote(r))
        .collect()
}

/// A URI as sent, in backticks, control characters escaped, cut at 300 characters.
pub(super) fn uri(u: &str) -> String {
    crate::format_exact!("`{}`", truncate(&escape_line(u), 300))
}

/// `out` (a check's declaration legs, already aggregated) with the live legs after
/// them: verdict combined again (`Outcome::recombine`), their notes appended to the evidence, their
/// records cited.
pub(super) fn with_live(mut out: Outcome, live: Vec<SubVerdict>, records: Vec<u64>) -> Outcome {
    if !live.is_empty() {
        // `<evidence>; <here(id)>: <note>; …`, written into one string of its length (no
        // string per note, no join).
        let len = out.evidence.len()
            + live
                .iter()
                .map(|l| "; ".len() + l.id.len() + 7 + ": ".len() + l.note.len())
                .sum::<usize>();
        let mut evidence = String::with_capacity(len);
        evidence.push_str(&out.evidence);
        for l in &live {
            evidence.push_str("; ");
            crate::refs::push_here(&mut evidence, &l.id);
            evidence.push_str(": ");
            evidence.push_str(&l.note);
        }
        out.evidence = evidence;
    }
    out.subs.extend(live);
    out.recombine();
    out.with_records(records)
}

/// Every record of `legs`.
pub(super) fn seqs(ev: &Bundle, legs: &[LegId]) -> Vec<u64> {
    legs.iter()
        .flat_map(|l| ev.records_for(*l).map(|r| r.seq))
        .collect()
}

/// One live leg as recorded.
pub(super) enum Recorded<'a> {
    /// The request was sent; its answer and what is read of the request's `params`
    /// (borrowed from the bundle's memo; every member `None` for a body that is not
    /// JSON).
    Sent(Box<Answer<'a>>, Cow<'a, RequestParams>),
    /// The leg was recorded as skipped, or no record carries it: the outcome and note.
    NotSent(Graded),
}

/// The last exchange of `leg`, or why nothing was sent.
fn sent<'a>(ev: &'a Bundle, leg: LegId, what: &str) -> Result<Exchange<'a>, Graded> {
    match wire::last(ev, leg) {
        Some(Ok(x)) => Ok(x),
        Some(Err(reason)) => Err(skipped(what, &reason)),
        None => Err((
            SubOutcome::Error,
            crate::format_exact!("{what}: no record of leg {leg} is in the bundle"),
        )),
    }
}

/// The last record of `leg`: the answer and the request body, or why nothing was sent.
pub(super) fn recorded<'a>(ev: &'a Bundle, leg: LegId, what: &str) -> Recorded<'a> {
    match sent(ev, leg, what) {
        Ok(x) => Recorded::Sent(
            Box::new(wire::read(&x)),
            x.request_params()
                .unwrap_or(Cow::Owned(RequestParams::default())),
        ),
        Err(g) => Recorded::NotSent(g),
    }
}

/// A leg the collector did not send: UNKNOWN at one of its gates, ERROR otherwise.
pub(super) fn skipped(what: &str, reason: &str) -> Graded {
    // Escaping leaves the start `not sent:` as it is (and makes no text start so that
    // did not): the reason is escaped only as it is written.
    let starts = reason.starts_with("not sent:");
    let reason = crate::fmt::Line(reason);
    if starts {
        (
            SubOutcome::Unknown,
            crate::format_exact!("{what} was {reason}"),
        )
    } else {
        (
            SubOutcome::Error,
            crate::format_exact!(
                "{what} was not recorded ({reason}): the observation was never made"
            ),
        )
    }
}

/// The answer's result, when it is one.
pub(super) fn result<'b, 'a>(a: &'b Answer<'a>) -> Option<&'b ResultValue<'a>> {
    match &a.reply {
        Reply::Result(r) => Some(r),
        _ => None,
    }
}

/// The number of items of a result's `key` array, when it is one (read from the
/// result's outline, without building the result).
pub(super) fn items(a: &Answer, key: &str) -> Option<usize> {
    match &a.reply {
        Reply::Result(r) => r.array_len(key),
        _ => None,
    }
}

/// A positive control: `Ok(note)` when the answer's result carries a non-empty `key`
/// array, else UNKNOWN (a refusal after a failed control proves nothing), or ERROR when
/// the control got no response.
pub(super) fn control(ev: &Bundle, leg: LegId, key: &str, what: &str) -> Result<String, Graded> {
    // The control's answer alone is read: its request body is not parsed.
    match sent(ev, leg, what) {
        Err(g) => Err(g),
        Ok(x) => {
            let a = wire::read(&x);
            match items(&a, key) {
                Some(n) if n > 0 => Ok(crate::format_exact!(
                    "{what} returned {n} item{} of `{key}`",
                    if n == 1 { "" } else { "s" }
                )),
                _ => {
                    let outcome = match a.reply {
                        Reply::NoResponse(_) => SubOutcome::Error,
                        _ => SubOutcome::Unknown,
                    };
                    Err((
                        outcome,
                        crate::format_exact!(
                            "{what} did not return a non-empty `{key}` ({}), so what follows cannot be told from a \
                             broken {}",
                            a.summary(),
                            if key == "contents" { "read" } else { "get" }
                        ),
                    ))
                }
            }
        }
    }
}

/// What the refused request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Probe {
    /// `resources/read` of a made-up template instance (`resource-templates-typed` c).
    MissingResource,
    /// `prompts/get` without a required argument (`prompt-arguments-validated` c).
    MissingArgument,
    /// `prompts/get` of an unknown prompt (`prompt-arguments-validated` d).
    UnknownPrompt,
}

/// The first text of a result's `contents` or `content` items, for evidence.
pub(super) fn first_text(r: &ResultValue<'_>) -> Option<String> {
    r.with_json(first_text_in)
}

/// [`first_text`] of a result read.
fn first_text_in(r: Json<'_>) -> Option<String> {
    ["contents", "content", "messages"].iter().find_map(|k| {
        r.get(k).filter(|a| a.is_array())?.items().find_map(|c| {
            c.get("text")
                .or_else(|| c.get("content").and_then(|x| x.get("text")))
                .and_then(Json::as_str)
                .map(|t| quote(&truncate(t, 80)))
        })
    })
}

/// The refusal rule of `resource-templates-typed` (c) and `prompt-arguments-validated`
/// (c, d): the benchmark requires -32602, and the answer is read by the one classifier
/// ([`refusal::classify`]) and judged by its table, under the rule's `strictness`.
///
/// -32602 → pass; -32002 for a missing resource → pass on a revision before
/// 2026-07-28 (that revision's own code, so required there), another code on 2026-07-28
/// (retired there, which requires -32602); -32020/-32021/-32022 (2026-07-28 header or
/// version validation) → unknown, a refusal that answers another question; any other
/// code, or an error without an integer code → the strictness (v1.0.0: fail, refused but
/// not with -32602: -32603 says the handler broke on the input instead of validating
/// it); HTTP 401/403 → unknown; a result → fail, except a made-up template instance that
/// came back with contents → unknown (a template may legitimately generate content for
/// any value); an empty 2xx or an answerless stream → error here (the table reads them
/// as acceptances; these probes ask for content, so an answer without any is not read
/// as one), as is a bare answer or no response.
pub(super) fn refusal(
    a: &Answer,
    probe: Probe,
    revision: Option<&str>,
    authenticated: bool,
    strictness: Strictness,
) -> Graded {
    let legacy_not_found = probe == Probe::MissingResource && revision != Some(REV_2026_07_28);
    let required: &[i64] = if legacy_not_found {
        &[code::INVALID_PARAMS, RESOURCE_NOT_FOUND]
    } else {
        &[code::INVALID_PARAMS]
    };
    let class = refusal::classify(a, required);
    let outcome = class.judged(strictness);
    let said = a.summary();
    let unattributed = || {
        (
            SubOutcome::Error,
            crate::format_exact!("{said}: no JSON-RPC answer attributable to the server"),
        )
    };
    match class {
        Class::NotAttributable(Unattributed::Authentication) => {
            refused_at_authentication(a, authenticated, "so the question was never reached")
                .unwrap_or_else(unattributed)
        }
        Class::NotAttributable(_) | Class::HttpOnly(_) => unattributed(),
        Class::Required(RESOURCE_NOT_FOUND) => (
            outcome,
            crate::format_exact!(
                "{said}: refused with -32002, the code {} defines for a missing resource",
                revision.map(escape_line).unwrap_or_else(|| "this revision".into())
            ),
        ),
        Class::Required(_) => (outcome, crate::format_exact!("{said}: refused with -32602")),
        Class::OtherCode(Some(RESOURCE_NOT_FOUND)) if probe == Probe::MissingResource => (
            outcome,
            match strictness {
                Strictness::Fail => crate::format_exact!(
                    "{said}: -32002 is retired in 2026-07-28, which requires -32602 for a missing resource"
                ),
                Strictness::Pass => crate::format_exact!(
                    "{said}: refused with -32002, retired in 2026-07-28, which requires -32602 for a missing \
                     resource; a refusal is still a refusal, the deviation named"
                ),
            },
        ),
        Class::OtherCode(Some(c)) if code::is_modern_rejection(c) => (
            SubOutcome::Unknown,
            crate::format_exact!("{said}: refused by 2026-07-28 header or version validation, which answers another question"),
        ),
        Class::OtherCode(c) => {
            let with = c.map_or_else(|| "without an integer code".to_string(), |c| crate::format_exact!("with {c}"));
            let internal = if c == Some(-32603) {
                " (an internal error: the handler broke on the input instead of validating it)"
            } else {
                ""
            };
            let note = match strictness {
                Strictness::Fail => {
                    crate::format_exact!("{said}: refused, but {with}, not -32602 as the benchmark requires{internal}")
                }
                Strictness::Pass => crate::format_exact!(
                    "{said}: refused {with} instead of the -32602 the benchmark requires{internal}; a refusal \
                     is still a refusal, the deviation named"
                ),
            };
            (outcome, note)
        }
        Class::Accepted => match &a.reply {
            Reply::Result(r) => accepted(r, probe, &said),
            _ => unattributed(),
        },
    }
}

/// The -32002 (resource not found) of revisions before 2026-07-28.
const RESOURCE_NOT_FOUND: i64 = -32002;

/// A result answering a request that must be refused. The length of its `contents`
/// is read from the result's outline ([`ResultValue::array_len`]); the result is built
/// whole only for the text it quotes.
fn accepted(r: &ResultValue<'_>, probe: Probe, said: &str) -> Graded {
    match probe {
        Probe::MissingResource => match r.array_len("contents") {
            Some(n) if n > 0 => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{said} ({} item{}{}): the template generated content for a value that names no stored \
                     resource; a template may legitimately produce content for any value, so whether the \
                     resource \"does not exist\" is not observable",
                    n,
                    if n == 1 { "" } else { "s" },
                    first_text(r).map(|t| crate::format_exact!(", first text {t}")).unwrap_or_default()
                ),
            ),
            Some(_) => (
                SubOutcome::Fail,
                crate::format_exact!("{said} with an empty `contents`: not a rejection (2026-07-28 forbids an empty list standing in for \"not found\")"),
            ),
            None => (
                SubOutcome::Fail,
                crate::format_exact!("{said} without `contents`: accepted, not rejected with -32602"),
            ),
        },
        Probe::MissingArgument => (
            SubOutcome::Fail,
            crate::format_exact!(
                "{said}: the prompt was rendered without its required argument{}",
                first_text(r).map(|t| crate::format_exact!(" (first text {t})")).unwrap_or_default()
            ),
        ),
        Probe::UnknownPrompt => (
            SubOutcome::Fail,
            crate::format_exact!("{said}: a prompt that does not exist was answered with a result"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::wire::RpcError;
    use mcp_probe_schema::tape::Tape;
    use serde_json::Value;

    /// [`first_text`] of a result built whole.
    fn first_text_of(r: &Value) -> Option<String> {
        first_text_in(Tape::from_value(r).root())
    }

    fn answer(status: u16, reply: Reply) -> Answer {
        Answer {
            status: Some(status),
            status_label: wire::StatusLabel::Given(
                format!("HTTP {status} (application/json)").into(),
            ),
            reply,
            seq: 3,
        }
    }

    /// `accepted` as it read the result built whole, the reference for the outline's
    /// `contents` length.
    fn accepted_by_value(r: &Value, probe: Probe, said: &str) -> Graded {
        match probe {
            Probe::MissingResource => match r.get("contents").and_then(Value::as_array) {
                Some(c) if !c.is_empty() => (
                    SubOutcome::Unknown,
                    format!(
                        "{said} ({} item{}{}): the template generated content for a value that names no stored \
                         resource; a template may legitimately produce content for any value, so whether the \
                         resource \"does not exist\" is not observable",
                        c.len(),
                        if c.len() == 1 { "" } else { "s" },
                        first_text_of(r).map(|t| format!(", first text {t}")).unwrap_or_default()
                    ),
                ),
                Some(_) => (
                    SubOutcome::Fail,
                    format!("{said} with an empty `contents`: not a rejection (2026-07-28 forbids an empty list standing in for \"not found\")"),
                ),
                None => (
                    SubOutcome::Fail,
                    format!("{said} without `contents`: accepted, not rejected with -32602"),
                ),
            },
            Probe::MissingArgument => (
                SubOutcome::Fail,
                format!(
                    "{said}: the prompt was rendered without its required argument{}",
                    first_text_of(r).map(|t| format!(" (first text {t})")).unwrap_or_default()
                ),
            ),
            Probe::UnknownPrompt => (
                SubOutcome::Fail,
                format!("{said}: a prompt that does not exist was answered with a result"),
            ),
        }
    }

    /// Results read from recorded bodies (scanned, so outlined by the body scan; some
    /// hostile: repeated names, a `contents` that is no array, escaped names, deep
    /// nesting, a body that is not UTF-8): what `accepted` says from the outline is what
    /// it said from the result built whole.
    #[test]
    fn an_accepted_result_reads_as_it_did_built_whole() {
        use crate::fixture::{evidence, exchange};
        use mcp_probe_schema::vocab::leg;
        let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
        let long = "x".repeat(100_000);
        let results = [
            r#"{"contents":[{"text":"root:x:0:0"}]}"#.to_string(),
            r#"{"contents":[]}"#.to_string(),
            r#"{"contents":{}}"#.to_string(),
            r#"{}"#.to_string(),
            r#"{"contents":[{"uri":"a"},{"blob":"aGk="}],"content":[{"text":"t"}]}"#.to_string(),
            r#"{"contents":[1,2],"contents":[]}"#.to_string(),
            r#"{"contents":[],"contents":[{"text":"later"}]}"#.to_string(),
            r#"{"contents":[{"text":"a"}],"contents":null}"#.to_string(),
            r#"{"cont\u0065nts":[{"text":"escaped name"}]}"#.to_string(),
            r#"{"contents":[{"text":"\u00e9\n"}],"messages":[{"content":{"text":"m"}}]}"#
                .to_string(),
            format!(r#"{{"contents":[{{"text":"{long}"}}]}}"#),
            format!(r#"{{"contents":[{deep}]}}"#),
            r#"{"contents":[{"text":"1e400"}],"n":1e400}"#.to_string(),
            r#"{"messages":[{"content":{"text":"only messages"}}],"contents":[{"text":7}]}"#
                .to_string(),
        ];
        let mut bodies: Vec<Vec<u8>> = results
            .iter()
            .map(|r| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{r}}}"#).into_bytes())
            .collect();
        let mut bad = br#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"text":""#.to_vec();
        bad.extend_from_slice(&[0xff, 0xfe]);
        bad.extend_from_slice(br#""}]}}"#);
        bodies.push(bad);
        let mut read = 0;
        for body in &bodies {
            let text = String::from_utf8_lossy(body);
            let mut r = exchange(
                &[leg::TRAVERSAL_CONTROL],
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/read"}"#,
                200,
                "application/json",
                &text,
                &[],
            );
            if let mcp_probe_schema::model::Observation::Http(x) = &mut r.observation {
                if let mcp_probe_schema::model::HttpOutcome::Response(resp) = &mut x.outcome {
                    resp.body.bytes = body.clone();
                    resp.body.length = body.len() as u64;
                }
            }
            let ev = evidence(None, vec![r]);
            let Some(x) = ev.exchanges(leg::TRAVERSAL_CONTROL).last() else {
                panic!("no exchange");
            };
            let a = wire::read(&x);
            let Reply::Result(res) = &a.reply else {
                continue;
            };
            read += 1;
            // What `path-confinement` reads of the outline too.
            assert_eq!(
                res.array_len("contents"),
                res.get("contents").and_then(Value::as_array).map(Vec::len),
                "{text}"
            );
            for probe in [
                Probe::MissingResource,
                Probe::MissingArgument,
                Probe::UnknownPrompt,
            ] {
                assert_eq!(
                    accepted(res, probe, "said"),
                    accepted_by_value(res, probe, "said"),
                    "{text}"
                );
            }
        }
        assert!(read >= 12, "only {read} results read");
    }

    fn error(code: Option<i64>, message: &str) -> Reply<'static> {
        Reply::Error(RpcError {
            code,
            message: message.into(),
            data: None,
            foreign_id: None,
        })
    }

    #[test]
    fn refusal_codes() {
        let legacy = Some("2025-11-25");
        let modern = Some(REV_2026_07_28);
        let g =
            |a: Answer, p: Probe, rev: Option<&str>| refusal(&a, p, rev, false, Strictness::Fail);
        let cases = [
            (
                error(Some(-32602), "Unknown prompt"),
                Probe::UnknownPrompt,
                legacy,
                SubOutcome::Pass,
            ),
            (
                error(Some(-32002), "not found"),
                Probe::MissingResource,
                legacy,
                SubOutcome::Pass,
            ),
            (
                error(Some(-32002), "not found"),
                Probe::MissingResource,
                modern,
                SubOutcome::Fail,
            ),
            (
                error(Some(-32002), "x"),
                Probe::UnknownPrompt,
                legacy,
                SubOutcome::Fail,
            ),
            (
                error(Some(-32603), "Internal server error"),
                Probe::MissingArgument,
                modern,
                SubOutcome::Fail,
            ),
            (
                error(Some(0), "Missing required arguments"),
                Probe::MissingArgument,
                legacy,
                SubOutcome::Fail,
            ),
            (
                error(None, "no code"),
                Probe::UnknownPrompt,
                legacy,
                SubOutcome::Fail,
            ),
            (
                error(Some(-32020), "Header mismatch"),
                Probe::UnknownPrompt,
                modern,
                SubOutcome::Unknown,
            ),
        ];
        for (reply, p, rev, want) in cases {
            let (o, note) = g(answer(200, reply.clone()), p, rev);
            assert_eq!(o, want, "{reply:?} {p:?} {rev:?}: {note}");
        }
        let (_, note) = g(
            answer(200, error(Some(-32603), "Internal server error")),
            Probe::MissingArgument,
            modern,
        );
        assert!(note.contains("handler broke"), "{note}");
        let (o, _) = g(
            answer(401, error(Some(-32602), "x")),
            Probe::UnknownPrompt,
            legacy,
        );
        assert_eq!(o, SubOutcome::Unknown);
    }

    #[test]
    fn a_lenient_rule_passes_another_code_naming_it_and_nothing_else_moves() {
        let legacy = Some("2025-11-25");
        let modern = Some(REV_2026_07_28);
        let both = |reply: Reply, p: Probe, rev: Option<&str>| {
            let a = answer(200, reply);
            (
                refusal(&a, p, rev, false, Strictness::Fail),
                refusal(&a, p, rev, false, Strictness::Pass),
            )
        };
        for (reply, p, rev) in [
            (error(Some(-32603), "boom"), Probe::MissingArgument, legacy),
            (error(None, "no code"), Probe::UnknownPrompt, legacy),
            (error(Some(-32002), "gone"), Probe::MissingResource, modern),
        ] {
            let ((strict, _), (lenient, note)) = both(reply, p, rev);
            assert_eq!(strict, SubOutcome::Fail);
            assert_eq!(lenient, SubOutcome::Pass, "{note}");
            assert!(note.contains("the deviation named"), "{note}");
        }
        for (reply, p) in [
            (error(Some(-32602), "x"), Probe::UnknownPrompt),
            (error(Some(-32020), "Header mismatch"), Probe::UnknownPrompt),
            (
                Reply::Result(serde_json::json!({}).into()),
                Probe::MissingResource,
            ),
            (Reply::Empty, Probe::UnknownPrompt),
        ] {
            let (strict, lenient) = both(reply, p, modern);
            assert_eq!(strict, lenient);
        }
    }

    #[test]
    fn results_fail_except_generated_template_content() {
        let g = |r: Value, p: Probe| {
            refusal(
                &answer(200, Reply::Result(r.into())),
                p,
                Some("2025-11-25"),
                false,
                Strictness::Fail,
            )
        };
        let (o, note) = g(
            serde_json::json!({"contents": [{"uri": "greeting://x", "text": "Hello, x!"}]}),
            Probe::MissingResource,
        );
        assert_eq!(o, SubOutcome::Unknown, "{note}");
        assert!(note.contains("`Hello, x!`"), "{note}");
        assert_eq!(
            g(serde_json::json!({"contents": []}), Probe::MissingResource).0,
            SubOutcome::Fail
        );
        assert_eq!(
            g(serde_json::json!({}), Probe::MissingResource).0,
            SubOutcome::Fail
        );
        let (o, note) = g(
            serde_json::json!({"messages": [{"role": "user", "content": {"type": "text", "text": "{}"}}]}),
            Probe::MissingArgument,
        );
        assert_eq!(o, SubOutcome::Fail);
        assert!(
            note.contains("without its required argument (first text `{}`)"),
            "{note}"
        );
        assert_eq!(
            g(serde_json::json!({"messages": []}), Probe::UnknownPrompt).0,
            SubOutcome::Fail
        );
        for r in [
            Reply::Empty,
            Reply::StreamWithoutAnswer,
            Reply::Bare("html".into()),
            Reply::NoResponse("reset".into()),
        ] {
            assert_eq!(
                refusal(
                    &answer(200, r),
                    Probe::UnknownPrompt,
                    None,
                    false,
                    Strictness::Fail
                )
                .0,
                SubOutcome::Error
            );
        }
    }

    #[test]
    fn gate_skips_are_unknown_and_withheld_records_error() {
        assert_eq!(
            skipped("the get of an unknown prompt", "not sent: no prompt to get").0,
            SubOutcome::Unknown
        );
        assert_eq!(
            skipped(
                "the get of an unknown prompt",
                "withheld: the HTTP record of this leg still held a credential"
            )
            .0,
            SubOutcome::Error
        );
    }
}
