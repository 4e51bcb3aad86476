"""Dynamics of the dot game (arc/internal/dotgame) inside one attempt: a
Python port of the reference Starlark model, written as a seed-003 workspace
file. A state is a dict: level, bg (the level's int16 frame without the dot),
x, y (the dot's cell) and color (9, or 12 after ACTION5)."""

from __future__ import annotations

from game_status import GAME_OVER, LEVEL_COMPLETED, RUNNING

WALL = 3
LAVA = 8
GOAL = 14
FLOOR = 0

MOVES = {
    "ACTION1": (0, -1),
    "ACTION2": (0, 1),
    "ACTION3": (-1, 0),
    "ACTION4": (1, 0),
}


def world_model_engine(state: dict, action: dict) -> tuple[dict, str]:
    name = action["name"]
    s = dict(state)
    if name in MOVES:
        dx, dy = MOVES[name]
        nx, ny = state["x"] + dx, state["y"] + dy
        c = int(state["bg"][ny, nx])
        if c == WALL:
            return s, RUNNING
        s["x"], s["y"] = nx, ny
        if c == LAVA:
            return s, GAME_OVER
        if c == GOAL:
            return s, LEVEL_COMPLETED
    elif name == "ACTION5":
        s["color"] = 12 if state["color"] == 9 else 9
    elif name == "ACTION6":
        if int(state["bg"][action["y"], action["x"]]) == FLOOR:
            s["x"], s["y"] = action["x"], action["y"]
    return s, RUNNING
