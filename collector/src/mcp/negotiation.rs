//! Endpoint detection with revision negotiation, and the legacy handshake where needed.
//!
//! On each endpoint candidate the collector first sends a complete 2026-07-28
//! `server/discover` (headers and `_meta` envelope). A result means the server speaks
//! 2026-07-28. Anything else except 401 (a legacy server's 400/404/405, or a modern
//! server refusing the version) is followed by an `initialize` offering 2025-11-25 on the
//! same candidate; the revision the server echoes is used when this tool knows it, and an
//! error that lists `data.supported` leads to one more `initialize` with the newest
//! revision both sides know (one retry per refusal). A -32022 refusal of
//! `server/discover` whose `data.supported` names 2026-07-28 as the newest revision both
//! know gets one more `server/discover`. A result that is not a `DiscoverResult` (`{}`)
//! is not taken for 2026-07-28. A candidate that answers neither is left for the next one.
//! 401 ends detection: the endpoint is there and wants credentials.
//!
//! The collector decides nothing about compliance here: it only keeps going with the
//! revision the server accepted, and records every exchange.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{Era, Session, TransportError};
use mcp_probe_schema::vocab::{self, header, leg, meta, method};
use serde_json::Value;

use super::session::{Ending, Probe, Reply};
use crate::journal::lock;

