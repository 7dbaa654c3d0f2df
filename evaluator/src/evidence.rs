//! Read access to one verified bundle for checks: the session, the inventory derived
//! across pages, records by leg, and JSON-RPC answers. Built once per bundle and shared
//! by every check, so no check re-parses what another already parsed.

use crate::shared_items::SharedItems;
use mcp_probe_schema::derive::{self, Inventory, RequestHead, RequestParams, StreamAnswer};
use mcp_probe_schema::model::{
    Body, BodyEnd, Era, Evidence as Payload, Header, HttpExchange, HttpOutcome, HttpRequest,
    HttpResponse, Observation, Record, Session, SseEvent, StdioExchange, StdioProcess, Transport,
};
use mcp_probe_schema::tape::{self, Json, Messages};
use mcp_probe_schema::vocab::{family, LegId};
use mcp_probe_schema::Verified;
use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

use crate::leg_index::{leg_index, LegIndex};

use serde_json::Value;

/// The grader's view of one verified bundle, ready for grading. `Evidence` names only
/// the payload it wraps (`mcp_probe_schema::model::Evidence`, the bundle format's name).
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Where it was read from (as given).
    pub path: String,
    /// The payload (shared by the views of other eras).
    pub payload: Arc<Payload>,
    /// Decoded records (shared by the views of other eras). Private: a check reads a
    /// leg's records through [`Bundle::records_for`], which the leg contract watches,
    /// and other records through the methods that say what they read.
    records: Arc<Vec<Record>>,
    /// Signer key id.
    pub signer: String,
    /// Inventory across every page (shared by the views of other eras), its items
    /// places in the list pages' tapes, shared with the memo (a page too long for the
    /// memo is held by the inventory alone).
    pub inventory: Arc<Inventory<SharedItems>>,
    /// What is parsed of each record (by position), filled on first use.
    parsed: Arc<Vec<Memo>>,
    /// Set on the view of another era's session ([`Bundle::other_eras`]): that
    /// session, standing in for the negotiated one, and its revision.
    era_view: Option<(Session, String)>,
    /// Each stdio exchange read as an exchange (by position; `None` for other records):
    /// see [`stdio_as_exchange`].
    stdio: Arc<Vec<Option<HttpExchange>>>,
    /// HTTP+SSE: what the event stream carried for each `POST` record, by its seq
    /// (empty for other transports).
    streamed: Arc<BTreeMap<u64, StreamAnswer>>,
    /// The positions of the records naming each recorded leg (as recorded, so with its
    /// `@<revision>` when it has one), in order: [`Bundle::records_for`] looks a leg up
    /// here rather than scanning every record at each call (a known leg by its place
    /// in a fixed table, any other name by binary search: see [`crate::leg_index`]).
    by_leg: Arc<LegIndex>,
    /// On the view of another era: [`Bundle::by_leg`]'s legs recorded for that era's
    /// revision (`<leg>@<revision>`), by the leg's own name, so that
    /// [`Bundle::records_for`] finds a leg of [`family::PER_ERA`] there without
    /// building its key. Empty on the bundle itself.
    by_leg_on_era: Arc<LegIndex>,
    /// Views the checks derive from this view of the bundle (the OAuth facts), each
    /// derived on the first check's asking and read by every other ([`Bundle::view`]).
    /// Per view: another era's view reads other records.
    views: Views,
}

/// [`Bundle::view`]'s views, by type: each with the legs deriving it read.
#[derive(Default)]
struct Views(Mutex<Vec<(TypeId, DerivedView)>>);

/// A derived view and the legs its derivation read.
type DerivedView = (Arc<dyn Any + Send + Sync>, Arc<BTreeSet<LegId>>);

impl Clone for Views {
    fn clone(&self) -> Views {
        let held = self.0.lock().map(|v| v.clone()).unwrap_or_default();
        Views(Mutex::new(held))
    }
}

impl std::fmt::Debug for Views {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|v| v.len()).unwrap_or_default();
        write!(f, "Views({n} derived)")
    }
}

/// The method, URL and version of a stdio exchange read as an exchange: no check can
/// mistake it for HTTP ([`Exchange::is_stdio`]).
pub const STDIO_METHOD: &str = "STDIO";

/// A stdio exchange read the way every check reads an exchange, so that the checks of
/// the protocol (`null-id-rejected`, `tool-schemas-validated`, `resource-templates-typed`,
/// `prompt-arguments-validated`, the inventory) grade a stdio bundle through the one
/// reading they already have: the message sent is the request body; the JSON-RPC lines
/// read on stdout, as one JSON array, are the response body (status 200, which no HTTP
/// server sent: [`Exchange::status_label`] says `stdio` instead); a transport error (no answer
/// within the timeout, stdout closed) is the outcome. A line that is not JSON-RPC is not
/// part of the answer (`stdio-logs-separated` reads those lines from the record itself).
pub fn stdio_as_exchange(x: &StdioExchange) -> HttpExchange {
    let sent = x.sent.clone().unwrap_or_default();
    let body = |bytes: Vec<u8>| Body {
        length: bytes.len() as u64,
        sha256: mcp_probe_schema::bundle::sha256(&bytes).to_vec(),
        bytes,
        end: BodyEnd::Complete,
    };
    let messages = derive::stdio_messages(x);
    let outcome = match &x.error {
        Some(e) if messages.is_empty() => HttpOutcome::Error(e.clone()),
        _ => HttpOutcome::Response(HttpResponse {
            version: STDIO_METHOD.into(),
            status: 200,
            reason: "".into(),
            headers: vec![Header::new(
                mcp_probe_schema::vocab::header::CONTENT_TYPE,
                "application/json",
            )],
            body: body(if messages.is_empty() {
                Vec::new()
            } else {
                serde_json::to_vec(&Value::Array(messages)).unwrap_or_default()
            }),
            interim: 0,
        }),
    };
    HttpExchange {
        request: HttpRequest {
            method: STDIO_METHOD.into(),
            url: "stdio:".into(),
            version: STDIO_METHOD.into(),
            headers: Vec::new(),
            body: body(sent),
        },
        outcome,
        connection: None,
        first_attempt: None,
        refused: None,
    }
}

/// The bundle's memo of one record's parsed JSON: each part parsed on first use and
/// read by every check after (the bodies of a bundle are parsed once, not once per
/// check or per call).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    /// Every JSON-RPC message of the response ([`Exchange::messages`]). A list page's
    /// are read into `tapes` instead, for the inventory and the checks that walk items.
    messages: OnceLock<Vec<Value>>,
    /// The request body parsed ([`Exchange::request_json`]).
    request: OnceLock<Option<Value>>,
    /// The request's `id` and `method`, read without parsing the rest of the body
    /// ([`Exchange::request_id`], [`Exchange::request_method`]): what most reads of a
    /// request need.
    head: OnceLock<Option<RequestHead>>,
    /// What the checks of live requests read of the request's `params`
    /// ([`Exchange::request_params`]), read without parsing the body.
    params: OnceLock<Option<RequestParams>>,
    /// The heads of the messages read by a scan of the body, `None` when the scan could
    /// not tell ([`Exchange::with_answer_head`]).
    heads: OnceLock<Option<Vec<derive::MessageHead>>>,
    /// Which of `messages` is the answer ([`Exchange::answer`]).
    answer: OnceLock<Option<usize>>,
    /// The response body parsed as one document ([`Exchange::body_json`]).
    body: OnceLock<Option<Value>>,
    /// Every JSON-RPC message of the response, as `messages`, read into tapes
    /// ([`Exchange::tapes`]): how the list pages are read, for the inventory and every
    /// check that walks their items, and the results of which a check reads a few
    /// members ([`crate::checks::common::wire::ResultValue::with_json`]).
    tapes: OnceLock<Arc<Messages>>,
}

