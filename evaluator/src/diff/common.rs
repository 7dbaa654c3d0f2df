//! What the two kinds of `mcp-grade diff` share: the error, the options, how servers are
//! matched, and how an input's kind is told from its bytes.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::exit::ExitStatus;
use crate::fmt::escape_line;
use crate::load::Error;

/// The `schema` value of the JSON report that `diff` reads.
pub const REPORT_SCHEMA: &str = "mcp-grade-report/1";

/// Why `diff` cannot compare: a usage error (exit 2) or an input that cannot be
/// compared (exit 3).
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The bundles are of two endpoints (under `--match endpoint`).
    #[error("{old} is a bundle of {old_endpoint} and {new} of {new_endpoint}; diff compares two bundles of one endpoint (or of one server: --match identity)")]
    Endpoints {
        /// OLD.
        old: String,
        /// Its endpoint.
        old_endpoint: String,
        /// NEW.
        new: String,
        /// Its endpoint.
        new_endpoint: String,
    },
    /// The bundles are of two server identities (under `--match identity`).
    #[error("{old} is a bundle of {old_identity} and {new} of {new_identity}; --match identity compares two bundles of one server (serverInfo name and transport)")]
    Identities {
        /// OLD.
        old: String,
        /// Its identity, as shown.
        old_identity: String,
        /// NEW.
        new: String,
        /// Its identity, as shown.
        new_identity: String,
    },
    /// One input is a bundle and the other a JSON report.
    #[error("{report} is a JSON report but {bundle} is a bundle; diff compares two bundles or two JSON reports (grade {bundle} with --format json first)")]
    Mixed {
        /// The input that is a bundle.
        bundle: String,
        /// The input that is a JSON report.
        report: String,
    },
    /// A bundle failed verification.
    #[error("INVALID {path}: {reason}; not compared")]
    Invalid {
        /// The bundle.
        path: String,
        /// Why.
        reason: String,
    },
    /// A file that is neither a bundle nor a JSON report, or a report that cannot be read.
    #[error("{path}: {reason}; not compared")]
    Unusable {
        /// The file.
        path: String,
        /// What it is, or what is wrong with it.
        reason: String,
    },
    /// A file could not be read, a `--trust` key is unusable, or the output failed.
    #[error(transparent)]
    Load(#[from] Error),
    /// The benchmark definition the bundles are graded under does not load.
    #[error(transparent)]
    Benchmark(#[from] crate::benchmark::BenchmarkError),
}

impl DiffError {
    /// The exit status.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            DiffError::Endpoints { .. }
            | DiffError::Identities { .. }
            | DiffError::Mixed { .. }
            | DiffError::Load(_)
            | DiffError::Benchmark(_) => ExitStatus::Usage,
            DiffError::Invalid { .. } | DiffError::Unusable { .. } => ExitStatus::Invalid,
        }
    }
}

/// How servers of OLD and NEW are paired (`--match`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Match {
    /// By endpoint URL, exactly as recorded (the default).
    #[default]
    Endpoint,
    /// By [`Identity`]: the same server on another port or host.
    Identity,
}

impl Match {
    /// Parse `--match` (case-insensitive).
    pub fn parse(s: &str) -> Result<Match, String> {
        match s.to_ascii_lowercase().as_str() {
            "endpoint" => Ok(Match::Endpoint),
            "identity" => Ok(Match::Identity),
            _ => Err("endpoint or identity".into()),
        }
    }

    /// The word used in output.
    pub fn word(self) -> &'static str {
        match self {
            Match::Endpoint => "endpoint",
            Match::Identity => "identity",
        }
    }
}

/// What `--match identity` takes to be one server: the `name` of the `serverInfo` it
/// reported and the transport the collector reached it by (`streamable-http`,
/// `http+sse`, `stdio`). Not its version (an upgrade is a change to show, not another
/// server), not the endpoint (that is what `--match identity` looks past), and not the
/// signer (the key names who collected, not what was collected). A server without a
/// session, or whose `serverInfo.name` is not a string, has no identity and matches
/// nothing under `--match identity`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Identity {
    /// `serverInfo.name`, as the server reported it (self-reported).
    pub name: String,
    /// How the collector reached the server.
    pub transport: String,
}

