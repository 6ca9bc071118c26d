#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Resident memory of the main job (`rxpath run -c examples/router.conf`: two
# sim ports, default settings) and, as root, of a two-port AF_PACKET router
# in a namespace: printed, and held under a bound (MEM_BOUND_MIB, 64). The
# peak (VmHWM) is what counts; the buffer pool is the largest part.
set -u
. "$(dirname "$0")/lib.sh"

BOUND_MIB=${MEM_BOUND_MIB:-64}

# AddressSanitizer's shadow memory and quarantine dwarf what rxpath itself uses
SAN=0
readelf -s -W "$RXPATH" 2>/dev/null | grep -q '__asan_init' && SAN=1

# kib KEY : a /proc/$PID/status field in KiB
kib() { awk -v k="$1:" '$1 == k { print $2 }' /proc/"$PID"/status; }
mib() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1024 }'; }

# measure NAME NS RUN-ARGS... : runs rxpath for a while, prints and checks its resident memory
measure() {
	local name=$1 ns=$2 rss hwm anon file pool; shift 2
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$RXPATH" run -i 0 --ctl none -d 30 "$@" >"$TMP/out" 2>"$TMP/err" &
	else
		"$RXPATH" run -i 0 --ctl none -d 30 "$@" >"$TMP/out" 2>"$TMP/err" &
	fi
	PID=$!
	for _ in $(seq 200); do
		grep -q '^rxpath: [0-9]* ports\?;' "$TMP/out" && break
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	if ! grep -q '^rxpath: [0-9]* ports\?;' "$TMP/out"; then
		fail "${name}_starts" "$(tail -n 5 "$TMP/err")"
		return
	fi
	sleep 1.5	# forwarding at full rate: every buffer and table page in use is touched
	rss=$(kib VmRSS)
	hwm=$(kib VmHWM)
	anon=$(kib RssAnon)
	file=$(kib RssFile)
	pool=$(sed -n 's/^rxpath: .*pool \([0-9]* buffers x [0-9]* B\) ([^,]*, \([0-9.]* MiB\).*/\1, \2/p' "$TMP/out")
	echo "  $name: VmRSS $(mib "$rss") MiB (anonymous $(mib "$anon"), files $(mib "$file")), VmHWM $(mib "$hwm") MiB; pool $pool"
	kill -TERM "$PID"
	wait "$PID"
	PID=
	if [ "$SAN" = 1 ]; then
		echo "SKIP ${name}_under_${BOUND_MIB}_mib: a sanitizer build (shadow memory)"
	else
		check "${name}_under_${BOUND_MIB}_mib" [ "$hwm" -lt $((BOUND_MIB * 1024)) ]
	fi
}

measure mem_main_job "" -c examples/router.conf

if [ "$(id -u)" -ne 0 ] || ! ip netns add "rxp-mem-$$" 2>/dev/null; then
	echo "SKIP mem_afpacket_router: needs root and network namespaces"
	exit 0
fi
NS="rxp-mem-$$"
ip -n "$NS" link set lo up
for i in 0 2; do
	ip -n "$NS" link add "v$i" type veth peer name "v$((i + 1))"
	ip -n "$NS" link set "v$i" up && ip -n "$NS" link set "v$((i + 1))" up
done
cat >"$TMP/afp.conf" <<'EOF'
port add p0 afpacket:dev=v0
port add p1 afpacket:dev=v2
addr add 10.0.1.1/24 dev p0
addr add 10.0.2.1/24 dev p1
EOF
measure mem_afpacket_router "$NS" -c "$TMP/afp.conf"
