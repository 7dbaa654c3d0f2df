//! A minimal HTTP/1.1 server side for test servers: the request as read, reading one off
//! a connection, and the accept loop. Std and serde_json only, so that files included
//! with `#[path]` from the other crate can use it too.

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use serde_json::Value;

/// A request a test server received.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub path: String,
    pub head: String,
    pub body: Vec<u8>,
}

impl Req {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    pub fn rpc_method(&self) -> String {
        self.json()
            .get("method")
            .and_then(|m| m.as_str())
            .unwrap_or("")
            .to_string()
    }
    pub fn rpc_id(&self) -> Value {
        self.json().get("id").cloned().unwrap_or(Value::Null)
    }
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

/// Accept connections on `l` until `stop`, each served by `serve` on its own thread.
pub fn accept(
    l: TcpListener,
    stop: Arc<AtomicBool>,
    serve: impl Fn(TcpStream) + Send + Sync + 'static,
) {
    let serve = Arc::new(serve);
    thread::spawn(move || {
        for s in l.incoming() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(s) = s else { continue };
            let serve = serve.clone();
            thread::spawn(move || serve(s));
        }
    });
}

/// Longest request head and body the server reads.
const MAX_REQ_HEAD: usize = 1 << 20;
const MAX_REQ_BODY: usize = 32 << 20;

/// The next request on a connection; `None` at its end or on a request too large.
pub fn read_request(r: &mut BufReader<TcpStream>) -> Option<Req> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match r.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push_str(&line);
        if head.len() > MAX_REQ_HEAD {
            return None;
        }
    }
    let first = head.lines().next().unwrap_or("").to_string();
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let len = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0)
        .min(MAX_REQ_BODY);
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some(Req {
        method,
        path,
        head,
        body,
    })
}