/// The longest body whose parse the memo keeps (256 KiB). A longer one is parsed again
/// at each use and dropped after it: a bundle of a few very long bodies (a tool list of
/// 1 MiB descriptions) is then held as its records and its inventory, not a third time
/// as parsed messages (docs/performance.md, "How the costs grow with the size of a
/// bundle"). Every body of an ordinary bundle is far shorter.
const MEMO_BODY_MAX: usize = 256 * 1024;

/// One HTTP exchange with its JSON-RPC reading.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// The record.
    pub record: &'a Record,
    /// The exchange.
    pub http: &'a HttpExchange,
    /// The bundle's memo of this record's parsed JSON (bodies are parsed once per
    /// bundle, not once per check).
    cache: Option<&'a Memo>,
    /// HTTP+SSE: what the event stream carried for this `POST`.
    stream: Option<&'a StreamAnswer>,
}

impl<'a> Exchange<'a> {
    /// An exchange read without the bundle's memo.
    pub fn new(record: &'a Record, http: &'a HttpExchange) -> Exchange<'a> {
        Exchange {
            record,
            http,
            cache: None,
            stream: None,
        }
    }

    fn parse_messages(&self) -> Vec<Value> {
        // A body that did not end whole (transport error part way, read limit, head
        // only) is never read as the server's answer, whatever its bytes parse to. On
        // HTTP+SSE the messages the stream carried for this request count as its body.
        self.response()
            .map(|r| derive::answer_messages(r, self.stream))
            .unwrap_or_default()
    }

    /// HTTP+SSE: the transport error that ended the wait for this request's answer on
    /// the event stream (a `timeout` when none came within `--timeout`), if any.
    pub fn stream_error(&self) -> Option<&'a mcp_probe_schema::model::TransportError> {
        self.stream.and_then(|s| s.error.as_ref())
    }

    /// HTTP+SSE: events read for this request past the bundle cap, counted and not
    /// stored (how many, and the seqs of the records counting them); `(0, [])` when
    /// every event was stored, and on other transports.
    pub fn stream_unkept(&self) -> (u64, &'a [u64]) {
        self.stream
            .map(|s| (s.unkept, s.unkept_seqs.as_slice()))
            .unwrap_or((0, &[]))
    }

    /// HTTP+SSE: the seqs of the stream's event records that belong to this request
    /// (empty on other transports).
    pub fn stream_seqs(&self) -> &'a [u64] {
        self.stream.map(|s| s.seqs.as_slice()).unwrap_or(&[])
    }

    /// `f` on every JSON-RPC message of the response (none from a body that did not
    /// end whole), read from the bundle's memo without copying them.
    pub fn with_messages<T>(&self, f: impl FnOnce(&[Value]) -> T) -> T {
        match self.response_memo() {
            Some(c) => f(self.memo_messages(c)),
            None => f(&self.parse_messages()),
        }
    }

    /// [`with_messages`](Self::with_messages)'s messages read into tapes
    /// ([`mcp_probe_schema::tape`]), shared with the bundle's memo; read here, and not
    /// kept in the memo, when the memo does not keep this body's parse (a body over
    /// 256 KiB, an exchange read without the bundle).
    pub fn tapes(&self) -> Arc<Messages> {
        match self.response_memo() {
            Some(c) => Arc::clone(c.tapes.get_or_init(|| Arc::new(self.parse_tapes()))),
            None => Arc::new(self.parse_tapes()),
        }
    }

    /// [`parse_messages`](Self::parse_messages), into tapes: the same messages, in the
    /// same order.
    fn parse_tapes(&self) -> Messages {
        self.response()
            .map(|r| tape::answer_messages(r, self.stream))
            .unwrap_or_default()
    }

    /// The messages the memo `c` keeps, parsed on first use.
    fn memo_messages(&self, c: &'a Memo) -> &'a Vec<Value> {
        c.messages.get_or_init(|| self.parse_messages())
    }

    /// The memo, unless the response body is too long to keep its parse.
    fn response_memo(&self) -> Option<&'a Memo> {
        self.cache.filter(|_| {
            self.response()
                .is_none_or(|r| r.body.bytes.len() <= MEMO_BODY_MAX)
        })
    }

    /// The memo, unless the request body is too long to keep its parse.
    fn request_memo(&self) -> Option<&'a Memo> {
        self.cache
            .filter(|_| self.http.request.body.bytes.len() <= MEMO_BODY_MAX)
    }

    fn parse_request(&self) -> Option<Value> {
        serde_json::from_slice(&self.http.request.body.bytes).ok()
    }

    /// `f` on the JSON-RPC request body sent (parsed), read from the bundle's memo.
    pub fn with_request<T>(&self, f: impl FnOnce(Option<&Value>) -> T) -> T {
        match self.request_memo() {
            Some(c) => f(c.request.get_or_init(|| self.parse_request()).as_ref()),
            None => f(self.parse_request().as_ref()),
        }
    }

    /// The JSON-RPC request body sent (parsed), borrowed from the bundle's memo for as
    /// long as the bundle lives; a value of its own only when the memo does not keep this
    /// body's parse (a body over 256 KiB, an exchange read without the bundle).
    pub fn request_cow(&self) -> Option<Cow<'a, Value>> {
        match self.request_memo() {
            Some(c) => c
                .request
                .get_or_init(|| self.parse_request())
                .as_ref()
                .map(Cow::Borrowed),
            None => self.parse_request().map(Cow::Owned),
        }
    }

    /// The request's `params` as the checks of live requests read them
    /// ([`derive::request_params`]: what the parsed body would say of them, without
    /// building the body, or read from the body when another reader parsed it already),
    /// borrowed from the bundle's memo; `None` when the body is not JSON.
    pub fn request_params(&self) -> Option<Cow<'a, RequestParams>> {
        let read = || match self.request_memo().and_then(|c| c.request.get()) {
            Some(parsed) => parsed.as_ref().map(RequestParams::of),
            None => derive::request_params(&self.http.request.body.bytes),
        };
        match self.request_memo() {
            Some(c) => c.params.get_or_init(read).as_ref().map(Cow::Borrowed),
            None => read().map(Cow::Owned),
        }
    }

    /// `f` on the request's `id` and `method` ([`derive::request_head`]: what the parsed
    /// body would say of them, without building the body), read from the bundle's memo.
    fn with_head<T>(&self, f: impl FnOnce(Option<&RequestHead>) -> T) -> T {
        let parse = || derive::request_head(&self.http.request.body.bytes);
        match self.request_memo() {
            Some(c) => f(c.head.get_or_init(parse).as_ref()),
            None => f(parse().as_ref()),
        }
    }

    /// The request's JSON-RPC id, `null` when it has none (or its body is not a JSON
    /// object), read from the bundle's memo.
    pub fn request_id(&self) -> Value {
        self.request_id_sent().unwrap_or(Value::Null)
    }

    /// `f` on the request's JSON-RPC id ([`request_id`](Self::request_id)), borrowed
    /// from the bundle's memo rather than copied.
    fn with_request_id<T>(&self, f: impl FnOnce(&Value) -> T) -> T {
        static NULL: Value = Value::Null;
        self.with_head(|h| f(h.and_then(|h| h.id.as_ref()).unwrap_or(&NULL)))
    }

    /// The request body's `id` member, `None` when it has none (or its body is not a
    /// JSON object).
    pub fn request_id_sent(&self) -> Option<Value> {
        self.with_head(|h| h.and_then(|h| h.id.clone()))
    }

    /// The request body's `method` member, when it is a string.
    pub fn request_method(&self) -> Option<String> {
        self.with_head(|h| h.and_then(|h| h.method.clone()))
    }

    /// `f` of the request body's `method` member ([`request_method`](Self::request_method)),
    /// borrowed from the bundle's memo rather than copied.
    pub fn with_request_method<T>(&self, f: impl FnOnce(Option<&str>) -> T) -> T {
        self.with_head(|h| f(h.and_then(|h| h.method.as_deref())))
    }

    /// Which message of [`with_messages`](Self::with_messages) is the answer.
    fn answer_index(&self) -> Option<usize> {
        // The answer to the request's id, else the first answer. With at most one answer
        // among the messages that is the one either way, and the request's id is not read.
        let find = || {
            self.with_messages(|msgs| {
                let answers = |m: &&Value| m.get("result").is_some() || m.get("error").is_some();
                let first = msgs.iter().position(|m| answers(&m))?;
                if !msgs[first + 1..].iter().any(|m| answers(&m)) {
                    return Some(first);
                }
                self.with_request_id(|id| {
                    derive::response_to(msgs, id)
                        .and_then(|a| msgs.iter().position(|m| std::ptr::eq(m, a)))
                        .or(Some(first))
                })
            })
        };
        match self.cache {
            Some(c) => *c.answer.get_or_init(find),
            None => find(),
        }
    }

    /// The answer among `msgs`, this exchange's messages read into tapes
    /// ([`tapes`](Self::tapes)), as `answer_index` finds it among the values: the answer
    /// to the request's id, else the first answer.
    pub fn answer_in<'m>(&self, msgs: &'m Messages) -> Option<Json<'m>> {
        let is_answer = |m: &Json<'_>| m.members().any(|(k, _)| k == "result" || k == "error");
        let first = msgs.iter().position(|m| is_answer(&m))?;
        let i = if msgs.iter().skip(first + 1).any(|m| is_answer(&m)) {
            self.with_request_id(|id| msgs.iter().position(|m| tape::answers(m, id)))
                .unwrap_or(first)
        } else {
            first
        };
        msgs.get(i)
    }

    /// The answer ([`answer`](Self::answer)), borrowed from the bundle's memo for as long
    /// as the bundle lives; a value of its own only when the memo does not keep this
    /// body's parse (a body over 256 KiB, an exchange read without the bundle).
    pub fn answer_cow(&self) -> Option<Cow<'a, Value>> {
        let i = self.answer_index()?;
        match self.response_memo() {
            Some(c) => self.memo_messages(c).get(i).map(Cow::Borrowed),
            None => self.parse_messages().into_iter().nth(i).map(Cow::Owned),
        }
    }

    /// `f` on the head of the answer ([`answer`](Self::answer)): its `id`, whether it has
    /// a (null) `result` and that result's outline, and its `error`
    /// ([`derive::MessageHead`]). When the messages are
    /// not parsed yet, read by a scan of the body that builds only those members
    /// ([`derive::message_heads_in`]), for a reader that needs no more of the answer; else
    /// (a body the scan cannot tell of, HTTP+SSE, messages already parsed) from the
    /// messages.
    pub fn with_answer_head<T>(&self, f: impl FnOnce(Option<&derive::MessageHead>) -> T) -> T {
        f(self.answer_head_cow().as_deref())
    }

    /// The head of the answer, as [`with_answer_head`](Self::with_answer_head) reads
    /// it: borrowed from the bundle's memo when the memo keeps the heads, else the head
    /// read for this call (taken out of the scan's list, or read from the parsed answer),
    /// not a copy.
    pub fn answer_head_cow(&self) -> Option<Cow<'a, derive::MessageHead>> {
        // As `answer_index`: the answer to the request's id, else the first answer. With
        // at most one answer among the heads that is the one either way, and the request's
        // id is not read.
        let answer_of = |heads: &[derive::MessageHead]| {
            let first = heads.iter().position(|m| m.is_answer())?;
            if !heads[first + 1..].iter().any(|m| m.is_answer()) {
                return Some(first);
            }
            self.with_request_id(|id| {
                heads
                    .iter()
                    .position(|m| m.id.as_ref() == Some(id) && m.is_answer())
                    .or(Some(first))
            })
        };
        match self.response_memo() {
            // The heads are read in place from the memo (not copied out of it).
            Some(c) if c.messages.get().is_none() => {
                if let Some(heads) = c.heads.get_or_init(|| self.heads_in(c)).as_deref() {
                    return answer_of(heads).map(|i| Cow::Borrowed(&heads[i]));
                }
            }
            Some(_) => {}
            None => {
                if let Some(mut heads) = self.skim() {
                    return answer_of(&heads).map(|i| Cow::Owned(heads.swap_remove(i)));
                }
            }
        }
        self.with_answer(|a| a.map(derive::MessageHead::of))
            .map(Cow::Owned)
    }

    /// The heads of the messages for the memo `c`: read from their tapes when the list
    /// pages' reading made them ([`tapes`](Self::tapes): the same messages, HTTP+SSE's
    /// included), else by a scan ([`skim`](Self::skim)).
    fn heads_in(&self, c: &Memo) -> Option<Vec<derive::MessageHead>> {
        match c.tapes.get() {
            Some(msgs) => Some(msgs.iter().map(tape::head_of).collect()),
            None => self.skim(),
        }
    }

    /// The heads of the messages read by a scan of the body
    /// ([`derive::message_heads_in`]); `None` when the scan cannot tell of the body, and
    /// on HTTP+SSE (whose answer is also on the stream).
    fn skim(&self) -> Option<Vec<derive::MessageHead>> {
        if self.stream.is_some() {
            return None;
        }
        // As `parse_messages`: no response or a body cut is no message at all.
        let Some(r) = self
            .response()
            .filter(|r| derive::body_cut(&r.body).is_none())
        else {
            return Some(Vec::new());
        };
        // Only whether the body is an event stream matters, told without building the
        // media type's string.
        let sse = derive::media_type_is(&r.headers, "text/event-stream");
        derive::message_heads_in(sse.then_some("text/event-stream"), &r.body.bytes)
    }

    /// `f` on the heads of the messages ([`derive::MessageHead`]) when the messages are
    /// not parsed whole: read by a scan of the body ([`derive::message_heads_in`]), kept
    /// in the bundle's memo for every later reader of a head, or read there when a reader
    /// of the answer's head ([`with_answer_head`](Self::with_answer_head)) scanned it
    /// first. `None` (and `f` not called) when the messages are parsed already, when the
    /// scan cannot tell of the body and on HTTP+SSE, for the caller to read
    /// [`with_messages`](Self::with_messages).
    pub fn with_message_heads<T>(&self, f: impl FnOnce(&[derive::MessageHead]) -> T) -> Option<T> {
        match self.response_memo() {
            Some(c) if c.messages.get().is_none() => {
                c.heads.get_or_init(|| self.heads_in(c)).as_deref().map(f)
            }
            Some(_) => None,
            None => self.skim().as_deref().map(f),
        }
    }

    /// `f` on the answer ([`answer`](Self::answer)), read from the bundle's memo without
    /// copying it.
    pub fn with_answer<T>(&self, f: impl FnOnce(Option<&Value>) -> T) -> T {
        let i = self.answer_index();
        self.with_messages(|msgs| f(i.and_then(|i| msgs.get(i))))
    }
    /// The response, if one arrived.
    pub fn response(&self) -> Option<&'a HttpResponse> {
        match &self.http.outcome {
            HttpOutcome::Response(r) => Some(r),
            HttpOutcome::Error(_) => None,
        }
    }

    /// Why the response body is not an answer (it ended in a transport error, at the
    /// read limit, or only its head was read), naming the record; `None` when it is
    /// whole or no response arrived. [`messages`](Self::messages) and
    /// [`answer`](Self::answer) read nothing from such a body.
    pub fn cut(&self) -> Option<String> {
        if let Some(why) = derive::body_cut(&self.response()?.body) {
            return Some(crate::format_exact!("record {}: {why}", self.record.seq));
        }
        // HTTP+SSE: an event of its answer stored cut, or the POST was accepted but its
        // answer never came on the stream.
        let s = self.stream?;
        if let Some(why) = &s.cut {
            return Some(crate::format_exact!("record {}: {why}", self.record.seq));
        }
        let e = s.error.as_ref().filter(|_| {
            let id = self.request_id_sent();
            id.is_none_or(|id| derive::response_to(&s.messages, &id).is_none())
        })?;
        Some(crate::format_exact!(
            "record {}: no answer arrived on the event stream ({e})",
            self.record.seq
        ))
    }

    /// As [`cut`](Self::cut), and also a body the bundle bound stored as its length and
    /// SHA-256 only (`capped_from`: the bundle's `run.bundle_capped_from`).
    pub fn unreadable(&self, capped_from: Option<u64>) -> Option<String> {
        if let Some(cut) = self.cut() {
            return Some(cut);
        }
        let body = &self.response()?.body;
        let stripped = capped_from.is_some_and(|from| self.record.seq >= from)
            && (body.bytes.len() as u64) < body.length;
        stripped.then(|| {
            crate::format_exact!(
                "record {}: the body ({} bytes) was stored as its length and SHA-256 only: the bundle bound \
                 (--bundle-cap) was reached at record {}",
                self.record.seq,
                body.length,
                capped_from.unwrap_or_default()
            )
        })
    }

    /// The response body parsed as one JSON document (OAuth and error bodies), only
    /// when the body ended whole: a body cut by a transport error or the read limit is
    /// not the server's answer, whatever its stored bytes parse to.
    pub fn body_json(&self) -> Option<Value> {
        self.body_json_cow().map(Cow::into_owned)
    }

    /// [`body_json`](Self::body_json), borrowed from the bundle's memo for as long as
    /// the bundle lives; a value of its own only when the memo does not keep this body's
    /// parse (a body over 256 KiB, an exchange read without the bundle).
    pub fn body_json_cow(&self) -> Option<Cow<'a, Value>> {
        let parse = || {
            let r = self.response()?;
            if derive::body_cut(&r.body).is_some() {
                return None;
            }
            serde_json::from_slice(&r.body.bytes).ok()
        };
        match self.response_memo() {
            Some(c) => c.body.get_or_init(parse).as_ref().map(Cow::Borrowed),
            None => parse().map(Cow::Owned),
        }
    }

    /// HTTP status, if a response arrived.
    pub fn status(&self) -> Option<u16> {
        self.response().map(|r| r.status)
    }

    /// Every JSON-RPC message in the response (none from a body that did not end whole).
    pub fn messages(&self) -> Vec<Value> {
        self.with_messages(<[Value]>::to_vec)
    }

    /// The JSON-RPC request body sent.
    pub fn request_json(&self) -> Option<Value> {
        self.with_request(|r| r.cloned())
    }

    /// The response to the request's id (for a null id: the first error/result message
    /// carrying `"id": null`, or the only message). `None` from a body that did not end
    /// whole: see [`cut`](Self::cut).
    pub fn answer(&self) -> Option<Value> {
        self.with_answer(|a| a.cloned())
    }

    /// A response header value (first), as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.response()
            .and_then(|r| derive::header(&r.headers, name))
            .map(|h| h.value_str().into_owned())
    }

    /// Seq of the record.
    pub fn seq(&self) -> u64 {
        self.record.seq
    }

    /// True when the exchange is a stdio exchange ([`stdio_as_exchange`]).
    pub fn is_stdio(&self) -> bool {
        self.http.request.method == STDIO_METHOD
    }

    /// How the answer is named in evidence: `HTTP 400 (application/json)`, or `stdio`
    /// for a stdio exchange (which has no status).
    pub fn status_label(&self) -> Option<String> {
        let r = self.response()?;
        let ct_len = if self.is_stdio() {
            0
        } else {
            derive::header(&r.headers, mcp_probe_schema::vocab::header::CONTENT_TYPE)
                .map_or(0, |h| h.value.len())
        };
        let mut label = String::with_capacity(40 + ct_len);
        self.push_status_label(&mut label);
        Some(label)
    }

    /// [`status_label`](Self::status_label), written at the end of `out` (nothing when
    /// no response arrived): a reader that names the answer inside a longer text writes
    /// the label there, with no string of its own.
    pub fn push_status_label(&self, out: &mut String) {
        let Some(r) = self.response() else {
            return;
        };
        if self.is_stdio() {
            out.push_str("stdio");
            return;
        }
        // No formatting machinery, no copy of the header's value or of its escaped text:
        // grading names many answers.
        let ct = derive::header(&r.headers, mcp_probe_schema::vocab::header::CONTENT_TYPE)
            .map(|h| h.value_str());
        out.push_str("HTTP ");
        out.push_str(itoa::Buffer::new().format(r.status));
        match ct {
            Some(ct) => {
                out.push_str(" (");
                crate::fmt::escape_line_into(out, &ct);
                out.push(')');
            }
            None => out.push_str(" (no Content-Type)"),
        }
    }
}

