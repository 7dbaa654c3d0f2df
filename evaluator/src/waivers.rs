//! Waivers (`mcp-grade --waivers FILE`): findings the operator has accepted for a time,
//! so a pipeline can gate on the rest. A TOML file of `[[waiver]]` tables:
//!
//! ```toml
//! [[waiver]]
//! check = "<number>"                 # a check's number in the definition graded, as reports print it
//! endpoint = "https://*.example/mcp" # exact, or a glob (`*` any run, `?` one character); "*" for all
//! reason = "revision pinning tracked in SEC-123"
//! expires = 2027-03-31               # a date (TOML date or "YYYY-MM-DD"), the last day it applies
//! ```
//!
//! A waiver in force turns a result that would fail the run (see `--fail-on`) into a
//! waived one: the report shows it with the reason and it does not set the exit status.
//! An expired waiver no longer applies and the result says so. A waiver in force that
//! waives nothing (it matches no result, or the matching results no longer fail) is
//! stale. Each stale and expired waiver is named on stderr and in every report format,
//! and `--strict-waivers` makes either a usage error. An invalid
//! file is a usage error naming the file and the line.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::Deserialize;

use crate::benchmark::Benchmark;
use crate::toml_input::line_of;

/// One waiver, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    /// The number of the check it waives, in the benchmark definition graded.
    pub check: &'static str,
    /// The endpoint, exact or a glob.
    pub endpoint: String,
    /// Why the finding is accepted.
    pub reason: String,
    /// The last day it applies.
    pub expires: NaiveDate,
    /// The line of its `[[waiver]]` header in the file (1-based).
    pub line: usize,
}

impl Waiver {
    /// True when it names `check` on `endpoint`.
    pub fn matches(&self, check: &str, endpoint: &str) -> bool {
        self.check == check && glob(&self.endpoint, endpoint)
    }

    /// True when `today` is after its last day.
    pub fn expired(&self, today: NaiveDate) -> bool {
        today > self.expires
    }
}

/// A loaded waivers file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waivers {
    /// The file as given.
    pub path: PathBuf,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
    /// Its waivers, in file order.
    pub list: Vec<Waiver>,
}

/// Why a waivers file cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum WaiversError {
    /// The file could not be read.
    #[error("--waivers {}: cannot read it: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid, at a line.
    #[error("--waivers {}: line {line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    #[serde(default)]
    waiver: Vec<toml::Spanned<Raw>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    check: toml::Spanned<String>,
    endpoint: toml::Spanned<String>,
    reason: toml::Spanned<String>,
    expires: toml::Spanned<toml::Value>,
}

impl Waivers {
    /// Read and validate `path`: every waiver names a check of `bm`.
    pub fn load(path: &Path, bm: &Benchmark) -> Result<Waivers, WaiversError> {
        let bytes = std::fs::read(path).map_err(|source| WaiversError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let list = parse(&bytes, bm).map_err(|(line, message)| WaiversError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        })?;
        Ok(Waivers {
            path: path.to_path_buf(),
            sha256: hex::encode(mcp_probe_schema::bundle::sha256(&bytes)),
            list,
        })
    }
}

/// Parse the file's bytes; an error is `(line, message)`.
fn parse(bytes: &[u8], bm: &Benchmark) -> Result<Vec<Waiver>, (usize, String)> {
    let (text, doc): (&str, Doc) = crate::toml_input::read(bytes)?;
    let mut out = Vec::with_capacity(doc.waiver.len());
    for w in doc.waiver {
        let line = line_of(text, w.span().start);
        let raw = w.into_inner();
        let at = |s: std::ops::Range<usize>| line_of(text, s.start);
        let check = bm
            .entry(raw.check.get_ref().trim())
            .map(|e| e.id.as_str())
            .ok_or_else(|| {
                (
                    at(raw.check.span()),
                    format!(
                        "check {:?} is not a check of {}{}",
                        raw.check.get_ref(),
                        bm.title(),
                        examples(bm)
                    ),
                )
            })?;
        let endpoint = raw.endpoint.get_ref().trim().to_string();
        if endpoint.is_empty() {
            return Err((
                at(raw.endpoint.span()),
                "endpoint is empty (\"*\" waives the check on every endpoint)".into(),
            ));
        }
        let reason = raw.reason.get_ref().trim().to_string();
        if reason.is_empty() {
            return Err((
                at(raw.reason.span()),
                "reason is empty: say why the finding is accepted".into(),
            ));
        }
        let shown = match raw.expires.get_ref() {
            toml::Value::String(s) => format!("{s:?}"),
            toml::Value::Datetime(d) => d.to_string(),
            other => format!("({})", other.type_str()),
        };
        let text_date = match raw.expires.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Datetime(d) if d.time.is_none() && d.offset.is_none() => d.to_string(),
            _ => String::new(),
        };
        let expires = NaiveDate::parse_from_str(text_date.trim(), "%Y-%m-%d").map_err(|_| {
            (
                at(raw.expires.span()),
                format!("expires {shown} is not a date (YYYY-MM-DD)"),
            )
        })?;
        out.push(Waiver {
            check,
            endpoint,
            reason,
            expires,
            line,
        });
    }
    Ok(out)
}

