//! `mcp-collect --help` is the source: README.md and docs/*.md name only flags and exit
//! codes the binary has, every flag of it appears in README.md or docs/collector.md, and
//! the man page and completions are generated from it.

#[path = "../../evaluator/tests/support/help_docs.rs"]
mod help_docs;

use help_docs::*;
use mcp_probe_collector::run::cli::help_footer;
use mcp_probe_collector::run::flags::command;
use mcp_probe_collector::run::ExitStatus;

const BIN: &str = "mcp-collect";
const OTHER: &str = "mcp-grade";
const OWN_PAGE: &str = "docs/collector.md";

#[test]
fn the_docs_name_no_flag_that_no_binary_has() {
    check_no_unknown_flag(&command(), BIN, OTHER);
}

#[test]
fn every_flag_of_the_collector_is_in_the_readme_or_its_page() {
    check_every_flag_documented(&command(), BIN, OWN_PAGE);
}

#[test]
fn exit_codes_in_the_docs_are_the_documented_ones() {
    let mut codes: Vec<u32> = ExitStatus::DOCUMENTED
        .iter()
        .map(|s| u32::from(s.code()))
        .collect();
    codes.dedup();
    let footer = help_footer();
    let help = command().render_help().to_string();
    assert!(
        help.contains(footer.lines().next().expect("a line")),
        "{help}"
    );
    for c in &codes {
        assert!(footer.contains(&format!("\n  {c:<3}  ")), "{footer}");
    }
    let docs = doc_files();
    let text = |f: &str| &docs.iter().find(|(n, _)| n == f).expect("doc").1;
    let mut problems = Vec::new();
    match exit_table(text("README.md"), &format!("| exit | {BIN} |")) {
        Some(t) if t == codes => {}
        other => problems.push(format!(
            "README.md's {BIN} exit table is {other:?}, not {codes:?}"
        )),
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
fn man_page_and_completions_are_up_to_date() {
    check_generated(&generated(&command()));
}
