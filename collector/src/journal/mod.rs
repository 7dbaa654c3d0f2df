//! The per-target journal: the only way anything enters a bundle.
//!
//! **A redaction boundary by construction.** Every field is private; a record, a session,
//! a target update, token facts, inputs and failure texts enter through a method that
//! passes them through the run's one shared redactor ([`SharedRedactor`]) before they
//! are written anywhere. A record is redacted (`redact_and_learn`: the HTTP header and
//! field rules, then a generic pass over every text and byte leaf) before it is hashed;
//! its values are then checked with `leaks_record`, and a record that still holds a
//! known credential is replaced by a
//! skipped record saying it was withheld (fail closed: it is never signed). At sealing,
//! the run, target, session, tokens, inputs and failure are scrubbed again with every
//! secret learned by then, and checked once more.
//!
//! **Streaming.** Records are appended to the journal file (`<bundle>.journal`, 0600) as
//! they happen and are not kept in memory: the chain keeps its head and count only, and
//! [`Journal::records`] reads the file back. Sealing streams the journal into the
//! COSE_Sign1 ([`mcp_probe_schema::seal::sign`]) so memory does not grow with the
//! bundle. Past `--bundle-cap` bytes, HTTP bodies are stored as length and SHA-256 only
//! and `run.bundle_capped_from` says from which record (on a stdio target: the first
//! record whose stdout lines past the run's share of the cap were counted, `unkept`).
//!
//! **The journal file** is a CBOR sequence of byte strings: a header item (run id,
//! start time, options, target), then records (each a plain byte string holding the
//! encoded record, exactly as it will sit in the bundle) and updates (target, session,
//! token facts, inputs, failure, the bundle-cap mark) as they happen. Header and update
//! items are tagged 24 (encoded CBOR data item), records are not. A killed run leaves a
//! journal that [`recover`] seals with status `recovered` after checking the chain;
//! items past a torn write are dropped and counted.
//!
//! **Durability.** The journal is synced to disk at bounded intervals (`sync`: every
//! [`SYNC_EVERY_RECORDS`] records or [`SYNC_EVERY_BYTES`] bytes, each marked in the
//! journal, and within [`SYNC_INTERVAL`] of any write), so a power loss loses at most
//! what was written since the last sync; a SIGKILL loses nothing that was written.

mod sync;
mod unkept;
use sync::SyncState;
pub use sync::{SYNC_EVERY_BYTES, SYNC_EVERY_RECORDS, SYNC_INTERVAL};
pub use unkept::CountedEvent;

use mcp_probe_schema::vocab::{family, LegId};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ciborium::value::Value;
use mcp_probe_schema::bundle::{encode_record, genesis, sha256, SecretKey};
use mcp_probe_schema::model::{
    CollectorInfo, Evidence, HttpOutcome, Observation, Options, Record, Run, RunStatus, Session,
    Target, TokenFacts, FORMAT_ID,
};
use mcp_probe_schema::redact::Redactor;
use mcp_probe_schema::seal::{cbor_head, sign, sign_chained, Chained, RecordSource};
use serde::{Deserialize, Serialize};

/// `--bundle-cap` default: 64 MiB.
pub const DEFAULT_BUNDLE_CAP: u64 = 64 << 20;

/// Version of the journal file layout (in its header item). Version 3 added the sync
/// mark ([`Update::Synced`]); a version 2 journal (none) is still recovered.
const JOURNAL_VERSION: u32 = 3;

/// The text that replaces a value which still held a credential after redaction.
pub const WITHHELD: &str = "(withheld: it still held a credential after redaction)";

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

/// A journal could not be recovered into a bundle.
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// The journal could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a journal this build writes.
    #[error("{path}: not an mcp-collect journal ({reason})")]
    NotAJournal {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The bundle already exists.
    #[error("{0}: the bundle already exists (the run was sealed); not overwriting it")]
    Exists(PathBuf),
    /// The bundle could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// The redactor of a whole process: every journal and the printer share it, so a
/// secret registered or learned anywhere is redacted everywhere (bundles and stderr).
#[derive(Debug, Clone, Default)]
pub struct SharedRedactor(Arc<Mutex<Redactor>>);

impl From<Redactor> for SharedRedactor {
    fn from(r: Redactor) -> SharedRedactor {
        SharedRedactor(Arc::new(Mutex::new(r)))
    }
}

impl SharedRedactor {
    /// A redactor with no known secret.
    pub fn new() -> SharedRedactor {
        SharedRedactor::default()
    }

    /// The redactor (a poisoned lock is still a consistent redactor).
    pub fn lock(&self) -> MutexGuard<'_, Redactor> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Register a live credential.
    pub fn add_secret(&self, value: &[u8], what: &str) {
        self.lock().add_secret(value, what);
    }

    /// Register a credential the operator gave the run ([`Redactor::add_given_secret`]:
    /// no public value shields a piece of it).
    pub fn add_given_secret(&self, value: &[u8], what: &str) {
        self.lock().add_given_secret(value, what);
    }

    /// Register a value that is not a credential ([`Redactor::add_public`]).
    pub fn add_public(&self, value: &[u8]) {
        self.lock().add_public(value);
    }

    /// `s` with every known secret replaced.
    pub fn scrub_str(&self, s: &str) -> String {
        self.lock().scrub_str(s)
    }
}

/// The first item of a journal file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct JournalHeader {
    journal: u32,
    format: String,
    collector: CollectorInfo,
    run_id: String,
    started_at: i64,
    options: Options,
    target: Target,
}

