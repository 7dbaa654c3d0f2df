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

/// Microseconds as milliseconds, for humans (`1.500 ms`).
pub fn millis(us: u64) -> String {
    format!("{}.{:03} ms", us / 1000, us % 1000)
}

/// Microseconds as fractional milliseconds (HAR times).
pub fn millis_f64(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Standard base64 with padding.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

pub use mcp_probe_schema::term::{block, line};

/// Bytes as lossy UTF-8 for one line of output.
pub fn bytes_line(b: &[u8]) -> String {
    line(&String::from_utf8_lossy(b))
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
    let end = match std::str::from_utf8(slice) {
        Ok(_) => Some(slice.len()),
        // Cut inside a character at the limit: back off to the boundary.
        Err(e) if e.error_len().is_none() && slice.len() < bytes.len() => Some(e.valid_up_to()),
        Err(_) => None,
    };
    match end {
        Some(end) => Excerpt {
            text: block(&String::from_utf8_lossy(&slice[..end])),
            cut: end < bytes.len(),
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
        assert_eq!(line("a\x1b[31mb\nc"), "a\\u{1b}[31mb\\nc");
        assert_eq!(block("a\r\nb\x07\tc\u{202e}"), "a\nb\\u{7}\tc\\u{202e}");
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
