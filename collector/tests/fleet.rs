//! Fleets: `--shard K/N` splits a servers file so N machines collect disjoint shares
//! that together cover it, and `--manifest FILE` writes one JSON line per target.
//! Targets are loopback ports nothing listens on, so every run is fast and offline.

mod support;

use std::collections::BTreeSet;

use serde_json::Value;
use support::{collect, collect_cmd};

#[test]
fn shards_cover_a_servers_file_once_and_manifests_name_every_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let targets: Vec<String> = (1..=9)
        .map(|p| format!("http://127.0.0.1:{p}/mcp"))
        .collect();
    let servers = dir.path().join("servers.txt");
    std::fs::write(&servers, targets.join("\n") + "\n").expect("write");
    let mut seen = BTreeSet::new();
    let n = 3;
    for k in 0..n {
        let manifest = dir.path().join(format!("m{k}.jsonl"));
        let out = collect_cmd(&dir)
            .args(["-q", "--servers-file"])
            .arg(&servers)
            .arg("--shard")
            .arg(format!("{k}/{n}"))
            .arg("--manifest")
            .arg(&manifest)
            .arg("--timeout")
            .arg("2")
            .output()
            .expect("run mcp-collect");
        // Nothing answers: every target of the shard is sealed without a session.
        let code = out.status.code();
        let text = std::fs::read_to_string(&manifest).expect("manifest written");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(
            code,
            Some(if lines.is_empty() { 0 } else { 3 }),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let paths: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(paths.len(), lines.len());
        for l in &lines {
            let t = l["target"].as_str().expect("target").to_string();
            assert!(seen.insert(t.clone()), "{t} in two shards");
            assert_eq!(l["status"], "failed", "{l}");
            assert!(l["revision"].is_null());
            assert!(l["seconds"].as_f64().is_some_and(|s| s >= 0.0));
            let b = l["bundle"].as_str().expect("bundle");
            assert!(paths.iter().any(|p| p == b), "{b}");
            assert!(std::path::Path::new(b).exists());
        }
    }
    let all: BTreeSet<String> = targets.into_iter().collect();
    assert_eq!(seen, all, "the shards together cover the file");
}

#[test]
fn a_bad_shard_is_a_usage_error() {
    let r = collect(&["--shard", "3/3", "http://127.0.0.1:1/mcp"], &[]);
    assert_eq!(r.code(), 2, "{}", r.describe());
    assert!(r.stderr().contains("--shard"), "{}", r.stderr());
    assert!(r.stderr().contains("0 <= K < N"), "{}", r.stderr());
}

/// The manifest passes the redactor like stdout and stderr: a credential the run holds
/// never reaches it, even inside a target as typed.
#[test]
fn the_manifest_is_redacted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = "mcp-secret-token-4f1c2a9e7b3d";
    let target = format!("http://127.0.0.1:1/mcp?key={secret}");
    let manifest = dir.path().join("m.jsonl");
    let out = collect_cmd(&dir)
        .env("FLEET_TOKEN", secret)
        .args([
            "-q",
            "--token-env",
            "FLEET_TOKEN",
            "--timeout",
            "2",
            "--manifest",
        ])
        .arg(&manifest)
        .arg(&target)
        .output()
        .expect("run mcp-collect");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("redacted:sha256:"), "{text}");
    for s in [&out.stdout, &out.stderr] {
        assert!(!String::from_utf8_lossy(s).contains(secret));
    }
}
