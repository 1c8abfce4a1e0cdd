"""Shared fixtures: the repository root and the `wisp` binary the tests compare against."""

from __future__ import annotations

import json
import os
import subprocess
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
