//! The formats assessors' tools read (`--format oscal`, `--format xccdf`), run through
//! the real binary on the example bundles: the OSCAL document validated against NIST's
//! OSCAL 1.1.2 assessment-results JSON Schema vendored under docs/schemas/vendor/ (the
//! XCCDF document is validated against the vendored XCCDF 1.2 XSD by
//! scripts/validate-formats.sh, with xmllint); both byte-identical from the same inputs;
//! each verdict where it belongs.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::grade_run::mcp_grade;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
        .collect();
    v.sort();
    v
}

fn grade(format: &str, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args: Vec<String> = vec![
        "--format".into(),
        format.into(),
        "-q".into(),
        "--trust".into(),
        Path::new(ROOT)
            .join("examples/collector.pub")
            .display()
            .to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(examples().iter().map(|p| p.display().to_string()));
    let r = mcp_grade(dir.path(), Some(&dir.path().join("home")), &args);
    assert_eq!(r.code, 1, "the examples fail checks: {r:?}");
    r.stdout
}

fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).expect("read")))
}

#[test]
fn oscal_validates_against_the_nist_schema_and_says_what_it_must() {
    let text = grade("oscal", &[]);
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    let schema_path = Path::new(ROOT)
        .join("docs/schemas/vendor/oscal-1.1.2/oscal_assessment-results_schema.json");
    let schema: Value =
        serde_json::from_slice(&std::fs::read(&schema_path).expect("vendored schema"))
            .expect("schema is JSON");
    assert_eq!(
        schema["$id"],
        "http://csrc.nist.gov/ns/oscal/1.1.2/oscal-ar-schema.json"
    );
    let v = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles");
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .take(10)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));

    let ar = &doc["assessment-results"];
    assert_eq!(ar["metadata"]["oscal-version"], "1.1.2");
    let results = ar["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "one result per run");
    let res = &results[0];
    // import-ap points into the back-matter.
    let ap = ar["import-ap"]["href"].as_str().expect("href");
    let resources = ar["back-matter"]["resources"]
        .as_array()
        .expect("resources");
    let ids: Vec<&str> = resources
        .iter()
        .map(|r| r["uuid"].as_str().expect("uuid"))
        .collect();
    assert!(ids.contains(&ap.trim_start_matches('#')), "{ap}");
    // Every bundle is a resource named by its SHA-256.
    for p in examples() {
        let h = sha256_hex(&p);
        assert!(
            resources
                .iter()
                .any(|r| r["rlinks"][0]["hashes"][0]["value"] == h.as_str()),
            "{} ({h}) is no resource",
            p.display()
        );
    }
    // reviewed-controls: every recommendation of the definition.
    let controls = res["reviewed-controls"]["control-selections"][0]["include-controls"]
        .as_array()
        .expect("include-controls");
    let control_ids: Vec<&str> = controls
        .iter()
        .map(|c| c["control-id"].as_str().expect("id"))
        .collect();
    assert!(
        control_ids.contains(&"cis-mcp-server-1.0.0-2.4"),
        "{control_ids:?}"
    );
    assert!(
        control_ids.len() > 36,
        "checks and unreached rows: {}",
        control_ids.len()
    );
    // Observations: one per check and server at least; methods TEST; evidence names a
    // bundle resource, its SHA-256 and the records.
    let obs = res["observations"].as_array().expect("observations");
    assert!(obs.len() >= 36 * examples().len(), "{}", obs.len());
    let mut verdict_of: BTreeMap<&str, &str> = BTreeMap::new();
    for o in obs {
        assert_eq!(o["methods"], serde_json::json!(["TEST"]));
        let ev = &o["relevant-evidence"][0];
        let href = ev["href"].as_str().expect("href");
        assert!(ids.contains(&href.trim_start_matches('#')), "{href}");
        let d = ev["description"].as_str().expect("description");
        assert!(
            d.contains("bundle SHA-256 ") && d.contains("records"),
            "{d}"
        );
        let verdict = o["props"]
            .as_array()
            .expect("props")
            .iter()
            .find(|p| p["name"] == "verdict")
            .and_then(|p| p["value"].as_str())
            .expect("verdict prop");
        verdict_of.insert(o["uuid"].as_str().expect("uuid"), verdict);
        if !matches!(verdict, "PASS" | "FAIL") {
            assert!(
                o["remarks"]
                    .as_str()
                    .is_some_and(|r| r.starts_with(verdict)),
                "a {verdict} observation says why it is no finding: {o}"
            );
        }
    }
    // Findings: satisfied only for PASS, not-satisfied only for FAIL.
    let findings = res["findings"].as_array().expect("findings");
    let (mut sat, mut unsat) = (0, 0);
    for f in findings {
        let state = f["target"]["status"]["state"].as_str().expect("state");
        let first = f["related-observations"][0]["observation-uuid"]
            .as_str()
            .expect("related");
        let v = verdict_of[first];
        match state {
            "satisfied" => {
                assert_eq!(v, "PASS");
                sat += 1;
            }
            "not-satisfied" => {
                assert_eq!(v, "FAIL");
                unsat += 1;
            }
            other => panic!("state {other}"),
        }
    }
    let pass = verdict_of.values().filter(|v| **v == "PASS").count();
    assert!(sat > 0 && unsat > 0 && sat <= pass, "{sat} {unsat} {pass}");
    // No wall-clock time: every time is a collection time of a bundle.
    assert!(!text.contains(&chrono::Utc::now().format("%Y-%m-%dT%H:%M").to_string()));
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    for f in ["oscal", "xccdf"] {
        let a = grade(f, &[]);
        let b = grade(f, &["--jobs", "1"]);
        assert_eq!(a, b, "{f} differs between two runs");
    }
}

