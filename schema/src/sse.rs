//! Server-Sent Events parsing (WHATWG HTML §9.2), used on untrusted bytes by both the
//! collector (incrementally, while a response streams) and the grader (on stored bodies).
//!
//! Lines end in CRLF, LF or CR (the Python SDK sends CRLF, the TypeScript SDK LF). `data` lines of one
//! event are joined with `\n`; comment lines (`:`) are ignored; an event is dispatched at
//! a blank line. Invalid UTF-8 is replaced, never a panic.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event` field (`message` when absent, per the standard).
    pub event: Option<String>,
    /// Joined `data` lines.
    pub data: String,
    /// The `id` field.
    pub id: Option<String>,
    /// The `retry` field, milliseconds.
    pub retry: Option<u64>,
}

/// Result of parsing a whole body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// Complete events.
    pub events: Vec<Event>,
    /// True when bytes after the last dispatched event were left over (a stream cut
    /// short, or one that ended without the final blank line).
    pub incomplete: bool,
}

/// Incremental parser.
#[derive(Debug, Default, Clone)]
pub struct Parser {
    line: Vec<u8>,
    after_cr: bool,
    cur: Event,
    has_data: bool,
    dirty: bool,
    started: bool,
}

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Feed bytes; returns the events completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                b'\n' => self.end_line(&mut out),
                _ => self.line.push(b),
            }
        }
        out
    }

    /// True when a partial line or undispatched event is pending.
    pub fn pending(&self) -> bool {
        !self.line.is_empty() || self.dirty
    }

    fn end_line(&mut self, out: &mut Vec<Event>) {
        let mut line = std::mem::take(&mut self.line);
        // A UTF-8 BOM at the very start of the stream is ignored.
        if !self.started {
            self.started = true;
            if line.starts_with(&[0xEF, 0xBB, 0xBF]) {
                line.drain(..3);
            }
        }
        if line.is_empty() {
            if self.has_data {
                let mut ev = std::mem::take(&mut self.cur);
                if ev.data.ends_with('\n') {
                    ev.data.pop();
                }
                out.push(ev);
            } else {
                // An event without data is not dispatched, but id/retry persist per the
                // standard; we keep only what belongs to dispatched events.
                self.cur = Event::default();
            }
            self.has_data = false;
            self.dirty = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        self.dirty = true;
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(p) => {
                let v = &line[p + 1..];
                (&line[..p], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (&line[..], &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                self.cur.data.push_str(&value);
                self.cur.data.push('\n');
                self.has_data = true;
            }
            b"event" => self.cur.event = Some(value.into_owned()),
            b"id" if !value.contains('\0') => self.cur.id = Some(value.into_owned()),
            b"retry" => {
                if let Ok(n) = value.parse::<u64>() {
                    self.cur.retry = Some(n);
                }
            }
            _ => {}
        }
    }
}

/// Parse a whole stored body.
pub fn parse(bytes: &[u8]) -> Parsed {
    let mut p = Parser::new();
    let events = p.feed(bytes);
    Parsed {
        incomplete: p.pending(),
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_and_lf_framing_both_parse() {
        let crlf = parse(b"event: message\r\ndata: {\"a\":1}\r\n\r\n");
        let lf = parse(b"event: message\ndata: {\"a\":1}\n\n");
        assert_eq!(crlf.events, lf.events);
        assert_eq!(crlf.events[0].data, "{\"a\":1}");
        assert_eq!(crlf.events[0].event.as_deref(), Some("message"));
        assert!(!crlf.incomplete);
    }

    #[test]
    fn multi_line_data_comments_and_partial_tail() {
        let p = parse(b": keepalive\nid: 7\ndata: a\ndata: b\n\ndata: cut");
        assert_eq!(p.events.len(), 1);
        assert_eq!(p.events[0].data, "a\nb");
        assert_eq!(p.events[0].id.as_deref(), Some("7"));
        assert!(p.incomplete);
    }

    #[test]
    fn split_across_feeds_including_crlf_boundary() {
        let mut p = Parser::new();
        let mut ev = p.feed(b"data: x\r");
        ev.extend(p.feed(b"\n\r"));
        ev.extend(p.feed(b"\n"));
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "x");
    }

    #[test]
    fn priming_event_without_data_is_not_dispatched() {
        let p = parse(b"id: abc\n\nretry: 5\ndata: {}\n\n");
        assert_eq!(p.events.len(), 1);
        assert_eq!(p.events[0].retry, Some(5));
    }
}