/// A change to what the bundle will hold besides its records, journalled as it happens.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Update {
    Target(Target),
    // Boxed: the largest variant by far (serde reads and writes it as the value itself).
    Session(Box<Option<Session>>),
    Token(TokenFacts),
    Inputs(Option<serde_json::Value>),
    Failure(Option<String>),
    CappedFrom(u64),
    /// A sync to disk was asked right after this item: it covers this many records.
    Synced(u64),
}

/// A journal shared by the tasks of one target.
pub type SharedJournal = Arc<Mutex<Journal>>;

/// Lock a journal. A poisoned lock means a leg panicked; the journal's data is still
/// consistent (records are appended atomically), so it is used on, to seal.
pub fn lock(j: &Mutex<Journal>) -> MutexGuard<'_, Journal> {
    j.lock().unwrap_or_else(|p| p.into_inner())
}

/// One target's evidence in the making.
#[derive(Debug)]
pub struct Journal {
    run_id: String,
    started_at: i64,
    collector: CollectorInfo,
    head: [u8; 32],
    count: u64,
    /// The records' length in the bundle's payload (each one's byte string head and
    /// bytes): with `head` and `count`, what sealing would otherwise read them again for.
    records_len: u64,
    written: u64,
    redactor: SharedRedactor,
    file: Option<Arc<SyncState>>,
    /// Records and bytes appended since the last sync mark.
    unsynced_records: u64,
    unsynced_bytes: u64,
    broken: Option<std::io::Error>,
    journal_path: PathBuf,
    bundle_path: PathBuf,
    options: Options,
    inputs: Option<serde_json::Value>,
    target: Target,
    session: Option<Session>,
    /// How the bundle was sealed: its run status and when (UTC microseconds).
    sealed_as: Option<(RunStatus, i64)>,
    /// While a session of another era is probed: its revision, appended to the legs of
    /// [`family::PER_ERA`] as `@<revision>` on every record.
    era_qualifier: Option<String>,
    tokens: Vec<TokenFacts>,
    failure: Option<String>,
    bundle_cap: u64,
    capped_from: Option<u64>,
    /// HTTP+SSE: the summary of the stream events being counted, not stored.
    unkept_events: Option<unkept::Filling>,
    sealed: Option<PathBuf>,
    /// Run once by [`Journal::sign`] (sealing) before anything else: what must be recorded however
    /// the run ends (a stdio server's process record, written as the process stops).
    before_seal: Option<BeforeSeal>,
}

/// See [`Journal::before_seal`].
struct BeforeSeal(Box<dyn FnOnce(&mut Journal) + Send>);

impl std::fmt::Debug for BeforeSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeSeal")
    }
}

/// Now, UTC microseconds (what records carry as `started_at`).
pub fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// The build of this collector, recorded as `collector.build` in every bundle: the git
/// commit it was built from (40 hex digits, `-dirty` when its sources differed from that
/// commit), `MCP_PROBE_BUILD` as set at build time, or `unknown (built without git)`
/// (collector/build.rs).
pub const BUILD: &str = env!("MCP_PROBE_BUILD_ID");

fn this_collector() -> CollectorInfo {
    CollectorInfo {
        name: "mcp-collect".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        build: BUILD.into(),
        target: Some(env!("MCP_PROBE_TARGET").into()),
        rustc: Some(env!("MCP_PROBE_RUSTC").into()),
    }
}

fn werr(p: &Path) -> impl FnOnce(std::io::Error) -> WriteError {
    let p = p.to_path_buf();
    move |source| WriteError { path: p, source }
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = Vec::new();
    // Our own plain structs always encode into a Vec.
    let _ = ciborium::into_writer(v, &mut out);
    out
}

/// Create a file readable by its owner only (it may be opened by a recovery later).
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// Frame one journal item: a byte string, tagged 24 for header and update items.
fn frame(meta: bool, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 11);
    if meta {
        out.extend_from_slice(&[0xd8, 24]);
    }
    out.extend(cbor_head(2, bytes.len() as u64));
    out.extend_from_slice(bytes);
    out
}

/// Every HTTP body of `record` reduced to its length and SHA-256 (bytes emptied).
/// True when there was a body byte to drop.
fn strip_bodies(record: &mut Record) -> bool {
    if let Observation::SseEvent(e) = &mut record.observation {
        if e.data.is_empty() {
            return false;
        }
        e.data_length.get_or_insert(e.data.len() as u64);
        e.data = String::new();
        return true;
    }
    let Observation::Http(x) = &mut record.observation else {
        return false;
    };
    let mut any = !x.request.body.bytes.is_empty();
    x.request.body.bytes = Vec::new();
    if let HttpOutcome::Response(r) = &mut x.outcome {
        any |= !r.body.bytes.is_empty();
        r.body.bytes = Vec::new();
    }
    any
}

