//! Facts derived from records, shared by the collector (to act on answers) and the
//! grader (to decide from evidence): header lookup, JSON-RPC message extraction from
//! JSON or SSE bodies, and the inventory across every page of each list.
//!
//! Derivations read the stored bytes only. Unobserved and observed-empty stay distinct:
//! a list that was never requested is `observed: false`, not an empty list.

use serde::Serialize;
use serde_json::Value;

use crate::model::{
    Body, BodyEnd, Header, HttpOutcome, HttpResponse, Observation, Record, StdioExchange,
};
use crate::vocab::{inventory, leg, meta, LegId};

/// First header named `name` (case-insensitive).
pub fn header<'a>(headers: &'a [Header], name: &str) -> Option<&'a Header> {
    headers.iter().find(|h| h.name.eq_ignore_ascii_case(name))
}

/// The media type essence of `Content-Type`, lower-cased (`application/json`).
pub fn media_type(headers: &[Header]) -> Option<String> {
    header(headers, "content-type").map(|h| {
        let v = h.value_str();
        v.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    })
}

/// Whether the media type essence of `Content-Type` is `essence` (given lower-cased):
/// [`media_type`]`(headers).as_deref() == Some(essence)`, without building the string.
pub fn media_type_is(headers: &[Header], essence: &str) -> bool {
    header(headers, "content-type").is_some_and(|h| {
        let head = h.value.split(|&b| b == b';').next().unwrap_or(&[]);
        if head.is_ascii() {
            // The ASCII characters `str::trim` trims: space, tab, line feed, vertical
            // tab, form feed, carriage return.
            let ws = |b: &u8| *b == b' ' || (0x09..=0x0d).contains(b);
            let start = head.iter().position(|b| !ws(b)).unwrap_or(head.len());
            let end = head.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
            head[start..end].eq_ignore_ascii_case(essence.as_bytes())
        } else {
            h.value_str()
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case(essence)
        }
    })
}

/// Every JSON-RPC message in a response body: the events of an SSE body, or the JSON
/// body itself; arrays (batches) are flattened. Unparseable parts are skipped.
pub fn jsonrpc_messages(resp: &HttpResponse) -> Vec<Value> {
    let sse = media_type_is(&resp.headers, "text/event-stream");
    messages_in(sse.then_some("text/event-stream"), &resp.body.bytes)
}

/// As [`jsonrpc_messages`], from a media type and body bytes.
pub fn messages_in(media_type: Option<&str>, body: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut push = |v: Value| match v {
        Value::Array(a) => out.extend(a.into_iter().filter(Value::is_object)),
        v @ Value::Object(_) => out.push(v),
        _ => {}
    };
    if media_type == Some("text/event-stream") {
        for ev in crate::sse::parse(body).events {
            if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
                push(v);
            }
        }
    } else if let Ok(v) = match std::str::from_utf8(body) {
        // Checked once here rather than string by string as the parse goes (invalid
        // UTF-8 is refused by either parse).
        Ok(text) => serde_json::from_str::<Value>(text),
        Err(_) => serde_json::from_slice::<Value>(body),
    } {
        push(v);
    }
    out
}

/// Every JSON-RPC message on the stdout lines of a stdio exchange (lines that are not
/// JSON-RPC messages, and lines stored cut, are skipped), in order.
pub fn stdio_messages(x: &StdioExchange) -> Vec<Value> {
    x.received
        .iter()
        .filter(|l| l.jsonrpc && l.bytes.len() as u64 == l.length)
        .flat_map(|l| messages_in(Some("application/json"), &l.bytes))
        .collect()
}

/// Why a response body cannot be read as the server's answer, or `None` when it can:
/// only a body read to its end (`complete`) or an event stream read up to the awaited
/// response (`stopped_after_response`) is an answer. A body that ended in a transport
/// error (truncated chunked reply, reset mid-body), stopped at the read limit, or of
/// which only the head was read is not, whatever its stored bytes parse to.
pub fn body_cut(body: &Body) -> Option<String> {
    match &body.end {
        BodyEnd::Complete | BodyEnd::StoppedAfterResponse => None,
        BodyEnd::Error(e) => Some(format!(
            "the body ended in a transport error after {} bytes ({e})",
            body.length
        )),
        BodyEnd::LimitReached => Some(format!(
            "the collector stopped reading the body at its read limit ({} bytes)",
            body.length
        )),
        BodyEnd::HeadOnly => Some("only the response head was read".to_string()),
    }
}

/// The JSON-RPC response (result or error) whose `id` equals `id`.
pub fn response_to<'a>(messages: &'a [Value], id: &Value) -> Option<&'a Value> {
    messages.iter().find(|m| answers(m, id))
}

/// True when message `m` answers request `id`: an object whose `id` is `id` and that has
/// a `result` or an `error`. Read in one pass over its members (an object's keys are
/// unique), where looking up each key would hash it three times.
fn answers(m: &Value, id: &Value) -> bool {
    let Some(o) = m.as_object() else {
        return false;
    };
    let (mut same, mut answer) = (false, false);
    for (k, v) in o {
        match k.as_str() {
            "id" => same = v == id,
            "result" | "error" => answer = true,
            _ => {}
        }
    }
    same && answer
}

/// The `id` of the JSON-RPC request in a request body.
pub fn request_id(body: &[u8]) -> Option<Value> {
    request_head(body)?.id
}

/// What is read of most requests: the `id` and `method` members of a request body, read
/// without building the rest of it ([`request_head`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestHead {
    /// The body's `id` member, when it is a JSON object that has one (of several, the
    /// last, as `serde_json::Value` keeps it).
    pub id: Option<Value>,
    /// The body's `method` member, when it is a JSON object whose (last) `method` is a
    /// string.
    pub method: Option<String>,
}

/// What the checks of live requests read of a request the collector sent: members of
/// its `params`, as the body parsed as a `serde_json::Value` has them (of several copies
/// of a member, the last), read without building the body ([`request_params`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestParams {
    /// `params.name`, when it is a string.
    pub name: Option<String>,
    /// `params.uri`, when it is a string.
    pub uri: Option<String>,
    /// `params.protocolVersion`, when it is a string.
    pub protocol_version: Option<String>,
    /// The names of `params.arguments`' members, when it is an object (each once, in the
    /// order the parsed object keeps them).
    pub arguments: Option<Vec<String>>,
}

impl RequestParams {
    /// The params of a request read whole.
    pub fn of(request: &Value) -> RequestParams {
        let params = request.get("params").filter(|p| p.is_object());
        let string = |k: &str| {
            params
                .and_then(|p| p.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        RequestParams {
            name: string("name"),
            uri: string("uri"),
            protocol_version: string("protocolVersion"),
            arguments: params
                .and_then(|p| p.get("arguments"))
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect()),
        }
    }

    /// `params.arguments` is an object with a member named `name`.
    pub fn has_argument(&self, name: &str) -> bool {
        self.arguments
            .as_ref()
            .is_some_and(|a| a.iter().any(|k| k == name))
    }
}

/// The [`RequestParams`] of a request body, `None` when the body is not one JSON
/// document: what parsing it as a `serde_json::Value` and reading [`RequestParams::of`]
/// gives, read by the scan of [`request_head`] when it decides of the body (it accepts
/// it, or refuses it as serde_json would), else from the parsed body.
pub fn request_params(body: &[u8]) -> Option<RequestParams> {
    if !scan::may_be_json(body) {
        return None;
    }
    scan::params_decided(body).unwrap_or_else(|| {
        serde_json::from_slice::<Value>(body)
            .ok()
            .map(|v| RequestParams::of(&v))
    })
}

/// What is read of one JSON-RPC message to tell whether it answers a request and how:
/// its `id`, whether it has a `result` (and whether that is null) and its `error`, as
/// the message parsed as a `serde_json::Value` has them (of several copies of a member,
/// the last).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageHead {
    /// The `id` member.
    pub id: Option<Value>,
    /// With a `result` member: whether it is `null`.
    pub result: Option<bool>,
    /// The `error` member: what readers of an error read of it, without building the
    /// object ([`ErrorHead`]).
    pub error: Option<ErrorHead>,
    /// The `result` is an object whose `_meta` is an object whose
    /// `io.modelcontextprotocol/serverInfo` member ([`meta::SERVER_INFO`]) is an object
    /// with at least one member: the result names the server that sent it.
    pub result_names_server: bool,
    /// When the `result` is an object: the length of each of its members that is an
    /// array (of several copies of a member, the last, as the parsed object keeps it),
    /// by member name in ascending byte order. What readers of a result's shape need
    /// (how many `tools` it lists) without building the result.
    pub result_arrays: Vec<(String, usize)>,
    /// The `result` is an object whose (last) `isError` member is `true`.
    pub result_is_error: bool,
    /// The `protocolVersion` member of the `result`, when that is an object that has
    /// one: what a reader of an `initialize` answer asks, without building the result.
    pub result_protocol_version: Option<Value>,
    /// The `supportedVersions` member of the `result`, when that is an object that has
    /// one: what a reader of a `server/discover` answer asks, without building the result.
    pub result_supported_versions: Option<Value>,
}

impl MessageHead {
    /// The head of a message read whole.
    pub fn of(message: &Value) -> MessageHead {
        MessageHead {
            id: message.get("id").cloned(),
            result: message.get("result").map(Value::is_null),
            error: message.get("error").map(ErrorHead::of),
            result_names_server: message
                .get("result")
                .and_then(|r| r.get("_meta"))
                .and_then(|m| m.get(meta::SERVER_INFO))
                .and_then(Value::as_object)
                .is_some_and(|o| !o.is_empty()),
            result_arrays: message
                .get("result")
                .and_then(Value::as_object)
                .map(|r| {
                    let mut arrays: Vec<(String, usize)> = r
                        .iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_array()?.len())))
                        .collect();
                    arrays.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    arrays
                })
                .unwrap_or_default(),
            result_is_error: message
                .get("result")
                .and_then(|r| r.get("isError"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            result_protocol_version: message
                .get("result")
                .and_then(|r| r.get("protocolVersion"))
                .cloned(),
            result_supported_versions: message
                .get("result")
                .and_then(|r| r.get("supportedVersions"))
                .cloned(),
        }
    }

    /// The length of the result's member `key` when it is an array
    /// ([`result_arrays`](Self::result_arrays)).
    pub fn result_array_len(&self, key: &str) -> Option<usize> {
        array_len(&self.result_arrays, key)
    }

    /// A result or an error: an answer to some request.
    pub fn is_answer(&self) -> bool {
        self.result.is_some() || self.error.is_some()
    }
}

/// The `error` member of a JSON-RPC message as readers of an error read it: whether it
/// is an object and, when it is, its `code`, `message` and `data` members, each as the
/// object parsed as a `serde_json::Value` has it (of several copies, the last); the
/// object itself is not built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorHead {
    /// The member is an object (else it has no members to read).
    pub object: bool,
    /// The object's `code` member.
    pub code: Option<Value>,
    /// The object's `message` member.
    pub message: Option<Value>,
    /// The object's `data` member.
    pub data: Option<Value>,
}

