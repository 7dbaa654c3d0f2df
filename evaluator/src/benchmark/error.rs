//! Why a benchmark definition or tailoring was refused.

/// Why a definition or tailoring was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenchmarkError {
    /// The file could not be read.
    #[error("--benchmark {file}: cannot read it: {message}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
    /// Not TOML of the definition's shape (the message names the line and the key).
    #[error("--benchmark {file}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// The parser's message, with the line.
        message: String,
    },
    /// A value is not acceptable.
    #[error("--benchmark {file}: line {line}: {key}: {message}")]
    Value {
        /// The file.
        file: String,
        /// 1-based line of the value.
        line: usize,
        /// The key, as a path (`check[3].rule`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// Neither a file nor an embedded definition's id.
    #[error("--benchmark {given}: no such file, and no embedded definition has that id (embedded: {known})")]
    Unknown {
        /// As given.
        given: String,
        /// The embedded ids.
        known: String,
    },
}
