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

    /// The more severe of two statuses, by the precedence documented on the type.
    pub fn worst(self, other: ExitStatus) -> ExitStatus {
        self.max(other)
    }
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
}
