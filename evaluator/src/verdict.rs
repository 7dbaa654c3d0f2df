//! Verdicts, sub-verdict outcomes and worst-first aggregation (docs/checks.md, "Verdicts and aggregation").

use serde::Serialize;
use std::borrow::Cow;

use crate::details::{Detail, Details};

/// The six verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Verdict {
    /// The observable part the check scopes itself to was satisfied.
    #[serde(rename = "PASS")]
    Pass,
    /// It was not, by a positive observation attributable to the server.
    #[serde(rename = "FAIL")]
    Fail,
    /// The mechanism exists only in 2026-07-28 and the server negotiated an older revision.
    #[serde(rename = "NO-REV")]
    NoRev,
    /// This run's observations do not decide; a later run might.
    #[serde(rename = "UNKNOWN")]
    Unknown,
    /// Wholly operator-side, or the governed condition was observed absent.
    #[serde(rename = "N/A")]
    NotApplicable,
    /// The observation was never made or cannot be attributed to the server.
    #[serde(rename = "ERROR")]
    Error,
}

impl Verdict {
    /// Report order: PASS, FAIL, NO-REV, UNKNOWN, N/A, ERROR.
    pub const ORDER: [Verdict; 6] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::NoRev,
        Verdict::Unknown,
        Verdict::NotApplicable,
        Verdict::Error,
    ];

    /// The mark printed in reports and used in JSON.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NoRev => "NO-REV",
            Verdict::Unknown => "UNKNOWN",
            Verdict::NotApplicable => "N/A",
            Verdict::Error => "ERROR",
        }
    }
}

impl From<NotArisen> for Verdict {
    fn from(n: NotArisen) -> Verdict {
        n.alone()
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mark())
    }
}

/// Why a check's subject did not arise on a part (a sub-verdict, or the check on one era): the
/// part is *not applicable there*. It is named in the evidence and never weakens what
/// another part decided ([`combine`]). Each kind says what the check is when no part
/// applies at all ([`NotArisen::alone`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotArisen {
    /// A mechanism or field the negotiated revision does not define (2026-07-28 only: the
    /// `_meta` sender key `notification-identity` looks for, the header pair of
    /// `revisions-pinned`). Alone: NO-REV.
    Revision,
    /// The feature is absent where the part looked, by observation: a transport without it,
    /// a server that offers no OAuth. Alone: N/A.
    Absent,
    /// The answer the check judges was not offered to the probe's request (no event stream
    /// to judge `auth-before-stream` on: the request was answered as JSON). Alone: UNKNOWN, since another
    /// request or run may draw it.
    NotOffered,
}

impl NotArisen {
    /// The verdict of a check on which no part applied, every part being of this kind.
    pub fn alone(self) -> Verdict {
        match self {
            NotArisen::Revision => Verdict::NoRev,
            NotArisen::Absent => Verdict::NotApplicable,
            NotArisen::NotOffered => Verdict::Unknown,
        }
    }

    /// Words for the evidence: why the part does not apply.
    pub fn phrase(self) -> &'static str {
        match self {
            NotArisen::Revision => "the negotiated revision does not define what it tests",
            NotArisen::Absent => "the feature it tests is absent there",
            NotArisen::NotOffered => "the answer it judges was not offered",
        }
    }

    /// Which kind speaks for parts none of which applied: one that may still arise
    /// (UNKNOWN) before a property of the revision (NO-REV) before an observed absence
    /// (N/A).
    fn rank(self) -> u8 {
        match self {
            NotArisen::NotOffered => 2,
            NotArisen::Revision => 1,
            NotArisen::Absent => 0,
        }
    }
}

/// The outcome of one sub-verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubOutcome {
    /// Graded pass.
    Pass,
    /// Graded fail.
    Fail,
    /// Graded unknown: the subject arose and the probe could not decide.
    Unknown,
    /// Graded error.
    Error,
    /// The sub-verdict's subject did not arise here ([`NotArisen`]): not applicable, excluded
    /// from aggregation unless no sub-verdict applies.
    NotArisen(NotArisen),
    /// Evidence only, never aggregated.
    Observed,
    /// Named but not probed, never aggregated.
    Dropped,
}

