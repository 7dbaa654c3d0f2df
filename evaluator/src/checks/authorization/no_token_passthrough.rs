//! Rule `no-token-passthrough`: token passthrough to downstream APIs forbidden
//! (docs/checks.md, under the row this rule grades): every audience of the tokens the run held is this resource (the
//! protected-resource metadata `resource` when it covers the endpoint's canonical URI,
//! else that URI). N/A only when the absence of OAuth was observed.
//! `audience-bound-tokens` grades behind this rule's gate.

use mcp_probe_schema::model::Era;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::oauth::facts::Facts;
use crate::checks::common::oauth::gate::{combine, json_list, legs_map, DISCOVERY};
use crate::checks::common::oauth::tokens::{
    audiences, claims, dedup, is_url_audience, token_label,
};
use crate::checks::common::oauth::uris::{canonical_resource, resource_covers, strip_slash};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, Verdict};

/// Token passthrough to downstream APIs forbidden.
#[derive(Debug)]
pub struct NoTokenPassthrough;

/// What this rule cannot reach.
const REDUCTION: &str = "the token's audience stands in for \"no passthrough\": whether the server \
     forwards a client's token downstream is not observable from outside; an extra audience may be a \
     genuine downstream API the token was also issued for (the token alone cannot say); opaque tokens are \
     not introspected";

/// What `no-token-passthrough` reports besides its legs, in report order. Without a token
/// only `legs` (empty) and `extra_audiences` (null) are reported.
#[derive(Serialize)]
struct NoTokenPassthroughFacts {
    legs: Map<String, Value>,
    /// Audiences of the tokens beyond the canonical resource.
    extra_audiences: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    audiences: Option<Vec<String>>,
    /// The resource the audiences are compared with (`audience-bound-tokens` reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    canonical_resource: Option<String>,
}

impl Check for NoTokenPassthrough {
    fn id(&self) -> &'static str {
        "no-token-passthrough"
    }

    fn legs(&self, era: Option<Era>) -> Legs {
        // The PRM `resource` replaces the canonical URI; "no OAuth" needs the observed
        // absence of metadata.
        DISCOVERY.legs(era)
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let f = match DISCOVERY.prelude(ev) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let seqs = f.seqs();
        let tokens = f.tokens();
        if tokens.is_empty() {
            let (v, text) = without_token(&f);
            return Outcome::single(v, text, REDUCTION)
                .with_records(seqs)
                .with_facts(&NoTokenPassthroughFacts {
                    legs: Map::new(),
                    extra_audiences: None,
                    audiences: None,
                    canonical_resource: None,
                });
        }
        let Some(endpoint_uri) = canonical_resource(&f.endpoint) else {
            return Outcome::single(
                Verdict::Error,
                crate::format_exact!(
                    "the endpoint {} is not a hierarchical URL, so it has no canonical resource URI",
                    crate::fmt::Line(&f.endpoint)
                ),
                REDUCTION,
            );
        };
        let prm_resource = f
            .selected()
            .and_then(|(a, d)| d.get("resource").and_then(Value::as_str).map(|r| (a, r)));
        let (canonical, basis) = match prm_resource {
            Some((a, r)) if resource_covers(r, &endpoint_uri) == Some(true) => (
                r.to_string(),
                crate::format_exact!(
                    "the protected-resource metadata resource at {}, which covers the endpoint's \
                     canonical URI {}",
                    crate::fmt::Line(&a.url),
                    crate::fmt::Line(&endpoint_uri)
                ),
            ),
            _ => (
                endpoint_uri.clone(),
                "the endpoint's canonical URI".to_string(),
            ),
        };
        let mut parts = Vec::new();
        let mut extras_all: Vec<String> = Vec::new();
        let mut auds_all: Vec<String> = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let label = token_label(i, t, tokens.len());
            let Some(c) = claims(t) else {
                parts.push((
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "{label} is opaque (not a JWT), so its audience is not readable"
                    ),
                ));
                continue;
            };
            let auds = audiences(Some(c));
            if auds.is_empty() {
                parts.push((
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "{label} is a JWT without an aud claim naming any audience"
                    ),
                ));
                continue;
            }
            auds_all.extend(auds.iter().cloned());
            let extras: Vec<String> = auds
                .iter()
                .filter(|a| strip_slash(a) != strip_slash(&canonical))
                .cloned()
                .collect();
            let foreign: Vec<String> = extras
                .iter()
                .filter(|a| is_url_audience(a))
                .cloned()
                .collect();
            if !extras.is_empty() && foreign.is_empty() {
                // Only identifiers that are not web addresses (Microsoft Entra ID's
                // application id, an API identifier): they may name this very server.
                parts.push((
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "{label} names, besides this resource or instead of it, only audience(s) that \
                         are not web addresses: {} (aud {}, resource {} from {basis}); an application \
                         id or API identifier may be this server's own, which the token alone cannot \
                         tell",
                        json_list(&extras),
                        json_list(&auds),
                        crate::fmt::Line(&canonical)
                    ),
                ));
                extras_all.extend(extras);
                continue;
            }
            if extras.is_empty() {
                parts.push((
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "{label} is confined to this resource: aud {} equals {} ({basis})",
                        json_list(&auds),
                        crate::fmt::Line(&canonical)
                    ),
                ));
            } else {
                parts.push((
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{label} carries audience(s) beyond this resource: {} (aud {}, resource {} from \
                         {basis}); a token also valid for another service is what passthrough needs, \
                         though the token alone cannot say whether the extra is a genuine downstream API",
                        json_list(&extras),
                        json_list(&auds),
                        crate::fmt::Line(&canonical)
                    ),
                ));
                extras_all.extend(extras);
            }
        }
        let l = combine("a", parts);
        let legs = vec![l];
        Outcome::from_subs(legs.clone(), REDUCTION)
            .with_records(seqs)
            .with_facts(&NoTokenPassthroughFacts {
                legs: legs_map(&legs),
                extra_audiences: Some(dedup(extras_all)),
                audiences: Some(dedup(auds_all)),
                canonical_resource: Some(canonical),
            })
    }
}

