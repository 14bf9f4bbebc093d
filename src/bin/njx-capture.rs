fn main() -> std::process::ExitCode {
    njx::cmd::capture::main()
}
