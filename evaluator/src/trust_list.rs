//! Collector keys with periods and revocation (`mcp-grade --trust-list FILE`): which keys
//! may have signed a bundle, and when. A TOML file of `[[key]]` tables:
//!
//! ```toml
//! [[key]]
//! public_key = "MCowBQYDK2VwAyEAsrtDnBe9H54oxAFaZ5xTN3JQ4H9TafGgQQDMY8JgonE="
//! name = "jump host 2025"                 # optional: how messages name the key
//! not_before = 2025-01-01T00:00:00Z       # optional: the period in which it may sign
//! not_after = 2025-12-31T23:59:59Z        # optional
//! revoked_at = 2025-09-14T08:00:00Z       # optional: compromised from this instant
//! comment = "rotated yearly"              # optional
//! ```
//!
//! `public_key` takes the forms a `--trust` file does (SPKI PEM, 64 hex digits, or base64
//! of the raw key); the times are RFC 3339 (a TOML offset date-time or a string), with
//! `Z` or an offset.
//!
//! A bundle is judged on one time: the genTime of its RFC 3161 timestamp when the token
//! verifies ([`crate::timestamp`]), else the seal time the bundle claims (`run.finished_at`),
//! which the key's holder wrote and can write as they like. The signer must be listed (or
//! pinned with `--trust`); that time must lie in the key's period; and a revoked key is
//! accepted only when a verified timestamp proves the bundle was signed before the
//! revocation ([`Signers::judge`]). A key named both by `--trust` and by the list is
//! judged by its list entry.

use std::path::{Path, PathBuf};

use mcp_probe_schema::{PublicKey, VerifyError};
use serde::Deserialize;

use crate::fmt::utc;
use crate::timestamp::{TimestampState, TsaTrust};
use crate::toml_input::line_of;

/// One key of a trust list, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedKey {
    /// The public key.
    pub key: PublicKey,
    /// The operator's name for it.
    pub name: Option<String>,
    /// The first instant it may sign, microseconds since the Unix epoch.
    pub not_before: Option<i64>,
    /// The last instant it may sign, microseconds since the Unix epoch.
    pub not_after: Option<i64>,
    /// The instant it is compromised from, microseconds since the Unix epoch.
    pub revoked_at: Option<i64>,
    /// The line of its `[[key]]` header in the file (1-based).
    pub line: usize,
}

impl ListedKey {
    /// `key "NAME" (KEY ID)`, or `key KEY ID` without a name (the caller escapes it).
    pub fn who(&self) -> String {
        match &self.name {
            Some(n) => format!("key {n:?} ({})", self.key.key_id()),
            None => format!("key {}", self.key.key_id()),
        }
    }

    /// Its period in words: `from A to B`, `from A`, `until B`, or `at any time`.
    pub fn period(&self) -> String {
        match (self.not_before, self.not_after) {
            (Some(a), Some(b)) => format!("from {} to {}", utc(a), utc(b)),
            (Some(a), None) => format!("from {}", utc(a)),
            (None, Some(b)) => format!("until {}", utc(b)),
            (None, None) => "at any time".into(),
        }
    }

    /// True when `at` (microseconds) lies in its period, both ends included.
    fn in_period(&self, at: i64) -> bool {
        self.not_before.is_none_or(|a| at >= a) && self.not_after.is_none_or(|b| at <= b)
    }
}

/// A loaded `--trust-list` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustList {
    /// The file as given.
    pub path: PathBuf,
    /// Its keys, in file order (no key twice).
    pub keys: Vec<ListedKey>,
}

/// Why a `--trust-list` file cannot be used (exit 2, before any bundle is read).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustListError {
    /// The file could not be read.
    #[error("--trust-list {}: cannot read it: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid, at a line.
    #[error("--trust-list {}: line {line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// A trust list file (docs/schemas/trust-list.schema.json).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-grade trust list")]
