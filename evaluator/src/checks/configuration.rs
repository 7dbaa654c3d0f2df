//! Section 1 checks: governance and versioning.
//!
//! This build grades 1.1 (served protocol revisions pinned; malformed version assertions
//! rejected), 1.2 (advertised capability configuration matches the recorded baseline),
//! 1.4 (server identity matches the recorded identity) and 1.3 (a tool advertised beyond the
//! baseline is refused until re-approved; the tool calls need the operator's consent).
//! docs/checks.md, Section 1, states the rules.

pub mod capabilities_match_baseline;
pub mod identity_matches_baseline;
pub mod new_tools_gated;
pub mod revisions_pinned;
