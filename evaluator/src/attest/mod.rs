//! Signed grading statements: `mcp-grade --attest FILE` binds a report to the bundles it
//! was graded from, and `mcp-grade verify-statement` checks that binding
//! (docs/report.md, "Signed grading statements").
//!
//! The statement is an in-toto Statement v1 ([`STATEMENT_TYPE`]) whose subjects are
//! every graded bundle and the report written (each by SHA-256 of its bytes), with the
//! predicate [`Predicate`] ([`PREDICATE_TYPE`]: the definition, the inputs that shaped
//! the verdicts, the totals, the grader's build). It is signed in a DSSE envelope
//! ([`Envelope`], payload type [`PAYLOAD_TYPE`]) with Ed25519 over the DSSE
//! pre-authentication encoding ([`pae`]), by the grader's key ([`key`]), whose key id is
//! the hex SHA-256 of its raw 32 public-key bytes ([`keyid`]).
//!
//! Nothing here reads the network; verification takes untrusted bytes and must not
//! panic on any of them.

pub mod key;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use mcp_probe_schema::{PublicKey, SecretKey};

use crate::report::provenance::{BenchmarkRef, Tool};
use crate::report::{Format, Report};
use crate::verdict::Verdict;

/// The in-toto Statement type this grader writes and accepts.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// The predicate type of a grading statement: [`Predicate`], version 1
/// (docs/schemas/grading-predicate.schema.json). A later incompatible predicate gets
/// another URI.
pub const PREDICATE_TYPE: &str = "https://mcp-probe.dev/grading/v1";

/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// The name a report written to standard output has among the subjects.
pub const STDOUT_NAME: &str = "-";

/// DSSE's pre-authentication encoding, what the signature covers:
/// `"DSSEv1" SP len(type) SP type SP len(body) SP body`, lengths in ASCII decimal bytes.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut v = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v
}

/// The key id of a grader key: hex SHA-256 of its raw 32 public-key bytes (64 digits;
/// not the 16-byte key id of a bundle's signer).
pub fn keyid(key: &PublicKey) -> String {
    hex::encode(mcp_probe_schema::bundle::sha256(&key.to_bytes()))
}

/// A DSSE envelope (JSON): the payload in base64 and its signatures.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Envelope {
    /// How to read the payload: [`PAYLOAD_TYPE`].
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// The statement's JSON bytes, base64 (standard alphabet, padded).
    pub payload: String,
    /// The signatures over [`pae`] of the type and the payload bytes.
    pub signatures: Vec<EnvelopeSignature>,
}

/// One signature of an [`Envelope`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EnvelopeSignature {
    /// [`keyid`] of the signing key (a hint: verification tries every trusted key).
    #[serde(default)]
    pub keyid: String,
    /// The Ed25519 signature, base64.
    pub sig: String,
}

/// An in-toto Statement v1 with predicate `P`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Statement<P> {
    /// [`STATEMENT_TYPE`].
    #[serde(rename = "_type")]
    pub type_: String,
    /// What the statement is about, each by name and SHA-256.
    pub subject: Vec<Subject>,
    /// [`PREDICATE_TYPE`].
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    /// What is stated of the subjects.
    pub predicate: P,
}

/// One subject: a graded bundle or the report.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Subject {
    /// The file as given on the command line (`-` for a report written to stdout).
    pub name: String,
    /// Its digests: `sha256`, hex.
    pub digest: BTreeMap<String, String>,
}

impl Subject {
    fn new(name: String, sha256: &[u8; 32]) -> Subject {
        Subject {
            name,
            digest: BTreeMap::from([("sha256".to_string(), hex::encode(sha256))]),
        }
    }
}

/// The grading predicate ([`PREDICATE_TYPE`]): how the report's verdicts were reached.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Predicate {
    /// The definition graded under: id, name, version, SHA-256, the tailoring file
    /// (id, file, SHA-256) and what it deselected.
    pub benchmark: BenchmarkRef,
    /// `--level`, if given.
    pub level: Option<u8>,
    /// The `--policy` file, if given.
    pub policy: Option<FileDigest>,
    /// The `--waivers` file, if given.
    pub waivers: Option<FileDigest>,
    /// `--fail-on`: fail, error or unknown.
    pub fail_on: String,
    /// How many bundles were graded (one server each).
    pub servers: usize,
    /// Results per verdict over every check and server (PASS, FAIL, NO-REV, UNKNOWN,
    /// N/A, ERROR), waived ones included.
    pub totals: BTreeMap<String, usize>,
    /// How many results a waiver in force covered.
    pub waived: usize,
    /// The exit code the verdicts call for (0, 1, 4 or 5; docs/report.md).
    pub exit_code: u8,
    /// The grader: name, version, commit, target and compiler (as every report states).
    pub grader: Tool,
    /// The report bound by this statement.
    pub report: ReportRef,
}

