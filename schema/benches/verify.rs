//! How fast a bundle verifies: `open` (CBOR decode, every record decoded and chained,
//! SHA-256 over every record, Ed25519 over the payload) on a ~1 MB bundle, and
//! `open_unverified` for comparison. Run with
//! `cargo bench -p mcp-probe-schema --bench verify`; criterion reports throughput in
//! bytes of bundle per second.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use mcp_probe_schema::testkit::{sample_bundle, test_key};
use mcp_probe_schema::{open, open_unverified};

fn verify(c: &mut Criterion) {
    let key = test_key(1);
    // 64 tools/list pages of ~16 KiB each: about 1 MB.
    let bytes = sample_bundle(&key, 64, 16 * 1024);
    let trust = [key.public()];
    assert!(
        open(&bytes, &trust).is_ok(),
        "the benchmark bundle verifies"
    );

    let mut g = c.benchmark_group("bundle");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function(format!("open_{}_bytes_64_records", bytes.len()), |b| {
        b.iter(|| open(black_box(&bytes), black_box(&trust)).expect("verifies"))
    });
    g.bench_function(format!("open_unverified_{}_bytes", bytes.len()), |b| {
        b.iter(|| open_unverified(black_box(&bytes)).expect("reads"))
    });
    g.finish();

    let small = sample_bundle(&key, 8, 1024);
    let mut g = c.benchmark_group("bundle_small");
    g.throughput(Throughput::Bytes(small.len() as u64));
    g.bench_function(format!("open_{}_bytes_8_records", small.len()), |b| {
        b.iter(|| open(black_box(&small), black_box(&trust)).expect("verifies"))
    });
    g.finish();
}

criterion_group!(benches, verify);
criterion_main!(benches);
