#!/usr/bin/env bash
# The judge screen read from the store at platform scale (issue 13).
#
#   bench/store.sh                    # 100k and 1M turns
#   BENCH_SIZES="100000" bench/store.sh
#
# For each size N: generates N turns (bench/gen), imports and judges them
# into a fresh store file with `evident judge --db`, BENCH_JUDGE_REPEAT times
# (default 3; timed with /usr/bin/time -v: median wall and CPU, the largest
# max RSS; and the moment the run is stored — listed, every page answering —
# before the command writes its search index and exits), starts `evident
# serve` on the file, and
# times with curl (real HTTP, a fresh connection per request) the cold first
# view of the run after the start, then each page BENCH_REPEAT times (default
# 3, median shown): the run page, filtered pages, a search, a two-letter
# search (the scan path), one turn, page N of one verdict, the
# models-disagree page and its page N, and once the first view of a search
# (its counts are then kept, so the repeats of a search are warm). Then,
# unless BENCH_DURING=0, the same pages and review decisions while a second
# import of the same turns runs into the store (p50/p99/max over every
# request, errors, decisions saved). Server VmRSS is sampled every 0.2 s
# while the pages run; VmHWM (peak) is read at the end. Prints one table per
# size. Files go to $BENCH_OUT (default bench/out/, gitignored).
set -euo pipefail

cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/out}
sizes=${BENCH_SIZES:-"100000 1000000"}
repeat=${BENCH_REPEAT:-3}
judge_repeat=${BENCH_JUDGE_REPEAT:-3}
port=${BENCH_PORT:-18473}

. bench/screen-lib.sh # tools, builds, median, ms

