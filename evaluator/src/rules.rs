//! The registry of rules: each rule id a benchmark definition may name, and the code that
//! grades it. A rule is code (one file under [`crate::checks`], its legs and parameters
//! declared beside it); which recommendation it grades, under which number, with which
//! parameter values, is data ([`crate::benchmark`]). Rule ids are stable: a definition
//! written today must name the same code in every later build, so a rule is renamed never
//! and removed only with a note in docs/benchmarks.md.
//!
//! This module sits on top of the checks: it imports every rule, and no rule imports it.

use crate::check::Check;
use crate::checks;

/// Every rule this build implements, in the order of the benchmark it was written for.
pub static RULES: &[&dyn Check] = &[
    &checks::configuration::revisions_pinned::RevisionsPinned,
    &checks::configuration::capabilities_match_baseline::CapabilitiesMatchBaseline,
    &checks::configuration::new_tools_gated::NewToolsGated,
    &checks::configuration::identity_matches_baseline::IdentityMatchesBaseline,
    &checks::transport::STDIO_PREFERRED,
    &checks::transport::tls_required::TlsRequired,
    &checks::transport::auth_before_stream::AuthBeforeStream,
    &checks::transport::metadata_headers::MetadataHeaders,
    &checks::transport::origin_validated::OriginValidated,
    &checks::authorization::stdio_credentials::StdioCredentials,
    &checks::authorization::short_lived_tokens::ShortLivedTokens,
    &checks::authorization::PER_TOOL_AUTHORIZATION,
    &checks::authorization::no_token_passthrough::NoTokenPassthrough,
    &checks::authorization::ANNOTATIONS_NOT_AUTHORIZATION,
    &checks::authorization::audience_bound_tokens::AudienceBoundTokens,
    &checks::authorization::oauth_discovery_validated::OauthDiscoveryValidated,
    &checks::authorization::NO_SHARED_DOWNSTREAM_IDENTITY,
    &checks::authorization::scopes_minimized::ScopesMinimized,
    &checks::authorization::static_client_safeguards::StaticClientSafeguards,
    &checks::runtime::tool_schemas_validated::ToolSchemasValidated,
    &checks::runtime::resource_templates_typed::ResourceTemplatesTyped,
    &checks::runtime::prompt_arguments_validated::PromptArgumentsValidated,
    &checks::runtime::LIST_CHANGED_RATE_LIMITED,
    &checks::runtime::SESSION_NOT_AUTHENTICATION,
    &checks::runtime::legacy_session_disabled::LegacySessionDisabled,
    &checks::runtime::stdio_logs_separated::StdioLogsSeparated,
    &checks::runtime::path_confinement::PathConfinement,
    &checks::runtime::TASKS_AUTHORIZED,
    &checks::runtime::IDEMPOTENCY_KEYS,
    &checks::audit::LIFECYCLE_METADATA_RECORDED,
    &checks::audit::null_id_rejected::NullIdRejected,
    &checks::audit::AUDIT_CLOCK_SYNCHRONISED,
    &checks::audit::audience_refusals_alerted::AudienceRefusalsAlerted,
    &checks::audit::notification_identity::NotificationIdentity,
    &checks::limits::cache_freshness::CacheFreshness,
    &checks::limits::size_limits::SizeLimits,
];

/// The rule named `id`.
pub fn rule(id: &str) -> Option<&'static dyn Check> {
    RULES.iter().copied().find(|r| r.id() == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_lower_kebab() {
        for (i, r) in RULES.iter().enumerate() {
            assert!(
                !r.id().is_empty()
                    && r.id()
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                r.id()
            );
            assert!(
                RULES[..i].iter().all(|o| o.id() != r.id()),
                "{} twice",
                r.id()
            );
        }
    }
}
