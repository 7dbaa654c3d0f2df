//! The legs of 3.3.5, confused-deputy safeguards for static OAuth client ids
//! (docs/collector.md, "Probe legs"). Pre-authentication behaviour only:
//! no credential is ever sent, no redirect is ever followed, and every URL passes the
//! network guard first (a refused one is recorded as a `refused_by_guard` exchange).
//!
//! Gate (3.3.5-pre, from metadata, before any registration; [`gate`]): the first
//! resolved authorization-server metadata must name an http(s) `authorization_endpoint`
//! and `registration_endpoint`, and the authorization endpoint must not be on the MCP
//! endpoint's own host:port ("authorizes for itself": it fronts nothing). Host means
//! *authority* here (host and port, default ports filled in): two ports are two origins
//! (RFC 6454) and two services, so an AS on another port of the same machine is a
//! separate authorization server (the lab's oidc-provider next to py2-auth).
//!
//! Legs (records are the only output; the grader decides):
//!
//! * `3.3.5.register`: scratch clients #1 and #2 (RFC 7591 POST JSON with
//!   [`SCRATCH_REDIRECT`]). Scratch clients are never cached, and the working client and
//!   its cache are never touched. Secrets in the answer (`client_secret`,
//!   `registration_access_token`) are registered with the redactor before recording.
//! * `3.3.5.authorize`: the authorization request of #1, then of #2 (PKCE S256, state
//!   [`AUTHORIZE_STATE`], `resource`); each answer's `Location` may name an onward
//!   `client_id`. When both name the same one, a static client id is in use and the test
//!   legs follow; otherwise they are skipped naming what was seen.
//! * `3.3.5a.redirect`: #1's authorization request with [`VARIED_REDIRECT`].
//! * `3.3.5b.callback`: the endpoint origin's [`CALLBACK_PATH`] with a fabricated code and
//!   an unissued state, then the control [`CONTROL_PATH`].
//! * `3.3.5c.consent`: registration of scratch client #3 (POST) and its authorization
//!   request (GET).

use base64::Engine as _;
use mcp_probe_schema::model::{Header, HttpOutcome, Observation};
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde_json::{json, Value};

use crate::journal::lock;
use crate::mcp::Probe;
use crate::oauth::discovery::Discovered;
use crate::oauth::guard::{self, AddrClass};
use crate::transport::http::{self, authority, Request};

/// The scratch clients' redirect URI (nothing listens there; no code is ever wanted).
pub const SCRATCH_REDIRECT: &str = "http://127.0.0.1:33418/callback";
/// The unregistered redirect URI of 3.3.5a (`.invalid`: resolves nowhere).
pub const VARIED_REDIRECT: &str = "https://cis-probe-attacker.invalid/callback";
/// `state` of the scratch authorization requests.
pub const AUTHORIZE_STATE: &str = "cis-probe-authorize-state";
/// The fabricated authorization code of 3.3.5b.
pub const FABRICATED_CODE: &str = "cis-probe-fabricated-code";
/// The state 3.3.5b presents, which no request issued.
pub const UNISSUED_STATE: &str = "cis-probe-unissued-state";
/// 3.3.5b's callback path on the endpoint origin.
pub const CALLBACK_PATH: &str = "/callback";
/// 3.3.5b's control path on the endpoint origin (no handler expected).
pub const CONTROL_PATH: &str = "/cis-probe-no-such-path";
/// The skip note of every 3.3.5 leg when the run used a pre-registered client.
pub const PRE_REGISTERED: &str = "not sent: pre-registered client: registration not probed (--client-id: the \
     3.3.5 scratch registrations would create clients at an authorization server whose clients the operator \
     registers beforehand)";
/// `client_name` of the scratch registrations.
pub const SCRATCH_CLIENT_NAME: &str = "mcp-collect (3.3.5 scratch client)";

const ALL: [LegId; 5] = [
    leg::DEPUTY_REGISTER,
    leg::DEPUTY_AUTHORIZE,
    leg::DEPUTY_REDIRECT,
    leg::DEPUTY_CALLBACK,
    leg::DEPUTY_CONSENT,
];
const TESTS: [LegId; 3] = [
    leg::DEPUTY_REDIRECT,
    leg::DEPUTY_CALLBACK,
    leg::DEPUTY_CONSENT,
];

