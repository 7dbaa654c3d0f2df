//! `mcp-collect`: connects to MCP servers as any client would and records what it sees
//! into signed `mcp-evidence/1` bundles. It decides no verdict: the grader
//! (`mcp-grade`) re-derives every verdict from the records (docs/collector.md).
//!
//! The folders are layers; a module imports only from its own layer or a lower one:
//!
//! * base: [`journal`] (redaction, chaining, journal file and sealing), [`keys`] (the
//!   signing key under `~/.mcp-probe/`) and [`printer`] (the one writer of stdout and
//!   stderr).
//! * [`transport`]: the recording HTTP/1.1 client, its TLS trust stores, and the
//!   hand-built legacy TLS handshakes.
//! * [`mcp`]: the MCP session context ([`mcp::Probe`]), endpoint detection with revision
//!   negotiation, and the inventory.
//! * [`oauth`]: OAuth discovery, the network guard, and the login (token cache, loopback
//!   callback server, registration, PKCE, grants).
//! * [`legs`]: the probe legs, one module per check family, named by check id.
//! * [`run`]: the command line (flags, targets, inputs, exit statuses), the ordered
//!   steps of one target, and many targets at once with progress and signals.

pub mod journal;
pub mod keys;
pub mod legs;
pub mod mcp;
pub mod oauth;
pub mod printer;
pub mod run;
pub mod transport;
