//! `--bundle-cap` through the real binary: a server that pages large
//! `tools/list` pages forever gives a bundle bounded by the cap, whose later records keep
//! their bodies as length and SHA-256 only, and which says from which record.

mod support;

use std::sync::Arc;

use mcp_probe_schema::model::{HttpOutcome, Observation};
use support::*;

const PAGE: usize = 20_000;

#[test]
fn past_the_bundle_cap_bodies_are_hashed_only_and_the_bound_is_recorded() {
    let srv = serve(Arc::new(pager(PAGE)));
    let cap = 256 * 1024;
    let run = collect(
        &[
            "--info",
            "--max-pages",
            "40",
            "--bundle-cap",
            &cap.to_string(),
            &srv.url,
        ],
        &[],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    let path = &run.bundles()[0];
    let size = std::fs::metadata(path).unwrap().len();
    // 40 pages of ~20 KB would be ~800 KB; the bundle stays near the cap.
    assert!(size < cap + 64 * 1024, "bundle {size} bytes");
    let v = open(path);
    assert_eq!(v.evidence.run.options.bundle_cap, Some(cap));
    let from = v
        .evidence
        .run
        .bundle_capped_from
        .expect("the cap was reached");
    let mut pages = 0;
    for r in &v.records {
        let Observation::Http(x) = &r.observation else {
            continue;
        };
        let HttpOutcome::Response(resp) = &x.outcome else {
            continue;
        };
        if !r.legs.iter().any(|l| l == "inventory.tools") {
            continue;
        }
        pages += 1;
        assert!(resp.body.length as usize > PAGE);
        assert_eq!(resp.body.sha256.len(), 32);
        assert_eq!(
            resp.body.bytes.is_empty(),
            r.seq >= from,
            "record {} (bodies dropped from {from})",
            r.seq
        );
    }
    assert_eq!(pages, 40, "every page is still recorded");
    // The --info inventory counts only what the stored bodies show.
    assert!(run.stdout().contains("  tools: "), "{}", run.stdout());
    assert!(
        run.stdout().contains(&format!(
            "  note: --bundle-cap reached: bodies from record {from} on"
        )),
        "{}",
        run.stdout()
    );
}