/// The 3.3.5-pre gate read from authorization-server metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// The legs run against these endpoints.
    Open {
        /// `authorization_endpoint`.
        authorize: url::Url,
        /// `registration_endpoint`.
        register: url::Url,
    },
    /// Nothing is sent; the reason (a skip note).
    Closed(String),
}

/// Why the gate found no usable endpoint URL in the metadata (the text is the skip note).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataUrl {
    /// The metadata names no such endpoint.
    #[error("not sent: the metadata of {issuer} has no {name}")]
    Missing {
        /// The metadata's issuer.
        issuer: String,
        /// The field.
        name: &'static str,
    },
    /// The field is not an http(s) URL with a host.
    #[error("not sent: the {name} {value} of {issuer} is not an http(s) URL")]
    NotHttp {
        /// The metadata's issuer.
        issuer: String,
        /// The field.
        name: &'static str,
        /// Its JSON value.
        value: String,
    },
}

/// Why a scratch client registration gave no `client_id`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScratchRefused {
    /// Nothing usable came back (refused by the guard, or a transport failure).
    #[error("{0}")]
    Request(String),
    /// A success without a `client_id`.
    #[error("HTTP {0} without a client_id")]
    NoClientId(u16),
    /// The server refused, with its OAuth `error` when given.
    #[error("HTTP {status}{}", .error.as_deref().map(|e| format!(" {e}")).unwrap_or_default())]
    Refused {
        /// HTTP status.
        status: u16,
        /// OAuth `error`.
        error: Option<String>,
    },
}

/// Host (lower case, no trailing dot) and port (default filled in) of `u`.
pub fn host_port(u: &url::Url) -> Option<(String, u16)> {
    let host = u
        .host_str()?
        .trim_end_matches('.')
        .to_ascii_lowercase()
        .trim_matches(['[', ']'])
        .to_string();
    Some((host, u.port_or_known_default()?))
}

/// The gate (3.3.5-pre) for `endpoint` from the first resolved metadata.
pub fn gate(endpoint: &url::Url, metadata: Option<&Value>) -> Gate {
    let Some(m) = metadata else {
        return Gate::Closed(
            "not sent: no authorization server metadata was discovered (see discovery.prm and discovery.as)"
                .into(),
        );
    };
    let issuer = m.get("issuer").and_then(Value::as_str).unwrap_or("?");
    let url_of = |name: &'static str| -> Result<url::Url, MetadataUrl> {
        let Some(v) = m.get(name).filter(|v| !v.is_null()) else {
            return Err(MetadataUrl::Missing {
                issuer: issuer.to_string(),
                name,
            });
        };
        let s = v.as_str().unwrap_or_default();
        match url::Url::parse(s) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(u),
            _ => Err(MetadataUrl::NotHttp {
                issuer: issuer.to_string(),
                name,
                value: v.to_string(),
            }),
        }
    };
    let authorize = match url_of("authorization_endpoint") {
        Ok(u) => u,
        Err(why) => return Gate::Closed(why.to_string()),
    };
    let register = match url_of("registration_endpoint") {
        Ok(u) => u,
        Err(why) => return Gate::Closed(why.to_string()),
    };
    if host_port(&authorize).is_some() && host_port(&authorize) == host_port(endpoint) {
        return Gate::Closed(format!(
            "not sent: the authorization endpoint {authorize} is on the MCP endpoint's own host:port ({}): it \
             authorizes for itself and fronts no separate authorization server",
            authority(endpoint)
        ));
    }
    Gate::Open {
        authorize,
        register,
    }
}

