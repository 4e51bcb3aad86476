"""Read the recorded game session (client/session/) from the agent's own
Python: the attempts of a level, one attempt, the current one.

Written by `evident arc init --python`; the names, arguments and dict keys
are those of baseline1's session_tools (its prompts name them), the code is
evident's. Needs numpy.

An attempt is a dict (Attempt) with the keys
    level_index, attempt_index          ints (from level_LL_attempt_AA)
    path                                the attempt folder (str)
    initial_frame                       int16 array (rows x columns)
    initial_metadata                    initial_metadata.json as a dict
    initial_frame_filename, initial_frame_png_filename
    steps                               list of AttemptStep, in step order
    status                              RUNNING, LEVEL_COMPLETED or GAME_OVER (the last step's)
and a step (AttemptStep) has
    action                              {"name": "ACTION1"}, with "x", "y" for ACTION6
    final_frame                         int16 array of step_NNNN_final.txt
    metadata                            step_NNNN_metadata.json as a dict
    final_frame_filename, final_frame_png_filename
    intermediate_frame_filenames, intermediate_frame_png_filenames   sorted lists
    observed_status                     GAME_OVER when the step's state is, LEVEL_COMPLETED
                                        when levels_completed reached the level, else RUNNING

Errors name the file: a frame with a character that is not a hex digit
(a byte-order mark included), rows of different widths, a metadata file
that is not JSON, a step without its final frame before the game ended.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from game_status import GAME_OVER, LEVEL_COMPLETED, RUNNING

ROOT = Path(__file__).resolve().parent
CLIENT_DIR = ROOT / "client"
SESSION_DIR = CLIENT_DIR / "session"

# Bounds of one file read: a frame of up to 4096 x 4096 cells, a metadata file.
MAX_FRAME_BYTES = 4097 * 4096 * 2
MAX_METADATA_BYTES = 1 << 20

ATTEMPT_DIR = re.compile(r"level_(\d+)_attempt_(\d+)\Z")
STEP_METADATA = re.compile(r"step_(\d{4})_metadata\.json\Z")
HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
# Action ids as evident's older recordings wrote them (ints).
ACTION_NAMES = {0: "RESET", 1: "ACTION1", 2: "ACTION2", 3: "ACTION3", 4: "ACTION4", 5: "ACTION5", 6: "ACTION6", 7: "ACTION7"}


class AttemptStep(TypedDict):
    action: dict[str, Any]
    final_frame: np.ndarray
    metadata: dict[str, Any]
    final_frame_filename: str
    final_frame_png_filename: str
    intermediate_frame_filenames: list[str]
    intermediate_frame_png_filenames: list[str]
    observed_status: str


class Attempt(TypedDict):
    level_index: int
    attempt_index: int
    path: str
    initial_frame: np.ndarray
    initial_metadata: dict[str, Any]
    initial_frame_filename: str
    initial_frame_png_filename: str
    steps: list[AttemptStep]
    status: str


def _read_bytes(path: Path, limit: int) -> bytes:
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError("%s: larger than %d bytes" % (path, limit))
    return data


def load_ascii_frame(path: Path | str) -> np.ndarray:
    """An ASCII frame file (one hex digit per cell, a row per line, blank
    lines skipped) as an int16 array; no rows: a 0x0 array."""
    path = Path(path)
    text = _read_bytes(path, MAX_FRAME_BYTES).decode("utf-8", errors="replace")
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        for column, char in enumerate(line, 1):
            if char not in HEX_DIGITS:
                what = "a byte-order mark (U+FEFF)" if char == "\ufeff" else repr(char)
                raise ValueError("%s:%d:%d: %s is not a hex digit 0-F" % (path, number, column, what))
        if rows and len(line) != len(rows[0]):
            raise ValueError("%s:%d: row has %d cells, the first row %d (inconsistent ASCII frame row widths)"
                             % (path, number, len(line), len(rows[0])))
        rows.append([int(char, 16) for char in line])
    if not rows:
        return np.zeros((0, 0), dtype=np.int16)
    return np.array(rows, dtype=np.int16)


# baseline1's private name for the same reader.
_load_ascii_frame = load_ascii_frame


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(_read_bytes(path, MAX_METADATA_BYTES).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError("%s: not JSON: %s" % (path, exc)) from None
    if not isinstance(value, dict):
        raise ValueError("%s: not a JSON object" % path)
    return value


def _action(path: Path, action_input: Any) -> dict[str, Any]:
    """The step's action as the engine takes it, from action_input."""
    if not isinstance(action_input, dict) or "id" not in action_input:
        raise ValueError("%s: action_input has no id" % path)
    name = action_input["id"]
    if isinstance(name, int) and not isinstance(name, bool):
        if name not in ACTION_NAMES:
            raise ValueError("%s: action_input.id %d is not an action 0..7" % (path, name))
        name = ACTION_NAMES[name]
    action = {"name": name}
    data = action_input.get("data") or {}
    for key in ("x", "y"):
        if key in data:
            action[key] = data[key]
    return action


def _observed_status(level_index: int, metadata: dict[str, Any]) -> str:
    if metadata.get("state") == GAME_OVER:
        return GAME_OVER
    if int(metadata.get("levels_completed", 0)) >= level_index:
        return LEVEL_COMPLETED
    return RUNNING


