//! HTTP CONNECT proxies (`--proxy`, `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`;
//! docs/collector.md, "Proxy").
//!
//! Every connection the collector opens (https and plain http, the TLS 1.0/1.1
//! ClientHello probe and the plaintext probe included) is a TCP stream; when a proxy
//! applies to the URL, that stream is a CONNECT tunnel instead of a direct socket, and
//! everything above it (TLS with the origin, the request bytes) is unchanged. So the TLS
//! facts recorded are the origin's, and the request record is byte for byte what the
//! origin received. A plain http request is tunnelled too (never sent in absolute form
//! to the proxy), so the proxy cannot rewrite it.
//!
//! `NO_PROXY` follows curl: a comma (or space) separated list; `*` alone bypasses every
//! host; an entry matches the host itself and every subdomain (a leading dot is
//! ignored); an entry with `:port` matches only that port; IP literals match exactly
//! (IPv6 with or without brackets). Loopback is not bypassed implicitly: a proxy applies
//! to `127.0.0.1` and `localhost` unless `NO_PROXY` names them.

use std::net::SocketAddr;
use std::time::Instant;

use base64::Engine as _;
use mcp_probe_schema::model::{ErrorKind, TransportError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest CONNECT reply head read from a proxy.
const MAX_CONNECT_HEAD: usize = 16 * 1024;

/// `host:port` of a URL (port defaulted by scheme; IPv6 in brackets).
pub fn authority(url: &url::Url) -> String {
    let host = match url.host() {
        Some(url::Host::Ipv6(a)) => format!("[{a}]"),
        Some(h) => h.to_string(),
        None => String::new(),
    };
    format!("{}:{}", host, url.port_or_known_default().unwrap_or(0))
}

/// curl's default port for an `http://` proxy without one.
pub const DEFAULT_PROXY_PORT: u16 = 1080;

/// One HTTP proxy.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    host: String,
    port: u16,
    /// `Basic` credentials (base64 of `user:password`), when the URL had them.
    basic: Option<String>,
    /// `user:password` as decoded, kept to register with the redactor.
    userinfo: Option<String>,
    /// Where it came from (`--proxy`, `env:HTTPS_PROXY`, ...).
    pub source: String,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proxy({} from {})", self.display(), self.source)
    }
}

