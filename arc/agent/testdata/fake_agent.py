#!/usr/bin/env python3
"""A scripted stand-in for a coding agent (evident arc agent --demo and the
end-to-end test). It speaks like `codex exec --json`:

    fake_agent.py --scenario FILE exec --cd DIR [resume THREAD] --json

reads the prompt on stdin, plays turn N of the scenario (N counted in
FILE.turn), and prints JSON Lines events: thread.started (fresh sessions),
one item.completed per command run, turn.completed. Python 3 standard
library only.

Scenario (JSON): {"turns": [[step, ...], ...]}, each step one of
    {"run": [argv...], "cwd": "client"}   run a command in the workspace
    {"copy": {"dst": "src", ...}}          write workspace files from src
A turn past the end of the list does nothing.
"""

import json
import os
import shutil
import subprocess
import sys


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv):
    scenario = cd = resume = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--scenario":
            scenario, i = argv[i + 1], i + 2
        elif a == "--cd":
            cd, i = argv[i + 1], i + 2
        elif a == "resume":
            resume, i = argv[i + 1], i + 2
        else:
            i += 1
    if scenario is None or cd is None:
        print("usage: fake_agent.py --scenario FILE exec --cd DIR [resume THREAD] --json", file=sys.stderr)
        return 2
    prompt = sys.stdin.read()
    with open(scenario, "rb") as f:
        sc = json.loads(f.read(1 << 20).decode("utf-8"))
    state_path = scenario + ".turn"
    state = {"turn": 0, "threads": 0}
    if os.path.exists(state_path):
        with open(state_path) as f:
            state = json.load(f)
    if resume is None:
        state["threads"] += 1
        thread = "fake-thread-%d" % state["threads"]
        emit({"type": "thread.started", "thread_id": thread})
    elif resume != "fake-thread-%d" % state["threads"]:
        print("fake_agent.py: unknown thread %s" % resume, file=sys.stderr)
        return 1
    n = state["turn"]
    state["turn"] = n + 1
    with open(state_path, "w") as f:
        json.dump(state, f)
    emit({"type": "turn.started"})
    emit({"type": "item.completed", "item": {"type": "agent_message", "text": "turn %d, prompt of %d characters" % (n + 1, len(prompt))}})
    turns = sc.get("turns", [])
    for step in ((turns[n] if n < len(turns) else None) or []):
        if "copy" in step:
            for dst, src in sorted(step["copy"].items()):
                shutil.copyfile(src, os.path.join(cd, dst))
                emit({"type": "item.completed", "item": {"type": "file_change", "path": dst}})
            continue
        cwd = os.path.join(cd, step.get("cwd", ""))
        p = subprocess.run(step["run"], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.stdout.decode("utf-8", "replace")
        emit({"type": "item.completed", "item": {"type": "command_execution", "command": " ".join(step["run"]),
                                                  "aggregated_output": out[-20000:], "exit_code": p.returncode}})
    emit({"type": "turn.completed"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
