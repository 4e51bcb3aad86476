"""The game client of this workspace (baseline1's client/client.py; evident
arc client). Run it from inside client/, as baseline1's agents do:

    python3 client.py start GAME_ID
    python3 client.py move ACTION1
    python3 client.py move ACTION6 --x 15 --y 47     (or: move ACTION6 15 47)
    python3 client.py move ACTION5 --reasoning-json '{"why": "open the door"}'
    python3 client.py status

It records every response in client/session/ and talks to the server named
in ../evident_workspace.json (evident arc init --server URL).
Launcher: stdlib only."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import evident_launch as launch  # noqa: E402

SCRIPT = "client.py"


def translate(args, cfg):
    """baseline1's argument forms -> evident arc client's."""
    if not args:
        return ["client", "--help"]
    command, rest = args[0], args[1:]
    common = ["--workspace", launch.ROOT]
    if command == "start":
        out, seed = [], None
        i = 0
        while i < len(rest):
            if rest[i] == "--seed" and i + 1 < len(rest):
                seed, i = rest[i + 1], i + 2
            elif rest[i].startswith("--seed="):
                seed, i = rest[i][len("--seed="):], i + 1
            else:
                out.append(rest[i])
                i += 1
        if seed not in (None, "0"):
            print("%s: the level seed is the server's: start it with evident arc serve-games --seed %s" % (SCRIPT, seed))
            sys.exit(1)
        return ["client", "start"] + common + ["--url", str(cfg.get("server_url", ""))] + ["--"] + out
    if command == "move":
        positional, flags, xy = [], [], {}
        i = 0
        while i < len(rest):
            a = rest[i]
            name, eq, value = a.partition("=")
            if name in ("--x", "--y", "--reasoning-json"):
                if not eq:
                    if i + 1 >= len(rest):
                        print("Invalid command: %s needs a value." % name)
                        sys.exit(1)
                    value, i = rest[i + 1], i + 1
                if name == "--reasoning-json":
                    flags += ["--reasoning", value]
                else:
                    xy[name] = value
            else:
                positional.append(a)
            i += 1
        if xy:
            positional += [xy.get("--x", ""), xy.get("--y", "")]
        return ["client", "move"] + common + flags + ["--"] + positional
    return ["client", command] + common + rest


if __name__ == "__main__":
    cfg = launch.config(SCRIPT)
    launch.run(SCRIPT, translate(sys.argv[1:], cfg))
