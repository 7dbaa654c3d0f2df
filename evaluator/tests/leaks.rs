//! The end-to-end secret property (docs/collector.md, "The redaction guarantee"): a random bearer token, echoed by the
//! misbehaving server (collector/tests/support/misbehave.rs) in 1 to 3 random places
//! (server info, capabilities, instructions, session id, handshake and JSON-RPC errors,
//! tool names and descriptions, cursors, `WWW-Authenticate` and a 401 challenge with its
//! metadata, `Set-Cookie`, `Location`, other headers, the reason phrase, bodies, an event
//! stream that splits it, a chunk boundary inside it, the body cap cutting it), each in a
//! random encoding (raw; percent-encoded in either case, with or without the unreserved
//! characters; form; JSON with a random subset of characters as `\uXXXX` and `\/`; base64
//! and base64url with and without padding; base64 of `user:token`; hex in either case).
//! The real `mcp-collect` collects it with `--token-env`; then `mcp-grade verify`, `show`,
//! `show --json`, `show --har`, the text report and `--format json` read the bundle. The
//! token appears in no encoding, nor as an 8-character prefix or suffix
//! (`misbehave::Oracle`), in the bundle bytes, on any stdout or on any stderr.
//!
//! **Cases: 16 per run** (each with a fresh seed; CI runs 16). `MCP_LEAK_CASES=N` runs N,
//! and `MCP_LEAK_SEED=S` starts from seed S (a failure prints the seed of its case, so
//! `MCP_LEAK_SEED=S MCP_LEAK_CASES=1` replays it).
//!
//! Needs the `mcp-collect` binary (another package's: `cargo build --workspace --bins`);
//! outside CI the test is skipped with a message when it is not built.

mod support;

#[path = "../../collector/tests/support/misbehave.rs"]
mod misbehave;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use misbehave::{Case, Enc, Oracle, Place, Rng};

/// Default number of cases.
const CASES: u64 = 16;
/// The collector's `--body-cap` (small, so that [`Place::BodyCapCut`] is cheap).
const BODY_CAP: usize = 4096;

#[test]
fn no_secret_in_any_output_for_random_places_and_encodings() {
    let Some(bin) = support::lab::require_collector() else {
        return;
    };
    let cases = std::env::var("MCP_LEAK_CASES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(CASES);
    let seed0 = std::env::var("MCP_LEAK_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or_else(|| Rng::from_entropy().next_u64() >> 1);
    let t0 = std::time::Instant::now();
    for i in 0..cases {
        one_case(&bin, seed0.wrapping_add(i));
    }
    eprintln!("{cases} cases from seed {seed0} in {:.1?}", t0.elapsed());
}

/// Places and encodings drawn from `seed`.
fn draw(seed: u64) -> (String, Vec<(Place, Enc)>) {
    let mut rng = Rng::new(seed);
    let len = 34 + rng.below(31);
    let token = misbehave::random_token(&mut rng, len);
    let all = Place::all();
    let mut places: Vec<(Place, Enc)> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let p = all[rng.below(all.len())];
        let e = Enc::random(&mut rng);
        if !places.iter().any(|(q, _)| *q == p) {
            places.push((p, e));
        }
    }
    (token, places)
}

fn one_case(bin: &Path, seed: u64) {
    let (token, places) = draw(seed);
    let ctx = format!(
        "seed {seed} (MCP_LEAK_SEED={seed} MCP_LEAK_CASES=1), token {token:?}, places {places:?}"
    );
    let oracle = Oracle::new(&token);
    let srv = misbehave::start(Case::Echo(places.clone()), &token, BODY_CAP);
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let out = Command::new(bin)
        .env("MCP_PROBE_HOME", &home)
        .env("LEAK_TOKEN", &token)
        .args(["--token-env", "LEAK_TOKEN", "--timeout", "5"])
        .args(["--body-cap", &BODY_CAP.to_string(), "-o"])
        .arg(dir.path().join("out"))
        .arg(&srv.url)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-collect");
    let collect_desc = describe("mcp-collect", &out);
    // 0, or 3 when the placement ended the run before a session (handshake error, 401).
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{ctx}\n{collect_desc}"
    );
    check(&oracle, &ctx, "mcp-collect", &out);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let bundle = stdout
        .lines()
        .find(|l| !l.starts_with(' ') && !l.is_empty())
        .unwrap_or_else(|| panic!("no bundle path: {ctx}\n{collect_desc}"))
        .to_string();
    let bytes = std::fs::read(&bundle).unwrap_or_else(|e| panic!("{bundle}: {e}; {ctx}"));
    if let Some(hit) = oracle.find(&bytes) {
        panic!("the token leaked into the bundle bytes: {hit}\n{ctx}");
    }
    assert_eq!(
        srv.trap_hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a redirect or a token-bearing URL was followed: {ctx}"
    );

    let grade = |args: &[&str]| -> Output {
        Command::new(env!("CARGO_BIN_EXE_mcp-grade"))
            .env("MCP_PROBE_HOME", &home)
            .args(args)
            .arg(&bundle)
            .stdin(Stdio::null())
            .output()
            .expect("run mcp-grade")
    };
    for (args, ok) in [
        (&["verify"][..], &[0][..]),
        (&["show"][..], &[0][..]),
        (&["show", "--json"][..], &[0][..]),
        (&["show", "--har"][..], &[0][..]),
        // Grading: findings (1 FAIL, 4 ERROR) are verdicts, not failures of the tool.
        (&[][..], &[0, 1, 4][..]),
        (&["--format", "json"][..], &[0, 1, 4][..]),
    ] {
        let what = format!("mcp-grade {}", args.join(" "));
        let o = grade(args);
        let code = o.status.code().unwrap_or(-1);
        assert!(
            ok.contains(&code),
            "{what}: exit {code}\n{}\n{ctx}",
            describe(&what, &o)
        );
        assert!(!o.stdout.is_empty(), "{what} printed nothing: {ctx}");
        check(&oracle, &ctx, &what, &o);
    }
}

