#!/usr/bin/env bash
# Fuzz every Fuzz target of the module for a while each (issue 15, "Show").
#
#   bench/fuzz.sh [-t DURATION] [PACKAGES...]     (default: -t 20s ./...)
#
# Targets are listed with `go test -list 'Fuzz.*'`, one `go test -fuzz` run
# each (go test fuzzes one target at a time). A crash makes go test write
# the failing input to the package's testdata/fuzz/FuzzXxx/ — keep it: it
# is a seed from then on and `go test` fails on it until the bug is fixed.
# The script runs every target, then exits 1 naming the ones that failed.
# FUZZTIME in the environment is the default duration; GOFLAGS passes on.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-20s}"
if [ "${1:-}" = "-t" ]; then
  fuzztime="$2"
  shift 2
fi
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

# go test -list prints a package's matching names, then "ok <pkg> …".
listing=$(go test -run '^$' -list '^Fuzz' "${pkgs[@]}") || { echo "$listing"; echo "fuzz: listing the targets failed"; exit 2; }
targets=()
names=()
while IFS= read -r line; do
  case "$line" in
    Fuzz*) names+=("$line") ;;
    ok*)
      pkg=$(awk '{print $2}' <<<"$line")
      for n in "${names[@]}"; do targets+=("$pkg $n"); done
      names=()
      ;;
  esac
done <<<"$listing"

if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no Fuzz targets in ${pkgs[*]}"
  exit 0
fi
echo "fuzz: ${#targets[@]} targets, $fuzztime each"
failed=()
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "== $pkg $name"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"; then
    failed+=("$pkg $name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed (inputs kept under each package's testdata/fuzz/):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran $fuzztime without a failure"
