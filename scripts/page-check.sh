#!/usr/bin/env bash
# njx-report's page (--html) in a real browser (issue 30): Debian's Chromium, headless,
# installed with apt-get when it is missing (skipped, saying so, when it cannot be).
# The page of the four pax archives of ../shared/data (else of the example run in
# examples/data/run) is loaded with the network cut off: the check fails on a console error
# or on any resource the page asks for (its Resource Timing entries), and says how long the
# page takes to load; then screenshots at 1,400 px width are written to OUT_DIR (default
# docs/report): the top of the page, the communication sections, the thunk tables, the
# heap, the flame graph. Last, Firefox ESR (installed where it can be) must draw it too.
#
# Usage (from anywhere):  scripts/page-check.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/report}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
    echo "page-check: installing Debian's chromium (apt-get)" >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y chromium > /dev/null 2>&1; then
        echo "page-check: skipped: chromium is not installed and apt-get could not install it" >&2
        exit 0
    fi
    browser=$(command -v chromium)
fi
cargo build --release --quiet --bins
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=../shared/data/pax_fsdp4_4proc
if [[ -d $data ]]; then
    inputs=("$data"/pax_fsdp4_4proc_proc*.zip)
else
    echo "page-check: ../shared/data not there: the example run instead" >&2
    inputs=(examples/data/run/rank*.zip)
fi
page=$tmp/report.html
target/release/njx-report -q --html "$page" "${inputs[@]}" > /dev/null
url="file://$page"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --disable-default-apps --disable-domain-reliability --no-default-browser-check
    --disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck,AutofillServerCommunication
    --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0)
mkdir -p "$out"
# Where each section is: the page measured by a copy of it that writes its sections' offsets
# into its own DOM (headless Chromium's --screenshot ignores a URL's #fragment).
python3 - "$page" "$tmp/measure.html" <<'PY'
import sys
html = open(sys.argv[1]).read()
probe = ("<script>window.addEventListener('load',function(){var o={};"
         "document.querySelectorAll('section').forEach(function(s){"
         "o[s.id]=Math.round(s.getBoundingClientRect().top+window.scrollY);});"
         "o.height=document.documentElement.scrollHeight;"
         "o.load_ms=Math.round(performance.now());"
         "o.resources=performance.getEntriesByType('resource').map(function(e){return e.name;});"
         "document.body.insertAdjacentHTML('beforeend','<pre id=njx-offsets>'+JSON.stringify(o)+'</pre>');"
         "});</script></body>")
open(sys.argv[2], 'w').write(html.replace('</body>', probe))
PY
# Every resource the page asks for (the Resource Timing entries: what the page fetched or
# tried to, not the browser's own services) must be none, with no console error.
"$browser" "${flags[@]}" --window-size=1400,1000 --dump-dom \
    "file://$tmp/measure.html" > "$tmp/dom.html" 2> "$tmp/console.txt" || true
sed -n 's/.*<pre id="njx-offsets">\([^<]*\)<.*/\1/p' "$tmp/dom.html" > "$tmp/offsets.json"
grep -q '<table class="sortable">' "$tmp/dom.html" || { echo "page-check: the page did not render" >&2; exit 1; }
python3 - "$tmp/offsets.json" "$tmp/console.txt" <<'PY'
import json, re, sys
o = json.load(open(sys.argv[1]))
errors = [l for l in open(sys.argv[2]) if re.search(r'CONSOLE|Uncaught', l)]
print(f"page-check: {len(o['resources'])} resources requested by the page; {len(errors)} console errors")
for r in o['resources']:
    print("  request:", r)
for l in errors:
    print("  console:", l.rstrip())
sys.exit(1 if o['resources'] or errors else 0)
PY
height=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['height'])" "$tmp/offsets.json")
# How long the page takes to load (its frames and pictures drawn): the load event's time.
python3 -c "import json,sys; o=json.load(open(sys.argv[1])); print(f'page-check: the page ({sys.argv[2]} bytes) loads in {o[\"load_ms\"]} ms')" \
    "$tmp/offsets.json" "$(wc -c < "$page")"
"$browser" "${flags[@]}" --window-size="1400,$height" --virtual-time-budget=5000 \
    --screenshot="$tmp/full.png" "$url" 2> /dev/null
python3 -m pip install -q pillow > /dev/null 2>&1 || true
python3 - "$tmp/full.png" "$tmp/offsets.json" "$out" <<'PY'
import json, sys
from PIL import Image
full, offsets, out = Image.open(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3]
# name, first section, how far below its top, height (flame graphs grow from the bottom:
# their deepest stacks are at the top of the frame, the wide frames below)
for name, first, below, h in [("top", "read", 0, 1100), ("communication", "wait", 0, 1300),
                              ("thunks", "thunks", 0, 1200), ("heap", "heap", 0, 1000),
                              ("flame-graph", "flame-source", 420, 900)]:
    y = max(0, offsets.get(first, 0) - 10 + below)
    full.crop((0, y, 1400, min(full.height, y + h))).save(f"{out}/{name}.png")
    print(f"page-check: {out}/{name}.png from {first} at y={y}")
PY

# A second engine, where one installs from the package registries: Firefox ESR, headless,
# must draw the page (a screenshot that is not blank) with its flame graphs' frames.
firefox=$(command -v firefox-esr || command -v firefox || true)
if [[ -z $firefox ]] && DEBIAN_FRONTEND=noninteractive apt-get install -y firefox-esr > /dev/null 2>&1; then
    firefox=$(command -v firefox-esr)
fi
if [[ -z $firefox ]]; then
    echo "page-check: Firefox skipped: not installed and apt-get could not install it" >&2
    exit 0
fi
timeout 180 "$firefox" --headless --window-size="1400,$height" --screenshot "$tmp/firefox.png" \
    "$url" > /dev/null 2>&1
python3 - "$tmp/firefox.png" "$tmp/offsets.json" <<'PY'
import json, sys
from PIL import Image
shot, offsets = Image.open(sys.argv[1]).convert("RGB"), json.load(open(sys.argv[2]))
for part in ("read", "wait", "flame-source", "heap"):
    y = offsets.get(part)
    if y is None:
        continue
    box = shot.crop((0, y, 1400, min(shot.height, y + 600)))
    colours = len(box.getcolors(1 << 20) or [])
    print(f"page-check: Firefox draws #{part} in {colours} colours")
    if colours < 8:
        sys.exit(f"page-check: Firefox drew #{part} blank")
PY
