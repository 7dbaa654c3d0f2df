//! The SARIF 2.1.0 report (`--format sarif`), built with the typed model of
//! `serde-sarif`, for code-scanning tools such as GitHub's.
//!
//! * One rule per check in scope: `id` the check id, `name`, short and full
//!   descriptions, `help` (the one-line remediation and what a black-box probe cannot
//!   reach), `helpUri` (the check's section of docs/checks.md under the package's
//!   repository URL), `properties.tags` (the profile level, `security`, the benchmark
//!   section) and `properties.security-severity` (see [`severity`]).
//! * One result per non-PASS verdict: FAIL is `kind: fail`, `level: error`; ERROR is
//!   `kind: fail`, `level: warning` (the check could not be decided and must be looked
//!   at); UNKNOWN is `kind: review`; N/A and NO-REV are `kind: notApplicable` (levels
//!   `none`, as SARIF requires for any kind but `fail`). The message is the verdict and
//!   the evidence. `partialFingerprints` holds SHA-256 of the check id and the endpoint,
//!   stable across runs, so a code-scanning alert follows the finding, not the run.
//! * Locations: the bundle file is the physical location (code scanning requires one),
//!   the endpoint the logical location, and the records that decided the verdict are
//!   related locations (`bundle#record-N`).
//! * A waived result carries an accepted external suppression with the waiver's reason.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde_json::{json, Value};
use serde_sarif::sarif::{
    ArtifactLocation, Location, LogicalLocation, Message, MultiformatMessageString,
    PhysicalLocation, PropertyBag, Region, ReportingDescriptor, Result as SarifResult, ResultKind,
    ResultLevel, Run, Sarif, Suppression, Tool, ToolComponent,
};

use crate::benchmark::{Benchmark, Entry};
use crate::verdict::{Outcome, Verdict};

use super::{Report, Row, Server};

/// The schema URI written in `$schema`.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The `security-severity` of a check (0.0 to 10.0, as code scanning reads it): Level 1
/// checks of the transport and authentication sections (2, 3) 8.0, other Level 1 checks
/// 6.0, Level 2 checks 4.0. A property of the check, not of one result.
pub fn severity(e: &Entry) -> f32 {
    match (e.level.number(), e.section()) {
        (1, "2" | "3") => 8.0,
        (1, _) => 6.0,
        _ => 4.0,
    }
}

/// The GitHub-style anchor of the check's section of docs/checks.md
/// (`### 1.1: served protocol …` → `11-served-protocol-…`).
pub fn anchor(e: &Entry) -> String {
    let heading = format!("{}: {}", e.id.as_str(), e.title);
    let mut out = String::new();
    for c in heading.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.push(c);
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// Where the docs of a check are read: the package's repository, docs/checks.md.
pub fn help_uri(e: &Entry) -> String {
    format!(
        "{}/blob/main/docs/checks.md#{}",
        env!("CARGO_PKG_REPOSITORY").trim_end_matches('/'),
        anchor(e)
    )
}

fn text(s: impl Into<String>) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s.into()).build()
}

/// The rule of `row`; `reduction` is the first non-empty reduction among its results.
fn rule(bm: &Benchmark, row: &Row, reduction: &str) -> ReportingDescriptor {
    let e = row.entry;
    let mut props = BTreeMap::new();
    props.insert(
        "security-severity".to_string(),
        json!(format!("{:.1}", severity(e))),
    );
    props.insert("precision".to_string(), json!("high"));
    let help = format!(
        "Remediation: {}.{}",
        e.remediation,
        if reduction.is_empty() {
            String::new()
        } else {
            format!(" Not reachable by a black-box probe: {reduction}.")
        }
    );
    ReportingDescriptor::builder()
        .id(e.id.as_str())
        .name(format!("CIS MCP {}", e.id.as_str()))
        .short_description(text(e.title))
        .full_description(text(format!(
            "{}, recommendation {} (Level {}, {}, verdict source: {}): {}",
            bm.title(),
            e.id.as_str(),
            e.level.number(),
            e.status.as_str(),
            e.source.as_str(),
            e.title
        )))
        .help(text(help))
        .help_uri(help_uri(e))
        .properties(
            PropertyBag::builder()
                .tags(vec![
                    "security".to_string(),
                    e.level.as_str().to_string(),
                    format!("section-{}", e.section()),
                ])
                .additional_properties(props)
                .build(),
        )
        .build()
}

