//! What the OAuth checks read, derived once per grading of one check.

use mcp_probe_schema::model::TokenFacts;
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::vocab::well_known::AS_LIST_CAP;
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::checks::common::oauth::challenge::{read_unauth, Challenged, Unauth};
use crate::checks::common::oauth::discovery::{attribute, AsList, AsView, Attempt};
use crate::checks::common::oauth::tokens::{claims, dedup, observed_scopes, token_label};
use crate::checks::common::oauth::uris::{norm, normed, parse_unfragmented, prm_well_known};
use crate::evidence::Bundle;

/// Everything the four checks read: the bundle, and what is derived from it once per
/// view of the bundle ([`OauthFacts`], kept by [`Bundle::view`]).
#[derive(Clone)]
pub(crate) struct Facts<'a> {
    pub(crate) ev: &'a Bundle,
    facts: Arc<OauthFacts>,
}

impl std::ops::Deref for Facts<'_> {
    type Target = OauthFacts;
    fn deref(&self) -> &OauthFacts {
        &self.facts
    }
}

/// What the OAuth checks read of a bundle, derived once per view of it and shared by
/// every check (the discovery documents parsed once, not once per check).
#[derive(Debug, Clone)]
pub(crate) struct OauthFacts {
    pub(crate) endpoint: String,
    pub(crate) auth_required: bool,
    pub(crate) unauth: Unauth,
    pub(crate) prm: Vec<Attempt>,
    /// The URL of each of `prm`, normalised ([`norm`]).
    prm_normed: Vec<String>,
    /// The path-inserted well-known URL a client derives from the endpoint (the first of
    /// [`prm_well_known`]) and its normalised form; both empty when there is none.
    pub(crate) path_inserted: (String, String),
    /// The candidate URLs a client derives (challenge URL, path-inserted, root) that no
    /// record of protected-resource discovery fetched: "never attempted".
    pub(crate) never_attempted: Vec<String>,
    pub(crate) advertised: Option<AsList>,
    /// The advertised servers within the cap.
    pub(crate) servers: Vec<AsView>,
    /// `discovery.as` records attributed to no advertised server, and skipped ones.
    pub(crate) as_other: Vec<Attempt>,
}

impl<'a> Facts<'a> {
    /// `None` when no endpoint answered.
    pub(crate) fn new(ev: &'a Bundle) -> Option<Facts<'a>> {
        let facts = ev.view(|ev| OauthFacts::derive(ev).map(Arc::new));
        let facts = Option::clone(&facts)?;
        Some(Facts { ev, facts })
    }
}

impl OauthFacts {
    fn derive(ev: &Bundle) -> Option<OauthFacts> {
        let session = ev.session()?;
        let endpoint = ev.endpoint();
        let unauth = read_unauth(ev);
        let prm = Attempt::of_leg(ev, leg::PRM);
        // The expected candidates, each with its normalised form, made once.
        let mut expected_prm: Vec<(String, String)> = Vec::new();
        if let Unauth::Challenged(c) = &unauth {
            if let Some(rm) = c.resource_metadata().filter(|s| !s.trim().is_empty()) {
                if let Some(p) = parse_unfragmented(rm) {
                    expected_prm.push((rm.to_string(), normed(p)));
                }
            }
        }
        let mut path_inserted = None;
        for u in prm_well_known(&endpoint) {
            let n = norm(&u);
            if path_inserted.is_none() {
                path_inserted = Some((u.clone(), n.clone()));
            }
            if !expected_prm.iter().any(|(_, e)| *e == n) {
                expected_prm.push((u, n));
            }
        }
        // Without a well-known URL the path-inserted one reads as empty (`norm("")` is
        // empty too).
        let path_inserted = path_inserted.unwrap_or_default();
        let advertised = prm.iter().find_map(Attempt::doc).map(|d| {
            let raw = d
                .get("authorization_servers")
                .cloned()
                .unwrap_or(Value::Null);
            let (entries, discarded) = match &raw {
                Value::Array(a) => {
                    let e: Vec<String> = a
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                        .map(str::to_string)
                        .collect();
                    let n = e.len();
                    (e, a.len() - n)
                }
                _ => (Vec::new(), 0),
            };
            AsList {
                entries,
                discarded,
                raw,
            }
        });
        let as_meta = Attempt::of_leg(ev, leg::AS_META);
        let attributing = as_meta.iter().any(Attempt::is_fetch);
        let mut servers: Vec<AsView> = advertised
            .iter()
            .flat_map(|a| a.entries.iter().take(AS_LIST_CAP))
            .map(|e| AsView::new(e, attributing))
            .collect();
        let mut as_other = Vec::new();
        for a in as_meta {
            // A skipped record is attributed to no server.
            match a.is_fetch().then(|| attribute(&a.url, &servers)).flatten() {
                Some(i) => servers[i].attempts.push(a),
                None => as_other.push(a),
            }
        }
        // Each URL normalised once, here, not at each reading of the facts.
        // A record most often fetched an expected candidate itself: its normalised form
        // is then that one's, not parsed again (`norm` reads nothing but the string).
        let prm_normed: Vec<String> = prm
            .iter()
            .map(|a| match expected_prm.iter().find(|(e, _)| *e == a.url) {
                Some((_, n)) => n.clone(),
                None => norm(&a.url),
            })
            .collect();
        let never_attempted = expected_prm
            .into_iter()
            .filter(|(_, n)| !prm_normed.contains(n))
            .map(|(e, _)| e)
            .collect();
        Some(OauthFacts {
            endpoint,
            auth_required: session.auth_required,
            unauth,
            prm,
            prm_normed,
            path_inserted,
            never_attempted,
            advertised,
            servers,
            as_other,
        })
    }
}

impl<'a> Facts<'a> {
    pub(crate) fn challenge(&self) -> Option<&Challenged> {
        match &self.unauth {
            Unauth::Challenged(c) => Some(c),
            _ => None,
        }
    }

