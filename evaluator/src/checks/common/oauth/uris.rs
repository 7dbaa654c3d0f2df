//! URIs: the canonical resource of an endpoint (RFC 8707), resource coverage, and the
//! RFC 9728 / RFC 8414 discovery URLs a client derives.

use mcp_probe_schema::host;
use mcp_probe_schema::vocab::well_known::{
    AS as AS_WELL_KNOWN, OIDC as OIDC_WELL_KNOWN, PRM as PRM_WELL_KNOWN,
};
use url::Url;

/// The canonical resource URI of an endpoint (RFC 8707; the SDK's
/// `resource_url_from_server_url`): the URL with its fragment dropped, scheme and host
/// lower-cased. `None` when the endpoint is not a hierarchical URL.
pub(crate) fn canonical_resource(endpoint: &str) -> Option<String> {
    let mut u = Url::parse(endpoint).ok()?;
    if u.cannot_be_a_base() || u.host_str().is_none() {
        return None;
    }
    u.set_fragment(None);
    Some(u.to_string())
}

/// Does `configured` cover `requested` (the SDK's `check_resource_allowed`): same scheme,
/// host and port, and the requested path at or below the configured path, compared with
/// a trailing `/` on both so `/api123` is not under `/api`. `None` when either is not
/// parsable as a URI.
pub(crate) fn resource_covers(configured: &str, requested: &str) -> Option<bool> {
    let c = Url::parse(configured).ok()?;
    let r = Url::parse(requested).ok()?;
    if c.scheme() != r.scheme()
        || c.host_str() != r.host_str()
        || c.port_or_known_default() != r.port_or_known_default()
    {
        return Some(false);
    }
    let (mut cp, mut rp) = (c.path().to_string(), r.path().to_string());
    if rp.len() < cp.len() {
        return Some(false);
    }
    if !cp.ends_with('/') {
        cp.push('/');
    }
    if !rp.ends_with('/') {
        rp.push('/');
    }
    Some(rp.starts_with(&cp))
}

/// One trailing slash removed (the `no-token-passthrough` audience comparison).
pub(crate) fn strip_slash(s: &str) -> &str {
    s.strip_suffix('/').unwrap_or(s)
}

/// A URL in the form used to match records to expected URLs: parsed and re-serialised
/// (case, default port), fragment dropped, one trailing slash removed.
pub(crate) fn norm(u: &str) -> String {
    match parse_unfragmented(u) {
        Some(p) => normed(p),
        None => strip_slash(u.trim()).to_string(),
    }
}

/// [`norm`] of a URL parsed by [`parse_unfragmented`]: its own serialisation (not a copy
/// of it), cut to what [`strip_slash`] leaves of it.
pub(crate) fn normed(p: Url) -> String {
    let mut s = String::from(p);
    s.truncate(strip_slash(&s).len());
    s
}

/// `u` parsed with its fragment dropped, so that [`norm_with`] reads [`norm`] of it off
/// the parse (which then also serves for the URL's origin and path); `None` when `u`
/// does not parse.
pub(crate) fn parse_unfragmented(u: &str) -> Option<Url> {
    let mut p = Url::parse(u).ok()?;
    p.set_fragment(None);
    Some(p)
}

/// [`norm`] of `u`, borrowed from `parsed`, `u`'s parse by [`parse_unfragmented`] (or
/// from `u` itself when it does not parse).
pub(crate) fn norm_with<'a>(u: &'a str, parsed: Option<&'a Url>) -> &'a str {
    match parsed {
        Some(p) => strip_slash(p.as_str()),
        None => strip_slash(u.trim()),
    }
}

/// How a URL's transport reads for `oauth-discovery-validated` (sub-verdicts a and c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Tls,
    LoopbackPlain,
    Plain,
}

pub(crate) fn transport_of(url: &str) -> Transport {
    match Url::parse(url) {
        Ok(u) if u.scheme() == "https" => Transport::Tls,
        Ok(u) if host::is_loopback_url(&u) => Transport::LoopbackPlain,
        _ => Transport::Plain,
    }
}

/// The RFC 9728 candidates a client derives from the endpoint: the path-inserted
/// well-known URL (the endpoint's path and query after the well-known suffix), then the
/// root one (one URL when the endpoint has no path).
pub(crate) fn prm_well_known(endpoint: &str) -> Vec<String> {
    let Ok(u) = Url::parse(endpoint) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path();
    let root = crate::format_exact!("{origin}{PRM_WELL_KNOWN}");
    if path.is_empty() || path == "/" {
        return vec![root];
    }
    let mut inserted = crate::format_exact!("{origin}{PRM_WELL_KNOWN}{path}");
    if let Some(q) = u.query() {
        inserted.push('?');
        inserted.push_str(q);
    }
    vec![inserted, root]
}

/// The RFC 8414 / OIDC discovery URLs of an issuer (the well-known suffix inserted
/// before the issuer's path, then the OIDC form appended to it, plus the RFC 8414 form
/// appended to the issuer, which some clients try); `None` when the issuer is not an
/// http(s) URL. The issuer comes parsed (one that does not parse has no forms).
pub(crate) fn as_forms(u: &Url) -> Option<Vec<String>> {
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return None;
    }
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    Some(if path.is_empty() {
        vec![
            crate::format_exact!("{origin}{AS_WELL_KNOWN}"),
            crate::format_exact!("{origin}{OIDC_WELL_KNOWN}"),
        ]
    } else {
        let base = crate::format_exact!("{origin}{path}");
        vec![
            crate::format_exact!("{origin}{AS_WELL_KNOWN}{path}"),
            crate::format_exact!("{origin}{OIDC_WELL_KNOWN}{path}"),
            crate::format_exact!("{base}{OIDC_WELL_KNOWN}"),
            crate::format_exact!("{base}{AS_WELL_KNOWN}"),
        ]
    })
}