/// A proxy URL that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct ProxyError {
    /// `--proxy` or `env:NAME`.
    pub source_name: String,
    /// What was wrong (never the credentials).
    pub reason: String,
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Proxy {
    /// Parse `http://[user:pass@]host[:port][/]` (a value without a scheme is read as
    /// `http://`, as curl does). Only `http` proxies are supported: a TLS connection to
    /// the proxy itself (`https://`) and SOCKS are refused.
    pub fn parse(value: &str, source: &str) -> Result<Proxy, ProxyError> {
        let bad = |reason: String| ProxyError {
            source_name: source.to_string(),
            reason,
        };
        let v = value.trim();
        if v.is_empty() {
            return Err(bad("empty proxy URL".into()));
        }
        let with_scheme = if v.contains("://") {
            v.to_string()
        } else {
            format!("http://{v}")
        };
        let url = url::Url::parse(&with_scheme).map_err(|e| {
            bad(format!(
                "not a proxy URL (http://[user:pass@]host:port): {e}"
            ))
        })?;
        if url.scheme() != "http" {
            return Err(bad(format!(
                "only http:// proxies (HTTP CONNECT) are supported, not {}://",
                url.scheme()
            )));
        }
        let host = match url.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(h) => h.to_string(),
            None => return Err(bad("the proxy URL has no host".into())),
        };
        if !(url.path().is_empty() || url.path() == "/") || url.query().is_some() {
            return Err(bad(
                "a proxy URL is http://[user:pass@]host:port with no path or query".into(),
            ));
        }
        let port = url.port().unwrap_or(DEFAULT_PROXY_PORT);
        let userinfo = (!url.username().is_empty() || url.password().is_some()).then(|| {
            format!(
                "{}:{}",
                percent_decode(url.username()),
                percent_decode(url.password().unwrap_or(""))
            )
        });
        let basic = userinfo
            .as_ref()
            .map(|u| base64::engine::general_purpose::STANDARD.encode(u.as_bytes()));
        Ok(Proxy {
            host,
            port,
            basic,
            userinfo,
            source: source.to_string(),
        })
    }

    /// `http://host:port`, never the credentials.
    pub fn display(&self) -> String {
        if self.host.contains(':') {
            format!("http://[{}]:{}", self.host, self.port)
        } else {
            format!("http://{}:{}", self.host, self.port)
        }
    }

    /// `user:password` when the URL carried credentials (a secret: register it).
    pub fn userinfo(&self) -> Option<&str> {
        self.userinfo.as_deref()
    }

    /// The password alone, when there is one (a secret too).
    pub fn password(&self) -> Option<&str> {
        self.userinfo
            .as_deref()
            .and_then(|u| u.split_once(':'))
            .map(|(_, p)| p)
            .filter(|p| !p.is_empty())
    }

    fn terr(&self, kind: ErrorKind, what: String) -> TransportError {
        TransportError {
            kind,
            message: format!("proxy {}: {what}", self.display()),
        }
    }

    /// Open a CONNECT tunnel to `target` (`host:port`, brackets around IPv6) through
    /// this proxy, within `deadline`. A proxy that cannot be reached is `connect` (or
    /// `dns`, `timeout`); a proxy that answers with anything but 2xx is `proxy`, naming
    /// the proxy and its status line. Returns the stream and the proxy's address.
    pub async fn tunnel(
        &self,
        target: &str,
        deadline: Instant,
    ) -> Result<(TcpStream, SocketAddr), TransportError> {
        let left = || deadline.saturating_duration_since(Instant::now());
        let timeout = |what: &str| self.terr(ErrorKind::Timeout, format!("{what} timed out"));
        let addrs: Vec<SocketAddr> =
            match tokio::time::timeout(left(), super::resolve::lookup(&self.host, self.port)).await
            {
                Ok(Ok(a)) => a,
                Ok(Err(e)) => return Err(self.terr(ErrorKind::Dns, format!("{}: {e}", self.host))),
                Err(_) => return Err(timeout("resolving the proxy")),
            };
        let mut last = self.terr(ErrorKind::Dns, format!("{}: no addresses", self.host));
        let mut stream = None;
        for a in addrs {
            match tokio::time::timeout(left(), TcpStream::connect(a)).await {
                Ok(Ok(s)) => {
                    stream = Some((s, a));
                    break;
                }
                Ok(Err(e)) => {
                    last = TransportError {
                        message: format!("proxy {} ({a}): {e}", self.display()),
                        ..super::error::io_error(&e)
                    }
                }
                Err(_) => last = timeout("connecting to the proxy"),
            }
        }
        let Some((mut s, addr)) = stream else {
            return Err(last);
        };
        let _ = s.set_nodelay(true);
        let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
        if let Some(b) = &self.basic {
            head.push_str(&format!("Proxy-Authorization: Basic {b}\r\n"));
        }
        head.push_str(&format!(
            "User-Agent: {}\r\n\r\n",
            mcp_probe_schema::vocab::COLLECTOR_USER_AGENT
        ));
        match tokio::time::timeout(left(), s.write_all(head.as_bytes())).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(TransportError {
                    message: format!("proxy {}: writing CONNECT: {e}", self.display()),
                    ..super::error::io_error(&e)
                })
            }
            Err(_) => return Err(timeout("writing CONNECT")),
        }
        // Read byte by byte up to the end of the head: nothing of the tunnel may be
        // consumed here (the origin's first bytes follow the head at once).
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            if buf.len() > MAX_CONNECT_HEAD {
                return Err(self.terr(
                    ErrorKind::Proxy,
                    format!("CONNECT reply head over {MAX_CONNECT_HEAD} bytes"),
                ));
            }
            match tokio::time::timeout(left(), s.read(&mut byte)).await {
                Ok(Ok(0)) => {
                    return Err(self.terr(
                        ErrorKind::Proxy,
                        format!(
                            "closed the connection before answering CONNECT {target} ({} bytes)",
                            buf.len()
                        ),
                    ))
                }
                Ok(Ok(_)) => buf.push(byte[0]),
                Ok(Err(e)) => {
                    return Err(TransportError {
                        message: format!(
                            "proxy {}: reading the CONNECT reply: {e}",
                            self.display()
                        ),
                        ..super::error::io_error(&e)
                    })
                }
                Err(_) => return Err(timeout(&format!("CONNECT {target}"))),
            }
        }
        let status_line =
            String::from_utf8_lossy(buf.split(|b| *b == b'\r').next().unwrap_or(&[])).into_owned();
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        let code = parts.next().and_then(|c| c.parse::<u16>().ok());
        match code {
            Some(c) if version.starts_with("HTTP/1.") && (200..300).contains(&c) => Ok((s, addr)),
            Some(_) => Err(self.terr(
                ErrorKind::Proxy,
                format!("refused CONNECT {target}: {}", status_line.trim()),
            )),
            None => Err(self.terr(
                ErrorKind::Proxy,
                format!(
                    "not an HTTP answer to CONNECT {target}: {:?}",
                    status_line.trim()
                ),
            )),
        }
    }
}

