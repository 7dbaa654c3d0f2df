//! Verifying a bundle's RFC 3161 timestamp offline (`mcp-grade verify --tsa-cert FILE`).
//!
//! The token sits in the bundle's COSE unprotected header, which the Ed25519 signature
//! does not cover, so the token is checked on its own, step by step, and a failure names
//! the step ([`Step`]):
//!
//! 1. `decode`: a CMS `ContentInfo` holding `SignedData` with eContentType
//!    id-ct-TSTInfo, one `SignerInfo`, a TSTInfo that decodes;
//! 2. `imprint`: the TSTInfo's message imprint is SHA-256 of the bundle's COSE signature
//!    (of the bundle file and the sidecars before it, for a detached token:
//!    [`verify_over`], [`crate::renewal`]);
//! 3. `message-digest`: the signed attributes say content type id-ct-TSTInfo and carry
//!    the digest of the TSTInfo (SHA-256, SHA-384 or SHA-512);
//! 4. `certificate`: the TSA certificate the `SignerInfo` names (issuer and serial, or
//!    subject key identifier) is in the token or among the `--tsa-cert` certificates;
//! 5. `signature`: the `SignerInfo` signature over the signed attributes verifies with that
//!    certificate's key: RSA PKCS#1 v1.5 or RSASSA-PSS with SHA-256/384/512, ECDSA P-256
//!    or P-384 with SHA-256/384 (rustls-webpki and ring);
//! 6. `usage`: the certificate's extended key usage is critical and is timeStamping only
//!    (RFC 3161 §2.3);
//! 7. `chain`: the certificate chains (through the token's other certificates) to a
//!    trust anchor, valid at genTime: the `--tsa-cert` certificates when given, else the
//!    Mozilla root program's roots the grader ships (webpki-roots). Revocation is not
//!    checked (offline).

use std::path::{Path, PathBuf};

use der::asn1::ObjectIdentifier;
use der::{Decode, Encode};
use mcp_probe_schema::tsp::cms::cert::CertificateChoices;
use mcp_probe_schema::tsp::x509_cert::der::oid::db::{rfc5280, rfc5912};
use mcp_probe_schema::tsp::x509_cert::Certificate;
use mcp_probe_schema::tsp::Token;
pub use mcp_probe_schema::tsp::{Stamp, StampFailure, Step};
use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, TrustAnchor, UnixTime};

/// `id-kp-timeStamping` (1.3.6.1.5.5.7.3.8), as the OID's content bytes for webpki.
const TIME_STAMPING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x08];
// The object identifiers read, by their names in the OID registry of the X.509 crates
// (RFC 5280, RFC 5912).
const OID_TIME_STAMPING: ObjectIdentifier = rfc5280::ID_KP_TIME_STAMPING;
const OID_EXT_KEY_USAGE: ObjectIdentifier = rfc5280::ID_CE_EXT_KEY_USAGE;
const RSA_ENCRYPTION: ObjectIdentifier = rfc5912::RSA_ENCRYPTION;
const RSA_PSS: ObjectIdentifier = rfc5912::ID_RSASSA_PSS;
const SHA256_RSA: ObjectIdentifier = rfc5912::SHA_256_WITH_RSA_ENCRYPTION;
const SHA384_RSA: ObjectIdentifier = rfc5912::SHA_384_WITH_RSA_ENCRYPTION;
const SHA512_RSA: ObjectIdentifier = rfc5912::SHA_512_WITH_RSA_ENCRYPTION;
const EC_PUBLIC_KEY: ObjectIdentifier = rfc5912::ID_EC_PUBLIC_KEY;
const ECDSA_SHA256: ObjectIdentifier = rfc5912::ECDSA_WITH_SHA_256;
const ECDSA_SHA384: ObjectIdentifier = rfc5912::ECDSA_WITH_SHA_384;
const ECDSA_SHA512: ObjectIdentifier = rfc5912::ECDSA_WITH_SHA_512;
const SHA256: ObjectIdentifier = rfc5912::ID_SHA_256;
const SHA384: ObjectIdentifier = rfc5912::ID_SHA_384;
const SHA512: ObjectIdentifier = rfc5912::ID_SHA_512;

