//! The known-secret matcher behind [`Redactor`](super::Redactor): finds every secret in
//! every supported encoding, and its cut pieces, in arbitrary bytes, and maps each hit
//! back to the span of bytes it occupies.
//!
//! How: the haystack is decoded into up to four *normalised streams* (as written;
//! JSON escapes and percent escapes both decoded; JSON escapes only; percent escapes
//! only), each a sequence of units with a sparse map from unit to haystack span. In
//! every stream, a space and a `+` are the same unit (form encoding), and so they are in
//! the secrets. The secrets' 8-unit prefixes and suffixes (the whole secret when it is
//! shorter), the stable cores of their base64 and base64url encodings at each of the
//! three byte phases, are searched with one ASCII case-insensitive Aho-Corasick
//! automaton over every stream; a prefix hit is extended forwards and a suffix hit
//! backwards as far as the stream keeps matching the secret (ASCII case ignored). Hex
//! (either case) is searched in the bytes as written.
//!
//! *Public values* (an OAuth client id, a state: values the collector knows are not
//! credentials) are searched by the same automaton; a *piece* of a secret (a prefix or
//! suffix hit shorter than the whole secret) that lies wholly inside an occurrence of one
//! is not a hit, unless the secret is *strict* (a credential the operator gave the run,
//! whose pieces a server could otherwise hide inside a client id it chose). A whole
//! secret is a hit wherever it is. Hits are merged into disjoint byte spans; where spans
//! of different secrets overlap, the longest match names the span.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;

use crate::bundle::fingerprint;

/// A prefix or suffix of a secret this long (in decoded bytes) or longer is a hit.
pub(crate) const MIN_PIECE: usize = 8;

/// Extension steps allowed per unit of a stream before hits are widened instead.
const EXTEND_BUDGET_PER_UNIT: usize = 16;

/// What every replacement starts with.
const FINGERPRINT_PREFIX: &[u8] = b"redacted:sha256:";

/// True when `piece` can occur inside a replacement, ASCII case ignored (the search
/// ignores it): inside `redacted:sha256:`, or a tail of it followed by hex. (A piece of
/// hex digits alone matches a given fingerprint with odds of about 2^-26 and is not
/// excluded.)
fn fingerprint_like(piece: &[u8]) -> bool {
    let piece = piece.to_ascii_lowercase();
    memchr::memmem::find(FINGERPRINT_PREFIX, &piece).is_some()
        || (1..=FINGERPRINT_PREFIX.len().min(piece.len())).any(|k| {
            FINGERPRINT_PREFIX.ends_with(&piece[..k])
                && piece[k..]
                    .iter()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        })
}

/// Shortest base64 core searched (shorter ones would match unrelated base64).
const MIN_CORE: usize = 6;

/// A scrub is repeated until the output holds no hit, at most this many times.
const MAX_PASSES: usize = 4;

/// One secret the engine searches for.
#[derive(Clone)]
pub(crate) struct Secret {
    /// The value as held or learned (the fingerprint is of these bytes).
    pub(crate) raw: Vec<u8>,
    /// The value with spaces as `+`, as compared against the streams.
    canon: Vec<u8>,
    /// What kind of credential (`bearer-token`, `refresh_token`, …).
    pub(crate) what: String,
    /// `redacted:sha256:<hex>` of `raw`.
    pub(crate) fingerprint: String,
    /// A piece of it inside a public value is left alone (false for a strict secret).
    shieldable: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The whole secret (secrets shorter than [`MIN_PIECE`]) or one of its exact
    /// encodings (a base64 core, hex): the hit is exactly the match.
    Exact,
    /// The first [`MIN_PIECE`] units, extended forwards.
    Prefix,
    /// The last [`MIN_PIECE`] units, extended backwards.
    Suffix,
    /// A whole public value (`secret` indexes the public values): not a hit, a shield.
    Public,
}

#[derive(Clone, Copy)]
struct Pattern {
    secret: usize,
    kind: Kind,
    /// For an exact needle longer than [`ANCHOR`]: its index in `Engine::fulls`; the
    /// automaton holds only its first [`ANCHOR`] bytes and a hit is verified.
    full: Option<usize>,
}

/// Longest pattern put in an automaton (building one costs the patterns' total length
/// times the alphabet; the base64 and hex forms of a 2 KB JWT are kilobytes long).
const ANCHOR: usize = 32;

