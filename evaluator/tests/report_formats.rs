//! The report formats for pipelines, run through the real binary on the example bundles
//! and read back by real consumers: SARIF validated against the official SARIF 2.1.0
//! JSON Schema (`lab/formats`, installed by lab/install.sh) and checked for what GitHub
//! code scanning needs to accept an upload.

mod support;

use support::grade_run;

use std::path::{Path, PathBuf};

use grade_run::mcp_grade;
use serde_json::Value;

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

/// The official schema, installed by lab/install.sh ([`support::lab::require_installed`]).
fn sarif_schema() -> Option<Value> {
    let p = support::lab::require_installed(
        "lab/formats/node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json",
    )?;
    Some(
        serde_json::from_slice(&std::fs::read(&p).expect("read the schema"))
            .expect("schema is JSON"),
    )
}

/// Replace every occurrence of the schema's broken language-tag pattern; returns how many.
fn fix_patterns(v: &mut Value) -> usize {
    const BROKEN: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match v {
        Value::Object(m) => {
            let mut n = 0;
            for (k, x) in m.iter_mut() {
                if k == "pattern" && x.as_str() == Some(BROKEN) {
                    *x = Value::String("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$".into());
                    n += 1;
                } else {
                    n += fix_patterns(x);
                }
            }
            n
        }
        Value::Array(a) => a.iter_mut().map(fix_patterns).sum(),
        _ => 0,
    }
}

