//! What a report says about each graded server: its summary ([`Server`]), the part of
//! it every renderer needs beside each result ([`ServerKey`]), and its baseline
//! ([`BaselineInfo`]).

use serde_json::Value;

use super::provenance;
use crate::evidence::Bundle;

/// How a server's baseline was chosen for this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineMode {
    /// `--baseline FILE`.
    File,
    /// The per-endpoint store.
    Stored,
    /// `--update-baseline`: nothing compared; this bundle is stored as the baseline.
    Update,
}

impl BaselineMode {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineMode::File => "file",
            BaselineMode::Stored => "stored",
            BaselineMode::Update => "update",
        }
    }
}

/// What the report says about one server's baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineInfo {
    /// Where it came from.
    pub mode: BaselineMode,
    /// The baseline file (for `update`: where this bundle is, or would have been, stored).
    pub path: String,
    /// True when the comparing checks were graded against it.
    pub used: bool,
    /// Run id of the baseline bundle (`file`/`stored`, when it verified).
    pub run_id: Option<String>,
    /// When the baseline was collected, UTC microseconds.
    pub collected_at: Option<i64>,
    /// Key id of the baseline's signer.
    pub signer: Option<String>,
    /// `update` only: whether the bundle was written to the store.
    pub stored: Option<bool>,
    /// Why it was not used or not stored.
    pub problem: Option<String>,
}

impl BaselineInfo {
    /// A verified baseline bundle used for comparison.
    pub fn used(mode: BaselineMode, path: impl Into<String>, ev: &Bundle) -> BaselineInfo {
        BaselineInfo {
            mode,
            path: path.into(),
            used: true,
            run_id: Some(ev.payload.run.run_id.clone()),
            collected_at: Some(ev.payload.run.started_at),
            signer: Some(ev.signer.clone()),
            stored: None,
            problem: None,
        }
    }

    /// A stored baseline that could not be used (it failed verification or reading).
    pub fn rejected(path: impl Into<String>, problem: impl Into<String>) -> BaselineInfo {
        BaselineInfo {
            mode: BaselineMode::Stored,
            path: path.into(),
            used: false,
            run_id: None,
            collected_at: None,
            signer: None,
            stored: None,
            problem: Some(problem.into()),
        }
    }

    /// An `--update-baseline` outcome for this server.
    pub fn update(path: impl Into<String>, stored: bool, problem: Option<String>) -> BaselineInfo {
        BaselineInfo {
            mode: BaselineMode::Update,
            path: path.into(),
            used: false,
            run_id: None,
            collected_at: None,
            signer: None,
            stored: Some(stored),
            problem,
        }
    }
}

/// One graded bundle, as the report describes its server.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Endpoint URL (the target as typed when no endpoint answered).
    pub endpoint: String,
    /// The target as typed.
    pub target: String,
    /// Negotiated revision, if a session was established.
    pub revision: Option<String>,
    /// Revisions of the other eras the server also served and that were probed
    /// (`session.other_eras`): the per-era checks were graded on each.
    pub other_eras: Vec<String>,
    /// The transport the collector spoke: `streamable-http`, `http+sse` or `stdio`.
    pub transport: &'static str,
    /// The bundle's RFC 3161 timestamp, checked against `--tsa-cert` (or the public
    /// roots); [`crate::timestamp::TimestampState::None`] when the bundle has none.
    pub timestamp: crate::timestamp::TimestampState,
    /// `serverInfo` as the server reported it (self-reported).
    pub server_info: Option<Value>,
    /// Whether the endpoint answered 401 without credentials (`None`: no endpoint).
    pub auth_required: Option<bool>,
    /// Whether the run presented a credential (`None`: no endpoint).
    pub authenticated: Option<bool>,
    /// `complete`, `interrupted`, `failed` or `recovered`.
    pub run_status: &'static str,
    /// Why the run did not complete or reach an endpoint.
    pub failure: Option<String>,
    /// The collector's run id.
    pub run_id: String,
    /// The bundle file as given.
    pub bundle: String,
    /// Key id of the signer.
    pub signer: String,
    /// When collection started, UTC microseconds.
    pub collected_at: i64,
    /// When the bundle was sealed (`run.finished_at`), UTC microseconds.
    pub finished_at: i64,
    /// SHA-256 of the bundle file's bytes as verified, hex: taken when the report names
    /// its bundles by digest (OSCAL, XCCDF: [`super::Format::names_bundle_digests`]) or
    /// the run reads the file again; `None` otherwise.
    pub sha256: Option<String>,
    /// Collector name and version.
    pub collector: String,
    /// The collector build that wrote the bundle (`collector.build`: a git commit, or
    /// `unknown` from collectors built before builds named their commit).
    pub collector_build: String,
    /// The baseline used or written for this server, if any.
    pub baseline: Option<BaselineInfo>,
    /// Where the target came from, for a bundle collected from an MCP client
    /// configuration (`target.source`): the client and the file (`claude-desktop
    /// /home/u/.config/Claude/claude_desktop_config.json`), and the entry's name.
    pub source: Option<(String, String)>,
    /// HTML format: a transcript excerpt of each record that decided a non-PASS verdict,
    /// by seq, kept while the bundle is at hand ([`super::extras`]; empty for the other
    /// formats).
    pub excerpts: std::collections::BTreeMap<u64, String>,
}

