//! `mcp-grade --attestations FILE` run as the real binary: the coverage line, the
//! attestations (completing, conflicting, expired) and the score in every report format,
//! and bad files refused with a one-line usage error naming the entry.
//!
//! Numbers are never written here: they come from the report itself (a check's source
//! and verdict) and from the built-in definition (its unreached recommendations).

mod support;

use std::path::Path;

use mcp_probe_evaluator::benchmark::Benchmark;
use serde_json::Value;
use support::grade_run::{mcp_grade, Run};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");

fn grade(dir: &Path, args: &[&str]) -> Run {
    mcp_grade(dir, Some(&dir.join("home")), args)
}

fn entry(rec: &str, status: &str, by: &str, extra: &str) -> String {
    format!(
        "[[attestation]]\nrecommendation = \"{rec}\"\nstatus = \"{status}\"\nby = \"{by}\"\n\
         date = 2026-10-01\nevidence = \"SEC-{by}\"\n{extra}\n"
    )
}

/// `(number, source, verdict)` of each check of a one-server JSON report.
fn checks(v: &Value) -> Vec<(String, String, String)> {
    v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_string(),
                c["source"].as_str().expect("source").to_string(),
                c["results"][0]["verdict"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn attestations_coverage_conflict_expiry_and_score_in_every_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = "py1.mcpev";
    std::fs::copy(Path::new(EXAMPLES).join(b), dir.path().join(b)).expect("copy");
    let plain = grade(dir.path(), &["-q", "--format", "json", b]);
    let v: Value = serde_json::from_str(&plain.stdout).expect("json");
    let rows = checks(&v);
    let find = |source: &str, verdict: &str| {
        rows.iter()
            .find(|(_, s, x)| s == source && (verdict.is_empty() || x == verdict))
            .map(|(n, _, _)| n.clone())
            .unwrap_or_else(|| panic!("py1 has a {source} check with {verdict:?}"))
    };
    let reported = find("reported only", "");
    let failing = find("wire", "FAIL");
    let passing = find("wire", "PASS");
    let unreached: Vec<&str> = Benchmark::builtin()
        .unreached
        .iter()
        .filter(|u| !u.is_section())
        .map(|u| u.section)
        .collect();
    let (u1, u2, u3) = (unreached[0], unreached[1], unreached[2]);

    // Without --attestations: the coverage line and the score, and no attestations.
    let wire = rows.iter().filter(|(_, s, _)| s != "reported only").count();
    let m = rows.len() - wire;
    let base = format!(
        "{wire} of 55 decided from the wire, {m} reported, 0 attested, the rest ({}) not reachable from outside",
        55 - wire - m
    );
    assert_eq!(v["coverage"]["line"], base.as_str());
    assert!(v.get("attestations").is_none());
    assert!(v["provenance"].get("attestations").is_none());
    let (pass, fail) = (v["totals"]["PASS"].as_u64(), v["totals"]["FAIL"].as_u64());
    assert_eq!(v["score"]["overall"]["pass"].as_u64(), pass);
    assert_eq!(v["score"]["overall"]["fail"].as_u64(), fail);
    let (p, f) = (pass.expect("pass") as f64, fail.expect("fail") as f64);
    let percent = format!("{:.1}%", (p * 1000.0 / (p + f)).round() / 10.0);

    let file = [
        entry(
            &reported,
            "satisfied",
            "alice",
            "comment = \"checked the logs\"",
        ),
        entry(u1, "not-applicable", "bob", ""),
        entry(u2, "not-satisfied", "carol", ""),
        entry(u3, "satisfied", "dave", "expires = 2001-01-01"),
        entry(&failing, "satisfied", "erin", ""),
        entry(&passing, "not-satisfied", "frank", ""),
    ]
    .concat();
    std::fs::write(dir.path().join("att.toml"), &file).expect("write");
    let expired = format!(
        "line 22: expired attestation of {u3} by dave: its last day was 2001-01-01, it no longer counts"
    );
    let with = format!(
        "{wire} of 55 decided from the wire, {} reported, 3 attested, the rest ({}) not reachable from outside",
        m - 1,
        55 - wire - (m - 1) - 3
    );

    // Text: the expiry warning on stderr; coverage, conflict and score in the summary.
    let r = grade(dir.path(), &["--attestations", "att.toml", b]);
    assert_eq!(
        r.code, plain.code,
        "attestations never change the exit status: {r:?}"
    );
    assert_eq!(
        r.stderr
            .matches("warning: --attestations att.toml: ")
            .count(),
        1,
        "{r:?}"
    );
    assert!(r.stderr.contains(&expired), "{r:?}");
    let words = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains(&format!("coverage: {with}")), "{r:?}");
    assert!(
        words.contains(&format!(
            "{reported} {}",
            Benchmark::builtin().entry(&reported).expect("row").title
        )),
        "{r:?}"
    );
    assert!(
        words.contains("attested: satisfied by alice on 2026-10-01 (SEC-alice) (checked the logs)"),
        "{r:?}"
    );
    assert!(
        words.contains(
            "CONFLICT: the wire says FAIL on [1]; attested satisfied by erin on 2026-10-01 (SEC-erin); the verdict stands"
        ),
        "{r:?}"
    );
    assert!(
        words.contains("CONFLICT: the wire says PASS on [1]; attested not-satisfied by frank"),
        "{r:?}"
    );
    assert!(words.contains(&expired), "{r:?}");
    assert!(words.contains(&format!("score: {percent} (")), "{r:?}");
    assert!(
        words.contains("attestations att.toml (sha256 "),
        "provenance: {r:?}"
    );

    let r = grade(
        dir.path(),
        &["-q", "--verbose", "--attestations", "att.toml", b],
    );
    assert_eq!(r.stderr, "", "-q silences the warning");
    assert!(r.stdout.contains(&format!("coverage: {with}\n")), "{r:?}");
    assert!(r.stdout.contains(&format!("score: {percent} (")), "{r:?}");
    assert!(
        r.stdout.contains("CONFLICT: the wire says FAIL on [1]"),
        "{r:?}"
    );

    // JSON: coverage, score, the attestations and their conflicts, the provenance.
    let r = grade(
        dir.path(),
        &["-q", "--format", "json", "--attestations", "att.toml", b],
    );
    let j: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(j["coverage"]["line"], with.as_str());
    assert_eq!(j["coverage"]["attested"], 3);
    assert_eq!(
        j["score"], v["score"],
        "attestations never change the score"
    );
    let sha = j["attestations"]["sha256"].as_str().expect("sha256");
    assert_eq!(j["provenance"]["attestations"]["sha256"], sha);
    assert_eq!(j["provenance"]["attestations"]["file"], "att.toml");
    let in_force = j["attestations"]["in_force"].as_array().expect("in force");
    assert_eq!(in_force.len(), 5);
    let conflicts: Vec<&str> = in_force
        .iter()
        .filter(|a| !a["conflict"].is_null())
        .map(|a| a["recommendation"].as_str().expect("number"))
        .collect();
    assert_eq!(conflicts.len(), 2);
    assert!(conflicts.contains(&failing.as_str()) && conflicts.contains(&passing.as_str()));
    assert_eq!(j["attestations"]["expired"][0]["recommendation"], u3);
    // The verdicts stand.
    assert_eq!(checks(&j), rows);

    // Markdown and HTML: coverage, conflict, score; SARIF and JUnit: coverage and the
    // file in the provenance.
    for format in ["markdown", "html"] {
        let r = grade(
            dir.path(),
            &["-q", "--format", format, "--attestations", "att.toml", b],
        );
        assert!(r.stdout.contains(&with), "{format}: {r:?}");
        // (Markdown escapes the brackets of `[1]`.)
        assert!(
            r.stdout.contains("CONFLICT: the wire says FAIL on "),
            "{format}"
        );
        assert!(
            r.stdout.contains(&format!("score: {percent} (")),
            "{format}"
        );
        assert!(r.stdout.contains(sha), "{format}: provenance");
    }
    let r = grade(
        dir.path(),
        &["-q", "--format", "sarif", "--attestations", "att.toml", b],
    );
    let s: Value = serde_json::from_str(&r.stdout).expect("sarif");
    let props = &s["runs"][0]["properties"];
    assert_eq!(props["coverage"]["line"], with.as_str());
    assert_eq!(props["provenance"]["attestations"]["sha256"], sha);
    assert!(props.get("score").is_none(), "no score in SARIF");
    let r = grade(
        dir.path(),
        &["-q", "--format", "junit", "--attestations", "att.toml", b],
    );
    assert!(
        r.stdout
            .contains(&format!("<property name=\"coverage\" value=\"{with}\"")),
        "{r:?}"
    );
    assert!(r.stdout.contains(sha), "junit: provenance");
}

