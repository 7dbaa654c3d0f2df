//! Signed JWTs the collector writes: RFC 7523 client assertions (`private_key_jwt`) and
//! RFC 9449 DPoP proofs. Signing only, with `ring` (already the TLS stack's provider).
//!
//! * [`SigningKey::from_pem`] reads an operator's key (`--client-key-file`): PKCS#8
//!   (`BEGIN PRIVATE KEY`) for ES256, ES384, RS256, PS256 and EdDSA, or PKCS#1
//!   (`BEGIN RSA PRIVATE KEY`) for RSA. SEC1 EC keys (`BEGIN EC PRIVATE KEY`) are
//!   refused with the command that converts them.
//! * [`SigningKey::ephemeral_es256`] is the per-run DPoP key: made in memory, never
//!   written, never recorded; only its JWK thumbprint (RFC 7638) is.
//!
//! Nothing here touches the network or the journal.

use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Why a key could not be read or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No PEM block this module reads.
    #[error("no PEM private key found (expected BEGIN PRIVATE KEY or BEGIN RSA PRIVATE KEY)")]
    NoPem,
    /// A SEC1 EC key.
    #[error("a SEC1 EC key (BEGIN EC PRIVATE KEY) is not read; convert it to PKCS#8 with `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.p8`")]
    Sec1,
    /// An encrypted PKCS#8 key.
    #[error("an encrypted private key is not read; decrypt it to PKCS#8 first (`openssl pkcs8 -in KEY -out KEY.p8`)")]
    Encrypted,
    /// The key is not of a type or curve this module signs with.
    #[error("the key is not an RSA, EC P-256, EC P-384 or Ed25519 private key ({0})")]
    Unsupported(String),
    /// The algorithm does not go with the key.
    #[error("algorithm {alg} cannot be used with a {kind} key")]
    Mismatch {
        /// The JWS algorithm asked for.
        alg: String,
        /// The key's type.
        kind: &'static str,
    },
    /// None of the algorithms the server lists goes with the key.
    #[error("the authorization server lists {listed:?}, none of which a {kind} key signs (it signs {usable:?})")]
    NoCommonAlg {
        /// What the server listed.
        listed: Vec<String>,
        /// The key's type.
        kind: &'static str,
        /// What the key could sign.
        usable: Vec<&'static str>,
    },
    /// The signer failed.
    #[error("signing failed")]
    Sign,
}

enum Inner {
    Ec(EcdsaKeyPair, &'static str),
    Rsa(RsaKeyPair),
    Ed(Ed25519KeyPair),
}

/// A private key that signs JWTs. Its private part never leaves this type (no `Debug`
/// of it, no serialisation).
pub struct SigningKey {
    inner: Inner,
    rng: SystemRandom,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({}, {})", self.kind(), self.thumbprint())
    }
}

/// The PEM blocks of a key file: (label, DER).
fn pem_blocks(pem: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut label: Option<String> = None;
    let mut body = String::new();
    for line in pem.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("-----BEGIN ") {
            label = rest.strip_suffix("-----").map(str::to_string);
            body.clear();
        } else if let Some(rest) = line.strip_prefix("-----END ") {
            if let (Some(l), Some(end)) = (label.take(), rest.strip_suffix("-----")) {
                if l == end {
                    if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(&body) {
                        out.push((l, der));
                    }
                }
            }
        } else if label.is_some() {
            body.push_str(line);
        }
    }
    out
}

impl SigningKey {
    /// A key from a PEM file's text (see the module docs for the forms read).
    pub fn from_pem(pem: &str) -> Result<SigningKey, KeyError> {
        let rng = SystemRandom::new();
        let blocks = pem_blocks(pem);
        for (label, der) in &blocks {
            let inner = match label.as_str() {
                "PRIVATE KEY" => Self::from_pkcs8(der, &rng)?,
                "RSA PRIVATE KEY" => Inner::Rsa(
                    RsaKeyPair::from_der(der).map_err(|e| KeyError::Unsupported(e.to_string()))?,
                ),
                "EC PRIVATE KEY" => return Err(KeyError::Sec1),
                "ENCRYPTED PRIVATE KEY" => return Err(KeyError::Encrypted),
                _ => continue,
            };
            return Ok(SigningKey { inner, rng });
        }
        Err(KeyError::NoPem)
    }

