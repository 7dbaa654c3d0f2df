//! Command-line flags (design.md §6). Parsing only: no I/O, no decisions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Grades MCP servers from signed evidence bundles, offline.
#[derive(Debug, Parser)]
#[command(name = "mcp-grade", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok, 1 a FAIL, 2 usage or unreadable input, 3 a bundle failed verification, \
                        4 an ERROR and no FAIL."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Verify bundles: format, record chain, signature, and the signer against --trust.
    ///
    /// Prints one line per bundle: OK with signer, collection time, target, endpoint,
    /// run status and record count, or INVALID with what failed. Exit 0 when every bundle
    /// verified, 3 when any failed, 2 when any could not be read (every bundle is still
    /// reported) or a --trust file is unusable.
    Verify(VerifyArgs),
    /// Show what a bundle recorded: readable transcript, JSON, or HAR.
    ///
    /// Verifies first; a bundle that fails verification is still shown as far as it can
    /// be decoded, with a warning on stderr, and the exit status is 3.
    Show(ShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// Bundle files (.mcpev).
    #[arg(required = true, value_name = "BUNDLE")]
    pub(crate) bundles: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) trust: Trust,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Bundle file (.mcpev).
    #[arg(value_name = "BUNDLE")]
    pub(crate) bundle: PathBuf,
    /// Emit the whole decoded bundle as one JSON document.
    #[arg(long, conflicts_with = "har")]
    pub(crate) json: bool,
    /// Emit the HTTP exchanges as a HAR 1.2 log.
    #[arg(long)]
    pub(crate) har: bool,
    #[command(flatten)]
    pub(crate) trust: Trust,
}

#[derive(Debug, Args)]
pub(crate) struct Trust {
    /// Pin a collector public key (SPKI PEM, 64 hex digits, or base64); repeatable.
    /// With pins, a bundle signed by any other key fails verification.
    #[arg(long = "trust", value_name = "KEYFILE")]
    pub(crate) keys: Vec<PathBuf>,
}
