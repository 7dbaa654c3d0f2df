//! RFC 3161 trusted timestamps of sealed bundles.
//!
//! A bundle's COSE_Sign1 signature proves who sealed it, not when: the collector's clock
//! is the collector's word. A time-stamping authority (TSA) countersigns a hash with its
//! own clock. `mcp-collect --tsa URL` sends the TSA a `TimeStampReq` whose message imprint
//! is SHA-256 of the COSE **signature** bytes (the fourth item of the COSE_Sign1), and
//! stores the `TimeStampToken` it gets back (DER) in the COSE **unprotected** header under
//! [`TOKEN_LABEL`]. The signature already covers the protected header and the payload, so
//! a token over the signature dates the whole bundle; it cannot sit under the signature
//! itself (it is made after it). This is the "COSE, then timestamp" binding the IETF COSE
//! working group describes for timestamp header parameters; until a label for it is
//! registered, the label is our own text label.
//!
//! Because the unprotected header is not signed, the token is checked on its own terms by
//! the grader: its imprint must be SHA-256 of the signature, its `messageDigest` signed
//! attribute the digest of its TSTInfo, its signature the TSA certificate's, and that
//! certificate must carry the timeStamping extended key usage and chain to a trust anchor
//! (the last two need `rustls-webpki`, which lives in the grader). This module holds what
//! both programs share: the request, the reply check, the token's parsing and the
//! structural steps; nothing here does I/O.
//!
//! When the TSA fails (unreachable, refusal, garbage, a token for another imprint or
//! nonce, a timeout), the collector stores one line saying why under [`ERROR_LABEL`]
//! instead and the bundle is sealed all the same.

use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerInfo};
use coset::cbor::value::Value;
use der::asn1::{Int, OctetString};
use der::oid::ObjectIdentifier;
use der::{Decode, Encode};
use sha2::{Digest, Sha256, Sha384, Sha512};
use x509_tsp::{MessageImprint, TimeStampReq, TimeStampResp, TspVersion, TstInfo};

pub use cms;
pub use der;
pub use x509_cert;
pub use x509_tsp;

/// Unprotected-header label of the RFC 3161 `TimeStampToken` (DER bytes, a CMS
/// `ContentInfo` holding `SignedData` over a `TSTInfo`).
pub const TOKEN_LABEL: &str = "mcp-evidence/rfc3161-timestamp";
/// Unprotected-header label of the one-line reason a `--tsa` timestamp is missing (text).
pub const ERROR_LABEL: &str = "mcp-evidence/rfc3161-timestamp-error";
/// Media type of a `TimeStampReq` (RFC 3161 §3.4).
pub const QUERY_MEDIA_TYPE: &str = "application/timestamp-query";
/// Media type of a `TimeStampResp` (RFC 3161 §3.4).
pub const REPLY_MEDIA_TYPE: &str = "application/timestamp-reply";
/// Largest TSA reply the collector reads: a token with a certificate chain is a few KiB.
pub const MAX_REPLY_BYTES: u64 = 256 * 1024;
/// Bytes of the request nonce.
pub const NONCE_LEN: usize = 8;

/// `id-sha256`, `id-sha384`, `id-sha512` (NIST hash OIDs).
const SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
/// `id-signedData` (RFC 5652).
const SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
/// `id-ct-TSTInfo` (RFC 3161 §2.4.2).
pub const TST_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");
/// `id-contentType` and `id-messageDigest` signed attributes (RFC 5652 §11).
const ATTR_CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
const ATTR_MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
/// `id-ce-subjectKeyIdentifier` (RFC 5280).
const OID_SUBJECT_KEY_ID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.14");

/// SHA-256 of the COSE signature bytes: the message imprint a bundle's token must carry.
pub fn imprint(signature: &[u8]) -> [u8; 32] {
    Sha256::digest(signature).into()
}