/// One `NO_PROXY` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bypass {
    All,
    Host { name: String, port: Option<u16> },
}

/// The proxies of a run: one per scheme, and the bypass list.
#[derive(Debug, Clone, Default)]
pub struct Proxies {
    /// For `https` URLs.
    pub https: Option<Proxy>,
    /// For `http` URLs.
    pub http: Option<Proxy>,
    bypass: Vec<Bypass>,
    /// The bypass list as given and where from.
    pub no_proxy: Option<(String, String)>,
}

fn parse_bypass(list: &str) -> Vec<Bypass> {
    list.split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            if e == "*" {
                return Bypass::All;
            }
            let (name, port) = split_host_port(e);
            Bypass::Host {
                name: name.trim_start_matches('.').to_ascii_lowercase(),
                port,
            }
        })
        .collect()
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address.
fn split_host_port(e: &str) -> (String, Option<u16>) {
    if let Some(rest) = e.strip_prefix('[') {
        if let Some((h, tail)) = rest.split_once(']') {
            let port = tail.strip_prefix(':').and_then(|p| p.parse().ok());
            return (h.to_string(), port);
        }
    }
    if e.matches(':').count() == 1 {
        if let Some((h, p)) = e.split_once(':') {
            if let Ok(port) = p.parse() {
                return (h.to_string(), Some(port));
            }
        }
    }
    (e.to_string(), None)
}

impl Proxies {
    /// No proxy at all.
    pub fn none() -> Proxies {
        Proxies::default()
    }

    /// The proxies from `--proxy` (both schemes) or else the environment, and the
    /// bypass list from the environment. `env` reads a variable (the process
    /// environment in a run; a map in tests).
    pub fn from_sources(
        flag: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Proxies, ProxyError> {
        // Lower case first, as curl reads them.
        let pick = |names: &[&str]| {
            names.iter().find_map(|n| {
                env(n)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (n.to_string(), v))
            })
        };
        let (https, http) = match flag {
            Some(v) => {
                let p = Proxy::parse(v, "--proxy")?;
                (Some(p.clone()), Some(p))
            }
            None => {
                let https = match pick(&["https_proxy", "HTTPS_PROXY"]) {
                    Some((n, v)) => Some(Proxy::parse(&v, &format!("env:{n}"))?),
                    None => None,
                };
                let http = match pick(&["http_proxy", "HTTP_PROXY"]) {
                    Some((n, v)) => Some(Proxy::parse(&v, &format!("env:{n}"))?),
                    None => None,
                };
                (https, http)
            }
        };
        let no_proxy = pick(&["no_proxy", "NO_PROXY"]).map(|(n, v)| (v, format!("env:{n}")));
        Ok(Proxies {
            https,
            http,
            bypass: no_proxy
                .as_ref()
                .map(|(v, _)| parse_bypass(v))
                .unwrap_or_default(),
            no_proxy,
        })
    }

