//! Step-up authorization (MCP authorization, "Scope challenge handling"): a consented call
//! the server answers with 403 and `WWW-Authenticate: … error="insufficient_scope",
//! scope="…"` asks the client to authorize again for more scope. Once per run, the
//! collector asks for the union of the login's scope and the challenged one (the
//! authorization server sees the same client: no new registration), and sends that one
//! call again with the new token under the leg `step_up.retry`. The first answer stays
//! the evidence of its own leg; `session.step_up` says what was asked and what came of it.

use mcp_probe_schema::model::StepUp;
use mcp_probe_schema::vocab::{header, leg, LegId};

use super::c1_3_7_2_2_tools::Chosen;
use crate::journal::lock;
use crate::mcp::{Probe, Reply};

/// A call waiting for the step-up.
pub use crate::mcp::StepUpPending as Pending;

/// The scopes of `a` and then those of `b` not already in it, space-separated.
pub fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// The `scope` of an `insufficient_scope` challenge among `headers`' `WWW-Authenticate`
/// values: `Some(scope)` (`Some(None)` when the challenge names none), `None` when no
/// challenge says `insufficient_scope`.
pub fn insufficient_scope(headers: &[mcp_probe_schema::model::Header]) -> Option<Option<String>> {
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(header::WWW_AUTHENTICATE))
        .flat_map(|h| mcp_probe_schema::www_authenticate::parse(&h.value).challenges)
        .find(|c| c.param("error") == Some("insufficient_scope"))
        .map(|c| c.scope().map(str::to_string))
}

impl Probe<'_> {
    /// After a consented call: a 403 `insufficient_scope` answer is kept for the step-up
    /// (the first one of the run; later ones are evidence only).
    pub(crate) fn note_insufficient_scope(
        &mut self,
        reply: &Reply,
        l: LegId,
        tool: &Chosen,
        progress: Option<&str>,
    ) {
        if reply.status != Some(403) || self.stepped_up || self.step_up.is_some() {
            return;
        }
        if let Some(challenged_scope) = insufficient_scope(&reply.headers) {
            self.step_up = Some(Pending {
                challenged_scope,
                seq: reply.seq,
                leg: l,
                tool: tool.name.clone(),
                arguments: tool.arguments.clone(),
                progress: progress.map(str::to_string),
            });
        }
    }

    /// The step-up asked for, if any (taken: asked once per run).
    pub fn take_step_up(&mut self) -> Option<Pending> {
        let p = self.step_up.take()?;
        self.stepped_up = true;
        Some(p)
    }

    /// Send the refused call again with `token` (leg `step_up.retry`) and record the
    /// step-up in the session; `failure` when no token was obtained (nothing is sent).
    pub async fn finish_step_up(
        &mut self,
        p: &Pending,
        requested_scope: String,
        token: Result<String, String>,
    ) {
        let mut fact = StepUp {
            challenge_in: p.seq,
            challenged_scope: p.challenged_scope.clone(),
            requested_scope,
            obtained: token.is_ok(),
            failure: token.as_ref().err().cloned(),
            retry_in: None,
        };
        if let (Ok(t), Some(endpoint)) = (token, self.endpoint.clone()) {
            self.token = Some(t);
            let tool = Chosen {
                name: p.tool.clone(),
                arguments: p.arguments.clone(),
            };
            let reply = self
                .tool_call(leg::STEP_UP_RETRY, &endpoint, &tool, p.progress.as_deref())
                .await;
            fact.retry_in = Some(reply.seq);
        }
        lock(&self.journal).update_session(|s| s.step_up = Some(fact));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::model::Header;

    #[test]
    fn the_union_keeps_each_scope_once_in_order() {
        assert_eq!(
            union(Some("mcp:basic"), Some("mcp:write mcp:basic")).as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(union(None, Some("a")).as_deref(), Some("a"));
        assert_eq!(union(None, None), None);
    }

    #[test]
    fn only_an_insufficient_scope_challenge_asks_for_a_step_up() {
        let h = |v: &str| vec![Header::new("WWW-Authenticate", v)];
        assert_eq!(
            insufficient_scope(&h(
                r#"Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="x""#
            )),
            Some(Some("mcp:write".into()))
        );
        assert_eq!(
            insufficient_scope(&h(r#"Bearer error="insufficient_scope""#)),
            Some(None)
        );
        assert_eq!(
            insufficient_scope(&h(r#"Bearer error="invalid_token""#)),
            None
        );
        assert_eq!(insufficient_scope(&[]), None);
    }
}
