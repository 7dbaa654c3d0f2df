//! The default text report: summary first, for people.
//!
//! 1. The first screen, within the terminal's width and height (80x24 when stdout is not
//!    a terminal): a title line, the server x check matrix (one column per check id, the
//!    section number over its first column and the rest of the id below; one row per
//!    server labelled `[n]`, or, when they do not fit, one row per set of servers with the
//!    same marks), a legend and a totals line.
//! 2. The header (benchmark id, version and SHA-256, grader version, commit, target and
//!    rustc, checks graded, policy, waivers) and one line per server, `[n]` as in the matrix, with its
//!    endpoint, run id, bundle file and the collector build that wrote it.
//! 3. The findings: each check with an unwaived FAIL or ERROR, the servers, the evidence
//!    (shortened; `--verbose` prints the whole check-centric report) and a one-line
//!    remediation. Waived findings are listed with their reasons. A server without an
//!    MCP session is described once, in its server line, not once per check.
//! 4. What stayed undecided (UNKNOWN), by check, in one paragraph.
//! 5. The reported-only checks in one short block.
//! 6. The benchmark sections no wire observation reaches (4, 6, 8, 9).
//!
//! Lines are wrapped to the width given (the terminal's, or 80); everything that came
//! from a bundle is escaped for the terminal.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::ops::ControlFlow;

use crate::benchmark::Source;
use crate::fmt::{cut, escape_line};
use crate::verdict::Verdict;

use super::{Report, Row};

/// The longest evidence shown per result in the findings.
const EVIDENCE_CHARS: usize = 320;

/// The mark of one cell.
fn mark(row: &Row, i: usize) -> char {
    let Some(v) = row.verdict(i) else {
        return ' ';
    };
    if row.waived(i) {
        return 'w';
    }
    match v {
        Verdict::Pass => 'P',
        Verdict::Fail => 'F',
        Verdict::Error => 'E',
        Verdict::Unknown => '?',
        Verdict::NotApplicable => '-',
        Verdict::NoRev => 'R',
    }
}

/// `text` wrapped to `width`, every line after the first indented by `indent`.
fn wrap(text: &str, width: usize, first: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut cur = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let room = cur.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && room > width {
            out.push_str(cur.trim_end());
            out.push('\n');
            cur = indent.to_string();
            empty = true;
        }
        if !empty {
            cur.push(' ');
        }
        // A word longer than a line (a URL, a hash) is cut where it must be.
        let mut w = word.to_string();
        while cur.chars().count() + w.chars().count() > width && w.chars().count() > 20 {
            let take = width.saturating_sub(cur.chars().count()).max(20);
            let head: String = w.chars().take(take).collect();
            let tail: String = w.chars().skip(take).collect();
            cur.push_str(&head);
            out.push_str(&cur);
            out.push('\n');
            cur = indent.to_string();
            w = tail;
        }
        cur.push_str(&w);
        empty = false;
    }
    out.push_str(cur.trim_end());
    out.push('\n');
    out
}

