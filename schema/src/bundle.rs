//! Encoding, sealing and verifying bundles.
//!
//! Layout: a tagged COSE_Sign1 (RFC 9052, tag 18). Protected header: `alg` EdDSA,
//! `content type` [`CONTENT_TYPE`], `kid` = first 16 bytes of SHA-256 of the Ed25519
//! public key. Unprotected header: the public key itself under the text label
//! [`PUBLIC_KEY_LABEL`], so a bundle verifies stand-alone; `--trust` pins which keys are
//! acceptable. Payload: the CBOR encoding of [`Evidence`].
//!
//! Verification order (docs/bundle.md §5): CBOR structure (not a bundle / truncated /
//! trailing data), COSE headers (strict maps, no `crit`, the signer key canonical and not
//! small-order, its key id), the Ed25519 signature over the payload bytes as stored (the
//! COSE `Sig_structure`, with the checks of strict verification), the trust pin, and only
//! then the payload: one strict CBOR item (nothing after it, no key twice), format id,
//! each record's strictness, encoding and chain link, chain head. Checking the
//! signature before decoding anything in the payload means that any byte altered after
//! sealing reads as "signature invalid: the bundle was altered or damaged after signing",
//! never as a decoder complaint; a payload failure after a valid signature is worded
//! "signed but malformed". No message carries decoder internals ([`VerifyError`]).

use coset::cbor::value::Value;
use coset::{iana, AsCborValue, CoseSign1Builder, HeaderBuilder};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
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

/// Why a bundle failed verification. Each variant names what failed, and its message is
/// one line of plain words: no decoder internals, no Debug formatting.
///
/// The checks run in the order of the variants below. Everything up to and including
/// [`Signature`](VerifyError::Signature) is about the bytes as stored: any byte altered
/// after sealing fails there. Then a signature that strict verification refuses
/// ([`WeakSignature`]) and, with pins, an untrusted signer ([`Untrusted`]): both before
/// anything in the payload is decoded. The payload variants after them
/// ([`UnknownFormat`], [`Payload`], [`Record`], [`Chain`], [`ChainHead`]) can only be
/// reached by a payload that its signer really signed, so they say "signed but
/// malformed" (a buggy or hostile signer), never "damaged".
///
/// [`WeakSignature`]: VerifyError::WeakSignature
/// [`Untrusted`]: VerifyError::Untrusted
/// [`UnknownFormat`]: VerifyError::UnknownFormat
/// [`Payload`]: VerifyError::Payload
/// [`Record`]: VerifyError::Record
/// [`Chain`]: VerifyError::Chain
/// [`ChainHead`]: VerifyError::ChainHead
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The bytes are not a CBOR COSE_Sign1 at all (empty, over the size limit, not
    /// well-formed CBOR, or another CBOR item).
    #[error("not a bundle: {0}")]
    NotABundle(String),
    /// The bytes end before the structure does.
    #[error("truncated: the file ends inside the bundle structure")]
    Truncated,
    /// Bytes follow the bundle structure.
    #[error("trailing data: {0} bytes after the end of the bundle")]
    TrailingData(usize),
    /// The COSE structure or its headers are malformed: not a four-item COSE_Sign1, a
    /// detached payload, a header that is not exactly one map or has a label twice, a
    /// `crit` parameter, `alg` not EdDSA, another content type, no usable signer public
    /// key (absent, not a curve point, not canonically encoded, small-order), or a key id
    /// that does not match it.
    #[error("malformed header: {0}")]
    Header(String),
    /// The Ed25519 signature over the stored header and payload bytes does not verify:
    /// some byte was altered or damaged after the bundle was sealed.
    #[error("signature invalid: the bundle was altered or damaged after signing")]
    Signature,
    /// The Ed25519 signature verifies, but its `R` is a small-order point: strict
    /// verification (RFC 8032 as `verify_strict` reads it) refuses such a signature, which
    /// only a signer choosing it on purpose makes.
    #[error("signature refused: its R is a small-order point, which strict Ed25519 verification refuses")]
    WeakSignature,
    /// The signer is not among the pinned keys (checked before anything in the payload
    /// is decoded).
    #[error("signer {key_id} is not trusted (not among the --trust keys)")]
    Untrusted {
        /// Key id of the signer.
        key_id: String,
    },
    /// The (signed) payload declares a format this build does not read.
    #[error("unknown format {0:?} (this grader reads {FORMAT_ID})")]
    UnknownFormat(String),
    /// The signed payload is not a valid evidence map.
    #[error("signed but malformed: {0}")]
    Payload(String),
    /// A signed record does not decode, or its `seq` is not its position.
    #[error("signed but malformed: record {index}: {detail}")]
    Record {
        /// Position in `records`.
        index: usize,
        /// What was wrong, in plain words.
        detail: String,
    },
    /// A signed record's `prev` does not match its predecessor (or the genesis hash).
    #[error("signed but malformed: chain broken at record {index}: {detail}")]
    Chain {
        /// Position of the record whose link is wrong.
        index: usize,
        /// What was wrong, in plain words.
        detail: String,
    },
    /// The signed chain head does not match the last record.
    #[error("signed but malformed: the chain head does not match the last record")]
    ChainHead,
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

/// Why a PEM did not yield an Ed25519 key, in plain words (the PEM and DER decoders' own
/// messages are not shown to users).
#[derive(Debug, Clone, Copy, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PemProblem {
    /// The PEM armour, its base64 or the DER key structure inside does not decode.
    #[error("the PEM or the key structure inside it does not decode")]
    Undecodable,
    /// The key structure names another algorithm than Ed25519.
    #[error("the key is for another algorithm than Ed25519")]
    OtherAlgorithm,
    /// The structure decodes but the key bytes in it are malformed.
    #[error("the key bytes inside are malformed")]
    MalformedKey,
}

impl PemProblem {
    fn of_spki(e: &ed25519_dalek::pkcs8::spki::Error) -> PemProblem {
        use ed25519_dalek::pkcs8::spki::Error;
        match e {
            Error::OidUnknown { .. } | Error::AlgorithmParametersMissing => {
                PemProblem::OtherAlgorithm
            }
            Error::KeyMalformed => PemProblem::MalformedKey,
            _ => PemProblem::Undecodable,
        }
    }

    fn of_pkcs8(e: &ed25519_dalek::pkcs8::Error) -> PemProblem {
        use ed25519_dalek::pkcs8::Error;
        match e {
            Error::PublicKey(e) => PemProblem::of_spki(e),
            Error::KeyMalformed | Error::ParametersMalformed => PemProblem::MalformedKey,
            _ => PemProblem::Undecodable,
        }
    }
}

/// Why bytes or text are not an Ed25519 public key ([`PublicKey::from_bytes`],
/// [`PublicKey::parse`]). One line of plain words.
#[derive(Debug, Clone, Copy, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublicKeyError {
    /// The raw key is not 32 bytes long.
    #[error("an Ed25519 public key is 32 bytes, got {0}")]
    Length(usize),
    /// The 32 bytes are not the encoding of a point on the Ed25519 curve.
    #[error("not an Ed25519 public key: the 32 bytes are not a point on the curve")]
    NotACurvePoint,
    /// The key file is not UTF-8 text.
    #[error("not text")]
    NotText,
    /// A `-----BEGIN` PEM that does not hold an Ed25519 SubjectPublicKeyInfo.
    #[error("not an Ed25519 public key PEM: {0}")]
    Pem(PemProblem),
    /// Neither a PEM, nor hex, nor base64.
    #[error("expected an SPKI PEM, 64 hex digits or base64 of 32 bytes")]
    Format,
}

/// Why a signing key could not be created, encoded or read ([`SecretKey::generate`],
/// [`SecretKey::to_pem`], [`SecretKey::from_pem`]). One line of plain words.
#[derive(Debug, Clone, Copy, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecretKeyError {
    /// The operating system's random source failed.
    #[error("OS random source failed: {0}")]
    Random(getrandom::Error),
    /// The key could not be encoded as PKCS#8 PEM.
    #[error("the private key could not be encoded as PKCS#8 PEM")]
    Encode,
    /// The text is not an Ed25519 PKCS#8 PEM private key.
    #[error("not an Ed25519 PKCS#8 PEM private key: {0}")]
    Pem(PemProblem),
}

