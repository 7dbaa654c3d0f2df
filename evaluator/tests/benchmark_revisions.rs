//! Benchmark definitions as data, through the binary: `mcp-grade benchmarks`, `checks`,
//! `--benchmark ID|FILE`, tailoring, and refusals that name file, line and key. The test
//! revision (tests/fixtures/test-revision.toml, not a CIS publication) renumbers two
//! checks, changes a parameter, drops a check and adds one an existing rule grades with
//! another parameter: grading the examples under it and under v1.0.0 must differ by
//! exactly that, matched through the rule ids. In every report format, a renumbered
//! check prints the revision's number (and its sub-verdicts' ids) and never its v1.0.0
//! number.

mod support;

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
        .map(|(k, (n, _))| format!("{} {} (number {n})", k.0, k.1))
        .collect();
    let mut only_new: Vec<String> = new
        .iter()
        .filter(|(k, _)| !old.contains_key(k))
        .map(|(k, (n, _))| format!("{} {} (number {n})", k.0, k.1))
        .collect();
    only_old.sort();
    only_new.sort();
    assert_eq!(
        only_old,
        [
            "idempotency-keys {} (number 5.6.1)",
            "short-lived-tokens {\"max_token_lifetime_seconds\":3600} (number 3.1.2)"
        ]
    );
    assert_eq!(
        only_new,
        [
            "revisions-pinned {\"revision_floor\":\"2025-11-25\"} (number 1.5)",
            "short-lived-tokens {\"max_token_lifetime_seconds\":900} (number 3.1.2)"
        ]
    );
    assert_eq!(same_verdicts, old.len() - 2);
    // The added check grades with its own parameter: a server whose oldest served
    // revision is 2025-11-25 passes the first `revisions-pinned` row's 2025-06-18 floor
    // but is held to 2025-11-25 by the added row, so the two are not one verdict read
    // twice.
    let new_report = report(Some(&fixture()));
    let evidence_of = |floor: &str| -> Vec<String> {
        new_report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["rule"] == "revisions-pinned" && c["params"]["revision_floor"] == floor)
            .expect("check")["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["evidence"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(evidence_of("2025-11-25")
        .iter()
        .any(|e| e.contains("2025-11-25 floor")));
    assert!(evidence_of("2025-06-18")
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
            "cis-mcp-server-1.0.0  CIS MCP Server Benchmark 1.0.0  date 2026-09-16  36 checks"
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
    let by_rule = |rule: &str| {
        checks
            .iter()
            .find(|c| c["rule"] == rule)
            .unwrap_or_else(|| panic!("{rule}"))
    };
    let tokens = by_rule("short-lived-tokens");
    assert_eq!(
        tokens["number"],
        support::rules::number("short-lived-tokens")
    );
    assert_eq!(tokens["params"]["max_token_lifetime_seconds"], 3600);
    let stream = by_rule("auth-before-stream");
    assert_eq!(stream["eras"], "every");
    assert!(stream["legs_optional"]
        .as_array()
        .expect("legs")
        .iter()
        .any(|l| l == mcp_probe_schema::vocab::leg::AUTH_NONE.as_str()));
    let out = grade(&["checks", "--benchmark", &fixture()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // The added row, under its own number, and not the dropped one.
    let rev = mcp_probe_evaluator::benchmark::Choice::Named(fixture())
        .resolve()
        .expect("the test revision loads");
    let added = rev
        .checks
        .iter()
        .find(|e| {
            e.rule == "revisions-pinned"
                && e.params != support::rules::row("revisions-pinned").params
        })
        .expect("the added row");
    assert!(
        text.contains(&format!(
            "{:<8}L1 automated wire          rule revisions-pinned (revision_floor=\"2025-11-25\")",
            added.id.as_str()
        )),
        "{text}"
    );
    assert!(
        !text.contains(&format!(
            "\n{} ",
            support::rules::number("idempotency-keys")
        )),
        "{text}"
    );
}

#[test]
fn a_tailoring_grades_its_selection_and_names_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("acme.toml");
    // A tailoring names the checks of the definition it extends by their numbers there.
    let (deselected, refined) = (
        support::rules::number("stdio-preferred"),
        support::rules::number("short-lived-tokens"),
    );
    std::fs::write(
        &file,
        format!(
            "format = \"mcp-probe-tailoring/1\"\nid = \"acme-2027\"\nextends = \"{}\"\n\
             deselect = [\"{deselected}\"]\n[params.\"{refined}\"]\nmax_token_lifetime_seconds = 300\n",
            support::rules::V1
        ),
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
    // The tailoring names v1.0.0's numbers (2.1 is `stdio-preferred`, 3.1.2
    // `short-lived-tokens`).
    assert!(checks.iter().all(|c| c["rule"] != "stdio-preferred"));
    let c = support::rules::check(&r, "short-lived-tokens");
    assert_eq!(c["params"]["max_token_lifetime_seconds"], 300);
    // The lab's tokens live 600 s: within v1.0.0's 3600, beyond this profile's 300.
    assert_eq!(c["results"][0]["verdict"], "FAIL", "{c}");
    let out = grade(&["--trust", &trust, "--benchmark", &f, &bundle]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tailored by acme-2027"), "{text}");
    let out = grade(&["checks", "--benchmark", &f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "deselected {deselected}; refined {refined}: max_token_lifetime_seconds = 300"
        )),
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

/// The rules the test revision grades under another number than cis-mcp-server-1.0.0
/// (same parameters): (rule, v1.0.0 number, the revision's number), read from the two
/// definitions.
fn renumbered() -> Vec<(&'static str, &'static str, &'static str)> {
    let rev = mcp_probe_evaluator::benchmark::Choice::Named(fixture())
        .resolve()
        .expect("the test revision loads");
    support::rules::v1()
        .checks
        .iter()
        .filter_map(|e| {
            let n = rev
                .checks
                .iter()
                .find(|r| r.rule == e.rule && r.params == e.params)?;
            (n.id.as_str() != e.id.as_str()).then_some((e.rule, e.id.as_str(), n.id.as_str()))
        })
        .collect()
}

/// The example bundles (examples/*.mcpev) and the compatibility corpus
/// (examples/compat/**/*.mcpev), after `--trust` for every key that signed them.
fn corpus_args() -> Vec<String> {
    let mut keys = Vec::new();
    let mut bundles = Vec::new();
    let mut dirs = vec![Path::new(ROOT).join("examples")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).expect("read examples") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                if p.starts_with(Path::new(ROOT).join("examples/compat")) {
                    dirs.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "mcpev") {
                bundles.push(p.display().to_string());
            } else if p.file_name().is_some_and(|n| n == "collector.pub") {
                keys.push(p.display().to_string());
            }
        }
    }
    keys.sort();
    bundles.sort();
    assert!(keys.len() > 2 && bundles.len() > 20, "{keys:?} {bundles:?}");
    keys.into_iter()
        .flat_map(|k| ["--trust".to_string(), k])
        .chain(bundles)
        .collect()
}

/// Every report format: (name, flags).
const FORMATS: &[(&str, &[&str])] = &[
    ("text summary", &[]),
    ("text --verbose", &["--verbose"]),
    ("json", &["--format", "json"]),
    ("sarif", &["--format", "sarif"]),
    ("junit", &["--format", "junit"]),
    ("markdown", &["--format", "markdown"]),
    ("html", &["--format", "html"]),
];

/// The report of the whole corpus under `benchmark` with `flags`.
fn corpus_report(benchmark: &str, flags: &[&str]) -> String {
    let corpus = corpus_args();
    let mut args: Vec<&str> = vec!["-q", "--benchmark", benchmark];
    args.extend(flags);
    args.extend(corpus.iter().map(String::as_str));
    let out = grade(&args);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 4 | 5)),
        "{flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 report")
}

