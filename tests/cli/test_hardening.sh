#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The binary is built hardened (the Makefile's HARDEN flags): a
# position-independent executable, full RELRO (read-only relocations, bound
# at load), the stack protector and, outside sanitizer builds, the fortified
# libc calls of _FORTIFY_SOURCE.
set -u
. "$(dirname "$0")/lib.sh"

if ! command -v readelf >/dev/null; then
	echo "SKIP hardening: no readelf (apt-get install binutils)"
	exit 0
fi
header=$(readelf -h "$RXPATH")
dynamic=$(readelf -d "$RXPATH")
segments=$(readelf -l -W "$RXPATH")
symbols=$(readelf --dyn-syms -W "$RXPATH")

check hardening_pie bash -c 'grep -q "Type: *DYN" <<<"$1" && grep -q "FLAGS_1.*PIE" <<<"$2"' _ "$header" "$dynamic"
check hardening_relro grep -q GNU_RELRO <<<"$segments"
check hardening_bind_now grep -Eq '\(FLAGS\).*BIND_NOW|FLAGS_1.*NOW' <<<"$dynamic"
check hardening_stack_protector grep -q '__stack_chk_fail' <<<"$symbols"
if grep -q '__asan_init' <<<"$symbols" || readelf -s -W "$RXPATH" | grep -q '__asan_init'; then
	echo "SKIP hardening_fortify: a sanitizer build, made without _FORTIFY_SOURCE"
else
	fortified=$(grep -o '__[a-z]*_chk@' <<<"$symbols" | grep -v __stack_chk | sort -u | tr -d '@' | tr '\n' ' ')
	echo "  fortified calls: $fortified"
	check hardening_fortify [ -n "$fortified" ]
fi