/// The whole summary-first report, wrapped to `width` columns, its first screen (title,
/// matrix, legend, totals) within `height` lines: the bytes [`write()`] writes.
pub fn render(r: &Report, width: usize, height: usize) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = write(r, width, height, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// Write the summary-first report to `out` as it is made: one check's findings at a
/// time, so the text of a report over many bundles is never held whole.
pub fn write(r: &Report, width: usize, height: usize, out: &mut dyn Write) -> io::Result<()> {
    let width = width.clamp(60, 160);
    let rule = "=".repeat(width.min(100));
    let mut s = String::new();
    screen(&mut s, r, width, height);
    let _ = writeln!(s, "\n{rule}");
    s.push_str(&wrap(&r.provenance.line(false), width, "", "  "));
    s.push_str(&wrap(
        &format!(
            "checks: this build grades {} of the {}; level: {}; runs fail on {}",
            r.graded().count(),
            r.benchmark.checks.len(),
            match r.level {
                Some(l) => format!("{l} only"),
                None => "all (L1 and L2)".into(),
            },
            r.fail_on.as_str()
        ),
        width,
        "",
        "  ",
    ));
    if let Some(p) = &r.policy {
        s.push_str(&wrap(
            &format!("{} (sha256 {})", escape_line(&p.file), p.sha256),
            width,
            "policy: ",
            "  ",
        ));
    }
    if let Some(w) = &r.waivers {
        s.push_str(&wrap(
            &format!(
                "{} (sha256 {}, judged on {}): {} result(s) waived, {} stale, {} expired",
                escape_line(&w.file),
                w.sha256,
                w.today,
                w.waived,
                w.stale.len(),
                w.expired.len()
            ),
            width,
            "waivers: ",
            "  ",
        ));
        for n in w.notices() {
            s.push_str(&wrap(&escape_line(&n), width, "  ", "    "));
        }
    }
    for (sub, l) in super::coverage::lines(r) {
        let (first, rest) = if sub { ("  ", "    ") } else { ("", "  ") };
        s.push_str(&wrap(&escape_line(&l), width, first, rest));
    }
    let _ = writeln!(s, "servers: {}", r.servers.len());
    let _ = writeln!(s, "{rule}");
    servers(&mut s, r, width, out)?;
    findings(&mut s, r, width, &rule, out)?;
    undecided(&mut s, r, width, &rule);
    reported_only(&mut s, r, width, &rule)?;
    let _ = writeln!(s, "\n{rule}");
    let _ = writeln!(
        s,
        "not reachable by any probe (benchmark sections without a check here):"
    );
    for u in r.benchmark.sections_unreached() {
        s.push_str(&wrap(
            &format!("{}: governs {}; {}", u.title, u.governs, u.why),
            width,
            &format!("  {}  ", u.section),
            "     ",
        ));
    }
    s.push('\n');
    s.push_str(&wrap(
        "The whole evidence of every result: mcp-grade --verbose; other formats: --format json|sarif|junit|markdown|html|oscal|xccdf.",
        width,
        "",
        "",
    ));
    flush(&mut s, out)
}

/// Write what `s` holds to `out` and empty it.
fn flush(s: &mut String, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(s.as_bytes())?;
    s.clear();
    Ok(())
}

fn servers(s: &mut String, r: &Report, width: usize, out: &mut dyn Write) -> io::Result<()> {
    if r.group_by_source {
        for (source, ix) in r.source_groups() {
            let head = match source {
                Some(file) => format!("from {}:", escape_line(file)),
                None => "given as targets:".to_string(),
            };
            s.push_str(&wrap(&head, width, "", "  "));
            for i in ix {
                if s.len() > 1 << 16 {
                    flush(s, out)?;
                }
                let srv = r.server(i).map_err(io::Error::other)?;
                server(s, i, &srv, width, "  ");
            }
        }
        return Ok(());
    }
    r.each_server(|i, srv| {
        if s.len() > 1 << 16 {
            flush(s, out)?;
        }
        server(s, i, srv, width, "");
        Ok(ControlFlow::Continue(()))
    })
}

/// One server's line of the summary, `[n] endpoint [revision] name; run; by collector`,
/// indented by `indent` (under a source heading).
fn server(s: &mut String, i: usize, srv: &super::Server, width: usize, indent: &str) {
    let name = srv.server_name().unwrap_or_else(|| "no serverInfo".into());
    let eras = if srv.other_eras.is_empty() {
        String::new()
    } else {
        format!(" (also {})", srv.other_eras.join(", "))
    };
    let eras = match srv.provenance() {
        Some(p) => format!("{eras}; {p}"),
        None => eras,
    };
    // The run id and the bundle file tell two runs of one endpoint apart.
    let mut text = format!(
        "{} [{}{eras}] {}; {}; by {}",
        escape_line(&srv.endpoint),
        escape_line(srv.revision_label()),
        escape_line(&name),
        srv.run_and_bundle(),
        srv.collector_line(false)
    );
    if srv.revision.is_none() {
        let why = srv
            .failure
            .as_deref()
            .unwrap_or("no session was established");
        let _ = write!(
            text,
            "; no MCP session, so the session checks are not decided: {}",
            escape_line(why)
        );
    }
    if let (true, Some((_, entry))) = (!indent.is_empty(), &srv.source) {
        let _ = write!(text, "; entry {}", escape_line(entry));
    }
    s.push_str(&wrap(
        &text,
        width,
        &format!("{indent}[{}] ", i + 1),
        &format!("{indent}     "),
    ));
}

/// The first screen: a title line, the server x check matrix, the legend and the totals,
/// within `width` columns and `height` lines, one line of which is left for the prompt
/// of a pager or the shell. Servers are labelled `[n]` (their details follow, under the
/// same numbers). When there are more servers than lines, servers with the same marks on
/// every check share a row (`[2-5,9]`); when the rows still do not fit, the first are
/// shown and a last line says how many more there are and where to read them.
fn screen(s: &mut String, r: &Report, width: usize, height: usize) {
    let cols = Columns::new(&r.rows);
    let title = format!(
        "{} {}: {} server(s) x {} checks (details below)",
        r.benchmark.name,
        r.benchmark.version,
        r.servers.len(),
        r.rows.len(),
    );
    let _ = writeln!(s, "{}", fit(&escape_line(&title), width));
    let legend = legend(width);
    let totals = wrap(&totals(r), width, "", "  ");
    let fixed = 1 + cols.depth + 1 + 1 + legend.len() + totals.lines().count();
    let room = height.saturating_sub(1 + fixed).max(2);

    let label_room = width.saturating_sub(2 + cols.width).max(4);
    let marks: Vec<String> = (0..r.servers.len())
        .map(|i| cols.line(|row| mark(row, i)))
        .collect();
    // Each row: its label, its marks, and how many servers it stands for.
    let mut shown: Vec<(String, &str, usize)> = if marks.len() <= room {
        marks
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("[{}]", i + 1), m.as_str(), 1))
            .collect()
    } else {
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        let mut at: std::collections::HashMap<&str, usize> = Default::default();
        for (i, m) in marks.iter().enumerate() {
            let g = *at.entry(m.as_str()).or_insert_with(|| {
                groups.push((m.as_str(), Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push(i);
        }
        groups
            .into_iter()
            .map(|(m, ix)| (group_label(&ix, label_room), m, ix.len()))
            .collect()
    };
    let more = (shown.len() > room).then(|| {
        let hidden = shown.split_off(room - 1);
        let servers: usize = hidden.iter().map(|(_, _, n)| n).sum();
        format!(
            "... {} more row(s), {servers} server(s): see mcp-grade --verbose or --format html",
            hidden.len()
        )
    });
    let label_w = shown
        .iter()
        .map(|(l, _, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .min(label_room);
    for h in cols.header() {
        let _ = writeln!(s, "{}", format!("{:label_w$}  {h}", "").trim_end());
    }
    for (label, m, _) in &shown {
        let _ = writeln!(s, "{}", format!("{label:<label_w$}  {m}").trim_end());
    }
    if let Some(more) = more {
        let _ = writeln!(s, "{}", fit(&more, width));
    }
    let _ = writeln!(s);
    for l in legend {
        let _ = writeln!(s, "{l}");
    }
    s.push_str(&totals);
}

/// `text` cut to `width` characters, the last of them `…` when it was cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        cut(text, width.saturating_sub(1))
    }
}

/// The label of a row the servers at `ix` (ascending) share, within `room` characters:
/// their 1-based numbers, runs written as ranges (`[2-5,9]`); when that is too long, the
/// first numbers and how many more (`[2-5,9,11 +40]`).
fn group_label(ix: &[usize], room: usize) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &i in ix {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => runs.push((i, i)),
        }
    }
    let part = |&(a, b): &(usize, usize)| {
        if a == b {
            format!("{}", a + 1)
        } else {
            format!("{}-{}", a + 1, b + 1)
        }
    };
    let all = format!("[{}]", runs.iter().map(part).collect::<Vec<_>>().join(","));
    if all.chars().count() <= room {
        return all;
    }
    let mut shown = String::new();
    let mut listed = 0;
    let mut best = format!("[+{}]", ix.len());
    for run in &runs {
        let next = if shown.is_empty() {
            part(run)
        } else {
            format!("{shown},{}", part(run))
        };
        let n = listed + run.1 - run.0 + 1;
        let label = format!("[{next} +{}]", ix.len() - n);
        if label.chars().count() > room {
            break;
        }
        (shown, listed, best) = (next, n, label);
    }
    best
}

/// The legend, its items packed into lines of `width`.
fn legend(width: usize) -> Vec<String> {
    let items = [
        "P pass",
        "F FAIL",
        "E ERROR",
        "? unknown",
        "- n/a",
        "R no-rev (needs 2026-07-28)",
        "w waived",
        "(blank: not graded)",
    ];
    let mut lines = Vec::new();
    let mut cur = "legend:".to_string();
    for item in items {
        let sep = if cur == "legend:" { " " } else { "  " };
        if cur.chars().count() + sep.len() + item.chars().count() > width {
            lines.push(std::mem::replace(&mut cur, format!("  {item}")));
        } else {
            cur.push_str(sep);
            cur.push_str(item);
        }
    }
    lines.push(cur);
    lines
}

/// The totals line, before wrapping.
fn totals(r: &Report) -> String {
    let count = |v: Verdict| r.total(v);
    let waived = r.waivers.as_ref().map_or(0, |w| w.waived);
    format!(
        "totals: {} results: {} PASS, {} FAIL, {} ERROR, {} UNKNOWN, {} N/A, {} NO-REV{}",
        Verdict::ORDER.iter().map(|v| count(*v)).sum::<usize>(),
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Error),
        count(Verdict::Unknown),
        count(Verdict::NotApplicable),
        count(Verdict::NoRev),
        if waived > 0 {
            format!(" ({waived} FAIL/ERROR waived)")
        } else {
            String::new()
        }
    )
}

