# SPDX-License-Identifier: MIT
# rxpath on AF_PACKET ports routes real traffic between two hosts in network
# namespaces: ping, Time Exceeded, iperf3 TCP both ways, a UDP flood whose
# counters must add up, a clean SIGTERM and nothing left behind.
# Run as root: BUILD=build bash tests/e2e/test_afpacket.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

DRIVER=afpacket
T=e2e_$DRIVER

lab_init
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
if ! lab_rxpath_start "$DRIVER"; then
	fail "${T}_start" "rxpath did not start on $DRIVER ports"
	exit 1
fi
pass "${T}_start"

# ping_ok NAME NS ARGS... : all of 3 echo requests answered (ping -c with -w counts them all)
ping_ok() {
	local name=$1 ns=$2 out; shift 2
	if out=$(lab_in "$ns" ping -n -c 3 -i 0.2 -w 5 "$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "ping $*:" "$(echo "$out" | tail -n 3)"
	fi
}

ping_ok "${T}_ping4_h1_h2" "$LAB_H1" 10.0.2.2
ping_ok "${T}_ping6_h1_h2" "$LAB_H1" -6 2001:db8:2::2
ping_ok "${T}_ping4_h2_h1" "$LAB_H2" 10.0.1.2
ping_ok "${T}_ping4_router" "$LAB_H1" 10.0.1.1
ping_ok "${T}_ping6_router" "$LAB_H1" -6 2001:db8:1::1
ping_ok "${T}_ping4_router_far_side" "$LAB_H1" 10.0.2.1

# TTL 1: the router answers Time Exceeded from the address on the way in.
out=$(lab_in "$LAB_H1" ping -n -c 1 -t 1 -W 2 10.0.2.2 2>&1)
if echo "$out" | grep -q 'From 10.0.1.1 .*Time to live exceeded'; then
	pass "${T}_ttl1_time_exceeded4"
else
	fail "${T}_ttl1_time_exceeded4" "expected 'From 10.0.1.1 ... Time to live exceeded':" "$out"
fi
out=$(lab_in "$LAB_H1" ping -n -6 -c 1 -t 1 -W 2 2001:db8:2::2 2>&1)
if echo "$out" | grep -qi 'From 2001:db8:1::1 .*Time exceeded'; then
	pass "${T}_hoplimit1_time_exceeded6"
else
	fail "${T}_hoplimit1_time_exceeded6" "expected 'From 2001:db8:1::1 ... Time exceeded':" "$out"
fi

# iperf3_run NAME IPERF3-CLIENT-ARGS... : one test against a fresh one-shot server in h2.
# Leaves the client's JSON in $LAB_DIR/NAME.json. Returns the client's status.
iperf3_run() {
	local name=$1 i; shift
	lab_bg "$LAB_H2" iperf3 -s -1 -B 10.0.2.2 >/dev/null 2>&1
	for i in $(seq 50); do
		lab_in "$LAB_H2" ss -Hltn 'sport = :5201' 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	lab_in "$LAB_H1" timeout 15 iperf3 -c 10.0.2.2 "$@" -J >"$LAB_DIR/$name.json" 2>&1
}

if ! command -v iperf3 >/dev/null; then
	skip "${T}_iperf3: iperf3 not installed (apt-get install iperf3)"
else
	for dir in fwd rev; do
		args=(-t 2)
		[ $dir = rev ] && args+=(-R)
		if iperf3_run "tcp_$dir" "${args[@]}" &&
		   bps=$(lab_json 'j["end"]["sum_received"]["bits_per_second"]' <"$LAB_DIR/tcp_$dir.json") &&
		   "$PYTHON" -c "import sys; sys.exit(not float('$bps') > 0)"; then
			pass "${T}_iperf3_tcp_$dir"
			echo "  iperf3 TCP $dir ($([ $dir = rev ] && echo 'h2 -> h1' || echo 'h1 -> h2')): $(awk -v b="$bps" 'BEGIN { printf "%.0f Mbit/s", b / 1e6 }')"
		else
			fail "${T}_iperf3_tcp_$dir" "iperf3 ${args[*]}:" "$(tail -n 5 "$LAB_DIR/tcp_$dir.json")"
		fi
	done
fi

# SIGTERM: exit status 0 and a summary.
lab_rxpath_stop
rc=$?
summary=$(lab_summary)
if [ $rc -eq 0 ] && [ -n "$summary" ]; then
	pass "${T}_sigterm_exit0_summary"
else
	fail "${T}_sigterm_exit0_summary" "exit status $rc, summary: ${summary:-none}"
	lab_show_log
fi

# A UDP flood h1 -> h2 through a fresh rxpath: its counters must add up, and
# h2 cannot have received more than rxpath sent it.
h2_rx() { ip -n "$LAB_H2" -s -j link show eth0 | lab_json 'j[0]["stats64"]["rx"]["packets"]'; }
if ! command -v iperf3 >/dev/null; then
	skip "${T}_udp_flood: iperf3 not installed (apt-get install iperf3)"
elif ! lab_rxpath_start "$DRIVER"; then
	fail "${T}_udp_flood" "rxpath did not start again"
else
	h2_before=$(h2_rx)
	iperf3_run udp -u -b 200M -l 256 -t 2
	udp_rc=$?
	sleep 0.2	# let the last frames drain
	lab_rxpath_stop
	rc=$?
	h2_after=$(h2_rx)
	summary=$(lab_summary)
	if [ $udp_rc -ne 0 ] || [ $rc -ne 0 ] || [ -z "$summary" ]; then
		fail "${T}_udp_flood" "iperf3 status $udp_rc, rxpath status $rc" \
			"$(tail -n 5 "$LAB_DIR/udp.json")"
		lab_show_log
	else
		pass "${T}_udp_flood"
		# received = forwarded + delivered (ARP, ND, echo) + dropped by reason
		read -r rx fwd dlv drp tx1 <<<"$(echo "$summary" | lab_json '" ".join(str(x) for x in (
			sum(p["rx_packets"] for p in j["ports"]), j["forwarded"],
			sum(j["delivered"].values()), sum(j["drops"].values()),
			[p for p in j["ports"] if p["port"] == "p1"][0]["tx_packets"]))')"
		udp_sent=$(lab_json 'j["end"]["sum"]["packets"]' <"$LAB_DIR/udp.json")
		udp_lost=$(lab_json 'j["end"]["sum"]["lost_packets"]' <"$LAB_DIR/udp.json")
		udp_rcvd=$((udp_sent - udp_lost))
		h2_delta=$((h2_after - h2_before))
		echo "  received $rx = forwarded $fwd + delivered $dlv + dropped $drp;" \
		     "iperf3 sent $udp_sent, h2 got $udp_rcvd; h2 eth0 rx $h2_delta, p1 tx $tx1"
		if [ "$rx" -eq $((fwd + dlv + drp)) ]; then
			pass "${T}_counters_add_up"
		else
			fail "${T}_counters_add_up" "received $rx != forwarded $fwd + delivered $dlv + dropped $drp" \
				"$summary"
		fi
		if [ "$udp_rcvd" -gt 0 ] && [ "$udp_rcvd" -le "$fwd" ] && [ "$h2_delta" -le "$tx1" ]; then
			pass "${T}_h2_count_within_forwarded"
		else
			fail "${T}_h2_count_within_forwarded" \
				"h2 got $udp_rcvd datagrams (rxpath forwarded $fwd); h2 eth0 received $h2_delta frames (rxpath sent $tx1 on p1)"
		fi
	fi
fi

# Teardown leaves nothing: no namespace, no veth, no rxpath.
prefix=$LAB_PREFIX
lab_down
left=$(ip netns list | grep "^$prefix-")
links=$(ip -o link show | grep -- "$prefix-")
if [ -z "$left" ] && [ -z "$links" ]; then
	pass "${T}_teardown_clean"
else
	fail "${T}_teardown_clean" "left behind:" "$left" "$links"
fi
