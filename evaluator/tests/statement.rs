//! `mcp-grade --attest` and `mcp-grade verify-statement`: a statement written and
//! verified by the binary, with the report on stdout or in a file; altered statements,
//! another key, a file that is no subject and malformed JSON refused with exit 3;
//! unreadable inputs exit 2.

mod support;

use std::path::{Path, PathBuf};

use base64::Engine;
use support::grade_run::mcp_grade;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn example(name: &str) -> String {
    format!("{ROOT}/examples/{name}")
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

struct Attested {
    tmp: tempfile::TempDir,
    statement: PathBuf,
    report: PathBuf,
    public: PathBuf,
}

fn attest() -> Attested {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let statement = tmp.path().join("statement.json");
    let report = tmp.path().join("report.json");
    let run = mcp_grade(
        tmp.path(),
        Some(&home),
        [
            "--format",
            "json",
            "-o",
            report.to_str().expect("utf-8"),
            "--attest",
            statement.to_str().expect("utf-8"),
            "--trust",
            &example("collector.pub"),
            &example("py2.mcpev"),
            &example("ts2.mcpev"),
        ],
    );
    assert!(matches!(run.code, 0 | 1 | 4), "{run:?}");
    assert!(run.stderr.contains("created the grader key"), "{run:?}");
    let public = home.join("keys").join("grader.pub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let key = home.join("keys").join("grader.key");
        let mode = std::fs::metadata(&key).expect("key").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    Attested {
        tmp,
        statement,
        report,
        public,
    }
}

fn verify(a: &Attested, statement: &Path, files: &[&str]) -> support::grade_run::Run {
    let mut args = vec![
        "verify-statement".to_string(),
        statement.display().to_string(),
        "--trust".into(),
        a.public.display().to_string(),
    ];
    args.extend(files.iter().map(|s| s.to_string()));
    mcp_grade(a.tmp.path(), None, args)
}

fn envelope(a: &Attested) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(&a.statement).expect("statement")).expect("json")
}

fn payload(env: &serde_json::Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(env["payload"].as_str().expect("payload"))
        .expect("base64")
}

fn written(a: &Attested, name: &str, env: &serde_json::Value) -> PathBuf {
    let p = a.tmp.path().join(name);
    std::fs::write(&p, serde_json::to_vec(env).expect("json")).expect("write");
    p
}

