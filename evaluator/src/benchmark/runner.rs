//! The grading runner: every check of one benchmark definition on every bundle, with the
//! uniform preconditions ([`crate::preconditions::run_rule`]), the transports and eras each row names,
//! and the row's parameters handed to its rule.

use super::{Benchmark, Entry, Eras};
use crate::check::{Check, Context};
use crate::evidence::Bundle;
use crate::preconditions::{across_eras, other_eras_unasked, run_rule};
use crate::verdict::{Outcome, Verdict};
use mcp_probe_schema::vocab::family;

/// One check's result on one bundle.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// The check.
    pub entry: &'static Entry,
    /// `None` when this build does not grade the check.
    pub outcome: Option<Outcome>,
}

/// Grade every check of `bm` (at `level` or below, when given) on `ev`. A check whose
/// row says `eras = "every"` (or `"every-recorded"`) is graded on every era the bundle
/// probed (the negotiated one and each of `session.other_eras`) and the outcomes are
/// combined ([`across_eras`]).
pub fn grade_bundle(
    bm: &'static Benchmark,
    ev: &Bundle,
    cx: &Context<'_>,
    level: Option<u8>,
) -> Vec<CheckResult> {
    graded(bm, ev, cx, level, render_through)
}

/// [`grade_bundle`] for a report: each leg's note, which no report prints (what
/// [`compact`] drops), is emptied instead of rendered ([`Outcome::rendered_for_report`]).
pub fn grade_bundle_for_report(
    bm: &'static Benchmark,
    ev: &Bundle,
    cx: &Context<'_>,
    level: Option<u8>,
) -> Vec<CheckResult> {
    graded(bm, ev, cx, level, |bm, entry, o| {
        o.rendered_for_report(&Row {
            bm,
            here: entry.id.as_str(),
        })
    })
}

/// Every check of `bm` in scope graded on `ev`, each outcome rendered by `render`.
fn graded(
    bm: &'static Benchmark,
    ev: &Bundle,
    cx: &Context<'_>,
    level: Option<u8>,
    render: impl Fn(&Benchmark, &Entry, Outcome) -> Outcome,
) -> Vec<CheckResult> {
    let others = ev.other_eras();
    bm.checks
        .iter()
        .filter(|e| level.is_none_or(|l| e.level.number() <= l))
        .map(|entry| CheckResult {
            entry,
            outcome: grade_row(entry, ev, &others, cx).map(|o| render(bm, entry, o)),
        })
        .collect()
}

/// One row graded on `ev` (and on each era view in `others` the row asks for), as its
/// rule wrote it: sub-verdicts by local name, references unrendered
/// ([`render_through`] renders them). `None` when this build does not grade the row.
pub fn grade_row(
    entry: &Entry,
    ev: &Bundle,
    others: &[Bundle],
    cx: &Context<'_>,
) -> Option<Outcome> {
    let c = entry.grader?;
    if let Some(na) = off_transport(entry, ev) {
        return Some(na);
    }
    let cx = Context {
        params: &entry.params,
        unreached: entry.unreached,
        ..*cx
    };
    let first = run_rule(c, ev, &cx);
    let first = if entry.eras == Eras::Negotiated {
        first
    } else {
        other_eras_unasked(ev, first)
    };
    // The other eras the row is graded on, counted first so the list of outcomes is
    // made once with room for all of them (and no list of the eras themselves).
    let probed = |o: &&Bundle| match entry.eras {
        Eras::Negotiated => false,
        Eras::Every => true,
        Eras::EveryRecorded => recorded_on(c, o),
    };
    let n = others.iter().filter(probed).count();
    let out = if n == 0 {
        first
    } else {
        let mut all = Vec::with_capacity(1 + n);
        all.push((ev.revision_label(), first));
        all.extend(
            others
                .iter()
                .filter(probed)
                .map(|o| (o.revision_label(), run_rule(c, o, &cx))),
        );
        across_eras(all)
    };
    Some(crate::checks::common::transport::qualify(c, ev, out))
}

