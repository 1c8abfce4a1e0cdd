#!/usr/bin/env bash
# The Python tests: builds the `wisp` package (crates/wisp-py) as an abi3 wheel, installs it in a
# virtual environment with maturin, pytest, numpy, pandas, gymnasium, dask[distributed] and pyarrow
# (the optional Arrow output) from PyPI, and runs pytest on crates/wisp-py/tests. Works on a fresh machine with Python >= 3.10 (and its venv module) and
# Rust. The venv lives in $CARGO_TARGET_DIR (default target/)/py-venv and is reused when present;
# WISP_PY_VENV chooses another place, PYTHON another interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="${WISP_PY_VENV:-$target/py-venv}"
python="${PYTHON:-python3}"

command -v "$python" >/dev/null || { echo "test-python: $python not found (Python >= 3.10 needed)" >&2; exit 1; }
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  { echo "test-python: $("$python" --version) is older than 3.10" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
  echo "test-python: creating $venv"
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7" numpy pandas \
  "gymnasium>=0.29" "dask[distributed]>=2023.1" "pyarrow>=10"

# The tests compare against the `wisp` binary (with the features scripts/test.sh chose).
# shellcheck disable=SC2086
# scripts/test.sh passes the binary its `cargo test` built (WISP_BIN); alone, this builds it.
if [ -z "${WISP_BIN:-}" ] || [ ! -x "$WISP_BIN" ]; then
  cargo build --release -p wisp-cli ${WISP_CARGO_FEATURES:-}
  export WISP_BIN="$target/release/wisp"
fi

wheels="$target/wheels"
rm -f "$wheels"/wisp-*.whl
"$venv/bin/maturin" build --release --manifest-path crates/wisp-py/Cargo.toml --out "$wheels"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheels"/wisp-*.whl

set +e
"$venv/bin/python" -m pytest crates/wisp-py/tests -q -p no:cacheprovider "$@"
rc=$?
set -e
echo "test-python: $((SECONDS - start)) s"
if [ "$rc" -eq 5 ]; then
  echo "test-python: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
