"""World model engine: the game's dynamics inside one attempt.

world_model_engine(state, action) -> (new_state, status)
    state   dict with an int "level" and your internal state
    action  {"name": "ACTION1".."ACTION7"}, plus "x", "y" (0..63) for ACTION6
    status  RUNNING, LEVEL_COMPLETED or GAME_OVER
"""

from game_status import RUNNING


def world_model_engine(state: dict, action: dict) -> tuple[dict, str]:
    """Placeholder dynamics: nothing changes."""
    return dict(state), RUNNING
