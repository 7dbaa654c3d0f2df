//! Governance and versioning rules.
//!
//! `revisions-pinned` (served protocol revisions pinned; malformed version assertions
//! rejected), `capabilities-match-baseline` (advertised capability configuration matches the
//! recorded baseline), `new-tools-gated` (a tool advertised beyond the baseline is refused
//! until re-approved; the tool calls need the operator's consent) and
//! `identity-matches-baseline` (server identity matches the recorded identity).
//! docs/checks.md states the rules (Section 1 of CIS MCP Server Benchmark v1.0.0).

pub mod capabilities_match_baseline;
pub mod identity_matches_baseline;
pub mod new_tools_gated;
pub mod revisions_pinned;
