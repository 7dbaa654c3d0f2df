//! A headless OAuth login through the real `mcp-collect`: run it with `--no-browser`;
//! when it prints the authorization URL, play the user with lab/oidc/browser.sh and
//! deliver the redirect to its loopback listener. Shared by the collector's and the
//! grader's lab tests (the grader's include this file by path).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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

/// What a run of `mcp-collect` printed.
pub struct Played {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

/// Run `cmd` (stdin null, stdout and stderr read), playing the user: `on_url` is called
/// with the authorization URL the first time the run prints it on stderr. A run still
/// going after `limit` is killed (what it printed is kept).
pub fn run_playing(mut cmd: Command, limit: Duration, mut on_url: impl FnMut(&str)) -> Played {
    let mut child = cmd
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
    let started = Instant::now();
    let mut played = false;
    loop {
        match rx.recv_timeout(limit.saturating_sub(started.elapsed())) {
            Ok(line) => {
                if let (false, Some(u)) = (played, line.strip_prefix(URL_LINE)) {
                    played = true;
                    on_url(u.trim());
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                break;
            }
        }
    }
    let out = child.wait_with_output().expect("wait mcp-collect");
    Played {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: reader.join().expect("stderr reader"),
    }
}

/// Run `bin --no-browser -o HOME/out ARGS url` with `MCP_PROBE_HOME=home`.
pub fn collect_headless(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Headless {
    let mut cmd = Command::new(bin);
    cmd.env("MCP_PROBE_HOME", home)
        .args(["--no-browser", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(url);
    let mut delivered = None;
    let ran = run_playing(cmd, Duration::from_secs(600), |auth_url| {
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
    });
    Headless {
        code: ran.code,
        stdout: ran.stdout,
        stderr: ran.stderr,
        delivered,
    }
}
