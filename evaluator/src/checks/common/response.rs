//! One reading of a recorded answer to a complete `tools/list`, shared by
//! `auth-before-stream` and `origin-validated`. Both send requests that differ from each
//! other in one property only (the credential for `auth-before-stream`, the `Origin` header
//! for `origin-validated`), so a difference in the answers is attributable
//! to that property. A 2xx with a result, an event stream or an empty body is an
//! acceptance (an empty answer to a request acknowledges it like a notification); a 2xx
//! whose body is not JSON-RPC, or a 5xx without a JSON-RPC error, is not attributed to the
//! server: a gateway may have produced it.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::HttpOutcome;
use mcp_probe_schema::vocab::{header, LegId};

use crate::evidence::{Bundle, Exchange};
use crate::fmt::{escape_line, excerpt};

/// What a response shows, read the same way for every leg.
#[derive(Debug, Clone)]
pub struct Resp {
    /// The record.
    pub seq: u64,
    /// HTTP status.
    pub status: u16,
    /// Media type essence, lower-cased.
    pub media: Option<String>,
    /// `Content-Type` as sent.
    pub content_type: Option<String>,
    /// A JSON-RPC result (non-null) to the request.
    pub has_result: bool,
    /// A JSON-RPC error object: `(code, message)`.
    pub error: Option<(Option<i64>, String)>,
    /// Zero-length body.
    pub empty: bool,
    /// `WWW-Authenticate`, if any.
    pub challenge: Option<String>,
    /// The start of the body, for the evidence.
    pub body_excerpt: String,
}

/// How a response is read before any check-specific rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 2xx with a result, an event stream, or an empty body (an acceptance).
    Accepted,
    /// A status >= 400 that is not a bare 5xx, or a JSON-RPC error at any status.
    Refused,
    /// 3xx: not followed.
    Redirect,
    /// A 2xx whose body is not JSON-RPC, or a 5xx without a JSON-RPC error.
    Unattributable,
}

/// One leg as recorded.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The leg is absent from the bundle.
    Missing,
    /// Recorded as not sent.
    Skipped(String),
    /// Sent, no response head (transport failure).
    NoResponse {
        /// The record.
        seq: u64,
        /// The transport failure.
        why: String,
    },
    /// A response.
    Response(Resp),
}

impl Resp {
    /// Read the response of `x`; `None` when no response arrived.
    pub fn read(x: &Exchange<'_>) -> Option<Resp> {
        let r = x.response()?;
        let (error, has_result) = x.with_answer_head(|answer| {
            let error = answer
                .and_then(|a| a.error.as_ref())
                .filter(|e| e.object)
                .map(|e| (e.code_i64(), e.message_str().unwrap_or("").to_string()));
            let has_result = answer.and_then(|a| a.result) == Some(false);
            (error, has_result)
        });
        let e = excerpt(&r.body.bytes, 80);
        Some(Resp {
            seq: x.seq(),
            status: r.status,
            media: derive::media_type(&r.headers),
            content_type: x.header(header::CONTENT_TYPE),
            has_result,
            error,
            empty: r.body.length == 0,
            challenge: x.header(header::WWW_AUTHENTICATE),
            body_excerpt: {
                // Room for the mark of a cut too (no growth for it).
                let mut t =
                    String::with_capacity(e.text.len() + if e.cut { '…'.len_utf8() } else { 0 });
                crate::fmt::escape_line_into(&mut t, &e.text);
                if e.cut {
                    t.push('…');
                }
                t
            },
        })
    }

    /// How the response is read before any check-specific rule.
    pub fn kind(&self) -> Kind {
        match self.status {
            200..=299 => {
                if self.error.is_some() {
                    Kind::Refused
                } else if self.has_result || self.streamed() || self.empty {
                    Kind::Accepted
                } else {
                    Kind::Unattributable
                }
            }
            300..=399 => Kind::Redirect,
            400..=499 => Kind::Refused,
            500.. if self.error.is_some() => Kind::Refused,
            _ => Kind::Unattributable,
        }
    }

    /// The response is an event stream.
    pub fn streamed(&self) -> bool {
        self.media.as_deref() == Some("text/event-stream")
    }

    /// "HTTP 401 (application/json)".
    pub fn status_label(&self) -> String {
        // Written into one string (no formatting machinery: every response read is named).
        let mut label =
            String::with_capacity(40 + self.content_type.as_deref().map_or(0, str::len));
        label.push_str("HTTP ");
        label.push_str(itoa::Buffer::new().format(self.status));
        match &self.content_type {
            Some(ct) => {
                label.push_str(" (");
                crate::fmt::escape_line_into(&mut label, ct);
                label.push(')');
            }
            None => label.push_str(" (no Content-Type)"),
        }
        label
    }

