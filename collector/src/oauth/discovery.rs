//! OAuth discovery (docs/collector.md, "Discovery and the network guard"): protected-resource
//! metadata (RFC 9728, leg `discovery.prm`) and authorization-server metadata (RFC 8414
//! and OpenID Connect discovery, leg `discovery.as`).
//!
//! Every candidate URL is fetched (not only until the first success), each as a `GET`
//! with `Accept: application/json`, no credential and no redirect followed, after the
//! network guard ([`crate::oauth::guard::check_fetch`]) allowed it. A URL the guard refuses is
//! recorded as an HTTP exchange whose outcome is a `refused_by_guard` transport error:
//! nothing was sent. The collector decides nothing here; [`Discovered`] carries what the
//! login needs.

use mcp_probe_schema::model::{
    AuthorizationDefaults, BodyEnd, ErrorKind, Header, HttpOutcome, MetadataRefusal, Observation,
};
use mcp_probe_schema::vocab::{header, leg, LegId};
use mcp_probe_schema::www_authenticate::{self, Challenge};
use serde_json::Value;

use crate::journal::lock;
use crate::mcp::Probe;
use crate::oauth::guard::{self, AddrClass};
use crate::oauth::metadata::{issuer_refusal, resource_refusal};
use crate::transport::http::{self, Request};

pub use mcp_probe_schema::vocab::well_known::AS_LIST_CAP;
use mcp_probe_schema::vocab::well_known::{
    AS as AS_WELL_KNOWN, OIDC as OIDC_WELL_KNOWN, PRM as PRM_WELL_KNOWN,
};

/// What discovery found, for the login.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    /// The `Bearer` challenge of the unauthenticated answer, else its `DPoP` one
    /// (RFC 9449 §7.1; read for `resource_metadata` and `scope` the same way), if any.
    pub challenge: Option<Challenge>,
    /// The `DPoP` challenge of the unauthenticated answer, if any: with no `Bearer`
    /// challenge beside it, the endpoint demands DPoP-bound tokens.
    pub dpop_challenge: Option<Challenge>,
    /// The first protected-resource metadata document (a 200 JSON object), in candidate
    /// order.
    pub prm: Option<Value>,
    /// The URL it came from.
    pub prm_url: Option<String>,
    /// Per advertised authorization server (the string as advertised, at most
    /// [`AS_LIST_CAP`]), the first metadata document with a non-empty `issuer`, when
    /// that issuer is the advertised string itself (RFC 8414 §3.3).
    pub as_metadata: Vec<(String, Value)>,
    /// Documents that were served but refused (the URL and why, also recorded in the
    /// exchange's `refused`): protected-resource metadata for another resource,
    /// authorization-server metadata naming another issuer. Nothing they name is used.
    pub refused: Vec<(String, MetadataRefusal)>,
    /// The MCP 2025-03-26 default endpoints on the endpoint's origin, when an endpoint
    /// that wants credentials published no metadata at all ([`defaults_for`]).
    pub defaults: Option<AuthorizationDefaults>,
}

/// The MCP 2025-03-26 default authorization endpoints of `endpoint`: `/authorize`,
/// `/token` and `/register` on its origin (the authorization base URL), with the seqs of
/// the records that found no metadata.
pub fn defaults_for(endpoint: &url::Url, absent_in: Vec<u64>) -> AuthorizationDefaults {
    let base = endpoint.origin().ascii_serialization();
    AuthorizationDefaults {
        authorization_endpoint: format!("{base}/authorize"),
        token_endpoint: format!("{base}/token"),
        registration_endpoint: format!("{base}/register"),
        base,
        absent_in,
    }
}

