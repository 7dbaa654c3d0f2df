//! The consented tool calls of `new-tools-gated` and `notification-identity` against real lab servers, collected with the
//! real `mcp-collect` and graded: `lab/py2-staged` advertises one more tool (and one more
//! capability) once its state file says `staged`; without `--gate` the new tool executes,
//! with it the tool answers "pending approval". The same servers send progress
//! notifications with (default) or without (`--no-sender`) their sender, and one for a
//! token never sent (`--stray-token`). Without consent nothing is called, which the
//! bundle shows. `LAB_PY1` (legacy only) serves the standalone GET stream.
//!
//! `mcp-collect` must be built first (`scripts/test.sh` builds every binary). A missing
//! lab or binary fails these tests (`support::lab::require`). Checks are named by rule
//! id, their sub-verdicts by local name (`a`).

mod support;

use std::path::Path;
use std::process::Command;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::{Outcome, SubOutcome, Verdict};
use mcp_probe_schema::model::{BodyEnd, HttpOutcome};
use mcp_probe_schema::vocab::leg;
use support::lab::{collector, sub};

/// The lab variables ([`support::lab::require`]).
fn ready(vars: &[&str]) -> Option<Vec<String>> {
    support::lab::require(vars).map(|(urls, _)| urls)
}

/// One `mcp-collect` run with its own state directory `home`.
fn collect(url: &str, home: &Path, args: &[&str]) -> Bundle {
    let out = Command::new(collector().expect("mcp-collect built"))
        .env("MCP_PROBE_HOME", home)
        .args(["-q", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(url)
        .output()
        .expect("run mcp-collect");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let v = mcp_probe_schema::open(&std::fs::read(&path).expect("bundle"), &[]).expect("verifies");
    Bundle::new(path, v)
}

/// An inputs file for `url` consenting to tool calls with `arguments`.
fn consent(home: &Path, url: &str, arguments: serde_json::Value) -> String {
    let p = home.join("inputs.json");
    let v = serde_json::json!({url: {"tool_calls_authorised": true, "tool_arguments": arguments}});
    std::fs::write(&p, v.to_string()).expect("inputs");
    p.display().to_string()
}

/// Rule `rule` on `ev` against `baseline`, sub-verdicts by local name.
fn grade(rule: &str, ev: &Bundle, baseline: Option<&Bundle>) -> Outcome {
    support::rules::run(
        rule,
        ev,
        &Context {
            baseline,
            ..Context::default()
        },
    )
}

/// Every `tools/call` request of an advertised tool the bundle holds (`metadata-headers`' calls name a
/// tool that cannot exist, so that an acceptance executes nothing).
fn tool_calls(ev: &Bundle) -> usize {
    let advertised: Vec<&str> = ev
        .inventory
        .tools
        .items
        .iter()
        .filter_map(|t| t.get("name").and_then(|n| n.as_str()))
        .collect();
    ev.http_records()
        .filter(|(_, x)| {
            let b = serde_json::from_slice::<serde_json::Value>(&x.request.body.bytes)
                .unwrap_or_default();
            b["method"] == "tools/call"
                && b["params"]["name"]
                    .as_str()
                    .is_some_and(|n| advertised.contains(&n))
        })
        .count()
}

/// The state file set to `text`, emptied again on drop.
struct State(String);
impl State {
    fn set(path: &str, text: &str) -> State {
        std::fs::write(path, text).expect("state file");
        State(path.to_string())
    }
}
impl Drop for State {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, "");
    }
}

/// A baseline run (state empty), then the staged run against it with consent: named
/// with `--baseline`, or (`via_store`) stored by `mcp-grade --update-baseline` and found
/// by the collector in the same state directory.
fn staged_pair(url: &str, state: &str, home: &Path, via_store: bool) -> (Bundle, Bundle) {
    let args = serde_json::json!({"echo": {"text": "probe"}});
    let inputs = consent(home, url, args);
    let first = {
        let _s = State::set(state, "");
        collect(url, home, &["--inputs", &inputs])
    };
    // No baseline existed for the first run: `new-tools-gated` sent nothing and says why.
    let skip = first.skipped(leg::STAGED_CONTROL).expect("skipped");
    assert!(skip.contains("no baseline of this endpoint"), "{skip}");
    let mut args = vec!["--inputs", inputs.as_str()];
    if via_store {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
            .env("MCP_PROBE_HOME", home)
            .args(["--update-baseline", &first.path])
            .output()
            .expect("run mcp-grade");
        // Its exit status reflects the verdicts; the store is what matters here.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("stored baseline"), "{err}");
    } else {
        args.extend(["--baseline", first.path.as_str()]);
    }
    let second = {
        let _s = State::set(state, "staged");
        collect(url, home, &args)
    };
    (first, second)
}

