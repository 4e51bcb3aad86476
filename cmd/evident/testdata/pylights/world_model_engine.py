"""Lights (arc/games, lights-v1) world model in Python, seed-003 style: a
port of the Starlark reference model arc/games/models/lights-v1 for the
--model-cmd tests. A state is a dict: level; n, the board side; ox, oy, the
board's top-left cell; cells and target, tuples of n*n values row-major
(1 lit, 0 dark, -1 blocked); bg, the initial frame (never modified)."""

from __future__ import annotations

from game_status import LEVEL_COMPLETED, RUNNING

STRIDE = 8
CELL = 7


def world_model_engine(state: dict, action: dict) -> tuple[dict, str]:
    if action["name"] != "ACTION6":
        return state, RUNNING
    n = state["n"]
    dx = action["x"] - state["ox"]
    dy = action["y"] - state["oy"]
    if dx < 0 or dy < 0 or dx % STRIDE >= CELL or dy % STRIDE >= CELL:
        return state, RUNNING
    i, j = dx // STRIDE, dy // STRIDE
    if i >= n or j >= n or state["cells"][j * n + i] < 0:
        return state, RUNNING
    cells = list(state["cells"])
    for ci, cj in [(i, j), (i, j - 1), (i, j + 1), (i - 1, j), (i + 1, j)]:
        if 0 <= ci < n and 0 <= cj < n and cells[cj * n + ci] >= 0:
            cells[cj * n + ci] = 1 - cells[cj * n + ci]
    s = dict(state)
    s["cells"] = tuple(cells)
    if s["cells"] == state["target"]:
        return s, LEVEL_COMPLETED
    return s, RUNNING