/// The authorization request of a scratch client (`response_type=code`, PKCE S256,
/// `state`, `resource`, and the login's `scope` when it has one: the challenge's, else
/// the resource metadata's `scopes_supported`), appended to any query the endpoint
/// already has.
pub fn authorize_url(
    endpoint: &url::Url,
    client_id: &str,
    redirect_uri: &str,
    code_challenge: &str,
    resource: &str,
    scope: Option<&str>,
) -> url::Url {
    let mut u = endpoint.clone();
    u.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("state", AUTHORIZE_STATE)
        .append_pair("code_challenge", code_challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("resource", resource);
    if let Some(scope) = scope {
        u.query_pairs_mut().append_pair("scope", scope);
    }
    u
}

/// The `client_id` query parameter of a `Location` (resolved against `base`).
pub fn location_client_id(location: &str, base: &url::Url) -> Option<String> {
    let u = base.join(location.trim()).ok()?;
    let id = u
        .query_pairs()
        .find(|(k, _)| k == "client_id")
        .map(|(_, v)| v.into_owned());
    id
}

/// What a deputy request drew.
#[derive(Debug, Clone, Default)]
struct Answer {
    status: Option<u16>,
    location: Option<String>,
    json: Value,
    /// Transport error or guard refusal.
    error: Option<String>,
}

impl Probe<'_> {
    /// The address class of the target, from the addresses its endpoint resolved to.
    fn deputy_class(&self) -> AddrClass {
        let addrs = lock(&self.journal).target_ips();
        if addrs.is_empty() {
            return match self.endpoint.as_ref().and_then(url::Url::host) {
                Some(url::Host::Ipv4(a)) => guard::classify(a.into()),
                Some(url::Host::Ipv6(a)) => guard::classify(a.into()),
                _ => AddrClass::Public,
            };
        }
        guard::target_class(&addrs)
    }

    /// 3.3.5: the scratch registrations, the authorization requests and the test legs.
    /// `found` is the run's discovery; `info_only` records every leg as skipped.
    pub async fn deputy_legs(&mut self, found: &Discovered, info_only: bool) {
        if info_only {
            lock(&self.journal).skip(&ALL, "not sent: --info run (connect and enumerate only)");
            return;
        }
        let Some(endpoint) = self.endpoint.clone() else {
            lock(&self.journal).skip(&ALL, "not sent: no endpoint was detected");
            return;
        };
        let (authorize, register) = match gate(&endpoint, found.as_metadata.first().map(|(_, d)| d))
        {
            Gate::Open {
                authorize,
                register,
            } => (authorize, register),
            Gate::Closed(why) => {
                lock(&self.journal).skip(&ALL, why);
                return;
            }
        };
        // A pre-registered client (`--client-id`): the operator registers clients at this
        // authorization server by hand; scratch registrations would create clients there.
        if lock(&self.journal)
            .options()
            .pre_registered_client
            .is_some()
        {
            lock(&self.journal).skip(&ALL, PRE_REGISTERED);
            return;
        }
        let class = self.deputy_class();
        let resource =
            crate::oauth::resource_for(&endpoint, found.prm.as_ref()).unwrap_or_else(|_| {
                let mut e = endpoint.clone();
                e.set_fragment(None);
                e.to_string()
            });
        // The scope a plain client would ask for, as the login does (SHOULD in the
        // authorization spec): the scratch requests differ from it only where the legs mean it.
        let scope = crate::oauth::scope_for(
            found.challenge.as_ref().and_then(|c| c.scope()),
            found.prm.as_ref(),
        );
        let mut verifier = [0u8; 32];
        if getrandom::fill(&mut verifier).is_err() {
            // The verifier is never sent; a fixed one only makes the challenge guessable.
            verifier = *b"mcp-collect-3.3.5-scratch-pkce!!";
        }
        let challenge = crate::oauth::pkce_challenge(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(verifier),
        );

        let mut ids: Vec<String> = Vec::new();
        let mut onward: Vec<Option<String>> = Vec::new();
        for n in 1..=2 {
            let id = match self
                .scratch_register(leg::DEPUTY_REGISTER, &register, class, &endpoint)
                .await
            {
                Ok(id) => id,
                Err(why) => {
                    let rest: &[LegId] = if n == 1 {
                        &[
                            leg::DEPUTY_AUTHORIZE,
                            leg::DEPUTY_REDIRECT,
                            leg::DEPUTY_CALLBACK,
                            leg::DEPUTY_CONSENT,
                        ]
                    } else {
                        &TESTS
                    };
                    lock(&self.journal).skip(
                        rest,
                        format!("not sent: scratch client registration #{n} failed ({why})"),
                    );
                    return;
                }
            };
            let url = authorize_url(
                &authorize,
                &id,
                SCRATCH_REDIRECT,
                &challenge,
                &resource,
                scope.as_deref(),
            );
            let a = self
                .deputy_request(
                    leg::DEPUTY_AUTHORIZE,
                    "GET",
                    url.clone(),
                    None,
                    class,
                    &endpoint,
                )
                .await;
            onward.push(
                a.location
                    .as_deref()
                    .and_then(|l| location_client_id(l, &url)),
            );
            ids.push(id);
        }
        let shown = |o: &Option<String>| o.clone().unwrap_or_else(|| "none".into());
        match (&onward[0], &onward[1]) {
            (Some(a), Some(b)) if a == b => {}
            _ => {
                lock(&self.journal).skip(
                    &TESTS,
                    format!(
                        "not sent: the authorization endpoint's answers name no shared onward client_id (#1: {}, \
                         #2: {}), so no static client id is seen in use",
                        shown(&onward[0]),
                        shown(&onward[1])
                    ),
                );
                return;
            }
        }
        // 3.3.5a: client #1 with an unregistered redirect_uri.
        let varied = authorize_url(
            &authorize,
            &ids[0],
            VARIED_REDIRECT,
            &challenge,
            &resource,
            scope.as_deref(),
        );
        self.deputy_request(leg::DEPUTY_REDIRECT, "GET", varied, None, class, &endpoint)
            .await;
        // 3.3.5b: a fabricated callback, then the control path, on the endpoint origin.
        let origin = endpoint.origin().ascii_serialization();
        for text in [
            format!("{origin}{CALLBACK_PATH}?code={FABRICATED_CODE}&state={UNISSUED_STATE}"),
            format!("{origin}{CONTROL_PATH}"),
        ] {
            match url::Url::parse(&text) {
                Ok(u) => {
                    self.deputy_request(leg::DEPUTY_CALLBACK, "GET", u, None, class, &endpoint)
                        .await;
                }
                Err(e) => {
                    lock(&self.journal).skip(
                        &[leg::DEPUTY_CALLBACK],
                        format!("not sent: {text} is not a URL ({e})"),
                    );
                }
            }
        }
        // 3.3.5c: a new client #3 and its authorization request.
        match self
            .scratch_register(leg::DEPUTY_CONSENT, &register, class, &endpoint)
            .await
        {
            Ok(id) => {
                let url = authorize_url(
                    &authorize,
                    &id,
                    SCRATCH_REDIRECT,
                    &challenge,
                    &resource,
                    scope.as_deref(),
                );
                self.deputy_request(leg::DEPUTY_CONSENT, "GET", url, None, class, &endpoint)
                    .await;
            }
            Err(why) => {
                lock(&self.journal).skip(
                    &[leg::DEPUTY_CONSENT],
                    format!(
                        "not sent: the authorization request of scratch client #3 (its registration failed: {why})"
                    ),
                );
            }
        }
    }

    /// Register one scratch client under `l`; its `client_id`, or why not. Never cached.
    async fn scratch_register(
        &mut self,
        l: LegId,
        register: &url::Url,
        class: AddrClass,
        endpoint: &url::Url,
    ) -> Result<String, ScratchRefused> {
        let body = json!({
            "client_name": SCRATCH_CLIENT_NAME,
            // SEP-837 (2026-07-28): every DCR request names its application type, the
            // scratch clients' as the working client's (a registration a real client
            // would not send tests nothing about the AS).
            "application_type": crate::oauth::registration::APPLICATION_TYPE,
            "redirect_uris": [SCRATCH_REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        let a = self
            .deputy_request(l, "POST", register.clone(), Some(body), class, endpoint)
            .await;
        if let Some(e) = a.error {
            return Err(ScratchRefused::Request(e));
        }
        let status = a.status.unwrap_or_default();
        let id = a
            .json
            .get("client_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        match (status, id) {
            (200 | 201, Some(id)) => Ok(id.to_string()),
            (200 | 201, None) => Err(ScratchRefused::NoClientId(status)),
            _ => Err(ScratchRefused::Refused {
                status,
                error: a
                    .json
                    .get("error")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }),
        }
    }

    /// One guarded request without credential, redirects not followed, recorded under
    /// `l` (a refusal is recorded as a `refused_by_guard` exchange; nothing is sent).
    async fn deputy_request(
        &mut self,
        l: LegId,
        method: &str,
        url: url::Url,
        json_body: Option<Value>,
        class: AddrClass,
        endpoint: &url::Url,
    ) -> Answer {
        let mut headers = vec![Header::new(
            header::ACCEPT,
            "application/json, text/html;q=0.5, */*;q=0.1",
        )];
        let body = match &json_body {
            Some(b) => {
                headers.push(Header::new(header::CONTENT_TYPE, "application/json"));
                serde_json::to_vec(b).expect("json encodes")
            }
            None => Vec::new(),
        };
        let pinned = match guard::check_fetch(&url, class).await {
            Ok(a) => a,
            Err(r) => {
                let exchange = http::unsent(
                    method,
                    url.as_str(),
                    headers,
                    &body,
                    r.kind,
                    r.reason.clone(),
                );
                lock(&self.journal).record(
                    &[l],
                    chrono::Utc::now().timestamp_micros(),
                    0,
                    Observation::Http(exchange),
                );
                return Answer {
                    error: Some(r.reason),
                    ..Answer::default()
                };
            }
        };
        let sent = self
            .client
            .send(Request {
                method: method.into(),
                url: url.clone(),
                headers,
                body,
                await_id: None,
                head_only_stream: true,
                // Connect to the addresses the guard checked, not a second DNS answer.
                connect_to: Some(pinned),
            })
            .await;
        let mut answer = Answer::default();
        match &sent.exchange.outcome {
            HttpOutcome::Response(r) => {
                answer.status = Some(r.status);
                answer.location = mcp_probe_schema::derive::header(&r.headers, header::LOCATION)
                    .map(|h| h.value_str().into_owned());
                answer.json = serde_json::from_slice(&r.body.bytes).unwrap_or(Value::Null);
            }
            HttpOutcome::Error(e) => {
                answer.error = Some(format!("{}: {}", e.kind.as_str(), e.message));
            }
        }
        let mut j = lock(&self.journal);
        // Client ids are not credentials: no piece of a secret they share (a secret
        // `test-client-secret` with the id `test-client-id`) is replaced inside them, or
        // the recorded ids the grader compares would depend on the secrets. Registered
        // first, before the secrets that arrive with them.
        let onward = answer
            .location
            .as_deref()
            .and_then(|l| location_client_id(l, &url));
        let id = answer.json.get("client_id").and_then(Value::as_str);
        for v in onward.as_deref().into_iter().chain(id) {
            j.add_public(v.as_bytes());
        }
        // A scratch registration may carry secrets: redacted before the record is hashed.
        for name in ["client_secret", "registration_access_token"] {
            if let Some(s) = answer
                .json
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                j.add_secret(s.as_bytes(), name);
            }
        }
        sent.record(&mut j, http::tls_leg(&url, endpoint, l), l);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> url::Url {
        url::Url::parse(s).expect("url")
    }

    fn meta(auth: Value, reg: Value) -> Value {
        json!({"issuer": "http://127.0.0.1:9", "authorization_endpoint": auth, "registration_endpoint": reg})
    }

    #[test]
    fn gate_branches() {
        let ep = u("http://127.0.0.1:8080/mcp");
        assert!(
            matches!(gate(&ep, None), Gate::Closed(w) if w.contains("no authorization server metadata"))
        );
        let m = json!({"issuer": "x", "registration_endpoint": "http://127.0.0.1:9/reg"});
        assert!(
            matches!(gate(&ep, Some(&m)), Gate::Closed(w) if w.contains("no authorization_endpoint"))
        );
        let m = meta(json!("not a url"), json!("http://127.0.0.1:9/reg"));
        assert!(matches!(gate(&ep, Some(&m)), Gate::Closed(w) if w.contains("not an http(s) URL")));
        let m = meta(json!("http://127.0.0.1:9/auth"), Value::Null);
        assert!(
            matches!(gate(&ep, Some(&m)), Gate::Closed(w) if w.contains("no registration_endpoint"))
        );
        // Same host and port: authorizes for itself (case and trailing dot ignored).
        let m = meta(
            json!("http://127.0.0.1:8080/authorize"),
            json!("http://127.0.0.1:8080/reg"),
        );
        assert!(
            matches!(gate(&ep, Some(&m)), Gate::Closed(w) if w.contains("authorizes for itself"))
        );
        let ep2 = u("https://MCP.example.com./mcp");
        let m = meta(
            json!("https://mcp.example.com:443/authorize"),
            json!("https://mcp.example.com/reg"),
        );
        assert!(
            matches!(gate(&ep2, Some(&m)), Gate::Closed(w) if w.contains("authorizes for itself"))
        );
        // Another port on the same host is another service: the gate opens.
        let m = meta(
            json!("http://127.0.0.1:9/auth"),
            json!("http://127.0.0.1:9/reg"),
        );
        assert_eq!(
            gate(&ep, Some(&m)),
            Gate::Open {
                authorize: u("http://127.0.0.1:9/auth"),
                register: u("http://127.0.0.1:9/reg")
            }
        );
    }

    #[test]
    fn authorize_url_appends_to_a_query_and_location_client_id_resolves() {
        let a = authorize_url(
            &u("https://as.example/auth?tenant=t"),
            "c1",
            SCRATCH_REDIRECT,
            "ch",
            "https://mcp.example/mcp",
            Some("mcp:tools offline"),
        );
        let q: Vec<(String, String)> = a.query_pairs().map(|(k, v)| (k.into(), v.into())).collect();
        assert!(q.contains(&("scope".into(), "mcp:tools offline".into())));
        let none = authorize_url(
            &u("https://as.example/auth"),
            "c1",
            SCRATCH_REDIRECT,
            "ch",
            "https://mcp.example/mcp",
            None,
        );
        assert!(!none.query_pairs().any(|(k, _)| k == "scope"));
        assert_eq!(q[0], ("tenant".into(), "t".into()));
        assert!(q.contains(&("client_id".into(), "c1".into())));
        assert!(q.contains(&("redirect_uri".into(), SCRATCH_REDIRECT.into())));
        assert!(q.contains(&("code_challenge_method".into(), "S256".into())));
        assert!(q.contains(&("resource".into(), "https://mcp.example/mcp".into())));
        assert_eq!(
            location_client_id(
                "https://upstream.example/authorize?client_id=static&x=1",
                &a
            ),
            Some("static".into())
        );
        assert_eq!(location_client_id("/interaction/abc", &a), None);
        assert_eq!(
            location_client_id("/login?client_id=c1", &a),
            Some("c1".into())
        );
    }

    fn run_legs(found: &Discovered, info: bool) -> Vec<mcp_probe_schema::model::Record> {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let j = crate::legs::fixture::journal(dir.path(), "http://127.0.0.1:9/mcp");
        let mut p = Probe::new(&client, j.clone(), None, 1);
        p.endpoint = Some(u("http://127.0.0.1:9/mcp"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(p.deputy_legs(found, info));
        let recs = j.lock().expect("journal").records();
        recs
    }

    fn skip_reasons(recs: &[mcp_probe_schema::model::Record]) -> Vec<(Vec<String>, String)> {
        recs.iter()
            .filter_map(|r| match &r.observation {
                Observation::Skipped { reason } => Some((r.legs.clone(), reason.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn closed_gate_and_info_run_skip_every_leg_with_the_reason() {
        let recs = run_legs(&Discovered::default(), true);
        let s = skip_reasons(&recs);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0.len(), 5);
        assert!(s[0].1.contains("--info"));
        let found = Discovered {
            as_metadata: vec![(
                "http://127.0.0.1:9".into(),
                meta(
                    json!("http://127.0.0.1:9/authorize"),
                    json!("http://127.0.0.1:9/reg"),
                ),
            )],
            ..Discovered::default()
        };
        let recs = run_legs(&found, false);
        let s = skip_reasons(&recs);
        assert_eq!(recs.len(), 1, "nothing sent: {recs:?}");
        assert!(s[0].1.contains("authorizes for itself"), "{s:?}");
    }

    #[test]
    fn a_failed_registration_is_recorded_and_ends_the_legs() {
        // Port 1 on loopback: connection refused (the registration is recorded as sent).
        let found = Discovered {
            as_metadata: vec![(
                "http://127.0.0.1:1".into(),
                meta(
                    json!("http://127.0.0.1:1/authorize"),
                    json!("http://127.0.0.1:1/reg"),
                ),
            )],
            ..Discovered::default()
        };
        let recs = run_legs(&found, false);
        let reg: Vec<_> = recs
            .iter()
            .filter(|r| r.legs.iter().any(|l| l == leg::DEPUTY_REGISTER))
            .collect();
        assert_eq!(reg.len(), 1, "{recs:?}");
        match &reg[0].observation {
            Observation::Http(x) => {
                assert_eq!(x.request.method, "POST");
                assert!(matches!(x.outcome, HttpOutcome::Error(_)));
                let b: Value = serde_json::from_slice(&x.request.body.bytes).expect("json");
                assert_eq!(b["client_name"], json!(SCRATCH_CLIENT_NAME));
                assert_eq!(b["redirect_uris"], json!([SCRATCH_REDIRECT]));
                assert_eq!(b["application_type"], json!("native"));
            }
            o => panic!("{o:?}"),
        }
        let s = skip_reasons(&recs);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].1.contains("registration #1 failed"), "{s:?}");
        assert_eq!(s[0].0.len(), 4);
        assert!(!recs
            .iter()
            .any(|r| r.legs.iter().any(|l| l == leg::DEPUTY_AUTHORIZE)
                && matches!(r.observation, Observation::Http(_))));
    }
}
