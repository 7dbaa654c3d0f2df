//! Lab tests of the audience legs (collector/src/legs_audience.rs: 3.3.1b, 3.3.1c, the
//! pair 7.2.1 reads) against the `oidc-provider` AS and the py2-auth resource server
//! (the lab's OAuth servers). The token is obtained the way collector/tests/oauth.rs does: a real
//! `Login` whose browser step `lab/oidc/browser.sh URL --deliver` plays.
//!
//! What the lab shows (observed in these tests):
//! * the AS refuses a refresh grant naming `https://cis-probe.invalid/wrong-audience` with
//!   400 `invalid_target` (the conforming answer: 3.3.1b unknown "refused to mint");
//! * it also refuses a refresh grant naming a loopback resource the original
//!   authorization did not grant; so for the minted case the test's "user" grants a
//!   second resource (`resource` added to the authorization URL), and the operator input
//!   `foreign_resource` names it: the AS then mints a token for it and rotates the refresh
//!   token, the collector restores the chain (a grant for the audited resource, cached),
//!   and the RS refuses the foreign token with 401 while it accepts the control.

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_probe_collector::journal::Journal;
use mcp_probe_collector::mcp::{Ending, Probe};
use mcp_probe_collector::oauth::{Login, Obtained};
use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record};
use mcp_probe_schema::redact::{decode_jwt, Redactor};
use mcp_probe_schema::vocab::leg;
use serde_json::{json, Value};
use support::oauth_lab::{
    contains, http, obtain_interactive, records_of, scratch, seal_with_test_key, status, Lab,
};

fn journal(dir: &Path, endpoint: &str, inputs: Option<Value>) -> Arc<Mutex<Journal>> {
    let ev = mcp_probe_schema::testkit::evidence(endpoint, Vec::new());
    let mut j = Journal::create(dir, "audience", ev.target, ev.run.options, Redactor::new())
        .expect("journal");
    j.set_inputs(inputs);
    Arc::new(Mutex::new(j))
}

fn body_json(r: &Record) -> Value {
    match &http(r).outcome {
        HttpOutcome::Response(resp) => {
            serde_json::from_slice(&resp.body.bytes).unwrap_or(Value::Null)
        }
        HttpOutcome::Error(e) => panic!("no response: {e}"),
    }
}

fn skip_reason(r: &Record) -> &str {
    match &r.observation {
        Observation::Skipped { reason } => reason,
        other => panic!("not a skip: {other:?}"),
    }
}

fn form(r: &Record, k: &str) -> String {
    url::form_urlencoded::parse(&http(r).request.body.bytes)
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("{k} missing"))
}

fn header(r: &Record, name: &str) -> Option<String> {
    http(r)
        .request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value_str().into_owned())
}

/// Seal the journal with a test key into `out` and return the bundle bytes.
fn sealed(j: &Arc<Mutex<Journal>>) -> (PathBuf, Vec<u8>) {
    let path = seal_with_test_key(j);
    let bytes = std::fs::read(&path).expect("bundle");
    (path, bytes)
}

/// Keep a copy of the bundle under target/ for grading by hand (`mcp-grade FILE`).
fn keep(path: &Path, name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/audience-lab");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::copy(path, dir.join(name));
}

