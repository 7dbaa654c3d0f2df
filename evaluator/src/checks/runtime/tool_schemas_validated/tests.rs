use super::*;
use crate::checks::common::inventory::fixture::{
    caps, declared, grade, page, transport_error, REV,
};
use crate::fixture::sub as sub_of;
use crate::fixture::{evidence, exchange, session, skipped};
use crate::preconditions::run_rule;
use crate::verdict::Verdict;
use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
use mcp_probe_schema::tape::Tape;
use mcp_probe_schema::vocab::leg;
use serde_json::{json, Value};

// The readings of a schema, of a value read into a tape as a list page's schemas are.

fn dialect(v: &Value) -> Result<Dialect, UnknownDialect> {
    super::dialect(Tape::from_value(v).root())
}

fn compile(v: &Value, d: Dialect) -> Result<(), MetaschemaViolation> {
    super::compile(Tape::from_value(v).root(), d)
}

fn external_refs(v: &Value) -> Vec<String> {
    super::external_refs(Tape::from_value(v).root())
}

fn judge(v: &Value) -> Judged {
    super::judge(Tape::from_value(v).root())
}

fn tool(name: &str, input: Value) -> Value {
    json!({"name": name, "inputSchema": input})
}

fn tool_io(name: &str) -> Value {
    json!({
        "name": name,
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}}},
    })
}

fn tools_page(id: i64, tools: Vec<Value>, cursor: Option<&str>) -> Record {
    page(TOOLS, id, tools, cursor)
}

#[test]
fn compiling_schemas_pass() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, vec![tool_io("add"), tool_io("echo")], None)],
    );
    assert_eq!(declared(&o, &["d"]), Verdict::Pass, "{o:#?}");
    assert!(
        sub_of(&o, "a")
            .note
            .contains("2 inputSchemas compiled (all under 2020-12)"),
        "{o:#?}"
    );
    assert!(
        sub_of(&o, "b").note.contains("2 outputSchemas compiled"),
        "{o:#?}"
    );
    assert_eq!(sub_of(&o, "c").outcome, SubOutcome::Observed);
    assert!(
        o.evidence
            .contains("tools/list read completely: 2 tools on 1 page"),
        "{}",
        o.evidence
    );
    assert!(crate::fixture::local(o.clone())
        .reduction
        .contains("d calls one tool the operator names"));
    // The tools/list page, and the fixture's skipped live leg.
    assert_eq!(o.records, vec![0, 1]);
    assert_eq!(o.details["tools"], 2);
    assert_eq!(o.details["input_schemas_compiled"], 2);
}

#[test]
fn type_12_fails_a_naming_the_tool() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(
            2,
            vec![tool_io("good"), tool("broken", json!({"type": 12}))],
            None,
        )],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    let a = sub_of(&o, "a");
    assert_eq!(a.outcome, SubOutcome::Fail);
    assert!(
        a.note.contains("inputSchema fails for 1 of 2 tools"),
        "{}",
        a.note
    );
    assert!(
        a.note
            .contains("`broken`: inputSchema does not compile under 2020-12: at /type:"),
        "{}",
        a.note
    );
    assert!(!a.note.contains("`good`"), "{}", a.note);
    assert_eq!(o.details["input_schema_failures"], 1);
}

#[test]
fn missing_input_schema_fails_a() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(
            2,
            vec![json!({"name": "bare"}), json!("junk")],
            None,
        )],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    let a = &sub_of(&o, "a").note;
    assert!(a.contains("`bare` declares no inputSchema"), "{a}");
    assert!(a.contains("tool #2 is a string, not a tool object"), "{a}");
}

#[test]
fn unrecognised_dialect_is_unknown_and_named() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(
            2,
            vec![
                tool_io("ok"),
                tool(
                    "custom",
                    json!({"$schema": "http://example.com/custom", "type": "object"}),
                ),
            ],
            None,
        )],
    );
    assert_eq!(o.verdict, Verdict::Unknown);
    let a = sub_of(&o, "a");
    assert_eq!(a.outcome, SubOutcome::Unknown);
    assert!(a.note.contains("unrecognised dialect"), "{}", a.note);
    assert!(
        a.note
            .contains("`custom`: inputSchema declares $schema \"http://example.com/custom\""),
        "{}",
        a.note
    );
    assert!(a.note.contains("1 other compiled"), "{}", a.note);
}

