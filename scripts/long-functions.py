#!/usr/bin/env python3
"""Lists the non-test Rust functions longer than a limit (default 100 lines), longest first.

A function runs from its `fn` line to the line of its closing brace; functions inside a
`#[cfg(test)]` module, under `tests/` or `benches/`, and in `fuzz/` are left out.

    python3 scripts/long-functions.py           # over 100 lines
    python3 scripts/long-functions.py --top 5   # the five longest, whatever their length
Exits 1 when a function is over the limit (and --top is not given).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def strip(line: str) -> str:
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def item_end(lines, j):
    """The last line of the item starting at line `j` (at its closing brace, or at its `;` when
    it has no body), and whether it has a body."""
    d, opened, n = 0, False, len(lines)
    while j < n:
        s = strip(lines[j])
        d += s.count("{") - s.count("}")
        opened |= "{" in s
        if opened and d <= 0:
            break
        if not opened and s.rstrip().endswith(";"):
            break
        j += 1
    return j, opened


def functions(path: Path):
    lines = path.read_text().splitlines()
    i, n = 0, len(lines)
    test_depth = None
    depth = 0
    while i < n:
        line = lines[i]
        if re.match(r"\s*#\[cfg\(test\)\]", line):
            # Skip the item that follows (a test module or function) wholly.
            i = item_end(lines, i + 1)[0] + 1
            continue
        m = FN.match(line)
        if m:
            j, opened = item_end(lines, i)
            if opened:
                yield m.group(1), i + 1, j - i + 1
            i += 1
            continue
        i += 1


def main() -> int:
    args = sys.argv[1:]
    top = None
    limit = 100
    if "--top" in args:
        top = int(args[args.index("--top") + 1])
    if "--limit" in args:
        limit = int(args[args.index("--limit") + 1])
    found = []
    for f in sorted(Path("crates").rglob("*.rs")):
        parts = f.parts
        if "tests" in parts or "benches" in parts or "fuzz" in parts or "target" in parts:
            continue
        for name, line, length in functions(f):
            found.append((length, f"{f}:{line}", name))
    found.sort(reverse=True)
    if top is not None:
        for length, where, name in found[:top]:
            print(f"{length:5} {where} {name}")
        return 0
    over = [x for x in found if x[0] > limit]
    for length, where, name in over:
        print(f"{length:5} {where} {name}")
    print(f"{len(over)} non-test functions over {limit} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
