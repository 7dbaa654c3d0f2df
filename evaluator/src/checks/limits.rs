//! Section 10 checks: caching and resource limits.
//!
//! This build grades 10.1 (static resources cached with freshness limits; per-user data
//! never shared-cached) and 10.2 (request/response body limits, token budgets,
//! per-principal quotas). docs/checks.md, Section 10, states the rules.

pub mod cache_freshness;
pub mod size_limits;
