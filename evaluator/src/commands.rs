//! The `verify` and `show` commands. `main` parses flags and maps the returned
//! [`ExitStatus`] to a code; everything else happens here.

use std::io::Write;
use std::path::{Path, PathBuf};

use mcp_probe_schema::open;

use crate::exit::ExitStatus;
use crate::fmt::{line, utc};
use crate::load::{load_trust, open_for_show, read_bundle, Error};

/// `mcp-grade verify BUNDLE... [--trust KEYFILE]...`.
///
/// One stdout line per bundle read: `OK <path>: signer …` or `INVALID <path>: <why>`. A
/// bundle that cannot be read gets one line on `err` naming it. Every bundle is reported
/// before the status is decided: [`ExitStatus::Usage`] when any could not be read, else
/// [`ExitStatus::Invalid`] when any failed verification, else [`ExitStatus::Pass`]. A
/// `--trust` file that cannot be read or parsed stops the command before any bundle
/// (returned as an [`Error`]).
pub fn verify(
    bundles: &[PathBuf],
    trust: &[PathBuf],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<ExitStatus, Error> {
    let trust = load_trust(trust)?;
    let mut status = ExitStatus::Pass;
    for path in bundles {
        let shown = line(&path.display().to_string());
        let bytes = match read_bundle(path) {
            Ok(b) => b,
            Err(e) => {
                writeln!(err, "mcp-grade: {}", line(&e.to_string()))?;
                status = status.worst(e.exit_status());
                continue;
            }
        };
        match open(&bytes, &trust) {
            Ok(v) => {
                let ev = &v.evidence;
                writeln!(
                    out,
                    "OK {shown}: signer {}, collected {}, target {}, endpoint {}, status {}, {} records",
                    v.signer.key_id(),
                    utc(ev.run.started_at),
                    line(&ev.target.as_typed),
                    ev.target.endpoint.as_deref().map(line).unwrap_or_else(|| "(none)".into()),
                    ev.run.status.as_str(),
                    v.records.len()
                )?;
            }
            Err(e) => {
                writeln!(out, "INVALID {shown}: {}", line(&e.to_string()))?;
                status = status.worst(ExitStatus::Invalid);
            }
        }
    }
    out.flush()?;
    Ok(status)
}

/// How `show` renders a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShowMode {
    /// The readable transcript.
    #[default]
    Text,
    /// The whole decoded bundle as JSON.
    Json,
    /// HAR 1.2 of the HTTP records.
    Har,
}

/// `mcp-grade show BUNDLE [--json | --har] [--trust KEYFILE]...`.
///
/// Verifies first. A bundle that fails verification is still shown as far as it can be
/// decoded, after a warning on `err`, and the status is [`ExitStatus::Invalid`]; one whose
/// payload cannot be decoded at all gets one line on `err` and the same status.
pub fn show(
    path: &Path,
    mode: ShowMode,
    trust: &[PathBuf],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<ExitStatus, Error> {
    let trust = load_trust(trust)?;
    let bytes = read_bundle(path)?;
    let shown = line(&path.display().to_string());
    let loaded = match open_for_show(&bytes, &trust) {
        Ok(l) => l,
        Err(e) => {
            writeln!(
                err,
                "mcp-grade: INVALID {shown}: {}; nothing can be shown",
                line(&e.to_string())
            )?;
            return Ok(ExitStatus::Invalid);
        }
    };
    if let Some(p) = &loaded.problem {
        writeln!(
            err,
            "WARNING: {shown} FAILED VERIFICATION ({}); what follows is unverified and may have been altered",
            line(&p.to_string())
        )?;
    }
    match mode {
        ShowMode::Text => crate::text::render(out, &path.display().to_string(), &loaded)?,
        ShowMode::Json => json_out(out, &crate::view::document(&loaded))?,
        ShowMode::Har => json_out(out, &crate::har::document(&loaded))?,
    }
    out.flush()?;
    Ok(if loaded.valid() {
        ExitStatus::Pass
    } else {
        ExitStatus::Invalid
    })
}

fn json_out(out: &mut dyn Write, v: &serde_json::Value) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, v)?;
    writeln!(out)
}
