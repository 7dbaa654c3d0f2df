//! `mcp-grade show --har`: the HTTP records of a bundle as a HAR 1.2 log.
//!
//! One entry per HTTP record, in record order. A record whose request got no response
//! (transport error) becomes an entry with response status 0 and an `_error` object.
//! Custom fields (HAR allows `_`-prefixed ones): `_seq`, `_legs`, `_connection`,
//! `_redactions`, `_bodyEnd`, `_error`, and on HTTP+SSE `_sseEvents` (the stream's
//! events: on a POST those that belong to its request, on the stream's GET the rest,
//! each with `_seq`, `_legs`, `time`, `type`, `data`, `id`, `_error`); a request body that is not UTF-8 is base64 in
//! `postData.text` with `_encoding: "base64"`. `log.comment` says whether the bundle
//! verified. Header and cookie values in a bundle are already redacted.

use mcp_probe_schema::derive::header;
use mcp_probe_schema::model::*;
use serde_json::{json, Value};

use crate::fmt::{b64, millis_f64, utc_millis};
use crate::load::Loaded;
use crate::view::end_word;

/// The HAR document for a loaded bundle.
pub fn document(l: &Loaded) -> Value {
    let records: Vec<&Record> = l.records.iter().filter_map(|r| r.as_ref().ok()).collect();
    // HTTP+SSE: each stream event goes with the POST it belongs to, else with the GET
    // of its stream.
    let mut events: std::collections::BTreeMap<u64, Vec<Value>> = Default::default();
    for r in &records {
        if let Observation::SseEvent(e) = &r.observation {
            events
                .entry(e.request.unwrap_or(e.stream))
                .or_default()
                .push(sse_event(r, e));
        }
    }
    let entries: Vec<Value> = records
        .iter()
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => {
                let mut e = entry(r, x);
                if let Some(ev) = events.remove(&r.seq) {
                    e["_sseEvents"] = Value::Array(ev);
                }
                Some(e)
            }
            _ => None,
        })
        .collect();
    let mut comment = match &l.problem {
        None => format!(
            "verified mcp-evidence bundle, run {}, signer {}",
            l.evidence.run.run_id,
            l.signer.as_ref().map(|k| k.key_id()).unwrap_or_default()
        ),
        Some(p) => format!("UNVERIFIED bundle ({p}): content may have been altered"),
    };
    // HAR describes HTTP only: a stdio bundle's messages have no entry (show --json
    // holds them), and the log says so rather than looking empty by accident.
    let stdio = l
        .records
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .filter(|r| {
            matches!(
                r.observation,
                Observation::Stdio(_) | Observation::StdioProcess(_)
            )
        })
        .count();
    if stdio > 0 {
        comment.push_str(&format!(
            "; {stdio} stdio record(s) left out (HAR holds HTTP exchanges only; see show --json)"
        ));
    }
    json!({
        "log": {
            "version": "1.2",
            "creator": {"name": "mcp-grade", "version": env!("CARGO_PKG_VERSION")},
            "pages": [],
            "entries": entries,
            "comment": comment,
        }
    })
}

/// One HTTP+SSE stream record as an `_sseEvents` item.
fn sse_event(r: &Record, e: &SseEvent) -> Value {
    let mut v = json!({
        "_seq": r.seq,
        "_legs": r.legs,
        "time": utc_millis(r.started_at),
        "type": e.event.as_deref().unwrap_or("message"),
        "data": e.data,
    });
    if let Some(id) = &e.id {
        v["id"] = json!(id);
    }
    if let Some(err) = &e.error {
        v["_error"] = json!({"kind": err.kind.as_str(), "message": err.message});
    }
    if let Some(u) = &e.unkept {
        v["_unkept"] = json!({"events": u.events, "bytes": u.bytes, "jsonrpc": u.jsonrpc,
            "responses": u.responses, "sha256": hex::encode(&u.sha256),
            "first_at_us": u.first_at_us, "last_at_us": u.last_at_us});
    }
    v
}

fn headers(hs: &[Header]) -> Vec<Value> {
    hs.iter()
        .map(|h| json!({"name": h.name, "value": h.value_str()}))
        .collect()
}

fn mime(hs: &[Header]) -> String {
    header(hs, mcp_probe_schema::vocab::header::CONTENT_TYPE)
        .map(|h| h.value_str().into_owned())
        .unwrap_or_default()
}

fn entry(r: &Record, x: &HttpExchange) -> Value {
    let q = &x.request;
    let query: Vec<Value> = url::Url::parse(&q.url)
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| json!({"name": k, "value": v}))
                .collect()
        })
        .unwrap_or_default();
    let mut request = json!({
        "method": q.method,
        "url": q.url,
        "httpVersion": q.version,
        "cookies": [],
        "headers": headers(&q.headers),
        "queryString": query,
        "headersSize": -1,
        "bodySize": q.body.length,
    });
    if !q.body.bytes.is_empty() {
        let post = match std::str::from_utf8(&q.body.bytes) {
            Ok(t) => json!({"mimeType": mime(&q.headers), "text": t}),
            Err(_) => {
                json!({"mimeType": mime(&q.headers), "text": b64(&q.body.bytes), "_encoding": "base64"})
            }
        };
        request["postData"] = post;
    }
    let (response, error) = match &x.outcome {
        HttpOutcome::Response(resp) => (response(resp), None),
        HttpOutcome::Error(e) => (
            json!({
                "status": 0,
                "statusText": "",
                "httpVersion": "",
                "cookies": [],
                "headers": [],
                "content": {"size": 0, "mimeType": ""},
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": -1,
            }),
            Some(json!({"kind": e.kind.as_str(), "message": e.message})),
        ),
    };
    let ms = millis_f64(r.duration_us);
    let mut e = json!({
        "startedDateTime": utc_millis(r.started_at),
        "time": ms,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": ms, "receive": 0},
        "_seq": r.seq,
        "_legs": r.legs,
        "_connection": x.connection,
        "_redactions": r.redactions.iter().map(|x| json!({
            "location": x.location, "what": x.what, "fingerprint": x.fingerprint,
        })).collect::<Vec<_>>(),
    });
    if let Some(err) = error {
        e["_error"] = err;
    }
    e
}

fn response(r: &HttpResponse) -> Value {
    let b = &r.body;
    let mut content = json!({
        "size": b.length,
        "mimeType": mime(&r.headers),
    });
    if !b.bytes.is_empty() {
        match std::str::from_utf8(&b.bytes) {
            Ok(t) => content["text"] = t.into(),
            Err(_) => {
                content["text"] = b64(&b.bytes).into();
                content["encoding"] = "base64".into();
            }
        }
    }
    if (b.bytes.len() as u64) < b.length {
        content["comment"] = format!("{} of {} bytes stored", b.bytes.len(), b.length).into();
    }
    json!({
        "status": r.status,
        "statusText": r.reason,
        "httpVersion": r.version,
        "cookies": [],
        "headers": headers(&r.headers),
        "content": content,
        "redirectURL": header(&r.headers, mcp_probe_schema::vocab::header::LOCATION).map(|h| h.value_str().into_owned()).unwrap_or_default(),
        "headersSize": -1,
        "bodySize": b.length,
        "_bodyEnd": end_word(&b.end),
    })
}