/// A nonce from 8 random bytes, made a minimal positive DER INTEGER of exactly
/// [`NONCE_LEN`] bytes (top bit clear, second bit set), so it compares byte for byte.
pub fn nonce(random: [u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
    let mut n = random;
    n[0] = (n[0] & 0x7f) | 0x40;
    n
}

fn sha256_alg() -> x509_cert::spki::AlgorithmIdentifier<der::Any> {
    x509_cert::spki::AlgorithmIdentifier {
        oid: SHA256,
        parameters: Some(der::Any::null()),
    }
}

/// The DER `TimeStampReq`: version 1, SHA-256 `imprint`, `nonce`, `certReq` true (the TSA
/// certificate travels in the token, so the grader needs only the trust anchor).
pub fn request(imprint: &[u8; 32], nonce: &[u8; NONCE_LEN]) -> Vec<u8> {
    let req = TimeStampReq {
        version: TspVersion::V1,
        message_imprint: MessageImprint {
            hash_algorithm: sha256_alg(),
            // 32 bytes always fit an OCTET STRING.
            hashed_message: OctetString::new(imprint.to_vec()).expect("32 bytes"),
        },
        req_policy: None,
        nonce: Some(Int::new(nonce).expect("a minimal positive integer")),
        cert_req: true,
        extensions: None,
    };
    req.to_der().expect("a TimeStampReq encodes")
}

/// Why a TSA reply was not used. One line of plain words.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplyError {
    /// The bytes are not a DER `TimeStampResp`.
    #[error("the reply is not an RFC 3161 TimeStampResp")]
    Garbage,
    /// The TSA answered with a status other than granted.
    #[error("the TSA refused the request: status {status}{text}")]
    Refused {
        /// The PKIStatus, in words.
        status: &'static str,
        /// `: <statusString>` when the TSA sent one, else empty.
        text: String,
    },
    /// Granted, but no token.
    #[error("the reply is granted but carries no token")]
    NoToken,
    /// The token does not parse.
    #[error("{0}")]
    Token(TokenError),
    /// The token dates another hash.
    #[error("the token's message imprint is not SHA-256 of the bundle signature")]
    Imprint,
    /// The token answers another request.
    #[error("the token's nonce is not the request's")]
    Nonce,
}

/// Check a TSA reply against the request it answers: status granted (or granted with
/// modifications), a token whose TSTInfo carries our SHA-256 imprint and our nonce.
/// Returns the token (DER), ready for [`TOKEN_LABEL`].
pub fn check_reply(
    reply: &[u8],
    imprint: &[u8; 32],
    nonce: &[u8; NONCE_LEN],
) -> Result<Vec<u8>, ReplyError> {
    use cmpv2::status::PkiStatus;
    let resp = TimeStampResp::from_der(reply).map_err(|_| ReplyError::Garbage)?;
    let status = match resp.status.status {
        PkiStatus::Accepted | PkiStatus::GrantedWithMods => None,
        PkiStatus::Rejection => Some("rejection"),
        PkiStatus::Waiting => Some("waiting"),
        PkiStatus::RevocationWarning => Some("revocationWarning"),
        PkiStatus::RevocationNotification => Some("revocationNotification"),
        PkiStatus::KeyUpdateWarning => Some("keyUpdateWarning"),
    };
    if let Some(status) = status {
        let text = resp
            .status
            .status_string
            .as_ref()
            .map(|v| {
                let s: Vec<String> = v.iter().map(|t| t.as_str().to_string()).collect();
                format!(": {}", crate::term::line(&s.join("; ")))
            })
            .unwrap_or_default();
        return Err(ReplyError::Refused { status, text });
    }
    let token = resp.time_stamp_token.ok_or(ReplyError::NoToken)?;
    let der = token.to_der().map_err(|_| ReplyError::Garbage)?;
    let parsed = Token::parse(&der).map_err(ReplyError::Token)?;
    let mi = &parsed.tst.message_imprint;
    if mi.hash_algorithm.oid != SHA256 || mi.hashed_message.as_bytes() != imprint {
        return Err(ReplyError::Imprint);
    }
    match &parsed.tst.nonce {
        Some(n) if n.as_bytes() == nonce => Ok(der),
        _ => Err(ReplyError::Nonce),
    }
}