fn kind_level(v: Verdict) -> (ResultKind, ResultLevel) {
    match v {
        Verdict::Fail => (ResultKind::Fail, ResultLevel::Error),
        Verdict::Error => (ResultKind::Fail, ResultLevel::Warning),
        Verdict::Unknown => (ResultKind::Review, ResultLevel::None),
        Verdict::NoRev | Verdict::NotApplicable => (ResultKind::NotApplicable, ResultLevel::None),
        Verdict::Pass => (ResultKind::Pass, ResultLevel::None),
    }
}

fn result(r: &Report, row: &Row, rule_index: usize, i: usize, o: &Outcome) -> SarifResult {
    let e = row.entry;
    let server = &r.servers[i];
    let (kind, level) = kind_level(o.verdict);
    let fingerprint = hex::encode(mcp_probe_schema::bundle::sha256(
        format!("{}\n{}", e.id.as_str(), server.endpoint).as_bytes(),
    ));
    let bundle = ArtifactLocation::builder()
        .uri(server.bundle.clone())
        .build();
    let logical = LogicalLocation::builder()
        .name(server.endpoint.clone())
        .fully_qualified_name(server.endpoint.clone())
        .kind("resource")
        .build();
    let location = Location::builder()
        .physical_location(
            PhysicalLocation::builder()
                .artifact_location(bundle)
                .region(Region::builder().start_line(1).build())
                .build(),
        )
        .logical_locations(vec![logical])
        .build();
    let related: Vec<Location> = o
        .records
        .iter()
        .enumerate()
        .map(|(n, seq)| {
            Location::builder()
                .id(n as i64)
                .physical_location(
                    PhysicalLocation::builder()
                        .artifact_location(
                            ArtifactLocation::builder()
                                .uri(format!("{}#record-{seq}", server.bundle))
                                .build(),
                        )
                        .build(),
                )
                .message(
                    Message::builder()
                        .text(format!("record #{seq} (mcp-grade show {})", server.bundle))
                        .build(),
                )
                .build()
        })
        .collect();
    let mut props = BTreeMap::new();
    props.insert("verdict".to_string(), json!(o.verdict.mark()));
    props.insert("endpoint".to_string(), json!(server.endpoint));
    props.insert("revision".to_string(), json!(server.revision));
    props.insert("reduction".to_string(), json!(o.reduction));
    let mut b = SarifResult::builder()
        .rule_id(e.id.as_str())
        .rule_index(rule_index as i64)
        .kind(kind)
        .level(level)
        .message(
            Message::builder()
                .text(format!(
                    "{} on {}: {}",
                    o.verdict.mark(),
                    server.endpoint,
                    o.evidence
                ))
                .build(),
        )
        .locations(vec![location])
        .partial_fingerprints(BTreeMap::from([(
            "mcpCheckEndpoint/v1".to_string(),
            fingerprint,
        )]))
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    if !related.is_empty() {
        b.related_locations = Some(related);
    }
    if let Some(m) = row.mark(i).filter(|m| m.active) {
        b.suppressions = Some(vec![Suppression::builder()
            .kind(json!("external"))
            .status(json!("accepted"))
            .justification(format!(
                "{} (waiver until {}, line {})",
                m.reason, m.expires, m.line
            ))
            .build()]);
    }
    b
}

/// The SARIF log of `r`, every result in it.
pub fn log(r: &Report) -> std::io::Result<Sarif> {
    let mut log = frame(r)?;
    let rows: Vec<&Row> = r.graded().collect();
    let mut results = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        let reported = |i: usize| row.verdict(i).is_some_and(|v| v != Verdict::Pass);
        r.each_outcome(row, reported, |i, o| {
            results.push(result(r, row, k, i, o));
            Ok(ControlFlow::Continue(()))
        })?;
    }
    let mut servers = Vec::with_capacity(r.servers.len());
    r.each_server(|i, s| {
        servers.push(server(i, s));
        Ok(ControlFlow::Continue(()))
    })?;
    if let Some(run) = log.runs.first_mut() {
        run.results = Some(results);
        if let Some(p) = run.properties.as_mut() {
            p.additional_properties
                .insert("servers".to_string(), Value::Array(servers));
        }
    }
    Ok(log)
}

