//! The per-target pipeline of this build: endpoint detection with revision negotiation,
//! the legacy handshake where needed, and the inventory across every page.
//!
//! Negotiation (design.md §4, mcp-protocol.md §2.5, §3): on each endpoint candidate the
//! collector first sends a complete 2026-07-28 `server/discover` (headers and `_meta`
//! envelope). A result means the server speaks 2026-07-28. Anything else except 401
//! (a legacy server's 400/404/405, or a modern server refusing the version) is followed
//! by an `initialize` offering 2025-11-25 on the same candidate; the revision the server
//! echoes is used when this tool knows it, and an error that lists `data.supported`
//! leads to one more `initialize` with the newest revision both sides know. A candidate
//! that answers neither is left for the next one. 401 ends detection: the endpoint is
//! there and wants credentials.
//!
//! The collector decides nothing about compliance here: it only keeps going with the
//! revision the server accepted, and records every exchange.

use std::sync::{Arc, Mutex};

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{Era, Header, HttpOutcome, Observation, Session, TransportError};
use mcp_probe_schema::vocab::{self, header, leg, meta, method, LegId};
use serde_json::{json, Value};

use crate::http::{Client, Request};
use crate::journal::Journal;

/// Client identity sent in `clientInfo`.
pub const CLIENT_NAME: &str = "mcp-collect";

/// What one JSON-RPC exchange produced, as the pipeline needs it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// Response headers.
    pub headers: Vec<Header>,
    /// The JSON-RPC response to our id, if present.
    pub message: Option<Value>,
    /// The transport error, if no response arrived.
    pub error: Option<TransportError>,
    /// Why the response body is not an answer (it ended in a transport error, at the
    /// read limit, or was not read), when it is not: `message` is then `None`.
    pub cut: Option<String>,
    /// Seq of the HTTP record.
    pub seq: u64,
}

impl Reply {
    /// The `result` member.
    pub fn result(&self) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get("result"))
    }

    /// The `error.code` member.
    pub fn error_code(&self) -> Option<i64> {
        self.message.as_ref()?.get("error")?.get("code")?.as_i64()
    }

    /// One line describing the answer.
    pub fn describe(&self) -> String {
        if let Some(e) = &self.error {
            return e.to_string();
        }
        let status = self.status.map(|s| format!("HTTP {s}")).unwrap_or_default();
        if let Some(cut) = &self.cut {
            return format!("{status} but {cut} (not read as an answer)");
        }
        match self.message.as_ref().and_then(|m| m.get("error")) {
            Some(e) => format!(
                "{status} with JSON-RPC error {} {:?}",
                e.get("code").map(Value::to_string).unwrap_or_default(),
                e.get("message").and_then(Value::as_str).unwrap_or("")
            ),
            None if self.result().is_some() => format!("{status} with a result"),
            None => format!("{status} without a JSON-RPC response"),
        }
    }
}

/// Per-target probing state.
pub struct Probe<'a> {
    pub(crate) client: &'a Client,
    pub(crate) journal: Arc<Mutex<Journal>>,
    pub(crate) token: Option<String>,
    pub(crate) next_id: i64,
    pub(crate) max_pages: u32,
    pub(crate) endpoint: Option<url::Url>,
    pub(crate) era: Option<Era>,
    pub(crate) revision: Option<String>,
    pub(crate) session_id: Option<String>,
    /// Send the next requests without the credential (2.3's unauthenticated leg).
    pub(crate) anonymous: bool,
    /// Operator probe inputs for this target (`run.inputs`).
    pub(crate) inputs: Option<Value>,
    /// Port of the plaintext probe (`--plaintext-port`).
    pub(crate) plaintext_port: u16,
    /// Raw `WWW-Authenticate` of the 401 that ended detection, if any.
    pub(crate) challenge: Option<Vec<u8>>,
    /// The JSON-RPC request in flight (method and legs), shared with the run so that a
    /// per-target deadline can say what it cut.
    pub(crate) in_flight: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Probe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Probe({:?}, {:?})",
            self.endpoint.as_ref().map(|u| u.as_str()),
            self.revision
        )
    }
}

/// How the pipeline ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Session established and inventory read.
    Complete,
    /// The endpoint wants credentials that were not given.
    AuthRequired,
    /// No candidate answered as MCP; the text says why.
    NoEndpoint(String),
}