/// Why a token does not parse (the "decode" step).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a DER CMS `ContentInfo`.
    #[error("the token is not a DER CMS ContentInfo")]
    NotContentInfo,
    /// Another content type than `SignedData`.
    #[error("the token is not CMS SignedData")]
    NotSignedData,
    /// `SignedData` does not decode.
    #[error("the token's SignedData does not decode")]
    SignedData,
    /// The encapsulated content is not a TSTInfo.
    #[error("the token's content type is {0}, not id-ct-TSTInfo")]
    ContentType(String),
    /// The TSTInfo is missing or does not decode (a genTime with fractional seconds is
    /// among what this reader does not accept).
    #[error("the token's TSTInfo is missing or does not decode")]
    TstInfo,
}

/// A parsed `TimeStampToken`.
#[derive(Debug, Clone)]
pub struct Token {
    /// The CMS `SignedData`.
    pub signed_data: SignedData,
    /// The encapsulated TSTInfo as signed (DER).
    pub tst_info_der: Vec<u8>,
    /// The TSTInfo.
    pub tst: TstInfo,
}

impl Token {
    /// Parse a DER `TimeStampToken`: `ContentInfo` → `SignedData` with eContentType
    /// id-ct-TSTInfo → `TSTInfo`.
    pub fn parse(der: &[u8]) -> Result<Token, TokenError> {
        let ci = ContentInfo::from_der(der).map_err(|_| TokenError::NotContentInfo)?;
        if ci.content_type != SIGNED_DATA {
            return Err(TokenError::NotSignedData);
        }
        let sd: SignedData = ci.content.decode_as().map_err(|_| TokenError::SignedData)?;
        if sd.encap_content_info.econtent_type != TST_INFO {
            return Err(TokenError::ContentType(
                sd.encap_content_info.econtent_type.to_string(),
            ));
        }
        let content = sd
            .encap_content_info
            .econtent
            .as_ref()
            .ok_or(TokenError::TstInfo)?;
        let octets: OctetString = content.decode_as().map_err(|_| TokenError::TstInfo)?;
        let tst_info_der = octets.as_bytes().to_vec();
        let tst = TstInfo::from_der(&tst_info_der).map_err(|_| TokenError::TstInfo)?;
        Ok(Token {
            signed_data: sd,
            tst_info_der,
            tst,
        })
    }

    /// The one `SignerInfo` (a TSA token has exactly one).
    pub fn signer(&self) -> Result<&SignerInfo, StampFailure> {
        let infos = self.signed_data.signer_infos.0.as_slice();
        match infos {
            [one] => Ok(one),
            _ => Err(StampFailure::new(
                Step::Decode,
                format!(
                    "the token has {} SignerInfos, a TSA token has one",
                    infos.len()
                ),
            )),
        }
    }

    /// genTime as seconds since the Unix epoch.
    pub fn gen_time_unix(&self) -> u64 {
        self.tst.gen_time.to_unix_duration().as_secs()
    }

    /// The serial number, hex.
    pub fn serial_hex(&self) -> String {
        hex::encode(self.tst.serial_number.as_bytes())
    }

    /// The TSA policy OID.
    pub fn policy(&self) -> String {
        self.tst.policy.to_string()
    }

    /// Step "imprint": the message imprint is SHA-256 of `signature`.
    pub fn check_imprint(&self, signature: &[u8]) -> Result<(), StampFailure> {
        self.check_imprint_over(&imprint(signature), "the bundle's COSE signature")
    }

    /// Step "imprint" over any bytes: the message imprint is `digest`, SHA-256 of what
    /// `over` names in words (for the failure line: "the bundle's COSE signature", "the
    /// bundle file").
    pub fn check_imprint_over(&self, digest: &[u8; 32], over: &str) -> Result<(), StampFailure> {
        let mi = &self.tst.message_imprint;
        if mi.hash_algorithm.oid != SHA256 {
            return Err(StampFailure::new(
                Step::Imprint,
                format!(
                    "the imprint's hash algorithm is {}, not SHA-256",
                    mi.hash_algorithm.oid
                ),
            ));
        }
        if mi.hashed_message.as_bytes() != digest {
            return Err(StampFailure::new(
                Step::Imprint,
                format!("the message imprint is not SHA-256 of {over}"),
            ));
        }
        Ok(())
    }

    /// The TSA certificate the `SignerInfo` names, when the token carries it (it does
    /// when the request set `certReq`, as the collector's do).
    pub fn signer_certificate(&self) -> Option<&x509_cert::Certificate> {
        let si = self.signer().ok()?;
        self.signed_data
            .certificates
            .as_ref()?
            .0
            .iter()
            .find_map(|c| match c {
                cms::cert::CertificateChoices::Certificate(c) if names(&si.sid, c) => Some(c),
                _ => None,
            })
    }

