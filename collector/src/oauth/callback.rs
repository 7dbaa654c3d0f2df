//! The hand-written loopback redirect server of the interactive login: it serves
//! `http://127.0.0.1:<port>/callback` until an authorization response with our `state`
//! arrives, validates it ([`validate_callback`]: `state`, then RFC 9207 `iss`, then
//! `error`, then one `code`) and answers the browser with a short page.

use std::collections::HashMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::error::{CallbackError, LoginError};

/// Path of the loopback redirect URI (`http://127.0.0.1:<port>/callback`).
pub const CALLBACK_PATH: &str = "/callback";
/// A connection to the loopback listener must send its request head within this time.
const CALLBACK_HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest request head the loopback listener reads.
const CALLBACK_HEAD_MAX: usize = 16 * 1024;

/// Check an authorization response (the query of the redirect to the loopback
/// listener) and return its code. Order: our `state` (else [`CallbackError::State`]:
/// the listener ignores such a request and keeps waiting), then RFC 9207 `iss` (must
/// equal `issuer` when present, and be present when `iss_required`), then `error`,
/// then exactly one `code`.
pub fn validate_callback(
    query: &str,
    expected_state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, CallbackError> {
    let mut params: HashMap<String, Vec<String>> = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        params
            .entry(k.into_owned())
            .or_default()
            .push(v.into_owned());
    }
    let one = |name: &str| -> Result<Option<&str>, ()> {
        match params.get(name).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([v]) => Ok(Some(v.as_str())),
            Some(_) => Err(()),
        }
    };
    match one("state") {
        Ok(Some(s)) if s == expected_state => {}
        _ => return Err(CallbackError::State),
    }
    match one("iss") {
        Ok(Some(got)) if got == issuer => {}
        Ok(Some(got)) => {
            return Err(CallbackError::IssuerMismatch {
                expected: issuer.to_string(),
                got: got.to_string(),
            })
        }
        Ok(None) if iss_required => {
            return Err(CallbackError::IssuerMissing {
                expected: issuer.to_string(),
            })
        }
        Ok(None) => {}
        Err(()) => {
            return Err(CallbackError::IssuerMismatch {
                expected: issuer.to_string(),
                got: params.get("iss").map(|v| v.join(", ")).unwrap_or_default(),
            })
        }
    }
    if let Some(error) = params.get("error").and_then(|v| v.first()) {
        return Err(CallbackError::Denied {
            error: error.clone(),
            description: params
                .get("error_description")
                .and_then(|v| v.first())
                .cloned(),
        });
    }
    match one("code") {
        Ok(Some(code)) if !code.is_empty() => Ok(code.to_string()),
        _ => Err(CallbackError::NoCode),
    }
}

/// Serve the loopback redirect until an authorization response with our `state`
/// arrives (then validated: [`validate_callback`]) or `timeout` passes. Other paths get
/// 404; a callback with another `state` gets 400 and is ignored.
pub(super) async fn wait_for_code(
    listener: TcpListener,
    state: &str,
    issuer: &str,
    iss_required: bool,
    timeout: Duration,
) -> Result<String, LoginError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let (tx, mut rx) = mpsc::channel::<(String, TcpStream)>(16);
    let mut readers = tokio::task::JoinSet::new();
    let mut ignored = 0u32;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {
                return Err(LoginError::CallbackTimeout { waited: timeout, ignored });
            }
            accepted = listener.accept() => {
                while readers.try_join_next().is_some() {}
                match accepted {
                    Ok((stream, _)) => {
                        let tx = tx.clone();
                        readers.spawn(async move {
                            if let Some(hit) = read_callback(stream).await {
                                let _ = tx.send(hit).await;
                            }
                        });
                    }
                    // Out of descriptors and the like: do not spin.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            Some((query, mut stream)) = rx.recv() => {
                match validate_callback(&query, state, issuer, iss_required) {
                    Ok(code) => {
                        respond(&mut stream, 200, "Login complete",
                            "mcp-collect received the authorization. You can close this window.").await;
                        return Ok(code);
                    }
                    Err(CallbackError::State) => {
                        ignored += 1;
                        respond(&mut stream, 400, "Not this login",
                            "This redirect does not carry the state of the pending mcp-collect login.").await;
                    }
                    Err(e) => {
                        respond(&mut stream, 400, "Login failed", &e.to_string()).await;
                        return Err(e.into());
                    }
                }
            }
        }
    }
}

/// Read one request head; a `GET /callback?…` is handed on with its query, anything
/// else is answered 404 here.
pub(super) async fn read_callback(mut stream: TcpStream) -> Option<(String, TcpStream)> {
    let mut buf = Vec::with_capacity(1024);
    let head = tokio::time::timeout(CALLBACK_HEAD_TIMEOUT, async {
        let mut chunk = [0u8; 2048];
        loop {
            if buf.windows(4).any(|w| w == b"\r\n\r\n") {
                return true;
            }
            if buf.len() > CALLBACK_HEAD_MAX {
                return false;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    if head != Ok(true) {
        return None;
    }
    let mut hs = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut hs);
    let target = match req.parse(&buf) {
        Ok(httparse::Status::Complete(_)) if req.method == Some("GET") => {
            req.path.unwrap_or("").to_string()
        }
        _ => String::new(),
    };
    let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
    if path == CALLBACK_PATH {
        return Some((query.to_string(), stream));
    }
    respond(&mut stream, 404, "Not found", "Nothing here.").await;
    None
}

pub(super) fn html_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&#39;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

pub(super) async fn respond(stream: &mut TcpStream, status: u16, title: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t}</title></head><body><h1>{t}</h1><p>{x}</p></body></html>\n",
        t = html_escape(title),
        x = html_escape(text)
    );
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    // The page's URL carries the code: no caching, no referrer.
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.flush().await?;
        stream.shutdown().await
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_checks_state_then_iss_then_error_then_code() {
        let iss = "http://127.0.0.1:9";
        let ok = |q: &str, req: bool| validate_callback(q, "S", iss, req);
        assert_eq!(
            ok("code=c0de&state=S&iss=http%3A%2F%2F127.0.0.1%3A9", true),
            Ok("c0de".into())
        );
        assert_eq!(ok("code=c0de&state=S", false), Ok("c0de".into()));
        assert_eq!(
            ok("code=c0de&state=T&iss=x", true),
            Err(CallbackError::State)
        );
        assert_eq!(ok("code=c0de", false), Err(CallbackError::State));
        assert_eq!(
            ok("code=c0de&state=S&state=S", false),
            Err(CallbackError::State)
        );
        assert!(matches!(
            ok("code=c0de&state=S&iss=http://evil", false),
            Err(CallbackError::IssuerMismatch { .. })
        ));
        assert!(matches!(
            ok("code=c0de&state=S", true),
            Err(CallbackError::IssuerMissing { .. })
        ));
        assert!(matches!(
            ok("error=access_denied&state=S", false),
            Err(CallbackError::Denied { .. })
        ));
        assert_eq!(ok("state=S&code=", false), Err(CallbackError::NoCode));
        assert_eq!(
            ok("state=S&code=a&code=b", false),
            Err(CallbackError::NoCode)
        );
    }
}
