"""Main planner of the dot game: breadth-first search in the world model,
the same search (action order, deduplication, bound) as the Starlark
reference model's bfs()."""

from __future__ import annotations

from collections import deque

from game_status import LEVEL_COMPLETED, RUNNING
from world_model_engine import world_model_engine

MOVES = [{"name": "ACTION1"}, {"name": "ACTION2"}, {"name": "ACTION3"}, {"name": "ACTION4"}]


def _key(s):
    return (s["x"], s["y"], s["color"])


def _bfs(start, is_goal, max_nodes):
    if is_goal(start, RUNNING):
        return []
    seen = {_key(start)}
    queue = deque([(start, [])])
    while queue:
        s, path = queue.popleft()
        for a in MOVES:
            ns, status = world_model_engine(s, a)
            if is_goal(ns, status):
                return path + [a]
            if status != RUNNING:
                continue
            k = _key(ns)
            if k in seen:
                continue
            if len(seen) >= max_nodes:
                return None
            seen.add(k)
            queue.append((ns, path + [a]))
    return None


def planner(state: dict, goal: dict | None = None) -> list[dict] | None:
    if goal is not None:
        # Auxiliary use: reach the cell goal["x"], goal["y"].
        return _bfs(state, lambda s, status: status == RUNNING and s["x"] == goal["x"] and s["y"] == goal["y"], 100000)
    return _bfs(state, lambda s, status: status == LEVEL_COMPLETED, 20000)
