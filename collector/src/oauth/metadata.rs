//! What the login needs from the metadata: the validated authorization-server metadata
//! (RFC 8414, PKCE S256 required), the RFC 8707 resource to ask a token for (it must
//! cover the endpoint), and the scope to request.

use mcp_probe_schema::model::MetadataRefusal;
use mcp_probe_schema::vocab::well_known::OIDC as OIDC_WELL_KNOWN;
use serde_json::Value;

use super::error::LoginError;

/// The parts of RFC 8414 metadata the login uses, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsMetadata {
    /// `issuer`.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: url::Url,
    /// `token_endpoint`.
    pub token_endpoint: url::Url,
    /// `registration_endpoint`, when dynamic registration is offered.
    pub registration_endpoint: Option<url::Url>,
    /// `authorization_response_iss_parameter_supported` (RFC 9207): `iss` is then
    /// required on the redirect.
    pub iss_parameter_supported: bool,
    /// `token_endpoint_auth_methods_supported` (its strings), when the metadata has the
    /// list; how a pre-registered client's secret is sent.
    pub token_endpoint_auth_methods: Option<Vec<String>>,
    /// `token_endpoint_auth_signing_alg_values_supported`, when listed: the algorithms a
    /// `private_key_jwt` client assertion may be signed with.
    pub token_endpoint_auth_signing_algs: Option<Vec<String>>,
    /// `grant_types_supported`, when listed (RFC 8414 §2: absent means
    /// `authorization_code` and `implicit`).
    pub grant_types: Option<Vec<String>>,
    /// `client_id_metadata_document_supported`: the server accepts an HTTPS URL as a
    /// client id and fetches the client's metadata from it (Client ID Metadata Documents).
    pub client_id_metadata_document_supported: bool,
    /// S256 is among `code_challenge_methods_supported` (required for an
    /// authorization-code login; the unattended grants use no PKCE).
    pub pkce_s256: bool,
}

/// The strings of an array member of `v`, when it is an array.
fn strings(v: &Value, name: &str) -> Option<Vec<String>> {
    v.get(name).and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

impl AsMetadata {
    /// Read and validate metadata: an issuer, http(s) authorization and token endpoints,
    /// and S256 among `code_challenge_methods_supported` (an absent list means no PKCE,
    /// and MCP clients must then refuse to proceed).
    pub fn parse(v: &Value) -> Result<AsMetadata, LoginError> {
        Self::parse_for(v, true)
    }

    /// [`AsMetadata::parse`], with PKCE S256 required only when `authorization_code` is
    /// true (a grant without a browser step has no code to protect).
    pub fn parse_for(v: &Value, authorization_code: bool) -> Result<AsMetadata, LoginError> {
        let issuer = v
            .get("issuer")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| LoginError::Metadata("no issuer".into()))?
            .to_string();
        let endpoint = |name: &str| -> Result<Option<url::Url>, LoginError> {
            match v.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => match url::Url::parse(s) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(Some(u)),
                    _ => Err(LoginError::Metadata(format!(
                        "{name} {s:?} is not an http(s) URL"
                    ))),
                },
                Some(other) => Err(LoginError::Metadata(format!(
                    "{name} is not a string: {other}"
                ))),
            }
        };
        let required =
            |name: &str| endpoint(name)?.ok_or_else(|| LoginError::Metadata(format!("no {name}")));
        let authorization_endpoint = required("authorization_endpoint")?;
        let token_endpoint = required("token_endpoint")?;
        let registration_endpoint = endpoint("registration_endpoint")?;
        let s256 = v
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|m| m.as_str() == Some("S256")));
        if !s256 && authorization_code {
            return Err(LoginError::NoPkce { issuer });
        }
        Ok(AsMetadata {
            issuer,
            authorization_endpoint,
            token_endpoint,
            registration_endpoint,
            iss_parameter_supported: v
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            token_endpoint_auth_methods: strings(v, "token_endpoint_auth_methods_supported"),
            token_endpoint_auth_signing_algs: strings(
                v,
                "token_endpoint_auth_signing_alg_values_supported",
            ),
            grant_types: strings(v, "grant_types_supported"),
            client_id_metadata_document_supported: v
                .get("client_id_metadata_document_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            pkce_s256: s256,
        })
    }
}

