//! Name resolution without the C library: every host name the collector turns into
//! addresses (targets, URLs a server supplied, proxies) goes through [`lookup`].
//!
//! Why not `getaddrinfo` (what `tokio::net::lookup_host` and std's `ToSocketAddrs` call):
//! in a statically linked glibc binary, `getaddrinfo` still loads the host's `libnss_*`
//! modules at run time, from the glibc version the binary was linked against. A static
//! `mcp-collect` copied onto a jump host would then depend on that host's libraries after
//! all, or fail to resolve anything in an empty root. This module reads `/etc/hosts` and
//! `/etc/resolv.conf` itself and speaks DNS with hickory-resolver, so the binary has no
//! `getaddrinfo` in it (docs/install.md, "Name resolution", says what differs from the
//! system resolver).
//!
//! Each call reads both files afresh and keeps no cache, like `getaddrinfo` without
//! nscd: what a lookup answers depends on the files and the name server at that moment,
//! never on an earlier lookup. The network guard and the proxy code act on the returned
//! addresses exactly as they did on `getaddrinfo`'s.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use hickory_resolver::config::{LookupIpStrategy, NameServerConfigGroup, ResolverConfig};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::Query;
use hickory_resolver::proto::rr::RecordType;
use hickory_resolver::{Hosts, Name, TokioResolver};

/// Where glibc sends queries when `/etc/resolv.conf` is missing or unreadable: a name
/// server on the local machine, port 53 (resolv.conf(5), "nameserver").
const FALLBACK_NAME_SERVER: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// The addresses of `host` (a name, or an IP literal with or without brackets) with
/// `port`. An IP literal is returned as it is, with no file read and no query. A name is
/// looked up in `/etc/hosts` first (and, listed there, answered from it alone, as glibc
/// does), else by DNS per `/etc/resolv.conf`, for IPv4 and IPv6 addresses at once (IPv4
/// first). An empty answer is an error.
pub async fn lookup(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let name = bare.trim_end_matches('.');
    if name.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty host name",
        ));
    }
    // glibc's `files` source first: a name /etc/hosts lists is answered from it alone,
    // never asked of DNS for the other address family.
    let listed = Hosts::from_system()
        .map(|h| listed_in(&h, name))
        .unwrap_or_default();
    if !listed.is_empty() {
        return Ok(listed
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect());
    }
    let answer = resolver().lookup_ip(name).await.map_err(|e| {
        if e.is_no_records_found() || e.is_nx_domain() {
            io::Error::new(io::ErrorKind::NotFound, format!("{name}: no address found"))
        } else {
            io::Error::other(format!("{name}: {e}"))
        }
    })?;
    let addrs: Vec<SocketAddr> = answer.iter().map(|ip| SocketAddr::new(ip, port)).collect();
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{name}: no address found"),
        ));
    }
    Ok(addrs)
}

/// The addresses `hosts` lists for `name`: IPv4 first, then IPv6, each in file order.
fn listed_in(hosts: &Hosts, name: &str) -> Vec<IpAddr> {
    let Ok(name) = Name::from_ascii(name) else {
        return Vec::new();
    };
    [RecordType::A, RecordType::AAAA]
        .into_iter()
        .filter_map(|t| hosts.lookup_static_host(&Query::query(name.clone(), t)))
        .flat_map(|l| l.iter().filter_map(|r| r.ip_addr()).collect::<Vec<_>>())
        .collect()
}

/// A resolver configured from `/etc/resolv.conf` (or glibc's default when it cannot be
/// read) that reads `/etc/hosts`, asks for A and AAAA records together, and caches
/// nothing beyond the one lookup it is built for.
fn resolver() -> TokioResolver {
    let mut builder = TokioResolver::builder_tokio().unwrap_or_else(|_| {
        let servers = NameServerConfigGroup::from_ips_clear(&[FALLBACK_NAME_SERVER], 53, true);
        TokioResolver::builder_with_config(
            ResolverConfig::from_parts(None, Vec::new(), servers),
            TokioConnectionProvider::default(),
        )
    });
    let opts = builder.options_mut();
    opts.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
    // Read by `lookup` already.
    opts.use_hosts_file = hickory_resolver::config::ResolveHosts::Never;
    opts.cache_size = 0;
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ip_literals_are_returned_as_given() {
        let v4 = lookup("127.0.0.1", 8080).await.expect("v4");
        assert_eq!(
            v4,
            vec!["127.0.0.1:8080".parse::<SocketAddr>().expect("addr")]
        );
        let v6 = lookup("[::1]", 443).await.expect("v6");
        assert_eq!(v6, vec!["[::1]:443".parse::<SocketAddr>().expect("addr")]);
        let bare6 = lookup("::1", 80).await.expect("bare v6");
        assert_eq!(bare6, vec!["[::1]:80".parse::<SocketAddr>().expect("addr")]);
    }

    #[tokio::test]
    async fn localhost_resolves_to_loopback_only() {
        let addrs = lookup("localhost", 9).await.expect("localhost");
        assert!(!addrs.is_empty());
        assert!(
            addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 9),
            "{addrs:?}"
        );
    }

    #[test]
    fn a_name_in_the_hosts_file_is_answered_from_it_alone() {
        let mut hosts = Hosts::default();
        hosts
            .read_hosts_conf(&b"127.0.0.1 localhost\n::1 localhost\n127.0.0.1 mcp-lab.test\n"[..])
            .expect("hosts");
        // Only IPv4 listed: no AAAA is asked of DNS (the caller returns before any query).
        assert_eq!(
            listed_in(&hosts, "mcp-lab.test"),
            vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
        );
        assert_eq!(
            listed_in(&hosts, "LocalHost"),
            vec![
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)
            ]
        );
        assert!(listed_in(&hosts, "elsewhere.test").is_empty());
    }

    #[tokio::test]
    async fn an_empty_name_is_refused_without_a_query() {
        let e = lookup(".", 80).await.expect_err("empty");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