impl Journal {
    /// Start a journal in `out_dir` for `target`, named after `slug`. `redactor` is
    /// normally the process's [`SharedRedactor`]; a plain `Redactor` gives the journal
    /// its own. `options.bundle_cap` unset means [`DEFAULT_BUNDLE_CAP`] (and is recorded).
    pub fn create(
        out_dir: &Path,
        slug: &str,
        target: Target,
        mut options: Options,
        redactor: impl Into<SharedRedactor>,
    ) -> Result<Journal, WriteError> {
        let redactor = redactor.into();
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
        std::fs::create_dir_all(out_dir).map_err(werr(out_dir))?;
        let mut file = create_private(&journal_path).map_err(werr(&journal_path))?;
        let bundle_cap = *options.bundle_cap.get_or_insert(DEFAULT_BUNDLE_CAP);
        let (target, options) = {
            let r = redactor.lock();
            (r.scrub_serde(&target), r.scrub_serde(&options))
        };
        let header = JournalHeader {
            journal: JOURNAL_VERSION,
            format: FORMAT_ID.to_string(),
            collector: this_collector(),
            run_id: run_id.clone(),
            started_at,
            options: options.clone(),
            target: target.clone(),
        };
        let item = frame(true, &encode(&header));
        file.write_all(&item).map_err(werr(&journal_path))?;
        Ok(Journal {
            head: genesis(&run_id),
            count: 0,
            records_len: 0,
            written: item.len() as u64,
            run_id,
            started_at,
            collector: header.collector,
            redactor,
            file: Some(SyncState::new(file, item.len() as u64)),
            unsynced_records: 0,
            unsynced_bytes: item.len() as u64,
            broken: None,
            journal_path,
            bundle_path,
            options,
            inputs: None,
            target,
            session: None,
            era_qualifier: None,
            sealed_as: None,
            tokens: Vec::new(),
            failure: None,
            bundle_cap,
            capped_from: None,
            unkept_events: None,
            sealed: None,
            before_seal: None,
        })
    }

    fn append(&mut self, meta: bool, bytes: &[u8]) -> bool {
        let Some(f) = &self.file else {
            return false;
        };
        let item = frame(meta, bytes);
        match f.file().write_all(&item) {
            Ok(()) => {
                self.written += item.len() as u64;
                self.unsynced_bytes += item.len() as u64;
                f.wrote(self.written);
                true
            }
            Err(e) => {
                // Sealing reports it: a journal with a hole cannot be signed.
                self.broken = Some(e);
                self.file = None;
                false
            }
        }
    }

    fn update(&mut self, u: &Update) {
        let bytes = encode(u);
        if self.append(true, &bytes) {
            self.synced_at_bounds();
        }
    }

    /// The sync policy ([`sync`]), after an item was appended: past the record or byte
    /// bound, a sync mark and a sync now; else a sync within [`SYNC_INTERVAL`].
    fn synced_at_bounds(&mut self) {
        if self.unsynced_records >= SYNC_EVERY_RECORDS || self.unsynced_bytes >= SYNC_EVERY_BYTES {
            let mark = encode(&Update::Synced(self.count));
            if self.append(true, &mark) {
                self.unsynced_records = 0;
                self.unsynced_bytes = 0;
                if let Some(f) = &self.file {
                    f.now();
                }
            }
        } else if let Some(f) = &self.file {
            f.within();
        }
    }

    /// Redact `record` and encode it; a record that still holds a known credential is
    /// replaced by a skipped record saying so.
    fn redacted_bytes(&self, record: &mut Record) -> Vec<u8> {
        let mut red = self.redactor.lock();
        // The header and field rules on HTTP exchanges, then every text and byte leaf of
        // every observation kind (skip reasons, transport error texts, TLS and DNS
        // records): one pass of the redactor covers both.
        red.redact_and_learn(record);
        fail_closed(&red, record)
    }

    /// True while stream events are stored as records: until the bundle cap was reached
    /// (`run.bundle_capped_from`). Past it, events other than a request's first answer
    /// are counted ([`Journal::count_event`]).
    pub fn stores_events(&self) -> bool {
        self.capped_from.is_none()
    }

    /// Count `e` in the summary record being filled; a summary for another request,
    /// legs or stream is written first.
    pub fn count_event(&mut self, e: CountedEvent<'_>) {
        if self
            .unkept_events
            .as_ref()
            .is_some_and(|f| !f.same_place(&e))
        {
            self.flush_unkept_events();
        }
        self.unkept_events
            .get_or_insert_with(|| unkept::Filling::new(&e))
            .count(&e);
    }

    /// Write the summary being filled, if any, as an `sse_event` record with `unkept`.
    pub fn flush_unkept_events(&mut self) {
        if let Some(f) = self.unkept_events.take() {
            let (legs, at, observation) = f.finish();
            self.record(&legs, at, 0, observation);
        }
    }

    /// Redact, chain and append one observation. Returns its seq.
    pub fn record(
        &mut self,
        legs: &[LegId],
        started_at: i64,
        duration_us: u64,
        observation: Observation,
    ) -> u64 {
        // Events counted before this record come before it.
        self.flush_unkept_events();
        let seq = self.count;
        let legs = legs
            .iter()
            .map(|l| match &self.era_qualifier {
                Some(rev) if family::PER_ERA.contains(l) => l.on_revision(rev),
                _ => l.to_string(),
            })
            .collect();
        let mut record = Record {
            seq,
            legs,
            started_at,
            duration_us,
            prev: self.head.to_vec(),
            observation,
            redactions: Vec::new(),
        };
        let mut bytes = self.redacted_bytes(&mut record);
        if self.capped_from.is_none()
            && matches!(&record.observation, Observation::Stdio(x) if x.unkept.is_some())
        {
            // A stdio record whose stdout lines were counted instead of stored: the
            // run's share of the cap for lines was spent.
            self.capped_from = Some(seq);
            self.update(&Update::CappedFrom(seq));
        }
        if self.capped_from.is_some() {
            if strip_bodies(&mut record) {
                bytes = encode_record(&record);
            }
        } else if self.written + bytes.len() as u64 + 9 > self.bundle_cap
            && strip_bodies(&mut record)
        {
            // From here on bodies are stored as length and SHA-256 only.
            self.capped_from = Some(seq);
            self.update(&Update::CappedFrom(seq));
            bytes = encode_record(&record);
        }
        if self.append(false, &bytes) {
            self.head = sha256(&bytes);
            self.count += 1;
            self.records_len += cbor_head(2, bytes.len() as u64).len() as u64 + bytes.len() as u64;
            self.unsynced_records += 1;
            self.synced_at_bounds();
        }
        seq
    }

