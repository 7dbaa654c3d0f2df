//! The probe legs of the checks (docs/collector.md, "Probe legs"): what each sends,
//! in a fixed order, each request complete for the negotiated revision except for the
//! one property under test (spec/checks.md §17 items 3, 13, 14). The collector decides
//! nothing: a leg that is not sent is recorded as skipped with the gate's reason, and the
//! grader re-derives every verdict from the records.

use base64::Engine;
use mcp_probe_schema::model::{Era, Header, HttpOutcome, Observation};
use mcp_probe_schema::vocab::probe::{
    HOSTILE_ORIGIN, MISMATCH_NAME, NO_SUCH_TOOL, SUPPLIED_SESSION_ID,
};
use mcp_probe_schema::vocab::{self, header, leg, meta, method, LegId};
use serde_json::{json, Map, Value};

use crate::http::Request;
use crate::probe::{lock, Probe};

/// The never-published revision 1.1b asserts.
pub const BOGUS_REVISION: &str = "2024-01-01";
/// Default size of the 10.2 padded body (ordinary traffic: no consent needed).
pub const DEFAULT_PROBE_BYTES: u64 = 1 << 20;
/// Above this the operator must set `oversize_authorised: true`.
pub const CONSENT_ABOVE: u64 = 1 << 20;
/// Never sent, whatever the inputs say (a typo guard).
pub const HARD_MAX: u64 = 10 << 20;

const LEGACY_ONLY: &str =
    "not sent: the mechanism exists only in 2026-07-28 and the session negotiated";

fn remove_header(h: &mut Vec<Header>, name: &str) {
    h.retain(|x| !x.name.eq_ignore_ascii_case(name));
}

fn set_header(h: &mut Vec<Header>, name: &str, value: &str) {
    remove_header(h, name);
    h.push(Header::new(name, value));
}

