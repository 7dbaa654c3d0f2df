//! Renewing a bundle's timestamp: detached RFC 3161 tokens beside the bundle file
//! (`mcp-collect timestamp` writes them, `mcp-grade verify` checks them).
//!
//! A token proves its time only while its TSA certificate (and its hash and signature
//! algorithms) can still be trusted; bundles are kept longer than that. RFC 4998's answer
//! is renewal: before the current timestamp's certificate expires, a new timestamp is
//! taken over the data *and* every timestamp before it, so the chain proves the first
//! time as long as each renewal was made while the one before it was still valid.
//!
//! The sidecars of a bundle `B` are files beside it, numbered by slot:
//!
//! | slot | file | the token's message imprint is SHA-256 of |
//! |---|---|---|
//! | 1 | `B.tsr` | the bundle file's bytes (its embedded token, if any, included) |
//! | 2 | `B.tsr.2` | the bundle file's bytes, then `B.tsr`'s bytes |
//! | n | `B.tsr.<n>` | the bundle file's bytes, then the bytes of slots 1 to n-1 in order |
//!
//! Each file holds one DER `TimeStampToken` (a CMS `ContentInfo`, as stored in a
//! bundle's header; not a whole `TimeStampResp`), and nothing else. A DER token is
//! self-delimiting, so the concatenation is unambiguous. The link rule
//! ([`check_link`]): each token's genTime is no earlier than the previous token's and no
//! later than the previous token's TSA certificate's `notAfter`; the first sidecar's
//! previous token is the bundle's embedded one, when it has one.
//!
//! Nothing here talks to a network; [`read_all`] reads only the files it names.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The suffix of the first sidecar (`<bundle>.tsr`); later ones add `.<slot>`.
pub const SUFFIX: &str = ".tsr";

/// Largest sidecar read: a token with a certificate chain is a few KiB (the collector
/// reads TSA replies up to the same size).
pub const MAX_SIDECAR_BYTES: u64 = crate::tsp::MAX_REPLY_BYTES;

/// The sidecar of `bundle` in `slot` (1-based): `<bundle>.tsr`, `<bundle>.tsr.2`, …
pub fn path(bundle: &Path, slot: usize) -> PathBuf {
    let mut name = bundle.as_os_str().to_os_string();
    name.push(SUFFIX);
    if slot > 1 {
        name.push(format!(".{slot}"));
    }
    PathBuf::from(name)
}

/// What a sidecar's imprint is over, in words (for failure lines).
pub fn imprint_over(slot: usize) -> &'static str {
    if slot <= 1 {
        "the bundle file"
    } else {
        "the bundle file and the sidecars before it"
    }
}

/// One sidecar as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidecar {
    /// Its slot, from 1.
    pub slot: usize,
    /// Its path ([`path`] of the bundle path as given).
    pub path: PathBuf,
    /// Its bytes: one DER `TimeStampToken`, unless the file is damaged.
    pub token: Vec<u8>,
}

/// The sidecars of a bundle could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// A sidecar exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The sidecar.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A sidecar is larger than any token.
    #[error("{}: larger than {} KiB, not a timestamp token", path.display(), MAX_SIDECAR_BYTES / 1024)]
    TooLarge {
        /// The sidecar.
        path: PathBuf,
    },
    /// A slot is empty and the one after it is not.
    #[error("{} exists but {} does not: the sidecars are numbered without a gap", present.display(), missing.display())]
    Gap {
        /// The sidecar after the gap.
        present: PathBuf,
        /// The empty slot.
        missing: PathBuf,
    },
}

/// Every sidecar of `bundle`, in slot order: slots 1, 2, … up to the first empty one. A
/// file in the slot right after the first empty one is an error ([`ReadError::Gap`]):
/// a renewal never skips a slot, so a missing one was lost or removed.
pub fn read_all(bundle: &Path) -> Result<Vec<Sidecar>, ReadError> {
    let mut out = Vec::new();
    for slot in 1.. {
        let p = path(bundle, slot);
        match read_one(&p)? {
            Some(token) => out.push(Sidecar {
                slot,
                path: p,
                token,
            }),
            None => {
                let next = path(bundle, slot + 1);
                if std::fs::symlink_metadata(&next).is_ok() {
                    return Err(ReadError::Gap {
                        present: next,
                        missing: p,
                    });
                }
                break;
            }
        }
    }
    Ok(out)
}

/// The bytes of the sidecar at `p`, `None` when there is none.
fn read_one(p: &Path) -> Result<Option<Vec<u8>>, ReadError> {
    use std::io::Read;
    let file = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ReadError::Read {
                path: p.to_path_buf(),
                source,
            })
        }
    };
    let read_err = |source| ReadError::Read {
        path: p.to_path_buf(),
        source,
    };
    if file.metadata().map_err(read_err)?.is_dir() {
        return Err(read_err(std::io::Error::other("is a directory")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SIDECAR_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > MAX_SIDECAR_BYTES {
        return Err(ReadError::TooLarge {
            path: p.to_path_buf(),
        });
    }
    Ok(Some(bytes))
}

/// The imprints of a bundle's sidecars, slot after slot: SHA-256 over the bundle file's
/// bytes and then each earlier sidecar's bytes.
#[derive(Clone)]
pub struct Imprints {
    hasher: Sha256,
}

impl std::fmt::Debug for Imprints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Imprints")
    }
}