/// Detect the endpoint with the token, then run the audience legs.
async fn probe_with(
    lab: &Lab,
    j: &Arc<Mutex<Journal>>,
    token: &str,
    login: Option<&Login>,
) -> Vec<Record> {
    let mut probe = Probe::new(&lab.client, j.clone(), Some(token.to_string()), 10);
    let ep = url::Url::parse(&lab.rs_url).expect("LAB_RS");
    let ending = probe.run(std::slice::from_ref(&ep)).await;
    assert_eq!(ending, Ending::Complete, "the RS accepts the token");
    let _ = probe.discovery(None).await;
    probe.audience_legs(login, false).await;
    let recs = j.lock().expect("journal").records();
    recs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_wrong_audience_is_refused_with_invalid_target() {
    let Some(lab) = Lab::up().await else { return };
    let (_tmp, state, out) = scratch();
    let (mut login, mut rx) = lab.login(&state);
    let j = journal(&out, &lab.rs_url, None);
    let (cred, _, _) = obtain_interactive(&mut login, &mut rx, &lab.client, &j, None).await;
    let recs = probe_with(&lab, &j, &cred.access_token, Some(&login)).await;

    // 3.3.1c: an IP endpoint derives no candidate, and no operator candidate is named.
    let down = records_of(&recs, leg::DOWNSTREAM);
    assert!(
        down.iter().any(|r| skip_reason(r).contains("IP address")),
        "{down:?}"
    );
    // 3.3.1b: the grant names the default wrong resource and is refused.
    let mint = records_of(&recs, leg::FOREIGN_MINT);
    assert_eq!(mint.len(), 1, "{mint:?}");
    assert_eq!(form(mint[0], "grant_type"), "refresh_token");
    assert_eq!(
        form(mint[0], "resource"),
        "https://cis-probe.invalid/wrong-audience"
    );
    assert!(form(mint[0], "refresh_token").starts_with("redacted:sha256:"));
    assert_eq!(status(mint[0]), 400);
    assert_eq!(body_json(mint[0])["error"], "invalid_target");
    // A refusal mints nothing: no token facts beyond the run's own.
    assert!(j.lock().expect("journal").minted_tokens().is_empty());
    for l in [
        leg::FOREIGN_RESTORE,
        leg::FOREIGN_CONTROL,
        leg::FOREIGN_TOKEN,
    ] {
        let r = records_of(&recs, l);
        assert_eq!(r.len(), 1, "{l}: {r:?}");
        assert!(skip_reason(r[0]).contains("refused to mint"), "{l}: {r:?}");
        assert!(skip_reason(r[0]).contains("invalid_target"), "{l}: {r:?}");
    }
    // Nothing of the refused grant was cached; the credential still stands: a later
    // login is served from the cache without a browser.
    let cached = login.cached_refresh(&j).expect("cache").expect("cached");
    assert_eq!(cached.access_token, cred.access_token);
    let j2 = journal(&out, &lab.rs_url, None);
    let again = login.obtain(&lab.client, &j2).await.expect("cached");
    assert_eq!(again.obtained, Obtained::Cache);
    assert!(rx.try_recv().is_err(), "no authorization URL");

    let (path, bundle) = sealed(&j);
    assert!(!contains(&bundle, &cred.access_token));
    assert!(!contains(&bundle, &cached.refresh_token));
    keep(&path, "default.mcpev");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_resource_is_minted_refused_by_the_rs_and_the_chain_restored() {
    let Some(lab) = Lab::up().await else { return };
    let foreign_resource = "http://127.0.0.1:1/mcp";
    let (_tmp, state, out) = scratch();
    let (mut login, mut rx) = lab.login(&state);
    let inputs = json!({
        "foreign_resource": foreign_resource,
        "downstream_endpoints": ["https://example.com/me", format!("{}/me", lab.as_url)],
    });
    let j = journal(&out, &lab.rs_url, Some(inputs));
    let (cred, _, _) =
        obtain_interactive(&mut login, &mut rx, &lab.client, &j, Some(foreign_resource)).await;
    let (_, claims) = decode_jwt(&cred.access_token).expect("JWT");
    assert_eq!(
        claims["aud"],
        lab.rs_url.as_str(),
        "the token is for the RS"
    );
    let before = login.cached_refresh(&j).expect("cache").expect("cached");
    let recs = probe_with(&lab, &j, &cred.access_token, Some(&login)).await;

    // 3.3.1c: the off-domain candidate is refused by the credential gate (nothing sent);
    // the AS's own /me (same host as the endpoint) is fetched with, then without, the token.
    let down = records_of(&recs, leg::DOWNSTREAM);
    let refused: Vec<_> = down
        .iter()
        .filter(|r| http_or_none(r).is_some_and(|x| x.request.url == "https://example.com/me"))
        .collect();
    assert_eq!(refused.len(), 1, "{down:?}");
    match &http(refused[0]).outcome {
        HttpOutcome::Error(e) => {
            assert_eq!(e.kind, ErrorKind::RefusedByGuard);
            assert!(e.message.contains("no credential"), "{}", e.message);
        }
        other => panic!("sent: {other:?}"),
    }
    let me = format!("{}/me", lab.as_url);
    let sent: Vec<_> = down
        .iter()
        .filter(|r| http_or_none(r).is_some_and(|x| x.request.url == me))
        .collect();
    assert_eq!(sent.len(), 2, "{down:?}");
    assert!(header(sent[0], "Authorization").is_some_and(|v| v.contains("redacted:sha256:")));
    assert!(header(sent[1], "Authorization").is_none());

    // 3.3.1b: minted for the foreign resource.
    let mint = records_of(&recs, leg::FOREIGN_MINT);
    assert_eq!(mint.len(), 1);
    assert_eq!(form(mint[0], "resource"), foreign_resource);
    assert_eq!(status(mint[0]), 200, "{:?}", body_json(mint[0]));
    let minted = body_json(mint[0]);
    let minted_fp = minted["access_token"]
        .as_str()
        .expect("access_token")
        .to_string();
    assert!(
        minted_fp.starts_with("redacted:sha256:"),
        "redacted before recording"
    );
    assert_ne!(minted_fp, fingerprint(cred.access_token.as_bytes()));
    // Its facts are recorded (not among the tokens presented): a JWT for the foreign
    // resource, asked for it, by a login for the RS.
    let facts = j.lock().expect("journal").minted_tokens().to_vec();
    let m = facts
        .iter()
        .find(|m| m.leg == leg::FOREIGN_MINT.as_str())
        .expect("mint facts");
    assert_eq!(m.token.fingerprint, minted_fp);
    assert_eq!(m.seq, Some(mint[0].seq));
    assert_eq!(m.requested_resource.as_deref(), Some(foreign_resource));
    assert_eq!(m.login_resource.as_deref(), Some(lab.rs_url.as_str()));
    assert_eq!(
        m.token.jwt_claims.as_ref().expect("JWT claims")["aud"],
        foreign_resource
    );
    assert!(j
        .lock()
        .expect("journal")
        .tokens()
        .iter()
        .all(|t| t.fingerprint != minted_fp));
    // The refresh token rotated: the chain was restored with a grant for the RS.
    let restore = records_of(&recs, leg::FOREIGN_RESTORE);
    assert_eq!(restore.len(), 1, "{restore:?}");
    assert_eq!(form(restore[0], "resource"), lab.rs_url);
    assert_eq!(status(restore[0]), 200, "{:?}", body_json(restore[0]));
    // Control with the probe's own token (accepted), the foreign token refused with 401;
    // both complete for the negotiated revision.
    let control = records_of(&recs, leg::FOREIGN_CONTROL);
    let foreign = records_of(&recs, leg::FOREIGN_TOKEN);
    assert_eq!((control.len(), foreign.len()), (1, 1));
    assert_eq!(status(control[0]), 200);
    assert_eq!(status(foreign[0]), 401);
    assert_eq!(
        header(control[0], "Authorization"),
        Some(format!(
            "Bearer {}",
            fingerprint(cred.access_token.as_bytes())
        ))
    );
    assert_eq!(
        header(foreign[0], "Authorization"),
        Some(format!("Bearer {minted_fp}"))
    );
    for r in [control[0], foreign[0]] {
        assert!(header(r, "MCP-Protocol-Version").is_some(), "{r:?}");
        assert_eq!(
            http(r).request.body.bytes,
            http(control[0]).request.body.bytes,
            "the same request"
        );
    }
    if let Some(sid) = header(control[0], "Mcp-Session-Id") {
        assert_eq!(header(foreign[0], "Mcp-Session-Id"), Some(sid));
    }

    // The cache now holds the restored pair (a token for the RS, a new refresh token);
    // the wrong-audience pair is never cached.
    let after = login.cached_refresh(&j).expect("cache").expect("cached");
    assert_ne!(
        after.refresh_token, before.refresh_token,
        "restored chain cached"
    );
    let (_, c) = decode_jwt(&after.access_token).expect("JWT");
    assert_eq!(
        c["aud"],
        lab.rs_url.as_str(),
        "the cached token is for the RS"
    );
    assert_ne!(fingerprint(after.access_token.as_bytes()), minted_fp);
    // A later login is served without a browser: from the cache, and by a refresh with the
    // restored refresh token once the cached token is stale.
    let j2 = journal(&out, &lab.rs_url, None);
    let again = login.obtain(&lab.client, &j2).await.expect("cached");
    assert_eq!(again.obtained, Obtained::Cache);
    assert_eq!(again.access_token, after.access_token);
    login.min_validity = Duration::from_secs(100_000);
    let j3 = journal(&out, &lab.rs_url, None);
    let refreshed = login.obtain(&lab.client, &j3).await.expect("refresh");
    assert_eq!(refreshed.obtained, Obtained::Refresh);
    assert!(rx.try_recv().is_err(), "no authorization URL");

    let (path, bundle) = sealed(&j);
    let v = mcp_probe_schema::open(&bundle, &[]).expect("verifies");
    assert_eq!(v.evidence.minted_tokens, facts);
    for secret in [
        cred.access_token.as_str(),
        before.refresh_token.as_str(),
        after.refresh_token.as_str(),
        after.access_token.as_str(),
    ] {
        assert!(!contains(&bundle, secret), "a secret is in the bundle");
    }
    keep(&path, "foreign.mcpev");
}

fn http_or_none(r: &Record) -> Option<&mcp_probe_schema::model::HttpExchange> {
    match &r.observation {
        Observation::Http(x) => Some(x),
        _ => None,
    }
}