/// An Ed25519 public key with its key id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl PublicKey {
    /// From the raw 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<PublicKey, PublicKeyError> {
        let arr: [u8; 32] = bytes
            .try_into()
            .map_err(|_| PublicKeyError::Length(bytes.len()))?;
        VerifyingKey::from_bytes(&arr)
            .map(|key| PublicKey { key })
            .map_err(|_| PublicKeyError::NotACurvePoint)
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

    /// Whether `sig` is this key's Ed25519 signature of `msg` (`verify_strict`: no
    /// small-order key or R). For signatures made outside a bundle (the grader's signed
    /// statements).
    pub fn verifies(&self, msg: &[u8], sig: &[u8]) -> bool {
        Signature::from_slice(sig).is_ok_and(|s| self.key.verify_strict(msg, &s).is_ok())
    }

    /// SubjectPublicKeyInfo PEM (the format `--trust` reads and `openssl pkey` shows).
    pub fn to_pem(&self) -> String {
        use ed25519_dalek::pkcs8::EncodePublicKey;
        self.key
            .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap_or_default()
    }

    /// Parse a public key file: SPKI PEM, or the raw key as 64 hex digits or base64.
    pub fn parse(text: &[u8]) -> Result<PublicKey, PublicKeyError> {
        use base64::Engine;
        use ed25519_dalek::pkcs8::DecodePublicKey;
        let s = std::str::from_utf8(text)
            .map_err(|_| PublicKeyError::NotText)?
            .trim();
        if s.starts_with("-----BEGIN") {
            return VerifyingKey::from_public_key_pem(s)
                .map(|key| PublicKey { key })
                .map_err(|e| PublicKeyError::Pem(PemProblem::of_spki(&e)));
        }
        if let Ok(b) = hex::decode(s) {
            return PublicKey::from_bytes(&b);
        }
        match base64::engine::general_purpose::STANDARD.decode(s) {
            Ok(b) => PublicKey::from_bytes(&b),
            Err(_) => Err(PublicKeyError::Format),
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
    pub fn generate() -> Result<SecretKey, SecretKeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(SecretKeyError::Random)?;
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
    pub fn to_pem(&self) -> Result<String, SecretKeyError> {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        self.key
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .map(|z| z.to_string())
            .map_err(|_| SecretKeyError::Encode)
    }

    /// Parse a PKCS#8 PEM private key.
    pub fn from_pem(text: &str) -> Result<SecretKey, SecretKeyError> {
        use ed25519_dalek::pkcs8::DecodePrivateKey;
        SigningKey::from_pkcs8_pem(text.trim())
            .map(|key| SecretKey { key })
            .map_err(|e| SecretKeyError::Pem(PemProblem::of_pkcs8(&e)))
    }

    /// The Ed25519 key (streaming signatures, `crate::seal`).
    pub(crate) fn signing_key(&self) -> &SigningKey {
        &self.key
    }

    /// The Ed25519 signature of `msg`, for signatures made outside a bundle (the
    /// grader's signed statements).
    pub fn sign(&self, msg: &[u8]) -> [u8; 64] {
        self.key.sign(msg).to_bytes()
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

/// What [`decode_record`] says about bytes that are not a record (plain words; the
/// decoder's own message is not shown to users).
pub const RECORD_DOES_NOT_DECODE: &str = "the bytes do not decode as a record of this format";

/// Bytes that do not decode as a record ([`decode_record`]); its message is
/// [`RECORD_DOES_NOT_DECODE`].
#[derive(Debug, Clone, Copy, thiserror::Error, PartialEq, Eq)]
#[error("{}", RECORD_DOES_NOT_DECODE)]
pub struct RecordDecodeError;

/// Decode one record: the first CBOR item of `bytes` (what follows it is not read, as
/// ciborium, which wrote it, reads it).
///
/// The records collectors write are read by the hand-written decoder
/// ([`crate::record_decode`]); every other input by [`decode_record_reference`], which
/// gives the answer whenever the hand-written one does not read the bytes, so the answer
/// (value or error) is always the reference's (`tests/record_decode.rs`).
pub fn decode_record(bytes: &[u8]) -> Result<Record, RecordDecodeError> {
    match crate::record_decode::record(bytes) {
        Some((record, _)) => Ok(record),
        None => decode_record_reference(bytes),
    }
}

/// Decode one record with the serde decoder alone: the reference [`decode_record`] is
/// held to. The first CBOR item of `bytes` (what follows it is not read, as ciborium,
/// which wrote it, reads it).
///
/// Decoded with cbor4ii from the slice (about 2.5 times ciborium's rate over the same
/// records: docs/performance.md); `tests/decode_equiv.rs` holds the two decoders to the
/// same answer on every record of the examples and on damaged ones.
pub fn decode_record_reference(bytes: &[u8]) -> Result<Record, RecordDecodeError> {
    cbor4ii::serde::from_slice(bytes).map_err(|_| RecordDecodeError)
}

/// Sign `evidence` and return the bundle bytes. `evidence.records` must already be the
/// encoded, chained records and `chain_head` their head.
/// For a bundle of any size, [`crate::seal::seal_to`] writes the same bytes without
/// holding the payload in memory.
pub fn seal(evidence: &Evidence, key: &SecretKey) -> Vec<u8> {
    let mut payload = Vec::new();
    ciborium::into_writer(evidence, &mut payload).expect("evidence encodes");
    let (protected, unprotected) = cose_headers(key);
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

/// The protected and unprotected COSE headers of a bundle signed by `key`.
pub(crate) fn cose_headers(key: &SecretKey) -> (coset::Header, coset::Header) {
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
    (protected, unprotected)
}

/// Everything that can be read from a bundle without trusting it.
#[derive(Debug, Clone)]
pub struct Unverified {
    /// The payload.
    pub evidence: Evidence,
    /// Each record, or why it did not decode.
    pub records: Vec<Result<Record, RecordDecodeError>>,
    /// The public key in the unprotected header, if the header checks passed.
    pub signer: Option<PublicKey>,
    /// The verification failure, if any (the one [`open`] without pins reports).
    pub problem: Option<VerifyError>,
}

/// Nesting bound of the CBOR structure (the same as ciborium's recursion limit).
const MAX_DEPTH: usize = 256;

/// Why bytes are not one well-formed CBOR item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Malformed {
    /// The bytes end inside the item.
    End,
    /// The byte at this offset cannot start or continue an item.
    Invalid(usize),
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A map has the key at this offset twice (only when keys are checked).
    Duplicate(usize),
}

/// The head of the CBOR item at `pos`: major type, additional information, argument,
/// and the offset after the head.
fn read_head(b: &[u8], pos: usize) -> Result<(u8, u8, u64, usize), Malformed> {
    let first = *b.get(pos).ok_or(Malformed::End)?;
    let (major, ai) = (first >> 5, first & 0x1f);
    let n = match ai {
        0..=23 => return Ok((major, ai, u64::from(ai), pos + 1)),
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        31 => return Ok((major, ai, 0, pos + 1)),
        _ => return Err(Malformed::Invalid(pos)),
    };
    let arg = b.get(pos + 1..pos + 1 + n).ok_or(Malformed::End)?;
    let arg = arg.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    Ok((major, ai, arg, pos + 1 + n))
}

/// `len` bytes of string content from `pos`: the offset after them.
fn cbor_span(b: &[u8], pos: usize, len: u64) -> Result<usize, Malformed> {
    usize::try_from(len)
        .ok()
        .and_then(|l| pos.checked_add(l))
        .filter(|&end| end <= b.len())
        .ok_or(Malformed::End)
}

/// Check that one well-formed CBOR item (RFC 8949 §5.3.1; text is not checked for UTF-8)
/// starts at `pos`, without allocating; returns the offset after it. A declared length
/// larger than the input ends at [`Malformed::End`] after at most one step per byte.
fn cbor_skip(b: &[u8], pos: usize, depth: usize) -> Result<usize, Malformed> {
    cbor_walk(b, pos, depth, None)
}

/// A map key as the CBOR data model sees it, for finding duplicates: an integer by its
/// value and a string by its content, whatever the head length or the chunking of an
/// indefinite-length string; any other key by its encoded bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key<'a> {
    /// Major type 0 or 1 and the argument.
    Int(u8, u64),
    /// Major type 2 or 3 and the content.
    Str(u8, std::borrow::Cow<'a, [u8]>),
    /// Anything else, as encoded.
    Other(&'a [u8]),
}

/// The key whose well-formed item lies at `b[pos..end]`.
fn key_of(b: &[u8], pos: usize, end: usize) -> Key<'_> {
    match read_head(b, pos) {
        Ok((major @ (0 | 1), _, arg, _)) => Key::Int(major, arg),
        Ok((major @ (2 | 3), 31, _, mut p)) => {
            let mut content = Vec::new();
            while let Ok((_, _, len, q)) = read_head(b, p) {
                if b.get(p) == Some(&0xff) {
                    break;
                }
                let to = cbor_span(b, q, len).unwrap_or(end);
                content.extend_from_slice(b.get(q..to).unwrap_or_default());
                p = to;
            }
            Key::Str(major, content.into())
        }
        Ok((major @ (2 | 3), _, _, q)) => Key::Str(major, b.get(q..end).unwrap_or_default().into()),
        _ => Key::Other(b.get(pos..end).unwrap_or_default()),
    }
}

/// [`cbor_skip`], and when `keys` is given, every map checked for a key that occurs
/// twice ([`Malformed::Duplicate`]). `keys` is scratch space shared by the whole walk:
/// each map's keys are pushed on it and taken off again when the map is checked, so the
/// walk allocates only as deep as the widest map on its path.
fn cbor_walk<'a>(
    b: &'a [u8],
    pos: usize,
    depth: usize,
    mut keys: Option<&mut Vec<(Key<'a>, usize)>>,
) -> Result<usize, Malformed> {
    if depth > MAX_DEPTH {
        return Err(Malformed::TooDeep);
    }
    let (major, ai, arg, mut p) = read_head(b, pos)?;
    match (major, ai) {
        (0 | 1 | 6 | 7, 31) => Err(Malformed::Invalid(pos)),
        (0 | 1, _) => Ok(p),
        (7, 24) if arg < 32 => Err(Malformed::Invalid(pos)),
        (7, _) => Ok(p),
        (2 | 3, 31) => loop {
            if b.get(p) == Some(&0xff) {
                return Ok(p + 1);
            }
            let (m, cai, len, q) = read_head(b, p)?;
            if m != major || cai == 31 {
                return Err(Malformed::Invalid(p));
            }
            p = cbor_span(b, q, len)?;
        },
        (2 | 3, _) => cbor_span(b, p, arg),
        (4, _) => {
            let mut left = arg;
            loop {
                if ai == 31 {
                    if b.get(p) == Some(&0xff) {
                        return Ok(p + 1);
                    }
                } else if left == 0 {
                    return Ok(p);
                } else {
                    left -= 1;
                }
                p = cbor_walk(b, p, depth + 1, keys.as_deref_mut())?;
            }
        }
        (5, _) => {
            let start = keys.as_deref().map_or(0, Vec::len);
            let mut left = arg;
            loop {
                if ai == 31 {
                    if b.get(p) == Some(&0xff) {
                        p += 1;
                        break;
                    }
                } else if left == 0 {
                    break;
                } else {
                    left -= 1;
                }
                let key = p;
                p = cbor_walk(b, p, depth + 1, keys.as_deref_mut())?;
                if let Some(k) = keys.as_deref_mut() {
                    k.push((key_of(b, key, p), key));
                }
                p = cbor_walk(b, p, depth + 1, keys.as_deref_mut())?;
            }
            if let Some(k) = keys {
                let mine = &mut k[start..];
                mine.sort();
                let twice = mine
                    .windows(2)
                    .find(|w| w[0].0 == w[1].0)
                    .map(|w| w[0].1.max(w[1].1));
                k.truncate(start);
                if let Some(at) = twice {
                    return Err(Malformed::Duplicate(at));
                }
            }
            Ok(p)
        }
        _ => cbor_walk(b, p, depth + 1, keys), // a tag and its content
    }
}

/// Why bytes that must be exactly one strict CBOR item are not ([`strict_item`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Strictness {
    /// Not well-formed, or the bytes end inside the item.
    Malformed,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// This many bytes follow the item.
    Trailing(usize),
    /// A map has this key (shown in words) twice.
    Duplicate(String),
}

/// The encoded bytes of the map key at `at` (an integer or a definite-length string, as
/// [`strict_fast`] takes them): its head, and its content for a string. In bounds: the
/// walk checked them when it met the key.
fn fast_key_bytes(b: &[u8], at: usize) -> &[u8] {
    let end = match read_head(b, at) {
        Ok((2..=3, _, len, q)) => cbor_span(b, q, len).unwrap_or(q),
        Ok((_, _, _, q)) => q,
        Err(_) => at,
    };
    b.get(at..end).unwrap_or_default()
}

/// Maps of at most this many entries (definite length) are narrow: a key is compared
/// with those before it only when its bucket ([`fast_bucket`]) is taken, by reading them
/// again ([`fast_key_seen`]). Wider maps, and those of indefinite length, keep where
/// their keys are and are sorted when they end ([`fast_sorted_twice`]).
const NARROW_KEYS: u64 = 16;

/// Whether the key `b[p..end]` is one of the keys before it in its narrow map, whose first
/// key is at `start`: the entries from there are read again up to `p`, each key compared.
/// Each such reading takes its bytes from `budget`; `None` once that is spent, and the
/// walk leaves the item to [`cbor_walk`] (so that however many keys share buckets, the
/// cheap walk reads an item a bounded number of times).
#[cold]
fn fast_key_seen(b: &[u8], start: usize, p: usize, end: usize, budget: &mut usize) -> Option<bool> {
    *budget = budget.checked_sub(p - start)?;
    let key = b.get(p..end)?;
    let mut q = start;
    while q < p {
        let before = fast_key_bytes(b, q);
        if before.is_empty() {
            return None;
        }
        if before == key {
            return Some(true);
        }
        q = cbor_skip(b, q + before.len(), 0).ok()?;
    }
    Some(false)
}

/// Whether two of the keys at `keys` (one wide map's) are the same, found by sorting them.
#[cold]
fn fast_sorted_twice(keys: &mut [usize], b: &[u8]) -> bool {
    keys.sort_unstable_by(|&x, &y| fast_key_bytes(b, x).cmp(fast_key_bytes(b, y)));
    keys.windows(2)
        .any(|w| fast_key_bytes(b, w[0]) == fast_key_bytes(b, w[1]))
}

/// The smallest argument each of the heads with additional information 24 to 27 is
/// the shortest form for.
const SHORTEST: [u64; 4] = [24, 1 << 8, 1 << 16, 1 << 32];

/// For each first byte of an item, the length of the whole item when that byte alone
/// gives it and the item is well-formed whatever the bytes after the head are: an
/// integer, a float, a simple value below 24, a string of fewer than 24 bytes. 0 for
/// any other first byte (an array, a map, a tag, a longer string, a simple value with
/// a byte of its own, a reserved or indefinite head). With `keys`, only the integers and
/// strings whose argument is in the first byte, the keys of the cheap walk's fast path.
const fn fast_lengths(keys: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let (major, ai) = (i >> 5, (i & 0x1f) as u8);
        t[i] = match (major, ai) {
            (0 | 1, 0..=23) => 1,
            (2 | 3, 0..=23) => 1 + ai,
            _ if keys => 0,
            (7, 0..=23) => 1,
            (0 | 1, 24) => 2,
            (0 | 1 | 7, 25) => 3,
            (0 | 1 | 7, 26) => 5,
            (0 | 1 | 7, 27) => 9,
            _ => 0,
        };
        i += 1;
    }
    t
}

/// [`fast_lengths`] of every first byte.
const FAST_LEN: [u8; 256] = fast_lengths(false);

/// [`fast_lengths`] of every first byte of a key.
const FAST_KEY_LEN: [u8; 256] = fast_lengths(true);

/// The mask that keeps the first `len` bytes of a little-endian word.
const fn fast_mask(len: usize) -> u64 {
    if len >= 8 {
        u64::MAX
    } else {
        (1 << (8 * len)) - 1
    }
}

/// [`fast_mask`] of every length a byte can hold.
const FAST_MASK: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = fast_mask(i);
        i += 1;
    }
    t
};

/// The bucket (0 to 63) of a map key whose first eight encoded bytes (all of them for a
/// shorter key, the rest zero) are `sig` as a little-endian word: the top six bits of
/// `sig` times an odd constant (the 64-bit finalizer constant of MurmurHash3, which puts
/// the field names of every struct of [`crate::model`] in distinct buckets). The walk
/// takes only integer and definite-length string keys whose head is in shortest form,
/// so two keys are the same by value exactly when their encoded bytes are the same, and
/// then their bucket is the same: a key whose bucket no key before it in its map took
/// is new, without comparing it with any.
#[inline(always)]
fn fast_bucket(sig: u64) -> u64 {
    1 << (sig.wrapping_mul(0xff51_afd7_ed55_8ccd) >> 58)
}

/// The end of the key at `p` whose first byte `first` has an argument of its own
/// (additional information 24 or more): `None` unless it is an integer or a
/// definite-length string, in shortest form, within `b`.
#[cold]
fn fast_key_wide(b: &[u8], p: usize, first: u8) -> Option<usize> {
    let (major, ai) = (first >> 5, first & 0x1f);
    let (arg, q) = fast_arg(b, p, ai)?;
    if major > 3 || arg < SHORTEST[usize::from(ai - 24)] {
        return None;
    }
    if major < 2 {
        Some(q)
    } else {
        fast_span(b, q, arg)
    }
}

/// The first eight bytes of the key `b[p..end]` (all of them for a shorter key, the rest
/// zero) as a little-endian word, when fewer than eight bytes of `b` are left at `p`.
#[cold]
fn fast_sig_near_end(b: &[u8], p: usize, end: usize) -> u64 {
    b[p..end.min(p + 8)]
        .iter()
        .rev()
        .fold(0u64, |a, &x| (a << 8) | u64::from(x))
}

/// An array, map or tag that [`strict_fast`] is inside of (a tag is read as an array of
/// one item), kept while the walk is inside one of its items.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Items (array) or entries (map) still to come, or [`INDEFINITE`].
    left: u64,
    /// For a narrow map ([`NARROW_KEYS`]), where its first key is in the item walked; for
    /// a wide one, [`WIDE`] and where its keys start in [`FastScratch::keys`];
    /// [`NOT_A_MAP`] for an array or tag.
    start: usize,
    /// For a narrow map, the buckets ([`fast_bucket`]) its keys so far took, one bit
    /// each.
    buckets: u64,
}

/// [`Open::left`] of an indefinite-length array or map: it ends at a break byte. (A
/// definite one never has that many items left: each takes a byte.)
const INDEFINITE: u64 = u64::MAX;

