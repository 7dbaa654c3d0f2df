//! The grader's signing key, kept as the collector keeps its own (collector/src/keys.rs):
//! under the state directory (`$MCP_PROBE_HOME`, else `~/.mcp-probe`), `keys/grader.key`,
//! an Ed25519 PKCS#8 PEM created on first use with mode 0600 in a 0700 directory, its
//! public half beside it as `keys/grader.pub` (SPKI PEM: the file
//! `mcp-grade verify-statement --trust` reads). `--attest-key FILE` names another key
//! file, which must exist.

use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::SecretKeyError;
use mcp_probe_schema::SecretKey;

/// The grader key's file name under `keys/` in the state directory.
pub const KEY_FILE: &str = "grader.key";

/// Its public half, beside it.
pub const PUB_FILE: &str = "grader.pub";

/// The grader key could not be loaded or created (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// No `--attest-key` and no state directory.
    #[error("--attest needs a grader key: set MCP_PROBE_HOME or HOME, or give --attest-key FILE")]
    NoHome,
    /// I/O on the key file.
    #[error("grader key {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not a key, or the key could not be made or encoded.
    #[error("grader key {}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: SecretKeyError,
    },
}

/// Load the key at `path` (PKCS#8 PEM).
pub fn load(path: &Path) -> Result<SecretKey, KeyError> {
    let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
        path: path.into(),
        source,
    })?;
    SecretKey::from_pem(&text).map_err(|reason| KeyError::Invalid {
        path: path.into(),
        reason,
    })
}

/// The key of a grading run: `explicit` (`--attest-key`), else the default key under
/// `state` (created when absent). Returns the key and, when it was created now, the
/// path of its public half (for a note).
pub fn load_or_create(
    explicit: Option<&Path>,
    state: Option<&Path>,
) -> Result<(SecretKey, Option<PathBuf>), KeyError> {
    if let Some(p) = explicit {
        return load(p).map(|k| (k, None));
    }
    let dir = state.ok_or(KeyError::NoHome)?.join("keys");
    let path = dir.join(KEY_FILE);
    if path.exists() {
        return load(&path).map(|k| (k, None));
    }
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| KeyError::Io { path: p, source }
    };
    mcp_probe_schema::fsutil::create_private_dir(&dir).map_err(io(&dir))?;
    let invalid = |reason| KeyError::Invalid {
        path: path.clone(),
        reason,
    };
    let key = SecretKey::generate().map_err(invalid)?;
    let pem = key.to_pem().map_err(invalid)?;
    match mcp_probe_schema::fsutil::write_new_private(&path, pem.as_bytes()) {
        Ok(()) => {}
        // Another run created it meanwhile: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return load(&path).map(|k| (k, None));
        }
        Err(e) => return Err(io(&path)(e)),
    }
    let pubp = dir.join(PUB_FILE);
    std::fs::write(&pubp, key.public().to_pem()).map_err(io(&pubp))?;
    Ok((key, Some(pubp)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn created_once_private_with_its_public_half_then_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let (k, created) = load_or_create(None, Some(tmp.path())).unwrap();
        let pubp = created.expect("created now");
        assert_eq!(pubp, tmp.path().join("keys").join(PUB_FILE));
        let public = mcp_probe_schema::PublicKey::parse(&std::fs::read(&pubp).unwrap()).unwrap();
        assert_eq!(public, k.public());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&tmp.path().join("keys").join(KEY_FILE)), 0o600);
            assert_eq!(mode(&tmp.path().join("keys")), 0o700);
        }
        let (again, created) = load_or_create(None, Some(tmp.path())).unwrap();
        assert!(created.is_none());
        assert_eq!(again.public(), k.public());
        // An explicit key file must exist.
        let e = load_or_create(Some(&tmp.path().join("none.key")), None).unwrap_err();
        assert!(e.to_string().contains("none.key"), "{e}");
        assert!(matches!(load_or_create(None, None), Err(KeyError::NoHome)));
    }
}
