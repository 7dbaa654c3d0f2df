//! Benchmark definitions: which recommendations a benchmark revision has, under which
//! numbers, graded by which rule with which parameters. A definition is data (a TOML
//! file, `evaluator/benchmarks/*.toml`, embedded in the binary, or one given with
//! `--benchmark FILE`), checked against the rules this build implements
//! ([`crate::rules`]) before anything is graded; a tailoring file refines an embedded one
//! ([`load`]). The grading runner ([`runner`]) grades every check of one definition.
//!
//! docs/benchmarks.md describes the format (docs/schemas/benchmark.schema.json and
//! tailoring.schema.json) and how to add a rule, a check and a benchmark revision.

pub mod embedded;
pub mod error;
pub mod list;
pub mod load;
pub mod model;
pub mod runner;

pub use embedded::{implemented, Choice, EMBEDDED};
pub use error::BenchmarkError;
pub use model::{
    id_key, Benchmark, Entry, Eras, Level, Named, Number, Origin, Source, Status, Tailoring,
    Transports, Unreached,
};
pub use runner::{compact, grade_bundle, CheckResult};
