//! The probe legs of the checks (docs/collector.md, "Probe legs"): what each sends,
//! in a fixed order, each request complete for the negotiated revision except for the
//! one property under test (a probe that changes two things at once proves nothing).
//! The collector decides nothing: a leg that is not sent is recorded as skipped with the
//! gate's reason, and the grader re-derives every verdict from the records.
//!
//! One module per check family, named by the check id whose legs it sends:
//!
//! * [`c2_2_tls`]: TLS 1.0/1.1 acceptance and the plaintext port (before detection).
//! * [`c1_1_versions`], [`c2_3_auth`], [`c2_4_headers`], [`c2_5_origin`],
//!   [`c5_2_3_session`], [`c7_1_2_null_id`], [`c10_limits`]: the legs after the
//!   inventory, in the order of [`AFTER_INVENTORY`].
//! * [`c5_1_live`], [`c5_4_1_traversal`]: the Section 5 live legs (tool call, resource
//!   reads, prompt gets; the traversal reads only with the operator's consent), last
//!   in [`AFTER_INVENTORY`].
//! * [`c3_3_4_scope`]: the operator's out-of-scope call.
//! * [`c1_3_7_2_2_tools`]: the consented tool calls of 1.3 and 7.2.2; [`c7_2_2_listen`]:
//!   7.2.2's `subscriptions/listen` stream beside its call on 2026-07-28.
//! * [`c3_3_5_deputy`]: the confused-deputy legs (registration and authorization
//!   requests, no credential).
//! * [`eras`]: the per-era families once more on a session of each other era the
//!   server serves.
//! * [`c3_3_1_audience`]: the audience legs of 3.3.1 and 7.2.1, the last credential
//!   operations of a run.

use mcp_probe_schema::model::{Era, Header};
use mcp_probe_schema::vocab::{family, leg, LegId};
use serde_json::{Map, Value};

use crate::journal::lock;
use crate::mcp::Probe;
use crate::transport::http::Request;

pub mod c10_limits;
pub mod c1_1_versions;
pub mod c1_3_7_2_2_tools;
pub mod c2_2_tls;
pub mod c2_3_auth;
pub mod c2_4_headers;
pub mod c2_5_origin;
pub mod c3_3_1_audience;
pub mod c3_3_4_scope;
pub mod c3_3_5_deputy;
pub mod c5_1_live;
pub mod c5_2_3_session;
pub mod c5_4_1_traversal;
pub mod c7_1_2_null_id;
pub mod c7_2_2_listen;
pub mod eras;
pub mod step_up;

/// The never-published revision 1.1b asserts.
pub const BOGUS_REVISION: &str = "2024-01-01";
/// Default size of the 10.2 padded body (ordinary traffic: no consent needed).
pub const DEFAULT_PROBE_BYTES: u64 = 1 << 20;
/// Above this the operator must set `oversize_authorised: true`.
pub const CONSENT_ABOVE: u64 = 1 << 20;
/// Never sent, whatever the inputs say (a typo guard).
pub const HARD_MAX: u64 = 10 << 20;

const LEGACY_ONLY: &str =
    "not sent: the mechanism exists only in 2026-07-28 and the session negotiated";

/// `params` of a `resources/read` of `uri`, the URI exactly as given (never normalised).
fn read_params(uri: &str) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("uri".into(), Value::String(uri.to_string()));
    p
}

fn remove_header(h: &mut Vec<Header>, name: &str) {
    h.retain(|x| !x.name.eq_ignore_ascii_case(name));
}

fn set_header(h: &mut Vec<Header>, name: &str, value: &str) {
    remove_header(h, name);
    h.push(Header::new(name, value));
}