    fn from_pkcs8(der: &[u8], rng: &SystemRandom) -> Result<Inner, KeyError> {
        if let Ok(k) =
            EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, der, rng)
        {
            return Ok(Inner::Ec(k, "P-256"));
        }
        if let Ok(k) =
            EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P384_SHA384_FIXED_SIGNING, der, rng)
        {
            return Ok(Inner::Ec(k, "P-384"));
        }
        if let Ok(k) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            return Ok(Inner::Ed(k));
        }
        RsaKeyPair::from_pkcs8(der)
            .map(Inner::Rsa)
            .map_err(|e| KeyError::Unsupported(e.to_string()))
    }

    /// A fresh P-256 key for ES256 (the per-run DPoP key).
    pub fn ephemeral_es256() -> Result<SigningKey, KeyError> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| KeyError::Sign)?;
        let k = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            doc.as_ref(),
            &rng,
        )
        .map_err(|_| KeyError::Sign)?;
        Ok(SigningKey {
            inner: Inner::Ec(k, "P-256"),
            rng,
        })
    }

    /// The key's type, as messages name it.
    pub fn kind(&self) -> &'static str {
        match &self.inner {
            Inner::Ec(_, "P-384") => "EC P-384",
            Inner::Ec(..) => "EC P-256",
            Inner::Rsa(_) => "RSA",
            Inner::Ed(_) => "Ed25519",
        }
    }

    /// The JWS algorithms this key signs with, preferred first.
    pub fn algorithms(&self) -> Vec<&'static str> {
        match &self.inner {
            Inner::Ec(_, "P-384") => vec!["ES384"],
            Inner::Ec(..) => vec!["ES256"],
            Inner::Rsa(_) => vec!["RS256", "PS256", "RS384", "RS512", "PS384", "PS512"],
            Inner::Ed(_) => vec!["EdDSA"],
        }
    }

    /// The algorithm to use given what the server lists (`None`: it lists nothing, so
    /// the key's first).
    pub fn choose_alg(&self, listed: Option<&[String]>) -> Result<&'static str, KeyError> {
        let usable = self.algorithms();
        match listed {
            None | Some([]) => Ok(usable[0]),
            Some(l) => usable
                .iter()
                .copied()
                .find(|a| l.iter().any(|x| x == a))
                .ok_or_else(|| KeyError::NoCommonAlg {
                    listed: l.to_vec(),
                    kind: self.kind(),
                    usable,
                }),
        }
    }

    /// The public key as a JWK (members in the RFC 7638 order, no private part).
    pub fn public_jwk(&self) -> Value {
        match &self.inner {
            Inner::Ec(k, crv) => {
                // Uncompressed point: 0x04 || X || Y.
                let p = k.public_key().as_ref();
                let n = (p.len() - 1) / 2;
                json!({"crv": crv, "kty": "EC", "x": b64(&p[1..1 + n]), "y": b64(&p[1 + n..])})
            }
            Inner::Rsa(k) => {
                let c: ring::rsa::PublicKeyComponents<Vec<u8>> = k.public().into();
                json!({"e": b64(&c.e), "kty": "RSA", "n": b64(&c.n)})
            }
            Inner::Ed(k) => {
                json!({"crv": "Ed25519", "kty": "OKP", "x": b64(k.public_key().as_ref())})
            }
        }
    }

    /// RFC 7638 JWK SHA-256 thumbprint, base64url: the required members in lexicographic
    /// order, no whitespace.
    pub fn thumbprint(&self) -> String {
        let jwk = self.public_jwk();
        let members: &[&str] = match jwk.get("kty").and_then(Value::as_str) {
            Some("EC") => &["crv", "kty", "x", "y"],
            Some("RSA") => &["e", "kty", "n"],
            _ => &["crv", "kty", "x"],
        };
        let mut m = Map::new();
        for k in members {
            if let Some(v) = jwk.get(*k) {
                m.insert((*k).to_string(), v.clone());
            }
        }
        let canonical = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
        b64(&Sha256::digest(canonical.as_bytes()))
    }

    /// A compact JWS of `claims` with `header` (its `alg` is set to `alg`).
    pub fn sign_jwt(
        &self,
        alg: &str,
        mut header: Map<String, Value>,
        claims: &Value,
    ) -> Result<String, KeyError> {
        header.insert("alg".into(), Value::from(alg));
        let input = format!(
            "{}.{}",
            b64(serde_json::to_string(&Value::Object(header))
                .unwrap_or_default()
                .as_bytes()),
            b64(serde_json::to_string(claims).unwrap_or_default().as_bytes())
        );
        let mismatch = || KeyError::Mismatch {
            alg: alg.to_string(),
            kind: self.kind(),
        };
        let sig = match &self.inner {
            Inner::Ec(k, crv) => {
                let ok = matches!((alg, *crv), ("ES256", "P-256") | ("ES384", "P-384"));
                if !ok {
                    return Err(mismatch());
                }
                k.sign(&self.rng, input.as_bytes())
                    .map_err(|_| KeyError::Sign)?
                    .as_ref()
                    .to_vec()
            }
            Inner::Ed(k) => {
                if alg != "EdDSA" {
                    return Err(mismatch());
                }
                k.sign(input.as_bytes()).as_ref().to_vec()
            }
            Inner::Rsa(k) => {
                let enc: &dyn signature::RsaEncoding = match alg {
                    "RS256" => &signature::RSA_PKCS1_SHA256,
                    "RS384" => &signature::RSA_PKCS1_SHA384,
                    "RS512" => &signature::RSA_PKCS1_SHA512,
                    "PS256" => &signature::RSA_PSS_SHA256,
                    "PS384" => &signature::RSA_PSS_SHA384,
                    "PS512" => &signature::RSA_PSS_SHA512,
                    _ => return Err(mismatch()),
                };
                let mut sig = vec![0u8; k.public().modulus_len()];
                k.sign(enc, &self.rng, input.as_bytes(), &mut sig)
                    .map_err(|_| KeyError::Sign)?;
                sig
            }
        };
        Ok(format!("{input}.{}", b64(&sig)))
    }
}

