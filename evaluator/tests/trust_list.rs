//! `--trust-list FILE`: collector keys with periods and revocation, through the built
//! `mcp-grade` (verify, grading, show, diff). Bundles are signed with keys made here, with
//! the seal time they claim chosen, and stamped (when a case needs a proven time) with
//! real RFC 3161 tokens from `openssl ts -reply` and the lab's test PKI
//! (lab/tsa/make-certs.sh, support::tsa); one case collects a real lab server with
//! `mcp-collect --tsa` against lab/tsa/tsa.py.

mod support;

use std::path::{Path, PathBuf};

use coset::cbor::value::Value;
use mcp_probe_schema::testkit;
use mcp_probe_schema::tsp::TOKEN_LABEL;
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::SecretKey;
use serde_json::Value as Json;
use support::grade_run::{mcp_grade, Run};
use support::tsa::{openssl_token, pki, require_openssl};

const URL: &str = "http://127.0.0.1:8080/mcp";

fn micros(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .expect("an RFC 3339 time")
        .timestamp_micros()
}

fn rfc3339(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .expect("representable")
        .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

const DAY: i64 = 86_400_000_000;

/// A bundle of one tools/list exchange signed by `key`, claiming to have been sealed at
/// `finished` (microseconds), with an `openssl ts` token over its signature from the TSA
/// of `stamp_pki` when given (genTime: now).
fn sealed(key: &SecretKey, finished: i64, stamp_pki: Option<&Path>) -> Vec<u8> {
    let req = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let resp = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
    let record = testkit::http_record(&[leg::INVENTORY_TOOLS], URL, req, 200, resp.as_bytes());
    let mut ev = testkit::evidence(URL, vec![record]);
    ev.run.started_at = finished - 1_000_000;
    ev.run.finished_at = finished;
    let signed = mcp_probe_schema::seal::sign(&ev, &ev.records, key).expect("sign");
    let extra = match stamp_pki {
        Some(pki) => vec![(
            TOKEN_LABEL.to_string(),
            Value::Bytes(openssl_token(pki, signed.signature())),
        )],
        None => Vec::new(),
    };
    let mut out = Vec::new();
    signed
        .write(&ev.records, &extra, &mut out)
        .expect("write the bundle");
    out
}

/// A test directory: bundles, keys and trust lists are written into it.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        Case {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write");
        p.display().to_string()
    }

    /// A trust list of one key (PEM, as `mcp-collect --public-key` prints it) and the
    /// table's other lines.
    fn list(&self, name: &str, key: &SecretKey, rest: &str) -> String {
        self.write(
            name,
            format!(
                "# test keys\n[[key]]\npublic_key = '''\n{}'''\n{rest}",
                key.public().to_pem()
            ),
        )
    }

    fn grade<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Run {
        mcp_grade(self.dir.path(), Some(&self.path("home")), args)
    }
}

fn json_line(r: &Run) -> Json {
    serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {r:?}"))
}

