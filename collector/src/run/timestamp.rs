//! `mcp-collect timestamp --tsa URL BUNDLE...`: renewing the RFC 3161 timestamp of sealed
//! bundles with detached tokens beside them ([`mcp_probe_schema::renewal`]).
//!
//! For each bundle, on its own (`--concurrency` at once): read it and check it is a
//! bundle (structure, signature by the key it names, chain; no key is pinned: anyone
//! may renew a timestamp), read its sidecars and check each parses, carries the imprint
//! of its slot and keeps the link rule; ask the TSA once for a token over the next
//! slot's imprint (the same client and reply checks as `--tsa`); check the new token
//! keeps the link rule against the last token (the embedded one, or the last sidecar):
//! a token dated after that token's TSA certificate expired would not extend the chain,
//! so it is not written; write it into the next slot, never over an existing file.
//! The grader checks the chain with the TSA's trust anchors (`mcp-grade verify`); what
//! is checked here is only what keeps a renewal from being useless.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_probe_schema::renewal::{self, check_link, Imprints, LinkError};
use mcp_probe_schema::tsp::{self, ReplyError, Stamp, Token};

use super::cli::{ExitStatus, Printer, UsageError};
use super::flags::TimestampArgs;
use crate::transport::tsa::{Tsa, TsaError};

