//! `static-client-safeguards` (confused deputy) and sub-verdict e of `scopes-minimized` (the
//! operator's out-of-scope call) on the shared
//! lab's py2-auth + oidc-provider pair (`LAB_RS`): the real `mcp-collect` logs in
//! headlessly (`--no-browser`, lab/oidc/browser.sh plays the user, as in lab_oauth.rs)
//! and the evaluator library grades the bundle.
//!
//! The lab AS is on 127.0.0.1 like the resource server but on another port. The
//! `static-client-safeguards` gate compares host:port (another port is another origin and another service), so it
//! opens: two scratch clients are registered at the AS and their authorization requests
//! are answered with oidc-provider's own interaction page (a 303 to `/interaction/<uid>`
//! carrying no onward `client_id`): no static client id is in use, so the rule is N/A
//! with that reason, after live registrations.
//!
//! `scopes-minimized` sub-verdict e: the inputs name `whoami` as `scope_probe_tool`; it is in fact inside the grant
//! (py2-auth requires `mcp:tools` for every call, and the token has it), so the call
//! executes and sub-verdict e fails: the branch an operator's wrong claim (or a server that does
//! not enforce scopes) produces.

mod support;

use std::path::Path;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::{SubOutcome, Verdict};
use mcp_probe_schema::vocab::leg;
use support::rules::run;

fn collect(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Bundle {
    support::lab::collect_headless(bin, home, url, args).evidence
}

#[test]
fn lab_rs_deputy_gate_opens_and_finds_no_static_client_id_and_scope_probe_executes() {
    let Some((url, bin)) = support::lab::require_one("LAB_RS") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = dir.path().join("inputs.json");
    std::fs::write(
        &inputs,
        serde_json::json!({ url.as_str(): {"scope_probe_tool": "whoami", "scope_probe_arguments": {}} }).to_string(),
    )
    .expect("inputs");
    let ev = collect(
        &bin,
        &dir.path().join("home"),
        &url,
        &["--inputs", inputs.to_str().expect("utf-8 path")],
    );
    assert!(ev.authenticated(), "the run logged in");
    assert!(
        ev.has_leg(leg::DEPUTY_REGISTER),
        "mcp-collect recorded no static-client-safeguards legs"
    );

    // The collector registered two scratch clients (never cached) and sent both
    // authorization requests; oidc-provider answered each with its interaction page.
    let regs: Vec<_> = ev.exchanges(leg::DEPUTY_REGISTER).collect();
    assert_eq!(regs.len(), 2, "two scratch registrations");
    for r in &regs {
        assert_eq!(r.status(), Some(201), "open DCR answers 201");
        assert!(r
            .http
            .request
            .headers
            .iter()
            .all(|h| !h.name.eq_ignore_ascii_case("authorization")));
    }
    let auths: Vec<_> = ev.exchanges(leg::DEPUTY_AUTHORIZE).collect();
    assert_eq!(auths.len(), 2);
    for a in &auths {
        assert_eq!(a.status(), Some(303), "{:?}", a.header("location"));
        assert!(a
            .header("location")
            .is_some_and(|l| l.contains("/interaction/")));
    }
    assert!(ev
        .skipped(leg::DEPUTY_REDIRECT)
        .is_some_and(|r| r.contains("no shared onward client_id")));
    // No scratch client reached the credential cache: only the working client is there.
    let creds = dir.path().join("home/credentials");
    let cached: Vec<String> = std::fs::read_dir(&creds)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        cached.iter().all(|c| !c.contains("scratch client")),
        "scratch clients are never cached"
    );

    let o = run("static-client-safeguards", &ev, &Context::default());
    assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
    assert!(
        o.evidence.contains("not one shared static client id"),
        "{}",
        o.evidence
    );
    assert_eq!(
        o.details["downstream_client_ids"],
        serde_json::json!([null, null])
    );
    assert_eq!(o.details["registrations"].as_array().map(Vec::len), Some(2));

    // scopes-minimized sub-verdict e: whoami ran (the token's grant covers it), so the operator's claim fails.
    let x = ev
        .exchanges(leg::SCOPE_PROBE_CALL)
        .next()
        .expect("the scope probe's call recorded");
    let body: serde_json::Value = x.request_json().expect("json body");
    assert_eq!(body["method"], "tools/call");
    assert_eq!(body["params"]["name"], "whoami");
    assert!(body["params"]["_meta"]["progressToken"].is_string());
    let o = run("scopes-minimized", &ev, &Context::default());
    let e = o
        .subs
        .iter()
        .find(|l| l.id == "e")
        .expect("scopes-minimized leg e");
    assert_eq!(e.outcome, SubOutcome::Fail, "{}", e.note);
    assert!(e.note.contains("executed"), "{}", e.note);
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
}
