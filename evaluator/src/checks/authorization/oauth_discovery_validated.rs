//! Rule `oauth-discovery-validated`: OAuth discovery metadata over TLS and validated
//! (docs/checks.md, under the row this rule grades). Sub-verdicts a to g read the endpoint's transport, the protected-resource
//! metadata documents and the advertised authorization servers' metadata; f compares the
//! advertised list with the operator policy's `approved_authorization_servers` when it
//! states them, else with a baseline bundle of the same endpoint.

use std::collections::BTreeSet;

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::vocab::well_known::AS_LIST_CAP;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::oauth::challenge::Challenged;
use crate::checks::common::oauth::discovery::{refusal_text, Attempt};
use crate::checks::common::oauth::facts::Facts;
use crate::checks::common::oauth::gate::{
    baseline_for, combine, describe_baseline, json_excerpt, json_list, legs_map, DISCOVERY,
};
use crate::checks::common::oauth::uris::{
    canonical_resource, norm, resource_covers, strip_slash, transport_of, Transport,
};
use crate::checks::common::policy::{absent, approved, judge};
use crate::checks::common::values::or_null;
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};

/// OAuth discovery metadata over TLS and validated.
#[derive(Debug)]
pub struct OauthDiscoveryValidated;

/// The reduction: what sub-verdict f held the advertised list to (the policy's
/// approved_authorization_servers, else a self-recorded baseline).
fn reduction(cx: &Context<'_>) -> String {
    const KEY: &str = "approved_authorization_servers";
    let change_control = match approved(cx, KEY, |d| d.approved_authorization_servers.as_ref()) {
        Some(a) => crate::format_exact!(
            "change control of the authorization-server list is the policy's {KEY} ({})",
            crate::fmt::Line(a.file)
        ),
        None => crate::format_exact!(
            "change control of the authorization-server list is drift against a self-recorded \
             baseline, not an approved list ({})",
            absent(cx, KEY)
        ),
    };
    crate::format_exact!(
        "bounded discovery: at most 5 advertised authorization servers are resolved (the number \
         advertised and past the cap is stated), each fetch bounded by the collector's timeout; \
         {change_control}; not graded by design: the collector's network guard itself and write \
         permissions on the metadata source"
    )
}

/// What `oauth-discovery-validated` reports besides its legs, in report order.
#[derive(Serialize)]
struct OauthDiscoveryValidatedFacts<'a> {
    legs: Map<String, Value>,
    /// Protected-resource metadata URLs that served a document.
    discovery_paths_answered: Vec<String>,
    /// Every discovery record, described.
    discovery_attempts: Vec<String>,
    /// The selected document's `authorization_servers` (null: no document).
    authorization_servers_advertised: Option<&'a [String]>,
    authorization_servers_resolved: Vec<&'a str>,
    authorization_servers_cap: usize,
    authorization_servers_past_cap: usize,
    guard_refused_urls: Vec<String>,
    /// Metadata documents the collector was served and refused (another issuer, another
    /// resource), described; absent when none (and for bundles from before the collector
    /// recorded refusals).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    collector_refused: Vec<String>,
}

/// The discovery records whose document the collector refused, described.
fn collector_refused(f: &Facts<'_>) -> Vec<String> {
    f.prm
        .iter()
        .chain(f.servers.iter().flat_map(|s| s.attempts.iter()))
        .chain(f.as_other.iter())
        .filter_map(|a| {
            a.refused.as_ref().map(|r| {
                crate::format_exact!(
                    "{} (record #{}): {}",
                    crate::fmt::Line(&a.url),
                    a.seq,
                    refusal_text(r)
                )
            })
        })
        .collect()
}