pub struct TrustListFile {
    /// The collector keys a bundle may be signed by.
    #[serde(default)]
    #[schemars(with = "Vec<KeyRow>")]
    key: Vec<toml::Spanned<KeyRow>>,
}

/// One `[[key]]` table.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyRow {
    /// The collector's Ed25519 public key, in a form `--trust` reads: SPKI PEM (what
    /// `mcp-collect --public-key` prints), 64 hex digits, or base64 of the raw 32 bytes.
    #[schemars(with = "String")]
    public_key: toml::Spanned<String>,
    /// The operator's name for the key, used in messages.
    name: Option<String>,
    /// The first instant the key may sign (RFC 3339 with `Z` or an offset).
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    not_before: Option<toml::Spanned<toml::Value>>,
    /// The last instant the key may sign (RFC 3339 with `Z` or an offset).
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    not_after: Option<toml::Spanned<toml::Value>>,
    /// The instant the key is compromised from: a bundle it signed is accepted only with
    /// a verified RFC 3161 timestamp before it (RFC 3339 with `Z` or an offset).
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    revoked_at: Option<toml::Spanned<toml::Value>>,
    /// A comment (not read by the grader).
    #[serde(rename = "comment")]
    _comment: Option<String>,
}

/// The JSON Schema of trust list files (docs/schemas/trust-list.schema.json).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(TrustListFile)).unwrap_or_default()
}

impl TrustList {
    /// Read and validate `path`.
    pub fn load(path: &Path) -> Result<TrustList, TrustListError> {
        let bytes = std::fs::read(path).map_err(|source| TrustListError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let keys = parse(&bytes).map_err(|(line, message)| TrustListError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        })?;
        Ok(TrustList {
            path: path.to_path_buf(),
            keys,
        })
    }

    /// The entry of `key`, if the list names it.
    pub fn entry(&self, key: &PublicKey) -> Option<&ListedKey> {
        self.keys.iter().find(|k| &k.key == key)
    }
}

/// An RFC 3339 time with an offset, as microseconds since the Unix epoch: a TOML offset
/// date-time or a string.
fn time_of(v: &toml::Value) -> Option<i64> {
    let text = match v {
        toml::Value::String(s) => s.trim().to_string(),
        toml::Value::Datetime(d) if d.date.is_some() && d.time.is_some() && d.offset.is_some() => {
            d.to_string()
        }
        _ => return None,
    };
    chrono::DateTime::parse_from_rfc3339(&text)
        .ok()
        .map(|t| t.timestamp_micros())
}

fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Datetime(d) => d.to_string(),
        other => format!("({})", other.type_str()),
    }
}

/// Parse the file's bytes; an error is `(line, message)`.
fn parse(bytes: &[u8]) -> Result<Vec<ListedKey>, (usize, String)> {
    let (text, doc): (&str, TrustListFile) = crate::toml_input::read(bytes)?;
    if doc.key.is_empty() {
        return Err((
            1,
            "no [[key]] table: a trust list names at least one key".into(),
        ));
    }
    let mut out: Vec<ListedKey> = Vec::with_capacity(doc.key.len());
    for k in doc.key {
        let line = line_of(text, k.span().start);
        let raw = k.into_inner();
        let at = |s: std::ops::Range<usize>| line_of(text, s.start);
        let key = PublicKey::parse(raw.public_key.get_ref().as_bytes()).map_err(|e| {
            (
                at(raw.public_key.span()),
                format!("public_key is not an Ed25519 public key: {e}"),
            )
        })?;
        if let Some(first) = out.iter().find(|x| x.key == key) {
            return Err((
                line,
                format!(
                    "key {} is listed twice (first at line {})",
                    key.key_id(),
                    first.line
                ),
            ));
        }
        let time = |field: &str, v: &Option<toml::Spanned<toml::Value>>| match v {
            None => Ok(None),
            Some(v) => time_of(v.get_ref()).map(Some).ok_or_else(|| {
                (
                    at(v.span()),
                    format!(
                        "{field} {} is not an RFC 3339 time with Z or an offset \
                         (2025-01-01T00:00:00Z)",
                        shown(v.get_ref())
                    ),
                )
            }),
        };
        let not_before = time("not_before", &raw.not_before)?;
        let not_after = time("not_after", &raw.not_after)?;
        let revoked_at = time("revoked_at", &raw.revoked_at)?;
        if let (Some(a), Some(b)) = (not_before, not_after) {
            if b < a {
                let line = raw.not_after.as_ref().map_or(line, |v| at(v.span()));
                return Err((
                    line,
                    format!(
                        "key {}: not_after {} is before not_before {}",
                        key.key_id(),
                        utc(b),
                        utc(a)
                    ),
                ));
            }
        }
        let name = raw
            .name
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty());
        out.push(ListedKey {
            key,
            name,
            not_before,
            not_after,
            revoked_at,
            line,
        });
    }
    Ok(out)
}

