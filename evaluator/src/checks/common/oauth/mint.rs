//! The token the wrong-audience grant minted, read from its facts
//! (`payload.minted_tokens`, never the token): does it really name another resource?
//! Shared by `audience-bound-tokens` (sub-verdict b) and `audience-refusals-alerted`, which
//! grade the same pair, so the two cannot disagree.
//!
//! An authorization server that ignores the RFC 8707 `resource` parameter (a tenant
//! default audience, an AS without resource indicators) answers the grant naming another
//! resource with a token for the audited resource: nothing foreign is presented, and the
//! server's acceptance of it says nothing about its audience validation. A FAIL must be
//! earned by an observation attributable to the server, so only a minted token whose
//! audiences are readable and do not name the audited resource can fail the pair.

use mcp_probe_schema::model::MintedToken;
use mcp_probe_schema::vocab::leg;

use crate::checks::common::oauth::tokens::{audiences, claims};
use crate::checks::common::oauth::uris::{canonical_resource, strip_slash};
use crate::evidence::Bundle;
use crate::fmt::escape_line;

/// What the minted token's facts say about its audience.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Binding {
    /// A JWT whose audiences name the audited resource: the pair cannot show the
    /// server's audience validation (the sentence says why). Not decidable.
    Audited(String),
    /// Opaque, or a JWT without `aud`: the authorization server's binding of the token
    /// cannot be seen from outside. An acceptance is not attributable to the server.
    Unverified(String),
    /// A JWT whose audiences are readable and none is the audited resource: a token for
    /// another resource was presented (the sentence names its audiences).
    Foreign(String),
    /// The bundle's collector did not record the minted token's facts (an older build):
    /// the pair is graded as before, and the sentence says what is missing.
    NotRecorded(String),
}

impl Binding {
    /// The sentence the evidence carries.
    pub(crate) fn sentence(&self) -> &str {
        match self {
            Binding::Audited(s)
            | Binding::Unverified(s)
            | Binding::Foreign(s)
            | Binding::NotRecorded(s) => s,
        }
    }

    /// Its name in the checks' details (`minted_binding`).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Binding::Audited(_) => "audited_resource",
            Binding::Unverified(_) => "unverified",
            Binding::Foreign(_) => "foreign",
            Binding::NotRecorded(_) => "not_recorded",
        }
    }

    /// An acceptance of the minted token by the server is a FAIL (a token readable as
    /// foreign, or an older bundle graded as before); otherwise it is not attributable.
    pub(crate) fn acceptance_fails(&self) -> bool {
        matches!(self, Binding::Foreign(_) | Binding::NotRecorded(_))
    }
}

/// The facts of the token minted under `3.3.1b.mint` whose fingerprint is `fingerprint`.
pub(crate) fn minted_facts<'a>(ev: &'a Bundle, fingerprint: &str) -> Option<&'a MintedToken> {
    ev.payload
        .minted_tokens
        .iter()
        .find(|m| m.leg == leg::FOREIGN_MINT.as_str() && m.token.fingerprint == fingerprint)
}

/// The audited resources a minted token's audiences are compared with: the resource the
/// login asked for (as the collector recorded it) and the endpoint's canonical URI,
/// without duplicates.
fn audited(ev: &Bundle, m: &MintedToken) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in [m.login_resource.clone(), canonical_resource(&ev.endpoint())]
        .into_iter()
        .flatten()
    {
        if !out.iter().any(|o| strip_slash(o) == strip_slash(&r)) {
            out.push(r);
        }
    }
    out
}

/// How the token minted for `named` (the resource the grant asked for), presented with
/// fingerprint `fingerprint`, is bound, from the bundle's facts.
pub(crate) fn binding(ev: &Bundle, fingerprint: &str, named: &str) -> Binding {
    let (raw, named) = (named, escape_line(named));
    let Some(m) = minted_facts(ev, fingerprint) else {
        let c = &ev.payload.collector;
        return Binding::NotRecorded(crate::format_exact!(
            "the minted token's claims were not recorded by the collector that wrote this bundle \
             ({} {}, build {}: no minted_tokens entry for {}), so whether the authorization server \
             bound it to {named} is not known",
            crate::fmt::Line(&c.name),
            crate::fmt::Line(&c.version),
            crate::fmt::Line(&c.build),
            crate::fmt::Line(leg::FOREIGN_MINT.as_str())
        ));
    };
    let Some(c) = claims(&m.token) else {
        return Binding::Unverified(crate::format_exact!(
            "the token minted for {named} is opaque (not a JWT): the authorization server's binding \
             of it to {named} cannot be seen from outside, so the binding is unverified"
        ));
    };
    let auds = audiences(Some(c));
    if auds.is_empty() {
        return Binding::Unverified(crate::format_exact!(
            "the token minted for {named} is a JWT without an aud claim: the authorization server's \
             binding of it to {named} cannot be seen from outside, so the binding is unverified"
        ));
    }
    let shown = auds
        .iter()
        .map(|a| escape_line(a))
        .collect::<Vec<_>>()
        .join(", ");
    let is = |a: &str, b: &str| strip_slash(a) == strip_slash(b);
    let audited = audited(ev, m);
    let names_audited = auds.iter().any(|a| audited.iter().any(|r| is(a, r)));
    let names_foreign = auds.iter().any(|a| is(a, raw));
    match (names_audited, names_foreign) {
        (true, false) => Binding::Audited(crate::format_exact!(
            "the authorization server ignored the RFC 8707 resource parameter: the token minted for \
             {named} names {shown}; no foreign token was presented"
        )),
        (true, true) => Binding::Audited(crate::format_exact!(
            "the token minted for {named} names {shown}, the audited resource among them: a server \
             that accepts it may be validating its own audience, so the pair does not show a foreign \
             token accepted"
        )),
        (false, true) => Binding::Foreign(crate::format_exact!("the token minted for {named} names {shown}")),
        (false, false) => Binding::Foreign(crate::format_exact!(
            "the token minted for {named} names {shown}, not the audited resource ({})",
            audited.iter().map(|a| escape_line(a)).collect::<Vec<_>>().join(", ")
        )),
    }
}
