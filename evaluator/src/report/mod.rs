//! Grading reports: one model, two renderings.
//!
//! [`Report`] is built once from the graded bundles and holds everything a renderer
//! prints, in the order it is printed: servers sorted by endpoint (then bundle path),
//! checks in numeric id order ([`crate::benchmark::id_key`]: `1.4` before `2.1` before
//! `10.1`). Renderers only format: [`text`] is the
//! check-centric report for people (evidence of every non-PASS result, not only FAIL),
//! [`json`] the documented, stable machine schema (`docs/report.md`).
//!
//! A check this build does not grade is carried as "not graded", never as a verdict.
//! The report holds nothing that changes between two runs over the same bundles besides
//! the grader version, commit, target and rustc ([`provenance`]): no "generated at" time,
//! so a report can be diffed.

pub mod coverage;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod oscal;
pub mod provenance;
pub use provenance::GRADER_VERSION;
mod render;
pub mod sarif;
mod server;
pub mod spill;
pub mod summary;
pub mod text;
pub mod xccdf;

pub use render::{extras, render, spill_form, write};
pub use server::{BaselineInfo, BaselineMode, Server, ServerKey};
pub use spill::{Form as SpillForm, Spill, SpillError};

/// How many outcomes of one check [`Report::each_outcome`] reads back from a spill file
/// at a time. The outcomes of a walk are decoded together and dropped together; 64
/// rather than 256 took the text report of 10,010 bundles from 27.1-28.3 MiB at its
/// peak to 26.6-27.8, for the same reads (the file is read a run of places at a time
/// either way).
pub const WALK: usize = 64;

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::benchmark::{Benchmark, CheckResult, Entry};
use crate::exit::ExitStatus;
use crate::verdict::{Outcome, Verdict};
use crate::waivers::{Applied, FailOn, Mark, Stale, Waivers};
use chrono::NaiveDate;

/// Report format chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Check-centric text for a terminal.
    #[default]
    Text,
    /// `mcp-grade-report/1` JSON.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// JUnit XML, for CI test views.
    Junit,
    /// Markdown, for pull-request comments and CI job summaries.
    Markdown,
    /// One self-contained HTML file.
    Html,
    /// NIST OSCAL 1.1.2 assessment results (JSON), for GRC tools.
    Oscal,
    /// An XCCDF 1.2 Benchmark with a TestResult per server (XML), for SCAP tools.
    Xccdf,
}

impl Format {
    /// Formats this build writes, as typed on the command line.
    pub const AVAILABLE: &'static str = "text, json, sarif, junit, markdown, html, oscal, xccdf";

    /// Parse a `--format` value. The planned formats this build does not
    /// write yet get a message saying so, and every error names what is available.
    pub fn parse(s: &str) -> Result<Format, FormatError> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "sarif" => Ok(Format::Sarif),
            "junit" => Ok(Format::Junit),
            "markdown" | "md" => Ok(Format::Markdown),
            "html" => Ok(Format::Html),
            "oscal" => Ok(Format::Oscal),
            "xccdf" => Ok(Format::Xccdf),
            _ => Err(FormatError::Unknown),
        }
    }

    /// Whether the report names each bundle by the SHA-256 of its file (OSCAL, XCCDF):
    /// grading then takes the digest while it reads the file.
    pub fn names_bundle_digests(self) -> bool {
        matches!(self, Format::Oscal | Format::Xccdf)
    }
}

/// A `--format` value this build does not write ([`Format::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A format that is planned but not written by this build yet.
    #[error("{0} reports are not available in this build yet (available: {available})", available = Format::AVAILABLE)]
    NotYet(String),
    /// Not a format name at all.
    #[error("available formats: {}", Format::AVAILABLE)]
    Unknown,
}

/// One check's row: its catalogue entry and, when this build grades it, the verdict on
/// every server (same order as [`Report::servers`]). Its outcomes are read with
/// [`Report::outcomes`]: the report, not the row, knows whether they are held in memory
/// or spilled.
#[derive(Debug, Clone)]
pub struct Row {
    /// The check.
    pub entry: &'static Entry,
    /// The verdict on every server (same order); `None` when this build does not grade
    /// the check. Kept in memory however the outcomes are kept: the matrix, the counts,
    /// the waivers and the exit status need nothing else.
    pub verdicts: Option<Vec<Verdict>>,
    /// What a waiver did to the results it matched: the server's number and the mark, in
    /// server order, only for the results a waiver matched (empty without `--waivers`:
    /// a report over many servers holds no mark for the results no waiver matched).
    pub marks: Vec<(usize, Mark)>,
}

impl Row {
    /// How many servers got `v`.
    pub fn count(&self, v: Verdict) -> usize {
        self.verdicts
            .as_ref()
            .map_or(0, |o| o.iter().filter(|x| **x == v).count())
    }

    /// The verdict of server `i`, when the check is graded.
    pub fn verdict(&self, i: usize) -> Option<Verdict> {
        self.verdicts.as_ref().and_then(|v| v.get(i)).copied()
    }

    /// The waiver mark of server `i`'s result, if a waiver matched it.
    pub fn mark(&self, i: usize) -> Option<&Mark> {
        let k = self.marks.binary_search_by_key(&i, |(n, _)| *n).ok()?;
        self.marks.get(k).map(|(_, m)| m)
    }

    /// True when server `i`'s result is waived by a waiver in force.
    pub fn waived(&self, i: usize) -> bool {
        self.mark(i).is_some_and(|m| m.active)
    }
}

