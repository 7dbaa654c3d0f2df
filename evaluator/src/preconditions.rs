//! Grading one rule on one bundle, part of the kit rules are written with: the uniform
//! preconditions ([`run_rule`]: a session where the rule needs one; every required leg
//! present), ERROR naming missing legs ([`missing_legs`]), and the one rule that combines
//! the outcomes of a rule on several eras ([`across_eras`]). The runner over a benchmark
//! definition is [`crate::benchmark::runner`], above the rules.

use crate::check::{Check, Context, Needs};
use crate::details::{Detail, Details};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, Part, Verdict};
use mcp_probe_schema::vocab::{leg, LegId};

/// One outcome from the outcomes of a check on each era (`(revision, outcome)`, the
/// negotiated era first), by the one rule of legs and eras ([`crate::verdict::combine`]):
/// an era on which the check's subject did not arise ([`Outcome::part`]: NO-REV, N/A, or
/// marked with [`Outcome::not_arisen`]) is named in the evidence as not applicable there
/// and does not weaken what another era decided; among the others FAIL, ERROR, UNKNOWN,
/// PASS. Every leg is named with its era (`2.3a@2025-11-25`), the evidence of each era
/// is prefixed with it, the records of all are listed, the first era's details are kept
/// with each era's verdict, applicability and details under `eras`.
pub fn across_eras(all: Vec<(String, Outcome)>) -> Outcome {
    let combined = crate::verdict::combine(all.iter().map(|(_, o)| o.part()));
    // Each era's `on <revision>: …`, joined by ` | `, written into one string of the
    // length it will have.
    let evidence_len = all
        .iter()
        .map(|(r, o)| {
            let head = match o.part() {
                Part::NotArisen(n) => {
                    "not applicable there (".len()
                        + n.phrase().len()
                        + "; ".len()
                        + o.verdict.mark().len()
                        + " on its own): ".len()
                }
                _ => o.verdict.mark().len() + 1,
            };
            " | on ".len() + r.len() + ": ".len() + head + o.evidence.len()
        })
        .sum::<usize>();
    let mut evidence = String::with_capacity(evidence_len);
    for (i, (r, o)) in all.iter().enumerate() {
        if i > 0 {
            evidence.push_str(" | ");
        }
        evidence.push_str("on ");
        evidence.push_str(r);
        evidence.push_str(": ");
        if let Part::NotArisen(n) = o.part() {
            evidence.push_str("not applicable there (");
            evidence.push_str(n.phrase());
            evidence.push_str("; ");
            evidence.push_str(o.verdict.mark());
            evidence.push_str(" on its own): ");
        } else {
            evidence.push_str(o.verdict.mark());
            evidence.push(' ');
        }
        evidence.push_str(&o.evidence);
    }
    // `<first era's reduction>; graded on every era the server serves (<revisions>); …`,
    // written into one string of the length it will have (no list of revisions, no join).
    const GRADED: &str = "graded on every era the server serves (";
    const RULE: &str = "); an era on which the subject did not arise does not count, and the \
                        worst of the others decides";
    let first_reduction = all.first().map(|(_, o)| o.reduction.as_ref()).unwrap_or("");
    let revisions_len = all.iter().map(|(r, _)| r.len() + ", ".len()).sum::<usize>();
    let mut reduction = String::with_capacity(
        first_reduction.len() + 2 + GRADED.len() + revisions_len + RULE.len(),
    );
    reduction.push_str(first_reduction);
    if !first_reduction.is_empty() {
        reduction.push_str("; ");
    }
    reduction.push_str(GRADED);
    for (i, (r, _)) in all.iter().enumerate() {
        if i > 0 {
            reduction.push_str(", ");
        }
        reduction.push_str(r);
    }
    reduction.push_str(RULE);
    let mut out = Outcome::single(combined.verdict, evidence, reduction);
    out.not_arisen = combined.not_arisen;
    // The first era's details shown at the top too: a copy with room for `eras`.
    out.details = all
        .first()
        .map(|(_, o)| o.details.clone_with_room(1))
        .unwrap_or_default();
    out.subs
        .reserve_exact(all.iter().map(|(_, o)| o.subs.len()).sum());
    out.records
        .reserve_exact(all.iter().map(|(_, o)| o.records.len()).sum());
    let mut eras = Vec::with_capacity(all.len());
    for (rev, o) in all {
        let applicable = !matches!(o.part(), Part::NotArisen(_));
        out.subs.extend(o.subs.into_iter().map(|mut l| {
            l.id.push('@');
            l.id.push_str(&rev);
            l
        }));
        out.records.extend(o.records);
        // The object `json!` would make of these four, as details, with the era's details
        // moved in rather than serialised into a copy. The four names differ, so each
        // goes last without a search for it.
        let mut era = Details::with_capacity(4);
        era.push("revision".into(), rev.into());
        era.push("verdict".into(), o.verdict.mark().into());
        era.push("applicable".into(), applicable.into());
        era.push("details".into(), Detail::Object(o.details));
        eras.push(Detail::Object(era));
    }
    out.records.sort_unstable();
    out.records.dedup();
    out.details.insert("eras".into(), Detail::Array(eras));
    out
}