impl Probe<'_> {
    /// A complete request for the negotiated revision: `(headers, body, id)`.
    fn complete(&mut self, m: &str, params: Map<String, Value>) -> (Vec<Header>, Value, i64) {
        match self.era {
            Some(Era::Modern) => self.modern(m, params),
            _ => {
                let (h, b, id) = self.legacy(m, params, false);
                (h, b, id.unwrap_or_default())
            }
        }
    }

    fn modern_session(&self) -> bool {
        self.era == Some(Era::Modern)
    }

    fn skip(&self, legs: &[LegId], reason: impl Into<String>) {
        lock(&self.journal).skip(legs, reason);
    }

    fn legacy_only_reason(&self) -> String {
        format!(
            "{LEGACY_ONLY} {}",
            self.revision.as_deref().unwrap_or("no revision")
        )
    }

    /// Send a complete JSON-RPC request of `m` after `edit` changed its headers/body.
    async fn probe_rpc(
        &mut self,
        l: LegId,
        m: &str,
        params: Map<String, Value>,
        edit: impl FnOnce(&mut Vec<Header>, &mut Value),
    ) -> Option<crate::mcp::Reply> {
        let endpoint = self.endpoint.clone()?;
        let (mut h, mut body, id) = self.complete(m, params);
        edit(&mut h, &mut body);
        let awaited = body.get("id").cloned().unwrap_or(Value::from(id));
        Some(
            self.rpc_awaiting(&[l], &endpoint, h, &body, Some(awaited))
                .await,
        )
    }

    /// A non-JSON-RPC request (GET, DELETE) to `url`, recorded under `l`.
    async fn plain(
        &mut self,
        l: LegId,
        method: &str,
        url: url::Url,
        headers: Vec<Header>,
        credential: bool,
    ) {
        let req = Request {
            method: method.into(),
            url,
            headers,
            body: Vec::new(),
            await_id: None,
            head_only_stream: true,
            connect_to: None,
        };
        let sent = self.send_authorized(req, credential).await;
        let mut j = lock(&self.journal);
        sent.record(&mut j, leg::TLS_MODERN, l);
    }

    /// Every probe leg of [`AFTER_INVENTORY`], in order. `info_only` records them all
    /// skipped, in one record.
    pub async fn probe_legs(&mut self, info_only: bool) {
        if info_only {
            let legs: Vec<LegId> = AFTER_INVENTORY
                .iter()
                .flat_map(|f| f.legs().iter().copied())
                .collect();
            self.skip(&legs, "not sent: --info run (connect and enumerate only)");
            return;
        }
        for family in AFTER_INVENTORY {
            family.send(self).await;
        }
    }
}

/// A family of probe legs sent after the inventory, each named for the check that
/// reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// 1.1 ([`c1_1_versions`]).
    Versions,
    /// 2.3 ([`c2_3_auth`]).
    AuthPair,
    /// 2.4 ([`c2_4_headers`]).
    RoutingHeaders,
    /// 2.5 ([`c2_5_origin`]).
    Origins,
    /// 5.2.3 ([`c5_2_3_session`]).
    LegacySurface,
    /// 7.1.2 ([`c7_1_2_null_id`]).
    NullId,
    /// 10.1a ([`c10_limits`]).
    StaticResource,
    /// 10.2a ([`c10_limits`]).
    Padded,
    /// 5.1.1d ([`c5_1_live`]).
    SchemaCall,
    /// 5.1.2c ([`c5_1_live`]).
    TemplateReads,
    /// 5.1.3c and 5.1.3d ([`c5_1_live`]).
    PromptGets,
    /// 5.4.1a ([`c5_4_1_traversal`]), with the operator's consent only.
    Traversal,
}

/// The order in which the families after the inventory are sent (records follow it).
pub const AFTER_INVENTORY: &[Family] = &[
    Family::Versions,
    Family::AuthPair,
    Family::RoutingHeaders,
    Family::Origins,
    Family::LegacySurface,
    Family::NullId,
    Family::StaticResource,
    Family::Padded,
    Family::SchemaCall,
    Family::TemplateReads,
    Family::PromptGets,
    Family::Traversal,
];

impl Family {
    /// The check id whose legs the family sends.
    pub fn check(self) -> &'static str {
        match self {
            Family::Versions => "1.1",
            Family::AuthPair => "2.3",
            Family::RoutingHeaders => "2.4",
            Family::Origins => "2.5",
            Family::LegacySurface => "5.2.3",
            Family::NullId => "7.1.2",
            Family::StaticResource => "10.1",
            Family::Padded => "10.2",
            Family::SchemaCall => "5.1.1",
            Family::TemplateReads => "5.1.2",
            Family::PromptGets => "5.1.3",
            Family::Traversal => "5.4.1",
        }
    }

    /// Every leg id the family may record, in order.
    pub fn legs(self) -> &'static [LegId] {
        match self {
            Family::Versions => &family::VERSIONS,
            Family::AuthPair => &family::AUTH_PAIR,
            Family::RoutingHeaders => &family::ROUTING_HEADERS,
            Family::Origins => &family::ORIGINS,
            Family::LegacySurface => &family::LEGACY_SURFACE,
            Family::NullId => &[leg::NULL_ID],
            Family::StaticResource => &[leg::STATIC_RESOURCE],
            Family::Padded => &[leg::PADDED],
            Family::SchemaCall => &[leg::SCHEMA_CALL],
            Family::TemplateReads => &family::TEMPLATE_READS,
            Family::PromptGets => &family::PROMPT_GETS,
            Family::Traversal => &family::TRAVERSAL,
        }
    }

    /// Send the family's legs (or record why they are skipped).
    pub async fn send(self, p: &mut Probe<'_>) {
        match self {
            Family::Versions => p.versions().await,
            Family::AuthPair => p.auth_pair().await,
            Family::RoutingHeaders => p.routing_headers().await,
            Family::Origins => p.origins().await,
            Family::LegacySurface => p.legacy_surface().await,
            Family::NullId => p.null_id().await,
            Family::StaticResource => p.static_resource().await,
            Family::Padded => p.padded().await,
            Family::SchemaCall => p.schema_call().await,
            Family::TemplateReads => p.template_reads().await,
            Family::PromptGets => p.prompt_gets().await,
            Family::Traversal => p.traversal().await,
        }
    }
}

