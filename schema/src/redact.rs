//! Redaction of credentials before a record is hashed (design.md §3).
//!
//! Three layers, each applied to every HTTP exchange:
//! 1. **Headers by name**: `Authorization`/`Proxy-Authorization` keep their scheme word
//!    and lose the credential; `Cookie` and `Set-Cookie` keep cookie names and
//!    attributes and lose the values.
//! 2. **Fields by name** in bodies and URLs: OAuth fields (`access_token`,
//!    `refresh_token`, `client_secret`, `code_verifier`, …) in JSON bodies (also inside
//!    SSE `data:` lines), form bodies and query strings. `code` is only treated as a
//!    credential in forms and query strings, where OAuth carries authorization codes;
//!    in JSON it is the JSON-RPC error code or an ordinary argument name.
//! 3. **Known secrets**: every credential value the collector itself holds (bearer
//!    token, refresh token, client secret) and every value found by layers 1-2 is
//!    replaced wherever else it occurs in the record (an echoing server, a token in an
//!    error message), raw, percent-encoded and JSON-escaped. Only values of at least
//!    6 bytes are chased this way; a shorter header credential (`Cookie: theme=1`) is
//!    fingerprinted in its header only.
//!
//! A value is replaced by `redacted:sha256:<hex>` of the value, and the record lists what
//! was replaced and where.

use crate::bundle::fingerprint;
use crate::model::{Body, Header, HttpOutcome, Observation, Record, Redaction};

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

/// Form and query parameters whose values are credentials.
const FORM_SECRET_KEYS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "registration_access_token",
    "code_verifier",
    "device_code",
    "code",
    "password",
    "client_assertion",
    "assertion",
    "token",
];

/// Shortest value treated as a secret when found by field name; shorter values
/// (`code=1`) would redact unrelated bytes across the record.
const MIN_SECRET_LEN: usize = 6;

/// Redacts records. Holds the live credentials the collector knows about.
#[derive(Default, Clone)]
pub struct Redactor {
    known: Vec<(Vec<u8>, String)>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} known secrets)", self.known.len())
    }
}

impl Redactor {
    /// A redactor with no known secrets (header and field rules still apply).
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Register a live credential; it is replaced wherever it occurs.
    pub fn add_secret(&mut self, value: &[u8], what: &str) {
        if value.len() >= MIN_SECRET_LEN && !self.known.iter().any(|(v, _)| v == value) {
            self.known.push((value.to_vec(), what.to_string()));
        }
    }

    /// Redact `record` in place. Non-HTTP records carry no credentials.
    pub fn redact(&self, record: &mut Record) {
        self.redact_found(record);
    }

    /// Redact `record`, and remember every credential found in it so later records
    /// are redacted of it too (a server that leaks a token twice).
    pub fn redact_and_learn(&mut self, record: &mut Record) {
        for (v, what) in self.redact_found(record) {
            self.add_secret(&v, &what);
        }
    }

    /// Replace every known secret, in every encoding the redactor knows, in `bytes`.
    /// True when something was replaced. (Scaffold: issue 8 widens the encodings.)
    pub fn scrub_bytes(&self, bytes: &mut Vec<u8>) -> bool {
        let mut any = false;
        for (secret, _) in &self.known {
            let fp = fingerprint(secret);
            any |= replace_forms(bytes, &encodings(secret), fp.as_bytes());
        }
        any
    }

    /// [`Redactor::scrub_bytes`] for text.
    pub fn scrub_str(&self, s: &str) -> String {
        let mut b = s.as_bytes().to_vec();
        if self.scrub_bytes(&mut b) {
            String::from_utf8_lossy(&b).into_owned()
        } else {
            s.to_string()
        }
    }

