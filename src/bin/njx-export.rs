use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    njx::cmd::tune_allocator();
    let args = njx::cmd::export::Args::parse();
    njx::cmd::finish("njx-export", njx::cmd::export::run(&args))
}
