//! Shared test support: running the real `mcp-collect`, reading lab variables, and a
//! small scripted HTTP server for hostile-server cases the real SDKs cannot produce.
#![allow(dead_code, unreachable_pub)]

pub mod follow;
pub mod headless;
pub mod misbehave;
pub mod oauth_lab;

pub use misbehave::{accept, read_request, Req};

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// A lab variable: the environment, else `lab/run/env`. Missing under CI is a failure:
/// a silently skipped lab test hides a broken lab.
pub fn lab(var: &str) -> Option<String> {
    if let Ok(v) = std::env::var(var) {
        return Some(v);
    }
    let env_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/run/env");
    if let Ok(text) = std::fs::read_to_string(env_file) {
        for line in text.lines() {
            if let Some(v) = line.strip_prefix(&format!("{var}=")) {
                return Some(v.to_string());
            }
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!("{var} is not set: the lab is not up (lab/up.sh) but CI requires it");
    }
    eprintln!("skipping: {var} not set and lab/run/env missing (run lab/up.sh)");
    None
}

/// Result of one `mcp-collect` run.
pub struct Run {
    pub out: Output,
    pub dir: tempfile::TempDir,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    /// Bundle paths printed on stdout (unindented lines).
    pub fn bundles(&self) -> Vec<PathBuf> {
        self.stdout()
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.is_empty())
            .map(PathBuf::from)
            .collect()
    }
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    pub fn describe(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code(),
            self.stdout(),
            self.stderr()
        )
    }
}

pub fn collect_cmd(dir: &tempfile::TempDir) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
    c.env("MCP_PROBE_HOME", dir.path().join("home"))
        .env_remove("HOME");
    c.arg("-o").arg(dir.path().join("out"));
    c
}

/// Run `mcp-collect ARGS` in a fresh temp dir with its own state home.
pub fn collect(args: &[&str], envs: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = collect_cmd(&dir);
    c.args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().expect("run mcp-collect");
    Run { out, dir }
}

/// The real Python interpreter (not a version manager's shim, which needs `HOME`).
pub fn python() -> String {
    static P: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
    .clone()
}

