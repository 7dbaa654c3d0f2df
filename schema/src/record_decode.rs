//! A hand-written decoder for the records collectors write, beside the serde one.
//!
//! [`crate::bundle::decode_record`] decodes a record with `cbor4ii::serde::from_slice`
//! into [`Record`]. That reference decoder is general: every struct and enum goes through
//! serde's visitors, every string through a `Cow` and a peek at each byte. This module
//! reads the forms every collector writes (ciborium's encoding of the model) directly:
//! definite-length maps with text keys, definite-length arrays, definite-length strings,
//! integers, `true`/`false`/`null`, externally tagged enums as a text or a map of one
//! entry. For the hot record kinds (HTTP exchanges, skipped legs, DNS lookups, TLS
//! handshakes, legacy TLS probes) it builds the [`Record`]; for anything else it answers
//! `None` and the caller decodes the record with the reference decoder.
//!
//! The rule that keeps the two decoders' answers the same: [`record`] answers
//! `Some(value)` only for bytes the reference decoder reads to that same value. Each step
//! below accepts a subset of what the matching serde step accepts and reads it to the same
//! value; whatever it does not accept (an indefinite length, an unknown key, a key twice,
//! a missing field without a default, a chunked string, a tag, a float, a JSON value) ends
//! the fast reading with `None`, and the reference decoder then gives the answer, value or
//! error. So acceptance, rejection and errors are the reference decoder's.
//! `tests/record_decode.rs` holds the two to the same answer on every record of the
//! examples, on generated records and on damaged bytes.
//!
//! What each step mirrors (cbor4ii 1.2 `serde::de` and `core::dec`, serde's derive):
//! * an unsigned integer of type `u64`, `u32`, `u16`: major type 0, a head of at most 8,
//!   4, 2 bytes of argument respectively (cbor4ii refuses a longer head for a narrower
//!   type, whatever the value), any argument the head holds (shortest form or not);
//! * `i64`: major type 0 with an argument up to `i64::MAX`, or major type 1 with an
//!   argument `n` up to `i64::MAX`, read as `-1 - n`;
//! * `String`: a definite-length text string whose content is UTF-8; byte fields
//!   (`serde_bytes`): a definite-length byte string;
//! * `bool`: `0xf5`/`0xf4`; `Option<T>`: `null` or `undefined` is `None`, anything else
//!   is `T` (cbor4ii's `deserialize_option`);
//! * `Vec<T>`: a definite-length array of `T`;
//! * a struct: a definite-length map whose keys are text strings naming its fields, each
//!   at most once (serde refuses a field twice); a field without `#[serde(default)]`
//!   must be there (the fast reading does not rely on serde reading a missing `Option`
//!   as `None`); a key naming no field ends the fast reading (serde would skip its value);
//! * an externally tagged enum: a unit variant as a text string naming it; a newtype or
//!   struct variant as a map of exactly one entry written `0xa1` (cbor4ii reads no other
//!   head for it), its key naming the variant.
//!
//! Nesting: a record read here nests about a dozen levels at most, far below cbor4ii's
//! limit of 256, so no depth limit can make the reference refuse what this accepts.

use crate::connectivity::ClientAuth;
use crate::model::{
    Body, BodyEnd, DnsLookup, ErrorKind, Header, HttpExchange, HttpOutcome, HttpRequest,
    HttpResponse, LegacyTlsProbe, Observation, Record, Redaction, TlsHandshake, TransportError,
    TrustCheck, WireBytes, WireText,
};
use crate::vocab::{
    header, COLLECTOR_USER_AGENT, REV_2024_11_05, REV_2025_03_26, REV_2025_06_18, REV_2025_11_25,
    REV_2026_07_28,
};