    /// Register a live credential (token, client secret, authorization code, PKCE
    /// verifier) with the shared redactor, so every later record, bundle field and
    /// stderr line is redacted of it. Call it before recording the exchange.
    pub fn add_secret(&mut self, value: &[u8], what: &str) {
        self.redactor.add_secret(value, what);
    }

    /// Register a value that is not a credential (an OAuth client id, state, redirect
    /// URI) with the shared redactor, so no piece of a secret it happens to share is
    /// replaced inside it ([`Redactor::add_public`]). Call it before the secrets it
    /// arrives with, and before recording the exchange.
    pub fn add_public(&mut self, value: &[u8]) {
        self.redactor.add_public(value);
    }

    /// The redactor this journal uses (shared with the printer in a run).
    pub fn redactor(&self) -> &SharedRedactor {
        &self.redactor
    }

    /// From now on, record the legs of [`family::PER_ERA`] as sent on a session of
    /// `revision` (`<leg>@<revision>`); `None` returns to the negotiated session.
    pub fn qualify_legs(&mut self, revision: Option<&str>) {
        self.era_qualifier = revision.map(str::to_string);
    }

    /// True while [`Journal::qualify_legs`] is in force.
    pub fn qualifying(&self) -> bool {
        self.era_qualifier.is_some()
    }

    /// Record a skipped leg.
    pub fn skip(&mut self, legs: &[LegId], reason: impl Into<String>) -> u64 {
        self.record(
            legs,
            now_us(),
            0,
            Observation::Skipped {
                reason: reason.into(),
            },
        )
    }

    /// The options in force (with `bundle_cap` filled in).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The operator inputs for this target (as redacted).
    pub fn inputs(&self) -> Option<&serde_json::Value> {
        self.inputs.as_ref()
    }

    /// Set the operator inputs for this target.
    pub fn set_inputs(&mut self, inputs: Option<serde_json::Value>) {
        self.inputs = self.redactor.lock().scrub_serde(&inputs);
        self.update(&Update::Inputs(self.inputs.clone()));
    }

    /// The target as known so far (redacted).
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The IP addresses the target's endpoint resolved to (as recorded).
    pub fn target_ips(&self) -> Vec<std::net::IpAddr> {
        self.target
            .addresses
            .iter()
            .filter_map(|a| a.parse::<std::net::SocketAddr>().ok().map(|s| s.ip()))
            .collect()
    }

    fn target_changed(&mut self) {
        self.target = self.redactor.lock().scrub_serde(&self.target);
        self.update(&Update::Target(self.target.clone()));
    }

    /// Record an address the target's host resolved to (`ip:port`), once.
    pub fn add_address(&mut self, addr: String) {
        if !self.target.addresses.contains(&addr) {
            self.target.addresses.push(addr);
            self.target_changed();
        }
    }

    /// Record the endpoint that answered as MCP (or with 401).
    pub fn set_endpoint(&mut self, endpoint: String) {
        self.target.endpoint = Some(endpoint);
        self.target_changed();
    }

    /// Record that the endpoint speaks HTTP+SSE (2024-11-05): the stream URL is the
    /// endpoint, `message_endpoint` the URL its `endpoint` event named (when one came).
    pub fn set_sse(&mut self, message_endpoint: Option<String>) {
        self.target.transport = mcp_probe_schema::model::Transport::HttpSse;
        self.target.message_endpoint = message_endpoint;
        self.target_changed();
    }

    /// The session (redacted), once established.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// Set the session.
    pub fn set_session(&mut self, session: Option<Session>) {
        self.session = self.redactor.lock().scrub_serde(&session);
        self.update(&Update::Session(Box::new(self.session.clone())));
    }

    /// Change the session, when there is one (server-reported values are redacted
    /// before they are kept).
    pub fn update_session(&mut self, f: impl FnOnce(&mut Session)) {
        if let Some(mut s) = self.session.take() {
            f(&mut s);
            self.set_session(Some(s));
        }
    }

    /// Facts about the tokens presented.
    pub fn tokens(&self) -> &[TokenFacts] {
        &self.tokens
    }

    /// Add the facts of a token presented.
    pub fn push_token(&mut self, facts: TokenFacts) {
        let facts = self.redactor.lock().scrub_serde(&facts);
        self.tokens.push(facts.clone());
        self.update(&Update::Token(facts));
    }

    /// Why the run failed or stopped (redacted), if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Set why the run failed or stopped (the text is redacted before it is kept).
    pub fn set_failure(&mut self, why: impl Into<String>) {
        self.failure = Some(self.redactor.scrub_str(&why.into()));
        self.update(&Update::Failure(self.failure.clone()));
    }

