#!/usr/bin/env bash
# Builds njx and runs the compile-time workflow on the example profile shipped in the repo:
# an `nsys stats --report nvtx_pushpop_trace` CSV (xz-compressed) of four XLA compilations
# with parallel compilation threads.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "building njx (release; the first build compiles the dependencies: a few minutes)" >&2
cargo build --release --bins
bin=target/release
trace=examples/data/compile_trace.csv.xz

echo "\$ njx-export $trace | njx-compile-summary"
"$bin/njx-export" "$trace" | "$bin/njx-compile-summary"
echo
echo "\$ njx-export $trace | njx-ranges --xla-compile | njx-compile-summary --total"
"$bin/njx-export" "$trace" | "$bin/njx-ranges" --xla-compile | "$bin/njx-compile-summary" --total
