//! 2.5: hostile, own and no `Origin` on otherwise identical requests.

use mcp_probe_schema::vocab::probe::HOSTILE_ORIGIN;
use mcp_probe_schema::vocab::{header, leg, method};
use serde_json::Map;

use super::set_header;
use crate::mcp::Probe;

impl Probe<'_> {
    /// 2.5: hostile, own and no Origin on otherwise identical requests.
    pub(super) async fn origins(&mut self) {
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let own = endpoint.origin().ascii_serialization();
        for (l, origin) in [
            (leg::ORIGIN_HOSTILE, Some(HOSTILE_ORIGIN.to_string())),
            (leg::ORIGIN_OWN, Some(own)),
            (leg::ORIGIN_NONE, None),
        ] {
            self.probe_rpc(l, method::TOOLS_LIST, Map::new(), move |h, _| {
                if let Some(o) = origin {
                    set_header(h, header::ORIGIN, &o);
                }
            })
            .await;
        }
    }
}