impl Imprints {
    /// Start from the bundle file's bytes (the imprint of slot 1).
    pub fn new(bundle: &[u8]) -> Imprints {
        let mut hasher = Sha256::new();
        hasher.update(bundle);
        Imprints { hasher }
    }

    /// The imprint the next slot's token must carry.
    pub fn next(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }

    /// Add a sidecar's bytes (in slot order): [`next`](Self::next) is then the imprint
    /// of the slot after it.
    pub fn push(&mut self, token: &[u8]) {
        self.hasher.update(token);
    }
}

/// A renewal that does not extend the token before it (times in seconds since the Unix
/// epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkError {
    /// The renewal is dated before the token it renews.
    Earlier {
        /// The renewal's genTime.
        gen_time: u64,
        /// The previous token's genTime.
        previous: u64,
    },
    /// The renewal is dated after the previous token's TSA certificate expired: by then
    /// that token proved nothing any more, so there was nothing left to extend.
    Late {
        /// The renewal's genTime.
        gen_time: u64,
        /// The previous token's TSA certificate's `notAfter`.
        not_after: u64,
    },
}

/// The link rule: a renewal whose genTime is `gen_time` extends a token made at
/// `previous` by a TSA whose certificate is valid until `not_after` when `previous <=
/// gen_time <= not_after`. Both ends are inclusive: genTime has a resolution of one
/// second (two renewals may share one), and a certificate is valid through its
/// `notAfter` second (RFC 5280 §4.1.2.5).
pub fn check_link(previous: u64, not_after: u64, gen_time: u64) -> Result<(), LinkError> {
    if gen_time < previous {
        return Err(LinkError::Earlier { gen_time, previous });
    }
    if gen_time > not_after {
        return Err(LinkError::Late {
            gen_time,
            not_after,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn slots_are_named_tsr_then_numbered() {
        let b = Path::new("dir/x.mcpev");
        assert_eq!(path(b, 1), Path::new("dir/x.mcpev.tsr"));
        assert_eq!(path(b, 2), Path::new("dir/x.mcpev.tsr.2"));
        assert_eq!(path(b, 11), Path::new("dir/x.mcpev.tsr.11"));
    }

    #[test]
    fn each_imprint_covers_the_bundle_and_every_earlier_sidecar() {
        let mut i = Imprints::new(b"bundle");
        assert_eq!(i.next(), <[u8; 32]>::from(Sha256::digest(b"bundle")));
        i.push(b"one");
        assert_eq!(i.next(), <[u8; 32]>::from(Sha256::digest(b"bundleone")));
        i.push(b"two");
        assert_eq!(i.next(), <[u8; 32]>::from(Sha256::digest(b"bundleonetwo")));
    }

    #[test]
    fn the_link_rule_is_inclusive_at_both_ends() {
        assert_eq!(check_link(100, 200, 100), Ok(()));
        assert_eq!(check_link(100, 200, 200), Ok(()));
        assert_eq!(
            check_link(100, 200, 99),
            Err(LinkError::Earlier {
                gen_time: 99,
                previous: 100
            })
        );
        assert_eq!(
            check_link(100, 200, 201),
            Err(LinkError::Late {
                gen_time: 201,
                not_after: 200
            })
        );
    }

    #[test]
    fn sidecars_are_read_in_order_up_to_the_first_gap() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path().join("x.mcpev");
        std::fs::write(&b, b"bundle").unwrap();
        assert!(read_all(&b).unwrap().is_empty());
        std::fs::write(path(&b, 1), b"t1").unwrap();
        std::fs::write(path(&b, 2), b"t2").unwrap();
        let got = read_all(&b).unwrap();
        assert_eq!(
            got.iter()
                .map(|s| (s.slot, s.token.clone()))
                .collect::<Vec<_>>(),
            vec![(1, b"t1".to_vec()), (2, b"t2".to_vec())]
        );
        // Slot 3 empty, slot 4 not: a gap.
        std::fs::write(path(&b, 4), b"t4").unwrap();
        let e = read_all(&b).unwrap_err();
        assert!(matches!(e, ReadError::Gap { .. }), "{e}");
        assert!(e.to_string().contains("x.mcpev.tsr.4 exists but"), "{e}");
        // No slot 1 at all, slot 2 present: a gap too.
        std::fs::remove_file(path(&b, 1)).unwrap();
        assert!(matches!(read_all(&b), Err(ReadError::Gap { .. })));
        std::fs::remove_file(path(&b, 2)).unwrap();
        std::fs::remove_file(path(&b, 4)).unwrap();
        std::fs::write(path(&b, 1), vec![0u8; MAX_SIDECAR_BYTES as usize + 1]).unwrap();
        assert!(matches!(read_all(&b), Err(ReadError::TooLarge { .. })));
    }
}
