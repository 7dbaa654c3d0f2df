//! Operator attestations (`mcp-grade --attestations FILE`): what the operator states
//! about recommendations no probe decides, with who stated it, when, and the evidence.
//! A TOML file of `[[attestation]]` tables:
//!
//! ```toml
//! [[attestation]]
//! recommendation = "4.1.1"      # a number as the definition graded numbers it
//! status = "satisfied"          # satisfied | not-satisfied | not-applicable
//! by = "J. Operator"
//! date = 2026-10-01             # a date (TOML date or "YYYY-MM-DD")
//! evidence = "SEC-123"          # a ticket id, a URL, or sha256:<hex> of a file
//! expires = 2027-10-01          # optional: the last day it counts
//! comment = "reviewed with the platform team"   # optional
//! ```
//!
//! Attestations are their own source in reports, never mixed with observations: for a
//! reported-only check or a recommendation no probe reaches an attestation completes it;
//! for a check decided from the wire the verdict stands, and an attestation that
//! contradicts it is shown beside it as a conflict ([`crate::report::coverage`]). An
//! expired attestation is named on stderr and counts as not attested. An invalid file is
//! a usage error naming the file and the line.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::Deserialize;

use crate::benchmark::Benchmark;
use crate::toml_input::line_of;

/// What an attestation states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AttestedStatus {
    /// The recommendation is met.
    Satisfied,
    /// The recommendation is not met.
    NotSatisfied,
    /// The recommendation does not apply to this deployment.
    NotApplicable,
}

impl AttestedStatus {
    /// As the file spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            AttestedStatus::Satisfied => "satisfied",
            AttestedStatus::NotSatisfied => "not-satisfied",
            AttestedStatus::NotApplicable => "not-applicable",
        }
    }

    fn parse(s: &str) -> Option<AttestedStatus> {
        match s {
            "satisfied" => Some(AttestedStatus::Satisfied),
            "not-satisfied" => Some(AttestedStatus::NotSatisfied),
            "not-applicable" => Some(AttestedStatus::NotApplicable),
            _ => None,
        }
    }
}

/// One attestation, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    /// The recommendation's number in the definition graded.
    pub recommendation: &'static str,
    /// What it states.
    pub status: AttestedStatus,
    /// Who states it.
    pub by: String,
    /// When they stated it.
    pub date: NaiveDate,
    /// A ticket id, a URL, or `sha256:<hex>` of a file.
    pub evidence: String,
    /// The last day it counts, if it has one.
    pub expires: Option<NaiveDate>,
    /// A comment.
    pub comment: Option<String>,
    /// The line of its `[[attestation]]` header in the file (1-based).
    pub line: usize,
}

impl Attestation {
    /// True when `today` is after its last day.
    pub fn expired(&self, today: NaiveDate) -> bool {
        self.expires.is_some_and(|e| today > e)
    }

    /// `satisfied by X on DATE (EVIDENCE)`: the words every report format uses (the caller
    /// escapes them).
    pub fn words(&self) -> String {
        format!(
            "{} by {} on {} ({})",
            self.status.as_str(),
            self.by,
            self.date,
            self.evidence
        )
    }

    /// `line N: expired attestation of REC by X: its last day was DATE, it no longer
    /// counts`: on stderr and in every report format that lists attestations.
    pub fn expiry_notice(&self) -> String {
        format!(
            "line {}: expired attestation of {} by {}: its last day was {}, it no longer counts",
            self.line,
            self.recommendation,
            self.by,
            self.expires.map(|d| d.to_string()).unwrap_or_default()
        )
    }
}

/// A loaded attestations file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestations {
    /// The file as given.
    pub path: PathBuf,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
    /// Its attestations, in file order.
    pub list: Vec<Attestation>,
}

/// Why an attestations file cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum AttestationsError {
    /// The file could not be read.
    #[error("--attestations {}: cannot read it: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid, at a line.
    #[error("--attestations {}: line {line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// An attestations file (docs/schemas/attestations.schema.json).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-grade attestations")]
pub struct AttestationsFile {
    /// The operator's attestations.
    #[serde(default)]
    #[schemars(with = "Vec<AttestationRow>")]
    attestation: Vec<toml::Spanned<AttestationRow>>,
}