#[test]
fn a_listed_key_is_judged_on_the_claimed_seal_time_without_a_timestamp() {
    let c = Case::new();
    let key = SecretKey::generate().expect("a key");
    let id = key.public().key_id();
    let claimed = micros("2025-06-01T12:00:00Z");
    let b = c.write("b.mcpev", sealed(&key, claimed, None));
    let inside = c.list(
        "inside.toml",
        &key,
        "name = \"ci 2025\"\nnot_before = 2025-01-01T00:00:00Z\nnot_after = \"2025-12-31T23:59:59Z\"\ncomment = \"yearly\"\n",
    );
    let ok = c.grade(&["verify", "--trust-list", &inside, &b]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(
        ok.stdout.trim_end().ends_with(&format!(
            "; no timestamp; key \"ci 2025\" ({id}), period from 2025-01-01T00:00:00Z to \
             2025-12-31T23:59:59Z, judged on claimed 2025-06-01T12:00:00Z, not proven"
        )),
        "{ok:?}"
    );
    let v = json_line(&c.grade(&["verify", "--json", "--trust-list", &inside, &b]));
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(
        v["key"],
        serde_json::json!({"source": "trust-list", "key_id": id, "name": "ci 2025",
            "not_before": "2025-01-01T00:00:00Z", "not_after": "2025-12-31T23:59:59Z",
            "revoked_at": null, "judged_on": "claimed", "time": "2025-06-01T12:00:00Z"})
    );
    // Without a trust list, the line has no key part and the JSON no `key`.
    let plain = c.grade(&["verify", "--json", &b]);
    assert!(json_line(&plain).get("key").is_none(), "{plain:?}");

    // A claimed time before the period, or after it: INVALID naming the key and period.
    for (rest, period) in [
        (
            "not_before = 2025-06-01T12:00:01Z\n",
            "may sign only from 2025-06-01T12:00:01Z;",
        ),
        (
            "not_after = 2025-06-01T11:59:59+00:00\n",
            "may sign only until 2025-06-01T11:59:59Z;",
        ),
    ] {
        let list = c.list("out.toml", &key, rest);
        let r = c.grade(&["verify", "--trust-list", &list, &b]);
        assert_eq!(r.code, 3, "{r:?}");
        assert!(
            r.stdout.starts_with(&format!("INVALID {b}: key {id} {period} this bundle was signed at 2025-06-01T12:00:00Z (its claimed seal time, not proven")),
            "{r:?}"
        );
        let v = json_line(&c.grade(&["verify", "--json", "--trust-list", &list, &b]));
        assert_eq!(
            (&v["valid"], &v["key"]),
            (&Json::Bool(false), &Json::Null),
            "{v}"
        );
        assert!(
            v["reason"].as_str().is_some_and(|s| s.contains(period)),
            "{v}"
        );
        // Grading handles it as a bundle --trust refuses: named, nothing graded, exit 3.
        let g = c.grade(&["--trust-list", &list, &b]);
        assert_eq!(g.code, 3, "{g:?}");
        assert!(g.stdout.is_empty(), "{g:?}");
        assert!(
            g.stderr
                .contains(&format!("mcp-grade: INVALID {b}: key {id} {period}")),
            "{g:?}"
        );
        assert!(g.stderr.contains("; not graded\n"), "{g:?}");
        assert!(
            g.stderr.contains("nothing graded: 1 input bundle(s)"),
            "{g:?}"
        );
        // With --baseline (every input verified first, then the baseline): the same.
        let g = c.grade(&["--trust-list", &list, "--baseline", &b, &b]);
        assert_eq!(g.code, 3, "{g:?}");
        assert!(
            g.stderr
                .contains(&format!("mcp-grade: INVALID {b}: key {id} {period}")),
            "{g:?}"
        );
        assert!(
            g.stderr.contains(&format!(
                "mcp-grade: INVALID --baseline {b}: key {id} {period}"
            )),
            "{g:?}"
        );
        // show: nothing shown, exit 3, as for an unpinned signer.
        let s = c.grade(&["show", "--trust-list", &list, &b]);
        assert_eq!(s.code, 3, "{s:?}");
        assert!(s.stdout.is_empty(), "{s:?}");
        assert!(
            s.stderr.contains(period) && s.stderr.contains("; nothing can be shown"),
            "{s:?}"
        );
        // diff: not compared, exit 3.
        let d = c.grade(&["diff", "--trust-list", &list, &b, &b]);
        assert_eq!(d.code, 3, "{d:?}");
        assert!(d.stderr.contains(period), "{d:?}");
    }
    // The bundle in its period is graded, shown and compared.
    let g = c.grade(&["--format", "json", "-q", "--trust-list", &inside, &b]);
    let report: Json = serde_json::from_str(&g.stdout).unwrap_or_else(|e| panic!("{e}: {g:?}"));
    assert_eq!(report["servers"].as_array().map(Vec::len), Some(1), "{g:?}");
    let s = c.grade(&["show", "--trust-list", &inside, &b]);
    assert_eq!(s.code, 0, "{s:?}");
    assert!(s.stdout.contains(URL), "{s:?}");
    let d = c.grade(&["diff", "--trust-list", &inside, &b, &b]);
    assert_eq!(d.code, 0, "{d:?}");
}

#[test]
fn an_unlisted_signer_is_refused_before_its_payload_is_decoded_and_pins_still_count() {
    let c = Case::new();
    let (listed, other) = (
        SecretKey::generate().expect("a key"),
        SecretKey::generate().expect("a key"),
    );
    let list = c.list("list.toml", &listed, "name = \"listed\"\n");
    // Signed by `other`, with a payload no decoder accepts (an empty map): without a
    // list it is decoded and refused as malformed; with the list it never is.
    let malformed = c.write(
        "malformed.mcpev",
        testkit::sign_raw(
            &other,
            &testkit::protected_header(&other),
            &testkit::unprotected_header(&other),
            &[0xa0],
        ),
    );
    let r = c.grade(&["verify", &malformed]);
    assert!(r.stdout.contains("signed but malformed"), "{r:?}");
    let r = c.grade(&["verify", "--trust-list", &list, &malformed]);
    assert_eq!(r.code, 3, "{r:?}");
    assert_eq!(
        r.stdout,
        format!(
            "INVALID {malformed}: signer {} is not trusted (not in --trust-list {list})\n",
            other.public().key_id()
        )
    );
    let s = c.grade(&["show", "--trust-list", &list, &malformed]);
    assert_eq!(s.code, 3, "{s:?}");
    assert!(
        s.stderr.contains("is not trusted (not in --trust-list"),
        "{s:?}"
    );

    // A --trust pin the list does not name is trusted without a period, and says so.
    let pub_other = c.write("other.pub", other.public().to_pem());
    let b = c.write(
        "b.mcpev",
        sealed(&other, micros("2025-06-01T12:00:00Z"), None),
    );
    let r = c.grade(&["verify", "--trust", &pub_other, "--trust-list", &list, &b]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.trim_end().ends_with(&format!(
            "; key {} pinned by --trust (no period)",
            other.public().key_id()
        )),
        "{r:?}"
    );
    let v = json_line(&c.grade(&[
        "verify",
        "--json",
        "--trust",
        &pub_other,
        "--trust-list",
        &list,
        &b,
    ]));
    assert_eq!(v["key"]["source"], "trust", "{v}");
    assert_eq!(v["key"]["judged_on"], Json::Null, "{v}");
    let r = c.grade(&["verify", "--trust-list", &list, &b]);
    assert_eq!(r.code, 3, "{r:?}");
    let unlisted = format!(
        "signer {} is not trusted (not in --trust-list {list})",
        other.public().key_id()
    );
    assert!(r.stdout.contains(&unlisted), "{r:?}");
    let g = c.grade(&["--trust-list", &list, &b]);
    assert_eq!(g.code, 3, "{g:?}");
    assert!(g.stderr.contains(&unlisted), "{g:?}");
    // With pins too, the message names both.
    let pub_listed = c.write("listed.pub", listed.public().to_pem());
    let r = c.grade(&["verify", "--trust", &pub_listed, "--trust-list", &list, &b]);
    assert!(
        r.stdout
            .contains("is not trusted (not among the --trust keys nor in --trust-list"),
        "{r:?}"
    );
    // A key both pinned and listed is judged by its list entry: revoked, it is refused
    // even though --trust names it.
    let revoked = c.list(
        "revoked.toml",
        &other,
        "revoked_at = 2030-01-01T00:00:00Z\n",
    );
    let r = c.grade(&[
        "verify",
        "--trust",
        &pub_other,
        "--trust-list",
        &revoked,
        &b,
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stdout.contains("was revoked at 2030-01-01T00:00:00Z"),
        "{r:?}"
    );
}

#[test]
fn a_revoked_key_counts_only_with_a_verified_timestamp_before_the_revocation() {
    if require_openssl().is_none() {
        return;
    }
    let c = Case::new();
    let pki = pki(c.dir.path(), "p256", "sha256");
    let ca = pki.join("ca.pem").display().to_string();
    let key = SecretKey::generate().expect("a key");
    let id = key.public().key_id();
    let long_ago = micros("2020-01-01T00:00:00Z");
    let start = now();
    let unstamped = c.write("unstamped.mcpev", sealed(&key, long_ago, None));
    let stamped = c.write("stamped.mcpev", sealed(&key, long_ago, Some(&pki)));

    // The stamped bundle's genTime, as verify reports it.
    let any = c.list("any.toml", &key, "");
    let v = json_line(&c.grade(&[
        "verify",
        "--json",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &any,
        &stamped,
    ]));
    assert_eq!(v["key"]["judged_on"], "timestamp", "{v}");
    let gen_time = v["timestamp"]["gen_time"]
        .as_str()
        .expect("genTime")
        .to_string();
    assert_eq!(v["key"]["time"], gen_time.as_str(), "{v}");
    let g = micros(&gen_time);
    assert!(g + 2_000_000 >= start && g <= now(), "{gen_time}");

    // Revoked one second after genTime: the stamped bundle counts (on the timestamp),
    // the unstamped one never does, however early it claims to have been sealed.
    let after = rfc3339(g + 1_000_000);
    let list = c.list(
        "after.toml",
        &key,
        &format!("name = \"leaked\"\nrevoked_at = {after}\n"),
    );
    let ok = c.grade(&["verify", "--tsa-cert", &ca, "--trust-list", &list, &stamped]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(
        ok.stdout.trim_end().ends_with(&format!(
            "key \"leaked\" ({id}), period at any time, revoked at {after}, judged on timestamp {gen_time}"
        )),
        "{ok:?}"
    );
    let r = c.grade(&[
        "verify",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &list,
        &unstamped,
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "key \"leaked\" ({id}) was revoked at {after} (compromised from then on): only a verified RFC 3161 timestamp before that"
        )) && r.stdout.contains("this bundle has none (no timestamp); its claimed seal time 2020-01-01T00:00:00Z is not proof"),
        "{r:?}"
    );
    // Grading: with the TSA's root the stamped bundle is graded; without it its token
    // does not chain, so nothing proves its time and it is refused.
    let graded = c.grade(&[
        "--format",
        "json",
        "-q",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &list,
        &stamped,
    ]);
    let report: Json =
        serde_json::from_str(&graded.stdout).unwrap_or_else(|e| panic!("{e}: {graded:?}"));
    assert_eq!(
        report["servers"][0]["timestamp"]["state"], "valid",
        "{graded:?}"
    );
    let refused = c.grade(&["--trust-list", &list, &stamped]);
    assert_eq!(refused.code, 3, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("this bundle has none (its token does not verify: timestamp chain: "),
        "{refused:?}"
    );
    // show and diff read the timestamp the same way.
    let s = c.grade(&["show", "--tsa-cert", &ca, "--trust-list", &list, &stamped]);
    assert_eq!(s.code, 0, "{s:?}");
    let s = c.grade(&["show", "--trust-list", &list, &stamped]);
    assert_eq!(s.code, 3, "{s:?}");
    assert!(s.stderr.contains("; nothing can be shown"), "{s:?}");
    let d = c.grade(&[
        "diff",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &list,
        &stamped,
        &stamped,
    ]);
    assert_eq!(d.code, 0, "{d:?}");

    // Revoked at genTime itself, or before it: the stamp does not come before the
    // revocation.
    for at in [g, g - DAY] {
        let list = c.list(
            "before.toml",
            &key,
            &format!("revoked_at = \"{}\"\n", rfc3339(at)),
        );
        let r = c.grade(&["verify", "--tsa-cert", &ca, "--trust-list", &list, &stamped]);
        assert_eq!(r.code, 3, "{r:?}");
        assert!(
            r.stdout.contains(&format!(
                "was revoked at {} (compromised from then on), and this bundle's timestamp is {gen_time}, not before the revocation",
                rfc3339(at)
            )),
            "{r:?}"
        );
    }
}

#[test]
fn a_verified_timestamp_outweighs_the_claimed_time_for_the_period() {
    if require_openssl().is_none() {
        return;
    }
    let c = Case::new();
    let pki = pki(c.dir.path(), "rsa", "sha256");
    let ca = pki.join("ca.pem").display().to_string();
    let key = SecretKey::generate().expect("a key");
    let claimed = micros("2020-06-01T00:00:00Z");
    let stamped = c.write("stamped.mcpev", sealed(&key, claimed, Some(&pki)));
    // The claim lies in 2020's period, the timestamp (now) does not: INVALID on the
    // timestamp.
    let y2020 = c.list(
        "2020.toml",
        &key,
        "not_before = 2020-01-01T00:00:00Z\nnot_after = 2020-12-31T23:59:59Z\n",
    );
    let r = c.grade(&[
        "verify",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &y2020,
        &stamped,
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stdout.contains("may sign only from 2020-01-01T00:00:00Z to 2020-12-31T23:59:59Z; this bundle was signed at ")
            && r.stdout.contains("(its verified timestamp)"),
        "{r:?}"
    );
    // The timestamp lies in a period around now, the claim does not: OK on the
    // timestamp.
    let current = c.list(
        "now.toml",
        &key,
        &format!(
            "not_before = {}\nnot_after = {}\n",
            rfc3339(now() - DAY),
            rfc3339(now() + DAY)
        ),
    );
    let r = c.grade(&[
        "verify",
        "--json",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &current,
        &stamped,
    ]);
    let v = json_line(&r);
    assert_eq!(
        (&v["valid"], &v["key"]["judged_on"]),
        (&Json::Bool(true), &Json::from("timestamp")),
        "{r:?}"
    );
    // Graded without the TSA's root, the token proves nothing and the claim is judged:
    // outside the period.
    let g = c.grade(&["--trust-list", &current, &stamped]);
    assert_eq!(g.code, 3, "{g:?}");
    assert!(
        g.stderr.contains(
            "this bundle was signed at 2020-06-01T00:00:00Z (its claimed seal time, not proven"
        ),
        "{g:?}"
    );
}

#[test]
fn unusable_trust_lists_are_one_line_usage_errors_before_any_bundle() {
    let c = Case::new();
    let key = SecretKey::generate().expect("a key");
    let b = c.write(
        "b.mcpev",
        sealed(&key, micros("2025-06-01T12:00:00Z"), None),
    );
    let hex = hex::encode(key.public().to_bytes());
    let head = format!("[[key]]\npublic_key = \"{hex}\"\n");
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "unknown field",
            format!("{head}not_befor = 2025-01-01T00:00:00Z\n").into_bytes(),
            "line 3: unknown field `not_befor`".into(),
        ),
        (
            "bad time",
            format!("{head}not_after = \"tomorrow\"\n").into_bytes(),
            "line 3: not_after \"tomorrow\" is not an RFC 3339 time".into(),
        ),
        (
            "no offset",
            format!("{head}\nrevoked_at = 2025-01-01T00:00:00\n").into_bytes(),
            "line 4: revoked_at 2025-01-01T00:00:00 is not an RFC 3339 time".into(),
        ),
        (
            "a date",
            format!("{head}not_before = 2025-01-01\n").into_bytes(),
            "line 3: not_before 2025-01-01 is not an RFC 3339 time".into(),
        ),
        (
            "twice",
            format!(
                "{head}\n[[key]]\npublic_key = '''\n{}'''\n",
                key.public().to_pem()
            )
            .into_bytes(),
            format!(
                "line 4: key {} is listed twice (first at line 1)",
                key.public().key_id()
            ),
        ),
        (
            "period reversed",
            format!("{head}not_before = 2025-06-01T00:00:00Z\nnot_after = 2025-05-31T23:59:59Z\n")
                .into_bytes(),
            "line 4: key".into(),
        ),
        (
            "bad key",
            b"[[key]]\npublic_key = \"00\"\n".to_vec(),
            "line 2: public_key is not an Ed25519 public key".into(),
        ),
        (
            "no key",
            b"# nothing yet\n".to_vec(),
            "line 1: no [[key]] table".into(),
        ),
        (
            "missing public_key",
            b"[[key]]\nname = \"x\"\n".to_vec(),
            "line 1: missing field `public_key`".into(),
        ),
        (
            "TOML",
            format!("{head}name = \"unclosed\n").into_bytes(),
            "line 3: ".into(),
        ),
        (
            "not UTF-8",
            b"[[key]]\npublic_key = \"\xff\"\n".to_vec(),
            "line 1: not UTF-8".into(),
        ),
    ];
    for (what, bytes, expected) in cases {
        let list = c.write("bad.toml", &bytes);
        for args in [
            vec!["verify", "--trust-list", &list, &b],
            vec!["verify", "--json", "--trust-list", &list, &b],
            vec!["--trust-list", &list, &b],
            vec!["show", "--trust-list", &list, &b],
            vec!["diff", "--trust-list", &list, &b, &b],
        ] {
            let r = c.grade(&args);
            assert_eq!(r.code, 2, "{what}: {args:?}: {r:?}");
            // Nothing about the bundle: it was never read.
            assert!(r.stdout.is_empty(), "{what}: {r:?}");
            assert_eq!(r.stderr.lines().count(), 1, "{what}: {r:?}");
            let prefix = format!("mcp-grade: --trust-list {list}: ");
            assert!(
                r.stderr.starts_with(&prefix) && r.stderr.contains(&expected),
                "{what}: expected {prefix}…{expected}…: {r:?}"
            );
        }
    }
    let missing = c.path("missing.toml").display().to_string();
    let r = c.grade(&["verify", "--trust-list", &missing, &b]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("--trust-list {missing}: cannot read it: ")),
        "{r:?}"
    );
}

