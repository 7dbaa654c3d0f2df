//! What the grading command keeps per bundle: the results it keeps for
//! the report render exactly as the full results do, and a bundle's encoded records are
//! not kept beside the decoded ones.

use mcp_probe_evaluator::benchmark::{compact, Benchmark};
use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::load::{for_grading, read_verified};
use mcp_probe_evaluator::report::{render, Format, Report, Server};
use mcp_probe_evaluator::trust_list::Signers;

mod support;

use support::examples::examples;

#[test]
fn compacted_results_render_the_same_reports() {
    let mut full = Vec::new();
    let mut kept = Vec::new();
    let mut notes = 0;
    for p in examples() {
        let v = read_verified(&p, &Signers::default())
            .expect("readable")
            .expect("example verifies");
        let ev = for_grading(p.display().to_string(), v.verified);
        assert!(
            ev.payload.records.is_empty(),
            "the encoded records are dropped"
        );
        assert!(ev.record_count() > 0, "the decoded records are kept");
        let results = mcp_probe_evaluator::benchmark::grade_bundle(
            Benchmark::builtin(),
            &ev,
            &Context::default(),
            None,
        );
        notes += results
            .iter()
            .filter_map(|r| r.outcome.as_ref())
            .flat_map(|o| &o.subs)
            .filter(|l| !l.note.is_empty())
            .count();
        let mut small = results.clone();
        compact(&mut small);
        assert!(small
            .iter()
            .filter_map(|r| r.outcome.as_ref())
            .flat_map(|o| &o.subs)
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
    let (full, kept) = (
        Report::new(
            mcp_probe_evaluator::benchmark::Benchmark::builtin(),
            None,
            full,
        ),
        Report::new(
            mcp_probe_evaluator::benchmark::Benchmark::builtin(),
            None,
            kept,
        ),
    );
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
            let v = read_verified(p, &Signers::default())
                .expect("readable")
                .expect("verifies");
            let ev = for_grading(p.display().to_string(), v.verified);
            let results = mcp_probe_evaluator::benchmark::grade_bundle(
                Benchmark::builtin(),
                &ev,
                &Context::default(),
                None,
            );
            (Server::new(&ev, None), results)
        })
        .collect();
    let report = Report::new(
        mcp_probe_evaluator::benchmark::Benchmark::builtin(),
        None,
        graded,
    );
    for format in [Format::Text, Format::Json] {
        let mut out = Vec::new();
        mcp_probe_evaluator::report::write(&report, format, &mut out).expect("write");
        assert_eq!(out, render(&report, format), "{format:?}");
        assert!(out.ends_with(b"\n"));
    }
}

