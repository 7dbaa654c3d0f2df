//! The text of `mcp-grade diff OLD.json NEW.json` ([`super::report::ReportDiff`]), for
//! people: a header naming both reports and their benchmarks (and saying when the
//! benchmarks differ), how checks were mapped and one line per check that is not the
//! same, then per matched server each changed verdict with the legs that changed, and
//! the servers found on one side only. Everything from a report is escaped
//! ([`crate::fmt::escape_line`]).

use serde_json::Value;

use super::mapping::Class;
use super::report::{ReportDiff, ServerRef, VerdictAt};
use crate::fmt::escape_line;

fn word(c: Class) -> &'static str {
    match c {
        Class::Same => "same",
        Class::Renumbered => "renumbered",
        Class::ParamsChanged => "parameters changed",
        Class::Added => "added",
        Class::Removed => "removed",
    }
}

fn classes(c: &[Class]) -> String {
    c.iter().map(|c| word(*c)).collect::<Vec<_>>().join(", ")
}

fn json_line(v: Option<&Value>) -> String {
    v.map(|v| escape_line(&v.to_string()))
        .unwrap_or_else(|| "(none)".into())
}

/// `3.3.1`, or `3.3.1 -> 3.3.4` when renumbered, or the one side's id.
fn ids(old: Option<&str>, new: Option<&str>) -> String {
    match (old, new) {
        (Some(a), Some(b)) if a != b => format!("{} -> {}", escape_line(a), escape_line(b)),
        (Some(a), _) => escape_line(a),
        (None, Some(b)) => escape_line(b),
        (None, None) => String::new(),
    }
}

fn rule_note(rule: &Option<String>) -> String {
    rule.as_ref()
        .map(|r| format!("rule {}", escape_line(r)))
        .unwrap_or_default()
}

fn server_line(s: &ServerRef) -> String {
    let mut t = escape_line(&s.endpoint);
    if let Some(id) = &s.identity {
        t.push_str(&format!(" {}", id.show()));
    }
    if let Some(b) = &s.bundle {
        t.push_str(&format!(" (bundle {})", escape_line(b)));
    }
    t
}

