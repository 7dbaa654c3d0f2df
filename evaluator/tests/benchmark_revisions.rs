//! Benchmark definitions as data, through the binary: `mcp-grade benchmarks`, `checks`,
//! `--benchmark ID|FILE`, tailoring, and refusals that name file, line and key. The test
//! revision (tests/fixtures/test-revision.toml, not a CIS publication) renumbers two
//! checks, changes a parameter, drops a check and adds one an existing rule grades with
//! another parameter: grading the examples under it and under v1.0.0 must differ by
//! exactly that, matched through the rule ids.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn grade(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
        .args(args)
        .env(
            "MCP_PROBE_HOME",
            std::env::temp_dir().join("mcp-grade-bench-test-home"),
        )
        .output()
        .expect("run mcp-grade")
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/test-revision.toml")
        .display()
        .to_string()
}

fn examples() -> Vec<String> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("examples"))
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
        .collect();
    v.sort();
    v.into_iter().map(|p| p.display().to_string()).collect()
}

fn report(benchmark: Option<&str>) -> Value {
    let trust = format!("{ROOT}/examples/collector.pub");
    let mut args = vec!["--format", "json", "--trust", &trust];
    if let Some(b) = benchmark {
        args.extend(["--benchmark", b]);
    }
    let ex = examples();
    args.extend(ex.iter().map(String::as_str));
    let out = grade(&args);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 4)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// (rule, params) → (number, verdict per server).
fn by_rule(r: &Value) -> BTreeMap<(String, String), (String, Vec<String>)> {
    r["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            let verdicts = c["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(|x| x["verdict"].as_str().expect("verdict").to_string())
                .collect();
            (
                (
                    c["rule"].as_str().expect("rule").to_string(),
                    c["params"].to_string(),
                ),
                (c["id"].as_str().expect("id").to_string(), verdicts),
            )
        })
        .collect()
}

#[test]
fn the_test_revision_differs_from_v1_by_exactly_its_changes() {
    let old = by_rule(&report(None));
    let new = by_rule(&report(Some(&fixture())));
    let mut renumbered = Vec::new();
    let mut same_verdicts = 0;
    for (k, (n, v)) in &old {
        if let Some((m, w)) = new.get(k) {
            if n != m {
                renumbered.push(format!("{}: {n} -> {m}", k.0));
            }
            assert_eq!(v, w, "{} graded with the same rule and parameters", k.0);
            same_verdicts += 1;
        }
    }
    assert_eq!(
        renumbered,
        ["metadata-headers: 2.4 -> 2.6", "size-limits: 10.2 -> 10.3"]
    );
    let mut only_old: Vec<String> = old
        .iter()
        .filter(|(k, _)| !new.contains_key(k))
        .map(|(k, (n, _))| format!("{n} {} {}", k.0, k.1))
        .collect();
    let mut only_new: Vec<String> = new
        .iter()
        .filter(|(k, _)| !old.contains_key(k))
        .map(|(k, (n, _))| format!("{n} {} {}", k.0, k.1))
        .collect();
    only_old.sort();
    only_new.sort();
    assert_eq!(
        only_old,
        [
            "3.1.2 short-lived-tokens {\"max_token_lifetime_seconds\":3600}",
            "5.6.1 idempotency-keys {}"
        ]
    );
    assert_eq!(
        only_new,
        [
            "1.5 revisions-pinned {\"revision_floor\":\"2025-11-25\"}",
            "3.1.2 short-lived-tokens {\"max_token_lifetime_seconds\":900}"
        ]
    );
    assert_eq!(same_verdicts, old.len() - 2);
    // The added check grades with its own parameter: a server whose oldest served
    // revision is 2025-11-25 passes 1.1's 2025-06-18 floor but is held to 2025-11-25 by
    // 1.5, so the two are not one verdict read twice.
    let new_report = report(Some(&fixture()));
    let evidence_of = |id: &str| -> Vec<String> {
        new_report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["id"] == id)
            .expect("check")["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["evidence"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(evidence_of("1.5")
        .iter()
        .any(|e| e.contains("2025-11-25 floor")));
    assert!(evidence_of("1.1")
        .iter()
        .all(|e| !e.contains("2025-11-25 floor")));
}