/// `pattern` matches all of `text`: `*` any run of characters (also none), `?` one
/// character, anything else itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Which verdicts fail a run (`--fail-on`): each level includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum FailOn {
    /// Only FAIL.
    Fail,
    /// FAIL and ERROR (the default).
    #[default]
    Error,
    /// FAIL, ERROR and UNKNOWN.
    Unknown,
}

impl FailOn {
    /// Parse a `--fail-on` value (case-insensitive).
    pub fn parse(s: &str) -> Result<FailOn, String> {
        match s.to_ascii_lowercase().as_str() {
            "fail" => Ok(FailOn::Fail),
            "error" => Ok(FailOn::Error),
            "unknown" => Ok(FailOn::Unknown),
            _ => Err("one of fail, error, unknown".into()),
        }
    }

    /// True when `v` fails the run.
    pub fn fails(self, v: crate::verdict::Verdict) -> bool {
        use crate::verdict::Verdict;
        match v {
            Verdict::Fail => true,
            Verdict::Error => self >= FailOn::Error,
            Verdict::Unknown => self >= FailOn::Unknown,
            _ => false,
        }
    }

    /// The word, as typed.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Fail => "fail",
            FailOn::Error => "error",
            FailOn::Unknown => "unknown",
        }
    }
}

/// What a waiver did to one result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// True when it waived the result; false when it matched but had expired.
    pub active: bool,
    /// Its reason.
    pub reason: String,
    /// Its last day.
    pub expires: NaiveDate,
    /// Its line in the file.
    pub line: usize,
}

/// A waiver in force that waived nothing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// The waiver.
    pub waiver: Waiver,
    /// `matches nothing` or `matches only results that do not fail the run: …`.
    pub why: String,
}

/// The waivers of a report: the file, and the stale ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The file as given.
    pub file: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// The date the waivers were judged on.
    pub today: NaiveDate,
    /// How many results they waived.
    pub waived: usize,
    /// Waivers in force that waived nothing.
    pub stale: Vec<Stale>,
    /// Waivers past their date.
    pub expired: Vec<Waiver>,
}

impl Applied {
    /// One line per stale and per expired waiver, stale first, each in file order:
    /// `line N: stale waiver of CHECK on ENDPOINT: it WHY` and `line N: expired waiver of
    /// CHECK on ENDPOINT: its last day was DATE, it no longer applies (REASON)`. The same
    /// words on stderr and in every report format; the caller escapes them.
    pub fn notices(&self) -> Vec<String> {
        let stale = self.stale.iter().map(|s| {
            format!(
                "line {}: stale waiver of {} on {}: it {}",
                s.waiver.line, s.waiver.check, s.waiver.endpoint, s.why
            )
        });
        let expired = self.expired.iter().map(|w| {
            format!(
                "line {}: expired waiver of {} on {}: its last day was {}, it no longer applies ({})",
                w.line,
                w.check,
                w.endpoint,
                w.expires,
                w.reason
            )
        });
        stale.chain(expired).collect()
    }
}

/// Today's date, UTC.
pub fn today() -> NaiveDate {
    chrono::Utc::now().date_naive()
}

