// The build identity of mcp-collect and mcp-grade: included with `include!` by
// collector/build.rs and evaluator/build.rs (and by collector/tests/version.rs, which
// tests it), so the two binaries say who they are the same way (README.md, "Build
// identity"). For the crate being built it sets two compile-time variables:
//
// * `MCP_PROBE_BUILD_ID`: `MCP_PROBE_BUILD` from the environment (made one line) when it is
//   set and not empty; else the git commit the work tree is checked out at (40 hex
//   digits), with `-dirty` when a tracked file among the binary's inputs differs from
//   that commit; else `unknown (built without git)` (no git, or the source is not the top
//   of a git work tree, as when built from a tarball).
// * `MCP_PROBE_TARGET` and `MCP_PROBE_RUSTC`: the target triple built for and the
//   compiler (`rustc 1.95.0`), recorded beside the build in every bundle.
// * `MCP_PROBE_LONG_VERSION`: what `--version` prints after the program name, e.g.
//   `0.1.0 (commit 0123abcd4567, x86_64-unknown-linux-gnu, rustc 1.95.0)`.
//
// Nothing here reads the clock or the user's name: the same tree and toolchain give the
// same strings. The script reruns only when what it read can have changed: the
// `MCP_PROBE_BUILD` variable, the HEAD file, the branch's ref, and the binary's inputs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a build without git records.
const WITHOUT_GIT: &str = "unknown (built without git)";

/// The build identity and the files whose change can change it.
struct Identity {
    build: String,
    watch: Vec<PathBuf>,
}

/// `git -C dir ARGS`, its stdout trimmed; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A commit id: 40 hex digits (SHA-1 repositories) or 64 (SHA-256 ones).
fn is_commit(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A path git printed (relative to `root` when it is not absolute).
fn git_path(root: &Path, name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(git(root, &["rev-parse", "--git-path", name])?);
    Some(if p.is_absolute() { p } else { root.join(p) })
}

/// The identity from git: `None` when git is missing or `root` is not the top of a git
/// work tree (a tarball unpacked inside some other repository is not that repository's
/// commit). `inputs` are the paths, relative to `root`, that go into the binary: a
/// change to a tracked file among them (staged or not) makes the build `-dirty`; a file
/// git does not track does not (it is only built when a tracked file names it).
fn from_git(root: &Path, inputs: &[&str]) -> Option<Identity> {
    let top = git(root, &["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(&top).ok()? != std::fs::canonicalize(root).ok()? {
        return None;
    }
    let head = git(root, &["rev-parse", "HEAD"])?;
    if !is_commit(&head) {
        return None;
    }
    let mut status = vec![
        "--no-optional-locks",
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
    ];
    status.extend_from_slice(inputs);
    // A status that cannot be read does not claim a clean tree.
    let dirty = git(root, &status).is_none_or(|s| !s.is_empty());
    // HEAD (per work tree) and the branch it names (in the common directory: `--git-path`
    // resolves both for linked work trees). A branch held only in packed-refs gets a
    // loose file on the next commit: watch packed-refs and the nearest folder that holds
    // the loose file then. Cargo reruns a script on every build for a path that does not
    // exist, so only existing paths are watched.
    let mut watch: Vec<PathBuf> = git_path(root, "HEAD").into_iter().collect();
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        if let Some(loose) = git_path(root, &branch) {
            if loose.is_file() {
                watch.push(loose);
            } else {
                watch.extend(git_path(root, "packed-refs"));
                watch.extend(
                    loose
                        .ancestors()
                        .find(|a| a.is_dir())
                        .map(Path::to_path_buf),
                );
            }
        }
    }
    watch.extend(inputs.iter().map(|i| root.join(i)));
    watch.retain(|p| p.exists());
    Some(Identity {
        build: if dirty { format!("{head}-dirty") } else { head },
        watch,
    })
}

/// The identity of a build of `root` with `inputs`, given `MCP_PROBE_BUILD`.
fn identity(root: &Path, inputs: &[&str], explicit: Option<String>) -> Identity {
    // One line: the value goes into a cargo directive and into every bundle.
    let explicit = explicit
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty());
    match explicit {
        Some(build) => Identity {
            build,
            watch: Vec::new(),
        },
        None => from_git(root, inputs).unwrap_or_else(|| Identity {
            build: WITHOUT_GIT.to_string(),
            watch: Vec::new(),
        }),
    }
}

/// `VERSION (commit SHORT, TARGET, RUSTC)`: the commit cut to 12 digits (`-dirty` kept);
/// `built without git` or `build ID` when the identity is not a commit.
fn long_version(version: &str, build: &str, target: &str, rustc: &str) -> String {
    let (hash, dirty) = match build.strip_suffix("-dirty") {
        Some(h) => (h, "-dirty"),
        None => (build, ""),
    };
    let what = if is_commit(hash) {
        format!("commit {}{dirty}", &hash[..12])
    } else if build == WITHOUT_GIT {
        "built without git".to_string()
    } else {
        format!("build {build}")
    };
    format!("{version} ({what}, {target}, {rustc})")
}

/// `rustc X.Y.Z` of the compiler cargo builds with (`$RUSTC`).
fn rustc_version() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "rustc unknown".to_string())
}

/// Print the cargo directives for the crate being built; `inputs` relative to the
/// workspace root (the parent of the crate's folder).
fn emit(inputs: &[&str]) {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let manifest = PathBuf::from(var("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(&manifest).to_path_buf();
    println!("cargo:rerun-if-env-changed=MCP_PROBE_BUILD");
    let id = identity(&root, inputs, std::env::var("MCP_PROBE_BUILD").ok());
    // Without a path, cargo would rerun the script on any change in the package.
    println!("cargo:rerun-if-changed=build.rs");
    for p in &id.watch {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let (target, rustc) = (var("TARGET"), rustc_version());
    println!("cargo:rustc-env=MCP_PROBE_BUILD_ID={}", id.build);
    println!("cargo:rustc-env=MCP_PROBE_TARGET={target}");
    println!("cargo:rustc-env=MCP_PROBE_RUSTC={rustc}");
    println!(
        "cargo:rustc-env=MCP_PROBE_LONG_VERSION={}",
        long_version(&var("CARGO_PKG_VERSION"), &id.build, &target, &rustc)
    );
}
