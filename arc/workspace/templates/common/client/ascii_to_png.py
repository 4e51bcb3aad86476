"""Convert an ASCII frame dump into a PNG with the game palette (baseline1's
client/ascii_to_png.py; evident arc ascii-to-png).

    python3 ascii_to_png.py INPUT.txt [--output OUT.png] [--scale 8]

Prints the PNG's absolute path. Launcher: stdlib only."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import evident_launch as launch  # noqa: E402

if __name__ == "__main__":
    launch.run("ascii_to_png.py", ["ascii-to-png"] + sys.argv[1:])