/// A file an input of grading came from.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct FileDigest {
    /// The file as given.
    pub file: String,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
}

/// The report among the subjects.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct ReportRef {
    /// Its subject's name (`-`: written to standard output).
    pub name: String,
    /// `--format`: text, json, sarif, junit, markdown or html.
    pub format: String,
}

/// The JSON Schema of [`Predicate`] (docs/schemas/grading-predicate.schema.json).
pub fn predicate_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Predicate)).unwrap_or_default()
}

/// `--format` as typed.
pub fn format_name(f: Format) -> &'static str {
    match f {
        Format::Text => "text",
        Format::Json => "json",
        Format::Sarif => "sarif",
        Format::Junit => "junit",
        Format::Markdown => "markdown",
        Format::Html => "html",
        Format::Oscal => "oscal",
        Format::Xccdf => "xccdf",
    }
}

/// The predicate of `report` (after waivers), written as `report_name` in `format`.
pub fn predicate(report: &Report, format: Format, report_name: &str) -> Predicate {
    Predicate {
        benchmark: report.provenance.benchmark.clone(),
        level: report.level,
        policy: report.policy.as_ref().map(|p| FileDigest {
            file: p.file.clone(),
            sha256: p.sha256.clone(),
        }),
        waivers: report.waivers.as_ref().map(|w| FileDigest {
            file: w.file.clone(),
            sha256: w.sha256.clone(),
        }),
        fail_on: report.fail_on.as_str().to_string(),
        servers: report.servers.len(),
        totals: Verdict::ORDER
            .iter()
            .map(|v| (v.mark().to_string(), report.total(*v)))
            .collect(),
        waived: report.waivers.as_ref().map_or(0, |w| w.waived),
        exit_code: report.status().code(),
        grader: report.provenance.grader.clone(),
        report: ReportRef {
            name: report_name.to_string(),
            format: format_name(format).to_string(),
        },
    }
}

/// The statement of a run: every graded bundle (`bundles`: name and SHA-256, in argument
/// order), then the report.
pub fn statement(
    bundles: &[(String, [u8; 32])],
    report: &[u8; 32],
    predicate: Predicate,
) -> Statement<Predicate> {
    let mut subject: Vec<Subject> = bundles
        .iter()
        .map(|(name, d)| Subject::new(name.clone(), d))
        .collect();
    subject.push(Subject::new(predicate.report.name.clone(), report));
    Statement {
        type_: STATEMENT_TYPE.into(),
        subject,
        predicate_type: PREDICATE_TYPE.into(),
        predicate,
    }
}

/// Sign `statement` with `key`: the DSSE envelope, as the pretty JSON written to the
/// `--attest` file (a final newline included).
pub fn sign<P: serde::Serialize>(statement: &Statement<P>, key: &SecretKey) -> Vec<u8> {
    // Serializing plain data to memory does not fail.
    let payload = serde_json::to_vec(statement).unwrap_or_default();
    let sig = key.sign(&pae(PAYLOAD_TYPE, &payload));
    let b64 = base64::engine::general_purpose::STANDARD;
    let env = Envelope {
        payload_type: PAYLOAD_TYPE.into(),
        payload: b64.encode(&payload),
        signatures: vec![EnvelopeSignature {
            keyid: keyid(&key.public()),
            sig: b64.encode(sig),
        }],
    };
    let mut out = serde_json::to_vec_pretty(&env).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Why a statement does not verify (each one line; exit 3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatementError {
    /// The file is not a DSSE envelope in JSON.
    #[error("not a DSSE envelope: malformed JSON ({0})")]
    Json(String),
    /// The payload is not base64.
    #[error("the envelope's payload is not base64")]
    PayloadBase64,
    /// The payload type is not an in-toto statement's.
    #[error("the envelope's payloadType is {0:?}, not {PAYLOAD_TYPE:?}")]
    PayloadType(String),
    /// No signature at all.
    #[error("the envelope has no signature")]
    NoSignature,
    /// A trusted key's signature is there but does not verify over the PAE of the
    /// payload: payload, type or signature altered.
    #[error(
        "the signature by trusted key {keyid} does not verify: the payload, its type or the \
         signature was altered"
    )]
    BadSignature {
        /// The trusted key's id.
        keyid: String,
    },
    /// No signature is by a trusted key.
    #[error("signed by key {signed}, which is not a --trust key (trusted: {trusted})")]
    Untrusted {
        /// The key ids the signatures name.
        signed: String,
        /// The key ids of the `--trust` keys.
        trusted: String,
    },
    /// The verified payload is not an in-toto statement.
    #[error("the signed payload is not an in-toto Statement: malformed JSON ({0})")]
    StatementJson(String),
    /// The statement's `_type` is not [`STATEMENT_TYPE`].
    #[error("the statement's _type is {0:?}, not {STATEMENT_TYPE:?}")]
    StatementType(String),
    /// The predicate type is not this grader's.
    #[error("the statement's predicateType is {0:?}, not {PREDICATE_TYPE:?}")]
    PredicateType(String),
}

