//! A headless OAuth login through the real `mcp-collect`: run it with `--no-browser`;
//! when it prints the authorization URL, play the user with lab/oidc/browser.sh and
//! deliver the redirect to its loopback listener. Shared by the collector's and the
//! grader's lab tests (the grader's include this file by path).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The stderr line that carries the authorization URL.
pub const URL_LINE: &str = "mcp-collect: open this URL to log in: ";

/// What one run printed and whether a login was played.
pub struct Headless {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
    /// The final redirect browser.sh delivered (carries the authorization code), when
    /// an authorization URL was printed.
    pub delivered: Option<String>,
}

/// Run `bin --no-browser -o HOME/out ARGS url` with `MCP_PROBE_HOME=home`.
pub fn collect_headless(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Headless {
    let mut child = Command::new(bin)
        .env("MCP_PROBE_HOME", home)
        .args(["--no-browser", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp-collect");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut delivered = None;
    // Wait for either the URL line or the end of the run.
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        if let Some(auth_url) = line.strip_prefix(URL_LINE) {
            let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/oidc/browser.sh");
            let out = Command::new("bash")
                .arg(browser)
                .arg(auth_url)
                .arg("--deliver")
                .output()
                .expect("browser.sh");
            assert!(
                out.status.success(),
                "browser.sh on {url}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            delivered = Some(String::from_utf8_lossy(&out.stdout).trim().to_string());
            break;
        }
    }
    let out = child.wait_with_output().expect("wait mcp-collect");
    let stderr = reader.join().expect("stderr reader");
    Headless {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        delivered,
    }
}