impl Bundle {
    /// Wrap a verified bundle.
    pub fn new(path: impl Into<String>, v: Verified) -> Bundle {
        let stdio = v
            .records
            .iter()
            .map(|r| match &r.observation {
                Observation::Stdio(x) => Some(stdio_as_exchange(x)),
                _ => None,
            })
            .collect();
        let streamed = Arc::new(derive::stream_answers(&v.records));
        let by_leg = Arc::new(leg_index(&v.records));
        let mut ev = Bundle {
            by_leg,
            stdio: Arc::new(stdio),
            streamed,
            path: path.into(),
            signer: v.signer.key_id(),
            payload: Arc::new(v.evidence),
            parsed: Arc::new((0..v.records.len()).map(|_| Memo::default()).collect()),
            records: Arc::new(v.records),
            inventory: Arc::default(),
            era_view: None,
            by_leg_on_era: Arc::default(),
            views: Views::default(),
        };
        // The list pages are read through the memo: parsed once, for the inventory and
        // for every check that reads them again; the inventory shares the parsed pages
        // rather than copy their items.
        let inventory = {
            let records = Arc::clone(&ev.records);
            derive::inventory_of(&records, &mut |k, key, items: &mut SharedItems| {
                let x = records.get(k).and_then(|r| ev.exchange_of(r))?;
                let msgs = x.tapes();
                let (answer, last) = x.with_request_id(|id| tape::list_page(&msgs, id))?;
                items.push_page(msgs, answer, key);
                Some(last)
            })
        };
        ev.inventory = Arc::new(inventory);
        ev
    }

