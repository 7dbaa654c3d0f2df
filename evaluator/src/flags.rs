//! Command-line flags of `mcp-grade`. Parsing only: no I/O, no decisions. [`command`] is
//! the source of `--help`, the man pages and completions (docs/man, docs/completions) and
//! of what evaluator/tests/docs_help.rs holds README.md and docs/ to.
//!
//! Grading is the command without a subcommand name: `mcp-grade [OPTIONS] BUNDLE...`.
//! clap's `args_conflicts_with_subcommands` makes the first word decide: `verify` and
//! `show` are subcommands, anything else is a bundle to grade (a bundle file literally
//! named `verify` or `show` is graded as `./verify`). Grading options therefore go
//! with grading only: in `mcp-grade --format json verify x`, `verify` is a bundle path.

use std::path::PathBuf;

use crate::report::Format;
use crate::waivers::FailOn;
use clap::{Args, CommandFactory, Parser, Subcommand};

/// Grades MCP servers from signed evidence bundles, offline.
///
/// Without a subcommand, grades every BUNDLE against the CIS MCP Server Benchmark and
/// writes one check-centric report (text, JSON, SARIF, JUnit XML, Markdown or HTML; see
/// --format) to stdout or -o FILE. Every bundle is
/// verified first; if any cannot be read or fails verification, nothing is graded.
#[derive(Debug, Parser)]
#[command(name = "mcp-grade", version = env!("MCP_PROBE_LONG_VERSION"), about, long_about)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(after_help = crate::exit::help_footer())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub grade: GradeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Verify bundles: format, record chain, signature, the signer against --trust and
    /// --trust-list, the RFC 3161 timestamp when the bundle carries one, and its renewals
    /// (the detached tokens BUNDLE.tsr, BUNDLE.tsr.2, ... beside it, written by
    /// `mcp-collect timestamp`).
    ///
    /// Prints one line per bundle: OK with signer, collection time, target, endpoint,
    /// run status, record count and the timestamp (TSA and genTime, or "no timestamp"),
    /// then, when it has sidecars, the earliest time the chain proves and each link
    /// (file, TSA, genTime, certificate end), and with --trust-list the key that
    /// applied, its period and the time judged; or INVALID with what failed (a timestamp
    /// token or sidecar that fails a step names it and the step, `link` when a renewal
    /// was made after the previous TSA certificate expired); with --json, one JSON object
    /// per bundle (JSON Lines). Exit 0 when every bundle verified, 3 when any failed, 2
    /// when any bundle or sidecar could not be read (every bundle is still reported) or a
    /// --trust, --trust-list or --tsa-cert file is unusable.
    Verify(VerifyArgs),
    /// Show what a bundle recorded: readable transcript, JSON, or HAR.
    ///
    /// Verifies first; a bundle that fails verification is still shown as far as it can
    /// be decoded, with a warning on stderr, and the exit status is 3.
    Show(ShowArgs),
    /// What changed between two bundles, or between two JSON reports (mcp-grade
    /// --format json): revision and eras, identity, capabilities, inventory, verdicts.
    ///
    /// OLD and NEW are both bundles or both JSON reports (told by their content; a
    /// mix is a usage error). Two bundles: both verified, then compared (of one endpoint,
    /// or of one server with --match identity). Two reports: compared check by check and
    /// server by server; when both carry rule ids, checks are mapped through them
    /// (renumbered, added, removed, parameters changed), else by check id; every changed
    /// verdict is shown with both verdicts and the legs that changed.
    ///
    /// Exit 0 when nothing changed, 1 when something did, 2 for a usage error (a bundle
    /// and a report, bundles that do not match, an unreadable file), 3 when a bundle
    /// fails verification or a file is neither a bundle nor a JSON report.
    Diff(DiffArgs),
    /// List the benchmark definitions embedded in this build: id, name and version,
    /// date, number of checks, SHA-256; the default is marked.
    Benchmarks(BenchmarksArgs),
    /// List the checks of a benchmark definition: number, level, status, verdict
    /// source, the rule that grades it and its parameters, transports, eras and the
    /// legs the rule reads.
    ///
    /// Exit 0, or 2 when --benchmark names no usable definition (the error names the
    /// file, line and key).
    Checks(ChecksArgs),
    /// Verify a signed grading statement (mcp-grade --attest): its DSSE signature by a
    /// --trust key over the PAE of the payload, the in-toto statement type, and that
    /// each FILE given (a bundle or the report) is one of its subjects by SHA-256.
    ///
    /// Exit 0 when the statement verifies and every FILE is a subject, 3 when the
    /// statement does not verify (malformed, altered, another key) or a FILE is not a
    /// subject, 2 when a file or a --trust key cannot be read.
    VerifyStatement(VerifyStatementArgs),
}

