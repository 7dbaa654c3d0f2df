//! Rule `tool-schemas-validated`: tool schemas and argument types validated, graded from
//! every page of `tools/list` read as raw JSON (never through a lenient model).
//!
//! * a: every tool declares an `inputSchema` (MCP requires one) that compiles under its
//!   dialect's metaschema.
//! * b: every declared `outputSchema` compiles; none declared leaves the leg UNKNOWN
//!   (the field is optional in MCP).
//! * c (observed): `$ref`s to other documents, counted and never fetched.
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
//! elsewhere are counted separately (sub-verdict c) because they compile silently.
//!
//! * d (live): the operator's tool called without one required property must come back
//!   as a tool execution error (`isError: true`), not as a protocol error (-32602,
//!   -32600) and not executed. The grader re-checks from the listed schema that the
//!   recorded call really left a required property out. This is no refusal with a
//!   required code (`checks::common::refusal`): a protocol error is the wrong answer
//!   here, whatever its code.

use std::collections::BTreeMap;

use mcp_probe_schema::tape::Json;
use serde::Serialize;
use serde_json::Value;

use self::drafts::Dialect;
use super::live::{self, Recorded};
use crate::check::{Check, Context, Legs};
use crate::checks::common::inventory::{decided, gated, no_session, Read, TOOLS};
use crate::checks::common::text::quote;
use crate::checks::common::text::{capped, count, kind, reason, show, show_json, truncate, SEP};
use crate::checks::common::wire::{refused_at_authentication, Reply};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::{code, leg};

mod drafts;
mod plain;
#[cfg(test)]
mod tests;

/// Tool schemas and argument types validated.
#[derive(Debug)]
pub struct ToolSchemasValidated;
/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    crate::here!("d"),
    " calls one tool the operator names, leaving out one required property: \
     whether the server validates the other tools, argument types and values against the schemas it advertises is \
     not observed (a probe cannot call tools that may have side effects); not probed either: schema depth and \
     validation-time bounds, schema-field sanitisation; external $refs are never fetched, so a schema carrying one \
     (",
    crate::here!("c"),
    ") compiled with the reference unresolved"
);

/// What this rule counted, in the report's details (after the inventory's).
#[derive(Serialize)]
struct SchemaFacts {
    /// Input schemas that compiled.
    input_schemas_compiled: usize,
    /// Tools whose input schema is missing, not a tool object, or does not compile.
    input_schema_failures: usize,
    /// Tools declaring an output schema.
    output_schemas_declared: usize,
    /// Output schemas that compiled.
    output_schemas_compiled: usize,
    /// Output schemas that do not compile.
    output_schema_failures: usize,
    /// Schemas in a dialect this grader does not know, not compiled.
    unrecognised_dialects: usize,
    /// `$ref`s to other documents (sub-verdict c).
    external_refs: usize,
}

/// How the schemas under one key fared.
#[derive(Default)]
struct Schemas {
    declared: usize,
    compiled: BTreeMap<&'static str, usize>,
    failed: Vec<String>,
    unrecognised: Vec<String>,
}

impl Schemas {
    /// Judge the tool's schema under `key`; `name` makes the tool's label, which only a
    /// finding is written with.
    fn judge(&mut self, name: impl Fn() -> String, key: &str, schema: Json<'_>) {
        self.declared += 1;
        match judge(schema) {
            Judged::Compiled(d) => *self.compiled.entry(d.name()).or_default() += 1,
            Judged::Failed(d, why) => self.failed.push(crate::format_exact!(
                "{}: {key} does not compile under {}: {why}",
                name(),
                d.name()
            )),
            Judged::Unrecognised(v) => self.unrecognised.push(crate::format_exact!(
                "{}: {key} declares $schema {v}",
                name()
            )),
        }
    }

    fn compiled_total(&self) -> usize {
        self.compiled.values().sum()
    }

