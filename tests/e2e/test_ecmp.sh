#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Multipath (ECMP) with real hosts: two upstream routers, h2 (p1) and h3
# (p2), both lead to the server s (10.9.0.1), and rxpath routes 10.9.0.0/24
# over both:
#
#                                            p1 --- h2 (10.0.2.2) --- 10.0.5.0/24 ---.
#   h1 (10.0.1.2) --- p0 [ rxpath, ECMP ] <                                          s (10.9.0.1 on lo)
#                                            p2 --- h3 (10.0.4.2) --- 10.0.6.0/24 ---'
#
# iperf3 with many parallel streams uses both links (both routers forward a
# share, and `show routes` counts packets on both next hops); cutting the
# link a ping flow uses moves that flow to the other within a second; the
# link back, the flow returns. Then the same spread with two workers.
#
# Run as root: BUILD=build bash tests/e2e/test_ecmp.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_ecmp
LAB_QUEUES=2

lab_init
command -v iperf3 >/dev/null || lab_skip_all "iperf3 not installed (apt-get install iperf3)"
trap lab_down EXIT
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

if ! lab_ecmp_up; then
	fail "${T}_lab_up" "could not add h3 on r2 or the server s behind h2 and h3"
	exit 1
fi

SOCK=$LAB_DIR/ctl.sock
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@" 2>&1; }
ECMP_CONF="port add p2 afpacket:dev=r2,queues=2
addr add 10.0.4.1/24 dev p2
route add 10.9.0.0/24 nexthop via 10.0.2.2 nexthop via 10.0.4.2"


if ! LAB_QUEUES='' LAB_CONF_EXTRA="$ECMP_CONF" lab_rxpath_start afpacket --ctl "$SOCK"; then
	fail "${T}_rxpath_start" "$(cat "$LAB_DIR/rxpath.err")"
	exit 1
fi
out=$(ctl show routes 10.9.0.0/24)
if echo "$out" | grep -q "nexthop via 10.0.2.2 dev p1 weight 1 up" &&
   echo "$out" | grep -q "nexthop via 10.0.4.2 dev p2 weight 1 up"; then
	pass "${T}_show_routes_lists_both"
else
	fail "${T}_show_routes_lists_both" "$out"
fi
check "${T}_ping_server" lab_ping_quiet "$LAB_H1" 10.9.0.1
lab_ecmp_spread "${T}_one_worker_iperf3_uses_both_links" "$SOCK"

# --- a link cut: the ping flow's link goes down in its host; the flow moves within a second ---
# which next hop carries h1's pings (ICMP echo: one flow, by its addresses)
b2=$(lab_ecmp_path_pkts "$SOCK" 10.0.2.2) b3=$(lab_ecmp_path_pkts "$SOCK" 10.0.4.2)
lab_in "$LAB_H1" ping -n -c 5 -i 0.05 10.9.0.1 >/dev/null 2>&1
a2=$(lab_ecmp_path_pkts "$SOCK" 10.0.2.2) a3=$(lab_ecmp_path_pkts "$SOCK" 10.0.4.2)
if [ $((a2 - b2)) -ge 5 ]; then
	used=$LAB_H2 usedgw=10.0.2.2 other=10.0.4.2 back=10.0.6.1
else
	used=$LAB_H3 usedgw=10.0.4.2 other=10.0.2.2 back=10.0.5.1
fi
ip -n "$LAB_S" route replace default via "$back"	# the answers by the link that stays
# 200 pings 20 ms apart (4 s); the link goes down 1 s in
lab_in "$LAB_H1" ping -n -c 200 -i 0.02 -W 1 10.9.0.1 >"$LAB_DIR/cut.txt" 2>&1 &
ping_pid=$!
sleep 1
ip -n "$used" link set eth0 down
sleep 1.5
out=$(ctl show routes 10.9.0.0/24)
wait "$ping_pid"
ip -n "$used" link set eth0 up
received=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$LAB_DIR/cut.txt")
lost=$((200 - ${received:-0}))
echo "  observed: link to $usedgw cut: $lost of 200 pings (20 ms apart) lost"
if echo "$out" | grep -q "nexthop via $usedgw dev p[12] weight 1 down" &&
   echo "$out" | grep -q "nexthop via $other dev p[12] weight 1 up"; then
	pass "${T}_cut_link_next_hop_down"
else
	fail "${T}_cut_link_next_hop_down" "$out"
fi
# within a second: at most 50 of the pings 20 ms apart are lost
if [ "$lost" -le 50 ] && [ "${received:-0}" -ge 100 ]; then
	pass "${T}_cut_link_flow_moves_within_1s"
else
	fail "${T}_cut_link_flow_moves_within_1s" "$lost pings lost" "$(tail -n 3 "$LAB_DIR/cut.txt")"
fi
if grep -q "link down (no carrier); its next hops leave the multipath routes" "$LAB_DIR/rxpath.log" "$LAB_DIR/rxpath.err"; then
	pass "${T}_cut_link_told"
else
	fail "${T}_cut_link_told" "$(tail -n 5 "$LAB_DIR/rxpath.err")"
fi
# the link back: the flow returns to its next hop
for _ in $(seq 40); do
	ctl show routes 10.9.0.0/24 | grep -q "via $usedgw dev p[12] weight 1 up" && break
	sleep 0.05
done
b=$(lab_ecmp_path_pkts "$SOCK" "$usedgw")
lab_in "$LAB_H1" ping -n -c 5 -i 0.05 -w 3 10.9.0.1 >/dev/null 2>&1
a=$(lab_ecmp_path_pkts "$SOCK" "$usedgw")
if [ $((a - b)) -ge 5 ]; then
	pass "${T}_link_back_flow_returns"
else
	fail "${T}_link_back_flow_returns" "$usedgw carried $((a - b)) of 5 pings" "$(ctl show routes 10.9.0.0/24)"
fi
lab_rxpath_stop
check "${T}_clean_exit" test $? -eq 0
if ! grep -q 'not accounted' "$LAB_DIR/rxpath.err"; then
	pass "${T}_buffers_accounted"
else
	fail "${T}_buffers_accounted" "$(tail -n 3 "$LAB_DIR/rxpath.err")"
fi

# --- two workers: the same spread ---
if ! LAB_QUEUES=2 LAB_CONF_EXTRA="$ECMP_CONF" lab_rxpath_start afpacket --workers 2 --ctl "$SOCK"; then
	fail "${T}_workers_rxpath_start" "$(cat "$LAB_DIR/rxpath.err")"
	exit 1
fi
check "${T}_workers_ping_server" lab_ping_quiet "$LAB_H1" 10.9.0.1
lab_ecmp_spread "${T}_two_workers_iperf3_uses_both_links" "$SOCK"
lab_rxpath_stop
check "${T}_workers_clean_exit" test $? -eq 0