/// The verdict and evidence when the run held no token: UNKNOWN when the server offers
/// OAuth or discovery was not read, N/A when the absence of OAuth was observed.
fn without_token(f: &Facts<'_>) -> (Verdict, String) {
    let signals = f.signals();
    let unread = f.prm_unread();
    if !signals.is_empty() {
        (
            Verdict::Unknown,
            crate::format_exact!(
                "the server offers OAuth ({}), but the run holds no access token, so there is \
                 no audience to read",
                signals.join("; ")
            ),
        )
    } else if !unread.is_empty() {
        (
            Verdict::Unknown,
            crate::format_exact!(
                "no token is held, and whether the server offers OAuth is undecided: \
                 protected-resource metadata discovery was not read ({})",
                unread.join(", ")
            ),
        )
    } else {
        (
            Verdict::NotApplicable,
            crate::format_exact!(
                "no OAuth is offered: {}; there is no token whose audience could be confined",
                f.absence()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::checks::common::oauth::testing::*;

    // ----- no-token-passthrough

    #[test]
    fn is_na_without_oauth_and_unknown_when_discovery_was_not_read() {
        let o = grade(&NoTokenPassthrough, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert!(o.evidence.contains("no OAuth is offered"), "{o:?}");
        assert!(o.evidence.contains("clean 404"), "{o:?}");

        for bad in [
            failed(leg::PRM, PRM_ROOT, ErrorKind::RefusedByGuard),
            failed(leg::PRM, PRM_ROOT, ErrorKind::Timeout),
            get(leg::PRM, PRM_ROOT, 503, "busy"),
            get(leg::PRM, PRM_ROOT, 200, "<html>"),
        ] {
            let ev = open_server(vec![detect_ok(), get(leg::PRM, PRM_PATH, 404, ""), bad]);
            let o = grade(&NoTokenPassthrough, &ev);
            assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
            assert!(o.evidence.contains("undecided"), "{o:?}");
        }
        // A candidate never attempted is unread too.
        let ev = open_server(vec![detect_ok(), get(leg::PRM, PRM_PATH, 404, "")]);
        let o = grade(&NoTokenPassthrough, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("never attempted"), "{o:?}");
    }

    #[test]
    fn unknown_when_oauth_is_offered_but_no_token_is_held() {
        let o = grade(&NoTokenPassthrough, &protected(lab_auth_records()));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("holds no access token"), "{o:?}");
        assert!(o.evidence.contains("auth_required"), "{o:?}");
    }

    #[test]
    fn reads_the_audience() {
        let o = grade(
            &NoTokenPassthrough,
            &lab_auth_with_token(opaque(Some(600), None)),
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("opaque"), "{o:?}");

        let o = grade(
            &NoTokenPassthrough,
            &lab_auth_with_token(jwt_token(json!({"sub": "a"}), None, None)),
        );
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(o.evidence.contains("without an aud"), "{o:?}");

        let o = grade(
            &NoTokenPassthrough,
            &lab_auth_with_token(jwt_token(lab_claims(), None, None)),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(o.evidence.contains("confined to this resource"), "{o:?}");
        assert_eq!(o.details["extra_audiences"], json!([]));

        let claims = json!({"aud": [format!("{EP}/"), "https://api.downstream.example/"]});
        let o = grade(
            &NoTokenPassthrough,
            &lab_auth_with_token(jwt_token(claims, None, None)),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        assert!(
            o.evidence.contains("https://api.downstream.example/"),
            "{o:?}"
        );
        assert!(o.evidence.contains("beyond this resource"), "{o:?}");
        assert_eq!(
            o.details["extra_audiences"],
            json!(["https://api.downstream.example/"])
        );

        // An application id (Microsoft Entra ID names the application, not its URL): it
        // may be this server's own, so not a FAIL; a web address beside it still is.
        let guid = "6731de76-14a6-49ae-97bc-6eba6914391e";
        let o = grade(
            &NoTokenPassthrough,
            &lab_auth_with_token(jwt_token(json!({"aud": guid}), None, None)),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("not web addresses"), "{o:?}");
        assert_eq!(o.details["extra_audiences"], json!([guid]));
        let o = grade(
            &NoTokenPassthrough,
            &lab_auth_with_token(jwt_token(
                json!({"aud": [guid, "https://api.downstream.example/"]}),
                None,
                None,
            )),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
    }

    #[test]
    fn uses_the_prm_resource_when_it_covers_the_endpoint() {
        let parent = "http://127.0.0.1:8080/";
        let mut records = lab_auth_records();
        records[1] = get(leg::PRM, PRM_PATH, 200, &prm_doc(parent, json!([AS]), None));
        let mut ev = protected(records);
        ev.payload_mut().tokens = vec![jwt_token(json!({"aud": parent}), None, None)];
        let o = grade(&NoTokenPassthrough, &ev);
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert!(o.evidence.contains("covers the endpoint"), "{o:?}");
        assert_eq!(o.details["canonical_resource"], parent);
    }

    #[test]
    fn old_bundle_without_discovery_is_error_naming_the_leg() {
        let o = grade(&NoTokenPassthrough, &open_server(vec![detect_ok()]));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("discovery.prm missing"), "{o:?}");
        let o = grade(&NoTokenPassthrough, &evidence(None, vec![]));
        assert!(o.evidence.contains("no MCP endpoint"), "{o:?}");
    }
}
