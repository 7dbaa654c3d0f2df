//! Reading recorded JSON-RPC answers of single-request legs: the last exchange of a
//! leg, a skip recorded instead, the shape of what the server answered, and a refusal at
//! authentication. Shared by `revisions-pinned`, `metadata-headers` and
//! `legacy-session-disabled`.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{BodyEnd, Era, HttpOutcome, Observation};
use mcp_probe_schema::tape::{Json, Tape};
use mcp_probe_schema::vocab::{LegId, REV_2026_07_28};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::cell::OnceCell;

use crate::check::Legs;
use crate::evidence::{Bundle, Exchange};
use crate::fmt::{escape_line, excerpt};
use crate::verdict::{Outcome, SubOutcome, Verdict};

/// A JSON-RPC error object as answered.
#[derive(Debug, Clone)]
pub struct RpcError {
    /// `error.code` when it is an integer.
    pub code: Option<i64>,
    /// `error.message` (empty when absent or not a string).
    pub message: String,
    /// `error.data`, if any.
    pub data: Option<Value>,
    /// The id the error carried when it is neither the request's nor null (py1's
    /// `"server-error"`), shown.
    pub foreign_id: Option<String>,
}

impl RpcError {
    /// "JSON-RPC error -32022 "Unsupported protocol version" (data.supported: …)".
    pub fn describe(&self) -> String {
        let mut s = String::with_capacity(64);
        self.describe_into(&mut s);
        s
    }

    /// [`describe`](Self::describe), written at the end of `s`: pieces pushed in place,
    /// since every error answer a check reads is described, most of them twice.
    fn describe_into(&self, s: &mut String) {
        s.push_str("JSON-RPC error ");
        match self.code {
            Some(c) => s.push_str(itoa::Buffer::new().format(c)),
            None => s.push_str("without an integer code"),
        }
        s.push_str(" \"");
        push_short(s, &self.message);
        s.push('"');
        if let Some(sup) = self
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
        {
            s.push_str(" (data.supported: ");
            for (i, v) in sup.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                match v.as_str() {
                    Some(t) => push_short(s, t),
                    None => s.push_str(&short(&v.to_string())),
                }
            }
            s.push(')');
        }
        if let Some(id) = &self.foreign_id {
            s.push_str(" (id ");
            s.push_str(id);
            s.push_str(", not the request's)");
        }
    }

    /// True when the message names `header` (case-insensitive): a protocol token, not
    /// prose, so the match does not depend on the server's language.
    pub fn names(&self, header: &str) -> bool {
        self.message
            .to_ascii_lowercase()
            .contains(&header.to_ascii_lowercase())
    }
}

/// What the server answered to one recorded request (a result borrowed from the
/// bundle's memo of parsed bodies, for as long as the bundle lives).
#[derive(Debug, Clone)]
pub enum Reply<'a> {
    /// No response head arrived (transport failure), with the error.
    NoResponse(String),
    /// A JSON-RPC error object: the response to the request's id, or the first error
    /// or result message (JSON body or SSE event).
    Error(RpcError),
    /// A JSON-RPC result (possibly null).
    Result(ResultValue<'a>),
    /// A 2xx whose body, read whole, is empty: the acknowledgement of a notification.
    Empty,
    /// A 2xx event stream, read whole, with neither a result nor an error.
    StreamWithoutAnswer,
    /// Anything else: no JSON-RPC answer (empty or foreign body at a non-2xx status,
    /// HTML, a body that broke off or was not read); described.
    Bare(String),
}

/// A JSON-RPC result as read: its outline (null or not, the length of each top-level
/// array member, a true `isError`), which is what most readers ask of it, and the value
/// itself, parsed from the bundle's memo on first use (through `Deref`). Reading an
/// answer's outline takes a scan of the body ([`derive::message_heads_in`]), not a parse
/// into a `serde_json::Value`; the whole value is built only for a reader that needs it.
#[derive(Debug, Clone)]
pub struct ResultValue<'a> {
    /// The result is `null`.
    null: bool,
    /// The head of the answer holding the result, whose outline of the result
    /// ([`derive::MessageHead::result_arrays`], `result_is_error`,
    /// `result_protocol_version`, `result_supported_versions`) this reads: borrowed from
    /// the bundle's memo when the memo keeps it, not a copy.
    head: Outline<'a>,
    /// The exchange whose answer's `result` this is, read on first use; `None` when the
    /// value was given whole.
    source: Option<Exchange<'a>>,
    /// The value, once read.
    value: OnceCell<Cow<'a, Value>>,
}