/// [`Open::start`] of an array or tag.
const NOT_A_MAP: usize = usize::MAX;

/// The bit of [`Open::start`] that marks a wide map (no offset in a slice or length of
/// a vector has it).
const WIDE: usize = 1 << (usize::BITS - 1);

/// Scratch space of [`strict_fast`]: where the keys of the wide maps it is inside of are
/// (each map's are pushed, and taken off again when the map ends), and room for the
/// containers it is inside of, [`MAX_DEPTH`] of them. A reader checking many items keeps
/// one, so the walk allocates the room once, and the keys only while it meets wider maps
/// than before.
#[derive(Debug, Default)]
struct FastScratch {
    keys: Vec<usize>,
    open: Vec<Open>,
}

/// The argument of a head whose additional information `ai` is 24 to 27, in the bytes
/// after the head's first byte at `pos`, and the offset after the head. `None` for other
/// `ai` (28 to 30 are reserved; 31 is indefinite and read by the caller) and when the
/// bytes end.
#[inline(always)]
fn fast_arg(b: &[u8], pos: usize, ai: u8) -> Option<(u64, usize)> {
    let rest = b.get(pos + 1..)?;
    Some(match ai {
        24 => (u64::from(*rest.first()?), pos + 2),
        25 => (u64::from(u16::from_be_bytes(*rest.first_chunk()?)), pos + 3),
        26 => (u64::from(u32::from_be_bytes(*rest.first_chunk()?)), pos + 5),
        27 => (u64::from_be_bytes(*rest.first_chunk()?), pos + 9),
        _ => return None,
    })
}

/// The offset `len` bytes after `from`, if that is within `b`.
#[inline(always)]
fn fast_span(b: &[u8], from: usize, len: u64) -> Option<usize> {
    let end = from.checked_add(usize::try_from(len).ok()?)?;
    (end <= b.len()).then_some(end)
}

/// An item as [`strict_fast`] meets it ([`fast_item`]).
enum FastItem {
    /// Anything but an array, a map or a tag, well-formed: the offset after it.
    Leaf(usize),
    /// An array, a map or a tag (major type `major`) with `left` items or entries (one
    /// for a tag, [`INDEFINITE`]), whose head ends at `at`.
    Open { major: u8, left: u64, at: usize },
}

/// The item at `p`, nested `depth` levels deep, whose first byte has no
/// [`fast_lengths`]: `None` when it is not well-formed as far as its head (and, for a
/// string, its content) goes.
#[inline(always)]
fn fast_item(b: &[u8], p: usize, depth: usize) -> Option<FastItem> {
    let first = *b.get(p)?;
    let (major, ai) = (first >> 5, first & 0x1f);
    match (major, ai) {
        (4 | 5, 0..=23) => Some(FastItem::Open {
            major,
            left: u64::from(ai),
            at: p + 1,
        }),
        (6, 0..=23) => Some(FastItem::Open {
            major,
            left: 1,
            at: p + 1,
        }),
        _ => fast_item_wide(b, p, depth),
    }
}

/// [`fast_item`] when the argument is not in the first byte.
fn fast_item_wide(b: &[u8], p: usize, depth: usize) -> Option<FastItem> {
    let first = *b.get(p)?;
    let (major, ai) = (first >> 5, first & 0x1f);
    if ai < 24 {
        // Only arrays, maps and tags have no [`fast_lengths`] here.
        return Some(FastItem::Open {
            major,
            left: if major == 6 { 1 } else { u64::from(ai) },
            at: p + 1,
        });
    }
    if ai == 31 {
        return match major {
            // A chunked string: no map inside, the plain walk checks it.
            2 | 3 => Some(FastItem::Leaf(cbor_walk(b, p, depth, None).ok()?)),
            4 | 5 => Some(FastItem::Open {
                major,
                left: INDEFINITE,
                at: p + 1,
            }),
            _ => None,
        };
    }
    let (arg, q) = fast_arg(b, p, ai)?;
    Some(match major {
        0 | 1 => FastItem::Leaf(q),
        2 | 3 => FastItem::Leaf(fast_span(b, q, arg)?),
        7 if ai == 24 && arg < 32 => return None,
        7 => FastItem::Leaf(q),
        6 => FastItem::Open {
            major,
            left: 1,
            at: q,
        },
        // A definite length of 2^64 - 1 is not [`INDEFINITE`]: more items than bytes,
        // so the bytes end first.
        _ if arg == INDEFINITE => return None,
        _ => FastItem::Open {
            major,
            left: arg,
            at: q,
        },
    })
}

/// The end of an array, map or tag ([`FastItem::Open`]) met [`MAX_DEPTH`] levels deep,
/// where no item may be inside it: only an empty array has one.
#[cold]
fn fast_too_deep(b: &[u8], major: u8, left: u64, at: usize) -> Option<usize> {
    match (major, left) {
        (4, 0) => Some(at),
        (4, INDEFINITE) if b.get(at) == Some(&0xff) => Some(at + 1),
        _ => None,
    }
}

/// The common case of [`strict_item`], made cheap: the offset after the item at the
/// start of `b` when it is well-formed, nested at most [`MAX_DEPTH`] levels, and every
/// map in it has only integer and definite-length string keys with heads in shortest
/// form, none twice. `None` for anything else (malformed, too deep, a key twice, a key
/// of another kind or in a longer head, an indefinite-length string key), and when keys
/// share buckets so often that it would read the item too many times ([`fast_key_seen`]):
/// the caller then walks the item with [`cbor_walk`], which says exactly what is wrong,
/// or that nothing is. So `Some(end)` here is always `Ok(end)` there.
///
/// Keys are compared by their encoded bytes, which for these keys is comparing them as
/// [`cbor_walk`] does (an integer by value, a string by content), in place: no key is
/// copied or allocated. In a narrow map ([`NARROW_KEYS`]) a key is compared with the keys
/// before it only when its bucket ([`fast_bucket`]) is taken; a wide map is sorted when
/// it ends. The walk is one loop over the items, not a recursion: the containers it is
/// inside of are kept in `scratch`, and the items whose first byte gives their length
/// ([`fast_lengths`]: integers, floats, short strings) are read by a table look-up.
fn strict_fast(b: &[u8], scratch: &mut FastScratch) -> Option<usize> {
    scratch.keys.clear();
    if scratch.open.len() != MAX_DEPTH {
        scratch.open = vec![
            Open {
                left: 0,
                start: NOT_A_MAP,
                buckets: 0,
            };
            MAX_DEPTH
        ];
    }
    let open = <&mut [Open; MAX_DEPTH]>::try_from(scratch.open.as_mut_slice()).ok()?;
    fast_walk(b, &mut scratch.keys, open)
}

/// The end of the key at `p` and the mask of its first eight bytes ([`fast_mask`]):
/// `None` unless it is an integer or a definite-length string, in shortest form, within
/// `b`.
#[inline(always)]
fn fast_key_end(b: &[u8], p: usize) -> Option<(usize, u64)> {
    let first = *b.get(p)?;
    let len = FAST_KEY_LEN[usize::from(first)];
    let (end, mask) = if len != 0 {
        (p + usize::from(len), FAST_MASK[usize::from(len)])
    } else {
        let end = fast_key_wide(b, p, first)?;
        (end, fast_mask(end - p))
    };
    (end <= b.len()).then_some((end, mask))
}

/// The loop of [`strict_fast`], on its scratch vectors.
#[inline(always)]
fn fast_walk(b: &[u8], keys: &mut Vec<usize>, open: &mut [Open; MAX_DEPTH]) -> Option<usize> {
    let n = b.len();
    let mut p = 0usize;
    // What [`fast_key_seen`] may read again: several times the item, whatever its maps.
    let mut budget = n.saturating_mul(16).saturating_add(4096);
    // The innermost container (as [`Open`]). The item of `b` is read as the one item of
    // an array.
    let mut left = 1u64;
    let mut start = NOT_A_MAP;
    let mut buckets = 0u64;
    // How many containers the walk is inside of: those around the innermost are
    // `open[..depth]`, the outermost first.
    let mut depth = 0usize;
    // Step into the container met inside the current one, or past it when it is an empty
    // array too deep to hold an item.
    macro_rules! enter {
        ($walk:lifetime, $major:expr, $left:expr, $at:expr) => {
            if depth >= MAX_DEPTH {
                p = fast_too_deep(b, $major, $left, $at)?;
                continue;
            }
            open[depth] = Open {
                left,
                start,
                buckets,
            };
            depth += 1;
            left = $left;
            start = match $major {
                5 if left <= NARROW_KEYS => $at,
                5 => WIDE | keys.len(),
                _ => NOT_A_MAP,
            };
            buckets = 0;
            p = $at;
            continue $walk;
        };
    }
    // The next item (entry) of the current container, or `break` at its end.
    macro_rules! next {
        () => {
            if left == INDEFINITE {
                if *b.get(p)? == 0xff {
                    p += 1;
                    break;
                }
            } else if left == 0 {
                break;
            } else {
                left -= 1;
            }
        };
    }
    // The item at `p`: past it, or into it.
    macro_rules! item {
        ($walk:lifetime) => {
            let first = *b.get(p)?;
            let len = FAST_LEN[usize::from(first)];
            if len != 0 {
                p += usize::from(len);
                if p > n {
                    return None;
                }
            } else if first | 0x20 == 0x78 {
                // A string of 24 to 255 bytes (its length in one byte).
                p += 2 + usize::from(*b.get(p + 1)?);
                if p > n {
                    return None;
                }
            } else {
                match fast_item(b, p, depth)? {
                    FastItem::Leaf(end) => p = end,
                    FastItem::Open {
                        major,
                        left: inner,
                        at,
                    } => {
                        enter!($walk, major, inner, at);
                    }
                }
            }
        };
    }
    'walk: loop {
        if start == NOT_A_MAP {
            // An array, a tag or the top: its items, up to its end.
            loop {
                next!();
                item!('walk);
            }
        } else if start & WIDE == 0 {
            // A narrow map: its entries, up to its end, each key new.
            loop {
                next!();
                let (end, mask) = fast_key_end(b, p)?;
                let sig = match b[p..].first_chunk::<8>() {
                    Some(w) => u64::from_le_bytes(*w) & mask,
                    None => fast_sig_near_end(b, p, end),
                };
                let bucket = fast_bucket(sig);
                if buckets & bucket != 0 && fast_key_seen(b, start, p, end, &mut budget)? {
                    return None;
                }
                buckets |= bucket;
                p = end;
                item!('walk);
            }
        } else {
            // A wide map: its entries, up to its end, then no key twice.
            loop {
                next!();
                let (end, _) = fast_key_end(b, p)?;
                keys.push(p);
                p = end;
                item!('walk);
            }
            let from = start & !WIDE;
            let mine = keys.get_mut(from..)?;
            if fast_sorted_twice(mine, b) {
                return None;
            }
            keys.truncate(from);
        }
        // The container ended: back to the one around it.
        if depth == 0 {
            return Some(p);
        }
        depth -= 1;
        Open {
            left,
            start,
            buckets,
        } = open[depth];
    }
}

/// Check that `bytes` are exactly one well-formed CBOR item, nested at most
/// [`MAX_DEPTH`] levels, in which no map has the same key twice (RFC 8949 §5.6: such a
/// map is not valid, and decoders differ on which copy they keep).
///
/// The cheap walk ([`strict_fast`]) answers for the items every collector writes; when
/// it cannot say yes, the full walk ([`cbor_walk`] with keys) gives the answer and the
/// error, the same for every input.
fn strict_item(bytes: &[u8]) -> Result<(), Strictness> {
    strict_item_with(bytes, &mut FastScratch::default())
}

/// [`strict_item`] with the cheap walk's scratch space from the caller, so that a reader
/// checking many items allocates it once.
fn strict_item_with(bytes: &[u8], scratch: &mut FastScratch) -> Result<(), Strictness> {
    let fast = strict_fast(bytes, scratch);
    if fast == Some(bytes.len()) {
        return Ok(());
    }
    strict_item_full(bytes)
}

/// [`strict_item`] by the full walk alone.
fn strict_item_full(bytes: &[u8]) -> Result<(), Strictness> {
    let mut keys = Vec::new();
    match cbor_walk(bytes, 0, 0, Some(&mut keys)) {
        Ok(end) if end == bytes.len() => Ok(()),
        Ok(end) => Err(Strictness::Trailing(bytes.len() - end)),
        Err(Malformed::End | Malformed::Invalid(_)) => Err(Strictness::Malformed),
        Err(Malformed::TooDeep) => Err(Strictness::TooDeep),
        Err(Malformed::Duplicate(at)) => {
            let end = cbor_skip(bytes, at, 0).unwrap_or(bytes.len());
            Err(Strictness::Duplicate(show_key(&key_of(bytes, at, end))))
        }
    }
}

/// A map key in words, for an error message: an integer as a number, text quoted with
/// Rust string escapes (cut at 64 characters), bytes as hex (cut at 32 bytes), any other
/// key as "(neither an integer nor a string)".
fn show_key(key: &Key<'_>) -> String {
    match key {
        Key::Int(0, n) => n.to_string(),
        Key::Int(_, n) => (-1 - i128::from(*n)).to_string(),
        Key::Str(3, t) => {
            let text: String = String::from_utf8_lossy(t).chars().take(64).collect();
            format!("{text:?}")
        }
        Key::Str(_, b) => format!("h'{}'", hex::encode(&b[..b.len().min(32)])),
        Key::Other(_) => "(neither an integer nor a string)".into(),
    }
}

/// The four parts of a COSE_Sign1, borrowed from the bundle bytes (nothing copied).
struct Cose<'a> {
    protected: &'a [u8],
    unprotected: &'a [u8],
    payload: &'a [u8],
    signature: &'a [u8],
}

/// A definite-length byte string at `*p`: its content; `*p` moves past it.
fn cbor_bstr<'a>(b: &'a [u8], p: &mut usize) -> Option<&'a [u8]> {
    let (major, ai, len, q) = read_head(b, *p).ok()?;
    if major != 2 || ai == 31 {
        return None;
    }
    let end = cbor_span(b, q, len).ok()?;
    *p = end;
    b.get(q..end)
}

