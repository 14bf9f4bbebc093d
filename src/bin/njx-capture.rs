// mimalloc instead of glibc malloc: see docs/performance.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    njx::cmd::capture::main()
}
