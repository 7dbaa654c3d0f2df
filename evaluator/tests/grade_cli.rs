//! The grading command (`mcp-grade [OPTIONS] BUNDLE...`) run as the real binary, each
//! test in its own temporary directory with its own `MCP_PROBE_HOME`.
//!
//! Checks land one by one in other changes, so these tests never assume which checks a
//! build grades or what verdict a check gives: exit codes are asserted against the
//! verdicts the same run reports (FAIL → 1, else ERROR → 4, else 0), and bundles are
//! built with the schema's test kit where a verdict must be forced by the runner itself
//! (a bundle without a session gets ERROR on every check that needs one).
//!
//! Snapshots (`tests/snapshots/`, insta) are kept independent of which checks are
//! implemented, so landing a check never breaks them: the binary's reports of two
//! example bundles are snapshotted for everything but the per-check verdicts (the text
//! report's header and server blocks; the JSON report with each check reduced to its
//! catalogue metadata), and the complete per-check layout is snapshotted from a report
//! built from fixed, hand-made outcomes through the library renderers.

mod support;

use support::grade_run;

use std::path::{Path, PathBuf};

use grade_run::{mcp_grade, Run};
use mcp_probe_evaluator::benchmark::id_key;
use mcp_probe_evaluator::benchmark::CheckResult;
use mcp_probe_evaluator::report::{self, BaselineInfo, BaselineMode, Report, Server};
use mcp_probe_evaluator::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};
use mcp_probe_schema::bundle::sha256;
use mcp_probe_schema::model::RunStatus;
use mcp_probe_schema::testkit::{evidence, http_record, test_key};
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::{open, seal};
use serde_json::Value;

const URL: &str = "https://127.0.0.1:8443/mcp";
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");

/// A temporary working directory with its own state directory.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        Lab {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn home(&self) -> PathBuf {
        self.path().join("home")
    }

    fn grade<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        mcp_grade(self.path(), Some(&self.home()), args)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> String {
        std::fs::write(self.path().join(name), bytes).expect("write");
        name.to_string()
    }

    /// Copy an example bundle here under its own name.
    fn example(&self, name: &str) -> String {
        let bytes = std::fs::read(Path::new(EXAMPLES).join(name)).expect("example exists");
        self.write(name, &bytes)
    }

    fn examples(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(EXAMPLES)
            .expect("examples/")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".mcpev"))
            .collect();
        names.sort();
        assert!(names.len() >= 2, "examples/ has bundles");
        names.iter().map(|n| self.example(n)).collect()
    }
}

fn json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {r:?}"))
}

fn totals(v: &Value, verdict: &str) -> u64 {
    v["totals"][verdict].as_u64().expect("totals count")
}

/// The exit code the report's verdicts call for (evaluator/src/exit.rs).
fn expected_code(v: &Value) -> i32 {
    if totals(v, "FAIL") > 0 {
        1
    } else if totals(v, "ERROR") > 0 {
        4
    } else {
        0
    }
}

/// A plain 2025-11-25 session with one tools/list page.
fn session_bundle(url: &str) -> mcp_probe_schema::model::Evidence {
    let page = http_record(
        &[leg::INVENTORY_TOOLS],
        url,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        200,
        br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#,
    );
    let mut ev = evidence(url, vec![page]);
    if let Some(s) = ev.session.as_mut() {
        s.endpoint = url.into();
    }
    ev
}

/// An endpoint answered, but no MCP session was negotiated and no credential was wanted:
/// the runner gives ERROR to every check that needs a session.
fn no_session_bundle() -> Vec<u8> {
    let mut ev = evidence(URL, Vec::new());
    if let Some(s) = ev.session.as_mut() {
        s.revision = None;
        s.era = None;
        s.server_info = None;
        s.capabilities = None;
        s.negotiated_in = None;
    }
    ev.run.failure = Some("the endpoint answered neither server/discover nor initialize".into());
    seal(&ev, &test_key(3))
}