/// What a file that is not a bundle looks like, in a few words, when that can be told
/// from its bytes: a PEM file (with its label), a JSON document (naming a report's
/// `schema` or SARIF), XML or HTML, gzip, other text; `None` for binary data left to the
/// CBOR reading (which names a CBOR item that is not a COSE_Sign1).
pub fn looks_like(bytes: &[u8]) -> Option<String> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Some("gzip-compressed data (unpack it first)".into());
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return Some("a zip archive (unpack it first)".into());
    }
    let head = &bytes[..bytes.len().min(64 << 10)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // Cut inside a character at the 64 KiB mark: still text.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    if text.contains('\0') {
        return None;
    }
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if let Some(rest) = t.strip_prefix("-----BEGIN ") {
        let label: String = rest
            .split("-----")
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == ' ')
            .take(40)
            .collect();
        let hint = if label.contains("PUBLIC KEY") {
            " (a public key: give it to --trust)"
        } else {
            ""
        };
        return Some(format!("a PEM file ({label}){hint}"));
    }
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
            let schema = v.get("schema").and_then(serde_json::Value::as_str);
            return Some(match schema {
                Some(s) => format!("a JSON document (schema {:?})", short(s)),
                None if v.get("runs").is_some() && v.get("version").is_some() => {
                    "a SARIF report (JSON)".into()
                }
                None => "a JSON document".into(),
            });
        }
        return Some("text that starts like JSON".into());
    }
    if t.starts_with('<') {
        let lower = t.get(..t.len().min(256)).unwrap_or("").to_ascii_lowercase();
        return Some(
            if lower.contains("<html") || lower.starts_with("<!doctype html") {
                "an HTML document".into()
            } else {
                "an XML or HTML document".into()
            },
        );
    }
    let lines = bytes.iter().filter(|&&b| b == b'\n').count().max(1);
    Some(format!("a text file ({lines} line(s))"))
}

fn short(s: &str) -> String {
    s.chars().take(60).collect()
}

/// Checks 1 to 5: size, one well-formed CBOR item and nothing after it, the COSE_Sign1 tag,
/// and the four-item array of byte strings and a map (with an embedded payload).
fn structure(bytes: &[u8]) -> Result<Cose<'_>, VerifyError> {
    let header = |s: &str| VerifyError::Header(s.to_string());
    if bytes.is_empty() {
        return Err(VerifyError::NotABundle("empty file".into()));
    }
    if bytes.len() > MAX_BUNDLE_BYTES {
        return Err(VerifyError::NotABundle(format!(
            "{} bytes is over the 1 GiB limit",
            bytes.len()
        )));
    }
    // Every bundle starts with the COSE_Sign1 tag byte. A file that does not is something
    // else: say what it looks like rather than reading its first byte as a CBOR item
    // (a PEM key's `-` is one, and the rest would be called "trailing data").
    if bytes[0] != 0xd2 {
        if let Some(what) = looks_like(bytes) {
            return Err(VerifyError::NotABundle(what));
        }
    }
    let end = cbor_skip(bytes, 0, 0).map_err(|m| match m {
        // The structure started but the bytes ran out. A file whose first byte is not the
        // COSE_Sign1 tag is simply something else.
        Malformed::End if bytes[0] == 0xd2 => VerifyError::Truncated,
        Malformed::End => VerifyError::NotABundle("not CBOR (the file ends inside an item)".into()),
        Malformed::Invalid(at) => {
            VerifyError::NotABundle(format!("not well-formed CBOR (at byte {at})"))
        }
        Malformed::TooDeep => {
            VerifyError::NotABundle(format!("CBOR nested more than {MAX_DEPTH} levels deep"))
        }
        Malformed::Duplicate(at) => {
            VerifyError::NotABundle(format!("not well-formed CBOR (at byte {at})"))
        }
    })?;
    if end < bytes.len() {
        return Err(VerifyError::TrailingData(bytes.len() - end));
    }
    // Well-formed from here on: no head below can run past the end.
    let not_cose = || VerifyError::NotABundle("CBOR without the COSE_Sign1 tag".into());
    let (major, _, tag, p) = read_head(bytes, 0).map_err(|_| not_cose())?;
    if major != 6 {
        return Err(not_cose());
    }
    if tag != COSE_SIGN1_TAG {
        return Err(VerifyError::NotABundle(format!(
            "CBOR tag {tag}, not COSE_Sign1 (18)"
        )));
    }
    let shape = "not a COSE_Sign1 (an array of protected header, unprotected header, payload and signature)";
    let mut p = match read_head(bytes, p) {
        Ok((4, ai, 4, after)) if ai != 31 => after,
        _ => return Err(header(shape)),
    };
    let protected = cbor_bstr(bytes, &mut p)
        .ok_or_else(|| header("the protected header is not a byte string"))?;
    let start = p;
    match read_head(bytes, start) {
        Ok((5, _, _, _)) => {}
        _ => return Err(header("the unprotected header is not a map")),
    }
    p = cbor_skip(bytes, start, 1).map_err(|_| header(shape))?;
    let unprotected = bytes.get(start..p).ok_or_else(|| header(shape))?;
    if bytes.get(p) == Some(&0xf6) {
        return Err(header("the payload is detached; a bundle embeds it"));
    }
    let payload =
        cbor_bstr(bytes, &mut p).ok_or_else(|| header("the payload is not a byte string"))?;
    let signature =
        cbor_bstr(bytes, &mut p).ok_or_else(|| header("the signature is not a byte string"))?;
    Ok(Cose {
        protected,
        unprotected,
        payload,
        signature,
    })
}

/// Decode exactly one small CBOR map (a header) into `(label, value)` pairs.
fn header_map(bytes: &[u8]) -> Option<Vec<(Value, Value)>> {
    let mut r = bytes;
    match ciborium::from_reader::<Value, _>(&mut r) {
        Ok(Value::Map(m)) if r.is_empty() => Some(m),
        _ => None,
    }
}

/// The `crit` header parameter (RFC 9052 §3.1).
const CRIT_LABEL: i64 = 2;

/// One COSE header (`which`: "protected" or "unprotected") read strictly: exactly one
/// CBOR map, no label twice, no `crit` parameter. Its `(label, value)` pairs.
fn strict_header(bytes: &[u8], which: &str) -> Result<HeaderMap, VerifyError> {
    let fail = |s: String| VerifyError::Header(s);
    match strict_item(bytes) {
        Ok(()) => {}
        Err(Strictness::Malformed) => {
            return Err(fail(format!("the {which} header is not a CBOR map")))
        }
        Err(Strictness::TooDeep) => {
            return Err(fail(format!(
                "the {which} header is nested more than {MAX_DEPTH} levels deep"
            )))
        }
        Err(Strictness::Trailing(n)) => {
            return Err(fail(format!("{n} bytes follow the {which} header map")))
        }
        Err(Strictness::Duplicate(k)) => {
            return Err(fail(format!("the {which} header has the label {k} twice")))
        }
    }
    let map =
        header_map(bytes).ok_or_else(|| fail(format!("the {which} header is not a CBOR map")))?;
    if map
        .iter()
        .any(|(k, _)| *k == Value::Integer(CRIT_LABEL.into()))
    {
        return Err(fail(format!(
            "the {which} header has a crit (critical parameters) entry; this verifier understands no critical parameter"
        )));
    }
    Ok(map)
}

/// Check 6: each header is one strict map without `crit`, the protected header
/// says EdDSA and the content type, and the unprotected header carries a canonical,
/// not small-order Ed25519 public key whose key id is the `kid`.
fn header(c: &Cose<'_>) -> Result<PublicKey, VerifyError> {
    let header = |s: &str| VerifyError::Header(s.to_string());
    let prot = strict_header(c.protected, "protected")?;
    let get = |label: i64| {
        prot.iter()
            .find(|(k, _)| *k == Value::Integer(label.into()))
            .map(|(_, v)| v)
    };
    if get(1) != Some(&Value::Integer((iana::Algorithm::EdDSA as i64).into())) {
        return Err(header("the algorithm is not EdDSA"));
    }
    if get(3) != Some(&Value::Text(CONTENT_TYPE.to_string())) {
        return Err(VerifyError::Header(format!(
            "the content type is not {CONTENT_TYPE}"
        )));
    }
    let kid = match get(4) {
        Some(Value::Bytes(k)) => k.as_slice(),
        _ => &[],
    };
    let unprot = strict_header(c.unprotected, "unprotected")?;
    let raw = unprot
        .iter()
        .find_map(|(label, v)| match (label, v) {
            (Value::Text(t), Value::Bytes(b)) if t == PUBLIC_KEY_LABEL => Some(b.as_slice()),
            _ => None,
        })
        .ok_or_else(|| header("no signer public key in the unprotected header"))?;
    // A fleet's bundles are signed by one key or a few: the key this thread last
    // accepted is kept with its id, so the decompression, the canonical and small-order
    // tests and the id's hash below run once per key rather than once per bundle. Only an
    // accepted key is kept, and for it every test below passes but the key id's, which
    // is made against the kept id: the same outcome, and the same error, as the tests.
    let cached = LAST_SIGNER.with_borrow(|last| {
        last.as_ref()
            .filter(|(bytes, _, _)| bytes.as_slice() == raw)
            .map(|(_, key, id)| (key.clone(), *id))
    });
    if let Some((key, id)) = cached {
        if kid != id {
            return Err(header("key id does not match the signer public key"));
        }
        return Ok(key);
    }
    let key = PublicKey::from_bytes(raw)
        .map_err(|_| header("the signer public key is not a valid Ed25519 public key"))?;
    let id = key.key_id_bytes();
    if kid != id {
        return Err(header("key id does not match the signer public key"));
    }
    // RFC 8032 §5.1.3 refuses a y coordinate of p or more, which the decompression used
    // above accepts.
    if key.key.to_edwards().compress().to_bytes() != key.to_bytes() {
        return Err(header(
            "the signer public key is not in canonical encoding (its y coordinate is not reduced)",
        ));
    }
    // A small-order key verifies signatures that no secret key made (strict verification).
    if key.key.is_weak() {
        return Err(header(
            "the signer public key is a small-order (weak) Ed25519 key",
        ));
    }
    if let (Ok(bytes), Ok(id)) = (<[u8; 32]>::try_from(raw), <[u8; KEY_ID_LEN]>::try_from(id)) {
        LAST_SIGNER.set(Some((bytes, key.clone(), id)));
    }
    Ok(key)
}

/// A signer key [`header`] accepted: its raw bytes, the key and its key id.
type AcceptedSigner = ([u8; 32], PublicKey, [u8; KEY_ID_LEN]);

thread_local! {
    /// The signer key [`header`] last accepted on this thread.
    static LAST_SIGNER: std::cell::RefCell<Option<AcceptedSigner>> =
        const { std::cell::RefCell::new(None) };
}

/// The CBOR head of a major type with an argument, shortest form.
pub fn cbor_head(major: u8, n: u64) -> Vec<u8> {
    let m = major << 5;
    match n {
        0..=23 => vec![m | n as u8],
        24..=0xff => vec![m | 24, n as u8],
        0x100..=0xffff => {
            let mut v = vec![m | 25];
            v.extend_from_slice(&(n as u16).to_be_bytes());
            v
        }
        0x1_0000..=0xffff_ffff => {
            let mut v = vec![m | 26];
            v.extend_from_slice(&(n as u32).to_be_bytes());
            v
        }
        _ => {
            let mut v = vec![m | 27];
            v.extend_from_slice(&n.to_be_bytes());
            v
        }
    }
}

/// The bytes of the COSE `Sig_structure` `["Signature1", protected, h'', payload]` that
/// come before the payload bytes (`protected`: the contents of the protected header bstr).
/// Heads are in shortest form, as COSE's deterministic encoding requires. Shared by the
/// signer ([`crate::seal::seal_to`]) and [`open`].
pub(crate) fn sig_structure_head(protected: &[u8], payload_len: u64) -> Vec<u8> {
    let mut head = Vec::with_capacity(protected.len() + 32);
    head.push(0x84);
    head.push(0x6a);
    head.extend_from_slice(b"Signature1");
    head.extend(cbor_head(2, protected.len() as u64));
    head.extend_from_slice(protected);
    head.push(0x40);
    head.extend(cbor_head(2, payload_len));
    head
}

