//! The real `mcp-grade` binary on bundles built with the schema's test kit.

mod support;

use support::grade_run;

use support::build_id;

use std::path::{Path, PathBuf};

use coset::{CoseSign1, TaggedCborSerializable};
use grade_run::{mcp_grade, Run};
use mcp_probe_schema::bundle::{CONTENT_TYPE, PUBLIC_KEY_LABEL};
use mcp_probe_schema::model::*;
use mcp_probe_schema::testkit::{body, evidence, http_record, sample_bundle, test_key};
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::{open, seal};
use serde_json::Value;

const URL: &str = "http://127.0.0.1:8080/mcp";

fn grade<I, S>(dir: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    mcp_grade(dir, None, args)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

fn find_unique(hay: &[u8], needle: &[u8]) -> usize {
    let hits: Vec<usize> = hay
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "{:?}", String::from_utf8_lossy(needle));
    hits[0]
}

fn flipped(bytes: &[u8], at: usize) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] ^= 0x01;
    b
}

fn with_response(mut r: Record, f: impl FnOnce(&mut HttpResponse)) -> Record {
    if let Observation::Http(x) = &mut r.observation {
        if let HttpOutcome::Response(resp) = &mut x.outcome {
            f(resp);
        }
    }
    r
}

/// A session with two pages of tools (the second as SSE), a skipped prompts leg, a
/// transport error, a TLS handshake and a DNS lookup.
fn inventory_records() -> Vec<Record> {
    let init = http_record(
        &[leg::ENDPOINT_DETECT, leg::SESSION_INITIALIZE],
        URL,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        200,
        br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"lab","version":"1"}}}"#,
    );
    let page1 = http_record(
        &[leg::INVENTORY_TOOLS],
        URL,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        200,
        br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"alpha"},{"name":"beta"}],"nextCursor":"c2"}}"#,
    );
    let page2 = with_response(
        http_record(
            &[leg::INVENTORY_TOOLS],
            URL,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c2"}}"#,
            200,
            b"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"gamma\"}]}}\r\n\r\n",
        ),
        |resp| resp.headers = vec![Header::new("Content-Type", "text/event-stream")],
    );
    let mut skipped = http_record(&[leg::INVENTORY_PROMPTS], URL, "{}", 200, b"");
    skipped.observation = Observation::Skipped {
        reason: "the server declared no prompts capability".into(),
    };
    let mut failed = http_record(
        &[leg::ORIGIN_HOSTILE],
        URL,
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
        0,
        b"",
    );
    if let Observation::Http(x) = &mut failed.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::Timeout,
            message: "no response head within 30 s".into(),
        });
    }
    let mut tls = http_record(&[leg::TLS_MODERN], URL, "{}", 200, b"");
    tls.observation = Observation::Tls(mcp_probe_schema::testkit::tls_handshake(
        "mcp.example",
        &[0x30, 0x03, 0x02, 0x01, 0x01],
        vec![
            TrustCheck {
                store: "bundled".into(),
                ok: false,
                error: Some("UnknownIssuer".into()),
            },
            TrustCheck {
                store: "os".into(),
                ok: true,
                error: None,
            },
        ],
        None,
    ));
    let mut dns = http_record(&[leg::DNS], URL, "{}", 200, b"");
    dns.observation = Observation::Dns(DnsLookup {
        host: "mcp.example".into(),
        addresses: vec!["127.0.0.1:443".into()],
        error: None,
    });
    vec![dns, tls, init, page1, page2, skipped, failed]
}

fn inventory_bundle() -> Vec<u8> {
    seal(&evidence(URL, inventory_records()), &test_key(1))
}

/// The public key beside the example bundles (a PEM file that is not a bundle).
fn example_key() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/collector.pub"
    ))
    .expect("examples/collector.pub")
}

fn sample() -> Vec<u8> {
    sample_bundle(&test_key(1), 3, 200)
}

