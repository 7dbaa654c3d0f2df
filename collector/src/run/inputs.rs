//! Operator probe inputs (`--inputs FILE`, else `~/.mcp-probe/probe-inputs.json`):
//! read, validated against the published JSON Schema
//! (`docs/schemas/probe-inputs.schema.json`, embedded here so the two cannot drift) and
//! refused before any traffic when they do not match it.
//!
//! The schema is interpreted here, not by a general JSON Schema validator: only the
//! keywords and patterns it uses are implemented (another is a build defect the tests
//! catch), and the tests hold every verdict and message equal to jsonschema's. A
//! validator with its regular-expression engines was about 1.5 MB of the static binary
//! (docs/install.md, "Sizes").
//!
//! The file is a JSON object keyed by target as typed; each value is an object of that
//! target's inputs. An unknown key, a wrong type or an out-of-range value is a
//! [`InputsError::Invalid`] naming the file, the target and the key (a usage error, exit
//! 2). A key of the file that names no target of the run is only a warning: the inputs
//! of another fleet may share the file.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::run::cli::UsageError;
use crate::run::target::Target;

/// The published schema of the file, as shipped in `docs/schemas/`.
pub const SCHEMA: &str = include_str!("../../../docs/schemas/probe-inputs.schema.json");

/// The file read when `--inputs` is not given, in the state directory.
pub const DEFAULT_FILE: &str = "probe-inputs.json";

/// Why the inputs file is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputsError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}: not JSON: {detail}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        detail: String,
    },
    /// The file is JSON but does not match the schema.
    #[error("{}: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The first mismatch, in file order.
        problem: Problem,
    },
    /// The embedded schema does not compile (a build defect, not an input problem).
    #[error("the embedded probe-inputs schema does not compile: {0}")]
    Schema(String),
}

/// The first way an inputs file departs from the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The file is not an object keyed by target.
    NotAnObject,
    /// A target's value is not an object of inputs.
    TargetNotAnObject {
        /// The target as written in the file.
        target: String,
    },
    /// A key the schema does not define (a typo, or an input this build does not know).
    UnknownKey {
        /// The target.
        target: String,
        /// The key.
        key: String,
    },
    /// A known key with a value of the wrong type or out of range.
    BadValue {
        /// The target.
        target: String,
        /// The key.
        key: String,
        /// What is wrong with the value.
        reason: String,
    },
}

/// `"text"`, escaped for a terminal (control characters, and the quotes themselves).
fn quoted(s: &str) -> String {
    format!(
        "\"{}\"",
        mcp_probe_schema::term::line(s).replace('"', "\\\"")
    )
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotAnObject => f.write_str(
                "not a JSON object keyed by target (as typed) whose values are objects of inputs",
            ),
            Problem::TargetNotAnObject { target } => {
                write!(f, "target {}: not a JSON object of inputs", quoted(target))
            }
            Problem::UnknownKey { target, key } => write!(
                f,
                "target {}: unknown key {} (see docs/schemas/probe-inputs.schema.json)",
                quoted(target),
                quoted(key)
            ),
            Problem::BadValue {
                target,
                key,
                reason,
            } => write!(
                f,
                "target {}: key {}: {reason}",
                quoted(target),
                quoted(key)
            ),
        }
    }
}

impl From<InputsError> for UsageError {
    fn from(e: InputsError) -> UsageError {
        match e {
            InputsError::Read { path, source } => UsageError::Read { path, source },
            InputsError::NotJson { path, detail } => UsageError::Invalid {
                path,
                reason: format!("not JSON: {detail}"),
            },
            InputsError::Invalid { path, problem } => UsageError::Invalid {
                path,
                reason: problem.to_string(),
            },
            InputsError::Schema(detail) => UsageError::Invalid {
                path: PathBuf::from("docs/schemas/probe-inputs.schema.json"),
                reason: format!("the embedded schema does not compile: {detail}"),
            },
        }
    }
}

/// A value shown in a message: at most 60 characters of its JSON, terminal-safe.
fn shown(v: &Value) -> String {
    let s = v.to_string();
    let s = if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    };
    mcp_probe_schema::term::line(&s)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `a string`, `an integer`, `null or an object`: the types a value should have had.
