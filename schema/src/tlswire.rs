//! TLS wire bytes of the legacy-version probe: the hand-written TLS 1.0/1.1
//! ClientHello the collector sends, and the reading of the server's first bytes that both
//! the collector (to know when it has read enough) and the grader (to decide) use.
//!
//! Why by hand: rustls speaks only TLS 1.2 and 1.3, and a real TLS 1.0 handshake would
//! need OpenSSL at security level 0. Acceptance is decided by the server's *first* answer
//! to a ClientHello that offers only the old version, so no cryptography is needed: a
//! ServerHello at the offered version is acceptance, an alert or a closed connection is
//! refusal, anything else is not an answer about TLS versions at all.
//!
//! [`parse_server`] reads untrusted bytes: it never panics and never allocates more than
//! the input (property-tested in this module and fuzzed by `schema/fuzz`, target
//! `tlswire`).

use std::fmt;

/// SSL 3.0 on the wire.
pub const SSL3_0: u16 = 0x0300;
/// TLS 1.0 on the wire.
pub const TLS1_0: u16 = 0x0301;
/// TLS 1.1 on the wire.
pub const TLS1_1: u16 = 0x0302;
/// TLS 1.2 on the wire.
pub const TLS1_2: u16 = 0x0303;
/// TLS 1.3 on the wire (only ever inside `supported_versions`).
pub const TLS1_3: u16 = 0x0304;

/// Record content types.
pub mod content {
    /// ChangeCipherSpec.
    pub const CHANGE_CIPHER_SPEC: u8 = 0x14;
    /// Alert.
    pub const ALERT: u8 = 0x15;
    /// Handshake.
    pub const HANDSHAKE: u8 = 0x16;
    /// Application data.
    pub const APPLICATION_DATA: u8 = 0x17;
}

/// Handshake message types used here.
pub mod handshake {
    /// ClientHello.
    pub const CLIENT_HELLO: u8 = 0x01;
    /// ServerHello.
    pub const SERVER_HELLO: u8 = 0x02;
}

/// The suites offered in the legacy ClientHello, in preference order: the ECDHE and RSA
/// suites valid in TLS 1.0/1.1 (they covered every server tried), then the
/// renegotiation SCSV.
pub const LEGACY_SUITES: [u16; 8] = [
    0xc014, 0xc013, 0xc00a, 0xc009, 0x0035, 0x002f, 0x000a, 0x00ff,
];

/// Groups offered in `supported_groups`: x25519, secp256r1, secp384r1.
pub const LEGACY_GROUPS: [u16; 3] = [0x001d, 0x0017, 0x0018];

/// Extension types used here.
pub mod ext {
    /// `server_name` (RFC 6066).
    pub const SERVER_NAME: u16 = 0x0000;
    /// `supported_groups` (RFC 8422, formerly elliptic_curves).
    pub const SUPPORTED_GROUPS: u16 = 0x000a;
    /// `ec_point_formats` (RFC 8422).
    pub const EC_POINT_FORMATS: u16 = 0x000b;
    /// `supported_versions` (RFC 8446; never sent by the legacy probe).
    pub const SUPPORTED_VERSIONS: u16 = 0x002b;
}

/// Largest TLSCiphertext fragment (RFC 5246 §6.2.3: 2^14 + 2048).
pub const MAX_RECORD: usize = (1 << 14) + 2048;

/// Bytes of [`ServerAnswer::NotTls`] kept for display.
const NOT_TLS_KEEP: usize = 16;

/// The id this crate uses for a wire version (`TLSv1_0` … `TLSv1_3`, `SSLv3`), the
/// spelling rustls uses for the modern TLS record, so both records read alike.
pub fn version_id(v: u16) -> Option<&'static str> {
    match v {
        SSL3_0 => Some("SSLv3"),
        TLS1_0 => Some("TLSv1_0"),
        TLS1_1 => Some("TLSv1_1"),
        TLS1_2 => Some("TLSv1_2"),
        TLS1_3 => Some("TLSv1_3"),
        _ => None,
    }
}