/// A reading position in the bytes of one record.
struct Reader<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Reader<'a> {
    /// The next byte, not consumed.
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.p).copied()
    }

    /// A definite head of major type `major` whose additional information is at most
    /// `max_ai` (0 to 23 in the byte itself; 24, 25, 26, 27 for 1, 2, 4, 8 bytes of
    /// argument; `max_ai` is at most 27): its argument.
    #[inline(always)]
    fn head(&mut self, major: u8, max_ai: u8) -> Option<u64> {
        let first = *self.b.get(self.p)?;
        if first >> 5 != major {
            return None;
        }
        let ai = first & 0x1f;
        if ai < 24 {
            self.p += 1;
            return Some(u64::from(ai));
        }
        if ai > max_ai {
            return None;
        }
        let n = 1usize << (ai - 24);
        let arg = self.b.get(self.p + 1..self.p + 1 + n)?;
        self.p += 1 + n;
        Some(arg.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
    }

    /// The content of a definite-length string of major type `major` (2 bytes, 3 text).
    #[inline(always)]
    fn string(&mut self, major: u8) -> Option<&'a [u8]> {
        let len = usize::try_from(self.head(major, 27)?).ok()?;
        let end = self.p.checked_add(len)?;
        let s = self.b.get(self.p..end)?;
        self.p = end;
        Some(s)
    }

    /// A map key (or a variant name): a definite-length text string, its bytes. Compared
    /// with field names, which are ASCII: a key equal to one is UTF-8.
    #[inline(always)]
    fn key(&mut self) -> Option<&'a [u8]> {
        self.string(3)
    }

    /// A `String`.
    #[inline(always)]
    fn text(&mut self) -> Option<String> {
        std::str::from_utf8(self.string(3)?).ok().map(str::to_owned)
    }

    /// A [`WireText`]: the text of a `String`, borrowed from [`known`] when it is one of
    /// the values there (exact bytes), owned otherwise.
    #[inline(always)]
    fn wire_text(&mut self) -> Option<WireText> {
        let s = self.string(3)?;
        if let Some(k) = known(s) {
            return Some(WireText::Borrowed(k));
        }
        std::str::from_utf8(s)
            .ok()
            .map(|t| WireText::Owned(t.to_owned()))
    }

    /// A [`WireBytes`]: the bytes of a byte field, borrowed from [`KNOWN_VALUES`] when
    /// they are one of the values there, owned otherwise.
    #[inline(always)]
    fn wire_bytes(&mut self) -> Option<WireBytes> {
        let s = self.string(2)?;
        Some(match known_value(s) {
            Some(k) => WireBytes::Borrowed(k),
            None => WireBytes::Owned(s.to_vec()),
        })
    }

    /// A byte field (`serde_bytes`).
    #[inline(always)]
    fn bytes(&mut self) -> Option<Vec<u8>> {
        self.string(2).map(<[u8]>::to_vec)
    }

    fn u64(&mut self) -> Option<u64> {
        self.head(0, 27)
    }

    fn u32(&mut self) -> Option<u32> {
        // At most 4 bytes of argument: always in range.
        u32::try_from(self.head(0, 26)?).ok()
    }

    fn u16(&mut self) -> Option<u16> {
        // At most 2 bytes of argument: always in range.
        u16::try_from(self.head(0, 25)?).ok()
    }

    fn i64(&mut self) -> Option<i64> {
        match self.peek()? >> 5 {
            0 => i64::try_from(self.head(0, 27)?).ok(),
            1 => i64::try_from(self.head(1, 27)?).ok().map(|n| -1 - n),
            _ => None,
        }
    }

    fn bool(&mut self) -> Option<bool> {
        let v = match self.peek()? {
            0xf4 => false,
            0xf5 => true,
            _ => return None,
        };
        self.p += 1;
        Some(v)
    }

    /// An `Option<T>`: `null` or `undefined` is `None`, anything else is read by `f`.
    #[inline(always)]
    fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.peek()? {
            0xf6 | 0xf7 => {
                self.p += 1;
                Some(None)
            }
            _ => f(self).map(Some),
        }
    }

    /// A `Vec<T>`, each item read by `f`.
    #[inline(always)]
    fn array<T>(&mut self, mut f: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let len = usize::try_from(self.head(4, 27)?).ok()?;
        // Each item takes at least one byte: no more room than the bytes left.
        let mut v = Vec::with_capacity(len.min(self.b.len() - self.p));
        for _ in 0..len {
            v.push(f(self)?);
        }
        Some(v)
    }

    /// The head of a struct: a definite-length map, its number of entries.
    #[inline(always)]
    fn map(&mut self) -> Option<u64> {
        self.head(5, 27)
    }

    /// The head of a newtype or struct variant: `0xa1` (a map of one entry), then the
    /// variant's name.
    #[inline(always)]
    fn variant(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != 0xa1 {
            return None;
        }
        self.p += 1;
        self.key()
    }
}