fn type_words(types: &[&str]) -> String {
    types
        .iter()
        .map(|t| match *t {
            "integer" => "an integer".to_string(),
            "object" => "an object".to_string(),
            "array" => "an array".to_string(),
            "null" => "null".to_string(),
            other => format!("a {other}"),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// What is wrong with `value`, in words.
fn reason(kind: &Kind, value: &Value) -> String {
    let v = shown(value);
    match kind {
        Kind::Type(types) => {
            format!("{v} is {}, not {}", json_type(value), type_words(types))
        }
        Kind::Minimum(limit) => format!("{v} is below the minimum {limit}"),
        Kind::Maximum(limit) => format!("{v} is above the maximum {limit}"),
        Kind::MinLength => format!("{v} is empty or blank"),
        Kind::Pattern if value.as_str().is_some_and(|s| s.trim().is_empty()) => {
            format!("{v} is empty or blank")
        }
        Kind::Pattern => format!(
            "{v} does not have the form the schema describes (see its description in \
             docs/schemas/probe-inputs.schema.json)"
        ),
        Kind::AdditionalProperties(_) => format!("{v} is not accepted (additionalProperties)"),
    }
}

/// How a value departs from the schema: the keyword it fails.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `type`: the types it may have, sorted.
    Type(Vec<&'static str>),
    /// `minimum`, the limit.
    Minimum(Value),
    /// `maximum`, the limit.
    Maximum(Value),
    /// `minLength`.
    MinLength,
    /// `pattern`.
    Pattern,
    /// `additionalProperties: false`: the keys it does not define, in file order.
    AdditionalProperties(Vec<String>),
}

/// One mismatch: where (keys and array indexes from the top), what, and the value.
struct Mismatch<'a> {
    path: Vec<String>,
    kind: Kind,
    value: &'a Value,
}

/// The JSON Schema types, as `type` names them.
const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Whether `v` is of JSON Schema type `t` (an integer is a number without a fraction,
/// `1.0` included).
fn has_type(v: &Value, t: &str) -> bool {
    match (t, v) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// `\s` of a JSON Schema pattern (ECMA-262): Unicode white space and line terminators
/// without U+0085, with U+FEFF.
fn ecma_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// The schema's `pattern`s, each as the code that matches it (`None`: a pattern this
/// build does not know, a schema defect the tests catch). A pattern matches anywhere in
/// the string unless anchored, as ECMA-262 regular expressions do (the tests hold it
/// equal to jsonschema's).
fn pattern(p: &str) -> Option<fn(&str) -> bool> {
    fn not_blank(s: &str) -> bool {
        s.chars().any(|c| !ecma_space(c))
    }
    // `^[A-Za-z][A-Za-z0-9+.-]*://[^/\s]+/?$`: scheme://host[:port], an optional `/`.
    fn origin(s: &str) -> bool {
        let Some((scheme, rest)) = s.split_once("://") else {
            return false;
        };
        let mut sc = scheme.chars();
        let host = rest.strip_suffix('/').unwrap_or(rest);
        sc.next().is_some_and(|c| c.is_ascii_alphabetic())
            && sc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            && !host.is_empty()
            && host.chars().all(|c| c != '/' && !ecma_space(c))
    }
    match p {
        r"\S" => Some(not_blank),
        r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s]+/?$" => Some(origin),
        _ => None,
    }
}

/// Validate `value` (at `path`) against `schema`, a part of the schema document `root`,
/// adding every mismatch to `out`. Only the keywords the probe-inputs schema uses are
/// implemented; any other is an [`InputsError::Schema`], so the schema cannot grow a
/// rule that is silently not checked.
fn validate<'a>(
    root: &Value,
    schema: &Value,
    value: &'a Value,
    path: &mut Vec<String>,
    out: &mut Vec<Mismatch<'a>>,
) -> Result<(), InputsError> {
    let bad = InputsError::Schema;
    let Some(schema) = schema.as_object() else {
        return Err(bad(format!("a schema that is not an object: {schema}")));
    };
    let push = |out: &mut Vec<Mismatch<'a>>, path: &[String], kind| {
        out.push(Mismatch {
            path: path.to_vec(),
            kind,
            value,
        })
    };
    let number = |k: &str| {
        schema[k]
            .as_f64()
            .ok_or_else(|| bad(format!("{k} is not a number")))
    };
    for (k, rule) in schema {
        match k.as_str() {
            "$schema" | "title" | "description" | "$defs" => {}
            "$ref" => {
                let target = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .and_then(|name| root["$defs"].get(name))
                    .ok_or_else(|| bad(format!("$ref {rule} names no definition")))?;
                validate(root, target, value, path, out)?;
            }
            "type" => {
                let names: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                let mut types: Vec<&'static str> = TYPES
                    .iter()
                    .copied()
                    .filter(|t| names.contains(t))
                    .collect();
                if types.is_empty() || types.len() != names.len() {
                    return Err(bad(format!("type {rule} is not a JSON Schema type")));
                }
                types.sort_unstable();
                if !types.iter().any(|t| has_type(value, t)) {
                    push(out, path, Kind::Type(types));
                }
            }
            "minLength" => {
                let n = rule
                    .as_u64()
                    .ok_or_else(|| bad("minLength is not a count".into()))?;
                if value
                    .as_str()
                    .is_some_and(|s| (s.chars().count() as u64) < n)
                {
                    push(out, path, Kind::MinLength);
                }
            }
            "pattern" => {
                let p = rule.as_str().unwrap_or_default();
                let matches =
                    pattern(p).ok_or_else(|| bad(format!("pattern {rule} is not implemented")))?;
                if value.as_str().is_some_and(|s| !matches(s)) {
                    push(out, path, Kind::Pattern);
                }
            }
            "minimum" => {
                let limit = number(k)?;
                if value.as_f64().is_some_and(|v| v < limit) {
                    push(out, path, Kind::Minimum(rule.clone()));
                }
            }
            "maximum" => {
                let limit = number(k)?;
                if value.as_f64().is_some_and(|v| v > limit) {
                    push(out, path, Kind::Maximum(rule.clone()));
                }
            }
            "properties" => {
                let props = rule
                    .as_object()
                    .ok_or_else(|| bad("properties is not an object".into()))?;
                if let Some(obj) = value.as_object() {
                    for (name, sub) in props {
                        if let Some(v) = obj.get(name) {
                            path.push(name.clone());
                            validate(root, sub, v, path, out)?;
                            path.pop();
                        }
                    }
                }
            }
            "additionalProperties" => {
                let Some(obj) = value.as_object() else {
                    continue;
                };
                let known = schema.get("properties").and_then(Value::as_object);
                let extra = obj
                    .iter()
                    .filter(|(name, _)| !known.is_some_and(|p| p.contains_key(*name)));
                match rule {
                    Value::Bool(true) => {}
                    Value::Bool(false) => {
                        let unexpected: Vec<String> = extra.map(|(n, _)| n.clone()).collect();
                        if !unexpected.is_empty() {
                            push(out, path, Kind::AdditionalProperties(unexpected));
                        }
                    }
                    sub => {
                        for (name, v) in extra {
                            path.push(name.clone());
                            validate(root, sub, v, path, out)?;
                            path.pop();
                        }
                    }
                }
            }
            "items" => {
                if let Some(items) = value.as_array() {
                    for (i, v) in items.iter().enumerate() {
                        path.push(i.to_string());
                        validate(root, rule, v, path, out)?;
                        path.pop();
                    }
                }
            }
            other => {
                return Err(bad(format!(
                    "keyword {other} is not implemented by mcp-collect"
                )))
            }
        }
    }
    Ok(())
}

/// Validate `doc` (the file's JSON) against the schema. Returns the first problem in file
/// order (target, then key), if any.
pub fn check(doc: &Value) -> Result<Option<Problem>, InputsError> {
    let schema: Value =
        serde_json::from_str(SCHEMA).map_err(|e| InputsError::Schema(e.to_string()))?;
    let mut mismatches = Vec::new();
    validate(&schema, &schema, doc, &mut Vec::new(), &mut mismatches)?;
    let Some(targets) = doc.as_object() else {
        return Ok((!mismatches.is_empty()).then_some(Problem::NotAnObject));
    };
    let position = |t: &str| targets.keys().position(|k| k == t).unwrap_or(usize::MAX);
    let key_position = |t: &str, k: &str| {
        targets
            .get(t)
            .and_then(Value::as_object)
            .and_then(|o| o.keys().position(|x| x == k))
            .unwrap_or(usize::MAX)
    };
    let mut found: Vec<((usize, usize), Problem)> = Vec::new();
    for m in mismatches {
        let problem = match (m.path.as_slice(), &m.kind) {
            ([], _) => Problem::NotAnObject,
            ([target], Kind::AdditionalProperties(unexpected)) => {
                let Some(key) = unexpected
                    .iter()
                    .min_by_key(|k| key_position(target, k))
                    .cloned()
                else {
                    continue;
                };
                Problem::UnknownKey {
                    target: target.clone(),
                    key,
                }
            }
            ([target], _) => Problem::TargetNotAnObject {
                target: target.clone(),
            },
            ([target, key, rest @ ..], kind) => {
                let why = reason(kind, m.value);
                Problem::BadValue {
                    target: target.clone(),
                    key: key.clone(),
                    reason: match rest {
                        [] => why,
                        _ => format!("item {}: {why}", rest.join("/")),
                    },
                }
            }
        };
        let rank = match &problem {
            Problem::NotAnObject => (0, 0),
            Problem::TargetNotAnObject { target } => (position(target), 0),
            Problem::UnknownKey { target, key } | Problem::BadValue { target, key, .. } => {
                (position(target), key_position(target, key))
            }
        };
        found.push((rank, problem));
    }
    Ok(found
        .into_iter()
        .min_by_key(|(rank, _)| *rank)
        .map(|(_, p)| p))
}

/// Keys of `doc` that name none of `targets` (as typed), in file order.
pub fn unmatched<'a>(doc: &'a Value, targets: &[String]) -> Vec<&'a str> {
    doc.as_object()
        .map(|o| {
            o.keys()
                .map(String::as_str)
                .filter(|k| !targets.iter().any(|t| t == k))
                .collect()
        })
        .unwrap_or_default()
}