    /// Number of records so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True before the first record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Seq of the first record whose bodies were dropped at `--bundle-cap`, if any.
    pub fn bundle_capped_from(&self) -> Option<u64> {
        self.capped_from
    }

    /// Call `f` with each record so far, in order, read back from the journal file
    /// (records are not kept in memory); stops when `f` returns false.
    pub fn for_each_record(&self, mut f: impl FnMut(Record) -> bool) {
        let records = FileRecords {
            path: self.journal_path.clone(),
            limit: self.count,
        };
        let _ = records.each(&mut |b| match mcp_probe_schema::bundle::decode_record(b) {
            Ok(r) => {
                if f(r) {
                    Ok(())
                } else {
                    Err(std::io::Error::other("stop"))
                }
            }
            Err(_) => Ok(()),
        });
    }

    /// [`Journal::for_each_record`] over the records whose legs `legs` accepts; the others
    /// are not decoded (their legs are read from the head of their bytes, `peek_legs`).
    pub fn for_each_record_of(
        &self,
        mut legs: impl FnMut(&[&str]) -> bool,
        mut f: impl FnMut(Record) -> bool,
    ) {
        let records = self.file_records();
        let _ = records.each(&mut |b| {
            let peeked = peek_legs(b).map(|l| legs(&l));
            if peeked == Some(false) {
                return Ok(());
            }
            let keep_on = match mcp_probe_schema::bundle::decode_record(b) {
                Ok(r) => {
                    let wanted = peeked.unwrap_or_else(|| {
                        legs(&r.legs.iter().map(String::as_str).collect::<Vec<_>>())
                    });
                    !wanted || f(r)
                }
                Err(_) => true,
            };
            if keep_on {
                Ok(())
            } else {
                Err(std::io::Error::other("stop"))
            }
        });
    }

    /// The first record (in order) for which `pred` holds.
    pub fn find_record(&self, mut pred: impl FnMut(&Record) -> bool) -> Option<Record> {
        let mut found = None;
        self.for_each_record(|r| {
            if pred(&r) {
                found = Some(r);
                false
            } else {
                true
            }
        });
        found
    }

    /// Decoded records so far (for derivations while collecting; this holds them all in
    /// memory: prefer [`Journal::for_each_record`] or [`Journal::find_record`]).
    pub fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        self.for_each_record(|r| {
            out.push(r);
            true
        });
        out
    }

    /// Where the bundle will be (or was) written.
    pub fn bundle_path(&self) -> &Path {
        &self.bundle_path
    }

    /// The journal file.
    pub fn journal_path(&self) -> &Path {
        &self.journal_path
    }

    /// The sealed bundle path, once sealed.
    pub fn sealed(&self) -> Option<&Path> {
        self.sealed.as_deref()
    }

    /// The run status the bundle was sealed with, and the seconds from the start of the
    /// run to sealing (`None` before sealing).
    pub fn sealed_as(&self) -> Option<(&RunStatus, f64)> {
        self.sealed_as
            .as_ref()
            .map(|(s, at)| (s, (at - self.started_at) as f64 / 1e6))
    }

    /// Run `f` first thing in [`Journal::sign`] (sealing), whichever way the run ends (finished, a
    /// deadline, a signal): the last records of something that must be stopped first.
    pub fn before_seal(&mut self, f: impl FnOnce(&mut Journal) + Send + 'static) {
        self.before_seal = Some(BeforeSeal(Box::new(f)));
    }

    /// Sign and write the bundle; idempotent (a second call returns the first path).
    pub fn seal(&mut self, status: RunStatus, key: &SecretKey) -> Result<PathBuf, WriteError> {
        self.seal_with(status, key, &[])
    }

    /// As [`Journal::seal`], with `extra` entries in the COSE unprotected header (the
    /// reason a `--tsa` timestamp was not requested).
    pub fn seal_with(
        &mut self,
        status: RunStatus,
        key: &SecretKey,
        extra: &[(String, Value)],
    ) -> Result<PathBuf, WriteError> {
        if let Some(p) = &self.sealed {
            return Ok(p.clone());
        }
        let signed = self.sign(status, key)?;
        self.write_signed(signed, extra)
    }

    /// The first half of sealing: scrub the payload head and sign it with the journal's
    /// records; nothing is written and the journal stays open, so a timestamp over the
    /// signature can be fetched (without holding the journal's lock) before
    /// [`Journal::write_signed`]. Dropping the result leaves the journal as it was.
    pub fn sign(&mut self, status: RunStatus, key: &SecretKey) -> Result<Signed, WriteError> {
        // What must be recorded however the run ends, before the records are signed.
        if let Some(f) = self.before_seal.take() {
            (f.0)(self);
        }
        self.flush_unkept_events();
        if let Some(e) = &self.broken {
            return Err(WriteError {
                path: self.journal_path.clone(),
                source: std::io::Error::new(e.kind(), format!("the journal write failed: {e}")),
            });
        }
        if let Some(f) = &self.file {
            f.sync_here().map_err(werr(&self.journal_path))?;
        }
        let finished_at = now_us();
        let head = Evidence {
            format: FORMAT_ID.to_string(),
            collector: self.collector.clone(),
            run: Run {
                run_id: self.run_id.clone(),
                started_at: self.started_at,
                finished_at,
                status,
                failure: self.failure.clone(),
                options: self.options.clone(),
                inputs: self.inputs.clone(),
                bundle_capped_from: self.capped_from,
            },
            target: self.target.clone(),
            session: self.session.clone(),
            tokens: self.tokens.clone(),
            records: Vec::new(),
            chain_head: Vec::new(),
        };
        let head = scrub_head(&head, &self.redactor.lock(), &self.bundle_path)?;
        let chained = Chained {
            count: self.count,
            len: self.records_len,
            head: self.head,
        };
        let signed = sign_chained(&head, &self.file_records(), key, chained)
            .map_err(werr(&self.bundle_path))?;
        Ok(Signed {
            signed,
            status,
            finished_at,
            records: self.count,
        })
    }

    /// The second half of sealing: write what [`Journal::sign`] signed, with `extra`
    /// entries in the unprotected header (a timestamp token, or why there is none). Every
    /// text entry passes the run's redactor first. Idempotent like [`Journal::seal`].
    pub fn write_signed(
        &mut self,
        signed: Signed,
        extra: &[(String, Value)],
    ) -> Result<PathBuf, WriteError> {
        if let Some(p) = &self.sealed {
            return Ok(p.clone());
        }
        if signed.records != self.count {
            return Err(WriteError {
                path: self.bundle_path.clone(),
                source: std::io::Error::other("records were added after the bundle was signed"),
            });
        }
        let red = self.redactor.lock();
        let extra: Vec<(String, Value)> = extra
            .iter()
            .map(|(k, v)| match v {
                Value::Text(t) => (k.clone(), Value::Text(red.scrub_str(t))),
                v => (k.clone(), v.clone()),
            })
            .collect();
        drop(red);
        write_file(
            &signed.signed,
            &self.file_records(),
            &extra,
            &self.bundle_path,
        )?;
        self.file = None;
        let _ = std::fs::remove_file(&self.journal_path);
        self.sealed = Some(self.bundle_path.clone());
        self.sealed_as = Some((signed.status, signed.finished_at));
        Ok(self.bundle_path.clone())
    }

    fn file_records(&self) -> FileRecords {
        FileRecords {
            path: self.journal_path.clone(),
            limit: self.count,
        }
    }
}

