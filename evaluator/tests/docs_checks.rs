//! docs/checks.md stays in step with the catalogue: its table lists every check once, in
//! benchmark order, with the catalogue's level, verdict source and title, says which
//! checks this build grades, and names the file that grades each (a file that exists);
//! every graded check has its own section whose heading repeats its title.

use std::path::Path;

fn docs() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join("docs/checks.md")).expect("docs/checks.md")
}

/// The rows of the table under "## The 36 checks", as cells.
fn table(doc: &str) -> Vec<Vec<String>> {
    let start = doc.find("## The 36 checks").expect("table heading");
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_table_matches_the_catalogue() {
    let doc = docs();
    let rows = table(&doc);
    assert_eq!(
        rows.len(),
        mcp_probe_evaluator::benchmark::Benchmark::builtin()
            .checks
            .len(),
        "one row per check"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (row, e) in rows.iter().zip(
        mcp_probe_evaluator::benchmark::Benchmark::builtin()
            .checks
            .iter(),
    ) {
        assert_eq!(row.len(), 6, "{row:?}");
        assert_eq!(row[0], e.id.as_str(), "order");
        assert_eq!(row[1], e.level.as_str(), "{}", e.id);
        assert_eq!(row[2], e.source.as_str(), "{}", e.id);
        assert_eq!(row[3], e.title, "{}", e.id);
        let graded = if e.grader.is_some() { "yes" } else { "not yet" };
        assert_eq!(row[4], graded, "{}", e.id);
        if e.grader.is_some() {
            let file = row[5].trim_matches('`');
            assert!(
                file.starts_with("evaluator/src/checks/") && root.join(file).is_file(),
                "{}: the grader file {file:?} does not exist",
                e.id
            );
        } else {
            assert_eq!(row[5], "", "{}", e.id);
        }
    }
}

#[test]
fn every_graded_check_has_its_section() {
    let doc = docs();
    for e in mcp_probe_evaluator::benchmark::Benchmark::builtin()
        .checks
        .iter()
        .filter(|e| e.grader.is_some())
    {
        let heading = format!("### {}: {}\n", e.id, e.title);
        let sub = format!("#### {}: {}\n", e.id, e.title);
        assert!(
            doc.contains(&heading) || doc.contains(&sub),
            "docs/checks.md has no section \"{}\"",
            heading.trim()
        );
    }
}

#[test]
fn every_source_file_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut missing = Vec::new();
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.push(root.join("README.md"));
    for doc in docs {
        let text = std::fs::read_to_string(&doc).expect("read doc");
        for crate_dir in ["evaluator/", "collector/", "schema/"] {
            for (at, _) in text.match_indices(crate_dir) {
                let path: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "/_.-".contains(*c))
                    .collect();
                let path = path.trim_end_matches('.');
                if path.ends_with(".rs") && !root.join(path).is_file() {
                    missing.push(format!("{}: {path}", doc.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs name files that do not exist:\n{}",
        missing.join("\n")
    );
}
