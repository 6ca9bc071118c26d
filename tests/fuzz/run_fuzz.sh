#!/usr/bin/env bash
# Runs fuzzers of tests/fuzz: `run_fuzz.sh SECONDS [rx] [config]` (what
# `make fuzz` does with FUZZ_SECONDS and FUZZ_TARGETS). For each harness:
#  1. replays the committed corpus and tests/fuzz/regressions/<name>/ once,
#     as a plain regression run;
#  2. fuzzes for SECONDS on a copy of the corpus, and prints executions,
#     their rate, coverage (libFuzzer's cov: and ft:) and any crash.
# Prints one PASS or FAIL line per step; exits 1 if any failed.
# Environment:
#   FUZZ_BUILD   where the harnesses are (build-fuzz)
#   FUZZ_CORPUS  where each harness's working corpus lives, as DIR/<name>
#                (default build-fuzz/corpus: it grows from run to run; the
#                repository's corpus is only read)
#   FUZZ_ARGS    more libFuzzer flags, e.g. "-jobs=2 -workers=2"
#   FUZZ_NICE    a niceness to fuzz at (e.g. 19 on a shared machine)
# A crash leaves its input in FUZZ_BUILD/artifacts/; minimise it with
#   build-fuzz/fuzz_NAME -minimize_crash=1 -max_total_time=60 CRASH_FILE
# and commit it under tests/fuzz/regressions/NAME/ with the fix.
set -u
cd "$(dirname "$0")/../.." || exit 1
seconds=${1:?usage: run_fuzz.sh SECONDS [rx] [config]}
shift
targets=${*:-rx config}
build=${FUZZ_BUILD:-build-fuzz}
corpus_root=${FUZZ_CORPUS:-$build/corpus}
artifacts=$build/artifacts
failed=0
mkdir -p "$artifacts"

# the longest input each harness is given: a few frames, or a config file
max_len() {
	case $1 in
	rx) echo 8192 ;;
	*) echo 4096 ;;
	esac
}

for name in $targets; do
	bin=$build/fuzz_$name
	if [ ! -x "$bin" ]; then
		echo "FAIL fuzz_$name: $bin is not built (make fuzz-build)"
		failed=1
		continue
	fi
	log=$(mktemp)

	# 1. the corpus and the crashes found before, each run once
	inputs=(tests/fuzz/corpus/"$name"/* tests/fuzz/regressions/"$name"/*)
	files=()
	for f in "${inputs[@]}"; do
		[ -f "$f" ] && files+=("$f")
	done
	if "$bin" -rss_limit_mb=2048 "${files[@]}" >"$log" 2>&1; then
		echo "PASS fuzz_${name}_replay: ${#files[@]} inputs (corpus and regressions) run clean"
	else
		echo "FAIL fuzz_${name}_replay: $(grep -m1 -E "^fuzz_$name:|ERROR:|SUMMARY:" "$log")"
		grep -E "^Running:" "$log" | tail -n 1 | sed 's/^/  /'
		failed=1
	fi

	# 2. fuzzing, on a working copy of the corpus
	work=$corpus_root/$name
	mkdir -p "$work"
	cp -n tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
	start=$(date +%s)
	# shellcheck disable=SC2086
	nice -n "${FUZZ_NICE:-0}" "$bin" -max_total_time="$seconds" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$name")" \
		-dict=tests/fuzz/"$name".dict -artifact_prefix="$artifacts/$name-" \
		${FUZZ_ARGS:-} "$work" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -n 1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	summary="${execs:-?} executions in ${took} s (${rate:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?} inputs"
	if [ "$rc" -eq 0 ] && [ -z "$crash" ]; then
		echo "PASS fuzz_$name: $summary, no crash"
	else
		echo "FAIL fuzz_$name: $summary; crashed (status $rc), input in ${crash:-?}"
		grep -m3 -E "^fuzz_$name:|ERROR:|SUMMARY:" "$log" | sed 's/^/  /'
		failed=1
	fi
	rm -f "$log"
done
exit "$failed"
