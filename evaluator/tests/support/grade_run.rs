//! Running the built `mcp-grade` and what it printed, for the command-line tests.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::Command;

/// One `mcp-grade` run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Run `mcp-grade ARGS` in `dir`, with `home` as `MCP_PROBE_HOME` when given (else the
/// inherited environment's).
pub fn mcp_grade<I, S>(dir: &Path, home: Option<&Path>, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-grade"));
    c.current_dir(dir);
    if let Some(home) = home {
        c.env("MCP_PROBE_HOME", home);
    }
    let out = c.args(args).output().expect("runs mcp-grade");
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}
