//! Sub-verdict e of rule `scopes-minimized`: was the operator's out-of-scope call refused
//! *for its scope*? (docs/checks.md, under the rule's row). Reads the `3.3.4e.call` leg
//! (collector/src/legs_scope.rs). No substring markers: only the OAuth signals that name
//! the reason count as a scope refusal —
//!
//! * `WWW-Authenticate` with a challenge whose `error` is `insufficient_scope` (RFC 6750
//!   §3.1; parsed from the raw bytes by [`www_authenticate::parse`]), or
//! * a 403 whose JSON body's `error` member is `insufficient_scope`.
//!
//! A normal result means the tool executed → fail. Anything else is a refusal whose
//! reason answers a different question (401 for the credential itself, a bare 403, a
//! JSON-RPC error, an `isError` result), or no call recorded → unknown; an unanswered request or a bare 5xx /
//! 4xx without a protocol error body → error.

use mcp_probe_schema::model::HttpOutcome;
use mcp_probe_schema::vocab::{header, leg};
use mcp_probe_schema::www_authenticate;
use serde_json::Value;
use std::borrow::Cow;

use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{SubOutcome, SubVerdict};

/// The sub-verdict this grades (local id).
pub const LEG: &str = "e";
/// Probe input naming the tool outside the grant (an operator input of the collector).
pub const INPUT_TOOL: &str = "scope_probe_tool";
/// Probe input with its arguments.
pub const INPUT_ARGUMENTS: &str = "scope_probe_arguments";
/// The OAuth error code of a scope refusal (RFC 6750 §3.1).
pub const INSUFFICIENT_SCOPE: &str = "insufficient_scope";

fn quote(s: &str) -> String {
    escape_line(&s.chars().take(200).collect::<String>())
}

/// The `WWW-Authenticate` field naming `insufficient_scope`, if any.
fn scope_challenge(x: &Exchange<'_>) -> Option<String> {
    let r = x.response()?;
    r.headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(header::WWW_AUTHENTICATE))
        .find(|h| {
            www_authenticate::parse(&h.value)
                .challenges
                .iter()
                .any(|c| c.param("error") == Some(INSUFFICIENT_SCOPE))
        })
        .map(|h| quote(&h.value_str()))
}

/// The tool the operator named outside the grant, or the leg when no call was to be made
/// (no tool named, or arguments that are not a JSON object).
fn named_tool(ev: &Bundle) -> Result<String, SubVerdict> {
    let inputs = ev.payload.run.inputs.as_ref();
    let Some(tool) = inputs
        .and_then(|i| i.get(INPUT_TOOL))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
    else {
        return Err(SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!("no {INPUT_TOOL} in the probe inputs; no out-of-scope call made"),
        ));
    };
    let tool = escape_line(tool.trim());
    if inputs
        .and_then(|i| i.get(INPUT_ARGUMENTS))
        .is_some_and(|a| !a.is_object() && !a.is_null())
    {
        return Err(SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!("{INPUT_ARGUMENTS} in the probe inputs is not a JSON object; no out-of-scope call made"),
        ));
    }
    Ok(tool)
}

/// The leg when no call of `tool` was recorded.
fn not_called(ev: &Bundle, tool: &str) -> SubVerdict {
    match ev.skipped(leg::SCOPE_PROBE_CALL) {
        Some(r) => SubVerdict::new(LEG, SubOutcome::Unknown, crate::format_exact!("the call of \"{tool}\" was {}", crate::fmt::Line(r))),
        None if ev.revision().is_none() => SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!("no out-of-scope call made: no MCP session was established, so \"{tool}\" was not called"),
        ),
        // A bundle from a collector that predates the leg: re-collecting decides.
        None => SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the probe inputs name {INPUT_TOOL} \"{tool}\", but no out-of-scope call was recorded (leg {} \
                 is missing from this bundle); re-collect with a collector that records it",
                leg::SCOPE_PROBE_CALL
            ),
        ),
    }
}

