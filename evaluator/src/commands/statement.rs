//! `mcp-grade verify-statement STATEMENT --trust KEYFILE [FILE...]`: check a signed
//! grading statement ([`crate::attest`]) and that each file given is one of its subjects.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{CommandError, VerifyStatementError};
use crate::exit::ExitStatus;
use crate::fmt::escape_line;
use crate::load::{load_trust, Error};
use crate::output::Diag;

fn read(path: &Path) -> Result<Vec<u8>, VerifyStatementError> {
    std::fs::read(path).map_err(|source| VerifyStatementError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Verify `statement` against the `trust` key files, then look each of `files` up among
/// its subjects by SHA-256. Prints one line for the statement and one per file on `out`
/// (`OK ...`); a file that is no subject gets one error line on `err` and makes the
/// status [`ExitStatus::Invalid`]. Every file is read before anything is printed.
pub fn verify_statement(
    statement: &Path,
    trust: &[PathBuf],
    files: &[PathBuf],
    out: &mut dyn Write,
    err: &mut Diag<'_>,
) -> Result<ExitStatus, CommandError> {
    let keys = load_trust(trust).map_err(VerifyStatementError::Trust)?;
    let bytes = read(statement)?;
    let digests = files
        .iter()
        .map(|f| read(f).map(|b| mcp_probe_schema::bundle::sha256(&b)))
        .collect::<Result<Vec<_>, _>>()?;
    let v =
        crate::attest::verify(&bytes, &keys).map_err(|reason| VerifyStatementError::Invalid {
            path: statement.to_path_buf(),
            reason,
        })?;
    let shown = |p: &Path| escape_line(&p.display().to_string());
    writeln!(
        out,
        "OK {}: {} {} signed by {} (--trust {}); {} subject(s)",
        shown(statement),
        crate::attest::STATEMENT_TYPE,
        crate::attest::PREDICATE_TYPE,
        v.keyid,
        shown(&trust[v.trusted]),
        v.statement.subject.len()
    )
    .map_err(Error::Output)?;
    let mut status = ExitStatus::Pass;
    for (file, digest) in files.iter().zip(&digests) {
        match v.subject(digest) {
            Some(s) => writeln!(
                out,
                "OK {}: sha256 {} is subject {}",
                shown(file),
                hex::encode(digest),
                escape_line(&s.name)
            )
            .map_err(Error::Output)?,
            None => {
                err.error(&format!(
                    "INVALID {}: its sha256 {} is not a subject of {} (the file differs from the one graded or reported)",
                    shown(file),
                    hex::encode(digest),
                    shown(statement)
                ))
                .map_err(Error::Output)?;
                status = ExitStatus::Invalid;
            }
        }
    }
    out.flush().map_err(Error::Output)?;
    Ok(status)
}
