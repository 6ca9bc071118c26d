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
# larger than the link: rxpath reassembles the request and answers in fragments
ping_ok "${T}_ping4_router_fragmented" "$LAB_H1" -s 4000 10.0.1.1
ping_ok "${T}_ping6_router_fragmented" "$LAB_H1" -6 -s 4000 2001:db8:1::1

# ping -R: the router's echo reply records its address in the route (RFC 1812 4.3.3.6)
out=$(lab_in "$LAB_H1" ping -n -R -c 1 -W 2 10.0.1.1 2>&1)
if grep -A3 '^RR:' <<<"$out" | grep -q '10\.0\.1\.1$'; then
	pass "${T}_ping_record_route"
else
	fail "${T}_ping_record_route" "expected 10.0.1.1 in the RR: list of 'ping -R 10.0.1.1':" "$out"
fi

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

# Nothing listens on rxpath's addresses (no host path): a TCP connect is
# refused by a reset and a UDP socket sees Port Unreachable, at once, as from
# a host; the far-side address answers from itself (traceroute's last hop).
refused_py='
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    s = socket.socket(fam, kind)
    s.settimeout(2)
    try:
        s.connect((sys.argv[1], 33434))
        if kind == socket.SOCK_DGRAM:
            s.send(b"probe")
            s.recv(100)
        print("no refusal", kind)
        sys.exit(1)
    except ConnectionRefusedError:
        pass
'
for addr in 10.0.2.1 2001:db8:1::1; do
	if out=$(lab_in "$LAB_H1" python3 -c "$refused_py" "$addr" 2>&1); then
		pass "${T}_closed_ports_refused_$addr"
	else
		fail "${T}_closed_ports_refused_$addr" "TCP and UDP to $addr should be refused:" "$out"
	fi
done

if ! command -v iperf3 >/dev/null; then
	skip "${T}_iperf3: iperf3 not installed (apt-get install iperf3)"
else
	for dir in fwd rev; do
		args=(-t 2)
		[ $dir = rev ] && args+=(-R)
		if lab_iperf3 "tcp_$dir" "${args[@]}" &&
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

# The driver's own counters are in the summary: p1 sent to h2, so the TX ring was kicked.
check "${T}_driver_counters" python3 -c '
import json, sys
d = json.loads(sys.argv[1])["ports"][1]["driver"]
assert d["tx_kicks"] > 0 and "kernel_drops" in d, d
' "$summary"

lab_udp_flood_check "$T" "$DRIVER"

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