fn sarif_of(args: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all: Vec<String> = vec!["--format".into(), "sarif".into(), "-q".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(examples().iter().map(|p| p.display().to_string()));
    let r = mcp_grade(dir.path(), Some(&dir.path().join("home")), &all);
    let v: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {r:?}"));
    (r.code, v)
}

#[test]
fn sarif_validates_and_meets_code_scanning_requirements() {
    let (code, log) = sarif_of(&[]);
    assert_eq!(code, 1, "the examples fail checks");
    if let Some(mut schema) = sarif_schema() {
        // The published schema's `language` pattern (`^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$`)
        // is not a valid regex, so the validator refuses the schema; it is replaced by
        // the pattern it means (a language tag such as `en` or `en-US`). This report
        // writes no `language` anyway.
        let fixed = fix_patterns(&mut schema);
        assert!(
            fixed > 0,
            "the schema changed: no broken language pattern left"
        );
        let v = jsonschema::draft7::new(&schema).expect("the SARIF schema compiles");
        let errors: Vec<String> = v
            .iter_errors(&log)
            .take(5)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        // The validator does reject what the schema forbids.
        let mut bad = log.clone();
        bad["runs"][0]["results"][0]["kind"] = Value::String("failed".into());
        assert!(
            !v.is_valid(&bad),
            "a kind outside the enum must not validate"
        );
    }
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"]
        .as_str()
        .is_some_and(|s| s.contains("sarif-2.1.0")));
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 36, "one rule per check");
    let sections: Vec<&str> = run["properties"]["notReachable"]
        .as_array()
        .expect("notReachable")
        .iter()
        .filter_map(|u| u["section"].as_str())
        .collect();
    assert_eq!(sections, ["4", "6", "8", "9"]);
    for r in rules {
        let sev: f64 = r["properties"]["security-severity"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("security-severity");
        assert!((0.0..=10.0).contains(&sev));
        let tags = r["properties"]["tags"].as_array().expect("tags");
        assert!(tags.iter().any(|t| t == "L1" || t == "L2"), "{r}");
        assert!(r["help"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Remediation: ")));
        assert!(r["helpUri"]
            .as_str()
            .is_some_and(|u| u.contains("docs/checks.md#")));
        assert!(
            r["shortDescription"]["text"].is_string() && r["fullDescription"]["text"].is_string()
        );
    }
    let results = run["results"].as_array().expect("results");
    // One result per non-PASS verdict: the JSON report of the same bundles agrees.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args: Vec<String> = vec!["--format".into(), "json".into(), "-q".into()];
    args.extend(examples().iter().map(|p| p.display().to_string()));
    let json: Value =
        serde_json::from_str(&mcp_grade(dir.path(), Some(&dir.path().join("home")), &args).stdout)
            .expect("json report");
    let non_pass: u64 = ["FAIL", "ERROR", "UNKNOWN", "N/A", "NO-REV"]
        .iter()
        .map(|v| json["totals"][v].as_u64().expect("count"))
        .sum();
    assert_eq!(results.len() as u64, non_pass);
    let mut prints = std::collections::HashSet::new();
    for r in results {
        let id = r["ruleId"].as_str().expect("ruleId");
        let idx = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[idx]["id"], id, "ruleIndex points at the rule");
        assert!(r["message"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        let loc = &r["locations"][0];
        let uri = loc["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .expect("uri");
        assert!(uri.ends_with(".mcpev"), "{uri}");
        let endpoint = loc["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .expect("endpoint");
        let fp = r["partialFingerprints"]["mcpCheckEndpoint/v1"]
            .as_str()
            .expect("fingerprint");
        assert_eq!(fp.len(), 64);
        let want = hex::encode(mcp_probe_schema::bundle::sha256(
            format!("{id}\n{endpoint}").as_bytes(),
        ));
        assert_eq!(fp, want, "stable: the check id and the endpoint only");
        prints.insert((fp.to_string(), uri.to_string()));
        match (
            r["properties"]["verdict"].as_str(),
            r["kind"].as_str(),
            r["level"].as_str(),
        ) {
            (Some("FAIL"), Some("fail"), Some("error"))
            | (Some("ERROR"), Some("fail"), Some("warning"))
            | (Some("UNKNOWN"), Some("review"), Some("none"))
            | (Some("N/A" | "NO-REV"), Some("notApplicable"), Some("none")) => {}
            other => panic!("verdict, kind and level disagree: {other:?}"),
        }
    }
    assert_eq!(
        prints.len(),
        results.len(),
        "one fingerprint per check, endpoint and bundle"
    );
}

#[test]
fn a_waived_result_is_an_accepted_suppression_in_sarif() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = dir.path().join("w.toml");
    // A waiver names a check by its number (here under v1.0.0, the default).
    let pinned = support::rules::number("revisions-pinned");
    std::fs::write(
        &w,
        format!(
            "[[waiver]]\ncheck = \"{pinned}\"\nendpoint = \"*\"\nreason = \"pinning tracked\"\nexpires = 2999-12-31\n"
        ),
    )
    .expect("write");
    let (_, log) = sarif_of(&["--waivers", w.to_str().expect("utf-8")]);
    let results = log["runs"][0]["results"].as_array().expect("results");
    let fails: Vec<&Value> = results
        .iter()
        .filter(|r| r["ruleId"] == pinned && r["properties"]["verdict"] == "FAIL")
        .collect();
    assert!(!fails.is_empty());
    for r in fails {
        let s = &r["suppressions"][0];
        assert_eq!(
            (s["kind"].as_str(), s["status"].as_str()),
            (Some("external"), Some("accepted")),
            "{r}"
        );
        assert!(s["justification"]
            .as_str()
            .is_some_and(|j| j.starts_with("pinning tracked")));
    }
    assert!(results
        .iter()
        .filter(|r| r["ruleId"] != pinned)
        .all(|r| r.get("suppressions").is_none()));
}

/// The JUnit report read back by junitparser (lab/.venv-formats, installed by
/// lab/install.sh): per server, a test per check; FAIL failures, ERROR errors, the rest
/// skipped, as the JSON report of the same bundles counts them.
#[test]
fn junit_is_read_back_by_a_junit_consumer() {
    let Some(py) = support::lab::require_installed("lab/.venv-formats/bin/python") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let bundles: Vec<String> = examples().iter().map(|p| p.display().to_string()).collect();
    let xml = dir.path().join("report.xml");
    let mut args: Vec<String> = vec!["--format".into(), "junit".into(), "-q".into(), "-o".into()];
    args.push(xml.display().to_string());
    args.extend(bundles.iter().cloned());
    let r = mcp_grade(dir.path(), Some(&home), &args);
    assert_eq!(r.code, 1, "{r:?}");
    let mut jargs: Vec<String> = vec!["--format".into(), "json".into(), "-q".into()];
    jargs.extend(bundles.iter().cloned());
    let json: Value =
        serde_json::from_str(&mcp_grade(dir.path(), Some(&home), &jargs).stdout).expect("json");
    let out = std::process::Command::new(&py)
        .arg("-c")
        .arg(
            "import json, sys\n\
             from junitparser import JUnitXml, Failure, Error, Skipped\n\
             x = JUnitXml.fromfile(sys.argv[1])\n\
             out = []\n\
             for s in x:\n\
             \x20   cases = list(s)\n\
             \x20   kinds = [type(c.result[0]).__name__ if c.result else 'pass' for c in cases]\n\
             \x20   out.append({'name': s.name, 'tests': s.tests, 'failures': s.failures, 'errors': s.errors, 'skipped': s.skipped, 'kinds': kinds, 'names': [c.name for c in cases]})\n\
             print(json.dumps(out))\n",
        )
        .arg(&xml)
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut suites: Value = serde_json::from_slice(&out.stdout).expect("junitparser output");
    let servers = json["servers"].as_array().expect("servers");
    let last = suites.as_array_mut().and_then(Vec::pop).expect("suites");
    assert_eq!(
        last["name"],
        "benchmark sections not reachable by any probe"
    );
    assert_eq!(
        (last["tests"].as_u64(), last["skipped"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(suites.as_array().map(Vec::len), Some(servers.len()));
    for (i, s) in servers.iter().enumerate() {
        let suite = suites
            .as_array()
            .expect("suites")
            .iter()
            .find(|x| {
                x["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(s["endpoint"].as_str().unwrap_or("?")))
                    && {
                        let idx = x["name"].as_str().unwrap_or("");
                        servers
                            .iter()
                            .filter(|o| o["endpoint"] == s["endpoint"])
                            .count()
                            == 1
                            || idx.contains(s["bundle"].as_str().unwrap_or("?"))
                    }
            })
            .unwrap_or_else(|| panic!("no suite for {s}"));
        let count = |v: &[&str]| -> u64 {
            json["checks"]
                .as_array()
                .expect("checks")
                .iter()
                .filter(|c| {
                    c["results"]
                        .as_array()
                        .and_then(|r| r.get(i))
                        .is_some_and(|r| v.iter().any(|x| r["verdict"] == *x))
                })
                .count() as u64
        };
        assert_eq!(suite["tests"], 36, "{suite}");
        assert_eq!(suite["failures"], count(&["FAIL"]), "{suite}");
        assert_eq!(suite["errors"], count(&["ERROR"]), "{suite}");
        assert_eq!(
            suite["skipped"],
            count(&["UNKNOWN", "N/A", "NO-REV"]),
            "{suite}"
        );
        assert!(
            suite["names"][0].as_str().is_some_and(
                |n| n.starts_with(&format!("{} ", support::rules::number("revisions-pinned")))
            ),
            "{suite}"
        );
    }
}

#[test]
fn markdown_has_a_row_per_server_and_per_finding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let bundles: Vec<String> = examples().iter().map(|p| p.display().to_string()).collect();
    let run = |format: &str| {
        let mut args: Vec<String> = vec!["--format".into(), format.into(), "-q".into()];
        args.extend(bundles.iter().cloned());
        mcp_grade(dir.path(), Some(&home), &args)
    };
    let md = run("Markdown");
    assert_eq!(md.code, 1, "{md:?}");
    let json: Value = serde_json::from_str(&run("json").stdout).expect("json");
    let lines: Vec<&str> = md.stdout.lines().collect();
    let servers = json["servers"].as_array().expect("servers").len();
    let server_rows = lines
        .iter()
        .filter(|l| {
            l.starts_with("| ")
                && l.split(" | ")
                    .next()
                    .is_some_and(|c| c[2..].parse::<usize>().is_ok())
        })
        .count();
    assert_eq!(server_rows, servers);
    // A finding row per FAIL and per ERROR of a server with a session, each with its fix.
    let mut want = 0;
    for c in json["checks"].as_array().expect("checks") {
        if c["source"] == "reported only" {
            continue;
        }
        for (i, r) in c["results"].as_array().expect("results").iter().enumerate() {
            let session = !json["servers"][i]["negotiated_revision"].is_null();
            if r["verdict"] == "FAIL" || (r["verdict"] == "ERROR" && session) {
                want += 1;
            }
        }
    }
    let findings: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(" | **FAIL** | ") || l.contains(" | **ERROR** | "))
        .collect();
    assert_eq!(findings.len(), want);
    for f in findings {
        // Five cells: an escaped | inside a cell never splits it.
        let cells = f.replace("\\|", "").matches(" | ").count();
        assert_eq!(cells, 4, "{f}");
    }
    assert!(md
        .stdout
        .contains("<details><summary>Reported only, and not reachable by any probe</summary>"));
    assert!(md.stdout.contains("- **Section 9** (isolation)"));
}

/// Headless Chromium (Debian's `chromium`, installed by lab/install.sh)
/// ([`support::lab::absent`] when it is not).
fn chromium() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/bin/chromium");
    if p.exists() {
        return Some(p);
    }
    support::lab::absent("/usr/bin/chromium", "run `lab/install.sh`")
}

/// The HTML report is one self-contained file (no request leaves it) that Chromium
/// renders with the matrix: the screenshot holds the FAIL and PASS colours of the cells,
/// and the DOM after its script ran has a cell per server and check.
#[test]
fn html_renders_the_matrix_in_headless_chromium() {
    let Some(chrome) = chromium() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let html = dir.path().join("report.html");
    let mut args: Vec<String> = vec!["--format".into(), "HTML".into(), "-q".into(), "-o".into()];
    args.push(html.display().to_string());
    args.extend(examples().iter().map(|p| p.display().to_string()));
    let r = mcp_grade(dir.path(), Some(&dir.path().join("home")), &args);
    assert_eq!(r.code, 1, "{r:?}");
    let doc = std::fs::read_to_string(&html).expect("html");
    // Self-contained: no URL the browser would fetch.
    for needle in ["src=\"http", "href=\"http", "@import", "url(", "<link"] {
        assert!(!doc.contains(needle), "{needle}");
    }
    assert!(doc.contains("default-src 'none'"));
    let png = dir.path().join("shot.png");
    let run = |extra: &[&str]| {
        std::process::Command::new(&chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=1400,900",
            ])
            .args(extra)
            .arg(format!("file://{}", html.display()))
            .output()
            .expect("chromium")
    };
    let out = run(&[&format!("--screenshot={}", png.display())]);
    assert!(png.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("png"),
    ));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let channels = info.color_type.samples();
    let has = |rgb: [u8; 3]| {
        buf.chunks(channels)
            .filter(|p| {
                p[0].abs_diff(rgb[0]) < 8 && p[1].abs_diff(rgb[1]) < 8 && p[2].abs_diff(rgb[2]) < 8
            })
            .count()
    };
    // FAIL cells (#D55E00) and PASS cells (#009E73) fill many pixels of the first screen.
    assert!(
        has([0xD5, 0x5E, 0x00]) > 2000,
        "no FAIL cells on the screenshot"
    );
    assert!(
        has([0x00, 0x9E, 0x73]) > 500,
        "no PASS cells on the screenshot"
    );
    let dom = run(&["--dump-dom"]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let cells = dom.matches("data-target=\"r-").count();
    assert_eq!(cells, 36 * examples().len(), "a cell per server and check");
}
