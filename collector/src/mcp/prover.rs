//! What the MCP layer needs of RFC 9449 DPoP without holding a key: the [`Prover`]
//! the OAuth layer implements (`oauth::proof::Dpop`), and how a server asks for a nonce.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::Header;
use mcp_probe_schema::vocab::header;
use mcp_probe_schema::www_authenticate;

/// Signs RFC 9449 proofs for resource requests with the run's key.
pub trait Prover: Send + Sync {
    /// A fresh proof (a new `jti`) for `method` on `url`, bound to `access_token`
    /// (`ath`), carrying the nonce `url`'s origin supplied last, if any. `None` when
    /// signing failed (the request then goes without a proof and the server says so).
    fn proof(&self, method: &str, url: &url::Url, access_token: &str) -> Option<String>;
    /// Keep `nonce`, supplied by the server at `url`'s origin, for the next proofs to it.
    fn keep_nonce(&self, url: &url::Url, nonce: &str);
}

/// The `DPoP-Nonce` a server supplied (RFC 9449 §8, §9), if any.
pub fn supplied_nonce(headers: &[Header]) -> Option<String> {
    derive::header(headers, header::DPOP_NONCE)
        .map(|h| h.value_str().trim().to_string())
        .filter(|n| !n.is_empty())
}

/// The nonce of a resource server's `use_dpop_nonce` challenge (RFC 9449 §9): a 401
/// whose `WWW-Authenticate` has a `DPoP` challenge with `error="use_dpop_nonce"`, and a
/// `DPoP-Nonce`.
pub fn nonce_challenge(status: u16, headers: &[Header]) -> Option<String> {
    if status != 401 {
        return None;
    }
    let asked = headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(header::WWW_AUTHENTICATE))
        .flat_map(|h| www_authenticate::parse(&h.value).challenges)
        .any(|c| c.is_scheme("DPoP") && c.param("error") == Some("use_dpop_nonce"));
    asked.then(|| supplied_nonce(headers)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_challenge_is_a_401_dpop_use_dpop_nonce_with_a_nonce() {
        let h = |w: &str, n: Option<&str>| {
            let mut v = vec![Header::new(header::WWW_AUTHENTICATE, w)];
            if let Some(n) = n {
                v.push(Header::new("dpop-nonce", n));
            }
            v
        };
        let ch = r#"DPoP error="use_dpop_nonce", resource_metadata="http://localhost:1/x""#;
        assert_eq!(
            nonce_challenge(401, &h(ch, Some("n-1"))).as_deref(),
            Some("n-1")
        );
        assert_eq!(nonce_challenge(400, &h(ch, Some("n-1"))), None);
        assert_eq!(nonce_challenge(401, &h(ch, None)), None);
        assert_eq!(
            nonce_challenge(401, &h(r#"Bearer error="use_dpop_nonce""#, Some("n"))),
            None
        );
        assert_eq!(
            nonce_challenge(401, &h(r#"DPoP error="invalid_token""#, Some("n"))),
            None
        );
        assert_eq!(
            supplied_nonce(&h("x", Some("  n-2 "))).as_deref(),
            Some("n-2")
        );
    }
}