/// The wire version of an id from [`version_id`].
pub fn version_from_id(id: &str) -> Option<u16> {
    [SSL3_0, TLS1_0, TLS1_1, TLS1_2, TLS1_3]
        .into_iter()
        .find(|v| version_id(*v) == Some(id))
}

/// A version for humans: `TLSv1_0`, or `0x0305` when unknown.
pub fn version_text(v: u16) -> String {
    version_id(v).map_or_else(|| format!("0x{v:04x}"), str::to_string)
}

/// IANA names of the suites the probe offers (others print as hex).
pub fn suite_name(s: u16) -> Option<&'static str> {
    Some(match s {
        0xc014 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
        0xc013 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        0xc00a => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        0xc009 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        0x0035 => "TLS_RSA_WITH_AES_256_CBC_SHA",
        0x002f => "TLS_RSA_WITH_AES_128_CBC_SHA",
        0x000a => "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        0x00ff => "TLS_EMPTY_RENEGOTIATION_INFO_SCSV",
        _ => return None,
    })
}

/// A suite for humans: its IANA name, or `0xc02f`.
pub fn suite_text(s: u16) -> String {
    suite_name(s).map_or_else(|| format!("0x{s:04x}"), str::to_string)
}

/// Alert description names (RFC 5246 §7.2, RFC 8446 §6, RFC 6066, RFC 7301, RFC 7507).
pub fn alert_name(description: u8) -> Option<&'static str> {
    Some(match description {
        0 => "close_notify",
        10 => "unexpected_message",
        20 => "bad_record_mac",
        21 => "decryption_failed",
        22 => "record_overflow",
        30 => "decompression_failure",
        40 => "handshake_failure",
        41 => "no_certificate",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        51 => "decrypt_error",
        60 => "export_restriction",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        86 => "inappropriate_fallback",
        90 => "user_canceled",
        100 => "no_renegotiation",
        109 => "missing_extension",
        110 => "unsupported_extension",
        111 => "certificate_unobtainable",
        112 => "unrecognized_name",
        113 => "bad_certificate_status_response",
        114 => "bad_certificate_hash_value",
        115 => "unknown_psk_identity",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => return None,
    })
}

/// True when `name` is sent as `server_name`: a DNS host name, never an IP literal
/// (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not permitted").
pub fn sni_allowed(name: &str) -> bool {
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    !name.is_empty()
        && name.len() <= 255
        && bare.parse::<std::net::IpAddr>().is_err()
        && name.bytes().all(|b| b.is_ascii_graphic())
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_u24(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_be_bytes()[1..]);
}

/// One TLS record holding a ClientHello that offers only `client_version` (`0x0301` or
/// `0x0302`), with `random`, an empty session id, [`LEGACY_SUITES`], null compression and
/// the extensions `server_name` (only when [`sni_allowed`]), `supported_groups` and
/// `ec_point_formats` (uncompressed). No `supported_versions` or `signature_algorithms`:
/// they belong to TLS 1.2/1.3.
pub fn client_hello(client_version: u16, random: [u8; 32], server_name: Option<&str>) -> Vec<u8> {
    let mut exts = Vec::new();
    if let Some(name) = server_name.filter(|n| sni_allowed(n)) {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let n = name.len();
        put_u16(&mut exts, ext::SERVER_NAME);
        put_u16(&mut exts, (n + 5) as u16);
        put_u16(&mut exts, (n + 3) as u16); // server_name_list
        exts.push(0); // host_name
        put_u16(&mut exts, n as u16);
        exts.extend_from_slice(name.as_bytes());
    }
    put_u16(&mut exts, ext::SUPPORTED_GROUPS);
    put_u16(&mut exts, (2 + 2 * LEGACY_GROUPS.len()) as u16);
    put_u16(&mut exts, (2 * LEGACY_GROUPS.len()) as u16);
    for g in LEGACY_GROUPS {
        put_u16(&mut exts, g);
    }
    put_u16(&mut exts, ext::EC_POINT_FORMATS);
    put_u16(&mut exts, 2);
    exts.extend_from_slice(&[1, 0]); // one format: uncompressed

    let mut body = Vec::new();
    put_u16(&mut body, client_version);
    body.extend_from_slice(&random);
    body.push(0); // session id: empty
    put_u16(&mut body, (2 * LEGACY_SUITES.len()) as u16);
    for s in LEGACY_SUITES {
        put_u16(&mut body, s);
    }
    body.extend_from_slice(&[1, 0]); // compression: null only
    put_u16(&mut body, exts.len() as u16);
    body.extend_from_slice(&exts);

    let mut hs = vec![handshake::CLIENT_HELLO];
    put_u24(&mut hs, body.len());
    hs.extend_from_slice(&body);

    let mut rec = vec![content::HANDSHAKE];
    put_u16(&mut rec, TLS1_0); // record version 0x0301, as every client sends it
    put_u16(&mut rec, hs.len() as u16);
    rec.extend_from_slice(&hs);
    rec
}