/// Patterns for one automaton.
#[derive(Default)]
struct Patterns {
    bytes: Vec<Vec<u8>>,
    patterns: Vec<Pattern>,
    seen: std::collections::HashSet<(Vec<u8>, usize, u8)>,
}

impl Patterns {
    fn push(&mut self, fulls: &mut Vec<Vec<u8>>, bytes: Vec<u8>, secret: usize, kind: Kind) {
        let exact = matches!(kind, Kind::Exact | Kind::Public);
        let class = match kind {
            Kind::Public => 2,
            Kind::Exact => 1,
            Kind::Prefix | Kind::Suffix => 0,
        };
        if !self.seen.insert((bytes.clone(), secret, class)) {
            return;
        }
        let mut full = None;
        let mut needle = bytes;
        if exact && needle.len() > ANCHOR {
            full = Some(fulls.len());
            fulls.push(needle.clone());
            needle.truncate(ANCHOR);
        }
        self.bytes.push(needle);
        self.patterns.push(Pattern { secret, kind, full });
    }
}

/// A byte span of the haystack held by `secret`; `weight` is how many bytes of the
/// secret the match covered (the longest match names a merged span).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) secret: usize,
    weight: usize,
    /// A prefix or suffix hit shorter than the whole secret.
    piece: bool,
}

/// The compiled search for a set of secrets.
#[derive(Clone, Default)]
pub(crate) struct Engine {
    secrets: Vec<Secret>,
    text: Option<AhoCorasick>,
    text_patterns: Vec<Pattern>,
    hex: Option<AhoCorasick>,
    hex_patterns: Vec<Pattern>,
    /// Whole exact needles whose automaton pattern is an [`ANCHOR`].
    fulls: Vec<Vec<u8>>,
    /// Some secret holds `%` or a backslash: search the single-scheme streams too.
    single: bool,
    /// Some public value is searched and some secret is shieldable: a piece hit may be
    /// shielded, so `any` cannot stop at it.
    shields: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Engine({} secrets)", self.secrets.len())
    }
}

fn canon(b: u8) -> u8 {
    if b == b' ' {
        b'+'
    } else {
        b
    }
}

/// The base64 characters of `secret` placed after `phase` bytes of anything, that do
/// not depend on the bytes around it.
fn base64_core(secret: &[u8], phase: usize, engine: &base64::engine::GeneralPurpose) -> Vec<u8> {
    let mut buf = vec![0u8; phase];
    buf.extend_from_slice(secret);
    let enc = engine.encode(&buf).into_bytes();
    let first = (8 * phase).div_ceil(6);
    let last = (8 * (phase + secret.len())) / 6;
    enc.get(first..last).map(<[u8]>::to_vec).unwrap_or_default()
}

