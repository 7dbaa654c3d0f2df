//! The inventory: every page of each list the server's capabilities advertise
//! (`inventory.*` legs), bounded by `--max-pages` and stopped on a repeated cursor.

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::{inventory, LegId};
use serde_json::{json, Value};

use super::session::{Ending, Probe};
use crate::journal::lock;

impl Probe<'_> {
    /// Read every page of each list the capabilities advertise.
    pub(crate) async fn inventory(&mut self) -> Ending {
        let caps = lock(&self.journal)
            .session()
            .and_then(|s| s.capabilities.clone())
            .unwrap_or(json!({}));
        for l in inventory::LISTS {
            let cap = l.capability;
            if caps.get(cap).is_none_or(Value::is_null) {
                lock(&self.journal).skip(
                    &[l.leg],
                    format!("not requested: the server did not advertise the {cap:?} capability"),
                );
                continue;
            }
            self.list_all(l.method, l.leg).await;
        }
        Ending::Complete
    }

    async fn list_all(&mut self, m: &str, l: LegId) {
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _page in 0..self.max_pages {
            let mut params = serde_json::Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let (h, body, id) = match self.era {
                Some(Era::Modern) => {
                    let (h, b, id) = self.modern(m, params);
                    (h, b, Some(id))
                }
                _ => self.legacy(m, params, false),
            };
            let r = self.rpc(&[l], &endpoint, h, &body, id).await;
            let next = r
                .result()
                .and_then(|res| res.get("nextCursor"))
                .and_then(Value::as_str)
                .map(str::to_string);
            match next {
                None => return,
                Some(c) => {
                    if !seen.insert(c.clone()) {
                        lock(&self.journal)
                            .skip(&[l], format!("stopped: the server repeated cursor {c:?}"));
                        return;
                    }
                    cursor = Some(c);
                }
            }
        }
        lock(&self.journal).skip(
            &[l],
            format!(
                "stopped: page bound {} reached with a nextCursor still pending (--max-pages)",
                self.max_pages
            ),
        );
    }
}
