//! The audience legs of 3.3.1 and 7.2.1 (docs/collector.md, "Probe legs"):
//! credential operations, sent after every other probe leg because 3.3.1b spends the
//! cached refresh token (it may rotate) and must be the last credential operation of the
//! run.
//!
//! * `3.3.1c.downstream`: candidate downstream APIs (for an endpoint host of three or
//!   more labels, `api.<rest>` and `<rest>` × [`DOWNSTREAM_PATHS`], plus the operator's
//!   `downstream_endpoints`), each screened by [`guard::credential_allowed`] (never a
//!   token off the endpoint's registrable domain) and the network guard; a refused one is
//!   recorded as a `refused_by_guard` exchange naming the reason (nothing sent). Every
//!   survivor is fetched with the bearer token, then without it (no redirect followed).
//! * `3.3.1b.mint`: a refresh grant naming [`WRONG_AUDIENCE`] (or the operator's
//!   `foreign_resource`) at the authorization server's token endpoint. The answer is
//!   never cached. A conforming AS refuses (`invalid_target`).
//! * `3.3.1b.restore`: when the mint answered a token and rotated the refresh token, the
//!   new refresh token is spent at once on a grant naming the audited resource, and that
//!   answer is cached (the chain stays bound to the right resource).
//! * `3.3.1b.control` and `3.3.1b.foreign`: the same complete `tools/list` for the
//!   negotiated revision (session id, version header, `_meta` on 2026-07-28), first with
//!   the probe's own token, then with the minted one (one property differs). 7.2.1 reads the
//!   same pair: no second mint.
//!
//! Every new token is registered with the journal's redactor before the exchange that
//! carries it is recorded (the OAuth module registers the answer's secrets).

use mcp_probe_schema::model::{Era, ErrorKind, Header};
use mcp_probe_schema::vocab::{header, leg, method, LegId};
use serde_json::{Map, Value};

use crate::journal::lock;
use crate::mcp::Probe;
use crate::oauth::guard::{self, AddrClass};
use crate::oauth::Login;
use crate::transport::http::Request;

/// The resource 3.3.1b asks a token for: unresolvable (`.invalid`), so no service holds it.
pub const WRONG_AUDIENCE: &str = "https://cis-probe.invalid/wrong-audience";
/// Paths tried on each derived downstream host (3.3.1c).
pub const DOWNSTREAM_PATHS: [&str; 5] = ["/", "/me", "/user", "/viewer", "/v1/account"];
/// Operator input: extra downstream candidate URLs (a list of strings).
pub const INPUT_DOWNSTREAM: &str = "downstream_endpoints";
/// Operator input: the resource the wrong-audience grant names instead of
/// [`WRONG_AUDIENCE`] (e.g. another loopback resource a lab AS serves).
pub const INPUT_FOREIGN_RESOURCE: &str = "foreign_resource";

const ALL_B: [LegId; 4] = [
    leg::FOREIGN_MINT,
    leg::FOREIGN_RESTORE,
    leg::FOREIGN_CONTROL,
    leg::FOREIGN_TOKEN,
];

/// Derived downstream hosts of an endpoint host: `api.<rest>` and `<rest>`,
/// none below three labels; none for an IP address.
pub fn derived_hosts(endpoint: &url::Url) -> Vec<String> {
    let Some(url::Host::Domain(d)) = endpoint.host() else {
        return Vec::new();
    };
    let d = d.trim_end_matches('.').to_ascii_lowercase();
    let labels: Vec<&str> = d.split('.').collect();
    if labels.len() < 3 || labels.iter().any(|l| l.is_empty()) {
        return Vec::new();
    }
    let rest = labels[1..].join(".");
    let mut out = vec![format!("api.{rest}"), rest];
    out.dedup();
    out
}