fn check(oracle: &Oracle, ctx: &str, what: &str, o: &Output) {
    for (stream, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        if let Some(hit) = oracle.find(bytes) {
            panic!("the token leaked into the {stream} of {what}: {hit}\n{ctx}");
        }
    }
}

fn describe(what: &str, o: &Output) -> String {
    let cut = |b: &[u8]| {
        let s = String::from_utf8_lossy(b);
        s.chars().take(4000).collect::<String>()
    };
    format!(
        "{what}: exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        cut(&o.stdout),
        cut(&o.stderr)
    )
}

/// The oracle itself: it finds the token in every encoding the server produces, at
/// every alignment inside base64, JSON-escaped twice (a `{:?}` of a JSON escape), and
/// as an 8-character prefix or suffix; and it stays quiet on text without it. Without
/// this, a property test that finds nothing would prove nothing.
#[test]
fn the_oracle_finds_every_encoding_and_only_those() {
    for seed in 0..64 {
        let (token, _) = draw(seed);
        let o = Oracle::new(&token);
        let mut rng = Rng::new(seed ^ 0xfeed);
        let mut encs = Enc::all();
        encs.push(Enc::random(&mut rng));
        for e in encs {
            let f = e.apply(&token);
            for hay in [format!("x{f}y"), format!("{{\"a\":{:?}}}", f)] {
                assert!(o.find(hay.as_bytes()).is_some(), "{e:?} {hay}");
            }
        }
        // base64 at every alignment: after a user name of any length.
        for user in ["", "u:", "us:", "use:"] {
            let hay = Enc::B64UrlNoPad.apply(&format!("{user}{token}"));
            assert!(o.find(hay.as_bytes()).is_some(), "{user:?} {hay}");
        }
        // Prefix and suffix of 8 characters, cut by a cap or an event boundary.
        assert!(o.find(&token.as_bytes()[..8]).is_some());
        assert!(o
            .find(format!("data: {}\n\n", &token[token.len() - 8..]).as_bytes())
            .is_some());
        // Seven characters are not a leak, nor is the fingerprint or another token.
        assert!(o.find(&token.as_bytes()[..7]).is_none());
        let other = draw(seed + 1000).0;
        assert!(o.find(other.as_bytes()).is_none(), "{token} vs {other}");
        let fp = mcp_probe_schema::bundle::fingerprint(token.as_bytes());
        assert!(o.find(fp.as_bytes()).is_none());
    }
}