/// A journal's bundle, signed and not yet written ([`Journal::sign`]).
#[derive(Debug)]
pub struct Signed {
    signed: mcp_probe_schema::seal::Signed,
    status: RunStatus,
    finished_at: i64,
    records: u64,
}

impl Signed {
    /// The COSE signature bytes.
    pub fn signature(&self) -> &[u8] {
        self.signed.signature()
    }
}

/// The backstop: when a value of `record` still holds a secret `red` knows (in any
/// encoding it knows; [`Redactor::leaks_record`]), replace the observation by a skipped
/// record saying it was withheld, so the value is never hashed, written or signed. Then
/// encode it.
fn fail_closed(red: &Redactor, record: &mut Record) -> Vec<u8> {
    if !red.leaks_record(record) {
        return encode_record(record);
    }
    record.observation = Observation::Skipped {
        reason: format!(
            "withheld: the {} record of this leg still held a credential after redaction, so it was not signed",
            observation_kind(&record.observation)
        ),
    };
    record.redactions.clear();
    encode_record(record)
}

fn observation_kind(o: &Observation) -> &'static str {
    match o {
        Observation::Http(_) => "HTTP",
        Observation::Tls(_) => "TLS",
        Observation::LegacyTls(_) => "legacy TLS",
        Observation::Dns(_) => "DNS",
        Observation::Skipped { .. } => "skipped",
        Observation::Stdio(_) => "stdio",
        Observation::StdioProcess(_) => "stdio process",
        Observation::SseEvent(_) => "SSE event",
    }
}

/// Scrub the payload head with every secret known now and withhold whatever still
/// leaks; refuse to sign a head that still holds a credential.
fn scrub_head(head: &Evidence, red: &Redactor, bundle_path: &Path) -> Result<Evidence, WriteError> {
    let mut head = red.scrub_serde(head);
    if red.leaks(&encode(&head)) {
        head = red.withhold_serde(&head, WITHHELD).unwrap_or(head);
    }
    if red.leaks(&encode(&head)) {
        head.session = None;
        head.tokens.clear();
        head.run.inputs = None;
        head.run.failure = Some(format!("session, tokens and inputs {WITHHELD}"));
    }
    if red.leaks(&encode(&head)) {
        return Err(WriteError {
            path: bundle_path.to_path_buf(),
            source: std::io::Error::other(
                "refusing to sign: the run header still holds a credential after redaction",
            ),
        });
    }
    Ok(head)
}

/// Scrub the payload head, sign it and write the bundle ([`write_file`]).
fn seal_file(
    head: &Evidence,
    records: &FileRecords,
    red: &Redactor,
    key: &SecretKey,
    bundle_path: &Path,
) -> Result<(), WriteError> {
    let head = scrub_head(head, red, bundle_path)?;
    let signed = sign(&head, records, key).map_err(werr(bundle_path))?;
    write_file(&signed, records, &[], bundle_path)
}