    /// Step "message-digest": the signer's signed attributes say content type
    /// id-ct-TSTInfo and carry the digest (with the signer's digest algorithm) of the
    /// TSTInfo as encapsulated. Returns the DER of the signed attributes as a SET OF,
    /// the bytes the signature is over (RFC 5652 §5.4).
    pub fn check_message_digest(&self) -> Result<Vec<u8>, StampFailure> {
        let fail = |d: String| StampFailure::new(Step::MessageDigest, d);
        let si = self.signer()?;
        let attrs = si
            .signed_attrs
            .as_ref()
            .ok_or_else(|| fail("the SignerInfo has no signed attributes".into()))?;
        let value_of = |oid: ObjectIdentifier| {
            attrs
                .iter()
                .find(|a| a.oid == oid)
                .and_then(|a| match a.values.as_slice() {
                    [one] => Some(one.clone()),
                    _ => None,
                })
        };
        let ct = value_of(ATTR_CONTENT_TYPE)
            .and_then(|v| v.decode_as::<ObjectIdentifier>().ok())
            .ok_or_else(|| fail("no content-type signed attribute".into()))?;
        if ct != TST_INFO {
            return Err(fail(format!(
                "the content-type signed attribute is {ct}, not id-ct-TSTInfo"
            )));
        }
        let md = value_of(ATTR_MESSAGE_DIGEST)
            .and_then(|v| v.decode_as::<OctetString>().ok())
            .ok_or_else(|| fail("no message-digest signed attribute".into()))?;
        let digest = digest(&si.digest_alg.oid, &self.tst_info_der).ok_or_else(|| {
            fail(format!(
                "unsupported digest algorithm {} (SHA-256, SHA-384 or SHA-512)",
                si.digest_alg.oid
            ))
        })?;
        if md.as_bytes() != digest.as_slice() {
            return Err(fail(
                "the message-digest signed attribute is not the digest of the TSTInfo".into(),
            ));
        }
        attrs
            .to_der()
            .map_err(|_| fail("the signed attributes do not re-encode".into()))
    }
}

/// True when `sid` (a `SignerInfo`'s signer identifier) names `cert`: the same issuer
/// and serial number, or the same subject key identifier.
pub fn names(sid: &cms::signed_data::SignerIdentifier, cert: &x509_cert::Certificate) -> bool {
    use cms::signed_data::SignerIdentifier;
    let tbs = &cert.tbs_certificate;
    match sid {
        SignerIdentifier::IssuerAndSerialNumber(is) => {
            is.issuer == tbs.issuer && is.serial_number == tbs.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => tbs
            .extensions
            .iter()
            .flatten()
            .find(|e| e.extn_id == OID_SUBJECT_KEY_ID)
            .and_then(|e| OctetString::from_der(e.extn_value.as_bytes()).ok())
            .is_some_and(|k| k.as_bytes() == ski.0.as_bytes()),
    }
}

/// The end of a certificate's validity (`notAfter`), seconds since the Unix epoch.
pub fn not_after_unix(cert: &x509_cert::Certificate) -> u64 {
    cert.tbs_certificate
        .validity
        .not_after
        .to_unix_duration()
        .as_secs()
}

/// SHA-256/384/512 of `data` by OID; `None` for another algorithm.
pub fn digest(oid: &ObjectIdentifier, data: &[u8]) -> Option<Vec<u8>> {
    match *oid {
        SHA256 => Some(Sha256::digest(data).to_vec()),
        SHA384 => Some(Sha384::digest(data).to_vec()),
        SHA512 => Some(Sha512::digest(data).to_vec()),
        _ => None,
    }
}

/// The named steps of checking a token, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Step {
    /// The token parses as SignedData over a TSTInfo.
    Decode,
    /// The message imprint is SHA-256 of the bundle's COSE signature.
    Imprint,
    /// The messageDigest signed attribute is the digest of the TSTInfo.
    MessageDigest,
    /// The TSA certificate named by the SignerInfo is present and usable.
    Certificate,
    /// The SignerInfo signature verifies with the TSA certificate.
    Signature,
    /// The TSA certificate carries the critical timeStamping extended key usage.
    Usage,
    /// The TSA certificate chains to a trust anchor at genTime.
    Chain,
}