/// What [`parse_client_hello`] reads back from a recorded ClientHello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHelloInfo {
    /// Record-layer version.
    pub record_version: u16,
    /// `client_version`: the highest version offered.
    pub client_version: u16,
    /// Offered suites, in order.
    pub suites: Vec<u16>,
    /// `server_name`, when sent.
    pub server_name: Option<String>,
}

/// Read a ClientHello record back (the grader checks the recorded probe offered what its
/// leg says). `None` when the bytes are not one complete ClientHello record.
pub fn parse_client_hello(bytes: &[u8]) -> Option<ClientHelloInfo> {
    let mut r = Reader::new(bytes);
    if r.u8()? != content::HANDSHAKE {
        return None;
    }
    let record_version = r.u16()?;
    let mut rec = Reader::new(r.vec16()?);
    if rec.u8()? != handshake::CLIENT_HELLO {
        return None;
    }
    let mut body = Reader::new(rec.vec24()?);
    let client_version = body.u16()?;
    body.take(32)?;
    body.vec8()?; // session id
    let mut suites_r = Reader::new(body.vec16()?);
    let mut suites = Vec::new();
    while !suites_r.is_empty() {
        suites.push(suites_r.u16()?);
    }
    body.vec8()?; // compression methods
    let mut server_name = None;
    if !body.is_empty() {
        let mut exts = Reader::new(body.vec16()?);
        while !exts.is_empty() {
            let ty = exts.u16()?;
            let mut data = Reader::new(exts.vec16()?);
            if ty == ext::SERVER_NAME {
                let mut list = Reader::new(data.vec16()?);
                if list.u8()? == 0 {
                    server_name = Some(String::from_utf8_lossy(list.vec16()?).into_owned());
                }
            }
        }
    }
    Some(ClientHelloInfo {
        record_version,
        client_version,
        suites,
        server_name,
    })
}

/// The server's first answer to a ClientHello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerAnswer {
    /// No byte at all: the server closed the connection (Python's `ssl` with minimum TLS
    /// 1.2 does this). A refusal.
    Closed,
    /// A ServerHello. `version` is its `server_version`; `supported_version` the value of
    /// a `supported_versions` extension (a TLS 1.3 ServerHello), if present.
    ServerHello {
        /// Record-layer version.
        record_version: u16,
        /// `server_version`.
        version: u16,
        /// The chosen suite.
        cipher_suite: u16,
        /// `supported_versions` from the extensions, if any.
        supported_version: Option<u16>,
    },
    /// An alert record: `level` (1 warning, 2 fatal) and `description`.
    Alert {
        /// 1 warning, 2 fatal.
        level: u8,
        /// See [`alert_name`].
        description: u8,
    },
    /// A handshake message other than ServerHello came first.
    OtherHandshake {
        /// Its handshake type.
        msg_type: u8,
    },
    /// A TLS record of another content type came first (ChangeCipherSpec, data).
    UnexpectedRecord {
        /// Its content type.
        content_type: u8,
    },
    /// The bytes are not a TLS record (a plaintext HTTP port answers `HTTP/`).
    NotTls {
        /// The first bytes (at most 16).
        first_bytes: Vec<u8>,
    },
    /// TLS so far, but the answer ends before it can be read.
    Truncated {
        /// Bytes present.
        have: usize,
        /// Bytes needed at least to read on (a lower bound).
        need: usize,
    },
    /// A complete TLS record whose contents do not parse.
    Malformed {
        /// What was wrong.
        reason: &'static str,
    },
}

