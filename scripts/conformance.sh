#!/usr/bin/env bash
# Runs the official MCP conformance suites (@modelcontextprotocol/conformance,
# pinned in interop/package.json: 0.1.16, and the newest alpha as
# conformance-next) against a real `atrium serve`:
#
#   1. with the conformance fixtures (--toolsets all,conformance), each on a
#      fresh server:
#      a. suite 0.1.16, --suite all: must end with "44 passed, 0 failed";
#      b. the newest suite, --requirements 2025-11-25, and
#      c. --requirements 2026-07-28: every scored scenario must pass (the
#         suite's exit status). Scenarios it runs but does not score (pending,
#         extension such as tasks) are reported, not counted;
#   2. with the default toolsets: every scenario that needs no fixture must pass,
#      in both suites (the newest at the 2026-07-28 wire), so that the
#      fixtures cannot hide a failure of the real surface; and the skills
#      extension's scenarios (SEP-2640, 42 checks), scored: no check may fail
#      or be skipped (the skills toolset serves the generated skill).
#
# Usage: scripts/conformance.sh [path/to/atrium]   (make conformance)
# Needs `cd interop && npm ci` first (make interop-deps). Results are written
# under ./conformance-results/RUN (gitignored). Only 127.0.0.1 is contacted.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-bin/atrium}
[[ $bin == /* ]] || bin="$root/$bin"
want_full="44 passed, 0 failed"
# Scenarios of the default suite that any MCP server can pass: they call no
# fixture by name (see `conformance list --server` and the scenario code).
default_scenarios=(
	server-initialize logging-set-level ping tools-list resources-list
	resources-subscribe resources-unsubscribe prompts-list
	server-sse-multiple-streams dns-rebinding-protection
)
# The same for the newest suite at the 2026-07-28 wire (--spec-version).
default_2026_scenarios=(
	tools-list resources-list prompts-list caching sep-2164-resource-not-found
	http-header-validation dns-rebinding-protection
)
# The skills extension (io.modelcontextprotocol/skills), in the newest suite.
skills_scenarios=(sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest)
want_skills_checks=42

# Node 24 and the conformance CLI come from interop/node_modules: the
# machine's Node may be too old for the suite.
export PATH="$root/interop/node_modules/.bin:$PATH"
for tool in node conformance; do
	if ! command -v "$tool" >/dev/null; then
		echo "conformance: $tool not found in interop/node_modules/.bin; run: make interop-deps" >&2
		exit 2
	fi
done
# Both packages install a `conformance` command; the alias is run by path.
next_cli="$root/interop/node_modules/conformance-next/dist/index.js"
if [[ ! -f $next_cli ]]; then
	echo "conformance: no $next_cli; run: make interop-deps" >&2
	exit 2
fi
next_version=$(node -p "require('$root/interop/node_modules/conformance-next/package.json').version")
if (($(node -p 'process.versions.node.split(".")[0]') < 24)); then
	echo "conformance: $(command -v node) is Node $(node --version); the suite needs 24 or later: run make interop-deps" >&2
	exit 2
fi
if [[ ! -x $bin ]]; then
	echo "conformance: no atrium binary at $bin; run: make build" >&2
	exit 2
fi

results="$root/conformance-results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$results"
tmp=$(mktemp -d)
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# plain drops the suite's terminal colours, so that its lines can be matched.
plain() { sed -e $'s/\x1b\\[[0-9;]*m//g'; }

# start NAME ARGS... starts `atrium serve` with a fresh data dir on a loopback
# port the kernel picks (port 0: no race with other programs for a port found
# free beforehand), waits for its "listening on URL" line and sets $url to its
# MCP endpoint.
start() {
	local name=$1 log base i
	shift
	log="$results/$name-server.log"
	mkdir -p "$tmp/$name"
	"$bin" --data-dir "$tmp/$name" serve --addr 127.0.0.1:0 --auth none "$@" >"$log" 2>&1 &
	pids+=($!)
	for ((i = 0; i < 100; i++)); do
		base=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9][0-9]*\)$|\1|p' "$log" 2>/dev/null)
		if [[ -n $base ]]; then
			url="$base/mcp"
			echo "conformance: $name server at $url (log: ${log#"$root"/})"
			return 0
		fi
		if ! kill -0 "${pids[-1]}" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "conformance: the $name server did not start; its log:" >&2
	cat "$log" >&2
	return 1
}

failures=()
summary=()

# 1a. Every scenario of the pinned suite, against the fixtures.
if start fixtures --toolsets all,conformance; then
	out="$results/full-suite.txt"
	echo "conformance: running suite $(conformance --version) (--suite all)…"
	conformance server --url "$url" --suite all -o "$results/full" 2>&1 | plain >"$out"
	rc=${PIPESTATUS[0]}
	total=$(grep -E '^Total: ' "$out" | tail -n 1)
	# Per-scenario lines of the suite's own summary, for the record.
	sed -n '/=== SUMMARY ===/,$p' "$out"
	if [[ $rc -eq 0 && $total == "Total: $want_full" ]]; then
		summary+=("PASS  suite $(conformance --version), all scenarios, with fixtures: ${total#Total: }")
	else
		summary+=("FAIL  suite $(conformance --version), all scenarios, with fixtures: ${total:-no total} (exit $rc; want $want_full; see ${out#"$root"/})")
		failures+=("full suite")
	fi
else
	summary+=("FAIL  full suite with fixtures: the server did not start")
	failures+=("fixtures server")
fi

# scored FILE prints "P passed, F failed in N scenarios" for the scenarios of
# a --requirements run that count: the suite's Total also adds up those it
# lists under "Not scored for …".
scored() {
	awk '
		/^=== SUMMARY ===/ { in_summary = 1; next }
		/^Total: / { in_summary = 0 }
		in_summary && /^[✓✗] [^:]+: [0-9]+ passed, [0-9]+ failed/ {
			name = $2; sub(/:$/, "", name)
			passed[name] = $3; failed[name] = $5
		}
		/^Not scored for / { unscored = 1; next }
		unscored && /^  [✓✗] / { skip[$2] = 1 }
		END {
			for (n in passed) if (!(n in skip)) { p += passed[n]; f += failed[n]; s++ }
			printf "%d passed, %d failed in %d scenarios", p, f, s
		}' "$1"
}

# 1b, 1c. The newest suite, at the requirements of each protocol revision.
for revision in 2025-11-25 2026-07-28; do
	if ! start "fixtures-$revision" --toolsets all,conformance; then
		summary+=("FAIL  suite $next_version, requirements $revision: the server did not start")
		failures+=("fixtures server $revision")
		continue
	fi
	out="$results/requirements-$revision.txt"
	echo "conformance: running suite $next_version (--requirements $revision)…"
	node "$next_cli" server --url "$url" --requirements "$revision" -o "$results/requirements-$revision" 2>&1 | plain >"$out"
	rc=${PIPESTATUS[0]}
	sed -n '/=== SUMMARY ===/,$p' "$out"
	counts=$(scored "$out")
	# What the suite ran without scoring: the count line, then one per scenario.
	not_scored=$(sed -n "s/^Not scored for $revision: \(.*\)\. These do not affect conformance\./\1/p" "$out")
	not_scored_list=$(sed -n '/^Not scored for /,$p' "$out" | sed -n 's/^  \([✓✗]\) \(.*\)$/\1 \2/p' | paste -sd ',' - | sed 's/,/, /g')
	if [[ $rc -eq 0 && $counts == *" 0 failed "* ]]; then
		summary+=("PASS  suite $next_version, requirements $revision, with fixtures: $counts")
	else
		summary+=("FAIL  suite $next_version, requirements $revision, with fixtures: $counts (exit $rc; see ${out#"$root"/})")
		failures+=("requirements $revision")
	fi
	if [[ -n $not_scored ]]; then
		summary+=("      not scored for $revision: $not_scored: $not_scored_list")
	fi
done

# 2. Fixture-free scenarios, against the default toolsets.
if start default; then
	for scenario in "${default_scenarios[@]}"; do
		out="$results/default-$scenario.txt"
		conformance server --url "$url" --scenario "$scenario" -o "$results/default" 2>&1 | plain >"$out"
		rc=${PIPESTATUS[0]}
		# A single scenario ends with "Passed: X/Y, 0 failed, …"; the exit
		# status is what counts, the line is for the summary.
		line=$(grep -E '^(Passed|Total):' "$out" | tail -n 1)
		if [[ $rc -eq 0 ]] && ! grep -qE '(^|[^0-9])[1-9][0-9]* failed' <<<"$line"; then
			summary+=("PASS  default toolsets, $scenario: ${line:-ok}")
		else
			summary+=("FAIL  default toolsets, $scenario: ${line:-no result} (exit $rc; see ${out#"$root"/})")
			failures+=("$scenario")
		fi
	done
	for scenario in "${default_2026_scenarios[@]}"; do
		out="$results/default-2026-$scenario.txt"
		node "$next_cli" server --url "$url" --scenario "$scenario" --spec-version 2026-07-28 -o "$results/default-2026" 2>&1 | plain >"$out"
		rc=${PIPESTATUS[0]}
		line=$(grep -E '^(Passed|Total):' "$out" | tail -n 1)
		if [[ $rc -eq 0 ]] && ! grep -qE '(^|[^0-9])[1-9][0-9]* failed' <<<"$line"; then
			summary+=("PASS  default toolsets, 2026-07-28, $scenario: ${line:-ok}")
		else
			summary+=("FAIL  default toolsets, 2026-07-28, $scenario: ${line:-no result} (exit $rc; see ${out#"$root"/})")
			failures+=("2026-07-28 $scenario")
		fi
	done
	skills_passed=0
	for scenario in "${skills_scenarios[@]}"; do
		out="$results/default-$scenario.txt"
		node "$next_cli" server --url "$url" --scenario "$scenario" -o "$results/default-skills" 2>&1 | plain >"$out"
		rc=${PIPESTATUS[0]}
		line=$(grep -E '^Passed:' "$out" | tail -n 1)
		# Every check counts but the suite's own wire-schema check.
		checks=$(grep -cE '^[0-9TZ:.-]+ \[sep-2640-[a-z0-9-]+ *\] SUCCESS' "$out")
		skills_passed=$((skills_passed + checks))
		if [[ $rc -eq 0 ]] && ! grep -qE '(^|[^0-9])[1-9][0-9]* failed' <<<"$line" && ! grep -qE '\] (SKIPPED|WARNING|FAILURE)' "$out"; then
			summary+=("PASS  default toolsets, skills, $scenario: $checks SEP-2640 checks passed (${line:-ok})")
		else
			summary+=("FAIL  default toolsets, skills, $scenario: ${line:-no result} (exit $rc; see ${out#"$root"/})")
			failures+=("skills $scenario")
		fi
	done
	if ((skills_passed != want_skills_checks)); then
		summary+=("FAIL  default toolsets, skills: $skills_passed SEP-2640 checks passed, want $want_skills_checks")
		failures+=("skills checks")
	fi
else
	summary+=("FAIL  default toolsets: the server did not start")
	failures+=("default server")
fi

echo
echo "=== Atrium conformance summary (results in ${results#"$root"/}) ==="
printf '%s\n' "${summary[@]}"
if ((${#failures[@]})); then
	echo "conformance: FAILED: ${failures[*]}"
	exit 1
fi
echo "conformance: OK: suite $(conformance --version) $want_full; suite $next_version: 0 scored failures for 2025-11-25 and 2026-07-28; $((${#default_scenarios[@]} + ${#default_2026_scenarios[@]})) default-toolset scenarios passed; skills: $want_skills_checks of $want_skills_checks SEP-2640 checks"
