//! Verdicts, leg outcomes and worst-leg aggregation (docs/checks.md, "Verdicts and aggregation").

use serde::Serialize;

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

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mark())
    }
}

/// The outcome of one leg.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LegOutcome {
    /// Graded pass.
    Pass,
    /// Graded fail.
    Fail,
    /// Graded unknown.
    Unknown,
    /// Graded error.
    Error,
    /// The leg's mechanism needs 2026-07-28 (excluded from aggregation unless every leg is).
    RevisionUnsupported,
    /// Evidence only, never aggregated.
    Observed,
    /// Named but not probed, never aggregated.
    Dropped,
}

/// One leg's outcome and note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Leg {
    /// Spec leg id (`5.1.1a`).
    pub id: String,
    /// Outcome.
    pub outcome: LegOutcome,
    /// Why.
    pub note: String,
}

impl Leg {
    /// A leg.
    pub fn new(id: &str, outcome: LegOutcome, note: impl Into<String>) -> Leg {
        Leg {
            id: id.to_string(),
            outcome,
            note: note.into(),
        }
    }
}

/// Worst-first aggregation: fail > error > unknown > pass. NO-REV only when every graded
/// leg is `revision_unsupported`; `observed` and `dropped` legs never count. A check
/// with no graded leg is UNKNOWN (a leg that decided nothing cannot pass).
pub fn aggregate(legs: &[Leg]) -> Verdict {
    let graded: Vec<LegOutcome> = legs
        .iter()
        .map(|l| l.outcome)
        .filter(|o| !matches!(o, LegOutcome::Observed | LegOutcome::Dropped))
        .collect();
    if graded.is_empty() {
        return Verdict::Unknown;
    }
    if graded.iter().all(|o| *o == LegOutcome::RevisionUnsupported) {
        return Verdict::NoRev;
    }
    let has = |o: LegOutcome| graded.contains(&o);
    if has(LegOutcome::Fail) {
        Verdict::Fail
    } else if has(LegOutcome::Error) {
        Verdict::Error
    } else if has(LegOutcome::Unknown) {
        Verdict::Unknown
    } else {
        Verdict::Pass
    }
}

/// What grading one check on one bundle produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Legs, in spec order.
    pub legs: Vec<Leg>,
    /// Evidence text: `<leg>: <note>; …` or a single sentence.
    pub evidence: String,
    /// What part of the recommendation a black-box probe cannot reach.
    pub reduction: String,
    /// Seqs of the records that decided it.
    pub records: Vec<u64>,
    /// Check-specific facts (counts, statuses).
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl Outcome {
    /// From legs, aggregated worst-first; evidence is the legs' notes in order.
    pub fn from_legs(legs: Vec<Leg>, reduction: impl Into<String>) -> Outcome {
        let verdict = aggregate(&legs);
        let evidence = legs
            .iter()
            .map(|l| format!("{}: {}", l.id, l.note))
            .collect::<Vec<_>>()
            .join("; ");
        Outcome {
            verdict,
            legs,
            evidence,
            reduction: reduction.into(),
            records: Vec::new(),
            details: Default::default(),
        }
    }

    /// A verdict decided without legs (preconditions, reported-only checks).
    pub fn single(
        verdict: Verdict,
        evidence: impl Into<String>,
        reduction: impl Into<String>,
    ) -> Outcome {
        Outcome {
            verdict,
            legs: Vec::new(),
            evidence: evidence.into(),
            reduction: reduction.into(),
            records: Vec::new(),
            details: Default::default(),
        }
    }

    /// Attach decisive record seqs.
    pub fn with_records(mut self, records: impl IntoIterator<Item = u64>) -> Outcome {
        self.records.extend(records);
        self.records.sort_unstable();
        self.records.dedup();
        self
    }

    /// Attach a check's typed facts: each field of `facts` (a struct serialising to a
    /// JSON object) becomes a detail, in field order.
    pub fn with_facts<T: Serialize>(mut self, facts: &T) -> Outcome {
        if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(facts) {
            self.details.extend(m);
        }
        self
    }

    /// Attach a detail.
    pub fn with_detail(mut self, key: &str, value: impl Into<serde_json::Value>) -> Outcome {
        self.details.insert(key.to_string(), value.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::LegOutcome::*;
    use super::*;

    fn legs(o: &[LegOutcome]) -> Vec<Leg> {
        o.iter()
            .enumerate()
            .map(|(i, o)| Leg::new(&format!("x{i}"), *o, ""))
            .collect()
    }

    #[test]
    fn worst_first() {
        assert_eq!(
            aggregate(&legs(&[Pass, Unknown, Error, Fail])),
            Verdict::Fail
        );
        assert_eq!(aggregate(&legs(&[Pass, Unknown, Error])), Verdict::Error);
        assert_eq!(aggregate(&legs(&[Pass, Unknown])), Verdict::Unknown);
        assert_eq!(aggregate(&legs(&[Pass, Pass, Observed])), Verdict::Pass);
    }

    #[test]
    fn no_rev_only_when_every_graded_leg_is() {
        assert_eq!(
            aggregate(&legs(&[RevisionUnsupported, RevisionUnsupported, Observed])),
            Verdict::NoRev
        );
        assert_eq!(
            aggregate(&legs(&[RevisionUnsupported, Pass])),
            Verdict::Pass
        );
        assert_eq!(
            aggregate(&legs(&[RevisionUnsupported, Fail])),
            Verdict::Fail
        );
    }

    #[test]
    fn nothing_graded_cannot_pass() {
        assert_eq!(aggregate(&legs(&[Observed, Dropped])), Verdict::Unknown);
        assert_eq!(aggregate(&[]), Verdict::Unknown);
    }
}
