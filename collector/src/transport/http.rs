//! A recording HTTP/1.1 client.
//!
//! Why not reqwest: a bundle must show the request exactly as
//! sent and the response exactly as received, headers in order and original case, the
//! TLS facts of the very connection that carried the exchange, and an SSE stream cut at
//! the awaited JSON-RPC response. reqwest/hyper lower-case and reorder headers, hide
//! the chain and cipher, and buffer bodies. This client writes the request bytes itself,
//! parses response heads with `httparse`, decodes `chunked` itself, and never follows a
//! redirect. Connections are kept alive per authority and reused, so a probe costs one
//! TCP and TLS handshake per server, not one per request.
//!
//! Every request has one deadline covering connect, TLS, write and read.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_probe_schema::derive;
use mcp_probe_schema::model::Observation;
use mcp_probe_schema::model::{
    Body, BodyEnd, ErrorKind, Header, HttpExchange, HttpOutcome, HttpRequest, HttpResponse,
    TlsHandshake, TransportError,
};
use mcp_probe_schema::vocab::{self, header, leg, LegId};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use super::error::io_error;
use super::tls::Trust;
use crate::journal::Journal;

/// Longest response head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Most interim (1xx) responses skipped before the final one.
pub const MAX_INTERIM: u32 = 16;
/// Most header lines accepted.
const MAX_HEADERS: usize = 128;
/// Bytes read past the storage cap (hashed and counted, not kept) before giving up.
const READ_LIMIT_FACTOR: u64 = 8;
/// How long to wait for the end of an event stream once the awaited response arrived.
const STREAM_END_GRACE: Duration = Duration::from_millis(100);
/// Request bodies are the collector's own: a long one (the 10.2 padded body) is stored
/// up to this many bytes, with its full length and SHA-256.
const REQUEST_BODY_CAP: u64 = 4 * 1024;
/// A request whose body is at most this long is written in one write, head and body
/// together; a longer body is written after its head, without copying it.
const ONE_WRITE_BELOW: usize = 64 * 1024;

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

struct Conn {
    id: u64,
    peer: SocketAddr,
    io: Box<dyn Stream>,
    buf: Vec<u8>,
    /// Set on a stream read beside another request ([`Client::send_until`]): reading
    /// ends when it turns true.
    stop: Option<Stop>,
}

/// The signal that ends a [`Client::send_until`] read.
pub type Stop = tokio::sync::watch::Receiver<bool>;

/// The message of the internal error that a [`Stop`] turns into `stopped_after_response`.
const STOPPED: &str = "stopped: the awaited response arrived on another request";

/// A request to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method.
    pub method: String,
    /// Absolute http(s) URL.
    pub url: url::Url,
    /// Headers, in order (Host, Content-Length and User-Agent are added first).
    pub headers: Vec<Header>,
    /// Body bytes.
    pub body: Vec<u8>,
    /// For event streams: stop reading once the JSON-RPC response with this id arrived.
    pub await_id: Option<Value>,
    /// For event streams: read only the head (a standalone GET stream may never end).
    pub head_only_stream: bool,
    /// Connect only to these addresses (the ones the network guard checked), never
    /// re-resolving the host and never reusing a pooled connection: a DNS answer that
    /// changes between the guard's lookup and the connection cannot redirect the request.
    pub connect_to: Option<Vec<SocketAddr>>,
}

/// What one request produced.
#[derive(Debug)]
pub struct Sent {
    /// The exchange (to be recorded).
    pub exchange: HttpExchange,
    /// Present when a new TLS connection was made for this request.
    pub tls: Option<TlsHandshake>,
    /// When the request started (UTC µs).
    pub started_at: i64,
    /// How long it took.
    pub duration: Duration,
    /// Addresses the host resolved to, when a lookup happened.
    pub resolved: Option<Vec<SocketAddr>>,
}

impl Sent {
    /// Record the TLS handshake of this request, if a new connection was made, under
    /// `tls_leg` ([`tls_leg`]).
    pub fn record_tls(&mut self, j: &mut Journal, tls_leg: LegId) {
        if let Some(tls) = self.tls.take() {
            j.record(&[tls_leg], self.started_at, 0, Observation::Tls(tls));
        }
    }

    /// Record the TLS handshake (under `tls_leg`) and then the exchange (under `leg`);
    /// the seq of the exchange's record.
    pub fn record(mut self, j: &mut Journal, tls_leg: LegId, leg: LegId) -> u64 {
        self.record_tls(j, tls_leg);
        j.record(
            &[leg],
            self.started_at,
            self.duration.as_micros() as u64,
            Observation::Http(self.exchange),
        )
    }
}

/// The leg a new connection's handshake is recorded under: the endpoint's own
/// connections are `tls.modern`; another host's handshake belongs to `leg`, the leg that
/// made it (linked to the exchange by connection id).
pub fn tls_leg(url: &url::Url, endpoint: &url::Url, leg: LegId) -> LegId {
    if authority(url) == authority(endpoint) {
        leg::TLS_MODERN
    } else {
        leg
    }
}

/// A complete body of `bytes`.
pub fn complete_body(bytes: &[u8]) -> Body {
    Body {
        bytes: bytes.to_vec(),
        length: bytes.len() as u64,
        sha256: Sha256::digest(bytes).to_vec(),
        end: BodyEnd::Complete,
    }
}

