//! The legacy HTTP+SSE transport (2024-11-05) end to end against real lab servers that
//! speak only it (`lab/up.d/sse.sh`): `mcp` 1.30.0 FastMCP (`LAB_PY1_SSE_ORIGIN`, the
//! bare origin, so detection tries `/mcp` and `/` as Streamable HTTP first and falls
//! back to `GET /sse`) and fastmcp 4.2.3 (`LAB_FASTMCP_SSE`, the stream URL as given).
//! Collected with the real `mcp-collect`, verified and graded with the real `mcp-grade`.
//!
//! `mcp-collect` must be built first (`scripts/test.sh` builds every binary). A missing
//! lab or binary fails these tests (`support::lab::require`).

mod support;

use support::grade_run;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_probe_schema::model::{Observation, Transport};
use mcp_probe_schema::vocab::leg;
use serde_json::Value;
use support::lab::collector;

/// The lab variable `var` ([`support::lab::require`]).
fn ready(var: &str) -> Option<String> {
    support::lab::require_one(var).map(|(url, _)| url)
}

/// One `mcp-collect` run; the bundle path and the verified bundle.
fn collect(target: &str, home: &Path, args: &[&str]) -> (PathBuf, mcp_probe_schema::Verified) {
    let out = Command::new(collector().expect("mcp-collect built"))
        .env("MCP_PROBE_HOME", home)
        .args(["-q", "--timeout", "10", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(target)
        .output()
        .expect("run mcp-collect");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The bundle path is the unindented line (--info adds an indented block).
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let path = PathBuf::from(
        stdout
            .lines()
            .find(|l| !l.starts_with(' ') && !l.is_empty())
            .expect("a bundle path on stdout"),
    );
    let v = mcp_probe_schema::open(&std::fs::read(&path).expect("bundle"), &[]).expect("verifies");
    (path, v)
}

fn names(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_domain_that_serves_only_http_sse_is_detected_probed_and_graded() {
    let Some(origin) = ready("LAB_PY1_SSE_ORIGIN") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let (path, v) = collect(&origin, home.path(), &[]);
    let t = &v.evidence.target;
    assert_eq!(t.transport, Transport::HttpSse);
    assert_eq!(
        t.endpoint.as_deref(),
        Some(format!("{origin}/sse").as_str())
    );
    let post = t.message_endpoint.as_deref().expect("message endpoint");
    assert!(
        post.starts_with(&format!("{origin}/messages/?session_id=")),
        "{post}"
    );
    // Streamable HTTP was tried first: /mcp and / were POSTed and refused.
    let detect: Vec<&str> = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l == leg::ENDPOINT_DETECT.as_str()))
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => Some(x.request.url.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        detect.contains(&format!("{origin}/mcp").as_str()),
        "{detect:?}"
    );
    let s = v.evidence.session.as_ref().expect("a session");
    assert_eq!(s.revision.as_deref(), Some("2024-11-05"));
    assert_eq!(
        s.server_info
            .as_ref()
            .and_then(|i| i.get("name"))
            .and_then(Value::as_str),
        Some("py1-sse-probe-target")
    );
    // The inventory is the server's (lab/py1-sse/server.py), read from the stream.
    let inv = mcp_probe_schema::derive::inventory(&v.records);
    assert_eq!(
        names(&inv.tools.items),
        ["add", "echo", "shout"].map(String::from).into()
    );
    assert!(inv.tools.complete);
    assert_eq!(names(&inv.prompts.items), ["review".to_string()].into());
    assert_eq!(inv.resources.items.len(), 1, "{:?}", inv.resources);
    assert_eq!(inv.resource_templates.items.len(), 1);
    // Every answer event names its POST and carries its legs.
    let answers = v
        .records
        .iter()
        .filter(|r| matches!(&r.observation, Observation::SseEvent(e) if e.request.is_some()))
        .count();
    assert!(answers >= 5, "{answers} answer events");
    for r in &v.records {
        if let Observation::SseEvent(e) = &r.observation {
            if let Some(p) = e.request {
                let post = &v.records[p as usize];
                assert_eq!(post.legs, r.legs, "record {}", r.seq);
                assert!(
                    matches!(&post.observation, Observation::Http(x) if x.request.method == "POST")
                );
            }
        }
    }

    let dir = path.parent().expect("out dir");
    let verify = grade_run::mcp_grade(
        dir,
        Some(home.path()),
        ["verify".as_ref(), path.as_os_str()],
    );
    assert_eq!(verify.code, 0, "{verify:?}");
    let graded = grade_run::mcp_grade(
        dir,
        Some(home.path()),
        ["--format".as_ref(), "json".as_ref(), path.as_os_str()],
    );
    let report: Value = serde_json::from_str(&graded.stdout).expect("json report");
    assert_eq!(report["servers"][0]["transport"], "http+sse", "{graded:?}");
    let checks = report["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 36);
    let mut errors = Vec::new();
    for c in checks {
        for r in c["results"].as_array().expect("results") {
            if r["verdict"] == "ERROR" {
                errors.push(format!("{}: {}", c["id"], r["evidence"]));
            }
        }
    }
    assert!(errors.is_empty(), "ERROR verdicts: {errors:#?}");
    // The checks whose mechanics this transport lacks say so in their reduction.
    let reduction = |rule: &str| {
        checks
            .iter()
            .find(|c| c["rule"] == rule)
            .and_then(|c| c["results"][0]["reduction"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    for id in [
        "auth-before-stream",
        "origin-validated",
        "legacy-session-disabled",
        "cache-freshness",
    ] {
        assert!(
            reduction(id).contains("HTTP+SSE"),
            "{id}: {}",
            reduction(id)
        );
    }

    // The transcript shows the stream.
    let show = grade_run::mcp_grade(dir, Some(home.path()), ["show".as_ref(), path.as_os_str()]);
    assert_eq!(show.code, 0, "{show:?}");
    assert!(show.stdout.contains("event endpoint"), "{}", show.stdout);
    let har = grade_run::mcp_grade(
        dir,
        Some(home.path()),
        ["show".as_ref(), "--har".as_ref(), path.as_os_str()],
    );
    let har: Value = serde_json::from_str(&har.stdout).expect("har json");
    let with_events = har["log"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e.get("_sseEvents").is_some())
        .count();
    assert!(with_events >= 5, "{with_events}");
}

#[test]
fn a_second_sdk_on_http_sse_given_by_its_stream_url() {
    let Some(url) = ready("LAB_FASTMCP_SSE") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let (_, v) = collect(&url, home.path(), &["--info"]);
    assert_eq!(v.evidence.target.transport, Transport::HttpSse);
    assert_eq!(v.evidence.target.endpoint.as_deref(), Some(url.as_str()));
    let s = v.evidence.session.as_ref().expect("a session");
    assert!(s.revision.is_some());
    let inv = mcp_probe_schema::derive::inventory(&v.records);
    assert_eq!(
        names(&inv.tools.items),
        ["add", "echo"].map(String::from).into()
    );
}

/// Both SDKs acknowledge `"id": null` on HTTP+SSE and never answer it. The collector
/// follows it with a normal `tools/list` and stops waiting once that is answered: the
/// run takes well under its `--timeout` (before the follow-up it took all of it), and
/// 7.1.2 is UNKNOWN at once, naming the follow-up.
#[test]
fn a_null_id_both_sdks_drop_costs_no_timeout_and_grades_unknown() {
    for var in ["LAB_PY1_SSE", "LAB_FASTMCP_SSE"] {
        let Some(url) = ready(var) else {
            return;
        };
        let home = tempfile::tempdir().expect("tempdir");
        let t0 = std::time::Instant::now();
        let (path, v) = collect(&url, home.path(), &[]);
        let elapsed = t0.elapsed();
        // `collect` passes --timeout 10.
        assert!(
            elapsed < std::time::Duration::from_secs(10),
            "{var}: {elapsed:?}"
        );
        let followup = v
            .records
            .iter()
            .find(|r| r.legs.iter().any(|l| l == leg::NULL_ID_FOLLOWUP.as_str()))
            .unwrap_or_else(|| panic!("{var}: no follow-up record"));
        let graded = grade_run::mcp_grade(
            path.parent().expect("out dir"),
            Some(home.path()),
            ["--format".as_ref(), "json".as_ref(), path.as_os_str()],
        );
        let report: Value = serde_json::from_str(&graded.stdout).expect("json report");
        let r = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["rule"] == "null-id-rejected")
            .map(|c| c["results"][0].clone())
            .expect("null-id-rejected");
        assert_eq!(r["verdict"], "UNKNOWN", "{var}: {r}");
        let evidence = r["evidence"].as_str().unwrap_or_default();
        assert!(
            evidence.contains("silently")
                && evidence.contains(&format!("record #{}", followup.seq)),
            "{var}: {evidence}"
        );
    }
}