/// [`collect_cmd`] run under `support/maxrss.py`, which writes the collector's peak
/// resident set size (KiB, measured from outside the process with `os.wait4`) and its
/// exit code to `report`; read it with [`max_rss_kib`].
pub fn measured_cmd(dir: &tempfile::TempDir, report: &Path) -> Command {
    let mut c = Command::new(python());
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/maxrss.py"))
        .arg(report)
        .arg(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", dir.path().join("home"))
        .env_remove("HOME")
        .arg("-o")
        .arg(dir.path().join("out"));
    c
}

/// The peak RSS, KiB, that `support/maxrss.py` wrote to `report`.
pub fn max_rss_kib(report: &Path) -> Option<u64> {
    std::fs::read_to_string(report)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// [`collect`] under `support/maxrss.py`: the run and the collector's peak RSS, KiB.
pub fn collect_measured(args: &[&str]) -> (Run, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("rss");
    let out = measured_cmd(&dir, &report)
        .args(args)
        .output()
        .expect("run mcp-collect under maxrss.py");
    let run = Run { out, dir };
    let kib =
        max_rss_kib(&report).unwrap_or_else(|| panic!("no rusage report\n{}", run.describe()));
    (run, kib)
}

pub fn open(path: &Path) -> mcp_probe_schema::Verified {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mcp_probe_schema::open(&bytes, &[]).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The run's failure, empty when it has none.
pub fn failure(v: &mcp_probe_schema::Verified) -> String {
    v.evidence.run.failure.clone().unwrap_or_default()
}

/// How the scripted server answers one request.
pub type Handler = dyn Fn(&Req) -> Vec<u8> + Send + Sync;

/// A scripted HTTP/1.1 server on 127.0.0.1 (one thread per connection).
pub struct Scripted {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

pub fn serve(handler: Arc<Handler>) -> Scripted {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let reqs = requests.clone();
    accept(l, stop.clone(), move |s| {
        conn(s, handler.clone(), reqs.clone())
    });
    Scripted {
        url: format!("http://127.0.0.1:{port}/mcp"),
        requests,
        stop,
    }
}

fn conn(s: TcpStream, handler: Arc<Handler>, reqs: Arc<Mutex<Vec<Req>>>) {
    let mut w = match s.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut r = BufReader::new(s);
    while let Some(req) = read_request(&mut r) {
        reqs.lock().expect("requests lock").push(req.clone());
        let resp = handler(&req);
        if resp.is_empty() {
            // Hang: never answer (timeout tests).
            thread::sleep(std::time::Duration::from_secs(120));
            return;
        }
        if w.write_all(&resp).is_err() {
            return;
        }
        // A response carrying this test header is followed by closing the connection
        // although it said nothing about closing (an idle keep-alive timeout, at once).
        if resp.windows(20).any(|x| x == b"X-Test-Close-After: ") {
            return;
        }
    }
}

/// The refusal of `server/discover` by a server that speaks only the legacy revisions.
pub fn legacy_only(id: &serde_json::Value) -> Vec<u8> {
    json_response(
        400,
        &[],
        &serde_json::json!({"jsonrpc":"2.0","id":id,"error":{"code":-32600,"message":"legacy only"}})
            .to_string(),
    )
}

/// A JSON response with extra headers.
pub fn json_response(status: u16, extra: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut s = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str("\r\n");
    s.push_str(body);
    s.into_bytes()
}

/// A legacy MCP server that pages `tools/list` forever: each page one tool whose
/// description is `description_bytes` long, and a fresh `nextCursor` (the page number).
pub fn pager(description_bytes: usize) -> impl Fn(&Req) -> Vec<u8> + Send + Sync {
    let filler = "d".repeat(description_bytes);
    move |req| {
        let id = req.rpc_id();
        match req.rpc_method().as_str() {
            "initialize" => json_response(
                200,
                &[],
                &serde_json::json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-11-25",
                    "capabilities":{"tools":{}},"serverInfo":{"name":"pager","version":"1"}}})
                .to_string(),
            ),
            "notifications/initialized" => {
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
            }
            "tools/list" => {
                let n = req
                    .json()
                    .pointer("/params/cursor")
                    .and_then(|c| c.as_str())
                    .and_then(|c| c.parse::<u64>().ok())
                    .unwrap_or(0);
                json_response(
                    200,
                    &[],
                    &serde_json::json!({"jsonrpc":"2.0","id":id,"result":{
                        "tools":[{"name":format!("t{n}"),"inputSchema":{"type":"object"},"description":filler}],
                        "nextCursor": (n + 1).to_string()}})
                    .to_string(),
                )
            }
            "" => json_response(404, &[], "{}"),
            _ => json_response(
                400,
                &[],
                &serde_json::json!({"jsonrpc":"2.0","id":id,"error":{"code":-32600,"message":"no"}})
                    .to_string(),
            ),
        }
    }
}

/// A scripted OAuth-protected MCP resource server: its protected-resource metadata names
/// `as_base` (plus the members of `prm_extra`, an object), every `/mcp` request without
/// `Authorization: Bearer <access>` gets a 401 naming that metadata, and with it the
/// server speaks the 2025-11-25 legacy handshake (no `server/discover`).
pub fn oauth_resource_server(
    as_base: String,
    access: &'static str,
    prm_extra: serde_json::Value,
) -> Scripted {
    let me = Arc::new(std::sync::OnceLock::<String>::new());
    let m = me.clone();
    let srv = serve(Arc::new(move |r: &Req| {
        let url = m.get().cloned().unwrap_or_default();
        let origin = url.trim_end_matches("/mcp").to_string();
        let path = r.path.split('?').next().unwrap_or("");
        if path.starts_with("/.well-known/oauth-protected-resource") {
            let mut doc = serde_json::json!({"resource": url, "authorization_servers": [as_base]});
            if let (Some(d), Some(extra)) = (doc.as_object_mut(), prm_extra.as_object()) {
                d.extend(extra.clone());
            }
            return json_response(200, &[], &doc.to_string());
        }
        if path != "/mcp" {
            return json_response(404, &[], "{}");
        }
        if r.header("authorization").as_deref() != Some(&format!("Bearer {access}")) {
            let challenge = format!(
                "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
            );
            return json_response(401, &[("WWW-Authenticate", &challenge)], "{}");
        }
        let id = r.rpc_id();
        match r.rpc_method().as_str() {
            "server/discover" => legacy_only(&id),
            "initialize" => json_response(
                200,
                &[],
                &serde_json::json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-11-25",
                    "capabilities":{},"serverInfo":{"name":"scripted-oauth","version":"1"}}})
                .to_string(),
            ),
            "notifications/initialized" => b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec(),
            _ => json_response(
                400,
                &[],
                &serde_json::json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"no"}})
                    .to_string(),
            ),
        }
    }));
    let _ = me.set(srv.url.clone());
    srv
}

/// GET `path_and_query` on a login's loopback listener at `port`; the status code.
pub fn deliver(port: u16, path_and_query: &str) -> u16 {
    use std::io::Read;
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "GET {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    resp.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Play the user of a scripted authorization server: answer the authorization URL
/// `auth_url` with `code` and its `state` on its `redirect_uri` (no `iss`), as the
/// server's redirect would; the URL, parsed.
pub fn answer_login(auth_url: &str, code: &str) -> url::Url {
    let u = url::Url::parse(auth_url).expect("authorization URL");
    let q = |k: &str| {
        u.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let redirect = url::Url::parse(&q("redirect_uri")).expect("redirect_uri");
    let status = deliver(
        redirect.port().expect("port"),
        &format!("{}?code={code}&state={}", redirect.path(), q("state")),
    );
    assert!(status < 400, "the callback answered {status}");
    u
}
