//! PKCE (RFC 7636): the random verifier and its S256 challenge.

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::error::LoginError;

pub(super) fn random_b64(n: usize) -> Result<String, LoginError> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| LoginError::Random(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
}

/// PKCE S256 challenge of a verifier: BASE64URL(SHA-256(ASCII(verifier))).
pub fn pkce_challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_verifier_is_43_chars_and_challenge_is_its_sha256() {
        let v = random_b64(32).unwrap();
        assert_eq!(v.len(), 43);
        let c = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(pkce_challenge(&v))
            .unwrap();
        assert_eq!(c, Sha256::digest(v.as_bytes()).to_vec());
    }
}
