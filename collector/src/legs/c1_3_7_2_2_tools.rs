//! 1.3 and 7.2.2: the tool calls made only with the operator's consent (docs/collector.md,
//! "Tool calls"). They execute real tools, so nothing is sent unless the probe inputs say
//! `tool_calls_authorised: true` (the JSON boolean) and give `tool_arguments` (tool name
//! → arguments object); otherwise every leg is recorded skipped naming the input.
//!
//! * 1.3 (`1.3.control`, `1.3a.staged`): the tools advertised now are split against the
//!   tools of the approved baseline (an earlier bundle of the endpoint: `--baseline FILE`,
//!   else the grader's per-endpoint store), verified like any bundle. The control (a
//!   baseline tool) is called first; the staged tool (new since the baseline) only when
//!   the control executed cleanly. Reading the baseline is selection only: the grader
//!   re-derives everything against its own baseline.
//! * 7.2.2 (`7.2.2.channel`, `7.2.2.progress_call`): one `tools/call` carrying
//!   `_meta.progressToken`, its response stream read until the response; on the legacy
//!   revisions the session's standalone GET stream is read beside it and ends when the
//!   call's response has arrived (or at the request deadline), so a server that sends
//!   nothing costs no wait beyond the call itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mcp_probe_schema::model::{Era, Header, Record};
use mcp_probe_schema::vocab::{self, header, leg, LegId};
use serde_json::{json, Map, Value};

use super::c3_3_4_scope::TOOLS_CALL;
use crate::journal::lock;
use crate::mcp::{Probe, Reply};
use crate::transport::http::Request;

/// Operator input: consent to execute tools (only the JSON boolean `true`).
pub const INPUT_CONSENT: &str = "tool_calls_authorised";
/// Operator input: tool name → arguments object.
pub const INPUT_ARGUMENTS: &str = "tool_arguments";
/// The `progressToken` of the 7.2.2 call.
pub const PROGRESS_TOKEN: &str = "cis-probe-7.2.2";
/// Every leg this module records, in order.
pub const LEGS: [LegId; 5] = vocab::family::TOOL_CALLS;

/// Why no tool is called at all (the text is the skip note).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsentError {
    /// `tool_calls_authorised` is absent or not `true`.
    #[error(
        "not sent: {} is not true in the probe inputs (no tool is executed without the \
         operator's consent)",
        INPUT_CONSENT
    )]
    NoConsent,
    /// Consent without `tool_arguments`.
    #[error(
        "not sent: {} is true but the probe inputs give no {} object",
        INPUT_CONSENT,
        INPUT_ARGUMENTS
    )]
    NoArguments,
    /// An entry of `tool_arguments` is not an object.
    #[error("not sent: {args}[{0:?}] in the probe inputs is not a JSON object", args = INPUT_ARGUMENTS)]
    NotObject(String),
}

/// The operator's tool arguments when the inputs consent to tool calls.
pub fn consent(
    inputs: Option<&Value>,
) -> Result<BTreeMap<String, Map<String, Value>>, ConsentError> {
    if inputs.and_then(|i| i.get(INPUT_CONSENT)) != Some(&Value::Bool(true)) {
        return Err(ConsentError::NoConsent);
    }
    let Some(Value::Object(m)) = inputs.and_then(|i| i.get(INPUT_ARGUMENTS)) else {
        return Err(ConsentError::NoArguments);
    };
    m.iter()
        .map(|(k, v)| match v {
            Value::Object(a) => Ok((k.clone(), a.clone())),
            _ => Err(ConsentError::NotObject(k.clone())),
        })
        .collect()
}

/// One tool chosen for a call: its name and the arguments it is called with.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// The tool name.
    pub name: String,
    /// The operator's arguments, else `{}`.
    pub arguments: Map<String, Value>,
}

/// Pick one of `candidates` (advertised tool objects): those the operator gave arguments
/// for first, then those annotated `readOnlyHint: true` (an ordering aid only), then the
/// lexicographically smallest name.
pub fn pick(candidates: &[&Value], args: &BTreeMap<String, Map<String, Value>>) -> Option<Chosen> {
    let key = |t: &&&Value| {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        let read_only = t
            .get("annotations")
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            == Some(true);
        (!args.contains_key(name), !read_only, name.to_string())
    };
    let best = candidates
        .iter()
        .filter(|t| t.get("name").and_then(Value::as_str).is_some())
        .min_by_key(key)?;
    let name = best.get("name").and_then(Value::as_str)?.to_string();
    Some(Chosen {
        arguments: args.get(&name).cloned().unwrap_or_default(),
        name,
    })
}

