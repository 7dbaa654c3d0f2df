//! 5.1.1d, 5.1.2c, 5.1.3c and 5.1.3d: the live legs of Section 5's declaration checks,
//! resolved from the inventory this run recorded (every page) and sent complete for the
//! negotiated revision (on 2026-07-28 with `Mcp-Name` naming the tool, URI or prompt).
//!
//! * 5.1.1d (`5.1.1d.call`): one `tools/call` of the operator's `schema_probe_tool`
//!   with its `schema_probe_arguments` minus the first property of the advertised
//!   `required` list that the operator supplied. Never a guessed tool or value.
//! * 5.1.2c (`5.1.2c.control`, `5.1.2c.missing`): `resources/read` of the first listed
//!   resource, then, when it returned contents, of the first template with a `{…}`
//!   expression whose first expression is replaced whole by `cis-audit-no-such-value`
//!   (string concatenation: the URI is sent exactly as built).
//! * 5.1.3c/5.1.3d (`5.1.3c.control`, `5.1.3c.missing_arg`, `5.1.3d.control`,
//!   `5.1.3d.unknown`): `prompts/get` of the first prompt with a required argument (for
//!   5.1.3d, else the first prompt), every declared argument set to
//!   `cis-audit-placeholder`; one record carries both controls when the prompt is the
//!   same. When the control returned messages: the same prompt with `arguments: {}`
//!   and a prompt named `cis-audit-no-such-prompt`.
//!
//! A leg not sent is recorded as skipped with the gate's reason (`not sent: …`).

use mcp_probe_schema::derive::{self, Inventory};
use mcp_probe_schema::model::Header;
use mcp_probe_schema::vocab::probe::{NO_SUCH_PROMPT, NO_SUCH_VALUE, PROMPT_PLACEHOLDER};
use mcp_probe_schema::vocab::{family, header, leg, method, LegId};
use serde_json::{Map, Value};

use super::c3_3_4_scope::mcp_name_value;
use crate::journal::lock;
use crate::mcp::{Probe, Reply};

/// Operator input: the tool 5.1.1d calls.
pub const INPUT_TOOL: &str = "schema_probe_tool";
/// Operator input: a valid argument object for it.
pub const INPUT_ARGUMENTS: &str = "schema_probe_arguments";

/// Why 5.1.1d's call is not sent (the text is the skip note).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaInputError {
    /// No `schema_probe_tool`.
    #[error("not sent: no {INPUT_TOOL} in the probe inputs (the operator names the tool and valid arguments; none is guessed)")]
    NoTool,
    /// The tool is named without arguments.
    #[error("not sent: {INPUT_TOOL} {0:?} is given without {INPUT_ARGUMENTS} (the operator supplies valid arguments; the probe never invents values)")]
    NoArguments(String),
    /// The arguments are not a JSON object; says what they are.
    #[error("not sent: {INPUT_ARGUMENTS} in the probe inputs is not a JSON object ({0})")]
    NotObject(&'static str),
    /// The arguments are `{}`.
    #[error("not sent: {INPUT_ARGUMENTS} in the probe inputs is empty, so no required property can be left out")]
    EmptyArguments,
    /// The tool is not in the recorded `tools/list`.
    #[error(
        "not sent: the operator's {INPUT_TOOL} {0:?} is not among the tools the server listed"
    )]
    NotAdvertised(String),
    /// The tool's `inputSchema` has no `required` list of names.
    #[error("not sent: the inputSchema of {0:?} has no `required` list, so no call can leave out a required property")]
    NoRequired(String),
    /// None of the required properties is among the operator's arguments.
    #[error("not sent: none of the required properties of {0:?} ({1}) is among the operator's {INPUT_ARGUMENTS} (leaving out any other key keeps the call valid)")]
    NoneSupplied(String, String),
}

