//! `mcp-grade [OPTIONS] BUNDLE...`: verify every input, grade every bundle in its
//! baseline context, write one report, store baselines.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use mcp_probe_schema::model::{Evidence as Payload, RunStatus};

use super::error::GradeError;
use crate::baseline;
use crate::benchmark::CheckResult;
use crate::check::Context;
use crate::evidence::Bundle;
use crate::exit::ExitStatus;
use crate::fmt::escape_line;
use crate::load::{
    for_grading, load_signers, read_bundle, read_checked, read_verified, read_verified_as,
    reread_verified, Error, VerifiedFile,
};
use crate::output::Diag;
use crate::report::{self, BaselineInfo, BaselineMode, Format, Report, Server};
use crate::timestamp::TimestampState;
use crate::trust_list::{Refused, Signers};

/// Where the comparing checks of a grading run get their baseline.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BaselineChoice {
    /// The per-endpoint store, when it holds a baseline for the endpoint.
    #[default]
    Stored,
    /// `--baseline FILE`.
    File(PathBuf),
    /// `--update-baseline`: compare nothing, store each graded bundle.
    Update,
}

/// Everything `mcp-grade [OPTIONS] BUNDLE...` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct GradeOptions {
    /// Bundles to grade.
    pub bundles: Vec<PathBuf>,
    /// Report format.
    pub format: Format,
    /// Write the report here (atomically) instead of to stdout.
    pub output: Option<PathBuf>,
    /// `--level`: 1 for L1 checks only, 2 for L1 and L2.
    pub level: Option<u8>,
    /// `--trust` key files; they pin the signers of graded bundles and baselines alike.
    pub trust: Vec<PathBuf>,
    /// `--trust-list`: collector keys with their periods and revocations; like `--trust`,
    /// it applies to graded bundles and baselines alike.
    pub trust_list: Option<PathBuf>,
    /// `--tsa-cert` files: trust anchors for the bundles' RFC 3161 timestamps.
    pub tsa_certs: Vec<PathBuf>,
    /// Baseline source.
    pub baseline: BaselineChoice,
    /// The state directory holding `baselines/` (see [`baseline::state_dir`]).
    pub state_dir: Option<PathBuf>,
    /// `--policy`: the operator's policy file.
    pub policy: Option<PathBuf>,
    /// `--waivers`: accepted findings.
    pub waivers: Option<PathBuf>,
    /// `--strict-waivers`: a stale or an expired waiver is a usage error.
    pub strict_waivers: bool,
    /// `--attestations`: the operator's attestations.
    pub attestations: Option<PathBuf>,
    /// `--fail-on`: which verdicts fail the run.
    pub fail_on: crate::waivers::FailOn,
    /// `--verbose`: the whole check-centric text report.
    pub verbose: bool,
    /// `--group-by source`: servers listed by the client configuration they came from.
    pub group_by_source: bool,
    /// The width the text summary is wrapped to.
    pub width: usize,
    /// The height the text summary's first screen fits in (0: 24).
    pub height: usize,
    /// `--benchmark`: the definition (or tailoring) graded under.
    pub benchmark: crate::benchmark::Choice,
    /// `--jobs`: how many bundles are verified and graded at once; 0 for the number of
    /// cores ([`crate::pipeline::default_jobs`]). The report and every message are the
    /// same bytes whatever the number.
    pub jobs: usize,
    /// `--attest`: write a signed statement binding the report to the bundles here.
    pub attest: Option<PathBuf>,
    /// `--attest-key`: the grader key signing it (default: the state directory's).
    pub attest_key: Option<PathBuf>,
}

impl GradeOptions {
    /// The number of bundles verified and graded at once (`jobs`, or the cores).
    pub fn jobs(&self) -> usize {
        match self.jobs {
            0 => crate::pipeline::default_jobs(),
            n => n,
        }
    }
}

/// What is kept of a verified input for the whole run: enough to apply the baseline
/// rules, to choose what `--update-baseline` stores and, with two passes, to read the
/// file again for grading only if it is still the bundle that verified
/// ([`Input::digest`]); not the bundle.
struct Input {
    /// The path as given.
    path: PathBuf,
    /// SHA-256 of the bytes that verified; `None` when this run reads the file no more
    /// (one pass without `--update-baseline`), so nothing can be bound to it.
    digest: Option<[u8; 32]>,
    /// `target.endpoint`: the endpoint, if one answered.
    endpoint: Option<String>,
    /// [`Bundle::endpoint`]: the endpoint, else the target as typed.
    label: String,
    /// `run.started_at`.
    started_at: i64,
    /// Why it would not be stored as its endpoint's baseline, if it would not.
    unstorable: Option<&'static str>,
}

