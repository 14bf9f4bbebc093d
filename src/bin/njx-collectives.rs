use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::cmd::collectives::Args::parse();
    njx::error::finish("njx-collectives", njx::cmd::collectives::run(&args))
}
