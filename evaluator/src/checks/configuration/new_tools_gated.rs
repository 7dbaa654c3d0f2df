//! Rule `new-tools-gated`: a capability advertised beyond the baseline is denied until
//! re-approved.
//!
//! The collector calls, with the operator's consent (`tool_calls_authorised: true` and
//! `tool_arguments`), a tool the baseline recorded (the control) and then a tool
//! advertised beyond it (the staged tool), the second only when the first executed
//! cleanly. This grader re-derives everything from the bundle and its own baseline: the
//! tools called must be a control in the baseline and a staged tool outside it, the
//! control must have executed cleanly (else a refusal of the staged tool is not
//! attributable), and the staged tool's answer decides. docs/checks.md states the rules
//! under the row this rule grades.

use std::collections::BTreeSet;

use mcp_probe_schema::model::{Era, HttpOutcome};
use mcp_probe_schema::tape::Json;
use mcp_probe_schema::vocab::leg;
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs};
use crate::checks::common::baseline::{baseline_for, describe_baseline};
use crate::checks::common::text::quote;
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};

/// A capability advertised beyond the baseline is denied until re-approved.
#[derive(Debug)]
pub struct NewToolsGated;

const SUB_A: &str = "a";
const SUB_B: &str = "b";

/// Operator input: consent to execute tools.
pub const INPUT_CONSENT: &str = "tool_calls_authorised";
/// Operator input: tool name → arguments.
pub const INPUT_ARGUMENTS: &str = "tool_arguments";

/// Words of a refusal that names a missing approval (matched case-insensitively).
const DENIAL_WORDS: &[&str] = &[
    "pending",
    "not approved",
    "unapproved",
    "unauthorized",
    "unauthorised",
    "awaiting approval",
    "forbidden",
    "denied",
];

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "tools only (resources and prompts advertised beyond the baseline are not \
     called); the baseline is the probe's own earlier bundle, not a change-control record; a refusal \
     is read from its wording (English words of denial), so a denial worded otherwise stays UNKNOWN; \
     the staged tool is called with the operator's arguments or {}, so a validation failure is not \
     a gate; whether the change was logged and the approval state (",
    crate::here!("b"),
    ") are not reachable"
);

/// The consent the bundle's inputs record, or why there is none.
fn consented(ev: &Bundle) -> Result<(), String> {
    let inputs = ev.payload.run.inputs.as_ref();
    if inputs.and_then(|i| i.get(INPUT_CONSENT)) != Some(&Value::Bool(true)) {
        return Err(crate::format_exact!(
            "no tool was called: {INPUT_CONSENT} is not true in the probe inputs ({row} executes real \
             tools and runs only with the operator's consent, and {INPUT_ARGUMENTS})",
            row = crate::here!("")
        ));
    }
    if !inputs
        .and_then(|i| i.get(INPUT_ARGUMENTS))
        .is_some_and(Value::is_object)
    {
        return Err(crate::format_exact!(
            "no tool was called: {INPUT_CONSENT} is true but the probe inputs give no {INPUT_ARGUMENTS} \
             object"
        ));
    }
    Ok(())
}

fn has_arguments(ev: &Bundle, tool: &str) -> bool {
    ev.payload
        .run
        .inputs
        .as_ref()
        .and_then(|i| i.get(INPUT_ARGUMENTS))
        .and_then(|a| a.get(tool))
        .is_some()
}

/// Tool names of an inventory.
fn tool_names(ev: &Bundle) -> BTreeSet<String> {
    ev.inventory
        .tools
        .items
        .iter()
        .filter_map(|t| t.get("name").and_then(Json::as_str).map(str::to_string))
        .collect()
}

/// The tool a recorded `tools/call` named.
fn called(x: &Exchange<'_>) -> Option<String> {
    x.with_request(|r| r?.get("params")?.get("name")?.as_str().map(str::to_string))
}

/// The first `n` characters of `s`, on one line.
fn quoted(s: &str, n: usize) -> String {
    escape_line(&s.chars().take(n).collect::<String>())
}

/// True when `text` words a denial.
pub fn is_denial(text: &str) -> bool {
    let t = text.to_lowercase();
    DENIAL_WORDS.iter().any(|w| t.contains(w))
}

/// The text of a result's `content` text blocks, joined.
fn content_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// What the call answered, as the rules read it.
enum Answer {
    /// No JSON-RPC answer; says why.
    None(String),
    /// A JSON-RPC error: code and message.
    Error(Option<i64>, String),
    /// A result with `isError: true`, and its text.
    ToolError(String),
    /// A result object that executed.
    Executed,
    /// A `result` that is not an object.
    Malformed,
}

