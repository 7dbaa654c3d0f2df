//! Rule `stdio-credentials`: stdio server credentials from the environment or the OS store.
//!
//! On a stdio bundle the wire-visible part is the command line the server was launched
//! with (the process record): an argument the collector took for a credential (the
//! value after a flag named like a token, key, secret, password, auth or credential, the
//! value of such a `--flag=value`, or a long high-entropy value) is the failure: a
//! credential on a command line is visible to every user of the host (`ps`, `/proc`).
//! The evidence names the flag and the position, never the value (the bundle holds only
//! its fingerprint). Otherwise PASS in part: where the environment got its values, and
//! whether an OS store was used, is host-side. On HTTP: N/A, as before.

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;
use serde::Serialize;

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::reported::reported_only;
use crate::checks::common::stdio::process;
use crate::evidence::Bundle;
use crate::preconditions::missing_legs;
use crate::verdict::{Outcome, Verdict};

/// Stdio server credentials from environment / OS store.
#[derive(Debug)]
pub struct StdioCredentials;

const NOT_STDIO: &str = "the recommendation governs stdio servers, whose credentials come from the launch \
     configuration and the process environment or OS credential store on the host; this bundle was collected \
     over HTTP, where none of that crosses the wire";
const REDUCTION_HTTP: &str =
    "the whole recommendation is host-side on HTTP: launch configuration, process \
     environment and OS credential store are not read; nothing is probed";
const REDUCTION: &str = "in part: the command line of this launch is read (credential-named flags and \
     high-entropy values); how the environment got its values, whether an OS credential store is used, and \
     credentials in files the server reads are host-side and not seen; a credential under an innocuous flag \
     name and of low entropy is not recognised";

const REDUCTION_CONFIG: &str = "in part: the command line of this launch and the client configuration entry \
     it came from are read (credential-named flags and high-entropy values; each environment value the file \
     sets, written in it literally or referenced); where a referenced value comes from, whether an OS \
     credential store is used, and credentials in files the server reads are host-side and not seen; a \
     credential under an innocuous name and of low entropy is not recognised";

/// The details of the outcome.
#[derive(Serialize)]
struct Facts {
    /// `stdio`.
    transport: &'static str,
    /// Arguments taken for credentials: position, flag, why (never the value).
    credential_args: Vec<serde_json::Value>,
    /// Names of the variables given in the environment (never their values).
    env_names: Vec<String>,
    /// The client configuration entry the server was launched from, when the collector
    /// read one: each variable the file sets, how it is written there, and whether it
    /// looks like a secret (never the value). Absent for a bundle of a `--stdio` target.
    #[serde(skip_serializing_if = "Option::is_none")]
    config_env: Option<Vec<serde_json::Value>>,
}

/// The variables a client configuration file writes literally that look like secrets,
/// with the file and entry they are in: the observation the recommendation is about
/// (a credential kept in a launch configuration instead of the environment or an OS
/// store).
fn literal_secrets(src: &mcp_probe_schema::model::ConfigSource) -> Vec<&str> {
    src.env
        .iter()
        .filter(|v| v.written == "literal" && v.secret_like)
        .map(|v| v.name.as_str())
        .collect()
}