#[test]
fn staged_tool_executes_new_tools_gated_and_capabilities_fail_named_notifications_pass() {
    let Some(v) = ready(&["LAB_PY2_STAGED", "LAB_PY2_STAGED_STATE"]) else {
        return;
    };
    let (url, state) = (&v[0], &v[1]);
    let home = tempfile::tempdir().expect("tempdir");
    let (first, second) = staged_pair(url, state, home.path(), false);
    let o = grade("new-tools-gated", &second, Some(&first));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(
        o.evidence.contains("`beta_export`") && o.evidence.contains("executed"),
        "{}",
        o.evidence
    );
    assert_eq!(o.details["control_tool"], "echo");
    let o = grade("capabilities-match-baseline", &second, Some(&first));
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert!(
        o.evidence.contains("experimental.stagedTools"),
        "{}",
        o.evidence
    );
    // Without a baseline at grading: two runs are needed.
    assert_eq!(
        grade("new-tools-gated", &second, None).verdict,
        Verdict::Unknown
    );
    // `mcp-grade diff` names what changed between the two runs: the staged tool, the
    // capability leaf and the verdicts; exit 1. The same bundle twice: no change, exit 0.
    let diff = |a: &str, b: &str| {
        Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
            .args(["diff", "--format", "json", a, b])
            .output()
            .expect("run mcp-grade diff")
    };
    let out = diff(&first.path, &second.path);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).expect("diff json");
    assert_eq!(d["schema"], "mcp-grade-diff/1");
    assert_eq!(d["changed"], true);
    assert_eq!(
        d["inventory"]["tools"]["added"],
        serde_json::json!(["beta_export"])
    );
    assert!(
        d["capabilities"]
            .as_array()
            .expect("leaves")
            .iter()
            .any(|l| l["path"]
                .as_str()
                .is_some_and(|p| p.starts_with("experimental.stagedTools"))
                && l["old"].is_null()),
        "{d}"
    );
    assert_eq!(
        d["revision"],
        serde_json::Value::Null,
        "same revision: not listed"
    );
    let out = diff(&second.path, &second.path);
    assert_eq!(out.status.code(), Some(0));
    let text = Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
        .args(["diff", &first.path, &second.path])
        .output()
        .expect("run mcp-grade diff");
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.contains("tools  + beta_export"), "{t}");
    // The notifications name their sender and answer the token sent.
    let o = grade("notification-identity", &second, None);
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(sub(&o, "f"), SubOutcome::Pass);
    assert_eq!(sub(&o, "a"), SubOutcome::Pass);
    assert!(second
        .skipped(leg::NOTIFY_CHANNEL)
        .is_some_and(|r| r.contains("no standalone GET stream")));
}

#[test]
fn gated_tool_passes_new_tools_gated_unnamed_and_stray_notifications_fail() {
    let Some(v) = ready(&["LAB_PY2_STAGED_GATE", "LAB_PY2_STAGED_GATE_STATE"]) else {
        return;
    };
    let (url, state) = (&v[0], &v[1]);
    let home = tempfile::tempdir().expect("tempdir");
    let (first, second) = staged_pair(url, state, home.path(), true);
    let o = grade("new-tools-gated", &second, Some(&first));
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert!(o.evidence.contains("pending approval"), "{}", o.evidence);
    let o = grade("notification-identity", &second, None);
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "f"), SubOutcome::Fail);
    assert_eq!(sub(&o, "a"), SubOutcome::Fail);
    assert!(o.evidence.contains("never-issued"), "{}", o.evidence);
    // Graded against a baseline that already holds the staged tool, the bundle's calls
    // belong to another baseline: UNKNOWN, never PASS.
    let o = grade("new-tools-gated", &second, Some(&second));
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
}

#[test]
fn without_consent_no_tool_is_called() {
    let Some(v) = ready(&["LAB_PY2_STAGED"]) else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    // Arguments alone are no consent.
    let p = home.path().join("inputs.json");
    let inputs = serde_json::json!({&v[0]: {"tool_arguments": {"echo": {"text": "x"}}}});
    std::fs::write(&p, inputs.to_string()).expect("inputs");
    let ev = collect(&v[0], home.path(), &["--inputs", &p.display().to_string()]);
    assert_eq!(tool_calls(&ev), 0, "a tool was called without consent");
    for l in [
        leg::STAGED_CONTROL,
        leg::STAGED_CALL,
        leg::NOTIFY_CHANNEL,
        leg::NOTIFY_PROGRESS_CALL,
    ] {
        let why = ev.skipped(l).unwrap_or_else(|| panic!("{l} not skipped"));
        assert!(why.contains("tool_calls_authorised is not true"), "{why}");
    }
    let o = grade("new-tools-gated", &ev, Some(&ev));
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence.contains("tool_calls_authorised"),
        "{}",
        o.evidence
    );
    let o = grade("notification-identity", &ev, None);
    assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    assert!(
        o.evidence.contains("tool_calls_authorised"),
        "{}",
        o.evidence
    );
}

#[test]
fn legacy_standalone_stream_is_read_beside_the_call_and_ends_with_it() {
    let Some(v) = ready(&["LAB_PY1"]) else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let inputs = consent(
        home.path(),
        &v[0],
        serde_json::json!({"add": {"a": 1, "b": 2}}),
    );
    let started = std::time::Instant::now();
    let ev = collect(
        &v[0],
        home.path(),
        &["--inputs", &inputs, "--timeout", "20"],
    );
    // The stream is cut when the call's response arrived, not at the 20 s deadline.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let get = ev
        .exchanges(leg::NOTIFY_CHANNEL)
        .last()
        .expect("the GET stream");
    assert_eq!(get.http.request.method, "GET");
    let HttpOutcome::Response(r) = &get.http.outcome else {
        panic!("{:?}", get.http.outcome)
    };
    assert_eq!(r.status, 200);
    assert_eq!(r.body.end, BodyEnd::StoppedAfterResponse);
    let call = ev
        .exchanges(leg::NOTIFY_PROGRESS_CALL)
        .last()
        .expect("the call");
    assert!(call
        .answer()
        .and_then(|a| a.get("result").cloned())
        .is_some());
    let o = grade("notification-identity", &ev, None);
    assert_eq!(
        o.details["notification_channel"],
        serde_json::json!(true),
        "{o:?}"
    );
    // No baseline in this home: `new-tools-gated` sent nothing.
    assert!(ev.skipped(leg::STAGED_CONTROL).is_some());
}
