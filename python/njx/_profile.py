"""njx.load's Profile, and njx.report, njx.report_html and njx.diff."""

from __future__ import annotations

import json
import os
import pathlib
import threading
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import _tables, _tools
from ._tables import Table
from ._tools import Job, PathLike, Paths

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import pyarrow  # type: ignore[import-untyped,unused-ignore]


def _run_tables(
    paths: Sequence[str],
    requests: Sequence[Tuple[Table, Mapping[str, object]]],
    quiet: bool,
    strict: bool,
) -> List["pyarrow.Table"]:
    """Each (table, options) request as one tool run, all at once, into a temporary
    folder; their Arrow tables in order. Notes become NjxNote warnings. Module and thunk
    records with the same options come from one njx-export run (``--table thunks
    --modules-to``: one reading of the inputs; the wheel holds the tools of this package's
    version, which have it)."""
    argvs = [(t, _tools.arguments(t.tool, o, strict=strict)) for t, o in requests]
    names = [t.name for t, _ in requests]
    together = (
        "modules" in names
        and "thunks" in names
        and argvs[names.index("modules")][1] == argvs[names.index("thunks")][1]
    )
    with _tools.workdir() as tmp:
        jobs = []
        outs = [os.path.join(tmp, f"{i}.parquet") for i in range(len(argvs))]
        for i, (table, args) in enumerate(argvs):
            if together and table.name == "modules":
                continue  # written by the thunks' run
            argv = [_tools.tool_path(table.tool), *table.args, *args]
            if together and table.name == "thunks":
                argv += ["--modules-to", outs[names.index("modules")]]
            if quiet:
                argv.append("--quiet")
            argv += ["--format", "parquet", "-o", outs[i], "--", *paths]
            jobs.append(Job(argv, os.path.join(tmp, f"{i}.stderr")))
        _tools.run_jobs(jobs)
        read = [_tables.read_parquet(out) for out in outs]
    for job in jobs:
        _tools.warn_notes(job.notes)
    return read


class Profile:
    """The tables of one set of inputs (the ranks of a run), each a pandas DataFrame
    written by its njx tool: loaded when ``njx.load`` names it in ``tables``, else on first
    access, then kept. ``table(name, **options)`` runs one again with other options."""

    def __init__(
        self,
        paths: Sequence[str],
        options: Mapping[str, object],
        quiet: bool,
    ) -> None:
        self._paths = list(paths)
        self._options = dict(options)
        self._quiet = quiet
        self._arrow: Dict[str, "pyarrow.Table"] = {}
        self._frames: Dict[str, "pandas.DataFrame"] = {}
        self._lock = threading.RLock()
        self.collectives = Collectives(self)

    @property
    def paths(self) -> List[str]:
        """The input paths, patterns expanded."""
        return list(self._paths)

    @property
    def options(self) -> Dict[str, object]:
        """The keyword options every table's tool gets (those it has)."""
        return dict(self._options)

    @property
    def loaded(self) -> List[str]:
        """The names of the tables read so far."""
        return list(self._arrow)

    def __repr__(self) -> str:
        return f"njx.Profile({self._paths!r}, loaded={self.loaded!r})"

    # The options of load() go to every tool that has them; table()'s must be the tool's.
    def _options_for(self, table: Table) -> Dict[str, object]:
        specs = _tools.options_of(table.tool) if self._options else {}
        return {k: v for k, v in self._options.items() if k in specs}

    def _load(self, names: Sequence[str]) -> None:
        """Reads the tables of ``names`` not yet read, their tools run at once."""
        _tables.check_imports()
        with self._lock:
            wanted = [_tables.lookup(n) for n in dict.fromkeys(names)]
            todo = [t for t in wanted if t.name not in self._arrow]
            if not todo:
                return
            read = _run_tables(
                self._paths, [(t, self._options_for(t)) for t in todo], self._quiet, strict=False
            )
            for t, arrow in zip(todo, read):
                self._arrow[t.name] = arrow

    def arrow(self, name: str) -> "pyarrow.Table":
        """The table called ``name`` as the Arrow table read from its Parquet file."""
        table = _tables.lookup(name)
        self._load([table.name])
        return self._arrow[table.name]

    def frame(self, name: str) -> "pandas.DataFrame":
        """The table called ``name`` as a DataFrame (what its attribute gives)."""
        table = _tables.lookup(name)
        with self._lock:
            if table.name not in self._frames:
                self._frames[table.name] = _tables.to_pandas(self.arrow(table.name))
            return self._frames[table.name]

    def to_polars(self, name: str) -> Any:
        """The table called ``name`` as a polars DataFrame, from the same Arrow table
        (ImportError where polars is not installed)."""
        arrow = self.arrow(name)
        return _tables.to_polars(arrow)

    def table(self, name: str, **options: Any) -> "pandas.DataFrame":
        """The table called ``name`` once, with ``options`` over those of ``njx.load``
        (``None`` drops one): ``p.table("top_thunks", top=10, program="jit_step")``.
        Not kept. An option its tool lacks is a TypeError."""
        table = _tables.lookup(name)
        _tables.check_imports()
        merged = self._options_for(table)
        quiet = bool(options.pop("quiet", self._quiet))
        _tools.arguments(table.tool, options, strict=True)  # TypeError before running
        merged.update(options)
        merged = {k: v for k, v in merged.items() if v is not None}
        if "hlo" in options and options["hlo"] is not None:
            merged["hlo"] = _hlo_paths(options["hlo"])
        (arrow,) = _run_tables(self._paths, [(table, merged)], quiet, strict=True)
        return _tables.to_pandas(arrow)

    def drop(self, *names: str) -> None:
        """Forgets the tables of ``names`` (all when none), freeing their memory."""
        with self._lock:
            keys = [_tables.lookup(n).name for n in names] if names else list(self._arrow)
            for k in keys:
                self._arrow.pop(k, None)
                self._frames.pop(k, None)


