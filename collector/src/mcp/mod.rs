//! The MCP layer: one target's session context and the requests every MCP client
//! sends.
//!
//! * [`session`]: the [`Probe`] context (client, journal, negotiated revision, session
//!   id, credential) and JSON-RPC request building for both revision families.
//! * [`negotiation`]: endpoint detection with revision negotiation.
//! * [`inventory`]: the inventory across every page.

pub mod inventory;
pub mod negotiation;
pub mod session;
pub mod sse;
pub mod stream;

pub use session::{Ending, Probe, Reply, CLIENT_NAME};
