#!/usr/bin/env bash
# Live judging figures (issue 17): the HTTP API and the Kafka consumer.
#
#   bench/live.sh                 # GOMAXPROCS=2, the issue's "2 cores"
#   BENCH_PROCS=16 bench/live.sh  # another core count
#
# Runs four Go benchmarks (not timed tests), each against what it needs in
# process: a file store in a temporary directory and a loopback HTTP server,
# or franz-go's kfake cluster.
#   1. BenchmarkLiveAPISingleTurn: one turn per POST /api/v1/turns from 50
#      concurrent clients (EVIDENT_BENCH_CLIENTS), closed loop (each sends
#      its next turn when the answer comes); p50/p99 latency in ms (target
#      p99 ≤ 5 ms)
#   1b. BenchmarkLiveAPIOpenLoop: the same 50 clients sending on a schedule
#      at 1,000, 2,000 and 4,000 turns/s in all (EVIDENT_BENCH_RATES;
#      BENCH_OPEN turns each), latency from each turn's due time, so queueing
#      counts; p50/p99/max in ms per rate. It says at which load p99 ≤ 5 ms
#      holds; it is not the target's figure, which is 1's
#   2. BenchmarkLiveAPIBatch: 1,000-turn JSON Lines batches; turns/s
#      (target ≥ 20,000)
#   3. BenchmarkConsumer: one consumer judging 200,000 turns already in a
#      4-partition topic, first poll to last commit; turns/s (target ≥
#      50,000); kfake shares the process and its cores; the local state
#      store is a temporary directory
# The machine's load is printed first: on a shared machine wall-clock figures
# mean little (they include waiting for other processes). So each benchmark
# also prints its process's CPU per turn, (user+sys)/turns, which load does
# not inflate; it includes the benchmark's setup (the demo import, producing
# the topic) and, for 1 and 3, the clients and kfake in the same process.
#
# Figures (2026-12-01, 2 shared cores, three runs of this script at load
# 1.8-2.1 from other work; CPU a turn is the benchmark's cpu-µs/turn, timed
# part only, clients included):
#   1. Closed loop: p50 5.3-7.1 ms, p99 16.6-25.7 ms, 6,050-8,540 turns/s,
#      166-171 µs CPU a turn. Back to back with the code before this pass
#      (store/live.go and web/api.go of bdc8fb5; 5 alternating runs, load
#      4-5): 262 → 189 µs CPU a turn and 2,640 → 3,950 turns/s (medians).
#      At the start of the pass, new store files having just gone to 16 KiB
#      pages, the first run of this script read p50 14.2 ms, p99 37.2 ms,
#      3,114 turns/s (load 0.6-1.7). Target missed: p99 is 3-5 × 5 ms.
#      Closed-loop latency is queueing (p50 ≈ 50 / throughput), so p99 ≤ 5
#      ms would take about 25,000 turns/s, 80 µs of CPU a turn for clients
#      and server together; net/http alone takes 45-48 µs
#      (BenchmarkLoopbackFloor, p99 16-22 ms at load 4.9).
#   1b. Open loop, p50 / p99 / max ms: 1,000 turns/s 1.2 / 5.5-9.2 / 13-30;
#      2,000 turns/s 1.0-1.3 / 17-25 / 34-39; 4,000 turns/s 1.9-27 /
#      18-125 / 24-170 (one run of three saturated). So p99 ≤ 5 ms holds at
#      none of them on this shared machine, 1,000 turns/s coming closest;
#      net/http alone on the same schedule (BenchmarkLoopbackFloorOpenLoop,
#      load 4.9) has p99 2.5 ms at every rate. CPU a turn is higher at low
#      rates (650-690 µs at 1,000 turns/s, 260-330 at 4,000): each request
#      is then a group of its own, so a commit of its own, and a single-turn
#      commit writes about 14 WAL frames (a page each of live_turn's 3
#      b-trees, verdict's 8, live_session and the run row) — 218 KiB of 16
#      KiB pages (58 KiB of 4 KiB), 200 µs of system calls and checksums
#      (4,089 frames for 300 single-turn calls, counted with PRAGMA
#      wal_checkpoint's log); the Go runtime's wake-ups add about 130 µs
#      (the floor takes 177 µs a request at 1,000/s).
#   2. 16,100-19,800 turns/s, 70-73 µs CPU a turn (process): below the
#      target in these runs (21,800 earlier, on a quieter machine);
#      unchanged by this pass, back to back (one call is one group either
#      way); the writer's inserts are the bound.
#   3. 64,700-95,700 turns/s, 15-17 µs CPU a turn in the timed part.
# What this pass changed (store/live.go): a group of concurrent calls is
# written without a savepoint a call (each copied every page it changed
# into the sub-journal: a quarter of the SQLite time with 16 KiB pages) and
# written again with them only when a call fails; each session's state is
# written once a group; the WAL restarts under steady traffic (it grew to
# 150-185 MB in 10,000 turns, and appending costs ext4 twice what
# overwriting does). Still on the table: the cards' version query a request
# (store.LiveJudgeKey, about 6 % of the CPU: its pooled connection drops
# its page cache each time, another connection having committed) could be
# one query a group inside the live transaction.
set -euo pipefail
cd "$(dirname "$0")/.."
procs=${BENCH_PROCS:-2}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) · GOMAXPROCS=$procs · $(nproc) cores"
export GOMAXPROCS=$procs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/web.test" ./web
go test -c -o "$tmp/kafka.test" ./kafka

# bench PKG NAME TURNS: runs one benchmark of PKG's test binary (in PKG's
# directory, as go test does) for TURNS turns and prints its line and CPU.
bench() {
	local pkg=$1 name=$2 turns=$3 n=$4
	(cd "$pkg" && /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$tmp/$pkg.test" -test.run '^$' -test.bench "^$name\$" -test.benchtime "${n}x") | grep '^Benchmark'
	awk -v t="$turns" '{ printf "  cpu: %.1f s user+sys, %.1f µs per turn\n", $1+$2, ($1+$2)*1e6/t }' "$tmp/cpu"
}
single=${BENCH_SINGLE:-5000} batches=${BENCH_BATCHES:-50} consumer=${BENCH_CONSUMER:-200000} open=${BENCH_OPEN:-5000}
rates=${EVIDENT_BENCH_RATES:-1000,2000,4000}
export EVIDENT_BENCH_RATES=$rates
bench web BenchmarkLiveAPISingleTurn "$single" "$single"
bench web BenchmarkLiveAPIOpenLoop $((open * $(echo "$rates" | tr ',' '\n' | wc -l))) "$open"
bench web BenchmarkLiveAPIBatch $((batches * 1000)) "$batches"
bench kafka BenchmarkConsumer "$consumer" "$consumer"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
