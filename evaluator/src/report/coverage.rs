//! Every recommendation accounted for: the coverage line, the operator's attestations
//! (`--attestations`) and the score, as every report format states them (docs/report.md).
//!
//! * Coverage, when the definition states how many recommendations the benchmark has:
//!   `N of T decided from the wire, M reported, K attested, the rest (R) not reachable
//!   from outside`. N counts the checks of the report whose source is `wire` or
//!   `in-part`; M the reported-only checks no attestation in force completes; K the
//!   recommendations no wire row decides (reported-only checks, `[[unreached]]`
//!   recommendations, those a tailoring names) that an attestation in force completes;
//!   R is the rest (checks a `--level` or a tailoring leaves out count there too).
//! * Attestations are their own source: one completes a reported-only check or a
//!   recommendation no probe reaches; beside a check decided from the wire it never
//!   changes the verdict, and one that contradicts it (satisfied while a server FAILs,
//!   not-satisfied while one PASSes) is shown as a CONFLICT.
//! * The score, as CIS-CAT states it: PASS / (PASS + FAIL) over the results that can
//!   pass or fail, per server and overall, a percentage with one decimal.

use chrono::NaiveDate;

use super::{provenance::FileRef, Report};
use crate::attestations::{Applied, Attestation, Attestations, Attested, AttestedStatus};
use crate::benchmark::Source;
use crate::verdict::Verdict;

/// How the benchmark's recommendations are accounted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Coverage {
    /// The benchmark's recommendations.
    pub recommendations: u32,
    /// Decided from the wire (checks of source `wire` or `in-part`).
    pub wire: usize,
    /// Reported only, and not attested.
    pub reported: usize,
    /// Completed by an attestation in force.
    pub attested: usize,
    /// The rest: not reachable from outside.
    pub unreachable: usize,
}

impl Coverage {
    /// `N of T decided from the wire, M reported, K attested, the rest (R) not reachable
    /// from outside`.
    pub fn words(&self) -> String {
        format!(
            "{} of {} decided from the wire, {} reported, {} attested, the rest ({}) not reachable from outside",
            self.wire, self.recommendations, self.reported, self.attested, self.unreachable
        )
    }
}

/// PASS and FAIL results: the score's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Score {
    /// PASS results.
    pub pass: usize,
    /// FAIL results.
    pub fail: usize,
}

impl Score {
    /// PASS / (PASS + FAIL) as a percentage rounded to one decimal; `None` without a
    /// PASS or a FAIL.
    pub fn percent(&self) -> Option<f64> {
        let n = self.pass + self.fail;
        (n > 0).then(|| (self.pass as f64 * 1000.0 / n as f64).round() / 10.0)
    }

    /// `87.5%` or `n/a`.
    pub fn short(&self) -> String {
        self.percent()
            .map_or_else(|| "n/a".to_string(), |p| format!("{p:.1}%"))
    }

    /// `87.5% (7 PASS of 8 PASS or FAIL)` or `n/a (no PASS or FAIL)`.
    pub fn words(&self) -> String {
        match self.percent() {
            Some(p) => format!(
                "{p:.1}% ({} PASS of {} PASS or FAIL)",
                self.pass,
                self.pass + self.fail
            ),
            None => "n/a (no PASS or FAIL)".to_string(),
        }
    }
}

impl Report {
    /// Judge `a` on `today` against the verdicts: the attestations in force, their
    /// conflicts with the wire, the expired ones. Names the file in the provenance.
    pub fn apply_attestations(&mut self, a: &Attestations, today: NaiveDate) {
        let mut list = Vec::new();
        for x in a.list.iter().filter(|x| !x.expired(today)) {
            let number = x.recommendation;
            let row = self.rows.iter().find(|r| r.entry.id == number);
            let entry = self.benchmark.entry(number);
            let beside_wire = entry.is_some_and(|e| e.source != Source::ReportedOnly);
            let against = match x.status {
                AttestedStatus::Satisfied => Some(Verdict::Fail),
                AttestedStatus::NotSatisfied => Some(Verdict::Pass),
                AttestedStatus::NotApplicable => None,
            };
            let conflict = match (beside_wire, against, row.and_then(|r| r.verdicts.as_ref())) {
                (true, Some(v), Some(verdicts)) => {
                    let servers: Vec<usize> = verdicts
                        .iter()
                        .enumerate()
                        .filter(|(_, got)| **got == v)
                        .map(|(i, _)| i)
                        .collect();
                    (!servers.is_empty()).then_some((v, servers))
                }
                _ => None,
            };
            list.push(Attested {
                attestation: x.clone(),
                title: self.benchmark.title_of(number).unwrap_or(""),
                beside_wire,
                conflict,
            });
        }
        list.sort_by_key(|x| crate::benchmark::id_key(x.attestation.recommendation));
        self.provenance.attestations = Some(FileRef {
            id: None,
            file: a.path.display().to_string(),
            sha256: a.sha256.clone(),
        });
        self.attestations = Some(Applied {
            file: a.path.display().to_string(),
            sha256: a.sha256.clone(),
            today,
            list,
            expired: a
                .list
                .iter()
                .filter(|x| x.expired(today))
                .cloned()
                .collect(),
        });
    }

