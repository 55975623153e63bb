#!/usr/bin/env bash
# Runs the `go test -fuzz` targets of the given packages (default: the
# protocol targets in ./mcptools and the browser routes' in ./web; ./... for
# every target of the repository)
# in turn, each for ${FUZZTIME:-10s}, and fails if any of them finds a
# failing input (go test writes it under the package's testdata/fuzz/, where
# it becomes a seed that `make test` runs until the bug is fixed). Targets are
# found in the sources (func FuzzXxx in *_test.go), so a new one is run
# without editing this. The default run takes about a minute on 2 cores.
#
# Prints one line per target for the reliability report:
#   RELIABILITY fuzz FuzzStdio: execs=11143 new=13 corpus=31 time=10s
#
# Usage: scripts/fuzz.sh                (make reliability)
#        FUZZTIME=2m scripts/fuzz.sh ./...
# FUZZ_WORKERS (default 2) bounds the fuzzing processes per target.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fuzztime=${FUZZTIME:-10s}
workers=${FUZZ_WORKERS:-2}
failed=0
found=0
pkgs=("$@")
[[ ${#pkgs[@]} -gt 0 ]] || pkgs=(./mcptools ./web)
dirs=()
for p in "${pkgs[@]}"; do
	dirs+=("${p%/...}")
done

while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$file"); do
		found=$((found + 1))
		log=$(mktemp)
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel "$workers" "$pkg" >"$log" 2>&1
		code=$?
		# The fuzzer's last progress line: "fuzz: elapsed: 10s, execs: 11143
		# (1804/sec), new interesting: 13 (total: 31)".
		last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -n 1)
		execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
		new=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
		total=$(sed -nE 's/.*\(total: ([0-9]+)\).*/\1/p' <<<"$last")
		echo "RELIABILITY fuzz ${target}: execs=${execs:-0} new=${new:-0} corpus=${total:-0} time=${fuzztime} pkg=${pkg}"
		if [[ $code -ne 0 ]]; then
			failed=$((failed + 1))
			echo "FAIL fuzz ${target} (${pkg}):" >&2
			grep -vE '^fuzz: elapsed: ' "$log" | grep -vE '^[0-9]{4}/[0-9]{2}/[0-9]{2} |^time=' | tail -n 60 >&2
		fi
		rm -f "$log"
	done
done < <(
	for d in "${dirs[@]}"; do
		if [[ ${pkgs[*]} == *"$d/..."* ]]; then
			grep -rlE '^func Fuzz[A-Za-z0-9_]*\(.*\*testing\.F\)' --include='*_test.go' "$d"
		else
			grep -lE '^func Fuzz[A-Za-z0-9_]*\(.*\*testing\.F\)' "$d"/*_test.go 2>/dev/null
		fi
	done | sed 's|^\./||' | sort -u
)

if [[ $found -eq 0 ]]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
if [[ $failed -ne 0 ]]; then
	echo "fuzz: $failed of $found targets failed" >&2
	exit 1
fi
echo "fuzz: $found targets passed"
