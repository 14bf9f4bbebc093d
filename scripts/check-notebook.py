#!/usr/bin/env python3
"""Compares njx's versions of the nsys-jax Analysis notebook's cells with the cells
themselves, run with the peer (NVIDIA JAX-Toolbox nsys-jax) on PREFIX, an nsys-jax
archive extracted into a folder (for several ranks, one made by nsys-jax-combine), after
its loading cell (load_profiler_data, remove_autotuning_detail,
align_profiler_data_timestamps, apply_warmup_heuristics). Not run by CI.

    njx-thunks --view variability --format json rank*.zip > var.json
    njx-heap --format json rank0.zip > heap.json
    njx-collectives --table instances --format json rank*.zip > instances.json
    python3 scripts/check-notebook.py PREFIX var.json heap.json instances.json

Wait (its communication cell): per collective instance over two or more devices, last
end - first start - the fastest device's full time, on aligned clocks.

Variability (the notebook's compute-time variability cell): per (program, thunk), the
mean and sample std of the steady-state compute thunks' exposed times over devices and
executions, kept where std/mean > 0.1. Heap (its buffer-assignment cells): the notebook's
heap_usage_trace replayed on each heap simulator trace of each program, peak compared
with njx-heap's peak_bytes.
"""
import json
import pathlib
import sys
from collections import defaultdict

import numpy as np
from nsys_jax import (
    align_profiler_data_timestamps,
    apply_warmup_heuristics,
    ensure_compiled_protos_are_importable,
    load_profiler_data,
    remove_autotuning_detail,
    xla_module_metadata,
)

prefix = pathlib.Path(sys.argv[1])
ensure_compiled_protos_are_importable(prefix=prefix)
data = load_profiler_data(prefix)
data = remove_autotuning_detail(data)
data, _ = align_profiler_data_timestamps(data)
_, steady = apply_warmup_heuristics(data)
failed = False

# Variability.
compute = steady.thunk.loc[~steady.thunk["Communication"], "ProjDurMs"]
stats = compute.groupby(["ProgramId", "Name"]).agg(("mean", "std", "count"))
stats["cv"] = stats["std"] / stats["mean"]
peer = stats[stats["cv"] > 0.1]
peer_rows = sorted(
    (name, int(n), m * 1e6, s * 1e6) for (_, name), (m, s, n, _) in peer.iterrows()
)
njx_rows = sorted(
    (r["thunk"], r["executions"], r["mean_ns"], r["std_ns"])
    for r in map(json.loads, open(sys.argv[2]))
)
print(f"variability: peer {len(peer_rows)} thunks with cv > 0.1, njx {len(njx_rows)}")
worst = 0.0
if len(peer_rows) != len(njx_rows):
    failed = True
for p, n in zip(peer_rows, njx_rows):
    if p[:2] != n[:2]:
        print("differs:", p, n)
        failed = True
        continue
    worst = max(worst, abs(p[2] - n[2]) / p[2], abs(p[3] - n[3]) / p[3])
print(f"variability: largest relative difference of mean or std: {worst:.2e}")
failed |= worst > 1e-6

# Heap.
heap_rows = [json.loads(line) for line in open(sys.argv[3])]
# By module name: the peer keys programs by its own ids (those in the profile).
peaks = {(r["program"], r["trace"]): r["peak_bytes"] for r in heap_rows if r["trace"] >= 0}
peer_ids = {
    name: program_id
    for program_id, name in data.module["Name"].groupby("ProgramId").first().items()
}


def heap_usage_trace(trace, sizes):
    """The notebook's replay: an allocation counts once however many buffers share it."""
    from xla.service.hlo_pb2 import HeapSimulatorTrace

    kind = HeapSimulatorTrace.Event.Kind
    active, aliases, steps = defaultdict(int), {}, [0]
    for event in trace.events:
        if event.kind == kind.FREE:
            alloc = aliases.pop(event.buffer_id, event.buffer_id)
            active[alloc] -= 1
            if active[alloc] == 0:
                steps.append(-sizes[alloc])
        else:
            if event.kind == kind.SHARE_WITH:
                alloc = event.share_with_canonical_id
                aliases[event.buffer_id] = alloc
            else:
                alloc = event.buffer_id
            active[alloc] += 1
            if active[alloc] == 1:
                steps.append(sizes[alloc])
    return np.cumsum(steps)


checked = 0
for name, trace_no in sorted(peaks):
    if name not in peer_ids:
        print(f"heap: {name} did not run in the profile: the peer has no id for it")
        continue
    program_id = peer_ids[name]
    protos = xla_module_metadata(program_id, policy="all", prefix=prefix)
    sizes = protos.unique_result(
        lambda p: {b.id: b.size for b in p.proto().buffer_assignment.logical_buffers}
    )
    traces = protos.unique_result(
        lambda p: p.proto().buffer_assignment.heap_simulator_traces
    )
    peak = int(max(heap_usage_trace(traces[trace_no], sizes)))
    ok = peak == peaks[(name, trace_no)]
    failed |= not ok
    checked += 1
    if not ok or peak > 1 << 20:
        print(
            f"heap: {name} ({program_id}) trace {trace_no}: notebook {peak} B, "
            f"njx {peaks[(name, trace_no)]} B {'ok' if ok else 'DIFFERS'}"
        )
print(f"heap: {checked} traces compared")

# Wait per collective instance.
comm = steady.communication
comm["ProjDurFullMs"] = comm["ProjDurMs"] + comm["ProjDurHiddenMs"]
comm["ProjEndMs"] = comm["ProjStartMs"] + comm["ProjDurFullMs"]
peer = {}
for collective, df in comm.groupby("Collective"):
    g = df.groupby(["ProgramId", "ProgramExecution", "Name", "ThunkExecution"])
    agg = g.agg({"ProjStartMs": "min", "ProjDurFullMs": "min", "ProjEndMs": "max"})
    agg["Devices"] = g.size()
    wait = agg["ProjEndMs"] - agg["ProjStartMs"] - agg["ProjDurFullMs"]
    for (_, execution, name, thunk_execution), w in wait.items():
        devices = int(agg.loc[(_, execution, name, thunk_execution), "Devices"])
        peer[(execution, name, thunk_execution, devices)] = (collective, w)
njx = {}
for r in map(json.loads, open(sys.argv[4])):
    njx[(r["execution"], r["thunk"], r["thunk_execution"], r["devices"])] = r
shared = {k: v for k, v in peer.items() if k[3] > 1}
print(
    f"wait: peer {len(peer)} instances, {len(shared)} over two or more devices; "
    f"njx {len(njx)}; in one only: {len(set(shared) ^ set(njx))}"
)
failed |= set(shared) != set(njx)
worst = 0.0
for k in set(shared) & set(njx):
    collective, w_ms = shared[k]
    failed |= njx[k]["collective"] != collective
    worst = max(worst, abs(njx[k]["wait_ns"] / 1e6 - w_ms))
print(f"wait: largest |njx - peer|: {worst * 1e6:.1f} ns")
failed |= worst > 1e-3
sys.exit(1 if failed else 0)
