//! How the access token goes on a request to the resource server: `Authorization:
//! Bearer <token>`, or, when the token is bound to the run's key (RFC 9449 DPoP),
//! `Authorization: DPoP <token>` and a fresh `DPoP` proof for the request's method and
//! URL. `Probe::auth_headers` is the one place that writes either; every request that
//! carries the token gets its headers from it.
//!
//! The proofs are signed by `oauth::proof` (the layer above) through
//! [`super::prover::Prover`]: this layer holds no key. A resource server that wants a nonce (401 with
//! `WWW-Authenticate: DPoP error="use_dpop_nonce"` and `DPoP-Nonce`) gets the same
//! request once more with a new proof carrying it (`Probe::send_authorized`); the
//! challenged exchange is recorded under `dpop.nonce`, and the nonce is kept for the
//! next requests to that origin.

use mcp_probe_schema::model::{Header, HttpOutcome};
use mcp_probe_schema::vocab::{header, leg};

use super::prover::{nonce_challenge, supplied_nonce};
use super::session::Probe;
use crate::journal::lock;
use crate::transport::http::{Request, Sent};

impl Probe<'_> {
    /// The headers that carry the held token on a `method` request to `url`: none
    /// without a token; `Authorization: Bearer`; or, when the token is DPoP-bound,
    /// `Authorization: DPoP` and a fresh proof for this method and URL (a new `jti` on
    /// every call). A token presented deliberately (3.3.1b's foreign-audience token) is
    /// the held one while it is sent, so its proof's `ath` is its own.
    pub(crate) fn auth_headers(&self, method: &str, url: &url::Url) -> Vec<Header> {
        let Some(t) = &self.token else {
            return Vec::new();
        };
        match &self.dpop {
            None => vec![Header::new(header::AUTHORIZATION, format!("Bearer {t}"))],
            Some(p) => {
                let mut h = vec![Header::new(header::AUTHORIZATION, format!("DPoP {t}"))];
                if let Some(proof) = p.proof(method, url, t) {
                    h.push(Header::new(header::DPOP, proof));
                }
                h
            }
        }
    }

    /// Keep the `DPoP-Nonce` an answer from `url` supplied (DPoP only).
    pub(crate) fn keep_nonce(&self, url: &url::Url, headers: &[Header]) {
        if let (Some(p), Some(n)) = (&self.dpop, supplied_nonce(headers)) {
            p.keep_nonce(url, &n);
        }
    }

    /// Send `req` (its headers without the credential) with the credential when
    /// `credential` is set (not on an anonymous session). With a DPoP-bound token, an
    /// answer that is a `use_dpop_nonce` challenge is recorded under `dpop.nonce`
    /// (its TLS handshake under `tls.modern`), the nonce is kept and the request is sent
    /// once more with a new proof; the caller records what this returns.
    pub(crate) async fn send_authorized(&self, req: Request, credential: bool) -> Sent {
        let with = credential && !self.anonymous && self.token.is_some();
        let mut first = req.clone();
        if with {
            first
                .headers
                .extend(self.auth_headers(&req.method, &req.url));
        }
        let sent = self.client.send(first).await;
        if !with || self.dpop.is_none() {
            return sent;
        }
        let (status, headers) = match &sent.exchange.outcome {
            HttpOutcome::Response(r) => (r.status, r.headers.clone()),
            HttpOutcome::Error(_) => return sent,
        };
        self.keep_nonce(&req.url, &headers);
        if nonce_challenge(status, &headers).is_none() {
            return sent;
        }
        self.record_sent(&[leg::DPOP_NONCE], sent);
        lock(&self.journal).update_session(|s| {
            if let Some(d) = s.dpop.as_mut() {
                d.rs_nonce_required = true;
            }
        });
        let mut again = req.clone();
        again
            .headers
            .extend(self.auth_headers(&req.method, &req.url));
        let sent = self.client.send(again).await;
        if let HttpOutcome::Response(r) = &sent.exchange.outcome {
            self.keep_nonce(&req.url, &r.headers);
        }
        sent
    }
}
