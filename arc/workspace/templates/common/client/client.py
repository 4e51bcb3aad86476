"""The game client of this workspace (baseline1's client/client.py; evident
arc client). Run it from inside client/, as baseline1's agents do:

    python3 client.py start GAME_ID
    python3 client.py move ACTION1
    python3 client.py move ACTION6 --x 15 --y 47     (or: move ACTION6 15 47)
    python3 client.py move ACTION5 --reasoning-json '{"why": "open the door"}'
    python3 client.py status

It records every response in client/session/ and talks to the server named
in ../evident_workspace.json (evident arc init --server URL).

The arguments are read as baseline1's client reads them (its argparse
parser: a missing or unknown command is exit 2 with the usage line on
stderr), and its refusals print its words: an action that is not one of the
official names exactly ("Invalid command: Unknown action: action1. ..."),
ACTION6 without both coordinates, coordinates outside 0..63, reasoning that
is not JSON. One extension: `move ACTION6 X Y`.
Launcher: stdlib only."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import evident_launch as launch  # noqa: E402

SCRIPT = "client.py"
OFFICIAL_ACTIONS = ("RESET", "ACTION1", "ACTION2", "ACTION3", "ACTION4", "ACTION5", "ACTION6", "ACTION7")


def parser():
    """baseline1's command line: start GAME_ID [--seed N], move ACTION
    [--x X] [--y Y] [--reasoning-json JSON], status."""
    p = argparse.ArgumentParser(description="CLI client for the local server. One command per move.")
    sub = p.add_subparsers(dest="command")
    start = sub.add_parser("start", help="Start a new game session.")
    start.add_argument("game_id")
    start.add_argument("--seed", type=int, default=0)
    move = sub.add_parser("move", help="Send one action to the active game session.")
    move.add_argument("action")
    move.add_argument("--x", type=int, default=None)
    move.add_argument("--y", type=int, default=None)
    move.add_argument("--reasoning-json", default=None)
    sub.add_parser("status", help="Print the active client state and current server state.")
    return p


def invalid(msg):
    """baseline1's client on a ValueError: status 1, the message on stdout."""
    print("Invalid command: %s" % msg)
    sys.exit(1)


def is_int(s):
    try:
        int(s)
        return True
    except ValueError:
        return False


def translate(argv):
    """baseline1's arguments -> evident arc client's (exits on bad ones)."""
    p = parser()
    args, extra = p.parse_known_args(argv)
    if args.command is None:
        p.error("a command is required.")
    common = ["--workspace", launch.ROOT]
    if args.command == "move" and extra and len(extra) == 2 and all(is_int(v) for v in extra) \
            and args.action.strip() == "ACTION6" and args.x is None and args.y is None:
        # evident's extension: move ACTION6 X Y.
        args.x, args.y = int(extra[0]), int(extra[1])
        extra = []
    if extra:
        p.error("unrecognized arguments: %s" % " ".join(extra))
    if args.command == "start":
        if args.seed != 0:
            print("%s: the level seed is the server's: start it with evident arc serve-games --seed %d" % (SCRIPT, args.seed))
            sys.exit(1)
        cfg = launch.config(SCRIPT)
        return ["client", "start"] + common + ["--url", str(cfg.get("server_url", "")), "--", args.game_id]
    if args.command == "status":
        return ["client", "status"] + common
    # move: baseline1's checks, in its order (canonical_action, then the
    # coordinates, then the reasoning).
    action = args.action.strip()
    if action not in OFFICIAL_ACTIONS:
        invalid("Unknown action: %s. Use official names only: %s." % (args.action, ", ".join(OFFICIAL_ACTIONS)))
    x, y = args.x, args.y
    if action == "ACTION6":
        if x is None or y is None:
            invalid("ACTION6 requires both --x and --y.")
    elif x is not None or y is not None:
        invalid("--x/--y are only valid with ACTION6.")
    positional = [action]
    if x is not None:
        if not (0 <= x <= 63 and 0 <= y <= 63):
            invalid("ACTION6 coordinates must be inside the 64x64 frame: x and y must be in 0..63.")
        positional += [str(x), str(y)]
    flags = []
    if args.reasoning_json:
        try:
            json.loads(args.reasoning_json)
        except ValueError as exc:
            invalid(exc)
        flags = ["--reasoning", args.reasoning_json]
    return ["client", "move"] + common + flags + ["--"] + positional


if __name__ == "__main__":
    launch.run(SCRIPT, translate(sys.argv[1:]))