#[test]
fn a_failure_outranks_an_unrecognised_dialect() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(
            2,
            vec![
                tool("x", json!({"$schema": "urn:mine"})),
                tool("y", json!({"required": "a"})),
            ],
            None,
        )],
    );
    let a = sub_of(&o, "a");
    assert_eq!(a.outcome, SubOutcome::Fail);
    assert!(
        a.note
            .contains("`y`: inputSchema does not compile under 2020-12: at /required:"),
        "{}",
        a.note
    );
    assert!(
        a.note
            .contains("besides, 1 inputSchema in an unrecognised dialect"),
        "{}",
        a.note
    );
}

#[test]
fn older_drafts_compile_under_their_own_metaschema() {
    let d7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"});
    let d4_bad =
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": 3});
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, vec![tool("seven", d7.clone())], None)],
    );
    assert!(
        sub_of(&o, "a")
            .note
            .contains("1 inputSchema compiled (all under draft-07)"),
        "{o:#?}"
    );
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(
            2,
            vec![tool("seven", d7), tool("four", d4_bad)],
            None,
        )],
    );
    assert!(
        sub_of(&o, "a")
            .note
            .contains("`four`: inputSchema does not compile under draft-04"),
        "{o:#?}"
    );
}

#[test]
fn no_output_schema_leaves_b_unknown() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(
            2,
            vec![tool("t", json!({"type": "object"}))],
            None,
        )],
    );
    assert_eq!(o.verdict, Verdict::Unknown);
    assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass);
    let b = sub_of(&o, "b");
    assert_eq!(b.outcome, SubOutcome::Unknown);
    assert!(
        b.note
            .contains("none of the 1 tool declares an outputSchema"),
        "{}",
        b.note
    );
}

#[test]
fn bad_output_schema_fails_b() {
    let mut t = tool_io("out");
    t["outputSchema"] = json!({"properties": []});
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, vec![t, tool("plain", json!({}))], None)],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    let b = sub_of(&o, "b");
    assert_eq!(b.outcome, SubOutcome::Fail);
    assert!(
        b.note
            .contains("`out`: outputSchema does not compile under 2020-12: at /properties"),
        "{}",
        b.note
    );
    assert!(
        b.note.contains("fails for 1 of 1 tool declaring one"),
        "{}",
        b.note
    );
    // A null outputSchema is declared and is not a schema.
    let mut t = tool_io("nulled");
    t["outputSchema"] = Value::Null;
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, vec![t], None)],
    );
    assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Fail, "{o:#?}");
}

#[test]
fn external_ref_is_counted_in_c_not_graded() {
    let mut t = tool_io("remote");
    t["inputSchema"]["properties"]["a"] = json!({"$ref": "https://schemas.example/int.json"});
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, vec![t], None)],
    );
    assert_eq!(declared(&o, &["d"]), Verdict::Pass, "{o:#?}");
    let c = sub_of(&o, "c");
    assert_eq!(c.outcome, SubOutcome::Observed);
    assert!(c.note.contains("1 external $ref"), "{}", c.note);
    assert!(
        c.note
            .contains("`remote` inputSchema -> \"https://schemas.example/int.json\""),
        "{}",
        c.note
    );
    assert_eq!(o.details["external_refs"], 1);
}

#[test]
fn bad_schema_on_page_two_fails() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![
            tools_page(2, vec![tool_io("first")], Some("c1")),
            tools_page(3, vec![tool("second", json!({"type": 12}))], None),
        ],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    assert!(sub_of(&o, "a").note.contains("`second` (page 2)"), "{o:#?}");
    assert!(
        o.evidence.contains("read completely: 2 tools on 2 pages"),
        "{}",
        o.evidence
    );
    assert_eq!(o.records, vec![0, 1, 2]);
}

#[test]
fn cut_short_says_which_pages_went_unexamined_and_never_passes() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![
            tools_page(2, vec![tool_io("first")], Some("c1")),
            skipped(
                &[leg::INVENTORY_TOOLS],
                "stopped: page bound 1 reached with a nextCursor still pending (--max-pages)",
            ),
        ],
    );
    // Nothing wrong among the items read, but a bad tool may sit past the bound.
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    let a = sub_of(&o, "a");
    assert_eq!(a.outcome, SubOutcome::Unknown, "{a:?}");
    assert!(
        a.note
            .contains("tools/list was cut after page 1 (stopped: page bound 1 reached"),
        "{a:?}"
    );
    assert!(
        o.evidence
            .contains("pages after 1 unexamined (stopped: page bound 1 reached"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["inventory_complete"], false);
    // A failed second page: same rule.
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![
            tools_page(2, vec![tool("bad", json!({"type": 12}))], Some("c1")),
            transport_error(&[leg::INVENTORY_TOOLS]),
        ],
    );
    assert_eq!(o.verdict, Verdict::Fail);
    assert!(
        o.evidence
            .contains("pages after 1 unexamined (page 2 failed"),
        "{}",
        o.evidence
    );
    assert!(!o.evidence.contains("page-one"), "{}", o.evidence);
}

