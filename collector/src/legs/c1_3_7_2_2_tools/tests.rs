use super::*;
use mcp_probe_schema::model::Observation;

fn tool(name: &str, read_only: Option<bool>) -> Value {
    match read_only {
        Some(r) => json!({"name": name, "annotations": {"readOnlyHint": r}}),
        None => json!({"name": name}),
    }
}

fn args(names: &[&str]) -> BTreeMap<String, Map<String, Value>> {
    names
        .iter()
        .map(|n| {
            let mut m = Map::new();
            m.insert("x".into(), json!(1));
            (n.to_string(), m)
        })
        .collect()
}

#[test]
fn consent_is_the_boolean_true_with_arguments() {
    let e = |v: Value| consent(Some(&v)).unwrap_err();
    assert_eq!(consent(None).unwrap_err(), ConsentError::NoConsent);
    assert_eq!(
        e(json!({INPUT_CONSENT: "true", INPUT_ARGUMENTS: {}})),
        ConsentError::NoConsent
    );
    assert_eq!(
        e(json!({INPUT_CONSENT: 1, INPUT_ARGUMENTS: {}})),
        ConsentError::NoConsent
    );
    assert_eq!(
        e(json!({INPUT_ARGUMENTS: {"a": {}}})),
        ConsentError::NoConsent
    );
    assert_eq!(e(json!({INPUT_CONSENT: true})), ConsentError::NoArguments);
    assert_eq!(
        e(json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"a": [1]}})),
        ConsentError::NotObject("a".into())
    );
    assert!(ConsentError::NoConsent
        .to_string()
        .contains("tool_calls_authorised is not true"));
    let ok = consent(Some(
        &json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"a": {"k": 2}}}),
    ))
    .expect("consent");
    assert_eq!(ok["a"]["k"], json!(2));
}

#[test]
fn pick_prefers_arguments_then_read_only_then_name() {
    let a = tool("b_plain", None);
    let b = tool("c_ro", Some(true));
    let c = tool("a_plain", Some(false));
    let all = [&a, &b, &c];
    assert_eq!(pick(&all, &args(&[])).expect("pick").name, "c_ro");
    assert_eq!(
        pick(&all, &args(&["b_plain"])).expect("pick").name,
        "b_plain"
    );
    assert_eq!(
        pick(&all, &args(&["b_plain"])).expect("pick").arguments["x"],
        json!(1)
    );
    let all = [&a, &c];
    assert_eq!(pick(&all, &args(&[])).expect("pick").name, "a_plain");
    assert!(pick(&[], &args(&[])).is_none());
}

#[test]
fn selection_splits_against_the_baseline() {
    let adv = vec![tool("old", None), tool("new_b", None), tool("new_a", None)];
    let base: BTreeSet<String> = ["old".to_string(), "gone".to_string()].into();
    let (c, s) = select(&adv, &base, &args(&[])).expect("pair");
    assert_eq!((c.name.as_str(), s.name.as_str()), ("old", "new_a"));
    let (_, s) = select(&adv, &base, &args(&["new_b"])).expect("pair");
    assert_eq!(s.name, "new_b");
    let all: BTreeSet<String> = ["old", "new_a", "new_b"].map(String::from).into();
    assert!(select(&adv, &all, &args(&[]))
        .unwrap_err()
        .contains("no tool is advertised beyond the baseline (3 advertised, all recorded)"));
    assert!(select(&adv, &BTreeSet::new(), &args(&[]))
        .unwrap_err()
        .contains("no control call"));
    assert!(select(&[], &base, &args(&[]))
        .unwrap_err()
        .contains("0 advertised"));
}

#[test]
fn the_store_path_is_the_graders() {
    let p = stored_baseline(Path::new("/s"), "http://127.0.0.1:1/mcp");
    let key = hex::encode(&mcp_probe_schema::bundle::sha256(b"http://127.0.0.1:1/mcp")[..8]);
    assert_eq!(p, Path::new("/s/baselines").join(format!("{key}.mcpev")));
}

#[test]
fn a_baseline_must_verify_and_be_of_the_endpoint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("b.mcpev");
    let bytes =
        mcp_probe_schema::testkit::sample_bundle(&mcp_probe_schema::testkit::test_key(1), 2, 200);
    std::fs::write(&path, &bytes).expect("write");
    let names = baseline_tools(&path, "http://127.0.0.1:8080/mcp").expect("tools");
    assert_eq!(names, ["t0", "t1"].map(String::from).into());
    assert!(baseline_tools(&path, "http://127.0.0.1:9/mcp")
        .unwrap_err()
        .contains("is of endpoint http://127.0.0.1:8080/mcp"));
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 10] ^= 1;
    std::fs::write(&path, &bad).expect("write");
    assert!(baseline_tools(&path, "http://127.0.0.1:8080/mcp")
        .unwrap_err()
        .contains("does not verify"));
    assert!(baseline_tools(&dir.path().join("none"), "x")
        .unwrap_err()
        .contains("cannot read"));
}

fn run_leg(inputs: Option<Value>, baseline: Option<&Path>) -> Vec<Record> {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = crate::legs::fixture::client();
    let j = crate::legs::fixture::journal(dir.path(), "http://127.0.0.1:1/mcp");
    let mut p = Probe::new(&client, j.clone(), None, 1);
    p.endpoint = Some(url::Url::parse("http://127.0.0.1:1/mcp").expect("url"));
    p.era = Some(Era::Legacy);
    p.revision = Some("2025-11-25".into());
    p.inputs = inputs;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(p.tool_calls(baseline, false));
    let recs = j.lock().expect("journal").records();
    recs
}

fn skipped(r: &Record) -> &str {
    match &r.observation {
        Observation::Skipped { reason } => reason,
        o => panic!("{o:?}"),
    }
}

#[test]
fn without_consent_nothing_is_sent() {
    for inputs in [
        None,
        Some(json!({INPUT_ARGUMENTS: {"echo": {"text": "x"}}})),
        Some(json!({INPUT_CONSENT: false, INPUT_ARGUMENTS: {"echo": {}}})),
    ] {
        let r = run_leg(inputs, None);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].legs, LEGS.map(|l| l.to_string()).to_vec());
        assert!(skipped(&r[0]).contains("tool_calls_authorised is not true"));
    }
}

#[test]
fn without_a_baseline_1_3_is_skipped_and_without_an_advertised_tool_7_2_2_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("none.mcpev");
    let i = Some(json!({INPUT_CONSENT: true, INPUT_ARGUMENTS: {"echo": {"text": "x"}}}));
    let r = run_leg(i, Some(&missing));
    // Nothing was sent: every record is a skip (the inventory is empty here).
    assert!(
        r.iter()
            .all(|r| matches!(r.observation, Observation::Skipped { .. })),
        "{r:?}"
    );
    assert!(skipped(&r[0]).contains("cannot read the baseline"), "{r:?}");
    assert!(skipped(&r[1]).contains("no tool named in tool_arguments is advertised"));
}