/// A grading report over one or more bundles.
#[derive(Debug, Clone)]
pub struct Report {
    /// The benchmark definition the bundles were graded under.
    pub benchmark: &'static Benchmark,
    /// The benchmark definition and the grader that made the report, as reports name
    /// them.
    pub provenance: provenance::Provenance,
    /// `--level`, if given (1: L1 only; 2: L1 and L2).
    pub level: Option<u8>,
    /// The servers, sorted by endpoint then bundle path: what every renderer needs beside
    /// each result. Their whole summaries are read with [`Report::server`] and
    /// [`Report::each_server`].
    pub servers: Vec<ServerKey>,
    /// Where the servers' summaries and outcomes are: held in memory or spilled.
    store: Store,
    /// Every check in scope, in numeric id order.
    pub rows: Vec<Row>,
    /// The `--policy` file graded with, if any.
    pub policy: Option<PolicyInfo>,
    /// Which verdicts fail the run (`--fail-on`).
    pub fail_on: FailOn,
    /// The `--waivers` file and what it did, if one was given.
    pub waivers: Option<Applied>,
    /// The `--attestations` file and what it did, if one was given.
    pub attestations: Option<crate::attestations::Applied>,
    /// Text format: the whole check-centric report (`--verbose`) instead of the
    /// summary-first one.
    pub verbose: bool,
    /// Text summary and HTML: servers listed by the client configuration their bundle
    /// came from (`--group-by source`, [`Report::source_groups`]).
    pub group_by_source: bool,
    /// Text format: the width the summary is wrapped to.
    pub width: usize,
    /// Text format: the height the summary's first screen (matrix and totals) fits in.
    pub height: usize,
    /// How many threads a renderer may use (`--jobs`; the JSON report renders its
    /// results on them, in order: the bytes do not depend on it).
    pub jobs: usize,
}

/// The policy file a report was graded with.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct PolicyInfo {
    /// The file as given.
    pub file: String,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
}

impl Report {
    /// Build a report from each server and the results [`crate::benchmark::grade_bundle`] gave its
    /// bundle at `level`, every outcome held in memory. A check is graded when every
    /// bundle has an outcome for it.
    pub fn new(
        benchmark: &'static Benchmark,
        level: Option<u8>,
        graded: Vec<(Server, Vec<CheckResult>)>,
    ) -> Report {
        let mut b = Builder::new(benchmark, level, None);
        for (server, results) in graded {
            // Without a spill file nothing is written, so nothing fails.
            let _ = b.server(server, results);
        }
        b.finish()
            .unwrap_or_else(|_| Builder::new(benchmark, level, None).empty())
    }

    /// The path of the spill file the servers' summaries and outcomes went to, if the
    /// report has one (`None` when they are held in memory). The file is removed when
    /// the last clone of the report is dropped.
    pub fn spill_path(&self) -> Option<&std::path::Path> {
        match &self.store {
            Store::Held { .. } => None,
            Store::Spilled { spill, .. } => Some(spill.path()),
        }
    }

    /// True when the report holds its servers' summaries and outcomes in memory; false
    /// when they went to a spill file ([`Report::spill_path`]) and are read back from it
    /// when asked for.
    pub fn holds_outcomes(&self) -> bool {
        matches!(self.store, Store::Held { .. })
    }

    /// The outcome of every row on server `i` (same order as [`Report::rows`]; `None`
    /// where the check is not graded): cloned from memory, or read back from the spill
    /// file.
    pub fn server_outcomes(&self, i: usize) -> Result<Vec<Option<Outcome>>, SpillError> {
        let mut read = self.store.server_outcomes(i)?;
        Ok(self
            .rows
            .iter()
            .enumerate()
            .map(|(k, row)| {
                row.verdicts.as_ref()?;
                read.get_mut(k)?.take()
            })
            .collect())
    }