/// End to end: a real lab server collected with `mcp-collect --tsa` (lab/tsa/tsa.py), the
/// collector's own key listed as revoked one second after the token's genTime, then at
/// it.
#[test]
fn a_collected_stamped_bundle_of_a_revoked_key_counts_until_its_revocation() {
    let Some((url, bin)) = support::lab::require_one("LAB_PY2") else {
        return;
    };
    let c = Case::new();
    let pki = pki(c.dir.path(), "rsa", "sha256");
    let ca = pki.join("ca.pem").display().to_string();
    let tsa = support::tsa::Tsa::start(&pki);
    let home = c.path("collector-home");
    let out = std::process::Command::new(&bin)
        .env("MCP_PROBE_HOME", &home)
        .env_remove("HOME")
        .args(["--timeout", "5", "-o"])
        .arg(c.path("out"))
        .args(["--tsa", &tsa.url("/tsa"), &url])
        .output()
        .expect("run mcp-collect");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bundle = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_else(|| panic!("no bundle path: {stderr}"))
        .to_string();
    // The key auditors list: what `mcp-collect --public-key` prints.
    let public = std::process::Command::new(&bin)
        .env("MCP_PROBE_HOME", &home)
        .env_remove("HOME")
        .arg("--public-key")
        .output()
        .expect("mcp-collect --public-key");
    assert!(public.status.success());
    let pem = String::from_utf8(public.stdout).expect("PEM");
    let any = c.write("any.toml", format!("[[key]]\npublic_key = '''\n{pem}'''\n"));
    let v = json_line(&c.grade(&[
        "verify",
        "--json",
        "--tsa-cert",
        &ca,
        "--trust-list",
        &any,
        &bundle,
    ]));
    assert_eq!(v["timestamp"]["state"], "valid", "{v}");
    let gen_time = v["timestamp"]["gen_time"]
        .as_str()
        .expect("genTime")
        .to_string();
    let g = micros(&gen_time);
    let revoked = |at: i64| {
        c.write(
            "revoked.toml",
            format!(
                "[[key]]\nname = \"jump host\"\npublic_key = '''\n{pem}'''\nrevoked_at = {}\n",
                rfc3339(at)
            ),
        )
    };
    let list = revoked(g + 1_000_000);
    let ok = c.grade(&["verify", "--tsa-cert", &ca, "--trust-list", &list, &bundle]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(
        ok.stdout
            .contains(&format!("judged on timestamp {gen_time}")),
        "{ok:?}"
    );
    let graded = c.grade(&["-q", "--tsa-cert", &ca, "--trust-list", &list, &bundle]);
    assert!(![2, 3].contains(&graded.code), "{graded:?}");
    let list = revoked(g);
    let r = c.grade(&["verify", "--tsa-cert", &ca, "--trust-list", &list, &bundle]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stdout.contains("not before the revocation"), "{r:?}");
    let graded = c.grade(&["-q", "--tsa-cert", &ca, "--trust-list", &list, &bundle]);
    assert_eq!(graded.code, 3, "{graded:?}");
}
