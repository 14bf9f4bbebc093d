use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    njx::cmd::tune_allocator();
    let args = njx::cmd::compile_summary::Args::parse();
    njx::cmd::finish("njx-compile-summary", njx::cmd::compile_summary::run(&args))
}
