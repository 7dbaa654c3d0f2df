//! Small formatting helpers shared by the renderers: times, byte encodings, and making
//! untrusted text safe to print on a terminal.

use base64::Engine;
use chrono::{DateTime, SecondsFormat, Utc};

/// A bundle time (UTC microseconds) as a `DateTime`, when representable.
pub fn datetime(micros: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros)
}

/// RFC 3339 in UTC with as many fractional digits as needed (`2025-11-30T05:20:00Z`,
/// `…:00.250Z`, `…:00.000123Z`); an unrepresentable value is shown as such.
pub fn utc(micros: i64) -> String {
    match datetime(micros) {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        None => format!("(invalid time {micros} µs)"),
    }
}

/// RFC 3339 in UTC with milliseconds (HAR `startedDateTime`); the epoch when the value
/// is not representable.
pub fn utc_millis(micros: i64) -> String {
    datetime(micros)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `format!` into a string of exactly the text's length, in one allocation: the text is
/// written into a buffer kept by the thread and copied out. `format!` starts from a guess
/// at the length (twice its literal pieces, or nothing when it starts with an argument)
/// and grows the string as the arguments are written, often two or three times for a
/// sentence of grading evidence. Same text, same panic on a failing `Display`.
#[macro_export]
macro_rules! format_exact {
    ($($arg:tt)*) => {
        $crate::fmt::exact(::std::format_args!($($arg)*))
    };
}

/// The text of `args` in a string of its length ([`format_exact!`]).
pub fn exact(args: std::fmt::Arguments<'_>) -> String {
    /// A larger buffer is not kept for the next text.
    const KEEP: usize = 1 << 16;
    thread_local! {
        static SCRATCH: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
    }
    if let Some(s) = args.as_str() {
        return s.to_owned();
    }
    SCRATCH.with(|scratch| {
        // Taken, not borrowed: a `Display` that formats this way itself finds an empty
        // buffer instead of this one.
        let mut buf = scratch.take();
        buf.clear();
        if std::fmt::Write::write_fmt(&mut buf, args).is_err() {
            // `format!`'s own panic, from the same failing `Display`.
            return std::fmt::format(args);
        }
        let text = String::from(buf.as_str());
        if buf.capacity() <= KEEP {
            scratch.set(buf);
        }
        text
    })
}

/// Record sequence numbers as the XCCDF and OSCAL reports list them: `#3, #7, #12`
/// (empty for none).
pub fn record_list(records: &[u64]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(records.len() * 6);
    for (k, n) in records.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "#{n}");
    }
    out
}

/// Microseconds as milliseconds, for humans (`1.500 ms`).
pub fn millis(us: u64) -> String {
    format!("{}.{:03} ms", us / 1000, us % 1000)
}

/// Microseconds as fractional milliseconds (HAR times).
pub fn millis_f64(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// `s` cut to its first `n` characters, with `…` when anything was cut.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Standard base64 with padding.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// Untrusted text (a server's, a bundle's) for one line of terminal output: every
/// control character, line breaks included, every bidi override, and the two characters
/// that mark a rule's reference ([`crate::refs`]) are shown escaped (`\n`, `\u{1b}`).
/// Apply it to the untrusted part only, before building a sentence around it.
pub fn escape_line(s: &str) -> String {
    mcp_probe_schema::term::line(s)
}

/// [`escape_line`] as a format argument: `format_exact!("… {}", Line(s))` writes what
/// `format_exact!("… {}", escape_line(s))` does, without a string for the escaped text.
/// A width or precision applies to the escaped text as a whole, as it does to a string.
pub struct Line<'a>(pub &'a str);

impl std::fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.width().is_some() || f.precision().is_some() {
            return f.pad(&escape_line(self.0));
        }
        mcp_probe_schema::term::write_line(f, self.0)
    }
}

/// A format argument that `F` writes as it is formatted: text made only to be written
/// into a longer one (`format_exact!("{head}: …")`), with no string of its own. Made
/// by [`lazy`]. A width or precision is not applied to it.
pub struct Lazy<F>(F);

/// [`Lazy`] of `f`.
pub fn lazy<F: Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result>(f: F) -> Lazy<F> {
    Lazy(f)
}