/// A report whose outcomes went to a spill file as each server was graded writes the
/// same bytes, in every format that streams, as the report built in memory; waivers and
/// the exit status are judged the same from the verdicts it keeps; the spill file is
/// gone once the report is dropped.
#[test]
fn a_spilled_report_writes_the_bytes_of_the_report_in_memory() {
    use mcp_probe_evaluator::report::{Builder, Spill, SpillForm};
    let graded: Vec<_> = examples()
        .iter()
        .map(|p| {
            let v = read_verified(p, &Signers::default())
                .expect("readable")
                .expect("verifies");
            let ev = for_grading(p.display().to_string(), v.verified);
            let mut results = mcp_probe_evaluator::benchmark::grade_bundle(
                Benchmark::builtin(),
                &ev,
                &Context::default(),
                None,
            );
            compact(&mut results);
            let mut server = Server::new(&ev, None);
            server.excerpts = mcp_probe_evaluator::report::html::excerpts(&ev, &results);
            (server, results)
        })
        .collect();
    assert!(
        graded.iter().any(|(s, _)| !s.excerpts.is_empty()),
        "excerpts to spill"
    );
    // Given in reverse: the builder sorts the servers as the report lists them.
    let spill_as = |form: SpillForm| {
        let mut b = Builder::new(
            Benchmark::builtin(),
            None,
            Some(Spill::create(None, form).expect("spill")),
        );
        for (s, r) in graded.iter().rev().cloned() {
            b.server(s, r).expect("spilled");
        }
        b.finish().expect("a report")
    };
    let mut spilled = spill_as(SpillForm::Outcomes);
    // The same outcomes spilled in transposed batches, as the formats that read a check
    // row on many servers at a time spill them (`spill_form`).
    let mut batched = spill_as(SpillForm::OutcomesBatched);
    assert!(!batched.holds_outcomes(), "nothing in memory");
    // The same servers spilled as the JSON report's results, each made on a preparer as
    // a grading worker makes it.
    let mut j = Builder::new(
        Benchmark::builtin(),
        None,
        Some(
            Spill::create(None, mcp_probe_evaluator::report::spill_form(Format::Json))
                .expect("spill"),
        ),
    );
    let preparer = j.preparer();
    for (s, r) in graded.iter().rev().cloned() {
        j.add(preparer.prepare(s, r)).expect("spilled");
    }
    let mut as_json = j.finish().expect("a report");
    let path = spilled
        .spill_path()
        .map(|p| p.to_path_buf())
        .expect("a spill file");
    assert!(!spilled.holds_outcomes(), "nothing in memory");
    // Nor the servers' summaries: read back from the spill file, in the report's order,
    // they are the servers a report in memory holds, but for the excerpts, which went
    // with the outcomes.
    let mut summaries = Vec::new();
    spilled
        .each_server(|_, s| {
            summaries.push(s.clone());
            Ok(std::ops::ControlFlow::Continue(()))
        })
        .expect("read back");
    assert!(
        summaries.iter().all(|s| s.excerpts.is_empty()),
        "nor excerpts"
    );
    let mut memory = Report::new(Benchmark::builtin(), None, graded);
    assert_eq!(summaries.len(), memory.servers.len());
    for (i, read) in summaries.iter().enumerate() {
        let mut held = memory.server(i).expect("held").into_owned();
        held.excerpts.clear();
        assert_eq!(read, &held, "server {i}");
        assert_eq!(spilled.server(i).expect("read back").as_ref(), read);
    }
    assert!(spilled.server(summaries.len()).is_err(), "no such server");
    let fails = memory
        .rows
        .iter()
        .find(|r| r.count(mcp_probe_evaluator::verdict::Verdict::Fail) > 0)
        .map(|r| r.entry.id.as_str())
        .expect("a failing check");
    let dir = tempfile::tempdir().expect("tempdir");
    let wpath = dir.path().join("waivers.toml");
    std::fs::write(
        &wpath,
        format!("[[waiver]]\ncheck = \"{fails}\"\nendpoint = \"*\"\nreason = \"tracked\"\nexpires = \"2999-01-01\"\n"),
    )
    .expect("waivers");
    let w =
        mcp_probe_evaluator::waivers::Waivers::load(&wpath, Benchmark::builtin()).expect("waivers");
    let today = chrono::NaiveDate::from_ymd_opt(2026, 12, 4).expect("date");
    for r in [&mut spilled, &mut memory, &mut as_json, &mut batched] {
        r.apply_waivers(&w, today);
    }
    assert!(
        memory
            .rows
            .iter()
            .any(|r| r.marks.iter().any(|(_, m)| m.active)),
        "a result is waived"
    );
    let mut a = Vec::new();
    mcp_probe_evaluator::report::write(&as_json, Format::Json, &mut a).expect("write");
    let mut b = Vec::new();
    mcp_probe_evaluator::report::write(&memory, Format::Json, &mut b).expect("write");
    assert_eq!(
        String::from_utf8_lossy(&a),
        String::from_utf8_lossy(&b),
        "spilled as JSON results"
    );
    let e = mcp_probe_evaluator::report::write(&as_json, Format::Text, &mut Vec::new())
        .expect_err("JSON results are not outcomes");
    assert!(e.to_string().contains("holds JSON results"), "{e}");
    assert_eq!(spilled.status(), memory.status());
    assert_eq!(batched.status(), memory.status());
    assert_eq!(
        spilled.waivers.as_ref().map(|a| a.waived),
        memory.waivers.as_ref().map(|a| a.waived)
    );
    for (format, height, verbose) in [
        (Format::Json, 24, false),
        (Format::Text, 24, false),
        (Format::Text, 12, false),
        (Format::Text, 24, true),
        (Format::Sarif, 24, false),
        (Format::Junit, 24, false),
        (Format::Markdown, 24, false),
        (Format::Html, 24, false),
        (Format::Oscal, 24, false),
        (Format::Xccdf, 24, false),
    ] {
        for r in [&mut spilled, &mut memory, &mut batched] {
            r.verbose = verbose;
            r.height = height;
        }
        let mut b = Vec::new();
        mcp_probe_evaluator::report::write(&memory, format, &mut b).expect("write");
        assert!(b.len() > 1000);
        for (r, layout) in [(&spilled, "server by server"), (&batched, "batched")] {
            let mut a = Vec::new();
            mcp_probe_evaluator::report::write(r, format, &mut a).expect("write");
            assert_eq!(
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b),
                "{format:?} verbose {verbose}, spilled {layout}"
            );
        }
    }
    drop(spilled);
    assert!(!path.exists(), "the spill file is removed");
}

/// `open_decoded` (what grading reads bundles with) is `open` without the encoded
/// records: the same contents, and the same error, in the same order, on a bad bundle.
#[test]
fn open_decoded_is_open_without_the_encoded_records() {
    use mcp_probe_schema::bundle::{open_decoded, seal};
    use mcp_probe_schema::testkit::{evidence, http_record, test_key};
    use mcp_probe_schema::vocab::leg;

    for p in examples() {
        let bytes = std::fs::read(&p).expect("read");
        let a = mcp_probe_schema::open(&bytes, &[]).expect("verifies");
        let b = open_decoded(&bytes, &[]).expect("verifies");
        assert!(!a.evidence.records.is_empty() && b.evidence.records.is_empty());
        assert_eq!(a.records, b.records, "{}", p.display());
        let mut ea = a.evidence.clone();
        ea.records = Vec::new();
        assert_eq!(ea, b.evidence);
        assert_eq!(a.signer, b.signer);
    }

    let key = test_key(7);
    let rec = |i: u64| {
        http_record(
            &[leg::INVENTORY_TOOLS],
            "http://127.0.0.1:8080/mcp",
            &format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/list"}}"#),
            200,
            b"{}",
        )
    };
    let good = evidence("http://127.0.0.1:8080/mcp", vec![rec(0), rec(1), rec(2)]);
    let mut swapped = good.clone();
    swapped.records.swap(1, 2);
    let mut head = good.clone();
    head.chain_head = vec![0; 32];
    let mut garbage = good.clone();
    garbage.records[1] = serde_bytes::ByteBuf::from(vec![0xff, 0x00]);
    for (name, ev) in [("swapped", swapped), ("head", head), ("garbage", garbage)] {
        let bytes = seal(&ev, &key);
        let a = mcp_probe_schema::open(&bytes, &[]).expect_err(name);
        let b = open_decoded(&bytes, &[]).expect_err(name);
        assert_eq!(a, b, "{name}");
    }
    let other = test_key(8).public();
    let bytes = seal(&good, &key);
    assert_eq!(
        mcp_probe_schema::open(&bytes, std::slice::from_ref(&other)).expect_err("untrusted"),
        open_decoded(&bytes, std::slice::from_ref(&other)).expect_err("untrusted")
    );
}
