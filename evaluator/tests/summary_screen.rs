//! The default text report's first screen: the title, the server x check matrix, the
//! legend and the totals fit the terminal (80x24 when stdout is not a terminal), with
//! the header and each server's details after them.

use std::path::PathBuf;

use mcp_probe_evaluator::benchmark::{Benchmark, CheckResult};
use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::load::{for_grading, load_trust, read_verified};
use mcp_probe_evaluator::report::{render, Format, Report, Server};
use mcp_probe_evaluator::trust_list::Signers;

mod support;

use support::examples::examples;

/// Every example bundle, verified against examples/collector.pub, and its results.
fn graded_examples() -> Vec<(Server, Vec<CheckResult>)> {
    let key = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/collector.pub");
    let trust = Signers::pinned(load_trust(&[key]).expect("the examples' key"));
    examples()
        .iter()
        .map(|p| {
            let v = read_verified(p, &trust)
                .expect("readable")
                .expect("verifies against examples/collector.pub");
            let ev = for_grading(p.display().to_string(), v.verified);
            let results = mcp_probe_evaluator::benchmark::grade_bundle(
                Benchmark::builtin(),
                &ev,
                &Context::default(),
                None,
            );
            (Server::new(&ev, None), results)
        })
        .collect()
}

/// The default text report of `graded` at `width` x `height`.
fn text(graded: Vec<(Server, Vec<CheckResult>)>, width: usize, height: usize) -> String {
    let mut r = Report::new(Benchmark::builtin(), None, graded);
    r.width = width;
    r.height = height;
    String::from_utf8(render(&r, Format::Text)).expect("utf-8")
}

/// The first screen: every line up to the totals (and the totals' wrapped lines).
fn first_screen(report: &str) -> Vec<&str> {
    let lines: Vec<&str> = report.lines().collect();
    let totals = lines
        .iter()
        .position(|l| l.starts_with("totals: "))
        .expect("a totals line");
    let end = totals
        + 1
        + lines[totals + 1..]
            .iter()
            .take_while(|l| l.starts_with("  "))
            .count();
    lines[..end].to_vec()
}

/// The 1-based server numbers a matrix row's label names (`[3]`, `[2-5,9]`), and how
/// many more it counts without naming them (`[2-5,9 +40]`).
fn label_servers(row: &str) -> (Vec<usize>, usize) {
    let label = row
        .strip_prefix('[')
        .and_then(|r| r.split(']').next())
        .expect("a label");
    let (named, more) = match label.split_once(" +") {
        Some((named, more)) => (named, more.parse().expect("a count")),
        None => (label, 0),
    };
    let named = named
        .split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().expect("n")..=b.parse().expect("n")).collect(),
            None => vec![part.parse().expect("n")],
        })
        .collect();
    (named, more)
}

/// The matrix rows of a first screen: the lines labelled `[..]`.
fn matrix_rows<'a>(screen: &[&'a str]) -> Vec<&'a str> {
    screen
        .iter()
        .copied()
        .filter(|l| l.starts_with('['))
        .collect()
}

fn assert_fits(screen: &[&str], width: usize, height: usize, report: &str) {
    assert!(
        screen.len() < height,
        "the first screen takes {} lines, the totals must be within {} (one left for the prompt):\n{report}",
        screen.len(),
        height - 1
    );
    for l in screen {
        assert!(
            l.chars().count() <= width,
            "{} columns, over {width}: {l:?}",
            l.chars().count()
        );
    }
}

