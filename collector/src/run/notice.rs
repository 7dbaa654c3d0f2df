//! The notice printed on stderr before collection: per target, which checks (or legs)
//! will stay undecided for want of which probe input. The collector decides nothing
//! here; it only says which requests it will not send, so an operator can supply the
//! input before the run instead of reading UNKNOWN after it.

use serde_json::Value;

/// A leg that is sent only when the operator gives an input.
#[derive(Debug, Clone, Copy)]
pub struct Need {
    /// The checks or legs that stay undecided without it.
    pub decides: &'static str,
    /// The input keys, as the notice names them.
    pub inputs: &'static [&'static str],
    /// What the notice says beside the keys (consent, conditions).
    pub note: &'static str,
    /// True when the target's inputs provide it.
    pub given: fn(&Value) -> bool,
}

fn text(i: &Value, key: &str) -> bool {
    i.get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

/// Every input whose absence leaves a leg unsent, in check order.
pub const NEEDS: &[Need] = &[
    Need {
        decides: "1.3, 7.2.2",
        inputs: &["tool_calls_authorised", "tool_arguments"],
        note: "consent to execute tools (true), and their arguments; 1.3 also needs a baseline",
        given: |i| {
            i.get("tool_calls_authorised") == Some(&Value::Bool(true))
                && i.get("tool_arguments").is_some_and(Value::is_object)
        },
    },
    Need {
        decides: "3.3.4e",
        inputs: &["scope_probe_tool"],
        note: "a tool outside the token's grant; used only when a credential is held",
        given: |i| text(i, "scope_probe_tool"),
    },
    Need {
        decides: "5.1.1d",
        inputs: &["schema_probe_tool", "schema_probe_arguments"],
        note: "a side-effect-free tool with a required argument, and valid arguments for it",
        given: |i| {
            text(i, "schema_probe_tool")
                && i.get("schema_probe_arguments")
                    .is_some_and(|a| a.as_object().is_some_and(|o| !o.is_empty()))
        },
    },
    Need {
        decides: "5.4.1",
        inputs: &["traversal_authorised"],
        note: "consent (true) to send path-traversal reads, an attack payload in the server's logs",
        given: |i| i.get("traversal_authorised") == Some(&Value::Bool(true)),
    },
    Need {
        decides: "10.1a",
        inputs: &["static_resource_path"],
        note: "a static resource of the server",
        given: |i| text(i, "static_resource_path"),
    },
];

/// The notice for one target (`None` when every input is given), e.g.
/// `http://h/mcp: undecided for want of probe inputs: 10.1a (static_resource_path: …)`.
pub fn notice(target: &str, inputs: Option<&Value>) -> Option<String> {
    let empty = Value::Object(Default::default());
    let i = inputs.unwrap_or(&empty);
    let missing: Vec<String> = NEEDS
        .iter()
        .filter(|n| !(n.given)(i))
        .map(|n| format!("{} ({}: {})", n.decides, n.inputs.join(" and "), n.note))
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{target}: undecided for want of probe inputs (--inputs, docs/schemas/probe-inputs.schema.json): {}",
        missing.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_input_named_is_a_key_of_the_published_schema() {
        let schema: Value = serde_json::from_str(super::super::inputs::SCHEMA).expect("schema");
        let keys = &schema["$defs"]["target"]["properties"];
        for n in NEEDS {
            for k in n.inputs {
                assert!(
                    keys.get(k).is_some(),
                    "{k} is not in the probe-inputs schema"
                );
            }
        }
    }

    #[test]
    fn names_only_what_is_missing() {
        let all = notice("http://h/mcp", None).expect("notice");
        assert!(
            all.starts_with("http://h/mcp: undecided for want of probe inputs"),
            "{all}"
        );
        for n in NEEDS {
            assert!(all.contains(n.decides), "{all}");
        }
        let some = notice("t", Some(&json!({"static_resource_path": "/app.js"}))).expect("notice");
        assert!(!some.contains("10.1a"), "{some}");
        assert!(some.contains("3.3.4e (scope_probe_tool"), "{some}");
        // A blank value is no input.
        let blank = notice("t", Some(&json!({"static_resource_path": "  "}))).expect("notice");
        assert!(blank.contains("10.1a"), "{blank}");
    }
}
