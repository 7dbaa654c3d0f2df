//! Shared by the grader's integration tests: every test file includes it as `mod support;`
//! and uses the parts it needs.
//!
//! - [`lab`]: the lab (its variables, the `mcp-collect` binary, what `lab/install.sh`
//!   installs) and [`lab::require`], the one gate of every test that needs it;
//! - [`grade_run`]: running the built `mcp-grade`;
//! - [`rules`]: checks named by rule id, numbered through a definition;
//! - [`tsa`]: a local RFC 3161 TSA from the lab's tools (test PKI, `openssl ts` tokens,
//!   lab/tsa/tsa.py);
//! - [`examples`]: the example bundles (also included by the benches and by the library's
//!   test fixture, with `#[path]`);
//! - [`build_id`], [`help_docs`], [`imports`]: also included by the collector's and the
//!   schema's tests, with `#[path]`, so each stays one file without `use super::`.
#![allow(dead_code, unreachable_pub)]

pub mod build_id;
pub mod examples;
pub mod grade_run;
pub mod help_docs;
pub mod imports;
pub mod lab;
pub mod rules;
pub mod tsa;
