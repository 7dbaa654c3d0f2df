//! The JUnit XML report (`--format junit`), written with `quick-junit`, for CI systems
//! that show test results (GitLab, Jenkins, Azure DevOps …).
//!
//! One `<testsuite>` per server (named by its endpoint, revision and bundle), one
//! `<testcase>` per check in scope (`name` the check id and title, `classname`
//! `cis-mcp.section-<n>`). PASS passes; FAIL is a `<failure>`, ERROR an `<error>`, both
//! with the evidence as message and the remediation and reduction in the text; UNKNOWN,
//! N/A and NO-REV are `<skipped>` with the verdict and the reason as message. A waived
//! FAIL or ERROR is `<skipped>` too, its message naming the waiver, so a CI gate that
//! counts failures agrees with the exit status. Checks this build does not grade are
//! skipped "not graded". A last suite lists the benchmark sections no probe reaches
//! (4, 6, 8, 9), each a skipped case saying what it governs and why.
//!
//! Every suite carries `<properties>`: the benchmark (`benchmark.id`, `.name`,
//! `.version`, `.sha256`, and `benchmark.tailoring.file`, `.sha256` when a tailoring
//! file was used) and the grader (`grader.name`, `.version`, `.commit`, `.target`, `.rustc`); a server's
//! suite also `collector` (name and version) and `collector.build`. JUnit's
//! `<testsuites>` has no properties of its own, so each suite holds them.

use quick_junit::{NonSuccessKind, Property, Report as JUnit, TestCase, TestCaseStatus, TestSuite};

use crate::fmt::line;
use crate::verdict::{Outcome, Verdict};

use super::{Report, Row};

/// The name of the report's root element.
pub const NAME: &str = "mcp-grade";
/// The last suite: the benchmark sections no probe reaches, each a skipped case.
pub const NOT_REACHABLE: &str = "benchmark sections not reachable by any probe";

fn case(row: &Row, i: usize, o: Option<&Outcome>) -> TestCase {
    let e = row.entry;
    let name = format!("{} {}", e.id.as_str(), e.title);
    let Some(o) = o.filter(|_| row.verdicts.is_some()) else {
        let mut st = TestCaseStatus::skipped();
        st.set_message("not graded by this build");
        let mut c = TestCase::new(name, st);
        c.set_classname(format!("cis-mcp.section-{}", e.section()));
        return c;
    };
    let evidence = line(&o.evidence);
    let text = format!(
        "{}\nremediation: {}\nreduction: {}\nrecords: {}",
        evidence,
        e.remediation,
        line(&o.reduction),
        o.records
            .iter()
            .map(|s| format!("#{s}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut st = match (o.verdict, row.mark(i).filter(|m| m.active)) {
        (Verdict::Pass, _) => TestCaseStatus::success(),
        (Verdict::Fail | Verdict::Error, Some(m)) => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!(
                "{} waived until {} (waivers line {}): {}",
                o.verdict.mark(),
                m.expires,
                m.line,
                line(&m.reason)
            ));
            s
        }
        (Verdict::Fail, None) => TestCaseStatus::non_success(NonSuccessKind::Failure),
        (Verdict::Error, None) => TestCaseStatus::non_success(NonSuccessKind::Error),
        (Verdict::Unknown | Verdict::NotApplicable | Verdict::NoRev, _) => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("{}: {evidence}", o.verdict.mark()));
            s
        }
    };
    if matches!(o.verdict, Verdict::Fail | Verdict::Error) {
        st.set_type(o.verdict.mark());
        if row.mark(i).is_none_or(|m| !m.active) {
            st.set_message(format!("{}: {evidence}", o.verdict.mark()));
        }
    }
    st.set_description(text);
    let mut c = TestCase::new(name, st);
    c.set_classname(format!("cis-mcp.section-{}", e.section()));
    c
}

/// How [`case`] counts the case of `row` on server `i` (the `<testsuites>` counts),
/// without building it: every string of a case goes through `quick-junit`'s ANSI
/// stripping, the larger part of this report's cost.
fn count(suite: &mut TestSuite, row: &Row, i: usize, o: Option<&Outcome>) {
    suite.tests += 1;
    let Some(o) = o.filter(|_| row.verdicts.is_some()) else {
        suite.skipped += 1;
        return;
    };
    match (o.verdict, row.mark(i).filter(|m| m.active)) {
        (Verdict::Pass, _) => {}
        (Verdict::Fail | Verdict::Error, Some(_)) => suite.skipped += 1,
        (Verdict::Fail, None) => suite.failures += 1,
        (Verdict::Error, None) => suite.errors += 1,
        (Verdict::Unknown | Verdict::NotApplicable | Verdict::NoRev, _) => suite.skipped += 1,
    }
}

