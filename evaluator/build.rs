//! The build identity of mcp-grade (`--version`, and the grader named in every report):
//! see build/provenance.rs.

include!("../build/provenance.rs");

/// What goes into the binary, relative to the workspace root: a change to a tracked file
/// here makes the build `-dirty`. A file the crate includes from elsewhere belongs here.
const INPUTS: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "build/provenance.rs",
    "schema/Cargo.toml",
    "schema/src",
    "evaluator/Cargo.toml",
    "evaluator/build.rs",
    "evaluator/src",
    "evaluator/benchmarks",
    "docs/schemas/policy.schema.json",
];

fn main() {
    emit(INPUTS);
}