impl ServerAnswer {
    /// False only for [`ServerAnswer::Truncated`]: the collector reads until this holds.
    pub fn is_complete(&self) -> bool {
        !matches!(self, ServerAnswer::Truncated { .. })
    }

    /// The version the server effectively chose, for a ServerHello (the
    /// `supported_versions` value when present, else `server_version`).
    pub fn negotiated(&self) -> Option<u16> {
        match self {
            ServerAnswer::ServerHello {
                version,
                supported_version,
                ..
            } => Some(supported_version.unwrap_or(*version)),
            _ => None,
        }
    }
}

impl fmt::Display for ServerAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerAnswer::Closed => f.write_str("connection closed without a byte"),
            ServerAnswer::ServerHello {
                version,
                cipher_suite,
                supported_version,
                ..
            } => {
                write!(
                    f,
                    "ServerHello {} with {}",
                    version_text(*version),
                    suite_text(*cipher_suite)
                )?;
                if let Some(v) = supported_version {
                    write!(f, " (supported_versions {})", version_text(*v))?;
                }
                Ok(())
            }
            ServerAnswer::Alert { level, description } => {
                let lvl = match level {
                    1 => "warning".to_string(),
                    2 => "fatal".to_string(),
                    l => format!("level {l}"),
                };
                match alert_name(*description) {
                    Some(n) => write!(f, "{lvl} alert {description} {n}"),
                    None => write!(f, "{lvl} alert {description}"),
                }
            }
            ServerAnswer::OtherHandshake { msg_type } => {
                write!(
                    f,
                    "handshake message type {msg_type} instead of a ServerHello"
                )
            }
            ServerAnswer::UnexpectedRecord { content_type } => {
                write!(
                    f,
                    "TLS record of content type {content_type} before any handshake"
                )
            }
            ServerAnswer::NotTls { first_bytes } => {
                f.write_str("not TLS: the port answered ")?;
                if first_bytes
                    .iter()
                    .all(|b| b.is_ascii_graphic() || *b == b' ')
                {
                    write!(f, "{:?}", String::from_utf8_lossy(first_bytes))
                } else {
                    let hex: Vec<String> = first_bytes.iter().map(|b| format!("{b:02x}")).collect();
                    write!(f, "bytes {}", hex.join(" "))
                }
            }
            ServerAnswer::Truncated { have, need } => {
                write!(
                    f,
                    "TLS answer cut short ({have} bytes, at least {need} needed)"
                )
            }
            ServerAnswer::Malformed { reason } => write!(f, "malformed TLS answer: {reason}"),
        }
    }
}

/// A bounds-checked cursor: every read returns `None` past the end, never panics.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b }
    }
    fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    /// A vector with a 1-byte length prefix.
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }
    /// A vector with a 2-byte length prefix.
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
    /// A vector with a 3-byte length prefix.
    fn vec24(&mut self) -> Option<&'a [u8]> {
        let n = self.u24()?;
        self.take(n)
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]))
    }
}

