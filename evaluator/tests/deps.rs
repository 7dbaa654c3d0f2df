//! The dependency rules, enforced: the grader never links a network
//! stack, and the collector never depends on the grader.

use std::process::Command;

fn tree(package: &str) -> String {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            package,
            "-e",
            "normal,build,dev",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn crates(tree: &str) -> Vec<String> {
    tree.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn grader_has_no_network_stack() {
    let names = crates(&tree("mcp-probe-evaluator"));
    assert!(
        names.iter().any(|n| n == "mcp-probe-schema"),
        "tree looks wrong: {names:?}"
    );
    for banned in [
        "tokio",
        "reqwest",
        "hyper",
        "rustls",
        "tokio-rustls",
        "h2",
        "mio",
        "socket2",
        "ureq",
        "curl",
    ] {
        assert!(
            !names.iter().any(|n| n == banned),
            "mcp-probe-evaluator depends on {banned}"
        );
    }
}

#[test]
fn schema_has_no_network_stack() {
    let names = crates(&tree("mcp-probe-schema"));
    for banned in ["tokio", "reqwest", "hyper", "rustls", "mio", "socket2"] {
        assert!(
            !names.iter().any(|n| n == banned),
            "mcp-probe-schema depends on {banned}"
        );
    }
}

#[test]
fn collector_does_not_depend_on_the_grader() {
    let names = crates(&tree("mcp-probe-collector"));
    assert!(names.iter().any(|n| n == "tokio"), "tree looks wrong");
    assert!(!names.iter().any(|n| n == "mcp-probe-evaluator"));
}
