//! The real `mcp-collect` against the misbehaving server of `support/misbehave.rs`, one
//! case per test. Every run holds a random 40-character token
//! (`--token-env`) and small deadlines (`--timeout 3 --target-timeout 8`), and every
//! case asserts ([`Outcome::sealed`]):
//!
//! - the run ended within its deadline (`--target-timeout` plus a generous slack for a
//!   loaded debug build: it is not a performance test);
//! - the exit code: 0, or 3 when the target was sealed without an MCP session;
//! - exactly one bundle, sealed, that `mcp_probe_schema::open` verifies;
//! - the token in no encoding (nor any 8-character prefix or suffix of it) in the bundle
//!   bytes, on stdout or on stderr ([`misbehave::Oracle`]);
//! - no raw terminal control bytes on stderr, no panic;
//! - nothing connected to the trap port (redirects and token-bearing URLs point there);
//!
//! and then the typed reason of what went wrong in that case (a record's `BodyEnd`, its
//! `ErrorKind`, a skipped record's reason, `run.status` and `run.failure`).
//!
//! A flag that this build does not have yet makes `mcp-collect` exit 2 before any
//! traffic; such a run fails with "mcp-collect refused its arguments" and the usage line.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{
    BodyEnd, ErrorKind, HttpExchange, HttpOutcome, HttpResponse, Observation, Record, RunStatus,
};
use mcp_probe_schema::vocab::{leg, LegId};
use support::misbehave::{self, Case, Enc, Oracle, Place, Rng, Server};

/// `--timeout` of every run, seconds.
const TIMEOUT: u64 = 3;
/// `--target-timeout` of every run, seconds.
const TARGET_TIMEOUT: u64 = 8;
/// On top of `--target-timeout`: process start, sealing, a loaded 2-core debug build.
const SLACK: Duration = Duration::from_secs(12);

/// One run of `mcp-collect` against one misbehaving server.
struct Outcome {
    case: String,
    srv: Server,
    oracle: Oracle,
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    elapsed: Duration,
    bundle: Vec<u8>,
    v: Option<mcp_probe_schema::Verified>,
    /// Peak RSS of the collector, KiB, when the run was measured ([`run_measured`]).
    rss_kib: Option<u64>,
}

/// Run `mcp-collect --token-env … --timeout 3 --target-timeout 8 EXTRA… URL` against a new
/// server for `case` (body cap as the server should assume it).
fn run(case: Case, extra: &[&str], body_cap: usize) -> Outcome {
    run_as(case, extra, body_cap, false)
}

/// [`run`] under `support/maxrss.py`: the collector's peak RSS measured from outside.
fn run_measured(case: Case, extra: &[&str], body_cap: usize) -> Outcome {
    run_as(case, extra, body_cap, true)
}

fn run_as(case: Case, extra: &[&str], body_cap: usize, measured: bool) -> Outcome {
    let name = format!("{case:?}");
    let name: String = name.chars().take(120).collect();
    let mut rng = Rng::from_entropy();
    let token = misbehave::random_token(&mut rng, 40);
    let srv = misbehave::start(case, &token, body_cap);
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("rss");
    let mut c = if measured {
        support::measured_cmd(&dir, &report)
    } else {
        support::collect_cmd(&dir)
    };
    let (timeout, target_timeout) = (TIMEOUT.to_string(), TARGET_TIMEOUT.to_string());
    c.args(["--token-env", "MISBEHAVE_TOKEN", "--timeout", &timeout])
        .args(["--target-timeout", &target_timeout])
        .args(extra)
        .arg(&srv.url)
        .env("MISBEHAVE_TOKEN", &token)
        .stdin(Stdio::null());
    let t0 = Instant::now();
    let out = c.output().expect("run mcp-collect");
    let elapsed = t0.elapsed();
    let code = out.status.code().unwrap_or(-1);
    let stderr_text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !(code == 2 && stderr_text.contains("argument")),
        "{name}: mcp-collect refused its arguments (a flag this build does not have?): {stderr_text}"
    );
    let stdout_text = String::from_utf8_lossy(&out.stdout).into_owned();
    let paths: Vec<&str> = stdout_text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .collect();
    let bundle = match paths.as_slice() {
        [p] => std::fs::read(p).unwrap_or_default(),
        _ => Vec::new(),
    };
    let v = mcp_probe_schema::open(&bundle, &[]).ok();
    Outcome {
        case: name,
        srv,
        oracle: Oracle::new(&token),
        code,
        stdout: out.stdout,
        stderr: out.stderr,
        elapsed,
        bundle,
        v,
        rss_kib: support::max_rss_kib(&report),
    }
}

