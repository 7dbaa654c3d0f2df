//! Redaction of credentials before a record is hashed (docs/bundle.md §4; the guarantee
//! and its limits: docs/collector.md).
//!
//! Three layers. The first two read HTTP exchanges; the third covers every record kind:
//! 1. **Headers by name**: `Authorization`/`Proxy-Authorization` keep their scheme word
//!    and lose the credential; a `DPoP` proof (RFC 9449) is replaced whole; `Cookie` and
//!    `Set-Cookie` keep cookie names and attributes and lose the values.
//! 2. **Fields by name** in bodies and URLs: OAuth fields (`access_token`,
//!    `refresh_token`, `client_secret`, `code_verifier`, …) in JSON bodies (also inside
//!    SSE `data:` lines), form bodies, query strings, and the query and fragment of a
//!    `Location` header (an authorization response redirect). `code` is only treated as
//!    a credential in forms, query strings and redirects, where OAuth carries
//!    authorization codes;
//!    in JSON it is the JSON-RPC error code or an ordinary argument name. The
//!    distinctive names are also looked for as `NAME=value` / `"NAME":"value"` in
//!    every text and byte string of any record (error messages, skip reasons, …).
//! 3. **Known secrets, everywhere**: every credential value the collector holds
//!    (bearer token, refresh token, client secret), every value found by layers 1-2 and
//!    every value learned from an earlier record is replaced in *every* text and byte
//!    string of the record (the observation is walked generically through its serde
//!    form, so a field added to the model later is covered without new code): URL,
//!    header names and values, bodies, reason phrases, skip reasons, transport error
//!    messages (`HttpOutcome::Error`, `BodyEnd::Error`, `first_attempt`), TLS handshake
//!    and verification errors, legacy-TLS server bytes, DNS host and errors. Only values
//!    of at least 6 bytes are chased this way; a shorter header credential
//!    (`Cookie: theme=1`) is fingerprinted in its header only.
//!
//! A value is replaced by `redacted:sha256:<hex>` of the value (always of the raw
//! secret, whatever encoding was found), and the record lists what was replaced and
//! where (`request.url`, `request.header:<Name>`, `request.body`,
//! `response.header:<Name>`, `response.body`, or the serde path of any other field, e.g.
//! `skipped.reason`, `http.outcome.error.message`, `tls.error.message`).
//!
//! # Encodings searched (layer 3)
//!
//! For every secret: raw; percent-encoded in upper, lower or mixed case with any subset
//! of characters encoded; form encoding (space as `+`); JSON string escapes with any
//! subset of characters written as `\uXXXX` (either case, surrogate pairs included;
//! `\UXXXX` too, what an upper-casing echo makes of one), `\/`, `\\`, `\"` and the
//! short escapes, also mixed with percent-encoding; base64 and base64url with or without
//! padding, including the secret at any byte offset inside a larger encoded blob
//! (`Basic` credentials, base64 of `anything:secret`): the characters that depend only
//! on the secret are searched for each of the three byte phases; hex in either case.
//!
//! **Letter case.** Every form is matched ASCII case-insensitively: a credential an
//! echo lower-cased or upper-cased (raw, inside percent-encoding or JSON escapes, its
//! base64) is a few million guesses from the original, so it is the credential. The
//! replacement is the fingerprint of the secret as registered, whatever case was found
//! (the fingerprint format is unchanged).
//!
//! # Cut secrets
//!
//! A secret cut by the body cap, an SSE event boundary or a chunk boundary, or an echo
//! that truncates it (`invalid token eyJhbGciOiJSUzI1…`), leaves a prefix or a suffix.
//! Any run of 8 or more bytes (after decoding the escapes above) that is a prefix or a
//! suffix of a known secret is treated as a hit and replaced, extended as far as it
//! keeps matching. The cost is false positives: unrelated text that happens to share the
//! first or last 8 characters of a secret loses them (for example the common `eyJhbGci`
//! start of another JWT when the secret is a JWT). Where hits of different secrets
//! overlap, the longest match names the replacement.
//!
//! **Public values** bound that cost where it did harm (a client id that shared its first characters with
//! the client secret was cut to pieces where the secret was redacted): the collector
//! registers the values it knows are not credentials and sends as they are (OAuth
//! `client_id`, `state`, `redirect_uri`, `resource`, `scope`, the authorization URL;
//! [`Redactor::add_public`]). A *piece* (a prefix or suffix hit shorter than the whole
//! secret) lying wholly inside an occurrence of a public value, in any encoding and case
//! the redactor searches, is not a hit: the client id `test-client-id` keeps its
//! `test-client-` when the client secret is `test-client-secret`. The whole secret is
//! replaced wherever it is, inside a public value too. Pieces of a credential the
//! operator gave ([`Redactor::add_given_secret`]: the `--token-env` token, `--header`
//! values, proxy credentials, stdio `--env` values) are never shielded: a server could
//! otherwise choose a client id holding most of the operator's token. So a server can
//! keep, in a bundle, at most a piece of a secret *it* issued inside a public value it
//! chose, which it could as well have published.
//!
//! # Limits (what cannot be caught)
//!
//! A secret the server transforms with anything the redactor does not know: encrypted,
//! hashed, signed with its own key, compressed, reversed or otherwise rearranged;
//! encoded twice (`%2541`, base64 of base64, percent-encoded JSON escapes); encodings not
//! listed above (HTML entities, quoted-printable, base32, UTF-16, base64 wrapped across
//! lines); split into pieces shorter than 8 bytes, or cut so that only a middle piece
//! remains. Hex is searched whole, not as cut pieces; base64 hits leave the one or two
//! characters at each edge that also carry bits of the neighbouring bytes. An *escaped*
//! piece written right after a stray `%` or `\` that, with the piece's first
//! characters, reads as an escape can lose up to 5 bytes of its start to that escape
//! (the raw form is always also searched as written, so a raw piece is not affected;
//! a secret that itself holds `%` or `\` is also searched with each scheme decoded
//! alone). Secrets shorter than 6 bytes are only replaced where a header rule found
//! them; a "secret" that could lie wholly inside a replacement (`redacted:sha256:<hex>`)
//! is not searched as text, and a piece of one that could is lengthened until it cannot
//! (otherwise every replacement would match it again).
//!
//! Cost: every body is decoded into at most four streams and searched once per stream
//! (one Aho-Corasick automaton for all secrets). Extending hits is bounded by a work
//! budget proportional to the input; past it (a periodic secret against a periodic
//! body) hits are widened to a whole secret's length instead of extended: more is
//! replaced, never less. [`Redactor::leaks`] is the backstop the collector runs before
//! hashing: it reports exactly the hits a scrub would replace, in the same encodings.

