"""Execute in-attempt actions in the real game, predicting each one with the
world model first; stop at the first mismatch (baseline1's plan_executor.py;
evident arc plan-exec).

    python3 plan_executor.py ACTION1 ACTION1 '{"name":"ACTION6","x":15,"y":47}'

Launcher: stdlib only."""

import sys

import evident_launch as launch

if __name__ == "__main__":
    cfg = launch.config("plan_executor.py")
    launch.run("plan_executor.py", ["plan-exec", "--workspace", launch.ROOT] + launch.model_args(cfg) + ["--"] + sys.argv[1:])
