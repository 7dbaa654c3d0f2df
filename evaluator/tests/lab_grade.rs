//! Collect every lab server with the real `mcp-collect` and grade the bundles: the
//! verdict each server must get for each implemented check, and why.
//!
//! `mcp-collect` is a binary of another package, so it must be built first
//! (`scripts/test.sh` runs `cargo build --workspace --bins` before the tests). Under
//! `CI` a missing lab or binary fails these tests instead of skipping them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Evidence;
use mcp_probe_evaluator::grade::{implemented, run};
use mcp_probe_evaluator::verdict::{LegOutcome, Outcome, Verdict};

fn lab(var: &str) -> Option<String> {
    if let Ok(v) = std::env::var(var) {
        return Some(v);
    }
    let env_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/run/env");
    if let Ok(text) = std::fs::read_to_string(env_file) {
        if let Some(v) = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{var}=")))
        {
            return Some(v.to_string());
        }
    }
    None
}

fn collector() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let p = target.join("debug/mcp-collect");
    p.is_file().then_some(p)
}

const SERVERS: &[&str] = &[
    "LAB_PY2",
    "LAB_PY2_SL_JSON",
    "LAB_PY2_NODNS",
    "LAB_PY1",
    "LAB_FASTMCP",
    "LAB_FASTMCP_AUTO",
    "LAB_TS2",
    "LAB_TS2_REJECT",
    "LAB_PY2_PAGED",
    "LAB_NOSTORE",
    "LAB_RS",
];

/// One collection run over every lab server, shared by the tests of this file.
fn bundles() -> Option<&'static HashMap<String, Evidence>> {
    static B: OnceLock<Option<HashMap<String, Evidence>>> = OnceLock::new();
    B.get_or_init(|| {
        let urls: Vec<(String, String)> = SERVERS
            .iter()
            .filter_map(|v| lab(v).map(|u| (v.to_string(), u)))
            .collect();
        let bin = collector();
        if urls.len() != SERVERS.len() || bin.is_none() {
            assert!(
                std::env::var_os("CI").is_none(),
                "lab not up or mcp-collect not built (lab/up.sh; cargo build --workspace --bins)"
            );
            eprintln!("skipping: lab not up or mcp-collect not built");
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new(bin.expect("checked"))
            .env("MCP_PROBE_HOME", dir.path().join("home"))
            .arg("-q")
            .arg("-o")
            .arg(dir.path().join("out"))
            .args(urls.iter().map(|(_, u)| u))
            .output()
            .expect("run mcp-collect");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut map = HashMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let bytes = std::fs::read(line).expect("bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("bundle verifies");
            let endpoint = v.evidence.target.as_typed.clone();
            let var = urls
                .iter()
                .find(|(_, u)| *u == endpoint)
                .map(|(v, _)| v.clone())
                .expect("known target");
            map.insert(var, Evidence::new(line, v));
        }
        assert_eq!(map.len(), SERVERS.len());
        Some(map)
    })
    .as_ref()
}

fn grade(var: &str, id: &str) -> Outcome {
    let b = bundles().expect("bundles");
    let check = implemented(id).unwrap_or_else(|| panic!("{id} is not implemented"));
    run(check, &b[var], &Context::default())
}

fn leg(o: &Outcome, id: &str) -> LegOutcome {
    o.legs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.outcome)
        .unwrap_or_else(|| panic!("no leg {id} in {o:?}"))
}

#[test]
fn null_id_7_1_2_per_server() {
    if bundles().is_none() {
        return;
    }
    // py1 speaks only the legacy revisions; inside its session the Python SDK treats a
    // request with "id": null as a notification and answers 202 with an empty body: an
    // acceptance, so FAIL (lab.md §6-§7).
    let o = grade("LAB_PY1", "7.1.2");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(o.evidence.contains("202"), "{}", o.evidence);
    // Every server that negotiated 2026-07-28 refuses it on that path with HTTP 400 and a
    // JSON-RPC -32600 error: py2 and fastmcp "Body must be a single JSON-RPC request…",
    // ts2 "…not a valid JSON-RPC message" (lab.md §5 error ladder). The nginx no-store
    // front proxies py2, so it answers the same.
    for var in [
        "LAB_PY2",
        "LAB_PY2_SL_JSON",
        "LAB_PY2_NODNS",
        "LAB_FASTMCP",
        "LAB_FASTMCP_AUTO",
        "LAB_TS2",
        "LAB_TS2_REJECT",
        "LAB_PY2_PAGED",
        "LAB_NOSTORE",
    ] {
        let o = grade(var, "7.1.2");
        assert_eq!(o.verdict, Verdict::Pass, "{var}: {o:?}");
        assert!(o.evidence.contains("-32600"), "{var}: {}", o.evidence);
    }
}

#[test]
fn cache_directives_10_1_per_server() {
    if bundles().is_none() {
        return;
    }
    // JSON answers on the 2026-07-28 path carry no Cache-Control at all on any SDK, and
    // py1's SSE answers carry only "no-cache, no-transform": neither keeps a per-user
    // response out of shared caches, so 10.1b fails and the check FAILs (lab.md §7).
    for var in [
        "LAB_PY2",
        "LAB_PY2_SL_JSON",
        "LAB_PY1",
        "LAB_FASTMCP",
        "LAB_TS2",
        "LAB_TS2_REJECT",
        "LAB_PY2_PAGED",
    ] {
        let o = grade(var, "10.1");
        assert_eq!(leg(&o, "10.1b"), LegOutcome::Fail, "{var}: {o:?}");
        assert_eq!(o.verdict, Verdict::Fail, "{var}");
    }
    // The nginx front that marks responses no-store passes 10.1b; 10.1a stays unknown
    // without an operator-named static path, so the check is UNKNOWN, not PASS.
    let o = grade("LAB_NOSTORE", "10.1");
    assert_eq!(leg(&o, "10.1b"), LegOutcome::Pass, "{o:?}");
    assert_eq!(o.verdict, Verdict::Unknown);
    // 10.1c: the 2026-07-28 results carry resultType/ttlMs/cacheScope on py2.
    let o = grade("LAB_PY2", "10.1");
    let c = o.legs.iter().find(|l| l.id == "10.1c").expect("10.1c");
    assert!(c.note.contains("cacheScope"), "{}", c.note);
}

#[test]
fn auth_required_server_gets_unknown_not_fail() {
    if bundles().is_none() {
        return;
    }
    // py2-auth answers 401 and the run held no credential: nothing past the challenge
    // was observed, so wire checks are UNKNOWN, never FAIL.
    for id in ["7.1.2", "10.1"] {
        let o = grade("LAB_RS", id);
        assert_eq!(o.verdict, Verdict::Unknown, "{id}: {o:?}");
        assert!(o.evidence.contains("401"), "{}", o.evidence);
    }
}
