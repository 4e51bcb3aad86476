# Shared by bench/store.sh and bench/review.sh (sourced, not run): checks
# curl and GNU time, builds evident and the generator into $out, copies the
# demo cards and lexicon there, and defines median and ms. The sourcing
# script sets $out and is run from the repository root.

self=$(basename "$0")
for tool in curl /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "$self: $tool is missing (Debian packages curl, time)" >&2; exit 1; }
done

mkdir -p "$out"
echo "# building" >&2
go build -o "$out/evident" ./cmd/evident
go build -o "$out/gen" ./bench/gen
cp persona/demo/data/cards.json persona/demo/data/lexicon.csv "$out/"

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# ms URL: one request's total time in milliseconds (fails on a non-200).
ms() {
	curl -sS -o /dev/null -w '%{http_code} %{time_total}\n' "$1" |
		awk -v u="$1" -v s="$self" '$1 != 200 { print s ": " u ": HTTP " $1 > "/dev/stderr"; exit 1 } { printf "%.0f\n", $2 * 1000 }'
}