impl SubOutcome {
    /// The sub-verdict's mechanism needs 2026-07-28 (`revision_unsupported`).
    pub const REVISION_UNSUPPORTED: SubOutcome = SubOutcome::NotArisen(NotArisen::Revision);

    /// The outcome word of reports and details: `pass`, `fail`, `unknown`, `error`,
    /// `revision_unsupported` (not arisen: the revision lacks it), `not_arisen` (not
    /// arisen otherwise), `observed`, `dropped`.
    pub fn word(self) -> &'static str {
        match self {
            SubOutcome::Pass => "pass",
            SubOutcome::Fail => "fail",
            SubOutcome::Unknown => "unknown",
            SubOutcome::Error => "error",
            SubOutcome::NotArisen(NotArisen::Revision) => "revision_unsupported",
            SubOutcome::NotArisen(_) => "not_arisen",
            SubOutcome::Observed => "observed",
            SubOutcome::Dropped => "dropped",
        }
    }

    /// How the sub-verdict stands in [`combine`].
    pub fn part(self) -> Part {
        match self {
            SubOutcome::Pass => Part::Pass,
            SubOutcome::Fail => Part::Fail,
            SubOutcome::Unknown => Part::Unknown,
            SubOutcome::Error => Part::Error,
            SubOutcome::NotArisen(n) => Part::NotArisen(n),
            SubOutcome::Observed | SubOutcome::Dropped => Part::Bundle,
        }
    }
}

impl Serialize for SubOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.word())
    }
}

/// How one part (a sub-verdict, or a check's outcome on one era) stands when parts are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Applicable, passed.
    Pass,
    /// Applicable, failed.
    Fail,
    /// Applicable: the subject arose and the probe could not decide.
    Unknown,
    /// Applicable: the observation was never made or cannot be attributed.
    Error,
    /// Not applicable there: the subject did not arise.
    NotArisen(NotArisen),
    /// Evidence only (`observed`, `dropped` sub-verdicts): never counted.
    Bundle,
}

/// What combining parts gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Combined {
    /// The verdict.
    pub verdict: Verdict,
    /// `Some` when no part applied: the kind that speaks for them (the verdict is its
    /// [`NotArisen::alone`]). A combination that is itself not applicable stays so when it
    /// is combined again (a check of several sub-verdicts on one era, then across eras).
    pub not_arisen: Option<NotArisen>,
}

impl Combined {
    /// The combination as one sub-verdict's outcome (parts of a sub-verdict combined into it).
    pub fn sub(self) -> SubOutcome {
        match (self.not_arisen, self.verdict) {
            (Some(n), _) => SubOutcome::NotArisen(n),
            (None, Verdict::Pass) => SubOutcome::Pass,
            (None, Verdict::Fail) => SubOutcome::Fail,
            (None, Verdict::Error) => SubOutcome::Error,
            (None, _) => SubOutcome::Unknown,
        }
    }
}

/// **The one rule** for combining the parts of a check, sub-verdicts and eras alike
/// (docs/checks.md, "Verdicts and aggregation"). A part on which the check's subject did
/// not arise is not applicable and does not weaken the others; among the applicable
/// parts: any FAIL gives FAIL, else any ERROR gives ERROR, else any UNKNOWN gives UNKNOWN,
/// else PASS. When no part applies: UNKNOWN if one's answer was merely not offered, else
/// NO-REV if a revision lacks it, else N/A. No part at all (or evidence only) is UNKNOWN:
/// nothing decided cannot pass.
pub fn combine(parts: impl IntoIterator<Item = Part>) -> Combined {
    let (mut fail, mut error, mut unknown, mut pass) = (false, false, false, false);
    let mut absent: Option<NotArisen> = None;
    for p in parts {
        match p {
            Part::Fail => fail = true,
            Part::Error => error = true,
            Part::Unknown => unknown = true,
            Part::Pass => pass = true,
            Part::NotArisen(n) => {
                if absent.is_none_or(|a| n.rank() > a.rank()) {
                    absent = Some(n);
                }
            }
            Part::Bundle => {}
        }
    }
    let decided = |verdict| Combined {
        verdict,
        not_arisen: None,
    };
    if fail {
        decided(Verdict::Fail)
    } else if error {
        decided(Verdict::Error)
    } else if unknown {
        decided(Verdict::Unknown)
    } else if pass {
        decided(Verdict::Pass)
    } else {
        match absent {
            Some(n) => Combined {
                verdict: n.alone(),
                not_arisen: Some(n),
            },
            None => decided(Verdict::Unknown),
        }
    }
}

