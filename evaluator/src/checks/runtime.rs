//! The runtime rules: server configuration.
//!
//! * `tool-schemas-validated`, `resource-templates-typed`, `prompt-arguments-validated`
//!   are graded from the inventory: every page of `tools/list`,
//!   `resources/templates/list` and `prompts/list`, read as raw JSON (never through a
//!   lenient model that would coerce `"required": "yes"` to `true` or drop a null
//!   `uriTemplate`; [`crate::checks::common::inventory`]), and from their live legs
//!   (one tool call, resource reads, prompt gets; `live`).
//! * `path-confinement` is graded from the path-traversal reads the collector sends only
//!   with the operator's consent.
//! * `legacy-session-disabled` is graded on the wire, on 2026-07-28 only.
//! * `stdio-logs-separated` is graded from the stdout lines of a stdio bundle, N/A on
//!   HTTP.
//! * `list-changed-rate-limited`, `session-not-authentication`, `tasks-authorized`,
//!   `idempotency-keys` are reported only: always N/A, with the reason and what the
//!   bundle shows (defined here as [`ReportedOnly`] values).
//!
//! Every page of a list is read (a list cut short says which pages went unexamined);
//! the inventory gate says whether a list was not declared, refused, unparsable or
//! empty; a tool without `inputSchema` fails `tool-schemas-validated` a (MCP requires
//! one); a list request that got no response at all is ERROR (the observation was never
//! made), not UNKNOWN.

pub mod legacy_session_disabled;
pub mod prompt_arguments_validated;
pub mod resource_templates_typed;
pub mod stdio_logs_separated;
pub mod tool_schemas_validated;
pub use stdio_logs_separated::StdioLogsSeparated;
mod live;
pub mod path_confinement;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::check::{Context, Legs};
use crate::checks::common::reported::{nothing, Observed, ReportedOnly};
use crate::evidence::Bundle;

/// The capabilities object, only when a session was negotiated (`None`: unobserved,
/// which is not "declared none").
fn negotiated_capabilities(ev: &Bundle) -> Option<&Value> {
    ev.revision().and(ev.capabilities())
}

/// One observation, with the check's facts as details.
fn observed<T: Serialize>(note: &str, facts: &T) -> Observed {
    let details = crate::details::Details::from_facts(facts).unwrap_or_default();
    Observed {
        notes: vec![note.to_string()],
        details,
        records: Vec::new(),
    }
}

/// `list-changed-rate-limited`: listChanged notifications rate-limited.
pub static LIST_CHANGED_RATE_LIMITED: ReportedOnly = ReportedOnly {
    id: "list-changed-rate-limited",
    reduction: "the whole recommendation is server-side: the notification rate and its configured interval are \
             not observable from a client; nothing is probed",
    legs: Legs::NONE,
    observe: list_changed,
};

/// `list-changed-rate-limited`'s details.
#[derive(Serialize)]
struct ListChangedFacts {
    /// `listChanged` declared, by list (null: no session, so not observed).
    list_changed_declared: Option<Map<String, Value>>,
}

/// Which lists the server says may change: context for the reader, not graded.
fn list_changed(ev: &Bundle, _cx: &Context<'_>) -> Observed {
    let flags: Option<Map<String, Value>> = negotiated_capabilities(ev).map(|c| {
        ["tools", "resources", "prompts"]
            .iter()
            .map(|k| {
                let on = c.get(*k).and_then(|v| v.get("listChanged")) == Some(&Value::Bool(true));
                (k.to_string(), Value::Bool(on))
            })
            .collect()
    });
    let seen = match &flags {
        None => "no capabilities (no session was established)".to_string(),
        Some(f) => {
            let on: Vec<&str> = f
                .iter()
                .filter(|(_, v)| **v == Value::Bool(true))
                .map(|(k, _)| k.as_str())
                .collect();
            if on.is_empty() {
                "the server declares listChanged on none of tools, resources, prompts".to_string()
            } else {
                crate::format_exact!("the server declares listChanged on {}", on.join(", "))
            }
        }
    };
    observed(
        &seen,
        &ListChangedFacts {
            list_changed_declared: flags,
        },
    )
}

