"""njx's build backend (pyproject.toml): maturin's, after one check.

`pip install .` builds the njx tools with Rust's cargo. Where cargo is not on PATH, maturin
would ask pip for a package that downloads Rust ("puccinialin"); on a cluster node without
the network that fails with a message about a package the user never heard of. This backend
says instead what is missing and what to do, before pip fetches anything. Everything else is
maturin's own PEP 517 backend, imported only once pip has installed it.

NJX_FETCH_RUST=1 keeps maturin's way (a Rust toolchain downloaded for this build only).
"""

import os
import shutil

# 1.9 or newer: older ones write the wheel's data folder (the man pages) as `njx.data/` at
# its root, which pip installs into site-packages instead of share/man.
MATURIN = "maturin>=1.9,<2"

NO_RUST = """
njx: `pip install .` builds the njx tools from source with Rust's cargo, and there is no
`cargo` on PATH. Either:
  - install Rust (https://rustup.rs), open a new shell and run `pip install .` again;
  - or, where no Rust can be installed (a cluster node, offline), install a wheel built
    elsewhere, on a Linux machine with Rust:
        pip wheel . -w dist -C maturin.build-args="--compatibility manylinux_2_28 --zig"
    then, here: pip install njx-*.whl  (docs/install.md: "Wheels for clusters");
  - or, with the network, let the build fetch a Rust toolchain for this install only:
        NJX_FETCH_RUST=1 pip install .
"""


def _requires():
    if shutil.which("cargo"):
        return [MATURIN]
    if os.environ.get("NJX_FETCH_RUST"):
        return [MATURIN, "puccinialin"]
    raise SystemExit(NO_RUST)


def get_requires_for_build_wheel(config_settings=None):
    return _requires()


def get_requires_for_build_editable(config_settings=None):
    return _requires()


def get_requires_for_build_sdist(config_settings=None):
    # An sdist is the sources: no Rust needed to make it.
    return [MATURIN]


def _maturin():
    import maturin

    return maturin


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _maturin().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _maturin().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _maturin().build_sdist(sdist_directory, config_settings)
