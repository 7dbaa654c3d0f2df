//! 2.3: the same `tools/list` without, then with, the credential (`2.3.*` legs).

use mcp_probe_schema::vocab::{leg, method};
use serde_json::Map;

use crate::journal::lock;
use crate::mcp::Probe;

impl Probe<'_> {
    /// 2.3: the same tools/list without, then with, the credential. Sent whenever a
    /// credential is held: detection then carried the credential, so only this pair
    /// shows whether the endpoint demands one (and `session.auth_required` is set from
    /// the unauthenticated answer).
    pub(super) async fn auth_pair(&mut self) {
        if self.token.is_none() {
            let auth_required = lock(&self.journal)
                .session()
                .is_some_and(|s| s.auth_required);
            let why = if auth_required {
                "not sent: the endpoint asked for credentials and none is held"
            } else {
                "not sent: no credential is held, and endpoint.detect reached a response without one"
            };
            self.skip(&[leg::AUTH_NONE, leg::AUTH_WITH], why);
            return;
        }
        let session = self.session_id.take();
        self.anonymous = true;
        let unauth = self
            .probe_rpc(leg::AUTH_NONE, method::TOOLS_LIST, Map::new(), |_, _| {})
            .await;
        self.anonymous = false;
        self.session_id = session;
        let refused = matches!(unauth.as_ref().and_then(|r| r.status), Some(401 | 403));
        if !self.on_other_era() {
            lock(&self.journal).update_session(|s| s.auth_required = refused);
        }
        self.probe_rpc(leg::AUTH_WITH, method::TOOLS_LIST, Map::new(), |_, _| {})
            .await;
    }
}