/// Write a signed bundle through a temporary file (synced, renamed).
fn write_file(
    signed: &mcp_probe_schema::seal::Signed,
    records: &FileRecords,
    extra: &[(String, Value)],
    bundle_path: &Path,
) -> Result<(), WriteError> {
    let tmp = bundle_path.with_extension("mcpev.tmp");
    let file = std::fs::File::create(&tmp).map_err(werr(&tmp))?;
    let mut out = std::io::BufWriter::new(file);
    signed.write(records, extra, &mut out).map_err(werr(&tmp))?;
    let file = out.into_inner().map_err(|e| werr(&tmp)(e.into_error()))?;
    file.sync_all().map_err(werr(&tmp))?;
    std::fs::rename(&tmp, bundle_path).map_err(werr(bundle_path))?;
    Ok(())
}

/// The legs of an encoded record, read without decoding the rest of it: a record's map
/// starts with `seq` and `legs` (the order of [`Record`]'s fields). `None` when the bytes
/// do not start that way; the caller then decodes the record whole.
fn peek_legs(b: &[u8]) -> Option<Vec<&str>> {
    fn head(b: &[u8], p: &mut usize) -> Option<(u8, u64)> {
        let first = *b.get(*p)?;
        *p += 1;
        let extra = match first & 0x1f {
            n @ 0..=23 => return Some((first >> 5, u64::from(n))),
            24 => 1,
            25 => 2,
            26 => 4,
            27 => 8,
            _ => return None,
        };
        let arg = b.get(*p..*p + extra)?;
        *p += extra;
        Some((
            first >> 5,
            arg.iter().fold(0, |n, x| n << 8 | u64::from(*x)),
        ))
    }
    fn text<'a>(b: &'a [u8], p: &mut usize) -> Option<&'a str> {
        let (major, n) = head(b, p)?;
        let end = p.checked_add(usize::try_from(n).ok()?)?;
        let s = std::str::from_utf8(b.get(*p..end).filter(|_| major == 3)?).ok()?;
        *p = end;
        Some(s)
    }
    let mut p = 0;
    if head(b, &mut p)?.0 != 5 || text(b, &mut p)? != "seq" || head(b, &mut p)?.0 != 0 {
        return None;
    }
    if text(b, &mut p)? != "legs" {
        return None;
    }
    let (major, n) = head(b, &mut p)?;
    if major != 4 {
        return None;
    }
    (0..n).map(|_| text(b, &mut p)).collect()
}

/// The records of a journal file, read from disk on every pass (the first `limit`).
struct FileRecords {
    path: PathBuf,
    limit: u64,
}

impl RecordSource for FileRecords {
    fn each(&self, f: &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        if self.limit == 0 {
            return Ok(());
        }
        let mut r = BufReader::with_capacity(1 << 16, std::fs::File::open(&self.path)?);
        let mut seen = 0u64;
        while seen < self.limit {
            match read_item(&mut r) {
                Ok(Some(Item::Record(b))) => {
                    seen += 1;
                    f(&b)?;
                }
                Ok(Some(Item::Meta(_))) => {}
                Ok(None) | Err(_) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "{}: the journal ends before record {seen}",
                            self.path.display()
                        ),
                    ))
                }
            }
        }
        Ok(())
    }
}

/// One item of a journal file.
enum Item {
    Record(Vec<u8>),
    Meta(Vec<u8>),
}

/// Why an item could not be read: the file ends inside it, or its framing is not a
/// journal item. `record` tells whether it had begun as a record.
struct Torn {
    record: bool,
}

fn read_byte(r: &mut impl Read) -> std::io::Result<Option<u8>> {
    let mut b = [0u8; 1];
    loop {
        return match r.read(&mut b) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(b[0])),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
    }
}

/// The next item, `Ok(None)` at a clean end of file.
fn read_item(r: &mut impl Read) -> Result<Option<Item>, Torn> {
    let Ok(first) = read_byte(r) else {
        return Err(Torn { record: false });
    };
    let Some(mut b) = first else {
        return Ok(None);
    };
    let meta = b == 0xd8;
    let torn = Torn { record: !meta };
    if meta {
        if read_byte(r).ok().flatten() != Some(24) {
            return Err(torn);
        }
        b = match read_byte(r) {
            Ok(Some(b)) => b,
            _ => return Err(torn),
        };
    }
    if b >> 5 != 2 {
        return Err(torn);
    }
    let extra = match b & 0x1f {
        n @ 0..=23 => {
            return read_body(r, u64::from(n), meta);
        }
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        _ => return Err(torn),
    };
    let mut buf = [0u8; 8];
    if r.read_exact(&mut buf[8 - extra..]).is_err() {
        return Err(torn);
    }
    read_body(r, u64::from_be_bytes(buf), meta)
}

fn read_body(r: &mut impl Read, len: u64, meta: bool) -> Result<Option<Item>, Torn> {
    let mut bytes = Vec::new();
    // `take` never allocates more than the file holds, whatever the length claims.
    match r.take(len).read_to_end(&mut bytes) {
        Ok(n) if n as u64 == len => Ok(Some(if meta {
            Item::Meta(bytes)
        } else {
            Item::Record(bytes)
        })),
        _ => Err(Torn { record: !meta }),
    }
}

/// What [`recover`] did.
#[derive(Debug, Clone)]
pub struct Recovered {
    /// The sealed bundle.
    pub bundle: PathBuf,
    /// Records sealed.
    pub records: u64,
    /// Records dropped past a torn write (or past a record that broke the chain).
    pub dropped: u64,
    /// Byte offset of the first unreadable item, if any.
    pub torn_at: Option<u64>,
    /// Records covered by the last sync mark kept (none in a journal that never
    /// reached a sync bound, or of layout 2).
    pub synced: Option<u64>,
}