/// Options of `mcp-grade verify-statement`.
#[derive(Debug, Args)]
pub struct VerifyStatementArgs {
    /// The statement (a DSSE envelope, JSON) written by --attest.
    #[arg(value_name = "STATEMENT")]
    pub statement: PathBuf,
    /// Files that must be among its subjects: graded bundles, the report.
    #[arg(value_name = "BUNDLE_OR_REPORT")]
    pub files: Vec<PathBuf>,
    /// The grader's public key (SPKI PEM, 64 hex digits, or base64; the grader.pub
    /// beside the grader key); repeatable: any of them may have signed.
    #[arg(long = "trust", value_name = "KEYFILE", required = true)]
    pub trust: Vec<PathBuf>,
}

/// Options of `mcp-grade benchmarks`.
#[derive(Debug, Args)]
pub struct BenchmarksArgs {
    /// Output format: text or json (JSON Lines, one definition per line).
    #[arg(long, value_name = "text|json", default_value = "text", value_parser = diff_format)]
    pub format: DiffFormat,
}

/// Options of `mcp-grade checks`.
#[derive(Debug, Args)]
pub struct ChecksArgs {
    /// The definition to list: an embedded id (see `mcp-grade benchmarks`), a
    /// definition file, or a tailoring file (default: the newest embedded).
    #[arg(long, value_name = "ID|FILE")]
    pub benchmark: Option<String>,
    /// Output format: text or json (docs/schemas/checks.schema.json).
    #[arg(long, value_name = "text|json", default_value = "text", value_parser = diff_format)]
    pub format: DiffFormat,
}

