//! Stream events counted instead of stored (HTTP+SSE past the bundle cap,
//! docs/bundle.md "SseEvent"): the summary being filled, written as one `sse_event`
//! record with `unkept` before the next record of any kind and at sealing, so the
//! records stay in the order things were read and a deadline or a signal loses no count.

use mcp_probe_schema::model::{Observation, SseEvent, SseUnkept};
use mcp_probe_schema::vocab::LegId;
use sha2::{Digest, Sha256};

/// One counted event, as [`super::Journal::count_event`] takes it.
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
    /// The summary `e` starts (`e` is not counted yet).
    pub(super) fn new(e: &CountedEvent<'_>) -> Filling {
        Filling {
            stream: e.stream,
            request: e.request,
            legs: e.legs.to_vec(),
            started_at: e.at,
            u: SseUnkept::default(),
            hash: Sha256::new(),
        }
    }

    /// `e` belongs in this summary: the same stream, request and legs.
    pub(super) fn same_place(&self, e: &CountedEvent<'_>) -> bool {
        self.stream == e.stream && self.request == e.request && self.legs == e.legs
    }

    /// Count `e`.
    pub(super) fn count(&mut self, e: &CountedEvent<'_>) {
        let at_us = u64::try_from(e.at.saturating_sub(self.started_at)).unwrap_or(0);
        self.u.events += 1;
        self.u.bytes += e.data.len() as u64;
        self.u.jsonrpc += u64::from(e.jsonrpc);
        self.u.responses += u64::from(e.response);
        self.u.last_at_us = self.u.last_at_us.max(at_us);
        self.hash.update((e.data.len() as u64).to_be_bytes());
        self.hash.update(e.data.as_bytes());
    }

    /// The summary as the record to write: its legs, its time (the first event's) and
    /// the `sse_event` observation with `unkept`.
    pub(super) fn finish(mut self) -> (Vec<LegId>, i64, Observation) {
        self.u.sha256 = self.hash.finalize().to_vec();
        let observation = Observation::SseEvent(SseEvent {
            stream: self.stream,
            request: self.request,
            event: None,
            data: String::new(),
            // What a reader that does not know `unkept` reads: one event stored cut.
            data_length: Some(self.u.bytes),
            id: None,
            retry: None,
            error: None,
            unkept: Some(self.u),
        });
        (self.legs, self.started_at, observation)
    }
}
