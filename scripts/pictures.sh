#!/usr/bin/env bash
# Draws the default flame graphs and the charts (njx-collectives' bandwidth, wait and
# lateness plots, njx-heap's) of the real profiles and renders each SVG in headless
# Chromium to a PNG (docs/flame/*.png and docs/charts/*.png, shown in docs/flamefold.md and docs/collectives.md), so
# that every picture is looked at as a browser draws it.
#   scripts/pictures.sh [DATA] [OUT] [CHARTS]
# DATA: the folder of the real profiles (default ../shared/data); OUT: docs/flame;
# CHARTS: docs/charts.
# Needs chromium (Debian: apt-get install chromium) and optipng if present.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
out=${2:-docs/flame}
charts=${3:-docs/charts}
pax="$data/pax_fsdp4_4proc"
[ -d "$pax" ] || { echo "pictures: no $pax" >&2; exit 1; }
command -v chromium >/dev/null || { echo "pictures: chromium not found" >&2; exit 1; }
cargo build --release --quiet
bin=target/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out" "$charts"

shot() { # SVG PNG: the whole drawing, at its own size
    local svg=$1 png=$2 w h
    w=$(grep -o '<svg [^>]*' "$svg" | grep -o 'width="[0-9]*"' | head -1 | tr -dc 0-9)
    h=$(grep -o '<svg [^>]*' "$svg" | grep -o 'height="[0-9]*"' | head -1 | tr -dc 0-9)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/profile" --hide-scrollbars --window-size="$w,$h" \
        --screenshot="$(realpath -m "$png")" "file://$(realpath "$svg")" >/dev/null 2>&1
    [ -s "$png" ] || { echo "pictures: no picture of $svg" >&2; exit 1; }
    if command -v optipng >/dev/null; then optipng -quiet -o2 "$png"; fi
    echo "$png: ${w}x${h}"
}

"$bin/njx-export" "$pax"/*proc0.zip | "$bin/njx-ranges" --xla-compile \
    | "$bin/njx-flamefold" -q --svg "$tmp/compile.svg" --title "Compilation of proc0 by NVTX stack"
shot "$tmp/compile.svg" "$out/compile.png"
for by in source op-name opcode module device; do
    "$bin/njx-flamefold" -q --by "$by" "$pax"/*.zip --svg "$tmp/$by.svg"
    shot "$tmp/$by.svg" "$out/$by.png"
done

"$bin/njx-collectives" -q "$pax"/*.zip --plot "$tmp/bandwidth.svg" \
    --wait-plot "$tmp/wait.svg" --lateness-plot "$tmp/lateness.svg" >/dev/null
"$bin/njx-heap" -q "$pax"/*proc0.zip --svg "$tmp/heap.svg" >/dev/null
for chart in bandwidth wait lateness heap; do
    shot "$tmp/$chart.svg" "$charts/$chart.png"
done
