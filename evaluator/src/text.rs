//! `mcp-grade show`: the transcript of a bundle, readable on a terminal.
//!
//! Everything that came from the bundle is escaped for the terminal (a server may send
//! escape sequences in a body or header), bodies are shown up to [`BODY_EXCERPT`] bytes.

use std::io::{self, Write};

use mcp_probe_schema::model::*;

use crate::fmt::{self, bytes_line, der_common_name, escape_line, excerpt, hex, millis, utc};
use crate::load::Loaded;

/// Bytes of each body shown.
pub const BODY_EXCERPT: usize = 2048;

/// Write the transcript of `l` (read from `path`) to `out`.
pub fn render(out: &mut dyn Write, path: &str, l: &Loaded) -> io::Result<()> {
    header(out, path, l)?;
    for (i, r) in l.records.iter().enumerate() {
        writeln!(out)?;
        match r {
            Ok(r) => record(out, r)?,
            Err(e) => writeln!(
                out,
                "#{i} (record does not decode: {})",
                escape_line(&e.to_string())
            )?,
        }
    }
    Ok(())
}

fn opt(s: &Option<String>) -> String {
    s.as_deref().map(escape_line).unwrap_or_else(|| "-".into())
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn header(out: &mut dyn Write, path: &str, l: &Loaded) -> io::Result<()> {
    let ev = &l.evidence;
    w(out, "bundle", &escape_line(path))?;
    match (&l.problem, &l.signer) {
        (None, Some(k)) => w(
            out,
            "verified",
            &format!("yes: signature, chain and format; signer {}", k.key_id()),
        )?,
        (Some(p), k) => {
            let signer = k
                .as_ref()
                .map(|k| format!("; claimed signer {}", k.key_id()))
                .unwrap_or_default();
            w(
                out,
                "verified",
                &format!(
                    "NO: {}{signer} (the content below is unverified)",
                    escape_line(&p.to_string())
                ),
            )?
        }
        (None, None) => w(out, "verified", "no signer")?,
    }
    w(out, "format", &escape_line(&ev.format))?;
    let c = &ev.collector;
    w(
        out,
        "collector",
        &format!(
            "{} {} (build {})",
            escape_line(&c.name),
            escape_line(&c.version),
            escape_line(&c.build)
        ),
    )?;
    let r = &ev.run;
    w(out, "run", &escape_line(&r.run_id))?;
    w(out, "started", &utc(r.started_at))?;
    let took = r.finished_at.checked_sub(r.started_at).filter(|d| *d >= 0);
    let took = took
        .map(|d| format!(" (after {})", millis(d as u64)))
        .unwrap_or_default();
    w(out, "finished", &format!("{}{took}", utc(r.finished_at)))?;
    w(out, "status", r.status.as_str())?;
    w(out, "failure", &opt(&r.failure))?;
    let o = &r.options;
    w(
        out,
        "options",
        &format!(
            "timeout {} ms, body cap {} bytes, max pages {}, info only {}, token env {}, ca file {}",
            o.timeout_ms,
            o.body_cap,
            o.max_pages,
            yes(o.info_only),
            opt(&o.token_env),
            o.ca_file
                .as_ref()
                .map(|c| format!("{} (sha256 {}, {} certificates)", escape_line(&c.path), escape_line(&c.sha256), c.certificates.len()))
                .unwrap_or_else(|| "-".into()),
        ),
    )?;
    if let Some(c) = &o.connectivity {
        connectivity(out, c)?;
    }
    if let Some(c) = &o.pre_registered_client {
        let secret = c
            .secret_env
            .as_ref()
            .map(|v| format!(", secret from ${}", escape_line(v)))
            .unwrap_or_default();
        w(
            out,
            "oauth client",
            &format!("{} (pre-registered{secret})", escape_line(&c.client_id)),
        )?;
    }
    if let Some(l) = &o.login {
        let v = serde_json::to_value(l).unwrap_or_default();
        w(out, "login", &escape_line(&v.to_string()))?;
    }
    w(
        out,
        "inputs",
        &r.inputs
            .as_ref()
            .map(|v| escape_line(&v.to_string()))
            .unwrap_or_else(|| "-".into()),
    )?;
    target(out, &ev.target)?;
    session(out, ev.session.as_ref())?;
    tokens(out, &ev.tokens)?;
    minted_tokens(out, &ev.minted_tokens)?;
    w(out, "records", &ev.records.len().to_string())?;
    w(out, "chain head", &hex(&ev.chain_head))
}

/// The `--header`, proxy and client-certificate lines of the header (only when used).
fn connectivity(
    out: &mut dyn Write,
    c: &mcp_probe_schema::connectivity::Connectivity,
) -> io::Result<()> {
    for h in &c.headers {
        w(
            out,
            "header",
            &format!("{}: {}", escape_line(&h.name), escape_line(&h.value)),
        )?;
    }
    if let Some(p) = &c.proxy {
        for (scheme, u) in [("https", &p.https), ("http", &p.http)] {
            if let Some(u) = u {
                let creds = if u.credentials.is_some() {
                    " (with credentials)"
                } else {
                    ""
                };
                w(
                    out,
                    "proxy",
                    &format!(
                        "{scheme} URLs via {} from {}{creds}",
                        escape_line(&u.url),
                        escape_line(&u.source)
                    ),
                )?;
            }
        }
        if let Some(n) = &p.no_proxy {
            w(
                out,
                "no proxy",
                &format!("{} (from {})", escape_line(n), opt(&p.no_proxy_source)),
            )?;
        }
    }
    if let Some(cc) = &c.client_cert {
        w(
            out,
            "client cert",
            &format!(
                "{} (subject {}, sha256 {})",
                escape_line(&cc.path),
                escape_line(&cc.subject),
                escape_line(&cc.sha256)
            ),
        )?;
    }
    Ok(())
}

/// One `key value` line of the header.
fn w(out: &mut dyn Write, k: &str, v: &str) -> io::Result<()> {
    writeln!(out, "{k:<13}{v}")
}

fn target(out: &mut dyn Write, t: &mcp_probe_schema::model::Target) -> io::Result<()> {
    w(out, "target", &escape_line(&t.as_typed))?;
    w(out, "base url", &escape_line(&t.base_url))?;
    w(out, "candidates", &list(&t.candidates))?;
    w(
        out,
        "endpoint",
        &t.endpoint
            .as_deref()
            .map(escape_line)
            .unwrap_or_else(|| "(none)".into()),
    )?;
    w(out, "addresses", &list(&t.addresses))?;
    Ok(())
}

fn session(out: &mut dyn Write, s: Option<&mcp_probe_schema::model::Session>) -> io::Result<()> {
    match s {
        None => w(out, "session", "(none: no endpoint answered)")?,
        Some(s) => {
            let era = match s.era {
                Some(Era::Modern) => "modern era",
                Some(Era::Legacy) => "legacy era",
                None => "era unknown",
            };
            let how = s
                .negotiated_in
                .map(|n| format!(", negotiated in #{n}"))
                .unwrap_or_default();
            let revision = match &s.revision {
                Some(r) => format!("{} ({era}{how})", escape_line(r)),
                None => "(none negotiated)".into(),
            };
            w(out, "revision", &revision)?;
            let json = |v: &Option<serde_json::Value>| {
                v.as_ref()
                    .map(|v| escape_line(&v.to_string()))
                    .unwrap_or_else(|| "-".into())
            };
            w(out, "server info", &json(&s.server_info))?;
            w(out, "capabilities", &json(&s.capabilities))?;
            w(out, "session id", &opt(&s.session_id))?;
            if let Some(x) = &s.step_up {
                let outcome = match (&x.failure, x.retry_in) {
                    (Some(f), _) => format!("no token: {}", escape_line(f)),
                    (None, Some(n)) => format!("token obtained; the call sent again in #{n}"),
                    (None, None) => "token obtained".into(),
                };
                w(
                    out,
                    "step-up",
                    &format!(
                        "403 insufficient_scope in #{} (scope {}); asked for {:?}: {outcome}",
                        x.challenge_in,
                        x.challenged_scope
                            .as_deref()
                            .map(escape_line)
                            .unwrap_or_else(|| "-".into()),
                        escape_line(&x.requested_scope)
                    ),
                )?;
            }
            for o in &s.other_eras {
                w(
                    out,
                    "also served",
                    &format!(
                        "{} ({}, negotiated in #{}; session id {}; capabilities {})",
                        escape_line(&o.revision),
                        match o.era {
                            Era::Modern => "modern era",
                            Era::Legacy => "legacy era",
                        },
                        o.negotiated_in,
                        opt(&o.session_id),
                        json(&o.capabilities)
                    ),
                )?;
            }
            w(
                out,
                "auth",
                &format!(
                    "required {}, authenticated {}",
                    yes(s.auth_required),
                    yes(s.authenticated)
                ),
            )?;
        }
    }
    Ok(())
}

/// The tokens the probe grants obtained: nothing when there are none (older bundles
/// print as before).
fn minted_tokens(
    out: &mut dyn Write,
    minted: &[mcp_probe_schema::model::MintedToken],
) -> io::Result<()> {
    for (i, m) in minted.iter().enumerate() {
        w(
            out,
            if i == 0 { "minted" } else { "" },
            &format!(
                "{} (record #{}), resource {}, login resource {}: {}, type {}, scope {}",
                escape_line(&m.leg),
                m.seq.map_or_else(|| "-".into(), |s| s.to_string()),
                opt(&m.requested_resource),
                opt(&m.login_resource),
                escape_line(&m.token.fingerprint),
                opt(&m.token.token_type),
                opt(&m.token.scope)
            ),
        )?;
        if let Some(h) = &m.token.jwt_header {
            w(
                out,
                "",
                &format!("  jwt header {}", escape_line(&h.to_string())),
            )?;
        }
        if let Some(c) = &m.token.jwt_claims {
            w(
                out,
                "",
                &format!("  jwt claims {}", escape_line(&c.to_string())),
            )?;
        }
    }
    Ok(())
}

fn tokens(out: &mut dyn Write, tokens: &[mcp_probe_schema::model::TokenFacts]) -> io::Result<()> {
    if tokens.is_empty() {
        w(out, "tokens", "none")?;
    }
    for (i, t) in tokens.iter().enumerate() {
        let exp = t
            .expires_in
            .map(|e| format!("{e} s"))
            .unwrap_or_else(|| "-".into());
        w(
            out,
            if i == 0 { "tokens" } else { "" },
            &format!(
                "{}: {}, type {}, scope {}, expires in {exp}",
                escape_line(&t.source),
                escape_line(&t.fingerprint),
                opt(&t.token_type),
                opt(&t.scope)
            ),
        )?;
        if let Some(h) = &t.jwt_header {
            w(
                out,
                "",
                &format!("  jwt header {}", escape_line(&h.to_string())),
            )?;
        }
        if let Some(c) = &t.jwt_claims {
            w(
                out,
                "",
                &format!("  jwt claims {}", escape_line(&c.to_string())),
            )?;
        }
    }
    Ok(())
}

/// One HTTP+SSE stream record: `stream #N event TYPE (for #M)` and its data, or how
/// reading ended.
fn sse_event(out: &mut dyn Write, e: &SseEvent) -> io::Result<()> {
    let owner = e
        .request
        .map(|s| format!(" (for #{s})"))
        .unwrap_or_default();
    if let Some(err) = &e.error {
        return writeln!(
            out,
            "  stream #{} ended{owner}: {}",
            e.stream,
            escape_line(&err.to_string())
        );
    }
    if let Some(u) = &e.unkept {
        return writeln!(
            out,
            "  stream #{}{owner} +{}..+{}: {} event(s), {} bytes of data, counted not stored ({} JSON-RPC, {} response(s); sha256 {})",
            e.stream,
            millis(u.first_at_us),
            millis(u.last_at_us),
            u.events,
            u.bytes,
            u.jsonrpc,
            u.responses,
            hex::encode(&u.sha256)
        );
    }
    writeln!(
        out,
        "  stream #{} event {}{owner}{}",
        e.stream,
        escape_line(e.event.as_deref().unwrap_or("message")),
        e.id.as_deref()
            .map(|i| format!(" id {}", escape_line(i)))
            .unwrap_or_default()
    )?;
    if let Some(r) = e.retry {
        writeln!(out, "  retry: {r} ms")?;
    }
    let data = excerpt(e.data.as_bytes(), 2000);
    let more = if data.cut { " …" } else { "" };
    writeln!(out, "  data: {}{more}", data.text)?;
    match e.data_length {
        Some(n) => writeln!(out, "  data stored cut: {} of {n} bytes", e.data.len()),
        None => Ok(()),
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.iter()
            .map(|s| escape_line(s))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn record(out: &mut dyn Write, r: &Record) -> io::Result<()> {
    let legs = if r.legs.is_empty() {
        "(no leg)".to_string()
    } else {
        list(&r.legs)
    };
    writeln!(
        out,
        "#{} {legs} [{}, {}]",
        r.seq,
        utc(r.started_at),
        millis(r.duration_us)
    )?;
    match &r.observation {
        Observation::Http(x) => http(out, x)?,
        Observation::Tls(t) => tls(out, t)?,
        Observation::LegacyTls(p) => legacy(out, p)?,
        Observation::Dns(d) => {
            writeln!(
                out,
                "  DNS {} -> {}",
                escape_line(&d.host),
                list(&d.addresses)
            )?;
            if let Some(e) = &d.error {
                writeln!(out, "  error: {}", escape_line(&e.to_string()))?;
            }
        }
        Observation::Skipped { reason } => writeln!(out, "  skipped: {}", escape_line(reason))?,
        Observation::Stdio(x) => stdio(out, x)?,
        Observation::StdioProcess(p) => stdio_process(out, p)?,
        Observation::SseEvent(e) => sse_event(out, e)?,
    }
    for x in &r.redactions {
        writeln!(
            out,
            "  redacted {} ({}) -> {}",
            escape_line(&x.location),
            escape_line(&x.what),
            escape_line(&x.fingerprint)
        )?;
    }
    Ok(())
}

fn http(out: &mut dyn Write, x: &HttpExchange) -> io::Result<()> {
    let q = &x.request;
    let conn = x
        .connection
        .map(|c| format!("  (connection {c})"))
        .unwrap_or_default();
    writeln!(
        out,
        "  {} {} {}{conn}",
        escape_line(&q.method),
        escape_line(&q.url),
        escape_line(&q.version)
    )?;
    headers(out, &q.headers)?;
    body(out, &q.body, false)?;
    if let Some(e) = &x.first_attempt {
        writeln!(
            out,
            "  first attempt on a kept-alive connection failed ({}: {}); sent again on a new connection",
            e.kind.as_str(),
            escape_line(&e.message)
        )?;
    }
    match &x.outcome {
        HttpOutcome::Response(r) => {
            writeln!(
                out,
                "  -> {} {} ({})",
                r.status,
                escape_line(&r.reason),
                escape_line(&r.version)
            )?;
            headers(out, &r.headers)?;
            body(out, &r.body, true)?;
        }
        HttpOutcome::Error(e) => writeln!(
            out,
            "  -> transport error {}: {}",
            e.kind.as_str(),
            escape_line(&e.message)
        )?,
    }
    Ok(())
}

fn headers(out: &mut dyn Write, hs: &[Header]) -> io::Result<()> {
    for h in hs {
        writeln!(out, "  {}: {}", escape_line(&h.name), bytes_line(&h.value))?;
    }
    Ok(())
}

/// One stdio exchange: `> ` the line sent, `< ` each stdout line (marked when it is not a
/// JSON-RPC message), with its time after the record's start.
fn stdio(out: &mut dyn Write, x: &StdioExchange) -> io::Result<()> {
    if let Some(sent) = &x.sent {
        writeln!(out, "  stdin > {}", bytes_line(sent))?;
    }
    for l in &x.received {
        let kind = if l.jsonrpc { "" } else { " (not JSON-RPC)" };
        let cut = if (l.bytes.len() as u64) < l.length {
            format!(" … ({} bytes total)", l.length)
        } else {
            String::new()
        };
        writeln!(
            out,
            "  stdout < +{}{kind}: {}{cut}",
            millis(l.at_us),
            bytes_line(&l.bytes)
        )?;
    }
    if let Some(u) = &x.unkept {
        writeln!(
            out,
            "  stdout < +{}..+{}: {} more escape_line(s), {} bytes, counted not stored ({} JSON-RPC, {} cut; sha256 {})",
            millis(u.first_at_us),
            millis(u.last_at_us),
            u.lines,
            u.bytes,
            u.jsonrpc,
            u.cut,
            hex::encode(&u.sha256)
        )?;
    }
    if let Some(e) = &x.error {
        writeln!(
            out,
            "  -> transport error {}: {}",
            e.kind.as_str(),
            escape_line(&e.message)
        )?;
    }
    Ok(())
}

/// The stdio server's process: command line, variable names, exit, stderr.
fn stdio_process(out: &mut dyn Write, p: &StdioProcess) -> io::Result<()> {
    writeln!(out, "  process: {}", escape_line(&p.argv.join(" ")))?;
    for c in &p.credential_args {
        writeln!(
            out,
            "  argument {} taken for a credential ({}{}); only its fingerprint is kept",
            c.index,
            escape_line(&c.why),
            c.flag
                .as_deref()
                .map(|f| format!(", after {}", escape_line(f)))
                .unwrap_or_default()
        )?;
    }
    writeln!(out, "  --env names: {}", list(&p.env_names))?;
    writeln!(out, "  inherited names: {}", list(&p.inherited))?;
    if let Some(pid) = p.pid {
        writeln!(out, "  pid: {pid}")?;
    }
    if let Some(e) = &p.spawn_error {
        writeln!(out, "  not started: {}", escape_line(e))?;
    }
    let exit = match &p.exit {
        Some(ProcessExit { code: Some(c), .. }) => format!("exit code {c}"),
        Some(ProcessExit {
            signal: Some(s), ..
        }) => format!("signal {s}"),
        _ => "unknown".into(),
    };
    writeln!(out, "  ended: {} ({exit})", escape_line(&p.ended_by))?;
    writeln!(
        out,
        "  stderr: {} bytes{}",
        p.stderr_length,
        if (p.stderr.len() as u64) < p.stderr_length {
            format!(" ({} stored)", p.stderr.len())
        } else {
            String::new()
        }
    )?;
    let e = excerpt(&p.stderr, BODY_EXCERPT);
    for l in e.text.lines() {
        writeln!(out, "    {l}")?;
    }
    Ok(())
}

fn body(out: &mut dyn Write, b: &Body, response: bool) -> io::Result<()> {
    if b.bytes.is_empty() && b.length == 0 {
        if response {
            writeln!(out, "  (empty body; end: {})", end(&b.end))?;
        }
        return Ok(());
    }
    writeln!(out)?;
    let e = excerpt(&b.bytes, BODY_EXCERPT);
    let shown = if e.utf8 {
        e.text
    } else {
        format!("(not UTF-8; first bytes in hex) {}", e.text)
    };
    for l in shown.lines() {
        writeln!(out, "    {l}")?;
    }
    if e.cut || (b.bytes.len() as u64) < b.length {
        writeln!(out, "    … ({} bytes total)", b.length)?;
    }
    writeln!(out)?;
    let stored = if (b.bytes.len() as u64) < b.length {
        format!("{} of {} bytes stored", b.bytes.len(), b.length)
    } else {
        format!("{} bytes", b.length)
    };
    writeln!(
        out,
        "  body: {stored}, sha256 {}, end: {}",
        hex(&b.sha256),
        end(&b.end)
    )
}

fn end(e: &BodyEnd) -> String {
    match e {
        BodyEnd::Complete => "complete".into(),
        BodyEnd::StoppedAfterResponse => "stopped after the response arrived".into(),
        BodyEnd::LimitReached => "read limit reached".into(),
        BodyEnd::HeadOnly => "not read past the head (event stream)".into(),
        BodyEnd::Error(e) => format!("error {}: {}", e.kind.as_str(), escape_line(&e.message)),
    }
}

fn tls(out: &mut dyn Write, t: &TlsHandshake) -> io::Result<()> {
    let alpn = t
        .alpn
        .as_ref()
        .map(|a| bytes_line(a))
        .unwrap_or_else(|| "-".into());
    writeln!(
        out,
        "  TLS connection {} to {} (SNI {}): version {}, cipher {}, ALPN {alpn}",
        t.connection,
        escape_line(&t.peer),
        opt(&t.sni),
        opt(&t.version),
        opt(&t.cipher_suite)
    )?;
    if let Some(p) = &t.via_proxy {
        writeln!(out, "  through the HTTP CONNECT proxy {}", escape_line(p))?;
    }
    if let Some(a) = &t.client_auth {
        writeln!(
            out,
            "  the server asked for a client certificate; sent: {}",
            a.sent
                .as_deref()
                .map(|h| format!("sha256 {}", escape_line(h)))
                .unwrap_or_else(|| "none (no certificate configured for this server)".into())
        )?;
    }
    writeln!(out, "  chain: {} certificate(s)", t.chain.len())?;
    for (i, der) in t.chain.iter().enumerate() {
        let cn = der_common_name(der)
            .map(|c| format!(", CN {c}"))
            .unwrap_or_default();
        writeln!(
            out,
            "    [{i}] {} bytes, sha256 {}{cn}",
            der.len(),
            hex(&mcp_probe_schema::bundle::sha256(der))
        )?;
    }
    for v in &t.verification {
        let verdict = if v.ok {
            "ok".to_string()
        } else {
            format!("FAILED: {}", opt(&v.error))
        };
        writeln!(out, "  verification ({}): {verdict}", escape_line(&v.store))?;
    }
    if let Some(e) = &t.error {
        writeln!(out, "  error: {}", escape_line(&e.to_string()))?;
    }
    Ok(())
}

fn legacy(out: &mut dyn Write, p: &LegacyTlsProbe) -> io::Result<()> {
    writeln!(
        out,
        "  legacy TLS probe: offered {}, ClientHello {} bytes",
        escape_line(&p.offered),
        p.client_hello.len()
    )?;
    let b = &p.server_bytes;
    let what = match b.first() {
        None => "nothing".to_string(),
        Some(0x16) if b.len() >= 3 => {
            format!("a handshake record, version {:02x}{:02x}", b[1], b[2])
        }
        Some(0x15) if b.len() >= 7 => format!("an alert, level {} description {}", b[5], b[6]),
        Some(_) => "other bytes".to_string(),
    };
    writeln!(
        out,
        "  server answered {what} ({} bytes: {})",
        b.len(),
        fmt::hex(&b[..b.len().min(16)])
    )?;
    if let Some(e) = &p.error {
        writeln!(out, "  error: {}", escape_line(&e.to_string()))?;
    }
    Ok(())
}