fn check_ids(v: &Value) -> Vec<String> {
    v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn json_report_of_the_examples_has_every_documented_field() {
    let lab = Lab::new();
    let names = lab.examples();
    let mut args = vec!["--format".to_string(), "json".into()];
    args.extend(names.iter().cloned());
    let r = lab.grade(&args);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    assert_eq!(v["schema"], "mcp-grade-report/1");
    assert_eq!(v["benchmark"]["name"], "CIS MCP Server Benchmark");
    assert_eq!(v["benchmark"]["version"], "1.0.0");
    assert_eq!(v["grader_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["level"], Value::Null);
    assert_eq!(v["graded"]["total"], 36);
    assert_eq!(v["graded"]["in_scope"], 36);

    let servers = v["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), names.len());
    for (i, s) in servers.iter().enumerate() {
        assert_eq!(s["index"], i);
        for key in [
            "endpoint",
            "target",
            "run_status",
            "bundle_id",
            "bundle",
            "signer",
            "collector",
            "collected_at",
        ] {
            assert!(s[key].is_string(), "servers[{i}].{key}: {s}");
        }
        for key in [
            "negotiated_revision",
            "server_info",
            "auth_required",
            "authenticated",
            "failure",
            "baseline",
        ] {
            assert!(s.get(key).is_some(), "servers[{i}] lacks {key}");
        }
        assert!(names.contains(&s["bundle"].as_str().expect("bundle").to_string()));
        assert_eq!(s["bundle_id"].as_str().expect("id").len(), 32);
        assert_eq!(s["signer"].as_str().expect("signer").len(), 32);
        assert!(s["collected_at"].as_str().expect("time").ends_with('Z'));
    }
    let auth = servers
        .iter()
        .find(|s| s["bundle"] == "py2-auth.mcpev")
        .expect("py2-auth");
    assert_eq!(auth["negotiated_revision"], Value::Null);
    assert_eq!(auth["auth_required"], true);
    let py1 = servers
        .iter()
        .find(|s| s["bundle"] == "py1.mcpev")
        .expect("py1");
    assert_eq!(py1["negotiated_revision"], "2025-11-25");
    assert!(py1["server_info"]["name"].is_string());

    let checks = v["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 36);
    let mut graded = 0;
    let mut total_by_verdict = std::collections::BTreeMap::<String, u64>::new();
    for c in checks {
        let id = c["id"].as_str().expect("id");
        let entry = mcp_probe_evaluator::benchmark::Benchmark::builtin()
            .checks
            .iter()
            .find(|e| e.id == id)
            .expect("catalogue id");
        assert_eq!(c["level"], entry.level.number());
        assert_eq!(c["title"], entry.title);
        assert_eq!(c["section"], entry.section());
        assert!(
            ["wire", "in part", "reported only"].contains(&c["source"].as_str().expect("source"))
        );
        let summary = c["summary"].as_object().expect("summary");
        assert_eq!(
            summary.keys().collect::<Vec<_>>(),
            ["PASS", "FAIL", "NO-REV", "UNKNOWN", "N/A", "ERROR"]
        );
        let results = c["results"].as_array().expect("results");
        if c["graded"] == true {
            graded += 1;
            assert_eq!(results.len(), servers.len(), "{id}");
            let n: u64 = summary.values().map(|n| n.as_u64().expect("n")).sum();
            assert_eq!(n, servers.len() as u64, "{id} summary");
            for (i, res) in results.iter().enumerate() {
                assert_eq!(res["server"], i);
                assert_eq!(res["endpoint"], servers[i]["endpoint"]);
                let verdict = res["verdict"].as_str().expect("verdict");
                assert!(summary.contains_key(verdict), "{verdict}");
                *total_by_verdict.entry(verdict.to_string()).or_default() += 1;
                assert!(res["evidence"].is_string());
                assert!(res["reduction"].is_string());
                assert!(res["legs"].is_object());
                assert!(res["records"].is_array());
                assert!(res["details"].is_object());
                for word in res["legs"].as_object().expect("legs").values() {
                    assert!(
                        [
                            "pass",
                            "fail",
                            "unknown",
                            "error",
                            "revision_unsupported",
                            "observed",
                            "dropped"
                        ]
                        .contains(&word.as_str().expect("word")),
                        "{word}"
                    );
                }
            }
        } else {
            assert_eq!(c["graded"], false);
            assert!(results.is_empty(), "{id}: not graded yet has results");
            assert!(
                summary.values().all(|n| n == 0),
                "{id}: not graded yet counted"
            );
        }
    }
    assert_eq!(v["graded"]["count"], graded);
    for (verdict, n) in total_by_verdict {
        assert_eq!(totals(&v, &verdict), n, "{verdict}");
    }
}

#[test]
fn checks_are_in_numeric_order_in_both_formats() {
    let lab = Lab::new();
    let names = lab.examples();
    let v = json(&lab.grade([
        "--format",
        "json",
        "--benchmark",
        support::rules::V1,
        &names[0],
    ]));
    let ids = check_ids(&v);
    let mut sorted = ids.clone();
    sorted.sort_by_key(|i| id_key(i));
    assert_eq!(ids, sorted);
    // By number, not by string: under v1.0.0 1.4 before 2.1, 10.1 after 7.2.2 and 7.1.1,
    // 3.3.5 before 5.1.1.
    let pos = |rule: &str| {
        let n = support::rules::number(rule);
        ids.iter().position(|i| i == n).expect(rule)
    };
    assert!(pos("identity-matches-baseline") < pos("stdio-preferred"));
    assert!(
        pos("cache-freshness") > pos("notification-identity")
            && pos("cache-freshness") > pos("lifecycle-metadata-recorded")
    );
    assert!(pos("static-client-safeguards") < pos("tool-schemas-validated"));

    let r = lab.grade([&names[0]]);
    // Graded checks first, then the not-graded list; each part in numeric order.
    let (main, rest) = r
        .stdout
        .split_once("not graded by this build")
        .unwrap_or((&r.stdout, ""));
    for part in [main, rest] {
        let ids: Vec<Vec<u32>> = part
            .lines()
            .map(str::trim_start)
            .filter_map(|l| l.split_once(" (L"))
            .map(|(id, _)| id)
            .filter(|id| id.chars().all(|c| c.is_ascii_digit() || c == '.') && id.contains('.'))
            .map(id_key)
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "{part}");
    }
}

#[test]
fn not_graded_checks_claim_no_verdict() {
    let lab = Lab::new();
    let b = lab.example("py1.mcpev");
    let v = json(&lab.grade(["--format", "json", &b]));
    let not: Vec<&Value> = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["graded"] == false)
        .collect();
    let count = v["graded"]["count"].as_u64().expect("count");
    assert_eq!(not.len() as u64, 36 - count);
    for c in &not {
        assert_eq!(c["results"], serde_json::json!([]));
        assert!(c["summary"]
            .as_object()
            .expect("s")
            .values()
            .all(|n| n == 0));
    }
    let t = lab.grade(["--verbose", &b]);
    assert!(
        t.stdout
            .contains(&format!("checks: this build grades {count} of the 36")),
        "{t:?}"
    );
    if !not.is_empty() {
        let section = t
            .stdout
            .split_once(&format!("not graded by this build ({} of 36)", not.len()))
            .unwrap_or_else(|| panic!("not-graded section: {t:?}"))
            .1;
        for c in &not {
            let id = c["id"].as_str().expect("id");
            let line = format!(
                "  {id} (L{}) {}",
                c["level"],
                c["title"].as_str().expect("t")
            );
            assert!(section.contains(&line), "{line} missing: {t:?}");
            // No verdict word on a not-graded check's line.
            let l = section
                .lines()
                .find(|l| l.starts_with(&line))
                .expect("line");
            for mark in ["PASS", "FAIL", "UNKNOWN", "ERROR", "N/A", "NO-REV"] {
                assert!(!l.contains(mark), "{l}");
            }
        }
    }
}

#[test]
fn level_1_excludes_level_2_checks() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let r = lab.grade(["--format", "json", "--level", "1", &b]);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    assert_eq!(v["level"], 1);
    assert_eq!(v["graded"]["in_scope"], 25);
    let checks = v["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 25);
    assert!(checks.iter().all(|c| c["level"] == 1));
    for l2 in [
        "new-tools-gated",
        "auth-before-stream",
        "oauth-discovery-validated",
        "idempotency-keys",
        "notification-identity",
    ] {
        assert!(!checks.iter().any(|c| c["rule"] == l2), "{l2}");
    }
    let t = lab.grade(["--verbose", "--level", "1", &b]);
    assert!(
        t.stdout
            .contains("checks: level 1 only: 25 of the 36 in scope"),
        "{t:?}"
    );
    assert!(!t.stdout.contains("(L2)"), "{t:?}");
    let all = json(&lab.grade(["--format", "json", "--level", "2", &b]));
    assert_eq!(all["checks"].as_array().expect("checks").len(), 36);
    let bad = lab.grade(["--level", "3", &b]);
    assert_eq!(bad.code, 2, "{bad:?}");
}

#[test]
fn exit_codes_follow_the_verdicts_for_every_example() {
    let lab = Lab::new();
    for b in lab.examples() {
        let r = lab.grade(["--format", "json", &b]);
        let v = json(&r);
        assert_eq!(r.code, expected_code(&v), "{b}: {r:?}");
        let t = lab.grade(["--verbose", &b]);
        assert_eq!(t.code, r.code, "text and JSON runs agree for {b}");
    }
}

#[test]
fn a_bundle_without_a_session_is_error_so_exit_4_unless_something_fails() {
    let lab = Lab::new();
    let b = lab.write("nosession.mcpev", &no_session_bundle());
    let r = lab.grade(["--format", "json", &b]);
    let v = json(&r);
    // Every check that needs a session is ERROR here, whatever the check is; this build
    // registers such checks, so the report has ERRORs.
    assert!(totals(&v, "ERROR") > 0, "{r:?}");
    let want = if totals(&v, "FAIL") > 0 { 1 } else { 4 };
    assert_eq!(r.code, want, "{r:?}");
    assert_eq!(v["servers"][0]["negotiated_revision"], Value::Null);
    let t = lab.grade(["--verbose", &b]);
    assert_eq!(t.code, want);
    assert!(t.stdout.contains("[no-session]"), "{t:?}");
    assert!(
        t.stdout.contains("\n    ERROR    "),
        "ERROR evidence shown: {t:?}"
    );
}

#[test]
fn fail_outranks_error_across_bundles() {
    let lab = Lab::new();
    let mut names = lab.examples();
    names.push(lab.write("nosession.mcpev", &no_session_bundle()));
    let mut args = vec!["--format".to_string(), "json".into()];
    args.extend(names);
    let r = lab.grade(&args);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    if totals(&v, "FAIL") > 0 {
        assert_eq!(r.code, 1);
    }
}

/// `bytes` of a bundle with one bit flipped inside its signature (near the end).
fn signature_flipped(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let n = b.len();
    b[n - 10] ^= 0x01;
    b
}

#[test]
fn a_tampered_bundle_exits_3_and_nothing_is_graded() {
    let lab = Lab::new();
    let good = lab.example("py2.mcpev");
    let bytes = std::fs::read(lab.path().join(&good)).expect("read");
    let bad = lab.write("tampered.mcpev", &signature_flipped(&bytes));
    for args in [vec![bad.clone()], vec![good.clone(), bad.clone()]] {
        for format in ["text", "json"] {
            let mut a = vec!["--format".to_string(), format.into()];
            a.extend(args.iter().cloned());
            let r = lab.grade(&a);
            assert_eq!(r.code, 3, "{r:?}");
            assert!(r.stdout.is_empty(), "nothing is reported: {r:?}");
            assert!(
                r.stderr
                    .contains("INVALID tampered.mcpev: signature invalid"),
                "{r:?}"
            );
            assert!(r.stderr.contains("nothing graded"), "{r:?}");
            assert!(!r.stderr.contains(&format!("INVALID {good}")), "{r:?}");
        }
    }
    // A bundle signed by a key outside --trust is invalid too.
    let pinned = lab.write("other.pub", test_key(9).public().to_pem().as_bytes());
    let r = lab.grade(["--trust", &pinned, &good]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("not trusted"), "{r:?}");
    let ok = lab.grade(["--trust", &format!("{EXAMPLES}/collector.pub"), &good]);
    assert_ne!(ok.code, 3, "{ok:?}");
}

#[test]
fn unreadable_input_exits_2_naming_it() {
    let lab = Lab::new();
    let good = lab.example("py2.mcpev");
    let r = lab.grade([good.as_str(), "missing.mcpev"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("cannot read missing.mcpev"), "{r:?}");
    // Unreadable outranks invalid.
    let bad = lab.write("junk.mcpev", b"not a bundle");
    let r = lab.grade(["junk.mcpev", "missing.mcpev"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains(&format!("INVALID {bad}")), "{r:?}");
    let r = lab.grade(["--format", "pdf", &good]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("pdf")
            && r.stderr
                .contains("text, json, sarif, junit, markdown, html"),
        "{r:?}"
    );
    let r = lab.grade(["--baseline", &good, "--update-baseline", &good]);
    assert_eq!(r.code, 2, "{r:?}");
    let r = lab.grade(Vec::<&str>::new());
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn subcommands_still_work_beside_bare_grading() {
    let lab = Lab::new();
    let b = lab.example("py1.mcpev");
    let v = lab.grade(["verify", &b]);
    assert_eq!(v.code, 0, "{v:?}");
    assert!(v.stdout.starts_with("OK py1.mcpev"), "{v:?}");
    let s = lab.grade(["show", "--json", &b]);
    assert_eq!(s.code, 0, "{s:?}");
    assert_eq!(json(&s)["format"], "mcp-evidence/1");
    let h = lab.grade(["--help"]);
    assert_eq!(h.code, 0);
    for want in [
        "verify",
        "show",
        "--format",
        "--baseline",
        "--update-baseline",
        "--level",
        "--output",
        "Exit codes",
    ] {
        assert!(h.stdout.contains(want), "{want}: {h:?}");
    }
    // Grading options belong to grading.
    let r = lab.grade(["--format", "json", "verify", &b]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn the_report_names_the_policy_and_a_bad_policy_is_a_usage_error() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let file = root.join("examples/policy/policy.toml");
    let f = file.display().to_string();
    let r = lab.grade(["--format", "json", "--policy", &f, &b]);
    let v = json(&r);
    assert_eq!(v["policy"]["file"], f.as_str(), "{r:?}");
    let sha = hex::encode(sha256(&std::fs::read(&file).expect("read policy")));
    assert_eq!(v["policy"]["sha256"], sha.as_str());
    let t = lab.grade(["--verbose", "--policy", &f, &b]);
    assert!(
        t.stdout.contains(&format!("policy: {f} (sha256 {sha})")),
        "{t:?}"
    );
    let none = json(&lab.grade(["--format", "json", &b]));
    assert!(none.get("policy").is_none(), "no policy, no key");

    let bad = lab.path().join("bad.toml");
    std::fs::write(&bad, "[all]\nallowed_origins = [\"https://a.example/x\"]\n").expect("write");
    let r = lab.grade(["--policy", bad.to_str().expect("utf-8"), &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(r.stdout, "", "nothing graded: {r:?}");
    assert!(
        r.stderr.contains("all.allowed_origins[0]") && r.stderr.lines().count() == 1,
        "{r:?}"
    );
}

#[test]
fn quiet_silences_notes_not_errors() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let r = lab.grade(["-q", "--format", "json", "--update-baseline", &b]);
    assert_eq!(r.stderr, "", "the stored-baseline note is silenced: {r:?}");
    let loud = lab.grade(["--format", "json", "--update-baseline", &b]);
    assert!(
        loud.stderr
            .starts_with("mcp-grade: note: stored baseline for "),
        "{loud:?}"
    );
    for args in [
        vec!["-q", "missing.mcpev"],
        vec!["verify", "-q", "missing.mcpev"],
        vec!["show", "-q", "missing.mcpev"],
    ] {
        let r = lab.grade(args.clone());
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr.starts_with("mcp-grade: cannot read missing.mcpev"),
            "{args:?}: {r:?}"
        );
    }
}

fn stored_file(lab: &Lab, endpoint: &str) -> PathBuf {
    let key = hex::encode(&sha256(endpoint.as_bytes())[..8]);
    lab.home().join("baselines").join(format!("{key}.mcpev"))
}

/// A report over enough bundles to spill keeps its servers' summaries in the spill file
/// too; the baselines `--update-baseline` stores are known only after every bundle is
/// graded, and each must still reach its own server (given out of endpoint order).
#[test]
fn update_baseline_reaches_every_server_of_a_spilled_report() {
    let lab = Lab::new();
    let examples = lab.examples();
    let n = mcp_probe_evaluator::commands::SPILL_FROM + 3;
    let names: Vec<String> = (0..n)
        .map(|k| {
            let from = &examples[k % examples.len()];
            let bytes = std::fs::read(lab.path().join(from)).expect("read");
            // Reverse order of names against the endpoints: the report sorts them.
            lab.write(&format!("{:03}-{from}", n - k), &bytes)
        })
        .collect();
    let mut args = vec![
        "--format".to_string(),
        "json".into(),
        "--update-baseline".into(),
    ];
    args.extend(names.iter().cloned());
    let r = lab.grade(&args);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    let servers = v["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), n);
    for s in servers {
        let bundle = s["bundle"].as_str().expect("bundle");
        let info = &s["baseline"];
        assert_eq!(info["mode"], "update", "{bundle}: {info}");
        // Each server's baseline is its endpoint's, and one that says it stored this
        // server's bundle stored exactly its bytes.
        let endpoint = s["endpoint"].as_str().expect("endpoint");
        let file = stored_file(&lab, endpoint);
        assert_eq!(info["path"], file.display().to_string(), "{bundle}");
        if info["stored"].as_bool().expect("stored said") {
            assert_eq!(
                std::fs::read(&file).expect("stored"),
                std::fs::read(lab.path().join(bundle)).expect("read"),
                "{bundle}"
            );
        }
    }
    assert!(
        servers.iter().any(|s| s["baseline"]["stored"] == true),
        "something was stored: {r:?}"
    );
}

/// A store whose directory does not exist is not looked into (each input's lookup of a
/// file that is not there is skipped): the report is the one graded against an empty
/// store, in every format that names the baseline, and no directory is made.
#[test]
fn a_store_without_its_directory_grades_as_an_empty_store() {
    let lab = Lab::new();
    let names = lab.examples();
    for format in ["json", "text", "markdown"] {
        let mut args = vec!["--format".to_string(), format.into(), "--verbose".into()];
        args.extend(names.iter().cloned());
        std::fs::create_dir_all(lab.home()).expect("home");
        let absent = lab.grade(&args);
        assert!(!lab.home().join("baselines").exists(), "{absent:?}");
        std::fs::create_dir(lab.home().join("baselines")).expect("store");
        let empty = lab.grade(&args);
        std::fs::remove_dir(lab.home().join("baselines")).expect("still empty");
        assert_eq!(absent.code, empty.code, "{format}: {absent:?}");
        assert_eq!(absent.stdout, empty.stdout, "{format}");
        assert_eq!(absent.stderr, empty.stderr, "{format}");
    }
}

#[test]
fn update_baseline_stores_it_and_the_next_run_uses_it() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let bytes = std::fs::read(lab.path().join(&b)).expect("read");
    let ev = open(&bytes, &[]).expect("example verifies").evidence;
    let endpoint = ev.target.endpoint.clone().expect("endpoint");

    let r = lab.grade(["--format", "json", "--update-baseline", &b]);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    let file = stored_file(&lab, &endpoint);
    assert_eq!(std::fs::read(&file).expect("stored"), bytes);
    assert!(
        r.stderr.contains(&format!(
            "stored baseline for {endpoint}: {}",
            file.display()
        )),
        "{r:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&lab.home().join("baselines")), 0o700);
        assert_eq!(mode(&lab.home()), 0o700);
        assert_eq!(mode(&file), 0o600);
    }
    let info = &v["servers"][0]["baseline"];
    assert_eq!(info["mode"], "update");
    assert_eq!(info["stored"], true);
    assert_eq!(info["used"], false);
    assert_eq!(info["path"], file.display().to_string());

    // The next run without flags compares with it.
    let r2 = lab.grade(["--format", "json", &b]);
    let v2 = json(&r2);
    assert_eq!(r2.code, expected_code(&v2), "{r2:?}");
    let info = &v2["servers"][0]["baseline"];
    assert_eq!(info["mode"], "stored", "{r2:?}");
    assert_eq!(info["used"], true);
    assert_eq!(info["bundle_id"], ev.run.run_id);
    assert_eq!(info["signer"], v2["servers"][0]["signer"]);
    assert_eq!(info["problem"], Value::Null);
    let t = lab.grade(["--verbose", &b]);
    assert!(
        t.stdout
            .contains(&format!("baseline  stored {}", file.display())),
        "{t:?}"
    );

    // A stored baseline that no longer verifies is ignored with a warning.
    let mut tampered = bytes.clone();
    let n = tampered.len();
    tampered[n - 5] ^= 0x01;
    std::fs::write(&file, &tampered).expect("tamper");
    let r3 = lab.grade(["--format", "json", &b]);
    let v3 = json(&r3);
    assert_eq!(
        r3.code,
        expected_code(&v3),
        "a bad stored baseline is not a bad input: {r3:?}"
    );
    assert!(r3.stderr.contains("warning: stored baseline"), "{r3:?}");
    assert_eq!(r3.stderr.lines().count(), 1, "{r3:?}");
    let info = &v3["servers"][0]["baseline"];
    assert_eq!(info["used"], false);
    assert!(
        info["problem"]
            .as_str()
            .expect("problem")
            .contains("signature"),
        "{info}"
    );
}

/// Without `--baseline FILE` each input is verified and graded in one pass: a stored
/// baseline that fails verification is warned about once per endpoint (whichever inputs
/// of it come between others, and however many jobs), after the messages of
/// verification; and when an input fails verification, nothing is graded and no warning
/// of grading is printed.
#[test]
fn a_rejected_stored_baseline_is_warned_about_once_and_only_when_every_input_verified() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let bytes = std::fs::read(lab.path().join(&b)).expect("read");
    let endpoint = open(&bytes, &[])
        .expect("example verifies")
        .evidence
        .target
        .endpoint
        .expect("endpoint");
    let file = stored_file(&lab, &endpoint);
    std::fs::create_dir_all(file.parent().expect("baselines dir")).expect("mkdir");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for d in [lab.home(), lab.home().join("baselines")] {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        }
    }
    std::fs::write(&file, b"not a bundle").expect("write");
    let again = lab.write("py2-again.mcpev", &bytes);
    // Five other endpoints between the two inputs of py2's: more than one job's cache.
    let others: Vec<String> = [
        "ts2.mcpev",
        "fastmcp.mcpev",
        "py1.mcpev",
        "nostore.mcpev",
        "ts2-reject.mcpev",
    ]
    .iter()
    .map(|n| lab.example(n))
    .collect();
    let mut args: Vec<String> = vec![b.clone()];
    args.extend(others.iter().cloned());
    args.push(again.clone());
    let warning = format!("stored baseline {} for {endpoint} ignored", file.display());
    for jobs in ["1", "3"] {
        let mut a = vec![
            "--format".to_string(),
            "json".into(),
            "--jobs".into(),
            jobs.into(),
        ];
        a.extend(args.iter().cloned());
        let r = lab.grade(&a);
        let v = json(&r);
        assert_eq!(r.code, expected_code(&v), "{r:?}");
        assert_eq!(r.stderr.matches(&warning).count(), 1, "jobs {jobs}: {r:?}");
        let problems: Vec<&Value> = v["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .filter(|s| s["endpoint"] == endpoint.as_str())
            .map(|s| &s["baseline"]["problem"])
            .collect();
        assert_eq!(problems.len(), 2, "{v}");
        for p in problems {
            assert!(
                p.as_str().is_some_and(|p| !p.is_empty()),
                "jobs {jobs}: {p}"
            );
        }
    }
    let bad = lab.write("tampered.mcpev", &signature_flipped(&bytes));
    args.push(bad);
    for jobs in ["1", "3"] {
        let mut a = vec!["--jobs".to_string(), jobs.into()];
        a.extend(args.iter().cloned());
        let r = lab.grade(&a);
        assert_eq!(r.code, 3, "{r:?}");
        assert!(r.stdout.is_empty(), "{r:?}");
        assert!(r.stderr.contains("nothing graded"), "{r:?}");
        assert!(!r.stderr.contains("stored baseline"), "jobs {jobs}: {r:?}");
    }
}

#[test]
fn update_baseline_does_not_store_a_bundle_without_a_session() {
    let lab = Lab::new();
    let b = lab.write("nosession.mcpev", &no_session_bundle());
    let r = lab.grade(["--format", "json", "--update-baseline", &b]);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    assert!(!stored_file(&lab, URL).exists());
    let info = &v["servers"][0]["baseline"];
    assert_eq!(info["stored"], false);
    assert!(
        info["problem"]
            .as_str()
            .expect("why")
            .contains("no MCP session"),
        "{info}"
    );
}

#[test]
fn update_baseline_keeps_the_newest_bundle_of_an_endpoint() {
    let lab = Lab::new();
    // Same endpoint, collected a day earlier (the run id and chain are unchanged; only
    // the payload, and so the signature, differ).
    let mut old = session_bundle(URL);
    old.run.started_at -= 86_400_000_000;
    let old_bytes = seal(&old, &test_key(3));
    let new_bytes = seal(&session_bundle(URL), &test_key(3));
    assert!(open(&old_bytes, &[]).is_ok());
    let newer = lab.write("new.mcpev", &new_bytes);
    let older = lab.write("old.mcpev", &old_bytes);
    let r = lab.grade(["--format", "json", "--update-baseline", &newer, &older]);
    let v = json(&r);
    assert_eq!(
        std::fs::read(stored_file(&lab, URL)).expect("stored"),
        new_bytes,
        "{r:?}"
    );
    let by_bundle = |name: &str| {
        v["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .find(|s| s["bundle"] == name)
            .expect("server")["baseline"]
            .clone()
    };
    assert_eq!(by_bundle("new.mcpev")["stored"], true);
    assert_eq!(by_bundle("old.mcpev")["stored"], false);
    assert!(by_bundle("old.mcpev")["problem"]
        .as_str()
        .expect("why")
        .contains("new.mcpev"));
    // Both are labelled with their bundle in check rows, since they share an endpoint.
    if v["graded"]["count"].as_u64().expect("count") > 0 {
        let t = lab.grade(["--verbose", "--update-baseline", &newer, &older]);
        assert!(
            t.stdout
                .contains(&format!("{URL} [2025-11-25] (new.mcpev)")),
            "{t:?}"
        );
        assert!(
            t.stdout
                .contains(&format!("{URL} [2025-11-25] (old.mcpev)")),
            "{t:?}"
        );
    }
}

#[test]
fn explicit_baseline_must_be_of_the_same_endpoint() {
    let lab = Lab::new();
    let a = lab.example("py2.mcpev");
    let other = lab.example("py1.mcpev");
    let ep = |name: &str| {
        open(&std::fs::read(lab.path().join(name)).expect("read"), &[])
            .expect("verifies")
            .evidence
            .target
            .endpoint
            .expect("endpoint")
    };
    let r = lab.grade(["--baseline", &other, &a]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    for want in [ep(&a), ep(&other), a.clone(), other.clone()] {
        assert!(r.stderr.contains(&want), "{want} not named: {r:?}");
    }

    // The same endpoint's bundle is accepted and reported.
    let same = lab.write(
        "earlier.mcpev",
        &std::fs::read(lab.path().join(&a)).expect("read"),
    );
    let r = lab.grade(["--format", "json", "--baseline", &same, &a]);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    let info = &v["servers"][0]["baseline"];
    assert_eq!(info["mode"], "file");
    assert_eq!(info["path"], same);
    assert_eq!(info["used"], true);
    assert!(
        !lab.home().join("baselines").exists(),
        "--baseline stores nothing"
    );

    // A --baseline that fails verification stops the run like any bundle.
    let mut bytes = std::fs::read(lab.path().join(&a)).expect("read");
    let n = bytes.len();
    bytes[n - 3] ^= 0x01;
    let bad = lab.write("bad-base.mcpev", &bytes);
    let r = lab.grade(["--baseline", &bad, &a]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stderr.contains("INVALID --baseline bad-base.mcpev"),
        "{r:?}"
    );
    assert!(r.stdout.is_empty());
}

#[test]
fn output_file_gets_the_report_and_stdout_stays_empty() {
    let lab = Lab::new();
    let b = lab.example("py1.mcpev");
    let r = lab.grade(["--format", "json", "-o", "report.json", &b]);
    assert!(r.stdout.is_empty(), "{r:?}");
    let text = std::fs::read_to_string(lab.path().join("report.json")).expect("written");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    assert_eq!(v["schema"], "mcp-grade-report/1");
    let t = lab.grade(["--output", "report.txt", &b]);
    assert!(t.stdout.is_empty(), "{t:?}");
    let text = std::fs::read_to_string(lab.path().join("report.txt")).expect("written");
    assert!(text.contains("CIS MCP Server Benchmark 1.0.0"));
    let leftovers: Vec<_> = std::fs::read_dir(lab.path())
        .expect("dir")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let r = lab.grade(["-o", "no/such/dir/report.txt", &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr
            .contains("cannot write the report to no/such/dir/report.txt"),
        "{r:?}"
    );
    assert_eq!(r.stderr.lines().count(), 1, "{r:?}");
}

// ---- snapshots ----

/// `s` as a regex matching itself.
fn literal(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            (!c.is_ascii_alphanumeric() && c != ' ')
                .then_some('\\')
                .into_iter()
                .chain([c])
        })
        .collect()
}

fn redactions() -> Vec<(&'static str, &'static str)> {
    // The grader's build changes with every commit: whole, and cut to 12 digits. Its
    // target and compiler change with the toolchain that builds the tests (Markdown
    // escapes the target's `_`). None of them moves a line break: the text formats
    // write the provenance on one line, and the summary breaks it before the version.
    use mcp_probe_evaluator::report::provenance::{
        short_build, GRADER_BUILD, GRADER_RUSTC, GRADER_TARGET,
    };
    let build: &'static str = literal(GRADER_BUILD).leak();
    let short: &'static str = literal(&short_build(GRADER_BUILD)).leak();
    let target: &'static str = literal(GRADER_TARGET).leak();
    let md_target: &'static str =
        literal(&mcp_probe_evaluator::report::markdown::cell(GRADER_TARGET)).leak();
    let rustc: &'static str = literal(GRADER_RUSTC).leak();
    vec![
        (build, "[COMMIT]"),
        (short, "[COMMIT]"),
        (target, "[TARGET]"),
        (md_target, "[TARGET]"),
        (rustc, "[RUSTC]"),
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]"),
        (r"\b[0-9a-f]{32}\b", "[HEX32]"),
        (r"(run|signer) [0-9a-f]{12}\b", "$1 [HEX12]"),
        (r"mcp-grade \d+\.\d+\.\d+\S*", "mcp-grade [VERSION]"),
        (
            r#""grader_version": "[^"]*""#,
            r#""grader_version": "[VERSION]""#,
        ),
        (r"grades \d+ of the 36", "grades [N] of the 36"),
    ]
}

/// The header and server blocks of a text report: everything before the checks.
fn text_head(report: &str) -> String {
    let rule = "=".repeat(72);
    let mut parts = report.splitn(4, &rule);
    let head: Vec<&str> = parts.by_ref().take(3).collect();
    head.join(&rule)
}

#[test]
fn snapshot_reports_of_two_examples() {
    let lab = Lab::new();
    let a = lab.example("py1.mcpev");
    let b = lab.example("py2-auth.mcpev");
    let t = lab.grade(["--verbose", &a, &b]);
    assert!(matches!(t.code, 0 | 1 | 4), "{t:?}");
    let mut j = json(&lab.grade(["--format", "json", &a, &b]));
    // The per-check verdicts change as checks land; keep the catalogue part, which
    // does not. (The full per-check layout is in `snapshot_renderers_*`.)
    for c in j["checks"].as_array_mut().expect("checks") {
        let c = c.as_object_mut().expect("check");
        c.retain(|k, _| ["id", "level", "title", "section", "source"].contains(&k.as_str()));
    }
    for key in ["graded", "totals"] {
        j.as_object_mut().expect("top").remove(key);
    }
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!("examples_text_head", text_head(&t.stdout));
        insta::assert_json_snapshot!("examples_json_without_verdicts", j);
    });
}

/// Whole reports of two real examples, every check with its legs, evidence, reduction and
/// details, as JSON and as `--verbose` text: what a change to a rule prints is seen here
/// (the fixed-outcome snapshots below carry no details).
#[test]
fn snapshot_whole_reports_of_two_examples() {
    let lab = Lab::new();
    let a = lab.example("py1.mcpev");
    let b = lab.example("py2-auth.mcpev");
    let t = lab.grade(["--verbose", &a, &b]);
    assert!(matches!(t.code, 0 | 1 | 4), "{t:?}");
    let j = lab.grade(["--format", "json", &a, &b]);
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!("examples_whole_text", t.stdout);
        insta::assert_snapshot!("examples_whole_json", j.stdout);
    });
}

/// A report from fixed outcomes (independent of which checks this build grades), with
/// every verdict, legs, records, a shared endpoint, and each kind of baseline line.
fn fixed_report() -> Report {
    let ev = |name: &str, url: &str, rev: Option<&str>| {
        let mut e = session_bundle(url);
        if let Some(s) = e.session.as_mut() {
            s.revision = rev.map(str::to_string);
            s.auth_required = rev.is_none();
        }
        if rev.is_none() {
            e.run.status = RunStatus::Interrupted;
            e.run.failure = Some("the endpoint requires authentication (HTTP 401)".into());
        }
        let bytes = seal(&e, &test_key(1));
        mcp_probe_evaluator::evidence::Bundle::new(name, open(&bytes, &[]).expect("verifies"))
    };
    let a = ev("a.mcpev", "http://127.0.0.1:1001/mcp", Some("2025-11-25"));
    let b = ev("b.mcpev", "https://mcp.example/mcp", Some("2026-07-28"));
    let c = ev("c.mcpev", "http://127.0.0.1:1003/mcp", None);
    // As a rule writes them (sub-verdicts by local name), rendered through the
    // definition's row as the runner does.
    let outcome = |server: usize, rule: &str| -> Option<Outcome> {
        match (rule, server) {
            ("revisions-pinned", 0) => Some(
                Outcome::from_subs(
                    vec![
                        SubVerdict::new("a", SubOutcome::Pass, "only known revisions are served"),
                        SubVerdict::new(
                            "b",
                            SubOutcome::Fail,
                            "a malformed MCP-Protocol-Version was accepted with 200",
                        ),
                        SubVerdict::new("d", SubOutcome::REVISION_UNSUPPORTED, "needs 2026-07-28"),
                    ],
                    "approved revision list not read",
                )
                .with_records([4, 3]),
            ),
            ("revisions-pinned", 1) => Some(
                Outcome::from_subs(
                    vec![SubVerdict::new("a", SubOutcome::Pass, "ok")],
                    "approved revision list not read",
                )
                .with_records([2]),
            ),
            ("revisions-pinned", _) => Some(Outcome::single(
                Verdict::Unknown,
                "the endpoint answered 401",
                "",
            )),
            ("stdio-preferred", _) => Some(Outcome::single(
                Verdict::NotApplicable,
                "reported only",
                "host-side",
            )),
            ("legacy-session-disabled", 1) => Some(Outcome::single(
                Verdict::NoRev,
                "no legacy sessions in 2026-07-28",
                "r",
            )),
            ("legacy-session-disabled", 0) => Some(
                Outcome::single(Verdict::Pass, "GET answered 405", "r").with_detail("status", 405),
            ),
            ("legacy-session-disabled", _) => {
                Some(Outcome::single(Verdict::Error, "leg(s) x missing", ""))
            }
            ("size-limits", _) => Some(Outcome::single(
                Verdict::Pass,
                "413 for 1 MiB",
                "quotas not probed",
            )),
            _ => None,
        }
    };
    let bm = support::rules::v1();
    let results = |server: usize| -> Vec<CheckResult> {
        bm.checks
            .iter()
            .map(|e| CheckResult {
                entry: e,
                outcome: outcome(server, e.rule)
                    .map(|o| mcp_probe_evaluator::benchmark::runner::render_through(bm, e, o)),
            })
            .collect()
    };
    let base = BaselineInfo::used(
        BaselineMode::Stored,
        "/state/baselines/0123456789abcdef.mcpev",
        &a,
    );
    let servers = vec![
        (Server::new(&a, Some(base)), results(0)),
        (
            Server::new(
                &b,
                Some(BaselineInfo::rejected(
                    "/state/baselines/fedcba9876543210.mcpev",
                    "failed verification: chain head does not match the last record",
                )),
            ),
            results(1),
        ),
        (Server::new(&c, None), results(2)),
    ];
    Report::new(bm, None, servers)
}

#[test]
fn snapshot_renderers_on_fixed_outcomes() {
    let r = fixed_report();
    let text = report::text::render(&r);
    let json = report::json::document(&r);
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!("fixed_text", text);
        insta::assert_json_snapshot!("fixed_json", json);
    });
    // Every other format of the same fixed outcomes.
    let render = |f: report::Format| String::from_utf8(report::render(&r, f)).expect("utf-8");
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!("fixed_summary", report::summary::render(&r, 100, 24));
        insta::assert_snapshot!("fixed_sarif", render(report::Format::Sarif));
        insta::assert_snapshot!("fixed_junit", render(report::Format::Junit));
        insta::assert_snapshot!("fixed_markdown", render(report::Format::Markdown));
        insta::assert_snapshot!("fixed_html", render(report::Format::Html));
    });
    let mut l1 = fixed_report();
    l1.rows.retain(|row| row.entry.level.number() == 1);
    l1.level = Some(1);
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!("fixed_text_level_1_head", text_head(&report::text::render(&l1)));
    });
}

