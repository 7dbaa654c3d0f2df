//! Deadlines and answers only from complete bodies, against scripted loopback servers
//! that stall on purpose: a body dripped one byte a second, an event stream kept alive
//! with comments, a dripped head, a truncated chunked answer, interim 1xx responses and
//! a 101 Switching Protocols. Each run ends sealed, within its deadline.

mod support;

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{BodyEnd, ErrorKind, HttpOutcome, Observation, Record, RunStatus};
use mcp_probe_schema::vocab::leg;
use serde_json::{json, Value};
use support::*;

/// What the raw server does with one request: write these bytes, then (optionally)
/// drip forever, one piece per interval, until the peer goes away.
struct Answer {
    head: Vec<u8>,
    drip: Option<(Vec<u8>, Duration)>,
    close: bool,
}

impl Answer {
    fn now(bytes: Vec<u8>) -> Answer {
        Answer {
            head: bytes,
            drip: None,
            close: false,
        }
    }
}

/// A raw HTTP/1.1 server on 127.0.0.1: one thread per connection, requests parsed by
/// Content-Length, answers written (and dripped) as `answer` says. Counts connections.
struct Raw {
    url: String,
    connections: Arc<AtomicUsize>,
}

fn raw(answer: fn(&str, &Value) -> Answer) -> Raw {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || serve_conn(s, answer));
        }
    });
    Raw {
        url: format!("http://127.0.0.1:{port}/mcp"),
        connections,
    }
}

fn serve_conn(s: TcpStream, answer: fn(&str, &Value) -> Answer) {
    let Ok(mut w) = s.try_clone() else { return };
    let mut r = BufReader::new(s);
    while let Some(req) = read_request(&mut r) {
        let msg = req.json();
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let a = answer(method, &msg);
        if w.write_all(&a.head).is_err() {
            return;
        }
        if let Some((piece, every)) = a.drip {
            loop {
                thread::sleep(every);
                if w.write_all(&piece).and_then(|_| w.flush()).is_err() {
                    return;
                }
            }
        }
        if a.close {
            return;
        }
    }
}

fn json_body(status: u16, body: &Value) -> Vec<u8> {
    let b = body.to_string();
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
        b.len()
    )
    .into_bytes()
}

/// A valid 2026-07-28 `server/discover` answer declaring tools, resources and prompts.
fn discover(msg: &Value) -> Answer {
    Answer::now(json_body(
        200,
        &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stall", "version": "1"}}
        }}),
    ))
}

fn http_records(v: &mcp_probe_schema::Verified) -> Vec<&Record> {
    v.records
        .iter()
        .filter(|r| matches!(r.observation, Observation::Http(_)))
        .collect()
}

/// Asserts the bundle was sealed interrupted by the 5 s target deadline, and that no
/// request took longer than the 2 s request timeout (plus scheduling slack).
fn assert_cut_by_deadline(run: &Run, elapsed: Duration) -> mcp_probe_schema::Verified {
    assert!(
        elapsed < Duration::from_secs(12),
        "took {elapsed:?}: the target deadline did not bound the run\n{}",
        run.describe()
    );
    assert!(
        elapsed >= Duration::from_secs(5),
        "ended after {elapsed:?}, before the deadline could pass\n{}",
        run.describe()
    );
    let bundles = run.bundles();
    assert_eq!(bundles.len(), 1, "{}", run.describe());
    let v = open(&bundles[0]);
    assert_eq!(
        v.evidence.run.status,
        RunStatus::Interrupted,
        "{}",
        run.describe()
    );
    assert!(
        failure(&v).starts_with("target deadline of 5 s passed during"),
        "{:?}",
        v.evidence.run.failure
    );
    assert_eq!(v.evidence.run.options.target_timeout_ms, Some(5000));
    assert!(
        run.stderr().contains("target deadline of 5 s passed"),
        "{}",
        run.describe()
    );
    for r in http_records(&v) {
        assert!(
            r.duration_us < 3_000_000,
            "record {} took {} µs, past the 2 s request timeout",
            r.seq,
            r.duration_us
        );
    }
    v
}