/// The 1.3 selection: staged = advertised names not in the baseline, control =
/// advertised names in it. `Err` says why no pair can be called.
pub fn select(
    advertised: &[Value],
    baseline: &BTreeSet<String>,
    args: &BTreeMap<String, Map<String, Value>>,
) -> Result<(Chosen, Chosen), String> {
    let named = |t: &&Value| t.get("name").and_then(Value::as_str).map(str::to_string);
    let (control, staged): (Vec<&Value>, Vec<&Value>) = advertised
        .iter()
        .filter(|t| named(t).is_some())
        .partition(|t| named(t).is_some_and(|n| baseline.contains(&n)));
    let Some(s) = pick(&staged, args) else {
        return Err(format!(
            "not sent: no tool is advertised beyond the baseline ({} advertised, all recorded)",
            advertised.len()
        ));
    };
    let Some(c) = pick(&control, args) else {
        return Err(format!(
            "not sent: no advertised tool is in the baseline, so no control call can make a \
             refusal of {:?} attributable",
            s.name
        ));
    };
    Ok((c, s))
}

/// True when a `tools/call` reply executed cleanly: a result object, no JSON-RPC error,
/// not `isError`.
pub fn executed_cleanly(reply: &Reply) -> bool {
    reply
        .message
        .as_ref()
        .and_then(|m| m.get("error"))
        .is_none()
        && reply.result().is_some_and(|r| {
            r.is_object() && r.get("isError").and_then(Value::as_bool) != Some(true)
        })
}

/// The store path of `endpoint`'s baseline under `state` (the grader's
/// `--update-baseline` store: first 16 hex digits of SHA-256 over the endpoint URL).
pub fn stored_baseline(state: &Path, endpoint: &str) -> PathBuf {
    let key = hex::encode(&mcp_probe_schema::bundle::sha256(endpoint.as_bytes())[..8]);
    state.join("baselines").join(format!("{key}.mcpev"))
}

/// The tool names of the baseline bundle at `path`, verified like any bundle and of
/// `endpoint`; `Err` is the skip note.
pub fn baseline_tools(path: &Path, endpoint: &str) -> Result<BTreeSet<String>, String> {
    let shown = path.display();
    let bytes = std::fs::read(path)
        .map_err(|e| format!("not sent: cannot read the baseline {shown}: {e}"))?;
    let v = mcp_probe_schema::bundle::open_decoded(&bytes, &[])
        .map_err(|e| format!("not sent: the baseline {shown} does not verify: {e}"))?;
    let of = v
        .evidence
        .target
        .endpoint
        .clone()
        .unwrap_or_else(|| v.evidence.target.as_typed.clone());
    if of != endpoint {
        return Err(format!(
            "not sent: the baseline {shown} is of endpoint {of}, not of {endpoint}"
        ));
    }
    let inv = mcp_probe_schema::derive::inventory(&v.records).tools;
    if !inv.observed {
        return Err(format!(
            "not sent: the baseline {shown} recorded no tools/list"
        ));
    }
    Ok(inv
        .items
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect())
}

/// An `Mcp-Name` / `Mcp-Param-*` value as SEP-2243 sends it: as is when it is plain
/// ASCII (printable, space allowed inside, none leading or trailing) and does not itself
/// look like the sentinel; otherwise `=?base64?<Base64 of the UTF-8>?=`.
pub fn header_value(v: &str) -> String {
    let printable = v.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = v.starts_with(' ') || v.ends_with(' ');
    let sentinel = v.starts_with("=?base64?") && v.ends_with("?=");
    if printable && !padded && !sentinel {
        v.to_string()
    } else {
        use base64::Engine as _;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(v)
        )
    }
}

/// Largest integer an `x-mcp-header` integer may hold (the JS safe-integer range).
const SAFE_INTEGER: i64 = (1 << 53) - 1;

