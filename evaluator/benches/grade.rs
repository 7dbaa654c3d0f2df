//! How many bundles `mcp-grade` grades per second on one core, in process: for each
//! bundle in `examples/`, read the file, verify it as the verify pass does
//! (`bundle::verify`: CBOR, every record decoded and chained, SHA-256, Ed25519), decode
//! it as the grade pass does (`bundle::decode_verified`), derive the inventory, grade
//! every check this build registers, and render the JSON report. The binary's own
//! figures, `--jobs` and the floor are `--bench throughput` (docs/performance.md).
//!
//! Run with `cargo bench -p mcp-probe-evaluator --bench grade`; criterion reports the
//! throughput in elements (bundles) per second. Two shapes are measured: one report
//! per bundle (`mcp-grade x.mcpev` per bundle), and one report over all of them
//! (`mcp-grade examples/*.mcpev`). A third group measures verification alone
//! (`mcp-grade verify`). Criterion runs on the calling thread only.

use std::path::Path;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use mcp_probe_evaluator::benchmark::{grade_bundle, Benchmark};
use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::load::read_bundle;
use mcp_probe_evaluator::report::{json, Report, Server};
use mcp_probe_schema::bundle::{decode_verified, verify};

#[path = "../tests/support/examples.rs"]
mod examples;
use examples::examples;

/// Read, verify, grade and describe one bundle.
fn graded(path: &Path) -> (Server, Vec<mcp_probe_evaluator::benchmark::CheckResult>) {
    let bytes = read_bundle(path).expect("readable");
    black_box(verify(&bytes, &[]).expect("example verifies"));
    let v = decode_verified(&bytes).expect("example decodes");
    let ev = Bundle::new(path.display().to_string(), v);
    let results = grade_bundle(Benchmark::builtin(), &ev, &Context::default(), None);
    (Server::new(&ev, None), results)
}

fn bench(c: &mut Criterion) {
    let paths = examples();
    let n = paths.len() as u64;

    let mut g = c.benchmark_group("grade");
    g.throughput(Throughput::Elements(n));
    g.bench_function(format!("one_json_report_per_bundle_x{n}"), |b| {
        b.iter(|| {
            for p in &paths {
                let report = Report::new(
                    mcp_probe_evaluator::benchmark::Benchmark::builtin(),
                    None,
                    vec![graded(p)],
                );
                black_box(json::to_string(&report));
            }
        })
    });
    g.bench_function(format!("one_json_report_over_{n}_bundles"), |b| {
        b.iter(|| {
            let report = Report::new(
                mcp_probe_evaluator::benchmark::Benchmark::builtin(),
                None,
                paths.iter().map(|p| graded(p)).collect(),
            );
            black_box(json::to_string(&report));
        })
    });
    g.finish();

    // Verification alone (`mcp-grade verify`): read, decode, check every record's chain
    // link and the Ed25519 signature, keeping no record; no grading.
    let mut v = c.benchmark_group("verify");
    v.throughput(Throughput::Elements(n));
    v.bench_function(format!("verify_x{n}"), |b| {
        b.iter(|| {
            for p in &paths {
                let bytes = read_bundle(p).expect("readable");
                black_box(verify(&bytes, &[]).expect("example verifies"));
            }
        })
    });
    v.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