impl Input {
    fn new(path: &Path, digest: Option<[u8; 32]>, p: &Payload) -> Input {
        Input {
            path: path.to_path_buf(),
            digest,
            endpoint: p.target.endpoint.clone(),
            label: p
                .target
                .endpoint
                .clone()
                .unwrap_or_else(|| p.target.as_typed.clone()),
            started_at: p.run.started_at,
            unstorable: unstorable(p),
        }
    }

    /// The path as the report and messages show it ([`Bundle::path`]).
    fn display_path(&self) -> String {
        self.path.display().to_string()
    }
}

/// Read and verify one bundle. On failure, one line on `err` names the file and what
/// failed (`what` says which input it was: a graded bundle or the `--baseline`), and
/// the returned status says how it failed. The bundle is not kept: `keep` takes what it
/// needs from the verified contents and their digest.
fn verify_one<T>(
    path: &Path,
    what: &str,
    trust: &Signers,
    err: &mut Diag<'_>,
    keep: impl FnOnce(VerifiedFile) -> T,
) -> Result<Result<T, ExitStatus>, GradeError> {
    checked_status(
        path,
        what,
        read_verified(path, trust).map(|r| r.map(keep)),
        err,
    )
}

/// What the verify pass says of one input: its facts, or the status it failed with after
/// one line on `err` naming it.
fn checked_status<T>(
    path: &Path,
    what: &str,
    checked: Result<Result<T, Refused>, Error>,
    err: &mut Diag<'_>,
) -> Result<Result<T, ExitStatus>, GradeError> {
    let shown = escape_line(&path.display().to_string());
    match checked {
        Err(e) => {
            err.error(&format!("{what}{e}"))?;
            Ok(Err(e.exit_status()))
        }
        Ok(Ok(v)) => Ok(Ok(v)),
        Ok(Err(e)) => {
            err.error(&format!("INVALID {what}{shown}: {e}; not graded"))?;
            Ok(Err(ExitStatus::Invalid))
        }
    }
}

/// The grade pass's read of an input: the same file, the same bytes as verified, decoded
/// (not verified a second time: its SHA-256 binds it to the bytes that did), or an error
/// (nothing is graded from a file that changed after the verify pass).
fn reopen(i: &Input) -> Result<(Bundle, mcp_probe_schema::tsp::Stamp), GradeError> {
    let again = match &i.digest {
        Some(d) => reread_verified(&i.path, d)?,
        // Without the digest of what verified, no read can be shown to be the same bytes.
        None => None,
    };
    match again {
        Some(v) => Ok((for_grading(i.display_path(), v.verified), v.stamp)),
        None => Err(GradeError::Changed {
            path: escape_line(&i.display_path()),
        }),
    }
}

/// One input graded from its verified evidence: its server summary and check results,
/// computed on a worker thread (a pure function of the bundle, the definition and the
/// shared read-only options).
#[allow(clippy::too_many_arguments)]
fn grade_evidence(
    opts: &GradeOptions,
    bm: &'static crate::benchmark::Benchmark,
    file_baseline: &Option<(String, Bundle)>,
    stored: Option<&Stored>,
    policy: Option<&crate::policy::Policy>,
    tsa: &crate::timestamp::TsaTrust,
    i: &Input,
    ev: &Bundle,
    stamp: mcp_probe_schema::tsp::Stamp,
) -> (Server, Vec<CheckResult>) {
    let (cx, info) = baseline_context(opts, file_baseline, stored);
    let applied = policy.map(|p| p.applied(i.endpoint.as_deref().unwrap_or_default()));
    let cx = Context {
        policy: applied.as_ref(),
        ..cx
    };
    // The report prints no leg's note: they are dropped, not rendered.
    let results = crate::benchmark::runner::grade_bundle_for_report(bm, ev, &cx, opts.level);
    let mut server = Server::new(ev, info);
    server.timestamp = TimestampState::from_stamp(stamp, tsa);
    server.sha256 = i.digest.map(hex::encode);
    // What the report's renderer reads from the bundle, which is dropped before it runs.
    report::extras(opts.format, ev, &results, &mut server);
    (server, results)
}

/// The stored baseline of one endpoint, as looked up ([`StoredCache`]).
enum Stored {
    Absent,
    Valid(String, Box<Bundle>),
    Rejected(String, String),
}

