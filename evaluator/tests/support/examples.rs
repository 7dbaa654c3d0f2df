//! The example bundles shipped in `examples/`, for the tests and benchmarks that grade
//! them (included with `#[path]` by the benches and by the library's test fixture).

use std::path::{Path, PathBuf};

/// Every `examples/*.mcpev`, sorted by path.
pub(crate) fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
        .collect();
    v.sort();
    assert!(v.len() > 3, "example bundles in {}", dir.display());
    v
}
