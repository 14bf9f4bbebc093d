//! Compiles `protos/` (the part of XLA's HloProto schema that njx reads) into Rust types
//! at build time. `protox` parses the .proto files in pure Rust and `prost-build` generates
//! the code from its descriptors, so no system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=protos");
    let descriptors = protox::compile(["xla/service/hlo.proto"], ["protos"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
