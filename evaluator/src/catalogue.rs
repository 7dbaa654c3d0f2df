//! The 36 checks of the CIS MCP Server Benchmark v1.0.0, in benchmark order: id, level,
//! title, benchmark status, verdict source, and the grader of each check this build
//! grades. This table is the one place a check is registered: a check without a grader
//! here is reported as not graded, never given a made-up verdict.

use serde::Serialize;

use crate::check::Check;
use crate::checks;
pub use mcp_probe_schema::check_id::CheckId;

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

/// One check's metadata and grader.
#[derive(Clone, Copy, Serialize)]
pub struct Entry {
    /// `5.1.1`.
    pub id: CheckId,
    /// Profile level.
    pub level: Level,
    /// Benchmark status.
    pub status: Status,
    /// Verdict source.
    pub source: Source,
    /// Title.
    pub title: &'static str,
    /// The grader, when this build grades the check.
    #[serde(skip)]
    pub grader: Option<&'static dyn Check>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("id", &self.id)
            .field("level", &self.level)
            .field("graded", &self.grader.is_some())
            .finish()
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.id == other.id
    }
}

impl Eq for Entry {}

impl Entry {
    /// The section number (`5` for `5.1.1`).
    pub fn section(&self) -> &'static str {
        self.id.section()
    }
}

/// Numeric ordering of check ids (`1.4` < `2.1` < `10.1`), never string order.
pub fn id_key(id: &str) -> Vec<u32> {
    id.split('.')
        .map(|p| p.parse().unwrap_or(u32::MAX))
        .collect()
}

use CheckId::*;
use Level::{L1, L2};
use Source::{InPart, ReportedOnly, Wire};
use Status::{Automated, Manual};

const fn e(
    id: CheckId,
    level: Level,
    status: Status,
    source: Source,
    title: &'static str,
    grader: Option<&'static dyn Check>,
) -> Entry {
    Entry {
        id,
        level,
        status,
        source,
        title,
        grader,
    }
}

