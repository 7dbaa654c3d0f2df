//! 5.2.3: the legacy session surface (standalone GET, DELETE, resumption, a supplied
//! session id) on a 2026-07-28 session.

use mcp_probe_schema::model::Header;
use mcp_probe_schema::vocab::probe::SUPPLIED_SESSION_ID;
use mcp_probe_schema::vocab::{self, header, leg, method};
use serde_json::Map;

use super::set_header;
use super::Family;
use crate::mcp::Probe;

impl Probe<'_> {
    /// 5.2.3: the legacy session surface, on 2026-07-28 only.
    pub(super) async fn legacy_surface(&mut self) {
        if !self.modern_session() {
            let why = self.legacy_only_reason();
            self.skip(Family::LegacySurface.legs(), why);
            return;
        }
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let pinned = Header::new(header::PROTOCOL_VERSION, vocab::REV_2026_07_28);
        self.plain(
            leg::LEGACY_GET,
            "GET",
            endpoint.clone(),
            vec![
                Header::new(header::ACCEPT, "text/event-stream"),
                pinned.clone(),
            ],
            true,
        )
        .await;
        // Never with a live session id: a 2026-07-28 session has none anyway.
        self.plain(leg::LEGACY_DELETE, "DELETE", endpoint, vec![pinned], true)
            .await;
        self.probe_rpc(
            leg::RESUME_CONTROL,
            method::TOOLS_LIST,
            Map::new(),
            |_, _| {},
        )
        .await;
        self.probe_rpc(
            leg::RESUME_LAST_EVENT_ID,
            method::TOOLS_LIST,
            Map::new(),
            |h, _| {
                set_header(h, header::LAST_EVENT_ID, "1");
            },
        )
        .await;
        self.probe_rpc(
            leg::SESSION_CONTROL,
            method::TOOLS_LIST,
            Map::new(),
            |_, _| {},
        )
        .await;
        self.probe_rpc(
            leg::SESSION_SUPPLIED,
            method::TOOLS_LIST,
            Map::new(),
            |h, _| {
                set_header(h, header::SESSION_ID, SUPPLIED_SESSION_ID);
            },
        )
        .await;
    }
}
