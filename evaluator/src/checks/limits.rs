//! The limits rules: caching and resource limits.
//!
//! This build grades `cache-freshness` (static resources cached with freshness limits;
//! per-user data never shared-cached) and `size-limits` (request/response body limits,
//! token budgets, per-principal quotas). docs/checks.md states the rules.

pub mod cache_freshness;
pub mod size_limits;