impl Outcome {
    fn describe(&self) -> String {
        format!(
            "{} (token {:?}): exit {} after {:.1?}\n--- stdout\n{}--- stderr\n{}",
            self.case,
            self.oracle.secret(),
            self.code,
            self.elapsed,
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }

    /// The assertions every case shares (see the module doc).
    fn sealed(&self, want_exit: i32) -> &mcp_probe_schema::Verified {
        let d = self.describe();
        let deadline = Duration::from_secs(TARGET_TIMEOUT) + SLACK;
        assert!(
            self.elapsed <= deadline,
            "did not end within its deadline ({deadline:?}): {d}"
        );
        assert!(
            !String::from_utf8_lossy(&self.stderr).contains("panicked"),
            "a panic: {d}"
        );
        assert_eq!(self.code, want_exit, "exit code: {d}");
        assert!(
            !self.bundle.is_empty(),
            "exactly one bundle path on stdout, readable: {d}"
        );
        let Some(v) = &self.v else {
            let e = mcp_probe_schema::open(&self.bundle, &[]).err();
            panic!("the bundle does not verify ({e:?}): {d}");
        };
        self.oracle.assert_clean("the bundle bytes", &self.bundle);
        self.oracle.assert_clean("stdout", &self.stdout);
        self.oracle.assert_clean("stderr", &self.stderr);
        if let Some(c) = misbehave::control_bytes(&self.stderr) {
            panic!("a raw terminal control character on stderr: {c}\n{d}");
        }
        assert_eq!(
            self.srv.trap_hits.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "something connected to the trap port (a redirect followed?): {d}"
        );
        v
    }

    /// Sealed with exit 3 and failed before a session: no revision was agreed.
    fn failed_without_session(&self) {
        self.sealed(3);
        assert_eq!(
            self.status(),
            Some(RunStatus::Failed),
            "{}",
            self.describe()
        );
        assert_eq!(self.revision(), None, "{}", self.describe());
    }

    /// The requests the server received.
    fn requests(&self) -> Vec<misbehave::Req> {
        self.srv.requests.lock().expect("lock").clone()
    }

    fn records(&self) -> &[Record] {
        self.v.as_ref().map(|v| v.records.as_slice()).unwrap_or(&[])
    }

    /// Records serving `l`, in order.
    fn on(&self, l: LegId) -> Vec<&Record> {
        self.records()
            .iter()
            .filter(|r| r.legs.iter().any(|x| x == l))
            .collect()
    }

    /// The first HTTP record of leg `l`.
    fn first_http(&self, l: LegId) -> &HttpExchange {
        self.on(l)
            .into_iter()
            .find_map(|r| match &r.observation {
                Observation::Http(x) => Some(x),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no HTTP record of leg {l}: {}", self.describe()))
    }

    /// Every `tools/list` exchange (inventory and probe legs), in order.
    fn tools_lists(&self) -> Vec<&HttpExchange> {
        self.records()
            .iter()
            .filter_map(|r| match &r.observation {
                Observation::Http(x)
                    if String::from_utf8_lossy(&x.request.body.bytes)
                        .contains("\"tools/list\"") =>
                {
                    Some(x)
                }
                _ => None,
            })
            .collect()
    }

    fn inventory(&self) -> mcp_probe_schema::derive::Inventory {
        mcp_probe_schema::derive::inventory(self.records())
    }

    fn failure(&self) -> String {
        self.v
            .as_ref()
            .and_then(|v| v.evidence.run.failure.clone())
            .unwrap_or_default()
    }

    fn status(&self) -> Option<RunStatus> {
        self.v.as_ref().map(|v| v.evidence.run.status)
    }

    fn revision(&self) -> Option<String> {
        self.v
            .as_ref()
            .and_then(|v| v.evidence.session.as_ref())
            .and_then(|s| s.revision.clone())
    }
}

fn response(x: &HttpExchange) -> &HttpResponse {
    match &x.outcome {
        HttpOutcome::Response(r) => r,
        HttpOutcome::Error(e) => panic!("a response was expected, got {e}"),
    }
}

/// The transport error that ended an exchange: before the response, or inside its body.
fn error_kind(x: &HttpExchange) -> Option<ErrorKind> {
    match &x.outcome {
        HttpOutcome::Error(e) => Some(e.kind),
        HttpOutcome::Response(r) => match &r.body.end {
            BodyEnd::Error(e) => Some(e.kind),
            _ => None,
        },
    }
}

fn header(r: &HttpResponse, name: &str) -> Option<String> {
    mcp_probe_schema::derive::header(&r.headers, name).map(|h| h.value_str().into_owned())
}

/// A deadline case: the run stopped sending when `--target-timeout` passed, said so, and
/// sealed what it had (a session was established, so exit 0).
fn assert_cut_by_target_timeout(o: &Outcome) {
    let v = o.sealed(0);
    assert_eq!(
        v.evidence.run.status,
        RunStatus::Interrupted,
        "{}",
        o.describe()
    );
    let f = o.failure().to_ascii_lowercase();
    assert!(
        f.contains("target-timeout") || f.contains("target timeout") || f.contains("deadline"),
        "run.failure names the per-target deadline: {:?}\n{}",
        o.failure(),
        o.describe()
    );
    // Without the per-target deadline the run would go on: one --timeout per leg.
    assert!(
        o.elapsed >= Duration::from_secs(TARGET_TIMEOUT - 1),
        "{}",
        o.describe()
    );
    let first = o.first_http(leg::INVENTORY_TOOLS);
    assert_eq!(
        error_kind(first),
        Some(ErrorKind::Timeout),
        "the stalled tools/list ends in a timeout: {:?}\n{}",
        first.outcome,
        o.describe()
    );
}

#[test]
fn baseline_well_behaved_server_is_complete() {
    let o = run(Case::Normal, &[], 1 << 20);
    let v = o.sealed(0);
    assert_eq!(
        v.evidence.run.status,
        RunStatus::Complete,
        "{}",
        o.describe()
    );
    assert_eq!(o.revision().as_deref(), Some("2025-11-25"));
    let inv = o.inventory();
    assert!(inv.tools.complete, "{:?}", inv.tools);
    assert_eq!(inv.tools.items.len(), 1);
    // The server saw the token: there was something to redact.
    let bearer = format!("Bearer {}", o.oracle.secret());
    assert!(o
        .requests()
        .iter()
        .any(|r| r.header("authorization").as_deref() == Some(bearer.as_str())));
}

#[test]
fn endless_body_is_cut_at_the_read_limit() {
    let o = run(Case::EndlessBody, &["--body-cap", "4096"], 4096);
    o.sealed(0);
    let x = o.first_http(leg::INVENTORY_TOOLS);
    let r = response(x);
    assert_eq!(r.body.end, BodyEnd::LimitReached, "{}", o.describe());
    assert_eq!(r.body.bytes.len(), 4096);
    assert!(r.body.length > 4096);
    assert!(!o.inventory().tools.complete);
    assert!(o.bundle.len() < 1 << 20, "bundle {} bytes", o.bundle.len());
}

#[test]
fn slow_drip_is_bounded_by_the_target_deadline() {
    let o = run(Case::SlowDrip, &[], 1 << 20);
    assert_cut_by_target_timeout(&o);
}

#[test]
fn endless_sse_keepalive_is_bounded_by_the_target_deadline() {
    let o = run(Case::SseKeepalive, &[], 1 << 20);
    // The handshake's stream was cut once the response arrived.
    let init = o.first_http(leg::SESSION_INITIALIZE);
    assert!(
        matches!(
            response(init).body.end,
            BodyEnd::StoppedAfterResponse | BodyEnd::Complete
        ),
        "{:?}",
        response(init).body.end
    );
    assert_cut_by_target_timeout(&o);
}

#[test]
fn malformed_json_handshake_is_no_session_exit_3() {
    let o = run(Case::MalformedJson, &[], 1 << 20);
    o.failed_without_session();
    assert!(
        o.failure().contains("without a JSON-RPC response"),
        "{:?}",
        o.failure()
    );
}

#[test]
fn malformed_sse_is_recorded_and_not_an_inventory() {
    let o = run(Case::MalformedSse, &[], 1 << 20);
    o.sealed(0);
    let x = o.first_http(leg::INVENTORY_TOOLS);
    let r = response(x);
    assert_eq!(r.status, 200);
    assert_eq!(
        header(r, "content-type").as_deref(),
        Some("text/event-stream")
    );
    let inv = o.inventory();
    assert!(
        !inv.tools.complete && inv.tools.items.is_empty(),
        "{:?}",
        inv.tools
    );
    assert!(inv.tools.stopped.is_some());
}

#[test]
fn fifty_megabyte_sse_line_stays_bounded() {
    let o = run(
        Case::HugeSseLine { bytes: 50 << 20 },
        &["--body-cap", "1048576"],
        1 << 20,
    );
    o.sealed(0);
    let r = response(o.first_http(leg::INVENTORY_TOOLS));
    assert_eq!(r.body.end, BodyEnd::LimitReached, "{}", o.describe());
    assert!(r.body.bytes.len() <= 1 << 20);
    assert!(
        r.body.length < 50 << 20,
        "stopped reading long before the end"
    );
    assert!(o.bundle.len() < 4 << 20, "bundle {} bytes", o.bundle.len());
}

#[test]
fn redirects_carrying_the_token_are_not_followed() {
    let o = run(Case::Redirect, &[], 1 << 20);
    o.sealed(0);
    let d = response(o.first_http(leg::ENDPOINT_DETECT));
    assert_eq!(d.status, 302);
    assert!(
        header(d, "location").is_some(),
        "the Location is kept (redacted)"
    );
    assert_eq!(response(o.first_http(leg::INVENTORY_TOOLS)).status, 307);
    let trap = format!(":{}", o.srv.trap_port);
    for r in o.records() {
        if let Observation::Http(x) = &r.observation {
            assert!(!x.request.url.contains(&trap), "{}", x.request.url);
        }
    }
    assert!(o
        .requests()
        .iter()
        .all(|r| !r.path.contains("access_token")));
}

/// Every place at once, each in a different encoding (the property test in
/// evaluator/tests/leaks.rs draws them at random).
#[test]
fn token_echoed_everywhere_in_every_encoding_never_reaches_the_bundle() {
    let encs = Enc::all();
    let places: Vec<(Place, Enc)> = Place::all()
        .into_iter()
        .filter(|p| !p.ends_early())
        .enumerate()
        .map(|(i, p)| (p, encs[i % encs.len()]))
        .collect();
    let o = run(Case::Echo(places), &["--body-cap", "4096"], 4096);
    o.sealed(0);
    assert_eq!(
        o.revision().as_deref(),
        Some("2025-11-25"),
        "{}",
        o.describe()
    );
    // The run went through the echoing inventory: the repeated cursor was recorded.
    assert!(
        o.on(leg::INVENTORY_TOOLS).iter().any(|r| matches!(
            &r.observation,
            Observation::Skipped { reason } if reason.contains("repeated cursor")
        )),
        "{}",
        o.describe()
    );
}

/// An echo that lower-cases or upper-cases the bearer token (raw, inside
/// percent-encoding, inside JSON escapes) in a response header and in bodies leaves no
/// case variant of it, or of a piece of it, in the bundle bytes, stdout or stderr.
#[test]
fn token_echoed_in_another_letter_case_never_reaches_the_bundle() {
    let mut o = run(
        Case::Echo(vec![
            (Place::Header, Enc::Lower),
            (Place::Body, Enc::Lower),
            (Place::ToolDescription, Enc::Upper),
            (Place::Instructions, Enc::PctAllLowerCased),
            (Place::ErrorMessage, Enc::JsonUnicodeUpperCased),
        ]),
        &[],
        1 << 20,
    );
    o.oracle = Oracle::any_case(o.oracle.secret());
    o.sealed(0);
    // The echoes were there to find: the header came back and was recorded, redacted.
    let lower = o.oracle.secret().to_ascii_lowercase();
    let requests = o.requests();
    assert!(!requests.is_empty(), "{}", o.describe());
    let echoed = o.tools_lists().into_iter().any(|x| {
        let r = response(x);
        r.headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("x-debug-echo"))
    });
    assert!(
        echoed,
        "the X-Debug-Echo header was recorded: {}",
        o.describe()
    );
    assert!(
        !String::from_utf8_lossy(&o.bundle).contains(&lower),
        "{}",
        o.describe()
    );
}

#[test]
fn token_echoed_in_the_handshake_error_stays_out_of_failure_and_stderr() {
    for enc in [Enc::Raw, Enc::PctLower, Enc::B64UrlNoPad] {
        let o = run(
            Case::Echo(vec![(Place::HandshakeError, enc)]),
            &["-q"],
            1 << 20,
        );
        o.sealed(3);
        assert_eq!(o.status(), Some(RunStatus::Failed), "{}", o.describe());
        assert!(o.failure().contains("initialize"), "{:?}", o.failure());
        assert!(
            !o.stderr.is_empty(),
            "the target without a session is named on stderr, even with -q"
        );
    }
}

#[test]
fn token_echoed_in_a_401_challenge_and_metadata_stays_out() {
    let o = run(
        Case::Echo(vec![
            (Place::Auth401, Enc::Raw),
            (Place::SetCookie, Enc::Basic),
        ]),
        &[],
        1 << 20,
    );
    // The endpoint refused the credential: sealed without an MCP session.
    o.sealed(3);
    assert!(o.failure().contains("401"), "{:?}", o.failure());
    assert!(
        !o.on(leg::PRM).is_empty(),
        "the challenge's metadata was fetched: {}",
        o.describe()
    );
}

#[test]
fn a_hundred_thousand_tools_in_one_page() {
    let o = run(
        Case::ManyTools { n: 100_000 },
        &["--body-cap", "8388608"],
        8 << 20,
    );
    o.sealed(0);
    let inv = o.inventory();
    assert_eq!(inv.tools.items.len(), 100_000, "{:?}", inv.tools.stopped);
    assert!(inv.tools.complete);
    assert!(o.bundle.len() < 16 << 20, "bundle {} bytes", o.bundle.len());
}

#[test]
fn endless_cursors_stop_at_the_page_bound_within_the_bundle_cap() {
    let o = run(
        Case::EndlessCursors {
            page_bytes: 16 * 1024,
        },
        &["--max-pages", "150", "--bundle-cap", "1048576"],
        1 << 20,
    );
    o.sealed(0);
    assert!(
        o.on(leg::INVENTORY_TOOLS).iter().any(|r| matches!(
            &r.observation,
            Observation::Skipped { reason } if reason.contains("page bound 150")
        )),
        "{}",
        o.describe()
    );
    let pages = o
        .on(leg::INVENTORY_TOOLS)
        .iter()
        .filter(|r| matches!(r.observation, Observation::Http(_)))
        .count();
    assert_eq!(pages, 150);
    // 150 pages of 16 KiB do not fit in 1 MiB: past the cap, bodies are length and hash.
    assert!(
        o.bundle.len() < (1 << 20) + (256 << 10),
        "bundle {} bytes over --bundle-cap",
        o.bundle.len()
    );
    let capped_from = o.v.as_ref().and_then(|v| v.evidence.run.bundle_capped_from);
    assert!(
        capped_from.is_some(),
        "run.bundle_capped_from records the bound"
    );
    let hashed_only = o
        .on(leg::INVENTORY_TOOLS)
        .iter()
        .any(|r| match &r.observation {
            Observation::Http(x) => match &x.outcome {
                HttpOutcome::Response(resp) => resp.body.bytes.is_empty() && resp.body.length > 0,
                _ => false,
            },
            _ => false,
        });
    assert!(hashed_only, "no page was stored as length and SHA-256 only");
}

#[test]
fn header_flood_and_huge_header_are_protocol_errors() {
    let o = run(Case::HeaderFlood, &[], 1 << 20);
    o.sealed(0);
    let kinds: Vec<Option<ErrorKind>> = o.tools_lists().iter().map(|x| error_kind(x)).collect();
    assert_eq!(
        error_kind(o.first_http(leg::INVENTORY_TOOLS)),
        Some(ErrorKind::Protocol),
        "5000 headers: {kinds:?}"
    );
    assert!(
        kinds.len() > 1 && kinds.iter().all(|k| *k == Some(ErrorKind::Protocol)),
        "one 256 KiB header: {kinds:?}"
    );
    assert!(o.bundle.len() < 1 << 20);
}

#[test]
fn compression_bomb_is_stored_compressed_and_bounded() {
    let o = run(Case::CompressionBomb, &[], 1 << 20);
    o.sealed(0);
    let r = response(o.first_http(leg::INVENTORY_TOOLS));
    assert_eq!(header(r, "content-encoding").as_deref(), Some("gzip"));
    assert_eq!(r.body.end, BodyEnd::Complete);
    let bomb = misbehave::gzip_bomb();
    assert_eq!(r.body.length, bomb.len() as u64, "no content decoding");
    assert_eq!(r.body.bytes.as_slice(), bomb);
    assert!(!o.inventory().tools.complete);
    assert!(
        o.bundle.len() < 2 << 20,
        "bundle {} bytes for a {}-byte bomb of {} zeros",
        o.bundle.len(),
        bomb.len(),
        misbehave::BOMB_ZEROS
    );
}

#[test]
fn bogus_chunk_sizes_end_in_errors_and_are_never_the_answer() {
    let o = run(Case::BogusChunks, &[], 1 << 20);
    o.sealed(0);
    let first = o.first_http(leg::INVENTORY_TOOLS);
    assert_eq!(
        error_kind(first),
        Some(ErrorKind::Protocol),
        "{:?}",
        first.outcome
    );
    let kinds: Vec<Option<ErrorKind>> = o.tools_lists().iter().map(|x| error_kind(x)).collect();
    assert!(
        kinds.contains(&Some(ErrorKind::Protocol)) && kinds.contains(&Some(ErrorKind::Reset)),
        "{kinds:?}"
    );
    // The complete JSON-RPC result in the first chunk is not the server's answer.
    let inv = o.inventory();
    assert!(!inv.tools.complete, "{:?}", inv.tools);
    assert!(
        !inv.tools
            .items
            .iter()
            .any(|t| t.get("name").and_then(|n| n.as_str()) == Some("from-a-broken-body")),
        "{:?}",
        inv.tools.items
    );
}

#[test]
fn reset_mid_body_handshake_is_never_read_as_the_answer() {
    let o = run(Case::ResetMidBody, &[], 1 << 20);
    // The initialize body held a complete result but ended in an error: no session.
    let init = o.first_http(leg::SESSION_INITIALIZE);
    assert_eq!(
        error_kind(init),
        Some(ErrorKind::Reset),
        "{:?}",
        init.outcome
    );
    o.failed_without_session();
}

#[test]
fn html_200_is_not_mcp_exit_3() {
    let o = run(Case::Html200, &[], 1 << 20);
    o.failed_without_session();
    let r = response(o.first_http(leg::ENDPOINT_DETECT));
    assert!(header(r, "content-type")
        .unwrap_or_default()
        .starts_with("text/html"));
    assert!(
        o.failure().starts_with("no MCP endpoint"),
        "{:?}",
        o.failure()
    );
}

#[test]
fn terminal_escapes_in_a_failed_handshake_are_escaped_on_stderr() {
    let o = run(
        Case::TerminalEscapes {
            handshake_fails: true,
        },
        &[],
        1 << 20,
    );
    o.sealed(3);
    // The failure (with the server's text) was printed, escaped.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("refused"), "{}", o.describe());
}

#[test]
fn terminal_escapes_in_every_server_string_stay_off_the_terminal() {
    let o = run(
        Case::TerminalEscapes {
            handshake_fails: false,
        },
        &["--info"],
        1 << 20,
    );
    o.sealed(0);
    let info =
        o.v.as_ref()
            .and_then(|v| v.evidence.session.as_ref())
            .and_then(|s| s.server_info.clone())
            .unwrap_or_default();
    assert!(
        info.to_string().contains("\\u001b"),
        "the bundle keeps what the server said: {info}"
    );
    // `--info` prints the server's name on stdout: a text report of server strings.
    if let Some(c) = misbehave::control_bytes(&o.stdout) {
        panic!("a raw terminal control character on stdout (--info): {c}");
    }
}

// The parsers of bytes a server or a browser redirect controls, on arbitrary input (the
// same properties as collector/fuzz's targets, run in every `cargo test`).
proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

    #[test]
    fn www_authenticate_on_arbitrary_bytes(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        for c in mcp_probe_schema::www_authenticate::parse(&data).challenges {
            let _ = (c.is_bearer(), c.resource_metadata(), c.scope());
            proptest::prop_assert!(!c.scheme.is_empty(), "{:?}", c);
        }
    }

    #[test]
    fn oauth_callback_on_arbitrary_queries(q in "(state=S|state=T|code=[a-z]{0,3}|error=x|iss=[a-z:/.]{0,20}|&|=|%[0-9A-F]{2}|[^&=%]{0,8}){0,12}") {
        for required in [false, true] {
            if let Ok(code) = mcp_probe_collector::oauth::validate_callback(&q, "S", "https://as.example", required) {
                let pairs: Vec<(String, String)> = url::form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                let states: Vec<&str> = pairs.iter().filter(|(k, _)| k == "state").map(|(_, v)| v.as_str()).collect();
                proptest::prop_assert_eq!(states, vec!["S"]);
                proptest::prop_assert!(!code.is_empty());
                proptest::prop_assert!(!pairs.iter().any(|(k, _)| k == "error"));
            }
        }
    }
}

/// `--bundle-cap` of the flood cases: 4 MiB.
const FLOOD_CAP: u64 = 4 << 20;

#[test]
fn endless_sse_events_on_a_response_stream_are_bounded() {
    let cap = FLOOD_CAP.to_string();
    let o = run_measured(
        Case::EndlessSseEvents,
        &["--bundle-cap", &cap, "--body-cap", "65536"],
        64 << 10,
    );
    let rss = o.rss_kib.expect("measured");
    eprintln!(
        "misbehaving EndlessSseEvents: peak RSS {:.1} MiB, {:.2} s, bundle {} bytes",
        rss as f64 / 1024.0,
        o.elapsed.as_secs_f64(),
        o.bundle.len()
    );
    assert!(rss <= (FLOOD_CAP + (64 << 20)) / 1024, "peak RSS {rss} KiB");
    let v = o.sealed(0);
    assert!(
        o.bundle.len() as u64 <= FLOOD_CAP + (1 << 20),
        "{}",
        o.bundle.len()
    );
    // Each stream was read to the read limit (or the timeout), never read as an answer.
    let r = response(o.first_http(leg::INVENTORY_TOOLS));
    assert!(
        matches!(r.body.end, BodyEnd::LimitReached | BodyEnd::Error(_)),
        "{:?}",
        r.body.end
    );
    assert!(r.body.bytes.len() <= 64 << 10);
    assert!(!o.inventory().tools.complete);
    let _ = v;
}