    /// "HTTP 403 (text/plain) \"Invalid Origin header\"", or with the JSON-RPC error.
    pub fn described(&self) -> String {
        // Each part is written into the status label's string (no string of its own).
        let mut s = self.status_label();
        if let Some((code, msg)) = &self.error {
            s.push_str(" with JSON-RPC error ");
            match code {
                Some(c) => {
                    s.push_str("code ");
                    s.push_str(itoa::Buffer::new().format(*c));
                }
                None => s.push_str("without an integer code"),
            }
            s.push_str(" \"");
            crate::fmt::escape_line_into(&mut s, msg);
            s.push('"');
        } else if self.has_result {
            s.push_str(" with a result");
        } else if self.empty {
            s.push_str(" with an empty body");
        } else if !self.body_excerpt.is_empty() {
            s.push_str(" \"");
            s.push_str(&self.body_excerpt);
            s.push('"');
        }
        s
    }
}

/// The last record of `l` (one request is sent; should one be repeated, the last stands).
pub fn answer(ev: &Bundle, l: LegId) -> Answer {
    if let Some(x) = ev.exchanges(l).last() {
        return match Resp::read(&x) {
            Some(r) => Answer::Response(r),
            None => Answer::NoResponse {
                seq: x.seq(),
                why: match &x.http.outcome {
                    HttpOutcome::Error(e) => escape_line(&e.to_string()),
                    HttpOutcome::Response(_) => "no response".into(),
                },
            },
        };
    }
    match ev.skipped(l) {
        Some(reason) => Answer::Skipped(escape_line(reason)),
        None if ev.has_leg(l) => Answer::Skipped("recorded without an HTTP exchange".into()),
        None => Answer::Missing,
    }
}

impl Answer {
    /// The HTTP status, when a response arrived.
    pub fn status(&self) -> Option<u16> {
        match self {
            Answer::Response(r) => Some(r.status),
            _ => None,
        }
    }
}

/// Records and assertions shared by the tests of `auth-before-stream` and
/// `origin-validated`.
#[cfg(test)]
pub mod testing {
    use mcp_probe_schema::model::{
        ErrorKind, Header, HttpOutcome, Observation, Record, TransportError,
    };

    use crate::verdict::Outcome;

    /// A complete `tools/list`.
    pub const REQ: &str = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#;
    /// Its result as JSON.
    pub const OK: &str = r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#;
    /// Its result as an event stream.
    pub const SSE_OK: &str =
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"tools\":[]}}\n\n";

    /// Every one of `words` is in the evidence.
    pub fn has(o: &Outcome, words: &[&str]) {
        for w in words {
            assert!(o.evidence.contains(w), "{w:?} not in {:?}", o.evidence);
        }
    }

    /// `r` with one more request header.
    pub fn with_request_header(mut r: Record, name: &str, value: &str) -> Record {
        if let Observation::Http(x) = &mut r.observation {
            x.request.headers.push(Header::new(name, value));
        }
        r
    }

    /// `r` failed in transport with `kind`.
    pub fn failed(mut r: Record, kind: ErrorKind) -> Record {
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind,
                message: "gone".into(),
            });
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The status label pushed piece by piece is the one `format!` wrote.
    #[test]
    fn the_status_label_is_written_as_formatted() {
        for status in [0u16, 200, 403, 65535] {
            for content_type in [None, Some("application/json"), Some("text/\u{1b}[31mx")] {
                let r = Resp {
                    seq: 1,
                    status,
                    media: None,
                    content_type: content_type.map(str::to_string),
                    has_result: false,
                    error: None,
                    empty: true,
                    challenge: None,
                    body_excerpt: String::new(),
                };
                let formatted = match &r.content_type {
                    Some(ct) => format!("HTTP {} ({})", r.status, escape_line(ct)),
                    None => format!("HTTP {} (no Content-Type)", r.status),
                };
                assert_eq!(r.status_label(), formatted);
            }
        }
    }

    /// The description written piece by piece is the one formatted strings made.
    #[test]
    fn the_description_is_written_as_formatted() {
        let errors = [
            None,
            Some((Some(-32602), "bad \u{1b}[31m\u{202e}params".to_string())),
            Some((Some(i64::MIN), String::new())),
            Some((None, "no code".to_string())),
        ];
        for error in errors {
            for (has_result, empty, excerpt) in [
                (true, false, ""),
                (false, true, ""),
                (false, false, "Invalid Origin"),
                (false, false, ""),
            ] {
                let r = Resp {
                    seq: 1,
                    status: 403,
                    media: None,
                    content_type: Some("text/plain".into()),
                    has_result,
                    error: error.clone(),
                    empty,
                    challenge: None,
                    body_excerpt: excerpt.into(),
                };
                let mut old = r.status_label();
                if let Some((code, msg)) = &r.error {
                    let code = code.map_or_else(
                        || "without an integer code".to_string(),
                        |c| format!("code {c}"),
                    );
                    old.push_str(&format!(
                        " with JSON-RPC error {code} \"{}\"",
                        escape_line(msg)
                    ));
                } else if r.has_result {
                    old.push_str(" with a result");
                } else if r.empty {
                    old.push_str(" with an empty body");
                } else if !r.body_excerpt.is_empty() {
                    old.push_str(&format!(" \"{}\"", r.body_excerpt));
                }
                assert_eq!(r.described(), old);
            }
        }
    }
}