/// Set `slot` from `f` when it is still empty; `None` (a field twice) otherwise.
#[inline(always)]
fn once<T>(slot: &mut Option<T>, f: impl FnOnce() -> Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(f()?);
    Some(())
}

/// The record at the start of `bytes` and the offset after it, when it is one of the forms
/// this module reads ([`self`]); `None` leaves the answer to the reference decoder.
pub fn record(bytes: &[u8]) -> Option<(Record, usize)> {
    let mut r = Reader { b: bytes, p: 0 };
    let rec = read_record(&mut r)?;
    Some((rec, r.p))
}

fn read_record(r: &mut Reader<'_>) -> Option<Record> {
    let n = r.map()?;
    let (mut seq, mut legs, mut started_at, mut duration_us) = (None, None, None, None);
    let (mut prev, mut observation, mut redactions) = (None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"seq" => once(&mut seq, || r.u64())?,
            b"legs" => once(&mut legs, || r.array(Reader::text))?,
            b"started_at" => once(&mut started_at, || r.i64())?,
            b"duration_us" => once(&mut duration_us, || r.u64())?,
            b"prev" => once(&mut prev, || r.bytes())?,
            b"observation" => once(&mut observation, || read_observation(r))?,
            b"redactions" => once(&mut redactions, || r.array(read_redaction))?,
            _ => return None,
        }
    }
    Some(Record {
        seq: seq?,
        legs: legs?,
        started_at: started_at?,
        duration_us: duration_us?,
        prev: prev?,
        observation: observation?,
        redactions: redactions?,
    })
}

fn read_redaction(r: &mut Reader<'_>) -> Option<Redaction> {
    let n = r.map()?;
    let (mut location, mut what, mut fingerprint) = (None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"location" => once(&mut location, || r.text())?,
            b"what" => once(&mut what, || r.text())?,
            b"fingerprint" => once(&mut fingerprint, || r.text())?,
            _ => return None,
        }
    }
    Some(Redaction {
        location: location?,
        what: what?,
        fingerprint: fingerprint?,
    })
}

fn read_observation(r: &mut Reader<'_>) -> Option<Observation> {
    Some(match r.variant()? {
        b"http" => Observation::Http(read_exchange(r)?),
        b"skipped" => {
            // A struct variant: a map with the one field `reason`.
            let n = r.map()?;
            let mut reason = None;
            for _ in 0..n {
                match r.key()? {
                    b"reason" => once(&mut reason, || r.text())?,
                    _ => return None,
                }
            }
            Observation::Skipped { reason: reason? }
        }
        b"dns" => Observation::Dns(read_dns(r)?),
        b"tls" => Observation::Tls(read_tls(r)?),
        b"legacy_tls" => Observation::LegacyTls(read_legacy_tls(r)?),
        _ => return None,
    })
}