/// Checks 7 and 7b: Ed25519 over `["Signature1", protected, h'', payload]`, built from the bytes
/// as stored. Nothing in the payload is decoded here.
fn check_signature(c: &Cose<'_>, signer: &PublicKey) -> Result<(), VerifyError> {
    let (r, s) = c
        .signature
        .split_first_chunk::<32>()
        .and_then(|(r, rest)| Some((r, <&[u8; 32]>::try_from(rest).ok()?)))
        .ok_or(VerifyError::Signature)?;
    // Hashed as it is built: the payload is never copied (a bundle is verified in the
    // memory of the file, not twice that).
    let head = sig_structure_head(c.protected, c.payload.len() as u64);
    if !ed25519_holds(&signer.key, r, s, [&head, c.payload]) {
        return Err(VerifyError::Signature);
    }
    // What `verify_strict` adds to this verification: the signer key is not small-order
    // (checked with the header) and neither is R. R is checked here by its encoding (an
    // R that does not decode could not have matched above).
    if small_order_encoding(r) {
        return Err(VerifyError::WeakSignature);
    }
    Ok(())
}

/// Whether `(r, s)` is `key`'s Ed25519 signature of the message made of `pieces` in
/// turn: RFC 8032's verification, as ed25519-dalek's `verify` and `verify_stream`
/// compute it. `s` must be canonical (below the group order ℓ), the challenge is
/// `k = SHA-512(r ‖ key ‖ message) mod ℓ`, and the signature holds when `[s]B − [k]A`
/// encodes, byte for byte, as `r` (so an `r` that is not a canonical encoding never
/// matches). The cofactorless equation, as ed25519-dalek's; the small-order refusals of
/// `verify_strict` are the caller's ([`check_signature`]).
///
/// The same as `VerifyingKey::verify_stream` but for the hash: the challenge, which
/// reads the whole payload and is most of a bundle's verification, is computed with
/// sha2 0.11, whose AVX2 rounds were about 10 % faster here than those of the 0.10
/// that ed25519-dalek 2 is built on. A test holds the two verifications to the same
/// answer on valid, altered and malformed signatures.
fn ed25519_holds<const N: usize>(
    key: &VerifyingKey,
    r: &[u8; 32],
    s: &[u8; 32],
    pieces: [&[u8]; N],
) -> bool {
    use curve25519_dalek::{EdwardsPoint, Scalar};
    use sha2_011::Digest as _;
    let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(*s)) else {
        return false;
    };
    let mut h = sha2_011::Sha512::new();
    h.update(r);
    h.update(key.as_bytes());
    for piece in pieces {
        h.update(piece);
    }
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
    let minus_a = -key.to_edwards();
    EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &minus_a, &s)
        .compress()
        .as_bytes()
        == r
}

/// The y coordinates, as stored, of the eight points of order dividing 8 (the curve's
/// 8-torsion): 0 (the two points of order 4), 1 (the identity), p-1 (order 2), the two
/// y of the four points of order 8, and the unreduced forms of 0 and 1 (p and p+1, the
/// only residues below 19 and so the only ones with a second form below 2^255).
const SMALL_ORDER_Y: [[u8; 32]; 7] = {
    let mut p_minus_1 = [0xff; 32];
    p_minus_1[0] = 0xec;
    p_minus_1[31] = 0x7f;
    let mut p = p_minus_1;
    p[0] = 0xed;
    let mut p_plus_1 = p_minus_1;
    p_plus_1[0] = 0xee;
    let mut one = [0; 32];
    one[0] = 1;
    [
        [0; 32],
        one,
        p_minus_1,
        p,
        p_plus_1,
        [
            0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef,
            0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88,
            0x6d, 0x53, 0xfc, 0x05,
        ],
        [
            0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10,
            0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77,
            0x92, 0xac, 0x03, 0x7a,
        ],
    ]
};

/// `R` decodes to a point of small order: what `VerifyingKey::from_bytes(r)` followed
/// by `is_weak()` answers (that decompression reduces y modulo p and takes either sign
/// of x, 0 included), without the decompression's square root. Every small-order point
/// decodes, so an encoding is weak exactly when its y, the sign bit cleared, is one of
/// [`SMALL_ORDER_Y`]; a test holds the two answers equal.
fn small_order_encoding(r: &[u8; 32]) -> bool {
    let mut y = *r;
    y[31] &= 0x7f;
    SMALL_ORDER_Y.contains(&y)
}

/// Longest format id quoted in [`VerifyError::UnknownFormat`].
const MAX_FORMAT_SHOWN: usize = 64;

/// Checks 10 and 11: the (signed) payload is a map of this format and decodes as
/// [`Evidence`]. One decode in the common case; the generic re-read happens only on
/// failure, to tell a future format from a malformed payload.
fn decode_evidence(payload: &[u8]) -> Result<Evidence, VerifyError> {
    let malformed = |s: &str| VerifyError::Payload(s.to_string());
    let first = cbor4ii::serde::from_slice::<Evidence>(payload);
    if let Ok(e) = &first {
        if e.format == FORMAT_ID {
            return first.map_err(|_| malformed("the payload does not decode"));
        }
    }
    let value: Value = ciborium::from_reader(payload)
        .map_err(|_| malformed("the payload is not one CBOR item"))?;
    let Value::Map(m) = &value else {
        return Err(malformed("the payload is not a map"));
    };
    let format = m.iter().find_map(|(k, v)| match (k, v) {
        (Value::Text(k), Value::Text(v)) if k == "format" => Some(v.as_str()),
        _ => None,
    });
    match format {
        Some(f) if f == FORMAT_ID => Err(VerifyError::Payload(format!(
            "the payload does not decode as {FORMAT_ID} evidence"
        ))),
        Some(f) => Err(VerifyError::UnknownFormat(
            f.chars().take(MAX_FORMAT_SHOWN).collect(),
        )),
        None => Err(malformed("the payload has no format id")),
    }
}

/// The payload split for decoding without copying the records: the payload with its
/// `records` array replaced by an empty one (decoded as [`Evidence`]: everything but the
/// records, a few kilobytes), and where each record's bytes lie in the payload (decoded
/// from there, hashed from there: never copied).
struct Split {
    rest: Vec<u8>,
    records: Vec<std::ops::Range<usize>>,
}

/// [`Split`] the payload, when it is the plain shape every collector writes: a
/// definite-length map with text keys, one `records` key, holding a definite-length array
/// of definite-length byte strings. Anything else gives `None`, and the payload is decoded
/// as a whole ([`decode_evidence`]), with the same result and errors: the split changes
/// only where the records' bytes are read from, never what is decoded.
fn split_records(payload: &[u8]) -> Option<Split> {
    let (major, ai, entries, mut p) = read_head(payload, 0).ok()?;
    if major != 5 || ai == 31 {
        return None;
    }
    let mut found = None;
    for _ in 0..entries {
        let (major, ai, len, q) = read_head(payload, p).ok()?;
        if major != 3 || ai == 31 {
            return None;
        }
        let key_end = cbor_span(payload, q, len).ok()?;
        let value = key_end;
        let after = cbor_skip(payload, value, 1).ok()?;
        if &payload[q..key_end] == b"records" {
            if found.is_some() {
                return None;
            }
            found = Some((value, after));
        }
        p = after;
    }
    if p != payload.len() {
        return None;
    }
    let (start, end) = found?;
    let (major, ai, count, mut r) = read_head(payload, start).ok()?;
    if major != 4 || ai == 31 {
        return None;
    }
    let mut records = Vec::with_capacity(usize::try_from(count).ok()?.min(payload.len()));
    for _ in 0..count {
        let (major, ai, len, q) = read_head(payload, r).ok()?;
        if major != 2 || ai == 31 {
            return None;
        }
        r = cbor_span(payload, q, len).ok()?;
        records.push(q..r);
    }
    let mut rest = Vec::with_capacity(payload.len() - (end - start) + 1);
    rest.extend_from_slice(&payload[..start]);
    rest.push(0x80);
    rest.extend_from_slice(&payload[end..]);
    Some(Split { rest, records })
}

/// The payload decoded, and its records' bytes: borrowed from the payload when it
/// splits ([`split_records`]), else the decoder's copies (taken out of
/// `evidence.records`, which is left empty either way).
fn decode_payload(payload: &[u8]) -> Result<(Evidence, Records<'_>), VerifyError> {
    if let Some(split) = split_records(payload) {
        if let Ok(evidence) = decode_evidence(&split.rest) {
            return Ok((evidence, Records::Borrowed(payload, split.records)));
        }
    }
    let mut evidence = decode_evidence(payload)?;
    let owned = std::mem::take(&mut evidence.records);
    Ok((evidence, Records::Owned(owned)))
}

/// The encoded records of a payload, in order.
enum Records<'a> {
    Borrowed(&'a [u8], Vec<std::ops::Range<usize>>),
    Owned(Vec<serde_bytes::ByteBuf>),
}

impl Records<'_> {
    fn len(&self) -> usize {
        match self {
            Records::Borrowed(_, r) => r.len(),
            Records::Owned(o) => o.len(),
        }
    }

    /// Call `f(index, bytes)` on each record in order (an owned record is dropped once
    /// `f` returns), stopping at the first error.
    fn each(
        self,
        mut f: impl FnMut(usize, &[u8]) -> Result<(), VerifyError>,
    ) -> Result<(), VerifyError> {
        match self {
            Records::Borrowed(payload, ranges) => {
                for (index, r) in ranges.into_iter().enumerate() {
                    f(index, &payload[r])?;
                }
            }
            Records::Owned(owned) => {
                for (index, bytes) in owned.into_iter().enumerate() {
                    f(index, &bytes)?;
                }
            }
        }
        Ok(())
    }
}

/// Checks 12 and 13, one record at a time: its `seq` is its index and its `prev` links
/// to its predecessor (or the genesis hash of the run); at the end, the head matches.
struct ChainCheck {
    prev: [u8; 32],
    next: usize,
}

impl ChainCheck {
    fn new(run_id: &str) -> ChainCheck {
        ChainCheck {
            prev: genesis(run_id),
            next: 0,
        }
    }

    /// Check the next record (`bytes` encoded, `record` decoded from them).
    fn link(&mut self, bytes: &[u8], record: &Record) -> Result<(), VerifyError> {
        let index = self.next;
        if record.seq != index as u64 {
            return Err(VerifyError::Record {
                index,
                detail: format!("its seq is {}", record.seq),
            });
        }
        if record.prev != self.prev {
            let detail = if index == 0 {
                "its prev is not the genesis hash of this run".to_string()
            } else {
                format!("its prev does not match the hash of record {}", index - 1)
            };
            return Err(VerifyError::Chain { index, detail });
        }
        self.prev = sha256(bytes);
        self.next += 1;
        Ok(())
    }

    fn head(&self, chain_head: &[u8]) -> Result<(), VerifyError> {
        if chain_head != self.prev {
            return Err(VerifyError::ChainHead);
        }
        Ok(())
    }
}

/// The record checks over records already decoded (`decoded[i]` from
/// `evidence.records[i]`): each is one strict CBOR item and decodes, its `seq` is its index, its `prev` links to its
/// predecessor (or the genesis), and the head matches.
fn check_chain(
    evidence: &Evidence,
    decoded: &[Result<Record, RecordDecodeError>],
) -> Result<(), VerifyError> {
    let mut chain = ChainCheck::new(&evidence.run.run_id);
    let mut scratch = FastScratch::default();
    for (index, (bytes, record)) in evidence.records.iter().zip(decoded).enumerate() {
        strict_record(index, bytes, &mut scratch)?;
        let record = record.as_ref().map_err(|e| VerifyError::Record {
            index,
            detail: e.to_string(),
        })?;
        chain.link(bytes, record)?;
    }
    chain.head(&evidence.chain_head)
}

fn decode_records(evidence: &Evidence) -> Vec<Result<Record, RecordDecodeError>> {
    evidence.records.iter().map(|b| decode_record(b)).collect()
}

/// A decoded COSE header: its `(label, value)` pairs in order.
pub(crate) type HeaderMap = Vec<(Value, Value)>;

/// The decoded unprotected header and the signature bytes of a bundle, after the
/// structure checks of [`open`] (nothing is verified: the unprotected header is not
/// signed). For the timestamp entries ([`crate::tsp::stamp_of`]).
pub(crate) fn unprotected_and_signature(bytes: &[u8]) -> Result<(HeaderMap, Vec<u8>), VerifyError> {
    let cose = structure(bytes)?;
    let map = header_map(cose.unprotected)
        .ok_or_else(|| VerifyError::Header("the unprotected header is not a CBOR map".into()))?;
    Ok((map, cose.signature.to_vec()))
}

/// Verify a bundle: structure, header, signature over the stored payload bytes, (when
/// `trust` is not empty) that the signer is one of the pinned keys, then the payload's
/// strict CBOR, format, records and chain. The first failure is returned.
pub fn open(bytes: &[u8], trust: &[PublicKey]) -> Result<Verified, VerifyError> {
    let (payload, signer) = authentic(bytes, trust)?;
    let evidence = decode_evidence(payload)?;
    let decoded = decode_records(&evidence);
    check_chain(&evidence, &decoded)?;
    let records = decoded
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            r.map_err(|e| VerifyError::Record {
                index,
                detail: e.to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Verified {
        evidence,
        records,
        signer,
    })
}

/// Every check before anything in the payload is decoded: the structure, the headers,
/// the signature, the signer among `trust` when it is not empty (a bundle signed by
/// another key never reaches a decoder), and the payload one strict CBOR item
/// ([`strict_payload`]). The payload bytes and the signer.
fn authentic<'a>(
    bytes: &'a [u8],
    trust: &[PublicKey],
) -> Result<(&'a [u8], PublicKey), VerifyError> {
    let cose = structure(bytes)?;
    let signer = header(&cose)?;
    check_signature(&cose, &signer)?;
    if !trust.is_empty() && !trust.iter().any(|k| k == &signer) {
        return Err(VerifyError::Untrusted {
            key_id: signer.key_id(),
        });
    }
    strict_payload(cose.payload)?;
    Ok((cose.payload, signer))
}