/// Protected-resource metadata candidates, in order, without duplicates: the
/// challenge's `resource_metadata` (as sent), the path-inserted well-known URL, the root
/// well-known URL. The well-known URLs use the endpoint's own scheme, host and port.
pub fn prm_candidates(endpoint: &url::Url, challenge: Option<&Challenge>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut push = |s: String| {
        // Compare normalised forms, keep the text as sent.
        let key = url::Url::parse(&s).map_or_else(|_| s.clone(), |u| u.to_string());
        if !keys.contains(&key) {
            keys.push(key);
            out.push(s);
        }
    };
    if let Some(rm) = challenge.and_then(Challenge::resource_metadata) {
        if !rm.trim().is_empty() {
            push(rm.to_string());
        }
    }
    let origin = endpoint.origin().ascii_serialization();
    let path = endpoint.path();
    if path != "/" && !path.is_empty() {
        let mut inserted = format!("{origin}{PRM_WELL_KNOWN}{path}");
        if let Some(q) = endpoint.query() {
            inserted.push('?');
            inserted.push_str(q);
        }
        push(inserted);
    }
    push(format!("{origin}{PRM_WELL_KNOWN}"));
    out
}

/// Why an issuer named by the protected-resource metadata gives no metadata URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadIssuer {
    /// Not a URL at all.
    #[error("authorization server {issuer:?} is not a URL: {error}")]
    NotUrl {
        /// The issuer as named.
        issuer: String,
        /// Why it did not parse.
        error: url::ParseError,
    },
    /// A URL, but not http(s) with a host.
    #[error("authorization server {issuer:?} is not an http(s) URL with a host")]
    NotHttp {
        /// The issuer as named.
        issuer: String,
    },
}

/// The RFC 8414 / OIDC metadata URLs of an issuer, in the order tried: with a path,
/// `/.well-known/oauth-authorization-server<path>`, `/.well-known/openid-configuration<path>`,
/// `<issuer>/.well-known/openid-configuration`; at the root, the two root forms. An
/// issuer that is not an http(s) URL with a host gives the reason instead.
pub fn as_metadata_urls(issuer: &str) -> Result<Vec<url::Url>, BadIssuer> {
    let iu = url::Url::parse(issuer).map_err(|e| BadIssuer::NotUrl {
        issuer: issuer.to_string(),
        error: e,
    })?;
    if !matches!(iu.scheme(), "http" | "https") || iu.host().is_none() {
        return Err(BadIssuer::NotHttp {
            issuer: issuer.to_string(),
        });
    }
    let p = iu.path().trim_end_matches('/').to_string();
    let mut base = iu;
    base.set_query(None);
    base.set_fragment(None);
    let paths = if p.is_empty() {
        vec![AS_WELL_KNOWN.to_string(), OIDC_WELL_KNOWN.to_string()]
    } else {
        vec![
            format!("{AS_WELL_KNOWN}{p}"),
            format!("{OIDC_WELL_KNOWN}{p}"),
            format!("{p}{OIDC_WELL_KNOWN}"),
        ]
    };
    Ok(paths
        .into_iter()
        .map(|path| {
            let mut u = base.clone();
            u.set_path(&path);
            u
        })
        .collect())
}

fn discovery_headers() -> Vec<Header> {
    vec![Header::new(header::ACCEPT, "application/json")]
}

