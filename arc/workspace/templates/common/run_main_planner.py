"""Run the main planner from a recorded state and check its plan in the
engine (baseline1's run_main_planner.py; evident arc planner run).

    python3 run_main_planner.py --from-current
    python3 run_main_planner.py --from-initial LEVEL
    python3 run_main_planner.py --from-attempt LEVEL ATTEMPT STEP

Launcher: stdlib only."""

import sys

import evident_launch as launch

if __name__ == "__main__":
    cfg = launch.config("run_main_planner.py")
    args = sys.argv[1:]
    if not args:
        # evident's planner needs a start state; baseline1's script
        # requires one too (argparse: one of the three is required).
        print("usage: run_main_planner.py (--from-current | --from-initial LEVEL | --from-attempt LEVEL ATTEMPT STEP)")
        sys.exit(2)
    launch.run("run_main_planner.py", ["planner", "run", "--workspace", launch.ROOT] + launch.model_args(cfg) + args)
