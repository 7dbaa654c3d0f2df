//! `mcp-grade verify`: one line per bundle (text or JSON Lines) and the exit status.

use std::io::Write;
use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::Checked;

use crate::exit::ExitStatus;
use crate::fmt::{escape_line, utc};
use crate::load::{load_signers, read_bundle, Error};
use crate::output::Diag;
use crate::renewal::{Renewal, RenewalJson};
use crate::timestamp::{TimestampJson, TimestampState};
use crate::trust_list::{KeyJson, KeyTrust, Signers};

/// `mcp-grade verify [--json] BUNDLE... [--trust KEYFILE]... [--trust-list FILE]
/// [--tsa-cert FILE]...`.
///
/// Text: one stdout line per bundle read: `OK <path>: signer …` or `INVALID <path>: <why>`.
/// A bundle that cannot be read gets one line on `err` naming it.
///
/// With `json`, one JSON object per bundle on stdout (JSON Lines), unreadable ones
/// included (see [`verify_json`]); an unreadable bundle is still named on `err` too.
///
/// Every bundle is reported before the status is decided: [`ExitStatus::Usage`] when any
/// could not be read, else [`ExitStatus::Invalid`] when any failed verification, else
/// [`ExitStatus::Pass`]. A `--trust`, `--trust-list` or `--tsa-cert` file that cannot be
/// read or parsed stops the command before any bundle (returned as an [`Error`]).
///
/// A bundle that verifies is then checked for an RFC 3161 timestamp
/// ([`crate::timestamp`]): a token that fails any step makes the bundle fail
/// verification (exit 3) with the step named (`timestamp <step>: …`); a bundle without a
/// token verifies as before and says `no timestamp` (or why the collector's TSA gave
/// none). Then its detached renewal tokens, `<bundle>.tsr`, `<bundle>.tsr.2`, … beside
/// it ([`crate::renewal`]): a sidecar that fails a step or a link fails the bundle,
/// naming the sidecar and the step; a bundle without sidecars is reported as before.
///
/// With `trust_list`, a bundle whose timestamp passed is then judged by the list
/// ([`Signers::judge`]): refused, it is INVALID with the reason; accepted, its line says
/// which key applied, its period and the time judged (JSON: `key`).
#[allow(clippy::too_many_arguments)]
pub fn verify(
    bundles: &[PathBuf],
    trust: &[PathBuf],
    trust_list: Option<&Path>,
    tsa_certs: &[PathBuf],
    json: bool,
    jobs: usize,
    out: &mut dyn Write,
    err: &mut Diag<'_>,
) -> Result<ExitStatus, Error> {
    let trust = load_signers(trust, trust_list, tsa_certs)?;
    let mut status = ExitStatus::Pass;
    // Each bundle is verified on a worker (`jobs` at once); its line is written here, in
    // argument order, so the output is that of one job.
    crate::pipeline::for_each_in_order(
        bundles,
        jobs,
        |_, path| verify_file(path, &trust),
        |n, v| {
            let path = &bundles[n];
            let shown = escape_line(&path.display().to_string());
            let (verified, stamp, key, renewal) = match v {
                Err(e) => {
                    err.error(&e.to_string())?;
                    if json {
                        let mut v = verify_json(path, Err(&e.to_string()));
                        if let (Some(_), serde_json::Value::Object(m)) = (trust.list(), &mut v) {
                            m.insert("key".into(), serde_json::Value::Null);
                        }
                        json_line(out, &v)?;
                    }
                    status = status.worst(e.exit_status());
                    return Ok(());
                }
                Ok(v) => v,
            };
            if verified.is_err() {
                status = status.worst(ExitStatus::Invalid);
            }
            if json {
                let mut v = match &verified {
                    Ok(v) => verify_json(path, Ok(v)),
                    Err(e) => verify_json(path, Err(e)),
                };
                if let (Some(s), serde_json::Value::Object(m)) = (&stamp, &mut v) {
                    m.insert(
                        "timestamp".into(),
                        serde_json::to_value(TimestampJson::of(s)).unwrap_or_default(),
                    );
                }
                if let (Some(_), serde_json::Value::Object(m)) = (trust.list(), &mut v) {
                    m.insert(
                        "key".into(),
                        serde_json::to_value(key.as_ref().map(KeyJson::of)).unwrap_or_default(),
                    );
                }
                if let (Some(r), serde_json::Value::Object(m)) = (RenewalJson::of(&renewal), &mut v)
                {
                    m.insert(
                        "renewal".into(),
                        serde_json::to_value(r).unwrap_or_default(),
                    );
                }
                return json_line(out, &v).map_err(Error::from);
            }
            match verified {
                Ok(v) => {
                    let ev = &v.evidence;
                    let key = key
                        .as_ref()
                        .map(|k| format!("; {}", escape_line(&k.line())))
                        .unwrap_or_default();
                    writeln!(
                        out,
                        "OK {shown}: signer {}, collected {}, target {}, endpoint {}, status {}, {} records; {}{}{key}",
                        v.signer.key_id(),
                        utc(ev.run.started_at),
                        escape_line(&ev.target.as_typed),
                        ev.target.endpoint.as_deref().map(escape_line).unwrap_or_else(|| "(none)".into()),
                        ev.run.status.as_str(),
                        v.records,
                        escape_line(&stamp.as_ref().map(TimestampState::line).unwrap_or_default()),
                        escape_line(&renewal.suffix()),
                    )?;
                }
                Err(e) => writeln!(out, "INVALID {shown}: {}", escape_line(&e))?,
            }
            Ok(())
        },
    )?;
    out.flush()?;
    Ok(status)
}

