#!/usr/bin/env bash
# The README's test command: the Rust tests of the whole workspace, then the Python package's
# (scripts/test-python.sh: a venv under target/, maturin, pytest, numpy, pandas,
# gymnasium, dask[distributed] from PyPI).
# Arguments go to `cargo test` (e.g. scripts/test.sh --locked).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release "$@"
bash scripts/test-python.sh
