#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The stateful filter with two workers: veths with two queue pairs, AF_PACKET
# sockets in a fanout group, so the two directions of a connection may come
# in on different workers. A default-drop forward policy with
# `ct-state established,related accept` and new connections from the inside
# only: TCP flows from inside go through both ways (their replies found as
# established whichever worker sees them), a connection from outside does
# not, and the counters add up.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_firewall_workers
LAB_QUEUES=2
lab_init
command -v iperf3 >/dev/null || lab_skip_all "iperf3 not installed (apt-get install iperf3)"
lab_up || { fail "${T}_lab_up" "could not build the namespaces"; exit 1; }
SOCK=$LAB_DIR/ctl.sock
LAB_CONF_EXTRA="filter add forward ct-state established,related accept
filter add forward in p0 ct-state new accept
filter policy forward drop" lab_rxpath_start afpacket --workers 2 --ctl "$SOCK"
if [ -z "$LAB_RXPATH_PID" ]; then
	fail "${T}_start" "rxpath did not start with 2 workers and the filter"
	exit 1
fi
pass "${T}_start"
check "${T}_ping4_inside_out" lab_in "$LAB_H1" ping -n -c 3 -i 0.2 -w 5 10.0.2.2
check "${T}_ping6_inside_out" lab_in "$LAB_H1" ping -6 -n -c 3 -i 0.2 -w 5 2001:db8:2::2
if lab_in "$LAB_H2" ping -n -c 2 -i 0.2 -W 1 10.0.1.2 >/dev/null 2>&1; then
	fail "${T}_ping4_outside_in_dropped" "h2 reached h1: the forward policy let a new connection in"
else
	pass "${T}_ping4_outside_in_dropped"
fi

# 8 TCP flows each way, started from inside
for dir in "" -R; do
	name=iperf3_8_flows${dir:+_reverse}
	if lab_iperf3 "$name" -t 2 -P 8 $dir &&
	   bps=$(lab_json 'int(j["end"]["sum_received"]["bits_per_second"])' <"$LAB_DIR/$name.json") &&
	   [ "${bps:-0}" -gt 0 ]; then
		pass "${T}_$name"
		echo "  observed: iperf3 -P 8 $dir through 2 workers: $((bps / 1000000)) Mbit/s"
	else
		fail "${T}_$name" "$(tail -n 5 "$LAB_DIR/$name.json")"
	fi
done

# a connection from outside finds no way in
lab_bg "$LAB_H1" iperf3 -s -1 -B 10.0.1.2 -p 5301 >/dev/null 2>&1
sleep 0.3
if lab_in "$LAB_H2" timeout 5 iperf3 -c 10.0.1.2 -p 5301 -t 1 --connect-timeout 1500 >/dev/null 2>&1; then
	fail "${T}_tcp_outside_in_dropped" "h2 connected to h1"
else
	pass "${T}_tcp_outside_in_dropped"
fi

stats=$("$RXPATH" ctl --socket "$SOCK" --json show stats)
check "${T}_both_queues_used" "$PYTHON" -c '
import json, sys
q = [x for x in json.loads(sys.argv[1])["queues"] if x["port"] == "p1"]
print("  observed: p1 rx per queue", [x["rx_packets"] for x in q])
assert len(q) == 2 and all(x["rx_packets"] > 0 for x in q), q
' "$stats"
ct=$("$RXPATH" ctl --socket "$SOCK" --json show conntrack stats)
check "${T}_conntrack_no_invalid" "$PYTHON" -c '
import json, sys
s = json.loads(sys.argv[1])
print("  observed: conntrack", {k: s[k] for k in ("entries", "inserted", "invalid", "table_full")})
assert s["inserted"] > 0 and s["table_full"] == 0, s
' "$ct"

lab_rxpath_stop
rc=$?
check "${T}_exit_0" [ "$rc" -eq 0 ]
summary=$(lab_summary)
check "${T}_counts_add_up" "$PYTHON" -c '
import json, sys
s = json.loads(sys.argv[1])
rx = sum(p["rx_packets"] for p in s["ports"])
done = s["forwarded"] + sum(s["delivered"].values()) + sum(s["drops"].values())
assert rx == done, (rx, done)
' "$summary"
lab_down
