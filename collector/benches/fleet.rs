//! A simulated fleet (docs/performance.md, "A fleet of 1,000 endpoints"): one process —
//! this one — serves a small MCP server on each of `FLEET_TARGETS` (default 1,000) distinct
//! loopback ports, and the real `mcp-collect` collects all of them from one servers file
//! at `--concurrency FLEET_CONCURRENCY` (default 64). Printed: the wall time of one target
//! alone (median of five runs), the wall time of the fleet against `targets / concurrency x
//! one target`, the collector's peak RSS for the fleet and for a tenth of it (memory must
//! not grow with the number of targets, only with the concurrency), the bundles' statuses
//! and sizes. Not a timed test: run it by hand with
//! `cargo bench -p mcp-probe-collector --bench fleet`. `FLEET_COLLECTOR=/path/to/mcp-collect`
//! runs another build (an earlier commit's, to compare) or a wrapper script in its place
//! (one that runs it under `valgrind --tool=callgrind`, to count its instructions).
//!
//! The server speaks the legacy revisions over Streamable HTTP (JSON responses): it refuses
//! `server/discover` like a 2025-era server, answers `initialize`, lists three tools, one
//! resource and one prompt, refuses what it does not know with -32601 and answers GET and
//! DELETE with 405. Every connection gets its own thread; the listeners share nothing.

#[path = "../tests/support/mod.rs"]
mod support;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use support::{accept, json_response, read_request, Req};

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n: usize = env_or("FLEET_TARGETS", 1000);
    let conc: usize = env_or("FLEET_CONCURRENCY", 64);
    let stop = Arc::new(AtomicBool::new(false));
    let mut urls = Vec::with_capacity(n);
    for _ in 0..n {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = l.local_addr().expect("addr").port();
        urls.push(format!("http://127.0.0.1:{port}/mcp"));
        accept(l, stop.clone(), |s| {
            let Ok(mut w) = s.try_clone() else { return };
            let mut r = std::io::BufReader::new(s);
            while let Some(req) = read_request(&mut r) {
                if std::io::Write::write_all(&mut w, &answer(&req)).is_err() {
                    return;
                }
            }
        });
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::var("FLEET_COLLECTOR")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-collect").to_string());
    let exe = exe.as_str();
    println!(
        "fleet: {n} endpoints on distinct loopback ports, one server process, --concurrency {conc}"
    );

    let mut one_cpu = Vec::new();
    let mut singles: Vec<f64> = (0..5)
        .map(|i| run(exe, dir.path(), &format!("one{i}"), &urls[i..=i], 1))
        .map(|r| {
            one_cpu.push(r.cpu);
            r.wall
        })
        .collect();
    singles.sort_by(f64::total_cmp);
    let one = singles[2];
    one_cpu.sort_by(f64::total_cmp);
    println!(
        "  one target alone   {:.3} s, collector CPU {:.3} s (medians of 5; walls {})",
        one,
        one_cpu[2],
        singles
            .iter()
            .map(|s| format!("{s:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let sizes: Vec<usize> = std::env::var("FLEET_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![(n / 10).max(conc), n]);
    for size in sizes {
        let set = &urls[..size.min(n)];
        let r = run(exe, dir.path(), &format!("fleet{size}"), set, conc);
        let ideal = set.len() as f64 / conc as f64 * one;
        println!(
            "  {:>5} targets      wall {:.2} s; {} / {conc} x one target = {:.2} s (ratio {:.2}); \
             collector CPU {:.2} s ({:.1} ms per target); peak RSS {:.1} MiB; exit {:?}; \
             {} bundles, {:.1} MiB; statuses {}",
            set.len(),
            r.wall,
            set.len(),
            ideal,
            r.wall / ideal,
            r.cpu,
            r.cpu * 1000.0 / set.len() as f64,
            r.rss_kb as f64 / 1024.0,
            r.code,
            r.bundles,
            r.bundle_bytes as f64 / 1048576.0,
            r.statuses
        );
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Measured {
    wall: f64,
    /// User plus system CPU seconds of the collector.
    cpu: f64,
    rss_kb: u64,
    code: Option<i32>,
    bundles: usize,
    bundle_bytes: u64,
    statuses: String,
}

/// Run `mcp-collect` over `urls` under `/usr/bin/time -v`.
fn run(exe: &str, root: &Path, label: &str, urls: &[String], conc: usize) -> Measured {
    let servers = root.join(format!("{label}.txt"));
    std::fs::write(&servers, urls.join("\n") + "\n").expect("servers file");
    let out_dir = root.join(label);
    let manifest = root.join(format!("{label}.jsonl"));
    let t0 = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(exe)
        .env("MCP_PROBE_HOME", root.join("home"))
        .env_remove("HOME")
        .args(["-q", "--timeout", "30", "--concurrency"])
        .arg(conc.to_string())
        .arg("--servers-file")
        .arg(&servers)
        .arg("--manifest")
        .arg(&manifest)
        .arg("-o")
        .arg(&out_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run mcp-collect under /usr/bin/time");
    let wall = t0.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss_kb = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let secs = |key: &str| -> f64 {
        stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let cpu = secs("User time (seconds):") + secs("System time (seconds):");
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for line in std::fs::read_to_string(&manifest)
        .unwrap_or_default()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        *statuses
            .entry(v["status"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bundles: Vec<&str> = stdout.lines().filter(|l| l.ends_with(".mcpev")).collect();
    let bundle_bytes = bundles
        .iter()
        .filter_map(|b| std::fs::metadata(b).ok())
        .map(|m| m.len())
        .sum();
    Measured {
        wall,
        cpu,
        rss_kb,
        code: out.status.code(),
        bundles: bundles.len(),
        bundle_bytes,
        statuses: format!("{statuses:?}"),
    }
}

/// The fleet server's answer to one request.
fn answer(req: &Req) -> Vec<u8> {
    if req.method != "POST" {
        return b"HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n"
            .to_vec();
    }
    let id = req.rpc_id();
    let result = |r: serde_json::Value| {
        json_response(
            200,
            &[],
            &json!({"jsonrpc":"2.0","id":id,"result":r}).to_string(),
        )
    };
    match req.rpc_method().as_str() {
        "server/discover" => support::legacy_only(&id),
        "initialize" => result(json!({"protocolVersion":"2025-11-25",
            "capabilities":{"tools":{},"resources":{},"prompts":{}},
            "serverInfo":{"name":"fleet","version":"1.0.0"}})),
        m if m.starts_with("notifications/") => {
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
        }
        "tools/list" => result(json!({"tools":[
            {"name":"echo","description":"Echo the text.","inputSchema":{"type":"object",
                "properties":{"text":{"type":"string"}},"required":["text"]}},
            {"name":"add","description":"Add two numbers.","inputSchema":{"type":"object",
                "properties":{"a":{"type":"number"},"b":{"type":"number"}}}},
            {"name":"now","description":"The time.","inputSchema":{"type":"object"}}]})),
        "resources/list" => result(json!({"resources":[
            {"uri":"file:///readme.txt","name":"readme","mimeType":"text/plain"}]})),
        "resources/templates/list" => result(json!({"resourceTemplates":[]})),
        "prompts/list" => result(json!({"prompts":[{"name":"greet","arguments":[]}]})),
        "ping" => result(json!({})),
        "" => json_response(400, &[], "{}"),
        _ => json_response(
            200,
            &[],
            &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}})
                .to_string(),
        ),
    }
}
