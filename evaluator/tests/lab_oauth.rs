//! The OAuth checks of Section 3 on real servers: the real `mcp-collect` logs in
//! headlessly (`--no-browser`, login and consent played by lab/oidc/browser.sh, as in
//! collector/tests/oauth_e2e.rs) against the lab's oidc-provider authorization servers
//! and py2-auth resource servers, and the evaluator library grades the bundles.
//!
//! Targets (lab/up.sh, lab/README.md):
//! * `LAB_RS`: py2-auth on `LAB_AS` (600 s JWT access tokens, aud = the resource).
//! * `LAB_RS_LONG`: py2-auth `--aud-contains` on `LAB_AS_LONG` (`ACCESS_TOKEN_TTL=7200`,
//!   `EXTRA_AUDIENCE=https://downstream.example/api`: aud = [resource, downstream]).
//! * `LAB_RS_BADPRM`: py2-auth `--prm-resource http://127.0.0.1:1/other` on `LAB_AS`: its
//!   metadata names a resource that does not cover the endpoint.
//! * `LAB_PY2`: no OAuth at all (every discovery.prm candidate answers 404).
//!
//! `mcp-collect` is a binary of another package, so it must be built first
//! (`scripts/test.sh` runs `cargo build --workspace --bins` before the tests). A missing
//! lab variable or binary fails these tests (`support::lab::require`). Checks are named
//! by rule id, their sub-verdicts by local name (`a`).

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::{Outcome, SubOutcome, Verdict};
use support::lab::{sub, Run};

fn collect(bin: &Path, home: &Path, url: &str) -> Run {
    support::lab::collect_headless(bin, home, url, &[])
}

const VARS: &[&str] = &[
    "LAB_RS",
    "LAB_RS_LONG",
    "LAB_RS_BADPRM",
    "LAB_RS_UNBOUND",
    "LAB_PY2",
];

struct Lab {
    /// One bundle per variable of `VARS`.
    runs: HashMap<&'static str, Run>,
    /// A second `LAB_RS` run from the credential cache: the first one is its baseline.
    rs_again: Run,
    _dir: tempfile::TempDir,
}

/// Every collection, once, shared by the tests of this file (the servers in parallel,
/// each with its own MCP_PROBE_HOME).
fn lab_runs() -> Option<&'static Lab> {
    static L: OnceLock<Option<Lab>> = OnceLock::new();
    L.get_or_init(|| {
        let (got, bin) = support::lab::require(VARS)?;
        let urls: Vec<(&'static str, String)> = VARS.iter().copied().zip(got).collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let runs: HashMap<&'static str, Run> = std::thread::scope(|s| {
            let handles: Vec<_> = urls
                .iter()
                .map(|(var, url)| {
                    let home = dir.path().join(var);
                    let bin = &bin;
                    (*var, s.spawn(move || collect(bin, &home, url)))
                })
                .collect();
            handles
                .into_iter()
                .map(|(v, h)| (v, h.join().expect("collection thread")))
                .collect()
        });
        let rs_url = &urls.iter().find(|(v, _)| *v == "LAB_RS").expect("LAB_RS").1;
        let rs_again = collect(&bin, &dir.path().join("LAB_RS"), rs_url);
        // Sanity: the logins happened where OAuth works, and nowhere else.
        assert!(runs["LAB_RS"].logged_in, "{}", runs["LAB_RS"].stderr);
        assert!(
            runs["LAB_RS_LONG"].logged_in,
            "{}",
            runs["LAB_RS_LONG"].stderr
        );
        assert!(
            runs["LAB_RS_UNBOUND"].logged_in,
            "{}",
            runs["LAB_RS_UNBOUND"].stderr
        );
        assert!(
            !rs_again.logged_in,
            "cached credential reused: {}",
            rs_again.stderr
        );
        // The collector refuses protected-resource metadata for a resource that does not
        // cover the endpoint (RFC 9728 §3.3, collector/src/oauth/metadata.rs
        // resource_refusal), so no login on BADPRM.
        let bad = &runs["LAB_RS_BADPRM"];
        assert!(
            !bad.logged_in && bad.stderr.contains("does not cover the endpoint"),
            "{}",
            bad.stderr
        );
        Some(Lab {
            runs,
            rs_again,
            _dir: dir,
        })
    })
    .as_ref()
}

fn grade_with(ev: &Bundle, rule: &str, cx: &Context<'_>) -> Outcome {
    support::rules::run(rule, ev, cx)
}