/// A per-era check's outcome on the negotiated era of a bundle whose collector never
/// asked whether the server serves another era, which must not read as "the server
/// speaks one era". The current collector, on a 2026-07-28 session over HTTP (not
/// `--info`), always sends an `initialize` of the legacy era under the leg
/// [`leg::ERA_INITIALIZE`]: answered, the era is in `session.other_eras`; refused, the
/// record says the server speaks 2026-07-28 only. Collectors from before that probe
/// wrote neither. On such a bundle a FAIL stays (it was observed on the negotiated era
/// and no other era can lift it); any other verdict could change on the era never
/// asked, so it is ERROR naming the missing leg and the collector that wrote the bundle.
/// Every other bundle (one that asked, a legacy, stdio or `--info` one) is unchanged.
pub fn other_eras_unasked(ev: &Bundle, first: Outcome) -> Outcome {
    let never_asked = ev.is_modern()
        && !ev.is_stdio()
        && !ev.payload.run.options.info_only
        && ev.session().is_some_and(|s| s.other_eras.is_empty())
        && !ev.has_leg(leg::ERA_INITIALIZE);
    if !never_asked || first.verdict == Verdict::Fail {
        return first;
    }
    let missing = missing_legs(ev, &[leg::ERA_INITIALIZE]);
    let mut out = Outcome::single(
        Verdict::Error,
        crate::format_exact!(
            "on {}: {} {} | on the other eras: never asked: {} (no session of another era was \
             opened, so whether the server serves one, and what this check reads there, is \
             not in the bundle)",
            ev.revision_label(),
            first.verdict,
            first.evidence,
            missing.evidence
        ),
        first.reduction,
    )
    .with_records(first.records);
    out.details = first.details;
    out
}

/// ERROR naming `legs`, which this bundle lacks, and the collector that wrote it (name,
/// version and build): the runner's answer for a missing required leg, and a check's for
/// a leg it needs only on some paths.
pub fn missing_legs(ev: &Bundle, legs: &[LegId]) -> Outcome {
    let names: Vec<&str> = legs.iter().map(|l| l.as_str()).collect();
    Outcome::single(
        Verdict::Error,
        crate::format_exact!(
            "leg(s) {} missing from this bundle, written by {} {} (build {}, run status {}); re-collect \
             with a collector that records them",
            names.join(", "),
            crate::fmt::Line(&ev.payload.collector.name),
            crate::fmt::Line(&ev.payload.collector.version),
            crate::fmt::Line(&ev.payload.collector.build),
            ev.payload.run.status.as_str()
        ),
        "",
    )
}

/// The client configuration entry a bundle was collected from, named for the evidence,
/// when that entry configures a credential the run did not supply (`--from-config`
/// without `--use-config-credentials`): the client would inject it, the probe did not.
fn not_supplied(ev: &Bundle) -> Option<String> {
    let src = ev.payload.target.source.as_ref()?;
    (src.credential_configured && !src.credential_supplied).then(|| {
        crate::format_exact!(
            "the {} configuration {} (entry {})",
            crate::fmt::Line(&src.client),
            crate::fmt::Line(&src.file),
            crate::fmt::Line(&src.entry)
        )
    })
}

