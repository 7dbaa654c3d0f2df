//! `mcp-grade diff` of two JSON reports and of two bundles of one server on two ports
//! (matched by identity), and the check mapping through rule ids between reports made
//! under two benchmark definitions. The reports are real ones, written by
//! `mcp-grade --format json` from the example bundles; the ones "made under another
//! definition" are those edited here (rule ids, params, renumbering) as the definition
//! would change them, so every expectation below is derived from the two inputs.

mod support;

use support::grade_run;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use grade_run::{mcp_grade, Run};
use serde_json::{json, Value};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        Dir {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        mcp_grade(self.path(), Some(&self.path().join("home")), args)
    }

    /// The JSON report of example bundles `names`.
    fn report(&self, names: &[&str]) -> Value {
        let mut args: Vec<String> = vec!["--format".into(), "json".into(), "-q".into()];
        args.push("--trust".into());
        args.push(example("collector.pub"));
        args.extend(names.iter().map(|n| example(n)));
        let r = self.run(&args);
        assert!(r.code != 2 && r.code != 3, "{r:?}");
        serde_json::from_str(&r.stdout).expect("report json")
    }

    fn write(&self, name: &str, v: &Value) -> String {
        let p = self.path().join(name);
        std::fs::write(&p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
        p.display().to_string()
    }
}