impl ErrorHead {
    /// The head of an `error` member read whole.
    pub fn of(error: &Value) -> ErrorHead {
        match error.as_object() {
            Some(e) => ErrorHead {
                object: true,
                code: e.get("code").cloned(),
                message: e.get("message").cloned(),
                data: e.get("data").cloned(),
            },
            None => ErrorHead::default(),
        }
    }

    /// The `code` when it is an integer that fits an `i64` (`Value::as_i64`).
    pub fn code_i64(&self) -> Option<i64> {
        self.code.as_ref().and_then(Value::as_i64)
    }

    /// The `message` when it is a string.
    pub fn message_str(&self) -> Option<&str> {
        self.message.as_ref().and_then(Value::as_str)
    }
}

/// The length of member `key` among `arrays`, a result's top-level array members and
/// their lengths sorted by name ([`MessageHead::result_arrays`]).
pub fn array_len(arrays: &[(String, usize)], key: &str) -> Option<usize> {
    arrays
        .binary_search_by(|(k, _)| k.as_str().cmp(key))
        .ok()
        .map(|i| arrays[i].1)
}

/// The [`MessageHead`] of every message [`messages_in`] reads from the same body, in the
/// same order, read without building the messages: `None` when the scan cannot tell
/// (a part it does not accept, whether serde_json would), and the messages are then to
/// be read whole.
pub fn message_heads_in(media_type: Option<&str>, body: &[u8]) -> Option<Vec<MessageHead>> {
    let mut out = Vec::new();
    if media_type == Some("text/event-stream") {
        for ev in crate::sse::parse(body).events {
            scan::messages(ev.data.as_bytes(), &mut out)?;
        }
    } else {
        scan::messages(body, &mut out)?;
    }
    Some(out)
}

/// The [`RequestHead`] of a request body, `None` when the body is not one JSON document:
/// exactly what parsing it as a `serde_json::Value` and reading `id` and `method` gives
/// (the same parser accepts the same bytes, recursion limit and number checks included),
/// without allocating the members it does not keep.
pub fn request_head(body: &[u8]) -> Option<RequestHead> {
    if !scan::may_be_json(body) {
        return None;
    }
    scan::head_decided(body).unwrap_or_else(|| request_head_by_visitor(body))
}

/// [`request_head`] read by serde_json itself ([`head`]): every value visited through
/// `deserialize_any`, only `id` and `method` kept. The reference the scan
/// ([`scan::head_decided`]) falls back to for every body it cannot decide of.
fn request_head_by_visitor(body: &[u8]) -> Option<RequestHead> {
    serde_json::from_slice::<head::Doc>(body).ok().map(|d| d.0)
}

/// A scan of a request body that finds the top-level `id` and `method` without handing
/// every token to a serde visitor: it accepts only a subset of what serde_json accepts
/// (JSON of at most [`scan::DEPTH`] levels, numbers without an exponent and of at most
/// [`scan::NUMBER_MAX`] bytes, member names of the top-level object without escapes) and
/// says nothing (`None`) of any other body, which [`request_head`] then reads through
/// serde_json. So a body it accepts is one serde_json accepts, and every body it does
/// not accept (malformed, or merely unusual) is decided by serde_json itself, but for
/// the bodies it refuses itself: those with bytes after the document or invalid UTF-8,
/// and those that end inside the document (a body stored cut), which serde_json refuses
/// whatever it holds ([`Scan::decided`]).
mod scan {
    use serde_json::Value;

    use super::{ErrorHead, MessageHead, RequestHead, RequestParams};

    /// Nesting the scan follows (serde_json refuses past 127 levels).
    pub(super) const DEPTH: u32 = 64;
    /// The longest number the scan reads: without an exponent, a number this short is
    /// always finite, as serde_json requires.
    pub(super) const NUMBER_MAX: usize = 40;

    /// False when `doc` cannot be a JSON document at all: it is empty or blank, or its
    /// first byte after JSON whitespace starts no JSON value (serde_json refuses it at
    /// that byte, as it refuses an empty document). An empty body, `Invalid Origin
    /// header` or an HTML page is then known to hold no message without a parse.
    pub(super) fn may_be_json(doc: &[u8]) -> bool {
        doc.iter()
            .find(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
            .is_some_and(|c| {
                matches!(
                    c,
                    b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
                )
            })
    }

    pub(super) struct Scan<'a> {
        b: &'a [u8],
        /// Where the scan is.
        pub(super) i: usize,
        /// A byte over 0x7F was read inside a string: the body's UTF-8 is checked at
        /// the end (outside strings such a byte is refused as it comes).
        pub(super) non_ascii: bool,
        /// A number longer than [`NUMBER_MAX`] was refused: one serde_json may accept,
        /// though the scan may stand at the end of the body ([`Scan::decided`]).
        long_number: bool,
    }

    /// The head of `body` when the scan accepts it (see the module), else `None`.
    #[cfg(test)]
    pub(super) fn head(body: &[u8]) -> Option<RequestHead> {
        head_decided(body).flatten()
    }

    /// What the scan decides of `body` ([`Scan::decided`]): `Some` of its head when it
    /// accepts it, `Some(None)` when it refuses it as serde_json does, `None` when it
    /// cannot tell.
    pub(super) fn head_decided(body: &[u8]) -> Option<Option<RequestHead>> {
        let mut s = Scan::new(body);
        let head = s.request_head();
        s.decided(head)
    }

    /// The params of `body` when the scan accepts it (see the module), else `None`.
    #[cfg(test)]
    pub(super) fn params(body: &[u8]) -> Option<RequestParams> {
        params_decided(body).flatten()
    }

    /// What the scan decides of the params of `body`, as [`head_decided`] of its head.
    pub(super) fn params_decided(body: &[u8]) -> Option<Option<RequestParams>> {
        let mut s = Scan::new(body);
        let params = s.request_params();
        s.decided(params)
    }

