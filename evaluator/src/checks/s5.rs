//! Section 5 checks: server configuration (spec/checks.md §11.4).
//!
//! * 5.1.1, 5.1.2, 5.1.3 are graded from the inventory: every page of `tools/list`,
//!   `resources/templates/list` and `prompts/list`, read as raw JSON (never through a
//!   lenient model that would coerce `"required": "yes"` to `true` or drop a null
//!   `uriTemplate`). Their live legs (5.1.1d, 5.1.2c, 5.1.3c/d) need requests this
//!   collector does not send yet; the reduction says so and no outcome is invented.
//! * 5.2.1, 5.2.2, 5.3.1, 5.5.1, 5.6.1 are reported only: always N/A, with the reason
//!   and the observations the spec names.
//!
//! 5.2.3 and 5.4.1 need probe legs the collector does not record yet and are not listed
//! here, so the report shows them as not graded rather than guessing.
//!
//! Departures from the reference prober, deliberate (spec/checks.md §17): every page is
//! read (no page-one caveat; a list cut short says which pages went unexamined); the
//! gate says whether a list was not declared, refused, unparsable or empty; a tool
//! without `inputSchema` fails 5.1.1a (MCP requires one; spec/checks.md §18 notes the
//! reference did not check it); a list request that got no response at all is ERROR
//! (the observation was never made), not UNKNOWN.

mod inventory;
mod schema;
mod text;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use self::inventory::{Item, Read, PROMPTS, TEMPLATES, TOOLS};
use self::schema::{external_refs, judge, Judged};
use self::text::{capped, count, kind, quote, show};
use crate::check::{Check, Context, Legs, Needs};
use crate::evidence::Evidence;
use crate::verdict::{Leg, LegOutcome, Outcome, Verdict};
use mcp_probe_schema::model::Era;

/// Separator between entries of a list inside one leg note (legs are joined by `; `).
const SEP: &str = " | ";

// ---------------------------------------------------------------------------------------
// Shared shaping

/// Legs and evidence for an inventory that produced nothing to judge: every graded leg
/// carries the gate's outcome, the evidence states the reason once.
fn gated(
    graded: &[&str],
    observed: Option<&str>,
    (outcome, why): (LegOutcome, String),
    read: &Read,
    reduction: &str,
) -> Outcome {
    let mut legs: Vec<Leg> = graded
        .iter()
        .map(|id| Leg::new(id, outcome, why.clone()))
        .collect();
    if let Some(id) = observed {
        legs.push(Leg::new(id, LegOutcome::Observed, "nothing read"));
    }
    let mut out = Outcome::from_legs(legs, reduction)
        .with_records(read.seqs.iter().copied())
        .with_detail(read.list.key, 0)
        .with_detail("pages", read.pages);
    out.evidence = why;
    out
}

/// Legs graded from items: evidence is the legs' notes, then what was read. A list cut
/// short (page bound, repeated cursor, failed or unreadable page, bundle bound) never
/// passes: a leg that found nothing wrong among the items read is UNKNOWN naming the
/// cut; a FAIL found among them stands.
fn decided(legs: Vec<Leg>, read: &Read, reduction: &str, details: Map<String, Value>) -> Outcome {
    let legs = match read.cut() {
        None => legs,
        Some(cut) => legs
            .into_iter()
            .map(|l| match l.outcome {
                LegOutcome::Pass => {
                    Leg::new(&l.id, LegOutcome::Unknown, format!("{}, but {cut}", l.note))
                }
                _ => l,
            })
            .collect(),
    };
    let mut out = Outcome::from_legs(legs, reduction)
        .with_records(read.seqs.iter().copied())
        .with_detail(read.list.key, read.items.len())
        .with_detail("pages", read.pages)
        .with_detail("inventory_complete", read.complete);
    for (k, v) in details {
        out.details.insert(k, v);
    }
    out.evidence = format!("{}; {}", out.evidence, read.coverage());
    out
}

/// Without a negotiated session the runner already answers; this keeps `grade` total.
fn no_session(reduction: &str) -> Outcome {
    Outcome::single(
        Verdict::Error,
        "no MCP session was established, so no inventory was read",
        reduction,
    )
}

