//! The published JSON Schemas of mcp-grade's JSON outputs (docs/schemas/), generated from
//! the types that write them: each committed file must equal what the types generate
//! (`UPDATE_SCHEMAS=1 cargo test -p mcp-probe-evaluator --test schemas` rewrites them),
//! and real outputs on the example bundles must validate against the committed files.

mod support;

use support::grade_run;

use std::path::{Path, PathBuf};

use grade_run::mcp_grade;
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("report", mcp_probe_evaluator::report::json::schema()),
        ("verify", mcp_probe_evaluator::commands::verify_schema()),
        ("diff", mcp_probe_evaluator::diff::schema()),
        ("report-diff", mcp_probe_evaluator::diff::report_schema()),
        ("show", mcp_probe_evaluator::view::schema()),
        (
            "benchmark",
            mcp_probe_evaluator::benchmark::load::definition_schema(),
        ),
        (
            "tailoring",
            mcp_probe_evaluator::benchmark::load::tailoring_schema(),
        ),
        (
            "checks",
            mcp_probe_evaluator::benchmark::list::checks_schema(),
        ),
        ("attestations", mcp_probe_evaluator::attestations::schema()),
        ("trust-list", mcp_probe_evaluator::trust_list::schema()),
        (
            "grading-predicate",
            mcp_probe_evaluator::attest::predicate_schema(),
        ),
    ]
}

fn file(name: &str) -> PathBuf {
    Path::new(ROOT).join(format!("docs/schemas/{name}.schema.json"))
}

fn committed(name: &str) -> Value {
    let text = std::fs::read_to_string(file(name))
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SCHEMAS=1 writes it)", file(name).display()));
    serde_json::from_str(&text).expect("schema is JSON")
}

#[test]
fn the_committed_schemas_are_what_the_types_generate() {
    for (name, generated) in schemas() {
        if std::env::var_os("UPDATE_SCHEMAS").is_some() {
            let mut text = serde_json::to_string_pretty(&generated).expect("json");
            text.push('\n');
            std::fs::write(file(name), text).expect("write schema");
        }
        assert_eq!(
            committed(name),
            generated,
            "docs/schemas/{name}.schema.json is out of date: UPDATE_SCHEMAS=1 cargo test -p mcp-probe-evaluator --test schemas"
        );
    }
}

