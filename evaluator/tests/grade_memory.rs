//! What the grading command keeps per bundle (issue 8 item 6): the results it keeps for
//! the report render exactly as the full results do, and a bundle's encoded records are
//! not kept beside the decoded ones.

use std::path::{Path, PathBuf};

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::grade::{compact, grade};
use mcp_probe_evaluator::load::{for_grading, read_verified};
use mcp_probe_evaluator::report::{render, Format, Report, Server};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
        .collect();
    v.sort();
    assert!(v.len() > 3, "example bundles in {}", dir.display());
    v
}

#[test]
fn compacted_results_render_the_same_reports() {
    let mut full = Vec::new();
    let mut kept = Vec::new();
    let mut notes = 0;
    for p in examples() {
        let v = read_verified(&p, &[])
            .expect("readable")
            .expect("example verifies");
        let ev = for_grading(p.display().to_string(), v.verified);
        assert!(
            ev.payload.records.is_empty(),
            "the encoded records are dropped"
        );
        assert!(!ev.records.is_empty(), "the decoded records are kept");
        let results = grade(&ev, &Context::default(), None);
        notes += results
            .iter()
            .filter_map(|r| r.outcome.as_ref())
            .flat_map(|o| &o.legs)
            .filter(|l| !l.note.is_empty())
            .count();
        let mut small = results.clone();
        compact(&mut small);
        assert!(small
            .iter()
            .filter_map(|r| r.outcome.as_ref())
            .flat_map(|o| &o.legs)
            .all(|l| l.note.is_empty()));
        for (a, b) in results.iter().zip(&small) {
            let (a, b) = (a.outcome.as_ref(), b.outcome.as_ref());
            assert_eq!(a.map(|o| o.verdict), b.map(|o| o.verdict));
            assert_eq!(a.map(|o| &o.evidence), b.map(|o| &o.evidence));
            assert_eq!(a.map(|o| &o.details), b.map(|o| &o.details));
        }
        full.push((Server::new(&ev, None), results));
        kept.push((Server::new(&ev, None), small));
    }
    assert!(notes > 0, "the examples have leg notes to drop");
    let (full, kept) = (Report::new(None, full), Report::new(None, kept));
    for format in [Format::Text, Format::Json] {
        assert_eq!(
            String::from_utf8_lossy(&render(&full, format)),
            String::from_utf8_lossy(&render(&kept, format)),
            "{format:?}"
        );
    }
}

#[test]
fn streaming_the_report_writes_the_rendered_bytes() {
    let graded: Vec<_> = examples()
        .iter()
        .map(|p| {
            let v = read_verified(p, &[]).expect("readable").expect("verifies");
            let ev = for_grading(p.display().to_string(), v.verified);
            let results = grade(&ev, &Context::default(), None);
            (Server::new(&ev, None), results)
        })
        .collect();
    let report = Report::new(None, graded);
    for format in [Format::Text, Format::Json] {
        let mut out = Vec::new();
        mcp_probe_evaluator::report::write(&report, format, &mut out).expect("write");
        assert_eq!(out, render(&report, format), "{format:?}");
        assert!(out.ends_with(b"\n"));
    }
}
