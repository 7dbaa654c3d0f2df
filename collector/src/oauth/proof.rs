//! RFC 9449 DPoP proofs (docs/collector.md, "Credentials"): the run's key, the proofs
//! it signs and the nonces servers supplied. Header `typ` `dpop+jwt`, `alg` ES256, `jwk`
//! the public key; claims `jti` (new for every request, retries included), `htm`, `htu`
//! (the URL without query and fragment, its host as written: `localhost` stays
//! `localhost`), `iat`, `ath` (base64url SHA-256 of the access token) on resource
//! requests, and `nonce` once the server at that origin gave one. When and where proofs
//! are sent is `dpop.rs`'s; this file touches neither the network nor the journal.
//!
//! The key ([`SigningKey::ephemeral_es256`]) is made in memory for the run: never
//! written, never recorded; only its RFC 7638 thumbprint is.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::jose::{random_jti, KeyError, SigningKey};
use crate::mcp::prover::Prover;

/// The one algorithm the collector signs proofs with.
pub const ALG: &str = "ES256";

/// The run's DPoP key and the nonces servers supplied (by origin).
pub struct Dpop {
    key: SigningKey,
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dpop({})", self.key.thumbprint())
    }
}

/// `htu`: the URL without query and fragment (RFC 9449 §4.2), host as written.
pub fn htu(url: &url::Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// `ath`: base64url (no padding) of the SHA-256 of the access token's ASCII.
pub fn ath(access_token: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// The claims of a proof.
pub fn claims(
    jti: &str,
    htm: &str,
    url: &url::Url,
    iat: i64,
    access_token: Option<&str>,
    nonce: Option<&str>,
) -> Value {
    let mut c = json!({"jti": jti, "htm": htm, "htu": htu(url), "iat": iat});
    if let Some(t) = access_token {
        c["ath"] = Value::from(ath(t));
    }
    if let Some(n) = nonce {
        c["nonce"] = Value::from(n);
    }
    c
}

fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

impl Dpop {
    /// A new per-run key.
    pub fn new() -> Result<Dpop, KeyError> {
        Ok(Dpop {
            key: SigningKey::ephemeral_es256()?,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// The RFC 7638 thumbprint of the public key (`cnf.jkt` of a bound token).
    pub fn thumbprint(&self) -> String {
        self.key.thumbprint()
    }

    /// The nonce `url`'s origin supplied last.
    pub fn nonce_for(&self, url: &url::Url) -> Option<String> {
        self.nonces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&origin(url))
            .cloned()
    }

    /// Keep `nonce` for the next proofs to `url`'s origin.
    pub fn set_nonce(&self, url: &url::Url, nonce: &str) {
        self.nonces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(origin(url), nonce.to_string());
    }

    /// A fresh proof for `htm` on `url`: a new `jti`, `iat` now, `ath` when
    /// `access_token` is given, and the nonce `url`'s origin supplied last.
    pub fn proof(
        &self,
        htm: &str,
        url: &url::Url,
        access_token: Option<&str>,
    ) -> Result<String, KeyError> {
        let mut h = Map::new();
        h.insert("typ".into(), Value::from("dpop+jwt"));
        h.insert("jwk".into(), self.key.public_jwk());
        let c = claims(
            &random_jti()?,
            htm,
            url,
            chrono::Utc::now().timestamp(),
            access_token,
            self.nonce_for(url).as_deref(),
        );
        self.key.sign_jwt(ALG, h, &c)
    }
}

impl Prover for Dpop {
    fn proof(&self, method: &str, url: &url::Url, access_token: &str) -> Option<String> {
        Dpop::proof(self, method, url, Some(access_token)).ok()
    }

    fn keep_nonce(&self, url: &url::Url, nonce: &str) {
        self.set_nonce(url, nonce);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64d(s: &str) -> Vec<u8> {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s)
            .unwrap()
    }

    fn parts(jws: &str) -> (Value, Value) {
        let p: Vec<&str> = jws.split('.').collect();
        assert_eq!(p.len(), 3);
        (
            serde_json::from_slice(&b64d(p[0])).unwrap(),
            serde_json::from_slice(&b64d(p[1])).unwrap(),
        )
    }

    fn u(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn a_proof_has_the_rfc_9449_header_and_claims() {
        let d = Dpop::new().unwrap();
        let url = u("http://localhost:4321/mcp?x=1#frag");
        let p = d.proof("POST", &url, Some("tok-123")).unwrap();
        let (h, c) = parts(&p);
        assert_eq!(h["typ"], "dpop+jwt");
        assert_eq!(h["alg"], "ES256");
        assert_eq!(h["jwk"]["kty"], "EC");
        assert_eq!(h["jwk"]["crv"], "P-256");
        assert!(h["jwk"].get("d").is_none(), "public key only");
        assert_eq!(c["htm"], "POST");
        // No query, no fragment; localhost stays localhost.
        assert_eq!(c["htu"], "http://localhost:4321/mcp");
        let now = chrono::Utc::now().timestamp();
        assert!((c["iat"].as_i64().unwrap() - now).abs() < 5);
        assert!(c["jti"].as_str().is_some_and(|j| j.len() >= 16));
        assert_eq!(c["ath"], ath("tok-123"));
        assert!(c.get("nonce").is_none());
        // The token endpoint's proof has no ath.
        let (_, c2) = parts(
            &d.proof("POST", &u("http://localhost:1/token"), None)
                .unwrap(),
        );
        assert!(c2.get("ath").is_none());
    }

    #[test]
    fn ath_is_base64url_sha256_of_the_token() {
        // SHA-256("abc") = ba7816bf...; base64url without padding.
        assert_eq!(ath("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
        let c = claims("j", "GET", &u("https://a.example/x"), 1, Some("abc"), None);
        assert_eq!(c["ath"], "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    }

    #[test]
    fn htu_drops_query_and_fragment_and_keeps_the_host() {
        assert_eq!(
            htu(&u("http://localhost:8080/token?a=b#c")),
            "http://localhost:8080/token"
        );
        assert_eq!(
            htu(&u("http://127.0.0.1:8080/mcp")),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(htu(&u("https://AS.Example/t")), "https://as.example/t");
    }

    #[test]
    fn every_proof_has_a_new_jti_and_the_origins_nonce() {
        let d = Dpop::new().unwrap();
        let rs = u("http://localhost:2/mcp");
        let other = u("http://localhost:3/token");
        let (_, a) = parts(&d.proof("POST", &rs, Some("t")).unwrap());
        let (_, b) = parts(&d.proof("POST", &rs, Some("t")).unwrap());
        assert_ne!(a["jti"], b["jti"]);
        d.set_nonce(&rs, "rs-nonce");
        let (_, c) = parts(
            &d.proof("POST", &u("http://localhost:2/other?q"), Some("t"))
                .unwrap(),
        );
        assert_eq!(c["nonce"], "rs-nonce");
        assert_ne!(c["jti"], a["jti"]);
        let (_, e) = parts(&d.proof("POST", &other, None).unwrap());
        assert!(e.get("nonce").is_none(), "a nonce goes only to its origin");
    }
}