/// The RFC 8707 resource to ask a token for: the protected-resource metadata's
/// `resource` when it covers the endpoint (same origin, endpoint path at or below it),
/// else — when the metadata names none — the endpoint URL itself. A `resource` that
/// does not cover the endpoint is refused: a token for it would be a token for
/// another server.
pub fn resource_for(endpoint: &url::Url, prm: Option<&Value>) -> Result<String, LoginError> {
    let mut own = endpoint.clone();
    own.set_fragment(None);
    let Some(advertised) = prm.and_then(|p| p.get("resource")).and_then(Value::as_str) else {
        return Ok(own.to_string());
    };
    let mismatch = || LoginError::ResourceMismatch {
        resource: advertised.to_string(),
        endpoint: endpoint.to_string(),
    };
    let r = url::Url::parse(advertised).map_err(|_| mismatch())?;
    let slash = |p: &str| {
        if p.ends_with('/') {
            p.to_string()
        } else {
            format!("{p}/")
        }
    };
    if r.origin() == own.origin() && slash(own.path()).starts_with(&slash(r.path())) {
        Ok(advertised.to_string())
    } else {
        Err(mismatch())
    }
}

/// The rule an authorization-server metadata document fetched from `url` answers to:
/// OpenID Connect Discovery §4.3 for an `openid-configuration` form, RFC 8414 §3.3
/// otherwise. Both say the same: the `issuer` must be identical to the issuer the URL was
/// built from, or the document must not be used.
fn issuer_rule(url: &url::Url) -> &'static str {
    if url.path().contains(OIDC_WELL_KNOWN) {
        "OpenID Connect Discovery §4.3"
    } else {
        "RFC 8414 §3.3"
    }
}

/// Why the authorization-server metadata `doc`, fetched from `url` for the advertised
/// `issuer`, must not be used: its `issuer` is a non-empty string that is not identical
/// to the advertised one (simple string comparison, no normalisation). `None`: the
/// document may be used (a document with no issuer is not metadata at all; discovery
/// goes on to the next form, as before).
pub fn issuer_refusal(issuer: &str, url: &url::Url, doc: &Value) -> Option<MetadataRefusal> {
    let served = doc.get("issuer")?;
    let named = served.as_str().filter(|s| !s.is_empty())?;
    (named != issuer).then(|| MetadataRefusal {
        member: "issuer".into(),
        expected: issuer.to_string(),
        served: served.clone(),
        rule: issuer_rule(url).into(),
    })
}

/// Why the protected-resource metadata `doc` must not be used for `endpoint`
/// (RFC 9728 §3.3): its `resource` is not a string, or names a resource that does not
/// cover the endpoint ([`resource_for`]: the endpoint itself, or a same-origin parent
/// path, which is what MCP's root well-known fallback gives). An absent `resource` is
/// not refused (the endpoint is then the resource asked for, as before).
pub fn resource_refusal(endpoint: &url::Url, doc: &Value) -> Option<MetadataRefusal> {
    let served = doc.get("resource").filter(|v| !v.is_null())?;
    let refused = !served.is_string() || resource_for(endpoint, Some(doc)).is_err();
    refused.then(|| MetadataRefusal {
        member: "resource".into(),
        expected: endpoint.to_string(),
        served: served.clone(),
        rule: "RFC 9728 §3.3".into(),
    })
}

