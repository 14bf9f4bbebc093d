#!/usr/bin/env python3
"""The peer's PGLE costs, unrounded: nsys-jax's own analysis steps
(nsys_jax/analyses/pgle_costs.py: load_profiler_data, apply_warmup_heuristics, the
ranking of programs by steady-state module time, xla_module_metadata(policy="all") and
pgle_costs.min_compute_max_comm) called from here, so that its numbers can be had where
the analysis itself stops (archives whose compiled XLA protos predate
OpMetadata.scheduling_name) and before its `%.1f` rounding.

Prints one line per (program, instruction): fingerprint, instruction name and the cost in
microseconds (repr of a float), tab-separated; programs the analysis skips (no HLO dump)
are said on stderr. Needs nsys-jax importable (PYTHONPATH) and an extracted archive
folder as PREFIX.

Usage: python3 scripts/pgle-peer.py PREFIX
"""

import pathlib
import sys

from nsys_jax import (
    apply_warmup_heuristics,
    ensure_compiled_protos_are_importable,
    load_profiler_data,
    xla_module_metadata,
)
from nsys_jax.analyses.pgle_costs import min_compute_max_comm


def main() -> None:
    prefix = pathlib.Path(sys.argv[1])
    ensure_compiled_protos_are_importable(prefix=prefix)
    _, steady = apply_warmup_heuristics(load_profiler_data(prefix))
    ranking = (
        steady.module.loc[:, ("Name", "ProjDurMs")]
        .groupby("ProgramId")
        .agg({"Name": "first", "ProjDurMs": "sum"})
        .sort_values(ascending=False, by="ProjDurMs")
    )
    out = sys.stdout
    for row in ranking.itertuples():
        try:
            protos = xla_module_metadata(row.Index, policy="all", prefix=prefix)
        except Exception as e:  # as the analysis: programs without a dump are skipped
            print(f"skipped {row.Name} ({row.Index}): {e}", file=sys.stderr)
            continue
        fingerprint = protos.unique_result(
            lambda m: m.proto().hlo_module.frontend_attributes.map[
                "fingerprint_before_lhs"
            ]
        )
        thunks = steady.thunk.loc[row.Index].copy()
        thunks["ProjDurFullMs"] = thunks["ProjDurMs"] + thunks["ProjDurHiddenMs"]
        series = min_compute_max_comm(thunks.groupby("Name"))
        for name, ms in series.items():
            out.write(f"{fingerprint}\t{name}\t{ms * 1000!r}\n")
        print(
            f"program {row.Name} ({row.Index}): {fingerprint}, {len(series)} instructions",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
