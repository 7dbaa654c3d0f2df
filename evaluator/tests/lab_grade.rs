//! Collect every lab server with the real `mcp-collect` and grade the bundles: the
//! verdict each server must get for each implemented check, and why.
//!
//! `mcp-collect` is a binary of another package, so it must be built first
//! (`scripts/test.sh` runs `cargo build --workspace --bins` before the tests). A missing
//! lab or binary fails these tests (`support::lab::require`). Checks are named by rule
//! id and their sub-verdicts by local name (`a`, `a@2025-11-25`).

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::{Outcome, SubOutcome, Verdict};
use support::lab::{require, require_collector, sub};
use support::rules;

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
    "LAB_PY2_SLOPPY",
    "LAB_RS",
];

/// The lab servers of [`SERVERS`] but `skip`, in that order.
fn all_but(skip: &[&str]) -> Vec<&'static str> {
    SERVERS
        .iter()
        .copied()
        .filter(|v| !skip.contains(v))
        .collect()
}

/// One collection run over every lab server, shared by the tests of this file.
fn bundles() -> Option<&'static HashMap<String, Bundle>> {
    static B: OnceLock<Option<HashMap<String, Bundle>>> = OnceLock::new();
    B.get_or_init(|| {
        let (got, bin) = support::lab::require(SERVERS)?;
        let urls: Vec<(String, String)> = SERVERS.iter().map(|v| v.to_string()).zip(got).collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new(bin)
            .env("MCP_PROBE_HOME", dir.path().join("home"))
            .arg("-q")
            .arg("-o")
            .arg(dir.path().join("out"))
            .args(urls.iter().map(|(_, u)| u))
            .output()
            .expect("run mcp-collect");
        // LAB_RS wants a credential and none is given: every target is sealed, and exit
        // 3 names the one reached without an MCP session, and only it.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        let rs = &urls.iter().find(|(v, _)| v == "LAB_RS").expect("LAB_RS").1;
        let summary = stderr
            .lines()
            .find(|l| l.contains("sealed without an MCP session (exit 3)"))
            .unwrap_or_else(|| panic!("no exit-3 summary: {stderr}"));
        assert!(
            summary.contains(&format!("1 of {} target(s)", urls.len()))
                && summary.contains(rs.as_str()),
            "{summary}"
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
            map.insert(var, Bundle::new(line, v));
        }
        assert_eq!(map.len(), SERVERS.len());
        Some(map)
    })
    .as_ref()
}

/// Rule `rule` on the negotiated era of the bundle of `var`, sub-verdicts by local name.
fn grade(var: &str, rule: &str) -> Outcome {
    let b = bundles().expect("bundles");
    rules::run(rule, &b[var], &Context::default())
}

/// Rule `rule` graded on every era the bundle of `var` probed (what `mcp-grade`
/// reports), sub-verdicts by local name (`a@2025-11-25`).
fn grade_every_era(var: &str, rule: &str) -> Outcome {
    let b = bundles().expect("bundles");
    rules::graded(&b[var], rule)
}

