#!/usr/bin/env bash
# The review screen read from the store at platform scale (issue 13).
#
#   bench/review.sh                   # 100k turns
#   BENCH_SIZES="100000 1000000" bench/review.sh
#
# For each size N: generates N turns (bench/gen), judges them twice into a
# fresh store file with `evident judge --db` (run 1 with the seed profile,
# run 2 with the extended one, so the two differ on many turns), starts
# `evident serve` on the file and times with curl (real HTTP, a fresh
# connection per request): the first view of each review queue of run 1
# (the first computes the queues in one pass over the run and keeps them in
# the store), the same pages again, the same pages after a server restart
# (read from the store), the off-canon queue's page 2, and run 2's queue
# with the changes panel from run 1 (?from=1) and its next page of changes.
# Repeated pages are timed BENCH_REPEAT times (default 3, median shown).
# Server VmRSS is sampled every 0.2 s while the pages run; VmHWM (peak) is
# read at the end of each server. Files go to $BENCH_OUT (default
# bench/out/, gitignored).
set -euo pipefail

cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/out}
sizes=${BENCH_SIZES:-"100000"}
repeat=${BENCH_REPEAT:-3}
port=${BENCH_PORT:-18474}

. bench/screen-lib.sh # tools, builds, median, ms

pid= sampler=
start_server() { # db rss_log
	"$out/evident" serve --db "$1" --addr "127.0.0.1:$port" >>"$out/review-serve.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/runs" && break; sleep 0.1; done
	(while kill -0 "$pid" 2>/dev/null; do awk '/VmRSS/ { print $2 }' "/proc/$pid/status" >>"$2" 2>/dev/null || true; sleep 0.2; done) &
	sampler=$!
}
hwm=
stop_server() { # sets hwm (VmHWM in MB); not in $(…): wait needs this shell
	hwm=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")
	kill "$sampler" 2>/dev/null || true
	kill "$pid"; wait "$pid" 2>/dev/null || true
	trap - EXIT
}
row() { printf '%-44s %10s\n' "$1" "$2"; }

for n in $sizes; do
	turns="$out/turns-$n.jsonl"
	db="$out/review-$n.db"
	[[ -s $turns ]] || "$out/gen" -n "$n" -seed 1 >"$turns"
	rm -f "$db" "$db-wal" "$db-shm"
	for profile in seed extended; do
		"$out/evident" judge --db "$db" --turns "$turns" --cards "$out/cards.json" --lexicon "$out/lexicon.csv" \
			--speech-profile "$profile" >/dev/null 2>>"$out/review-judge-$n.err"
	done
	rss_log="$out/review-rss-$n.txt"
	: >"$rss_log"
	base="http://127.0.0.1:$port/runs"
	printf '\n## %d turns (two runs)\n' "$n"
	row "page" "ms"

	start_server "$db" "$rss_log"
	for q in forbidden offcanon endings; do row "run 1 $q, first view (1st computes)" "$(ms "$base/1/review/$q")"; done
	for q in forbidden offcanon endings; do
		row "run 1 $q, again (median)" "$(for _ in $(seq "$repeat"); do ms "$base/1/review/$q"; done | median)"
	done
	stop_server; hwm1=$hwm

	start_server "$db" "$rss_log"
	for q in forbidden offcanon endings; do row "run 1 $q, after a restart (stored)" "$(ms "$base/1/review/$q")"; done
	row "run 1 offcanon page 2 (median)" "$(for _ in $(seq "$repeat"); do ms "$base/1/review/offcanon?page=2"; done | median)"
	row "run 2 forbidden, first view, changes from run 1" "$(ms "$base/2/review/forbidden?from=1")"
	row "run 2 with changes from run 1 (median)" "$(for _ in $(seq "$repeat"); do ms "$base/2/review/forbidden?from=1"; done | median)"
	next=$(curl -sS "$base/2/review/forbidden?from=1" | grep -o 'from=1&amp;after=[0-9]*' | head -1 | sed 's/&amp;/\&/' || true)
	if [[ -n $next ]]; then
		row "run 2 changes, next page (median)" "$(for _ in $(seq "$repeat"); do ms "$base/2/review/forbidden?$next"; done | median)"
	fi
	stop_server; hwm2=$hwm

	rss_max=$(sort -n "$rss_log" | tail -1 | awk '{ printf "%.0f", $1 / 1024 }')
	row "server VmRSS max (sampled)" "${rss_max} MB"
	row "server VmHWM (peak), first / second server" "${hwm1} / ${hwm2} MB"
done