    /// The bundle as seen from each other era the server served (`session.other_eras`):
    /// the same records, with that era's session standing in for the negotiated one and
    /// the legs of [`family::PER_ERA`] read from their `@<revision>` records. Cheap: the
    /// records and their parsed messages are shared.
    pub fn other_eras(&self) -> Vec<Bundle> {
        let Some(primary) = self.payload.session.as_ref() else {
            return Vec::new();
        };
        primary
            .other_eras
            .iter()
            .map(|o| {
                // The primary session's fields, with the era's own in their place: its
                // other eras (the largest part) are neither cloned nor kept.
                let session = Session {
                    endpoint: primary.endpoint.clone(),
                    auth_required: primary.auth_required,
                    authenticated: primary.authenticated,
                    era: Some(o.era),
                    revision: Some(o.revision.clone()),
                    server_info: o.server_info.clone(),
                    capabilities: o.capabilities.clone(),
                    session_id: o.session_id.clone(),
                    negotiated_in: Some(o.negotiated_in),
                    other_eras: Vec::new(),
                    authorization_defaults: primary.authorization_defaults.clone(),
                    step_up: primary.step_up.clone(),
                    resource_refused_in: primary.resource_refused_in,
                    dpop: primary.dpop.clone(),
                };
                Bundle {
                    path: self.path.clone(),
                    payload: Arc::clone(&self.payload),
                    records: Arc::clone(&self.records),
                    signer: self.signer.clone(),
                    inventory: Arc::clone(&self.inventory),
                    parsed: Arc::clone(&self.parsed),
                    stdio: Arc::clone(&self.stdio),
                    era_view: Some((session, o.revision.clone())),
                    streamed: Arc::clone(&self.streamed),
                    by_leg: Arc::clone(&self.by_leg),
                    by_leg_on_era: Arc::new(self.by_leg.on_revision(&o.revision)),
                    views: Views::default(),
                }
            })
            .collect()
    }

