//! Compiles `protos/` (the part of XLA's HloProto schema that njx reads) into Rust types
//! at build time. `protox` parses the .proto files in pure Rust and `prost-build` generates
//! the code from its descriptors, so no system `protoc` is needed. The lean schema's
//! `bytes` fields are `bytes::Bytes`: decoded from a `Bytes` buffer they are slices of it.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=protos");
    let descriptors = protox::compile(
        ["xla/service/hlo.proto", "xla/lean/hlo_lean.proto"],
        ["protos"],
    )?;
    prost_build::Config::new()
        .bytes([".xla.lean"])
        .compile_fds(descriptors)?;
    Ok(())
}
