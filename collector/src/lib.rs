//! `mcp-collect`: connects to MCP servers as any client would and records what it sees
//! into signed `mcp-evidence/1` bundles. It decides no verdict (design.md §1).
//!
//! * [`target`]: normalisation of what the operator typed.
//! * [`http`] and [`tls`]: the recording HTTP/1.1 client and its TLS trust stores.
//! * [`probe`]: endpoint detection, revision negotiation, inventory.
//! * [`journal`]: redaction, chaining, journal file and sealing.
//! * [`keys`]: the signing key under `~/.mcp-probe/`.
//! * [`run`]: many targets at once, progress, Ctrl-C.

pub mod cli;
pub mod discovery;
pub mod flags;
pub mod guard;
pub mod http;
pub mod inputs;
pub mod journal;
pub mod keys;
pub mod legacy_tls;
pub mod legs;
pub mod legs_audience;
pub mod legs_deputy;
pub mod legs_scope;
pub mod oauth;
pub mod probe;
pub mod run;
pub mod target;
pub mod tls;
