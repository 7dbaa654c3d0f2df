//! 1.1: the sweep of sub-floor handshake revisions and the malformed protocol-version
//! assertions (`1.1*` legs).

use mcp_probe_schema::vocab::{self, header, leg, meta, method};
use serde_json::{json, Map};

use super::{remove_header, set_header, BOGUS_REVISION};
use crate::mcp::Probe;

impl Probe<'_> {
    /// 1.1: the sweep of sub-floor handshake revisions and the malformed assertions.
    pub(super) async fn versions(&mut self) {
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        for rev in [vocab::REV_2024_11_05, vocab::REV_2025_03_26] {
            // Deliberately outside the session: no session id, no version header.
            let (h, body, id) = self.initialize_body(rev);
            let _ = self
                .rpc(&[leg::V_SWEEP], &endpoint, h, &body, Some(id))
                .await;
        }
        let modern = self.modern_session();
        self.probe_rpc(leg::V_BOGUS, method::TOOLS_LIST, Map::new(), |h, b| {
            set_header(h, header::PROTOCOL_VERSION, BOGUS_REVISION);
            if modern {
                b["params"]["_meta"][meta::PROTOCOL_VERSION] = json!(BOGUS_REVISION);
            }
        })
        .await;
        self.probe_rpc(leg::V_NO_HEADER, method::TOOLS_LIST, Map::new(), |h, _| {
            remove_header(h, header::PROTOCOL_VERSION);
        })
        .await;
        if modern {
            self.probe_rpc(
                leg::V_NO_META_VERSION,
                method::TOOLS_LIST,
                Map::new(),
                |_, b| {
                    if let Some(m) = b["params"]["_meta"].as_object_mut() {
                        m.remove(meta::PROTOCOL_VERSION);
                    }
                },
            )
            .await;
            self.probe_rpc(leg::V_MISMATCH, method::TOOLS_LIST, Map::new(), |h, _| {
                set_header(h, header::PROTOCOL_VERSION, vocab::REV_2025_03_26);
            })
            .await;
        } else {
            let why = self.legacy_only_reason();
            self.skip(&[leg::V_NO_META_VERSION, leg::V_MISMATCH], why);
        }
    }
}
