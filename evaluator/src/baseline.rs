//! Baselines: earlier bundles of the same endpoint that the drift checks
//! (`capabilities-match-baseline`, `new-tools-gated`, `identity-matches-baseline`, and
//! sub-verdicts of `oauth-discovery-validated` and `scopes-minimized`) compare against
//! (docs/report.md, baselines).
//!
//! A baseline is a whole bundle, not an extracted record: it is evidence, so it is
//! verified like any bundle (signature, chain, format, `--trust` pins) every time it is
//! used, and the inventories compared are derived from it by the same code that derives
//! them from the graded bundle. Two sources:
//!
//! * `--baseline FILE`: an explicit bundle. It must verify (exit 3 otherwise) and its
//!   endpoint must equal the endpoint of every graded bundle (a usage error naming both
//!   otherwise).
//! * the per-endpoint store `<state>/baselines/<key>.mcpev`, where `<state>` is
//!   `$MCP_PROBE_HOME`, else `$HOME/.mcp-probe` (the collector's rule, re-implemented
//!   here so the grader does not depend on the collector), and `<key>` is the first 16
//!   hex digits of SHA-256 over the endpoint URL. Written only by
//!   `--update-baseline`. A stored baseline that fails verification is ignored with a
//!   one-line warning (the report shows it as invalid): the comparing checks then have
//!   no baseline and say UNKNOWN, which can never pass a drifted server, and the next
//!   `--update-baseline` replaces the file.
//!
//! The store keeps the exact bytes that were graded, written atomically (temporary file
//! in the same directory, fsync, rename) into directories created 0700, files 0600.

use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::sha256;

/// Sub-directory of the state directory holding stored baselines.
pub const DIR: &str = "baselines";
/// File extension of a stored baseline.
pub const EXTENSION: &str = "mcpev";

/// The state directory: `$MCP_PROBE_HOME` when set and non-empty, else
/// `$HOME/.mcp-probe`; `None` when neither variable is set.
pub fn state_dir() -> Option<PathBuf> {
    state_dir_from(std::env::var_os("MCP_PROBE_HOME"), std::env::var_os("HOME"))
}

/// [`state_dir`] from given variable values (for tests).
pub fn state_dir_from(
    probe_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if let Some(h) = probe_home.filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(h));
    }
    home.filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".mcp-probe"))
}

/// The store key of an endpoint URL: the first 16 hex digits of its SHA-256.
pub fn key(endpoint: &str) -> String {
    hex::encode(&sha256(endpoint.as_bytes())[..8])
}

/// The directory of the stored baselines under `state`.
pub fn store_dir(state: &Path) -> PathBuf {
    state.join(DIR)
}

/// Where the baseline of `endpoint` is stored under `state`.
pub fn stored_path(state: &Path, endpoint: &str) -> PathBuf {
    store_dir(state).join(format!("{}.{EXTENSION}", key(endpoint)))
}

/// Store `bytes` as the baseline of `endpoint` under `state`, creating the directories
/// (0700) as needed and replacing any earlier baseline atomically. Returns the path.
pub fn store(state: &Path, endpoint: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let path = stored_path(state, endpoint);
    let dir = store_dir(state);
    mcp_probe_schema::fsutil::create_private_dir(&dir)?;
    write_atomic(&path, bytes, true)?;
    Ok(path)
}

pub use mcp_probe_schema::fsutil::write_atomic;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_dir_rule_matches_the_collector() {
        assert_eq!(
            state_dir_from(Some("/x".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(
            state_dir_from(Some("".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.mcp-probe"))
        );
        assert_eq!(state_dir_from(None, None), None);
        assert_eq!(state_dir_from(None, Some("".into())), None);
    }

    #[test]
    fn key_is_16_hex_of_sha256() {
        // sha256("http://127.0.0.1:8080/mcp") starts with these 8 bytes.
        let k = key("http://127.0.0.1:8080/mcp");
        assert_eq!(k.len(), 16);
        assert_eq!(k, hex::encode(&sha256(b"http://127.0.0.1:8080/mcp")[..8]));
        assert_ne!(k, key("http://127.0.0.1:8081/mcp"));
        assert_eq!(
            stored_path(Path::new("/s"), "http://127.0.0.1:8080/mcp"),
            PathBuf::from(format!("/s/baselines/{k}.mcpev"))
        );
    }

    #[test]
    fn store_replaces_atomically_with_private_modes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = dir.path().join("state");
        let p = store(&state, "http://e/mcp", b"one").expect("store");
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        let q = store(&state, "http://e/mcp", b"two").expect("store again");
        assert_eq!(p, q);
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        let left: Vec<_> = std::fs::read_dir(state.join(DIR))
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&state.join(DIR)), 0o700);
            assert_eq!(mode(&state), 0o700);
            assert_eq!(mode(&p), 0o600);
        }
    }

    #[test]
    fn write_atomic_fails_cleanly_in_a_missing_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("nope").join("r.json");
        assert!(write_atomic(&p, b"x", false).is_err());
        assert!(!p.exists());
    }
}