    /// The payload, to change (tests and fixtures): a copy of its own when era views
    /// share it.
    pub fn payload_mut(&mut self) -> &mut Payload {
        Arc::make_mut(&mut self.payload)
    }

    /// The revision of the other era this is a view of (`None` on the bundle itself).
    pub fn era_view(&self) -> Option<&str> {
        self.era_view.as_ref().map(|(_, r)| r.as_str())
    }

    /// The exchange of `record` (a record of this bundle), reading through the bundle's
    /// memo of parsed messages. `None` when it is not an HTTP record.
    pub fn exchange_of<'a>(&'a self, record: &'a Record) -> Option<Exchange<'a>> {
        let own = || {
            self.records
                .get(record.seq as usize)
                .is_some_and(|r| std::ptr::eq(r, record))
        };
        let http = match &record.observation {
            Observation::Http(http) => http,
            Observation::Stdio(_) if own() => self
                .stdio
                .get(record.seq as usize)
                .and_then(Option::as_ref)?,
            _ => return None,
        };
        let cache = usize::try_from(record.seq)
            .ok()
            .and_then(|i| self.parsed.get(i))
            .filter(|_| {
                self.records
                    .get(record.seq as usize)
                    .is_some_and(|r| std::ptr::eq(r, record))
            });
        Some(Exchange {
            record,
            http,
            cache,
            stream: self.streamed.get(&record.seq),
        })
    }

    /// The session, if an endpoint answered.
    pub fn session(&self) -> Option<&Session> {
        match &self.era_view {
            Some((s, _)) => Some(s),
            None => self.payload.session.as_ref(),
        }
    }

    /// The endpoint URL, else the target as typed.
    pub fn endpoint(&self) -> String {
        self.payload
            .target
            .endpoint
            .clone()
            .unwrap_or_else(|| self.payload.target.as_typed.clone())
    }

    /// The negotiated revision.
    pub fn revision(&self) -> Option<&str> {
        self.session().and_then(|s| s.revision.as_deref())
    }

    /// True when 2026-07-28 was negotiated.
    pub fn is_modern(&self) -> bool {
        self.session().and_then(|s| s.era) == Some(Era::Modern)
    }

    /// The label used next to a server in reports: its revision, or `no-session`.
    pub fn revision_label(&self) -> String {
        self.revision().unwrap_or("no-session").to_string()
    }