fn grade(var: &str, id: &str) -> Outcome {
    let l = lab_runs().expect("lab");
    grade_with(&l.runs[var].evidence, id, &Context::default())
}

fn note<'a>(o: &'a Outcome, id: &str) -> &'a str {
    o.subs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.note.as_str())
        .unwrap_or_else(|| panic!("no leg {id} in {o:?}"))
}

#[test]
fn lab_rs_short_lived_confined_token_passes() {
    let Some(l) = lab_runs() else { return };
    let ev = &l.runs["LAB_RS"].evidence;
    let rs = ev.endpoint();

    // `short-lived-tokens` PASS: the unauthenticated initialize got 401 whose WWW-Authenticate names
    // resource_metadata (the SDK's RequireAuthMiddleware), and the AS issues 600 s tokens
    // (expires_in 600, exp - iat = 600) within the 3600 s baseline; c/d only record the AS.
    let o = grade("LAB_RS", "short-lived-tokens");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(sub(&o, "a"), SubOutcome::Pass);
    assert!(
        note(&o, "a").contains("resource_metadata=")
            && note(&o, "a").contains("/.well-known/oauth-protected-resource/mcp"),
        "{}",
        note(&o, "a")
    );
    assert_eq!(sub(&o, "b"), SubOutcome::Pass);
    assert!(note(&o, "b").contains("600 s"), "{}", note(&o, "b"));

    // `no-token-passthrough` PASS: the token's aud is exactly the resource the PRM names (which equals the
    // endpoint), so no extra audience a passthrough could use.
    let o = grade("LAB_RS", "no-token-passthrough");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(o.details["extra_audiences"], serde_json::json!([]));
    assert_eq!(o.details["audiences"], serde_json::json!([rs]));

    // `oauth-discovery-validated`: the grader accepts plain http on a loopback host as a lab endpoint (sub-verdict a
    // and sub-verdict c pass, with that said), the document the 401 names is the one selected
    // (b), resource equals the canonical URI (d), one AS is advertised (e) and its metadata
    // names that exact issuer (g). Only sub-verdict f, change control of the AS list, needs a
    // baseline: without one it is unknown, so the first run is UNKNOWN ...
    let o = grade("LAB_RS", "oauth-discovery-validated");
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    for id in ["a", "b", "c", "d", "e", "g"] {
        assert_eq!(sub(&o, id), SubOutcome::Pass, "{id}: {o:?}");
    }
    assert!(note(&o, "a").contains("loopback"), "{}", note(&o, "a"));
    assert_eq!(sub(&o, "f"), SubOutcome::Unknown);
    // ... and a second run graded against the first as its baseline is PASS (same AS).
    let cx = Context {
        baseline: Some(ev),
        updating_baseline: false,
        ..Context::default()
    };
    let o = grade_with(&l.rs_again.evidence, "oauth-discovery-validated", &cx);
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");

    // `scopes-minimized` UNKNOWN: granted "mcp:tools" (the PRM scopes_supported the collector asks; a, b pass: no wildcard), PRM
    // scopes_supported ["mcp:tools"] (d pass), scopes discoverable (f pass); but sub-verdict e is
    // always unknown in this build (no out-of-scope call is made) and sub-verdict c needs a
    // baseline, so it cannot PASS; with the baseline only e stays unknown.
    let o = grade("LAB_RS", "scopes-minimized");
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    for id in ["a", "b", "d", "f"] {
        assert_eq!(sub(&o, id), SubOutcome::Pass, "{id}: {o:?}");
    }
    assert_eq!(sub(&o, "e"), SubOutcome::Unknown);
    let o = grade_with(&l.rs_again.evidence, "scopes-minimized", &cx);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert_eq!(sub(&o, "c"), SubOutcome::Pass, "{o:?}");
    assert_eq!(sub(&o, "e"), SubOutcome::Unknown);
}

#[test]
fn lab_rs_long_lived_extra_audience_token_fails() {
    if lab_runs().is_none() {
        return;
    }
    // `short-lived-tokens` FAIL: the challenge is the same as on LAB_RS (a passes), but the AS issues
    // 7200 s tokens (ACCESS_TOKEN_TTL=7200), beyond the 3600 s baseline.
    let o = grade("LAB_RS_LONG", "short-lived-tokens");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "a"), SubOutcome::Pass);
    assert_eq!(sub(&o, "b"), SubOutcome::Fail);
    assert!(note(&o, "b").contains("7200 s"), "{}", note(&o, "b"));

    // `no-token-passthrough` FAIL: the JWT aud is [resource, https://downstream.example/api]
    // (EXTRA_AUDIENCE), a token also valid for another service; the RS runs with
    // --aud-contains, so the collector's session with it worked.
    let o = grade("LAB_RS_LONG", "no-token-passthrough");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(
        o.details["extra_audiences"],
        serde_json::json!(["https://downstream.example/api"])
    );
    let ev = &lab_runs().expect("lab").runs["LAB_RS_LONG"].evidence;
    assert!(
        ev.authenticated(),
        "the RS accepted the extra-audience token"
    );
}

