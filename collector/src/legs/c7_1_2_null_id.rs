//! 7.1.2: `tools/list` with `"id": null`.

use mcp_probe_schema::vocab::{leg, method};
use serde_json::{Map, Value};

use crate::mcp::Probe;

impl Probe<'_> {
    /// 7.1.2: `tools/list` with `"id": null`.
    pub(super) async fn null_id(&mut self) {
        if self.stdio.is_none() {
            let sent = self
                .probe_rpc(leg::NULL_ID, method::TOOLS_LIST, Map::new(), |_, b| {
                    b["id"] = Value::Null;
                })
                .await;
            // On HTTP+SSE the POST is acknowledged (202) and an answer, if any, comes on
            // the stream: a server that drops the message draws none, and waiting for it
            // would hold the run for --timeout at the end of the target. As on stdio, a
            // normal `tools/list` follows; once its answer came and nothing answered
            // `"id": null` first, the wait for the null-id answer ends there, with the
            // `timeout` record an older collector wrote at --timeout (so a grader from
            // before the follow-up reads it as it always did).
            if let Some(null_seq) = sent.map(|r| r.seq).filter(|s| self.sse_pending(*s)) {
                if let Some(followup) = self.followup().await {
                    self.sse_unpend(null_seq, followup);
                }
            }
            return;
        }
        // On stdio nothing acknowledges a message the server drops, so waiting for an
        // answer to the null-id request would hold the run for --timeout whenever the
        // server ignores it. It is written without waiting, then a normal `tools/list`
        // whose answer comes after whatever the server said to the first.
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let (h, mut body, _) = self.complete(method::TOOLS_LIST, Map::new());
        body["id"] = Value::Null;
        self.rpc_awaiting(&[leg::NULL_ID], &endpoint, h, &body, None)
            .await;
        self.followup().await;
    }

    /// The follow-up `tools/list` (leg [`leg::NULL_ID_FOLLOWUP`]), awaited; the seq of
    /// its record when it was answered.
    async fn followup(&mut self) -> Option<u64> {
        let endpoint = self.endpoint.clone()?;
        let (h, body, id) = self.complete(method::TOOLS_LIST, Map::new());
        let r = self
            .rpc_awaiting(
                &[leg::NULL_ID_FOLLOWUP],
                &endpoint,
                h,
                &body,
                Some(Value::from(id)),
            )
            .await;
        r.message.is_some().then_some(r.seq)
    }
}
