//! Enterprise connectivity through the real binaries against the lab (lab/up.d/net.sh):
//! `--proxy` and the proxy environment through a real tinyproxy (its log shows the
//! CONNECTs), `NO_PROXY`, a proxy that refuses, mutual TLS against an nginx front that
//! requires a client certificate, `--header` on the wire and only as a fingerprint where
//! sensitive, and the bad inputs that stop a run before any traffic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record};
use mcp_probe_schema::tlswire::{parse_server, ServerAnswer};
use mcp_probe_schema::vocab::{header, leg, probe};
use support::lab;

/// A header value the run must only ever show as a fingerprint.
const API_KEY: &str = "k3y-5f0e1d2c3b4a5968-77aa19c4";

const PROXY_VARS: &[&str] = &[
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "no_proxy",
    "NO_PROXY",
    "ALL_PROXY",
    "all_proxy",
];

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    dir: tempfile::TempDir,
}

impl Run {
    fn bundle(&self) -> PathBuf {
        let line = self
            .stdout
            .lines()
            .find(|l| l.ends_with(".mcpev"))
            .unwrap_or_else(|| panic!("no bundle path:\n{}", self.describe()));
        PathBuf::from(line)
    }
    fn manifest(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("manifest.jsonl")).unwrap_or_default()
    }
    fn describe(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// `mcp-collect ARGS` with a clean proxy environment plus `envs`.
fn collect(args: &[&str], envs: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut c = support::collect_cmd(&dir);
    for v in PROXY_VARS {
        c.env_remove(v);
    }
    c.arg("--manifest")
        .arg(dir.path().join("manifest.jsonl"))
        .args(["--timeout", "10", "--target-timeout", "120"])
        .args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().expect("run mcp-collect");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        dir,
    }
}

fn grader() -> PathBuf {
    let p = Path::new(env!("CARGO_BIN_EXE_mcp-collect")).with_file_name("mcp-grade");
    assert!(
        p.exists(),
        "mcp-grade not built (cargo build --workspace --bins)"
    );
    p
}

fn log_len(path: &str) -> usize {
    std::fs::read(path).map(|b| b.len()).unwrap_or(0)
}

fn log_since(path: &str, from: usize) -> String {
    let b = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&b[from.min(b.len())..]).into_owned()
}

fn port(host_port: &str) -> &str {
    host_port.rsplit(':').next().unwrap()
}

fn of(records: &[Record], l: mcp_probe_schema::vocab::LegId) -> Vec<&Record> {
    support::oauth_lab::records_of(records, l)
}

/// No byte of `secret` in the bundle file, stdout, stderr or the manifest.
fn assert_nowhere(run: &Run, secret: &[u8], what: &str) {
    let bundle = std::fs::read(run.bundle()).unwrap();
    let manifest = run.manifest();
    assert!(!manifest.is_empty(), "no manifest written");
    let hay: [(&str, &[u8]); 4] = [
        ("bundle", &bundle),
        ("stdout", run.stdout.as_bytes()),
        ("stderr", run.stderr.as_bytes()),
        ("manifest", manifest.as_bytes()),
    ];
    for (name, bytes) in hay {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret),
            "{what} appears in the {name}"
        );
    }
}

