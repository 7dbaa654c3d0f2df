//! RFC 9449 DPoP: sender-constrained access tokens (docs/collector.md, "Credentials").
//!
//! * **When.** [`prepare`] decides before anything is registered or a code spent: DPoP is
//!   used when the authorization server's metadata lists ES256 in
//!   `dpop_signing_alg_values_supported`, unless the endpoint's 401 challenged with
//!   `Bearer` and not `DPoP` (a bound token would be refused there). When the endpoint's 401 challenged with the
//!   `DPoP` scheme only (it demands bound tokens) and the metadata lists no algorithm the
//!   collector signs (it signs ES256 only), the login fails at once with one line naming
//!   both. What was met is recorded in `session.dpop`.
//! * **The key** (`proof.rs`). One P-256 key per run, in memory only: never written,
//!   never recorded. Its RFC 7638 thumbprint is recorded (`jkt`). A
//!   DPoP-bound token cached by an earlier run is bound to a key that is gone, so it is
//!   never reused; a refresh or a new login gets one bound to this run's key.
//! * **Proofs**: [`Dpop::proof`] in `proof.rs` (a new `jti` for every request).
//! * **Token endpoint** (`Login::send_token`): every token request carries exactly one
//!   `DPoP` header; a 400 `use_dpop_nonce` with a `DPoP-Nonce` is answered by the same
//!   request once more with a new proof carrying the nonce (an authorization code is not
//!   consumed by that refusal). The refused attempt is recorded under `dpop.nonce`.
//! * **Resource requests**: `mcp::credential` writes `Authorization: DPoP` and asks this
//!   module for the proof through [`Prover`].

use std::sync::{Arc, Mutex};

use mcp_probe_schema::model::{DpopFacts, Header};
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde_json::Value;

use super::discovery::Discovered;
use super::error::LoginError;
use super::login::{Answer, Credential, Login};
use super::proof::{Dpop, ALG};
use super::response::str_field;
use crate::journal::{lock, Journal};
use crate::mcp::prover::{supplied_nonce, Prover};
use crate::transport::http::{Client, Request};

/// The strings of the metadata's `dpop_signing_alg_values_supported`, when it is a list.
fn as_algs(as_metadata: &Value) -> Option<Vec<String>> {
    as_metadata
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
}

/// What the login does about DPoP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No DPoP: Bearer tokens.
    Bearer,
    /// DPoP with ES256.
    Dpop,
    /// The endpoint demands DPoP and nothing the collector signs is listed: the line.
    Refuse(String),
}

/// Decide from the authorization server's metadata and the endpoint's challenge (see
/// the module docs), with the facts to record (`None` when neither asked for DPoP).
pub fn decide(as_metadata: &Value, found: &Discovered) -> (Decision, Option<DpopFacts>) {
    let listed = as_algs(as_metadata);
    let dpop_challenge = found.dpop_challenge.as_ref();
    let bearer = found
        .challenge
        .as_ref()
        .is_some_and(|c| c.is_scheme("Bearer"));
    let rs_demanded = dpop_challenge.is_some() && !bearer;
    if listed.is_none() && dpop_challenge.is_none() {
        return (Decision::Bearer, None);
    }
    let facts = DpopFacts {
        as_algs: listed.clone(),
        rs_demanded,
        ..DpopFacts::default()
    };
    // RFC 9449 §7.1: a resource server's `algs` lists what it accepts.
    let rs_algs: Option<Vec<&str>> = dpop_challenge
        .and_then(|c| c.param("algs"))
        .map(|a| a.split_ascii_whitespace().collect());
    let as_ok = listed.as_ref().is_some_and(|l| l.iter().any(|a| a == ALG));
    let rs_ok = rs_algs.as_ref().is_none_or(|l| l.contains(&ALG));
    // An endpoint that challenged with Bearer and not DPoP said how it takes tokens: a
    // DPoP-bound one (`Authorization: DPoP`) would be refused there (RFC 9449 §7.2).
    let bearer_only = bearer && dpop_challenge.is_none();
    if as_ok && rs_ok && !bearer_only {
        return (Decision::Dpop, Some(facts));
    }
    if !rs_demanded {
        return (Decision::Bearer, Some(facts));
    }
    let issuer = as_metadata
        .get("issuer")
        .and_then(Value::as_str)
        .unwrap_or("(no issuer)");
    let why = if !as_ok {
        match &listed {
            None => format!(
                "the authorization server {issuer} lists no dpop_signing_alg_values_supported"
            ),
            Some(l) => format!(
                "the authorization server {issuer} lists dpop_signing_alg_values_supported {l:?}"
            ),
        }
    } else {
        format!(
            "its challenge accepts only algs {:?}",
            rs_algs.unwrap_or_default()
        )
    };
    (
        Decision::Refuse(format!(
            "the endpoint demands DPoP-bound tokens (WWW-Authenticate: DPoP, RFC 9449) but {why}; \
             mcp-collect signs DPoP proofs with {ALG} only, so no login was attempted"
        )),
        Some(facts),
    )
}

