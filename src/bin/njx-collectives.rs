use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    njx::cmd::tune_allocator();
    let args = njx::cmd::collectives::Args::parse();
    njx::cmd::finish("njx-collectives", njx::cmd::collectives::run(&args))
}