/// The verdict of `subs` by [`combine`]: worst applicable sub-verdict first (fail > error >
/// unknown > pass); sub-verdicts whose subject did not arise do not count unless none applies
/// (then NO-REV, N/A or UNKNOWN by their kind); `observed` and `dropped` sub-verdicts never count.
/// A check with no graded sub-verdict is UNKNOWN (a sub-verdict that decided nothing cannot pass).
pub fn aggregate(subs: &[SubVerdict]) -> Verdict {
    combine(subs.iter().map(|l| l.outcome.part())).verdict
}

/// One sub-verdict's outcome and note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubVerdict {
    /// The sub-verdict's local name (`a`, or `a@2025-11-25` once combined across eras):
    /// the runner puts the row's number in front (`5.1.1a`), so a renumbered revision
    /// reads in its own numbers.
    pub id: String,
    /// Outcome.
    pub outcome: SubOutcome,
    /// Why.
    pub note: String,
}

/// What a sub-verdict's id is given room for beyond its local name: `@2026-07-28`
/// (11 bytes) and the number of the row in front.
const ID_ROOM: usize = 24;

impl SubVerdict {
    /// A sub-verdict.
    pub fn new(id: &str, outcome: SubOutcome, note: impl Into<String>) -> SubVerdict {
        // Room for what the id gains later without growing it again: `@` and the era's
        // revision on a check graded per era, the row's number in front when rendered.
        let mut named = String::with_capacity(id.len() + ID_ROOM);
        named.push_str(id);
        SubVerdict {
            id: named,
            outcome,
            note: note.into(),
        }
    }
}

/// What grading one check on one bundle produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Sub-verdicts, in spec order. Reports call them legs (the JSON report's `legs`
    /// object), and so does this type's serialisation.
    #[serde(rename = "legs")]
    pub subs: Vec<SubVerdict>,
    /// Evidence text: `<sub-verdict>: <note>; …` or a single sentence.
    pub evidence: String,
    /// What part of the recommendation a black-box probe cannot reach: most often a
    /// rule's constant sentence, borrowed rather than copied.
    pub reduction: Cow<'static, str>,
    /// Seqs of the records that decided it.
    pub records: Vec<u64>,
    /// Check-specific facts (counts, statuses), in the order they were added.
    pub details: Details,
    /// `Some` when the check's subject did not arise on this bundle (or era) at all: the
    /// verdict is then that kind's [`NotArisen::alone`], and combined with other eras it
    /// does not count ([`Outcome::part`]). Set by [`Outcome::from_subs`] when no sub-verdict
    /// applies, by [`Outcome::single`] for NO-REV and N/A, and by [`Outcome::not_arisen`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_arisen: Option<NotArisen>,
}

impl Outcome {
    /// From sub-verdicts, combined by [`combine`]; evidence is the sub-verdicts' notes in order.
    pub fn from_subs(subs: Vec<SubVerdict>, reduction: impl Into<Cow<'static, str>>) -> Outcome {
        let c = combine(subs.iter().map(|l| l.outcome.part()));
        // `<here(id)>: <note>` joined by `; `, written into one string (no string per
        // sub-verdict, no join).
        let len = subs
            .iter()
            .map(|l| l.id.len() + l.note.len() + 12)
            .sum::<usize>();
        let mut evidence = String::with_capacity(len);
        for (i, l) in subs.iter().enumerate() {
            if i > 0 {
                evidence.push_str("; ");
            }
            crate::refs::push_here(&mut evidence, &l.id);
            evidence.push_str(": ");
            evidence.push_str(&l.note);
        }
        Outcome {
            verdict: c.verdict,
            subs,
            evidence,
            reduction: reduction.into(),
            records: Vec::new(),
            details: Default::default(),
            not_arisen: c.not_arisen,
        }
    }

