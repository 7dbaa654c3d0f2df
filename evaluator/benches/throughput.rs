//! Grading and verification throughput of the `mcp-grade` binary, beside the floor of
//! the work every bundle needs (docs/performance.md, "Grading and verification
//! throughput"). Not a timed test: it prints figures.
//!
//! Run with `cargo bench -p mcp-probe-evaluator --bench throughput`. It needs GNU time at
//! `/usr/bin/time`. Two parts:
//!
//! * **The floor**, measured in this process on the example bundles: SHA-256 and SHA-512
//!   over their bytes (MB/s), one Ed25519 verification (µs), and one decode of a bundle
//!   already known good ([`mcp_probe_schema::bundle::decode_verified`]: payload and
//!   records), each timed in CPU time of this thread, on the allocator `mcp-grade` uses
//!   (mimalloc). One bundle's floor is one SHA-512 and one SHA-256 pass over its bytes, one
//!   Ed25519 verification and one decode; it is printed as bundles per second per core.
//! * **The report's part**, measured in this process: the example bundles graded once
//!   (not timed), then `THROUGHPUT_BUNDLES` servers in turn put into a report the way
//!   `mcp-grade --format json` over that many bundles does (each server's outcomes
//!   rendered to their JSON results and written to the spill file, the report finished,
//!   then written whole, reading the results back a check at a time), to `io::sink()`.
//!   This is what the JSON report costs a bundle after its checks are graded; with the
//!   floor it bounds what grading can reach however cheap the checks become, with the
//!   report's bytes and the memory bound as they are.
//! * **The binary**: `THROUGHPUT_BUNDLES` copies (default 520) of `examples/*.mcpev` in
//!   turn, in a temporary directory; `mcp-grade --format json --jobs J` (one report over
//!   all of them, to /dev/null) and `mcp-grade verify --jobs J`, for each J of
//!   `THROUGHPUT_JOBS` (default `1,2`), each run `THROUGHPUT_RUNS` times (default 3,
//!   the median printed). A one-job run is pinned to one core (`taskset -c 0`) when
//!   `taskset` is there. Figures: wall time, CPU time (user + sys, from GNU time) and
//!   bundles per second by each; on a shared machine the CPU figure is the one that
//!   means something.
//!
//! `THROUGHPUT_GRADER=/path/to/mcp-grade` measures another build (to compare before and
//! after a change); a grader without `--jobs` is run without it (`THROUGHPUT_JOBS=1`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use ed25519_dalek::{Signer, SigningKey, Verifier};
use mcp_probe_evaluator::benchmark::{grade_bundle, Benchmark, CheckResult};
use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::report::{self, json, Format, Server};
use sha2::{Digest, Sha256};

/// The allocator `mcp-grade` uses (`src/main.rs`): the floor's decode and the report's
/// part allocate for every string, so under another allocator they would measure
/// something the binary does not do.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TIME: &str = "/usr/bin/time";

#[path = "../tests/support/examples.rs"]
mod examples;
use examples::examples;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn grader() -> PathBuf {
    std::env::var_os("THROUGHPUT_GRADER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcp-grade")))
}

/// This thread's CPU time so far, in seconds (`/proc/thread-self/schedstat`: time on a
/// CPU, in nanoseconds), so that the floor counts the CPU the work took and not the time
/// other processes held the cores; wall time where that file is missing.
fn cpu_now(start: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(|| start.elapsed().as_secs_f64(), |ns| ns as f64 / 1e9)
}

/// CPU seconds per call of `f`, over at least `min_secs` of CPU time.
fn per_call(min_secs: f64, mut f: impl FnMut()) -> f64 {
    let origin = Instant::now();
    let mut n = 0u64;
    let start = cpu_now(origin);
    loop {
        f();
        n += 1;
        let t = cpu_now(origin) - start;
        if t >= min_secs {
            return t / n as f64;
        }
    }
}