/// The tool, the arguments to send and the required property left out, or why not.
pub fn schema_probe_call(
    inputs: Option<&Value>,
    tools: &[Value],
) -> Result<(String, Map<String, Value>, String), SchemaInputError> {
    let tool = inputs
        .and_then(|i| i.get(INPUT_TOOL))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or(SchemaInputError::NoTool)?;
    let mut args = match inputs.and_then(|i| i.get(INPUT_ARGUMENTS)) {
        None | Some(Value::Null) => return Err(SchemaInputError::NoArguments(tool.into())),
        Some(Value::Object(m)) if m.is_empty() => return Err(SchemaInputError::EmptyArguments),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(SchemaInputError::NotObject(match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                _ => "a boolean",
            }))
        }
    };
    let listed = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))
        .ok_or_else(|| SchemaInputError::NotAdvertised(tool.into()))?;
    let required: Vec<&str> = listed
        .get("inputSchema")
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return Err(SchemaInputError::NoRequired(tool.into()));
    }
    let Some(dropped) = required.iter().find(|k| args.contains_key(**k)) else {
        return Err(SchemaInputError::NoneSupplied(
            tool.into(),
            required.join(", "),
        ));
    };
    args.remove(*dropped);
    Ok((tool.to_string(), args, dropped.to_string()))
}

/// The first `{…}` expression of `template` replaced whole by `value`, by string
/// concatenation (never URL parsing, which could normalise the rest); `None` when the
/// template has no expression.
pub fn fill_first_variable(template: &str, value: &str) -> Option<String> {
    let open = template.find('{')?;
    let close = open + template[open..].find('}')?;
    Some(format!(
        "{}{value}{}",
        &template[..open],
        &template[close + 1..]
    ))
}

/// Every declared argument name of `prompt` mapped to the placeholder.
pub fn placeholder_arguments(prompt: &Value) -> Map<String, Value> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| a.get("name").and_then(Value::as_str))
        .filter(|n| !n.trim().is_empty())
        .map(|n| (n.to_string(), Value::String(PROMPT_PLACEHOLDER.into())))
        .collect()
}

/// A prompt's non-blank name.
fn prompt_name(p: &Value) -> Option<&str> {
    p.get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.trim().is_empty())
}

/// True when the prompt declares an argument with `required: true`.
fn has_required_argument(p: &Value) -> bool {
    p.get("arguments")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter()
                .any(|x| x.get("required") == Some(&Value::Bool(true)))
        })
}

/// The prompts of 5.1.3c and 5.1.3d: the first with a required argument, else (5.1.3d
/// only) the first with a name.
pub fn prompt_choice(prompts: &[Value]) -> (Option<&Value>, Option<&Value>) {
    let c = prompts
        .iter()
        .find(|p| prompt_name(p).is_some() && has_required_argument(p));
    let d = c.or_else(|| prompts.iter().find(|p| prompt_name(p).is_some()));
    (c, d)
}

