#!/usr/bin/env python3
"""Alfalfa and the conventional-codec schemes with VP8 on both shipped clips.

The reproduction (`wisp reproduce alfalfa`) uses the model codec, whose sizes and SSIM were
measured on Big Buck Bunny, so the clip does not change its figures. This script runs the
schemes with libvpx (`codec=vp8`), which codes the clip itself, on Big Buck Bunny's high-motion
loop and on the conversational clip, and prints, per scheme, clip and run: frames shown, freezes
by libwebrtc's rule (count / seconds), frame delay p95, displayed SSIM and bitrate.

Needs a wisp built with VP8 (`cargo build --release -p wisp-cli --features vp8`, Debian's
libvpx-dev and pkg-config). Usage:

    python3 scripts/alfalfa-clips.py [--wisp target/release/wisp] [--out target/tmp/alfalfa-clips]

Each run is `wisp run --scheme S:codec=vp8 --video CLIP --trace T --reverse-trace R
--delay-ms 20 [--loss 0.05 --reverse-loss 0.05]`, seed 1, the whole trace (as the reproduction).
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIPS = [
    ("Big Buck Bunny", "media/bigbuckbunny-qcif-3s.y4m"),
    ("conversational", "media/astronaut-talking-qcif-3s.y4m"),
]
SCHEMES = ["alfalfa", "alfalfa-hold", "sprout-conventional", "gcc-video", "cbr-video"]
SPECS = {"alfalfa-hold": "alfalfa:hold=on,codec=vp8"}
RUNS = [
    ("Verizon-LTE-short.down", "Verizon-LTE-short.up", 0.0),
    ("TMobile-LTE-short.down", "TMobile-LTE-short.up", 0.0),
    ("Verizon-LTE-short.down", "Verizon-LTE-short.up", 0.05),
]


def spec(scheme):
    return SPECS.get(scheme, f"{scheme}:codec=vp8")


def run_one(wisp, out, clip, trace, reverse, loss, scheme):
    name = f"{os.path.basename(clip).split('-')[0]}-{trace}-{loss}-{scheme}"
    d = os.path.join(out, name)
    if not os.path.exists(os.path.join(d, "video.json")):
        cmd = [
            wisp, "run", "--scheme", spec(scheme), "--video", os.path.join(ROOT, clip),
            "--trace", os.path.join(ROOT, "traces/cellular", trace),
            "--reverse-trace", os.path.join(ROOT, "traces/cellular", reverse),
            "--delay-ms", "20", "--seed", "1", "--out", d,
        ]
        if loss > 0:
            cmd += ["--loss", str(loss), "--reverse-loss", str(loss)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    with open(os.path.join(d, "video.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wisp", default=os.path.join(ROOT, "target/release/wisp"))
    ap.add_argument("--out", default=os.path.join(ROOT, "target/tmp/alfalfa-clips"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    total = len(CLIPS) * len(RUNS) * len(SCHEMES)
    done, start, rows = 0, time.time(), []
    for clip_name, clip in CLIPS:
        for trace, reverse, loss in RUNS:
            for scheme in SCHEMES:
                v = run_one(a.wisp, a.out, clip, trace, reverse, loss, scheme)
                done += 1
                sys.stderr.write(f"\r{done}/{total} runs, {time.time() - start:.0f} s")
                rows.append((clip_name, trace, loss, scheme, v))
    sys.stderr.write("\n")
    print("| clip | run | scheme | shown | freezes (count / s) | frame delay p95 ms | displayed SSIM dB | kbit/s |")
    print("|---|---|---|---|---|---|---|---|")
    for clip_name, trace, loss, scheme, v in rows:
        run = trace + (f", {loss:.0%} loss" if loss else "")
        fz = v["freezes"]
        print(
            f"| {clip_name} | {run} | {scheme} | {100 * v['shown_share']:.1f}% | "
            f"{fz['count']} / {fz['total_s']:.1f} | {v['delay_p95_ms']:.0f} | "
            f"{v['displayed']['ssim_mean_db']:.2f} | {v['bitrate_kbps']:.0f} |"
        )
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump([dict(clip=c, trace=t, loss=l, scheme=s, video=v) for c, t, l, s, v in rows], f, indent=1)


if __name__ == "__main__":
    main()
