//! The per-target journal: records are redacted, chained and appended to a journal
//! file as they happen, and the journal is sealed into a signed `.mcpev` at the end.
//!
//! The journal file (`<bundle>.journal`) is a CBOR sequence: a header map, then one
//! byte string per encoded record. A crash leaves it on disk as a verifiable prefix (the
//! records carry their chain links); sealing writes the bundle to a temporary file,
//! renames it into place and removes the journal. Ctrl-C and a failing leg seal what
//! exists with status `interrupted` (design.md §3).

use std::io::Write;
use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::{seal, Chain, SecretKey};
use mcp_probe_schema::model::{
    CollectorInfo, Evidence, Observation, Options, Record, Run, RunStatus, Session, Target,
    TokenFacts, FORMAT_ID,
};
use mcp_probe_schema::redact::Redactor;

/// A bundle could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// One target's evidence in the making.
#[derive(Debug)]
pub struct Journal {
    run_id: String,
    started_at: i64,
    chain: Chain,
    redactor: Redactor,
    file: Option<std::fs::File>,
    journal_path: PathBuf,
    bundle_path: PathBuf,
    /// Options in force.
    pub options: Options,
    /// Operator inputs for this target.
    pub inputs: Option<serde_json::Value>,
    /// The target (endpoint and addresses are filled in as they are learned).
    pub target: Target,
    /// The session, once established.
    pub session: Option<Session>,
    /// Token facts.
    pub tokens: Vec<TokenFacts>,
    /// Why the run failed or stopped, if it did.
    pub failure: Option<String>,
    sealed: Option<PathBuf>,
}

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

impl Journal {
    /// Start a journal in `out_dir` for `target`, named after `slug`.
    pub fn create(
        out_dir: &Path,
        slug: &str,
        target: Target,
        options: Options,
        redactor: Redactor,
    ) -> Result<Journal, WriteError> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| WriteError {
            path: out_dir.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let run_id = hex::encode(id);
        let started_at = now_us();
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let bundle_path = out_dir.join(format!("{slug}-{stamp}-{}.mcpev", &run_id[..8]));
        let journal_path = bundle_path.with_extension("mcpev.journal");
        let werr = |p: &Path| {
            let p = p.to_path_buf();
            move |source| WriteError { path: p, source }
        };
        std::fs::create_dir_all(out_dir).map_err(werr(out_dir))?;
        let mut file = std::fs::File::create(&journal_path).map_err(werr(&journal_path))?;
        let header = serde_json::json!({"format": FORMAT_ID, "journal": true, "run_id": run_id, "target": target.as_typed});
        let mut hb = Vec::new();
        ciborium::into_writer(&header, &mut hb).expect("header encodes");
        file.write_all(&hb).map_err(werr(&journal_path))?;
        Ok(Journal {
            chain: Chain::new(&run_id),
            run_id,
            started_at,
            redactor,
            file: Some(file),
            journal_path,
            bundle_path,
            options,
            inputs: None,
            target,
            session: None,
            tokens: Vec::new(),
            failure: None,
            sealed: None,
        })
    }

    /// Redact, chain and append one observation. Returns its seq.
    pub fn record(
        &mut self,
        legs: &[&str],
        started_at: i64,
        duration_us: u64,
        observation: Observation,
    ) -> u64 {
        let mut record = Record {
            seq: 0,
            legs: legs.iter().map(|s| s.to_string()).collect(),
            started_at,
            duration_us,
            prev: Vec::new(),
            observation,
            redactions: Vec::new(),
        };
        self.redactor.redact_and_learn(&mut record);
        let seq = self.chain.len() as u64;
        let bytes = self.chain.append(record).to_vec();
        if let Some(f) = &mut self.file {
            let mut framed = Vec::with_capacity(bytes.len() + 9);
            // CBOR byte-string framing keeps the journal a valid CBOR sequence.
            ciborium::into_writer(&serde_bytes::Bytes::new(&bytes), &mut framed)
                .expect("bstr encodes");
            if f.write_all(&framed).is_err() {
                // The journal is a crash aid; the sealed bundle is the product.
                self.file = None;
            }
        }
        seq
    }

    /// Register a live credential (token, client secret, authorization code, PKCE
    /// verifier) with the redactor, so every later record is redacted of it before it
    /// is hashed. Call it before recording the exchange that carries the value.
    pub fn add_secret(&mut self, value: &[u8], what: &str) {
        self.redactor.add_secret(value, what);
    }

    /// Record a skipped leg.
    pub fn skip(&mut self, legs: &[&str], reason: impl Into<String>) -> u64 {
        self.record(
            legs,
            now_us(),
            0,
            Observation::Skipped {
                reason: reason.into(),
            },
        )
    }

    /// Decoded records so far (for derivations while collecting).
    pub fn records(&self) -> Vec<Record> {
        self.chain
            .records()
            .iter()
            .filter_map(|b| mcp_probe_schema::bundle::decode_record(b).ok())
            .collect()
    }

    /// Where the bundle will be (or was) written.
    pub fn bundle_path(&self) -> &Path {
        &self.bundle_path
    }

    /// The sealed bundle path, once sealed.
    pub fn sealed(&self) -> Option<&Path> {
        self.sealed.as_deref()
    }

    /// Sign and write the bundle; idempotent (a second call returns the first path).
    pub fn seal(&mut self, status: RunStatus, key: &SecretKey) -> Result<PathBuf, WriteError> {
        if let Some(p) = &self.sealed {
            return Ok(p.clone());
        }
        let (records, head) = (self.chain.records().to_vec(), self.chain.head());
        let evidence = Evidence {
            format: FORMAT_ID.to_string(),
            collector: CollectorInfo {
                name: "mcp-collect".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                build: option_env!("MCP_PROBE_BUILD").unwrap_or("unknown").into(),
            },
            run: Run {
                run_id: self.run_id.clone(),
                started_at: self.started_at,
                finished_at: now_us(),
                status,
                failure: self.failure.clone(),
                options: self.options.clone(),
                inputs: self.inputs.clone(),
            },
            target: self.target.clone(),
            session: self.session.clone(),
            tokens: self.tokens.clone(),
            records,
            chain_head: head.to_vec(),
        };
        let bytes = seal(&evidence, key);
        let tmp = self.bundle_path.with_extension("mcpev.tmp");
        let werr = |p: &Path| {
            let p = p.to_path_buf();
            move |source| WriteError { path: p, source }
        };
        std::fs::write(&tmp, &bytes).map_err(werr(&tmp))?;
        std::fs::rename(&tmp, &self.bundle_path).map_err(werr(&self.bundle_path))?;
        self.file = None;
        let _ = std::fs::remove_file(&self.journal_path);
        self.sealed = Some(self.bundle_path.clone());
        Ok(self.bundle_path.clone())
    }
}