/// All 36 checks in benchmark order.
pub const CATALOGUE: [Entry; 36] = [
    e(
        C1_1,
        L1,
        Automated,
        Wire,
        "served protocol revisions pinned; malformed version assertions rejected",
        Some(&checks::s1::c1_1::C1_1),
    ),
    e(
        C1_2,
        L1,
        Manual,
        Wire,
        "advertised capability configuration matches the recorded baseline",
        Some(&checks::s1::c1_2::C1_2),
    ),
    e(
        C1_3,
        L2,
        Manual,
        InPart,
        "a capability advertised beyond the baseline is denied until re-approved",
        Some(&checks::s1::c1_3::C1_3),
    ),
    e(
        C1_4,
        L1,
        Automated,
        Wire,
        "server identity matches the recorded identity",
        Some(&checks::s1::c1_4::C1_4),
    ),
    e(
        C2_1,
        L1,
        Manual,
        ReportedOnly,
        "stdio preferred for local, single-user servers",
        Some(&checks::s2::C2_1),
    ),
    e(
        C2_2,
        L1,
        Automated,
        Wire,
        "TLS required, plaintext disallowed",
        Some(&checks::s2::c2_2::C2_2),
    ),
    e(
        C2_3,
        L2,
        Manual,
        Wire,
        "authentication enforced before a request-scoped SSE response (through proxies)",
        Some(&checks::s2::c2_3::C2_3),
    ),
    e(
        C2_4,
        L1,
        Automated,
        Wire,
        "request metadata headers present and consistent with the body",
        Some(&checks::s2::c2_4::C2_4),
    ),
    e(
        C2_5,
        L1,
        Automated,
        Wire,
        "Origin validated on all requests",
        Some(&checks::s2::c2_5::C2_5),
    ),
    e(
        C3_1_1,
        L1,
        Automated,
        InPart,
        "stdio server credentials from environment / OS store",
        Some(&checks::s3::c3_1_1::C3_1_1),
    ),
    e(
        C3_1_2,
        L1,
        Manual,
        Wire,
        "OAuth 2.1 / OIDC or short-lived tokens for remote servers",
        Some(&checks::s3::c3_1_2::C3_1_2),
    ),
    e(
        C3_2_1,
        L2,
        Manual,
        ReportedOnly,
        "per-tool authorization enforced",
        Some(&checks::s3::C3_2_1),
    ),
    e(
        C3_2_2,
        L1,
        Manual,
        InPart,
        "token passthrough to downstream APIs forbidden",
        Some(&checks::s3::c3_2_2::C3_2_2),
    ),
    e(
        C3_2_3,
        L1,
        Manual,
        ReportedOnly,
        "tool annotations not relied upon for authorization / HITL gating",
        Some(&checks::s3::C3_2_3),
    ),
    e(
        C3_3_1,
        L1,
        Automated,
        InPart,
        "tokens audience-bound via Resource Indicators",
        Some(&checks::s3::c3_3_1::C3_3_1),
    ),
    e(
        C3_3_2,
        L2,
        Automated,
        Wire,
        "OAuth discovery metadata over TLS and validated",
        Some(&checks::s3::c3_3_2::C3_3_2),
    ),
    e(
        C3_3_3,
        L2,
        Manual,
        ReportedOnly,
        "no shared downstream service identities",
        Some(&checks::s3::C3_3_3),
    ),
    e(
        C3_3_4,
        L2,
        Manual,
        Wire,
        "OAuth scopes minimized and elevated progressively",
        Some(&checks::s3::c3_3_4::C3_3_4),
    ),
    e(
        C3_3_5,
        L2,
        Manual,
        InPart,
        "confused-deputy safeguards for static OAuth client ids",
        Some(&checks::s3::c3_3_5::C3_3_5),
    ),
    e(
        C5_1_1,
        L1,
        Automated,
        Wire,
        "tool schemas and argument types validated",
        Some(&checks::s5::c5_1_1::C5_1_1),
    ),
    e(
        C5_1_2,
        L1,
        Automated,
        Wire,
        "resource templates with explicit URI patterns and MIME types",
        Some(&checks::s5::c5_1_2::C5_1_2),
    ),
    e(
        C5_1_3,
        L1,
        Automated,
        Wire,
        "prompt templates declare and validate arguments",
        Some(&checks::s5::c5_1_3::C5_1_3),
    ),
    e(
        C5_2_1,
        L2,
        Automated,
        ReportedOnly,
        "listChanged notifications rate-limited",
        Some(&checks::s5::C5_2_1),
    ),
    e(
        C5_2_2,
        L1,
        Manual,
        ReportedOnly,
        "sessions not used as authentication",
        Some(&checks::s5::C5_2_2),
    ),
    e(
        C5_2_3,
        L1,
        Automated,
        Wire,
        "legacy Streamable HTTP session and stream resumption disabled",
        Some(&checks::s5::c5_2_3::C5_2_3),
    ),
    e(
        C5_3_1,
        L1,
        Automated,
        Wire,
        "logs separated from protocol stream in stdio mode",
        Some(&checks::s5::c5_3_1::C5_3_1),
    ),
    e(
        C5_4_1,
        L1,
        Automated,
        Wire,
        "path traversal and arbitrary filesystem access prevented",
        Some(&checks::s5::c5_4_1::C5_4_1),
    ),
    e(
        C5_5_1,
        L2,
        Manual,
        ReportedOnly,
        "authorization, scope and expiry on MCP Tasks",
        Some(&checks::s5::C5_5_1),
    ),
    e(
        C5_6_1,
        L2,
        Manual,
        ReportedOnly,
        "idempotency keys for side-effecting tool calls",
        Some(&checks::s5::C5_6_1),
    ),
    e(
        C7_1_1,
        L1,
        Automated,
        ReportedOnly,
        "lifecycle and invocation metadata recorded",
        Some(&checks::s7::C7_1_1),
    ),
    e(
        C7_1_2,
        L1,
        Automated,
        Wire,
        "non-null JSON-RPC request ids enforced",
        Some(&checks::s7::c7_1_2::C7_1_2),
    ),
    e(
        C7_1_3,
        L1,
        Automated,
        ReportedOnly,
        "audit timestamps accurate and monotonic",
        Some(&checks::s7::C7_1_3),
    ),
    e(
        C7_2_1,
        L1,
        Automated,
        InPart,
        "alerts on audience and issuer validation failures",
        Some(&checks::s7::c7_2_1::C7_2_1),
    ),
    e(
        C7_2_2,
        L2,
        Automated,
        InPart,
        "cancellation/progress signals monitored",
        Some(&checks::s7::c7_2_2::C7_2_2),
    ),
    e(
        C10_1,
        L1,
        Manual,
        Wire,
        "static resources cached with freshness limits; per-user data never shared-cached",
        Some(&checks::s10::c10_1::C10_1),
    ),
    e(
        C10_2,
        L1,
        Manual,
        Wire,
        "request/response body limits, token budgets, per-principal quotas",
        Some(&checks::s10::c10_2::C10_2),
    ),
];

/// The entry for `id`.
pub fn entry(id: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.id == id)
}

/// The entry of a check (every id has one).
pub fn of(id: CheckId) -> &'static Entry {
    &CATALOGUE[CheckId::ALL
        .iter()
        .position(|c| *c == id)
        .unwrap_or_default()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_benchmark() {
        // The benchmark's 18 / 6 / 12, except that this build grades 5.3.1 (wire) and
        // 3.1.1 (in part) from the stdout and command line of a stdio bundle.
        assert_eq!(CATALOGUE.iter().filter(|e| e.source == Wire).count(), 19);
        assert_eq!(CATALOGUE.iter().filter(|e| e.source == InPart).count(), 7);
        assert_eq!(
            CATALOGUE
                .iter()
                .filter(|e| e.source == ReportedOnly)
                .count(),
            10
        );
        assert_eq!(CATALOGUE.iter().filter(|e| e.level == L2).count(), 11);
        let ids: Vec<CheckId> = CATALOGUE.iter().map(|e| e.id).collect();
        assert_eq!(
            ids,
            CheckId::ALL,
            "the catalogue lists every check once, in order"
        );
    }

    #[test]
    fn numeric_order() {
        let mut ids = vec!["10.1", "1.4", "2.1", "1.1", "10.2", "3.3.5", "3.3.1"];
        ids.sort_by_key(|i| id_key(i));
        assert_eq!(ids, ["1.1", "1.4", "2.1", "3.3.1", "3.3.5", "10.1", "10.2"]);
        let keys: Vec<Vec<u32>> = CATALOGUE.iter().map(|e| id_key(&e.id)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        // Benchmark order is numeric order except 3.3.x, which the benchmark lists 1..5.
        assert_eq!(keys, sorted);
    }
}