    /// The outcome of `row` on server `i` alone, and for a spilled report the transcript
    /// excerpts of its records (HTML; `None` when the outcomes are in memory: the server
    /// holds them, [`Server::excerpts`]). A renderer that needs one result at a time
    /// reads them this way, never holding a whole check's.
    #[allow(clippy::type_complexity)]
    pub fn outcome_and_excerpts<'a>(
        &'a self,
        row: &'a Row,
        i: usize,
    ) -> Result<Option<(Cow<'a, Outcome>, Option<spill::Excerpts>)>, SpillError> {
        if row.verdicts.is_none() {
            return Ok(None);
        }
        self.store.outcome(self.index(row), i)
    }

    /// The outcomes of `row` on every server (same order as [`Report::servers`]):
    /// borrowed from memory, or read back from the spill file, all of them at once (a
    /// renderer of a spilled report walks them with [`Report::each_outcome`] instead).
    /// `None` when this build does not grade the check.
    pub fn outcomes<'a>(&'a self, row: &'a Row) -> Result<Option<Cow<'a, [Outcome]>>, SpillError> {
        self.outcomes_range(row, 0..usize::MAX)
    }

    /// The outcomes of `row` on the servers `servers` (a range of server numbers, cut to
    /// those there are), as [`Report::outcomes`] gives them for every server: a renderer
    /// working on part of a check at a time reads only that part.
    pub fn outcomes_range<'a>(
        &'a self,
        row: &'a Row,
        servers: std::ops::Range<usize>,
    ) -> Result<Option<Cow<'a, [Outcome]>>, SpillError> {
        if row.verdicts.is_none() {
            return Ok(None);
        }
        self.store.range(self.index(row), servers).map(Some)
    }

    /// The JSON report's parts of the results of `row` on the servers `servers` (a range
    /// of server numbers, cut to those there are), when the report's outcomes went to a
    /// spill file of [`SpillForm::Json`] (from [`spill_form`]): per server where its part
    /// is (`None`: that server has none), in `buf` or in the check's results read whole
    /// ([`spill::JsonRead::bytes`]), each put back together with the reductions kept once
    /// for the check ([`Report::json_kept`]). `Ok(None)` when the report holds its
    /// outcomes otherwise (in memory, or spilled as outcomes): the JSON renderer then
    /// renders them itself. `Ok(Some(empty))` when the check is not graded.
    pub fn json_results(
        &self,
        row: &Row,
        servers: std::ops::Range<usize>,
        buf: &mut Vec<u8>,
    ) -> Result<Option<spill::JsonRead>, SpillError> {
        match &self.store {
            Store::Spilled { spill, .. } if spill.form().is_json() => {
                if row.verdicts.is_none() {
                    buf.clear();
                    return Ok(Some(spill::JsonRead::default()));
                }
                spill.json_read(self.index(row), servers, buf).map(Some)
            }
            Store::Held { .. } | Store::Spilled { .. } => Ok(None),
        }
    }

    /// The reductions kept once for `row` in the spill file of JSON results, which put
    /// the parts [`Report::json_results`] gives back together ([`spill::KeptRow::pieces`]);
    /// none when the report holds its outcomes otherwise.
    pub fn json_kept(&self, row: &Row) -> spill::KeptRow<'_> {
        match &self.store {
            Store::Spilled { spill, .. } => spill.kept_row(self.index(row)),
            Store::Held { .. } => spill::KeptRow::default(),
        }
    }

    /// Call `f` with the outcome of `row` on each server that `want` accepts (by server
    /// number), in server order, until `f` breaks. Outcomes are borrowed from memory or
    /// read back from the spill file [`WALK`] wanted servers at a time, and only the
    /// wanted ones: a renderer walking a check holds at most that many of its outcomes,
    /// whatever the number of servers. Nothing is called when the check is not graded.
    pub fn each_outcome(
        &self,
        row: &Row,
        want: impl Fn(usize) -> bool,
        f: impl FnMut(usize, &Outcome) -> std::io::Result<ControlFlow<()>>,
    ) -> std::io::Result<()> {
        if row.verdicts.is_none() {
            return Ok(());
        }
        self.store
            .walk(self.index(row), self.servers.len(), want, f)
    }

    /// The number of `row` among [`Report::rows`] (`usize::MAX` when it is not one of
    /// them: a spill file has no such row).
    fn index(&self, row: &Row) -> usize {
        self.rows
            .iter()
            .position(|r| r.entry.id == row.entry.id)
            .unwrap_or(usize::MAX)
    }

    /// Judge `w` on `today`: mark every result a waiver matches (the first matching
    /// waiver in file order decides), and list the waivers in force that waived nothing.
    /// Call after setting [`Report::fail_on`]: a waiver waives what would fail the run.
    pub fn apply_waivers(&mut self, w: &Waivers, today: NaiveDate) {
        let mut used = vec![false; w.list.len()];
        // The verdicts each waiver matched (a set: a waiver may match a whole fleet).
        let mut matched_any = vec![std::collections::BTreeSet::<&'static str>::new(); w.list.len()];
        let mut waived = 0;
        let fail_on = self.fail_on;
        for row in &mut self.rows {
            let Some(verdicts) = &row.verdicts else {
                continue;
            };
            row.marks = Vec::new();
            for (i, &verdict) in verdicts.iter().enumerate() {
                let endpoint = &self.servers[i].endpoint;
                let Some((k, waiver)) = w
                    .list
                    .iter()
                    .enumerate()
                    .find(|(_, x)| x.matches(row.entry.id.as_str(), endpoint))
                else {
                    continue;
                };
                matched_any[k].insert(verdict.mark());
                if !fail_on.fails(verdict) {
                    continue;
                }
                let active = !waiver.expired(today);
                if active {
                    used[k] = true;
                    waived += 1;
                }
                row.marks.push((
                    i,
                    Mark {
                        active,
                        reason: waiver.reason.clone(),
                        expires: waiver.expires,
                        line: waiver.line,
                    },
                ));
            }
        }
        let stale = w
            .list
            .iter()
            .enumerate()
            .filter(|(k, x)| !used[*k] && !x.expired(today))
            .map(|(k, x)| {
                let seen = &matched_any[k];
                let why = if seen.is_empty() {
                    "matches no graded result".to_string()
                } else {
                    let v: Vec<&str> = seen.iter().copied().collect();
                    format!(
                        "matches only results that do not fail the run under --fail-on {} ({})",
                        fail_on.as_str(),
                        v.join(", ")
                    )
                };
                Stale {
                    waiver: x.clone(),
                    why,
                }
            })
            .collect();
        self.waivers = Some(Applied {
            file: w.path.display().to_string(),
            sha256: w.sha256.clone(),
            today,
            waived,
            stale,
            expired: w
                .list
                .iter()
                .filter(|x| x.expired(today))
                .cloned()
                .collect(),
        });
    }

    /// Checks in scope that this build grades.
    pub fn graded(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdicts.is_some())
    }

    /// Checks in scope that this build does not grade.
    pub fn not_graded(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdicts.is_none())
    }

    /// How many results got `v`, over every check and server.
    pub fn total(&self, v: Verdict) -> usize {
        self.rows.iter().map(|r| r.count(v)).sum()
    }

    /// How many results got `v` and are not waived.
    pub fn unwaived(&self, v: Verdict) -> usize {
        self.rows
            .iter()
            .map(|r| {
                r.verdicts.as_ref().map_or(0, |o| {
                    o.iter()
                        .enumerate()
                        .filter(|(i, x)| **x == v && !r.waived(*i))
                        .count()
                })
            })
            .sum()
    }

    /// The exit status the verdicts call for, counting only results no waiver in force
    /// covers: [`ExitStatus::Fail`] on a FAIL; else, under `--fail-on error` (the
    /// default) or `unknown`, [`ExitStatus::Error`] on an ERROR; else, under `--fail-on
    /// unknown`, [`ExitStatus::Undecided`] on an UNKNOWN; else [`ExitStatus::Pass`].
    pub fn status(&self) -> ExitStatus {
        if self.unwaived(Verdict::Fail) > 0 {
            ExitStatus::Fail
        } else if self.fail_on.fails(Verdict::Error) && self.unwaived(Verdict::Error) > 0 {
            ExitStatus::Error
        } else if self.fail_on.fails(Verdict::Unknown) && self.unwaived(Verdict::Unknown) > 0 {
            ExitStatus::Undecided
        } else {
            ExitStatus::Pass
        }
    }

    /// The label of server `i` in check rows: `endpoint [revision]`, plus the bundle
    /// path when another graded bundle has the same endpoint (a neighbour: the servers
    /// are sorted by endpoint). Empty when there is no server `i`.
    pub fn label(&self, i: usize) -> String {
        let Some(s) = self.servers.get(i) else {
            return String::new();
        };
        let same = |j: Option<usize>| {
            j.and_then(|j| self.servers.get(j))
                .is_some_and(|o| o.endpoint == s.endpoint)
        };
        if same(i.checked_sub(1)) || same(i.checked_add(1)) {
            format!("{} [{}] ({})", s.endpoint, s.revision_label(), s.bundle)
        } else {
            format!("{} [{}]", s.endpoint, s.revision_label())
        }
    }

    /// The summary of server `i`: borrowed from the report, or read back from the spill
    /// file (a renderer going through every server uses [`Report::each_server`]).
    pub fn server(&self, i: usize) -> Result<Cow<'_, Server>, SpillError> {
        self.store.server(i, self.servers.len())
    }

    /// The servers by where their targets came from, in order of first appearance: each
    /// client configuration file (`claude-desktop /home/u/.config/Claude/…`) with the
    /// indices of its servers, then `None` with the servers given as targets.
    pub fn source_groups(&self) -> Vec<(Option<&str>, Vec<usize>)> {
        let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
        for (i, k) in self.servers.iter().enumerate() {
            let label = k.source.as_deref();
            match groups.iter_mut().find(|(l, _)| *l == label) {
                Some((_, ix)) => ix.push(i),
                None => groups.push((label, vec![i])),
            }
        }
        groups.sort_by_key(|(l, _)| l.is_none());
        groups
    }

    /// Call `f` with the summary of each server, in server order, until `f` breaks:
    /// borrowed from the report, or read back from the spill file [`WALK`] servers at a
    /// time, so that a renderer going through the servers of a large report holds at
    /// most that many summaries.
    pub fn each_server(
        &self,
        f: impl FnMut(usize, &Server) -> std::io::Result<ControlFlow<()>>,
    ) -> std::io::Result<()> {
        self.store.each_server(self.servers.len(), f)
    }
}

