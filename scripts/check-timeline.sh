#!/usr/bin/env bash
# Checks njx-timeline's output with a Trace Event reader nobody here wrote: TracerBench's
# @tracerbench/trace-model (npm), which builds processes, threads and the parent of each
# complete event as trace viewers do. For the profiles given (default: the four real pax
# archives in ../shared/data), it compares what the reader found with the records
# njx-export writes: per category the slice count and the sum of durations (ns) must
# equal those of `njx-export --table modules|thunks|ranges`; every process and lane must
# be named; the slices the reader nests under another must be as many as the ranges with a
# parent; and slices on a thread must nest (siblings under the parent the reader gave
# each slice never overlap). Prints a table and exits 1 on any mismatch.
#
# Usage (from anywhere):  scripts/check-timeline.sh [PROFILE...]
#
# Environment: NJX_BIN=DIR  binaries (default: target/release, built first);
#              NJX_JS=DIR   where the npm package is installed (default: target/js).

set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
    set -- ../shared/data/pax_fsdp4_4proc/*.zip
    [ -e "$1" ] || { echo "no profiles given and ../shared/data absent: skipped"; exit 0; }
fi
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${NJX_BIN:-}
if [ -z "$BIN" ]; then
    cargo build --release --quiet --bin njx-timeline --bin njx-export
    BIN=$TARGET/release
fi
JS=${NJX_JS:-$TARGET/js}
if [ ! -d "$JS/node_modules/@tracerbench/trace-model" ]; then
    mkdir -p "$JS"
    npm install --silent --prefix "$JS" @tracerbench/trace-model@8.0.0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN/njx-timeline" -q "$@" -o "$work/trace.json"
for t in modules thunks ranges; do
    "$BIN/njx-export" -q --table "$t" "$@" > "$work/$t.jsonl"
done

NODE_PATH="$JS/node_modules" node - "$work" <<'JS'
const fs = require('fs');
const readline = require('readline');
const buildModel = require('@tracerbench/trace-model').buildModel;
const dir = process.argv[2];
const trace = JSON.parse(fs.readFileSync(`${dir}/trace.json`, 'utf8'));
const model = buildModel(trace);
const ns = (us) => Math.round(us * 1000);
const got = {};
let unnamed = 0, misnested = 0, slices = 0;
for (const p of model.processes) {
    if (!p.name) unnamed++;
    for (const t of p.threads) {
        if (!t.name) unnamed++;
        const last = new Map();
        for (const e of t.events) {
            if (!e.isComplete()) continue;
            slices++;
            const c = (got[e.cat[0]] ??= { n: 0, ns: 0, hidden: 0 });
            c.n++;
            c.ns += ns(e.duration);
            c.hidden += e.args.hidden_ns ?? 0;
            if (e.parent !== undefined) c.nested = (c.nested ?? 0) + 1;
            // Events come sorted by start: a sibling still running when this one starts
            // is misnested.
            const prev = last.get(e.parent);
            if (prev !== undefined && ns(prev.end) > ns(e.start)) misnested++;
            last.set(e.parent, e);
        }
    }
}
const want = {
    module: { n: 0, ns: 0, hidden: 0 },
    compute: { n: 0, ns: 0, hidden: 0 },
    communication: { n: 0, ns: 0, hidden: 0 },
    nvtx: { n: 0, ns: 0, hidden: 0 },
};
for (const [table, cat] of [['modules', 'module'], ['thunks', null], ['ranges', 'nvtx']]) {
    for (const line of fs.readFileSync(`${dir}/${table}.jsonl`, 'utf8').split('\n')) {
        if (!line) continue;
        const r = JSON.parse(line);
        const w = want[cat ?? (r.comm ? 'communication' : 'compute')];
        w.n++;
        w.ns += r.dur_ns + (r.comm ? r.hidden_ns : 0);
        if (r.comm) w.hidden += r.hidden_ns;
        if (r.parent !== undefined && r.parent !== null) w.nested = (w.nested ?? 0) + 1;
    }
}
let bad = unnamed + misnested;
console.log('category        slices    records  slice ns            record ns           hidden ns  nested');
for (const [cat, w] of Object.entries(want)) {
    const g = got[cat] ?? { n: 0, ns: 0, hidden: 0 };
    const ok = g.n === w.n && g.ns === w.ns && g.hidden === w.hidden &&
        (g.nested ?? 0) === (w.nested ?? 0);
    if (!ok) bad++;
    console.log(`${cat.padEnd(14)} ${String(g.n).padStart(7)} ${String(w.n).padStart(10)}  ` +
        `${String(g.ns).padStart(18)} ${String(w.ns).padStart(18)}  ${String(g.hidden).padStart(12)} ` +
        `${String(g.nested ?? 0).padStart(7)} ` +
        (ok ? 'ok' : 'MISMATCH'));
}
console.log(`processes ${model.processes.length}, threads ` +
    `${model.processes.reduce((s, p) => s + p.threads.length, 0)}, slices ${slices}, ` +
    `unnamed tracks ${unnamed}, misnested slices ${misnested}`);
process.exit(bad ? 1 : 0);
JS
