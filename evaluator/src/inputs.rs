//! Bundle arguments as users pass them: a file, a directory (the `*.mcpev` files in it,
//! sorted by name, not recursive), or `-` (one bundle read from standard input).
//!
//! A directory that holds no bundle is a usage error when it is the only argument, and
//! skipped (listed in [`Expanded::skipped`], which the caller notes on stderr) when it
//! is one of several, so `mcp-grade examples/*` grades the bundles beside a folder of
//! policy files. When grading ([`expand_for_grading`]; `verify` and `show` report every
//! file they are given) so is a file among several that is plainly something else (its name
//! does not end in `.mcpev` and its bytes read as a PEM key, JSON, text, HTML or an
//! archive: `mcp_probe_schema::bundle::looks_like`), such as the public key and README
//! beside the bundles. A `.mcpev` file, or any file that starts like a COSE_Sign1, is
//! always graded: a damaged bundle fails verification, it is never skipped. Nothing left
//! to grade is the usage error again.
//!
//! A bundle from standard input is kept in a private temporary directory (0700, file
//! 0600) for the run, because grading with `--baseline FILE` reads every input twice (a
//! verify pass, then the grade pass that checks the bytes are the ones that verified);
//! the directory is removed when the [`Expanded`] value is dropped.

use std::io::Read;
use std::path::PathBuf;

/// Why the bundle arguments cannot be used (a usage error, exit 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A directory holds no `.mcpev` file.
    #[error("{}: no .mcpev file in this directory", path.display())]
    EmptyDir {
        /// The directory.
        path: PathBuf,
    },
    /// A directory could not be listed.
    #[error("cannot list {}: {source}", path.display())]
    List {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `-` given more than once.
    #[error("-: standard input holds one bundle; give - once")]
    StdinTwice,
    /// `show` was given a directory of several bundles.
    #[error("{}: show takes one bundle; this holds {count}", path.display())]
    NotOne {
        /// The argument.
        path: PathBuf,
        /// How many bundles it stands for.
        count: usize,
    },
    /// Standard input was empty or could not be kept.
    #[error("-: {0}")]
    Stdin(String),
    /// Every argument was skipped, the first of them a file that is not a bundle.
    #[error("{}: not a bundle: {why} (and no other argument is one)", path.display())]
    NoBundle {
        /// The first argument skipped.
        path: PathBuf,
        /// What it looks like.
        why: String,
    },
}

/// An argument among several that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The argument.
    pub path: PathBuf,
    /// Why, e.g. `no .mcpev file in this directory`, `not a bundle: a PEM file (…)`.
    pub why: String,
}

/// The expanded list of bundle files, owning the copy of standard input if there is one.
#[derive(Debug)]
pub struct Expanded {
    /// The bundle files, in the order given (directories expanded in place).
    pub paths: Vec<PathBuf>,
    /// Arguments among several that were skipped: directories that held no `.mcpev`
    /// file, files that are plainly not bundles.
    pub skipped: Vec<Skipped>,
    stdin_dir: Option<PathBuf>,
}

