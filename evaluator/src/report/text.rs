//! The check-centric text report.
//!
//! Layout (docs/report.md shows an example):
//!
//! ```text
//! ========================================================================
//! CIS MCP Server Benchmark 1.0.0 (id cis-mcp-server-1.0.0, sha256 e3b0c442…), graded by mcp-grade 0.1.0 (commit 0123abcd…, x86_64-unknown-linux-gnu, rustc 1.95.0)
//! checks: this build grades 12 of the 36; level: all (L1 and L2)
//! servers: 2
//! ========================================================================
//!   http://127.0.0.1:8080/mcp  [2025-11-25]
//!       server    test-server 1.0.0 (serverInfo, self-reported)
//!       auth      required: no; credential presented: no
//!       run       complete; collected 2025-11-30T05:20:00Z by mcp-collect 0.1.0 (commit 0123abcd…)
//!       bundle    evidence/a.mcpev (run 0011…, signer 34750f98…)
//!       baseline  none
//!
//! ========================================================================
//! 10.1 (L1) static resources cached with …  [wire]  0/1 pass
//!     FAIL    : http://127.0.0.1:8080/mcp [2025-11-25]
//!   evidence:
//!     FAIL     http://127.0.0.1:8080/mcp [2025-11-25]: 10.1a: …; 10.1b: … (record #3)
//!   reduction: …
//!
//! ========================================================================
//! not graded by this build (24 of 36):
//!   1.2 (L1) advertised capability configuration matches the recorded baseline
//! ```
//!
//! Checks are in numeric id order; each lists the servers per verdict in
//! [`Verdict::ORDER`], then the evidence of *every* non-PASS result (the reference tool
//! hid UNKNOWN and ERROR reasons), then the reduction (what
//! a black-box probe cannot reach) once. Everything that came from a bundle is escaped
//! for the terminal ([`crate::fmt::escape_line`]): a server chooses its own `serverInfo`, and
//! evidence quotes what it sent.

use std::fmt::Write as _;
use std::ops::ControlFlow;

use crate::fmt::{escape_line, utc};
use crate::verdict::Verdict;

use super::{BaselineInfo, BaselineMode, Report, Row, Server};

const RULE: &str = "========================================================================";

