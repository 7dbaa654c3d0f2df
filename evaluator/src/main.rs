//! `mcp-grade`: parse flags, run the command, map its status to an exit code.

/// mimalloc, not the C library's allocator: grading 520 bundles took about a fifth less
/// CPU with it, for about 8 MiB more at rest (docs/performance.md, "Allocator").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use mcp_probe_evaluator::baseline::state_dir;
use mcp_probe_evaluator::output::{Diag, Output};
use mcp_probe_evaluator::{BaselineChoice, CommandError, ExitStatus, GradeOptions, ShowMode};

use mcp_probe_evaluator::flags::{self, Cli, Command, GradeArgs};

use mcp_probe_evaluator::benchmark::{self, Benchmark, Choice};
use mcp_probe_evaluator::inputs::{expand, expand_for_grading};

fn code(status: ExitStatus) -> ExitCode {
    ExitCode::from(status.code())
}

fn choice(b: Option<String>) -> Choice {
    b.map_or(Choice::Newest, Choice::Named)
}

fn grade_options(a: GradeArgs) -> GradeOptions {
    // The terminal's size, or 80x24 when stdout is not a terminal (a pipe, a file, -o).
    let (width, height) = match terminal_size::terminal_size() {
        Some((w, h)) if a.output.is_none() && std::io::stdout().is_terminal() => {
            (usize::from(w.0), usize::from(h.0))
        }
        _ => (80, 24),
    };
    GradeOptions {
        bundles: a.bundles,
        format: a.format,
        output: a.output,
        level: a.level,
        trust: a.trust.keys,
        trust_list: a.trust.list,
        tsa_certs: a.tsa_cert,
        baseline: match (a.baseline, a.update_baseline) {
            (Some(f), _) => BaselineChoice::File(f),
            (None, true) => BaselineChoice::Update,
            (None, false) => BaselineChoice::Stored,
        },
        state_dir: state_dir(),
        policy: a.policy,
        waivers: a.waivers,
        strict_waivers: a.strict_waivers,
        attestations: a.attestations,
        fail_on: a.fail_on,
        verbose: a.verbose,
        group_by_source: a.group_by.is_some(),
        width,
        height,
        benchmark: choice(a.benchmark),
        jobs: a.jobs.map_or(0, usize::from),
        attest: a.attest,
        attest_key: a.attest_key,
    }
}

/// One note per directory skipped for holding no bundle (a note that cannot be written
/// to stderr does not stop the run).
fn note_skipped(expanded: &mcp_probe_evaluator::inputs::Expanded, err: &mut Diag<'_>) {
    for n in expanded.skip_notes() {
        let _ = err.note(&n);
    }
}

fn run(cli: Cli, out: &mut dyn Write, err: &mut Diag<'_>) -> Result<ExitStatus, CommandError> {
    let mut stdin = std::io::stdin().lock();
    let status = match cli.command {
        None => {
            let mut opts = grade_options(cli.grade);
            let mut expanded = expand_for_grading(&opts.bundles, &mut stdin)?;
            note_skipped(&expanded, err);
            // Taken, not copied: the list as given and a copy of the expanded one would
            // both be held for the whole run (about 100 bytes a bundle each). `expanded`
            // itself lives until grading is done: it removes the directory of bundles
            // read from standard input when dropped.
            opts.bundles = std::mem::take(&mut expanded.paths);
            return Ok(mcp_probe_evaluator::grade(&opts, out, err)?);
        }
        Some(Command::Verify(a)) => {
            let expanded = expand(&a.bundles, &mut stdin)?;
            note_skipped(&expanded, err);
            mcp_probe_evaluator::verify(
                &expanded.paths,
                &a.trust.keys,
                a.trust.list.as_deref(),
                &a.tsa_cert,
                a.json,
                a.jobs
                    .map_or_else(mcp_probe_evaluator::pipeline::default_jobs, usize::from),
                out,
                err,
            )
        }
        Some(Command::Show(a)) => {
            let mode = match (a.json, a.har) {
                (true, _) => ShowMode::Json,
                (_, true) => ShowMode::Har,
                _ => ShowMode::Text,
            };
            let expanded = expand(std::slice::from_ref(&a.bundle), &mut stdin)?;
            let [one] = expanded.paths.as_slice() else {
                return Err(CommandError::Input(
                    mcp_probe_evaluator::inputs::InputError::NotOne {
                        path: a.bundle.clone(),
                        count: expanded.paths.len(),
                    },
                ));
            };
            mcp_probe_evaluator::show(
                one,
                mode,
                &a.trust.keys,
                a.trust.list.as_deref(),
                &a.tsa_cert,
                out,
                err,
            )
        }
        Some(Command::Diff(a)) => {
            let opts = mcp_probe_evaluator::diff::DiffOptions {
                old: a.old,
                new: a.new,
                trust: a.trust.keys,
                trust_list: a.trust.list,
                tsa_certs: a.tsa_cert,
                json: a.format == flags::DiffFormat::Json,
                by: a.by,
            };
            return Ok(mcp_probe_evaluator::diff::run(&opts, out, err)?);
        }
        Some(Command::Benchmarks(a)) => {
            let all = Benchmark::embedded().map_err(CommandError::Benchmark)?;
            benchmark::list::benchmarks(all, a.format == flags::DiffFormat::Json, out)
                .map_err(|e| CommandError::Load(e.into()))?;
            Ok(ExitStatus::Pass)
        }
        Some(Command::VerifyStatement(a)) => {
            return mcp_probe_evaluator::commands::verify_statement(
                &a.statement,
                &a.trust,
                &a.files,
                out,
                err,
            )
        }
        Some(Command::Checks(a)) => {
            let b = choice(a.benchmark)
                .resolve()
                .map_err(CommandError::Benchmark)?;
            benchmark::list::checks(b, a.format == flags::DiffFormat::Json, out)
                .map_err(|e| CommandError::Load(e.into()))?;
            Ok(ExitStatus::Pass)
        }
    }?;
    Ok(status)
}

fn main() -> ExitCode {
    // No transparent huge pages for this process: mimalloc asks for them on its arenas, and
    // each first touch of one then zeroes 2 MiB. Grading 520 bundles with two jobs spent
    // about a sixth of its time there, and peaked at twice the memory (docs/performance.md,
    // "Huge pages"). Nothing depends on it succeeding.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // Help and version are not errors; everything else is a usage error.
            return if e.use_stderr() {
                code(ExitStatus::Usage)
            } else {
                code(ExitStatus::Pass)
            };
        }
    };
    let mut out = Output::new(std::io::stdout().lock());
    let mut stderr = Output::new(std::io::stderr().lock());
    let quiet = match &cli.command {
        None => cli.grade.quiet,
        Some(Command::Verify(a)) => a.quiet,
        Some(Command::Show(a)) => a.quiet,
        Some(Command::Diff(a)) => a.quiet,
        Some(Command::Benchmarks(_) | Command::Checks(_) | Command::VerifyStatement(_)) => false,
    };
    // A progress line only where a person watches stderr (never into a pipe or a file).
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut err = Diag::new(&mut stderr, quiet).with_progress(tty);
    match run(cli, &mut out, &mut err) {
        Ok(s) => code(s),
        Err(e) => {
            let status = e.exit_status();
            // Errors name files and may quote what a file or a server said: one escaped line.
            let _ = err.error(&e.to_string());
            code(status)
        }
    }
}
