//! Local file-system helpers both binaries need (no network; only what callers ask).

use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Write `bytes` to `path` so that a reader sees either the old file or the whole new
/// one, never a part: a temporary file beside it, synced, then renamed over it. With
/// `private`, the file is created 0600 (Unix). The temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    write_atomic_with(path, private, |w| w.write_all(bytes))
}

/// [`write_atomic`] with what `write` writes (through a 64 KiB buffer), for output made
/// as it goes (a report): a failure anywhere, in `write` included, leaves the old file
/// (or none), never a part. A `path` that exists and is not a regular file (a device such
/// as `/dev/null` or `/dev/stdout`, a named pipe) is written in place: there is no old
/// file to keep, and renaming over it would replace the device with a file.
pub fn write_atomic_with(
    path: &Path,
    private: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let f = std::fs::OpenOptions::new().write(true).open(path)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        write(&mut w)?;
        return w.flush();
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, open_new(&tmp, private)?);
        write(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable where the platform allows it.
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Write a new file readable only by its owner (0600 on Unix), synced; refuses to
/// overwrite an existing file (a key, a token cache): the caller decides what an existing
/// one means.
pub fn write_new_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = open_new(path, true)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Write a new file (default permissions), synced, its directory entry synced where the
/// platform allows: never over an existing file (`ErrorKind::AlreadyExists`), so two
/// writers of the same path cannot both succeed. A file this call created is removed
/// again when the write fails.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = open_new(path, false)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written {
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(d) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[cfg(unix)]
fn open_new(path: &Path, private: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    if private {
        o.mode(0o600);
    }
    o.open(path)
}

#[cfg(not(unix))]
fn open_new(path: &Path, _private: bool) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
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

    #[test]
    fn write_new_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.tsr");
        write_new(&p, b"first").unwrap();
        let e = write_new(&p, b"second").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
    }

    /// A named pipe given as the output stays a pipe and gets every byte: the report
    /// is written into it, not renamed over it (as `-o /dev/null` must not replace the
    /// device).
    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        super::write_atomic_with(&fifo, false, |w| w.write_all(b"report bytes")).unwrap();
        assert_eq!(reader.join().unwrap(), b"report bytes");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