    /// A verdict decided without sub-verdicts (preconditions, reported-only checks). NO-REV and
    /// N/A are by definition outcomes on which the subject did not arise (the revision
    /// lacks the mechanism; the condition is absent or wholly operator-side), so they are
    /// marked so; an UNKNOWN that means "did not arise" is made with
    /// [`Outcome::not_arisen`].
    pub fn single(
        verdict: Verdict,
        evidence: impl Into<String>,
        reduction: impl Into<Cow<'static, str>>,
    ) -> Outcome {
        Outcome {
            verdict,
            subs: Vec::new(),
            evidence: evidence.into(),
            reduction: reduction.into(),
            records: Vec::new(),
            details: Default::default(),
            not_arisen: match verdict {
                Verdict::NoRev => Some(NotArisen::Revision),
                Verdict::NotApplicable => Some(NotArisen::Absent),
                _ => None,
            },
        }
    }

    /// The check's subject did not arise here (`why`): the verdict is `why.alone()`, and
    /// on a bundle graded on several eras this era does not count.
    pub fn not_arisen(
        why: NotArisen,
        evidence: impl Into<String>,
        reduction: impl Into<Cow<'static, str>>,
    ) -> Outcome {
        let mut o = Outcome::single(why.alone(), evidence, reduction);
        o.not_arisen = Some(why);
        o
    }

    /// How this outcome stands when combined with the check's outcomes on other eras.
    pub fn part(&self) -> Part {
        if let Some(n) = self.not_arisen {
            return Part::NotArisen(n);
        }
        match self.verdict {
            Verdict::Pass => Part::Pass,
            Verdict::Fail => Part::Fail,
            Verdict::Unknown => Part::Unknown,
            Verdict::Error => Part::Error,
            Verdict::NoRev => Part::NotArisen(NotArisen::Revision),
            Verdict::NotApplicable => Part::NotArisen(NotArisen::Absent),
        }
    }

    /// Combine the sub-verdicts again (after sub-verdicts were added): verdict and `not_arisen`.
    pub fn recombine(&mut self) {
        let c = combine(self.subs.iter().map(|l| l.outcome.part()));
        self.verdict = c.verdict;
        self.not_arisen = c.not_arisen;
    }

    /// This outcome, as the rule wrote it, rendered by `n` ([`crate::refs`]): each
    /// sub-verdict's local name gets the row's number in front (`a@2025-11-25` becomes
    /// `2.3a@2025-11-25` under a row numbered 2.3), and every reference in the notes,
    /// evidence, reduction, string details and detail keys is rendered.
    pub fn rendered(self, n: &dyn crate::refs::Numbering) -> Outcome {
        self.render(n, true)
    }

    /// [`Outcome::rendered`] for a report, which prints no sub-verdict's note (the
    /// evidence text carries every note): each note is emptied instead of rendered.
    pub fn rendered_for_report(self, n: &dyn crate::refs::Numbering) -> Outcome {
        self.render(n, false)
    }

    fn render(mut self, n: &dyn crate::refs::Numbering, notes: bool) -> Outcome {
        // One scan of each text: `render` borrows text without references.
        let text = |s: &mut String| render_text(s, n);
        for l in &mut self.subs {
            debug_assert!(
                !l.id.starts_with(|c: char| c.is_ascii_digit()),
                "sub-verdict {:?} is written with a number: a rule names its sub-verdicts locally",
                l.id
            );
            l.id.insert_str(0, n.here());
            if notes {
                text(&mut l.note);
            } else {
                l.note = String::new();
            }
        }
        text(&mut self.evidence);
        match &mut self.reduction {
            Cow::Owned(r) => text(r),
            // A borrowed sentence is copied only when it holds a reference to render.
            Cow::Borrowed(r) => {
                if crate::refs::has_refs(r) {
                    text(self.reduction.to_mut());
                }
            }
        }
        for v in self.details.values_mut().filter(holds_text) {
            render_value(v, n);
        }
        self
    }

