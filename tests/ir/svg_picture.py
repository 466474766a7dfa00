"""Reading the pictures tsjit.ir.graphviz draws: the SVG Graphviz writes as boxes, clusters and edges (by their
DOT names and texts), and a headless browser's screenshot of it. Used by tests/ir/test_graphviz.py and
tests/passes/test_pass_diff.py."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed (make's set-up installs it as root)")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync")


@dataclass
class Shape:
    """One SVG group Graphviz wrote: its DOT name (`title`), class, texts, fill and bounding box."""

    title: str
    classes: list[str]
    texts: list[str]
    fill: str | None
    box: tuple[float, float, float, float] | None

    def contains(self, other: Shape) -> bool:
        assert self.box and other.box
        return (self.box[0] <= other.box[0] and self.box[1] <= other.box[1] and other.box[2] <= self.box[2]
                and other.box[3] <= self.box[3])


@dataclass
class Picture:
    nodes: dict[str, Shape]
    clusters: dict[str, Shape]
    edges: list[Shape]

    def cluster_titled(self, label: str) -> list[Shape]:
        return [cluster for cluster in self.clusters.values() if cluster.texts[:1] == [label]]


def read_svg(text: str) -> Picture:
    root = ElementTree.fromstring(text)
    shapes = [_shape(group) for group in root.iter(f"{SVG}g") if group.find(f"{SVG}title") is not None
              and group.get("class")]
    return Picture({s.title: s for s in shapes if "node" in s.classes},
                   {s.title: s for s in shapes if "cluster" in s.classes},
                   [s for s in shapes if "edge" in s.classes])


def _shape(group: ElementTree.Element) -> Shape:
    outline = next((e for e in group.iter() if e.tag in (f"{SVG}polygon", f"{SVG}path", f"{SVG}ellipse")), None)
    return Shape(group.findtext(f"{SVG}title", ""), (group.get("class") or "").split(),
                 [t.text or "" for t in group.iter(f"{SVG}text")], outline.get("fill") if outline is not None else None,
                 _box(outline) if outline is not None else None)


def _box(outline: ElementTree.Element) -> tuple[float, float, float, float] | None:
    """The bounding box of a polygon's points or a path's points (rounded shapes are paths)."""
    pairs = re.findall(r"(-?[\d.]+),(-?[\d.]+)", outline.get("points") or outline.get("d") or "")
    if not pairs:
        return None
    xs, ys = zip(*((float(x), float(y)) for x, y in pairs))
    return min(xs), min(ys), max(xs), max(ys)


def ir_node_titles(picture: Picture, prefix: str = "") -> list[str]:
    """The boxes of IR nodes (`<prefix>n<k>`), in program order."""
    pattern = re.compile(re.escape(prefix) + r"n(\d+)")
    found = [(int(m.group(1)), title) for title in picture.nodes if (m := pattern.fullmatch(title))]
    return [title for _, title in sorted(found)]


def screenshot(svg_path: Path, directory: Path) -> bytes:
    """A headless Chromium's PNG of the SVG file (skips the test where Debian's chromium is missing)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    png = directory / "screenshot.png"
    subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={directory / 'profile'}", f"--screenshot={png}",
                    "--window-size=1200,900", svg_path.resolve().as_uri()],
                   capture_output=True, timeout=180, check=True)
    return png.read_bytes()


def png_colours(data: bytes, limit: int = 64) -> set[bytes]:
    """Distinct pixel colours of an 8-bit RGB(A) PNG, read from the top (stops at `limit`: rows cost ~ms each)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    chunks, offset = {}, 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        chunks.setdefault(kind, []).append(data[offset + 8:offset + 8 + length])
        offset += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    assert depth == 8 and colour_type in (2, 6), f"unexpected PNG format: depth {depth}, colour type {colour_type}"
    pixel = 3 if colour_type == 2 else 4
    rows = _unfiltered(zlib.decompress(b"".join(chunks[b"IDAT"])), width * pixel, height, pixel)
    colours: set[bytes] = set()
    for row in rows:
        colours.update(row[i:i + pixel] for i in range(0, len(row), pixel))
        if len(colours) >= limit:
            break
    return colours


def _unfiltered(raw: bytes, stride: int, height: int, pixel: int) -> Iterator[bytes]:
    """The rows with PNG's five row filters undone (the PNG specification, section 9), one at a time."""
    previous = bytearray(stride)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = row[i - pixel] if i >= pixel else 0
            up, corner = previous[i], previous[i - pixel] if i >= pixel else 0
            row[i] = (row[i] + (0, left, up, (left + up) // 2, _paeth(left, up, corner))[kind]) & 0xFF
        yield bytes(row)
        previous = row


def _paeth(left: int, up: int, corner: int) -> int:
    estimate = left + up - corner
    distances = (abs(estimate - left), abs(estimate - up), abs(estimate - corner))
    return (left, up, corner)[distances.index(min(distances))]