/// Where a report's server summaries and outcomes are, the one place that knows whether
/// they are held in memory or spilled: the [`Report`] accessors ask it, knowing only
/// which checks are graded and which row is which.
#[derive(Debug, Clone)]
enum Store {
    /// In memory: the servers' summaries, in the report's server order, and by row
    /// number the outcome of each graded row on every server (in the same order; `None`
    /// where the check is not graded).
    Held {
        servers: Vec<Server>,
        outcomes: Vec<Option<Vec<Outcome>>>,
    },
    /// In the spill file: the summaries and the outcomes, read back when asked for.
    Spilled {
        spill: Arc<Spill>,
        /// Baselines set after the servers were spilled (`--update-baseline`), by server
        /// number: they replace the baseline read back from the spill file.
        baselines: std::collections::BTreeMap<usize, BaselineInfo>,
    },
}

impl Store {
    /// The outcomes held in memory of row number `k` (`None` when it is not graded, or
    /// there is no such row).
    fn held(outcomes: &[Option<Vec<Outcome>>], k: usize) -> Option<&[Outcome]> {
        outcomes.get(k)?.as_deref()
    }

    /// The outcome of row number `k` on server `i`, with the excerpts of its records
    /// when read back from the spill file.
    #[allow(clippy::type_complexity)]
    fn outcome(
        &self,
        k: usize,
        i: usize,
    ) -> Result<Option<(Cow<'_, Outcome>, Option<spill::Excerpts>)>, SpillError> {
        match self {
            Store::Held { outcomes, .. } => Ok(Store::held(outcomes, k)
                .and_then(|o| o.get(i))
                .map(|o| (Cow::Borrowed(o), None))),
            Store::Spilled { spill, .. } => {
                Ok(spill.outcome(i, k)?.map(|(o, e)| (Cow::Owned(o), Some(e))))
            }
        }
    }