fn read_exchange(r: &mut Reader<'_>) -> Option<HttpExchange> {
    let n = r.map()?;
    let (mut request, mut outcome, mut connection) = (None, None, None);
    let (mut first_attempt, mut refused) = (None, None);
    for _ in 0..n {
        match r.key()? {
            b"request" => once(&mut request, || read_request(r))?,
            b"outcome" => once(&mut outcome, || read_outcome(r))?,
            b"connection" => once(&mut connection, || r.opt(Reader::u64))?,
            b"first_attempt" => once(&mut first_attempt, || r.opt(read_transport_error))?,
            // `MetadataRefusal` holds a JSON value: only its absence is read here.
            b"refused" => once(&mut refused, || r.opt(|_| None::<()>))?,
            _ => return None,
        }
    }
    Some(HttpExchange {
        request: request?,
        outcome: outcome?,
        connection: connection?,
        first_attempt: first_attempt.flatten(),
        refused: None,
    })
}

fn read_request(r: &mut Reader<'_>) -> Option<HttpRequest> {
    let n = r.map()?;
    let (mut method, mut url, mut version, mut headers, mut body) = (None, None, None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"method" => once(&mut method, || r.wire_text())?,
            b"url" => once(&mut url, || r.text())?,
            b"version" => once(&mut version, || r.wire_text())?,
            b"headers" => once(&mut headers, || r.array(read_header))?,
            b"body" => once(&mut body, || read_body(r))?,
            _ => return None,
        }
    }
    Some(HttpRequest {
        method: method?,
        url: url?,
        version: version?,
        headers: headers?,
        body: body?,
    })
}

fn read_header(r: &mut Reader<'_>) -> Option<Header> {
    let n = r.map()?;
    let (mut name, mut value) = (None, None);
    for _ in 0..n {
        match r.key()? {
            b"name" => once(&mut name, || r.wire_text())?,
            b"value" => once(&mut value, || r.wire_bytes())?,
            _ => return None,
        }
    }
    Some(Header {
        name: name?,
        value: value?,
    })
}

fn read_outcome(r: &mut Reader<'_>) -> Option<HttpOutcome> {
    Some(match r.variant()? {
        b"response" => HttpOutcome::Response(read_response(r)?),
        b"error" => HttpOutcome::Error(read_transport_error(r)?),
        _ => return None,
    })
}

fn read_response(r: &mut Reader<'_>) -> Option<HttpResponse> {
    let n = r.map()?;
    let (mut version, mut status, mut reason, mut headers) = (None, None, None, None);
    let (mut body, mut interim) = (None, None);
    for _ in 0..n {
        match r.key()? {
            b"version" => once(&mut version, || r.wire_text())?,
            b"status" => once(&mut status, || r.u16())?,
            b"reason" => once(&mut reason, || r.wire_text())?,
            b"headers" => once(&mut headers, || r.array(read_header))?,
            b"body" => once(&mut body, || read_body(r))?,
            b"interim" => once(&mut interim, || r.u32())?,
            _ => return None,
        }
    }
    Some(HttpResponse {
        version: version?,
        status: status?,
        reason: reason?,
        headers: headers?,
        body: body?,
        interim: interim.unwrap_or(0),
    })
}

fn read_body(r: &mut Reader<'_>) -> Option<Body> {
    let n = r.map()?;
    let (mut bytes, mut length, mut sha256, mut end) = (None, None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"bytes" => once(&mut bytes, || r.bytes())?,
            b"length" => once(&mut length, || r.u64())?,
            b"sha256" => once(&mut sha256, || r.bytes())?,
            b"end" => once(&mut end, || read_body_end(r))?,
            _ => return None,
        }
    }
    Some(Body {
        bytes: bytes?,
        length: length?,
        sha256: sha256?,
        end: end?,
    })
}

fn read_body_end(r: &mut Reader<'_>) -> Option<BodyEnd> {
    if r.peek()? >> 5 == 3 {
        return Some(match r.key()? {
            b"complete" => BodyEnd::Complete,
            b"stopped_after_response" => BodyEnd::StoppedAfterResponse,
            b"limit_reached" => BodyEnd::LimitReached,
            b"head_only" => BodyEnd::HeadOnly,
            _ => return None,
        });
    }
    match r.variant()? {
        b"error" => Some(BodyEnd::Error(read_transport_error(r)?)),
        _ => None,
    }
}