/// True for an RFC 9110 token.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The `Mcp-Param-{Name}` headers of a 2026-07-28 `tools/call` (SEP-2243): one per
/// property of `input_schema` marked `"x-mcp-header": "{Name}"` whose argument is present
/// and not null. A marked property is reached through `properties` keys only (nested
/// objects included), and must be a `string`, `integer` or `boolean`; the name must be a
/// token, unique case-insensitively. A schema that breaks these rules is a tool a client
/// must drop: the reason is returned instead. Values: strings per [`header_value`],
/// integers in decimal, booleans `true`/`false`.
pub fn param_headers(
    input_schema: Option<&Value>,
    arguments: &Map<String, Value>,
) -> Result<Vec<Header>, String> {
    fn walk<'a>(
        schema: &'a Value,
        path: &mut Vec<&'a str>,
        out: &mut Vec<(Vec<&'a str>, &'a Value, &'a Value)>,
    ) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (k, sub) in props {
            path.push(k.as_str());
            if let Some(name) = sub.get("x-mcp-header") {
                out.push((path.clone(), name, sub));
            }
            walk(sub, path, out);
            path.pop();
        }
    }
    let Some(schema) = input_schema else {
        return Ok(Vec::new());
    };
    let mut marked = Vec::new();
    walk(schema, &mut Vec::new(), &mut marked);
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (path, name, sub) in marked {
        let at = path.join(".");
        let Some(name) = name.as_str().filter(|n| is_token(n)) else {
            return Err(format!(
                "x-mcp-header of property {at:?} is {name}, not a non-empty RFC 9110 token"
            ));
        };
        if seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            return Err(format!("x-mcp-header {name:?} is used twice"));
        }
        seen.push(name.to_string());
        let ty = sub.get("type").and_then(Value::as_str);
        if !matches!(ty, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "x-mcp-header {name:?} sits on property {at:?} of type {}, not string, integer or boolean",
                sub.get("type").map_or("(none)".to_string(), Value::to_string)
            ));
        }
        let mut v = Some(arguments.get(path[0]));
        for k in &path[1..] {
            v = v.flatten().and_then(|x| x.get(*k)).map(Some);
        }
        let value = match v.flatten() {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => header_value(s),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => {
                if n.as_i64().is_some_and(|i| i.abs() > SAFE_INTEGER) {
                    return Err(format!(
                        "the argument {at:?} for x-mcp-header {name:?} is outside the safe-integer range"
                    ));
                }
                n.to_string()
            }
            // An object or array where the schema wants a scalar: the server's argument
            // validation answers it; there is no header form for it.
            Some(_) => continue,
        };
        out.push(Header::new(
            format!("{}{name}", header::PARAM_PREFIX),
            value,
        ));
    }
    Ok(out)
}

