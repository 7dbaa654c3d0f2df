//! Encoding, sealing and verifying bundles.
//!
//! Layout: a tagged COSE_Sign1 (RFC 9052, tag 18). Protected header: `alg` EdDSA,
//! `content type` [`CONTENT_TYPE`], `kid` = first 16 bytes of SHA-256 of the Ed25519
//! public key. Unprotected header: the public key itself under the text label
//! [`PUBLIC_KEY_LABEL`], so a bundle verifies stand-alone; `--trust` pins which keys are
//! acceptable. Payload: the CBOR encoding of [`Evidence`].
//!
//! Verification order is chosen so the error names the most specific failure: CBOR
//! structure (not a bundle / truncated), COSE header, payload format id, each record's
//! encoding and chain link (so a flipped byte inside record N is reported as "record N",
//! not only as a bad signature), chain head, then the signature and the trust pin.

use coset::cbor::value::Value;
use coset::{iana, AsCborValue, CoseSign1, CoseSign1Builder, HeaderBuilder};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

use crate::model::{Evidence, Record, FORMAT_ID};

/// COSE content type of the payload.
pub const CONTENT_TYPE: &str = "application/mcp-evidence+cbor";
/// Unprotected header label carrying the signer's raw 32-byte Ed25519 public key.
pub const PUBLIC_KEY_LABEL: &str = "mcp-evidence/ed25519-public-key";
/// CBOR tag of COSE_Sign1.
const COSE_SIGN1_TAG: u64 = 18;
/// Bytes of the key id (truncated SHA-256 of the public key).
const KEY_ID_LEN: usize = 16;
/// Largest bundle [`open`] accepts (1 GiB); readers need not load more than one byte
/// past it. Hostile nesting is bounded separately by ciborium's recursion limit (256).
pub const MAX_BUNDLE_BYTES: usize = 1 << 30;

/// Why a bundle failed verification. Each variant names what failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The bytes are not a CBOR COSE_Sign1 at all.
    #[error("not a bundle: {0}")]
    NotABundle(String),
    /// The bytes end before the structure does.
    #[error("truncated: the file ends inside the bundle structure")]
    Truncated,
    /// Bytes follow the bundle structure.
    #[error("trailing data: {0} bytes after the end of the bundle")]
    TrailingData(usize),
    /// The COSE structure or its headers are malformed.
    #[error("malformed header: {0}")]
    Header(String),
    /// The payload is not a valid evidence map.
    #[error("malformed payload: {0}")]
    Payload(String),
    /// The payload declares a format this build does not read.
    #[error("unknown format {0:?} (this grader reads {FORMAT_ID})")]
    UnknownFormat(String),
    /// A record does not decode.
    #[error("record {index} is malformed: {detail}")]
    Record {
        /// Position in `records`.
        index: usize,
        /// What was wrong.
        detail: String,
    },
    /// A record's `prev` does not match its predecessor (or the genesis hash).
    #[error("chain broken at record {index}: {detail}")]
    Chain {
        /// Position of the record whose link is wrong.
        index: usize,
        /// What was wrong.
        detail: String,
    },
    /// The chain head does not match the last record.
    #[error("chain head does not match the last record")]
    ChainHead,
    /// The Ed25519 signature does not verify.
    #[error("signature invalid: {0}")]
    Signature(String),
    /// The signer is not among the pinned keys.
    #[error("signer {key_id} is not trusted (not among the --trust keys)")]
    Untrusted {
        /// Key id of the signer.
        key_id: String,
    },
}

/// A bundle that passed verification.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The payload.
    pub evidence: Evidence,
    /// Decoded records, in order.
    pub records: Vec<Record>,
    /// Who signed it.
    pub signer: PublicKey,
}