/// The (signed) payload is exactly one well-formed CBOR item, nested at most
/// [`MAX_DEPTH`] levels, with no map holding a key twice. The records inside it are byte
/// strings here; each is checked the same way on its own ([`strict_record`]).
fn strict_payload(payload: &[u8]) -> Result<(), VerifyError> {
    strict_item(payload).map_err(|s| {
        VerifyError::Payload(match s {
            Strictness::Malformed => "the payload is not one CBOR item".into(),
            Strictness::TooDeep => {
                format!("the payload is nested more than {MAX_DEPTH} levels deep")
            }
            Strictness::Trailing(n) => format!("{n} bytes follow the payload's CBOR item"),
            Strictness::Duplicate(k) => format!("the payload has a map with the key {k} twice"),
        })
    })
}

/// A (signed) record's bytes are exactly one well-formed CBOR item, nested at most
/// [`MAX_DEPTH`] levels, with no map holding a key twice. `scratch`: as in
/// [`strict_item_with`], shared by the records of a bundle.
fn strict_record(index: usize, bytes: &[u8], scratch: &mut FastScratch) -> Result<(), VerifyError> {
    strict_item_with(bytes, scratch).map_err(|s| VerifyError::Record {
        index,
        detail: match s {
            Strictness::Malformed => RECORD_DOES_NOT_DECODE.into(),
            Strictness::TooDeep => {
                format!("the record is nested more than {MAX_DEPTH} levels deep")
            }
            Strictness::Trailing(n) => format!("{n} bytes follow the record's CBOR item"),
            Strictness::Duplicate(k) => format!("the record has a map with the key {k} twice"),
        },
    })
}

/// A (signed) record checked by [`strict_record`] and decoded by [`decode_record`], with
/// their errors in that order, reading the bytes once when it can.
///
/// When the hand-written decoder ([`crate::record_decode::record`]) reads the record and
/// ends at the last byte, the strict walk is not run: it could find nothing wrong. That
/// decoder accepts only well-formed items (definite heads with additional information
/// below 28, strings within the bytes, `false`, `true`, `null`, `undefined`, no tag, no
/// float), nested as deep as the model's structs (about a dozen levels, under
/// [`MAX_DEPTH`]), and each map it accepts is either a struct's, whose keys are text
/// strings naming distinct fields (a field twice ends its reading), or an enum variant's
/// map of one entry: no map has a key twice. With nothing after the item, that is every
/// condition of [`strict_item`]. Any other bytes take the path of [`open`]: the strict
/// walk, then the decoder (`tests/record_decode.rs` holds the two paths to the same
/// answer).
fn strict_decoded_record(
    index: usize,
    bytes: &[u8],
    scratch: &mut FastScratch,
) -> Result<Record, VerifyError> {
    if let Some((record, end)) = crate::record_decode::record(bytes) {
        if end == bytes.len() {
            return Ok(record);
        }
    }
    strict_record(index, bytes, scratch)?;
    decode_record(bytes).map_err(|e| VerifyError::Record {
        index,
        detail: e.to_string(),
    })
}

/// [`strict_record`] of `bytes` as record 0, alone: for the tests that hold
/// [`strict_decoded_record`]'s shortcut to the strict walk ([`crate::testkit`]).
pub(crate) fn strict_record_alone(bytes: &[u8]) -> Result<(), VerifyError> {
    strict_record(0, bytes, &mut FastScratch::default())
}

/// As [`open`], for a reader that needs only the decoded records (the grader): each
/// record's encoded bytes are dropped as soon as the record is decoded, checked and
/// hashed, so the payload is never held as encoded and decoded records at once (peak
/// memory about twice the bundle instead of three times). The checks, their order and
/// their errors are those of [`open`]; the returned `evidence.records` is empty.
pub fn open_decoded(bytes: &[u8], trust: &[PublicKey]) -> Result<Verified, VerifyError> {
    let (evidence, records, signer) = verify_payload::<Vec<Record>>(bytes, trust)?;
    Ok(Verified {
        evidence,
        records,
        signer,
    })
}

/// A bundle that passed verification ([`verify`]), without its records: what a reader
/// that only checks bundles needs (`mcp-grade verify`, the verify pass of grading).
#[derive(Debug, Clone)]
pub struct Checked {
    /// The payload, its `records` emptied.
    pub evidence: Evidence,
    /// How many records the bundle holds (each decoded, in sequence and chained).
    pub records: usize,
    /// Who signed it.
    pub signer: PublicKey,
}

/// Every check of [`open`], in its order and with its errors, keeping no record: each
/// is decoded, checked against the chain and dropped. The cheapest full verification:
/// nothing of the records outlives its own check.
pub fn verify(bytes: &[u8], trust: &[PublicKey]) -> Result<Checked, VerifyError> {
    let (evidence, records, signer) = verify_payload::<usize>(bytes, trust)?;
    Ok(Checked {
        evidence,
        records,
        signer,
    })
}

/// Every check of [`open`]: structure, header, signature, trust, strict payload, format,
/// each record checked, decoded and linked in turn, chain head. Returns the payload
/// (records emptied), what `R` keeps of the decoded records (all of them, or their count)
/// and the signer.
fn verify_payload<R: KeptRecords>(
    bytes: &[u8],
    trust: &[PublicKey],
) -> Result<(Evidence, R, PublicKey), VerifyError> {
    let (payload, signer) = authentic(bytes, trust)?;
    let (evidence, encoded) = decode_payload(payload)?;
    let mut chain = ChainCheck::new(&evidence.run.run_id);
    let mut records = R::with_capacity(encoded.len());
    let mut scratch = FastScratch::default();
    encoded.each(|index, bytes| {
        let record = strict_decoded_record(index, bytes, &mut scratch)?;
        chain.link(bytes, &record)?;
        records.keep(record);
        Ok(())
    })?;
    chain.head(&evidence.chain_head)?;
    Ok((evidence, records, signer))
}

/// What [`verify_payload`] keeps of the records: all of them, or their count.
trait KeptRecords {
    fn with_capacity(n: usize) -> Self;
    fn keep(&mut self, r: Record);
}

impl KeptRecords for Vec<Record> {
    fn with_capacity(n: usize) -> Self {
        Vec::with_capacity(n)
    }
    fn keep(&mut self, r: Record) {
        self.push(r);
    }
}

impl KeptRecords for usize {
    fn with_capacity(_: usize) -> Self {
        0
    }
    fn keep(&mut self, _: Record) {
        *self += 1;
    }
}

/// Decode a bundle whose bytes are known to have verified, without verifying them again:
/// the payload and every record, the signer read from the header, and no signature,
/// record hash or chain link checked. For a reader that verified these very bytes before
/// (the grader's second pass holds only the SHA-256 of what verified, and reads the file
/// again only if it hashes the same): the bundle is then read, verified and decoded once
/// each. On bytes that never verified it is not a verification; its errors are those of
/// [`open`] for the checks it does make (structure, header, decoding).
pub fn decode_verified(bytes: &[u8]) -> Result<Verified, VerifyError> {
    let cose = structure(bytes)?;
    let signer = header(&cose)?;
    let (evidence, encoded) = decode_payload(cose.payload)?;
    let mut records = Vec::with_capacity(encoded.len());
    encoded.each(|index, bytes| {
        records.push(decode_record(bytes).map_err(|e| VerifyError::Record {
            index,
            detail: e.to_string(),
        })?);
        Ok(())
    })?;
    Ok(Verified {
        evidence,
        records,
        signer,
    })
}

/// The signer a bundle's header names, after the structure and header checks of
/// [`open`] (checks 1 to 6); nothing is verified and nothing in the payload is read. For a
/// reader with `--trust` pins that must not decode anything a key outside them claims.
pub fn claimed_signer(bytes: &[u8]) -> Result<PublicKey, VerifyError> {
    header(&structure(bytes)?)
}

