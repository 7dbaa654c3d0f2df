//! 7.1.2: `tools/list` with `"id": null`.

use mcp_probe_schema::vocab::{leg, method};
use serde_json::{Map, Value};

use crate::mcp::Probe;

impl Probe<'_> {
    /// 7.1.2: `tools/list` with `"id": null`.
    pub(super) async fn null_id(&mut self) {
        self.probe_rpc(leg::NULL_ID, method::TOOLS_LIST, Map::new(), |_, b| {
            b["id"] = Value::Null;
        })
        .await;
    }
}