#[test]
fn every_era_a_server_serves_is_probed_and_graded() {
    if bundles().is_none() {
        return;
    }
    let b = bundles().expect("bundles");
    let eras = |var: &str| -> Vec<String> {
        b[var]
            .session()
            .map(|s| s.other_eras.iter().map(|o| o.revision.clone()).collect())
            .unwrap_or_default()
    };
    // The Python SDK servers speak 2026-07-28 and still answer initialize: on their
    // 2026-07-28 path "id": null is refused (400, -32600), on the legacy session the
    // same request is taken for a notification (202). Graded on both eras, the legacy
    // one decides: FAIL, each leg named with its era.
    for var in ["LAB_PY2", "LAB_PY2_SL_JSON", "LAB_FASTMCP", "LAB_PY2_PAGED"] {
        assert_eq!(eras(var), ["2025-11-25"], "{var}");
        let o = grade_every_era(var, "null-id-rejected");
        assert_eq!(o.verdict, Verdict::Fail, "{var}: {o:?}");
        assert_eq!(sub(&o, "a@2026-07-28"), SubOutcome::Pass, "{var}");
        assert_eq!(sub(&o, "a@2025-11-25"), SubOutcome::Fail, "{var}");
        assert!(o.evidence.contains("on 2025-11-25: FAIL"), "{}", o.evidence);
        // The negotiated era alone passes: without the second era the finding is lost.
        assert_eq!(
            grade(var, "null-id-rejected").verdict,
            Verdict::Pass,
            "{var}"
        );
    }
    // ts2 refuses "id": null on both of its eras.
    assert_eq!(eras("LAB_TS2"), ["2025-11-25"]);
    let o = grade_every_era("LAB_TS2", "null-id-rejected");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(sub(&o, "a@2025-11-25"), SubOutcome::Pass);
    // ts2-reject serves 2026-07-28 only: its refused initialize is recorded and nothing
    // else is probed; py1 negotiated a legacy revision, so there is no other era.
    for var in ["LAB_TS2_REJECT", "LAB_PY1"] {
        assert!(eras(var).is_empty(), "{var}");
        let o = grade_every_era(var, "null-id-rejected");
        assert!(o.subs.iter().all(|l| !l.id.contains('@')), "{var}: {o:?}");
    }
    assert!(b["LAB_TS2_REJECT"].has_leg(mcp_probe_schema::vocab::leg::ERA_INITIALIZE));
    assert!(!b["LAB_PY1"].has_leg(mcp_probe_schema::vocab::leg::ERA_INITIALIZE));
    // `origin-validated` on both eras: fastmcp without its protection accepts a hostile Origin on each;
    // with it (auto) it refuses on each.
    let o = grade_every_era("LAB_FASTMCP", "origin-validated");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(o.evidence.contains("on 2025-11-25: FAIL"), "{}", o.evidence);
    let o = grade_every_era("LAB_FASTMCP_AUTO", "origin-validated");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert!(o.evidence.contains("on 2025-11-25: PASS"), "{}", o.evidence);
}

#[test]
fn null_id_rejected_per_server() {
    if bundles().is_none() {
        return;
    }
    // py1 speaks only the legacy revisions; inside its session the Python SDK treats a
    // request with "id": null as a notification and answers 202 with an empty body: an
    // acceptance, so FAIL.
    let o = grade("LAB_PY1", "null-id-rejected");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(o.evidence.contains("202"), "{}", o.evidence);
    // Every server that negotiated 2026-07-28 refuses it on that path with HTTP 400 and a
    // JSON-RPC -32600 error: py2 and fastmcp "Body must be a single JSON-RPC request…",
    // ts2 "…not a valid JSON-RPC message" (its error ladder). The nginx no-store
    // front proxies py2, so it answers the same.
    for var in all_but(&["LAB_PY1", "LAB_PY2_SLOPPY", "LAB_RS"]) {
        let o = grade(var, "null-id-rejected");
        assert_eq!(o.verdict, Verdict::Pass, "{var}: {o:?}");
        assert!(o.evidence.contains("-32600"), "{var}: {}", o.evidence);
    }
}

#[test]
fn cache_freshness_per_server() {
    if bundles().is_none() {
        return;
    }
    // JSON answers on the 2026-07-28 path carry no Cache-Control at all on any SDK, and
    // py1's SSE answers carry only "no-cache, no-transform": neither keeps a per-user
    // response out of shared caches, so sub-verdict b fails and the check FAILs.
    for var in all_but(&[
        "LAB_PY2_NODNS",
        "LAB_FASTMCP_AUTO",
        "LAB_NOSTORE",
        "LAB_PY2_SLOPPY",
        "LAB_RS",
    ]) {
        let o = grade(var, "cache-freshness");
        assert_eq!(sub(&o, "b"), SubOutcome::Fail, "{var}: {o:?}");
        assert_eq!(o.verdict, Verdict::Fail, "{var}");
    }
    // The nginx front that marks responses no-store passes sub-verdict b; sub-verdict a stays unknown
    // without an operator-named static path, so the check is UNKNOWN, not PASS.
    let o = grade("LAB_NOSTORE", "cache-freshness");
    assert_eq!(sub(&o, "b"), SubOutcome::Pass, "{o:?}");
    assert_eq!(o.verdict, Verdict::Unknown);
    // 10.1c: the 2026-07-28 results carry resultType/ttlMs/cacheScope on py2.
    let o = grade("LAB_PY2", "cache-freshness");
    let c = o.subs.iter().find(|l| l.id == "c").expect("c");
    assert!(c.note.contains("cacheScope"), "{}", c.note);
}