impl Probe<'_> {
    /// Run discovery for the detected endpoint. `challenge` is the raw
    /// `WWW-Authenticate` value of the unauthenticated answer (several fields joined with
    /// `, `), if there was one. The target's address class (for the guard's same-class
    /// exception) comes from the addresses the endpoint resolved to.
    pub async fn discovery(&mut self, challenge: Option<Vec<u8>>) -> Discovered {
        let class = self.endpoint_class().await;
        self.discovery_for(challenge, class).await
    }

    /// [`Probe::discovery`] with the target's address class given.
    pub async fn discovery_for(
        &mut self,
        challenge: Option<Vec<u8>>,
        target_class: AddrClass,
    ) -> Discovered {
        let Some(endpoint) = self.endpoint.clone() else {
            lock(&self.journal).skip(
                &[leg::PRM, leg::AS_META],
                "not sent: no endpoint was detected",
            );
            return Discovered::default();
        };
        let challenges = challenge
            .as_deref()
            .map(|raw| www_authenticate::parse(raw).challenges)
            .unwrap_or_default();
        let dpop = challenges.iter().find(|c| c.is_scheme("DPoP")).cloned();
        let bearer = challenges
            .iter()
            .find(|c| c.is_bearer())
            .cloned()
            .or_else(|| dpop.clone());
        let mut out = Discovered {
            challenge: bearer.clone(),
            dpop_challenge: dpop,
            ..Discovered::default()
        };
        let mut docs: Vec<(String, Value)> = Vec::new();
        // Records of a clean absence (404, 410); `None` once any answer was something else.
        let mut absent: Option<Vec<u64>> = Some(Vec::new());
        for cand in prm_candidates(&endpoint, bearer.as_ref()) {
            // RFC 9728 §3.3: a document for another resource is not used, neither its
            // authorization servers nor anything else in it.
            let vet = |doc: &Value| resource_refusal(&endpoint, doc);
            match self
                .guarded_get(leg::PRM, &cand, target_class, &endpoint, &vet)
                .await
            {
                Fetched::Doc(doc) => {
                    absent = None;
                    docs.push((cand, doc));
                }
                Fetched::Refused(r) => {
                    absent = None;
                    out.refused.push((cand, r));
                }
                Fetched::Absent(seq) => {
                    if let Some(a) = absent.as_mut() {
                        a.push(seq);
                    }
                }
                Fetched::Nothing => absent = None,
            }
        }
        if let Some((u, d)) = docs.first() {
            out.prm_url = Some(u.clone());
            out.prm = Some(d.clone());
        }

        let mut issuers: Vec<String> = Vec::new();
        let mut over: Vec<String> = Vec::new();
        let mut discarded = 0usize;
        let mut not_lists = Vec::new();
        for (u, d) in &docs {
            match d.get("authorization_servers") {
                None => {}
                Some(Value::Array(list)) => {
                    for e in list {
                        match e.as_str() {
                            Some(s) if !s.trim().is_empty() => {
                                let s = s.to_string();
                                if issuers.contains(&s) || over.contains(&s) {
                                } else if issuers.len() < AS_LIST_CAP {
                                    issuers.push(s);
                                } else {
                                    over.push(s);
                                }
                            }
                            _ => discarded += 1,
                        }
                    }
                }
                Some(_) => not_lists.push(u.clone()),
            }
        }
        {
            let mut j = lock(&self.journal);
            if discarded > 0 {
                j.skip(
                    &[leg::AS_META],
                    format!("not used: {discarded} authorization_servers entries that are not non-blank strings"),
                );
            }
            if !not_lists.is_empty() {
                j.skip(
                    &[leg::AS_META],
                    format!(
                        "not used: authorization_servers is not an array in {}",
                        not_lists.join(", ")
                    ),
                );
            }
            if !over.is_empty() {
                j.skip(
                    &[leg::AS_META],
                    format!(
                        "not sent: {} authorization servers beyond the first {AS_LIST_CAP} distinct ones: {}",
                        over.len(),
                        over.join(", ")
                    ),
                );
            }
            if issuers.is_empty() {
                let why = if docs.is_empty() && !out.refused.is_empty() {
                    "not sent: every protected-resource metadata document served was refused (its resource does not cover the endpoint, RFC 9728 §3.3)"
                } else if docs.is_empty() {
                    "not sent: no protected-resource metadata document was served (no 200 JSON object)"
                } else {
                    "not sent: no protected-resource metadata document advertised an authorization server"
                };
                j.skip(&[leg::AS_META], why);
            }
        }

        // MCP 2025-03-26 (no protected-resource metadata in that revision): an endpoint
        // that wants credentials and publishes no protected-resource metadata at all (every
        // form a clean 404, no `resource_metadata` in the challenge) has its authorization
        // server metadata at its own origin, and without it the default endpoints there.
        let challenged = lock(&self.journal)
            .session()
            .is_some_and(|s| s.auth_required);
        let named = bearer
            .as_ref()
            .and_then(Challenge::resource_metadata)
            .is_some_and(|r| !r.trim().is_empty());
        if let (true, false, true, Some(mut seqs)) = (challenged, named, issuers.is_empty(), absent)
        {
            let base = endpoint.origin().ascii_serialization();
            let form = format!("{base}{AS_WELL_KNOWN}");
            let vet = |doc: &Value| {
                url::Url::parse(&form)
                    .ok()
                    .and_then(|u| issuer_refusal(&base, &u, doc))
            };
            match self
                .guarded_get(leg::AS_META, &form, target_class, &endpoint, &vet)
                .await
            {
                Fetched::Doc(d)
                    if d.get("issuer")
                        .and_then(Value::as_str)
                        .is_some_and(|s| !s.is_empty()) =>
                {
                    out.as_metadata.push((base, d));
                }
                Fetched::Refused(r) => out.refused.push((form, r)),
                Fetched::Absent(seq) => {
                    seqs.push(seq);
                    out.defaults = Some(defaults_for(&endpoint, seqs));
                }
                _ => {}
            }
        }

        for issuer in issuers {
            let forms = match as_metadata_urls(&issuer) {
                Ok(f) => f,
                Err(why) => {
                    self.record_refusal(
                        leg::AS_META,
                        &issuer,
                        ErrorKind::RefusedByGuard,
                        format!("refused {issuer}: {why}"),
                    );
                    continue;
                }
            };
            for form in forms {
                // RFC 8414 §3.3 (OIDC Discovery §4.3): metadata naming another issuer is
                // refused before anything is sent to the endpoints it names.
                let vet = |doc: &Value| issuer_refusal(&issuer, &form, doc);
                let doc = match self
                    .guarded_get(leg::AS_META, form.as_str(), target_class, &endpoint, &vet)
                    .await
                {
                    Fetched::Doc(d) => d,
                    Fetched::Refused(r) => {
                        // The first form that served an issuer decides, as for a match.
                        out.refused.push((form.to_string(), r));
                        break;
                    }
                    Fetched::Nothing | Fetched::Absent(_) => continue,
                };
                let has_issuer = doc
                    .get("issuer")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty());
                if has_issuer {
                    out.as_metadata.push((issuer.clone(), doc));
                    break;
                }
            }
        }
        out
    }

    /// The address class of the endpoint: from the addresses recorded for the target,
    /// else from a lookup of the endpoint host; public (the strictest) when unknown.
    async fn endpoint_class(&self) -> AddrClass {
        let recorded = lock(&self.journal).target_ips();
        if !recorded.is_empty() {
            return guard::target_class(&recorded);
        }
        let Some(ep) = self.endpoint.as_ref() else {
            return AddrClass::Public;
        };
        let host = match ep.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(h) => h.to_string(),
            None => return AddrClass::Public,
        };
        let port = ep.port_or_known_default().unwrap_or(80);
        let resolved = tokio::time::timeout(
            guard::RESOLVE_TIMEOUT,
            crate::transport::resolve::lookup(&host, port),
        )
        .await;
        match resolved {
            Ok(Ok(a)) => guard::target_class(&a.iter().map(|s| s.ip()).collect::<Vec<_>>()),
            _ => AddrClass::Public,
        }
    }

    /// Record a request that was not sent (guard refusal, unresolvable host).
    pub(crate) fn record_refusal(&self, l: LegId, url: &str, kind: ErrorKind, reason: String) {
        let exchange = http::unsent("GET", url, discovery_headers(), &[], kind, reason);
        lock(&self.journal).record(
            &[l],
            chrono::Utc::now().timestamp_micros(),
            0,
            Observation::Http(exchange),
        );
    }

    /// A guarded discovery `GET` of `text` recorded under `l`: no credential, no
    /// redirect followed. A 200 JSON object is the document, unless `vet` refuses it:
    /// the refusal is then recorded in the exchange (`refused`) and returned.
    pub(crate) async fn guarded_get(
        &mut self,
        l: LegId,
        text: &str,
        target_class: AddrClass,
        endpoint: &url::Url,
        vet: &(dyn Fn(&Value) -> Option<MetadataRefusal> + Sync),
    ) -> Fetched {
        let url = match url::Url::parse(text) {
            Ok(u) => u,
            Err(e) => {
                self.record_refusal(
                    l,
                    text,
                    ErrorKind::RefusedByGuard,
                    format!("refused {text}: not a URL ({e})"),
                );
                return Fetched::Nothing;
            }
        };
        let pinned = match guard::check_fetch(&url, target_class).await {
            Ok(addrs) => addrs,
            Err(r) => {
                self.record_refusal(l, text, r.kind, r.reason);
                return Fetched::Nothing;
            }
        };
        let req = Request {
            method: "GET".into(),
            url: url.clone(),
            headers: discovery_headers(),
            body: Vec::new(),
            await_id: None,
            head_only_stream: false,
            // Connect to the addresses the guard checked, not a second DNS answer.
            connect_to: Some(pinned),
        };
        let mut sent = self.client.send(req).await;
        // The client resolves again when it connects: an answer from an address the
        // guard would refuse (DNS rebinding between the two lookups) is not used.
        let rebound = sent.resolved.as_ref().and_then(|addrs| {
            addrs.iter().find_map(|a| {
                guard::permitted(a.ip(), target_class)
                    .err()
                    .map(|c| (a.ip(), c))
            })
        });
        let mut j = lock(&self.journal);
        sent.record_tls(&mut j, http::tls_leg(&url, endpoint, l));
        let doc = match &sent.exchange.outcome {
            HttpOutcome::Response(r) if r.status == 200 && r.body.end == BodyEnd::Complete => {
                serde_json::from_slice::<Value>(&r.body.bytes)
                    .ok()
                    .filter(Value::is_object)
            }
            _ => None,
        };
        // An answer from a rebound address is not used anyway (its note says why).
        let refused = doc.as_ref().filter(|_| rebound.is_none()).and_then(vet);
        sent.exchange.refused = refused.clone().map(Box::new);
        let status = match &sent.exchange.outcome {
            HttpOutcome::Response(r) if r.body.end == BodyEnd::Complete => Some(r.status),
            _ => None,
        };
        let seq = j.record(
            &[l],
            sent.started_at,
            sent.duration.as_micros() as u64,
            Observation::Http(sent.exchange),
        );
        if let Some((ip, class)) = rebound {
            j.skip(
                &[l],
                format!("not used: the answer from {url} came from {ip} ({class}), which the guard refuses for a {target_class} target"),
            );
            return Fetched::Nothing;
        }
        match (refused, doc) {
            (Some(r), _) => Fetched::Refused(r),
            (None, Some(d)) => Fetched::Doc(d),
            (None, None) if matches!(status, Some(404 | 410)) => Fetched::Absent(seq),
            (None, None) => Fetched::Nothing,
        }
    }
}