impl<'a> ResultValue<'a> {
    /// The result of `x`'s answer, outlined by `head` (the answer's head), read whole
    /// only on first use.
    fn outlined(
        x: Exchange<'a>,
        head: Cow<'a, derive::MessageHead>,
        null: bool,
    ) -> ResultValue<'a> {
        let head = match head {
            Cow::Borrowed(h) => Outline::Memo(h),
            Cow::Owned(h) => Outline::Own(Box::new(h)),
        };
        ResultValue {
            null,
            head,
            source: Some(x),
            value: OnceCell::new(),
        }
    }

    /// The result is `null`.
    pub fn is_null(&self) -> bool {
        self.null
    }

    /// The number of items of the result's member `key`, when it is an array.
    pub fn array_len(&self, key: &str) -> Option<usize> {
        derive::array_len(&self.head.result_arrays, key)
    }

    /// The result is an object whose `isError` is `true`.
    pub fn is_error(&self) -> bool {
        self.head.result_is_error
    }

    /// The result's `protocolVersion` member: what `get("protocolVersion")` on the
    /// whole result gives, read from the outline without building the result.
    pub fn protocol_version(&self) -> Option<&Value> {
        self.head.result_protocol_version.as_ref()
    }

    /// The result's `supportedVersions` member: what `get("supportedVersions")` on the
    /// whole result gives, read from the outline without building the result.
    pub fn supported_versions(&self) -> Option<&Value> {
        self.head.result_supported_versions.as_ref()
    }

    /// `f` on the result read from its exchange's messages read into tapes (kept in the
    /// bundle's memo, [`Exchange::tapes`]), without building it as a value: for a
    /// reader of a few of its members. A result given whole, or already built, is read
    /// from a tape of that value.
    pub fn with_json<T>(&self, f: impl FnOnce(Json<'_>) -> T) -> T {
        if self.value.get().is_none() {
            if let Some(x) = self.source {
                let msgs = x.tapes();
                if let Some(r) = x.answer_in(&msgs).and_then(|a| a.get("result")) {
                    return f(r);
                }
            }
        }
        let tape = Tape::from_value(self);
        f(tape.root())
    }
}

/// The head a [`ResultValue`] reads its outline from: the memo's, or one of its own
/// (boxed, so that an answer stays small to move).
#[derive(Debug, Clone)]
enum Outline<'a> {
    /// Borrowed from the bundle's memo.
    Memo(&'a derive::MessageHead),
    /// Read for this answer alone.
    Own(Box<derive::MessageHead>),
}

impl std::ops::Deref for Outline<'_> {
    type Target = derive::MessageHead;

    fn deref(&self) -> &derive::MessageHead {
        match self {
            Outline::Memo(h) => h,
            Outline::Own(h) => h,
        }
    }
}

impl From<Value> for ResultValue<'_> {
    /// A result given whole, outlined from the value (as the head of a message holding
    /// it).
    fn from(v: Value) -> Self {
        let head = derive::MessageHead::of(&serde_json::json!({ "result": &v }));
        ResultValue {
            null: v.is_null(),
            head: Outline::Own(Box::new(head)),
            source: None,
            value: OnceCell::from(Cow::Owned(v)),
        }
    }
}

impl std::ops::Deref for ResultValue<'_> {
    type Target = Value;

    /// The result read whole: the `result` member of the exchange's answer, borrowed
    /// from the bundle's memo (parsed there on first use). The outline was read from the
    /// same answer of the same body, so the answer has a `result`; `null` stands in only
    /// should a reading ever disagree.
    fn deref(&self) -> &Value {
        self.value.get_or_init(|| {
            self.source
                .and_then(|x| x.answer_cow())
                .and_then(|a| member(a, "result"))
                .unwrap_or(Cow::Owned(Value::Null))
        })
    }
}

/// The status and JSON-RPC error code of an answer, as details keep them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AnswerFacts {
    /// HTTP status, null without a response.
    pub http_status: Option<u16>,
    /// The JSON-RPC error's integer code, null otherwise.
    pub code: Option<i64>,
}