/// The record of a request that was refused before a byte was sent: the request as it
/// would have gone, and the refusal (`kind`, `message`) as its transport error.
pub fn unsent(
    method: &str,
    url: &str,
    headers: Vec<Header>,
    body: &[u8],
    kind: ErrorKind,
    message: String,
) -> HttpExchange {
    HttpExchange {
        request: HttpRequest {
            method: method.to_string().into(),
            url: url.into(),
            version: "HTTP/1.1".into(),
            headers,
            body: complete_body(body),
        },
        outcome: HttpOutcome::Error(TransportError { kind, message }),
        connection: None,
        first_attempt: None,
        refused: None,
    }
}

/// The recording client shared by all targets of a run.
pub struct Client {
    trust: Trust,
    timeout: Duration,
    body_cap: u64,
    next_conn: AtomicU64,
    pool: Mutex<HashMap<String, Conn>>,
    host_locks: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    net: super::net::Net,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Client({:?}, timeout {:?})", self.trust, self.timeout)
    }
}

fn terr(kind: ErrorKind, message: impl Into<String>) -> TransportError {
    TransportError {
        kind,
        message: message.into(),
    }
}

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

pub use super::proxy::authority;

impl Client {
    /// A client with these trust stores, per-request timeout and body storage cap.
    pub fn new(trust: Trust, timeout: Duration, body_cap: u64) -> Client {
        Client {
            trust,
            timeout,
            body_cap,
            next_conn: AtomicU64::new(1),
            pool: Mutex::new(HashMap::new()),
            host_locks: Mutex::new(HashMap::new()),
            net: super::net::Net::default(),
        }
    }

    /// This client with the run's connectivity options: `--header` and the client
    /// certificate for the targets' origins, the proxies for every connection.
    pub fn with_net(mut self, net: super::net::Net) -> Client {
        self.net = net;
        self
    }

    /// The run's connectivity options.
    pub fn net(&self) -> &super::net::Net {
        &self.net
    }

    /// Send `req` and record everything. One request in flight per authority: a second
    /// target on the same server waits (pacing: one request at a time per server).
    pub async fn send(&self, req: Request) -> Sent {
        let auth = authority(&req.url);
        let lock = {
            let mut locks = self.host_locks.lock().await;
            locks
                .entry(auth.clone())
                .or_insert_with(|| Arc::new(Mutex::new(())))
                .clone()
        };
        let _guard = lock.lock().await;
        self.send_unpaced(req, None).await
    }

    /// Send `req` beside the request in flight to the same server (outside the
    /// one-at-a-time pacing), on a connection of its own that is never pooled, and read
    /// its body until `stop` turns true, the body ends, or the deadline passes. A body
    /// ended by `stop` is recorded `stopped_after_response` (the awaited response arrived
    /// on the other request). For a standalone event stream read while a request runs.
    pub async fn send_until(&self, req: Request, stop: Stop) -> Sent {
        self.send_unpaced(req, Some(stop)).await
    }

    async fn send_unpaced(&self, req: Request, stop: Option<Stop>) -> Sent {
        // Boxed: every request's future holds this one, and the futures of the legs nest
        // deep (a debug build's worker stack is the limit).
        Box::pin(self.send_inner(req, stop, false)).await.0
    }

    /// Open an event stream: send `req` (a `GET`) on a connection of its own, outside
    /// the pacing, and read only the response head. When the answer is an event
    /// stream (its body recorded `head_only`), the connection is handed back to be
    /// read event by event ([`EventStream::read`]); any other answer is read whole.
    pub async fn open_stream(&self, mut req: Request) -> (Sent, Option<EventStream>) {
        req.head_only_stream = true;
        let (sent, conn) = Box::pin(self.send_inner(req, None, true)).await;
        let stream = conn.map(|(conn, chunked)| EventStream {
            conn,
            chunked,
            left: 0,
            crlf_due: false,
            done: false,
        });
        (sent, stream)
    }

