//! Output that tolerates a reader going away (`mcp-grade show x | head`).

use std::io::{self, Write};

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
    fn broken_pipe_is_swallowed_other_errors_are_not() {
        let mut o = Output::new(Broken);
        assert!(writeln!(o, "hello").is_ok());
        assert!(o.closed());
        let mut buf = [0u8; 2];
        let mut full = Output::new(&mut buf[..]);
        assert!(full.write_all(b"abc").is_err());
    }
}
