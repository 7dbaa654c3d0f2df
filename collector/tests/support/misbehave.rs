//! A misbehaving MCP server for tests, and the secret oracle that
//! searches bytes for a token in every encoding a server or library commonly produces.
//!
//! Self-contained (std, serde_json, base64 and hex only, and `http1.rs` beside it): the collector's tests use it as
//! `support::misbehave`, and the grader's end-to-end leak test includes this very file with
//! `#[path]`, so it cannot lean on `support/mod.rs` (which needs the collector binary).
//!
//! The server speaks the legacy (2025-11-25) Streamable HTTP dialect well enough for a
//! session and an inventory, on 127.0.0.1 and a free port, one thread per connection, and
//! misbehaves as its [`Case`] says. A second listener, the *trap*, counts every connection
//! made to it: redirects and token-bearing URLs point there, so a followed redirect shows.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;
use serde_json::{json, Value};

/// Terminal control sequences a hostile server puts in every string it controls: clear
/// screen, set window title (OSC ... BEL), SGR colour, and a C1 CSI.
pub const ESCAPES: &str = "\u{1b}[2J\u{1b}]0;pwned-title\u{7}\u{1b}[31mred\u{1b}[0m\u{9b}6n";

// ---------------------------------------------------------------------------------------
// Random tokens