/// Decide DPoP for `login` before it registers or spends anything, record what was met
/// in `session.dpop`, and give the login the run's key when DPoP is used. `Err`: the
/// endpoint demands DPoP and no algorithm the collector signs is listed.
pub fn prepare(
    login: &mut Login,
    as_metadata: &Value,
    found: &Discovered,
    journal: &Mutex<Journal>,
) -> Result<(), LoginError> {
    let (decision, mut facts) = decide(as_metadata, found);
    if decision == Decision::Dpop {
        let d = Dpop::new().map_err(|e| LoginError::Dpop(format!("DPoP key: {e}")))?;
        if let Some(f) = facts.as_mut() {
            f.alg = Some(ALG.into());
            f.jkt = Some(d.thumbprint());
        }
        login.dpop = Some(Arc::new(d));
    }
    if let Some(f) = facts {
        lock(journal).update_session(|s| s.dpop = Some(f));
    }
    match decision {
        Decision::Refuse(why) => Err(LoginError::Dpop(why)),
        _ => Ok(()),
    }
}

/// The prover the probe presents `cred` with: the login's key when the token is
/// DPoP-bound (`token_type` `DPoP`), recorded as used; `None` for a Bearer token.
pub fn prover_for(
    login: &Login,
    cred: &Credential,
    journal: &Mutex<Journal>,
) -> Option<Arc<dyn Prover>> {
    let d = login.dpop.clone()?;
    if !cred.token_type.eq_ignore_ascii_case("dpop") {
        return None;
    }
    lock(journal).update_session(|s| {
        if let Some(f) = s.dpop.as_mut() {
            f.used = true;
        }
    });
    Some(d)
}

/// Whether a token endpoint answer is a `use_dpop_nonce` refusal (RFC 9449 §8): 400,
/// OAuth error `use_dpop_nonce`, and a `DPoP-Nonce`.
fn as_nonce_challenge(a: &Answer) -> Option<String> {
    (a.status == 400 && str_field(&a.json, "error").as_deref() == Some("use_dpop_nonce"))
        .then(|| supplied_nonce(&a.headers))
        .flatten()
}

impl Login {
    /// Whether a cached access token of `token_type` may be presented: never a
    /// DPoP-bound one (its key was another run's), and no Bearer one when this login
    /// uses DPoP (the server asked for bound tokens).
    pub(super) fn cached_token_usable(&self, token_type: &str) -> bool {
        self.dpop.is_none() && !token_type.eq_ignore_ascii_case("dpop")
    }

    /// The leg a token endpoint answer is recorded under: `dpop.nonce` for a nonce
    /// refusal to a DPoP login (the request is then sent again under `leg`), else `leg`.
    pub(super) fn answer_leg(&self, a: &Answer, leg: LegId) -> LegId {
        if self.dpop.is_some() && as_nonce_challenge(a).is_some() {
            leg::DPOP_NONCE
        } else {
            leg
        }
    }

