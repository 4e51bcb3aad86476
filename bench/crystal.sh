#!/usr/bin/env bash
# bench/crystal.sh — time `evident crystal score` on the paper-size synthetic
# set (6,372 items × 20 models, bench/crystalgen) with the lexical similarity,
# against the straightforward alternative: a plain Python loop of the same
# word-overlap Match F1 (tokens \w+, common ÷ √(n·m), > 0.30, greedy 1:1),
# written here, one model after another. Prints wall seconds of each.
#
#   bash bench/crystal.sh [DIR]      (DIR default: a temporary directory)
#
# The cached-embedding figure comes from the Go benchmark:
#   go test ./bench/crystalset -run x -bench PaperSize -benchtime 3x
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d)}
go build -o "$dir/evident" ./cmd/evident
go run ./bench/crystalgen -out "$dir"
t0=$(date +%s.%N)
"$dir/evident" crystal score --refs "$dir/refs.json" --preds "$dir/preds.jsonl" --profile paper --json >"$dir/table.json"
t1=$(date +%s.%N)
echo "evident crystal score (lexical, paper, 20 models): $(echo "$t1 - $t0" | bc) s"
py=/usr/bin/python3
t0=$(date +%s.%N)
"$py" - "$dir" <<'PY'
import json, re, sys, math, collections
d = sys.argv[1]
refs = json.load(open(d + "/refs.json"))
tok = lambda s: re.findall(r"\w+", s.lower())
def f1(pred, ref):
    if not pred or not ref:
        return 0.0
    P = [collections.Counter(tok(s)) for s in pred]
    R = [collections.Counter(tok(s)) for s in ref]
    cand = []
    for i, a in enumerate(P):
        na = sum(a.values())
        for j, b in enumerate(R):
            nb = sum(b.values())
            s = 1.0 if na == 0 and nb == 0 else (0.0 if na == 0 or nb == 0 else sum((a & b).values()) / math.sqrt(na * nb))
            if s > 0.3:
                cand.append((s, i, j))
    cand.sort(reverse=True)
    up, ur = set(), set()
    for s, i, j in cand:
        if i not in up and j not in ur:
            up.add(i); ur.add(j)
    p, r = len(up) / len(pred), len(ur) / len(ref)
    return 2 * p * r / (p + r) if p + r else 0.0
tot = collections.defaultdict(float)
for line in open(d + "/preds.jsonl"):
    x = json.loads(line)
    tot[x["model"]] += f1(x["reasoning_steps"], refs[x["id"]]["reference_steps"])
print(len(tot), "models")
PY
t1=$(date +%s.%N)
echo "python loop (word-overlap Match F1 only, 20 models): $(echo "$t1 - $t0" | bc) s"
