//! The Section 5 live legs against the lab through the real binaries: `mcp-collect`
//! (with a probe-inputs file naming the tool of `tool-schemas-validated` sub-verdict d and
//! consenting to the `path-confinement` traversal where a test wants it) and the grader.
//! Each live leg sees a server that passes and one that fails; the consent gate of
//! `path-confinement` is asserted from the bundle. Checks are named by rule id, their
//! sub-verdicts by local name (`c`, `c@2025-11-25`).
//!
//! `mcp-collect` must be built first (`cargo build -p mcp-probe-collector --bin
//! mcp-collect`, same target dir). A missing lab or binary fails these tests
//! (`support::lab::require`).

mod support;

use std::collections::HashMap;
use std::process::Command;
use std::sync::OnceLock;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::{Outcome, SubOutcome, Verdict};
use mcp_probe_schema::model::Observation;
use mcp_probe_schema::vocab::leg as wire;
use serde_json::{json, Value};
use support::lab::{collector, sub};
use support::rules;

const SERVERS: &[&str] = &[
    "LAB_PY2",
    "LAB_PY1",
    "LAB_TS2",
    "LAB_FASTMCP",
    "LAB_PY2_PAGED",
    "LAB_PY2_SLOPPY",
    "LAB_PY2_FILES",
    "LAB_PY2_FILES_NAIVE",
];

/// The probe inputs of the shared run, by lab variable.
fn inputs(var: &str) -> Value {
    match var {
        "LAB_PY2" | "LAB_PY1" | "LAB_TS2" | "LAB_FASTMCP" => json!({
            "schema_probe_tool": "add", "schema_probe_arguments": {"a": 1, "b": 2}
        }),
        "LAB_PY2_PAGED" => json!({
            "schema_probe_tool": "tool_00", "schema_probe_arguments": {"text": "x"}
        }),
        "LAB_PY2_SLOPPY" => json!({
            "schema_probe_tool": "echo", "schema_probe_arguments": {"text": "x"}
        }),
        // The safe server with a derived control, the naive one with the operator's.
        "LAB_PY2_FILES" => json!({"traversal_authorised": true}),
        "LAB_PY2_FILES_NAIVE" => json!({
            "traversal_authorised": true, "traversal_control_uri": "file:///docs/readme.txt"
        }),
        _ => json!({}),
    }
}

/// `mcp-collect -q --inputs FILE urls…` and the bundles by the url they name.
fn collect(urls: &[(String, String)], inputs: &Value) -> HashMap<String, Bundle> {
    let bin = collector().expect("mcp-collect built");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("inputs.json");
    std::fs::write(&file, inputs.to_string()).expect("inputs");
    let out = Command::new(bin)
        .env("MCP_PROBE_HOME", dir.path().join("home"))
        .arg("-q")
        .arg("--inputs")
        .arg(&file)
        .arg("-o")
        .arg(dir.path().join("out"))
        .args(urls.iter().map(|(_, u)| u))
        .output()
        .expect("run mcp-collect");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v = mcp_probe_schema::open(&std::fs::read(line).expect("bundle"), &[])
            .expect("bundle verifies");
        let var = urls
            .iter()
            .find(|(_, u)| *u == v.evidence.target.as_typed)
            .map(|(v, _)| v.clone())
            .expect("known target");
        map.insert(var, Bundle::new(line, v));
    }
    assert_eq!(map.len(), urls.len());
    map
}

/// The lab URLs of `vars` ([`support::lab::require`]).
fn urls(vars: &[&str]) -> Option<Vec<(String, String)>> {
    let (got, _) = support::lab::require(vars)?;
    Some(vars.iter().map(|v| v.to_string()).zip(got).collect())
}

/// One collection run over [`SERVERS`] with [`inputs`], shared by the tests.
fn bundles() -> Option<&'static HashMap<String, Bundle>> {
    static B: OnceLock<Option<HashMap<String, Bundle>>> = OnceLock::new();
    B.get_or_init(|| {
        let urls = urls(SERVERS)?;
        let file: serde_json::Map<String, Value> =
            urls.iter().map(|(v, u)| (u.clone(), inputs(v))).collect();
        Some(collect(&urls, &Value::Object(file)))
    })
    .as_ref()
}

/// Rule `rule` on the negotiated era of the bundle of `var`, sub-verdicts by local name.
fn grade(var: &str, rule: &str) -> Outcome {
    let b = bundles().expect("bundles");
    rules::run(rule, &b[var], &Context::default())
}

fn note(o: &Outcome, id: &str) -> String {
    o.subs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.note.clone())
        .unwrap_or_else(|| panic!("no leg {id} in {o:?}"))
}