/// The benchmark and grader of `r`, as suite properties.
fn provenance(r: &Report) -> Vec<Property> {
    let b = &r.provenance.benchmark;
    let g = &r.provenance.grader;
    let mut v = vec![
        Property::new("benchmark.id", b.id.as_str()),
        Property::new("benchmark.name", b.name.as_str()),
        Property::new("benchmark.version", b.version.as_str()),
        Property::new("benchmark.sha256", b.sha256.as_str()),
    ];
    if let Some(t) = &b.tailoring {
        v.push(Property::new("benchmark.tailoring.file", line(&t.file)));
        v.push(Property::new(
            "benchmark.tailoring.sha256",
            t.sha256.as_str(),
        ));
    }
    v.extend([
        Property::new("grader.name", g.name.as_str()),
        Property::new("grader.version", g.version.as_str()),
        Property::new("grader.commit", g.commit.as_str()),
        Property::new("grader.target", g.target.as_str()),
        Property::new("grader.rustc", g.rustc.as_str()),
    ]);
    v
}

/// The suite of server `i`: a case per check row, from its outcomes (one per row).
fn server_suite(r: &Report, i: usize, label: &str, outcomes: &[Option<Outcome>]) -> TestSuite {
    let srv = &r.servers[i];
    let mut suite = TestSuite::new(label);
    suite.add_properties(provenance(r));
    // What came from the bundle, escaped to one line of printable text.
    suite.add_property(Property::new("collector", line(&srv.collector)));
    suite.add_property(Property::new("collector.build", line(&srv.collector_build)));
    for (k, row) in r.rows.iter().enumerate() {
        suite.add_test_case(case(row, i, outcomes.get(k).and_then(Option::as_ref)));
    }
    suite
}

/// The suites after the servers': the sections no probe reaches, and the waiver notices.
fn other_suites(r: &Report) -> Vec<TestSuite> {
    let mut suites = Vec::new();
    let mut not = TestSuite::new(NOT_REACHABLE);
    not.add_properties(provenance(r));
    for u in r.benchmark.sections_unreached() {
        let mut st = TestCaseStatus::skipped();
        st.set_message(format!("governs {}; {}", u.governs, u.why));
        let mut c = TestCase::new(format!("section {}: {}", u.section, u.title), st);
        c.set_classname(format!("cis-mcp.section-{}", u.section));
        not.add_test_case(c);
    }
    suites.push(not);
    // Each stale and expired waiver, a skipped case saying so (docs/report.md, 3b).
    if let Some(w) = r.waivers.as_ref().filter(|w| !w.notices().is_empty()) {
        let mut suite = TestSuite::new(format!("waivers {}", line(&w.file)));
        suite.add_properties(provenance(r));
        for n in w.notices() {
            let mut st = TestCaseStatus::skipped();
            st.set_message(line(&n));
            let mut c = TestCase::new(line(&n), st);
            c.set_classname("mcp-grade.waivers");
            suite.add_test_case(c);
        }
        suites.push(suite);
    }
    suites
}

/// The JUnit XML document of `r`: the bytes of [`to_writer`].
pub fn to_string(r: &Report) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = to_writer(r, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

fn xml(report: &JUnit) -> std::io::Result<String> {
    report.to_string().map_err(std::io::Error::other)
}

/// Where the `<testsuites …>` start tag of a document `quick-junit` wrote ends.
fn root_end(doc: &str) -> usize {
    doc.find("<testsuites")
        .and_then(|a| doc[a..].find('>').map(|b| a + b + 1))
        .unwrap_or(0)
}

/// The `<testsuite>` elements of a document `quick-junit` wrote: what is between the
/// `<testsuites …>` start tag and its end tag.
fn inner(doc: &str) -> &str {
    let start = root_end(doc);
    let end = doc.rfind("\n</testsuites>").unwrap_or(doc.len()).max(start);
    &doc[start..end]
}

/// The JUnit XML document of `r` written to `w` one server's suite at a time (the bytes
/// `quick-junit` writes for the whole document): the root's counts are summed over the
/// suites first (each server's outcomes read once for that), then the root's start tag,
/// each suite written alone and cut out of its own document, and the end tag.
pub fn to_writer(r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let others = other_suites(r);
    let labels = r.labels();
    let mut root = JUnit::new(NAME);
    for i in 0..labels.len() {
        let o = r.server_outcomes(i).map_err(std::io::Error::other)?;
        let mut counts = TestSuite::new("");
        for (k, row) in r.rows.iter().enumerate() {
            count(&mut counts, row, i, o.get(k).and_then(Option::as_ref));
        }
        root.add_test_suite(counts);
        root.test_suites.clear();
    }
    for s in &others {
        root.add_test_suite(s.clone());
    }
    root.test_suites.clear();
    let head = xml(&root)?;
    w.write_all(&head.as_bytes()[..root_end(&head)])?;
    let mut one = |suite: TestSuite| -> std::io::Result<()> {
        let mut doc = JUnit::new(NAME);
        doc.add_test_suite(suite);
        w.write_all(inner(&xml(&doc)?).as_bytes())
    };
    for (i, label) in labels.iter().enumerate() {
        let o = r.server_outcomes(i).map_err(std::io::Error::other)?;
        one(server_suite(r, i, label, &o))?;
    }
    for s in others {
        one(s)?;
    }
    w.write_all(b"\n</testsuites>\n")
}