/// How an answer is named in evidence ([`Exchange::status_label`]).
#[derive(Debug, Clone)]
pub enum StatusLabel<'a> {
    /// The label of the exchange's response, written where the answer is named
    /// ([`Exchange::push_status_label`]) rather than kept as a string of its own.
    Of(Exchange<'a>),
    /// A label given whole.
    Given(Cow<'static, str>),
}

impl StatusLabel<'_> {
    /// The label, written at the end of `out`.
    pub fn push_into(&self, out: &mut String) {
        match self {
            StatusLabel::Of(x) => x.push_status_label(out),
            StatusLabel::Given(s) => out.push_str(s),
        }
    }

    /// Room to reserve for the label: its length when given, else a bound for an
    /// ordinary Content-Type.
    fn len_hint(&self) -> usize {
        match self {
            StatusLabel::Of(_) => 64,
            StatusLabel::Given(s) => s.len(),
        }
    }
}

impl std::fmt::Display for StatusLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusLabel::Of(x) => {
                let mut s = String::new();
                x.push_status_label(&mut s);
                f.write_str(&s)
            }
            StatusLabel::Given(s) => f.write_str(s),
        }
    }
}

/// One recorded answer.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    /// HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// "HTTP 400 (application/json)", or "no response".
    pub status_label: StatusLabel<'a>,
    /// The reading.
    pub reply: Reply<'a>,
    /// The record.
    pub seq: u64,
}

impl Answer<'_> {
    /// The status is 2xx.
    pub fn is_2xx(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    /// The error, if the answer is one.
    pub fn error(&self) -> Option<&RpcError> {
        match &self.reply {
            Reply::Error(e) => Some(e),
            _ => None,
        }
    }

    /// The error's integer code, if any.
    pub fn code(&self) -> Option<i64> {
        self.error().and_then(|e| e.code)
    }

    /// Status and code, for details.
    pub fn facts(&self) -> AnswerFacts {
        AnswerFacts {
            http_status: self.status,
            code: self.code(),
        }
    }

    /// The number of items of a result's `tools` array, if the answer is a tools/list
    /// result.
    pub fn tools(&self) -> Option<usize> {
        match &self.reply {
            Reply::Result(r) => r.array_len("tools"),
            _ => None,
        }
    }

    /// The status line and what the body held, for evidence. Written into one string:
    /// most evidence a check writes starts with it.
    pub fn summary(&self) -> String {
        if let Reply::NoResponse(e) = &self.reply {
            let mut s = String::with_capacity(e.len() + 14);
            s.push_str("no response (");
            s.push_str(e);
            s.push(')');
            return s;
        }
        let mut s = String::with_capacity(self.status_label.len_hint() + 96);
        self.status_label.push_into(&mut s);
        s.push_str(" with ");
        match &self.reply {
            Reply::NoResponse(_) => {}
            Reply::Error(e) => e.describe_into(&mut s),
            Reply::Result(r) => {
                s.push_str("a JSON-RPC result");
                match r.array_len("tools") {
                    Some(n) => {
                        s.push_str(" listing ");
                        s.push_str(itoa::Buffer::new().format(n));
                        s.push_str(if n == 1 { " tool" } else { " tools" });
                    }
                    None if r.is_null() => s.push_str(" that is null"),
                    None if r.is_error() => s.push_str(" with isError: true"),
                    None => {}
                }
            }
            Reply::Empty => s.push_str("an empty body"),
            Reply::StreamWithoutAnswer => {
                s.push_str("an event stream that closed with neither a result nor an error")
            }
            Reply::Bare(d) => s.push_str(d),
        }
        s
    }
}

/// The first 120 characters of untrusted text, on one line.
pub fn short(s: &str) -> String {
    if let Some((shown, cut)) = plain(s) {
        // In a string of its length.
        let mut out = String::with_capacity(shown.len() + if cut { '…'.len_utf8() } else { 0 });
        push_plain(&mut out, shown, cut);
        return out;
    }
    let e = excerpt(s.as_bytes(), SHORT);
    // Room for the mark of a cut too (no growth for it).
    let mut out = String::with_capacity(e.text.len() + if e.cut { '…'.len_utf8() } else { 0 });
    crate::fmt::escape_line_into(&mut out, &e.text);
    if e.cut {
        out.push('…');
    }
    out
}

/// The bytes of untrusted text [`short`] shows at most.
const SHORT: usize = 120;

/// [`short`], appended to `out` (no string of its own when the text's first bytes are
/// printable ASCII, which is shown as it is).
pub fn push_short(out: &mut String, s: &str) {
    match plain(s) {
        Some((shown, cut)) => push_plain(out, shown, cut),
        None => out.push_str(&short(s)),
    }
}