pub(crate) fn lock(j: &Arc<Mutex<Journal>>) -> std::sync::MutexGuard<'_, Journal> {
    // A poisoned lock means a leg panicked; the journal's data is still consistent
    // (records are appended atomically), so keep using it to seal.
    j.lock().unwrap_or_else(|p| p.into_inner())
}

impl<'a> Probe<'a> {
    /// A probe for one target.
    pub fn new(
        client: &'a Client,
        journal: Arc<Mutex<Journal>>,
        token: Option<String>,
        max_pages: u32,
    ) -> Probe<'a> {
        Probe {
            client,
            journal,
            token,
            next_id: 1,
            max_pages,
            endpoint: None,
            era: None,
            revision: None,
            session_id: None,
            anonymous: false,
            inputs: None,
            plaintext_port: 80,
            challenge: None,
            in_flight: Arc::new(Mutex::new(None)),
        }
    }

    pub(crate) fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Send a JSON-RPC message and record it. `id` is the awaited response id
    /// (notifications pass `None`).
    pub(crate) async fn rpc(
        &mut self,
        legs: &[LegId],
        url: &url::Url,
        headers: Vec<Header>,
        body: &Value,
        id: Option<i64>,
    ) -> Reply {
        self.rpc_awaiting(legs, url, headers, body, id.map(Value::from))
            .await
    }

    pub(crate) async fn rpc_awaiting(
        &mut self,
        legs: &[LegId],
        url: &url::Url,
        headers: Vec<Header>,
        body: &Value,
        id: Option<Value>,
    ) -> Reply {
        let mut headers = headers;
        if let (Some(t), false) = (&self.token, self.anonymous) {
            headers.push(Header::new(header::AUTHORIZATION, format!("Bearer {t}")));
        }
        let req = Request {
            method: "POST".into(),
            url: url.clone(),
            headers,
            body: serde_json::to_vec(body).expect("json encodes"),
            await_id: id.clone(),
            head_only_stream: false,
            connect_to: None,
        };
        let what = format!(
            "the {} request of leg {}",
            body.get("method")
                .and_then(Value::as_str)
                .unwrap_or("a request"),
            legs.iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = Some(what);
        let sent = self.client.send(req).await;
        *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let mut j = lock(&self.journal);
        if let Some(addrs) = &sent.resolved {
            for a in addrs {
                j.add_address(a.to_string());
            }
        }
        if let Some(tls) = sent.tls {
            j.record(
                &[leg::TLS_MODERN],
                sent.started_at,
                0,
                Observation::Tls(tls),
            );
        }
        let (status, hdrs, message, error, cut) = match &sent.exchange.outcome {
            HttpOutcome::Response(r) => {
                // Only a whole body is the server's answer: a reply cut by a reset or a
                // truncated chunk may still parse, but is not what the server said.
                let cut = derive::body_cut(&r.body);
                let message = match (&cut, id.as_ref()) {
                    (None, Some(i)) => {
                        derive::response_to(&derive::jsonrpc_messages(r), i).cloned()
                    }
                    _ => None,
                };
                (Some(r.status), r.headers.clone(), message, None, cut)
            }
            HttpOutcome::Error(e) => (None, Vec::new(), None, Some(e.clone()), None),
        };
        let seq = j.record(
            legs,
            sent.started_at,
            sent.duration.as_micros() as u64,
            Observation::Http(sent.exchange),
        );
        Reply {
            status,
            headers: hdrs,
            message,
            error,
            cut,
            seq,
        }
    }

    pub(crate) fn base_headers() -> Vec<Header> {
        vec![
            Header::new(header::CONTENT_TYPE, "application/json"),
            Header::new(header::ACCEPT, "application/json, text/event-stream"),
        ]
    }

    pub(crate) fn envelope() -> Value {
        json!({
            meta::PROTOCOL_VERSION: vocab::REV_2026_07_28,
            meta::CLIENT_CAPABILITIES: {},
            meta::CLIENT_INFO: {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// A complete 2026-07-28 request: headers, `Mcp-Method`, `_meta` envelope.
    pub(crate) fn modern(
        &mut self,
        m: &str,
        mut params: serde_json::Map<String, Value>,
    ) -> (Vec<Header>, Value, i64) {
        let id = self.id();
        let mut h = Self::base_headers();
        h.push(Header::new(header::PROTOCOL_VERSION, vocab::REV_2026_07_28));
        h.push(Header::new(header::METHOD, m));
        params.insert("_meta".into(), Self::envelope());
        (
            h,
            json!({"jsonrpc": "2.0", "id": id, "method": m, "params": params}),
            id,
        )
    }

    /// A legacy request within the negotiated session.
    pub(crate) fn legacy(
        &mut self,
        m: &str,
        params: serde_json::Map<String, Value>,
        notification: bool,
    ) -> (Vec<Header>, Value, Option<i64>) {
        let mut h = Self::base_headers();
        if let Some(rev) = &self.revision {
            if vocab::sends_version_header(rev) {
                h.push(Header::new(header::PROTOCOL_VERSION, rev.clone()));
            }
        }
        if let Some(sid) = &self.session_id {
            h.push(Header::new(header::SESSION_ID, sid.clone()));
        }
        if notification {
            let mut body = json!({"jsonrpc": "2.0", "method": m});
            if !params.is_empty() {
                body["params"] = Value::Object(params);
            }
            (h, body, None)
        } else {
            let id = self.id();
            (
                h,
                json!({"jsonrpc": "2.0", "id": id, "method": m, "params": params}),
                Some(id),
            )
        }
    }

    pub(crate) fn initialize_body(&mut self, rev: &str) -> (Vec<Header>, Value, i64) {
        let id = self.id();
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": method::INITIALIZE,
            "params": {
                "protocolVersion": rev,
                "capabilities": {},
                "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
            }
        });
        (Self::base_headers(), body, id)
    }

    /// Run detection, negotiation and inventory.
    pub async fn run(&mut self, candidates: &[url::Url]) -> Ending {
        let mut reasons = Vec::new();
        for cand in candidates {
            match self.try_candidate(cand).await {
                Ok(Some(ending)) => return ending,
                Ok(None) => return self.inventory().await,
                Err(reason) => {
                    let unreachable = reason.starts_with("transport:");
                    reasons.push(format!("{cand}: {reason}"));
                    if unreachable {
                        // Same host and port for every candidate: a network failure on
                        // one is a failure on all; do not knock again.
                        break;
                    }
                }
            }
        }
        Ending::NoEndpoint(reasons.join("; "))
    }

    fn set_endpoint(&mut self, cand: &url::Url, auth_required: bool) {
        self.endpoint = Some(cand.clone());
        let mut j = lock(&self.journal);
        j.set_endpoint(cand.to_string());
        // A second detection after a login carries the credential: the first one's 401
        // is what says the endpoint requires authentication.
        let auth_required = auth_required || j.session().is_some_and(|s| s.auth_required);
        j.set_session(Some(Session {
            endpoint: cand.to_string(),
            auth_required,
            authenticated: self.token.is_some(),
            era: None,
            revision: None,
            server_info: None,
            capabilities: None,
            session_id: None,
            negotiated_in: None,
        }));
    }

    fn set_negotiated(&mut self, era: Era, rev: &str, result: &Value, seq: u64) {
        self.era = Some(era);
        self.revision = Some(rev.to_string());
        let server_info = match era {
            Era::Modern => result
                .get("_meta")
                .and_then(|m| m.get(meta::SERVER_INFO))
                .cloned(),
            Era::Legacy => result.get("serverInfo").cloned(),
        };
        let session_id = self.session_id.clone();
        lock(&self.journal).update_session(|s| {
            s.era = Some(era);
            s.revision = Some(rev.to_string());
            s.server_info = server_info;
            s.capabilities = result.get("capabilities").cloned();
            s.session_id = session_id;
            s.negotiated_in = Some(seq);
        });
    }

    /// `Ok(Some(ending))`: stop here. `Ok(None)`: session established, read inventory.
    /// `Err(reason)`: this candidate is not an MCP endpoint.
    async fn try_candidate(&mut self, cand: &url::Url) -> Result<Option<Ending>, String> {
        let (h, body, id) = self.modern(method::DISCOVER, serde_json::Map::new());
        let r = self
            .rpc(&[leg::ENDPOINT_DETECT], cand, h, &body, Some(id))
            .await;
        if let Some(e) = &r.error {
            return Err(format!("transport: {e}"));
        }
        if r.status == Some(401) {
            self.challenge =
                derive::header(&r.headers, header::WWW_AUTHENTICATE).map(|h| h.value.clone());
            self.set_endpoint(cand, true);
            return Ok(Some(Ending::AuthRequired));
        }
        if let (Some(200), Some(result)) = (r.status, r.result().cloned()) {
            self.set_endpoint(cand, false);
            self.set_negotiated(Era::Modern, vocab::REV_2026_07_28, &result, r.seq);
            return Ok(None);
        }
        let discover = r.describe();
        // Revisions the server names in a -32022 refusal, newest we know first.
        let mut offers: Vec<String> = supported_handshake(&r);
        if offers.is_empty() {
            offers.push(vocab::REV_2025_11_25.to_string());
        }
        let mut tried = Vec::new();
        while let Some(offer) = offers.first().cloned() {
            offers.remove(0);
            if tried.contains(&offer) || tried.len() >= vocab::HANDSHAKE_REVISIONS.len() {
                continue;
            }
            tried.push(offer.clone());
            let (h, body, id) = self.initialize_body(&offer);
            let r = self
                .rpc(
                    &[leg::ENDPOINT_DETECT, leg::SESSION_INITIALIZE],
                    cand,
                    h,
                    &body,
                    Some(id),
                )
                .await;
            if let Some(e) = &r.error {
                return Err(format!("transport: {e}"));
            }
            if r.status == Some(401) {
                self.challenge =
                    derive::header(&r.headers, header::WWW_AUTHENTICATE).map(|h| h.value.clone());
                self.set_endpoint(cand, true);
                return Ok(Some(Ending::AuthRequired));
            }
            if let (Some(200), Some(result)) = (r.status, r.result().cloned()) {
                let echoed = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if !vocab::HANDSHAKE_REVISIONS.contains(&echoed.as_str()) {
                    return Err(format!(
                        "initialize answered protocolVersion {echoed:?}, which is not a handshake revision this tool speaks"
                    ));
                }
                self.session_id = derive::header(&r.headers, header::SESSION_ID)
                    .map(|h| h.value_str().into_owned());
                self.set_endpoint(cand, false);
                self.set_negotiated(Era::Legacy, &echoed, &result, r.seq);
                let (h, body, _) = self.legacy(method::INITIALIZED, serde_json::Map::new(), true);
                let _ = self
                    .rpc(&[leg::SESSION_INITIALIZED], cand, h, &body, None)
                    .await;
                return Ok(None);
            }
            let more = supported_handshake(&r);
            for m in more {
                if !tried.contains(&m) && !offers.contains(&m) {
                    offers.push(m);
                }
            }
            if offers.is_empty() {
                return Err(format!(
                    "server/discover: {discover}; initialize {offer}: {}",
                    r.describe()
                ));
            }
        }
        Err(format!(
            "server/discover: {discover}; no handshake revision accepted (tried {})",
            tried.join(", ")
        ))
    }

    /// Read every page of each list the capabilities advertise.
    async fn inventory(&mut self) -> Ending {
        let caps = lock(&self.journal)
            .session()
            .and_then(|s| s.capabilities.clone())
            .unwrap_or(json!({}));
        let lists = [
            ("tools", method::TOOLS_LIST, leg::INVENTORY_TOOLS),
            (
                "resources",
                method::RESOURCES_LIST,
                leg::INVENTORY_RESOURCES,
            ),
            (
                "resources",
                method::RESOURCE_TEMPLATES_LIST,
                leg::INVENTORY_RESOURCE_TEMPLATES,
            ),
            ("prompts", method::PROMPTS_LIST, leg::INVENTORY_PROMPTS),
        ];
        for (cap, m, l) in lists {
            if caps.get(cap).is_none_or(Value::is_null) {
                lock(&self.journal).skip(
                    &[l],
                    format!("not requested: the server did not advertise the {cap:?} capability"),
                );
                continue;
            }
            self.list_all(m, l).await;
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

/// Handshake revisions named in `error.data.supported`, newest first, known ones only.
fn supported_handshake(r: &Reply) -> Vec<String> {
    let Some(list) = r
        .message
        .as_ref()
        .and_then(|m| m.get("error"))
        .and_then(|e| e.get("data"))
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    vocab::HANDSHAKE_REVISIONS
        .iter()
        .filter(|rev| list.iter().any(|v| v.as_str() == Some(rev)))
        .map(|s| s.to_string())
        .collect()
}