/// A small deterministic PRNG (splitmix64): seeded runs are reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Seeded from the process's random hasher keys (differs per run).
    pub fn from_entropy() -> Rng {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        Rng(h.finish())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// RFC 6750 `b64token` characters (no `=`): what real bearer tokens are made of.
const TOKEN_CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";

/// A random bearer token of `len` (at least 34) characters that holds at least one of
/// each of `/ + ~ . - _` (so that every encoding differs from the raw form).
pub fn random_token(rng: &mut Rng, len: usize) -> String {
    let len = len.max(34);
    let mut t: Vec<u8> = (0..len)
        .map(|_| TOKEN_CHARS[rng.below(TOKEN_CHARS.len())])
        .collect();
    // Letters at both ends: a token never starts or ends with a separator here, so its
    // 8-character prefix and suffix are distinctive.
    t[0] = b'A' + rng.below(26) as u8;
    t[len - 1] = b'a' + rng.below(26) as u8;
    for (i, c) in b"/+~.-_".iter().enumerate() {
        let at = 1 + (i * (len - 2) / 6) + rng.below((len - 2) / 6);
        t[at.min(len - 2)] = *c;
    }
    String::from_utf8(t).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Encodings

/// How a server writes the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    Raw,
    /// RFC 3986: unreserved characters left alone, upper-case hex.
    PctUpper,
    /// The same with lower-case hex (`%2f`).
    PctLower,
    /// Every byte percent-encoded, upper-case hex.
    PctAllUpper,
    /// Every byte percent-encoded, lower-case hex.
    PctAllLower,
    /// Unreserved left alone except `~` (`%7E`), as older encoders do.
    PctTilde,
    /// `application/x-www-form-urlencoded` (WHATWG: `*-._` and alphanumerics kept).
    Form,
    /// JSON string content with the characters picked by `mask` (bit i mod 64) written
    /// as `\uXXXX` (hex case by `upper`) and every other `/` as `\/`.
    JsonUnicode {
        mask: u64,
        upper: bool,
    },
    /// JSON string content with `/` as `\/`.
    JsonSlash,
    B64,
    B64NoPad,
    B64Url,
    B64UrlNoPad,
    /// `Basic` credentials: base64 of `user:token`.
    Basic,
    HexLower,
    HexUpper,
    /// The token lower-cased (an echo that folds case; not in [`Enc::all`]).
    Lower,
    /// The token upper-cased (not in [`Enc::all`]).
    Upper,
    /// Every byte percent-encoded, then the whole text lower-cased (not in [`Enc::all`]).
    PctAllLowerCased,
    /// Every byte as `\uXXXX`, then the whole text upper-cased: `\U00XX` (not in
    /// [`Enc::all`]).
    JsonUnicodeUpperCased,
}

impl Enc {
    /// Every encoding, with fixed parameters where it has any.
    pub fn all() -> Vec<Enc> {
        vec![
            Enc::Raw,
            Enc::PctUpper,
            Enc::PctLower,
            Enc::PctAllUpper,
            Enc::PctAllLower,
            Enc::PctTilde,
            Enc::Form,
            Enc::JsonUnicode {
                mask: 0x5555_5555_5555_5555,
                upper: true,
            },
            Enc::JsonUnicode {
                mask: u64::MAX,
                upper: false,
            },
            Enc::JsonSlash,
            Enc::B64,
            Enc::B64NoPad,
            Enc::B64Url,
            Enc::B64UrlNoPad,
            Enc::Basic,
            Enc::HexLower,
            Enc::HexUpper,
        ]
    }

    /// A random encoding (random `\u` subset for the JSON form).
    pub fn random(rng: &mut Rng) -> Enc {
        let all = Enc::all();
        match all[rng.below(all.len())] {
            Enc::JsonUnicode { .. } => Enc::JsonUnicode {
                mask: rng.next_u64(),
                upper: rng.below(2) == 0,
            },
            e => e,
        }
    }

    /// `token` in this encoding. Every result is valid inside a JSON string and a header
    /// value as it stands (no `"`, no raw control characters).
    pub fn apply(self, token: &str) -> String {
        let b = token.as_bytes();
        let unreserved = |c: u8| c.is_ascii_alphanumeric() || b"-._~".contains(&c);
        let pct = |keep: &dyn Fn(u8) -> bool, lower: bool| -> String {
            b.iter()
                .map(|&c| {
                    if keep(c) {
                        (c as char).to_string()
                    } else if lower {
                        format!("%{c:02x}")
                    } else {
                        format!("%{c:02X}")
                    }
                })
                .collect()
        };
        match self {
            Enc::Raw => token.to_string(),
            Enc::PctUpper => pct(&unreserved, false),
            Enc::PctLower => pct(&unreserved, true),
            Enc::PctAllUpper => pct(&|_| false, false),
            Enc::PctAllLower => pct(&|_| false, true),
            Enc::PctTilde => pct(&|c| unreserved(c) && c != b'~', false),
            Enc::Form => pct(
                &|c| c.is_ascii_alphanumeric() || b"*-._".contains(&c),
                false,
            ),
            Enc::JsonUnicode { mask, upper } => b
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    if mask >> (i % 64) & 1 == 1 {
                        if upper {
                            format!("\\u{:04X}", c)
                        } else {
                            format!("\\u{:04x}", c)
                        }
                    } else if c == b'/' {
                        "\\/".to_string()
                    } else {
                        (c as char).to_string()
                    }
                })
                .collect(),
            Enc::JsonSlash => token.replace('/', "\\/"),
            Enc::B64 => STANDARD.encode(b),
            Enc::B64NoPad => STANDARD_NO_PAD.encode(b),
            Enc::B64Url => URL_SAFE.encode(b),
            Enc::B64UrlNoPad => URL_SAFE_NO_PAD.encode(b),
            Enc::Basic => STANDARD.encode(format!("mcp-client:{token}")),
            Enc::HexLower => hex::encode(b),
            Enc::HexUpper => hex::encode_upper(b),
            Enc::Lower => token.to_ascii_lowercase(),
            Enc::Upper => token.to_ascii_uppercase(),
            Enc::PctAllLowerCased => Enc::PctAllUpper.apply(token).to_ascii_lowercase(),
            Enc::JsonUnicodeUpperCased => Enc::JsonUnicode {
                mask: u64::MAX,
                upper: false,
            }
            .apply(token)
            .to_ascii_uppercase(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The oracle

/// Searches bytes for a secret in every encoding [`Enc`] produces and in any mix of
/// JSON escapes and percent-encoding, and for any 8-character prefix or suffix of it (a
/// secret cut by a body cap, an SSE event or a chunk boundary).
///
/// How: the bytes are looked at raw, JSON-unescaped (`\uXXXX`, `\/`, …, leniently, over
/// the whole text), percent-decoded, and both ways combined; in each view it looks for the
/// first and last 8 characters of the secret raw, as hex in either case, and as base64
/// or base64url at every alignment (the 8 characters that encode 6 secret bytes, which
/// any base64 text holding the secret, padded or not, prefixed by `user:` or not,
/// contains).
#[derive(Debug, Clone)]
pub struct Oracle {
    secret: String,
    /// (what, pattern, case-insensitive)
    patterns: Vec<(String, String, bool)>,
    /// Lower-case the bytes before looking ([`Oracle::any_case`]), so escapes an echo
    /// upper-cased (`\U00XX`, `%2F`) decode too.
    fold: bool,
}

/// The shortest prefix or suffix that counts as a leak.
pub const FRAGMENT: usize = 8;

impl Oracle {
    pub fn new(secret: &str) -> Oracle {
        let s = secret.as_bytes();
        let n = s.len();
        assert!(n >= 2 * FRAGMENT, "a secret of at least 16 bytes");
        let mut patterns = Vec::new();
        let mut add = |what: String, p: String, ci: bool| {
            if !patterns.iter().any(|(_, q, _)| *q == p) {
                patterns.push((what, p, ci));
            }
        };
        let prefix = &secret[..FRAGMENT];
        let suffix = &secret[n - FRAGMENT..];
        add("raw prefix".into(), prefix.to_string(), false);
        add("raw suffix".into(), suffix.to_string(), false);
        add("hex prefix".into(), hex::encode(&s[..FRAGMENT]), true);
        add("hex suffix".into(), hex::encode(&s[n - FRAGMENT..]), true);
        for a in 0..3 {
            let head = &s[a..a + 6];
            let tail = &s[n - 6 - a..n - a];
            for (name, eng) in [
                ("base64", &STANDARD_NO_PAD),
                ("base64url", &URL_SAFE_NO_PAD),
            ] {
                add(
                    format!("{name} prefix (alignment {a})"),
                    eng.encode(head),
                    false,
                );
                add(
                    format!("{name} suffix (alignment {a})"),
                    eng.encode(tail),
                    false,
                );
            }
        }
        Oracle {
            secret: secret.to_string(),
            patterns,
            fold: false,
        }
    }

    /// An oracle that also finds the secret, and its pieces, in any letter case: every
    /// pattern is compared case-insensitively (a credential an echo lower-cased or
    /// upper-cased is a few million guesses from the original).
    pub fn any_case(secret: &str) -> Oracle {
        let mut o = Oracle::new(secret);
        for (_, p, ci) in &mut o.patterns {
            *p = p.to_ascii_lowercase();
            *ci = true;
        }
        o.fold = true;
        o
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// The first leak in `hay`: which form, in which view, and the bytes around it.
    pub fn find(&self, hay: &[u8]) -> Option<String> {
        let folded;
        let hay = if self.fold {
            folded = hay.to_ascii_lowercase();
            &folded[..]
        } else {
            hay
        };
        let raw = String::from_utf8_lossy(hay).into_owned();
        let mut views: Vec<(&str, String)> = Vec::new();
        let slash = hay.contains(&b'\\');
        let pct = hay.contains(&b'%');
        if slash {
            let j = json_unescape(&raw);
            // Twice: a JSON escape printed with `{:?}` or stored inside JSON again.
            views.push(("json-unescaped twice", json_unescape(&j)));
            if pct {
                views.push(("json-unescaped, percent-decoded", pct_decode(&j)));
            }
            views.push(("json-unescaped", j));
        }
        if pct {
            let p = pct_decode(&raw);
            if slash {
                views.push(("percent-decoded, json-unescaped", json_unescape(&p)));
            }
            views.push(("percent-decoded", p));
        }
        views.insert(0, ("raw", raw));
        for (view, text) in &views {
            let mut lower: Option<String> = None;
            for (what, p, ci) in &self.patterns {
                let at = if *ci {
                    lower
                        .get_or_insert_with(|| text.to_ascii_lowercase())
                        .find(p.as_str())
                } else {
                    text.find(p.as_str())
                };
                if let Some(at) = at {
                    let from = text.floor_char_boundary_compat(at.saturating_sub(40));
                    let to = text.floor_char_boundary_compat((at + p.len() + 40).min(text.len()));
                    return Some(format!(
                        "{what} {p:?} at {at} ({view} view): …{:?}…",
                        &text[from..to]
                    ));
                }
            }
        }
        None
    }

    /// Panic naming `what` when `hay` leaks the secret.
    pub fn assert_clean(&self, what: &str, hay: &[u8]) {
        if let Some(hit) = self.find(hay) {
            panic!("the secret {:?} leaked into {what}: {hit}", self.secret);
        }
    }
}

/// `floor_char_boundary` is not stable on every toolchain this builds with.
trait FloorBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorBoundary for String {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        i = i.min(self.len());
        while i > 0 && !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

/// Lenient JSON string unescaping applied to any text: `\uXXXX` (surrogate pairs joined,
/// lone ones dropped), `\/`, `\\`, `\"`, `\n`, … Anything else is kept.
pub fn json_unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let hex4 = |at: usize| -> Option<u32> {
        let h = b.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'u' => {
                    if let Some(u) = hex4(i + 2) {
                        if (0xD800..0xDC00).contains(&u)
                            && b.get(i + 6) == Some(&b'\\')
                            && b.get(i + 7) == Some(&b'u')
                        {
                            if let Some(lo) = hex4(i + 8).filter(|l| (0xDC00..0xE000).contains(l)) {
                                let c = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                                out.extend(char::from_u32(c));
                                i += 12;
                                continue;
                            }
                        }
                        out.extend(char::from_u32(u));
                        i += 6;
                        continue;
                    }
                }
                b'/' | b'\\' | b'"' | b'\'' => {
                    out.push(b[i + 1] as char);
                    i += 2;
                    continue;
                }
                b'n' => {
                    out.push('\n');
                    i += 2;
                    continue;
                }
                b't' => {
                    out.push('\t');
                    i += 2;
                    continue;
                }
                b'r' => {
                    out.push('\r');
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        // Copy one whole character.
        let len = utf8_len(b[i]);
        let end = (i + len).min(b.len());
        out.push_str(std::str::from_utf8(&b[i..end]).unwrap_or("\u{fffd}"));
        i = end;
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Lenient percent-decoding (either hex case) of any text; invalid escapes are kept.
pub fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() + 1 {
            if let Some(h) = b.get(i + 1..i + 3) {
                if let Some(v) = std::str::from_utf8(h)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    out.push(v);
                    i += 3;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Raw terminal control bytes in `bytes`: C0 controls other than `\n` and `\t`, DEL, and
/// C1 controls (U+0080..U+009F as UTF-8, or as single bytes when not UTF-8). Returns
/// a description of the first, if any.
pub fn control_bytes(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    for (i, c) in text.char_indices() {
        let bad = (c < ' ' && c != '\n' && c != '\t')
            || c == '\u{7f}'
            || ('\u{80}'..='\u{9f}').contains(&c);
        if bad {
            let from = text[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
            let to = text[i..]
                .char_indices()
                .nth(40)
                .map_or(text.len(), |(j, _)| i + j);
            return Some(format!("{c:?} at {i}: {:?}", &text[from..to]));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// Where the echoing server puts the token

/// An enum of unit variants and its `all()`: every variant, in declaration order.
macro_rules! enum_with_all {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $v:ident,)* }) => {
        $(#[$m])*
        pub enum $name {
            $($(#[$vm])* $v,)*
        }

        impl $name {
            pub fn all() -> Vec<$name> {
                vec![$($name::$v),*]
            }
        }
    };
}

enum_with_all! {
/// A field or place a server can echo the token in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `serverInfo.name` of the `initialize` result.
    ServerInfo,
    /// A key and a value under `capabilities.experimental`.
    Capabilities,
    /// `instructions`.
    Instructions,
    /// The `Mcp-Session-Id` header (sent back by the collector on every request).
    SessionId,
    /// A JSON-RPC error on `initialize` (and `server/discover`): no session, the text
    /// reaches `run.failure` and stderr.
    HandshakeError,
    /// A JSON-RPC error on `resources/list` (message and data).
    ErrorMessage,
    /// A tool name.
    ToolName,
    /// A tool description.
    ToolDescription,
    /// `nextCursor` of every `tools/list` page, repeated (sent back by the collector, then
    /// a skipped record's "repeated cursor" reason).
    NextCursor,
    /// `WWW-Authenticate` on every response (`error_description`).
    WwwAuthenticate,
    /// A 401 on `server/discover` whose challenge points at this server's metadata, which
    /// names the token as an authorization server (the guard's refusal message).
    Auth401,
    /// `Set-Cookie` on every response.
    SetCookie,
    /// `server/discover` answered 307 with a `Location` to the trap carrying the token.
    Location,
    /// An `X-Debug-Echo` header on every response.
    Header,
    /// The reason phrase of every response.
    ReasonPhrase,
    /// `_meta` of every `tools/list` result.
    Body,
    /// The first `tools/list` answered as an event stream whose token is split in two
    /// events (raw form only: a cut token leaves no 8-character piece).
    SseSplit,
    /// The second `tools/list` answered chunked with a chunk boundary inside the token.
    ChunkSplit,
    /// The third `tools/list` padded so that the body cap cuts the token in two (raw).
    BodyCapCut,
}
}

impl Place {
    /// Places that end the run before a session (they hide the others).
    pub fn ends_early(self) -> bool {
        matches!(self, Place::HandshakeError | Place::Auth401)
    }

    /// Places that cut the token: only the raw form is meaningful there.
    pub fn raw_only(self) -> bool {
        matches!(self, Place::SseSplit | Place::BodyCapCut)
    }
}

// ---------------------------------------------------------------------------------------
// The server

/// How the server misbehaves.
#[derive(Debug, Clone)]
pub enum Case {
    /// A well-behaved legacy server (the baseline).
    Normal,
    /// `tools/list` answered with a JSON body that never ends (no length, never closed).
    EndlessBody,
    /// `tools/list` answered with a 100000-byte `Content-Length`, one byte a second.
    SlowDrip,
    /// `initialize` answered on an event stream kept open with comments after the
    /// response; `tools/list` answered with comments only, forever.
    SseKeepalive,
    /// `server/discover` and `initialize` answered with truncated, invalid JSON.
    MalformedJson,
    /// `tools/list` answered with an event stream of broken events, then closed.
    MalformedSse,
    /// The first `tools/list` answered with one `data:` line of `bytes` bytes, no newline.
    HugeSseLine { bytes: usize },
    /// Every `tools/list` answered with an event stream of JSON-RPC notification events
    /// written without pause and without end, never the answer.
    EndlessSseEvents,
    /// `server/discover` answered 302 and every POST after the handshake 307, with a
    /// `Location` to the trap port carrying the token.
    Redirect,
    /// The token echoed in these places, each in its encoding.
    Echo(Vec<(Place, Enc)>),
    /// The first `tools/list` page holds `n` tools.
    ManyTools { n: usize },
    /// Every `tools/list` page carries a new cursor and a tool of `page_bytes` bytes.
    EndlessCursors { page_bytes: usize },
    /// The first `tools/list` answered with 5000 headers, later POSTs with one header of
    /// 256 KiB.
    HeaderFlood,
    /// The first `tools/list` answered `Content-Encoding: gzip` with the gzip of 32 MiB
    /// of zeros ([`gzip_bomb`]).
    CompressionBomb,
    /// `tools/list` answered chunked: a complete JSON-RPC result in the first chunk, then
    /// a bogus chunk size (`zz`, an overflowing one, or a huge one and a close).
    BogusChunks,
    /// `initialize` answered with a complete JSON-RPC result but a `Content-Length` 200
    /// bytes longer, then the connection closed: a body that ended in an error.
    ResetMidBody,
    /// Every request answered 200 with an HTML page.
    Html200,
    /// [`ESCAPES`] in every server string; the handshake fails (a JSON-RPC error) when
    /// `handshake_fails`, so the strings reach stderr.
    TerminalEscapes { handshake_fails: bool },
}

#[path = "http1.rs"]
mod http1;
pub use http1::{accept, read_request, Req};

/// A running misbehaving server; stopped when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    pub port: u16,
    /// The trap: a listener nothing should ever connect to.
    pub trap_port: u16,
    /// Connections the trap accepted.
    pub trap_hits: Arc<AtomicUsize>,
    /// Requests received, in order.
    pub requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake both accept loops.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        let _ = TcpStream::connect(("127.0.0.1", self.trap_port));
    }
}

struct Shared {
    case: Case,
    token: String,
    body_cap: usize,
    port: u16,
    trap_port: u16,
    stop: Arc<AtomicBool>,
    counts: Mutex<HashMap<String, usize>>,
}

/// Start the server for `case`. `token` is what it echoes (and what the test gives the
/// collector); `body_cap` is the collector's `--body-cap` (for [`Place::BodyCapCut`]).
pub fn start(case: Case, token: &str, body_cap: usize) -> Server {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let trap = TcpListener::bind("127.0.0.1:0").expect("bind trap");
    let trap_port = trap.local_addr().expect("trap addr").port();
    let stop = Arc::new(AtomicBool::new(false));
    let trap_hits = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    {
        let (hits, st) = (trap_hits.clone(), stop.clone());
        thread::spawn(move || {
            for s in trap.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                if s.is_ok() {
                    hits.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
    }
    let shared = Arc::new(Shared {
        case,
        token: token.to_string(),
        body_cap,
        port,
        trap_port,
        stop: stop.clone(),
        counts: Mutex::new(HashMap::new()),
    });
    let reqs = requests.clone();
    accept(l, stop.clone(), move |s| {
        connection(s, shared.clone(), reqs.clone())
    });
    Server {
        url: format!("http://127.0.0.1:{port}/mcp"),
        port,
        trap_port,
        trap_hits,
        requests,
        stop,
    }
}

fn connection(s: TcpStream, sh: Arc<Shared>, reqs: Arc<Mutex<Vec<Req>>>) {
    let Ok(mut w) = s.try_clone() else { return };
    let mut r = BufReader::new(s);
    while let Some(req) = read_request(&mut r) {
        if let Ok(mut g) = reqs.lock() {
            g.push(req.clone());
        }
        if sh.stop.load(Ordering::SeqCst) {
            return;
        }
        match sh.respond(&req, &mut w) {
            Next::KeepAlive => {}
            Next::Close => {
                let _ = w.flush();
                let _ = w.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

enum Next {
    KeepAlive,
    Close,
}

/// One HTTP/1.1 response with a `Content-Length`.
pub fn response(status: u16, reason: &str, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut s = format!("HTTP/1.1 {status} {reason}\r\n");
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut out = s.into_bytes();
    out.extend_from_slice(body);
    out
}

fn h(k: &str, v: impl Into<String>) -> (String, String) {
    (k.to_string(), v.into())
}

fn json_ct() -> (String, String) {
    h("Content-Type", "application/json")
}

/// Write `bytes` in pieces until done, the peer goes away, or the server stops.
fn write_slowly(w: &mut TcpStream, bytes: &[u8], stop: &AtomicBool) -> bool {
    for piece in bytes.chunks(64 * 1024) {
        if stop.load(Ordering::SeqCst) || w.write_all(piece).is_err() {
            return false;
        }
    }
    true
}

/// [`write_slowly`], then keep the connection if it was all written.
fn send(w: &mut TcpStream, bytes: &[u8], stop: &AtomicBool) -> Next {
    if write_slowly(w, bytes, stop) {
        Next::KeepAlive
    } else {
        Next::Close
    }
}

fn sse_chunk(payload: &[u8]) -> Vec<u8> {
    let mut v = format!("{:x}\r\n", payload.len()).into_bytes();
    v.extend_from_slice(payload);
    v.extend_from_slice(b"\r\n");
    v
}

/// Keep writing `piece` every `every` until the peer goes away, the server stops or
/// `max` passed.
fn keep_writing(
    w: &mut TcpStream,
    piece: &[u8],
    every: Duration,
    max: Duration,
    stop: &AtomicBool,
) {
    let t0 = Instant::now();
    while t0.elapsed() < max && !stop.load(Ordering::SeqCst) {
        if w.write_all(piece).is_err() || w.flush().is_err() {
            return;
        }
        thread::sleep(every);
    }
}

/// Hold a connection open without writing, until the server stops or `max` passed.
fn hold(stop: &AtomicBool, max: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < max && !stop.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(50));
    }
}

/// How long a stalling answer lasts at most (far beyond any test deadline).
const STALL_MAX: Duration = Duration::from_secs(120);

impl Shared {
    fn count(&self, key: &str) -> usize {
        let mut g = match self.counts.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let c = g.entry(key.to_string()).or_insert(0);
        *c += 1;
        *c - 1
    }

    fn enc_of(&self, place: Place) -> Option<String> {
        match &self.case {
            Case::Echo(places) => places.iter().find(|(p, _)| *p == place).map(|(p, e)| {
                if p.raw_only() {
                    self.token.clone()
                } else {
                    e.apply(&self.token)
                }
            }),
            _ => None,
        }
    }

    fn escapes(&self) -> Option<&'static str> {
        matches!(self.case, Case::TerminalEscapes { .. }).then_some(ESCAPES)
    }

    /// Headers added to every response of the echoing server.
    fn echo_headers(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(e) = self.enc_of(Place::WwwAuthenticate) {
            out.push(h(
                "WWW-Authenticate",
                format!("Bearer realm=\"mcp\", error=\"invalid_token\", error_description=\"token {e} expired\""),
            ));
        }
        if let Some(e) = self.enc_of(Place::SetCookie) {
            out.push(h("Set-Cookie", format!("session={e}; Path=/; HttpOnly")));
        }
        if let Some(e) = self.enc_of(Place::Header) {
            out.push(h("X-Debug-Echo", format!("you sent {e}")));
        }
        out
    }

    fn reason(&self, default: &str) -> String {
        self.enc_of(Place::ReasonPhrase)
            .map(|e| format!("{default} {e}"))
            .unwrap_or_else(|| default.to_string())
    }

    /// A JSON response; every `@@TOKEN:<place>@@` placeholder in `body` is replaced by
    /// that place's encoded token (so JSON escapes land in the body as written).
    fn json(
        &self,
        status: u16,
        reason: &str,
        mut extra: Vec<(String, String)>,
        body: &Value,
    ) -> Vec<u8> {
        extra.insert(0, json_ct());
        extra.extend(self.echo_headers());
        let text = self.fill(&body.to_string());
        response(status, &self.reason(reason), &extra, text.as_bytes())
    }

    fn fill(&self, text: &str) -> String {
        let mut t = text.to_string();
        for p in Place::all() {
            let ph = placeholder(p);
            if t.contains(&ph) {
                t = t.replace(&ph, &self.enc_of(p).unwrap_or_default());
            }
        }
        t
    }

    fn field(&self, place: Place, default: &str) -> String {
        if let Some(e) = self.escapes() {
            return format!("{default}{e}");
        }
        match self.enc_of(place) {
            Some(_) => format!("{default}-{}", placeholder(place)),
            None => default.to_string(),
        }
    }

    fn respond(&self, req: &Req, w: &mut TcpStream) -> Next {
        let m = req.rpc_method();
        let n = self.count(if m.is_empty() { &req.method } else { &m });
        let id = req.rpc_id();
        let stop = &*self.stop;
        let write = |w: &mut TcpStream, bytes: Vec<u8>| -> Next { send(w, &bytes, stop) };
        // Metadata the 401 challenge points at.
        let prm = req.method == "GET"
            && req
                .path
                .starts_with("/.well-known/oauth-protected-resource");
        if prm && self.enc_of(Place::Auth401).is_some() {
            // Placeholders: the encoded token lands in the body as written (a JSON
            // escape stays one escape, not an escaped backslash).
            let e = placeholder(Place::Auth401);
            let body = json!({
                "resource": format!("http://127.0.0.1:{}/mcp", self.port),
                "authorization_servers": [format!("not a url {e}"), format!("http://127.0.0.1:{}/as/{e}", self.port)],
                "scopes_supported": ["mcp"],
            });
            return write(w, self.json(200, "OK", vec![], &body));
        }
        match &self.case {
            Case::EndlessBody if m == "tools/list" => {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[");
                if w.write_all(head.as_bytes()).is_err() {
                    return Next::Close;
                }
                let piece =
                    "{\"name\":\"again\",\"inputSchema\":{\"type\":\"object\"}},".repeat(300);
                keep_writing(w, piece.as_bytes(), Duration::ZERO, STALL_MAX, stop);
                return Next::Close;
            }
            Case::SlowDrip if m == "tools/list" => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
                if w.write_all(head.as_bytes()).is_err() {
                    return Next::Close;
                }
                keep_writing(w, b" ", Duration::from_secs(1), STALL_MAX, stop);
                return Next::Close;
            }
            Case::SseKeepalive if m == "initialize" || m == "tools/list" => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nMcp-Session-Id: s-keepalive\r\n\r\n";
                let mut first = head.as_bytes().to_vec();
                first.extend(sse_chunk(b": welcome\n\n"));
                if m == "initialize" {
                    let ev = format!(
                        "event: message\ndata: {}\n\n",
                        initialize_result(
                            &id,
                            &req.json(),
                            json!({"name":"keepalive","version":"1"}),
                            None,
                            json!({"tools":{}})
                        )
                    );
                    first.extend(sse_chunk(ev.as_bytes()));
                }
                if w.write_all(&first).is_err() {
                    return Next::Close;
                }
                keep_writing(
                    w,
                    &sse_chunk(b": keepalive\n\n"),
                    Duration::from_millis(200),
                    STALL_MAX,
                    stop,
                );
                return Next::Close;
            }
            Case::MalformedJson if m == "server/discover" || m == "initialize" => {
                let body: &[u8] = if m == "initialize" {
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",,,\"capabilities\":{\xff\xfe"
                } else {
                    b"{\"jsonrpc\":\"2.0\",\"id\":"
                };
                let status = if m == "initialize" { 200 } else { 400 };
                return write(w, response(status, "Whatever", &[json_ct()], body));
            }
            Case::MalformedSse if m == "tools/list" => {
                let mut v = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".to_vec();
                v.extend_from_slice(b"data: {\"jsonrpc\":\"2.0\",\"id\":");
                v.extend_from_slice(id.to_string().as_bytes());
                v.extend_from_slice(b",\"result\":{\"tools\":[\nevent without data\r\r\ndata\n: comment\nid: \0nul\n\nretry: soon\n\ndata: \xff\xfe\xfd not utf-8\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":");
                v.extend_from_slice(id.to_string().as_bytes());
                v.extend_from_slice(b",\"result\":{\"tools\":[{\"name\":\"x\"}]}\n"); // no blank line: never dispatched
                let _ = write_slowly(w, &v, stop);
                return Next::Close;
            }
            Case::EndlessSseEvents if m == "tools/list" => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
                if w.write_all(head.as_bytes()).is_err() {
                    return Next::Close;
                }
                let ev = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"flood\"}}\n\n";
                let block = sse_chunk(&ev.repeat(64 * 1024 / ev.len()));
                let t0 = Instant::now();
                while !stop.load(Ordering::SeqCst) && t0.elapsed() < STALL_MAX {
                    if w.write_all(&block).is_err() {
                        return Next::Close;
                    }
                }
                return Next::Close;
            }
            Case::HugeSseLine { bytes } if m == "tools/list" && n == 0 => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ";
                if w.write_all(head.as_bytes()).is_err() {
                    return Next::Close;
                }
                let piece = vec![b'x'; 64 * 1024];
                let mut left = *bytes;
                while left > 0 && !stop.load(Ordering::SeqCst) {
                    let k = left.min(piece.len());
                    if w.write_all(&piece[..k]).is_err() {
                        return Next::Close;
                    }
                    left -= k;
                }
                hold(stop, STALL_MAX);
                return Next::Close;
            }
            Case::Redirect
                if m == "server/discover"
                    || (req.method == "POST"
                        && !matches!(m.as_str(), "initialize" | "notifications/initialized")) =>
            {
                let loc = format!(
                    "http://127.0.0.1:{}/mcp?access_token={}&t={}",
                    self.trap_port,
                    self.token,
                    Enc::PctUpper.apply(&self.token)
                );
                let (status, reason) = if m == "server/discover" {
                    (302, "Found")
                } else {
                    (307, "Temporary Redirect")
                };
                return write(
                    w,
                    response(status, reason, &[h("Location", loc), json_ct()], b"{}"),
                );
            }
            Case::ManyTools { n: count } if m == "tools/list" && n == 0 => {
                return write(
                    w,
                    response(200, "OK", &[json_ct()], &many_tools(&id, *count)),
                );
            }
            Case::EndlessCursors { page_bytes } if m == "tools/list" => {
                let body = json!({"jsonrpc":"2.0","id":id,"result":{
                    "tools":[{"name":format!("t{n}"),"description":"p".repeat(*page_bytes),"inputSchema":{"type":"object"}}],
                    "nextCursor": format!("page-{}", n + 1)}});
                return write(
                    w,
                    response(200, "OK", &[json_ct()], body.to_string().as_bytes()),
                );
            }
            Case::HeaderFlood
                if req.method == "POST"
                    && !matches!(
                        m.as_str(),
                        "server/discover" | "initialize" | "notifications/initialized"
                    ) =>
            {
                let body = json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}).to_string();
                let headers: Vec<(String, String)> = if self.count("flood") == 0 {
                    (0..5000).map(|i| h(&format!("X-Flood-{i}"), "v")).collect()
                } else {
                    vec![h("X-Huge", "h".repeat(256 * 1024))]
                };
                let mut all = vec![json_ct()];
                all.extend(headers);
                return write(w, response(200, "OK", &all, body.as_bytes()));
            }
            Case::CompressionBomb if m == "tools/list" && n == 0 => {
                return write(
                    w,
                    response(
                        200,
                        "OK",
                        &[json_ct(), h("Content-Encoding", "gzip")],
                        gzip_bomb(),
                    ),
                );
            }
            Case::BogusChunks if m == "tools/list" => {
                let answer = json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"from-a-broken-body","inputSchema":{"type":"object"}}]}}).to_string();
                let mut v = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                v.extend(sse_chunk(answer.as_bytes()));
                match n % 3 {
                    0 => v.extend_from_slice(b"zz\r\nmore\r\n0\r\n\r\n"),
                    1 => v.extend_from_slice(b"fffffffffffffffffffff\r\nmore\r\n0\r\n\r\n"),
                    _ => v.extend_from_slice(b"7fffffffffffffff\r\nonly a little"),
                }
                let _ = write_slowly(w, &v, stop);
                return Next::Close;
            }
            Case::ResetMidBody if m == "initialize" => {
                let body = initialize_result(
                    &id,
                    &req.json(),
                    json!({"name":"cut","version":"1"}),
                    None,
                    json!({"tools":{}}),
                )
                .to_string();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-cut\r\nContent-Length: {}\r\n\r\n",
                    body.len() + 200
                );
                let mut v = head.into_bytes();
                v.extend_from_slice(body.as_bytes());
                let _ = write_slowly(w, &v, stop);
                return Next::Close;
            }
            Case::Html200 => {
                let page = b"<!doctype html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n";
                return write(
                    w,
                    response(
                        200,
                        "OK",
                        &[h("Content-Type", "text/html; charset=utf-8")],
                        page,
                    ),
                );
            }
            Case::TerminalEscapes {
                handshake_fails: true,
            } if m == "server/discover" || m == "initialize" => {
                let body = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32600,"message":format!("refused{ESCAPES}"),"data":{"detail":ESCAPES}}});
                let status = if m == "initialize" { 200 } else { 400 };
                return write(
                    w,
                    response(status, "Nope", &[json_ct()], body.to_string().as_bytes()),
                );
            }
            _ => {}
        }
        if let Case::Echo(_) = &self.case {
            if let Some(next) = self.echo_special(req, &m, n, &id, w) {
                return next;
            }
        }
        write(w, self.normal(req, &m, n, &id))
    }

    /// The echoing server's answers that are not plain JSON.
    fn echo_special(
        &self,
        req: &Req,
        m: &str,
        n: usize,
        id: &Value,
        w: &mut TcpStream,
    ) -> Option<Next> {
        let stop = &*self.stop;
        if m == "server/discover" {
            if let Some(e) = self.enc_of(Place::Auth401) {
                let chal = format!(
                    "Bearer resource_metadata=\"http://127.0.0.1:{}/.well-known/oauth-protected-resource?t={e}\", scope=\"mcp\", error_description=\"bad {e}\"",
                    self.port
                );
                let mut hs = vec![h("WWW-Authenticate", chal)];
                hs.extend(self.echo_headers());
                hs.push(json_ct());
                return Some(send(w, &response(401, "Unauthorized", &hs, b"{}"), stop));
            }
        }
        if m != "tools/list" || req.method != "POST" {
            return None;
        }
        let k = self.count("echo-tools-list");
        let result = self.tools_result(id, req);
        if k == 0 && self.enc_of(Place::SseSplit).is_some() {
            let t = &self.token;
            let cut = t.len() / 2;
            let log = |part: &str| json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":format!("part {part}")}});
            let mut body = format!("event: message\ndata: {}\n\n", log(&t[..cut]));
            body.push_str(&format!("event: message\ndata: {}\n\n", log(&t[cut..])));
            body.push_str(&format!("event: message\ndata: {result}\n\n"));
            let mut hs = vec![h("Content-Type", "text/event-stream")];
            hs.extend(self.echo_headers());
            return Some(send(
                w,
                &response(200, &self.reason("OK"), &hs, body.as_bytes()),
                stop,
            ));
        }
        if k == 1 {
            if let Some(e) = self.enc_of(Place::ChunkSplit) {
                let body = result.replacen(
                    "\"tools\":[",
                    &format!("\"chunked\":\"{e}\",\"tools\":["),
                    1,
                );
                let at = body.find(&e).unwrap_or(0) + e.len() / 2;
                let mut v = format!("HTTP/1.1 200 {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n", self.reason("OK")).into_bytes();
                for (a, b) in self.echo_headers() {
                    v.extend_from_slice(format!("{a}: {b}\r\n").as_bytes());
                }
                v.extend_from_slice(b"\r\n");
                v.extend(sse_chunk(&body.as_bytes()[..at]));
                v.extend(sse_chunk(&body.as_bytes()[at..]));
                v.extend_from_slice(b"0\r\n\r\n");
                return Some(send(w, &v, stop));
            }
        }
        if k == 2 && self.enc_of(Place::BodyCapCut).is_some() {
            // {"jsonrpc":"2.0","id":ID,"result":{"tools":[],"_meta":{"pad":"xxx…TOKEN"}}}
            let start = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[],\"_meta\":{{\"pad\":\"");
            let cut = self.token.len() / 2;
            let pad = self.body_cap.saturating_sub(start.len() + cut);
            let body = format!("{start}{}{}\"}}}}}}", "x".repeat(pad), self.token);
            let mut hs = vec![json_ct()];
            hs.extend(self.echo_headers());
            return Some(send(
                w,
                &response(200, &self.reason("OK"), &hs, body.as_bytes()),
                stop,
            ));
        }
        let _ = n;
        None
    }

    fn tools_result(&self, id: &Value, req: &Req) -> String {
        let mut result = json!({
            "tools": [{
                "name": self.field(Place::ToolName, "echo"),
                "description": self.field(Place::ToolDescription, "Echoes its input"),
                "inputSchema": {"type": "object"},
            }],
        });
        if self.enc_of(Place::Body).is_some() {
            result["_meta"] = json!({"debug": format!("auth was {}", placeholder(Place::Body))});
        }
        if self.enc_of(Place::NextCursor).is_some() {
            // Every page names the same cursor: the collector follows it once, then
            // records the repetition as a skip reason.
            result["nextCursor"] = json!(placeholder(Place::NextCursor));
        }
        let _ = req;
        self.fill(&json!({"jsonrpc":"2.0","id":id,"result":result}).to_string())
    }

    /// A well-behaved answer (the echoing and escaping cases put their strings in).
    fn normal(&self, req: &Req, m: &str, n: usize, id: &Value) -> Vec<u8> {
        let _ = n;
        if req.method != "POST" {
            return self.json(
                405,
                "Method Not Allowed",
                vec![h("Allow", "POST")],
                &json!({"error": "POST only"}),
            );
        }
        let err = |code: i64, message: String| json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}});
        match m {
            "server/discover" => {
                if self.enc_of(Place::HandshakeError).is_some() {
                    let body = err(
                        -32601,
                        format!(
                            "unknown method; your credential {} is fine",
                            placeholder(Place::HandshakeError)
                        ),
                    );
                    return self.json(400, "Bad Request", vec![], &body);
                }
                if let Some(e) = self.enc_of(Place::Location) {
                    let loc = format!("http://127.0.0.1:{}/mcp?session={e}", self.trap_port);
                    return self.json(
                        307,
                        "Temporary Redirect",
                        vec![h("Location", loc)],
                        &err(-32601, "moved".into()),
                    );
                }
                let msg = match self.escapes() {
                    Some(e) => format!("Method not found{e}"),
                    None => "Method not found".into(),
                };
                self.json(400, "Bad Request", vec![], &err(-32601, msg))
            }
            "initialize" => {
                if self.enc_of(Place::HandshakeError).is_some() {
                    let mut body = err(
                        -32602,
                        format!(
                            "initialize refused for bearer {}",
                            placeholder(Place::HandshakeError)
                        ),
                    );
                    body["error"]["data"] = json!({"echo": placeholder(Place::HandshakeError)});
                    return self.json(200, "OK", vec![], &body);
                }
                let mut caps = json!({"tools": {"listChanged": false}});
                if self.enc_of(Place::ErrorMessage).is_some() || self.escapes().is_some() {
                    caps["resources"] = json!({});
                }
                if self.enc_of(Place::Capabilities).is_some() {
                    caps["experimental"] = json!({ placeholder(Place::Capabilities): {"value": placeholder(Place::Capabilities)} });
                }
                if let Some(e) = self.escapes() {
                    caps["experimental"] = json!({ format!("x{e}"): {"value": e} });
                }
                let info = json!({
                    "name": self.field(Place::ServerInfo, "misbehave"),
                    "version": self.field(Place::ServerInfo, "1.0"),
                    "title": self.field(Place::ServerInfo, "Misbehave"),
                });
                let instructions = if let Some(e) = self.escapes() {
                    Some(format!("Read carefully{e}"))
                } else {
                    self.enc_of(Place::Instructions).map(|_| {
                        format!(
                            "Use token {} for the admin API",
                            placeholder(Place::Instructions)
                        )
                    })
                };
                let body = initialize_result(id, &req.json(), info, instructions, caps);
                let sid = if self.enc_of(Place::SessionId).is_some() {
                    format!("s-{}", placeholder(Place::SessionId))
                } else {
                    "s-1".to_string()
                };
                let sid = self.fill(&sid);
                self.json(200, "OK", vec![h("Mcp-Session-Id", sid)], &body)
            }
            "notifications/initialized" => {
                let mut hs = self.echo_headers();
                hs.insert(0, json_ct());
                response(202, &self.reason("Accepted"), &hs, b"")
            }
            "tools/list" => {
                let text = self.tools_result(id, req);
                let mut hs = vec![json_ct()];
                hs.extend(self.echo_headers());
                response(200, &self.reason("OK"), &hs, text.as_bytes())
            }
            "resources/list" | "resources/templates/list" | "prompts/list" => {
                if self.enc_of(Place::ErrorMessage).is_some() || self.escapes().is_some() {
                    let what = match self.escapes() {
                        Some(e) => e.to_string(),
                        None => placeholder(Place::ErrorMessage),
                    };
                    let mut body = err(-32603, format!("backend refused credential {what}"));
                    body["error"]["data"] =
                        json!({"upstream": format!("Authorization: Bearer {what}")});
                    return self.json(200, "OK", vec![], &body);
                }
                let key = match m {
                    "resources/list" => "resources",
                    "resources/templates/list" => "resourceTemplates",
                    _ => "prompts",
                };
                self.json(
                    200,
                    "OK",
                    vec![],
                    &json!({"jsonrpc":"2.0","id":id,"result":{key: []}}),
                )
            }
            "tools/call" => self.json(200, "OK", vec![], &err(-32602, "no such tool".into())),
            _ => self.json(
                404,
                "Not Found",
                vec![],
                &err(-32601, "Method not found".into()),
            ),
        }
    }
}

