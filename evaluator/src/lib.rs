//! `mcp-grade`: reads `mcp-evidence` bundles offline, verifies them, shows what they
//! recorded and grades them against the benchmark: loading and verifying
//! bundles, trust pins, the exit-status contract, the benchmark definitions
//! ([`benchmark`]: data, graded by the rules of [`rules`], written with the kit of
//! [`check`], [`preconditions`], [`verdict`] and [`evidence`]),
//! baselines ([`baseline`]), the grading reports ([`report`]), and the readable, JSON
//! and HAR renderings of a bundle, and the command line ([`flags`]: `mcp-grade --help`,
//! the man pages and completions come from [`flags::command`]).
//!
//! The crate never touches the network (evaluator/tests/deps.rs enforces it): it depends on `schema` and on
//! nothing that speaks TCP or TLS. Every function here takes untrusted bundle bytes and
//! must not panic on any of them.

pub mod attest;
pub mod attestations;
pub mod baseline;
pub mod benchmark;
pub mod check;
pub mod checks;
pub mod commands;
pub mod details;
pub mod diff;
pub mod evidence;
pub mod exit;
pub mod fixture;
pub mod flags;
pub mod fmt;
pub mod har;
pub mod inputs;
mod leg_index;
pub mod load;
pub mod output;
pub mod pipeline;
pub mod policy;
pub mod preconditions;
pub mod refs;
pub mod renewal;
pub mod report;
pub mod rules;
pub mod shared_items;
pub mod text;
pub mod timestamp;
pub mod toml_input;
pub mod trust_list;
pub mod verdict;
pub mod view;
pub mod waivers;

pub use commands::{
    grade, show, verify, BaselineChoice, CommandError, GradeError, GradeOptions, ShowMode,
};
pub use exit::ExitStatus;
pub use load::{Error, Loaded};