impl<F: Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result> std::fmt::Display for Lazy<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (self.0)(f)
    }
}

/// [`escape_line`], appended to `out` (no string of its own for text written into a
/// longer one).
pub fn escape_line_into(out: &mut String, s: &str) {
    mcp_probe_schema::term::line_into(out, s)
}

/// Untrusted text for a block of terminal output: as [`escape_line`], but line breaks
/// and tabs stay (`\r\n` becomes `\n`).
pub fn escape_block(s: &str) -> String {
    mcp_probe_schema::term::block(s)
}

/// A writer for serialised JSON that makes it safe for a terminal without changing its
/// value: every character a terminal could act on that JSON leaves raw (DEL, the C1
/// controls such as the 8-bit CSI U+009B, and the bidi overrides and isolates
/// U+202A-U+202E, U+2066-U+2069) is written as a `\uXXXX` escape. serde_json already
/// escapes C0 controls, ESC included. In JSON text such characters can only occur inside
/// strings, where the escape means the same character. Streaming: a character split
/// across two writes is held back until the next one; [`JsonSafe::finish`] writes out
/// the rest.
#[derive(Debug)]
pub struct JsonSafe<W: std::io::Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> JsonSafe<W> {
    /// Wrap `inner`.
    pub fn new(inner: W) -> JsonSafe<W> {
        JsonSafe {
            inner,
            pending: Vec::new(),
        }
    }

    /// Write out anything held back (only an incomplete character, which valid UTF-8
    /// never ends with) and return the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        let rest = std::mem::take(&mut self.pending);
        self.inner.write_all(&rest)?;
        Ok(self.inner)
    }

    fn escape(&mut self, data: &[u8]) -> std::io::Result<()> {
        let mut done = 0;
        let mut i = 0;
        while i < data.len() {
            let rest = &data[i..];
            // (bytes of the character, its code point) when it must be escaped; `None`
            // length when the character is cut at the end of `data`.
            let hit: Option<(Option<usize>, u32)> = match rest {
                [0x7f, ..] => Some((Some(1), 0x7f)),
                [0xc2, b @ 0x80..=0x9f, ..] => Some((Some(2), u32::from(*b))),
                [0xe2, 0x80, b @ 0xaa..=0xae, ..] => Some((Some(3), 0x2000 + u32::from(*b - 0x80))),
                [0xe2, 0x81, b @ 0xa6..=0xa9, ..] => Some((Some(3), 0x2040 + u32::from(*b - 0x80))),
                [0xc2] | [0xe2] | [0xe2, 0x80 | 0x81] => Some((None, 0)),
                _ => None,
            };
            match hit {
                None => i += 1,
                Some((None, _)) => {
                    self.inner.write_all(&data[done..i])?;
                    self.pending.extend_from_slice(rest);
                    return Ok(());
                }
                Some((Some(n), cp)) => {
                    self.inner.write_all(&data[done..i])?;
                    write!(self.inner, "\\u{cp:04x}")?;
                    i += n;
                    done = i;
                }
            }
        }
        self.inner.write_all(&data[done..])
    }
}

