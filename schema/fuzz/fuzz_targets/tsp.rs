//! The RFC 3161 readers on arbitrary bytes: the input as a `TimeStampToken` (what the
//! grader reads from a bundle's unprotected header: `Token::parse` and the structural
//! steps it runs before the signature and chain checks, which live in the grader) and as
//! a `TimeStampResp` (what the collector reads from a TSA: `check_reply`, once with an
//! imprint and nonce that do not match and once with the token's own, so that the path
//! that accepts a reply is reached too). Never a panic.
//! Seed corpus: tokens and replies of `openssl ts` with a P-256 and an RSA TSA
//! (seeds/tsp/), made with lab/tsa/make-certs.sh.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_probe_schema::tsp::der::{Decode, Encode};
use mcp_probe_schema::tsp::x509_tsp::TimeStampResp;
use mcp_probe_schema::tsp::{check_reply, Token};

/// The token's own imprint and nonce, when they have the sizes a request uses.
fn own(token: &Token) -> Option<([u8; 32], [u8; 8])> {
    let imprint = token
        .tst
        .message_imprint
        .hashed_message
        .as_bytes()
        .try_into()
        .ok()?;
    let nonce = token.tst.nonce.as_ref()?.as_bytes().try_into().ok()?;
    Some((imprint, nonce))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(token) = Token::parse(data) {
        let _ = token.signer();
        let _ = token.gen_time_unix();
        let _ = token.serial_hex();
        let _ = token.policy();
        let _ = token.check_imprint(&[0u8; 64]);
        let _ = token.check_message_digest();
    }
    let _ = check_reply(data, &[0u8; 32], &[0u8; 8]);
    let token = TimeStampResp::from_der(data)
        .ok()
        .and_then(|r| r.time_stamp_token)
        .and_then(|t| t.to_der().ok())
        .and_then(|der| Token::parse(&der).ok());
    if let Some((imprint, nonce)) = token.as_ref().and_then(own) {
        if let Ok(der) = check_reply(data, &imprint, &nonce) {
            assert!(Token::parse(&der).is_ok());
        }
    }
});