/// The leg for an answer that names no scope refusal: a normal result means the tool
/// executed; anything else refused for another reason, or is not attributable.
fn other_answer(x: &Exchange<'_>, tool: &str, status: u16, at: &str) -> SubVerdict {
    let answer = x.answer();
    let rpc_error = answer
        .as_ref()
        .and_then(|a| a.get("error"))
        .filter(|e| e.is_object());
    let result = answer
        .as_ref()
        .and_then(|a| a.get("result"))
        .filter(|r| !r.is_null());
    match (status, rpc_error, result) {
        (401, _, _) => SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the call of \"{tool}\" was refused with HTTP 401 without {INSUFFICIENT_SCOPE} ({at}): the credential \
                 itself was refused, which says nothing about its grant"
            ),
        ),
        (403, _, _) => SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the call of \"{tool}\" was refused with HTTP 403 without {INSUFFICIENT_SCOPE} in WWW-Authenticate or \
                 the body ({at}): the reason is not readable (an Origin check or a WAF answers the same)"
            ),
        ),
        (_, Some(e), _) => SubVerdict::new(
            LEG,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the call of \"{tool}\" drew JSON-RPC error {} \"{}\" (HTTP {status}, {at}): a refusal that does not \
                 name the scope",
                e.get("code").map(Value::to_string).unwrap_or_default(),
                quote(e.get("message").and_then(Value::as_str).unwrap_or(""))
            ),
        ),
        (200..=299, None, Some(r)) if r.get("isError").and_then(Value::as_bool) == Some(true) => {
            let text: Vec<String> = r
                .get("content")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|i| i.get("text").and_then(Value::as_str))
                        .map(quote)
                        .collect()
                })
                .unwrap_or_default();
            SubVerdict::new(
                LEG,
                SubOutcome::Unknown,
                crate::format_exact!(
                    "the call of \"{tool}\" returned a tool error ({at}: \"{}\"): the tool ran or refused for a reason \
                     that is not an OAuth scope refusal",
                    quote(&text.join(" "))
                ),
            )
        }
        (200..=299, None, Some(_)) => SubVerdict::new(
            LEG,
            SubOutcome::Fail,
            crate::format_exact!("the operator names \"{tool}\" as outside the grant and it executed: HTTP {status} with a result ({at})"),
        ),
        (s, None, _) => SubVerdict::new(
            LEG,
            SubOutcome::Error,
            crate::format_exact!(
                "the call of \"{tool}\" was answered HTTP {s} without a JSON-RPC answer ({at}); a gateway may have \
                 produced it"
            ),
        ),
    }
}

