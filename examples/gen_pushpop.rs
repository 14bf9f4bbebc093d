//! Generates large, realistic synthetic `nsys stats --report nvtx_pushpop_trace` CSVs
//! of JAX/XLA programs, for benchmarks and stress tests.
//!
//! ```text
//! cargo run --release --example gen_pushpop -- [--bytes N | --compilations N] [--seed S] > out.csv
//! ```
//!
//! `--compilations N` writes N compilations (default 3); `--bytes N` keeps writing
//! compilations until at least N bytes were written (N may end in K, M or G: powers of
//! 1024). `--seed S` (default 1) picks the content; the same arguments always give the
//! same bytes. What the trace holds: `examples/gen/pushpop.rs`.

#[path = "gen/pushpop.rs"]
mod pushpop;

use pushpop::{Until, generate};
use std::io::{self, BufWriter};
use std::process::ExitCode;

fn parse_size(s: &str) -> Option<u64> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mult: u64 = match unit.to_ascii_uppercase().as_str() {
        "" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: gen_pushpop [--bytes N[K|M|G] | --compilations N] [--seed S]\n\
         Writes a synthetic nsys nvtx_pushpop_trace CSV of XLA compilations to stdout.\n\
         Default: --compilations 3 --seed 1."
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut until = Until::Compilations(3);
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "-h" || flag == "--help" {
            usage();
            return ExitCode::SUCCESS;
        }
        if !matches!(flag.as_str(), "--bytes" | "--compilations" | "--seed") {
            eprintln!("gen_pushpop: unknown argument {arg}");
            return usage();
        }
        let Some(value) = inline.or_else(|| args.next()) else {
            eprintln!("gen_pushpop: {flag} needs a value");
            return usage();
        };
        let parsed = match flag.as_str() {
            "--bytes" => parse_size(&value).map(|n| until = Until::Bytes(n)),
            "--compilations" => value.parse().ok().map(|n| until = Until::Compilations(n)),
            "--seed" => value.parse().ok().map(|s| seed = s),
            _ => unreachable!("flags checked above"),
        };
        if parsed.is_none() {
            eprintln!("gen_pushpop: bad value for {flag}: {value}");
            return usage();
        }
    }
    let out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    match generate(out, until, seed) {
        Ok(_) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is a normal way to stop.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_pushpop: {e}");
            ExitCode::FAILURE
        }
    }
}