fn read_transport_error(r: &mut Reader<'_>) -> Option<TransportError> {
    let n = r.map()?;
    let (mut kind, mut message) = (None, None);
    for _ in 0..n {
        match r.key()? {
            b"kind" => once(&mut kind, || read_error_kind(r))?,
            b"message" => once(&mut message, || r.text())?,
            _ => return None,
        }
    }
    Some(TransportError {
        kind: kind?,
        message: message?,
    })
}

fn read_error_kind(r: &mut Reader<'_>) -> Option<ErrorKind> {
    Some(match r.key()? {
        b"dns" => ErrorKind::Dns,
        b"connect" => ErrorKind::Connect,
        b"timeout" => ErrorKind::Timeout,
        b"tls_alert" => ErrorKind::TlsAlert,
        b"tls_certificate" => ErrorKind::TlsCertificate,
        b"tls" => ErrorKind::Tls,
        b"reset" => ErrorKind::Reset,
        b"protocol" => ErrorKind::Protocol,
        b"refused_by_guard" => ErrorKind::RefusedByGuard,
        b"io" => ErrorKind::Io,
        b"proxy" => ErrorKind::Proxy,
        _ => return None,
    })
}

fn read_dns(r: &mut Reader<'_>) -> Option<DnsLookup> {
    let n = r.map()?;
    let (mut host, mut addresses, mut error) = (None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"host" => once(&mut host, || r.text())?,
            b"addresses" => once(&mut addresses, || r.array(Reader::text))?,
            b"error" => once(&mut error, || r.opt(read_transport_error))?,
            _ => return None,
        }
    }
    Some(DnsLookup {
        host: host?,
        addresses: addresses?,
        error: error?,
    })
}

fn read_tls(r: &mut Reader<'_>) -> Option<TlsHandshake> {
    let n = r.map()?;
    let (mut connection, mut sni, mut peer, mut version) = (None, None, None, None);
    let (mut cipher_suite, mut alpn, mut chain, mut verification) = (None, None, None, None);
    let (mut error, mut via_proxy, mut client_auth) = (None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"connection" => once(&mut connection, || r.u64())?,
            b"sni" => once(&mut sni, || r.opt(Reader::text))?,
            b"peer" => once(&mut peer, || r.text())?,
            b"version" => once(&mut version, || r.opt(Reader::text))?,
            b"cipher_suite" => once(&mut cipher_suite, || r.opt(Reader::text))?,
            b"alpn" => once(&mut alpn, || r.opt(Reader::bytes))?,
            b"chain" => once(&mut chain, || {
                r.array(|r| r.bytes().map(serde_bytes::ByteBuf::from))
            })?,
            b"verification" => once(&mut verification, || r.array(read_trust_check))?,
            b"error" => once(&mut error, || r.opt(read_transport_error))?,
            b"via_proxy" => once(&mut via_proxy, || r.opt(Reader::text))?,
            b"client_auth" => once(&mut client_auth, || r.opt(read_client_auth))?,
            _ => return None,
        }
    }
    Some(TlsHandshake {
        connection: connection?,
        sni: sni?,
        peer: peer?,
        version: version?,
        cipher_suite: cipher_suite?,
        alpn: alpn?,
        chain: chain?,
        verification: verification?,
        error: error?,
        via_proxy: via_proxy.flatten(),
        client_auth: client_auth.flatten(),
    })
}

fn read_trust_check(r: &mut Reader<'_>) -> Option<TrustCheck> {
    let n = r.map()?;
    let (mut store, mut ok, mut error) = (None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"store" => once(&mut store, || r.text())?,
            b"ok" => once(&mut ok, || r.bool())?,
            b"error" => once(&mut error, || r.opt(Reader::text))?,
            _ => return None,
        }
    }
    Some(TrustCheck {
        store: store?,
        ok: ok?,
        error: error?,
    })
}