/// The matrix's columns: one per check in scope, grouped by benchmark section (a space
/// between sections). The header writes each section's number once, over its first
/// column, and the rest of each check id below it, one part per line (`3.3.2`: `3`, then
/// `3`, then `2`), so a column is one character wide.
struct Columns<'r> {
    /// Per section: its number, its rows, and its width in characters.
    groups: Vec<(&'static str, Vec<&'r Row>, usize)>,
    /// The width of one column: the longest id part after the section.
    col: usize,
    /// The header's lines below the section line: the most id parts after the section.
    depth: usize,
    /// The width of a whole matrix line (without the label).
    width: usize,
}

impl<'r> Columns<'r> {
    fn new(rows: &'r [Row]) -> Columns<'r> {
        let rest =
            |row: &Row| -> Vec<&'static str> { row.entry.id.as_str().split('.').skip(1).collect() };
        let col = rows
            .iter()
            .flat_map(|row| rest(row).into_iter().map(str::len))
            .max()
            .unwrap_or(1)
            .max(1);
        let depth = rows.iter().map(|row| rest(row).len()).max().unwrap_or(0);
        let mut groups: Vec<(&'static str, Vec<&Row>, usize)> = Vec::new();
        for row in rows {
            match groups.last_mut() {
                Some((sec, g, _)) if *sec == row.entry.section() => g.push(row),
                _ => groups.push((row.entry.section(), vec![row], 0)),
            }
        }
        for (sec, g, w) in &mut groups {
            *w = (g.len() * col).max(sec.len());
        }
        let width = groups
            .iter()
            .map(|(_, _, w)| w + 1)
            .sum::<usize>()
            .saturating_sub(1);
        Columns {
            groups,
            col,
            depth,
            width,
        }
    }

    /// The header lines: the section numbers, then the id parts after them.
    fn header(&self) -> Vec<String> {
        let mut lines = vec![self.join(|sec, _| vec![sec.to_string()])];
        for k in 0..self.depth {
            lines.push(self.join(|_, rows| {
                rows.iter()
                    .map(|row| {
                        let part = row.entry.id.as_str().split('.').nth(k + 1).unwrap_or("");
                        format!("{part:<w$}", w = self.col)
                    })
                    .collect()
            }));
        }
        lines
    }

    /// One matrix line: `cell` of every check.
    fn line(&self, cell: impl Fn(&Row) -> char) -> String {
        self.join(|_, rows| {
            rows.iter()
                .map(|row| format!("{:<w$}", cell(row), w = self.col))
                .collect()
        })
    }

    /// The cells `f` gives each section, each section padded to its width, sections
    /// apart by a space, trailing spaces trimmed.
    fn join(&self, f: impl Fn(&str, &[&Row]) -> Vec<String>) -> String {
        let l = self
            .groups
            .iter()
            .map(|(sec, rows, w)| format!("{:<w$}", f(sec, rows).concat()))
            .collect::<Vec<_>>()
            .join(" ");
        l.trim_end().to_string()
    }
}

/// Server indexes (1-based labels) with `v` on `row`, split into unwaived and waived.
fn who(r: &Report, row: &Row, v: Verdict) -> (Vec<usize>, Vec<usize>) {
    let mut open = Vec::new();
    let mut waived = Vec::new();
    for (i, &o) in row.verdicts.iter().flatten().enumerate() {
        if o != v || r.servers[i].revision.is_none() && v == Verdict::Error {
            continue;
        }
        if row.waived(i) {
            waived.push(i);
        } else {
            open.push(i);
        }
    }
    (open, waived)
}

fn labels(ix: &[usize]) -> String {
    ix.iter()
        .map(|i| format!("[{}]", i + 1))
        .collect::<Vec<_>>()
        .join(" ")
}

fn findings(
    s: &mut String,
    r: &Report,
    width: usize,
    rule: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let rows: Vec<&Row> = r
        .graded()
        .filter(|row| row.entry.source != Source::ReportedOnly)
        .collect();
    let mut any = false;
    for row in rows {
        let (fails, fails_w) = who(r, row, Verdict::Fail);
        let (errors, errors_w) = who(r, row, Verdict::Error);
        if fails.is_empty() && errors.is_empty() && fails_w.is_empty() && errors_w.is_empty() {
            continue;
        }
        if !any {
            let _ = writeln!(s, "\n{rule}\nfindings (FAIL and ERROR, by check):");
            any = true;
        }
        let e = row.entry;
        let mut head = format!("{} ({})", e.id.as_str(), e.level.as_str());
        let mut sep = "";
        for (word, ix) in [
            ("FAIL", &fails),
            ("ERROR", &errors),
            ("waived FAIL", &fails_w),
            ("waived ERROR", &errors_w),
        ] {
            if !ix.is_empty() {
                let _ = write!(head, "{sep} {word} {}", labels(ix));
                sep = ";";
            }
        }
        let _ = write!(head, ": {}", e.title);
        let _ = writeln!(s);
        s.push_str(&wrap(&head, width, "", "    "));
        flush(s, out)?;
        // Each server's evidence, FAILs then ERRORs, read a part of the fleet at a time.
        for ix in [&fails, &errors] {
            r.each_outcome(
                row,
                |i| ix.binary_search(&i).is_ok(),
                |i, o| {
                    s.push_str(&wrap(
                        &cut(&escape_line(&o.evidence), EVIDENCE_CHARS),
                        width,
                        &format!("  [{}] {}: ", i + 1, o.verdict.mark()),
                        "      ",
                    ));
                    if s.len() > 1 << 16 {
                        flush(s, out)?;
                    }
                    Ok(ControlFlow::Continue(()))
                },
            )?;
        }
        for (v, ix) in [(Verdict::Fail, &fails_w), (Verdict::Error, &errors_w)] {
            for &i in ix {
                if let Some(m) = row.mark(i) {
                    s.push_str(&wrap(
                        &format!(
                            "waived until {} (waivers line {}): {}",
                            m.expires,
                            m.line,
                            escape_line(&m.reason)
                        ),
                        width,
                        &format!("  [{}] {}: ", i + 1, v.mark()),
                        "      ",
                    ));
                }
            }
        }
        s.push_str(&wrap(e.remediation, width, "  fix: ", "       "));
    }
    if !any {
        let _ = writeln!(s, "\n{rule}\nfindings: none (no unwaived FAIL or ERROR)");
    }
    Ok(())
}

fn undecided(s: &mut String, r: &Report, width: usize, rule: &str) {
    let parts: Vec<String> = r
        .graded()
        .filter(|row| row.entry.source != Source::ReportedOnly)
        .filter_map(|row| {
            let (ix, _) = who(r, row, Verdict::Unknown);
            let ix: Vec<usize> = ix
                .into_iter()
                .filter(|i| r.servers[*i].revision.is_some())
                .collect();
            (!ix.is_empty()).then(|| format!("{} {}", row.entry.id.as_str(), labels(&ix)))
        })
        .collect();
    if parts.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n{rule}");
    s.push_str(&wrap(
        &format!(
            "{}. Each says why (often a missing probe input, a baseline or consent): mcp-grade --verbose.",
            parts.join("; ")
        ),
        width,
        "undecided (UNKNOWN): ",
        "  ",
    ));
}

fn reported_only(s: &mut String, r: &Report, width: usize, rule: &str) -> io::Result<()> {
    let rows: Vec<&Row> = r
        .rows
        .iter()
        .filter(|row| row.entry.source == Source::ReportedOnly)
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let _ = writeln!(
        s,
        "\n{rule}\nreported only ({}: the wire cannot decide them; N/A with what was observed):",
        rows.len()
    );
    for row in rows {
        let mut why = String::new();
        r.each_outcome(
            row,
            |_| true,
            |_, o| {
                if o.reduction.is_empty() {
                    return Ok(ControlFlow::Continue(()));
                }
                why = o
                    .reduction
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                Ok(ControlFlow::Break(()))
            },
        )?;
        s.push_str(&wrap(
            &format!("{}: {}", row.entry.title, cut(&escape_line(&why), 140)),
            width,
            &format!("  {:<6} ", row.entry.id.as_str()),
            "         ",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_lines_within_the_width() {
        let t = "word ".repeat(50) + &"x".repeat(200);
        let w = wrap(&t, 60, "  [1] FAIL: ", "      ");
        for l in w.lines() {
            assert!(l.chars().count() <= 60, "{l:?}");
        }
        assert!(w.starts_with("  [1] FAIL: word"));
        assert!(w.lines().skip(1).all(|l| l.starts_with("      ")));
        assert_eq!(wrap("", 60, "a: ", ""), "a:\n");
    }
}
