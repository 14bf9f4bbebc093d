"""Tests of the njx Python package (python/njx) against the built tools.

    PYTHONPATH=python NJX_BIN_DIR=target/release python tests/python/test_njx.py

Needs pandas and pyarrow (polars is optional: its test says it is skipped without it).
tests/njx/python.rs runs this in a fresh venv. The reference for every table is the tool's
own JSON Lines (`--format json`), parsed here only: the DataFrames must hold the same
columns in the same order, and the same values and nulls, ints as ints and bools as bools.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings
from typing import Any, Dict, List, Tuple

import njx
import pandas as pd
from njx import _tools

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = [os.path.join("examples", "data", "run", f"rank{i}.zip") for i in (0, 1)]
PAX_DIR = os.path.join(REPO, "..", "shared", "data", "pax_fsdp4_4proc")
PAX = sorted(
    os.path.join(PAX_DIR, f)
    for f in (os.listdir(PAX_DIR) if os.path.isdir(PAX_DIR) else [])
    if f.endswith(".zip")
)


def skip(reason: str) -> None:
    """A skip said on stderr, past any capture, so that it is seen."""
    sys.stderr.write(f"SKIPPED: {reason}\n")
    sys.stderr.flush()


def records(tool: str, *args: str) -> List[Dict[str, Any]]:
    """The JSON Lines a tool writes for ``args``: the reference."""
    out = subprocess.run(
        [os.path.join(njx.bin_dir(), tool), "-q", "--format", "json", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines() if line]


def is_null(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def assert_same(
    test: unittest.TestCase,
    frame: pd.DataFrame,
    want: List[Dict[str, Any]],
    what: str,
    dtypes: bool = True,
) -> None:
    """``frame`` holds ``want``'s records: names, order, values, nulls and types."""
    test.assertGreater(len(want), 0, what)
    names = list(want[0].keys())
    test.assertEqual(list(frame.columns), names, f"{what}: columns")
    test.assertEqual(len(frame), len(want), f"{what}: rows")
    columns = {c: frame[c].tolist() for c in names}
    for i, record in enumerate(want):
        test.assertEqual(list(record.keys()), names, f"{what}: row {i}: JSON fields")
        for c, v in record.items():
            got = columns[c][i]
            where = f"{what}: row {i}, {c}: got {got!r} ({type(got).__name__}), want {v!r}"
            if v is None:
                test.assertTrue(is_null(got), where)
            elif isinstance(v, bool):
                test.assertIs(type(got), bool, where)
                test.assertEqual(got, v, where)
            elif isinstance(v, int):
                test.assertIs(type(got), int, where)
                test.assertEqual(got, v, where)
            elif isinstance(v, float):
                test.assertIsInstance(got, float, where)
                test.assertEqual(got, v, where)
            else:
                test.assertEqual(got, v, where)
    # dtypes: ints int64 (Int64 where a null is), bools bool (boolean), floats float64.
    for c in names if dtypes else []:
        kinds = {type(r[c]) for r in want if r[c] is not None}
        nulls = any(r[c] is None for r in want)
        if kinds == {int}:
            test.assertEqual(str(frame[c].dtype), "Int64" if nulls else "int64", f"{what}: {c}")
        elif kinds == {bool}:
            test.assertEqual(str(frame[c].dtype), "boolean" if nulls else "bool", f"{what}: {c}")
        elif kinds == {float} or kinds == {float, int}:
            test.assertEqual(str(frame[c].dtype), "float64", f"{what}: {c}")


def children() -> Dict[int, str]:
    """This process's child processes: pid → command name (from /proc)."""
    me = os.getpid()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == me:
            found[int(entry)] = name
    return found


def read_pid(path: str) -> int:
    with open(path) as f:
        return int(f.read())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Base(unittest.TestCase):
    def setUp(self) -> None:
        self.cwd = os.getcwd()
        os.chdir(REPO)
        self.tmp = tempfile.mkdtemp(prefix="njx-test-")
        warnings.simplefilter("ignore", njx.NjxNote)

    def tearDown(self) -> None:
        os.chdir(self.cwd)
        shutil.rmtree(self.tmp, ignore_errors=True)
        warnings.resetwarnings()


