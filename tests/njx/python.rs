//! The Python package `njx` (`python/njx`, docs/python.md) and the example notebook, run
//! against the built tools: `tests/python/test_njx.py`, then `examples/notebook.ipynb`
//! executed cell by cell (nbclient). Each test makes a venv in a temporary folder and
//! installs what it needs from PyPI (pandas, pyarrow, polars; nbclient, ipykernel,
//! nbformat), with no pip cache; where that cannot be done (no python3, no PyPI) it says
//! `SKIPPED: …` on stderr and passes. Everything the runs write (njx's temporary folders,
//! the notebook's charts, Jupyter's and IPython's state) stays in that folder.

use crate::common::{exe, tempdir};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Said past the test harness' capture of `eprintln!`: a skip is seen, pass or fail.
fn skipped(why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

fn tail(out: &Output, lines: usize) -> String {
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A venv in `dir` with the first of `choices` (package lists, most wanted first) that pip
/// installs from PyPI: its python, or `None`, said, where none installs.
fn venv(dir: &Path, choices: &[&[&str]], what: &str) -> Option<PathBuf> {
    let Some(python) = ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        skipped(&format!("{what}: no python3 here"));
        return None;
    };
    let venv = dir.join("venv");
    let made = Command::new(python)
        .args(["-m", "venv"])
        .arg(&venv)
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .output()
        .expect("run python3 -m venv");
    if !made.status.success() {
        skipped(&format!(
            "{what}: python3 -m venv fails here: {}",
            tail(&made, 3)
        ));
        return None;
    }
    let mut failed = String::new();
    for packages in choices {
        let out = Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-cache-dir",
            ])
            .args(*packages)
            .env_remove("PYTHONPATH")
            .stdin(Stdio::null())
            .output()
            .expect("run pip");
        if out.status.success() {
            return Some(venv.join("bin/python"));
        }
        failed = format!("pip install {}: {}", packages.join(" "), tail(&out, 3));
    }
    skipped(&format!("{what}: {failed}"));
    None
}

/// `python ARGS` in the repository root with the package on PYTHONPATH and the built
/// tools as NJX_BIN_DIR, everything it writes in `dir`; killed after `limit`.
fn run_python(python: &Path, args: &[&str], dir: &Path, limit: Duration) -> (bool, String) {
    let tools = Path::new(exe("njx-export"))
        .parent()
        .expect("the tools' folder");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let path = format!(
        "{}:{}",
        python.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (stdout, stderr) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(python)
        .args(args)
        .current_dir(repo())
        .env("PATH", path)
        .env("PYTHONPATH", repo().join("python"))
        .env("NJX_BIN_DIR", tools)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("TMPDIR", &tmp)
        .env("JUPYTER_DATA_DIR", dir.join("jupyter/data"))
        .env("JUPYTER_CONFIG_DIR", dir.join("jupyter/config"))
        .env("JUPYTER_RUNTIME_DIR", dir.join("jupyter/runtime"))
        .env("IPYTHONDIR", dir.join("ipython"))
        .env("MPLCONFIGDIR", dir.join("matplotlib"))
        .env_remove("VIRTUAL_ENV")
        .env_remove("PYTHONHOME")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("run python");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = std::fs::read_to_string(&stdout).unwrap_or_default()
        + &std::fs::read_to_string(&stderr).unwrap_or_default();
    // The skips the script said (polars absent, ../shared/data absent), passed on; unittest's
    // verbose lines put them after the test's name.
    for line in text
        .lines()
        .filter_map(|l| l.find("SKIPPED: ").map(|i| &l[i..]))
    {
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    match status {
        Some(s) => (s.success(), text),
        None => (false, format!("killed after {limit:?}\n{text}")),
    }
}

/// tests/python/test_njx.py: the DataFrames field by field against the tools' JSON
/// records, report, report_html, diff, errors, notes and Ctrl-C mid-load.
#[test]
fn the_python_package_passes_its_tests() {
    let dir = tempdir();
    let Some(python) = venv(
        dir.path(),
        &[&["pandas", "pyarrow", "polars"], &["pandas", "pyarrow"]],
        "the njx Python package's tests",
    ) else {
        return;
    };
    let (ok, text) = run_python(
        &python,
        &["tests/python/test_njx.py"],
        dir.path(),
        Duration::from_secs(600),
    );
    assert!(ok, "tests/python/test_njx.py failed:\n{text}");
    assert!(text.contains("\nOK"), "{text}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// The notebook that does nsys-jax's Analysis notebook with njx: every cell runs, in a
/// kernel of the venv, from the repository root.
#[test]
fn the_example_notebook_runs() {
    let dir = tempdir();
    let Some(python) = venv(
        dir.path(),
        &[&["pandas", "pyarrow", "nbclient", "ipykernel", "nbformat"]],
        "examples/notebook.ipynb",
    ) else {
        return;
    };
    let runner = "\
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=300, kernel_name='python3', resources={'metadata': {'path': '.'}}).execute()
errors = [o for c in nb.cells if c.cell_type == 'code' for o in c.get('outputs', []) if o.output_type == 'error']
assert not errors, errors
print(sum(c.cell_type == 'code' for c in nb.cells), 'code cells ran')
";
    let (ok, text) = run_python(
        &python,
        &["-c", runner, "examples/notebook.ipynb"],
        dir.path(),
        Duration::from_secs(600),
    );
    assert!(ok, "examples/notebook.ipynb failed:\n{text}");
    assert!(text.contains("code cells ran"), "{text}");
}
