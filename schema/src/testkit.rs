//! Builders of plausible bundles for tests, benchmarks and fuzz seeds (not used by the
//! binaries). Kept in the library so every crate's tests share one builder.

use crate::bundle::{seal, Chain, SecretKey};
use crate::model::*;
use crate::vocab::leg;

/// A fixed key for reproducible test bundles (never used by the binaries).
pub fn test_key(n: u8) -> SecretKey {
    SecretKey::from_seed([n; 32])
}

/// A body stored whole.
pub fn body(bytes: &[u8]) -> Body {
    Body {
        bytes: bytes.to_vec(),
        length: bytes.len() as u64,
        sha256: crate::bundle::sha256(bytes).to_vec(),
        end: BodyEnd::Complete,
    }
}

/// An HTTP record: POST of `request` JSON to `url`, answered `status` with a JSON body.
pub fn http_record<L: AsRef<str>>(
    legs: &[L],
    url: &str,
    request: &str,
    status: u16,
    response: &[u8],
) -> Record {
    Record {
        seq: 0,
        legs: legs.iter().map(|s| s.as_ref().to_string()).collect(),
        started_at: 1_764_480_000_000_000,
        duration_us: 1500,
        prev: Vec::new(),
        observation: Observation::Http(HttpExchange {
            request: HttpRequest {
                method: "POST".into(),
                url: url.into(),
                version: "HTTP/1.1".into(),
                headers: vec![
                    Header::new("Content-Type", "application/json"),
                    Header::new("Accept", "application/json, text/event-stream"),
                ],
                body: body(request.as_bytes()),
            },
            outcome: HttpOutcome::Response(HttpResponse {
                version: "HTTP/1.1".into(),
                status,
                reason: "OK".into(),
                headers: vec![Header::new("content-type", "application/json")],
                body: body(response),
                interim: 0,
            }),
            connection: Some(1),
            first_attempt: None,
            refused: None,
        }),
        redactions: Vec::new(),
    }
}

/// Evidence around `records` (chained here), for `endpoint`.
pub fn evidence(endpoint: &str, records: Vec<Record>) -> Evidence {
    let run_id = "00112233445566778899aabbccddeeff".to_string();
    let mut chain = Chain::new(&run_id);
    for r in records {
        chain.append(r);
    }
    let (records, head) = chain.into_parts();
    Evidence {
        format: FORMAT_ID.into(),
        collector: CollectorInfo {
            name: "mcp-collect".into(),
            version: "0.0.0-test".into(),
            build: "test".into(),
            target: None,
            rustc: None,
        },
        run: Run {
            run_id,
            started_at: 1_764_480_000_000_000,
            finished_at: 1_764_480_001_000_000,
            status: RunStatus::Complete,
            failure: None,
            options: options(),
            inputs: None,
            bundle_capped_from: None,
        },
        target: Target {
            as_typed: endpoint.into(),
            base_url: endpoint.split("/mcp").next().unwrap_or(endpoint).into(),
            candidates: vec![endpoint.into()],
            endpoint: Some(endpoint.into()),
            addresses: vec!["127.0.0.1:8080".into()],
            transport: Default::default(),
            message_endpoint: None,
            source: None,
        },
        session: Some(Session {
            endpoint: endpoint.into(),
            auth_required: false,
            authenticated: false,
            era: Some(Era::Legacy),
            revision: Some("2025-11-25".into()),
            server_info: Some(serde_json::json!({"name": "test-server", "version": "1.0.0"})),
            capabilities: Some(serde_json::json!({"tools": {}})),
            session_id: None,
            negotiated_in: Some(0),
            other_eras: Vec::new(),
            authorization_defaults: None,
            step_up: None,
            resource_refused_in: None,
            dpop: None,
        }),
        tokens: Vec::new(),
        minted_tokens: Vec::new(),
        records,
        chain_head: head.to_vec(),
    }
}

/// A sealed bundle of `n` tools/list pages, each response body about `body_len` bytes.
pub fn sample_bundle(key: &SecretKey, n: usize, body_len: usize) -> Vec<u8> {
    let url = "http://127.0.0.1:8080/mcp";
    let filler = "x".repeat(body_len.saturating_sub(120));
    let records = (0..n)
        .map(|i| {
            let req = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/list","params":{{}}}}"#);
            let resp = format!(
                r#"{{"jsonrpc":"2.0","id":{i},"result":{{"tools":[{{"name":"t{i}","description":"{filler}","inputSchema":{{"type":"object"}}}}]}}}}"#
            );
            http_record(&[leg::INVENTORY_TOOLS], url, &req, 200, resp.as_bytes())
        })
        .collect();
    seal(&evidence(url, records), key)
}

