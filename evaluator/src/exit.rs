//! The exit-status contract of `mcp-grade`, in one place (docs/report.md lists it for users).

/// How a `mcp-grade` run ended. `main` maps each to its process exit code; nothing else
/// decides a code.
///
/// | status | code | meaning |
/// |---|---|---|
/// | [`Pass`](ExitStatus::Pass) | 0 | no FAIL and no ERROR; every bundle verified |
/// | [`Fail`](ExitStatus::Fail) | 1 | a check FAILed |
/// | [`Usage`](ExitStatus::Usage) | 2 | bad usage or an unreadable input (bundle, key file), or output could not be written |
/// | [`Invalid`](ExitStatus::Invalid) | 3 | a bundle failed verification |
/// | [`Error`](ExitStatus::Error) | 4 | an ERROR verdict and no FAIL |
/// | [`Undecided`](ExitStatus::Undecided) | 5 | under `--fail-on unknown`: an UNKNOWN verdict and no FAIL or ERROR |
///
/// Waived results (`--waivers`) count for none of these. When several apply across the
/// bundles of one run, the precedence is Usage > Invalid > Fail > Error > Undecided >
/// Pass: an input that could not be read at all is reported before one that was read and
/// found wanting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExitStatus {
    /// Everything verified; no FAIL and no ERROR.
    Pass,
    /// `--fail-on unknown`: UNKNOWN verdicts and no FAIL or ERROR.
    Undecided,
    /// ERROR verdicts and no FAIL.
    Error,
    /// At least one FAIL verdict.
    Fail,
    /// A bundle failed verification.
    Invalid,
    /// Usage error or unreadable input.
    Usage,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Pass => 0,
            ExitStatus::Fail => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Invalid => 3,
            ExitStatus::Error => 4,
            ExitStatus::Undecided => 5,
        }
    }

    /// Every status, in the order of their codes (the `--help` footer and the docs list
    /// these; evaluator/tests/docs_help.rs holds README.md and docs/report.md to them).
    pub const ALL: [ExitStatus; 6] = [
        ExitStatus::Pass,
        ExitStatus::Fail,
        ExitStatus::Usage,
        ExitStatus::Invalid,
        ExitStatus::Error,
        ExitStatus::Undecided,
    ];

    /// What the code means to the operator, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            ExitStatus::Pass => "no FAIL and no ERROR; every bundle verified",
            ExitStatus::Fail => "a check FAILed",
            ExitStatus::Usage => {
                "usage or an unreadable input (bundle, key, policy or waivers file), or the \
                 output could not be written"
            }
            ExitStatus::Invalid => "a bundle failed verification; nothing graded",
            ExitStatus::Error => "an ERROR verdict and no FAIL",
            ExitStatus::Undecided => {
                "under --fail-on unknown: an UNKNOWN verdict and no FAIL or ERROR"
            }
        }
    }

    /// The more severe of two statuses, by the precedence documented on the type.
    pub fn worst(self, other: ExitStatus) -> ExitStatus {
        self.max(other)
    }
}

/// The exit-code section of `mcp-grade --help`, built from [`ExitStatus::ALL`].
pub fn help_footer() -> String {
    let mut s =
        String::from("Exit codes (grading; verify, show and diff say theirs in their --help):\n");
    for status in ExitStatus::ALL {
        s.push_str(&format!("  {}  {}\n", status.code(), status.meaning()));
    }
    s.push_str("Precedence when several apply: 2, 3, 1, 4, 5, then 0.");
    s
}

#[cfg(test)]
mod tests {
    use super::ExitStatus::*;

    #[test]
    fn precedence() {
        assert_eq!(Pass.worst(Invalid), Invalid);
        assert_eq!(Invalid.worst(Usage), Usage);
        assert_eq!(Fail.worst(Error), Fail);
        assert_eq!(Fail.worst(Invalid), Invalid);
        assert_eq!(Pass.worst(Pass), Pass);
    }

    #[test]
    fn all_is_every_code_once_and_the_precedence_line_agrees() {
        let codes: Vec<u8> = super::ExitStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5]);
        let mut by_precedence = super::ExitStatus::ALL;
        by_precedence.sort_by(|a, b| b.cmp(a));
        let order: Vec<String> = by_precedence.iter().map(|s| s.code().to_string()).collect();
        let line = format!(
            "Precedence when several apply: {}, then 0.",
            order[..5].join(", ")
        );
        assert!(
            super::help_footer().ends_with(&line),
            "{}",
            super::help_footer()
        );
    }
}
