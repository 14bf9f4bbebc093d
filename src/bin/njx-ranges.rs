use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    njx::cmd::tune_allocator();
    let args = njx::cmd::ranges::Args::parse();
    njx::cmd::finish("njx-ranges", njx::cmd::ranges::run(&args))
}