/// What a verified statement says: its subjects and predicate (as JSON: read, not
/// interpreted), and the trusted key that signed it.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The statement.
    pub statement: Statement<serde_json::Value>,
    /// [`keyid`] of the trusted key whose signature verified.
    pub keyid: String,
    /// Its index among the trusted keys.
    pub trusted: usize,
}

impl Verified {
    /// The subject with SHA-256 `digest`, if any.
    pub fn subject(&self, digest: &[u8; 32]) -> Option<&Subject> {
        let want = hex::encode(digest);
        self.statement.subject.iter().find(|s| {
            s.digest
                .get("sha256")
                .is_some_and(|d| d.eq_ignore_ascii_case(&want))
        })
    }
}

fn b64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    STANDARD.decode(s).or_else(|_| URL_SAFE.decode(s)).ok()
}

/// Verify the DSSE envelope `bytes` against the `trusted` grader keys: a signature by one
/// of them over the PAE of its payload type and payload, the payload type, then the
/// statement's `_type` and `predicateType`. Every check is on the bytes as stored; the
/// statement is parsed only once its signature verified.
pub fn verify(bytes: &[u8], trusted: &[PublicKey]) -> Result<Verified, StatementError> {
    let env: Envelope =
        serde_json::from_slice(bytes).map_err(|e| StatementError::Json(e.to_string()))?;
    let payload = b64_decode(&env.payload).ok_or(StatementError::PayloadBase64)?;
    if env.signatures.is_empty() {
        return Err(StatementError::NoSignature);
    }
    let message = pae(&env.payload_type, &payload);
    let ids: Vec<String> = trusted.iter().map(keyid).collect();
    let mut named_trusted = None;
    // The key id is a hint: each signature is tried with every trusted key.
    let found = env.signatures.iter().find_map(|s| {
        if named_trusted.is_none() {
            named_trusted = ids.iter().position(|id| id.eq_ignore_ascii_case(&s.keyid));
        }
        let sig = b64_decode(&s.sig)?;
        trusted.iter().position(|k| k.verifies(&message, &sig))
    });
    let Some(n) = found else {
        return Err(match named_trusted {
            Some(n) => StatementError::BadSignature {
                keyid: ids[n].clone(),
            },
            None => StatementError::Untrusted {
                signed: env
                    .signatures
                    .iter()
                    .map(|s| crate::fmt::escape_line(&s.keyid))
                    .collect::<Vec<_>>()
                    .join(", "),
                trusted: ids.join(", "),
            },
        });
    };
    if env.payload_type != PAYLOAD_TYPE {
        return Err(StatementError::PayloadType(crate::fmt::escape_line(
            &env.payload_type,
        )));
    }
    let statement: Statement<serde_json::Value> = serde_json::from_slice(&payload)
        .map_err(|e| StatementError::StatementJson(e.to_string()))?;
    if statement.type_ != STATEMENT_TYPE {
        return Err(StatementError::StatementType(crate::fmt::escape_line(
            &statement.type_,
        )));
    }
    if statement.predicate_type != PREDICATE_TYPE {
        return Err(StatementError::PredicateType(crate::fmt::escape_line(
            &statement.predicate_type,
        )));
    }
    Ok(Verified {
        statement,
        keyid: ids[n].clone(),
        trusted: n,
    })
}

/// A writer that passes bytes on and hashes exactly what was passed on (SHA-256): the
/// digest of a report is of the bytes written, to a file or to stdout.
pub struct HashingWriter<'a> {
    inner: &'a mut dyn std::io::Write,
    hash: ring::digest::Context,
}

