use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::flamefold::tool::Args::parse();
    njx::error::finish("njx-flamefold", njx::flamefold::tool::run(&args))
}