/// `mcp-grade show` of one example bundle, whole: the text transcript and `--json` (the
/// decoded bundle), each one snapshot.
#[test]
fn snapshot_show_of_an_example_bundle() {
    let lab = Lab::new();
    let b = lab.example("py2-auth.mcpev");
    let trust = format!("{EXAMPLES}/collector.pub");
    let text = lab.grade(["show", "--trust", &trust, &b]);
    assert_eq!(text.code, 0, "{text:?}");
    let json = lab.grade(["show", "--json", "--trust", &trust, &b]);
    assert_eq!(json.code, 0, "{json:?}");
    let doc: Value = serde_json::from_str(&json.stdout).expect("show --json is JSON");
    insta::with_settings!({filters => redactions()}, {
        insta::assert_snapshot!("show_text", text.stdout);
        insta::assert_json_snapshot!("show_json", doc);
    });
}

/// `(check id, verdict)` of every result of a one-bundle JSON report.
fn verdicts(v: &Value) -> Vec<(String, String)> {
    v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter_map(|c| {
            let r = c["results"].as_array()?.first()?;
            Some((
                c["id"].as_str()?.to_string(),
                r["verdict"].as_str()?.to_string(),
            ))
        })
        .collect()
}

fn waiver(check: &str, endpoint: &str, reason: &str, expires: &str) -> String {
    format!(
        "[[waiver]]\ncheck = \"{check}\"\nendpoint = \"{endpoint}\"\nreason = \"{reason}\"\nexpires = {expires}\n\n"
    )
}

