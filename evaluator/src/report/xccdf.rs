//! The XCCDF report (`--format xccdf`): an XCCDF 1.2 `Benchmark` holding a `Rule` per
//! recommendation of the definition and a `TestResult` per server, with a `rule-result`
//! per recommendation (docs/report.md, "XCCDF 1.2 test results"), for SCAP tools.
//!
//! Results: PASS `pass`, FAIL `fail`, ERROR `error`, UNKNOWN `unknown`, N/A and NO-REV
//! `notapplicable` (NO-REV: the mechanism does not exist in the revision the server
//! negotiated, so the rule does not apply to that server as it is), a reported-only
//! check `notchecked` (whatever its verdict: no probe decides it), a check a tailoring
//! deselected `notselected`, and a recommendation no probe reaches, or a check this
//! build does not grade, `notchecked` ([`result`]).
//!
//! Ids: `xccdf_<`[`RDNS`]`>_rule_<control id>` with the control id of
//! [`super::oscal::control_id`] (`cis-mcp-server-1.0.0-2.4`); the benchmark
//! `xccdf_<RDNS>_benchmark_<definition id>`; a server's test result
//! `xccdf_<RDNS>_testresult_<n>` (`n` its place in the report, from 1).
//!
//! Deterministic: the only times are the bundles' (`start-time` the start of
//! collection, `end-time` and each `time` the seal), so the same bundles give the same
//! bytes. Written a server at a time ([`Report::server_outcomes`]).

use std::io::{self, Write};

use super::oscal::{control_id, recommendations};
use super::{Report, Server};
use crate::benchmark::Source;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, Verdict};

/// The reverse-DNS part of every id: the project's repository address
/// (`https://example.invalid/mcp-probe`) reversed.
pub const RDNS: &str = "invalid.example.mcp-probe";

/// The XCCDF 1.2 namespace.
pub const XMLNS: &str = "http://checklists.nist.gov/xccdf/1.2";

/// The scoring model of each test result's score: every rule whose result is `pass`,
/// `fail`, `error` or `unknown` counts one toward the maximum, each `pass` one toward
/// the score.
pub const SCORING: &str = "urn:xccdf:scoring:flat-unweighted";

/// The rule id of recommendation `number` of definition `definition_id`.
pub fn rule_id(definition_id: &str, number: &str) -> String {
    format!("xccdf_{RDNS}_rule_{}", control_id(definition_id, number))
}

/// What a recommendation is in a report, for its XCCDF result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// A check graded on the server, with its verdict and verdict source.
    Graded(Verdict, Source),
    /// A check of the definition this build does not grade.
    NotGraded,
    /// A check a tailoring deselected.
    Deselected,
    /// A recommendation no probe reaches.
    Unreached,
}

/// The XCCDF result of a recommendation that stands as `s`.
pub fn result(s: Standing) -> &'static str {
    match s {
        Standing::Graded(_, Source::ReportedOnly) => "notchecked",
        Standing::Graded(v, _) => match v {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::Unknown => "unknown",
            Verdict::NotApplicable | Verdict::NoRev => "notapplicable",
        },
        Standing::NotGraded | Standing::Unreached => "notchecked",
        Standing::Deselected => "notselected",
    }
}

/// `s` escaped to one line of printable text, then for XML text and attributes (`&`,
/// `<`, `>` and `"` as entities), in one pass over the line: the line itself when it
/// holds none of the four.
fn x(s: &str) -> String {
    let line = escape_line(s);
    if !line.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'"')) {
        return line;
    }
    let mut out = String::with_capacity(line.len() + 32);
    // The four are ASCII, so the text between two of them is whole characters, copied
    // as one run.
    let mut start = 0;
    for (i, b) in line.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => continue,
        };
        out.push_str(&line[start..i]);
        out.push_str(entity);
        start = i + 1;
    }
    out.push_str(&line[start..]);
    out
}