impl Probe<'_> {
    /// A complete request for the negotiated revision: `(headers, body, id)`.
    fn complete(&mut self, m: &str, params: Map<String, Value>) -> (Vec<Header>, Value, i64) {
        match self.era {
            Some(Era::Modern) => self.modern(m, params),
            _ => {
                let (h, b, id) = self.legacy(m, params, false);
                (h, b, id.unwrap_or_default())
            }
        }
    }

    fn modern_session(&self) -> bool {
        self.era == Some(Era::Modern)
    }

    fn skip(&self, legs: &[LegId], reason: impl Into<String>) {
        lock(&self.journal).skip(legs, reason);
    }

    fn legacy_only_reason(&self) -> String {
        format!(
            "{LEGACY_ONLY} {}",
            self.revision.as_deref().unwrap_or("no revision")
        )
    }

    /// Send a complete JSON-RPC request of `m` after `edit` changed its headers/body.
    async fn probe_rpc(
        &mut self,
        l: LegId,
        m: &str,
        params: Map<String, Value>,
        edit: impl FnOnce(&mut Vec<Header>, &mut Value),
    ) -> Option<crate::probe::Reply> {
        let endpoint = self.endpoint.clone()?;
        let (mut h, mut body, id) = self.complete(m, params);
        edit(&mut h, &mut body);
        let awaited = body.get("id").cloned().unwrap_or(Value::from(id));
        Some(
            self.rpc_awaiting(&[l], &endpoint, h, &body, Some(awaited))
                .await,
        )
    }

    /// A non-JSON-RPC request (GET, DELETE) to `url`, recorded under `l`.
    async fn plain(
        &mut self,
        l: LegId,
        method: &str,
        url: url::Url,
        headers: Vec<Header>,
        credential: bool,
    ) {
        let mut headers = headers;
        if let (true, Some(t)) = (credential, &self.token) {
            headers.push(Header::new(header::AUTHORIZATION, format!("Bearer {t}")));
        }
        let req = Request {
            method: method.into(),
            url,
            headers,
            body: Vec::new(),
            await_id: None,
            head_only_stream: true,
            connect_to: None,
        };
        let sent = self.client.send(req).await;
        let mut j = lock(&self.journal);
        if let Some(tls) = sent.tls {
            j.record(
                &[leg::TLS_MODERN],
                sent.started_at,
                0,
                Observation::Tls(tls),
            );
        }
        j.record(
            &[l],
            sent.started_at,
            sent.duration.as_micros() as u64,
            Observation::Http(sent.exchange),
        );
    }

    /// Transport facts before detection: TLS 1.0/1.1 acceptance and the plaintext port.
    /// `info_only` records them as skipped.
    pub async fn transport_facts(&mut self, first: &url::Url, info_only: bool) {
        let legs = [leg::TLS_V1_0, leg::TLS_V1_1, leg::PLAINTEXT];
        if info_only {
            self.skip(&legs, "not sent: --info run (connect and enumerate only)");
            return;
        }
        if first.scheme() != "https" {
            self.skip(
                &legs,
                "not sent: the target is plain http, so the endpoint itself is served without TLS",
            );
            return;
        }
        let host = first
            .host_str()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_string();
        let port = first.port_or_known_default().unwrap_or(443);
        let sni = matches!(first.host(), Some(url::Host::Domain(_))).then_some(host.as_str());
        let addr = match tokio::net::lookup_host((host.as_str(), port))
            .await
            .map(|mut a| a.next())
        {
            Ok(Some(a)) => Some(a),
            _ => None,
        };
        match addr {
            None => self.skip(
                &[leg::TLS_V1_0, leg::TLS_V1_1],
                format!("not sent: {host} did not resolve"),
            ),
            Some(addr) => {
                for (l, v) in [
                    (leg::TLS_V1_0, crate::legacy_tls::LegacyVersion::Tls1_0),
                    (leg::TLS_V1_1, crate::legacy_tls::LegacyVersion::Tls1_1),
                ] {
                    let started = chrono::Utc::now().timestamp_micros();
                    let t0 = std::time::Instant::now();
                    let probe = crate::legacy_tls::probe(addr, sni, v, self.client.timeout()).await;
                    lock(&self.journal).record(
                        &[l],
                        started,
                        t0.elapsed().as_micros() as u64,
                        Observation::LegacyTls(probe),
                    );
                }
            }
        }
        let mut plain = first.clone();
        let _ = plain.set_scheme("http");
        let _ = plain.set_port(Some(self.plaintext_port));
        plain.set_path("/");
        plain.set_query(None);
        self.plain(
            leg::PLAINTEXT,
            "GET",
            plain,
            vec![Header::new(header::ACCEPT, "*/*")],
            false,
        )
        .await;
    }

    /// Every probe leg after the inventory, in order. `info_only` skips them all.
    pub async fn probe_legs(&mut self, info_only: bool) {
        if info_only {
            self.skip(
                &[
                    leg::V_SWEEP,
                    leg::V_BOGUS,
                    leg::V_NO_HEADER,
                    leg::V_NO_META_VERSION,
                    leg::V_MISMATCH,
                    leg::AUTH_NONE,
                    leg::AUTH_WITH,
                    leg::HDR_NO_METHOD,
                    leg::HDR_NO_NAME,
                    leg::HDR_NAME_MISMATCH,
                    leg::HDR_NAME_ENCODED,
                    leg::ORIGIN_HOSTILE,
                    leg::ORIGIN_OWN,
                    leg::ORIGIN_NONE,
                    leg::LEGACY_GET,
                    leg::LEGACY_DELETE,
                    leg::RESUME_CONTROL,
                    leg::RESUME_LAST_EVENT_ID,
                    leg::SESSION_CONTROL,
                    leg::SESSION_SUPPLIED,
                    leg::NULL_ID,
                    leg::STATIC_RESOURCE,
                    leg::PADDED,
                ],
                "not sent: --info run (connect and enumerate only)",
            );
            return;
        }
        self.versions().await;
        self.auth_pair().await;
        self.routing_headers().await;
        self.origins().await;
        self.legacy_surface().await;
        self.null_id().await;
        self.static_resource().await;
        self.padded().await;
    }

    /// 1.1: the sweep of sub-floor handshake revisions and the malformed assertions.
    async fn versions(&mut self) {
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

    /// 2.3: the same tools/list without, then with, the credential. Sent whenever a
    /// credential is held: detection then carried the credential, so only this pair
    /// shows whether the endpoint demands one (and `session.auth_required` is set from
    /// the unauthenticated answer).
    async fn auth_pair(&mut self) {
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
        lock(&self.journal).update_session(|s| s.auth_required = refused);
        self.probe_rpc(leg::AUTH_WITH, method::TOOLS_LIST, Map::new(), |_, _| {})
            .await;
    }

    /// 2.4: routing headers on 2026-07-28.
    async fn routing_headers(&mut self) {
        let legs = [
            leg::HDR_NO_METHOD,
            leg::HDR_NO_NAME,
            leg::HDR_NAME_MISMATCH,
            leg::HDR_NAME_ENCODED,
        ];
        if !self.modern_session() {
            let why = self.legacy_only_reason();
            self.skip(&legs, why);
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

    /// 2.5: hostile, own and no Origin on otherwise identical requests.
    async fn origins(&mut self) {
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

    /// 5.2.3: the legacy session surface, on 2026-07-28 only.
    async fn legacy_surface(&mut self) {
        let legs = [
            leg::LEGACY_GET,
            leg::LEGACY_DELETE,
            leg::RESUME_CONTROL,
            leg::RESUME_LAST_EVENT_ID,
            leg::SESSION_CONTROL,
            leg::SESSION_SUPPLIED,
        ];
        if !self.modern_session() {
            let why = self.legacy_only_reason();
            self.skip(&legs, why);
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

    /// 7.1.2: `tools/list` with `"id": null`.
    async fn null_id(&mut self) {
        self.probe_rpc(leg::NULL_ID, method::TOOLS_LIST, Map::new(), |_, b| {
            b["id"] = Value::Null;
        })
        .await;
    }

    /// 10.1a: the operator's static resource, without credential, on the same host only.
    async fn static_resource(&mut self) {
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
    async fn padded(&mut self) {
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
        let control =
            lock(&self.journal).find_record(|r| r.legs.iter().any(|l| l == leg::INVENTORY_TOOLS));
        let control_ok = control.as_ref().is_some_and(|r| match &r.observation {
            Observation::Http(x) => matches!(&x.outcome, HttpOutcome::Response(resp) if (200..300).contains(&resp.status)),
            _ => false,
        });
        if !control_ok {
            self.skip(&[leg::PADDED], "not sent: no accepted tools/list control (the first inventory.tools page was not 2xx or not sent)");
            return;
        }
        let pad = "X".repeat(size as usize + 1);
        self.probe_rpc(leg::PADDED, method::TOOLS_LIST, Map::new(), move |_, b| {
            b["params"]["pad"] = Value::String(pad);
        })
        .await;
    }
}
