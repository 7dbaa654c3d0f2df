//! Local file-system helpers both binaries need (no network; only what callers ask).

use std::path::Path;

/// Create `dir` and any missing parents; on Unix the directories this call creates are
/// mode 0700 (owner only). An existing directory is left as it is.
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Create `dir` and any missing parents (no permission bits off Unix).
#[cfg(not(unix))]
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn creates_nested_dirs_owner_only_and_accepts_existing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("b");
        create_private_dir(&dir).unwrap();
        assert!(dir.is_dir());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for d in [tmp.path().join("a"), dir.clone()] {
                let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o700, "{}", d.display());
            }
        }
        // Again: an existing directory is fine.
        create_private_dir(&dir).unwrap();
        // A file in the way is an error.
        let file = tmp.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(create_private_dir(&file).is_err());
    }
}