/// A completed TLS 1.3 handshake with `sni`, presenting `chain` (DER bytes of one
/// certificate), judged by `verification`, ended by `error` (none for a clean one).
pub fn tls_handshake(
    sni: &str,
    chain: &[u8],
    verification: Vec<TrustCheck>,
    error: Option<TransportError>,
) -> TlsHandshake {
    TlsHandshake {
        connection: 1,
        sni: Some(sni.into()),
        peer: "127.0.0.1:443".into(),
        version: Some("TLSv1_3".into()),
        cipher_suite: Some("TLS13_AES_128_GCM_SHA256".into()),
        alpn: Some(b"http/1.1".to_vec()),
        chain: vec![serde_bytes::ByteBuf::from(chain.to_vec())],
        verification,
        error,
        via_proxy: None,
        client_auth: None,
    }
}

/// The collector's default options (30 s per request, 1 MiB bodies, 100 pages).
pub fn options() -> Options {
    Options {
        timeout_ms: 30_000,
        body_cap: 1 << 20,
        max_pages: 100,
        info_only: false,
        token_env: None,
        ca_file: None,
        plaintext_port: 80,
        target_timeout_ms: None,
        bundle_cap: None,
        connectivity: None,
        pre_registered_client: None,
        login: None,
    }
}

/// The encoded protected header a bundle signed by `key` carries (`alg` EdDSA, the
/// content type, the key id), for tests that build a bundle part by part ([`sign_raw`]).
pub fn protected_header(key: &SecretKey) -> Vec<u8> {
    use coset::CborSerializable;
    crate::bundle::cose_headers(key)
        .0
        .to_vec()
        .expect("the protected header encodes")
}

/// The encoded unprotected header a bundle signed by `key` carries (its public key).
pub fn unprotected_header(key: &SecretKey) -> Vec<u8> {
    use coset::AsCborValue;
    let value = crate::bundle::cose_headers(key)
        .1
        .to_cbor_value()
        .expect("the unprotected header encodes");
    let mut out = Vec::new();
    ciborium::into_writer(&value, &mut out).expect("the unprotected header encodes");
    out
}

/// The bytes COSE signs for a bundle of these parts: `["Signature1", protected, h'',
/// payload]`.
pub fn sig_structure(protected: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut m = crate::bundle::sig_structure_head(protected, payload.len() as u64);
    m.extend_from_slice(payload);
    m
}

/// A tagged COSE_Sign1 of exactly these parts, as stored: `protected` and `unprotected`
/// are encoded header maps, `payload` the payload bytes, `signature` the signature bytes.
pub fn assemble(protected: &[u8], unprotected: &[u8], payload: &[u8], signature: &[u8]) -> Vec<u8> {
    use crate::bundle::cbor_head;
    let mut out = vec![0xd2, 0x84];
    out.extend(cbor_head(2, protected.len() as u64));
    out.extend_from_slice(protected);
    out.extend_from_slice(unprotected);
    out.extend(cbor_head(2, payload.len() as u64));
    out.extend_from_slice(payload);
    out.extend(cbor_head(2, signature.len() as u64));
    out.extend_from_slice(signature);
    out
}

/// A bundle of exactly these parts with a valid Ed25519 signature by `key` over them:
/// bytes no collector writes (hostile headers or payloads), signed so that only the
/// strictness of verification can refuse them.
pub fn sign_raw(key: &SecretKey, protected: &[u8], unprotected: &[u8], payload: &[u8]) -> Vec<u8> {
    use ed25519_dalek::Signer;
    let signature = key
        .signing_key()
        .sign(&sig_structure(protected, payload))
        .to_bytes();
    assemble(protected, unprotected, payload, &signature)
}

/// The strict-CBOR check the verifier makes of each record (one well-formed item, nested
/// at most 256 levels, no map key twice, nothing after it), on `bytes` alone: `Err` with
/// the verifier's error when it fails. For the tests of the record decoder, which let the
/// verifier skip this check for the records it reads to their end.
pub fn strict_record(bytes: &[u8]) -> Result<(), crate::bundle::VerifyError> {
    crate::bundle::strict_record_alone(bytes)
}