#[test]
fn declarations_validated_per_server() {
    if bundles().is_none() {
        return;
    }
    // The Python SDKs generate an inputSchema and an outputSchema for every typed tool,
    // without $schema (so 2020-12), and both compile; their template greeting://{name}
    // declares mimeType text/plain; the prompt review's argument code has required: true.
    for var in all_but(&[
        "LAB_TS2",
        "LAB_TS2_REJECT",
        "LAB_PY2_PAGED",
        "LAB_PY2_SLOPPY",
        "LAB_RS",
    ]) {
        // The declaration sub-verdicts a and b; the live legs (`tool-schemas-validated` d without
        // the operator's input, `resource-templates-typed` c on a generative template,
        // `prompt-arguments-validated` c and d) are asserted in lab_s5.rs.
        for (id, legs) in [
            ("tool-schemas-validated", ["a", "b"]),
            ("resource-templates-typed", ["a", "b"]),
            ("prompt-arguments-validated", ["a", "b"]),
        ] {
            let o = grade(var, id);
            for l in legs {
                assert_eq!(sub(&o, l), SubOutcome::Pass, "{var} {l}: {o:?}");
            }
        }
    }
    // ts2 (zod) and the low-level py2-paged declare no outputSchema: sub-verdict b compiled
    // nothing, so it cannot pass, and `tool-schemas-validated` is UNKNOWN; their inputSchemas compile.
    for var in ["LAB_TS2", "LAB_TS2_REJECT", "LAB_PY2_PAGED"] {
        let o = grade(var, "tool-schemas-validated");
        assert_eq!(o.verdict, Verdict::Unknown, "{var}: {o:?}");
        assert_eq!(sub(&o, "a"), SubOutcome::Pass, "{var}");
        assert_eq!(sub(&o, "b"), SubOutcome::Unknown, "{var}");
        for l in ["a", "b"] {
            assert_eq!(
                sub(&grade(var, "resource-templates-typed"), l),
                SubOutcome::Pass,
                "{var} {l}"
            );
        }
        for l in ["a", "b"] {
            assert_eq!(
                sub(&grade(var, "prompt-arguments-validated"), l),
                SubOutcome::Pass,
                "{var} {l}"
            );
        }
    }
    // py2-paged's 23 tools sit on 5 pages: every page was read.
    assert!(
        grade("LAB_PY2_PAGED", "tool-schemas-validated")
            .evidence
            .contains("23"),
        "all pages read"
    );
    // py2-sloppy declares what the SDK lets through and the benchmark forbids.
    let o = grade("LAB_PY2_SLOPPY", "tool-schemas-validated");
    assert_eq!(
        (o.verdict, sub(&o, "a")),
        (Verdict::Fail, SubOutcome::Fail),
        "{o:?}"
    );
    assert!(o.evidence.contains("broken_schema"), "{}", o.evidence);
    let o = grade("LAB_PY2_SLOPPY", "resource-templates-typed");
    assert_eq!(
        (o.verdict, sub(&o, "b")),
        (Verdict::Fail, SubOutcome::Fail),
        "{o:?}"
    );
    assert!(o.evidence.contains("blob"), "{}", o.evidence);
    let o = grade("LAB_PY2_SLOPPY", "prompt-arguments-validated");
    assert_eq!(
        (o.verdict, sub(&o, "a")),
        (Verdict::Fail, SubOutcome::Fail),
        "{o:?}"
    );
}

#[test]
fn reported_only_checks_are_na_everywhere_with_observations() {
    if bundles().is_none() {
        return;
    }
    let reported = [
        "stdio-preferred",
        "stdio-credentials",
        "per-tool-authorization",
        "annotations-not-authorization",
        "no-shared-downstream-identity",
        "list-changed-rate-limited",
        "session-not-authentication",
        "stdio-logs-separated",
        "tasks-authorized",
        "idempotency-keys",
        "lifecycle-metadata-recorded",
        "audit-clock-synchronised",
    ];
    for var in SERVERS {
        for id in reported {
            let o = grade(var, id);
            assert_eq!(o.verdict, Verdict::NotApplicable, "{var} {id}: {o:?}");
            assert!(
                !o.evidence.is_empty() && !o.reduction.is_empty(),
                "{var} {id}"
            );
        }
    }
    // `per-tool-authorization` counts the tools listed across pages;
    // `lifecycle-metadata-recorded` sees per-result serverInfo on the
    // 2026-07-28 path and none on py1's legacy session.
    assert!(
        grade("LAB_PY2_PAGED", "per-tool-authorization")
            .evidence
            .contains("23 tools"),
        "{}",
        grade("LAB_PY2_PAGED", "per-tool-authorization").evidence
    );
    assert!(grade("LAB_PY2", "lifecycle-metadata-recorded")
        .evidence
        .contains("every result names its server"));
    assert!(
        grade("LAB_PY1", "lifecycle-metadata-recorded")
            .evidence
            .contains("no result names"),
        "{}",
        grade("LAB_PY1", "lifecycle-metadata-recorded").evidence
    );
}