impl<'a> HashingWriter<'a> {
    /// Hash what goes to `inner`.
    pub fn new(inner: &'a mut dyn std::io::Write) -> HashingWriter<'a> {
        HashingWriter {
            inner,
            hash: ring::digest::Context::new(&ring::digest::SHA256),
        }
    }

    /// SHA-256 of every byte written.
    pub fn finish(self) -> [u8; 32] {
        let mut d = [0u8; 32];
        d.copy_from_slice(self.hash.finish().as_ref());
        d
    }
}

impl std::io::Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What `--attest` needs through a grading run: where the statement goes and the key.
#[derive(Debug)]
pub struct Attest {
    /// The `--attest` file.
    pub path: PathBuf,
    /// The grader key.
    pub key: SecretKey,
}

/// Write the signed statement to `path`, atomically.
pub fn write(path: &Path, envelope: &[u8]) -> std::io::Result<()> {
    mcp_probe_schema::fsutil::write_atomic(path, envelope, false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn key(n: u8) -> SecretKey {
        SecretKey::from_seed([n; 32])
    }

    fn envelope() -> Vec<u8> {
        let p = serde_json::json!({"x": 1});
        let s = Statement {
            type_: STATEMENT_TYPE.into(),
            subject: vec![Subject::new("a".into(), &[7; 32])],
            predicate_type: PREDICATE_TYPE.into(),
            predicate: p,
        };
        sign(&s, &key(1))
    }

    fn edit(bytes: &[u8], f: impl FnOnce(&mut Envelope)) -> Vec<u8> {
        let mut e: Envelope = serde_json::from_slice(bytes).unwrap();
        f(&mut e);
        serde_json::to_vec(&e).unwrap()
    }

    #[test]
    fn pae_is_the_dsse_encoding() {
        // The DSSE protocol's own example.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        assert_eq!(pae("", b""), b"DSSEv1 0  0 ");
    }

    #[test]
    fn keyid_is_the_sha256_of_the_raw_key() {
        let k = key(1).public();
        assert_eq!(keyid(&k).len(), 64);
        assert!(keyid(&k).starts_with(&k.key_id()));
    }

    #[test]
    fn signed_statements_verify_and_find_their_subjects() {
        let v = verify(&envelope(), &[key(2).public(), key(1).public()]).unwrap();
        assert_eq!(v.trusted, 1);
        assert_eq!(v.keyid, keyid(&key(1).public()));
        assert_eq!(v.subject(&[7; 32]).unwrap().name, "a");
        assert!(v.subject(&[8; 32]).is_none());
    }

    #[test]
    fn tampering_is_refused() {
        let good = envelope();
        let trusted = [key(1).public()];
        let b64 = base64::engine::general_purpose::STANDARD;
        // A payload byte flipped.
        let flipped = edit(&good, |e| {
            let mut p = b64.decode(&e.payload).unwrap();
            p[3] ^= 1;
            e.payload = b64.encode(p);
        });
        assert!(matches!(
            verify(&flipped, &trusted),
            Err(StatementError::BadSignature { .. })
        ));
        // A signature byte flipped.
        let flipped = edit(&good, |e| {
            let mut s = b64.decode(&e.signatures[0].sig).unwrap();
            s[10] ^= 0x80;
            e.signatures[0].sig = b64.encode(s);
        });
        assert!(matches!(
            verify(&flipped, &trusted),
            Err(StatementError::BadSignature { .. })
        ));
        // The payload type changed: the PAE no longer matches.
        let retyped = edit(&good, |e| e.payload_type = "application/json".into());
        assert!(matches!(
            verify(&retyped, &trusted),
            Err(StatementError::BadSignature { .. })
        ));
        // Another key.
        let e = verify(&good, &[key(3).public()]).unwrap_err();
        assert!(matches!(e, StatementError::Untrusted { .. }), "{e}");
        // Not JSON, no signature.
        assert!(matches!(
            verify(b"{", &trusted),
            Err(StatementError::Json(_))
        ));
        let unsigned = edit(&good, |e| e.signatures.clear());
        assert_eq!(
            verify(&unsigned, &trusted).unwrap_err(),
            StatementError::NoSignature
        );
    }

    #[test]
    fn a_signed_payload_of_another_type_is_refused_after_the_signature() {
        let k = key(1);
        let s = Statement {
            type_: "https://in-toto.io/Statement/v0.1".into(),
            subject: vec![],
            predicate_type: PREDICATE_TYPE.into(),
            predicate: serde_json::Value::Null,
        };
        let e = verify(&sign(&s, &k), &[k.public()]).unwrap_err();
        assert!(matches!(e, StatementError::StatementType(_)), "{e}");
    }

    #[test]
    fn the_hashing_writer_hashes_what_it_wrote() {
        let mut v = Vec::new();
        let mut w = HashingWriter::new(&mut v);
        std::io::Write::write_all(&mut w, b"abc").unwrap();
        let d = w.finish();
        assert_eq!(d, mcp_probe_schema::bundle::sha256(b"abc"));
        assert_eq!(v, b"abc");
    }
}
