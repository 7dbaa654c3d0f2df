//! The command-line edge of `mcp-collect`: how a run ends ([`ExitStatus`], one code per
//! outcome), bad operator input ([`UsageError`], exit 2), and the one [`Printer`] that
//! owns stdout and stderr.

use std::path::PathBuf;

pub use super::exit::{help_footer, ExitStatus, Signal};
use super::target::TargetError;
pub use crate::printer::Printer;

/// Bad operator input: exit 2, before any traffic.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// No target given.
    #[error("no target given (pass TARGET... or --servers-file FILE)")]
    NoTargets,
    /// `--from-config` found nothing to collect.
    #[error("--from-config: {0}")]
    FromConfig(String),
    /// A target did not parse.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A `--servers-file` line is not a valid target.
    #[error("{path}:{line}: {source}")]
    ServersFile {
        /// The servers file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong with the target on it.
        #[source]
        source: TargetError,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file has bad contents.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--token-env` names an unset variable.
    #[error("--token-env {0}: the environment variable is not set or empty")]
    TokenEnv(String),
    /// `--client-secret-env` names an unset or empty variable.
    #[error("--client-secret-env {0}: the environment variable is not set or empty")]
    ClientSecretEnv(String),
    /// An environment variable a login flag names is unset or empty.
    #[error("{flag} {var}: the environment variable is not set or empty")]
    EnvVar {
        /// The flag.
        flag: &'static str,
        /// The variable.
        var: String,
    },
    /// The `--grant` lacks a flag it needs, or a flag was given that only another grant
    /// uses.
    #[error("--grant {grant}: {reason}")]
    Grant {
        /// The grant.
        grant: &'static str,
        /// What is missing or out of place.
        reason: String,
    },
    /// `--client-key-file` cannot be used.
    #[error("--client-key-file {path}: {reason}")]
    ClientKey {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A login URL flag is not a usable URL.
    #[error("{flag} {url}: {reason}")]
    LoginUrl {
        /// The flag.
        flag: &'static str,
        /// The value as given.
        url: String,
        /// Why.
        reason: String,
    },
    /// `--client-id` is empty.
    #[error("--client-id: the client id is empty")]
    ClientId,
    /// The bearer token would travel in clear to a remote host.
    #[error("refusing to send the --token-env credential to {0} over plain http (only https or a loopback target)")]
    PlaintextToken(String),
    /// A credential (the `--token-env` token or a sensitive `--header`) would cross a
    /// proxy in clear: a plain-http target (loopback or not) reached through a proxy.
    #[error("refusing to send {what} to {target} over plain http through the proxy {proxy} (use https, or NO_PROXY for the target)")]
    ProxiedPlaintextCredential {
        /// Which credential.
        what: String,
        /// The target as typed.
        target: String,
        /// The proxy (without its credentials).
        proxy: String,
    },
    /// `--tsa` is not a usable URL.
    #[error("--tsa {url}: {reason}")]
    Tsa {
        /// The value as given.
        url: String,
        /// Why.
        reason: String,
    },
    /// Signing key problem.
    #[error(transparent)]
    Key(#[from] crate::keys::KeyError),
    /// `--stdio`, `--env` or the command: the text names the input.
    #[error("{0}")]
    Stdio(String),
    /// Trust store problem.
    #[error(transparent)]
    Trust(#[from] crate::transport::tls::TrustError),
    /// `--header`, the proxy or the client certificate.
    #[error(transparent)]
    Net(#[from] super::net::NetError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_name_themselves_and_map_to_shell_exit_codes() {
        assert_eq!(ExitStatus::Interrupted(Signal::Int).code(), 130);
        assert_eq!(ExitStatus::Interrupted(Signal::Term).code(), 143);
        assert_eq!(ExitStatus::Interrupted(Signal::Hup).code(), 129);
        assert_eq!(ExitStatus::NoSession.code(), 3);
        assert_eq!(ExitStatus::Usage.code(), 2);
        assert_eq!(ExitStatus::WriteFailed.code(), 1);
        assert_eq!(ExitStatus::Internal.code(), 1);
        assert_eq!(ExitStatus::Ok.code(), 0);
        assert_eq!(Signal::Term.name(), "SIGTERM");
    }
}