    pub(crate) fn tokens(&self) -> &'a [TokenFacts] {
        &self.ev.payload.tokens
    }

    pub(crate) fn docs(&self) -> impl Iterator<Item = &Attempt> {
        self.prm.iter().filter(|a| a.doc().is_some())
    }

    /// The first PRM document in candidate (record) order.
    pub(crate) fn selected(&self) -> Option<(&Attempt, &Map<String, Value>)> {
        self.prm.iter().find_map(|a| a.doc().map(|d| (a, d)))
    }

    /// The PRM document at the URL whose normalised form ([`norm`]) is `normed`, if one
    /// was served there.
    pub(crate) fn doc_at(&self, normed: &str) -> Option<(&Attempt, &Map<String, Value>)> {
        self.prm
            .iter()
            .zip(&self.prm_normed)
            .filter(|(_, n)| *n == normed)
            .find_map(|(a, _)| a.doc().map(|d| (a, d)))
    }

    /// Why protected-resource discovery did not decide: empty when a document was
    /// parsed, or when every candidate answered a clean 404 (the absence was observed).
    pub(crate) fn prm_unread(&self) -> Vec<String> {
        if self.docs().next().is_some() {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .prm
            .iter()
            .filter(|a| !a.clean_404())
            .map(Attempt::url_and_why)
            .collect();
        for e in &self.never_attempted {
            out.push(crate::format_exact!(
                "{} (never attempted)",
                crate::fmt::Line(e)
            ));
        }
        if self.prm.is_empty() && out.is_empty() {
            out.push("no protected-resource metadata discovery was attempted at all".into());
        }
        out
    }

    /// The clean 404s, for the "observed absent" evidence.
    pub(crate) fn prm_404s(&self) -> Vec<String> {
        self.prm
            .iter()
            .filter(|a| a.clean_404())
            .map(|a| crate::format_exact!("{} (record #{})", crate::fmt::Line(&a.url), a.seq))
            .collect()
    }

    pub(crate) fn guard_refused_urls(&self) -> Vec<String> {
        self.prm
            .iter()
            .chain(self.servers.iter().flat_map(|s| s.attempts.iter()))
            .chain(self.as_other.iter())
            .filter(|a| a.guard_refused())
            .map(|a| a.url.clone())
            .collect()
    }

    pub(crate) fn resolved(&self) -> impl Iterator<Item = (&AsView, &Map<String, Value>)> {
        self.servers
            .iter()
            .filter_map(|s| s.resolved().map(|(_, d)| (s, d)))
    }

    /// Advertised entries beyond the cap.
    pub(crate) fn past_cap(&self) -> usize {
        self.advertised
            .as_ref()
            .map_or(0, |a| a.entries.len().saturating_sub(AS_LIST_CAP))
    }

    /// Why the server is seen to offer OAuth; empty when it is not.
    pub(crate) fn signals(&self) -> Vec<String> {
        let mut out = Vec::new();
        let non_oauth = self.challenge().is_some_and(Challenged::non_oauth_only);
        if self.auth_required && !non_oauth {
            out.push("the endpoint refuses an unauthenticated request (auth_required)".into());
        }
        for (i, t) in self.tokens().iter().enumerate() {
            out.push(crate::format_exact!(
                "{} is held",
                token_label(i, t, self.tokens().len())
            ));
        }
        if let Some((a, _)) = self.selected() {
            out.push(crate::format_exact!(
                "a protected-resource metadata document is published at {}",
                crate::fmt::Line(&a.url)
            ));
        }
        for (s, _) in self.resolved() {
            out.push(crate::format_exact!(
                "authorization-server metadata resolved for {}",
                crate::fmt::Line(&s.entry)
            ));
        }
        if let Some(s) = self.challenge().and_then(Challenged::scope) {
            out.push(crate::format_exact!(
                "the challenge names scope \"{}\"",
                crate::fmt::Line(s)
            ));
        }
        out
    }

    /// What was observed absent, for an N/A.
    pub(crate) fn absence(&self) -> String {
        // Written into one string: no string for the 401 part, per 404 or for their join.
        let mut s = String::with_capacity(320);
        match &self.unauth {
            Unauth::Reached { what, .. } => {
                s.push_str("no 401: ");
                s.push_str(what);
            }
            Unauth::Challenged(c) => {
                use std::fmt::Write as _;
                let _ = write!(
                    s,
                    "{} whose challenge names no OAuth scheme ({})",
                    c.refused(),
                    c.quoted()
                );
            }
            _ => s.push_str("no 401 was observed"),
        }
        s.push_str(
            "; no token held; every protected-resource metadata candidate answered a clean 404 (",
        );
        for (i, a) in self.prm.iter().filter(|a| a.clean_404()).enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            crate::fmt::escape_line_into(&mut s, &a.url);
            s.push_str(" (record #");
            s.push_str(itoa::Buffer::new().format(a.seq));
            s.push(')');
        }
        s.push_str("); no challenge scope; no authorization server advertised");
        s
    }

