//! Reading benchmark definitions and tailoring files, and checking them against the rules
//! this build implements. Everything is refused that would make a definition mean less
//! than it says: an unknown key (a misspelt `[[chek]]` would otherwise drop every
//! check), an unknown rule id, a parameter the rule does not declare or a missing one, a
//! number given twice, a reported-only check without its reason, an era setting the
//! rule's legs cannot honour. Every error names the file, the line and the key.

use std::collections::{BTreeMap, BTreeSet};

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::family;
use serde::Deserialize;
use toml::Spanned;

use super::error::BenchmarkError;
use super::model::{
    Benchmark, Entry, Eras, Level, Named, Number, Origin, Source, Status, Tailoring, Transports,
    Unreached,
};
use crate::check::{ParamKind, ParamValue, Params};

/// The `format` of a definition file.
pub const DEFINITION_FORMAT: &str = "mcp-probe-benchmark/1";
/// The `format` of a tailoring file.
pub const TAILORING_FORMAT: &str = "mcp-probe-tailoring/1";

/// A definition file (`format = "mcp-probe-benchmark/1"`).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-probe benchmark definition")]
pub struct DefinitionFile {
    /// `mcp-probe-benchmark/1`.
    pub format: String,
    /// Stable id (`cis-mcp-server-1.0.0`): lower case, digits, `.` and `-`.
    pub id: String,
    /// The benchmark's name.
    pub name: String,
    /// The benchmark's version.
    pub version: String,
    /// Publication date (`YYYY-MM-DD`), when known.
    pub date: Option<String>,
    /// How many recommendations the benchmark has in all (checks, unreached ones and
    /// those the definition does not list), when known: reports then say how many of
    /// them are decided from the wire, reported, attested, and not reachable.
    pub recommendations: Option<u32>,
    /// One row per recommendation a probe reaches, in whole, in part or as reported-only.
    #[schemars(with = "Vec<CheckRow>")]
    pub check: Vec<Spanned<CheckRow>>,
    /// Recommendations (or whole sections) no client connection can decide.
    #[serde(default)]
    pub unreached: Vec<UnreachedRow>,
}

/// One `[[check]]` row.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRow {
    /// The recommendation's number in this revision (`3.3.1`).
    #[schemars(with = "String")]
    pub number: Spanned<String>,
    /// Its title.
    pub title: String,
    /// Profile level: 1 or 2.
    #[schemars(with = "u8")]
    pub level: Spanned<u8>,
    /// The benchmark's assessment status.
    pub status: StatusKey,
    /// Where the verdict comes from.
    pub source: SourceKey,
    /// The id of the rule (code) that grades it (`mcp-grade checks` lists them).
    #[schemars(with = "String")]
    pub rule: Spanned<String>,
    /// The rule's parameter values: every parameter the rule declares, and no other.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ParamJson>")]
    pub params: BTreeMap<String, Spanned<toml::Value>>,
    /// The transports it is graded on; on another, N/A naming the transport.
    #[schemars(with = "Vec<TransportKey>")]
    pub transports: Spanned<Vec<TransportKey>>,
    /// The eras it is graded on.
    #[schemars(with = "ErasKey")]
    pub eras: Spanned<ErasKey>,
    /// One line: what to change.
    #[schemars(with = "String")]
    pub remediation: Spanned<String>,
    /// Why no probe reaches the recommendation (required for reported-only checks).
    pub unreached: Option<String>,
}

/// A parameter value: an integer or a string.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum ParamJson {
    /// An integer.
    Int(i64),
    /// A string.
    Text(String),
}

/// `automated` or `manual`.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusKey {
    /// Automated.
    Automated,
    /// Manual.
    Manual,
}

/// `wire`, `in-part` or `reported-only`.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKey {
    /// Decided on the wire.
    Wire,
    /// Partly on the wire.
    InPart,
    /// N/A with observations.
    ReportedOnly,
}

/// A transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
pub enum TransportKey {
    /// Streamable HTTP.
    #[serde(rename = "streamable-http")]
    StreamableHttp,
    /// Legacy HTTP+SSE.
    #[serde(rename = "http+sse")]
    HttpSse,
    /// A launched local process.
    #[serde(rename = "stdio")]
    Stdio,
}

