//! Section 1 checks: governance and versioning.
//!
//! This build grades 1.1 (served protocol revisions pinned; malformed version assertions
//! rejected), 1.2 (advertised capability configuration matches the recorded baseline) and
//! 1.4 (server identity matches the recorded identity). 1.3 is not graded yet. docs/checks.md, Section 1, states the rules.

pub mod c1_1;
pub mod c1_2;
pub mod c1_4;
