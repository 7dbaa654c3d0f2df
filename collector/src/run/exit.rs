//! How a run of `mcp-collect` ends: [`ExitStatus`] (one code per outcome, the only place a
//! code is chosen), the [`Signal`]s that stop a run, and the exit-code section of
//! `--help` built from them. It imports nothing of `run/`, so the flag definitions
//! (`flags.rs`) and the usage errors (`cli.rs`, which re-exports these) both build on it.

/// How the process ends (the README's exit table; docs/collector.md, "Signals and exit
/// codes"): every way out of `mcp-collect` is one of these, and [`ExitStatus::code`] is
/// the only place a code is chosen. Precedence when several apply to a run: a bundle
/// that could not be written (1), then a signal (130, 143, 129), then a target sealed
/// without an MCP session (3), else 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Every target was reached (an MCP session) and has a sealed bundle.
    Ok,
    /// A bundle could not be written.
    WriteFailed,
    /// A signal stopped the run: every started target was sealed as `interrupted`.
    Interrupted(Signal),
    /// Every target has a sealed bundle, but at least one was sealed without an MCP
    /// session (unreachable, not MCP, TLS refused, or a credential needed and not given).
    NoSession,
    /// Bad operator input (`UsageError`, an unreadable key, a journal `--recover`
    /// cannot read): nothing was sent.
    Usage,
    /// The collector itself could not start (no async runtime).
    Internal,
    /// `mcp-collect timestamp`: at least one bundle got no new timestamp (not a readable
    /// bundle, its sidecars broken, the TSA failed, the renewal too late, or the sidecar
    /// not written).
    NotTimestamped,
}

impl ExitStatus {
    /// Every way out, one per documented code (1 is both [`WriteFailed`](Self::WriteFailed)
    /// and [`Internal`](Self::Internal)), in the order `--help` lists them
    /// (collector/tests/docs_help.rs holds README.md and docs/collector.md to these).
    pub const DOCUMENTED: [ExitStatus; 9] = [
        ExitStatus::Ok,
        ExitStatus::WriteFailed,
        ExitStatus::Internal,
        ExitStatus::Usage,
        ExitStatus::NoSession,
        ExitStatus::NotTimestamped,
        ExitStatus::Interrupted(Signal::Int),
        ExitStatus::Interrupted(Signal::Term),
        ExitStatus::Interrupted(Signal::Hup),
    ];

    /// What the code means to the operator, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            ExitStatus::Ok => {
                "every target was reached (an MCP session) and has a sealed bundle \
                 (timestamp: every BUNDLE has a new sidecar)"
            }
            ExitStatus::WriteFailed => "a bundle could not be written",
            ExitStatus::Internal => "the collector could not start (no async runtime)",
            ExitStatus::Usage => {
                "usage or bad input (named on one line), before any traffic; --recover: not a \
                 readable journal"
            }
            ExitStatus::NoSession => {
                "every target has a sealed bundle, but at least one was sealed without an MCP \
                 session (unreachable, not MCP, TLS refused, or a credential needed and not \
                 given; each is named on stderr)"
            }
            ExitStatus::NotTimestamped => {
                "mcp-collect timestamp: at least one BUNDLE got no new timestamp (each is \
                 named on stderr with the reason)"
            }
            ExitStatus::Interrupted(Signal::Int) => {
                "SIGINT (Ctrl-C): every started target was sealed as interrupted"
            }
            ExitStatus::Interrupted(Signal::Term) => "SIGTERM: likewise",
            ExitStatus::Interrupted(Signal::Hup) => "SIGHUP: likewise",
        }
    }

    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::WriteFailed | ExitStatus::Internal => 1,
            ExitStatus::Usage => 2,
            ExitStatus::NoSession => 3,
            ExitStatus::NotTimestamped => 4,
            ExitStatus::Interrupted(s) => s.exit_code(),
        }
    }
}

/// The exit-code section of `mcp-collect --help`, built from [`ExitStatus::DOCUMENTED`].
pub fn help_footer() -> String {
    let mut s = String::from("Exit codes:\n");
    for status in ExitStatus::DOCUMENTED {
        s.push_str(&format!("  {:<3}  {}\n", status.code(), status.meaning()));
    }
    s.push_str("Precedence when several apply: 1, then a signal (130, 143, 129), then 3, then 0.");
    s
}

/// The exit-code section of `mcp-collect timestamp --help`: the codes it can end with.
pub fn timestamp_footer() -> String {
    let mut s = String::from("Exit codes:\n");
    for (status, meaning) in [
        (ExitStatus::Ok, "every BUNDLE has a new sidecar"),
        (ExitStatus::Internal, ExitStatus::Internal.meaning()),
        (
            ExitStatus::Usage,
            "usage: a bad --tsa URL, a BUNDLE given twice (before any request)",
        ),
        (
            ExitStatus::NotTimestamped,
            "at least one BUNDLE got no new sidecar (each is named on stderr with the reason)",
        ),
    ] {
        s.push_str(&format!("  {:<3}  {meaning}\n", status.code()));
    }
    s.truncate(s.trim_end().len());
    s
}

/// A signal that stops a run; each seals every started target as `interrupted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C): exit 130.
    Int,
    /// SIGTERM (what CI runners and `timeout` send): exit 143.
    Term,
    /// SIGHUP (the terminal went away): exit 129.
    Hup,
}

impl Signal {
    /// The signal's name, as recorded in `run.failure`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "SIGINT (Ctrl-C)",
            Signal::Term => "SIGTERM",
            Signal::Hup => "SIGHUP",
        }
    }

    /// 128 + the signal number, as shells report a process killed by it.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Int => 130,
            Signal::Term => 143,
            Signal::Hup => 129,
        }
    }
}