def _attribute(name: str) -> property:
    table = _tables.TABLES[name]

    def get(self: Profile) -> "pandas.DataFrame":
        return self.frame(name)

    get.__doc__ = f"{table.doc[0].upper()}{table.doc[1:]}: ``{table.command}``."
    return property(get)


for _name in _tables.TABLES:
    if "." not in _name:
        setattr(Profile, _name, _attribute(_name))


class Collectives:
    """njx-collectives' tables of a Profile, one attribute per ``--table`` value
    (hyphens as underscores) and ``records`` (``--records``)."""

    def __init__(self, profile: Profile) -> None:
        self._profile = profile

    def __repr__(self) -> str:
        return f"njx.Collectives({', '.join(_tables.COLLECTIVE_TABLES)})"


def _collective(name: str) -> property:
    table = _tables.TABLES["collectives." + name]

    def get(self: Collectives) -> "pandas.DataFrame":
        return self._profile.frame(table.name)

    get.__doc__ = f"{table.doc[0].upper()}{table.doc[1:]}: ``{table.command}``."
    return property(get)


for _name in _tables.COLLECTIVE_TABLES:
    setattr(Collectives, _name, _collective(_name))


def _hlo_paths(hlo: Any) -> List[str]:
    return _tools.input_paths(hlo, what="--hlo")


def _checked(options: Dict[str, Any], tool: str) -> None:
    """``options`` of one call of ``tool``, checked (a TypeError names one it lacks), with
    ``hlo`` made a list of existing paths (FileNotFoundError otherwise), in place."""
    if options.get("hlo") is not None:
        options["hlo"] = _hlo_paths(options["hlo"])
    _tools.check_options(options, [tool])


