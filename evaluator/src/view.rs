//! `mcp-grade show --json`: the whole decoded bundle as one JSON document.
//!
//! Byte strings: digests and key material (`sha256`, `prev`, `chain_head`,
//! `public_key_hex`) are lower-case hex; every other byte string is standard base64 with
//! padding in a field whose name ends in `base64`. Bodies carry `text` as well when their
//! stored bytes are valid UTF-8, and header values are text (`value`) when valid UTF-8,
//! otherwise `value` is null and `value_base64` holds the bytes. Times are kept as the
//! bundle stores them (UTC microseconds) with an RFC 3339 rendering beside them
//! (`*_utc`). `docs/bundle.md` documents the layout.

use mcp_probe_schema::derive::{inventory, ListInventory};
use mcp_probe_schema::model::*;
use mcp_probe_schema::PublicKey;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::fmt::{b64, hex, utc};
use crate::load::Loaded;

/// The whole `show --json` document (field order is key order).
#[derive(Serialize, JsonSchema)]
pub struct Document {
    format: String,
    collector: CollectorJ,
    run: RunJ,
    target: TargetJ,
    session: Option<SessionJ>,
    tokens: Vec<TokenJ>,
    /// Facts of the tokens the collector's probe grants obtained (3.3.1b); absent when
    /// there are none, and for bundles from before the field.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    minted_tokens: Vec<MintedTokenJ>,
    records: Vec<RecordOrError>,
    chain_head: String,
    signer: Option<SignerJ>,
    verification: VerificationJ,
    negotiated_revision: Option<String>,
    server_info: Option<Value>,
    auth_required: Option<bool>,
    inventory: InventoryJ,
    inventory_pages: PagesJ,
}