    /// Transport name for reported-only checks.
    pub fn transport(&self) -> &'static str {
        if self.payload.target.endpoint.is_some() || self.is_stdio() {
            self.payload.target.transport.label()
        } else {
            "unknown"
        }
    }

    /// True when the collector launched the server and spoke over its stdin and stdout.
    pub fn is_stdio(&self) -> bool {
        self.payload.target.transport == Transport::Stdio
    }

    /// True when the endpoint spoke the legacy HTTP+SSE transport (2024-11-05).
    pub fn is_sse(&self) -> bool {
        self.payload.target.transport == mcp_probe_schema::model::Transport::HttpSse
    }

    /// The record numbered `seq` (records are numbered by position). Not a read of a
    /// leg: for following a reference a record makes (a stream's `GET`) or that an
    /// outcome holds (its decisive records), never for finding a leg's records, which
    /// [`Bundle::records_for`] reads.
    pub fn record(&self, seq: u64) -> Option<&Record> {
        self.records.get(usize::try_from(seq).ok()?)
    }

    /// Every HTTP record of the bundle, whatever leg it serves, in order, with its
    /// exchange. Not a read of a leg: for a rule whose subject is every answer the
    /// server gave (`lifecycle-metadata-recorded`) or every request to an origin
    /// (`tls-required` on a plain-http target); a leg's records are read through
    /// [`Bundle::records_for`].
    pub fn http_records(&self) -> impl Iterator<Item = (&Record, &HttpExchange)> + '_ {
        self.records.iter().filter_map(|r| match &r.observation {
            Observation::Http(x) => Some((r, x)),
            _ => None,
        })
    }

    /// Every stdio exchange of the bundle, in order, with its record. Not a read of a
    /// leg: stdout is one stream whatever request a line answers, so the lines of the
    /// run are read across every exchange (`stdio-logs-separated`, a null-id request's
    /// answer read up to a follow-up's); a leg's records are read through
    /// [`Bundle::records_for`].
    pub fn stdio_exchanges(&self) -> impl Iterator<Item = (&Record, &StdioExchange)> + '_ {
        self.records.iter().filter_map(|r| match &r.observation {
            Observation::Stdio(x) => Some((r, x)),
            _ => None,
        })
    }

    /// The process record of a stdio bundle (the launch the collector made) and its seq.
    /// Not a read of a leg: the bundle holds one, whatever legs were sent.
    pub fn stdio_process(&self) -> Option<(u64, &StdioProcess)> {
        self.records.iter().find_map(|r| match &r.observation {
            Observation::StdioProcess(p) => Some((r.seq, p)),
            _ => None,
        })
    }

    /// HTTP+SSE: every event record of the bundle's streams, in order, with its record.
    /// Not a read of a leg: for what the streams carried past a point (events counted
    /// past the bundle cap); a leg's records are read through [`Bundle::records_for`].
    pub fn sse_events(&self) -> impl Iterator<Item = (&Record, &SseEvent)> + '_ {
        self.records.iter().filter_map(|r| match &r.observation {
            Observation::SseEvent(e) => Some((r, e)),
            _ => None,
        })
    }

    /// How many records the bundle holds.
    pub fn record_count(&self) -> usize {
        self.records.len()
    }

    /// True when some record serves `leg`.
    pub fn has_leg(&self, leg: LegId) -> bool {
        self.records_for(leg).next().is_some()
    }

    /// Records serving `leg`, in order. Every read of a leg's records passes here, so
    /// [`track_leg_reads`] sees it.
    pub fn records_for(&self, leg: LegId) -> impl Iterator<Item = &Record> + '_ {
        note_read(leg);
        let index = if self.era_view.is_some() && family::PER_ERA.contains(&leg) {
            &self.by_leg_on_era
        } else {
            &self.by_leg
        };
        index
            .get(leg.as_str())
            .iter()
            .filter_map(|&i| self.records.get(i as usize))
    }

    /// The view of type `T` of this bundle view: `derive` runs on the first asking,
    /// every later one reads what it derived (a check reads it as derived for an earlier
    /// check, not derived again). Each asking counts as a read of the legs the
    /// derivation read (through [`Bundle::records_for`]), so [`track_leg_reads`] sees the
    /// same reads from every check, the first or not.
    pub fn view<T: Any + Send + Sync>(&self, derive: impl FnOnce(&Bundle) -> T) -> Arc<T> {
        let id = TypeId::of::<T>();
        let held = |views: &[(TypeId, DerivedView)]| {
            views.iter().find(|(t, _)| *t == id).map(|(_, v)| v.clone())
        };
        let found = self.views.0.lock().ok().and_then(|v| held(&v));
        let (view, legs) = match found {
            Some(v) => v,
            None => {
                // Derived with the lock released: a derivation may ask for another view.
                let (view, legs) = track_leg_reads(|| derive(self));
                let made: DerivedView = (Arc::new(view), Arc::new(legs));
                match self.views.0.lock() {
                    Ok(mut v) => match held(&v) {
                        Some(first) => first,
                        None => {
                            v.push((id, made.clone()));
                            made
                        }
                    },
                    Err(_) => made,
                }
            }
        };
        for l in legs.iter() {
            note_read(*l);
        }
        view.downcast::<T>()
            .unwrap_or_else(|_| unreachable!("views are held by their type"))
    }

    /// HTTP exchanges serving `leg`, in order.
    pub fn exchanges(&self, leg: LegId) -> impl Iterator<Item = Exchange<'_>> + '_ {
        self.records_for(leg).filter_map(|r| self.exchange_of(r))
    }

    /// The skip reason recorded for `leg`, if it was skipped.
    pub fn skipped(&self, leg: LegId) -> Option<&str> {
        self.records_for(leg).find_map(|r| match &r.observation {
            Observation::Skipped { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    /// The server capabilities object.
    pub fn capabilities(&self) -> Option<&Value> {
        self.session().and_then(|s| s.capabilities.as_ref())
    }

    /// True when a credential was presented.
    pub fn authenticated(&self) -> bool {
        self.session().is_some_and(|s| s.authenticated)
    }

    /// The exchange whose response carried `x`'s answer: on HTTP+SSE the `GET` of the
    /// event stream its answer arrived on (its status and headers are those of the
    /// answer's transport; the POST's are an acknowledgement), else `x` itself.
    pub fn answer_carrier<'a>(&'a self, x: &Exchange<'a>) -> Exchange<'a> {
        x.stream
            .and_then(|s| s.stream)
            .and_then(|seq| self.record(seq))
            .and_then(|r| self.exchange_of(r))
            .unwrap_or(*x)
    }

    /// Seqs of every record of `leg`.
    pub fn seqs(&self, leg: LegId) -> Vec<u64> {
        self.records_for(leg).map(|r| r.seq).collect()
    }
}

thread_local! {
    static LEG_READS: RefCell<Option<BTreeSet<LegId>>> = const { RefCell::new(None) };
}

fn note_read(leg: LegId) {
    LEG_READS.with(|r| {
        if let Some(set) = r.borrow_mut().as_mut() {
            set.insert(leg);
        }
    });
}

/// Run `f` and return, with its result, every leg whose records it read through an
/// [`Bundle`] on this thread (the leg contract test compares them with the check's
/// declaration).
pub fn track_leg_reads<T>(f: impl FnOnce() -> T) -> (T, BTreeSet<LegId>) {
    let outer = LEG_READS.with(|r| r.borrow_mut().replace(BTreeSet::new()));
    let out = f();
    let read = LEG_READS.with(|r| std::mem::replace(&mut *r.borrow_mut(), outer));
    (out, read.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange};

    #[test]
    fn status_labels_are_those_formatting_wrote() {
        let cts = [
            "application/json",
            "text/event-stream; charset=utf-8",
            "a\u{1b}[31mb\u{9b}",
        ];
        for status in [0u16, 7, 42, 200, 204, 404, 999, 1000, 10_000, 65_535] {
            let mut records: Vec<Record> = cts
                .iter()
                .map(|ct| exchange(&["endpoint.detect"], "{}", status, ct, "", &[]))
                .collect();
            let mut bare = exchange(&["endpoint.detect"], "{}", status, "", "", &[]);
            if let Observation::Http(x) = &mut bare.observation {
                if let mcp_probe_schema::model::HttpOutcome::Response(r) = &mut x.outcome {
                    r.headers.clear();
                }
            }
            records.push(bare);
            let ev = evidence(None, records);
            for k in 0..=cts.len() as u64 {
                let x = ev
                    .exchange_of(ev.record(k).expect("record"))
                    .expect("an exchange");
                let want = match x.header(mcp_probe_schema::vocab::header::CONTENT_TYPE) {
                    Some(ct) => format!("HTTP {status} ({})", crate::fmt::escape_line(&ct)),
                    None => format!("HTTP {status} (no Content-Type)"),
                };
                assert_eq!(x.status_label(), Some(want));
            }
        }
    }
    use mcp_probe_schema::model::{BodyEnd, ErrorKind, TransportError};

    const REQ: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#;
    const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#;

    fn ended(end: BodyEnd) -> Record {
        let mut r = exchange(
            &["endpoint.detect"],
            REQ,
            200,
            "application/json",
            ANSWER,
            &[],
        );
        if let Observation::Http(x) = &mut r.observation {
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                resp.body.end = end;
            }
        }
        r
    }

    /// A leg of [`family::PER_ERA`] read on another era's view is read from its
    /// `<leg>@<revision>` records, any other leg from its own; the bundle itself reads
    /// each leg's own records.
    #[test]
    fn an_era_view_reads_the_per_era_legs_of_its_revision() {
        use mcp_probe_schema::model::{Era, EraSession};
        use mcp_probe_schema::vocab::leg;
        let per_era = leg::AUTH_NONE;
        assert!(family::PER_ERA.contains(&per_era));
        let other = leg::ENDPOINT_DETECT;
        assert!(!family::PER_ERA.contains(&other));
        let on = |l: LegId, rev: &str| format!("{}@{rev}", l.as_str());
        let rec = |legs: &[&str]| exchange(legs, REQ, 200, "application/json", ANSWER, &[]);
        let mut s = crate::fixture::session(Some("2026-07-28"), serde_json::json!({}), None);
        s.other_eras = ["2025-11-25", "2025-06-18"]
            .map(|rev| EraSession {
                era: Era::Legacy,
                revision: rev.into(),
                server_info: None,
                capabilities: None,
                session_id: None,
                negotiated_in: 0,
            })
            .into();
        let ev = evidence(
            Some(s),
            vec![
                rec(&[per_era.as_str(), other.as_str()]),
                rec(&[&on(per_era, "2025-11-25")]),
                rec(&[&on(per_era, "2025-06-18"), &on(other, "2025-06-18")]),
                rec(&[&on(per_era, "2025-11-25")]),
            ],
        );
        let seqs = |b: &Bundle, l: LegId| b.records_for(l).map(|r| r.seq).collect::<Vec<_>>();
        assert_eq!(seqs(&ev, per_era), [0]);
        assert_eq!(seqs(&ev, other), [0]);
        let eras = ev.other_eras();
        assert_eq!(eras[0].era_view(), Some("2025-11-25"));
        assert_eq!(seqs(&eras[0], per_era), [1, 3]);
        assert_eq!(seqs(&eras[0], other), [0]);
        assert_eq!(seqs(&eras[1], per_era), [2]);
        assert_eq!(seqs(&eras[1], other), [0]);
        assert!(!eras[1].has_leg(leg::AUTH_WITH));
    }

    /// An era view's session is the primary session with the era's own fields in place
    /// and no other eras (what cloning the primary and replacing them gave), and the view
    /// shares the bundle's payload.
    #[test]
    fn an_era_view_has_the_session_a_clone_of_the_primary_would() {
        use mcp_probe_schema::model::{Era, EraSession};
        let mut s = crate::fixture::session(
            Some("2026-07-28"),
            serde_json::json!({"tools": {}}),
            Some(serde_json::json!({"name": "primary", "version": "2"})),
        );
        s.session_id = Some("sid-1".into());
        s.auth_required = true;
        s.resource_refused_in = Some(4);
        s.other_eras = vec![EraSession {
            era: Era::Legacy,
            revision: "2025-11-25".into(),
            server_info: Some(serde_json::json!({"name": "x", "version": "1"})),
            capabilities: Some(serde_json::json!({"resources": {}})),
            session_id: Some("sid-2".into()),
            negotiated_in: 7,
        }];
        let ev = evidence(Some(s.clone()), vec![ended(BodyEnd::Complete)]);
        let o = &s.other_eras[0];
        let mut want = s.clone();
        want.other_eras = Vec::new();
        want.era = Some(o.era);
        want.revision = Some(o.revision.clone());
        want.server_info = o.server_info.clone();
        want.capabilities = o.capabilities.clone();
        want.session_id = o.session_id.clone();
        want.negotiated_in = Some(o.negotiated_in);
        let eras = ev.other_eras();
        assert_eq!(eras.len(), 1);
        assert_eq!(eras[0].session(), Some(&want));
        assert!(Arc::ptr_eq(&eras[0].payload, &ev.payload));
        assert_eq!(ev.session(), Some(&s));
    }

    #[test]
    fn only_a_body_that_ended_whole_is_an_answer() {
        let ev = evidence(None, vec![ended(BodyEnd::Complete)]);
        let x = ev.exchange_of(ev.record(0).expect("record")).expect("http");
        assert_eq!(
            x.answer().expect("answer")["result"]["protocolVersion"],
            "2025-11-25"
        );
        assert_eq!(x.messages().len(), 1);
        assert!(x.body_json().is_some());
        assert_eq!(x.cut(), None);

        let reset = BodyEnd::Error(TransportError {
            kind: ErrorKind::Reset,
            message: "connection closed inside a chunk".into(),
        });
        for end in [reset, BodyEnd::LimitReached, BodyEnd::HeadOnly] {
            let ev = evidence(None, vec![ended(end.clone())]);
            let x = ev.exchange_of(ev.record(0).expect("record")).expect("http");
            // The stored bytes hold a whole result, but the body did not end whole.
            assert_eq!(x.answer(), None, "{end:?}");
            assert!(x.messages().is_empty(), "{end:?}");
            assert_eq!(x.body_json(), None, "{end:?}");
            let cut = x.cut().expect("named");
            assert!(cut.starts_with("record 0: "), "{cut}");
            assert_eq!(x.unreadable(None).as_deref(), Some(cut.as_str()));
        }
    }

    /// The answer chosen without reading the request's id when at most one message
    /// answers is the one chosen by the id, then by order, as before: crafted answers
    /// (ids that match, differ, repeat or change type; batches with several answers;
    /// notifications only; not JSON) and every exchange of the examples, read from the
    /// parsed messages and from the scanned heads.
    #[test]
    fn the_answer_is_chosen_as_the_request_id_chooses_it() {
        let by_id = |msgs: &[Value], id: &Value| {
            derive::response_to(msgs, id)
                .or_else(|| {
                    msgs.iter()
                        .find(|m| m.get("result").is_some() || m.get("error").is_some())
                })
                .and_then(|a| msgs.iter().position(|m| std::ptr::eq(m, a)))
        };
        let head_by_id = |heads: &[derive::MessageHead], id: &Value| {
            heads
                .iter()
                .position(|m| m.id.as_ref() == Some(id) && m.is_answer())
                .or_else(|| heads.iter().position(|m| m.is_answer()))
        };
        let requests = [
            r#"{"id":1,"method":"ping"}"#,
            r#"{"id":"1","method":"ping"}"#,
            r#"{"id":1,"id":3,"method":"ping"}"#,
            r#"{"method":"ping"}"#,
            "not json",
        ];
        let answers = [
            r#"{"id":2,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"[{"id":2,"result":{}},{"id":1,"error":{"code":1}}]"#,
            r#"[{"id":2,"result":{}},{"id":3,"result":{"tools":[]}}]"#,
            r#"[{"method":"n"},{"id":1,"result":null}]"#,
            r#"[{"id":1,"result":1},{"id":1,"error":{}}]"#,
            r#"[{"id":"1","result":1},{"id":1,"result":2},{"id":3,"error":3}]"#,
            r#"{"id":1,"id":3,"result":{},"result":null}"#,
            r#"{"method":"notifications/x"}"#,
            "[]",
            "<html>",
        ];
        let mut bundles = Vec::new();
        for req in requests {
            for ans in answers {
                let r = || exchange(&["endpoint.detect"], req, 200, "application/json", ans, &[]);
                bundles.push(evidence(None, vec![r()]));
            }
        }
        bundles.extend(crate::fixture::example_bundles());
        let mut read = 0;
        for ev in &bundles {
            for (record, http) in ev.http_records() {
                let x = ev.exchange_of(record).expect("http");
                // The heads first (the memo's messages not parsed yet), then the messages.
                let id = x.request_id();
                if let Some(heads) = x.with_message_heads(<[derive::MessageHead]>::to_vec) {
                    let want = head_by_id(&heads, &id).map(|i| heads[i].clone());
                    assert_eq!(x.answer_head_cow().map(Cow::into_owned), want);
                }
                let msgs = x.messages();
                let want = by_id(&msgs, &id).map(|i| msgs[i].clone());
                assert_eq!(x.answer(), want);
                assert_eq!(Exchange::new(record, http).answer(), want);
                read += 1;
            }
        }
        assert!(read >= 500, "only {read} exchanges read");
    }

    /// The answer's head borrowed from the memo is the head read without the memo (taken
    /// out of a scan of its own) and, once the messages are parsed, the head of the
    /// parsed answer: every exchange of the examples.
    #[test]
    fn an_answer_head_borrowed_from_the_memo_is_the_one_read_for_a_copy() {
        let mut heads = 0;
        let twice = crate::fixture::example_bundles();
        for (scanned, parsed) in crate::fixture::example_bundles().iter().zip(&twice) {
            for (record, http) in scanned.http_records() {
                let x = scanned.exchange_of(record).expect("http");
                let memo = x.answer_head_cow();
                if x.stream.is_none() {
                    assert_eq!(memo, Exchange::new(record, http).answer_head_cow());
                }
                let y = parsed.exchange_of(parsed.record(record.seq).expect("record"));
                let y = y.expect("http");
                y.with_messages(|_| ());
                let whole = y.answer().map(|a| derive::MessageHead::of(&a));
                assert_eq!(y.answer_head_cow().map(Cow::into_owned), whole);
                assert_eq!(memo.map(Cow::into_owned), whole, "{}", scanned.path);
                heads += 1;
            }
        }
        assert!(heads >= 500, "only {heads} heads read");
    }

    /// The body borrowed from the memo is the body parsed as it was parsed for a copy:
    /// every exchange of the examples (read twice, the second from the memo), and cut,
    /// malformed, duplicate-name, non-UTF-8 and deeply nested bodies.
    #[test]
    fn a_body_borrowed_from_the_memo_is_the_body_parsed() {
        let reference = |x: &Exchange<'_>| -> Option<Value> {
            let r = x.response()?;
            if derive::body_cut(&r.body).is_some() {
                return None;
            }
            serde_json::from_slice(&r.body.bytes).ok()
        };
        let mut bundles = crate::fixture::example_bundles();
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let bodies: Vec<Vec<u8>> = vec![
            br#"{"error":"a","error":"invalid_scope","access_token":"t"}"#.to_vec(),
            br#"{"error":"a","error":7}"#.to_vec(),
            br#"{"issuer":"x""#.to_vec(),
            b"{\"issuer\":\"\xff\"}".to_vec(),
            deep.into_bytes(),
            b"".to_vec(),
        ];
        let records = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut r = mcp_probe_schema::testkit::http_record(
                    &["oauth.token"],
                    crate::fixture::ENDPOINT,
                    "{}",
                    400,
                    b,
                );
                r.seq = i as u64;
                r
            })
            .collect();
        bundles.push(evidence(None, records));
        bundles.push(evidence(None, vec![ended(BodyEnd::LimitReached)]));
        let mut read = 0;
        for ev in &bundles {
            for (record, http) in ev.http_records() {
                let want = reference(&Exchange::new(record, http));
                let x = ev.exchange_of(record).expect("http");
                for _ in 0..2 {
                    assert_eq!(x.body_json_cow().as_deref(), want.as_ref());
                    assert_eq!(x.body_json(), want);
                }
                assert_eq!(
                    Exchange::new(record, http).body_json_cow().as_deref(),
                    want.as_ref()
                );
                read += 1;
            }
        }
        assert!(read >= 500, "only {read} bodies read");
    }

    #[test]
    fn a_stdio_exchange_reads_as_an_exchange_named_stdio() {
        use crate::fixture::{stdio_evidence, stdio_record};
        let ev = stdio_evidence(
            None,
            vec![
                stdio_record(
                    &["endpoint.detect"],
                    Some(REQ),
                    &[
                        "a log line",
                        r#"{"jsonrpc":"2.0","method":"notifications/message"}"#,
                        ANSWER,
                    ],
                ),
                stdio_record(&["stdio.stream"], None, &["late"]),
            ],
        );
        let x = ev
            .exchange_of(ev.record(0).expect("record"))
            .expect("stdio read as an exchange");
        assert!(x.is_stdio());
        assert_eq!(x.status_label().as_deref(), Some("stdio"));
        assert_eq!(
            x.answer().expect("answer")["result"]["protocolVersion"],
            "2025-11-25"
        );
        // The log line is not part of the answer; the notification is.
        assert_eq!(x.messages().len(), 2);
        assert_eq!(x.request_json().expect("sent")["method"], "initialize");
        let stream = ev
            .exchange_of(ev.record(1).expect("record"))
            .expect("stream record");
        assert_eq!(stream.answer(), None);
    }

    #[test]
    fn a_body_stripped_by_the_bundle_bound_is_named() {
        let mut r = ended(BodyEnd::Complete);
        if let Observation::Http(x) = &mut r.observation {
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                resp.body.bytes.clear();
            }
        }
        let ev = evidence(None, vec![r]);
        let x = ev.exchange_of(ev.record(0).expect("record")).expect("http");
        assert_eq!(x.unreadable(Some(1)), None, "before the cap");
        let why = x.unreadable(Some(0)).expect("stripped");
        assert!(
            why.contains("bundle bound (--bundle-cap) was reached at record 0"),
            "{why}"
        );
    }

    /// An HTTP+SSE bundle: the stream's GET (record 0, head only), its endpoint event,
    /// a tools/list POST acknowledged 202, then `after` (records naming the POST, seq 2).
    fn sse_bundle(after: Vec<Record>) -> Bundle {
        use mcp_probe_schema::vocab::leg;
        let mut get = exchange(
            &[leg::ENDPOINT_SSE],
            "",
            200,
            "text/event-stream",
            "",
            &[("cache-control", "no-store")],
        );
        if let Observation::Http(x) = &mut get.observation {
            x.request.method = "GET".into();
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                resp.body.end = BodyEnd::HeadOnly;
            }
        }
        let post = exchange(
            &[leg::INVENTORY_TOOLS],
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#,
            202,
            "text/plain",
            "Accepted",
            &[],
        );
        let mut records = vec![
            get,
            sse(&[leg::ENDPOINT_SSE], None, "/messages/?session_id=1", None),
            post,
        ];
        records.extend(after);
        let mut ev = evidence(None, records);
        ev.payload_mut().target.transport = mcp_probe_schema::model::Transport::HttpSse;
        ev.payload_mut().target.endpoint = Some("http://127.0.0.1:8080/sse".into());
        ev
    }

    fn sse(
        legs: &[LegId],
        request: Option<u64>,
        data: &str,
        error: Option<TransportError>,
    ) -> Record {
        let mut r = crate::fixture::skipped(legs, "");
        r.observation = Observation::SseEvent(mcp_probe_schema::model::SseEvent {
            stream: 0,
            request,
            event: if request.is_none() {
                Some("endpoint".into())
            } else {
                None
            },
            data: data.into(),
            data_length: None,
            id: None,
            retry: None,
            error,
            unkept: None,
        });
        r
    }

    /// The inventory read through the memo is the one read straight from the records,
    /// on every example and earlier collector's bundle (paged lists, HTTP+SSE, stdio,
    /// refusals), and the pages it parsed are in the memo for the checks.
    #[test]
    fn the_inventory_read_through_the_memo_is_the_records_own() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for dir in std::iter::once(root.clone()).chain(
            std::fs::read_dir(root.join("compat"))
                .expect("examples/compat")
                .map(|e| e.expect("entry").path()),
        ) {
            if let Ok(list) = std::fs::read_dir(&dir) {
                files.extend(
                    list.map(|e| e.expect("entry").path())
                        .filter(|p| p.extension().is_some_and(|x| x == "mcpev")),
                );
            }
        }
        assert!(files.len() > 14, "the examples and the compat bundles");
        let mut paged = false;
        for f in files {
            let bytes = std::fs::read(&f).expect("read");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("verifies");
            let want = derive::inventory(&v.records);
            let ev = Bundle::new(f.display().to_string(), v);
            let shared = &ev.inventory;
            let copied = |l: &derive::ListInventory<SharedItems>| derive::ListInventory {
                observed: l.observed,
                items: l.items.to_vec(),
                pages: l.pages,
                complete: l.complete,
                stopped: l.stopped.clone(),
            };
            let got = Inventory {
                tools: copied(&shared.tools),
                resources: copied(&shared.resources),
                resource_templates: copied(&shared.resource_templates),
                prompts: copied(&shared.prompts),
            };
            assert_eq!(got, want, "{}", f.display());
            assert_eq!(shared.tools.items.len(), want.tools.items.len());
            paged |= want.tools.pages > 1;
            // Each page it read over HTTP is parsed in the memo (an ordinary bundle's
            // bodies are all short enough to keep).
            for r in ev.records.iter() {
                let Some(x) = ev.exchange_of(r) else { continue };
                let list = r.legs.iter().any(|l| l.starts_with("inventory."));
                if list && !x.is_stdio() && x.response().is_some() && x.cut().is_none() {
                    let memo = &ev.parsed[r.seq as usize];
                    assert!(memo.tapes.get().is_some(), "{} #{}", f.display(), r.seq);
                }
            }
        }
        assert!(paged, "a paged tool list among them");
    }

    #[test]
    fn on_http_sse_a_posts_answer_is_read_from_the_events_that_name_it() {
        use mcp_probe_schema::vocab::leg;
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"},{"name":"b"}]}}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        let ev = sse_bundle(vec![
            sse(&[leg::INVENTORY_TOOLS], Some(2), note, None),
            sse(&[leg::INVENTORY_TOOLS], Some(2), answer, None),
        ]);
        assert!(ev.is_sse());
        assert_eq!(ev.transport(), "http+sse");
        // The leg's exchange is the POST; its messages are the stream's, in order.
        let x = ev.exchanges(leg::INVENTORY_TOOLS).next().expect("the POST");
        assert_eq!(x.seq(), 2);
        assert_eq!(x.messages().len(), 2);
        assert_eq!(
            x.answer()
                .and_then(|a| a["result"]["tools"].as_array().map(Vec::len)),
            Some(2)
        );
        assert_eq!(x.cut(), None);
        assert_eq!(x.stream_seqs(), &[3, 4]);
        // Its status and headers stay the POST's; the carrier of the answer is the GET.
        assert_eq!(x.status(), Some(202));
        let carrier = ev.answer_carrier(&x);
        assert_eq!(carrier.seq(), 0);
        assert_eq!(carrier.header("cache-control").as_deref(), Some("no-store"));
        // The inventory reads the same answer.
        assert_eq!(ev.inventory.tools.items.len(), 2);
        assert!(ev.inventory.tools.complete);
    }

    #[test]
    fn on_http_sse_an_answer_that_never_came_is_named_not_read() {
        use mcp_probe_schema::vocab::leg;
        let timeout = TransportError {
            kind: ErrorKind::Timeout,
            message: "no awaited event on the stream within the per-request timeout (5 s)".into(),
        };
        let ev = sse_bundle(vec![sse(
            &[leg::INVENTORY_TOOLS],
            Some(2),
            "",
            Some(timeout),
        )]);
        let x = ev.exchanges(leg::INVENTORY_TOOLS).next().expect("the POST");
        assert_eq!(x.answer(), None);
        assert_eq!(x.stream_error().map(|e| e.kind), Some(ErrorKind::Timeout));
        let cut = x.cut().expect("named");
        assert!(
            cut.starts_with("record 2: no answer arrived on the event stream"),
            "{cut}"
        );
        assert!(!ev.inventory.tools.complete);
        // A Streamable HTTP bundle has no carrier but the exchange itself.
        let plain = evidence(None, vec![ended(BodyEnd::Complete)]);
        let y = plain
            .exchange_of(plain.record(0).expect("record"))
            .expect("http");
        assert_eq!(plain.answer_carrier(&y).seq(), 0);
        assert_eq!(y.stream_error(), None);
        assert!(!plain.is_sse());
    }
}
