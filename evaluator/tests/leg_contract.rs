//! The leg contract: a check reads only the legs it declares ([`Check::legs`]), on every
//! example bundle, with and without a baseline. A check that starts reading a leg
//! without declaring it fails here, so the runner's "required leg missing" ERROR and
//! the declaration in the catalogue stay true.

mod support;

use support::examples;

use examples::examples;
use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::{track_leg_reads, Bundle};
use mcp_probe_evaluator::preconditions::run_rule;

#[test]
fn every_check_reads_only_the_legs_it_declares() {
    let mut problems = Vec::new();
    let mut graded = 0;
    for path in examples() {
        let bytes = std::fs::read(&path).expect("read example");
        let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
        let ev = Bundle::new(path.display().to_string(), v);
        let era = ev.session().and_then(|s| s.era);
        let own = Context {
            baseline: Some(&ev),
            updating_baseline: false,
            ..Context::default()
        };
        for entry in &mcp_probe_evaluator::benchmark::Benchmark::builtin().checks {
            let Some(check) = entry.grader else { continue };
            let declared = check.legs(era);
            for cx in [Context::default(), own] {
                let (_, read) = track_leg_reads(|| run_rule(check, &ev, &cx));
                graded += 1;
                for leg in read.iter().filter(|l| !declared.declares(l)) {
                    problems.push(format!(
                        "{} read {leg} on {} without declaring it",
                        entry.id,
                        path.display()
                    ));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(graded > 0, "no example bundle was graded");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn declared_legs_are_known_leg_ids() {
    use mcp_probe_schema::model::Era;
    use mcp_probe_schema::vocab::LegId;
    for entry in &mcp_probe_evaluator::benchmark::Benchmark::builtin().checks {
        let Some(check) = entry.grader else { continue };
        for era in [None, Some(Era::Modern), Some(Era::Legacy)] {
            let l = check.legs(era);
            for leg in l.required.iter().chain(l.optional) {
                assert!(LegId::parse(leg).is_some(), "{}: {leg}", entry.id);
            }
        }
    }
}
