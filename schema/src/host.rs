//! What a URL's host means, decided once for both binaries (syntax only: no name is
//! resolved here).

/// True when the host names this machine without asking DNS: IPv4 `127.0.0.0/8`, IPv6
/// `::1`, an IPv4-mapped `::ffff:127.x.y.z`, `localhost` or any `*.localhost` name (RFC
/// 6761 §6.3), case-insensitive, a trailing dot ignored.
///
/// Used where loopback *restricts* or describes: the collector's network guard and the
/// grader's 3.3.2 transport reading. Gates that *allow* a credential over plain http use
/// the narrower [`is_local_host`].
pub fn is_loopback_host(h: &url::Host<&str>) -> bool {
    match h {
        url::Host::Ipv4(a) => a.is_loopback(),
        url::Host::Ipv6(a) => {
            a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
    }
}

/// The narrower reading for a gate that *allows* something (a credential over plain
/// http): a loopback address literal, or exactly `localhost` (a trailing dot ignored).
/// Unlike [`is_loopback_host`], `*.localhost` does not count: many resolvers send such
/// names to DNS, and a credential must not travel in clear on the strength of a name
/// someone else's resolver answers.
pub fn is_local_host(h: &url::Host<&str>) -> bool {
    match h {
        url::Host::Domain(d) => d.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
        ip => is_loopback_host(ip),
    }
}

/// [`is_local_host`] of the URL's host; false when it has none.
pub fn is_local_url(u: &url::Url) -> bool {
    u.host().is_some_and(|h| is_local_host(&h))
}

/// [`is_loopback_host`] of the URL's host; false when it has none.
pub fn is_loopback_url(u: &url::Url) -> bool {
    u.host().is_some_and(|h| is_loopback_host(&h))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn lo(s: &str) -> bool {
        is_loopback_url(&url::Url::parse(s).unwrap())
    }

    #[test]
    fn loopback_names_and_addresses() {
        for u in [
            "http://127.0.0.1:8080/mcp",
            "http://127.9.8.7/",
            "http://[::1]:3000/",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost/",
            "http://LocalHost:1/",
            "http://localhost./",
            "http://mcp.localhost/",
            "http://A.B.LOCALHOST./",
        ] {
            assert!(lo(u), "{u}");
        }
    }

    #[test]
    fn only_literals_and_localhost_are_local() {
        let local = |s: &str| is_local_url(&url::Url::parse(s).unwrap());
        for u in [
            "http://127.0.0.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://LOCALHOST./",
        ] {
            assert!(local(u), "{u}");
        }
        for u in [
            "http://mcp.localhost/",
            "http://localhost.example/",
            "http://10.0.0.1/",
        ] {
            assert!(!local(u), "{u}");
        }
    }

    #[test]
    fn everything_else_is_not_loopback() {
        for u in [
            "http://10.0.0.1/",
            "http://0.0.0.0/",
            "http://[::]/",
            "http://[::ffff:10.0.0.1]/",
            "http://example.com/",
            "http://localhost.example/",
            "http://notlocalhost/",
            "urn:example:x",
            "data:text/plain,x",
        ] {
            assert!(!lo(u), "{u}");
        }
    }
}