    /// Scrub every string (keys included) of a JSON value.
    pub fn scrub_json(&self, v: &mut serde_json::Value) {
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

    /// Scrub every text and byte-string leaf of any serialisable value, generically (a
    /// field added to the model later is covered without a new call site).
    pub fn scrub_serde<T>(&self, v: &T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Clone,
    {
        if self.known.is_empty() {
            return v.clone();
        }
        let Ok(mut value) = ciborium::Value::serialized(v) else {
            return v.clone();
        };
        self.scrub_cbor(&mut value);
        value.deserialized().unwrap_or_else(|_| v.clone())
    }

    fn scrub_cbor(&self, v: &mut ciborium::Value) {
        use ciborium::Value as V;
        match v {
            V::Text(s) => *s = self.scrub_str(s),
            V::Bytes(b) => {
                self.scrub_bytes(b);
            }
            V::Array(a) => a.iter_mut().for_each(|x| self.scrub_cbor(x)),
            V::Map(m) => m.iter_mut().for_each(|(k, x)| {
                self.scrub_cbor(k);
                self.scrub_cbor(x);
            }),
            V::Tag(_, x) => self.scrub_cbor(x),
            _ => {}
        }
    }

    /// True when `bytes` still hold a known secret in an encoding the redactor knows.
    pub fn leaks(&self, bytes: &[u8]) -> bool {
        self.known
            .iter()
            .any(|(s, _)| encodings(s).iter().any(|f| find(bytes, f)))
    }

    fn redact_found(&self, record: &mut Record) -> Vec<(Vec<u8>, String)> {
        let Observation::Http(x) = &mut record.observation else {
            return Vec::new();
        };
        let mut found: Vec<(Vec<u8>, String, String)> = Vec::new(); // value, what, location
        let red = &mut record.redactions;

        redact_headers(&mut x.request.headers, "request", red, &mut found);
        collect_query(&x.request.url, &mut found);
        collect_body(
            &x.request.headers,
            &x.request.body,
            "request.body",
            &mut found,
        );
        scan_text(x.request.url.as_bytes(), &mut found);
        x.request
            .headers
            .iter()
            .for_each(|h| scan_text(&h.value, &mut found));
        scan_text(&x.request.body.bytes, &mut found);
        if let HttpOutcome::Response(resp) = &mut x.outcome {
            redact_headers(&mut resp.headers, "response", red, &mut found);
            collect_body(&resp.headers, &resp.body, "response.body", &mut found);
            resp.headers
                .iter()
                .for_each(|h| scan_text(&h.value, &mut found));
            scan_text(&resp.body.bytes, &mut found);
        }

        let mut candidates: Vec<(Vec<u8>, String)> = self.known.clone();
        for (v, what, _) in &found {
            // Layer 1 fingerprints a header credential of any length in place; only values
            // long enough to be unambiguous are chased through the rest of the record, or a
            // cookie `theme=1` would rewrite every `1` (JSON-RPC ids, status codes, …).
            if v.len() >= MIN_SECRET_LEN && !candidates.iter().any(|(s, _)| s == v) {
                candidates.push((v.clone(), what.clone()));
            }
        }
        // A free-text hit may be the percent-encoded form of a value a field rule already
        // decoded (`code_verifier=a%7Eb` in a form body). Such a form is replaced as an
        // encoding of the kept value, so the fingerprint is the value's, as everywhere
        // else. Encodings are longer than what they encode: deciding shortest first keeps
        // the value a dropped form belongs to.
        candidates.sort_by_key(|s| s.0.len());
        let mut secrets: Vec<(Vec<u8>, String)> = Vec::with_capacity(candidates.len());
        for (v, what) in candidates {
            if !secrets.iter().any(|(s, _)| encodings(s).contains(&v)) {
                secrets.push((v, what));
            }
        }
        // Longest first, so a token that contains another secret is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.0.len()));

        for (secret, what) in &secrets {
            let fp = fingerprint(secret);
            let forms = encodings(secret);
            let hit = |location: &str, red: &mut Vec<Redaction>| {
                if !red
                    .iter()
                    .any(|r| r.location == location && r.fingerprint == fp)
                {
                    red.push(Redaction {
                        location: location.to_string(),
                        what: what.clone(),
                        fingerprint: fp.clone(),
                    });
                }
            };
            let mut url = x.request.url.clone().into_bytes();
            if replace_forms(&mut url, &forms, fp.as_bytes()) {
                x.request.url = String::from_utf8_lossy(&url).into_owned();
                hit("request.url", red);
            }
            for h in &mut x.request.headers {
                if replace_forms(&mut h.value, &forms, fp.as_bytes()) {
                    hit(&format!("request.header:{}", h.name), red);
                }
            }
            if replace_forms(&mut x.request.body.bytes, &forms, fp.as_bytes()) {
                hit("request.body", red);
            }
            if let HttpOutcome::Response(resp) = &mut x.outcome {
                for h in &mut resp.headers {
                    if replace_forms(&mut h.value, &forms, fp.as_bytes()) {
                        hit(&format!("response.header:{}", h.name), red);
                    }
                }
                if replace_forms(&mut resp.body.bytes, &forms, fp.as_bytes()) {
                    hit("response.body", red);
                }
            }
        }
        secrets
    }
}

/// The forms in which a secret may appear in bytes: raw, percent-encoded, JSON-escaped.
fn encodings(secret: &[u8]) -> Vec<Vec<u8>> {
    let mut forms = vec![secret.to_vec()];
    let pct: Vec<u8> = url::form_urlencoded::byte_serialize(secret)
        .collect::<String>()
        .into_bytes();
    if pct != secret {
        forms.push(pct);
    }
    if let Ok(s) = std::str::from_utf8(secret) {
        if let Ok(j) = serde_json::to_string(s) {
            let inner = j.as_bytes()[1..j.len() - 1].to_vec();
            if inner != secret {
                forms.push(inner);
            }
        }
    }
    forms
}

fn replace_forms(hay: &mut Vec<u8>, forms: &[Vec<u8>], with: &[u8]) -> bool {
    let mut any = false;
    for f in forms {
        if let Some(new) = replace_all(hay, f, with) {
            *hay = new;
            any = true;
        }
    }
    any
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Replace every occurrence of `needle` in `hay`; `None` when there is none.
pub fn replace_all(hay: &[u8], needle: &[u8], with: &[u8]) -> Option<Vec<u8>> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    let mut last = 0;
    while i + needle.len() <= hay.len() {
        if hay[i] == needle[0] && &hay[i..i + needle.len()] == needle {
            let o = out.get_or_insert_with(|| Vec::with_capacity(hay.len()));
            o.extend_from_slice(&hay[last..i]);
            o.extend_from_slice(with);
            i += needle.len();
            last = i;
        } else {
            i += 1;
        }
    }
    out.map(|mut o| {
        o.extend_from_slice(&hay[last..]);
        o
    })
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
                } else {
                    "authorization"
                };
                let mut nv = scheme.to_vec();
                if !nv.is_empty() {
                    nv.push(b' ');
                }
                nv.extend_from_slice(fp.as_bytes());
                h.value = nv;
                red.push(Redaction {
                    location,
                    what: what.into(),
                    fingerprint: fp,
                });
                found.push((cred.to_vec(), what.into(), String::new()));
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
                h.value = out;
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
            if FORM_SECRET_KEYS.contains(&k.as_ref())
                && v.len() >= MIN_SECRET_LEN
                && !v.starts_with("redacted:")
            {
                found.push((v.as_bytes().to_vec(), k.into_owned(), "request.url".into()));
            }
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
            if FORM_SECRET_KEYS.contains(&k.as_ref())
                && v.len() >= MIN_SECRET_LEN
                && !v.starts_with("redacted:")
            {
                found.push((v.as_bytes().to_vec(), k.into_owned(), location.into()));
            }
        }
        return;
    }
    // JSON, or JSON inside SSE data lines; anything else is left to the known secrets.
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
/// `instructions`): `NAME=value`, `"NAME":"value"`, `NAME: value`, also JSON-escaped.
const TEXT_SECRET_KEYS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "registration_access_token",
    "code_verifier",
    "device_code",
    "client_assertion",
];

fn is_value_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'+' | b'/' | b'-' | b'%' | b'=')
}

/// Find `NAME<sep>value` in arbitrary bytes, where `<sep>` is made of `=`, `:`, quotes,
/// backslashes and spaces (at most 6 bytes).
fn scan_text(hay: &[u8], found: &mut Vec<(Vec<u8>, String, String)>) {
    for key in TEXT_SECRET_KEYS {
        let k = key.as_bytes();
        let mut i = 0;
        while i + k.len() < hay.len() {
            if hay[i] != k[0] || &hay[i..i + k.len()] != k {
                i += 1;
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
            i = j.max(i + 1);
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