/// `all under 2020-12`, or `2 under 2020-12, 1 under draft-07`.
fn by_dialect(compiled: &BTreeMap<&'static str, usize>) -> String {
    if let [(d, _)] = compiled.iter().collect::<Vec<_>>()[..] {
        return format!("all under {d}");
    }
    compiled
        .iter()
        .map(|(d, n)| format!("{n} under {d}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a declaration's string field is not a non-blank string ([`non_blank`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotNonBlank {
    /// The field is absent.
    #[error("declares no {key}")]
    Missing {
        /// The field.
        key: &'static str,
    },
    /// The field is a blank string (shown).
    #[error("{key} is blank ({shown})")]
    Blank {
        /// The field.
        key: &'static str,
        /// The value as the evidence shows it.
        shown: String,
    },
    /// The field is JSON null.
    #[error("{key} is null")]
    Null {
        /// The field.
        key: &'static str,
    },
    /// The field is another JSON type.
    #[error("{key} is {kind} ({shown}), not a string")]
    NotAString {
        /// The field.
        key: &'static str,
        /// The JSON type it has.
        kind: &'static str,
        /// The value as the evidence shows it.
        shown: String,
    },
}

/// A string field of a declaration, strictly: `Ok` when it is a non-blank string,
/// else why not (missing, null, another JSON type, blank).
fn non_blank<'a>(item: &'a Value, key: &'static str) -> Result<&'a str, NotNonBlank> {
    match item.get(key) {
        None => Err(NotNonBlank::Missing { key }),
        Some(Value::String(s)) if s.trim().is_empty() => Err(NotNonBlank::Blank {
            key,
            shown: show(&Value::String(s.clone())),
        }),
        Some(Value::String(s)) => Ok(s),
        Some(Value::Null) => Err(NotNonBlank::Null { key }),
        Some(other) => Err(NotNonBlank::NotAString {
            key,
            kind: kind(other),
            shown: show(other),
        }),
    }
}

// ---------------------------------------------------------------------------------------
// 5.1.1

/// 5.1.1: tool schemas and argument types validated.
#[derive(Debug)]
pub struct Check5_1_1;
/// The 5.1.1 check.
pub static C5_1_1: Check5_1_1 = Check5_1_1;

const REDUCTION_5_1_1: &str = "decided from the advertised schemas alone; 5.1.1d (a tools/call that violates the \
     input schema must come back as a tool execution error, isError, not as a protocol error) is not probed yet: this \
     collector sends no tools/call; not probed either: whether the server validates arguments against the schema it \
     advertises, schema depth and validation-time bounds, schema-field sanitisation; external $refs are never \
     fetched, so a schema carrying one (5.1.1c) compiled with the reference unresolved";

/// How the schemas under one key fared.
#[derive(Default)]
struct Schemas {
    declared: usize,
    compiled: BTreeMap<&'static str, usize>,
    failed: Vec<String>,
    unrecognised: Vec<String>,
}

impl Schemas {
    fn judge(&mut self, name: &str, key: &str, schema: &Value) {
        self.declared += 1;
        match judge(schema) {
            Judged::Compiled(d) => *self.compiled.entry(d.name()).or_default() += 1,
            Judged::Failed(d, why) => self.failed.push(format!(
                "{name}: {key} does not compile under {}: {why}",
                d.name()
            )),
            Judged::Unrecognised(v) => self
                .unrecognised
                .push(format!("{name}: {key} declares $schema {v}")),
        }
    }

    fn compiled_total(&self) -> usize {
        self.compiled.values().sum()
    }

    /// The leg, by the spec's order: any failure, else any unrecognised dialect, else
    /// pass. `none` is the outcome and note when nothing was declared.
    fn leg(&self, id: &str, key: &str, tools: usize, none: (LegOutcome, String)) -> Leg {
        if !self.failed.is_empty() {
            let of = if self.declared < tools {
                format!("{} declaring one", count(self.declared, "tool"))
            } else {
                count(self.declared, "tool")
            };
            let also = match self.unrecognised.len() {
                0 => String::new(),
                n => format!(
                    " (besides, {} in an unrecognised dialect, not compiled)",
                    count(n, key)
                ),
            };
            return Leg::new(
                id,
                LegOutcome::Fail,
                format!(
                    "{key} fails for {} of {of}: {}{also}",
                    self.failed.len(),
                    capped(&self.failed, SEP)
                ),
            );
        }
        if !self.unrecognised.is_empty() {
            let others = match self.compiled_total() {
                0 => String::new(),
                n => format!(" ({n} other{} compiled)", if n == 1 { "" } else { "s" }),
            };
            return Leg::new(
                id,
                LegOutcome::Unknown,
                format!(
                    "unrecognised dialect, not compiled: {}{others}",
                    capped(&self.unrecognised, SEP)
                ),
            );
        }
        if self.declared == 0 {
            return Leg::new(id, none.0, none.1);
        }
        let of = if self.declared < tools {
            format!(
                " ({} of {} declare none)",
                tools - self.declared,
                count(tools, "tool")
            )
        } else {
            String::new()
        };
        Leg::new(
            id,
            LegOutcome::Pass,
            format!(
                "{} compiled ({}){of}",
                count(self.declared, key),
                by_dialect(&self.compiled)
            ),
        )
    }
}

impl Check for Check5_1_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[TOOLS.leg])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        if ev.revision().is_none() {
            return no_session(REDUCTION_5_1_1);
        }
        let read = Read::of(ev, TOOLS);
        if let Err(gate) = read.gate(ev) {
            return gated(
                &["5.1.1a", "5.1.1b"],
                Some("5.1.1c"),
                gate,
                &read,
                REDUCTION_5_1_1,
            );
        }
        let mut input = Schemas::default();
        let mut output = Schemas::default();
        let mut refs: Vec<String> = Vec::new();
        for item in &read.items {
            let name = read.label(item, "name");
            let Some(tool) = item.value.as_object() else {
                input.declared += 1;
                input.failed.push(format!(
                    "{name} is {}, not a tool object",
                    kind(&item.value)
                ));
                continue;
            };
            match tool.get("inputSchema") {
                None => {
                    input.declared += 1;
                    input
                        .failed
                        .push(format!("{name} declares no inputSchema (MCP requires one)"));
                }
                Some(s) => input.judge(&name, "inputSchema", s),
            }
            if let Some(s) = tool.get("outputSchema") {
                output.judge(&name, "outputSchema", s);
            }
            for (key, s) in [
                ("inputSchema", tool.get("inputSchema")),
                ("outputSchema", tool.get("outputSchema")),
            ] {
                for r in s.map(external_refs).unwrap_or_default() {
                    refs.push(format!("{name} {key} -> {}", show(&Value::String(r))));
                }
            }
        }
        let tools = read.items.len();
        let a = input.leg(
            "5.1.1a",
            "inputSchema",
            tools,
            (LegOutcome::Unknown, "no inputSchema read".into()),
        );
        let b = output.leg(
            "5.1.1b",
            "outputSchema",
            tools,
            (
                LegOutcome::Unknown,
                format!(
                    "none of the {} declares an outputSchema (optional in MCP): nothing compiled, so this leg cannot pass",
                    count(tools, "tool")
                ),
            ),
        );
        let c = Leg::new(
            "5.1.1c",
            LegOutcome::Observed,
            if refs.is_empty() {
                "no schema carries an external $ref".to_string()
            } else {
                format!(
                    "{} to another document (counted, never fetched; a schema carrying one compiled with it unresolved): {}",
                    count(refs.len(), "external $ref"),
                    capped(&refs, SEP)
                )
            },
        );
        let mut details = Map::new();
        details.insert(
            "input_schemas_compiled".into(),
            input.compiled_total().into(),
        );
        details.insert("input_schema_failures".into(), input.failed.len().into());
        details.insert("output_schemas_declared".into(), output.declared.into());
        details.insert(
            "output_schemas_compiled".into(),
            output.compiled_total().into(),
        );
        details.insert("output_schema_failures".into(), output.failed.len().into());
        details.insert(
            "unrecognised_dialects".into(),
            (input.unrecognised.len() + output.unrecognised.len()).into(),
        );
        details.insert("external_refs".into(), refs.len().into());
        decided(vec![a, b, c], &read, REDUCTION_5_1_1, details)
    }
}

// ---------------------------------------------------------------------------------------
// 5.1.2

/// 5.1.2: resource templates with explicit URI patterns and MIME types.
#[derive(Debug)]
pub struct Check5_1_2;
/// The 5.1.2 check.
pub static C5_1_2: Check5_1_2 = Check5_1_2;

const REDUCTION_5_1_2: &str = "decided from the advertised templates alone; 5.1.2c (reading a resource that does \
     not exist must be rejected with -32602) is not probed yet: this collector sends no resources/read; not probed \
     either: the order in which the server substitutes template variables (internal); the approved-namespace and \
     nosniff requirements depend on deployment intent";

const MIME_STRICTNESS: &str =
    "stricter than base MCP, where mimeType is optional: the benchmark requires an \
     explicit MIME type";