impl Engine {
    /// Compile `secrets` (value, what) with the `public` values that shield pieces of
    /// them, except of the `strict` secrets. Longer secrets come first, so among equal
    /// matches the longer secret names a span.
    pub(crate) fn new(
        secrets: &[(Vec<u8>, String)],
        public: &[Vec<u8>],
        strict: &[Vec<u8>],
    ) -> Engine {
        let mut secrets: Vec<Secret> = secrets
            .iter()
            .filter(|(v, _)| !v.is_empty())
            .map(|(v, what)| Secret {
                raw: v.clone(),
                canon: v.iter().map(|b| canon(*b)).collect(),
                what: what.clone(),
                fingerprint: fingerprint(v),
                shieldable: !strict.contains(v),
            })
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.raw.len()));

        let mut text = Patterns::default();
        let mut hex = Patterns::default();
        let mut fulls = Vec::new();
        for (i, s) in secrets.iter().enumerate() {
            let n = s.canon.len();
            let mut push = |bytes: Vec<u8>, kind: Kind| text.push(&mut fulls, bytes, i, kind);
            // A piece that could be part of a replacement (`redacted:sha256:<hex>`)
            // would match the replacement: such pieces are lengthened until they could
            // not, and a secret that could be all inside one is not searched as text.
            let in_fp = fingerprint_like;
            if in_fp(&s.canon) {
            } else if n < MIN_PIECE {
                push(s.canon.clone(), Kind::Exact);
            } else {
                let mut l = MIN_PIECE;
                while in_fp(&s.canon[..l]) {
                    l += 1;
                }
                push(s.canon[..l].to_vec(), Kind::Prefix);
                let mut l = MIN_PIECE;
                while in_fp(&s.canon[n - l..]) {
                    l += 1;
                }
                push(s.canon[n - l..].to_vec(), Kind::Suffix);
            }
            for engine in [
                &base64::engine::general_purpose::STANDARD_NO_PAD,
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ] {
                for phase in 0..3 {
                    let core = base64_core(&s.raw, phase, engine);
                    if core.len() >= MIN_CORE {
                        push(core, Kind::Exact);
                    }
                }
            }
            hex.push(&mut fulls, hex::encode(&s.raw).into_bytes(), i, Kind::Exact);
        }
        // A public value shorter than a piece cannot hold one.
        let shields = !secrets.is_empty()
            && secrets.iter().any(|s| s.shieldable)
            && public.iter().any(|p| p.len() >= MIN_PIECE);
        if shields {
            for (i, p) in public.iter().enumerate() {
                if p.len() >= MIN_PIECE {
                    let canon: Vec<u8> = p.iter().map(|b| canon(*b)).collect();
                    text.push(&mut fulls, canon, i, Kind::Public);
                }
            }
        }
        let build = |pats: &[Vec<u8>]| {
            if pats.is_empty() {
                return None;
            }
            // Building fails only past the automaton's size limits (gigabytes of
            // patterns); the secrets a collector holds are nowhere near.
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(true)
                .build(pats)
                .ok()
        };
        Engine {
            single: secrets
                .iter()
                .any(|s| s.raw.contains(&b'%') || s.raw.contains(&b'\\')),
            shields,
            text: build(&text.bytes),
            text_patterns: text.patterns,
            hex: build(&hex.bytes),
            hex_patterns: hex.patterns,
            fulls,
            secrets,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    pub(crate) fn secret(&self, i: usize) -> &Secret {
        &self.secrets[i]
    }

    /// True when `hay` holds any hit (a secret, an encoding of it, a piece of 8 or
    /// more not shielded by a public value): exactly when [`Engine::find`] finds one.
    /// Stops at the first hit that no public value can shield.
    pub(crate) fn any(&self, hay: &[u8]) -> bool {
        if self.secrets.is_empty() {
            return false;
        }
        if let Some(ac) = &self.hex {
            let hit = ac.find_overlapping_iter(hay).any(|m| {
                let p = self.hex_patterns[m.pattern().as_usize()];
                self.exact_end(p, hay, m.start(), m.end()).is_some()
            });
            if hit {
                return true;
            }
        }
        let Some(ac) = &self.text else {
            return false;
        };
        let (mut found, mut maybe) = (false, false);
        for_each_stream(hay, self.single, |units, _| {
            found = ac.find_overlapping_iter(units).any(|m| {
                let p = self.text_patterns[m.pattern().as_usize()];
                match p.kind {
                    Kind::Public => false,
                    Kind::Exact => self.exact_end(p, units, m.start(), m.end()).is_some(),
                    // A piece may lie inside a public value: decided by `find`.
                    Kind::Prefix | Kind::Suffix if self.shields => {
                        maybe |= self.secrets[p.secret].shieldable;
                        !self.secrets[p.secret].shieldable
                    }
                    Kind::Prefix | Kind::Suffix => true,
                }
            });
            !found
        });
        found || (maybe && !self.find(hay).is_empty())
    }

    /// Where the exact needle of `p` matched at `start` ends (`end` when the pattern
    /// is the whole needle), or `None` when the rest of the needle is not there (ASCII
    /// case ignored, as by the automatons).
    fn exact_end(&self, p: Pattern, units: &[u8], start: usize, end: usize) -> Option<usize> {
        let Some(k) = p.full else {
            return Some(end);
        };
        let full = &self.fulls[k];
        let got = units.get(start..start + full.len())?;
        got.eq_ignore_ascii_case(full).then_some(start + full.len())
    }

    /// Every hit in `hay`, merged into disjoint spans in order.
    pub(crate) fn find(&self, hay: &[u8]) -> Vec<Span> {
        let mut spans = Vec::new();
        if self.secrets.is_empty() || hay.is_empty() {
            return spans;
        }
        if let Some(ac) = &self.hex {
            for m in ac.find_overlapping_iter(hay) {
                let p = self.hex_patterns[m.pattern().as_usize()];
                let Some(end) = self.exact_end(p, hay, m.start(), m.end()) else {
                    continue;
                };
                spans.push(Span {
                    start: m.start(),
                    end,
                    secret: p.secret,
                    weight: self.secrets[p.secret].raw.len(),
                    piece: false,
                });
            }
        }
        let mut shields = Vec::new();
        if let Some(ac) = &self.text {
            for_each_stream(hay, self.single, |units, map| {
                self.search(ac, units, map, &mut spans, &mut shields);
                true
            });
        }
        if !shields.is_empty() {
            let cover = Cover::new(shields);
            spans.retain(|s| !(s.piece && self.secrets[s.secret].shieldable && cover.covers(s)));
        }
        merge(spans)
    }

    /// The hits of one stream in `out`, and the byte spans of the public values found
    /// in it in `shields`.
    fn search(
        &self,
        ac: &AhoCorasick,
        units: &[u8],
        map: &[Escape],
        out: &mut Vec<Span>,
        shields: &mut Vec<(usize, usize)>,
    ) {
        // Extending hits costs up to a secret's length each: a periodic secret (a
        // server's cookie `aaaa…`) against a body of the same bytes would cost their
        // product. Past this budget, a hit is widened to a whole secret's length
        // instead of extended: more is replaced, never less.
        let mut budget = EXTEND_BUDGET_PER_UNIT * units.len() + 4096;
        for m in ac.find_overlapping_iter(units) {
            let p = self.text_patterns[m.pattern().as_usize()];
            if p.kind == Kind::Public {
                if let Some(end) = self.exact_end(p, units, m.start(), m.end()) {
                    shields.push((unit_span(map, m.start()).0, unit_span(map, end - 1).1));
                }
                continue;
            }
            let s = &self.secrets[p.secret].canon;
            let n = s.len();
            let coarse = budget < n;
            budget = budget.saturating_sub(n);
            // A widened hit is not known to be a piece: never shielded.
            let (a, b, weight, piece) = match p.kind {
                Kind::Exact | Kind::Public => match self.exact_end(p, units, m.start(), m.end()) {
                    Some(end) => (m.start(), end, self.secrets[p.secret].raw.len(), false),
                    None => continue,
                },
                Kind::Prefix if coarse => (m.start(), (m.start() + n).min(units.len()), n, false),
                Kind::Suffix if coarse => (m.end().saturating_sub(n), m.end(), n, false),
                Kind::Prefix => {
                    let mut j = m.len();
                    while j < n
                        && m.start() + j < units.len()
                        && units[m.start() + j].eq_ignore_ascii_case(&s[j])
                    {
                        j += 1;
                    }
                    (m.start(), m.start() + j, j, j < n)
                }
                Kind::Suffix => {
                    let (mut a, mut k) = (m.start(), m.len());
                    while k < n && a > 0 && units[a - 1].eq_ignore_ascii_case(&s[n - k - 1]) {
                        a -= 1;
                        k += 1;
                    }
                    (a, m.end(), k, k < n)
                }
            };
            out.push(Span {
                start: unit_span(map, a).0,
                end: unit_span(map, b - 1).1,
                secret: p.secret,
                weight,
                piece,
            });
        }
    }

    /// `hay` with every hit replaced by the fingerprint of its secret, and the secrets
    /// replaced; `None` when there was nothing to replace. Repeated until the output
    /// holds no hit (a replacement can in principle join bytes into a new one).
    pub(crate) fn scrub(&self, hay: &[u8]) -> Option<(Vec<u8>, Vec<usize>)> {
        let mut spans = self.find(hay);
        if spans.is_empty() {
            return None;
        }
        let mut hits = Vec::new();
        let mut out = self.apply(hay, &spans, &mut hits);
        for _ in 1..MAX_PASSES {
            spans = self.find(&out);
            if spans.is_empty() {
                break;
            }
            out = self.apply(&out, &spans, &mut hits);
        }
        hits.sort_unstable();
        hits.dedup();
        Some((out, hits))
    }

    fn apply(&self, hay: &[u8], spans: &[Span], hits: &mut Vec<usize>) -> Vec<u8> {
        let mut out = Vec::with_capacity(hay.len());
        let mut last = 0;
        for sp in spans {
            out.extend_from_slice(&hay[last..sp.start]);
            out.extend_from_slice(self.secrets[sp.secret].fingerprint.as_bytes());
            hits.push(sp.secret);
            last = sp.end;
        }
        out.extend_from_slice(&hay[last..]);
        out
    }

    /// True when `value` is `secret` written in one of the encodings the streams
    /// decode (so `value` is a form of `secret`, not a secret of its own).
    pub(crate) fn is_form_of(value: &[u8], secret: &[u8]) -> bool {
        let want: Vec<u8> = secret.iter().map(|b| canon(*b)).collect();
        let mut same = false;
        for_each_stream(value, true, |units, _| {
            same = units == want.as_slice();
            !same
        });
        same
    }
}

