//! Rule `resource-templates-typed`: resource templates with explicit URI patterns and
//! MIME types, graded from every page of `resources/templates/list` read as raw JSON (a
//! lenient model would drop a null `uriTemplate`).
//!
//! * a: every template declares a non-blank string `uriTemplate`.
//! * b: every template declares a non-blank string `mimeType` (stricter than base MCP,
//!   where it is optional).
//!
//! * c (live): after a control `resources/read` of the first listed resource that
//!   returned contents, a read of the first template with its first `{…}` set to
//!   `cis-audit-no-such-value` must be refused with -32602 (-32002 before 2026-07-28).
//!   Contents for that instance are UNKNOWN, not FAIL: a template may generate content
//!   for any value (`greeting://{name}`), and from outside a generated resource cannot be
//!   told from a stored one. The rule is `live::refusal`; a refusal with another code is
//!   what the rule's `refusal_with_other_code` says (default: FAIL).

use serde::Serialize;

use super::live::{self, Probe, Recorded};
use crate::check::{Check, Context, Legs, ParamSpec};
use crate::checks::common::inventory::{decided, gated, no_session, Read, TEMPLATES};
use crate::checks::common::refusal::{self, Strictness};
use crate::checks::common::text::{capped, count, kind, non_blank, quote, SEP};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;
use mcp_probe_schema::tape::Json;
use mcp_probe_schema::vocab::leg;

/// Every leg this rule reads.
const LEGS: &[mcp_probe_schema::vocab::LegId] =
    &[TEMPLATES.leg, leg::TEMPLATE_CONTROL, leg::TEMPLATE_MISSING];

/// Resource templates with explicit URI patterns and MIME types.
#[derive(Debug)]
pub struct ResourceTemplatesTyped;
/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    crate::here!("c"),
    " reads one made-up instance of the first template: other templates, and \
     whether a template's values name stored resources or generate content (only the server knows), are not \
     observed; not probed either: the order in which the server substitutes template variables (internal); the \
     approved-namespace and nosniff requirements depend on deployment intent"
);

/// What a refusal of the made-up instance with a code other than -32602 is (v1.0.0:
/// FAIL, the benchmark names the code).
const STRICTNESS: ParamSpec = refusal::param(Strictness::Fail);

/// What this rule counted, in the report's details (after the inventory's).
#[derive(Serialize)]
struct TemplateFacts {
    /// Templates without a usable `uriTemplate`.
    bad_uri_templates: usize,
    /// Templates without an explicit `mimeType`.
    missing_mime_types: usize,
}

const MIME_STRICTNESS: &str =
    "stricter than base MCP, where mimeType is optional: the benchmark requires an \
     explicit MIME type";