use crate::bundle::fingerprint;
use crate::model::{Body, Header, Observation, Record, Redaction, WireText};

mod engine;
use engine::Engine;

/// JSON object keys whose string values are credentials.
const JSON_SECRET_KEYS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "registration_access_token",
    "code_verifier",
    "device_code",
];

/// Form and query parameters whose values are credentials, besides [`JSON_SECRET_KEYS`]
/// (RFC 7523's assertions, RFC 8693's subject and actor tokens).
const FORM_ONLY_SECRET_KEYS: &[&str] = &[
    "code",
    "password",
    "client_assertion",
    "assertion",
    "token",
    "subject_token",
    "actor_token",
];

/// Shortest value treated as a secret when found by field name; shorter values
/// (`code=1`) would redact unrelated bytes across the record.
const MIN_SECRET_LEN: usize = 6;

/// Whether a form or query parameter's value is a credential.
fn is_form_secret_key(k: &str) -> bool {
    JSON_SECRET_KEYS.contains(&k) || FORM_ONLY_SECRET_KEYS.contains(&k)
}

/// Known secrets: (value, what).
type Known = Vec<(Vec<u8>, String)>;

/// Redacts records. Holds the live credentials the collector knows about, and the
/// public values that shield pieces of them ([`Redactor::add_public`]).
#[derive(Default, Clone)]
pub struct Redactor {
    known: Known,
    /// Values known not to be credentials (client ids, states, redirect URIs).
    public: Vec<Vec<u8>>,
    /// Secrets whose pieces no public value shields ([`Redactor::add_given_secret`]).
    strict: Vec<Vec<u8>>,
    engine: Engine,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} known secrets)", self.known.len())
    }
}

/// Shortest first: drop a candidate that is only an encoding of one already kept (a
/// form value seen percent-encoded in free text), so the fingerprint is the decoded
/// value's.
fn dedup(mut candidates: Vec<(Vec<u8>, String)>) -> Vec<(Vec<u8>, String)> {
    candidates.sort_by_key(|s| s.0.len());
    let mut kept: Vec<(Vec<u8>, String)> = Vec::with_capacity(candidates.len());
    for (v, what) in candidates {
        if !kept
            .iter()
            .any(|(s, _)| *s == v || Engine::is_form_of(&v, s))
        {
            kept.push((v, what));
        }
    }
    kept
}

impl Redactor {
    /// A redactor with no known secrets (header and field rules still apply).
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Register a live credential; it is replaced wherever it occurs, in every
    /// encoding the redactor knows. Values shorter than 6 bytes are ignored.
    pub fn add_secret(&mut self, value: &[u8], what: &str) {
        self.add_many(std::iter::once((value.to_vec(), what.to_string())));
    }

    /// Register a credential the operator gave the run (a `--token-env` token, a
    /// `--header` value, proxy credentials, a stdio `--env` value): replaced like
    /// [`Redactor::add_secret`], and its pieces are replaced even inside a public value
    /// (a server that chose a client id holding part of the operator's token must not
    /// get that part into the bundle).
    pub fn add_given_secret(&mut self, value: &[u8], what: &str) {
        if value.len() >= MIN_SECRET_LEN && !self.strict.iter().any(|s| s == value) {
            self.strict.push(value.to_vec());
            self.rebuild();
        }
        self.add_secret(value, what);
    }

