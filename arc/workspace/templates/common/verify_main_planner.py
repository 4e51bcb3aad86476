"""Check the main planner from the initial state of every completed level
(baseline1's verify_main_planner.py; evident arc planner verify).
Launcher: stdlib only."""

import sys

import evident_launch as launch

if __name__ == "__main__":
    cfg = launch.config("verify_main_planner.py")
    launch.run("verify_main_planner.py", ["planner", "verify", "--workspace", launch.ROOT] + launch.model_args(cfg) + sys.argv[1:])
