//! The 36 checks of the CIS MCP Server Benchmark v1.0.0, in benchmark order: id, level,
//! title, benchmark status and verdict source (spec/checks.md §12). This is metadata
//! only; which checks this build grades is the registry in [`crate::checks`].

use serde::Serialize;

/// Benchmark name and version the catalogue describes.
pub const BENCHMARK: &str = "CIS MCP Server Benchmark";
/// Benchmark version.
pub const BENCHMARK_VERSION: &str = "1.0.0";

/// Profile level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// Level 1.
    L1,
    /// Level 2.
    L2,
}

impl Level {
    /// `L1` / `L2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::L1 => "L1",
            Level::L2 => "L2",
        }
    }

    /// 1 or 2.
    pub fn number(self) -> u8 {
        match self {
            Level::L1 => 1,
            Level::L2 => 2,
        }
    }
}

/// Where a check's verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Decided from what the server answered on the wire.
    Wire,
    /// Part of the recommendation is probed on the wire, part is operator-side.
    InPart,
    /// Wholly operator-side: always N/A, with observations recorded.
    ReportedOnly,
}

impl Source {
    /// Words used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Wire => "wire",
            Source::InPart => "in part",
            Source::ReportedOnly => "reported only",
        }
    }
}

/// The benchmark's own assessment status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    /// Automated in the benchmark.
    Automated,
    /// Manual in the benchmark.
    Manual,
}

/// One check's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// `5.1.1`.
    pub id: &'static str,
    /// Profile level.
    pub level: Level,
    /// Benchmark status.
    pub status: Status,
    /// Verdict source.
    pub source: Source,
    /// Title.
    pub title: &'static str,
}

impl Entry {
    /// The section number (`5` for `5.1.1`).
    pub fn section(&self) -> &'static str {
        self.id.split('.').next().unwrap_or(self.id)
    }
}

/// Numeric ordering of check ids (`1.4` < `2.1` < `10.1`), never string order
/// (spec/checks.md §17 item 16).
pub fn id_key(id: &str) -> Vec<u32> {
    id.split('.')
        .map(|p| p.parse().unwrap_or(u32::MAX))
        .collect()
}

use Level::{L1, L2};
use Source::{InPart, ReportedOnly, Wire};
use Status::{Automated, Manual};

const fn e(
    id: &'static str,
    level: Level,
    status: Status,
    source: Source,
    title: &'static str,
) -> Entry {
    Entry {
        id,
        level,
        status,
        source,
        title,
    }
}