#[test]
fn a_body_dripped_one_byte_a_second_is_cut_by_the_timeout_and_the_target_deadline() {
    let srv = raw(|method, msg| {
        match method {
        "server/discover" => discover(msg),
        // Every list: a head promising 1000 bytes, then one byte a second.
        _ => Answer {
            head: b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
                .to_vec(),
            drip: Some((b" ".to_vec(), Duration::from_secs(1))),
            close: false,
        },
    }
    });
    let t0 = Instant::now();
    let run = collect(&["--timeout", "2", "--target-timeout", "5", &srv.url], &[]);
    let v = assert_cut_by_deadline(&run, t0.elapsed());
    // A session was established before the deadline: the target was reached.
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(
        failure(&v).contains("in flight"),
        "the request the deadline cut is named: {}",
        failure(&v)
    );
    // The dripped body ended in a timeout at the request deadline, not one gap later.
    let dripped = http_records(&v)
        .into_iter()
        .filter(|r| r.legs.iter().any(|l| l == leg::INVENTORY_TOOLS))
        .find_map(|r| match &r.observation {
            Observation::Http(x) => match &x.outcome {
                HttpOutcome::Response(resp) => Some((r.duration_us, resp.body.end.clone())),
                _ => None,
            },
            _ => None,
        })
        .expect("the dripped tools/list page is recorded");
    match dripped.1 {
        BodyEnd::Error(e) => assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}"),
        other => panic!("{other:?}"),
    }
    assert!(dripped.0 >= 1_900_000, "{} µs", dripped.0);
}

#[test]
fn an_event_stream_kept_alive_with_comments_is_cut_by_the_timeout_and_the_target_deadline() {
    let srv = raw(|method, msg| {
        match method {
        "server/discover" => discover(msg),
        // Every list: an event stream that never answers, kept alive with comments.
        _ => Answer {
            head: b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n: open\n\n"
                .to_vec(),
            drip: Some((b": keepalive\n\n".to_vec(), Duration::from_millis(200))),
            close: false,
        },
    }
    });
    let t0 = Instant::now();
    let run = collect(&["--timeout", "2", "--target-timeout", "5", &srv.url], &[]);
    let v = assert_cut_by_deadline(&run, t0.elapsed());
    assert_eq!(run.code(), 0, "{}", run.describe());
    let streamed = http_records(&v)
        .into_iter()
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => match &x.outcome {
                HttpOutcome::Response(resp) => Some(resp.body.end.clone()),
                _ => None,
            },
            _ => None,
        })
        .filter(|end| matches!(end, BodyEnd::Error(e) if e.kind == ErrorKind::Timeout))
        .count();
    assert!(streamed >= 1, "a kept-alive stream ended in a timeout");
    // The inventory the stream never answered is not complete.
    let inv = mcp_probe_schema::derive::inventory(&v.records);
    assert!(!inv.tools.complete, "{:?}", inv.tools);
}

#[test]
fn a_head_dripped_one_byte_a_second_is_bounded_by_the_request_timeout() {
    let srv = raw(|_, _| Answer {
        head: b"H".to_vec(),
        drip: Some((b"T".to_vec(), Duration::from_secs(1))),
        close: false,
    });
    let t0 = Instant::now();
    let run = collect(&["--timeout", "2", "--target-timeout", "60", &srv.url], &[]);
    let elapsed = t0.elapsed();
    // One candidate, one request: detection stops at the first transport failure.
    assert!(
        elapsed < Duration::from_secs(8),
        "{elapsed:?}\n{}",
        run.describe()
    );
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    let v = open(&run.bundles()[0]);
    assert_eq!(v.evidence.run.status, RunStatus::Failed);
    let first = http_records(&v)[0];
    match &first.observation {
        Observation::Http(x) => match &x.outcome {
            HttpOutcome::Error(e) => assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}"),
            o => panic!("{o:?}"),
        },
        o => panic!("{o:?}"),
    }
    assert!(first.duration_us < 3_000_000, "{} µs", first.duration_us);
}

