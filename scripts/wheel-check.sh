#!/usr/bin/env bash
# The pip install of the README: builds njx's wheel with `pip wheel .` (pyproject.toml,
# maturin's `bin` bindings; tagged manylinux as docs/install.md says), installs it into a fresh venv from a shell with no Rust
# toolchain on PATH, runs every tool's --version from the venv and real pipelines: the
# example run shipped in the repo, and the pax archives of ../shared/data where present;
# then `import njx` (the wheel's Python package) and, with pandas and pyarrow from PyPI,
# njx.load of the same archives (said and skipped where PyPI cannot be reached).
# Prints `wheel-check: skipped: …` and exits 0 where the build backend cannot be installed
# (no PyPI); any other failure exits 1. Honours CARGO_TARGET_DIR (the build's cargo).
# Keeps the wheel in target/wheels/ (NJX_WHEEL_DIR to choose another folder).
# NJX_MANYLINUX=2_28: the wheel for clusters of docs/install.md instead, built with zig
# against glibc 2.28 (ziglang from PyPI), and checked: tagged manylinux_2_28, no binary
# needing a glibc symbol newer than 2.28 (objdump -T).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
python=${PYTHON:-python3}
wheels=${NJX_WHEEL_DIR:-${CARGO_TARGET_DIR:-target}/wheels}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/build"
manylinux=${NJX_MANYLINUX:-}
backend=('maturin>=1.9,<2')
build_args="--compatibility pypi"
if [ -n "$manylinux" ]; then
    backend+=(ziglang)
    build_args="--compatibility manylinux_$manylinux --zig"
fi
if ! "$work/build/bin/pip" install -q --disable-pip-version-check "${backend[@]}" >"$work/pip.log" 2>&1; then
    echo "wheel-check: skipped: the build backend (maturin, from PyPI) cannot be installed here:" >&2
    tail -n 3 "$work/pip.log" >&2
    exit 0
fi

echo "wheel-check: pip wheel . (a release build of every tool)" >&2
mkdir -p "$wheels"
rm -f "$wheels"/njx-*.whl
start=$(date +%s)
# The backend installed above, not another fetched into an isolated build environment.
PATH="$work/build/bin:$PATH" "$work/build/bin/pip" wheel -q --disable-pip-version-check \
    --no-deps --no-build-isolation -C maturin.build-args="$build_args" -w "$wheels" .
wheel=$(ls "$wheels"/njx-*.whl)
echo "wheel-check: $(basename "$wheel") ($(( $(stat -c %s "$wheel") / 1048576 )) MiB) in $(( $(date +%s) - start )) s" >&2
case "$wheel" in
    *manylinux*) ;;
    *) echo "wheel-check: $wheel: not tagged manylinux" >&2; exit 1 ;;