/// The SARIF log of `r` without its results (an empty `results` array).
fn frame(r: &Report) -> std::io::Result<Sarif> {
    let rows: Vec<&Row> = r.graded().collect();
    let mut rules = Vec::with_capacity(rows.len());
    for row in &rows {
        // The first result that says what a probe cannot reach, read up to it.
        let mut reduction = String::new();
        r.each_outcome(
            row,
            |_| true,
            |_, o| {
                let said = o.reduction.trim().trim_end_matches('.');
                if said.is_empty() {
                    return Ok(ControlFlow::Continue(()));
                }
                reduction = said.to_string();
                Ok(ControlFlow::Break(()))
            },
        )?;
        rules.push(rule(r.benchmark, row, &reduction));
    }
    let results: Vec<SarifResult> = Vec::new();
    let p = &r.provenance;
    let grader = &p.grader;
    // SemVer build metadata names the commit: `0.1.0+0123abcd4567` (`-dirty` kept).
    let short = super::provenance::short_build(&grader.commit);
    let semantic = if short != grader.commit {
        format!("{}+{short}", grader.version)
    } else {
        grader.version.clone()
    };
    let driver = ToolComponent::builder()
        .name(grader.name.clone())
        .full_name(format!(
            "{} {} ({})",
            grader.name,
            grader.version,
            r.benchmark.title()
        ))
        .version(grader.version.clone())
        .semantic_version(semantic)
        .information_uri(env!("CARGO_PKG_REPOSITORY"))
        .rules(rules)
        .properties(
            PropertyBag::builder()
                .additional_properties(BTreeMap::from([
                    ("commit".to_string(), json!(grader.commit)),
                    ("target".to_string(), json!(grader.target)),
                    ("rustc".to_string(), json!(grader.rustc)),
                ]))
                .build(),
        )
        .build();
    let unreachable: Vec<Value> = r
        .benchmark
        .sections_unreached()
        .map(
            |u| json!({"section": u.section, "title": u.title, "governs": u.governs, "why": u.why}),
        )
        .collect();
    // The benchmark and grader (as in the JSON report), and each server's collector build
    // ([`server`]: written into this empty array one at a time by [`to_writer`]).
    let mut props = BTreeMap::from([
        ("notReachable".to_string(), Value::Array(unreachable)),
        ("provenance".to_string(), json!(p)),
        ("servers".to_string(), Value::Array(Vec::new())),
    ]);
    if let Some(c) = super::coverage::coverage_json(r) {
        props.insert("coverage".to_string(), json!(c));
    }
    if let Some(a) = super::coverage::attestations_json(r) {
        props.insert("attestations".to_string(), a);
    }
    if let Some(w) = &r.waivers {
        // Each stale and expired waiver, in words (docs/report.md, section 3b).
        props.insert(
            "waiverNotices".to_string(),
            Value::Array(
                w.notices()
                    .iter()
                    .map(|n| Value::String(format!("--waivers {}: {n}", w.file)))
                    .collect(),
            ),
        );
    }
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    Ok(Sarif::builder()
        .schema(SCHEMA_URI)
        .version(Value::String(
            serde_sarif::sarif::Version::V2_1_0.to_string(),
        ))
        .runs(vec![run])
        .build())
}