/// A random `jti` (128 bits, base64url).
pub fn random_jti() -> Result<String, KeyError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|_| KeyError::Sign)?;
    Ok(b64(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(jws: &str) -> (Value, Value, Vec<u8>) {
        let p: Vec<&str> = jws.split('.').collect();
        assert_eq!(p.len(), 3);
        let d = |s: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .unwrap()
        };
        (
            serde_json::from_slice(&d(p[0])).unwrap(),
            serde_json::from_slice(&d(p[1])).unwrap(),
            d(p[2]),
        )
    }

    #[test]
    fn an_es256_jwt_verifies_with_its_public_jwk() {
        let k = SigningKey::ephemeral_es256().unwrap();
        let mut h = Map::new();
        h.insert("typ".into(), "dpop+jwt".into());
        h.insert("jwk".into(), k.public_jwk());
        let jws = k.sign_jwt("ES256", h, &json!({"jti": "x"})).unwrap();
        let (header, claims, sig) = split(&jws);
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(claims["jti"], "x");
        let jwk = &header["jwk"];
        let d = |v: &Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(v.as_str().unwrap())
                .unwrap()
        };
        let mut point = vec![4u8];
        point.extend(d(&jwk["x"]));
        point.extend(d(&jwk["y"]));
        let input = jws.rsplit_once('.').unwrap().0;
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
            .verify(input.as_bytes(), &sig)
            .unwrap();
        assert!(k.sign_jwt("RS256", Map::new(), &json!({})).is_err());
    }

    #[test]
    fn the_thumbprint_is_rfc_7638s_example() {
        // RFC 7638 §3.1's RSA key: thumbprint NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs.
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        let jwk = json!({"e": "AQAB", "kty": "RSA", "n": n});
        let canonical = serde_json::to_string(&jwk).unwrap();
        assert_eq!(
            b64(&Sha256::digest(canonical.as_bytes())),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
        // And ours follows the same member order for EC keys.
        let k = SigningKey::ephemeral_es256().unwrap();
        assert_eq!(k.thumbprint().len(), 43);
    }

    #[test]
    fn key_files_are_read_or_refused_by_name() {
        assert_eq!(
            SigningKey::from_pem("nothing").unwrap_err(),
            KeyError::NoPem
        );
        let sec1 = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n";
        assert_eq!(SigningKey::from_pem(sec1).unwrap_err(), KeyError::Sec1);
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(doc.as_ref())
        );
        let k = SigningKey::from_pem(&pem).unwrap();
        assert_eq!(k.kind(), "EC P-256");
        assert_eq!(k.choose_alg(None).unwrap(), "ES256");
        assert_eq!(
            k.choose_alg(Some(&["ES256".into(), "RS256".into()]))
                .unwrap(),
            "ES256"
        );
        assert!(matches!(
            k.choose_alg(Some(&["RS256".into()])),
            Err(KeyError::NoCommonAlg { .. })
        ));
        let ed = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(ed.as_ref())
        );
        assert_eq!(SigningKey::from_pem(&pem).unwrap().kind(), "Ed25519");
    }
}