impl Check for ResourceTemplatesTyped {
    fn id(&self) -> &'static str {
        "resource-templates-typed"
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
        let live = vec![missing_resource(ev, Strictness::of(cx, &STRICTNESS))];
        let seqs = live::seqs(ev, &LEGS[1..]);
        let read = Read::of(ev, TEMPLATES);
        if let Err(gate) = read.gate(ev) {
            let out = gated(&["a", "b"], None, gate, &read, REDUCTION);
            return live::with_live(out, live, seqs);
        }
        let (mut bad_uri, mut bad_mime) = (Vec::new(), Vec::new());
        let (mut uris, mut mimes) = (Vec::new(), Vec::new());
        for item in &read.items {
            // The template's label is written only into a finding.
            let name = || read.label(item, "name");
            let value = item.value();
            if !value.is_object() {
                let why =
                    crate::format_exact!("{} is {}, not a template object", name(), kind(value));
                bad_uri.push(why.clone());
                bad_mime.push(why);
                continue;
            }
            match non_blank(value, "uriTemplate") {
                Ok(u) => uris.push(quote(u)),
                Err(why) => bad_uri.push(crate::format_exact!("{} {why}", name())),
            }
            match non_blank(value, "mimeType") {
                Ok(m) => {
                    let m = quote(m);
                    if !mimes.contains(&m) {
                        mimes.push(m);
                    }
                }
                Err(why) => bad_mime.push(crate::format_exact!("{} {why}", name())),
            }
        }
        let n = read.items.len();
        let declare = |what: String| {
            crate::format_exact!(
                "{} declare{} {what}",
                count(n, "template"),
                if n == 1 { "s" } else { "" }
            )
        };
        let without = |bad: &[String], what: &str| {
            crate::format_exact!(
                "{} of {} without {what}: {}",
                bad.len(),
                count(n, "template"),
                capped(bad, SEP)
            )
        };
        let a = if bad_uri.is_empty() {
            let uris = capped(&uris, ", ");
            (
                SubOutcome::Pass,
                declare(crate::format_exact!("a non-blank uriTemplate: {uris}")),
            )
        } else {
            (SubOutcome::Fail, without(&bad_uri, "a usable URI pattern"))
        };
        let b = if bad_mime.is_empty() {
            let mimes = capped(&mimes, ", ");
            (
                SubOutcome::Pass,
                declare(crate::format_exact!("an explicit mimeType ({mimes})")),
            )
        } else {
            let without = without(&bad_mime, "an explicit MIME type");
            (
                SubOutcome::Fail,
                crate::format_exact!("{without} ({MIME_STRICTNESS})"),
            )
        };
        let legs = vec![
            SubVerdict::new("a", a.0, a.1),
            SubVerdict::new("b", b.0, b.1),
        ];
        let facts = TemplateFacts {
            bad_uri_templates: bad_uri.len(),
            missing_mime_types: bad_mime.len(),
        };
        live::with_live(decided(legs, &read, REDUCTION, &facts), live, seqs)
    }
}

