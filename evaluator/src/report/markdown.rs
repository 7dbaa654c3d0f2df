//! The Markdown report (`--format markdown`), for pull-request comments and CI job
//! summaries (GitHub-flavoured tables and `<details>`): the totals, one row per server,
//! the findings with their fix, what stayed undecided, and the rest folded away (the
//! reported-only checks, the sections no probe reaches, and the provenance: benchmark
//! id, version and SHA-256, grader version, commit, target and rustc, each server's collector build).
//! Everything that came from a bundle is escaped so that it cannot break the table or
//! inject markup.

use std::fmt::Write as _;
use std::ops::ControlFlow;

use crate::benchmark::Source;
use crate::fmt::{cut, escape_line};
use crate::verdict::Verdict;

use super::{Report, Row, GRADER_VERSION};

/// The longest evidence quoted per finding.
const EVIDENCE_CHARS: usize = 300;

/// `s` made safe inside a Markdown table cell: terminal escapes, then every character
/// Markdown or HTML gives a meaning to is backslash-escaped or entity-encoded.
pub fn cell(s: &str) -> String {
    let mut out = String::new();
    for c in escape_line(s).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn count(r: &Report, i: usize, v: Verdict) -> usize {
    r.rows
        .iter()
        .filter(|row| row.verdict(i) == Some(v))
        .count()
}

/// The whole Markdown report: the bytes of [`write()`].
pub fn render(r: &Report) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = write(r, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// Write `s` to `out` and empty it.
fn flush(s: &mut String, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(s.as_bytes())?;
    s.clear();
    Ok(())
}

/// Write the Markdown report to `out` as it is made: one check's findings at a time.
pub fn write(r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## {}: {} server(s)\n",
        cell(&r.benchmark.title()),
        r.servers.len()
    );
    let waived = r.waivers.as_ref().map_or(0, |w| w.waived);
    let _ = writeln!(
        s,
        "mcp-grade {GRADER_VERSION} grades {} of the {} checks. **{} FAIL**, **{} ERROR**, {} UNKNOWN, {} PASS, {} N/A, {} NO-REV{}; runs fail on `{}`.\n",
        r.graded().count(),
        r.benchmark.checks.len(),
        r.total(Verdict::Fail),
        r.total(Verdict::Error),
        r.total(Verdict::Unknown),
        r.total(Verdict::Pass),
        r.total(Verdict::NotApplicable),
        r.total(Verdict::NoRev),
        if waived > 0 {
            format!(" ({waived} FAIL/ERROR waived)")
        } else {
            String::new()
        },
        r.fail_on.as_str()
    );
    if let Some(w) = &r.waivers {
        let notices = w.notices();
        if !notices.is_empty() {
            let _ = writeln!(s, "**Waivers** `{}`:\n", cell(&w.file));
            for n in notices {
                let _ = writeln!(s, "- {}", cell(&n));
            }
            let _ = writeln!(s);
        }
    }
    for (sub, l) in super::coverage::lines(r) {
        let _ = writeln!(s, "{}- {}", if sub { "  " } else { "" }, cell(&l));
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| # | endpoint | revision | server | run and bundle | FAIL | ERROR | UNKNOWN | PASS |\n|---|---|---|---|---|---|---|---|---|"
    );
    r.each_server(|i, srv| {
        let eras = if srv.other_eras.is_empty() {
            String::new()
        } else {
            format!(" (also {})", srv.other_eras.join(", "))
        };
        let eras = match srv.provenance() {
            Some(p) => format!("{eras}; {p}"),
            None => eras,
        };
        let name = match (srv.revision.as_ref(), srv.server_name()) {
            (None, _) => format!(
                "no MCP session: {}",
                cut(srv.failure.as_deref().unwrap_or("none established"), 160)
            ),
            (_, Some(n)) => n,
            (_, None) => "no serverInfo".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {}{} | {} | {} | {} | {} | {} | {} |",
            i + 1,
            cell(&srv.endpoint),
            cell(srv.revision_label()),
            cell(&eras),
            cell(&name),
            cell(&srv.run_and_bundle()),
            count(r, i, Verdict::Fail),
            count(r, i, Verdict::Error),
            count(r, i, Verdict::Unknown),
            count(r, i, Verdict::Pass),
        );
        if s.len() > 1 << 16 {
            flush(&mut s, out)?;
        }
        Ok(ControlFlow::Continue(()))
    })?;
    findings(&mut s, r, out)?;
    let _ = writeln!(
        s,
        "\n<details><summary>Reported only, and not reachable by any probe</summary>\n"
    );
    for row in r
        .rows
        .iter()
        .filter(|row| row.entry.source == Source::ReportedOnly)
    {
        let _ = writeln!(
            s,
            "- **{}** {}: reported only (the wire cannot decide it)",
            row.entry.id.as_str(),
            cell(row.entry.title)
        );
    }
    let _ = writeln!(s);
    for u in r.benchmark.sections_unreached() {
        let _ = writeln!(
            s,
            "- **Section {}** ({}): governs {}; {}.",
            u.section, u.title, u.governs, u.why
        );
    }
    let _ = writeln!(s, "\n</details>");
    provenance(&mut s, r, out)?;
    flush(&mut s, out)
}

/// The benchmark, the grader and each server's collector, folded away.
fn provenance(s: &mut String, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let b = &r.provenance.benchmark;
    let g = &r.provenance.grader;
    let _ = writeln!(s, "\n<details><summary>Provenance</summary>\n");
    let _ = writeln!(
        s,
        "- benchmark: {} {}, id {}, sha256 {}",
        cell(&b.name),
        cell(&b.version),
        cell(&b.id),
        cell(&b.sha256)
    );
    if let Some(t) = &b.tailoring {
        let _ = writeln!(
            s,
            "- tailoring: {}, sha256 {}",
            cell(&t.file),
            cell(&t.sha256)
        );
    }
    if let Some(a) = &r.provenance.attestations {
        let _ = writeln!(
            s,
            "- attestations: {}, sha256 {}",
            cell(&a.file),
            cell(&a.sha256)
        );
    }
    let _ = writeln!(
        s,
        "- grader: {} {}, commit {}, {}, {}",
        cell(&g.name),
        cell(&g.version),
        cell(&g.commit),
        cell(&g.target),
        cell(&g.rustc)
    );
    r.each_server(|i, srv| {
        if s.len() > 1 << 16 {
            flush(s, out)?;
        }
        let _ = writeln!(
            s,
            "- [{}] {}: bundle {} written by {}, build {}",
            i + 1,
            cell(&srv.endpoint),
            cell(&srv.bundle),
            cell(&srv.collector),
            cell(&srv.collector_build)
        );
        Ok(ControlFlow::Continue(()))
    })?;
    let _ = writeln!(s, "\n</details>");
    Ok(())
}

fn findings(s: &mut String, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let rows: Vec<&Row> = r
        .graded()
        .filter(|row| row.entry.source != Source::ReportedOnly)
        .collect();
    let mut head = false;
    for row in rows {
        let e = row.entry;
        flush(s, out)?;
        // Only the FAIL and ERROR results are read back, a part of the fleet at a time.
        let finding = |i: usize| match row.verdict(i) {
            Some(Verdict::Fail) => true,
            Some(Verdict::Error) => r.servers[i].revision.is_some(),
            _ => false,
        };
        r.each_outcome(row, finding, |i, o| {
            if !head {
                let _ = writeln!(
                    s,
                    "\n### Findings\n\n| check | server | verdict | evidence | fix |\n|---|---|---|---|---|"
                );
                head = true;
            }
            let verdict = match row.mark(i).filter(|m| m.active) {
                Some(m) => format!(
                    "{} (waived until {}: {})",
                    o.verdict.mark(),
                    m.expires,
                    cell(&m.reason)
                ),
                None => format!("**{}**", o.verdict.mark()),
            };
            let _ = writeln!(
                s,
                "| {} ({}) {} | {} | {} | {} | {} |",
                e.id.as_str(),
                e.level.as_str(),
                cell(e.title),
                i + 1,
                verdict,
                cell(&cut(&o.evidence, EVIDENCE_CHARS)),
                cell(e.remediation)
            );
            if s.len() > 1 << 16 {
                flush(s, out)?;
            }
            Ok(ControlFlow::Continue(()))
        })?;
    }
    if !head {
        let _ = writeln!(s, "\nNo FAIL or ERROR.");
    }
    let undecided: Vec<String> = r
        .graded()
        .filter(|row| row.entry.source != Source::ReportedOnly)
        .filter_map(|row| {
            let n: Vec<String> = row
                .verdicts
                .iter()
                .flatten()
                .enumerate()
                .filter(|(i, v)| **v == Verdict::Unknown && r.servers[*i].revision.is_some())
                .map(|(i, _)| (i + 1).to_string())
                .collect();
            (!n.is_empty()).then(|| format!("{} ({})", row.entry.id.as_str(), n.join(", ")))
        })
        .collect();
    if !undecided.is_empty() {
        let _ = writeln!(
            s,
            "\n**Undecided (UNKNOWN)**, by check (servers): {}. Each says why in `mcp-grade --verbose`.",
            undecided.join("; ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table_or_inject_markup() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("<script>"), "&lt;script&gt;");
        assert_eq!(cell("[x](javascript:1)"), "\\[x\\](javascript:1)");
        assert_eq!(cell("\u{1b}[2J"), "\\\\u{1b}\\[2J");
    }
}