/// Read and verify the stored baseline of `endpoint` (no message: a rejected one is
/// warned about through [`rejected`], in argument order).
fn lookup_stored(state: &Path, endpoint: &str, trust: &Signers) -> Stored {
    let path = baseline::stored_path(state, endpoint);
    let shown = path.display().to_string();
    let read = match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Stored::Absent,
        _ => read_verified(&path, trust),
    };
    let problem = match read {
        Err(e) => e.to_string(),
        Ok(Ok(v)) => return Stored::Valid(shown.clone(), Box::new(for_grading(shown, v.verified))),
        Ok(Err(e)) => format!("failed verification: {e}"),
    };
    Stored::Rejected(shown, problem)
}

/// The stored baselines of a run with the per-endpoint store. An input's endpoint is
/// known only once it verified, so each endpoint's baseline is read and verified when an
/// input of it is first graded and kept among the most recently used (twice the
/// window of `--jobs`); inputs of one endpoint given together (a directory per endpoint,
/// a sorted listing) read it once, and an endpoint whose inputs are further apart than
/// that reads it again. Memory does not grow with the number of endpoints. A store whose
/// directory does not exist when the run begins holds no baseline for any endpoint, and
/// is not looked into again during the run.
struct StoredCache<'p> {
    state: Option<&'p Path>,
    recent: std::sync::Mutex<Recent>,
    capacity: usize,
    /// `Some` when the store's directory did not exist as the run began: every endpoint
    /// then has no stored baseline, and none is looked up (a lookup of a file that is not
    /// there took a path, a hash and a failing `statx` for each input).
    none_stored: Option<std::sync::Arc<Stored>>,
}

/// Endpoints and their stored baselines, the most recently used first.
type Recent = std::collections::VecDeque<(String, std::sync::Arc<Stored>)>;