#[test]
fn bad_attestations_are_usage_errors_naming_the_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = "py1.mcpev";
    std::fs::copy(Path::new(EXAMPLES).join(b), dir.path().join(b)).expect("copy");
    let u = Benchmark::builtin()
        .unreached
        .iter()
        .find(|u| !u.is_section())
        .expect("unreached")
        .section;
    let cases = [
        (
            entry("99.9", "satisfied", "a", ""),
            "line 2: attestation of \"99.9\": not a recommendation",
        ),
        (
            entry(u, "fine", "a", ""),
            "status \"fine\" is not one of satisfied, not-satisfied, not-applicable",
        ),
        (
            entry(u, "satisfied", "a", "").replace("2026-10-01", "\"2026-13-01\""),
            "date \"2026-13-01\" is not a date (YYYY-MM-DD)",
        ),
        (
            [
                entry(u, "satisfied", "a", ""),
                entry(u, "satisfied", "b", ""),
            ]
            .concat(),
            "given twice (first at line 1)",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(dir.path().join("bad.toml"), &text).expect("write");
        let r = grade(dir.path(), &["--attestations", "bad.toml", b]);
        assert_eq!(r.code, 2, "{r:?}");
        assert_eq!(r.stdout, "", "{r:?}");
        assert_eq!(r.stderr.lines().count(), 1, "one line: {r:?}");
        assert!(r.stderr.contains("--attestations bad.toml: line "), "{r:?}");
        assert!(r.stderr.contains(want), "{want}: {r:?}");
    }
}
