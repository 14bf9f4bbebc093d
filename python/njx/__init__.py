"""njx from Python: the njx tools' tables as pandas DataFrames.

A thin layer over the installed command-line tools (the wheel that holds this package
puts them in the environment's ``bin/``): each table is one tool run writing
``--format parquet`` into a temporary folder, read with pyarrow. The tools are the one
code path, with their messages, exit codes and memory in a child process::

    import njx
    run = njx.load("examples/data/run/rank*.zip")     # modules and thunks read now
    run.thunks                                        # njx-export --table thunks
    run.module_summary                                # njx-modules, on first access
    run.collectives.bandwidth                         # njx-collectives --table bandwidth
    run.table("top_thunks", top=10)                   # once, with other options
    njx.report("examples/data/run/rank*.zip")["findings"]

pandas and pyarrow are needed for the tables (``pip install 'njx[pandas]'``), polars for
``Profile.to_polars``; ``import njx`` itself needs neither. docs/python.md says more.
"""

from __future__ import annotations

from ._profile import Collectives, Profile, diff, load, report, report_html
from ._tables import TABLES as _TABLES
from ._tools import NjxError, NjxNote, ToolNotFoundError, bin_dir

#: The names of every table a Profile has (``Profile.table(name)``, ``tables=``).
TABLES = tuple(_TABLES)

try:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("njx")
    except PackageNotFoundError:  # run from a clone (PYTHONPATH=python)
        __version__ = "unknown"
except ImportError:  # pragma: no cover
    __version__ = "unknown"

__all__ = [
    "TABLES",
    "Collectives",
    "NjxError",
    "NjxNote",
    "Profile",
    "ToolNotFoundError",
    "bin_dir",
    "diff",
    "load",
    "report",
    "report_html",
]
