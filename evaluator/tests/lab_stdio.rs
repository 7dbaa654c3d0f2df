//! `mcp-collect --stdio` end to end through the binaries: the test launches real SDK
//! servers (lab/stdio/) over stdio, then verifies and grades the bundles with
//! `mcp-grade`. No lab daemon is needed; the Python and Node installs of lab/install.sh
//! are. `mcp-collect` is a binary of another package, so it must be built first
//! (`cargo build --workspace --bins`, as scripts/test.sh does).
//!
//! What is asserted: 5.3.1 FAIL on a server that logs to stdout and PASS on the SDK
//! servers that do not; 3.1.1 FAIL when a credential is passed on the command line, and
//! the credential's bytes nowhere (bundle, collector stdout and stderr, reports, show);
//! `--env` names recorded and values absent; the server process (and its group) gone
//! after a run, after SIGTERM to the collector, and after the per-target deadline; the
//! exit codes of bad input and of a server that exits at once.

mod support;

use support::grade_run;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use grade_run::mcp_grade;
use mcp_probe_schema::model::{Observation, RunStatus, StdioProcess, Transport};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A lab interpreter or install ([`support::lab::require_installed`]).
fn need(rel: &str) -> Option<PathBuf> {
    support::lab::require_installed(rel)
}

fn python2() -> Option<PathBuf> {
    need("lab/.venv-mcp2/bin/python")
}

fn server(name: &str) -> String {
    root().join("lab/stdio").join(name).display().to_string()
}

/// The built `mcp-collect` ([`support::lab::require_collector`]).
fn collector() -> Option<PathBuf> {
    support::lab::require_collector()
}

/// One collector run in its own directory.
struct Collected {
    dir: tempfile::TempDir,
    out: Output,
}

impl Collected {
    fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn describe(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code(),
            self.stdout(),
            self.stderr()
        )
    }
    fn bundle(&self) -> PathBuf {
        let line = self.stdout();
        let p = line
            .lines()
            .next()
            .unwrap_or_else(|| panic!("{}", self.describe()));
        self.dir.path().join(p)
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
}

fn command(bin: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.current_dir(dir)
        .env("MCP_PROBE_HOME", dir.join("home"))
        .args(["-o", "out"])
        .stdin(Stdio::null());
    if !args.contains(&"--timeout") {
        // Long enough for a Python server to start on a loaded machine (its first answer
        // decides the era); the null-id request, which both SDKs leave unanswered, waits
        // this long too.
        c.args(["--timeout", "15"]);
    }
    c.args(args);
    c
}

fn collect(bin: &Path, args: &[&str]) -> Collected {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = command(bin, dir.path(), args)
        .output()
        .expect("runs mcp-collect");
    Collected { dir, out }
}

fn verify_and_open(c: &Collected) -> mcp_probe_schema::Verified {
    let v = mcp_grade(
        c.dir.path(),
        Some(&c.home()),
        ["verify".as_ref(), c.bundle().as_os_str()],
    );
    assert_eq!(v.code, 0, "{v:?}");
    let bytes = std::fs::read(c.bundle()).expect("bundle");
    mcp_probe_schema::open(&bytes, &[]).expect("verifies")
}

/// `mcp-grade --format json`: rule id → (verdict, evidence).
fn grade(c: &Collected) -> (HashMap<String, (String, String)>, String) {
    let r = mcp_grade(
        c.dir.path(),
        Some(&c.home()),
        ["--format".as_ref(), "json".as_ref(), c.bundle().as_os_str()],
    );
    assert!(r.code == 0 || r.code == 1 || r.code == 4, "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).expect("json report");
    let mut out = HashMap::new();
    for check in doc["checks"].as_array().expect("checks") {
        let res = &check["results"][0];
        out.insert(
            check["rule"].as_str().expect("rule").to_string(),
            (
                res["verdict"].as_str().unwrap_or("").to_string(),
                res["evidence"].as_str().unwrap_or("").to_string(),
            ),
        );
    }
    (out, r.stdout + &r.stderr)
}

fn process(v: &mcp_probe_schema::Verified) -> StdioProcess {
    v.records
        .iter()
        .find_map(|r| match &r.observation {
            Observation::StdioProcess(p) => Some(p.clone()),
            _ => None,
        })
        .expect("a stdio.process record")
}

/// True while any process of group `pgid` (the server's: it leads its own group) exists.
fn group_alive(pgid: u32) -> bool {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| {
            // pid (comm) state ppid pgrp ...: the fields after the last ')'.
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            rest.split_whitespace()
                .nth(2)
                .and_then(|g| g.parse::<u32>().ok())
                == Some(pgid)
        })
}

fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let child: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let rest = stat.rsplit_once(')')?.1;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == pid).then_some(child)
        })
        .collect()
}

fn assert_gone(p: &StdioProcess) {
    let pid = p.pid.expect("started");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "server pid {pid} still exists"
    );
    assert!(
        !group_alive(pid),
        "a process of the server's group {pid} runs on"
    );
}

#[test]
fn py2_stdio_compliant_server_is_graded_from_its_stdio_messages() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    let secret = "env-value-9f8e7d6c5b4a";
    let env = format!("LAB_STDIO_SECRET={secret}");
    let c = collect(
        &bin,
        &[
            "--stdio",
            "--env",
            &env,
            "--",
            py.to_str().expect("utf-8"),
            &server("py2_stdio.py"),
        ],
    );
    assert_eq!(c.code(), 0, "{}", c.describe());
    let v = verify_and_open(&c);
    assert_eq!(v.evidence.target.transport, Transport::Stdio);
    assert_eq!(v.evidence.run.status, RunStatus::Complete);
    let s = v.evidence.session.as_ref().expect("session");
    assert_eq!(s.revision.as_deref(), Some("2026-07-28"), "modern era");
    let p = process(&v);
    assert_eq!(p.env_names, ["LAB_STDIO_SECRET"]);
    assert!(p.credential_args.is_empty(), "{:?}", p.credential_args);
    assert_eq!(p.ended_by, "stdin-closed", "{p:?}");
    assert_gone(&p);
    // The server echoed the variable to stderr: only its fingerprint is kept.
    let stderr = String::from_utf8_lossy(&p.stderr);
    assert!(
        stderr.contains("LAB_STDIO_SECRET is redacted:sha256:"),
        "{stderr}"
    );
    let (g, report) = grade(&c);
    assert_eq!(
        g["stdio-logs-separated"].0, "PASS",
        "{:?}",
        g["stdio-logs-separated"]
    );
    assert_eq!(
        g["stdio-credentials"].0, "PASS",
        "{:?}",
        g["stdio-credentials"]
    );
    assert!(
        g["stdio-credentials"].1.contains("LAB_STDIO_SECRET"),
        "{:?}",
        g["stdio-credentials"]
    );
    assert_eq!(g["stdio-preferred"].0, "N/A");
    assert!(
        g["stdio-preferred"].1.contains("transport stdio"),
        "{:?}",
        g["stdio-preferred"]
    );
    for http_only in [
        "tls-required",
        "metadata-headers",
        "origin-validated",
        "oauth-discovery-validated",
        "size-limits",
    ] {
        assert_eq!(g[http_only].0, "N/A", "{http_only}");
        assert!(
            g[http_only].1.contains("transport stdio"),
            "{:?}",
            g[http_only]
        );
    }
    // Protocol checks are graded from the stdio messages: the inventory was read.
    assert_ne!(g["tool-schemas-validated"].0, "N/A");
    assert!(
        g["tool-schemas-validated"]
            .1
            .contains("tools/list read completely: 2 tools on 1 page"),
        "{:?}",
        g["tool-schemas-validated"]
    );
    assert!(
        g["resource-templates-typed"]
            .1
            .contains("greeting://{name}"),
        "{:?}",
        g["resource-templates-typed"]
    );
    // `null-id-rejected`: the Python SDK drops a null-id request without a word; the tools/list
    // written after it is answered, so the check is undecided at once (not an ERROR after
    // waiting out --timeout).
    assert_eq!(
        g["null-id-rejected"].0, "UNKNOWN",
        "{:?}",
        g["null-id-rejected"]
    );
    assert!(
        g["null-id-rejected"].1.contains("dropped it silently"),
        "{:?}",
        g["null-id-rejected"]
    );
    let show = mcp_grade(
        c.dir.path(),
        Some(&c.home()),
        ["show".as_ref(), c.bundle().as_os_str()],
    );
    assert!(
        show.stdout.contains("--env names: LAB_STDIO_SECRET"),
        "{show:?}"
    );
    let json = mcp_grade(
        c.dir.path(),
        Some(&c.home()),
        ["show".as_ref(), "--json".as_ref(), c.bundle().as_os_str()],
    );
    assert!(
        json.stdout.contains("\"kind\": \"stdio_process\""),
        "{json:?}"
    );
    let bytes = std::fs::read(c.bundle()).expect("bundle");
    for (what, hay) in [
        ("bundle", String::from_utf8_lossy(&bytes).into_owned()),
        ("collector output", c.stdout() + &c.stderr()),
        ("report", report),
        ("show", show.stdout + &json.stdout),
    ] {
        assert!(!hay.contains(secret), "the --env value is in the {what}");
    }
}