    /// The heads of the JSON-RPC messages of one JSON document (an object, or the
    /// objects of an array), appended to `out`, when the scan accepts it, else `None`
    /// (and `out` as it was).
    pub(super) fn messages(doc: &[u8], out: &mut Vec<MessageHead>) -> Option<()> {
        if !may_be_json(doc) {
            // Not JSON (serde_json refuses it): no message, told without a parse.
            return Some(());
        }
        let mut s = Scan::new(doc);
        let mut heads = Vec::new();
        s.ws();
        match s.peek()? {
            b'{' => heads.push(s.message(0)?),
            b'[' => {
                s.i += 1;
                s.ws();
                if s.eat(b']').is_none() {
                    loop {
                        s.ws();
                        if s.peek()? == b'{' {
                            heads.push(s.message(1)?);
                        } else {
                            s.value(1)?;
                        }
                        s.ws();
                        match s.peek()? {
                            b',' => s.i += 1,
                            b']' => {
                                s.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
            }
            _ => s.value(0)?,
        }
        s.ws();
        if s.i != doc.len() || (s.non_ascii && std::str::from_utf8(doc).is_err()) {
            return None;
        }
        if out.is_empty() {
            // The first document's heads become the list (no second one to move them into).
            *out = heads;
        } else {
            out.append(&mut heads);
        }
        Some(())
    }

    /// `doc` read whole by [`Scan::parsed`] when the scan accepts it (the builder the
    /// property tests hold to serde_json), else `None`.
    #[cfg(test)]
    pub(super) fn build(doc: &[u8]) -> Option<Value> {
        let mut s = Scan::new(doc);
        s.ws();
        let v = s.parsed(0)?;
        s.ws();
        let whole = s.i == doc.len() && !(s.non_ascii && std::str::from_utf8(doc).is_err());
        whole.then_some(v)
    }

    /// A number the scan accepted (`-`? digits, a fraction at most) as serde_json reads
    /// it: an integer that fits in a `u64` (or, negative and not zero, in an `i64`) as
    /// that integer; any other (a fraction, `-0`, a longer integer, which serde_json
    /// reads as a float) read by serde_json itself from the number's bytes.
    fn number(raw: &[u8]) -> Option<Value> {
        let (negative, digits) = match raw.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, raw),
        };
        // The digits as a `u64`, when they are digits only (at least one) and fit.
        let n = digits.split_first().and_then(|_| {
            digits.iter().try_fold(0_u64, |n, &d| {
                let d = d.checked_sub(b'0').filter(|d| *d <= 9)?;
                n.checked_mul(10)?.checked_add(u64::from(d))
            })
        });
        match n {
            Some(n) if !negative => Some(Value::from(n)),
            Some(n) if n != 0 && n <= i64::MAX as u64 => Some(Value::from(-(n as i64))),
            _ => serde_json::from_slice::<Value>(raw).ok(),
        }
    }

    /// Where a run of string bytes that starts at `from` ends: the position of the first
    /// quote, backslash or control character (below 0x20) of `b` from there, `None` when
    /// it has none; and whether a byte over 0x7F was read: every byte before that
    /// position is, and up to seven after it may be (read in the same word; a byte past
    /// the string that is over 0x7F at most asks for the check of the document's UTF-8
    /// that its own string would ask for, or is refused where it stands). Eight bytes
    /// at a time: most strings are short, where a call of memchr costs more than the
    /// string, and a long one read a word at a time costs about as much as memchr's
    /// search and a pass for control characters.
    #[inline(always)]
    pub(super) fn run_end(b: &[u8], from: usize) -> (Option<usize>, bool) {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // The high bit of each zero byte of `y`, and possibly of bytes after the first
        // (a borrow carrying upwards), never of one before it: the lowest marks the
        // first. The same holds of the bytes below 0x20 marked in `stop` below.
        let zero = |y: u64| y.wrapping_sub(ONES) & !y & HIGH;
        let mut read = 0;
        let mut at = from;
        while let Some(w) = b.get(at..at + 8) {
            let mut word = [0; 8];
            word.copy_from_slice(w);
            let x = u64::from_le_bytes(word);
            read |= x;
            let stop = zero(x ^ (ONES * u64::from(b'"')))
                | zero(x ^ (ONES * u64::from(b'\\')))
                | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
            if stop != 0 {
                let k = (stop.trailing_zeros() / 8) as usize;
                return (Some(at + k), read & HIGH != 0);
            }
            at += 8;
        }
        while let Some(&c) = b.get(at) {
            if c == b'"' || c == b'\\' || c < 0x20 {
                return (Some(at), read & HIGH != 0);
            }
            read |= u64::from(c);
            at += 1;
        }
        (None, read & HIGH != 0)
    }

    impl<'a> Scan<'a> {
        /// A scan at the start of `b`.
        pub(super) fn new(b: &'a [u8]) -> Scan<'a> {
            Scan {
                b,
                i: 0,
                non_ascii: false,
                long_number: false,
            }
        }

        /// The head of the request document at the start of the scan (the value read,
        /// nothing after it).
        fn request_head(&mut self) -> Option<RequestHead> {
            self.ws();
            if self.peek()? == b'{' {
                self.top_object()
            } else {
                self.value(0)?;
                Some(RequestHead::default())
            }
        }

        /// The params of the request document at the start of the scan, as
        /// [`request_head`](Self::request_head) reads its head.
        fn request_params(&mut self) -> Option<RequestParams> {
            self.ws();
            if self.peek()? != b'{' {
                self.value(0)?;
                return Some(RequestParams::default());
            }
            let mut params = RequestParams::default();
            self.members(0, |s, key| {
                if key == b"params" {
                    params = if s.peek()? == b'{' {
                        s.params_object()?
                    } else {
                        s.value(1)?;
                        RequestParams::default()
                    };
                    Some(())
                } else {
                    s.value(1)
                }
            })?;
            Some(params)
        }

        /// What the scan decides of its document, given `read`, what it read of the
        /// value at its start: `Some(Some(read))` when the value is the whole document
        /// (nothing but whitespace after it) and the document is UTF-8; `Some(None)` when
        /// serde_json refuses the document too: bytes after the value, invalid UTF-8, or
        /// (`read` is `None`) the scan stopped at the end of the body, inside the
        /// document, where serde_json stops too (every byte before it was read as JSON
        /// that the scan follows, and a document is never whole inside a string, an
        /// object, an array or a number cut short); `None` when it cannot tell (it
        /// stopped before the end, at what it does not read or a malformed byte, or at
        /// a number too long for it).
        pub(super) fn decided<T>(&mut self, read: Option<T>) -> Option<Option<T>> {
            let Some(read) = read else {
                return (self.i >= self.b.len() && !self.long_number).then_some(None);
            };
            self.ws();
            if self.i != self.b.len() || (self.non_ascii && std::str::from_utf8(self.b).is_err()) {
                return Some(None);
            }
            Some(Some(read))
        }

        fn peek(&self) -> Option<u8> {
            self.b.get(self.i).copied()
        }

        fn ws(&mut self) {
            while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
                self.i += 1;
            }
        }

        fn eat(&mut self, c: u8) -> Option<()> {
            (self.peek()? == c).then(|| self.i += 1)
        }

        /// An object (at its `{`) at `depth` levels of nesting: `member` reads each
        /// member's value (the scan at it) given the member's name, unescaped; an escaped
        /// name (which may spell any other) is left to serde_json.
        fn members(
            &mut self,
            depth: u32,
            mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>,
        ) -> Option<()> {
            if depth >= DEPTH {
                return None;
            }
            self.i += 1;
            self.ws();
            if self.eat(b'}').is_some() {
                return Some(());
            }
            loop {
                self.ws();
                let k0 = self.i;
                if self.peek()? != b'"' || self.string()? {
                    return None;
                }
                let key = &self.b[k0 + 1..self.i - 1];
                self.ws();
                self.eat(b':')?;
                self.ws();
                member(self, key)?;
                self.ws();
                match self.peek()? {
                    b',' => self.i += 1,
                    b'}' => {
                        self.i += 1;
                        return Some(());
                    }
                    _ => return None,
                }
            }
        }

        /// The value at the scan, built as serde_json builds it (for the few members
        /// kept whole: an `id`, an `error`, a `_meta`), without handing its bytes to
        /// serde_json again: the scan reads each item once and builds it where it lies.
        /// Objects are built by `Map::insert` in the order of their members, as
        /// serde_json's `Value` visitor builds them (a later copy of a name replaces the
        /// value and keeps the first one's place). Numbers other than integers that fit
        /// in 64 bits (fractions, `-0`, longer integers) and strings with escapes are
        /// read by serde_json from their own bytes.
        fn parsed(&mut self, depth: u32) -> Option<Value> {
            match self.peek()? {
                b'{' | b'[' if depth >= DEPTH => None,
                b'{' => {
                    let mut map = serde_json::Map::new();
                    self.members(depth, |s, key| {
                        let key = std::str::from_utf8(key).ok()?.to_owned();
                        let v = s.parsed(depth + 1)?;
                        map.insert(key, v);
                        Some(())
                    })?;
                    Some(Value::Object(map))
                }
                b'[' => {
                    self.i += 1;
                    self.ws();
                    let mut items = Vec::new();
                    if self.eat(b']').is_some() {
                        return Some(Value::Array(items));
                    }
                    loop {
                        self.ws();
                        items.push(self.parsed(depth + 1)?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                return Some(Value::Array(items));
                            }
                            _ => return None,
                        }
                    }
                }
                b'"' => {
                    let v0 = self.i;
                    let escaped = self.string()?;
                    let raw = &self.b[v0..self.i];
                    Some(Value::String(if escaped {
                        serde_json::from_slice::<String>(raw).ok()?
                    } else {
                        std::str::from_utf8(&raw[1..raw.len() - 1]).ok()?.to_owned()
                    }))
                }
                b't' => self.literal(b"true").map(|()| Value::Bool(true)),
                b'f' => self.literal(b"false").map(|()| Value::Bool(false)),
                b'n' => self.literal(b"null").map(|()| Value::Null),
                b'-' | b'0'..=b'9' => {
                    let v0 = self.i;
                    self.number()?;
                    number(&self.b[v0..self.i])
                }
                _ => None,
            }
        }

        /// A string (at its `"`), decoded.
        fn string_value(&mut self) -> Option<String> {
            let v0 = self.i;
            let escaped = self.string()?;
            let raw = &self.b[v0..self.i];
            if escaped {
                serde_json::from_slice::<String>(raw).ok()
            } else {
                std::str::from_utf8(&raw[1..raw.len() - 1])
                    .ok()
                    .map(str::to_owned)
            }
        }

        /// A request's `params` object (at its `{`, one level down), keeping the last
        /// `name`, `uri` and `protocolVersion` that are strings and the member names of
        /// the last `arguments` that is an object.
        fn params_object(&mut self) -> Option<RequestParams> {
            let mut p = RequestParams::default();
            self.members(1, |s, key| {
                let slot = match key {
                    b"name" => &mut p.name,
                    b"uri" => &mut p.uri,
                    b"protocolVersion" => &mut p.protocol_version,
                    b"arguments" if s.peek()? == b'{' => {
                        let mut names: Vec<String> = Vec::new();
                        s.members(2, |s, key| {
                            let key = std::str::from_utf8(key).ok()?;
                            if !names.iter().any(|k| k == key) {
                                names.push(key.to_owned());
                            }
                            s.value(3)
                        })?;
                        p.arguments = Some(names);
                        return Some(());
                    }
                    b"arguments" => {
                        p.arguments = None;
                        return s.value(2);
                    }
                    _ => return s.value(2),
                };
                *slot = if s.peek()? == b'"' {
                    Some(s.string_value()?)
                } else {
                    s.value(2)?;
                    None
                };
                Some(())
            })?;
            Some(p)
        }

        /// The top-level object, keeping the last `id` and the last `method`.
        fn top_object(&mut self) -> Option<RequestHead> {
            let mut head = RequestHead::default();
            self.members(0, |s, key| {
                match key {
                    b"id" => head.id = Some(s.parsed(1)?),
                    b"method" if s.peek()? == b'"' => {
                        let v0 = s.i;
                        let escaped = s.string()?;
                        let raw = &s.b[v0..s.i];
                        head.method = Some(if escaped {
                            serde_json::from_slice::<String>(raw).ok()?
                        } else {
                            std::str::from_utf8(&raw[1..raw.len() - 1]).ok()?.to_owned()
                        });
                    }
                    b"method" => {
                        s.value(1)?;
                        head.method = None;
                    }
                    _ => s.value(1)?,
                }
                Some(())
            })?;
            Some(head)
        }

        /// A JSON-RPC message (an object, at its `{`), keeping the last `id`, `result`
        /// (null or not, and its `_meta`) and `error`.
        fn message(&mut self, depth: u32) -> Option<MessageHead> {
            let mut head = MessageHead::default();
            self.members(depth, |s, key| {
                match key {
                    b"id" => head.id = Some(s.parsed(depth + 1)?),
                    b"error" => head.error = Some(s.error(depth + 1)?),
                    b"result" if s.peek()? == b'{' => {
                        let mut names_server = false;
                        let mut protocol_version = None;
                        let mut supported_versions = None;
                        // Each array member's name (as the range of the document it is
                        // written in: no escapes, `members` leaves those to serde_json)
                        // and length; a later copy replaces an earlier one, a later copy
                        // that is no array removes it.
                        let doc = s.b;
                        let mut arrays: Vec<(std::ops::Range<usize>, usize)> = Vec::new();
                        let mut is_error = false;
                        s.members(depth + 1, |s, key| {
                            arrays.retain(|(k, _)| &doc[k.clone()] != key);
                            let at = key.as_ptr() as usize - doc.as_ptr() as usize;
                            let name = at..at + key.len();
                            if key == b"isError" {
                                is_error = false;
                            }
                            if key == b"_meta" {
                                names_server = false;
                            }
                            match key {
                                b"_meta" if s.peek()? == b'{' => {
                                    names_server = s.names_server(depth + 2)?;
                                }
                                b"protocolVersion" | b"supportedVersions" => {
                                    let v = s.parsed(depth + 2)?;
                                    if let Some(a) = v.as_array() {
                                        arrays.push((name, a.len()));
                                    }
                                    if key == b"protocolVersion" {
                                        protocol_version = Some(v);
                                    } else {
                                        supported_versions = Some(v);
                                    }
                                }
                                _ if s.peek()? == b'[' => {
                                    let n = s.array(depth + 2)?;
                                    arrays.push((name, n));
                                }
                                b"isError" => {
                                    let v0 = s.i;
                                    s.value(depth + 2)?;
                                    is_error = &s.b[v0..s.i] == b"true";
                                }
                                _ => s.value(depth + 2)?,
                            }
                            Some(())
                        })?;
                        let mut out = Vec::with_capacity(arrays.len());
                        for (k, n) in arrays {
                            out.push((std::str::from_utf8(&doc[k]).ok()?.to_owned(), n));
                        }
                        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                        head.result = Some(false);
                        head.result_names_server = names_server;
                        head.result_arrays = out;
                        head.result_is_error = is_error;
                        head.result_protocol_version = protocol_version;
                        head.result_supported_versions = supported_versions;
                    }
                    b"result" => {
                        let v0 = s.i;
                        s.value(depth + 1)?;
                        head.result = Some(&s.b[v0..s.i] == b"null");
                        head.result_names_server = false;
                        head.result_arrays = Vec::new();
                        head.result_is_error = false;
                        head.result_protocol_version = None;
                        head.result_supported_versions = None;
                    }
                    _ => s.value(depth + 1)?,
                }
                Some(())
            })?;
            Some(head)
        }

        /// A message's `error` member at `depth` levels of nesting: its [`ErrorHead`],
        /// the members it keeps built as [`parsed`](Self::parsed) builds them.
        fn error(&mut self, depth: u32) -> Option<ErrorHead> {
            if self.peek()? != b'{' {
                self.value(depth)?;
                return Some(ErrorHead::default());
            }
            let mut e = ErrorHead {
                object: true,
                ..ErrorHead::default()
            };
            self.members(depth, |s, key| {
                let slot = match key {
                    b"code" => &mut e.code,
                    b"message" => &mut e.message,
                    b"data" => &mut e.data,
                    _ => return s.value(depth + 1),
                };
                *slot = Some(s.parsed(depth + 1)?);
                Some(())
            })?;
            Some(e)
        }

        /// A result's `_meta` object (at its `{`, `depth` levels down): whether its
        /// (last) [`meta::SERVER_INFO`](super::meta::SERVER_INFO) member is an object
        /// with a member ([`MessageHead::result_names_server`]).
        fn names_server(&mut self, depth: u32) -> Option<bool> {
            let mut named = false;
            self.members(depth, |s, key| {
                if key != super::meta::SERVER_INFO.as_bytes() {
                    return s.value(depth + 1);
                }
                named = false;
                if s.peek()? == b'{' {
                    s.members(depth + 1, |s, _| {
                        named = true;
                        s.value(depth + 2)
                    })
                } else {
                    s.value(depth + 1)
                }
            })?;
            Some(named)
        }

        /// One value at `depth` levels of nesting, read and dropped. The objects and
        /// arrays inside it are followed without recursion: one bit per open level (at
        /// most [`DEPTH`], so a `u64`) says whether it is an object. It accepts exactly
        /// what [`value_by_recursion`](Self::value_by_recursion) accepts, and stops at
        /// the same place.
        pub(super) fn value(&mut self, depth: u32) -> Option<()> {
            // Open levels inside the value, and bit `k` set when level `k` is an object.
            let mut open: u32 = 0;
            let mut objects: u64 = 0;
            loop {
                // A value is to be read at the scan.
                match self.peek()? {
                    c @ (b'{' | b'[') => {
                        if depth + open >= DEPTH {
                            return None;
                        }
                        self.i += 1;
                        self.ws();
                        if c == b'{' {
                            objects |= 1 << open;
                            open += 1;
                            if self.eat(b'}').is_none() {
                                self.name()?;
                                continue;
                            }
                        } else {
                            objects &= !(1 << open);
                            open += 1;
                            if self.eat(b']').is_none() {
                                continue;
                            }
                        }
                        open -= 1;
                    }
                    b'"' => {
                        self.string()?;
                    }
                    b't' => self.literal(b"true")?,
                    b'f' => self.literal(b"false")?,
                    b'n' => self.literal(b"null")?,
                    b'-' | b'0'..=b'9' => self.number()?,
                    _ => return None,
                }
                // A value was read: close the levels it ends, up to a comma that asks
                // for the next value (after the next member's name, in an object).
                loop {
                    if open == 0 {
                        return Some(());
                    }
                    self.ws();
                    let object = (objects >> (open - 1)) & 1 == 1;
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            self.ws();
                            if object {
                                self.name()?;
                            }
                            break;
                        }
                        b'}' if object => {
                            self.i += 1;
                            open -= 1;
                        }
                        b']' if !object => {
                            self.i += 1;
                            open -= 1;
                        }
                        _ => return None,
                    }
                }
            }
        }

