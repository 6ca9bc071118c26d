#!/usr/bin/env bash
# Runs every test program and script; counts PASS/FAIL lines and ends with
# the line "N passed, N failed". A program that crashes counts as a failure.
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {
	local name=$1; shift
	"$@" >"$log" 2>&1
	local rc=$?
	local p f
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	grep -E '^(PASS|FAIL|SKIP)[ :]|^  ' "$log"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited with status $rc"
		tail -n 20 "$log" | sed 's/^/  | /'
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	echo "== $(basename "$t")"
	run "$(basename "$t")" "$t"
done
for t in tests/cli/*.sh; do
	[ -f "$t" ] || continue
	echo "== $(basename "$t")"
	run "$(basename "$t")" env BUILD="$BUILD" bash "$t"
done

for t in tests/e2e/test_*.sh; do
	[ -f "$t" ] || continue
	echo "== $(basename "$t")"
	run "$(basename "$t")" env BUILD="$BUILD" bash "$t"
done
for t in tests/conformance/test_*.py; do
	[ -f "$t" ] || continue
	echo "== $(basename "$t")"
	run "$(basename "$t")" env RXPATH="$BUILD/rxpath" /usr/bin/python3 "$t"
done
# the fuzzers' short smoke run (they build into build-fuzz/ whatever $BUILD is)
for t in tests/fuzz/test_*.sh; do
	[ -f "$t" ] || continue
	echo "== $(basename "$t")"
	run "$(basename "$t")" bash "$t"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