impl Server {
    /// How the evidence was taken, when it is not the plain case: the transport when it
    /// is not Streamable HTTP, and the timestamp when the bundle has one (or a failed one).
    /// `None` for a Streamable HTTP bundle without a timestamp.
    pub fn provenance(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.transport != "streamable-http" {
            parts.push(format!("over {}", self.transport));
        }
        if self.timestamp != crate::timestamp::TimestampState::None {
            parts.push(self.timestamp.line());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// Describe the server of `ev`.
    pub fn new(ev: &Bundle, baseline: Option<BaselineInfo>) -> Server {
        let p = &ev.payload;
        Server {
            endpoint: ev.endpoint(),
            target: p.target.as_typed.clone(),
            revision: ev.revision().map(str::to_string),
            other_eras: ev
                .session()
                .map(|s| s.other_eras.iter().map(|o| o.revision.clone()).collect())
                .unwrap_or_default(),
            transport: p.target.transport.label(),
            timestamp: crate::timestamp::TimestampState::None,
            server_info: ev.session().and_then(|s| s.server_info.clone()),
            auth_required: ev.session().map(|s| s.auth_required),
            authenticated: ev.session().map(|s| s.authenticated),
            run_status: p.run.status.as_str(),
            failure: p.run.failure.clone(),
            run_id: p.run.run_id.clone(),
            bundle: ev.path.clone(),
            signer: ev.signer.clone(),
            collected_at: p.run.started_at,
            finished_at: p.run.finished_at,
            sha256: None,
            collector: format!("{} {}", p.collector.name, p.collector.version),
            collector_build: p.collector.build.clone(),
            baseline,
            source: p
                .target
                .source
                .as_ref()
                .map(|s| (format!("{} {}", s.client, s.file), s.entry.clone())),
            excerpts: Default::default(),
        }
    }

    /// `run <id> <status>; bundle <file>` (the run id's first 12 characters; `run
    /// <status>` when the bundle has none), escaped for one line: what tells two runs of
    /// one endpoint apart in the summary and the Markdown report.
    pub fn run_and_bundle(&self) -> String {
        let id = crate::fmt::escape_line(self.run_id.get(..12).unwrap_or(&self.run_id));
        let run = if id.is_empty() {
            format!("run {}", self.run_status)
        } else {
            format!("run {id} {}", self.run_status)
        };
        format!("{run}; bundle {}", crate::fmt::escape_line(&self.bundle))
    }

    /// `mcp-collect 0.1.0 (commit 0123abcd4567)`: the collector that wrote the bundle and
    /// its build (`full`: the build whole; else a commit cut to 12 digits), escaped for
    /// one line.
    pub fn collector_line(&self, full: bool) -> String {
        let build = if full {
            self.collector_build.clone()
        } else {
            provenance::short_build(&self.collector_build)
        };
        crate::fmt::escape_line(&format!(
            "{} ({})",
            self.collector,
            provenance::build_words(&build)
        ))
    }

    /// The negotiated revision, or `no-session`.
    pub fn revision_label(&self) -> &str {
        self.revision.as_deref().unwrap_or("no-session")
    }

    /// `serverInfo` name and version, when reported as strings.
    pub fn server_name(&self) -> Option<String> {
        let info = self.server_info.as_ref()?;
        let name = info.get("name").and_then(Value::as_str)?;
        Some(match info.get("version").and_then(Value::as_str) {
            Some(v) => format!("{name} {v}"),
            None => name.to_string(),
        })
    }
}

/// What a renderer needs of a server beside each of its results (its label, SARIF's
/// locations): held in memory for every server of the report, while the rest of its
/// [`Server`] summary goes to the spill file with its outcomes ([`super::Report::server`],
/// [`super::Report::each_server`]). About a hundred bytes a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerKey {
    /// [`Server::endpoint`].
    pub endpoint: String,
    /// [`Server::bundle`].
    pub bundle: String,
    /// [`Server::revision`].
    pub revision: Option<String>,
    /// The client and configuration file of [`Server::source`], for grouping.
    pub source: Option<String>,
}

impl ServerKey {
    /// The key of `s`.
    pub fn of(s: &Server) -> ServerKey {
        ServerKey {
            endpoint: s.endpoint.clone(),
            bundle: s.bundle.clone(),
            revision: s.revision.clone(),
            source: s.source.as_ref().map(|(group, _)| group.clone()),
        }
    }

    /// The negotiated revision, or `no-session` ([`Server::revision_label`]).
    pub fn revision_label(&self) -> &str {
        self.revision.as_deref().unwrap_or("no-session")
    }
}