/// The time a listed key's period was judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedAt {
    /// The genTime of the bundle's verified RFC 3161 timestamp, microseconds.
    Stamped(i64),
    /// The seal time the bundle claims (`run.finished_at`), microseconds: not proof.
    Claimed(i64),
}

impl SignedAt {
    /// The time, microseconds since the Unix epoch.
    pub fn micros(self) -> i64 {
        match self {
            SignedAt::Stamped(t) | SignedAt::Claimed(t) => t,
        }
    }

    /// `timestamp <genTime>` or `claimed <time>, not proven`.
    pub fn words(self) -> String {
        match self {
            SignedAt::Stamped(t) => format!("timestamp {}", utc(t)),
            SignedAt::Claimed(t) => format!("claimed {}, not proven", utc(t)),
        }
    }
}

/// How a verified bundle's signer was trusted, when a trust list was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyTrust {
    /// A `--trust` key that the list does not name: pinned, with no period.
    Pinned {
        /// The key id.
        key_id: String,
    },
    /// A key of the list, in its period (and, if revoked, stamped before that) at `at`.
    Listed {
        /// Its entry.
        key: Box<ListedKey>,
        /// The time judged.
        at: SignedAt,
    },
}

impl KeyTrust {
    /// The words of a verification line: `key "NAME" (ID), period from A to B, judged on
    /// timestamp T` (with `, revoked at R` when revoked), or `key ID pinned by --trust
    /// (no period)` (the caller escapes them).
    pub fn line(&self) -> String {
        match self {
            KeyTrust::Pinned { key_id } => format!("key {key_id} pinned by --trust (no period)"),
            KeyTrust::Listed { key, at } => {
                let revoked = key
                    .revoked_at
                    .map(|r| format!(", revoked at {}", utc(r)))
                    .unwrap_or_default();
                format!(
                    "{}, period {}{revoked}, judged on {}",
                    key.who(),
                    key.period(),
                    at.words()
                )
            }
        }
    }
}

/// The `key` object of a `verify --json` line, with `--trust-list`: which key applied and
/// on what time its period was judged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct KeyJson {
    /// `trust-list` (a key of the list) or `trust` (a `--trust` key the list does not
    /// name: no period).
    pub source: &'static str,
    /// The key id (hex of the first 16 bytes of SHA-256 of the key).
    pub key_id: String,
    /// The list's name for the key.
    pub name: Option<String>,
    /// The start of its period, RFC 3339 UTC.
    pub not_before: Option<String>,
    /// The end of its period, RFC 3339 UTC.
    pub not_after: Option<String>,
    /// When it was revoked, RFC 3339 UTC.
    pub revoked_at: Option<String>,
    /// What the period was judged on: `timestamp` (a verified RFC 3161 genTime) or
    /// `claimed` (the seal time the bundle claims, not proven); null for a `--trust` key.
    pub judged_on: Option<&'static str>,
    /// The time judged, RFC 3339 UTC (null for a `--trust` key).
    pub time: Option<String>,
}