fn validator(name: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&committed(name)).expect("schema compiles")
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn real_outputs_validate_against_the_committed_schemas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let ex = examples();
    // The report of every example, with a policy and waivers so that every optional key
    // is present.
    let w = dir.path().join("w.toml");
    std::fs::write(
        &w,
        "[[waiver]]\ncheck = \"1.1\"\nendpoint = \"*\"\nreason = \"r\"\nexpires = 2999-12-31\n\n[[waiver]]\ncheck = \"2.2\"\nendpoint = \"none\"\nreason = \"r\"\nexpires = 2000-01-01\n",
    )
    .expect("write");
    let policy = Path::new(ROOT).join("examples/policy/policy.toml");
    let mut args: Vec<String> = vec!["--format".into(), "json".into(), "-q".into()];
    args.extend([
        "--waivers".into(),
        w.display().to_string(),
        "--policy".into(),
        policy.display().to_string(),
    ]);
    args.extend(ex.iter().cloned());
    let r = mcp_grade(dir.path(), Some(&home), &args);
    let report: Value = serde_json::from_str(&r.stdout).expect("report json");
    assert!(report.get("waivers").is_some() && report.get("policy").is_some());
    assert_valid(&validator("report"), &report, "report");
    let plain = mcp_grade(dir.path(), Some(&home), ["--format", "json", "-q", &ex[0]]);
    assert_valid(
        &validator("report"),
        &serde_json::from_str(&plain.stdout).expect("json"),
        "report without options",
    );
    // verify --json: one line per bundle, valid and not.
    let bad = dir.path().join("bad.mcpev");
    std::fs::write(&bad, b"not a bundle").expect("write");
    let mut args: Vec<String> = vec!["verify".into(), "--json".into()];
    args.extend(ex.iter().cloned());
    args.push(bad.display().to_string());
    let r = mcp_grade(dir.path(), Some(&home), &args);
    let v = validator("verify");
    let mut lines = 0;
    for l in r.stdout.lines() {
        assert_valid(&v, &serde_json::from_str(l).expect("json line"), l);
        lines += 1;
    }
    assert_eq!(lines, ex.len() + 1);
    // verify --json with --trust-list (and the anchor of the stamped example's TSA): each
    // line has `key` (null unless valid), judged on the timestamp where one verifies.
    let list = dir.path().join("trust-list.toml");
    let public = std::fs::read_to_string(Path::new(ROOT).join("examples/collector.pub"))
        .expect("examples/collector.pub");
    std::fs::write(
        &list,
        format!("[[key]]\npublic_key = '''\n{public}'''\nname = \"examples\"\nnot_before = 2000-01-01T00:00:00Z\n"),
    )
    .expect("write");
    let mut args: Vec<String> = vec![
        "verify".into(),
        "--json".into(),
        "--trust-list".into(),
        list.display().to_string(),
        "--tsa-cert".into(),
        Path::new(ROOT)
            .join("examples/tsa/ca.pem")
            .display()
            .to_string(),
    ];
    args.extend(ex.iter().cloned());
    args.push(bad.display().to_string());
    let r = mcp_grade(dir.path(), Some(&home), &args);
    let (mut keyed, mut stamped) = (0, 0);
    for l in r.stdout.lines() {
        let line: Value = serde_json::from_str(l).expect("json line");
        assert_valid(&v, &line, l);
        assert!(line.get("key").is_some(), "{l}");
        keyed += usize::from(line["key"]["source"] == "trust-list");
        stamped += usize::from(line["key"]["judged_on"] == "timestamp");
    }
    assert_eq!(keyed, ex.len(), "{r:?}");
    assert!(stamped > 0, "no example judged on its timestamp: {r:?}");
    // diff --format json, unchanged.
    let r = mcp_grade(
        dir.path(),
        Some(&home),
        ["diff", "--format", "json", &ex[0], &ex[0]],
    );
    assert_valid(
        &validator("diff"),
        &serde_json::from_str(&r.stdout).expect("diff json"),
        "diff",
    );
    // diff --format json of two reports: the report above against the one without
    // options, with rule ids added to one check of the first so that every optional
    // key is present (a renumbered check, params, both sides' servers).
    let mut ruled = report.clone();
    ruled["provenance"] = serde_json::json!({"benchmark": {"id": "b", "name": "n",
        "version": "1", "sha256": "00", "tailoring": {"file": "t.toml"}}});
    ruled["checks"][0]["rule"] = Value::String("r".into());
    ruled["checks"][0]["params"] = serde_json::json!({"n": 1});
    let mut other = serde_json::from_str::<Value>(&plain.stdout).expect("json");
    other["checks"][0]["rule"] = Value::String("r".into());
    other["checks"][0]["params"] = serde_json::json!({"n": 2});
    other["checks"][0]["id"] = Value::String("0.1".into());
    let (ra, rb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&ra, ruled.to_string()).expect("write");
    std::fs::write(&rb, other.to_string()).expect("write");
    for by in ["endpoint", "identity"] {
        let r = mcp_grade(
            dir.path(),
            Some(&home),
            [
                "diff",
                "--format",
                "json",
                "--match",
                by,
                ra.to_str().expect("utf-8"),
                rb.to_str().expect("utf-8"),
            ],
        );
        assert_eq!(r.code, 1, "{r:?}");
        let d: Value = serde_json::from_str(&r.stdout).expect("report diff json");
        assert_valid(&validator("report-diff"), &d, by);
        assert!(
            !d["servers"].as_array().expect("servers").is_empty(),
            "{d:#}"
        );
    }
    // show --json of every example, and of a bundle that failed verification (shown
    // as far as it decodes).
    let v = validator("show");
    for b in &ex {
        let r = mcp_grade(dir.path(), Some(&home), ["show", "--json", b.as_str()]);
        assert_valid(&v, &serde_json::from_str(&r.stdout).expect("show json"), b);
    }
    let mut bytes = std::fs::read(&ex[0]).expect("read");
    let n = bytes.len();
    bytes[n - 10] ^= 0xff;
    let tampered = dir.path().join("tampered.mcpev");
    std::fs::write(&tampered, &bytes).expect("write");
    let r = mcp_grade(
        dir.path(),
        Some(&home),
        ["show", "--json", tampered.to_str().expect("utf-8")],
    );
    assert_eq!(r.code, 3, "{r:?}");
    assert_valid(
        &v,
        &serde_json::from_str(&r.stdout).expect("show json"),
        "tampered",
    );
    // The validator does reject what the schema forbids.
    let mut broken = report.clone();
    broken["graded"]["count"] = Value::String("many".into());
    assert!(!validator("report").is_valid(&broken));
}

#[test]
fn a_trust_list_validates_against_the_published_schema() {
    let v = validator("trust-list");
    let text = "[[key]]\npublic_key = \"MCowBQYDK2VwAyEAsrtDnBe9H54oxAFaZ5xTN3JQ4H9TafGgQQDMY8JgonE=\"\n\
                name = \"k\"\nnot_before = \"2025-01-01T00:00:00Z\"\nrevoked_at = \"2026-01-01T00:00:00+01:00\"\n\
                comment = \"c\"\n";
    let doc: Value = toml::from_str(text).expect("TOML");
    assert_valid(&v, &doc, "trust list");
    let mut unknown = doc.clone();
    unknown["key"][0]["expires"] = Value::String("2027-01-01T00:00:00Z".into());
    assert!(!v.is_valid(&unknown), "an unknown field is invalid");
    let mut keyless = doc;
    keyless["key"][0]
        .as_object_mut()
        .expect("a table")
        .remove("public_key");
    assert!(!v.is_valid(&keyless), "a key without public_key is invalid");
}

#[test]
fn the_definitions_validate_against_the_published_benchmark_schema() {
    let v = validator("benchmark");
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("evaluator/benchmarks"))
        .expect("evaluator/benchmarks")
        .map(|e| e.expect("entry").path())
        .collect();
    files.push(Path::new(ROOT).join("evaluator/tests/fixtures/test-revision.toml"));
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let doc: Value = toml::from_str(&text).expect("TOML");
        assert_valid(&v, &doc, &f.display().to_string());
    }
    let bad: Value = serde_json::json!({"format": "mcp-probe-benchmark/1", "id": "x", "name": "n", "version": "1", "check": [{"number": "1"}]});
    assert!(
        v.iter_errors(&bad).next().is_some(),
        "an incomplete row is invalid"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let out = mcp_grade(dir.path(), None, ["checks", "--format", "json"]);
    let doc: Value = serde_json::from_str(&out.stdout).expect("checks JSON");
    assert_valid(&validator("checks"), &doc, "mcp-grade checks --format json");
}
