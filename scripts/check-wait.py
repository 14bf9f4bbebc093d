#!/usr/bin/env python3
"""Compares njx-collectives' aligned-clock tables with the nsys-jax Analysis notebook.

Needs the peer (NVIDIA JAX-Toolbox nsys-jax) importable, and an nsys-jax archive
extracted into PREFIX (for several ranks, one made by nsys-jax-combine). Runs the
notebook's loading cell (load_profiler_data, remove_autotuning_detail,
align_profiler_data_timestamps, apply_warmup_heuristics) and its communication cell's
wait per collective instance (last end - first start - fastest full time), then
compares each instance with `njx-collectives --table instances --format json` read from
NJX_JSON, and prints the largest difference. Not run by CI.

    python3 scripts/check-wait.py PREFIX njx-instances.json
"""
import json
import sys

from nsys_jax import (
    align_profiler_data_timestamps,
    apply_warmup_heuristics,
    ensure_compiled_protos_are_importable,
    load_profiler_data,
    remove_autotuning_detail,
)
import pathlib

prefix = pathlib.Path(sys.argv[1])
ensure_compiled_protos_are_importable(prefix=prefix)
data = load_profiler_data(prefix)
data = remove_autotuning_detail(data)
data, _ = align_profiler_data_timestamps(data)
_, steady = apply_warmup_heuristics(data)
comm = steady.communication
comm["ProjDurFullMs"] = comm["ProjDurMs"] + comm["ProjDurHiddenMs"]
comm["ProjEndMs"] = comm["ProjStartMs"] + comm["ProjDurFullMs"]
peer = {}
for collective, df in comm.groupby("Collective"):
    g = df.groupby(["ProgramId", "ProgramExecution", "Name", "ThunkExecution"])
    agg = g.agg(
        {
            "MessageSize": "min",
            "ProjStartMs": "min",
            "ProjDurFullMs": "min",
            "ProjEndMs": "max",
        }
    )
    agg["Devices"] = g.size()
    wait = agg["ProjEndMs"] - agg["ProjStartMs"] - agg["ProjDurFullMs"]
    for (program, execution, name, thunk_execution), w in wait.items():
        devices = agg.loc[(program, execution, name, thunk_execution), "Devices"]
        peer[(execution, name, thunk_execution, int(devices))] = (collective, w, program)

njx = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    njx[(r["execution"], r["thunk"], r["thunk_execution"], r["devices"])] = r

shared = {k: v for k, v in peer.items() if k[3] > 1}
print(f"peer: {len(peer)} instances, {len(shared)} over two or more devices; njx: {len(njx)}")
missing = set(shared) - set(njx)
extra = set(njx) - set(shared)
print(f"in the peer only: {len(missing)}; in njx only: {len(extra)}")
worst = 0.0
for k, (collective, w_ms, _) in shared.items():
    if k not in njx:
        continue
    r = njx[k]
    assert r["collective"] == collective, (k, r["collective"], collective)
    diff = abs(r["wait_ns"] / 1e6 - w_ms)
    worst = max(worst, diff)
print(f"largest |njx - peer| wait: {worst * 1e6:.1f} ns over {len(set(shared) & set(njx))} instances")
sys.exit(0 if not missing and not extra and worst < 1e-3 else 1)