fn answer(x: &Exchange<'_>) -> Answer {
    let at = crate::format_exact!("record #{}", x.seq());
    let status = match &x.http.outcome {
        HttpOutcome::Error(e) => {
            return Answer::None(crate::format_exact!(
                "{at}: {}",
                crate::fmt::Line(&e.message)
            ))
        }
        HttpOutcome::Response(r) => r.status,
    };
    let Some(a) = x.answer() else {
        let why = x
            .cut()
            .map(|c| crate::format_exact!(" ({})", crate::fmt::Line(&c)))
            .unwrap_or_default();
        return Answer::None(crate::format_exact!(
            "{at}: HTTP {status} without a JSON-RPC answer{why}"
        ));
    };
    if let Some(e) = a.get("error") {
        return Answer::Error(
            e.get("code").and_then(Value::as_i64),
            e.get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        );
    }
    match a.get("result") {
        Some(r) if r.is_object() => {
            if r.get("isError").and_then(Value::as_bool) == Some(true) {
                Answer::ToolError(content_text(r))
            } else {
                Answer::Executed
            }
        }
        _ => Answer::Malformed,
    }
}

/// Sub-verdict a, with the two tool names when calls were recorded.
fn sub_a(ev: &Bundle, cx: &Context<'_>) -> (SubVerdict, Option<String>, Option<String>) {
    let unknown = |note: String| {
        (
            SubVerdict::new(SUB_A, SubOutcome::Unknown, note),
            None,
            None,
        )
    };
    if let Err(why) = consented(ev) {
        return unknown(why);
    }
    let now = tool_names(ev);
    let b = match baseline_for(
        ev,
        cx,
        SUB_A,
        &crate::format_exact!("{} tools advertised", now.len()),
    ) {
        Ok(b) => b,
        Err(l) => return (l, None, None),
    };
    let base = tool_names(b);
    let staged_now: Vec<&String> = now.iter().filter(|n| !base.contains(*n)).collect();
    if staged_now.is_empty() {
        return unknown(crate::format_exact!(
            "no tool is advertised beyond the {} ({} advertised, all recorded): nothing to hold \
             pending",
            describe_baseline(b),
            now.len()
        ));
    }
    let Some(cx_call) = ev.exchanges(leg::STAGED_CONTROL).last() else {
        let why = ev
            .skipped(leg::STAGED_CONTROL)
            .map(escape_line)
            .unwrap_or_else(|| "no record".into());
        return unknown(crate::format_exact!(
            "tools advertised beyond the {} ({}), but no control was called ({why})",
            describe_baseline(b),
            staged_now
                .iter()
                .map(|n| quote(n))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let control = called(&cx_call).unwrap_or_default();
    let other = |what: String| {
        unknown(crate::format_exact!(
            "the bundle was collected against another baseline than the {}: {what}; grade it with \
             the baseline the collector used (--baseline)",
            describe_baseline(b)
        ))
    };
    if !base.contains(&control) {
        return other(crate::format_exact!(
            "its control {} is not in it",
            quote(&control)
        ));
    }
    let err = |note: String| {
        let hint = if has_arguments(ev, &control) {
            String::new()
        } else {
            crate::format_exact!(
                "; give arguments for {} in {INPUT_ARGUMENTS} so that it can execute",
                quote(&control)
            )
        };
        SubVerdict::new(
            SUB_A,
            SubOutcome::Error,
            crate::format_exact!(
                "the control {} did not execute cleanly ({note}), so a refusal of the staged tool \
                 would not be attributable{hint}",
                quote(&control)
            ),
        )
    };
    match answer(&cx_call) {
        Answer::Executed => {}
        Answer::None(why) => return (err(why), Some(control), None),
        Answer::Error(code, msg) => {
            return (
                err(crate::format_exact!(
                    "JSON-RPC error {} {}",
                    code.map(|c| c.to_string())
                        .unwrap_or_else(|| "without a code".into()),
                    quoted(&msg, 160)
                )),
                Some(control),
                None,
            )
        }
        Answer::ToolError(t) => {
            return (
                err(crate::format_exact!("isError: {}", quoted(&t, 160))),
                Some(control),
                None,
            )
        }
        Answer::Malformed => {
            return (
                err("a result that is not an object".into()),
                Some(control),
                None,
            )
        }
    }
    let Some(st_call) = ev.exchanges(leg::STAGED_CALL).last() else {
        let why = ev
            .skipped(leg::STAGED_CALL)
            .map(escape_line)
            .unwrap_or_else(|| "no record".into());
        return (
            SubVerdict::new(
                SUB_A,
                SubOutcome::Unknown,
                crate::format_exact!(
                    "the control {} executed cleanly but no staged tool was called ({why})",
                    quote(&control)
                ),
            ),
            Some(control),
            None,
        );
    };
    let staged = called(&st_call).unwrap_or_default();
    if base.contains(&staged) {
        return other(crate::format_exact!(
            "its staged tool {} is in it",
            quote(&staged)
        ));
    }
    let at = crate::format_exact!("record #{}", st_call.seq());
    let tail = crate::format_exact!(
        "(control {} executed cleanly; {})",
        quote(&control),
        describe_baseline(b)
    );
    let leg = |o: SubOutcome, note: String| SubVerdict::new(SUB_A, o, note);
    let l = match answer(&st_call) {
        Answer::None(why) => leg(
            SubOutcome::Error,
            crate::format_exact!("the staged tool {} drew no answer ({why})", quote(&staged)),
        ),
        Answer::Malformed => leg(
            SubOutcome::Error,
            crate::format_exact!(
                "the staged tool {} was answered with a result that is not an object ({at})",
                quote(&staged)
            ),
        ),
        Answer::Executed => leg(
            SubOutcome::Fail,
            crate::format_exact!(
                "the staged tool {}, advertised beyond the baseline, executed ({at}): no approval \
                 gate held it {tail}",
                quote(&staged)
            ),
        ),
        Answer::Error(Some(-32601), msg) => leg(
            SubOutcome::Unknown,
            crate::format_exact!(
                "the staged tool {} did not resolve (-32601 {}, {at}): nothing was tested",
                quote(&staged),
                quoted(&msg, 160)
            ),
        ),
        Answer::Error(Some(-32602), msg) => leg(
            SubOutcome::Unknown,
            crate::format_exact!(
                "the staged tool {} was refused with -32602 {} ({at}): a validation failure (it may \
                 need arguments) is indistinguishable from a gate",
                quote(&staged),
                quoted(&msg, 160)
            ),
        ),
        Answer::Error(_, msg) | Answer::ToolError(msg) if is_denial(&msg) => leg(
            SubOutcome::Pass,
            crate::format_exact!(
                "the staged tool {} was refused as unapproved ({at}): {} {tail}",
                quote(&staged),
                quoted(&msg, 160)
            ),
        ),
        Answer::Error(code, msg) => leg(
            SubOutcome::Unknown,
            crate::format_exact!(
                "the staged tool {} was refused with {} {} ({at}), in words that name no missing \
                 approval",
                quote(&staged),
                code.map(|c| c.to_string())
                    .unwrap_or_else(|| "an error without a code".into()),
                quoted(&msg, 160)
            ),
        ),
        Answer::ToolError(msg) => leg(
            SubOutcome::Unknown,
            crate::format_exact!(
                "the staged tool {} answered isError {} ({at}), in words that name no missing \
                 approval (it may need arguments)",
                quote(&staged),
                quoted(&msg, 160)
            ),
        ),
    };
    (l, Some(control), Some(staged))
}

impl Check for NewToolsGated {
    fn id(&self) -> &'static str {
        "new-tools-gated"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::STAGED_CONTROL, leg::STAGED_CALL],
            &[leg::INVENTORY_TOOLS],
        )
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let (a, control, staged) = sub_a(ev, cx);
        let b = SubVerdict::new(
            SUB_B,
            SubOutcome::Dropped,
            "whether the new capability was logged and held pending approval is in the server's \
             change records, which no client can read",
        );
        let facts = NewToolsGatedFacts {
            legs: leg_outcomes([&a, &b]),
            control_tool: control,
            staged_tool: staged,
            tools_advertised: ev.inventory.tools.items.len(),
        };
        let mut seqs = ev.seqs(leg::STAGED_CONTROL);
        seqs.extend(ev.seqs(leg::STAGED_CALL));
        Outcome::from_subs(vec![a, b], REDUCTION)
            .with_records(seqs)
            .with_facts(&facts)
    }
}

/// The details of `new-tools-gated`, in report order.
#[derive(Debug, Serialize)]
struct NewToolsGatedFacts {
    /// Leg id → outcome.
    legs: Keyed<String, SubOutcome>,
    /// The control tool called, if any.
    control_tool: Option<String>,
    /// The staged tool called, if any.
    staged_tool: Option<String>,
    /// How many tools this run advertised.
    tools_advertised: usize,
}

#[cfg(test)]
mod tests;