/// Up to three lines of `text` around each of `spans`, to show where a number was printed.
fn around(text: &str, spans: &[std::ops::Range<usize>]) -> String {
    spans
        .iter()
        .take(3)
        .map(|r| {
            let start = text[..r.start].rfind('\n').map_or(0, |i| i + 1);
            let end = text[r.end..].find('\n').map_or(text.len(), |i| r.end + i);
            let line = &text[start..end];
            let cut = line
                .char_indices()
                .map(|(i, _)| i)
                .find(|&i| i >= 300)
                .unwrap_or(line.len());
            format!("  {}", &line[..cut])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_format_prints_a_renumbered_check_under_the_revisions_number_only() {
    let renumbered = renumbered();
    assert_eq!(
        renumbered.iter().map(|r| r.0).collect::<Vec<_>>(),
        ["metadata-headers", "size-limits"]
    );
    let fixture = fixture();
    let mut problems = Vec::new();
    let mut subs: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (format, flags) in FORMATS {
        let v1 = corpus_report(support::rules::V1, flags);
        let rev = corpus_report(&fixture, flags);
        for &(rule, old, new) in &renumbered {
            let stale = support::rules::number_spans(&rev, old);
            if !stale.is_empty() {
                problems.push(format!(
                    "{format}: {rule} printed {} time(s) under its v1.0.0 number {old}:\n{}",
                    stale.len(),
                    around(&rev, &stale)
                ));
            }
            // What v1.0.0 prints of the check, numbered by the revision, is what the
            // revision prints: the check and each sub-verdict id, as often.
            let count = |tokens: Vec<String>| {
                let mut m: BTreeMap<String, usize> = BTreeMap::new();
                for t in tokens {
                    *m.entry(t).or_default() += 1;
                }
                m
            };
            let want = count(
                support::rules::number_tokens(&v1, old)
                    .iter()
                    .map(|t| support::rules::swap_number(t, old, new))
                    .collect(),
            );
            let got = count(support::rules::number_tokens(&rev, new));
            if want.is_empty() {
                problems.push(format!("{format}: {rule}: v1.0.0 printed no {old}"));
            }
            if got != want {
                problems.push(format!(
                    "{format}: {rule}: the revision printed (id: times) {got:?}; v1.0.0 with \
                     {old} as {new}: {want:?}"
                ));
            }
            subs.entry(rule)
                .or_default()
                .extend(got.into_keys().filter(|t| t.len() > new.len()));
        }
    }
    // The sub-verdicts are printed under the revision's number somewhere (2.6a, 10.3b).
    for &(rule, _, new) in &renumbered {
        let seen = subs.get(rule).cloned().unwrap_or_default();
        if !seen.iter().any(|t| t.starts_with(new)) {
            problems.push(format!(
                "{rule}: no sub-verdict printed as {new}<letter> in any format"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_renumbered_checks_legs_and_evidence_are_v1s_with_the_number_swapped() {
    let v1: Value = serde_json::from_str(&corpus_report(support::rules::V1, &["--format", "json"]))
        .expect("JSON");
    let rev: Value =
        serde_json::from_str(&corpus_report(&fixture(), &["--format", "json"])).expect("JSON");
    let mut problems = Vec::new();
    for (rule, old, new) in renumbered() {
        let (a, b) = (
            support::rules::check(&v1, rule),
            support::rules::check(&rev, rule),
        );
        assert_eq!(a["id"], old, "{rule}");
        assert_eq!(b["id"], new, "{rule}");
        let (ra, rb) = (
            a["results"].as_array().expect("results"),
            b["results"].as_array().expect("results"),
        );
        assert_eq!(ra.len(), rb.len(), "{rule}: one result per server");
        for (x, y) in ra.iter().zip(rb) {
            let legs = |r: &Value| -> Vec<String> {
                r["legs"]
                    .as_object()
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let want: Vec<String> = legs(x)
                .iter()
                .map(|l| support::rules::swap_number(l, old, new))
                .collect();
            if legs(y) != want {
                problems.push(format!("{rule}: legs {:?}, want {want:?}", legs(y)));
            }
            for field in ["evidence", "reduction"] {
                let (t, u) = (
                    x[field].as_str().unwrap_or_default(),
                    y[field].as_str().unwrap_or_default(),
                );
                let want = support::rules::swap_number(t, old, new);
                if u != want {
                    problems.push(format!(
                        "{rule} {field}:\n  revision: {u}\n  v1.0.0 with {old} as {new}: {want}"
                    ));
                }
            }
        }
        // Nothing else of the check differs but the number.
        let want = support::rules::swap_number(&a.to_string(), old, new);
        let got = serde_json::to_string(b).expect("JSON");
        if got != want {
            problems.push(format!(
                "{rule}: the check's JSON differs beyond its number"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `mcp-grade show` grades nothing and takes no definition: it prints the bundle, whose
/// wire leg ids are the bundle vocabulary's historical names (`2.4.no_method`,
/// `10.2a.padded`), never a check or sub-verdict id a revision could renumber.
#[test]
fn show_prints_no_check_id_of_a_renumbered_check() {
    let corpus = corpus_args();
    let (keys, bundles): (Vec<&String>, Vec<&String>) = corpus
        .iter()
        .partition(|a| *a == "--trust" || a.ends_with(".pub"));
    let keys: Vec<&str> = keys.into_iter().map(String::as_str).collect();
    let renumbered = renumbered();
    let mut problems = Vec::new();
    for b in bundles {
        for json in [false, true] {
            let mut args = vec!["show", "-q"];
            if json {
                args.push("--json");
            }
            args.extend(&keys);
            args.push(b);
            let out = grade(&args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{b}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8(out.stdout).expect("UTF-8");
            for &(rule, old, new) in &renumbered {
                for n in [old, new] {
                    let at = support::rules::number_spans(&text, n);
                    if !at.is_empty() {
                        problems.push(format!(
                            "{b} (json {json}): {rule} as {n}:\n{}",
                            around(&text, &at)
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
