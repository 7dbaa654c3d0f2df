//! The printer of `mcp-grade`: stdout carries what a command produces (reports, verify
//! lines, bundle views) through an [`Output`] that tolerates a reader going away
//! (`mcp-grade show x | head`); stderr carries diagnostics through [`Diag`], one escaped
//! line each in the form both binaries share (`mcp_probe_schema::term::diagnostic`),
//! with `--quiet` silencing warnings and notes but never errors or alerts.

use std::io::{self, Write};

const PROGRAM: &str = "mcp-grade";

/// The stderr side of the printer.
pub struct Diag<'a> {
    err: &'a mut dyn Write,
    quiet: bool,
}

impl std::fmt::Debug for Diag<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diag").field("quiet", &self.quiet).finish()
    }
}

impl<'a> Diag<'a> {
    /// Diagnostics on `err`; `quiet` silences warnings and notes.
    pub fn new(err: &'a mut dyn Write, quiet: bool) -> Diag<'a> {
        Diag { err, quiet }
    }

    fn emit(&mut self, kind: Option<&str>, text: &str) -> io::Result<()> {
        let l = mcp_probe_schema::term::diagnostic(PROGRAM, kind, text);
        writeln!(self.err, "{l}")
    }

    /// An error: an input that could not be used (never silenced).
    pub fn error(&mut self, text: &str) -> io::Result<()> {
        self.emit(None, text)
    }

    /// A warning: something was ignored or degraded.
    pub fn warn(&mut self, text: &str) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        self.emit(Some("warning"), text)
    }

    /// A note: what a command did besides its output (a baseline stored).
    pub fn note(&mut self, text: &str) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        self.emit(Some("note"), text)
    }

    /// An alert that must be seen next to the output it qualifies (never silenced): one
    /// escaped line, without the program prefix.
    pub fn alert(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.err, "{}", mcp_probe_schema::term::line(text))
    }
}

/// A writer that treats a closed pipe as the end of wanted output: once a write fails
/// with `BrokenPipe`, the rest is discarded silently and the command still ends with the
/// exit status its inputs deserve. Other write errors are returned.
#[derive(Debug)]
pub struct Output<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Output<W> {
    /// Wrap `inner`.
    pub fn new(inner: W) -> Output<W> {
        Output {
            inner,
            closed: false,
        }
    }

    /// True once the reader has gone away.
    pub fn closed(&self) -> bool {
        self.closed
    }
}

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::BrokenPipe, "gone"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn quiet_silences_warnings_and_notes_only() {
        let mut buf = Vec::new();
        let mut d = Diag::new(&mut buf, true);
        d.warn("w").unwrap_or_default();
        d.note("n").unwrap_or_default();
        d.error("bad\u{1b}[2J").unwrap_or_default();
        d.alert("WARNING: x").unwrap_or_default();
        let text = String::from_utf8_lossy(&buf).into_owned();
        assert_eq!(text, "mcp-grade: bad\\u{1b}[2J\nWARNING: x\n");
    }

    #[test]
    fn broken_pipe_is_swallowed_other_errors_are_not() {
        let mut o = Output::new(Broken);
        assert!(writeln!(o, "hello").is_ok());
        assert!(o.closed());
        let mut buf = [0u8; 2];
        let mut full = Output::new(&mut buf[..]);
        assert!(full.write_all(b"abc").is_err());
    }
}