/// How a row renders the references its rule wrote ([`crate::refs`]).
struct Row<'a> {
    bm: &'a Benchmark,
    here: &'static str,
}

impl crate::refs::Numbering for Row<'_> {
    fn here(&self) -> &str {
        self.here
    }
    fn number_of(&self, id: &str) -> Option<&str> {
        self.bm.number_of(id).map(|n| n.as_str())
    }
}

/// `out`, as the rule wrote it, rendered through `entry`'s row of `bm`
/// ([`Outcome::rendered`]): nothing after the runner sees a local name or a reference.
pub fn render_through(bm: &Benchmark, entry: &Entry, out: Outcome) -> Outcome {
    out.rendered(&Row {
        bm,
        here: entry.id.as_str(),
    })
}

/// N/A naming the transport, for a check whose row does not list the bundle's.
fn off_transport(entry: &Entry, ev: &Bundle) -> Option<Outcome> {
    let t = ev.transport();
    if entry.transports.includes(t) {
        return None;
    }
    let what = if ev.is_stdio() {
        crate::format_exact!(
            "transport stdio: the server was launched as a local process ({}) and spoken to over its stdin \
             and stdout; what {} reads exists only on HTTP",
            crate::fmt::Line(&ev.payload.target.as_typed),
            entry.id
        )
    } else {
        crate::format_exact!(
            "transport {t}: the benchmark definition grades {} on {} only",
            entry.id,
            entry.transports.labels().join(", ")
        )
    };
    Some(
        Outcome::single(
            Verdict::NotApplicable,
            what,
            if ev.is_stdio() {
                "the check's subject is an HTTP property; a stdio server has none"
            } else {
                "the check's subject is a property of another transport"
            },
        )
        .with_detail("transport", t),
    )
}

/// True when the era view `o` holds a record of one of the rule's per-era legs: a rule
/// graded on `every-recorded` eras is graded on `o` only then.
fn recorded_on(check: &dyn Check, o: &Bundle) -> bool {
    let legs = check.legs(o.session().and_then(|s| s.era));
    legs.required
        .iter()
        .chain(legs.optional)
        .filter(|l| family::PER_ERA.contains(l))
        .any(|l| o.has_leg(*l))
}