    /// Register a value that is not a credential and that the collector sends or
    /// receives as it is (an OAuth `client_id`, `state`, `redirect_uri`, `resource`, an
    /// authorization URL). A cut piece of a secret (a run of 8 bytes or more that starts
    /// or ends it, shorter than the whole secret) that lies wholly inside an occurrence
    /// of this value, in any encoding and letter case the redactor searches, is left
    /// alone: `test-client-id` keeps its `test-client-` when the client secret is
    /// `test-client-secret`. A whole secret is replaced wherever it is, inside a public
    /// value too; pieces of a [given](Redactor::add_given_secret) secret are never
    /// shielded. Values shorter than 8 bytes cannot hold a piece and are ignored.
    pub fn add_public(&mut self, value: &[u8]) {
        if value.len() >= engine::MIN_PIECE && !self.public.iter().any(|p| p == value) {
            self.public.push(value.to_vec());
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        self.engine = Engine::new(&self.known, &self.public, &self.strict);
    }

    fn add_many(&mut self, values: impl IntoIterator<Item = (Vec<u8>, String)>) {
        let before = self.known.len();
        for (v, what) in values {
            if v.len() >= MIN_SECRET_LEN && !self.known.iter().any(|(s, _)| *s == v) {
                self.known.push((v, what));
            }
        }
        if self.known.len() != before {
            self.known = dedup(std::mem::take(&mut self.known));
            self.rebuild();
        }
    }

    /// Redact `record` in place: the header and field rules on an HTTP exchange, then
    /// every known secret in every string and byte string of any record kind.
    pub fn redact(&self, record: &mut Record) {
        self.redact_found(record);
    }

    /// Redact `record`, and remember every credential found in it so later records
    /// are redacted of it too (a server that leaks a token twice).
    pub fn redact_and_learn(&mut self, record: &mut Record) {
        // The engine built for the record's new secrets is the one later records need.
        if let Some((known, engine)) = self.redact_found(record) {
            self.known = known;
            self.engine = engine;
        }
    }

    /// Replace every known secret, in every encoding the redactor knows, and every
    /// prefix or suffix of 8 bytes or more, in `bytes`. True when something was
    /// replaced.
    pub fn scrub_bytes(&self, bytes: &mut Vec<u8>) -> bool {
        match self.engine.scrub(bytes) {
            Some((out, _)) => {
                *bytes = out;
                true
            }
            None => false,
        }
    }

    /// [`Redactor::scrub_bytes`] for text.
    pub fn scrub_str(&self, s: &str) -> String {
        match self.engine.scrub(s.as_bytes()) {
            Some((out, _)) => match String::from_utf8(out) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            },
            None => s.to_string(),
        }
    }

    /// Scrub every string (keys included) of a JSON value.
    pub fn scrub_json(&self, v: &mut serde_json::Value) {
        if self.engine.is_empty() {
            return;
        }
        match v {
            serde_json::Value::String(s) => *s = self.scrub_str(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.scrub_json(x)),
            serde_json::Value::Object(m) => {
                let old = std::mem::take(m);
                for (k, mut x) in old {
                    self.scrub_json(&mut x);
                    m.insert(self.scrub_str(&k), x);
                }
            }
            _ => {}
        }
    }

    /// Scrub every text and byte-string leaf and every text map key of any serialisable
    /// value, generically (a field added to the model later is covered without a new
    /// call site).
    ///
    /// The value goes through its serde form. Should a replacement break it (a
    /// secret equal to a field or variant name), the walk is redone leaving alone texts
    /// that look like identifiers (`[a-z0-9_]`, the shape of every serde field and
    /// variant name); what such a text still holds is then left to
    /// [`Redactor::leaks`]. A value whose serde form cannot be built or read back at
    /// all is returned as it was: callers hash nothing without [`Redactor::leaks`].
    pub fn scrub_serde<T>(&self, v: &T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Clone,
    {
        if self.engine.is_empty() {
            return v.clone();
        }
        let Ok(tree) = ciborium::Value::serialized(v) else {
            return v.clone();
        };
        let mut tree = Some(tree);
        for protect in [false, true] {
            // The first walk consumes the tree; the second (rare) starts again from `v`.
            let Some(mut t) = tree.take().or_else(|| ciborium::Value::serialized(v).ok()) else {
                break;
            };
            let mut changed = false;
            walk_mut(&mut t, &mut Vec::new(), protect, &mut |_, leaf| {
                if let Some((out, _)) = self.engine.scrub(leaf.bytes()) {
                    leaf.set(out);
                    changed = true;
                }
            });
            if !changed {
                return v.clone();
            }
            if let Ok(x) = t.deserialized() {
                return x;
            }
        }
        v.clone()
    }

    /// The last resort after [`Redactor::scrub_serde`]: every text or byte leaf of `v`
    /// (map keys included) that still [`leaks`](Redactor::leaks) is replaced, a text by
    /// `placeholder`, bytes by nothing. `None` when the result does not read back as `T`.
    pub fn withhold_serde<T>(&self, v: &T, placeholder: &str) -> Option<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut tree = ciborium::Value::serialized(v).ok()?;
        walk_mut(&mut tree, &mut Vec::new(), false, &mut |_, leaf| {
            if self.leaks(leaf.bytes()) {
                leaf.set(match leaf {
                    Leaf::Text(_) => placeholder.as_bytes().to_vec(),
                    Leaf::Bytes(_) => Vec::new(),
                });
            }
        });
        tree.deserialized().ok()
    }

