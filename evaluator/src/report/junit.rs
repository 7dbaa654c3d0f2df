//! The JUnit XML report (`--format junit`), for CI systems that show test results
//! (GitLab, Jenkins, Azure DevOps …).
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

//!
//! The document is the one the `quick-junit` crate writes for the same report (its
//! elements, attribute order, `quick-xml` escaping and four-space indentation), which this
//! module used to call: it is written here, a suite at a time, with `quick-xml` directly.
//! `quick-junit` strips every string of ANSI escapes and control characters (through
//! `strip-ansi-escapes`, which runs a terminal parser over each character, most of this
//! report's cost); `xml_str` does the same stripping, and only for a string that has
//! something to strip.

use std::borrow::Cow;
use std::io::Write;
use std::ops::ControlFlow;

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use crate::fmt::escape_line;
use crate::verdict::{Outcome, Verdict};

use super::{Report, Row, Server};

/// The name of the report's root element.
pub const NAME: &str = "mcp-grade";
/// The last suite: the benchmark sections no probe reaches, each a skipped case.
pub const NOT_REACHABLE: &str = "benchmark sections not reachable by any probe";

/// `s` as `quick-junit` puts it in the document: ANSI escape sequences stripped (by
/// `strip-ansi-escapes`, which keeps a line feed and drops every other C0 and C1
/// control), then the C0 controls XML 1.0 forbids removed. A string with no C0 control
/// but the line feed and no C1 control is left as it is: the stripper prints every
/// other character unchanged, so only a string with a control is stripped.
fn xml_str(s: &str) -> Cow<'_, str> {
    if !has_control(s) {
        return Cow::Borrowed(s);
    }
    let stripped = strip_ansi_escapes::strip_str(s);
    Cow::Owned(stripped.replace(
        |c| matches!(c, '\x00'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f'),
        "",
    ))
}

/// Whether `s` holds a C0 control other than the line feed or a C1 control, read as
/// bytes: a C0 control is a byte below 0x20, a C1 control (U+0080-U+009F) the bytes
/// 0xC2 0x80-0x9F in UTF-8, where 0xC2 only ever starts a character.
fn has_control(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(i, &x)| {
        (x < 0x20 && x != b'\n') || (x == 0xc2 && b.get(i + 1).is_some_and(|n| *n <= 0x9f))
    })
}

/// The element of a case that did not pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Failure,
    Error,
    Skipped,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::Failure => "failure",
            Kind::Error => "error",
            Kind::Skipped => "skipped",
        }
    }
}

/// What a `<testcase>` holds besides its name and class.
enum Status {
    Success,
    /// `<failure>`, `<error>` or `<skipped>`, with a message, a type and a text.
    Other {
        kind: Kind,
        message: Option<String>,
        ty: Option<&'static str>,
        text: Option<String>,
    },
}

struct Case {
    name: String,
    classname: String,
    status: Status,
}

fn skipped(message: String, text: Option<String>) -> Status {
    Status::Other {
        kind: Kind::Skipped,
        message: Some(message),
        ty: None,
        text,
    }
}

