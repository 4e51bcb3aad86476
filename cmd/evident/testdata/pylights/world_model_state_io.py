"""Lights: reconstruction and rendering with numpy. The board sits inside an
outline of colour 2 (one cell of gap between); the target is the small
pattern at row 3 (2x2 cells, stride 3) above it."""

from __future__ import annotations

import numpy as np

OUTLINE = 2
ON = 11
OFF = 3
BLOCKED = 13
STRIDE = 8
CELL = 7
PRE_Y = 3
PRE_STEP = 3


def _value(c):
    if c == ON:
        return 1
    if c == BLOCKED:
        return -1
    return 0


def initial_state_reconstruction(level_index: int, initial_frame: np.ndarray) -> dict:
    ys, xs = np.nonzero(initial_frame == OUTLINE)
    if len(xs) == 0:
        raise ValueError("no board outline of colour 2")
    bx, by, bw = int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1)
    n = (bw - 3) // STRIDE
    ox, oy = bx + 2, by + 2
    cells = tuple(_value(initial_frame[oy + j * STRIDE, ox + i * STRIDE]) for j in range(n) for i in range(n))
    target = tuple(_value(initial_frame[PRE_Y + j * PRE_STEP, ox + i * PRE_STEP]) for j in range(n) for i in range(n))
    return {"level": level_index, "n": n, "ox": ox, "oy": oy, "cells": cells, "target": target, "bg": initial_frame}


def state_renderer(state: dict) -> np.ndarray:
    g = state["bg"].copy()
    n = state["n"]
    for k, v in enumerate(state["cells"]):
        x = state["ox"] + (k % n) * STRIDE
        y = state["oy"] + (k // n) * STRIDE
        g[y:y + CELL, x:x + CELL] = ON if v == 1 else BLOCKED if v == -1 else OFF
    return g