impl<'p> StoredCache<'p> {
    fn new(opts: &'p GradeOptions, jobs: usize) -> StoredCache<'p> {
        let state = match (&opts.baseline, &opts.state_dir) {
            (BaselineChoice::Stored, Some(state)) => Some(state.as_path()),
            _ => None,
        };
        // Only a store that is certainly absent is passed over: any other failure to
        // read the directory is left to each lookup, which reports it.
        let none_stored = state
            .filter(|s| {
                std::fs::metadata(baseline::store_dir(s))
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            })
            .map(|_| std::sync::Arc::new(Stored::Absent));
        StoredCache {
            state,
            recent: std::sync::Mutex::default(),
            capacity: 2 * crate::pipeline::window(jobs),
            none_stored,
        }
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Recent> {
        self.recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The stored baseline of `i`'s endpoint (`None`: no store, or no endpoint).
    fn hold(&self, i: &Input, trust: &Signers) -> Option<std::sync::Arc<Stored>> {
        let (state, ep) = (self.state?, i.endpoint.as_deref()?);
        if let Some(absent) = &self.none_stored {
            return Some(std::sync::Arc::clone(absent));
        }
        let known = |recent: &mut Recent| {
            let k = recent.iter().position(|(e, _)| e == ep)?;
            let hit = recent.remove(k)?;
            let s = std::sync::Arc::clone(&hit.1);
            recent.push_front(hit);
            Some(s)
        };
        if let Some(s) = known(&mut self.recent()) {
            return Some(s);
        }
        let read = std::sync::Arc::new(lookup_stored(state, ep, trust));
        let mut recent = self.recent();
        // Another worker may have read it meanwhile: every input then uses the same one.
        if let Some(s) = known(&mut recent) {
            return Some(s);
        }
        recent.push_front((ep.to_string(), std::sync::Arc::clone(&read)));
        recent.truncate(self.capacity);
        Some(read)
    }
}

/// The warning about a rejected stored baseline (`held`) of `i`'s endpoint: printed for
/// the first input of each endpoint only, in the order the arguments first name it.
fn rejected(i: &Input, held: &Stored) -> Option<String> {
    let ep = i.endpoint.as_deref()?;
    let Stored::Rejected(shown, problem) = held else {
        return None;
    };
    Some(format!(
        "stored baseline {shown} for {ep} ignored ({problem}); comparing checks have no baseline"
    ))
}

/// From this many bundles on, the report's outcomes go to a spill file in the temporary
/// directory while grading (memory independent of the count); below it they are kept in
/// memory (a few hundred KiB), so a small run needs no writable temporary directory (a
/// jump host's empty root has none). Both write the same report bytes.
pub const SPILL_FROM: usize = 64;

/// Why a graded bundle is not stored as its endpoint's baseline, if it is not.
fn unstorable(p: &Payload) -> Option<&'static str> {
    if p.target.endpoint.is_none() {
        Some("no MCP endpoint answered")
    } else if p
        .session
        .as_ref()
        .and_then(|s| s.revision.as_ref())
        .is_none()
    {
        Some("no MCP session was established, and an empty inventory must not replace a good baseline")
    } else if p.run.status != RunStatus::Complete {
        Some("the run did not complete, so its inventory may be partial")
    } else {
        None
    }
}

/// `mcp-grade [OPTIONS] BUNDLE...`: grade every bundle and write one report.
///
/// Every input (bundles and `--baseline`) is read and verified before anything is
/// graded. When any cannot be read or fails verification, each failure gets one line on
/// `err` naming the file, and *nothing* is graded or reported: a report that silently
/// left out a server would read like a complete one. The status is then
/// [`ExitStatus::Usage`] (unreadable) or [`ExitStatus::Invalid`].
///
/// Otherwise each bundle is graded with [`crate::benchmark::grade_bundle`] in its baseline context
/// (see [`crate::baseline`]), `--update-baseline` stores each endpoint's newest complete
/// bundle (its path printed on `err`), and the report goes to `out` or, with `-o`, to
/// the file (written atomically). The status is [`Report::status`] (FAIL before ERROR),
/// or [`ExitStatus::Usage`] when a baseline could not be stored.
///
/// Without `--baseline FILE` that is one pass over the inputs (`Passes::one`): each is
/// read once, verified and decoded once and graded, and what was graded is dropped if a
/// later input fails verification. With it, two (`Passes::two`): every input is
/// verified, then the baseline, then the inputs are read again and graded.
///
/// The passes run `opts.jobs` bundles at once ([`crate::pipeline::for_each_in_order`]);
/// results and messages are taken in argument order, so the report, stderr and status
/// are those of one job.
///
/// Memory: at most `2 x jobs` bundles at a time (plus the `--baseline` bundle, or the
/// stored baselines of the most recently graded endpoints: `StoredCache`), and of each
/// graded bundle only the report's server summary and check results.
pub fn grade(
    opts: &GradeOptions,
    out: &mut dyn Write,
    err: &mut Diag<'_>,
) -> Result<ExitStatus, GradeError> {
    let bm = opts.benchmark.resolve()?;
    let trust = load_signers(&opts.trust, opts.trust_list.as_deref(), &opts.tsa_certs)?;
    let tsa = trust.tsa().clone();
    if opts.baseline == BaselineChoice::Update && opts.state_dir.is_none() {
        return Err(GradeError::NoStateDir);
    }
    let policy = opts
        .policy
        .as_deref()
        .map(crate::policy::Policy::load)
        .transpose()?;
    let waivers = opts
        .waivers
        .as_deref()
        .map(|w| crate::waivers::Waivers::load(w, bm))
        .transpose()?;
    let attestations = opts
        .attestations
        .as_deref()
        .map(|a| crate::attestations::Attestations::load(a, bm))
        .transpose()?;
    // The grader key before anything is graded: a key that cannot be had stops the run.
    let attest = match &opts.attest {
        Some(path) => {
            let (key, created) = crate::attest::key::load_or_create(
                opts.attest_key.as_deref(),
                opts.state_dir.as_deref(),
            )?;
            if let Some(p) = created {
                err.note(&format!(
                    "created the grader key; its public key is {}",
                    p.display()
                ))?;
            }
            Some(crate::attest::Attest {
                path: path.clone(),
                key,
            })
        }
        None => None,
    };

    let jobs = opts.jobs();
    let passes = Passes {
        opts,
        bm,
        trust: &trust,
        policy: policy.as_ref(),
        tsa: &tsa,
        jobs,
    };
    // `--baseline FILE` is verified after every input and checked against all of their
    // endpoints before anything is graded: two passes. Otherwise one.
    let graded = if matches!(opts.baseline, BaselineChoice::File(_)) {
        passes.two(err)?
    } else {
        passes.one(err)?
    };
    let Graded {
        mut builder,
        number,
        inputs,
    } = match graded {
        Ok(g) => g,
        Err(failed) => return Ok(failed),
    };

    let mut status = ExitStatus::Pass;
    if opts.baseline == BaselineChoice::Update {
        let state = opts.state_dir.as_deref().ok_or(GradeError::NoStateDir)?;
        let infos = update_baselines(state, &inputs, err)?;
        for (n, (new, ok)) in infos.into_iter().enumerate() {
            builder.set_baseline(number[n], new);
            if !ok {
                status = status.worst(ExitStatus::Usage);
            }
        }
    }
    // What `--attest` names: each graded bundle by its path and the SHA-256 of the bytes
    // that verified.
    let subjects: Vec<(String, [u8; 32])> = match attest {
        Some(_) => inputs
            .iter()
            .filter_map(|i| i.digest.map(|d| (i.display_path(), d)))
            .collect(),
        None => Vec::new(),
    };
    drop(inputs);

    let mut report = builder.finish()?;
    report.policy = policy.map(|p| report::PolicyInfo {
        file: p.path.display().to_string(),
        sha256: p.sha256,
    });
    report.fail_on = opts.fail_on;
    report.verbose = opts.verbose;
    report.group_by_source = opts.group_by_source;
    report.width = opts.width;
    report.height = if opts.height == 0 { 24 } else { opts.height };
    report.jobs = jobs;
    if let Some(w) = &waivers {
        report.apply_waivers(w, crate::waivers::today());
        for n in report.waivers.iter().flat_map(|a| a.notices()) {
            let text = format!(
                "--waivers {}: {}",
                escape_line(&w.path.display().to_string()),
                escape_line(&n)
            );
            if opts.strict_waivers {
                err.error(&text)?;
                status = status.worst(ExitStatus::Usage);
            } else {
                err.warn(&text)?;
            }
        }
    }
    if let Some(a) = &attestations {
        report.apply_attestations(a, crate::waivers::today());
        for x in report.attestations.iter().flat_map(|x| &x.expired) {
            let text = format!(
                "--attestations {}: {}",
                escape_line(&a.path.display().to_string()),
                escape_line(&x.expiry_notice())
            );
            err.warn(&text)?;
        }
    }
    status = status.worst(report.status());
    let Some(attest) = attest else {
        write_report(report, opts, out, None)?;
        return Ok(status);
    };
    let name = opts.output.as_ref().map_or_else(
        || crate::attest::STDOUT_NAME.to_string(),
        |p| p.display().to_string(),
    );
    let predicate = crate::attest::predicate(&report, opts.format, &name);
    let mut digest = [0; 32];
    write_report(report, opts, out, Some(&mut digest))?;
    let statement = crate::attest::statement(&subjects, &digest, predicate);
    let envelope = crate::attest::sign(&statement, &attest.key);
    crate::attest::write(&attest.path, &envelope).map_err(|source| GradeError::WriteStatement {
        path: attest.path.clone(),
        source,
    })?;
    Ok(status)
}

/// What grading every input gave: the report builder holding each server, each input's
/// number in it, and the facts of each input (argument order; one pass keeps them only
/// for `--update-baseline`, the one use after grading).
struct Graded {
    builder: report::Builder,
    number: Vec<usize>,
    inputs: Vec<Input>,
}

/// The shared, read-only context of grading a run's inputs.
struct Passes<'a> {
    opts: &'a GradeOptions,
    bm: &'static crate::benchmark::Benchmark,
    trust: &'a Signers,
    policy: Option<&'a crate::policy::Policy>,
    tsa: &'a crate::timestamp::TsaTrust,
    jobs: usize,
}

impl Passes<'_> {
    /// The report builder for `n` servers: room made for them, and from [`SPILL_FROM`]
    /// on their outcomes in a spill file (removed however the run ends).
    fn builder(&self, n: usize) -> Result<report::Builder, GradeError> {
        let spill = if n >= SPILL_FROM {
            Some(report::Spill::create(
                None,
                report::spill_form(self.opts.format),
            )?)
        } else {
            None
        };
        let mut builder = report::Builder::new(self.bm, self.opts.level, spill);
        builder.reserve(n);
        Ok(builder)
    }

