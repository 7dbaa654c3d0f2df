//! `mcp-collect`: see the library docs. A thin main: parse, validate, run, map the exit.

use std::process::ExitCode;

use clap::Parser;
use mcp_probe_collector::flags::Flags;
use mcp_probe_collector::run::{execute, plan, Printer};

fn main() -> ExitCode {
    let flags = Flags::parse();
    let printer = Printer::new(flags.quiet);
    if flags.public_key {
        return match public_key(&flags) {
            Ok(pem) => {
                printer.out(pem.trim_end());
                ExitCode::SUCCESS
            }
            Err(e) => {
                printer.error(&format!("{e:#}"));
                ExitCode::from(2)
            }
        };
    }
    let plan = match plan(&flags, &printer) {
        Ok(p) => p,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            printer.error(&format!("cannot start the runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    ExitCode::from(rt.block_on(execute(plan, &printer)).code())
}

fn public_key(flags: &Flags) -> anyhow::Result<String> {
    let key = match &flags.key {
        Some(p) => mcp_probe_collector::keys::load(p)?,
        None => mcp_probe_collector::keys::load_or_create_default()?.0,
    };
    Ok(key.public().to_pem())
}