#[derive(Serialize, JsonSchema)]
struct CollectorJ {
    name: String,
    version: String,
    build: String,
    /// Target triple of the collector build (null in bundles before 0.2.0).
    target: Option<String>,
    /// Compiler of the collector build, `rustc X.Y.Z` (null in bundles before 0.2.0).
    rustc: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct TargetJ {
    as_typed: String,
    base_url: String,
    candidates: Vec<String>,
    endpoint: Option<String>,
    addresses: Vec<String>,
    /// `streamable-http`, `http+sse` or `stdio`.
    transport: String,
    /// HTTP+SSE: the URL the stream's `endpoint` event named.
    message_endpoint: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct VerificationJ {
    valid: bool,
    problem: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct InventoryJ {
    /// Every item of every page; null when the list was not requested.
    tools: Option<Vec<Value>>,
    resources: Option<Vec<Value>>,
    resource_templates: Option<Vec<Value>>,
    prompts: Option<Vec<Value>>,
}

#[derive(Serialize, JsonSchema)]
struct PageJ {
    observed: bool,
    pages: u32,
    complete: bool,
    stopped: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct PagesJ {
    tools: PageJ,
    resources: PageJ,
    resource_templates: PageJ,
    prompts: PageJ,
}

#[derive(Serialize, JsonSchema)]
struct SignerJ {
    key_id: String,
    public_key_hex: String,
}

#[derive(Serialize, JsonSchema)]
struct RunJ {
    run_id: String,
    started_at: i64,
    started_at_utc: String,
    finished_at: i64,
    finished_at_utc: String,
    status: &'static str,
    failure: Option<String>,
    options: OptionsJ,
    inputs: Option<Value>,
}

#[derive(Serialize, JsonSchema)]
struct OptionsJ {
    timeout_ms: u64,
    body_cap: u64,
    max_pages: u32,
    info_only: bool,
    token_env: Option<String>,
    ca_file: Option<CaFileJ>,
    /// `--header`, the proxies and the client certificate in force (as recorded: sensitive
    /// header values and proxy credentials are fingerprints); null when none was used.
    connectivity: Option<Value>,
    /// `--client-id` (and the name of its secret's variable), as recorded; absent when
    /// not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pre_registered_client: Option<Value>,
    /// The login flags (`--grant`, the key thumbprint, the client ID metadata document,
    /// `--audience`, `--no-resource-indicator`), as recorded; absent at their defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    login: Option<Value>,
}

#[derive(Serialize, JsonSchema)]
struct CaFileJ {
    path: String,
    sha256: String,
    certificates: Vec<CertJ>,
}

#[derive(Serialize, JsonSchema)]
struct SessionJ {
    endpoint: String,
    auth_required: bool,
    authenticated: bool,
    era: Option<&'static str>,
    revision: Option<String>,
    server_info: Option<Value>,
    capabilities: Option<Value>,
    session_id: Option<String>,
    negotiated_in: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    other_eras: Vec<EraJ>,
    /// The step-up re-authorization (a 403 `insufficient_scope` on a consented call), as
    /// recorded; absent when none happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    step_up: Option<Value>,
    /// RFC 9449 DPoP as the login met it (`session.dpop`, docs/bundle.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(default)]
    dpop: Option<Value>,
}

#[derive(Serialize, JsonSchema)]
struct EraJ {
    era: &'static str,
    revision: String,
    server_info: Option<Value>,
    capabilities: Option<Value>,
    session_id: Option<String>,
    negotiated_in: u64,
}

#[derive(Serialize, JsonSchema)]
struct TokenJ {
    source: String,
    fingerprint: String,
    jwt_header: Option<Value>,
    jwt_claims: Option<Value>,
    expires_in: Option<i64>,
    scope: Option<String>,
    token_type: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct MintedTokenJ {
    leg: String,
    seq: Option<u64>,
    requested_resource: Option<String>,
    login_resource: Option<String>,
    token: TokenJ,
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum RecordOrError {
    Record(Box<RecordJ>),
    Error { index: usize, error: String },
}

/// One decoded record, as `show --json` writes it.
#[derive(Serialize, JsonSchema)]
pub struct RecordJ {
    seq: u64,
    legs: Vec<String>,
    started_at: i64,
    started_at_utc: String,
    duration_us: u64,
    prev: String,
    observation: ObservationJ,
    redactions: Vec<RedactionJ>,
}

#[derive(Serialize, JsonSchema)]
struct RedactionJ {
    location: String,
    what: String,
    fingerprint: String,
}

#[derive(Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum ObservationJ {
    Http {
        connection: Option<u64>,
        first_attempt: Option<ErrorJ>,
        request: Box<RequestJ>,
        response: Option<Box<ResponseJ>>,
        error: Option<ErrorJ>,
    },
    Tls {
        connection: u64,
        sni: Option<String>,
        peer: String,
        version: Option<String>,
        cipher_suite: Option<String>,
        alpn: Option<String>,
        alpn_base64: Option<String>,
        chain: Vec<CertJ>,
        verification: Vec<StoreJ>,
        error: Option<ErrorJ>,
    },
    LegacyTls {
        offered: String,
        client_hello_base64: String,
        server_bytes_base64: String,
        error: Option<ErrorJ>,
    },
    Dns {
        host: String,
        addresses: Vec<String>,
        error: Option<ErrorJ>,
    },
    Skipped {
        reason: String,
    },
    /// A stdio exchange: the line written to stdin and every stdout line read.
    Stdio {
        sent: Option<BodyJ>,
        received: Vec<StdioLineJ>,
        error: Option<ErrorJ>,
        /// Stdout lines counted instead of stored (past the run's share of
        /// `--bundle-cap`); absent when every line read was stored.
        #[serde(skip_serializing_if = "Option::is_none")]
        unkept: Option<StdioUnkeptJ>,
    },
    /// The stdio server's process.
    StdioProcess {
        argv: Vec<String>,
        credential_args: Vec<CredentialArgJ>,
        env_names: Vec<String>,
        inherited: Vec<String>,
        pid: Option<u32>,
        spawn_error: Option<String>,
        exit_code: Option<i32>,
        exit_signal: Option<i32>,
        ended_by: String,
        stderr: BodyJ,
    },
    /// One event of an HTTP+SSE stream, or (with `error`) how reading it ended.
    SseEvent {
        /// Seq of the `GET` record of the stream.
        stream: u64,
        /// Seq of the `POST` record of the request the event belongs to.
        request: Option<u64>,
        /// The event type (`message` when the field was absent).
        event: String,
        data: String,
        /// The length of the data received, when `data` holds less of it.
        data_length: Option<u64>,
        id: Option<String>,
        retry: Option<u64>,
        error: Option<ErrorJ>,
        /// Events counted instead of stored (past `--bundle-cap`); absent on every
        /// other record.
        #[serde(skip_serializing_if = "Option::is_none")]
        unkept: Option<SseUnkeptJ>,
    },
}

/// `SseEvent.unkept` (docs/bundle.md), its hash in hex.
#[derive(Serialize, JsonSchema)]
struct SseUnkeptJ {
    events: u64,
    bytes: u64,
    jsonrpc: u64,
    responses: u64,
    sha256: String,
    first_at_us: u64,
    last_at_us: u64,
}

/// `StdioExchange.unkept` (docs/bundle.md), its hash in hex.
#[derive(Serialize, JsonSchema)]
struct StdioUnkeptJ {
    lines: u64,
    bytes: u64,
    jsonrpc: u64,
    cut: u64,
    sha256: String,
    first_at_us: u64,
    last_at_us: u64,
}

#[derive(Serialize, JsonSchema)]
struct StdioLineJ {
    at_us: u64,
    jsonrpc: bool,
    line: BodyJ,
}

#[derive(Serialize, JsonSchema)]
struct CredentialArgJ {
    index: u32,
    flag: Option<String>,
    why: String,
}

#[derive(Serialize, JsonSchema)]
struct StoreJ {
    store: String,
    ok: bool,
    error: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct RequestJ {
    method: String,
    url: String,
    version: String,
    headers: Vec<HeaderJ>,
    body: BodyJ,
}

#[derive(Serialize, JsonSchema)]
struct ResponseJ {
    version: String,
    status: u16,
    reason: String,
    headers: Vec<HeaderJ>,
    body: BodyJ,
}

#[derive(Serialize, JsonSchema)]
struct HeaderJ {
    name: String,
    /// The value as text; null when it is not UTF-8 (then `value_base64` holds it).
    value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value_base64: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct BodyJ {
    length: u64,
    stored: usize,
    sha256: String,
    end: &'static str,
    end_error: Option<ErrorJ>,
    base64: String,
    text: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct ErrorJ {
    kind: &'static str,
    message: String,
}

#[derive(Serialize, JsonSchema)]
struct CertJ {
    length: usize,
    sha256: String,
    common_name: Option<String>,
    der_base64: String,
}

/// The document for a loaded bundle.
pub fn document(l: &Loaded) -> Value {
    serde_json::to_value(typed(l)).unwrap_or(Value::Null)
}

/// The JSON Schema of `show --json`, generated from [`Document`].
pub fn schema() -> Value {
    let mut s = schemars::schema_for!(Document).to_value();
    s["title"] = Value::String("mcp-grade show --json".into());
    s
}

fn typed(l: &Loaded) -> Document {
    let ev = &l.evidence;
    let records = l.decoded_records();
    let inv = inventory(&records);
    let list = |x: &ListInventory| x.observed.then(|| x.items.clone());
    let page = |x: &ListInventory| PageJ {
        observed: x.observed,
        pages: x.pages,
        complete: x.complete,
        stopped: x.stopped.clone(),
    };
    Document {
        format: ev.format.clone(),
        collector: CollectorJ {
            name: ev.collector.name.clone(),
            version: ev.collector.version.clone(),
            build: ev.collector.build.clone(),
            target: ev.collector.target.clone(),
            rustc: ev.collector.rustc.clone(),
        },
        run: run(&ev.run),
        target: TargetJ {
            as_typed: ev.target.as_typed.clone(),
            base_url: ev.target.base_url.clone(),
            candidates: ev.target.candidates.clone(),
            endpoint: ev.target.endpoint.clone(),
            addresses: ev.target.addresses.clone(),
            transport: ev.target.transport.label().to_string(),
            message_endpoint: ev.target.message_endpoint.clone(),
        },
        session: ev.session.as_ref().map(session),
        tokens: ev.tokens.iter().map(token).collect(),
        minted_tokens: ev
            .minted_tokens
            .iter()
            .map(|m| MintedTokenJ {
                leg: m.leg.clone(),
                seq: m.seq,
                requested_resource: m.requested_resource.clone(),
                login_resource: m.login_resource.clone(),
                token: token(&m.token),
            })
            .collect(),
        records: l
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| match r {
                Ok(r) => RecordOrError::Record(Box::new(record_j(r))),
                Err(e) => RecordOrError::Error {
                    index: i,
                    error: e.to_string(),
                },
            })
            .collect(),
        chain_head: hex(&ev.chain_head),
        signer: l.signer.as_ref().map(signer),
        verification: VerificationJ {
            valid: l.valid(),
            problem: l.problem.as_ref().map(|p| p.to_string()),
        },
        negotiated_revision: ev.session.as_ref().and_then(|s| s.revision.clone()),
        server_info: ev.session.as_ref().and_then(|s| s.server_info.clone()),
        auth_required: ev.session.as_ref().map(|s| s.auth_required),
        inventory: InventoryJ {
            tools: list(&inv.tools),
            resources: list(&inv.resources),
            resource_templates: list(&inv.resource_templates),
            prompts: list(&inv.prompts),
        },
        inventory_pages: PagesJ {
            tools: page(&inv.tools),
            resources: page(&inv.resources),
            resource_templates: page(&inv.resource_templates),
            prompts: page(&inv.prompts),
        },
    }
}

fn signer(k: &PublicKey) -> SignerJ {
    SignerJ {
        key_id: k.key_id(),
        public_key_hex: hex(&k.to_bytes()),
    }
}

fn run(r: &Run) -> RunJ {
    let o = &r.options;
    RunJ {
        run_id: r.run_id.clone(),
        started_at: r.started_at,
        started_at_utc: utc(r.started_at),
        finished_at: r.finished_at,
        finished_at_utc: utc(r.finished_at),
        status: r.status.as_str(),
        failure: r.failure.clone(),
        options: OptionsJ {
            timeout_ms: o.timeout_ms,
            body_cap: o.body_cap,
            max_pages: o.max_pages,
            info_only: o.info_only,
            token_env: o.token_env.clone(),
            ca_file: o.ca_file.as_ref().map(|c| CaFileJ {
                path: c.path.clone(),
                sha256: c.sha256.clone(),
                certificates: c.certificates.iter().map(|d| cert(d)).collect(),
            }),
            connectivity: o
                .connectivity
                .as_ref()
                .and_then(|c| serde_json::to_value(c).ok()),
            pre_registered_client: o
                .pre_registered_client
                .as_ref()
                .and_then(|c| serde_json::to_value(c).ok()),
            login: o.login.as_ref().and_then(|l| serde_json::to_value(l).ok()),
        },
        inputs: r.inputs.clone(),
    }
}

fn era_name(e: Era) -> &'static str {
    match e {
        Era::Modern => "modern",
        Era::Legacy => "legacy",
    }
}

fn session(s: &Session) -> SessionJ {
    SessionJ {
        endpoint: s.endpoint.clone(),
        auth_required: s.auth_required,
        authenticated: s.authenticated,
        era: s.era.map(era_name),
        revision: s.revision.clone(),
        server_info: s.server_info.clone(),
        capabilities: s.capabilities.clone(),
        session_id: s.session_id.clone(),
        negotiated_in: s.negotiated_in,
        other_eras: s
            .other_eras
            .iter()
            .map(|o| EraJ {
                era: era_name(o.era),
                revision: o.revision.clone(),
                server_info: o.server_info.clone(),
                capabilities: o.capabilities.clone(),
                session_id: o.session_id.clone(),
                negotiated_in: o.negotiated_in,
            })
            .collect(),
        step_up: s
            .step_up
            .as_ref()
            .and_then(|x| serde_json::to_value(x).ok()),
        dpop: s.dpop.as_ref().and_then(|d| serde_json::to_value(d).ok()),
    }
}

fn token(t: &TokenFacts) -> TokenJ {
    TokenJ {
        source: t.source.clone(),
        fingerprint: t.fingerprint.clone(),
        jwt_header: t.jwt_header.clone(),
        jwt_claims: t.jwt_claims.clone(),
        expires_in: t.expires_in,
        scope: t.scope.clone(),
        token_type: t.token_type.clone(),
    }
}

/// One decoded record.
pub fn record(r: &Record) -> Value {
    serde_json::to_value(record_j(r)).unwrap_or(Value::Null)
}

fn record_j(r: &Record) -> RecordJ {
    RecordJ {
        seq: r.seq,
        legs: r.legs.clone(),
        started_at: r.started_at,
        started_at_utc: utc(r.started_at),
        duration_us: r.duration_us,
        prev: hex(&r.prev),
        observation: observation(&r.observation),
        redactions: r
            .redactions
            .iter()
            .map(|x| RedactionJ {
                location: x.location.clone(),
                what: x.what.clone(),
                fingerprint: x.fingerprint.clone(),
            })
            .collect(),
    }
}

fn observation(o: &Observation) -> ObservationJ {
    match o {
        Observation::Http(x) => {
            let (response, error) = match &x.outcome {
                HttpOutcome::Response(r) => (Some(Box::new(response(r))), None),
                HttpOutcome::Error(e) => (None, Some(transport_error(e))),
            };
            ObservationJ::Http {
                connection: x.connection,
                first_attempt: x.first_attempt.as_ref().map(transport_error),
                request: Box::new(RequestJ {
                    method: x.request.method.to_string(),
                    url: x.request.url.clone(),
                    version: x.request.version.to_string(),
                    headers: headers(&x.request.headers),
                    body: body(&x.request.body),
                }),
                response,
                error,
            }
        }
        Observation::Tls(t) => ObservationJ::Tls {
            connection: t.connection,
            sni: t.sni.clone(),
            peer: t.peer.clone(),
            version: t.version.clone(),
            cipher_suite: t.cipher_suite.clone(),
            alpn: t
                .alpn
                .as_ref()
                .map(|a| String::from_utf8_lossy(a).into_owned()),
            alpn_base64: t.alpn.as_ref().map(|a| b64(a)),
            chain: t.chain.iter().map(|d| cert(d)).collect(),
            verification: t
                .verification
                .iter()
                .map(|v| StoreJ {
                    store: v.store.clone(),
                    ok: v.ok,
                    error: v.error.clone(),
                })
                .collect(),
            error: t.error.as_ref().map(transport_error),
        },
        Observation::LegacyTls(p) => ObservationJ::LegacyTls {
            offered: p.offered.clone(),
            client_hello_base64: b64(&p.client_hello),
            server_bytes_base64: b64(&p.server_bytes),
            error: p.error.as_ref().map(transport_error),
        },
        Observation::Dns(d) => ObservationJ::Dns {
            host: d.host.clone(),
            addresses: d.addresses.clone(),
            error: d.error.as_ref().map(transport_error),
        },
        Observation::Skipped { reason } => ObservationJ::Skipped {
            reason: reason.clone(),
        },
        Observation::Stdio(x) => ObservationJ::Stdio {
            sent: x.sent.as_ref().map(|b| whole(b, b.len() as u64)),
            received: x
                .received
                .iter()
                .map(|l| StdioLineJ {
                    at_us: l.at_us,
                    jsonrpc: l.jsonrpc,
                    line: whole(&l.bytes, l.length),
                })
                .collect(),
            error: x.error.as_ref().map(transport_error),
            unkept: x.unkept.as_ref().map(|u| StdioUnkeptJ {
                lines: u.lines,
                bytes: u.bytes,
                jsonrpc: u.jsonrpc,
                cut: u.cut,
                sha256: hex::encode(&u.sha256),
                first_at_us: u.first_at_us,
                last_at_us: u.last_at_us,
            }),
        },
        Observation::StdioProcess(p) => ObservationJ::StdioProcess {
            argv: p.argv.clone(),
            credential_args: p
                .credential_args
                .iter()
                .map(|c| CredentialArgJ {
                    index: c.index,
                    flag: c.flag.clone(),
                    why: c.why.clone(),
                })
                .collect(),
            env_names: p.env_names.clone(),
            inherited: p.inherited.clone(),
            pid: p.pid,
            spawn_error: p.spawn_error.clone(),
            exit_code: p.exit.as_ref().and_then(|e| e.code),
            exit_signal: p.exit.as_ref().and_then(|e| e.signal),
            ended_by: p.ended_by.clone(),
            stderr: whole(&p.stderr, p.stderr_length),
        },
        Observation::SseEvent(e) => ObservationJ::SseEvent {
            stream: e.stream,
            request: e.request,
            event: e.event.clone().unwrap_or_else(|| "message".into()),
            data: e.data.clone(),
            data_length: e.data_length,
            id: e.id.clone(),
            retry: e.retry,
            error: e.error.as_ref().map(transport_error),
            unkept: e.unkept.as_ref().map(|u| SseUnkeptJ {
                events: u.events,
                bytes: u.bytes,
                jsonrpc: u.jsonrpc,
                responses: u.responses,
                sha256: hex(&u.sha256),
                first_at_us: u.first_at_us,
                last_at_us: u.last_at_us,
            }),
        },
    }
}

/// Stored bytes of a stdio line or stream as a body (`length`: what crossed the pipe;
/// the SHA-256 is of the stored bytes).
fn whole(bytes: &[u8], length: u64) -> BodyJ {
    BodyJ {
        length,
        stored: bytes.len(),
        sha256: hex(&mcp_probe_schema::bundle::sha256(bytes)),
        end: if (bytes.len() as u64) < length {
            "limit_reached"
        } else {
            "complete"
        },
        end_error: None,
        base64: b64(bytes),
        text: std::str::from_utf8(bytes).ok().map(str::to_string),
    }
}

fn response(r: &HttpResponse) -> ResponseJ {
    ResponseJ {
        version: r.version.to_string(),
        status: r.status,
        reason: r.reason.to_string(),
        headers: headers(&r.headers),
        body: body(&r.body),
    }
}

fn headers(hs: &[Header]) -> Vec<HeaderJ> {
    hs.iter()
        .map(|h| match std::str::from_utf8(&h.value) {
            Ok(s) => HeaderJ {
                name: h.name.to_string(),
                value: Some(s.to_string()),
                value_base64: None,
            },
            Err(_) => HeaderJ {
                name: h.name.to_string(),
                value: None,
                value_base64: Some(b64(&h.value)),
            },
        })
        .collect()
}

/// The body end state as a word.
pub fn end_word(e: &BodyEnd) -> &'static str {
    match e {
        BodyEnd::Complete => "complete",
        BodyEnd::StoppedAfterResponse => "stopped_after_response",
        BodyEnd::LimitReached => "limit_reached",
        BodyEnd::HeadOnly => "head_only",
        BodyEnd::Error(_) => "error",
    }
}

fn body(b: &Body) -> BodyJ {
    BodyJ {
        length: b.length,
        stored: b.bytes.len(),
        sha256: hex(&b.sha256),
        end: end_word(&b.end),
        end_error: match &b.end {
            BodyEnd::Error(e) => Some(transport_error(e)),
            _ => None,
        },
        base64: b64(&b.bytes),
        text: std::str::from_utf8(&b.bytes).ok().map(str::to_string),
    }
}

fn transport_error(e: &TransportError) -> ErrorJ {
    ErrorJ {
        kind: e.kind.as_str(),
        message: e.message.clone(),
    }
}

fn cert(der: &[u8]) -> CertJ {
    CertJ {
        length: der.len(),
        sha256: hex(&mcp_probe_schema::bundle::sha256(der)),
        common_name: crate::fmt::der_common_name(der),
        der_base64: b64(der),
    }
}