/// `session-not-authentication`: sessions not used as authentication.
pub static SESSION_NOT_AUTHENTICATION: ReportedOnly = ReportedOnly {
    id: "session-not-authentication",
    reduction: "whether the server ever treats a session as proof of identity is application logic a black-box \
             probe cannot reach; nothing is probed",
    legs: Legs::NONE,
    observe: session_id_issued,
};

/// `session-not-authentication`'s details.
#[derive(Serialize)]
struct SessionIdFacts {
    /// The handshake issued an `Mcp-Session-Id` (null: no session).
    session_id_issued: Option<bool>,
}

/// Whether the handshake issued an `Mcp-Session-Id`.
fn session_id_issued(ev: &Bundle, _cx: &Context<'_>) -> Observed {
    let issued = ev
        .revision()
        .and(ev.session())
        .map(|s| s.session_id.is_some());
    let seen = match issued {
        None => "no session was established",
        Some(true) => "the handshake issued an Mcp-Session-Id",
        Some(false) => "no Mcp-Session-Id was issued",
    };
    observed(
        seen,
        &SessionIdFacts {
            session_id_issued: issued,
        },
    )
}

/// `tasks-authorized`: authorization, scope and expiry on MCP Tasks.
pub static TASKS_AUTHORIZED: ReportedOnly = ReportedOnly {
    id: "tasks-authorized",
    reduction: "task authorization, scoping and expiry are server-side policy that needs two identities and task \
             creation to observe; nothing is probed",
    legs: Legs::NONE,
    observe: tasks_declared,
};

/// `tasks-authorized`'s details.
#[derive(Serialize)]
struct TasksFacts {
    /// The server declares the tasks capability (null: no session, so not observed).
    tasks_declared: Option<bool>,
}

/// Whether the server declares the tasks capability.
fn tasks_declared(ev: &Bundle, _cx: &Context<'_>) -> Observed {
    let tasks = negotiated_capabilities(ev).map(|c| c.get("tasks").is_some_and(|v| !v.is_null()));
    let seen = match tasks {
        None => "no capabilities (no session was established), so whether the server offers tasks is unknown",
        Some(true) => "the server declares the tasks capability",
        Some(false) => "the server does not declare the tasks capability",
    };
    observed(
        seen,
        &TasksFacts {
            tasks_declared: tasks,
        },
    )
}

/// `idempotency-keys`: idempotency keys for side-effecting tool calls.
pub static IDEMPOTENCY_KEYS: ReportedOnly = ReportedOnly {
    id: "idempotency-keys",
    reduction:
        "idempotent handling of repeated side-effecting calls is server-side behaviour this probe \
             deliberately does not trigger; nothing is probed",
    legs: Legs::NONE,
    observe: nothing,
};

#[cfg(test)]
mod tests {
    use super::prompt_arguments_validated::PromptArgumentsValidated;
    use super::resource_templates_typed::ResourceTemplatesTyped;
    use super::tool_schemas_validated::ToolSchemasValidated;
    use super::*;
    use crate::check::{Check, Needs};
    use crate::fixture::sub as sub_of;
    use crate::fixture::{evidence, session};
    use crate::preconditions::run_rule;
    use crate::verdict::{Outcome, SubOutcome, Verdict};
    use serde_json::json;

    const REV: &str = "2025-11-25";

