"""A helper module the model is split into (world_model_*.py): the moves."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Move:
    name: str
    dx: int
    dy: int


MOVES = (Move("ACTION1", 0, -1), Move("ACTION2", 0, 1), Move("ACTION3", -1, 0), Move("ACTION4", 1, 0))
