//! The TLS 1.0/1.1 acceptance probe (legs `tls.v1_0`, `tls.v1_1`; docs/collector.md, "TLS").
//!
//! rustls cannot speak TLS 1.0 or 1.1, and the question is only whether the server
//! *would*: so the probe writes one hand-made ClientHello offering only that version
//! ([`tlswire::client_hello`]) over a plain TCP connection and records the server's first
//! answer, byte for byte. It completes no handshake and needs no cryptography. Reading
//! stops as soon as [`tlswire::parse_server`] can read a complete answer (a ServerHello,
//! an alert, or bytes that are not TLS), at EOF, at [`MAX_SERVER_BYTES`], or at the
//! deadline. The grader decides from the stored bytes; this module decides nothing.
//!
//! Errors are typed so that a network failure is never read as a refusal: connect failures are `connect`, the deadline is `timeout`, a reset is
//! `reset`. A clean EOF before any byte is not an error: it is the answer "closed"
//! (Python's `ssl` refuses that way), recorded as empty `server_bytes`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{ErrorKind, LegacyTlsProbe, TransportError};
use mcp_probe_schema::tlswire;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Most bytes of the server's answer kept (a ServerHello with its Certificate records
/// fits; an alert needs 7).
pub const MAX_SERVER_BYTES: usize = 16 * 1024;

/// The version a probe offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyVersion {
    /// TLS 1.0 (`0x0301`).
    Tls1_0,
    /// TLS 1.1 (`0x0302`).
    Tls1_1,
}

impl LegacyVersion {
    /// The `client_version` on the wire.
    pub fn wire(self) -> u16 {
        match self {
            LegacyVersion::Tls1_0 => tlswire::TLS1_0,
            LegacyVersion::Tls1_1 => tlswire::TLS1_1,
        }
    }

    /// The id recorded in [`LegacyTlsProbe::offered`] (`TLSv1_0`, `TLSv1_1`).
    pub fn id(self) -> &'static str {
        match self {
            LegacyVersion::Tls1_0 => "TLSv1_0",
            LegacyVersion::Tls1_1 => "TLSv1_1",
        }
    }
}

fn terr(kind: ErrorKind, message: impl Into<String>) -> TransportError {
    TransportError {
        kind,
        message: message.into(),
    }
}

fn random() -> [u8; 32] {
    let mut r = [0u8; 32];
    if getrandom::fill(&mut r).is_err() {
        // The random only has to look like one: nothing is derived from it.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, b) in r.iter_mut().enumerate() {
            *b = (t >> ((i % 16) * 8)) as u8 ^ (i as u8).wrapping_mul(0x9d);
        }
    }
    r
}

/// The probe's record before any answer: the ClientHello offering only `version`.
fn unanswered(version: LegacyVersion, sni: Option<&str>) -> LegacyTlsProbe {
    LegacyTlsProbe {
        offered: version.id().to_string(),
        client_hello: tlswire::client_hello(version.wire(), random(), sni),
        server_bytes: Vec::new(),
        error: None,
    }
}

/// Offer only `version` to `addr` and record the server's first answer. `sni` is sent as
/// `server_name` only when it is a host name (never for IP literals). `timeout` bounds
/// the whole probe: connect, write and read.
pub async fn probe(
    addr: SocketAddr,
    sni: Option<&str>,
    version: LegacyVersion,
    timeout: Duration,
) -> LegacyTlsProbe {
    let mut out = unanswered(version, sni);
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let stream = match tokio::time::timeout(left(), TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            out.error = Some(TransportError {
                message: format!("{addr}: {e}"),
                ..super::error::io_error(&e)
            });
            return out;
        }
        Err(_) => {
            out.error = Some(terr(
                ErrorKind::Timeout,
                format!("{addr}: connect did not complete within {timeout:?}"),
            ));
            return out;
        }
    };
    exchange(stream, &addr.to_string(), out, deadline, timeout).await
}

/// [`probe`] through an HTTP CONNECT tunnel to `target` (`host:port`): the proxy
/// resolves the host; a refused tunnel is the probe's error (kind `proxy`, naming the
/// proxy), and the bytes recorded are the origin's, as on a direct connection.
pub async fn probe_via(
    proxy: &super::proxy::Proxy,
    target: &str,
    sni: Option<&str>,
    version: LegacyVersion,
    timeout: Duration,
) -> LegacyTlsProbe {
    let mut out = unanswered(version, sni);
    let deadline = Instant::now() + timeout;
    match proxy.tunnel(target, deadline).await {
        Ok((stream, _)) => exchange(stream, target, out, deadline, timeout).await,
        Err(e) => {
            out.error = Some(e);
            out
        }
    }
}