impl Probe<'_> {
    /// Run detection, negotiation and inventory.
    pub async fn run(&mut self, candidates: &[url::Url]) -> Ending {
        let mut reasons = Vec::new();
        self.close_sse().await;
        self.sse_fallback = true;
        for cand in candidates {
            match self.try_candidate(cand).await {
                Ok(Some(ending)) => return ending,
                Ok(None) => return self.inventory().await,
                Err(reason) => {
                    let unreachable = matches!(reason, NotAnEndpoint::Transport(_));
                    if !matches!(
                        reason,
                        NotAnEndpoint::Refused { .. } | NotAnEndpoint::NoRevision { .. }
                    ) {
                        self.sse_fallback = false;
                    }
                    reasons.push(format!("{cand}: {reason}"));
                    if unreachable {
                        // Same host and port for every candidate: a network failure on
                        // one is a failure on all; do not knock again.
                        break;
                    }
                }
            }
        }
        // No candidate speaks Streamable HTTP, and each refused it the way a server
        // without it does: the legacy HTTP+SSE transport (docs/collector.md).
        if let (true, Some(url)) = (self.sse_fallback, super::sse::sse_candidate(candidates)) {
            // Boxed, like the HTTP+SSE requests: it is rarely taken.
            match Box::pin(self.try_sse(&url)).await {
                Ok(Some(ending)) => return ending,
                Ok(None) => return self.inventory().await,
                Err(reason) => reasons.push(reason),
            }
        }
        Ending::NoEndpoint(reasons.join("; "))
    }

    pub(crate) fn set_endpoint(&mut self, cand: &url::Url, auth_required: bool) {
        self.endpoint = Some(cand.clone());
        let mut j = lock(&self.journal);
        j.set_endpoint(cand.to_string());
        // A second detection after a login carries the credential: the first one's 401
        // is what says the endpoint requires authentication.
        let auth_required = auth_required || j.session().is_some_and(|s| s.auth_required);
        // Kept: how the login after the first detection found its endpoints.
        let authorization_defaults = j.session().and_then(|s| s.authorization_defaults.clone());
        let dpop = j.session().and_then(|s| s.dpop.clone());
        let resource_refused_in = j.session().and_then(|s| s.resource_refused_in);
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
            other_eras: Vec::new(),
            authorization_defaults,
            step_up: None,
            resource_refused_in,
            dpop,
        }));
    }

    /// The end of a legacy handshake every transport shares: the endpoint and the
    /// agreed revision recorded (`echoed`, the `initialize` result of record `seq`), then
    /// `notifications/initialized` sent to `url`.
    pub(crate) async fn finish_handshake(
        &mut self,
        url: &url::Url,
        echoed: &str,
        result: &Value,
        seq: u64,
    ) {
        self.set_endpoint(url, false);
        self.set_negotiated(Era::Legacy, echoed, result, seq);
        let (h, body, _) = self.legacy(method::INITIALIZED, serde_json::Map::new(), true);
        let _ = self
            .rpc(&[leg::SESSION_INITIALIZED], url, h, &body, None)
            .await;
    }

    pub(crate) fn set_negotiated(&mut self, era: Era, rev: &str, result: &Value, seq: u64) {
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
    async fn try_candidate(&mut self, cand: &url::Url) -> Result<Option<Ending>, NotAnEndpoint> {
        let (h, body, id) = self.modern(method::DISCOVER, serde_json::Map::new());
        let mut r = self
            .rpc(&[leg::ENDPOINT_DETECT], cand, h, &body, Some(id))
            .await;
        if let Some(ending) = self.stops_detection(cand, &r)? {
            return Ok(Some(ending));
        }
        if let (Some(200), Some(result)) = (r.status, discover_result(&r).cloned()) {
            self.set_endpoint(cand, false);
            self.set_negotiated(Era::Modern, vocab::REV_2026_07_28, &result, r.seq);
            return Ok(None);
        }
        // A -32022 refusal whose `data.supported` names 2026-07-28 as the newest revision
        // this tool speaks: one more `server/discover` (the retry the refusal asks for).
        let mut named = supported_handshake(&r);
        if retry_offer(&r).as_deref() == Some(vocab::REV_2026_07_28) {
            let (h, body, id) = self.modern(method::DISCOVER, serde_json::Map::new());
            r = self
                .rpc(&[leg::ENDPOINT_DETECT], cand, h, &body, Some(id))
                .await;
            if let Some(ending) = self.stops_detection(cand, &r)? {
                return Ok(Some(ending));
            }
            if let (Some(200), Some(result)) = (r.status, discover_result(&r).cloned()) {
                self.set_endpoint(cand, false);
                self.set_negotiated(Era::Modern, vocab::REV_2026_07_28, &result, r.seq);
                return Ok(None);
            }
            // The retry's refusal decides when it names handshake revisions; else the
            // first refusal's still stand.
            let again = supported_handshake(&r);
            if !again.is_empty() {
                named = again;
            }
        }
        let discover = describe_discover(&r);
        let mut fallback = super::sse::falls_back(&r);
        // The newest handshake revision the server names in a refusal (-32022's
        // `data.supported`), else 2025-11-25.
        let mut offer = named
            .into_iter()
            .next()
            .unwrap_or_else(|| vocab::REV_2025_11_25.to_string());
        let mut tried: Vec<String> = Vec::new();
        loop {
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
            if let Some(ending) = self.stops_detection(cand, &r)? {
                return Ok(Some(ending));
            }
            if let (Some(200), Some(result)) = (r.status, r.result().cloned()) {
                let echoed =
                    derive::agreed_revision(&result).map_err(NotAnEndpoint::UnknownRevision)?;
                self.session_id = derive::header(&r.headers, header::SESSION_ID)
                    .map(|h| h.value_str().into_owned());
                self.finish_handshake(cand, &echoed, &result, r.seq).await;
                return Ok(None);
            }
            fallback &= super::sse::falls_back(&r);
            // One retry per refusal, with the newest revision it names that was not
            // offered yet; a refusal naming none ends the candidate.
            let next = supported_handshake(&r)
                .into_iter()
                .find(|m| !tried.contains(m));
            match next {
                Some(m) if tried.len() < vocab::HANDSHAKE_REVISIONS.len() => offer = m,
                Some(_) => {
                    self.sse_fallback &= fallback;
                    return Err(NotAnEndpoint::NoRevision {
                        discover,
                        tried: tried.join(", "),
                    });
                }
                None => {
                    self.sse_fallback &= fallback;
                    return Err(NotAnEndpoint::Refused {
                        discover,
                        offer,
                        answer: r.describe(),
                    });
                }
            }
        }
    }

    /// What ends detection on a candidate whatever was sent: a transport failure (this
    /// candidate is not an endpoint, and no other is tried) or a 401 (the endpoint is
    /// there and wants credentials; the challenge is kept for discovery).
    fn stops_detection(
        &mut self,
        cand: &url::Url,
        r: &Reply,
    ) -> Result<Option<Ending>, NotAnEndpoint> {
        if let Some(e) = &r.error {
            return Err(NotAnEndpoint::Transport(e.clone()));
        }
        if r.status != Some(401) {
            return Ok(None);
        }
        self.challenge =
            derive::header(&r.headers, header::WWW_AUTHENTICATE).map(|h| h.value.to_vec());
        self.set_endpoint(cand, true);
        Ok(Some(Ending::AuthRequired))
    }
}

