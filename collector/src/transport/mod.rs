//! The transport layer: what goes on the wire, below MCP.
//!
//! * [`http`]: the recording HTTP/1.1 client (one exchange per request, body caps,
//!   deadlines, pinned connections).
//! * [`tls`]: trust stores and the TLS facts recorded for each handshake.
//! * [`legacy_tls`]: hand-built TLS 1.0/1.1 ClientHellos (rustls speaks neither).
//! * [`tsa`]: the RFC 3161 time-stamping client (`--tsa`).
//! * [`stdio`]: a local server launched as a child process, JSON-RPC over its stdin
//!   and stdout.
//! * [`error`]: how an I/O error becomes a recorded transport error.
//! * [`resolve`]: host names to addresses, from `/etc/hosts` and DNS, without the C
//!   library's resolver (every lookup of the collector goes through it).
//! * [`proxy`]: HTTP CONNECT tunnels and `NO_PROXY`; [`net`]: the run's `--header`,
//!   proxies and client certificate as the client applies them.
//!
//! Nothing here knows about MCP, OAuth or the run.

pub mod error;
pub mod http;
pub mod legacy_tls;
pub mod net;
pub mod proxy;
pub mod resolve;
pub mod stdio;
pub mod tls;
pub mod tsa;
