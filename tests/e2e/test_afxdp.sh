#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end on AF_XDP: h1 -- [rxpath in r, afxdp on r0/r1] -- h2 over veth.
# Ping both ways of IP, rxpath's own address, Time Exceeded, iperf3 TCP,
# a clean SIGTERM, and nothing left behind (no XDP program, no namespace).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

lab_init

skip_afxdp() {
	echo "SKIP afxdp: $*"
	exit 0
}

# AF_XDP needs the socket family and XDP on veth (kernel 5.4 or later).
if ! "$PYTHON" -c 'import socket; socket.socket(44, socket.SOCK_RAW, 0).close()' 2>/dev/null; then
	skip_afxdp "the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS=y, kernel 5.4 or later); the afpacket tests cover this machine"
fi
lab_up || { fail "afxdp lab" "could not build the namespaces"; exit 1; }

# mode=auto takes native XDP on veth. Should a kernel not pass traffic that
# way, the test says so and runs the generic (skb) mode instead.
MODE=auto
start() {
	lab_rxpath_start "afxdp" "$@"
}
if ! start; then
	fail "afxdp start" "rxpath did not start on afxdp ports"
	exit 1
fi
if ! ip netns exec "$LAB_H1" ping -c 3 -i 0.2 -W 1 10.0.2.2 >/dev/null 2>&1; then
	echo "  native XDP passed no traffic on this kernel; retrying with mode=skb"
	lab_rxpath_stop >/dev/null 2>&1
	sed -i 's/afxdp:dev=\(r[01]\)/afxdp:dev=\1,mode=skb/' "$LAB_DIR/rxpath.conf"
	MODE=skb
	conf="$LAB_DIR/rxpath.conf"
	: >"$LAB_DIR/rxpath.log"
	ip netns exec "$LAB_R" "$RXPATH" run -c "$conf" --json -i 1 \
		>"$LAB_DIR/rxpath.log" 2>"$LAB_DIR/rxpath.err" &
	LAB_RXPATH_PID=$!
	sleep 1
fi
grep '^afxdp ' "$LAB_DIR/rxpath.err" | sed 's/^/  /'
# so that "no XDP program left" below means something
n=$(ip -n "$LAB_R" -d link show | grep -c 'prog/xdp')
if [ "$n" -eq 2 ]; then
	pass "afxdp XDP program on r0 and r1 while running ($MODE)"
else
	fail "afxdp XDP program on r0 and r1 while running ($MODE)" "$n attached"
fi

ping_ok() {	# ping_ok NAME NS ARGS...: PASS when replies came back
	local name=$1 ns=$2; shift 2
	local out
	if out=$(ip netns exec "$ns" ping -c 3 -i 0.2 -W 2 "$@" 2>&1) && grep -q ' 0% packet loss' <<<"$out"; then
		pass "$name"
	else
		fail "$name" "$(tail -n 2 <<<"$out" | head -n 1)"
		lab_show_log
	fi
}

ping_ok "afxdp ping h1 -> h2 (IPv4)" "$LAB_H1" 10.0.2.2
ping_ok "afxdp ping h1 -> h2 (IPv6)" "$LAB_H1" -6 2001:db8:2::2
ping_ok "afxdp ping h2 -> h1 (IPv4)" "$LAB_H2" 10.0.1.2
ping_ok "afxdp ping rxpath 10.0.1.1" "$LAB_H1" 10.0.1.1
ping_ok "afxdp ping rxpath 2001:db8:1::1" "$LAB_H1" -6 2001:db8:1::1
ping_ok "afxdp ping rxpath 10.0.1.1 -s 4000 (reassembled, answered in fragments)" "$LAB_H1" -s 4000 10.0.1.1
ping_ok "afxdp ping rxpath 2001:db8:1::1 -s 4000 (reassembled)" "$LAB_H1" -6 -s 4000 2001:db8:1::1

out=$(ip netns exec "$LAB_H1" ping -c 1 -t 1 -W 2 10.0.2.2 2>&1)
if grep -qi 'Time to live exceeded' <<<"$out" && grep -q '10.0.1.1' <<<"$out"; then
	pass "afxdp ping -t 1: Time Exceeded from 10.0.1.1"
else
	fail "afxdp ping -t 1: Time Exceeded from 10.0.1.1" "$(head -n 3 <<<"$out" | tr '\n' ' ')"
fi

if command -v iperf3 >/dev/null; then
	lab_bg "$LAB_H2" iperf3 -s -1 -B 10.0.2.2 >/dev/null 2>&1
	sleep 0.3
	if out=$(ip netns exec "$LAB_H1" timeout 15 iperf3 -c 10.0.2.2 -t 2 -J 2>&1); then
		bps=$(lab_json 'int(j["end"]["sum_received"]["bits_per_second"])' <<<"$out" 2>/dev/null)
		if [ -n "$bps" ] && [ "$bps" -gt 0 ]; then
			pass "afxdp iperf3 TCP h1 -> h2: $((bps / 1000000)) Mbit/s"
		else
			fail "afxdp iperf3 TCP h1 -> h2" "no throughput in the report"
		fi
	else
		fail "afxdp iperf3 TCP h1 -> h2" "$(tail -n 3 <<<"$out" | tr '\n' ' ')"
		lab_show_log
	fi
