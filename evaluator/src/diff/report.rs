//! `mcp-grade diff OLD.json NEW.json`: what changed between two JSON reports
//! (`mcp-grade-report/1`), check by check and server by server. It reads only the JSON
//! fields it needs (no report type of the grader): the benchmark (`provenance.benchmark`
//! when present, else `benchmark`), `grader_version`, `level`, `servers[]` (`index`,
//! `endpoint`, `transport`, `server_info`, `negotiated_revision`, `bundle`), and
//! `checks[]` (`id`, `title`, `rule`, `params`, `results[]` with `server`, `verdict`,
//! `legs`). Checks are mapped through their rule ids when both reports carry them
//! ([`super::mapping`]), servers by endpoint or [`Identity`]. Text, or `--format json`
//! (`mcp-grade-report-diff/1`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bundle::Change;
use super::mapping::{self, Class, Key, MappedBy};
use super::{DiffError, Identity, Match};
use crate::fmt::escape_line;

/// The `schema` of `diff --format json` of two reports.
pub const SCHEMA: &str = "mcp-grade-report-diff/1";

#[derive(Deserialize)]
struct RawReport {
    #[serde(default)]
    benchmark: Option<Value>,
    #[serde(default)]
    provenance: Option<Value>,
    #[serde(default)]
    grader_version: Option<String>,
    #[serde(default)]
    level: Option<Value>,
    servers: Vec<RawServer>,
    checks: Vec<RawCheck>,
}

#[derive(Deserialize)]
struct RawServer {
    index: u64,
    endpoint: String,
    #[serde(default)]
    transport: Option<String>,
    #[serde(default)]
    server_info: Option<Value>,
    #[serde(default)]
    negotiated_revision: Option<String>,
    #[serde(default)]
    bundle: Option<String>,
}

#[derive(Deserialize)]
struct RawCheck {
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    results: Vec<RawResult>,
}

#[derive(Deserialize)]
struct RawResult {
    server: u64,
    verdict: String,
    #[serde(default)]
    legs: BTreeMap<String, Value>,
}

/// The benchmark a report was graded under, as far as the report says.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct Benchmark {
    /// Its id (`provenance.benchmark.id`); `null` in reports from before benchmark
    /// definitions.
    pub id: Option<String>,
    /// Its name.
    pub name: Option<String>,
    /// Its version.
    pub version: Option<String>,
    /// SHA-256 of its definition; `null` when the report does not carry it.
    pub sha256: Option<String>,
    /// The tailoring applied, as the report gives it; `null` when none or not carried.
    pub tailoring: Option<Value>,
}