/// A `--tsa-cert` file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TsaCertError {
    /// The file could not be read.
    #[error("cannot read --tsa-cert {}: {source}", path.display())]
    Read {
        /// The path as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no PEM certificate usable as a trust anchor.
    #[error("--tsa-cert {}: {reason}", path.display())]
    Invalid {
        /// The path as given.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

/// Where TSA certificates must chain to.
#[derive(Debug, Clone, Default)]
pub struct TsaTrust {
    /// The `--tsa-cert` certificates (DER); empty means the bundled public roots.
    certs: Vec<CertificateDer<'static>>,
}

impl TsaTrust {
    /// Read every `--tsa-cert` file (PEM, one or more certificates each).
    pub fn load(paths: &[PathBuf]) -> Result<TsaTrust, TsaCertError> {
        use rustls_pki_types::pem::PemObject;
        let mut certs = Vec::new();
        for path in paths {
            let bytes = read_capped(path).map_err(|source| TsaCertError::Read {
                path: path.clone(),
                source,
            })?;
            let invalid = |reason: String| TsaCertError::Invalid {
                path: path.clone(),
                reason,
            };
            let found: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
                .collect::<Result<_, _>>()
                .map_err(|e| invalid(format!("not PEM certificates: {e}")))?;
            if found.is_empty() {
                return Err(invalid("no PEM certificate in the file".into()));
            }
            for c in &found {
                webpki::anchor_from_trusted_cert(c)
                    .map_err(|e| invalid(format!("a certificate is not usable ({e})")))?;
            }
            certs.extend(found);
        }
        Ok(TsaTrust { certs })
    }

    /// What the chain step anchors to, in words.
    pub fn describe(&self) -> &'static str {
        if self.certs.is_empty() {
            "the bundled public roots"
        } else {
            "--tsa-cert"
        }
    }
}

fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(1 << 20)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// A token that passed every step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timestamp {
    /// The TSA certificate's subject (RFC 4514).
    pub tsa: String,
    /// genTime, seconds since the Unix epoch.
    pub gen_time: u64,
    /// The token's serial number, hex.
    pub serial: String,
    /// The TSA policy OID.
    pub policy: String,
}

/// What a bundle's timestamp came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimestampState {
    /// No token and no recorded failure: collected without `--tsa`.
    None,
    /// The collector asked a TSA and recorded why no token came back (the bundle is
    /// valid; it has no trusted time).
    NotObtained(String),
    /// A token that passed every step.
    Valid(Timestamp),
    /// A token (or a timestamp header entry) that failed a step.
    Invalid(StampFailure),
}

impl TimestampState {
    /// The state of `bundle`'s timestamp against `trust`. `bundle` must already have
    /// passed [`mcp_probe_schema::open`] (its structure is read again here).
    pub fn of(bundle: &[u8], trust: &TsaTrust) -> TimestampState {
        match mcp_probe_schema::tsp::stamp_of(bundle) {
            Err(e) => TimestampState::Invalid(StampFailure::new(Step::Decode, e.to_string())),
            Ok(stamp) => TimestampState::from_stamp(stamp, trust),
        }
    }

    /// The state of a bundle's timestamp entries (read by
    /// [`mcp_probe_schema::tsp::stamp_of`]) against `trust`.
    pub fn from_stamp(stamp: Stamp, trust: &TsaTrust) -> TimestampState {
        match stamp {
            Stamp::Absent => TimestampState::None,
            Stamp::Failed(why) => TimestampState::NotObtained(why),
            Stamp::Malformed(why) => TimestampState::Invalid(StampFailure::new(Step::Decode, why)),
            Stamp::Token { token, signature } => match verify(&token, &signature, trust) {
                Ok(t) => TimestampState::Valid(t),
                Err(f) => TimestampState::Invalid(f),
            },
        }
    }

    /// One line for the text outputs: `timestamp <tsa> at <time>`, `no timestamp`, …
    pub fn line(&self) -> String {
        match self {
            TimestampState::None => "no timestamp".into(),
            TimestampState::NotObtained(why) => {
                format!("no timestamp (the TSA failed at collection: {why})")
            }
            TimestampState::Valid(t) => {
                format!("timestamp by {} at {}", t.tsa, gen_time_text(t.gen_time))
            }
            TimestampState::Invalid(f) => format!("timestamp INVALID: {f}"),
        }
    }
}

