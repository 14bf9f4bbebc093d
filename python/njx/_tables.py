"""The tables a Profile has, each one tool run, and the Parquet → Arrow → pandas path.

pandas and pyarrow are imported here, on first use only: ``import njx`` works without
them (the wheel's tools do not need them; ``pip install 'njx[pandas]'`` brings them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import pyarrow  # type: ignore[import-untyped,unused-ignore]


@dataclass(frozen=True)
class Table:
    """One table: the tool that writes it and the arguments that choose it."""

    name: str
    tool: str
    args: Tuple[str, ...]
    doc: str

    @property
    def command(self) -> str:
        """The command line that writes it, as a user would type it."""
        return " ".join((self.tool,) + self.args)


# name, the command that writes it, what it holds.
_LIST = [
    ("modules", "njx-export --table modules", "XLA module executions per device"),
    ("thunks", "njx-export --table thunks", "thunk executions per device (exposed, hidden)"),
    ("ranges", "njx-export --table ranges", "CPU-side NVTX push/pop ranges"),
    ("gpu_ranges", "njx-export --table gpu-ranges", "NVTX ranges projected onto the GPU"),
    ("kernels", "njx-export --table kernels", "CUDA kernels with their launch"),
    ("memops", "njx-export --table memops", "CUDA memory copies and sets with their launch"),
    ("payloads", "njx-export --table payloads", "NVTX event payloads, one record per field"),
    ("compile", "njx-compile-summary", "compilation time per compilation (XLA guide format)"),
    ("compile_total", "njx-compile-summary --total", "compilation time over all compilations"),
    ("module_summary", "njx-modules", "steady-state module summary per program"),
    ("collectives.bandwidth", "njx-collectives --table bandwidth", "bus bandwidth"),
    ("collectives.hidden", "njx-collectives --table hidden", "hidden communication"),
    (
        "collectives.hidden_by_program",
        "njx-collectives --table hidden-by-program",
        "hidden communication per program",
    ),
    ("collectives.wait", "njx-collectives --table wait", "wait per module execution"),
    ("collectives.stragglers", "njx-collectives --table stragglers", "the devices last"),
    (
        "collectives.stragglers_by_program",
        "njx-collectives --table stragglers-by-program",
        "the devices last, per program",
    ),
    ("collectives.instances", "njx-collectives --table instances", "each collective instance"),
    ("collectives.wait_quantiles", "njx-collectives --table wait-quantiles", "wait quantiles"),
    ("collectives.wait_histogram", "njx-collectives --table wait-histogram", "wait histogram"),
    ("collectives.lateness", "njx-collectives --table lateness", "each device's lateness"),
    ("collectives.records", "njx-collectives --records", "communication thunks with busbw"),
    ("top_thunks", "njx-thunks --view top", "thunks by total GPU time"),
    ("opcodes", "njx-thunks --view opcode", "GPU time per HLO opcode, idle"),
    ("variability", "njx-thunks --view variability", "compute thunks' mean, std, cv"),
    ("heap", "njx-heap --view peak", "each heap simulator trace's peak"),
    ("heap_buffers", "njx-heap --view buffers", "the buffers live at each peak"),
    ("heap_by_op_name", "njx-heap --view by-op-name", "the heap peak by op_name"),
    ("heap_by_source", "njx-heap --view by-source", "the heap peak by Python source line"),
    ("kernel_summary", "njx-kernels", "GPU time per kernel name"),
    ("memop_summary", "njx-kernels --table memops", "GPU time per memory-operation kind"),
]

#: Every table by name: the Profile attribute (``collectives.NAME`` for njx-collectives').
TABLES: Dict[str, Table] = {
    name: Table(name, command.split()[0], tuple(command.split()[1:]), doc)
    for name, command, doc in _LIST
}

#: The tools behind a Profile's tables.
PROFILE_TOOLS: Tuple[str, ...] = tuple(dict.fromkeys(t.tool for t in TABLES.values()))

COLLECTIVE_TABLES: Tuple[str, ...] = tuple(
    n.split(".", 1)[1] for n in TABLES if n.startswith("collectives.")
)


def lookup(name: str) -> Table:
    """The table called ``name`` (``thunks``, ``collectives.bandwidth``; a hyphen for an
    underscore is taken too), or a ValueError listing them."""
    key = name.replace("-", "_")
    table = TABLES.get(key)
    if table is None:
        raise ValueError(f"no njx table {name!r}; the tables: {', '.join(TABLES)}")
    return table


_INSTALL = "njx's tables need pandas and pyarrow: pip install pandas pyarrow (or pip install 'njx[pandas]')"


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return pq


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return pd


def check_imports() -> None:
    """ImportError, saying what to install, unless pandas and pyarrow are there."""
    _pyarrow_parquet()
    _pandas()


def read_parquet(path: str) -> "pyarrow.Table":
    """The Parquet file a tool wrote, read whole into memory (the file is removed next)."""
    # ParquetFile, not read_table: one file needs none of pyarrow.dataset's set-up.
    return _pyarrow_parquet().ParquetFile(path, memory_map=False).read()


def to_pandas(table: "pyarrow.Table") -> "pandas.DataFrame":
    """A DataFrame of ``table``: integer and boolean columns that hold nulls as pandas'
    nullable ``Int64`` and ``boolean``, every other column as numpy would have it (times
    stay int64 nanoseconds, floats float64 with NaN for null, text as pandas' strings)."""
    pd = _pandas()
    import pyarrow as pa

    nullable = {
        i
        for i, f in enumerate(table.schema)
        if (pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))
        and table.column(i).null_count > 0
    }
    if not nullable:
        whole: "pandas.DataFrame" = table.to_pandas()
        return whole
    mapper = {
        pa.int8(): pd.Int8Dtype(),
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.uint8(): pd.UInt8Dtype(),
        pa.uint16(): pd.UInt16Dtype(),
        pa.uint32(): pd.UInt32Dtype(),
        pa.uint64(): pd.UInt64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    plain = [i for i in range(table.num_columns) if i not in nullable]
    frame: "pandas.DataFrame" = table.select(plain).to_pandas()
    for i in sorted(nullable):
        column = table.column(i).to_pandas(types_mapper=mapper.get)
        frame.insert(i, table.column_names[i], column.array)
    return frame


def to_polars(table: "pyarrow.Table") -> Any:
    """A polars DataFrame of ``table``."""
    try:
        import polars as pl
    except ImportError as e:
        raise ImportError("njx's to_polars needs polars: pip install polars") from e
    return pl.from_arrow(table)