impl Benchmark {
    fn from(v: Option<&Value>) -> Benchmark {
        let s = |k: &str| {
            v.and_then(|v| v.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Benchmark {
            id: s("id"),
            name: s("name"),
            version: s("version"),
            sha256: s("sha256"),
            tailoring: v
                .and_then(|v| v.get("tailoring"))
                .filter(|t| !t.is_null())
                .cloned(),
        }
    }

    /// One escaped line: `name version [id, sha256 0123456789ab, tailored]`.
    pub fn show(&self) -> String {
        let mut s = format!(
            "{} {}",
            escape_line(self.name.as_deref().unwrap_or("(unnamed benchmark)")),
            escape_line(self.version.as_deref().unwrap_or("(no version)"))
        );
        let mut extra = Vec::new();
        if let Some(id) = &self.id {
            extra.push(escape_line(id));
        }
        if let Some(h) = &self.sha256 {
            extra.push(format!(
                "sha256 {}",
                escape_line(&h.chars().take(12).collect::<String>())
            ));
        }
        if self.tailoring.is_some() {
            extra.push("tailored".into());
        }
        if !extra.is_empty() {
            s.push_str(&format!(" [{}]", extra.join(", ")));
        }
        s
    }
}

/// One server of a report.
#[derive(Debug, Clone)]
struct Server {
    index: u64,
    endpoint: String,
    identity: Option<Identity>,
    revision: Option<String>,
    server_info: Option<Value>,
    bundle: Option<String>,
}

/// One check of a report, with its verdicts by server index.
#[derive(Debug, Clone)]
struct Check {
    key: Key,
    title: Option<String>,
    results: BTreeMap<u64, (String, BTreeMap<String, Value>)>,
}

/// A JSON report read for comparing.
#[derive(Debug)]
pub struct Report {
    path: String,
    benchmark: Benchmark,
    grader_version: Option<String>,
    level: Option<Value>,
    servers: Vec<Server>,
    checks: Vec<Check>,
}

impl Report {
    /// Read a report already parsed as JSON (its `schema` checked by [`super::sniff`]).
    pub fn read(path: &Path, v: Value) -> Result<Report, DiffError> {
        let shown = escape_line(&path.display().to_string());
        let raw: RawReport = serde_json::from_value(v).map_err(|e| DiffError::Unusable {
            path: shown.clone(),
            reason: format!(
                "a {} JSON report that cannot be read: {e}",
                super::REPORT_SCHEMA
            ),
        })?;
        let benchmark = Benchmark::from(
            raw.provenance
                .as_ref()
                .and_then(|p| p.get("benchmark"))
                .filter(|b| b.is_object())
                .or(raw.benchmark.as_ref()),
        );
        let servers = raw
            .servers
            .into_iter()
            .map(|s| Server {
                index: s.index,
                identity: s
                    .transport
                    .as_deref()
                    .and_then(|t| Identity::of(s.server_info.as_ref(), t)),
                endpoint: s.endpoint,
                revision: s.negotiated_revision,
                server_info: s.server_info.filter(|v| !v.is_null()),
                bundle: s.bundle,
            })
            .collect();
        let checks = raw
            .checks
            .into_iter()
            .map(|c| Check {
                key: Key {
                    id: c.id,
                    rule: c.rule,
                    params: c.params.filter(|p| !p.is_null()),
                },
                title: c.title,
                results: c
                    .results
                    .into_iter()
                    .map(|r| (r.server, (r.verdict, r.legs)))
                    .collect(),
            })
            .collect();
        Ok(Report {
            path: shown,
            benchmark,
            grader_version: raw.grader_version,
            level: raw.level.filter(|l| !l.is_null()),
            servers,
            checks,
        })
    }
}

/// One side of the comparison.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReportSide {
    /// The report file as given.
    pub report: String,
    /// The benchmark it was graded under.
    pub benchmark: Benchmark,
    /// The grader that wrote it.
    pub grader_version: Option<String>,
    /// Its `--level` (`null`: all checks).
    pub level: Option<Value>,
    /// How many servers it holds.
    pub servers: usize,
    /// How many checks it holds.
    pub checks: usize,
}

/// A check of one report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CheckRef {
    /// Its id (`3.3.1`).
    pub id: String,
    /// Its title.
    pub title: Option<String>,
    /// Its rule's parameter values; `null` when the report does not carry them.
    pub params: Option<Value>,
}

/// What became of one check of either report.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CheckMap {
    /// `same`, `added`, `removed`, or one or both of `renumbered` and `params-changed`.
    pub class: Vec<Class>,
    /// The rule that grades it; `null` when checks were matched by id.
    pub rule: Option<String>,
    /// The check in OLD; `null` when added.
    pub old: Option<CheckRef>,
    /// The check in NEW; `null` when removed.
    pub new: Option<CheckRef>,
}

/// A server of one report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerRef {
    /// Its `index` in that report's `servers`.
    pub index: u64,
    /// Its endpoint.
    pub endpoint: String,
    /// Its identity (`serverInfo` name and transport); `null` when it has none.
    pub identity: Option<Identity>,
    /// The bundle it was graded from, as that report names it.
    pub bundle: Option<String>,
}

/// One check's verdict for one server.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VerdictAt {
    /// The check id in that report.
    pub check: String,
    /// The verdict; `null` when the report has no result for this server (not graded).
    pub verdict: Option<String>,
}

/// A leg whose outcome differs.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LegChange {
    /// The leg id (`1.1a`).
    pub leg: String,
    /// Its outcome word in OLD; `null` when absent there.
    pub old: Option<Value>,
    /// Its outcome word in NEW; `null` when absent there.
    pub new: Option<Value>,
}

/// A check whose verdict for this server differs, or that is only in one report.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VerdictChange {
    /// As in `checks[].class`.
    pub class: Vec<Class>,
    /// The rule that grades it; `null` when checks were matched by id.
    pub rule: Option<String>,
    /// In OLD; `null` when the check was added.
    pub old: Option<VerdictAt>,
    /// In NEW; `null` when the check was removed.
    pub new: Option<VerdictAt>,
    /// The legs whose outcome differs (both verdicts present only).
    pub legs: Vec<LegChange>,
}

/// Two servers matched.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ServerDiff {
    /// In OLD.
    pub old: ServerRef,
    /// In NEW.
    pub new: ServerRef,
    /// The negotiated revision, when it differs.
    pub revision: Option<Change<Option<String>>>,
    /// `serverInfo`, when it differs.
    pub server_info: Option<Change<Option<Value>>>,
    /// Checks whose verdict differs, and checks only in one report with their verdict.
    pub verdicts: Vec<VerdictChange>,
    /// How many checks of both reports have the same verdict for this server.
    pub unchanged: usize,
}

