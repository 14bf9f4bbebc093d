#!/usr/bin/env bash
# njx-report's page (--html) in a real browser (issue 30): Debian's Chromium, headless,
# installed with apt-get when it is missing (skipped, saying so, when it cannot be).
# The page of the four pax archives of ../shared/data (else of the example run in
# examples/data/run) is loaded with the network cut off and every request logged (NetLog):
# the check fails on a console error or on any request other than the page itself, its
# data: frames and about:blank; then screenshots at 1,400 px width are written to OUT_DIR
# (default docs/report): the top of the page, the communication sections, the thunk
# tables, the heap, the flame graph.
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
# Load it once with the requests logged, and about:blank alike: what the browser asks for
# by itself (its own services, whatever the flags above) is not the page's.
"$browser" "${flags[@]}" --log-net-log="$tmp/net.json" --virtual-time-budget=3000 \
    --dump-dom "$url" > "$tmp/dom.html" 2> "$tmp/console.txt" || true
"$browser" "${flags[@]}" --log-net-log="$tmp/blank.json" --virtual-time-budget=3000 \
    --dump-dom about:blank > /dev/null 2>&1 || true
python3 - "$tmp/net.json" "$tmp/console.txt" "$url" "$tmp/blank.json" <<'PY'
import json, re, sys
from urllib.parse import urlsplit
net, console, page, blank = sys.argv[1:5]
def urls_of(path):
    text = open(path).read()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:
        # A log cut short by the browser's exit: close its list of events.
        log = json.loads(text.rstrip().rstrip(',') + ']}')
    return {e['params']['url'] for e in log.get('events', []) if 'url' in e.get('params', {})}
urls = urls_of(net)
browser_own = {urlsplit(u).hostname for u in urls_of(blank)} | {
    'clients2.google.com', 'accounts.google.com', 'redirector.gvt1.com', 'www.google.com',
    'update.googleapis.com', 'safebrowsing.googleapis.com'}
away = sorted(u for u in urls if not (u == page or u.startswith(('data:', 'about:', 'chrome:')))
              and urlsplit(u).hostname not in browser_own)
errors = [l for l in open(console) if re.search(r'CONSOLE|Uncaught|ERROR:.*(js|script)', l, re.I)]
print(f"page-check: {len(urls)} URLs requested, {len(away)} leaving the page; {len(errors)} console errors")
for u in away:
    print("  request:", u)
for l in errors:
    print("  console:", l.rstrip())
sys.exit(1 if away or errors else 0)
PY
grep -q '<table class="sortable">' "$tmp/dom.html" || { echo "page-check: the page did not render" >&2; exit 1; }
mkdir -p "$out"
# Where each section is: the page measured by a copy of it that writes its sections' offsets
# into its own DOM (headless Chromium's --screenshot ignores a URL's #fragment).
python3 - "$page" "$tmp/measure.html" <<'PY'
import sys
html = open(sys.argv[1]).read()
probe = ("<script>var o={};document.querySelectorAll('section').forEach(function(s){"
         "o[s.id]=Math.round(s.getBoundingClientRect().top+window.scrollY);});"
         "o.height=document.documentElement.scrollHeight;"
         "document.body.insertAdjacentHTML('beforeend','<pre id=njx-offsets>'+JSON.stringify(o)+'</pre>');"
         "</script></body>")
open(sys.argv[2], 'w').write(html.replace('</body>', probe))
PY
"$browser" "${flags[@]}" --window-size=1400,1000 --virtual-time-budget=3000 --dump-dom \
    "file://$tmp/measure.html" 2> /dev/null | sed -n 's/.*<pre id="njx-offsets">\([^<]*\)<.*/\1/p' > "$tmp/offsets.json"
height=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['height'])" "$tmp/offsets.json")
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
