#!/usr/bin/env bash
# Forwarding capacity of `wisp link` (needs root and iperf3): iperf3 UDP with 1400-byte
# datagrams from the link's namespace to the host, through a link that offers far more than
# needed (2 Gbit/s, one 1500-byte opportunity every 6 µs) with 20 ms of delay each way.
# Prints, per rate: what iperf3 received, its loss and jitter, and the CPU time per forwarded
# packet of the thread that moves the packets.
#
#   crates/wisp-net/benches/link_forwarding.sh [RATES_MBPS…]     (default: 100 400 600)
#
# The receiving socket's buffer is raised to 4 MB (net.core.rmem_max is raised for the run and
# restored): with the default 208 KB the iperf3 server, not the link, drops packets at 400 Mbit/s
# on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rates=("${@:-100 400 600}")
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "needs iperf3" >&2; exit 1; }
cargo build --release -q -p wisp-cli
wisp=target/release/wisp
tmp=$(mktemp -d)
old_rmem=$(sysctl -n net.core.rmem_max)
trap 'sysctl -qw net.core.rmem_max="$old_rmem"; rm -rf "$tmp"' EXIT
sysctl -qw net.core.rmem_max=16777216
awk 'BEGIN { for (i = 1; i <= 166666; i++) print i * 6000 }' > "$tmp/2gbps.rx"
printf '%-6s %10s %10s %9s %10s %12s\n' Mbit/s received lost jitter_ms cpu_us/pkt late_p99_us
for rate in ${rates[*]}; do
  port=$((20000 + RANDOM % 20000))
  iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
  server=$!
  sleep 0.5
  "$wisp" link --uplink "$tmp/2gbps.rx" --downlink "$tmp/2gbps.rx" --spin-us 0 -- \
    sh -c "iperf3 -c \$WISP_LINK_PEER -p $port -u -b ${rate}M -l 1400 -t 10 -w 4M --json > $tmp/c.json" \
    2> "$tmp/link.err"
  sleep 0.5; kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  python3 - "$tmp/c.json" "$tmp/link.err" "$rate" <<'PY'
import json, re, sys
c = json.load(open(sys.argv[1]))["end"]["sum_received"]
err = open(sys.argv[2]).read()
cpu = re.search(r"\(([0-9.]+) us per packet\)", err).group(1)
late = re.search(r"p99 ([0-9.]+) us", err).group(1)
print("%-6s %10.1f %10s %9.3f %10s %12s" % (sys.argv[3], c["bits_per_second"] / 1e6,
      "%d/%d" % (c["lost_packets"], c["packets"]), c["jitter_ms"], cpu, late))
PY
done