/// ` (e.g. "first", "last")`: the numbers of the definition's first and last checks, so
/// the example is a check of the definition graded (a tailoring may deselect any other).
fn examples(bm: &Benchmark) -> String {
    match (bm.checks.first(), bm.checks.last()) {
        (Some(a), Some(b)) if a.id != b.id => format!(" (e.g. \"{}\", \"{}\")", a.id, b.id),
        (Some(a), _) => format!(" (e.g. \"{}\")", a.id),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_endpoints() {
        assert!(glob("*", "http://a/mcp"));
        assert!(glob("http://a/mcp", "http://a/mcp"));
        assert!(!glob("http://a/mcp", "http://a/mcp2"));
        assert!(glob("http://127.0.0.1:*/mcp", "http://127.0.0.1:8080/mcp"));
        assert!(!glob("http://127.0.0.1:*/mcp", "http://127.0.0.2:8080/mcp"));
        assert!(glob("https://*.example/*", "https://a.b.example/x/y"));
        assert!(glob("http://h:80?/mcp", "http://h:801/mcp"));
        assert!(!glob("", "x"));
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
    fn a_valid_file_is_read_in_order_with_lines() {
        let (pinned, null_id) = (number("revisions-pinned"), number("null-id-rejected"));
        let file = format!(
            "# accepted findings\n[[waiver]]\ncheck = \"{pinned}\"\nendpoint = \"*\"\nreason = \"tracked\"\nexpires = 2027-03-31\n\n[[waiver]]\ncheck = \"{null_id}\"\nendpoint = \"http://a/mcp\"\nreason = \"r\"\nexpires = \"2026-01-01\"\n"
        );
        let w = parse(file.as_bytes(), Benchmark::builtin()).expect("valid");
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].check, w[0].line), (pinned, 2));
        assert_eq!(
            w[1].expires,
            NaiveDate::from_ymd_opt(2026, 1, 1).expect("date")
        );
        assert_eq!(w[1].line, 8);
        assert!(w[1].matches(null_id, "http://a/mcp"));
        assert!(!w[1].matches(pinned, "http://a/mcp"));
        assert!(w[1].expired(NaiveDate::from_ymd_opt(2026, 1, 2).expect("date")));
        assert!(!w[1].expired(NaiveDate::from_ymd_opt(2026, 1, 1).expect("date")));
    }

    #[test]
    fn errors_name_the_line() {
        let bad = |s: &str| parse(s.as_bytes(), Benchmark::builtin()).expect_err("invalid");
        let pinned = number("revisions-pinned");
        let head = format!("[[waiver]]\ncheck = \"{pinned}\"\nendpoint = \"*\"\nreason = \"r\"\n");
        assert_eq!(bad(&format!("{head}expires = 2027-13-01\n")).0, 5);
        let (line, m) = bad(&format!("{head}expires = \"next year\"\n"));
        assert_eq!(line, 5);
        assert!(m.contains("not a date"), "{m}");
        let absent = "99.99";
        assert!(Benchmark::builtin().entry(absent).is_none());
        let (line, m) = bad(&format!(
            "[[waiver]]\ncheck = \"{absent}\"\nendpoint = \"*\"\nreason = \"r\"\nexpires = 2027-01-01\n",
        ));
        assert_eq!(line, 2);
        assert!(m.contains(&format!("\"{absent}\" is not a check")), "{m}");
        let (first, last) = (
            &Benchmark::builtin().checks[0],
            Benchmark::builtin().checks.last(),
        );
        assert!(
            m.ends_with(&format!(
                " (e.g. \"{}\", \"{}\")",
                first.id,
                last.expect("checks").id
            )),
            "{m}"
        );
        let (line, m) = bad(&format!("{head}expires = 2027-01-01\nowner = \"me\"\n"));
        assert!(m.contains("owner"), "{m}");
        assert!((1..=6).contains(&line), "{line}");
        let (line, m) = bad(&format!(
            "[[waiver]]\ncheck = \"{pinned}\"\nendpoint = \"*\"\nexpires = 2027-01-01\n"
        ));
        assert!(m.contains("reason"), "{m}");
        assert_eq!(line, 1);
        let (line, _) = bad(&format!("[[waiver]]\ncheck = \"{pinned}\"\nendpoint = \"  \"\nreason = \"r\"\nexpires = 2027-01-01\n"));
        assert_eq!(line, 3);
        assert_eq!(bad("[[waiver]\n").0, 1);
    }
}
