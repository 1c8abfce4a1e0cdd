#!/usr/bin/env python3
"""wisp's 802.11 medium beside ns-3's wifi module: saturation goodput and wall time.

The same saturation scenarios run in both simulators: N stations, always backlogged, send
1472-byte UDP payloads to an AP that sends nothing but Acks.

- 11a and 11g (ERP-OFDM, short slot) at 54 Mbit/s, DCF (non-QoS stations), N = 1, 5, 10, 20, 50;
- 11n at 5 GHz, HT20 MCS 7 (65 Mbit/s, long GI), A-MPDU with BlockAck, QoS stations, N = 10.

Prints one markdown table (aggregate UDP goodput, the gap, wall times, the speed-up) and exits 0.

    python3 scripts/compare-ns3.py            # ns-3 10 s per case (about 2 CPU minutes)
    python3 scripts/compare-ns3.py --quick    # N = 1 and 10 only, ns-3 2 s per case

ns-3 (PyPI `ns3` 3.44, its Python bindings) is installed on first use in its own virtual
environment, target/ns3-venv (a few minutes; importing it takes a minute or more); it is not a
dependency of wisp. wisp is target/release/wisp (built with cargo if missing), run as
`wisp wifi bianchi … --json`.

The configurations match: slot 9 µs, SIFS 16 µs (11a, 11n-5) or 10 µs plus the 6-µs signal
extension (11g), CWmin 15, CWmax 1023, AIFSN 2 (DIFS; for the QoS stations of the 11n case too,
as `wisp wifi bianchi --access edca` has it), no RTS/CTS, no fragmentation, unlimited retries;
the MSDU is 1472 + 8 (UDP) + 20 (IPv4) bytes, the MPDU adds LLC/SNAP 8, the MAC header 24 (QoS
data: 26) and the FCS 4; data at 54 Mbit/s (HT MCS 7), the Ack (BlockAck) at 24 Mbit/s, the
highest basic rate not above the data rate. ns-3 side: ad hoc MACs (no beacons, no association;
node 0 is the AP, a UDP sink), ConstantRateWifiManager with DataMode and ControlMode, the ARP
caches filled before the start, the YANS channel with its default log-distance loss and
constant-speed propagation delay, the stations on a 0.5-m circle around the AP: inside the loss
model's 1-m reference distance every node hears every other at the same power, as in wisp's
single collision domain (no capture, no frame errors). Each station's UDP client offers twice
its share of the channel; goodput is counted at the AP's sink after a 1-s warm-up.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NS3_PACKAGE = "ns3==3.44.post0"
PAYLOAD = 1472  # UDP payload bytes
MSDU = PAYLOAD + 8 + 20  # the IP packet wisp queues
WARMUP_S = 1.0

# (name, wisp arguments, ns-3 settings). `capacity` is a rough channel capacity in Mbit/s: each
# ns-3 station offers twice capacity / N.
PHYS = {
    "11a": {
        "wisp": ["--std", "11a", "--rate-mbps", "54"],
        "standard": "WIFI_STANDARD_80211a",
        "band": "BAND_5GHZ",
        "data": "OfdmRate54Mbps",
        "control": "OfdmRate24Mbps",
        "capacity": 32.0,
    },
    "11g": {
        "wisp": ["--std", "11g", "--rate-mbps", "54"],
        "standard": "WIFI_STANDARD_80211g",
        "band": "BAND_2_4GHZ",
        "data": "ErpOfdmRate54Mbps",
        "control": "ErpOfdmRate24Mbps",
        "capacity": 32.0,
        "slot_us": 9,
    },
    "11n-5 MCS 7 A-MPDU": {
        "wisp": ["--std", "11n-5", "--rate-mbps", "65", "--access", "edca", "--ampdu"],
        "standard": "WIFI_STANDARD_80211n",
        "band": "BAND_5GHZ",
        "data": "HtMcs7",
        "control": "OfdmRate24Mbps",
        "capacity": 65.0,
        "be_aifsn": 2,
    },
}

# Counters read from ns-3's trace sources, in C++ (a Python callback per frame would be slow).
NS3_PROBE = r"""
#include "ns3/wifi-module.h"
namespace wisp_probe {
uint64_t data_ppdus = 0, data_mpdus = 0, acks = 0, rx_errors = 0;
int64_t data_ns = 0, ack_ns = 0;
ns3::WifiPhyBand band = ns3::WIFI_PHY_BAND_5GHZ;
void Reset() { data_ppdus = data_mpdus = acks = rx_errors = 0; }
void OnTx(std::string, ns3::WifiConstPsduMap psdus, ns3::WifiTxVector tx, double) {
    for (auto& [id, psdu] : psdus) {
        const auto& h = psdu->GetHeader(0);
        auto ns = ns3::WifiPhy::CalculateTxDuration(psdu->GetSize(), tx, band).GetNanoSeconds();
        if (h.IsData()) { data_ppdus++; data_mpdus += psdu->GetNMpdus(); data_ns = ns; }
        else if (h.IsAck() || h.IsBlockAck()) { acks++; ack_ns = ns; }
    }
}
void OnRxError(std::string, ns3::Ptr<const ns3::Packet>, double) { rx_errors++; }
void Connect() {
    const std::string phy = "/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/$ns3::WifiPhy/";
    ns3::Config::Connect(phy + "PhyTxPsduBegin", ns3::MakeCallback(&OnTx));
    ns3::Config::Connect(phy + "State/RxError", ns3::MakeCallback(&OnRxError));
}
}
"""


def cases(quick: bool) -> list[dict]:
    sizes = [1, 10] if quick else [1, 5, 10, 20, 50]
    out = [{"phy": p, "n": n} for p in ("11a", "11g") for n in sizes]
    out.append({"phy": "11n-5 MCS 7 A-MPDU", "n": 10})
    return out


def key(case: dict) -> str:
    return f"{case['phy']} N={case['n']}"


# --- wisp -------------------------------------------------------------------------------------


def wisp_binary(path: str | None) -> Path:
    wisp = Path(path) if path else ROOT / "target" / "release" / "wisp"
    if not wisp.exists():
        if path:
            sys.exit(f"compare-ns3: {wisp} does not exist")
        print("building wisp (cargo build --release -p wisp-cli)…", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-p", "wisp-cli"], cwd=ROOT, check=True)
    return wisp


def run_wisp(wisp: Path, case: dict, seconds: float) -> dict:
    args = [str(wisp), "wifi", "bianchi", *PHYS[case["phy"]]["wisp"]]
    args += ["--stations", str(case["n"]), "--bytes", str(MSDU)]
    args += ["--duration-s", f"{seconds:g}", "--seed", "1", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    v = json.loads(out)
    return {"goodput_mbps": v["goodput_udp_mbps"], "wall_s": wall, "cpu_s": cpu, "sim_s": seconds}


# --- ns-3 (runs inside the venv: `--ns3-worker`) -----------------------------------------------


def venv_python(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} and installing {NS3_PACKAGE}…", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", NS3_PACKAGE], check=True)
    return python


def ns3_devices(ns, phy: dict, n: int):
    """The AP (node 0) and `n` stations with their ad hoc 802.11 devices, placed and addressed."""
    ns.Config.SetDefault("ns3::WifiPhy::ChannelSettings", ns.StringValue(f"{{0, 20, {phy['band']}, 0}}"))
    nodes = ns.NodeContainer()
    nodes.Create(n + 1)
    wifi_phy = ns.YansWifiPhyHelper()
    wifi_phy.SetChannel(ns.YansWifiChannelHelper.Default().Create())
    wifi = ns.WifiHelper()
    wifi.SetStandard(getattr(ns, phy["standard"]))
    wifi.SetRemoteStationManager(
        "ns3::ConstantRateWifiManager",
        "DataMode", ns.StringValue(phy["data"]),
        "ControlMode", ns.StringValue(phy["control"]),
    )
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::AdhocWifiMac")
    devices = wifi.Install(wifi_phy, mac, nodes)
    for i in range(n + 1):
        dev = devices.Get(i).GetObject[ns.WifiNetDevice]()
        if "slot_us" in phy:
            dev.GetPhy().SetSlot(ns.MicroSeconds(phy["slot_us"]))
        if "be_aifsn" in phy:
            dev.GetMac().GetQosTxop(ns.AC_BE).SetAifsn(phy["be_aifsn"])
    positions = ns.ListPositionAllocator()
    positions.Add(ns.Vector(0, 0, 0))
    for i in range(n):
        a = 2 * math.pi * i / n
        positions.Add(ns.Vector(0.5 * math.cos(a), 0.5 * math.sin(a), 0))
    mobility = ns.MobilityHelper()
    mobility.SetPositionAllocator(positions)
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(nodes)
    ns.InternetStackHelper().Install(nodes)
    ipv4 = ns.Ipv4AddressHelper()
    ipv4.SetBase(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.0.0"))
    interfaces = ipv4.Assign(devices)
    ns.NeighborCacheHelper().PopulateNeighborCache()
    return nodes, devices, interfaces


def ns3_case(ns, probe, case: dict, seconds: float, run: int) -> dict:
    phy = PHYS[case["phy"]]
    n = case["n"]
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(run)
    nodes, devices, interfaces = ns3_devices(ns, phy, n)
    any_port = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9).ConvertTo()
    sink_app = ns.PacketSinkHelper("ns3::UdpSocketFactory", any_port).Install(nodes.Get(0))
    sink = sink_app.Get(0).GetObject[ns.PacketSink]()
    interval = PAYLOAD * 8 / (2 * phy["capacity"] * 1e6 / n)
    for i in range(1, n + 1):
        client = ns.UdpClientHelper(interfaces.GetAddress(0).ConvertTo(), 9)
        client.SetAttribute("MaxPackets", ns.UintegerValue(0))
        client.SetAttribute("Interval", ns.TimeValue(ns.Seconds(interval)))
        client.SetAttribute("PacketSize", ns.UintegerValue(PAYLOAD))
        client.Install(nodes.Get(i)).Start(ns.Seconds(0.01 * i / n))
    probe.band = getattr(ns, "WIFI_PHY_" + phy["band"])
    probe.Connect()
    ns.Simulator.Stop(ns.Seconds(WARMUP_S))
    ns.Simulator.Run()
    probe.Reset()
    rx0 = sink.GetTotalRx()
    start, cpu0 = time.perf_counter(), time.process_time()
    ns.Simulator.Stop(ns.Seconds(seconds))
    ns.Simulator.Run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    mac = devices.Get(1).GetObject[ns.WifiNetDevice]().GetMac()
    txop = mac.GetQosTxop(ns.AC_BE) if mac.GetQosSupported() else mac.GetTxop()
    result = {
        "goodput_mbps": (sink.GetTotalRx() - rx0) * 8 / seconds / 1e6,
        "wall_s": wall,
        "cpu_s": cpu,
        "sim_s": seconds,
        "data_ppdus": int(probe.data_ppdus),
        "mpdus_per_ppdu": probe.data_mpdus / max(1, probe.data_ppdus),
        "acks": int(probe.acks),
        "rx_errors": int(probe.rx_errors),
        "data_us": probe.data_ns / 1000,
        "ack_us": probe.ack_ns / 1000,
        "slot_us": mac.GetWifiPhy().GetSlot().GetMicroSeconds(),
        "sifs_us": mac.GetWifiPhy().GetSifs().GetMicroSeconds(),
        "aifsn": int(txop.GetAifsn(0)),
        "cw": [int(txop.GetMinCw(0)), int(txop.GetMaxCw(0))],
    }
    ns.Simulator.Destroy()
    return result


def ns3_worker(spec: str) -> None:
    """Runs the ns-3 cases in `spec` (JSON), one JSON line per case on stdout."""
    job = json.loads(spec)
    from ns import ns  # noqa: PLC0415 — only inside the venv
    import cppyy  # noqa: PLC0415

    ns.Config.SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", ns.UintegerValue(65535))
    ns.Config.SetDefault("ns3::WifiRemoteStationManager::FragmentationThreshold", ns.UintegerValue(65535))
    ns.Config.SetDefault("ns3::WifiMac::FrameRetryLimit", ns.UintegerValue(65535))
    ns.Config.SetDefault("ns3::WifiMacQueue::MaxDelay", ns.TimeValue(ns.Seconds(10_000)))
    # After a missed BlockAck the MPDUs go again in the next A-MPDU (implicit BAR), as in wisp,
    # not behind an explicit BlockAckReq (both are allowed; ns-3 defaults to the request).
    ns.Config.SetDefault("ns3::QosTxop::UseExplicitBarAfterMissedBlockAck", ns.BooleanValue(False))
    cppyy.cppdef(NS3_PROBE)
    for case in job["cases"]:
        result = ns3_case(ns, cppyy.gbl.wisp_probe, case, job["seconds"], job["run"])
        print(json.dumps({"case": key(case), **result}), flush=True)


def run_ns3(python: Path, todo: list[dict], seconds: float, run: int) -> dict[str, dict]:
    """Runs `todo` in ns-3 workers. cppyy's JIT sometimes crashes (a segmentation fault while it
    looks a class up); ns-3 is deterministic per case, so a new worker takes the cases left, up to
    three times."""
    results: dict[str, dict] = {}
    for attempt in range(3):
        left = [c for c in todo if key(c) not in results]
        if not left:
            break
        spec = json.dumps({"cases": left, "seconds": seconds, "run": run})
        print(f"ns-3: {len(left)} cases of {seconds:g} s (importing ns-3 first)…", file=sys.stderr)
        proc = subprocess.Popen(
            [str(python), __file__, "--ns3-worker", spec],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for line in proc.stdout:
            r = json.loads(line)
            name = r.pop("case")
            results[name] = r
            print(f"  ns-3 {name}: {r['goodput_mbps']:.2f} Mbit/s in {r['wall_s']:.1f} s", file=sys.stderr)
        err = proc.stderr.read()
        if proc.wait() != 0:
            tail = "\n".join(line for line in err.splitlines() if "materialize" not in line)[-2000:]
            print(f"compare-ns3: the ns-3 worker failed (try {attempt + 1} of 3):\n{tail}", file=sys.stderr)
    if any(key(c) not in results for c in todo):
        sys.exit("compare-ns3: ns-3 did not finish every case")
    return results


# --- the table ---------------------------------------------------------------------------------


def speedup(w: dict, s: dict, what: str) -> float:
    """How many times faster wisp simulates a second than ns-3, by wall clock or by CPU time."""
    return (s[what] / s["sim_s"]) / (w[what] / w["sim_s"])


def table(rows: list[tuple[dict, dict, dict]], wisp_s: float, ns3_s: float) -> str:
    out = [
        f"| case | N | wisp goodput (Mbit/s) | ns-3 goodput | gap | wisp wall ({wisp_s:g} s) "
        f"| ns-3 wall ({ns3_s:g} s) | speed-up (wall) | speed-up (CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case, w, s in rows:
        gap = 100 * (w["goodput_mbps"] - s["goodput_mbps"]) / s["goodput_mbps"]
        sign = "−" if gap < 0 else "+"
        out.append(
            f"| {case['phy']} | {case['n']} | {w['goodput_mbps']:.2f} | {s['goodput_mbps']:.2f} "
            f"| {sign}{abs(gap):.1f}% | {w['wall_s']:.2f} s | {s['wall_s']:.1f} s "
            f"| ≈ {speedup(w, s, 'wall_s'):,.0f}× | ≈ {speedup(w, s, 'cpu_s'):,.0f}× |"
        )
    return "\n".join(out)


def notes(rows: list[tuple[dict, dict, dict]]) -> str:
    """What ns-3 did, to check the configuration: airtimes, aggregation, receptions in error."""
    lines = []
    for case, w, s in rows:
        if "data_us" not in s:
            continue
        failed = s["data_ppdus"] - s["acks"]
        lines.append(
            f"- ns-3 {key(case)}: data PPDU {s['data_us']:g} µs ({s['mpdus_per_ppdu']:.1f} MPDUs), "
            f"Ack/BlockAck {s['ack_us']:g} µs, slot {s['slot_us']} µs, SIFS {s['sifs_us']} µs, "
            f"AIFSN {s['aifsn']}, CW {s['cw'][0]}–{s['cw'][1]}; {failed} of {s['data_ppdus']} PPDUs "
            f"unacknowledged, {s['rx_errors']} receptions in error (EIFS); CPU {s['cpu_s']:.1f} s "
            f"(wisp {w['cpu_s']:.2f} s)"
        )
    for what, name in (("wall_s", "wall clock"), ("cpu_s", "CPU time")):
        w_rate = sum(w["sim_s"] for _, w, _ in rows) / sum(w[what] for _, w, _ in rows)
        s_rate = sum(s["sim_s"] for _, _, s in rows) / sum(s[what] for _, _, s in rows)
        lines.append(
            f"- all cases, {name}: wisp {w_rate:,.0f}× real time, ns-3 {s_rate:.2f}×: "
            f"wisp {w_rate / s_rate:,.0f}× faster"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--ns3-worker":
        ns3_worker(sys.argv[2])
        return
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Prints a markdown table; --json keeps every figure (and ns-3's checks).",
    )
    p.add_argument("--quick", action="store_true", help="N = 1 and 10 only, ns-3 2 s per case")
    p.add_argument("--ns3-seconds", type=float, help="ns-3 simulated seconds per case [10; --quick 2]")
    p.add_argument("--wisp-seconds", type=float, default=100.0, help="wisp simulated seconds [100]")
    p.add_argument("--run", type=int, default=1, help="ns-3 RngRun [1]")
    p.add_argument("--wisp", help="the wisp binary [target/release/wisp, built if missing]")
    p.add_argument("--venv", default=str(ROOT / "target" / "ns3-venv"), help="ns-3's venv [target/ns3-venv]")
    p.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    p.add_argument("--reuse-ns3", metavar="FILE", help="take ns-3's figures from an earlier --json FILE")
    a = p.parse_args()
    ns3_s = a.ns3_seconds or (2.0 if a.quick else 10.0)
    todo = cases(a.quick)

    wisp = wisp_binary(a.wisp)
    wisp_results = {key(c): run_wisp(wisp, c, a.wisp_seconds) for c in todo}
    ns3_results = {}
    if a.reuse_ns3:
        ns3_results = {k: v for k, v in json.loads(Path(a.reuse_ns3).read_text())["ns3"].items()}
    missing = [c for c in todo if key(c) not in ns3_results]
    if missing:
        ns3_results.update(run_ns3(venv_python(Path(a.venv)), missing, ns3_s, a.run))
    rows = [(c, wisp_results[key(c)], ns3_results[key(c)]) for c in todo]
    print(table(rows, a.wisp_seconds, ns3_results[key(todo[0])]["sim_s"]))
    print()
    print(notes(rows))
    if a.json:
        Path(a.json).write_text(json.dumps({"wisp": wisp_results, "ns3": ns3_results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