impl KeyJson {
    /// The JSON of how a signer was trusted.
    pub fn of(k: &KeyTrust) -> KeyJson {
        match k {
            KeyTrust::Pinned { key_id } => KeyJson {
                source: "trust",
                key_id: key_id.clone(),
                name: None,
                not_before: None,
                not_after: None,
                revoked_at: None,
                judged_on: None,
                time: None,
            },
            KeyTrust::Listed { key, at } => KeyJson {
                source: "trust-list",
                key_id: key.key.key_id(),
                name: key.name.clone(),
                not_before: key.not_before.map(utc),
                not_after: key.not_after.map(utc),
                revoked_at: key.revoked_at.map(utc),
                judged_on: Some(match at {
                    SignedAt::Stamped(_) => "timestamp",
                    SignedAt::Claimed(_) => "claimed",
                }),
                time: Some(utc(at.micros())),
            },
        }
    }
}

/// Why a trust list refuses a bundle whose signature verified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRefusal {
    /// The signer is neither a `--trust` key nor in the list (refused before the payload
    /// is decoded).
    #[error("signer {key_id} is not trusted ({where_})")]
    Unlisted {
        /// The signer's key id.
        key_id: String,
        /// `not in --trust-list FILE`, or `not among the --trust keys nor in …`.
        where_: String,
    },
    /// The time judged is outside the key's period.
    #[error("{who} may sign only {period}; this bundle was signed at {}", at_words(.at))]
    OutsidePeriod {
        /// The key ([`ListedKey::who`]).
        who: String,
        /// Its period ([`ListedKey::period`]).
        period: String,
        /// The time judged.
        at: SignedAt,
    },
    /// A revoked key, and no verified timestamp shows the bundle was signed before.
    #[error(
        "{who} was revoked at {} (compromised from then on): only a verified RFC 3161 \
         timestamp before that shows a bundle was signed before it, and this bundle has \
         none ({stamp}); its claimed seal time {} is not proof, since whoever holds the \
         key can write any time",
        utc(*.revoked_at),
        .claimed.map(utc).unwrap_or_else(|| "(none)".into())
    )]
    RevokedUnproven {
        /// The key ([`ListedKey::who`]).
        who: String,
        /// When it was revoked, microseconds.
        revoked_at: i64,
        /// Why its timestamp proves no time, in words.
        stamp: String,
        /// The seal time the bundle claims, microseconds, if representable.
        claimed: Option<i64>,
    },
    /// A revoked key, and the bundle's verified timestamp is not before the revocation.
    #[error(
        "{who} was revoked at {} (compromised from then on), and this bundle's timestamp \
         is {}, not before the revocation",
        utc(*.revoked_at),
        utc(*.gen_time)
    )]
    RevokedStamped {
        /// The key ([`ListedKey::who`]).
        who: String,
        /// When it was revoked, microseconds.
        revoked_at: i64,
        /// The verified genTime, microseconds.
        gen_time: i64,
    },
    /// The key has a period, the bundle no verified timestamp, and its claimed seal time
    /// is not a representable time.
    #[error(
        "{who} may sign only {period}; this bundle has no verified timestamp and its \
         claimed seal time is not a representable time"
    )]
    NoTime {
        /// The key ([`ListedKey::who`]).
        who: String,
        /// Its period ([`ListedKey::period`]).
        period: String,
    },
}

/// Why a timestamp state proves no time, in words.
fn unproven(state: &TimestampState) -> String {
    match state {
        TimestampState::NotObtained(why) => {
            format!("no timestamp: the TSA failed at collection: {why}")
        }
        TimestampState::Invalid(f) => format!("its token does not verify: {f}"),
        TimestampState::None | TimestampState::Valid(_) => "no timestamp".into(),
    }
}

fn at_words(at: &SignedAt) -> String {
    match at {
        SignedAt::Stamped(t) => format!("{} (its verified timestamp)", utc(*t)),
        SignedAt::Claimed(t) => format!(
            "{} (its claimed seal time, not proven: it has no verified timestamp)",
            utc(*t)
        ),
    }
}