impl Probe<'_> {
    /// 1.3 and 7.2.2: the consented tool calls. `baseline` is `--baseline FILE`.
    pub async fn tool_calls(&mut self, baseline: Option<&Path>, info_only: bool) {
        let skip = |p: &Self, legs: &[LegId], why: &str| {
            lock(&p.journal).skip(legs, why.to_string());
        };
        if info_only {
            return skip(
                self,
                &LEGS,
                "not sent: --info run (connect and enumerate only)",
            );
        }
        let inputs = self
            .inputs
            .clone()
            .or_else(|| lock(&self.journal).inputs().cloned());
        let args = match consent(inputs.as_ref()) {
            Ok(a) => a,
            Err(why) => return skip(self, &LEGS, &why.to_string()),
        };
        let Some(endpoint) = self.endpoint.clone() else {
            return skip(self, &LEGS, "not sent: no endpoint was detected");
        };
        if self.era.is_none() {
            return skip(self, &LEGS, "not sent: no MCP session was established");
        }
        let advertised = self.advertised_tools();
        let control = self
            .staged_pair(&endpoint, baseline, &advertised, &args)
            .await;
        self.progress_call(&endpoint, &advertised, &args, control.as_deref())
            .await;
    }

    /// The tools of this run's inventory.
    fn advertised_tools(&self) -> Vec<Value> {
        let mut recs: Vec<Record> = Vec::new();
        lock(&self.journal).for_each_record_of(
            |legs| legs.iter().any(|l| leg::INVENTORY_TOOLS == *l),
            |r| {
                recs.push(r);
                true
            },
        );
        mcp_probe_schema::derive::inventory(&recs).tools.items
    }

    /// The 1.3 control and staged calls; returns the control tool's name when it was
    /// called.
    async fn staged_pair(
        &mut self,
        endpoint: &url::Url,
        baseline: Option<&Path>,
        advertised: &[Value],
        args: &BTreeMap<String, Map<String, Value>>,
    ) -> Option<String> {
        let both = [leg::STAGED_CONTROL, leg::STAGED_CALL];
        let path = match baseline {
            Some(p) => p.to_path_buf(),
            None => match crate::keys::state_dir() {
                Ok(state) => stored_baseline(&state, endpoint.as_str()),
                Err(e) => {
                    self.skip(
                        &both,
                        format!("not sent: no baseline to select against ({e})"),
                    );
                    return None;
                }
            },
        };
        if baseline.is_none() && !path.exists() {
            self.skip(
                &both,
                format!(
                    "not sent: no baseline of this endpoint ({} does not exist; record one with \
                     mcp-grade --update-baseline, or give --baseline)",
                    path.display()
                ),
            );
            return None;
        }
        let known = match baseline_tools(&path, endpoint.as_str()) {
            Ok(k) => k,
            Err(why) => {
                self.skip(&both, why);
                return None;
            }
        };
        let (control, staged) = match select(advertised, &known, args) {
            Ok(x) => x,
            Err(why) => {
                self.skip(&both, why);
                return None;
            }
        };
        let reply = self
            .tool_call(leg::STAGED_CONTROL, endpoint, &control, None)
            .await;
        if executed_cleanly(&reply) {
            self.tool_call(leg::STAGED_CALL, endpoint, &staged, None)
                .await;
        } else {
            self.skip(
                &[leg::STAGED_CALL],
                format!(
                    "not sent: the control {:?} did not execute cleanly ({}), so a refusal of {:?} \
                     would not be attributable",
                    control.name,
                    reply.describe(),
                    staged.name
                ),
            );
        }
        Some(control.name)
    }

    /// 7.2.2: one `tools/call` with a progressToken; on the legacy revisions the
    /// standalone GET stream is read beside it until the call's response arrived.
    async fn progress_call(
        &mut self,
        endpoint: &url::Url,
        advertised: &[Value],
        args: &BTreeMap<String, Map<String, Value>>,
        control: Option<&str>,
    ) {
        let both = [leg::NOTIFY_CHANNEL, leg::NOTIFY_PROGRESS_CALL];
        let is_advertised = |n: &str| {
            advertised
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(n))
        };
        let name = control
            .filter(|c| args.contains_key(*c))
            .map(str::to_string)
            .or_else(|| args.keys().find(|n| is_advertised(n)).cloned());
        let Some(name) = name else {
            return self.skip(
                &both,
                format!(
                    "not sent: no tool named in {INPUT_ARGUMENTS} is advertised (7.2.2 calls only a \
                     tool the operator gave arguments for)"
                ),
            );
        };
        let tool = Chosen {
            arguments: args.get(&name).cloned().unwrap_or_default(),
            name,
        };
        if self.era != Some(Era::Modern) {
            self.no_listen_on_handshake_revision();
        }
        if self.sse.is_some() {
            // HTTP+SSE has one stream per session: progress notifications arrive on it,
            // recorded as events beside the call's answer.
            self.skip(
                &[leg::NOTIFY_CHANNEL],
                "not opened: on HTTP+SSE (2024-11-05) the session's one event stream carries \
                 every notification; a second GET would open another session",
            );
            self.tool_call(
                leg::NOTIFY_PROGRESS_CALL,
                endpoint,
                &tool,
                Some(PROGRESS_TOKEN),
            )
            .await;
            return;
        }
        if self.era == Some(Era::Modern) {
            self.skip(
                &[leg::NOTIFY_CHANNEL],
                format!(
                    "not opened: {} has no standalone GET stream; notifications about a request \
                     arrive on that request's response stream (7.2.2.progress_call), and \
                     subscriptions/listen carries only change notifications",
                    vocab::REV_2026_07_28
                ),
            );
            // Its notification channel, subscriptions/listen: c7_2_2_listen.
            self.progress_call_listening(endpoint, &tool).await;
            return;
        }
        let mut h = vec![Header::new(header::ACCEPT, "text/event-stream")];
        if let Some(rev) = &self.revision {
            if vocab::sends_version_header(rev) {
                h.push(Header::new(header::PROTOCOL_VERSION, rev.clone()));
            }
        }
        if let Some(sid) = &self.session_id {
            h.push(Header::new(header::SESSION_ID, sid.clone()));
        }
        h.extend(self.auth_headers("GET", endpoint));
        let get = Request {
            method: "GET".into(),
            url: endpoint.clone(),
            headers: h,
            body: Vec::new(),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        let client = self.client;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let channel = client.send_until(get, rx);
        let call = async {
            let r = self
                .tool_call(
                    leg::NOTIFY_PROGRESS_CALL,
                    endpoint,
                    &tool,
                    Some(PROGRESS_TOKEN),
                )
                .await;
            let _ = tx.send(true);
            r
        };
        let (sent, _) = tokio::join!(channel, call);
        let mut j = lock(&self.journal);
        sent.record(&mut j, leg::TLS_MODERN, leg::NOTIFY_CHANNEL);
    }

    /// One complete `tools/call` of `tool` for the negotiated revision, with the
    /// credential when held, recorded under `l`.
    pub(super) async fn tool_call(
        &mut self,
        l: LegId,
        endpoint: &url::Url,
        tool: &Chosen,
        progress: Option<&str>,
    ) -> Reply {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(tool.name.clone()));
        params.insert("arguments".into(), Value::Object(tool.arguments.clone()));
        if progress.is_some() && self.era != Some(Era::Modern) {
            params.insert("_meta".into(), json!({}));
        }
        let (mut h, mut body, id) = self.complete(TOOLS_CALL, params);
        if let Some(t) = progress {
            body["params"]["_meta"]["progressToken"] = json!(t);
        }
        if self.era == Some(Era::Modern) {
            h.push(Header::new(header::NAME, header_value(&tool.name)));
            let advertised = self.advertised_tools();
            let schema = advertised
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(tool.name.as_str()))
                .and_then(|t| t.get("inputSchema"));
            match param_headers(schema, &tool.arguments) {
                Ok(params) => h.extend(params),
                Err(why) => {
                    // A client drops such a tool from tools/list (SEP-2243): not called.
                    let why = format!(
                        "not sent: the inputSchema of {:?} breaks the x-mcp-header rules ({why}), \
                         so a client drops the tool",
                        tool.name
                    );
                    let seq = lock(&self.journal).skip(&[l], why.clone());
                    return Reply {
                        status: None,
                        headers: Vec::new(),
                        message: None,
                        error: None,
                        cut: Some(why),
                        seq,
                    };
                }
            }
        }
        let reply = self
            .rpc_awaiting(&[l], endpoint, h, &body, Some(Value::from(id)))
            .await;
        self.note_insufficient_scope(&reply, l, tool, progress);
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::model::Observation;

    fn tool(name: &str, read_only: Option<bool>) -> Value {
        match read_only {
            Some(r) => json!({"name": name, "annotations": {"readOnlyHint": r}}),
            None => json!({"name": name}),
        }
    }

    fn args(names: &[&str]) -> BTreeMap<String, Map<String, Value>> {
        names
            .iter()
            .map(|n| {
                let mut m = Map::new();
                m.insert("x".into(), json!(1));
                (n.to_string(), m)
            })
            .collect()
    }

    #[test]
    fn mcp_param_headers_mirror_the_marked_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "note": {"type": "string", "x-mcp-header": "Note"},
            "absent": {"type": "string", "x-mcp-header": "Absent"},
            "nested": {"type": "object", "properties": {
                "id": {"type": "string", "x-mcp-header": "Tenant"}}},
            "plain": {"type": "string"},
        }});
        let args = json!({"region": "eu west", "count": 42, "dry": false, "note": " café ",
            "nested": {"id": "=?base64?x?="}, "plain": "not mirrored", "absent": null});
        let h = param_headers(Some(&schema), args.as_object().unwrap()).unwrap();
        let got: Vec<(String, String)> = h
            .iter()
            .map(|h| (h.name.to_string(), h.value_str().into_owned()))
            .collect();
        let b64 = |s: &str| {
            use base64::Engine as _;
            format!(
                "=?base64?{}?=",
                base64::engine::general_purpose::STANDARD.encode(s)
            )
        };
        let want: Vec<(String, String)> = [
            ("Mcp-Param-Count", "42".to_string()),
            ("Mcp-Param-Dry-Run", "false".to_string()),
            ("Mcp-Param-Tenant", b64("=?base64?x?=")),
            ("Mcp-Param-Note", b64(" café ")),
            ("Mcp-Param-Region", "eu west".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut want_sorted = want;
        want_sorted.sort();
        assert_eq!(got_sorted, want_sorted);
        // No schema, or no marked property: no header.
        assert!(param_headers(None, &Map::new()).unwrap().is_empty());

        // Schemas a client must drop the tool for.
        for bad in [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"},
                                  "b": {"type": "string", "x-mcp-header": "x"}}}),
        ] {
            assert!(param_headers(Some(&bad), &Map::new()).is_err(), "{bad}");
        }
        let big = json!({"properties": {"n": {"type": "integer", "x-mcp-header": "N"}}});
        let args = json!({"n": 9_007_199_254_740_993_i64});
        assert!(param_headers(Some(&big), args.as_object().unwrap()).is_err());
        assert_eq!(header_value("get_weather"), "get_weather");
        assert_eq!(header_value("a b"), "a b");
        assert_eq!(header_value("tab\tin"), b64("tab\tin"));
    }

    #[test]
    fn consent_is_the_boolean_true_with_arguments() {
        let e = |v: Value| consent(Some(&v)).unwrap_err();
        assert_eq!(consent(None).unwrap_err(), ConsentError::NoConsent);
        assert_eq!(
            e(json!({INPUT_CONSENT: "true", INPUT_ARGUMENTS: {}})),
            ConsentError::NoConsent
        );
        assert_eq!(
            e(json!({INPUT_CONSENT: 1, INPUT_ARGUMENTS: {}})),
            ConsentError::NoConsent
        );
        assert_eq!(
            e(json!({INPUT_ARGUMENTS: {"a": {}}})),
            ConsentError::NoConsent
        );
        assert_eq!(e(json!({INPUT_CONSENT: true})), ConsentError::NoArguments);
        assert_eq!(
            e(json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"a": [1]}})),
            ConsentError::NotObject("a".into())
        );
        assert!(ConsentError::NoConsent
            .to_string()
            .contains("tool_calls_authorised is not true"));
        let ok = consent(Some(
            &json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"a": {"k": 2}}}),
        ))
        .expect("consent");
        assert_eq!(ok["a"]["k"], json!(2));
    }

    #[test]
    fn pick_prefers_arguments_then_read_only_then_name() {
        let a = tool("b_plain", None);
        let b = tool("c_ro", Some(true));
        let c = tool("a_plain", Some(false));
        let all = [&a, &b, &c];
        assert_eq!(pick(&all, &args(&[])).expect("pick").name, "c_ro");
        assert_eq!(
            pick(&all, &args(&["b_plain"])).expect("pick").name,
            "b_plain"
        );
        assert_eq!(
            pick(&all, &args(&["b_plain"])).expect("pick").arguments["x"],
            json!(1)
        );
        let all = [&a, &c];
        assert_eq!(pick(&all, &args(&[])).expect("pick").name, "a_plain");
        assert!(pick(&[], &args(&[])).is_none());
    }

    #[test]
    fn selection_splits_against_the_baseline() {
        let adv = vec![tool("old", None), tool("new_b", None), tool("new_a", None)];
        let base: BTreeSet<String> = ["old".to_string(), "gone".to_string()].into();
        let (c, s) = select(&adv, &base, &args(&[])).expect("pair");
        assert_eq!((c.name.as_str(), s.name.as_str()), ("old", "new_a"));
        let (_, s) = select(&adv, &base, &args(&["new_b"])).expect("pair");
        assert_eq!(s.name, "new_b");
        let all: BTreeSet<String> = ["old", "new_a", "new_b"].map(String::from).into();
        assert!(select(&adv, &all, &args(&[]))
            .unwrap_err()
            .contains("no tool is advertised beyond the baseline (3 advertised, all recorded)"));
        assert!(select(&adv, &BTreeSet::new(), &args(&[]))
            .unwrap_err()
            .contains("no control call"));
        assert!(select(&[], &base, &args(&[]))
            .unwrap_err()
            .contains("0 advertised"));
    }

    #[test]
    fn the_store_path_is_the_graders() {
        let p = stored_baseline(Path::new("/s"), "http://127.0.0.1:1/mcp");
        let key = hex::encode(&mcp_probe_schema::bundle::sha256(b"http://127.0.0.1:1/mcp")[..8]);
        assert_eq!(p, Path::new("/s/baselines").join(format!("{key}.mcpev")));
    }

    #[test]
    fn a_baseline_must_verify_and_be_of_the_endpoint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.mcpev");
        let bytes = mcp_probe_schema::testkit::sample_bundle(
            &mcp_probe_schema::testkit::test_key(1),
            2,
            200,
        );
        std::fs::write(&path, &bytes).expect("write");
        let names = baseline_tools(&path, "http://127.0.0.1:8080/mcp").expect("tools");
        assert_eq!(names, ["t0", "t1"].map(String::from).into());
        assert!(baseline_tools(&path, "http://127.0.0.1:9/mcp")
            .unwrap_err()
            .contains("is of endpoint http://127.0.0.1:8080/mcp"));
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 10] ^= 1;
        std::fs::write(&path, &bad).expect("write");
        assert!(baseline_tools(&path, "http://127.0.0.1:8080/mcp")
            .unwrap_err()
            .contains("does not verify"));
        assert!(baseline_tools(&dir.path().join("none"), "x")
            .unwrap_err()
            .contains("cannot read"));
    }

    fn run_leg(inputs: Option<Value>, baseline: Option<&Path>) -> Vec<Record> {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let j = crate::legs::fixture::journal(dir.path(), "http://127.0.0.1:1/mcp");
        let mut p = crate::legs::fixture::probe(&client, j.clone(), "2025-11-25", inputs);
        crate::legs::fixture::block_on(p.tool_calls(baseline, false));
        let recs = j.lock().expect("journal").records();
        recs
    }

    fn skipped(r: &Record) -> &str {
        match &r.observation {
            Observation::Skipped { reason } => reason,
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn without_consent_nothing_is_sent() {
        for inputs in [
            None,
            Some(json!({INPUT_ARGUMENTS: {"echo": {"text": "x"}}})),
            Some(json!({INPUT_CONSENT: false, INPUT_ARGUMENTS: {"echo": {}}})),
        ] {
            let r = run_leg(inputs, None);
            assert_eq!(r.len(), 1, "{r:?}");
            assert_eq!(r[0].legs, LEGS.map(|l| l.to_string()).to_vec());
            assert!(skipped(&r[0]).contains("tool_calls_authorised is not true"));
        }
    }

    #[test]
    fn without_a_baseline_1_3_is_skipped_and_without_an_advertised_tool_7_2_2_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("none.mcpev");
        let i = Some(json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"echo": {"text": "x"}}}));
        let r = run_leg(i, Some(&missing));
        // Nothing was sent: every record is a skip (the inventory is empty here).
        assert!(
            r.iter()
                .all(|r| matches!(r.observation, Observation::Skipped { .. })),
            "{r:?}"
        );
        assert!(skipped(&r[0]).contains("cannot read the baseline"), "{r:?}");
        assert!(skipped(&r[1]).contains("no tool named in tool_arguments is advertised"));
    }

    /// A server that answers a GET with an event stream holding one event and then
    /// holds it open for 10 s; its port.
    fn holding_stream() -> u16 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            if let Ok((mut s, _)) = l.accept() {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let ev = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"x\",\"progress\":1}}\n\n";
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{ev}\r\n",
                    ev.len()
                );
                let _ = s.flush();
                std::thread::sleep(std::time::Duration::from_secs(10));
            }
        });
        port
    }

    #[test]
    fn the_side_stream_ends_when_told_not_at_the_deadline() {
        let port = holding_stream();
        let client = crate::transport::http::Client::new(
            crate::transport::tls::Trust::load(None).expect("trust"),
            std::time::Duration::from_secs(10),
            1 << 16,
        );
        let req = Request {
            method: "GET".into(),
            url: url::Url::parse(&format!("http://127.0.0.1:{port}/mcp")).expect("url"),
            headers: vec![Header::new(header::ACCEPT, "text/event-stream")],
            body: Vec::new(),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let t0 = std::time::Instant::now();
        let sent = rt.block_on(async {
            let (tx, rx) = tokio::sync::watch::channel(false);
            let stop = async {
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                let _ = tx.send(true);
            };
            tokio::join!(client.send_until(req, rx), stop).0
        });
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(3),
            "{:?}",
            t0.elapsed()
        );
        let mcp_probe_schema::model::HttpOutcome::Response(r) = &sent.exchange.outcome else {
            panic!("{:?}", sent.exchange.outcome)
        };
        assert_eq!(r.status, 200);
        assert_eq!(
            r.body.end,
            mcp_probe_schema::model::BodyEnd::StoppedAfterResponse
        );
        assert!(String::from_utf8_lossy(&r.body.bytes).contains("notifications/progress"));
    }
}
