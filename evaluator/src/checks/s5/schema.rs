//! JSON Schema dialect and compilation for 5.1.1 (spec/checks.md §11.4).
//!
//! The dialect table is explicit, never the validator library's own fallback: `$schema`
//! absent or blank → 2020-12 (the MCP default); a value containing `2020-12`,
//! `2019-09`, `draft-07`, `draft-06` or `draft-04` → that draft; anything else is an
//! unrecognised dialect, named in the evidence. "Compiles" means the schema validates
//! against the chosen draft's metaschema, using the metaschemas built into `jsonschema`:
//! nothing is ever fetched. The crate is built without its default features, so it has
//! no HTTP or file retriever at all (a hostile `$ref` or `$schema` cannot make the
//! grader reach the network: evaluator/tests/deps.rs), and metaschema validation reads
//! the schema as an instance, so no `$ref` inside it is resolved. References that point
//! elsewhere are counted separately (5.1.1c) because they compile silently.

use serde_json::Value;

use super::text::{reason, show, truncate};

/// A JSON Schema draft this grader compiles against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    /// Draft 2020-12 (the default of MCP tool schemas).
    Draft202012,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 7.
    Draft7,
    /// Draft 6.
    Draft6,
    /// Draft 4.
    Draft4,
}

impl Dialect {
    /// Every dialect, in the order the `$schema` value is matched.
    const TABLE: [(&'static str, Dialect); 5] = [
        ("2020-12", Dialect::Draft202012),
        ("2019-09", Dialect::Draft201909),
        ("draft-07", Dialect::Draft7),
        ("draft-06", Dialect::Draft6),
        ("draft-04", Dialect::Draft4),
    ];

    /// The name used in evidence.
    pub(super) fn name(self) -> &'static str {
        match self {
            Dialect::Draft202012 => "2020-12",
            Dialect::Draft201909 => "2019-09",
            Dialect::Draft7 => "draft-07",
            Dialect::Draft6 => "draft-06",
            Dialect::Draft4 => "draft-04",
        }
    }
}

/// A `$schema` value that names no dialect this grader knows ([`dialect`]); its message
/// is the value as the evidence shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum UnknownDialect {
    /// A string that contains none of the table's names (the value, shown).
    #[error("{0}")]
    Unrecognised(String),
    /// Not a string at all (the value, shown).
    #[error("{0} (not a string)")]
    NotAString(String),
}

/// The dialect a schema declares, by the explicit table; `Err` names an unrecognised
/// `$schema` value.
pub(super) fn dialect(schema: &Value) -> Result<Dialect, UnknownDialect> {
    match schema.get("$schema") {
        None => Ok(Dialect::Draft202012),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Dialect::Draft202012),
        Some(Value::String(s)) => Dialect::TABLE
            .iter()
            .find(|(needle, _)| s.contains(needle))
            .map(|(_, d)| *d)
            .ok_or_else(|| UnknownDialect::Unrecognised(show(&Value::String(s.clone())))),
        Some(other) => Err(UnknownDialect::NotAString(show(other))),
    }
}

/// A schema that does not validate against its dialect's metaschema ([`compile`]): the
/// first error's first line, with the location inside the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {at}: {reason}")]
pub(super) struct MetaschemaViolation {
    /// JSON pointer inside the schema (`/` for the root), truncated.
    at: String,
    /// The first line of the validator's reason.
    reason: String,
}

/// Check `schema` against the metaschema of `dialect`; `Err` is the first error's
/// first line, with the location inside the schema.
pub(super) fn compile(schema: &Value, dialect: Dialect) -> Result<(), MetaschemaViolation> {
    let checked = match dialect {
        Dialect::Draft202012 => jsonschema::draft202012::meta::validate(schema),
        Dialect::Draft201909 => jsonschema::draft201909::meta::validate(schema),
        Dialect::Draft7 => jsonschema::draft7::meta::validate(schema),
        Dialect::Draft6 => jsonschema::draft6::meta::validate(schema),
        Dialect::Draft4 => jsonschema::draft4::meta::validate(schema),
    };
    checked.map_err(|e| {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() { "/".to_string() } else { at };
        MetaschemaViolation {
            at: truncate(&at, 60),
            reason: reason(&e.to_string()),
        }
    })
}

/// How one schema fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Judged {
    /// It validates against its dialect's metaschema.
    Compiled(Dialect),
    /// It does not; the reason.
    Failed(Dialect, String),
    /// Its `$schema` names no dialect this grader knows; the value.
    Unrecognised(String),
}

/// Dialect, then compile.
pub(super) fn judge(schema: &Value) -> Judged {
    match dialect(schema) {
        Err(named) => Judged::Unrecognised(named.to_string()),
        Ok(d) => match compile(schema, d) {
            Ok(()) => Judged::Compiled(d),
            Err(why) => Judged::Failed(d, why.to_string()),
        },
    }
}

/// Every `$ref` in `schema` whose value contains `://` (an absolute reference to a
/// document elsewhere), in document order. Iterative, so depth is no concern.
pub(super) fn external_refs(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    if r.contains("://") {
                        out.push(r.clone());
                    }
                }
                stack.extend(m.values().rev());
            }
            Value::Array(a) => stack.extend(a.iter().rev()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        // Would hang or fail if the crate tried to resolve it; it compiles (5.1.1c
        // counts it instead).
        let s = json!({"$ref": "http://127.0.0.1:9/never"});
        assert_eq!(judge(&s), Judged::Compiled(Dialect::Draft202012));
    }
}
