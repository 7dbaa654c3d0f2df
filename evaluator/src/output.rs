//! The printer of `mcp-grade`: stdout carries what a command produces (reports, verify
//! lines, bundle views) through an [`Output`] that tolerates a reader going away
//! (`mcp-grade show x | head`); stderr carries diagnostics through [`Diag`], one escaped
//! line each in the form both binaries share (`mcp_probe_schema::term::diagnostic`),
//! with `--quiet` silencing warnings and notes but never errors or alerts.

use std::io::{self, Write};
use std::time::{Duration, Instant};

const PROGRAM: &str = "mcp-grade";

/// The stderr side of the printer.
pub struct Diag<'a> {
    err: &'a mut dyn Write,
    quiet: bool,
    /// A progress line for a terminal ([`Diag::with_progress`]); `None`: never shown.
    progress: Option<Progress>,
}

/// The progress line of a long run on a terminal: shown once the run has taken
/// [`PROGRESS_AFTER`], redrawn at most every [`PROGRESS_EVERY`], and erased before any
/// other line is written and when the run's phase ends.
#[derive(Debug)]
struct Progress {
    start: Instant,
    last: Option<Instant>,
    on_screen: bool,
}

/// How long a run goes before its progress line appears (a short run shows none).
const PROGRESS_AFTER: Duration = Duration::from_millis(500);
/// How often the progress line is redrawn at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// Back to the start of the line, and erase it.
const ERASE: &str = "\r\x1b[K";

impl std::fmt::Debug for Diag<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diag").field("quiet", &self.quiet).finish()
    }
}

impl<'a> Diag<'a> {
    /// Diagnostics on `err`; `quiet` silences warnings and notes.
    pub fn new(err: &'a mut dyn Write, quiet: bool) -> Diag<'a> {
        Diag {
            err,
            quiet,
            progress: None,
        }
    }

    /// Show a progress line during long runs ([`Diag::progress`]) when `on`: for a
    /// stderr that is a terminal and a run that is not `--quiet`. Off, nothing of it is
    /// ever written.
    pub fn with_progress(mut self, on: bool) -> Diag<'a> {
        self.progress = (on && !self.quiet).then(|| Progress {
            start: Instant::now(),
            last: None,
            on_screen: false,
        });
        self
    }

    /// `done` of `total` inputs `what` (`graded`, `verified`): redraws the progress line
    /// when it is on, the run has taken long enough and the last drawing is old enough.
    pub fn progress(&mut self, what: &str, done: usize, total: usize) -> io::Result<()> {
        self.progress_at(Instant::now(), what, done, total)
    }

    fn progress_at(
        &mut self,
        now: Instant,
        what: &str,
        done: usize,
        total: usize,
    ) -> io::Result<()> {
        let Some(p) = &mut self.progress else {
            return Ok(());
        };
        if now.saturating_duration_since(p.start) < PROGRESS_AFTER
            || p.last
                .is_some_and(|l| now.saturating_duration_since(l) < PROGRESS_EVERY)
        {
            return Ok(());
        }
        p.last = Some(now);
        p.on_screen = true;
        write!(
            self.err,
            "{ERASE}{PROGRAM}: {what} {done} of {total} bundles"
        )?;
        self.err.flush()
    }

    /// Erase the progress line, if one is shown (before other output, and when a phase
    /// of the run ends).
    pub fn progress_done(&mut self) -> io::Result<()> {
        match &mut self.progress {
            Some(p) if p.on_screen => {
                p.on_screen = false;
                write!(self.err, "{ERASE}")?;
                self.err.flush()
            }
            _ => Ok(()),
        }
    }

    fn emit(&mut self, kind: Option<&str>, text: &str) -> io::Result<()> {
        self.progress_done()?;
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
        self.progress_done()?;
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
    fn the_progress_line_waits_is_throttled_and_is_erased_before_any_other_line() {
        let mut buf = Vec::new();
        let mut d = Diag::new(&mut buf, false).with_progress(true);
        let t0 = d.progress.as_ref().map(|p| p.start).expect("on");
        let at = |ms| t0 + Duration::from_millis(ms);
        d.progress_at(at(100), "graded", 1, 9).unwrap_or_default();
        d.progress_at(at(600), "graded", 2, 9).unwrap_or_default();
        d.progress_at(at(650), "graded", 3, 9).unwrap_or_default();
        d.progress_at(at(700), "graded", 4, 9).unwrap_or_default();
        d.error("bad").unwrap_or_default();
        d.progress_done().unwrap_or_default();
        d.progress_at(at(900), "graded", 9, 9).unwrap_or_default();
        d.progress_done().unwrap_or_default();
        let text = String::from_utf8_lossy(&buf).into_owned();
        assert_eq!(
            text,
            "\r\x1b[Kmcp-grade: graded 2 of 9 bundles\r\x1b[Kmcp-grade: graded 4 of 9 bundles\
             \r\x1b[Kmcp-grade: bad\n\r\x1b[Kmcp-grade: graded 9 of 9 bundles\r\x1b[K"
        );
        // Off (not a terminal) or quiet: nothing of it is written, ever.
        for (on, quiet) in [(false, false), (true, true)] {
            let mut buf = Vec::new();
            let mut d = Diag::new(&mut buf, quiet).with_progress(on);
            let later = Instant::now() + Duration::from_secs(5);
            d.progress_at(later, "graded", 1, 2).unwrap_or_default();
            d.progress_done().unwrap_or_default();
            d.error("e").unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&buf), "mcp-grade: e\n");
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
