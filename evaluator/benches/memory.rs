//! Peak memory (maximum resident set size) of `mcp-grade` grading (docs/performance.md,
//! "Grader"). Not a timed benchmark and not a test: it prints figures.
//!
//! Run with `cargo bench -p mcp-probe-evaluator --bench memory`. It needs GNU time at
//! `/usr/bin/time` (`apt-get install time`), builds its inputs in a temporary directory
//! and measures the `mcp-grade` binary of the same build, one process per case:
//!
//! * one tiny bundle (the binary's own floor);
//! * one large bundle, about `MEMORY_BENCH_MB` MB (default 60): `MEMORY_BENCH_MB` pages
//!   of `tools/list`, each answered with one tool whose description is 1 MiB (the
//!   schema testkit's `sample_bundle`, sealed with a test key);
//! * `MEMORY_BENCH_BUNDLES` bundles (default 10,000, and 520): copies of
//!   `examples/*.mcpev` in turn, graded into one report.
//!
//! Each case is run for the text and the JSON report, the report going to /dev/null.
//! `MEMORY_BENCH_GRADER=/path/to/mcp-grade` measures another build of the binary (to
//! compare before and after a change) on the same inputs.
//! `MCP_PROBE_HOME` points at an empty directory, so no stored baseline is read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_probe_schema::testkit::{sample_bundle, test_key};

const TIME: &str = "/usr/bin/time";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[path = "../tests/support/examples.rs"]
mod examples;
use examples::examples;

/// The binary measured: `MEMORY_BENCH_GRADER` (e.g. an older build, to compare), else
/// the `mcp-grade` of this build.
fn grader() -> PathBuf {
    std::env::var_os("MEMORY_BENCH_GRADER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcp-grade")))
}

/// Max RSS in KiB of `mcp-grade ARGS`, and its exit code.
fn max_rss(home: &Path, args: &[String]) -> (u64, i32) {
    let out = home.join("rss.txt");
    let status = Command::new(TIME)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&out)
        .arg(grader())
        .args(args)
        .env("MCP_PROBE_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("GNU time runs (apt-get install time)");
    let code = status.code().unwrap_or(-1);
    assert!(
        matches!(code, 0 | 1 | 4),
        "mcp-grade exited {code} (2 or 3: it refused an input, so nothing was graded)"
    );
    let text = std::fs::read_to_string(&out).expect("time wrote its output");
    let kib = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("a max RSS figure");
    (kib, code)
}

fn total_bytes(paths: &[PathBuf]) -> u64 {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn case(home: &Path, name: &str, paths: &[PathBuf]) {
    let size = total_bytes(paths);
    for format in ["text", "json"] {
        let mut args = vec!["--format".to_string(), format.to_string()];
        args.extend(paths.iter().map(|p| p.display().to_string()));
        let (kib, code) = max_rss(home, &args);
        let rss = kib * 1024;
        println!(
            "{name:<34} {format:<4}  input {:>9.1} MiB  max RSS {:>8.1} MiB  ({:.2}x input, exit {code})",
            mib(size),
            mib(rss),
            rss as f64 / size.max(1) as f64
        );
    }
}

/// Where the inputs are written.
struct Base(PathBuf);

impl Base {
    fn path(&self) -> &Path {
        &self.0
    }
}

fn main() {
    if !Path::new(TIME).exists() {
        eprintln!("memory bench: {TIME} (GNU time) is missing: apt-get install time");
        std::process::exit(2);
    }
    println!("measuring {}", grader().display());
    // `MEMORY_BENCH_DIR` keeps the inputs there (to reproduce a figure by hand).
    let tmp = tempfile::tempdir().expect("temporary directory");
    let base = std::env::var_os("MEMORY_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let dir = &Base(base);
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let key = test_key(1);

    let tiny = dir.path().join("tiny.mcpev");
    std::fs::write(&tiny, sample_bundle(&key, 2, 200)).expect("write");
    case(&home, "one tiny bundle", &[tiny]);

    let mb = env_usize("MEMORY_BENCH_MB", 60);
    let big = dir.path().join("big.mcpev");
    std::fs::write(&big, sample_bundle(&key, mb, 1 << 20)).expect("write");
    case(
        &home,
        &format!("one bundle, {mb} x 1 MiB bodies"),
        std::slice::from_ref(&big),
    );
    let size = total_bytes(std::slice::from_ref(&big));
    let (kib, _) = max_rss(&home, &["verify".to_string(), big.display().to_string()]);
    println!(
        "{:<34} {:<4}  input {:>9.1} MiB  max RSS {:>8.1} MiB  ({:.2}x input)",
        "  the same, mcp-grade verify",
        "",
        mib(size),
        mib(kib * 1024),
        (kib * 1024) as f64 / size.max(1) as f64
    );

    let sources = examples();
    let bundles = env_usize("MEMORY_BENCH_BUNDLES", 10_000);
    let copies = dir.path().join("copies");
    std::fs::create_dir_all(&copies).expect("copies");
    let mut paths = Vec::with_capacity(bundles);
    for n in 0..bundles {
        let p = copies.join(format!("b{n:06}.mcpev"));
        std::fs::copy(&sources[n % sources.len()], &p).expect("copy");
        paths.push(p);
    }
    for n in [520, bundles] {
        if n > 0 && n <= paths.len() {
            case(
                &home,
                &format!("{n} bundles (examples), one report"),
                &paths[..n],
            );
        }
    }
}