impl Check for StdioCredentials {
    fn id(&self) -> &'static str {
        "stdio-credentials"
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(&[], &[leg::STDIO_PROCESS])
    }

    fn needs(&self) -> Needs {
        // The command line is known whether or not a session followed.
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        if !ev.is_stdio() {
            return reported_only(ev, NOT_STDIO, &[], REDUCTION_HTTP);
        }
        // Read through the leg so the leg contract sees it.
        let _ = ev.has_leg(leg::STDIO_PROCESS);
        let Some((seq, p)) = process(ev) else {
            return missing_legs(ev, &[leg::STDIO_PROCESS]);
        };
        let source = ev
            .payload
            .target
            .source
            .as_ref()
            .filter(|s| s.transport == "stdio");
        let facts = Facts {
            transport: ev.transport(),
            credential_args: p
                .credential_args
                .iter()
                .map(|c| serde_json::json!({"index": c.index, "flag": c.flag, "why": c.why}))
                .collect(),
            env_names: p.env_names.clone(),
            config_env: source.map(|src| {
                src.env
                    .iter()
                    .map(|v| {
                        serde_json::json!({"name": v.name, "written": v.written, "secret_like": v.secret_like})
                    })
                    .collect()
            }),
        };
        let reduction = if source.is_some() {
            REDUCTION_CONFIG
        } else {
            REDUCTION
        };
        let (config, literal) = match source {
            None => (String::new(), Vec::new()),
            Some(src) => {
                let literal = literal_secrets(src);
                let referenced: Vec<&str> = src
                    .env
                    .iter()
                    .filter(|v| v.written != "literal" && v.secret_like)
                    .map(|v| v.name.as_str())
                    .collect();
                let place = crate::format_exact!(
                    "the {} configuration {} (entry {})",
                    crate::fmt::Line(&src.client),
                    crate::fmt::Line(&src.file),
                    crate::fmt::Line(&src.entry)
                );
                let said = if !literal.is_empty() {
                    crate::format_exact!(
                        "; {place} writes the value of {} in the file itself (the bundle keeps only its fingerprint)",
                        crate::fmt::Line(&literal.join(", "))
                    )
                } else if !referenced.is_empty() {
                    crate::format_exact!(
                        "; {place} references {} from the environment instead of writing the value",
                        crate::fmt::Line(&referenced.join(", "))
                    )
                } else {
                    crate::format_exact!("; {place} writes no value that looks like a secret")
                };
                (said, literal)
            }
        };
        let env = if p.env_names.is_empty() {
            "no variable was given in the environment".to_string()
        } else {
            crate::format_exact!(
                "variable(s) given in the environment: {}",
                crate::fmt::Line(&p.env_names.join(", "))
            )
        };
        if !p.credential_args.is_empty() {
            let named: Vec<String> = p
                .credential_args
                .iter()
                .map(|c| match (&c.flag, c.why.as_str()) {
                    (Some(f), "entropy") => {
                        crate::format_exact!(
                            "argument {} (a high-entropy value of {})",
                            c.index,
                            crate::fmt::Line(f)
                        )
                    }
                    (Some(f), _) => {
                        crate::format_exact!(
                            "argument {} (the value of {})",
                            c.index,
                            crate::fmt::Line(f)
                        )
                    }
                    (None, _) => {
                        crate::format_exact!("argument {} (a high-entropy value)", c.index)
                    }
                })
                .collect();
            return Outcome::single(
                Verdict::Fail,
                crate::format_exact!(
                    "the server was launched with a credential on its command line: {} (the bundle keeps only \
                     its fingerprint); {env}{config}",
                    named.join(", ")
                ),
                reduction,
            )
            .with_records([seq])
            .with_facts(&facts);
        }
        if !literal.is_empty() {
            return Outcome::single(
                Verdict::Fail,
                crate::format_exact!(
                    "a credential is written in the launch configuration: no argument of the command line looks \
                     like one ({} argument(s)); {env}{config}",
                    p.argv.len().saturating_sub(1)
                ),
                reduction,
            )
            .with_records([seq])
            .with_facts(&facts);
        }
        Outcome::single(
            Verdict::Pass,
            crate::format_exact!(
                "no argument of the command line looks like a credential ({} argument(s)); {env}{config}",
                p.argv.len().saturating_sub(1)
            ),
            reduction,
        )
        .with_records([seq])
        .with_facts(&facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, session, stdio_evidence, stdio_process};
    /// The rule graded directly, rendered outside any definition (local names).
    fn run(
        check: &dyn crate::check::Check,
        ev: &crate::evidence::Bundle,
        cx: &crate::check::Context<'_>,
    ) -> crate::verdict::Outcome {
        crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
    }
    use mcp_probe_schema::model::CredentialArg;
    use serde_json::json;

    #[test]
    fn a_credential_argument_fails_naming_the_flag_never_the_value() {
        let fp = "redacted:sha256:00ff";
        let ev = stdio_evidence(
            None,
            vec![stdio_process(
                &["server", "--api-key", fp],
                vec![CredentialArg {
                    index: 2,
                    flag: Some("--api-key".into()),
                    why: "flag".into(),
                }],
                &["HOME_DIR"],
            )],
        );
        let o = run(&StdioCredentials, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            o.evidence.contains("argument 2 (the value of --api-key)"),
            "{}",
            o.evidence
        );
        assert!(o.evidence.contains("HOME_DIR"), "{}", o.evidence);
        assert_eq!(o.details["credential_args"][0]["flag"], "--api-key");
    }

    #[test]
    fn a_clean_command_line_passes_in_part_and_a_missing_record_is_an_error() {
        let ev = stdio_evidence(
            None,
            vec![stdio_process(&["server", "-v"], Vec::new(), &[])],
        );
        let o = run(&StdioCredentials, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(o.reduction.starts_with("in part"), "{}", o.reduction);
        let ev = stdio_evidence(None, Vec::new());
        let o = run(&StdioCredentials, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        assert!(o.evidence.contains("stdio.process"), "{}", o.evidence);
        let ev = evidence(Some(session(Some("2026-07-28"), json!({}), None)), vec![]);
        assert_eq!(
            run(&StdioCredentials, &ev, &Context::default()).verdict,
            Verdict::NotApplicable
        );
    }

    /// A stdio bundle collected from a client configuration entry (`--from-config`).
    fn from_config(env: &[(&str, &str, bool)]) -> crate::evidence::Bundle {
        use mcp_probe_schema::model::{ConfigSource, ConfigValue};
        let mut ev = stdio_evidence(
            None,
            vec![stdio_process(
                &["server", "-v"],
                Vec::new(),
                &env.iter().map(|e| e.0).collect::<Vec<_>>(),
            )],
        );
        ev.payload_mut().target.source = Some(ConfigSource {
            client: "claude-desktop".into(),
            scope: "user".into(),
            file: "/home/u/.config/Claude/claude_desktop_config.json".into(),
            file_sha256: "00".repeat(32),
            entry: "files".into(),
            transport: "stdio".into(),
            env: env
                .iter()
                .map(|(name, written, secret_like)| ConfigValue {
                    name: name.to_string(),
                    written: written.to_string(),
                    fingerprint: Some("redacted:sha256:00ff".into()),
                    secret_like: *secret_like,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        ev
    }

    #[test]
    fn a_secret_written_in_the_client_configuration_fails_a_referenced_one_passes() {
        let o = run(
            &StdioCredentials,
            &from_config(&[
                ("LOG_LEVEL", "literal", false),
                ("API_TOKEN", "literal", true),
            ]),
            &Context::default(),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            o.evidence
                .contains("writes the value of API_TOKEN in the file itself"),
            "{}",
            o.evidence
        );
        assert!(o.evidence.contains("entry files"), "{}", o.evidence);
        assert!(!o.evidence.contains("00ff"), "{}", o.evidence);
        assert_eq!(o.details["config_env"][1]["written"], "literal");
        assert!(
            o.reduction.contains("client configuration entry"),
            "{}",
            o.reduction
        );

        let o = run(
            &StdioCredentials,
            &from_config(&[("API_TOKEN", "reference", true)]),
            &Context::default(),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(
            o.evidence
                .contains("references API_TOKEN from the environment"),
            "{}",
            o.evidence
        );
        // A bundle of a plain --stdio target has no configuration facts: no new detail.
        let o = run(
            &StdioCredentials,
            &stdio_evidence(None, vec![stdio_process(&["server"], Vec::new(), &[])]),
            &Context::default(),
        );
        assert!(!o.details.contains_key("config_env"), "{o:?}");
    }
}
