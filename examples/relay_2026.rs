//! Re-lays real nsys-jax archives of XLA 2024 into the NVTX layout of XLA since 2026
//! (thunk names with `unique_hlo_op_id`, communication thunks at the top level or only as
//! NCCL ranges, modules without thunk ranges), for checking that njx reads that layout
//! whole: its answers on the re-laid archives must equal those on the originals
//! (`tests/njx/relay2026.rs` does this; `scripts/relay-2026.sh` runs this example).
//!
//! ```text
//! cargo run --release --example relay_2026 -- VARIANT OUT_DIR ARCHIVES...
//! ```
//!
//! VARIANT: ids, top-level, wrapped, nccl, nccl-partial, thunkless or mixed (see
//! `tests/njx/common/relay.rs`). Each archive is written to OUT_DIR under its own file
//! name, first under a temporary name, then renamed.

#[path = "../tests/njx/common/pq.rs"]
mod pq;
#[path = "../tests/njx/common/relay.rs"]
mod relay;

use relay::Variant;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    if args.len() < 3 || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!(
            "usage: relay_2026 VARIANT OUT_DIR ARCHIVES...\n\
             Writes each nsys-jax archive re-laid into XLA's 2026 NVTX layout to OUT_DIR.\n\
             VARIANT: {}",
            names.join(", ")
        );
        return ExitCode::from(2);
    }
    let Some(variant) = Variant::from_name(&args[0]) else {
        eprintln!(
            "relay_2026: unknown variant {:?} (one of {})",
            args[0],
            names.join(", ")
        );
        return ExitCode::from(2);
    };
    let out_dir = Path::new(&args[1]);
    if let Err(e) = std::fs::create_dir_all(out_dir) {
        eprintln!("relay_2026: cannot create {}: {e}", out_dir.display());
        return ExitCode::FAILURE;
    }
    for input in &args[2..] {
        let input = PathBuf::from(input);
        let Some(file) = input.file_name() else {
            eprintln!("relay_2026: {}: not a file name", input.display());
            return ExitCode::from(2);
        };
        let target = out_dir.join(file);
        let partial = out_dir.join(format!(".{}.partial", file.to_string_lossy()));
        match relay::relay(&input, &partial, variant) {
            Ok(s) => {
                if let Err(e) = std::fs::rename(&partial, &target) {
                    eprintln!("relay_2026: cannot rename to {}: {e}", target.display());
                    return ExitCode::FAILURE;
                }
                eprintln!(
                    "relay_2026: {}: {} thunk names with ids, {} communication thunks at the \
                     top level, {} as NCCL ranges only, {} thunk ranges removed, {} module \
                     ranges without thunks",
                    target.display(),
                    s.ids,
                    s.top_level,
                    s.nccl,
                    s.removed,
                    s.thunkless_modules
                );
            }
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                eprintln!("relay_2026: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