/// What the legs' unit tests share: a client and a journal for an endpoint that no one
/// serves.
#[cfg(test)]
pub(crate) mod fixture {
    use std::sync::{Arc, Mutex};

    use crate::journal::Journal;
    use crate::transport::http::Client;

    /// A client with the default trust stores, a 2 s deadline and a 64 KiB body cap.
    pub(crate) fn client() -> Client {
        Client::new(
            crate::transport::tls::Trust::load(None).expect("trust"),
            std::time::Duration::from_secs(2),
            1 << 16,
        )
    }

    /// A probe of `journal`'s endpoint `http://127.0.0.1:1/mcp` (nothing listens) with a
    /// session of `revision` already negotiated and the operator's `inputs`.
    pub(crate) fn probe<'a>(
        client: &'a Client,
        journal: Arc<Mutex<Journal>>,
        revision: &str,
        inputs: Option<serde_json::Value>,
    ) -> crate::mcp::Probe<'a> {
        let mut p = crate::mcp::Probe::new(client, journal, None, 1);
        p.endpoint = Some(url::Url::parse("http://127.0.0.1:1/mcp").expect("url"));
        p.era = Some(if revision == mcp_probe_schema::vocab::REV_2026_07_28 {
            mcp_probe_schema::model::Era::Modern
        } else {
            mcp_probe_schema::model::Era::Legacy
        });
        p.revision = Some(revision.into());
        p.inputs = inputs;
        p
    }

    /// Run `f` to completion on a current-thread runtime.
    pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    /// A journal in `dir` for `endpoint` (the test kit's target and options).
    pub(crate) fn journal(dir: &std::path::Path, endpoint: &str) -> Arc<Mutex<Journal>> {
        let ev = mcp_probe_schema::testkit::evidence(endpoint, Vec::new());
        Arc::new(Mutex::new(
            Journal::create(
                dir,
                "t",
                ev.target,
                ev.run.options,
                mcp_probe_schema::redact::Redactor::new(),
            )
            .expect("journal"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_info_skip_lists_every_leg_after_the_inventory_in_order() {
        let legs: Vec<LegId> = AFTER_INVENTORY
            .iter()
            .flat_map(|f| f.legs().iter().copied())
            .collect();
        assert_eq!(
            legs,
            [
                leg::V_SWEEP,
                leg::V_BOGUS,
                leg::V_NO_HEADER,
                leg::V_NO_META_VERSION,
                leg::V_MISMATCH,
                leg::AUTH_NONE,
                leg::AUTH_WITH,
                leg::HDR_NO_METHOD,
                leg::HDR_NO_NAME,
                leg::HDR_NAME_MISMATCH,
                leg::HDR_NAME_ENCODED,
                leg::ORIGIN_HOSTILE,
                leg::ORIGIN_OWN,
                leg::ORIGIN_NONE,
                leg::LEGACY_GET,
                leg::LEGACY_DELETE,
                leg::RESUME_CONTROL,
                leg::RESUME_LAST_EVENT_ID,
                leg::SESSION_CONTROL,
                leg::SESSION_SUPPLIED,
                leg::NULL_ID,
                leg::STATIC_RESOURCE,
                leg::PADDED,
                leg::SCHEMA_CALL,
                leg::TEMPLATE_CONTROL,
                leg::TEMPLATE_MISSING,
                leg::PROMPT_CONTROL,
                leg::PROMPT_MISSING_ARG,
                leg::PROMPT_NAME_CONTROL,
                leg::PROMPT_UNKNOWN,
                leg::TRAVERSAL_CONTROL,
                leg::TRAVERSAL_UNIX,
                leg::TRAVERSAL_WINDOWS,
                leg::TRAVERSAL_ENCODED,
            ]
        );
    }
}