    /// Send a token endpoint request: [`Login::send`] as is without DPoP; with it, a
    /// `DPoP` proof (POST, the token endpoint), and once more with a new proof carrying
    /// the nonce when the server refused with `use_dpop_nonce`.
    pub(super) async fn send_token(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        req: Request,
        secrets: &[(&str, &str)],
    ) -> Result<Answer, LoginError> {
        let Some(d) = self.dpop.clone() else {
            return self.send(client, journal, leg, req, secrets).await;
        };
        let with_proof = |req: &Request| -> Result<Request, LoginError> {
            let proof = d
                .proof(&req.method, &req.url, None)
                .map_err(|e| LoginError::Dpop(format!("DPoP proof: {e}")))?;
            let mut r = req.clone();
            r.headers
                .retain(|h| !h.name.eq_ignore_ascii_case(header::DPOP));
            r.headers.push(Header::new(header::DPOP, proof));
            Ok(r)
        };
        let a = self
            .send(client, journal, leg, with_proof(&req)?, secrets)
            .await?;
        if let Some(n) = supplied_nonce(&a.headers) {
            d.set_nonce(&req.url, &n);
        }
        if as_nonce_challenge(&a).is_none() {
            return Ok(a);
        }
        lock(journal).update_session(|s| {
            if let Some(f) = s.dpop.as_mut() {
                f.as_nonce_required = true;
            }
        });
        let a = self
            .send(client, journal, leg, with_proof(&req)?, secrets)
            .await?;
        if let Some(n) = supplied_nonce(&a.headers) {
            d.set_nonce(&req.url, &n);
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::www_authenticate::Challenge;
    use serde_json::json;

    fn found(challenges: &[Challenge]) -> Discovered {
        Discovered {
            challenge: challenges
                .iter()
                .find(|c| c.is_scheme("Bearer"))
                .or_else(|| challenges.iter().find(|c| c.is_scheme("DPoP")))
                .cloned(),
            dpop_challenge: challenges.iter().find(|c| c.is_scheme("DPoP")).cloned(),
            ..Discovered::default()
        }
    }

    #[test]
    fn dpop_is_used_when_es256_is_listed_and_refused_when_demanded_without_it() {
        let es =
            json!({"issuer": "http://localhost:9", "dpop_signing_alg_values_supported": ["ES256"]});
        let rs =
            json!({"issuer": "http://localhost:9", "dpop_signing_alg_values_supported": ["RS256"]});
        let none = json!({"issuer": "http://localhost:9"});
        let dpop = Challenge::new("DPoP", &[("resource_metadata", "http://x/y")]);
        let bearer = Challenge::new("Bearer", &[]);
        let (d, f) = decide(&es, &found(&[]));
        assert_eq!(d, Decision::Dpop);
        let f = f.unwrap();
        assert_eq!(f.as_algs, Some(vec!["ES256".to_string()]));
        assert!(!f.rs_demanded);
        let (d, f) = decide(&es, &found(std::slice::from_ref(&dpop)));
        assert_eq!(d, Decision::Dpop);
        assert!(f.unwrap().rs_demanded);
        assert_eq!(decide(&none, &found(&[])), (Decision::Bearer, None));
        // Offered by the AS, but the endpoint challenged with Bearer only: Bearer.
        let (d, f) = decide(&es, &found(std::slice::from_ref(&bearer)));
        assert_eq!(d, Decision::Bearer);
        assert_eq!(f.unwrap().as_algs, Some(vec!["ES256".to_string()]));
        // Both challenged: DPoP.
        let (d, _) = decide(&es, &found(&[bearer.clone(), dpop.clone()]));
        assert_eq!(d, Decision::Dpop);
        // Offered with an algorithm we do not sign, not demanded: Bearer, recorded.
        let (d, f) = decide(&rs, &found(&[bearer.clone(), dpop.clone()]));
        assert_eq!(d, Decision::Bearer);
        assert!(!f.unwrap().rs_demanded);
        // Demanded, nothing we sign: refused before any registration.
        let (d, _) = decide(&rs, &found(std::slice::from_ref(&dpop)));
        assert!(
            matches!(&d, Decision::Refuse(w) if w.contains("[\"RS256\"]") && w.contains("ES256")),
            "{d:?}"
        );
        let (d, _) = decide(&none, &found(std::slice::from_ref(&dpop)));
        assert!(
            matches!(&d, Decision::Refuse(w) if w.contains("lists no dpop_signing_alg_values_supported")),
            "{d:?}"
        );
        let only_rs = Challenge::new("DPoP", &[("algs", "PS256 EdDSA")]);
        let (d, _) = decide(&es, &found(&[only_rs]));
        assert!(
            matches!(&d, Decision::Refuse(w) if w.contains("PS256")),
            "{d:?}"
        );
    }
}