    /// True when `bytes` still hold a known secret in an encoding the redactor knows,
    /// or a prefix or suffix of one of 8 bytes or more: exactly what
    /// [`Redactor::scrub_bytes`] would replace (so never true of its output). Stops at
    /// the first hit.
    pub fn leaks(&self, bytes: &[u8]) -> bool {
        self.engine.any(bytes)
    }

    /// The backstop before a record is hashed: true when a text or byte value of its
    /// observation, or a redaction's `location`, still [`leaks`](Redactor::leaks) —
    /// the values [`Redactor::redact`] scrubs, judged one at a time as a reader of the
    /// record sees them.
    ///
    /// Not judged: the record's CBOR framing (a length byte after a value can complete
    /// a piece no reader sees as one string), the model's own field names (map keys
    /// shaped like identifiers), the legs, and a redaction's `what` and `fingerprint`
    /// (labels the collector chose: `client-secret` is a suffix of the secret
    /// `test-client-secret`, and judging it withheld every record that named it).
    pub fn leaks_record(&self, record: &Record) -> bool {
        if self.engine.is_empty() {
            return false;
        }
        if record
            .redactions
            .iter()
            .any(|r| self.engine.any(r.location.as_bytes()))
        {
            return true;
        }
        let Ok(tree) = ciborium::Value::serialized(&record.observation) else {
            // Nothing to judge it by: fail closed.
            return true;
        };
        let mut leak = false;
        walk_values(&tree, &mut |b| {
            leak = leak || self.engine.any(b);
        });
        leak
    }

    /// Redact `record`; when it held credentials not known yet, the known secrets with
    /// them and the engine built for them.
    fn redact_found(&self, record: &mut Record) -> Option<(Known, Engine)> {
        let mut found: Vec<(Vec<u8>, String, String)> = Vec::new(); // value, what, location
        let red = &mut record.redactions;

        // Layers 1 and 2 on an HTTP exchange.
        let mut names: (Vec<WireText>, Vec<WireText>) = (Vec::new(), Vec::new());
        if let Observation::Http(x) = &mut record.observation {
            redact_headers(&mut x.request.headers, "request", red, &mut found);
            collect_query(&x.request.url, &mut found);
            collect_body(
                &x.request.headers,
                &x.request.body,
                "request.body",
                &mut found,
            );
            names.0 = x.request.headers.iter().map(|h| h.name.clone()).collect();
            if let crate::model::HttpOutcome::Response(resp) = &mut x.outcome {
                redact_headers(&mut resp.headers, "response", red, &mut found);
                collect_body(&resp.headers, &resp.body, "response.body", &mut found);
                names.1 = resp.headers.iter().map(|h| h.name.clone()).collect();
            }
        }

        // Every string and byte string of the observation, whatever its kind: read from
        // its encoding, which costs less than its serde tree (a tree is built below only
        // when there is a secret to replace; and here when the encoding is not read).
        let mut tree = None;
        let mut texts = Vec::new();
        let mut encoded = Vec::new();
        let read = ciborium::into_writer(&record.observation, &mut encoded)
            .ok()
            .and_then(|()| cbor_texts(&encoded, 0, 0, &mut |b| scan_text(b, &mut texts)))
            == Some(encoded.len());
        if read {
            found.append(&mut texts);
        } else {
            tree = ciborium::Value::serialized(&record.observation).ok();
            if let Some(tree) = &tree {
                walk(tree, &mut |b| scan_text(b, &mut found));
            }
        }

        let mut new: Vec<(Vec<u8>, String)> = Vec::new();
        for (v, what, _) in &found {
            // Layer 1 fingerprints a header credential of any length in place; only values
            // long enough to be unambiguous are chased through the rest of the record, or a
            // cookie `theme=1` would rewrite every `1` (JSON-RPC ids, status codes, …).
            if v.len() >= MIN_SECRET_LEN
                && !self.known.iter().any(|(s, _)| s == v)
                && !new.iter().any(|(s, _)| s == v)
            {
                new.push((v.clone(), what.clone()));
            }
        }
        let learned = (!new.is_empty()).then(|| {
            let mut secrets = self.known.clone();
            secrets.extend(new);
            let secrets = dedup(secrets);
            let engine = Engine::new(&secrets, &self.public, &self.strict);
            (secrets, engine)
        });
        let engine = learned.as_ref().map_or(&self.engine, |(_, e)| e);
        if engine.is_empty() {
            return learned;
        }
        let Some(tree) = tree.or_else(|| ciborium::Value::serialized(&record.observation).ok())
        else {
            return learned;
        };

        let hit = |location: &str, secret: usize, red: &mut Vec<Redaction>| {
            let s = engine.secret(secret);
            // A location is server-controlled text too (a header name).
            let location = match engine.scrub(location.as_bytes()) {
                Some((out, _)) => String::from_utf8_lossy(&out).into_owned(),
                None => location.to_string(),
            };
            if !red
                .iter()
                .any(|r| r.location == location && r.fingerprint == s.fingerprint)
            {
                red.push(Redaction {
                    location,
                    what: s.what.clone(),
                    fingerprint: s.fingerprint.clone(),
                });
            }
        };
        let mut tree = Some(tree);
        for protect in [false, true] {
            // The first walk consumes the tree; the second (rare) starts again from the
            // observation, which is unchanged until a walk succeeds.
            let Some(mut t) = tree
                .take()
                .or_else(|| ciborium::Value::serialized(&record.observation).ok())
            else {
                break;
            };
            let mut hits: Vec<(String, usize)> = Vec::new();
            walk_mut(&mut t, &mut Vec::new(), protect, &mut |path, leaf| {
                if let Some((out, secrets)) = engine.scrub(leaf.bytes()) {
                    leaf.set(out);
                    let location = location(path, &names);
                    hits.extend(secrets.into_iter().map(|s| (location.clone(), s)));
                }
            });
            if hits.is_empty() {
                return learned;
            }
            if let Ok(obs) = t.deserialized::<Observation>() {
                record.observation = obs;
                for (location, s) in hits {
                    hit(&location, s, &mut record.redactions);
                }
                return learned;
            }
        }
        // Unreachable for the model's types (every serde name is an identifier, left
        // alone by the second walk). Fail closed: drop the observation rather than keep
        // a secret in it.
        record.observation = Observation::Skipped {
            reason: "the redactor could not rewrite this observation; dropped".into(),
        };
        learned
    }
}

