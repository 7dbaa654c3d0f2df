//! `mcp-collect`: see the library docs. A thin main: parse, validate, run, map the exit
//! status (every way out is an [`ExitStatus`]; its code is chosen in one place).

/// mimalloc, not the C library's allocator: about a tenth less CPU a target in the fleet
/// benchmark, for a higher peak (docs/performance.md, "The collector's own CPU").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::Parser;
use mcp_probe_collector::run::flags::{Flags, Subcommand};
use mcp_probe_collector::run::{execute, plan, timestamp, ExitStatus, Printer};

fn main() -> ExitCode {
    // No transparent huge pages for this process (mimalloc is built without asking for
    // them; this covers machines where they are on for every process): a first touch of
    // one zeroes 2 MiB, for a collector that holds a few MiB per target
    // (docs/performance.md, "Huge pages"). Nothing depends on it succeeding.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    let flags = Flags::parse();
    if let Some(Subcommand::Timestamp(args)) = &flags.subcommand {
        let printer = Printer::new(args.quiet);
        return ExitCode::from(timestamp::run(args, &printer).code());
    }
    let printer = Printer::new(flags.quiet);
    ExitCode::from(run(&flags, &printer).code())
}

fn run(flags: &Flags, printer: &Printer) -> ExitStatus {
    // clap lets a `requires` go when the required flag conflicts with one given (a
    // TARGET): --format is checked here too.
    if flags.format.is_some() && flags.list_config.is_none() {
        printer.error("--format applies to --list-config only");
        return ExitStatus::Usage;
    }
    if flags.from_config.is_none() && (!flags.allow_exec.is_empty() || flags.use_config_credentials)
    {
        printer.error("--allow-exec and --use-config-credentials apply to --from-config only");
        return ExitStatus::Usage;
    }
    if flags.public_key {
        return match public_key(flags) {
            Ok(pem) => {
                printer.out(pem.trim_end());
                ExitStatus::Ok
            }
            Err(e) => {
                printer.error(&format!("{e:#}"));
                ExitStatus::Usage
            }
        };
    }
    if let Some(source) = &flags.list_config {
        return mcp_probe_collector::run::client_config::list(
            source,
            flags
                .format
                .unwrap_or(mcp_probe_collector::run::flags::Format::Text),
            printer,
        );
    }
    if let Some(journal) = &flags.recover {
        return recover(flags, journal, printer);
    }
    let plan = match plan(flags, printer) {
        Ok(p) => p,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Usage;
        }
    };
    let Some(rt) = mcp_probe_collector::run::runtime(printer) else {
        return ExitStatus::Internal;
    };
    rt.block_on(execute(plan, printer))
}

/// `--recover FILE.journal`: 0 sealed, 2 not a readable journal (or the bundle exists),
/// 1 the bundle could not be written.
fn recover(flags: &Flags, journal: &std::path::Path, printer: &Printer) -> ExitStatus {
    use mcp_probe_collector::journal::{recover, RecoverError};
    let key = match &flags.key {
        Some(p) => mcp_probe_collector::keys::load(p),
        None => mcp_probe_collector::keys::load_or_create_default().map(|k| k.0),
    };
    let key = match key {
        Ok(k) => k,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Usage;
        }
    };
    match recover(journal, &key) {
        Ok(r) => {
            match r.torn_at {
                Some(at) => printer.warn(&format!(
                    "{}: {} record(s) dropped past a torn or damaged write at byte {at}",
                    journal.display(),
                    r.dropped
                )),
                None => printer.progress(&format!("{}: the journal was intact", journal.display())),
            }
            let synced = r
                .synced
                .map(|n| format!("; the last sync mark covers {n}"))
                .unwrap_or_default();
            printer.progress(&format!(
                "{}: sealed {} ({} records{synced}, recovered)",
                journal.display(),
                r.bundle.display(),
                r.records
            ));
            printer.out(&r.bundle.display().to_string());
            ExitStatus::Ok
        }
        Err(e @ RecoverError::Write(_)) => {
            printer.error(&e.to_string());
            ExitStatus::WriteFailed
        }
        Err(e) => {
            printer.error(&e.to_string());
            ExitStatus::Usage
        }
    }
}

fn public_key(flags: &Flags) -> anyhow::Result<String> {
    let key = match &flags.key {
        Some(p) => mcp_probe_collector::keys::load(p)?,
        None => mcp_probe_collector::keys::load_or_create_default()?.0,
    };
    Ok(key.public().to_pem())
}
