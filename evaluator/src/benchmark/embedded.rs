//! The definitions embedded in this build, and what `--benchmark` names.

use std::path::Path;
use std::sync::OnceLock;

use super::error::BenchmarkError;
use super::load;
use super::model::{Benchmark, Origin};
use crate::check::Check;

/// The definitions embedded in this build: (file name, bytes), oldest first.
pub const EMBEDDED: &[(&str, &str)] = &[(
    "cis-mcp-server-1.0.0.toml",
    include_str!("../../benchmarks/cis-mcp-server-1.0.0.toml"),
)];

/// What `--benchmark` names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Choice {
    /// The newest embedded definition.
    #[default]
    Newest,
    /// An embedded definition's id, or a definition or tailoring file.
    Named(String),
}

impl Choice {
    /// Resolve to a definition: an existing file is read (a definition, or a tailoring
    /// of an embedded one); anything else must be an embedded id.
    pub fn resolve(&self) -> Result<&'static Benchmark, BenchmarkError> {
        let given = match self {
            Choice::Newest => return Benchmark::newest(),
            Choice::Named(g) => g,
        };
        let embedded = Benchmark::embedded()?;
        let path = Path::new(given);
        if path.is_file() || given.ends_with(".toml") {
            let bytes = std::fs::read(path).map_err(|e| BenchmarkError::Read {
                file: given.clone(),
                message: e.to_string(),
            })?;
            let b = load::parse_file(given, &bytes, embedded)?;
            return Ok(Box::leak(Box::new(b)));
        }
        embedded
            .iter()
            .find(|b| b.id == given)
            .copied()
            .ok_or_else(|| BenchmarkError::Unknown {
                given: given.clone(),
                known: embedded.iter().map(|b| b.id).collect::<Vec<_>>().join(", "),
            })
    }
}

/// The rule grading check `id` of the newest embedded definition (tests and tools that
/// grade one check by its v1.0.0 number).
pub fn implemented(id: &str) -> Option<&'static dyn Check> {
    Benchmark::newest().ok()?.entry(id)?.grader
}

impl Benchmark {
    /// The embedded definitions, oldest first; an embedded definition that does not load
    /// is a build defect (the tests load each), reported as an error, never a panic.
    pub fn embedded() -> Result<&'static [&'static Benchmark], BenchmarkError> {
        static ALL: OnceLock<Result<Vec<&'static Benchmark>, BenchmarkError>> = OnceLock::new();
        ALL.get_or_init(|| {
            EMBEDDED
                .iter()
                .map(|(name, text)| {
                    load::parse_definition(name, text.as_bytes(), Origin::Embedded(name))
                        .map(|b| &*Box::leak(Box::new(b)))
                })
                .collect()
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
    }

    /// The newest embedded definition: what grading uses without `--benchmark`.
    pub fn newest() -> Result<&'static Benchmark, BenchmarkError> {
        Self::embedded()?
            .last()
            .copied()
            .ok_or_else(|| BenchmarkError::Unknown {
                given: "(default)".into(),
                known: String::new(),
            })
    }

    /// The newest embedded definition, for tests and benches (which know it loads).
    ///
    /// # Panics
    /// When the embedded definition is broken: a build defect the tests catch.
    pub fn builtin() -> &'static Benchmark {
        match Self::newest() {
            Ok(b) => b,
            Err(e) => panic!("embedded benchmark definition: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::{Level, Source};

    #[test]
    fn the_embedded_definitions_load_in_number_order() {
        for b in Benchmark::embedded().expect("embedded definitions load") {
            let keys: Vec<Vec<u32>> = b.checks.iter().map(|e| e.id.key()).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted, "{}", b.id);
            assert!(b.checks.iter().all(|e| e.grader.is_some()), "{}", b.id);
        }
    }

    #[test]
    fn v1_0_0_has_the_benchmark_counts() {
        // The benchmark's 18 / 6 / 12 sources, except that this build grades
        // `stdio-logs-separated` (wire) and `stdio-credentials` (in part) from the stdout
        // and command line of a stdio bundle;
        // 11 of the checks are L2. Counts come from the data, never from a literal in
        // the code: this test is the one place they are written, to catch an edit that
        // changes them by accident.
        let b = Benchmark::builtin();
        assert_eq!(b.id, "cis-mcp-server-1.0.0");
        let count = |s: Source| b.checks.iter().filter(|e| e.source == s).count();
        assert_eq!(
            (
                count(Source::Wire),
                count(Source::InPart),
                count(Source::ReportedOnly)
            ),
            (19, 7, 10)
        );
        assert_eq!(b.checks.iter().filter(|e| e.level == Level::L2).count(), 11);
        assert_eq!(b.sections_unreached().count(), 4);
    }

    #[test]
    fn a_name_that_is_neither_file_nor_id_lists_the_embedded_ids() {
        let e = Choice::Named("cis-mcp-server-9".into())
            .resolve()
            .expect_err("unknown");
        assert!(
            e.to_string().contains("embedded: cis-mcp-server-1.0.0"),
            "{e}"
        );
    }
}
