"""Shared helper of this workspace's launchers (written by `evident arc init`).

Every agent-facing script of this workspace (verify_world_model.py,
plan_executor.py, client/client.py, ...) is a thin launcher: it replaces
itself with evident's Go implementation, which prints what baseline1's
script of the same name prints. Python 3 standard library only.

The evident binary: $EVIDENT_BIN, else the path recorded at init in
evident_workspace.json. The game server: evident_workspace.json's
server_url (evident arc init --server URL).
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
CONFIG_PATH = os.path.join(ROOT, "evident_workspace.json")
MAX_CONFIG_BYTES = 1 << 16


def config(script):
    """The workspace config; a bad one ends the script with status 1."""
    try:
        with open(CONFIG_PATH, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ValueError("larger than %d bytes" % MAX_CONFIG_BYTES)
        cfg = json.loads(data.decode("utf-8"))
        if not isinstance(cfg, dict):
            raise ValueError("not a JSON object")
        return cfg
    except (OSError, ValueError) as exc:
        print("%s: cannot read %s: %s" % (script, CONFIG_PATH, exc))
        sys.exit(1)


def model_args(cfg):
    """The world-model flags of the model this workspace was made for."""
    if cfg.get("model") == "python":
        return ["--model-cmd", "python"]
    return []


def run(script, args, cwd=None):
    """Exec `evident arc ARGS...` speaking as baseline1's SCRIPT."""
    cfg = config(script)
    binary = os.environ.get("EVIDENT_BIN") or cfg.get("evident_bin") or "evident"
    env = dict(os.environ)
    env["EVIDENT_SCRIPT_NAME"] = script
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if cwd:
            os.chdir(cwd)
        os.execvpe(binary, [binary, "arc"] + list(args), env)
    except OSError as exc:
        print("%s: cannot run evident (%s): %s; set EVIDENT_BIN to the evident binary" % (script, binary, exc))
        sys.exit(1)
