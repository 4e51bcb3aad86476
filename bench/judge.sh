#!/usr/bin/env bash
# End-to-end throughput of `evident judge` on large synthetic chat_turn files.
#
#   bench/judge.sh            # 100k and 1M turns (about 50 MB and 510 MB in)
#   BENCH_BIG=200000 bench/judge.sh   # a smaller "big" file for a quick look
#
# Builds evident and bench/gen, generates the turns into $BENCH_OUT
# (default bench/out/, gitignored) next to copies of the demo cards.json and
# lexicon.csv, and times `evident judge` with /usr/bin/time -v:
# Each is run BENCH_REPEAT times (default 3); the table shows the median.
#   1. BIG turns, all cores (--workers 0 = GOMAXPROCS)
#   2. BIG turns, --workers 1 (the straightforward single-threaded run)
#   3. 100k turns, all cores (max RSS must not grow with file size)
#   4. with BENCH_HUGE=N (say 3000000), N turns, all cores, to see that max RSS
#      stays flat further out; that input is deleted afterwards
# Every run must account for each input line as a record or a reject.
# The input files stay in the page cache (just written), so this measures the
# judge, not the disk. On a shared machine, compare cpu s (user + sys) too:
# wall time includes waiting for other processes; load is printed per run.
# hyperfine, when installed, repeats run 3 (BENCH_HYPERFINE=0 skips it).
set -euo pipefail

cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/out}
big=${BENCH_BIG:-1000000}
small=${BENCH_SMALL:-100000}
seed=${BENCH_SEED:-1}
bad=${BENCH_BAD:-0.0001}

if [[ ! -x /usr/bin/time ]]; then
	echo "judge.sh: /usr/bin/time is missing; install it with: apt-get install -y time (Debian package 'time')" >&2
	exit 1
fi

mkdir -p "$out"
echo "# building" >&2
go build -o "$out/evident" ./cmd/evident
go build -o "$out/gen" ./bench/gen
cp persona/demo/data/cards.json persona/demo/data/lexicon.csv "$out/"

gen() { # gen N FILE
	local n=$1 f=$2 t0 t1
	t0=$(date +%s.%N)
	"$out/gen" -n "$n" -seed "$seed" -bad "$bad" >"$f"
	t1=$(date +%s.%N)
	awk -v n="$n" -v t0="$t0" -v t1="$t1" -v f="$f" -v size="$(stat -c %s "$f")" \
		'BEGIN { printf "# generated %d turns in %.1f s: %s (%d bytes)\n", n, t1 - t0, f, size }' >&2
}

turns_big="$out/turns-$big.jsonl"
turns_small="$out/turns-$small.jsonl"
gen "$big" "$turns_big"
gen "$small" "$turns_small"

cores=$(nproc)
rows=()

# judge FILE WORKERS: BENCH_REPEAT timed runs (default 3); appends a table row
# with the median wall time (and that run's CPU time) and the largest max RSS
# of all runs. The machine is shared, so single runs vary by 10-20 %.
judge() {
	local f=$1 w=$2 tag recs rejs tv runs=() i
	tag=$(basename "$f" .jsonl)-w$w
	recs="$out/$tag.records.jsonl"
	rejs="$out/$tag.rejects.jsonl"
	tv="$out/$tag.time.txt"
	for ((i = 0; i < ${BENCH_REPEAT:-3}; i++)); do
		echo "# judging $f with --workers $w (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
		/usr/bin/time -v -o "$tv" "$out/evident" judge --turns "$f" --cards "$out/cards.json" \
			--lexicon "$out/lexicon.csv" --out "$recs" --rejects "$rejs" --workers "$w" 2>"$out/$tag.stderr"
		echo "#   $(tail -n 1 "$out/$tag.stderr")" >&2

		local in_lines rec_lines rej_lines
		in_lines=$(wc -l <"$f")
		rec_lines=$(wc -l <"$recs")
		rej_lines=$(wc -l <"$rejs")
		if ((rec_lines + rej_lines != in_lines)); then
			echo "judge.sh: $tag: $rec_lines records + $rej_lines rejects != $in_lines input lines" >&2
			exit 1
		fi
		echo "#   lines ok: $rec_lines records + $rej_lines rejects = $in_lines input lines" >&2
		runs+=("$(awk -F': ' '
			/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
			/User time/ { u = $2 } /System time/ { sy = $2 } /Maximum resident set size/ { rss = $2 }
			END { print wall, u, sy, rss }' "$tv")")
	done

	local median maxrss wall user sys shown_w
	median=$(printf '%s\n' "${runs[@]}" | sort -n -k1,1 | awk -v n="${#runs[@]}" 'NR == int((n + 1) / 2)')
	maxrss=$(printf '%s\n' "${runs[@]}" | awk '$4 > m { m = $4 } END { print m }')
	read -r wall user sys _ <<<"$median"
	shown_w=$w
	((w == 0)) && shown_w="$cores (all)"
	rows+=("$(awk -v n="$in_lines" -v w="$shown_w" -v wall="$wall" -v u="$user" -v s="$sys" -v rss="$maxrss" \
		-v fin="$(stat -c %s "$f")" -v fout="$(stat -c %s "$recs")" 'BEGIN {
		cpu = u + s
		printf "%9d  %-9s  %8.2f  %9.0f  %7.2f  %13.0f  %11.1f  %11.1f  %12.1f\n",
			n, w, wall, n / wall, cpu, n / cpu, rss / 1024, fin / 1048576, fout / 1048576 }')")
	rm -f "$recs"
}

judge "$turns_big" 0
judge "$turns_big" 1
judge "$turns_small" 0
if [[ -n ${BENCH_HUGE:-} ]]; then
	turns_huge="$out/turns-$BENCH_HUGE.jsonl"
	gen "$BENCH_HUGE" "$turns_huge"
	judge "$turns_huge" 0
	rm -f "$turns_huge"
fi

if [[ ${BENCH_HYPERFINE:-1} != 0 ]] && command -v hyperfine >/dev/null; then
	hyperfine --warmup 1 --runs 5 \
		"$out/evident judge --turns $turns_small --cards $out/cards.json --lexicon $out/lexicon.csv --out /dev/null --rejects /dev/null"
fi

echo
echo "evident judge, $cores cores ($(go version | cut -d' ' -f3), $(uname -m)); input in page cache"
printf '%9s  %-9s  %8s  %9s  %7s  %13s  %11s  %11s  %12s\n' \
	turns workers "wall s" "turns/s" "cpu s" "turns/cpu-s" "maxRSS MiB" "input MiB" "output MiB"
printf '%s\n' "${rows[@]}"
