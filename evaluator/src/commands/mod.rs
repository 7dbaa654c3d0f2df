//! The commands of `mcp-grade`, one file each: [`grade`](fn@grade) (`grade.rs`),
//! [`verify`](fn@verify) (`verify.rs`), [`show`](fn@show) (`show.rs`); their errors in
//! `error.rs`, below them (`mcp-grade diff` is `crate::diff`). `main` parses flags and
//! maps the returned [`ExitStatus`](crate::ExitStatus) to a code; everything else
//! happens here.

mod error;
mod grade;
mod show;
mod statement;
mod verify;

pub use crate::timestamp::TimestampJson;
pub use error::{CommandError, GradeError, VerifyStatementError};
pub use grade::{grade, BaselineChoice, GradeOptions, SPILL_FROM};
pub use show::{show, ShowMode};
pub use statement::verify_statement;
pub use verify::{verify, verify_json, verify_schema, VerifyLine};
