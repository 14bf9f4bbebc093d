use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::collectives::Args::parse();
    njx::error::finish("njx-collectives", njx::collectives::run(&args))
}
