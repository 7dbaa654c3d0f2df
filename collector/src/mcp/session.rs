//! The session context of one target ([`Probe`]): the client, the journal, the
//! endpoint, the negotiated revision and session id, the credential; and the JSON-RPC
//! requests both revision families send (2026-07-28 headers and `_meta` envelope, or the
//! legacy session id and version header). Every exchange is recorded.

use std::sync::{Arc, Mutex};

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{Era, Header, HttpOutcome, Observation, TransportError};
use mcp_probe_schema::vocab::{self, header, leg, meta, method, LegId};
use serde_json::{json, Value};

use crate::journal::{lock, Journal};
use crate::transport::http::{Client, Request, Sent};

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

/// A consented call answered 403 `insufficient_scope`, waiting for the run's one step-up
/// re-authorization (the step-up of the legs layer).
#[derive(Debug, Clone)]
pub struct StepUpPending {
    /// The `scope` the challenge named.
    pub challenged_scope: Option<String>,
    /// Seq of the 403 record.
    pub seq: u64,
    /// The leg of the refused call.
    pub leg: mcp_probe_schema::vocab::LegId,
    /// The tool it called, and the arguments.
    pub tool: String,
    /// The arguments it was called with.
    pub arguments: serde_json::Map<String, Value>,
    /// Its progress token, if it carried one.
    pub progress: Option<String>,
}