/// A step of the path to a leaf of a serde tree.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The `Redaction.location` of the leaf at `path`: the names used since the first
/// version for the HTTP parts, else the serde path joined with dots.
fn location(path: &[Step], names: &(Vec<WireText>, Vec<WireText>)) -> String {
    let keys: Vec<&str> = path
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.as_str(),
            Step::Index(_) => "#",
        })
        .collect();
    let index = |i: usize| match path.get(i) {
        Some(Step::Index(n)) => *n,
        _ => usize::MAX,
    };
    let name = |v: &Vec<WireText>, n: usize| v.get(n).cloned().unwrap_or_default();
    match keys.as_slice() {
        ["http", "request", "url"] => "request.url".into(),
        ["http", "request", "body", "bytes"] => "request.body".into(),
        ["http", "request", "headers", "#", "value"] => {
            format!("request.header:{}", name(&names.0, index(3)))
        }
        ["http", "outcome", "response", "body", "bytes"] => "response.body".into(),
        ["http", "outcome", "response", "headers", "#", "value"] => {
            format!("response.header:{}", name(&names.1, index(4)))
        }
        _ => path
            .iter()
            .map(|s| match s {
                Step::Key(k) => k.clone(),
                Step::Index(n) => n.to_string(),
            })
            .collect::<Vec<_>>()
            .join("."),
    }
}

/// A text or byte-string leaf of a serde tree.
enum Leaf<'a> {
    Text(&'a mut String),
    Bytes(&'a mut Vec<u8>),
}

impl Leaf<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Leaf::Text(s) => s.as_bytes(),
            Leaf::Bytes(b) => b,
        }
    }

    fn set(&mut self, out: Vec<u8>) {
        match self {
            Leaf::Text(s) => {
                **s = match String::from_utf8(out) {
                    Ok(s) => s,
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                }
            }
            Leaf::Bytes(b) => **b = out,
        }
    }
}

/// Texts shaped like a serde field or variant name.
fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Visit every text and byte string of `v` (map keys included).
fn walk(v: &ciborium::Value, f: &mut impl FnMut(&[u8])) {
    use ciborium::Value as V;
    match v {
        V::Text(s) => f(s.as_bytes()),
        V::Bytes(b) => f(b),
        V::Array(a) => a.iter().for_each(|x| walk(x, f)),
        V::Map(m) => m.iter().for_each(|(k, x)| {
            walk(k, f);
            walk(x, f);
        }),
        V::Tag(_, x) => walk(x, f),
        _ => {}
    }
}

/// Call `f` with every text and byte string of the CBOR item at `p` in `b` (map keys
/// included), in the order [`walk`] visits them in the item's `ciborium::Value`; returns
/// where the item ends. `None` for what this reader does not take (an indefinite-length
/// string, a reserved value, nesting past 512, bytes that end early): the caller then
/// builds the value and walks it.
fn cbor_texts(b: &[u8], mut p: usize, depth: usize, f: &mut impl FnMut(&[u8])) -> Option<usize> {
    if depth > 512 {
        return None;
    }
    let first = *b.get(p)?;
    p += 1;
    let (major, info) = (first >> 5, first & 0x1f);
    let arg = match info {
        0..=23 => Some(u64::from(info)),
        24..=27 => {
            let n = 1usize << (info - 24);
            let bytes = b.get(p..p + n)?;
            p += n;
            Some(bytes.iter().fold(0u64, |a, x| a << 8 | u64::from(*x)))
        }
        31 if matches!(major, 4 | 5) => None,
        _ => return None,
    };
    match major {
        0 | 1 => Some(p),
        2 | 3 => {
            let end = p.checked_add(usize::try_from(arg?).ok()?)?;
            f(b.get(p..end)?);
            Some(end)
        }
        4 | 5 => {
            let per = if major == 5 { 2 } else { 1 };
            match arg {
                Some(n) => {
                    for _ in 0..n.checked_mul(per)? {
                        p = cbor_texts(b, p, depth + 1, f)?;
                    }
                    Some(p)
                }
                None => loop {
                    if *b.get(p)? == 0xff {
                        return Some(p + 1);
                    }
                    for _ in 0..per {
                        p = cbor_texts(b, p, depth + 1, f)?;
                    }
                },
            }
        }
        6 => {
            arg?;
            cbor_texts(b, p, depth + 1, f)
        }
        // Simple values and floats: their argument bytes were skipped above.
        _ => Some(p),
    }
}

