//! Sealing a bundle of any size without holding it in memory.
//!
//! [`seal_to`] writes exactly the bytes [`crate::bundle::seal`] returns for the same
//! evidence and key, piece by piece: the records come from a [`RecordSource`] (the
//! collector's journal file), which is read once to size and chain them, twice to sign
//! (Ed25519 hashes the message twice) and once to write; a writer that chained the
//! records as it wrote them gives what it knows ([`Chained`], [`sign_chained`]) in place
//! of the first read. Peak memory is the largest
//! record plus the payload head (run, target, session, tokens), whatever the bundle size.
//!
//! The layout (RFC 9052 §4.2/§4.4): tag 18, `[protected bstr, unprotected map, payload
//! bstr, signature bstr]`; the signature is over `["Signature1", protected, h'', payload]`.

use std::cell::RefCell;
use std::io::{self, Write};

use coset::cbor::value::Value;
use coset::{AsCborValue, CborSerializable};
use ed25519_dalek::hazmat::{raw_sign_byupdate, ExpandedSecretKey};
use ed25519_dalek::SignatureError;
use sha2::{Digest, Sha256, Sha512};

use crate::bundle::{cose_headers, genesis, sig_structure_head, SecretKey};
use crate::model::Evidence;

/// CBOR tag of COSE_Sign1.
const COSE_SIGN1_TAG: u64 = 18;

/// The encoded records of a bundle, in chain order, readable more than once.
pub trait RecordSource {
    /// Call `f` with each encoded record in order. Every call must yield the same bytes.
    fn each(&self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()>;
}

impl RecordSource for [serde_bytes::ByteBuf] {
    fn each(&self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        self.iter().try_for_each(|r| f(r))
    }
}

impl RecordSource for Vec<serde_bytes::ByteBuf> {
    fn each(&self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        self.as_slice().each(f)
    }
}

/// What [`seal_to`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sealed {
    /// Records in the bundle.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
    /// The chain head (SHA-256 of the last record, or the genesis hash).
    pub chain_head: [u8; 32],
}

/// The CBOR head of a major type with an argument, shortest form (defined with the
/// reading of bundles, which builds the signed bytes with it too).
pub use crate::bundle::cbor_head;

fn encode<T: serde::Serialize + ?Sized>(v: &T) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    ciborium::into_writer(v, &mut out).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(out)
}

/// Sign `head` with the records of `records` and write the bundle to `out`. The
/// `records` and `chain_head` fields of `head` are ignored: the records come from
/// `records` and the head is computed from their bytes. The result is byte for byte
/// what [`crate::bundle::seal`] returns for the same evidence.
pub fn seal_to<R: RecordSource + ?Sized, W: Write>(
    head: &Evidence,
    records: &R,
    key: &SecretKey,
    out: &mut W,
) -> io::Result<Sealed> {
    sign(head, records, key)?.write(records, &[], out)
}

/// A bundle signed but not yet written ([`sign`]): everything but the unprotected
/// header's additions, which may depend on the signature (an RFC 3161 timestamp token
/// over it, [`crate::tsp`]). Holds the payload head, not the records.
pub struct Signed {
    run_id: String,
    count: u64,
    records_len: u64,
    chain: [u8; 32],
    protected: Vec<u8>,
    unprotected: coset::Header,
    payload_head: Vec<u8>,
    pre: Vec<u8>,
    post: Vec<u8>,
    signature: [u8; 64],
}

impl std::fmt::Debug for Signed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signed({} records)", self.count)
    }
}

/// What the writer of a chain knows of its records without reading them again
/// ([`sign_chained`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chained {
    /// How many records.
    pub count: u64,
    /// Their length in the payload: each record's byte string head and bytes.
    pub len: u64,
    /// The chain head: SHA-256 of the last record's bytes, or the genesis hash.
    pub head: [u8; 32],
}

impl Chained {
    /// No record yet, for the run `run_id`.
    pub fn new(run_id: &str) -> Chained {
        Chained {
            count: 0,
            len: 0,
            head: genesis(run_id),
        }
    }

    /// `record`, the encoded bytes of the next record, appended; returns its hash (the
    /// next record's `prev`).
    pub fn push(&mut self, record: &[u8]) -> [u8; 32] {
        self.count += 1;
        self.len += cbor_head(2, record.len() as u64).len() as u64 + record.len() as u64;
        self.head = Sha256::digest(record).into();
        self.head
    }
}

/// Passes 1 and 2 of [`seal_to`]: size and chain the records, then sign. Nothing is
/// written; [`Signed::write`] writes the bundle.
pub fn sign<R: RecordSource + ?Sized>(
    head: &Evidence,
    records: &R,
    key: &SecretKey,
) -> io::Result<Signed> {
    // Pass 1: count, size and chain the records.
    let mut chained = Chained::new(&head.run.run_id);
    records.each(&mut |r| {
        chained.push(r);
        Ok(())
    })?;
    sign_chained(head, records, key, chained)
}