/// The byte spans of the public values found in a haystack, for containment queries.
struct Cover {
    /// Spans sorted by start.
    spans: Vec<(usize, usize)>,
    /// `max_end[i]`: the furthest end among `spans[..=i]`.
    max_end: Vec<usize>,
}

impl Cover {
    fn new(mut spans: Vec<(usize, usize)>) -> Cover {
        spans.sort_unstable();
        let mut far = 0;
        let max_end = spans
            .iter()
            .map(|s| {
                far = far.max(s.1);
                far
            })
            .collect();
        Cover { spans, max_end }
    }

    /// True when `s` lies wholly inside one public value's span.
    fn covers(&self, s: &Span) -> bool {
        let i = self.spans.partition_point(|p| p.0 <= s.start);
        i > 0 && self.max_end[i - 1] >= s.end
    }
}

/// Merge overlapping spans; the longest match (then the longer secret) names each.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(cur) if s.start < cur.end => {
                cur.end = cur.end.max(s.end);
                if s.weight > cur.weight || (s.weight == cur.weight && s.secret < cur.secret) {
                    cur.secret = s.secret;
                    cur.weight = s.weight;
                }
            }
            _ => out.push(s),
        }
    }
    out
}

/// A decoded escape: `units` units starting at unit `unit` come from the `len` bytes
/// at `at` in the haystack.
#[derive(Clone, Copy, Debug)]
struct Escape {
    unit: usize,
    units: usize,
    at: usize,
    len: usize,
}