fn read_client_auth(r: &mut Reader<'_>) -> Option<ClientAuth> {
    let n = r.map()?;
    let mut sent = None;
    for _ in 0..n {
        match r.key()? {
            b"sent" => once(&mut sent, || r.opt(Reader::text))?,
            _ => return None,
        }
    }
    Some(ClientAuth {
        sent: sent.flatten(),
    })
}

fn read_legacy_tls(r: &mut Reader<'_>) -> Option<LegacyTlsProbe> {
    let n = r.map()?;
    let (mut offered, mut client_hello, mut server_bytes, mut error) = (None, None, None, None);
    for _ in 0..n {
        match r.key()? {
            b"offered" => once(&mut offered, || r.text())?,
            b"client_hello" => once(&mut client_hello, || r.bytes())?,
            b"server_bytes" => once(&mut server_bytes, || r.bytes())?,
            b"error" => once(&mut error, || r.opt(read_transport_error))?,
            _ => return None,
        }
    }
    Some(LegacyTlsProbe {
        offered: offered?,
        client_hello: client_hello?,
        server_bytes: server_bytes?,
        error: error?,
    })
}

/// The header names, methods, versions and reason phrases [`Reader::wire_text`] answers
/// without allocating: those collectors write and the servers they probe send most, each
/// in the exact case written (a name in another case is another text, and is owned).
/// `KNOWN[n]` holds those of `n` bytes, so a text is compared only with the few known
/// values of its length.
const KNOWN: [&[&str]; 22] = [
    &[],
    &[],
    &["OK"],
    &["GET", "PUT"],
    &[
        header::HOST,
        "Date",
        "date",
        "POST",
        "Vary",
        "vary",
        "HEAD",
        "host",
    ],
    &["allow", "Allow", "PATCH"],
    &[
        header::ACCEPT,
        "server",
        "Server",
        header::ORIGIN,
        "DELETE",
        "accept",
        header::COOKIE,
        "origin",
    ],
    &["OPTIONS", "Created"],
    &[
        "HTTP/1.1",
        "HTTP/1.0",
        header::NAME,
        "Accepted",
        header::LOCATION,
        "location",
    ],
    &["Not Found", "Forbidden"],
    &[
        header::USER_AGENT,
        header::CONNECTION,
        "connection",
        header::METHOD,
        "Keep-Alive",
        header::SET_COOKIE,
        "No Content",
        "set-cookie",
        "user-agent",
        "keep-alive",
    ],
    &["Bad Request"],
    &[header::CONTENT_TYPE, "content-type", "Unauthorized"],
    &[
        "cache-control",
        header::CACHE_CONTROL,
        header::LAST_EVENT_ID,
        header::AUTHORIZATION,
        "authorization",
    ],
    &[
        header::CONTENT_LENGTH,
        "content-length",
        "mcp-session-id",
        header::SESSION_ID,
        "Not Acceptable",
    ],
    &[],
    &["www-authenticate", header::WWW_AUTHENTICATE],
    &[
        header::TRANSFER_ENCODING,
        "x-accel-buffering",
        "transfer-encoding",
        "X-Accel-Buffering",
    ],
    &["Method Not Allowed"],
    &[],
    &[
        header::PROTOCOL_VERSION,
        "mcp-protocol-version",
        "Mcp-Protocol-Version",
    ],
    &["Internal Server Error"],
];

/// The value of [`KNOWN`] whose bytes are `s`, if there is one.
#[inline(always)]
fn known(s: &[u8]) -> Option<&'static str> {
    KNOWN
        .get(s.len())?
        .iter()
        .copied()
        .find(|k| same(k.as_bytes(), s))
}

