#!/usr/bin/env bash
# Checks njx-combine against the peer, NVIDIA JAX-Toolbox's nsys-jax-combine, on real
# archives (default: the four pax archives in ../shared/data). Needs the peer installed:
# a Python whose `import nsys_jax` works (NJX_PEER_PYTHON, default python3; set PYTHONPATH
# to .github/container/nsys_jax of a JAX-Toolbox checkout if it is not installed). Not run
# by CI. Checks, exiting 1 on any mismatch:
#  1. the peer's own loaders on the extracted njx-combine archive: load_profiler_data
#     gives the same module, thunk and communication frames (DataFrame.equals) as on the
#     extracted nsys-jax-combine archive, and xla_module_metadata gives the same HLO
#     protos (serialized, per profile where they differ) for every program the module
#     frame names;
#  2. the member lists (name, size, CRC-32, compression) of the two archives are equal,
#     in the same order (both write inputs in the order given, members in archive order;
#     the order differs only where the inputs are not given sorted);
#  3. njx's own tools read it: `njx-export --table modules|thunks` of the combined archive
#     equals that of the inputs (records sorted: the order of profiles within one archive
#     is the profile names'), and so does `njx-modules`.
#
# Usage (from anywhere):  scripts/check-combine.sh [ARCHIVE.zip...]
#
# Environment: NJX_BIN=DIR  binaries (default: target/release, built first);
#              NJX_PEER_PYTHON  Python with nsys_jax importable (default: python3).

set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
    set -- ../shared/data/pax_fsdp4_4proc/*.zip
    [ -e "$1" ] || { echo "no archives given and ../shared/data absent: skipped"; exit 0; }
fi
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${NJX_BIN:-}
if [ -z "$BIN" ]; then
    cargo build --release --quiet --bin njx-combine --bin njx-export --bin njx-modules
    BIN=$TARGET/release
fi
PY=${NJX_PEER_PYTHON:-python3}
"$PY" -c 'import nsys_jax' 2>/dev/null || {
    echo "check-combine: the peer (Python package nsys_jax) is not importable by $PY" >&2
    exit 2
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN/njx-combine" -q -o "$work/njx.zip" "$@"
"$PY" -c 'import sys; from nsys_jax.scripts.nsys_jax_combine import main; sys.argv[0] = "nsys-jax-combine"; main()' \
    -o "$work/peer.zip" "$@" > /dev/null
mkdir "$work/njx" "$work/peer"
(cd "$work/njx" && unzip -q ../njx.zip)
(cd "$work/peer" && unzip -q ../peer.zip)

status=0
"$PY" - "$work" <<'PY' || status=1
import pathlib, sys, zipfile
from nsys_jax import load_profiler_data, xla_module_metadata

work = pathlib.Path(sys.argv[1])
ok = True

def members(path):
    return [(i.filename, i.file_size, i.CRC, i.compress_type)
            for i in zipfile.ZipFile(path).infolist()]

a, b = members(work / "njx.zip"), members(work / "peer.zip")
same_set, same_order = sorted(a) == sorted(b), a == b
print(f"members: njx {len(a)}, nsys-jax-combine {len(b)}; equal {same_set}, same order {same_order}")
if not same_set:
    ok = False
    print("  only in njx:", sorted(set(a) - set(b))[:5])
    print("  only in nsys-jax-combine:", sorted(set(b) - set(a))[:5])

data = {k: load_profiler_data(work / k, frames={"module", "thunk", "communication"})
        for k in ("njx", "peer")}
for frame in ("module", "thunk", "communication"):
    x, y = getattr(data["njx"], frame), getattr(data["peer"], frame)
    equal = x.equals(y)
    print(f"load_profiler_data().{frame}: {len(x)} rows from njx-combine, {len(y)} from "
          f"nsys-jax-combine; equal {equal}")
    ok &= equal

ids = sorted({p for p in data["peer"].module.index.get_level_values("ProgramId")
              if p != "unknown"})

def serialized(meta):
    protos = meta._protos if hasattr(meta, "_protos") else {None: meta}
    return {k: v.proto().SerializeToString() for k, v in protos.items()}

for pid in ids:
    x = serialized(xla_module_metadata(pid, prefix=work / "njx", policy="all"))
    y = serialized(xla_module_metadata(pid, prefix=work / "peer", policy="all"))
    if x != y:
        ok = False
        print(f"xla_module_metadata({pid}): the HLO protos differ")
print(f"xla_module_metadata: {len(ids)} programs loaded from both, protos compared")
sys.exit(0 if ok else 1)
PY

for t in modules thunks; do
    if cmp -s <("$BIN/njx-export" -q --table "$t" "$work/njx.zip" | sort) \
              <("$BIN/njx-export" -q --table "$t" "$@" | sort); then
        echo "njx-export --table $t: the combined archive's records equal the inputs'"
    else
        echo "njx-export --table $t: the combined archive's records DIFFER from the inputs'"
        status=1
    fi
done
if cmp -s <("$BIN/njx-modules" -q --format csv "$work/njx.zip") \
          <("$BIN/njx-modules" -q --format csv "$@"); then
    echo "njx-modules: the combined archive's summary equals the inputs'"
else
    echo "njx-modules: the combined archive's summary DIFFERS from the inputs'"
    status=1
fi
exit $status
