//! A `--stdio` server that writes without end is bounded: the real
//! `mcp-collect` against `support/stdio_flood.py`, one hostile mode per test, with a
//! small `--bundle-cap` and a short `--target-timeout`. The server ignores SIGTERM,
//! outlives its stdin and leaves a `sleep` grandchild. Each case asserts, measured from
//! outside the collector (`support/maxrss.py`, `os.wait4`): peak RSS at most the cap
//! plus 64 MiB, the run over within the target deadline plus slack, exactly one bundle
//! that verifies, the server and its grandchild gone, and the bound recorded
//! (`unkept`, `run.bundle_capped_from`, status `interrupted`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{Observation, RunStatus, StdioExchange, StdioProcess, StdioUnkept};

/// `--bundle-cap`: 4 MiB.
const CAP: u64 = 4 << 20;
/// `--body-cap`: 64 KiB.
const BODY_CAP: u64 = 64 << 10;
/// `--timeout`, seconds.
const TIMEOUT: u64 = 1;
/// `--target-timeout`, seconds: shorter than the unanswered requests of a run take at
/// one `--timeout` each, so a server that never answers is always cut by it.
const TARGET_TIMEOUT: u64 = 2;
/// What the run may take beyond the target deadline: the line being handled when it
/// passed, stopping the server (SIGTERM, 0.5 s, SIGKILL), the lines still queued, and
/// sealing, in a debug build on two shared cores (about 3.5 s when measured alone).
const SLACK: Duration = Duration::from_secs(8);
/// Peak RSS allowed, KiB: the cap plus 64 MiB.
const RSS_LIMIT_KIB: u64 = (CAP + (64 << 20)) / 1024;

fn support_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(name)
}

/// The real interpreter (not a version manager's shim, which needs `HOME`: the
/// collector gives the server a clean environment).
fn python() -> &'static str {
    static P: OnceLock<String> = OnceLock::new();
    P.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
}

struct Flood {
    mode: String,
    run: support::Run,
    elapsed: Duration,
    v: mcp_probe_schema::Verified,
}

impl Flood {
    fn exchanges(&self) -> Vec<(u64, &StdioExchange)> {
        self.v
            .records
            .iter()
            .filter_map(|r| match &r.observation {
                Observation::Stdio(x) => Some((r.seq, x)),
                _ => None,
            })
            .collect()
    }

    fn unkept(&self) -> Vec<(u64, &StdioUnkept)> {
        self.exchanges()
            .into_iter()
            .filter_map(|(s, x)| x.unkept.as_ref().map(|u| (s, u)))
            .collect()
    }

    fn process(&self) -> &StdioProcess {
        self.v
            .records
            .iter()
            .find_map(|r| match &r.observation {
                Observation::StdioProcess(p) => Some(p),
                _ => None,
            })
            .expect("the process record")
    }

    /// The bound is recorded: some record counted lines, and the first of them is
    /// `run.bundle_capped_from`.
    fn assert_capped(&self) {
        let u = self.unkept();
        let first = u
            .first()
            .unwrap_or_else(|| panic!("{}: no unkept lines", self.mode));
        assert_eq!(
            self.v.evidence.run.bundle_capped_from,
            Some(first.0),
            "{}",
            self.mode
        );
        for (_, u) in &u {
            assert!(u.lines > 0 && u.sha256.len() == 32, "{u:?}");
            assert!(u.first_at_us <= u.last_at_us, "{u:?}");
            assert!(u.jsonrpc + u.cut <= u.lines, "{u:?}");
        }
        // What was stored stays within the run's share of the cap.
        let stored: u64 = self
            .exchanges()
            .iter()
            .flat_map(|(_, x)| x.received.iter())
            .map(|l| l.bytes.len() as u64 + 96)
            .sum();
        assert!(stored <= CAP / 2 + BODY_CAP + 96, "{stored}");
    }

    fn unkept_lines(&self) -> (u64, u64, u64) {
        self.unkept().iter().fold((0, 0, 0), |(l, j, c), (_, u)| {
            (l + u.lines, j + u.jsonrpc, c + u.cut)
        })
    }
}

fn alive(pid: u32) -> bool {
    // A zombie left to an init that does not reap is gone as far as the test cares.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.split_whitespace().next() != Some("Z"))
        })
        .unwrap_or(false)
}

fn flood(mode: &str, answer: bool) -> Flood {
    flood_within(mode, answer, TIMEOUT, TARGET_TIMEOUT)
}