impl Check for OauthDiscoveryValidated {
    fn id(&self) -> &'static str {
        "oauth-discovery-validated"
    }

    fn legs(&self, era: Option<Era>) -> Legs {
        // discovery.as is read per advertised server (an advertised server with no record
        // is reported as never attempted, sub-verdict g).
        DISCOVERY.legs(era)
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let f = match DISCOVERY.prelude(ev) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let details = |o: Outcome, f: &Facts<'_>, legs: &[SubVerdict]| {
            o.with_records(f.seqs())
                .with_facts(&OauthDiscoveryValidatedFacts {
                    legs: legs_map(legs),
                    discovery_paths_answered: f.docs().map(|a| a.url.clone()).collect(),
                    discovery_attempts: f.attempts_shown(),
                    authorization_servers_advertised: f
                        .advertised
                        .as_ref()
                        .map(|a| a.entries.as_slice()),
                    authorization_servers_resolved: f
                        .resolved()
                        .map(|(s, _)| s.entry.as_str())
                        .collect(),
                    authorization_servers_cap: AS_LIST_CAP,
                    authorization_servers_past_cap: f.past_cap(),
                    guard_refused_urls: f.guard_refused_urls(),
                    collector_refused: collector_refused(f),
                })
        };
        let unread = f.prm_unread();
        let no_doc = f.selected().is_none();
        let signals = f.signals();
        let defaults = ev.session().and_then(|s| s.authorization_defaults.as_ref());
        let with_defaults = |o: Outcome| match defaults {
            None => o,
            Some(d) => {
                let mut o = o.with_detail(
                    "authorization_defaults",
                    json!({"base": d.base, "authorization_endpoint": d.authorization_endpoint,
                           "token_endpoint": d.token_endpoint,
                           "registration_endpoint": d.registration_endpoint,
                           "absent_in": d.absent_in}),
                );
                o.evidence.push_str(&crate::format_exact!(
                    "; the server relies on unadvertised defaults: it published neither protected-resource \
                     nor authorization-server metadata, so the collector logged in with the MCP 2025-03-26 \
                     default endpoints {}, {} and {} on its own origin",
                    crate::fmt::Line(&d.authorization_endpoint),
                    crate::fmt::Line(&d.token_endpoint),
                    crate::fmt::Line(&d.registration_endpoint)
                ));
                o
            }
        };
        if no_doc && unread.is_empty() && signals.is_empty() {
            let o = Outcome::single(
                Verdict::NotApplicable,
                crate::format_exact!(
                    "no OAuth is offered: {}; the discovery chain the recommendation governs does not \
                     exist",
                    f.absence()
                ),
                reduction(cx),
            );
            return with_defaults(details(o, &f, &[]));
        }
        let a = match transport_of(&f.endpoint) {
            Transport::Tls => SubVerdict::new("a", SubOutcome::Pass, "the endpoint is served over TLS (https)"),
            Transport::LoopbackPlain => SubVerdict::new(
                "a",
                SubOutcome::Pass,
                crate::format_exact!(
                    "the endpoint {} is plain http on a loopback host: graded as a lab endpoint, since \
                     loopback traffic never leaves the host (a non-loopback http endpoint is UNKNOWN here: \
                     {} owns transport)",
                    crate::fmt::Line(&f.endpoint),
                    crate::rule_ref!("tls-required")
                ),
            ),
            Transport::Plain => {
                let legs = vec![SubVerdict::new(
                    "a",
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "the endpoint {} is not served over TLS and is not on a loopback host: {} owns \
                         transport, and metadata fetched in the clear is not assessed here",
                        crate::fmt::Line(&f.endpoint),
                        crate::rule_ref!("tls-required")
                    ),
                )];
                let o = Outcome::from_subs(legs.clone(), reduction(cx));
                return with_defaults(details(o, &f, &legs));
            }
        };
        if no_doc {
            let (v, text) = if !unread.is_empty() {
                (
                    Verdict::Unknown,
                    crate::format_exact!(
                        "no protected-resource metadata document was read, and the chain's existence is \
                         undecided: {}",
                        unread.join(", ")
                    ),
                )
            } else {
                (
                    Verdict::Fail,
                    crate::format_exact!(
                        "the server offers OAuth ({}) but publishes no protected-resource metadata: every \
                         candidate answered a clean 404 ({}), so a client cannot discover the \
                         authorization server",
                        signals.join("; "),
                        f.prm_404s().join(", ")
                    ),
                )
            };
            let o = Outcome::single(v, text, reduction(cx));
            return with_defaults(details(o, &f, &[]));
        }
        let legs = vec![
            a,
            sub_b(&f),
            sub_c(&f),
            sub_d(&f),
            sub_e(&f),
            sub_f(&f, cx),
            sub_g(&f),
        ];
        let mut o = Outcome::from_subs(legs.clone(), reduction(cx));
        let refused = collector_refused(&f);
        if !refused.is_empty() {
            o.evidence.push_str(&crate::format_exact!(
                "; the collector refused {} metadata document(s) it was served: {}",
                refused.len(),
                refused.join("; ")
            ));
        }
        if let Some(a) = &f.advertised {
            let n = a.entries.len();
            o.evidence.push_str(&crate::format_exact!(
                "; {n} authorization server(s) advertised, {} past the cap of {AS_LIST_CAP}",
                f.past_cap()
            ));
        }
        let baseline = cx
            .baseline
            .and_then(Facts::new)
            .and_then(|b| b.advertised.as_ref().map(|a| a.entries.clone()));
        with_defaults(
            details(o, &f, &legs)
                .with_detail(
                    "canonical_resource",
                    or_null(canonical_resource(&f.endpoint)),
                )
                .with_detail(
                    "authorization_servers_baseline",
                    or_null(baseline.map(|b| json!(b))),
                ),
        )
    }
}

