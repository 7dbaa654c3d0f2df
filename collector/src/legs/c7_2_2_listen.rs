//! 7.2.2 on 2026-07-28: the revision's notification channel. That revision has no
//! standalone GET stream; the notifications a server sends outside a request's own
//! response stream ride a `subscriptions/listen` request whose response is an event
//! stream that stays open. The server first sends `notifications/subscriptions/acknowledged`
//! (naming the subset it honours), then the change notifications asked for.
//!
//! When the negotiated capabilities (the `server/discover` result) advertise a
//! `listChanged` (tools, prompts or resources: what a 2026-07-28 server advertises when it
//! serves `subscriptions/listen`), the probe opens one listen stream, complete for
//! 2026-07-28 and asking for exactly the kinds advertised, beside 7.2.2's progress call
//! (`7.2.2.listen`). The stream is read until the call's answer has arrived plus
//! [`GRACE`] (or the request deadline, or the body cap), then closed: a server that
//! sends nothing costs no wait beyond the call and the grace. Without such a capability
//! the leg is recorded skipped and nothing is sent; on the handshake revisions too.

use std::time::Duration;

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::{self, leg};
use serde_json::{Map, Value};

use super::c1_3_7_2_2_tools::{Chosen, PROGRESS_TOKEN};
use crate::journal::lock;
use crate::mcp::Probe;
use crate::transport::http::Request;

/// The method that opens the listen stream.
pub const LISTEN: &str = "subscriptions/listen";
/// How long the listen stream stays open after the call's answer arrived: a
/// notification the call caused may be sent just after its answer.
pub const GRACE: Duration = Duration::from_millis(300);

/// The `notifications` filter of a listen request: every kind `capabilities` advertise
/// as `listChanged: true` (the JSON boolean). `None` when none is: the server does not
/// offer the stream.
pub fn listen_filter(capabilities: Option<&Value>) -> Option<Map<String, Value>> {
    let advertised = |cap: &str| {
        capabilities
            .and_then(|c| c.get(cap))
            .and_then(|c| c.get("listChanged"))
            == Some(&Value::Bool(true))
    };
    let filter: Map<String, Value> = [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ]
    .into_iter()
    .filter(|(cap, _)| advertised(cap))
    .map(|(_, key)| (key.to_string(), Value::Bool(true)))
    .collect();
    (!filter.is_empty()).then_some(filter)
}

impl Probe<'_> {
    /// On a handshake revision: record that the listen stream was not opened.
    pub(super) fn no_listen_on_handshake_revision(&self) {
        self.skip(
            &[leg::NOTIFY_LISTEN],
            format!(
                "not opened: {LISTEN} exists only in {}; the session negotiated {}",
                vocab::REV_2026_07_28,
                self.revision.as_deref().unwrap_or("no revision")
            ),
        );
    }

    /// 7.2.2's progress call of `tool` on 2026-07-28, with the listen stream open beside
    /// it when the server advertises one.
    pub(super) async fn progress_call_listening(&mut self, endpoint: &url::Url, tool: &Chosen) {
        let caps = lock(&self.journal)
            .session()
            .and_then(|s| s.capabilities.clone());
        let filter = match (self.era, listen_filter(caps.as_ref())) {
            (Some(Era::Modern), Some(f)) => f,
            (Some(Era::Modern), None) => {
                self.skip(
                    &[leg::NOTIFY_LISTEN],
                    format!(
                        "not opened: the server/discover capabilities advertise no listChanged \
                         (tools, prompts, resources), so {LISTEN} is not offered"
                    ),
                );
                self.tool_call(
                    leg::NOTIFY_PROGRESS_CALL,
                    endpoint,
                    tool,
                    Some(PROGRESS_TOKEN),
                )
                .await;
                return;
            }
            _ => {
                self.no_listen_on_handshake_revision();
                self.tool_call(
                    leg::NOTIFY_PROGRESS_CALL,
                    endpoint,
                    tool,
                    Some(PROGRESS_TOKEN),
                )
                .await;
                return;
            }
        };
        let mut params = Map::new();
        params.insert("notifications".into(), Value::Object(filter));
        let (mut h, body, _) = self.modern(LISTEN, params);
        h.extend(self.auth_headers("POST", endpoint));
        let req = Request {
            method: "POST".into(),
            url: endpoint.clone(),
            headers: h,
            body: serde_json::to_vec(&body).unwrap_or_default(),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        let client = self.client;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let stream = client.send_until(req, rx);
        let call = async {
            self.tool_call(
                leg::NOTIFY_PROGRESS_CALL,
                endpoint,
                tool,
                Some(PROGRESS_TOKEN),
            )
            .await;
            tokio::time::sleep(GRACE).await;
            let _ = tx.send(true);
        };
        let (sent, ()) = tokio::join!(stream, call);
        let mut j = lock(&self.journal);
        sent.record(&mut j, leg::TLS_MODERN, leg::NOTIFY_LISTEN);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_filter_asks_for_exactly_the_kinds_advertised() {
        let f = listen_filter(Some(&json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": false},
            "resources": {"listChanged": true, "subscribe": true}
        })))
        .expect("offered");
        assert_eq!(
            Value::Object(f),
            json!({"toolsListChanged": true, "resourcesListChanged": true})
        );
        for caps in [
            json!({}),
            json!({"tools": {"listChanged": "true"}}),
            json!({"tools": {}, "resources": {"subscribe": true}}),
            json!({"tools": true}),
        ] {
            assert_eq!(listen_filter(Some(&caps)), None, "{caps}");
        }
        assert_eq!(listen_filter(None), None);
    }
}
