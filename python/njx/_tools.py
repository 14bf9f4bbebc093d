"""Finding the njx tools, turning keyword arguments into their options, running them.

Everything that touches a child process is here: the Python layer never reads a profile
itself, it runs the tools (the one tested code path) and reads what they write. The
options a tool takes are read from its own ``--help`` (clap's, one line per option), so
that a keyword argument maps to exactly the options the installed tools have.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import (
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Sequence[PathLike]]

#: Seconds a tool has to leave after SIGINT (it removes its staged output) before SIGKILL.
GRACE_S = 2.0

#: Options the Python layer sets itself: a keyword argument naming one is a TypeError.
RESERVED = frozenset(
    {
        "output",  # -o: the layer's temporary file
        "format",  # --format parquet (json for njx.report)
        "table",  # chosen by the table's name
        "view",
        "records",
        "total",
        "partial",  # a partial result is no table
        "completions",
        "help",
        "version",
        "vs",  # njx.diff's `after`
        "html",  # njx.report_html's `file`
        "modules_to",  # njx.load's one run for modules and thunks
    }
)


class NjxError(RuntimeError):
    """A tool exited non-zero. The message is what it said on stderr (naming the file and
    line at fault); ``returncode`` is its exit status (negative: killed by that signal),
    ``command`` the argument list it ran with, ``stderr`` its whole stderr."""

    def __init__(self, message: str, returncode: int, command: Sequence[str], stderr: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.command = list(command)
        self.stderr = stderr


class NjxNote(UserWarning):
    """A note a tool wrote on stderr: what it left out, repaired or assumed (clock
    alignment, warm-up, rows skipped). ``quiet=True`` passes ``-q`` and there are none."""


class ToolNotFoundError(FileNotFoundError):
    """The njx tools are not installed where this Python looks for them."""


# --- finding the tools -------------------------------------------------------------------


def bin_dir() -> str:
    """The folder holding the njx tools: ``$NJX_BIN_DIR`` if set, else the running
    Python's scripts folder (where the wheel puts them), else the user scheme's, else the
    folder of ``njx-export`` on ``PATH``."""
    return _bin_dir("njx-export")


def _bin_dir(probe: str) -> str:
    env = os.environ.get("NJX_BIN_DIR")
    if env:
        if not os.access(os.path.join(env, probe), os.X_OK):
            raise ToolNotFoundError(f"NJX_BIN_DIR={env}: no executable {probe} there")
        return os.path.abspath(env)
    candidates = [sysconfig.get_path("scripts")]
    with contextlib.suppress(KeyError, ValueError):
        candidates.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    for folder in candidates:
        if folder and os.access(os.path.join(folder, probe), os.X_OK):
            return folder
    found = shutil.which(probe)
    if found:
        return os.path.dirname(os.path.abspath(found))
    raise ToolNotFoundError(
        f"the njx tools are not installed: no {probe} in this Python's scripts folder "
        f"({candidates[0]}) nor on PATH. Install them with `pip install njx-*.whl` (or "
        "`pip install .` in a clone), or set NJX_BIN_DIR to the folder holding them"
    )


def tool_path(tool: str) -> str:
    """The path of one tool (``njx-export``)."""
    folder = bin_dir()
    path = os.path.join(folder, tool)
    if not os.access(path, os.X_OK):
        raise ToolNotFoundError(f"{folder}: no executable {tool} (the njx install is partial)")
    return path


# --- what options a tool has -------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """One long option of a tool: its name and how many values it takes (0: a flag)."""

    long: str
    values: int


_OPTION = re.compile(r"^\s{2,}(?:-[A-Za-z], )?--([a-z][a-z0-9-]*)((?: <[^>]+>(?:\.\.\.)?)*)\s*$")
_ALIAS = re.compile(r"\[alias(?:es)?: ([^\]]+)\]")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_help_cache: Dict[Tuple[str, float], Dict[str, Spec]] = {}
_help_lock = threading.Lock()


def options_of(tool: str) -> Dict[str, Spec]:
    """The long options of ``tool`` by their Python keyword (``program_key``), read from
    its ``--help`` once per installed binary."""
    path = tool_path(tool)
    key = (path, os.stat(path).st_mtime)
    with _help_lock:
        if key in _help_cache:
            return _help_cache[key]
    out = subprocess.run(
        [path, "--help"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    if out.returncode != 0:
        raise NjxError(
            out.stderr.strip() or f"{tool} --help failed",
            out.returncode,
            [path, "--help"],
            out.stderr,
        )
    specs: Dict[str, Spec] = {}
    last: Optional[Spec] = None
    for line in _ANSI.sub("", out.stdout).splitlines():
        m = _OPTION.match(line)
        if m:
            last = Spec(m.group(1), m.group(2).count("<"))
            specs[keyword(last.long)] = last
            continue
        a = _ALIAS.search(line)
        if a and last is not None:
            for alias in a.group(1).split(","):
                alias = alias.strip().lstrip("-")
                if alias:
                    specs.setdefault(keyword(alias), Spec(alias, last.values))
    with _help_lock:
        _help_cache[key] = specs
    return specs


def keyword(long: str) -> str:
    """``--program-key`` → ``program_key``."""
    return long.replace("-", "_")


def check_options(options: Mapping[str, object], tools: Sequence[str]) -> None:
    """TypeError, before any tool runs, for a keyword that names an option the layer sets
    itself, no option of any of ``tools``, or a value the option cannot take (a value for
    a flag, True for an option that takes one)."""
    unknown = []
    for name, value in options.items():
        if name in RESERVED:
            raise TypeError(f"{name}=: the njx Python layer sets --{name.replace('_', '-')} itself")
        having = [t for t in tools if name in options_of(t)]
        if not having:
            unknown.append(name)
        for tool in having:
            arguments(tool, {name: value}, strict=True)
    if unknown:
        raise TypeError(
            f"unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
            + ", ".join(repr(n) for n in unknown)
            + f": no option of {', '.join(sorted(set(tools)))} (see their --help)"
        )


def arguments(tool: str, options: Mapping[str, object], strict: bool) -> List[str]:
    """The command-line options of ``tool`` for keyword ``options``: ``True`` the bare
    flag, ``False``/``None`` nothing, a list or tuple the option repeated, anything else
    its text. Options the tool lacks are left out, or a TypeError when ``strict``."""
    specs = options_of(tool)
    args: List[str] = []
    for name, value in options.items():
        if name in RESERVED:
            raise TypeError(f"{name}=: the njx Python layer sets --{name.replace('_', '-')} itself")
        spec = specs.get(name)
        if spec is None:
            if strict:
                raise TypeError(
                    f"unexpected keyword argument {name!r}: {tool} has no --{name.replace('_', '-')}"
                )
            continue
        if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
            value = bool(value)  # numpy's bool (a DataFrame's cell)
        if value is None or value is False:
            continue
        flag = "--" + spec.long
        if spec.values == 0:
            if value is not True:
                raise TypeError(f"{name}={value!r}: {flag} is a flag, give True or False")
            args.append(flag)
            continue
        if value is True:
            raise TypeError(f"{name}=True: {flag} takes a value")
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if spec.values > 1:
                if not isinstance(v, (list, tuple)) or len(v) != spec.values:
                    raise TypeError(
                        f"{name}=: {flag} takes {spec.values} values, give a tuple of them"
                    )
                args.append(flag)
                args.extend(_text(x) for x in v)
            else:
                if isinstance(v, bool) or v is None:
                    raise TypeError(f"{name}={value!r}: {flag} takes a value")
                args.extend([flag, _text(v)])
    return args


def _text(value: object) -> str:
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        return path if isinstance(path, str) else os.fsdecode(path)
    if isinstance(value, float):
        # float(): numpy's float64 is a float whose repr is `np.float64(0.9)`.
        return repr(float(value))
    return str(value)


# --- inputs ------------------------------------------------------------------------------


_MAGIC = re.compile(r"[*?[]")


def input_paths(paths: Paths, what: str = "input") -> List[str]:
    """``paths`` (one or a list; str or os.PathLike) as a list of existing paths: a pattern
    (``rank*.zip``) that names no file is expanded as the shell would, sorted. A path that
    does not exist is a FileNotFoundError, before any tool runs."""
    if isinstance(paths, (str, os.PathLike)):
        items: Sequence[PathLike] = [paths]
    else:
        items = list(paths)
    out: List[str] = []
    for p in items:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"{what} path {p!r}: give a str or os.PathLike")
        text = os.fspath(p)
        if not isinstance(text, str):
            text = os.fsdecode(text)
        if os.path.exists(text):
            out.append(_safe(text))
            continue
        if _MAGIC.search(text):
            matched = sorted(glob.glob(text))
            if matched:
                out.extend(_safe(m) for m in matched)
                continue
        raise FileNotFoundError(2, f"No such file or directory ({what})", text)
    if not out:
        raise ValueError(f"no {what} paths given")
    return out


def _safe(path: str) -> str:
    # A file named like an option would be read as one.
    return os.path.join(".", path) if path.startswith("-") else path


# --- running -----------------------------------------------------------------------------


def child_env() -> Dict[str, str]:
    """The environment of a tool: this one, less what forces colours on (Jupyter's kernel
    sets CLICOLOR_FORCE and FORCE_COLOR for its children): the notes and messages become
    warnings and exceptions, and escapes in them would be noise."""
    env = dict(os.environ)
    for name in ("CLICOLOR_FORCE", "FORCE_COLOR"):
        env.pop(name, None)
    env["NO_COLOR"] = "1"
    return env


@dataclass(eq=False)
class Job:
    """One tool run: its arguments, where its stdout and stderr go, and its process."""

    argv: List[str]
    stderr_path: str
    stdout_path: Optional[str] = None
    proc: Optional["subprocess.Popen[bytes]"] = None
    returncode: Optional[int] = None
    stderr: str = ""
    notes: List[str] = field(default_factory=list)


@contextlib.contextmanager
def _sigint_held(reraise: bool = True) -> Iterator[None]:
    """SIGINT held back (main thread only) while a child is started and recorded, or while
    children are cleaned up: an interrupt between fork and bookkeeping would leave a child
    no one stops. Re-delivered afterwards when ``reraise``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: List[int] = []
    if signal.getsignal(signal.SIGINT) is None:  # a handler not set from Python: leave it
        yield
        return
    try:
        old = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    except (ValueError, OSError):  # not the main interpreter, or signals unavailable
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if got and reraise:
            signal.raise_signal(signal.SIGINT)


