//! `WWW-Authenticate` (RFC 9110 §11.6.1), parsed once for both binaries.
//!
//! One call, [`parse`], gives two readings of the same raw bytes:
//!
//! * [`Parsed::challenges`], the **lenient** reading: what a client acts on. Unquoted
//!   parameter values run up to whitespace or a comma (servers send bare URLs such as
//!   `resource_metadata=http://x/y`), CR and LF count as whitespace, an unterminated
//!   quoted string runs to the end, a parameter where a scheme was expected (a missing
//!   comma) joins the previous challenge. The collector follows this reading and the
//!   grader grades it, so both see the same `resource_metadata`.
//! * [`Parsed::well_formed`] and [`Parsed::malformed`], the **strict** RFC 9110 reading:
//!   the challenges and parameters that follow the syntax, and the byte offsets of the
//!   elements that do not (and were skipped by that reading). The grader uses
//!   `malformed` to report a header that is not RFC 9110 syntax as such.
//!
//! Both readings are total: they never panic and never fail, bytes that are not UTF-8
//! are replaced (U+FFFD), and several header fields may be passed joined with `, `.

/// One challenge of a `WWW-Authenticate` field.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Challenge {
    /// The auth-scheme as sent (`Bearer`; schemes compare case-insensitively).
    pub scheme: String,
    /// The token68 the challenge carries instead of parameters, if any.
    pub token68: Option<String>,
    /// The auth-params in order: name as sent, value with quoting and `\` escapes
    /// removed (bytes that are not UTF-8 replaced, never fatal).
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// A challenge of `scheme` with `params` (name, unquoted value) and no token68.
    pub fn new(scheme: &str, params: &[(&str, &str)]) -> Challenge {
        Challenge {
            scheme: scheme.into(),
            token68: None,
            params: params
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// The first parameter called `name` (case-insensitive, RFC 9110 §11.2).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// True when the scheme is `scheme` (case-insensitive).
    pub fn is_scheme(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// Whether the scheme is `Bearer` (case-insensitive).
    pub fn is_bearer(&self) -> bool {
        self.is_scheme("Bearer")
    }

    /// The RFC 9728 `resource_metadata` URL.
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// The `scope` parameter.
    pub fn scope(&self) -> Option<&str> {
        self.param("scope")
    }
}

/// Both readings of one `WWW-Authenticate` value (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// The lenient reading: every challenge with its parameters, what a client follows.
    pub challenges: Vec<Challenge>,
    /// The strict RFC 9110 reading: only the elements that follow the syntax.
    pub well_formed: Vec<Challenge>,
    /// Byte offsets of the elements the strict reading skipped as not RFC 9110 syntax;
    /// empty when the whole value is well formed.
    pub malformed: Vec<usize>,
}

impl Parsed {
    /// True when some element is not RFC 9110 syntax.
    pub fn is_malformed(&self) -> bool {
        !self.malformed.is_empty()
    }
}

/// Parse a raw `WWW-Authenticate` value: the lenient reading and the strict one.
pub fn parse(raw: &[u8]) -> Parsed {
    let (well_formed, malformed) = strict(raw);
    Parsed {
        challenges: lenient(raw),
        well_formed,
        malformed,
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// RFC 9110 `token68` characters (before the `=` padding).
fn is_token68(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

/// Whitespace of the lenient reading: CR and LF too, so a header rebuilt from folded
/// lines does not derail it.
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---------------------------------------------------------------------------------------
// The lenient reading
// ---------------------------------------------------------------------------------------

/// Comma-separated challenges, each a scheme followed by a token68 or auth-params,
/// quoted strings with `\` escapes. Unparseable items are skipped, and a parameter where
/// a scheme was expected joins the previous challenge.
fn lenient(raw: &[u8]) -> Vec<Challenge> {
    let mut c = Lenient { b: raw, i: 0 };
    let mut out: Vec<Challenge> = Vec::new();
    loop {
        c.skip_ws_commas();
        if c.eof() {
            break;
        }
        if let Some(p) = c.param() {
            if let Some(last) = out.last_mut() {
                if last.token68.is_none() {
                    last.params.push(p);
                }
            }
            continue;
        }
        match c.token() {
            Some(scheme) => {
                let mut ch = Challenge {
                    scheme,
                    ..Challenge::default()
                };
                let spaced = c.skip_ws() > 0;
                if spaced && !c.eof() && c.peek() != Some(b',') && !c.looks_like_param() {
                    ch.token68 = c.token68();
                }
                out.push(ch);
            }
            None => c.skip_item(),
        }
    }
    out
}

struct Lenient<'a> {
    b: &'a [u8],
    i: usize,
}

impl Lenient<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eof(&self) -> bool {
        self.i >= self.b.len()
    }

    fn skip_ws(&mut self) -> usize {
        let s = self.i;
        while self.peek().is_some_and(is_ws) {
            self.i += 1;
        }
        self.i - s
    }

    fn skip_ws_commas(&mut self) {
        while self.peek().is_some_and(|c| is_ws(c) || c == b',') {
            self.i += 1;
        }
    }

    fn slice(&self, from: usize, to: usize) -> &[u8] {
        self.b.get(from..to).unwrap_or_default()
    }

    fn token(&mut self) -> Option<String> {
        let s = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > s).then(|| lossy(self.slice(s, self.i)))
    }

    /// At `"`: the unescaped content; an unterminated string runs to the end.
    fn quoted(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                _ => out.push(c),
            }
        }
        lossy(&out)
    }

    /// `token BWS "=" BWS ( quoted-string / value )`. Unquoted values are read
    /// leniently up to whitespace or a comma (servers send bare URLs). Restores the
    /// position and returns `None` when the input is not a parameter here.
    fn param(&mut self) -> Option<(String, String)> {
        let save = self.i;
        let name = self.token()?;
        self.skip_ws();
        if self.peek() != Some(b'=') {
            self.i = save;
            return None;
        }
        self.i += 1;
        self.skip_ws();
        let value = match self.peek() {
            Some(b'"') => self.quoted(),
            // `abc=` at the end, `abc==`, `abc=,`: token68 padding, not a parameter.
            None | Some(b',' | b'=') => {
                self.i = save;
                return None;
            }
            Some(_) => {
                let s = self.i;
                while self.peek().is_some_and(|c| !is_ws(c) && c != b',') {
                    self.i += 1;
                }
                lossy(self.slice(s, self.i))
            }
        };
        Some((name, value))
    }

    fn looks_like_param(&mut self) -> bool {
        let save = self.i;
        let yes = self.param().is_some();
        self.i = save;
        yes
    }

    /// A token68 that ends the challenge (followed by a comma or the end).
    fn token68(&mut self) -> Option<String> {
        let save = self.i;
        while self.peek().is_some_and(is_token68) {
            self.i += 1;
        }
        if self.i == save {
            return None;
        }
        while self.peek() == Some(b'=') {
            self.i += 1;
        }
        let end = self.i;
        self.skip_ws();
        if self.eof() || self.peek() == Some(b',') {
            Some(lossy(self.slice(save, end)))
        } else {
            self.i = save;
            None
        }
    }

    /// Skip an unparseable item up to the next comma outside a quoted string (at least
    /// one byte, so the parse always advances).
    fn skip_item(&mut self) {
        self.i += 1;
        while let Some(c) = self.peek() {
            match c {
                b',' => return,
                b'"' => {
                    let _ = self.quoted();
                }
                _ => self.i += 1,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The strict RFC 9110 reading
// ---------------------------------------------------------------------------------------

/// `#challenge`, each `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`, params `token BWS
/// "=" BWS ( token / quoted-string )`. An element that does not follow the syntax is
/// skipped up to the next top-level comma and its offset recorded (a parameter whose
/// value is followed by anything but a comma is dropped whole, so an unquoted URL is
/// never cut at its colon).
fn strict(raw: &[u8]) -> (Vec<Challenge>, Vec<usize>) {
    let mut c = Strict { b: raw, i: 0 };
    let mut out = Vec::new();
    let mut errors = Vec::new();
    loop {
        c.skip_commas_ows();
        if c.at_end() {
            break;
        }
        let start = c.i;
        let Some(scheme) = c.token() else {
            errors.push(start);
            c.skip_element();
            continue;
        };
        let mut ch = Challenge {
            scheme: lossy(scheme),
            token68: None,
            params: Vec::new(),
        };
        match c.peek() {
            None | Some(b',') => {
                out.push(ch);
                continue;
            }
            Some(b' ' | b'\t') => {}
            Some(_) => {
                errors.push(start);
                c.skip_element();
                continue;
            }
        }
        c.ows();
        if matches!(c.peek(), None | Some(b',')) {
            out.push(ch);
            continue;
        }
        if let Some(t) = c.token68() {
            ch.token68 = Some(t);
            out.push(ch);
            continue;
        }
        c.params(&mut ch, &mut errors);
        out.push(ch);
    }
    (out, errors)
}

struct Strict<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Strict<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }

    fn ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_commas_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > start).then(|| &self.b[start..self.i])
    }

    /// A token68 that is the whole rest of the element; the cursor is left unmoved
    /// otherwise.
    fn token68(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(is_token68) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        while self.peek() == Some(b'=') {
            self.i += 1;
        }
        let end = self.i;
        self.ows();
        if matches!(self.peek(), None | Some(b',')) {
            return Some(lossy(&self.b[start..end]));
        }
        self.i = start;
        None
    }

    /// A quoted-string; `None` (cursor past what was read) when unterminated or holding
    /// a byte the syntax forbids.
    fn quoted(&mut self) -> Option<Vec<u8>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.i += 1;
        let mut v = Vec::new();
        loop {
            let b = self.peek()?;
            self.i += 1;
            match b {
                b'"' => return Some(v),
                b'\\' => {
                    let n = self.peek()?;
                    if !(n == b'\t' || (0x20..=0x7e).contains(&n) || n >= 0x80) {
                        return None;
                    }
                    self.i += 1;
                    v.push(n);
                }
                b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e | 0x80..=0xff => v.push(b),
                _ => return None,
            }
        }
    }

    /// Advance to the next top-level comma (or the end), stepping over quoted strings.
    fn skip_element(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b',' => return,
                b'"' => {
                    self.i += 1;
                    while let Some(q) = self.peek() {
                        self.i += 1;
                        if q == b'\\' {
                            if self.peek().is_some() {
                                self.i += 1;
                            }
                        } else if q == b'"' {
                            break;
                        }
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// True when `token BWS "="` follows (an auth-param, not a new challenge).
    fn looks_like_param(&mut self) -> bool {
        let save = self.i;
        let yes = self.token().is_some() && {
            self.ows();
            self.peek() == Some(b'=')
        };
        self.i = save;
        yes
    }

    /// One `name=value` followed by OWS and then a comma or the end.
    fn param(&mut self) -> Option<(String, String)> {
        let name = lossy(self.token()?);
        self.ows();
        if self.peek() != Some(b'=') {
            return None;
        }
        self.i += 1;
        self.ows();
        let value = if self.peek() == Some(b'"') {
            String::from_utf8_lossy(&self.quoted()?).into_owned()
        } else {
            lossy(self.token()?)
        };
        self.ows();
        matches!(self.peek(), None | Some(b',')).then_some((name, value))
    }

    fn params(&mut self, ch: &mut Challenge, errors: &mut Vec<usize>) {
        loop {
            let start = self.i;
            match self.param() {
                Some(p) => ch.params.push(p),
                None => {
                    errors.push(start);
                    self.i = start;
                    self.skip_element();
                }
            }
            if self.at_end() {
                return;
            }
            // At a comma: another parameter of this challenge, or the next challenge.
            let save = self.i;
            self.skip_commas_ows();
            if self.at_end() {
                return;
            }
            if !self.looks_like_param() {
                self.i = save;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    /// The lenient reading.
    fn lenient_of(raw: &[u8]) -> Vec<Challenge> {
        parse(raw).challenges
    }

    fn ch(scheme: &str, params: &[(&str, &str)]) -> Challenge {
        Challenge::new(scheme, params)
    }

    // ----- both readings side by side, on the same inputs

    #[test]
    fn quoted_values_read_the_same_both_ways_and_are_well_formed() {
        let p = parse(
            br#"Bearer error="invalid_token", error_description="Authentication required", resource_metadata="http://127.0.0.1:48201/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(p.challenges, p.well_formed);
        assert!(!p.is_malformed());
        let c = &p.challenges;
        assert_eq!(c.len(), 1);
        assert!(c[0].is_bearer() && c[0].is_scheme("bearer"));
        assert_eq!(
            c[0].resource_metadata(),
            Some("http://127.0.0.1:48201/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c[0].param("ERROR"), Some("invalid_token"));
        assert_eq!(
            c[0].param("error_description"),
            Some("Authentication required")
        );
        assert_eq!(c[0].scope(), None);
    }

    #[test]
    fn unquoted_token_reads_the_same_both_ways() {
        let p = parse(b"Bearer realm=apps, type=1");
        assert_eq!(
            p.challenges,
            vec![ch("Bearer", &[("realm", "apps"), ("type", "1")])]
        );
        assert_eq!(p.challenges, p.well_formed);
        assert!(!p.is_malformed());
    }

    #[test]
    fn unquoted_url_is_followed_leniently_and_flagged_strictly() {
        // Not an RFC 9110 token (`:` and `/`): the lenient reading keeps the whole URL
        // (what the collector fetches and the grader grades); the strict reading drops
        // the parameter whole (never cut at the colon) and flags it.
        let p = parse(b"Bearer resource_metadata=http://x/y, scope=\"a b\"");
        assert_eq!(
            p.challenges,
            vec![ch(
                "Bearer",
                &[("resource_metadata", "http://x/y"), ("scope", "a b")]
            )]
        );
        assert_eq!(p.well_formed, vec![ch("Bearer", &[("scope", "a b")])]);
        assert_eq!(p.malformed, vec![7]);
        assert!(p.is_malformed());
    }

    #[test]
    fn several_challenges_and_token68() {
        let raw =
            br#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#;
        let want = vec![
            ch(
                "Newauth",
                &[
                    ("realm", "apps"),
                    ("type", "1"),
                    ("title", r#"Login to "apps""#),
                ],
            ),
            ch("Basic", &[("realm", "simple")]),
        ];
        let p = parse(raw);
        assert_eq!(p.challenges, want);
        assert_eq!(p.well_formed, want);
        assert!(!p.is_malformed());

        let p = parse(br#"Basic YWxhZGRpbjpvcGVuc2VzYW1l==, Bearer scope="a b", resource_metadata="https://x/y""#);
        assert_eq!(p.challenges, p.well_formed);
        let c = &p.challenges;
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].token68.as_deref(), Some("YWxhZGRpbjpvcGVuc2VzYW1l=="));
        assert!(c[0].params.is_empty());
        assert_eq!(c[1].scope(), Some("a b"));
        assert_eq!(c[1].resource_metadata(), Some("https://x/y"));

        let p = parse(b"Negotiate YWxh/Z+A==, Bearer, DPoP algs=\"ES256\" ,,");
        assert_eq!(p.challenges, p.well_formed);
        assert!(!p.is_malformed());
        let c = &p.challenges;
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(c[0].token68.as_deref(), Some("YWxh/Z+A=="));
        assert!(c[1].params.is_empty() && c[1].token68.is_none());
        assert_eq!(c[2].param("algs"), Some("ES256"));
        assert_eq!(
            lenient_of(b"Negotiate, Bearer"),
            vec![ch("Negotiate", &[]), ch("Bearer", &[])]
        );
        assert_eq!(lenient_of(b"bearer abc")[0].token68.as_deref(), Some("abc"));
    }

    #[test]
    fn lenient_forms_are_read_and_flagged() {
        // Missing comma, extra whitespace and commas, BWS around "=", unquoted URL.
        let p = parse(
            br#" ,Bearer  realm = "r" scope="s" ,, resource_metadata=https://h/p?x=1 , Basic"#,
        );
        assert_eq!(
            p.challenges,
            vec![
                ch(
                    "Bearer",
                    &[
                        ("realm", "r"),
                        ("scope", "s"),
                        ("resource_metadata", "https://h/p?x=1")
                    ]
                ),
                ch("Basic", &[]),
            ]
        );
        assert!(p.is_malformed());
        // Unterminated quoted string: runs to the end leniently, skipped strictly.
        let p = parse(br#"Bearer scope="a, b"#);
        assert_eq!(p.challenges[0].scope(), Some("a, b"));
        assert_eq!(p.well_formed, vec![ch("Bearer", &[])]);
        assert!(p.is_malformed());
        // A stray parameter before any scheme is dropped by both readings.
        let p = parse(br#"realm="x", Bearer"#);
        assert_eq!(p.challenges, vec![ch("Bearer", &[])]);
        assert_eq!(p.well_formed, vec![ch("Bearer", &[])]);
        assert_eq!(p.malformed, vec![0]);
        // A control character inside a quoted string.
        let p = parse(b"Bearer realm=\"a\nb\"");
        assert_eq!(p.challenges[0].param("realm"), Some("a\nb"));
        assert!(p.is_malformed());
    }

    #[test]
    fn escapes_are_removed_both_ways() {
        let p = parse(br#"Bearer realm="a\"b\\c\d""#);
        assert_eq!(p.challenges, vec![ch("Bearer", &[("realm", r#"a"b\cd"#)])]);
        assert_eq!(p.challenges, p.well_formed);
        assert!(!p.is_malformed());
    }

    #[test]
    fn non_utf8_bytes_are_replaced_never_fatal() {
        let raw = b"Bearer realm=\"caf\xe9\", scope=\"r\xc3\xa9ad\", \xff\xfe, resource_metadata=\"https://h/\"";
        let p = parse(raw);
        let c = &p.challenges;
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].param("realm"), Some("caf\u{fffd}"));
        assert_eq!(c[0].scope(), Some("réad"));
        assert_eq!(c[0].resource_metadata(), Some("https://h/"));
        assert!(p.is_malformed());
        let p = parse(b"Bearer realm=\"caf\xc3\xa9 \xff\"");
        assert_eq!(p.challenges[0].param("realm"), Some("café \u{fffd}"));
        assert_eq!(p.well_formed[0].param("realm"), Some("café \u{fffd}"));
        // Unterminated quote, then bytes that are not UTF-8.
        assert!(parse(b"Bearer realm=\"abc, Basic x=\xff\xfe").is_malformed());
    }

    #[test]
    fn empty_and_separators_only() {
        for raw in [&b""[..], b" , ,", b" , ,\t"] {
            let p = parse(raw);
            assert!(p.challenges.is_empty() && p.well_formed.is_empty());
            assert!(!p.is_malformed());
        }
    }

    // ----- properties

    fn token_strategy() -> impl Strategy<Value = String> {
        "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}"
    }

    /// One serialised challenge: scheme, optional token68 or params (token or quoted),
    /// with the separators RFC 9110 allows.
    fn challenge_strategy() -> impl Strategy<Value = (String, Challenge)> {
        let param = (
            token_strategy(),
            prop_oneof![" ", "", "\t"],
            prop_oneof![
                token_strategy().prop_map(|v| (v.clone(), v)),
                "[a Z\"\\\\,=;:/\t]{0,12}".prop_map(|v| {
                    let esc = v.replace('\\', "\\\\").replace('"', "\\\"");
                    (format!("\"{esc}\""), v)
                }),
            ],
        );
        (
            token_strategy(),
            prop_oneof![
                Just(None),
                ("[aZ09._~+/-]{1,10}", 0..3usize)
                    .prop_map(|(t, n)| Some(Err(format!("{t}{}", "=".repeat(n))))),
                proptest::collection::vec((param, prop_oneof![",", ", ", " , "]), 1..4)
                    .prop_map(|ps| Some(Ok(ps))),
            ],
        )
            .prop_map(|(scheme, rest)| {
                let mut text = scheme.clone();
                let mut c = ch(&scheme, &[]);
                match rest {
                    None => {}
                    Some(Err(t68)) => {
                        text.push(' ');
                        text.push_str(&t68);
                        c.token68 = Some(t68);
                    }
                    Some(Ok(ps)) => {
                        text.push(' ');
                        for (j, ((name, ws, (wire, value)), sep)) in ps.into_iter().enumerate() {
                            if j > 0 {
                                text.push_str(&sep);
                            }
                            text.push_str(&format!("{name}{ws}={ws}{wire}"));
                            c.params.push((name, value));
                        }
                    }
                }
                (text, c)
            })
    }

    proptest! {
        #[test]
        fn never_panics_on_bytes(raw in proptest::collection::vec(any::<u8>(), 0..300)) {
            let p = parse(&raw);
            for c in p.challenges.iter().chain(&p.well_formed) {
                prop_assert!(!c.scheme.is_empty() && c.scheme.bytes().all(is_tchar));
                for (n, _) in &c.params {
                    prop_assert!(!n.is_empty() && n.bytes().all(is_tchar));
                }
            }
        }

        #[test]
        fn never_panics_on_header_like_text(raw in r#"[A-Za-z0-9=," \\\t/:.;é\r\n\x00\x7f]{0,200}"#) {
            let _ = parse(raw.as_bytes());
        }

        #[test]
        fn well_formed_quoted_round_trips_both_ways(
            challenges in proptest::collection::vec(
                (token_strategy(), proptest::collection::vec(
                    (token_strategy(), "[ -~é\u{80}-\u{ff}]{0,20}"), 0..4)),
                1..4)
        ) {
            let text = challenges.iter().map(|(scheme, params)| {
                let ps = params.iter().map(|(n, v)| {
                    let esc = v.replace('\\', "\\\\").replace('"', "\\\"");
                    format!("{n}=\"{esc}\"")
                }).collect::<Vec<_>>().join(", ");
                if ps.is_empty() { scheme.clone() } else { format!("{scheme} {ps}") }
            }).collect::<Vec<_>>().join(", ");
            let p = parse(text.as_bytes());
            let want: Vec<Challenge> = challenges.iter().map(|(s, ps)| Challenge {
                scheme: s.clone(),
                token68: None,
                params: ps.clone(),
            }).collect();
            prop_assert_eq!(&p.challenges, &want, "{}", text);
            prop_assert_eq!(&p.well_formed, &want, "{}", text);
            prop_assert!(p.malformed.is_empty(), "{}", text);
        }

        #[test]
        fn serialised_challenges_round_trip_both_ways(
            parts in proptest::collection::vec(
                (challenge_strategy(), prop_oneof![",", ", ", " ,\t", ",,"]), 1..4)
        ) {
            let mut text = String::new();
            let mut want = Vec::new();
            for (i, ((t, c), sep)) in parts.into_iter().enumerate() {
                if i > 0 {
                    text.push_str(&sep);
                }
                text.push_str(&t);
                want.push(c);
            }
            let p = parse(text.as_bytes());
            prop_assert_eq!(&p.well_formed, &want, "{}", text);
            prop_assert!(p.malformed.is_empty(), "{}: {:?}", text, p.malformed);
            prop_assert_eq!(&p.challenges, &want, "{}", text);
        }
    }
}