    /// The leg, by the spec's order: any failure, else any unrecognised dialect, else
    /// pass. `none` is the outcome and note when nothing was declared.
    fn leg(&self, id: &str, key: &str, tools: usize, none: (SubOutcome, String)) -> SubVerdict {
        if !self.failed.is_empty() {
            let of = if self.declared < tools {
                crate::format_exact!("{} declaring one", count(self.declared, "tool"))
            } else {
                count(self.declared, "tool")
            };
            let also = match self.unrecognised.len() {
                0 => String::new(),
                n => crate::format_exact!(
                    " (besides, {} in an unrecognised dialect, not compiled)",
                    count(n, key)
                ),
            };
            return SubVerdict::new(
                id,
                SubOutcome::Fail,
                crate::format_exact!(
                    "{key} fails for {} of {of}: {}{also}",
                    self.failed.len(),
                    capped(&self.failed, SEP)
                ),
            );
        }
        if !self.unrecognised.is_empty() {
            let others = match self.compiled_total() {
                0 => String::new(),
                n => crate::format_exact!(" ({n} other{} compiled)", if n == 1 { "" } else { "s" }),
            };
            return SubVerdict::new(
                id,
                SubOutcome::Unknown,
                crate::format_exact!(
                    "unrecognised dialect, not compiled: {}{others}",
                    capped(&self.unrecognised, SEP)
                ),
            );
        }
        if self.declared == 0 {
            return SubVerdict::new(id, none.0, none.1);
        }
        let of = if self.declared < tools {
            crate::format_exact!(
                " ({} of {} declare none)",
                tools - self.declared,
                count(tools, "tool")
            )
        } else {
            String::new()
        };
        SubVerdict::new(
            id,
            SubOutcome::Pass,
            crate::format_exact!(
                "{} compiled ({}){of}",
                count(self.declared, key),
                by_dialect(&self.compiled)
            ),
        )
    }
}

impl Check for ToolSchemasValidated {
    fn id(&self) -> &'static str {
        "tool-schemas-validated"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[TOOLS.leg, leg::SCHEMA_CALL])
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        if ev.revision().is_none() {
            return no_session(REDUCTION);
        }
        let live = vec![schema_violating_call(ev)];
        let seqs = ev.seqs(leg::SCHEMA_CALL);
        let read = Read::of(ev, TOOLS);
        if let Err(gate) = read.gate(ev) {
            let out = gated(&["a", "b"], Some("c"), gate, &read, REDUCTION);
            return live::with_live(out, live, seqs);
        }
        let mut input = Schemas::default();
        let mut output = Schemas::default();
        let mut refs: Vec<String> = Vec::new();
        for item in &read.items {
            // The tool's label is written only into a finding.
            let name = || read.label(item, "name");
            let tool = item.value();
            if !tool.is_object() {
                input.declared += 1;
                input.failed.push(crate::format_exact!(
                    "{} is {}, not a tool object",
                    name(),
                    kind(tool)
                ));
                continue;
            }
            // Both schemas found in one pass over the tool's members.
            let (mut input_schema, mut output_schema) = (None, None);
            for (k, v) in tool.members() {
                match k {
                    "inputSchema" => input_schema = Some(v),
                    "outputSchema" => output_schema = Some(v),
                    _ => {}
                }
            }
            match input_schema {
                None => {
                    input.declared += 1;
                    input.failed.push(crate::format_exact!(
                        "{} declares no inputSchema (MCP requires one)",
                        name()
                    ));
                }
                Some(s) => input.judge(name, "inputSchema", s),
            }
            if let Some(s) = output_schema {
                output.judge(name, "outputSchema", s);
            }
            for (key, s) in [
                ("inputSchema", input_schema),
                ("outputSchema", output_schema),
            ] {
                for r in s.map(external_refs).unwrap_or_default() {
                    refs.push(crate::format_exact!(
                        "{} {key} -> {}",
                        name(),
                        show(&Value::String(r))
                    ));
                }
            }
        }
        let tools = read.items.len();
        let a = input.leg(
            "a",
            "inputSchema",
            tools,
            (SubOutcome::Unknown, "no inputSchema read".into()),
        );
        let b = output.leg(
            "b",
            "outputSchema",
            tools,
            (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "none of the {} declares an outputSchema (optional in MCP): nothing compiled, so this leg cannot pass",
                    count(tools, "tool")
                ),
            ),
        );
        let c = SubVerdict::new(
            "c",
            SubOutcome::Observed,
            if refs.is_empty() {
                "no schema carries an external $ref".to_string()
            } else {
                crate::format_exact!(
                    "{} to another document (counted, never fetched; a schema carrying one compiled with it unresolved): {}",
                    count(refs.len(), "external $ref"),
                    capped(&refs, SEP)
                )
            },
        );
        let facts = SchemaFacts {
            input_schemas_compiled: input.compiled_total(),
            input_schema_failures: input.failed.len(),
            output_schemas_declared: output.declared,
            output_schemas_compiled: output.compiled_total(),
            output_schema_failures: output.failed.len(),
            unrecognised_dialects: input.unrecognised.len() + output.unrecognised.len(),
            external_refs: refs.len(),
        };
        live::with_live(decided(vec![a, b, c], &read, REDUCTION, &facts), live, seqs)
    }
}

