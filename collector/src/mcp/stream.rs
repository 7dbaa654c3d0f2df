//! The reading side of an HTTP+SSE (2024-11-05) session: the task that reads the event
//! stream and hands each event over, and the session state the POSTs need
//! (docs/collector.md, "HTTP+SSE (2024-11-05)"). The protocol side is `mcp/sse.rs`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{ErrorKind, TransportError};
use mcp_probe_schema::sse;
use mcp_probe_schema::vocab::LegId;
use tokio::sync::mpsc;
use url::Url;

use crate::transport::http::EventStream;

/// Bytes read from one event stream before the collector gives up on it (a server
/// that streams without end, or one endless line).
pub const STREAM_READ_LIMIT: u64 = 16 << 20;

/// Events in flight between the stream's reader and the session at most: when the
/// session does not keep up (each event is a record), the reader stops reading and the
/// server's writes back up in TCP, instead of the events piling up in memory.
pub const STREAM_QUEUE: usize = 256;

/// One item the stream reader hands over: an event, or how the stream ended.
#[derive(Debug)]
pub(crate) enum Item {
    Event { at: i64, event: sse::Event },
    End { at: i64, error: TransportError },
}

/// An open HTTP+SSE session: the stream's reader task and what the POSTs need.
#[derive(Debug)]
pub struct SseSession {
    /// The stream URL (the endpoint).
    pub stream_url: Url,
    /// The URL the `endpoint` event named.
    pub post_url: Url,
    pub(crate) stream_seq: u64,
    pub(crate) rx: mpsc::Receiver<Item>,
    pub(crate) task: tokio::task::JoinHandle<()>,
    pub(crate) ended: Option<TransportError>,
    /// Requests sent on this session, by JSON-RPC id (as JSON text): their `POST`
    /// record and legs, so a late answer is still linked to its request.
    pub(crate) sent: HashMap<String, (u64, Vec<LegId>)>,
    /// `POST` records whose first answer was stored: a later answer to the same id is
    /// an ordinary event (counted past the bundle cap).
    pub(crate) answered: HashSet<u64>,
    /// Requests whose answer is not waited for before the next one (the null-id
    /// request, which no later step needs): their `POST` record, legs, and the end of
    /// their per-request timeout. Read at the end of the target.
    pub(crate) pending: Vec<(u64, Vec<LegId>, Instant)>,
}

impl Drop for SseSession {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// Read `stream` until it ends, handing each event over through a queue of
/// [`STREAM_QUEUE`] events; stops at the read limit.
pub(crate) fn spawn_reader(
    mut stream: EventStream,
) -> (mpsc::Receiver<Item>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let task = tokio::spawn(async move {
        let mut parser = sse::Parser::new();
        let mut read = 0u64;
        // The reader has no deadline of its own: whoever awaits an event does, and the
        // task ends with the session.
        let far = Instant::now() + Duration::from_secs(7 * 24 * 3600);
        let error = loop {
            match stream.read(far).await {
                Ok(Some(bytes)) => {
                    read += bytes.len() as u64;
                    for event in parser.feed(&bytes) {
                        if tx
                            .send(Item::Event {
                                at: now_us(),
                                event,
                            })
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                    if read > STREAM_READ_LIMIT {
                        break TransportError {
                            kind: ErrorKind::Protocol,
                            message: format!(
                                "the event stream passed the read limit ({STREAM_READ_LIMIT} bytes)"
                            ),
                        };
                    }
                }
                Ok(None) => {
                    break TransportError {
                        kind: ErrorKind::Reset,
                        message: if parser.pending() {
                            "the server ended the event stream inside an event".into()
                        } else {
                            "the server ended the event stream".into()
                        },
                    }
                }
                Err(e) => break e,
            }
        };
        let _ = tx
            .send(Item::End {
                at: now_us(),
                error,
            })
            .await;
    });
    (rx, task)
}
