#!/usr/bin/env python3
"""Synthetic partial results for N ranks, made by renumbering the devices of real ones
(issue 41: reducing 10,000 partials without 28 GB of synthetic archives and 40 minutes of
map steps on 2 cores).

Usage: scripts/renumber-partials.py SRC_DIR OUT_DIR N [SUFFIX...]

SRC_DIR holds the map step's partial results of at least 12 synthetic ranks made by
`examples/gen_ranks.rs` (as `scripts/bench-scale.sh` leaves them in
target/scale/16/partials/: rankRRRR.zip.report, rankRRRR.zip.thunks). There rank r is a
copy of source archive r mod 4 whose launcher thread is renamed to device r, so the
partials of ranks r and r + 4 differ only where a device number or the rank's file name
is written. This script learns those places from each such pair (every differing number
must differ by exactly 4, every differing string or key only by the rank's name, else
it stops), checks the rule by remaking rank r + 8 from rank r and comparing it with the
real one, and writes OUT_DIR/rankDDDDD.zip.SUFFIX for d in 0..N: source r = d mod 4
with d written at every device place and `rankDDDDD` for the rank's name (SUFFIX
defaults to report and thunks). The output is gzip-compressed JSON as njx writes it,
the gzip header naming `njx_partial.json`.

Each rank keeps its source's first module start, so ranks differ by device: njx's rank
identity (device, first start) tells them apart, as it would real ranks of one run.
"""

import gzip
import json
import os
import sys


# Stands for the source rank's name in the map keys recorded, so that a key can be found
# again after it was renamed for the previous rank made.
name_of_source_marker = "\0source\0"


def load(path):
    with gzip.open(path, "rb") as f:
        return json.loads(f.read())


def places(a, b, name_a, name_b, path=()):
    """The places where partials a and b differ: ("num", path) for a device number,
    ("str", path) for a string holding the rank's name, ("key", path, key) for a map key
    holding it. Raises ValueError for any other difference."""
    out = []

    def walk(x, y, p):
        if type(x) is not type(y):
            raise ValueError(f"{'/'.join(map(str, p))}: types differ")
        if isinstance(x, dict):
            kx, ky = list(x), list(y)
            if len(kx) != len(ky):
                raise ValueError(f"{'/'.join(map(str, p))}: key counts differ")
            for k1, k2 in zip(sorted(kx), sorted(ky, key=lambda k: k.replace(name_b, name_a))):
                if k1 != k2:
                    if k1.replace(name_a, name_b) != k2:
                        raise ValueError(f"{'/'.join(map(str, p))}: keys {k1} and {k2}")
                    out.append(("key", p, k1))
                walk(x[k1], y[k2], p + (k1,))
        elif isinstance(x, list):
            if len(x) != len(y):
                raise ValueError(f"{'/'.join(map(str, p))}: lengths differ")
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, p + (i,))
        elif x != y:
            if isinstance(x, bool) or not isinstance(x, (int, str)):
                raise ValueError(f"{'/'.join(map(str, p))}: {x!r} and {y!r}")
            if isinstance(x, int):
                if y - x != 4:
                    raise ValueError(f"{'/'.join(map(str, p))}: {x} and {y} (not 4 apart)")
                out.append(("num", p))
            elif x.replace(name_a, name_b) != y:
                raise ValueError(f"{'/'.join(map(str, p))}: {x!r} and {y!r}")
            else:
                out.append(("str", p))

    walk(a, b, path)
    return out


def parent(doc, p):
    for k in p:
        doc = doc[k]
    return doc


def renumber(doc, spots, name_from, device, name_to):
    """Writes `device` and `name_to` at the places, in place: `doc` last named its rank
    `name_from` (the keys holding it are found through it, then renamed)."""
    for spot in spots:
        if spot[0] == "num":
            p = spot[1]
            parent(doc, p[:-1])[p[-1]] = device
        elif spot[0] == "str":
            p = spot[1]
            holder = parent(doc, p[:-1])
            holder[p[-1]] = holder[p[-1]].replace(name_from, name_to)
    for spot in spots:
        if spot[0] == "key":
            holder = parent(doc, spot[1])
            key = spot[2]
            current = key.replace(name_of_source_marker, name_from)
            holder[current.replace(name_from, name_to)] = holder.pop(current)



def dump(doc):
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="njx_partial.json", mode="wb", fileobj=raw,
                           compresslevel=1, mtime=0) as f:
            f.write(data)
    os.replace(tmp, path)


class Template:
    """Source rank r's partial with the places that name its device and rank."""

    def __init__(self, src, r, suffix):
        self.name = f"rank{r:04d}"
        a = load(os.path.join(src, f"rank{r:04d}.zip.{suffix}"))
        b = load(os.path.join(src, f"rank{r + 4:04d}.zip.{suffix}"))
        spots = places(a, b, self.name, f"rank{r + 4:04d}")
        if not spots:
            raise ValueError("the partials of ranks r and r + 4 are identical")
        # Keys are recorded with the source's name replaced by a marker, so that they can
        # be found again after being renamed.
        self.spots = [
            (s[0], s[1], s[2].replace(self.name, name_of_source_marker)) if s[0] == "key" else s
            for s in spots
        ]
        self.doc = a
        self.current = self.name

    def make(self, device, name):
        renumber(self.doc, self.spots, self.current, device, name)
        self.current = name
        return dump(self.doc)


def main(argv):
    if len(argv) < 4 or not argv[3].isdigit():
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src, out, n = argv[1], argv[2], int(argv[3])
    suffixes = argv[4:] or ["report", "thunks"]
    os.makedirs(out, exist_ok=True)
    for suffix in suffixes:
        templates = []
        for r in range(4):
            try:
                t = Template(src, r, suffix)
            except (OSError, ValueError) as e:
                print(f"renumber-partials: rank {r} ({suffix}): {e}", file=sys.stderr)
                return 1
            # The check: rank r + 8 remade from rank r equals the real one.
            made = json.loads(t.make(r + 8, f"rank{r + 8:04d}"))
            real = load(os.path.join(src, f"rank{r + 8:04d}.zip.{suffix}"))
            if made != real:
                print(f"renumber-partials: rank {r + 8} ({suffix}) remade from rank {r} "
                      "differs from the real one", file=sys.stderr)
                return 1
            templates.append(t)
        for d in range(n):
            name = f"rank{d:05d}"
            write(os.path.join(out, f"{name}.zip.{suffix}"), templates[d % 4].make(d, name))
            if d % 1000 == 999:
                print(f"renumber-partials: {suffix}: {d + 1} of {n}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
