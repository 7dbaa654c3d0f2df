//! Rule `prompt-arguments-validated`: prompt templates declare and validate arguments,
//! graded from every page of `prompts/list` read as raw JSON (an SDK model would coerce
//! `"required": "yes"` to `true`).
//!
//! * a: every declared argument has a non-blank string `name`.
//! * b: `required`, wherever present, is a JSON boolean.
//!
//! * c (live): after a control `prompts/get` that returned messages, the same prompt
//!   without its required argument must be refused with -32602.
//! * d (live): after its own control, a prompt that does not exist must be refused with
//!   -32602 (the reference prober did not require its control to succeed).
//!
//! The live legs' refusal rule is `live::refusal`, a refusal with another code being
//! what the rule's `refusal_with_other_code` says (default: FAIL); the grader re-checks
//! from the inventory that the missing-argument get really left a required argument out
//! and that the unknown name is really not listed.

use mcp_probe_schema::tape::Json;
use serde::Serialize;

use super::live::{self, Probe, Recorded};
use crate::check::{Check, Context, Legs, ParamSpec};
use crate::checks::common::inventory::{decided, gated, no_session, Item, Read, PROMPTS};
use crate::checks::common::refusal::{self, Strictness};
use crate::checks::common::text::{capped, count, kind, non_blank, quote, show_json, SEP};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::derive::RequestParams;
use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;

/// Every leg this rule reads.
const LEGS: &[mcp_probe_schema::vocab::LegId] = &[
    PROMPTS.leg,
    leg::PROMPT_CONTROL,
    leg::PROMPT_MISSING_ARG,
    leg::PROMPT_NAME_CONTROL,
    leg::PROMPT_UNKNOWN,
];

/// Prompt templates declare and validate arguments.
#[derive(Debug)]
pub struct PromptArgumentsValidated;
/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "declarations read as raw JSON (an SDK model would coerce a non-boolean \
     `required`); ",
    crate::here!("c"),
    " and ",
    crate::here!("d"),
    " probe one prompt (the first with a required argument) with placeholder values, \
     so argument validation of the other prompts, of argument values and of argument types is not observed; not \
     probed either: prompt logic that runs only for particular values, per-invocation name logging"
);

/// What a refusal of the gets with a code other than -32602 is (v1.0.0: FAIL, the
/// benchmark names the code).
const STRICTNESS: ParamSpec = refusal::param(Strictness::Fail);

/// What this rule counted, in the report's details (after the inventory's).
#[derive(Serialize)]
struct ArgumentFacts {
    /// Arguments declared across every prompt.
    arguments: usize,
    /// Declarations without a usable name.
    bad_argument_names: usize,
    /// Arguments whose `required` is not a JSON boolean.
    non_boolean_required: usize,
}

/// What this rule found in one prompt's arguments.
#[derive(Default)]
struct Arguments {
    declared: usize,
    required_boolean: usize,
    bad_name: Vec<String>,
    bad_required: Vec<String>,
}

impl Arguments {
    fn read(&mut self, read: &Read, item: &Item) {
        // The prompt's label and an argument's are written only into a finding: an
        // argument that is well formed needs neither.
        let prompt = || read.label(item, "name");
        let value = item.value();
        if !value.is_object() {
            self.bad_name.push(crate::format_exact!(
                "{} is {}, not a prompt object",
                prompt(),
                kind(value)
            ));
            return;
        }
        let args = match value.get("arguments") {
            None => return,
            Some(a) if a.is_array() => a,
            Some(other) => {
                self.bad_name.push(crate::format_exact!(
                    "{} arguments is {} ({}), not an array",
                    prompt(),
                    kind(other),
                    show_json(other)
                ));
                return;
            }
        };
        for (i, arg) in args.items().enumerate() {
            self.declared += 1;
            if !arg.is_object() {
                self.bad_name.push(crate::format_exact!(
                    "{} argument #{} is {}, not an object",
                    prompt(),
                    i + 1,
                    kind(arg)
                ));
                continue;
            }
            let name = non_blank(arg, "name");
            if let Err(why) = &name {
                self.bad_name.push(crate::format_exact!(
                    "{} argument #{}: {why}",
                    prompt(),
                    i + 1
                ));
            }
            match arg.get("required") {
                None => {}
                Some(v) if v.is_boolean() => self.required_boolean += 1,
                Some(v) => {
                    let label = match name {
                        Ok(n) => crate::format_exact!("{} argument {}", prompt(), quote(n)),
                        Err(_) => crate::format_exact!("{} argument #{}", prompt(), i + 1),
                    };
                    self.bad_required.push(crate::format_exact!(
                        "{label}: required is {} ({}), not a JSON boolean",
                        show_json(v),
                        kind(v)
                    ))
                }
            }
        }
    }
}