/// One `[[attestation]]` table.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttestationRow {
    /// The recommendation's number, as the definition graded numbers it (`4.1.1`): a
    /// check, an `[[unreached]]` recommendation, or one a tailoring names.
    #[schemars(with = "String")]
    recommendation: toml::Spanned<String>,
    /// `satisfied`, `not-satisfied` or `not-applicable`.
    #[schemars(with = "AttestedStatus")]
    status: toml::Spanned<String>,
    /// Who attests it.
    #[schemars(with = "String")]
    by: toml::Spanned<String>,
    /// When (`YYYY-MM-DD`).
    #[schemars(with = "String")]
    date: toml::Spanned<toml::Value>,
    /// A reference to the evidence: a ticket id, a URL, or `sha256:<hex>` of a file.
    #[schemars(with = "String")]
    evidence: toml::Spanned<String>,
    /// The last day it counts (`YYYY-MM-DD`); after it, it counts as not attested.
    #[schemars(with = "Option<String>")]
    expires: Option<toml::Spanned<toml::Value>>,
    /// A comment.
    comment: Option<String>,
}

/// The JSON Schema of attestations files (docs/schemas/attestations.schema.json).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(AttestationsFile)).unwrap_or_default()
}

impl Attestations {
    /// Read and validate `path`: every attestation names a recommendation of `bm`.
    pub fn load(path: &Path, bm: &Benchmark) -> Result<Attestations, AttestationsError> {
        let bytes = std::fs::read(path).map_err(|source| AttestationsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let list = parse(&bytes, bm).map_err(|(line, message)| AttestationsError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        })?;
        Ok(Attestations {
            path: path.to_path_buf(),
            sha256: hex::encode(mcp_probe_schema::bundle::sha256(&bytes)),
            list,
        })
    }

    /// The attestation of `recommendation` in force on `today`, if any.
    pub fn of(&self, recommendation: &str, today: NaiveDate) -> Option<&Attestation> {
        self.list
            .iter()
            .find(|a| a.recommendation == recommendation && !a.expired(today))
    }
}

fn date_of(v: &toml::Value) -> Option<NaiveDate> {
    let text = match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Datetime(d) if d.time.is_none() && d.offset.is_none() => d.to_string(),
        _ => return None,
    };
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}

fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Datetime(d) => d.to_string(),
        other => format!("({})", other.type_str()),
    }
}

/// Parse the file's bytes; an error is `(line, message)`.
fn parse(bytes: &[u8], bm: &Benchmark) -> Result<Vec<Attestation>, (usize, String)> {
    let (text, doc): (&str, AttestationsFile) = crate::toml_input::read(bytes)?;
    let mut out: Vec<Attestation> = Vec::with_capacity(doc.attestation.len());
    for a in doc.attestation {
        let line = line_of(text, a.span().start);
        let raw = a.into_inner();
        let at = |s: std::ops::Range<usize>| line_of(text, s.start);
        let number = raw.recommendation.get_ref().trim();
        let recommendation = bm
            .entry(number)
            .map(|e| e.id.as_str())
            .or_else(|| {
                bm.unreached
                    .iter()
                    .find(|u| !u.is_section() && u.section == number)
                    .map(|u| u.section)
            })
            .or_else(|| {
                bm.named
                    .iter()
                    .find(|n| n.number == number)
                    .map(|n| n.number)
            })
            .ok_or_else(|| {
                (
                    at(raw.recommendation.span()),
                    format!(
                        "attestation of {number:?}: not a recommendation of {} (a check, an \
                         unreached recommendation, or one a tailoring names)",
                        bm.title()
                    ),
                )
            })?;
        if let Some(first) = out.iter().find(|x| x.recommendation == recommendation) {
            return Err((
                line,
                format!(
                    "attestation of {recommendation}: given twice (first at line {})",
                    first.line
                ),
            ));
        }
        let status = AttestedStatus::parse(raw.status.get_ref().trim()).ok_or_else(|| {
            (
                at(raw.status.span()),
                format!(
                    "attestation of {recommendation}: status {:?} is not one of satisfied, \
                     not-satisfied, not-applicable",
                    raw.status.get_ref()
                ),
            )
        })?;
        let by = raw.by.get_ref().trim().to_string();
        if by.is_empty() {
            return Err((
                at(raw.by.span()),
                format!("attestation of {recommendation}: `by` is empty: say who attests it"),
            ));
        }
        let date = date_of(raw.date.get_ref()).ok_or_else(|| {
            (
                at(raw.date.span()),
                format!(
                    "attestation of {recommendation}: date {} is not a date (YYYY-MM-DD)",
                    shown(raw.date.get_ref())
                ),
            )
        })?;
        let expires = match &raw.expires {
            None => None,
            Some(e) => Some(date_of(e.get_ref()).ok_or_else(|| {
                (
                    at(e.span()),
                    format!(
                        "attestation of {recommendation}: expires {} is not a date (YYYY-MM-DD)",
                        shown(e.get_ref())
                    ),
                )
            })?),
        };
        let evidence = raw.evidence.get_ref().trim().to_string();
        let hash_ok = evidence
            .strip_prefix("sha256:")
            .is_none_or(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if evidence.is_empty() || evidence.contains('\n') || !hash_ok {
            return Err((
                at(raw.evidence.span()),
                format!(
                    "attestation of {recommendation}: evidence is a ticket id, a URL, or \
                     sha256:<64 hex digits> of a file, on one line"
                ),
            ));
        }
        out.push(Attestation {
            recommendation,
            status,
            by,
            date,
            evidence,
            expires,
            comment: raw
                .comment
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty()),
            line,
        });
    }
    Ok(out)
}

