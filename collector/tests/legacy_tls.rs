//! The hand-written TLS 1.0/1.1 probe against every lab TLS endpoint, cross-checked with
//! `openssl s_client`: both must agree on accepted vs refused for every endpoint and
//! version, and both must match the expected matrix below.
//!
//! openssl is read only from `Cipher is (NONE)` (refused) versus a real cipher
//! (accepted): its `Protocol :` line names the *requested* version even when the
//! handshake failed, and without `-cipher 'DEFAULT:@SECLEVEL=0'` it refuses TLS 1.0
//! itself and every server would look compliant.

mod support;

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_probe_collector::transport::legacy_tls::{probe, LegacyVersion};
use mcp_probe_schema::model::LegacyTlsProbe;
use mcp_probe_schema::tlswire::{parse_client_hello, parse_server, ServerAnswer};

use support::lab;

/// What an endpoint is expected to answer to a TLS 1.0 or 1.1 offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// ServerHello at the offered version.
    Accepted,
    /// A fatal alert with this description.
    Alert(u8),
    /// Not a TLS port at all (`HTTP/`).
    NotTls,
}

/// Every lab TLS endpoint with its expected answer (the same for 1.0 and 1.1).
const ENDPOINTS: &[(&str, Expect)] = &[
    ("LAB_TLS_MODERN", Expect::Alert(70)),
    ("LAB_TLS_LEGACY", Expect::Accepted),
    ("LAB_TLS_EXPIRED", Expect::Alert(80)),
    ("LAB_TLS_SELFSIGNED", Expect::Alert(80)),
    ("LAB_TLS_13ONLY", Expect::Alert(70)),
    ("LAB_TLS_WRONGNAME", Expect::Alert(70)),
    ("LAB_SSERVER_LEGACY", Expect::Accepted),
    ("LAB_PLAIN_200", Expect::NotTls),
    ("LAB_PLAIN_301", Expect::NotTls),
];

/// What `openssl s_client` said.
#[derive(Debug)]
struct OpensslSays {
    accepted: bool,
    /// `Cipher is X` (X = `(NONE)` when refused).
    cipher: String,
    /// `SSL alert number N`, when an alert ended the handshake.
    alert: Option<u8>,
}

fn openssl(target: &str, version: LegacyVersion) -> OpensslSays {
    let flag = match version {
        LegacyVersion::Tls1_0 => "-tls1",
        LegacyVersion::Tls1_1 => "-tls1_1",
    };
    let out = Command::new("timeout")
        .args([
            "10",
            "openssl",
            "s_client",
            "-connect",
            target,
            flag,
            "-cipher",
            "DEFAULT:@SECLEVEL=0",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run openssl s_client (lab/install.sh installs openssl)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let cipher = text
        .lines()
        .find_map(|l| {
            l.split_once("Cipher is ")
                .map(|(_, c)| c.trim().to_string())
        })
        .unwrap_or_else(|| panic!("openssl printed no `Cipher is` line for {target}:\n{text}"));
    let alert = text.lines().find_map(|l| {
        l.split_once("SSL alert number ")
            .and_then(|(_, n)| n.trim().parse().ok())
    });
    OpensslSays {
        accepted: cipher != "(NONE)",
        cipher,
        alert,
    }
}

fn accepted(p: &LegacyTlsProbe, version: LegacyVersion) -> bool {
    matches!(
        parse_server(&p.server_bytes),
        ServerAnswer::ServerHello { .. }
    ) && parse_server(&p.server_bytes).negotiated() == Some(version.wire())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_agrees_with_openssl_on_every_lab_endpoint() {
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (var, expect) in ENDPOINTS {
        let Some(target) = lab(var) else {
            continue;
        };
        let addr: SocketAddr = target
            .parse()
            .unwrap_or_else(|e| panic!("{var}={target}: not ip:port ({e})"));
        for version in [LegacyVersion::Tls1_0, LegacyVersion::Tls1_1] {
            let p = probe(addr, None, version, Duration::from_secs(5)).await;
            let answer = parse_server(&p.server_bytes);
            let ours = accepted(&p, version);
            let theirs = openssl(&target, version);
            rows.push(format!(
                "{var:<20} {:<8} probe: {answer}{}; openssl: Cipher is {}{}",
                version.id(),
                p.error
                    .as_ref()
                    .map(|e| format!(" (error {e})"))
                    .unwrap_or_default(),
                theirs.cipher,
                theirs
                    .alert
                    .map(|a| format!(", alert {a}"))
                    .unwrap_or_default(),
            ));
            let hello = parse_client_hello(&p.client_hello).expect("recorded hello parses");
            assert_eq!(hello.client_version, version.wire());
            assert_eq!(p.offered, version.id());
            if let Some(e) = &p.error {
                problems.push(format!("{var} {}: network error {e}", version.id()));
            }
            if ours != theirs.accepted {
                problems.push(format!(
                    "{var} {}: probe says accepted={ours} ({answer}), openssl says accepted={} (Cipher is {})",
                    version.id(),
                    theirs.accepted,
                    theirs.cipher
                ));
            }
            let as_expected = match expect {
                Expect::Accepted => ours,
                Expect::Alert(d) => {
                    matches!(answer, ServerAnswer::Alert { level: 2, description } if description == *d)
                        && theirs.alert == Some(*d)
                }
                Expect::NotTls => {
                    matches!(&answer, ServerAnswer::NotTls { first_bytes } if first_bytes.starts_with(b"HTTP/"))
                }
            };
            if !as_expected {
                problems.push(format!(
                    "{var} {}: expected {expect:?}, probe saw {answer}, openssl Cipher is {} alert {:?}",
                    version.id(),
                    theirs.cipher,
                    theirs.alert
                ));
            }
        }
    }
    eprintln!("{}", rows.join("\n"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