impl Drop for Expanded {
    fn drop(&mut self) {
        if let Some(d) = &self.stdin_dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Expand `args`, reading standard input from `stdin` when `-` is among them. Every file
/// argument is kept, so `verify` reports what each one is.
pub fn expand(args: &[PathBuf], stdin: &mut dyn Read) -> Result<Expanded, InputError> {
    expand_with(args, stdin, false)
}

/// [`expand`] for grading: a file among several that is plainly not a bundle is
/// skipped with a note (the module docs say which).
pub fn expand_for_grading(args: &[PathBuf], stdin: &mut dyn Read) -> Result<Expanded, InputError> {
    expand_with(args, stdin, true)
}

fn expand_with(
    args: &[PathBuf],
    stdin: &mut dyn Read,
    skip_files: bool,
) -> Result<Expanded, InputError> {
    let mut out = Expanded {
        paths: Vec::with_capacity(args.len()),
        skipped: Vec::new(),
        stdin_dir: None,
    };
    for a in args {
        if a.as_os_str() == "-" {
            if out.stdin_dir.is_some() {
                return Err(InputError::StdinTwice);
            }
            let (dir, file) = keep_stdin(stdin)?;
            out.stdin_dir = Some(dir);
            out.paths.push(file);
        } else if a.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(a)
                .map_err(|source| InputError::List {
                    path: a.clone(),
                    source,
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "mcpev"))
                .collect();
            if found.is_empty() {
                if args.len() == 1 {
                    return Err(InputError::EmptyDir { path: a.clone() });
                }
                out.skipped.push(Skipped {
                    path: a.clone(),
                    why: EMPTY_DIR.into(),
                });
                continue;
            }
            found.sort();
            out.paths.extend(found);
        } else if let Some(what) = (skip_files && args.len() > 1)
            .then(|| not_a_bundle(a))
            .flatten()
        {
            out.skipped.push(Skipped {
                path: a.clone(),
                why: format!("not a bundle: {what}"),
            });
        } else {
            out.paths.push(a.clone());
        }
    }
    if out.paths.is_empty() {
        if let Some(first) = out.skipped.first() {
            return Err(match first.why.strip_prefix("not a bundle: ") {
                Some(what) => InputError::NoBundle {
                    path: first.path.clone(),
                    why: what.to_string(),
                },
                None => InputError::EmptyDir {
                    path: first.path.clone(),
                },
            });
        }
    }
    Ok(out)
}

const EMPTY_DIR: &str = "no .mcpev file in this directory";

/// What a file argument plainly is when it is not a bundle: its name does not end in
/// `.mcpev`, it does not start with the COSE_Sign1 tag, and its first 64 KiB read as
/// something `looks_like` names. `None` (grade it, and let verification say what is
/// wrong) for anything else, a file that cannot be read included.
fn not_a_bundle(path: &std::path::Path) -> Option<String> {
    if path.extension().is_some_and(|x| x == "mcpev") {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 << 10)
        .read_to_end(&mut head)
        .ok()?;
    if head.first().is_none_or(|b| *b == 0xd2) {
        return None;
    }
    mcp_probe_schema::bundle::looks_like(&head)
}

impl Expanded {
    /// The note for each skipped argument (printed unless `--quiet`).
    pub fn skip_notes(&self) -> impl Iterator<Item = String> + '_ {
        self.skipped
            .iter()
            .map(|s| format!("{}: {}; skipped", s.path.display(), s.why))
    }
}

/// The most read from standard input: a bundle larger than this is refused rather than
/// held (bundles are capped by the collector well below it).
const STDIN_MAX: u64 = 1 << 30;

fn keep_stdin(stdin: &mut dyn Read) -> Result<(PathBuf, PathBuf), InputError> {
    let mut bytes = Vec::new();
    stdin
        .take(STDIN_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Stdin(format!("cannot read standard input: {e}")))?;
    if bytes.is_empty() {
        return Err(InputError::Stdin(
            "standard input is empty (pipe one bundle into it)".into(),
        ));
    }
    if bytes.len() as u64 > STDIN_MAX {
        return Err(InputError::Stdin(format!(
            "more than {STDIN_MAX} bytes on standard input"
        )));
    }
    let dir = private_dir().map_err(|e| InputError::Stdin(format!("cannot keep it: {e}")))?;
    let file = dir.join("stdin.mcpev");
    mcp_probe_schema::fsutil::write_atomic(&file, &bytes, true).map_err(|e| {
        let _ = std::fs::remove_dir_all(&dir);
        InputError::Stdin(format!("cannot keep it in {}: {e}", dir.display()))
    })?;
    Ok((dir, file))
}