    async fn send_inner(
        &self,
        req: Request,
        stop: Option<Stop>,
        keep_stream: bool,
    ) -> (Sent, Option<(Conn, bool)>) {
        let auth = authority(&req.url);
        let started_at = now_us();
        let t0 = Instant::now();
        let deadline = t0 + self.timeout;
        let wire_headers = self.wire_headers(&req, &auth);
        let request_record = HttpRequest {
            method: req.method.clone().into(),
            url: req.url.to_string(),
            version: "HTTP/1.1".into(),
            headers: wire_headers.clone(),
            body: stored_body(
                &req.body,
                self.body_cap.min(REQUEST_BODY_CAP),
                BodyEnd::Complete,
            ),
        };
        // A pinned request reuses a pooled connection only when it goes to one of the
        // addresses the guard checked.
        let pooled = if stop.is_some() || keep_stream {
            None
        } else {
            let mut pool = self.pool.lock().await;
            match (&req.connect_to, pool.get(&auth)) {
                (Some(pinned), Some(c)) if !pinned.contains(&c.peer) => None,
                _ => pool.remove(&auth),
            }
        };
        let mut first_attempt: Option<TransportError> = None;
        let sent = |outcome, connection, tls, resolved, first_attempt| Sent {
            exchange: HttpExchange {
                request: request_record.clone(),
                outcome,
                connection,
                first_attempt,
                refused: None,
            },
            tls,
            started_at,
            duration: t0.elapsed(),
            resolved,
        };
        let mut tls = None;
        let mut resolved = None;
        let mut reused = pooled.is_some();
        let mut conn = match pooled {
            Some(c) => c,
            None => match self
                .connect(&req.url, req.connect_to.as_deref(), deadline)
                .await
            {
                Ok((c, t, r)) => {
                    tls = t;
                    resolved = Some(r);
                    c
                }
                Err((e, t, r)) => return (sent(HttpOutcome::Error(e), None, t, r, None), None),
            },
        };
        conn.stop = stop.clone();
        let head = request_head(&req, &wire_headers);
        loop {
            match self.exchange(&mut conn, &req, &head, deadline).await {
                // A pooled connection the server closed while idle (reset before any
                // response byte): retry once on a new connection.
                Err(e) if reused && e.kind == ErrorKind::Reset && conn.buf.is_empty() => {
                    reused = false;
                    // Recorded with the exchange: the request was written twice.
                    first_attempt = Some(e);
                    match self
                        .connect(&req.url, req.connect_to.as_deref(), deadline)
                        .await
                    {
                        Ok((c, t, r)) => {
                            conn = c;
                            conn.stop = stop.clone();
                            tls = t;
                            resolved = Some(r);
                        }
                        Err((e, t, r)) => {
                            return (
                                sent(HttpOutcome::Error(e), None, t, r, first_attempt.take()),
                                None,
                            )
                        }
                    }
                }
                Err(e) => {
                    return (
                        sent(
                            HttpOutcome::Error(e),
                            Some(conn.id),
                            tls,
                            resolved,
                            first_attempt.take(),
                        ),
                        None,
                    )
                }
                Ok((mut resp, keep)) => {
                    let id = conn.id;
                    if matches!(&resp.body.end, BodyEnd::Error(e) if e.message == STOPPED) {
                        resp.body.end = BodyEnd::StoppedAfterResponse;
                    }
                    let streaming = keep_stream && matches!(resp.body.end, BodyEnd::HeadOnly);
                    let chunked = derive::header(&resp.headers, header::TRANSFER_ENCODING)
                        .is_some_and(|h| h.value_str().to_ascii_lowercase().contains("chunked"));
                    let kept = if streaming {
                        Some((conn, chunked))
                    } else {
                        if keep && stop.is_none() && !keep_stream {
                            self.pool.lock().await.insert(auth, conn);
                        }
                        None
                    };
                    return (
                        sent(
                            HttpOutcome::Response(resp),
                            Some(id),
                            tls,
                            resolved,
                            first_attempt.take(),
                        ),
                        kept,
                    );
                }
            }
        }
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Drop pooled connections to `url`'s authority (e.g. at the end of a target).
    pub async fn close(&self, url: &url::Url) {
        self.pool.lock().await.remove(&authority(url));
    }

    fn wire_headers(&self, req: &Request, auth: &str) -> Vec<Header> {
        // Host without the default port, as browsers and curl send it.
        let host = match (req.url.port(), req.url.host()) {
            (Some(p), Some(h)) => format!("{}:{p}", host_text(&h)),
            (None, Some(h)) => host_text(&h),
            _ => auth.to_string(),
        };
        let mut h = vec![
            Header::new(header::HOST, host),
            Header::new(header::USER_AGENT, vocab::COLLECTOR_USER_AGENT),
        ];
        h.extend(req.headers.iter().cloned());
        // `--header` on the targets' origins only, and never over a header the request
        // already carries (a leg that varies a header sends exactly what it tests).
        if self.net.is_target(&req.url) {
            for x in &self.net.headers {
                if !h.iter().any(|y| y.name.eq_ignore_ascii_case(&x.name)) {
                    h.push(x.clone());
                }
            }
        }
        if !req.body.is_empty() || req.method == "POST" || req.method == "PUT" {
            h.push(Header::new(
                header::CONTENT_LENGTH,
                req.body.len().to_string(),
            ));
        }
        h
    }

    async fn connect(
        &self,
        url: &url::Url,
        pinned: Option<&[SocketAddr]>,
        deadline: Instant,
    ) -> Result<(Conn, Option<TlsHandshake>, Vec<SocketAddr>), ConnectFailure> {
        let proxy = self.net.proxies.for_url(url);
        let (tcp, peer, peer_text, addrs) = match proxy {
            None => {
                let addrs = resolve(url, pinned, deadline)
                    .await
                    .map_err(|(e, addrs)| (e, None, addrs))?;
                let fail = |e: TransportError| (e, None, Some(addrs.clone()));
                let (tcp, peer) = dial(&addrs, deadline).await.map_err(fail)?;
                (tcp, peer, peer.to_string(), addrs)
            }
            // Through the proxy: no local lookup of the origin (the proxy resolves it),
            // unless the guard pinned the addresses, which are then the CONNECT target.
            Some(p) => {
                let pinned_list = pinned.map(<[SocketAddr]>::to_vec);
                let (tcp, peer, target) = tunnel(p, url, pinned, deadline)
                    .await
                    .map_err(|e| (e, None, pinned_list.clone()))?;
                (tcp, peer, target, pinned_list.unwrap_or_default())
            }
        };
        let via = proxy.map(|p| p.display());
        let fail = |e: TransportError| (e, None, Some(addrs.clone()));
        let _ = tcp.set_nodelay(true);
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        if url.scheme() != "https" {
            let conn = Conn {
                id,
                peer,
                io: Box::new(tcp),
                buf: Vec::new(),
                stop: None,
            };
            return Ok((conn, None, addrs));
        }
        let (server_name, sni) = server_name(url).map_err(fail)?;
        let client_cert = self
            .net
            .is_target(url)
            .then(|| self.net.client_cert.clone())
            .flatten();
        let how = Via {
            peer,
            peer_text,
            proxy: via,
            client_cert,
        };
        match self
            .handshake(id, tcp, server_name, sni, how, deadline)
            .await
        {
            Ok((conn, record)) => Ok((conn, Some(record), addrs)),
            Err((e, record)) => Err((e, record, Some(addrs))),
        }
    }

    /// The TLS handshake on a connected socket, recorded whatever the outcome. A chain
    /// no trust store accepts is a failure (with its record).
    async fn handshake(
        &self,
        id: u64,
        tcp: TcpStream,
        server_name: rustls::pki_types::ServerName<'static>,
        sni: Option<String>,
        how: Via,
        deadline: Instant,
    ) -> Result<(Conn, TlsHandshake), (TransportError, Option<TlsHandshake>)> {
        let (cfg, rec) = self.trust.config(how.client_cert.clone());
        let connector = tokio_rustls::TlsConnector::from(cfg);
        let stream = match within(deadline, connector.connect(server_name, tcp)).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                let err = super::tls::classify(&e);
                let mut record = super::tls::failed_record(
                    id,
                    sni,
                    how.peer_text.clone(),
                    rec.seen(),
                    Some(err.clone()),
                );
                record.via_proxy = how.proxy.clone();
                record.client_auth = rec.client_auth();
                let err = match (&err.kind, &record.client_auth) {
                    // The server asked for a certificate the collector did not have.
                    (ErrorKind::TlsAlert, Some(a)) if a.sent.is_none() => TransportError {
                        message: format!(
                            "{} (the server asked for a client certificate and none was configured for it)",
                            err.message
                        ),
                        ..err
                    },
                    _ => err,
                };
                record.error = Some(err.clone());
                return Err((err, Some(record)));
            }
            Err(e) => return Err((e, None)),
        };
        let mut record = super::tls::handshake_record(
            id,
            sni,
            how.peer_text.clone(),
            stream.get_ref().1,
            rec.seen(),
        );
        record.via_proxy = how.proxy.clone();
        record.client_auth = rec.client_auth();
        let trusted = rec.seen().map(|s| s.trusted()).unwrap_or(false);
        if !trusted {
            let why = record
                .verification
                .iter()
                .map(|c| format!("{}: {}", c.store, c.error.as_deref().unwrap_or("ok")))
                .collect::<Vec<_>>()
                .join("; ");
            let err = terr(
                ErrorKind::TlsCertificate,
                format!("certificate not trusted by any store ({why})"),
            );
            return Err((err, Some(record)));
        }
        let conn = Conn {
            id,
            peer: how.peer,
            io: Box::new(stream),
            buf: Vec::new(),
            stop: None,
        };
        Ok((conn, record))
    }

    /// Write the request and read the response. Returns the response and whether the
    /// connection may be reused.
    async fn exchange(
        &self,
        conn: &mut Conn,
        req: &Request,
        head: &[u8],
        deadline: Instant,
    ) -> Result<(HttpResponse, bool), TransportError> {
        let written = if req.body.len() <= ONE_WRITE_BELOW {
            let mut wire = Vec::with_capacity(head.len() + req.body.len());
            wire.extend_from_slice(head);
            wire.extend_from_slice(&req.body);
            within(deadline, conn.io.write_all(&wire)).await
        } else {
            // A long body (the 10.2a padded request) is not copied behind the head: it
            // spans many segments and TLS records either way.
            match within(deadline, conn.io.write_all(head)).await {
                Ok(Ok(())) => within(deadline, conn.io.write_all(&req.body)).await,
                other => other,
            }
        };
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(io_error(&e)),
            Err(e) => return Err(e),
        }
        let _ = within(deadline, conn.io.flush()).await;
        // Read the head, skipping interim 1xx responses (counted, and at most
        // MAX_INTERIM of them: a server cannot keep a request alive with 100 Continue).
        let mut interim = 0u32;
        let (status, version, reason, headers) = loop {
            let parsed = read_head(conn, deadline).await?;
            if (100..200).contains(&parsed.0) && parsed.0 != 101 {
                interim += 1;
                if interim > MAX_INTERIM {
                    return Err(terr(
                        ErrorKind::Protocol,
                        format!("more than {MAX_INTERIM} interim (1xx) responses"),
                    ));
                }
                continue;
            }
            break parsed;
        };
        if status == 101 {
            // Switching Protocols: what follows is not HTTP/1.1. The exchange ends with
            // the head, and the connection is never pooled.
            return Ok((
                HttpResponse {
                    version: version.into(),
                    status,
                    reason: reason.into(),
                    headers,
                    body: stored_body(&[], 0, BodyEnd::Complete),
                    interim,
                },
                false,
            ));
        }
        let mut reader = BodyReader::new(self.body_cap, &headers, req.await_id.clone());
        let no_body =
            req.method == "HEAD" || status == 204 || status == 304 || (100..200).contains(&status);
        let te_chunked = mcp_probe_schema::derive::header(&headers, header::TRANSFER_ENCODING)
            .map(|h| h.value_str().to_ascii_lowercase().contains("chunked"))
            .unwrap_or(false);
        let clen = mcp_probe_schema::derive::header(&headers, header::CONTENT_LENGTH)
            .and_then(|h| h.value_str().trim().parse::<u64>().ok());
        let conn_close = mcp_probe_schema::derive::header(&headers, header::CONNECTION)
            .map(|h| h.value_str().to_ascii_lowercase().contains("close"))
            .unwrap_or(false)
            || version == "HTTP/1.0";
        let is_stream =
            mcp_probe_schema::derive::media_type(&headers).as_deref() == Some("text/event-stream");
        let end = if no_body {
            BodyEnd::Complete
        } else if req.head_only_stream && is_stream {
            BodyEnd::HeadOnly
        } else if te_chunked {
            read_chunked(conn, &mut reader, deadline).await
        } else if let Some(n) = clen {
            read_length(conn, &mut reader, n, deadline).await
        } else {
            read_to_eof(conn, &mut reader, deadline).await
        };
        let complete = matches!(end, BodyEnd::Complete);
        let keep = complete
            && !conn_close
            && (no_body || te_chunked || clen.is_some())
            && conn.buf.is_empty();
        let body = reader.finish(end);
        Ok((
            HttpResponse {
                version: version.into(),
                status,
                reason: reason.into(),
                headers,
                body,
                interim,
            },
            keep,
        ))
    }
}