impl Check for PromptArgumentsValidated {
    fn id(&self) -> &'static str {
        "prompt-arguments-validated"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(LEGS)
    }

    fn params(&self) -> &'static [ParamSpec] {
        &[STRICTNESS]
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        if ev.revision().is_none() {
            return no_session(REDUCTION);
        }
        let strictness = Strictness::of(cx, &STRICTNESS);
        let live = vec![
            missing_argument(ev, strictness),
            unknown_prompt(ev, strictness),
        ];
        let seqs = live::seqs(ev, &LEGS[1..]);
        let read = Read::of(ev, PROMPTS);
        if let Err(gate) = read.gate(ev) {
            let out = gated(&["a", "b"], None, gate, &read, REDUCTION);
            return live::with_live(out, live, seqs);
        }
        let mut args = Arguments::default();
        for item in &read.items {
            args.read(&read, item);
        }
        let prompts = count(read.items.len(), "prompt");
        let a = if !args.bad_name.is_empty() {
            (
                SubOutcome::Fail,
                crate::format_exact!(
                    "{} without a usable name: {}",
                    count(args.bad_name.len(), "declaration"),
                    capped(&args.bad_name, SEP)
                ),
            )
        } else if args.declared == 0 {
            (
                SubOutcome::Pass,
                crate::format_exact!(
                    "no argument is declared ({prompts} read), so none is left unnamed"
                ),
            )
        } else {
            (
                SubOutcome::Pass,
                crate::format_exact!(
                    "every argument has a non-blank name ({} across {prompts})",
                    count(args.declared, "argument")
                ),
            )
        };
        let b = if !args.bad_required.is_empty() {
            (
                SubOutcome::Fail,
                crate::format_exact!(
                    "{} with a non-boolean `required`: {}",
                    count(args.bad_required.len(), "argument"),
                    capped(&args.bad_required, SEP)
                ),
            )
        } else {
            (
                SubOutcome::Pass,
                if args.declared == 0 {
                    crate::format_exact!("no argument is declared ({prompts} read), so there is no `required` to check")
                } else if args.required_boolean == args.declared {
                    crate::format_exact!(
                        "every argument carries a JSON boolean `required` ({})",
                        count(args.declared, "argument")
                    )
                } else {
                    crate::format_exact!(
                        "`required` is a JSON boolean wherever present ({} of {}; the others omit it, which MCP allows)",
                        args.required_boolean,
                        count(args.declared, "argument")
                    )
                },
            )
        };
        let legs = vec![
            SubVerdict::new("a", a.0, a.1),
            SubVerdict::new("b", b.0, b.1),
        ];
        let facts = ArgumentFacts {
            arguments: args.declared,
            bad_argument_names: args.bad_name.len(),
            non_boolean_required: args.bad_required.len(),
        };
        live::with_live(decided(legs, &read, REDUCTION, &facts), live, seqs)
    }
}

/// The name a recorded `prompts/get` asked for, quoted.
fn asked(req: &RequestParams) -> String {
    req.name
        .as_deref()
        .map(quote)
        .unwrap_or_else(|| "(no name)".into())
}

/// Sub-verdict c: the control, then the get without the required argument.
fn missing_argument(ev: &Bundle, strictness: Strictness) -> SubVerdict {
    let g = (|| {
        let ok = live::control(
            ev,
            leg::PROMPT_CONTROL,
            "messages",
            "the control prompts/get",
        )?;
        let (a, req) = match live::recorded(
            ev,
            leg::PROMPT_MISSING_ARG,
            "the get without the required argument",
        ) {
            Recorded::NotSent(g) => return Err(g),
            Recorded::Sent(a, req) => (a, req),
        };
        let name = req.name.as_deref().unwrap_or("");
        let required: Vec<&str> = ev
            .inventory
            .prompts
            .items
            .iter()
            .filter(|p| p.get("name").and_then(Json::as_str) == Some(name))
            .flat_map(|p| p.get("arguments").into_iter().flat_map(Json::items))
            .filter(|x| x.get("required").and_then(Json::as_bool) == Some(true))
            .filter_map(|x| x.get("name").and_then(Json::as_str))
            .collect();
        let left_out = live::left_out(&req, &required);
        if left_out.is_empty() {
            return Err((
                SubOutcome::Error,
                crate::format_exact!(
                    "the recorded get of {} leaves out no argument the listed prompt declares required, so it tests nothing",
                    asked(&req)
                ),
            ));
        }
        let (o, note) = live::refusal(
            &a,
            Probe::MissingArgument,
            ev.revision(),
            ev.authenticated(),
            strictness,
        );
        Ok((
            o,
            crate::format_exact!(
                "{ok}; prompts/get of {} without {}: {note}",
                asked(&req),
                left_out.join(", ")
            ),
        ))
    })();
    let (o, note) = g.unwrap_or_else(|e| e);
    SubVerdict::new("c", o, note)
}