/// True when `b` can begin a TLS record: content type 0x14…0x17 and major version 3.
fn looks_like_record(b: &[u8]) -> bool {
    match b {
        [] => true,
        [t] => (content::CHANGE_CIPHER_SPEC..=content::APPLICATION_DATA).contains(t),
        [t, major, ..] => {
            (content::CHANGE_CIPHER_SPEC..=content::APPLICATION_DATA).contains(t) && *major == 3
        }
    }
}

/// Read the server's first answer from the bytes received after the ClientHello.
///
/// * no bytes → [`ServerAnswer::Closed`];
/// * first byte outside 0x14…0x17 or second byte not 0x03 → [`ServerAnswer::NotTls`];
/// * an alert record → [`ServerAnswer::Alert`] (its first two payload bytes);
/// * handshake records → the first handshake message, reassembled across records when
///   the server fragments it; a ServerHello gives version and suite;
/// * not enough bytes for any of that → [`ServerAnswer::Truncated`].
pub fn parse_server(bytes: &[u8]) -> ServerAnswer {
    if bytes.is_empty() {
        return ServerAnswer::Closed;
    }
    if !looks_like_record(bytes) {
        return ServerAnswer::NotTls {
            first_bytes: bytes[..bytes.len().min(NOT_TLS_KEEP)].to_vec(),
        };
    }
    let truncated = |need: usize| ServerAnswer::Truncated {
        have: bytes.len(),
        need,
    };
    if bytes.len() < 5 {
        return truncated(5);
    }
    let content_type = bytes[0];
    let record_version = u16::from_be_bytes([bytes[1], bytes[2]]);
    let len = usize::from(u16::from_be_bytes([bytes[3], bytes[4]]));
    if len > MAX_RECORD {
        return ServerAnswer::Malformed {
            reason: "record length over 2^14 + 2048",
        };
    }
    match content_type {
        content::ALERT => {
            // The two alert bytes are all that is needed, even from a longer record.
            if len < 2 {
                return if bytes.len() >= 5 + len {
                    ServerAnswer::Malformed {
                        reason: "alert record shorter than 2 bytes",
                    }
                } else {
                    truncated(5 + len)
                };
            }
            if bytes.len() < 7 {
                return truncated(7);
            }
            ServerAnswer::Alert {
                level: bytes[5],
                description: bytes[6],
            }
        }
        content::HANDSHAKE => first_handshake(bytes, record_version),
        other => ServerAnswer::UnexpectedRecord {
            content_type: other,
        },
    }
}

/// Total length (header included) of the handshake message starting `msg`, once its
/// 4-byte header is there.
fn message_len(msg: &[u8]) -> Option<usize> {
    match msg {
        [_, a, b, c, ..] => {
            Some(4 + ((usize::from(*a) << 16) | (usize::from(*b) << 8) | usize::from(*c)))
        }
        _ => None,
    }
}

/// Reassemble the first handshake message from consecutive handshake records and read it.
fn first_handshake(bytes: &[u8], record_version: u16) -> ServerAnswer {
    let mut msg: Vec<u8> = Vec::new();
    let mut rest = bytes;
    loop {
        if let Some(need) = message_len(&msg).filter(|n| msg.len() >= *n) {
            return read_handshake(&msg[..need], record_version);
        }
        let read = bytes.len() - rest.len();
        if rest.len() < 5 {
            // A lower bound on what is still needed: the next record's header, and when
            // the message header is known, the message bytes still missing.
            let missing = message_len(&msg).map_or(0, |n| n - msg.len());
            return ServerAnswer::Truncated {
                have: bytes.len(),
                need: read + 5 + missing,
            };
        }
        if rest[0] != content::HANDSHAKE || rest[1] != 3 {
            return ServerAnswer::Malformed {
                reason: "handshake message interrupted by another record",
            };
        }
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if len > MAX_RECORD {
            return ServerAnswer::Malformed {
                reason: "record length over 2^14 + 2048",
            };
        }
        if len == 0 {
            return ServerAnswer::Malformed {
                reason: "empty handshake record",
            };
        }
        if rest.len() < 5 + len {
            // Use what is there: a ServerHello usually fits in the part already read.
            msg.extend_from_slice(&rest[5..]);
            if let Some(need) = message_len(&msg).filter(|n| msg.len() >= *n) {
                return read_handshake(&msg[..need], record_version);
            }
            return ServerAnswer::Truncated {
                have: bytes.len(),
                need: read + 5 + len,
            };
        }
        msg.extend_from_slice(&rest[5..5 + len]);
        rest = &rest[5 + len..];
    }
}

