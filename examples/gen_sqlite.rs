//! Generates a large synthetic nsys SQLite export (`nsys export --type sqlite`) of a
//! JAX/XLA-like program, for benchmarks and stress tests of the SQLite reader.
//!
//! ```text
//! cargo run --release --example gen_sqlite -- OUTPUT.sqlite RANGES KERNELS
//! ```
//!
//! RANGES push/pop ranges and KERNELS kernels (each number may end in K or M: 10³, 10⁶).
//! What the export holds: `examples/gen/sqlite.rs`. The same arguments always give the
//! same file.

#[path = "../tests/njx/common/nsys_sqlite.rs"]
mod nsys_sqlite;
#[path = "gen/sqlite.rs"]
mod sqlite;

use sqlite::generate;
use std::path::Path;
use std::process::ExitCode;

fn count(arg: &str) -> Option<u64> {
    let (digits, scale) = match arg.as_bytes().last()? {
        b'K' | b'k' => (&arg[..arg.len() - 1], 1_000),
        b'M' | b'm' => (&arg[..arg.len() - 1], 1_000_000),
        _ => (arg, 1),
    };
    digits.parse::<u64>().ok().map(|n| n * scale)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out), Some(ranges), Some(kernels)) = (
        args.first(),
        args.get(1).and_then(|a| count(a)),
        args.get(2).and_then(|a| count(a)),
    ) else {
        eprintln!("usage: gen_sqlite OUTPUT.sqlite RANGES KERNELS   (counts may end in K or M)");
        return ExitCode::from(2);
    };
    match generate(Path::new(out), ranges, kernels) {
        Ok((r, k)) => {
            eprintln!("gen_sqlite: {out}: {r} NVTX ranges, {k} kernels");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen_sqlite: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