/// genTime as RFC 3339 UTC (seconds).
pub fn gen_time_text(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| secs.to_string())
}

/// The `timestamp` object of a `verify --json` line: present whenever the bundle's
/// signature verified (so the timestamp could be looked at).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct TimestampJson {
    /// `none` (no token: collected without `--tsa`), `not-obtained` (the collector's TSA
    /// failed; see `reason`), `valid`, or `invalid` (see `step` and `reason`).
    pub state: &'static str,
    /// The TSA certificate's subject (valid tokens only).
    pub tsa: Option<String>,
    /// genTime, RFC 3339 UTC (valid tokens only).
    pub gen_time: Option<String>,
    /// The token's serial number, hex (valid tokens only).
    pub serial: Option<String>,
    /// The TSA policy OID (valid tokens only).
    pub policy: Option<String>,
    /// The step that failed (`decode`, `imprint`, `message-digest`, `certificate`,
    /// `signature`, `usage`, `chain`; invalid tokens only).
    pub step: Option<&'static str>,
    /// Why (invalid tokens, and the collector's note when not obtained).
    pub reason: Option<String>,
}

impl TimestampJson {
    /// The JSON of a timestamp state.
    pub fn of(s: &TimestampState) -> TimestampJson {
        let mut j = TimestampJson {
            state: "none",
            tsa: None,
            gen_time: None,
            serial: None,
            policy: None,
            step: None,
            reason: None,
        };
        match s {
            TimestampState::None => {}
            TimestampState::NotObtained(why) => {
                j.state = "not-obtained";
                j.reason = Some(why.clone());
            }
            TimestampState::Valid(t) => {
                j.state = "valid";
                j.tsa = Some(t.tsa.clone());
                j.gen_time = Some(gen_time_text(t.gen_time));
                j.serial = Some(t.serial.clone());
                j.policy = Some(t.policy.clone());
            }
            TimestampState::Invalid(f) => {
                j.state = "invalid";
                j.step = Some(f.step.name());
                j.reason = Some(f.detail.clone());
            }
        }
        j
    }
}

/// Run every step on `token` (DER) for a bundle whose COSE signature is `signature`.
pub fn verify(token: &[u8], signature: &[u8], trust: &TsaTrust) -> Result<Timestamp, StampFailure> {
    verify_over(
        token,
        &mcp_probe_schema::tsp::imprint(signature),
        "the bundle's COSE signature",
        trust,
    )
    .map(|v| v.timestamp)
}

/// A token that passed every step, with the end of its TSA certificate's validity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// What the token says.
    pub timestamp: Timestamp,
    /// The TSA certificate's `notAfter`, seconds since the Unix epoch.
    pub not_after: u64,
}