impl<W: std::io::Write> std::io::Write for JsonSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            self.escape(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(buf);
            self.escape(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// [`JsonSafe`] over a whole string.
pub fn json_safe(json: &str) -> String {
    use std::io::Write as _;
    let mut w = JsonSafe::new(Vec::with_capacity(json.len()));
    // Writing into a Vec cannot fail.
    let _ = w.write_all(json.as_bytes());
    let bytes = w.finish().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Bytes as lossy UTF-8 for one line of output.
pub fn bytes_line(b: &[u8]) -> String {
    escape_line(&String::from_utf8_lossy(b))
}

/// The start of a byte string, for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The text shown (escaped for the terminal); for bytes that are not UTF-8, a hex
    /// rendering of the first bytes.
    pub text: String,
    /// True when the excerpt is not the whole of the stored bytes.
    pub cut: bool,
    /// False when the bytes are not UTF-8 text.
    pub utf8: bool,
}

/// The first `limit` bytes of `bytes` as text (never splitting a character), or, for
/// binary data, the first 64 bytes in hex.
pub fn excerpt(bytes: &[u8], limit: usize) -> Excerpt {
    let slice = &bytes[..bytes.len().min(limit)];
    let text = match std::str::from_utf8(slice) {
        Ok(t) => Some(t),
        // Cut inside a character at the limit: back off to the boundary (valid up to it,
        // so this second reading cannot fail).
        Err(e) if e.error_len().is_none() && slice.len() < bytes.len() => {
            std::str::from_utf8(&slice[..e.valid_up_to()]).ok()
        }
        Err(_) => None,
    };
    match text {
        Some(t) => Excerpt {
            text: escape_block(t),
            cut: t.len() < bytes.len(),
            utf8: true,
        },
        None => {
            let n = bytes.len().min(64);
            Excerpt {
                text: hex(&bytes[..n]),
                cut: n < bytes.len(),
                utf8: false,
            }
        }
    }
}

/// A subject-ish label for a DER certificate without an X.509 parser: the last
/// `commonName` (OID 2.5.4.3) in the certificate, which is the subject's (the issuer
/// name comes first in a TBSCertificate). Best effort: `None` when none is found.
pub fn der_common_name(der: &[u8]) -> Option<String> {
    const CN_OID: [u8; 5] = [0x06, 0x03, 0x55, 0x04, 0x03];
    let mut found = None;
    let mut i = 0;
    while i + CN_OID.len() + 2 <= der.len() {
        if der[i..i + CN_OID.len()] == CN_OID {
            let tag = der[i + CN_OID.len()];
            let len = der[i + CN_OID.len() + 1] as usize;
            let start = i + CN_OID.len() + 2;
            // UTF8String, PrintableString, IA5String, T61String; short-form length only.
            if matches!(tag, 0x0c | 0x13 | 0x16 | 0x14) && len < 0x80 && start + len <= der.len() {
                found = Some(bytes_line(&der[start..start + len]));
            }
            i = start;
        } else {
            i += 1;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_list_joins_the_numbers_marked() {
        assert_eq!(record_list(&[]), "");
        assert_eq!(record_list(&[3]), "#3");
        assert_eq!(record_list(&[3, 7, 1200]), "#3, #7, #1200");
    }

    /// `format_exact!` writes what `format!` writes, into a string of its length, also
    /// when an argument formats the same way inside it, after a text too long to keep
    /// the buffer for, and for a text without arguments.
    /// `Line` as a format argument writes what `escape_line` does, with a width or a
    /// precision applied to the escaped text whole.
    #[test]
    fn line_formats_as_the_escaped_string() {
        for s in [
            "",
            "plain",
            "a\nb\u{1b}[31m",
            "\u{202e}rtl\t…",
            "\u{e000}#a\u{e001}",
        ] {
            let e = escape_line(s);
            assert_eq!(crate::format_exact!("<{}>", Line(s)), format!("<{e}>"));
            assert_eq!(
                crate::format_exact!("<{:>12}>", Line(s)),
                format!("<{e:>12}>")
            );
            assert_eq!(
                crate::format_exact!("<{:.3}>", Line(s)),
                format!("<{e:.3}>")
            );
            assert_eq!(
                crate::format_exact!("<{:-^9.4}>", Line(s)),
                format!("<{e:-^9.4}>")
            );
        }
    }

    /// `lazy` as a format argument writes what its function writes, where it stands.
    #[test]
    fn lazy_writes_in_place() {
        let (what, seq) = ("the GET", 7);
        let head = lazy(|f| write!(f, "{what} (record #{seq})"));
        assert_eq!(
            crate::format_exact!("{head}: {head}"),
            "the GET (record #7): the GET (record #7)"
        );
    }

    #[test]
    fn format_exact_is_format_in_a_string_of_its_length() {
        struct Nested(&'static str);
        impl std::fmt::Display for Nested {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&crate::format_exact!("<{}|{:>6}>", self.0, 42))
            }
        }
        let long = "x".repeat(100_000);
        let cases = [
            (
                crate::format_exact!("record #{} of {}: {:?}", 7, "leg", "a\"b"),
                format!("record #{} of {}: {:?}", 7, "leg", "a\"b"),
            ),
            (crate::format_exact!("{}", ""), String::new()),
            (
                crate::format_exact!("literal only"),
                "literal only".to_string(),
            ),
            (
                crate::format_exact!("outer {} {}", Nested("in"), Nested("again")),
                format!("outer {} {}", Nested("in"), Nested("again")),
            ),
            (crate::format_exact!("{long}!"), format!("{long}!")),
            (
                crate::format_exact!("after {:08.3} {:x}", 1.5, 255),
                format!("after {:08.3} {:x}", 1.5, 255),
            ),
        ];
        for (exact, format) in cases {
            assert_eq!(exact, format);
            assert_eq!(exact.capacity(), exact.len());
        }
    }

    #[test]
    fn times() {
        assert_eq!(utc(1_764_480_000_000_000), "2025-11-30T05:20:00Z");
        assert_eq!(utc(1_764_480_000_250_000), "2025-11-30T05:20:00.250Z");
        assert_eq!(
            utc_millis(1_764_480_000_000_123),
            "2025-11-30T05:20:00.000Z"
        );
        assert!(utc(i64::MAX).starts_with("(invalid time"));
        assert_eq!(utc_millis(i64::MIN), "1970-01-01T00:00:00.000Z");
        assert_eq!(millis(1500), "1.500 ms");
    }

    #[test]
    fn terminal_escapes_are_neutralised() {
        assert_eq!(escape_line("a\x1b[31mb\nc"), "a\\u{1b}[31mb\\nc");
        assert_eq!(
            escape_block("a\r\nb\x07\tc\u{202e}"),
            "a\nb\\u{7}\tc\\u{202e}"
        );
    }

    #[test]
    fn json_stays_json_and_loses_raw_controls() {
        let v = serde_json::json!({"a": "x\u{1b}[2J\u{9b}1m\u{202e}\u{7f}y", "b": ["\n\t"]});
        let text = serde_json::to_string_pretty(&v).expect("json");
        let safe = json_safe(&text);
        assert!(safe.contains("\\u009b") && safe.contains("\\u202e") && safe.contains("\\u007f"));
        assert!(!safe.chars().any(|c| c.is_control() && c != '\n'), "{safe}");
        assert!(!safe.contains('\u{202e}'));
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, v);
        // Written one byte at a time (characters cut between writes): the same bytes.
        let mut w = JsonSafe::new(Vec::new());
        for b in text.as_bytes() {
            std::io::Write::write_all(&mut w, std::slice::from_ref(b)).expect("vec");
        }
        assert_eq!(w.finish().expect("vec"), safe.as_bytes());
        // Other non-ASCII text is left alone.
        assert_eq!(
            json_safe("\"h\u{e9}\u{2028}\u{20ac}\u{1f600}\""),
            "\"h\u{e9}\u{2028}\u{20ac}\u{1f600}\""
        );
    }

    #[test]
    fn excerpts() {
        let e = excerpt("héllo".as_bytes(), 2);
        assert_eq!(
            e,
            Excerpt {
                text: "h".into(),
                cut: true,
                utf8: true
            }
        );
        let e = excerpt(b"hello", 100);
        assert_eq!(
            e,
            Excerpt {
                text: "hello".into(),
                cut: false,
                utf8: true
            }
        );
        let e = excerpt(&[0xff, 0x00, 0x01], 100);
        assert_eq!(
            e,
            Excerpt {
                text: "ff0001".into(),
                cut: false,
                utf8: false
            }
        );
    }

    #[test]
    fn common_name_heuristic() {
        // ... issuer CN=Root ... subject CN=example.com ...
        let mut der = vec![0x30, 0x00];
        der.extend([0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 4]);
        der.extend(b"Root");
        der.extend([0x06, 0x03, 0x55, 0x04, 0x03, 0x13, 11]);
        der.extend(b"example.com");
        assert_eq!(der_common_name(&der).as_deref(), Some("example.com"));
        assert_eq!(
            der_common_name(&[0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 200]),
            None
        );
        assert_eq!(der_common_name(&[]), None);
    }
}
