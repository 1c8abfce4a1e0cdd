#!/usr/bin/env bash
# The README's test command: the Rust tests of the whole workspace, then the Python package's
# (scripts/test-python.sh: a venv under target/, maturin, pytest, numpy, pandas,
# gymnasium, dask[distributed] from PyPI).
#
# VP8 (libvpx) is optional: when pkg-config finds libvpx (Debian's libvpx-dev and pkg-config)
# the tests build with `--features wisp-cli/vp8` and run the VP8 tests; otherwise they skip
# with a message. In CI (CI=true) libvpx is required. The tests that need root, network
# namespaces or tools (iproute2, ping, iperf3, tshark, Go, Chromium) likewise skip with a message
# elsewhere and fail in CI.
# Arguments go to `cargo test` (e.g. scripts/test.sh --locked).
set -euo pipefail
cd "$(dirname "$0")/.."
features=()
if command -v pkg-config >/dev/null && pkg-config --exists vpx; then
  features=(--features wisp-cli/vp8)
elif [ "${CI:-}" = true ]; then
  echo "test: CI runs the VP8 tests, but pkg-config does not find libvpx (apt-get install libvpx-dev pkg-config)" >&2
  exit 1
else
  echo "test: libvpx not found (pkg-config vpx): VP8 is left out and its tests skip (apt-get install libvpx-dev pkg-config to run them)" >&2
fi
# Say up front what will skip here (each test also says so; in CI a missing piece fails).
if [ "$(id -u)" != 0 ] || [ ! -e /dev/net/tun ]; then
  echo "test: not root (or no /dev/net/tun): the network-namespace tests (wisp link, interop, real paths) skip" >&2
else
  missing=()
  for tool in ip ping iperf3 tshark dumpcap setpriv go chromium; do
    if [ "$tool" = go ] && [ -x /usr/local/go/bin/go ]; then continue; fi
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  if ((${#missing[@]})); then
    echo "test: not installed: ${missing[*]}: the network tests that use them skip (.ci/run installs them)" >&2
  fi
fi
# test-python.sh builds the `wisp` binary the Python tests compare against with the same features.
export WISP_CARGO_FEATURES="${features[*]}"
# The tests that hold the real-time lock (network, interop, real sockets) log how long they
# held it; the ten slowest are printed after the Rust tests.
times=target/tmp/real-time-tests.tsv
rm -f "$times"
cargo test --workspace --release "${features[@]}" "$@"
if [ -s "$times" ]; then
  echo "test: the ten slowest real-time tests (seconds holding the lock; all in $times):" >&2
  sort -rn "$times" | head -10 | cut -f1,2 >&2
fi
# `cargo test` has just built the `wisp` binary (the CLI's integration tests run it), with the
# features and dependency features of the whole test build: the Python tests use that one
# rather than rebuild it for `-p wisp-cli` alone (a different feature unification, a minute).
# With arguments (a package or a filter) it may not have: test-python.sh builds it then.
if [ "$#" -eq 0 ]; then
  export WISP_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/wisp"
fi
bash scripts/test-python.sh