#[test]
fn schema_violating_call() {
    if bundles().is_none() {
        return;
    }
    // The SDKs validate arguments and answer a missing one with isError: true.
    for var in [
        "LAB_PY2",
        "LAB_PY1",
        "LAB_TS2",
        "LAB_FASTMCP",
        "LAB_PY2_PAGED",
    ] {
        let o = grade(var, "tool-schemas-validated");
        assert_eq!(sub(&o, "d"), SubOutcome::Pass, "{var}: {o:?}");
        assert!(
            note(&o, "d").contains("without `a`") || var == "LAB_PY2_PAGED",
            "{var}: {o:?}"
        );
    }
    // py2 and py1 declare and compile both schemas: the check passes as a whole.
    assert_eq!(
        grade("LAB_PY2", "tool-schemas-validated").verdict,
        Verdict::Pass
    );
    // py2-sloppy's echo runs without its required text and returns "None".
    let o = grade("LAB_PY2_SLOPPY", "tool-schemas-validated");
    assert_eq!(sub(&o, "d"), SubOutcome::Fail, "{o:?}");
    assert!(note(&o, "d").contains("executed despite"), "{o:?}");
    // Without the operator's input nothing is called: unknown, naming the input.
    let o = grade("LAB_PY2_FILES", "tool-schemas-validated");
    assert_eq!(sub(&o, "d"), SubOutcome::Unknown, "{o:?}");
    assert!(note(&o, "d").contains("schema_probe_tool"), "{o:?}");
}

#[test]
fn missing_resource() {
    if bundles().is_none() {
        return;
    }
    // The confined file server refuses a file that does not exist with -32602.
    let o = grade("LAB_PY2_FILES", "resource-templates-typed");
    assert_eq!(sub(&o, "c"), SubOutcome::Pass, "{o:?}");
    assert!(
        note(&o, "c").contains("`file:///cis-audit-no-such-value`"),
        "{o:?}"
    );
    assert_eq!(o.verdict, Verdict::Pass);
    // The naive one answers it with an empty contents list.
    let o = grade("LAB_PY2_FILES_NAIVE", "resource-templates-typed");
    assert_eq!(sub(&o, "c"), SubOutcome::Fail, "{o:?}");
    assert!(note(&o, "c").contains("empty `contents`"), "{o:?}");
    // greeting://{name} generates a greeting for any name: not decidable.
    for var in ["LAB_PY2", "LAB_TS2", "LAB_FASTMCP", "LAB_PY1"] {
        let o = grade(var, "resource-templates-typed");
        assert_eq!(sub(&o, "c"), SubOutcome::Unknown, "{var}: {o:?}");
        assert!(
            note(&o, "c").contains("`greeting://cis-audit-no-such-value`"),
            "{var}: {o:?}"
        );
    }
}

#[test]
fn prompt_refusals() {
    if bundles().is_none() {
        return;
    }
    // ts2, fastmcp and the low-level py2-paged refuse both with -32602.
    for var in ["LAB_TS2", "LAB_FASTMCP", "LAB_PY2_PAGED"] {
        let o = grade(var, "prompt-arguments-validated");
        assert_eq!(sub(&o, "c"), SubOutcome::Pass, "{var}: {o:?}");
        assert_eq!(sub(&o, "d"), SubOutcome::Pass, "{var}: {o:?}");
        assert_eq!(o.verdict, Verdict::Pass, "{var}");
    }
    // mcp 2.3.0's MCPServer: -32603 "Internal server error" on 2026-07-28; mcp 1.x
    // (py1, legacy): error code 0. Refused, but not with -32602.
    for (var, code) in [("LAB_PY2", "-32603"), ("LAB_PY1", "code 0")] {
        let o = grade(var, "prompt-arguments-validated");
        for id in ["c", "d"] {
            assert_eq!(sub(&o, id), SubOutcome::Fail, "{var} {id}: {o:?}");
            assert!(
                note(&o, id).contains(code)
                    || note(&o, id).contains(&code.replace("code ", "with ")),
                "{var}: {}",
                note(&o, id)
            );
        }
    }
    // py2-sloppy renders review without its required code, and refuses an unknown name.
    let o = grade("LAB_PY2_SLOPPY", "prompt-arguments-validated");
    assert_eq!(sub(&o, "c"), SubOutcome::Fail, "{o:?}");
    assert!(
        note(&o, "c").contains("without its required argument"),
        "{o:?}"
    );
    assert_eq!(sub(&o, "d"), SubOutcome::Pass, "{o:?}");
    // No prompt listed: nothing to get.
    let o = grade("LAB_PY2_FILES", "prompt-arguments-validated");
    assert_eq!(sub(&o, "d"), SubOutcome::Unknown, "{o:?}");
}

#[test]
fn path_traversal() {
    if bundles().is_none() {
        return;
    }
    let o = grade("LAB_PY2_FILES", "path-confinement");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert!(
        o.evidence
            .contains("derived from the first listed resource"),
        "{}",
        o.evidence
    );
    let o = grade("LAB_PY2_FILES_NAIVE", "path-confinement");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(sub(&o, "a.unix"), SubOutcome::Fail);
    assert_eq!(sub(&o, "a.encoded"), SubOutcome::Fail);
    let unix = note(&o, "a.unix");
    assert!(unix.contains("`file:///docs/readme.txt/../../"), "{unix}");
    assert!(unix.contains("root:"), "{unix}");
    assert!(
        o.evidence.contains("the operator's traversal_control_uri"),
        "{}",
        o.evidence
    );
    // No consent in the inputs: unknown, and nothing was sent.
    for var in ["LAB_PY2", "LAB_TS2"] {
        let o = grade(var, "path-confinement");
        assert_eq!(o.verdict, Verdict::Unknown, "{var}: {o:?}");
        assert!(o.evidence.contains("consent"), "{var}: {}", o.evidence);
    }
}

