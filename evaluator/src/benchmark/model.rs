//! The model of a benchmark definition once read and checked: its checks (numbers,
//! levels, rules and parameters, transports, eras), what no probe reaches, where it came
//! from and the tailoring applied.

use serde::Serialize;

use crate::check::{Check, Params};

/// A check's number in one benchmark revision (`3.3.1`): data, not an id of the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Number(pub &'static str);

impl Number {
    /// `3.3.1`.
    pub fn as_str(&self) -> &'static str {
        self.0
    }

    /// Numeric order (`1.4` < `2.1` < `10.1`), never string order.
    pub fn key(&self) -> Vec<u32> {
        id_key(self.0)
    }

    /// The section (`3` for `3.3.1`).
    pub fn section(&self) -> &'static str {
        self.0.split('.').next().unwrap_or(self.0)
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::ops::Deref for Number {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl PartialEq<str> for Number {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Number {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Numeric ordering of check numbers (`1.4` < `2.1` < `10.1`), never string order.
pub fn id_key(id: &str) -> Vec<u32> {
    id.split('.')
        .map(|p| p.parse().unwrap_or(u32::MAX))
        .collect()
}

/// Profile level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// Level 1.
    L1,
    /// Level 2.
    L2,
}

impl Level {
    /// `L1` / `L2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::L1 => "L1",
            Level::L2 => "L2",
        }
    }

    /// 1 or 2.
    pub fn number(self) -> u8 {
        match self {
            Level::L1 => 1,
            Level::L2 => 2,
        }
    }
}

/// Where a check's verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Decided from what the server answered on the wire.
    Wire,
    /// Part of the recommendation is probed on the wire, part is operator-side.
    InPart,
    /// Wholly operator-side: always N/A, with observations recorded.
    ReportedOnly,
}

impl Source {
    /// Words used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Wire => "wire",
            Source::InPart => "in part",
            Source::ReportedOnly => "reported only",
        }
    }

    /// As a definition spells it.
    pub fn key(self) -> &'static str {
        match self {
            Source::Wire => "wire",
            Source::InPart => "in-part",
            Source::ReportedOnly => "reported-only",
        }
    }
}

/// The benchmark's own assessment status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    /// Automated in the benchmark.
    Automated,
    /// Manual in the benchmark.
    Manual,
}

impl Status {
    /// `automated` / `manual`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Automated => "automated",
            Status::Manual => "manual",
        }
    }
}

/// The transports a check is graded on; on any other the check is N/A naming the
/// transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transports {
    /// Streamable HTTP.
    pub streamable_http: bool,
    /// Legacy HTTP+SSE (2024-11-05).
    pub http_sse: bool,
    /// A launched local process over stdin/stdout.
    pub stdio: bool,
}

impl Transports {
    /// Whether the transport labelled `label` (`streamable-http`, `http+sse`, `stdio`) is
    /// one of them.
    pub fn includes(&self, label: &str) -> bool {
        match label {
            "streamable-http" => self.streamable_http,
            "http+sse" => self.http_sse,
            "stdio" => self.stdio,
            _ => true,
        }
    }

    /// The labels, in definition spelling.
    pub fn labels(&self) -> Vec<&'static str> {
        [
            (self.streamable_http, "streamable-http"),
            (self.http_sse, "http+sse"),
            (self.stdio, "stdio"),
        ]
        .into_iter()
        .filter_map(|(on, l)| on.then_some(l))
        .collect()
    }
}

/// The eras (protocol revisions a server serves) a check is graded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Eras {
    /// The negotiated revision only.
    Negotiated,
    /// Every era the collector probed: the rule's legs are sent again on each.
    Every,
    /// Every era on which the bundle holds one of the rule's per-era legs: collectors
    /// sent them on the other eras only from a later version on, so a bundle without
    /// them is graded on the eras that hold them.
    EveryRecorded,
}