/// The haystack span `[start, end)` of unit `u`.
fn unit_span(map: &[Escape], u: usize) -> (usize, usize) {
    let i = map.partition_point(|e| e.unit <= u);
    if i == 0 {
        return (u, u + 1);
    }
    let e = map[i - 1];
    if u < e.unit + e.units {
        (e.at, e.at + e.len)
    } else {
        let at = e.at + e.len + (u - e.unit - e.units);
        (at, at + 1)
    }
}

/// Call `f` on each distinct normalised stream of `hay` (as written; JSON and percent
/// decoded; with `single`, also JSON only and percent only) until it returns false.
fn for_each_stream(hay: &[u8], single: bool, mut f: impl FnMut(&[u8], &[Escape]) -> bool) {
    let identity: Cow<'_, [u8]> = if memchr::memchr(b' ', hay).is_some() {
        let mut units = Vec::with_capacity(hay.len());
        push_run(&mut units, hay);
        Cow::Owned(units)
    } else {
        Cow::Borrowed(hay)
    };
    if !f(&identity, &[]) {
        return;
    }
    let has_json = memchr::memchr(b'\\', hay).is_some();
    let has_pct = memchr::memchr(b'%', hay).is_some();
    if !has_json && !has_pct {
        return;
    }
    let Some(both) = decode(hay, true, true) else {
        return;
    };
    if !f(&both.units, &both.map) {
        return;
    }
    // The single-scheme streams differ from `both` only when both schemes decoded
    // something; they catch a secret holding a literal `%XX` or `\x` written in the
    // other scheme, so they are built only when a secret holds `%` or `\`.
    if single && both.json && both.pct {
        for (json, pct) in [(true, false), (false, true)] {
            if let Some(s) = decode(hay, json, pct) {
                if !f(&s.units, &s.map) {
                    return;
                }
            }
        }
    }
}

struct Stream {
    units: Vec<u8>,
    map: Vec<Escape>,
    json: bool,
    pct: bool,
}

