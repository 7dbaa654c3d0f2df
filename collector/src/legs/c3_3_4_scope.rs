//! 3.3.4e: the operator's out-of-scope call (docs/collector.md, "Probe inputs"). Sent
//! only when the probe inputs name `scope_probe_tool` — a tool the
//! operator asserts is **outside** the token's grant — and a credential is held: one
//! complete `tools/call` for the negotiated revision (session id and version header, or
//! the 2026-07-28 headers, `Mcp-Name` and `_meta` envelope), carrying the credential and
//! a `progressToken` (7.2.2 reads it), recorded under `3.3.4e.call`. The collector
//! decides nothing; the grader reads whether the server refused it for its scope.

use base64::Engine as _;
use mcp_probe_schema::model::{Era, Header};
use mcp_probe_schema::vocab::{header, leg};
use serde_json::{json, Map, Value};

use crate::journal::lock;
use crate::mcp::Probe;

/// Operator input: the tool outside the grant.
pub const INPUT_TOOL: &str = "scope_probe_tool";
/// Operator input: its arguments (a JSON object; `{}` when absent).
pub const INPUT_ARGUMENTS: &str = "scope_probe_arguments";
/// The `progressToken` of the call.
pub const PROGRESS_TOKEN: &str = "cis-probe-3.3.4e";
/// JSON-RPC method of the call.
pub const TOOLS_CALL: &str = "tools/call";

/// The `Mcp-Name` value for `name`: as is when it is visible ASCII, else the
/// `=?base64?…?=` form of 2026-07-28.
pub fn mcp_name_value(name: &str) -> String {
    if !name.is_empty() && name.bytes().all(|b| (0x21..0x7f).contains(&b)) {
        name.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(name)
        )
    }
}

/// The tool and arguments the inputs name, or why the call is not sent.
pub fn scope_probe_input(
    inputs: Option<&Value>,
) -> Result<(String, Map<String, Value>), ScopeInputError> {
    let tool = inputs
        .and_then(|i| i.get(INPUT_TOOL))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or(ScopeInputError::NoTool)?;
    let args = match inputs.and_then(|i| i.get(INPUT_ARGUMENTS)) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(ScopeInputError::NotObject(match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                _ => "a boolean",
            }))
        }
    };
    Ok((tool.to_string(), args))
}

/// Why the probe inputs give no out-of-scope call (the text is the skip note).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScopeInputError {
    /// No `scope_probe_tool`.
    #[error(
        "not sent: no {} in the probe inputs (no out-of-scope call is made without one)",
        INPUT_TOOL
    )]
    NoTool,
    /// `scope_probe_arguments` is not an object; says what it is.
    #[error("not sent: {} in the probe inputs is not a JSON object ({})", INPUT_ARGUMENTS, .0)]
    NotObject(&'static str),
}