/// Options of grading (the command without a subcommand name).
#[derive(Debug, Args)]
pub struct GradeArgs {
    /// Bundles to grade: files, directories (their *.mcpev files) or - (one bundle on stdin).
    #[arg(required = true, value_name = "BUNDLE")]
    pub bundles: Vec<PathBuf>,
    /// Report format: text, json, sarif, junit, markdown, html, oscal or xccdf
    /// (case-insensitive).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = Format::parse)]
    pub format: Format,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Grade under this benchmark definition: an embedded id (`mcp-grade benchmarks`
    /// lists them), a definition file, or a tailoring file that extends an embedded one
    /// (selects, deselects, refines parameters). Default: the newest embedded. An
    /// unusable definition is a usage error naming file, line and key (exit 2).
    #[arg(long, value_name = "ID|FILE")]
    pub benchmark: Option<String>,
    /// Restrict to the checks of a profile level: 1 (L1 only) or 2 (L1 and L2).
    #[arg(long, value_name = "1|2", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub level: Option<u8>,
    /// Compare drift checks with this earlier bundle of the same endpoint (verified like
    /// any bundle; every graded bundle must be of its endpoint).
    #[arg(long, value_name = "FILE", conflicts_with = "update_baseline")]
    pub baseline: Option<PathBuf>,
    /// Store each graded bundle as its endpoint's baseline (under $MCP_PROBE_HOME or
    /// ~/.mcp-probe, baselines/); comparing checks report UNKNOWN in this run.
    #[arg(long)]
    pub update_baseline: bool,
    /// The operator's policy (TOML, or JSON for a .json file): approved revisions,
    /// authorization servers and scopes, allowed origins, the longest token lifetime
    /// (docs/schemas/policy.schema.json). The report names it and its SHA-256.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Accepted findings (TOML `[[waiver]]` tables: check, endpoint (exact or glob),
    /// reason, expires): a waived result is shown with its reason and does not set the
    /// exit status; an expired waiver no longer applies; one that waives nothing is
    /// reported as stale.
    #[arg(long, value_name = "FILE")]
    pub waivers: Option<PathBuf>,
    /// The operator's attestations (TOML `[[attestation]]` tables: recommendation,
    /// status, by, date, evidence, expires, comment): they complete reported-only and
    /// unreachable recommendations, and never change a verdict from the wire (a
    /// contradicting one is shown as a CONFLICT); an expired one counts as not attested.
    #[arg(long, value_name = "FILE")]
    pub attestations: Option<PathBuf>,
    /// Text report: the whole check-centric report with every result's evidence,
    /// instead of the summary-first one.
    #[arg(short, long)]
    pub verbose: bool,
    /// Text summary and HTML: list the servers grouped by where their targets came from
    /// (`source`: the MCP client and configuration file a `mcp-collect --from-config`
    /// bundle names; other bundles under "given as targets").
    #[arg(long, value_name = "source", value_parser = ["source"])]
    pub group_by: Option<String>,
    /// A stale waiver (one that waives nothing) or an expired one is a usage error
    /// (exit 2).
    #[arg(long, requires = "waivers")]
    pub strict_waivers: bool,
    /// Which verdicts fail the run: fail (exit 1 on FAIL only), error (also exit 4 on
    /// ERROR; the default), unknown (also exit 5 on UNKNOWN).
    #[arg(long, value_name = "fail|error|unknown", default_value = "error", value_parser = FailOn::parse)]
    pub fail_on: FailOn,
    #[command(flatten)]
    pub trust: Trust,
    /// Trust anchor(s) for the bundles' RFC 3161 timestamp tokens (PEM certificate file,
    /// repeatable): the report shows each bundle's TSA and time, or why not.
    #[arg(long = "tsa-cert", value_name = "FILE")]
    pub tsa_cert: Vec<PathBuf>,
    /// How many bundles are verified and graded at once (default: the number of cores).
    /// The output is the same bytes whatever the number: reports, lines and messages come
    /// out in argument order.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Write a signed statement to FILE (an in-toto Statement in a DSSE envelope, signed
    /// with the grader key): every graded bundle and the report by SHA-256, with the
    /// definition, policy, waivers, totals and grader build. `mcp-grade
    /// verify-statement` checks it.
    #[arg(long, value_name = "FILE")]
    pub attest: Option<PathBuf>,
    /// The grader key signing --attest statements (Ed25519 PKCS#8 PEM; default
    /// keys/grader.key under $MCP_PROBE_HOME or ~/.mcp-probe, created on first use).
    #[arg(long, value_name = "FILE", requires = "attest")]
    pub attest_key: Option<PathBuf>,
    /// Print no warnings, notes or progress line on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Bundles to verify: files, directories (their *.mcpev files) or - (one bundle on stdin).
    #[arg(required = true, value_name = "BUNDLE")]
    pub bundles: Vec<PathBuf>,
    /// One JSON object per bundle on stdout (JSON Lines): file, valid, reason, signer,
    /// collected_at, endpoint, status, records, timestamp (and key, with --trust-list;
    /// renewal, when the bundle has sidecars).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub trust: Trust,
    /// Trust anchor(s) for RFC 3161 timestamp tokens, embedded and detached: PEM
    /// certificate file (repeatable). Without it, a TSA certificate must chain to the
    /// public roots the grader ships.
    #[arg(long = "tsa-cert", value_name = "FILE")]
    pub tsa_cert: Vec<PathBuf>,
    /// How many bundles are verified at once (default: the number of cores).
    /// The output is the same bytes whatever the number: lines and messages come out
    /// in argument order.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Print no warnings or notes on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The bundle to show: a file, a directory holding exactly one *.mcpev file, or - (stdin).
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// Emit the whole decoded bundle as one JSON document.
    #[arg(long, conflicts_with = "har")]
    pub json: bool,
    /// Emit the HTTP exchanges as a HAR 1.2 log.
    #[arg(long)]
    pub har: bool,
    #[command(flatten)]
    pub trust: Trust,
    /// With --trust-list: trust anchor(s) for the bundle's RFC 3161 timestamp, whose
    /// genTime a listed key's period is judged on (PEM certificate file, repeatable;
    /// default: the public roots the grader ships).
    #[arg(long = "tsa-cert", value_name = "FILE", requires = "trust_list")]
    pub tsa_cert: Vec<PathBuf>,
    /// Print no warnings or notes on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct Trust {
    /// Pin a collector public key (SPKI PEM, 64 hex digits, or base64); repeatable.
    /// With pins, a bundle signed by any other key fails verification.
    #[arg(long = "trust", value_name = "KEYFILE")]
    pub keys: Vec<PathBuf>,
    /// Collector keys with periods and revocation (TOML `[[key]]` tables: public_key,
    /// name, not_before, not_after, revoked_at, comment; docs/bundle.md section 6). A
    /// bundle's signer must be listed (or pinned with --trust); its verified RFC 3161
    /// timestamp, else its claimed seal time, must lie in the key's period; a revoked
    /// key's bundle needs a verified timestamp before the revocation.
    #[arg(long = "trust-list", id = "trust_list", value_name = "FILE")]
    pub list: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier bundle or JSON report.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later bundle or JSON report (the same kind as OLD).
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Output format: text or json (case-insensitive).
    #[arg(long, value_name = "text|json", default_value = "text", value_parser = diff_format)]
    pub format: DiffFormat,
    /// How servers are paired: endpoint (the URL; the default) or identity (serverInfo
    /// name and transport, so the same server on another port or host matches).
    #[arg(long = "match", value_name = "endpoint|identity", default_value = "endpoint", value_parser = crate::diff::Match::parse)]
    pub by: crate::diff::Match,
    #[command(flatten)]
    pub trust: Trust,
    /// With --trust-list: trust anchor(s) for the bundles' RFC 3161 timestamps, whose
    /// genTime a listed key's period is judged on (PEM certificate file, repeatable;
    /// default: the public roots the grader ships).
    #[arg(long = "tsa-cert", value_name = "FILE", requires = "trust_list")]
    pub tsa_cert: Vec<PathBuf>,
    /// Print no warnings or notes on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

/// The whole command line of `mcp-grade`, for the tests that hold the docs to it and for
/// the generated man pages and shell completions.
pub fn command() -> clap::Command {
    Cli::command()
}

/// The output of diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    /// Lines for people.
    Text,
    /// `mcp-grade-diff/1` JSON.
    Json,
}

fn diff_format(s: &str) -> Result<DiffFormat, String> {
    match s.to_ascii_lowercase().as_str() {
        "text" => Ok(DiffFormat::Text),
        "json" => Ok(DiffFormat::Json),
        _ => Err("text or json".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("mcp-grade").chain(args.iter().copied()))
    }

    #[test]
    fn bare_bundles_grade_and_subcommands_still_work() {
        let c = parse(&["a.mcpev", "b.mcpev", "--format", "json", "--level", "1"]).expect("grade");
        assert!(c.command.is_none());
        assert_eq!(c.grade.bundles.len(), 2);
        assert_eq!(c.grade.format, Format::Json);
        assert_eq!(c.grade.level, Some(1));
        let v = parse(&["verify", "a.mcpev"]).expect("verify");
        assert!(matches!(&v.command, Some(Command::Verify(a)) if !a.json));
        let v = parse(&["verify", "--json", "a.mcpev", "b.mcpev"]).expect("verify --json");
        assert!(matches!(&v.command, Some(Command::Verify(a)) if a.json && a.bundles.len() == 2));
        let s = parse(&["show", "a.mcpev", "--json"]).expect("show");
        assert!(matches!(s.command, Some(Command::Show(_))));
    }

    #[test]
    fn usage_errors() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["a", "--level", "3"]).is_err());
        assert!(parse(&["a", "--baseline", "b", "--update-baseline"]).is_err());
        let e = parse(&["a", "--format", "pdf"])
            .expect_err("unknown")
            .to_string();
        assert!(e.contains("pdf") && e.contains("text, json, sarif"), "{e}");
        assert!(parse(&["a", "--format", "SARIF"]).is_ok());
        assert!(parse(&["diff", "a", "b", "--format", "xml"]).is_err());
        assert!(parse(&["diff", "a", "b", "--match", "port"]).is_err());
        let d = parse(&["diff", "a", "b", "--match", "IDENTITY"]).expect("diff --match");
        assert!(
            matches!(&d.command, Some(Command::Diff(a)) if a.by == crate::diff::Match::Identity)
        );
        // After a grading option, `verify` is just a bundle name (which then cannot be
        // read: exit 2), never the subcommand.
        let g = parse(&["--format", "json", "verify", "a"]).expect("grade");
        assert!(g.command.is_none());
        assert_eq!(
            g.grade.bundles,
            [PathBuf::from("verify"), PathBuf::from("a")]
        );
    }
}
