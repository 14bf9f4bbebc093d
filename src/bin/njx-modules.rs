use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::modules::tool::Args::parse();
    njx::error::finish("njx-modules", njx::modules::tool::run(&args))
}