/// A page whose body ended in a transport error (a truncated chunked reply): its
/// bytes hold a whole JSON-RPC result, which must not be read as the answer.
fn truncated(mut r: Record) -> Record {
    if let Observation::Http(x) = &mut r.observation {
        if let HttpOutcome::Response(resp) = &mut x.outcome {
            resp.body.end = mcp_probe_schema::model::BodyEnd::Error(TransportError {
                kind: ErrorKind::Reset,
                message: "connection closed inside a chunk".into(),
            });
        }
    }
    r
}

#[test]
fn a_truncated_page_is_not_an_answer_and_is_named() {
    // First page truncated: nothing was read, UNKNOWN naming the record.
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![truncated(tools_page(2, vec![tool_io("first")], None))],
    );
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    assert!(
        o.evidence
            .contains("record 0: the body ended in a transport error"),
        "{}",
        o.evidence
    );
    // A truncated second page cuts the list: no PASS from the first page alone.
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![
            tools_page(2, vec![tool_io("first")], Some("c1")),
            truncated(tools_page(3, vec![tool_io("second")], None)),
        ],
    );
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    assert!(
        o.evidence
            .contains("page 2 answered HTTP 200 but record 1: the body ended in a transport error"),
        "{}",
        o.evidence
    );
    assert_eq!(
        o.details["tools"], 1,
        "the truncated page's tool is not counted"
    );
}

#[test]
fn an_inventory_cut_by_the_bundle_bound_is_unknown_naming_it() {
    let mut stripped = tools_page(3, vec![tool("bad", json!({"type": 12}))], None);
    if let Observation::Http(x) = &mut stripped.observation {
        if let HttpOutcome::Response(resp) = &mut x.outcome {
            resp.body.bytes.clear();
        }
    }
    let records = vec![
        tools_page(2, vec![tool_io("first")], Some("c1")),
        stripped,
        crate::fixture::skipped(
            &[mcp_probe_schema::vocab::leg::SCHEMA_CALL],
            "not sent: not part of this test",
        ),
    ];
    let mut payload = mcp_probe_schema::testkit::evidence(crate::fixture::ENDPOINT, records);
    payload.session = Some(session(Some(REV), caps(), None));
    payload.run.bundle_capped_from = Some(1);
    let key = mcp_probe_schema::testkit::test_key(7);
    let v = mcp_probe_schema::open(&mcp_probe_schema::seal(&payload, &key), &[]).expect("verifies");
    let ev = Bundle::new("capped.mcpev", v);
    let o = run_rule(&ToolSchemasValidated, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
    let a = sub_of(&o, "a");
    assert_eq!(a.outcome, SubOutcome::Unknown, "{a:?}");
    assert!(
        a.note.contains("record 1: the body")
            && a.note
                .contains("the bundle bound (--bundle-cap) was reached at record 1"),
        "{a:?}"
    );
}

#[test]
fn tools_capability_absent_is_unknown() {
    let o = grade(
        &ToolSchemasValidated,
        json!({"prompts": {}}),
        vec![skipped(
            &[leg::INVENTORY_TOOLS],
            "not requested: the server did not advertise the \"tools\" capability",
        )],
    );
    assert_eq!(o.verdict, Verdict::Unknown);
    assert!(
        o.evidence
            .contains("does not declare the \"tools\" capability"),
        "{}",
        o.evidence
    );
    assert!(o.evidence.contains("not requested"), "{}", o.evidence);
    assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown);
    assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Unknown);
    assert_eq!(o.details["tools"], 0);
}

#[test]
fn declared_but_empty_is_unknown_and_says_so() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, vec![], None)],
    );
    assert_eq!(o.verdict, Verdict::Unknown);
    assert!(
        o.evidence.contains("tools/list lists no tools"),
        "{}",
        o.evidence
    );
    assert!(
        o.evidence.contains("read completely: 0 tools on 1 page"),
        "{}",
        o.evidence
    );
}