/// What one guarded discovery fetch gave.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// A 200 JSON object that may be used.
    Doc(Value),
    /// A 200 JSON object that was refused (recorded in the exchange).
    Refused(MetadataRefusal),
    /// A clean absence: a complete 404 or 410 answer (the record's seq).
    Absent(u64),
    /// Anything else: refused by the guard, not 200, not a JSON object, not used.
    Nothing,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn ch(scheme: &str, params: &[(&str, &str)]) -> Challenge {
        Challenge::new(scheme, params)
    }

    #[test]
    fn candidates_in_order_without_duplicates() {
        let ep = url::Url::parse("http://127.0.0.1:48201/mcp").unwrap();
        let same = ch(
            "Bearer",
            &[(
                "resource_metadata",
                "http://127.0.0.1:48201/.well-known/oauth-protected-resource/mcp",
            )],
        );
        assert_eq!(
            prm_candidates(&ep, Some(&same)),
            vec![
                "http://127.0.0.1:48201/.well-known/oauth-protected-resource/mcp",
                "http://127.0.0.1:48201/.well-known/oauth-protected-resource",
            ]
        );
        let other = ch(
            "Bearer",
            &[("resource_metadata", "https://meta.example/prm")],
        );
        let ep = url::Url::parse("https://mcp.example.com/v1/mcp").unwrap();
        assert_eq!(
            prm_candidates(&ep, Some(&other)),
            vec![
                "https://meta.example/prm",
                "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        let root = url::Url::parse("https://mcp.example.com/").unwrap();
        assert_eq!(
            prm_candidates(&root, None),
            vec!["https://mcp.example.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn as_forms() {
        let s = |v: Vec<url::Url>| v.into_iter().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            s(as_metadata_urls("http://127.0.0.1:48205").unwrap()),
            vec![
                "http://127.0.0.1:48205/.well-known/oauth-authorization-server",
                "http://127.0.0.1:48205/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            s(as_metadata_urls("https://auth.example.com/tenant1/").unwrap()),
            vec![
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert!(as_metadata_urls("not a url").is_err());
        assert!(as_metadata_urls("urn:example:as").is_err());
        assert!(as_metadata_urls("ftp://as.example/").is_err());
    }
}