/// Visit every text and byte string of `v` except map keys shaped like identifiers (the
/// model's field names).
fn walk_values(v: &ciborium::Value, f: &mut impl FnMut(&[u8])) {
    use ciborium::Value as V;
    match v {
        V::Text(s) => f(s.as_bytes()),
        V::Bytes(b) => f(b),
        V::Array(a) => a.iter().for_each(|x| walk_values(x, f)),
        V::Map(m) => m.iter().for_each(|(k, x)| {
            if !matches!(k, V::Text(s) if is_identifier(s)) {
                walk_values(k, f);
            }
            walk_values(x, f);
        }),
        V::Tag(_, x) => walk_values(x, f),
        _ => {}
    }
}

/// Visit every text and byte string of `v` mutably, with its path (map keys included;
/// with `protect`, texts shaped like identifiers are skipped).
fn walk_mut(
    v: &mut ciborium::Value,
    path: &mut Vec<Step>,
    protect: bool,
    f: &mut impl FnMut(&[Step], &mut Leaf<'_>),
) {
    use ciborium::Value as V;
    match v {
        V::Text(s) if protect && is_identifier(s) => {}
        V::Text(s) => f(path, &mut Leaf::Text(s)),
        V::Bytes(b) => f(path, &mut Leaf::Bytes(b)),
        V::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                path.push(Step::Index(i));
                walk_mut(x, path, protect, f);
                path.pop();
            }
        }
        V::Map(m) => {
            for (k, x) in m.iter_mut() {
                let step = match k {
                    V::Text(s) => Step::Key(s.clone()),
                    _ => Step::Key(String::new()),
                };
                walk_mut(k, path, protect, f);
                path.push(step);
                walk_mut(x, path, protect, f);
                path.pop();
            }
        }
        V::Tag(_, x) => walk_mut(x, path, protect, f),
        _ => {}
    }
}

fn redact_headers(
    headers: &mut [Header],
    side: &str,
    red: &mut Vec<Redaction>,
    found: &mut Vec<(Vec<u8>, String, String)>,
) {
    for h in headers.iter_mut() {
        let lname = h.name.to_ascii_lowercase();
        let location = format!("{side}.header:{}", h.name);
        match lname.as_str() {
            "authorization" | "proxy-authorization" => {
                let v = h.value.clone();
                let (scheme, cred) = match v.iter().position(|b| *b == b' ') {
                    Some(p) => (&v[..p], trim(&v[p + 1..])),
                    None => (&v[..0], &v[..]),
                };
                if cred.is_empty() || cred.starts_with(b"redacted:sha256:") {
                    continue;
                }
                let fp = fingerprint(cred);
                let what = if scheme.eq_ignore_ascii_case(b"bearer") {
                    "bearer-token"
                } else if scheme.eq_ignore_ascii_case(b"dpop") {
                    "dpop-token"
                } else {
                    "authorization"
                };
                let mut nv = scheme.to_vec();
                if !nv.is_empty() {
                    nv.push(b' ');
                }
                nv.extend_from_slice(fp.as_bytes());
                h.value = nv.into();
                red.push(Redaction {
                    location,
                    what: what.into(),
                    fingerprint: fp,
                });
                found.push((cred.to_vec(), what.into(), String::new()));
            }
            "location" => collect_redirect(&h.value, &location, found),
            "dpop" => {
                // RFC 9449 proof: a JWT signed with the run's key, bound to the token by
                // `ath`. Not the token, but a credential artefact: the whole value goes.
                let v = trim(&h.value).to_vec();
                if v.is_empty() || v.starts_with(b"redacted:sha256:") {
                    continue;
                }
                let fp = fingerprint(&v);
                h.value = fp.clone().into_bytes().into();
                red.push(Redaction {
                    location,
                    what: "dpop-proof".into(),
                    fingerprint: fp,
                });
                found.push((v, "dpop-proof".into(), String::new()));
            }
            "cookie" | "set-cookie" => {
                // Cookie: a=1; b=2      Set-Cookie: a=1; Path=/; HttpOnly
                let v = h.value.clone();
                let parts: Vec<&[u8]> = v.split(|b| *b == b';').collect();
                let mut out: Vec<u8> = Vec::with_capacity(v.len());
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        out.push(b';');
                    }
                    let is_value = lname == "cookie" || i == 0;
                    match (is_value, part.iter().position(|b| *b == b'=')) {
                        (true, Some(eq)) => {
                            let val = trim(&part[eq + 1..]);
                            out.extend_from_slice(&part[..eq + 1]);
                            if val.is_empty() || val.starts_with(b"redacted:sha256:") {
                                out.extend_from_slice(val);
                            } else {
                                let fp = fingerprint(val);
                                out.extend_from_slice(fp.as_bytes());
                                red.push(Redaction {
                                    location: location.clone(),
                                    what: "cookie".into(),
                                    fingerprint: fp,
                                });
                                found.push((val.to_vec(), "cookie".into(), String::new()));
                            }
                        }
                        _ => out.extend_from_slice(part),
                    }
                }
                h.value = out.into();
            }
            _ => {}
        }
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let e = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(s, |p| p + 1);
    &b[s..e]
}

