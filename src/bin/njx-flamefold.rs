use std::process::ExitCode;

// mimalloc instead of glibc malloc: see docs/performance.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = njx::cmd::parse::<njx::cmd::flamefold::Args>();
    njx::cmd::finish("njx-flamefold", njx::cmd::flamefold::run(&args))
}