    /// Whether any proxy is configured.
    pub fn any(&self) -> bool {
        self.https.is_some() || self.http.is_some()
    }

    /// The proxy for `url`, if one applies (its scheme has one and `NO_PROXY` does not
    /// name its host).
    pub fn for_url(&self, url: &url::Url) -> Option<&Proxy> {
        let p = match url.scheme() {
            "https" => self.https.as_ref(),
            "http" => self.http.as_ref(),
            _ => None,
        }?;
        let host = match url.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(h) => h.to_string().to_ascii_lowercase(),
            None => return Some(p),
        };
        let port = url.port_or_known_default();
        (!self.bypassed(&host, port)).then_some(p)
    }

    fn bypassed(&self, host: &str, port: Option<u16>) -> bool {
        let host = host.trim_end_matches('.');
        self.bypass.iter().any(|b| match b {
            Bypass::All => true,
            Bypass::Host { name, port: bp } => {
                let name = name.trim_end_matches('.');
                let port_ok = bp.is_none() || *bp == port;
                let host_ok = host == name
                    || (host.len() > name.len()
                        && host.ends_with(name)
                        && host.as_bytes()[host.len() - name.len() - 1] == b'.'
                        && name.parse::<std::net::IpAddr>().is_err());
                port_ok && host_ok
            }
        })
    }
}