#[test]
fn benchmarks_and_checks_list_what_this_build_grades() {
    let out = grade(&["benchmarks"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "cis-mcp-server-1.0.0  CIS MCP Server Benchmark 1.0.0  date not stated  36 checks"
        ),
        "{text}"
    );
    assert!(text.trim_end().ends_with("(default)"), "{text}");
    let out = grade(&["benchmarks", "--format", "json"]);
    let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(line["sha256"].as_str().map(str::len), Some(64));
    let out = grade(&["checks", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let checks = doc["checks"].as_array().expect("checks");
    assert_eq!(
        checks.len(),
        doc["benchmark"]["checks"].as_u64().unwrap_or(0) as usize
    );
    let c312 = checks
        .iter()
        .find(|c| c["number"] == "3.1.2")
        .expect("3.1.2");
    assert_eq!(c312["rule"], "short-lived-tokens");
    assert_eq!(c312["params"]["max_token_lifetime_seconds"], 3600);
    let c23 = checks.iter().find(|c| c["number"] == "2.3").expect("2.3");
    assert_eq!(c23["eras"], "every");
    assert!(c23["legs_optional"]
        .as_array()
        .expect("legs")
        .iter()
        .any(|l| l == "2.3.unauthenticated"));
    let out = grade(&["checks", "--benchmark", &fixture()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1.5     L1 automated wire          rule revisions-pinned (revision_floor=\"2025-11-25\")"), "{text}");
    assert!(!text.contains("\n5.6.1 "), "{text}");
}

#[test]
fn a_tailoring_grades_its_selection_and_names_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("acme.toml");
    std::fs::write(
        &file,
        "format = \"mcp-probe-tailoring/1\"\nid = \"acme-2027\"\nextends = \"cis-mcp-server-1.0.0\"\n\
         deselect = [\"2.1\"]\n[params.\"3.1.2\"]\nmax_token_lifetime_seconds = 300\n",
    )
    .expect("write");
    let f = file.display().to_string();
    let trust = format!("{ROOT}/examples/collector.pub");
    let bundle = format!("{ROOT}/examples/py2-auth-login.mcpev");
    let out = grade(&[
        "--format",
        "json",
        "--trust",
        &trust,
        "--benchmark",
        &f,
        &bundle,
    ]);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 4)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let checks = r["checks"].as_array().expect("checks");
    assert!(checks.iter().all(|c| c["id"] != "2.1"));
    let c = checks.iter().find(|c| c["id"] == "3.1.2").expect("3.1.2");
    assert_eq!(c["params"]["max_token_lifetime_seconds"], 300);
    // The lab's tokens live 600 s: within v1.0.0's 3600, beyond this profile's 300.
    assert_eq!(c["results"][0]["verdict"], "FAIL", "{c}");
    let out = grade(&["--trust", &trust, "--benchmark", &f, &bundle]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tailored by acme-2027"), "{text}");
    let out = grade(&["checks", "--benchmark", &f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("deselected 2.1; refined 3.1.2: max_token_lifetime_seconds = 300"),
        "{text}"
    );
}

#[test]
fn bad_definitions_are_usage_errors_naming_file_line_and_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::read_to_string(fixture()).expect("fixture");
    let bundle = format!("{ROOT}/examples/py2.mcpev");
    let cases: [(&str, String, &str); 4] = [
        (
            "rule.toml",
            base.replacen("rule = \"tls-required\"", "rule = \"tls-everywhere\"", 1),
            "check[6].rule: \"tls-everywhere\" is not a rule of this build",
        ),
        (
            "param.toml",
            base.replace("revision_floor = \"2025-11-25\"", "revision_flor = \"2025-11-25\""),
            "params.revision_flor: rule revisions-pinned has no parameter \"revision_flor\"",
        ),
        (
            "key.toml",
            base.replacen("\n[[check]]\n", "\n[[checks]]\n", 1),
            "unknown field `checks`",
        ),
        (
            "tailor.toml",
            "format = \"mcp-probe-tailoring/1\"\nid = \"x\"\nextends = \"cis-mcp-server-1.0.0\"\ndeselect = [\"9.9\"]\n".into(),
            "line 4: deselect: 9.9 is not a check of cis-mcp-server-1.0.0",
        ),
    ];
    for (name, text, want) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, text).expect("write");
        let f = file.display().to_string();
        for args in [
            vec!["--benchmark", f.as_str(), bundle.as_str()],
            vec!["checks", "--benchmark", f.as_str()],
        ] {
            let out = grade(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(out.stdout.is_empty(), "{name}: nothing graded");
            assert!(err.contains(&format!("--benchmark {f}: ")), "{name}: {err}");
            assert!(err.contains(want), "{name}: {err}");
            assert!(err.contains("line "), "{name}: {err}");
            assert_eq!(err.lines().count(), 1, "{name}: {err}");
        }
    }
    let out = grade(&["--benchmark", "cis-mcp-server-0.9", &bundle]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("embedded: cis-mcp-server-1.0.0"));
}

#[test]
fn mcp_grade_diff_of_the_two_reports_shows_exactly_the_revision_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("v1.json"), dir.path().join("test.json"));
    std::fs::write(&a, report(None).to_string()).expect("write");
    std::fs::write(&b, report(Some(&fixture())).to_string()).expect("write");
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let out = grade(&["diff", "--format", "json", &a, &b]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).expect("diff JSON");
    assert_eq!(d["benchmark_changed"], true);
    assert_eq!(d["checks_mapped_by"], "rule");
    let mut classes: Vec<String> = d["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["class"] != serde_json::json!(["same"]))
        .map(|c| {
            let id = |s: &str| c[s]["id"].as_str().unwrap_or("-").to_string();
            format!(
                "{} {} {} -> {}",
                c["class"],
                c["rule"].as_str().unwrap_or(""),
                id("old"),
                id("new")
            )
        })
        .collect();
    classes.sort();
    assert_eq!(
        classes,
        [
            "[\"added\"] revisions-pinned - -> 1.5",
            "[\"params-changed\"] short-lived-tokens 3.1.2 -> 3.1.2",
            "[\"removed\"] idempotency-keys 5.6.1 -> -",
            "[\"renumbered\"] metadata-headers 2.4 -> 2.6",
            "[\"renumbered\"] size-limits 10.2 -> 10.3",
        ]
    );
}
