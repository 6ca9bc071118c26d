#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two workers on real interfaces: veths with two queue pairs; AF_XDP with one
# socket per queue, AF_PACKET with two sockets in a PACKET_FANOUT group (flow
# hash); each worker on its own CPU. Several TCP flows spread over both
# queues; ping (also in fragments) and iperf3 go through; counters add up; a
# clean SIGTERM.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

LAB_QUEUES=2
lab_init
have_xdp=1
"$PYTHON" -c 'import socket; socket.socket(44, socket.SOCK_RAW, 0).close()' 2>/dev/null || have_xdp=0

# host_outgoing_check: 200 frames sent by r's kernel out of r0 while rxpath runs (SOCK)
host_outgoing_check() {
	local before after
	p0_rx() { "$RXPATH" ctl --socket "$SOCK" --json show ports | lab_json '[p["rx_packets"] for p in j["ports"] if p["name"] == "p0"][0]'; }
	before=$(p0_rx)
	lab_in "$LAB_R" python3 -c '
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("r0", 0))
for i in range(200):
    s.send(bytes.fromhex("ffffffffffff02000000009908060001080006040001") + bytes(38))
'
	sleep 0.3
	after=$(p0_rx)
	check "${T}_host_outgoing_not_received" [ $((after - before)) -lt 50 ]
	echo "  observed: p0 received $((after - before)) frames while the host sent 200 out of r0"
}

run_case() {
	local driver=$1 T=e2e_workers_$1 out bps stats summary rc
	lab_up || { fail "${T}_lab_up" "could not build the namespaces"; return; }
	SOCK=$LAB_DIR/ctl.sock
	if ! lab_rxpath_start "$driver" --workers 2 --ctl "$SOCK"; then
		fail "${T}_start" "rxpath did not start with 2 workers on 2-queue veths"
		lab_down
		return
	fi
	pass "${T}_start"
	check "${T}_two_workers" grep -q '"event":"start","workers":2' "$LAB_DIR/rxpath.log"
	check "${T}_ping4" lab_in "$LAB_H1" ping -n -c 3 -i 0.2 -w 5 10.0.2.2
	check "${T}_ping6" lab_in "$LAB_H1" ping -6 -n -c 3 -i 0.2 -w 5 2001:db8:2::2
	# larger than the link: fragments forwarded, and reassembled when they are for rxpath
	check "${T}_ping4_fragmented_through" lab_in "$LAB_H1" ping -n -c 3 -i 0.2 -w 5 -s 3000 10.0.2.2
	check "${T}_ping4_fragmented_to_rxpath" lab_in "$LAB_H1" ping -n -c 3 -i 0.2 -w 5 -s 3000 10.0.1.1
	check "${T}_ping6_fragmented_through" lab_in "$LAB_H1" ping -6 -n -c 3 -i 0.2 -w 5 -s 3000 2001:db8:2::2
	lab_bg "$LAB_H2" iperf3 -s -1 -p 5201 >/dev/null 2>&1
	sleep 0.5
	out=$(lab_in "$LAB_H1" iperf3 -c 10.0.2.2 -p 5201 -t 3 -P 8 -J 2>&1)
	bps=$(python3 -c 'import json,sys; print(int(json.loads(sys.stdin.read())["end"]["sum_received"]["bits_per_second"]))' <<<"$out" 2>/dev/null || echo 0)
	check "${T}_iperf3_8_flows" [ "${bps:-0}" -gt 0 ]
	echo "  observed: iperf3 8 TCP flows h1 -> h2 through 2 workers on $driver: $((bps / 1000000)) Mbit/s"
	stats=$("$RXPATH" ctl --socket "$SOCK" --json show stats)
	check "${T}_both_queues_used" python3 -c '
import json, sys
q = [x for x in json.loads(sys.argv[1])["queues"] if x["port"] == "p0"]
print("  observed: p0 rx per queue", [x["rx_packets"] for x in q])
assert len(q) == 2 and all(x["rx_packets"] > 0 for x in q), q
' "$stats"
	# AF_PACKET: frames the host itself sends out of r0 are not rxpath's input, also with
	# the sockets in a fanout group (where the socket's own PACKET_IGNORE_OUTGOING no longer
	# holds); XDP never sees outgoing frames
	[ "$driver" = afpacket ] && host_outgoing_check
	lab_rxpath_stop; rc=$?
	check "${T}_exit_0" [ "$rc" -eq 0 ]
	summary=$(lab_summary)
	check "${T}_counts_add_up" python3 -c '
import json, sys
s = json.loads(sys.argv[1])
rx = sum(p["rx_packets"] for p in s["ports"])
done = s["forwarded"] + sum(s["delivered"].values()) + sum(s["drops"].values())
assert rx == done, (rx, done)
' "$summary"
	lab_down
}

if [ "$have_xdp" = 1 ]; then
	run_case afxdp
else
	echo "SKIP e2e_workers_afxdp: the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS=y)"
fi
run_case afpacket