/// Canonical key order, for byte comparison of two documents.
fn canonical_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// Sub-verdict b: the document the challenge names against the path-inserted well-known one
/// (both describe this endpoint's resource). The *selected* document is, in candidate
/// order, the challenge document itself whenever it exists, so comparing the challenge
/// document with it could never fail; comparing with the path-inserted document is what
/// makes the leg able to fail. The root document may describe another resource (RFC 9728 path
/// insertion) and is recorded, not compared.
fn sub_b(f: &Facts<'_>) -> SubVerdict {
    const ID: &str = "b";
    let (path_url, path_normed) = &f.path_inserted;
    let named = f
        .challenge()
        .and_then(Challenged::resource_metadata)
        .filter(|s| !s.trim().is_empty());
    let Some(named) = named else {
        return SubVerdict::new(
            ID,
            SubOutcome::Pass,
            "the challenge names no resource_metadata URL (or no challenge was observed): only the \
             well-known document(s) were consulted",
        );
    };
    let named_normed = norm(named);
    let Some((ca, cd)) = f.doc_at(&named_normed) else {
        return SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "the URL the challenge names ({}) served no document: only the well-known document(s) \
                 were consulted",
                crate::fmt::Line(named)
            ),
        );
    };
    if named_normed == *path_normed {
        return SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "the challenge names the path-inserted well-known URL itself ({}, record #{}): one \
                 document describes this resource",
                crate::fmt::Line(&ca.url),
                ca.seq
            ),
        );
    }
    let Some((pa, pd)) = f.doc_at(path_normed) else {
        return SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "the challenge names {} (record #{}); the path-inserted well-known URL {} served no \
                 document, so only one document describes this resource",
                crate::fmt::Line(&ca.url),
                ca.seq,
                crate::fmt::Line(path_url)
            ),
        );
    };
    let (c, p) = (Value::Object(cd.clone()), Value::Object(pd.clone()));
    if canonical_json(&c) == canonical_json(&p) {
        SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "the document the challenge names ({}, record #{}) equals the path-inserted well-known \
                 document ({}, record #{}) after canonical key ordering",
                crate::fmt::Line(&ca.url),
                ca.seq,
                crate::fmt::Line(&pa.url),
                pa.seq
            ),
        )
    } else {
        let keys: BTreeSet<&String> = cd.keys().chain(pd.keys()).collect();
        let differing: Vec<String> = keys
            .into_iter()
            .filter(|k| cd.get(*k).map(canonical_json) != pd.get(*k).map(canonical_json))
            .map(|k| escape_line(k))
            .collect();
        SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "the document the challenge names ({}, record #{}) differs from the path-inserted \
                 well-known document ({}, record #{}) for the same resource, in member(s) {}: a client \
                 sees a different chain depending on the discovery path it takes",
                crate::fmt::Line(&ca.url),
                ca.seq,
                crate::fmt::Line(&pa.url),
                pa.seq,
                json_list(&differing)
            ),
        )
    }
}

fn sub_c(f: &Facts<'_>) -> SubVerdict {
    const ID: &str = "c";
    let answered: Vec<&Attempt> = f.docs().collect();
    let plain: Vec<String> = answered
        .iter()
        .filter(|a| transport_of(&a.url) == Transport::Plain)
        .map(|a| escape_line(&a.url))
        .collect();
    if !plain.is_empty() {
        return SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "protected-resource metadata was served without TLS at {} (not https, not loopback)",
                plain.join(", ")
            ),
        );
    }
    let refused: Vec<String> = f
        .prm
        .iter()
        .filter(|a| a.guard_refused())
        .map(|a| escape_line(&a.url))
        .collect();
    if !refused.is_empty() {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the network guard refused candidate(s) {}, so not every discovery path was read",
                refused.join(", ")
            ),
        );
    }
    let loopback: Vec<String> = answered
        .iter()
        .filter(|a| transport_of(&a.url) == Transport::LoopbackPlain)
        .map(|a| escape_line(&a.url))
        .collect();
    let urls: Vec<String> = answered.iter().map(|a| escape_line(&a.url)).collect();
    // No plain-http document is left here: each is https or loopback http.
    let note = if loopback.is_empty() {
        crate::format_exact!("every document was served over https: {}", urls.join(", "))
    } else {
        crate::format_exact!(
            "every document was served over https, or plain http on a loopback host (graded as a lab \
             endpoint): {}",
            urls.join(", ")
        )
    };
    SubVerdict::new(ID, SubOutcome::Pass, note)
}

/// Sub-verdict d, and the documents the collector refused for their resource: the selected one's
/// refusal is named in its note; another refused document fails the leg too (the grader
/// reads the collector's `refused` fact; an older bundle has none).
fn sub_d(f: &Facts<'_>) -> SubVerdict {
    let mut l = leg_d_selected(f);
    let selected = f.selected().map(|(a, _)| a.seq);
    for a in f.prm.iter() {
        let Some(r) = &a.refused else { continue };
        if Some(a.seq) == selected {
            l.note.push_str(&crate::format_exact!(
                "; the collector refused it: {}",
                refusal_text(r)
            ));
        } else {
            l.outcome = SubOutcome::Fail;
            l.note.push_str(&crate::format_exact!(
                "; the document at {} (record #{}) was refused by the collector: {}",
                crate::fmt::Line(&a.url),
                a.seq,
                refusal_text(r)
            ));
        }
    }
    l
}