#[test]
fn waivers_active_expired_and_stale_and_fail_on() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let v = json(&lab.grade(["--format", "json", &b]));
    let all = verdicts(&v);
    let failing: Vec<&(String, String)> = all
        .iter()
        .filter(|(_, x)| x == "FAIL" || x == "ERROR")
        .collect();
    let passing = all.iter().find(|(_, x)| x == "PASS").expect("a PASS");
    assert!(!failing.is_empty(), "py2 fails something: {all:?}");
    assert_ne!(expected_code(&v), 0);

    // Every FAIL and ERROR waived (one by glob, the rest for every endpoint): exit 0,
    // and each result says it is waived, with its reason.
    let mut text = String::new();
    for (i, (id, _)) in failing.iter().enumerate() {
        let ep = if i == 0 {
            "http://127.0.0.1:*/mcp"
        } else {
            "*"
        };
        text.push_str(&waiver(id, ep, &format!("accepted {id}"), "2999-12-31"));
    }
    let file = lab.write("waivers.toml", text.as_bytes());
    let r = lab.grade(["--format", "json", "--waivers", &file, &b]);
    assert_eq!(r.code, 0, "{r:?}");
    let w = json(&r);
    assert_eq!(w["waivers"]["waived"], failing.len());
    assert_eq!(w["waivers"]["stale"].as_array().map(Vec::len), Some(0));
    for c in w["checks"].as_array().expect("checks") {
        let res = &c["results"][0];
        if failing.iter().any(|(id, _)| c["id"] == id.as_str()) {
            assert_eq!(res["waiver"]["state"], "waived", "{c}");
            assert_eq!(
                res["waiver"]["reason"],
                format!("accepted {}", c["id"].as_str().unwrap_or(""))
            );
            // The verdict itself is never rewritten.
            assert_ne!(res["verdict"], "PASS");
        } else {
            assert!(res.get("waiver").is_none(), "{c}");
        }
    }
    let t = lab.grade(["--verbose", "--waivers", &file, &b]);
    assert!(
        t.stdout.contains("(waived)") && t.stdout.contains("[waived until 2999-12-31"),
        "{t:?}"
    );

    // The first waiver expired: it no longer applies and the result says so.
    let (first, _) = failing[0];
    let mut expired = waiver(first, "*", "old", "2001-01-01");
    for (id, _) in &failing[1..] {
        expired.push_str(&waiver(id, "*", "r", "2999-12-31"));
    }
    let file = lab.write("expired.toml", expired.as_bytes());
    let r = lab.grade(["--format", "json", "--waivers", &file, &b]);
    assert_ne!(r.code, 0, "{r:?}");
    let w = json(&r);
    let c = w["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == first.as_str())
        .expect("check");
    assert_eq!(c["results"][0]["waiver"]["state"], "expired", "{c}");
    assert_eq!(w["waivers"]["expired"][0]["line"], 1);

    // A waiver of a passing check and one of no endpoint graded are stale: a warning
    // naming the line, or with --strict-waivers a usage error (exit 2).
    let mut stale = text.clone();
    let at = text.lines().count() + 1;
    stale.push_str(&waiver(&passing.0, "*", "it used to fail", "2999-12-31"));
    stale.push_str(&waiver(
        first,
        "https://other.example/mcp",
        "elsewhere",
        "2999-12-31",
    ));
    let file = lab.write("stale.toml", stale.as_bytes());
    let r = lab.grade(["--format", "json", "--waivers", &file, &b]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("line {at}: stale waiver of {}", passing.0)),
        "{r:?}"
    );
    assert!(
        r.stderr
            .contains("matches only results that do not fail the run"),
        "{r:?}"
    );
    assert!(r.stderr.contains("matches no graded result"), "{r:?}");
    assert_eq!(
        json(&r)["waivers"]["stale"].as_array().map(Vec::len),
        Some(2)
    );
    let r = lab.grade(["--strict-waivers", "--waivers", &file, &b]);
    assert_eq!(r.code, 2, "{r:?}");

    // --fail-on: fail ignores ERROR; unknown makes an UNKNOWN exit 5.
    let errors_only = all.iter().all(|(_, x)| x != "FAIL") && all.iter().any(|(_, x)| x == "ERROR");
    if !errors_only {
        let fail_waived: String = all
            .iter()
            .filter(|(_, x)| x == "FAIL")
            .map(|(id, _)| waiver(id, "*", "r", "2999-12-31"))
            .collect();
        let file = lab.write("fails.toml", fail_waived.as_bytes());
        let has_error = all.iter().any(|(_, x)| x == "ERROR");
        let r = lab.grade(["--waivers", &file, &b]);
        assert_eq!(r.code, if has_error { 4 } else { 0 }, "{r:?}");
        let r = lab.grade(["--fail-on", "FAIL", "--waivers", &file, &b]);
        assert_eq!(r.code, 0, "{r:?}");
        let has_unknown = all.iter().any(|(_, x)| x == "UNKNOWN");
        let r = lab.grade(["--fail-on", "unknown", "--waivers", &file, &b]);
        assert_eq!(
            r.code,
            if has_error {
                4
            } else if has_unknown {
                5
            } else {
                0
            },
            "{r:?}"
        );
    }
}

