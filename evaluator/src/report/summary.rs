//! The default text report: summary first, for people.
//!
//! 1. A header (benchmark id, version and SHA-256, grader version and commit, checks
//!    graded, policy, waivers) and one line per server, with its run id, bundle file and
//!    the collector build that wrote it.
//! 2. The server x check matrix: one column per check id (written top to bottom), one
//!    mark per cell, a legend and a totals line.
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

use crate::benchmark::Source;
use crate::fmt::{cut, line};
use crate::verdict::Verdict;

use super::{Report, Row};

/// The longest evidence shown per result in the findings.
const EVIDENCE_CHARS: usize = 320;
/// The longest server label in the matrix.
const LABEL_CHARS: usize = 44;

/// The mark of one cell.
fn mark(row: &Row, i: usize) -> char {
    let Some(o) = row.outcomes.as_ref().and_then(|o| o.get(i)) else {
        return ' ';
    };
    if row.waived(i) {
        return 'w';
    }
    match o.verdict {
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

/// The whole summary-first report, wrapped to `width` columns.
pub fn render(r: &Report, width: usize) -> String {
    let width = width.clamp(60, 160);
    let rule = "=".repeat(width.min(100));
    let mut s = String::new();
    let _ = writeln!(s, "{rule}");
    s.push_str(&wrap(&r.provenance.line(false), width, "", "  "));
    let _ = writeln!(
        s,
        "checks: this build grades {} of the {}; level: {}; runs fail on {}",
        r.graded().count(),
        r.benchmark.checks.len(),
        match r.level {
            Some(l) => format!("{l} only"),
            None => "all (L1 and L2)".into(),
        },
        r.fail_on.as_str()
    );
    if let Some(p) = &r.policy {
        s.push_str(&wrap(
            &format!("{} (sha256 {})", line(&p.file), p.sha256),
            width,
            "policy: ",
            "  ",
        ));
    }
    if let Some(w) = &r.waivers {
        s.push_str(&wrap(
            &format!(
                "{} (sha256 {}, judged on {}): {} result(s) waived, {} stale, {} expired",
                line(&w.file),
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
            s.push_str(&wrap(&line(&n), width, "  ", "    "));
        }
    }
    let _ = writeln!(s, "servers: {}", r.servers.len());
    let _ = writeln!(s, "{rule}");
    servers(&mut s, r, width);
    matrix(&mut s, r);
    findings(&mut s, r, width, &rule);
    undecided(&mut s, r, width, &rule);
    reported_only(&mut s, r, width, &rule);
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
    let _ = writeln!(
        s,
        "\nThe whole evidence of every result: mcp-grade --verbose; other formats: --format json|sarif|junit|markdown|html."
    );
    s
}

fn servers(s: &mut String, r: &Report, width: usize) {
    for (i, srv) in r.servers.iter().enumerate() {
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
            line(&srv.endpoint),
            line(srv.revision_label()),
            line(&name),
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
                line(why)
            );
        }
        s.push_str(&wrap(&text, width, &format!("[{}] ", i + 1), "     "));
    }
}

fn matrix(s: &mut String, r: &Report) {
    let rows: Vec<&Row> = r.rows.iter().collect();
    let ids: Vec<&str> = rows.iter().map(|row| row.entry.id.as_str()).collect();
    let tall = ids.iter().map(|i| i.len()).max().unwrap_or(0);
    let label_w = r
        .servers
        .iter()
        .enumerate()
        .map(|(i, srv)| format!("[{}] {}", i + 1, srv.endpoint).chars().count())
        .max()
        .unwrap_or(0)
        .min(LABEL_CHARS);
    let _ = writeln!(s);
    for k in 0..tall {
        let mut l = format!("{:<label_w$}  ", "");
        let mut prev_section = "";
        for (row, id) in rows.iter().zip(&ids) {
            if !prev_section.is_empty() && row.entry.section() != prev_section {
                l.push(' ');
            }
            prev_section = row.entry.section();
            l.push(id.chars().nth(k).unwrap_or(' '));
            l.push(' ');
        }
        let _ = writeln!(s, "{}", l.trim_end());
    }
    for (i, srv) in r.servers.iter().enumerate() {
        let label = cut(&format!("[{}] {}", i + 1, line(&srv.endpoint)), label_w);
        let mut l = format!("{label:<label_w$}  ");
        let mut prev_section = "";
        for row in &rows {
            if !prev_section.is_empty() && row.entry.section() != prev_section {
                l.push(' ');
            }
            prev_section = row.entry.section();
            l.push(mark(row, i));
            l.push(' ');
        }
        let _ = writeln!(s, "{}", l.trim_end());
    }
    let _ = writeln!(
        s,
        "\nlegend: P pass  F FAIL  E ERROR  ? unknown  - n/a  R no-rev (needs 2026-07-28)  w waived  (blank: not graded)"
    );
    let count = |v: Verdict| r.total(v);
    let waived = r.waivers.as_ref().map_or(0, |w| w.waived);
    let _ = writeln!(
        s,
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
    );
}

/// Server indexes (1-based labels) with `v` on `row`, split into unwaived and waived.
fn who(r: &Report, row: &Row, v: Verdict) -> (Vec<usize>, Vec<usize>) {
    let mut open = Vec::new();
    let mut waived = Vec::new();
    for (i, o) in row.outcomes.iter().flatten().enumerate() {
        if o.verdict != v || r.servers[i].revision.is_none() && v == Verdict::Error {
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

fn findings(s: &mut String, r: &Report, width: usize, rule: &str) {
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
        let outcomes = row.outcomes.as_ref().expect("graded");
        for &i in fails.iter().chain(&errors) {
            let o = &outcomes[i];
            s.push_str(&wrap(
                &cut(&line(&o.evidence), EVIDENCE_CHARS),
                width,
                &format!("  [{}] {}: ", i + 1, o.verdict.mark()),
                "      ",
            ));
        }
        for &i in fails_w.iter().chain(&errors_w) {
            if let Some(m) = row.mark(i) {
                s.push_str(&wrap(
                    &format!(
                        "waived until {} (waivers line {}): {}",
                        m.expires,
                        m.line,
                        line(&m.reason)
                    ),
                    width,
                    &format!("  [{}] {}: ", i + 1, outcomes[i].verdict.mark()),
                    "      ",
                ));
            }
        }
        s.push_str(&wrap(e.remediation, width, "  fix: ", "       "));
    }
    if !any {
        let _ = writeln!(s, "\n{rule}\nfindings: none (no unwaived FAIL or ERROR)");
    }
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

fn reported_only(s: &mut String, r: &Report, width: usize, rule: &str) {
    let rows: Vec<&Row> = r
        .rows
        .iter()
        .filter(|row| row.entry.source == Source::ReportedOnly)
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n{rule}\nreported only ({}: the wire cannot decide them; N/A with what was observed):",
        rows.len()
    );
    for row in rows {
        let why = row
            .outcomes
            .iter()
            .flatten()
            .map(|o| o.reduction.as_str())
            .find(|x| !x.is_empty())
            .unwrap_or("");
        let why = why.split(';').next().unwrap_or("").trim();
        s.push_str(&wrap(
            &format!("{}: {}", row.entry.title, cut(&line(why), 140)),
            width,
            &format!("  {:<6} ", row.entry.id.as_str()),
            "         ",
        ));
    }
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
