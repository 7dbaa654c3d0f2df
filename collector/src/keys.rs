//! The collector's signing key and state directory.
//!
//! State lives under `~/.mcp-probe/` (or `$MCP_PROBE_HOME`). The signing key is
//! `keys/collector.key`, an Ed25519 PKCS#8 PEM created on first use with mode 0600 in a
//! 0700 directory; its public half is written beside it as `collector.pub` (SPKI PEM),
//! the file `mcp-grade --trust` reads.

use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::{SecretKey, SecretKeyError};

/// A key could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Neither `MCP_PROBE_HOME` nor `HOME` is set.
    #[error("cannot find the state directory: set MCP_PROBE_HOME or HOME")]
    NoHome,
    /// I/O on the key file.
    #[error("key file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a key, or the key could not be made or encoded.
    #[error("key file {path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: SecretKeyError,
    },
}

/// `$MCP_PROBE_HOME`, else `$HOME/.mcp-probe`.
pub fn state_dir() -> Result<PathBuf, KeyError> {
    if let Some(h) = std::env::var_os("MCP_PROBE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".mcp-probe"))
        .ok_or(KeyError::NoHome)
}

/// Load the key at `path`.
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

/// Load the default key, creating it (0600) if absent. Returns the key, its path and
/// whether it was created now.
pub fn load_or_create_default() -> Result<(SecretKey, PathBuf, bool), KeyError> {
    let dir = state_dir()?.join("keys");
    let path = dir.join("collector.key");
    if path.exists() {
        return load(&path).map(|k| (k, path, false));
    }
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| KeyError::Io { path: p, source }
    };
    mcp_probe_schema::fsutil::create_private_dir(&dir).map_err(io(&dir))?;
    let key = SecretKey::generate().map_err(|reason| KeyError::Invalid {
        path: path.clone(),
        reason,
    })?;
    let pem = key.to_pem().map_err(|reason| KeyError::Invalid {
        path: path.clone(),
        reason,
    })?;
    write_private(&path, pem.as_bytes()).map_err(io(&path))?;
    let pubp = dir.join("collector.pub");
    std::fs::write(&pubp, key.public().to_pem()).map_err(io(&pubp))?;
    Ok((key, path, true))
}

/// Write a new file readable only by its owner; refuses to overwrite.
pub use mcp_probe_schema::fsutil::write_new_private as write_private;