/// The `host:port` a tunnel is opened to: the pinned address the network guard
/// checked when there is one (so the proxy cannot be pointed elsewhere by a DNS answer
/// that changed), else the URL's host name (the proxy resolves it).
pub fn connect_target(url: &url::Url, pinned: Option<&SocketAddr>) -> String {
    match pinned {
        Some(a) => a.to_string(),
        None => authority(url),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::HashMap;

    fn proxies(vars: &[(&str, &str)], flag: Option<&str>) -> Proxies {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Proxies::from_sources(flag, |k| m.get(k).cloned()).unwrap()
    }

    fn u(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn scheme_picks_the_variable_and_the_flag_wins() {
        let p = proxies(
            &[("HTTPS_PROXY", "http://s:3128"), ("http_proxy", "p:8080")],
            None,
        );
        assert_eq!(
            p.for_url(&u("https://a.example/mcp")).unwrap().display(),
            "http://s:3128"
        );
        assert_eq!(
            p.for_url(&u("http://a.example/mcp")).unwrap().display(),
            "http://p:8080"
        );
        assert_eq!(p.https.as_ref().unwrap().source, "env:HTTPS_PROXY");
        let p = proxies(&[("HTTPS_PROXY", "http://s:3128")], Some("http://f:9"));
        assert_eq!(
            p.for_url(&u("https://a.example/")).unwrap().display(),
            "http://f:9"
        );
        assert_eq!(
            p.for_url(&u("http://a.example/")).unwrap().source,
            "--proxy"
        );
        let p = proxies(
            &[
                ("https_proxy", "http://lower:1"),
                ("HTTPS_PROXY", "http://upper:2"),
            ],
            None,
        );
        assert_eq!(p.https.unwrap().display(), "http://lower:1");
        let p = proxies(&[("HTTP_PROXY", "http://p:1")], None);
        assert!(p.for_url(&u("https://a.example/")).is_none());
    }

    #[test]
    fn no_proxy_matches_like_curl() {
        let p = proxies(
            &[
                ("HTTPS_PROXY", "http://s:3128"),
                (
                    "NO_PROXY",
                    ".corp.example, internal.example:8443 ,10.0.0.1,[::1]",
                ),
            ],
            None,
        );
        let via = |s: &str| p.for_url(&u(s)).is_some();
        assert!(!via("https://corp.example/"));
        assert!(!via("https://mcp.corp.example/"));
        assert!(via("https://notcorp.example/"));
        assert!(!via("https://internal.example:8443/"));
        assert!(via("https://internal.example/"));
        assert!(!via("https://10.0.0.1/"));
        assert!(via("https://10.0.0.10/"));
        assert!(!via("https://[::1]:9/"));
        // Loopback is not bypassed implicitly.
        assert!(via("https://127.0.0.1:9/"));
        assert!(via("https://localhost/"));
        let all = proxies(&[("HTTPS_PROXY", "s:1"), ("no_proxy", "*")], None);
        assert!(all.for_url(&u("https://x.example/")).is_none());
        // NO_PROXY applies to --proxy too.
        let f = proxies(&[("NO_PROXY", "127.0.0.1")], Some("http://f:1"));
        assert!(f.for_url(&u("http://127.0.0.1:5/")).is_none());
        assert!(f.for_url(&u("http://127.0.0.2:5/")).is_some());
    }

    /// A one-connection proxy: reads the CONNECT head, answers `reply`, returns the head.
    async fn fake_proxy(reply: &'static [u8]) -> (u16, tokio::task::JoinHandle<String>) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let h = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut b).await.unwrap();
                head.push(b[0]);
            }
            s.write_all(reply).await.unwrap();
            String::from_utf8(head).unwrap()
        });
        (port, h)
    }

    #[tokio::test]
    async fn a_407_is_a_proxy_error_naming_the_proxy_and_credentials_go_only_to_it() {
        let (port, head) = fake_proxy(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").await;
        let p = Proxy::parse(&format!("http://user:pass@127.0.0.1:{port}"), "--proxy").unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let e = p.tunnel("mcp.example:443", deadline).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Proxy);
        assert!(
            e.message
                .contains(&format!("proxy http://127.0.0.1:{port}")),
            "{}",
            e.message
        );
        assert!(e.message.contains("407"), "{}", e.message);
        assert!(!e.message.contains("pass"), "{}", e.message);
        let head = head.await.unwrap();
        assert!(head.starts_with("CONNECT mcp.example:443 HTTP/1.1\r\nHost: mcp.example:443\r\n"));
        assert!(
            head.contains("Proxy-Authorization: Basic dXNlcjpwYXNz\r\n"),
            "{head}"
        );
    }

    #[tokio::test]
    async fn a_200_leaves_the_tunnel_bytes_unread() {
        let (port, _head) =
            fake_proxy(b"HTTP/1.1 200 Connection established\r\n\r\nORIGIN-BYTES").await;
        let p = Proxy::parse(&format!("127.0.0.1:{port}"), "env:HTTPS_PROXY").unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let (mut s, _) = p.tunnel("127.0.0.1:9", deadline).await.unwrap();
        let mut got = [0u8; 12];
        s.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ORIGIN-BYTES");
    }

    #[test]
    fn proxy_urls_parse_and_refuse() {
        let p = Proxy::parse("http://us%40er:pa%3Ass@proxy.example:3128/", "--proxy").unwrap();
        assert_eq!(p.display(), "http://proxy.example:3128");
        assert_eq!(p.userinfo(), Some("us@er:pa:ss"));
        assert_eq!(p.password(), Some("pa:ss"));
        assert!(!format!("{p:?}").contains("pa:ss"));
        assert_eq!(
            Proxy::parse("proxy.example", "x").unwrap().display(),
            "http://proxy.example:1080"
        );
        for bad in [
            "https://p:1",
            "socks5://p:1",
            "http://p:1/path",
            "http://",
            "",
        ] {
            let e = Proxy::parse(bad, "--proxy").unwrap_err();
            assert!(e.to_string().starts_with("--proxy: "), "{e}");
        }
        let e = Proxy::parse("https://user:hunter22@p:1", "--proxy").unwrap_err();
        assert!(!e.to_string().contains("hunter22"));
    }
}
