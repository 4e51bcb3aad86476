"""World-model states from the recorded session, in the agent's own Python
(baseline1's state_reconstruction_tools: same names and arguments; evident's
code). A state is initial_state_reconstruction(level, the attempt's initial
frame) advanced by world_model_engine through the attempt's actions — the
workspace's world_model_engine.py and world_model_state_io.py, imported
here unsandboxed (verification runs them in evident's sandbox).

Inside verification evident's adapter serves simulate_actions and
replay_actions only (the session readers are not for model code).
"""

from __future__ import annotations

import importlib

from game_status import RUNNING
from session_tools import (
    attempt_step_count,
    read_attempt_prefix_for_level,
    read_current_attempt,
    read_latest_attempt_for_level,
    truncate_attempt,
)


def _model(module: str, function: str):
    return getattr(importlib.import_module(module), function)


def simulate_actions(start_state: dict, actions: list[dict]) -> tuple[dict, str]:
    """Run actions through world_model_engine from start_state; stops at
    the first status that is not RUNNING. Returns (state, status)."""
    engine = _model("world_model_engine", "world_model_engine")
    state, status = start_state, RUNNING
    for action in actions:
        state, status = engine(state, action)
        if status != RUNNING:
            break
    return state, status


def replay_actions(start_state: dict, actions: list[dict]) -> tuple[dict, str]:
    """simulate_actions under its other name."""
    return simulate_actions(start_state, actions)


def replay_attempt_prefix(initial_state: dict, attempt: dict, step_count: int) -> tuple[dict, str]:
    """The attempt's first step_count actions from initial_state."""
    return simulate_actions(initial_state, [step["action"] for step in attempt["steps"][:step_count]])


def reconstruct_initial_state_from_attempt(level: int, attempt: dict) -> dict:
    """initial_state_reconstruction(level, the attempt's initial frame)."""
    return _model("world_model_state_io", "initial_state_reconstruction")(level, attempt["initial_frame"])


def reconstruct_initial_state(level: int) -> dict:
    """The level's initial state, from its latest attempt's initial frame."""
    attempt = truncate_attempt(read_latest_attempt_for_level(level), 0)
    return reconstruct_initial_state_from_attempt(level, attempt)


def reconstruct_state(level: int, attempt_index: int, step_count: int) -> dict:
    """The state after the first step_count steps of attempt attempt_index
    of the level."""
    attempt = read_attempt_prefix_for_level(level, attempt_index, step_count)
    initial = reconstruct_initial_state_from_attempt(level, attempt)
    return replay_attempt_prefix(initial, attempt, attempt_step_count(attempt))[0]


def reconstruct_current_state() -> dict:
    """The state after every recorded step of the current attempt."""
    attempt = read_current_attempt()
    return reconstruct_state(int(attempt["level_index"]), int(attempt["attempt_index"]), attempt_step_count(attempt))
