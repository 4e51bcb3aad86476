"""Write initial_full_frames/level_N.png for every initial_full_frames/level_N.txt
(baseline1's plot_initial_full_frames.py; evident arc
plot-initial-full-frames). Launcher: stdlib only."""

import sys

import evident_launch as launch

if __name__ == "__main__":
    launch.run("plot_initial_full_frames.py", ["plot-initial-full-frames", "--workspace", launch.ROOT] + sys.argv[1:])