/// The part of `s` [`short`] shows and whether it is cut, when that part is printable
/// ASCII: then the excerpt is those bytes as they are, which neither escape changes.
fn plain(s: &str) -> Option<(&str, bool)> {
    let n = s.len().min(SHORT);
    // Bytes first: the n-th byte is a character's start only when those before are ASCII.
    s.as_bytes()[..n]
        .iter()
        .all(|b| (0x20..0x7f).contains(b))
        .then(|| (&s[..n], n < s.len()))
}

/// A [`plain`] excerpt appended to `out`, with the mark of a cut.
fn push_plain(out: &mut String, shown: &str, cut: bool) {
    out.push_str(shown);
    if cut {
        out.push('…');
    }
}

/// Read one exchange.
pub fn read<'a>(x: &Exchange<'a>) -> Answer<'a> {
    let seq = x.seq();
    let resp = match &x.http.outcome {
        HttpOutcome::Response(r) => r,
        HttpOutcome::Error(e) => {
            return Answer {
                status: None,
                status_label: StatusLabel::Given(Cow::Borrowed("no response")),
                reply: Reply::NoResponse(e.to_string()),
                seq,
            }
        }
    };
    let status = resp.status;
    // The label is written where the answer is named ([`Answer::summary`]), not here.
    let status_label = StatusLabel::Of(*x);
    // The answer's head (its id, error and the outline of its result), read by a scan
    // of the body unless the messages are parsed already: the result itself is parsed
    // only for a reader that needs it whole.
    let read = x.answer_head_cow().and_then(|head| {
        if let Some(err) = head.error.as_ref().filter(|e| e.object) {
            let sent_id = x.request_id_sent();
            let foreign_id = head
                .id
                .as_ref()
                .filter(|id| !id.is_null() && Some(*id) != sent_id.as_ref())
                .map(|id| short(&id.to_string()));
            Some(Reply::Error(RpcError {
                code: err.code_i64(),
                message: err.message_str().unwrap_or("").to_string(),
                data: err.data.clone(),
                foreign_id,
            }))
        } else {
            head.result
                .map(|null| Reply::Result(ResultValue::outlined(*x, head, null)))
        }
    });
    let reply = if let Some(reply) = read {
        reply
    } else {
        let broken = match &resp.body.end {
            BodyEnd::Error(e) => Some(crate::format_exact!("the body broke off ({e})")),
            BodyEnd::LimitReached => Some("the body exceeded the read limit".to_string()),
            BodyEnd::HeadOnly => Some("the body was not read (head only)".to_string()),
            BodyEnd::Complete | BodyEnd::StoppedAfterResponse => None,
        };
        let whole = resp.body.bytes.len() as u64 == resp.body.length;
        let blank =
            resp.body.length == 0 || (whole && resp.body.bytes.iter().all(u8::is_ascii_whitespace));
        let event_stream = derive::media_type_is(&resp.headers, "text/event-stream");
        if (200..300).contains(&status) && broken.is_none() && blank {
            Reply::Empty
        } else if (200..300).contains(&status) && broken.is_none() && event_stream {
            Reply::StreamWithoutAnswer
        } else {
            let body = if blank {
                "an empty body".to_string()
            } else {
                crate::format_exact!(
                    "a body holding no JSON-RPC answer ({} bytes: \"{}\")",
                    resp.body.length,
                    short(&String::from_utf8_lossy(&resp.body.bytes))
                )
            };
            Reply::Bare(match broken {
                Some(b) if resp.body.length == 0 => b,
                Some(b) => crate::format_exact!("{body}; {b}"),
                None => body,
            })
        }
    };
    Answer {
        status: Some(status),
        status_label,
        reply,
        seq,
    }
}

/// The member `key` of an object, borrowed as the object is or taken out of it.
fn member<'a>(v: Cow<'a, Value>, key: &str) -> Option<Cow<'a, Value>> {
    match v {
        Cow::Borrowed(b) => b.get(key).map(Cow::Borrowed),
        Cow::Owned(Value::Object(mut m)) => m.remove(key).map(Cow::Owned),
        Cow::Owned(_) => None,
    }
}