#[test]
fn the_examples_fit_80_by_24_with_their_details_after() {
    let graded = graded_examples();
    let n = graded.len();
    let report = text(graded, 80, 24);
    let screen = first_screen(&report);
    assert_fits(&screen, 80, 24, &report);
    assert!(
        screen[0].starts_with("CIS MCP Server Benchmark 1.0.0: 14 server(s) x 36 checks"),
        "{report}"
    );
    // One row per server when they fit: [1] .. [n], each with a mark per check.
    let rows = matrix_rows(&screen);
    assert_eq!(rows.len(), n, "{report}");
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(label_servers(row), (vec![k + 1], 0), "{row}");
        let marks: Vec<char> = row
            .split_once("  ")
            .expect("label, then marks")
            .1
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        assert_eq!(marks.len(), 36, "{row}");
        assert!(marks.iter().all(|c| "PFE?-Rw".contains(*c)), "{row}");
    }
    // The rest is wrapped to the width too.
    for l in report.lines() {
        assert!(l.chars().count() <= 80, "over 80 columns: {l:?}");
    }
    // The header, then one details line per server, after the screen.
    let rest: Vec<&str> = report.lines().skip(screen.len()).collect();
    let provenance = rest
        .iter()
        .position(|l| l.starts_with("CIS MCP Server Benchmark 1.0.0 (id "))
        .expect("the provenance line after the screen");
    let servers = rest
        .iter()
        .position(|l| *l == format!("servers: {n}"))
        .expect("the servers count");
    assert!(provenance < servers);
    for k in 1..=n {
        assert!(
            rest.iter().any(|l| l.starts_with(&format!("[{k}] http"))),
            "details of [{k}]:\n{report}"
        );
    }
}

/// 200 servers (the examples graded again under other bundle names): servers with the
/// same marks share a row, and the screen still fits.
#[test]
fn two_hundred_servers_share_rows_and_fit_80_by_24() {
    let graded = graded_examples();
    let many: Vec<(Server, Vec<CheckResult>)> = (0..200)
        .map(|k| {
            let (s, r) = &graded[k % graded.len()];
            let mut s = s.clone();
            s.bundle = format!("copy-{k:03}/{}", s.bundle);
            (s, r.clone())
        })
        .collect();
    let report = text(many, 80, 24);
    let screen = first_screen(&report);
    assert_fits(&screen, 80, 24, &report);
    assert!(
        screen[0].contains(": 200 server(s) x 36 checks"),
        "{report}"
    );
    let rows = matrix_rows(&screen);
    assert!(rows.len() < 200, "{report}");
    // Every server is in exactly one row, and rows that share marks were merged.
    // Every server is counted in exactly one row, and named there when the label has
    // room; rows that share marks were merged.
    let mut seen: Vec<usize> = rows.iter().flat_map(|r| label_servers(r).0).collect();
    let unnamed: usize = rows.iter().map(|r| label_servers(r).1).sum();
    seen.sort_unstable();
    let before = seen.len();
    seen.dedup();
    assert_eq!(seen.len(), before, "a server named twice:\n{report}");
    assert_eq!(seen.len() + unnamed, 200, "{report}");
    assert!(seen.iter().all(|n| (1..=200).contains(n)), "{report}");
    let marks: Vec<&str> = rows
        .iter()
        .map(|r| r.split_once("  ").expect("marks").1)
        .collect();
    let mut distinct = marks.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        marks.len(),
        "two rows with the same marks:\n{report}"
    );
    assert!(report.contains("\nservers: 200\n"));
    assert!(report.contains("\n[200] http"), "{report}");
}

/// When even the shared rows do not fit, the first are shown and a line says how many
/// more there are and where they are.
#[test]
fn rows_that_do_not_fit_are_counted_and_pointed_to() {
    let graded = graded_examples();
    let report = text(graded, 80, 14);
    let screen = first_screen(&report);
    assert_fits(&screen, 80, 14, &report);
    let more = screen
        .iter()
        .find(|l| l.starts_with("... "))
        .expect("a line for the rows left out");
    assert!(
        more.contains("more row(s)")
            && more.contains("--verbose")
            && more.contains("--format html"),
        "{more}"
    );
    let shown: usize = matrix_rows(&screen)
        .iter()
        .map(|r| label_servers(r).0.len() + label_servers(r).1)
        .sum();
    let hidden: usize = more
        .split(", ")
        .nth(1)
        .and_then(|x| x.split(' ').next())
        .and_then(|x| x.parse().ok())
        .expect("how many servers are left out");
    assert_eq!(shown + hidden, 14, "{report}");
}