/// Why a candidate is not an MCP endpoint (the text goes into `run.failure`).
#[derive(Debug, thiserror::Error)]
enum NotAnEndpoint {
    /// The request failed below HTTP: every candidate shares the host and port, so no
    /// other is tried.
    #[error("transport: {0}")]
    Transport(TransportError),
    /// `initialize` echoed a revision this tool does not speak.
    #[error("initialize answered protocolVersion {0:?}, which is not a handshake revision this tool speaks")]
    UnknownRevision(String),
    /// `server/discover` and an `initialize` were both refused.
    #[error("server/discover: {discover}; initialize {offer}: {answer}")]
    Refused {
        /// The `server/discover` answer.
        discover: String,
        /// The revision offered last.
        offer: String,
        /// The `initialize` answer.
        answer: String,
    },
    /// No offered handshake revision was accepted.
    #[error("server/discover: {discover}; no handshake revision accepted (tried {tried})")]
    NoRevision {
        /// The `server/discover` answer.
        discover: String,
        /// The revisions offered, comma-separated.
        tried: String,
    },
}

/// Handshake revisions named in `error.data.supported`, newest first, known ones only.
pub(crate) fn supported_handshake(r: &Reply) -> Vec<String> {
    supported_among(r, &vocab::HANDSHAKE_REVISIONS)
}

/// The revisions of `known` (newest first) that `error.data.supported` names.
fn supported_among(r: &Reply, known: &[&str]) -> Vec<String> {
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
    known
        .iter()
        .filter(|rev| list.iter().any(|v| v.as_str() == Some(rev)))
        .map(|s| s.to_string())
        .collect()
}

/// After a -32022 (`UnsupportedProtocolVersion`) refusal: the newest revision this tool
/// speaks (2026-07-28 or a handshake revision) that its `data.supported` names, the one
/// retry the refusal asks for. `None` for any other answer or a list naming none.
pub(crate) fn retry_offer(r: &Reply) -> Option<String> {
    if r.error_code() != Some(vocab::code::UNSUPPORTED_PROTOCOL_VERSION) {
        return None;
    }
    supported_among(r, &vocab::REVISIONS).into_iter().next()
}

/// The `server/discover` result when it is a `DiscoverResult`: a JSON object carrying at
/// least one of the members the 2026-07-28 schema requires of every one
/// (`supportedVersions`, `capabilities`). An empty object, or one with neither, is not
/// an answer to `server/discover` (a server that answers any method with `{}`): it is
/// not taken for a 2026-07-28 server, and the handshake is tried. A result missing only
/// one of the two (or `ttlMs`, `cacheScope`) is still taken, so that 1.1a and 10.1c can
/// grade what it lacks.
pub(crate) fn discover_result(r: &Reply) -> Option<&Value> {
    r.result().filter(|v| {
        v.as_object().is_some_and(|o| {
            o.get("supportedVersions").is_some_and(Value::is_array)
                || o.get("capabilities").is_some_and(Value::is_object)
        })
    })
}

/// One line for the `server/discover` answer, saying when a result was not taken.
pub(crate) fn describe_discover(r: &Reply) -> String {
    if r.result().is_some() && discover_result(r).is_none() {
        format!(
            "{} (not a DiscoverResult: neither supportedVersions nor capabilities)",
            r.describe()
        )
    } else {
        r.describe()
    }
}
