//! The compatibility corpus: bundles written by earlier collectors
//! (`examples/compat/collector-<commit>/`), each folder with the key that signed them and
//! `expected.json`, the verdict of every check per bundle. This build must verify and
//! grade them to exactly those verdicts: a bundle is forever, and a change here is a
//! deliberate re-grading (update `expected.json` in the commit that makes it).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn bundles_of_earlier_collectors_grade_to_their_expected_verdicts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/compat");
    let mut folders = 0;
    for entry in std::fs::read_dir(&root).expect("examples/compat") {
        let dir = entry.expect("entry").path();
        let expected = dir.join("expected.json");
        if !expected.is_file() {
            continue;
        }
        folders += 1;
        let want: Value =
            serde_json::from_slice(&std::fs::read(&expected).expect("read")).expect("json");
        let bundles = want["bundles"].as_object().expect("bundles");
        assert!(!bundles.is_empty(), "{}", expected.display());
        for (name, verdicts) in bundles {
            let out = Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
                .args(["--format", "json", "--trust"])
                .arg(dir.join("collector.pub"))
                .arg(dir.join(name))
                .output()
                .expect("run mcp-grade");
            // 0, 1 (a FAIL) and 4 (an ERROR) are verdicts; 2 and 3 are failures.
            assert!(
                matches!(out.status.code(), Some(0 | 1 | 4 | 5)),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
            let got: serde_json::Map<String, Value> = report["checks"]
                .as_array()
                .expect("checks")
                .iter()
                .map(|c| {
                    let v = c["results"]
                        .get(0)
                        .map_or(Value::Null, |r| r["verdict"].clone());
                    (c["id"].as_str().expect("id").to_string(), v)
                })
                .collect();
            assert_eq!(
                &Value::Object(got),
                verdicts,
                "{}/{name}: verdicts changed",
                dir.display()
            );
        }
    }
    assert!(folders > 0, "no compatibility folder in {}", root.display());
}