/// Run every step on `token` (DER) whose message imprint must be `imprint`, SHA-256 of
/// what `over` names in words (the `imprint` step's failure line says it): the bundle's
/// COSE signature for a bundle's own token, the bundle file and earlier sidecars for a
/// detached one ([`mcp_probe_schema::renewal`]). The other six steps are the same.
pub fn verify_over(
    token: &[u8],
    imprint: &[u8; 32],
    over: &str,
    trust: &TsaTrust,
) -> Result<VerifiedToken, StampFailure> {
    let fail = StampFailure::new;
    let token = Token::parse(token).map_err(|e| fail(Step::Decode, e.to_string()))?;
    let si = token.signer()?;
    token.check_imprint_over(imprint, over)?;
    let signed_attrs = token.check_message_digest()?;

    // The certificates the token carries, and the --tsa-cert ones.
    let mut certs: Vec<(Certificate, Vec<u8>)> = Vec::new();
    if let Some(set) = &token.signed_data.certificates {
        for c in set.0.iter() {
            if let CertificateChoices::Certificate(c) = c {
                if let Ok(der) = c.to_der() {
                    certs.push((c.clone(), der));
                }
            }
        }
    }
    for der in &trust.certs {
        if let Ok(c) = Certificate::from_der(der.as_ref()) {
            certs.push((c, der.as_ref().to_vec()));
        }
    }
    let (cert, cert_der) = certs
        .iter()
        .find(|(c, _)| mcp_probe_schema::tsp::names(&si.sid, c))
        .ok_or_else(|| {
            fail(
                Step::Certificate,
                "the TSA certificate the SignerInfo names is neither in the token nor among --tsa-cert"
                    .to_string(),
            )
        })?;
    let cert_der = CertificateDer::from(cert_der.as_slice());
    let ee = webpki::EndEntityCert::try_from(&cert_der).map_err(|e| {
        fail(
            Step::Certificate,
            format!("the TSA certificate is not usable ({e})"),
        )
    })?;

    check_signature(&ee, cert, si, &signed_attrs)?;
    check_usage(cert)?;

    let gen_time = token.gen_time_unix();
    let intermediates: Vec<CertificateDer<'_>> = certs
        .iter()
        .map(|(_, d)| CertificateDer::from(d.as_slice()))
        .filter(|d| d.as_ref() != cert_der.as_ref())
        .collect();
    let owned: Vec<TrustAnchor<'_>> = trust
        .certs
        .iter()
        .filter_map(|c| webpki::anchor_from_trusted_cert(c).ok())
        .collect();
    let anchors: &[TrustAnchor<'_>] = if trust.certs.is_empty() {
        webpki_roots::TLS_SERVER_ROOTS
    } else {
        &owned
    };
    ee.verify_for_usage(
        webpki::ALL_VERIFICATION_ALGS,
        anchors,
        &intermediates,
        UnixTime::since_unix_epoch(std::time::Duration::from_secs(gen_time)),
        webpki::KeyUsage::required(TIME_STAMPING),
        None,
        None,
    )
    .map_err(|e| {
        let why = match e {
            webpki::Error::UnknownIssuer => format!(
                "the TSA certificate does not chain to {} (unknown issuer)",
                trust.describe()
            ),
            webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => {
                "the TSA certificate (or its chain) was not valid at genTime".to_string()
            }
            other => format!(
                "the TSA certificate does not chain to {} ({other})",
                trust.describe()
            ),
        };
        fail(Step::Chain, why)
    })?;
    Ok(VerifiedToken {
        timestamp: Timestamp {
            tsa: cert.tbs_certificate.subject.to_string(),
            gen_time,
            serial: token.serial_hex(),
            policy: token.policy(),
        },
        not_after: mcp_probe_schema::tsp::not_after_unix(cert),
    })
}

/// Step `signature`: the SignerInfo's signature over the signed attributes.
fn check_signature(
    ee: &webpki::EndEntityCert<'_>,
    cert: &Certificate,
    si: &mcp_probe_schema::tsp::cms::signed_data::SignerInfo,
    signed_attrs: &[u8],
) -> Result<(), StampFailure> {
    let fail = |d: String| StampFailure::new(Step::Signature, d);
    let sig = si.signature.as_bytes();
    let alg = &si.signature_algorithm.oid;
    let digest = &si.digest_alg.oid;
    let hash = match *alg {
        SHA256_RSA | ECDSA_SHA256 => SHA256,
        SHA384_RSA | ECDSA_SHA384 => SHA384,
        SHA512_RSA | ECDSA_SHA512 => SHA512,
        RSA_PSS => pss_hash(si).ok_or_else(|| {
            fail(
                "RSASSA-PSS parameters other than SHA-256/384/512 with MGF1 of the same hash"
                    .into(),
            )
        })?,
        _ => *digest,
    };
    use webpki::ring as alg_;
    let candidates: Vec<&dyn SignatureVerificationAlgorithm> = match (*alg, hash) {
        (RSA_ENCRYPTION | SHA256_RSA, SHA256) => vec![alg_::RSA_PKCS1_2048_8192_SHA256],
        (RSA_ENCRYPTION | SHA384_RSA, SHA384) => vec![alg_::RSA_PKCS1_2048_8192_SHA384],
        (RSA_ENCRYPTION | SHA512_RSA, SHA512) => vec![alg_::RSA_PKCS1_2048_8192_SHA512],
        (RSA_PSS, SHA256) => vec![alg_::RSA_PSS_2048_8192_SHA256_LEGACY_KEY],
        (RSA_PSS, SHA384) => vec![alg_::RSA_PSS_2048_8192_SHA384_LEGACY_KEY],
        (RSA_PSS, SHA512) => vec![alg_::RSA_PSS_2048_8192_SHA512_LEGACY_KEY],
        (EC_PUBLIC_KEY | ECDSA_SHA256, SHA256) => {
            vec![alg_::ECDSA_P256_SHA256, alg_::ECDSA_P384_SHA256]
        }
        (EC_PUBLIC_KEY | ECDSA_SHA384, SHA384) => {
            vec![alg_::ECDSA_P384_SHA384, alg_::ECDSA_P256_SHA384]
        }
        _ => {
            return Err(fail(format!(
                "unsupported signature algorithm {alg} with digest {digest}"
            )))
        }
    };
    // A PSS signature by a key whose certificate says id-RSASSA-PSS (webpki reads only
    // rsaEncryption keys): verified with ring on the RSAPublicKey inside.
    let spki = &cert.tbs_certificate.subject_public_key_info;
    if *alg == RSA_PSS && spki.algorithm.oid == RSA_PSS {
        let params: &dyn ring::signature::VerificationAlgorithm = match hash {
            SHA256 => &ring::signature::RSA_PSS_2048_8192_SHA256,
            SHA384 => &ring::signature::RSA_PSS_2048_8192_SHA384,
            _ => &ring::signature::RSA_PSS_2048_8192_SHA512,
        };
        let key = spki.subject_public_key.raw_bytes();
        return ring::signature::UnparsedPublicKey::new(params, key)
            .verify(signed_attrs, sig)
            .map_err(|_| {
                fail("the signature does not verify with the TSA certificate's key".into())
            });
    }
    let mut last = None;
    for a in candidates {
        match ee.verify_signature(a, signed_attrs, sig) {
            Ok(()) => return Ok(()),
            Err(webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_)) => {
                last = Some(
                    "the signature algorithm does not fit the TSA certificate's key".to_string(),
                )
            }
            Err(webpki::Error::InvalidSignatureForPublicKey) => {
                return Err(fail(
                    "the signature does not verify with the TSA certificate's key".into(),
                ))
            }
            Err(e) => last = Some(format!("the signature cannot be checked ({e})")),
        }
    }
    Err(fail(last.unwrap_or_default()))
}

