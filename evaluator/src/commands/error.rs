//! The errors of the commands: grading's own ([`GradeError`]; `diff` has its own in
//! [`crate::diff`]) and
//! [`CommandError`], the one `main` prints. Below every command, so a command returns
//! [`CommandError`] without importing the others.

use std::path::PathBuf;

use crate::exit::ExitStatus;
use crate::load::Error;

/// A failure that stops a grading run before or instead of its report (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GradeError {
    /// Reading an input or writing output failed.
    #[error(transparent)]
    Load(#[from] Error),
    /// `--baseline` records another endpoint than a graded bundle.
    #[error(
        "--baseline {baseline} is a bundle of endpoint {baseline_endpoint}, but {bundle} is a bundle of \
         endpoint {endpoint}; a baseline is compared only with bundles of its own endpoint (grade other \
         endpoints in a separate run)"
    )]
    BaselineEndpoint {
        /// The `--baseline` file.
        baseline: String,
        /// Its endpoint.
        baseline_endpoint: String,
        /// The graded bundle.
        bundle: String,
        /// Its endpoint.
        endpoint: String,
    },
    /// The `--policy` file cannot be used.
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// The `--waivers` file cannot be used.
    #[error(transparent)]
    Waivers(#[from] crate::waivers::WaiversError),
    /// The `--attestations` file cannot be used.
    #[error(transparent)]
    Attestations(#[from] crate::attestations::AttestationsError),
    /// The `--benchmark` definition cannot be used.
    #[error(transparent)]
    Benchmark(#[from] crate::benchmark::BenchmarkError),
    /// `--update-baseline` without a state directory.
    #[error("--update-baseline needs a state directory: set MCP_PROBE_HOME or HOME")]
    NoStateDir,
    /// A bundle file changed between the verify pass and the grade pass (it is read
    /// once to verify every input, then again to grade it): nothing is graded from bytes
    /// that were not verified.
    #[error("{path} changed while it was being graded (its bytes are not the ones that verified); nothing graded")]
    Changed {
        /// The bundle file as given.
        path: String,
    },
    /// The spill file of the report's outcomes could not be created, written or read.
    #[error("cannot keep the report's results in a temporary file: {0}")]
    Spill(#[from] crate::report::SpillError),
    /// `--attest`: the grader key cannot be loaded or created.
    #[error(transparent)]
    AttestKey(#[from] crate::attest::key::KeyError),
    /// `--attest`: the statement could not be written (the report was).
    #[error("cannot write the signed statement to {}: {source}", path.display())]
    WriteStatement {
        /// The `--attest` path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The `-o` file could not be written.
    #[error("cannot write the report to {}: {source}", path.display())]
    WriteReport {
        /// The `-o` path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl GradeError {
    /// The exit status this error ends a run with: always [`ExitStatus::Usage`].
    pub fn exit_status(&self) -> ExitStatus {
        ExitStatus::Usage
    }
}

/// Why a command stopped before finishing its output: the one error type `main` prints
/// (one escaped line) and maps to an exit status.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// `verify` or `show`: an input could not be read, or output not written.
    #[error(transparent)]
    Load(#[from] Error),
    /// Grading stopped.
    #[error(transparent)]
    Grade(#[from] GradeError),
    /// `diff` cannot compare the two bundles.
    #[error(transparent)]
    Diff(#[from] crate::diff::DiffError),
    /// The bundle arguments cannot be used (an empty directory, `-` twice …).
    #[error(transparent)]
    Input(#[from] crate::inputs::InputError),
    /// `--benchmark` names no usable definition.
    #[error(transparent)]
    Benchmark(crate::benchmark::BenchmarkError),
    /// `verify-statement`: unreadable, or the statement does not verify.
    #[error(transparent)]
    Statement(#[from] VerifyStatementError),
}

impl CommandError {
    /// The exit status the command ends with.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            CommandError::Load(e) => e.exit_status(),
            CommandError::Grade(e) => e.exit_status(),
            CommandError::Input(_) => ExitStatus::Usage,
            CommandError::Diff(e) => e.exit_status(),
            CommandError::Benchmark(_) => ExitStatus::Usage,
            CommandError::Statement(e) => e.exit_status(),
        }
    }
}

/// Why `verify-statement` stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyStatementError {
    /// The statement or a file to check could not be read (exit 2).
    #[error("cannot read {}: {source}", crate::fmt::escape_line(&path.display().to_string()))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `--trust` file is unusable (exit 2).
    #[error(transparent)]
    Trust(Error),
    /// The statement does not verify (exit 3).
    #[error("INVALID {}: {reason}", crate::fmt::escape_line(&path.display().to_string()))]
    Invalid {
        /// The statement file.
        path: PathBuf,
        /// What failed.
        reason: crate::attest::StatementError,
    },
}

impl VerifyStatementError {
    /// 2 for what could not be read, 3 for a statement that does not verify.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            VerifyStatementError::Read { .. } | VerifyStatementError::Trust(_) => ExitStatus::Usage,
            VerifyStatementError::Invalid { .. } => ExitStatus::Invalid,
        }
    }
}

impl From<std::io::Error> for GradeError {
    fn from(e: std::io::Error) -> GradeError {
        GradeError::Load(Error::Output(e))
    }
}
