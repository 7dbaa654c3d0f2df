//! `mcp-collect --recover FILE.journal`: the journal of a run killed
//! with SIGKILL becomes a verifiable bundle with status `recovered`; a torn journal loses
//! only what follows the tear, and says how many records it dropped.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_probe_collector::journal::Journal;
use mcp_probe_schema::model::{Observation, RunStatus};
use mcp_probe_schema::redact::Redactor;
use serde_json::json;
use support::*;

/// A legacy server that completes the handshake and then never answers `tools/list`.
fn stalling(req: &Req) -> Vec<u8> {
    let id = req.rpc_id();
    match req.rpc_method().as_str() {
        "server/discover" => legacy_only(&id),
        "initialize" => json_response(
            200,
            &[("Mcp-Session-Id", "s-1")],
            &json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-11-25",
                "capabilities":{"tools":{}},"serverInfo":{"name":"staller","version":"1"}}})
            .to_string(),
        ),
        "notifications/initialized" => {
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
        }
        // Hang (the scripted server sleeps on an empty answer).
        "tools/list" => Vec::new(),
        _ => json_response(404, &[], "{}"),
    }
}

fn journals(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".journal"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_journal_left_by_sigkill_recovers_into_a_verifiable_bundle() {
    let srv = serve(Arc::new(stalling));
    let dir = tempfile::tempdir().unwrap();
    let mut c = collect_cmd(&dir);
    c.args(["--timeout", "60", &srv.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    // Wait until the inventory request is in flight (the handshake is journalled).
    let mut stalled = false;
    for _ in 0..200 {
        if srv
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.rpc_method() == "tools/list")
        {
            stalled = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(stalled, "the collector never reached tools/list");
    child.kill().unwrap(); // SIGKILL: nothing is sealed
    let out = child.wait_with_output().unwrap();
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out_dir = dir.path().join("out");
    let js = journals(&out_dir);
    let [journal] = js.as_slice() else {
        panic!("one journal expected: {js:?}")
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(journal).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let mut c = collect_cmd(&dir);
    c.arg("--recover").arg(journal);
    let rec = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&rec.stderr);
    assert_eq!(rec.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&rec.stdout);
    let path = PathBuf::from(stdout.trim());
    assert_eq!(
        path,
        journal.with_extension(""),
        "the run's own bundle name"
    );
    assert!(!journal.exists(), "the journal is removed once sealed");
    let v = open(&path);
    assert_eq!(v.evidence.run.status, RunStatus::Recovered);
    let failure = v.evidence.run.failure.clone().unwrap_or_default();
    assert!(failure.contains("no record dropped"), "{failure}");
    // What the run had established when it was killed: the session and the records.
    let s = v
        .evidence
        .session
        .as_ref()
        .expect("session from the journal");
    assert_eq!(s.revision.as_deref(), Some("2025-11-25"));
    assert_eq!(
        s.server_info.as_ref().and_then(|i| i.get("name")),
        Some(&json!("staller"))
    );
    assert_eq!(
        v.evidence.target.endpoint.as_deref(),
        Some(srv.url.as_str())
    );
    assert!(v
        .evidence
        .target
        .addresses
        .iter()
        .any(|a| a.starts_with("127.0.0.1:")));
    let legs: Vec<&str> = v
        .records
        .iter()
        .flat_map(|r| r.legs.iter().map(String::as_str))
        .collect();
    assert!(legs.contains(&"endpoint.detect"), "{legs:?}");
    assert!(legs.contains(&"session.initialize"), "{legs:?}");
    assert!(legs.contains(&"session.initialized"), "{legs:?}");
    // A second recovery of the same journal finds nothing to do.
    let mut c = collect_cmd(&dir);
    c.arg("--recover").arg(journal);
    assert_eq!(c.output().unwrap().status.code(), Some(2));
}

/// A legacy server that answers 80 pages of `tools/list` at once and then never
/// answers the next one: more records than one sync bound before the run stalls.
fn paging_then_stalling(req: &Req) -> Vec<u8> {
    if req.rpc_method() != "tools/list" {
        return stalling(req);
    }
    let n = req
        .json()
        .pointer("/params/cursor")
        .and_then(|c| c.as_str())
        .and_then(|c| c.parse::<u64>().ok())
        .unwrap_or(0);
    if n >= PAGES_BEFORE_STALL {
        return Vec::new();
    }
    json_response(
        200,
        &[],
        &json!({"jsonrpc":"2.0","id":req.rpc_id(),"result":{
            "tools":[{"name":format!("t{n}"),"inputSchema":{"type":"object"}}],
            "nextCursor": (n + 1).to_string()}})
        .to_string(),
    )
}

const PAGES_BEFORE_STALL: u64 = 80;

#[test]
fn sigkill_mid_run_recovers_every_record_up_to_the_last_sync_and_verifies() {
    let grader = Path::new(env!("CARGO_BIN_EXE_mcp-collect")).with_file_name("mcp-grade");
    assert!(
        grader.exists(),
        "mcp-grade not built (cargo build --workspace --bins)"
    );
    let srv = serve(Arc::new(paging_then_stalling));
    let dir = tempfile::tempdir().unwrap();
    let mut c = collect_cmd(&dir);
    c.args(["--timeout", "60", &srv.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let stalled = |srv: &Scripted| {
        srv.requests.lock().unwrap().iter().any(|r| {
            r.rpc_method() == "tools/list"
                && r.json().pointer("/params/cursor").and_then(|c| c.as_str())
                    == Some(PAGES_BEFORE_STALL.to_string().as_str())
        })
    };
    let mut waited = 0;
    while !stalled(&srv) && waited < 400 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    assert!(
        stalled(&srv),
        "the collector never reached the stalling page"
    );
    // Every page before the stall was answered and journalled; the run now waits on
    // the server. Kill -9: nothing is sealed, no handler runs.
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.stdout.is_empty());
    let js = journals(&dir.path().join("out"));
    let [journal] = js.as_slice() else {
        panic!("one journal expected: {js:?}")
    };

    let mut c = collect_cmd(&dir);
    c.arg("--recover").arg(journal);
    let rec = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&rec.stderr);
    assert_eq!(rec.status.code(), Some(0), "{stderr}");
    let path = PathBuf::from(String::from_utf8_lossy(&rec.stdout).trim());

    // mcp-grade verifies it, pinned to the collector's key (`--public-key`).
    let mut c = collect_cmd(&dir);
    let public = c.arg("--public-key").output().unwrap();
    assert_eq!(public.status.code(), Some(0));
    let trust = dir.path().join("collector.pub");
    std::fs::write(&trust, &public.stdout).unwrap();
    let verify = std::process::Command::new(&grader)
        .env("MCP_PROBE_HOME", dir.path().join("grade-home"))
        .arg("verify")
        .arg("--trust")
        .arg(&trust)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );

    let v = open(&path);
    assert_eq!(v.evidence.run.status, RunStatus::Recovered);
    let failure = v.evidence.run.failure.clone().unwrap_or_default();
    // The 80 pages, the handshake and detection are past the first sync bound (64
    // records): the journal holds a sync mark, and the bundle every record up to it.
    let synced: u64 = failure
        .rsplit_once("the journal's last sync mark covers ")
        .and_then(|(_, n)| n.strip_suffix(" record(s)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no sync mark: {failure}"));
    assert!(synced >= 64, "{failure}");
    assert_eq!(synced % 64, 0, "{failure}");
    assert!(v.records.len() as u64 >= synced, "{failure}");
    assert!(failure.contains("no record dropped"), "{failure}");
    assert!(
        stderr.contains(&format!("the last sync mark covers {synced}")),
        "{stderr}"
    );
    // A SIGKILL loses nothing written (the OS holds it): every answered page is there,
    // the ones after the last sync too.
    let pages = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l == "inventory.tools"))
        .filter(|r| {
            matches!(&r.observation, Observation::Http(x)
            if matches!(&x.outcome, mcp_probe_schema::model::HttpOutcome::Response(_)))
        })
        .count() as u64;
    assert_eq!(pages, PAGES_BEFORE_STALL, "{failure}");
    for (i, r) in v.records.iter().enumerate() {
        assert_eq!(r.seq, i as u64);
    }
}

fn key_file(dir: &Path) -> (PathBuf, mcp_probe_schema::SecretKey) {
    let key = mcp_probe_schema::SecretKey::from_seed([9; 32]);
    let p = dir.join("k.pem");
    std::fs::write(&p, key.to_pem().expect("pem")).expect("key file");
    (p, key)
}

/// A journal with `n` records of about 2 KB each, left unsealed.
fn unsealed(dir: &Path, n: usize) -> PathBuf {
    let ev = mcp_probe_schema::testkit::evidence("https://mcp.example/mcp", Vec::new());
    let mut j =
        Journal::create(dir, "torn", ev.target, ev.run.options, Redactor::new()).expect("journal");
    j.set_failure("still running");
    for i in 0..n {
        let body = json!({"jsonrpc":"2.0","id":i,"result":{"tools":[],"pad":"y".repeat(2000)}});
        let rec = mcp_probe_schema::testkit::http_record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            "https://mcp.example/mcp",
            "{}",
            200,
            body.to_string().as_bytes(),
        );
        j.record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            1,
            1,
            rec.observation,
        );
    }
    let p = j.journal_path().to_path_buf();
    drop(j); // as a killed process would: no seal
    p
}