/// Pass 2 of [`seal_to`] for a writer that chained the records as it wrote them (the
/// collector's journal): `chained` stands for pass 1, so the records are read once to
/// sign, not twice. [`Signed::write`] reads them again and refuses to write the bundle
/// unless they are still `chained` (count, length and head).
pub fn sign_chained<R: RecordSource + ?Sized>(
    head: &Evidence,
    records: &R,
    key: &SecretKey,
    chained: Chained,
) -> io::Result<Signed> {
    let Chained {
        count,
        len: records_len,
        head: chain,
    } = chained;

    // The payload around the records: the evidence map with every entry but the record
    // bytes, encoded entry by entry in the model's field order (a field added to the
    // model later is carried along without a change here).
    let mut shell = head.clone();
    shell.records = Vec::new();
    shell.chain_head = chain.to_vec();
    let Value::Map(entries) =
        Value::serialized(&shell).map_err(|e| io::Error::other(e.to_string()))?
    else {
        return Err(io::Error::other("the evidence does not encode as a map"));
    };
    let (mut pre, mut post) = (cbor_head(5, entries.len() as u64), Vec::new());
    let mut seen_records = false;
    for (k, v) in &entries {
        let target = if seen_records { &mut post } else { &mut pre };
        target.extend(encode(k)?);
        if matches!(k, Value::Text(t) if t == "records") {
            target.extend(cbor_head(4, count));
            seen_records = true;
        } else {
            target.extend(encode(v)?);
        }
    }
    if !seen_records {
        return Err(io::Error::other("the evidence has no records entry"));
    }
    let payload_len = pre.len() as u64 + records_len + post.len() as u64;

    // The COSE headers exactly as `bundle::seal` builds them.
    let (protected, unprotected) = cose_headers(key);
    let prot_contents = protected
        .clone()
        .to_vec()
        .map_err(|e| io::Error::other(e.to_string()))?;
    let payload_head = cbor_head(2, payload_len);

    // Pass 2: the signature over Sig_structure, the message streamed twice.
    let tbs_head = sig_structure_head(&prot_contents, payload_len);
    let failure: RefCell<Option<io::Error>> = RefCell::new(None);
    let signing = key.signing_key();
    let esk = ExpandedSecretKey::from(signing.as_bytes());
    let signature = raw_sign_byupdate::<Sha512, _>(
        &esk,
        |h: &mut Sha512| {
            h.update(&tbs_head);
            h.update(&pre);
            let r = records.each(&mut |r| {
                h.update(cbor_head(2, r.len() as u64));
                h.update(r);
                Ok(())
            });
            if let Err(e) = r {
                *failure.borrow_mut() = Some(e);
                return Err(SignatureError::new());
            }
            h.update(&post);
            Ok(())
        },
        &signing.verifying_key(),
    );
    let signature = match (signature, failure.into_inner()) {
        (_, Some(e)) => return Err(e),
        (Err(e), None) => return Err(io::Error::other(e.to_string())),
        (Ok(s), None) => s.to_bytes(),
    };
    Ok(Signed {
        run_id: head.run.run_id.clone(),
        count,
        records_len,
        chain,
        protected: encode(&Value::Bytes(prot_contents))?,
        unprotected,
        payload_head,
        pre,
        post,
        signature,
    })
}

impl Signed {
    /// The COSE signature bytes (what an RFC 3161 token's imprint is over).
    pub fn signature(&self) -> &[u8] {
        &self.signature
    }

