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

/// Targets wait for `--concurrency` and open their journal only when they start; a
/// signal still leaves a bundle for every target, the ones that never started included
/// (sealed as interrupted, with no record), and the manifest lists every one.
#[test]
fn sigterm_seals_targets_that_never_started_too() {
    let srv = serve(Arc::new(|_r: &Req| Vec::new()));
    let dir = tempfile::tempdir().expect("tempdir");
    let servers = dir.path().join("servers.txt");
    // The scripted server first, then four ports where nothing listens.
    let mut targets = vec![srv.url.clone()];
    targets.extend((1..=4).map(|p| format!("http://127.0.0.1:{p}/mcp")));
    std::fs::write(&servers, targets.join("\n") + "\n").expect("servers file");
    let manifest = dir.path().join("manifest.jsonl");
    let mut c = collect_cmd(&dir);
    c.args([
        "-q",
        "--timeout",
        "60",
        "--concurrency",
        "1",
        "--servers-file",
    ])
    .arg(&servers)
    .arg("--manifest")
    .arg(&manifest)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = c.spawn().expect("spawn mcp-collect");
    for _ in 0..200 {
        if !srv.requests.lock().expect("requests").is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!srv.requests.lock().expect("requests").is_empty());
    // Only the running target has a journal so far.
    let journals = std::fs::read_dir(dir.path().join("out"))
        .expect("out dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".journal"))
        .count();
    assert_eq!(journals, 1, "one journal while one target runs");
    let st = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(st.success());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let paths: Vec<&str> = stdout.lines().collect();
    assert_eq!(paths.len(), targets.len(), "{stdout}");
    for p in &paths {
        let v = open(std::path::Path::new(p));
        assert_eq!(v.evidence.run.status, RunStatus::Interrupted, "{p}");
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&manifest)
        .expect("manifest")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), targets.len());
    for (l, t) in lines.iter().zip(&targets) {
        assert_eq!(l["target"], t.as_str());
        assert_eq!(l["status"], "interrupted");
        assert!(l["bundle"].as_str().is_some_and(|b| paths.contains(&b)));
    }
}
