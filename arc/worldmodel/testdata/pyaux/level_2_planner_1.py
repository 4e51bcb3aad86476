"""Auxiliary planner: reach the cell goal = {"x": X, "y": Y}, by a
uniform-cost search over the engine (heapq), with the scipy, networkx,
random and itertools imports baseline1's agents use."""

import heapq
import itertools
import random

import networkx as nx
import numpy as np
from scipy import ndimage

from game_status import RUNNING
from state_reconstruction_tools import simulate_actions
from world_model_engine import world_model_engine
from world_model_rules import MOVES

random.seed(0)


def _reachable_floor(state):
    # networkx and scipy on the level grid: the connected floor component
    # (checks that both libraries work inside the sandbox).
    floor = np.asarray(state["bg"]) != 3
    labels, count = ndimage.label(floor)
    g = nx.grid_2d_graph(3, 3)
    assert nx.shortest_path_length(g, (0, 0), (2, 2)) == 4 and count >= 1
    return labels


def planner(state, goal=None):
    if goal is None:
        return None
    _reachable_floor(state)
    tie = itertools.count()
    queue = [(0, next(tie), state, [])]
    seen = {(state["x"], state["y"])}
    while queue:
        cost, _, s, path = heapq.heappop(queue)
        if (s["x"], s["y"]) == (goal["x"], goal["y"]):
            _, status = simulate_actions(state, path)
            return path if status == RUNNING else None
        for m in MOVES:
            a = {"name": m.name}
            ns, status = world_model_engine(s, a)
            if status != RUNNING or (ns["x"], ns["y"]) in seen:
                continue
            seen.add((ns["x"], ns["y"]))
            heapq.heappush(queue, (cost + 1, next(tie), ns, path + [a]))
    return None