/// Read one complete handshake message (header included).
fn read_handshake(msg: &[u8], record_version: u16) -> ServerAnswer {
    let msg_type = msg[0];
    if msg_type != handshake::SERVER_HELLO {
        return ServerAnswer::OtherHandshake { msg_type };
    }
    let malformed = ServerAnswer::Malformed {
        reason: "ServerHello too short for its fields",
    };
    let mut r = Reader::new(&msg[4..]);
    let Some(version) = r.u16() else {
        return malformed;
    };
    if r.take(32).is_none() {
        return malformed;
    }
    let Some(sid_len) = r.u8() else {
        return malformed;
    };
    if r.take(usize::from(sid_len)).is_none() {
        return malformed;
    }
    let Some(cipher_suite) = r.u16() else {
        return malformed;
    };
    // Compression method, then optional extensions; a bad extension block does not undo
    // the version and suite already read.
    let mut supported_version = None;
    if r.u8().is_some() && !r.is_empty() {
        if let Some(block) = r.vec16() {
            let mut exts = Reader::new(block);
            while let (Some(ty), Some(n)) = (exts.u16(), exts.u16()) {
                let Some(data) = exts.take(usize::from(n)) else {
                    break;
                };
                if ty == ext::SUPPORTED_VERSIONS && data.len() == 2 {
                    supported_version = Some(u16::from_be_bytes([data[0], data[1]]));
                }
            }
        }
    }
    ServerAnswer::ServerHello {
        record_version,
        version,
        cipher_suite,
        supported_version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A ServerHello record as nginx sends it to the legacy probe: version,
    /// random, a 32-byte session id, suite 0xc014, null compression, renegotiation_info.
    fn server_hello(version: u16, suite: u16) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&version.to_be_bytes());
        body.extend_from_slice(&[0x5a; 32]);
        body.push(32);
        body.extend_from_slice(&[0x11; 32]);
        body.extend_from_slice(&suite.to_be_bytes());
        body.push(0);
        body.extend_from_slice(&[0x00, 0x05, 0xff, 0x01, 0x00, 0x01, 0x00]);
        let mut hs = vec![2, 0, 0, body.len() as u8];
        hs.extend_from_slice(&body);
        let mut rec = vec![0x16, 0x03, 0x01, 0, hs.len() as u8];
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn server_hello_at_tls1_0() {
        let mut rec = server_hello(TLS1_0, 0xc014);
        // nginx follows with Certificate etc. in further records.
        rec.extend_from_slice(&[0x16, 0x03, 0x01, 0x00, 0x04, 0x0b, 0, 0, 0]);
        let a = parse_server(&rec);
        assert_eq!(
            a,
            ServerAnswer::ServerHello {
                record_version: TLS1_0,
                version: TLS1_0,
                cipher_suite: 0xc014,
                supported_version: None
            }
        );
        assert_eq!(a.negotiated(), Some(TLS1_0));
        assert_eq!(
            a.to_string(),
            "ServerHello TLSv1_0 with TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"
        );
    }

    #[test]
    fn server_hello_at_tls1_1() {
        let a = parse_server(&server_hello(TLS1_1, 0xc014));
        assert_eq!(a.negotiated(), Some(TLS1_1));
    }

    #[test]
    fn alerts_of_the_lab() {
        // modern nginx: fatal protocol_version; expired/self-signed: fatal internal_error.
        let a = parse_server(&[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46]);
        assert_eq!(
            a,
            ServerAnswer::Alert {
                level: 2,
                description: 70
            }
        );
        assert_eq!(a.to_string(), "fatal alert 70 protocol_version");
        let b = parse_server(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50]);
        assert_eq!(b.to_string(), "fatal alert 80 internal_error");
        let c = parse_server(&[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28]);
        assert_eq!(c.to_string(), "fatal alert 40 handshake_failure");
        assert_eq!(alert_name(70), Some("protocol_version"));
        assert_eq!(alert_name(80), Some("internal_error"));
        assert_eq!(alert_name(40), Some("handshake_failure"));
        assert_eq!(alert_name(255), None);
    }

    #[test]
    fn closed_and_plaintext() {
        assert_eq!(parse_server(b""), ServerAnswer::Closed);
        let a = parse_server(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        assert_eq!(
            a,
            ServerAnswer::NotTls {
                first_bytes: b"HTTP/1.1 400 Bad".to_vec()
            }
        );
        assert!(a.to_string().contains("\"HTTP/1.1 400 Bad\""), "{a}");
        // Right content type, wrong major version.
        assert!(matches!(
            parse_server(&[0x16, 0x02, 0x00]),
            ServerAnswer::NotTls { .. }
        ));
        assert!(matches!(parse_server(&[0x48]), ServerAnswer::NotTls { .. }));
    }

    #[test]
    fn truncated_and_malformed() {
        assert_eq!(
            parse_server(&[0x15, 0x03]),
            ServerAnswer::Truncated { have: 2, need: 5 }
        );
        assert_eq!(
            parse_server(&[0x15, 0x03, 0x01, 0x00, 0x02, 0x02]),
            ServerAnswer::Truncated { have: 6, need: 7 }
        );
        assert_eq!(
            parse_server(&[0x15, 0x03, 0x01, 0x00, 0x01, 0x02]),
            ServerAnswer::Malformed {
                reason: "alert record shorter than 2 bytes"
            }
        );
        let hello = server_hello(TLS1_0, 0xc014);
        for cut in 1..hello.len() {
            let a = parse_server(&hello[..cut]);
            assert!(!a.is_complete(), "cut {cut}: {a:?}");
        }
        assert!(matches!(
            parse_server(&[0x17, 0x03, 0x03, 0x00, 0x01, 0x00]),
            ServerAnswer::UnexpectedRecord { content_type: 0x17 }
        ));
        assert!(matches!(
            parse_server(&[0x16, 0x03, 0x03, 0x00, 0x04, 0x0b, 0, 0, 0]),
            ServerAnswer::OtherHandshake { msg_type: 0x0b }
        ));
        // A complete ServerHello message too short for its fields.
        assert!(matches!(
            parse_server(&[0x16, 0x03, 0x01, 0x00, 0x06, 0x02, 0, 0, 2, 0x03, 0x01]),
            ServerAnswer::Malformed { .. }
        ));
    }

    #[test]
    fn server_hello_fragmented_across_records() {
        let rec = server_hello(TLS1_0, 0x002f);
        let payload = &rec[5..];
        let mut split = Vec::new();
        for part in payload.chunks(10) {
            split.extend_from_slice(&[0x16, 0x03, 0x01, 0, part.len() as u8]);
            split.extend_from_slice(part);
        }
        assert_eq!(parse_server(&split).negotiated(), Some(TLS1_0));
        assert!(!parse_server(&split[..split.len() - 3]).is_complete());
    }

    #[test]
    fn supported_versions_wins() {
        let mut rec = server_hello(TLS1_2, 0x1302);
        // Replace the renegotiation_info extension with supported_versions 0x0304.
        let n = rec.len();
        rec[n - 7..].copy_from_slice(&[0x00, 0x06, 0x00, 0x2b, 0x00, 0x02, 0x03]);
        rec.push(0x04);
        rec[4] += 1;
        rec[8] += 1;
        let a = parse_server(&rec);
        assert_eq!(a.negotiated(), Some(TLS1_3), "{a:?}");
    }

    #[test]
    fn client_hello_as_lab_md_describes() {
        let h = client_hello(TLS1_0, [7; 32], None);
        assert_eq!(&h[..3], &[0x16, 0x03, 0x01]);
        assert_eq!(usize::from(u16::from_be_bytes([h[3], h[4]])), h.len() - 5);
        assert_eq!(h[5], 0x01);
        assert_eq!(&h[9..11], &[0x03, 0x01]);
        assert_eq!(&h[11..43], &[7; 32]);
        assert_eq!(h[43], 0, "empty session id");
        let info = parse_client_hello(&h).expect("parses");
        assert_eq!(info.client_version, TLS1_0);
        assert_eq!(info.suites, LEGACY_SUITES.to_vec());
        assert_eq!(info.server_name, None);
        // No supported_versions, no signature_algorithms.
        assert!(!h.windows(2).any(|w| w == [0x00, 0x2b]));
        assert!(!h.windows(2).any(|w| w == [0x00, 0x0d]));

        let h = client_hello(TLS1_1, [0; 32], Some("MCP.Example.com."));
        let info = parse_client_hello(&h).expect("parses");
        assert_eq!(info.client_version, TLS1_1);
        assert_eq!(info.server_name.as_deref(), Some("mcp.example.com"));
        for ip in ["127.0.0.1", "::1", "[::1]"] {
            let h = client_hello(TLS1_0, [0; 32], Some(ip));
            assert_eq!(
                parse_client_hello(&h).and_then(|i| i.server_name),
                None,
                "{ip}"
            );
        }
    }

    #[test]
    fn version_ids_round_trip() {
        for v in [SSL3_0, TLS1_0, TLS1_1, TLS1_2, TLS1_3] {
            assert_eq!(version_from_id(version_id(v).expect("known")), Some(v));
        }
        assert_eq!(version_text(0x0305), "0x0305");
        assert_eq!(suite_text(0xc014), "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA");
        assert_eq!(suite_text(0x1301), "0x1301");
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let a = parse_server(&bytes);
            let _ = a.to_string();
            let _ = parse_client_hello(&bytes);
        }

        #[test]
        fn never_panics_on_tls_looking_bytes(
            ct in 0x14u8..=0x17, minor in any::<u8>(), len in any::<u16>(),
            tail in proptest::collection::vec(any::<u8>(), 0..400),
        ) {
            let mut b = vec![ct, 3, minor];
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&tail);
            let _ = parse_server(&b).to_string();
        }

        #[test]
        fn prefixes_of_a_server_hello_are_truncated(version in any::<u16>(), suite in any::<u16>(), extra in proptest::collection::vec(any::<u8>(), 0..50)) {
            let mut rec = server_hello(version, suite);
            let whole = parse_server(&rec);
            prop_assert_eq!(whole.negotiated(), Some(version));
            let n = rec.len();
            for cut in 0..n {
                let a = parse_server(&rec[..cut]);
                if cut == 0 { prop_assert_eq!(a, ServerAnswer::Closed); } else { prop_assert!(!a.is_complete()); }
            }
            // Whatever follows the first record does not change the answer.
            rec.extend_from_slice(&extra);
            prop_assert_eq!(parse_server(&rec), whole);
        }

        #[test]
        fn client_hello_round_trips(random in any::<[u8; 32]>(), name in "[a-z][a-z0-9-]{0,20}(\\.[a-z]{2,6}){0,3}", v in prop_oneof![Just(TLS1_0), Just(TLS1_1)]) {
            let h = client_hello(v, random, Some(&name));
            let info = parse_client_hello(&h).expect("parses");
            prop_assert_eq!(info.client_version, v);
            prop_assert_eq!(info.record_version, TLS1_0);
            prop_assert_eq!(info.server_name, Some(name));
        }
    }
}