/// The SARIF log as pretty-printed JSON text (no trailing newline): the bytes of
/// [`to_writer`].
pub fn to_string(r: &Report) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = to_writer(r, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// The SARIF log as pretty-printed JSON text written to `w` as it is made: the log
/// without its results, pretty-printed, with the results written into its empty
/// `results` array one check at a time (each result pretty-printed alone and indented
/// to its depth: the bytes `serde_json` writes for the whole log), so a log over many
/// bundles is never held whole.
pub fn to_writer(r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let frame = serde_json::to_string_pretty(&frame(r)?).map_err(std::io::Error::other)?;
    // The run's `results` and its properties' `servers`: the only keys of those names
    // the frame holds, since it has no result and no server (and no text from a bundle)
    // in it. Each hole is just before the key's `[]`; they are filled in the frame's
    // order.
    let hole = |key: &str| {
        let at = frame
            .find(key)
            .ok_or_else(|| std::io::Error::other(format!("no {key} in the SARIF frame")))?;
        let indent = at - frame[..at].rfind('\n').map_or(0, |n| n + 1);
        Ok::<_, std::io::Error>((at + key.len() - 2, indent))
    };
    let mut holes = [
        (hole("\"results\": []")?, true),
        (hole("\"servers\": []")?, false),
    ];
    holes.sort_by_key(|((at, _), _)| *at);
    let mut done = 0;
    for ((at, indent), results) in holes {
        w.write_all(&frame.as_bytes()[done..at])?;
        let mut array = Elements::new(indent);
        if results {
            for (k, row) in r.graded().enumerate() {
                // Only the results that are not PASS are read back, a part of the fleet
                // at a time.
                let reported = |i: usize| row.verdict(i).is_some_and(|v| v != Verdict::Pass);
                r.each_outcome(row, reported, |i, o| {
                    array.push_value(w, &result(r, row, k, i, o))?;
                    Ok(ControlFlow::Continue(()))
                })?;
            }
        } else {
            r.each_server(|i, s| {
                array.push_value(w, &server(i, s))?;
                Ok(ControlFlow::Continue(()))
            })?;
        }
        array.end(w)?;
        done = at + 2;
    }
    w.write_all(&frame.as_bytes()[done..])
}

/// What the run's properties say of server `i` (`s`).
fn server(i: usize, s: &Server) -> Value {
    json!({
        "index": i,
        "endpoint": s.endpoint,
        "bundle": s.bundle,
        "collector": s.collector,
        "collectorBuild": s.collector_build,
    })
}

/// Writes a JSON array one element at a time, as `serde_json` pretty-prints the whole
/// array as the value of a key indented by `indent` spaces.
struct Elements {
    indent: usize,
    inner: String,
    first: bool,
    /// The element being written, pretty-printed alone (kept for the next).
    one: Vec<u8>,
    /// The element indented, written with one call (kept for the next).
    out: Vec<u8>,
}

impl Elements {
    fn new(indent: usize) -> Elements {
        Elements {
            indent,
            inner: " ".repeat(indent + 2),
            first: true,
            one: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Write the next element, `value` pretty-printed alone and indented as an element
    /// of the array: each of its lines after the array's indent and two spaces.
    fn push_value(
        &mut self,
        w: &mut dyn std::io::Write,
        value: &impl serde::Serialize,
    ) -> std::io::Result<()> {
        self.one.clear();
        serde_json::to_writer_pretty(&mut self.one, value).map_err(std::io::Error::other)?;
        let one = std::mem::take(&mut self.one);
        let written = self.push(w, &one);
        self.one = one;
        written
    }

    /// Write the next element, `one` pretty-printed alone: each of its lines after the
    /// array's indent and two spaces (a pretty-printed value's line breaks are its
    /// own: a string in it holds `\n`, never a line break).
    fn push(&mut self, w: &mut dyn std::io::Write, one: &[u8]) -> std::io::Result<()> {
        let out = &mut self.out;
        out.clear();
        out.extend_from_slice(if self.first { b"[\n" } else { b",\n" });
        self.first = false;
        out.extend_from_slice(self.inner.as_bytes());
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', one) {
            out.extend_from_slice(&one[start..=i]);
            out.extend_from_slice(self.inner.as_bytes());
            start = i + 1;
        }
        out.extend_from_slice(&one[start..]);
        w.write_all(out)
    }

    /// Close the array.
    fn end(self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.first {
            w.write_all(b"[]")
        } else {
            write!(w, "\n{}]", " ".repeat(self.indent))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An array written an element at a time is the array `serde_json` pretty-prints
    /// whole as the value of a key indented by `indent` spaces, for empty and non-empty
    /// arrays, and elements that are objects, arrays and strings with escaped breaks.
    #[test]
    fn elements_write_the_array_serde_json_pretty_prints() {
        let values = [
            json!({"a": 1, "b": "two\nlines", "c": {"d": [1, 2, {"e": null}]}}),
            json!([]),
            json!(["x", {}, [true]]),
            json!("a string with \"quotes\" and a \\ backslash"),
        ];
        for indent in [0, 2, 6] {
            for n in 0..=values.len() {
                let mut out = Vec::new();
                let mut array = Elements::new(indent);
                for v in &values[..n] {
                    array.push_value(&mut out, v).expect("written");
                }
                array.end(&mut out).expect("closed");
                let whole = serde_json::to_string_pretty(&Value::Array(values[..n].to_vec()))
                    .expect("pretty")
                    .replace('\n', &format!("\n{}", " ".repeat(indent)));
                assert_eq!(
                    String::from_utf8(out).expect("UTF-8"),
                    whole,
                    "{indent} {n}"
                );
            }
        }
    }
}