/// Keep of `results` only what a report prints, for a report over many bundles: each
/// leg's note goes (no report prints it: the evidence text already carries every note,
/// and the JSON report lists each leg's outcome only). Verdicts, evidence, reduction,
/// records and details are unchanged. Spare capacity is left as it is: outcomes that
/// go to a spill file are encoded and dropped, and a report that holds its outcomes
/// holds fewer than `commands::grade::SPILL_FROM` servers' (their spare room is a few
/// KiB a server, where giving it back took a reallocation of each string and list).
pub fn compact(results: &mut [CheckResult]) {
    for o in results.iter_mut().filter_map(|r| r.outcome.as_mut()) {
        for l in &mut o.subs {
            l.note = String::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::model::Era;
    use mcp_probe_schema::vocab::LegId;

    #[test]
    fn checks_off_their_transports_are_na_on_a_stdio_bundle_and_graded_on_http() {
        use crate::fixture::{evidence, session, stdio_evidence};
        let bm = Benchmark::builtin();
        let s = || Some(session(Some("2026-07-28"), serde_json::json!({}), None));
        let stdio = grade_bundle(
            bm,
            &stdio_evidence(s(), Vec::new()),
            &Context::default(),
            None,
        );
        let http = grade_bundle(bm, &evidence(s(), Vec::new()), &Context::default(), None);
        let mut off = 0;
        for (on_stdio, on_http) in stdio.iter().zip(&http) {
            let (a, b) = (
                on_stdio.outcome.as_ref().expect("graded"),
                on_http.outcome.as_ref().expect("graded"),
            );
            if !on_stdio.entry.transports.stdio {
                off += 1;
                assert_eq!(a.verdict, Verdict::NotApplicable, "{}", on_stdio.entry.id);
                assert!(
                    a.evidence.starts_with("transport stdio: "),
                    "{}",
                    a.evidence
                );
                assert!(!b.evidence.starts_with("transport stdio"), "{}", b.evidence);
            } else {
                assert!(
                    !a.evidence.starts_with("transport stdio: "),
                    "{}",
                    a.evidence
                );
            }
        }
        assert!(off > 0);
    }

    /// Graded for a report, every outcome is the one `grade_bundle` gives with its legs'
    /// notes emptied (what `compact` leaves of them).
    #[test]
    fn graded_for_a_report_it_is_grade_bundle_without_the_notes() {
        let bm = Benchmark::builtin();
        let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut notes = 0;
        for name in ["fastmcp.mcpev", "py2-auth.mcpev", "ts2.mcpev"] {
            let path = examples.join(name);
            let bytes = std::fs::read(&path).expect("an example bundle");
            let ev = Bundle::new(
                name,
                mcp_probe_schema::open(&bytes, &[]).expect("an example verifies"),
            );
            let mut want = grade_bundle(bm, &ev, &Context::default(), None);
            notes += want
                .iter()
                .flat_map(|r| r.outcome.iter().flat_map(|o| &o.subs))
                .filter(|l| !l.note.is_empty())
                .count();
            compact(&mut want);
            let got = grade_bundle_for_report(bm, &ev, &Context::default(), None);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!(std::ptr::eq(g.entry, w.entry));
                assert_eq!(g.outcome, w.outcome, "{}", g.entry.id);
            }
        }
        assert!(notes > 0, "no leg had a note to empty");
    }

    #[test]
    fn grade_applies_the_unasked_era_rule_to_the_per_era_checks_only() {
        let modern = || {
            Some(crate::fixture::session(
                Some("2026-07-28"),
                serde_json::json!({}),
                None,
            ))
        };
        // Written before the era probe: 2026-07-28, no era.initialize, no other_eras.
        let mut payload = mcp_probe_schema::testkit::evidence(crate::fixture::ENDPOINT, Vec::new());
        payload.session = modern();
        let bytes = mcp_probe_schema::seal(&payload, &mcp_probe_schema::testkit::test_key(7));
        let old = Bundle::new(
            "old.mcpev",
            mcp_probe_schema::open(&bytes, &[]).expect("verifies"),
        );
        for r in grade_bundle(Benchmark::builtin(), &old, &Context::default(), None) {
            let o = r.outcome.expect("graded");
            let names = o.evidence.contains("era.initialize");
            if r.entry.eras != Eras::Negotiated && o.verdict != Verdict::Fail {
                assert!(names, "{}: {} {}", r.entry.id, o.verdict, o.evidence);
                assert_eq!(o.verdict, Verdict::Error, "{}", r.entry.id);
            } else {
                assert!(!names, "{}: {}", r.entry.id, o.evidence);
            }
        }
    }

    #[test]
    fn the_per_era_checks_read_exactly_the_per_era_legs() {
        let mut read = Vec::new();
        for entry in Benchmark::builtin()
            .checks
            .iter()
            .filter(|e| e.eras != Eras::Negotiated)
        {
            let legs = entry.grader.expect("graded").legs(Some(Era::Legacy));
            let mine: Vec<LegId> = legs
                .required
                .iter()
                .chain(legs.optional)
                .copied()
                .filter(|l| family::PER_ERA.contains(l))
                .collect();
            assert!(!mine.is_empty(), "{} reads no per-era leg", entry.id);
            read.extend(mine);
        }
        for l in family::PER_ERA {
            assert!(read.contains(&l), "no per-era check reads {l}");
        }
    }
}