    /// The outcomes of row number `k` on the servers `servers`, cut to those there are.
    fn range(
        &self,
        k: usize,
        servers: std::ops::Range<usize>,
    ) -> Result<Cow<'_, [Outcome]>, SpillError> {
        match self {
            Store::Held { outcomes, .. } => Ok(match Store::held(outcomes, k) {
                Some(o) => {
                    let end = servers.end.min(o.len());
                    Cow::Borrowed(&o[servers.start.min(end)..end])
                }
                None => Cow::Owned(Vec::new()),
            }),
            Store::Spilled { spill, .. } => Ok(Cow::Owned(
                spill.row_range(k, servers)?.into_iter().flatten().collect(),
            )),
        }
    }

    /// Call `f` with the outcome of row number `k` on each of the `n` servers that
    /// `want` accepts, in order, until `f` breaks: read back [`WALK`] wanted servers at a
    /// time when spilled.
    fn walk(
        &self,
        k: usize,
        n: usize,
        want: impl Fn(usize) -> bool,
        mut f: impl FnMut(usize, &Outcome) -> std::io::Result<ControlFlow<()>>,
    ) -> std::io::Result<()> {
        match self {
            Store::Held { outcomes, .. } => {
                for (i, o) in Store::held(outcomes, k)
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .filter(|(i, _)| want(*i))
                {
                    if f(i, o)?.is_break() {
                        break;
                    }
                }
            }
            Store::Spilled { spill, .. } => {
                let mut wanted = (0..n).filter(|i| want(*i)).peekable();
                let mut part = Vec::with_capacity(WALK);
                while wanted.peek().is_some() {
                    part.clear();
                    part.extend(wanted.by_ref().take(WALK));
                    let read = spill.outcomes_at(k, &part).map_err(std::io::Error::other)?;
                    for (&i, o) in part.iter().zip(read) {
                        if let Some(o) = o {
                            if f(i, &o)?.is_break() {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The outcome of every row on server `i` there is, by row number.
    fn server_outcomes(&self, i: usize) -> Result<Vec<Option<Outcome>>, SpillError> {
        match self {
            Store::Held { outcomes, .. } => Ok(outcomes
                .iter()
                .map(|o| o.as_ref().and_then(|o| o.get(i)).cloned())
                .collect()),
            Store::Spilled { spill, .. } => spill.server_outcomes(i),
        }
    }

    /// The summary of server `i` of `n`.
    fn server(&self, i: usize, n: usize) -> Result<Cow<'_, Server>, SpillError> {
        let missing = |path: &std::path::Path| SpillError {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("the report has no server {i}")),
        };
        match self {
            Store::Held { servers, .. } => servers
                .get(i)
                .map(Cow::Borrowed)
                .ok_or_else(|| missing(std::path::Path::new(""))),
            Store::Spilled { spill, baselines } => {
                let read = if i < n {
                    spill.summaries(i..i + 1)?.pop()
                } else {
                    None
                };
                let mut s = read.ok_or_else(|| missing(spill.path()))?;
                restore_baseline(baselines, i, &mut s);
                Ok(Cow::Owned(s))
            }
        }
    }

    /// Call `f` with the summary of each of the `n` servers, in order, until `f` breaks:
    /// read back [`WALK`] servers at a time when spilled.
    fn each_server(
        &self,
        n: usize,
        mut f: impl FnMut(usize, &Server) -> std::io::Result<ControlFlow<()>>,
    ) -> std::io::Result<()> {
        match self {
            Store::Held { servers, .. } => {
                for (i, s) in servers.iter().enumerate() {
                    if f(i, s)?.is_break() {
                        break;
                    }
                }
            }
            Store::Spilled { spill, baselines } => {
                let mut start = 0;
                while start < n {
                    let end = (start + WALK).min(n);
                    let part = spill.summaries(start..end).map_err(std::io::Error::other)?;
                    for (i, mut s) in (start..end).zip(part) {
                        restore_baseline(baselines, i, &mut s);
                        if f(i, &s)?.is_break() {
                            return Ok(());
                        }
                    }
                    start = end;
                }
            }
        }
        Ok(())
    }
}

/// Put back the baseline set after server `i` was spilled ([`Builder::set_baseline`])
/// into its summary `s`, read back from the spill file.
fn restore_baseline(
    baselines: &std::collections::BTreeMap<usize, BaselineInfo>,
    i: usize,
    s: &mut Server,
) {
    if let Some(b) = baselines.get(&i) {
        s.baseline = Some(b.clone());
    }
}

/// Put `v` in the order `order` (`order[k]` is the index of the element that goes to
/// `k`; a permutation of `0..v.len()`) in place, by following each cycle: the servers
/// of a large report are not held twice while they are sorted.
fn permute<T>(v: &mut [T], order: &[usize]) {
    let mut placed = vec![false; v.len()];
    for start in 0..v.len() {
        if placed[start] {
            continue;
        }
        // Position `k` takes the element from `order[k]`; walk the cycle with swaps.
        let mut k = start;
        loop {
            placed[k] = true;
            let from = order[k];
            if from == start || placed[from] {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

/// Makes a [`Report`] from servers given one at a time, in any order: the sink a grading
/// loop (or a parallel driver delivering results in input order) feeds. Each server's
/// summary and outcomes go to the [`Spill`] file when one is given (only its
/// [`ServerKey`] and one verdict per check stay in memory), else into memory. [`Builder::finish`] sorts
/// the servers by endpoint, then bundle path, as every report lists them.
#[derive(Debug)]
pub struct Builder {
    benchmark: &'static Benchmark,
    level: Option<u8>,
    /// The checks in scope, in numeric id order: the report's rows.
    entries: Vec<&'static Entry>,
    /// What every renderer needs of each server, in the order given.
    keys: Vec<ServerKey>,
    /// The servers' summaries, in the order given, when there is no spill file (else
    /// they are in it).
    held: Vec<Server>,
    /// Baselines set after grading ([`Builder::set_baseline`]) of spilled servers, by
    /// number in the order given.
    baselines: std::collections::BTreeMap<usize, BaselineInfo>,
    /// Per server, per row: its verdict, if it has an outcome, in
    /// one vector for every server (row `k` of server `n` at `n * entries.len() + k`).
    verdicts: Vec<Option<Verdict>>,
    /// Per server, per row: the outcome, when there is no spill file.
    outcomes: Vec<Vec<Option<Outcome>>>,
    spill: Option<Spill>,
}

/// Puts a graded server in the shape a [`Builder`] adds, on any thread
/// ([`Builder::preparer`]).
#[derive(Debug, Clone)]
pub struct Preparer {
    entries: Vec<&'static Entry>,
    /// The form of the spill file, if the report has one.
    spill: Option<SpillForm>,
}

/// A graded server ready for [`Builder::add`].
#[derive(Debug)]
pub struct Prepared {
    key: ServerKey,
    verdicts: Vec<Option<Verdict>>,
    outcomes: PreparedOutcomes,
}

/// A prepared server's summary and outcomes: held (no spill file), or encoded for the
/// spill file.
#[derive(Debug)]
enum PreparedOutcomes {
    Held(Box<Server>, Vec<Option<Outcome>>),
    Encoded(std::io::Result<spill::Encoded>),
}

impl Preparer {
    /// The outcomes of `results` in the report's row order (each moved, not copied),
    /// their verdicts, and, when the report spills, their encoding with the server's
    /// excerpts (which then leave the server). What a report does not print is not
    /// trimmed here: a grading run's results come from
    /// [`crate::benchmark::runner::grade_bundle_for_report`], which leaves the legs' notes
    /// empty, and other results are held as given.
    pub fn prepare(&self, server: Server, mut results: Vec<CheckResult>) -> Prepared {
        let outcomes: Vec<Option<Outcome>> = self
            .entries
            .iter()
            .map(|entry| {
                // The results of a grading run hold the same entries: found by address
                // first, by id only when none is the same.
                let k = results
                    .iter()
                    .position(|r| std::ptr::eq(r.entry, *entry))
                    .or_else(|| results.iter().position(|r| r.entry.id == entry.id));
                k.and_then(|k| results[k].outcome.take())
            })
            .collect();
        drop(results);
        let verdicts = outcomes
            .iter()
            .map(|o| o.as_ref().map(|o| o.verdict))
            .collect();
        let key = ServerKey::of(&server);
        let outcomes = match self.spill {
            // The HTML report's excerpts go with the outcomes they belong to.
            Some(form) => PreparedOutcomes::Encoded(spill::encode_server(
                form,
                &server,
                &outcomes,
                &server.excerpts,
            )),
            None => PreparedOutcomes::Held(Box::new(server), outcomes),
        };
        Prepared {
            key,
            verdicts,
            outcomes,
        }
    }
}

impl Builder {
    /// Begin a report over the checks of `benchmark` in scope at `level`, its outcomes
    /// written to `spill` if given.
    pub fn new(benchmark: &'static Benchmark, level: Option<u8>, spill: Option<Spill>) -> Builder {
        let mut entries: Vec<&'static Entry> = benchmark
            .checks
            .iter()
            .filter(|e| level.is_none_or(|l| e.level.number() <= l))
            .collect();
        entries.sort_by_key(|e| e.id.key());
        Builder {
            benchmark,
            level,
            entries,
            keys: Vec::new(),
            held: Vec::new(),
            baselines: Default::default(),
            verdicts: Vec::new(),
            outcomes: Vec::new(),
            spill,
        }
    }

    /// Make room for `n` more servers at once (a grading run knows how many inputs it
    /// has): the servers' vectors are then never grown by doubling and copying.
    pub fn reserve(&mut self, n: usize) {
        self.keys.reserve_exact(n);
        self.verdicts
            .reserve_exact(n.saturating_mul(self.entries.len()));
        match &mut self.spill {
            None => {
                self.held.reserve_exact(n);
                self.outcomes.reserve_exact(n);
            }
            Some(spill) => spill.reserve(n, self.entries.len()),
        }
    }

    /// Add one graded server; returns its number among those added (for
    /// [`Builder::set_baseline`]). Each outcome is moved, not copied.
    pub fn server(
        &mut self,
        server: Server,
        results: Vec<CheckResult>,
    ) -> Result<usize, SpillError> {
        let prepared = self.preparer().prepare(server, results);
        self.add(prepared)
    }

    /// What puts a graded server in the shape this builder adds ([`Preparer::prepare`]),
    /// for a grading worker: the outcomes in row order, and encoded for the spill file
    /// when there is one, so that the thread that builds the report only appends.
    pub fn preparer(&self) -> Preparer {
        Preparer {
            entries: self.entries.clone(),
            spill: self.spill.as_ref().map(Spill::form),
        }
    }

    /// Add one server prepared by [`Builder::preparer`]'s [`Preparer::prepare`]; returns
    /// its number among those added. The same report as [`Builder::server`].
    pub fn add(&mut self, prepared: Prepared) -> Result<usize, SpillError> {
        let Prepared {
            key,
            verdicts,
            outcomes,
        } = prepared;
        match (&mut self.spill, outcomes) {
            (Some(spill), PreparedOutcomes::Encoded(e)) => {
                spill.server_encoded(e)?;
            }
            (Some(spill), PreparedOutcomes::Held(server, o)) => {
                spill.server(&server, o, &server.excerpts)?;
            }
            (None, PreparedOutcomes::Held(server, o)) => {
                self.held.push(*server);
                self.outcomes.push(o);
            }
            (None, PreparedOutcomes::Encoded(_)) => {
                return Err(SpillError {
                    path: std::path::PathBuf::new(),
                    source: std::io::Error::other(
                        "a server prepared for a spill file reached a report without one",
                    ),
                })
            }
        }
        // One per row, whoever prepared them.
        let rows = self.entries.len();
        self.verdicts.extend(
            verdicts
                .into_iter()
                .chain(std::iter::repeat(None))
                .take(rows),
        );
        self.keys.push(key);
        Ok(self.keys.len() - 1)
    }

    /// Set the baseline of server `n` as added (what `--update-baseline` stored, known
    /// only after every server is graded). Nothing happens when there is no server `n`.
    pub fn set_baseline(&mut self, n: usize, baseline: BaselineInfo) {
        if n >= self.keys.len() {
            return;
        }
        match self.held.get_mut(n) {
            Some(s) => s.baseline = Some(baseline),
            None => {
                self.baselines.insert(n, baseline);
            }
        }
    }

    /// A report with no servers (every row not graded).
    fn empty(self) -> Report {
        Builder {
            keys: Vec::new(),
            held: Vec::new(),
            baselines: Default::default(),
            verdicts: Vec::new(),
            outcomes: Vec::new(),
            spill: None,
            ..self
        }
        .finish()
        .unwrap_or_else(|_| unreachable!("no spill file to fail"))
    }

    /// The report: servers sorted by endpoint then bundle path, a row per check in scope.
    pub fn finish(self) -> Result<Report, SpillError> {
        let Builder {
            benchmark,
            level,
            entries,
            mut keys,
            mut held,
            baselines,
            mut verdicts,
            mut outcomes,
            mut spill,
        } = self;
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| {
            (&keys[a].endpoint, &keys[a].bundle).cmp(&(&keys[b].endpoint, &keys[b].bundle))
        });
        if let Some(s) = &mut spill {
            s.seal()?;
            s.reorder(&order);
        }
        let any = !keys.is_empty();
        let width = entries.len();
        // By row number, the outcomes held in memory (none when spilled).
        let mut held_outcomes = Vec::with_capacity(if spill.is_none() { width } else { 0 });
        let rows = entries
            .into_iter()
            .enumerate()
            .map(|(k, entry)| {
                let v: Option<Vec<Verdict>> =
                    order.iter().map(|&n| verdicts[n * width + k]).collect();
                let v = v.filter(|_| any);
                if spill.is_none() {
                    held_outcomes.push(if v.is_some() {
                        order
                            .iter()
                            .map(|&n| outcomes[n][k].take())
                            .collect::<Option<Vec<Outcome>>>()
                    } else {
                        None
                    });
                }
                Row {
                    entry,
                    verdicts: v,
                    marks: Vec::new(),
                }
            })
            .collect();
        verdicts.clear();
        outcomes.clear();
        permute(&mut keys, &order);
        let store = match spill {
            None => {
                if held.len() == keys.len() {
                    permute(&mut held, &order);
                }
                Store::Held {
                    servers: held,
                    outcomes: held_outcomes,
                }
            }
            Some(spill) => {
                // Where each server went, for the baselines kept by the number it was
                // added as.
                let baselines = if baselines.is_empty() {
                    baselines
                } else {
                    let mut now = vec![0; order.len()];
                    for (k, &n) in order.iter().enumerate() {
                        now[n] = k;
                    }
                    baselines.into_iter().map(|(n, b)| (now[n], b)).collect()
                };
                Store::Spilled {
                    spill: Arc::new(spill),
                    baselines,
                }
            }
        };
        Ok(Report {
            benchmark,
            provenance: provenance::Provenance::of(benchmark),
            level,
            servers: keys,
            store,
            rows,
            policy: None,
            fail_on: FailOn::default(),
            waivers: None,
            attestations: None,
            verbose: false,
            group_by_source: false,
            width: 80,
            height: 24,
            jobs: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::Benchmark;
    use crate::fixture;

    fn server(endpoint: &str, bundle: &str) -> Server {
        let ev = fixture::evidence(
            Some(fixture::session(
                Some("2025-11-25"),
                serde_json::json!({}),
                None,
            )),
            Vec::new(),
        );
        let mut s = Server::new(&ev, None);
        s.endpoint = endpoint.into();
        s.bundle = bundle.into();
        s
    }

    /// Every check of the built-in definition, those graded by the rules in `v` with
    /// the verdict given.
    fn results(v: &[(&str, Verdict)]) -> Vec<CheckResult> {
        crate::benchmark::Benchmark::builtin()
            .checks
            .iter()
            .map(|e| CheckResult {
                entry: e,
                outcome: v
                    .iter()
                    .find(|(rule, _)| e.rule == *rule)
                    .map(|(_, v)| Outcome::single(*v, "why", "")),
            })
            .collect()
    }

    #[test]
    fn format_parsing_names_what_is_available() {
        assert_eq!(Format::parse("json"), Ok(Format::Json));
        assert_eq!(Format::parse("SARIF"), Ok(Format::Sarif));
        assert_eq!(Format::parse("Json"), Ok(Format::Json));
        assert_eq!(Format::parse("JUnit"), Ok(Format::Junit));
        assert_eq!(Format::parse("HTML"), Ok(Format::Html));
        assert_eq!(Format::parse("md"), Ok(Format::Markdown));
        let e = Format::parse("xml").expect_err("unknown");
        assert_eq!(e, FormatError::Unknown);
        assert_eq!(
            e.to_string(),
            "available formats: text, json, sarif, junit, markdown, html, oscal, xccdf"
        );
    }

    #[test]
    fn status_follows_the_verdicts() {
        let r = |v: &[(&str, Verdict)]| {
            Report::new(
                crate::benchmark::Benchmark::builtin(),
                None,
                vec![(server("e", "b"), results(v))],
            )
        };
        assert_eq!(r(&[]).status(), ExitStatus::Pass);
        assert_eq!(
            r(&[
                ("revisions-pinned", Verdict::Pass),
                ("stdio-preferred", Verdict::NotApplicable)
            ])
            .status(),
            ExitStatus::Pass
        );
        assert_eq!(
            r(&[
                ("revisions-pinned", Verdict::Unknown),
                ("tls-required", Verdict::NoRev)
            ])
            .status(),
            ExitStatus::Pass
        );
        assert_eq!(
            r(&[("revisions-pinned", Verdict::Error)]).status(),
            ExitStatus::Error
        );
        assert_eq!(
            r(&[
                ("revisions-pinned", Verdict::Error),
                ("size-limits", Verdict::Fail)
            ])
            .status(),
            ExitStatus::Fail
        );
    }

    #[test]
    fn rows_are_numeric_and_servers_sorted() {
        let rep = Report::new(
            Benchmark::builtin(),
            Some(1),
            vec![
                (
                    server("http://b/mcp", "b"),
                    results(&[("cache-freshness", Verdict::Fail)]),
                ),
                (
                    server("http://a/mcp", "a"),
                    results(&[("cache-freshness", Verdict::Pass)]),
                ),
            ],
        );
        let keys: Vec<Vec<u32>> = rep.rows.iter().map(|r| r.entry.id.key()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "numeric order");
        assert!(
            keys.iter().any(|k| k[0] >= 10) && keys.iter().any(|k| k[0] < 2),
            "string order would differ"
        );
        assert!(rep.rows.iter().all(|r| r.entry.level.number() == 1));
        assert_eq!(rep.servers[0].endpoint, "http://a/mcp");
        let row = rep
            .rows
            .iter()
            .find(|r| r.entry.rule == "cache-freshness")
            .expect("cache-freshness");
        let o = rep.outcomes(row).expect("in memory").expect("graded");
        assert_eq!((o[0].verdict, o[1].verdict), (Verdict::Pass, Verdict::Fail));
        let ungraded = rep
            .rows
            .iter()
            .find(|r| r.entry.rule == "revisions-pinned")
            .expect("revisions-pinned");
        assert!(rep.outcomes(ungraded).expect("in memory").is_none());
        assert_eq!(rep.graded().count(), 1);
        let number = row.entry.id.as_str();
        assert_eq!(
            Benchmark::builtin().entry(number).map(|e| e.rule),
            Some("cache-freshness")
        );
    }

    #[test]
    fn labels_disambiguate_shared_endpoints() {
        let rep = Report::new(
            crate::benchmark::Benchmark::builtin(),
            None,
            vec![
                (server("http://a/mcp", "x.mcpev"), results(&[])),
                (server("http://a/mcp", "y.mcpev"), results(&[])),
            ],
        );
        assert_eq!(rep.label(0), "http://a/mcp [2025-11-25] (x.mcpev)");
        let one = Report::new(
            crate::benchmark::Benchmark::builtin(),
            None,
            vec![(server("http://a/mcp", "x.mcpev"), results(&[]))],
        );
        assert_eq!(one.label(0), "http://a/mcp [2025-11-25]");
    }

    /// `each_outcome` gives the wanted servers' outcomes of a check in server order, the
    /// same from a spill file as from memory, across more than one read of [`WALK`], and
    /// stops when told; an ungraded check calls nothing.
    #[test]
    fn each_outcome_walks_the_wanted_servers_in_order_in_memory_and_spilled() {
        let bm = Benchmark::builtin();
        let n = WALK * 2 + 7;
        let verdict = |i: usize| match i % 3 {
            0 => Verdict::Fail,
            1 => Verdict::Pass,
            _ => Verdict::Unknown,
        };
        let base = server("http://s/mcp", "b.mcpev");
        let build = |spill: Option<Spill>| {
            let mut b = Builder::new(bm, None, spill);
            for i in 0..n {
                let mut r = results(&[
                    ("cache-freshness", verdict(i)),
                    ("stdio-preferred", Verdict::Pass),
                ]);
                for c in &mut r {
                    if let Some(o) = &mut c.outcome {
                        o.evidence = format!("server {i:04}");
                    }
                }
                let s = Server {
                    endpoint: format!("http://s{i:04}/mcp"),
                    ..base.clone()
                };
                b.server(s, r).expect("add");
            }
            b.finish().expect("finish")
        };
        let memory = build(None);
        let spilled = build(Some(
            Spill::create(None, SpillForm::Outcomes).expect("spill"),
        ));
        assert!(memory.holds_outcomes() && memory.spill_path().is_none());
        assert!(!spilled.holds_outcomes() && spilled.spill_path().is_some());
        let row = |r: &Report, rule: &str| {
            r.rows
                .iter()
                .position(|x| x.entry.rule == rule)
                .expect("row")
        };
        for r in [&memory, &spilled] {
            let k = row(r, "cache-freshness");
            let mut seen = Vec::new();
            r.each_outcome(
                &r.rows[k],
                |i| r.rows[k].verdict(i) != Some(Verdict::Pass),
                |i, o| {
                    assert_ne!(o.verdict, Verdict::Pass);
                    seen.push((i, o.evidence.clone()));
                    Ok(ControlFlow::Continue(()))
                },
            )
            .expect("walk");
            let want: Vec<(usize, String)> = (0..n)
                .filter(|i| verdict(*i) != Verdict::Pass)
                .map(|i| (i, format!("server {i:04}")))
                .collect();
            assert_eq!(seen, want);
            // Stopping after the first wanted one past a read's end.
            let mut calls = 0;
            r.each_outcome(
                &r.rows[k],
                |i| i > WALK,
                |i, _| {
                    calls += 1;
                    assert_eq!(i, WALK + 1);
                    Ok(ControlFlow::Break(()))
                },
            )
            .expect("walk");
            assert_eq!(calls, 1);
            // A check without outcomes on these servers is not graded: nothing is called.
            let ungraded = row(r, "revisions-pinned");
            assert!(r.rows[ungraded].verdicts.is_none());
            r.each_outcome(&r.rows[ungraded], |_| true, |_, _| panic!("called"))
                .expect("walk");
        }
        // And every server's outcomes read back whole match those held in memory.
        for i in [0, 1, WALK, n - 1] {
            assert_eq!(
                spilled.server_outcomes(i).expect("read"),
                memory.server_outcomes(i).expect("read")
            );
        }
    }

    /// `permute` puts every element where the order says, for every permutation of a
    /// few elements and for long shuffled ones (the same as collecting in that order).
    #[test]
    fn permute_in_place_is_collecting_in_order() {
        fn check(order: &[usize]) {
            let want: Vec<usize> = order.iter().map(|&n| n * 10).collect();
            let mut v: Vec<usize> = (0..order.len()).map(|n| n * 10).collect();
            permute(&mut v, order);
            assert_eq!(v, want, "{order:?}");
        }
        // Every permutation of 0..5 (Heap's algorithm would do; this counts in base 5).
        for code in 0..5usize.pow(5) {
            let digits: Vec<usize> = (0..5).map(|i| code / 5usize.pow(i) % 5).collect();
            let mut seen = [false; 5];
            if digits
                .iter()
                .all(|&d| !std::mem::replace(&mut seen[d], true))
            {
                check(&digits);
            }
        }
        let mut seed: u64 = 7;
        for n in [0, 1, 2, 100, 1_000] {
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                order.swap(i, (seed >> 33) as usize % (i + 1));
            }
            check(&order);
        }
    }
}
