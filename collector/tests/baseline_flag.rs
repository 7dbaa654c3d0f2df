//! `--baseline FILE` (1.3's selection) is validated before any traffic: a path that is
//! not a readable file is a usage error (exit 2) naming it.

use std::process::Command;

#[test]
fn a_missing_baseline_file_is_a_usage_error_before_any_traffic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such.mcpev");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", dir.path())
        .args(["-q", "-o"])
        .arg(dir.path().join("out"))
        .arg("--baseline")
        .arg(&missing)
        .arg("http://127.0.0.1:1/mcp")
        .output()
        .expect("run mcp-collect");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-such.mcpev") && err.contains("--baseline"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists(), "a bundle was written");
}