/// How a connection was made: the peer as recorded (the address dialled, or the tunnel's
/// `host:port`), the proxy that carried it, and the client certificate it may present.
struct Via {
    peer: SocketAddr,
    peer_text: String,
    proxy: Option<String>,
    client_cert: Option<Arc<rustls::sign::CertifiedKey>>,
}

/// A CONNECT tunnel to `url` through `p`: to each pinned address in turn, else to the
/// URL's `host:port`. Returns the stream, the socket address recorded as the
/// connection's peer (the pinned address, else the proxy's) and the tunnel target.
async fn tunnel(
    p: &super::proxy::Proxy,
    url: &url::Url,
    pinned: Option<&[SocketAddr]>,
    deadline: Instant,
) -> Result<(TcpStream, SocketAddr, String), TransportError> {
    let targets: Vec<(String, Option<SocketAddr>)> = match pinned {
        Some(list) if !list.is_empty() => list
            .iter()
            .map(|a| (super::proxy::connect_target(url, Some(a)), Some(*a)))
            .collect(),
        _ => vec![(super::proxy::connect_target(url, None), None)],
    };
    let mut last = terr(ErrorKind::Connect, "no address tried");
    for (target, pin) in targets {
        match p.tunnel(&target, deadline).await {
            Ok((s, proxy_addr)) => return Ok((s, pin.unwrap_or(proxy_addr), target)),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// An event stream whose head [`Client::open_stream`] read: its body, decoded from the
/// chunked transfer coding (or read to the end of the connection), as it arrives.
pub struct EventStream {
    conn: Conn,
    chunked: bool,
    /// Bytes left in the current chunk.
    left: u64,
    /// The CRLF after a chunk's data is still to be read.
    crlf_due: bool,
    done: bool,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EventStream(connection {})", self.conn.id)
    }
}

impl EventStream {
    /// The connection id (shared with the `GET` record and its TLS handshake).
    pub fn connection(&self) -> u64 {
        self.conn.id
    }

    /// The next body bytes, `Ok(None)` when the body ended cleanly. Fails at
    /// `deadline`, on a reset, or on broken chunk framing.
    pub async fn read(&mut self, deadline: Instant) -> Result<Option<Vec<u8>>, TransportError> {
        if self.done {
            return Ok(None);
        }
        if !self.chunked {
            if self.conn.buf.is_empty() && fill(&mut self.conn, deadline).await? == 0 {
                self.done = true;
                return Ok(None);
            }
            return Ok(Some(std::mem::take(&mut self.conn.buf)));
        }
        if self.crlf_due {
            if !read_line(&mut self.conn, deadline).await?.is_empty() {
                return Err(terr(ErrorKind::Protocol, "chunk not followed by CRLF"));
            }
            self.crlf_due = false;
        }
        if self.left == 0 {
            let line = read_line(&mut self.conn, deadline).await?;
            let text = String::from_utf8_lossy(&line);
            let size_text = text.split(';').next().unwrap_or("").trim();
            let size = u64::from_str_radix(size_text, 16)
                .map_err(|_| terr(ErrorKind::Protocol, format!("bad chunk size {size_text:?}")))?;
            if size == 0 {
                self.done = true;
                return Ok(None);
            }
            self.left = size;
        }
        if self.conn.buf.is_empty() && fill(&mut self.conn, deadline).await? == 0 {
            return Err(terr(ErrorKind::Reset, "connection closed inside a chunk"));
        }
        let take = (self.left as usize).min(self.conn.buf.len());
        let chunk: Vec<u8> = self.conn.buf.drain(..take).collect();
        self.left -= take as u64;
        self.crlf_due = self.left == 0;
        Ok(Some(chunk))
    }
}

/// Why a connection failed: the error, the TLS record when a handshake was attempted,
/// and the addresses the host resolved to when a lookup happened.
type ConnectFailure = (
    TransportError,
    Option<TlsHandshake>,
    Option<Vec<SocketAddr>>,
);

/// The addresses to try: the pinned ones (checked by the network guard), else a DNS
/// lookup within the deadline. An empty answer is a DNS failure (with the empty list).
async fn resolve(
    url: &url::Url,
    pinned: Option<&[SocketAddr]>,
    deadline: Instant,
) -> Result<Vec<SocketAddr>, (TransportError, Option<Vec<SocketAddr>>)> {
    let host = match url.host() {
        Some(url::Host::Ipv6(a)) => a.to_string(),
        Some(h) => h.to_string(),
        None => return Err((terr(ErrorKind::Dns, "URL has no host"), None)),
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = match pinned {
        Some(p) => p.to_vec(),
        None => match within(deadline, super::resolve::lookup(&host, port)).await {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => return Err((terr(ErrorKind::Dns, format!("{host}: {e}")), None)),
            Err(e) => return Err((e, None)),
        },
    };
    if addrs.is_empty() {
        return Err((
            terr(ErrorKind::Dns, format!("{host}: no addresses")),
            Some(addrs),
        ));
    }
    Ok(addrs)
}

/// A TCP connection to the first address that accepts one; else the last failure.
async fn dial(
    addrs: &[SocketAddr],
    deadline: Instant,
) -> Result<(TcpStream, SocketAddr), TransportError> {
    let mut last = terr(ErrorKind::Connect, "no address tried");
    for a in addrs {
        match within(deadline, TcpStream::connect(a)).await {
            Ok(Ok(s)) => return Ok((s, *a)),
            Ok(Err(e)) => {
                last = TransportError {
                    message: format!("{a}: {e}"),
                    ..io_error(&e)
                }
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The TLS server name of `url`, and the SNI sent (a domain only, never an address).
fn server_name(
    url: &url::Url,
) -> Result<(rustls::pki_types::ServerName<'static>, Option<String>), TransportError> {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            match rustls::pki_types::ServerName::try_from(d.to_string()) {
                Ok(n) => Ok((n, Some(d.to_string()))),
                Err(e) => Err(terr(ErrorKind::Tls, format!("{d}: {e}"))),
            }
        }
        Some(url::Host::Ipv4(a)) => Ok((
            rustls::pki_types::ServerName::IpAddress(std::net::IpAddr::V4(a).into()),
            None,
        )),
        Some(url::Host::Ipv6(a)) => Ok((
            rustls::pki_types::ServerName::IpAddress(std::net::IpAddr::V6(a).into()),
            None,
        )),
        None => Err(terr(ErrorKind::Tls, "no host")),
    }
}

fn host_text(h: &url::Host<&str>) -> String {
    match h {
        url::Host::Ipv6(a) => format!("[{a}]"),
        other => other.to_string(),
    }
}

fn request_head(req: &Request, headers: &[Header]) -> Vec<u8> {
    let mut target = req.url.path().to_string();
    if let Some(q) = req.url.query() {
        target.push('?');
        target.push_str(q);
    }
    let mut out = format!("{} {} HTTP/1.1\r\n", req.method, target).into_bytes();
    for h in headers {
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&h.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

async fn within<F: std::future::Future>(
    deadline: Instant,
    f: F,
) -> Result<F::Output, TransportError> {
    let left = deadline.saturating_duration_since(Instant::now());
    tokio::time::timeout(left, f)
        .await
        .map_err(|_| terr(ErrorKind::Timeout, "per-request timeout elapsed"))
}

/// Bytes [`fill`] makes room for in the connection's buffer before a read.
const READ_CHUNK: usize = 16 * 1024;

/// Read what the connection has into its buffer (appended; at least [`READ_CHUNK`] bytes
/// of room). The bytes go straight into the buffer's spare capacity: no chunk array is
/// zeroed, copied, or carried in the future of every request.
async fn fill(conn: &mut Conn, deadline: Instant) -> Result<usize, TransportError> {
    conn.buf.reserve(READ_CHUNK);
    let read = within(deadline, conn.io.read_buf(&mut conn.buf));
    let got = match conn.stop.as_mut() {
        None => read.await?,
        Some(stop) => {
            if *stop.borrow() {
                return Err(terr(ErrorKind::Io, STOPPED));
            }
            tokio::select! {
                r = read => r?,
                _ = stop.wait_for(|s| *s) => return Err(terr(ErrorKind::Io, STOPPED)),
            }
        }
    };
    got.map_err(|e| io_error(&e))
}

/// How long the head of a stream read beside another request may still take once that
/// request's response arrived: enough to record that the stream was open (its status and
/// headers), never more.
const HEAD_GRACE: Duration = Duration::from_secs(2);

/// Read the response head. On a connection with a stop signal, the signal does not cut
/// the head short at once: the head gets [`HEAD_GRACE`] more (the GET and the request
/// beside it start together, and on a busy host the head may arrive after the other
/// request's response).
async fn read_head(
    conn: &mut Conn,
    deadline: Instant,
) -> Result<(u16, String, String, Vec<Header>), TransportError> {
    let Some(mut stop) = conn.stop.take() else {
        return read_head_now(conn, deadline).await;
    };
    let grace = stop.clone();
    let out = {
        // Boxed: the head future holds a read buffer, and a second copy of it on the
        // stack of every send would grow the future of each request.
        let mut head = Box::pin(read_head_now(conn, deadline));
        tokio::select! {
            r = &mut head => r,
            _ = async { stop.wait_for(|s| *s).await.is_ok() } => {
                match tokio::time::timeout(HEAD_GRACE, &mut head).await {
                    Ok(r) => r,
                    Err(_) => Err(terr(ErrorKind::Io, STOPPED)),
                }
            }
        }
    };
    conn.stop = Some(grace);
    out
}

async fn read_head_now(
    conn: &mut Conn,
    deadline: Instant,
) -> Result<(u16, String, String, Vec<Header>), TransportError> {
    loop {
        if !conn.buf.is_empty() {
            let mut hs = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut resp = httparse::Response::new(&mut hs);
            match resp.parse(&conn.buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let status = resp.code.unwrap_or(0);
                    let version = format!("HTTP/1.{}", resp.version.unwrap_or(1));
                    let reason = resp.reason.unwrap_or("").to_string();
                    let headers = resp
                        .headers
                        .iter()
                        .map(|h| Header::new(h.name, h.value.to_vec()))
                        .collect();
                    conn.buf.drain(..n);
                    return Ok((status, version, reason, headers));
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => {
                    let start =
                        String::from_utf8_lossy(&conn.buf[..conn.buf.len().min(40)]).into_owned();
                    return Err(terr(
                        ErrorKind::Protocol,
                        format!("not an HTTP/1.x response ({e}): {start:?}"),
                    ));
                }
            }
            if conn.buf.len() > MAX_HEAD {
                return Err(terr(
                    ErrorKind::Protocol,
                    format!("response head over {MAX_HEAD} bytes"),
                ));
            }
        }
        if fill(conn, deadline).await? == 0 {
            return Err(terr(
                ErrorKind::Reset,
                if conn.buf.is_empty() {
                    "connection closed before a response".to_string()
                } else {
                    "connection closed inside the response head".to_string()
                },
            ));
        }
    }
}

/// Accumulates a body: keeps up to the cap, hashes and counts everything, and watches
/// an event stream for the awaited JSON-RPC response.
struct BodyReader {
    cap: u64,
    limit: u64,
    kept: Vec<u8>,
    length: u64,
    hash: Sha256,
    sse: Option<(mcp_probe_schema::sse::Parser, Value)>,
    answered: bool,
}

enum Flow {
    More,
    Stop(BodyEnd),
}

impl BodyReader {
    fn new(cap: u64, headers: &[Header], await_id: Option<Value>) -> BodyReader {
        let is_sse =
            mcp_probe_schema::derive::media_type(headers).as_deref() == Some("text/event-stream");
        BodyReader {
            cap,
            limit: cap.saturating_mul(READ_LIMIT_FACTOR).max(1 << 20),
            kept: Vec::new(),
            length: 0,
            hash: Sha256::new(),
            sse: match (is_sse, await_id) {
                (true, Some(id)) => Some((mcp_probe_schema::sse::Parser::new(), id)),
                _ => None,
            },
            answered: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) -> Flow {
        self.length += bytes.len() as u64;
        self.hash.update(bytes);
        let room = self.cap.saturating_sub(self.kept.len() as u64) as usize;
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if let Some((parser, id)) = &mut self.sse {
            for ev in parser.feed(bytes) {
                if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
                    if v.get("id") == Some(id)
                        && (v.get("result").is_some() || v.get("error").is_some())
                    {
                        self.answered = true;
                    }
                }
            }
            if self.answered {
                return Flow::Stop(BodyEnd::StoppedAfterResponse);
            }
        }
        if self.length > self.limit {
            return Flow::Stop(BodyEnd::LimitReached);
        }
        Flow::More
    }

    fn finish(self, end: BodyEnd) -> Body {
        Body {
            bytes: self.kept,
            length: self.length,
            sha256: self.hash.finalize().to_vec(),
            end,
        }
    }
}

fn stored_body(bytes: &[u8], cap: u64, end: BodyEnd) -> Body {
    let keep = (cap as usize).min(bytes.len());
    Body {
        bytes: bytes[..keep].to_vec(),
        length: bytes.len() as u64,
        sha256: request_body_sha256(bytes).to_vec(),
        end,
    }
}

/// The last long request body (longer than [`ONE_WRITE_BELOW`]) this process hashed, and
/// its SHA-256.
static LONG_BODY_SHA256: std::sync::Mutex<Option<(Vec<u8>, [u8; 32])>> =
    std::sync::Mutex::new(None);

/// SHA-256 of a request body. A long body that is byte for byte the last long body hashed
/// gets that body's digest without hashing it again: a fleet sends each target the same
/// 10.2a padded body (1 MiB by default; the same bytes whenever the request id at that
/// point is the same), and comparing 1 MiB costs a tenth of hashing it. At most one body
/// is held, for the life of the process.
fn request_body_sha256(bytes: &[u8]) -> [u8; 32] {
    if bytes.len() <= ONE_WRITE_BELOW {
        return Sha256::digest(bytes).into();
    }
    let memo = || LONG_BODY_SHA256.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((body, digest)) = memo().as_ref() {
        if body.as_slice() == bytes {
            return *digest;
        }
    }
    let digest: [u8; 32] = Sha256::digest(bytes).into();
    *memo() = Some((bytes.to_vec(), digest));
    digest
}

async fn read_length(conn: &mut Conn, r: &mut BodyReader, n: u64, deadline: Instant) -> BodyEnd {
    let mut left = n;
    loop {
        if !conn.buf.is_empty() {
            let take = (left as usize).min(conn.buf.len());
            let chunk: Vec<u8> = conn.buf.drain(..take).collect();
            left -= take as u64;
            if let Flow::Stop(end) = r.push(&chunk) {
                if left == 0 {
                    return BodyEnd::Complete;
                }
                return end;
            }
        }
        if left == 0 {
            return BodyEnd::Complete;
        }
        match fill(conn, deadline).await {
            Ok(0) => {
                return BodyEnd::Error(terr(
                    ErrorKind::Reset,
                    format!("connection closed {left} bytes short"),
                ))
            }
            Ok(_) => {}
            Err(e) => return BodyEnd::Error(e),
        }
    }
}

async fn read_to_eof(conn: &mut Conn, r: &mut BodyReader, deadline: Instant) -> BodyEnd {
    loop {
        if !conn.buf.is_empty() {
            let chunk = std::mem::take(&mut conn.buf);
            if let Flow::Stop(end) = r.push(&chunk) {
                return end;
            }
        }
        match fill(conn, deadline).await {
            Ok(0) => return BodyEnd::Complete,
            Ok(_) => {}
            Err(e) => return BodyEnd::Error(e),
        }
    }
}

async fn read_line(conn: &mut Conn, deadline: Instant) -> Result<Vec<u8>, TransportError> {
    loop {
        if let Some(p) = conn.buf.windows(2).position(|w| w == b"\r\n") {
            let line: Vec<u8> = conn.buf.drain(..p + 2).take(p).collect();
            return Ok(line);
        }
        if conn.buf.len() > 4096 {
            return Err(terr(ErrorKind::Protocol, "chunk-size line over 4096 bytes"));
        }
        if fill(conn, deadline).await? == 0 {
            return Err(terr(
                ErrorKind::Reset,
                "connection closed inside a chunked body",
            ));
        }
    }
}

async fn read_chunked(conn: &mut Conn, r: &mut BodyReader, deadline: Instant) -> BodyEnd {
    loop {
        let line = match read_line(conn, deadline).await {
            Ok(l) => l,
            Err(e) => return BodyEnd::Error(e),
        };
        let text = String::from_utf8_lossy(&line);
        let size_text = text.split(';').next().unwrap_or("").trim();
        let Ok(size) = u64::from_str_radix(size_text, 16) else {
            return BodyEnd::Error(terr(
                ErrorKind::Protocol,
                format!("bad chunk size {size_text:?}"),
            ));
        };
        if size == 0 {
            // Trailers, then the final CRLF.
            loop {
                match read_line(conn, deadline).await {
                    Ok(l) if l.is_empty() => return BodyEnd::Complete,
                    Ok(_) => {}
                    Err(e) => return BodyEnd::Error(e),
                }
            }
        }
        let mut left = size;
        while left > 0 {
            if conn.buf.is_empty() {
                match fill(conn, deadline).await {
                    Ok(0) => {
                        return BodyEnd::Error(terr(
                            ErrorKind::Reset,
                            "connection closed inside a chunk",
                        ))
                    }
                    Ok(_) => {}
                    Err(e) => return BodyEnd::Error(e),
                }
            }
            let take = (left as usize).min(conn.buf.len());
            let chunk: Vec<u8> = conn.buf.drain(..take).collect();
            left -= take as u64;
            if let Flow::Stop(end) = r.push(&chunk) {
                // The stream usually ends right after the response: when its terminator
                // is already buffered, consume it so the connection stays reusable.
                if left == 0 {
                    // Give the terminator a moment if it is not buffered yet; a stream
                    // that stays open costs at most this grace, never the full timeout.
                    let grace = deadline.min(Instant::now() + STREAM_END_GRACE);
                    while conn.buf.len() < 7 && b"\r\n0\r\n\r\n".starts_with(&conn.buf) {
                        match fill(conn, grace).await {
                            Ok(n) if n > 0 => {}
                            _ => break,
                        }
                    }
                    if conn.buf.starts_with(b"\r\n0\r\n\r\n") {
                        conn.buf.drain(..7);
                        return BodyEnd::Complete;
                    }
                }
                return end;
            }
        }
        match read_line(conn, deadline).await {
            Ok(l) if l.is_empty() => {}
            Ok(_) => {
                return BodyEnd::Error(terr(ErrorKind::Protocol, "chunk not followed by CRLF"))
            }
            Err(e) => return BodyEnd::Error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_request_body_digest_is_the_sha256_of_its_bytes_memo_or_not() {
        let sha = |b: &[u8]| -> Vec<u8> { Sha256::digest(b).to_vec() };
        let long = |c: u8, n: usize| vec![c; ONE_WRITE_BELOW + n];
        // Short bodies, long ones twice (the second from the memo), a long one of the
        // same length with one byte changed, and the first again.
        let mut changed = long(b'X', 7);
        changed[ONE_WRITE_BELOW / 2] = b'Y';
        for body in [
            b"{}".to_vec(),
            long(b'X', 7),
            long(b'X', 7),
            changed.clone(),
            long(b'X', 8),
            long(b'X', 7),
            changed,
        ] {
            let stored = stored_body(&body, 4096, BodyEnd::Complete);
            assert_eq!(stored.sha256, sha(&body));
            assert_eq!(stored.length, body.len() as u64);
            assert_eq!(stored.bytes, body[..body.len().min(4096)]);
        }
    }
}