/// What verifying one file found: the verified bundle (its records counted, not kept) or
/// why it failed, its timestamp state when its signature verified, how the trust list
/// trusted its signer (with one), and its sidecars when its own checks passed; the outer
/// error is a file (the bundle or a sidecar) that could not be read.
type FileVerdict = (
    Result<Checked, String>,
    Option<TimestampState>,
    Option<KeyTrust>,
    Renewal,
);

/// Read and verify one bundle file and check its timestamp token and its sidecars (a
/// token that fails a step fails the bundle), then judge its signer by the trust list. A
/// pure function of the files, run on a worker.
fn verify_file(path: &Path, trust: &Signers) -> Result<FileVerdict, Error> {
    let bytes = read_bundle(path)?;
    let verified = mcp_probe_schema::bundle::verify(&bytes, trust.keys());
    let stamp = verified
        .as_ref()
        .ok()
        .map(|_| TimestampState::of(&bytes, trust.tsa()));
    let renewal = match &stamp {
        Some(s) if !matches!(s, TimestampState::Invalid(_)) => {
            Renewal::check(path, &bytes, s, trust.tsa())?
        }
        _ => Renewal::None,
    };
    drop(bytes);
    let mut key = None;
    let verified = match (verified, &stamp, renewal.failure()) {
        (Ok(_), Some(TimestampState::Invalid(f)), _) => Err(f.to_string()),
        (Ok(_), _, Some(why)) => Err(why),
        (Ok(v), Some(s), None) => {
            match trust.judge(&v.signer, v.evidence.run.finished_at, || s.clone()) {
                Ok(k) => {
                    key = k;
                    Ok(v)
                }
                Err(e) => Err(e.to_string()),
            }
        }
        (Ok(v), None, None) => Ok(v),
        (Err(e), _, _) => Err(trust.refused(e).to_string()),
    };
    Ok((verified, stamp, key, renewal))
}