fn collect_query(url: &str, found: &mut Vec<(Vec<u8>, String, String)>) {
    if let Ok(u) = url::Url::parse(url) {
        for (k, v) in u.query_pairs() {
            if is_form_secret_key(&k) && v.len() >= MIN_SECRET_LEN && !v.starts_with("redacted:") {
                found.push((v.as_bytes().to_vec(), k.into_owned(), "request.url".into()));
            }
        }
    }
}

/// The credentials a redirect carries: OAuth parameters in the query and in the
/// fragment of a `Location` (an authorization response: `code`, or a fragment's
/// `access_token`), absolute or relative.
fn collect_redirect(value: &[u8], location: &str, found: &mut Vec<(Vec<u8>, String, String)>) {
    let text = String::from_utf8_lossy(trim(value));
    let Ok(base) = url::Url::parse("http://redirect.invalid/") else {
        return;
    };
    let Ok(u) = base.join(&text) else {
        return;
    };
    let fragment = u
        .fragment()
        .map(|f| url::form_urlencoded::parse(f.as_bytes()));
    for (k, v) in u.query_pairs().chain(fragment.into_iter().flatten()) {
        if is_form_secret_key(&k) && v.len() >= MIN_SECRET_LEN && !v.starts_with("redacted:") {
            found.push((v.as_bytes().to_vec(), k.into_owned(), location.into()));
        }
    }
}

fn collect_body(
    headers: &[Header],
    body: &Body,
    location: &str,
    found: &mut Vec<(Vec<u8>, String, String)>,
) {
    if body.bytes.is_empty() {
        return;
    }
    let ctype = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| h.value_str().to_ascii_lowercase())
        .unwrap_or_default();
    if ctype.contains("application/x-www-form-urlencoded") {
        for (k, v) in url::form_urlencoded::parse(&body.bytes) {
            if is_form_secret_key(&k) && v.len() >= MIN_SECRET_LEN && !v.starts_with("redacted:") {
                found.push((v.as_bytes().to_vec(), k.into_owned(), location.into()));
            }
        }
        return;
    }
    // JSON, or JSON inside SSE data lines; anything else is left to the known secrets.
    // A body that holds no name of JSON_SECRET_KEYS as written, and no backslash (a
    // key can be written with an escape, `access\u005ftoken`), has no such key once
    // parsed either: it is not parsed.
    if memchr::memchr(b'\\', &body.bytes).is_none()
        && !TEXT_KEY_FINDERS[..JSON_SECRET_KEYS.len()]
            .iter()
            .any(|(_, f)| f.find(&body.bytes).is_some())
    {
        return;
    }
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body.bytes) {
        collect_json(&v, location, found);
    } else {
        for ev in crate::sse::parse(&body.bytes).events {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&ev.data) {
                collect_json(&v, location, found);
            }
        }
    }
}

fn collect_json(v: &serde_json::Value, location: &str, found: &mut Vec<(Vec<u8>, String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, val) in m {
                match val {
                    serde_json::Value::String(s)
                        if JSON_SECRET_KEYS.contains(&k.as_str())
                            && s.len() >= MIN_SECRET_LEN
                            && !s.starts_with("redacted:") =>
                    {
                        found.push((s.as_bytes().to_vec(), k.clone(), location.into()));
                    }
                    other => collect_json(other, location, found),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_json(x, location, found)),
        _ => {}
    }
}

/// Field names distinctive enough to look for in free text (error messages, HTML,
/// `instructions`): `NAME=value`, `"NAME":"value"`, `NAME: value`, also JSON-escaped;
/// these and [`JSON_SECRET_KEYS`], which come first.
const TEXT_ONLY_SECRET_KEYS: &[&str] = &["client_assertion"];

fn is_value_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'+' | b'/' | b'-' | b'%' | b'=')
}

/// True when every name holds an underscore ([`scan_text`] skips a text without one).
const fn all_hold_an_underscore(names: &[&str]) -> bool {
    let mut i = 0;
    while i < names.len() {
        let b = names[i].as_bytes();
        let (mut j, mut found) = (0, false);
        while j < b.len() {
            found |= b[j] == b'_';
            j += 1;
        }
        if !found {
            return false;
        }
        i += 1;
    }
    true
}
const _: () = assert!(
    all_hold_an_underscore(JSON_SECRET_KEYS) && all_hold_an_underscore(TEXT_ONLY_SECRET_KEYS)
);

