//! What a binary built from this work tree must say it is (README.md, "Build
//! identity"), worked out here with git independently of build/provenance.rs: shared by
//! the `--version` tests of both crates.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root())
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What the build must have recorded.
#[derive(Debug)]
pub enum Expected {
    /// `MCP_PROBE_BUILD` was set: exactly this.
    Explicit(String),
    /// The commit HEAD is at; `dirty_at_least` when a tracked file of `src` differs from
    /// it (then `-dirty` is required), `clean` when no tracked file of the whole work tree
    /// does (then it is forbidden).
    Commit {
        head: String,
        dirty_at_least: bool,
        clean: bool,
    },
    /// Not a git work tree.
    WithoutGit,
}

/// What a build of the crate whose sources are `src` (relative to the root) recorded.
pub fn expected(src: &str) -> Expected {
    if let Some(v) = std::env::var("MCP_PROBE_BUILD")
        .ok()
        .filter(|v| !v.is_empty())
    {
        return Expected::Explicit(v.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let top = git(&["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    let Some(head) = top
        .filter(|t| t.canonicalize().ok().as_deref() == Some(root().as_path()))
        .and_then(|_| git(&["rev-parse", "HEAD"]))
    else {
        return Expected::WithoutGit;
    };
    let status = |paths: &[&str]| {
        let mut a = vec!["status", "--porcelain", "--untracked-files=no", "--"];
        a.extend_from_slice(paths);
        git(&a).expect("git status")
    };
    Expected::Commit {
        dirty_at_least: !status(&[src]).is_empty(),
        clean: status(&["."]).is_empty(),
        head,
    }
}

/// Check a recorded build identifier against [`expected`] for `src`.
pub fn check_build(build: &str, src: &str) {
    match expected(src) {
        Expected::Explicit(v) => assert_eq!(build, v),
        Expected::WithoutGit => assert_eq!(build, "unknown (built without git)"),
        Expected::Commit {
            head,
            dirty_at_least,
            clean,
        } => {
            assert_eq!(head.len(), 40, "{head}");
            assert!(
                build == head || build == format!("{head}-dirty"),
                "{build:?} is not commit {head}"
            );
            if dirty_at_least {
                assert!(build.ends_with("-dirty"), "{src} has changes: {build}");
            }
            if clean {
                assert!(!build.ends_with("-dirty"), "the tree is clean: {build}");
            }
        }
    }
}

/// Check `--version` output `line` of program `name` (`name VERSION (commit C, TARGET,
/// rustc X.Y.Z)`) against [`expected`] for `src`.
pub fn check_version(line: &str, name: &str, src: &str) {
    let line = line.trim_end();
    let prefix = format!("{name} {} (", env!("CARGO_PKG_VERSION"));
    let inner = line
        .strip_prefix(&prefix)
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line:?} is not `{prefix}…)`"));
    let parts: Vec<&str> = inner.split(", ").collect();
    assert_eq!(parts.len(), 3, "{line}");
    assert!(parts[1].split('-').count() >= 3, "a target triple: {line}");
    assert!(parts[2].starts_with("rustc 1."), "{line}");
    match expected(src) {
        Expected::Explicit(v) => assert!(
            parts[0] == format!("build {v}") || parts[0].starts_with("commit "),
            "{line}"
        ),
        Expected::WithoutGit => assert_eq!(parts[0], "built without git", "{line}"),
        Expected::Commit { head, .. } => {
            let c = parts[0].strip_prefix("commit ").expect("commit");
            let hash = c.strip_suffix("-dirty").unwrap_or(c);
            assert_eq!(hash.len(), 12, "{line}");
            assert!(head.starts_with(hash), "{line}: HEAD is {head}");
        }
    }
}