impl Step {
    /// The step's name, as printed and in `verify --json`.
    pub fn name(self) -> &'static str {
        match self {
            Step::Decode => "decode",
            Step::Imprint => "imprint",
            Step::MessageDigest => "message-digest",
            Step::Certificate => "certificate",
            Step::Signature => "signature",
            Step::Usage => "usage",
            Step::Chain => "chain",
        }
    }
}

/// A token that failed a step.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("timestamp {}: {detail}", step.name())]
pub struct StampFailure {
    /// The step that failed.
    pub step: Step,
    /// What was wrong, one line.
    pub detail: String,
}

impl StampFailure {
    /// A failure of `step`.
    pub fn new(step: Step, detail: impl Into<String>) -> StampFailure {
        StampFailure {
            step,
            detail: detail.into(),
        }
    }
}

/// What a bundle's unprotected header says about a timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// Neither a token nor an error: collected without `--tsa` (or before timestamps).
    Absent,
    /// A token (DER) and the COSE signature it should date.
    Token {
        /// The token as stored.
        token: Vec<u8>,
        /// The bundle's COSE signature bytes.
        signature: Vec<u8>,
    },
    /// The collector asked a TSA and recorded why no token came back.
    Failed(String),
    /// The header holds a timestamp entry of the wrong CBOR type.
    Malformed(&'static str),
}

/// Read the timestamp entries of a bundle's unprotected header (the bundle's structure is
/// checked as [`crate::open`] checks it; nothing is verified here).
pub fn stamp_of(bundle: &[u8]) -> Result<Stamp, crate::VerifyError> {
    let (unprotected, signature) = crate::bundle::unprotected_and_signature(bundle)?;
    let find = |label: &str| {
        unprotected
            .iter()
            .find(|(k, _)| matches!(k, Value::Text(t) if t == label))
            .map(|(_, v)| v)
    };
    Ok(match (find(TOKEN_LABEL), find(ERROR_LABEL)) {
        (Some(Value::Bytes(b)), _) => Stamp::Token {
            token: b.clone(),
            signature,
        },
        (Some(_), _) => Stamp::Malformed("the timestamp token is not a byte string"),
        (None, Some(Value::Text(t))) => Stamp::Failed(t.clone()),
        (None, Some(_)) => Stamp::Malformed("the timestamp error is not text"),
        (None, None) => Stamp::Absent,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_request_is_version_1_sha256_with_nonce_and_cert_req() {
        let n = nonce([0xff; 8]);
        assert_eq!(n[0], 0x7f);
        let n0 = nonce([0; 8]);
        assert_eq!(n0[0], 0x40);
        let der = request(&[7; 32], &n);
        let back = TimeStampReq::from_der(&der).unwrap();
        assert_eq!(back.version, TspVersion::V1);
        assert_eq!(back.message_imprint.hash_algorithm.oid, SHA256);
        assert_eq!(back.message_imprint.hashed_message.as_bytes(), &[7; 32]);
        assert_eq!(back.nonce.unwrap().as_bytes(), &n);
        assert!(back.cert_req);
    }

    #[test]
    fn garbage_and_refusals_are_named() {
        let (i, n) = ([1; 32], nonce([2; 8]));
        assert_eq!(check_reply(b"", &i, &n), Err(ReplyError::Garbage));
        assert_eq!(
            check_reply(b"<html>busy</html>", &i, &n),
            Err(ReplyError::Garbage)
        );
        // TimeStampResp { status { status rejection(2) } }
        let rejected = [0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x02];
        assert_eq!(
            check_reply(&rejected, &i, &n).unwrap_err().to_string(),
            "the TSA refused the request: status rejection"
        );
        // granted(0) without a token
        let empty = [0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x00];
        assert_eq!(check_reply(&empty, &i, &n), Err(ReplyError::NoToken));
        assert_eq!(
            Token::parse(&[0x30, 0x00]).unwrap_err(),
            TokenError::NotContentInfo
        );
    }
}