/// `negotiated`, `every` or `every-recorded`.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ErasKey {
    /// The negotiated revision only.
    Negotiated,
    /// Every era probed.
    Every,
    /// Every era holding one of the rule's per-era legs.
    EveryRecorded,
}

/// One `[[unreached]]` row.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnreachedRow {
    /// `4.1.1`, or a section (`6`).
    pub number: String,
    /// Its title.
    pub title: String,
    /// What a section's recommendations govern.
    pub governs: Option<String>,
    /// Why no probe reaches it.
    pub reason: String,
}

/// A tailoring file (`format = "mcp-probe-tailoring/1"`): an organisation's profile of
/// an embedded definition.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-probe benchmark tailoring")]
pub struct TailoringFile {
    /// `mcp-probe-tailoring/1`.
    pub format: String,
    /// The tailoring's own id (named in every report).
    pub id: String,
    /// The embedded definition it refines (`mcp-grade benchmarks` lists them).
    #[schemars(with = "String")]
    pub extends: Spanned<String>,
    /// Grade only these checks (numbers of the extended definition).
    #[schemars(with = "Option<Vec<String>>")]
    pub select: Option<Spanned<Vec<String>>>,
    /// Grade all but these (numbers of the extended definition).
    #[schemars(with = "Option<Vec<String>>")]
    pub deselect: Option<Spanned<Vec<String>>>,
    /// Refined parameter values, by check number: `[params."3.1.2"]`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, BTreeMap<String, ParamJson>>")]
    pub params: BTreeMap<String, Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    /// Recommendations of the benchmark the extended definition does not name (neither a
    /// check nor an `[[unreached]]` row), from the operator's own copy of the benchmark:
    /// reports list them as not reachable from outside unless attested.
    #[serde(default)]
    #[schemars(with = "Vec<RecommendationRow>")]
    pub recommendation: Vec<Spanned<RecommendationRow>>,
}

/// One `[[recommendation]]` of a tailoring.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecommendationRow {
    /// Its number in the benchmark (`6.1.2`).
    pub number: String,
    /// Its title.
    pub title: String,
    /// Profile level: 1 or 2.
    pub level: u8,
}

/// The JSON Schema of definition files (docs/schemas/benchmark.schema.json).
pub fn definition_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(DefinitionFile)).unwrap_or_default()
}

/// The JSON Schema of tailoring files (docs/schemas/tailoring.schema.json).
pub fn tailoring_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(TailoringFile)).unwrap_or_default()
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Errors of one file, with its text for line numbers.
struct At<'a> {
    file: &'a str,
    text: &'a str,
}