/// The hash of RSASSA-PSS parameters when they are the usual ones: hashAlgorithm
/// SHA-256/384/512 and MGF1 with the same hash (the salt length is checked by ring).
fn pss_hash(si: &mcp_probe_schema::tsp::cms::signed_data::SignerInfo) -> Option<ObjectIdentifier> {
    use der::Any;
    use mcp_probe_schema::tsp::x509_cert::spki::AlgorithmIdentifier;
    #[derive(der::Sequence)]
    struct Params {
        #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
        hash: Option<AlgorithmIdentifier<Any>>,
        #[asn1(context_specific = "1", tag_mode = "EXPLICIT", optional = "true")]
        mgf: Option<AlgorithmIdentifier<Any>>,
        #[asn1(context_specific = "2", tag_mode = "EXPLICIT", optional = "true")]
        salt: Option<u32>,
        #[asn1(context_specific = "3", tag_mode = "EXPLICIT", optional = "true")]
        trailer: Option<u32>,
    }
    let p: Params = si
        .signature_algorithm
        .parameters
        .as_ref()?
        .decode_as()
        .ok()?;
    let hash = p.hash?.oid;
    let mgf_hash: AlgorithmIdentifier<Any> = p.mgf?.parameters?.decode_as().ok()?;
    (matches!(hash, SHA256 | SHA384 | SHA512) && mgf_hash.oid == hash).then_some(hash)
}

/// Step `usage`: extended key usage critical, timeStamping only (RFC 3161 §2.3).
fn check_usage(cert: &Certificate) -> Result<(), StampFailure> {
    let fail = |d: &str| StampFailure::new(Step::Usage, d);
    let ext = cert
        .tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|e| e.extn_id == OID_EXT_KEY_USAGE)
        .ok_or_else(|| fail("the TSA certificate has no extended key usage"))?;
    if !ext.critical {
        return Err(fail(
            "the TSA certificate's extended key usage is not critical",
        ));
    }
    let purposes: Vec<ObjectIdentifier> =
        Vec::<ObjectIdentifier>::from_der(ext.extn_value.as_bytes())
            .map_err(|_| fail("the TSA certificate's extended key usage does not decode"))?;
    if purposes != [OID_TIME_STAMPING] {
        return Err(fail(
            "the TSA certificate's extended key usage is not timeStamping alone",
        ));
    }
    Ok(())
}