#[test]
fn a_statement_binds_the_report_and_the_bundles_and_verifies() {
    let a = attest();
    let env = envelope(&a);
    assert_eq!(env["payloadType"], "application/vnd.in-toto+json");
    let st: serde_json::Value = serde_json::from_slice(&payload(&env)).expect("statement");
    assert_eq!(st["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(st["predicateType"], "https://mcp-probe.dev/grading/v1");
    let digests: Vec<&str> = st["subject"]
        .as_array()
        .expect("subjects")
        .iter()
        .map(|s| s["digest"]["sha256"].as_str().expect("sha256"))
        .collect();
    let report = std::fs::read(&a.report).expect("report");
    assert_eq!(
        digests,
        [
            sha256(&std::fs::read(example("py2.mcpev")).expect("bundle")),
            sha256(&std::fs::read(example("ts2.mcpev")).expect("bundle")),
            sha256(&report),
        ]
    );
    let p = &st["predicate"];
    let r: serde_json::Value = serde_json::from_slice(&report).expect("report json");
    assert_eq!(p["totals"], r["totals"]);
    assert_eq!(
        p["benchmark"]["sha256"],
        r["provenance"]["benchmark"]["sha256"]
    );
    assert_eq!(p["grader"], r["provenance"]["grader"]);
    assert_eq!(p["report"]["format"], "json");
    let schema: serde_json::Value = serde_json::from_slice(
        &std::fs::read(format!("{ROOT}/docs/schemas/grading-predicate.schema.json"))
            .expect("schema"),
    )
    .expect("json");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v.iter_errors(p).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The key id: hex SHA-256 of the raw public key.
    let public =
        mcp_probe_schema::PublicKey::parse(&std::fs::read(&a.public).expect("pub")).expect("key");
    assert_eq!(env["signatures"][0]["keyid"], sha256(&public.to_bytes()));

    let run = verify(
        &a,
        &a.statement,
        &[&example("py2.mcpev"), a.report.to_str().expect("utf-8")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.lines().count(), 3, "{run:?}");
    assert!(run.stdout.starts_with("OK "), "{run:?}");
}

#[test]
fn a_report_on_stdout_is_bound_by_the_bytes_written() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let run = mcp_grade(
        tmp.path(),
        Some(&home),
        [
            "--format",
            "markdown",
            "--attest",
            "s.json",
            "--trust",
            &example("collector.pub"),
            &example("py2.mcpev"),
        ],
    );
    assert!(matches!(run.code, 0 | 1 | 4), "{run:?}");
    std::fs::write(tmp.path().join("stdout.md"), &run.stdout).expect("write");
    let run = mcp_grade(
        tmp.path(),
        None,
        [
            "verify-statement",
            "s.json",
            "stdout.md",
            "--trust",
            home.join("keys/grader.pub").to_str().expect("utf-8"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("is subject -"), "{run:?}");
}

#[test]
fn altered_statements_and_files_are_refused() {
    let a = attest();
    let env = envelope(&a);
    let b64 = base64::engine::general_purpose::STANDARD;

    // A payload byte flipped.
    let mut p = payload(&env);
    p[40] ^= 1;
    let mut e = env.clone();
    e["payload"] = b64.encode(&p).into();
    let run = verify(&a, &written(&a, "payload.json", &e), &[]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("does not verify"), "{run:?}");

    // A signature byte flipped.
    let mut s = b64
        .decode(env["signatures"][0]["sig"].as_str().expect("sig"))
        .expect("base64");
    s[0] ^= 1;
    let mut e = env.clone();
    e["signatures"][0]["sig"] = b64.encode(&s).into();
    let run = verify(&a, &written(&a, "sig.json", &e), &[]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("does not verify"), "{run:?}");

    // A subject digest changed (the statement re-encoded, the signature kept).
    let mut st: serde_json::Value = serde_json::from_slice(&payload(&env)).expect("statement");
    st["subject"][0]["digest"]["sha256"] = "00".repeat(32).into();
    let mut e = env.clone();
    e["payload"] = b64.encode(serde_json::to_vec(&st).expect("json")).into();
    let run = verify(&a, &written(&a, "subject.json", &e), &[]);
    assert_eq!(run.code, 3, "{run:?}");

    // Another key trusted.
    let run = mcp_grade(
        a.tmp.path(),
        None,
        [
            "verify-statement",
            a.statement.to_str().expect("utf-8"),
            "--trust",
            &example("collector.pub"),
        ],
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("not a --trust key"), "{run:?}");

    // A report changed after it was written: not a subject.
    let mut report = std::fs::read(&a.report).expect("report");
    report.push(b'\n');
    std::fs::write(&a.report, report).expect("write");
    let run = verify(&a, &a.statement, &[a.report.to_str().expect("utf-8")]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("is not a subject"), "{run:?}");

    // Malformed JSON.
    let bad = a.tmp.path().join("bad.json");
    std::fs::write(&bad, b"{\"payloadType\":").expect("write");
    let run = verify(&a, &bad, &[]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("malformed JSON"), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");

    // Unreadable: exit 2.
    let run = verify(&a, &a.tmp.path().join("absent.json"), &[]);
    assert_eq!(run.code, 2, "{run:?}");
    let run = verify(&a, &a.statement, &["absent.mcpev"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn an_unusable_attest_key_stops_the_run_before_grading() {
    let tmp = tempfile::tempdir().expect("tmp");
    let run = mcp_grade(
        tmp.path(),
        Some(&tmp.path().join("home")),
        [
            "--attest",
            "s.json",
            "--attest-key",
            "absent.key",
            "--trust",
            &example("collector.pub"),
            &example("py2.mcpev"),
        ],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("absent.key"), "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(!tmp.path().join("s.json").exists());
}