esac
if [ -n "$manylinux" ]; then
    case "$wheel" in
        *"manylinux_$manylinux"*) ;;
        *) echo "wheel-check: $wheel: not tagged manylinux_$manylinux" >&2; exit 1 ;;
    esac
    mkdir "$work/unpacked"
    (cd "$work/unpacked" && "$python" -m zipfile -e "$wheel" .)
    newest=$(for b in "$work"/unpacked/*.data/scripts/*; do objdump -T "$b" | grep -o 'GLIBC_[0-9.]*'; done |
        sort -uV | tail -n 1)
    echo "wheel-check: the newest glibc symbol any binary needs: $newest" >&2
    [ "$(printf '%s\nGLIBC_%s\n' "$newest" "${manylinux/_/.}" | sort -V | tail -n 1)" = "GLIBC_${manylinux/_/.}" ] ||
        { echo "wheel-check: $newest is newer than manylinux_$manylinux allows" >&2; exit 1; }
fi

# A shell as a user's without Rust: no cargo or rustc on PATH, a fresh venv, the wheel only
# (no index reached).
tools=$(sed -n 's/^name = "\(njx-[a-z-]*\)"$/\1/p' Cargo.toml)  # njx-*: not njx itself
env -i HOME="$work/home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
    NJX_PYTHON="$(command -v "$python")" NJX_WHEEL="$wheel" NJX_TOOLS="$tools" NJX_REPO="$repo" \
    bash -euo pipefail -c '
    if command -v cargo || command -v rustc; then
        echo "wheel-check: Rust is in /usr/bin or /bin here: the install is not checked where no Rust is" >&2
    fi
    "$NJX_PYTHON" -m venv "$HOME/venv"
    . "$HOME/venv/bin/activate"
    pip install -q --disable-pip-version-check --no-index "$NJX_WHEEL"
    for t in $NJX_TOOLS; do
        [ "$(command -v "$t")" = "$HOME/venv/bin/$t" ] || { echo "wheel-check: $t is not on the venv PATH" >&2; exit 1; }
        "$t" --version
    done
    # njx lists every tool; the man pages are where man looks from the venv bin folder.
    for t in $NJX_TOOLS; do
        njx | grep -q "^  $t " || { echo "wheel-check: njx does not list $t" >&2; exit 1; }
        [ -f "$HOME/venv/share/man/man1/$t.1" ] || { echo "wheel-check: no man page of $t" >&2; exit 1; }
    done
    if command -v man >/dev/null; then
        [ "$(man -w njx-report)" = "$HOME/venv/share/man/man1/njx-report.1" ] ||
            { echo "wheel-check: man does not find njx-report.1 in the venv" >&2; exit 1; }
    fi
    cd "$NJX_REPO"
    njx-report --rows 3 examples/data/run/rank0.zip examples/data/run/rank1.zip | head -n 20
    njx-export examples/data/compile_trace.csv.xz | njx-ranges --xla-compile | njx-compile-summary --total
    pax=$(ls ../shared/data/pax_fsdp4_4proc/*.zip 2>/dev/null || true)
    if [ -z "$pax" ]; then
        echo "wheel-check: ../shared/data absent: the real-profile pipelines are skipped" >&2
    else
        for cmd in "njx-report -q" "njx-modules" "njx-collectives" "njx-thunks --top 5"; do
            start=$(date +%s.%N)
            $cmd $pax > "$HOME/out.txt"
            printf "wheel-check: %-22s on the 4 pax archives: %5.2f s, %d lines\n" "$cmd" \
                "$(awk -v a="$start" -v b="$(date +%s.%N)" "BEGIN { print b - a }")" "$(wc -l < "$HOME/out.txt")" >&2
        done
    fi
    # The Python package of the same wheel: `import njx` with nothing else installed, then
    # its tables (pandas and pyarrow from PyPI; said and skipped where they cannot come),
    # the tools found in the venv bin folder (no NJX_BIN_DIR).
    python -c "import njx, sys; sys.exit(0 if njx.bin_dir() == \"$HOME/venv/bin\" else \"njx finds the tools in \" + njx.bin_dir())"
    if pip install -q --disable-pip-version-check pandas pyarrow > "$HOME/pip.log" 2>&1; then
        for run in "examples/data/run/rank0.zip examples/data/run/rank1.zip" "$pax"; do
            [ -n "$run" ] || continue
            start=$(date +%s.%N)
            python -W ignore::UserWarning -c "
import sys, njx
d = njx.load(sys.argv[1:])
assert len(d.thunks) > 0 and len(d.modules) > 0, d
assert str(d.thunks.start_ns.dtype) == \"int64\", d.thunks.dtypes
print(len(d.thunks), \"thunks,\", len(d.modules), \"module executions\")
" $run > "$HOME/out.txt"
            printf "wheel-check: njx.load of %d archives: %5.2f s, %s\n" "$(echo $run | wc -w)" \
                "$(awk -v a="$start" -v b="$(date +%s.%N)" "BEGIN { print b - a }")" "$(cat "$HOME/out.txt")" >&2
        done
    else
        echo "wheel-check: skipped: njx.load (pandas and pyarrow cannot be installed from PyPI here):" >&2
        tail -n 3 "$HOME/pip.log" >&2
    fi
'
echo "wheel-check: ok" >&2