        /// A member's name without escapes (at its `"`) and the `:` after it, as
        /// [`members`](Self::members) reads them, the scan left at the member's value.
        #[inline(always)]
        fn name(&mut self) -> Option<()> {
            if self.peek()? != b'"' || self.string()? {
                return None;
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            Some(())
        }

        /// [`value`](Self::value) read by recursion through [`members`](Self::members)
        /// and [`array`](Self::array): the reference the property tests hold it to.
        #[cfg(test)]
        pub(super) fn value_by_recursion(&mut self, depth: u32) -> Option<()> {
            match self.peek()? {
                b'{' | b'[' if depth >= DEPTH => None,
                b'{' => self.members(depth, |s, _| s.value_by_recursion(depth + 1)),
                b'[' => {
                    if depth >= DEPTH {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    if self.eat(b']').is_some() {
                        return Some(());
                    }
                    loop {
                        self.ws();
                        self.value_by_recursion(depth + 1)?;
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                return Some(());
                            }
                            _ => return None,
                        }
                    }
                }
                b'"' => self.string().map(|_| ()),
                b't' => self.literal(b"true"),
                b'f' => self.literal(b"false"),
                b'n' => self.literal(b"null"),
                b'-' | b'0'..=b'9' => self.number(),
                _ => None,
            }
        }

        /// An array (at its `[`) at `depth` levels of nesting: how many items it holds.
        fn array(&mut self, depth: u32) -> Option<usize> {
            if depth >= DEPTH {
                return None;
            }
            self.i += 1;
            self.ws();
            if self.eat(b']').is_some() {
                return Some(0);
            }
            let mut n = 0;
            loop {
                self.ws();
                self.value(depth + 1)?;
                n += 1;
                self.ws();
                match self.peek()? {
                    b',' => self.i += 1,
                    b']' => {
                        self.i += 1;
                        return Some(n);
                    }
                    _ => return None,
                }
            }
        }

        fn literal(&mut self, word: &[u8]) -> Option<()> {
            let end = self.i + word.len();
            (self.b.get(self.i..end)? == word).then(|| self.i = end)
        }

        /// `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)?, no exponent, at most
        /// [`NUMBER_MAX`] bytes.
        fn number(&mut self) -> Option<()> {
            let start = self.i;
            if self.peek()? == b'-' {
                self.i += 1;
            }
            match self.peek()? {
                b'0' => self.i += 1,
                b'1'..=b'9' => self.digits(),
                _ => return None,
            }
            if self.peek() == Some(b'.') {
                self.i += 1;
                if !self.peek()?.is_ascii_digit() {
                    return None;
                }
                self.digits();
            }
            match self.peek() {
                Some(b'e' | b'E' | b'0'..=b'9') => None,
                _ if self.i - start > NUMBER_MAX => {
                    self.long_number = true;
                    None
                }
                _ => Some(()),
            }
        }

        fn digits(&mut self) {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
        }

        /// A string (at its `"`), its escapes checked as serde_json checks them: true
        /// when it holds an escape. Inline: the scan reads most of a body as strings.
        #[inline(always)]
        fn string(&mut self) -> Option<bool> {
            self.i += 1;
            let mut escaped = false;
            loop {
                // The run up to the next quote or backslash, checked as it is read: no
                // control character (serde_json refuses them in strings), and whether it
                // leaves ASCII.
                let (end, high) = run_end(self.b, self.i);
                let Some(k) = end else {
                    // The body ends inside the string: the scan stands at its end
                    // ([`decided`](Self::decided)).
                    self.i = self.b.len();
                    return None;
                };
                let stop = *self.b.get(k)?;
                if stop < 0x20 {
                    return None;
                }
                self.non_ascii |= high;
                self.i = k;
                match stop {
                    b'"' => {
                        self.i += 1;
                        return Some(escaped);
                    }
                    _ => {
                        escaped = true;
                        self.i += 1;
                        match self.peek()? {
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                            b'u' => {
                                self.i += 1;
                                match self.hex4()? {
                                    0xD800..=0xDBFF => {
                                        self.eat(b'\\')?;
                                        self.eat(b'u')?;
                                        if !(0xDC00..=0xDFFF).contains(&self.hex4()?) {
                                            return None;
                                        }
                                    }
                                    0xDC00..=0xDFFF => return None,
                                    _ => {}
                                }
                            }
                            _ => return None,
                        }
                    }
                }
            }
        }

        fn hex4(&mut self) -> Option<u16> {
            let h = self.b.get(self.i..self.i + 4)?;
            let mut n = 0u16;
            for &c in h {
                n = n << 4 | (c as char).to_digit(16)? as u16;
            }
            self.i += 4;
            Some(n)
        }
    }
}

/// The visitors of [`request_head`]: every value is read through `deserialize_any`, as
/// `serde_json::Value` reads it, so the same documents are accepted; only `id` and
/// `method` of a top-level object are kept.
mod head {
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::Value;

    use super::RequestHead;

    pub(super) struct Doc(pub(super) RequestHead);

    impl<'de> Deserialize<'de> for Doc {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Doc, D::Error> {
            d.deserialize_any(Top)
        }
    }

    /// Any JSON value, read and dropped.
    struct Skip;

    impl<'de> Deserialize<'de> for Skip {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
            d.deserialize_any(Skip)
        }
    }

    macro_rules! scalars {
        ($out:expr) => {
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok($out)
            }
        };
    }

    impl<'de> Visitor<'de> for Skip {
        type Value = Skip;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }

        scalars!(Skip);

        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Skip, A::Error> {
            while a.next_element::<Skip>()?.is_some() {}
            Ok(Skip)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Skip, A::Error> {
            while a.next_key::<Skip>()?.is_some() {
                a.next_value::<Skip>()?;
            }
            Ok(Skip)
        }
    }

    /// A member name: `id`, `method` or another (read as a string, as `Value` reads
    /// one, without keeping it).
    enum Key {
        Id,
        Method,
        Other,
    }

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
            d.deserialize_str(KeyName)
        }
    }

    struct KeyName;

    impl Visitor<'_> for KeyName {
        type Value = Key;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a member name")
        }

        fn visit_str<E>(self, s: &str) -> Result<Key, E> {
            Ok(match s {
                "id" => Key::Id,
                "method" => Key::Method,
                _ => Key::Other,
            })
        }
    }

    /// The document: an object's `id` and `method`; anything else holds neither.
    struct Top;

    impl<'de> Visitor<'de> for Top {
        type Value = Doc;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON document")
        }

        scalars!(Doc(RequestHead::default()));

        fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Doc, A::Error> {
            Skip.visit_seq(a)?;
            Ok(Doc(RequestHead::default()))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Doc, A::Error> {
            let mut head = RequestHead::default();
            while let Some(k) = a.next_key::<Key>()? {
                match k {
                    // A later copy of a member replaces an earlier one, as in `Value`.
                    Key::Id => head.id = Some(a.next_value::<Value>()?),
                    Key::Method => {
                        head.method = a.next_value::<Value>()?.as_str().map(str::to_owned);
                    }
                    Key::Other => {
                        a.next_value::<Skip>()?;
                    }
                }
            }
            Ok(Doc(head))
        }
    }
}

/// The response of an HTTP record, if it has one.
pub fn response(record: &Record) -> Option<&HttpResponse> {
    match &record.observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Response(r) => Some(r),
            HttpOutcome::Error(_) => None,
        },
        _ => None,
    }
}

/// One list method's inventory, its items held as `I` ([`PageItems`]): by default
/// values of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ListInventory<I = Vec<Value>> {
    /// At least one page was requested.
    pub observed: bool,
    /// Items of every page, in order.
    pub items: I,
    /// Pages read.
    pub pages: u32,
    /// The last page read had no `nextCursor`.
    pub complete: bool,
    /// Why reading stopped early (error, page bound, repeated cursor, skip reason).
    pub stopped: Option<String>,
}