/// The searchers of [`scan_text`], one per name of [`JSON_SECRET_KEYS`] and
/// [`TEXT_ONLY_SECRET_KEYS`], in that order: built once, not on every text scanned (a
/// record has dozens of texts, and building a searcher costs more than running it on a
/// short one).
static TEXT_KEY_FINDERS: std::sync::LazyLock<Vec<(&'static str, memchr::memmem::Finder<'static>)>> =
    std::sync::LazyLock::new(|| {
        JSON_SECRET_KEYS
            .iter()
            .chain(TEXT_ONLY_SECRET_KEYS)
            .map(|k| (*k, memchr::memmem::Finder::new(k.as_bytes())))
            .collect()
    });

/// Find `NAME<sep>value` in arbitrary bytes, where `<sep>` is made of `=`, `:`, quotes,
/// backslashes and spaces (at most 6 bytes).
fn scan_text(hay: &[u8], found: &mut Vec<(Vec<u8>, String, String)>) {
    // Every name holds an underscore (checked at compile time, above): a text without
    // one holds none of them.
    if memchr::memchr(b'_', hay).is_none() {
        return;
    }
    for (key, finder) in TEXT_KEY_FINDERS.iter() {
        let k = key.as_bytes();
        let mut after = 0; // end of the last value taken: no key inside it is read
        for i in finder.find_iter(hay) {
            if i < after || i + k.len() >= hay.len() {
                continue;
            }
            let mut j = i + k.len();
            let sep_start = j;
            while j < hay.len()
                && j - sep_start < 6
                && matches!(hay[j], b'=' | b':' | b'"' | b'\\' | b' ' | b'\'')
            {
                j += 1;
            }
            let has_sep = hay[sep_start..j].iter().any(|b| *b == b'=' || *b == b':');
            let v0 = j;
            while j < hay.len() && is_value_byte(hay[j]) {
                j += 1;
            }
            let value = &hay[v0..j];
            if has_sep && value.len() >= MIN_SECRET_LEN && !value.starts_with(b"redacted") {
                found.push((value.to_vec(), key.to_string(), String::new()));
            }
            after = j;
        }
    }
}

/// Decode a compact JWS access token into (header, claims). The signature is dropped.
/// Returns `None` when the token is not a JWT.
pub fn decode_jwt(token: &str) -> Option<(serde_json::Value, serde_json::Value)> {
    use base64::Engine;
    let mut parts = token.split('.');
    let (h, c, _sig) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let dec = |s: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim_end_matches('='))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .filter(|v| v.is_object())
    };
    Some((dec(h)?, dec(c)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::testkit::http_record;

    fn texts_of_tree(o: &Observation) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        walk(&ciborium::Value::serialized(o).unwrap(), &mut |b| {
            out.push(b.to_vec())
        });
        out
    }

    fn texts_of_encoding(o: &Observation) -> Vec<Vec<u8>> {
        let mut enc = Vec::new();
        ciborium::into_writer(o, &mut enc).unwrap();
        let mut out = Vec::new();
        let end = cbor_texts(&enc, 0, 0, &mut |b| out.push(b.to_vec()));
        assert_eq!(end, Some(enc.len()));
        out
    }

    #[test]
    fn the_texts_read_from_an_encoding_are_the_texts_of_its_tree() {
        let mut http = http_record(
            &["x"],
            "https://h.example/mcp?code=abc",
            r#"{"access_token":"at-1234567"}"#,
            200,
            "{\"result\":{\"é\":[1,-2,3.5,null,true]}}".as_bytes(),
        )
        .observation;
        if let Observation::Http(x) = &mut http {
            x.request.headers.push(Header {
                name: "X-Bin".into(),
                value: vec![0, 0xff, b'_'].into(),
            });
        }
        let json: serde_json::Value = serde_json::json!({"k": ["v", {"n": 1.25}], "": ""});
        for o in [
            http,
            Observation::Skipped {
                reason: "not sent: client_secret=abcdef".into(),
            },
            Observation::Dns(crate::model::DnsLookup {
                host: "h.example".into(),
                addresses: vec!["192.0.2.1:443".into(), String::new()],
                error: Some(crate::model::TransportError {
                    kind: crate::model::ErrorKind::Dns,
                    message: "refresh_token: nope".into(),
                }),
            }),
        ] {
            assert_eq!(texts_of_encoding(&o), texts_of_tree(&o));
        }
        // A JSON value (indefinite and definite maps, floats) inside any serialisable.
        let mut enc = Vec::new();
        ciborium::into_writer(&json, &mut enc).unwrap();
        let mut got = Vec::new();
        assert_eq!(
            cbor_texts(&enc, 0, 0, &mut |b| got.push(b.to_vec())),
            Some(enc.len())
        );
        let mut want = Vec::new();
        walk(&ciborium::Value::serialized(&json).unwrap(), &mut |b| {
            want.push(b.to_vec())
        });
        assert_eq!(got, want);
        // What the reader does not take is refused, not misread.
        assert_eq!(
            cbor_texts(&[0x7f, 0x61, b'a', 0xff], 0, 0, &mut |_| {}),
            None
        );
        assert_eq!(cbor_texts(&[0x65, b'a'], 0, 0, &mut |_| {}), None);
        assert_eq!(cbor_texts(&[0x1c], 0, 0, &mut |_| {}), None);
        assert_eq!(cbor_texts(&[0x9f, 0x61, b'a'], 0, 0, &mut |_| {}), None);
    }
}