/// Grade one check with the uniform preconditions.
pub fn run_rule(check: &dyn Check, ev: &Bundle, cx: &Context<'_>) -> Outcome {
    let reduction = "";
    if check.needs() == Needs::Session && ev.revision().is_none() {
        let s = ev.session();
        let failure = ev
            .payload
            .run
            .failure
            .clone()
            .unwrap_or_else(|| "no session was established".into());
        return match s {
            Some(s) if s.auth_required && !s.authenticated => match not_supplied(ev) {
                Some(entry) => Outcome::single(
                    Verdict::Unknown,
                    crate::format_exact!(
                        "credential injected by the client, not supplied: {entry} gives the server a \
                         credential the run did not use (--use-config-credentials), and the endpoint \
                         answered 401 without it, so nothing past the challenge was observed ({failure})"
                    ),
                    reduction,
                ),
                None => Outcome::single(
                    Verdict::Unknown,
                    crate::format_exact!(
                        "the endpoint answered 401 and the run presented no credential, so nothing past the \
                         challenge was observed ({failure})"
                    ),
                    reduction,
                ),
            },
            _ => Outcome::single(Verdict::Error, crate::format_exact!("no MCP session: {failure}"), reduction),
        };
    }
    let era = ev.session().and_then(|s| s.era);
    let missing: Vec<LegId> = check
        .legs(era)
        .required
        .iter()
        .copied()
        .filter(|l| !ev.has_leg(*l))
        .collect();
    if !missing.is_empty() {
        return missing_legs(ev, &missing);
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check.grade(ev, cx))) {
        Ok(o) => o,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Outcome::single(
                Verdict::Error,
                crate::format_exact!("check raised: {msg}"),
                reduction,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{NotArisen, SubOutcome, SubVerdict};

    /// A sealed bundle of `session` and `records`, its payload changed by `edit` first.
    fn bundle(
        session: Option<mcp_probe_schema::model::Session>,
        records: Vec<mcp_probe_schema::model::Record>,
        edit: impl FnOnce(&mut mcp_probe_schema::model::Evidence),
    ) -> Bundle {
        let mut payload = mcp_probe_schema::testkit::evidence(crate::fixture::ENDPOINT, records);
        payload.session = session;
        payload.collector.build = "0123abc".into();
        edit(&mut payload);
        let bytes = mcp_probe_schema::seal(&payload, &mcp_probe_schema::testkit::test_key(7));
        Bundle::new(
            "old.mcpev",
            mcp_probe_schema::open(&bytes, &[]).expect("verifies"),
        )
    }

    #[test]
    fn a_per_era_check_on_a_bundle_that_never_asked_the_other_eras_is_error_unless_it_failed() {
        use crate::fixture::{exchange, session};
        let modern = || Some(session(Some("2026-07-28"), serde_json::json!({}), None));
        let pass = || Outcome::single(Verdict::Pass, "a: rejected", "r").with_records([3]);
        // Written before the era probe: 2026-07-28, no era.initialize, no other_eras.
        let old = bundle(modern(), Vec::new(), |_| {});
        let o = other_eras_unasked(&old, pass());
        assert_eq!(o.verdict, Verdict::Error, "{}", o.evidence);
        for named in [
            "on 2026-07-28: PASS a: rejected",
            "leg(s) era.initialize missing",
            "mcp-collect",
            "build 0123abc",
        ] {
            assert!(o.evidence.contains(named), "{named}: {}", o.evidence);
        }
        assert_eq!(
            (o.records.as_slice(), o.reduction.as_ref()),
            ([3].as_slice(), "r")
        );
        // Not arisen, UNKNOWN and ERROR on the negotiated era could all turn on the other.
        for v in [Verdict::NotApplicable, Verdict::Unknown, Verdict::Error] {
            let o = other_eras_unasked(&old, Outcome::single(v, "x", ""));
            assert_eq!(o.verdict, Verdict::Error, "{v}");
        }
        // A FAIL was observed: it stays, unchanged.
        let fail = Outcome::single(Verdict::Fail, "a: accepted", "");
        let o = other_eras_unasked(&old, fail);
        assert_eq!(
            (o.verdict, o.evidence.as_str()),
            (Verdict::Fail, "a: accepted")
        );
        // The current collector asked and the server refused the legacy era: one era,
        // observed, so the verdict stands.
        let refused = exchange(
            &["era.initialize"],
            r#"{"jsonrpc":"2.0","id":9,"method":"initialize"}"#,
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32022,"message":"unsupported"}}"#,
            &[],
        );
        let asked = bundle(modern(), vec![refused], |_| {});
        assert_eq!(other_eras_unasked(&asked, pass()).verdict, Verdict::Pass);
        // A legacy session (2026-07-28 refused at detection), an --info run and a stdio
        // bundle: no collector sends the era probe there; nothing changes.
        let legacy = bundle(
            Some(session(Some("2025-11-25"), serde_json::json!({}), None)),
            Vec::new(),
            |_| {},
        );
        let info = bundle(modern(), Vec::new(), |p| p.run.options.info_only = true);
        let stdio = bundle(modern(), Vec::new(), |p| {
            p.target.transport = mcp_probe_schema::model::Transport::Stdio
        });
        for ev in [&legacy, &info, &stdio] {
            assert_eq!(other_eras_unasked(ev, pass()).verdict, Verdict::Pass);
        }
    }

    /// The evidence and reduction [`across_eras`] writes into strings of their length are
    /// the texts of the `format!` and `join` it once used, and take no growth.
    #[test]
    fn across_eras_writes_the_texts_it_wrote_with_format_and_join() {
        let eras = |first_reduction: &'static str| {
            vec![
                (
                    "2026-07-28".to_string(),
                    Outcome::from_subs(
                        vec![SubVerdict::new("a", SubOutcome::Pass, "400 answered")],
                        first_reduction,
                    ),
                ),
                (
                    "2025-11-25".to_string(),
                    Outcome::not_arisen(NotArisen::NotOffered, "no stream", "other"),
                ),
                (
                    "2025-06-18".to_string(),
                    Outcome::single(Verdict::Fail, "202 accepted", ""),
                ),
            ]
        };
        for first_reduction in ["", "the operator's side"] {
            let all = eras(first_reduction);
            let old_evidence = all
                .iter()
                .map(|(r, o)| match o.part() {
                    Part::NotArisen(n) => format!(
                        "on {r}: not applicable there ({}; {} on its own): {}",
                        n.phrase(),
                        o.verdict.mark(),
                        o.evidence
                    ),
                    _ => format!("on {r}: {} {}", o.verdict.mark(), o.evidence),
                })
                .collect::<Vec<_>>()
                .join(" | ");
            let revisions: Vec<&str> = all.iter().map(|(r, _)| r.as_str()).collect();
            let old_reduction = format!(
                "{}{}graded on every era the server serves ({}); an era on which the subject did not arise \
                 does not count, and the worst of the others decides",
                first_reduction,
                if first_reduction.is_empty() { "" } else { "; " },
                revisions.join(", ")
            );
            let o = across_eras(all);
            assert_eq!(o.evidence, old_evidence);
            assert_eq!(o.reduction, old_reduction);
            assert!(o.evidence.capacity() <= old_evidence.len() + " | ".len());
            assert!(matches!(
                &o.reduction,
                std::borrow::Cow::Owned(r) if r.capacity() <= old_reduction.len() + ", ".len() + 2
            ));
        }
    }

    #[test]
    fn across_eras_follows_the_one_rule_and_names_the_era_in_every_leg() {
        let pass = Outcome::from_subs(vec![SubVerdict::new("a", SubOutcome::Pass, "400")], "r");
        let fail = Outcome::from_subs(vec![SubVerdict::new("a", SubOutcome::Fail, "202")], "r")
            .with_records([38]);
        let o = across_eras(vec![
            ("2026-07-28".into(), pass.clone()),
            ("2025-11-25".into(), fail),
        ]);
        assert_eq!(o.verdict, Verdict::Fail);
        let ids: Vec<&str> = o.subs.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["a@2026-07-28", "a@2025-11-25"]);
        assert!(o.evidence.starts_with("on 2026-07-28: PASS"));
        assert!(o.evidence.contains("| on 2025-11-25: FAIL"));
        assert_eq!(o.records, [38]);
        assert_eq!(o.details["eras"][1]["verdict"], "FAIL");
        // An era on which the subject did not arise (N/A, NO-REV, or marked) weakens no
        // other era; ERROR outranks UNKNOWN; an UNKNOWN that arose outranks PASS.
        let na = Outcome::single(Verdict::NotApplicable, "n", "");
        let o = across_eras(vec![("a".into(), na), ("b".into(), pass.clone())]);
        assert_eq!(o.verdict, Verdict::Pass);
        let o = across_eras(vec![
            ("a".into(), Outcome::single(Verdict::Unknown, "u", "")),
            ("b".into(), Outcome::single(Verdict::Error, "e", "")),
        ]);
        assert_eq!(o.verdict, Verdict::Error);
        let json = || Outcome::not_arisen(NotArisen::NotOffered, "json", "");
        let o = across_eras(vec![("a".into(), json()), ("b".into(), pass.clone())]);
        assert_eq!(o.verdict, Verdict::Pass);
        assert!(
            o.evidence.starts_with("on a: not applicable there ("),
            "{}",
            o.evidence
        );
        let o = across_eras(vec![
            ("a".into(), Outcome::single(Verdict::Unknown, "u", "")),
            ("b".into(), pass.clone()),
        ]);
        assert_eq!(o.verdict, Verdict::Unknown);
        let o = across_eras(vec![
            ("a".into(), json()),
            ("b".into(), Outcome::single(Verdict::NoRev, "r", "")),
        ]);
        assert_eq!(
            (o.verdict, o.not_arisen),
            (Verdict::Unknown, Some(NotArisen::NotOffered))
        );
        let o = across_eras(vec![
            ("a".into(), Outcome::single(Verdict::NotApplicable, "n", "")),
            ("b".into(), Outcome::single(Verdict::NoRev, "r", "")),
        ]);
        assert_eq!(o.verdict, Verdict::NoRev);
    }

    /// A bundle collected from a client configuration whose credential the run did not
    /// supply says so instead of a verdict about the server; without the configuration
    /// facts the sentence is the plain 401 one.
    #[test]
    fn a_credential_the_client_injects_and_the_run_did_not_supply_is_named() {
        struct NeedsSession;
        impl Check for NeedsSession {
            fn id(&self) -> &'static str {
                "needs-session"
            }
            fn legs(&self, _era: Option<mcp_probe_schema::model::Era>) -> crate::check::Legs {
                crate::check::Legs::NONE
            }
            fn grade(&self, _ev: &Bundle, _cx: &Context<'_>) -> Outcome {
                Outcome::single(Verdict::Pass, "graded", "")
            }
        }
        let mut s = crate::fixture::session(None, serde_json::json!({}), None);
        s.auth_required = true;
        s.authenticated = false;
        let mut ev = crate::fixture::evidence(Some(s), Vec::new());
        let o = run_rule(&NeedsSession, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(
            o.evidence.starts_with("the endpoint answered 401"),
            "{}",
            o.evidence
        );
        ev.payload_mut().target.source = Some(mcp_probe_schema::model::ConfigSource {
            client: "cursor".into(),
            file: ".cursor/mcp.json".into(),
            entry: "remote".into(),
            transport: "streamable-http".into(),
            credential_configured: true,
            credential_supplied: false,
            ..Default::default()
        });
        let o = run_rule(&NeedsSession, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(
            o.evidence.starts_with(
                "credential injected by the client, not supplied: the cursor configuration .cursor/mcp.json (entry remote)"
            ),
            "{}",
            o.evidence
        );
    }
}
