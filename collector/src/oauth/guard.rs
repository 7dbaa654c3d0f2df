//! The network guard (docs/collector.md, "Discovery and the network guard"): a server
//! may not make the collector fetch a private or loopback address on its behalf.
//!
//! Every URL a server supplies (protected-resource metadata, authorization servers, and
//! later token and registration endpoints) goes through [`check_fetch`] before a byte is
//! sent: the scheme must be http(s), the URL must carry no userinfo, and the host is
//! **resolved**, every address it resolves to is classified, and the fetch is refused
//! when any address is not public, unless the target itself is in that same class (a
//! loopback lab may fetch loopback URLs, a private-network target private ones).
//! Alternative IPv4 spellings (`2852039166`, `0x7f000001`, `127.1`) need no rule of their
//! own: the `url` crate normalises them to dotted quads for http(s) URLs, and the
//! resolved address is what is classified anyway.
//!
//! [`credential_allowed`] is the separate gate for a credential: https (http only when
//! the endpoint is itself loopback), and only to the endpoint's host or a host inside the
//! endpoint host's registrable domain (Public Suffix List), never with userinfo.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use mcp_probe_schema::host::is_loopback_host;
use mcp_probe_schema::model::ErrorKind;

/// Deadline of the guard's own DNS lookup (the discovery deadline: 8 s).
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(8);

/// The class of an IP address, as far as the guard cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrClass {
    /// Globally routable unicast.
    Public,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// RFC 1918 (10/8, 172.16/12, 192.168/16), IPv6 ULA fc00::/7, deprecated site-local
    /// fec0::/10.
    Private,
    /// RFC 6598 shared address space 100.64.0.0/10 (carrier-grade NAT, tailnets).
    SharedCgnat,
    /// 169.254.0.0/16 (including the 169.254.169.254 metadata service), fe80::/10.
    LinkLocal,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// Documentation, benchmarking, protocol-assignment and reserved ranges, and IPv6
    /// space outside 2000::/3.
    Reserved,
}

impl AddrClass {
    /// Stable lower-case name used in refusal reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            AddrClass::Public => "public",
            AddrClass::Loopback => "loopback",
            AddrClass::Private => "private",
            AddrClass::SharedCgnat => "shared (CGNAT 100.64/10)",
            AddrClass::LinkLocal => "link-local",
            AddrClass::Unspecified => "unspecified",
            AddrClass::Multicast => "multicast",
            AddrClass::Broadcast => "broadcast",
            AddrClass::Reserved => "reserved",
        }
    }

    /// Classes a target may share with a fetched URL (the same-class exception). The
    /// others (unspecified, multicast, broadcast, reserved) are never fetched: no
    /// authorization server legitimately lives there.
    fn shareable(self) -> bool {
        matches!(
            self,
            AddrClass::Loopback
                | AddrClass::Private
                | AddrClass::SharedCgnat
                | AddrClass::LinkLocal
        )
    }
}