#[test]
fn auth_required_server_gets_unknown_not_fail() {
    if bundles().is_none() {
        return;
    }
    // py2-auth answers 401 and the run held no credential: nothing past the challenge
    // was observed, so wire checks are UNKNOWN, never FAIL.
    for id in ["null-id-rejected", "cache-freshness"] {
        let o = grade("LAB_RS", id);
        assert_eq!(o.verdict, Verdict::Unknown, "{id}: {o:?}");
        assert!(o.evidence.contains("401"), "{}", o.evidence);
    }
}

/// A py2 lab server started by this test (so its identity can change between runs on
/// the same endpoint), killed on drop.
struct Py2 {
    child: std::process::Child,
}

impl Drop for Py2 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_py2(port: u16, version: &str) -> Option<Py2> {
    let lab_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab");
    let python = support::lab::require_installed("lab/.venv-mcp2/bin/python")?;
    let log = std::fs::File::create(std::env::temp_dir().join(format!("py2-{port}.log"))).ok()?;
    let child = Command::new(python)
        .current_dir(lab_dir.join("py2"))
        .arg("server.py")
        .arg(port.to_string())
        .arg(format!("--version={version}"))
        .stdout(log.try_clone().ok()?)
        .stderr(log)
        .spawn()
        .expect("start py2");
    let server = Py2 { child };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "py2 did not come up on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Some(server)
}

fn collect_one(url: &str, home: &Path) -> Bundle {
    collect_with(url, home, &[], &[])
}

