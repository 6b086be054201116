#!/usr/bin/env python3
"""Draws build/icon.png (512x512 RGBA) to match build/icon.svg: a dark rounded square,
three ascending steps, and a red breakpoint dot. Standard library only (zlib, struct)."""
import struct
import zlib
from pathlib import Path

SIZE = 512
BG = (30, 30, 46, 255)
STEP = (79, 195, 247, 255)
DOT = (239, 83, 80, 255)
CLEAR = (0, 0, 0, 0)
RADIUS = 96


def inside_rounded(x, y):
    cx = min(max(x, RADIUS), SIZE - 1 - RADIUS)
    cy = min(max(y, RADIUS), SIZE - 1 - RADIUS)
    return (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS ** 2


# Steps as (x0, y0, x1, y1), matching the SVG's rects.
STEPS = [(96, 336, 208, 416), (208, 256, 320, 416), (320, 176, 432, 416)]


def pixel(x, y):
    if not inside_rounded(x, y):
        return CLEAR
    if (x - 150) ** 2 + (y - 170) ** 2 <= 44 ** 2:
        return DOT
    for x0, y0, x1, y1 in STEPS:
        if x0 <= x < x1 and y0 <= y < y1:
            return STEP
    return BG


def chunk(kind, data):
    body = kind + data
    return struct.pack('>I', len(data)) + body + struct.pack('>I', zlib.crc32(body) & 0xFFFFFFFF)


def main():
    rows = bytearray()
    for y in range(SIZE):
        rows.append(0)  # filter: none
        for x in range(SIZE):
            rows.extend(pixel(x, y))
    png = b'\x89PNG\r\n\x1a\n'
    png += chunk(b'IHDR', struct.pack('>IIBBBBB', SIZE, SIZE, 8, 6, 0, 0, 0))
    png += chunk(b'IDAT', zlib.compress(bytes(rows), 9))
    png += chunk(b'IEND', b'')
    out = Path(__file__).with_name('icon.png')
    out.write_bytes(png)
    print(f'wrote {out} ({len(png)} bytes)')


if __name__ == '__main__':
    main()