fn example(name: &str) -> String {
    PathBuf::from(ROOT)
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

fn json_of(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"))
}

/// `check id -> (verdict, legs)` of server `index` in a report.
fn verdicts(report: &Value, index: u64) -> BTreeMap<String, (String, Value)> {
    let mut m = BTreeMap::new();
    for c in report["checks"].as_array().expect("checks") {
        for r in c["results"].as_array().expect("results") {
            if r["server"] == index {
                m.insert(
                    c["id"].as_str().expect("id").to_string(),
                    (
                        r["verdict"].as_str().expect("verdict").to_string(),
                        r["legs"].clone(),
                    ),
                );
            }
        }
    }
    m
}

/// `(leg, old, new)` of every leg that differs between two `legs` objects.
fn leg_changes(a: &Value, b: &Value) -> Vec<(String, Value, Value)> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        a.as_object().unwrap_or(&empty),
        b.as_object().unwrap_or(&empty),
    );
    let ids: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    ids.into_iter()
        .filter(|l| a.get(*l) != b.get(*l))
        .map(|l| {
            (
                l.clone(),
                a.get(l).cloned().unwrap_or(Value::Null),
                b.get(l).cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// A string value, `None` for `null`.
fn o(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn so(x: &str) -> Option<String> {
    Some(x.to_string())
}

/// `(old check, new check, old verdict, new verdict, legs)` of every per-server entry.
type Entry = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Vec<(String, Value, Value)>,
);

fn entries(server: &Value) -> Vec<Entry> {
    server["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| {
            let legs = v["legs"]
                .as_array()
                .expect("legs")
                .iter()
                .map(|l| {
                    (
                        l["leg"].as_str().expect("leg").to_string(),
                        l["old"].clone(),
                        l["new"].clone(),
                    )
                })
                .collect();
            (
                o(&v["old"]["check"]),
                o(&v["new"]["check"]),
                o(&v["old"]["verdict"]),
                o(&v["new"]["verdict"]),
                legs,
            )
        })
        .collect()
}

#[test]
fn two_reports_of_one_server_on_two_ports_pair_by_identity_and_show_each_changed_verdict() {
    let d = Dir::new();
    // nostore is an nginx front of py2 on another port: the same serverInfo name, and
    // another Cache-Control, so 10.1 differs.
    let a = d.report(&["py2.mcpev"]);
    let b = d.report(&["nostore.mcpev"]);
    assert_ne!(a["servers"][0]["endpoint"], b["servers"][0]["endpoint"]);
    let (pa, pb) = (d.write("a.json", &a), d.write("b.json", &b));

    // By endpoint (the default): nothing pairs; each server is named on its side.
    let r = d.run(["diff", "--format", "json", &pa, &pb]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = json_of(&r);
    assert_eq!(v["schema"], "mcp-grade-report-diff/1");
    assert_eq!(v["match"], "endpoint");
    assert_eq!(v["servers"], json!([]));
    assert_eq!(
        v["only_old"][0]["server"]["endpoint"],
        a["servers"][0]["endpoint"]
    );
    assert_eq!(
        v["only_new"][0]["server"]["endpoint"],
        b["servers"][0]["endpoint"]
    );
    assert!(
        v["only_old"][0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("in NEW")),
        "{v:#}"
    );

    // By identity: one pair, and exactly the verdicts that differ between the reports.
    let (va, vb) = (verdicts(&a, 0), verdicts(&b, 0));
    let mut want: Vec<Entry> = va
        .iter()
        .filter_map(|(id, (x, lx))| {
            let (y, ly) = vb.get(id)?;
            (x != y).then(|| (so(id), so(id), so(x), so(y), leg_changes(lx, ly)))
        })
        .collect();
    want.sort_by(|p, q| p.0.cmp(&q.0));
    assert!(
        want.iter().any(|e| e.0.as_deref() == Some("10.1")),
        "the fixture must differ in 10.1: {want:?}"
    );
    let r = d.run(["diff", "--format", "json", "--match", "identity", &pa, &pb]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = json_of(&r);
    assert_eq!(v["match"], "identity");
    // Reports of this build carry rule ids: checks are mapped through them.
    assert_eq!(v["checks_mapped_by"], "rule");
    assert_eq!(v["benchmark_changed"], false);
    assert_eq!(v["servers"].as_array().map(Vec::len), Some(1), "{v:#}");
    let s = &v["servers"][0];
    assert_eq!(s["old"]["identity"], s["new"]["identity"]);
    assert_eq!(
        s["old"]["identity"]["name"],
        a["servers"][0]["server_info"]["name"]
    );
    let mut got = entries(s);
    got.sort_by(|p, q| p.0.cmp(&q.0));
    assert_eq!(got, want);
    assert_eq!(s["unchanged"], va.len() - want.len());
    // Every changed leg carries both outcomes; at least one does here (10.1b).
    assert!(want.iter().any(|e| !e.4.is_empty()), "{want:?}");

    // The text names the pair, both endpoints, and each change with its legs.
    let r = d.run(["diff", "--match", "identity", &pa, &pb]);
    assert_eq!(r.code, 1, "{r:?}");
    for e in &want {
        let mut l = format!(
            "verdict    {}: {} -> {}",
            e.0.as_deref().unwrap_or_default(),
            e.2.as_deref().unwrap_or_default(),
            e.3.as_deref().unwrap_or_default()
        );
        // Mapped through rule ids, the line names the rule between verdicts and legs.
        let legs = e.4.first().map(|(leg, x, y)| {
            format!(
                "; legs {leg} {} -> {}",
                x.as_str().unwrap_or("absent"),
                y.as_str().unwrap_or("absent")
            )
        });
        l.push_str(" (rule ");
        assert!(
            r.stdout
                .lines()
                .any(|x| x.contains(&l) && legs.as_ref().is_none_or(|g| x.ends_with(g.as_str()))),
            "{l} … {legs:?}\n{r:?}"
        );
    }
    assert!(
        r.stdout
            .contains(a["servers"][0]["endpoint"].as_str().expect("e"))
            && r.stdout
                .contains(b["servers"][0]["endpoint"].as_str().expect("e")),
        "{r:?}"
    );

    // A report against itself: no change, exit 0.
    let r = d.run(["diff", &pa, &pa]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("no change"), "{r:?}");
}

#[test]
fn a_bundle_and_a_report_are_refused_and_so_is_a_file_that_is_neither() {
    let d = Dir::new();
    let report = d.write("r.json", &d.report(&["py2.mcpev"]));
    let bundle = example("py2.mcpev");
    for (old, new) in [(&report, &bundle), (&bundle, &report)] {
        let r = d.run(["diff", old.as_str(), new.as_str()]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(
            r.stderr.contains(&format!(
                "{report} is a JSON report but {bundle} is a bundle"
            )),
            "{r:?}"
        );
        assert!(r.stdout.is_empty(), "{r:?}");
    }
    // A JSON document of another schema (this command's own output) and a text file.
    let other = d.write(
        "diff.json",
        &json!({"schema": "mcp-grade-report-diff/1", "changed": false}),
    );
    let r = d.run(["diff", &report, &other]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stderr.contains(&format!("{other}: neither an evidence bundle nor a mcp-grade-report/1 JSON report: a JSON document (schema \"mcp-grade-report-diff/1\")")),
        "{r:?}"
    );
    let r = d.run(["diff", &example("README.md"), &report]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("README.md: neither"), "{r:?}");
    // A report with the right schema that lacks what diff reads.
    let broken = d.write("broken.json", &json!({"schema": "mcp-grade-report/1"}));
    let r = d.run(["diff", &report, &broken]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stderr.contains("cannot be read") && r.stderr.contains("servers"),
        "{r:?}"
    );
}

#[test]
fn two_bundles_of_one_server_on_two_ports_match_with_match_identity_only() {
    let d = Dir::new();
    let (a, b) = (example("py2.mcpev"), example("nostore.mcpev"));
    let trust = example("collector.pub");
    let r = d.run(["diff", &a, &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--match identity"), "{r:?}");
    let r = d.run([
        "diff", "--format", "json", "--match", "identity", "--trust", &trust, &a, &b,
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = json_of(&r);
    assert_eq!(v["schema"], "mcp-grade-diff/1");
    assert_eq!(v["match"], "identity");
    assert_eq!(v["endpoint"], Value::Null);
    let (ra, rb) = (d.report(&["py2.mcpev"]), d.report(&["nostore.mcpev"]));
    assert_eq!(v["old"]["endpoint"], ra["servers"][0]["endpoint"]);
    assert_eq!(v["new"]["endpoint"], rb["servers"][0]["endpoint"]);
    assert_eq!(
        v["identity"],
        json!({"name": ra["servers"][0]["server_info"]["name"], "transport": ra["servers"][0]["transport"]})
    );
    // The bundle diff's verdicts are the reports' verdicts that differ.
    let (va, vb) = (verdicts(&ra, 0), verdicts(&rb, 0));
    let want: BTreeSet<(String, String, String)> = va
        .iter()
        .filter(|(id, (x, _))| vb.get(*id).is_some_and(|(y, _)| x != y))
        .map(|(id, (x, _))| (id.clone(), x.clone(), vb[id].0.clone()))
        .collect();
    let got: BTreeSet<(String, String, String)> = v["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().expect("str").to_string();
            (s("check"), s("old"), s("new"))
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    // One bundle against itself under --match identity: no change.
    let r = d.run(["diff", "--match", "identity", &a, &a]);
    assert_eq!(r.code, 0, "{r:?}");
    // Two servers: refused, naming both identities; a bundle without a session has none.
    let r = d.run(["diff", "--match", "identity", &a, &example("py1.mcpev")]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("py-sdk-probe-target (streamable-http)")
            && r.stderr
                .contains("py-sdk-v1-probe-target (streamable-http)"),
        "{r:?}"
    );
    let r = d.run([
        "diff",
        "--match",
        "identity",
        &example("py2-auth.mcpev"),
        &example("py2-auth-login.mcpev"),
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no identity"), "{r:?}");
}

#[test]
fn servers_that_share_a_key_are_ambiguous_and_not_paired() {
    let d = Dir::new();
    let all: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("examples"))
        .expect("examples")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mcpev"))
        .collect();
    let names: Vec<&str> = all.iter().map(String::as_str).collect();
    let fleet = d.report(&names);
    let p = d.write("fleet.json", &fleet);
    for (by, key) in [
        (
            "endpoint",
            Box::new(|s: &Value| Some(s["endpoint"].to_string()))
                as Box<dyn Fn(&Value) -> Option<String>>,
        ),
        (
            "identity",
            Box::new(|s: &Value| {
                s["server_info"]["name"]
                    .as_str()
                    .map(|n| format!("{n} {}", s["transport"]))
            }),
        ),
    ] {
        let mut count: BTreeMap<Option<String>, usize> = BTreeMap::new();
        for s in fleet["servers"].as_array().expect("servers") {
            *count.entry(key(s)).or_default() += 1;
        }
        let paired: usize = count
            .iter()
            .filter(|(k, n)| k.is_some() && **n == 1)
            .count();
        let unpaired = fleet["servers"].as_array().map_or(0, Vec::len) - paired;
        assert!(unpaired > 0 && paired > 0, "{by}: {count:?}");
        let r = d.run(["diff", "--format", "json", "--match", by, &p, &p]);
        let v = json_of(&r);
        assert_eq!(v["servers"].as_array().map(Vec::len), Some(paired), "{by}");
        assert_eq!(
            v["only_old"].as_array().map(Vec::len),
            Some(unpaired),
            "{by}"
        );
        assert_eq!(
            v["only_new"].as_array().map(Vec::len),
            Some(unpaired),
            "{by}"
        );
        // Each paired server is compared with itself: nothing changed there.
        for s in v["servers"].as_array().expect("servers") {
            assert_eq!(s["verdicts"], json!([]), "{by}: {s:#}");
            assert_eq!(s["old"]["index"], s["new"]["index"], "{by}");
        }
        assert_eq!(r.code, 1, "{r:?}");
    }
}

/// The report `r` as a definition with rule ids would write it: each check gets a rule id
/// that is not its number, and params.
fn with_rules(r: &Value) -> Value {
    let mut r = r.clone();
    r["provenance"] = json!({"benchmark": {
        "id": "cis-mcp-server-1.0.0", "name": "CIS MCP Server Benchmark", "version": "1.0.0",
        "sha256": "11".repeat(32), "tailoring": null}});
    for c in r["checks"].as_array_mut().expect("checks") {
        let id = c["id"].as_str().expect("id").to_string();
        c["rule"] = json!(format!("rule-of-{}", id.replace('.', "-")));
        c["params"] = if id == "3.3.1" {
            json!({"max_token_lifetime_seconds": 3600})
        } else {
            json!({})
        };
    }
    r
}

fn without_rules(r: &Value) -> Value {
    let mut r = r.clone();
    for c in r["checks"].as_array_mut().expect("checks") {
        let c = c.as_object_mut().expect("check");
        c.remove("rule");
        c.remove("params");
    }
    r
}

fn check_mut<'a>(r: &'a mut Value, id: &str) -> &'a mut Value {
    r["checks"]
        .as_array_mut()
        .expect("checks")
        .iter_mut()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

/// The classes the diff gave each check, by `old id -> new id`.
fn classes(v: &Value) -> BTreeMap<(Option<String>, Option<String>), Vec<String>> {
    v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                (o(&c["old"]["id"]), o(&c["new"]["id"])),
                c["class"]
                    .as_array()
                    .expect("class")
                    .iter()
                    .map(|x| x.as_str().expect("class").to_string())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn checks_of_two_definitions_map_through_rule_ids() {
    let d = Dir::new();
    let real = d.report(&["py2.mcpev"]);
    let old = with_rules(&real);
    // The second definition: 1.1 renumbered 1.9 and 10.1 renumbered 11.1, 3.3.1's
    // lifetime 3600 -> 900, 2.5 dropped, 3.3.9 added (3.3.1's rule at 86400), and one
    // verdict changed (1.2 on this server, with a leg).
    let mut new = old.clone();
    new["provenance"]["benchmark"]["id"] = json!("test-fixture-two");
    new["provenance"]["benchmark"]["version"] = json!("2.0.0-test");
    new["provenance"]["benchmark"]["sha256"] = json!("22".repeat(32));
    check_mut(&mut new, "1.1")["id"] = json!("1.9");
    check_mut(&mut new, "10.1")["id"] = json!("11.1");
    check_mut(&mut new, "3.3.1")["params"] = json!({"max_token_lifetime_seconds": 900});
    let mut added = check_mut(&mut new, "3.3.1").clone();
    added["id"] = json!("3.3.9");
    added["params"] = json!({"max_token_lifetime_seconds": 86400});
    let dropped = check_mut(&mut new, "2.5").clone();
    new["checks"]
        .as_array_mut()
        .expect("checks")
        .retain(|c| c["id"] != "2.5");
    new["checks"]
        .as_array_mut()
        .expect("checks")
        .push(added.clone());
    let old_12 = old["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == "1.2")
        .expect("1.2")["results"][0]
        .clone();
    let flipped = if old_12["verdict"] == "PASS" {
        "FAIL"
    } else {
        "PASS"
    };
    {
        let r = &mut check_mut(&mut new, "1.2")["results"][0];
        r["verdict"] = json!(flipped);
        r["legs"]["1.2z"] = json!("fail");
    }
    let (po, pn) = (d.write("old.json", &old), d.write("new.json", &new));
    let r = d.run(["diff", "--format", "json", &po, &pn]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = json_of(&r);
    assert_eq!(v["checks_mapped_by"], "rule");
    assert_eq!(v["checks_note"], Value::Null);
    assert_eq!(v["benchmark_changed"], true);
    assert_eq!(v["old"]["benchmark"]["id"], "cis-mcp-server-1.0.0");
    assert_eq!(v["new"]["benchmark"]["id"], "test-fixture-two");

    let got = classes(&v);
    let n = real["checks"].as_array().map_or(0, Vec::len);
    assert_eq!(got.len(), n + 1, "every check of either side once: {got:?}");
    let id = so;
    let mut want: BTreeMap<(Option<String>, Option<String>), Vec<String>> = BTreeMap::new();
    for c in real["checks"].as_array().expect("checks") {
        let i = c["id"].as_str().expect("id");
        let (o, nw, class) = match i {
            "1.1" => (id(i), id("1.9"), "renumbered"),
            "10.1" => (id(i), id("11.1"), "renumbered"),
            "3.3.1" => (id(i), id(i), "params-changed"),
            "2.5" => (id(i), None, "removed"),
            _ => (id(i), id(i), "same"),
        };
        want.insert((o, nw), vec![class.to_string()]);
    }
    want.insert((None, id("3.3.9")), vec!["added".into()]);
    assert_eq!(got, want);
    // The added check names the rule it shares with 3.3.1, and the params on each side.
    let c = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["new"]["id"] == "3.3.1")
        .expect("3.3.1");
    assert_eq!(c["old"]["params"]["max_token_lifetime_seconds"], 3600);
    assert_eq!(c["new"]["params"]["max_token_lifetime_seconds"], 900);

    // Per server: the changed verdict with its leg, the added and the removed check with
    // their one verdict; the renumbered checks kept their verdicts and are not listed.
    let s = &v["servers"][0];
    type Four = (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let got: BTreeSet<Four> = entries(s)
        .into_iter()
        .map(|e| (e.0, e.1, e.2, e.3))
        .collect();
    let want: BTreeSet<Four> = [
        (id("1.2"), id("1.2"), o(&old_12["verdict"]), id(flipped)),
        (None, id("3.3.9"), None, o(&added["results"][0]["verdict"])),
        (id("2.5"), None, o(&dropped["results"][0]["verdict"]), None),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
    let e = entries(s);
    let legs = &e
        .iter()
        .find(|e| e.0.as_deref() == Some("1.2"))
        .expect("1.2")
        .4;
    assert!(
        legs.contains(&("1.2z".into(), Value::Null, json!("fail"))),
        "{legs:?}"
    );
    assert_eq!(s["unchanged"], n - 2);

    // The text: the benchmark change in the header, one line per non-same check.
    let r = d.run(["diff", &po, &pn]);
    assert_eq!(r.code, 1, "{r:?}");
    let header: Vec<&str> = r.stdout.lines().take(4).collect();
    assert!(
        header.iter().any(|l| l.starts_with("benchmark  DIFFERS")
            && l.contains("cis-mcp-server-1.0.0")
            && l.contains("test-fixture-two")),
        "{r:?}"
    );
    for l in [
        "~ 1.1 -> 1.9  renumbered (rule rule-of-1-1)",
        "~ 10.1 -> 11.1  renumbered (rule rule-of-10-1)",
        "~ 3.3.1  parameters changed (rule rule-of-3-3-1)",
        "params {\"max_token_lifetime_seconds\":3600} -> {\"max_token_lifetime_seconds\":900}",
        "+ 3.3.9  added (rule rule-of-3-3-1)",
        "- 2.5  removed (rule rule-of-2-5)",
        "checks     mapped through rule ids: ",
    ] {
        assert!(r.stdout.contains(l), "{l}\n{r:?}");
    }
}

#[test]
fn reports_without_rule_ids_match_by_check_id_and_say_so() {
    let d = Dir::new();
    // A report of an earlier build: no rule ids, no params.
    let real = without_rules(&d.report(&["py2.mcpev"]));
    let mut renumbered = with_rules(&real);
    check_mut(&mut renumbered, "1.1")["id"] = json!("1.9");
    let (po, pn) = (d.write("old.json", &real), d.write("new.json", &renumbered));
    let r = d.run(["diff", "--format", "json", &po, &pn]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = json_of(&r);
    assert_eq!(v["checks_mapped_by"], "id");
    assert!(
        v["checks_note"]
            .as_str()
            .is_some_and(|n| n.contains("OLD carries no rule ids")),
        "{v:#}"
    );
    // By id, the renumbered check is one removed and one added; every rule is null.
    let got = classes(&v);
    assert_eq!(got[&(so("1.1"), None)], ["removed"]);
    assert_eq!(got[&(None, so("1.9"))], ["added"]);
    assert_eq!(
        got.values().filter(|c| c.as_slice() == ["same"]).count(),
        real["checks"].as_array().map_or(0, Vec::len) - 1
    );
    assert!(v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .all(|c| c["rule"].is_null()));
    // The benchmark header changed (the new report names an id and a SHA-256).
    assert_eq!(v["benchmark_changed"], true);
    let r = d.run(["diff", &po, &pn]);
    assert!(
        r.stdout
            .contains("checks     matched by check id, not rule id (OLD carries no rule ids"),
        "{r:?}"
    );
}