#[test]
fn a_log_line_on_stdout_fails_stdio_logs_separated() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    let c = collect(
        &bin,
        &[
            "--stdio",
            "--",
            py.to_str().expect("utf-8"),
            &server("py2_stdio.py"),
            "--log-to-stdout",
        ],
    );
    assert_eq!(c.code(), 0, "{}", c.describe());
    let v = verify_and_open(&c);
    let line = v.records.iter().find_map(|r| match &r.observation {
        Observation::Stdio(x) => x.received.iter().find(|l| !l.jsonrpc).cloned(),
        _ => None,
    });
    assert_eq!(
        line.map(|l| l.bytes),
        Some(b"INFO py2-stdio starting up".to_vec())
    );
    let (g, _) = grade(&c);
    let (verdict, evidence) = &g["stdio-logs-separated"];
    assert_eq!(verdict, "FAIL", "{evidence}");
    assert!(
        evidence.contains("stdout line 1 of ") && evidence.contains("INFO py2-stdio starting up"),
        "{evidence}"
    );
}

#[test]
fn a_credential_on_the_command_line_fails_stdio_credentials_and_appears_nowhere() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    let key = "Qm7xT2vL9pR4wZ8kN3bY6cH1dJ5s";
    let c = collect(
        &bin,
        &[
            "--stdio",
            "--",
            py.to_str().expect("utf-8"),
            &server("py2_stdio.py"),
            "--api-key",
            key,
        ],
    );
    assert_eq!(c.code(), 0, "{}", c.describe());
    let v = verify_and_open(&c);
    let p = process(&v);
    assert_eq!(p.credential_args.len(), 1, "{:?}", p.credential_args);
    assert_eq!(p.credential_args[0].flag.as_deref(), Some("--api-key"));
    assert!(p.argv[3].starts_with("redacted:sha256:"), "{:?}", p.argv);
    let (g, report) = grade(&c);
    let (verdict, evidence) = &g["stdio-credentials"];
    assert_eq!(verdict, "FAIL", "{evidence}");
    assert!(evidence.contains("--api-key"), "{evidence}");
    let mut shown = String::new();
    for args in [vec!["show"], vec!["show", "--json"], vec!["show", "--har"]] {
        let mut a: Vec<std::ffi::OsString> = args.iter().map(|s| s.into()).collect();
        a.push(c.bundle().into_os_string());
        let r = mcp_grade(c.dir.path(), Some(&c.home()), a);
        shown += &r.stdout;
        shown += &r.stderr;
    }
    let text = mcp_grade(
        c.dir.path(),
        Some(&c.home()),
        ["--verbose".as_ref(), c.bundle().as_os_str()],
    );
    let bytes = std::fs::read(c.bundle()).expect("bundle");
    let hay = [
        bytes,
        c.out.stdout.clone(),
        c.out.stderr.clone(),
        report.into_bytes(),
        shown.into_bytes(),
        (text.stdout + &text.stderr).into_bytes(),
    ];
    for h in &hay {
        assert!(
            !h.windows(key.len()).any(|w| w == key.as_bytes()),
            "the key leaked: {}",
            String::from_utf8_lossy(h)
        );
    }
}