/// Every downstream candidate as typed: derived hosts × [`DOWNSTREAM_PATHS`] over https,
/// then the operator's strings, without duplicates.
pub fn downstream_candidates(endpoint: &url::Url, inputs: Option<&Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in derived_hosts(endpoint) {
        for p in DOWNSTREAM_PATHS {
            out.push(format!("https://{h}{p}"));
        }
    }
    if let Some(list) = inputs
        .and_then(|i| i.get(INPUT_DOWNSTREAM))
        .and_then(Value::as_array)
    {
        for s in list.iter().filter_map(Value::as_str) {
            let s = s.trim().to_string();
            if !s.is_empty() && !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

impl Probe<'_> {
    /// The operator inputs of this target (the probe's, else the journal's).
    fn audience_inputs(&self) -> Option<Value> {
        self.inputs
            .clone()
            .or_else(|| lock(&self.journal).inputs().cloned())
    }

    /// The target's address class from the addresses its endpoint resolved to.
    fn recorded_class(&self) -> AddrClass {
        let addrs = lock(&self.journal).target_ips();
        guard::target_class(&addrs)
    }

    /// 3.3.1c then 3.3.1b (the last credential operation of the run). `login` is the
    /// OAuth login that produced the probe's token (`None` for `--token-env`: there is
    /// no refresh token then). `info_only` records every leg as skipped.
    pub async fn audience_legs(&mut self, login: Option<&Login>, info_only: bool) {
        if info_only {
            let why = "not sent: --info run (connect and enumerate only)";
            self.skip_legs(&[leg::DOWNSTREAM], why);
            self.skip_legs(&ALL_B, why);
            return;
        }
        self.downstream().await;
        self.foreign_audience(login).await;
    }

    fn skip_legs(&self, legs: &[LegId], why: impl Into<String>) {
        lock(&self.journal).skip(legs, why);
    }

    /// 3.3.1c.
    async fn downstream(&mut self) {
        let Some(endpoint) = self.endpoint.clone() else {
            self.skip_legs(&[leg::DOWNSTREAM], "not sent: no endpoint was detected");
            return;
        };
        if self.token.is_none() {
            self.skip_legs(&[leg::DOWNSTREAM], "not sent: no credential is held");
            return;
        }
        let inputs = self.audience_inputs();
        if derived_hosts(&endpoint).is_empty() {
            let host = endpoint.host_str().unwrap_or_default().to_string();
            let why = if matches!(endpoint.host(), Some(url::Host::Domain(_))) {
                format!(
                    "no derived candidates: the endpoint host {host} has fewer than three labels"
                )
            } else {
                format!("no derived candidates: the endpoint host {host} is an IP address")
            };
            self.skip_legs(&[leg::DOWNSTREAM], why);
        }
        let candidates = downstream_candidates(&endpoint, inputs.as_ref());
        if inputs
            .as_ref()
            .and_then(|i| i.get(INPUT_DOWNSTREAM))
            .is_some_and(|v| !v.is_array())
        {
            self.skip_legs(
                &[leg::DOWNSTREAM],
                format!("not used: {INPUT_DOWNSTREAM} in the probe inputs is not a list of URLs"),
            );
        }
        if candidates.is_empty() {
            self.skip_legs(
                &[leg::DOWNSTREAM],
                "not sent: no downstream candidate (none derived, none named in downstream_endpoints)",
            );
            return;
        }
        let class = self.recorded_class();
        for text in candidates {
            let url = match url::Url::parse(&text) {
                Ok(u) => u,
                Err(e) => {
                    self.record_refusal(
                        leg::DOWNSTREAM,
                        &text,
                        ErrorKind::RefusedByGuard,
                        format!("refused {text}: not a URL ({e})"),
                    );
                    continue;
                }
            };
            if let Err(why) = guard::credential_allowed(&url, &endpoint) {
                self.record_refusal(
                    leg::DOWNSTREAM,
                    &text,
                    ErrorKind::RefusedByGuard,
                    format!("refused {text}: {why}"),
                );
                continue;
            }
            let pinned = match guard::check_fetch(&url, class).await {
                Ok(addrs) => addrs,
                Err(r) => {
                    self.record_refusal(leg::DOWNSTREAM, &text, r.kind, r.reason);
                    continue;
                }
            };
            self.downstream_get(&url, &endpoint, true, &pinned).await;
            self.downstream_get(&url, &endpoint, false, &pinned).await;
        }
    }

    /// One guarded GET of a downstream candidate (no redirect followed).
    async fn downstream_get(
        &mut self,
        url: &url::Url,
        endpoint: &url::Url,
        credential: bool,
        pinned: &[std::net::SocketAddr],
    ) {
        let headers = vec![Header::new(header::ACCEPT, "application/json, */*")];
        // With a DPoP-bound token the proof is made for this URL: the question is the
        // token's audience, which a valid proof does not change.
        let sent = self
            .send_authorized(
                Request {
                    method: "GET".into(),
                    url: url.clone(),
                    headers,
                    body: Vec::new(),
                    await_id: None,
                    head_only_stream: true,
                    connect_to: Some(pinned.to_vec()),
                },
                credential,
            )
            .await;
        let mut j = lock(&self.journal);
        sent.record(
            &mut j,
            crate::transport::http::tls_leg(url, endpoint, leg::DOWNSTREAM),
            leg::DOWNSTREAM,
        );
    }

    /// 3.3.1b: mint, restore, control, foreign.
    async fn foreign_audience(&mut self, login: Option<&Login>) {
        if self.endpoint.is_none() {
            self.skip_legs(&ALL_B, "not sent: no endpoint was detected");
            return;
        }
        let Some(own) = self.token.clone() else {
            self.skip_legs(&ALL_B, "not sent: no credential is held");
            return;
        };
        let Some(login) = login else {
            self.skip_legs(
                &ALL_B,
                "not sent: no refresh token (the credential was not obtained by an OAuth login of this \
                 run, e.g. --token-env)",
            );
            return;
        };
        // The token endpoint: on the advertising issuer's registrable domain (the
        // credential gate).
        let token_endpoint = login.metadata.token_endpoint.clone();
        let issuer = login.metadata.issuer.clone();
        let refused = match url::Url::parse(&issuer) {
            Err(e) => Some(format!("the issuer {issuer} is not a URL ({e})")),
            Ok(iss) => guard::credential_allowed(&token_endpoint, &iss)
                .err()
                .map(|e| e.to_string()),
        };
        if let Some(why) = refused {
            self.skip_legs(
                &ALL_B,
                format!(
                    "not sent: the token endpoint {token_endpoint} may not receive the refresh token \
                     ({why}; it must be on the registrable domain of the issuer {issuer})"
                ),
            );
            return;
        }
        let cached = match login.cached_refresh(&self.journal) {
            Ok(Some(c)) => c,
            Ok(None) => {
                self.skip_legs(
                    &ALL_B,
                    "not sent: no refresh token is cached for this endpoint",
                );
                return;
            }
            Err(e) => {
                self.skip_legs(
                    &ALL_B,
                    format!("not sent: the token cache could not be read: {e}"),
                );
                return;
            }
        };
        let resource = self
            .audience_inputs()
            .as_ref()
            .and_then(|i| i.get(INPUT_FOREIGN_RESOURCE))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or(WRONG_AUDIENCE)
            .to_string();
        let minted = login
            .refresh_raw(
                self.client,
                &self.journal,
                leg::FOREIGN_MINT,
                &cached.refresh_token,
                &resource,
            )
            .await;
        let grant = match minted {
            Ok(g) => g,
            Err(e) => {
                // The refusal or transport error is recorded under the mint leg already
                // (unless the cache vanished); say why nothing follows.
                self.skip_legs(
                    &[
                        leg::FOREIGN_RESTORE,
                        leg::FOREIGN_CONTROL,
                        leg::FOREIGN_TOKEN,
                    ],
                    format!("not sent: the wrong-audience grant produced no answer: {e}"),
                );
                return;
            }
        };
        let Some(foreign) = grant
            .access_token
            .clone()
            .filter(|_| (200..300).contains(&grant.status))
        else {
            let what = grant
                .error
                .clone()
                .map(|e| format!("error {e}"))
                .unwrap_or_else(|| format!("HTTP {} without an access_token", grant.status));
            self.skip_legs(
                &[leg::FOREIGN_RESTORE, leg::FOREIGN_CONTROL, leg::FOREIGN_TOKEN],
                format!("not sent: the authorization server refused to mint a token for {resource} ({what})"),
            );
            return;
        };
        // Restore the chain when the grant rotated the refresh token.
        match grant.refresh_token.as_deref() {
            Some(rt) if rt != cached.refresh_token => {
                if let Err(e) = login
                    .restore_chain(self.client, &self.journal, leg::FOREIGN_RESTORE, rt)
                    .await
                {
                    self.skip_legs(
                        &[leg::FOREIGN_RESTORE],
                        format!("restore failed: {e}; the cached credential may need a new login"),
                    );
                }
            }
            _ => self.skip_legs(
                &[leg::FOREIGN_RESTORE],
                "not sent: the wrong-audience grant did not rotate the refresh token (the cached one still stands)",
            ),
        }
        if foreign == own {
            self.skip_legs(
                &[leg::FOREIGN_CONTROL, leg::FOREIGN_TOKEN],
                "not sent: the authorization server answered with the current access token again",
            );
            return;
        }
        // The same complete tools/list, own token then foreign token.
        let (h, body, id) = self.complete_request(method::TOOLS_LIST);
        self.send_as(leg::FOREIGN_CONTROL, h.clone(), &body, id, &own)
            .await;
        self.send_as(leg::FOREIGN_TOKEN, h, &body, id, &foreign)
            .await;
    }

    /// A complete request of `m` for the negotiated revision: `(headers, body, id)`.
    fn complete_request(&mut self, m: &str) -> (Vec<Header>, Value, i64) {
        match self.era {
            Some(Era::Modern) => self.modern(m, Map::new()),
            _ => {
                let (h, b, id) = self.legacy(m, Map::new(), false);
                (h, b, id.unwrap_or_default())
            }
        }
    }

    /// Send `body` with `token` as the credential (the probe's own token is put back).
    async fn send_as(&mut self, l: LegId, h: Vec<Header>, body: &Value, id: i64, token: &str) {
        let Some(endpoint) = self.endpoint.clone() else {
            return;
        };
        let held = self.token.replace(token.to_string());
        let anonymous = std::mem::take(&mut self.anonymous);
        let _ = self
            .rpc_awaiting(&[l], &endpoint, h, body, Some(Value::from(id)))
            .await;
        self.token = held;
        self.anonymous = anonymous;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::model::Observation;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    fn u(s: &str) -> url::Url {
        url::Url::parse(s).expect("url")
    }

    #[test]
    fn derived_hosts_need_three_labels_and_a_name() {
        assert_eq!(
            derived_hosts(&u("https://mcp.linear.app/mcp")),
            vec!["api.linear.app", "linear.app"]
        );
        assert_eq!(
            derived_hosts(&u("https://MCP.Example.co.uk./sse")),
            vec!["api.example.co.uk", "example.co.uk"]
        );
        assert!(derived_hosts(&u("https://example.com/mcp")).is_empty());
        assert!(derived_hosts(&u("http://127.0.0.1:8000/mcp")).is_empty());
        assert!(derived_hosts(&u("http://[::1]:8000/mcp")).is_empty());
    }

    #[test]
    fn candidates_are_derived_then_operator_named_without_duplicates() {
        let inputs = json!({ INPUT_DOWNSTREAM: ["https://api.linear.app/me", " https://x.linear.app/v2 ", 7, ""] });
        let c = downstream_candidates(&u("https://mcp.linear.app/mcp"), Some(&inputs));
        assert_eq!(c.len(), 11, "{c:?}");
        assert_eq!(c[0], "https://api.linear.app/");
        assert_eq!(c[4], "https://api.linear.app/v1/account");
        assert_eq!(c[5], "https://linear.app/");
        assert_eq!(c[10], "https://x.linear.app/v2");
        let ip = downstream_candidates(&u("http://127.0.0.1:1/mcp"), None);
        assert!(ip.is_empty());
    }

    fn probe_fixture(
        dir: &std::path::Path,
        token: Option<&str>,
        client: &crate::transport::http::Client,
    ) -> (
        Arc<Mutex<crate::journal::Journal>>,
        Vec<mcp_probe_schema::model::Record>,
    ) {
        let j = crate::legs::fixture::journal(dir, "http://127.0.0.1:9/mcp");
        let mut p = Probe::new(client, j.clone(), token.map(str::to_string), 1);
        p.endpoint = Some(u("http://127.0.0.1:9/mcp"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(p.audience_legs(None, false));
        let recs = j.lock().expect("journal").records();
        (j, recs)
    }

    fn reasons(recs: &[mcp_probe_schema::model::Record], l: LegId) -> Vec<String> {
        recs.iter()
            .filter(|r| r.legs.iter().any(|x| x == l))
            .filter_map(|r| match &r.observation {
                Observation::Skipped { reason } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn without_credential_or_refresh_token_every_leg_is_skipped_with_its_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let (_, recs) = probe_fixture(dir.path(), None, &client);
        for l in [leg::DOWNSTREAM, leg::FOREIGN_MINT, leg::FOREIGN_TOKEN] {
            assert_eq!(
                reasons(&recs, l),
                vec!["not sent: no credential is held".to_string()],
                "{l}"
            );
        }
        // A --token-env credential: 3.3.1c has no candidate on an IP endpoint, and
        // 3.3.1b has no refresh token.
        let (_, recs) = probe_fixture(dir.path(), Some("tok"), &client);
        let down = reasons(&recs, leg::DOWNSTREAM);
        assert!(down.iter().any(|r| r.contains("IP address")), "{down:?}");
        assert!(
            down.iter().any(|r| r.contains("no downstream candidate")),
            "{down:?}"
        );
        for l in ALL_B {
            let r = reasons(&recs, l);
            assert!(
                r.len() == 1 && r[0].contains("no refresh token"),
                "{l}: {r:?}"
            );
        }
        assert!(recs
            .iter()
            .all(|r| matches!(r.observation, Observation::Skipped { .. })));
    }
}
