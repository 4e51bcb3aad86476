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
# 4.1-4.7 from other work — wall figures suffer, CPU a turn much less; CPU a
# turn is the benchmark's cpu-µs/turn, timed part only, clients included):
#   1. Closed loop: p50 6.4 ms, p99 25.1-26.7 ms, 6,240-6,540 turns/s,
#      153-157 µs CPU a turn. Back to back with the code before this pass
#      (store/live.go and web/api.go of bdc8fb5, the rest as now; 5
#      alternating runs, load 3.6-4.0): 268 → 172 µs CPU a turn, 4,360 →
#      7,260 turns/s, p99 30.6 → 23.0 ms (medians). At the start of the
#      pass, new store files having just gone to 16 KiB pages, this script
#      read p50 14.2 ms, p99 37.2 ms, 3,114 turns/s (load 0.6-1.7). Target
#      missed: p99 is about 5 × 5 ms. Closed-loop latency is queueing (p50 ≈
#      50 / throughput), so p99 ≤ 5 ms would take about 25,000 turns/s, 80
#      µs of CPU a turn for clients and server together; net/http alone
#      takes 45-48 µs (BenchmarkLoopbackFloor; its p99 16-22 ms at load 4.9).
#   1b. Open loop, p50 / p99 / max ms: 1,000 turns/s 1.1-1.6 / 5.7-27 /
#      12-50; 2,000 turns/s 0.9-1.6 / 6.1-21 / 16-39; 4,000 turns/s 1.2-9.4
#      / 11-64 / 18-72 (medians of p99: 5.9, 19, 12.5). So p99 ≤ 5 ms holds
#      at none of them on this loaded machine, 1,000 turns/s coming closest
#      (5.7 and 5.9 ms in two runs of three); net/http alone on the same
#      schedule (BenchmarkLoopbackFloorOpenLoop, load 4.9) has p99 2.4-2.7
#      ms at every rate. CPU a turn is higher at low rates (560-650 µs at
#      1,000 turns/s, 260-310 at 4,000): each request is then a group of its
#      own, so a commit of its own, and a single-turn commit writes about 14
#      WAL frames (a page each of live_turn's 3 B-trees, verdict's 8,
#      live_session and the run row) — 218 KiB of 16 KiB pages (58 KiB of 4
#      KiB), 200 µs of system calls and checksums (4,089 frames for 300
#      single-turn calls, counted with PRAGMA wal_checkpoint's log); the Go
#      runtime's wake-ups add about 130 µs (the floor takes 162-177 µs a
#      request at 1,000/s, 45 when saturated).
#   2. 13,000-22,100 turns/s, 61-74 µs CPU a turn (process): the target
#      met in one run of three; unchanged by this pass, back to back (one
#      call is one group either way); the writer's inserts are the bound.
#   3. 55,100-106,400 turns/s, 14-17 µs CPU a turn in the timed part.
# Later (2026-12-01 18:54, load 1.6-2.1, three runs), after a call's verdict
# rows went in 32 at a time with the live connection's foreign key checks
# off: 1. p50 3.6-4.3 ms, p99 12.4-15.9 ms, 9,751-11,778 turns/s; 1b. p99
# 3.2-3.7 ms at 1,000 turns/s, 4.2-5.9 at 2,000, 9.2-12.9 at 4,000; 2.
# 28,800-31,100 turns/s (48-51 µs CPU a turn): the target met in every run;
# 3. 121,000-128,000 turns/s.
# Again at 21:00 on a machine 1.4 times slower (BenchmarkLexiconTouch 455-480
# ns against 326), after live groups announce themselves on the wait file:
# 1. p50 5.8 ms, p99 16.2 ms, 7,804 turns/s; 1b. p99 5.1 ms at 1,000
# turns/s, 14.9 at 2,000, 14.4 at 4,000; 2. 22,160 turns/s; 3. 83,304
# turns/s. BenchmarkLoopbackFloor (net/http alone) then: p99 4.4-6.0 ms at
# 34,000-41,000 requests/s, three runs: the single-turn target is at the
# floor of net/http with the clients on the same two cores.
# What this pass changed (store/live.go, web/api.go): a group of concurrent
# calls is written without a savepoint a call (each copied every page it
# changed into the sub-journal: a quarter of the SQLite time with 16 KiB
# pages) and written again with them only when a call fails; each
# session's state is written once a group; a kept judge's cards' version is
# checked inside the group's transaction (store.JudgeLiveKeyed: one query a
# group on the writer's connection, where LiveJudgeKey's query a request on
# a pooled connection, whose page cache SQLite drops once another
# connection has committed, was about 6 % of the CPU); the WAL restarts
# under steady traffic (it grew to 150-185 MB in 10,000 turns, and
# appending costs ext4 twice what overwriting does); small groups start a
# background checkpoint every 75 (600 single-turn groups had left one
# checkpoint 130 MiB to copy).
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