fn case(row: &Row, i: usize, o: Option<&Outcome>) -> Case {
    let e = row.entry;
    let name = format!("{} {}", e.id.as_str(), e.title);
    let classname = format!("cis-mcp.section-{}", e.section());
    let Some(o) = o.filter(|_| row.verdicts.is_some()) else {
        return Case {
            name,
            classname,
            status: skipped("not graded by this build".into(), None),
        };
    };
    let evidence = escape_line(&o.evidence);
    let text = format!(
        "{}\nremediation: {}\nreduction: {}\nrecords: {}",
        evidence,
        e.remediation,
        escape_line(&o.reduction),
        o.records
            .iter()
            .map(|s| format!("#{s}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let failed = |kind| Status::Other {
        kind,
        message: Some(format!("{}: {evidence}", o.verdict.mark())),
        ty: Some(o.verdict.mark()),
        text: Some(text.clone()),
    };
    let status = match (o.verdict, row.mark(i).filter(|m| m.active)) {
        (Verdict::Pass, _) => Status::Success,
        (Verdict::Fail | Verdict::Error, Some(m)) => Status::Other {
            kind: Kind::Skipped,
            message: Some(format!(
                "{} waived until {} (waivers line {}): {}",
                o.verdict.mark(),
                m.expires,
                m.line,
                escape_line(&m.reason)
            )),
            ty: Some(o.verdict.mark()),
            text: Some(text.clone()),
        },
        (Verdict::Fail, None) => failed(Kind::Failure),
        (Verdict::Error, None) => failed(Kind::Error),
        (Verdict::Unknown | Verdict::NotApplicable | Verdict::NoRev, _) => skipped(
            format!("{}: {evidence}", o.verdict.mark()),
            Some(text.clone()),
        ),
    };
    Case {
        name,
        classname,
        status,
    }
}

/// A suite's (and the root's) counts: tests, skipped, failures, errors.
#[derive(Default, Clone, Copy)]
struct Counts {
    tests: usize,
    skipped: usize,
    failures: usize,
    errors: usize,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.tests += o.tests;
        self.skipped += o.skipped;
        self.failures += o.failures;
        self.errors += o.errors;
    }

    fn of(cases: &[Case]) -> Counts {
        let mut c = Counts::default();
        for case in cases {
            c.tests += 1;
            match &case.status {
                Status::Success => {}
                Status::Other { kind, .. } => match kind {
                    Kind::Failure => c.failures += 1,
                    Kind::Error => c.errors += 1,
                    Kind::Skipped => c.skipped += 1,
                },
            }
        }
        c
    }
}

/// How [`case`] counts the case of `row` on server `i`, from the verdicts alone (no
/// outcome is read back for the root's counts).
fn count(c: &mut Counts, row: &Row, i: usize) {
    c.tests += 1;
    let Some(v) = row.verdict(i) else {
        c.skipped += 1;
        return;
    };
    match (v, row.mark(i).filter(|m| m.active)) {
        (Verdict::Pass, _) => {}
        (Verdict::Fail, None) => c.failures += 1,
        (Verdict::Error, None) => c.errors += 1,
        _ => c.skipped += 1,
    }
}

/// The benchmark and grader of `r`, as suite properties.
fn provenance(r: &Report) -> Vec<(&'static str, String)> {
    let b = &r.provenance.benchmark;
    let g = &r.provenance.grader;
    let mut v = vec![
        ("benchmark.id", b.id.clone()),
        ("benchmark.name", b.name.clone()),
        ("benchmark.version", b.version.clone()),
        ("benchmark.sha256", b.sha256.clone()),
    ];
    if let Some(t) = &b.tailoring {
        v.push(("benchmark.tailoring.file", escape_line(&t.file)));
        v.push(("benchmark.tailoring.sha256", t.sha256.clone()));
    }
    if let Some(a) = &r.provenance.attestations {
        v.push(("attestations.file", escape_line(&a.file)));
        v.push(("attestations.sha256", a.sha256.clone()));
    }
    if let Some(c) = r.coverage() {
        v.push(("coverage", c.words()));
    }
    v.extend([
        ("grader.name", g.name.clone()),
        ("grader.version", g.version.clone()),
        ("grader.commit", g.commit.clone()),
        ("grader.target", g.target.clone()),
        ("grader.rustc", g.rustc.clone()),
    ]);
    v
}

struct Suite {
    name: String,
    properties: Vec<(&'static str, String)>,
    cases: Vec<Case>,
}

/// The suite of server `i` (`srv`): a case per check row, from its outcomes (one per
/// row).
fn server_suite(r: &Report, i: usize, srv: &Server, outcomes: &[Option<Outcome>]) -> Suite {
    let mut properties = provenance(r);
    // What came from the bundle, escaped to one line of printable text.
    properties.push(("collector", escape_line(&srv.collector)));
    properties.push(("collector.build", escape_line(&srv.collector_build)));
    Suite {
        name: r.label(i),
        properties,
        cases: r
            .rows
            .iter()
            .enumerate()
            .map(|(k, row)| case(row, i, outcomes.get(k).and_then(Option::as_ref)))
            .collect(),
    }
}

/// The suites after the servers': the sections no probe reaches, and the waiver notices.
fn other_suites(r: &Report) -> Vec<Suite> {
    let mut suites = vec![Suite {
        name: NOT_REACHABLE.to_string(),
        properties: provenance(r),
        cases: r
            .benchmark
            .sections_unreached()
            .map(|u| Case {
                name: format!("section {}: {}", u.section, u.title),
                classname: format!("cis-mcp.section-{}", u.section),
                status: skipped(format!("governs {}; {}", u.governs, u.why), None),
            })
            .collect(),
    }];
    // Each stale and expired waiver, a skipped case saying so (docs/report.md, 3b).
    if let Some(w) = r.waivers.as_ref().filter(|w| !w.notices().is_empty()) {
        suites.push(Suite {
            name: format!("waivers {}", escape_line(&w.file)),
            properties: provenance(r),
            cases: w
                .notices()
                .into_iter()
                .map(|n| Case {
                    name: escape_line(&n),
                    classname: "mcp-grade.waivers".into(),
                    status: skipped(escape_line(&n), None),
                })
                .collect(),
        });
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

type Xml<'w> = Writer<&'w mut dyn Write>;

fn start(tag: &str, attrs: &[(&str, &str)]) -> BytesStart<'static> {
    let mut t = BytesStart::new(tag.to_string());
    for (k, v) in attrs {
        t.push_attribute((*k, xml_str(v).as_ref()));
    }
    t
}

fn end(w: &mut Xml<'_>, tag: &str) -> std::io::Result<()> {
    w.write_event(Event::End(BytesEnd::new(tag)))
}

fn counted(c: Counts) -> [String; 4] {
    [c.tests, c.skipped, c.failures, c.errors].map(|n| n.to_string())
}

fn write_suite(w: &mut Xml<'_>, s: &Suite) -> std::io::Result<()> {
    let [tests, skipped, failures, errors] = counted(Counts::of(&s.cases));
    let tag = start(
        "testsuite",
        &[
            ("name", &s.name),
            ("tests", &tests),
            ("skipped", &skipped),
            ("errors", &errors),
            ("failures", &failures),
        ],
    );
    if s.properties.is_empty() && s.cases.is_empty() {
        return w.write_event(Event::Empty(tag));
    }
    w.write_event(Event::Start(tag))?;
    if !s.properties.is_empty() {
        w.write_event(Event::Start(BytesStart::new("properties")))?;
        for (name, value) in &s.properties {
            w.write_event(Event::Empty(start(
                "property",
                &[("name", name), ("value", value)],
            )))?;
        }
        end(w, "properties")?;
    }
    for c in &s.cases {
        let tag = start(
            "testcase",
            &[("name", &c.name), ("classname", &c.classname)],
        );
        let Status::Other {
            kind,
            message,
            ty,
            text,
        } = &c.status
        else {
            w.write_event(Event::Empty(tag))?;
            continue;
        };
        w.write_event(Event::Start(tag))?;
        let mut attrs: Vec<(&str, &str)> = Vec::new();
        if let Some(m) = message {
            attrs.push(("message", m));
        }
        if let Some(t) = ty {
            attrs.push(("type", t));
        }
        let status = start(kind.tag(), &attrs);
        match text {
            Some(text) => {
                w.write_event(Event::Start(status))?;
                w.write_event(Event::Text(BytesText::new(&xml_str(text))))?;
                end(w, kind.tag())?;
            }
            None => w.write_event(Event::Empty(status))?,
        }
        end(w, "testcase")?;
    }
    end(w, "testsuite")
}

/// The JUnit XML document of `r` written to `w` one server's suite at a time: the
/// root's counts first (from the verdicts and waiver marks, no outcome read), then each
/// server's suite (its outcomes read back once), then the other suites.
pub fn to_writer(r: &Report, w: &mut dyn Write) -> std::io::Result<()> {
    let others = other_suites(r);
    let mut total = Counts::default();
    for i in 0..r.servers.len() {
        for row in &r.rows {
            count(&mut total, row, i);
        }
    }
    for s in &others {
        total.add(Counts::of(&s.cases));
    }
    let mut x: Xml<'_> = Writer::new_with_indent(w, b' ', 4);
    x.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let [tests, skipped, failures, errors] = counted(total);
    x.write_event(Event::Start(start(
        "testsuites",
        &[
            ("name", NAME),
            ("tests", &tests),
            ("skipped", &skipped),
            ("failures", &failures),
            ("errors", &errors),
        ],
    )))?;
    r.each_server(|i, srv| {
        let o = r.server_outcomes(i).map_err(std::io::Error::other)?;
        write_suite(&mut x, &server_suite(r, i, srv, &o))?;
        Ok(ControlFlow::Continue(()))
    })?;
    for s in &others {
        write_suite(&mut x, s)?;
    }
    end(&mut x, "testsuites")?;
    x.write_event(Event::Eof)?;
    x.write_indent()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte scan finds what the scan of characters found: every character up to
    /// U+0800 and some beyond, alone and inside text, at its start, middle and end.
    #[test]
    fn control_found_by_bytes_as_by_characters() {
        let control = |c: char| (c < ' ' && c != '\n') || ('\u{80}'..='\u{9f}').contains(&c);
        let chars = (0..0x800u32)
            .chain([0xfeff, 0x1_f600, 0x10_ffff])
            .filter_map(char::from_u32);
        for c in chars {
            for s in [
                c.to_string(),
                format!("ab{c}"),
                format!("{c}xyz"),
                format!("µ{c}é"),
            ] {
                assert_eq!(
                    has_control(&s),
                    s.chars().any(control),
                    "U+{:04X} in {s:?}",
                    u32::from(c)
                );
            }
        }
    }

    /// What `quick-junit` makes of a string, every time: the slow path of [`xml_str`].
    fn stripped(s: &str) -> String {
        strip_ansi_escapes::strip_str(s).replace(
            |c| matches!(c, '\x00'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f'),
            "",
        )
    }

    #[test]
    fn only_strings_with_a_control_are_stripped_and_the_result_is_quick_junits() {
        let parts = [
            "a",
            " ",
            "<&>\"'",
            "\n",
            "\t",
            "\r",
            "\u{1b}[2J",
            "\u{1b}]0;t\u{7}",
            "\u{1b}",
            "\u{7f}",
            "\u{85}",
            "\u{9b}31m",
            "\u{a0}",
            "é",
            "😀",
            "\u{0}",
            "[",
            "m",
        ];
        // A small linear congruential generator: the same strings on every run.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..(seed % 9) {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                s.push_str(parts[(seed >> 33) as usize % parts.len()]);
            }
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let got = xml_str(&s);
            assert_eq!(got, stripped(&s), "{s:?}");
            if matches!(got, Cow::Owned(_)) {
                assert!(s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
            }
        }
        assert!(matches!(
            xml_str("plain\ntext <&> é 😀 \u{7f}"),
            Cow::Borrowed(_)
        ));
        assert_eq!(xml_str("x\u{1b}[31my\tz\r"), "xyz");
    }
}
