//! The notice printed on stderr after a target's connection result, when it has an MCP
//! session: which checks (or legs) stay undecided for want of which probe input. The
//! collector decides nothing here; it only says which requests it did not send, so an
//! operator can supply the input for the next run instead of reading UNKNOWN in the
//! report. One short line per target; `--verbose` says what each input is. A target
//! without a session gets none: nothing was decided there for want of an input.

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

/// The inputs `inputs` leaves out, in check order.
fn missing(inputs: Option<&Value>) -> Vec<&'static Need> {
    let empty = Value::Object(Default::default());
    let i = inputs.unwrap_or(&empty);
    NEEDS.iter().filter(|n| !(n.given)(i)).collect()
}

/// The notice for one target (`None` when every input is given): one short line, e.g.
/// `http://h/mcp: 5.4.1, 10.1a undecided for want of probe inputs (--inputs FILE;
/// --verbose names them)`; with `verbose`, each input's key, what it is and why it is
/// needed.
pub fn notice(target: &str, inputs: Option<&Value>, verbose: bool) -> Option<String> {
    let missing = missing(inputs);
    if missing.is_empty() {
        return None;
    }
    if verbose {
        let parts: Vec<String> = missing
            .iter()
            .map(|n| format!("{} ({}: {})", n.decides, n.inputs.join(" and "), n.note))
            .collect();
        return Some(format!(
            "{target}: undecided for want of probe inputs (--inputs, docs/schemas/probe-inputs.schema.json): {}",
            parts.join("; ")
        ));
    }
    let decides: Vec<&str> = missing.iter().map(|n| n.decides).collect();
    Some(format!(
        "{target}: {} undecided for want of probe inputs (--inputs FILE; --verbose names them)",
        decides.join(", ")
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
        let all = notice("http://h/mcp", None, true).expect("notice");
        assert!(
            all.starts_with("http://h/mcp: undecided for want of probe inputs"),
            "{all}"
        );
        for n in NEEDS {
            assert!(all.contains(n.decides), "{all}");
            assert!(all.contains(n.note), "{all}");
        }
        let some =
            notice("t", Some(&json!({"static_resource_path": "/app.js"})), true).expect("notice");
        assert!(!some.contains("10.1a"), "{some}");
        assert!(some.contains("3.3.4e (scope_probe_tool"), "{some}");
        // A blank value is no input.
        let blank =
            notice("t", Some(&json!({"static_resource_path": "  "})), true).expect("notice");
        assert!(blank.contains("10.1a"), "{blank}");
        let every = json!({
            "tool_calls_authorised": true, "tool_arguments": {"t": {}},
            "scope_probe_tool": "x", "schema_probe_tool": "y",
            "schema_probe_arguments": {"a": 1}, "traversal_authorised": true,
            "static_resource_path": "/s"
        });
        assert_eq!(notice("t", Some(&every), false), None);
    }

    #[test]
    fn the_short_notice_is_one_line_naming_the_checks_only() {
        let short = notice("http://127.0.0.1:1/mcp", None, false).expect("notice");
        assert!(!short.contains('\n'), "{short}");
        assert!(
            short.starts_with(
                "http://127.0.0.1:1/mcp: 1.3, 7.2.2, 3.3.4e, 5.1.1d, 5.4.1, 10.1a undecided for want of probe inputs (--inputs FILE"
            ),
            "{short}"
        );
        for n in NEEDS {
            assert!(!short.contains(n.note), "{short}");
            assert!(!short.contains(n.inputs[0]), "{short}");
        }
        assert!(
            short.chars().count() <= 140,
            "{} chars: {short}",
            short.chars().count()
        );
        let one = notice(
            "t",
            Some(&json!({"tool_calls_authorised": true, "tool_arguments": {},
            "scope_probe_tool": "x", "schema_probe_tool": "y", "schema_probe_arguments": {"a": 1},
            "traversal_authorised": true})),
            false,
        )
        .expect("notice");
        assert_eq!(
            one,
            "t: 10.1a undecided for want of probe inputs (--inputs FILE; --verbose names them)"
        );
    }
}
