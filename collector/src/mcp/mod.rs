//! The MCP layer: one target's session context and the requests every MCP client
//! sends.
//!
//! * [`session`]: the [`Probe`] context (client, journal, negotiated revision, session
//!   id, credential) and JSON-RPC request building for both revision families.
//! * [`credential`]: how the token goes on a request (Bearer, or DPoP and a proof);
//!   [`prover`]: the DPoP signer it asks for proofs, and nonce challenges.
//! * [`negotiation`]: endpoint detection with revision negotiation.
//! * [`inventory`]: the inventory across every page.
//! * `json`: the bytes of a JSON-RPC body (serde_json's, written faster).

pub mod credential;
pub mod inventory;
mod json;
pub mod negotiation;
pub mod prover;
pub mod session;
pub mod sse;
pub mod stream;

pub use session::{Ending, Probe, Reply, StepUpPending, CLIENT_NAME};
