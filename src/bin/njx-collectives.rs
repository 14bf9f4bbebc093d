use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::cmd::collectives::Args::parse();
    njx::cmd::finish("njx-collectives", njx::cmd::collectives::run(&args))
}
