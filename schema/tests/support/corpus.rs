//! The bundles shipped under `examples/` (the compatibility corpus included), for the
//! tests that hold a decoder to another on every recorded bundle.

use std::path::{Path, PathBuf};

/// Every `.mcpev` under `examples/`, in path order.
pub(crate) fn bundles() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "mcpev") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples"),
        &mut out,
    );
    out.sort();
    out
}
