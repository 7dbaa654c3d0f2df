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

/// The [`RequestHead`] of a request body, `None` when the body is not one JSON document:
/// exactly what parsing it as a `serde_json::Value` and reading `id` and `method` gives
/// (the same parser accepts the same bytes, recursion limit and number checks included),
/// without allocating the members it does not keep.
pub fn request_head(body: &[u8]) -> Option<RequestHead> {
    serde_json::from_slice::<head::Doc>(body).ok().map(|d| d.0)
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
    /// The list of leg `l`, when it is one of [`inventory::LISTS`]' legs.
    fn list_mut(&mut self, l: LegId) -> Option<&mut ListInventory> {
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
            Just("1e400".to_string()),
            Just("-0".to_string()),
            Just("18446744073709551616".to_string()),
            "[a-z\\\\\"é\u{1}]{0,6}".prop_map(|s| format!("{s:?}")),
            Just(r#""\ud800""#.to_string()),
        ];
        leaf.prop_recursive(5, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(
                    (
                        prop::sample::select(vec!["id", "method", "params", "x", "i\\u0064"]),
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn the_head_parse_agrees_with_the_value_parse(
            doc in json(),
            cut in any::<prop::sample::Index>(),
            flip in any::<(prop::sample::Index, u8)>(),
        ) {
            let body = doc.into_bytes();
            prop_assert_eq!(request_head(&body), by_value(&body));
            let short = &body[..cut.index(body.len() + 1)];
            prop_assert_eq!(request_head(short), by_value(short));
            let mut flipped = body.clone();
            if !flipped.is_empty() {
                let i = flip.0.index(flipped.len());
                flipped[i] ^= flip.1;
            }
            prop_assert_eq!(request_head(&flipped), by_value(&flipped));
        }
    }
}