/// Write the ClientHello on a connected stream and read the answer.
async fn exchange(
    mut stream: TcpStream,
    addr: &str,
    mut out: LegacyTlsProbe,
    deadline: Instant,
    timeout: Duration,
) -> LegacyTlsProbe {
    let left = || deadline.saturating_duration_since(Instant::now());
    let _ = stream.set_nodelay(true);
    match tokio::time::timeout(left(), stream.write_all(&out.client_hello)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            out.error = Some(TransportError {
                message: format!("{addr}: writing the ClientHello: {e}"),
                ..super::error::io_error(&e)
            });
            return out;
        }
        Err(_) => {
            out.error = Some(terr(
                ErrorKind::Timeout,
                format!("{addr}: writing the ClientHello did not complete within {timeout:?}"),
            ));
            return out;
        }
    }
    let mut chunk = [0u8; 4096];
    loop {
        match tokio::time::timeout(left(), stream.read(&mut chunk)).await {
            // EOF: whatever arrived (possibly nothing) is the answer.
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => {
                let room = MAX_SERVER_BYTES - out.server_bytes.len();
                out.server_bytes.extend_from_slice(&chunk[..n.min(room)]);
                if out.server_bytes.len() >= MAX_SERVER_BYTES
                    || tlswire::parse_server(&out.server_bytes).is_complete()
                {
                    break;
                }
            }
            Ok(Err(e)) => {
                out.error = Some(TransportError {
                    message: format!(
                        "{addr}: reading the answer after {} bytes: {e}",
                        out.server_bytes.len()
                    ),
                    ..super::error::io_error(&e)
                });
                break;
            }
            Err(_) => {
                out.error = Some(terr(
                    ErrorKind::Timeout,
                    format!(
                        "{addr}: no complete answer within {timeout:?} ({} bytes received)",
                        out.server_bytes.len()
                    ),
                ));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::tlswire::{parse_client_hello, parse_server, ServerAnswer};
    use tokio::net::TcpListener;

    /// A one-connection server that reads the ClientHello record, then answers `reply`
    /// and closes (or holds the connection open when `hold`).
    async fn server(reply: Vec<u8>, hold: bool) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        tokio::spawn(async move {
            let (mut s, _) = l.accept().await.expect("accept");
            let mut head = [0u8; 5];
            s.read_exact(&mut head).await.expect("record header");
            let mut body = vec![0u8; usize::from(u16::from_be_bytes([head[3], head[4]]))];
            s.read_exact(&mut body).await.expect("record body");
            let _ = s.write_all(&reply).await;
            if hold {
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        });
        addr
    }

    #[tokio::test]
    async fn alert_is_read_and_hello_recorded() {
        let addr = server(vec![0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46], true).await;
        let p = probe(
            addr,
            Some("mcp.example"),
            LegacyVersion::Tls1_1,
            Duration::from_secs(3),
        )
        .await;
        assert_eq!(p.offered, "TLSv1_1");
        assert_eq!(p.error, None);
        // The alert is complete: the probe stops without waiting for the close.
        assert_eq!(
            parse_server(&p.server_bytes),
            ServerAnswer::Alert {
                level: 2,
                description: 70
            }
        );
        let hello = parse_client_hello(&p.client_hello).expect("hello parses");
        assert_eq!(hello.client_version, 0x0302);
        assert_eq!(hello.server_name.as_deref(), Some("mcp.example"));
    }

    #[tokio::test]
    async fn eof_is_closed_not_an_error() {
        let addr = server(Vec::new(), false).await;
        let p = probe(addr, None, LegacyVersion::Tls1_0, Duration::from_secs(3)).await;
        assert_eq!(p.error, None);
        assert!(p.server_bytes.is_empty());
    }

    #[tokio::test]
    async fn silence_is_a_timeout_with_the_bytes_so_far() {
        let addr = server(vec![0x16, 0x03], true).await;
        let p = probe(
            addr,
            None,
            LegacyVersion::Tls1_0,
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(p.server_bytes, vec![0x16, 0x03]);
        assert_eq!(p.error.map(|e| e.kind), Some(ErrorKind::Timeout));
    }

    #[tokio::test]
    async fn refused_port_is_a_connect_error() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        drop(l);
        let p = probe(addr, None, LegacyVersion::Tls1_0, Duration::from_secs(3)).await;
        assert_eq!(p.error.map(|e| e.kind), Some(ErrorKind::Connect));
        assert!(p.server_bytes.is_empty());
        assert!(
            !p.client_hello.is_empty(),
            "what would have been sent is kept"
        );
    }

    #[tokio::test]
    async fn answer_is_capped() {
        // A handshake message announcing 1 MiB, sent as many full records.
        let mut reply = vec![0x16, 0x03, 0x01, 0x40, 0x00, 0x0b, 0x10, 0x00, 0x00];
        reply.resize(5 + 0x4000, 0);
        for _ in 0..3 {
            let mut r = vec![0x16, 0x03, 0x01, 0x40, 0x00];
            r.resize(5 + 0x4000, 0);
            reply.extend_from_slice(&r);
        }
        let addr = server(reply, true).await;
        let p = probe(addr, None, LegacyVersion::Tls1_0, Duration::from_secs(3)).await;
        assert_eq!(p.server_bytes.len(), MAX_SERVER_BYTES);
        assert_eq!(p.error, None);
    }
}