def load(
    paths: Paths,
    *,
    hlo: Optional[Paths] = None,
    tables: Iterable[str] = ("modules", "thunks"),
    quiet: bool = False,
    **options: Any,
) -> Profile:
    """The tables of ``paths`` (a path or a list of them: archives, SQLite exports,
    reports, records; a pattern such as ``"run/rank*.zip"`` is expanded), as a Profile.

    ``tables`` are read now, their tools run at once; the others on first access.
    ``collectives`` in ``tables`` means all of njx-collectives' tables. ``hlo``: HLO dumps
    (an archive or dump folder, or a list) for the tools that take ``--hlo``. Other keyword
    arguments are the tools' long options (``program_key="name"`` → ``--program-key
    name``; True a bare flag; False or None nothing; a list the option repeated), given to
    every tool of a table that has the option; one that no such tool has is a TypeError.
    ``quiet=True`` passes ``-q``: no NjxNote warnings.
    """
    inputs = _tools.input_paths(paths)
    if hlo is not None:
        options["hlo"] = _hlo_paths(hlo)
    _tools.check_options(options, _tables.PROFILE_TOOLS)
    names: List[str] = []
    for n in [tables] if isinstance(tables, str) else tables:
        if n == "collectives":
            names += ["collectives." + c for c in _tables.COLLECTIVE_TABLES]
        else:
            names.append(_tables.lookup(n).name)
    profile = Profile(inputs, options, quiet)
    if names:
        profile._load(names)
    return profile


def _run_one(
    tool: str,
    argv_tail: List[str],
    options: Mapping[str, object],
    quiet: bool,
    out_name: str,
    tmp: str,
) -> Job:
    args = _tools.arguments(tool, options, strict=True)
    if quiet:
        args.append("--quiet")
    job = Job([_tools.tool_path(tool), *args, *argv_tail], os.path.join(tmp, "stderr"))
    if out_name:
        job.argv[1:1] = ["-o", os.path.join(tmp, out_name)]
    _tools.run_jobs([job])
    return job


def report(paths: Paths, *, quiet: bool = False, **options: Any) -> Dict[str, Any]:
    """njx-report's whole picture of ``paths`` as the dict of ``njx-report --format
    json``. Keyword arguments are njx-report's long options (``rows=10``,
    ``program="jit_step"``, ``hlo=...``)."""
    inputs = _tools.input_paths(paths)
    _checked(options, "njx-report")
    with _tools.workdir() as tmp:
        job = _run_one(
            "njx-report", ["--format", "json", "--", *inputs], options, quiet, "report.json", tmp
        )
        with open(os.path.join(tmp, "report.json"), encoding="utf-8") as f:
            doc = json.load(f)
    _tools.warn_notes(job.notes)
    return doc  # type: ignore[no-any-return]


def report_html(
    paths: Paths, file: PathLike, *, quiet: bool = False, **options: Any
) -> pathlib.Path:
    """Writes njx-report's self-contained HTML page of ``paths`` to ``file`` (``njx-report
    --html FILE``) and returns its path. Keyword arguments are njx-report's options."""
    inputs = _tools.input_paths(paths)
    _checked(options, "njx-report")
    target = pathlib.Path(os.fspath(file))
    with _tools.workdir() as tmp:
        # The text report goes to /dev/null: the page is the result.
        job = _run_one(
            "njx-report",
            ["--html", _tools._safe(str(target)), "--", *inputs],
            options,
            quiet,
            "",
            tmp,
        )
    _tools.warn_notes(job.notes)
    return target


def diff(
    before: Paths,
    after: Paths,
    by: str = "program",
    *,
    quiet: bool = False,
    **options: Any,
) -> "pandas.DataFrame":
    """njx-diff's comparison of two runs (``njx-diff BEFORE... --vs AFTER... --by BY``) as
    a DataFrame, one row per key, largest change first. ``by``: ``program``,
    ``instruction``, ``collective``, ``kernel`` or ``compile-pass``. Keyword arguments are
    njx-diff's long options (``alpha=0.01``, ``min_change=2``, ``svg="diff.svg"``)."""
    _tables.check_imports()
    first = _tools.input_paths(before, what="before")
    second = _tools.input_paths(after, what="after")
    _checked(options, "njx-diff")
    options = {"by": by, **options}
    with _tools.workdir() as tmp:
        job = _run_one(
            "njx-diff",
            ["--format", "parquet", *first, "--vs", *second],
            options,
            quiet,
            "diff.parquet",
            tmp,
        )
        arrow = _tables.read_parquet(os.path.join(tmp, "diff.parquet"))
    _tools.warn_notes(job.notes)
    return _tables.to_pandas(arrow)
