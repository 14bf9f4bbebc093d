#!/usr/bin/env bash
# Builds njx and runs it on the examples shipped in the repo: first njx-report, the picture
# of a run on one page, on examples/data/run/ (two small nsys-jax archives of one program on
# two ranks, written by the golden tests' fixture: tests/njx/golden.rs); then the
# compile-time workflow on an `nsys stats --report nvtx_pushpop_trace` CSV (xz-compressed)
# of four XLA compilations with parallel compilation threads.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "building njx (release; the first build compiles the dependencies: a few minutes)" >&2
cargo build --release --bins
# Where cargo put them, as cargo itself says: CARGO_TARGET_DIR, build.target-dir in a
# .cargo/config.toml, or target/.
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bin="$target/release"
trace=examples/data/compile_trace.csv.xz

echo "\$ njx-report examples/data/run/rank0.zip examples/data/run/rank1.zip"
"$bin/njx-report" examples/data/run/rank0.zip examples/data/run/rank1.zip
echo
echo "\$ njx-export $trace | njx-compile-summary"
"$bin/njx-export" "$trace" | "$bin/njx-compile-summary"
echo
echo "\$ njx-export $trace | njx-ranges --xla-compile | njx-compile-summary --total"
"$bin/njx-export" "$trace" | "$bin/njx-ranges" --xla-compile | "$bin/njx-compile-summary" --total