impl Eras {
    /// As a definition spells it.
    pub fn key(self) -> &'static str {
        match self {
            Eras::Negotiated => "negotiated",
            Eras::Every => "every",
            Eras::EveryRecorded => "every-recorded",
        }
    }
}

/// One check of a benchmark definition.
#[derive(Clone, Serialize)]
pub struct Entry {
    /// `5.1.1`.
    pub id: Number,
    /// Profile level.
    pub level: Level,
    /// Benchmark status.
    pub status: Status,
    /// Verdict source.
    pub source: Source,
    /// Title.
    pub title: &'static str,
    /// The rule id that grades it.
    pub rule: &'static str,
    /// The rule's implementation (`None` only for a rule this build does not have; a
    /// definition naming one is refused, so graded definitions have it on every row).
    #[serde(skip)]
    pub grader: Option<&'static dyn Check>,
    /// The rule's parameter values.
    pub params: Params,
    /// The transports it is graded on.
    pub transports: Transports,
    /// The eras it is graded on.
    pub eras: Eras,
    /// One line: what to change so the observation would come out differently.
    pub remediation: &'static str,
    /// Why the recommendation is out of a probe's reach (reported-only checks).
    pub unreached: Option<&'static str>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("id", &self.id)
            .field("rule", &self.rule)
            .field("level", &self.level)
            .finish()
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.id == other.id && self.rule == other.rule && self.params == other.params
    }
}

impl Eq for Entry {}

impl Entry {
    /// The section number (`5` for `5.1.1`).
    pub fn section(&self) -> &'static str {
        self.id.section()
    }
}

/// A recommendation (or a whole section) no client connection can decide, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreached {
    /// `4.1.1`, or `6` for a whole section.
    pub section: &'static str,
    /// Title.
    pub title: &'static str,
    /// What a section's recommendations govern (empty for one recommendation).
    pub governs: &'static str,
    /// Why no probe reaches it.
    pub why: &'static str,
}

impl Unreached {
    /// True for a whole section (`6`), false for one recommendation (`4.1.1`).
    pub fn is_section(&self) -> bool {
        !self.section.contains('.')
    }
}

/// A recommendation a tailoring names (`[[recommendation]]`): no probe reaches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// `6.1.2`.
    pub number: &'static str,
    /// Its title, as the operator's copy of the benchmark gives it.
    pub title: &'static str,
    /// Profile level.
    pub level: Level,
}

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Embedded in this build, under this file name.
    Embedded(&'static str),
    /// Read from this file.
    File(String),
}

/// A tailoring applied to an embedded definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tailoring {
    /// The tailoring's own id.
    pub id: String,
    /// The tailoring file as given.
    pub file: String,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
    /// The checks it deselected, in number order: listed in every report, never dropped
    /// silently.
    pub deselected: Vec<&'static str>,
    /// The parameters it refined: `number: name = value`.
    pub refined: Vec<String>,
}

/// One benchmark definition, checked against this build's rules.
#[derive(Debug, Clone, Serialize)]
pub struct Benchmark {
    /// `cis-mcp-server-1.0.0`.
    pub id: &'static str,
    /// `CIS MCP Server Benchmark`.
    pub name: &'static str,
    /// `1.0.0`.
    pub version: &'static str,
    /// Publication date, when the definition states one.
    pub date: Option<&'static str>,
    /// How many recommendations the benchmark has in all, when the definition states it
    /// (reports then print a coverage line: [`crate::report::coverage`]).
    pub recommendations: Option<u32>,
    /// Recommendations neither a check nor an `[[unreached]]` row names, named by a
    /// tailoring from the operator's own copy of the benchmark, in number order.
    pub named: Vec<Named>,
    /// SHA-256 of the definition's bytes (the base definition's, for a tailoring), hex.
    pub sha256: String,
    /// Where it came from.
    pub origin: Origin,
    /// The tailoring applied, if any.
    pub tailoring: Option<Tailoring>,
    /// Every check, in number order.
    pub checks: Vec<Entry>,
    /// What no probe reaches.
    pub unreached: Vec<Unreached>,
    /// Each rule's number, the first row it grades, over every row the definition
    /// wrote (a tailoring's deselected rows included): what a rule's reference to another
    /// rule renders as ([`crate::refs`]).
    #[serde(skip)]
    pub rule_numbers: Vec<(&'static str, Number)>,
}

impl Benchmark {
    /// The check numbered `id`.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.checks.iter().find(|e| e.id == id)
    }

