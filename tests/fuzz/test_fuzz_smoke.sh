#!/usr/bin/env bash
# The fuzzers' smoke run, part of `make test` (tests/run.sh) and CI: builds
# them (clang, libFuzzer, ASan, UBSan into build-fuzz/), replays the corpus and
# the regressions, then fuzzes each for FUZZ_SMOKE_SECONDS (10) on a throwaway
# copy of its corpus. About 30 seconds once built.
set -u
cd "$(dirname "$0")/../.." || exit 1
log=$(mktemp)
corpus=$(mktemp -d)
trap 'rm -rf "$log" "$corpus"' EXIT

if ! make -s -j"$(nproc)" fuzz-build >"$log" 2>&1; then
	echo "FAIL fuzz_build: make fuzz-build failed"
	tail -n 20 "$log" | sed 's/^/  | /'
	exit 1
fi
echo "PASS fuzz_build: build-fuzz/fuzz_rx, build-fuzz/fuzz_config"
FUZZ_CORPUS=$corpus bash tests/fuzz/run_fuzz.sh "${FUZZ_SMOKE_SECONDS:-10}" rx config