fn hexval(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex4(h: &[u8]) -> Option<u32> {
    let h = h.get(..4)?;
    h.iter()
        .try_fold(0u32, |acc, b| Some(acc << 4 | u32::from(hexval(*b)?)))
}

/// The JSON escape at the start of `s` (which starts with `\`): its bytes (UTF-8), how
/// many, and how long the escape is. `None` when it is not a valid escape.
fn json_escape(s: &[u8]) -> Option<([u8; 4], usize, usize)> {
    let single = |c: u8| Some(([c, 0, 0, 0], 1, 2));
    match *s.get(1)? {
        b'"' => single(b'"'),
        b'\\' => single(b'\\'),
        b'/' => single(b'/'),
        b'b' => single(8),
        b'f' => single(12),
        b'n' => single(b'\n'),
        b'r' => single(b'\r'),
        b't' => single(b'\t'),
        // `\U`: an echo that upper-cased a JSON escape.
        b'u' | b'U' => {
            let hi = hex4(s.get(2..)?)?;
            let (cp, len) = match hi {
                0xD800..=0xDBFF => {
                    if !s.get(6..8)?.eq_ignore_ascii_case(b"\\u") {
                        return None;
                    }
                    let lo = hex4(s.get(8..)?)?;
                    if !(0xDC00..=0xDFFF).contains(&lo) {
                        return None;
                    }
                    (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 12)
                }
                0xDC00..=0xDFFF => return None,
                cp => (cp, 6),
            };
            let c = char::from_u32(cp)?;
            let mut buf = [0u8; 4];
            let n = c.encode_utf8(&mut buf).len();
            Some((buf, n, len))
        }
        _ => None,
    }
}

/// Append `run` to `units`, spaces as `+`.
fn push_run(units: &mut Vec<u8>, run: &[u8]) {
    let start = units.len();
    units.extend_from_slice(run);
    for q in memchr::memchr_iter(b' ', run) {
        units[start + q] = b'+';
    }
}

/// Decode the escapes of the chosen schemes; `None` when there was none.
fn decode(hay: &[u8], json: bool, pct: bool) -> Option<Stream> {
    let next = |from: usize| {
        let rest = &hay[from..];
        match (json, pct) {
            (true, true) => memchr::memchr2(b'\\', b'%', rest),
            (true, false) => memchr::memchr(b'\\', rest),
            (false, true) => memchr::memchr(b'%', rest),
            (false, false) => None,
        }
        .map(|p| p + from)
    };
    let mut units = Vec::with_capacity(hay.len());
    let mut map = Vec::new();
    let (mut did_json, mut did_pct) = (false, false);
    let mut i = 0;
    while let Some(p) = next(i) {
        push_run(&mut units, &hay[i..p]);
        i = p + 1;
        if hay[p] == b'%' {
            if let (Some(h), Some(l)) = (
                hay.get(p + 1).and_then(|c| hexval(*c)),
                hay.get(p + 2).and_then(|c| hexval(*c)),
            ) {
                map.push(Escape {
                    unit: units.len(),
                    units: 1,
                    at: p,
                    len: 3,
                });
                units.push(canon(h << 4 | l));
                did_pct = true;
                i = p + 3;
                continue;
            }
        } else if let Some((bytes, n, len)) = json_escape(&hay[p..]) {
            map.push(Escape {
                unit: units.len(),
                units: n,
                at: p,
                len,
            });
            units.extend(bytes[..n].iter().map(|b| canon(*b)));
            did_json = true;
            i = p + len;
            continue;
        }
        units.push(hay[p]);
    }
    push_run(&mut units, &hay[i..]);
    (!map.is_empty()).then_some(Stream {
        units,
        map,
        json: did_json,
        pct: did_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(s: &str) -> Engine {
        Engine::new(&[(s.as_bytes().to_vec(), "t".into())], &[], &[])
    }

    #[test]
    fn spans_map_back_through_escapes() {
        let e = engine("abc/def+ghi~jkl");
        let hay = br#"x "abc\/def%2bghi%7Ejkl" y"#;
        let spans = e.find(hay);
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert_eq!(&hay[spans[0].start..spans[0].end], br"abc\/def%2bghi%7Ejkl");
    }

    #[test]
    fn surrogate_pairs_and_multibyte_units_map_to_the_whole_escape() {
        let e = engine("k\u{1F600}y-\u{e9}-secret");
        let hay = br#"["k\ud83d\ude00y-\u00E9-secret"]"#;
        let spans = e.find(hay);
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert_eq!(&hay[spans[0].start..spans[0].end], &hay[2..hay.len() - 2]);
    }

    #[test]
    fn base64_cores_cover_every_phase() {
        let secret = b"Zx9-secret-value-42";
        let e = Engine::new(&[(secret.to_vec(), "t".into())], &[], &[]);
        for lead in ["", "a", "ab", "user:", "client-id:"] {
            let mut plain = lead.as_bytes().to_vec();
            plain.extend_from_slice(secret);
            plain.extend_from_slice(b"!tail");
            for eng in [
                &base64::engine::general_purpose::STANDARD,
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ] {
                let b = eng.encode(&plain);
                assert!(e.any(b.as_bytes()), "{lead:?} {b}");
            }
        }
    }

    #[test]
    fn a_secret_like_the_replacement_text_does_not_feed_on_it() {
        let e = engine("redacted:sha256-lookalike-value");
        let (out, _) = e
            .scrub(b"x redacted:sha256-lookalike-value y")
            .expect("a hit");
        assert!(!e.any(&out), "{}", String::from_utf8_lossy(&out));
        assert!(!engine("sha256").any(b"redacted:sha256:00"));
        // A tail of the marker then hex: lengthened past the hex.
        let secret = "ed:sha256:0123456789abcdef-x";
        let e = engine(secret);
        let (out, _) = e.scrub(secret.as_bytes()).expect("a hit");
        assert!(!e.any(&out), "{secret}");
        // A "secret" that could be all inside a replacement is not searched as text.
        assert_eq!(
            engine("256:00000000000000000000000000").scrub(b"256:00000000000000000000000000"),
            None
        );
    }

    #[test]
    fn a_periodic_secret_against_a_periodic_body_stays_linear() {
        let secret = "a".repeat(4000) + "b";
        let e = engine(&secret);
        let hay = "a".repeat(200_000) + &secret + "c";
        let t = std::time::Instant::now();
        let (out, _) = e.scrub(hay.as_bytes()).expect("hits");
        assert!(!e.any(&out));
        assert!(!String::from_utf8_lossy(&out).contains("aaaaaaaa"));
        // Quadratic work would be ~10^9 steps; linear is milliseconds even unoptimised.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn a_public_value_shields_pieces_but_not_the_whole_secret_nor_strict_ones() {
        let secrets = [(b"test-client-secret".to_vec(), "t".to_string())];
        let public = [b"test-client-id".to_vec()];
        let e = Engine::new(&secrets, &public, &[]);
        // Inside the public value (raw, percent-encoded, other case): not a hit.
        for hay in [
            &b"client_id=test-client-id&x"[..],
            b"client_id=test%2Dclient%2did",
            b"CLIENT_ID=TEST-CLIENT-ID",
        ] {
            assert!(e.find(hay).is_empty(), "{}", String::from_utf8_lossy(hay));
            assert!(!e.any(hay));
        }
        // Outside it, or the whole secret: hits.
        assert!(e.any(b"cut: test-client-sec"));
        assert!(e.any(b"test-client-id test-client-secret"));
        assert!(e.any(b"xtest-client-secretx"));
        // A strict secret's pieces are hits even inside a public value.
        let strict = Engine::new(&secrets, &public, &[secrets[0].0.clone()]);
        assert!(strict.any(b"client_id=test-client-id"));
    }

    #[test]
    fn case_folded_forms_are_hits() {
        let e = engine("Abc/Def+Ghi~Jkl-0123");
        for hay in [
            &b"abc/def+ghi~jkl-0123"[..],
            b"ABC%2FDEF%2BGHI%7EJKL-0123",
            b"abc%2fdef%2bghi%7ejkl-0123",
            br"\U0041BC\/DEF+GHI~JKL-0123",
            b"ABC/DEF+G",
        ] {
            let spans = e.find(hay);
            assert_eq!(spans.len(), 1, "{}", String::from_utf8_lossy(hay));
            assert_eq!((spans[0].start, spans[0].end), (0, hay.len()));
        }
    }

    #[test]
    fn pieces_shorter_than_eight_are_not_hits() {
        let e = engine("0123456789abcdefXYZ");
        assert!(!e.any(b"..0123456.."));
        assert!(e.any(b"..01234567.."));
        assert!(e.any(b"..bcdefXYZ"));
        assert!(!e.any(b"..cdefXYZ"));
        // A piece from the middle is neither a prefix nor a suffix.
        assert!(!e.any(b"..23456789abcdef.."));
    }
}
