"""Draw frames as PNGs in the game palette from the agent's own Python
(baseline1's frame_plot_lib: same functions and arguments; evident's code).
Needs numpy only: the PNGs are written with zlib (8-bit RGB, unfiltered).

    save_ascii_frame_png(frame, path, scale=8)       any 2D array: a frame, a part, a panorama
    save_mismatch_region_png_v1(real, predicted, path, scale=8)
        the real frame where cells lie within 7 cells of a mismatch, brown elsewhere
    save_mismatch_as_magneta_png_v2(real, predicted, path, scale=8)
        the real frame with every mismatching cell magenta

Cell values outside 0..15 are drawn black. Each returns the PNG's path; its
folder is created.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

DEFAULT_PNG_SCALE = 8
# The game palette (colours 0..15), then black for anything else.
PALETTE = np.array([
    (0xFF, 0xFF, 0xFF), (0xCC, 0xCC, 0xCC), (0x99, 0x99, 0x99), (0x66, 0x66, 0x66),
    (0x33, 0x33, 0x33), (0x00, 0x00, 0x00), (0xE5, 0x3A, 0xA3), (0xFF, 0x7B, 0xCC),
    (0xF9, 0x3C, 0x31), (0x1E, 0x93, 0xFF), (0x88, 0xD8, 0xF1), (0xFF, 0xDC, 0x00),
    (0xFF, 0x85, 0x1B), (0x92, 0x12, 0x31), (0x4F, 0xCC, 0x30), (0xA3, 0x56, 0xD6),
], dtype=np.uint8)
BLACK_RGB = (0, 0, 0)
BROWN_RGB = (139, 69, 19)
MAGENTA_RGB = (255, 0, 255)
MISMATCH_RADIUS = 7


def _grid(frame) -> np.ndarray:
    a = np.asarray(frame)
    if a.ndim != 2:
        raise ValueError("a frame is a 2D array, got shape %s" % (a.shape,))
    return a.astype(np.int64)


def frame_to_rgb_array(frame, scale: int = DEFAULT_PNG_SCALE) -> np.ndarray:
    """The frame as a (rows*scale, columns*scale, 3) uint8 RGB array."""
    if int(scale) < 1:
        raise ValueError("scale must be at least 1, got %r" % (scale,))
    values = _grid(frame)
    rgb = np.zeros(values.shape + (3,), dtype=np.uint8)
    rgb[...] = BLACK_RGB
    ok = (values >= 0) & (values < len(PALETTE))
    rgb[ok] = PALETTE[values[ok]]
    return _scaled(rgb, int(scale))


def _scaled(rgb: np.ndarray, scale: int) -> np.ndarray:
    if scale == 1:
        return rgb
    return np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_rgb_png(rgb: np.ndarray, output_png_path) -> Path:
    """Write an (h, w, 3) uint8 array as an 8-bit RGB PNG."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    height, width = rgb.shape[:2]
    if height < 1 or width < 1:
        raise ValueError("cannot write an empty image (%dx%d)" % (width, height))
    raw = np.zeros((height, 1 + width * 3), dtype=np.uint8)  # filter byte 0 per row
    raw[:, 1:] = rgb.reshape(height, width * 3)
    png = (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + _chunk(b"IEND", b""))
    path = Path(output_png_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)
    return path


def save_ascii_frame_png(frame, output_png_path, scale: int = DEFAULT_PNG_SCALE) -> Path:
    """Draw frame (any 2D array of colours) as a PNG, scale pixels a cell."""
    return write_rgb_png(frame_to_rgb_array(frame, scale), output_png_path)


def _same_shape(real_frame, predicted_frame) -> tuple[np.ndarray, np.ndarray]:
    real, predicted = _grid(real_frame), _grid(predicted_frame)
    if real.shape != predicted.shape:
        raise ValueError("Predicted and real frames must have the same shape (real %s, predicted %s)."
                         % (real.shape, predicted.shape))
    return real, predicted


def _near_mismatch(real: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Cells within MISMATCH_RADIUS (a disc) of a mismatching cell."""
    mismatch = real != predicted
    height, width = mismatch.shape
    near = np.zeros_like(mismatch)
    r = MISMATCH_RADIUS
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if dx * dx + dy * dy > r * r or abs(dy) >= height or abs(dx) >= width:
                continue
            # near[y, x] |= mismatch[y - dy, x - dx], inside the frame.
            ys, yd = slice(max(0, -dy), min(height, height - dy)), slice(max(0, dy), min(height, height + dy))
            xs, xd = slice(max(0, -dx), min(width, width - dx)), slice(max(0, dx), min(width, width + dx))
            near[yd, xd] |= mismatch[ys, xs]
    return near


def _paint(real: np.ndarray, cells: np.ndarray, colour, output_png_path, scale: int) -> Path:
    rgb = frame_to_rgb_array(real, 1)
    rgb[cells] = colour
    return write_rgb_png(_scaled(rgb, int(scale)), output_png_path)


def save_mismatch_region_png_v1(real_frame, predicted_frame, output_png_path, scale: int = DEFAULT_PNG_SCALE) -> Path:
    """The real frame near the mismatches (within MISMATCH_RADIUS cells),
    brown elsewhere (a colour no frame has)."""
    real, predicted = _same_shape(real_frame, predicted_frame)
    return _paint(real, ~_near_mismatch(real, predicted), BROWN_RGB, output_png_path, scale)


def save_mismatch_as_magneta_png_v2(real_frame, predicted_frame, output_png_path, scale: int = DEFAULT_PNG_SCALE) -> Path:
    """The real frame with every mismatching cell magenta."""
    real, predicted = _same_shape(real_frame, predicted_frame)
    return _paint(real, real != predicted, MAGENTA_RGB, output_png_path, scale)
