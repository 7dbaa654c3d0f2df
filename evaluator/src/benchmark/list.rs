//! `mcp-grade benchmarks` and `mcp-grade checks`: what this build can grade under, as
//! text for people or JSON for machines (docs/benchmarks.md).

use std::io::Write;

use serde::Serialize;

use super::{Benchmark, Entry, Origin};

/// One line of `mcp-grade benchmarks --format json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BenchmarkLine {
    /// Stable id (`--benchmark ID`).
    pub id: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Publication date, when the definition states one.
    pub date: Option<String>,
    /// How many checks it has.
    pub checks: usize,
    /// How many recommendations it lists as out of a probe's reach.
    pub unreached: usize,
    /// SHA-256 of the definition's bytes, hex.
    pub sha256: String,
    /// True for the definition grading uses without `--benchmark`.
    pub default: bool,
}

/// One check of `mcp-grade checks --format json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CheckLine {
    /// Number in the definition.
    pub number: String,
    /// Title.
    pub title: String,
    /// `L1` / `L2`.
    pub level: String,
    /// `automated` / `manual`.
    pub status: String,
    /// `wire`, `in-part`, `reported-only`.
    pub source: String,
    /// The rule id.
    pub rule: String,
    /// The rule's parameter values.
    #[schemars(with = "std::collections::BTreeMap<String, serde_json::Value>")]
    pub params: serde_json::Value,
    /// The transports it is graded on.
    pub transports: Vec<String>,
    /// `negotiated`, `every` or `every-recorded`.
    pub eras: String,
    /// Legs the rule needs (a bundle without one gets ERROR naming it), on the
    /// negotiated era of a 2025-11-25 or earlier session and of a 2026-07-28 session.
    pub legs_required: Vec<String>,
    /// Legs the rule reads when the bundle holds them.
    pub legs_optional: Vec<String>,
    /// Why no probe reaches it (reported-only checks).
    pub unreached: Option<String>,
}

/// The JSON Schema of `mcp-grade checks --format json` (one document).
pub fn checks_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ChecksDoc)).unwrap_or_default()
}

/// `mcp-grade checks --format json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChecksDoc {
    /// `mcp-grade-checks/1`.
    pub schema: String,
    /// The definition listed.
    pub benchmark: BenchmarkLine,
    /// Every check, in number order.
    pub checks: Vec<CheckLine>,
}

fn line_of(b: &Benchmark, default: bool) -> BenchmarkLine {
    BenchmarkLine {
        id: b.id.to_string(),
        name: b.name.to_string(),
        version: b.version.to_string(),
        date: b.date.map(str::to_string),
        checks: b.checks.len(),
        unreached: b.unreached.len(),
        sha256: b.sha256.clone(),
        default,
    }
}

fn legs(e: &Entry) -> (Vec<String>, Vec<String>) {
    let mut req = Vec::new();
    let mut opt = Vec::new();
    let Some(c) = e.grader else {
        return (req, opt);
    };
    for era in [
        Some(mcp_probe_schema::model::Era::Legacy),
        Some(mcp_probe_schema::model::Era::Modern),
    ] {
        let l = c.legs(era);
        for x in l.required {
            if !req.contains(&x.to_string()) {
                req.push(x.to_string());
            }
        }
        for x in l.optional {
            if !opt.contains(&x.to_string()) {
                opt.push(x.to_string());
            }
        }
    }
    (req, opt)
}

fn check_line(e: &Entry) -> CheckLine {
    let (legs_required, legs_optional) = legs(e);
    CheckLine {
        number: e.id.to_string(),
        title: e.title.to_string(),
        level: e.level.as_str().to_string(),
        status: e.status.as_str().to_string(),
        source: e.source.key().to_string(),
        rule: e.rule.to_string(),
        params: serde_json::to_value(&e.params).unwrap_or_default(),
        transports: e
            .transports
            .labels()
            .iter()
            .map(|t| t.to_string())
            .collect(),
        eras: e.eras.key().to_string(),
        legs_required,
        legs_optional,
        unreached: e.unreached.map(str::to_string),
    }
}

/// Write the embedded definitions, one per line (or one JSON object per line).
pub fn benchmarks(all: &[&Benchmark], json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let last = all.len().saturating_sub(1);
    for (i, b) in all.iter().enumerate() {
        let l = line_of(b, i == last);
        if json {
            serde_json::to_writer(&mut *out, &l)?;
            writeln!(out)?;
        } else {
            writeln!(
                out,
                "{}  {} {}  date {}  {} checks, {} unreached  sha256 {}{}",
                l.id,
                l.name,
                l.version,
                l.date.as_deref().unwrap_or("not stated"),
                l.checks,
                l.unreached,
                l.sha256,
                if l.default { "  (default)" } else { "" }
            )?;
        }
    }
    Ok(())
}

/// Write the checks of `b`.
pub fn checks(b: &Benchmark, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let default = matches!(b.origin, Origin::Embedded(_))
        && b.tailoring.is_none()
        && Benchmark::newest().is_ok_and(|n| n.id == b.id);
    if json {
        let doc = ChecksDoc {
            schema: "mcp-grade-checks/1".into(),
            benchmark: line_of(b, default),
            checks: b.checks.iter().map(check_line).collect(),
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} ({}; sha256 {}): {} checks",
        b.title(),
        b.id,
        b.sha256,
        b.checks.len()
    )?;
    if let Some(t) = &b.tailoring {
        writeln!(
            out,
            "tailoring {} ({}, sha256 {}): deselected {}; refined {}",
            t.id,
            t.file,
            t.sha256,
            if t.deselected.is_empty() {
                "none".to_string()
            } else {
                t.deselected.join(", ")
            },
            if t.refined.is_empty() {
                "none".to_string()
            } else {
                t.refined.join("; ")
            }
        )?;
    }
    for e in &b.checks {
        let l = check_line(e);
        let params = e
            .params
            .0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>();
        writeln!(
            out,
            "{:<7} {} {:<9} {:<13} rule {}{}",
            l.number,
            l.level,
            l.status,
            l.source,
            l.rule,
            if params.is_empty() {
                String::new()
            } else {
                format!(" ({})", params.join(", "))
            }
        )?;
        writeln!(out, "        {}", l.title)?;
        writeln!(
            out,
            "        transports {}; eras {}; legs {}{}",
            l.transports.join(", "),
            l.eras,
            if l.legs_required.is_empty() {
                "none".to_string()
            } else {
                l.legs_required.join(" ")
            },
            if l.legs_optional.is_empty() {
                String::new()
            } else {
                format!(" (when present: {})", l.legs_optional.join(" "))
            }
        )?;
    }
    if !b.unreached.is_empty() {
        writeln!(out, "out of a probe's reach:")?;
        for u in &b.unreached {
            writeln!(out, "{:<7} {}: {}", u.section, u.title, u.why)?;
        }
    }
    Ok(())
}
