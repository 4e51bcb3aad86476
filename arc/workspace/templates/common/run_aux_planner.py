"""Run an auxiliary planner (level_N_planner_i) with an optional goal from a
recorded state, simulate its plan and write the frames to
aux_planner_frames/N/ (baseline1's run_aux_planner.py; evident arc
planner aux).

    python3 run_aux_planner.py level_4_planner_1 --goal '{"x": 3}' --from-current

Launcher: stdlib only."""

import sys

import evident_launch as launch

if __name__ == "__main__":
    cfg = launch.config("run_aux_planner.py")
    launch.run("run_aux_planner.py", ["planner", "aux", "--workspace", launch.ROOT] + launch.model_args(cfg) + sys.argv[1:])
