//! The OAuth reading shared by `short-lived-tokens`, `no-token-passthrough`,
//! `audience-bound-tokens`, `oauth-discovery-validated`, `scopes-minimized`,
//! `static-client-safeguards` and `audience-refusals-alerted`.
//!
//! Nothing here sends anything: the collector records, the checks decide. The checks read
//!
//! * the unauthenticated challenge (`challenge`): the 401 on `endpoint.detect` when the
//!   run presented no credential, else the `2.3.unauthenticated` leg (the one request
//!   sent without the run's credential); its `WWW-Authenticate` is parsed from the raw
//!   bytes by [`mcp_probe_schema::www_authenticate::parse`] (RFC 9110 §11.6.1; never
//!   panics, so a non-ASCII byte cannot turn `short-lived-tokens` into ERROR);
//! * `discovery.prm`: one GET per RFC 9728 candidate URL, and `discovery.as`: the RFC 8414
//!   / OIDC forms per advertised authorization server (at most
//!   [`mcp_probe_schema::vocab::well_known::AS_LIST_CAP`]) (`discovery`, `uris`);
//! * `payload.tokens`: facts about the access tokens the run held, never the tokens
//!   (`tokens`);
//! * `payload.minted_tokens`: facts about the token the wrong-audience grant of
//!   `audience-bound-tokens` (sub-verdict b) minted (`mint`: does it really name another
//!   resource? read by `audience-bound-tokens` and `audience-refusals-alerted`).
//!
//! "Offers OAuth" is any of: the endpoint refused an unauthenticated request with 401/403
//! (unless every challenge names a non-OAuth scheme only, such as `Basic`), a token is
//! held, a protected-resource metadata (PRM) document was parsed, AS metadata resolved,
//! or the challenge names a `scope`. A server that observably offers none of these gets
//! N/A on `no-token-passthrough`, `oauth-discovery-validated` and `scopes-minimized`, but
//! only when the absence was observed: every PRM candidate answered a clean 404. A guard
//! refusal, a transport failure, a 5xx or a 200 that is not a JSON object leaves discovery
//! *unread*, and the verdict is UNKNOWN, never N/A. Sub-verdict a of `short-lived-tokens`
//! fails on such a server: an unauthenticated request reached a response.
//!
//! The discovery legs are needed only once an endpoint answered (`gate::Gated::prelude`: a
//! bundle without an endpoint is ERROR "no MCP endpoint"); a bundle from a collector that
//! predates discovery is ERROR naming the missing leg, with the runner's wording.

pub(crate) mod challenge;
pub(crate) mod discovery;
pub(crate) mod facts;
pub(crate) mod gate;
pub(crate) mod mint;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod tokens;
pub(crate) mod uris;

#[cfg(test)]
mod tests {
    use crate::check::Check;
    use crate::checks::authorization::{
        no_token_passthrough::NoTokenPassthrough,
        oauth_discovery_validated::OauthDiscoveryValidated, scopes_minimized::ScopesMinimized,
        short_lived_tokens::ShortLivedTokens,
    };
    use crate::checks::common::oauth::testing::*;
    use crate::checks::common::oauth::tokens::{admin_tier, observed_scopes, wildcards};
    use crate::checks::common::oauth::uris::{canonical_resource, resource_covers};
    use crate::evidence::Bundle;
    use crate::verdict::Outcome;

    // ----- resource URIs and token scopes

    #[test]
    fn resource_coverage_follows_the_sdk_rule() {
        assert_eq!(
            resource_covers("https://a.example/mcp", "https://a.example/mcp"),
            Some(true)
        );
        assert_eq!(
            resource_covers("https://a.example/", "https://a.example/mcp"),
            Some(true)
        );
        assert_eq!(
            resource_covers("https://a.example/api", "https://a.example/api123"),
            Some(false)
        );
        assert_eq!(
            resource_covers("https://a.example:8443/", "https://a.example/mcp"),
            Some(false)
        );
        assert_eq!(
            resource_covers("http://a.example/", "https://a.example/mcp"),
            Some(false)
        );
        assert_eq!(resource_covers("not a uri", "https://a.example/mcp"), None);
        assert_eq!(
            canonical_resource("HTTPS://A.example:443/mcp#frag").as_deref(),
            Some("https://a.example/mcp")
        );
    }

