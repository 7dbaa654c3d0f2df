//! The compatibility corpus: bundles written by earlier collectors
//! (`examples/compat/collector-<commit>/`), each folder with the key that signed them and
//! `expected.json`: per bundle the verdict of every check of `cis-mcp-server-1.0.0`, keyed
//! by the check's rule id (a revision may renumber a check; its rule id stays), and for
//! each ERROR the legs its evidence names as missing. This build must verify and grade
//! them to exactly those
//! verdicts, and every ERROR must name its missing legs and the collector (name, version
//! and build, from the bundle) that wrote the bundle without them: a bundle is forever,
//! and a check whose legs an old bundle lacks is never PASS or FAIL from absent evidence.
//! A change here is a deliberate re-grading (`scripts/compat-corpus.sh --regrade`, in the
//! commit that makes it); the folders, their commits and why each is there are listed in
//! `examples/compat/COMMITS`.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The definition `expected.json` was graded under.
const V1: &str = "cis-mcp-server-1.0.0";

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
        for (name, want) in bundles {
            let bundle = dir.join(name);
            let out = Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
                .args(["--format", "json", "--benchmark", V1, "--trust"])
                .arg(dir.join("collector.pub"))
                .arg(&bundle)
                .output()
                .expect("run mcp-grade");
            // 0, 1 (a FAIL), 4 (an ERROR) and 5 are verdicts; 2 and 3 are failures.
            assert!(
                matches!(out.status.code(), Some(0 | 1 | 4 | 5)),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
            assert_eq!(report["provenance"]["benchmark"]["id"], V1, "{name}");
            // (rule id, result): the corpus names checks by rule, never by number.
            let results: Vec<(String, &Value)> = report["checks"]
                .as_array()
                .expect("checks")
                .iter()
                .map(|c| {
                    (
                        c["rule"].as_str().expect("rule").to_string(),
                        &c["results"][0],
                    )
                })
                .collect();
            let got: serde_json::Map<String, Value> = results
                .iter()
                .map(|(id, r)| (id.clone(), r["verdict"].clone()))
                .collect();
            assert_eq!(
                &Value::Object(got),
                &want["verdicts"],
                "{}/{name}: verdicts changed",
                dir.display()
            );
            let collector = written_by(&dir, &bundle);
            let missing = want["missing"].as_object().expect("missing");
            for (id, r) in &results {
                if r["verdict"] != "ERROR" {
                    assert!(!missing.contains_key(id), "{name} {id}: not an ERROR");
                    continue;
                }
                let legs = missing
                    .get(id)
                    .and_then(Value::as_array)
                    .unwrap_or_else(|| panic!("{name} {id}: ERROR without its missing legs"));
                assert!(
                    !legs.is_empty(),
                    "{name} {id}: an ERROR names no missing leg"
                );
                let evidence = r["evidence"].as_str().expect("evidence");
                for leg in legs {
                    let leg = leg.as_str().expect("leg id");
                    assert!(
                        evidence.contains(leg),
                        "{name} {id}: the missing leg {leg} is not named: {evidence}"
                    );
                }
                for named in &collector {
                    assert!(
                        evidence.contains(named.as_str()),
                        "{name} {id}: the collector that wrote the bundle is not named \
                         ({named}): {evidence}"
                    );
                }
            }
        }
    }
    assert!(folders > 0, "no compatibility folder in {}", root.display());
}

#[test]
fn every_listed_commit_has_its_folder_and_every_folder_is_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/compat");
    let list = std::fs::read_to_string(root.join("COMMITS")).expect("examples/compat/COMMITS");
    let mut listed: Vec<String> = list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split_whitespace();
            let (commit, targets) = (f.next().expect("commit"), f.next().expect("targets"));
            assert!(
                f.next().is_some(),
                "COMMITS: {commit} says not why it is listed"
            );
            for t in targets.split(',') {
                let bundle = root.join(format!("collector-{commit}/{t}.mcpev"));
                assert!(bundle.is_file(), "{} missing", bundle.display());
            }
            format!("collector-{commit}")
        })
        .collect();
    let mut folders: Vec<String> = std::fs::read_dir(&root)
        .expect("examples/compat")
        .filter_map(|e| {
            let p = e.expect("entry").path();
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            // `examples-<version>/`: bundles kept as recorded, by a collector this
            // script cannot rebuild (graded by the test above, not listed here).
            (p.is_dir() && name.starts_with("collector-")).then_some(name)
        })
        .collect();
    listed.sort();
    folders.sort();
    assert_eq!(listed, folders);
}

/// What an ERROR must name of the collector that wrote `bundle`, read from the bundle's
/// payload (`collector.name`, `collector.version`, `collector.build`).
fn written_by(dir: &Path, bundle: &Path) -> [String; 2] {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
        .args(["show", "--json", "--trust"])
        .arg(dir.join("collector.pub"))
        .arg(bundle)
        .output()
        .expect("run mcp-grade show");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let c = &shown["collector"];
    let field = |k: &str| c[k].as_str().unwrap_or_else(|| panic!("collector.{k}"));
    [
        format!("{} {}", field("name"), field("version")),
        format!("build {}", field("build")),
    ]
}