impl Probe<'_> {
    /// 3.3.4e: the operator's out-of-scope `tools/call`. `info_only` records it skipped.
    pub async fn scope_probe_leg(&mut self, info_only: bool) {
        let skip = |p: &Self, why: String| {
            lock(&p.journal).skip(&[leg::SCOPE_PROBE_CALL], why);
        };
        if info_only {
            skip(
                self,
                "not sent: --info run (connect and enumerate only)".into(),
            );
            return;
        }
        let inputs = self
            .inputs
            .clone()
            .or_else(|| lock(&self.journal).inputs().cloned());
        let (tool, args) = match scope_probe_input(inputs.as_ref()) {
            Ok(x) => x,
            Err(why) => return skip(self, why.to_string()),
        };
        let Some(endpoint) = self.endpoint.clone() else {
            return skip(self, "not sent: no endpoint was detected".into());
        };
        if self.era.is_none() {
            return skip(self, "not sent: no MCP session was established".into());
        }
        if self.token.is_none() {
            return skip(
                self,
                format!("not sent: no credential is held, so {tool:?} cannot test a token's grant"),
            );
        }
        let mut params = Map::new();
        params.insert("name".into(), Value::String(tool.clone()));
        params.insert("arguments".into(), Value::Object(args));
        let (mut h, mut body, id) = match self.era {
            Some(Era::Modern) => self.modern(TOOLS_CALL, params),
            _ => {
                params.insert("_meta".into(), json!({}));
                let (h, b, id) = self.legacy(TOOLS_CALL, params, false);
                (h, b, id.unwrap_or_default())
            }
        };
        body["params"]["_meta"]["progressToken"] = json!(PROGRESS_TOKEN);
        if self.era == Some(Era::Modern) {
            h.push(Header::new(header::NAME, mcp_name_value(&tool)));
        }
        let _ = self
            .rpc_awaiting(
                &[leg::SCOPE_PROBE_CALL],
                &endpoint,
                h,
                &body,
                Some(Value::from(id)),
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_name_a_tool_and_an_object() {
        assert!(scope_probe_input(None)
            .unwrap_err()
            .to_string()
            .contains("no scope_probe_tool"));
        let i = json!({INPUT_TOOL: "  "});
        assert!(scope_probe_input(Some(&i)).is_err());
        let i = json!({INPUT_TOOL: "admin_op"});
        assert_eq!(
            scope_probe_input(Some(&i)).unwrap(),
            ("admin_op".into(), Map::new())
        );
        let i = json!({INPUT_TOOL: "admin_op", INPUT_ARGUMENTS: {"a": 1}});
        assert_eq!(scope_probe_input(Some(&i)).unwrap().1["a"], json!(1));
        let i = json!({INPUT_TOOL: "admin_op", INPUT_ARGUMENTS: [1]});
        assert_eq!(
            scope_probe_input(Some(&i)).unwrap_err(),
            ScopeInputError::NotObject("an array")
        );
        assert!(scope_probe_input(Some(&i))
            .unwrap_err()
            .to_string()
            .contains("not a JSON object (an array)"));
    }

    #[test]
    fn mcp_name_is_encoded_only_when_needed() {
        assert_eq!(mcp_name_value("admin_op"), "admin_op");
        assert_eq!(mcp_name_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(mcp_name_value("a b"), "=?base64?YSBi?=");
    }

    fn run_leg(
        inputs: Option<Value>,
        token: Option<&str>,
        era: Option<Era>,
    ) -> Vec<mcp_probe_schema::model::Record> {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let j = crate::legs::fixture::journal(dir.path(), "http://127.0.0.1:1/mcp");
        let mut p = Probe::new(&client, j.clone(), token.map(str::to_string), 1);
        p.endpoint = Some(url::Url::parse("http://127.0.0.1:1/mcp").expect("url"));
        p.era = era;
        p.revision = era.map(|e| match e {
            Era::Modern => "2026-07-28".to_string(),
            Era::Legacy => "2025-11-25".to_string(),
        });
        p.session_id = Some("sid-1".into());
        p.inputs = inputs;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(p.scope_probe_leg(false));
        let recs = j.lock().expect("journal").records();
        recs
    }

    #[test]
    fn gates_skip_with_their_reason() {
        let skipped = |recs: &[mcp_probe_schema::model::Record]| match &recs[0].observation {
            mcp_probe_schema::model::Observation::Skipped { reason } => reason.clone(),
            o => panic!("{o:?}"),
        };
        let r = run_leg(None, Some("t"), Some(Era::Legacy));
        assert!(skipped(&r).contains("no scope_probe_tool"));
        let i = Some(json!({INPUT_TOOL: "admin_op"}));
        let r = run_leg(i.clone(), None, Some(Era::Legacy));
        assert!(skipped(&r).contains("no credential"));
        let r = run_leg(i, Some("t"), None);
        assert!(skipped(&r).contains("no MCP session"));
    }

    #[test]
    fn the_call_is_complete_for_the_revision() {
        let i = Some(json!({INPUT_TOOL: "admin_op", INPUT_ARGUMENTS: {"x": 1}}));
        for era in [Era::Legacy, Era::Modern] {
            let r = run_leg(i.clone(), Some("tok"), Some(era));
            assert_eq!(r.len(), 1);
            assert_eq!(r[0].legs, vec![leg::SCOPE_PROBE_CALL.to_string()]);
            let mcp_probe_schema::model::Observation::Http(x) = &r[0].observation else {
                panic!("{r:?}")
            };
            let b: Value = serde_json::from_slice(&x.request.body.bytes).expect("json");
            assert_eq!(b["method"], json!("tools/call"));
            assert_eq!(b["params"]["name"], json!("admin_op"));
            assert_eq!(b["params"]["arguments"], json!({"x": 1}));
            assert_eq!(b["params"]["_meta"]["progressToken"], json!(PROGRESS_TOKEN));
            let has = |n: &str| {
                x.request
                    .headers
                    .iter()
                    .any(|h| h.name.eq_ignore_ascii_case(n))
            };
            assert!(has(header::AUTHORIZATION));
            match era {
                Era::Modern => {
                    assert!(has(header::NAME) && has(header::METHOD));
                    // The 2026-07-28 envelope and the progressToken.
                    assert!(b["params"]["_meta"]
                        .as_object()
                        .is_some_and(|m| m.len() > 1));
                }
                Era::Legacy => {
                    assert!(has(header::SESSION_ID) && has(header::PROTOCOL_VERSION));
                    assert!(!has(header::NAME));
                }
            }
        }
    }
}