/// Sub-verdict d: the recorded `tools/call` without a required property.
///
/// The call must leave out a property the listed `inputSchema` requires (else ERROR: it
/// tests nothing). Then: `isError: true` → pass; another result → fail (executed
/// despite the violation); -32602 or -32600 → fail (a protocol error instead of a tool
/// execution error); HTTP 401/403 → unknown; any other JSON-RPC error → unknown (a
/// refusal that answers another question: with no control call, -32603 or a header
/// refusal cannot be tied to the missing property); no JSON-RPC answer → error.
fn schema_violating_call(ev: &Bundle) -> SubVerdict {
    let g = (|| {
        let (a, req) =
            match live::recorded(ev, leg::SCHEMA_CALL, "the call without a required property") {
                Recorded::NotSent(g) => return Err(g),
                Recorded::Sent(a, req) => (a, req),
            };
        let tool = req.name.as_deref().unwrap_or("");
        let required: Vec<&str> = ev
            .inventory
            .tools
            .items
            .iter()
            .filter(|t| t.get("name").and_then(Json::as_str) == Some(tool))
            .filter_map(|t| t.get("inputSchema")?.get("required"))
            .flat_map(Json::items)
            .filter_map(Json::as_str)
            .collect();
        let left_out = live::left_out(&req, &required);
        if req.arguments.is_none() || left_out.is_empty() {
            return Err((
                SubOutcome::Error,
                crate::format_exact!(
                    "the recorded tools/call of {} leaves out no property the listed inputSchema requires, so it tests nothing",
                    quote(tool)
                ),
            ));
        }
        let call = crate::format_exact!(
            "tools/call of {} without {}",
            quote(tool),
            left_out.join(", ")
        );
        if let Some(g) = refused_at_authentication(
            &a,
            ev.authenticated(),
            "so argument validation was never reached",
        ) {
            return Ok((g.0, crate::format_exact!("{call}: {}", g.1)));
        }
        let said = a.summary();
        Ok(match &a.reply {
            Reply::Result(r) if r.is_error() => (
                SubOutcome::Pass,
                crate::format_exact!(
                    "{call}: {said}, a tool execution error{}",
                    live::first_text(r).map(|t| crate::format_exact!(" ({t})")).unwrap_or_default()
                ),
            ),
            Reply::Result(r) => (
                SubOutcome::Fail,
                crate::format_exact!(
                    "{call}: {said}: executed despite the missing required property{}",
                    live::first_text(r).map(|t| crate::format_exact!(" (first text {t})")).unwrap_or_default()
                ),
            ),
            Reply::Error(e) if matches!(e.code, Some(code::INVALID_PARAMS | code::INVALID_REQUEST)) => (
                SubOutcome::Fail,
                crate::format_exact!("{call}: {said}: a protocol error, where a tool execution error (isError) is required"),
            ),
            Reply::Error(_) => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{call}: {said}: refused, but not as invalid arguments; without a control call this cannot be \
                     tied to the missing property"
                ),
            ),
            _ => (
                SubOutcome::Error,
                crate::format_exact!("{call}: {said}: no JSON-RPC answer attributable to the server"),
            ),
        })
    })();
    let (o, note) = g.unwrap_or_else(|e| e);
    SubVerdict::new("d", o, note)
}

