//! Collector memory against a server that pages ~1 MiB `tools/list` pages forever
//! (docs/performance.md, "Collector"): runs the real `mcp-collect` with `--max-pages 1000` and the default
//! `--bundle-cap` (64 MiB) and `--body-cap` (1 MiB) against a loopback server started
//! here, and prints the bundle size, the record count, the first record stored without
//! bodies, the wall time and the collector's peak RSS (`/usr/bin/time -v` when present,
//! else the last `VmHWM` read from `/proc/<pid>/status`). Not a timed test: run it by
//! hand (`cargo bench -p mcp-probe-collector --bench paging_rss`); the figures are in
//! docs/performance.md. `PAGING_RSS_PAGES` overrides the page bound and
//! `PAGING_RSS_BUNDLE_CAP` passes a `--bundle-cap` (to show the collector's memory does
//! not grow with the bundle); `PAGING_RSS_TOKEN` is sent with `--token-env` (so every
//! record is also scrubbed of a known secret in every encoding).

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{pager, serve};

/// Page body size: under the default 1 MiB body cap, so every page parses and paging
/// goes on to the page bound.
const PAGE: usize = 1_000_000;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let pages = std::env::var("PAGING_RSS_PAGES").unwrap_or_else(|_| "1000".into());
    let cap = std::env::var("PAGING_RSS_BUNDLE_CAP").ok();
    let token = std::env::var("PAGING_RSS_TOKEN").is_ok();
    let server = serve(Arc::new(pager(PAGE - 160)));
    let url = server.url.clone();
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = env!("CARGO_BIN_EXE_mcp-collect");
    let timev = std::path::Path::new("/usr/bin/time").exists();
    let mut cmd = if timev {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-v").arg(exe);
        c
    } else {
        Command::new(exe)
    };
    cmd.env("MCP_PROBE_HOME", dir.path().join("home"))
        .env_remove("HOME")
        .args([
            "-q",
            "--max-pages",
            &pages,
            "--timeout",
            "120",
            "--target-timeout",
            "3600",
            "-o",
        ])
        .arg(dir.path().join("out"))
        .args(cap.iter().flat_map(|c| ["--bundle-cap", c.as_str()]))
        .args(
            token
                .then_some(["--token-env", "PAGING_RSS_TOKEN"])
                .iter()
                .flatten(),
        )
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let child = cmd.spawn().expect("run mcp-collect");
    let pid = child.id();
    let poll = std::thread::spawn(move || {
        let mut hwm = 0u64;
        loop {
            let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                return hwm;
            };
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                hwm = hwm.max(kb);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let out = child.wait_with_output().expect("mcp-collect ran");
    let elapsed = t0.elapsed();
    let polled = poll.join().unwrap_or(0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss_kb = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(polled);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(bundle) = stdout.lines().next() else {
        eprintln!("no bundle; exit {:?}\n{stderr}", out.status.code());
        std::process::exit(1);
    };
    let bytes = std::fs::read(bundle).expect("bundle");
    let v = mcp_probe_schema::open(&bytes, &[]).expect("the bundle verifies");
    let pages_seen = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l == "inventory.tools"))
        .count();
    println!(
        "paging_rss: --max-pages {pages}, --bundle-cap {}, default --body-cap{}",
        cap.as_deref().unwrap_or("default (64 MiB)"),
        if token { ", --token-env" } else { "" }
    );
    println!("  exit status        {:?}", out.status.code());
    println!("  wall time          {:.1} s", elapsed.as_secs_f64());
    println!(
        "  bundle size        {} bytes ({:.1} MiB)",
        bytes.len(),
        bytes.len() as f64 / 1048576.0
    );
    println!(
        "  records            {} ({pages_seen} inventory.tools pages)",
        v.records.len()
    );
    println!(
        "  bodies dropped from record {:?}",
        v.evidence.run.bundle_capped_from
    );
    println!(
        "  peak RSS           {} kB ({:.1} MiB)",
        rss_kb,
        rss_kb as f64 / 1024.0
    );
}