#[test]
fn a_truncated_chunked_initialize_answer_is_not_read_as_the_answer() {
    let srv = raw(|method, msg| match method {
        "server/discover" => Answer::now(json_body(404, &json!({}))),
        // A whole JSON-RPC result in the first chunk, then the connection closes
        // without the terminating chunk: the body ended in a transport error.
        "initialize" => {
            let b = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "cut", "version": "1"}}})
            .to_string();
            Answer {
                head: format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{b}\r\n",
                    b.len()
                )
                .into_bytes(),
                drip: None,
                close: true,
            }
        }
        _ => Answer::now(json_body(404, &json!({}))),
    });
    let run = collect(&["--timeout", "5", &srv.url], &[]);
    assert_eq!(run.code(), 3, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    assert!(
        v.evidence.session.is_none()
            || v.evidence
                .session
                .as_ref()
                .is_some_and(|s| s.revision.is_none()),
        "a session was negotiated from a truncated body: {:?}",
        v.evidence.session
    );
    let why = failure(&v);
    assert!(
        why.contains("transport error") && why.contains("not read as an answer"),
        "{why}"
    );
    assert!(!why.contains("protocolVersion \"\""), "{why}");
    // The truncated body is recorded as such.
    let cut = http_records(&v).into_iter().any(|r| match &r.observation {
        Observation::Http(x) => matches!(&x.outcome,
            HttpOutcome::Response(resp) if matches!(resp.body.end, BodyEnd::Error(_))),
        _ => false,
    });
    assert!(cut, "the truncated body is recorded with its error");
}

#[test]
fn interim_responses_are_counted_and_bounded() {
    let srv = raw(|method, msg| match method {
        "server/discover" => {
            let mut out = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n".to_vec();
            out.extend(discover(msg).head);
            Answer::now(out)
        }
        // Every other request: more interim responses than the bound allows.
        _ => Answer::now(b"HTTP/1.1 100 Continue\r\n\r\n".repeat(40)),
    });
    let run = collect(&["--timeout", "5", "--target-timeout", "30", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    let outcomes: Vec<&HttpOutcome> = http_records(&v)
        .into_iter()
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => Some(&x.outcome),
            _ => None,
        })
        .collect();
    match outcomes[0] {
        HttpOutcome::Response(r) => {
            assert_eq!(r.status, 200);
            assert_eq!(r.interim, 3);
        }
        o => panic!("{o:?}"),
    }
    match outcomes[1] {
        HttpOutcome::Error(e) => {
            assert_eq!(e.kind, ErrorKind::Protocol);
            assert!(e.message.contains("more than 16 interim"), "{e:?}");
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn a_connection_is_never_reused_after_101_switching_protocols() {
    let srv = raw(|method, msg| {
        match method {
        "server/discover" => Answer::now(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
                .to_vec(),
        ),
        "initialize" => Answer::now(json_body(
            200,
            &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "upgrade", "version": "1"}}}),
        )),
        _ => Answer::now(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()),
    }
    });
    let run = collect(&["--timeout", "5", "--target-timeout", "30", &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    let conns: Vec<(u16, Option<u64>)> = http_records(&v)
        .into_iter()
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => match &x.outcome {
                HttpOutcome::Response(resp) => Some((resp.status, x.connection)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(conns[0].0, 101, "{conns:?}");
    assert_eq!(conns[1].0, 200, "{conns:?}");
    assert_ne!(conns[0].1, conns[1].1, "reused after 101: {conns:?}");
    assert!(srv.connections.load(Ordering::SeqCst) >= 2);
}
