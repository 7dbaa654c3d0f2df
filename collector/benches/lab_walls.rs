//! Per lab server: the collector's wall time against the sum of its request round trips
//! (docs/performance.md, "Per lab server"). For each MCP server of the running lab
//! (`lab/up.sh`; the LAB_* variables, else `lab/run/env`), runs the real `mcp-collect`
//! alone against it `LAB_WALLS_RUNS` times (default 3), opens each bundle and prints the
//! median of: the run's wall time (the collector process, start to exit), the run's own
//! span (`run.started_at` to `run.finished_at`), the sum of every record's duration (the
//! time each request waited for its answer, TLS handshakes and TCP probes included), the
//! longest record and the number of records. A sum above the span means requests
//! overlapped; the span minus the sum (when positive) is the collector's own time between
//! requests. Not a timed test: run it by hand with
//! `cargo bench -p mcp-probe-collector --bench lab_walls`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Instant;

/// The lab's MCP servers reachable without a login, and the URL to give.
const SERVERS: &[(&str, &str)] = &[
    ("py2", "LAB_PY2"),
    ("py2-sl-json", "LAB_PY2_SL_JSON"),
    ("py2-nodns", "LAB_PY2_NODNS"),
    ("py2-paged", "LAB_PY2_PAGED"),
    ("py2-sloppy", "LAB_PY2_SLOPPY"),
    ("py2-staged", "LAB_PY2_STAGED"),
    ("py2-files", "LAB_PY2_FILES"),
    ("nostore", "LAB_NOSTORE"),
    ("py1", "LAB_PY1"),
    ("fastmcp", "LAB_FASTMCP"),
    ("fastmcp-auto", "LAB_FASTMCP_AUTO"),
    ("ts2", "LAB_TS2"),
    ("ts2-reject", "LAB_TS2_REJECT"),
    ("nginx TLS front (py2)", "LAB_TLS_MODERN"),
];

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runs: usize = std::env::var("LAB_WALLS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let exe = env!("CARGO_BIN_EXE_mcp-collect");
    let dir = tempfile::tempdir().expect("tempdir");
    println!(
        "| server | process wall | run span | sum of round trips | sum / span | longest | records |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, var) in SERVERS {
        let Some(v) = support::lab(var) else { continue };
        let mut args: Vec<String> = vec!["-q".into()];
        let url = if *var == "LAB_TLS_MODERN" {
            let Some(ca) = support::lab("LAB_TLS_CA") else {
                continue;
            };
            args.extend(["--ca-file".into(), ca]);
            format!("https://{v}/mcp")
        } else {
            v
        };
        let mut rows = Vec::new();
        for i in 0..runs {
            let out_dir = dir.path().join(format!("{name}-{i}"));
            let t0 = Instant::now();
            let out = Command::new(exe)
                .env("MCP_PROBE_HOME", dir.path().join("home"))
                .env_remove("HOME")
                .args(&args)
                .arg("-o")
                .arg(&out_dir)
                .arg(&url)
                .output()
                .expect("run mcp-collect");
            let wall = t0.elapsed().as_secs_f64();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let Some(bundle) = stdout.lines().find(|l| l.ends_with(".mcpev")) else {
                eprintln!(
                    "{name}: no bundle: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                break;
            };
            let v = support::open(std::path::Path::new(bundle));
            let span = (v.evidence.run.finished_at - v.evidence.run.started_at) as f64 / 1e6;
            let durations: Vec<u64> = v.records.iter().map(|r| r.duration_us).collect();
            let sum = durations.iter().sum::<u64>() as f64 / 1e6;
            let longest = durations.iter().max().copied().unwrap_or(0) as f64 / 1e6;
            rows.push((wall, span, sum, longest, v.records.len()));
        }
        if rows.is_empty() {
            continue;
        }
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (wall, span, sum, longest, records) = rows[rows.len() / 2];
        println!(
            "| {name} | {wall:.3} s | {span:.3} s | {sum:.3} s | {:.2} | {longest:.3} s | {records} |",
            sum / span
        );
    }
}