/// An expired and a stale waiver are each named on stderr (a warning, silenced by -q;
/// under --strict-waivers an error and exit 2) and in every report format.
#[test]
fn waivers_expired_and_stale_are_named_everywhere_and_strict_fails_on_both() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let v = json(&lab.grade(["--format", "json", &b]));
    let all = verdicts(&v);
    let (failing, _) = all
        .iter()
        .find(|(_, x)| x == "FAIL" || x == "ERROR")
        .expect("py2 fails something");
    let expired_only = waiver(failing, "*", "tracked in SEC-9", "2001-01-01");
    let file = lab.write("expired-only.toml", expired_only.as_bytes());
    let expired_line = format!(
        "line 1: expired waiver of {failing} on *: its last day was 2001-01-01, it no longer applies (tracked in SEC-9)"
    );

    let r = lab.grade(["--waivers", &file, &b]);
    assert_eq!(
        r.code,
        expected_code(&v),
        "an expired waiver waives nothing: {r:?}"
    );
    assert_eq!(
        r.stderr,
        format!("mcp-grade: warning: --waivers {file}: {expired_line}\n"),
        "{r:?}"
    );
    // The summary wraps to the width: compare with the line breaks undone.
    let words = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains(&expired_line), "summary: {r:?}");
    let r = lab.grade(["-q", "--waivers", &file, &b]);
    assert_eq!(r.stderr, "", "-q silences the warning: {r:?}");
    let r = lab.grade(["--verbose", "--waivers", &file, &b]);
    assert!(r.stdout.contains(&expired_line), "verbose: {r:?}");
    for format in ["markdown", "html", "junit", "sarif"] {
        let r = lab.grade(["-q", "--format", format, "--waivers", &file, &b]);
        // (Markdown escapes the `*`.)
        assert!(
            r.stdout
                .contains(&format!("expired waiver of {failing} on "))
                && r.stdout
                    .contains("its last day was 2001-01-01, it no longer applies"),
            "{format}: {r:?}"
        );
    }
    let j = json(&lab.grade(["-q", "--format", "json", "--waivers", &file, &b]));
    assert_eq!(j["waivers"]["expired"][0]["line"], 1, "{j}");
    assert_eq!(j["waivers"]["expired"][0]["expires"], "2001-01-01", "{j}");

    // --strict-waivers fails the run on an expired waiver alone, and on a stale one.
    let r = lab.grade(["--strict-waivers", "--waivers", &file, &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!("mcp-grade: --waivers {file}: {expired_line}\n"),
        "{r:?}"
    );
    let stale = waiver(
        failing,
        "https://other.example/mcp",
        "elsewhere",
        "2999-12-31",
    );
    let file = lab.write("stale-only.toml", stale.as_bytes());
    let r = lab.grade([
        "-q",
        "--strict-waivers",
        "--format",
        "markdown",
        "--waivers",
        &file,
        &b,
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "--waivers {file}: line 1: stale waiver of {failing} on https://other.example/mcp: it matches no graded result"
        )),
        "errors are not silenced by -q: {r:?}"
    );
    assert!(
        r.stdout.contains("stale waiver of"),
        "the report is still written: {r:?}"
    );
}