/// The header values [`Reader::wire_bytes`] answers without allocating (besides
/// [`COLLECTOR_USER_AGENT`]): the media types, protocol revisions, `Mcp-Method` values, connection
/// and cache directives requests and responses carry most, by length like [`KNOWN`].
const KNOWN_VALUES: [&[&[u8]]; 36] = [
    &[],
    &[b"0", b"*"],
    &[b"no"],
    &[b"GET"],
    &[b"ping", b"POST", b"gzip"],
    &[b"close"],
    &[],
    &[b"chunked", b"uvicorn"],
    &[b"no-cache", b"no-store", b"identity"],
    &[b"timeout=5"],
    &[
        b"keep-alive",
        REV_2026_07_28.as_bytes(),
        REV_2025_11_25.as_bytes(),
        REV_2025_06_18.as_bytes(),
        REV_2025_03_26.as_bytes(),
        REV_2024_11_05.as_bytes(),
        b"tools/list",
        b"tools/call",
        b"initialize",
    ],
    &[b"prompts/get"],
    &[b"prompts/list"],
    &[],
    &[b"resources/list", b"resources/read"],
    &[b"server/discover"],
    &[b"application/json"],
    &[b"text/event-stream"],
    &[],
    &[],
    &[],
    &[],
    &[b"no-cache, no-transform"],
    &[],
    &[b"resources/templates/list", b"text/html; charset=utf-8"],
    &[b"text/plain; charset=utf-8"],
    &[],
    &[],
    &[],
    &[],
    &[],
    &[b"application/json; charset=utf-8"],
    &[],
    &[],
    &[],
    &[b"application/json, text/event-stream"],
];

/// The value of [`KNOWN_VALUES`] or [`COLLECTOR_USER_AGENT`] equal to `s`, if there is one.
#[inline(always)]
fn known_value(s: &[u8]) -> Option<&'static [u8]> {
    if s == COLLECTOR_USER_AGENT.as_bytes() {
        return Some(COLLECTOR_USER_AGENT.as_bytes());
    }
    KNOWN_VALUES
        .get(s.len())?
        .iter()
        .copied()
        .find(|k| same(k, s))
}

/// `k == s` for two slices of the same length, the first and last bytes compared before
/// the whole (most candidates of a text's length differ there, and cost no call to the
/// comparison of the whole).
#[inline(always)]
fn same(k: &[u8], s: &[u8]) -> bool {
    k.first() == s.first() && k.last() == s.last() && k == s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_texts_sit_at_their_length() {
        for (n, texts) in KNOWN.iter().enumerate() {
            for t in *texts {
                assert_eq!(t.len(), n, "{t}");
                assert_eq!(known(t.as_bytes()), Some(*t));
            }
        }
        for (n, values) in KNOWN_VALUES.iter().enumerate() {
            for v in *values {
                assert_eq!(v.len(), n, "{v:?}");
                assert_eq!(known_value(v), Some(*v));
            }
        }
        assert_eq!(
            known_value(COLLECTOR_USER_AGENT.as_bytes()),
            Some(COLLECTOR_USER_AGENT.as_bytes())
        );
        // The names the collector sends and the revisions it speaks, as the vocabulary
        // spells them, are answered without allocating.
        for name in [
            header::PROTOCOL_VERSION,
            header::SESSION_ID,
            header::METHOD,
            header::NAME,
            header::AUTHORIZATION,
            header::COOKIE,
            header::SET_COOKIE,
            header::WWW_AUTHENTICATE,
            header::CONTENT_TYPE,
            header::ACCEPT,
            header::ORIGIN,
            header::LOCATION,
            header::LAST_EVENT_ID,
            header::HOST,
            header::USER_AGENT,
            header::CONTENT_LENGTH,
            header::TRANSFER_ENCODING,
            header::CONNECTION,
            header::CACHE_CONTROL,
        ] {
            assert_eq!(known(name.as_bytes()), Some(name), "{name}");
        }
        for rev in crate::vocab::REVISIONS {
            assert!(known_value(rev.as_bytes()).is_some(), "{rev}");
        }
        assert_eq!(known_value(b"Application/json"), None);
        assert_eq!(known(b"content-Type"), None);
        assert_eq!(known(b""), None);
    }
}
