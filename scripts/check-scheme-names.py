#!/usr/bin/env python3
"""Checks that no code outside the schemes names a scheme.

A scheme is its module under crates/wisp-core/src/scheme/ and its line in the `schemes!`
registry there; the engine (wisp-sim), the sockets (wisp-net), the command line (wisp-cli) and
the Python bindings (wisp-py) reach schemes through the registry and the contract only. This
script reads the non-test Rust code of those places (comments and `#[cfg(test)]` modules
removed) and reports every

* string literal that is a scheme's name, or a spec of one (`"cbr:rate-kbps=1000"`);
* path through a scheme's module (`scheme::gcc::`, `sprout::`, …) or a scheme's config type
  (`GccConfig`, `SproutConfig`, …);
* variant of the registry's enums (`SchemeConfig::Gcc`, `AnySender::Ukf`, …).

Left out, on purpose, because they are experiments that name the schemes they run, as their
user would on the command line: the schemes' own folder; the papers' run modules
(crates/wisp-sim/src/reproduce/) and renderers (wisp-report); the probing tools' testbed
(crates/wisp-sim/src/probing/: the WBest paper's TCP cross traffic, a Linux 2.6.11 CUBIC);
the path characterisation (crates/wisp-sim/src/sweep.rs: a CBR flow at each rate, by
definition); and the Python package's example Rust controller
(crates/wisp-py/src/controller.rs, `Controller.rust_example_aimd`). Documentation and tests
are not read.

Usage: python3 scripts/check-scheme-names.py   (exit 1 with the places, 0 with a count)
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEME_DIR = ROOT / "crates/wisp-core/src/scheme"
EXCLUDED = [
    SCHEME_DIR,
    ROOT / "crates/wisp-sim/src/reproduce",
    ROOT / "crates/wisp-sim/src/probing",
    ROOT / "crates/wisp-sim/src/sweep.rs",
    ROOT / "crates/wisp-py/src/controller.rs",
]
# wisp-report's renderers of the papers (the registry lists them in lib.rs `papers!`).
PAPER_RENDERERS = {"alfalfa.rs", "gcc_wifi.rs", "kwikr.rs", "mehrotra.rs", "sprout.rs", "wbest.rs"}


def registry():
    """The registry's variants and config types, and the schemes' module names."""
    text = (SCHEME_DIR / "mod.rs").read_text()
    block = re.search(r"^schemes! \{(.*?)^\}", text, re.S | re.M).group(1)
    variants, configs = [], []
    for m in re.finditer(r"(\w+)\(([\w:]+)\)", block):
        variants.append(m.group(1))
        configs.append(m.group(2).split("::")[-1])
    modules = sorted(
        p.stem if p.is_file() else p.name
        for p in SCHEME_DIR.iterdir()
        if (p.suffix == ".rs" and p.stem not in {"mod", "contract", "registry", "params", "opaque"})
        or (p.is_dir())
    )
    return variants, configs, modules


def names():
    """Every scheme name, from the `name: "…"` entries of the schemes' `SchemeInfo`s."""
    found = set()
    for p in SCHEME_DIR.rglob("*.rs"):
        found.update(re.findall(r'\bname:\s*"([a-z0-9-]+)"', p.read_text()))
    return found


def strip(text):
    """The code without comments and without `#[cfg(test)]` items (a module or a function)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("#[cfg(test)]", i):
            # Skip the attribute and the item after it, to its balanced closing brace.
            j = text.find("{", i)
            depth, k = 0, j
            while k < n:
                if text[k] == "{":
                    depth += 1
                elif text[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            out.append("\n" * text.count("\n", i, k + 1))
            i = k + 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def main():
    variants, configs, modules = registry()
    scheme_names = names()
    enums = r"(?:SchemeConfig|AnySender|AnyReceiver|AnyFeedback|AnyFields)"
    patterns = [
        ("variant", re.compile(rf"\b{enums}::({'|'.join(variants)})\b")),
        ("config type", re.compile(rf"\b({'|'.join(configs)})\b")),
        ("scheme module", re.compile(rf"\bscheme::({'|'.join(modules)})\b")),
        ("scheme name", re.compile(r'"([a-z0-9-]+)(?::[^"]*)?"')),
    ]
    hits, read = [], 0
    for crate in sorted((ROOT / "crates").iterdir()):
        for p in sorted((crate / "src").rglob("*.rs")) if (crate / "src").is_dir() else []:
            if any(p.is_relative_to(e) for e in EXCLUDED):
                continue
            if crate.name == "wisp-report" and p.name in PAPER_RENDERERS:
                continue
            read += 1
            code = strip(p.read_text())
            for lineno, line in enumerate(code.splitlines(), 1):
                for what, pat in patterns:
                    for m in pat.finditer(line):
                        if what == "scheme name" and m.group(1) not in scheme_names:
                            continue
                        hits.append(f"{p.relative_to(ROOT)}:{lineno}: {what} {m.group(0)}")
    for h in hits:
        print(h)
    print(
        f"{len(hits)} place(s) name a scheme outside the schemes ({read} files read; "
        f"{len(scheme_names)} names, {len(variants)} variants, {len(configs)} config types, "
        f"{len(modules)} modules searched for)"
    )
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