/// What an attestation in force is to the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attested {
    /// The attestation.
    pub attestation: Attestation,
    /// The recommendation's title.
    pub title: &'static str,
    /// True when a check decided from the wire (source `wire` or `in-part`) grades the
    /// recommendation: the attestation stands beside the observation.
    pub beside_wire: bool,
    /// When it contradicts the wire: the verdict it contradicts and the servers (0-based)
    /// that got it.
    pub conflict: Option<(crate::verdict::Verdict, Vec<usize>)>,
}

/// The `--attestations` file of a report and what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The file as given.
    pub file: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// The date the attestations were judged on.
    pub today: NaiveDate,
    /// The attestations in force, in number order.
    pub list: Vec<Attested>,
    /// The attestations past their last day, in file order: they count as not attested.
    pub expired: Vec<Attestation>,
}

impl Applied {
    /// The attestation in force of `number`, if any.
    pub fn of(&self, number: &str) -> Option<&Attested> {
        self.list
            .iter()
            .find(|a| a.attestation.recommendation == number)
    }

    /// The conflicts with the wire.
    pub fn conflicts(&self) -> usize {
        self.list.iter().filter(|a| a.conflict.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(s: &str) -> (usize, String) {
        parse(s.as_bytes(), Benchmark::builtin()).expect_err("invalid")
    }

    fn unreached() -> &'static str {
        Benchmark::builtin()
            .unreached
            .iter()
            .find(|u| !u.is_section())
            .expect("an unreached recommendation")
            .section
    }

    #[test]
    fn a_valid_file_is_read_with_lines() {
        let u = unreached();
        let file = format!(
            "# ours\n[[attestation]]\nrecommendation = \"{u}\"\nstatus = \"satisfied\"\nby = \"ops\"\n\
             date = 2026-10-01\nevidence = \"SEC-1\"\nexpires = \"2027-01-01\"\n"
        );
        let a = parse(file.as_bytes(), Benchmark::builtin()).expect("valid");
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].recommendation, a[0].line), (u, 2));
        assert_eq!(a[0].words(), "satisfied by ops on 2026-10-01 (SEC-1)");
        assert!(a[0].expired(NaiveDate::from_ymd_opt(2027, 1, 2).expect("date")));
        assert!(!a[0].expired(NaiveDate::from_ymd_opt(2027, 1, 1).expect("date")));
    }

    #[test]
    fn errors_name_the_line_and_the_entry() {
        let u = unreached();
        let head = |rec: &str| {
            format!(
                "[[attestation]]\nrecommendation = \"{rec}\"\nby = \"ops\"\nevidence = \"T-1\"\n"
            )
        };
        let (line, m) = bad(&format!(
            "{}status = \"satisfied\"\ndate = 2026-10-01\n",
            head("99.9")
        ));
        assert_eq!(line, 2);
        assert!(
            m.contains("attestation of \"99.9\": not a recommendation"),
            "{m}"
        );
        let (line, m) = bad(&format!("{}status = \"ok\"\ndate = 2026-10-01\n", head(u)));
        assert_eq!(line, 5);
        assert!(m.contains("status \"ok\" is not one of"), "{m}");
        let (line, m) = bad(&format!(
            "{}status = \"satisfied\"\ndate = \"soon\"\n",
            head(u)
        ));
        assert_eq!(line, 6);
        assert!(m.contains("date \"soon\" is not a date"), "{m}");
        let one = format!("{}status = \"satisfied\"\ndate = 2026-10-01\n", head(u));
        let (line, m) = bad(&format!("{one}{one}"));
        assert_eq!(line, 7);
        assert!(m.contains("given twice (first at line 1)"), "{m}");
        let (_, m) = bad(&format!(
            "{}status = \"satisfied\"\ndate = 2026-10-01\n",
            head(u).replace("T-1", "sha256:12")
        ));
        assert!(m.contains("sha256:<64 hex digits>"), "{m}");
        // A whole section is not a recommendation.
        let section = Benchmark::builtin()
            .sections_unreached()
            .next()
            .expect("a section")
            .section;
        let (_, m) = bad(&format!(
            "{}status = \"satisfied\"\ndate = 2026-10-01\n",
            head(section)
        ));
        assert!(m.contains("not a recommendation"), "{m}");
    }
}
