//! The registry of rules: each rule id a benchmark definition may name, and the code that
//! grades it. A rule is code (one file under [`crate::checks`], its legs and parameters
//! declared beside it); which recommendation it grades, under which number, with which
//! parameter values, is data ([`crate::benchmark`]). Rule ids are stable: a definition
//! written today must name the same code in every later build, so a rule is renamed never
//! and removed only with a note in docs/benchmarks.md.
//!
//! This module sits on top of the checks: it imports every rule, and no rule imports it.

use crate::check::Check;
use crate::checks;

/// One rule: its stable id and its implementation.
#[derive(Clone, Copy)]
pub struct Rule {
    /// The id a definition's `rule` names (`revisions-pinned`).
    pub id: &'static str,
    /// The code that grades it.
    pub check: &'static dyn Check,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("id", &self.id).finish()
    }
}

/// Every rule this build implements, in the order of the benchmark it was written for.
pub static RULES: &[Rule] = &[
    Rule {
        id: "revisions-pinned",
        check: &checks::s1::c1_1::C1_1,
    },
    Rule {
        id: "capabilities-match-baseline",
        check: &checks::s1::c1_2::C1_2,
    },
    Rule {
        id: "new-tools-gated",
        check: &checks::s1::c1_3::C1_3,
    },
    Rule {
        id: "identity-matches-baseline",
        check: &checks::s1::c1_4::C1_4,
    },
    Rule {
        id: "stdio-preferred",
        check: &checks::s2::C2_1,
    },
    Rule {
        id: "tls-required",
        check: &checks::s2::c2_2::C2_2,
    },
    Rule {
        id: "auth-before-stream",
        check: &checks::s2::c2_3::C2_3,
    },
    Rule {
        id: "metadata-headers",
        check: &checks::s2::c2_4::C2_4,
    },
    Rule {
        id: "origin-validated",
        check: &checks::s2::c2_5::C2_5,
    },
    Rule {
        id: "stdio-credentials",
        check: &checks::s3::c3_1_1::C3_1_1,
    },
    Rule {
        id: "short-lived-tokens",
        check: &checks::s3::c3_1_2::C3_1_2,
    },
    Rule {
        id: "per-tool-authorization",
        check: &checks::s3::C3_2_1,
    },
    Rule {
        id: "no-token-passthrough",
        check: &checks::s3::c3_2_2::C3_2_2,
    },
    Rule {
        id: "annotations-not-authorization",
        check: &checks::s3::C3_2_3,
    },
    Rule {
        id: "audience-bound-tokens",
        check: &checks::s3::c3_3_1::C3_3_1,
    },
    Rule {
        id: "oauth-discovery-validated",
        check: &checks::s3::c3_3_2::C3_3_2,
    },
    Rule {
        id: "no-shared-downstream-identity",
        check: &checks::s3::C3_3_3,
    },
    Rule {
        id: "scopes-minimized",
        check: &checks::s3::c3_3_4::C3_3_4,
    },
    Rule {
        id: "static-client-safeguards",
        check: &checks::s3::c3_3_5::C3_3_5,
    },
    Rule {
        id: "tool-schemas-validated",
        check: &checks::s5::c5_1_1::C5_1_1,
    },
    Rule {
        id: "resource-templates-typed",
        check: &checks::s5::c5_1_2::C5_1_2,
    },
    Rule {
        id: "prompt-arguments-validated",
        check: &checks::s5::c5_1_3::C5_1_3,
    },
    Rule {
        id: "list-changed-rate-limited",
        check: &checks::s5::C5_2_1,
    },
    Rule {
        id: "session-not-authentication",
        check: &checks::s5::C5_2_2,
    },
    Rule {
        id: "legacy-session-disabled",
        check: &checks::s5::c5_2_3::C5_2_3,
    },
    Rule {
        id: "stdio-logs-separated",
        check: &checks::s5::c5_3_1::C5_3_1,
    },
    Rule {
        id: "path-confinement",
        check: &checks::s5::c5_4_1::C5_4_1,
    },
    Rule {
        id: "tasks-authorized",
        check: &checks::s5::C5_5_1,
    },
    Rule {
        id: "idempotency-keys",
        check: &checks::s5::C5_6_1,
    },
    Rule {
        id: "lifecycle-metadata-recorded",
        check: &checks::s7::C7_1_1,
    },
    Rule {
        id: "null-id-rejected",
        check: &checks::s7::c7_1_2::C7_1_2,
    },
    Rule {
        id: "audit-clock-synchronised",
        check: &checks::s7::C7_1_3,
    },
    Rule {
        id: "audience-refusals-alerted",
        check: &checks::s7::c7_2_1::C7_2_1,
    },
    Rule {
        id: "notification-identity",
        check: &checks::s7::c7_2_2::C7_2_2,
    },
    Rule {
        id: "cache-freshness",
        check: &checks::s10::c10_1::C10_1,
    },
    Rule {
        id: "size-limits",
        check: &checks::s10::c10_2::C10_2,
    },
];

/// The rule named `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_lower_kebab() {
        for (i, r) in RULES.iter().enumerate() {
            assert!(
                !r.id.is_empty()
                    && r.id
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                r.id
            );
            assert!(RULES[..i].iter().all(|o| o.id != r.id), "{} twice", r.id);
        }
    }
}