/// Parse and validate the inputs file `path` for a run over `targets` (as typed).
/// Returns the document and one warning per key that names no target.
pub fn parse(
    path: &Path,
    bytes: &[u8],
    targets: &[String],
) -> Result<(Value, Vec<String>), InputsError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| InputsError::NotJson {
        path: path.into(),
        detail: e.to_string(),
    })?;
    if let Some(problem) = check(&doc)? {
        return Err(InputsError::Invalid {
            path: path.into(),
            problem,
        });
    }
    let warnings = unmatched(&doc, targets)
        .into_iter()
        .map(|k| {
            format!(
                "{}: target {} matches no target of this run (inputs are keyed by the target exactly as typed); its inputs are not used",
                path.display(),
                quoted(k)
            )
        })
        .collect();
    Ok((doc, warnings))
}

/// The run's probe inputs: `--inputs FILE` when given, else the state directory's
/// [`DEFAULT_FILE`] when it exists, else none. Validated before anything is sent; the
/// caller prints the warnings (`mcp-collect: warning: …`).
pub fn load(
    flag: Option<&Path>,
    targets: &[Target],
) -> Result<(Option<Value>, Vec<String>), InputsError> {
    let path = match flag {
        Some(p) => p.to_path_buf(),
        None => match crate::keys::state_dir() {
            Ok(d) if d.join(DEFAULT_FILE).is_file() => d.join(DEFAULT_FILE),
            _ => return Ok((None, Vec::new())),
        },
    };
    let bytes = std::fs::read(&path).map_err(|source| InputsError::Read {
        path: path.clone(),
        source,
    })?;
    let typed: Vec<String> = targets.iter().map(|t| t.as_typed.clone()).collect();
    let (doc, warnings) = parse(&path, &bytes, &typed)?;
    Ok((Some(doc), warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T: &str = "http://127.0.0.1:8000/mcp";

    fn problem(doc: Value) -> Option<Problem> {
        check(&doc).expect("the schema compiles")
    }

    fn message(doc: Value) -> String {
        let bytes = serde_json::to_vec(&doc).expect("json");
        match parse(Path::new("probe-inputs.json"), &bytes, &[T.to_string()]) {
            Err(e) => UsageError::from(e).to_string(),
            Ok(_) => String::new(),
        }
    }

    #[test]
    fn the_schema_is_a_valid_2020_12_schema() {
        let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
        jsonschema::draft202012::meta::validate(&schema).expect("valid 2020-12 schema");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }

    #[test]
    fn every_key_the_probe_reads_is_defined() {
        let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
        let props = schema["$defs"]["target"]["properties"]
            .as_object()
            .expect("properties");
        for key in [
            "static_resource_path",
            "max_request_bytes",
            "oversize_authorised",
            crate::legs::c3_3_4_scope::INPUT_TOOL,
            crate::legs::c3_3_4_scope::INPUT_ARGUMENTS,
            crate::legs::c3_3_1_audience::INPUT_DOWNSTREAM,
            crate::legs::c3_3_1_audience::INPUT_FOREIGN_RESOURCE,
            crate::legs::c2_5_origin::INPUT_ALLOWED_ORIGIN,
            crate::legs::c1_3_7_2_2_tools::INPUT_CONSENT,
            crate::legs::c1_3_7_2_2_tools::INPUT_ARGUMENTS,
            crate::legs::c5_1_live::INPUT_TOOL,
            crate::legs::c5_1_live::INPUT_ARGUMENTS,
            crate::legs::c5_4_1_traversal::INPUT_CONTROL,
            crate::legs::c5_4_1_traversal::INPUT_CONSENT,
        ] {
            assert!(props.contains_key(key), "{key} missing from the schema");
            assert!(
                props[key]["description"]
                    .as_str()
                    .is_some_and(|d| d.len() > 20),
                "{key} has no description"
            );
        }
        assert_eq!(props.len(), 14, "a key the probe does not read: {props:?}");
        let max = &props["max_request_bytes"];
        assert_eq!(max["minimum"], 1);
        assert_eq!(max["maximum"], crate::legs::HARD_MAX);
    }

    #[test]
    fn valid_inputs_pass() {
        for doc in [
            json!({}),
            json!({T: {}}),
            json!({T: {
                "static_resource_path": "/static/app.js",
                "max_request_bytes": 10485760,
                "oversize_authorised": true,
                "scope_probe_tool": "delete_everything",
                "scope_probe_arguments": {"id": 1},
                "downstream_endpoints": ["https://api.example.com/me"],
                "foreign_resource": "http://127.0.0.1:1/mcp"
            }}),
            json!({T: {"max_request_bytes": 1, "scope_probe_arguments": null}}),
            json!({T: {"tool_calls_authorised": true, "tool_arguments": {"echo": {"text": "x"}, "ping": {}}}}),
        ] {
            assert_eq!(problem(doc.clone()), None, "{doc}");
        }
    }

    #[test]
    fn a_misspelt_key_is_named_with_its_target() {
        assert_eq!(
            problem(json!({T: {"static_resouce_path": "/x"}})),
            Some(Problem::UnknownKey {
                target: T.into(),
                key: "static_resouce_path".into()
            })
        );
        assert_eq!(
            message(json!({T: {"static_resouce_path": "/x"}})),
            format!("probe-inputs.json: target \"{T}\": unknown key \"static_resouce_path\" (see docs/schemas/probe-inputs.schema.json)")
        );
    }

    #[test]
    fn wrong_types_and_ranges_are_named() {
        let cases = [
            (
                json!({"max_request_bytes": "lots"}),
                "max_request_bytes",
                "\"lots\" is a string, not an integer",
            ),
            (
                json!({"max_request_bytes": 1.5}),
                "max_request_bytes",
                "1.5 is a number, not an integer",
            ),
            (
                json!({"max_request_bytes": 0}),
                "max_request_bytes",
                "0 is below the minimum 1",
            ),
            (
                json!({"max_request_bytes": 10485761}),
                "max_request_bytes",
                "10485761 is above the maximum 10485760",
            ),
            (
                json!({"oversize_authorised": "yes"}),
                "oversize_authorised",
                "\"yes\" is a string, not a boolean",
            ),
            (
                json!({"tool_calls_authorised": "yes"}),
                "tool_calls_authorised",
                "\"yes\" is a string, not a boolean",
            ),
            (
                json!({"scope_probe_tool": " "}),
                "scope_probe_tool",
                "\" \" is empty or blank",
            ),
            (
                json!({"scope_probe_arguments": [1]}),
                "scope_probe_arguments",
                "[1] is an array, not null or an object",
            ),
            (
                json!({"downstream_endpoints": "https://x/"}),
                "downstream_endpoints",
                "\"https://x/\" is a string, not an array",
            ),
            (
                json!({"downstream_endpoints": ["https://x/", 7]}),
                "downstream_endpoints",
                "item 1: 7 is an integer, not a string",
            ),
            (
                json!({"static_resource_path": ""}),
                "static_resource_path",
                "\"\" is empty or blank",
            ),
            (
                json!({"foreign_resource": false}),
                "foreign_resource",
                "false is a boolean, not a string",
            ),
        ];
        for (inputs, key, why) in cases {
            assert_eq!(
                problem(json!({T: inputs})),
                Some(Problem::BadValue {
                    target: T.into(),
                    key: key.into(),
                    reason: why.into()
                }),
                "{inputs}"
            );
        }
        assert_eq!(
            message(json!({T: {"max_request_bytes": "lots"}})),
            format!("probe-inputs.json: target \"{T}\": key \"max_request_bytes\": \"lots\" is a string, not an integer")
        );
    }

    #[test]
    fn the_first_problem_in_file_order_is_reported() {
        let doc: Value = serde_json::from_str(
            r#"{"a": {"oversize_authorised": true, "zzz": 1, "aaa": 2, "max_request_bytes": "x"},
                "b": 7}"#,
        )
        .expect("json");
        assert_eq!(
            problem(doc),
            Some(Problem::UnknownKey {
                target: "a".into(),
                key: "zzz".into()
            })
        );
        let doc: Value = serde_json::from_str(r#"{"a": {}, "b": 7, "c": {"x": 1}}"#).expect("json");
        assert_eq!(
            problem(doc),
            Some(Problem::TargetNotAnObject { target: "b".into() })
        );
    }

    #[test]
    fn a_file_that_is_not_an_object_of_objects_is_refused() {
        for doc in [json!([]), json!(null), json!("x"), json!(3)] {
            assert_eq!(problem(doc.clone()), Some(Problem::NotAnObject), "{doc}");
        }
        let e = parse(Path::new("f.json"), b"{not json", &[]).unwrap_err();
        assert!(matches!(e, InputsError::NotJson { .. }), "{e}");
        assert!(e.to_string().starts_with("f.json: not JSON: "), "{e}");
    }

    #[test]
    fn keys_naming_no_target_are_warned_about_not_refused() {
        let bytes = serde_json::to_vec(&json!({T: {}, "mcp.example.com": {}})).expect("json");
        let (_, warnings) = parse(Path::new("p.json"), &bytes, &[T.to_string()]).expect("accepted");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("p.json: target \"mcp.example.com\" matches no target"),
            "{warnings:?}"
        );
        let (_, none) = parse(
            Path::new("p.json"),
            &bytes,
            &[T.to_string(), "mcp.example.com".into()],
        )
        .expect("accepted");
        assert!(none.is_empty(), "{none:?}");
    }

    /// Every mismatch jsonschema finds in `doc` (path and keyword), sorted.
    fn by_jsonschema(doc: &Value) -> Vec<String> {
        use jsonschema::error::{TypeKind, ValidationErrorKind as K};
        use jsonschema::paths::LocationSegment;
        let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
        let validator = jsonschema::draft202012::new(&schema).expect("compiles");
        let mut v: Vec<String> = validator
            .iter_errors(doc)
            .map(|e| {
                let path: Vec<String> = e
                    .instance_path()
                    .iter()
                    .map(|s| match s {
                        LocationSegment::Property(p) => p.to_string(),
                        LocationSegment::Index(i) => i.to_string(),
                    })
                    .collect();
                let kind = match e.kind() {
                    K::Type { kind } => {
                        let mut t: Vec<&'static str> = match kind {
                            TypeKind::Single(t) => vec![t.to_string()],
                            TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
                        }
                        .iter()
                        .map(|t| *TYPES.iter().find(|x| **x == t.as_str()).expect("a type"))
                        .collect();
                        t.sort_unstable();
                        Kind::Type(t)
                    }
                    K::Minimum { limit } => Kind::Minimum(limit.clone()),
                    K::Maximum { limit } => Kind::Maximum(limit.clone()),
                    K::MinLength { .. } => Kind::MinLength,
                    K::Pattern { .. } => Kind::Pattern,
                    K::AdditionalProperties { unexpected } => {
                        let mut u = unexpected.clone();
                        u.sort();
                        Kind::AdditionalProperties(u)
                    }
                    other => panic!("a keyword the schema does not use: {}", other.keyword()),
                };
                format!("{path:?} {kind:?} {}", e.instance())
            })
            .collect();
        v.sort();
        v
    }

    /// Every mismatch [`validate`] finds in `doc`, written as [`by_jsonschema`] does.
    fn by_us(doc: &Value) -> Vec<String> {
        let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
        let mut out = Vec::new();
        validate(&schema, &schema, doc, &mut Vec::new(), &mut out).expect("implemented");
        let mut v: Vec<String> = out
            .into_iter()
            .map(|m| {
                let kind = match m.kind {
                    Kind::AdditionalProperties(mut u) => {
                        u.sort();
                        Kind::AdditionalProperties(u)
                    }
                    k => k,
                };
                format!("{:?} {kind:?} {}", m.path, m.value)
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_schema_is_checked_as_jsonschema_checks_it() {
        let blank = [
            "",
            " ",
            "\t\n",
            "\u{a0}",
            "\u{85}",
            "\u{2028}",
            "\u{3000}",
            "\u{feff}",
            "\u{200b}",
            "x",
            " x ",
            "\u{feff}x",
        ];
        let origins = [
            "https://a.example",
            "https://a.example/",
            "https://a.example:8443",
            "https://a.example//",
            "https://a.example/x",
            "https://",
            "https:///",
            "1http://a",
            "h+t.t-p://a",
            "http://a b",
            "http://a\u{a0}b",
            "http://a\n",
            "http://a/\n",
            "a.example",
            "://a",
            "HTTP://A",
            "http://a://b",
        ];
        let mut docs = vec![
            json!([]),
            json!(null),
            json!(3),
            json!({}),
            json!({T: 7, "b": [], "c": null, "d": {}}),
            json!({T: {"zzz": 1, "aaa": 2, "max_request_bytes": "x"}}),
        ];
        for s in blank.iter().chain(&origins) {
            for key in [
                "static_resource_path",
                "scope_probe_tool",
                "foreign_resource",
                "schema_probe_tool",
                "traversal_control_uri",
                "allowed_origin",
            ] {
                docs.push(json!({T: {key: s}}));
            }
            docs.push(json!({T: {"downstream_endpoints": [s, 1, null]}}));
        }
        for n in [
            json!(0),
            json!(1),
            json!(1.0),
            json!(1.5),
            json!(-0.5),
            json!(10485760),
            json!(10485760.0),
            json!(10485761),
            json!(1e300),
            json!(-1e300),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("1"),
            json!(true),
        ] {
            docs.push(json!({T: {"max_request_bytes": n}}));
        }
        for v in [
            json!(null),
            json!({}),
            json!([]),
            json!("x"),
            json!(1),
            json!(true),
        ] {
            for key in [
                "oversize_authorised",
                "tool_calls_authorised",
                "traversal_authorised",
                "scope_probe_arguments",
                "schema_probe_arguments",
                "tool_arguments",
                "downstream_endpoints",
            ] {
                docs.push(json!({T: {key: v}}));
            }
            docs.push(json!({T: {"tool_arguments": {"a": v, "b": {}}}}));
        }
        for doc in &docs {
            assert_eq!(by_us(doc), by_jsonschema(doc), "{doc}");
        }
    }

    #[test]
    fn terminal_escapes_in_names_are_escaped() {
        let p = Problem::UnknownKey {
            target: "t\u{1b}]0;x\u{7}".into(),
            key: "k\u{1b}[2J".into(),
        };
        let s = p.to_string();
        assert!(!s.chars().any(|c| c.is_control()), "{s:?}");
    }
}
