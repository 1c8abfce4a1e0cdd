#!/usr/bin/env python3
"""Make media/astronaut-talking-qcif-3s.y4m: a synthetic head-and-shoulders clip.

The picture is NASA's public-domain portrait of the astronaut Eileen Collins, as shipped in the
PyPI package scikit-image (`skimage/data/astronaut.png`). A still cannot talk, so the motion is
scripted: the head sways and nods, the shoulders follow it a little, the mouth opens and closes
four times a second, and a camera's sensor noise is added; the background stays still. Every
motion has a period that divides 3 s, so the 75 pictures loop without a jump, as the shipped Big
Buck Bunny clip is looped. Deterministic: the same script gives the same bytes (the noise is
seeded by picture number).

Usage:
    pip install numpy pillow
    pip download --no-deps scikit-image==0.26.0   # the wheel, for its astronaut.png
    unzip -o scikit_image-0.26.0-*.whl skimage/data/astronaut.png
    python3 scripts/make-conversational-clip.py skimage/data/astronaut.png media/astronaut-talking-qcif-3s.y4m

See media/README.md for the licence, the hashes and what this clip is and is not.
"""

import hashlib
import math
import os
import sys

import numpy as np
from PIL import Image

ASTRONAUT_SHA256 = "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"
WIDTH, HEIGHT, FPS, PICTURES = 176, 144, 25, 75
# The crop of the 512×512 portrait: its full width, and the top 419 rows (11:9, square pixels).
CROP_H = 419
# Where the head, the shoulders and the mouth are in the portrait (pixels of the 512×512 image).
HEAD = (228.0, 105.0, 95.0, 110.0)  # centre x, centre y, radius x, radius y
BODY = (200.0, 400.0, 210.0, 260.0)
MOUTH = (222.0, 146.0, 24.0, 11.0)  # centre x, centre y, sigma x, sigma y


def smooth_ellipse(xx, yy, ellipse, edge):
    """1 inside the ellipse, 0 outside, a smoothstep over `edge` pixels across its boundary."""
    cx, cy, rx, ry = ellipse
    r = np.sqrt(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2)
    s = np.clip((1.0 - r) * min(rx, ry) / edge + 0.5, 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def bilinear(src, x, y):
    """Sample the H×W×3 float image `src` at the float coordinates `x`, `y` (clamped)."""
    h, w, _ = src.shape
    x = np.clip(x, 0.0, w - 1.001)
    y = np.clip(y, 0.0, h - 1.001)
    x0 = np.floor(x).astype(np.int64)
    y0 = np.floor(y).astype(np.int64)
    fx = (x - x0)[..., None]
    fy = (y - y0)[..., None]
    top = src[y0, x0] * (1 - fx) + src[y0, x0 + 1] * fx
    bottom = src[y0 + 1, x0] * (1 - fx) + src[y0 + 1, x0 + 1] * fx
    return top * (1 - fy) + bottom * fy


def picture(src, k, weights):
    """Picture k (0-based) as an H×W×3 float RGB image in [0, 255] at the portrait's size."""
    head_w, body_w, mouth_g, xx, yy = weights
    t = k / FPS
    tau = 2.0 * math.pi
    # The head: a slow sway (3 s), a smaller faster one (1.5 s), a nod (1 s); source pixels.
    hx = 5.0 * math.sin(tau * t / 3.0) + 2.0 * math.sin(tau * t / 1.5 + 1.0)
    hy = 3.0 * math.sin(tau * t / 1.0 + 0.5)
    # The shoulders follow at 40 %.
    weight = head_w + (1.0 - head_w) * body_w * 0.4
    dx = weight * hx
    dy = weight * hy
    # The mouth: opens four times a second (a vertical stretch about its centre, backward-mapped).
    opening = 0.22 * max(0.0, math.sin(tau * 4.0 * t))
    dy = dy + mouth_g * opening * (yy - MOUTH[1])
    return bilinear(src, xx - dx, yy - dy)


def to_yuv420(rgb):
    """BT.601 limited range, 4:2:0 with centred chroma (the mean of each 2×2 block)."""
    r, g, b = (rgb[..., i] / 255.0 for i in range(3))
    y = 16.0 + 65.481 * r + 128.553 * g + 24.966 * b
    cb = 128.0 - 37.797 * r - 74.203 * g + 112.0 * b
    cr = 128.0 + 112.0 * r - 93.786 * g - 18.214 * b

    def half(p):
        return 0.25 * (p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2])

    return y, half(cb), half(cr)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    source, out = argv[1], argv[2]
    data = open(source, "rb").read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != ASTRONAUT_SHA256:
        sys.stderr.write(f"{source}: sha256 {digest}, expected {ASTRONAUT_SHA256} (scikit-image 0.26.0's astronaut.png)\n")
        return 2
    src = np.asarray(Image.open(source).convert("RGB"), dtype=np.float64)[:CROP_H]
    yy, xx = np.mgrid[0:CROP_H, 0 : src.shape[1]].astype(np.float64)
    head_w = smooth_ellipse(xx, yy, HEAD, 20.0)
    body_w = smooth_ellipse(xx, yy, BODY, 30.0)
    mcx, mcy, msx, msy = MOUTH
    mouth_g = np.exp(-0.5 * (((xx - mcx) / msx) ** 2 + ((yy - mcy) / msy) ** 2))
    weights = (head_w, body_w, mouth_g, xx, yy)
    chunks = [f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F{FPS}:1 Ip A1:1 C420jpeg\n".encode()]
    for k in range(PICTURES):
        rgb = picture(src, k, weights)
        img = Image.fromarray(np.clip(np.rint(rgb), 0, 255).astype(np.uint8))
        small = np.asarray(img.resize((WIDTH, HEIGHT), Image.LANCZOS), dtype=np.float64)
        y, cb, cr = to_yuv420(small)
        # A camera's sensor noise, seeded by the picture number.
        rng = np.random.default_rng(k)
        y = y + rng.normal(0.0, 1.2, y.shape)
        cb = cb + rng.normal(0.0, 0.6, cb.shape)
        cr = cr + rng.normal(0.0, 0.6, cr.shape)
        chunks.append(b"FRAME\n")
        for plane in (y, cb, cr):
            chunks.append(np.clip(np.rint(plane), 0, 255).astype(np.uint8).tobytes())
    blob = b"".join(chunks)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, out)
    print(f"{out}: {PICTURES} pictures, {len(blob)} bytes, sha256 {hashlib.sha256(blob).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
