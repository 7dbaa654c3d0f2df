//! Discovery records: one `discovery.prm` or `discovery.as` record read as an attempt,
//! and the advertised authorization servers with the records attributed to each.

use mcp_probe_schema::model::{BodyEnd, ErrorKind, HttpOutcome, MetadataRefusal, Observation};
use mcp_probe_schema::vocab::LegId;
use serde_json::{Map, Value};
use url::{Origin, Url};

use crate::checks::common::oauth::uris::{as_forms, norm, norm_with, parse_unfragmented};
use crate::evidence::Bundle;
use crate::fmt::escape_line;

/// What one discovery record got.
#[derive(Debug, Clone)]
pub(crate) enum Got {
    /// HTTP 200 whose body parses as a JSON object.
    Doc(Map<String, Value>),
    /// Any other response: the status and a description.
    Answer(u16, String),
    /// No response: the transport error (a guard refusal included: nothing was sent).
    Failed(ErrorKind, String),
    /// A response the collector recorded but did not use (its skipped note follows it:
    /// the answer came from an address the guard refuses, DNS rebinding).
    NotUsed(String),
    /// A skipped record: the reason.
    Skipped(String),
}

/// One discovery record.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    pub(crate) seq: u64,
    pub(crate) url: String,
    pub(crate) got: Got,
    /// The collector's refusal of the document it was served (another issuer, another
    /// resource): `None` when it used it, and in bundles written before the collector
    /// recorded refusals.
    pub(crate) refused: Option<MetadataRefusal>,
}

impl Attempt {
    pub(crate) fn read(r: &mcp_probe_schema::model::Record) -> Option<Attempt> {
        match &r.observation {
            Observation::Http(x) => {
                let got = match &x.outcome {
                    HttpOutcome::Error(e) => Got::Failed(e.kind, escape_line(&e.message)),
                    HttpOutcome::Response(resp) => {
                        let whole = matches!(
                            resp.body.end,
                            BodyEnd::Complete | BodyEnd::StoppedAfterResponse
                        );
                        let doc = (resp.status == 200 && whole)
                            .then(|| serde_json::from_slice::<Value>(&resp.body.bytes).ok())
                            .flatten();
                        match doc {
                            Some(Value::Object(m)) => Got::Doc(m),
                            _ if resp.status == 200 && !whole => Got::Answer(
                                200,
                                "HTTP 200 whose body was not read whole".to_string(),
                            ),
                            _ if resp.status == 200 => Got::Answer(
                                200,
                                "HTTP 200 whose body is not a JSON object".to_string(),
                            ),
                            _ => Got::Answer(
                                resp.status,
                                crate::format_exact!("HTTP {}", resp.status),
                            ),
                        }
                    }
                };
                Some(Attempt {
                    seq: r.seq,
                    url: x.request.url.clone(),
                    got,
                    refused: x.refused.as_deref().cloned(),
                })
            }
            Observation::Skipped { reason } => Some(Attempt {
                seq: r.seq,
                url: String::new(),
                got: Got::Skipped(escape_line(reason)),
                refused: None,
            }),
            _ => None,
        }
    }

    /// The records of `l`, a "not used" note marking the exchange it follows.
    pub(crate) fn of_leg(ev: &Bundle, l: LegId) -> Vec<Attempt> {
        let mut out: Vec<Attempt> = Vec::new();
        for a in ev.records_for(l).filter_map(Attempt::read) {
            if let (Got::Skipped(reason), Some(prev)) = (&a.got, out.last_mut()) {
                if reason.starts_with("not used")
                    && !prev.url.is_empty()
                    && reason.contains(prev.url.as_str())
                    && prev.is_fetch()
                {
                    prev.got = Got::NotUsed(reason.clone());
                    continue;
                }
            }
            out.push(a);
        }
        out
    }

    pub(crate) fn doc(&self) -> Option<&Map<String, Value>> {
        match &self.got {
            Got::Doc(m) => Some(m),
            _ => None,
        }
    }

    pub(crate) fn clean_404(&self) -> bool {
        matches!(self.got, Got::Answer(404, _))
    }

    pub(crate) fn guard_refused(&self) -> bool {
        matches!(self.got, Got::Failed(ErrorKind::RefusedByGuard, _))
    }

    pub(crate) fn is_fetch(&self) -> bool {
        !matches!(self.got, Got::Skipped(_))
    }

    pub(crate) fn why(&self) -> String {
        match &self.got {
            Got::Doc(_) => match &self.refused {
                Some(r) => crate::format_exact!(
                    "HTTP 200 with a JSON document, refused by the collector: {}",
                    refusal_text(r)
                ),
                None => "HTTP 200 with a JSON document".into(),
            },
            Got::Answer(_, what) => what.clone(),
            Got::Failed(ErrorKind::RefusedByGuard, m) => {
                crate::format_exact!("refused by the network guard, nothing sent: {m}")
            }
            Got::Failed(k, m) => crate::format_exact!("no response: {}: {m}", k.as_str()),
            Got::NotUsed(r) => crate::format_exact!("answer not used by the collector: {r}"),
            Got::Skipped(r) => crate::format_exact!("not fetched: {r}"),
        }
    }