    /// Two passes (with `--baseline FILE`): the verify pass verifies every input once and
    /// keeps only the facts of each ([`Input`]); then the baseline file is verified and
    /// checked against every input's endpoint; then the grade pass reads each file again,
    /// decodes it only if its bytes are the ones that verified (else
    /// [`GradeError::Changed`], nothing graded) and grades it. `Ok(Err(status))`: nothing
    /// graded (an input or the baseline failed, said on `err`).
    fn two(&self, err: &mut Diag<'_>) -> Result<Result<Graded, ExitStatus>, GradeError> {
        let Passes {
            opts,
            bm,
            trust,
            policy,
            tsa,
            jobs,
        } = *self;
        // Verify pass: every input, `opts.jobs` at a time, each fully verified once; nothing
        // is kept but the facts of `Input`. Messages come out in argument order.
        let mut failed = ExitStatus::Pass;
        let mut failures = 0;
        let mut inputs = Vec::with_capacity(opts.bundles.len());
        crate::pipeline::for_each_in_order(
            &opts.bundles,
            jobs,
            |_, path| {
                read_checked(path, trust)
                    .map(|r| r.map(|c| Input::new(path, Some(c.digest), &c.checked.evidence)))
            },
            |n, checked| {
                match checked_status(&opts.bundles[n], "", checked, err)? {
                    Ok(i) => inputs.push(i),
                    Err(s) => {
                        failed = failed.worst(s);
                        failures += 1;
                    }
                }
                err.progress("verified", n + 1, opts.bundles.len())?;
                Ok::<_, GradeError>(())
            },
        )?;
        err.progress_done()?;
        let file_baseline = match &opts.baseline {
            BaselineChoice::File(p) => {
                let shown = p.display().to_string();
                match verify_one(p, "--baseline ", trust, err, |v| {
                    for_grading(shown.clone(), v.verified)
                })? {
                    Ok(ev) => Some((shown, ev)),
                    Err(s) => {
                        failed = failed.worst(s);
                        failures += 1;
                        None
                    }
                }
            }
            _ => None,
        };
        if failed != ExitStatus::Pass {
            return nothing_graded(err, failed, failures);
        }

        if let Some((bpath, b)) = &file_baseline {
            if let Some(i) = inputs.iter().find(|i| i.label != b.endpoint()) {
                return Err(GradeError::BaselineEndpoint {
                    baseline: escape_line(bpath),
                    baseline_endpoint: escape_line(&b.endpoint()),
                    bundle: escape_line(&i.display_path()),
                    endpoint: escape_line(&i.label),
                });
            }
        }

        // Grade pass: `opts.jobs` bundles at a time, each read again, hash-checked and
        // decoded (not verified again), graded and described on a worker; results and
        // messages arrive here in argument order, so the report and stderr are those of a
        // one-job run. Each server goes to the report builder as it arrives: from
        // `SPILL_FROM` bundles on its outcomes go to a spill file at once (memory does not
        // grow with the bundles; the file is removed however the run ends), and the builder
        // orders the servers as the report lists them.
        // With `--baseline FILE` no stored baseline is read.
        let mut builder = self.builder(inputs.len())?;
        // Each worker puts its server in the report's shape (outcomes in row order, encoded
        // for the spill file): this thread, which writes in order, only appends.
        let preparer = builder.preparer();
        let total = inputs.len();
        let mut number = vec![usize::MAX; total];
        crate::pipeline::for_each_in_order(
            &inputs,
            jobs,
            |_, i| {
                let (ev, stamp) = reopen(i)?;
                let (server, results) =
                    grade_evidence(opts, bm, &file_baseline, None, policy, tsa, i, &ev, stamp);
                Ok(preparer.prepare(server, results))
            },
            |n, r: Result<_, GradeError>| {
                number[n] = builder.add(r?)?;
                err.progress("graded", n + 1, total)?;
                Ok::<_, GradeError>(())
            },
        )?;
        err.progress_done()?;
        drop(file_baseline);
        Ok(Ok(Graded {
            builder,
            number,
            inputs,
        }))
    }