fn placeholder(p: Place) -> String {
    format!("@@TOKEN:{p:?}@@")
}

/// An `initialize` result echoing the offered revision when it is one a legacy server
/// speaks (the 1.1a sweep offers old ones), else 2025-11-25.
fn initialize_result(
    id: &Value,
    request: &Value,
    info: Value,
    instructions: Option<String>,
    caps: Value,
) -> Value {
    let offered = request
        .get("params")
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let rev = if ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"].contains(&offered) {
        offered
    } else {
        "2025-11-25"
    };
    let mut result = json!({"protocolVersion": rev, "capabilities": caps, "serverInfo": info});
    if let Some(i) = instructions {
        result["instructions"] = json!(i);
    }
    json!({"jsonrpc":"2.0","id":id,"result":result})
}

fn many_tools(id: &Value, n: usize) -> Vec<u8> {
    let mut s = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"name\":\"tool-{i}\",\"inputSchema\":{{\"type\":\"object\"}}}}"
        ));
    }
    s.push_str("]}}");
    s.into_bytes()
}

/// Uncompressed size of [`gzip_bomb`].
pub const BOMB_ZEROS: usize = 1 + 258 * 130_000;

/// A valid gzip member holding [`BOMB_ZEROS`] zero bytes (about 32 MiB) in about 206 KiB:
/// one fixed-Huffman DEFLATE block of a literal 0 and repeated (258, distance 1) matches.
pub fn gzip_bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        let mut bits = BitWriter::default();
        bits.put(1, 1); // BFINAL
        bits.put(1, 2); // BTYPE = 01, fixed Huffman
        bits.code(0x30, 8); // literal 0
        for _ in 0..(BOMB_ZEROS - 1) / 258 {
            bits.code(0xC5, 8); // length 258 (symbol 285)
            bits.code(0, 5); // distance 1
        }
        bits.code(0, 7); // end of block (256)
        out.extend(bits.finish());
        out.extend(crc32_zeros(BOMB_ZEROS).to_le_bytes());
        out.extend((BOMB_ZEROS as u32).to_le_bytes());
        out
    })
}

#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    /// `len` bits of `value`, least significant first (DEFLATE header fields).
    fn put(&mut self, value: u32, len: u32) {
        for i in 0..len {
            self.bit((value >> i) & 1);
        }
    }
    /// A Huffman code, most significant bit first.
    fn code(&mut self, value: u32, len: u32) {
        for i in (0..len).rev() {
            self.bit((value >> i) & 1);
        }
    }
    fn bit(&mut self, b: u32) {
        self.acc |= b << self.n;
        self.n += 1;
        if self.n == 8 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.n = 0;
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

fn crc32_zeros(n: usize) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut crc = 0xFFFF_FFFFu32;
    for _ in 0..n {
        crc = table[(crc & 0xFF) as usize] ^ (crc >> 8);
    }
    crc ^ 0xFFFF_FFFF
}