/// A server of one report that matched none of the other.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Unmatched {
    /// The server.
    pub server: ServerRef,
    /// Why it matched none.
    pub why: String,
}

/// What changed between two JSON reports (`diff --format json`, `mcp-grade-report-diff/1`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReportDiff {
    /// Always `mcp-grade-report-diff/1`.
    pub schema: &'static str,
    /// How servers were matched: `endpoint` or `identity`.
    #[serde(rename = "match")]
    pub by: Match,
    /// OLD.
    pub old: ReportSide,
    /// NEW.
    pub new: ReportSide,
    /// The two reports name another benchmark (id, name, version, SHA-256 or tailoring).
    pub benchmark_changed: bool,
    /// How checks were mapped: `rule` (both reports carry rule ids) or `id`.
    pub checks_mapped_by: MappedBy,
    /// Why by id, when by id.
    pub checks_note: Option<String>,
    /// True when anything below differs, or the benchmark does. Under `--match
    /// identity` two endpoints of matched servers are not a change.
    pub changed: bool,
    /// Every check of either report once, in check-id order (NEW's id first).
    pub checks: Vec<CheckMap>,
    /// The servers matched, in OLD's order.
    pub servers: Vec<ServerDiff>,
    /// Servers of OLD that matched none of NEW.
    pub only_old: Vec<Unmatched>,
    /// Servers of NEW that matched none of OLD.
    pub only_new: Vec<Unmatched>,
}

fn side(r: &Report) -> ReportSide {
    ReportSide {
        report: r.path.clone(),
        benchmark: r.benchmark.clone(),
        grader_version: r.grader_version.clone(),
        level: r.level.clone(),
        servers: r.servers.len(),
        checks: r.checks.len(),
    }
}

fn server_ref(s: &Server) -> ServerRef {
    ServerRef {
        index: s.index,
        endpoint: s.endpoint.clone(),
        identity: s.identity.clone(),
        bundle: s.bundle.clone(),
    }
}

fn check_ref(c: &Check) -> CheckRef {
    CheckRef {
        id: c.key.id.clone(),
        title: c.title.clone(),
        params: c.key.params.clone(),
    }
}

/// Pair servers of OLD and NEW by `by`: a key held by exactly one server on each side
/// pairs them; a key held by several on a side is ambiguous and pairs none of them; a
/// server without a key (no identity) pairs with none.
fn match_servers(
    old: &[Server],
    new: &[Server],
    by: Match,
) -> (Vec<(usize, usize)>, Vec<Unmatched>, Vec<Unmatched>) {
    let key = |s: &Server| -> Option<String> {
        match by {
            Match::Endpoint => Some(s.endpoint.clone()),
            Match::Identity => s
                .identity
                .as_ref()
                .map(|i| format!("{}\u{0}{}", i.name, i.transport)),
        }
    };
    let what = match by {
        Match::Endpoint => "endpoint",
        Match::Identity => "identity",
    };
    let mut groups: BTreeMap<String, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    let (mut only_old, mut only_new) = (Vec::new(), Vec::new());
    let none = |s: &Server| Unmatched {
        server: server_ref(s),
        why: "no identity (no serverInfo name): --match identity cannot pair it".into(),
    };
    for (i, s) in old.iter().enumerate() {
        match key(s) {
            Some(k) => groups.entry(k).or_default().0.push(i),
            None => only_old.push(none(s)),
        }
    }
    for (j, s) in new.iter().enumerate() {
        match key(s) {
            Some(k) => groups.entry(k).or_default().1.push(j),
            None => only_new.push(none(s)),
        }
    }
    let mut pairs = Vec::new();
    for (a, b) in groups.into_values() {
        if let ([i], [j]) = (a.as_slice(), b.as_slice()) {
            pairs.push((*i, *j));
            continue;
        }
        let why = if a.is_empty() {
            format!("no server of this {what} in OLD")
        } else if b.is_empty() {
            format!("no server of this {what} in NEW")
        } else {
            format!(
                "{} server(s) of this {what} in OLD and {} in NEW: ambiguous, not paired",
                a.len(),
                b.len()
            )
        };
        only_old.extend(a.iter().map(|&i| Unmatched {
            server: server_ref(&old[i]),
            why: why.clone(),
        }));
        only_new.extend(b.iter().map(|&j| Unmatched {
            server: server_ref(&new[j]),
            why: why.clone(),
        }));
    }
    pairs.sort_unstable();
    only_old.sort_by_key(|u| u.server.index);
    only_new.sort_by_key(|u| u.server.index);
    (pairs, only_old, only_new)
}