else
	skip "afxdp iperf3: no iperf3 (apt-get install iperf3)"
fi

lab_rxpath_stop
rc=$?
if [ "$rc" -eq 0 ]; then
	pass "afxdp SIGTERM: rxpath exits 0 (every buffer accounted for)"
else
	fail "afxdp SIGTERM: rxpath exits 0" "exit status $rc"
	lab_show_log
fi
# The driver's own counters (the sockets' and the kernel's XDP statistics) are in the summary.
check "afxdp_driver_counters" python3 -c '
import json, sys
d = json.loads(sys.argv[1])["ports"][1]["driver"]
assert d["tx_kicks"] + d["rx_wakeups"] > 0 and "kernel_rx_dropped" in d, d
' "$(lab_summary)"

if out=$(ip -n "$LAB_R" -d link show 2>&1) && ! grep -q 'prog/xdp' <<<"$out"; then
	pass "afxdp no XDP program left on r0/r1"
else
	fail "afxdp no XDP program left on r0/r1" "$(grep -B1 'prog/xdp' <<<"$out" | tr '\n' ' ')"
fi

lab_udp_flood_check e2e_afxdp afxdp

# Coalescing and busy polling: the device's NAPI settings while rxpath runs,
# and back as they were at exit.
napi_settings() {
	ip netns exec "$LAB_R" cat /sys/class/net/r0/napi_defer_hard_irqs \
		/sys/class/net/r0/gro_flush_timeout 2>/dev/null | tr '\n' ' '
}
napi_before=$(napi_settings)

# napi_case NAME OPTS MODE SETTINGS [WHILE_RUNNING [AFTER_STOP]]: rxpath on
# afxdp ports with OPTS prints MODE and sets SETTINGS, routes both ways,
# exits 0 and puts the settings back; the two functions add checks.
napi_case() {
	local name=$1 opts=$2 mode=$3 want=$4 while_running=${5:-} after_stop=${6:-}
	local during after rc

	if ! LAB_PORT_OPTS="$opts" lab_rxpath_start afxdp; then
		fail "afxdp $name start" "rxpath did not start with $opts"
		return
	fi
	during=$(napi_settings)
	if grep -q "$mode" "$LAB_DIR/rxpath.err" && [ "$during" = "$want" ]; then
		pass "afxdp $name: $mode, interrupts deferred (napi_defer_hard_irqs, gro_flush_timeout: $during)"
	else
		fail "afxdp $name: $mode, interrupts deferred" "device: $during" \
			"$(grep '^afxdp ' "$LAB_DIR/rxpath.err")"
	fi
	ping_ok "afxdp $name ping h1 -> h2 (IPv4)" "$LAB_H1" 10.0.2.2
	ping_ok "afxdp $name ping h2 -> h1 (IPv4)" "$LAB_H2" 10.0.1.2
	[ -z "$while_running" ] || "$while_running"
	lab_rxpath_stop
	rc=$?
	check "afxdp $name SIGTERM: rxpath exits 0" [ "$rc" -eq 0 ]
	[ -z "$after_stop" ] || "$after_stop"
	after=$(napi_settings)
	if [ "$after" = "$napi_before" ]; then
		pass "afxdp $name: the device's NAPI settings restored ($after)"
	else
		fail "afxdp $name: the device's NAPI settings restored" "before: $napi_before, after: $after"
	fi
	LAB_PORT_OPTS="$opts" lab_udp_flood_check "e2e_afxdp_$name" afxdp
}

# veth registers its XDP queues without a NAPI id: nothing to busy poll, and rxpath says so
busypoll_said() {
	check "afxdp busypoll on veth: no NAPI id, said" \
		grep -q 'busy polling has nothing to poll: the kernel gave the socket no NAPI id' "$LAB_DIR/rxpath.err"
}
busypoll_counted() {
	check "afxdp busypoll: busy polls counted" python3 -c '
import json, sys
d = json.loads(sys.argv[1])["ports"][0]["driver"]
assert d["busy_polls"] > 0, d
' "$(lab_summary)"
}
# busy polling brings coalescing (200 us) with it; coalescing works alone
napi_case busypoll ",busypoll=20" "busy polling" "2 200000 " busypoll_said busypoll_counted
napi_case coalesce ",coalesce=100" "coalescing 100 us" "2 100000 "

lab_down
left=$(ip netns list | grep -c "^$LAB_PREFIX-")
if [ "$left" -eq 0 ]; then
	pass "afxdp teardown: no namespace left"
else
	fail "afxdp teardown: no namespace left" "$left namespaces remain"
fi