/// The inventory across pages, the items of each list held as `I` ([`ListInventory`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inventory<I = Vec<Value>> {
    /// `tools/list`.
    pub tools: ListInventory<I>,
    /// `resources/list`.
    pub resources: ListInventory<I>,
    /// `resources/templates/list`.
    pub resource_templates: ListInventory<I>,
    /// `prompts/list`.
    pub prompts: ListInventory<I>,
}

/// How an inventory holds the items of its pages ([`ListInventory::items`]): a
/// `Vec<Value>` holds them as values of its own; a holder that keeps the parsed pages
/// they are in can share them instead ([`inventory_of`]).
pub trait PageItems: Default {
    /// Take the items of a page read from a stdio exchange: `msgs` are its messages,
    /// `msgs[answer]` the answer, which carries a `result`, and `key` names the item
    /// array in it (none is taken when it is not an array).
    fn take_page(&mut self, msgs: Vec<Value>, answer: usize, key: &'static str);
}

impl PageItems for Vec<Value> {
    fn take_page(&mut self, mut msgs: Vec<Value>, answer: usize, key: &'static str) {
        if let Some(Value::Array(items)) = msgs
            .get_mut(answer)
            .and_then(|m| m.get_mut("result"))
            .and_then(|r| r.get_mut(key))
        {
            self.append(items);
        }
    }
}

/// The answer to request `id` among a list page's messages ([`response_to`]) when it
/// carries a `result`: its index, and whether the page was the last (its result has
/// no string `nextCursor`).
pub fn list_page(msgs: &[Value], id: &Value) -> Option<(usize, bool)> {
    let index = msgs.iter().position(|m| answers(m, id))?;
    let result = msgs[index].get("result")?;
    let last = !matches!(result.get("nextCursor"), Some(Value::String(_)));
    Some((index, last))
}

/// The key of the item array in each list result.
pub fn list_key(leg_id: &str) -> Option<&'static str> {
    list_of(leg_id).map(|x| x.key)
}

/// The inventory list whose leg is named `leg_id`: compared with the four list legs
/// alone, not looked up among every leg ([`LegId::parse`]) for each leg of each record.
fn list_of(leg_id: &str) -> Option<inventory::List> {
    inventory::LISTS
        .iter()
        .copied()
        .find(|x| x.leg.as_ref() == leg_id)
}

/// What the HTTP+SSE stream carried for one `POST` record: the JSON-RPC messages of
/// the events that answer it, and how reading ended while its answer was awaited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamAnswer {
    /// Messages of the events naming the `POST` record (`request`), in arrival order.
    pub messages: Vec<Value>,
    /// Seqs of those event records.
    pub seqs: Vec<u64>,
    /// The transport error of the record that ended the wait for its answer, if any.
    pub error: Option<crate::model::TransportError>,
    /// Seq of the `GET` record of the stream that carried them.
    pub stream: Option<u64>,
    /// Why one of its events is not read (its `data` was stored cut), naming it.
    pub cut: Option<String>,
    /// Events read for it past the bundle cap and counted, not stored (`SseEvent::unkept`):
    /// how many, and the seqs of the records that count them. None of them is a first
    /// answer to a request (those are always stored), but any may be a notification.
    pub unkept: u64,
    /// See [`StreamAnswer::unkept`].
    pub unkept_seqs: Vec<u64>,
}

/// Per `POST` record seq, what the HTTP+SSE stream carried for it (empty for bundles
/// of other transports). The one place that links stream events to the requests
/// they answer: the inventory and the grader both read answers through it.
pub fn stream_answers(records: &[Record]) -> std::collections::BTreeMap<u64, StreamAnswer> {
    let mut out: std::collections::BTreeMap<u64, StreamAnswer> = Default::default();
    for r in records {
        let Observation::SseEvent(ev) = &r.observation else {
            continue;
        };
        let Some(post) = ev.request else { continue };
        let entry = out.entry(post).or_default();
        entry.stream = Some(ev.stream);
        if let Some(e) = &ev.error {
            entry.error = Some(e.clone());
            continue;
        }
        if let Some(u) = &ev.unkept {
            // Counted events: not one event stored cut (what `data_length` tells a
            // reader that does not know `unkept`), and never a first answer.
            entry.unkept += u.events;
            entry.unkept_seqs.push(r.seq);
            continue;
        }
        entry.seqs.push(r.seq);
        if let Some(n) = ev.data_length {
            entry.cut.get_or_insert(format!(
                "event record {} stored {} of its {n} bytes of data",
                r.seq,
                ev.data.len()
            ));
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
            match v {
                Value::Array(a) => entry
                    .messages
                    .extend(a.into_iter().filter(Value::is_object)),
                v @ Value::Object(_) => entry.messages.push(v),
                _ => {}
            }
        }
    }
    out
}

/// The JSON-RPC messages answering an HTTP record: those of its body (a whole one
/// only) and, on HTTP+SSE, those the stream carried for it (`stream`).
pub fn answer_messages(resp: &HttpResponse, stream: Option<&StreamAnswer>) -> Vec<Value> {
    let mut msgs = if body_cut(&resp.body).is_none() {
        jsonrpc_messages(resp)
    } else {
        Vec::new()
    };
    if let Some(s) = stream {
        msgs.extend(s.messages.iter().cloned());
    }
    msgs
}

/// Derive the inventory from the inventory legs' records.
pub fn inventory(records: &[Record]) -> Inventory {
    let streamed = stream_answers(records);
    inventory_of(records, &mut |k, key, items: &mut Vec<Value>| {
        let r = &records[k];
        let Observation::Http(x) = &r.observation else {
            return None;
        };
        let HttpOutcome::Response(resp) = &x.outcome else {
            return None;
        };
        let msgs = answer_messages(resp, streamed.get(&r.seq));
        let id = request_id(&x.request.body.bytes).unwrap_or(Value::Null);
        let (answer, last) = list_page(&msgs, &id)?;
        items.take_page(msgs, answer, key);
        Some(last)
    })
}

/// How [`inventory_of`] reads a list page sent over HTTP: given the record's index, the
/// key of the list's item array and the list's items so far, it finds the answer to
/// the request among the page's JSON-RPC messages ([`list_page`] of [`answer_messages`],
/// with the HTTP+SSE stream's for that request, and of [`request_id`], `null` when it
/// has none: the reading [`inventory()`] makes itself), adds its items and returns
/// whether the page was the last; `None` when no answer carries a `result`.
pub type PageReader<'a, I> = dyn FnMut(usize, &'static str, &mut I) -> Option<bool> + 'a;

/// [`inventory()`], with the items held as `I` and each list page sent over HTTP read
/// by `read`: a reader that keeps what it parsed (the grader's memo of parsed bodies)
/// parses each page once for the inventory and every check, and can share the items
/// with it rather than copy them.
pub fn inventory_of<I: PageItems>(
    records: &[Record],
    read: &mut PageReader<'_, I>,
) -> Inventory<I> {
    let mut inv = Inventory::<I>::default();
    for (k, r) in records.iter().enumerate() {
        for l in &r.legs {
            let Some((key, list)) = list_of(l).and_then(|x| Some((x.key, inv.list_mut(x.leg)?)))
            else {
                continue;
            };
            list.observed = true;
            match &r.observation {
                Observation::Skipped { reason } => list.stopped = Some(reason.clone()),
                Observation::Stdio(x) => {
                    let id = x
                        .sent
                        .as_ref()
                        .and_then(|b| request_id(b))
                        .unwrap_or(Value::Null);
                    let msgs = stdio_messages(x);
                    match list_page(&msgs, &id) {
                        Some((answer, last)) => {
                            list.pages += 1;
                            list.items.take_page(msgs, answer, key);
                            list.complete = last;
                        }
                        None => {
                            list.stopped = Some(match &x.error {
                                Some(e) => format!("page {} failed: {e}", list.pages + 1),
                                None => {
                                    format!("page {} answered without a result", list.pages + 1)
                                }
                            });
                            list.complete = false;
                        }
                    }
                }
                Observation::Http(x) => match &x.outcome {
                    HttpOutcome::Error(e) => {
                        list.stopped = Some(format!("page {} failed: {e}", list.pages + 1));
                        list.complete = false;
                    }
                    HttpOutcome::Response(resp) => {
                        if let Some(cut) = body_cut(&resp.body) {
                            list.stopped = Some(format!(
                                "page {} answered HTTP {} but {cut}",
                                list.pages + 1,
                                resp.status
                            ));
                            list.complete = false;
                            continue;
                        }
                        let Some(last) = read(k, key, &mut list.items) else {
                            list.stopped = Some(format!(
                                "page {} answered HTTP {} without a result",
                                list.pages + 1,
                                resp.status
                            ));
                            list.complete = false;
                            continue;
                        };
                        list.pages += 1;
                        list.complete = last;
                    }
                },
                _ => {}
            }
        }
    }
    inv
}

impl<I> Inventory<I> {
    /// The list of leg `l`, when it is one of [`inventory::LISTS`]' legs.
    fn list_mut(&mut self, l: LegId) -> Option<&mut ListInventory<I>> {
        match l {
            leg::INVENTORY_TOOLS => Some(&mut self.tools),
            leg::INVENTORY_RESOURCES => Some(&mut self.resources),
            leg::INVENTORY_RESOURCE_TEMPLATES => Some(&mut self.resource_templates),
            leg::INVENTORY_PROMPTS => Some(&mut self.prompts),
            _ => None,
        }
    }
}

