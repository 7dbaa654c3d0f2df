//! The recording HTTP client's response reader on arbitrary bytes, end to end: a loopback
//! listener answers each request with the fuzz input and closes; `Client::send` reads it
//! (head, `Content-Length` / `chunked` / read-to-close bodies, event streams awaiting a
//! JSON-RPC id, 1xx interim responses, resets). Never a panic, never a hang past the
//! request deadline, and a stored body never exceeds the body cap nor its counted length.
#![no_main]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_probe_collector::transport::http::{Client, Request};
use mcp_probe_schema::model::{Header, HttpOutcome};

const CAP: u64 = 4096;

struct Env {
    rt: tokio::runtime::Runtime,
    client: Client,
    url: url::Url,
    input: Arc<Mutex<Vec<u8>>>,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let input = Arc::new(Mutex::new(Vec::new()));
        let inp = input.clone();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                // Read the request head, answer with the input, close.
                let mut head = Vec::new();
                let mut b = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&b[..n]),
                    }
                }
                let bytes = inp.lock().map(|g| g.clone()).unwrap_or_default();
                let _ = s.write_all(&bytes);
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        });
        let trust = mcp_probe_collector::transport::tls::Trust::load(None).expect("trust");
        Env {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            client: Client::new(trust, Duration::from_secs(2), CAP),
            url: url::Url::parse(&format!("http://127.0.0.1:{port}/mcp")).expect("url"),
            input,
        }
    })
}

/// The first byte picks how the request is made and what the answer starts with, so the
/// fuzzer reaches headers and bodies at once: bit 0 awaits JSON-RPC id 1 on an event
/// stream, bit 1 reads only the head of a stream, bit 2 prefixes a `200` status line, bit
/// 3 a `Transfer-Encoding: chunked` header, bit 4 `Content-Type: text/event-stream`, bit
/// 5 `Content-Length` of the rest, bit 6 the blank line ending the head.
fn answer(flags: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    if flags & 4 != 0 {
        v.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    }
    if flags & 8 != 0 {
        v.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    if flags & 16 != 0 {
        v.extend_from_slice(b"Content-Type: text/event-stream\r\n");
    }
    if flags & 32 != 0 {
        v.extend_from_slice(format!("Content-Length: {}\r\n", rest.len()).as_bytes());
    }
    if flags & 64 != 0 {
        v.extend_from_slice(b"\r\n");
    }
    v.extend_from_slice(rest);
    v
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let e = env();
    if let Ok(mut g) = e.input.lock() {
        *g = answer(flags, rest);
    }
    let req = Request {
        method: "POST".into(),
        url: e.url.clone(),
        headers: vec![
            Header::new("Content-Type", "application/json"),
            Header::new("Accept", "application/json, text/event-stream"),
        ],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
        await_id: (flags & 1 != 0).then(|| serde_json::json!(1)),
        head_only_stream: flags & 2 != 0,
        connect_to: None,
    };
    let sent = e.rt.block_on(e.client.send(req));
    e.rt.block_on(e.client.close(&e.url));
    assert!(
        sent.duration < Duration::from_secs(4),
        "{:?}",
        sent.duration
    );
    if let HttpOutcome::Response(r) = &sent.exchange.outcome {
        assert!(r.body.bytes.len() as u64 <= CAP);
        assert!(r.body.bytes.len() as u64 <= r.body.length);
        assert_eq!(r.body.sha256.len(), 32);
    }
});
