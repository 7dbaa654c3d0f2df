//! Stream events counted instead of stored (HTTP+SSE past the bundle cap,
//! docs/bundle.md "SseEvent"): the summary being filled, written as one `sse_event`
//! record with `unkept` before the next record of any kind and at sealing, so the
//! records stay in the order things were read and a deadline or a signal loses no count.

use mcp_probe_schema::model::{Observation, SseEvent, SseUnkept};
use mcp_probe_schema::vocab::LegId;
use sha2::{Digest, Sha256};

use super::Journal;

/// One counted event, as [`Journal::count_event`] takes it.
#[derive(Debug, Clone, Copy)]
pub struct CountedEvent<'a> {
    /// Seq of the stream's `GET` record.
    pub stream: u64,
    /// The request it belongs to (as `SseEvent::request` would say).
    pub request: Option<u64>,
    /// The legs its record would have carried.
    pub legs: &'a [LegId],
    /// When it arrived, UTC microseconds.
    pub at: i64,
    /// Its whole `data`, before redaction.
    pub data: &'a str,
    /// The data parsed as one JSON-RPC 2.0 message or batch.
    pub jsonrpc: bool,
    /// It is a JSON-RPC response (a `result` or an `error`).
    pub response: bool,
}

/// The summary being filled.
#[derive(Debug)]
pub(super) struct Filling {
    stream: u64,
    request: Option<u64>,
    legs: Vec<LegId>,
    started_at: i64,
    u: SseUnkept,
    hash: Sha256,
}

impl Filling {
    fn same_place(&self, e: &CountedEvent<'_>) -> bool {
        self.stream == e.stream && self.request == e.request && self.legs == e.legs
    }
}

impl Journal {
    /// True while stream events are stored as records: until the bundle cap was reached
    /// (`run.bundle_capped_from`). Past it, events other than a request's first answer
    /// are counted ([`Journal::count_event`]).
    pub fn stores_events(&self) -> bool {
        self.capped_from.is_none()
    }

    /// Count `e` in the summary record being filled; a summary for another request,
    /// legs or stream is written first.
    pub fn count_event(&mut self, e: CountedEvent<'_>) {
        if self
            .unkept_events
            .as_ref()
            .is_some_and(|f| !f.same_place(&e))
        {
            self.flush_unkept_events();
        }
        let f = self.unkept_events.get_or_insert_with(|| Filling {
            stream: e.stream,
            request: e.request,
            legs: e.legs.to_vec(),
            started_at: e.at,
            u: SseUnkept::default(),
            hash: Sha256::new(),
        });
        let at_us = u64::try_from(e.at.saturating_sub(f.started_at)).unwrap_or(0);
        f.u.events += 1;
        f.u.bytes += e.data.len() as u64;
        f.u.jsonrpc += u64::from(e.jsonrpc);
        f.u.responses += u64::from(e.response);
        f.u.last_at_us = f.u.last_at_us.max(at_us);
        f.hash.update((e.data.len() as u64).to_be_bytes());
        f.hash.update(e.data.as_bytes());
    }

    /// Write the summary being filled, if any, as an `sse_event` record with `unkept`.
    pub fn flush_unkept_events(&mut self) {
        let Some(mut f) = self.unkept_events.take() else {
            return;
        };
        f.u.sha256 = f.hash.finalize().to_vec();
        let observation = Observation::SseEvent(SseEvent {
            stream: f.stream,
            request: f.request,
            event: None,
            data: String::new(),
            // What a reader that does not know `unkept` reads: one event stored cut.
            data_length: Some(f.u.bytes),
            id: None,
            retry: None,
            error: None,
            unkept: Some(f.u),
        });
        self.record(&f.legs, f.started_at, 0, observation);
    }
}
