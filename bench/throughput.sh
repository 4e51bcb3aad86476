#!/usr/bin/env bash
# CPU per turn of `evident judge` against the JSON floor (issue 18).
#
#   bench/throughput.sh                 # 1M turns, 5 paired runs
#   BENCH_RUNS=3 bench/throughput.sh    # fewer pairs for a quick look
#   BENCH_SAVE=1 bench/throughput.sh    # (re)write bench/throughput.sha256
#
# Builds evident, bench/gen and bench/floor, generates BENCH_N turns (default
# 1,000,000; seed 1, 0.01 % bad rows, as bench/judge.sh) into $BENCH_OUT
# (default bench/out/, gitignored), then runs BENCH_RUNS pairs (default 5):
# the floor (bench/floor: one thread, encoding/json decode of each line and
# encode of a record of the judge's shape, no rules) and `evident judge` on
# all cores, one right after the other, so both see the same machine load.
# CPU = user + sys from /usr/bin/time. It prints the median floor CPU, the
# median judge CPU, the median of the pairs' ratios, and the judge's largest
# max RSS (it must stay flat in file size: compare BENCH_N=100000).
#
# Output check: the judge's records and rejects (sha256) must equal the
# digests saved in bench/throughput.sha256, and so must the records `evident
# judge --demo` writes to stdout; a mismatch fails the script. The digests
# hold for the default BENCH_N, seed and bad fraction only; with another
# BENCH_N the bench file's digest is printed but not checked.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
out=${BENCH_OUT:-bench/out}
n=${BENCH_N:-1000000}
runs=${BENCH_RUNS:-5}
sums=$root/bench/throughput.sha256

if [[ ! -x /usr/bin/time ]]; then
	echo "throughput.sh: /usr/bin/time is missing; install it with: apt-get install -y time (Debian package 'time')" >&2
	exit 1
fi

mkdir -p "$out"
echo "# building" >&2
go build -o "$out/evident" ./cmd/evident
go build -o "$out/gen" ./bench/gen
go build -o "$out/floor" ./bench/floor
cp persona/demo/data/cards.json persona/demo/data/lexicon.csv "$out/"
cd "$out"

turns=turns-$n.jsonl # a relative name: the rejects cite it, and the digest must not depend on $out
if [[ ! -s $turns ]]; then
	echo "# generating $n turns into $out/$turns" >&2
	./gen -n "$n" -seed 1 -bad 0.0001 >"$turns.tmp"
	mv "$turns.tmp" "$turns"
fi

# cpu FILE: user + sys seconds and max RSS KiB from a /usr/bin/time -f '%U %S %M' file.
cpu() { awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$1"; }

floors=() judges=() ratios=() maxrss=0
for ((i = 1; i <= runs; i++)); do
	echo "# pair $i/$runs (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	/usr/bin/time -f '%U %S %M' -o floor.time ./floor -turns "$turns" -out floor.records.jsonl 2>floor.stderr
	/usr/bin/time -f '%U %S %M' -o judge.time ./evident judge --turns "$turns" --cards cards.json \
		--lexicon lexicon.csv --out judge.records.jsonl --rejects judge.rejects.jsonl 2>judge.stderr
	read -r f _ <<<"$(cpu floor.time)"
	read -r j rss <<<"$(cpu judge.time)"
	echo "#   floor $f s, judge $j s ($(tail -n 1 judge.stderr))" >&2
	floors+=("$f") judges+=("$j")
	ratios+=("$(awk -v f="$f" -v j="$j" 'BEGIN { printf "%.3f", j / f }')")
	((rss > maxrss)) && maxrss=$rss
	if ((i == 1)); then
		got_records=$(sha256sum <judge.records.jsonl | cut -d' ' -f1)
		got_rejects=$(sha256sum <judge.rejects.jsonl | cut -d' ' -f1)
	fi
	rm -f floor.records.jsonl judge.records.jsonl
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

got_demo=$(./evident judge --demo 2>/dev/null | sha256sum | cut -d' ' -f1)

if [[ ${BENCH_SAVE:-0} == 1 ]]; then
	if ((n != 1000000)); then
		echo "throughput.sh: BENCH_SAVE needs the default BENCH_N (1000000)" >&2
		exit 1
	fi
	printf '%s  records\n%s  rejects\n%s  demo\n' "$got_records" "$got_rejects" "$got_demo" >"$sums"
	echo "# saved digests to $sums" >&2
fi

echo
echo "evident judge vs the JSON floor, $n turns, $runs paired runs, $(nproc) cores ($(go version | cut -d' ' -f3), $(uname -m)); CPU = user + sys"
printf '%-22s %8s\n' "" "cpu s"
printf '%-22s %8.2f  %.0f ns/turn\n' "floor (median)" "$(median "${floors[@]}")" "$(awk -v c="$(median "${floors[@]}")" -v n="$n" 'BEGIN { print c / n * 1e9 }')"
printf '%-22s %8.2f  %.0f ns/turn\n' "judge (median)" "$(median "${judges[@]}")" "$(awk -v c="$(median "${judges[@]}")" -v n="$n" 'BEGIN { print c / n * 1e9 }')"
printf '%-22s %8.2f  (target <= 1.50; pairs: %s)\n' "judge / floor" "$(median "${ratios[@]}")" "${ratios[*]}"
printf '%-22s %8.1f MiB\n' "judge max RSS" "$(awk -v k="$maxrss" 'BEGIN { print k / 1024 }')"

fail=0
check() { # check NAME GOT
	local want
	want=$(awk -v k="$1" '$2 == k { print $1 }' "$sums")
	if [[ $2 == "$want" ]]; then
		echo "output $1: identical ($2)"
	else
		echo "output $1: DIFFERS: got $2, saved $want" >&2
		fail=1
	fi
}
if ((n == 1000000)); then
	check records "$got_records"
	check rejects "$got_rejects"
else
	echo "output records: $got_records (not checked: BENCH_N is not 1000000)"
fi
check demo "$got_demo"
exit $fail
