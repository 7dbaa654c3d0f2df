//! How an I/O error becomes a recorded transport error (shared by the HTTP client, the
//! TLS handshake classifier and the legacy TLS probe).

use mcp_probe_schema::model::{ErrorKind, TransportError};

/// Map an I/O error to a typed transport error.
pub fn io_error(e: &std::io::Error) -> TransportError {
    use std::io::ErrorKind as K;
    let kind = match e.kind() {
        K::ConnectionRefused | K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable => {
            ErrorKind::Connect
        }
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            ErrorKind::Reset
        }
        K::TimedOut => ErrorKind::Timeout,
        K::InvalidData => ErrorKind::Protocol,
        _ => ErrorKind::Io,
    };
    TransportError {
        kind,
        message: e.to_string(),
    }
}
