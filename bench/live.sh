#!/usr/bin/env bash
# Live judging figures (issue 17): the HTTP API and the Kafka consumer.
#
#   bench/live.sh                 # GOMAXPROCS=2, the issue's "2 cores"
#   BENCH_PROCS=16 bench/live.sh  # another core count
#
# Runs three Go benchmarks (not timed tests), each against what it needs in
# process: a file store in a temporary directory and a loopback HTTP server,
# or franz-go's kfake cluster.
#   1. BenchmarkLiveAPISingleTurn: one turn per POST /api/v1/turns from 50
#      concurrent clients (EVIDENT_BENCH_CLIENTS); p50/p99 latency in ms
#      (target p99 ≤ 5 ms)
#   2. BenchmarkLiveAPIBatch: 1,000-turn JSON Lines batches; turns/s
#      (target ≥ 20,000)
#   3. BenchmarkConsumer: one consumer judging 200,000 turns already in a
#      4-partition topic, first poll to last commit; turns/s (target ≥
#      50,000); kfake shares the process and its cores
# The machine's load is printed first: on a shared machine the figures mean
# little (wall time includes waiting for other processes).
set -euo pipefail
cd "$(dirname "$0")/.."
procs=${BENCH_PROCS:-2}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) · GOMAXPROCS=$procs · $(nproc) cores"
export GOMAXPROCS=$procs
go test -run '^$' -bench 'BenchmarkLiveAPISingleTurn$' -benchtime "${BENCH_SINGLE:-5000}x" ./web | grep '^Benchmark'
go test -run '^$' -bench 'BenchmarkLiveAPIBatch$' -benchtime "${BENCH_BATCHES:-50}x" ./web | grep '^Benchmark'
go test -run '^$' -bench 'BenchmarkConsumer$' -benchtime "${BENCH_CONSUMER:-200000}x" ./kafka | grep '^Benchmark'