fn private_dir() -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir();
    let mut seed = [0u8; 8];
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    seed[..4].copy_from_slice(&std::process::id().to_le_bytes());
    seed[4..].copy_from_slice(&nanos.to_le_bytes());
    let dir = base.join(format!("mcp-grade-stdin-{}", hex::encode(seed)));
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_sorted_and_stdin_is_kept_then_removed() {
        let d = tempfile::tempdir().expect("tempdir");
        for n in ["b.mcpev", "a.mcpev", "notes.txt"] {
            std::fs::write(d.path().join(n), b"x").expect("write");
        }
        let mut input: &[u8] = b"bundle bytes";
        let e = expand(
            &[
                d.path().to_path_buf(),
                PathBuf::from("-"),
                PathBuf::from("c.mcpev"),
            ],
            &mut input,
        )
        .expect("expands");
        assert_eq!(e.paths[0], d.path().join("a.mcpev"));
        assert_eq!(e.paths[1], d.path().join("b.mcpev"));
        assert_eq!(std::fs::read(&e.paths[2]).expect("kept"), b"bundle bytes");
        assert_eq!(e.paths[3], PathBuf::from("c.mcpev"));
        let kept = e.paths[2].clone();
        drop(e);
        assert!(!kept.exists(), "removed with the run");
        let empty = tempfile::tempdir().expect("tempdir");
        let err = expand(&[empty.path().to_path_buf()], &mut &b""[..]).expect_err("empty");
        assert!(err.to_string().contains("no .mcpev file"), "{err}");
        let err = expand(&[PathBuf::from("-")], &mut &b""[..]).expect_err("no stdin");
        assert!(
            err.to_string().starts_with("-: standard input is empty"),
            "{err}"
        );
        let err =
            expand(&[PathBuf::from("-"), PathBuf::from("-")], &mut &b"x"[..]).expect_err("twice");
        assert!(matches!(err, InputError::StdinTwice));
    }

    #[test]
    fn an_empty_directory_among_several_arguments_is_skipped_unless_nothing_is_left() {
        let full = tempfile::tempdir().expect("tempdir");
        std::fs::write(full.path().join("a.mcpev"), b"x").expect("write");
        let empty = tempfile::tempdir().expect("tempdir");
        std::fs::write(empty.path().join("policy.toml"), b"x").expect("write");
        let (f, e) = (full.path().to_path_buf(), empty.path().to_path_buf());
        let x = expand(&[e.clone(), f.clone()], &mut &b""[..]).expect("expands");
        assert_eq!(x.paths, vec![f.join("a.mcpev")]);
        assert_eq!(
            x.skipped,
            vec![Skipped {
                path: e.clone(),
                why: EMPTY_DIR.into()
            }]
        );
        let notes: Vec<String> = x.skip_notes().collect();
        assert_eq!(
            notes,
            vec![format!(
                "{}: no .mcpev file in this directory; skipped",
                e.display()
            )]
        );
        let err = expand(&[e.clone(), e.clone()], &mut &b""[..]).expect_err("nothing left");
        assert!(matches!(err, InputError::EmptyDir { path } if path == e));
        let err = expand(std::slice::from_ref(&e), &mut &b""[..]).expect_err("alone");
        assert!(matches!(err, InputError::EmptyDir { .. }));
    }

    #[test]
    fn a_file_that_is_plainly_not_a_bundle_among_several_is_skipped_with_what_it_is() {
        let d = tempfile::tempdir().expect("tempdir");
        let at = |n: &str, bytes: &[u8]| {
            let p = d.path().join(n);
            std::fs::write(&p, bytes).expect("write");
            p
        };
        let key = at(
            "collector.pub",
            b"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n",
        );
        let readme = at("README.md", b"# examples\n\ntext\n");
        let bundle = at("a.mcpev", b"x");
        // Damaged bundles are graded (and fail verification), never skipped: a .mcpev
        // name, or a first byte that is the COSE_Sign1 tag, whatever the name.
        let damaged = at("b.mcpev", b"-----BEGIN PUBLIC KEY-----\n");
        let renamed = at("bundle.bin", &[0xd2, 0x84, 0x00]);
        let missing = d.path().join("gone.txt");
        let args = [
            key.clone(),
            readme.clone(),
            bundle.clone(),
            damaged.clone(),
            renamed.clone(),
            missing.clone(),
        ];
        let x = expand_for_grading(&args, &mut &b""[..]).expect("expands");
        assert_eq!(x.paths, vec![bundle, damaged, renamed, missing]);
        let notes: Vec<String> = x.skip_notes().collect();
        assert_eq!(
            notes,
            vec![
                format!(
                    "{}: not a bundle: a PEM file (PUBLIC KEY) (a public key: give it to --trust); skipped",
                    key.display()
                ),
                format!("{}: not a bundle: a text file (3 line(s)); skipped", readme.display()),
            ]
        );
        // Alone, the file is graded and verification says what it is (exit 3).
        let x = expand_for_grading(std::slice::from_ref(&key), &mut &b""[..]).expect("expands");
        assert_eq!(x.paths, vec![key.clone()]);
        // verify reports every file it is given.
        let x = expand(&[key.clone(), readme.clone()], &mut &b""[..]).expect("expands");
        assert_eq!(x.paths, vec![key.clone(), readme.clone()]);
        // Nothing left: a usage error naming the first and what it is.
        let err =
            expand_for_grading(&[key.clone(), readme], &mut &b""[..]).expect_err("nothing left");
        assert_eq!(
            err.to_string(),
            format!(
                "{}: not a bundle: a PEM file (PUBLIC KEY) (a public key: give it to --trust) (and no other argument is one)",
                key.display()
            )
        );
    }
}