/// UNKNOWN for an answer refused at authentication (HTTP 401 or 403): the probe never
/// reached what it tests (`never`, e.g. "so the header check was never reached").
/// `authenticated`: the run held a credential, which the request carried.
pub fn refused_at_authentication(
    a: &Answer,
    authenticated: bool,
    never: &str,
) -> Option<(SubOutcome, String)> {
    if !matches!(a.status, Some(401 | 403)) {
        return None;
    }
    let held = if authenticated {
        "although it carried the run's credential"
    } else {
        "and the run held no credential"
    };
    Some((
        SubOutcome::Unknown,
        crate::format_exact!("{}: refused at authentication {held}, {never}", a.summary()),
    ))
}

/// Words in a skip reason that mark a decision of the run (operator choice, `--info`),
/// after which a later run may decide. Any other skip means the observation failed.
const RUN_CHOICE_MARKERS: [&str; 3] = ["--info", "consent", "operator"];

/// A leg the collector recorded as not sent: UNKNOWN when that was the run's choice
/// (a full run decides), ERROR otherwise (the observation was never made).
pub fn skipped_leg(what: &str, reason: &str) -> (SubOutcome, String) {
    let reason = escape_line(reason);
    if RUN_CHOICE_MARKERS.iter().any(|m| reason.contains(m)) {
        (
            SubOutcome::Unknown,
            crate::format_exact!("{what} was not sent ({reason}); a full run decides"),
        )
    } else {
        (
            SubOutcome::Error,
            crate::format_exact!("{what} was not sent ({reason}): the observation was never made"),
        )
    }
}

/// The last exchange of `leg` (one request is sent; should a record be repeated, the
/// last one stands), else its skip reason, else `None` (neither was recorded).
pub fn last<'a>(ev: &'a Bundle, leg: LegId) -> Option<Result<Exchange<'a>, String>> {
    if let Some(x) = ev.exchanges(leg).last() {
        return Some(Ok(x));
    }
    ev.records_for(leg).find_map(|r| match &r.observation {
        Observation::Skipped { reason } => Some(Err(reason.clone())),
        _ => None,
    })
}

/// The legs of a check whose probes exist only on 2026-07-28: required there; below it
/// the check is NO-REV before reading them, so they are only cited when present (a
/// current collector records them as skipped).
pub fn modern_only(era: Option<Era>, legs: &'static [LegId]) -> Legs {
    match era {
        Some(Era::Modern) => Legs::required(legs),
        _ => Legs::with_optional(&[], legs),
    }
}

/// The details of a NO-REV outcome.
#[derive(Debug, Serialize)]
struct NoRevFacts {
    /// 2026-07-28.
    required_revision: &'static str,
    /// The revision the server negotiated (or "no revision").
    negotiated_revision: String,
}

/// NO-REV for a check of 2026-07-28 on an older session: `why` says what only that
/// revision defines; the legs' records (skips) are cited.
pub fn no_rev(ev: &Bundle, legs: &[LegId], why: &str, reduction: &'static str) -> Outcome {
    let negotiated = ev
        .revision()
        .map(escape_line)
        .unwrap_or_else(|| "no revision".into());
    let seqs: Vec<u64> = legs
        .iter()
        .flat_map(|l| ev.records_for(*l).map(|r| r.seq))
        .collect();
    Outcome::single(
        Verdict::NoRev,
        crate::format_exact!("{why}; the server negotiated {negotiated}; no probe sent"),
        reduction,
    )
    .with_records(seqs)
    .with_facts(&NoRevFacts {
        required_revision: REV_2026_07_28,
        negotiated_revision: negotiated,
    })
}

/// Two parts of one leg combined by the one rule ([`crate::verdict::combine`]): fail >
/// error > unknown > pass, a part that did not arise counting only when neither applies.
pub fn worst(a: SubOutcome, b: SubOutcome) -> SubOutcome {
    crate::verdict::combine([a.part(), b.part()]).sub()
}

/// Constants shared by the tests of `revisions-pinned` and `metadata-headers`.
#[cfg(test)]
pub mod testing {
    /// `Content-Type` of a JSON answer.
    pub const JSON: &str = "application/json";
    /// The `_meta` of a 2026-07-28 request, as a JSON member.
    pub const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::vocab::LegId;

