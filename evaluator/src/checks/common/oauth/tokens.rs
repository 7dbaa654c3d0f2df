//! The access tokens a run held (`payload.tokens`, facts only, never the tokens): issued
//! lifetime, granted scopes, audiences.

use mcp_probe_schema::model::{Session, TokenFacts};
use serde_json::{Map, Value};

/// ` (DPoP-bound: sender-constrained by RFC 9449 to the key with thumbprint …)` when the bundle says
/// the probe presented `t` bound to its key (`session.dpop.used` and `token_type` `DPoP`);
/// empty otherwise, and for every bundle without `session.dpop`. Wording only: no
/// verdict reads it.
pub(crate) fn binding_note(session: Option<&Session>, t: &TokenFacts) -> String {
    let Some(d) = session.and_then(|s| s.dpop.as_ref()).filter(|d| d.used) else {
        return String::new();
    };
    if !t
        .token_type
        .as_deref()
        .is_some_and(|x| x.eq_ignore_ascii_case("dpop"))
    {
        return String::new();
    }
    match &d.jkt {
        Some(j) => crate::format_exact!(
            " (DPoP-bound: sender-constrained by RFC 9449 to the key with thumbprint {})",
            crate::fmt::Line(j)
        ),
        None => " (DPoP-bound: sender-constrained by RFC 9449)".into(),
    }
}

pub(crate) fn claims(t: &TokenFacts) -> Option<&Map<String, Value>> {
    t.jwt_claims.as_ref().and_then(Value::as_object)
}

/// A number claim as f64 (integers and finite floats).
pub(crate) fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|f| f.is_finite())
}

/// The issued lifetime in seconds and where it came from: `expires_in` from the token
/// response, else `exp - iat` (rounded up). Never the wall clock: a token read late in
/// its life would look shorter than issued.
pub(crate) fn issued_lifetime(t: &TokenFacts) -> Option<(i64, &'static str)> {
    if let Some(e) = t.expires_in {
        return Some((e, "expires_in of the token response"));
    }
    let c = claims(t)?;
    let (exp, iat) = (num(c.get("exp"))?, num(c.get("iat"))?);
    let d = (exp - iat).ceil();
    (d.abs() < 1e15).then_some((d as i64, "exp - iat of the JWT claims"))
}

/// Granted scopes: the token response's `scope` wins even
/// when empty; else claim `scope`, else `scp` (a string split on whitespace, or a list's
/// strings); a claim of another type is skipped. `None` (unobserved) is not `Some([])`
/// (observed empty).
pub(crate) fn observed_scopes(
    scope_field: Option<&str>,
    claims: Option<&Map<String, Value>>,
) -> Option<Vec<String>> {
    if let Some(s) = scope_field {
        return Some(dedup(s.split_whitespace().map(str::to_string)));
    }
    let c = claims?;
    for name in ["scope", "scp"] {
        match c.get(name) {
            Some(Value::String(s)) => return Some(dedup(s.split_whitespace().map(str::to_string))),
            Some(Value::Array(a)) => {
                return Some(dedup(
                    a.iter().filter_map(Value::as_str).map(str::to_string),
                ))
            }
            _ => {}
        }
    }
    None
}

/// `aud` as a list: a string, or a list's strings.
pub(crate) fn audiences(claims: Option<&Map<String, Value>>) -> Vec<String> {
    match claims.and_then(|c| c.get("aud")) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether an audience is a web address (an http or https URL with a host): a service
/// named by where it is. Anything else (an application id GUID, an App ID URI such as
/// `api://…`, an API identifier, a client id) names a service by an identifier the token
/// alone cannot resolve to a server: it may be this server's own.
pub(crate) fn is_url_audience(a: &str) -> bool {
    url::Url::parse(a).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// Scopes whose last colon-separated segment is exactly `*` (`*`, `admin:*`).
pub(crate) fn wildcards(scopes: &[String]) -> Vec<String> {
    scopes
        .iter()
        .filter(|s| s.rsplit(':').next() == Some("*"))
        .cloned()
        .collect()
}

/// Scopes whose first colon-separated segment is `admin`.
pub(crate) fn admin_tier(scopes: &[String]) -> Vec<String> {
    scopes
        .iter()
        .filter(|s| s.split(':').next() == Some("admin"))
        .cloned()
        .collect()
}

pub(crate) fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// "the token (env:MCP_TOKEN)" or "token #2 (oauth)".
pub(crate) fn token_label(i: usize, t: &TokenFacts, n: usize) -> String {
    if n == 1 {
        crate::format_exact!("the token ({})", crate::fmt::Line(&t.source))
    } else {
        crate::format_exact!("token #{} ({})", i + 1, crate::fmt::Line(&t.source))
    }
}

#[cfg(test)]
mod audience_tests {
    use super::is_url_audience;

    #[test]
    fn only_web_addresses_are_url_audiences() {
        assert!(is_url_audience("https://mcp.example/mcp"));
        assert!(is_url_audience("http://127.0.0.1:8080/mcp"));
        assert!(!is_url_audience("6731de76-14a6-49ae-97bc-6eba6914391e"));
        assert!(!is_url_audience(
            "api://6731de76-14a6-49ae-97bc-6eba6914391e"
        ));
        assert!(!is_url_audience("my-api"));
        assert!(!is_url_audience(""));
    }
}
