use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::export::Args::parse();
    njx::error::finish("njx-export", njx::export::run(&args))
}