/// The `verify --json` object of one bundle: `file` (the path as given), `valid`,
/// `reason` (null, or the one-line message: the verification failure or why the file
/// could not be read), and the verified facts, each null unless the bundle verified
/// (nothing unverified is reported as a fact): `signer` (key id), `collected_at`
/// (RFC 3339 UTC of `run.finished_at`, else of `run.started_at`, when representable:
/// the seal time, a meaning it keeps although the text line, `show` and the reports say
/// "collected" of the start), `started_at` and `finished_at` (`run.started_at` and
/// `run.finished_at`, each when representable), `endpoint` (`target.endpoint`),
/// `status` (run status) and `records` (how many).
pub fn verify_json(path: &Path, verified: Result<&Checked, &str>) -> serde_json::Value {
    let file = path.display().to_string();
    let line = match verified {
        Ok(v) => {
            let run = &v.evidence.run;
            let collected = crate::fmt::datetime(run.finished_at)
                .map(|_| run.finished_at)
                .or_else(|| crate::fmt::datetime(run.started_at).map(|_| run.started_at))
                .map(utc);
            VerifyLine {
                file,
                valid: true,
                reason: None,
                signer: Some(v.signer.key_id()),
                collected_at: collected,
                started_at: crate::fmt::datetime(run.started_at).map(|_| utc(run.started_at)),
                finished_at: crate::fmt::datetime(run.finished_at).map(|_| utc(run.finished_at)),
                endpoint: v.evidence.target.endpoint.clone(),
                status: Some(run.status.as_str()),
                records: Some(v.records),
                timestamp: None,
                key: None,
                renewal: None,
            }
        }
        Err(reason) => VerifyLine {
            file,
            valid: false,
            reason: Some(reason.to_string()),
            signer: None,
            collected_at: None,
            started_at: None,
            finished_at: None,
            endpoint: None,
            status: None,
            records: None,
            timestamp: None,
            key: None,
            renewal: None,
        },
    };
    serde_json::to_value(line).unwrap_or(serde_json::Value::Null)
}

/// One line of `verify --json` (see [`verify_json`]).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct VerifyLine {
    /// The path as given.
    pub file: String,
    /// True when the bundle verified.
    pub valid: bool,
    /// Why it did not (null when valid).
    pub reason: Option<String>,
    /// Signer key id (verified bundles only).
    pub signer: Option<String>,
    /// RFC 3339 UTC time the bundle was sealed (`run.finished_at`, else
    /// `run.started_at`; verified bundles only). The name is historical: the text line,
    /// `show` and the reports say "collected" of the start (`started_at`).
    pub collected_at: Option<String>,
    /// RFC 3339 UTC time the run started (`run.started_at`; verified bundles only).
    pub started_at: Option<String>,
    /// RFC 3339 UTC time the run ended and the bundle was sealed (`run.finished_at`;
    /// verified bundles only).
    pub finished_at: Option<String>,
    /// The endpoint (verified bundles only).
    pub endpoint: Option<String>,
    /// The run status (verified bundles only).
    pub status: Option<&'static str>,
    /// How many records (verified bundles only).
    pub records: Option<usize>,
    /// The RFC 3161 timestamp, whenever the bundle's signature verified (null when it
    /// did not, or the file could not be read).
    pub timestamp: Option<TimestampJson>,
    /// With `--trust-list` only (absent otherwise): the key that applied, its period and
    /// the time it was judged on (null unless the bundle verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<KeyJson>,
    /// The detached renewal tokens beside the bundle (`<bundle>.tsr`, `.tsr.2`, …):
    /// absent when there is none, or when the bundle's own checks failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renewal: Option<RenewalJson>,
}

/// The JSON Schema of one `verify --json` line, generated from [`VerifyLine`].
pub fn verify_schema() -> serde_json::Value {
    let mut s = schemars::schema_for!(VerifyLine).to_value();
    s["title"] = serde_json::Value::String("mcp-grade verify --json (one line per bundle)".into());
    s
}

/// One JSON value on one line, safe for a terminal ([`crate::fmt::JsonSafe`]).
fn json_line(out: &mut dyn Write, v: &serde_json::Value) -> std::io::Result<()> {
    let mut w = crate::fmt::JsonSafe::new(&mut *out);
    serde_json::to_writer(&mut w, v)?;
    w.finish()?;
    writeln!(out)
}