    /// One pass (without `--baseline FILE`): each input is read once, verified and
    /// decoded once, and graded on the same worker (its stored baseline from a small
    /// cache, [`StoredCache`]). Everything graded waits in the builder: if any input
    /// fails verification, nothing is graded (the builder and its spill file are
    /// dropped), and the warnings of grading are printed only once every input verified,
    /// after the messages of verification, as two passes print them. Once an input has
    /// failed, later inputs are only verified.
    fn one(&self, err: &mut Diag<'_>) -> Result<Result<Graded, ExitStatus>, GradeError> {
        let Passes {
            opts,
            bm,
            trust,
            policy,
            tsa,
            jobs,
        } = *self;
        let stored = StoredCache::new(opts, jobs);
        // Only `--update-baseline` reads an input again (to store it), bound to what
        // verified by this digest, and `--attest` names each by it; without them the
        // bytes are not hashed a second time.
        let digest = opts.baseline == BaselineChoice::Update || opts.attest.is_some();
        // A report that names each bundle by its SHA-256 takes it in the same pass.
        let hash = digest || opts.format.names_bundle_digests();
        let mut builder = self.builder(opts.bundles.len())?;
        let preparer = builder.preparer();
        let failing = std::sync::atomic::AtomicBool::new(false);
        let mut failed = ExitStatus::Pass;
        let mut failures = 0;
        let mut inputs = Vec::with_capacity(if digest { opts.bundles.len() } else { 0 });
        let mut number = Vec::with_capacity(opts.bundles.len());
        // Endpoints whose first input was delivered, and the grading warnings held back.
        let mut seen = std::collections::HashSet::new();
        let mut warnings = Vec::new();
        crate::pipeline::for_each_in_order(
            &opts.bundles,
            jobs,
            |_, path| {
                read_verified_as(path, trust, hash).map(|r| {
                    r.map(|v| {
                        let input = Input::new(path, v.digest, &v.verified.evidence);
                        if failing.load(std::sync::atomic::Ordering::Relaxed) {
                            return (input, None);
                        }
                        let held = stored.hold(&input, trust);
                        let warning = held.as_deref().and_then(|h| rejected(&input, h));
                        let (ev, stamp) = (for_grading(input.display_path(), v.verified), v.stamp);
                        let (server, results) = grade_evidence(
                            opts,
                            bm,
                            &None,
                            held.as_deref(),
                            policy,
                            tsa,
                            &input,
                            &ev,
                            stamp,
                        );
                        drop(held);
                        let prepared = preparer.prepare(server, results);
                        (input, Some((warning, prepared)))
                    })
                })
            },
            |n, checked| {
                match checked_status(&opts.bundles[n], "", checked, err)? {
                    Ok((input, graded)) => {
                        if let (ExitStatus::Pass, Some((warning, prepared))) = (failed, graded) {
                            let first = input.endpoint.clone().is_some_and(|e| seen.insert(e));
                            if let (true, Some(w)) = (first, warning) {
                                warnings.push(w);
                            }
                            number.push(builder.add(prepared)?);
                        }
                        // Only `--update-baseline` and `--attest` read them after grading.
                        if digest {
                            inputs.push(input);
                        }
                    }
                    Err(s) => {
                        failed = failed.worst(s);
                        failures += 1;
                        failing.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                err.progress("graded", n + 1, opts.bundles.len())?;
                Ok::<_, GradeError>(())
            },
        )?;
        err.progress_done()?;
        if failed != ExitStatus::Pass {
            return nothing_graded(err, failed, failures);
        }
        for w in warnings {
            err.warn(&w)?;
        }
        Ok(Ok(Graded {
            builder,
            number,
            inputs,
        }))
    }
}

/// `failures` inputs could not be read or failed verification: said once, and nothing
/// is graded.
fn nothing_graded(
    err: &mut Diag<'_>,
    failed: ExitStatus,
    failures: usize,
) -> Result<Result<Graded, ExitStatus>, GradeError> {
    err.error(&format!(
        "nothing graded: {failures} input bundle(s) could not be read or failed verification"
    ))?;
    Ok(Err(failed))
}

/// The report on `out`, or atomically in the `-o` file. With `digest`, the SHA-256 of
/// the bytes written is stored there (what `--attest` names the report by); without,
/// the bytes are not hashed (about a tenth of grading's instructions, for a digest no
/// one reads).
fn write_report(
    report: Report,
    opts: &GradeOptions,
    out: &mut dyn Write,
    digest: Option<&mut [u8; 32]>,
) -> Result<(), GradeError> {
    match &opts.output {
        None => {
            write_hashed(&report, opts.format, out, digest)?;
            out.flush()?;
            Ok(())
        }
        Some(p) => mcp_probe_schema::fsutil::write_atomic_with(p, false, |w| {
            write_hashed(&report, opts.format, w, digest)
        })
        .map_err(|source| GradeError::WriteReport {
            path: p.clone(),
            source,
        }),
    }
}

/// The report in `format` on `w`; with `digest`, through a
/// [`crate::attest::HashingWriter`], its SHA-256 stored in `digest`.
fn write_hashed(
    report: &Report,
    format: Format,
    w: &mut dyn Write,
    digest: Option<&mut [u8; 32]>,
) -> std::io::Result<()> {
    let Some(digest) = digest else {
        return report::write(report, format, w);
    };
    let mut h = crate::attest::HashingWriter::new(w);
    report::write(report, format, &mut h)?;
    *digest = h.finish();
    Ok(())
}

/// The baseline a bundle is graded against, and what the report says of it: the
/// `--baseline` file, none while `--update-baseline` records new ones, else the stored
/// baseline of the bundle's endpoint (`stored`, held by [`StoredCache`]).
fn baseline_context<'a>(
    opts: &GradeOptions,
    file_baseline: &'a Option<(String, Bundle)>,
    stored: Option<&'a Stored>,
) -> (Context<'a>, Option<BaselineInfo>) {
    match (&opts.baseline, &file_baseline) {
        (BaselineChoice::File(_), Some((p, b))) => (
            Context {
                baseline: Some(b),
                updating_baseline: false,
                ..Context::default()
            },
            Some(BaselineInfo::used(BaselineMode::File, p.clone(), b)),
        ),
        (BaselineChoice::Update, _) => (
            Context {
                baseline: None,
                updating_baseline: true,
                ..Context::default()
            },
            None,
        ),
        _ => match stored {
            Some(Stored::Valid(p, b)) => (
                Context {
                    baseline: Some(b),
                    updating_baseline: false,
                    ..Context::default()
                },
                Some(BaselineInfo::used(BaselineMode::Stored, p.clone(), b)),
            ),
            Some(Stored::Rejected(p, why)) => (
                Context::default(),
                Some(BaselineInfo::rejected(p.clone(), why.clone())),
            ),
            Some(Stored::Absent) | None => (Context::default(), None),
        },
    }
}

/// The bytes of `i` to store as a baseline: the file read again, only if it is still the
/// bundle that verified.
fn verified_bytes(i: &Input) -> std::io::Result<Vec<u8>> {
    let bytes = read_bundle(&i.path).map_err(|e| std::io::Error::other(e.to_string()))?;
    if Some(mcp_probe_schema::bundle::sha256(&bytes)) != i.digest {
        return Err(std::io::Error::other(
            "the bundle file changed after it was verified; not stored",
        ));
    }
    Ok(bytes)
}

/// Store each endpoint's newest storable bundle (by collection time; the later argument
/// on a tie) as its baseline. Returns, per input, what the report says and whether
/// nothing went wrong (a bundle that is not stored by rule is not an error; a write
/// that fails is).
fn update_baselines(
    state: &Path,
    inputs: &[Input],
    err: &mut Diag<'_>,
) -> Result<Vec<(BaselineInfo, bool)>, GradeError> {
    let mut newest: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, i) in inputs.iter().enumerate() {
        if i.unstorable.is_some() {
            continue;
        }
        let Some(ep) = i.endpoint.as_deref() else {
            continue;
        };
        let at = i.started_at;
        match newest.get(ep) {
            Some(&m) if inputs[m].started_at > at => {}
            _ => {
                newest.insert(ep, n);
            }
        }
    }
    let mut written: HashMap<usize, Result<PathBuf, String>> = HashMap::new();
    for (&ep, &n) in &newest {
        let r = verified_bytes(&inputs[n]).and_then(|bytes| baseline::store(state, ep, &bytes));
        match &r {
            Ok(p) => err.note(&format!("stored baseline for {ep}: {}", p.display()))?,
            Err(e) => err.error(&format!(
                "cannot store the baseline for {ep} at {}: {e}",
                baseline::stored_path(state, ep).display()
            ))?,
        }
        written.insert(n, r.map_err(|e| format!("cannot write it: {e}")));
    }
    Ok(inputs
        .iter()
        .enumerate()
        .map(|(n, i)| {
            let ep = &i.label;
            let path = baseline::stored_path(state, ep).display().to_string();
            if let Some(why) = i.unstorable {
                return (
                    BaselineInfo::update(path, false, Some(format!("not stored: {why}"))),
                    true,
                );
            }
            match written.get(&n) {
                Some(Ok(p)) => (
                    BaselineInfo::update(p.display().to_string(), true, None),
                    true,
                ),
                Some(Err(e)) => (BaselineInfo::update(path, false, Some(e.clone())), false),
                None => {
                    let other = newest
                        .get(ep.as_str())
                        .map(|&m| inputs[m].display_path())
                        .unwrap_or_default();
                    (
                        BaselineInfo::update(
                            path,
                            false,
                            Some(format!(
                                "not stored: a newer bundle of this endpoint ({other}) was stored"
                            )),
                        ),
                        true,
                    )
                }
            }
        })
        .collect())
}
