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
use mcp_probe_collector::http::{Client, Request};
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
        let trust = mcp_probe_collector::tls::Trust::load(None).expect("trust");
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

fuzz_target!(|data: &[u8]| {
    let e = env();
    if let Ok(mut g) = e.input.lock() {
        *g = data.to_vec();
    }
    let stream = data.first().is_some_and(|b| b & 1 == 1);
    let req = Request {
        method: "POST".into(),
        url: e.url.clone(),
        headers: vec![
            Header::new("Content-Type", "application/json"),
            Header::new("Accept", "application/json, text/event-stream"),
        ],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
        await_id: stream.then(|| serde_json::json!(1)),
        head_only_stream: data.get(1).is_some_and(|b| b & 1 == 1),
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