#[test]
fn xccdf_has_a_rule_result_per_recommendation_and_server_with_each_verdict_mapped() {
    let text = grade("xccdf", &[]);
    assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Benchmark xmlns=\"http://checklists.nist.gov/xccdf/1.2\""));
    let rules = text
        .matches("\n  <Rule id=\"xccdf_invalid.example.mcp-probe_rule_")
        .count();
    let tests = text
        .matches("\n  <TestResult id=\"xccdf_invalid.example.mcp-probe_testresult_")
        .count();
    assert_eq!(tests, examples().len());
    assert_eq!(text.matches("<rule-result ").count(), rules * tests);
    // The JSON report's verdicts, check by check and server by server, in the same order.
    let json: Value = serde_json::from_str(&grade("json", &[])).expect("json");
    let mut expected = Vec::new();
    for c in json["checks"].as_array().expect("checks") {
        for r in c["results"].as_array().expect("results") {
            expected.push((
                c["id"].as_str().expect("id").to_string(),
                c["source"].as_str().unwrap_or("").to_string(),
                r["verdict"].as_str().expect("verdict").to_string(),
            ));
        }
    }
    for (id, source, verdict) in expected {
        let want = match (source.as_str(), verdict.as_str()) {
            ("reported only", _) => "notchecked",
            (_, "PASS") => "pass",
            (_, "FAIL") => "fail",
            (_, "ERROR") => "error",
            (_, "UNKNOWN") => "unknown",
            (_, "N/A" | "NO-REV") => "notapplicable",
            (_, v) => panic!("verdict {v}"),
        };
        let rule =
            format!("idref=\"xccdf_invalid.example.mcp-probe_rule_cis-mcp-server-1.0.0-{id}\"");
        let n = text
            .split("<rule-result ")
            .filter(|r| r.starts_with(&rule) && r.contains(&format!("<result>{want}</result>")))
            .count();
        assert!(n > 0, "{id} {verdict}: no rule-result {want}");
    }
}

/// An operator attestation is an observation of its own with method EXAMINE (no subject,
/// its evidence reference, its status), the document still valid against NIST's schema;
/// one that contradicts a check decided from the wire says CONFLICT and changes no
/// finding.
#[test]
fn oscal_writes_attestations_as_examine_observations() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bm = mcp_probe_evaluator::benchmark::Benchmark::builtin();
    let reported = bm
        .checks
        .iter()
        .find(|e| e.rule == "stdio-preferred")
        .expect("a reported-only row")
        .id
        .as_str();
    let wire = bm
        .checks
        .iter()
        .find(|e| e.rule == "origin-validated")
        .expect("a wire row")
        .id
        .as_str();
    let file = dir.path().join("attestations.toml");
    std::fs::write(
        &file,
        format!(
            "[[attestation]]\nrecommendation = \"{reported}\"\nstatus = \"satisfied\"\nby = \"ops\"\ndate = \"2026-11-01\"\nevidence = \"https://tickets.example/OPS-1\"\n\n\
             [[attestation]]\nrecommendation = \"{wire}\"\nstatus = \"satisfied\"\nby = \"ops\"\ndate = \"2026-11-01\"\nevidence = \"OPS-2\"\ncomment = \"proxy checks Origin\"\n"
        ),
    )
    .expect("write");
    let with = grade("oscal", &["--attestations", file.to_str().expect("utf-8")]);
    let without = grade("oscal", &[]);
    let doc: Value = serde_json::from_str(&with).expect("JSON");
    let plain: Value = serde_json::from_str(&without).expect("JSON");
    let result = &doc["assessment-results"]["results"][0];
    let examined: Vec<&Value> = result["observations"]
        .as_array()
        .expect("observations")
        .iter()
        .filter(|o| o["methods"] == serde_json::json!(["EXAMINE"]))
        .collect();
    assert_eq!(examined.len(), 2, "{examined:?}");
    let first = examined[0];
    assert!(first.get("subjects").is_none(), "{first}");
    assert_eq!(
        first["relevant-evidence"][0]["href"],
        "https://tickets.example/OPS-1"
    );
    let second = examined[1];
    assert!(
        second["relevant-evidence"][0].get("href").is_none(),
        "{second}"
    );
    // Some example fails origin-validated: the attestation is shown as a conflict.
    assert!(
        second["remarks"]
            .as_str()
            .unwrap_or_default()
            .contains("CONFLICT: the wire says FAIL"),
        "{second}"
    );
    // Findings come from the wire alone.
    assert_eq!(
        result["findings"].as_array().map(Vec::len),
        plain["assessment-results"]["results"][0]["findings"]
            .as_array()
            .map(Vec::len)
    );
    let schema_path = Path::new(ROOT)
        .join("docs/schemas/vendor/oscal-1.1.2/oscal_assessment-results_schema.json");
    let schema: Value =
        serde_json::from_slice(&std::fs::read(&schema_path).expect("vendored schema"))
            .expect("schema is JSON");
    let v = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles");
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}