impl std::fmt::Display for AddrClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Classify one address. IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`),
/// NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are classified by the IPv4
/// address they embed.
pub fn classify(ip: IpAddr) -> AddrClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(a: Ipv4Addr) -> AddrClass {
    let [o0, o1, o2, _] = a.octets();
    match (o0, o1, o2) {
        (0, _, _) => AddrClass::Unspecified,
        (10, _, _) => AddrClass::Private,
        (100, 64..=127, _) => AddrClass::SharedCgnat,
        (127, _, _) => AddrClass::Loopback,
        (169, 254, _) => AddrClass::LinkLocal,
        (172, 16..=31, _) => AddrClass::Private,
        (192, 168, _) => AddrClass::Private,
        // IETF protocol assignments, TEST-NET-1, 6to4 relay anycast.
        (192, 0, 0) | (192, 0, 2) | (192, 88, 99) => AddrClass::Reserved,
        // Benchmarking 198.18/15, TEST-NET-2, TEST-NET-3.
        (198, 18..=19, _) | (198, 51, 100) | (203, 0, 113) => AddrClass::Reserved,
        (224..=239, _, _) => AddrClass::Multicast,
        _ if a == Ipv4Addr::BROADCAST => AddrClass::Broadcast,
        (240..=255, _, _) => AddrClass::Reserved,
        _ => AddrClass::Public,
    }
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

fn classify_v6(a: Ipv6Addr) -> AddrClass {
    let s = a.segments();
    if a.is_unspecified() {
        return AddrClass::Unspecified;
    }
    if a.is_loopback() {
        return AddrClass::Loopback;
    }
    match s {
        // IPv4-mapped ::ffff:0:0/96.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => return classify_v4(embedded_v4(hi, lo)),
        // IPv4-compatible ::/96 (deprecated; :: and ::1 handled above).
        [0, 0, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded_v4(hi, lo)),
        // NAT64 well-known prefix 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded_v4(hi, lo)),
        // 6to4 2002::/16: the IPv4 address is in bits 16..48.
        [0x2002, hi, lo, ..] => return classify_v4(embedded_v4(hi, lo)),
        _ => {}
    }
    let first = s[0];
    if first & 0xff00 == 0xff00 {
        return AddrClass::Multicast;
    }
    if first & 0xfe00 == 0xfc00 {
        return AddrClass::Private; // ULA fc00::/7
    }
    if first & 0xffc0 == 0xfe80 {
        return AddrClass::LinkLocal; // fe80::/10
    }
    if first & 0xffc0 == 0xfec0 {
        return AddrClass::Private; // deprecated site-local fec0::/10
    }
    // Outside global unicast 2000::/3 (SRv6 SIDs 5f00::/16, local-use NAT64
    // 64:ff9b:1::/48, discard-only 100::/64, unassigned space) and, inside it, the
    // documentation prefixes 2001:db8::/32 and 3fff::/20 and the IETF protocol
    // assignments 2001::/23 (Teredo, ORCHID, …).
    if first & 0xe000 != 0x2000
        || (first == 0x2001 && (s[1] == 0x0db8 || s[1] < 0x0200))
        || (first == 0x3fff && s[1] < 0x1000)
    {
        return AddrClass::Reserved;
    }
    AddrClass::Public
}

/// The class of a target from the addresses its endpoint resolved to: the class they
/// all share, or [`AddrClass::Public`] (the strictest) when they differ or are unknown.
pub fn target_class(addrs: &[IpAddr]) -> AddrClass {
    let mut classes = addrs.iter().map(|a| classify(*a));
    match classes.next() {
        Some(first) if classes.all(|c| c == first) => first,
        _ => AddrClass::Public,
    }
}

/// Whether a fetch may go to `ip` for a target of class `target`.
pub fn permitted(ip: IpAddr, target: AddrClass) -> Result<(), AddrClass> {
    match classify(ip) {
        AddrClass::Public => Ok(()),
        c if c == target && c.shareable() => Ok(()),
        c => Err(c),
    }
}

/// A fetch the guard did not allow (nothing was sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `RefusedByGuard` for a policy refusal; `Dns` or `Timeout` when the host could not
    /// be resolved (then nothing could have been sent either).
    pub kind: ErrorKind,
    /// The offending address, when an address was the reason.
    pub address: Option<IpAddr>,
    /// One line naming the URL and, where one is the reason, the address.
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Refusal {}

fn refuse(url: &str, why: impl std::fmt::Display) -> Refusal {
    Refusal {
        kind: ErrorKind::RefusedByGuard,
        address: None,
        reason: format!("refused {url}: {why}"),
    }
}

/// Special-use names (RFC 6761, RFC 6762, ICANN `.internal`) that never name a public
/// service: refused by name for a public target, classified by resolution otherwise.
pub fn is_special_use_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost"
        || h.ends_with(".localhost")
        || h.ends_with(".internal")
        || h.ends_with(".local")
        || h == "home.arpa"
        || h.ends_with(".home.arpa")
}

/// Guard one server-supplied URL before fetching it: scheme http(s), no userinfo, a host
/// that resolves (within [`RESOLVE_TIMEOUT`]), and every resolved address public or of
/// `target_class` (see [`permitted`]). Returns the addresses checked.
pub async fn check_fetch(
    url: &url::Url,
    target_class: AddrClass,
) -> Result<Vec<SocketAddr>, Refusal> {
    let shown = url.as_str();
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse(
            shown,
            format!("scheme {:?} is not http or https", url.scheme()),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse(
            shown,
            "the URL carries userinfo (it would turn into a Basic Authorization header)",
        ));
    }
    let host = match url.host() {
        None => return Err(refuse(shown, "the URL has no host")),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.');
            if d.is_empty() {
                return Err(refuse(shown, "the host is empty"));
            }
            if target_class == AddrClass::Public && is_special_use_name(d) {
                return Err(refuse(
                    shown,
                    format!("{d} is a special-use name and the target is public"),
                ));
            }
            d.to_string()
        }
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = match tokio::time::timeout(
        RESOLVE_TIMEOUT,
        crate::transport::resolve::lookup(&host, port),
    )
    .await
    {
        Ok(Ok(a)) => a,
        Ok(Err(e)) => {
            return Err(Refusal {
                kind: ErrorKind::Dns,
                address: None,
                reason: format!("not fetched {shown}: {host} did not resolve: {e}"),
            })
        }
        Err(_) => {
            return Err(Refusal {
                kind: ErrorKind::Timeout,
                address: None,
                reason: format!(
                    "not fetched {shown}: resolving {host} took over {} s",
                    RESOLVE_TIMEOUT.as_secs()
                ),
            })
        }
    };
    if addrs.is_empty() {
        return Err(Refusal {
            kind: ErrorKind::Dns,
            address: None,
            reason: format!("not fetched {shown}: {host} resolved to no address"),
        });
    }
    for a in &addrs {
        if let Err(class) = permitted(a.ip(), target_class) {
            return Err(Refusal {
                kind: ErrorKind::RefusedByGuard,
                address: Some(a.ip()),
                reason: format!(
                    "refused {shown}: {host} resolves to {} ({class}) and the target is {target_class}",
                    a.ip()
                ),
            });
        }
    }
    Ok(addrs)
}

fn host_key(h: &url::Host<&str>) -> String {
    match h {
        url::Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        other => other.to_string(),
    }
}

/// Whether a credential may be sent to `url` for the target `endpoint`: https (or http
/// when the endpoint itself is loopback), no userinfo, and a host equal to the
/// endpoint's host or inside the endpoint host's registrable domain. An endpoint host
/// that is an IP address or has no registrable domain (a public suffix, a single label)
/// allows only the exact host. Ports are not compared. The network guard
/// ([`check_fetch`]) applies in addition, as to every fetch.
pub fn credential_allowed(url: &url::Url, endpoint: &url::Url) -> Result<(), CredentialRefusal> {
    let text = url.to_string();
    if !url.username().is_empty() || url.password().is_some() {
        return Err(CredentialRefusal::Userinfo { url: text });
    }
    let (Some(host), Some(ep_host)) = (url.host(), endpoint.host()) else {
        return Err(CredentialRefusal::NoHost { url: text });
    };
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(&ep_host) => {}
        "http" => return Err(CredentialRefusal::PlainHttp { url: text }),
        s => {
            return Err(CredentialRefusal::Scheme {
                url: text,
                scheme: s.to_string(),
            })
        }
    }
    let (host, ep) = (host_key(&host), host_key(&ep_host));
    if host == ep {
        return Ok(());
    }
    let registrable = match ep_host {
        url::Host::Domain(_) => psl::domain_str(&ep).filter(|r| !r.is_empty()),
        _ => None,
    };
    match registrable {
        Some(reg) if host == reg || host.ends_with(&format!(".{reg}")) => Ok(()),
        Some(reg) => Err(CredentialRefusal::OutsideDomain {
            url: text,
            host,
            registrable: reg.to_string(),
            endpoint: ep,
        }),
        None => Err(CredentialRefusal::NotEndpointHost {
            url: text,
            host,
            endpoint: ep,
        }),
    }
}

/// Why [`credential_allowed`] refused to send a credential to a URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialRefusal {
    /// The URL carries userinfo.
    #[error("no credential to {url}: the URL carries userinfo")]
    Userinfo {
        /// The URL.
        url: String,
    },
    /// The URL (or the endpoint) has no host.
    #[error("no credential to {url}: no host")]
    NoHost {
        /// The URL.
        url: String,
    },
    /// Plain http to a URL while the endpoint is not loopback.
    #[error("no credential to {url}: plain http (allowed only when the endpoint is loopback)")]
    PlainHttp {
        /// The URL.
        url: String,
    },
    /// Neither http nor https.
    #[error("no credential to {url}: scheme {scheme:?}")]
    Scheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// The host is outside the endpoint host's registrable domain.
    #[error("no credential to {url}: {host} is outside {registrable}, the registrable domain of the endpoint host {endpoint}")]
    OutsideDomain {
        /// The URL.
        url: String,
        /// Its host.
        host: String,
        /// The endpoint host's registrable domain.
        registrable: String,
        /// The endpoint host.
        endpoint: String,
    },
    /// The endpoint host has no registrable domain, and the host is another one.
    #[error("no credential to {url}: {host} is not the endpoint host {endpoint} (which has no registrable domain)")]
    NotEndpointHost {
        /// The URL.
        url: String,
        /// Its host.
        host: String,
        /// The endpoint host.
        endpoint: String,
    },
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn u(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn classifies_ipv4() {
        let cases = [
            ("8.8.8.8", AddrClass::Public),
            ("1.1.1.1", AddrClass::Public),
            ("10.0.0.1", AddrClass::Private),
            ("172.16.0.1", AddrClass::Private),
            ("172.31.255.255", AddrClass::Private),
            ("172.32.0.1", AddrClass::Public),
            ("172.15.255.255", AddrClass::Public),
            ("192.168.1.1", AddrClass::Private),
            ("100.64.0.1", AddrClass::SharedCgnat),
            ("100.127.255.255", AddrClass::SharedCgnat),
            ("100.128.0.1", AddrClass::Public),
            ("100.63.255.255", AddrClass::Public),
            ("127.0.0.1", AddrClass::Loopback),
            ("127.255.0.9", AddrClass::Loopback),
            ("169.254.169.254", AddrClass::LinkLocal),
            ("169.254.0.1", AddrClass::LinkLocal),
            ("0.0.0.0", AddrClass::Unspecified),
            ("0.1.2.3", AddrClass::Unspecified),
            ("224.0.0.1", AddrClass::Multicast),
            ("239.255.255.250", AddrClass::Multicast),
            ("255.255.255.255", AddrClass::Broadcast),
            ("240.0.0.1", AddrClass::Reserved),
            ("192.0.2.1", AddrClass::Reserved),
            ("198.51.100.7", AddrClass::Reserved),
            ("203.0.113.9", AddrClass::Reserved),
            ("198.18.0.1", AddrClass::Reserved),
            ("192.0.0.8", AddrClass::Reserved),
            ("192.88.99.1", AddrClass::Reserved),
        ];
        for (a, c) in cases {
            assert_eq!(classify(ip(a)), c, "{a}");
        }
    }

    #[test]
    fn classifies_ipv6() {
        let cases = [
            ("2606:4700:4700::1111", AddrClass::Public),
            ("2a00:1450:4001::200e", AddrClass::Public),
            ("::1", AddrClass::Loopback),
            ("::", AddrClass::Unspecified),
            ("fd00::1", AddrClass::Private),
            ("fc00::1", AddrClass::Private),
            ("fec0::1", AddrClass::Private),
            ("fe80::1", AddrClass::LinkLocal),
            ("febf::1", AddrClass::LinkLocal),
            ("ff02::1", AddrClass::Multicast),
            ("2001:db8::1", AddrClass::Reserved),
            ("2001::1", AddrClass::Reserved),
            ("3fff::1", AddrClass::Reserved),
            ("64:ff9b:1::1", AddrClass::Reserved),
            ("100::1", AddrClass::Reserved),
            // IPv4-mapped.
            ("::ffff:127.0.0.1", AddrClass::Loopback),
            ("::ffff:10.0.0.1", AddrClass::Private),
            ("::ffff:169.254.169.254", AddrClass::LinkLocal),
            ("::ffff:8.8.8.8", AddrClass::Public),
            ("::ffff:7f00:1", AddrClass::Loopback),
            // IPv4-compatible.
            ("::127.0.0.2", AddrClass::Loopback),
            ("::10.1.2.3", AddrClass::Private),
            ("::169.254.169.254", AddrClass::LinkLocal),
            // NAT64.
            ("64:ff9b::10.0.0.1", AddrClass::Private),
            ("64:ff9b::a9fe:a9fe", AddrClass::LinkLocal),
            ("64:ff9b::127.0.0.1", AddrClass::Loopback),
            ("64:ff9b::8.8.8.8", AddrClass::Public),
            // 6to4.
            ("2002:a9fe:a9fe::1", AddrClass::LinkLocal),
            ("2002:0a00:0001::1", AddrClass::Private),
            ("2002:0808:0808::1", AddrClass::Public),
        ];
        for (a, c) in cases {
            assert_eq!(classify(ip(a)), c, "{a}");
        }
    }

    #[test]
    fn target_class_is_shared_or_public() {
        assert_eq!(
            target_class(&[ip("127.0.0.1"), ip("::1")]),
            AddrClass::Loopback
        );
        assert_eq!(target_class(&[ip("10.1.1.1")]), AddrClass::Private);
        assert_eq!(
            target_class(&[ip("10.1.1.1"), ip("8.8.8.8")]),
            AddrClass::Public
        );
        assert_eq!(target_class(&[]), AddrClass::Public);
    }

    #[test]
    fn same_class_exception() {
        // A loopback target may fetch loopback, a private one private, and so on.
        assert!(permitted(ip("127.0.0.1"), AddrClass::Loopback).is_ok());
        assert!(permitted(ip("::1"), AddrClass::Loopback).is_ok());
        assert!(permitted(ip("10.0.0.1"), AddrClass::Private).is_ok());
        assert!(permitted(ip("fd00::1"), AddrClass::Private).is_ok());
        assert!(permitted(ip("100.100.1.1"), AddrClass::SharedCgnat).is_ok());
        assert!(permitted(ip("169.254.169.254"), AddrClass::LinkLocal).is_ok());
        // Public is always fine.
        assert!(permitted(ip("8.8.8.8"), AddrClass::Loopback).is_ok());
        // Across classes: refused.
        assert_eq!(
            permitted(ip("169.254.169.254"), AddrClass::Loopback),
            Err(AddrClass::LinkLocal)
        );
        assert_eq!(
            permitted(ip("169.254.169.254"), AddrClass::Private),
            Err(AddrClass::LinkLocal)
        );
        assert_eq!(
            permitted(ip("10.0.0.1"), AddrClass::Loopback),
            Err(AddrClass::Private)
        );
        assert_eq!(
            permitted(ip("127.0.0.1"), AddrClass::Private),
            Err(AddrClass::Loopback)
        );
        assert!(permitted(ip("10.0.0.1"), AddrClass::Public).is_err());
        for c in [
            AddrClass::Public,
            AddrClass::Loopback,
            AddrClass::Private,
            AddrClass::LinkLocal,
        ] {
            // Never-shareable classes stay refused even for a target of that class.
            assert!(permitted(ip("0.0.0.0"), c).is_err());
            assert!(permitted(ip("224.0.0.1"), c).is_err());
            assert!(permitted(ip("255.255.255.255"), c).is_err());
            assert!(permitted(ip("192.0.2.1"), c).is_err());
        }
        assert!(permitted(ip("0.0.0.0"), AddrClass::Unspecified).is_err());
        assert!(permitted(ip("192.0.2.1"), AddrClass::Reserved).is_err());
    }

    #[test]
    fn url_crate_normalises_alternative_ipv4_forms() {
        // What the guard relies on: for http(s) the url crate turns every IPv4 spelling
        // into a dotted quad, so the resolved address is the real one.
        for (typed, host) in [
            ("http://2852039166/", "169.254.169.254"),
            ("http://0xA9FEA9FE/", "169.254.169.254"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://10.1/", "10.0.0.1"),
            ("https://167772161/", "10.0.0.1"),
        ] {
            assert_eq!(u(typed).host_str(), Some(host), "{typed}");
        }
        assert_eq!(
            u("http://[::ffff:127.0.0.1]/").host_str(),
            Some("[::ffff:7f00:1]")
        );
        // A numeric last label that is not a valid IPv4 address does not parse at all.
        assert!(url::Url::parse("http://1.2.3.4.5/").is_err());
        assert!(url::Url::parse("http://4294967296/").is_err());
    }

    async fn refused(url: &str, class: AddrClass) -> Refusal {
        match check_fetch(&u(url), class).await {
            Err(r) => r,
            Ok(a) => panic!("{url} allowed for a {class} target: {a:?}"),
        }
    }

    #[tokio::test]
    async fn refuses_every_non_public_class_for_a_public_target() {
        for (url, addr) in [
            ("http://10.0.0.1/x", "10.0.0.1"),
            ("http://172.16.5.4/", "172.16.5.4"),
            ("https://192.168.0.10/", "192.168.0.10"),
            ("http://100.64.1.1/", "100.64.1.1"),
            ("http://127.0.0.1:8080/", "127.0.0.1"),
            (
                "http://169.254.169.254/latest/meta-data/",
                "169.254.169.254",
            ),
            ("http://0.0.0.0/", "0.0.0.0"),
            ("http://224.0.0.1/", "224.0.0.1"),
            ("http://255.255.255.255/", "255.255.255.255"),
            ("http://192.0.2.1/", "192.0.2.1"),
            ("http://[fd00::1]/", "fd00::1"),
            ("http://[fe80::1]/", "fe80::1"),
            ("http://[::1]/", "::1"),
            ("http://[::]/", "::"),
            ("http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1"),
            ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254"),
            ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"),
            ("http://[2001:db8::1]/", "2001:db8::1"),
            // Decimal and hex spellings are the same addresses once parsed.
            ("http://2852039166/", "169.254.169.254"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://167772161/", "10.0.0.1"),
        ] {
            let r = refused(url, AddrClass::Public).await;
            assert_eq!(r.kind, ErrorKind::RefusedByGuard, "{url}");
            assert_eq!(r.address, Some(ip(addr)), "{url}");
            assert!(r.reason.contains(addr), "{url}: {}", r.reason);
            assert!(!r.reason.contains('\n'));
        }
    }

    #[tokio::test]
    async fn metadata_address_refused_unless_target_is_link_local() {
        for class in [
            AddrClass::Public,
            AddrClass::Loopback,
            AddrClass::Private,
            AddrClass::SharedCgnat,
        ] {
            let r = refused("http://169.254.169.254/latest/meta-data/", class).await;
            assert!(
                r.reason.contains("169.254.169.254 (link-local)"),
                "{}",
                r.reason
            );
        }
        assert!(
            check_fetch(&u("http://169.254.169.254/"), AddrClass::LinkLocal)
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn same_class_target_may_fetch() {
        let a = check_fetch(&u("http://127.0.0.1:9/x"), AddrClass::Loopback)
            .await
            .unwrap();
        assert_eq!(a, vec!["127.0.0.1:9".parse::<SocketAddr>().unwrap()]);
        assert!(check_fetch(&u("https://10.2.3.4/"), AddrClass::Private)
            .await
            .is_ok());
        assert!(check_fetch(&u("https://[fd12::1]/"), AddrClass::Private)
            .await
            .is_ok());
        // A loopback name resolves to loopback only: allowed for a loopback target.
        assert!(check_fetch(&u("http://localhost:9/"), AddrClass::Loopback)
            .await
            .is_ok());
        // Across classes still refused.
        refused("http://10.0.0.1/", AddrClass::Loopback).await;
        refused("http://[fd00::1]/", AddrClass::Loopback).await;
        refused("http://127.0.0.1/", AddrClass::Private).await;
        // Never-shareable classes.
        refused("http://0.0.0.0/", AddrClass::Loopback).await;
        refused("http://224.0.0.1/", AddrClass::Multicast).await;
    }

    #[tokio::test]
    async fn refuses_shapes_before_resolving() {
        for (url, why) in [
            ("ftp://example.com/x", "scheme"),
            ("file:///etc/passwd", "scheme"),
            ("http://user@example.com/", "userinfo"),
            ("https://user:pw@example.com/", "userinfo"),
            ("https://:pw@example.com/", "userinfo"),
            ("http://localhost/", "special-use"),
            ("http://foo.localhost/", "special-use"),
            ("http://metadata.google.internal/", "special-use"),
            ("http://printer.local/", "special-use"),
            ("http://router.home.arpa/", "special-use"),
            ("http://LOCALHOST./", "special-use"),
        ] {
            let r = refused(url, AddrClass::Public).await;
            assert_eq!(r.kind, ErrorKind::RefusedByGuard, "{url}");
            assert!(r.reason.contains(why), "{url}: {}", r.reason);
            assert_eq!(r.address, None);
        }
        // Non-special schemes have no host rules in the url crate: still refused.
        let r = refused("data:text/plain,hi", AddrClass::Loopback).await;
        assert!(r.reason.contains("scheme"));
    }

    #[tokio::test]
    async fn unresolvable_host_is_a_dns_failure_not_a_fetch() {
        let r = refused("https://no-such-host.invalid/x", AddrClass::Public).await;
        // Dns, or Timeout where the resolver hangs: either way nothing is sent.
        assert!(
            matches!(r.kind, ErrorKind::Dns | ErrorKind::Timeout),
            "{}",
            r.reason
        );
        assert!(r.reason.contains("no-such-host.invalid"));
    }

    fn cred(url: &str, endpoint: &str) -> Result<(), CredentialRefusal> {
        credential_allowed(&u(url), &u(endpoint))
    }

    #[test]
    fn credential_gate_hosts() {
        let ep = "https://mcp.example.com/mcp";
        assert!(cred("https://mcp.example.com/other", ep).is_ok());
        assert!(cred("https://mcp.example.com:8443/", ep).is_ok());
        assert!(cred("https://api.example.com/v1", ep).is_ok());
        assert!(cred("https://example.com/", ep).is_ok());
        assert!(cred("https://a.b.example.com/", ep).is_ok());
        assert!(cred("https://MCP.Example.COM./", ep).is_ok());
        assert!(cred("https://example.org/", ep).is_err());
        assert!(cred("https://notexample.com/", ep).is_err());
        assert!(cred("https://example.com.evil.net/", ep).is_err());
        // Multi-label public suffix.
        let uk = "https://mcp.example.co.uk/mcp";
        assert!(cred("https://api.example.co.uk/", uk).is_ok());
        assert!(cred("https://other.co.uk/", uk).is_err());
        assert!(cred("https://co.uk/", uk).is_err());
        // Shared-hosting suffixes: a tenant owns only its own name.
        let gh = "https://a.github.io/mcp";
        assert!(cred("https://a.github.io/x", gh).is_ok());
        assert!(cred("https://b.github.io/x", gh).is_err());
        assert!(cred("https://github.io/x", gh).is_err());
        assert!(cred("https://x.a.github.io/", gh).is_ok());
        let render = "https://app-one.onrender.com/mcp";
        assert!(cred("https://app-two.onrender.com/", render).is_err());
        // An endpoint host with no registrable domain: the exact host only.
        assert!(cred("https://github.io/", "https://github.io/mcp").is_ok());
        assert!(cred("https://a.github.io/", "https://github.io/mcp").is_err());
        assert!(cred("https://intranet/", "https://intranet/mcp").is_ok());
        assert!(cred("https://x.intranet/", "https://intranet/mcp").is_err());
        // IP endpoints: the exact address only.
        assert!(cred("https://203.0.114.5/x", "https://203.0.114.5/mcp").is_ok());
        assert!(cred("https://203.0.114.6/x", "https://203.0.114.5/mcp").is_err());
        assert!(cred("https://[2606:4700::1]/x", "https://[2606:4700::1]/mcp").is_ok());
        assert!(cred("https://[2606:4700::2]/x", "https://[2606:4700::1]/mcp").is_err());
    }

    #[test]
    fn credential_gate_scheme_and_userinfo() {
        let ep = "https://mcp.example.com/mcp";
        let e = cred("http://mcp.example.com/mcp", ep).unwrap_err();
        assert!(matches!(e, CredentialRefusal::PlainHttp { .. }), "{e}");
        assert!(e.to_string().contains("plain http"), "{e}");
        assert!(cred("ftp://mcp.example.com/", ep).is_err());
        assert!(cred("ws://mcp.example.com/", ep).is_err());
        let e = cred("https://u:p@mcp.example.com/", ep).unwrap_err();
        assert!(e.to_string().contains("userinfo"), "{e}");
        assert!(cred("https://u@mcp.example.com/", ep).is_err());
        // An http endpoint that is not loopback does not make http acceptable.
        assert!(cred("http://mcp.example.com/", "http://mcp.example.com/mcp").is_err());
        // Loopback endpoints: http allowed, to the same host only.
        assert!(cred("http://127.0.0.1:9000/mcp", "http://127.0.0.1:8000/mcp").is_ok());
        assert!(cred("http://[::1]:9/", "http://[::1]:8/mcp").is_ok());
        assert!(cred("http://localhost:9/", "http://localhost:8/mcp").is_ok());
        assert!(cred("http://127.0.0.2/", "http://127.0.0.1/mcp").is_err());
        assert!(cred("http://10.0.0.1/", "http://127.0.0.1/mcp").is_err());
        assert!(cred("http://127.0.0.1/", "http://localhost/mcp").is_err());
    }

    #[test]
    fn credential_gate_idn() {
        // The url crate punycodes; the list has the punycode forms of IDN suffixes.
        let ep = "https://mcp.пример.рф/mcp";
        assert!(cred("https://api.пример.рф/", ep).is_ok());
        assert!(cred("https://api.xn--e1afmkfd.xn--p1ai/", ep).is_ok());
        assert!(cred("https://другой.рф/", ep).is_err());
    }
}