#[test]
fn without_consent_no_traversal_request_is_sent() {
    let Some(urls) = urls(&["LAB_PY2_FILES_NAIVE"]) else {
        return;
    };
    let url = urls[0].1.clone();
    for consent in [
        json!({}),
        json!({"traversal_authorised": false, "traversal_control_uri": "file:///docs/readme.txt"}),
    ] {
        let b = collect(&urls, &json!({ url.clone(): consent }));
        let ev = &b["LAB_PY2_FILES_NAIVE"];
        let traversal = [
            wire::TRAVERSAL_CONTROL,
            wire::TRAVERSAL_UNIX,
            wire::TRAVERSAL_WINDOWS,
            wire::TRAVERSAL_ENCODED,
        ];
        // Each era's view reads its own records of the traversal legs (sent again on
        // another era, a leg carries `@<revision>` after its wire name).
        let eras: Vec<Bundle> = std::iter::once(ev.clone()).chain(ev.other_eras()).collect();
        let mut traversal_seqs = std::collections::BTreeSet::new();
        for r in eras
            .iter()
            .flat_map(|era| traversal.iter().flat_map(move |&t| era.records_for(t)))
        {
            traversal_seqs.insert(r.seq);
            assert!(
                matches!(&r.observation, Observation::Skipped { reason } if reason.contains("traversal_authorised")),
                "{r:?}"
            );
        }
        let traversal_records = traversal_seqs.len();
        for (_, x) in ev.http_records() {
            let body = String::from_utf8_lossy(&x.request.body.bytes);
            assert!(
                !body.contains("../") && !body.contains("..%2F") && !body.contains("etc/passwd"),
                "a traversal was sent without consent: {body}"
            );
            assert!(
                !body.contains("file:///docs/readme.txt"),
                "the control was read: {body}"
            );
        }
        // One skip on each era the server serves (py2-files also answers initialize).
        assert_eq!(traversal_records, 1 + ev.other_eras().len());
        let o = rules::run("path-confinement", ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    }
}

/// The live legs graded on every era a dual-era server serves (the runner's
/// `benchmark::grade_bundle`, as `mcp-grade` does): py2 and py2-files answer `initialize`, so each
/// live leg was sent again on their 2025-11-25 session and is named with its era.
#[test]
fn the_live_legs_are_graded_on_every_era_of_a_dual_era_server() {
    let Some(b) = bundles() else { return };
    let graded = |var: &str, id: &str| {
        let ev = &b[var];
        assert_eq!(ev.other_eras().len(), 1, "{var} is dual-era");
        rules::graded(ev, id)
    };
    let era = b["LAB_PY2"].other_eras()[0].revision_label();
    let both = |o: &Outcome, l: &str| {
        let on = |rev: &str| sub(o, &format!("{l}@{rev}"));
        (on("2026-07-28"), on(&era))
    };
    // `tool-schemas-validated` sub-verdict d: both sessions validate `add`'s arguments (isError: true).
    let o = graded("LAB_PY2", "tool-schemas-validated");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(both(&o, "d"), (SubOutcome::Pass, SubOutcome::Pass));
    assert!(
        o.evidence.contains(&format!("| on {era}: PASS")),
        "{}",
        o.evidence
    );
    // `resource-templates-typed` sub-verdict c: the greeting template answers any value on both eras.
    let o = graded("LAB_PY2", "resource-templates-typed");
    assert_eq!(both(&o, "c"), (SubOutcome::Unknown, SubOutcome::Unknown));
    // `prompt-arguments-validated` sub-verdict c: mcp 2.3.0 refuses a missing argument with -32603 on 2026-07-28 and with
    // code 0 on its legacy session: two different wrong codes, FAIL on each.
    let o = graded("LAB_PY2", "prompt-arguments-validated");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(both(&o, "c"), (SubOutcome::Fail, SubOutcome::Fail));
    assert!(note(&o, "c@2026-07-28").contains("-32603"), "{o:?}");
    assert!(note(&o, &format!("c@{era}")).contains("with 0"), "{o:?}");
    // `path-confinement` sub-verdict a with consent, on each era: the confined server refuses both times, the
    // naive one serves /etc/passwd on both.
    let o = graded("LAB_PY2_FILES", "path-confinement");
    assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    assert_eq!(both(&o, "a.unix"), (SubOutcome::Pass, SubOutcome::Pass));
    let o = graded("LAB_PY2_FILES_NAIVE", "path-confinement");
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    assert_eq!(both(&o, "a.unix"), (SubOutcome::Fail, SubOutcome::Fail));
}
