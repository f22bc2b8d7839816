#!/usr/bin/env python3
"""Counts pixels of a PNG screenshot (8-bit RGB/RGBA, not interlaced: what Chromium writes) with
the standard library only. Prints one JSON object:
  {"width", "height", "nonwhite": pixels not near-white, "color": pixels within 40 of --color RRGGBB}
Used by the report's browser test to check that what Chromium drew is not blank and that the
charts' strokes are on the page."""
import argparse
import json
import struct
import zlib


def chunks(data):
    pos = 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + n]
        pos += 12 + n


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def rows(width, height, bpp, raw):
    stride, prev, pos = width * bpp, bytearray(width * bpp), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, ul = prev[i], (prev[i - bpp] if i >= bpp else 0)
            line[i] = (line[i] + (0, left, up, (left + up) // 2, paeth(left, up, ul))[kind]) & 0xFF
        yield line
        prev = line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("png")
    ap.add_argument("--color", default="1f77b4")
    a = ap.parse_args()
    data = open(a.png, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    idat, width = b"", 0
    for kind, body in chunks(data):
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "expected 8-bit RGB(A), not interlaced"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    want = bytes.fromhex(a.color)
    nonwhite = color = 0
    for line in rows(width, height, bpp, zlib.decompress(idat)):
        for x in range(0, len(line), bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            nonwhite += min(r, g, b) < 235
            color += abs(r - want[0]) < 40 and abs(g - want[1]) < 40 and abs(b - want[2]) < 40
    print(json.dumps({"width": width, "height": height, "nonwhite": nonwhite, "color": color}))


if __name__ == "__main__":
    main()
