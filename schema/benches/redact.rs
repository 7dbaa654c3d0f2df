//! How fast the redactor scrubs: a 1 MiB JSON-RPC body (a `tools/list` page whose
//! descriptions hold JSON escapes, as real ones do) against 3 known secrets, with no
//! secret in it (the common case), with each secret echoed in a different encoding, and
//! `leaks` (the backstop run on every record) and `redact` of a whole record. Run with
//! `cargo bench -p mcp-probe-schema --bench redact`.

use base64::Engine as _;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use mcp_probe_schema::redact::Redactor;
use mcp_probe_schema::testkit::http_record;

const SECRETS: [&str; 3] = [
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz",
    "rt_1122334455667788-refresh",
    "cl1ent/secret+with=specials&more",
];

/// About `size` bytes of JSON: tools with escaped quotes, newlines and a URL.
fn body(size: usize, with_secrets: bool) -> Vec<u8> {
    let mut tools = Vec::new();
    let mut len = 0;
    let mut i = 0;
    while len < size {
        let desc = format!(
            "Tool {i} \"quoted\" does things.\nSee https://docs.example/tools/{i}?x=1&y=%2F for 100% of the details."
        );
        let t = serde_json::json!({"name": format!("tool_{i}"), "description": desc,
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}});
        len += t.to_string().len() + 1;
        tools.push(t);
        i += 1;
    }
    if with_secrets {
        let b64 = base64::engine::general_purpose::STANDARD;
        tools[10]["description"] = format!("echo {}", SECRETS[0]).into();
        tools[i / 2]["description"] = format!(
            "echo {}",
            url::form_urlencoded::byte_serialize(SECRETS[1].as_bytes()).collect::<String>()
        )
        .into();
        tools[i - 3]["description"] =
            format!("Basic {}", b64.encode(format!("id:{}", SECRETS[2]))).into();
    }
    serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}))
        .expect("json")
}

fn redactor() -> Redactor {
    let mut r = Redactor::new();
    for s in SECRETS {
        r.add_secret(s.as_bytes(), "bearer-token");
    }
    r
}

fn scrub(c: &mut Criterion) {
    let red = redactor();
    let clean = body(1 << 20, false);
    let dirty = body(1 << 20, true);
    assert!(!red.leaks(&clean));
    assert!(red.leaks(&dirty));
    let mut g = c.benchmark_group("redact_1MiB_json_3_secrets");
    g.throughput(Throughput::Bytes(clean.len() as u64));
    g.sample_size(20);
    g.bench_function("scrub_bytes_clean", |b| {
        b.iter(|| {
            let mut v = clean.clone();
            black_box(red.scrub_bytes(&mut v))
        })
    });
    g.bench_function("scrub_bytes_3_echoes", |b| {
        b.iter(|| {
            let mut v = dirty.clone();
            black_box(red.scrub_bytes(&mut v))
        })
    });
    g.bench_function("leaks_clean", |b| {
        b.iter(|| black_box(red.leaks(black_box(&clean))))
    });
    let record = http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        "https://h.example/mcp",
        "{}",
        200,
        &dirty,
    );
    g.bench_function("redact_record_3_echoes", |b| {
        b.iter(|| {
            let mut r = record.clone();
            red.redact(&mut r);
            black_box(r)
        })
    });
    g.finish();
}

criterion_group!(benches, scrub);
criterion_main!(benches);