#[test]
fn collects_through_tinyproxy_and_records_the_proxy() {
    let (Some(proxy), Some(log), Some(modern), Some(ca), Some(plain)) = (
        lab("LAB_PROXY"),
        lab("LAB_PROXY_LOG"),
        lab("LAB_TLS_MODERN"),
        lab("LAB_TLS_CA"),
        lab("LAB_PLAIN_301"),
    ) else {
        return;
    };
    let before = log_len(&log);
    let url = format!("https://{modern}/mcp");
    let key_header = format!("X-Api-Key: {API_KEY}");
    let run = collect(
        &[
            &url,
            "--ca-file",
            &ca,
            "--proxy",
            &proxy,
            "--plaintext-port",
            port(&plain),
            "--header",
            "X-Gateway: blue",
            "--header",
            &key_header,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.describe());
    let seen = log_since(&log, before);
    // The proxy carried the TLS connection, both legacy ClientHellos and the plaintext probe.
    let tunnels = seen.matches(&format!("CONNECT {modern} HTTP/1.1")).count();
    assert!(tunnels >= 3, "expected >= 3 CONNECTs to {modern}:\n{seen}");
    assert!(
        seen.contains(&format!("CONNECT 127.0.0.1:{} HTTP/1.1", port(&plain))),
        "{seen}"
    );

    let v = support::open(&run.bundle());
    let net = v
        .evidence
        .run
        .options
        .connectivity
        .clone()
        .expect("recorded");
    let p = net.proxy.expect("proxy recorded");
    let https = p.https.expect("https proxy");
    assert_eq!(https.url, proxy);
    assert_eq!(https.source, "--proxy");
    assert_eq!(net.headers.len(), 2);
    assert_eq!(net.headers[0].value, "blue");
    assert!(net.headers[1].sensitive);
    assert_eq!(
        net.headers[1].value,
        mcp_probe_schema::bundle::fingerprint(API_KEY.as_bytes())
    );
    // TLS facts are the origin's: its chain and version, through the tunnel.
    let tls: Vec<_> = of(&v.records, leg::TLS_MODERN)
        .into_iter()
        .filter_map(|r| match &r.observation {
            Observation::Tls(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert!(!tls.is_empty());
    for t in &tls {
        assert_eq!(t.via_proxy.as_deref(), Some(proxy.as_str()));
        assert_eq!(t.peer, modern);
        assert!(t.version.is_some() && !t.chain.is_empty(), "{t:?}");
        assert!(t.client_auth.is_none());
    }
    // The legacy probe reached the origin: nginx's refusal of TLS 1.0 is an alert.
    let legacy = of(&v.records, leg::TLS_V1_0);
    let Observation::LegacyTls(l) = &legacy[0].observation else {
        panic!("no legacy probe")
    };
    assert_eq!(l.error, None);
    assert!(
        matches!(parse_server(&l.server_bytes), ServerAnswer::Alert { .. }),
        "{l:?}"
    );
    // The plaintext probe went through the tunnel to the redirecting door.
    let Observation::Http(x) = &of(&v.records, leg::PLAINTEXT)[0].observation else {
        panic!("no plaintext exchange")
    };
    match &x.outcome {
        HttpOutcome::Response(r) => assert_eq!(r.status, 301),
        other => panic!("{other:?}"),
    }
    // --header on every request to the endpoint's origin, once; the legs that vary a
    // header still send exactly what they test.
    let mut n = 0;
    for r in &v.records {
        let Observation::Http(x) = &r.observation else {
            continue;
        };
        if !x.request.url.starts_with(&format!("https://{modern}/")) {
            assert!(
                !x.request.headers.iter().any(|h| h.name == "X-Gateway"),
                "{} is not the target's origin",
                x.request.url
            );
            continue;
        }
        n += 1;
        let named = |name: &str| {
            x.request
                .headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case(name))
                .count()
        };
        assert_eq!(named("X-Gateway"), 1, "{}", x.request.url);
        assert_eq!(named("X-Api-Key"), 1, "{}", x.request.url);
        assert!(named(header::ORIGIN) <= 1);
    }
    assert!(n > 5, "{n} exchanges with the endpoint");
    let Observation::Http(hostile) = &of(&v.records, leg::ORIGIN_HOSTILE)[0].observation else {
        panic!("no 2.5 hostile-origin leg")
    };
    assert!(hostile
        .request
        .headers
        .iter()
        .any(|h| h.name == header::ORIGIN && h.value == probe::HOSTILE_ORIGIN.as_bytes()));
    assert_nowhere(&run, API_KEY.as_bytes(), "the sensitive --header value");

    // The bundle verifies and grades.
    let verify = Command::new(grader())
        .arg("verify")
        .arg(run.bundle())
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{verify:?}");
    let grade = Command::new(grader())
        .args(["--format", "json"])
        .arg(run.bundle())
        .output()
        .unwrap();
    assert!(
        matches!(grade.status.code(), Some(0 | 1 | 4)),
        "{:?}\n{}",
        grade.status,
        String::from_utf8_lossy(&grade.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&grade.stdout).unwrap();
    assert!(report.get("servers").is_some());
    assert!(!String::from_utf8_lossy(&grade.stdout).contains(API_KEY));
    // `show --json` carries the recorded connectivity: the proxy, and the sensitive
    // header as a fingerprint only.
    let show = Command::new(grader())
        .args(["show", "--json"])
        .arg(run.bundle())
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(0), "{show:?}");
    let shown: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let conn = &shown["run"]["options"]["connectivity"];
    assert!(conn["proxy"].is_object(), "{conn}");
    assert!(conn["headers"].is_array(), "{conn}");
    assert!(!String::from_utf8_lossy(&show.stdout).contains(API_KEY));
}

#[test]
fn no_proxy_bypasses_the_environment_proxy() {
    let (Some(deny), Some(py2)) = (lab("LAB_PROXY_DENY"), lab("LAB_PY2")) else {
        return;
    };
    // The environment names a proxy that refuses every client: only the bypass can
    // make this run succeed.
    let run = collect(
        &[&py2, "--info"],
        &[
            ("HTTP_PROXY", &deny),
            ("NO_PROXY", "example.com, 127.0.0.1"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.describe());
    let v = support::open(&run.bundle());
    let p = v
        .evidence
        .run
        .options
        .connectivity
        .and_then(|c| c.proxy)
        .expect("proxy recorded");
    assert_eq!(p.http.unwrap().source, "env:HTTP_PROXY");
    assert_eq!(p.no_proxy.as_deref(), Some("example.com, 127.0.0.1"));
    assert_eq!(p.no_proxy_source.as_deref(), Some("env:NO_PROXY"));
    assert!(v.evidence.session.is_some());
}

#[test]
fn a_refusing_proxy_is_a_recorded_transport_error() {
    let (Some(deny), Some(py2)) = (lab("LAB_PROXY_DENY"), lab("LAB_PY2")) else {
        return;
    };
    let run = collect(&[&py2, "--info"], &[("http_proxy", &deny)]);
    assert_eq!(run.code, 3, "{}", run.describe());
    let v = support::open(&run.bundle());
    assert!(v.evidence.session.is_none());
    let Observation::Http(x) = &of(&v.records, leg::ENDPOINT_DETECT)[0].observation else {
        panic!("no detection exchange")
    };
    let HttpOutcome::Error(e) = &x.outcome else {
        panic!("{:?}", x.outcome)
    };
    assert_eq!(e.kind, ErrorKind::Proxy);
    assert!(e.message.contains(&deny), "{}", e.message);
    assert!(e.message.contains("403"), "{}", e.message);
}

#[test]
fn mutual_tls_without_and_with_the_client_certificate() {
    let (Some(mtls), Some(ca), Some(cert), Some(key)) = (
        lab("LAB_MTLS"),
        lab("LAB_MTLS_CA"),
        lab("LAB_MTLS_CLIENT_CERT"),
        lab("LAB_MTLS_CLIENT_KEY"),
    ) else {
        return;
    };
    let url = format!("https://{mtls}/mcp");
    // Without: the server asked, nothing was presented, and no session: exit 3.
    let run = collect(&[&url, "--ca-file", &ca, "--info"], &[]);
    assert_eq!(run.code, 3, "{}", run.describe());
    let v = support::open(&run.bundle());
    assert!(v.evidence.session.is_none());
    let asked = v.records.iter().find_map(|r| match &r.observation {
        Observation::Tls(t) => t.client_auth.clone(),
        _ => None,
    });
    assert_eq!(asked.expect("CertificateRequest recorded").sent, None);

    // With: a session and the inventory; the certificate recorded, the key nowhere.
    let run = collect(
        &[
            &url,
            "--ca-file",
            &ca,
            "--client-cert",
            &cert,
            "--client-key",
            &key,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.describe());
    let v = support::open(&run.bundle());
    assert!(v.evidence.session.is_some());
    assert!(!of(&v.records, leg::INVENTORY_TOOLS).is_empty());
    let cc = v
        .evidence
        .run
        .options
        .connectivity
        .clone()
        .and_then(|c| c.client_cert)
        .expect("client certificate recorded");
    assert!(
        cc.subject.contains("mcp-probe lab client"),
        "{}",
        cc.subject
    );
    let sent = v.records.iter().find_map(|r| match &r.observation {
        Observation::Tls(t) => t.client_auth.clone(),
        _ => None,
    });
    assert_eq!(sent.and_then(|s| s.sent), Some(cc.sha256.clone()));
    let pem = std::fs::read_to_string(&key).unwrap();
    let body: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD
        .decode(&body)
        .unwrap();
    assert_nowhere(
        &run,
        &der[der.len() / 2..der.len() / 2 + 32],
        "the client key (DER)",
    );
    for line in pem.lines().filter(|l| !l.starts_with("-----")).take(3) {
        assert_nowhere(&run, line.as_bytes(), "the client key (PEM)");
    }
}

#[test]
fn bad_connectivity_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("c.pem");
    std::fs::write(&cert, "not a certificate").unwrap();
    let missing = dir.path().join("missing.key");
    let cert_s = cert.display().to_string();
    let missing_s = missing.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--header", "X Bad: v"], "--header"),
        (vec!["--header", "X-A: a\r\nInjected: 1"], "--header"),
        (vec!["--header", "Host: evil.example"], "Host"),
        (
            vec!["--header", "Authorization: Bearer abcdefgh"],
            "--token-env",
        ),
        (vec!["--header", "Mcp-Session-Id: x"], "Mcp-Session-Id"),
        (vec!["--proxy", "socks5://127.0.0.1:1"], "--proxy"),
        (vec!["--client-cert", &cert_s], "--client-key"),
        (
            vec!["--client-cert", &cert_s, "--client-key", &missing_s],
            "c.pem",
        ),
    ];
    for (args, names) in cases {
        let mut all = vec!["https://127.0.0.1:9/mcp"];
        all.extend(args.iter().copied());
        let run = collect(&all, &[]);
        assert_eq!(run.code, 2, "{args:?}: {}", run.describe());
        assert_eq!(
            run.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(names), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("abcdefgh"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    // A credential would cross the proxy in clear to a plain-http (even loopback) target.
    let run = collect(
        &[
            "http://127.0.0.1:9/mcp",
            "--proxy",
            "http://127.0.0.1:1",
            "--token-env",
            "NET_TEST_TOKEN",
        ],
        &[("NET_TEST_TOKEN", "abcdefgh-token-value")],
    );
    assert_eq!(run.code, 2, "{}", run.describe());
    assert!(
        run.stderr.contains("over plain http through the proxy"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("abcdefgh-token-value"));
    let run = collect(
        &[
            "http://127.0.0.1:9/mcp",
            "--proxy",
            "http://127.0.0.1:1",
            "--header",
            "X-Api-Key: abcdefgh-key-value",
        ],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.describe());
    assert!(run.stderr.contains("--header X-Api-Key"), "{}", run.stderr);
    assert!(!run.stderr.contains("abcdefgh-key-value"));
    // A readable certificate with a missing key file names the key file.
    if let Some(c) = lab("LAB_MTLS_CLIENT_CERT") {
        let run = collect(
            &[
                "https://127.0.0.1:9/mcp",
                "--client-cert",
                &c,
                "--client-key",
                &missing_s,
            ],
            &[],
        );
        assert_eq!(run.code, 2, "{}", run.describe());
        assert!(run.stderr.contains("missing.key"), "{}", run.stderr);
        // A key that belongs to another certificate.
        let other = Path::new(&lab("LAB_MTLS_CA").unwrap()).with_file_name("server.key");
        let run = collect(
            &[
                "https://127.0.0.1:9/mcp",
                "--client-cert",
                &c,
                "--client-key",
                other.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(run.code, 2, "{}", run.describe());
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("server.key"), "{}", run.stderr);
        assert!(run.stderr.contains("does not belong"), "{}", run.stderr);
    }
}