/// A client configuration entry (`mcp-collect --from-config`) that writes a secret in
/// the file fails stdio-credentials naming the client, file, entry and variable; the
/// same entry referencing the secret from the environment passes; the secret's bytes
/// are in no bundle, collector output or report.
#[test]
fn a_secret_written_in_a_client_configuration_fails_stdio_credentials() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    let secret = "Zr8vK2mQ7tL4xW9pB6nC3hY5";
    for (value, want) in [
        (secret.to_string(), "FAIL"),
        ("${env:CFG_API_TOKEN}".to_string(), "PASS"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = serde_json::json!({"mcpServers": {"files": {
            "command": py.to_str().expect("utf-8"),
            "args": [server("py2_stdio.py")],
            "env": {"API_TOKEN": value, "LOG_LEVEL": "info"}
        }}});
        let file = dir.path().join("claude_desktop_config.json");
        std::fs::write(&file, config.to_string()).expect("config");
        let out = command(
            &bin,
            dir.path(),
            &[
                "--from-config",
                file.to_str().expect("utf-8"),
                "--allow-exec",
                "files",
                "--use-config-credentials",
            ],
        )
        .env("CFG_API_TOKEN", secret)
        .output()
        .expect("runs mcp-collect");
        let c = Collected { dir, out };
        assert_eq!(c.code(), 0, "{}", c.describe());
        let (g, report) = grade(&c);
        let (verdict, evidence) = &g["stdio-credentials"];
        assert_eq!(verdict, want, "{evidence}");
        if want == "FAIL" {
            assert!(
                evidence.contains("writes the value of API_TOKEN in the file itself"),
                "{evidence}"
            );
        } else {
            assert!(evidence.contains("references API_TOKEN"), "{evidence}");
        }
        assert!(evidence.contains("(entry files)"), "{evidence}");
        let bytes = std::fs::read(c.bundle()).expect("bundle");
        for h in [
            bytes,
            c.out.stdout.clone(),
            c.out.stderr.clone(),
            report.into_bytes(),
        ] {
            assert!(
                !h.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "the secret leaked: {}",
                String::from_utf8_lossy(&h)
            );
        }
    }
}