/// Why a bundle was refused: it failed verification, or the trust list refused its
/// signer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// It failed verification (docs/bundle.md §5).
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The trust list refused its signer.
    #[error(transparent)]
    Key(#[from] KeyRefusal),
}

/// The keys a bundle may be signed by: the `--trust` pins, the `--trust-list` keys and
/// their periods, and the TSA anchors a timestamp must chain to for its time to count.
#[derive(Debug, Clone, Default)]
pub struct Signers {
    pins: Vec<PublicKey>,
    list: Option<TrustList>,
    keys: Vec<PublicKey>,
    tsa: TsaTrust,
}

impl Signers {
    /// The `--trust` pins `pins`, the trust list `list`, and the anchors `tsa` of the
    /// timestamps whose genTime a period is judged on.
    pub fn new(pins: Vec<PublicKey>, list: Option<TrustList>, tsa: TsaTrust) -> Signers {
        let mut keys = pins.clone();
        for k in list.iter().flat_map(|l| &l.keys) {
            if !keys.contains(&k.key) {
                keys.push(k.key.clone());
            }
        }
        Signers {
            pins,
            list,
            keys,
            tsa,
        }
    }

    /// `--trust` pins only: what every reader did before trust lists.
    pub fn pinned(pins: Vec<PublicKey>) -> Signers {
        Signers::new(pins, None, TsaTrust::default())
    }

    /// Every key that may sign (the pins and the listed keys): verification refuses any
    /// other signer before the payload is decoded; empty means any signer.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// The trust list, if one was given.
    pub fn list(&self) -> Option<&TrustList> {
        self.list.as_ref()
    }

    /// The TSA anchors timestamps are checked against.
    pub fn tsa(&self) -> &TsaTrust {
        &self.tsa
    }

    /// `e` as this run says it: an untrusted signer, with a trust list, is named as
    /// outside both the pins and the list.
    pub fn refused(&self, e: VerifyError) -> Refused {
        match (&self.list, e) {
            (Some(list), VerifyError::Untrusted { key_id }) => Refused::Key(KeyRefusal::Unlisted {
                key_id,
                where_: self.not_in(list),
            }),
            (_, e) => Refused::Verify(e),
        }
    }

    fn not_in(&self, list: &TrustList) -> String {
        if self.pins.is_empty() {
            format!("not in --trust-list {}", list.path.display())
        } else {
            format!(
                "not among the --trust keys nor in --trust-list {}",
                list.path.display()
            )
        }
    }