/// An Ed25519 public key with its key id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl PublicKey {
    /// From the raw 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<PublicKey, String> {
        let arr: [u8; 32] = bytes
            .try_into()
            .map_err(|_| format!("an Ed25519 public key is 32 bytes, got {}", bytes.len()))?;
        VerifyingKey::from_bytes(&arr)
            .map(|key| PublicKey { key })
            .map_err(|e| format!("not an Ed25519 public key: {e}"))
    }

    /// The raw 32 bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.key.to_bytes()
    }

    /// Key id: hex of the first 16 bytes of SHA-256 of the raw key.
    pub fn key_id(&self) -> String {
        hex::encode(self.key_id_bytes())
    }

    fn key_id_bytes(&self) -> Vec<u8> {
        sha256(&self.key.to_bytes())[..KEY_ID_LEN].to_vec()
    }

    /// SubjectPublicKeyInfo PEM (the format `--trust` reads and `openssl pkey` shows).
    pub fn to_pem(&self) -> String {
        use ed25519_dalek::pkcs8::EncodePublicKey;
        self.key
            .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap_or_default()
    }

    /// Parse a public key file: SPKI PEM, or the raw key as 64 hex digits or base64.
    pub fn parse(text: &[u8]) -> Result<PublicKey, String> {
        use base64::Engine;
        use ed25519_dalek::pkcs8::DecodePublicKey;
        let s = std::str::from_utf8(text)
            .map_err(|_| "not text".to_string())?
            .trim();
        if s.starts_with("-----BEGIN") {
            return VerifyingKey::from_public_key_pem(s)
                .map(|key| PublicKey { key })
                .map_err(|e| format!("not an Ed25519 public key PEM: {e}"));
        }
        if let Ok(b) = hex::decode(s) {
            return PublicKey::from_bytes(&b);
        }
        match base64::engine::general_purpose::STANDARD.decode(s) {
            Ok(b) => PublicKey::from_bytes(&b),
            Err(_) => Err("expected an SPKI PEM, 64 hex digits or base64 of 32 bytes".into()),
        }
    }
}

/// An Ed25519 signing key.
pub struct SecretKey {
    key: SigningKey,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public().key_id())
    }
}