impl Identity {
    /// The identity of a server that reported `server_info` over `transport`.
    pub fn of(server_info: Option<&Value>, transport: &str) -> Option<Identity> {
        let name = server_info?.get("name")?.as_str()?;
        Some(Identity {
            name: name.to_string(),
            transport: transport.to_string(),
        })
    }

    /// One escaped line: `name (transport)`.
    pub fn show(&self) -> String {
        format!(
            "{} ({})",
            escape_line(&self.name),
            escape_line(&self.transport)
        )
    }

    /// [`Identity::show`], or why there is none.
    pub fn show_or_none(id: Option<&Identity>) -> String {
        id.map(Identity::show)
            .unwrap_or_else(|| "no identity (no serverInfo name)".into())
    }
}

/// What an input file is, from its bytes.
#[derive(Debug)]
pub enum Input {
    /// Starts with the COSE_Sign1 tag: a bundle (verified later).
    Bundle,
    /// A JSON object whose `schema` is [`REPORT_SCHEMA`].
    Report(Value),
    /// Anything else, described.
    Other(String),
}

/// The most `diff` reads of a JSON report.
const MAX_REPORT_BYTES: u64 = 1 << 30;

/// Tell what `path` holds. A bundle is told by its first byte, without reading the rest
/// (it is read and verified afterwards); anything else is read whole (up to 1 GiB) and
/// parsed as JSON.
pub fn sniff(path: &Path) -> Result<Input, DiffError> {
    let read_err = |source: std::io::Error| {
        DiffError::Load(Error::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let f = std::fs::File::open(path).map_err(read_err)?;
    if f.metadata().map_err(read_err)?.is_dir() {
        return Err(read_err(std::io::Error::other("is a directory")));
    }
    let mut bytes = Vec::new();
    let mut f = f.take(MAX_REPORT_BYTES + 1);
    let mut first = [0u8; 1];
    let n = f.read(&mut first).map_err(read_err)?;
    if n == 1 && first[0] == 0xd2 {
        return Ok(Input::Bundle);
    }
    bytes.extend_from_slice(&first[..n]);
    f.read_to_end(&mut bytes).map_err(read_err)?;
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        return Ok(Input::Other(
            "over 1 GiB, neither a bundle nor a report diff reads".into(),
        ));
    }
    if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
        if v.get("schema").and_then(Value::as_str) == Some(REPORT_SCHEMA) {
            return Ok(Input::Report(v));
        }
    }
    let what = mcp_probe_schema::bundle::looks_like(&bytes)
        .unwrap_or_else(|| "binary data that is not a COSE_Sign1 bundle".into());
    Ok(Input::Other(format!(
        "neither an evidence bundle nor a {REPORT_SCHEMA} JSON report: {what}"
    )))
}

/// What `mcp-grade diff` was asked.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// OLD.
    pub old: PathBuf,
    /// NEW.
    pub new: PathBuf,
    /// `--trust` key files (bundles only).
    pub trust: Vec<PathBuf>,
    /// `--trust-list` (bundles only).
    pub trust_list: Option<PathBuf>,
    /// `--tsa-cert` files: the anchors of the timestamps a trust list judges on.
    pub tsa_certs: Vec<PathBuf>,
    /// `--format json`.
    pub json: bool,
    /// `--match`.
    pub by: Match,
}

pub(crate) fn escaped_path(p: &Path) -> String {
    escape_line(&p.display().to_string())
}

/// Pretty JSON and a newline, safe for a terminal ([`crate::fmt::json_safe`]: a report
/// or a bundle quotes what servers said).
pub(crate) fn json_body<T: Serialize>(d: &T) -> String {
    let mut t = crate::fmt::json_safe(&serde_json::to_string_pretty(d).unwrap_or_default());
    t.push('\n');
    t
}
