use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::ranges::tool::Args::parse();
    njx::error::finish("njx-ranges", njx::ranges::tool::run(&args))
}