    /// The first check graded by rule `rule` (a tailoring's deselected rows are not
    /// checks; [`Benchmark::number_of`] still knows their numbers).
    pub fn first_row_of(&self, rule: &str) -> Option<&Entry> {
        self.checks.iter().find(|e| e.rule == rule)
    }

    /// `CIS MCP Server Benchmark 1.0.0` (and the tailoring's id, when tailored).
    pub fn title(&self) -> String {
        match &self.tailoring {
            Some(t) => format!("{} {} tailored by {}", self.name, self.version, t.id),
            None => format!("{} {}", self.name, self.version),
        }
    }

    /// The sections no check covers, in order: every report format ends with them.
    pub fn sections_unreached(&self) -> impl Iterator<Item = &Unreached> {
        self.unreached.iter().filter(|u| u.is_section())
    }

    /// The number of the first row graded by rule `id`, deselected rows included.
    pub fn number_of(&self, id: &str) -> Option<Number> {
        self.rule_numbers
            .iter()
            .find(|(r, _)| *r == id)
            .map(|(_, n)| *n)
    }

    /// True when `number` is a recommendation of this definition that no check grades:
    /// an `[[unreached]]` recommendation (not a whole section) or one a tailoring named.
    pub fn is_unreached_recommendation(&self, number: &str) -> bool {
        self.unreached
            .iter()
            .any(|u| !u.is_section() && u.section == number)
            || self.named.iter().any(|n| n.number == number)
    }

    /// The title of recommendation `number`: a check's, an `[[unreached]]` row's or a
    /// tailoring's.
    pub fn title_of(&self, number: &str) -> Option<&'static str> {
        self.entry(number)
            .map(|e| e.title)
            .or_else(|| {
                self.unreached
                    .iter()
                    .find(|u| u.section == number)
                    .map(|u| u.title)
            })
            .or_else(|| {
                self.named
                    .iter()
                    .find(|n| n.number == number)
                    .map(|n| n.title)
            })
    }

    /// The numbers of the checks graded on every era, in number order.
    pub fn per_era_checks(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|e| e.eras != Eras::Negotiated)
            .map(|e| e.id.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dotted number from its parts (`[3, 3, 1]` is `3.3.1`).
    fn dotted(parts: &[u32]) -> String {
        parts
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(".")
    }

    #[test]
    fn numeric_order() {
        let sorted: [&[u32]; 7] = [
            &[1, 1],
            &[1, 4],
            &[2, 1],
            &[3, 3, 1],
            &[3, 3, 5],
            &[10, 1],
            &[10, 2],
        ];
        let want: Vec<String> = sorted.iter().map(|p| dotted(p)).collect();
        let mut ids = want.clone();
        ids.sort();
        assert_ne!(ids, want, "string order differs");
        ids.sort_by_key(|i| id_key(i));
        assert_eq!(ids, want);
    }

    #[test]
    fn the_first_row_of_a_rule() {
        let bm = Benchmark::builtin();
        for e in &bm.checks {
            let first = bm.first_row_of(e.rule).expect("graded");
            assert_eq!(first.rule, e.rule);
            assert!(first.id.key() <= e.id.key());
            assert_eq!(bm.number_of(e.rule), Some(first.id));
        }
        assert!(bm.first_row_of("no-such-rule").is_none());
    }
}