#[test]
fn verify_ok_prints_the_facts_and_exits_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.mcpev", &sample());
    let r = grade(dir.path(), ["verify", "a.mcpev"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let kid = test_key(1).public().key_id();
    assert_eq!(
        r.stdout,
        format!(
            "OK a.mcpev: signer {kid}, collected 2025-11-30T05:20:00Z, target {URL}, endpoint {URL}, status complete, 3 records; no timestamp\n"
        )
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn verify_endpoint_none_and_other_statuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut ev = evidence(URL, Vec::new());
    ev.target.endpoint = None;
    ev.session = None;
    ev.run.status = RunStatus::Failed;
    ev.run.failure = Some("no MCP endpoint".into());
    write(dir.path(), "f.mcpev", &seal(&ev, &test_key(1)));
    let r = grade(dir.path(), ["verify", "f.mcpev"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .contains("endpoint (none), status failed, 0 records"),
        "{}",
        r.stdout
    );
}

/// What any byte altered inside the signed payload reads as: the signature is checked
/// before anything in the payload is decoded.
const DAMAGED: &str = "signature invalid: the bundle was altered or damaged after signing";

#[test]
fn every_tampered_region_exits_3_naming_the_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut ev = open(&sample(), &[]).expect("valid").evidence;
    ev.target.as_typed = "mcp.cli-target.example".into();
    let bytes = seal(&ev, &test_key(1));
    let sign1 = CoseSign1::from_tagged_slice(&bytes).expect("cose");
    let pk = test_key(1).public().to_bytes();
    let cases: Vec<(&str, usize, &str)> = vec![
        (
            "protected",
            find_unique(&bytes, CONTENT_TYPE.as_bytes()) + 2,
            "malformed header: the content type",
        ),
        (
            "public-key",
            find_unique(&bytes, &pk) + 4,
            "malformed header",
        ),
        (
            "key-label",
            find_unique(&bytes, PUBLIC_KEY_LABEL.as_bytes()) + 1,
            "no signer public key",
        ),
        (
            "target",
            find_unique(&bytes, b"mcp.cli-target.example") + 4,
            DAMAGED,
        ),
        (
            "run-id",
            find_unique(&bytes, ev.run.run_id.as_bytes()) + 4,
            DAMAGED,
        ),
        (
            "record0",
            find_unique(&bytes, br#""t0","description""#) + 1,
            DAMAGED,
        ),
        (
            "collector",
            find_unique(&bytes, b"0.0.0-test") + 2,
            "signature invalid",
        ),
        (
            "record1",
            find_unique(&bytes, br#""t1","description""#) + 1,
            DAMAGED,
        ),
        (
            "record2",
            find_unique(&bytes, br#""t2","description""#) + 1,
            DAMAGED,
        ),
        ("chain-head", find_unique(&bytes, &ev.chain_head), DAMAGED),
        (
            "signature",
            find_unique(&bytes, &sign1.signature) + 17,
            "signature invalid",
        ),
    ];
    for (name, at, want) in cases {
        let file = format!("{name}.mcpev");
        write(dir.path(), &file, &flipped(&bytes, at));
        let r = grade(dir.path(), ["verify", &file]);
        assert_eq!(r.code, 3, "{name}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.starts_with(&format!("INVALID {file}: ")),
            "{name}: {}",
            r.stdout
        );
        assert!(
            r.stdout.contains(want),
            "{name}: wanted {want:?} in {}",
            r.stdout
        );
        assert_eq!(r.stdout.lines().count(), 1, "{name}: {}", r.stdout);
    }
}

#[test]
fn truncated_and_not_a_bundle_exit_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = sample();
    write(dir.path(), "t.mcpev", &bytes[..bytes.len() / 2]);
    write(dir.path(), "notes.txt", b"these are my notes\n");
    write(dir.path(), "empty.mcpev", b"");
    let r = grade(dir.path(), ["verify", "t.mcpev"]);
    assert_eq!(r.code, 3);
    assert_eq!(
        r.stdout,
        "INVALID t.mcpev: truncated: the file ends inside the bundle structure\n"
    );
    let r = grade(dir.path(), ["verify", "notes.txt"]);
    assert_eq!(r.code, 3);
    assert!(
        r.stdout.starts_with("INVALID notes.txt: not a bundle"),
        "{}",
        r.stdout
    );
    let r = grade(dir.path(), ["verify", "empty.mcpev"]);
    assert_eq!(r.code, 3);
    assert_eq!(r.stdout, "INVALID empty.mcpev: not a bundle: empty file\n");
}

/// A key, a report or a README given as a bundle is named by what it is, not
/// called damaged ("trailing data" was the reading of its first byte as CBOR).
#[test]
fn a_key_or_a_report_given_as_a_bundle_is_named_by_what_it_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = example_key();
    write(dir.path(), "collector.pub", &key);
    write(
        dir.path(),
        "report.json",
        br#"{"schema":"mcp-grade-report/1","servers":[]}"#,
    );
    let r = grade(dir.path(), ["verify", "collector.pub", "report.json"]);
    assert_eq!(r.code, 3);
    assert_eq!(
        r.stdout,
        "INVALID collector.pub: not a bundle: a PEM file (PUBLIC KEY) (a public key: give it to --trust)\n\
         INVALID report.json: not a bundle: a JSON document (schema \"mcp-grade-report/1\")\n"
    );
    assert!(!r.stdout.contains("damaged") && !r.stdout.contains("trailing"));
}

/// `mcp-grade examples/*`: the key and README beside the bundles are skipped with a note
/// naming what each is, and the bundles are graded (not exit 3); `verify` of the same
/// arguments still reports each file.
#[test]
fn grading_a_glob_skips_the_key_and_readme_beside_the_bundles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = example_key();
    write(dir.path(), "collector.pub", &key);
    write(dir.path(), "README.md", b"# bundles\n");
    write(dir.path(), "a.mcpev", &sample());
    let r = grade(dir.path(), ["collector.pub", "README.md", "a.mcpev"]);
    assert!(matches!(r.code, 0 | 1 | 4), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        "mcp-grade: note: collector.pub: not a bundle: a PEM file (PUBLIC KEY) (a public key: give it to --trust); skipped\n\
         mcp-grade: note: README.md: not a bundle: a text file (1 line(s)); skipped\n"
    );
    assert!(r.stdout.contains("a.mcpev"), "{}", r.stdout);
    let r = grade(dir.path(), ["-q", "collector.pub", "README.md", "a.mcpev"]);
    assert_eq!(r.stderr, "");
    let r = grade(dir.path(), ["collector.pub", "README.md"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = grade(dir.path(), ["verify", "collector.pub", "a.mcpev"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
}

#[test]
fn missing_file_exits_2_naming_it_after_reporting_the_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = sample();
    write(dir.path(), "good.mcpev", &bytes);
    write(dir.path(), "bad.mcpev", &bytes[..10]);
    let r = grade(
        dir.path(),
        ["verify", "good.mcpev", "nope.mcpev", "bad.mcpev"],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("nope.mcpev"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("OK good.mcpev:"));
    assert!(lines[1].starts_with("INVALID bad.mcpev: truncated"));
    // Without the missing file: invalid wins over valid.
    let r = grade(dir.path(), ["verify", "good.mcpev", "bad.mcpev"]);
    assert_eq!(r.code, 3);
    // A directory is unreadable too.
    std::fs::create_dir(dir.path().join("d.mcpev")).expect("mkdir");
    let r = grade(dir.path(), ["verify", "d.mcpev"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("d.mcpev"), "{}", r.stderr);
}

#[test]
fn trust_pins_the_signer() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.mcpev", &sample());
    write(
        dir.path(),
        "right.pub",
        test_key(1).public().to_pem().as_bytes(),
    );
    write(
        dir.path(),
        "right.hex",
        hex::encode(test_key(1).public().to_bytes()).as_bytes(),
    );
    write(
        dir.path(),
        "other.pub",
        test_key(2).public().to_pem().as_bytes(),
    );
    write(
        dir.path(),
        "junk.pub",
        b"-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n",
    );

    let r = grade(dir.path(), ["verify", "a.mcpev", "--trust", "right.pub"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = grade(dir.path(), ["verify", "a.mcpev", "--trust", "right.hex"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = grade(
        dir.path(),
        [
            "verify",
            "a.mcpev",
            "--trust",
            "other.pub",
            "--trust",
            "right.pub",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let r = grade(dir.path(), ["verify", "a.mcpev", "--trust", "other.pub"]);
    assert_eq!(r.code, 3);
    assert!(r.stdout.contains("not trusted"), "{}", r.stdout);
    assert!(
        r.stdout.contains(&test_key(1).public().key_id()),
        "{}",
        r.stdout
    );

    let r = grade(dir.path(), ["verify", "a.mcpev", "--trust", "junk.pub"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("junk.pub"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);

    let r = grade(dir.path(), ["verify", "a.mcpev", "--trust", "missing.pub"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing.pub"), "{}", r.stderr);

    // show honours the pins too.
    let r = grade(dir.path(), ["show", "a.mcpev", "--trust", "other.pub"]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("not trusted"), "{}", r.stderr);
}

#[test]
fn an_unpinned_signer_is_refused_before_its_payload_is_decoded() {
    use mcp_probe_schema::testkit::{protected_header, sign_raw, unprotected_header};
    let dir = tempfile::tempdir().expect("tempdir");
    // Signed by key 2, over a payload no decoder can read.
    let other = test_key(2);
    let bundle = sign_raw(
        &other,
        &protected_header(&other),
        &unprotected_header(&other),
        &[0xff, 0x00, 0x1c],
    );
    write(dir.path(), "g.mcpev", &bundle);
    write(
        dir.path(),
        "right.pub",
        test_key(1).public().to_pem().as_bytes(),
    );
    let untrusted = format!(
        "signer {} is not trusted (not among the --trust keys)",
        other.public().key_id()
    );
    let r = grade(dir.path(), ["verify", "g.mcpev", "--trust", "right.pub"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(&untrusted), "{}", r.stdout);
    assert!(!r.stdout.contains("malformed"), "{}", r.stdout);
    let r = grade(dir.path(), ["g.mcpev", "--trust", "right.pub"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&untrusted), "{}", r.stderr);
    assert!(!r.stderr.contains("malformed"), "{}", r.stderr);
    let r = grade(dir.path(), ["show", "g.mcpev", "--trust", "right.pub"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&untrusted), "{}", r.stderr);
    assert!(!r.stderr.contains("malformed"), "{}", r.stderr);
    // Without pins the payload is read, and refused for what it is.
    let r = grade(dir.path(), ["verify", "g.mcpev"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("signed but malformed: the payload is not one CBOR item"),
        "{}",
        r.stdout
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(grade(dir.path(), Vec::<&str>::new()).code, 2);
    assert_eq!(grade(dir.path(), ["verify"]).code, 2);
    assert_eq!(grade(dir.path(), ["show", "x", "--json", "--har"]).code, 2);
    assert_eq!(grade(dir.path(), ["frobnicate"]).code, 2);
    let h = grade(dir.path(), ["--help"]);
    assert_eq!(h.code, 0);
    assert!(h.stdout.contains("verify") && h.stdout.contains("show"));
    let r = grade(dir.path(), ["show", "missing.mcpev"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing.mcpev"), "{}", r.stderr);
}

#[test]
fn show_text_has_the_transcript() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "i.mcpev", &inventory_bundle());
    let r = grade(dir.path(), ["show", "i.mcpev"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    for want in [
        "verified     yes",
        "format       mcp-evidence/1",
        "collector    mcp-collect 0.0.0-test (build test)",
        "status       complete",
        &format!("endpoint     {URL}"),
        "revision     2025-11-25 (legacy era, negotiated in #0)",
        r#"server info  {"name":"test-server","version":"1.0.0"}"#,
        "auth         required no, authenticated no",
        "#3 inventory.tools [2025-11-30T05:20:00Z, 1.500 ms]",
        &format!("  POST {URL} HTTP/1.1"),
        "  Content-Type: application/json",
        r#"    {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        "  -> 200 OK (HTTP/1.1)",
        "  body: ",
        "end: complete",
        "  skipped: the server declared no prompts capability",
        "  -> transport error timeout: no response head within 30 s",
        "  TLS connection 1 to 127.0.0.1:443 (SNI mcp.example): version TLSv1_3, cipher TLS13_AES_128_GCM_SHA256, ALPN http/1.1",
        "  chain: 1 certificate(s)",
        "  verification (bundled): FAILED: UnknownIssuer",
        "  verification (os): ok",
        "  DNS mcp.example -> 127.0.0.1:443",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
}

#[test]
fn show_text_escapes_terminal_control_and_cuts_long_bodies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let long = format!("\x1b[2J{}", "y".repeat(5000));
    let r0 = with_response(
        http_record(&["x"], URL, "{}", 500, long.as_bytes()),
        |resp| {
            resp.headers
                .push(Header::new("X-Evil", b"a\x1b]0;pwned\x07b".to_vec()));
            resp.body.length = 9000;
            resp.body.end = BodyEnd::LimitReached;
        },
    );
    let mut r1 = http_record(&["x"], URL, "{}", 200, b"");
    r1.redactions.push(Redaction {
        location: "request.header:Authorization".into(),
        what: "bearer-token".into(),
        fingerprint: "redacted:sha256:00".into(),
    });
    write(
        dir.path(),
        "e.mcpev",
        &seal(&evidence(URL, vec![r0, r1]), &test_key(1)),
    );
    let r = grade(dir.path(), ["show", "e.mcpev"]);
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains('\x1b'), "raw ESC in output");
    assert!(!r.stdout.contains('\x07'), "raw BEL in output");
    assert!(r.stdout.contains("\\u{1b}[2J"), "{}", r.stdout);
    assert!(r.stdout.contains("… (9000 bytes total)"), "{}", r.stdout);
    assert!(
        r.stdout.contains("5004 of 9000 bytes stored"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("end: read limit reached"), "{}", r.stdout);
    assert!(!r.stdout.contains(&"y".repeat(2100)), "body not cut");
    assert!(r
        .stdout
        .contains("redacted request.header:Authorization (bearer-token) -> redacted:sha256:00"));
}

#[test]
fn show_json_has_inventory_across_pages() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "i.mcpev", &inventory_bundle());
    let r = grade(dir.path(), ["show", "i.mcpev", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    let names: Vec<&str> = v["inventory"]["tools"]
        .as_array()
        .expect("tools is an array")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["alpha", "beta", "gamma"]);
    assert_eq!(v["inventory_pages"]["tools"]["pages"], 2);
    assert_eq!(v["inventory_pages"]["tools"]["complete"], true);
    assert_eq!(v["inventory"]["prompts"], serde_json::json!([]));
    assert_eq!(
        v["inventory_pages"]["prompts"]["stopped"],
        "the server declared no prompts capability"
    );
    assert_eq!(v["inventory"]["resources"], Value::Null);
    assert_eq!(v["inventory"]["resource_templates"], Value::Null);

    assert_eq!(v["format"], "mcp-evidence/1");
    assert_eq!(v["target"]["endpoint"], URL);
    assert_eq!(v["negotiated_revision"], "2025-11-25");
    assert_eq!(v["server_info"]["name"], "test-server");
    assert_eq!(v["auth_required"], false);
    assert_eq!(v["signer"]["key_id"], test_key(1).public().key_id());
    assert_eq!(
        v["signer"]["public_key_hex"],
        hex::encode(test_key(1).public().to_bytes())
    );
    assert_eq!(
        v["verification"],
        serde_json::json!({"valid": true, "problem": null})
    );
    assert_eq!(v["run"]["started_at"], 1_764_480_000_000_000_i64);
    assert_eq!(v["run"]["started_at_utc"], "2025-11-30T05:20:00Z");
    assert_eq!(v["run"]["status"], "complete");

    let recs = v["records"].as_array().expect("records");
    assert_eq!(recs.len(), 7);
    let page2 = &recs[4];
    assert_eq!(page2["seq"], 4);
    assert_eq!(page2["legs"], serde_json::json!(["inventory.tools"]));
    assert_eq!(page2["observation"]["kind"], "http");
    assert_eq!(page2["observation"]["response"]["status"], 200);
    let b = &page2["observation"]["response"]["body"];
    assert!(b["text"].as_str().expect("text").contains("gamma"));
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b["base64"].as_str().expect("b64"))
        .expect("base64");
    assert_eq!(raw, b["text"].as_str().expect("text").as_bytes());
    assert_eq!(b["sha256"].as_str().expect("hex").len(), 64);
    assert_eq!(page2["prev"].as_str().expect("prev").len(), 64);
    assert_eq!(recs[6]["observation"]["error"]["kind"], "timeout");
    assert_eq!(recs[6]["observation"]["response"], Value::Null);
    assert_eq!(recs[1]["observation"]["kind"], "tls");
    assert_eq!(recs[1]["observation"]["chain"][0]["length"], 5);
    assert_eq!(recs[0]["observation"]["kind"], "dns");
    assert_eq!(recs[5]["observation"]["kind"], "skipped");
    assert_eq!(v["chain_head"].as_str().expect("hex").len(), 64);
}

#[test]
fn show_json_of_an_unobserved_inventory_is_null() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut ev = evidence(URL, Vec::new());
    ev.session = None;
    write(dir.path(), "n.mcpev", &seal(&ev, &test_key(1)));
    let r = grade(dir.path(), ["show", "n.mcpev", "--json"]);
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["inventory"]["tools"], Value::Null);
    assert_eq!(v["negotiated_revision"], Value::Null);
    assert_eq!(v["server_info"], Value::Null);
    assert_eq!(v["auth_required"], Value::Null);
}

#[test]
fn show_har_has_one_entry_per_http_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "i.mcpev", &inventory_bundle());
    let r = grade(dir.path(), ["show", "i.mcpev", "--har"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    assert_eq!(v["log"]["version"], "1.2");
    assert_eq!(v["log"]["creator"]["name"], "mcp-grade");
    let entries = v["log"]["entries"].as_array().expect("entries");
    // init, page 1, page 2, the transport error; not the DNS, TLS or skipped records.
    assert_eq!(entries.len(), 4);
    assert_eq!(
        entries
            .iter()
            .map(|e| e["_seq"].as_u64().expect("seq"))
            .collect::<Vec<_>>(),
        [2, 3, 4, 6]
    );
    let e = &entries[1];
    assert_eq!(e["startedDateTime"], "2025-11-30T05:20:00.000Z");
    assert_eq!(e["time"], 1.5);
    assert_eq!(e["request"]["method"], "POST");
    assert_eq!(e["request"]["url"], URL);
    assert_eq!(e["request"]["httpVersion"], "HTTP/1.1");
    assert_eq!(e["request"]["headersSize"], -1);
    assert_eq!(e["request"]["postData"]["mimeType"], "application/json");
    assert!(e["request"]["postData"]["text"]
        .as_str()
        .expect("text")
        .contains("tools/list"));
    assert_eq!(e["response"]["status"], 200);
    assert_eq!(e["response"]["statusText"], "OK");
    assert_eq!(e["response"]["content"]["mimeType"], "application/json");
    assert!(e["response"]["content"]["text"]
        .as_str()
        .expect("text")
        .contains("alpha"));
    assert_eq!(e["timings"]["wait"], 1.5);
    assert_eq!(e["cache"], serde_json::json!({}));
    let err = &entries[3];
    assert_eq!(err["response"]["status"], 0);
    assert_eq!(err["_error"]["kind"], "timeout");
}

#[test]
fn har_query_string_is_parsed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = http_record(&["x"], "http://h.example/mcp?a=1&b=x%20y", "", 200, b"");
    write(
        dir.path(),
        "q.mcpev",
        &seal(&evidence(URL, vec![r]), &test_key(1)),
    );
    let r = grade(dir.path(), ["show", "q.mcpev", "--har"]);
    let v: Value = serde_json::from_str(&r.stdout).expect("json");
    let e = &v["log"]["entries"][0];
    assert_eq!(
        e["request"]["queryString"],
        serde_json::json!([{"name": "a", "value": "1"}, {"name": "b", "value": "x y"}])
    );
    assert!(e["request"].get("postData").is_none());
}

#[test]
fn show_on_a_tampered_bundle_warns_shows_and_exits_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = inventory_bundle();
    let at = find_unique(&bytes, b"0.0.0-test");
    write(dir.path(), "x.mcpev", &flipped(&bytes, at));
    for mode in [None, Some("--json"), Some("--har")] {
        let mut args = vec!["show", "x.mcpev"];
        args.extend(mode);
        let r = grade(dir.path(), &args);
        assert_eq!(r.code, 3, "{mode:?}");
        assert!(
            r.stderr
                .starts_with("WARNING: x.mcpev FAILED VERIFICATION (signature invalid"),
            "{}",
            r.stderr
        );
        assert!(!r.stdout.is_empty());
        match mode {
            None => assert!(
                r.stdout.contains("verified     NO: signature invalid"),
                "{}",
                r.stdout
            ),
            Some("--json") => {
                let v: Value = serde_json::from_str(&r.stdout).expect("json");
                assert_eq!(v["verification"]["valid"], false);
                assert!(v["verification"]["problem"]
                    .as_str()
                    .expect("problem")
                    .starts_with("signature invalid"));
                assert_eq!(v["collector"]["version"], "1.0.0-test"); // the altered byte shows
            }
            Some(_) => {
                let v: Value = serde_json::from_str(&r.stdout).expect("json");
                assert!(v["log"]["comment"]
                    .as_str()
                    .expect("comment")
                    .starts_with("UNVERIFIED"));
            }
        }
    }
    // Nothing decodable: one line, exit 3.
    write(dir.path(), "junk.mcpev", b"junk");
    let r = grade(dir.path(), ["show", "junk.mcpev"]);
    assert_eq!(r.code, 3);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("junk.mcpev") && r.stderr.contains("not a bundle"),
        "{}",
        r.stderr
    );
}

#[test]
fn show_a_record_that_does_not_decode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = sample();
    let ev = open(&bytes, &[]).expect("valid").evidence;
    let at = find_unique(&bytes, &ev.records[1]);
    write(dir.path(), "r.mcpev", &flipped(&bytes, at));
    let r = grade(dir.path(), ["show", "r.mcpev"]);
    assert_eq!(r.code, 3);
    assert!(
        r.stdout.contains("#1 (record does not decode:"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("#2 inventory.tools"), "{}", r.stdout);
    let r = grade(dir.path(), ["show", "r.mcpev", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["records"][1]["index"], 1);
    assert!(v["records"][1]["error"].is_string());
    assert_eq!(v["inventory"]["tools"].as_array().expect("array").len(), 2);
}

#[test]
fn binary_bodies_and_headers_survive_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = with_response(
        http_record(&["x"], URL, "{}", 200, &[0xff, 0x00, 0xfe]),
        |resp| {
            resp.headers.push(Header::new("X-Bin", vec![0xc3, 0x28]));
            resp.body = body(&[0xff, 0x00, 0xfe]);
        },
    );
    write(
        dir.path(),
        "b.mcpev",
        &seal(&evidence(URL, vec![r]), &test_key(1)),
    );
    let out = grade(dir.path(), ["show", "b.mcpev", "--json"]);
    let v: Value = serde_json::from_str(&out.stdout).expect("json");
    let resp = &v["records"][0]["observation"]["response"];
    assert_eq!(resp["body"]["text"], Value::Null);
    assert_eq!(resp["body"]["base64"], "/wD+");
    assert_eq!(
        resp["headers"][1],
        serde_json::json!({"name": "X-Bin", "value": null, "value_base64": "wyg="})
    );
    let har = grade(dir.path(), ["show", "b.mcpev", "--har"]);
    let v: Value = serde_json::from_str(&har.stdout).expect("json");
    assert_eq!(
        v["log"]["entries"][0]["response"]["content"]["encoding"],
        "base64"
    );
    assert_eq!(
        v["log"]["entries"][0]["response"]["content"]["text"],
        "/wD+"
    );
    let text = grade(dir.path(), ["show", "b.mcpev"]);
    assert!(
        text.stdout
            .contains("(not UTF-8; first bytes in hex) ff00fe"),
        "{}",
        text.stdout
    );
}

#[test]
fn the_committed_examples_verify_and_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("examples");
    let bundles = support::examples::examples();
    let names: Vec<String> = bundles
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    // py2 carries an RFC 3161 token of the lab TSA whose root is kept beside the
    // examples: without that root its chain does not verify, and the bundle is refused.
    let mut args = vec![
        "verify".to_string(),
        "--trust".into(),
        "collector.pub".into(),
    ];
    args.extend(names.iter().cloned());
    let r = grade(&root, &args);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    let invalid: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with("OK ")).collect();
    assert_eq!(invalid.len(), 1, "{}", r.stdout);
    assert!(
        invalid[0].starts_with("INVALID py2.mcpev: timestamp chain:"),
        "{}",
        invalid[0]
    );
    let mut args = vec![
        "verify".to_string(),
        "--trust".into(),
        "collector.pub".into(),
        "--tsa-cert".into(),
        "tsa/ca.pem".into(),
    ];
    args.extend(names.iter().cloned());
    let r = grade(&root, &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout.lines().filter(|l| l.starts_with("OK ")).count(),
        bundles.len()
    );
    let stamped: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("; timestamp by "))
        .collect();
    assert_eq!(stamped.len(), 1, "{}", r.stdout);
    assert!(stamped[0].starts_with("OK py2.mcpev: "), "{}", stamped[0]);
    // examples/README.md states the key id every example is signed by (the fingerprint an
    // auditor compares out of band): a replaced key must be stated there too.
    let readme = std::fs::read_to_string(root.join("README.md")).expect("examples/README.md");
    for line in r.stdout.lines() {
        let id = line
            .split("signer ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .expect("signer key id");
        assert!(
            readme.contains(id),
            "examples/README.md does not state key {id}"
        );
    }
    for b in &bundles {
        for mode in ["--json", "--har"] {
            let r = grade(&root, ["show".as_ref(), b.as_os_str(), mode.as_ref()]);
            assert_eq!(r.code, 0, "{}: {}", b.display(), r.stderr);
            let v: Value = serde_json::from_str(&r.stdout).expect("json");
            if mode == "--json" {
                assert_eq!(v["verification"]["valid"], true);
            } else {
                assert_eq!(v["log"]["version"], "1.2");
            }
        }
        assert_eq!(grade(&root, ["show".as_ref(), b.as_os_str()]).code, 0);
    }
}

/// The keys every `verify --json` object has, and nothing else.
const VERIFY_JSON_KEYS: [&str; 11] = [
    "collected_at",
    "endpoint",
    "file",
    "finished_at",
    "reason",
    "records",
    "signer",
    "started_at",
    "status",
    "timestamp",
    "valid",
];

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let mut keys: Vec<&str> = v
                .as_object()
                .expect("an object")
                .keys()
                .map(String::as_str)
                .collect();
            keys.sort_unstable();
            assert_eq!(keys, VERIFY_JSON_KEYS, "{l}");
            v
        })
        .collect()
}

#[test]
fn verify_json_prints_one_object_per_bundle_with_the_text_exit_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = sample();
    write(dir.path(), "a.mcpev", &bytes);
    let at = find_unique(&bytes, b"0.0.0-test");
    write(dir.path(), "bad.mcpev", &flipped(&bytes, at));
    write(dir.path(), "t.mcpev", &bytes[..bytes.len() / 3]);
    // Signed, but its chain does not start from its run id.
    let mut ev = open(&bytes, &[]).expect("valid").evidence;
    ev.run.run_id = "another-run".into();
    write(dir.path(), "m.mcpev", &seal(&ev, &test_key(1)));

    let r = grade(dir.path(), ["verify", "--json", "a.mcpev"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let kid = test_key(1).public().key_id();
    assert_eq!(
        json_lines(&r.stdout),
        [serde_json::json!({
            "file": "a.mcpev",
            "valid": true,
            "reason": null,
            "signer": kid,
            // run.finished_at of the test kit's evidence (started_at + 1 s).
            "collected_at": "2025-11-30T05:20:01Z",
            // The text line and the reports say "collected" of the start.
            "started_at": "2025-11-30T05:20:00Z",
            "finished_at": "2025-11-30T05:20:01Z",
            "endpoint": URL,
            "status": "complete",
            "records": 3,
            "timestamp": {"state": "none", "tsa": null, "gen_time": null, "serial": null,
                "policy": null, "step": null, "reason": null},
        })]
    );

    let r = grade(
        dir.path(),
        [
            "verify",
            "--json",
            "a.mcpev",
            "bad.mcpev",
            "t.mcpev",
            "m.mcpev",
        ],
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let v = json_lines(&r.stdout);
    assert_eq!(v.len(), 4, "{}", r.stdout);
    let files: Vec<&str> = v
        .iter()
        .map(|o| o["file"].as_str().expect("file"))
        .collect();
    assert_eq!(files, ["a.mcpev", "bad.mcpev", "t.mcpev", "m.mcpev"]);
    assert_eq!(v[0]["valid"], true);
    let reasons = [
        DAMAGED,
        "truncated: the file ends inside the bundle structure",
        "signed but malformed: chain broken at record 0: its prev is not the genesis hash of this run",
    ];
    for (o, reason) in v[1..].iter().zip(reasons) {
        assert_eq!(o["valid"], false, "{o}");
        assert_eq!(o["reason"], reason, "{o}");
        // Nothing unverified is reported as a fact.
        for k in ["signer", "collected_at", "endpoint", "status", "records"] {
            assert_eq!(o[k], Value::Null, "{k} of {o}");
        }
    }

    // Pinned to another key: valid alone, untrusted here.
    write(
        dir.path(),
        "other.pub",
        test_key(2).public().to_pem().as_bytes(),
    );
    let r = grade(
        dir.path(),
        ["verify", "--json", "--trust", "other.pub", "a.mcpev"],
    );
    assert_eq!(r.code, 3);
    let v = json_lines(&r.stdout);
    assert_eq!(
        v[0]["reason"],
        format!("signer {kid} is not trusted (not among the --trust keys)")
    );

    // An unreadable file: its object says why, stderr names it, exit 2 after the others.
    let r = grade(dir.path(), ["verify", "--json", "nope.mcpev", "bad.mcpev"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("nope.mcpev"), "{}", r.stderr);
    let v = json_lines(&r.stdout);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["file"], "nope.mcpev");
    assert_eq!(v[0]["valid"], false);
    assert!(
        v[0]["reason"]
            .as_str()
            .expect("reason")
            .starts_with("cannot read nope.mcpev"),
        "{}",
        v[0]
    );
    assert_eq!(v[1]["reason"], DAMAGED);

    // collected_at falls back to started_at, and is null when neither is a time.
    let mut ev = open(&bytes, &[]).expect("valid").evidence;
    ev.run.finished_at = i64::MAX;
    write(dir.path(), "f.mcpev", &seal(&ev, &test_key(1)));
    ev.run.started_at = i64::MIN;
    write(dir.path(), "n.mcpev", &seal(&ev, &test_key(1)));
    let r = grade(dir.path(), ["verify", "--json", "f.mcpev", "n.mcpev"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json_lines(&r.stdout);
    assert_eq!(v[0]["collected_at"], "2025-11-30T05:20:00Z");
    assert_eq!(v[0]["started_at"], "2025-11-30T05:20:00Z");
    assert_eq!(v[0]["finished_at"], Value::Null);
    assert_eq!(v[1]["collected_at"], Value::Null);
    assert_eq!(v[1]["started_at"], Value::Null);
}

/// Server-controlled text with a screen clear, a window title (OSC ... BEL), an 8-bit CSI
/// (U+009B) and a right-to-left override.
const EVIL: &str = "\x1b[2J\x1b]0;pwned\x07\u{9b}31m\u{202e}evil";

/// No character a terminal acts on: controls other than line feed and tab (and tab only
/// where `tabs`), and no bidi override or isolate.
fn assert_terminal_safe(what: &str, text: &str, tabs: bool) {
    for (i, c) in text.char_indices() {
        let ok = match c {
            '\n' => true,
            '\t' => tabs,
            c if c.is_control() => false,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => false,
            _ => true,
        };
        assert!(
            ok,
            "{what}: raw {:?} at {i}: {:?}",
            c,
            &text[i.saturating_sub(40)..(i + 40).min(text.len())]
        );
    }
}

/// A bundle whose every server-controlled string carries [`EVIL`].
fn hostile_bundle() -> Vec<u8> {
    let evil_json = |v: Value| v.to_string();
    let init = with_response(
        http_record(
            &[leg::ENDPOINT_DETECT, leg::SESSION_INITIALIZE],
            URL,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            200,
            evil_json(serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": format!("srv{EVIL}"), "version": EVIL},
                "instructions": EVIL,
            }}))
            .as_bytes(),
        ),
        |resp| {
            resp.reason = format!("OK{EVIL}").into();
            resp.headers
                .push(Header::new("X-Evil", EVIL.as_bytes().to_vec()));
            resp.headers
                .push(Header::new(format!("X-{EVIL}"), b"v".to_vec()));
        },
    );
    let tools = http_record(
        &[leg::INVENTORY_TOOLS],
        URL,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        200,
        evil_json(serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": format!("tool{EVIL}"), "description": EVIL,
             "inputSchema": {"type": "object", "properties": {EVIL: {"type": "string", "description": EVIL}}}},
        ]}}))
        .as_bytes(),
    );
    let rpc_error = http_record(
        &[leg::INVENTORY_PROMPTS],
        URL,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{}}"#,
        200,
        evil_json(serde_json::json!({"jsonrpc": "2.0", "id": 3,
            "error": {"code": -32000, "message": format!("boom{EVIL}"), "data": EVIL}}))
        .as_bytes(),
    );
    // Raw bytes, not JSON-escaped, in a body.
    let raw = http_record(
        &[leg::INVENTORY_RESOURCES],
        URL,
        "{}",
        500,
        format!("raw{EVIL}\r\n\tline two{EVIL}").as_bytes(),
    );
    let mut skipped = http_record(&[leg::INVENTORY_PROMPTS], URL, "{}", 200, b"");
    skipped.observation = Observation::Skipped {
        reason: format!("skipped{EVIL}"),
    };
    let mut failed = http_record(&[leg::ORIGIN_HOSTILE], URL, "{}", 0, b"");
    if let Observation::Http(x) = &mut failed.observation {
        x.outcome = HttpOutcome::Error(TransportError {
            kind: ErrorKind::Protocol,
            message: format!("not HTTP: {EVIL}"),
        });
        x.first_attempt = Some(TransportError {
            kind: ErrorKind::Reset,
            message: EVIL.into(),
        });
    }
    let mut dns = http_record(&[leg::DNS], URL, "{}", 200, b"");
    dns.observation = Observation::Dns(DnsLookup {
        host: format!("h{EVIL}"),
        addresses: vec![EVIL.into()],
        error: Some(TransportError {
            kind: ErrorKind::Dns,
            message: EVIL.into(),
        }),
    });
    let mut tls = http_record(&[leg::TLS_MODERN], URL, "{}", 200, b"");
    tls.observation = Observation::Tls(TlsHandshake {
        connection: 1,
        sni: Some(EVIL.into()),
        peer: EVIL.into(),
        version: Some(EVIL.into()),
        cipher_suite: Some(EVIL.into()),
        alpn: Some(EVIL.as_bytes().to_vec()),
        chain: Vec::new(),
        verification: vec![TrustCheck {
            store: EVIL.into(),
            ok: false,
            error: Some(EVIL.into()),
        }],
        error: Some(TransportError {
            kind: ErrorKind::TlsAlert,
            message: EVIL.into(),
        }),
        via_proxy: Some(EVIL.into()),
        client_auth: None,
    });
    let mut ev = evidence(
        URL,
        vec![dns, tls, init, tools, rpc_error, raw, skipped, failed],
    );
    ev.run.status = RunStatus::Interrupted;
    ev.run.failure = Some(format!("JSON-RPC error -32000: boom{EVIL}"));
    ev.run.inputs = Some(serde_json::json!({"static_resource_path": EVIL}));
    ev.target.as_typed = format!("{URL}{EVIL}");
    ev.collector.version = EVIL.into();
    if let Some(s) = &mut ev.session {
        s.server_info = Some(serde_json::json!({"name": format!("srv{EVIL}"), "version": EVIL}));
        s.session_id = Some(EVIL.into());
    }
    ev.tokens.push(TokenFacts {
        source: EVIL.into(),
        fingerprint: "redacted:sha256:00".into(),
        jwt_header: Some(serde_json::json!({"alg": EVIL})),
        jwt_claims: Some(serde_json::json!({"sub": EVIL})),
        expires_in: None,
        scope: Some(EVIL.into()),
        token_type: Some(EVIL.into()),
    });
    seal(&ev, &test_key(1))
}

#[test]
fn server_controlled_text_never_reaches_the_terminal_raw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = hostile_bundle();
    write(dir.path(), "h.mcpev", &bytes);
    // A file name chosen by whoever named the bundle, and a damaged copy of it.
    let evil_name = format!("n{EVIL}.mcpev");
    write(dir.path(), &evil_name, &bytes);
    let at = find_unique(&bytes, leg::ORIGIN_HOSTILE.as_str().as_bytes());
    let damaged = format!("d{EVIL}.mcpev");
    write(dir.path(), &damaged, &flipped(&bytes, at));
    let missing = format!("m{EVIL}.mcpev");

    let runs: Vec<(Vec<&str>, bool)> = vec![
        (vec!["h.mcpev"], false),
        (vec!["h.mcpev", &evil_name], false),
        (vec!["h.mcpev", &damaged], false),
        (vec!["h.mcpev", &missing], false),
        (vec!["show", "h.mcpev"], true),
        (vec!["show", &evil_name], true),
        (vec!["show", &damaged], true),
        (vec!["show", &missing], false),
        (vec!["show", "--json", "h.mcpev"], false),
        (vec!["show", "--har", "h.mcpev"], false),
        (vec!["show", "--json", &damaged], false),
        (
            vec!["verify", "h.mcpev", &evil_name, &damaged, &missing],
            false,
        ),
        (
            vec![
                "verify", "--json", "h.mcpev", &evil_name, &damaged, &missing,
            ],
            false,
        ),
    ];
    for (args, tabs) in &runs {
        let r = grade(dir.path(), args);
        let what = format!("{:?}", args);
        assert!(
            [0, 1, 2, 3, 4].contains(&r.code),
            "{what}: {}{}",
            r.stdout,
            r.stderr
        );
        assert_terminal_safe(&format!("{what} stdout"), &r.stdout, *tabs);
        assert_terminal_safe(&format!("{what} stderr"), &r.stderr, false);
    }

    // The strings were printed (escaped), not dropped.
    let r = grade(dir.path(), ["h.mcpev"]);
    assert!(
        r.stdout
            .contains("srv\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{9b}31m\\u{202e}evil"),
        "{}",
        r.stdout
    );
    let r = grade(dir.path(), ["--verbose", "h.mcpev"]);
    assert_terminal_safe("--verbose stdout", &r.stdout, false);
    assert!(
        r.stdout
            .contains("note      JSON-RPC error -32000: boom\\u{1b}[2J"),
        "{}",
        r.stdout
    );
    let r = grade(dir.path(), ["show", "h.mcpev"]);
    for want in [
        "skipped: skipped\\u{1b}[2J",
        "X-Evil: \\u{1b}[2J",
        "raw\\u{1b}[2J",
        "\tline two\\u{1b}[2J",
        "boom\\u{1b}[2J",
        "failure      JSON-RPC error -32000: boom\\u{1b}[2J",
        "error: dns: \\u{1b}[2J",
    ] {
        assert!(r.stdout.contains(want), "missing {want:?} in\n{}", r.stdout);
    }
    let r = grade(dir.path(), ["verify", &damaged]);
    assert_eq!(
        r.stdout,
        format!("INVALID d\\u{{1b}}[2J\\u{{1b}}]0;pwned\\u{{7}}\\u{{9b}}31m\\u{{202e}}evil.mcpev: {DAMAGED}\n")
    );
    // JSON keeps every value (the escapes are JSON escapes), only the bytes are safe.
    let r = grade(dir.path(), ["show", "--json", "h.mcpev"]);
    let v: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["server_info"]["name"], format!("srv{EVIL}"));
    assert!(r.stdout.contains("\\u009b31m\\u202eevil"), "{}", r.stdout);
    let r = grade(dir.path(), ["verify", "--json", &evil_name]);
    let v = json_lines(&r.stdout);
    assert_eq!(v[0]["file"], evil_name);
    assert_eq!(v[0]["valid"], true);
}

#[test]
fn version_names_the_commit_target_and_rustc() {
    for flag in ["--version", "-V"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
            .arg(flag)
            .output()
            .expect("run mcp-grade");
        assert!(out.status.success(), "{out:?}");
        let line = String::from_utf8_lossy(&out.stdout);
        build_id::check_version(&line, "mcp-grade", "evaluator/src");
    }
    // The commit every report names is the same build's.
    build_id::check_build(
        mcp_probe_evaluator::report::provenance::GRADER_BUILD,
        "evaluator/src",
    );
}