/// The whole text report: the bytes of [`write()`].
pub fn render(r: &Report) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = write(r, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// Write the whole text report to `out` as it is made, one check at a time.
pub fn write(r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut s = String::new();
    header(&mut s, r, out)?;
    let graded: Vec<&Row> = r.graded().collect();
    if graded.is_empty() {
        let _ = writeln!(
            s,
            "\n{RULE}\nno check in this selection is graded by this build"
        );
    }
    for row in graded {
        out.write_all(s.as_bytes())?;
        s.clear();
        check(&mut s, out, r, row)?;
    }
    let not: Vec<&Row> = r.not_graded().collect();
    if !not.is_empty() {
        let _ = writeln!(s, "\n{RULE}");
        let _ = writeln!(
            s,
            "not graded by this build ({} of {}{}); no verdict is claimed for these:",
            not.len(),
            r.rows.len(),
            match r.level {
                Some(l) => format!(" level-{l} checks"),
                None => String::new(),
            }
        );
        for row in not {
            let e = row.entry;
            let _ = writeln!(s, "  {} ({}) {}", e.id, e.level.as_str(), e.title);
        }
    }
    let _ = writeln!(s, "\n{RULE}");
    let _ = writeln!(
        s,
        "not reachable by any probe (benchmark sections without a check here):"
    );
    for u in r.benchmark.sections_unreached() {
        let _ = writeln!(
            s,
            "  {} {}: governs {}; {}",
            u.section, u.title, u.governs, u.why
        );
    }
    out.write_all(s.as_bytes())
}

fn header(s: &mut String, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let _ = writeln!(s, "{RULE}");
    let _ = writeln!(s, "{}", r.provenance.line(true));
    let total = r.benchmark.checks.len();
    let _ = match r.level {
        None => writeln!(
            s,
            "checks: this build grades {} of the {total}; level: all (L1 and L2)",
            r.graded().count()
        ),
        Some(l) => writeln!(
            s,
            "checks: level {l} only: {} of the {total} in scope, {} of them graded by this build",
            r.rows.len(),
            r.graded().count()
        ),
    };
    if let Some(p) = &r.policy {
        let _ = writeln!(s, "policy: {} (sha256 {})", escape_line(&p.file), p.sha256);
    }
    if let Some(w) = &r.waivers {
        let _ = writeln!(
            s,
            "waivers: {} (sha256 {}, judged on {}): {} result(s) waived, {} stale, {} expired; runs fail on {}",
            escape_line(&w.file),
            w.sha256,
            w.today,
            w.waived,
            w.stale.len(),
            w.expired.len(),
            r.fail_on.as_str()
        );
        for n in w.notices() {
            let _ = writeln!(s, "  {}", escape_line(&n));
        }
    }
    for (sub, l) in super::coverage::lines(r) {
        let _ = writeln!(s, "{}{}", if sub { "  " } else { "" }, escape_line(&l));
    }
    let _ = writeln!(s, "servers: {}", r.servers.len());
    let _ = writeln!(s, "{RULE}");
    r.each_server(|i, srv| {
        if i > 0 {
            s.push('\n');
        }
        server(s, srv, r.benchmark);
        flush_if_full(s, out)?;
        Ok(ControlFlow::Continue(()))
    })
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

fn server(s: &mut String, srv: &Server, bm: &crate::benchmark::Benchmark) {
    let w = |s: &mut String, k: &str, v: &str| {
        let _ = writeln!(s, "      {k:<10}{v}");
    };
    let _ = writeln!(
        s,
        "  {}  [{}]",
        escape_line(&srv.endpoint),
        escape_line(srv.revision_label())
    );
    if srv.target != srv.endpoint {
        w(s, "target", &escape_line(&srv.target));
    }
    w(s, "transport", srv.transport);
    w(s, "timestamp", &escape_line(&srv.timestamp.line()));
    if !srv.other_eras.is_empty() {
        w(
            s,
            "eras",
            &format!(
                "probed {} and {} ({} graded on each; the worst counts)",
                escape_line(srv.revision_label()),
                escape_line(&srv.other_eras.join(", ")),
                bm.per_era_checks().join(", ")
            ),
        );
    }
    w(
        s,
        "server",
        &match srv.server_name() {
            Some(n) => format!("{} (serverInfo, self-reported)", escape_line(&n)),
            None => "no serverInfo".into(),
        },
    );
    w(
        s,
        "auth",
        &match (srv.auth_required, srv.authenticated) {
            (Some(req), Some(cred)) => {
                format!(
                    "required: {}; credential presented: {}",
                    yes(req),
                    yes(cred)
                )
            }
            _ => "unknown (no endpoint answered)".into(),
        },
    );
    w(
        s,
        "run",
        &format!(
            "{}; collected {} by {}",
            srv.run_status,
            utc(srv.collected_at),
            srv.collector_line(true)
        ),
    );
    w(
        s,
        "bundle",
        &format!(
            "{} (run {}, signer {})",
            escape_line(&srv.bundle),
            escape_line(short(&srv.run_id)),
            short(&srv.signer)
        ),
    );
    w(s, "baseline", &baseline(srv.baseline.as_ref()));
    if let Some(f) = &srv.failure {
        w(s, "note", &escape_line(f));
    }
}

fn baseline(b: Option<&BaselineInfo>) -> String {
    let Some(b) = b else {
        return "none".into();
    };
    let path = escape_line(&b.path);
    match b.mode {
        BaselineMode::Update => match (&b.stored, &b.problem) {
            (Some(true), _) => format!("updating: this bundle is now the stored baseline ({path}); comparing checks say UNKNOWN"),
            (_, p) => format!(
                "updating: NOT stored ({}); comparing checks say UNKNOWN",
                escape_line(p.as_deref().unwrap_or("unknown reason"))
            ),
        },
        mode if b.used => format!(
            "{} {path} (run {}, collected {})",
            if mode == BaselineMode::File { "--baseline" } else { "stored" },
            escape_line(short(b.run_id.as_deref().unwrap_or("?"))),
            b.collected_at.map(utc).unwrap_or_else(|| "?".into())
        ),
        _ => format!(
            "stored {path} IGNORED: {}",
            escape_line(b.problem.as_deref().unwrap_or("unusable"))
        ),
    }
}

fn rate(row: &Row) -> String {
    let p = row.count(Verdict::Pass);
    let f = row.count(Verdict::Fail);
    let norev = row.count(Verdict::NoRev);
    let mut out = if p + f == 0 {
        "no pass/fail decisions".to_string()
    } else {
        format!("{p}/{} pass", p + f)
    };
    if norev > 0 {
        let _ = write!(
            out,
            ", {norev} lack{} the required revision",
            if norev == 1 { "s" } else { "" }
        );
    }
    out
}

fn records(seqs: &[u64]) -> String {
    match seqs {
        [] => String::new(),
        [one] => format!(" (record #{one})"),
        many => format!(
            " (records {})",
            many.iter()
                .map(|s| format!("#{s}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Write `s` to `out` once it holds more than this many bytes (a check's lines are
/// written as they are made, not held for the whole fleet).
const FLUSH_AT: usize = 1 << 16;

fn flush_if_full(s: &mut String, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    if s.len() > FLUSH_AT {
        out.write_all(s.as_bytes())?;
        s.clear();
    }
    Ok(())
}

/// One check: who got each verdict (from the verdicts in memory), then the evidence of
/// every non-PASS result by verdict, then each distinct reduction in server order, the
/// outcomes read [`super::WALK`] at a time ([`Report::each_outcome`]).
fn check(
    s: &mut String,
    out: &mut dyn std::io::Write,
    r: &Report,
    row: &Row,
) -> std::io::Result<()> {
    let e = row.entry;
    let _ = writeln!(s, "\n{RULE}");
    let _ = writeln!(
        s,
        "{} ({}) {}  [{}]  {}",
        e.id,
        e.level.as_str(),
        e.title,
        e.source.as_str(),
        rate(row)
    );
    let verdicts = row.verdicts.as_deref().unwrap_or(&[]);
    for v in Verdict::ORDER {
        let mut any = false;
        for (i, _) in verdicts.iter().enumerate().filter(|(_, x)| **x == v) {
            if any {
                s.push_str(", ");
            } else {
                let _ = write!(s, "    {:<8}: ", v.mark());
                any = true;
            }
            let waived = if row.waived(i) { " (waived)" } else { "" };
            let _ = write!(s, "{}{waived}", escape_line(&r.label(i)));
            flush_if_full(s, out)?;
        }
        if any {
            s.push('\n');
        }
    }
    let mut first = true;
    for v in Verdict::ORDER.into_iter().filter(|v| *v != Verdict::Pass) {
        r.each_outcome(
            row,
            |i| verdicts.get(i) == Some(&v),
            |i, o| {
                if first {
                    let _ = writeln!(s, "  evidence:");
                    first = false;
                }
                let waiver = match row.mark(i) {
                    Some(m) if m.active => format!(
                        " [waived until {} (waivers line {}): {}]",
                        m.expires,
                        m.line,
                        escape_line(&m.reason)
                    ),
                    Some(m) => format!(
                        " [waiver of line {} expired on {}: no longer applies]",
                        m.line, m.expires
                    ),
                    None => String::new(),
                };
                let _ = writeln!(
                    s,
                    "    {:<8} {}: {}{}{waiver}",
                    v.mark(),
                    escape_line(&r.label(i)),
                    escape_line(&o.evidence),
                    records(&o.records)
                );
                flush_if_full(s, out)?;
                Ok(ControlFlow::Continue(()))
            },
        )?;
    }
    let mut seen: Vec<String> = Vec::new();
    r.each_outcome(
        row,
        |_| true,
        |_, o| {
            let red = o.reduction.trim();
            if !red.is_empty() && !seen.iter().any(|x| x == red) {
                seen.push(red.to_string());
                let _ = writeln!(s, "  reduction: {}", escape_line(red));
            }
            Ok(ControlFlow::Continue(()))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::CheckResult;
    use crate::report::Server;
    use crate::verdict::Outcome;

    fn report() -> Report {
        let ev = crate::fixture::evidence(
            Some(crate::fixture::session(
                Some("2025-11-25"),
                serde_json::json!({}),
                Some(serde_json::json!({"name": "evil\u{1b}[2J", "version": "1"})),
            )),
            Vec::new(),
        );
        let results = crate::benchmark::Benchmark::builtin()
            .checks
            .iter()
            .map(|e| CheckResult {
                entry: e,
                outcome: match e.rule {
                    "cache-freshness" => Some(
                        Outcome::single(
                            Verdict::Fail,
                            format!("{}b: no Cache-Control", e.id),
                            "operator side",
                        )
                        .with_records([3, 4]),
                    ),
                    "stdio-preferred" => Some(Outcome::single(
                        Verdict::NotApplicable,
                        "operator-side",
                        "all of it",
                    )),
                    "null-id-rejected" => Some(Outcome::single(Verdict::Unknown, "no event", "")),
                    _ => None,
                },
            })
            .collect();
        Report::new(
            crate::benchmark::Benchmark::builtin(),
            None,
            vec![(Server::new(&ev, None), results)],
        )
    }

    #[test]
    fn layout_order_evidence_and_escaping() {
        let t = render(&report());
        assert!(!t.contains('\x1b'), "{t}");
        assert!(
            t.contains("evil\\u{1b}[2J 1 (serverInfo, self-reported)"),
            "{t}"
        );
        let bm = crate::benchmark::Benchmark::builtin();
        let number = |rule: &str| bm.first_row_of(rule).expect(rule).id;
        let (stdio, null_id, cache) = (
            number("stdio-preferred"),
            number("null-id-rejected"),
            number("cache-freshness"),
        );
        let at = |n: &str| t.find(&format!("\n{n} (L1)")).expect(n);
        assert!(
            at(&stdio) < at(&null_id) && at(&null_id) < at(&cache),
            "numeric order"
        );
        assert!(t.contains("[wire]  0/1 pass"), "{t}");
        assert!(t.contains("no pass/fail decisions"));
        assert!(
            t.contains(&format!(": {cache}b: no Cache-Control (records #3, #4)")),
            "{t}"
        );
        assert!(
            t.contains("    UNKNOWN  http://127.0.0.1:8080/mcp [2025-11-25]: no event"),
            "{t}"
        );
        assert!(
            t.contains("    N/A      http://127.0.0.1:8080/mcp [2025-11-25]: operator-side"),
            "{t}"
        );
        assert!(t.contains("  reduction: operator side"));
        assert!(t.contains("not graded by this build (33 of 36)"), "{t}");
        let ng = t.find("not graded by this build").expect("section");
        let baseline = number("capabilities-match-baseline");
        assert!(
            t[ng..].contains(&format!("  {baseline} (L1) advertised capability")),
            "{t}"
        );
        assert!(!t[ng..].contains(&format!("{cache} (L1)")));
    }

    #[test]
    fn rate_words() {
        let r = report();
        let row = r
            .rows
            .iter()
            .find(|x| x.entry.rule == "cache-freshness")
            .expect("row");
        assert_eq!(rate(row), "0/1 pass");
        assert_eq!(records(&[5]), " (record #5)");
        assert_eq!(records(&[]), "");
    }
}