    /// Every answer of the examples, read twice: from a bundle whose messages are not
    /// parsed yet (the result outlined by a scan of the body) and from one whose
    /// messages are (outlined from the parsed answer). Both read the same, and the
    /// outline says of each result what the result parsed whole says.
    #[test]
    fn a_results_outline_is_what_the_parsed_result_says() {
        let mut results = 0;
        let twice = crate::fixture::example_bundles();
        for (scanned, parsed) in crate::fixture::example_bundles().iter().zip(&twice) {
            for leg in LegId::all() {
                for (x, y) in scanned.exchanges(*leg).zip(parsed.exchanges(*leg)) {
                    y.with_messages(|_| ());
                    let (a, b) = (read(&x), read(&y));
                    assert_eq!(a.summary(), b.summary(), "{}", scanned.path);
                    let (Reply::Result(r), Reply::Result(s)) = (&a.reply, &b.reply) else {
                        continue;
                    };
                    results += 1;
                    let whole = y.answer().and_then(|m| m.get("result").cloned());
                    assert_eq!(Some(&**r), whole.as_ref());
                    assert_eq!(Some(&**s), whole.as_ref());
                    for outlined in [r, s] {
                        let v: &Value = outlined;
                        assert_eq!(outlined.is_null(), v.is_null());
                        assert_eq!(
                            outlined.is_error(),
                            v.get("isError") == Some(&Value::Bool(true))
                        );
                        for (k, m) in v.as_object().into_iter().flatten() {
                            assert_eq!(outlined.array_len(k), m.as_array().map(Vec::len));
                        }
                        assert_eq!(
                            outlined.array_len("tools"),
                            v.get("tools").and_then(Value::as_array).map(Vec::len)
                        );
                        assert_eq!(outlined.protocol_version(), v.get("protocolVersion"));
                        assert_eq!(outlined.supported_versions(), v.get("supportedVersions"));
                    }
                }
            }
        }
        eprintln!("results read: {results}");
        assert!(results >= 200, "only {results} results read");
    }

    /// An answer's label written where it is named is the exchange's label as a string
    /// of its own: every exchange of the examples, and responses whose Content-Type is
    /// hostile (control characters, bytes that are not UTF-8, very long) or absent, and
    /// a stdio exchange.
    #[test]
    fn a_label_written_in_place_is_the_exchanges_label() {
        use crate::fixture::{evidence, exchange};
        let mut bundles = crate::fixture::example_bundles();
        let long = "a/b;".repeat(5_000);
        let mut records = Vec::new();
        for ct in [
            "application/json",
            "text/html\u{1b}[31m\n\u{202e}",
            long.as_str(),
            "",
        ] {
            records.push(exchange(
                &[LegId::all()[0]],
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                418,
                ct,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#,
                &[],
            ));
        }
        let mut raw = records[0].clone();
        if let mcp_probe_schema::model::Observation::Http(x) = &mut raw.observation {
            if let HttpOutcome::Response(r) = &mut x.outcome {
                for h in &mut r.headers {
                    if h.name.eq_ignore_ascii_case("content-type") {
                        h.value = b"application/\xff\xfejson; q=\x00".to_vec().into();
                    }
                }
                r.headers.retain(|h| !h.value.is_empty());
            }
        }
        records.push(raw);
        let mut none = records[0].clone();
        if let mcp_probe_schema::model::Observation::Http(x) = &mut none.observation {
            if let HttpOutcome::Response(r) = &mut x.outcome {
                r.headers
                    .retain(|h| !h.name.eq_ignore_ascii_case("content-type"));
            }
        }
        records.push(none);
        for (i, r) in records.iter_mut().enumerate() {
            r.seq = i as u64;
        }
        bundles.push(evidence(None, records));
        let mut read_ = 0;
        for ev in &bundles {
            for (record, _) in ev.http_records() {
                let Some(x) = ev.exchange_of(record) else {
                    continue;
                };
                let a = read(&x);
                let given = Answer {
                    status_label: match &a.reply {
                        Reply::NoResponse(_) => StatusLabel::Given("no response".into()),
                        _ => StatusLabel::Given(x.status_label().unwrap_or_default().into()),
                    },
                    ..a.clone()
                };
                assert_eq!(a.summary(), given.summary());
                assert_eq!(a.status_label.to_string(), given.status_label.to_string());
                assert_eq!(a.summary(), summary_formatted(&given));
                read_ += 1;
            }
        }
        assert!(read_ >= 500, "only {read_} answers read");
    }