    /// Judge a bundle whose signature by `signer` verified: `finished_at` is the seal
    /// time it claims (microseconds) and `stamp` gives its timestamp's state (called
    /// only when the signer is listed). `Ok(None)` without a trust list.
    ///
    /// The time judged is the verified genTime when the timestamp is valid, else the
    /// claimed seal time. It must lie in the key's period. A revoked key needs a valid
    /// timestamp whose genTime is before `revoked_at`: a claimed time is never enough.
    pub fn judge(
        &self,
        signer: &PublicKey,
        finished_at: i64,
        stamp: impl FnOnce() -> TimestampState,
    ) -> Result<Option<KeyTrust>, KeyRefusal> {
        let Some(list) = &self.list else {
            return Ok(None);
        };
        let Some(key) = list.entry(signer) else {
            if self.pins.contains(signer) {
                return Ok(Some(KeyTrust::Pinned {
                    key_id: signer.key_id(),
                }));
            }
            return Err(KeyRefusal::Unlisted {
                key_id: signer.key_id(),
                where_: self.not_in(list),
            });
        };
        let claimed = crate::fmt::datetime(finished_at).map(|_| finished_at);
        let state = stamp();
        let stamped = match &state {
            TimestampState::Valid(t) => i64::try_from(t.gen_time)
                .ok()
                .and_then(|s| s.checked_mul(1_000_000)),
            _ => None,
        };
        if let Some(revoked_at) = key.revoked_at {
            match stamped {
                None => {
                    return Err(KeyRefusal::RevokedUnproven {
                        who: key.who(),
                        revoked_at,
                        stamp: unproven(&state),
                        claimed,
                    })
                }
                Some(g) if g >= revoked_at => {
                    return Err(KeyRefusal::RevokedStamped {
                        who: key.who(),
                        revoked_at,
                        gen_time: g,
                    })
                }
                Some(_) => {}
            }
        }
        let at = match (stamped, claimed) {
            (Some(g), _) => SignedAt::Stamped(g),
            (None, Some(c)) => SignedAt::Claimed(c),
            (None, None) => {
                if key.not_before.is_none() && key.not_after.is_none() {
                    // Nothing to judge; the line still says what was (not) claimed.
                    return Ok(Some(KeyTrust::Listed {
                        key: Box::new(key.clone()),
                        at: SignedAt::Claimed(finished_at),
                    }));
                }
                return Err(KeyRefusal::NoTime {
                    who: key.who(),
                    period: key.period(),
                });
            }
        };
        if !key.in_period(at.micros()) {
            return Err(KeyRefusal::OutsidePeriod {
                who: key.who(),
                period: key.period(),
                at,
            });
        }
        Ok(Some(KeyTrust::Listed {
            key: Box::new(key.clone()),
            at,
        }))
    }