def _step(folder: Path, level_index: int, number: int) -> AttemptStep:
    stem = "step_%04d" % number
    metadata_path = folder / (stem + "_metadata.json")
    final = folder / (stem + "_final.txt")
    metadata = _read_json(metadata_path)
    return {
        "action": _action(metadata_path, metadata.get("action_input")),
        "final_frame": load_ascii_frame(final),
        "metadata": metadata,
        "final_frame_filename": str(final),
        "final_frame_png_filename": str(folder / (stem + "_final.png")),
        "intermediate_frame_filenames": [str(p) for p in sorted(folder.glob(stem + "_intermediate_*.txt"))],
        "intermediate_frame_png_filenames": [str(p) for p in sorted(folder.glob(stem + "_intermediate_*.png"))],
        "observed_status": _observed_status(level_index, metadata),
    }


def _attempt(folder: Path, level_index: int, attempt_index: int) -> Attempt:
    numbers = sorted(int(m.group(1)) for m in (STEP_METADATA.match(p.name) for p in folder.iterdir()) if m)
    steps: list[AttemptStep] = []
    for number in numbers:
        if not (folder / ("step_%04d_final.txt" % number)).is_file():
            # The client records a step's metadata first: after GAME_OVER
            # a step without frames is the refused one, ignored.
            if steps and steps[-1]["observed_status"] == GAME_OVER:
                continue
            raise FileNotFoundError("%s: step %04d has no final frame, and the attempt had not ended"
                                    % (folder, number))
        steps.append(_step(folder, level_index, number))
    initial = folder / "initial_frame.txt"
    return {
        "level_index": level_index,
        "attempt_index": attempt_index,
        "path": str(folder),
        "initial_frame": load_ascii_frame(initial),
        "initial_metadata": _read_json(folder / "initial_metadata.json"),
        "initial_frame_filename": str(initial),
        "initial_frame_png_filename": str(folder / "initial_frame.png"),
        "steps": steps,
        "status": steps[-1]["observed_status"] if steps else RUNNING,
    }


def _session(session_dir: Path | str | None) -> Path:
    if session_dir is not None:
        return Path(session_dir)
    if not SESSION_DIR.is_dir():
        raise FileNotFoundError("No client session was found.")
    return SESSION_DIR


def _attempt_folders(session: Path) -> list[tuple[int, int, Path]]:
    out = []
    for path in session.iterdir():
        m = ATTEMPT_DIR.match(path.name)
        if m and path.is_dir():
            out.append((int(m.group(1)), int(m.group(2)), path))
    out.sort(key=lambda item: (item[0], item[1]))
    return out


def read_session_attempts(session_dir: Path | str | None = None) -> dict[int, list[Attempt]]:
    """Every attempt of the session by level, each level's in attempt order."""
    by_level: dict[int, list[Attempt]] = {}
    for level, attempt, folder in _attempt_folders(_session(session_dir)):
        by_level.setdefault(level, []).append(_attempt(folder, level, attempt))
    return by_level


def read_all_attempts_for_level(level_index: int, session_dir: Path | str | None = None) -> list[Attempt]:
    """The attempts of one level in attempt order ([] when it has none)."""
    return read_session_attempts(session_dir).get(int(level_index), [])


def read_latest_attempt_for_level(level_index: int, session_dir: Path | str | None = None) -> Attempt:
    """The level's last attempt; RuntimeError when it has none."""
    attempts = read_all_attempts_for_level(level_index, session_dir)
    if not attempts:
        raise RuntimeError("No level-%d attempts found in the latest session." % int(level_index))
    return attempts[-1]


def read_attempt_for_level(level_index: int, attempt_index: int, session_dir: Path | str | None = None) -> Attempt:
    """Attempt attempt_index of the level; RuntimeError when there is none."""
    for attempt in read_all_attempts_for_level(level_index, session_dir):
        if attempt["attempt_index"] == int(attempt_index):
            return attempt
    raise RuntimeError("No level-%d attempt-%d found in the latest session." % (int(level_index), int(attempt_index)))


def read_current_attempt(session_dir: Path | str | None = None) -> Attempt:
    """The last attempt of the highest level recorded."""
    by_level = read_session_attempts(session_dir)
    if not by_level:
        raise FileNotFoundError("No attempts were found in the latest client session.")
    return by_level[max(by_level)][-1]


def get_current_level_id() -> int:
    """The highest level with an attempt folder."""
    folders = _attempt_folders(_session(None))
    if not folders:
        raise FileNotFoundError("No attempts were found in the latest client session.")
    return max(level for level, _, _ in folders)


def truncate_attempt(attempt: Attempt, step_count: int) -> Attempt:
    """A copy of attempt with its first step_count steps (status RUNNING
    when steps were cut)."""
    total = len(attempt["steps"])
    if step_count < 0:
        raise ValueError("step_count must be non-negative.")
    if step_count > total:
        raise ValueError("step_count %d exceeds attempt length %d." % (step_count, total))
    out = copy.copy(attempt)
    out["steps"] = [copy.copy(step) for step in attempt["steps"][:step_count]]
    if step_count < total:
        out["status"] = RUNNING
    return out


def read_attempt_prefix_for_level(level_index: int, attempt_index: int, step_count: int,
                                  session_dir: Path | str | None = None) -> Attempt:
    """Attempt attempt_index of the level, cut to its first step_count steps."""
    return truncate_attempt(read_attempt_for_level(level_index, attempt_index, session_dir), step_count)


def attempt_step_count(attempt: Attempt) -> int:
    """How many steps the attempt holds."""
    return len(attempt["steps"])