/// The one line that says why a metadata document served at `url` was not used.
pub fn describe_refusal(url: &str, r: &MetadataRefusal) -> String {
    let served = match &r.served {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    match r.member.as_str() {
        "issuer" => format!(
            "the authorization-server metadata at {url} names issuer {served}, not {:?}, the issuer it \
             was fetched for ({}): issuer mismatch, the metadata was not used and nothing was sent \
             to its endpoints",
            r.expected, r.rule
        ),
        _ => format!(
            "the protected-resource metadata at {url} names resource {served}, which does not cover \
             the endpoint {} ({}): resource mismatch, the metadata was not used",
            r.expected, r.rule
        ),
    }
}

/// The scope to request (MCP scope selection): the challenge's `scope` when the 401
/// named one, else every string of the protected-resource metadata's
/// `scopes_supported`, else none (the parameter is omitted).
pub fn scope_for(challenge_scope: Option<&str>, prm: Option<&Value>) -> Option<String> {
    if let Some(s) = challenge_scope.map(str::trim).filter(|s| !s.is_empty()) {
        return Some(s.to_string());
    }
    let list: Vec<&str> = prm
        .and_then(|p| p.get("scopes_supported"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    (!list.is_empty()).then(|| list.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resource_must_cover_the_endpoint() {
        let ep = url::Url::parse("https://h.example/mcp").unwrap();
        let prm = |r: &str| json!({ "resource": r });
        assert_eq!(resource_for(&ep, None).unwrap(), "https://h.example/mcp");
        assert_eq!(
            resource_for(&ep, Some(&prm("https://h.example/mcp"))).unwrap(),
            "https://h.example/mcp"
        );
        assert_eq!(
            resource_for(&ep, Some(&prm("https://h.example/"))).unwrap(),
            "https://h.example/"
        );
        for bad in [
            "https://h.example/mcpx",
            "https://other.example/mcp",
            "http://h.example/mcp",
            "nonsense",
        ] {
            assert!(resource_for(&ep, Some(&prm(bad))).is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_for_another_issuer_or_resource_is_refused() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        let as_form = u("http://127.0.0.1:9/.well-known/oauth-authorization-server");
        let oidc_form = u("http://127.0.0.1:9/.well-known/openid-configuration");
        let doc = json!({"issuer": "https://attacker.example.com"});
        let r = issuer_refusal("http://127.0.0.1:9", &as_form, &doc).unwrap();
        assert_eq!(
            (r.member.as_str(), r.expected.as_str(), r.rule.as_str()),
            ("issuer", "http://127.0.0.1:9", "RFC 8414 §3.3")
        );
        assert_eq!(r.served, json!("https://attacker.example.com"));
        let line = describe_refusal(as_form.as_str(), &r);
        assert!(
            line.contains("issuer mismatch") && !line.contains('\n'),
            "{line}"
        );
        let r = issuer_refusal("http://127.0.0.1:9", &oidc_form, &doc).unwrap();
        assert_eq!(r.rule, "OpenID Connect Discovery §4.3");
        // Identical strings only: a trailing slash is another issuer.
        let slash = json!({"issuer": "http://127.0.0.1:9/"});
        assert!(issuer_refusal("http://127.0.0.1:9", &as_form, &slash).is_some());
        let same = json!({"issuer": "http://127.0.0.1:9"});
        assert!(issuer_refusal("http://127.0.0.1:9", &as_form, &same).is_none());
        // No issuer: not metadata, not a refusal.
        assert!(issuer_refusal("http://127.0.0.1:9", &as_form, &json!({})).is_none());
        assert!(issuer_refusal("http://127.0.0.1:9", &as_form, &json!({"issuer": ""})).is_none());

        let ep = u("http://127.0.0.1:9/mcp");
        for ok in [
            json!({}),
            json!({"resource": null}),
            json!({"resource": "http://127.0.0.1:9/mcp"}),
            json!({"resource": "http://127.0.0.1:9/"}),
        ] {
            assert!(resource_refusal(&ep, &ok).is_none(), "{ok}");
        }
        for bad in [
            json!({"resource": "https://attacker.example.com/mcp"}),
            json!({"resource": "http://127.0.0.1:9/other"}),
            json!({"resource": 42}),
        ] {
            let r = resource_refusal(&ep, &bad).expect("refused");
            assert_eq!(
                (r.member.as_str(), r.rule.as_str()),
                ("resource", "RFC 9728 §3.3")
            );
            assert_eq!(r.served, bad["resource"]);
            let line = describe_refusal("http://127.0.0.1:9/prm", &r);
            assert!(line.contains("does not cover the endpoint"), "{line}");
        }
    }

    #[test]
    fn scope_prefers_the_challenge() {
        let prm = json!({ "scopes_supported": ["a", "b", 3] });
        assert_eq!(scope_for(Some("x y"), Some(&prm)).as_deref(), Some("x y"));
        assert_eq!(scope_for(None, Some(&prm)).as_deref(), Some("a b"));
        assert_eq!(scope_for(Some(" "), None), None);
    }

    #[test]
    fn metadata_requires_s256() {
        let mut m = json!({
            "issuer": "https://as.example", "authorization_endpoint": "https://as.example/auth",
            "token_endpoint": "https://as.example/token", "code_challenge_methods_supported": ["plain"],
        });
        assert!(matches!(
            AsMetadata::parse(&m),
            Err(LoginError::NoPkce { .. })
        ));
        m["code_challenge_methods_supported"] = json!(["S256"]);
        let p = AsMetadata::parse(&m).unwrap();
        assert!(!p.iss_parameter_supported && p.registration_endpoint.is_none());
        m["token_endpoint"] = json!("ftp://x");
        assert!(matches!(
            AsMetadata::parse(&m),
            Err(LoginError::Metadata(_))
        ));
    }
}