/// Per-target probing state.
pub struct Probe<'a> {
    pub(crate) client: &'a Client,
    pub(crate) journal: Arc<Mutex<Journal>>,
    pub(crate) token: Option<String>,
    /// Set when the token is DPoP-bound (RFC 9449): signs the proof every request that
    /// carries it gets ([`Probe::auth_headers`]).
    pub(crate) dpop: Option<Arc<dyn super::prover::Prover>>,
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
    /// Set on a stdio target: the server process and the per-request timeout. Every
    /// JSON-RPC message then goes over its stdin and stdout instead of HTTP.
    pub(crate) stdio: Option<(
        Arc<crate::transport::stdio::StdioChild>,
        std::time::Duration,
    )>,
    /// The open HTTP+SSE session, when the endpoint speaks that transport: requests to
    /// the endpoint go to its message URL and their answers come from its stream.
    pub(crate) sse: Option<super::stream::SseSession>,
    /// While detecting: every candidate so far refused Streamable HTTP the way a
    /// server without it does (400, 404 or 405 without a JSON-RPC answer).
    pub(crate) sse_fallback: bool,
    /// A consented call answered 403 `insufficient_scope`, waiting for the run's one
    /// step-up re-authorization (the step-up of the legs layer).
    pub(crate) step_up: Option<StepUpPending>,
    /// The run's step-up was asked for already (once per run).
    pub(crate) stepped_up: bool,
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
            dpop: None,
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
            stdio: None,
            sse: None,
            sse_fallback: false,
            step_up: None,
            stepped_up: false,
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
        if let Some((child, timeout)) = self.stdio.clone() {
            return self.rpc_stdio(&child, timeout, legs, body, id).await;
        }
        if let Some(session) = self.sse.take_if(|s| s.stream_url == *url) {
            // Boxed: the HTTP+SSE path would otherwise grow the future of every request.
            return Box::pin(self.rpc_sse(session, legs, headers, body, id)).await;
        }
        let bytes = super::json::to_vec(body);
        self.post(legs, url, headers, body, bytes, id).await
    }

    /// [`Probe::rpc_awaiting`] of `body` with `params.pad` a string of `pad` bytes
    /// ([`super::json::pad`]; the 10.2a padded request). Over Streamable HTTP the body's
    /// bytes are written with the pad in place ([`super::json::to_vec_padded`]), the
    /// same bytes as if the string had been built.
    pub(crate) async fn rpc_padded(
        &mut self,
        legs: &[LegId],
        url: &url::Url,
        headers: Vec<Header>,
        mut body: Value,
        id: Option<Value>,
        pad: usize,
    ) -> Reply {
        let http = self.stdio.is_none() && self.sse.as_ref().is_none_or(|s| s.stream_url != *url);
        if !http {
            body["params"]["pad"] = Value::String(super::json::pad(pad));
            return self.rpc_awaiting(legs, url, headers, &body, id).await;
        }
        body["params"]["pad"] = Value::String(String::new());
        let bytes = super::json::to_vec_padded(&body, &body["params"]["pad"], pad);
        self.post(legs, url, headers, &body, bytes, id).await
    }

    /// POST `bytes` (the encoding of `body`) over Streamable HTTP with the credential
    /// (unless anonymous; [`Probe::send_authorized`]) and record the exchange.
    async fn post(
        &mut self,
        legs: &[LegId],
        url: &url::Url,
        headers: Vec<Header>,
        body: &Value,
        bytes: Vec<u8>,
        id: Option<Value>,
    ) -> Reply {
        let req = Request {
            method: "POST".into(),
            url: url.clone(),
            headers,
            body: bytes,
            await_id: id.clone(),
            head_only_stream: false,
            connect_to: None,
        };
        self.set_in_flight(Some(in_flight_text(body, legs, "")));
        let sent = self.send_authorized(req, true).await;
        self.set_in_flight(None);
        self.reply(legs, sent, id.as_ref())
    }

    /// Name the request in flight (for a per-target deadline's message), or clear it.
    pub(crate) fn set_in_flight(&self, what: Option<String>) {
        *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = what;
    }

    /// Record `sent`: the addresses its host resolved to, its TLS handshake (under
    /// `tls.modern`) and the exchange under `legs`. Returns the exchange's seq.
    pub(crate) fn record_sent(&self, legs: &[LegId], mut sent: Sent) -> u64 {
        let mut j = lock(&self.journal);
        if let Some(addrs) = &sent.resolved {
            for a in addrs {
                j.add_address(a.to_string());
            }
        }
        sent.record_tls(&mut j, leg::TLS_MODERN);
        j.record(
            legs,
            sent.started_at,
            sent.duration.as_micros() as u64,
            Observation::Http(sent.exchange),
        )
    }

    /// Record `sent` under `legs` and read from its body the answer to `id`.
    pub(crate) fn reply(&self, legs: &[LegId], sent: Sent, id: Option<&Value>) -> Reply {
        let (status, headers, message, error, cut) = match &sent.exchange.outcome {
            HttpOutcome::Response(r) => {
                // Only a whole body is the server's answer: a reply cut by a reset or a
                // truncated chunk may still parse, but is not what the server said.
                let cut = derive::body_cut(&r.body);
                let message = match (&cut, id) {
                    (None, Some(i)) => {
                        derive::response_to(&derive::jsonrpc_messages(r), i).cloned()
                    }
                    _ => None,
                };
                (Some(r.status), r.headers.clone(), message, None, cut)
            }
            HttpOutcome::Error(e) => (None, Vec::new(), None, Some(e.clone()), None),
        };
        let seq = self.record_sent(legs, sent);
        Reply {
            status,
            headers,
            message,
            error,
            cut,
            seq,
        }
    }

    /// [`Probe::rpc_awaiting`] on a stdio target: lines the server wrote while no
    /// request was pending are recorded first (`stdio.stream`), then the message and
    /// every line read until its answer, as one record of `legs`. HTTP headers have no
    /// meaning here and are not sent.
    async fn rpc_stdio(
        &mut self,
        child: &crate::transport::stdio::StdioChild,
        timeout: std::time::Duration,
        legs: &[LegId],
        body: &Value,
        id: Option<Value>,
    ) -> Reply {
        self.record_stdio_stream(child);
        let what = format!(
            "the {} message of leg {}",
            body.get("method").and_then(Value::as_str).unwrap_or("a"),
            legs.iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = Some(what);
        let bytes = super::json::to_vec(body);
        let started_at = crate::journal::now_us();
        let (_, took, x, message) = child.exchange(legs, &bytes, id.as_ref(), timeout).await;
        *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let error = x.error.clone();
        let seq = lock(&self.journal).record(
            legs,
            started_at,
            took.as_micros() as u64,
            Observation::Stdio(x),
        );
        Reply {
            status: None,
            headers: Vec::new(),
            message,
            error: if id.is_some() { error } else { None },
            cut: None,
            seq,
        }
    }

    /// Record the stdout lines queued while no request was pending, if any.
    pub(crate) fn record_stdio_stream(&self, child: &crate::transport::stdio::StdioChild) {
        if let Some((at, x)) = child.drain_now() {
            let started_at =
                crate::journal::now_us() - at.elapsed().as_micros().min(i64::MAX as u128) as i64;
            lock(&self.journal).record(&[leg::STDIO_STREAM], started_at, 0, Observation::Stdio(x));
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
}

/// What a deadline message names as in flight: `the <method> request of leg <legs>`
/// and `suffix`.
pub(crate) fn in_flight_text(body: &Value, legs: &[LegId], suffix: &str) -> String {
    format!(
        "the {} request of leg {}{suffix}",
        body.get("method")
            .and_then(Value::as_str)
            .unwrap_or("a request"),
        legs.iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