impl SecretKey {
    /// A fresh random key from the OS RNG.
    pub fn generate() -> Result<SecretKey, String> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| format!("OS random source failed: {e}"))?;
        Ok(SecretKey {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// From a 32-byte seed (tests and benchmarks).
    pub fn from_seed(seed: [u8; 32]) -> SecretKey {
        SecretKey {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// PKCS#8 PEM of the private key.
    pub fn to_pem(&self) -> Result<String, String> {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        self.key
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .map(|z| z.to_string())
            .map_err(|e| e.to_string())
    }

    /// Parse a PKCS#8 PEM private key.
    pub fn from_pem(text: &str) -> Result<SecretKey, String> {
        use ed25519_dalek::pkcs8::DecodePrivateKey;
        SigningKey::from_pkcs8_pem(text.trim())
            .map(|key| SecretKey { key })
            .map_err(|e| format!("not an Ed25519 PKCS#8 PEM private key: {e}"))
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            key: self.key.verifying_key(),
        }
    }
}

/// SHA-256.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `redacted:sha256:<hex>` of a value: how every credential appears in a bundle.
pub fn fingerprint(value: &[u8]) -> String {
    format!("redacted:sha256:{}", hex::encode(sha256(value)))
}

/// The `prev` of record 0: binds the chain to the format and the run id.
pub fn genesis(run_id: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(FORMAT_ID.as_bytes());
    h.update([0]);
    h.update(run_id.as_bytes());
    h.finalize().into()
}

/// Encode one record to the bytes that are chained and stored.
pub fn encode_record(record: &Record) -> Vec<u8> {
    let mut out = Vec::new();
    // Serialising our own plain structs into a Vec cannot fail.
    ciborium::into_writer(record, &mut out).expect("record encodes");
    out
}

/// Decode one record.
pub fn decode_record(bytes: &[u8]) -> Result<Record, String> {
    ciborium::from_reader(bytes).map_err(|e| e.to_string())
}

/// Sign `evidence` and return the bundle bytes. `evidence.records` must already be the
/// encoded, chained records and `chain_head` their head.
pub fn seal(evidence: &Evidence, key: &SecretKey) -> Vec<u8> {
    let mut payload = Vec::new();
    ciborium::into_writer(evidence, &mut payload).expect("evidence encodes");
    let public = key.public();
    let protected = HeaderBuilder::new()
        .algorithm(iana::Algorithm::EdDSA)
        .content_type(CONTENT_TYPE.to_string())
        .key_id(public.key_id_bytes())
        .build();
    let unprotected = HeaderBuilder::new()
        .text_value(
            PUBLIC_KEY_LABEL.to_string(),
            Value::Bytes(public.to_bytes().to_vec()),
        )
        .build();
    let sign1 = CoseSign1Builder::new()
        .protected(protected)
        .unprotected(unprotected)
        .payload(payload)
        .create_signature(b"", |tbs| key.key.sign(tbs).to_bytes().to_vec())
        .build();
    let value = Value::Tag(
        COSE_SIGN1_TAG,
        Box::new(sign1.to_cbor_value().expect("encodes")),
    );
    let mut out = Vec::new();
    ciborium::into_writer(&value, &mut out).expect("bundle encodes");
    out
}

/// Everything that can be read from a bundle without trusting it.
#[derive(Debug, Clone)]
pub struct Unverified {
    /// The payload.
    pub evidence: Evidence,
    /// Each record, or why it did not decode.
    pub records: Vec<Result<Record, String>>,
    /// The public key in the unprotected header, if it parsed.
    pub signer: Option<PublicKey>,
    /// The verification failure, if any.
    pub problem: Option<VerifyError>,
}

struct Parsed {
    sign1: CoseSign1,
    signer: Result<PublicKey, VerifyError>,
    evidence: Evidence,
}

fn parse(bytes: &[u8]) -> Result<Parsed, VerifyError> {
    if bytes.is_empty() {
        return Err(VerifyError::NotABundle("empty file".into()));
    }
    if bytes.len() > MAX_BUNDLE_BYTES {
        return Err(VerifyError::NotABundle(format!(
            "{} bytes is over the 1 GiB limit",
            bytes.len()
        )));
    }
    let mut reader = bytes;
    let value: Value = match ciborium::from_reader(&mut reader) {
        Ok(v) => v,
        Err(ciborium::de::Error::Io(_)) => {
            // ciborium reports a short read as an I/O error: the structure started but
            // the bytes ran out. A file whose first byte is not the COSE_Sign1 tag is
            // simply something else.
            return Err(if bytes[0] == 0xd2 {
                VerifyError::Truncated
            } else {
                VerifyError::NotABundle("not CBOR (the file ends inside an item)".into())
            });
        }
        Err(e) => return Err(VerifyError::NotABundle(format!("not CBOR: {e}"))),
    };
    if !reader.is_empty() {
        return Err(VerifyError::TrailingData(reader.len()));
    }
    let inner = match value {
        Value::Tag(COSE_SIGN1_TAG, inner) => *inner,
        Value::Tag(t, _) => {
            return Err(VerifyError::NotABundle(format!(
                "CBOR tag {t}, not COSE_Sign1 (18)"
            )))
        }
        _ => {
            return Err(VerifyError::NotABundle(
                "CBOR without the COSE_Sign1 tag".into(),
            ))
        }
    };
    let sign1 = CoseSign1::from_cbor_value(inner)
        .map_err(|e| VerifyError::Header(format!("not a COSE_Sign1: {e}")))?;
    let prot = &sign1.protected.header;
    if prot.alg
        != Some(coset::RegisteredLabelWithPrivate::Assigned(
            iana::Algorithm::EdDSA,
        ))
    {
        return Err(VerifyError::Header(format!(
            "algorithm {:?} is not EdDSA",
            prot.alg
        )));
    }
    if prot.content_type != Some(coset::ContentType::Text(CONTENT_TYPE.to_string())) {
        return Err(VerifyError::Header(format!(
            "content type {:?} is not {CONTENT_TYPE}",
            prot.content_type
        )));
    }
    let signer = signer_of(&sign1);
    let payload = sign1
        .payload
        .as_deref()
        .ok_or_else(|| VerifyError::Payload("detached or missing payload".into()))?;
    let evidence = decode_evidence(payload)?;
    Ok(Parsed {
        sign1,
        signer,
        evidence,
    })
}

fn signer_of(sign1: &CoseSign1) -> Result<PublicKey, VerifyError> {
    let raw = sign1
        .unprotected
        .rest
        .iter()
        .find_map(|(label, v)| match (label, v) {
            (coset::Label::Text(t), Value::Bytes(b)) if t == PUBLIC_KEY_LABEL => Some(b.clone()),
            _ => None,
        })
        .ok_or_else(|| {
            VerifyError::Header("no signer public key in the unprotected header".into())
        })?;
    let key = PublicKey::from_bytes(&raw).map_err(VerifyError::Header)?;
    if sign1.protected.header.key_id != key.key_id_bytes() {
        return Err(VerifyError::Header(
            "key id does not match the signer public key".into(),
        ));
    }
    Ok(key)
}

fn decode_evidence(payload: &[u8]) -> Result<Evidence, VerifyError> {
    // The common case in one pass: a payload of this format decodes straight into the
    // model. Anything else is read again generically, so a future format is reported as
    // such, not as a schema mismatch.
    if let Ok(e) = ciborium::from_reader::<Evidence, _>(payload) {
        if e.format == FORMAT_ID {
            return Ok(e);
        }
    }
    let value: Value =
        ciborium::from_reader(payload).map_err(|e| VerifyError::Payload(e.to_string()))?;
    let format = match &value {
        Value::Map(m) => m.iter().find_map(|(k, v)| match (k, v) {
            (Value::Text(k), Value::Text(v)) if k == "format" => Some(v.clone()),
            _ => None,
        }),
        _ => return Err(VerifyError::Payload("payload is not a map".into())),
    };
    match format {
        Some(f) if f == FORMAT_ID => {}
        Some(f) => return Err(VerifyError::UnknownFormat(f)),
        None => return Err(VerifyError::Payload("no format id".into())),
    }
    value
        .deserialized()
        .map_err(|e| VerifyError::Payload(e.to_string()))
}

/// Check every record's encoding and chain link and the head. Returns the decoded records.
fn check_chain(evidence: &Evidence) -> Result<Vec<Record>, VerifyError> {
    let mut prev = genesis(&evidence.run.run_id);
    let mut out = Vec::with_capacity(evidence.records.len());
    for (index, bytes) in evidence.records.iter().enumerate() {
        let record =
            decode_record(bytes).map_err(|detail| VerifyError::Record { index, detail })?;
        if record.seq != index as u64 {
            return Err(VerifyError::Record {
                index,
                detail: format!("seq is {}", record.seq),
            });
        }
        if record.prev != prev {
            let detail = if index == 0 {
                "its prev is not the genesis hash of this run".to_string()
            } else {
                format!("its prev does not match the hash of record {}", index - 1)
            };
            return Err(VerifyError::Chain { index, detail });
        }
        prev = sha256(bytes);
        out.push(record);
    }
    if evidence.chain_head != prev {
        return Err(VerifyError::ChainHead);
    }
    Ok(out)
}

/// Verify a bundle: structure, format, chain, signature, and (when `trust` is not empty)
/// that the signer is one of the pinned keys.
pub fn open(bytes: &[u8], trust: &[PublicKey]) -> Result<Verified, VerifyError> {
    let parsed = parse(bytes)?;
    let records = check_chain(&parsed.evidence)?;
    let signer = parsed.signer?;
    parsed
        .sign1
        .verify_signature(b"", |sig, tbs| {
            let sig = Signature::from_slice(sig).map_err(|e| e.to_string())?;
            signer.key.verify(tbs, &sig).map_err(|e| e.to_string())
        })
        .map_err(VerifyError::Signature)?;
    if !trust.is_empty() && !trust.iter().any(|k| k == &signer) {
        return Err(VerifyError::Untrusted {
            key_id: signer.key_id(),
        });
    }
    Ok(Verified {
        evidence: parsed.evidence,
        records,
        signer,
    })
}

/// Read as much as possible without requiring validity (for `show` on a damaged bundle).
/// Fails only when not even the payload can be decoded.
pub fn open_unverified(bytes: &[u8]) -> Result<Unverified, VerifyError> {
    let problem = open(bytes, &[]).err();
    let parsed = parse(bytes)?;
    let records = parsed
        .evidence
        .records
        .iter()
        .map(|b| decode_record(b))
        .collect();
    Ok(Unverified {
        signer: parsed.signer.ok(),
        evidence: parsed.evidence,
        records,
        problem,
    })
}

/// Appends records with correct `seq` and `prev`, tracking the chain head.
#[derive(Debug, Clone)]
pub struct Chain {
    head: [u8; 32],
    records: Vec<serde_bytes::ByteBuf>,
}

impl Chain {
    /// An empty chain for `run_id`.
    pub fn new(run_id: &str) -> Chain {
        Chain {
            head: genesis(run_id),
            records: Vec::new(),
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when no record was appended.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Set `seq` and `prev` on `record`, encode and append it. Returns its bytes.
    pub fn append(&mut self, mut record: Record) -> &[u8] {
        record.seq = self.records.len() as u64;
        record.prev = self.head.to_vec();
        let bytes = encode_record(&record);
        self.head = sha256(&bytes);
        self.records.push(serde_bytes::ByteBuf::from(bytes));
        self.records
            .last()
            .map(|b| b.as_slice())
            .unwrap_or_default()
    }

    /// The head hash.
    pub fn head(&self) -> [u8; 32] {
        self.head
    }

    /// Encoded records (for the payload).
    pub fn records(&self) -> &[serde_bytes::ByteBuf] {
        &self.records
    }

    /// Take the encoded records and head.
    pub fn into_parts(self) -> (Vec<serde_bytes::ByteBuf>, [u8; 32]) {
        (self.records, self.head)
    }
}
