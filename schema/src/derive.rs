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
use crate::vocab::{inventory, leg, LegId};

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

/// Every JSON-RPC message in a response body: the events of an SSE body, or the JSON
/// body itself; arrays (batches) are flattened. Unparseable parts are skipped.
pub fn jsonrpc_messages(resp: &HttpResponse) -> Vec<Value> {
    messages_in(media_type(&resp.headers).as_deref(), &resp.body.bytes)
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
    } else if let Ok(v) = serde_json::from_slice::<Value>(body) {
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
    messages.iter().find(|m| {
        m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
    })
}

/// The `id` of the JSON-RPC request in a request body.
pub fn request_id(body: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(body)
        .ok()?
        .get("id")
        .cloned()
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

/// One list method's inventory.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ListInventory {
    /// At least one page was requested.
    pub observed: bool,
    /// Items of every page, in order.
    pub items: Vec<Value>,
    /// Pages read.
    pub pages: u32,
    /// The last page read had no `nextCursor`.
    pub complete: bool,
    /// Why reading stopped early (error, page bound, repeated cursor, skip reason).
    pub stopped: Option<String>,
}

/// The inventory across pages.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inventory {
    /// `tools/list`.
    pub tools: ListInventory,
    /// `resources/list`.
    pub resources: ListInventory,
    /// `resources/templates/list`.
    pub resource_templates: ListInventory,
    /// `prompts/list`.
    pub prompts: ListInventory,
}

/// The key of the item array in each list result.
pub fn list_key(leg_id: &str) -> Option<&'static str> {
    let l = LegId::parse(leg_id)?;
    inventory::LISTS.iter().find(|x| x.leg == l).map(|x| x.key)
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
    inventory_with(records, &mut |k, page| {
        let r = &records[k];
        let Observation::Http(x) = &r.observation else {
            return;
        };
        let HttpOutcome::Response(resp) = &x.outcome else {
            return;
        };
        let msgs = answer_messages(resp, streamed.get(&r.seq));
        let id = request_id(&x.request.body.bytes).unwrap_or(Value::Null);
        page(&msgs, &id);
    })
}

/// How [`inventory_with`] reads a list page sent over HTTP: given the record's index,
/// it calls the page with the answer's JSON-RPC messages ([`answer_messages`], with the
/// HTTP+SSE stream's for that request) and the request's id ([`request_id`], `null` when
/// it has none), the reading [`inventory()`] makes itself.
pub type PageReader<'a> = dyn FnMut(usize, &mut dyn FnMut(&[Value], &Value)) + 'a;

/// [`inventory()`], with the messages of each list page sent over HTTP read by `read`: a
/// reader that keeps what it parsed (the grader's memo of parsed bodies) parses each
/// page once for the inventory and every check.
pub fn inventory_with(records: &[Record], read: &mut PageReader<'_>) -> Inventory {
    let mut inv = Inventory::default();
    for (k, r) in records.iter().enumerate() {
        for l in &r.legs {
            let (Some(key), Some(list)) = (list_key(l), inv.list_mut(l)) else {
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
                    match response_to(&msgs, &id).and_then(|m| m.get("result")) {
                        Some(result) => {
                            list.pages += 1;
                            if let Some(Value::Array(items)) = result.get(key) {
                                list.items.extend(items.iter().cloned());
                            }
                            list.complete =
                                !matches!(result.get("nextCursor"), Some(Value::String(_)));
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
                        // The page's items and whether it was the last, if it has a result.
                        let mut page: Option<(Vec<Value>, bool)> = None;
                        read(k, &mut |msgs, id| {
                            page =
                                response_to(msgs, id)
                                    .and_then(|m| m.get("result"))
                                    .map(|result| {
                                        let items = match result.get(key) {
                                            Some(Value::Array(items)) => items.clone(),
                                            _ => Vec::new(),
                                        };
                                        let last = !matches!(
                                            result.get("nextCursor"),
                                            Some(Value::String(_))
                                        );
                                        (items, last)
                                    });
                        });
                        let Some((items, last)) = page else {
                            list.stopped = Some(format!(
                                "page {} answered HTTP {} without a result",
                                list.pages + 1,
                                resp.status
                            ));
                            list.complete = false;
                            continue;
                        };
                        list.pages += 1;
                        list.items.extend(items);
                        list.complete = last;
                    }
                },
                _ => {}
            }
        }
    }
    inv
}

impl Inventory {
    fn list_mut(&mut self, leg_id: &str) -> Option<&mut ListInventory> {
        match LegId::parse(leg_id)? {
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
