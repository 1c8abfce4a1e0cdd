#!/usr/bin/env python3
"""Finds import cycles between the modules of each crate in the workspace.

A module is a source file (`src/a/b.rs` or `src/a/b/mod.rs` is `a::b`). Module M uses module N
when M's code (comments and doc lines left out, and its `#[cfg(test)] mod tests` block too)
names a path `crate::…`, `super::…` or `self::…` that resolves to N or to an item inside N.
Checked twice: between files, and between each crate's top-level modules (`scheme` and `video`
of wisp-core, say: a file of one using the other and a file of the other using the one is a
cycle there). Prints each cycle (a strongly connected set of two or more modules) with the edges
that tie it, and exits 1 if there is any; exits 0 with "no cycles" otherwise.

    python3 scripts/check-module-cycles.py            # every crate under crates/
    python3 scripts/check-module-cycles.py crates/wisp-sim
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")


def modules(src: Path) -> dict[tuple[str, ...], Path]:
    out = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("").parts
        if rel[-1] in ("mod", "lib", "main"):
            rel = rel[:-1]
        out[tuple(rel)] = f
    return out


def code_of(text: str) -> str:
    """The code: no comments, no string literals, no test module."""
    text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def resolve(mods: dict, here: tuple[str, ...], is_dir: bool, root: str, rest: list[str]):
    if root == "crate":
        base: tuple[str, ...] = ()
    else:
        # A file module's `self` is itself; a mod.rs's `self` is its folder's module.
        base = here
        if root == "super":
            base = here[:-1]
    path = base + tuple(rest)
    while path and path not in mods:
        path = path[:-1]
    return path


def edges_of(crate: Path) -> dict[tuple[str, ...], dict[tuple[str, ...], set[str]]]:
    src = crate / "src"
    mods = modules(src)
    graph: dict = {m: {} for m in mods}
    for m, f in mods.items():
        code = code_of(f.read_text())
        refs = []
        for g in GROUP.finditer(code):
            prefix = [p for p in g.group(2).split("::") if p]
            for item in re.split(r"[,\s]+", re.sub(r"\{|\}", " ", g.group(3))):
                parts = [p for p in item.split("::") if p and p != "self"]
                if parts:
                    refs.append((g.group(1), prefix + parts))
        for p in PATH.finditer(code):
            refs.append((p.group(1), [x for x in p.group(2).split("::") if x]))
        for root, rest in refs:
            target = resolve(mods, m, f.name == "mod.rs", root, rest)
            if target and target != m and target[: len(m)] != m and m[: len(target)] != target:
                graph[m].setdefault(target, set()).add("::".join(rest[len(target) - (0 if root == "crate" else len(m) - (1 if root == "super" else 0)):]) or "*")
    return graph


def cycles(graph) -> list[list]:
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def main() -> int:
    crates = [Path(a) for a in sys.argv[1:]] or sorted(p.parent for p in Path("crates").glob("*/Cargo.toml"))
    found = 0
    for crate in crates:
        files = edges_of(crate)
        top: dict = {}
        for a, targets in files.items():
            top.setdefault(a[:1], {})
            for b in targets:
                if a[:1] != b[:1]:
                    top[a[:1]].setdefault(b[:1], set())
                    top.setdefault(b[:1], {})
        for level, graph in (("files", files), ("top-level modules", top)):
            for comp in cycles(graph):
                found += 1
                names = ["::".join(m) or "(root)" for m in comp]
                print(f"{crate.name}: cycle between {level} {', '.join(names)}")
                for a in comp:
                    for b in comp:
                        if b in graph[a]:
                            print(f"  {'::'.join(a) or '(root)'} -> {'::'.join(b) or '(root)'}")
    if found:
        return 1
    print(f"no cycles between the modules of {len(crates)} crate(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