fn flood_within(mode: &str, answer: bool, timeout: u64, target_timeout: u64) -> Flood {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pids");
    let report = dir.path().join("rss");
    let mut c = Command::new(python());
    c.arg(support_file("maxrss.py"))
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", dir.path().join("home"))
        .env_remove("HOME")
        .arg("-o")
        .arg(dir.path().join("out"));
    for a in [
        "--timeout",
        &timeout.to_string(),
        "--target-timeout",
        &target_timeout.to_string(),
        "--bundle-cap",
        &CAP.to_string(),
        "--body-cap",
        &BODY_CAP.to_string(),
        "--stdio",
        "--",
        python(),
    ] {
        c.arg(a);
    }
    c.arg(support_file("stdio_flood.py"))
        .arg(mode)
        .arg(&pidfile);
    if answer {
        c.arg("answer");
    }
    let t0 = Instant::now();
    let out = c.output().expect("run mcp-collect under maxrss.py");
    let elapsed = t0.elapsed();
    let run = support::Run { out, dir };
    let rss_kib = std::fs::read_to_string(&report)
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{mode}: no rusage report\n{}", run.describe()));
    eprintln!(
        "stdio_flood {mode}{}: peak RSS {:.1} MiB, {:.2} s, exit {}",
        if answer { " (answering)" } else { "" },
        rss_kib as f64 / 1024.0,
        elapsed.as_secs_f64(),
        run.code()
    );
    assert!(
        !run.stderr().contains("panicked"),
        "{mode}: {}",
        run.describe()
    );
    assert!(
        rss_kib <= RSS_LIMIT_KIB,
        "{mode}: peak RSS {rss_kib} KiB over {RSS_LIMIT_KIB} KiB"
    );
    let bundles = run.bundles();
    assert_eq!(bundles.len(), 1, "{mode}: {}", run.describe());
    // The run as the collector timed it (target start to seal), without the start of
    // the debug binary and of the Python flooder, which a loaded machine stretches
    // most: that is where the deadline and its slack apply.
    let v = support::open(&bundles[0]);
    let inside = Duration::from_micros(
        (v.evidence.run.finished_at - v.evidence.run.started_at).max(0) as u64,
    );
    eprintln!(
        "stdio_flood {mode}: {:.2} s from target start to seal",
        inside.as_secs_f64()
    );
    assert!(
        inside <= Duration::from_secs(target_timeout) + SLACK,
        "{mode}: the run took {inside:?} from target start to seal ({elapsed:?} in all)\n{}",
        run.describe()
    );
    // From outside: still far below a run without the deadline (a flood that never
    // ends, or one --timeout per unanswered request).
    assert!(
        elapsed <= Duration::from_secs(target_timeout) + 3 * SLACK,
        "{mode}: took {elapsed:?} in all\n{}",
        run.describe()
    );
    let files: Vec<_> = std::fs::read_dir(run.dir.path().join("out"))
        .expect("out dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files.len(),
        1,
        "{mode}: one file, no journal left: {files:?}"
    );
    // Verified as `mcp-grade verify` does (signature, chain, format), above …
    // … and by `mcp-grade verify` itself when the workspace's binaries are built.
    let grader = Path::new(env!("CARGO_BIN_EXE_mcp-collect")).with_file_name("mcp-grade");
    if grader.exists() {
        let out = Command::new(&grader)
            .arg("verify")
            .arg(&bundles[0])
            .output()
            .expect("run mcp-grade verify");
        assert!(
            out.status.success(),
            "{mode}: mcp-grade verify: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The server (SIGTERM ignored, stdin's end ignored) and its grandchild are gone.
    let pids = std::fs::read_to_string(&pidfile).expect("the server wrote its pids");
    for pid in pids
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
    {
        assert!(!alive(pid), "{mode}: pid {pid} runs on");
    }
    let size = std::fs::metadata(&bundles[0]).expect("bundle").len();
    assert!(size <= CAP + (1 << 20), "{mode}: bundle of {size} bytes");
    Flood {
        mode: mode.to_string(),
        run,
        elapsed,
        v,
    }
}

fn assert_interrupted_by_the_deadline(f: &Flood) {
    assert_eq!(
        f.v.evidence.run.status,
        RunStatus::Interrupted,
        "{}",
        f.run.describe()
    );
    let why = support::failure(&f.v);
    assert!(why.contains("target deadline"), "{why}");
    assert!(
        f.elapsed >= Duration::from_secs(TARGET_TIMEOUT),
        "{:?}",
        f.elapsed
    );
}

#[test]
fn endless_notifications_are_counted_past_the_budget_and_the_deadline_holds() {
    let f = flood("notify", false);
    assert_interrupted_by_the_deadline(&f);
    f.assert_capped();
    let (lines, jsonrpc, cut) = f.unkept_lines();
    assert!(lines > 10_000, "{lines}");
    assert_eq!((jsonrpc, cut), (lines, 0), "every unkept line was JSON-RPC");
    assert_eq!(f.process().ended_by, "killed");
}

#[test]
fn a_flood_that_still_answers_completes_with_its_answers_stored() {
    // A debug build reads a few MB of lines a second: the first answer waits behind
    // the burst.
    let f = flood_within("notify", true, 4, 15);
    assert_eq!(f.run.code(), 0, "{}", f.run.describe());
    assert_eq!(f.v.evidence.run.status, RunStatus::Complete);
    f.assert_capped();
    // The answers were kept although the budget was spent long before them.
    let inv = mcp_probe_schema::derive::inventory(&f.v.records);
    assert!(inv.tools.complete, "{:?}", inv.tools);
    assert_eq!(inv.tools.items.len(), 1);
}

#[test]
fn endless_log_lines_are_counted_as_not_protocol() {
    let f = flood("junk", false);
    assert_interrupted_by_the_deadline(&f);
    f.assert_capped();
    let (lines, jsonrpc, cut) = f.unkept_lines();
    assert!(
        lines > 10_000 && jsonrpc == 0 && cut == 0,
        "{lines} {jsonrpc} {cut}"
    );
}

#[test]
fn endless_empty_lines_are_bounded_too() {
    let f = flood("empty", false);
    assert_interrupted_by_the_deadline(&f);
    f.assert_capped();
    let u = f.unkept();
    assert!(u.iter().all(|(_, u)| u.bytes == 0 && u.jsonrpc == 0));
    // Each empty line costs its overhead: the stored ones stop near half the cap.
    let stored = f
        .exchanges()
        .iter()
        .map(|(_, x)| x.received.len() as u64)
        .sum::<u64>();
    assert!(stored <= CAP / 2 / 96 + 1, "{stored}");
}

#[test]
fn one_endless_line_is_held_to_the_body_cap_and_its_length_counted() {
    let f = flood("endless", false);
    // Each request costs `--timeout`; the run may end before the deadline.
    assert!(
        matches!(
            f.v.evidence.run.status,
            RunStatus::Interrupted | RunStatus::Complete
        ),
        "{}",
        f.run.describe()
    );
    // The line ended when the server was killed: stored cut, its whole length counted.
    let cut: Vec<_> = f
        .exchanges()
        .into_iter()
        .flat_map(|(_, x)| x.received.iter())
        .filter(|l| (l.bytes.len() as u64) < l.length)
        .collect();
    assert_eq!(cut.len(), 1, "{}", f.run.describe());
    assert_eq!(cut[0].bytes.len() as u64, BODY_CAP);
    assert!(cut[0].length > 16 * BODY_CAP, "{}", cut[0].length);
    assert!(!cut[0].jsonrpc);
}

#[test]
fn answers_to_ids_never_sent_are_counted_and_not_taken_for_answers() {
    let f = flood("foreign", false);
    assert_interrupted_by_the_deadline(&f);
    f.assert_capped();
    let (lines, jsonrpc, _) = f.unkept_lines();
    assert!(lines > 1000 && jsonrpc == lines, "{lines} {jsonrpc}");
    // No session beyond the handshake: the inventory was never answered.
    let inv = mcp_probe_schema::derive::inventory(&f.v.records);
    assert!(inv.tools.items.is_empty());
}

#[test]
fn endless_stderr_is_stored_to_the_body_cap_and_counted() {
    let f = flood("stderr", true);
    let p = f.process();
    assert_eq!(p.stderr.len() as u64, BODY_CAP, "{}", f.run.describe());
    assert!(p.stderr_length > 16 * BODY_CAP, "{}", p.stderr_length);
}

#[test]
fn a_flood_before_initialize_leaves_no_session_and_a_bounded_bundle() {
    let f = flood("preinit", false);
    assert_eq!(f.run.code(), 3, "{}", f.run.describe());
    assert!(f.v.evidence.session.is_none());
    f.assert_capped();
    let (lines, jsonrpc, _) = f.unkept_lines();
    assert!(lines > 10_000 && jsonrpc == 0, "{lines}");
}
