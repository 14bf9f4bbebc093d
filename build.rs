//! Compiles `protos/` (the part of XLA's HloProto schema that njx reads) into Rust types
//! at build time. `protox` parses the .proto files in pure Rust and `prost-build` generates
//! the code from its descriptors, so no system `protoc` is needed. The lean schema's
//! `bytes` fields are `bytes::Bytes`: decoded from a `Bytes` buffer they are slices of it.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=protos");
    build_info();
    shared_data();
    let descriptors = protox::compile(
        ["xla/service/hlo.proto", "xla/lean/hlo_lean.proto"],
        ["protos"],
    )?;
    prost_build::Config::new()
        .bytes([".xla.lean"])
        .compile_fds(descriptors)?;
    Ok(())
}

/// What `--version` says the tools were built from: `NJX_BUILD`, the git revision (where
/// the source is a git checkout with git on PATH) and the compiler's version.
fn build_info() {
    let run = |program: &str, args: &[&str]| -> Option<String> {
        let out = std::process::Command::new(program)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut parts = Vec::new();
    if let Some(rev) = run("git", &["rev-parse", "--short=12", "HEAD"]) {
        parts.push(format!("git {rev}"));
        // A new commit moves HEAD or the branch it names; watched only where they exist
        // (a missing path would rerun this script on every build).
        let mut watched = vec!["HEAD".to_string()];
        watched.extend(run("git", &["symbolic-ref", "-q", "HEAD"]));
        for name in watched {
            if let Some(path) = run("git", &["rev-parse", "--git-path", &name])
                && std::path::Path::new(&path).exists()
            {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    if let Some(version) = run(&rustc, &["-V"]) {
        parts.push(version);
    }
    let info = if parts.is_empty() {
        "source build".to_string()
    } else {
        parts.join(", ")
    };
    println!("cargo:rustc-env=NJX_BUILD={info}");
}

/// The conformance tests read the real profiles in `../shared/data`; without them they are
/// marked ignored (`cfg(njx_no_shared_data)`), so `cargo test`'s summary counts them as
/// ignored, each saying why, rather than passing having checked nothing. The folder is
/// looked for when this script runs (a fresh build; `cargo clean` after adding it).
fn shared_data() {
    println!("cargo:rustc-check-cfg=cfg(njx_no_shared_data)");
    let data = std::path::Path::new("../shared/data");
    if data.is_dir() {
        println!("cargo:rerun-if-changed=../shared/data");
    } else {
        println!("cargo:rustc-cfg=njx_no_shared_data");
    }
}