    /// The coverage, when the definition states how many recommendations it has.
    pub fn coverage(&self) -> Option<Coverage> {
        let total = self.benchmark.recommendations?;
        let attested = |n: &str| {
            self.attestations
                .as_ref()
                .is_some_and(|a| a.of(n).is_some())
        };
        let wire = self
            .rows
            .iter()
            .filter(|r| r.entry.source != Source::ReportedOnly)
            .count();
        let reported_rows = self
            .rows
            .iter()
            .filter(|r| r.entry.source == Source::ReportedOnly);
        let reported = reported_rows
            .clone()
            .filter(|r| !attested(&r.entry.id))
            .count();
        let k = self.attestations.as_ref().map_or(0, |a| {
            a.list
                .iter()
                .filter(|x| !x.beside_wire)
                .filter(|x| {
                    // A reported-only check counts when it is in the report.
                    self.benchmark.entry(x.attestation.recommendation).is_none()
                        || self
                            .rows
                            .iter()
                            .any(|r| r.entry.id == x.attestation.recommendation)
                })
                .count()
        });
        Some(Coverage {
            recommendations: total,
            wire,
            reported,
            attested: k,
            unreachable: (total as usize).saturating_sub(wire + reported + k),
        })
    }

    /// The PASS and FAIL results of server `i`, or of every server (`None`).
    pub fn score(&self, server: Option<usize>) -> Score {
        let mut s = Score::default();
        for v in self.rows.iter().filter_map(|r| r.verdicts.as_ref()) {
            let mut add = |x: &Verdict| match x {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail => s.fail += 1,
                _ => {}
            };
            match server {
                Some(i) => v.get(i).iter().for_each(|x| add(x)),
                None => v.iter().for_each(&mut add),
            }
        }
        s
    }
}

/// `coverage: …`, when the definition states its recommendations (every format's words).
pub fn coverage_line(r: &Report) -> Option<String> {
    r.coverage().map(|c| format!("coverage: {}", c.words()))
}

/// `score: 87.5% (7 PASS of 8 PASS or FAIL); [1] 90.0%, [2] 85.0%`: overall, then per
/// server (PASS / (PASS + FAIL), CIS-CAT's score).
pub fn score_line(r: &Report) -> String {
    let per: Vec<String> = (0..r.servers.len())
        .map(|i| format!("[{}] {}", i + 1, r.score(Some(i)).short()))
        .collect();
    format!("score: {}; {}", r.score(None).words(), per.join(", "))
}

/// One line per attestation (in force, then expired) and per recommendation a tailoring
/// names that no attestation completes, unescaped: what the text, Markdown and HTML
/// formats list after the coverage line. Empty without either.
pub fn detail_lines(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = &r.attestations {
        out.push(format!(
            "attestations: {} (sha256 {}, judged on {}): {} in force, {} expired, {} in conflict with the wire",
            a.file,
            a.sha256,
            a.today,
            a.list.len(),
            a.expired.len(),
            a.conflicts()
        ));
        for x in &a.list {
            out.push(format!(
                "{} {}: {}",
                x.attestation.recommendation,
                x.title,
                attested_words(x)
            ));
        }
        for x in &a.expired {
            out.push(x.expiry_notice());
        }
    }
    for n in &r.benchmark.named {
        if r.attestations
            .as_ref()
            .and_then(|a| a.of(n.number))
            .is_none()
        {
            out.push(format!(
                "{} {} ({}): not reachable from outside",
                n.number,
                n.title,
                n.level.as_str()
            ));
        }
    }
    out
}