#[test]
fn refused_unparsable_and_unanswered_lists_are_told_apart() {
    let req = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    let refused = exchange(
        &[leg::INVENTORY_TOOLS],
        req,
        200,
        "application/json",
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#,
        &[],
    );
    let o = grade(&ToolSchemasValidated, caps(), vec![refused]);
    assert_eq!(o.verdict, Verdict::Unknown);
    assert!(
        o.evidence
            .contains("refused tools/list: HTTP 200, JSON-RPC error -32601 \"Method not found\""),
        "{}",
        o.evidence
    );

    let html = exchange(
        &[leg::INVENTORY_TOOLS],
        req,
        502,
        "text/html",
        "<h1>Bad gateway</h1>",
        &[],
    );
    let o = grade(&ToolSchemasValidated, caps(), vec![html]);
    assert_eq!(o.verdict, Verdict::Unknown);
    assert!(
        o.evidence.contains(
            "tools/list could not be read: answered HTTP 502 (text/html) with no JSON-RPC message"
        ),
        "{}",
        o.evidence
    );

    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![transport_error(&[leg::INVENTORY_TOOLS])],
    );
    assert_eq!(o.verdict, Verdict::Error);
    assert!(
        o.evidence
            .contains("got no response (timeout: no response within 30 s)"),
        "{}",
        o.evidence
    );
}

#[test]
fn long_failure_lists_are_capped() {
    let tools: Vec<Value> = (0..8)
        .map(|i| tool(&format!("t{i}"), json!({"type": 12})))
        .collect();
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![tools_page(2, tools, None)],
    );
    let a = &sub_of(&o, "a").note;
    assert!(a.contains("inputSchema fails for 8 of 8 tools"), "{a}");
    assert!(
        a.contains("`t4`") && !a.contains("`t5`") && a.contains("and 3 more"),
        "{a}"
    );
}

#[test]
fn without_a_session_the_runner_decides() {
    let ev = evidence(None, vec![]);
    assert_eq!(
        run_rule(&ToolSchemasValidated, &ev, &Context::default()).verdict,
        Verdict::Error
    );
    let mut s = session(None, json!({}), None);
    s.auth_required = true;
    let ev = evidence(Some(s), vec![]);
    assert_eq!(
        run_rule(&ToolSchemasValidated, &ev, &Context::default()).verdict,
        Verdict::Unknown
    );
    // A bundle from a collector that never recorded the leg: ERROR naming it.
    let o = grade(&ToolSchemasValidated, caps(), vec![]);
    assert_eq!(o.verdict, Verdict::Error);
    assert!(o.evidence.contains("inventory.tools"), "{}", o.evidence);
}

// ----- JSON Schema dialect and compilation

#[test]
fn dialect_table_is_explicit() {
    assert_eq!(dialect(&json!({})), Ok(Dialect::Draft202012));
    assert_eq!(dialect(&json!({"$schema": ""})), Ok(Dialect::Draft202012));
    assert_eq!(
        dialect(&json!({"$schema": "https://json-schema.org/draft/2020-12/schema"})),
        Ok(Dialect::Draft202012)
    );
    assert_eq!(
        dialect(&json!({"$schema": "https://json-schema.org/draft/2019-09/schema"})),
        Ok(Dialect::Draft201909)
    );
    assert_eq!(
        dialect(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
        Ok(Dialect::Draft7)
    );
    assert_eq!(
        dialect(&json!({"$schema": "http://json-schema.org/draft-04/schema#"})),
        Ok(Dialect::Draft4)
    );
    assert_eq!(
        dialect(&json!({"$schema": "http://example.com/custom"})),
        Err(UnknownDialect::Unrecognised(
            "\"http://example.com/custom\"".into()
        ))
    );
    let e = dialect(&json!({"$schema": 7})).expect_err("a number");
    assert_eq!(e, UnknownDialect::NotAString("7".into()));
    assert_eq!(e.to_string(), "7 (not a string)");
    assert_eq!(dialect(&json!(true)), Ok(Dialect::Draft202012));
}

#[test]
fn compile_names_the_place() {
    let e = compile(&json!({"type": 12}), Dialect::Draft202012).unwrap_err();
    assert_eq!(e.at, "/type");
    assert!(e.to_string().starts_with("at /type: "), "{e}");
    assert!(compile(&json!({"type": "object"}), Dialect::Draft7).is_ok());
    // draft-04 wants `exclusiveMinimum` boolean, 2020-12 a number.
    assert!(compile(&json!({"exclusiveMinimum": 3}), Dialect::Draft4).is_err());
    assert!(compile(&json!({"exclusiveMinimum": 3}), Dialect::Draft202012).is_ok());
    assert!(compile(&json!("nope"), Dialect::Draft202012).is_err());
    assert!(compile(&json!(true), Dialect::Draft202012).is_ok());
}

#[test]
fn external_refs_are_found_anywhere() {
    let s = json!({
        "$defs": {"a": {"$ref": "#/$defs/b"}},
        "properties": {"x": {"items": [{"$ref": "https://evil.example/s.json"}]}},
        "anyOf": [{"$ref": "file:///etc/passwd"}],
    });
    assert_eq!(
        external_refs(&s),
        vec![
            "https://evil.example/s.json".to_string(),
            "file:///etc/passwd".to_string()
        ]
    );
    // A property literally named "$ref" is a schema, not a reference.
    assert!(external_refs(&json!({"properties": {"$ref": {"type": "string"}}})).is_empty());
}

#[test]
fn compiling_a_remote_ref_fetches_nothing() {
    // Would hang or fail if the crate tried to resolve it; it compiles (sub-verdict c counts it
    // instead).
    let s = json!({"$ref": "http://127.0.0.1:9/never"});
    assert_eq!(judge(&s), Judged::Compiled(Dialect::Draft202012));
}

/// This rule with `tool_io("add")` listed and the sub-verdict d call sending `arguments`,
/// answered `status` with `body`.
fn called(arguments: Value, status: u16, body: &str) -> Outcome {
    let req = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "add", "arguments": arguments}})
    .to_string();
    grade(
        &ToolSchemasValidated,
        caps(),
        vec![
            tools_page(2, vec![tool_io("add")], None),
            exchange(
                &[leg::SCHEMA_CALL],
                &req,
                status,
                "application/json",
                body,
                &[],
            ),
        ],
    )
}

