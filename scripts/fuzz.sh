#!/usr/bin/env bash
# Fuzzes every input reader of njx for SECONDS (default 600) from SEED (default 1): the
# harness in tests/fuzz mutates generated push/pop CSV, records, Parquet tables, thread
# metadata, HLO protos, SQLite exports, zip archives and folded stacks, and runs the
# library's readers and analyses on them in-process; njx-pgle's writer too (targets
# pgle-dumps and pgle-partials: the files written stay in the output folder). It prints
# executions per reader and in total, and every crash, hang or abort with the input saved under
# target/fuzz-crashes/ (replay one with `cargo test --test fuzz -- --replay FILE`);
# the exit status is non-zero when there was any.
#
#   scripts/fuzz.sh [SECONDS] [SEED] [HARNESS OPTIONS...]
#   scripts/fuzz.sh 60 7 --targets zip,sqlite     # one minute, two readers
#   scripts/fuzz.sh 0 1 --replay target/fuzz-crashes/zip.profiles.panic.0123456789abcdef
#
# Built in release mode with line tables (for backtraces) and with njx's own overflow
# checks and debug assertions on, as `cargo test` has them. Each worker runs under a
# memory limit (--memory-mb, default 2048): an allocation beyond it aborts the worker,
# which is reported as a finding, not hidden.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
seed="${2:-1}"
shift $(( $# < 2 ? $# : 2 ))
exec cargo test --release --test fuzz \
    --config 'profile.release.package.njx.debug="line-tables-only"' \
    --config 'profile.release.package.njx.overflow-checks=true' \
    --config 'profile.release.package.njx.debug-assertions=true' \
    -- --seconds "$seconds" --seed "$seed" "$@"
