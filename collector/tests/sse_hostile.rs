//! The real `mcp-collect` against hostile servers on the legacy HTTP+SSE transport
//! (2024-11-05): a scripted server whose POSTs to `/mcp` and `/` answer 404 (so the
//! collector falls back to `GET /sse`) and whose event stream misbehaves in one way per
//! test. Every case asserts that the run ends within its deadline, seals one verifying
//! bundle with `target.transport = http-sse` tried, and records what went wrong as a
//! typed transport error, never a hang or a panic.

mod support;

use std::io::{BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, SseEvent, Transport};
use mcp_probe_schema::vocab::leg;
use serde_json::{json, Value};
use support::{accept, read_request, Req};

/// `--timeout`, seconds.
const TIMEOUT: u64 = 2;
/// `--target-timeout`, seconds.
const TARGET_TIMEOUT: u64 = 10;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Case {
    /// A well-behaved HTTP+SSE server (the baseline).
    Normal,
    /// The stream sends keep-alive comments forever, never an `endpoint` event.
    NoEndpoint,
    /// The stream sends bytes without a line end, forever (one endless line).
    Garbage,
    /// The `endpoint` event names the trap port (another origin).
    ForeignEndpoint,
    /// The POSTs are accepted but no answer ever comes; the stream drips comments.
    DripNoAnswer,
    /// The stream ends right after the `endpoint` event.
    ClosesAfterEndpoint,
    /// `tools/list` answered with one event of about 200 KB (over the body cap given).
    HugeAnswer,
    /// Well-behaved, except that a message with `"id": null` is acknowledged and
    /// dropped: no answer ever comes for it (the lab's SDKs do this).
    DropsNullId,
    /// After the `endpoint` event, JSON-RPC notification events without pause and
    /// without end; no POST is ever answered.
    EventFlood,
}

