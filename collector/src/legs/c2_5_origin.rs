//! 2.5: hostile, allowed and no `Origin` on otherwise identical requests. The allowed
//! Origin is the probe input `allowed_origin` (an Origin the deployment's allowlist
//! holds), else the endpoint's own origin as a stand-in.

use mcp_probe_schema::vocab::probe::HOSTILE_ORIGIN;
use mcp_probe_schema::vocab::{header, leg, method};
use serde_json::Map;

use super::set_header;
use crate::mcp::Probe;

/// Operator input: an Origin the deployment allows (sent on `2.5.origin.own`).
pub const INPUT_ALLOWED_ORIGIN: &str = "allowed_origin";

impl Probe<'_> {
    /// 2.5: hostile, own and no Origin on otherwise identical requests.
    pub(super) async fn origins(&mut self) {
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let own = self
            .inputs
            .as_ref()
            .and_then(|i| i.get(INPUT_ALLOWED_ORIGIN))
            .and_then(serde_json::Value::as_str)
            .map(|o| o.trim().trim_end_matches('/').to_string())
            .filter(|o| !o.is_empty())
            .unwrap_or_else(|| endpoint.origin().ascii_serialization());
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