    /// `describe` as it was written with `format!`, the reference the pieces pushed in
    /// place must equal.
    fn describe_formatted(e: &RpcError) -> String {
        let code = e
            .code
            .map_or_else(|| "without an integer code".to_string(), |c| format!("{c}"));
        let mut s = format!("JSON-RPC error {code} \"{}\"", short_formatted(&e.message));
        if let Some(sup) = e
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
        {
            let list: Vec<String> = sup
                .iter()
                .map(|v| {
                    v.as_str()
                        .map_or_else(|| short_formatted(&v.to_string()), short_formatted)
                })
                .collect();
            s.push_str(&format!(" (data.supported: {})", list.join(", ")));
        }
        if let Some(id) = &e.foreign_id {
            s.push_str(&format!(" (id {id}, not the request's)"));
        }
        s
    }

    /// `short` as it was written with `format!`.
    fn short_formatted(s: &str) -> String {
        let e = excerpt(s.as_bytes(), 120);
        format!("{}{}", escape_line(&e.text), if e.cut { "…" } else { "" })
    }

    /// `summary` as it was written with `format!`.
    fn summary_formatted(a: &Answer) -> String {
        match &a.reply {
            Reply::NoResponse(e) => format!("no response ({e})"),
            Reply::Error(e) => format!("{} with {}", a.status_label, describe_formatted(e)),
            Reply::Result(r) => {
                let what = match r.array_len("tools") {
                    Some(n) => format!(" listing {n} tool{}", if n == 1 { "" } else { "s" }),
                    None if r.is_null() => " that is null".to_string(),
                    None if r.is_error() => " with isError: true".to_string(),
                    None => String::new(),
                };
                format!("{} with a JSON-RPC result{what}", a.status_label)
            }
            Reply::Empty => format!("{} with an empty body", a.status_label),
            Reply::StreamWithoutAnswer => format!(
                "{} with an event stream that closed with neither a result nor an error",
                a.status_label
            ),
            Reply::Bare(d) => format!("{} with {d}", a.status_label),
        }
    }

    /// The summaries, descriptions and excerpts written piece by piece are the ones the
    /// formatting machinery wrote.
    #[test]
    fn summaries_are_written_as_formatted() {
        let long = "é\u{1b}[31m".repeat(40);
        let texts = [
            "",
            "Unsupported protocol version",
            "a\nb\u{202e}c",
            long.as_str(),
        ];
        let ascii = "x".repeat(200);
        let edge = format!("{}\u{e9}", "y".repeat(119));
        for t in texts.into_iter().chain([
            &ascii[..120],
            &ascii[..121],
            &ascii,
            edge.as_str(),
            "\u{7f}ok",
        ]) {
            assert_eq!(short(t), short_formatted(t));
            let mut pushed = "head ".to_string();
            push_short(&mut pushed, t);
            assert_eq!(pushed, format!("head {}", short_formatted(t)));
        }
        let mut errors = Vec::new();
        for code in [None, Some(-32022), Some(0), Some(i64::MIN)] {
            for message in texts {
                for data in [
                    None,
                    Some(serde_json::json!({"supported": ["2025-06-18", 7, null, long.as_str()]})),
                    Some(serde_json::json!({"supported": []})),
                    Some(serde_json::json!({"supported": "x"})),
                ] {
                    for foreign_id in [None, Some("\"server-error\"".to_string())] {
                        errors.push(RpcError {
                            code,
                            message: message.to_string(),
                            data: data.clone(),
                            foreign_id,
                        });
                    }
                }
            }
        }
        for e in &errors {
            assert_eq!(e.describe(), describe_formatted(e));
        }
        let mut replies: Vec<Reply> = errors.into_iter().map(Reply::Error).collect();
        for r in [
            serde_json::json!({"tools": []}),
            serde_json::json!({"tools": [1]}),
            serde_json::json!({"tools": [1, 2]}),
            serde_json::json!(null),
            serde_json::json!({"isError": true}),
            serde_json::json!({"content": []}),
        ] {
            replies.push(Reply::Result(r.into()));
        }
        replies.extend([
            Reply::NoResponse("connection refused".into()),
            Reply::Empty,
            Reply::StreamWithoutAnswer,
            Reply::Bare("an empty body; the body broke off (reset)".into()),
        ]);
        for reply in replies {
            for label in ["HTTP 400 (application/json)", "stdio", ""] {
                let a = Answer {
                    status: Some(400),
                    status_label: StatusLabel::Given(label.to_string().into()),
                    reply: reply.clone(),
                    seq: 3,
                };
                assert_eq!(a.summary(), summary_formatted(&a));
            }
        }
    }
}
