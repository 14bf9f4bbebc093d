#!/usr/bin/env python3
"""The largest files and functions of src/ (issue 29: one job per file, functions short
enough to read at once). Functions are counted from their `fn` line to the line of the
brace that closes them, test modules (`#[cfg(test)]` to the end of the file) left out.

Usage (from the repository root):  scripts/sizes.py [N]      (default N = 10)
"""
import pathlib
import re
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
files, fns = [], []
for path in sorted(pathlib.Path("src").rglob("*.rs")):
    lines = path.read_text().split("\n")
    cut = next((i for i, l in enumerate(lines) if l.strip() == "#[cfg(test)]"), len(lines))
    lines = lines[:cut]
    files.append((len(lines), str(path)))
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:pub(?:\([a-z]+\))? )?(?:const )?(?:async )?fn ([a-zA-Z0-9_]+)", line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = re.sub(r'"(?:\\.|[^"\\])*"|//.*', "", lines[j])
            code = re.sub(r"'(?:\\.|[^'\\])'", "", code)
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                fns.append((j - i + 1, f"{path}:{i + 1} {m.group(1)}"))
                break
            if not opened and code.rstrip().endswith(";"):
                break
print(f"largest files (lines, tests left out), of {len(files)}:")
for size, name in sorted(files, reverse=True)[:n]:
    print(f"  {size:5}  {name}")
print(f"longest functions (lines), of {len(fns)}:")
for size, name in sorted(fns, reverse=True)[:n]:
    print(f"  {size:5}  {name}")