    /// Granted scopes across the tokens held (`None` when no token states any).
    pub(crate) fn granted(&self) -> Option<Vec<String>> {
        let per: Vec<Vec<String>> = self
            .tokens()
            .iter()
            .filter_map(|t| observed_scopes(t.scope.as_deref(), claims(t)))
            .collect();
        (!per.is_empty()).then(|| dedup(per.into_iter().flatten()))
    }

    /// The selected PRM document's `scopes_supported` strings (`None` when absent or not
    /// a list).
    pub(crate) fn resource_scopes(&self) -> Option<Vec<String>> {
        let (_, d) = self.selected()?;
        let a = d.get("scopes_supported")?.as_array()?;
        Some(dedup(
            a.iter().filter_map(Value::as_str).map(str::to_string),
        ))
    }

    /// The union of `scopes_supported` over resolved AS metadata (`None` when no resolved
    /// document lists any field).
    pub(crate) fn as_scopes(&self) -> Option<Vec<String>> {
        let lists: Vec<Vec<String>> = self
            .resolved()
            .filter_map(|(_, d)| d.get("scopes_supported").and_then(Value::as_array))
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        (!lists.is_empty()).then(|| dedup(lists.into_iter().flatten()))
    }

    /// Seqs of the challenge and of every discovery record.
    pub(crate) fn seqs(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.prm.iter().map(|a| a.seq).collect();
        v.extend(
            self.servers
                .iter()
                .flat_map(|s| s.attempts.iter().map(|a| a.seq)),
        );
        v.extend(self.as_other.iter().map(|a| a.seq));
        match &self.unauth {
            Unauth::Reached { seq, .. }
            | Unauth::Other { seq, .. }
            | Unauth::NoResponse { seq, .. } => v.push(*seq),
            Unauth::Challenged(c) => v.push(c.seq),
            Unauth::NotObserved(_) => {}
        }
        v
    }

    pub(crate) fn attempts_shown(&self) -> Vec<String> {
        self.prm
            .iter()
            .chain(self.servers.iter().flat_map(|s| s.attempts.iter()))
            .chain(self.as_other.iter())
            .map(Attempt::url_and_why)
            .collect()
    }
}