/// `all under 2020-12`, or `2 under 2020-12, 1 under draft-07`.
fn by_dialect(compiled: &BTreeMap<&'static str, usize>) -> String {
    if let [(d, _)] = compiled.iter().collect::<Vec<_>>()[..] {
        return crate::format_exact!("all under {d}");
    }
    compiled
        .iter()
        .map(|(d, n)| crate::format_exact!("{n} under {d}"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------
// JSON Schema dialect and compilation

/// A `$schema` value that names no dialect this grader knows ([`dialect`]); its message
/// is the value as the evidence shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum UnknownDialect {
    /// A string that contains none of the table's names (the value, shown).
    #[error("{0}")]
    Unrecognised(String),
    /// Not a string at all (the value, shown).
    #[error("{0} (not a string)")]
    NotAString(String),
}

/// The dialect a schema declares, by the explicit table; `Err` names an unrecognised
/// `$schema` value.
fn dialect(schema: Json<'_>) -> Result<Dialect, UnknownDialect> {
    let Some(declared) = schema.get("$schema") else {
        return Ok(Dialect::Draft202012);
    };
    match declared.as_str() {
        Some(s) if s.trim().is_empty() => Ok(Dialect::Draft202012),
        Some(s) => Dialect::TABLE
            .iter()
            .find(|(needle, _)| s.contains(needle))
            .map(|(_, d)| *d)
            .ok_or_else(|| UnknownDialect::Unrecognised(show_json(declared))),
        None => Err(UnknownDialect::NotAString(show_json(declared))),
    }
}

/// A schema that does not validate against its dialect's metaschema ([`compile`]): the
/// first error's first line, with the location inside the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {at}: {reason}")]
struct MetaschemaViolation {
    /// JSON pointer inside the schema (`/` for the root), truncated.
    at: String,
    /// The first line of the validator's reason.
    reason: String,
}

/// Check `schema` against the metaschema of `dialect`; `Err` is the first error's
/// first line, with the location inside the schema. A plain schema ([`plain`]) is told
/// valid without the validator, which takes every other one.
fn compile(schema: Json<'_>, dialect: Dialect) -> Result<(), MetaschemaViolation> {
    if plain::valid(schema, dialect) {
        return Ok(());
    }
    by_metaschema(&schema.to_value(), dialect)
}

/// [`compile`] by the validator alone (which reads a `Value`).
fn by_metaschema(schema: &Value, dialect: Dialect) -> Result<(), MetaschemaViolation> {
    dialect.validate(schema).map_err(|e| {
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
enum Judged {
    /// It validates against its dialect's metaschema.
    Compiled(Dialect),
    /// It does not; the reason.
    Failed(Dialect, String),
    /// Its `$schema` names no dialect this grader knows; the value.
    Unrecognised(String),
}

/// Dialect, then compile.
fn judge(schema: Json<'_>) -> Judged {
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
fn external_refs(schema: Json<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        if v.is_object() {
            // One pass over the members: the `$ref` among them (a repeated name is read
            // once, with its last value), and each member to walk after.
            let at = stack.len();
            for (k, m) in v.members() {
                if k == "$ref" {
                    if let Some(r) = m.as_str().filter(|r| r.contains("://")) {
                        out.push(r.to_owned());
                    }
                }
                stack.push(m);
            }
            stack[at..].reverse();
        } else if v.is_array() {
            let at = stack.len();
            stack.extend(v.items());
            stack[at..].reverse();
        }
    }
    out
}