    #[test]
    fn reported_only_checks_are_na_with_their_observations() {
        let ev = evidence(
            Some(session(
                Some(REV),
                json!({"tools": {"listChanged": true}, "tasks": {}}),
                None,
            )),
            vec![],
        );
        for c in [
            &LIST_CHANGED_RATE_LIMITED as &dyn Check,
            &SESSION_NOT_AUTHENTICATION,
            &StdioLogsSeparated,
            &TASKS_AUTHORIZED,
            &IDEMPOTENCY_KEYS,
        ] {
            let o = run_rule(c, &ev, &Context::default());
            assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
            assert_eq!(o.details["transport"], "streamable-http", "{}", o.evidence);
            assert!(!o.evidence.is_empty() && !o.reduction.is_empty());
            assert_eq!(c.needs(), Needs::Nothing);
        }
        let o = run_rule(
            &TASKS_AUTHORIZED,
            &ev,
            &crate::fixture::cx("tasks-authorized"),
        );
        assert_eq!(o.details["tasks_declared"], true);
        assert!(o.evidence.contains("tasks/list was removed in 2026-07-28"));
        let o = run_rule(
            &LIST_CHANGED_RATE_LIMITED,
            &ev,
            &crate::fixture::cx("list-changed-rate-limited"),
        );
        assert!(
            o.evidence.ends_with(
                "; transport streamable-http (endpoint http://127.0.0.1:8080/mcp); \
                 the server declares listChanged on tools"
            ),
            "{}",
            o.evidence
        );
        assert!(
            o.evidence
                .starts_with("reported only: read from the benchmark text"),
            "{}",
            o.evidence
        );
        assert!(run_rule(&StdioLogsSeparated, &ev, &Context::default())
            .evidence
            .contains("stdio"));
        assert!(run_rule(
            &SESSION_NOT_AUTHENTICATION,
            &ev,
            &crate::fixture::cx("session-not-authentication")
        )
        .evidence
        .contains("the adjacent property (authentication enforced before a response)"));

        // Without a session the capabilities were never observed: null, not false.
        let ev = evidence(None, vec![]);
        let o = run_rule(
            &TASKS_AUTHORIZED,
            &ev,
            &crate::fixture::cx("tasks-authorized"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable);
        assert_eq!(o.details["tasks_declared"], Value::Null);
        assert_eq!(o.details["transport"], "unknown");
        let ev = evidence(Some(session(Some(REV), json!({"tools": {}}), None)), vec![]);
        assert_eq!(
            run_rule(
                &TASKS_AUTHORIZED,
                &ev,
                &crate::fixture::cx("tasks-authorized")
            )
            .details["tasks_declared"],
            false
        );
    }

    // ----- the lab's own bundles

    /// Every bundle in examples/ graded by every runtime rule, against what the lab
    /// servers serve (lab/*/server.*, lab/expect.json):
    ///
    /// * py2, py2-sl-json (mcp 2.3.0), py1 (mcp 1.30.0), fastmcp 4.2.3: the Python SDKs
    ///   derive each tool's inputSchema and outputSchema from the function signature
    ///   (pydantic, no `$schema`, so 2020-12); both compile → `tool-schemas-validated` a
    ///   and b pass, no external $ref → PASS. fastmcp's `x-fastmcp-wrap-result` is an
    ///   unknown keyword, which 2020-12 allows.
    /// * ts2, ts2-reject (@modelcontextprotocol/server 2.4.0): zod input schemas declare
    ///   `$schema` 2020-12 and compile → a pass; `registerTool` is given no output
    ///   schema, so no tool declares one → b unknown → UNKNOWN.
    /// * py2-paged: 23 tools over 5 pages, input schemas only → a pass over every page,
    ///   b unknown → UNKNOWN.
    /// * Every server with a session lists one template (`greeting://{name}` or
    ///   `paged://item/{id}`) with `mimeType: text/plain` → `resource-templates-typed`
    ///   declarations pass, and the prompt `review` whose one argument `code` has
    ///   `required: true` → `prompt-arguments-validated` declarations pass.
    /// * py2-auth: 401 and no credential, so no session: the runner makes every
    ///   session check UNKNOWN; reported-only checks stay N/A with tasks_declared null.
    /// * Reported-only checks: N/A everywhere; no lab server declares `tasks`.
    #[test]
    fn lab_bundles_get_the_verdicts_their_servers_deserve() {
        use Verdict::{Fail, NotApplicable as NA, Pass, Unknown};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        // Without probe inputs `tool-schemas-validated` d is UNKNOWN, so that rule is at
        // best UNKNOWN; the greeting/paged templates generate content for a made-up
        // value, so `resource-templates-typed` c and the rule are UNKNOWN; the Python
        // MCPServer answers a prompts/get without its required argument with -32603
        // (2026-07-28) or code 0 (py1), not -32602, so `prompt-arguments-validated`
        // FAILs there (its default strictness) and passes on ts2, fastmcp and py2-paged.
        let expected: &[(&str, [Verdict; 3])] = &[
            ("py2.mcpev", [Unknown, Unknown, Fail]),
            ("py2-sl-json.mcpev", [Unknown, Unknown, Fail]),
            ("py1.mcpev", [Unknown, Unknown, Fail]),
            ("fastmcp.mcpev", [Unknown, Unknown, Pass]),
            ("ts2.mcpev", [Unknown, Unknown, Pass]),
            ("ts2-reject.mcpev", [Unknown, Unknown, Pass]),
            ("py2-paged.mcpev", [Unknown, Unknown, Pass]),
            ("py2-auth.mcpev", [Unknown, Unknown, Unknown]),
        ];
        let bundles: Vec<_> = std::fs::read_dir(&dir)
            .expect("examples dir")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
            .collect();
        let seen = bundles.len();
        for path in bundles {
            let bytes = std::fs::read(&path).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            let ev = Bundle::new(path.display().to_string(), v);
            let outcomes: Vec<Outcome> = [
                &ToolSchemasValidated as &dyn Check,
                &ResourceTemplatesTyped,
                &PromptArgumentsValidated,
                &LIST_CHANGED_RATE_LIMITED,
                &SESSION_NOT_AUTHENTICATION,
                &StdioLogsSeparated,
                &TASKS_AUTHORIZED,
                &IDEMPOTENCY_KEYS,
            ]
            .iter()
            .map(|c| run_rule(*c, &ev, &Context::default()))
            .collect();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            for o in &outcomes[3..] {
                assert_eq!(o.verdict, NA, "{name}: {o:#?}");
            }
            assert_ne!(outcomes[6].details["tasks_declared"], true, "{name}");
            let Some((_, want)) = expected.iter().find(|(n, _)| *n == name) else {
                // A bundle added later: it must at least grade without a panic.
                for o in &outcomes {
                    assert!(!o.evidence.contains("check raised"), "{name}: {o:#?}");
                }
                continue;
            };
            for (o, w) in outcomes.iter().zip(want) {
                assert_eq!(o.verdict, *w, "{name}: {o:#?}");
            }
            if name != "py2-auth.mcpev" {
                let a = sub_of(&outcomes[0], "a");
                assert_eq!(a.outcome, SubOutcome::Pass, "{name}: {a:?}");
                assert!(
                    outcomes[0].evidence.contains("read completely"),
                    "{name}: {}",
                    outcomes[0].evidence
                );
                assert_eq!(outcomes[0].details["external_refs"], 0, "{name}");
            }
            if name.starts_with("ts2") || name == "py2-paged.mcpev" {
                assert!(
                    sub_of(&outcomes[0], "b")
                        .note
                        .contains("declares an outputSchema"),
                    "{name}"
                );
            }
            if name == "py2-paged.mcpev" {
                assert!(
                    outcomes[0].evidence.contains("23 tools on 5 pages"),
                    "{}",
                    outcomes[0].evidence
                );
                // The five tools/list pages, and the record of sub-verdict d (skipped: no
                // schema_probe_tool).
                assert_eq!(outcomes[0].records.len(), 6);
            }
            if name == "py2-auth.mcpev" {
                assert_eq!(outcomes[6].details["tasks_declared"], Value::Null);
            }
        }
        assert!(
            seen >= expected.len(),
            "only {seen} bundles in {}",
            dir.display()
        );
    }
}
