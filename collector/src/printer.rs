//! The one writer of the collector's stdout and stderr ([`Printer`]): stdout carries
//! only bundle paths (and `--info` blocks), stderr progress, warnings, errors and the
//! login URL.

use std::io::Write;

use crate::journal::SharedRedactor;

const PROGRAM: &str = "mcp-collect";

/// Writes bundle paths to stdout and progress to stderr; the only printer. Every line
/// passes the process's shared redactor (the one every journal uses, so a secret
/// registered or learned by any target is redacted here too) and has its control
/// characters escaped (`mcp_probe_schema::term::line`): lines carry server-controlled
/// text (JSON-RPC error messages, OAuth `error_description`, transport failures).
#[derive(Debug, Clone)]
pub struct Printer {
    quiet: bool,
    redactor: SharedRedactor,
}

impl Printer {
    /// A printer; `quiet` silences progress.
    pub fn new(quiet: bool) -> Printer {
        Printer {
            quiet,
            redactor: SharedRedactor::new(),
        }
    }

    /// A printer over an existing redactor (the OAuth login's, which the run sets to
    /// this printer's).
    pub fn with_redactor(quiet: bool, redactor: SharedRedactor) -> Printer {
        Printer { quiet, redactor }
    }

    /// The redactor every journal of the run shares with this printer.
    pub fn redactor(&self) -> &SharedRedactor {
        &self.redactor
    }

    /// `text` redacted, each line escaped for a terminal.
    pub fn safe(&self, text: &str) -> String {
        self.redactor
            .scrub_str(text)
            .split('\n')
            .map(mcp_probe_schema::term::line)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A line on stdout (bundle paths; `--info` blocks, one escaped line each).
    pub fn out(&self, line: &str) {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{}", self.safe(line));
        let _ = o.flush();
    }

    /// A progress line on stderr.
    pub fn progress(&self, line: &str) {
        if !self.quiet {
            self.diagnostic(None, line);
        }
    }

    /// A notice line on stderr (what the run will not decide, and why), silenced by
    /// `-q` like progress.
    pub fn notice(&self, line: &str) {
        if !self.quiet {
            self.diagnostic(Some("notice"), line);
        }
    }

    /// A warning line on stderr (never silenced).
    pub fn warn(&self, line: &str) {
        self.diagnostic(Some("warning"), line);
    }

    /// An error line on stderr (never silenced).
    pub fn error(&self, line: &str) {
        self.diagnostic(Some("error"), line);
    }

    /// One redacted, escaped diagnostic line on stderr, in the form both binaries share
    /// (`mcp_probe_schema::term::diagnostic`).
    fn diagnostic(&self, kind: Option<&str>, text: &str) {
        let l = mcp_probe_schema::term::diagnostic(PROGRAM, kind, &self.redactor.scrub_str(text));
        let _ = writeln!(std::io::stderr().lock(), "{l}");
    }

    /// A line on stderr as given, without the `mcp-collect:` prefix (the login's lines
    /// carry their own), never silenced.
    pub fn raw(&self, line: &str) {
        let line = mcp_probe_schema::term::line(&self.redactor.scrub_str(line));
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}