    /// `"<url> (record #n: why)"`.
    pub(crate) fn url_and_why(&self) -> String {
        if self.url.is_empty() {
            crate::format_exact!("record #{} ({})", self.seq, self.why())
        } else {
            crate::format_exact!(
                "{} (record #{}: {})",
                crate::fmt::Line(&self.url),
                self.seq,
                self.why()
            )
        }
    }
}

/// The `authorization_servers` member of the selected PRM document.
#[derive(Debug, Clone)]
pub(crate) struct AsList {
    /// Non-blank strings, in advertised order.
    pub(crate) entries: Vec<String>,
    /// Elements that are not non-blank strings.
    pub(crate) discarded: usize,
    /// The member as served (null when absent).
    pub(crate) raw: Value,
}

/// One advertised authorization server and the discovery records attributed to it.
#[derive(Debug, Clone)]
pub(crate) struct AsView {
    pub(crate) entry: String,
    pub(crate) forms: Option<Vec<String>>,
    /// Each of `forms` normalised ([`norm`]), made once for [`attribute`]; empty when
    /// there are no forms or no record to attribute.
    pub(crate) normed_forms: Vec<String>,
    /// The entry's origin and its path without trailing slashes, when it parses, made
    /// once for [`attribute`].
    pub(crate) site: Option<(Origin, String)>,
    pub(crate) attempts: Vec<Attempt>,
}

impl AsView {
    /// The view of advertised entry `entry` (no attempts yet); `attributing` when records
    /// will be attributed to it ([`attribute`] reads what is made for that).
    pub(crate) fn new(entry: &str, attributing: bool) -> AsView {
        let parsed = Url::parse(entry).ok();
        let forms = parsed.as_ref().and_then(as_forms);
        let normed_forms = match &forms {
            Some(f) if attributing => f.iter().map(|f| norm(f)).collect(),
            _ => Vec::new(),
        };
        let site = parsed
            .filter(|_| attributing)
            .map(|e| (e.origin(), e.path().trim_end_matches('/').to_string()));
        AsView {
            entry: entry.to_string(),
            forms,
            normed_forms,
            site,
            attempts: Vec::new(),
        }
    }

    /// The first attempt that served metadata carrying a non-empty string `issuer`.
    pub(crate) fn resolved(&self) -> Option<(&Attempt, &Map<String, Value>)> {
        self.attempts.iter().find_map(|a| {
            let d = a.doc()?;
            d.get("issuer")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|_| (a, d))
        })
    }

    pub(crate) fn issuer(&self) -> Option<&str> {
        self.resolved()
            .and_then(|(_, d)| d.get("issuer").and_then(Value::as_str))
    }

    /// Why it did not resolve.
    pub(crate) fn unresolved_why(&self) -> String {
        if self.forms.is_none() {
            return "the entry is not an http(s) URL, so no discovery form can be built from it"
                .into();
        }
        if self.attempts.is_empty() {
            return "no discovery form was attempted (the bundle holds no discovery.as record \
                    for it)"
                .into();
        }
        let tried: Vec<String> = self.attempts.iter().map(Attempt::url_and_why).collect();
        crate::format_exact!(
            "no discovery form served metadata carrying an issuer; {} form(s) tried: {}",
            self.attempts.len(),
            tried.join(", ")
        )
    }
}

/// Attribute a `discovery.as` URL to an advertised entry: one of its discovery forms,
/// else the entry on the same origin whose issuer path the URL contains (the longest; a
/// root issuer last). `None` when no entry fits. The views are made with
/// [`AsView::new`] for attributing; the URL is parsed once.
pub(crate) fn attribute(url: &str, views: &[AsView]) -> Option<usize> {
    if let Some(i) = views.iter().position(|v| v.entry == url) {
        // A refusal recorded under the issuer string itself (not a URL).
        return Some(i);
    }
    let u = parse_unfragmented(url);
    let n = norm_with(url, u.as_ref());
    if let Some(i) = views
        .iter()
        .position(|v| v.normed_forms.iter().any(|f| f == n))
    {
        return Some(i);
    }
    let u = u?;
    let origin = u.origin();
    views
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let (o, p) = v.site.as_ref()?;
            (*o == origin && (p.is_empty() || u.path().contains(p.as_str())))
                .then_some((i, p.len()))
        })
        .max_by_key(|(i, len)| (*len, std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// The collector's refusal, in one line: `its issuer "x" is not "y", the issuer it was
/// fetched for (RFC 8414 §3.3); nothing was sent to its endpoints`.
pub(crate) fn refusal_text(r: &MetadataRefusal) -> String {
    let served = match &r.served {
        Value::String(s) => crate::format_exact!("\"{}\"", crate::fmt::Line(s)),
        other => escape_line(&other.to_string()),
    };
    match r.member.as_str() {
        "issuer" => crate::format_exact!(
            "its issuer {served} is not \"{}\", the issuer it was fetched for ({}): issuer mismatch, \
             so nothing was sent to its endpoints",
            crate::fmt::Line(&r.expected),
            crate::fmt::Line(&r.rule)
        ),
        m => crate::format_exact!(
            "its {} {served} does not cover the endpoint {} ({}): {} mismatch, so it was not used",
            crate::fmt::Line(m),
            crate::fmt::Line(&r.expected),
            crate::fmt::Line(&r.rule),
            crate::fmt::Line(m)
        ),
    }
}