fn leg_d_selected(f: &Facts<'_>) -> SubVerdict {
    const ID: &str = "d";
    let Some((a, d)) = f.selected() else {
        return SubVerdict::new(ID, SubOutcome::Unknown, "no document");
    };
    let Some(canonical) = canonical_resource(&f.endpoint) else {
        return SubVerdict::new(
            ID,
            SubOutcome::Error,
            crate::format_exact!(
                "the endpoint {} has no canonical URI",
                crate::fmt::Line(&f.endpoint)
            ),
        );
    };
    let at = crate::format_exact!(
        "the document at {} (record #{})",
        crate::fmt::Line(&a.url),
        a.seq
    );
    match d.get("resource") {
        None => SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!("{at} has no resource member, so which resource it describes is not stated"),
        ),
        Some(Value::String(r)) if r.trim().is_empty() => SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!("{at} has a blank resource member"),
        ),
        Some(Value::String(r)) => match resource_covers(r, &canonical) {
            None => SubVerdict::new(
                ID,
                SubOutcome::Fail,
                crate::format_exact!(
                    "{at} names resource \"{}\", which is not parsable as a URI (RFC 9728 §2 requires \
                     one)",
                    crate::fmt::Line(r)
                ),
            ),
            Some(true) if strip_slash(r) == strip_slash(&canonical) => SubVerdict::new(
                ID,
                SubOutcome::Pass,
                crate::format_exact!(
                    "{at} names resource {} equal to the endpoint's canonical URI (rule: equal after \
                     one trailing slash)",
                    crate::fmt::Line(r)
                ),
            ),
            Some(true) => SubVerdict::new(
                ID,
                SubOutcome::Pass,
                crate::format_exact!(
                    "{at} names resource {}, a hierarchical parent of the endpoint's canonical URI {} \
                     (rule: same origin, path at or below, the SDK's check_resource_allowed)",
                    crate::fmt::Line(r),
                    crate::fmt::Line(&canonical)
                ),
            ),
            Some(false) => SubVerdict::new(
                ID,
                SubOutcome::Fail,
                crate::format_exact!(
                    "{at} names resource {}, which is neither the endpoint's canonical URI {} nor a \
                     hierarchical parent of it (rule: same origin, path at or below)",
                    crate::fmt::Line(r),
                    crate::fmt::Line(&canonical)
                ),
            ),
        },
        Some(v) => SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "{at} names resource {}, which is not a string and so not a URI (RFC 9728 §2)",
                json_excerpt(v)
            ),
        ),
    }
}

fn sub_e(f: &Facts<'_>) -> SubVerdict {
    const ID: &str = "e";
    let Some(a) = &f.advertised else {
        return SubVerdict::new(ID, SubOutcome::Unknown, "no document");
    };
    let discarded = if a.discarded > 0 {
        crate::format_exact!(
            " ({} element(s) that are not non-blank strings discarded)",
            a.discarded
        )
    } else {
        String::new()
    };
    if a.entries.is_empty() {
        SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "the document advertises no authorization server (authorization_servers is {}){discarded}: \
                 a document was served, so the requirement applies",
                json_excerpt(&a.raw)
            ),
        )
    } else {
        SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "authorization_servers advertises {}{discarded}",
                json_list(&a.entries)
            ),
        )
    }
}

fn sub_f(f: &Facts<'_>, cx: &Context<'_>) -> SubVerdict {
    const ID: &str = "f";
    let Some(now) = f.advertised.as_ref().map(|a| a.entries.clone()) else {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            "no authorization-server list observed",
        );
    };
    let policy = approved(cx, "approved_authorization_servers", |d| {
        d.approved_authorization_servers.as_ref()
    });
    if let Some(a) = policy {
        return judge(ID, "advertised authorization server(s)", &now, a, |x, o| {
            strip_slash(x) == strip_slash(o)
        });
    }
    let b = match baseline_for(f.ev, cx, ID, &json_list(&now)) {
        Ok(b) => b,
        Err(l) => return l,
    };
    if !b.has_leg(leg::PRM) {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the {} predates discovery recording (no {} records), so it holds no \
                 authorization-server list",
                describe_baseline(b),
                leg::PRM
            ),
        );
    }
    let Some(bf) = Facts::new(b) else {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!("the {} has no endpoint", describe_baseline(b)),
        );
    };
    let Some(then) = bf.advertised.as_ref().map(|a| a.entries.clone()) else {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the {} holds no protected-resource metadata document, so it recorded no \
                 authorization-server list",
                describe_baseline(b)
            ),
        );
    };
    let added: Vec<String> = now.iter().filter(|e| !then.contains(e)).cloned().collect();
    let removed: Vec<String> = then.iter().filter(|e| !now.contains(e)).cloned().collect();
    if !added.is_empty() {
        return SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "authorization server(s) {} advertised now but not in the {} ({}); re-approve with \
                 --update-baseline if the change is intended",
                json_list(&added),
                describe_baseline(b),
                json_list(&then)
            ),
        );
    }
    let removed = if removed.is_empty() {
        String::new()
    } else {
        crate::format_exact!("; no longer advertised: {}", json_list(&removed))
    };
    SubVerdict::new(
        ID,
        SubOutcome::Pass,
        crate::format_exact!(
            "advertised {} is within the {} ({}){removed}",
            json_list(&now),
            describe_baseline(b),
            json_list(&then)
        ),
    )
}

