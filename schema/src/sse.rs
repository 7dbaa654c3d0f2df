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
        self.line_ended(&line, out);
        // The buffer is kept for the next line.
        line.clear();
        self.line = line;
    }

    /// One whole line (without its end) read.
    fn line_ended(&mut self, line: &[u8], out: &mut Vec<Event>) {
        let mut line = line;
        // A UTF-8 BOM at the very start of the stream is ignored.
        if !self.started {
            self.started = true;
            if let Some(rest) = line.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
                line = rest;
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
            None => (line, &b""[..]),
        };
        let value = crate::model::lossy(value);
        match field {
            b"data" => {
                // Room for the line and its `\n` at once (no second growth for the `\n`).
                self.cur.data.reserve(value.len() + 1);
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

/// Parse a whole stored body: what [`Parser::feed`] gives on the whole of it, each line
/// read where it lies in `bytes` rather than copied byte by byte into a line buffer.
pub fn parse(bytes: &[u8]) -> Parsed {
    let mut p = Parser::new();
    let mut events = Vec::new();
    let mut rest = bytes;
    while let Some(k) = memchr::memchr2(b'\r', b'\n', rest) {
        p.line_ended(&rest[..k], &mut events);
        // CRLF is one line end; CR and LF alone are one each.
        let end = if rest[k] == b'\r' && rest.get(k + 1) == Some(&b'\n') {
            k + 2
        } else {
            k + 1
        };
        rest = &rest[end..];
    }
    Parsed {
        incomplete: !rest.is_empty() || p.dirty,
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

    /// [`parse`] as the incremental parser reads the body: fed in the given pieces.
    fn fed(bytes: &[u8], cuts: &[usize]) -> Parsed {
        let mut p = Parser::new();
        let mut events = Vec::new();
        let mut at = 0;
        for &c in cuts.iter().chain([&bytes.len()]) {
            let c = c.clamp(at, bytes.len());
            events.extend(p.feed(&bytes[at..c]));
            at = c;
        }
        Parsed {
            incomplete: p.pending(),
            events,
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        #[test]
        fn a_whole_body_parses_as_fed_in_pieces(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "data", "data:", "data: ", "event: e", "id: 1", "id: \0", "retry: 5",
                    "retry: x", ":c", "x", "{\"a\":1}", "\r", "\n", "\r\n", "\u{feff}", "é",
                    " ", ":",
                ]),
                0..24,
            ),
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4),
            cuts in proptest::collection::vec(0usize..120, 0..6),
        ) {
            let mut body = pieces.concat().into_bytes();
            body.extend(noise);
            let mut cuts = cuts;
            cuts.sort_unstable();
            proptest::prop_assert_eq!(parse(&body), fed(&body, &cuts));
            proptest::prop_assert_eq!(parse(&body), fed(&body, &[]));
        }
    }

    #[test]
    fn priming_event_without_data_is_not_dispatched() {
        let p = parse(b"id: abc\n\nretry: 5\ndata: {}\n\n");
        assert_eq!(p.events.len(), 1);
        assert_eq!(p.events[0].retry, Some(5));
    }
}
