//! The build identity (README.md, "Build identity"): `mcp-collect --version` and the
//! `collector.build` of a bundle collected from a scripted loopback server name the
//! commit this work tree is at; and the shared logic of build/provenance.rs on scratch
//! git repositories (clean, dirty, linked work tree, packed refs, no git, a folder inside
//! another repository, the `MCP_PROBE_BUILD` override).

mod support;

#[path = "../../evaluator/tests/support/build_id.rs"]
mod build_id;

#[allow(dead_code)]
mod provenance {
    include!("../../build/provenance.rs");

    pub(crate) fn identity_of(
        root: &Path,
        inputs: &[&str],
        explicit: Option<&str>,
    ) -> (String, Vec<PathBuf>) {
        let id = identity(root, inputs, explicit.map(str::to_string));
        (id.build, id.watch)
    }

    pub(crate) fn long(build: &str) -> String {
        long_version("0.1.0", build, "x86_64-unknown-linux-gnu", "rustc 1.95.0")
    }

    pub(crate) const NO_GIT: &str = WITHOUT_GIT;
}

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use support::*;

#[test]
fn version_names_the_commit_target_and_rustc() {
    for flag in ["--version", "-V"] {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-collect"))
            .arg(flag)
            .output()
            .expect("run mcp-collect");
        assert!(out.status.success(), "{out:?}");
        let line = String::from_utf8_lossy(&out.stdout);
        build_id::check_version(&line, "mcp-collect", "collector/src");
    }
}

/// A legacy server: the handshake and an empty inventory.
fn legacy(req: &Req) -> Vec<u8> {
    let id = req.rpc_id();
    let result = |r: serde_json::Value| {
        json_response(
            200,
            &[],
            &json!({"jsonrpc": "2.0", "id": id, "result": r}).to_string(),
        )
    };
    match req.rpc_method().as_str() {
        "server/discover" => legacy_only(&id),
        "initialize" => result(
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1"}}),
        ),
        "notifications/initialized" => {
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
        }
        "tools/list" => result(json!({"tools": []})),
        _ => json_response(404, &[], "{}"),
    }
}

#[test]
fn a_collected_bundle_records_the_commit_in_collector_build() {
    let srv = serve(Arc::new(legacy));
    let run = collect(&["--info", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    let c = &v.evidence.collector;
    assert_eq!(c.name, "mcp-collect");
    assert_eq!(c.version, env!("CARGO_PKG_VERSION"));
    build_id::check_build(&c.build, "collector/src");
    assert_eq!(c.build, mcp_probe_collector::journal::BUILD);
}

// ---- build/provenance.rs on scratch repositories ----

/// `git ARGS` in `dir`, with an identity and no user configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with `src/lib.rs` and `docs/a.md`, one commit on branch `main`.
fn repo() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::create_dir_all(root.join("docs")).expect("mkdir");
    std::fs::write(root.join("src/lib.rs"), "// one\n").expect("write");
    std::fs::write(root.join("docs/a.md"), "a\n").expect("write");
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "one"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    (dir, root, head)
}

const INPUTS: &[&str] = &["src"];

#[test]
fn a_clean_checkout_is_its_commit_and_watches_head_and_the_branch() {
    let (_d, root, head) = repo();
    let (build, watch) = provenance::identity_of(&root, INPUTS, None);
    assert_eq!(build, head);
    assert_eq!(build.len(), 40);
    let git_dir = root.join(".git");
    assert!(watch.contains(&git_dir.join("HEAD")), "{watch:?}");
    assert!(
        watch.contains(&git_dir.join("refs/heads/main")),
        "{watch:?}"
    );
    assert!(watch.contains(&root.join("src")), "{watch:?}");
    assert!(watch.iter().all(|p| p.exists()), "{watch:?}");
}

#[test]
fn only_a_tracked_input_that_changed_makes_the_build_dirty() {
    let (_d, root, head) = repo();
    let build = |root: &Path| provenance::identity_of(root, INPUTS, None).0;
    // Outside the inputs, and untracked files: still the commit.
    std::fs::write(root.join("docs/a.md"), "changed\n").expect("write");
    std::fs::write(root.join("src/new.rs"), "// untracked\n").expect("write");
    assert_eq!(build(&root), head);
    // A tracked input changed: dirty, the same string every time.
    std::fs::write(root.join("src/lib.rs"), "// two\n").expect("write");
    assert_eq!(build(&root), format!("{head}-dirty"));
    assert_eq!(build(&root), format!("{head}-dirty"));
    // Staged is still not the commit.
    git(&root, &["add", "src/lib.rs"]);
    assert_eq!(build(&root), format!("{head}-dirty"));
    // Committed: the new commit, clean.
    git(&root, &["commit", "-q", "-m", "two"]);
    let two = git(&root, &["rev-parse", "HEAD"]);
    assert_ne!(two, head);
    assert_eq!(build(&root), two);
    // Back to the content of the commit: clean again (contents count, not times).
    std::fs::write(root.join("src/lib.rs"), "// three\n").expect("write");
    std::fs::write(root.join("src/lib.rs"), "// two\n").expect("write");
    assert_eq!(build(&root), two);
}

#[test]
fn a_linked_work_tree_and_a_detached_head_name_their_own_commit() {
    let (d, root, head) = repo();
    std::fs::write(root.join("src/lib.rs"), "// on main\n").expect("write");
    git(&root, &["commit", "-q", "-am", "main moves on"]);
    let wt = d.path().join("wt");
    git(
        &root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "topic",
            wt.to_str().expect("utf-8"),
            &head,
        ],
    );
    let (build, watch) = provenance::identity_of(&wt, INPUTS, None);
    assert_eq!(build, head, "the work tree's commit, not main's");
    let common = root.join(".git");
    assert!(
        watch.contains(&common.join("worktrees/wt/HEAD")),
        "{watch:?}"
    );
    assert!(
        watch.contains(&common.join("refs/heads/topic")),
        "{watch:?}"
    );

    git(&root, &["checkout", "-q", "--detach", &head]);
    let (build, watch) = provenance::identity_of(&root, INPUTS, None);
    assert_eq!(build, head);
    assert!(watch.contains(&common.join("HEAD")), "{watch:?}");
}