/// Read as much as possible without requiring validity (for `show` on a damaged bundle).
/// `problem` is what [`open`] without pins reports. Fails only when the payload cannot be
/// decoded at all, with the error [`open`] reports (so a damaged bundle whose payload no
/// longer decodes fails as "signature invalid", not as a decoder complaint).
pub fn open_unverified(bytes: &[u8]) -> Result<Unverified, VerifyError> {
    let cose = structure(bytes)?;
    let signer = header(&cose);
    let mut problem = match &signer {
        Ok(k) => check_signature(&cose, k)
            .and_then(|()| strict_payload(cose.payload))
            .err(),
        Err(e) => Some(e.clone()),
    };
    let evidence = match decode_evidence(cose.payload) {
        Ok(e) => e,
        Err(e) => return Err(problem.unwrap_or(e)),
    };
    let records = decode_records(&evidence);
    if problem.is_none() {
        problem = check_chain(&evidence, &records).err();
    }
    Ok(Unverified {
        evidence,
        records,
        signer: signer.ok(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(b: &[u8]) -> Result<usize, Malformed> {
        cbor_skip(b, 0, 0)
    }

    fn not_a_bundle(b: &[u8]) -> String {
        match structure(b) {
            Err(VerifyError::NotABundle(w)) => w,
            Err(e) => panic!("{:?}: {e}", String::from_utf8_lossy(&b[..b.len().min(20)])),
            Ok(_) => panic!("read as a bundle"),
        }
    }

    #[test]
    fn a_file_that_is_not_a_bundle_is_named_by_what_it_looks_like() {
        let pem = b"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n";
        assert_eq!(
            not_a_bundle(pem),
            "a PEM file (PUBLIC KEY) (a public key: give it to --trust)"
        );
        assert_eq!(
            not_a_bundle(b"-----BEGIN CERTIFICATE-----\nMII\n"),
            "a PEM file (CERTIFICATE)"
        );
        assert_eq!(
            not_a_bundle(br#"{"schema":"mcp-grade-report/1","servers":[]}"#),
            r#"a JSON document (schema "mcp-grade-report/1")"#
        );
        assert_eq!(
            not_a_bundle(br#"{"version":"2.1.0","runs":[]}"#),
            "a SARIF report (JSON)"
        );
        assert_eq!(not_a_bundle(b"{\"cut"), "text that starts like JSON");
        assert_eq!(
            not_a_bundle(b"<?xml version=\"1.0\"?><testsuites/>"),
            "an XML or HTML document"
        );
        assert_eq!(not_a_bundle(b"<!DOCTYPE html><html>"), "an HTML document");
        assert_eq!(
            not_a_bundle(b"# mcp-probe\n\nGrades...\n"),
            "a text file (3 line(s))"
        );
        assert_eq!(
            not_a_bundle(&[0x1f, 0x8b, 8, 0]),
            "gzip-compressed data (unpack it first)"
        );
        // Binary data is still read as CBOR and named by that reading.
        assert_eq!(not_a_bundle(&[0xa0]), "CBOR without the COSE_Sign1 tag");
        // A real bundle cut short or with bytes after it keeps its own words.
        let real = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/py1.mcpev"
        ))
        .expect("examples/py1.mcpev");
        assert!(matches!(
            structure(&real[..real.len() / 2]),
            Err(VerifyError::Truncated)
        ));
        let mut longer = real.clone();
        longer.extend_from_slice(b"\n");
        assert!(matches!(
            structure(&longer),
            Err(VerifyError::TrailingData(1))
        ));
    }

    #[test]
    fn cbor_well_formedness_without_allocating() {
        // Definite items end where they end.
        assert_eq!(skip(&[0x00]), Ok(1));
        assert_eq!(skip(&[0x19, 0x01, 0x00, 0xff]), Ok(3));
        assert_eq!(skip(&[0x43, 1, 2, 3]), Ok(4));
        assert_eq!(skip(&[0x82, 0x01, 0x61, b'a']), Ok(4));
        assert_eq!(skip(&[0xa1, 0x01, 0xf6]), Ok(3));
        assert_eq!(skip(&[0xd2, 0x80]), Ok(2));
        assert_eq!(skip(&[0xfb, 0, 0, 0, 0, 0, 0, 0, 0]), Ok(9));
        // Indefinite lengths: strings of chunks of their own type, arrays, maps.
        assert_eq!(skip(&[0x5f, 0x41, 1, 0x40, 0xff]), Ok(5));
        assert_eq!(skip(&[0x5f, 0x61, b'a', 0xff]), Err(Malformed::Invalid(1)));
        assert_eq!(skip(&[0x9f, 0x01, 0x9f, 0xff, 0xff]), Ok(5));
        assert_eq!(skip(&[0xbf, 0x01, 0x02, 0xff]), Ok(4));
        assert_eq!(skip(&[0xbf, 0x01, 0xff]), Err(Malformed::Invalid(2)));
        // Not well-formed: reserved additional information, a stray break, an
        // indefinite integer or tag, a two-byte simple value below 32.
        for b in [
            [0x1c, 0x00],
            [0xff, 0x00],
            [0x1f, 0x00],
            [0xdf, 0x00],
            [0xf8, 0x10],
        ] {
            assert_eq!(skip(&b), Err(Malformed::Invalid(0)), "{b:?}");
        }
        // Short input, including lengths far beyond it.
        assert_eq!(skip(&[]), Err(Malformed::End));
        assert_eq!(skip(&[0x19, 0x01]), Err(Malformed::End));
        assert_eq!(
            skip(&[0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Err(Malformed::End)
        );
        assert_eq!(
            skip(&[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00]),
            Err(Malformed::End)
        );
        assert_eq!(skip(&[0x5f, 0x41]), Err(Malformed::End));
        // Nesting is bounded.
        assert_eq!(skip(&[0x81; 300]), Err(Malformed::TooDeep));
        let mut ok = vec![0x81; MAX_DEPTH];
        ok.push(0x00);
        assert_eq!(skip(&ok), Ok(ok.len()));
    }

    #[test]
    fn strict_items_have_no_key_twice_by_value_and_nothing_after_them() {
        let dup = |b: &[u8]| match strict_item(b) {
            Err(Strictness::Duplicate(k)) => k,
            other => panic!("{b:02x?}: {other:?}"),
        };
        assert_eq!(strict_item(&[0xa2, 0x01, 0x00, 0x02, 0x00]), Ok(()));
        assert_eq!(dup(&[0xa2, 0x01, 0x00, 0x01, 0x00]), "1");
        // The same value whatever the head length: 1 and 0x18 0x01, -1 and 0x38 0x00.
        assert_eq!(dup(&[0xa2, 0x01, 0x00, 0x18, 0x01, 0x00]), "1");
        assert_eq!(dup(&[0xa2, 0x20, 0x00, 0x38, 0x00, 0x00]), "-1");
        // 1 and -2 differ; a text "a" and a byte string 'a' differ.
        assert_eq!(strict_item(&[0xa2, 0x01, 0x00, 0x21, 0x00]), Ok(()));
        assert_eq!(
            strict_item(&[0xa2, 0x61, b'a', 0x00, 0x41, b'a', 0x00]),
            Ok(())
        );
        // Text by content: shortest, one-byte length head, indefinite chunks.
        assert_eq!(
            dup(&[0xa2, 0x62, b'a', b'b', 0x00, 0x78, 0x02, b'a', b'b', 0x00]),
            "\"ab\""
        );
        assert_eq!(
            dup(&[0xa2, 0x62, b'a', b'b', 0x00, 0x7f, 0x61, b'a', 0x61, b'b', 0xff, 0x00]),
            "\"ab\""
        );
        // Indefinite-length maps, and maps inside arrays, maps and keys.
        assert_eq!(dup(&[0xbf, 0x01, 0x00, 0x01, 0x00, 0xff]), "1");
        assert_eq!(dup(&[0x82, 0x00, 0xa2, 0x05, 0x00, 0x05, 0x00]), "5");
        assert_eq!(dup(&[0xa1, 0x00, 0xa2, 0x05, 0x00, 0x05, 0x00]), "5");
        // The same key in two sibling or nested maps is not a duplicate.
        assert_eq!(
            strict_item(&[0xa2, 0x01, 0xa1, 0x01, 0x00, 0x02, 0xa1, 0x01, 0x00]),
            Ok(())
        );
        // Other keys compare by their bytes.
        assert_eq!(
            dup(&[0xa2, 0x80, 0x00, 0x80, 0x00]),
            "(neither an integer nor a string)"
        );
        // A map of many keys (sorted, not compared pairwise) still finds its duplicate.
        let mut wide = vec![0xb9, 0x01, 0x01];
        for i in 0..256u16 {
            wide.extend(cbor_head(0, u64::from(i)));
            wide.push(0xf6);
        }
        wide.extend([0x18, 0xc8, 0xf6]);
        assert_eq!(dup(&wide), "200");
        // Nothing after the item, well-formed, bounded depth.
        assert_eq!(strict_item(&[0x00, 0x00]), Err(Strictness::Trailing(1)));
        assert_eq!(strict_item(&[0xa1, 0x00]), Err(Strictness::Malformed));
        assert_eq!(strict_item(&[0x81; 300]), Err(Strictness::TooDeep));
    }

    fn fast(b: &[u8]) -> Option<usize> {
        strict_fast(b, &mut FastScratch::default())
    }

    #[test]
    fn the_cheap_strict_walk_says_yes_only_where_the_full_walk_does() {
        // Integer and definite string keys, none twice, at any depth: yes.
        assert_eq!(fast(&[0xa2, 0x01, 0x00, 0x02, 0x00]), Some(5));
        assert_eq!(fast(&[0xa2, 0x61, b'a', 0x00, 0x41, b'a', 0x00]), Some(7));
        assert_eq!(fast(&[0xa2, 0x01, 0x00, 0x21, 0x00]), Some(5));
        assert_eq!(
            fast(&[0xa2, 0x01, 0xa1, 0x01, 0x00, 0x02, 0xa1, 0x01, 0x00]),
            Some(9)
        );
        assert_eq!(
            fast(&[0xbf, 0x01, 0x00, 0x02, 0x5f, 0x41, 1, 0xff, 0xff]),
            Some(9)
        );
        // A key twice by value (head length, chunking): no, and the full walk names it.
        for b in [
            &[0xa2, 0x01, 0x00, 0x18, 0x01, 0x00][..],
            &[0xa2, 0x20, 0x00, 0x38, 0x00, 0x00],
            &[0xa2, 0x62, b'a', b'b', 0x00, 0x78, 0x02, b'a', b'b', 0x00],
            &[0x82, 0x00, 0xa2, 0x05, 0x00, 0x05, 0x00],
            &[0xbf, 0x01, 0x00, 0x01, 0x00, 0xff],
        ] {
            assert_eq!(fast(b), None, "{b:02x?}");
            assert!(
                matches!(strict_item(b), Err(Strictness::Duplicate(_))),
                "{b:02x?}"
            );
        }
        // Keys it leaves to the full walk: chunked strings, arrays, heads longer than
        // the shortest form (here not twice).
        for b in [
            &[0xa1, 0x7f, 0x61, b'a', 0xff, 0x00][..],
            &[0xa1, 0x80, 0x00],
            &[0xa1, 0x18, 0x01, 0x00],
            &[0xa1, 0x78, 0x01, b'a', 0x00],
            &[0xa1, 0x59, 0x00, 0x01, b'a', 0x00],
            &[0xa2, 0x01, 0x00, 0x38, 0x01, 0x00],
        ] {
            assert_eq!(fast(b), None, "{b:02x?}");
            assert_eq!(strict_item(b), Ok(()), "{b:02x?}");
        }
        // Wide maps are sorted: a key twice among 257, or none among 256.
        let mut wide = vec![0xb9, 0x01, 0x00];
        for i in 0..256u16 {
            wide.extend(cbor_head(2, 2));
            wide.extend(i.to_be_bytes());
            wide.push(0xf6);
        }
        assert_eq!(fast(&wide), Some(wide.len()));
        wide[2] = 0x01;
        wide.extend([0x42, 0x00, 0xc8, 0xf6]);
        assert_eq!(fast(&wide), None);
        assert_eq!(
            strict_item(&wide),
            Err(Strictness::Duplicate("h'00c8'".into()))
        );
        // Malformed, trailing or too deep: not here.
        assert_eq!(fast(&[0xa1, 0x00]), None);
        assert_eq!(fast(&[0x81; 300]), None);
        let mut deep = vec![0x81; MAX_DEPTH];
        deep.push(0x00);
        assert_eq!(fast(&deep), Some(deep.len()));
        let mut deep_map = vec![0x81; MAX_DEPTH];
        deep_map.extend([0xa1, 0x00, 0x00]);
        assert_eq!(fast(&deep_map), None);
        assert_eq!(strict_item(&deep_map), Err(Strictness::TooDeep));
    }

    #[test]
    fn keys_sharing_a_bucket_are_compared_and_read_again_a_bounded_number_of_times() {
        let text = |k: &str| [&cbor_head(3, k.len() as u64)[..], k.as_bytes()].concat();
        let bucket = |k: &str| {
            let e = text(k);
            fast_bucket(
                e.iter()
                    .take(8)
                    .rev()
                    .fold(0, |a, &x| (a << 8) | u64::from(x)),
            )
        };
        let map = |entries: &[(&str, Vec<u8>)]| {
            let mut v = cbor_head(5, entries.len() as u64);
            for (k, value) in entries {
                v.extend(text(k));
                v.extend(value);
            }
            v
        };
        // Sixteen different keys in one bucket.
        let names: Vec<String> = (0..4000).map(|i| format!("k{i}")).collect();
        let first = names[0].as_str();
        let same: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|k| bucket(k) == bucket(first))
            .take(16)
            .collect();
        assert_eq!(same.len(), 16);
        // Told apart by their bytes: no key twice.
        let two = map(&[(same[0], vec![0xf6]), (same[1], vec![0xf6])]);
        assert_eq!(fast(&two), Some(two.len()));
        // The same key twice, after another in its bucket and one elsewhere.
        let other = names
            .iter()
            .find(|k| bucket(k) != bucket(first))
            .expect("a key");
        let twice = map(&[
            (same[0], vec![0xf6]),
            (other, vec![0x01]),
            (same[1], vec![0xf6]),
            (same[0], vec![0xf6]),
        ]);
        assert_eq!(fast(&twice), None);
        assert_eq!(
            strict_item(&twice),
            Err(Strictness::Duplicate(format!("{:?}", same[0])))
        );
        // Maps nested three deep whose first value is the next map (2000 bytes at the
        // bottom) and whose fifteen other keys all share its key's bucket: each of them
        // reads the entries before it again, more than the walk may; it gives up, and the
        // full walk says yes.
        let mut item = [&cbor_head(2, 2000)[..], &[0u8; 2000]].concat();
        for _ in 0..3 {
            let mut entries = vec![(same[0], item)];
            entries.extend(same[1..].iter().map(|&k| (k, vec![0xf6])));
            item = map(&entries);
        }
        assert_eq!(fast(&item), None);
        assert_eq!(strict_item(&item), Ok(()));
        // Two deep, it reads them all again and says yes.
        let mut entries = vec![(same[0], map(&[(same[0], vec![0xf6])]))];
        entries.extend(same[1..].iter().map(|&k| (k, vec![0xf6])));
        let shallow = map(&entries);
        assert_eq!(fast(&shallow), Some(shallow.len()));
    }

    /// A CBOR item for [`the_cheap_and_the_full_strict_walks_agree`]: maps whose keys come
    /// from a small pool (so some repeat) in every head length and chunking, nested.
    fn cbor_item() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        // An argument in a head of one of the lengths that can carry it.
        fn head(major: u8, n: u64, wide: u8) -> Vec<u8> {
            let m = major << 5;
            match (wide % 5, n) {
                (0, 0..=23) => vec![m | n as u8],
                (0 | 1, 0..=0xff) => vec![m | 24, n as u8],
                (2, 0..=0xffff) => {
                    let mut v = vec![m | 25];
                    v.extend((n as u16).to_be_bytes());
                    v
                }
                (3, 0..=0xffff_ffff) => {
                    let mut v = vec![m | 26];
                    v.extend((n as u32).to_be_bytes());
                    v
                }
                _ => {
                    let mut v = vec![m | 27];
                    v.extend(n.to_be_bytes());
                    v
                }
            }
        }
        let key = prop_oneof![
            (0u8..2, 0u64..4, any::<u8>()).prop_map(|(m, n, w)| head(m, n, w)),
            (
                2u8..4,
                prop::sample::select(vec!["", "a", "ab", "b"]),
                any::<u8>(),
                any::<bool>()
            )
                .prop_map(|(m, t, w, chunked)| {
                    let mut v;
                    if chunked {
                        v = vec![(m << 5) | 31];
                        for c in t.as_bytes().chunks(1) {
                            v.extend(head(m, c.len() as u64, w));
                            v.extend(c);
                        }
                        v.push(0xff);
                    } else {
                        v = head(m, t.len() as u64, w);
                        v.extend(t.as_bytes());
                    }
                    v
                }),
            Just(vec![0x80]),
            Just(vec![0xf5]),
        ];
        let leaf = prop_oneof![
            (0u64..300, any::<u8>()).prop_map(|(n, w)| head(0, n, w)),
            Just(vec![0xf6]),
            Just(vec![0x61, b'x']),
        ];
        leaf.prop_recursive(4, 40, 6, move |inner| {
            prop_oneof![
                (
                    prop::collection::vec(inner.clone(), 0..5),
                    any::<u8>(),
                    any::<bool>()
                )
                    .prop_map(|(items, w, indef)| {
                        let mut v = if indef {
                            vec![0x9f]
                        } else {
                            head(4, items.len() as u64, w)
                        };
                        items.iter().for_each(|i| v.extend(i));
                        if indef {
                            v.push(0xff);
                        }
                        v
                    }),
                (
                    prop::collection::vec((key.clone(), inner.clone()), 0..20),
                    any::<u8>(),
                    any::<bool>()
                )
                    .prop_map(|(entries, w, indef)| {
                        let mut v = if indef {
                            vec![0xbf]
                        } else {
                            head(5, entries.len() as u64, w)
                        };
                        for (k, x) in &entries {
                            v.extend(k);
                            v.extend(x);
                        }
                        if indef {
                            v.push(0xff);
                        }
                        v
                    }),
                inner.prop_map(|i| {
                    let mut v = vec![0xc1];
                    v.extend(i);
                    v
                }),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// Where the cheap walk says yes, the full walk does; on items every map of which
        /// has integer and definite string keys, they say the same.
        #[test]
        fn the_cheap_and_the_full_strict_walks_agree(
            item in cbor_item(),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            flip in proptest::prelude::any::<(proptest::sample::Index, u8)>(),
        ) {
            let full = strict_item_full(&item);
            let f = fast(&item);
            if f == Some(item.len()) {
                proptest::prop_assert_eq!(&full, &Ok(()));
            }
            if full.is_ok() && f.is_none() {
                // Only keys it leaves to the full walk make the cheap walk say no.
                proptest::prop_assert!(has_other_keys(&item), "{:02x?}", item);
            }
            // Damaged copies: yes from the cheap walk is yes from the full one.
            let mut short = item.clone();
            short.truncate(cut.index(item.len() + 1));
            let mut flipped = item.clone();
            if !flipped.is_empty() {
                let i = flip.0.index(flipped.len());
                flipped[i] ^= flip.1;
            }
            for b in [short, flipped] {
                if let Some(end) = fast(&b) {
                    proptest::prop_assert_eq!(cbor_walk(&b, 0, 0, Some(&mut Vec::new())), Ok(end));
                }
            }
        }
    }

    /// Whether some map in a well-formed `b` has a key that is neither an integer nor a
    /// definite-length string, or one whose head is longer than the shortest form.
    fn has_other_keys(b: &[u8]) -> bool {
        fn walk(b: &[u8], pos: usize, other: &mut bool) -> usize {
            let (major, ai, arg, mut p) = read_head(b, pos).expect("well-formed");
            match (major, ai) {
                (2..=5, 31) | (4 | 5, _) => {
                    let n = if major == 5 { 2 } else { 1 };
                    let mut left = arg * n;
                    let mut i = 0u64;
                    loop {
                        if ai == 31 {
                            if b[p] == 0xff {
                                return p + 1;
                            }
                        } else if left == 0 {
                            return p;
                        } else {
                            left -= 1;
                        }
                        if major == 5 && i % 2 == 0 {
                            let (km, kai, karg, _) = read_head(b, p).expect("well-formed");
                            let longer =
                                (24..=27).contains(&kai) && karg < SHORTEST[usize::from(kai - 24)];
                            if km > 3 || kai == 31 || longer {
                                *other = true;
                            }
                        }
                        i += 1;
                        p = walk(b, p, other);
                    }
                }
                (2 | 3, _) => p + arg as usize,
                (6, _) => walk(b, p, other),
                _ => p,
            }
        }
        let mut other = false;
        walk(b, 0, &mut other);
        other
    }

    #[test]
    fn the_records_split_from_the_payload_are_the_decoders_records() {
        for name in ["py1", "py2-paged", "tls-modern"] {
            let real = std::fs::read(format!(
                "{}/../examples/{name}.mcpev",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("example");
            let cose = structure(&real).expect("a bundle");
            let whole = decode_evidence(cose.payload).expect("decodes");
            let split = split_records(cose.payload).expect("the plain shape splits");
            let rest = decode_evidence(&split.rest).expect("the rest decodes");
            assert!(rest.records.is_empty());
            assert_eq!(rest.chain_head, whole.chain_head);
            assert_eq!(rest.run.run_id, whole.run.run_id);
            let borrowed: Vec<&[u8]> = split
                .records
                .iter()
                .map(|r| &cose.payload[r.clone()])
                .collect();
            let owned: Vec<&[u8]> = whole.records.iter().map(|b| b.as_slice()).collect();
            assert_eq!(borrowed, owned, "{name}");
            // The same bundle opened every way gives the same records.
            let opened = open(&real, &[]).expect("verifies");
            let decoded = decode_verified(&real).expect("decodes");
            assert_eq!(opened.records.len(), decoded.records.len());
            assert_eq!(
                verify(&real, &[]).expect("verifies").records,
                opened.records.len()
            );
        }
        // Shapes the split leaves to the whole decoder: not a map, an indefinite map, a
        // records array of indefinite length or holding another item, two records keys,
        // bytes after the map.
        let key = |k: &str| [&cbor_head(3, k.len() as u64)[..], k.as_bytes()].concat();
        let map1 = |v: &[u8]| [&[0xa1][..], &key("records"), v].concat();
        assert!(split_records(&map1(&[0x80])).is_some());
        assert!(split_records(&[0x80]).is_none());
        assert!(split_records(&[&[0xbf][..], &key("records"), &[0x80, 0xff]].concat()).is_none());
        assert!(split_records(&map1(&[0x9f, 0x41, 0, 0xff])).is_none());
        assert!(split_records(&map1(&[0x81, 0x61, b'a'])).is_none());
        assert!(split_records(&map1(&[0x81, 0x5f, 0x41, 0, 0xff])).is_none());
        let twice = [
            &[0xa2][..],
            &key("records"),
            &[0x80],
            &key("records"),
            &[0x80],
        ]
        .concat();
        assert!(split_records(&twice).is_none());
        assert!(split_records(&[&map1(&[0x80])[..], &[0x00]].concat()).is_none());
    }

    #[test]
    fn sig_structure_byte_string_heads_are_shortest_form() {
        for (len, head) in [
            (0, vec![0x40]),
            (23, vec![0x57]),
            (24, vec![0x58, 24]),
            (255, vec![0x58, 0xff]),
            (256, vec![0x59, 0x01, 0x00]),
            (65_536, vec![0x5a, 0x00, 0x01, 0x00, 0x00]),
        ] {
            assert_eq!(cbor_head(2, len), head, "{len}");
        }
    }

    /// What strict verification asked of `R` before [`small_order_encoding`]: it decodes
    /// and is of small order.
    fn decompressed_weak(r: &[u8; 32]) -> bool {
        VerifyingKey::from_bytes(r).is_ok_and(|k| k.is_weak())
    }

    /// `y + p` when it is below 2^255 (a second, unreduced encoding of `y`), else `None`.
    fn plus_p(y: &[u8; 32]) -> Option<[u8; 32]> {
        let mut p = [0xff_u8; 32];
        p[0] = 0xed;
        p[31] = 0x7f;
        let mut out = [0_u8; 32];
        let mut carry = 0_u16;
        for i in 0..32 {
            let t = u16::from(y[i]) + u16::from(p[i]) + carry;
            out[i] = t as u8;
            carry = t >> 8;
        }
        (carry == 0 && out[31] & 0x80 == 0).then_some(out)
    }

    #[test]
    fn the_small_order_encodings_are_those_of_the_eight_torsion() {
        // Derived from the curve, not from the table: the y of each of the eight points
        // (sign bit cleared) and its unreduced form where one fits in 255 bits.
        let mut derived: Vec<[u8; 32]> = Vec::new();
        for point in curve25519_dalek::constants::EIGHT_TORSION {
            assert!(point.is_small_order());
            let mut y = point.compress().to_bytes();
            y[31] &= 0x7f;
            derived.push(y);
            derived.extend(plus_p(&y));
        }
        derived.sort();
        derived.dedup();
        let mut table = SMALL_ORDER_Y.to_vec();
        table.sort();
        assert_eq!(derived, table);
        // Each, with either sign bit, decodes to a small-order point, and is refused.
        for y in SMALL_ORDER_Y {
            for sign in [0, 0x80] {
                let mut r = y;
                r[31] |= sign;
                assert!(decompressed_weak(&r), "{r:02x?}");
                assert!(small_order_encoding(&r), "{r:02x?}");
            }
        }
    }

    #[test]
    fn small_order_encoding_agrees_with_the_decompression_near_the_table() {
        // Every encoding one bit away from a table entry, every small y and every y
        // from p-256 to 2^255-1, with both sign bits.
        let mut cases: Vec<[u8; 32]> = Vec::new();
        for y in SMALL_ORDER_Y {
            for bit in 0..256 {
                let mut r = y;
                r[bit / 8] ^= 1 << (bit % 8);
                cases.push(r);
            }
        }
        for low in 0..=255_u8 {
            let mut r = [0_u8; 32];
            r[0] = low;
            cases.push(r);
            let mut top = [0xff_u8; 32];
            top[0] = low;
            top[31] = 0x7f;
            cases.push(top);
            top[1] = 0xfe;
            cases.push(top);
        }
        for base in cases {
            for sign in [0, 0x80] {
                let mut r = base;
                r[31] = (r[31] & 0x7f) | sign;
                assert_eq!(small_order_encoding(&r), decompressed_weak(&r), "{r:02x?}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// On arbitrary bytes, and on small-order points' encodings and their
        /// multiples' neighbours, the table answers what the decompression answered.
        #[test]
        fn small_order_encoding_agrees_with_the_decompression(
            r in proptest::prelude::any::<[u8; 32]>(),
            torsion in 0_usize..8,
            sign in proptest::prelude::any::<bool>(),
        ) {
            proptest::prop_assert_eq!(small_order_encoding(&r), decompressed_weak(&r));
            let mut t = curve25519_dalek::constants::EIGHT_TORSION[torsion].compress().to_bytes();
            if sign {
                t[31] ^= 0x80;
            }
            proptest::prop_assert!(small_order_encoding(&t));
            proptest::prop_assert_eq!(small_order_encoding(&t), decompressed_weak(&t));
            // A point of large order: a key's point plus a torsion point.
            if let Ok(k) = VerifyingKey::from_bytes(&r) {
                let sum = (k.to_edwards() + curve25519_dalek::constants::EIGHT_TORSION[torsion])
                    .compress()
                    .to_bytes();
                proptest::prop_assert_eq!(small_order_encoding(&sum), decompressed_weak(&sum));
            }
        }
    }

    /// ed25519-dalek's streamed verification, the oracle of [`ed25519_holds`]: what
    /// [`check_signature`] asked before it computed the challenge itself.
    fn dalek_holds(key: &VerifyingKey, sig: &[u8; 64], pieces: &[&[u8]]) -> bool {
        let Ok(mut v) = key.verify_stream(&Signature::from_bytes(sig)) else {
            return false;
        };
        for piece in pieces {
            v.update(piece);
        }
        v.finalize_and_verify().is_ok()
    }

    fn holds_both_ways(key: &VerifyingKey, sig: &[u8; 64], pieces: [&[u8]; 2]) -> bool {
        let (r, s) = sig.split_at(32);
        let ours = ed25519_holds(key, r.try_into().unwrap(), s.try_into().unwrap(), pieces);
        assert_eq!(ours, dalek_holds(key, sig, &pieces), "{sig:02x?}");
        ours
    }

    /// The group order ℓ, little-endian: `s + ℓ` is the same scalar, not canonical.
    const ELL: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];

    fn add_le(a: &[u8], b: &[u8; 32]) -> [u8; 32] {
        let mut out = [0; 32];
        let mut carry = 0_u16;
        for i in 0..32 {
            let t = u16::from(a[i]) + u16::from(b[i]) + carry;
            out[i] = t as u8;
            carry = t >> 8;
        }
        out
    }

    #[test]
    fn ell_is_the_group_order() {
        assert_eq!(
            curve25519_dalek::Scalar::from_bytes_mod_order(ELL),
            curve25519_dalek::Scalar::ZERO
        );
        assert!(bool::from(
            curve25519_dalek::Scalar::from_canonical_bytes(ELL).is_none()
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The verification with sha2 0.11 answers what ed25519-dalek's streamed
        /// verification answers: a valid signature holds wherever the message is cut,
        /// and none of these does: another message, a bit of the signature flipped, `s`
        /// past the group order (the same scalar, not canonical), another key, random
        /// bytes as a signature.
        #[test]
        fn ed25519_holds_as_ed25519_dalek_verifies(
            seed in proptest::prelude::any::<[u8; 32]>(),
            other_seed in proptest::prelude::any::<[u8; 32]>(),
            message in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            flip in 0_usize..512,
            noise in proptest::prelude::any::<[u8; 32]>(),
            key_bytes in proptest::prelude::any::<[u8; 32]>(),
        ) {
            let signing = SigningKey::from_bytes(&seed);
            let key = signing.verifying_key();
            let sig = signing.sign(&message).to_bytes();
            let at = cut.index(message.len() + 1);
            let pieces = [&message[..at], &message[at..]];
            proptest::prop_assert!(holds_both_ways(&key, &sig, pieces));

            let mut other = message.clone();
            other.push(0);
            proptest::prop_assert!(!holds_both_ways(&key, &sig, [&other, &[]]));

            let mut flipped = sig;
            flipped[flip / 8] ^= 1 << (flip % 8);
            proptest::prop_assert!(!holds_both_ways(&key, &flipped, pieces));

            let mut wide = sig;
            wide[32..].copy_from_slice(&add_le(&sig[32..], &ELL));
            if wide[63] & 0xe0 == 0 {
                proptest::prop_assert!(!holds_both_ways(&key, &wide, pieces));
            }

            let other_key = SigningKey::from_bytes(&other_seed).verifying_key();
            holds_both_ways(&other_key, &sig, pieces);

            let mut random = [0; 64];
            random[..32].copy_from_slice(&noise);
            random[32..].copy_from_slice(&seed);
            holds_both_ways(&key, &random, pieces);
            // Any key that decodes, small order or not (the refusal of a weak key is
            // the header's, not this equation's).
            if let Ok(k) = VerifyingKey::from_bytes(&key_bytes) {
                holds_both_ways(&k, &sig, pieces);
                holds_both_ways(&k, &random, pieces);
            }
        }
    }

    /// RFC 8032, section 7.1, test 2: a one-byte message, here also cut before and
    /// after its byte.
    #[test]
    fn ed25519_holds_on_the_rfc_8032_vector() {
        let key = VerifyingKey::from_bytes(
            &hex::decode("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
                .unwrap()
                .try_into()
                .unwrap(),
        )
        .unwrap();
        let sig: [u8; 64] = hex::decode(
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da\
             085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
        )
        .unwrap()
        .try_into()
        .unwrap();
        assert!(holds_both_ways(&key, &sig, [&[0x72], &[]]));
        assert!(holds_both_ways(&key, &sig, [&[], &[0x72]]));
        assert!(!holds_both_ways(&key, &sig, [&[0x73], &[]]));
    }
}