/// Sub-verdict d: its control, then a prompt name that is not listed.
fn unknown_prompt(ev: &Bundle, strictness: Strictness) -> SubVerdict {
    let g = (|| {
        let ok = live::control(
            ev,
            leg::PROMPT_NAME_CONTROL,
            "messages",
            "the control prompts/get",
        )?;
        let (a, req) = match live::recorded(ev, leg::PROMPT_UNKNOWN, "the get of an unknown prompt")
        {
            Recorded::NotSent(g) => return Err(g),
            Recorded::Sent(a, req) => (a, req),
        };
        let name = req.name.as_deref();
        let listed = ev
            .inventory
            .prompts
            .items
            .iter()
            .any(|p| p.get("name").and_then(Json::as_str) == name);
        if name.is_none() || listed {
            return Err((
                SubOutcome::Error,
                crate::format_exact!(
                    "the recorded get asks for {}, a listed prompt or none, so it tests nothing",
                    asked(&req)
                ),
            ));
        }
        let (o, note) = live::refusal(
            &a,
            Probe::UnknownPrompt,
            ev.revision(),
            ev.authenticated(),
            strictness,
        );
        Ok((
            o,
            crate::format_exact!("{ok}; prompts/get of {} (not listed): {note}", asked(&req)),
        ))
    })();
    let (o, note) = g.unwrap_or_else(|e| e);
    SubVerdict::new("d", o, note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::inventory::fixture::{caps, declared, grade, page};
    use crate::fixture::sub as sub_of;
    use crate::fixture::{list_page, skipped};
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::Record;
    use mcp_probe_schema::vocab::{leg, method};
    use serde_json::{json, Value};

    fn prompts_page(id: i64, prompts: Vec<Value>, cursor: Option<&str>) -> Record {
        page(PROMPTS, id, prompts, cursor)
    }

    /// This rule on one complete page listing `prompts`.
    fn graded(prompts: Vec<Value>) -> Outcome {
        grade(
            &PromptArgumentsValidated,
            caps(),
            vec![prompts_page(5, prompts, None)],
        )
    }

    fn prompt(name: &str, args: Value) -> Value {
        json!({"name": name, "arguments": args})
    }

    #[test]
    fn well_declared_arguments_pass() {
        let o = graded(vec![
            prompt(
                "review",
                json!([{"name": "code", "required": true}, {"name": "style"}]),
            ),
            json!({"name": "bare"}),
        ]);
        assert_eq!(declared(&o, &["c", "d"]), Verdict::Pass, "{o:#?}");
        assert!(
            sub_of(&o, "a")
                .note
                .contains("every argument has a non-blank name (2 arguments across 2 prompts)"),
            "{o:#?}"
        );
        assert!(sub_of(&o, "b").note.contains("`required` is a JSON boolean wherever present (1 of 2 arguments; the others omit it"), "{o:#?}");
        assert!(crate::fixture::local(o)
            .reduction
            .contains("c and d probe one prompt"));
    }

    #[test]
    fn inventory_cut_at_the_page_bound_is_unknown_not_pass() {
        // The observed case: well-declared prompts up to the page bound, a bad one past it.
        let good = || prompt("review", json!([{"name": "code", "required": true}]));
        let cut = grade(
            &PromptArgumentsValidated,
            caps(),
            vec![
                prompts_page(5, vec![good()], Some("p2")),
                prompts_page(6, vec![good()], Some("p3")),
                skipped(
                    &[leg::INVENTORY_PROMPTS],
                    "stopped: page bound 2 reached with a nextCursor still pending (--max-pages)",
                ),
            ],
        );
        assert_eq!(cut.verdict, Verdict::Unknown, "{cut:#?}");
        for id in ["a", "b"] {
            let l = sub_of(&cut, id);
            assert_eq!(l.outcome, SubOutcome::Unknown, "{l:?}");
            assert!(
                l.note
                    .contains("prompts/list was cut after page 2 (stopped: page bound 2 reached"),
                "{l:?}"
            );
        }
        assert_eq!(cut.details["inventory_complete"], false);
        // The same pages, read to the end: PASS.
        let whole = grade(
            &PromptArgumentsValidated,
            caps(),
            vec![
                prompts_page(5, vec![good()], Some("p2")),
                prompts_page(6, vec![good()], None),
            ],
        );
        assert_eq!(declared(&whole, &["c", "d"]), Verdict::Pass, "{whole:#?}");
        // A FAIL found before the cut stands.
        let bad = grade(
            &PromptArgumentsValidated,
            caps(),
            vec![
                prompts_page(
                    5,
                    vec![prompt("x", json!([{"name": "a", "required": "yes"}]))],
                    Some("p2"),
                ),
                skipped(
                    &[leg::INVENTORY_PROMPTS],
                    "stopped: page bound 1 reached with a nextCursor still pending (--max-pages)",
                ),
            ],
        );
        assert_eq!(bad.verdict, Verdict::Fail, "{bad:#?}");
    }

    #[test]
    fn required_yes_fails_b_quoting_the_value() {
        let o = graded(vec![prompt(
            "review",
            json!([{"name": "code", "required": "yes"}]),
        )]);
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass);
        let b = &sub_of(&o, "b").note;
        assert!(
            b.contains(
                "`review` argument `code`: required is \"yes\" (a string), not a JSON boolean"
            ),
            "{b}"
        );
    }

    #[test]
    fn blank_or_missing_name_fails_a() {
        let o = graded(vec![prompt(
            "review",
            json!([{"name": ""}, {"required": true}, {"name": 5}, "code"]),
        )]);
        assert_eq!(o.verdict, Verdict::Fail);
        let a = &sub_of(&o, "a").note;
        assert!(a.contains("`review` argument #1: name is blank"), "{a}");
        assert!(a.contains("`review` argument #2: declares no name"), "{a}");
        assert!(
            a.contains("`review` argument #3: name is a number (5), not a string"),
            "{a}"
        );
        assert!(
            a.contains("`review` argument #4 is a string, not an object"),
            "{a}"
        );
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Pass);
    }

    #[test]
    fn reads_every_page() {
        let o = grade(
            &PromptArgumentsValidated,
            caps(),
            vec![
                prompts_page(
                    5,
                    vec![prompt("one", json!([{"name": "a", "required": false}]))],
                    Some("p2"),
                ),
                prompts_page(
                    6,
                    vec![prompt("two", json!([{"name": "b", "required": 1}]))],
                    None,
                ),
            ],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            sub_of(&o, "b")
                .note
                .contains("`two` (page 2) argument `b`: required is 1 (a number)"),
            "{o:#?}"
        );
    }

    #[test]
    fn prompts_not_declared_is_unknown() {
        let o = grade(
            &PromptArgumentsValidated,
            json!({"tools": {}}),
            vec![skipped(
                &[leg::INVENTORY_PROMPTS],
                "not requested: the server did not advertise the \"prompts\" capability",
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence
                .contains("does not declare the \"prompts\" capability"),
            "{}",
            o.evidence
        );
    }

    #[test]
    fn result_without_a_prompts_array_is_unknown() {
        let page = list_page(
            leg::INVENTORY_PROMPTS,
            method::PROMPTS_LIST,
            5,
            json!({"items": []}),
        );
        let o = grade(&PromptArgumentsValidated, caps(), vec![page]);
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence.contains("carries no `prompts` array"),
            "{}",
            o.evidence
        );
    }

    fn get<L: AsRef<str>>(legs: &[L], id: i64, name: &str, args: Value, body: Value) -> Record {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get", "params": {"name": name, "arguments": args}}).to_string();
        let mut body = body;
        body["jsonrpc"] = json!("2.0");
        body["id"] = json!(id);
        crate::fixture::exchange(legs, &req, 200, "application/json", &body.to_string(), &[])
    }

    fn rendered() -> Value {
        json!({"result": {"messages": [{"role": "user", "content": {"type": "text", "text": "Please review"}}]}})
    }

    fn err(code: i64) -> Value {
        json!({"error": {"code": code, "message": "Invalid params"}})
    }

    /// This rule with `review(code)` listed, one control for both legs, then the answers to
    /// the missing-argument and unknown-name gets.
    fn live(control: Value, missing: Value, unknown: Value) -> Outcome {
        live_in(&Context::default(), control, missing, unknown)
    }

    /// [`live`] in the context `cx`.
    fn live_in(cx: &Context<'_>, control: Value, missing: Value, unknown: Value) -> Outcome {
        let review = prompt("review", json!([{"name": "code", "required": true}]));
        crate::checks::common::inventory::fixture::grade_with(
            &PromptArgumentsValidated,
            caps(),
            vec![
                prompts_page(5, vec![review], None),
                get(
                    &[leg::PROMPT_CONTROL, leg::PROMPT_NAME_CONTROL],
                    6,
                    "review",
                    json!({"code": "cis-audit-placeholder"}),
                    control,
                ),
                get(&[leg::PROMPT_MISSING_ARG], 7, "review", json!({}), missing),
                get(
                    &[leg::PROMPT_UNKNOWN],
                    8,
                    "cis-audit-no-such-prompt",
                    json!({}),
                    unknown,
                ),
            ],
            cx,
        )
    }

    #[test]
    fn live_refusals_with_minus_32602_pass() {
        let o = live(rendered(), err(-32602), err(-32602));
        crate::fixture::assert_sub(&o, "c", SubOutcome::Pass, &["without `code`", "-32602"]);
        crate::fixture::assert_sub(
            &o,
            "d",
            SubOutcome::Pass,
            &["`cis-audit-no-such-prompt` (not listed)"],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert_eq!(o.records, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_rendered_prompt_or_the_wrong_code_fails() {
        let o = live(rendered(), rendered(), err(-32603));
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Fail,
            &["rendered without its required argument"],
        );
        crate::fixture::assert_sub(&o, "d", SubOutcome::Fail, &["-32603", "handler broke"]);
        let o = live(rendered(), err(0), rendered());
        crate::fixture::assert_sub(&o, "c", SubOutcome::Fail, &["with 0, not -32602"]);
        crate::fixture::assert_sub(&o, "d", SubOutcome::Fail, &["does not exist"]);
    }

    #[test]
    fn a_definition_may_pass_a_refusal_with_another_code_naming_it() {
        let pass = crate::check::Params(
            [(STRICTNESS.name, crate::check::ParamValue::Text("pass"))].into(),
        );
        let cx = Context {
            params: &pass,
            ..Default::default()
        };
        let o = live_in(&cx, rendered(), err(-32603), err(0));
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Pass,
            &["-32603", "handler broke", "the deviation named"],
        );
        crate::fixture::assert_sub(&o, "d", SubOutcome::Pass, &["with 0 instead of"]);
        let o = live_in(&cx, rendered(), rendered(), err(-32602));
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Fail,
            &["rendered without its required argument"],
        );
    }

    #[test]
    fn the_unknown_prompt_get_needs_its_control_to_have_succeeded() {
        let o = live(err(-32602), err(-32602), err(-32602));
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Unknown,
            &["control prompts/get did not return a non-empty `messages`"],
        );
        crate::fixture::assert_sub(
            &o,
            "d",
            SubOutcome::Unknown,
            &["control prompts/get did not return"],
        );
        assert_eq!(o.verdict, Verdict::Unknown);
    }

    #[test]
    fn without_a_required_argument_is_unknown_and_a_get_naming_a_listed_prompt_tests_nothing() {
        let plain = prompt("plain", json!([{"name": "x"}]));
        let o = grade(
            &PromptArgumentsValidated,
            caps(),
            vec![
                prompts_page(5, vec![plain], None),
                skipped(
                    &[leg::PROMPT_CONTROL, leg::PROMPT_MISSING_ARG],
                    "not sent: no listed prompt declares an argument with `required: true`, so none can be left out",
                ),
                get(&[leg::PROMPT_NAME_CONTROL], 6, "plain", json!({"x": "cis-audit-placeholder"}), rendered()),
                get(&[leg::PROMPT_UNKNOWN], 8, "plain", json!({}), err(-32602)),
            ],
        );
        crate::fixture::assert_sub(&o, "c", SubOutcome::Unknown, &["required: true"]);
        crate::fixture::assert_sub(&o, "d", SubOutcome::Error, &["tests nothing"]);
    }

    /// A dual-era server (2026-07-28, and 2025-11-25 through `initialize`): the
    /// prompt gets on the negotiated session refuse with -32602, those sent again on
    /// the legacy session (`@2025-11-25`) answer the missing argument with -32603.
    /// `legacy` false leaves the legacy legs out: a bundle collected before the live
    /// legs were sent per era.
    fn dual_era(legacy: bool) -> (Outcome, Outcome) {
        use mcp_probe_schema::model::{Era, EraSession};
        const OLD: &str = "2025-11-25";
        let at = |l: mcp_probe_schema::vocab::LegId| format!("{}@{OLD}", l.as_str());
        let review = || prompt("review", json!([{"name": "code", "required": true}]));
        let mut s = crate::fixture::session(Some("2026-07-28"), caps(), None);
        s.other_eras = vec![EraSession {
            era: Era::Legacy,
            revision: OLD.into(),
            server_info: None,
            capabilities: Some(caps()),
            session_id: Some("s-1".into()),
            negotiated_in: 4,
        }];
        let placeholder = || json!({"code": "cis-audit-placeholder"});
        let mut records = vec![
            prompts_page(5, vec![review()], None),
            get(
                &[leg::PROMPT_CONTROL, leg::PROMPT_NAME_CONTROL],
                6,
                "review",
                placeholder(),
                rendered(),
            ),
            get(
                &[leg::PROMPT_MISSING_ARG],
                7,
                "review",
                json!({}),
                err(-32602),
            ),
            get(
                &[leg::PROMPT_UNKNOWN],
                8,
                "cis-audit-no-such-prompt",
                json!({}),
                err(-32602),
            ),
            skipped(
                &[
                    leg::SCHEMA_CALL,
                    leg::TEMPLATE_CONTROL,
                    leg::TEMPLATE_MISSING,
                ],
                "not sent: not part of this test",
            ),
        ];
        if legacy {
            records.extend([
                get(
                    &[at(leg::PROMPT_CONTROL), at(leg::PROMPT_NAME_CONTROL)],
                    9,
                    "review",
                    placeholder(),
                    rendered(),
                ),
                get(
                    &[at(leg::PROMPT_MISSING_ARG)],
                    10,
                    "review",
                    json!({}),
                    err(-32603),
                ),
                get(
                    &[at(leg::PROMPT_UNKNOWN)],
                    11,
                    "cis-audit-no-such-prompt",
                    json!({}),
                    err(-32602),
                ),
            ]);
        }
        let ev = crate::fixture::evidence(Some(s), records);
        let graded = crate::fixture::graded(&ev, "prompt-arguments-validated");
        let alone = crate::fixture::local(crate::preconditions::run_rule(
            &PromptArgumentsValidated,
            &ev,
            &crate::check::Context::default(),
        ));
        (graded, alone)
    }

    #[test]
    fn the_live_gets_are_graded_on_every_era_and_combined_by_the_one_rule() {
        let (o, alone) = dual_era(true);
        // The negotiated session alone passes; the legacy session's -32603 fails it.
        assert_eq!(alone.verdict, Verdict::Pass, "{alone:#?}");
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        crate::fixture::assert_sub(&o, "c@2026-07-28", SubOutcome::Pass, &["-32602"]);
        crate::fixture::assert_sub(&o, "c@2025-11-25", SubOutcome::Fail, &["-32603"]);
        crate::fixture::assert_sub(&o, "d@2025-11-25", SubOutcome::Pass, &[]);
        assert!(
            o.evidence.starts_with("on 2026-07-28: PASS"),
            "{}",
            o.evidence
        );
        assert!(
            o.evidence.contains("| on 2025-11-25: FAIL"),
            "{}",
            o.evidence
        );
        assert_eq!(o.details["eras"][1]["revision"], "2025-11-25");
        assert!(
            o.records.contains(&6) && o.records.contains(&7),
            "{:?}",
            o.records
        );
    }

    #[test]
    fn a_bundle_without_the_per_era_legs_grades_as_before() {
        // other_eras recorded (the auth-before-stream, origin-validated and
        // null-id-rejected families were sent again) but no
        // prompt get on the legacy session: graded on the negotiated era alone, exactly
        // as the runner grades it.
        let (o, alone) = dual_era(false);
        assert_eq!(o.verdict, alone.verdict);
        assert_eq!(o.evidence, alone.evidence);
        assert_eq!(o.details, alone.details);
        let ids = |o: &Outcome| o.subs.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&o), ids(&alone));
        assert!(!ids(&o).iter().any(|l| l.contains('@')), "{:?}", ids(&o));
    }
}