    #[test]
    fn scopes_keep_unobserved_apart_from_observed_empty() {
        let c = json!({"scope": "a b", "scp": ["x"]});
        let c = c.as_object();
        assert_eq!(observed_scopes(Some(""), c), Some(vec![]));
        assert_eq!(observed_scopes(None, c), Some(vec!["a".into(), "b".into()]));
        let scp = json!({"scp": ["x", 3, "y"]});
        assert_eq!(
            observed_scopes(None, scp.as_object()),
            Some(vec!["x".into(), "y".into()])
        );
        let other = json!({"scope": 5});
        assert_eq!(observed_scopes(None, other.as_object()), None);
        assert_eq!(observed_scopes(None, None), None);
        let s: Vec<String> = [
            "*",
            "admin:*",
            "a:b:*",
            "read:write",
            "admin",
            "administrator",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(wildcards(&s), ["*", "admin:*", "a:b:*"]);
        assert_eq!(admin_tier(&s), ["admin:*", "admin"]);
    }

    // ----- the lab's bundles

    /// The ids of the legs that are unknown.
    fn unknown(o: &Outcome) -> Vec<&str> {
        o.subs
            .iter()
            .filter(|l| l.outcome == SubOutcome::Unknown)
            .map(|l| l.id.as_str())
            .collect()
    }

    #[test]
    fn lab_oauth_run_predictions() {
        // py2-auth after a login: JWT from oidc-provider (600 s, aud = the resource,
        // scope "mcp:tools mcp:read").
        let ev = lab_auth_with_token(jwt_token(
            lab_claims(),
            Some(600),
            Some("mcp:tools mcp:read"),
        ));
        assert_eq!(grade(&ShortLivedTokens, &ev).verdict, Verdict::Pass);
        assert_eq!(grade(&NoTokenPassthrough, &ev).verdict, Verdict::Pass);
        let o = grade(&ScopesMinimized, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert_eq!(unknown(&o), ["c", "e"]);
        let o = run(&ScopesMinimized, &ev, &with_baseline(&ev));
        assert_eq!(unknown(&o), ["e"]);
    }

    /// Every bundle in examples/. The no-OAuth servers (all but py2-auth):
    /// `short-lived-tokens` FAIL (an unauthenticated request reached a response);
    /// `no-token-passthrough`, `oauth-discovery-validated` and `scopes-minimized` N/A once
    /// the bundle records discovery (the lab servers answer 404 at both well-known
    /// URLs), ERROR naming discovery.prm before. py2-auth (401 naming
    /// resource_metadata, no token): `short-lived-tokens` UNKNOWN (a pass, b unknown); the
    /// others ERROR before discovery is recorded, and never N/A after (it offers OAuth).
    #[test]
    fn lab_bundles() {
        let mut seen = 0;
        for path in examples() {
            seen += 1;
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let bytes = std::fs::read(&path).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            let ev = Bundle::new(path.display().to_string(), v);
            let outcomes: Vec<Outcome> = [
                &ShortLivedTokens as &dyn Check,
                &NoTokenPassthrough,
                &OauthDiscoveryValidated,
                &ScopesMinimized,
            ]
            .iter()
            .map(|c| grade(*c, &ev))
            .collect();
            for o in &outcomes {
                assert!(!o.evidence.contains("check raised"), "{name}: {o:#?}");
            }
            let recorded = ev.has_leg(leg::PRM);
            if name == "py2-auth-login.mcpev" {
                // After a headless login: 401 naming resource_metadata and a 600 s token
                // (`short-lived-tokens` PASS); the token's aud is exactly the resource
                // (`no-token-passthrough` PASS).
                assert_eq!(
                    outcomes[0].verdict,
                    Verdict::Pass,
                    "{name}: {:#?}",
                    outcomes[0]
                );
                assert_eq!(
                    outcomes[1].verdict,
                    Verdict::Pass,
                    "{name}: {:#?}",
                    outcomes[1]
                );
                continue;
            }
            if name == "py2-auth.mcpev" {
                assert_eq!(
                    outcomes[0].verdict,
                    Verdict::Unknown,
                    "{name}: {:#?}",
                    outcomes[0]
                );
                assert_eq!(sub_of(&outcomes[0], "a").outcome, SubOutcome::Pass);
                for o in &outcomes[1..] {
                    if recorded {
                        assert_ne!(o.verdict, Verdict::NotApplicable, "{name}: {o:#?}");
                    } else {
                        assert_eq!(o.verdict, Verdict::Error, "{name}: {o:#?}");
                        assert!(o.evidence.contains("discovery.prm"), "{name}: {o:?}");
                    }
                }
                if recorded {
                    assert_eq!(outcomes[1].verdict, Verdict::Unknown, "{name}");
                }
                continue;
            }
            assert_eq!(
                outcomes[0].verdict,
                Verdict::Fail,
                "{name}: {:#?}",
                outcomes[0]
            );
            assert!(
                outcomes[0].evidence.contains("reached a response"),
                "{name}"
            );
            for o in &outcomes[1..] {
                if recorded {
                    assert_eq!(o.verdict, Verdict::NotApplicable, "{name}: {o:#?}");
                } else {
                    assert_eq!(o.verdict, Verdict::Error, "{name}: {o:#?}");
                    assert!(
                        o.evidence.contains("discovery.prm missing"),
                        "{name}: {o:?}"
                    );
                }
            }
        }
        assert!(seen >= 12, "only {seen} example bundles");
    }
}
