use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    njx::cmd::tune_allocator();
    let args = njx::cmd::modules::Args::parse();
    njx::cmd::finish("njx-modules", njx::cmd::modules::run(&args))
}