impl Check for Check5_1_2 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[TEMPLATES.leg])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        if ev.revision().is_none() {
            return no_session(REDUCTION_5_1_2);
        }
        let read = Read::of(ev, TEMPLATES);
        if let Err(gate) = read.gate(ev) {
            return gated(&["5.1.2a", "5.1.2b"], None, gate, &read, REDUCTION_5_1_2);
        }
        let (mut bad_uri, mut bad_mime) = (Vec::new(), Vec::new());
        let (mut uris, mut mimes) = (Vec::new(), Vec::new());
        for item in &read.items {
            let name = read.label(item, "name");
            if !item.value.is_object() {
                let why = format!("{name} is {}, not a template object", kind(&item.value));
                bad_uri.push(why.clone());
                bad_mime.push(why);
                continue;
            }
            match non_blank(&item.value, "uriTemplate") {
                Ok(u) => uris.push(quote(u)),
                Err(why) => bad_uri.push(format!("{name} {why}")),
            }
            match non_blank(&item.value, "mimeType") {
                Ok(m) => {
                    let m = quote(m);
                    if !mimes.contains(&m) {
                        mimes.push(m);
                    }
                }
                Err(why) => bad_mime.push(format!("{name} {why}")),
            }
        }
        let n = read.items.len();
        let a = if bad_uri.is_empty() {
            Leg::new(
                "5.1.2a",
                LegOutcome::Pass,
                format!(
                    "{} declare{} a non-blank uriTemplate: {}",
                    count(n, "template"),
                    if n == 1 { "s" } else { "" },
                    capped(&uris, ", ")
                ),
            )
        } else {
            Leg::new(
                "5.1.2a",
                LegOutcome::Fail,
                format!(
                    "{} of {} without a usable URI pattern: {}",
                    bad_uri.len(),
                    count(n, "template"),
                    capped(&bad_uri, SEP)
                ),
            )
        };
        let b = if bad_mime.is_empty() {
            Leg::new(
                "5.1.2b",
                LegOutcome::Pass,
                format!(
                    "{} declare{} an explicit mimeType ({})",
                    count(n, "template"),
                    if n == 1 { "s" } else { "" },
                    capped(&mimes, ", ")
                ),
            )
        } else {
            Leg::new(
                "5.1.2b",
                LegOutcome::Fail,
                format!(
                    "{} of {} without an explicit MIME type: {} ({MIME_STRICTNESS})",
                    bad_mime.len(),
                    count(n, "template"),
                    capped(&bad_mime, SEP)
                ),
            )
        };
        let mut details = Map::new();
        details.insert("bad_uri_templates".into(), bad_uri.len().into());
        details.insert("missing_mime_types".into(), bad_mime.len().into());
        decided(vec![a, b], &read, REDUCTION_5_1_2, details)
    }
}

// ---------------------------------------------------------------------------------------
// 5.1.3

/// 5.1.3: prompt templates declare and validate arguments.
#[derive(Debug)]
pub struct Check5_1_3;
/// The 5.1.3 check.
pub static C5_1_3: Check5_1_3 = Check5_1_3;

const REDUCTION_5_1_3: &str = "decided from the advertised prompts alone, read as raw JSON (an SDK model would \
     coerce a non-boolean `required`); 5.1.3c (prompts/get without a required argument must be rejected with -32602) \
     and 5.1.3d (prompts/get of a prompt name that does not exist must be rejected with -32602) are not probed yet: \
     this collector sends no prompts/get; not probed either: prompt logic that runs only on an explicit get, \
     per-invocation name logging";

/// What 5.1.3 found in one prompt's arguments.
#[derive(Default)]
struct Arguments {
    declared: usize,
    required_boolean: usize,
    bad_name: Vec<String>,
    bad_required: Vec<String>,
}

impl Arguments {
    fn read(&mut self, read: &Read, item: &Item) {
        let prompt = read.label(item, "name");
        if !item.value.is_object() {
            self.bad_name.push(format!(
                "{prompt} is {}, not a prompt object",
                kind(&item.value)
            ));
            return;
        }
        let args = match item.value.get("arguments") {
            None => return,
            Some(Value::Array(a)) => a,
            Some(other) => {
                self.bad_name.push(format!(
                    "{prompt} arguments is {} ({}), not an array",
                    kind(other),
                    show(other)
                ));
                return;
            }
        };
        for (i, arg) in args.iter().enumerate() {
            self.declared += 1;
            let Some(obj) = arg.as_object() else {
                self.bad_name.push(format!(
                    "{prompt} argument #{} is {}, not an object",
                    i + 1,
                    kind(arg)
                ));
                continue;
            };
            let label = match non_blank(arg, "name") {
                Ok(n) => format!("{prompt} argument {}", quote(n)),
                Err(why) => {
                    self.bad_name
                        .push(format!("{prompt} argument #{}: {why}", i + 1));
                    format!("{prompt} argument #{}", i + 1)
                }
            };
            match obj.get("required") {
                None => {}
                Some(Value::Bool(_)) => self.required_boolean += 1,
                Some(v) => self.bad_required.push(format!(
                    "{label}: required is {} ({}), not a JSON boolean",
                    show(v),
                    kind(v)
                )),
            }
        }
    }
}

impl Check for Check5_1_3 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[PROMPTS.leg])
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        if ev.revision().is_none() {
            return no_session(REDUCTION_5_1_3);
        }
        let read = Read::of(ev, PROMPTS);
        if let Err(gate) = read.gate(ev) {
            return gated(&["5.1.3a", "5.1.3b"], None, gate, &read, REDUCTION_5_1_3);
        }
        let mut args = Arguments::default();
        for item in &read.items {
            args.read(&read, item);
        }
        let prompts = count(read.items.len(), "prompt");
        let a = if !args.bad_name.is_empty() {
            Leg::new(
                "5.1.3a",
                LegOutcome::Fail,
                format!(
                    "{} without a usable name: {}",
                    count(args.bad_name.len(), "declaration"),
                    capped(&args.bad_name, SEP)
                ),
            )
        } else if args.declared == 0 {
            Leg::new(
                "5.1.3a",
                LegOutcome::Pass,
                format!("no argument is declared ({prompts} read), so none is left unnamed"),
            )
        } else {
            Leg::new(
                "5.1.3a",
                LegOutcome::Pass,
                format!(
                    "every argument has a non-blank name ({} across {prompts})",
                    count(args.declared, "argument")
                ),
            )
        };
        let b = if !args.bad_required.is_empty() {
            Leg::new(
                "5.1.3b",
                LegOutcome::Fail,
                format!(
                    "{} with a non-boolean `required`: {}",
                    count(args.bad_required.len(), "argument"),
                    capped(&args.bad_required, SEP)
                ),
            )
        } else {
            Leg::new(
                "5.1.3b",
                LegOutcome::Pass,
                if args.declared == 0 {
                    format!("no argument is declared ({prompts} read), so there is no `required` to check")
                } else if args.required_boolean == args.declared {
                    format!(
                        "every argument carries a JSON boolean `required` ({})",
                        count(args.declared, "argument")
                    )
                } else {
                    format!(
                        "`required` is a JSON boolean wherever present ({} of {}; the others omit it, which MCP allows)",
                        args.required_boolean,
                        count(args.declared, "argument")
                    )
                },
            )
        };
        let mut details = Map::new();
        details.insert("arguments".into(), args.declared.into());
        details.insert("bad_argument_names".into(), args.bad_name.len().into());
        details.insert(
            "non_boolean_required".into(),
            args.bad_required.len().into(),
        );
        decided(vec![a, b], &read, REDUCTION_5_1_3, details)
    }
}

// ---------------------------------------------------------------------------------------
// Reported only: always N/A, with what could be observed.