for n in $sizes; do
	turns="$out/turns-$n.jsonl"
	db="$out/store-$n.db"
	[[ -s $turns ]] || "$out/gen" -n "$n" -seed 1 >"$turns"
	# import + judge into a fresh store, judge_repeat times: median wall and
	# CPU (user + sys), the largest max RSS.
	# The command stores the run (listed, every page works), then writes
	# its search index before it exits: stderr's lines are stamped to tell
	# the two apart (stored = the "stored run" line).
	walls=() cpus=() stored=() judge_rss=0
	for r in $(seq "$judge_repeat"); do
		rm -f "$db" "$db-wal" "$db-shm" "$db-search" "$db-search-wal" "$db-search-shm"
		tv="$out/time-$n-$r.txt"
		t0=$(date +%s.%N)
		/usr/bin/time -v -o "$tv" "$out/evident" judge --db "$db" --turns "$turns" --cards "$out/cards.json" \
			--lexicon "$out/lexicon.csv" 2>&1 >/dev/null | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$out/judge-$n.err"
		stored+=("$(awk -v t0="$t0" '/ stored run / { printf "%.1f", $1 - t0; exit }' "$out/judge-$n.err")")
		walls+=("$(awk -F': ' '/Elapsed/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$tv")")
		cpus+=("$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.1f", u + s }' "$tv")")
		rss=$(awk -F': ' '/Maximum resident/ { printf "%.0f", $2 / 1024 }' "$tv")
		(( rss > judge_rss )) && judge_rss=$rss
	done
	judge_s=$(printf '%s\n' "${walls[@]}" | median)
	stored_s=$(printf '%s\n' "${stored[@]}" | median)
	judge_cpu=$(printf '%s\n' "${cpus[@]}" | median)
	size_mb=$(du -m "$db" | cut -f1)

	"$out/evident" serve --db "$db" --addr "127.0.0.1:$port" >"$out/serve-$n.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/runs" && break; sleep 0.1; done
	base="http://127.0.0.1:$port/runs/1"
	rss_log="$out/rss-$n.txt"
	: >"$rss_log"
	(while kill -0 "$pid" 2>/dev/null; do awk '/VmRSS/ { print $2 }' "/proc/$pid/status" >>"$rss_log" 2>/dev/null || true; sleep 0.2; done) &
	sampler=$!

	cold=$(ms "$base")
	# A search's counts are kept per filter (store, textCountCache): its
	# first view is timed once, apart from the repeated (kept) ones.
	first_search=$(ms "$base?q=%EB%B0%B1%EA%B2%B0")
	pageN=$(( n / 5 / 200 / 2 ))
	declare -A pages=(
		["run page"]="$base"
		["verdict 말투 어긋남"]="$base?verdict=%EB%A7%90%ED%88%AC%20%EC%96%B4%EA%B8%8B%EB%82%A8"
		["character"]="$base?character=CHR-0002"
		["character+model"]="$base?character=CHR-0002&model=gpt-4o-mini"
		["session"]="$base?session=S-0000042"
		["search 청명검"]="$base?q=%EC%B2%AD%EB%AA%85%EA%B2%80"
		["search 2 letters 먹쇠"]="$base?q=%EB%A8%B9%EC%87%A0"
		["search 1 letter 백"]="$base?q=%EB%B0%B1"
		["one turn"]="$base?turn=T-000000777"
		["page $pageN of a verdict"]="$base?verdict=%EB%A7%90%ED%88%AC%20%EC%96%B4%EA%B8%8B%EB%82%A8&page=$pageN"
		["disagreements"]="$base/disagree"
		["disagreements page 20"]="$base/disagree?page=20"
	)
	printf '\n## %d turns: store %d MB; import + judge: run stored %.1f s, with its search index %.1f s wall, %.1f s CPU (median of %d; load average %s), max RSS %d MB\n' \
		"$n" "$size_mb" "$stored_s" "$judge_s" "$judge_cpu" "$judge_repeat" "$(cut -d' ' -f1 /proc/loadavg)" "$judge_rss"
	printf '%-28s %10s\n' "page" "median ms"
	printf '%-28s %10s\n' "cold first view (restart)" "$cold"
	printf '%-28s %10s\n' "search 백결, first view" "$first_search"
	for name in "run page" "verdict 말투 어긋남" "character" "character+model" "session" "search 청명검" "search 2 letters 먹쇠" "search 1 letter 백" \
		"one turn" "page $pageN of a verdict" "disagreements" "disagreements page 20"; do
		t=$(for _ in $(seq "$repeat"); do ms "${pages[$name]}"; done | median)
		printf '%-28s %10s\n' "$name" "$t"
	done
	# While an import runs (issue 13: every page keeps answering, p99 ≤ 300
	# ms, and review decisions are saved): a second `judge --db` of the same
	# turns into the same store (another dataset and run) in the background;
	# meanwhile the pages above are fetched in turn, and after each round a
	# review decision (a forbidden-topic sample of run 1 confirmed) is
	# posted, until the import ends. Every request's time is kept; a non-200
	# page or a decision not answered 303 counts as an error.
	if [[ ${BENCH_DURING:-1} == 1 ]]; then
		# a review form's session cookie and CSRF value, as a browser posts them
		jar="$out/cookies-$n.txt"
		csrf=$(curl -sS -c "$jar" -b "$jar" "$base/review/forbidden" | grep -o 'name="csrf" value="[^"]*"' | head -1 | sed 's/.*value="//; s/"$//')
		forbidden=$(curl -sS "$base?verdict=%EA%B8%88%EC%A7%80%20%EC%86%8C%EC%9E%AC%20%EC%A0%91%EC%B4%89" | grep -o 'class="row v-forbidden" id="t-T-[0-9]\{9\}"' | grep -o 'T-[0-9]\{9\}' | sort -u | head -50)
		lat="$out/during-$n.txt"
		: >"$lat"
		errors=0 decisions=0 rounds=0
		"$out/evident" judge --db "$db" --turns "$turns" --cards "$out/cards.json" --lexicon "$out/lexicon.csv" \
			>/dev/null 2>"$out/judge-during-$n.err" &
		imp=$!
		while kill -0 "$imp" 2>/dev/null; do
			for name in "run page" "verdict 말투 어긋남" "character+model" "session" "search 청명검" "search 1 letter 백" "one turn" "page $pageN of a verdict" "disagreements"; do
				if t=$(ms "${pages[$name]}"); then echo "$t page ${name// /_}" >>"$lat"; else errors=$((errors + 1)); fi
			done
			turn=$(echo "$forbidden" | sed -n "$(( rounds % $(echo "$forbidden" | wc -l) + 1 ))p")
			res=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' -b "$jar" --data "csrf=$csrf&turn=$turn&value=confirm&who=bench" "$base/review/forbidden")
			if [[ ${res%% *} == 303 ]]; then
				decisions=$((decisions + 1))
				awk -v t="${res#* }" 'BEGIN { printf "%.0f decision\n", t * 1000 }' >>"$lat"
			else
				errors=$((errors + 1))
			fi
			rounds=$((rounds + 1))
		done
		wait "$imp" || { echo "store.sh: the import during the pages failed (see $out/judge-during-$n.err)" >&2; exit 1; }
		# pct KIND: count, p50, p99 and max ms of the requests of one kind
		pct() { awk -v k="$1" '$2 == k { print $1 }' "$lat" | sort -n |
			awk '{ a[NR] = $1 } END { i = int(NR * 0.99 + 0.5); if (i < 1) i = 1; if (NR == 0) print 0, "-", "-", "-"; else print NR, a[int((NR + 1) / 2)], a[i], a[NR] }'; }
		printf '%-28s %10s\n' "while an import runs:" "n p50/p99/max ms"
		read -r k p50 p99 worst < <(pct page)
		printf '%-28s %10s\n' "  pages" "$k $p50/$p99/$worst"
		read -r k p50 p99 worst < <(pct decision)
		printf '%-28s %10s\n' "  decisions saved" "$k $p50/$p99/$worst"
		printf '%-28s %10s\n' "  errors" "$errors"
	fi
	hwm=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")
	kill "$sampler" 2>/dev/null || true
	rss_max=$(sort -n "$rss_log" | tail -1 | awk '{ printf "%.0f", $1 / 1024 }')
	printf '%-28s %10s\n' "server VmRSS max (sampled)" "${rss_max} MB"
	printf '%-28s %10s\n' "server VmHWM (peak)" "${hwm} MB"
	kill "$pid"; wait "$pid" 2>/dev/null || true
	trap - EXIT
	unset pages
done
