fn main() {
    std::process::exit(njx::cmd::launcher::run());
}