/// All 36 checks in benchmark order.
pub const CATALOGUE: [Entry; 36] = [
    e(
        "1.1",
        L1,
        Automated,
        Wire,
        "served protocol revisions pinned; malformed version assertions rejected",
    ),
    e(
        "1.2",
        L1,
        Manual,
        Wire,
        "advertised capability configuration matches the recorded baseline",
    ),
    e(
        "1.3",
        L2,
        Manual,
        InPart,
        "a capability advertised beyond the baseline is denied until re-approved",
    ),
    e(
        "1.4",
        L1,
        Automated,
        Wire,
        "server identity matches the recorded identity",
    ),
    e(
        "2.1",
        L1,
        Manual,
        ReportedOnly,
        "stdio preferred for local, single-user servers",
    ),
    e(
        "2.2",
        L1,
        Automated,
        Wire,
        "TLS required, plaintext disallowed",
    ),
    e(
        "2.3",
        L2,
        Manual,
        Wire,
        "authentication enforced before a request-scoped SSE response (through proxies)",
    ),
    e(
        "2.4",
        L1,
        Automated,
        Wire,
        "request metadata headers present and consistent with the body",
    ),
    e(
        "2.5",
        L1,
        Automated,
        Wire,
        "Origin validated on all requests",
    ),
    e(
        "3.1.1",
        L1,
        Automated,
        ReportedOnly,
        "stdio server credentials from environment / OS store",
    ),
    e(
        "3.1.2",
        L1,
        Manual,
        Wire,
        "OAuth 2.1 / OIDC or short-lived tokens for remote servers",
    ),
    e(
        "3.2.1",
        L2,
        Manual,
        ReportedOnly,
        "per-tool authorization enforced",
    ),
    e(
        "3.2.2",
        L1,
        Manual,
        InPart,
        "token passthrough to downstream APIs forbidden",
    ),
    e(
        "3.2.3",
        L1,
        Manual,
        ReportedOnly,
        "tool annotations not relied upon for authorization / HITL gating",
    ),
    e(
        "3.3.1",
        L1,
        Automated,
        InPart,
        "tokens audience-bound via Resource Indicators",
    ),
    e(
        "3.3.2",
        L2,
        Automated,
        Wire,
        "OAuth discovery metadata over TLS and validated",
    ),
    e(
        "3.3.3",
        L2,
        Manual,
        ReportedOnly,
        "no shared downstream service identities",
    ),
    e(
        "3.3.4",
        L2,
        Manual,
        Wire,
        "OAuth scopes minimized and elevated progressively",
    ),
    e(
        "3.3.5",
        L2,
        Manual,
        InPart,
        "confused-deputy safeguards for static OAuth client ids",
    ),
    e(
        "5.1.1",
        L1,
        Automated,
        Wire,
        "tool schemas and argument types validated",
    ),
    e(
        "5.1.2",
        L1,
        Automated,
        Wire,
        "resource templates with explicit URI patterns and MIME types",
    ),
    e(
        "5.1.3",
        L1,
        Automated,
        Wire,
        "prompt templates declare and validate arguments",
    ),
    e(
        "5.2.1",
        L2,
        Automated,
        ReportedOnly,
        "listChanged notifications rate-limited",
    ),
    e(
        "5.2.2",
        L1,
        Manual,
        ReportedOnly,
        "sessions not used as authentication",
    ),
    e(
        "5.2.3",
        L1,
        Automated,
        Wire,
        "legacy Streamable HTTP session and stream resumption disabled",
    ),
    e(
        "5.3.1",
        L1,
        Automated,
        ReportedOnly,
        "logs separated from protocol stream in stdio mode",
    ),
    e(
        "5.4.1",
        L1,
        Automated,
        Wire,
        "path traversal and arbitrary filesystem access prevented",
    ),
    e(
        "5.5.1",
        L2,
        Manual,
        ReportedOnly,
        "authorization, scope and expiry on MCP Tasks",
    ),
    e(
        "5.6.1",
        L2,
        Manual,
        ReportedOnly,
        "idempotency keys for side-effecting tool calls",
    ),
    e(
        "7.1.1",
        L1,
        Automated,
        ReportedOnly,
        "lifecycle and invocation metadata recorded",
    ),
    e(
        "7.1.2",
        L1,
        Automated,
        Wire,
        "non-null JSON-RPC request ids enforced",
    ),
    e(
        "7.1.3",
        L1,
        Automated,
        ReportedOnly,
        "audit timestamps accurate and monotonic",
    ),
    e(
        "7.2.1",
        L1,
        Automated,
        InPart,
        "alerts on audience and issuer validation failures",
    ),
    e(
        "7.2.2",
        L2,
        Automated,
        InPart,
        "cancellation/progress signals monitored",
    ),
    e(
        "10.1",
        L1,
        Manual,
        Wire,
        "static resources cached with freshness limits; per-user data never shared-cached",
    ),
    e(
        "10.2",
        L1,
        Manual,
        Wire,
        "request/response body limits, token budgets, per-principal quotas",
    ),
];

/// The entry for `id`.
pub fn entry(id: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_benchmark() {
        assert_eq!(CATALOGUE.iter().filter(|e| e.source == Wire).count(), 18);
        assert_eq!(CATALOGUE.iter().filter(|e| e.source == InPart).count(), 6);
        assert_eq!(
            CATALOGUE
                .iter()
                .filter(|e| e.source == ReportedOnly)
                .count(),
            12
        );
        assert_eq!(CATALOGUE.iter().filter(|e| e.level == L2).count(), 11);
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|e| e.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), 36);
    }

    #[test]
    fn numeric_order() {
        let mut ids = vec!["10.1", "1.4", "2.1", "1.1", "10.2", "3.3.5", "3.3.1"];
        ids.sort_by_key(|i| id_key(i));
        assert_eq!(ids, ["1.1", "1.4", "2.1", "3.3.1", "3.3.5", "10.1", "10.2"]);
        let keys: Vec<Vec<u32>> = CATALOGUE.iter().map(|e| id_key(e.id)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        // Benchmark order is numeric order except 3.3.x, which the benchmark lists 1..5.
        assert_eq!(keys, sorted);
    }
}
