//! `audience-bound-tokens` and `audience-refusals-alerted` against an authorization server that ignores the RFC 8707 `resource`
//! parameter (`LAB_RS_NORESOURCE`: py2-auth on `LAB_AS_NORESOURCE`, lab/oidc/as.js with
//! `IGNORE_RESOURCE=1`; lab/README.md). The real `mcp-collect` logs in headlessly
//! (`--no-browser`, lab/oidc/browser.sh plays the user), and its foreign-mint grant naming
//! `https://cis-probe.invalid/wrong-audience` is answered with a token for the audited
//! resource, which the resource server rightly accepts. Nothing foreign was presented:
//! neither check may FAIL, and both say the authorization server ignored `resource`.
//!
//! `mcp-collect` must be built first (`cargo build --workspace --bins`). A missing lab
//! variable or binary fails this test (`support::lab::require`).

mod support;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::verdict::{SubOutcome, Verdict};
use mcp_probe_schema::vocab::leg::FOREIGN_MINT;
use serde_json::json;
use support::lab::sub;
use support::rules::run;

const VAR: &str = "LAB_RS_NORESOURCE";

#[test]
fn an_authorization_server_ignoring_resource_fails_neither_audience_rule() {
    let Some((url, bin)) = support::lab::require_one(VAR) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let r = support::lab::collect_headless(&bin, dir.path(), &url, &[]);
    assert!(r.logged_in, "{}", r.stderr);
    let ev = &r.evidence;

    // The collector recorded what was minted: a JWT for the audited resource, asked for
    // the wrong audience.
    let mint = ev
        .payload
        .minted_tokens
        .iter()
        .find(|m| m.leg == FOREIGN_MINT.as_str())
        .unwrap_or_else(|| panic!("no mint facts: {:?}", ev.payload.minted_tokens));
    assert_eq!(
        mint.requested_resource.as_deref(),
        Some("https://cis-probe.invalid/wrong-audience")
    );
    let claims = mint.token.jwt_claims.as_ref().expect("a JWT");
    assert_eq!(claims["aud"], json!(url), "{claims}");
    assert_eq!(mint.login_resource.as_deref(), Some(url.as_str()));

    let cx = Context::default();
    let o = run("audience-bound-tokens", ev, &cx);
    assert_ne!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "b"), SubOutcome::Unknown, "{o:?}");
    let b = &o.subs.iter().find(|l| l.id == "b").expect("leg b").note;
    assert!(
        b.contains("the authorization server ignored the RFC 8707 resource parameter")
            && b.contains("no foreign token was presented"),
        "{b}"
    );
    // The server did accept the token: that is what made sub-verdict b FAIL before.
    assert!(b.contains("HTTP 200"), "{b}");
    assert_eq!(o.details["minted_binding"], json!("audited_resource"));

    let o = run("audience-refusals-alerted", ev, &cx);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence
            .contains("the authorization server ignored the RFC 8707 resource parameter"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["wrong_audience_status"], json!(200));
}
