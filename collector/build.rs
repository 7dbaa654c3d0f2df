//! The build identity of mcp-collect (`--version`, and `collector.build` in every bundle):
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
    "collector/Cargo.toml",
    "collector/build.rs",
    "collector/src",
    "docs/schemas/probe-inputs.schema.json",
];

fn main() {
    emit(INPUTS);
}