class Tables(Base):
    @classmethod
    def setUpClass(cls) -> None:
        os.chdir(REPO)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", njx.NjxNote)
            cls.prof = njx.load(RUN)

    def test_modules_and_thunks_are_the_json_records(self) -> None:
        self.assertEqual(self.prof.loaded[:2], ["modules", "thunks"], "read by load()")
        assert_same(
            self, self.prof.modules, records("njx-export", "--table", "modules", *RUN), "modules"
        )
        assert_same(
            self, self.prof.thunks, records("njx-export", "--table", "thunks", *RUN), "thunks"
        )
        # Both from one njx-export run (--modules-to) where it has the option.
        ran: List[List[str]] = []
        real = _tools.run_jobs

        def spy(jobs: Any) -> None:
            ran.extend(job.argv for job in jobs)
            real(jobs)

        _tools.run_jobs = spy
        try:
            fresh = njx.load(RUN, quiet=True)
        finally:
            _tools.run_jobs = real
        self.assertEqual(len(ran), 1, ran)
        self.assertIn("--modules-to", ran[0])
        assert_same(self, fresh.modules, records("njx-export", "--table", "modules", *RUN), "m")
        assert_same(self, fresh.thunks, records("njx-export", "--table", "thunks", *RUN), "t")
        # Different options: two runs.
        ran.clear()
        _tools.run_jobs = spy
        try:
            p = njx.load(RUN, tables=("thunks",), quiet=True)
            p.table("modules", no_align=True)
        finally:
            _tools.run_jobs = real
        self.assertEqual([a.count("--modules-to") for a in ran], [0, 0])
        # Nulls where a thunk is no collective; times int64 nanoseconds.
        self.assertTrue(self.prof.thunks["collective"].isna().any())
        self.assertEqual(str(self.prof.thunks["start_ns"].dtype), "int64")

    def test_lazy_tables_are_their_tools_records(self) -> None:
        for name, tool, args in [
            ("module_summary", "njx-modules", []),
            ("compile", "njx-compile-summary", []),
            ("compile_total", "njx-compile-summary", ["--total"]),
            ("collectives.bandwidth", "njx-collectives", ["--table", "bandwidth"]),
            ("collectives.records", "njx-collectives", ["--records"]),
            ("top_thunks", "njx-thunks", ["--view", "top"]),
            ("opcodes", "njx-thunks", ["--view", "opcode"]),
            ("heap", "njx-heap", ["--view", "peak"]),
            ("heap_buffers", "njx-heap", ["--view", "buffers"]),
            ("ranges", "njx-export", ["--table", "ranges"]),
            ("gpu_ranges", "njx-export", ["--table", "gpu-ranges"]),
        ]:
            with self.subTest(name=name):
                assert_same(self, self.prof.frame(name), records(tool, *args, *RUN), name)
        self.assertIs(self.prof.module_summary, self.prof.frame("module_summary"), "kept")
        self.assertIs(self.prof.collectives.bandwidth, self.prof.frame("collectives.bandwidth"))
        for c in njx.TABLES:
            if c.startswith("collectives."):
                self.assertTrue(hasattr(self.prof.collectives, c.split(".", 1)[1]), c)

    def test_every_table_and_view_of_the_tools_has_its_dataframe(self) -> None:
        # A --table or --view value added to a tool and not to python/njx/_tables.py fails.
        def values(tool: str, option: str) -> List[str]:
            help_text = subprocess.run(
                [os.path.join(njx.bin_dir(), tool), "--help"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()
            start = next(
                i for i, line in enumerate(help_text) if line.strip().startswith(option + " <")
            )
            found = []
            for line in help_text[start + 1 :]:
                if line.lstrip().startswith("--") or line.lstrip().startswith("-h,"):
                    break
                m = re.match(r"^\s+- ([a-z-]+):", line)
                if m:
                    found.append(m.group(1))
            self.assertTrue(found, f"{tool} {option}: no values read from --help")
            return found

        have = {(t.tool, t.args) for t in njx._tables.TABLES.values()}
        for tool, option, default in [
            ("njx-export", "--table", None),
            ("njx-collectives", "--table", None),
            ("njx-thunks", "--view", None),
            ("njx-heap", "--view", None),
            ("njx-kernels", "--table", "kernels"),
        ]:
            for value in values(tool, option):
                args = () if value == default else (option, value)
                self.assertIn((tool, args), have, f"{tool} {option} {value}: no njx table")

    def test_an_empty_table_has_its_columns(self) -> None:
        # No compute thunk of the example run varies by more than 10 %.
        v = self.prof.variability
        self.assertEqual(len(v), 0)
        header = subprocess.run(
            [
                os.path.join(njx.bin_dir(), "njx-thunks"),
                "-q",
                "--view",
                "variability",
                "--format",
                "csv",
                *RUN,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()[0]
        self.assertEqual(",".join(v.columns), header)

    def test_to_polars(self) -> None:
        try:
            import polars  # noqa: F401
        except ImportError:
            skip("polars is not installed: Profile.to_polars not tested")
            return
        frame = self.prof.to_polars("thunks")
        want = records("njx-export", "--table", "thunks", *RUN)
        self.assertEqual(frame.columns, list(want[0].keys()))
        self.assertEqual([dict(zip(frame.columns, r)) for r in frame.rows()], want)

    def test_table_with_other_options(self) -> None:
        p = njx.load(RUN, tables=(), quiet=True)
        top = p.table("top_thunks", top=1)
        self.assertEqual(len(top), 1)
        assert_same(self, top, records("njx-thunks", "--top", "1", *RUN), "top_thunks --top 1")
        self.assertEqual(p.loaded, [], "a one-off is not kept")
        # A list repeats the option.
        one = self.prof.table("collectives.records", program=["jit_step"])
        self.assertEqual(set(one["module"]), {"jit_step"})

    def test_options_go_to_every_tool_that_has_them(self) -> None:
        byname = njx.load(RUN, program_key="name", tables=("modules",), quiet=True)
        assert_same(
            self,
            byname.modules,
            records("njx-export", "--table", "modules", "--program-key", "name", *RUN),
            "modules --program-key name",
        )
        assert_same(
            self,
            byname.module_summary,
            records("njx-modules", "--program-key", "name", *RUN),
            "njx-modules --program-key name",
        )
        # njx-heap has no --program-key: left out there.
        self.assertGreater(len(byname.heap), 0)

    def test_report(self) -> None:
        doc = njx.report(RUN, quiet=True)
        for key in ("njx_report", "inputs", "read", "programs", "sections"):
            self.assertIn(key, doc)
        cli = subprocess.run(
            [os.path.join(njx.bin_dir(), "njx-report"), "-q", "--format", "json", *RUN],
            capture_output=True,
            text=True,
            check=True,
        )
        self.assertEqual(doc, json.loads(cli.stdout))

    def test_report_html(self) -> None:
        page = os.path.join(self.tmp, "run.html")
        got = njx.report_html(RUN, page, rows=3, quiet=True)
        self.assertEqual(os.fspath(got), page)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("<html", text[:2000].lower())
        self.assertIn("jit_step", text)

    def test_diff_of_a_run_with_itself(self) -> None:
        d = njx.diff("examples/data/run/rank*.zip", RUN, quiet=True)
        want = records("njx-diff", *RUN, "--vs", *RUN)
        assert_same(self, d, want, "njx-diff")
        self.assertTrue((d["status"] == "same").all(), d)
        self.assertTrue((d["change_ns"] == 0).all())
        by = njx.diff(RUN, RUN, by="collective", quiet=True)
        self.assertEqual(list(by.columns), list(d.columns))

    def test_notes_are_warnings_unless_quiet(self) -> None:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            njx.load(RUN, tables=("thunks",))
        notes = [w for w in said if issubclass(w.category, njx.NjxNote)]
        self.assertTrue(notes, "no NjxNote")
        self.assertTrue(all(str(w.message).startswith("njx-export: ") for w in notes))
        self.assertTrue(any("clock alignment" in str(w.message) for w in notes))
        self.assertEqual(notes[0].filename, __file__, "attributed to the caller")
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            njx.load(RUN, tables=("thunks",), quiet=True)
        self.assertEqual([w for w in said if issubclass(w.category, njx.NjxNote)], [])

    def test_lazy_until_asked(self) -> None:
        p = njx.load(RUN, tables=())
        self.assertEqual(p.loaded, [])
        _ = p.heap
        self.assertEqual(p.loaded, ["heap"])
        p = njx.load("examples/data/run/rank*.zip", tables=("collectives",), quiet=True)
        self.assertEqual(
            len(p.loaded), len([t for t in njx.TABLES if t.startswith("collectives.")])
        )


class Hostile(Base):
    def test_a_missing_path_is_file_not_found_before_any_tool_runs(self) -> None:
        missing = os.path.join(self.tmp, "nope.zip")
        with self.assertRaises(FileNotFoundError) as e:
            njx.load([RUN[0], missing])
        self.assertEqual(e.exception.filename, missing)
        self.assertNotIsInstance(e.exception, njx.ToolNotFoundError)
        with self.assertRaises(FileNotFoundError):
            njx.load(os.path.join(self.tmp, "none*.zip"))
        with self.assertRaises(FileNotFoundError):
            njx.report(missing)
        with self.assertRaises(FileNotFoundError):
            njx.diff(RUN, missing)
        with self.assertRaises(FileNotFoundError):
            njx.load(RUN, hlo=missing)
        self.assertEqual(children(), {})

    def test_a_corrupt_archive_is_an_njx_error_naming_it(self) -> None:
        bad = os.path.join(self.tmp, "rank9.zip")
        with open(bad, "wb") as f:
            f.write(b"PK\x03\x04" + b"not a zip archive at all " * 40)
        with self.assertRaises(njx.NjxError) as e:
            njx.load([RUN[0], bad])
        self.assertIsInstance(e.exception, RuntimeError)
        self.assertIn(bad, str(e.exception))
        self.assertEqual(e.exception.returncode, 1)
        self.assertIn(bad, e.exception.command)
        self.assertTrue(os.path.basename(e.exception.command[0]).startswith("njx-export"))
        self.assertEqual(os.listdir(self.tmp), ["rank9.zip"])

    def test_a_value_the_tool_refuses_is_an_njx_error_with_its_message(self) -> None:
        p = njx.load(RUN, tables=(), quiet=True)
        with self.assertRaises(njx.NjxError) as e:
            p.table("top_thunks", top_modules=7)
        self.assertIn("--top-modules 7", str(e.exception))
        self.assertTrue(str(e.exception).startswith("njx-thunks: "), str(e.exception))
        self.assertEqual(e.exception.returncode, 2)
        with self.assertRaises(njx.NjxError) as e:
            njx.diff(RUN, RUN, by="nothing")
        self.assertEqual(e.exception.returncode, 2)

    def test_an_option_no_tool_has_is_a_type_error(self) -> None:
        with self.assertRaises(TypeError) as e:
            njx.load(RUN, bogus_option=1)
        self.assertIn("bogus_option", str(e.exception))
        with self.assertRaises(TypeError):
            njx.load(RUN, include_warmup="yes")  # a flag
        with self.assertRaises(TypeError):
            njx.load(RUN, program_key=True)  # takes a value
        with self.assertRaises(TypeError):
            njx.load(RUN, output="x.parquet")  # the layer's own
        with self.assertRaises(TypeError):
            njx.load(RUN, modules_to="m.parquet")  # the layer's own too
        # A DataFrame's cells as values: numpy's float64 and bool_ as Python's.
        import numpy as np

        self.assertEqual(
            _tools.arguments("njx-thunks", {"min_cv": np.float64(0.25)}, strict=True), ["--min-cv", "0.25"]
        )
        self.assertEqual(
            _tools.arguments("njx-thunks", {"include_warmup": np.bool_(True)}, strict=True),
            ["--include-warmup"],
        )
        # clap's `[alias: --threshold]`: the old name of njx-compile-summary's --cover.
        self.assertEqual(
            _tools.arguments("njx-compile-summary", {"threshold": 0.5}, strict=True), ["--threshold", "0.5"]
        )
        with self.assertRaises(TypeError):
            njx.report(RUN, min_cv=0.2)  # njx-thunks', not njx-report's
        p = njx.load(RUN, tables=())
        with self.assertRaises(TypeError):
            p.table("heap", min_cv=0.2)
        with self.assertRaises(ValueError):
            p.table("no_such_table")
        self.assertEqual(children(), {})

    def test_colours_forced_as_in_jupyter(self) -> None:
        # Jupyter's kernel sets these for its children: clap would colour the --help the
        # options are read from, and the tools their messages.
        _tools._help_cache.clear()
        with contextlib_env("CLICOLOR_FORCE", "1"), contextlib_env("FORCE_COLOR", "1"):
            p = njx.load(RUN, tables=(), quiet=True)
            svg = os.path.join(self.tmp, "busbw.svg")
            self.assertEqual(len(p.table("collectives.bandwidth", plot=svg)), 1)
            self.assertTrue(os.path.getsize(svg) > 0)
            with self.assertRaises(njx.NjxError) as e:
                p.table("top_thunks", top_modules=7)
            self.assertNotIn("\x1b", str(e.exception))
        _tools._help_cache.clear()

    def test_tools_not_found(self) -> None:
        saved = os.environ.get("NJX_BIN_DIR")
        os.environ["NJX_BIN_DIR"] = self.tmp
        try:
            with self.assertRaises(njx.ToolNotFoundError) as e:
                njx.load(RUN)
            self.assertIn("NJX_BIN_DIR", str(e.exception))
        finally:
            if saved is None:
                del os.environ["NJX_BIN_DIR"]
            else:
                os.environ["NJX_BIN_DIR"] = saved

    def test_import_without_pandas_and_pyarrow(self) -> None:
        code = (
            "import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('pandas', 'pyarrow', 'polars'):\n"
            "            raise ImportError('blocked ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import njx\n"
            f"doc = njx.report({RUN!r}, quiet=True)\n"
            "assert doc['njx_report'] == 1\n"
            "try:\n"
            f"    njx.load({RUN!r})\n"
            "except ImportError as e:\n"
            "    assert 'pip install pandas pyarrow' in str(e), e\n"
            "else:\n"
            "    raise SystemExit('load without pandas worked')\n"
        )
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)


class Interrupt(Base):
    """Ctrl-C (SIGINT to this process) while tools run: every child stopped and waited
    for, the temporary folder removed, then KeyboardInterrupt."""

    def setUp(self) -> None:
        super().setUp()
        self.saved_tempdir = tempfile.tempdir
        self.scratch = os.path.join(self.tmp, "tmp")
        os.mkdir(self.scratch)
        tempfile.tempdir = self.scratch  # where njx makes its temporary folder

    def tearDown(self) -> None:
        tempfile.tempdir = self.saved_tempdir
        super().tearDown()

    def interrupt_when(self, ready: Any) -> None:
        """SIGINT to this process as soon as ``ready()``, from a thread that gives up
        when the test's load is over (``self.over``)."""
        self.over = threading.Event()

        def fire() -> None:
            while not self.over.is_set():
                if ready():
                    os.kill(os.getpid(), signal.SIGINT)
                    return
                time.sleep(0.001)

        threading.Thread(target=fire, daemon=True).start()

    def slow_tools(self, ignore_sigint: bool) -> Tuple[str, str]:
        """A bin folder whose njx-export hangs (writing its pid), the others the real ones."""
        real = os.path.abspath(njx.bin_dir())
        fake = tempfile.mkdtemp(prefix="bin", dir=self.tmp)
        for name in os.listdir(real):
            if name.startswith("njx"):
                os.symlink(os.path.join(real, name), os.path.join(fake, name))
        os.remove(os.path.join(fake, "njx-export"))
        script = os.path.join(fake, "njx-export")
        with open(script, "w") as f:
            f.write(
                "#!/bin/sh\n"
                f'if [ "$1" = --help ]; then exec {os.path.join(real, "njx-export")} --help; fi\n'
                + ("trap '' INT\n" if ignore_sigint else "")
                + f"echo $$ > {fake}/pid.tmp && mv {fake}/pid.tmp {fake}/pid\n"
                "exec sleep 60\n"
            )
        os.chmod(script, 0o755)
        return fake, os.path.join(fake, "pid")

    def check_interrupted(self, load: Any, pids: Any) -> float:
        start = time.monotonic()
        try:
            with self.assertRaises(KeyboardInterrupt):
                load()
        finally:
            self.over.set()
        took = time.monotonic() - start
        for pid in pids():
            self.assertFalse(alive(pid), f"child {pid} still there")
        self.assertEqual(children(), {}, "a child of the test left")
        self.assertEqual(os.listdir(self.scratch), [], "njx's temporary folder left")
        return took

    def test_a_hung_tool_is_interrupted(self) -> None:
        # One tool (waited for without polling) and two at once.
        for ignore, tables in [
            (False, ("thunks",)),
            (False, ("thunks", "heap")),
            (True, ("thunks",)),
            (True, ("thunks", "heap")),
        ]:
            with self.subTest(ignore_sigint=ignore, tables=tables):
                fake, pidfile = self.slow_tools(ignore)
                with contextlib_env("NJX_BIN_DIR", fake):
                    self.interrupt_when(lambda f=pidfile: os.path.exists(f))
                    took = self.check_interrupted(
                        lambda t=tables: njx.load(RUN, tables=t),
                        lambda f=pidfile: [read_pid(f)],
                    )
                    if ignore:
                        # SIGINT ignored: SIGKILL after the grace.
                        self.assertGreaterEqual(took, _tools.GRACE_S * 0.9)
                    self.assertLess(took, 30)

    def test_the_real_tools_are_interrupted_mid_load(self) -> None:
        if not PAX:
            skip("../shared/data/pax_fsdp4_4proc absent: Ctrl-C during a real load not tested")
            return
        seen: Dict[int, str] = {}

        def tools_running() -> bool:
            now = {p: n for p, n in children().items() if n.startswith("njx-")}
            seen.update(now)
            return len(now) >= 2

        # Seven tools of about a second each on the pax archives, two or more at a time:
        # the interrupt comes while they run.
        self.interrupt_when(tools_running)
        tables = ("thunks", "ranges", "gpu_ranges", "top_thunks", "variability", "compile")
        self.check_interrupted(
            lambda: njx.load(PAX, tables=tables + ("collectives.records",)),
            lambda: list(seen),
        )
        self.assertGreaterEqual(len(seen), 2, seen)


class contextlib_env:
    """An environment variable set for a block."""

    def __init__(self, name: str, value: str) -> None:
        self.name, self.value = name, value

    def __enter__(self) -> None:
        self.saved = os.environ.get(self.name)
        os.environ[self.name] = self.value

    def __exit__(self, *exc: object) -> None:
        if self.saved is None:
            os.environ.pop(self.name, None)
        else:
            os.environ[self.name] = self.saved


class Pax(Base):
    def test_pax_archives(self) -> None:
        if not PAX:
            skip("../shared/data/pax_fsdp4_4proc absent: the pax archives not loaded")
            return
        p = njx.load(PAX, quiet=True)
        # Every row and field of both tables, as njx-export's JSON records have them.
        for table in ("modules", "thunks"):
            want = records("njx-export", "--table", table, *PAX)
            self.assertEqual(len(getattr(p, table)), len(want), table)
            assert_same(self, getattr(p, table), want, f"pax {table}")
        self.assertGreater(len(p.collectives.bandwidth), 0)


if __name__ == "__main__":
    if not os.environ.get("NJX_BIN_DIR"):
        sys.stderr.write(
            "note: NJX_BIN_DIR not set; njx looks in this Python's scripts folder and PATH\n"
        )
    unittest.main(verbosity=2)
