use std::process::ExitCode;

fn main() -> ExitCode {
    let args = njx::capture::Args::parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit());
    match njx::capture::run(&args) {
        Ok(status) => ExitCode::from(status),
        Err(e) => njx::error::finish("njx-capture", Err(e)),
    }
}