/// Counts bytes read, for the offset of a torn write.
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Seal the journal of a run that was killed (SIGKILL, power loss) into a bundle with
/// status `recovered`. The header must be intact; records are taken while they decode
/// and chain (seq and prev), the first one that does not, and everything after it, is
/// dropped and counted in `run.failure`. The bundle is written beside the journal, under
/// the name the run would have used; the journal is then removed.
pub fn recover(journal: &Path, key: &SecretKey) -> Result<Recovered, RecoverError> {
    let read_err = |source| RecoverError::Read {
        path: journal.to_path_buf(),
        source,
    };
    let not = |reason: &str| RecoverError::NotAJournal {
        path: journal.to_path_buf(),
        reason: reason.to_string(),
    };
    let name = journal.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let Some(stem) = name.strip_suffix(".journal") else {
        return Err(not("the file name does not end in .journal"));
    };
    let bundle = journal.with_file_name(stem);
    if bundle.exists() {
        return Err(RecoverError::Exists(bundle));
    }
    let file = std::fs::File::open(journal).map_err(read_err)?;
    let finished_at = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(now_us, |d| d.as_micros() as i64);
    let mut r = Counting {
        inner: BufReader::with_capacity(1 << 16, file),
        pos: 0,
    };
    let header: JournalHeader = match read_item(&mut r) {
        Ok(Some(Item::Meta(b))) => {
            ciborium::from_reader(b.as_slice()).map_err(|_| not("its header does not decode"))?
        }
        _ => return Err(not("it does not start with a journal header")),
    };
    if !(2..=JOURNAL_VERSION).contains(&header.journal) || header.format != FORMAT_ID {
        return Err(not(&format!(
            "journal layout {} of {}, this build reads 2 to {JOURNAL_VERSION} of {FORMAT_ID}",
            header.journal, header.format
        )));
    }
    let (mut target, mut session, mut tokens) = (header.target.clone(), None, Vec::new());
    let (mut inputs, mut failure, mut capped_from) = (None, None, None);
    let (mut head, mut count) = (genesis(&header.run_id), 0u64);
    let (mut dropped, mut torn_at, mut synced) = (0u64, None, None);
    loop {
        let at = r.pos;
        let item = match read_item(&mut r) {
            Ok(Some(i)) => i,
            Ok(None) => break,
            Err(t) => {
                torn_at = Some(at);
                dropped += u64::from(t.record);
                break;
            }
        };
        let ok = match &item {
            Item::Record(b) => match mcp_probe_schema::bundle::decode_record(b) {
                Ok(rec) if rec.seq == count && rec.prev == head => {
                    head = sha256(b);
                    count += 1;
                    true
                }
                _ => false,
            },
            Item::Meta(b) => match ciborium::from_reader::<Update, _>(b.as_slice()) {
                Ok(u) => {
                    match u {
                        Update::Target(t) => target = t,
                        Update::Session(s) => session = *s,
                        Update::Token(t) => tokens.push(t),
                        Update::Inputs(i) => inputs = i,
                        Update::Failure(f) => failure = f,
                        Update::CappedFrom(s) => capped_from = Some(s),
                        Update::Synced(n) => synced = Some(n),
                    }
                    true
                }
                Err(_) => false,
            },
        };
        if !ok {
            // A damaged item: it and every record after it are dropped.
            torn_at = Some(at);
            dropped += u64::from(matches!(item, Item::Record(_)));
            loop {
                match read_item(&mut r) {
                    Ok(Some(Item::Record(_))) => dropped += 1,
                    Ok(Some(Item::Meta(_))) => {}
                    Ok(None) => break,
                    Err(t) => {
                        dropped += u64::from(t.record);
                        break;
                    }
                }
            }
            break;
        }
    }
    let mut note = match torn_at {
        Some(at) => format!(
            "recovered by mcp-collect --recover from the journal of a run that did not finish: \
             {count} record(s) kept; {dropped} record(s) dropped past a torn or damaged write at byte {at}"
        ),
        None => format!(
            "recovered by mcp-collect --recover from the journal of a run that did not finish: \
             {count} record(s) kept; the journal was intact (no record dropped)"
        ),
    };
    if let Some(n) = synced {
        note.push_str(&format!(
            "; the journal's last sync mark covers {n} record(s)"
        ));
    }
    let failure = Some(match failure {
        Some(f) => format!("{f}; {note}"),
        None => note,
    });
    let head_ev = Evidence {
        format: FORMAT_ID.to_string(),
        collector: header.collector,
        run: Run {
            run_id: header.run_id,
            started_at: header.started_at,
            finished_at,
            status: RunStatus::Recovered,
            failure,
            options: header.options,
            inputs,
            bundle_capped_from: capped_from,
        },
        target,
        session,
        tokens,
        records: Vec::new(),
        chain_head: Vec::new(),
    };
    let records = FileRecords {
        path: journal.to_path_buf(),
        limit: count,
    };
    seal_file(&head_ev, &records, &Redactor::new(), key, &bundle)?;
    let _ = std::fs::remove_file(journal);
    Ok(Recovered {
        bundle,
        records: count,
        dropped,
        torn_at,
        synced,
    })
}

#[cfg(test)]
mod tests;
