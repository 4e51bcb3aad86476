"""Verify the world model against the whole recorded session (baseline1's
verify_world_model.py; evident arc verify). Launcher: stdlib only."""

import sys

import evident_launch as launch

if __name__ == "__main__":
    cfg = launch.config("verify_world_model.py")
    launch.run("verify_world_model.py", ["verify", "--workspace", launch.ROOT] + launch.model_args(cfg) + sys.argv[1:])
