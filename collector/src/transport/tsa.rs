//! The RFC 3161 time-stamping client behind `mcp-collect --tsa URL`.
//!
//! One POST of a DER `TimeStampReq` (`application/timestamp-query`) per sealed bundle,
//! over the same recording HTTP/1.1 client as the probes, so it has the run's
//! `--timeout` deadline (connect, TLS, head and body) and a body cap
//! ([`MAX_REPLY_BYTES`]). The exchange is not recorded in the bundle: it happens after
//! the bundle is signed, and what it produced (the token, or why there is none) goes in
//! the bundle's unprotected header ([`mcp_probe_schema::tsp`]). TLS to an https TSA is
//! not what makes the token trustworthy (the token is signed by the TSA); a certificate
//! the stores do not trust does not stop the request.

use std::time::Duration;

use ciborium::value::Value;
use mcp_probe_schema::model::{BodyEnd, Header, HttpOutcome};
use mcp_probe_schema::tsp::{
    self, ReplyError, ERROR_LABEL, MAX_REPLY_BYTES, NONCE_LEN, QUERY_MEDIA_TYPE, REPLY_MEDIA_TYPE,
    TOKEN_LABEL,
};

use super::http::{Client, Request};
use super::tls::Trust;

/// Why no token came back. One line of plain words (stored in the bundle).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TsaError {
    /// The OS random source failed (no nonce).
    #[error("no nonce: the OS random source failed: {0}")]
    Random(getrandom::Error),
    /// No HTTP response (unreachable, refused, timeout, TLS failure).
    #[error("no reply: {0}")]
    Transport(String),
    /// An HTTP status other than 200.
    #[error("HTTP {0} instead of a timestamp reply")]
    Status(u16),
    /// The body is over the cap.
    #[error("the reply is larger than {} KiB", MAX_REPLY_BYTES / 1024)]
    TooLarge,
    /// The body did not end whole.
    #[error("the reply body did not arrive whole: {0}")]
    Incomplete(String),
    /// The reply is not a good answer to the request.
    #[error("{0}")]
    Reply(#[from] ReplyError),
}

/// A time-stamping authority.
#[derive(Debug)]
pub struct Tsa {
    url: url::Url,
    client: Client,
}

impl Tsa {
    /// A TSA at `url` (http or https, validated by the caller), asked with `timeout` per
    /// request.
    pub fn new(url: url::Url, trust: Trust, timeout: Duration) -> Tsa {
        Tsa {
            url,
            client: Client::new(trust, timeout, MAX_REPLY_BYTES),
        }
    }

    /// The TSA's URL.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// Ask for a token over `signature` (the COSE signature bytes) and check the reply:
    /// HTTP 200, whole, under the cap, status granted, our imprint and nonce. Returns the
    /// token (DER).
    pub async fn stamp(&self, signature: &[u8]) -> Result<Vec<u8>, TsaError> {
        self.stamp_imprint(&tsp::imprint(signature)).await
    }

    /// Ask for a token whose message imprint is `imprint` (a SHA-256 digest), checked as
    /// [`stamp`](Self::stamp) checks it: `mcp-collect timestamp` asks over a bundle file
    /// and its earlier sidecars ([`mcp_probe_schema::renewal`]).
    pub async fn stamp_imprint(&self, imprint: &[u8; 32]) -> Result<Vec<u8>, TsaError> {
        let mut random = [0u8; NONCE_LEN];
        getrandom::fill(&mut random).map_err(TsaError::Random)?;
        let nonce = tsp::nonce(random);
        let imprint = *imprint;
        let req = Request {
            method: "POST".into(),
            url: self.url.clone(),
            headers: vec![
                Header::new("Content-Type", QUERY_MEDIA_TYPE),
                Header::new("Accept", REPLY_MEDIA_TYPE),
            ],
            body: tsp::request(&imprint, &nonce),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        let sent = self.client.send(req).await;
        let resp = match sent.exchange.outcome {
            HttpOutcome::Response(r) => r,
            HttpOutcome::Error(e) => return Err(TsaError::Transport(e.to_string())),
        };
        if resp.status != 200 {
            return Err(TsaError::Status(resp.status));
        }
        if resp.body.length > MAX_REPLY_BYTES || matches!(resp.body.end, BodyEnd::LimitReached) {
            return Err(TsaError::TooLarge);
        }
        match &resp.body.end {
            BodyEnd::Complete => {}
            BodyEnd::Error(e) => return Err(TsaError::Incomplete(e.to_string())),
            other => return Err(TsaError::Incomplete(format!("{other:?}"))),
        }
        Ok(tsp::check_reply(&resp.body.bytes, &imprint, &nonce)?)
    }

    /// The unprotected-header entries for a bundle whose signature is `signature`: the
    /// token under [`TOKEN_LABEL`], or the reason there is none under [`ERROR_LABEL`]
    /// (`Err` carries it too, for the warning).
    pub async fn entries(&self, signature: &[u8]) -> Result<Vec<(String, Value)>, String> {
        match self.stamp(signature).await {
            Ok(token) => Ok(vec![(TOKEN_LABEL.to_string(), Value::Bytes(token))]),
            Err(e) => Err(format!("--tsa {}: {e}", self.url)),
        }
    }
}

/// The entry that records why a bundle has no timestamp.
pub fn error_entry(why: &str) -> Vec<(String, Value)> {
    vec![(ERROR_LABEL.to_string(), Value::Text(why.to_string()))]
}

/// Check a `--tsa` value: an absolute http or https URL with a host and no credentials
/// (they would be stored in the bundle's failure notes and printed).
pub fn parse_url(s: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(s).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(format!("the scheme is {}, not http or https", u.scheme()));
    }
    if u.host().is_none() {
        return Err("the URL has no host".into());
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(
            "the URL carries credentials (user:password@), which are not sent to a TSA".into(),
        );
    }
    Ok(u)
}

/// A `--tsa` value as an error may print it: a URL's user name and password (which
/// [`parse_url`] refuses) replaced by `***`, so the refusal does not print the credential
/// it refuses; anything else as given.
pub fn shown_url(s: &str) -> String {
    match url::Url::parse(s) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            // Both setters fail only for URLs that cannot have credentials.
            let _ = u.set_username(if u.username().is_empty() { "" } else { "***" });
            let _ = u.set_password(u.password().map(|_| "***"));
            u.to_string()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_url_is_shown_without_its_credentials() {
        let shown = shown_url("https://alice:s3cret-pw@tsa.example/tsa");
        assert_eq!(shown, "https://***:***@tsa.example/tsa");
        assert!(!shown.contains("s3cret-pw") && !shown.contains("alice"));
        assert_eq!(
            shown_url("https://:pw@tsa.example/"),
            "https://:***@tsa.example/"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:3180/tsa"),
            "http://127.0.0.1:3180/tsa"
        );
        assert_eq!(shown_url("not a url"), "not a url");
    }

    #[test]
    fn tsa_urls_are_http_or_https_without_credentials() {
        assert!(parse_url("http://127.0.0.1:3180/tsa").is_ok());
        assert!(parse_url("https://tsa.example/").is_ok());
        for bad in [
            "ftp://x/",
            "tsa.example",
            "https://u:p@tsa.example/",
            "file:///x",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