#[test]
fn an_invalid_waivers_file_is_a_usage_error_naming_the_line() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let file = lab.write(
        "bad.toml",
        b"[[waiver]]\ncheck = \"1.1\"\nendpoint = \"*\"\nreason = \"r\"\nexpires = \"someday\"\n",
    );
    let r = lab.grade(["--waivers", &file, &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
    assert_eq!(r.stderr.trim().lines().count(), 1, "{r:?}");
    assert!(
        r.stderr
            .contains("--waivers bad.toml: line 5: expires \"someday\" is not a date"),
        "{r:?}"
    );
    let r = lab.grade(["--fail-on", "warning", &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("fail, error, unknown"), "{r:?}");
    let r = lab.grade(["--strict-waivers", &b]);
    assert_eq!(r.code, 2, "--strict-waivers needs --waivers: {r:?}");
}

#[test]
fn the_default_text_report_is_summary_first() {
    let lab = Lab::new();
    let names = lab.examples();
    let r = lab.grade(names.iter().map(String::as_str));
    assert_eq!(r.code, 1, "{r:?}");
    let out = &r.stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.iter().all(|l| l.chars().count() <= 160),
        "a line over 160 characters"
    );
    let findings = lines
        .iter()
        .position(|l| l.starts_with("findings"))
        .expect("a findings section");
    assert!(findings <= 150, "{findings} lines before the findings");
    assert!(out.contains("checks: this build grades 36 of the 36"));
    // The matrix: one row per server, one mark per check, a legend and the totals.
    let rows: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with('[') && l.contains("  ") && !l.contains(';'))
        .collect();
    assert_eq!(rows.len(), names.len(), "{rows:#?}");
    for row in &rows {
        let marks: Vec<char> = row
            .split("  ")
            .skip(1)
            .collect::<String>()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        assert_eq!(marks.len(), 36, "{row}");
        assert!(marks.iter().all(|c| "PFE?-Rw".contains(*c)), "{row}");
    }
    assert!(out.contains("legend: P pass  F FAIL"));
    let sum = lines
        .iter()
        .find(|l| l.starts_with("totals: "))
        .expect("totals");
    let v = json(
        &lab.grade(
            ["--format", "json"]
                .into_iter()
                .chain(names.iter().map(String::as_str)),
        ),
    );
    assert!(
        sum.contains(&format!("{} FAIL", totals(&v, "FAIL"))),
        "{sum}"
    );
    // Each failing check: its servers, evidence and a remediation line.
    let fails: Vec<&str> = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["summary"]["FAIL"].as_u64() > Some(0) && c["source"] != "reported only")
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert!(!fails.is_empty());
    for id in &fails {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{id} (L")) && l.contains("FAIL [")),
            "no finding for {id}"
        );
    }
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("  fix: ")).count(),
        lines
            .iter()
            .filter(|l| {
                let id = l.split(' ').next().unwrap_or("");
                l.contains(" (L")
                    && (l.contains("FAIL [") || l.contains("ERROR ["))
                    && !id.is_empty()
            })
            .count()
    );
    // The server without a session is explained once, not per check.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        flat.matches("no MCP session, so the session checks are not decided")
            .count(),
        1
    );
    // The reported-only block, and the sections no probe reaches.
    let ro = lines
        .iter()
        .position(|l| l.starts_with("reported only (10"))
        .expect("reported-only block");
    assert!(
        lines[ro + 1]
            .trim_start()
            .starts_with(support::rules::number("stdio-preferred")),
        "{}",
        lines[ro + 1]
    );
    for s in [
        "4 host and client controls",
        "6 data protection",
        "8 supply chain",
        "9 isolation",
    ] {
        assert!(flat.contains(s), "{s}");
    }
    // --verbose keeps the whole check-centric report.
    let full = lab.grade(
        ["--verbose"]
            .into_iter()
            .chain(names.iter().map(String::as_str)),
    );
    assert!(full.stdout.lines().count() > lines.len());
    assert!(full.stdout.contains("  evidence:"));
}