/// Why a bundle got no new sidecar. Each message starts with the bundle's path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenewError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The bundle as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a bundle that verifies.
    #[error("{}: not a bundle: {why}", path.display())]
    NotABundle {
        /// The bundle as given.
        path: PathBuf,
        /// What it is, or which check failed.
        why: String,
    },
    /// Its sidecars could not be read, or are not numbered without a gap.
    #[error("{}: {source}", path.display())]
    Sidecars {
        /// The bundle as given.
        path: PathBuf,
        /// Why (naming the sidecar).
        source: renewal::ReadError,
    },
    /// The bundle's own token does not date it (the unprotected header was changed): a
    /// renewal over it would extend nothing.
    #[error("{}: its embedded timestamp does not date it ({why}); nothing was renewed", path.display())]
    Embedded {
        /// The bundle as given.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// An existing sidecar does not extend the bundle: a renewal over it would extend
    /// nothing.
    #[error("{}: the existing sidecar {} does not extend it ({why}); nothing was renewed", path.display(), sidecar.display())]
    Broken {
        /// The bundle as given.
        path: PathBuf,
        /// The sidecar.
        sidecar: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The TSA gave no usable token.
    #[error("{}: --tsa {url}: {why}", path.display())]
    Tsa {
        /// The bundle as given.
        path: PathBuf,
        /// The TSA.
        url: String,
        /// Why.
        why: String,
    },
    /// The new token does not keep the link rule, so it was not written.
    #[error("{}: {} not written: the TSA's token {why}", path.display(), sidecar.display())]
    Link {
        /// The bundle as given.
        path: PathBuf,
        /// The slot it would have gone to.
        sidecar: PathBuf,
        /// The rule it breaks.
        why: String,
    },
    /// The slot was taken while the TSA was asked.
    #[error("{}: {} appeared while the TSA was asked (another renewal?); it was not overwritten and nothing was written: run again", path.display(), sidecar.display())]
    Taken {
        /// The bundle as given.
        path: PathBuf,
        /// The slot.
        sidecar: PathBuf,
    },
    /// The sidecar could not be written.
    #[error("{}: cannot write {}: {source}", path.display(), sidecar.display())]
    Write {
        /// The bundle as given.
        path: PathBuf,
        /// The slot.
        sidecar: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A sidecar written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Its path.
    pub sidecar: PathBuf,
    /// Its slot (1 for `<bundle>.tsr`).
    pub slot: usize,
    /// The new token's genTime, seconds since the Unix epoch.
    pub gen_time: u64,
}

/// The token a renewal must extend: its name in messages, genTime and TSA certificate's
/// `notAfter` (`None` when the token does not carry the certificate: not checked here).
#[derive(Debug, Clone)]
struct Previous {
    name: String,
    gen_time: u64,
    not_after: Option<u64>,
}

impl Previous {
    fn of(name: String, token: &Token) -> Previous {
        Previous {
            name,
            gen_time: token.gen_time_unix(),
            not_after: token.signer_certificate().map(tsp::not_after_unix),
        }
    }

    /// The link rule for a token made at `gen_time`, in words when it breaks.
    fn link(&self, gen_time: u64) -> Result<(), String> {
        let Some(not_after) = self.not_after else {
            return Ok(());
        };
        check_link(self.gen_time, not_after, gen_time).map_err(|e| match e {
            LinkError::Earlier { gen_time, previous } => format!(
                "is dated {}, before {} ({})",
                time(gen_time),
                self.name,
                time(previous)
            ),
            LinkError::Late {
                gen_time,
                not_after,
            } => format!(
                "is dated {}, after the TSA certificate of {} expired ({}): a renewal can extend a timestamp only while it is valid, and mcp-grade verify would refuse the chain",
                time(gen_time),
                self.name,
                time(not_after)
            ),
        })
    }
}

/// What a bundle needs before the TSA is asked: the slot, its imprint, and the token it
/// must extend.
#[derive(Debug)]
struct Prepared {
    slot: usize,
    sidecar: PathBuf,
    imprint: [u8; 32],
    previous: Option<Previous>,
}

/// RFC 3339 UTC, seconds.
fn time(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| secs.to_string())
}

/// Read and check the bundle at `path` and its sidecars (blocking: file reads and the
/// bundle's verification).
fn prepare(path: &Path) -> Result<Prepared, RenewError> {
    let bytes = read(path)?;
    if let Err(e) = mcp_probe_schema::bundle::verify(&bytes, &[]) {
        let why = match mcp_probe_schema::bundle::looks_like(&bytes) {
            Some(what) => format!("it is {what}"),
            None => e.to_string(),
        };
        return Err(RenewError::NotABundle {
            path: path.to_path_buf(),
            why,
        });
    }
    let embedded = |why: String| RenewError::Embedded {
        path: path.to_path_buf(),
        why,
    };
    let mut previous = match tsp::stamp_of(&bytes) {
        Ok(Stamp::Token { token, signature }) => {
            let t = Token::parse(&token).map_err(|e| embedded(format!("decode: {e}")))?;
            t.check_imprint(&signature)
                .map_err(|f| embedded(format!("imprint: {}", f.detail)))?;
            Some(Previous::of("the bundle's embedded token".into(), &t))
        }
        Ok(Stamp::Malformed(why)) => return Err(embedded(format!("decode: {why}"))),
        _ => None,
    };
    let sidecars = renewal::read_all(path).map_err(|source| RenewError::Sidecars {
        path: path.to_path_buf(),
        source,
    })?;
    let mut imprints = Imprints::new(&bytes);
    drop(bytes);
    for s in &sidecars {
        let broken = |why: String| RenewError::Broken {
            path: path.to_path_buf(),
            sidecar: s.path.clone(),
            why,
        };
        let token = Token::parse(&s.token).map_err(|e| broken(format!("decode: {e}")))?;
        token
            .check_imprint_over(&imprints.next(), renewal::imprint_over(s.slot))
            .map_err(|f| broken(format!("imprint: {}", f.detail)))?;
        if let Some(p) = &previous {
            p.link(token.gen_time_unix())
                .map_err(|why| broken(format!("link: it {why}")))?;
        }
        previous = Some(Previous::of(s.path.display().to_string(), &token));
        imprints.push(&s.token);
    }
    let slot = sidecars.len() + 1;
    Ok(Prepared {
        slot,
        sidecar: renewal::path(path, slot),
        imprint: imprints.next(),
        previous,
    })
}

/// The bundle's bytes, never more than one byte past what a bundle may be.
fn read(path: &Path) -> Result<Vec<u8>, RenewError> {
    use std::io::Read;
    let max = mcp_probe_schema::bundle::MAX_BUNDLE_BYTES;
    let bytes = (|| {
        let f = std::fs::File::open(path)?;
        if f.metadata()?.is_dir() {
            return Err(std::io::Error::other("is a directory"));
        }
        let mut bytes = Vec::new();
        f.take(max as u64 + 1).read_to_end(&mut bytes)?;
        Ok(bytes)
    })()
    .map_err(|source| RenewError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if bytes.len() > max {
        return Err(RenewError::NotABundle {
            path: path.to_path_buf(),
            why: format!("larger than the {} MiB a bundle may be", max >> 20),
        });
    }
    Ok(bytes)
}

/// Renew the timestamp of the bundle at `path` with `tsa`.
pub async fn renew(path: PathBuf, tsa: &Tsa) -> Result<Written, RenewError> {
    let prepared = {
        let p = path.clone();
        tokio::task::spawn_blocking(move || prepare(&p))
            .await
            .map_err(|e| RenewError::Read {
                path: path.clone(),
                source: std::io::Error::other(e.to_string()),
            })??
    };
    let token = tsa
        .stamp_imprint(&prepared.imprint)
        .await
        .map_err(|e| RenewError::Tsa {
            path: path.clone(),
            url: tsa.url().to_string(),
            why: match e {
                // The shared reply check words it for a bundle's own token.
                TsaError::Reply(ReplyError::Imprint) => {
                    "the token's message imprint is not the one requested".into()
                }
                other => other.to_string(),
            },
        })?;
    // check_reply parsed it already.
    let gen_time = Token::parse(&token)
        .map(|t| t.gen_time_unix())
        .map_err(|e| RenewError::Tsa {
            path: path.clone(),
            url: tsa.url().to_string(),
            why: e.to_string(),
        })?;
    if let Some(p) = &prepared.previous {
        p.link(gen_time).map_err(|why| RenewError::Link {
            path: path.clone(),
            sidecar: prepared.sidecar.clone(),
            why,
        })?;
    }
    let sidecar = prepared.sidecar.clone();
    let written =
        tokio::task::spawn_blocking(move || mcp_probe_schema::fsutil::write_new(&sidecar, &token))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    match written {
        Ok(()) => Ok(Written {
            sidecar: prepared.sidecar,
            slot: prepared.slot,
            gen_time,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(RenewError::Taken {
            path,
            sidecar: prepared.sidecar,
        }),
        Err(source) => Err(RenewError::Write {
            path,
            sidecar: prepared.sidecar,
            source,
        }),
    }
}

/// `mcp-collect timestamp`: every BUNDLE renewed, `--concurrency` at once; the path of
/// each sidecar written on stdout (in the order they are written), one error line per
/// bundle that got none. Exit 0 when every bundle got one, 4
/// ([`ExitStatus::NotTimestamped`]) when any did not, 2 for a bad `--tsa` or a bundle
/// given twice (before any request).
pub fn run(args: &TimestampArgs, printer: &Printer) -> ExitStatus {
    let url = match crate::transport::tsa::parse_url(&args.tsa) {
        Ok(u) => u,
        Err(reason) => {
            printer.error(
                &UsageError::Tsa {
                    url: crate::transport::tsa::shown_url(&args.tsa),
                    reason,
                }
                .to_string(),
            );
            return ExitStatus::Usage;
        }
    };
    // The same file twice would race for one slot.
    let mut seen: HashMap<PathBuf, &Path> = HashMap::new();
    for b in &args.bundles {
        let key = std::fs::canonicalize(b).unwrap_or_else(|_| b.clone());
        if let Some(first) = seen.insert(key, b) {
            printer.error(&format!(
                "{} and {} are the same file: give each BUNDLE once",
                first.display(),
                b.display()
            ));
            return ExitStatus::Usage;
        }
    }
    // TLS to the TSA is not what the token's trust rests on (see transport::tsa): the
    // bundled and system stores, no --ca-file.
    let trust = match crate::transport::tls::Trust::load(None) {
        Ok(t) => t,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Internal;
        }
    };
    let tsa = Arc::new(Tsa::new(url, trust, Duration::from_secs(args.timeout)));
    let Some(rt) = super::runtime(printer) else {
        return ExitStatus::Internal;
    };
    let failed = rt.block_on(renew_all(
        &args.bundles,
        args.concurrency as usize,
        tsa,
        printer,
    ));
    if failed == 0 {
        ExitStatus::Ok
    } else {
        printer.error(&format!(
            "{failed} of {} bundle(s) got no new timestamp (exit 4)",
            args.bundles.len()
        ));
        ExitStatus::NotTimestamped
    }
}

/// Renew every bundle, `concurrency` at once; the number that failed.
async fn renew_all(
    bundles: &[PathBuf],
    concurrency: usize,
    tsa: Arc<Tsa>,
    printer: &Printer,
) -> usize {
    let mut set = tokio::task::JoinSet::new();
    // Each task's bundle, to name it if the task panics.
    let mut names: HashMap<tokio::task::Id, &Path> = HashMap::new();
    let mut pending = bundles.iter();
    let mut failed = 0;
    loop {
        while set.len() < concurrency {
            let Some(b) = pending.next() else { break };
            let (path, tsa) = (b.clone(), tsa.clone());
            let id = set.spawn(async move { renew(path, &tsa).await }).id();
            names.insert(id, b);
        }
        let Some(done) = set.join_next_with_id().await else {
            break;
        };
        match done {
            Ok((_, Ok(w))) => {
                printer.progress(&format!(
                    "timestamped by {} at {}: {} (slot {})",
                    tsa.url(),
                    time(w.gen_time),
                    w.sidecar.display(),
                    w.slot
                ));
                printer.out(&w.sidecar.display().to_string());
            }
            Ok((_, Err(e))) => {
                printer.error(&e.to_string());
                failed += 1;
            }
            Err(e) => {
                let name = names
                    .get(&e.id())
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "a bundle".into());
                printer.error(&format!("{name}: the renewal stopped: {e}"));
                failed += 1;
            }
        }
    }
    failed
}
