//! `mcp-grade show`: a bundle as a transcript, JSON or HAR, verified first.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::ExitStatus;
use crate::fmt::escape_line;
use crate::load::{load_signers, open_for_show, read_bundle, Error};
use crate::output::Diag;

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

/// `mcp-grade show BUNDLE [--json | --har] [--trust KEYFILE]... [--trust-list FILE
/// [--tsa-cert FILE]...]`.
///
/// Verifies first. A bundle that fails verification is still shown as far as it can be
/// decoded, after a warning on `err`, and the status is [`ExitStatus::Invalid`]; one whose
/// payload cannot be decoded at all gets one line on `err` and the same status. With
/// pins or a trust list, a bundle whose signer is neither pinned nor listed, or that the
/// trust list refuses (its period, its revocation; the timestamp checked against
/// `tsa_certs`), is not shown: one line on `err`, the same status.
pub fn show(
    path: &Path,
    mode: ShowMode,
    trust: &[PathBuf],
    trust_list: Option<&Path>,
    tsa_certs: &[PathBuf],
    out: &mut dyn Write,
    err: &mut Diag<'_>,
) -> Result<ExitStatus, Error> {
    let trust = load_signers(trust, trust_list, tsa_certs)?;
    let bytes = read_bundle(path)?;
    let shown = escape_line(&path.display().to_string());
    let loaded = match open_for_show(&bytes, &trust) {
        Ok(l) => l,
        Err(e) => {
            err.error(&format!("INVALID {shown}: {e}; nothing can be shown"))?;
            return Ok(ExitStatus::Invalid);
        }
    };
    if let Some(p) = &loaded.problem {
        err.alert(&format!(
            "WARNING: {shown} FAILED VERIFICATION ({p}); what follows is unverified and may have been altered"
        ))?;
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

/// A JSON document, pretty-printed (streamed) and safe for a terminal
/// ([`crate::fmt::JsonSafe`]).
fn json_out(out: &mut dyn Write, v: &serde_json::Value) -> std::io::Result<()> {
    let mut w = crate::fmt::JsonSafe::new(&mut *out);
    serde_json::to_writer_pretty(&mut w, v)?;
    w.finish()?;
    writeln!(out)
}