impl At<'_> {
    fn line(&self, span: std::ops::Range<usize>) -> usize {
        let at = span.start.min(self.text.len());
        self.text[..at].matches('\n').count() + 1
    }

    fn value(
        &self,
        span: std::ops::Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> BenchmarkError {
        BenchmarkError::Value {
            file: self.file.to_string(),
            line: self.line(span),
            key: key.into(),
            message: message.into(),
        }
    }

    fn syntax(&self, e: toml::de::Error) -> BenchmarkError {
        let message = match e.span() {
            Some(span) => {
                let n = self.line(span);
                let source = self.text.lines().nth(n - 1).unwrap_or_default().trim();
                format!(
                    "line {n} (`{source}`): {}",
                    e.message()
                        .lines()
                        .map(str::trim)
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
            None => e.message().to_string(),
        };
        BenchmarkError::Syntax {
            file: self.file.to_string(),
            message,
        }
    }
}

fn utf8<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, BenchmarkError> {
    std::str::from_utf8(bytes).map_err(|e| BenchmarkError::Syntax {
        file: file.to_string(),
        message: format!("not UTF-8: {e}"),
    })
}

/// Read a file given with `--benchmark`: a definition, or a tailoring (it has `extends`)
/// of one of `embedded`.
pub fn parse_file(
    file: &str,
    bytes: &[u8],
    embedded: &[&'static Benchmark],
) -> Result<Benchmark, BenchmarkError> {
    let text = utf8(file, bytes)?;
    let at = At { file, text };
    let table: toml::Table = toml::from_str(text).map_err(|e| at.syntax(e))?;
    if table.contains_key("extends") {
        tailor(file, bytes, embedded)
    } else {
        parse_definition(file, bytes, Origin::File(file.to_string()))
    }
}

/// Read and check one definition.
pub fn parse_definition(
    file: &str,
    bytes: &[u8],
    origin: Origin,
) -> Result<Benchmark, BenchmarkError> {
    let text = utf8(file, bytes)?;
    let at = At { file, text };
    let doc: DefinitionFile = toml::from_str(text).map_err(|e| at.syntax(e))?;
    let top = 0..0;
    if doc.format != DEFINITION_FORMAT {
        return Err(at.value(
            top,
            "format",
            format!(
                "{:?} is not {DEFINITION_FORMAT:?}{}",
                doc.format,
                if doc.format == TAILORING_FORMAT {
                    " (a tailoring file needs `extends`)"
                } else {
                    ""
                }
            ),
        ));
    }
    let id_ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
    };
    if !id_ok(&doc.id) {
        return Err(at.value(
            0..0,
            "id",
            format!("{:?}: use lower-case letters, digits, `.` and `-`", doc.id),
        ));
    }
    if doc.name.trim().is_empty() || doc.version.trim().is_empty() {
        return Err(at.value(0..0, "name", "name and version must not be empty"));
    }
    if let Some(d) = &doc.date {
        if chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err() {
            return Err(at.value(0..0, "date", format!("{d:?} is not YYYY-MM-DD")));
        }
    }
    let listed = doc.check.len()
        + doc
            .unreached
            .iter()
            .filter(|u| u.number.contains('.'))
            .count();
    if let Some(n) = doc.recommendations {
        if (n as usize) < listed {
            return Err(at.value(
                0..0,
                "recommendations",
                format!("{n} is fewer than the {listed} recommendations the definition lists"),
            ));
        }
    }
    if doc.check.is_empty() {
        return Err(at.value(0..0, "check", "the definition has no [[check]] row"));
    }
    let mut checks = Vec::with_capacity(doc.check.len());
    let mut seen = BTreeSet::new();
    for (i, row) in doc.check.iter().enumerate() {
        let row_span = row.span();
        let row = row.get_ref();
        let key = |k: &str| format!("check[{i}].{k}");
        let number = row.number.get_ref();
        if !number_ok(number) {
            return Err(at.value(
                row.number.span(),
                key("number"),
                format!("{number:?} is not a recommendation number (digits and dots: `3.3.1`)"),
            ));
        }
        if !seen.insert(number.clone()) {
            return Err(at.value(
                row.number.span(),
                key("number"),
                format!("{number} is given twice"),
            ));
        }
        let level = match row.level.get_ref() {
            1 => Level::L1,
            2 => Level::L2,
            n => {
                return Err(at.value(
                    row.level.span(),
                    key("level"),
                    format!("{n}: a profile level is 1 or 2"),
                ))
            }
        };
        let rule = crate::rules::rule(row.rule.get_ref()).ok_or_else(|| {
            at.value(
                row.rule.span(),
                key("rule"),
                format!(
                    "{:?} is not a rule of this build (`mcp-grade checks` lists the rules; a definition \
                     for a later build needs that build)",
                    row.rule.get_ref()
                ),
            )
        })?;
        let params = params_of(&at, &key("params"), row_span.clone(), rule, &row.params)?;
        let transports = row.transports.get_ref();
        if transports.is_empty() {
            return Err(at.value(
                row.transports.span(),
                key("transports"),
                "name at least one transport",
            ));
        }
        let eras = match row.eras.get_ref() {
            ErasKey::Negotiated => Eras::Negotiated,
            ErasKey::Every => Eras::Every,
            ErasKey::EveryRecorded => Eras::EveryRecorded,
        };
        if eras != Eras::Negotiated && !reads_per_era_legs(rule) {
            return Err(at.value(
                row.eras.span(),
                key("eras"),
                format!(
                    "rule {} reads no leg the collector sends on every era, so it can be graded on the \
                     negotiated era only",
                    rule.id()
                ),
            ));
        }
        let remediation = row.remediation.get_ref();
        if remediation.trim().is_empty() || remediation.contains('\n') {
            return Err(at.value(
                row.remediation.span(),
                key("remediation"),
                "one non-empty line",
            ));
        }
        let source = match row.source {
            SourceKey::Wire => Source::Wire,
            SourceKey::InPart => Source::InPart,
            SourceKey::ReportedOnly => Source::ReportedOnly,
        };
        if source == Source::ReportedOnly && row.unreached.as_deref().is_none_or(str::is_empty) {
            return Err(at.value(
                row_span.clone(),
                key("unreached"),
                "a reported-only check states why no probe reaches it",
            ));
        }
        checks.push(Entry {
            id: Number(leak(number.clone())),
            level,
            status: match row.status {
                StatusKey::Automated => Status::Automated,
                StatusKey::Manual => Status::Manual,
            },
            source,
            title: leak(row.title.clone()),
            rule: rule.id(),
            grader: Some(rule),
            params,
            transports: Transports {
                streamable_http: transports.contains(&TransportKey::StreamableHttp),
                http_sse: transports.contains(&TransportKey::HttpSse),
                stdio: transports.contains(&TransportKey::Stdio),
            },
            eras,
            remediation: leak(remediation.clone()),
            unreached: row.unreached.clone().map(leak),
        });
    }
    checks.sort_by_key(|e| e.id.key());
    let mut rule_numbers: Vec<(&'static str, Number)> = Vec::new();
    for e in &checks {
        if !rule_numbers.iter().any(|(r, _)| *r == e.rule) {
            rule_numbers.push((e.rule, e.id));
        }
    }
    Ok(Benchmark {
        id: leak(doc.id),
        name: leak(doc.name),
        version: leak(doc.version),
        date: doc.date.map(leak),
        recommendations: doc.recommendations,
        named: Vec::new(),
        sha256: hex::encode(mcp_probe_schema::bundle::sha256(bytes)),
        origin,
        tailoring: None,
        rule_numbers,
        checks,
        unreached: doc
            .unreached
            .into_iter()
            .map(|u| Unreached {
                section: leak(u.number),
                title: leak(u.title),
                governs: u.governs.map_or("", leak),
                why: leak(u.reason),
            })
            .collect(),
    })
}

fn number_ok(n: &str) -> bool {
    !n.is_empty()
        && n.split('.')
            .all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// True when the rule reads a leg the collector sends on every era.
fn reads_per_era_legs(check: &dyn crate::check::Check) -> bool {
    let legs = check.legs(Some(Era::Legacy));
    legs.required
        .iter()
        .chain(legs.optional)
        .any(|l| family::PER_ERA.contains(l))
}

/// The parameter values of `rule` from `given`: every declared one (a choice may be left
/// out: the rule's default applies), of its kind, and no other.
fn params_of(
    at: &At<'_>,
    key: &str,
    row: std::ops::Range<usize>,
    rule: &dyn crate::check::Check,
    given: &BTreeMap<String, Spanned<toml::Value>>,
) -> Result<Params, BenchmarkError> {
    let specs = rule.params();
    let mut out = BTreeMap::new();
    for (name, value) in given {
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
            return Err(at.value(
                value.span(),
                format!("{key}.{name}"),
                format!(
                    "rule {} has no parameter {name:?} ({})",
                    rule.id(),
                    if known.is_empty() {
                        "it takes none".to_string()
                    } else {
                        format!("it takes {}", known.join(", "))
                    }
                ),
            ));
        };
        let v = param_value(spec.kind, value.get_ref())
            .map_err(|m| at.value(value.span(), format!("{key}.{name}"), m))?;
        out.insert(spec.name, v);
    }
    if let Some(missing) = specs
        .iter()
        .find(|s| !out.contains_key(s.name) && !matches!(s.kind, ParamKind::Choice(_)))
    {
        return Err(at.value(
            row,
            format!("{key}.{}", missing.name),
            format!(
                "rule {} needs a value for {} ({}); a definition states every parameter",
                rule.id(),
                missing.name,
                missing.doc
            ),
        ));
    }
    Ok(Params(out))
}

fn param_value(kind: ParamKind, v: &toml::Value) -> Result<ParamValue, String> {
    match (kind, v) {
        (ParamKind::Int { min, max }, toml::Value::Integer(i)) => {
            if (min..=max).contains(i) {
                Ok(ParamValue::Int(*i))
            } else {
                Err(format!("{i} is outside {min}..={max}"))
            }
        }
        (ParamKind::Int { .. }, other) => {
            Err(format!("expected an integer, found a {}", other.type_str()))
        }
        (ParamKind::Revision, toml::Value::String(s)) => {
            if chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10 {
                Ok(ParamValue::Text(leak(s.clone())))
            } else {
                Err(format!("{s:?} is not a protocol revision (YYYY-MM-DD)"))
            }
        }
        (ParamKind::Revision, other) => Err(format!(
            "expected a revision string, found a {}",
            other.type_str()
        )),
        (ParamKind::Choice(words), toml::Value::String(s)) => {
            match words.iter().find(|w| **w == s.as_str()) {
                Some(w) => Ok(ParamValue::Text(w)),
                None => Err(format!("{s:?} is not one of {}", words.join(", "))),
            }
        }
        (ParamKind::Choice(_), other) => {
            Err(format!("expected a word, found a {}", other.type_str()))
        }
    }
}

/// Apply a tailoring file to the embedded definition it extends.
fn tailor(
    file: &str,
    bytes: &[u8],
    embedded: &[&'static Benchmark],
) -> Result<Benchmark, BenchmarkError> {
    let text = utf8(file, bytes)?;
    let at = At { file, text };
    let doc: TailoringFile = toml::from_str(text).map_err(|e| at.syntax(e))?;
    if doc.format != TAILORING_FORMAT {
        return Err(at.value(
            0..0,
            "format",
            format!("{:?} is not {TAILORING_FORMAT:?}", doc.format),
        ));
    }
    if doc.id.trim().is_empty() {
        return Err(at.value(0..0, "id", "a tailoring names itself"));
    }
    let base = embedded
        .iter()
        .find(|b| b.id == doc.extends.get_ref())
        .ok_or_else(|| {
            at.value(
                doc.extends.span(),
                "extends",
                format!(
                    "{:?} is not an embedded definition (embedded: {})",
                    doc.extends.get_ref(),
                    embedded.iter().map(|b| b.id).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
    let mut out = (*base).clone();
    let known = |list: &Spanned<Vec<String>>, key: &str| -> Result<(), BenchmarkError> {
        for n in list.get_ref() {
            if base.entry(n).is_none() {
                return Err(at.value(
                    list.span(),
                    key,
                    format!("{n} is not a check of {}", base.id),
                ));
            }
        }
        Ok(())
    };
    let mut deselected: Vec<&'static str> = Vec::new();
    match (&doc.select, &doc.deselect) {
        (Some(_), Some(d)) => {
            return Err(at.value(d.span(), "deselect", "give select or deselect, not both"))
        }
        (Some(s), None) => {
            known(s, "select")?;
            if s.get_ref().is_empty() {
                return Err(at.value(s.span(), "select", "selects no check"));
            }
            deselected.extend(
                base.checks
                    .iter()
                    .filter(|e| !s.get_ref().iter().any(|n| e.id == n.as_str()))
                    .map(|e| e.id.as_str()),
            );
        }
        (None, Some(d)) => {
            known(d, "deselect")?;
            deselected.extend(
                base.checks
                    .iter()
                    .filter(|e| d.get_ref().iter().any(|n| e.id == n.as_str()))
                    .map(|e| e.id.as_str()),
            );
        }
        (None, None) => {}
    }
    out.checks.retain(|e| !deselected.contains(&e.id.as_str()));
    if out.checks.is_empty() {
        return Err(at.value(0..0, "deselect", "the tailoring leaves no check to grade"));
    }
    let mut refined = Vec::new();
    for (number, values) in &doc.params {
        let key = format!("params.{number:?}");
        let Some(entry) = out.checks.iter_mut().find(|e| e.id == number.as_str()) else {
            return Err(at.value(
                values.span(),
                key,
                format!(
                    "{number} is not a check of this tailoring (deselected, or not in {})",
                    base.id
                ),
            ));
        };
        let rule = crate::rules::rule(entry.rule).ok_or_else(|| {
            at.value(
                values.span(),
                key.clone(),
                "the check's rule is not in this build",
            )
        })?;
        for (name, value) in values.get_ref() {
            let Some(spec) = rule.params().iter().find(|s| s.name == name) else {
                return Err(at.value(
                    value.span(),
                    format!("{key}.{name}"),
                    format!(
                        "rule {} of check {number} has no parameter {name:?}",
                        rule.id()
                    ),
                ));
            };
            let v = param_value(spec.kind, value.get_ref())
                .map_err(|m| at.value(value.span(), format!("{key}.{name}"), m))?;
            refined.push(format!("{number}: {name} = {v}"));
            entry.params.0.insert(spec.name, v);
        }
    }
    for (i, row) in doc.recommendation.iter().enumerate() {
        let key = format!("recommendation[{i}]");
        let span = row.span();
        let row = row.get_ref();
        if !number_ok(&row.number) {
            return Err(at.value(
                span,
                format!("{key}.number"),
                format!(
                    "{:?} is not a recommendation number (digits and dots: `6.1.2`)",
                    row.number
                ),
            ));
        }
        if !row.number.contains('.')
            || base.checks.iter().any(|e| e.id == row.number.as_str())
            || base.title_of(&row.number).is_some()
            || out.named.iter().any(|n| n.number == row.number)
        {
            return Err(at.value(
                span,
                format!("{key}.number"),
                format!(
                    "{} is a section, or already named (by {} or earlier in this file)",
                    row.number, base.id
                ),
            ));
        }
        let level = match row.level {
            1 => Level::L1,
            2 => Level::L2,
            n => {
                return Err(at.value(
                    span,
                    format!("{key}.level"),
                    format!("{n}: a profile level is 1 or 2"),
                ))
            }
        };
        if row.title.trim().is_empty() || row.title.contains('\n') {
            return Err(at.value(span, format!("{key}.title"), "one non-empty line"));
        }
        out.named.push(Named {
            number: leak(row.number.clone()),
            title: leak(row.title.clone()),
            level,
        });
    }
    out.named.sort_by_key(|n| super::model::id_key(n.number));
    if let Some(total) = out.recommendations {
        let listed = base.checks.len()
            + base.unreached.iter().filter(|u| !u.is_section()).count()
            + out.named.len();
        if listed > total as usize {
            return Err(at.value(
                0..0,
                "recommendation",
                format!(
                    "names {} recommendations; with the {} of {} that is more than its {total}",
                    out.named.len(),
                    listed - out.named.len(),
                    base.id
                ),
            ));
        }
    }
    out.tailoring = Some(Tailoring {
        id: doc.id,
        file: file.to_string(),
        sha256: hex::encode(mcp_probe_schema::bundle::sha256(bytes)),
        deselected,
        refined,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> String {
        crate::benchmark::EMBEDDED[0].1.to_string()
    }

    fn def(text: &str) -> Result<Benchmark, BenchmarkError> {
        parse_definition("t.toml", text.as_bytes(), Origin::File("t.toml".into()))
    }

    fn tailoring(text: &str) -> Result<Benchmark, BenchmarkError> {
        let embedded = Benchmark::embedded().expect("embedded");
        parse_file("p.toml", text.as_bytes(), embedded)
    }

    fn value_error(e: BenchmarkError) -> (usize, String, String) {
        match e {
            BenchmarkError::Value {
                line, key, message, ..
            } => (line, key, message),
            other => panic!("not a value error: {other}"),
        }
    }

    #[test]
    fn an_unknown_rule_is_refused_with_file_line_and_key() {
        let text = base().replacen("rule = \"tls-required\"", "rule = \"tls-requird\"", 1);
        let line = text
            .lines()
            .position(|l| l.contains("tls-requird"))
            .expect("edited")
            + 1;
        let e = def(&text).expect_err("unknown rule");
        let shown = e.to_string();
        assert!(shown.starts_with("--benchmark t.toml: line "), "{shown}");
        let (l, key, message) = value_error(e);
        assert_eq!(l, line);
        assert_eq!(key, "check[5].rule");
        assert!(
            message.contains("\"tls-requird\" is not a rule"),
            "{message}"
        );
    }

    #[test]
    fn unknown_keys_and_misspelt_tables_are_refused_not_ignored() {
        let e = def(&base().replacen("\n[[check]]\n", "\n[[chek]]\n", 1)).expect_err("chek");
        assert!(
            matches!(&e, BenchmarkError::Syntax { message, .. } if message.contains("chek") && message.starts_with("line ")),
            "{e}"
        );
        let e = def(&base().replacen("eras = ", "era = ", 1)).expect_err("era");
        assert!(e.to_string().contains("era"), "{e}");
    }

    #[test]
    fn parameters_are_checked_against_the_rule() {
        let e = def(&base().replace(
            "params = { max_token_lifetime_seconds = 3600 }",
            "params = { max_token_lifetime = 3600 }",
        ))
        .expect_err("unknown parameter");
        let (_, key, message) = value_error(e);
        assert!(key.ends_with("params.max_token_lifetime"), "{key}");
        assert!(
            message.contains("it takes max_token_lifetime_seconds"),
            "{message}"
        );
        let e = def(&base().replace("params = { max_token_lifetime_seconds = 3600 }\n", ""))
            .expect_err("missing parameter");
        assert!(value_error(e).2.contains("needs a value"));
        let e = def(&base().replace(
            "max_token_lifetime_seconds = 3600",
            "max_token_lifetime_seconds = \"an hour\"",
        ))
        .expect_err("wrong kind");
        assert!(value_error(e)
            .2
            .contains("expected an integer, found a string"));
        let e = def(&base().replace(
            "revision_floor = \"2025-06-18\"",
            "revision_floor = \"June\"",
        ))
        .expect_err("bad revision");
        assert!(value_error(e).2.contains("not a protocol revision"));
    }

    /// The number of the first check graded by `rule` in the built-in definition.
    fn number(rule: &str) -> &'static str {
        Benchmark::builtin()
            .first_row_of(rule)
            .expect(rule)
            .id
            .as_str()
    }

    #[test]
    fn rows_are_checked() {
        let (pinned, baseline) = (
            number("revisions-pinned"),
            number("capabilities-match-baseline"),
        );
        let e = def(&base().replacen(
            &format!("number = \"{baseline}\""),
            &format!("number = \"{pinned}\""),
            1,
        ))
        .expect_err("twice");
        assert!(value_error(e)
            .2
            .contains(&format!("{pinned} is given twice")));
        let e = def(&base().replacen("level = 1", "level = 3", 1)).expect_err("level");
        assert!(value_error(e).2.contains("1 or 2"));
        // `cache-freshness` reads no per-era leg.
        let text = base();
        let at = text
            .find(&format!("number = \"{}\"", number("cache-freshness")))
            .expect("cache-freshness");
        let (head, tail) = text.split_at(at);
        let e = def(&format!(
            "{head}{}",
            tail.replacen("eras = \"negotiated\"", "eras = \"every\"", 1)
        ))
        .expect_err("eras");
        assert!(value_error(e).2.contains("negotiated era only"));
        let e = def(&base().replacen("format = \"mcp-probe-benchmark/1\"", "format = \"x\"", 1))
            .expect_err("format");
        assert!(value_error(e).1 == "format");
    }

    #[test]
    fn a_tailoring_deselects_refines_and_says_so() {
        let (stdio, keys, tokens) = (
            number("stdio-preferred"),
            number("idempotency-keys"),
            number("short-lived-tokens"),
        );
        let b = tailoring(&format!(
            "format = \"mcp-probe-tailoring/1\"\nid = \"acme\"\nextends = \"cis-mcp-server-1.0.0\"\n\
             deselect = [\"{stdio}\", \"{keys}\"]\n[params.\"{tokens}\"]\nmax_token_lifetime_seconds = 900\n",
        ))
        .expect("tailoring");
        let base = Benchmark::builtin();
        assert_eq!(b.checks.len(), base.checks.len() - 2);
        assert!(b.entry(stdio).is_none());
        let t = b.tailoring.as_ref().expect("tailoring");
        assert_eq!(t.deselected, [stdio, keys]);
        assert_eq!(
            t.refined,
            [format!("{tokens}: max_token_lifetime_seconds = 900")]
        );
        assert_eq!(
            b.entry(tokens).expect("short-lived-tokens").params.0["max_token_lifetime_seconds"],
            ParamValue::Int(900)
        );
        assert_eq!(b.sha256, base.sha256);
        assert!(b.title().ends_with("tailored by acme"));
        let select = tailoring(&format!(
            "format = \"mcp-probe-tailoring/1\"\nid = \"x\"\nextends = \"cis-mcp-server-1.0.0\"\nselect = [\"{}\"]\n",
            number("revisions-pinned")
        ))
        .expect("select");
        assert_eq!(select.checks.len(), 1);
        assert_eq!(
            select.tailoring.expect("t").deselected.len(),
            base.checks.len() - 1
        );
    }

    #[test]
    fn a_choice_may_be_left_out_and_takes_only_its_words() {
        let base = Benchmark::builtin();
        let row = base
            .checks
            .iter()
            .find(|e| e.rule == "prompt-arguments-validated")
            .expect("a row");
        assert!(row.params.0.is_empty(), "{:?}", row.params);
        let tailor = |value: &str| {
            tailoring(&format!(
                "format = \"mcp-probe-tailoring/1\"\nid = \"x\"\nextends = \"cis-mcp-server-1.0.0\"\n\
                 [params.\"{}\"]\nrefusal_with_other_code = {value}\n",
                row.id
            ))
        };
        let b = tailor("\"pass\"").expect("a word");
        assert_eq!(
            b.entry(row.id.as_str()).expect("row").params.0["refusal_with_other_code"],
            ParamValue::Text("pass")
        );
        let e = tailor("\"maybe\"").expect_err("not a word");
        assert!(value_error(e).2.contains("is not one of fail, pass"));
        let e = tailor("1").expect_err("not a string");
        assert!(value_error(e).2.contains("expected a word"));
    }

    #[test]
    fn a_tailoring_names_the_recommendations_the_definition_does_not() {
        let head =
            "format = \"mcp-probe-tailoring/1\"\nid = \"x\"\nextends = \"cis-mcp-server-1.0.0\"\n";
        let rec = |n: &str| {
            format!("[[recommendation]]\nnumber = \"{n}\"\ntitle = \"t {n}\"\nlevel = 2\n")
        };
        // Numbers past any the definition lists: made up here, not benchmark text.
        let b = tailoring(&format!("{head}{}{}", rec("99.2"), rec("99.1"))).expect("named");
        assert_eq!(
            b.named.iter().map(|n| n.number).collect::<Vec<_>>(),
            ["99.1", "99.2"]
        );
        assert!(b.is_unreached_recommendation("99.1"));
        assert_eq!(b.recommendations, Some(55));
        let taken = number("tls-required");
        let e = tailoring(&format!("{head}{}", rec(taken))).expect_err("a check");
        assert!(value_error(e).2.contains("already named"));
        let e = tailoring(&format!("{head}{}", rec("99"))).expect_err("a section");
        assert!(value_error(e).2.contains("is a section"));
        let many: String = (1..=20).map(|i| rec(&format!("99.{i}"))).collect();
        let e = tailoring(&format!("{head}{many}")).expect_err("too many");
        assert!(value_error(e).2.contains("more than its 55"));
    }

    #[test]
    fn recommendations_are_at_least_what_the_definition_lists() {
        let e = def(&base().replacen("recommendations = 55", "recommendations = 40", 1))
            .expect_err("fewer");
        assert!(value_error(e).2.contains("fewer than the 46"));
        let b = def(&base().replacen("recommendations = 55\n", "", 1)).expect("optional");
        assert_eq!(b.recommendations, None);
    }

    #[test]
    fn bad_tailorings_are_refused() {
        let head = "format = \"mcp-probe-tailoring/1\"\nid = \"x\"\n";
        let e = tailoring(&format!("{head}extends = \"cis-9\"\n")).expect_err("extends");
        let (line, key, _) = value_error(e);
        assert_eq!((line, key.as_str()), (3, "extends"));
        // A recommendation of the benchmark no probe reaches: a number, not a check.
        let unreached = Benchmark::builtin()
            .unreached
            .iter()
            .find(|u| !u.is_section())
            .expect("an unreached recommendation")
            .section;
        let e = tailoring(&format!(
            "{head}extends = \"cis-mcp-server-1.0.0\"\ndeselect = [\"{unreached}\"]\n"
        ))
        .expect_err("unknown number");
        assert!(value_error(e)
            .2
            .contains(&format!("{unreached} is not a check")));
        let tls = number("tls-required");
        let e = tailoring(&format!(
            "{head}extends = \"cis-mcp-server-1.0.0\"\n[params.\"{tls}\"]\nfloor = 1\n"
        ))
        .expect_err("no such parameter");
        let (line, key, _) = value_error(e);
        assert_eq!(
            (line, key.as_str()),
            (5, format!("params.\"{tls}\".floor").as_str())
        );
        let e = tailoring(&format!(
            "{head}extends = \"cis-mcp-server-1.0.0\"\nselect = [\"{}\"]\ndeselect = [\"{}\"]\n",
            number("revisions-pinned"),
            number("capabilities-match-baseline")
        ))
        .expect_err("both");
        assert!(value_error(e).2.contains("not both"));
    }
}
