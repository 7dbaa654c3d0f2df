//! The transport layer: what goes on the wire, below MCP.
//!
//! * [`http`]: the recording HTTP/1.1 client (one exchange per request, body caps,
//!   deadlines, pinned connections).
//! * [`tls`]: trust stores and the TLS facts recorded for each handshake.
//! * [`legacy_tls`]: hand-built TLS 1.0/1.1 ClientHellos (rustls speaks neither).
//! * [`stdio`]: a local server launched as a child process, JSON-RPC over its stdin
//!   and stdout.
//! * [`error`]: how an I/O error becomes a recorded transport error.
//!
//! Nothing here knows about MCP, OAuth or the run.

pub mod error;
pub mod http;
pub mod legacy_tls;
pub mod stdio;
pub mod tls;
