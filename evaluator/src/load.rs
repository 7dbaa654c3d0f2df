//! Reading bundles and trust keys from disk, and opening bundles.

use std::io::Read;
use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::{decode_verified, open_decoded, sha256, Checked, MAX_BUNDLE_BYTES};
use mcp_probe_schema::{open, open_unverified, Evidence, PublicKey, Record, Verified, VerifyError};

use crate::trust_list::{Refused, Signers, TrustList};

/// A failure that stops a command before it has anything to report on a bundle: each
/// names the input it is about, in one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A bundle file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `--trust` key file could not be read.
    #[error("cannot read --trust key file {}: {source}", path.display())]
    TrustRead {
        /// The path as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `--trust` key file is not a public key.
    #[error("--trust key file {} is not an Ed25519 public key: {detail}", path.display())]
    TrustKey {
        /// The path as given.
        path: PathBuf,
        /// What was wrong.
        detail: mcp_probe_schema::bundle::PublicKeyError,
    },
    /// A `--tsa-cert` file cannot be used.
    #[error(transparent)]
    TsaCert(#[from] crate::timestamp::TsaCertError),
    /// The `--trust-list` file cannot be used.
    #[error(transparent)]
    TrustList(#[from] crate::trust_list::TrustListError),
    /// Writing the output failed (other than the reader going away).
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The exit status this error ends a run with.
    pub fn exit_status(&self) -> crate::ExitStatus {
        crate::ExitStatus::Usage
    }
}

/// Read a bundle file, never more than one byte past the size `open` accepts (so a huge
/// file is reported as over the limit instead of exhausting memory).
pub fn read_bundle(path: &Path) -> Result<Vec<u8>, Error> {
    let read = || -> std::io::Result<Vec<u8>> {
        let f = std::fs::File::open(path)?;
        let meta = f.metadata()?;
        if meta.is_dir() {
            return Err(std::io::Error::other("is a directory"));
        }
        read_open(f, &meta)
    };
    read().map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The longest bundle file read into the buffer each thread keeps for the next file
/// ([`with_bundle`]): an ordinary bundle is tens of KiB; a longer one is read into a
/// buffer of its own, freed after.
const REUSED_MAX: usize = 4 << 20;

thread_local! {
    /// The buffer [`with_bundle`] reads regular files into, kept for the next one.
    static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// `f` on the bytes of the bundle file at `path`, read as [`read_bundle`] reads them.
/// A regular file of at most 4 MiB (`REUSED_MAX`) is read into a buffer the thread
/// keeps for the next file, with one call for its length and one that finds its end:
/// no buffer made, zeroed and freed per file (the part of the buffer past what was read
/// is never looked at). Any other file (a pipe, a file of the proc file system, a
/// longer one, one that grew while read) is read as [`read_bundle`] reads it.
pub fn with_bundle<T>(path: &Path, f: impl FnOnce(&[u8]) -> T) -> Result<T, Error> {
    let fail = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let meta = file.metadata().map_err(fail)?;
    if meta.is_dir() {
        return Err(fail(std::io::Error::other("is a directory")));
    }
    let reused = usize::try_from(meta.len())
        .ok()
        .filter(|&n| meta.is_file() && n <= REUSED_MAX);
    let Some(len) = reused else {
        return read_open(file, &meta).map(|b| f(&b)).map_err(fail);
    };
    let mut buf = BUFFER.take();
    // One byte past the length: a file that is still that long fills less than the
    // room, and the next call finds its end.
    if buf.len() < len + 1 {
        buf.resize(len + 1, 0);
    }
    let mut filled = 0;
    let read = loop {
        match file.read(&mut buf[filled..=len]) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                filled += n;
                if filled > len {
                    break Ok(());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    let out = match read {
        Err(e) => Err(fail(e)),
        // Grown since its length was read: the rest is read on, to the limit.
        Ok(()) if filled > len => {
            let mut bytes = buf[..filled].to_vec();
            let left = (MAX_BUNDLE_BYTES + 1).saturating_sub(filled) as u64;
            match file.take(left).read_to_end(&mut bytes) {
                Ok(_) => Ok(f(&bytes)),
                Err(e) => Err(fail(e)),
            }
        }
        Ok(()) => Ok(f(&buf[..filled])),
    };
    if buf.capacity() <= REUSED_MAX + 1 {
        BUFFER.set(buf);
    }
    out
}

/// The rest of an open file read to its end, never past the limit.
fn read_open(f: std::fs::File, meta: &std::fs::Metadata) -> std::io::Result<Vec<u8>> {
    // Sized once from the file's length (never past the limit), so a large bundle is
    // not copied while the buffer grows.
    let hint = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    let mut bytes = Vec::with_capacity(hint.min(MAX_BUNDLE_BYTES + 1));
    f.take(MAX_BUNDLE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A bundle file read and verified, its bytes already dropped (grading holds one bundle
/// at a time, and not twice over).
#[derive(Debug)]
pub struct VerifiedFile {
    /// The verified contents.
    pub verified: Verified,
    /// SHA-256 of the file's bytes as verified: a later read of the same path is the same
    /// bundle only if it hashes the same. `None` when the reader did not ask for it
    /// ([`read_verified_as`]).
    pub digest: Option<[u8; 32]>,
    /// The RFC 3161 timestamp entries of its unprotected header (not yet verified:
    /// [`crate::timestamp::TimestampState::from_stamp`]).
    pub stamp: mcp_probe_schema::tsp::Stamp,
}

/// Read the bundle at `path` and verify it against `trust` (as `open` does, but without
/// keeping the encoded records: `verified.evidence.records` is empty), then judge its
/// signer by the trust list, if any ([`Signers::judge`]). The outer error is a file that
/// could not be read; the inner one a bundle that failed verification or that the trust
/// list refused. The file's bytes are not kept: they are read into the buffer the thread
/// reuses ([`with_bundle`]) and only what was decoded from them is returned.
pub fn read_verified(path: &Path, trust: &Signers) -> Result<Result<VerifiedFile, Refused>, Error> {
    read_verified_as(path, trust, true)
}

/// [`read_verified`], the file's SHA-256 taken only when `digest` is true (one pass
/// over the bytes, about 3 % of grading a bundle, that only a reader that reads the
/// file again needs).
pub fn read_verified_as(
    path: &Path,
    trust: &Signers,
    digest: bool,
) -> Result<Result<VerifiedFile, Refused>, Error> {
    let read = with_bundle(path, |bytes| {
        let digest = digest.then(|| sha256(bytes));
        open_decoded(bytes, trust.keys()).map(|v| (v, digest, stamp_of(bytes)))
    })?;
    let (verified, digest, stamp) = match read {
        Ok(v) => v,
        Err(e) => return Ok(Err(trust.refused(e))),
    };
    if let Err(e) = trust.judge_stamp(&verified.signer, verified.evidence.run.finished_at, &stamp) {
        return Ok(Err(e.into()));
    }
    Ok(Ok(VerifiedFile {
        verified,
        digest,
        stamp,
    }))
}

/// The RFC 3161 timestamp entries of a bundle's unprotected header, as read (not
/// verified).
fn stamp_of(bytes: &[u8]) -> mcp_probe_schema::tsp::Stamp {
    mcp_probe_schema::tsp::stamp_of(bytes).unwrap_or(mcp_probe_schema::tsp::Stamp::Malformed(
        "the unprotected header could not be read",
    ))
}

/// A bundle file read and verified, keeping none of its records: what the verify pass
/// of grading keeps of an input, with the SHA-256 that binds a later read to it
/// ([`reread_verified`]).
#[derive(Debug)]
pub struct CheckedFile {
    /// The verified payload (records emptied), record count and signer.
    pub checked: Checked,
    /// SHA-256 of the file's bytes as verified.
    pub digest: [u8; 32],
}

/// Read the bundle at `path` and verify it against `trust` with every check of `open`,
/// keeping no record ([`mcp_probe_schema::bundle::verify`]), then judge its signer by the
/// trust list, if any. The outer error is a file that could not be read; the inner one a
/// bundle that failed verification or that the trust list refused.
pub fn read_checked(path: &Path, trust: &Signers) -> Result<Result<CheckedFile, Refused>, Error> {
    let read = with_bundle(path, |bytes| {
        let stamp = trust.list().is_some().then(|| stamp_of(bytes));
        mcp_probe_schema::bundle::verify(bytes, trust.keys()).map(|c| (c, sha256(bytes), stamp))
    })?;
    let (checked, digest, stamp) = match read {
        Ok(c) => c,
        Err(e) => return Ok(Err(trust.refused(e))),
    };
    if let Some(stamp) = stamp {
        if let Err(e) = trust.judge_stamp(&checked.signer, checked.evidence.run.finished_at, &stamp)
        {
            return Ok(Err(e.into()));
        }
    }
    Ok(Ok(CheckedFile { checked, digest }))
}

/// Read the bundle at `path` again and decode it, only if its bytes are those that
/// verified (their SHA-256 is `digest`): the bundle is then not verified a second time
/// (signature and chain), only decoded ([`decode_verified`]). `Ok(None)`: the file
/// changed since it verified (or no longer decodes), and nothing may be read from it.
pub fn reread_verified(path: &Path, digest: &[u8; 32]) -> Result<Option<VerifiedFile>, Error> {
    with_bundle(path, |bytes| {
        if &sha256(bytes) != digest {
            return None;
        }
        decode_verified(bytes).ok().map(|verified| VerifiedFile {
            verified,
            digest: Some(*digest),
            stamp: stamp_of(bytes),
        })
    })
}

/// Wrap a verified bundle for grading, without its encoded records: every check reads
/// the decoded ones ([`crate::evidence::Bundle::records_for`] and the like), so the payload's copy of
/// each record as CBOR bytes would only double the memory a bundle costs.
pub fn for_grading(path: impl Into<String>, mut v: Verified) -> crate::evidence::Bundle {
    v.evidence.records = Vec::new();
    crate::evidence::Bundle::new(path, v)
}

/// Read and parse every `--trust` key file (SPKI PEM, 64 hex digits, or base64 of the
/// raw 32-byte key).
pub fn load_trust(paths: &[PathBuf]) -> Result<Vec<PublicKey>, Error> {
    paths
        .iter()
        .map(|path| {
            let mut text = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(64 * 1024).read_to_end(&mut text))
                .map_err(|source| Error::TrustRead {
                    path: path.clone(),
                    source,
                })?;
            PublicKey::parse(&text).map_err(|detail| Error::TrustKey {
                path: path.clone(),
                detail,
            })
        })
        .collect()
}

/// The signers of a run: the `--trust` key files, the `--trust-list` file and the
/// `--tsa-cert` files (the anchors a timestamp must chain to for its genTime to judge a
/// listed key's period), read and checked in that order, before any bundle.
pub fn load_signers(
    trust: &[PathBuf],
    list: Option<&Path>,
    tsa_certs: &[PathBuf],
) -> Result<Signers, Error> {
    let pins = load_trust(trust)?;
    let list = list.map(TrustList::load).transpose()?;
    let tsa = crate::timestamp::TsaTrust::load(tsa_certs)?;
    Ok(Signers::new(pins, list, tsa))
}

/// A bundle read for display: verified or not, with everything that could be decoded.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The payload.
    pub evidence: Evidence,
    /// Each record, or why it did not decode (only possible when `problem` is set).
    pub records: Vec<Result<Record, mcp_probe_schema::bundle::RecordDecodeError>>,
    /// The signer's public key, when the header carried a well-formed one.
    pub signer: Option<PublicKey>,
    /// Why the bundle failed verification (including an untrusted signer), if it did.
    pub problem: Option<VerifyError>,
}

impl Loaded {
    /// True when the bundle verified (and its signer is trusted, when pins were given).
    pub fn valid(&self) -> bool {
        self.problem.is_none()
    }

    /// The records that decoded, in order.
    pub fn decoded_records(&self) -> Vec<Record> {
        self.records
            .iter()
            .filter_map(|r| r.as_ref().ok().cloned())
            .collect()
    }
}

/// Open `bytes` for display: verified when possible, otherwise whatever can be read
/// without trusting it, with the verification failure recorded. Fails when not even the
/// payload decodes, and, with `trust` pins (or a trust list), when the header names no
/// pinned or listed signer (then nothing in the payload is decoded), and when the trust
/// list refuses the signer of a bundle that verified (its period, its revocation).
pub fn open_for_show(bytes: &[u8], trust: &Signers) -> Result<Loaded, Refused> {
    let pins = trust.keys();
    match open(bytes, pins) {
        Ok(v) => {
            trust.judge(&v.signer, v.evidence.run.finished_at, || {
                crate::timestamp::TimestampState::of(bytes, trust.tsa())
            })?;
            Ok(Loaded {
                evidence: v.evidence,
                records: v.records.into_iter().map(Ok).collect(),
                signer: Some(v.signer),
                problem: None,
            })
        }
        Err(problem) => {
            // With pins, nothing a key outside them signed, or claims to have signed,
            // reaches a decoder, not even for display.
            if !pins.is_empty() {
                let claimed = mcp_probe_schema::bundle::claimed_signer(bytes)?;
                if !pins.contains(&claimed) {
                    return Err(trust.refused(VerifyError::Untrusted {
                        key_id: claimed.key_id(),
                    }));
                }
            }
            let u = open_unverified(bytes)?;
            Ok(Loaded {
                evidence: u.evidence,
                records: u.records,
                signer: u.signer,
                problem: Some(problem),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file is read whole, whatever its length against the reads' sizes.
    #[test]
    fn a_bundle_file_is_read_whole() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for len in [0, 1, 31, 32, 33, 8191, 8192, 8193, 70_000] {
            let path = dir.path().join(format!("{len}.mcpev"));
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &bytes).expect("written");
            assert_eq!(read_bundle(&path).expect("read"), bytes, "{len} bytes");
        }
        let e = read_bundle(dir.path()).expect_err("a directory");
        assert!(e.to_string().contains("is a directory"), "{e}");
    }

    /// Read through the buffer the thread reuses, files come out whole and alone: a
    /// short file after a long one carries nothing of it, and a file longer than the
    /// buffer is kept for is read all the same.
    #[test]
    fn a_bundle_read_into_the_reused_buffer_is_that_file_alone() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut files = Vec::new();
        for len in [70_000, 10, 0, 8193, 1, REUSED_MAX + 5, 70_001, 3] {
            let path = dir.path().join(format!("{len}.mcpev"));
            let bytes: Vec<u8> = (0..len).map(|i| (i * 13 % 253) as u8 + 1).collect();
            std::fs::write(&path, &bytes).expect("written");
            files.push((path, bytes));
        }
        for (path, bytes) in files.iter().chain(files.iter().rev()) {
            let got = with_bundle(path, <[u8]>::to_vec).expect("read");
            assert_eq!(got.len(), bytes.len());
            assert!(got == *bytes, "{}", path.display());
        }
        let e = with_bundle(dir.path(), |_| ()).expect_err("a directory");
        assert!(e.to_string().contains("is a directory"), "{e}");
    }

    /// A file whose length says nothing of its contents (a file of the proc file
    /// system reports 0) is read to its end all the same, either way.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_longer_than_its_length_says_is_read_to_its_end() {
        let path = Path::new("/proc/self/maps");
        for got in [
            read_bundle(path).expect("read"),
            with_bundle(path, <[u8]>::to_vec).expect("read"),
        ] {
            assert!(!got.is_empty());
            assert!(String::from_utf8_lossy(&got).lines().count() > 3);
        }
    }
}