#[test]
fn bundles_from_stdin_and_directories() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let bytes = std::fs::read(lab.path().join(&b)).expect("read");
    // `-`: one bundle from standard input, graded like the file.
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-grade"));
    c.current_dir(lab.path())
        .env("MCP_PROBE_HOME", lab.home())
        .args(["--format", "json", "-q", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &bytes).expect("pipe");
    let out = child.wait_with_output().expect("wait");
    let piped: Value = serde_json::from_slice(&out.stdout).expect("json");
    let file = json(&lab.grade(["--format", "json", "-q", &b]));
    assert_eq!(piped["totals"], file["totals"]);
    assert_eq!(
        piped["servers"][0]["bundle_id"],
        file["servers"][0]["bundle_id"]
    );
    // Nothing on standard input: a usage error naming it.
    let r = lab.grade(["-"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("-: standard input is empty"), "{r:?}");
    // A directory stands for the .mcpev files in it.
    let d = lab.path().join("fleet");
    std::fs::create_dir(&d).expect("mkdir");
    for n in ["py1.mcpev", "ts2.mcpev"] {
        std::fs::copy(Path::new(EXAMPLES).join(n), d.join(n)).expect("copy");
    }
    std::fs::write(d.join("README.txt"), b"not a bundle").expect("write");
    let v = json(&lab.grade(["--format", "json", "-q", "fleet"]));
    assert_eq!(v["servers"].as_array().map(Vec::len), Some(2));
    let r = lab.grade(["verify", "fleet"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.lines().count(), 2, "{r:?}");
    let r = lab.grade(["show", "fleet"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("show takes one bundle; this holds 2"),
        "{r:?}"
    );
    std::fs::create_dir(lab.path().join("empty")).expect("mkdir");
    let r = lab.grade(["empty"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("empty: no .mcpev file in this directory"),
        "{r:?}"
    );
    // Among several arguments a directory without bundles is skipped with a note
    // (`mcp-grade examples/*` beside examples/policy), silenced by -q; with nothing
    // left it is the usage error again.
    let skip_note = "mcp-grade: note: empty: no .mcpev file in this directory; skipped";
    let r = lab.grade(["--format", "json", "empty", &b]);
    let v = json(&r);
    assert_eq!(r.code, expected_code(&v), "{r:?}");
    assert_eq!(v["servers"].as_array().map(Vec::len), Some(1));
    assert!(r.stderr.contains(skip_note), "{r:?}");
    let r = lab.grade(["--format", "json", "-q", &b, "empty"]);
    assert_eq!(json(&r)["servers"].as_array().map(Vec::len), Some(1));
    assert!(!r.stderr.contains("skipped"), "{r:?}");
    let r = lab.grade(["verify", "empty", "fleet"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.lines().count(), 2, "{r:?}");
    assert!(r.stderr.contains(skip_note), "{r:?}");
    std::fs::create_dir(lab.path().join("empty2")).expect("mkdir");
    let r = lab.grade(["empty", "empty2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("empty: no .mcpev file in this directory"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("skipped"), "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
}

#[test]
fn diff_exit_codes_and_bad_pairs() {
    let lab = Lab::new();
    let a = lab.example("py2.mcpev");
    let b = lab.example("py1.mcpev");
    let r = lab.grade(["diff", &a, &a]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("no change"), "{r:?}");
    let r = lab.grade(["diff", "--format", "JSON", &a, &a]);
    assert_eq!(json(&r)["changed"], false);
    let r = lab.grade(["diff", &a, &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("diff compares two bundles of one endpoint"),
        "{r:?}"
    );
    let mut bytes = std::fs::read(lab.path().join(&a)).expect("read");
    let n = bytes.len();
    bytes[n - 10] ^= 0xff;
    let bad = lab.write("bad.mcpev", &bytes);
    let r = lab.grade(["diff", &a, &bad]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("INVALID bad.mcpev"), "{r:?}");
}

/// Every result text of one check in a JSON report, with its check id.
/// `(rule id, result as JSON text)` of every result of a JSON report.
fn result_texts(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for c in v["checks"].as_array().expect("checks") {
        for r in c["results"].as_array().expect("results") {
            out.push((c["rule"].as_str().expect("rule").to_string(), r.to_string()));
        }
    }
    out
}

/// No reduction, evidence or leg note claims an input (`--policy`,
/// `--baseline`) was absent when it was given, nor names one that was not given.
#[test]
fn no_text_claims_an_input_was_absent_when_it_was_given_or_vice_versa() {
    let lab = Lab::new();
    let full = lab.write(
        "full-policy.toml",
        b"[all]\n\
          approved_revisions = [\"2025-11-25\"]\n\
          approved_authorization_servers = [\"http://127.0.0.1:1\"]\n\
          approved_scopes = [\"mcp:tools\"]\n\
          allowed_origins = [\"http://127.0.0.1:1\"]\n\
          max_token_lifetime_seconds = 600\n",
    );
    let partial = lab.write(
        "policy.toml",
        &std::fs::read(Path::new(EXAMPLES).join("policy/policy.toml")).expect("example policy"),
    );
    // Phrases saying no policy was given, or that none is read at all.
    const NO_POLICY: &[&str] = &[
        "no --policy given",
        "no policy file",
        "is read yet",
        "allowlist is not read",
    ];
    // Phrases saying the policy lacks a key (true only of the partial policy).
    const KEY_ABSENT: &str = "states no ";
    const NO_BASELINE: &[&str] = &["no --baseline given", "no baseline"];
    for bundle in ["py2.mcpev", "py2-auth-login.mcpev", "ts2.mcpev"] {
        let b = lab.example(bundle);
        let base = lab.write(
            &format!("earlier-{bundle}"),
            &std::fs::read(lab.path().join(&b)).expect("read"),
        );
        for policy in [None, Some(&partial), Some(&full)] {
            for baseline in [None, Some(&base)] {
                let mut args = vec!["--format", "json", "-q"];
                if let Some(p) = policy {
                    args.extend(["--policy", p.as_str()]);
                }
                if let Some(b) = baseline {
                    args.extend(["--baseline", b.as_str()]);
                }
                args.push(&b);
                let r = lab.grade(&args);
                let v = json(&r);
                let texts = result_texts(&v);
                assert_eq!(texts.len(), 36, "{bundle}: one result per check");
                let case = format!("{bundle} --policy {policy:?} --baseline {baseline:?}");
                let any = |s: &str| texts.iter().any(|(_, t)| t.contains(s));
                for (id, t) in &texts {
                    match policy {
                        None => {
                            for name in [&partial, &full] {
                                assert!(
                                    !t.contains(name.as_str()),
                                    "{case}: {id} names {name}: {t}"
                                );
                            }
                            assert!(!t.contains(KEY_ABSENT), "{case}: {id}: {t}");
                        }
                        Some(p) => {
                            for s in NO_POLICY {
                                assert!(!t.contains(s), "{case}: {id} says {s:?}: {t}");
                            }
                            if p == &full {
                                assert!(!t.contains(KEY_ABSENT), "{case}: {id}: {t}");
                            }
                        }
                    }
                    match baseline {
                        None => assert!(
                            !t.contains("baseline earlier-"),
                            "{case}: {id} names a baseline: {t}"
                        ),
                        Some(_) => {
                            for s in NO_BASELINE {
                                assert!(!t.contains(s), "{case}: {id} says {s:?}: {t}");
                            }
                        }
                    }
                }
                // The texts are not vacuous: what was (not) read is said somewhere.
                let short_lived_tokens = &texts
                    .iter()
                    .find(|(id, _)| id == "short-lived-tokens")
                    .expect("short-lived-tokens")
                    .1;
                match policy {
                    None => assert!(
                        short_lived_tokens.contains("no --policy given"),
                        "{case}: {short_lived_tokens}"
                    ),
                    Some(p) => assert!(
                        short_lived_tokens.contains("max_token_lifetime_seconds of")
                            && short_lived_tokens.contains(p.as_str()),
                        "{case}: {short_lived_tokens}"
                    ),
                }
                if bundle == "py2.mcpev" {
                    match baseline {
                        None => assert!(any("no --baseline given"), "{case}"),
                        Some(b) => assert!(any(&format!("baseline {b} collected")), "{case}"),
                    }
                }
            }
        }
    }
}

/// Two bundles of one endpoint are told apart: the summary and the Markdown report name
/// each server's run id and bundle file (the verbose header already does).
#[test]
fn summary_and_markdown_name_each_bundle_and_run() {
    let lab = Lab::new();
    let a = lab.example("py2.mcpev");
    let bytes = std::fs::read(Path::new(EXAMPLES).join("py2.mcpev")).expect("example");
    let b = lab.write("py2-again.mcpev", &bytes);
    let v = json(&lab.grade(["--format", "json", &a]));
    let id = v["servers"][0]["bundle_id"].as_str().expect("a run id");
    let short = &id[..12];
    let r = lab.grade([a.as_str(), b.as_str()]);
    let words = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for f in [&a, &b] {
        assert!(
            words.contains(&format!("run {short} complete; bundle {f}")),
            "summary names {f}: {r:?}"
        );
    }
    let m = lab.grade(["--format", "markdown", &a, &b]);
    assert!(m.stdout.contains("| run and bundle |"), "{m:?}");
    for f in [&a, &b] {
        assert!(
            m.stdout
                .contains(&format!("run {short} complete; bundle {f}")),
            "markdown names {f}: {m:?}"
        );
    }
}

/// From `SPILL_FROM` bundles on, the report's outcomes are kept in a spill file in the
/// temporary directory while the bundles are graded: it is gone when the run ends, and a
/// directory where it cannot be made is one line naming the file, exit 2, no report.
/// Fewer bundles need no temporary directory at all.
#[test]
fn the_spill_file_is_removed_and_its_failure_named() {
    let lab = Lab::new();
    let b = lab.example("py2.mcpev");
    let many: Vec<String> = (0..mcp_probe_evaluator::commands::SPILL_FROM)
        .map(|i| {
            let p = lab.path().join(format!("copy-{i:03}.mcpev"));
            std::fs::copy(lab.path().join(&b), &p).expect("copy");
            p.display().to_string()
        })
        .collect();
    let run = |tmp: &Path, args: &[&str], bundles: &[String]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
            .current_dir(lab.path())
            .env("MCP_PROBE_HOME", lab.home())
            .env("TMPDIR", tmp)
            .args(args)
            .args(bundles)
            .output()
            .expect("run mcp-grade");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let tmp = lab.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    for format in ["text", "json", "html"] {
        let (code, out, err) = run(&tmp, &["-q", "--format", format], &many);
        assert!(matches!(code, Some(0 | 1 | 4)), "{code:?} {err}");
        assert!(!out.is_empty());
        let left: Vec<_> = std::fs::read_dir(&tmp).expect("tmp").collect();
        assert!(left.is_empty(), "{format}: left behind {left:?}");
    }
    let missing = lab.path().join("no-such-dir");
    let (code, out, err) = run(&missing, &["--format", "json"], &many);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(out, "", "no report");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("mcp-grade: ")
            && err.contains("spill file ")
            && err.contains(&missing.display().to_string()),
        "{err}"
    );
    // One bundle: graded in memory, whatever the temporary directory.
    let (code, out, err) = run(
        &missing,
        &["-q", "--format", "json"],
        std::slice::from_ref(&b),
    );
    assert!(matches!(code, Some(0 | 1 | 4)), "{code:?} {err}");
    assert!(out.contains("mcp-grade-report/1"), "{out}");
}

/// `--group-by source`: the text summary and the HTML matrix list the servers under the
/// MCP client configuration each bundle was collected from (`mcp-collect --from-config`),
/// the others under "given as targets"; without the flag the list is flat.
#[test]
fn group_by_source_lists_servers_under_their_client_configuration() {
    let lab = Lab::new();
    let config = format!("{EXAMPLES}/compat/collector-c92848d");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        a.extend([
            "--trust".into(),
            format!("{EXAMPLES}/collector.pub"),
            "--trust".into(),
            format!("{config}/collector.pub"),
            format!("{EXAMPLES}/py2.mcpev"),
            format!("{config}/py2-config.mcpev"),
            format!("{config}/py2-stdio-config.mcpev"),
        ]);
        a
    };
    let t = lab.grade(args(&["--group-by", "source"]));
    assert!(matches!(t.code, 0 | 1 | 4), "{t:?}");
    let start = t.stdout.find("servers: 3").expect("servers line");
    // The server list: after the servers line and its rule, up to the next rule.
    let list = &t.stdout[start..];
    let body = list.split_once("=\n").map_or(list, |(_, b)| b);
    let list = &body[..body.find("\n====").unwrap_or(body.len())];
    // Lines wrap at 80 columns: compare with runs of white space as one space.
    let list = &list.split_whitespace().collect::<Vec<_>>().join(" ");
    // In this order: each heading, then its servers with their entry names.
    let mut at = 0;
    for want in [
        "from unknown ",
        "mcp.json: [2] http://127.0.0.1:",
        "entry remote from claude-desktop ",
        "claude_desktop_config.json: [3] stdio:",
        "entry files given as targets: [1] http://",
    ] {
        let Some(i) = list[at..].find(want) else {
            panic!("{want:?} not after byte {at} of:\n{list}");
        };
        at += i + want.len();
    }
    let flat = lab.grade(args(&[]));
    assert!(!flat.stdout.contains("given as targets"), "{}", flat.stdout);
    let h = lab.grade(args(&["--group-by", "source", "--format", "html"]));
    let groups: Vec<&str> = h
        .stdout
        .match_indices("<tr class=\"group\">")
        .map(|(i, _)| &h.stdout[i..i + 80])
        .collect();
    assert_eq!(groups.len(), 3, "{groups:?}");
    assert!(groups[2].contains("given as targets"), "{groups:?}");
    let bad = lab.grade(args(&["--group-by", "client"]));
    assert_eq!(bad.code, 2, "{bad:?}");
}