/// The diff as text.
pub fn text(d: &ReportDiff) -> String {
    let mut out: Vec<String> = Vec::new();
    for (tag, s) in [("old", &d.old), ("new", &d.new)] {
        let level = match &s.level {
            Some(l) => format!(", level {}", escape_line(&l.to_string())),
            None => String::new(),
        };
        out.push(format!(
            "{tag}        {}: {}, graded by mcp-grade {}{level}; {} server(s), {} check(s)",
            escape_line(&s.report),
            s.benchmark.show(),
            escape_line(s.grader_version.as_deref().unwrap_or("(unknown)")),
            s.servers,
            s.checks
        ));
    }
    if d.benchmark_changed {
        out.push(format!(
            "benchmark  DIFFERS: {} -> {}",
            d.old.benchmark.show(),
            d.new.benchmark.show()
        ));
    } else {
        out.push("benchmark  the same in both".into());
    }
    let count = |c: Class| d.checks.iter().filter(|m| m.class.contains(&c)).count();
    let tally = [
        Class::Same,
        Class::Renumbered,
        Class::ParamsChanged,
        Class::Added,
        Class::Removed,
    ]
    .iter()
    .filter(|c| count(**c) > 0)
    .map(|c| format!("{} {}", count(*c), word(*c)))
    .collect::<Vec<_>>()
    .join(", ");
    match &d.checks_note {
        Some(n) => out.push(format!("checks     {}: {tally}", escape_line(n))),
        None => out.push(format!("checks     mapped through rule ids: {tally}")),
    }
    for c in d.checks.iter().filter(|c| c.class != [Class::Same]) {
        let mark = match c.class.as_slice() {
            [Class::Added] => "+",
            [Class::Removed] => "-",
            _ => "~",
        };
        let id = ids(
            c.old.as_ref().map(|x| x.id.as_str()),
            c.new.as_ref().map(|x| x.id.as_str()),
        );
        let mut t = format!("  {mark} {id}  {}", classes(&c.class));
        let rule = rule_note(&c.rule);
        if !rule.is_empty() {
            t.push_str(&format!(" ({rule})"));
        }
        if let Some(title) = c
            .new
            .as_ref()
            .or(c.old.as_ref())
            .and_then(|x| x.title.as_ref())
        {
            t.push_str(&format!(": {}", escape_line(title)));
        }
        out.push(t);
        if c.class.contains(&Class::ParamsChanged) {
            out.push(format!(
                "      params {} -> {}",
                json_line(c.old.as_ref().and_then(|x| x.params.as_ref())),
                json_line(c.new.as_ref().and_then(|x| x.params.as_ref()))
            ));
        }
    }
    out.push(format!(
        "servers    matched by {}: {}; only in old: {}; only in new: {}",
        d.by.word(),
        d.servers.len(),
        d.only_old.len(),
        d.only_new.len()
    ));
    for s in &d.servers {
        if s.old.endpoint == s.new.endpoint {
            out.push(format!("server     {}", server_line(&s.new)));
        } else {
            out.push(format!(
                "server     {} -> {} (endpoints differ; matched by identity, not counted as a change)",
                server_line(&s.old),
                server_line(&s.new)
            ));
        }
        if let Some(c) = &s.revision {
            out.push(format!(
                "  revision   {} -> {}",
                escape_line(c.old.as_deref().unwrap_or("none")),
                escape_line(c.new.as_deref().unwrap_or("none"))
            ));
        }
        if let Some(c) = &s.server_info {
            out.push(format!(
                "  identity   {} -> {}",
                json_line(c.old.as_ref()),
                json_line(c.new.as_ref())
            ));
        }
        for v in &s.verdicts {
            let id = ids(
                v.old.as_ref().map(|x| x.check.as_str()),
                v.new.as_ref().map(|x| x.check.as_str()),
            );
            let verdict = |x: &Option<VerdictAt>| {
                x.as_ref()
                    .map(|x| escape_line(x.verdict.as_deref().unwrap_or("not graded")))
            };
            let what = match (verdict(&v.old), verdict(&v.new)) {
                (Some(a), Some(b)) => format!("{a} -> {b}"),
                (Some(a), None) => format!("{a} (check removed)"),
                (None, Some(b)) => format!("{b} (check added)"),
                (None, None) => String::new(),
            };
            let mut t = format!("  verdict    {id}: {what}");
            let notes: Vec<String> = v
                .class
                .iter()
                .filter(|c| matches!(c, Class::Renumbered | Class::ParamsChanged))
                .map(|c| word(*c).to_string())
                .chain(Some(rule_note(&v.rule)).filter(|r| !r.is_empty()))
                .collect();
            if !notes.is_empty() && v.old.is_some() && v.new.is_some() {
                t.push_str(&format!(" ({})", notes.join(", ")));
            }
            if !v.legs.is_empty() {
                let legs: Vec<String> = v
                    .legs
                    .iter()
                    .map(|l| {
                        let w = |x: &Option<Value>| match x {
                            Some(Value::String(s)) => escape_line(s),
                            Some(v) => escape_line(&v.to_string()),
                            None => "absent".into(),
                        };
                        format!("{} {} -> {}", escape_line(&l.leg), w(&l.old), w(&l.new))
                    })
                    .collect();
                t.push_str(&format!("; legs {}", legs.join(", ")));
            }
            out.push(t);
        }
        out.push(format!(
            "  unchanged  {} check(s) with the same verdict",
            s.unchanged
        ));
    }
    for (tag, list) in [("only in old", &d.only_old), ("only in new", &d.only_new)] {
        for u in list {
            out.push(format!(
                "{tag}  {}: {}",
                server_line(&u.server),
                escape_line(&u.why)
            ));
        }
    }
    if !d.changed {
        out.push("no change".into());
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}