fn sub_g(f: &Facts<'_>) -> SubVerdict {
    const ID: &str = "g";
    if f.servers.is_empty() {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            "no authorization server is advertised, so no issuer to check",
        );
    }
    let selected_refused = f.selected().and_then(|(a, _)| {
        a.refused.as_ref().map(|r| {
            crate::format_exact!(
                "{}, record #{}: {}",
                crate::fmt::Line(&a.url),
                a.seq,
                refusal_text(r)
            )
        })
    });
    let mut parts = Vec::new();
    for s in &f.servers {
        let e = escape_line(&s.entry);
        if s.forms.is_none() {
            parts.push((
                SubOutcome::Fail,
                crate::format_exact!(
                    "{e}: the advertised entry is not an http(s) issuer URL, so no client can resolve it"
                ),
            ));
            continue;
        }
        match (s.resolved(), s.issuer()) {
            (Some((a, _)), Some(iss)) if iss == s.entry => parts.push((
                SubOutcome::Pass,
                crate::format_exact!(
                    "{e}: metadata at {} (record #{}) names issuer {e}",
                    crate::fmt::Line(&a.url),
                    a.seq
                ),
            )),
            (Some((a, _)), Some(iss)) => {
                let hint = if strip_slash(iss) == strip_slash(&s.entry) {
                    " (they differ only by a trailing slash; RFC 8414 §3.3 requires identical strings)"
                } else {
                    ""
                };
                let refused = a
                    .refused
                    .as_ref()
                    .map(|r| crate::format_exact!("; the collector refused it: {}", refusal_text(r)))
                    .unwrap_or_default();
                parts.push((
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{e}: metadata at {} (record #{}) names issuer \"{}\", not the advertised \
                         entry{hint}{refused}",
                        crate::fmt::Line(&a.url),
                        a.seq,
                        crate::fmt::Line(iss)
                    ),
                ));
            }
            _ if s.attempts.is_empty() && selected_refused.is_some() => parts.push((
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{e}: not fetched, because the collector refused the protected-resource metadata \
                     that advertises it ({})",
                    selected_refused.as_deref().unwrap_or_default()
                ),
            )),
            _ if s.attempts.iter().any(Attempt::guard_refused) => parts.push((
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{e}: not resolved, and the network guard refused some of its discovery forms \
                     ({})",
                    s.unresolved_why()
                ),
            )),
            _ => parts.push((
                SubOutcome::Error,
                crate::format_exact!("{e}: not resolved: {}", s.unresolved_why()),
            )),
        }
    }
    combine(ID, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Context;
    use crate::evidence::Bundle;

    use crate::checks::common::oauth::testing::*;

    // ----- oauth-discovery-validated

    #[test]
    fn na_without_oauth_fail_when_oauth_publishes_no_prm() {
        let o = grade(&OauthDiscoveryValidated, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert!(o.evidence.contains("no OAuth is offered"), "{o:?}");

        let ev = protected(vec![
            detect_401(&["Bearer realm=\"mcp\""]),
            get(leg::PRM, PRM_PATH, 404, ""),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        assert!(
            o.evidence
                .contains("publishes no protected-resource metadata"),
            "{o:?}"
        );

        // Basic-only 401 with no PRM: no OAuth offered.
        let ev = protected(vec![
            detect_401(&["Basic realm=\"x\""]),
            get(leg::PRM, PRM_PATH, 404, ""),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert!(o.evidence.contains("names no OAuth scheme"), "{o:?}");
    }

    #[test]
    fn unread_discovery_is_unknown() {
        let ev = protected(vec![
            detect_401(&[&challenge(PRM_PATH)]),
            failed(leg::PRM, PRM_PATH, ErrorKind::RefusedByGuard),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("network guard"), "{o:?}");
        assert_eq!(o.details["guard_refused_urls"], json!([PRM_PATH]));
        // An answer the collector did not use (DNS rebinding) is unread as well.
        let ev = protected(vec![
            detect_401(&[&challenge(PRM_PATH)]),
            get(leg::PRM, PRM_PATH, 200, &prm_doc(EP, json!([AS]), None)),
            skipped(
                &[leg::PRM],
                &format!("not used: the answer from {PRM_PATH} came from 10.0.0.1 (private), which the guard refuses for a loopback target"),
            ),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("not used"), "{o:?}");
    }

    #[test]
    fn plain_http_off_loopback_is_unknown() {
        let ep = "http://mcp.example.com/mcp";
        let mut ev = protected(vec![
            detect_401(&[&challenge(
                "http://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            )]),
            get(
                leg::PRM,
                "http://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                200,
                &prm_doc(ep, json!([AS]), None),
            ),
        ]);
        ev.payload_mut().target.endpoint = Some(ep.into());
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert_eq!(o.subs.len(), 1);
        assert!(sub_of(&o, "a")
            .note
            .contains("[tls-required] owns transport"));
    }

    #[test]
    fn f_reads_the_policy_s_approved_authorization_servers() {
        let ev = protected(lab_auth_records());
        let servers = |v: Vec<String>| {
            applied(crate::policy::Decisions {
                approved_authorization_servers: Some(v),
                ..Default::default()
            })
        };
        let o = grade_with(
            &OauthDiscoveryValidated,
            &ev,
            &servers(vec![format!("{AS}/")]),
        );
        let f = sub_of(&o, "f");
        assert_eq!(
            f.outcome,
            SubOutcome::Pass,
            "one trailing slash aside: {f:?}"
        );
        assert!(
            f.note
                .contains("approved_authorization_servers (policy.toml"),
            "{f:?}"
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        let o = grade_with(
            &OauthDiscoveryValidated,
            &ev,
            &servers(vec!["https://idp.example".into()]),
        );
        let f = sub_of(&o, "f");
        assert_eq!(f.outcome, SubOutcome::Fail, "{f:?}");
        assert!(f.note.contains(AS) && f.note.contains("not among"), "{f:?}");
    }

    #[test]
    fn lab_chain_passes_with_a_baseline_and_says_loopback() {
        let ev = protected(lab_auth_records());
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "no baseline yet: {o:#?}");
        assert_eq!(sub_of(&o, "f").outcome, SubOutcome::Unknown);
        for id in ["a", "b", "c", "d", "e", "g"] {
            assert_eq!(sub_of(&o, id).outcome, SubOutcome::Pass, "{id}: {o:#?}");
        }
        assert!(sub_of(&o, "a").note.contains("loopback"), "{o:?}");
        assert!(sub_of(&o, "b")
            .note
            .contains("path-inserted well-known URL itself"));
        assert!(sub_of(&o, "d").note.contains("equal"));

        let base = protected(lab_auth_records());
        let o = run(&OauthDiscoveryValidated, &ev, &with_baseline(&base));
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert_eq!(o.details["authorization_servers_advertised"], json!([AS]));
        assert_eq!(o.details["authorization_servers_resolved"], json!([AS]));
        assert_eq!(o.details["discovery_paths_answered"], json!([PRM_PATH]));

        let o = run(
            &OauthDiscoveryValidated,
            &ev,
            &Context {
                baseline: Some(&base),
                updating_baseline: true,
                ..Context::default()
            },
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(sub_of(&o, "f").note.contains("records the baseline"));
    }

    #[test]
    fn b_fails_when_two_documents_for_the_resource_differ() {
        let named = "http://127.0.0.1:8080/prm.json";
        let ev = protected(vec![
            detect_401(&[&challenge(named)]),
            get(leg::PRM, named, 200, &prm_doc(EP, json!([AS]), None)),
            get(
                leg::PRM,
                PRM_PATH,
                200,
                &prm_doc(EP, json!(["https://other.example"]), None),
            ),
            get(leg::PRM, PRM_ROOT, 404, ""),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]);
        let o = grade(&OauthDiscoveryValidated, &ev);
        let b = sub_of(&o, "b");
        assert_eq!(b.outcome, SubOutcome::Fail, "{o:#?}");
        assert!(b.note.contains("authorization_servers"), "{b:?}");
        assert_eq!(o.verdict, Verdict::Fail);

        // Same members in another order: equal.
        let reordered =
            json!({"bearer_methods_supported": ["header"], "authorization_servers": [AS],
                               "resource": EP})
            .to_string();
        let ev = protected(vec![
            detect_401(&[&challenge(named)]),
            get(leg::PRM, named, 200, &prm_doc(EP, json!([AS]), None)),
            get(leg::PRM, PRM_PATH, 200, &reordered),
            get(leg::PRM, PRM_ROOT, 404, ""),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]);
        let b = sub_of(&grade(&OauthDiscoveryValidated, &ev), "b").clone();
        assert_eq!(b.outcome, SubOutcome::Pass, "{b:?}");
        assert!(b.note.contains("equals"), "{b:?}");
    }

    #[test]
    fn c_d_e_rules() {
        // An https endpoint whose challenge names PRM served over plain http elsewhere.
        let ep = "https://mcp.example.com/mcp";
        let plain = "http://meta.example.com/prm";
        let mut ev = protected(vec![
            detect_401(&[&challenge(plain)]),
            get(leg::PRM, plain, 200, &prm_doc(ep, json!([AS]), None)),
            get(
                leg::PRM,
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                404,
                "",
            ),
            get(
                leg::PRM,
                "https://mcp.example.com/.well-known/oauth-protected-resource",
                404,
                "",
            ),
            get(leg::AS_META, AS_FORM, 200, &as_meta(AS)),
        ]);
        ev.payload_mut().target.endpoint = Some(ep.into());
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass);
        let c = sub_of(&o, "c");
        assert_eq!(c.outcome, SubOutcome::Fail, "{o:#?}");
        assert!(c.note.contains(plain), "{c:?}");

        let doc = |resource: Value, servers: Value| {
            let mut r = lab_auth_records();
            r[1] = get(
                leg::PRM,
                PRM_PATH,
                200,
                &json!({"resource": resource, "authorization_servers": servers}).to_string(),
            );
            protected(r)
        };
        let d = |ev: &Bundle| sub_of(&grade(&OauthDiscoveryValidated, ev), "d").clone();
        let l = d(&doc(json!("http://127.0.0.1:8080/other"), json!([AS])));
        assert_eq!(l.outcome, SubOutcome::Fail, "{l:?}");
        assert!(l.note.contains("neither"), "{l:?}");
        let l = d(&doc(json!("::not a uri::"), json!([AS])));
        assert_eq!(l.outcome, SubOutcome::Fail, "{l:?}");
        assert!(l.note.contains("not parsable"), "{l:?}");
        let l = d(&doc(json!(7), json!([AS])));
        assert_eq!(l.outcome, SubOutcome::Fail, "{l:?}");
        let l = d(&doc(json!("http://127.0.0.1:8080"), json!([AS])));
        assert_eq!(l.outcome, SubOutcome::Pass, "{l:?}");
        assert!(l.note.contains("hierarchical parent"), "{l:?}");
        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &json!({"authorization_servers": [AS]}).to_string(),
        );
        let l = d(&protected(r));
        assert_eq!(l.outcome, SubOutcome::Unknown, "{l:?}");

        let o = grade(&OauthDiscoveryValidated, &doc(json!(EP), json!(["", 3])));
        let e = sub_of(&o, "e");
        assert_eq!(e.outcome, SubOutcome::Fail, "{o:#?}");
        assert!(e.note.contains("2 element(s)"), "{e:?}");
        assert_eq!(sub_of(&o, "g").outcome, SubOutcome::Unknown);
    }

    #[test]
    fn f_fails_on_an_added_authorization_server() {
        let base = protected(lab_auth_records());
        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(EP, json!([AS, "https://new-as.example"]), None),
        );
        let ev = protected(r);
        let o = run(&OauthDiscoveryValidated, &ev, &with_baseline(&base));
        let f = sub_of(&o, "f");
        assert_eq!(f.outcome, SubOutcome::Fail, "{o:#?}");
        assert!(f.note.contains("https://new-as.example"), "{f:?}");
        assert!(f.note.contains("--update-baseline"), "{f:?}");

        // A baseline from before discovery was recorded decides nothing.
        let old = open_server(vec![detect_ok()]);
        let f = sub_of(
            &run(
                &OauthDiscoveryValidated,
                &protected(lab_auth_records()),
                &with_baseline(&old),
            ),
            "f",
        )
        .clone();
        assert_eq!(f.outcome, SubOutcome::Unknown, "{f:?}");
    }

    #[test]
    fn g_issuer_rules() {
        let mut r = lab_auth_records();
        r[3] = get(
            leg::AS_META,
            AS_FORM,
            200,
            &as_meta("http://127.0.0.1:9000/"),
        );
        let g = sub_of(&grade(&OauthDiscoveryValidated, &protected(r)), "g").clone();
        assert_eq!(g.outcome, SubOutcome::Fail, "{g:?}");
        assert!(g.note.contains("only by a trailing slash"), "{g:?}");

        let mut r = lab_auth_records();
        r[3] = failed(leg::AS_META, AS_FORM, ErrorKind::RefusedByGuard);
        r.push(failed(leg::AS_META, AS_OIDC, ErrorKind::RefusedByGuard));
        let o = grade(&OauthDiscoveryValidated, &protected(r));
        let g = sub_of(&o, "g");
        assert_eq!(g.outcome, SubOutcome::Unknown, "{o:#?}");
        assert!(g.note.contains("network guard"), "{g:?}");

        let mut r = lab_auth_records();
        r[3] = get(leg::AS_META, AS_FORM, 404, "");
        r.push(get(leg::AS_META, AS_OIDC, 200, r#"{"no_issuer": true}"#));
        let o = grade(&OauthDiscoveryValidated, &protected(r));
        let g = sub_of(&o, "g");
        assert_eq!(g.outcome, SubOutcome::Error, "{o:#?}");
        assert!(g.note.contains("2 form(s) tried"), "{g:?}");
        assert_eq!(o.verdict, Verdict::Error);

        // Resolved at the second form.
        let mut r = lab_auth_records();
        r[3] = get(leg::AS_META, AS_FORM, 404, "");
        r.push(get(leg::AS_META, AS_OIDC, 200, &as_meta(AS)));
        let g = sub_of(&grade(&OauthDiscoveryValidated, &protected(r)), "g").clone();
        assert_eq!(g.outcome, SubOutcome::Pass, "{g:?}");

        // No record for the advertised server at all.
        let mut r = lab_auth_records();
        r.truncate(3);
        let g = sub_of(&grade(&OauthDiscoveryValidated, &protected(r)), "g").clone();
        assert_eq!(g.outcome, SubOutcome::Error, "{g:?}");
        assert!(g.note.contains("no discovery form was attempted"), "{g:?}");

        // An entry that is not a URL.
        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(EP, json!(["not a url"]), None),
        );
        r[3] = failed(leg::AS_META, "not a url", ErrorKind::RefusedByGuard);
        let g = sub_of(&grade(&OauthDiscoveryValidated, &protected(r)), "g").clone();
        assert_eq!(g.outcome, SubOutcome::Fail, "{g:?}");
    }

    fn refused(mut r: Record, member: &str, expected: &str, served: &str, rule: &str) -> Record {
        if let Observation::Http(x) = &mut r.observation {
            x.refused = Some(Box::new(mcp_probe_schema::model::MetadataRefusal {
                member: member.into(),
                expected: expected.into(),
                served: json!(served),
                rule: rule.into(),
            }));
        }
        r
    }

    #[test]
    fn names_a_server_relying_on_the_2025_03_26_defaults() {
        let prm404 = |u: &str| get(leg::PRM, u, 404, "not found");
        let records = vec![
            detect_401(&["Bearer"]),
            prm404("http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"),
            prm404("http://127.0.0.1:8080/.well-known/oauth-protected-resource"),
            get(
                leg::AS_META,
                "http://127.0.0.1:8080/.well-known/oauth-authorization-server",
                404,
                "not found",
            ),
        ];
        let plain = grade(&OauthDiscoveryValidated, &protected(records.clone()));
        assert!(
            !plain.evidence.contains("unadvertised defaults"),
            "{plain:?}"
        );
        let mut ev = protected(records);
        if let Some(s) = ev.payload_mut().session.as_mut() {
            s.authorization_defaults = Some(mcp_probe_schema::model::AuthorizationDefaults {
                base: "http://127.0.0.1:8080".into(),
                authorization_endpoint: "http://127.0.0.1:8080/authorize".into(),
                token_endpoint: "http://127.0.0.1:8080/token".into(),
                registration_endpoint: "http://127.0.0.1:8080/register".into(),
                absent_in: vec![0, 1, 2],
            });
        }
        let o = grade(&OauthDiscoveryValidated, &ev);
        assert_eq!(o.verdict, plain.verdict, "{o:?}");
        assert!(
            o.evidence.contains("relies on unadvertised defaults")
                && o.evidence.contains("http://127.0.0.1:8080/authorize"),
            "{}",
            o.evidence
        );
        assert_eq!(
            o.details["authorization_defaults"]["token_endpoint"],
            "http://127.0.0.1:8080/token"
        );
    }

    #[test]
    fn names_the_collector_s_refusal_of_a_foreign_issuer() {
        let evil = "https://attacker.example.com";
        // An older bundle: the same document, no refusal recorded; graded as before.
        let mut r = lab_auth_records();
        r[3] = get(leg::AS_META, AS_FORM, 200, &as_meta(evil));
        let old = grade(&OauthDiscoveryValidated, &protected(r.clone()));
        let g = sub_of(&old, "g").clone();
        assert_eq!(g.outcome, SubOutcome::Fail, "{g:?}");
        assert!(!g.note.contains("collector refused"), "{g:?}");
        assert!(!old.evidence.contains("collector refused"), "{old:?}");
        assert!(old.details.get("collector_refused").is_none(), "{old:?}");

        r[3] = refused(r[3].clone(), "issuer", AS, evil, "RFC 8414 §3.3");
        let o = grade(&OauthDiscoveryValidated, &protected(r));
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        let g = sub_of(&o, "g").clone();
        assert_eq!(g.outcome, SubOutcome::Fail, "{g:?}");
        assert!(
            g.note.contains("the collector refused it")
                && g.note.contains("issuer mismatch")
                && g.note.contains("RFC 8414 §3.3"),
            "{g:?}"
        );
        assert!(
            o.evidence
                .contains("the collector refused 1 metadata document(s)")
                && o.evidence.contains(evil),
            "{o:?}"
        );
        let listed = o.details["collector_refused"].as_array().expect("listed");
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert!(listed[0].as_str().unwrap().contains(AS_FORM), "{listed:?}");
    }

    #[test]
    fn names_the_collector_s_refusal_of_a_foreign_resource() {
        let other = "https://attacker.example.com/mcp";
        // The selected document is refused: d fails and says so; the server it
        // advertises was never fetched, which g says instead of "no record".
        let mut r = lab_auth_records();
        r[1] = refused(
            get(leg::PRM, PRM_PATH, 200, &prm_doc(other, json!([AS]), None)),
            "resource",
            EP,
            other,
            "RFC 9728 §3.3",
        );
        r.truncate(3);
        let o = grade(&OauthDiscoveryValidated, &protected(r));
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        let d = sub_of(&o, "d").clone();
        assert_eq!(d.outcome, SubOutcome::Fail, "{d:?}");
        assert!(d.note.contains("the collector refused it"), "{d:?}");
        let g = sub_of(&o, "g").clone();
        assert_eq!(g.outcome, SubOutcome::Unknown, "{g:?}");
        assert!(g.note.contains("collector refused"), "{g:?}");

        // A refused document that is not the selected one fails d too.
        let mut r = lab_auth_records();
        r[2] = refused(
            get(leg::PRM, PRM_ROOT, 200, &prm_doc(other, json!([AS]), None)),
            "resource",
            EP,
            other,
            "RFC 9728 §3.3",
        );
        let o = grade(&OauthDiscoveryValidated, &protected(r));
        let d = sub_of(&o, "d").clone();
        assert_eq!(d.outcome, SubOutcome::Fail, "{d:?}");
        assert!(d.note.contains(PRM_ROOT), "{d:?}");
    }

    #[test]
    fn old_bundle_is_error_naming_the_leg() {
        let o = grade(
            &OauthDiscoveryValidated,
            &protected(vec![detect_401(&[&challenge(PRM_PATH)])]),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:#?}");
        assert!(o.evidence.contains("discovery.prm missing"), "{o:?}");
    }
}
