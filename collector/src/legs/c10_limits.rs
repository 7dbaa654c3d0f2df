//! 10.1 and 10.2: the operator's static resource without credential (10.1a) and the
//! first inventory request padded past the probe size (10.2a).

use mcp_probe_schema::model::{Header, HttpOutcome, Observation};
use mcp_probe_schema::vocab::{header, leg, method};
use serde_json::{json, Map, Value};

use super::{CONSENT_ABOVE, DEFAULT_PROBE_BYTES, HARD_MAX};
use crate::journal::lock;
use crate::mcp::Probe;

impl Probe<'_> {
    /// 10.1a: the operator's static resource, without credential, on the same host only.
    pub(super) async fn static_resource(&mut self) {
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let path = self
            .inputs
            .as_ref()
            .and_then(|i| i.get("static_resource_path"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some(path) = path else {
            self.skip(
                &[leg::STATIC_RESOURCE],
                "not sent: no static_resource_path in the probe inputs (no path is guessed)",
            );
            return;
        };
        let url = if path.contains("://") {
            url::Url::parse(&path)
        } else {
            endpoint.join(&format!("/{}", path.trim_start_matches('/')))
        };
        match url {
            Ok(u) if u.host_str() == endpoint.host_str() && matches!(u.scheme(), "http" | "https") => {
                self.plain(leg::STATIC_RESOURCE, "GET", u, vec![Header::new(header::ACCEPT, "*/*")], false).await;
            }
            Ok(u) => self.skip(
                &[leg::STATIC_RESOURCE],
                format!("not sent: static_resource_path {u} is not on the endpoint's host, so its answer would not be the server's"),
            ),
            Err(e) => self.skip(&[leg::STATIC_RESOURCE], format!("not sent: static_resource_path {path:?} is not a URL: {e}")),
        }
    }

    /// 10.2a: the first inventory.tools request again, padded past the probe size.
    pub(super) async fn padded(&mut self) {
        let input = |k: &str| self.inputs.as_ref().and_then(|i| i.get(k)).cloned();
        let size = match input("max_request_bytes") {
            None => DEFAULT_PROBE_BYTES,
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => n,
                _ => {
                    self.skip(
                        &[leg::PADDED],
                        format!("not sent: max_request_bytes {v} is not a positive integer"),
                    );
                    return;
                }
            },
        };
        if size > HARD_MAX {
            self.skip(
                &[leg::PADDED],
                format!("not sent: {size} bytes is above the 10 MiB ceiling"),
            );
            return;
        }
        if size > CONSENT_ABOVE && input("oversize_authorised") != Some(json!(true)) {
            self.skip(
                &[leg::PADDED],
                format!(
                    "not sent: {size} bytes is above 1 MiB and oversize_authorised is not true"
                ),
            );
            return;
        }
        // The control is the first tools/list page the inventory sent.
        let mut control = None;
        lock(&self.journal).for_each_record_of(
            |legs| legs.iter().any(|l| leg::INVENTORY_TOOLS == *l),
            |r| {
                control = Some(r);
                false
            },
        );
        let control_ok = control.as_ref().is_some_and(|r| match &r.observation {
            Observation::Http(x) => matches!(&x.outcome, HttpOutcome::Response(resp) if (200..300).contains(&resp.status)),
            _ => false,
        });
        if !control_ok {
            self.skip(&[leg::PADDED], "not sent: no accepted tools/list control (the first inventory.tools page was not 2xx or not sent)");
            return;
        }
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let (h, body, id) = self.complete(method::TOOLS_LIST, Map::new());
        let awaited = body.get("id").cloned().unwrap_or(Value::from(id));
        self.rpc_padded(
            &[leg::PADDED],
            &endpoint,
            h,
            body,
            Some(awaited),
            size as usize + 1,
        )
        .await;
    }
}