/// N/A in the shape every section uses for reported-only checks (docs/checks.md, Section 2):
/// `reported only: <reason>; transport <…>; <observation>`, detail `transport`.
fn reported_only(ev: &Evidence, reason: &str, observed: Option<&str>, reduction: &str) -> Outcome {
    let observed: Vec<String> = observed.into_iter().map(str::to_string).collect();
    super::common::reported::reported_only(ev, reason, &observed, reduction)
}

/// The capabilities object, only when a session was negotiated (`None`: unobserved,
/// which is not "declared none").
fn negotiated_capabilities(ev: &Evidence) -> Option<&Value> {
    ev.revision().and(ev.capabilities())
}

/// 5.2.1: listChanged notifications rate-limited.
#[derive(Debug)]
pub struct Check5_2_1;
/// The 5.2.1 check.
pub static C5_2_1: Check5_2_1 = Check5_2_1;

impl Check for Check5_2_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }
    fn needs(&self) -> Needs {
        Needs::Nothing
    }
    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        // Which lists the server says may change: context for the reader, not graded.
        let flags: Option<Map<String, Value>> = negotiated_capabilities(ev).map(|c| {
            ["tools", "resources", "prompts"]
                .iter()
                .map(|k| {
                    let on =
                        c.get(*k).and_then(|v| v.get("listChanged")) == Some(&Value::Bool(true));
                    (k.to_string(), Value::Bool(on))
                })
                .collect()
        });
        let seen = match &flags {
            None => "no capabilities (no session was established)".to_string(),
            Some(f) => {
                let on: Vec<&str> = f
                    .iter()
                    .filter(|(_, v)| **v == Value::Bool(true))
                    .map(|(k, _)| k.as_str())
                    .collect();
                if on.is_empty() {
                    "the server declares listChanged on none of tools, resources, prompts"
                        .to_string()
                } else {
                    format!("the server declares listChanged on {}", on.join(", "))
                }
            }
        };
        reported_only(
            ev,
            "read from the benchmark text and not reproduced: how often list_changed \
             notifications are emitted shows only in the server's own log; a client cannot make the server's \
             lists change in order to time them; the minimum interval is the operator's choice and the \
             protocol sets no default",
            Some(&seen),
            "the whole recommendation is server-side: the notification rate and its configured interval are \
             not observable from a client; nothing is probed",
        )
        .with_detail(
            "list_changed_declared",
            flags.map(Value::Object).unwrap_or(Value::Null),
        )
    }
}

/// 5.2.2: sessions not used as authentication.
#[derive(Debug)]
pub struct Check5_2_2;
/// The 5.2.2 check.
pub static C5_2_2: Check5_2_2 = Check5_2_2;

impl Check for Check5_2_2 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }
    fn needs(&self) -> Needs {
        Needs::Nothing
    }
    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let issued = ev
            .revision()
            .and(ev.session())
            .map(|s| s.session_id.is_some());
        let seen = match issued {
            None => "no session was established",
            Some(true) => "the handshake issued an Mcp-Session-Id",
            Some(false) => "no Mcp-Session-Id was issued",
        };
        reported_only(
            ev,
            "testing that a session is never accepted as authentication needs a continuity \
             handle taken from an authorised session and a tool that accepts it; that handle is an application \
             value, not a protocol field, so a probe cannot discover it; the adjacent property (authentication \
             enforced before a response) is decided by 2.3",
            Some(seen),
            "whether the server ever treats a session as proof of identity is application logic a black-box \
             probe cannot reach; nothing is probed",
        )
        .with_detail(
            "session_id_issued",
            issued.map(Value::Bool).unwrap_or(Value::Null),
        )
    }
}

/// 5.3.1: logs separated from protocol stream in stdio mode.
#[derive(Debug)]
pub struct Check5_3_1;
/// The 5.3.1 check.
pub static C5_3_1: Check5_3_1 = Check5_3_1;

impl Check for Check5_3_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }
    fn needs(&self) -> Needs {
        Needs::Nothing
    }
    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        reported_only(
            ev,
            "transport mismatch: the recommendation governs stdio servers (protocol messages \
             on stdout, logs elsewhere); the probe speaks HTTP and never launches a server",
            None,
            "the whole recommendation is host-side: a stdio server's output streams are visible only to \
             whoever launches the process; nothing is probed",
        )
    }
}

/// 5.5.1: authorization, scope and expiry on MCP Tasks.
#[derive(Debug)]
pub struct Check5_5_1;
/// The 5.5.1 check.
pub static C5_5_1: Check5_5_1 = Check5_5_1;

impl Check for Check5_5_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }
    fn needs(&self) -> Needs {
        Needs::Nothing
    }
    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let tasks =
            negotiated_capabilities(ev).map(|c| c.get("tasks").is_some_and(|v| !v.is_null()));
        let seen = match tasks {
            None => "no capabilities (no session was established), so whether the server offers tasks is unknown",
            Some(true) => "the server declares the tasks capability",
            Some(false) => "the server does not declare the tasks capability",
        };
        reported_only(
            ev,
            "deciding it needs a second identity's token to try another principal's task; \
             tasks/list was removed in 2026-07-28, so existing tasks cannot be found; retention and expiry \
             cannot be read without creating a task",
            Some(seen),
            "task authorization, scoping and expiry are server-side policy that needs two identities and task \
             creation to observe; nothing is probed",
        )
        .with_detail("tasks_declared", tasks.map(Value::Bool).unwrap_or(Value::Null))
    }
}

/// 5.6.1: idempotency keys for side-effecting tool calls.
#[derive(Debug)]
pub struct Check5_6_1;
/// The 5.6.1 check.
pub static C5_6_1: Check5_6_1 = Check5_6_1;