#[test]
fn sigterm_to_the_collector_stops_the_server_and_seals() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let child = command(
        &bin,
        dir.path(),
        &[
            "--timeout",
            "30",
            "--stdio",
            "--",
            py.to_str().expect("utf-8"),
            &server("py2_stdio.py"),
            "--hang",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawns");
    let start = Instant::now();
    let server_pid = loop {
        if let Some(p) = children_of(child.id()).first() {
            break *p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no server started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Past the launch, into the discover wait.
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("collector ends");
    let c = Collected { dir, out };
    assert_eq!(c.code(), 143, "{}", c.describe());
    let v = verify_and_open(&c);
    assert_eq!(v.evidence.run.status, RunStatus::Interrupted);
    let p = process(&v);
    assert_eq!(p.pid, Some(server_pid));
    assert!(
        matches!(p.ended_by.as_str(), "terminated" | "killed"),
        "{p:?}"
    );
    assert_gone(&p);
}

#[test]
fn the_deadline_stops_a_server_that_never_answers() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    let start = Instant::now();
    let c = collect(
        &bin,
        &[
            "--timeout",
            "30",
            "--target-timeout",
            "2",
            "--stdio",
            "--",
            py.to_str().expect("utf-8"),
            &server("py2_stdio.py"),
            "--hang",
        ],
    );
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(c.code(), 3, "{}", c.describe());
    let v = verify_and_open(&c);
    assert_eq!(v.evidence.run.status, RunStatus::Interrupted);
    let failure = v.evidence.run.failure.clone().unwrap_or_default();
    assert!(failure.contains("target deadline of 2 s"), "{failure}");
    // The message in flight is in the bundle, with why it has no answer.
    let in_flight = v.records.iter().find_map(|r| match &r.observation {
        Observation::Stdio(x) if r.legs.iter().any(|l| l == "endpoint.detect") => Some(x),
        _ => None,
    });
    let x = in_flight.expect("the server/discover in flight is recorded");
    assert!(
        String::from_utf8_lossy(x.sent.as_deref().unwrap_or_default()).contains("server/discover")
    );
    assert!(
        x.error
            .as_ref()
            .is_some_and(|e| e.message.contains("before the run stopped")),
        "{x:?}"
    );
    let p = process(&v);
    assert!(
        matches!(p.ended_by.as_str(), "terminated" | "killed"),
        "{p:?}"
    );
    assert_eq!(String::from_utf8_lossy(&p.stderr), "py2-stdio: hanging\n");
    assert_gone(&p);
}

#[test]
fn bad_input_and_a_server_that_exits_at_once() {
    let (Some(bin), Some(py)) = (collector(), python2()) else {
        return;
    };
    for (args, want) in [
        (vec!["--stdio"], "--stdio needs a command"),
        (
            vec!["--stdio", "--", "/nonexistent/server"],
            "cannot be started",
        ),
        (
            vec!["--stdio", "--", "no-such-program-for-mcp-probe"],
            "cannot be started",
        ),
        (
            vec!["--stdio", "--env", "NOVALUE", "--", "true"],
            "--env \"NOVALUE\"",
        ),
    ] {
        let c = collect(&bin, &args);
        assert_eq!(c.code(), 2, "{args:?}: {}", c.describe());
        let err = c.stderr();
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(c.stdout().is_empty());
    }
    let c = collect(
        &bin,
        &[
            "--stdio",
            "--",
            py.to_str().expect("utf-8"),
            &server("py2_stdio.py"),
            "--exit-now",
        ],
    );
    assert_eq!(c.code(), 3, "{}", c.describe());
    assert!(
        c.stderr().contains("the server exited (exit code 7)"),
        "{}",
        c.describe()
    );
    let v = verify_and_open(&c);
    assert_eq!(v.evidence.run.status, RunStatus::Failed);
    let p = process(&v);
    assert_eq!(p.exit.as_ref().and_then(|e| e.code), Some(7));
    assert_eq!(p.ended_by, "exited");
}

#[test]
fn legacy_and_typescript_sdk_servers_over_stdio() {
    let Some(bin) = collector() else {
        return;
    };
    if let Some(py1) = need("lab/.venv-mcp1/bin/python") {
        let c = collect(
            &bin,
            &[
                "--stdio",
                "--",
                py1.to_str().expect("utf-8"),
                &server("py1_stdio.py"),
            ],
        );
        assert_eq!(c.code(), 0, "{}", c.describe());
        let v = verify_and_open(&c);
        let s = v.evidence.session.as_ref().expect("session");
        // No server/discover in mcp 1.x: the initialize fallback.
        assert_eq!(s.revision.as_deref(), Some("2025-11-25"));
        let (g, _) = grade(&c);
        assert_eq!(
            g["stdio-logs-separated"].0, "PASS",
            "{:?}",
            g["stdio-logs-separated"]
        );
    }
    if need("lab/ts2/node_modules/@modelcontextprotocol/server").is_some() {
        let c = collect(&bin, &["--stdio", "--", "node", &server("ts2_stdio.mjs")]);
        assert_eq!(c.code(), 0, "{}", c.describe());
        let v = verify_and_open(&c);
        let s = v.evidence.session.as_ref().expect("session");
        assert_eq!(s.revision.as_deref(), Some("2026-07-28"));
        assert_eq!(
            s.server_info.as_ref().and_then(|i| i.get("name")),
            Some(&Value::from("ts-sdk-v2-stdio-probe-target"))
        );
        let (g, _) = grade(&c);
        assert_eq!(
            g["stdio-logs-separated"].0, "PASS",
            "{:?}",
            g["stdio-logs-separated"]
        );
        assert_eq!(
            g["stdio-credentials"].0, "PASS",
            "{:?}",
            g["stdio-credentials"]
        );
        assert_gone(&process(&v));
    }
}
