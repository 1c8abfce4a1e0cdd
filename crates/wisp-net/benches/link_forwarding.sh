#!/usr/bin/env bash
# Forwarding capacity of `wisp link` (needs root and iperf3): iperf3 UDP with 1400-byte
# datagrams from the link's namespace to the host, through a link that offers far more than
# needed (2 Gbit/s, one 1500-byte opportunity every 6 µs) with 20 ms of delay each way.
# Prints, per rate: what iperf3 received, its loss and jitter, and the CPU time per forwarded
# packet of the thread that moves the packets.
#
#   crates/wisp-net/benches/link_forwarding.sh [RATES_MBPS…]     (default: 100 400 700 1000)
#
# Then the long fat link Mahimahi users report on (mahimahi#144: a 700 Mbit/s trace with 80 ms
# each way delivers about 300 Mbit/s): a 700 Mbit/s trace (one 1500-byte opportunity every
# 17,143 ns), 80 ms each way, iperf3 UDP at 700 Mbit/s and one iperf3 TCP (CUBIC) flow for 20 s
# with the first 5 s (slow start over a 160-ms round trip) left out. The TCP buffers are raised
# for the run (net.ipv4.tcp_rmem/tcp_wmem up to 64 MB, restored after) so that the window can
# hold the path's 14 MB: the Linux default of 6 MB would cap the flow at 300 Mbit/s on any link.
# Skip it with LONG_FAT=0.
#
# The receiving socket's buffer is raised to 4 MB (net.core.rmem_max is raised for the run and
# restored): with the default 208 KB the iperf3 server, not the link, drops packets at 400 Mbit/s
# on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rates=("${@:-100 400 700 1000}")
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "needs iperf3" >&2; exit 1; }
cargo build --release -q -p wisp-cli
wisp=target/release/wisp
tmp=$(mktemp -d)
old_rmem=$(sysctl -n net.core.rmem_max)
old_wmem=$(sysctl -n net.core.wmem_max)
old_tcp_rmem=$(sysctl -n net.ipv4.tcp_rmem)
old_tcp_wmem=$(sysctl -n net.ipv4.tcp_wmem)
trap 'sysctl -qw net.core.rmem_max="$old_rmem" net.core.wmem_max="$old_wmem" \
  net.ipv4.tcp_rmem="$old_tcp_rmem" net.ipv4.tcp_wmem="$old_tcp_wmem"; rm -rf "$tmp"' EXIT
sysctl -qw net.core.rmem_max=67108864 net.core.wmem_max=67108864
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

[ "${LONG_FAT:-1}" = 0 ] && exit 0
sysctl -qw net.ipv4.tcp_rmem="4096 131072 67108864" net.ipv4.tcp_wmem="4096 16384 67108864"
awk 'BEGIN { for (i = 1; i <= 58333; i++) printf "%d\n", i * 17143 }' > "$tmp/700mbps.rx"
echo
printf '%-26s %10s %12s %10s %12s\n' "700 Mbit/s trace, 80 ms" Mbit/s "of the trace" cpu_us/pkt late_p99_us
for mode in udp tcp; do
  port=$((20000 + RANDOM % 20000))
  # The namespace's own TCP stack reads the raised sysctls (they are per namespace: set inside).
  iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
  server=$!
  sleep 0.5
  if [ "$mode" = udp ]; then
    client="iperf3 -c \$WISP_LINK_PEER -p $port -u -b 700M -l 1400 -t 20 -O 5 -w 16M --json"
  else
    client="sysctl -qw net.ipv4.tcp_rmem='4096 131072 67108864' net.ipv4.tcp_wmem='4096 16384 67108864'; \
      iperf3 -c \$WISP_LINK_PEER -p $port -t 20 -O 5 --json"
  fi
  "$wisp" link --uplink "$tmp/700mbps.rx" --downlink "$tmp/700mbps.rx" --delay-ms 80 --spin-us 0 -- \
    sh -c "$client > $tmp/c.json" 2> "$tmp/link.err"
  sleep 0.5; kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  python3 - "$tmp/c.json" "$tmp/link.err" "$mode" <<'PY'
import json, re, sys
end = json.load(open(sys.argv[1]))["end"]
c = end["sum_received"] if sys.argv[3] == "udp" else end["sum_received"]
err = open(sys.argv[2]).read()
cpu = re.search(r"\(([0-9.]+) us per packet\)", err).group(1)
late = re.search(r"p99 ([0-9.]+) us", err).group(1)
# The trace offers 700 Mbit/s of IP packets; iperf3 counts payload: UDP 1400 of 1428 bytes,
# TCP 1448 of 1500 (with timestamps).
ip = c["bits_per_second"] / 1e6 * ((1428 / 1400) if sys.argv[3] == "udp" else (1500 / 1448))
print("%-26s %10.1f %11.1f%% %10s %12s" % ("iperf3 " + sys.argv[3], c["bits_per_second"] / 1e6,
      ip / 700 * 100, cpu, late))
PY
done