/// `attested: satisfied by X on DATE (EVIDENCE)`; beside the wire, `the wire decides it;
/// attested …`, or `CONFLICT: the wire says FAIL on [1], [3]; attested satisfied …`.
pub fn attested_words(x: &Attested) -> String {
    let a = &x.attestation;
    let comment = a
        .comment
        .as_deref()
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    match (&x.conflict, x.beside_wire) {
        (Some((v, servers)), _) => format!(
            "CONFLICT: the wire says {} on {}; attested {}{comment}; the verdict stands",
            v.mark(),
            servers
                .iter()
                .map(|i| format!("[{}]", i + 1))
                .collect::<Vec<_>>()
                .join(", "),
            a.words()
        ),
        (None, true) => format!("decided from the wire; attested {}{comment}", a.words()),
        (None, false) => format!("attested: {}{comment}", a.words()),
    }
}

/// The `coverage` object of the JSON report and of the SARIF run properties.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct CoverageJ {
    /// The counts.
    #[serde(flatten)]
    pub counts: Coverage,
    /// The line every format prints (without `coverage: `).
    pub line: String,
}

/// The report's [`CoverageJ`], when the definition states its recommendations.
pub fn coverage_json(r: &Report) -> Option<CoverageJ> {
    r.coverage().map(|c| CoverageJ {
        counts: c,
        line: c.words(),
    })
}

/// One score: PASS and FAIL results and PASS / (PASS + FAIL) in percent, one decimal
/// (`null` without a PASS or a FAIL).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ScoreOne {
    /// PASS results.
    pub pass: usize,
    /// FAIL results.
    pub fail: usize,
    /// PASS / (PASS + FAIL) x 100, rounded to one decimal.
    pub percent: Option<f64>,
}

/// The `score` object of the JSON report.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ScoreJ {
    /// Over every server.
    pub overall: ScoreOne,
    /// Per server, in `servers` order.
    pub servers: Vec<ScoreOne>,
}

/// The report's [`ScoreJ`].
pub fn score_json(r: &Report) -> ScoreJ {
    let one = |s: Score| ScoreOne {
        pass: s.pass,
        fail: s.fail,
        percent: s.percent(),
    };
    ScoreJ {
        overall: one(r.score(None)),
        servers: (0..r.servers.len())
            .map(|i| one(r.score(Some(i))))
            .collect(),
    }
}

/// The `attestations` object of the JSON report, when `--attestations` was given.
pub fn attestations_json(r: &Report) -> Option<serde_json::Value> {
    let a = r.attestations.as_ref()?;
    let one = |x: &Attestation| {
        serde_json::json!({
            "line": x.line,
            "recommendation": x.recommendation,
            "status": x.status.as_str(),
            "by": x.by,
            "date": x.date.to_string(),
            "evidence": x.evidence,
            "expires": x.expires.map(|d| d.to_string()),
            "comment": x.comment,
        })
    };
    Some(serde_json::json!({
        "file": a.file,
        "sha256": a.sha256,
        "date": a.today.to_string(),
        "in_force": a.list.iter().map(|x| {
            let mut v = one(&x.attestation);
            v["title"] = x.title.into();
            v["beside_wire"] = x.beside_wire.into();
            v["conflict"] = x.conflict.as_ref().map_or(serde_json::Value::Null, |(verdict, servers)| {
                serde_json::json!({"verdict": verdict.mark(), "servers": servers.iter().map(|i| i + 1).collect::<Vec<_>>()})
            });
            v
        }).collect::<Vec<_>>(),
        "expired": a.expired.iter().map(one).collect::<Vec<_>>(),
    }))
}

/// The `recommendations` array of the JSON report: the recommendations a tailoring
/// names, each with `attested` when an attestation in force completes it. Empty when
/// none are named.
pub fn named_json(r: &Report) -> Option<Vec<serde_json::Value>> {
    if r.benchmark.named.is_empty() {
        return None;
    }
    let named = r
        .benchmark
        .named
        .iter()
        .map(|n| {
            serde_json::json!({
                "number": n.number,
                "title": n.title,
                "level": n.level.as_str(),
                "source": if r.attestations.as_ref().and_then(|a| a.of(n.number)).is_some() { "attested" } else { "not reachable from outside" },
            })
        })
        .collect();
    Some(named)
}

/// What the text, Markdown and HTML formats print after their header, unescaped: the
/// coverage line (when the definition states its recommendations), the score line, and
/// [`detail_lines`] (each `true`: indented under the line before).
pub fn lines(r: &Report) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = coverage_line(r).into_iter().map(|l| (false, l)).collect();
    out.push((false, score_line(r)));
    for (k, l) in detail_lines(r).into_iter().enumerate() {
        let header = k == 0 && r.attestations.is_some();
        out.push((!header, l));
    }
    out
}
