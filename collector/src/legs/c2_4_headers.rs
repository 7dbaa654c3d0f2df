//! 2.4: the 2026-07-28 routing headers (`Mcp-Method`, `Mcp-Name`) missing, mismatched
//! or encoded.

use base64::Engine;
use mcp_probe_schema::vocab::probe::{MISMATCH_NAME, NO_SUCH_TOOL};
use mcp_probe_schema::vocab::{header, leg, method};
use serde_json::{json, Map};

use super::Family;
use super::{remove_header, set_header};
use crate::mcp::Probe;

impl Probe<'_> {
    /// 2.4: routing headers on 2026-07-28.
    pub(super) async fn routing_headers(&mut self) {
        if !self.modern_session() {
            let why = self.legacy_only_reason();
            self.skip(Family::RoutingHeaders.legs(), why);
            return;
        }
        self.probe_rpc(
            leg::HDR_NO_METHOD,
            method::TOOLS_LIST,
            Map::new(),
            |h, _| {
                remove_header(h, header::METHOD);
            },
        )
        .await;
        let call = || {
            let mut p = Map::new();
            p.insert("name".into(), json!(NO_SUCH_TOOL));
            p.insert("arguments".into(), json!({}));
            p
        };
        // The modern builder sends no Mcp-Name; the probes add the wrong ones.
        self.probe_rpc(leg::HDR_NO_NAME, "tools/call", call(), |_, _| {})
            .await;
        self.probe_rpc(leg::HDR_NAME_MISMATCH, "tools/call", call(), |h, _| {
            set_header(h, header::NAME, MISMATCH_NAME);
        })
        .await;
        let encoded = format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(MISMATCH_NAME)
        );
        self.probe_rpc(leg::HDR_NAME_ENCODED, "tools/call", call(), move |h, _| {
            set_header(h, header::NAME, &encoded);
        })
        .await;
    }
}