struct Server {
    origin: String,
    trap_hits: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Stream clients waiting for answers: the POST handler writes into them.
type Streams = Arc<Mutex<Vec<TcpStream>>>;

fn chunk(payload: &str) -> Vec<u8> {
    let mut v = format!("{:x}\r\n", payload.len()).into_bytes();
    v.extend_from_slice(payload.as_bytes());
    v.extend_from_slice(b"\r\n");
    v
}

fn plain(status: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn answer(req: &Value, huge: bool) -> Option<Value> {
    let id = req.get("id")?.clone();
    let m = req.get("method")?.as_str()?;
    let result = match m {
        "initialize" => json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted-sse", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "ping_tool",
            "description": if huge { "x".repeat(200_000) } else { String::new() },
            "inputSchema": {"type": "object"}
        }]}),
        _ => {
            return Some(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
            )
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn start(case: Case) -> Server {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let trap = TcpListener::bind("127.0.0.1:0").expect("trap");
    let trap_port = trap.local_addr().expect("trap addr").port();
    let stop = Arc::new(AtomicBool::new(false));
    let trap_hits = Arc::new(AtomicUsize::new(0));
    {
        let hits = trap_hits.clone();
        thread::spawn(move || {
            for s in trap.incoming() {
                if s.is_ok() {
                    hits.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
    }
    let requests: Arc<Mutex<Vec<Req>>> = Arc::new(Mutex::new(Vec::new()));
    let streams: Streams = Arc::new(Mutex::new(Vec::new()));
    let (reqs, st) = (requests.clone(), stop.clone());
    accept(l, stop.clone(), move |s| {
        let Ok(mut w) = s.try_clone() else { return };
        let mut r = BufReader::new(s);
        while let Some(req) = read_request(&mut r) {
            reqs.lock().expect("requests lock").push(req.clone());
            if req.method == "GET" && req.path == "/sse" {
                serve_stream(case, &mut w, trap_port, &streams, &st);
                return;
            }
            let out = if req.method == "POST" && req.path.starts_with("/messages") {
                let dropped = case == Case::DropsNullId && req.json()["id"].is_null();
                if !matches!(case, Case::DripNoAnswer | Case::EventFlood) && !dropped {
                    if let Some(a) = answer(&req.json(), case == Case::HugeAnswer) {
                        let ev = chunk(&format!("event: message\r\ndata: {a}\r\n\r\n"));
                        for s in streams.lock().expect("streams lock").iter_mut() {
                            let _ = s.write_all(&ev);
                        }
                    }
                }
                plain(202, "Accepted", "Accepted")
            } else {
                plain(404, "Not Found", "Not Found")
            };
            if w.write_all(&out).is_err() {
                return;
            }
        }
    });
    Server {
        origin: format!("http://127.0.0.1:{port}"),
        trap_hits,
        requests,
        stop,
    }
}

fn serve_stream(
    case: Case,
    w: &mut TcpStream,
    trap_port: u16,
    streams: &Streams,
    stop: &AtomicBool,
) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nTransfer-Encoding: chunked\r\n\r\n";
    if w.write_all(head.as_bytes()).is_err() {
        return;
    }
    let endpoint = |url: &str| chunk(&format!("event: endpoint\r\ndata: {url}\r\n\r\n"));
    let t0 = Instant::now();
    let forever = |w: &mut TcpStream, piece: &[u8]| {
        while !stop.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(60) {
            if w.write_all(piece).is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(100));
        }
    };
    match case {
        Case::Normal | Case::DripNoAnswer | Case::HugeAnswer | Case::DropsNullId => {
            // The stream is listed for answers before the `endpoint` event is sent: a
            // client that POSTs the moment it reads the event must find it there (listed
            // after, an answer could go to no stream, and the client waited out its
            // --timeout: a CI run under load did).
            if let Ok(c) = w.try_clone() {
                streams.lock().expect("streams lock").push(c);
            }
            let _ = w.write_all(&endpoint("/messages/?session_id=s1"));
            forever(w, &chunk(": keep-alive\r\n\r\n"));
        }
        Case::NoEndpoint => forever(w, &chunk(": keep-alive\r\n\r\n")),
        Case::EventFlood => {
            let _ = w.write_all(&endpoint("/messages/?session_id=s1"));
            let ev = "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"flood\"}}\r\n\r\n";
            let block = chunk(&ev.repeat(64 * 1024 / ev.len()));
            while !stop.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(60) {
                if w.write_all(&block).is_err() {
                    return;
                }
            }
        }
        Case::Garbage => forever(w, &chunk(&"x".repeat(4096))),
        Case::ForeignEndpoint => {
            let _ = w.write_all(&endpoint(&format!(
                "http://127.0.0.1:{trap_port}/messages/?s=1"
            )));
            forever(w, &chunk(": keep-alive\r\n\r\n"));
        }
        Case::ClosesAfterEndpoint => {
            let _ = w.write_all(&endpoint("/messages/?session_id=s1"));
            let _ = w.write_all(b"0\r\n\r\n");
            let _ = w.flush();
            let _ = w.shutdown(Shutdown::Both);
        }
    }
}

struct Outcome {
    srv: Server,
    run: support::Run,
    elapsed: Duration,
    v: mcp_probe_schema::Verified,
    records: Vec<Record>,
}

fn run(case: Case) -> Outcome {
    run_with(case, &[])
}

fn run_with(case: Case, extra: &[&str]) -> Outcome {
    run_as(case, extra, false).0
}

fn run_as(case: Case, extra: &[&str], measured: bool) -> (Outcome, Option<u64>) {
    run_timed(case, (TIMEOUT, TARGET_TIMEOUT), extra, measured)
}

/// [`run_as`] with `--timeout` and `--target-timeout` (seconds) of its own; `measured`:
/// under `support/maxrss.py`, also the collector's peak RSS, KiB.
fn run_timed(
    case: Case,
    (timeout, target_timeout): (u64, u64),
    extra: &[&str],
    measured: bool,
) -> (Outcome, Option<u64>) {
    let srv = start(case);
    let (t, tt) = (timeout.to_string(), target_timeout.to_string());
    let t0 = Instant::now();
    let mut args = vec!["--timeout", &t, "--target-timeout", &tt, "--info"];
    args.extend_from_slice(extra);
    args.push(&srv.origin);
    let (run, rss) = if measured {
        let (run, rss) = support::collect_measured(&args);
        (run, Some(rss))
    } else {
        (support::collect(&args, &[]), None)
    };
    let elapsed = t0.elapsed();
    assert!(
        elapsed < Duration::from_secs(target_timeout + 15),
        "{case:?}: took {elapsed:?}\n{}",
        run.describe()
    );
    assert!(
        !run.stderr().contains("panicked"),
        "{case:?}: {}",
        run.describe()
    );
    let bundles = run.bundles();
    assert_eq!(bundles.len(), 1, "{case:?}: {}", run.describe());
    let v = support::open(&bundles[0]);
    let records = v.records.clone();
    (
        Outcome {
            srv,
            run,
            elapsed,
            v,
            records,
        },
        rss,
    )
}

fn events(o: &Outcome) -> Vec<&SseEvent> {
    o.records
        .iter()
        .filter_map(|r| match &r.observation {
            Observation::SseEvent(e) => Some(e),
            _ => None,
        })
        .collect()
}

fn ending(o: &Outcome) -> Option<ErrorKind> {
    events(o)
        .iter()
        .find_map(|e| e.error.as_ref().map(|e| e.kind))
}

fn stream_get(o: &Outcome) -> &Record {
    o.records
        .iter()
        .find(|r| {
            r.legs.iter().any(|l| l == leg::ENDPOINT_SSE.as_str())
                && matches!(&r.observation, Observation::Http(x) if x.request.method == "GET")
        })
        .expect("the stream GET is recorded under endpoint.sse")
}

#[test]
fn a_well_behaved_sse_server_gets_a_session_and_its_inventory() {
    let o = run(Case::Normal);
    assert_eq!(o.run.code(), 0, "{}", o.run.describe());
    let t = &o.v.evidence.target;
    assert_eq!(t.transport, Transport::HttpSse);
    assert_eq!(
        t.endpoint.as_deref(),
        Some(format!("{}/sse", o.srv.origin).as_str())
    );
    assert_eq!(
        t.message_endpoint.as_deref(),
        Some(format!("{}/messages/?session_id=s1", o.srv.origin).as_str())
    );
    let s = o.v.evidence.session.as_ref().expect("session");
    assert_eq!(s.revision.as_deref(), Some("2024-11-05"));
    // Streamable HTTP was tried first on /mcp and / (404 both).
    let posts: Vec<String> = o
        .srv
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(posts.starts_with(&["POST /mcp".to_string()]), "{posts:?}");
    assert!(posts.contains(&"GET /sse".to_string()), "{posts:?}");
    // The tools/list answer is an event linked to its POST, under the inventory leg.
    let inv = mcp_probe_schema::derive::inventory(&o.records);
    assert_eq!(inv.tools.items.len(), 1, "{:?}", inv.tools);
    assert!(inv.tools.complete);
    let answer = o
        .records
        .iter()
        .find(|r| {
            r.legs.iter().any(|l| l == leg::INVENTORY_TOOLS.as_str())
                && matches!(r.observation, Observation::SseEvent(_))
        })
        .expect("the tools/list answer event");
    let Observation::SseEvent(e) = &answer.observation else {
        unreachable!()
    };
    let post = &o.records[e.request.expect("linked") as usize];
    assert!(matches!(&post.observation, Observation::Http(x) if x.request.method == "POST"));
    assert_eq!(e.stream, stream_get(&o).seq);
    assert!(post.seq < answer.seq);
}

#[test]
fn a_stream_without_an_endpoint_event_ends_in_a_recorded_timeout() {
    let o = run(Case::NoEndpoint);
    assert_eq!(o.run.code(), 3, "{}", o.run.describe());
    assert_eq!(ending(&o), Some(ErrorKind::Timeout));
    assert!(
        support::failure(&o.v).contains("no endpoint event"),
        "{}",
        support::failure(&o.v)
    );
    assert!(o.elapsed < Duration::from_secs(TARGET_TIMEOUT + 10));
}

#[test]
fn an_endless_line_ends_in_a_recorded_error_within_the_deadline() {
    let o = run(Case::Garbage);
    assert_eq!(o.run.code(), 3, "{}", o.run.describe());
    let kind = ending(&o);
    assert!(
        matches!(kind, Some(ErrorKind::Timeout | ErrorKind::Protocol)),
        "{kind:?}"
    );
    assert!(
        events(&o).iter().all(|e| e.error.is_some()),
        "no event was dispatched"
    );
}

#[test]
fn an_endpoint_on_another_origin_is_refused_and_never_contacted() {
    let o = run(Case::ForeignEndpoint);
    assert_eq!(o.run.code(), 3, "{}", o.run.describe());
    assert_eq!(o.srv.trap_hits.load(Ordering::SeqCst), 0);
    let refused = o
        .records
        .iter()
        .find_map(|r| match &r.observation {
            Observation::Http(x) => match &x.outcome {
                HttpOutcome::Error(e) if e.kind == ErrorKind::RefusedByGuard => Some(x),
                _ => None,
            },
            _ => None,
        })
        .expect("the refused POST is recorded");
    assert!(
        refused.request.url.contains("/messages/?s=1"),
        "{}",
        refused.request.url
    );
    assert!(
        support::failure(&o.v).contains("another origin"),
        "{}",
        support::failure(&o.v)
    );
}

#[test]
fn accepted_posts_whose_answers_never_come_end_in_a_recorded_timeout() {
    let o = run(Case::DripNoAnswer);
    assert_eq!(o.run.code(), 3, "{}", o.run.describe());
    let timeout = events(&o)
        .into_iter()
        .find(|e| {
            e.error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::Timeout)
        })
        .expect("a timeout record");
    // It names the initialize POST whose answer was awaited.
    let post = &o.records[timeout.request.expect("linked") as usize];
    assert!(post
        .legs
        .iter()
        .any(|l| l == leg::SESSION_INITIALIZE.as_str()));
}

#[test]
fn a_stream_that_closes_after_the_endpoint_event_ends_in_a_recorded_reset() {
    let o = run(Case::ClosesAfterEndpoint);
    assert_eq!(o.run.code(), 3, "{}", o.run.describe());
    assert_eq!(ending(&o), Some(ErrorKind::Reset));
}

#[test]
fn an_answer_over_the_body_cap_is_stored_cut_and_not_read() {
    let o = run_with(Case::HugeAnswer, &["--body-cap", "4096"]);
    assert_eq!(o.run.code(), 0, "{}", o.run.describe());
    let cut = events(&o)
        .into_iter()
        .find(|e| e.data_length.is_some())
        .expect("the tools/list answer stored cut");
    assert!(cut.data.len() <= 4096, "{}", cut.data.len());
    assert!(cut.data_length.unwrap_or(0) > 200_000);
    let inv = mcp_probe_schema::derive::inventory(&o.records);
    assert!(!inv.tools.complete);
    assert!(inv.tools.items.is_empty());
}

#[test]
fn a_null_id_dropped_silently_costs_one_round_trip_not_the_timeout() {
    // The probe legs are sent (no --info); a --timeout far above the run's own length
    // (about a second here), so that a run that waited it out cannot pass even on a
    // loaded machine, and a run that did not cannot fail on one (the bound, LONG / 2,
    // was 15 s and failed once at load 4 with three test binaries running).
    const LONG: u64 = 120;
    let srv = start(Case::DropsNullId);
    let t0 = Instant::now();
    let run = support::collect(&["--timeout", &LONG.to_string(), &srv.origin], &[]);
    let elapsed = t0.elapsed();
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(
        elapsed < Duration::from_secs(LONG / 2),
        "took {elapsed:?}: the null-id request was waited on"
    );
    let bundles = run.bundles();
    let v = support::open(&bundles[0]);
    let legs = |r: &Record, l: &str| r.legs.iter().any(|x| x == l);
    let null_post = v
        .records
        .iter()
        .find(|r| legs(r, leg::NULL_ID.as_str()) && matches!(r.observation, Observation::Http(_)))
        .expect("the null-id POST");
    // No answer on the stream for the null-id request: one `timeout` record names it,
    // as an older collector's did at --timeout, saying the wait ended at the follow-up.
    let linked: Vec<&Record> = v
        .records
        .iter()
        .filter(|r| {
            matches!(&r.observation,
            Observation::SseEvent(e) if e.request == Some(null_post.seq))
        })
        .collect();
    assert_eq!(linked.len(), 1, "{linked:?}");
    let Observation::SseEvent(ended) = &linked[0].observation else {
        unreachable!()
    };
    let error = ended.error.as_ref().expect("an error record");
    assert_eq!(error.kind, ErrorKind::Timeout);
    assert!(legs(linked[0], leg::NULL_ID.as_str()));
    // The follow-up came right after it and its answer is on the stream.
    let followup = v
        .records
        .iter()
        .find(|r| legs(r, leg::NULL_ID_FOLLOWUP.as_str()))
        .expect("the follow-up POST");
    assert!(followup.seq > null_post.seq);
    let Observation::Http(x) = &followup.observation else {
        panic!("{followup:?}")
    };
    let body: Value = serde_json::from_slice(&x.request.body.bytes).expect("json");
    assert_eq!(body["method"], "tools/list");
    assert!(body["id"].is_i64(), "{body}");
    assert!(v.records.iter().any(|r| matches!(&r.observation,
        Observation::SseEvent(e) if e.request == Some(followup.seq) && e.data.contains("ping_tool"))));
    assert!(
        error
            .message
            .contains(&format!("follow-up request (record #{})", followup.seq))
            && error.message.contains("not at the per-request timeout"),
        "{}",
        error.message
    );
    assert!(linked[0].seq > followup.seq);
}

#[test]
fn an_endless_flood_of_events_is_bounded_in_memory_time_and_bundle() {
    let cap: u64 = 4 << 20;
    // A wait long enough for the stream to reach its read limit (16 MiB, about 120 000
    // events here): the bundle must not grow with how many events were read.
    let (timeout, target_timeout) = (20, 40);
    let (o, rss) = run_timed(
        Case::EventFlood,
        (timeout, target_timeout),
        &["--bundle-cap", &cap.to_string(), "--body-cap", "65536"],
        true,
    );
    let rss = rss.expect("measured");
    let size = std::fs::metadata(&o.run.bundles()[0])
        .expect("bundle")
        .len();
    let summaries: Vec<&SseEvent> = events(&o)
        .into_iter()
        .filter(|e| e.unkept.is_some())
        .collect();
    let counted: u64 = summaries
        .iter()
        .filter_map(|e| e.unkept.as_ref())
        .map(|u| u.events)
        .sum();
    let stored = events(&o).iter().filter(|e| e.error.is_none()).count() - summaries.len();
    eprintln!(
        "sse_hostile EventFlood: peak RSS {:.1} MiB, {:.2} s, {} records, bundle {size} bytes \
         (cap {cap}), {stored} events stored, {counted} counted in {} summary record(s)",
        rss as f64 / 1024.0,
        o.elapsed.as_secs_f64(),
        o.records.len(),
        summaries.len(),
    );
    assert!(rss <= (cap + (64 << 20)) / 1024, "peak RSS {rss} KiB");
    // The stream ended at the read limit or the wait at its timeout: a typed error.
    assert!(
        matches!(ending(&o), Some(ErrorKind::Protocol | ErrorKind::Timeout)),
        "{:?}",
        ending(&o)
    );
    // Within the cap and a small margin, however many events came.
    assert!(size <= cap + (256 << 10), "bundle {size} bytes");
    // Past the cap the events were counted, in few records, and the cap is marked.
    let from =
        o.v.evidence
            .run
            .bundle_capped_from
            .expect("bundle_capped_from");
    assert!(
        counted > 0 && summaries.len() <= 4,
        "{counted} in {}",
        summaries.len()
    );
    let first = o
        .records
        .iter()
        .find(|r| matches!(&r.observation, Observation::SseEvent(e) if e.unkept.is_some()))
        .expect("a summary record");
    assert!(first.seq >= from);
    for e in &summaries {
        let u = e.unkept.as_ref().expect("unkept");
        assert_eq!(u.jsonrpc, u.events, "every flood event is a notification");
        assert_eq!(u.responses, 0);
        assert_eq!(u.sha256.len(), 32);
        assert!(u.bytes >= u.events * 80, "{u:?}");
        assert!(u.last_at_us >= u.first_at_us);
        assert!(e.data.is_empty() && e.data_length == Some(u.bytes));
    }
}