/// The verdict of check `c` for server `s`, and its legs.
fn at<'a>(c: &'a Check, s: &Server) -> (VerdictAt, Option<&'a BTreeMap<String, Value>>) {
    let r = c.results.get(&s.index);
    (
        VerdictAt {
            check: c.key.id.clone(),
            verdict: r.map(|r| r.0.clone()),
        },
        r.map(|r| &r.1),
    )
}

fn legs(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> Vec<LegChange> {
    let ids: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    ids.into_iter()
        .filter(|l| a.get(*l) != b.get(*l))
        .map(|l| LegChange {
            leg: l.clone(),
            old: a.get(l).cloned(),
            new: b.get(l).cloned(),
        })
        .collect()
}

/// Compare two reports, servers matched `by` endpoint or identity.
pub fn compare(old: &Report, new: &Report, by: Match) -> ReportDiff {
    let ko: Vec<Key> = old.checks.iter().map(|c| c.key.clone()).collect();
    let kn: Vec<Key> = new.checks.iter().map(|c| c.key.clone()).collect();
    let m = mapping::map(&ko, &kn);
    let rule_of = |p: &mapping::Pair| match m.by {
        MappedBy::Id => None,
        MappedBy::Rule => p
            .new
            .and_then(|j| kn[j].rule.clone())
            .or_else(|| p.old.and_then(|i| ko[i].rule.clone())),
    };
    let checks: Vec<CheckMap> = m
        .pairs
        .iter()
        .map(|p| CheckMap {
            class: p.class(&ko, &kn),
            rule: rule_of(p),
            old: p.old.map(|i| check_ref(&old.checks[i])),
            new: p.new.map(|j| check_ref(&new.checks[j])),
        })
        .collect();
    let (pairs, only_old, only_new) = match_servers(&old.servers, &new.servers, by);
    let servers: Vec<ServerDiff> = pairs
        .into_iter()
        .map(|(i, j)| {
            let (so, sn) = (&old.servers[i], &new.servers[j]);
            let mut verdicts = Vec::new();
            let mut unchanged = 0;
            for p in &m.pairs {
                let a = p.old.map(|i| at(&old.checks[i], so));
                let b = p.new.map(|j| at(&new.checks[j], sn));
                let both = a.is_some() && b.is_some();
                if both && a.as_ref().map(|x| &x.0.verdict) == b.as_ref().map(|x| &x.0.verdict) {
                    unchanged += 1;
                    continue;
                }
                let leg_changes = match (&a, &b) {
                    (Some((_, Some(la))), Some((_, Some(lb)))) => legs(la, lb),
                    _ => Vec::new(),
                };
                verdicts.push(VerdictChange {
                    class: p.class(&ko, &kn),
                    rule: rule_of(p),
                    old: a.map(|x| x.0),
                    new: b.map(|x| x.0),
                    legs: leg_changes,
                });
            }
            ServerDiff {
                old: server_ref(so),
                new: server_ref(sn),
                revision: (so.revision != sn.revision).then(|| Change {
                    old: so.revision.clone(),
                    new: sn.revision.clone(),
                }),
                server_info: (so.server_info != sn.server_info).then(|| Change {
                    old: so.server_info.clone(),
                    new: sn.server_info.clone(),
                }),
                verdicts,
                unchanged,
            }
        })
        .collect();
    let benchmark_changed = old.benchmark != new.benchmark;
    let changed = benchmark_changed
        || checks.iter().any(|c| c.class != [Class::Same])
        || servers
            .iter()
            .any(|s| !s.verdicts.is_empty() || s.revision.is_some() || s.server_info.is_some())
        || !only_old.is_empty()
        || !only_new.is_empty();
    ReportDiff {
        schema: SCHEMA,
        by,
        old: side(old),
        new: side(new),
        benchmark_changed,
        checks_mapped_by: m.by,
        checks_note: m.note,
        changed,
        checks,
        servers,
        only_old,
        only_new,
    }
}

/// The JSON Schema of `diff --format json` of two reports (`mcp-grade-report-diff/1`),
/// generated from [`ReportDiff`].
pub fn schema() -> Value {
    let mut s = schemars::schema_for!(ReportDiff).to_value();
    s["title"] = Value::String(format!("mcp-grade diff of two JSON reports ({SCHEMA})"));
    s
}
