//! A user for `mcp-collect --no-browser` in front of an authorization server that
//! approves at once (lab/providers/as.py): run the real binary, and when it prints the
//! authorization URL on stderr, GET it and follow the redirects hop by hop, on loopback
//! only, until one lands on mcp-collect's own loopback callback (the `redirect_uri` of
//! the authorization request), which is then delivered as a browser would.
//! The run itself is `headless::run_playing`, as for the lab's browser login.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::headless::run_playing;

/// Most redirects followed before giving up.
const MAX_HOPS: usize = 10;
/// The whole run, login included.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// One GET of the user's browser: where it went and what came back.
#[derive(Debug, Clone)]
pub struct Hop {
    pub url: String,
    pub status: u16,
}

/// One run of `mcp-collect` and the login the user played.
pub struct Outcome {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// The authorization URL mcp-collect printed, if it printed one.
    pub auth_url: Option<url::Url>,
    /// The GETs the user made, in order; the last one reached the callback when the
    /// login went through.
    pub hops: Vec<Hop>,
    /// Holds `home` (MCP_PROBE_HOME) and `out` (-o); removed when dropped.
    pub dir: tempfile::TempDir,
}

impl Outcome {
    /// The bundles printed on stdout (unindented lines).
    pub fn bundles(&self) -> Vec<PathBuf> {
        self.stdout
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.is_empty())
            .map(PathBuf::from)
            .collect()
    }

    /// The bytes of the run's only bundle.
    pub fn bundle_bytes(&self) -> Vec<u8> {
        let b = self.bundles();
        assert_eq!(b.len(), 1, "one bundle expected\n{}", self.describe());
        std::fs::read(&b[0]).unwrap_or_else(|e| panic!("{}: {e}", b[0].display()))
    }

    /// Whether the user's last GET reached mcp-collect's callback.
    pub fn delivered(&self) -> bool {
        match (&self.auth_url, self.hops.last()) {
            (Some(a), Some(h)) => url::Url::parse(&h.url)
                .ok()
                .zip(redirect_uri(a))
                .is_some_and(|(h, r)| same_endpoint(&h, &r)),
            _ => false,
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {}\n--- hops\n{:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.hops, self.stdout, self.stderr
        )
    }
}

/// Run `mcp-collect --no-browser -o DIR/out ARGS url` with `MCP_PROBE_HOME=DIR/home`,
/// stdin null and `envs`, playing the user on the authorization URL it prints.
pub fn collect_following(url: &str, args: &[&str], envs: &[(&str, &str)]) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
    c.env("MCP_PROBE_HOME", dir.path().join("home"))
        .env_remove("HOME")
        .args(["--no-browser", "-o"])
        .arg(dir.path().join("out"))
        .args(args)
        .arg(url);
    for (k, v) in envs {
        c.env(k, v);
    }
    let (mut auth_url, mut hops) = (None, Vec::new());
    let ran = run_playing(c, RUN_LIMIT, |u| {
        let u = url::Url::parse(u).expect("the authorization URL parses");
        hops = play_user(&u);
        auth_url = Some(u);
    });
    Outcome {
        code: ran.code,
        stdout: ran.stdout,
        stderr: ran.stderr,
        auth_url,
        hops,
        dir,
    }
}

/// The `redirect_uri` of an authorization request.
fn redirect_uri(auth: &url::Url) -> Option<url::Url> {
    auth.query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .and_then(|(_, v)| url::Url::parse(&v).ok())
}

fn same_endpoint(a: &url::Url, b: &url::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
        && a.path() == b.path()
}

fn loopback(u: &url::Url) -> bool {
    u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
}

/// GET the authorization URL and follow 3xx `Location`s while they stay on loopback,
/// stopping after the GET that reaches the callback.
fn play_user(auth: &url::Url) -> Vec<Hop> {
    let callback = redirect_uri(auth);
    let mut hops = Vec::new();
    let mut at = auth.clone();
    for _ in 0..MAX_HOPS {
        if !loopback(&at) {
            break;
        }
        let (status, location, _) = get(&at);
        hops.push(Hop {
            url: at.to_string(),
            status,
        });
        if callback.as_ref().is_some_and(|c| same_endpoint(&at, c)) {
            break;
        }
        match location.and_then(|l| at.join(&l).ok()) {
            Some(next) if (300..400).contains(&status) => at = next,
            _ => break,
        }
    }
    hops
}

/// One HTTP/1.1 GET on loopback (`Connection: close`): status, `Location`, body.
/// Status 0 when the server could not be reached or answered no status line.
pub fn get(u: &url::Url) -> (u16, Option<String>, Vec<u8>) {
    let host = u.host_str().unwrap_or("127.0.0.1").trim_matches(['[', ']']);
    let port = u.port_or_known_default().unwrap_or(80);
    let Ok(mut s) = TcpStream::connect((host, port)) else {
        return (0, None, Vec::new());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let target = match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_string(),
    };
    let req = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: text/html,*/*\r\nConnection: close\r\n\r\n",
        &u[url::Position::BeforeHost..url::Position::AfterPort]
    );
    if s.write_all(req.as_bytes()).is_err() {
        return (0, None, Vec::new());
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let body = raw.get(split + 4..).unwrap_or_default().to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let location = lines.find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("location")
            .then(|| v.trim().to_string())
    });
    (status, location, body)
}

/// A JSON document by GET (200 expected).
pub fn get_json(url: &str) -> serde_json::Value {
    let u = url::Url::parse(url).expect("url");
    let (status, _, body) = get(&u);
    assert_eq!(status, 200, "GET {url}");
    serde_json::from_slice(&body).unwrap_or_else(|e| panic!("GET {url}: {e}"))
}