impl Check for Check5_6_1 {
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[])
    }
    fn needs(&self) -> Needs {
        Needs::Nothing
    }
    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        reported_only(
            ev,
            "every wire test would execute a side-effecting tool, and no tool can be \
             identified as reversible from its declaration; the idempotency-key header and the cached-result \
             indicator are conventions of the recommendation, not MCP fields, so a FAIL would be unearned",
            None,
            "idempotent handling of repeated side-effecting calls is server-side behaviour this probe \
             deliberately does not trigger; nothing is probed",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::leg as leg_of;
    use crate::fixture::{evidence, exchange, list_page, session, skipped};
    use crate::grade::run;
    use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
    use mcp_probe_schema::vocab::{leg, method, LegId};
    use serde_json::json;

    #[test]
    fn non_blank_names_what_is_wrong() {
        let v = json!({"a": "  ", "b": null, "c": 7, "d": "x"});
        assert_eq!(non_blank(&v, "d"), Ok("x"));
        let why = |key| non_blank(&v, key).expect_err("not a non-blank string");
        assert_eq!(why("z").to_string(), "declares no z");
        assert_eq!(why("a").to_string(), "a is blank (\"  \")");
        assert_eq!(why("b"), NotNonBlank::Null { key: "b" });
        assert_eq!(why("b").to_string(), "b is null");
        assert_eq!(why("c").to_string(), "c is a number (7), not a string");
    }

    const REV: &str = "2025-11-25";

    fn caps() -> Value {
        json!({"tools": {}, "resources": {}, "prompts": {}})
    }

    fn grade(check: &dyn Check, capabilities: Value, records: Vec<Record>) -> Outcome {
        let ev = evidence(Some(session(Some(REV), capabilities, None)), records);
        run(check, &ev, &Context::default())
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
        let mut result = json!({"tools": tools});
        if let Some(c) = cursor {
            result["nextCursor"] = json!(c);
        }
        list_page(leg::INVENTORY_TOOLS, method::TOOLS_LIST, id, result)
    }

    fn templates_page(templates: Vec<Value>) -> Record {
        list_page(
            leg::INVENTORY_RESOURCE_TEMPLATES,
            method::RESOURCE_TEMPLATES_LIST,
            4,
            json!({"resourceTemplates": templates}),
        )
    }

    fn prompts_page(id: i64, prompts: Vec<Value>, cursor: Option<&str>) -> Record {
        let mut result = json!({"prompts": prompts});
        if let Some(c) = cursor {
            result["nextCursor"] = json!(c);
        }
        list_page(leg::INVENTORY_PROMPTS, method::PROMPTS_LIST, id, result)
    }

    fn transport_error(legs: &[LegId]) -> Record {
        let mut r = exchange(
            legs,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            200,
            "application/json",
            "",
            &[],
        );
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Timeout,
                message: "no response within 30 s".into(),
            });
        }
        r
    }

    // ----- 5.1.1

    #[test]
    fn s511_compiling_schemas_pass() {
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(2, vec![tool_io("add"), tool_io("echo")], None)],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(
            leg_of(&o, "5.1.1a")
                .note
                .contains("2 inputSchemas compiled (all under 2020-12)"),
            "{o:#?}"
        );
        assert!(
            leg_of(&o, "5.1.1b")
                .note
                .contains("2 outputSchemas compiled"),
            "{o:#?}"
        );
        assert_eq!(leg_of(&o, "5.1.1c").outcome, LegOutcome::Observed);
        assert!(
            o.evidence
                .contains("tools/list read completely: 2 tools on 1 page"),
            "{}",
            o.evidence
        );
        assert!(o.reduction.contains("5.1.1d") && o.reduction.contains("not probed yet"));
        assert_eq!(o.records, vec![0]);
        assert_eq!(o.details["tools"], 2);
        assert_eq!(o.details["input_schemas_compiled"], 2);
    }

    #[test]
    fn s511_type_12_fails_a_naming_the_tool() {
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(
                2,
                vec![tool_io("good"), tool("broken", json!({"type": 12}))],
                None,
            )],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        let a = leg_of(&o, "5.1.1a");
        assert_eq!(a.outcome, LegOutcome::Fail);
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
    fn s511_missing_input_schema_fails_a() {
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(
                2,
                vec![json!({"name": "bare"}), json!("junk")],
                None,
            )],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        let a = &leg_of(&o, "5.1.1a").note;
        assert!(a.contains("`bare` declares no inputSchema"), "{a}");
        assert!(a.contains("tool #2 is a string, not a tool object"), "{a}");
    }

    #[test]
    fn s511_unrecognised_dialect_is_unknown_and_named() {
        let o = grade(
            &C5_1_1,
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
        let a = leg_of(&o, "5.1.1a");
        assert_eq!(a.outcome, LegOutcome::Unknown);
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
    fn s511_a_failure_outranks_an_unrecognised_dialect() {
        let o = grade(
            &C5_1_1,
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
        let a = leg_of(&o, "5.1.1a");
        assert_eq!(a.outcome, LegOutcome::Fail);
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
    fn s511_older_drafts_compile_under_their_own_metaschema() {
        let d7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"});
        let d4_bad =
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": 3});
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(2, vec![tool("seven", d7.clone())], None)],
        );
        assert!(
            leg_of(&o, "5.1.1a")
                .note
                .contains("1 inputSchema compiled (all under draft-07)"),
            "{o:#?}"
        );
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(
                2,
                vec![tool("seven", d7), tool("four", d4_bad)],
                None,
            )],
        );
        assert!(
            leg_of(&o, "5.1.1a")
                .note
                .contains("`four`: inputSchema does not compile under draft-04"),
            "{o:#?}"
        );
    }

    #[test]
    fn s511_no_output_schema_leaves_b_unknown() {
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(
                2,
                vec![tool("t", json!({"type": "object"}))],
                None,
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert_eq!(leg_of(&o, "5.1.1a").outcome, LegOutcome::Pass);
        let b = leg_of(&o, "5.1.1b");
        assert_eq!(b.outcome, LegOutcome::Unknown);
        assert!(
            b.note
                .contains("none of the 1 tool declares an outputSchema"),
            "{}",
            b.note
        );
    }

    #[test]
    fn s511_bad_output_schema_fails_b() {
        let mut t = tool_io("out");
        t["outputSchema"] = json!({"properties": []});
        let o = grade(
            &C5_1_1,
            caps(),
            vec![tools_page(2, vec![t, tool("plain", json!({}))], None)],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        let b = leg_of(&o, "5.1.1b");
        assert_eq!(b.outcome, LegOutcome::Fail);
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
        let o = grade(&C5_1_1, caps(), vec![tools_page(2, vec![t], None)]);
        assert_eq!(leg_of(&o, "5.1.1b").outcome, LegOutcome::Fail, "{o:#?}");
    }

    #[test]
    fn s511_external_ref_is_counted_in_c_not_graded() {
        let mut t = tool_io("remote");
        t["inputSchema"]["properties"]["a"] = json!({"$ref": "https://schemas.example/int.json"});
        let o = grade(&C5_1_1, caps(), vec![tools_page(2, vec![t], None)]);
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        let c = leg_of(&o, "5.1.1c");
        assert_eq!(c.outcome, LegOutcome::Observed);
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
    fn s511_bad_schema_on_page_two_fails() {
        let o = grade(
            &C5_1_1,
            caps(),
            vec![
                tools_page(2, vec![tool_io("first")], Some("c1")),
                tools_page(3, vec![tool("second", json!({"type": 12}))], None),
            ],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            leg_of(&o, "5.1.1a").note.contains("`second` (page 2)"),
            "{o:#?}"
        );
        assert!(
            o.evidence.contains("read completely: 2 tools on 2 pages"),
            "{}",
            o.evidence
        );
        assert_eq!(o.records, vec![0, 1]);
    }

    #[test]
    fn s511_cut_short_says_which_pages_went_unexamined_and_never_passes() {
        let o = grade(
            &C5_1_1,
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
        let a = leg_of(&o, "5.1.1a");
        assert_eq!(a.outcome, LegOutcome::Unknown, "{a:?}");
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
            &C5_1_1,
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
    fn s511_a_truncated_page_is_not_an_answer_and_is_named() {
        // First page truncated: nothing was read, UNKNOWN naming the record.
        let o = grade(
            &C5_1_1,
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
            &C5_1_1,
            caps(),
            vec![
                tools_page(2, vec![tool_io("first")], Some("c1")),
                truncated(tools_page(3, vec![tool_io("second")], None)),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(
            o.evidence.contains(
                "page 2 answered HTTP 200 but record 1: the body ended in a transport error"
            ),
            "{}",
            o.evidence
        );
        assert_eq!(
            o.details["tools"], 1,
            "the truncated page's tool is not counted"
        );
    }

    #[test]
    fn s511_an_inventory_cut_by_the_bundle_bound_is_unknown_naming_it() {
        let mut stripped = tools_page(3, vec![tool("bad", json!({"type": 12}))], None);
        if let Observation::Http(x) = &mut stripped.observation {
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                resp.body.bytes.clear();
            }
        }
        let records = vec![tools_page(2, vec![tool_io("first")], Some("c1")), stripped];
        let mut payload = mcp_probe_schema::testkit::evidence(crate::fixture::ENDPOINT, records);
        payload.session = Some(session(Some(REV), caps(), None));
        payload.run.bundle_capped_from = Some(1);
        let key = mcp_probe_schema::testkit::test_key(7);
        let v =
            mcp_probe_schema::open(&mcp_probe_schema::seal(&payload, &key), &[]).expect("verifies");
        let ev = Evidence::new("capped.mcpev", v);
        let o = run(&C5_1_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        let a = leg_of(&o, "5.1.1a");
        assert_eq!(a.outcome, LegOutcome::Unknown, "{a:?}");
        assert!(
            a.note.contains("record 1: the body")
                && a.note
                    .contains("the bundle bound (--bundle-cap) was reached at record 1"),
            "{a:?}"
        );
    }

    #[test]
    fn s511_tools_capability_absent_is_unknown() {
        let o = grade(
            &C5_1_1,
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
        assert_eq!(leg_of(&o, "5.1.1a").outcome, LegOutcome::Unknown);
        assert_eq!(leg_of(&o, "5.1.1b").outcome, LegOutcome::Unknown);
        assert_eq!(o.details["tools"], 0);
    }

    #[test]
    fn s511_declared_but_empty_is_unknown_and_says_so() {
        let o = grade(&C5_1_1, caps(), vec![tools_page(2, vec![], None)]);
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
    fn s511_refused_unparsable_and_unanswered_lists_are_told_apart() {
        let req = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
        let refused = exchange(
            &[leg::INVENTORY_TOOLS],
            req,
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#,
            &[],
        );
        let o = grade(&C5_1_1, caps(), vec![refused]);
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence.contains(
                "refused tools/list: HTTP 200, JSON-RPC error -32601 \"Method not found\""
            ),
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
        let o = grade(&C5_1_1, caps(), vec![html]);
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("tools/list could not be read: answered HTTP 502 (text/html) with no JSON-RPC message"), "{}", o.evidence);

        let o = grade(
            &C5_1_1,
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
    fn s511_long_failure_lists_are_capped() {
        let tools: Vec<Value> = (0..8)
            .map(|i| tool(&format!("t{i}"), json!({"type": 12})))
            .collect();
        let o = grade(&C5_1_1, caps(), vec![tools_page(2, tools, None)]);
        let a = &leg_of(&o, "5.1.1a").note;
        assert!(a.contains("inputSchema fails for 8 of 8 tools"), "{a}");
        assert!(
            a.contains("`t4`") && !a.contains("`t5`") && a.contains("and 3 more"),
            "{a}"
        );
    }

    #[test]
    fn s511_without_a_session_the_runner_decides() {
        let ev = evidence(None, vec![]);
        assert_eq!(
            run(&C5_1_1, &ev, &Context::default()).verdict,
            Verdict::Error
        );
        let mut s = session(None, json!({}), None);
        s.auth_required = true;
        let ev = evidence(Some(s), vec![]);
        assert_eq!(
            run(&C5_1_1, &ev, &Context::default()).verdict,
            Verdict::Unknown
        );
        // A bundle from a collector that never recorded the leg: ERROR naming it.
        let o = grade(&C5_1_1, caps(), vec![]);
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("inventory.tools"), "{}", o.evidence);
    }

    // ----- 5.1.2

    fn template(name: &str, uri: Value, mime: Option<&str>) -> Value {
        let mut t = json!({"name": name, "uriTemplate": uri});
        if let Some(m) = mime {
            t["mimeType"] = json!(m);
        }
        t
    }

    #[test]
    fn s512_explicit_templates_pass() {
        let o = grade(
            &C5_1_2,
            caps(),
            vec![templates_page(vec![template(
                "greeting",
                json!("greeting://{name}"),
                Some("text/plain"),
            )])],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(leg_of(&o, "5.1.2a").note.contains("`greeting://{name}`"));
        assert!(leg_of(&o, "5.1.2b").note.contains("`text/plain`"));
        assert!(o.reduction.contains("5.1.2c") && o.reduction.contains("not probed yet"));
    }

    #[test]
    fn s512_blank_null_or_non_string_uri_template_fails_a() {
        let o = grade(
            &C5_1_2,
            caps(),
            vec![templates_page(vec![
                template("blank", json!("  "), Some("text/plain")),
                template("nulled", Value::Null, Some("text/plain")),
                template("numeric", json!(12), Some("text/plain")),
                json!({"name": "absent", "mimeType": "text/plain"}),
                template("fine", json!("x://{id}"), Some("text/plain")),
            ])],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        let a = &leg_of(&o, "5.1.2a").note;
        assert!(
            a.contains("4 of 5 templates without a usable URI pattern"),
            "{a}"
        );
        assert!(a.contains("`blank` uriTemplate is blank"), "{a}");
        assert!(a.contains("`nulled` uriTemplate is null"), "{a}");
        assert!(
            a.contains("`numeric` uriTemplate is a number (12), not a string"),
            "{a}"
        );
        assert!(a.contains("`absent` declares no uriTemplate"), "{a}");
        assert_eq!(leg_of(&o, "5.1.2b").outcome, LegOutcome::Pass);
    }

    #[test]
    fn s512_missing_mime_type_fails_b_with_the_strictness_note() {
        let o = grade(
            &C5_1_2,
            caps(),
            vec![templates_page(vec![template(
                "greeting",
                json!("greeting://{name}"),
                None,
            )])],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(leg_of(&o, "5.1.2a").outcome, LegOutcome::Pass);
        let b = &leg_of(&o, "5.1.2b").note;
        assert!(b.contains("`greeting` declares no mimeType"), "{b}");
        assert!(b.contains("stricter than base MCP"), "{b}");
        let o = grade(
            &C5_1_2,
            caps(),
            vec![templates_page(vec![template(
                "g",
                json!("g://{x}"),
                Some(""),
            )])],
        );
        assert!(
            leg_of(&o, "5.1.2b").note.contains("`g` mimeType is blank"),
            "{o:#?}"
        );
    }

    #[test]
    fn s512_resources_capability_missing_is_unknown() {
        let o = grade(
            &C5_1_2,
            json!({"tools": {}}),
            vec![skipped(
                &[leg::INVENTORY_RESOURCE_TEMPLATES],
                "not requested: the server did not advertise the \"resources\" capability",
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence
                .contains("does not declare the \"resources\" capability"),
            "{}",
            o.evidence
        );
        assert!(
            o.evidence.contains("no template was observed"),
            "{}",
            o.evidence
        );
    }

    #[test]
    fn s512_cut_inventory_is_unknown_naming_the_bound_and_complete_passes() {
        let good = template("t", json!("file:///{name}"), Some("text/plain"));
        let page = |cursor: Option<&str>| {
            let mut result = json!({"resourceTemplates": [good.clone()]});
            if let Some(c) = cursor {
                result["nextCursor"] = json!(c);
            }
            list_page(
                leg::INVENTORY_RESOURCE_TEMPLATES,
                method::RESOURCE_TEMPLATES_LIST,
                4,
                result,
            )
        };
        let o = grade(&C5_1_2, caps(), vec![page(None)]);
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        let o = grade(
            &C5_1_2,
            caps(),
            vec![
                page(Some("again")),
                skipped(
                    &[leg::INVENTORY_RESOURCE_TEMPLATES],
                    "stopped: the server repeated cursor \"again\"",
                ),
            ],
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        for id in ["5.1.2a", "5.1.2b"] {
            let l = leg_of(&o, id);
            assert_eq!(l.outcome, LegOutcome::Unknown, "{l:?}");
            assert!(l.note.contains("repeated cursor"), "{l:?}");
        }
    }

    #[test]
    fn s512_no_templates_is_unknown_not_pass() {
        let o = grade(&C5_1_2, caps(), vec![templates_page(vec![])]);
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("lists no templates"), "{}", o.evidence);
    }

    // ----- 5.1.3

    fn prompt(name: &str, args: Value) -> Value {
        json!({"name": name, "arguments": args})
    }

    #[test]
    fn s513_well_declared_arguments_pass() {
        let o = grade(
            &C5_1_3,
            caps(),
            vec![prompts_page(
                5,
                vec![
                    prompt(
                        "review",
                        json!([{"name": "code", "required": true}, {"name": "style"}]),
                    ),
                    json!({"name": "bare"}),
                ],
                None,
            )],
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(
            leg_of(&o, "5.1.3a")
                .note
                .contains("every argument has a non-blank name (2 arguments across 2 prompts)"),
            "{o:#?}"
        );
        assert!(leg_of(&o, "5.1.3b").note.contains("`required` is a JSON boolean wherever present (1 of 2 arguments; the others omit it"), "{o:#?}");
        assert!(
            o.reduction.contains("5.1.3c")
                && o.reduction.contains("5.1.3d")
                && o.reduction.contains("not probed yet")
        );
    }

    #[test]
    fn s513_inventory_cut_at_the_page_bound_is_unknown_not_pass() {
        // The observed case: well-declared prompts up to the page bound, a bad one past it.
        let good = || prompt("review", json!([{"name": "code", "required": true}]));
        let cut = grade(
            &C5_1_3,
            caps(),
            vec![
                prompts_page(5, vec![good()], Some("p2")),
                prompts_page(6, vec![good()], Some("p3")),
                skipped(
                    &[leg::INVENTORY_PROMPTS],
                    "stopped: page bound 2 reached with a nextCursor still pending (--max-pages)",
                ),
            ],
        );
        assert_eq!(cut.verdict, Verdict::Unknown, "{cut:#?}");
        for id in ["5.1.3a", "5.1.3b"] {
            let l = leg_of(&cut, id);
            assert_eq!(l.outcome, LegOutcome::Unknown, "{l:?}");
            assert!(
                l.note
                    .contains("prompts/list was cut after page 2 (stopped: page bound 2 reached"),
                "{l:?}"
            );
        }
        assert_eq!(cut.details["inventory_complete"], false);
        // The same pages, read to the end: PASS.
        let whole = grade(
            &C5_1_3,
            caps(),
            vec![
                prompts_page(5, vec![good()], Some("p2")),
                prompts_page(6, vec![good()], None),
            ],
        );
        assert_eq!(whole.verdict, Verdict::Pass, "{whole:#?}");
        // A FAIL found before the cut stands.
        let bad = grade(
            &C5_1_3,
            caps(),
            vec![
                prompts_page(
                    5,
                    vec![prompt("x", json!([{"name": "a", "required": "yes"}]))],
                    Some("p2"),
                ),
                skipped(
                    &[leg::INVENTORY_PROMPTS],
                    "stopped: page bound 1 reached with a nextCursor still pending (--max-pages)",
                ),
            ],
        );
        assert_eq!(bad.verdict, Verdict::Fail, "{bad:#?}");
    }

    #[test]
    fn s513_required_yes_fails_b_quoting_the_value() {
        let o = grade(
            &C5_1_3,
            caps(),
            vec![prompts_page(
                5,
                vec![prompt(
                    "review",
                    json!([{"name": "code", "required": "yes"}]),
                )],
                None,
            )],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(leg_of(&o, "5.1.3a").outcome, LegOutcome::Pass);
        let b = &leg_of(&o, "5.1.3b").note;
        assert!(
            b.contains(
                "`review` argument `code`: required is \"yes\" (a string), not a JSON boolean"
            ),
            "{b}"
        );
    }

    #[test]
    fn s513_blank_or_missing_name_fails_a() {
        let o = grade(
            &C5_1_3,
            caps(),
            vec![prompts_page(
                5,
                vec![prompt(
                    "review",
                    json!([{"name": ""}, {"required": true}, {"name": 5}, "code"]),
                )],
                None,
            )],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        let a = &leg_of(&o, "5.1.3a").note;
        assert!(a.contains("`review` argument #1: name is blank"), "{a}");
        assert!(a.contains("`review` argument #2: declares no name"), "{a}");
        assert!(
            a.contains("`review` argument #3: name is a number (5), not a string"),
            "{a}"
        );
        assert!(
            a.contains("`review` argument #4 is a string, not an object"),
            "{a}"
        );
        assert_eq!(leg_of(&o, "5.1.3b").outcome, LegOutcome::Pass);
    }

    #[test]
    fn s513_reads_every_page() {
        let o = grade(
            &C5_1_3,
            caps(),
            vec![
                prompts_page(
                    5,
                    vec![prompt("one", json!([{"name": "a", "required": false}]))],
                    Some("p2"),
                ),
                prompts_page(
                    6,
                    vec![prompt("two", json!([{"name": "b", "required": 1}]))],
                    None,
                ),
            ],
        );
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            leg_of(&o, "5.1.3b")
                .note
                .contains("`two` (page 2) argument `b`: required is 1 (a number)"),
            "{o:#?}"
        );
    }

    #[test]
    fn s513_prompts_not_declared_is_unknown() {
        let o = grade(
            &C5_1_3,
            json!({"tools": {}}),
            vec![skipped(
                &[leg::INVENTORY_PROMPTS],
                "not requested: the server did not advertise the \"prompts\" capability",
            )],
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence
                .contains("does not declare the \"prompts\" capability"),
            "{}",
            o.evidence
        );
    }

    #[test]
    fn s513_result_without_a_prompts_array_is_unknown() {
        let page = list_page(
            leg::INVENTORY_PROMPTS,
            method::PROMPTS_LIST,
            5,
            json!({"items": []}),
        );
        let o = grade(&C5_1_3, caps(), vec![page]);
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            o.evidence.contains("carries no `prompts` array"),
            "{}",
            o.evidence
        );
    }

    // ----- reported only

    #[test]
    fn reported_only_checks_are_na_with_their_observations() {
        let ev = evidence(
            Some(session(
                Some(REV),
                json!({"tools": {"listChanged": true}, "tasks": {}}),
                None,
            )),
            vec![],
        );
        for c in [&C5_2_1 as &dyn Check, &C5_2_2, &C5_3_1, &C5_5_1, &C5_6_1] {
            let o = run(c, &ev, &Context::default());
            assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
            assert_eq!(o.details["transport"], "streamable-http", "{}", o.evidence);
            assert!(!o.evidence.is_empty() && !o.reduction.is_empty());
            assert_eq!(c.needs(), Needs::Nothing);
        }
        let o = run(&C5_5_1, &ev, &Context::default());
        assert_eq!(o.details["tasks_declared"], true);
        assert!(o.evidence.contains("tasks/list was removed in 2026-07-28"));
        let o = run(&C5_2_1, &ev, &Context::default());
        assert!(
            o.evidence.ends_with(
                "; transport streamable-http (endpoint http://127.0.0.1:8080/mcp); \
                 the server declares listChanged on tools"
            ),
            "{}",
            o.evidence
        );
        assert!(
            o.evidence
                .starts_with("reported only: read from the benchmark text"),
            "{}",
            o.evidence
        );
        assert!(run(&C5_3_1, &ev, &Context::default())
            .evidence
            .contains("stdio"));
        assert!(run(&C5_2_2, &ev, &Context::default())
            .evidence
            .contains("2.3"));

        // Without a session the capabilities were never observed: null, not false.
        let ev = evidence(None, vec![]);
        let o = run(&C5_5_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert_eq!(o.details["tasks_declared"], Value::Null);
        assert_eq!(o.details["transport"], "unknown");
        let ev = evidence(Some(session(Some(REV), json!({"tools": {}}), None)), vec![]);
        assert_eq!(
            run(&C5_5_1, &ev, &Context::default()).details["tasks_declared"],
            false
        );
    }

    // ----- the lab's own bundles

    /// Every bundle in examples/ graded by every Section 5 check, against what the lab
    /// servers serve (lab/*/server.*, lab/expect.json):
    ///
    /// * py2, py2-sl-json (mcp 2.3.0), py1 (mcp 1.30.0), fastmcp 4.2.3: the Python SDKs
    ///   derive each tool's inputSchema and outputSchema from the function signature
    ///   (pydantic, no `$schema`, so 2020-12); both compile → 5.1.1a and b pass, no
    ///   external $ref → PASS. fastmcp's `x-fastmcp-wrap-result` is an unknown keyword,
    ///   which 2020-12 allows.
    /// * ts2, ts2-reject (@modelcontextprotocol/server 2.4.0): zod input schemas declare
    ///   `$schema` 2020-12 and compile → 5.1.1a pass; `registerTool` is given no output
    ///   schema, so no tool declares one → 5.1.1b unknown → UNKNOWN.
    /// * py2-paged: 23 tools over 5 pages, input schemas only → 5.1.1a pass over every
    ///   page, 5.1.1b unknown → UNKNOWN.
    /// * Every server with a session lists one template (`greeting://{name}` or
    ///   `paged://item/{id}`) with `mimeType: text/plain` → 5.1.2 PASS, and the prompt
    ///   `review` whose one argument `code` has `required: true` → 5.1.3 PASS.
    /// * py2-auth: 401 and no credential, so no session: the runner makes every
    ///   session check UNKNOWN; reported-only checks stay N/A with tasks_declared null.
    /// * Reported-only checks: N/A everywhere; no lab server declares `tasks`.
    #[test]
    fn lab_bundles_get_the_verdicts_their_servers_deserve() {
        use Verdict::{NotApplicable as NA, Pass, Unknown};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let expected: &[(&str, [Verdict; 3])] = &[
            ("py2.mcpev", [Pass, Pass, Pass]),
            ("py2-sl-json.mcpev", [Pass, Pass, Pass]),
            ("py1.mcpev", [Pass, Pass, Pass]),
            ("fastmcp.mcpev", [Pass, Pass, Pass]),
            ("ts2.mcpev", [Unknown, Pass, Pass]),
            ("ts2-reject.mcpev", [Unknown, Pass, Pass]),
            ("py2-paged.mcpev", [Unknown, Pass, Pass]),
            ("py2-auth.mcpev", [Unknown, Unknown, Unknown]),
        ];
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("examples dir") {
            let path = entry.expect("dir entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("mcpev") {
                continue;
            }
            seen += 1;
            let bytes = std::fs::read(&path).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            let ev = Evidence::new(path.display().to_string(), v);
            let outcomes: Vec<Outcome> = [
                &C5_1_1 as &dyn Check,
                &C5_1_2,
                &C5_1_3,
                &C5_2_1,
                &C5_2_2,
                &C5_3_1,
                &C5_5_1,
                &C5_6_1,
            ]
            .iter()
            .map(|c| run(*c, &ev, &Context::default()))
            .collect();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            for o in &outcomes[3..] {
                assert_eq!(o.verdict, NA, "{name}: {o:#?}");
            }
            assert_ne!(outcomes[6].details["tasks_declared"], true, "{name}");
            let Some((_, want)) = expected.iter().find(|(n, _)| *n == name) else {
                // A bundle added later: it must at least grade without a panic.
                for o in &outcomes {
                    assert!(!o.evidence.contains("check raised"), "{name}: {o:#?}");
                }
                continue;
            };
            for (o, w) in outcomes.iter().zip(want) {
                assert_eq!(o.verdict, *w, "{name}: {o:#?}");
            }
            if name != "py2-auth.mcpev" {
                let a = leg_of(&outcomes[0], "5.1.1a");
                assert_eq!(a.outcome, LegOutcome::Pass, "{name}: {a:?}");
                assert!(
                    outcomes[0].evidence.contains("read completely"),
                    "{name}: {}",
                    outcomes[0].evidence
                );
                assert_eq!(outcomes[0].details["external_refs"], 0, "{name}");
            }
            if name.starts_with("ts2") || name == "py2-paged.mcpev" {
                assert!(
                    leg_of(&outcomes[0], "5.1.1b")
                        .note
                        .contains("declares an outputSchema"),
                    "{name}"
                );
            }
            if name == "py2-paged.mcpev" {
                assert!(
                    outcomes[0].evidence.contains("23 tools on 5 pages"),
                    "{}",
                    outcomes[0].evidence
                );
                assert_eq!(outcomes[0].records.len(), 5);
            }
            if name == "py2-auth.mcpev" {
                assert_eq!(outcomes[6].details["tasks_declared"], Value::Null);
            }
        }
        assert!(
            seen >= expected.len(),
            "only {seen} bundles in {}",
            dir.display()
        );
    }
}