    /// Attach decisive record seqs.
    pub fn with_records(mut self, records: impl IntoIterator<Item = u64>) -> Outcome {
        if self.records.is_empty() {
            // The first records move in: a list collected from its own iterator keeps its
            // buffer, where extending an empty list copies it into a new one.
            self.records = records.into_iter().collect();
        } else {
            self.records.extend(records);
        }
        self.records.sort_unstable();
        self.records.dedup();
        self
    }

    /// Attach a check's typed facts: each field of `facts` (a struct serialising to a
    /// JSON object) becomes a detail, in field order.
    pub fn with_facts<T: Serialize>(mut self, facts: &T) -> Outcome {
        if let Some(m) = Details::from_facts(facts) {
            if self.details.is_empty() {
                // The same details as extending none, without inserting every key again.
                self.details = m;
            } else {
                self.details.extend(m);
            }
        }
        self
    }

    /// Attach a detail.
    pub fn with_detail(
        mut self,
        key: impl Into<crate::details::Key>,
        value: impl Into<serde_json::Value>,
    ) -> Outcome {
        self.details.insert(key.into(), value.into().into());
        self
    }
}

/// `s` with its references rendered by `n`, in place (untouched when it holds none).
fn render_text(s: &mut String, n: &dyn crate::refs::Numbering) {
    crate::refs::render_in_place(s, n);
}

/// Whether `v` can hold a reference: numbers, booleans and nulls hold no text, and are
/// passed over without a call of [`render_value`].
fn holds_text(v: &&mut Detail) -> bool {
    matches!(v, Detail::String(_) | Detail::Array(_) | Detail::Object(_))
}