fn recover(dir: &Path, journal: &Path, key: &Path) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", dir.join("home"))
        .arg("--key")
        .arg(key)
        .arg("--recover")
        .arg(journal)
        .output()
        .expect("mcp-collect --recover ran");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_torn_journal_drops_and_counts_the_records_past_the_tear() {
    let dir = tempfile::tempdir().unwrap();
    let (kp, key) = key_file(dir.path());
    let journal = unsealed(dir.path(), 6);
    // Cut the last record in half (a write torn by power loss).
    let len = std::fs::metadata(&journal).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .unwrap();
    f.set_len(len - 1000).unwrap();
    drop(f);
    let (code, stdout, stderr) = recover(dir.path(), &journal, &kp);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("1 record(s) dropped past a torn or damaged write"),
        "{stderr}"
    );
    let bytes = std::fs::read(&stdout).unwrap();
    let v = mcp_probe_schema::open(&bytes, &[key.public()]).unwrap();
    assert_eq!(v.evidence.run.status, RunStatus::Recovered);
    assert_eq!(v.records.len(), 5);
    let failure = v.evidence.run.failure.clone().unwrap_or_default();
    assert!(failure.starts_with("still running; recovered"), "{failure}");
    assert!(
        failure.contains("5 record(s) kept; 1 record(s) dropped"),
        "{failure}"
    );
    assert!(v
        .records
        .iter()
        .all(|r| matches!(r.observation, Observation::Http(_))));
}

#[test]
fn a_record_that_breaks_the_chain_is_dropped_with_everything_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (kp, key) = key_file(dir.path());
    let journal = unsealed(dir.path(), 6);
    let mut bytes = std::fs::read(&journal).unwrap();
    // Damage the third record: flip a bit in the head of its leg name.
    let needle = b"inventory.tools";
    let at: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 6, "one leg name per record");
    bytes[at[2] - 1] ^= 0x01; // record 2's leg text now claims 14 bytes
    std::fs::write(&journal, &bytes).unwrap();
    let (code, stdout, stderr) = recover(dir.path(), &journal, &kp);
    assert_eq!(code, 0, "{stderr}");
    let v = mcp_probe_schema::open(&std::fs::read(stdout).unwrap(), &[key.public()]).unwrap();
    assert_eq!(v.records.len(), 2);
    assert!(stderr.contains("4 record(s) dropped"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_journal_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (kp, _) = key_file(dir.path());
    let p = dir.path().join("x.mcpev.journal");
    std::fs::write(&p, b"hello").unwrap();
    let (code, stdout, stderr) = recover(dir.path(), &p, &kp);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("not an mcp-collect journal"), "{stderr}");
}
