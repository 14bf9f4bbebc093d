use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    njx::cmd::tune_allocator();
    let args = njx::cmd::flamefold::Args::parse();
    njx::cmd::finish("njx-flamefold", njx::cmd::flamefold::run(&args))
}