#[test]
fn d_a_tool_execution_error_passes_and_a_normal_result_fails() {
    let o = called(
        json!({"b": 1}),
        200,
        r#"{"jsonrpc":"2.0","id":9,"result":{"isError":true,"content":[{"type":"text","text":"a is required"}]}}"#,
    );
    crate::fixture::assert_sub(
        &o,
        "d",
        SubOutcome::Pass,
        &["without `a`", "`a is required`"],
    );
    assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
    assert!(o.records.contains(&1));
    let o = called(
        json!({"b": 1}),
        200,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"None"}]}}"#,
    );
    crate::fixture::assert_sub(&o, "d", SubOutcome::Fail, &["executed despite"]);
    assert_eq!(o.verdict, Verdict::Fail);
}

#[test]
fn d_protocol_errors_fail_and_other_refusals_do_not_decide() {
    for code in [-32602, -32600] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":9,"error":{{"code":{code},"message":"Invalid params"}}}}"#
        );
        let o = called(json!({}), 400, &body);
        crate::fixture::assert_sub(&o, "d", SubOutcome::Fail, &["a protocol error"]);
    }
    let o = called(
        json!({}),
        200,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"Internal server error"}}"#,
    );
    crate::fixture::assert_sub(&o, "d", SubOutcome::Unknown, &["not as invalid arguments"]);
    let o = called(
        json!({}),
        401,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"x"}}"#,
    );
    crate::fixture::assert_sub(&o, "d", SubOutcome::Unknown, &["authentication"]);
    let o = called(json!({}), 502, "<html>bad gateway</html>");
    crate::fixture::assert_sub(&o, "d", SubOutcome::Error, &["no JSON-RPC answer"]);
}

#[test]
fn d_a_call_that_leaves_out_nothing_required_tests_nothing() {
    let o = called(
        json!({"a": 1}),
        200,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#,
    );
    crate::fixture::assert_sub(&o, "d", SubOutcome::Error, &["tests nothing"]);
}

#[test]
fn d_no_operator_input_is_unknown_and_an_old_bundle_error() {
    let o = grade(
        &ToolSchemasValidated,
        caps(),
        vec![
            tools_page(2, vec![tool_io("add")], None),
            skipped(
                &[leg::SCHEMA_CALL],
                "not sent: no schema_probe_tool in the probe inputs (the operator names the tool and valid arguments; none is guessed)",
            ),
        ],
    );
    crate::fixture::assert_sub(&o, "d", SubOutcome::Unknown, &["no schema_probe_tool"]);
    assert_eq!(o.verdict, Verdict::Unknown);
    let ev = evidence(
        Some(session(Some(REV), caps(), None)),
        vec![tools_page(2, vec![tool_io("add")], None)],
    );
    let o = run_rule(&ToolSchemasValidated, &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Error);
    let missing = format!("{} missing", leg::SCHEMA_CALL);
    assert!(o.evidence.contains(&missing), "{}", o.evidence);
}
