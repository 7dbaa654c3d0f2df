//! The `mcp-evidence/1` bundle: what `mcp-collect` writes and `mcp-grade` reads.
//!
//! * [`model`]: the types (payload, records, HTTP exchanges, TLS facts, token facts).
//! * [`bundle`]: CBOR encoding, the SHA-256 record chain, COSE_Sign1 Ed25519 sealing and
//!   verification, keys.
//! * [`seal`](mod@seal): the same sealing, streamed, for bundles of any size.
//! * [`record_decode`]: the hand-written decoder of the records collectors write (the
//!   serde one reads every other input).
//! * [`redact`]: credential redaction applied to every record before it is hashed.
//! * [`check_id`]: the 36 check ids as one closed type.
//! * [`sse`] and [`derive`](mod@derive): parsing of stored bodies shared by collector and grader;
//!   [`tape`]: JSON bodies read once into a flat tape, for the grader to walk.
//! * [`tlswire`]: the legacy-TLS ClientHello and the reading of a server's first bytes.
//! * [`fsutil`]: `create_private_dir` (owner-only directories for keys and baselines),
//!   atomic and create-only file writes.
//! * [`host`]: the one loopback definition (a URL host that names this machine).
//! * [`term`]: escaping untrusted text for a terminal (both binaries).
//! * [`tsp`]: RFC 3161 timestamps of sealed bundles (request, reply, token steps);
//!   [`renewal`]: the detached tokens that renew them (`<bundle>.tsr`, `.tsr.2`, …).
//! * [`vocab`]: revision names, header names, leg ids, error codes.
//! * [`www_authenticate`]: the `WWW-Authenticate` parser (lenient and strict readings).
//!
//! This crate does no I/O besides what callers hand it, and never touches the network,
//! so the grader can depend on it and stay off the network.

pub mod bundle;
pub mod check_id;
pub mod connectivity;
pub mod derive;
pub mod fsutil;
pub mod host;
pub mod model;
pub mod record_decode;
pub mod redact;
pub mod renewal;
pub mod seal;
pub mod sse;
pub mod tape;
pub mod term;
pub mod testkit;
pub mod tlswire;
pub mod tsp;
pub mod vocab;
pub mod www_authenticate;

pub use bundle::{open, open_unverified, seal, Chain, PublicKey, SecretKey, Verified, VerifyError};
pub use model::*;