/// Sub-verdict c: the control read, then the made-up template instance.
fn missing_resource(ev: &Bundle, strictness: Strictness) -> SubVerdict {
    let g = (|| {
        let ok = live::control(
            ev,
            leg::TEMPLATE_CONTROL,
            "contents",
            "the control resources/read",
        )?;
        let (a, req) = match live::recorded(
            ev,
            leg::TEMPLATE_MISSING,
            "the read of a made-up template instance",
        ) {
            Recorded::NotSent(g) => return Err(g),
            Recorded::Sent(a, req) => (a, req),
        };
        let uri = req.uri.as_deref();
        let listed = ev
            .inventory
            .resources
            .items
            .iter()
            .any(|r| r.get("uri").and_then(Json::as_str) == uri);
        let Some(uri) = uri.filter(|_| !listed) else {
            return Err((
                SubOutcome::Error,
                "the recorded read names a listed resource or no URI, so it tests nothing"
                    .to_string(),
            ));
        };
        let (o, note) = live::refusal(
            &a,
            Probe::MissingResource,
            ev.revision(),
            ev.authenticated(),
            strictness,
        );
        Ok((
            o,
            crate::format_exact!(
                "{ok}; resources/read of {} (sent as is): {note}",
                live::uri(uri)
            ),
        ))
    })();
    let (o, note) = g.unwrap_or_else(|e| e);
    SubVerdict::new("c", o, note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::inventory::fixture::{caps, declared, grade, page};
    use crate::fixture::skipped;
    use crate::fixture::sub as sub_of;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::Record;
    use mcp_probe_schema::vocab::leg;
    use serde_json::{json, Value};

    fn templates_page(templates: Vec<Value>) -> Record {
        page(TEMPLATES, 4, templates, None)
    }

    /// This rule on one complete page listing `templates`.
    fn graded(templates: Vec<Value>) -> Outcome {
        grade(
            &ResourceTemplatesTyped,
            caps(),
            vec![templates_page(templates)],
        )
    }

    fn template(name: &str, uri: Value, mime: Option<&str>) -> Value {
        let mut t = json!({"name": name, "uriTemplate": uri});
        if let Some(m) = mime {
            t["mimeType"] = json!(m);
        }
        t
    }

    #[test]
    fn explicit_templates_pass() {
        let o = graded(vec![template(
            "greeting",
            json!("greeting://{name}"),
            Some("text/plain"),
        )]);
        assert_eq!(declared(&o, &["c"]), Verdict::Pass, "{o:#?}");
        assert!(sub_of(&o, "a").note.contains("`greeting://{name}`"));
        assert!(sub_of(&o, "b").note.contains("`text/plain`"));
        assert!(crate::fixture::local(o)
            .reduction
            .contains("c reads one made-up instance"));
    }

    #[test]
    fn blank_null_or_non_string_uri_template_fails_a() {
        let o = graded(vec![
            template("blank", json!("  "), Some("text/plain")),
            template("nulled", Value::Null, Some("text/plain")),
            template("numeric", json!(12), Some("text/plain")),
            json!({"name": "absent", "mimeType": "text/plain"}),
            template("fine", json!("x://{id}"), Some("text/plain")),
        ]);
        assert_eq!(o.verdict, Verdict::Fail);
        let a = &sub_of(&o, "a").note;
        assert!(
            a.contains("4 of 5 templates without a usable URI pattern"),
            "{a}"
        );
        assert!(a.contains("`blank` uriTemplate is blank"), "{a}");
        assert!(a.contains("`nulled` uriTemplate is null"), "{a}");
        assert!(
            a.contains("`numeric` uriTemplate is a number (12), not a string"),
            "{a}"
        );
        assert!(a.contains("`absent` declares no uriTemplate"), "{a}");
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Pass);
    }

    #[test]
    fn missing_mime_type_fails_b_with_the_strictness_note() {
        let o = graded(vec![template("greeting", json!("greeting://{name}"), None)]);
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass);
        let b = &sub_of(&o, "b").note;
        assert!(b.contains("`greeting` declares no mimeType"), "{b}");
        assert!(b.contains("stricter than base MCP"), "{b}");
        let o = graded(vec![template("g", json!("g://{x}"), Some(""))]);
        assert!(
            sub_of(&o, "b").note.contains("`g` mimeType is blank"),
            "{o:#?}"
        );
    }

    #[test]
    fn resources_capability_missing_is_unknown() {
        let o = grade(
            &ResourceTemplatesTyped,
            json!({"tools": {}}),
            vec![skipped(
                &[leg::INVENTORY_RESOURCE_TEMPLATES],
                "not requested: the server did not advertise the \"resources\" capability",
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence
                .contains("does not declare the \"resources\" capability"),
            "{}",
            o.evidence
        );
        assert!(
            o.evidence.contains("no template was observed"),
            "{}",
            o.evidence
        );
    }

    #[test]
    fn cut_inventory_is_unknown_naming_the_bound_and_complete_passes() {
        let good = template("t", json!("file:///{name}"), Some("text/plain"));
        let one = |cursor: Option<&str>| page(TEMPLATES, 4, vec![good.clone()], cursor);
        let o = grade(&ResourceTemplatesTyped, caps(), vec![one(None)]);
        assert_eq!(declared(&o, &["c"]), Verdict::Pass, "{o:#?}");
        let o = grade(
            &ResourceTemplatesTyped,
            caps(),
            vec![
                one(Some("again")),
                skipped(
                    &[leg::INVENTORY_RESOURCE_TEMPLATES],
                    "stopped: the server repeated cursor \"again\"",
                ),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        for id in ["a", "b"] {
            let l = sub_of(&o, id);
            assert_eq!(l.outcome, SubOutcome::Unknown, "{l:?}");
            assert!(l.note.contains("repeated cursor"), "{l:?}");
        }
    }

    #[test]
    fn no_templates_is_unknown_not_pass() {
        let o = graded(vec![]);
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("lists no templates"), "{}", o.evidence);
    }

    fn read(l: mcp_probe_schema::vocab::LegId, id: i64, uri: &str, body: Value) -> Record {
        let req =
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
                .to_string();
        let mut body = body;
        body["jsonrpc"] = json!("2.0");
        body["id"] = json!(id);
        crate::fixture::exchange(&[l], &req, 200, "application/json", &body.to_string(), &[])
    }

    /// This rule with one good template, a listed resource, a control answer and the
    /// made-up instance's answer.
    fn live(control: Value, missing: Value, revision: &str) -> Outcome {
        let records = vec![
            crate::fixture::list_page(
                leg::INVENTORY_RESOURCES,
                "resources/list",
                3,
                json!({"resources": [{"uri": "file:///a.txt", "name": "a"}]}),
            ),
            templates_page(vec![template(
                "file",
                json!("file:///{path}"),
                Some("text/plain"),
            )]),
            read(leg::TEMPLATE_CONTROL, 7, "file:///a.txt", control),
            read(
                leg::TEMPLATE_MISSING,
                8,
                "file:///cis-audit-no-such-value",
                missing,
            ),
        ];
        let ev = crate::fixture::evidence(
            Some(crate::fixture::session(Some(revision), caps(), None)),
            records,
        );
        crate::preconditions::run_rule(&ResourceTemplatesTyped, &ev, &Context::default())
    }

    fn ok() -> Value {
        json!({"result": {"contents": [{"uri": "file:///a.txt", "text": "a"}]}})
    }

    fn err(code: i64) -> Value {
        json!({"error": {"code": code, "message": "Resource not found"}})
    }

    #[test]
    fn a_missing_instance_must_be_refused_with_minus_32602() {
        let o = live(ok(), err(-32602), "2026-07-28");
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Pass,
            &["`file:///cis-audit-no-such-value`", "-32602"],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        // -32002 is the code of revisions before 2026-07-28, retired in it.
        crate::fixture::assert_sub(
            &live(ok(), err(-32002), "2025-11-25"),
            "c",
            SubOutcome::Pass,
            &["2025-11-25 defines"],
        );
        crate::fixture::assert_sub(
            &live(ok(), err(-32002), "2026-07-28"),
            "c",
            SubOutcome::Fail,
            &["retired"],
        );
        crate::fixture::assert_sub(
            &live(ok(), err(-32603), "2025-11-25"),
            "c",
            SubOutcome::Fail,
            &["not -32602"],
        );
        let empty = json!({"result": {"contents": []}});
        crate::fixture::assert_sub(
            &live(ok(), empty, "2025-11-25"),
            "c",
            SubOutcome::Fail,
            &["empty `contents`"],
        );
    }

    #[test]
    fn generated_content_is_unknown_and_a_failed_control_decides_nothing() {
        let made = json!({"result": {"contents": [{"uri": "x", "text": "Hello, cis-audit-no-such-value!"}]}});
        let o = live(ok(), made, "2025-11-25");
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Unknown,
            &["may legitimately produce content"],
        );
        let o = live(
            json!({"result": {"contents": []}}),
            err(-32602),
            "2025-11-25",
        );
        crate::fixture::assert_sub(
            &o,
            "c",
            SubOutcome::Unknown,
            &["control resources/read did not return a non-empty `contents`"],
        );
    }

    #[test]
    fn a_read_of_a_listed_resource_tests_nothing() {
        let records = vec![
            crate::fixture::list_page(
                leg::INVENTORY_RESOURCES,
                "resources/list",
                3,
                json!({"resources": [{"uri": "file:///a.txt", "name": "a"}]}),
            ),
            templates_page(vec![template(
                "file",
                json!("file:///{path}"),
                Some("text/plain"),
            )]),
            read(leg::TEMPLATE_CONTROL, 7, "file:///a.txt", ok()),
            read(leg::TEMPLATE_MISSING, 8, "file:///a.txt", ok()),
        ];
        let o = grade(&ResourceTemplatesTyped, caps(), records);
        crate::fixture::assert_sub(&o, "c", SubOutcome::Error, &["tests nothing"]);
    }
}