/// The revision an `initialize` result agreed to: `Ok` when it is a handshake revision
/// this tool speaks, else `Err` with what the server echoed.
pub fn agreed_revision(result: &Value) -> Result<String, String> {
    let echoed = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if crate::vocab::HANDSHAKE_REVISIONS.contains(&echoed.as_str()) {
        Ok(echoed)
    } else {
        Err(echoed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What [`list_key`] must equal: the leg looked up among every leg, then among the
    /// lists.
    fn list_key_by_table(leg_id: &str) -> Option<&'static str> {
        let l = LegId::parse(leg_id)?;
        inventory::LISTS.iter().find(|x| x.leg == l).map(|x| x.key)
    }

    #[test]
    fn a_list_leg_is_read_as_the_leg_table_reads_it() {
        let mut names: Vec<String> = leg::ALL.iter().map(|l| l.to_string()).collect();
        names.extend(leg::ALL.iter().map(|l| l.on_revision("2025-11-25")));
        names.extend(
            [
                "",
                "inventory.",
                "inventory.tool",
                "inventory.toolsx",
                "Inventory.tools",
            ]
            .map(String::from),
        );
        for n in &names {
            assert_eq!(list_key(n), list_key_by_table(n), "{n}");
        }
        let lists = names.iter().filter(|n| list_key(n).is_some()).count();
        assert_eq!(lists, inventory::LISTS.len());
    }

    proptest! {
        #[test]
        fn any_name_is_a_list_leg_only_as_the_leg_table_says(n in "[a-z.@_-]{0,30}") {
            prop_assert_eq!(list_key(&n), list_key_by_table(&n));
        }
    }

    #[test]
    fn a_body_checked_as_utf8_first_parses_as_the_bytes_do() {
        let by_bytes = |body: &[u8]| -> Vec<Value> {
            match serde_json::from_slice::<Value>(body) {
                Ok(Value::Array(a)) => a.into_iter().filter(Value::is_object).collect(),
                Ok(v @ Value::Object(_)) => vec![v],
                _ => Vec::new(),
            }
        };
        for body in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a\u00e9\n"}]}}"#[..],
            br#"[{"id":1,"result":{}},2,{"method":"m"}]"#,
            b"{\"id\":1,\"result\":\"\xc3\xa9\"}",
            b"{\"id\":1,\"result\":\"\xff\"}",
            b"{\"id\":1,\"result\":\"\xed\xa0\x80\"}",
            b"{\"id\":1}\xff",
            br#"{"id":1,"result":"\ud800"}"#,
            br#"{"id":1,"result":"\uD83D\uDE00"}"#,
            br#"{"id":1,"result":"a	b"}"#,
            br#"{"id":1,"result":1e400}"#,
            b"",
            b"null",
        ] {
            assert_eq!(
                messages_in(None, body),
                by_bytes(body),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    /// What [`response_to`] must equal: each key looked up.
    fn response_by_lookup<'a>(messages: &'a [Value], id: &Value) -> Option<&'a Value> {
        messages.iter().find(|m| {
            m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
        })
    }

    #[test]
    fn the_answer_read_in_one_pass_is_the_one_looked_up() {
        let msgs: Vec<Value> = [
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"id":1}}"#,
            r#"{"id":1}"#,
            r#"{"id":2,"error":{"code":-32601}}"#,
            r#"{"result":{},"id":"1"}"#,
            r#"{"id":1,"id":3,"result":null}"#,
            r#"{"id":null,"error":null}"#,
            r#"{"id":1.0,"result":[]}"#,
            r#"[{"id":1,"result":{}}]"#,
            r#""id""#,
            r#"{"id":1,"result":{"tools":[]},"result":{"nextCursor":"c"}}"#,
        ]
        .iter()
        .map(|t| serde_json::from_str(t).expect("json"))
        .collect();
        let ids = [
            serde_json::json!(1),
            serde_json::json!(2),
            serde_json::json!(3),
            serde_json::json!("1"),
            serde_json::json!(null),
            serde_json::json!(1.0),
            serde_json::json!([]),
        ];
        for start in 0..msgs.len() {
            for id in &ids {
                let tail = &msgs[start..];
                let got = response_to(tail, id);
                assert_eq!(got, response_by_lookup(tail, id), "{id} from {start}");
                let page = got.and_then(|m| {
                    let result = m.get("result")?;
                    let index = tail.iter().position(|x| std::ptr::eq(x, m))?;
                    Some((
                        index,
                        !matches!(result.get("nextCursor"), Some(Value::String(_))),
                    ))
                });
                assert_eq!(list_page(tail, id), page, "{id} from {start}");
            }
        }
    }

    /// What [`request_head`] must equal: the body parsed whole, `id` and `method` read.
    fn by_value(body: &[u8]) -> Option<RequestHead> {
        let v = serde_json::from_slice::<Value>(body).ok()?;
        Some(RequestHead {
            id: v.get("id").cloned(),
            method: v.get("method").and_then(Value::as_str).map(str::to_owned),
        })
    }

    #[test]
    fn the_head_of_a_request_is_what_the_parsed_body_says() {
        let deep = |n: usize| {
            let mut b = br#"{"id":1,"params":"#.to_vec();
            b.extend(std::iter::repeat_n(b'[', n));
            b.extend(std::iter::repeat_n(b']', n));
            b.push(b'}');
            b
        };
        for body in [
            &br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#[..],
            br#"{"id":1,"id":"two","method":"a","method":5}"#,
            br#"{"method":"a","method":"b"}"#,
            br#"[{"id":1}]"#,
            br#""id""#,
            br#"{"id":null}"#,
            br#"{"id":1} x"#,
            br#"{"id":1,"params":{"n":1e400}}"#,
            br#"{"id":1,"params":{"n":123456789012345678901234567890}}"#,
            br#"{"id":1,"params":"\ud800"}"#,
            br#"{"id":1,"params":"\udc00"}"#,
            br#"{"id":1,"params":"\udc00\ud800"}"#,
            br#"{"id":1,"params":"\ud800\u0041"}"#,
            br#"{"id":1,"params":"\ud800\n"}"#,
            br#"{"id":1,"params":"\uD83D\uDE00\u0041\/\b"}"#,
            br#"{"id":"\uD83D\uDE00","method":"\u0074ools/list"}"#,
            br#"{"id":1,"params":"\u12"}"#,
            br#"{"id":1,"params":[01]}"#,
            br#"{"id":1,"params":[-]}"#,
            br#"{"id":1,"params":[1.]}"#,
            br#"{"id":1,"params":[1.5e2]}"#,
            br#"{"id":-0,"method":null}"#,
            br#"{"id":1,"params":"a	b"}"#,
            br#"{"id":1,}"#,
            br#"{"id" 1}"#,
            br#"{"id":1]"#,
            br#"{"id":tru}"#,
            br#"{"id":[1,]}"#,
            br#"{"id":1,"params":"\u00e9\n"}"#,
            b"{\"id\":1,\"params\":\"\xff\"}",
            b"{\"id\":1,\"p\xc3\xa9\":2}",
            br#"{"id":1,"params":{"a":[1,{"b":null}],"a":true}}"#,
            b"",
            b"  ",
        ] {
            assert_eq!(
                request_head(body),
                by_value(body),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // Nesting: serde_json's limit of 128 levels refuses the same bodies both ways.
        for n in [126, 127, 128, 200] {
            assert_eq!(request_head(&deep(n)), by_value(&deep(n)), "{n}");
        }
        assert!(request_head(&deep(126)).is_some() && request_head(&deep(200)).is_none());
    }

    /// JSON text, with the members a request's head is read from, repeated at times.
    fn json() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|x| format!("{x:e}")),
            any::<f64>().prop_map(|x| format!("{x}")),
            Just("1e400".to_string()),
            Just("-0".to_string()),
            Just("-0.0".to_string()),
            Just("18446744073709551616".to_string()),
            "-?[0-9]{1,45}(\\.[0-9]{0,3})?".prop_map(|s| s),
            "[a-z\\\\\"é\u{1}]{0,6}".prop_map(|s| format!("{s:?}")),
            Just(r#""\ud800""#.to_string()),
            // Escapes as a sender may write them: lone, paired and reversed surrogates,
            // upper- and lower-case hex, short or bad escapes.
            prop::sample::select(vec![
                r"\ud800",
                r"\udc00",
                r"\uD83D\uDE00",
                r"\ud83d\ude00",
                r"\udc00\ud800",
                r"\ud800\u0041",
                r"\ud800\n",
                r"\uDBFF\uDFFF",
                r"\u00e9",
                r"\u12",
                r"\x",
                r"\/",
                r"\b",
                "é",
                "\u{7f}",
            ])
            .prop_map(|p| format!("\"a{p}\"")),
            // Nesting around serde_json's limit.
            (100usize..140).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n))),
            // Nesting around the scan's own limit.
            (58usize..70).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n))),
        ];
        leaf.prop_recursive(5, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(
                    (
                        prop::sample::select(vec![
                            "id",
                            "method",
                            "params",
                            "x",
                            "i\\u0064",
                            "m\\u0065thod",
                            "id ",
                            "é",
                            "_meta",
                            "result"
                        ]),
                        inner
                    ),
                    0..6
                )
                .prop_map(|m| {
                    let members: Vec<String> =
                        m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    /// `body` whole, cut at `cut`, and with the byte at `flip.0` XORed with `flip.1`: the
    /// forms every scan is held to serde_json on.
    fn forms(
        body: &[u8],
        cut: prop::sample::Index,
        flip: (prop::sample::Index, u8),
    ) -> [Vec<u8>; 3] {
        let short = body[..cut.index(body.len() + 1)].to_vec();
        let mut flipped = body.to_vec();
        if !flipped.is_empty() {
            let i = flip.0.index(flipped.len());
            flipped[i] ^= flip.1;
        }
        [body.to_vec(), short, flipped]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn the_head_parse_agrees_with_the_value_parse(
            doc in json(),
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            for b in &forms(doc.as_bytes(), cut, flip) {
                prop_assert_eq!(request_head(b), by_value(b));
                // Whenever the scan decides alone, it decides as serde_json does.
                if let Some(h) = scan::head(b) {
                    prop_assert_eq!(Some(h), by_value(b));
                }
                if let Some(h) = scan::head_decided(b) {
                    prop_assert_eq!(h, by_value(b));
                }
            }
        }

        #[test]
        fn the_head_of_random_bytes_is_what_serde_json_says(
            body in prop::collection::vec(
                prop_oneof![
                    any::<u8>(),
                    prop::sample::select(b"{}[],:\"\\ \t\n-0123456789.eEtrufalsniduo\xc3\xa9\xff".to_vec()),
                ],
                0..40,
            ),
        ) {
            prop_assert_eq!(request_head(&body), by_value(&body));
            if let Some(h) = scan::head_decided(&body) {
                prop_assert_eq!(h, by_value(&body));
            }
            if let Some(p) = scan::params_decided(&body) {
                prop_assert_eq!(p, params_by_value(&body));
            }
        }

        #[test]
        fn a_value_is_read_as_the_recursive_reading_reads_it(
            doc in json(),
            depth in 0u32..70,
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            for b in &forms(doc.as_bytes(), cut, flip) {
                let (mut a, mut r) = (scan::Scan::new(b), scan::Scan::new(b));
                let read = (a.value(depth), a.i, a.non_ascii);
                let by_recursion = (r.value_by_recursion(depth), r.i, r.non_ascii);
                prop_assert_eq!(read.0.is_some(), by_recursion.0.is_some());
                if read.0.is_some() {
                    prop_assert_eq!(read, by_recursion);
                }
            }
        }

        #[test]
        fn a_run_ends_where_a_byte_by_byte_reading_ends_it(
            run in prop::collection::vec(
                prop_oneof![
                    4 => 0x20_u8..0x7F,
                    1 => prop::sample::select(b"\"\\\x00\x1f\x20\x7f\x80\xa0\xff\xe9".to_vec()),
                    1 => any::<u8>(),
                ],
                0..40,
            ),
            from in any::<prop::sample::Index>(),
        ) {
            for from in [0, from.index(run.len() + 1)] {
                let end = run[from..]
                    .iter()
                    .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                    .map(|k| from + k);
                let (got, high) = scan::run_end(&run, from);
                prop_assert_eq!(got, end);
                // Every byte before the end is read; up to seven after it may be.
                let upto = end.unwrap_or(run.len());
                let over = |r: std::ops::Range<usize>| run[r].iter().any(|&c| c > 0x7F);
                if over(from..upto) {
                    prop_assert!(high);
                }
                if high {
                    prop_assert!(over(from..(upto + 8).min(run.len())));
                }
            }
        }

        #[test]
        fn a_request_with_a_long_string_is_read_as_serde_json_reads_it(
            pad in prop::collection::vec(
                prop_oneof![
                    8 => Just("X"),
                    1 => prop::sample::select(vec!["\\\\", "\\\"", "\\u00e9", "é", "\u{1}", "\t", "\u{7f}"]),
                ],
                0..120,
            ),
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            // Strings of any length, across the words the scan reads them in,
            // with escapes, control characters and non-ASCII bytes anywhere.
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":24,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
                pad.concat()
            );
            for b in &forms(body.as_bytes(), cut, flip) {
                prop_assert_eq!(request_head(b), by_value(b));
                prop_assert_eq!(request_params(b), params_by_value(b));
                let mut heads = Vec::new();
                if scan::messages(b, &mut heads).is_some() {
                    prop_assert_eq!(heads, heads_by_value(None, b));
                }
            }
        }

        #[test]
        fn a_request_with_duplicate_members_keeps_the_last(
            ids in prop::collection::vec(json(), 1..4),
            methods in prop::collection::vec(json(), 0..3),
        ) {
            let mut members: Vec<String> = ids.iter().map(|v| format!("\"id\":{v}")).collect();
            members.extend(methods.iter().map(|v| format!("\"method\":{v}")));
            members.push(r#""method":"tools/call""#.to_string());
            members.rotate_left(ids.len() / 2);
            let body = format!("{{{}}}", members.join(",")).into_bytes();
            prop_assert_eq!(request_head(&body), by_value(&body));
        }
    }

    /// What [`message_heads_in`] must equal when it tells: the heads of the messages.
    fn heads_by_value(media: Option<&str>, body: &[u8]) -> Vec<MessageHead> {
        messages_in(media, body)
            .iter()
            .map(MessageHead::of)
            .collect()
    }

    /// A result object whose members are arrays (of several copies, escaped names,
    /// nested, non-ASCII names), `isError` of any kind, `_meta`, and anything else.
    fn result_object() -> impl Strategy<Value = String> {
        let name = prop_oneof![
            Just("tools"),
            Just("contents"),
            Just("isError"),
            Just("_meta"),
            Just("protocolVersion"),
            Just("supportedVersions"),
            Just(r"t\u006fols"),
            Just("é"),
        ];
        let value = prop_oneof![
            Just("true".to_string()),
            Just("false".to_string()),
            Just("[]".to_string()),
            Just(r#" [ 1 , [2, 3] , {"a":[4]} ] "#.to_string()),
            prop::collection::vec(json(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            json(),
            meta_object(),
        ];
        prop::collection::vec((name, value), 0..6).prop_map(|m| {
            let m: Vec<String> = m.iter().map(|(k, v)| format!(r#""{k}":{v}"#)).collect();
            format!("{{{}}}", m.join(","))
        })
    }

    /// A result's `_meta` as servers write it (and not): the server's identity as an
    /// object with members or without, of another kind, repeated, beside other members.
    fn meta_object() -> impl Strategy<Value = String> {
        let info = prop_oneof![
            Just(r#"{"name":"s","version":"1"}"#.to_string()),
            Just("{}".to_string()),
            Just(r#" { "name" : "s" } "#.to_string()),
            Just(r#"{"name":"a","name":"b"}"#.to_string()),
            json(),
        ];
        let member = prop_oneof![
            info.prop_map(|v| format!(r#""io.modelcontextprotocol/serverInfo":{v}"#)),
            json().prop_map(|v| format!(r#""io.modelcontextprotocol/serverInfoX":{v}"#)),
            json().prop_map(|v| format!(r#""x":{v}"#)),
        ];
        prop::collection::vec(member, 0..4).prop_map(|m| format!("{{{}}}", m.join(",")))
    }

    /// A message's `error` as servers write it (and not): `code`, `message` and `data`
    /// of any kind, repeated, among other members; or no object at all.
    fn error_object() -> impl Strategy<Value = String> {
        let member = prop_oneof![
            prop_oneof![
                Just("-32601".to_string()),
                Just("-32600.0".to_string()),
                Just("-0".to_string()),
                Just("18446744073709551615".to_string()),
                Just(r#""-32601""#.to_string()),
                json(),
            ]
            .prop_map(|v| format!(r#""code":{v}"#)),
            prop_oneof![
                Just(r#""Method not found""#.to_string()),
                Just(r#""M\u00e9thode \"x\"""#.to_string()),
                json(),
            ]
            .prop_map(|v| format!(r#""message":{v}"#)),
            prop_oneof![
                Just(r#"{"supported":["2026-07-28"],"requested":"2024-01-01"}"#.to_string()),
                json(),
            ]
            .prop_map(|v| format!(r#""data":{v}"#)),
            json().prop_map(|v| format!(r#""other":{v}"#)),
        ];
        prop_oneof![
            4 => prop::collection::vec(member, 0..5).prop_map(|m| format!("{{{}}}", m.join(","))),
            1 => json(),
        ]
    }

    /// JSON-RPC messages as servers write them (and not), alone or in a batch.
    fn messages_doc() -> impl Strategy<Value = String> {
        let member = prop_oneof![
            json().prop_map(|v| format!(r#""id":{v}"#)),
            json().prop_map(|v| format!(r#""result":{v}"#)),
            Just(r#""result":null"#.to_string()),
            Just(r#""result": null "#.to_string()),
            json().prop_map(|v| format!(r#""error":{v}"#)),
            error_object().prop_map(|v| format!(r#""error":{v}"#)),
            Just(r#""error":{"code":-32601,"message":"M\u00e9thode"}"#.to_string()),
            json().prop_map(|v| format!(r#""jsonrpc":{v}"#)),
            json().prop_map(|v| format!(r#""r\u0065sult":{v}"#)),
            result_object().prop_map(|r| format!(r#""result":{r}"#)),
        ];
        let message =
            prop::collection::vec(member, 0..5).prop_map(|m| format!("{{{}}}", m.join(",")));
        prop_oneof![
            message.clone(),
            prop::collection::vec(prop_oneof![message, json()], 0..4)
                .prop_map(|v| format!(" [{}] ", v.join(","))),
            json(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn the_heads_of_messages_are_those_of_the_parsed_messages(
            docs in prop::collection::vec(messages_doc(), 1..3),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            let body = docs[0].clone().into_bytes();
            for b in [body.clone(), {
                let mut f = body.clone();
                if !f.is_empty() {
                    let i = flip.0.index(f.len());
                    f[i] ^= flip.1;
                }
                f
            }] {
                if let Some(h) = message_heads_in(Some("application/json"), &b) {
                    prop_assert_eq!(h, heads_by_value(Some("application/json"), &b));
                }
            }
            let sse: String = docs.iter().map(|d| format!("event: message\ndata: {d}\n\n")).collect();
            if let Some(h) = message_heads_in(Some("text/event-stream"), sse.as_bytes()) {
                prop_assert_eq!(h, heads_by_value(Some("text/event-stream"), sse.as_bytes()));
            }
        }
    }

    #[test]
    fn the_scan_reads_ordinary_answers_itself() {
        for (media, body) in [
            (
                None,
                &br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{}}]}}"#
                    [..],
            ),
            (
                None,
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}"#,
            ),
            (
                None,
                br#"[{"id":1,"result":null},{"method":"notifications/x"},2]"#,
            ),
            (
                None,
                br#"{"id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"tools":[]}}"#,
            ),
            (
                None,
                br#"{"id":3,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2024-01-01"}}}"#,
            ),
            (None, br#""not a message""#),
            (
                Some("text/event-stream"),
                b"event: message\ndata: {\"id\":1,\"result\":{}}\n\n",
            ),
        ] {
            let h = message_heads_in(media, body);
            assert!(h.is_some(), "{}", String::from_utf8_lossy(body));
            assert_eq!(
                h,
                Some(heads_by_value(media, body)),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        let h = message_heads_in(
            None,
            br#"{"id":1,"result":null,"result":{"a":1},"error":{"code":1}}"#,
        );
        assert_eq!(
            h.as_deref().map(|h| (h[0].result, h[0].is_answer())),
            Some((Some(false), true))
        );
        // The outline of a result: its arrays' lengths (the last copy of a member) and
        // a true `isError`, as the parsed result has them.
        for body in [
            &br#"{"id":1,"result":{"tools":[1,[2,3]],"tools":[{}],"contents":[],"x":{"y":[1]},"isError":true}}"#[..],
            br#"{"id":1,"result":{"tools":[1],"tools":{"n":2},"isError":true,"isError":"true"}}"#,
        ] {
            let h = message_heads_in(None, body).expect("the scan reads it");
            assert_eq!(h, heads_by_value(None, body), "{}", String::from_utf8_lossy(body));
        }
        let h = message_heads_in(
            None,
            br#"{"id":1,"result":{"tools":[1,[2,3]],"tools":[{}],"contents":[],"x":{"y":[1]},"isError":true}}"#,
        )
        .expect("the scan reads it");
        assert_eq!(
            h[0].result_arrays,
            vec![("contents".to_string(), 0), ("tools".to_string(), 1)]
        );
        assert_eq!(h[0].result_array_len("tools"), Some(1));
        assert_eq!(h[0].result_array_len("x"), None);
        assert!(h[0].result_is_error);
        // Whether a result names its server, and an error's members, as read.
        let h = message_heads_in(
            None,
            br#"[{"id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}},{"id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}}}},{"id":3,"error":{"code":-32601,"message":"m","code":"x"}},{"id":4,"error":"no object"}]"#,
        )
        .expect("the scan reads it");
        assert!(h[0].result_names_server && !h[1].result_names_server);
        let e = h[2].error.as_ref().expect("an error");
        assert!(e.object && e.code_i64().is_none() && e.message_str() == Some("m"));
        assert_eq!(e.code, Some(Value::from("x")));
        let e = h[3].error.as_ref().expect("an error");
        assert!(!e.object && e.message.is_none() && h[3].is_answer());
        // A body it cannot tell of: left to be read whole.
        assert_eq!(message_heads_in(None, br#"{"id":1,"result":1e5}"#), None);
        assert_eq!(message_heads_in(None, b"not JSON"), None);
        // A body that starts no JSON value: no message, told without a parse.
        assert_eq!(message_heads_in(None, b"<html>"), Some(Vec::new()));
    }

    /// What the scan builds of a value (an answer's `id`, `error`, a result's `_meta`)
    /// is what serde_json parses, number kinds, duplicate members and their order
    /// included; a body that starts no JSON value holds no message and no request head.
    #[test]
    fn values_built_by_the_scan_are_serde_jsons() {
        for doc in [
            &b"0"[..],
            b"-0",
            b"-0.0",
            b"7",
            b"-7",
            b"18446744073709551615",
            b"18446744073709551616",
            b"-9223372036854775808",
            b"-9223372036854775809",
            b"1.5",
            b"-12.250",
            br#""a\u00e9\n""#,
            "\"é\"".as_bytes(),
            br#"{"code":-32601,"message":"M\u00e9thode","data":{"b":[1,{"c":null}],"a":true}}"#,
            br#"{"b":1,"a":2,"b":3}"#,
            br#"{"a":{"x":1},"a":[2]}"#,
            br#" [ ] "#,
            br#"{}"#,
        ] {
            let v = scan::build(doc);
            assert!(v.is_some(), "{}", String::from_utf8_lossy(doc));
            assert_eq!(
                v,
                serde_json::from_slice::<Value>(doc).ok(),
                "{}",
                String::from_utf8_lossy(doc)
            );
            if let Some(Value::Object(m)) = &v {
                let keys: Vec<&String> = m.keys().collect();
                let want = serde_json::from_slice::<Value>(doc).expect("parses");
                let want: Vec<&String> = want.as_object().expect("object").keys().collect();
                assert_eq!(keys, want);
            }
        }
        for body in [
            &b""[..],
            b"  \r\n",
            b"Invalid Origin header",
            b"<html>",
            b"\xef\xbb\xbf{}",
        ] {
            assert_eq!(message_heads_in(None, body), Some(Vec::new()));
            assert_eq!(heads_by_value(None, body), Vec::new());
            assert_eq!(request_head(body), None);
            assert_eq!(by_value(body), None);
        }
        let sse = b"event: message\ndata: Not JSON\n\ndata: {\"id\":1,\"result\":{}}\n\n";
        assert_eq!(
            message_heads_in(Some("text/event-stream"), sse),
            Some(heads_by_value(Some("text/event-stream"), sse))
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn a_value_the_scan_builds_is_the_one_serde_json_parses(
            doc in json(),
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            for b in &forms(doc.as_bytes(), cut, flip) {
                if let Some(v) = scan::build(b) {
                    let want = serde_json::from_slice::<Value>(b).ok();
                    prop_assert_eq!(Some(&v), want.as_ref());
                    // The members in the same order (`Value`'s equality ignores it).
                    prop_assert_eq!(v.to_string(), want.map(|w| w.to_string()).unwrap_or_default());
                }
                if !scan::may_be_json(b) {
                    prop_assert!(serde_json::from_slice::<Value>(b).is_err());
                }
            }
        }
    }

    /// What [`request_params`] must equal: the body parsed whole, its params read.
    fn params_by_value(body: &[u8]) -> Option<RequestParams> {
        serde_json::from_slice::<Value>(body)
            .ok()
            .map(|v| RequestParams::of(&v))
    }

    /// A request body as the collector sends them, and not: `params` with the members
    /// the live checks read, of any kind, repeated, with escaped names, or no object.
    fn request_doc() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec![
            "name",
            "uri",
            "protocolVersion",
            "arguments",
            "_meta",
            "x",
            r"n\u0061me",
            "é",
        ]);
        let arguments = prop::collection::vec(
            (
                prop::sample::select(vec!["text", "path", "a", "text", r"p\u0061th", "é"]),
                json(),
            ),
            0..4,
        )
        .prop_map(|m| {
            let m: Vec<String> = m.iter().map(|(k, v)| format!(r#""{k}":{v}"#)).collect();
            format!("{{{}}}", m.join(","))
        });
        let value = prop_oneof![
            json(),
            arguments,
            Just(r#""file:///etc/passwd""#.to_string()),
            Just(r#""a\u00e9\"b""#.to_string()),
        ];
        let params = prop::collection::vec((name, value), 0..6).prop_map(|m| {
            let m: Vec<String> = m.iter().map(|(k, v)| format!(r#""{k}":{v}"#)).collect();
            format!("{{{}}}", m.join(","))
        });
        let top = prop::collection::vec(
            prop_oneof![
                params.prop_map(|p| format!(r#""params":{p}"#)),
                json().prop_map(|v| format!(r#""params":{v}"#)),
                json().prop_map(|v| format!(r#""id":{v}"#)),
                Just(r#""method":"tools/call""#.to_string()),
                Just(r#""jsonrpc":"2.0""#.to_string()),
            ],
            0..5,
        )
        .prop_map(|m| format!("{{{}}}", m.join(",")));
        prop_oneof![4 => top, 1 => json()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn the_params_of_a_request_are_those_of_the_parsed_body(
            doc in request_doc(),
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            for b in &forms(doc.as_bytes(), cut, flip) {
                prop_assert_eq!(request_params(b), params_by_value(b));
                // Whenever the scan decides alone, it decides as serde_json does.
                if let Some(p) = scan::params(b) {
                    prop_assert_eq!(Some(p), params_by_value(b));
                }
                if let Some(p) = scan::params_decided(b) {
                    prop_assert_eq!(p, params_by_value(b));
                }
            }
        }
    }

    #[test]
    fn the_scan_reads_the_params_of_ordinary_requests_itself() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"b":1,"a":{"c":[]},"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#[..],
            br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
            br#"{"id":1,"method":"resources/read","params":{"uri":"file:///a/..%2f..%2fetc/passwd"}}"#,
            br#"{"params":{"name":"a","uri":"b","arguments":{}},"params":{"name":5}}"#,
            br#"{"params":{"arguments":{"x":1},"arguments":[1]}}"#,
            br#"{"params":[1,2]}"#,
            br#"[{"params":{"name":"a"}}]"#,
        ] {
            let p = scan::params(body);
            assert!(p.is_some(), "{}", String::from_utf8_lossy(body));
            assert_eq!(p, params_by_value(body), "{}", String::from_utf8_lossy(body));
        }
        let p = scan::params(br#"{"params":{"name":"echo","arguments":{"b":1,"a":2,"b":3}}}"#)
            .expect("the scan reads it");
        assert_eq!(p.name.as_deref(), Some("echo"));
        assert_eq!(p.arguments, Some(vec!["b".to_string(), "a".to_string()]));
        assert!(p.has_argument("a") && !p.has_argument("c"));
        // Escaped names and exponents are read from the parsed body.
        for body in [
            &br#"{"params":{"n\u0061me":"x"}}"#[..],
            br#"{"params":{"name":"x","n":1e3}}"#,
        ] {
            assert_eq!(scan::params(body), None);
            assert_eq!(request_params(body), params_by_value(body));
        }
        assert_eq!(request_params(b""), None);
    }

    /// A body the scan refuses itself (it ends inside the document, has bytes after it
    /// or is not UTF-8) is one serde_json refuses: every prefix of hostile requests
    /// (duplicate members, escapes, non-UTF-8, nesting past the scan's limit and past
    /// serde_json's, long and exponent numbers), each also with a byte after it, is
    /// read alike by the scan when it decides, by [`request_head`] and
    /// [`request_params`] and by serde_json.
    #[test]
    fn a_body_the_scan_refuses_is_one_serde_json_refuses() {
        let deep = |n: usize| {
            format!(
                r#"{{"id":1,"params":{{"name":{}"x"{}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let mut docs: Vec<Vec<u8>> = vec![
            br#"{"jsonrpc":"2.0","id":24,"method":"tools/list","params":{"_meta":{"a":"b"},"pad":"XXXXXXXXXXXXXXXX"}}"#.to_vec(),
            br#"{"id":1,"id":"two","method":"a","method":5,"params":{"name":"a","name":"b","arguments":{"x":1,"x":2}}}"#.to_vec(),
            br#"{"i\u0064":"\uD83D\uDE00","method":"\u0074ools/call","params":{"n\u0061me":"\"q\\","uri":"a\/b\n"}}"#.to_vec(),
            br#"{"id":1,"params":{"name":"\ud800","uri":"\udc00\ud800","arguments":{"\u00e9":1}}}"#.to_vec(),
            b"{\"id\":\"\xc3\xa9\",\"method\":\"\xff\",\"params\":{\"name\":\"\xe2\x82\"}}".to_vec(),
            br#"{"id":-0,"params":{"protocolVersion":123456789012345678901234567890123456789012345,"n":1.5e3,"m":-1.25}}"#.to_vec(),
            br#"123456789012345678901234567890123456789012345"#.to_vec(),
            br#"[{"id":1},"a",true,null,false,-1.5]"#.to_vec(),
            deep(62).into_bytes(),
            deep(70).into_bytes(),
            deep(126).into_bytes(),
            deep(130).into_bytes(),
        ];
        for extra in [&b" x"[..], b"}", b"\xff", b"\t\n "] {
            let with: Vec<u8> = [&docs[0][..], extra].concat();
            docs.push(with);
        }
        let mut decided = 0;
        for doc in &docs {
            for cut in 0..=doc.len() {
                let b = &doc[..cut];
                let shown = String::from_utf8_lossy(b);
                if let Some(h) = scan::head_decided(b) {
                    decided += 1;
                    assert_eq!(h, by_value(b), "{shown}");
                }
                if let Some(p) = scan::params_decided(b) {
                    assert_eq!(p, params_by_value(b), "{shown}");
                }
                assert_eq!(request_head(b), by_value(b), "{shown}");
                assert_eq!(request_params(b), params_by_value(b), "{shown}");
            }
        }
        // The scan decides of a request stored cut inside a string, or after a member.
        for cut in [
            &br#"{"id":1,"params":{"pad":"XXXX"#[..],
            br#"{"id":1,"#,
            br#"{"i\u0064""#,
        ] {
            assert_eq!(scan::head_decided(cut), Some(None));
            assert_eq!(scan::params_decided(cut), Some(None));
        }
        // Not of a number that may go on, too long for it, at the end of the body.
        assert_eq!(scan::head_decided(&docs[6]), None);
        assert!(decided > 1000, "{decided}");
    }

    #[test]
    fn the_scan_reads_ordinary_requests_itself() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo","n":-1.5,"ok":[true,false,null]}}}"#,
            "{\"method\":\"notifications/initialized\",\"params\":{\"x\":\"é\"}}".as_bytes(),
            br#"  [1, 2]  "#,
        ] {
            let h = scan::head(body);
            assert!(h.is_some(), "{}", String::from_utf8_lossy(body));
            assert_eq!(h, by_value(body), "{}", String::from_utf8_lossy(body));
        }
        // What it leaves to serde_json: an exponent, an escaped name, deep nesting.
        let deep = format!(r#"{{"id":1,"p":{}1{}}}"#, "[".repeat(70), "]".repeat(70)).into_bytes();
        for body in [
            &br#"{"id":1,"params":{"n":1e3}}"#[..],
            br#"{"i\u0064":1}"#,
            &deep[..],
        ] {
            assert_eq!(scan::head(body), None, "{}", String::from_utf8_lossy(body));
            assert_eq!(request_head(body), by_value(body));
        }
    }
}