fn time(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// One recommendation in the Benchmark: its number, title and standing kind.
struct Item {
    number: String,
    title: String,
    /// The report's row, for a check of the definition.
    row: Option<usize>,
    deselected: bool,
    /// Why no probe reaches it.
    why: Option<String>,
}

fn items(r: &Report) -> Vec<Item> {
    let b = r.benchmark;
    let deselected = &r.provenance.benchmark.deselected;
    recommendations(r)
        .into_iter()
        .map(|n| {
            let row = r.rows.iter().position(|x| x.entry.id.as_str() == n);
            let entry = b.checks.iter().find(|e| e.id.as_str() == n);
            let unreached = b.unreached.iter().find(|u| u.section == n);
            let title = match (entry, unreached) {
                (Some(e), _) => e.title.to_string(),
                (None, Some(u)) => u.title.to_string(),
                (None, None) => format!("{n} (deselected by the tailoring)"),
            };
            Item {
                deselected: deselected.contains(&n),
                why: unreached.map(|u| {
                    if u.governs.is_empty() {
                        u.why.to_string()
                    } else {
                        format!("governs {}; {}", u.governs, u.why)
                    }
                }),
                number: n,
                title,
                row,
            }
        })
        .collect()
}

/// Write the XCCDF document of `r` to `out`.
pub fn write(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let b = &r.provenance.benchmark;
    let g = &r.provenance.grader;
    let items = items(r);
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<Benchmark xmlns="{XMLNS}" id="xccdf_{RDNS}_benchmark_{}" resolved="1" xml:lang="en">"#,
        x(&b.id)
    )?;
    match r.benchmark.date {
        Some(d) => writeln!(out, r#"  <status date="{}">accepted</status>"#, x(d))?,
        None => writeln!(out, "  <status>accepted</status>")?,
    }
    writeln!(out, "  <title>{}</title>", x(&b.name))?;
    let mut desc = format!(
        "{} {} (definition {}, SHA-256 {}) graded by {} {} (build {}) from signed evidence bundles.",
        b.name, b.version, b.id, b.sha256, g.name, g.version, g.commit
    );
    if let Some(t) = &b.tailoring {
        desc.push_str(&format!(
            " Tailored by {} (SHA-256 {}).",
            escape_line(&t.file),
            t.sha256
        ));
    }
    writeln!(out, "  <description>{}</description>", x(&desc))?;
    writeln!(out, "  <version>{}</version>", x(&b.version))?;
    for it in &items {
        let id = rule_id(&b.id, &it.number);
        let selected = if it.deselected {
            r#" selected="false""#
        } else {
            ""
        };
        writeln!(out, r#"  <Rule id="{}"{selected}>"#, x(&id))?;
        writeln!(out, "    <title>{} {}</title>", x(&it.number), x(&it.title))?;
        let e = it.row.map(|k| r.rows[k].entry);
        let text = match (e, &it.why) {
            (Some(e), _) => format!(
                "Level {}, verdict source {}, rule {}. Remediation: {}",
                e.level.number(),
                e.source.key(),
                e.rule,
                e.remediation
            ),
            (None, Some(w)) => format!("No probe reaches it: {w}"),
            (None, None) => "Deselected by the tailoring.".to_string(),
        };
        writeln!(out, "    <description>{}</description>", x(&text))?;
        writeln!(out, "  </Rule>")?;
    }
    let n = r.servers.len();
    for i in 0..n {
        let s = r.server(i).map_err(io::Error::other)?;
        let outcomes = r.server_outcomes(i).map_err(io::Error::other)?;
        test_result(r, &items, i, &s, &outcomes, out)?;
    }
    writeln!(out, "</Benchmark>")
}

fn test_result(
    r: &Report,
    items: &[Item],
    i: usize,
    s: &Server,
    outcomes: &[Option<Outcome>],
    out: &mut dyn Write,
) -> io::Result<()> {
    let b = &r.provenance.benchmark;
    let end = time(s.finished_at.max(s.collected_at));
    writeln!(
        out,
        r#"  <TestResult id="xccdf_{RDNS}_testresult_{}" start-time="{}" end-time="{end}" version="{}">"#,
        i + 1,
        time(s.collected_at),
        x(&b.version)
    )?;
    writeln!(
        out,
        "    <title>{} {} on {}</title>",
        x(&b.name),
        x(&b.version),
        x(&s.endpoint)
    )?;
    writeln!(out, "    <target>{}</target>", x(&s.endpoint))?;
    writeln!(out, "    <target-facts>")?;
    let mut facts: Vec<(&str, String)> = vec![
        ("bundle", s.bundle.clone()),
        ("run-id", s.run_id.clone()),
        ("run-status", s.run_status.to_string()),
        ("revision", s.revision_label().to_string()),
        ("transport", s.transport.to_string()),
        ("signer", s.signer.clone()),
        ("collector", s.collector.clone()),
        ("collector-build", s.collector_build.clone()),
    ];
    if let Some(h) = &s.sha256 {
        facts.insert(1, ("bundle-sha256", h.clone()));
    }
    for (name, v) in facts {
        writeln!(
            out,
            r#"      <fact name="urn:mcp-probe:fact:{name}" type="string">{}</fact>"#,
            x(&v)
        )?;
    }
    writeln!(out, "    </target-facts>")?;
    let (mut score, mut maximum) = (0usize, 0usize);
    for it in items {
        let row = it.row.map(|k| &r.rows[k]);
        let outcome = it
            .row
            .and_then(|k| outcomes.get(k))
            .and_then(Option::as_ref);
        let standing = match (row, outcome) {
            (Some(row), Some(o)) => Standing::Graded(o.verdict, row.entry.source),
            (Some(_), None) => Standing::NotGraded,
            (None, _) if it.deselected => Standing::Deselected,
            (None, _) => Standing::Unreached,
        };
        let res = result(standing);
        match res {
            "pass" => {
                score += 1;
                maximum += 1;
            }
            "fail" | "error" | "unknown" => maximum += 1,
            _ => {}
        }
        writeln!(
            out,
            r#"    <rule-result idref="{}" time="{end}">"#,
            x(&rule_id(&b.id, &it.number))
        )?;
        writeln!(out, "      <result>{res}</result>")?;
        let mut messages: Vec<(&str, String)> = Vec::new();
        match (standing, outcome) {
            (Standing::Graded(v, _), Some(o)) => {
                let sev = if v == Verdict::Error { "error" } else { "info" };
                messages.push((sev, format!("{}: {}", v.mark(), o.evidence)));
                let records = crate::fmt::record_list(&o.records);
                if !records.is_empty() {
                    messages.push(("info", format!("records {records}")));
                }
                if !o.reduction.is_empty() {
                    messages.push((
                        "info",
                        format!("what a probe cannot reach: {}", o.reduction),
                    ));
                }
                if let Some(m) = row.and_then(|row| row.mark(i)).filter(|m| m.active) {
                    messages.push((
                        "warning",
                        format!(
                            "{} waived until {} (waivers line {}): {}",
                            v.mark(),
                            m.expires,
                            m.line,
                            m.reason
                        ),
                    ));
                }
            }
            (Standing::NotGraded, _) => {
                messages.push(("info", "not graded by this build".into()));
            }
            (Standing::Deselected, _) => {
                messages.push(("info", "deselected by the tailoring".into()));
            }
            _ => {
                if let Some(w) = &it.why {
                    messages.push(("info", format!("no probe reaches it: {w}")));
                }
            }
        }
        for (sev, m) in messages {
            writeln!(
                out,
                r#"      <message severity="{sev}">{}</message>"#,
                x(&m)
            )?;
        }
        writeln!(out, "    </rule-result>")?;
    }
    writeln!(
        out,
        r#"    <score system="{SCORING}" maximum="{maximum}">{score}</score>"#
    )?;
    writeln!(out, "  </TestResult>")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass escape writes what the four `replace` passes over the line wrote.
    #[test]
    fn xml_escape_matches_replacing_each_entity_in_turn() {
        let old = |s: &str| {
            escape_line(s)
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        for s in [
            "",
            "plain text",
            "a & b < c > d \"e\" 'f'",
            "&amp; already an entity",
            "line\nbreak\tand \u{1b}[31m escape",
            "µs & ünïcode <tag attr=\"v\">",
            "\"\"&&<<>>",
        ] {
            assert_eq!(x(s), old(s), "{s:?}");
        }
    }

    #[test]
    fn every_standing_has_its_result() {
        use Source::{InPart, ReportedOnly, Wire};
        let g = |v| result(Standing::Graded(v, Wire));
        assert_eq!(g(Verdict::Pass), "pass");
        assert_eq!(g(Verdict::Fail), "fail");
        assert_eq!(g(Verdict::Error), "error");
        assert_eq!(g(Verdict::Unknown), "unknown");
        assert_eq!(g(Verdict::NotApplicable), "notapplicable");
        assert_eq!(g(Verdict::NoRev), "notapplicable");
        assert_eq!(result(Standing::Graded(Verdict::Fail, InPart)), "fail");
        assert_eq!(
            result(Standing::Graded(Verdict::NotApplicable, ReportedOnly)),
            "notchecked"
        );
        assert_eq!(result(Standing::Deselected), "notselected");
        assert_eq!(result(Standing::Unreached), "notchecked");
        assert_eq!(result(Standing::NotGraded), "notchecked");
        assert_eq!(
            rule_id("cis-mcp-server-1.0.0", "2.4"),
            "xccdf_invalid.example.mcp-probe_rule_cis-mcp-server-1.0.0-2.4"
        );
    }
}