fn collect_with(url: &str, home: &Path, args: &[&str], envs: &[(&str, &str)]) -> Bundle {
    let out = Command::new(require_collector().expect("mcp-collect built"))
        .env("MCP_PROBE_HOME", home)
        .envs(envs.iter().copied())
        .args(["-q", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(url)
        .output()
        .expect("run mcp-collect");
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let v = mcp_probe_schema::open(&std::fs::read(&path).expect("bundle"), &[]).expect("verifies");
    // Exit 0 when an MCP session was reached, 3 when the target was sealed without one
    // (a refused certificate, a credential needed and not given).
    let reached = v
        .evidence
        .session
        .as_ref()
        .is_some_and(|s| s.revision.is_some());
    assert_eq!(
        out.status.code(),
        Some(if reached { 0 } else { 3 }),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Bundle::new(path, v)
}

#[test]
fn identity_against_baselines_of_a_real_server() {
    if require_collector().is_none() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let home = tempfile::tempdir().expect("tempdir");
    let check = "identity-matches-baseline";
    let (first, second) = {
        let Some(_server) = start_py2(port, "1.0.0") else {
            return;
        };
        (
            collect_one(&url, home.path()),
            collect_one(&url, home.path()),
        )
    };
    // Without a baseline nothing is compared: UNKNOWN, never PASS.
    let o = rules::run(check, &first, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    // The same server run again against the first run: same identity, PASS.
    let o = rules::run(
        check,
        &second,
        &Context {
            baseline: Some(&first),
            updating_baseline: false,
            ..Context::default()
        },
    );
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    // A run that records the baseline compares nothing: UNKNOWN.
    let o = rules::run(
        check,
        &second,
        &Context {
            baseline: None,
            updating_baseline: true,
            ..Context::default()
        },
    );
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    // The same endpoint now serves another version: the identity drifted, FAIL naming
    // both pairs.
    let drifted = {
        let Some(_server) = start_py2(port, "2.0.0") else {
            return;
        };
        collect_one(&url, home.path())
    };
    let o = rules::run(
        check,
        &drifted,
        &Context {
            baseline: Some(&first),
            updating_baseline: false,
            ..Context::default()
        },
    );
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(
        o.evidence.contains("py-sdk-probe-target|1.0.0")
            && o.evidence.contains("py-sdk-probe-target|2.0.0"),
        "{}",
        o.evidence
    );
}

fn ready() -> bool {
    bundles().is_some() && require_collector().is_some()
}

#[test]
fn origin_validated_per_server() {
    if !ready() {
        return;
    }
    // The Python SDKs on loopback validate Origin (403 "Invalid Origin header"), ts2 with
    // its guards answers 403 JSON, fastmcp with protection on 403 "Forbidden Origin";
    // the own origin is accepted, so the refusal is an Origin decision: PASS.
    for var in [
        "LAB_PY2",
        "LAB_PY2_SL_JSON",
        "LAB_PY1",
        "LAB_FASTMCP_AUTO",
        "LAB_TS2_REJECT",
        "LAB_NOSTORE",
    ] {
        let o = grade(var, "origin-validated");
        assert_eq!(o.verdict, Verdict::Pass, "{var}: {o:?}");
    }
    // fastmcp defaults, ts2 without guards and py2 with DNS-rebinding protection off
    // answer the hostile Origin like any other: FAIL.
    for var in ["LAB_FASTMCP", "LAB_TS2", "LAB_PY2_NODNS"] {
        let o = grade(var, "origin-validated");
        assert_eq!(o.verdict, Verdict::Fail, "{var}: {o:?}");
        assert!(
            o.evidence.contains("cis-rebinding-probe.example"),
            "{var}: {}",
            o.evidence
        );
    }
}

#[test]
fn auth_before_stream_per_server() {
    if !ready() {
        return;
    }
    // No lab MCP server but py2-auth asks for credentials: detection reached a response
    // without one, so an unauthenticated request reaches a response: FAIL.
    for var in ["LAB_PY2", "LAB_PY1", "LAB_TS2", "LAB_FASTMCP"] {
        assert_eq!(
            grade(var, "auth-before-stream").verdict,
            Verdict::Fail,
            "{var}"
        );
    }
    // py2-auth without a credential: nothing past the challenge: UNKNOWN.
    assert_eq!(
        grade("LAB_RS", "auth-before-stream").verdict,
        Verdict::Unknown
    );
    // With a real token from the lab AS (lab/oidc/flow.sh: DCR, PKCE, login, consent),
    // the pair is sent: 401 with a challenge without the token, 200 with it; the answer
    // is JSON, not an event stream, so the streamed-response assertion is not exercised:
    // UNKNOWN, and the token never reaches the bundle.
    let Some((v, _)) = require(&["LAB_AS", "LAB_RS"]) else {
        return;
    };
    let (as_url, rs) = (v[0].clone(), v[1].clone());
    let flow = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/oidc/flow.sh");
    let out = Command::new("bash")
        .arg(flow)
        .env("AS", &as_url)
        .env("RES", &rs)
        .output()
        .expect("flow.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(token.len() > 100, "a JWT access token");
    let home = tempfile::tempdir().expect("tempdir");
    let ev = collect_with(
        &rs,
        home.path(),
        &["--token-env", "LAB_TOKEN"],
        &[("LAB_TOKEN", &token)],
    );
    let bytes = std::fs::read(&ev.path).expect("bundle");
    assert!(
        !String::from_utf8_lossy(&bytes).contains(&token),
        "the token leaked into the bundle"
    );
    assert!(
        ev.session().is_some_and(|s| s.auth_required),
        "learned from the unauthenticated leg"
    );
    let o = rules::run("auth-before-stream", &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(o.evidence.contains("401"), "{}", o.evidence);
    // py2-auth is dual-era (mcp 2.3.0 MCPServer: 2026-07-28 and a legacy initialize
    // session). Graded on every era, as mcp-grade reports it: the 2026-07-28 answer is
    // JSON, so `auth-before-stream`'s subject (a response stream) did not arise there and that era is not
    // applicable; the legacy session refuses without the token (401) and streams the
    // answer with it: PASS (an era whose subject did not arise does not count: the worst era no longer
    // decides).
    let others: Vec<&str> = ev
        .session()
        .map(|s| s.other_eras.iter().map(|e| e.revision.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        others,
        ["2025-11-25"],
        "py2-auth serves a legacy session too"
    );
    let o = mcp_probe_evaluator::fixture::graded(&ev, "auth-before-stream");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert!(
        o.evidence.starts_with(
            "on 2026-07-28: not applicable there (the answer it judges was not offered"
        ),
        "{}",
        o.evidence
    );
    assert!(
        o.evidence.contains("| on 2025-11-25: PASS")
            && o.evidence.contains("accepted as an event stream"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["eras"][0]["applicable"], false, "{o:?}");
    assert_eq!(o.details["eras"][1]["verdict"], "PASS", "{o:?}");
}

#[test]
fn size_limits_per_server() {
    if !ready() {
        return;
    }
    // 1 MiB + 1 is accepted below the SDKs' 4 MiB default: no limit at or below that
    // size, which is not "no limit": UNKNOWN.
    for var in ["LAB_PY2", "LAB_PY1", "LAB_TS2"] {
        let o = grade(var, "size-limits");
        assert_eq!(o.verdict, Verdict::Unknown, "{var}: {o:?}");
    }
    let Some((v, _)) = require(&["LAB_PY2", "LAB_TS2"]) else {
        return;
    };
    let (py2, ts2) = (v[0].clone(), v[1].clone());
    let home = tempfile::tempdir().expect("tempdir");
    let inputs = home.path().join("inputs.json");
    std::fs::write(
        &inputs,
        serde_json::json!({
            py2.clone(): {"max_request_bytes": 5_000_000, "oversize_authorised": true},
            ts2.clone(): {"max_request_bytes": 2_000_000, "oversize_authorised": true},
        })
        .to_string(),
    )
    .expect("inputs");
    let inputs = inputs.to_string_lossy().to_string();
    // The operator states 5,000,000 bytes; the server's own limit (4 MiB) is below it
    // and it answers 413: PASS.
    let ev = collect_with(&py2, home.path(), &["--inputs", &inputs], &[]);
    let o = rules::run("size-limits", &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert!(o.evidence.contains("413"), "{}", o.evidence);
    // The operator states 2,000,000 bytes but the server accepts 2,000,001: FAIL.
    let ev = collect_with(&ts2, home.path(), &["--inputs", &inputs], &[]);
    let o = rules::run("size-limits", &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
}

fn port_of(hostport: &str) -> String {
    hostport.rsplit(':').next().unwrap_or_default().to_string()
}

#[test]
fn tls_required_per_front() {
    if !ready() {
        return;
    }
    let vars = [
        "LAB_TLS_CA",
        "LAB_TLS_MODERN",
        "LAB_TLS_LEGACY",
        "LAB_TLS_EXPIRED",
        "LAB_TLS_SELFSIGNED",
        "LAB_TLS_WRONGNAME",
        "LAB_TLS_13ONLY",
        "LAB_PLAIN_200",
        "LAB_PLAIN_301",
    ];
    let Some((v, _)) = require(&vars) else {
        return;
    };
    let (ca, modern, legacy, expired, selfsigned, wrongname, only13, plain200, plain301) = (
        &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
    );
    let home = tempfile::tempdir().expect("tempdir");
    let check = "tls-required";
    let grade_front = |hostport: &str, plain_port: &str| {
        let url = format!("https://{hostport}/mcp");
        let ev = collect_with(
            &url,
            home.path(),
            &["--ca-file", ca, "--plaintext-port", plain_port],
            &[],
        );
        (rules::run(check, &ev, &Context::default()), ev)
    };
    // The modern front (TLS 1.2/1.3, valid chain from the operator's CA) with its
    // plaintext door redirecting to https: PASS.
    let (o, ev) = grade_front(modern, &port_of(plain301));
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(
        ev.revision(),
        Some("2026-07-28"),
        "MCP really ran over the front"
    );
    // The same front with a plaintext door that serves 200: FAIL.
    let (o, _) = grade_front(modern, &port_of(plain200));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(o.evidence.contains("plaintext"), "{}", o.evidence);
    // A closed plaintext port (refused) is as good as a redirect; TLS 1.3 only: PASS.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let (o, _) = grade_front(only13, &closed.to_string());
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    // Accepts TLS 1.0 and 1.1 (a ServerHello at the offered version): FAIL.
    let (o, _) = grade_front(legacy, &closed.to_string());
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(
        o.subs
            .iter()
            .any(|l| l.id == "b" && l.outcome == SubOutcome::Fail),
        "{o:?}"
    );
    // Expired, self-signed and wrong-name certificates: FAIL from the recorded chain,
    // re-validated offline at the collection time, not from a failed connection.
    for (front, word) in [
        (expired, "expired"),
        (selfsigned, "self-signed"),
        (wrongname, "wrong name"),
    ] {
        let (o, _) = grade_front(front, &closed.to_string());
        assert_eq!(o.verdict, Verdict::Fail, "{front}: {o:?}");
        assert!(o.evidence.contains(word), "{front}: {}", o.evidence);
    }
    // MCP over plain http: FAIL whatever else.
    let ev = collect_with(&format!("http://{plain200}/mcp"), home.path(), &[], &[]);
    assert_eq!(
        rules::run(check, &ev, &Context::default()).verdict,
        Verdict::Fail
    );
}

#[test]
fn revisions_pinned_metadata_headers_legacy_session_disabled() {
    if bundles().is_none() {
        return;
    }
    // `revisions-pinned` sub-verdict a: every SDK but ts2 with legacy:'reject' still echoes 2024-11-05 and
    // 2025-03-26 to an initialize, below the 2025-06-18 floor: FAIL.
    for var in [
        "LAB_PY2",
        "LAB_PY2_SL_JSON",
        "LAB_PY1",
        "LAB_FASTMCP",
        "LAB_TS2",
        "LAB_PY2_PAGED",
    ] {
        let o = grade(var, "revisions-pinned");
        assert_eq!(o.verdict, Verdict::Fail, "{var}: {o:?}");
        assert_eq!(sub(&o, "a"), SubOutcome::Fail, "{var}");
        assert!(o.evidence.contains("2024-11-05"), "{var}: {}", o.evidence);
    }
    // ts2-reject serves only 2026-07-28 and refuses every malformed assertion with the
    // code the spec names (-32022, -32020, -32602, -32020 at 400): PASS.
    let o = grade("LAB_TS2_REJECT", "revisions-pinned");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    // py1 negotiated 2025-11-25: the header/_meta sub-verdicts d and e need 2026-07-28 and are
    // excluded; its legacy session serves a tools/list without a version header (sub-verdict c).
    let o = grade("LAB_PY1", "revisions-pinned");
    assert_eq!(sub(&o, "d"), SubOutcome::REVISION_UNSUPPORTED, "{o:?}");
    assert_eq!(sub(&o, "c"), SubOutcome::Fail, "{o:?}");
    // `metadata-headers` and `legacy-session-disabled` exist only in 2026-07-28: NO-REV on py1, which does not speak it.
    for id in ["metadata-headers", "legacy-session-disabled"] {
        let o = grade("LAB_PY1", id);
        assert_eq!(o.verdict, Verdict::NoRev, "{id}: {o:?}");
    }
    // Every 2026-07-28 server refuses a missing or disagreeing routing header with 400
    // and -32020 (the Base64 form decoded first), answers GET and DELETE with 405, and
    // neither mints nor echoes a session id: PASS.
    for var in [
        "LAB_PY2",
        "LAB_PY2_SL_JSON",
        "LAB_FASTMCP",
        "LAB_TS2",
        "LAB_TS2_REJECT",
        "LAB_PY2_PAGED",
    ] {
        for id in ["metadata-headers", "legacy-session-disabled"] {
            let o = grade(var, id);
            assert_eq!(o.verdict, Verdict::Pass, "{var} {id}: {o:?}");
        }
    }
}

#[test]
fn origin_validated_under_the_policy_allowlist() {
    if bundles().is_none() {
        return;
    }
    let b = bundles().expect("bundles");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("policy.toml");
    std::fs::write(
        &file,
        "[all]\nallowed_origins = [\"https://app.example\"]\n",
    )
    .expect("write");
    let policy = mcp_probe_evaluator::policy::Policy::load(&file).expect("policy");
    let with = |var: &str| {
        let ev = &b[var];
        let applied = policy.applied(&ev.endpoint());
        let cx = Context {
            policy: Some(&applied),
            ..Context::default()
        };
        rules::run("origin-validated", ev, &cx)
    };
    // py2 refuses a hostile Origin and accepts its own: PASS with the own origin standing
    // in for the allowlist. Under a policy that allows only https://app.example, the own
    // origin it accepted is outside the allowlist: FAIL, naming the key and the file.
    assert_eq!(grade("LAB_PY2", "origin-validated").verdict, Verdict::Pass);
    let o = with("LAB_PY2");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(
        o.evidence
            .contains("not among the policy's allowed_origins")
            && o.evidence.contains("policy.toml"),
        "{}",
        o.evidence
    );
}