    /// Pass 3 of [`seal_to`]: write the bundle, with `extra` text-labelled entries added
    /// to the unprotected header (after the signer's public key; unsigned, as every
    /// unprotected entry is), checking that the records are still the ones signed.
    pub fn write<R: RecordSource + ?Sized, W: Write>(
        &self,
        records: &R,
        extra: &[(String, Value)],
        out: &mut W,
    ) -> io::Result<Sealed> {
        let mut unprotected = self.unprotected.clone();
        for (label, value) in extra {
            unprotected
                .rest
                .push((coset::Label::Text(label.clone()), value.clone()));
        }
        let unprot = encode(
            &unprotected
                .to_cbor_value()
                .map_err(|e| io::Error::other(e.to_string()))?,
        )?;
        let mut written = 0u64;
        let mut put = |out: &mut W, b: &[u8]| -> io::Result<()> {
            written += b.len() as u64;
            out.write_all(b)
        };
        put(out, &cbor_head(6, COSE_SIGN1_TAG))?;
        put(out, &[0x84])?;
        put(out, &self.protected)?;
        put(out, &unprot)?;
        put(out, &self.payload_head)?;
        put(out, &self.pre)?;
        let mut again = Chained::new(&self.run_id);
        records.each(&mut |r| {
            again.push(r);
            put(out, &cbor_head(2, r.len() as u64))?;
            put(out, r)
        })?;
        let signed = Chained {
            count: self.count,
            len: self.records_len,
            head: self.chain,
        };
        if again != signed {
            return Err(io::Error::other(
                "the records changed while the bundle was being sealed",
            ));
        }
        put(out, &self.post)?;
        put(out, &cbor_head(2, self.signature.len() as u64))?;
        put(out, &self.signature)?;
        Ok(Sealed {
            records: self.count,
            bytes: written,
            chain_head: self.chain,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::testkit;

    fn key() -> SecretKey {
        SecretKey::from_seed([7; 32])
    }

    #[test]
    fn streaming_seal_writes_the_bytes_of_seal() {
        for n in [0usize, 1, 3, 30] {
            let recs = (0..n)
                .map(|i| {
                    let body = serde_json::json!({"jsonrpc": "2.0", "id": i, "result": {"tools": [], "pad": "x".repeat(i * 997)}});
                    testkit::http_record(
                        &[crate::vocab::leg::INVENTORY_TOOLS],
                        "https://mcp.example/mcp",
                        "{}",
                        200,
                        body.to_string().as_bytes(),
                    )
                })
                .collect();
            let ev = testkit::evidence("https://mcp.example/mcp", recs);
            let small = crate::bundle::seal(&ev, &key());
            let mut big = Vec::new();
            let s = seal_to(&ev, &ev.records, &key(), &mut big).unwrap();
            assert_eq!(big, small, "{n} records");
            assert_eq!(s.records, n as u64);
            assert_eq!(s.bytes, small.len() as u64);
            assert_eq!(s.chain_head.to_vec(), ev.chain_head);
            let v = crate::bundle::open(&big, &[key().public()]).unwrap();
            assert_eq!(v.records.len(), n);
        }
    }

    #[test]
    fn signing_with_the_writers_chain_writes_the_bytes_of_seal() {
        let recs = (0..3)
            .map(|i| {
                testkit::http_record(
                    &[crate::vocab::leg::INVENTORY_TOOLS],
                    "https://mcp.example/mcp",
                    "{}",
                    200,
                    format!("{{\"id\":{i},\"pad\":\"{}\"}}", "x".repeat(i * 300)).as_bytes(),
                )
            })
            .collect();
        let ev = testkit::evidence("https://mcp.example/mcp", recs);
        let mut chained = Chained::new(&ev.run.run_id);
        ev.records.iter().for_each(|r| {
            chained.push(r);
        });
        assert_eq!(chained.head.to_vec(), ev.chain_head);
        let signed = sign_chained(&ev, &ev.records, &key(), chained).unwrap();
        let mut out = Vec::new();
        signed.write(&ev.records, &[], &mut out).unwrap();
        assert_eq!(out, crate::bundle::seal(&ev, &key()));
        // A chain that is not the records' (count, length or head) is refused at writing.
        let mut wrong_head = chained;
        wrong_head.head[0] ^= 1;
        for wrong in [
            Chained {
                count: 2,
                ..chained
            },
            Chained {
                len: chained.len + 1,
                ..chained
            },
            wrong_head,
        ] {
            let signed = sign_chained(&ev, &ev.records, &key(), wrong).unwrap();
            let err = signed.write(&ev.records, &[], &mut Vec::new()).unwrap_err();
            assert!(err.to_string().contains("changed"), "{err}");
        }
    }

    #[test]
    fn a_source_that_changes_between_passes_is_refused() {
        struct Flaky(std::cell::Cell<u8>);
        impl RecordSource for Flaky {
            fn each(&self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
                self.0.set(self.0.get() + 1);
                f(&[self.0.get()])
            }
        }
        let ev = testkit::evidence("https://mcp.example/mcp", Vec::new());
        let err = seal_to(&ev, &Flaky(0.into()), &key(), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("changed"), "{err}");
    }

    #[test]
    fn a_read_error_while_signing_is_returned() {
        struct Broken(std::cell::Cell<u8>);
        impl RecordSource for Broken {
            fn each(&self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
                self.0.set(self.0.get() + 1);
                if self.0.get() > 1 {
                    return Err(io::Error::other("disk gone"));
                }
                f(b"x")
            }
        }
        let ev = testkit::evidence("https://mcp.example/mcp", Vec::new());
        let err = seal_to(&ev, &Broken(0.into()), &key(), &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), "disk gone");
    }
}
