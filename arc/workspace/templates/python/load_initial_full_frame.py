"""The agent's reconstructed full initial frame of a level,
initial_full_frames/level_N.txt (N unpadded), as baseline1's
load_initial_full_frame module reads it.

Inside verification evident's adapter serves its own copy of this module
(usable only from initial_state_reconstruction); this file is for the
agent's own Python (a REPL, its scripts).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from session_tools import load_ascii_frame

INITIAL_FULL_FRAMES_DIR = Path(__file__).resolve().parent / "initial_full_frames"


def get_initial_full_frame_path(level_index: int) -> Path:
    """initial_full_frames/level_N.txt for level N."""
    return INITIAL_FULL_FRAMES_DIR / ("level_%d.txt" % int(level_index))


def load_initial_full_frame(level_index: int) -> np.ndarray | None:
    """The level's full initial frame as an int16 array (rows x columns),
    or None when there is no such file."""
    path = get_initial_full_frame_path(level_index)
    if not path.is_file():
        return None
    return load_ascii_frame(path)
