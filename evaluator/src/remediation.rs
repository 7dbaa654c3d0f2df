//! What to do about a finding: one line per check, in the report's findings, SARIF rule
//! help, JUnit failure text and Markdown. The benchmark's own remediation is longer;
//! these lines say what to change so that the wire observation the check makes would
//! come out differently, in this repository's words.

use mcp_probe_schema::check_id::CheckId;

/// The one-line remediation of `id`.
pub fn remediation(id: CheckId) -> &'static str {
    use CheckId::*;
    match id {
        C1_1 => "serve only the protocol revisions you approved (drop older ones from initialize and server/discover) and reject malformed or mismatched version assertions with the error codes the revision fixes",
        C1_2 => "review the added or changed capabilities against the approved configuration; re-approve and record a new baseline, or remove them",
        C1_3 => "hold newly advertised tools behind an approval gate that refuses calls (with a 'pending approval' error) until an operator re-approves them",
        C1_4 => "confirm the identity change is an approved release; otherwise treat it as an unexpected server and investigate before clients reconnect",
        C2_1 => "run local, single-user servers over stdio instead of a network listener",
        C2_2 => "serve the endpoint only over TLS 1.2 or later with a certificate valid for its name; refuse or redirect plaintext and disable TLS 1.0/1.1",
        C2_3 => "authenticate every request before it can open a response stream, at every hop (proxy, gateway and server)",
        C2_4 => "require the Mcp-Method and Mcp-Name headers on 2026-07-28 requests and refuse a request whose headers disagree with its body",
        C2_5 => "validate the Origin header of every request against an allowlist and answer any other Origin with 403",
        C3_1_1 => "give stdio servers their credentials through the environment or the OS credential store, never on the command line or in files",
        C3_1_2 => "use OAuth 2.1 with short-lived access tokens (an hour or less) issued by your authorization server",
        C3_2_1 => "authorize each tool call against the caller's grant, not only the session",
        C3_2_2 => "accept only tokens issued for this server (audience = its resource) and never forward them to downstream APIs",
        C3_2_3 => "enforce authorization and human approval in the server; treat tool annotations as hints only",
        C3_3_1 => "bind tokens to this server with RFC 8707 resource indicators and reject any token whose audience is not exactly this server",
        C3_3_2 => "publish protected-resource and authorization-server metadata over TLS whose resource and issuer match the endpoint, and validate them",
        C3_3_3 => "give each downstream service its own identity and credentials instead of one shared account",
        C3_3_4 => "grant only the scopes a client needs, step up on demand, and refuse calls outside the grant with 403 insufficient_scope",
        C3_3_5 => "for a static client id, require per-client consent, exact redirect URI matching and PKCE on every authorization request",
        C5_1_1 => "declare compilable input and output schemas for every tool and return schema violations as tool execution errors (isError)",
        C5_1_2 => "give every resource template a URI pattern and an explicit MIME type, and reject reads of non-existent resources with an error",
        C5_1_3 => "name and type every prompt argument and reject a missing required argument or an unknown prompt with -32602",
        C5_2_1 => "rate-limit listChanged notifications to a configured minimum interval",
        C5_2_2 => "authenticate every request with its credential; never treat a session id as proof of identity",
        C5_2_3 => "on 2026-07-28 endpoints, refuse the legacy session id, GET streams, DELETE and Last-Event-ID resumption",
        C5_3_1 => "write logs of stdio servers to stderr or a file, never to stdout",
        C5_4_1 => "canonicalise every requested path before the access check, compare by path component against the allowed root, and refuse anything outside it",
        C5_5_1 => "authorize, scope and expire MCP Tasks like the requests that created them",
        C5_6_1 => "require an idempotency key on side-effecting tool calls and honour it on retries",
        C7_1_1 => "record lifecycle events and each invocation's metadata (client, method, name, request id) in an audit log",
        C7_1_2 => "reject a request whose id is null with -32600 Invalid Request instead of treating it as a notification",
        C7_1_3 => "time-stamp audit records from a synchronised clock and keep them monotonic",
        C7_2_1 => "alert on tokens refused for their audience or issuer, and check that such refusals reach the audit log",
        C7_2_2 => "put the server's identity (io.modelcontextprotocol/serverInfo) on every notification, and send progress only for tokens a request issued",
        C10_1 => "mark per-user responses Cache-Control: private or no-store, and give static resources explicit freshness limits",
        C10_2 => "set and enforce request and response size limits (413 for an oversized body), token budgets and per-principal quotas",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_has_one_line() {
        for e in crate::catalogue::CATALOGUE.iter() {
            let r = remediation(e.id);
            assert!(r.len() > 30 && !r.contains('\n'), "{}", e.id.as_str());
        }
    }
}