/// Classify the recorded out-of-scope call (the whole of sub-verdict e).
pub fn classify_scope_refusal(ev: &Bundle) -> SubVerdict {
    let tool = match named_tool(ev) {
        Ok(tool) => tool,
        Err(leg) => return leg,
    };
    let Some(x) = ev.exchanges(leg::SCOPE_PROBE_CALL).last() else {
        return not_called(ev, &tool);
    };
    let at = crate::format_exact!("record #{}", x.seq());
    let status = match &x.http.outcome {
        HttpOutcome::Error(e) => {
            return SubVerdict::new(
                LEG,
                SubOutcome::Error,
                crate::format_exact!(
                    "the call of \"{tool}\" drew no answer ({at}: {})",
                    crate::fmt::Line(&e.message)
                ),
            )
        }
        HttpOutcome::Response(r) => r.status,
    };
    if let Some(field) = scope_challenge(&x) {
        return SubVerdict::new(
            LEG,
            SubOutcome::Pass,
            crate::format_exact!("\"{tool}\", outside the grant, was refused for its scope: HTTP {status} ({at}) with WWW-Authenticate: {field}"),
        );
    }
    // Borrowed from the bundle's memo (no copy of the parsed body).
    let body = x.body_json_cow().unwrap_or(Cow::Owned(Value::Null));
    if status == 403 && body.get("error").and_then(Value::as_str) == Some(INSUFFICIENT_SCOPE) {
        return SubVerdict::new(
            LEG,
            SubOutcome::Pass,
            crate::format_exact!(
                "\"{tool}\", outside the grant, was refused for its scope: HTTP 403 ({at}) with error {INSUFFICIENT_SCOPE}: {}",
                quote(&body.to_string())
            ),
        );
    }
    other_answer(&x, &tool, status, &at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use mcp_probe_schema::model::{Observation, Record, TransportError};
    use serde_json::json;

    const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"admin_op","arguments":{}}}"#;

    fn ev(inputs: Option<Value>, records: Vec<Record>) -> Bundle {
        let mut e = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        );
        e.payload_mut().run.inputs = inputs;
        e
    }

    fn named() -> Option<Value> {
        Some(json!({INPUT_TOOL: "admin_op"}))
    }

    fn call(status: u16, body: &str, headers: &[(&str, &str)]) -> Record {
        exchange(
            &[leg::SCOPE_PROBE_CALL],
            CALL,
            status,
            "application/json",
            body,
            headers,
        )
    }

    fn outcome(inputs: Option<Value>, records: Vec<Record>) -> (SubOutcome, String) {
        let l = classify_scope_refusal(&ev(inputs, records));
        assert_eq!(l.id, LEG);
        (l.outcome, l.note)
    }

    #[test]
    fn without_a_tool_or_with_bad_arguments_nothing_decides() {
        let (o, n) = outcome(None, vec![]);
        assert_eq!(o, SubOutcome::Unknown);
        assert!(n.contains("no scope_probe_tool"), "{n}");
        let (o, _) = outcome(Some(json!({INPUT_TOOL: "x", INPUT_ARGUMENTS: [1]})), vec![]);
        assert_eq!(o, SubOutcome::Unknown);
        let (o, n) = outcome(
            named(),
            vec![skipped(
                &[leg::SCOPE_PROBE_CALL],
                "not sent: no credential is held",
            )],
        );
        assert_eq!(o, SubOutcome::Unknown);
        assert!(n.contains("no credential"), "{n}");
        let (o, n) = outcome(named(), vec![]);
        assert_eq!(o, SubOutcome::Unknown, "leg missing");
        assert!(
            n.contains("admin_op") && n.contains("no out-of-scope call"),
            "{n}"
        );
    }

    #[test]
    fn insufficient_scope_challenge_or_body_passes() {
        let h = [(
            "www-authenticate",
            r#"Bearer error="insufficient_scope", error_description="Required scope: mcp:admin", resource_metadata="http://x/""#,
        )];
        let (o, n) = outcome(
            named(),
            vec![call(403, r#"{"error":"insufficient_scope"}"#, &h)],
        );
        assert_eq!(o, SubOutcome::Pass, "{n}");
        assert!(n.contains("Required scope"), "{n}");
        let (o, _) = outcome(named(), vec![call(401, "", &h)]);
        assert_eq!(o, SubOutcome::Pass);
        let (o, _) = outcome(
            named(),
            vec![call(
                403,
                r#"{"error":"insufficient_scope","error_description":"x"}"#,
                &[],
            )],
        );
        assert_eq!(o, SubOutcome::Pass);
    }

    #[test]
    fn substrings_are_not_markers() {
        // "scope", "401", "403", "permission" in text decide nothing.
        let (o, _) = outcome(
            named(),
            vec![call(403, "permission denied: scope 401 403", &[])],
        );
        assert_eq!(o, SubOutcome::Unknown);
        let h = [(
            "www-authenticate",
            r#"Bearer error="invalid_token", error_description="insufficient_scope?""#,
        )];
        let (o, _) = outcome(named(), vec![call(401, "", &h)]);
        assert_eq!(o, SubOutcome::Unknown);
        let err = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"insufficient scope for tool"}}"#;
        let (o, _) = outcome(named(), vec![call(200, err, &[])]);
        assert_eq!(o, SubOutcome::Unknown);
        let tool_err = r#"{"jsonrpc":"2.0","id":7,"result":{"isError":true,"content":[{"type":"text","text":"forbidden: scope"}]}}"#;
        let (o, n) = outcome(named(), vec![call(200, tool_err, &[])]);
        assert_eq!(o, SubOutcome::Unknown, "{n}");
    }

    #[test]
    fn executed_fails_and_unattributable_answers_are_errors() {
        let ok = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}"#;
        let (o, n) = outcome(named(), vec![call(200, ok, &[])]);
        assert_eq!(o, SubOutcome::Fail, "{n}");
        let (o, _) = outcome(named(), vec![call(502, "bad gateway", &[])]);
        assert_eq!(o, SubOutcome::Error);
        let (o, _) = outcome(named(), vec![call(400, "bad", &[])]);
        assert_eq!(o, SubOutcome::Error);
        let mut r = call(200, ok, &[]);
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: mcp_probe_schema::model::ErrorKind::Timeout,
                message: "timed out".into(),
            });
        }
        let (o, _) = outcome(named(), vec![r]);
        assert_eq!(o, SubOutcome::Error);
    }
}
