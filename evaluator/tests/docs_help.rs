//! `mcp-grade --help` is the source: README.md and docs/*.md name only flags, `--format`
//! values and exit codes the binary has, every flag of it appears in README.md or
//! docs/report.md, and the man pages and completions are generated from it.

mod support;

use support::help_docs;

use help_docs::*;
use mcp_probe_evaluator::flags::command;
use mcp_probe_evaluator::report::Format;
use mcp_probe_evaluator::ExitStatus;

const BIN: &str = "mcp-grade";
const OTHER: &str = "mcp-collect";
const OWN_PAGE: &str = "docs/report.md";

#[test]
fn the_docs_name_no_flag_that_no_binary_has() {
    check_no_unknown_flag(&command(), BIN, OTHER);
}

#[test]
fn every_flag_of_the_grader_is_in_the_readme_or_its_page() {
    check_every_flag_documented(&command(), BIN, OWN_PAGE);
}

#[test]
fn every_format_value_in_the_docs_is_accepted_and_every_format_is_named() {
    let mut problems = Vec::new();
    let mut named = std::collections::BTreeSet::new();
    for (file, text) in doc_files() {
        for (line, v) in format_values_in(&text) {
            if Format::parse(&v).is_err() {
                problems.push(format!("{file}:{line}: --format {v} is not accepted"));
            }
            if file == "README.md" {
                named.insert(v);
            }
        }
    }
    for f in Format::AVAILABLE.split(", ") {
        assert!(Format::parse(f).is_ok(), "{f}");
        if !named.contains(f) {
            problems.push(format!("README.md does not name --format {f}"));
        }
    }
    report(&problems);
}

#[test]
fn exit_codes_in_the_docs_are_the_documented_ones() {
    let codes: Vec<u32> = ExitStatus::ALL
        .iter()
        .map(|s| u32::from(s.code()))
        .collect();
    let footer = mcp_probe_evaluator::exit::help_footer();
    let help = command().render_help().to_string();
    assert!(
        help.contains(footer.lines().next().expect("a line")),
        "{help}"
    );
    for c in &codes {
        assert!(footer.contains(&format!("\n  {c}  ")), "{footer}");
    }
    let docs = doc_files();
    let text = |f: &str| &docs.iter().find(|(n, _)| n == f).expect("doc").1;
    let mut problems = Vec::new();
    match exit_table(text("README.md"), "| exit | mcp-grade (grading) |") {
        Some(t) if t == codes => {}
        other => problems.push(format!(
            "README.md's mcp-grade exit table is {other:?}, not {codes:?}"
        )),
    }
    match exit_table(text(OWN_PAGE), "| exit | meaning |") {
        Some(t) if t == codes => {}
        other => problems.push(format!(
            "{OWN_PAGE}'s exit table is {other:?}, not {codes:?}"
        )),
    }
    for (file, header) in [
        ("docs/bundle.md", "| code | meaning |"),
        ("docs/ci.md", "| exit | meaning |"),
    ] {
        match exit_table(text(file), header) {
            Some(t) if t == codes => {}
            other => problems.push(format!("{file}'s exit table is {other:?}, not {codes:?}")),
        }
    }
    for (line, c) in exit_codes_in(text(OWN_PAGE)) {
        if !codes.contains(&c) {
            problems.push(format!(
                "{OWN_PAGE}:{line}: exit {c} is not an exit code of {BIN}"
            ));
        }
    }
    report(&problems);
}

#[test]
fn man_pages_and_completions_are_up_to_date() {
    check_generated(&generated(&command()));
}

#[test]
fn the_scanners_find_what_the_docs_write() {
    let flags: Vec<String> = flags_in("`--fail-on` x --tsa-cert=F a--b -- --9 [--level 1\\|2]")
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    assert_eq!(flags, ["fail-on", "tsa-cert", "level"]);
    let formats: Vec<String> =
        format_values_in("`--format text\\|json` --format FORMAT --format=sarif")
            .into_iter()
            .map(|(_, v)| v)
            .collect();
    assert_eq!(formats, ["text", "json", "sarif"]);
    let codes: Vec<u32> = exit_codes_in("Exit 0; exits 3, exit code 4, an exit-5 error; exited 7")
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(codes, [0, 3, 4, 5]);
    let table = "| exit | x |\n|---|---|\n| 0 | a |\n| 9 | b |\n\nafter";
    assert_eq!(exit_table(table, "| exit | x |"), Some(vec![0, 9]));
    assert_eq!(exit_table(table, "| exit | y |"), None);
}