    /// [`Signers::judge`] of a bundle whose timestamp entries are `stamp` (read, not yet
    /// verified: verified here against the run's TSA anchors, only when needed).
    pub fn judge_stamp(
        &self,
        signer: &PublicKey,
        finished_at: i64,
        stamp: &mcp_probe_schema::tsp::Stamp,
    ) -> Result<Option<KeyTrust>, KeyRefusal> {
        self.judge(signer, finished_at, || {
            TimestampState::from_stamp(stamp.clone(), &self.tsa)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::testkit::test_key;

    fn bad(s: &str) -> (usize, String) {
        parse(s.as_bytes()).expect_err("invalid")
    }

    fn hex_key(n: u8) -> String {
        hex::encode(test_key(n).public().to_bytes())
    }

    fn micros(rfc3339: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(rfc3339)
            .expect("time")
            .timestamp_micros()
    }

    #[test]
    fn a_valid_file_is_read_with_lines_and_times() {
        let pem = test_key(1).public().to_pem();
        let file = format!(
            "# keys\n[[key]]\npublic_key = '''\n{pem}'''\nname = \"one\"\n\
             not_before = 2025-01-01T00:00:00Z\nnot_after = \"2025-12-31T23:59:59+01:00\"\n\
             comment = \"c\"\n\n[[key]]\npublic_key = \"{}\"\nrevoked_at = 2026-02-03T04:05:06.5Z\n",
            hex_key(2)
        );
        let keys = parse(file.as_bytes()).expect("valid");
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].key, test_key(1).public());
        assert_eq!((keys[0].line, keys[0].name.as_deref()), (2, Some("one")));
        assert_eq!(keys[0].not_before, Some(micros("2025-01-01T00:00:00Z")));
        assert_eq!(keys[0].not_after, Some(micros("2025-12-31T22:59:59Z")));
        assert_eq!(
            keys[0].period(),
            "from 2025-01-01T00:00:00Z to 2025-12-31T22:59:59Z"
        );
        assert_eq!(keys[1].line, 13);
        assert_eq!(keys[1].revoked_at, Some(micros("2026-02-03T04:05:06.500Z")));
        assert_eq!(keys[1].period(), "at any time");
        assert_eq!(
            keys[1].who(),
            format!("key {}", test_key(2).public().key_id())
        );
    }

    #[test]
    fn errors_name_the_line() {
        let k1 = hex_key(1);
        let (line, m) = bad(&format!(
            "[[key]]\npublic_key = \"{k1}\"\nnot_befor = 2025-01-01T00:00:00Z\n"
        ));
        assert_eq!(line, 3);
        assert!(m.contains("unknown field `not_befor`"), "{m}");
        let (line, m) = bad(&format!(
            "[[key]]\npublic_key = \"{k1}\"\nnot_before = \"soon\"\n"
        ));
        assert_eq!(line, 3);
        assert!(
            m.contains("not_before \"soon\" is not an RFC 3339 time"),
            "{m}"
        );
        // A local date-time (no offset) and a bare date are not instants.
        let (line, m) = bad(&format!(
            "[[key]]\npublic_key = \"{k1}\"\n\nrevoked_at = 2025-01-01T00:00:00\n"
        ));
        assert_eq!(line, 4);
        assert!(
            m.contains("revoked_at 2025-01-01T00:00:00 is not an RFC 3339 time"),
            "{m}"
        );
        let (_, m) = bad(&format!(
            "[[key]]\npublic_key = \"{k1}\"\nnot_after = 2025-01-01\n"
        ));
        assert!(m.contains("not_after 2025-01-01 is not"), "{m}");
        let (line, m) = bad(&format!(
            "[[key]]\npublic_key = \"{k1}\"\n[[key]]\nname = \"again\"\npublic_key = \"{}\"\n",
            hex::encode(test_key(1).public().to_bytes()).to_uppercase()
        ));
        assert_eq!(line, 3);
        assert!(m.contains("is listed twice (first at line 1)"), "{m}");
        let (line, m) = bad(&format!(
            "[[key]]\npublic_key = \"{k1}\"\nnot_before = 2025-06-01T00:00:00Z\nnot_after = 2025-05-01T00:00:00Z\n"
        ));
        assert_eq!(line, 4);
        assert!(
            m.contains("not_after 2025-05-01T00:00:00Z is before not_before 2025-06-01T00:00:00Z"),
            "{m}"
        );
        let (line, m) = bad("[[key]]\nname = \"x\"\npublic_key = \"abcd\"\n");
        assert_eq!(line, 3);
        assert!(m.contains("public_key is not an Ed25519 public key"), "{m}");
        let (line, m) = bad("[[key]]\nname = \"x\"\n");
        assert_eq!(line, 1);
        assert!(m.contains("missing field `public_key`"), "{m}");
        let (line, m) = bad("# nothing\n");
        assert_eq!(line, 1);
        assert!(m.contains("no [[key]] table"), "{m}");
        let (_, m) = bad("[[key]\n");
        assert!(!m.contains('\n'), "{m}");
    }

    fn signers(entry: &str) -> Signers {
        let file = format!(
            "[[key]]\npublic_key = \"{}\"\nname = \"k\"\n{entry}",
            hex_key(1)
        );
        let list = TrustList {
            path: "list.toml".into(),
            keys: parse(file.as_bytes()).expect("valid"),
        };
        Signers::new(vec![test_key(9).public()], Some(list), TsaTrust::default())
    }

    fn stamped(at: &str) -> impl FnOnce() -> TimestampState {
        let secs = u64::try_from(micros(at) / 1_000_000).expect("after 1970");
        move || {
            TimestampState::Valid(crate::timestamp::Timestamp {
                tsa: "CN=t".into(),
                gen_time: secs,
                serial: "01".into(),
                policy: "test-policy".into(),
            })
        }
    }

    #[test]
    fn periods_are_judged_on_the_stamp_else_the_claim() {
        let s = signers("not_before = 2025-01-01T00:00:00Z\nnot_after = 2025-12-31T23:59:59Z\n");
        let k = test_key(1).public();
        let inside = micros("2025-06-01T00:00:00Z");
        let after = micros("2026-01-01T00:00:00Z");
        let ok = s
            .judge(&k, inside, || TimestampState::None)
            .expect("in period");
        assert_eq!(
            ok.as_ref().map(KeyTrust::line).as_deref(),
            Some(
                format!(
                    "key \"k\" ({}), period from 2025-01-01T00:00:00Z to 2025-12-31T23:59:59Z, judged on claimed 2025-06-01T00:00:00Z, not proven",
                    k.key_id()
                )
                .as_str()
            )
        );
        let e = s
            .judge(&k, after, || TimestampState::None)
            .expect_err("after");
        assert!(
            matches!(
                e,
                KeyRefusal::OutsidePeriod {
                    at: SignedAt::Claimed(_),
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("may sign only from 2025-01-01T00:00:00Z to 2025-12-31T23:59:59Z"),
            "{e}"
        );
        // A stamp outweighs the claim, both ways; both ends of the period are included.
        let ok = s
            .judge(&k, after, stamped("2025-12-31T23:59:59Z"))
            .expect("stamped inside");
        assert!(matches!(
            ok,
            Some(KeyTrust::Listed {
                at: SignedAt::Stamped(_),
                ..
            })
        ));
        let e = s
            .judge(&k, inside, stamped("2024-12-31T23:59:59Z"))
            .expect_err("stamped before");
        assert!(e.to_string().contains("(its verified timestamp)"), "{e}");
        assert!(s
            .judge(&k, micros("2025-01-01T00:00:00Z"), || TimestampState::None)
            .is_ok());
        // An invalid token proves nothing: the claim is judged.
        let invalid = || {
            TimestampState::Invalid(crate::timestamp::StampFailure::new(
                crate::timestamp::Step::Chain,
                "unknown issuer",
            ))
        };
        assert!(matches!(
            s.judge(&k, after, invalid),
            Err(KeyRefusal::OutsidePeriod {
                at: SignedAt::Claimed(_),
                ..
            })
        ));
    }

    #[test]
    fn a_revoked_key_needs_a_stamp_before_the_revocation() {
        let s = signers("revoked_at = 2025-06-01T00:00:00Z\n");
        let k = test_key(1).public();
        let early = micros("2025-01-01T00:00:00Z");
        let e = s
            .judge(&k, early, || TimestampState::None)
            .expect_err("claimed only");
        assert!(matches!(e, KeyRefusal::RevokedUnproven { .. }));
        assert!(
            e.to_string()
                .contains("this bundle has none (no timestamp)"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("its claimed seal time 2025-01-01T00:00:00Z is not proof"),
            "{e}"
        );
        let ok = s
            .judge(
                &k,
                micros("2030-01-01T00:00:00Z"),
                stamped("2025-05-31T23:59:59Z"),
            )
            .expect("stamped before");
        assert!(ok.expect("listed").line().ends_with(
            "revoked at 2025-06-01T00:00:00Z, judged on timestamp 2025-05-31T23:59:59Z"
        ));
        let e = s
            .judge(&k, early, stamped("2025-06-01T00:00:00Z"))
            .expect_err("stamped at");
        assert!(matches!(e, KeyRefusal::RevokedStamped { .. }), "{e}");
    }

    #[test]
    fn pins_and_unlisted_signers() {
        let s = signers("");
        let pinned = test_key(9).public();
        assert_eq!(
            s.judge(&pinned, 0, || unreachable!("no stamp is read for a pin")),
            Ok(Some(KeyTrust::Pinned {
                key_id: pinned.key_id()
            }))
        );
        let e = s
            .judge(&test_key(3).public(), 0, || TimestampState::None)
            .expect_err("unlisted");
        assert!(
            e.to_string()
                .contains("not among the --trust keys nor in --trust-list list.toml"),
            "{e}"
        );
        assert_eq!(s.keys().len(), 2);
        // Without a list nothing is judged and nothing changes.
        assert_eq!(
            Signers::pinned(vec![]).judge(&pinned, 0, || unreachable!()),
            Ok(None)
        );
        assert!(matches!(
            Signers::pinned(vec![pinned.clone()])
                .refused(VerifyError::Untrusted { key_id: "x".into() }),
            Refused::Verify(_)
        ));
    }
}
