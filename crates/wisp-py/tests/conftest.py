"""Shared fixtures: the repository root and the `wisp` binary the tests compare against."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _binary() -> Path:
    if "WISP_BIN" in os.environ:
        return Path(os.environ["WISP_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "wisp"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs the `wisp` binary in the repository root (without $WISP_SEED, as the Python calls
    below run without it); returns (exit code, stdout, stderr)."""
    binary = _binary()
    if not binary.is_file():
        pytest.fail(
            f"{binary} not found: build it with `cargo build --release -p wisp-cli` "
            "(scripts/test-python.sh does) or set WISP_BIN"
        )
    env = {k: v for k, v in os.environ.items() if k != "WISP_SEED"}

    def run(*args: str) -> tuple[int, str, str]:
        p = subprocess.run(
            [str(binary), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative trace paths resolve from the repository root, as in the README's examples."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("WISP_SEED", raising=False)


def cli_json(cli, *args: str) -> Any:
    code, out, err = cli(*args)
    assert code == 0, f"wisp {' '.join(args)} failed ({code}): {err}"
    return json.loads(out)


#: The address space of a `capped` child: 1.5 GB.
_CHILD_LIMIT = 1536 * 2**20


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_LIMIT, _CHILD_LIMIT))


@pytest.fixture(scope="session")
def capped():
    """Runs Python code after `import wisp` in a child process whose address space is capped at
    1.5 GB, in the repository root; returns its stdout and fails the test if the child died. For
    input that used to abort the interpreter by allocating gigabytes: without the fix the test
    fails (the child dies) instead of taking the machine's memory."""

    def run(code: str) -> str:
        p = subprocess.run(
            [sys.executable, "-c", "import wisp\n" + textwrap.dedent(code)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_cap,
        )
        assert p.returncode == 0, f"the child died ({p.returncode}): {p.stderr[-2000:]}"
        return p.stdout

    return run