#[test]
fn lab_rs_badprm_resource_not_covering_endpoint_fails_oauth_discovery() {
    if lab_runs().is_none() {
        return;
    }
    // `oauth-discovery-validated` FAIL: the document at the path the 401 names says resource
    // http://127.0.0.1:1/other, neither the endpoint's canonical URI nor a hierarchical
    // parent of it (sub-verdict d). Everything else is as on LAB_RS.
    let o = grade("LAB_RS_BADPRM", "oauth-discovery-validated");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "d"), SubOutcome::Fail);
    assert!(
        note(&o, "d").contains("http://127.0.0.1:1/other"),
        "{}",
        note(&o, "d")
    );
    for id in ["a", "b", "c", "e"] {
        assert_eq!(sub(&o, id), SubOutcome::Pass, "{id}: {o:?}");
    }
    // The collector refused that document (RFC 9728 §3.3), so the authorization server it
    // advertises was never fetched: sub-verdict g says so instead of grading an issuer.
    assert!(
        note(&o, "d").contains("the collector refused it"),
        "{}",
        note(&o, "d")
    );
    assert_eq!(sub(&o, "g"), SubOutcome::Unknown, "{o:?}");
    assert!(o.evidence.contains("resource mismatch"), "{}", o.evidence);
    // The collector refused to ask a token for that resource, so the run holds none:
    // `no-token-passthrough` is UNKNOWN (the server offers OAuth, no audience to read), not N/A.
    let o = grade("LAB_RS_BADPRM", "no-token-passthrough");
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
}

#[test]
fn lab_py2_without_oauth_is_not_applicable() {
    if lab_runs().is_none() {
        return;
    }
    // py2 answers initialize without a challenge, the run holds no token, and every
    // discovery.prm candidate answered a clean 404: no OAuth is offered, so the checks
    // that govern OAuth are N/A (docs/checks.md, section 3).
    let ev = &lab_runs().expect("lab").runs["LAB_PY2"].evidence;
    assert!(
        ev.has_leg(mcp_probe_schema::vocab::leg::PRM),
        "discovery.prm recorded"
    );
    for id in [
        "no-token-passthrough",
        "oauth-discovery-validated",
        "scopes-minimized",
    ] {
        let o = grade("LAB_PY2", id);
        assert_eq!(o.verdict, Verdict::NotApplicable, "{id}: {o:?}");
        assert!(o.evidence.contains("no OAuth"), "{id}: {}", o.evidence);
    }
    // `short-lived-tokens` is not N/A: a remote server reached without a 401 fails sub-verdict a.
    let o = grade("LAB_PY2", "short-lived-tokens");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "a"), SubOutcome::Fail);
}

#[test]
fn audience_bound_tokens_leg_a() {
    if lab_runs().is_none() {
        return;
    }
    // Sub-verdict a PASS: aud is exactly the canonical resource.
    let o = grade("LAB_RS", "audience-bound-tokens");
    assert_eq!(sub(&o, "a"), SubOutcome::Pass, "{o:?}");
    // Sub-verdict a passes when the canonical URI is AMONG the audiences, so the extra audience
    // of LAB_RS_LONG does not fail it (`no-token-passthrough` owns extra audiences).
    let o = grade("LAB_RS_LONG", "audience-bound-tokens");
    assert_eq!(sub(&o, "a"), SubOutcome::Pass, "{o:?}");
}

#[test]
fn unbound_audience_fails_no_token_passthrough_and_audience_bound_tokens() {
    if lab_runs().is_none() {
        return;
    }
    // LAB_AS_UNBOUND signs every access token for https://other.example/api instead of
    // the resource asked for, and LAB_RS_UNBOUND checks no audience: the token the run
    // held is not bound to this server and the server accepted it anyway.
    let o = grade("LAB_RS_UNBOUND", "no-token-passthrough");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(
        o.evidence.contains("https://other.example/api"),
        "{}",
        o.evidence
    );
    let o = grade("LAB_RS_UNBOUND", "audience-bound-tokens");
    assert_eq!(sub(&o, "a"), SubOutcome::Fail, "{o:?}");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
}