/// The floor: rates of the four costs every bundle pays once, on this machine.
fn floor(files: &[Vec<u8>]) -> f64 {
    let bytes: usize = files.iter().map(Vec::len).sum();
    let mean = bytes as f64 / files.len() as f64;
    let mb = |secs: f64| bytes as f64 / secs / 1e6;
    let sha256 = per_call(1.0, || {
        for f in files {
            std::hint::black_box(Sha256::digest(f));
        }
    });
    // SHA-512 as bundle verification computes it (sha2 0.11: docs/performance.md).
    let sha512 = per_call(1.0, || {
        for f in files {
            std::hint::black_box(<sha2_011::Sha512 as sha2_011::Digest>::digest(f));
        }
    });
    let key = SigningKey::from_bytes(&[7; 32]);
    let msg = vec![0x5a; 256];
    let sig = key.sign(&msg);
    let public = key.verifying_key();
    // The message is short: this is the fixed cost of one verification, the hashing of
    // the payload is the SHA-512 figure above.
    let ed25519 = per_call(1.0, || {
        public.verify(&msg, &sig).expect("verifies");
    });
    let decode = per_call(2.0, || {
        for f in files {
            std::hint::black_box(
                mcp_probe_schema::bundle::decode_verified(f).expect("an example decodes"),
            );
        }
    });
    let n = files.len() as f64;
    let per_bundle = (sha256 + sha512 + decode) / n + ed25519;
    println!(
        "floor, {} example bundles, mean {:.1} KB, this process, one thread, CPU time:",
        files.len(),
        mean / 1e3
    );
    println!(
        "  SHA-256 {:>8.0} MB/s   {:>7.1} us a bundle",
        mb(sha256),
        sha256 / n * 1e6
    );
    println!(
        "  SHA-512 {:>8.0} MB/s   {:>7.1} us a bundle",
        mb(sha512),
        sha512 / n * 1e6
    );
    println!("  Ed25519 verify           {:>7.1} us", ed25519 * 1e6);
    println!(
        "  decode  {:>8.0} MB/s   {:>7.1} us a bundle",
        mb(decode),
        decode / n * 1e6
    );
    println!(
        "  floor: {:.1} us a bundle = {:.0} bundles/s per core",
        per_bundle * 1e6,
        1.0 / per_bundle
    );
    per_bundle
}

/// The JSON report's part of grading `n` bundles (the examples in turn), CPU seconds a
/// bundle: preparing each server for the spill file (its outcomes rendered to their JSON
/// results), writing it there, finishing the report (sorting the servers) and writing
/// the report to `io::sink()` (the results read back a check at a time). The examples
/// are graded once, before the clock starts; each server is added as a copy, and what
/// making the copies costs (measured alone) is taken off.
fn report_part(paths: &[PathBuf], n: usize) -> f64 {
    let bm = Benchmark::builtin();
    let graded: Vec<(Server, Vec<CheckResult>)> = paths
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).expect("example");
            let v = mcp_probe_schema::bundle::decode_verified(&bytes).expect("an example decodes");
            let ev = Bundle::new(p.display().to_string(), v);
            let results = grade_bundle(bm, &ev, &Context::default(), None);
            (Server::new(&ev, None), results)
        })
        .collect();
    let once = || {
        let spill = report::Spill::create(None, report::spill_form(Format::Json))
            .expect("a spill file in the temporary directory");
        let mut b = report::Builder::new(bm, None, Some(spill));
        b.reserve(n);
        for i in 0..n {
            let (server, results) = &graded[i % graded.len()];
            let mut server = server.clone();
            // A bundle path of its own, as the copies the binary grades have.
            server.bundle = format!("{}#{i:06}", server.bundle);
            b.server(server, results.clone()).expect("spill write");
        }
        let r = b.finish().expect("spill sealed");
        json::to_writer(&r, &mut std::io::sink()).expect("report written");
    };
    once();
    // The copies cost something the binary does not pay (it moves each server's
    // outcomes into the report): measured alone and taken off.
    let copies = per_call(1.0, || {
        for i in 0..n {
            let (server, results) = &graded[i % graded.len()];
            std::hint::black_box((server.clone(), results.clone()));
        }
    });
    (per_call(2.0, once) - copies).max(0.0) / n as f64
}

