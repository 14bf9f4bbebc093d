use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::compile::Args::parse();
    njx::error::finish("njx-compile-summary", njx::compile::run(&args))
}
