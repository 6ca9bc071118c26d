#!/usr/bin/env bash
# The layers only look down (README, "Layout"): scripts/layers.py reads every
# #include of src/ and include/rxpath/ and names any that looks up or sideways.
set -u
source "$(dirname "$0")/lib.sh"

out=$(/usr/bin/python3 scripts/layers.py 2>&1)
if [ $? -eq 0 ]; then
	pass "layers_only_look_down ($(tail -n 1 <<<"$out"))"
else
	fail layers_only_look_down "$out"
fi

# the check itself finds an include that looks up, in a scratch copy
cp -r src include "$TMP/"
echo '#include "engine/dataplane.h"' >>"$TMP/src/fib/neigh.c"
out=$(/usr/bin/python3 scripts/layers.py "$TMP" 2>&1)
check layers_check_finds_an_upward_include grep -q 'src/fib/neigh.c (fib): includes "engine/dataplane.h" of engine, above it' <<<"$out"
