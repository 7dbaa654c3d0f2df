//! SIGTERM and SIGHUP seal like SIGINT: the real `mcp-collect` against a loopback server
//! that never answers, stopped by a signal while a request is in flight.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::RunStatus;
use support::*;

fn stop_with(signal: &str, expected_code: i32, named: &str) {
    let srv = serve(Arc::new(|_r: &Req| Vec::new()));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = collect_cmd(&dir);
    c.args(["--timeout", "60", &srv.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().expect("spawn mcp-collect");
    // Wait until the request is in flight.
    for _ in 0..200 {
        if !srv.requests.lock().expect("requests").is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !srv.requests.lock().expect("requests").is_empty(),
        "no request arrived"
    );
    let t0 = Instant::now();
    let st = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(st.success());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "sealing took {:?}",
        t0.elapsed()
    );
    assert_eq!(out.status.code(), Some(expected_code), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = stdout.lines().next().expect("a bundle path");
    let v = open(std::path::Path::new(path));
    assert_eq!(v.evidence.run.status, RunStatus::Interrupted);
    let failure = v.evidence.run.failure.clone().unwrap_or_default();
    assert_eq!(failure, format!("interrupted by {named}"));
    // The journal is gone once sealed: only the bundle is left.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .expect("out dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn sigterm_seals_every_started_target_and_exits_143() {
    stop_with("TERM", 143, "SIGTERM");
}

#[test]
fn sighup_seals_every_started_target_and_exits_129() {
    stop_with("HUP", 129, "SIGHUP");
}

#[test]
fn sigint_seals_every_started_target_and_exits_130() {
    stop_with("INT", 130, "SIGINT (Ctrl-C)");
}
