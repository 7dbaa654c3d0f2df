//! The JSON report, schema `mcp-grade-report/1` (documented field by field in
//! `docs/report.md`).
//!
//! Stability: within `mcp-grade-report/1` changes are additive only: new keys may
//! appear (consumers must ignore keys they do not know), no key is removed, renamed or
//! changes type or meaning. Anything else bumps the schema id. Keys are written in a
//! fixed order, and every key is always present (`null` when it has no value), so the
//! shape of one report is the shape of all of them.

use serde_json::{json, Map, Value};

use crate::catalogue::{BENCHMARK, BENCHMARK_VERSION, CATALOGUE};
use crate::fmt::utc;
use crate::verdict::{Outcome, Verdict};

use super::{BaselineInfo, Report, Row, Server, GRADER_VERSION};

/// The schema id written at the top of every report.
pub const SCHEMA: &str = "mcp-grade-report/1";

/// The report as a JSON value.
pub fn document(r: &Report) -> Value {
    json!({
        "schema": SCHEMA,
        "benchmark": {"name": BENCHMARK, "version": BENCHMARK_VERSION},
        "grader_version": GRADER_VERSION,
        "level": r.level,
        "graded": {
            "count": r.graded().count(),
            "in_scope": r.rows.len(),
            "total": CATALOGUE.len(),
        },
        "totals": summary(|v| r.total(v)),
        "servers": r.servers.iter().enumerate().map(|(i, s)| server(i, s)).collect::<Vec<_>>(),
        "checks": r.rows.iter().map(|row| check(r, row)).collect::<Vec<_>>(),
    })
}

/// The report as pretty-printed JSON text (no trailing newline).
pub fn to_string(r: &Report) -> String {
    // Serialising a `Value` cannot fail.
    serde_json::to_string_pretty(&document(r)).unwrap_or_default()
}

fn summary(count: impl Fn(Verdict) -> usize) -> Value {
    Value::Object(
        Verdict::ORDER
            .iter()
            .map(|v| (v.mark().to_string(), Value::from(count(*v))))
            .collect(),
    )
}

fn server(index: usize, s: &Server) -> Value {
    json!({
        "index": index,
        "endpoint": s.endpoint,
        "target": s.target,
        "negotiated_revision": s.revision,
        "server_info": s.server_info,
        "auth_required": s.auth_required,
        "authenticated": s.authenticated,
        "run_status": s.run_status,
        "failure": s.failure,
        "bundle_id": s.run_id,
        "bundle": s.bundle,
        "signer": s.signer,
        "collector": s.collector,
        "collected_at": utc(s.collected_at),
        "baseline": s.baseline.as_ref().map(baseline),
    })
}

fn baseline(b: &BaselineInfo) -> Value {
    json!({
        "mode": b.mode.as_str(),
        "path": b.path,
        "used": b.used,
        "bundle_id": b.run_id,
        "collected_at": b.collected_at.map(utc),
        "signer": b.signer,
        "stored": b.stored,
        "problem": b.problem,
    })
}

fn check(r: &Report, row: &Row) -> Value {
    let e = row.entry;
    let results: Vec<Value> = row
        .outcomes
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, o)| result(i, &r.servers[i], o))
        .collect();
    json!({
        "id": e.id,
        "level": e.level.number(),
        "title": e.title,
        "section": e.section(),
        "source": e.source.as_str(),
        "graded": row.outcomes.is_some(),
        "summary": summary(|v| row.count(v)),
        "results": results,
    })
}

fn result(index: usize, s: &Server, o: &Outcome) -> Value {
    let legs: Map<String, Value> = o
        .legs
        .iter()
        .map(|l| {
            (
                l.id.clone(),
                serde_json::to_value(l.outcome).unwrap_or(Value::Null),
            )
        })
        .collect();
    json!({
        "server": index,
        "endpoint": s.endpoint,
        "verdict": o.verdict.mark(),
        "evidence": o.evidence,
        "reduction": o.reduction,
        "legs": legs,
        "records": o.records,
        "details": o.details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::CheckResult;
    use crate::verdict::{Leg, LegOutcome};

    #[test]
    fn shape() {
        let ev = crate::fixture::evidence(
            Some(crate::fixture::session(Some("2025-11-25"), json!({}), None)),
            Vec::new(),
        );
        let results = CATALOGUE
            .iter()
            .map(|e| CheckResult {
                entry: e,
                outcome: (e.id == "1.1").then(|| {
                    Outcome::from_legs(
                        vec![
                            Leg::new("1.1a", LegOutcome::Pass, "ok"),
                            Leg::new("1.1d", LegOutcome::RevisionUnsupported, "old"),
                        ],
                        "r",
                    )
                    .with_records([2])
                    .with_detail("n", 1)
                }),
            })
            .collect();
        let rep = Report::new(None, vec![(Server::new(&ev, None), results)]);
        let v = document(&rep);
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(
            v["graded"],
            json!({"count": 1, "in_scope": 36, "total": 36})
        );
        assert_eq!(v["totals"]["PASS"], 1);
        assert_eq!(v["level"], Value::Null);
        let c = &v["checks"][0];
        assert_eq!(c["id"], "1.1");
        assert_eq!(c["graded"], true);
        assert_eq!(
            c["summary"],
            json!({"PASS": 1, "FAIL": 0, "NO-REV": 0, "UNKNOWN": 0, "N/A": 0, "ERROR": 0})
        );
        let res = &c["results"][0];
        assert_eq!(
            res["legs"],
            json!({"1.1a": "pass", "1.1d": "revision_unsupported"})
        );
        assert_eq!(res["records"], json!([2]));
        assert_eq!(res["details"], json!({"n": 1}));
        assert_eq!(res["server"], 0);
        let ng = v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["id"] == "10.2")
            .expect("10.2");
        assert_eq!(ng["graded"], false);
        assert_eq!(ng["results"], json!([]));
        assert_eq!(v["servers"][0]["negotiated_revision"], "2025-11-25");
        assert_eq!(v["servers"][0]["collected_at"], "2025-11-30T05:20:00Z");
        assert_eq!(v["servers"][0]["baseline"], Value::Null);
    }
}