/// The reply carries a result whose `key` is a non-empty array.
fn non_empty(r: &Reply, key: &str) -> bool {
    r.result()
        .and_then(|x| x.get(key))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// Why a control did not open the way to its probe.
fn control_failed(what: &str, key: &str, r: &Reply) -> String {
    format!(
        "not sent: the control {what} did not return a non-empty `{key}` ({}), so a refusal could not be told from a broken read",
        r.describe()
    )
}

/// What the inventory lists say about why nothing was there to pick.
fn list_state(l: &derive::ListInventory, what: &str) -> String {
    if !l.observed {
        format!("{what} was not recorded")
    } else if let Some(s) = &l.stopped {
        if l.items.is_empty() {
            format!("{what} gave no items ({s})")
        } else {
            format!("{what} lists none")
        }
    } else {
        format!("{what} lists none")
    }
}

impl Probe<'_> {
    /// The inventory recorded so far (every page of each list).
    pub(super) fn recorded_inventory(&self) -> Inventory {
        let mut recs = Vec::new();
        lock(&self.journal).for_each_record_of(
            |legs| legs.iter().any(|l| derive::list_key(l).is_some()),
            |r| {
                recs.push(r);
                true
            },
        );
        derive::inventory(&recs)
    }

    /// `resources/read` of `uri` as the control of `leg`: true when it returned a
    /// non-empty `contents`; otherwise `rest` is recorded skipped, naming `what` and the
    /// answer (a refusal after a broken read would prove nothing), and false returned.
    pub(super) async fn control_read(
        &mut self,
        leg: LegId,
        uri: &str,
        what: &str,
        rest: &[LegId],
    ) -> bool {
        let Some(r) = self
            .named_rpc(&[leg], method::RESOURCES_READ, super::read_params(uri), uri)
            .await
        else {
            return false;
        };
        if non_empty(&r, "contents") {
            return true;
        }
        self.skip(rest, control_failed(what, "contents", &r));
        false
    }

    /// Send a complete request of `m` under `legs`; on 2026-07-28 with `Mcp-Name: name`.
    pub(super) async fn named_rpc(
        &mut self,
        legs: &[LegId],
        m: &str,
        params: Map<String, Value>,
        name: &str,
    ) -> Option<Reply> {
        let endpoint = self.endpoint.clone()?;
        let (mut h, body, id) = self.complete(m, params);
        if self.modern_session() {
            h.push(Header::new(header::NAME, mcp_name_value(name)));
        }
        Some(
            self.rpc_awaiting(legs, &endpoint, h, &body, Some(Value::from(id)))
                .await,
        )
    }

    /// 5.1.1d: the operator's tool called without one required property.
    pub(super) async fn schema_call(&mut self) {
        let inv = self.recorded_inventory();
        let inputs = self.inputs.clone();
        let (tool, args, _dropped) = match schema_probe_call(inputs.as_ref(), &inv.tools.items) {
            Ok(x) => x,
            Err(why) => return self.skip(&[leg::SCHEMA_CALL], why.to_string()),
        };
        let mut params = Map::new();
        params.insert("name".into(), Value::String(tool.clone()));
        params.insert("arguments".into(), Value::Object(args));
        self.named_rpc(&[leg::SCHEMA_CALL], method::TOOLS_CALL, params, &tool)
            .await;
    }

    /// 5.1.2c: a control read, then a made-up instance of the first template.
    pub(super) async fn template_reads(&mut self) {
        let inv = self.recorded_inventory();
        let control = inv.resources.items.iter().find_map(|r| {
            r.get("uri")
                .and_then(Value::as_str)
                .filter(|u| !u.trim().is_empty())
                .map(str::to_string)
        });
        let missing = inv.resource_templates.items.iter().find_map(|t| {
            t.get("uriTemplate")
                .and_then(Value::as_str)
                .and_then(|u| fill_first_variable(u, NO_SUCH_VALUE))
        });
        let (control, missing) = match (control, missing) {
            (Some(c), Some(m)) => (c, m),
            (c, m) => {
                let mut why = Vec::new();
                if c.is_none() {
                    why.push(format!(
                        "no resource to read as a control ({})",
                        list_state(&inv.resources, "resources/list")
                    ));
                }
                if m.is_none() {
                    why.push(format!(
                        "no resource template with a {{variable}} ({})",
                        list_state(&inv.resource_templates, "resources/templates/list")
                    ));
                }
                return self.skip(
                    &family::TEMPLATE_READS,
                    format!("not sent: {}", why.join("; ")),
                );
            }
        };
        if !self
            .control_read(
                leg::TEMPLATE_CONTROL,
                &control,
                &format!("read of {control:?}"),
                &[leg::TEMPLATE_MISSING],
            )
            .await
        {
            return;
        }
        self.named_rpc(
            &[leg::TEMPLATE_MISSING],
            method::RESOURCES_READ,
            super::read_params(&missing),
            &missing,
        )
        .await;
    }

    /// 5.1.3c and 5.1.3d: a control get, then a missing required argument and an
    /// unknown prompt name.
    pub(super) async fn prompt_gets(&mut self) {
        let inv = self.recorded_inventory();
        let (c, d) = prompt_choice(&inv.prompts.items);
        let (c, d) = (c.cloned(), d.cloned());
        let Some(d) = d else {
            return self.skip(
                &family::PROMPT_GETS,
                format!(
                    "not sent: no prompt to get ({})",
                    list_state(&inv.prompts, "prompts/list")
                ),
            );
        };
        if c.is_none() {
            self.skip(
                &[leg::PROMPT_CONTROL, leg::PROMPT_MISSING_ARG],
                "not sent: no listed prompt declares an argument with `required: true`, so none can be left out",
            );
        }
        let name = prompt_name(&d).unwrap_or_default().to_string();
        let get = |args: Map<String, Value>, name: &str| {
            let mut p = Map::new();
            p.insert("name".into(), Value::String(name.to_string()));
            p.insert("arguments".into(), Value::Object(args));
            p
        };
        let controls: &[LegId] = if c.is_some() {
            &[leg::PROMPT_CONTROL, leg::PROMPT_NAME_CONTROL]
        } else {
            &[leg::PROMPT_NAME_CONTROL]
        };
        let Some(r) = self
            .named_rpc(
                controls,
                method::PROMPTS_GET,
                get(placeholder_arguments(&d), &name),
                &name,
            )
            .await
        else {
            return;
        };
        if !non_empty(&r, "messages") {
            let why = control_failed(&format!("get of {name:?}"), "messages", &r);
            let probes: &[LegId] = if c.is_some() {
                &[leg::PROMPT_MISSING_ARG, leg::PROMPT_UNKNOWN]
            } else {
                &[leg::PROMPT_UNKNOWN]
            };
            return self.skip(probes, why);
        }
        if c.is_some() {
            self.named_rpc(
                &[leg::PROMPT_MISSING_ARG],
                method::PROMPTS_GET,
                get(Map::new(), &name),
                &name,
            )
            .await;
        }
        self.named_rpc(
            &[leg::PROMPT_UNKNOWN],
            method::PROMPTS_GET,
            get(Map::new(), NO_SUCH_PROMPT),
            NO_SUCH_PROMPT,
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::model::{Era, Observation, Record};
    use serde_json::json;

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "add", "inputSchema": {"type": "object", "required": ["a", "b"]}}),
            json!({"name": "free", "inputSchema": {"type": "object"}}),
        ]
    }

    #[test]
    fn the_first_supplied_required_property_is_dropped() {
        let i = json!({INPUT_TOOL: "add", INPUT_ARGUMENTS: {"b": 2, "a": 1, "x": 0}});
        let (tool, args, dropped) = schema_probe_call(Some(&i), &tools()).expect("resolves");
        assert_eq!(tool, "add");
        assert_eq!(dropped, "a");
        assert_eq!(Value::Object(args), json!({"b": 2, "x": 0}));
        let i = json!({INPUT_TOOL: "add", INPUT_ARGUMENTS: {"b": 2}});
        assert_eq!(schema_probe_call(Some(&i), &tools()).expect("ok").2, "b");
    }

    #[test]
    fn every_gate_says_why_nothing_is_sent() {
        let err = |i: Value| schema_probe_call(Some(&i), &tools()).unwrap_err();
        assert_eq!(
            schema_probe_call(None, &tools()).unwrap_err(),
            SchemaInputError::NoTool
        );
        assert!(matches!(
            err(json!({INPUT_TOOL: "add"})),
            SchemaInputError::NoArguments(_)
        ));
        assert_eq!(
            err(json!({INPUT_TOOL: "add", INPUT_ARGUMENTS: {}})),
            SchemaInputError::EmptyArguments
        );
        assert_eq!(
            err(json!({INPUT_TOOL: "add", INPUT_ARGUMENTS: [1]})),
            SchemaInputError::NotObject("an array")
        );
        assert!(matches!(
            err(json!({INPUT_TOOL: "nope", INPUT_ARGUMENTS: {"a": 1}})),
            SchemaInputError::NotAdvertised(_)
        ));
        assert!(matches!(
            err(json!({INPUT_TOOL: "free", INPUT_ARGUMENTS: {"a": 1}})),
            SchemaInputError::NoRequired(_)
        ));
        let e = err(json!({INPUT_TOOL: "add", INPUT_ARGUMENTS: {"c": 1}}));
        assert!(e.to_string().contains("(a, b)"), "{e}");
        assert!(e.to_string().starts_with("not sent: "), "{e}");
    }

    #[test]
    fn template_values_are_spliced_as_strings() {
        assert_eq!(
            fill_first_variable("greeting://{name}", NO_SUCH_VALUE).as_deref(),
            Some("greeting://cis-audit-no-such-value")
        );
        // Only the first expression; dot segments and the rest survive untouched.
        assert_eq!(
            fill_first_variable("file:///a/../{dir}/{file}", "X").as_deref(),
            Some("file:///a/../X/{file}")
        );
        assert_eq!(fill_first_variable("info://server", "X"), None);
        assert_eq!(fill_first_variable("x://{open", "X"), None);
    }

    #[test]
    fn prompts_are_chosen_by_their_required_argument() {
        let p = vec![
            json!({"name": "plain", "arguments": [{"name": "x"}]}),
            json!({"name": "review", "arguments": [{"name": "code", "required": true}, {"name": "style"}, {"name": " "}]}),
        ];
        let (c, d) = prompt_choice(&p);
        assert_eq!(c, Some(&p[1]));
        assert_eq!(d, Some(&p[1]));
        assert_eq!(
            Value::Object(placeholder_arguments(&p[1])),
            json!({"code": PROMPT_PLACEHOLDER, "style": PROMPT_PLACEHOLDER})
        );
        let (c, d) = prompt_choice(&p[..1]);
        assert_eq!((c, d), (None, Some(&p[0])));
        // A "required": "yes" is not a required argument.
        let yes = [json!({"name": "y", "arguments": [{"name": "a", "required": "yes"}]})];
        assert_eq!(prompt_choice(&yes).0, None);
    }

    fn run_legs(era: Era, inventory: Vec<(LegId, Value)>, inputs: Option<Value>) -> Vec<Record> {
        run_legs_on(era, None, inventory, inputs)
    }

    /// As [`run_legs`]; with `other_era`, the legs are sent as on the session of that
    /// other era (the journal qualifying the per-era legs, as `Probe::other_eras` does).
    fn run_legs_on(
        era: Era,
        other_era: Option<&str>,
        inventory: Vec<(LegId, Value)>,
        inputs: Option<Value>,
    ) -> Vec<Record> {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let j = crate::legs::fixture::journal(dir.path(), "http://127.0.0.1:1/mcp");
        for (l, result) in inventory {
            let key = derive::list_key(&l).expect("list leg");
            let body = json!({"jsonrpc": "2.0", "id": 1, "result": {key: result}}).to_string();
            let r = mcp_probe_schema::testkit::http_record(
                &[l],
                "http://127.0.0.1:1/mcp",
                r#"{"jsonrpc":"2.0","id":1,"method":"x/list"}"#,
                200,
                body.as_bytes(),
            );
            let Observation::Http(x) = r.observation else {
                unreachable!()
            };
            lock(&j).record(&[l], 0, 0, Observation::Http(x));
        }
        let revision = match era {
            Era::Modern => "2026-07-28",
            Era::Legacy => "2025-11-25",
        };
        let mut p = crate::legs::fixture::probe(&client, j.clone(), revision, inputs);
        lock(&j).qualify_legs(other_era);
        crate::legs::fixture::block_on(async {
            p.schema_call().await;
            p.template_reads().await;
            p.prompt_gets().await;
        });
        let recs = j.lock().expect("journal").records();
        recs.into_iter()
            .filter(|r| r.legs.iter().all(|l| derive::list_key(l).is_none()))
            .collect()
    }

    fn sent(r: &Record) -> (Value, Vec<Header>) {
        let Observation::Http(x) = &r.observation else {
            panic!("{r:?}")
        };
        (
            serde_json::from_slice(&x.request.body.bytes).expect("json"),
            x.request.headers.clone(),
        )
    }

    /// An inventory listing a tool, a resource, a template and a prompt, and the
    /// operator's input naming the tool to call.
    fn full_inventory() -> (Vec<(LegId, Value)>, Option<Value>) {
        let inv = vec![
            (leg::INVENTORY_TOOLS, json!(tools())),
            (
                leg::INVENTORY_RESOURCES,
                json!([{"uri": "info://server", "name": "i"}]),
            ),
            (
                leg::INVENTORY_RESOURCE_TEMPLATES,
                json!([{"uriTemplate": "greeting://{name}", "name": "g"}]),
            ),
            (
                leg::INVENTORY_PROMPTS,
                json!([{"name": "review", "arguments": [{"name": "code", "required": true}]}]),
            ),
        ];
        let inputs = Some(json!({INPUT_TOOL: "add", INPUT_ARGUMENTS: {"a": 1, "b": 2}}));
        (inv, inputs)
    }

    #[test]
    fn requests_are_complete_and_named_on_2026_07_28() {
        let (inv, inputs) = full_inventory();
        let recs = run_legs(Era::Modern, inv, inputs);
        // The call went out; each control was sent and failed (nobody listens), so the
        // probes behind it are recorded as skipped with the control's answer.
        let (b, h) = sent(&recs[0]);
        assert_eq!(recs[0].legs, vec![leg::SCHEMA_CALL.to_string()]);
        assert_eq!(b["method"], json!("tools/call"));
        assert_eq!(b["params"]["arguments"], json!({"b": 2}));
        assert!(b["params"]["_meta"].is_object());
        let name = |h: &[Header]| {
            h.iter()
                .find(|x| x.name.eq_ignore_ascii_case(header::NAME))
                .map(|x| x.value_str().to_string())
        };
        assert_eq!(name(&h).as_deref(), Some("add"));
        let (b, h) = sent(&recs[1]);
        assert_eq!(recs[1].legs, vec![leg::TEMPLATE_CONTROL.to_string()]);
        assert_eq!(b["params"]["uri"], json!("info://server"));
        assert_eq!(name(&h).as_deref(), Some("info://server"));
        assert!(
            matches!(&recs[2].observation, Observation::Skipped { reason } if reason.contains("control read of \"info://server\""))
        );
        let (b, _) = sent(&recs[3]);
        assert_eq!(
            recs[3].legs,
            vec![
                leg::PROMPT_CONTROL.to_string(),
                leg::PROMPT_NAME_CONTROL.to_string()
            ]
        );
        assert_eq!(
            b["params"]["arguments"],
            json!({"code": PROMPT_PLACEHOLDER})
        );
        assert_eq!(
            recs[4].legs,
            vec![
                leg::PROMPT_MISSING_ARG.to_string(),
                leg::PROMPT_UNKNOWN.to_string()
            ]
        );
    }

    #[test]
    fn nothing_to_pick_is_recorded_as_skipped_with_the_reason() {
        let recs = run_legs(Era::Legacy, vec![(leg::INVENTORY_PROMPTS, json!([]))], None);
        let reasons: Vec<(Vec<String>, String)> = recs
            .iter()
            .map(|r| match &r.observation {
                Observation::Skipped { reason } => (r.legs.clone(), reason.clone()),
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].1.contains("no schema_probe_tool"));
        assert!(reasons[1]
            .1
            .contains("no resource to read as a control (resources/list was not recorded)"));
        assert!(reasons[1]
            .1
            .contains("no resource template with a {variable}"));
        assert_eq!(reasons[2].0.len(), 4);
        assert!(reasons[2]
            .1
            .contains("no prompt to get (prompts/list lists none)"));
    }

    #[test]
    fn on_the_other_era_the_legs_are_qualified_and_complete_for_that_era() {
        let (inv, inputs) = full_inventory();
        // The legacy session of a 2026-07-28 server: picked from the negotiated
        // session's inventory, sent legacy-shaped, recorded `<leg>@2025-11-25`.
        let recs = run_legs_on(Era::Legacy, Some("2025-11-25"), inv, inputs);
        let legs: Vec<&str> = recs.iter().map(|r| r.legs[0].as_str()).collect();
        assert_eq!(
            legs,
            [
                "5.1.1d.call@2025-11-25",
                "5.1.2c.control@2025-11-25",
                "5.1.2c.missing@2025-11-25",
                "5.1.3c.control@2025-11-25",
                "5.1.3c.missing_arg@2025-11-25",
            ]
        );
        for r in [&recs[0], &recs[1], &recs[3]] {
            let (b, h) = sent(r);
            assert!(
                !h.iter().any(|x| x.name.eq_ignore_ascii_case(header::NAME)),
                "{h:?}"
            );
            assert!(
                b["params"]["_meta"]
                    .get("io.modelcontextprotocol/protocolVersion")
                    .is_none(),
                "{b}"
            );
        }
        assert_eq!(sent(&recs[0]).0["params"]["arguments"], json!({"b": 2}));
        assert_eq!(
            recs[3].legs,
            [
                "5.1.3c.control@2025-11-25".to_string(),
                "5.1.3d.control@2025-11-25".to_string()
            ]
        );
    }
}