#[test]
fn a_branch_only_in_packed_refs_watches_packed_refs_and_the_folder_of_its_loose_file() {
    let (_d, root, head) = repo();
    git(&root, &["pack-refs", "--all", "--prune"]);
    assert!(!root.join(".git/refs/heads/main").exists());
    let (build, watch) = provenance::identity_of(&root, INPUTS, None);
    assert_eq!(build, head);
    assert!(watch.contains(&root.join(".git/packed-refs")), "{watch:?}");
    assert!(watch.contains(&root.join(".git/refs/heads")), "{watch:?}");
    assert!(watch.iter().all(|p| p.exists()), "{watch:?}");
}

#[test]
fn without_git_or_inside_another_repository_the_build_says_so() {
    // A tarball unpacked where there is no repository.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
    let (build, watch) = provenance::identity_of(dir.path(), INPUTS, None);
    assert_eq!(build, "unknown (built without git)");
    assert_eq!(build, provenance::NO_GIT);
    assert!(watch.is_empty());
    // ... and one unpacked inside some other repository: not that repository's commit.
    let (_d, root, _) = repo();
    let inner = root.join("docs/unpacked");
    std::fs::create_dir_all(inner.join("src")).expect("mkdir");
    assert_eq!(
        provenance::identity_of(&inner, INPUTS, None).0,
        provenance::NO_GIT
    );
}

#[test]
fn mcp_probe_build_overrides_git_as_one_line() {
    let (_d, root, head) = repo();
    assert_eq!(
        provenance::identity_of(&root, INPUTS, Some("release 7\nof  2026")).0,
        "release 7 of 2026"
    );
    assert_eq!(provenance::identity_of(&root, INPUTS, Some(" ")).0, head);
}

#[test]
fn the_long_version_cuts_a_commit_and_says_what_it_is_otherwise() {
    let c = "0123456789abcdef0123456789abcdef01234567";
    assert_eq!(
        provenance::long(c),
        "0.1.0 (commit 0123456789ab, x86_64-unknown-linux-gnu, rustc 1.95.0)"
    );
    assert_eq!(
        provenance::long(&format!("{c}-dirty")),
        "0.1.0 (commit 0123456789ab-dirty, x86_64-unknown-linux-gnu, rustc 1.95.0)"
    );
    assert_eq!(
        provenance::long(provenance::NO_GIT),
        "0.1.0 (built without git, x86_64-unknown-linux-gnu, rustc 1.95.0)"
    );
    assert_eq!(
        provenance::long("release-7"),
        "0.1.0 (build release-7, x86_64-unknown-linux-gnu, rustc 1.95.0)"
    );
}