/// One run of the grader under GNU time: (wall s, user + sys s, max RSS KiB).
fn run(args: &[String], pin: bool) -> (f64, f64, u64) {
    let out = std::env::temp_dir().join(format!("throughput-time-{}.txt", std::process::id()));
    let mut cmd = if pin {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", TIME]);
        c
    } else {
        Command::new(TIME)
    };
    let status = cmd
        .arg("-f")
        .arg("%e %U %S %M")
        .arg("-o")
        .arg(&out)
        .arg(grader())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("GNU time runs");
    let code = status.code().unwrap_or(-1);
    assert!(matches!(code, 0 | 1 | 4), "mcp-grade exited {code}");
    let text = std::fs::read_to_string(&out).expect("time wrote its output");
    let _ = std::fs::remove_file(&out);
    let f: Vec<f64> = text
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    assert_eq!(f.len(), 4, "GNU time output: {text}");
    (f[0], f[1] + f[2], f[3] as u64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if !Path::new(TIME).exists() {
        eprintln!("throughput bench: {TIME} (GNU time) is missing: apt-get install time");
        std::process::exit(2);
    }
    let sources = examples();
    let files: Vec<Vec<u8>> = sources
        .iter()
        .map(|p| std::fs::read(p).expect("example"))
        .collect();
    let floor = floor(&files);

    let n = env_usize("THROUGHPUT_BUNDLES", 520);
    let part = report_part(&sources, n);
    println!(
        "\nthe JSON report's part, {n} servers (the examples in turn), this process, one thread, CPU time:\n  {:.1} us a bundle; floor and report together {:.1} us = {:.0} bundles/s per core: the most grading reaches with checks that cost nothing",
        part * 1e6,
        (floor + part) * 1e6,
        1.0 / (floor + part)
    );
    let runs = env_usize("THROUGHPUT_RUNS", 3).max(1);
    let jobs: Vec<usize> = std::env::var("THROUGHPUT_JOBS")
        .unwrap_or_else(|_| "1,2".into())
        .split(',')
        .filter_map(|j| j.trim().parse().ok())
        .collect();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let mut paths = Vec::with_capacity(n);
    for i in 0..n {
        let p = tmp.path().join(format!("b{i:06}.mcpev"));
        std::fs::copy(&sources[i % sources.len()], &p).expect("copy");
        paths.push(p.display().to_string());
    }
    let pin = Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    println!(
        "\n{} on {n} bundles, {runs} runs each (median), load average {}",
        grader().display(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for what in ["grade", "verify"] {
        for &j in &jobs {
            let mut args: Vec<String> = match what {
                "grade" => vec!["--format".into(), "json".into()],
                _ => vec!["verify".into()],
            };
            // The examples' signer pinned, and the root of the lab TSA that stamped one
            // of them: without it that bundle's timestamp chain is untrusted and
            // verification refuses it (exit 3), as `scripts/instructions.sh` runs them.
            let examples_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
            args.push("--trust".into());
            args.push(examples_dir.join("collector.pub").display().to_string());
            args.push("--tsa-cert".into());
            args.push(examples_dir.join("tsa/ca.pem").display().to_string());
            if std::env::var_os("THROUGHPUT_NO_JOBS_FLAG").is_none() {
                args.push("--jobs".into());
                args.push(j.to_string());
            }
            args.extend(paths.iter().cloned());
            let (mut walls, mut cpus, mut rss) = (Vec::new(), Vec::new(), 0);
            for _ in 0..runs {
                let (w, c, m) = run(&args, pin && j == 1);
                walls.push(w);
                cpus.push(c);
                rss = rss.max(m);
            }
            let (w, c) = (median(walls), median(cpus));
            println!(
                "  {what:<6} --jobs {j}: wall {w:>6.2} s = {:>6.0} bundles/s; CPU {c:>6.2} s = {:>6.0} bundles/s per core ({:.1}x the floor); max RSS {:.1} MiB",
                n as f64 / w.max(1e-9),
                n as f64 / c.max(1e-9),
                (c / n as f64) / floor,
                rss as f64 / 1024.0
            );
        }
    }
}