fn render_value(v: &mut Detail, n: &dyn crate::refs::Numbering) {
    match v {
        Detail::String(s) => render_text(s, n),
        Detail::Array(a) => a
            .iter_mut()
            .filter(holds_text)
            .for_each(|v| render_value(v, n)),
        Detail::Object(m) => {
            if m.iter().any(|(k, _)| crate::refs::has_refs(k)) {
                // Two keys may render alike: the object is built again, in order, each
                // value rendered as it moves and each key with references rendered into
                // its own string, then settled, so a later key rendering like an earlier
                // one replaces its value in its place, as a rebuilt map did.
                let old = std::mem::take(m);
                let mut out = Details::with_capacity(old.len());
                for (k, mut v) in old {
                    let k = if crate::refs::has_refs(&k) {
                        let mut s = k.into_owned();
                        render_text(&mut s, n);
                        crate::details::Key::Owned(s)
                    } else {
                        k
                    };
                    if holds_text(&&mut v) {
                        render_value(&mut v, n);
                    }
                    out.push(k, v);
                }
                out.settle();
                *m = out;
            } else {
                m.values_mut()
                    .filter(holds_text)
                    .for_each(|v| render_value(v, n));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::SubOutcome::*;
    use super::*;

    const REV: SubOutcome = SubOutcome::NotArisen(super::NotArisen::Revision);
    const ABSENT: SubOutcome = SubOutcome::NotArisen(super::NotArisen::Absent);
    const OFFERED: SubOutcome = SubOutcome::NotArisen(super::NotArisen::NotOffered);

    fn subs(o: &[SubOutcome]) -> Vec<SubVerdict> {
        o.iter()
            .enumerate()
            .map(|(i, o)| SubVerdict::new(&format!("x{i}"), *o, ""))
            .collect()
    }

    #[test]
    fn worst_first() {
        assert_eq!(
            aggregate(&subs(&[Pass, Unknown, Error, Fail])),
            Verdict::Fail
        );
        assert_eq!(aggregate(&subs(&[Pass, Unknown, Error])), Verdict::Error);
        assert_eq!(aggregate(&subs(&[Pass, Unknown])), Verdict::Unknown);
        assert_eq!(aggregate(&subs(&[Pass, Pass, Observed])), Verdict::Pass);
    }

    #[test]
    fn no_rev_only_when_every_graded_sub_verdict_is() {
        assert_eq!(aggregate(&subs(&[REV, REV, Observed])), Verdict::NoRev);
        assert_eq!(aggregate(&subs(&[REV, Pass])), Verdict::Pass);
        assert_eq!(aggregate(&subs(&[REV, Fail])), Verdict::Fail);
    }

    #[test]
    fn nothing_graded_cannot_pass() {
        assert_eq!(aggregate(&subs(&[Observed, Dropped])), Verdict::Unknown);
        assert_eq!(aggregate(&[]), Verdict::Unknown);
        assert_eq!(combine([]).not_arisen, None);
    }

    /// A verdict and whether no part applied.
    type Expect = (Verdict, Option<super::NotArisen>);

    /// The rule's truth table: every pair of parts (and each part alone), the applicable
    /// ones worst first, the not-arisen ones only when nothing applies.
    #[test]
    fn the_one_rule_truth_table() {
        use super::NotArisen::{Absent as A, NotOffered as O, Revision as R};
        use Part::{Bundle as V, Error as E, Fail as F, NotArisen as N, Pass as P, Unknown as U};
        use Verdict as W;
        let na = |n| (W::from(n), Some(n));
        let d = |v| (v, None);
        #[rustfmt::skip]
        let table: &[(&[Part], Expect)] = &[
            // alone
            (&[P], d(W::Pass)), (&[F], d(W::Fail)), (&[U], d(W::Unknown)), (&[E], d(W::Error)),
            (&[N(R)], na(R)), (&[N(A)], na(A)), (&[N(O)], na(O)), (&[V], d(W::Unknown)), (&[], d(W::Unknown)),
            // applicable parts: FAIL > ERROR > UNKNOWN > PASS
            (&[P, F], d(W::Fail)), (&[E, F], d(W::Fail)), (&[U, F], d(W::Fail)),
            (&[P, E], d(W::Error)), (&[U, E], d(W::Error)), (&[P, U], d(W::Unknown)), (&[P, P], d(W::Pass)),
            // a part that did not arise weakens nothing, whatever its kind
            (&[P, N(R)], d(W::Pass)), (&[P, N(A)], d(W::Pass)), (&[P, N(O)], d(W::Pass)),
            (&[F, N(O)], d(W::Fail)), (&[E, N(R)], d(W::Error)), (&[U, N(O)], d(W::Unknown)),
            (&[U, N(A)], d(W::Unknown)), (&[P, V], d(W::Pass)),
            // nothing applies: not offered (UNKNOWN) > revision (NO-REV) > absent (N/A)
            (&[N(R), N(R)], na(R)), (&[N(A), N(A)], na(A)), (&[N(R), N(A)], na(R)),
            (&[N(O), N(R)], na(O)), (&[N(O), N(A)], na(O)), (&[N(A), V], na(A)),
        ];
        for (parts, (verdict, not_arisen)) in table {
            let c = combine(parts.iter().copied());
            assert_eq!(c.verdict, *verdict, "{parts:?}");
            assert_eq!(c.not_arisen, *not_arisen, "{parts:?}");
            // order does not matter
            let c = combine(parts.iter().rev().copied());
            assert_eq!(
                (c.verdict, c.not_arisen),
                (*verdict, *not_arisen),
                "{parts:?}"
            );
        }
    }

    #[test]
    fn a_sub_outcome_and_an_outcome_go_through_the_same_rule() {
        // `notification-identity` on a legacy session: f's key is one only 2026-07-28
        // defines (not arisen), a passed: PASS, with f named in the evidence.
        let o = Outcome::from_subs(
            vec![
                SubVerdict::new(
                    "f",
                    REV,
                    "no _meta serverInfo, a key only 2026-07-28 defines",
                ),
                SubVerdict::new("a", Pass, "token sent"),
            ],
            "",
        );
        assert_eq!(o.verdict, Verdict::Pass);
        assert_eq!(o.not_arisen, None);
        assert!(
            o.evidence
                .starts_with(&format!("{}: no _meta serverInfo", crate::refs::here("f"))),
            "{}",
            o.evidence
        );
        // Sub-verdicts none of which arose make an outcome that did not arise either.
        let o = Outcome::from_subs(
            vec![
                SubVerdict::new("x", OFFERED, ""),
                SubVerdict::new("y", ABSENT, ""),
            ],
            "",
        );
        assert_eq!(
            (o.verdict, o.not_arisen),
            (Verdict::Unknown, Some(super::NotArisen::NotOffered))
        );
        assert_eq!(o.part(), Part::NotArisen(super::NotArisen::NotOffered));
        // NO-REV and N/A outcomes did not arise by definition; a plain UNKNOWN arose.
        assert_eq!(
            Outcome::single(Verdict::NoRev, "", "").part(),
            Part::NotArisen(super::NotArisen::Revision)
        );
        assert_eq!(
            Outcome::single(Verdict::NotApplicable, "", "").part(),
            Part::NotArisen(super::NotArisen::Absent)
        );
        assert_eq!(
            Outcome::single(Verdict::Unknown, "", "").part(),
            Part::Unknown
        );
        let o = Outcome::not_arisen(super::NotArisen::NotOffered, "json", "");
        assert_eq!(
            (o.verdict, o.part()),
            (
                Verdict::Unknown,
                Part::NotArisen(super::NotArisen::NotOffered)
            )
        );
    }

    /// The map rendering as it was before: every map whose keys hold a reference collected
    /// again, then its values rendered.
    fn render_value_rebuilt(v: &mut serde_json::Value, n: &dyn crate::refs::Numbering) {
        match v {
            serde_json::Value::String(s) if crate::refs::has_refs(s) => {
                *s = crate::refs::render(s, n).into_owned();
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| render_value_rebuilt(v, n)),
            serde_json::Value::Object(m) => {
                if m.keys().any(|k| crate::refs::has_refs(k)) {
                    *m = std::mem::take(m)
                        .into_iter()
                        .map(|(k, v)| (crate::refs::render(&k, n).into_owned(), v))
                        .collect();
                }
                m.values_mut().for_each(|v| render_value_rebuilt(v, n));
            }
            _ => {}
        }
    }

    struct Row;
    impl crate::refs::Numbering for Row {
        fn here(&self) -> &str {
            "row"
        }
        fn number_of(&self, id: &str) -> Option<&str> {
            (id == "known").then_some("other-row")
        }
    }

    /// Details render to the same values, keys and order as rebuilding every map did:
    /// maps keyed by references (nested, beside plain keys, two keys rendering alike),
    /// references in strings and arrays, malformed references.
    #[test]
    fn details_render_as_a_rebuilt_map_did() {
        use crate::refs::{here, rule};
        let h = |s: &str| here(s);
        let cases = vec![
            serde_json::json!({"plain": 1, "text": format!("see {}", h("a"))}),
            serde_json::json!({
                h("a"): {"outcome": "pass", "note": format!("{} and {}", h("b"), rule("known", "c"))},
                "z": [h(""), rule("other", ""), {"k": h("d")}],
                h("b"): null,
                "m": {h("e"): [1, 2, {h("f"): rule("known", "")}], "x": "\u{e000}open"},
            }),
            // `here("a")` and the key "rowa" render alike: the later value wins, in the
            // first one's place, as collecting did.
            serde_json::json!({h("a"): 1, "q": 2, "rowa": 3}),
            serde_json::json!({"\u{e000}#unclosed": true, "k": "\u{e000}x\u{e001}"}),
            serde_json::json!([]),
        ];
        for case in cases {
            let mut new = Detail::from(case.clone());
            let mut old = case.clone();
            render_value(&mut new, &Row);
            render_value_rebuilt(&mut old, &Row);
            assert_eq!(new, old, "{case}");
            assert_eq!(
                serde_json::to_string(&new).expect("json"),
                serde_json::to_string(&old).expect("json"),
                "order of {case}"
            );
        }
    }

    #[test]
    fn outcome_words_are_stable() {
        let words: Vec<String> = [
            Pass, Fail, Unknown, Error, REV, ABSENT, OFFERED, Observed, Dropped,
        ]
        .iter()
        .map(|o| {
            serde_json::to_value(o)
                .expect("word")
                .as_str()
                .expect("str")
                .to_string()
        })
        .collect();
        assert_eq!(
            words,
            [
                "pass",
                "fail",
                "unknown",
                "error",
                "revision_unsupported",
                "not_arisen",
                "not_arisen",
                "observed",
                "dropped"
            ]
        );
    }
}