def _stop(procs: Sequence["subprocess.Popen[bytes]"]) -> None:
    """SIGINT to every child still running (the tools remove their staged outputs), then
    SIGKILL after GRACE_S, and every child waited for."""
    alive = [p for p in procs if p.poll() is None]
    for p in alive:
        with contextlib.suppress(ProcessLookupError):
            p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + GRACE_S
    for p in alive:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
    for p in alive:
        p.wait()


def _limit() -> int:
    try:
        return max(2, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(2, os.cpu_count() or 2)


def run_jobs(jobs: Sequence[Job]) -> None:
    """Runs ``jobs`` concurrently (as many at once as this process may use cores), each
    with stdin from /dev/null and stderr into its file. Returns when all succeeded, with
    each job's stderr lines in ``notes``; the first that failed (in the order given) raises
    NjxError once the others are stopped. On any exception, KeyboardInterrupt included,
    every child still running is stopped and waited for before it propagates."""
    pending = list(jobs)
    env = child_env()
    limit = _limit()
    running: List[Job] = []
    started: List["subprocess.Popen[bytes]"] = []
    try:
        failed: Optional[Job] = None
        while (pending or running) and failed is None:
            while pending and len(running) < limit:
                job = pending.pop(0)
                with open(job.stderr_path, "wb") as err, _open_out(job.stdout_path) as out:
                    with _sigint_held():
                        job.proc = subprocess.Popen(
                            job.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env
                        )
                        started.append(job.proc)
                        running.append(job)
            first = running[0]
            assert first.proc is not None
            if len(running) == 1 and not pending:
                # The last one: wait for it without polling (Ctrl-C still interrupts the
                # wait, and the handler below stops it).
                first.proc.wait()
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    first.proc.wait(timeout=0.02)
            for job in list(running):
                assert job.proc is not None
                code = job.proc.poll()
                if code is None:
                    continue
                running.remove(job)
                job.returncode = code
                with open(job.stderr_path, "rb") as f:
                    job.stderr = f.read().decode("utf-8", "replace")
                if code != 0 and (failed is None or jobs.index(job) < jobs.index(failed)):
                    failed = job
        if failed is not None:
            raise _error(failed)  # the others stopped below
        for job in jobs:
            job.notes = [line for line in job.stderr.splitlines() if line.strip()]
    except BaseException:
        with _sigint_held(reraise=False):
            _stop(started)
        raise


def _open_out(path: Optional[str]):  # type: ignore[no-untyped-def]
    if path is None:
        return open(os.devnull, "wb")
    return open(path, "wb")


def _error(job: Job) -> NjxError:
    code = job.returncode if job.returncode is not None else -1
    message = job.stderr.strip()
    if not message:
        tool = os.path.basename(job.argv[0])
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            message = f"{tool} was killed by {name}"
        else:
            message = f"{tool} exited with status {code} and said nothing"
    return NjxError(message, code, job.argv, job.stderr)


@contextlib.contextmanager
def workdir() -> Iterator[str]:
    """A temporary folder for one call's outputs, removed whatever happens."""
    path = tempfile.mkdtemp(prefix="njx-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn_notes(notes: Sequence[str]) -> None:
    """Each note as an NjxNote warning, attributed to the caller's line outside njx."""
    if not notes:
        return
    level = 1
    frame = sys._getframe(0)
    while (
        frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    for note in notes:
        warnings.warn(note, NjxNote, stacklevel=level)
