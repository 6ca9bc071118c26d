#!/usr/bin/env bash
# rxpath run --workers: each worker polls its own queue of every port; RSS
# spreads the flows; changes through the control socket reach every worker.
set -u
. "$(dirname "$0")/lib.sh"

SOCK=$TMP/ctl.sock
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@"; }
sed 's/^port add sim0 sim:/port add sim0 sim:queues=2,/; s/^port add sim1 sim:/port add sim1 sim:queues=2,/' \
	examples/router.conf >"$TMP/r2.conf"

# A finite source over two workers: every frame received once, counters add up.
json=$("$RXPATH" run --workers 2 --json -i 0 --ctl none \
	-e 'port add p0 sim:queues=2,proto=udp4+tcp6,flows=1024,count=200000,bad=1' \
	-e 'port add p1 sim:queues=2,rx=off' 2>"$TMP/e0"); rc=$?
check workers_finite_exit_0 [ "$rc" -eq 0 ]
summary=$(grep '"event":"summary"' <<<"$json")
check workers_finite_counts python3 - "$summary" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
p = s["ports"][0]
delivered = sum(s["delivered"].values())
dropped = sum(s["drops"].values())
assert p["rx_packets"] == 200000, p
assert delivered + dropped == 200000, (delivered, dropped)
assert s["drops"]["ip4_bad_checksum"] > 0
PY

# Forwarding on two workers, with the control socket: RSS spread per queue,
# a route change applied while both forward, every buffer back at the end.
"$RXPATH" run -c "$TMP/r2.conf" --workers 2 --ctl "$SOCK" -i 0 -d 120 >"$TMP/run.out" 2>"$TMP/run.err" &
pid=$!
for _ in $(seq 50); do ctl show pool >/dev/null 2>&1 && break; sleep 0.1; done
check workers_started grep -q '^rxpath: 2 workers on CPUs' "$TMP/run.out"
sleep 0.5
stats=$(ctl --json show stats)
check workers_both_queues_receive python3 -c '
import json, sys
q = [x for x in json.loads(sys.argv[1])["queues"] if x["port"] == "sim0"]
assert len(q) == 2 and all(x["rx_packets"] > 0 for x in q), q
' "$stats"
check workers_both_queues_transmit python3 -c '
import json, sys
q = [x for x in json.loads(sys.argv[1])["queues"] if x["port"] == "sim1"]
assert len(q) == 2 and all(x["tx_packets"] > 0 for x in q), q
' "$stats"
# 16.5/16 via a gateway nobody answers: both workers' traffic to it waits for it
check workers_route_add ctl route add 16.5.0.0/16 via 10.0.1.3
sleep 0.3
check workers_route_used grep -q '^10.0.1.3 dev sim1 .*incomplete' <<<"$(ctl show neigh)"
for i in $(seq 20); do ctl route add 40.$i.0.0/16 via 10.0.1.2 && ctl route del 40.$i.0.0/16; done >/dev/null 2>&1
f0=$(ctl --json show stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["stack"]["forwarded"])')
sleep 0.3
f1=$(ctl --json show stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["stack"]["forwarded"])')
check workers_forward_after_changes [ "$f1" -gt "$f0" ]
# capture: a ring per worker, one file, the count shared by the two
capture_n() {	# NAME POINT FILE N: N packets written, and tshark reads as many
	local name=$1 out n
	check "${name}_start" ctl capture start "$2" "$3" count "$4"
	for _ in $(seq 50); do
		out=$(ctl capture stop 2>&1) && break
		sleep 0.1
	done
	check "${name}_count_shared" grep -q "^capture stopped: $4 packets written" <<<"$out"
	n=$(tshark -r "$3" 2>/dev/null | wc -l)
	check "${name}_file_reads" [ "$n" -eq "$4" ]
}
capture_n workers_capture_rx rx "$TMP/rx.pcapng" 1000
capture_n workers_capture_all all "$TMP/all.pcapng" 3000
kill -TERM $pid; wait $pid; rc=$?
check workers_exit_0 [ "$rc" -eq 0 ]
check workers_buffers_accounted grep -q 'buffers: all [0-9]* accounted for' "$TMP/run.out"

# A port with fewer queues than workers is refused, with the fix.
"$RXPATH" run --workers 2 --ctl none -i 0 -e 'port add p0 sim:count=10' >/dev/null 2>"$TMP/e1"; rc=$?
check workers_needs_queues sh -c "[ $rc -eq 1 ] && grep -q 'port p0 has 1 queue; --workers 2 needs one per worker (sim: queues=2' '$TMP/e1'"
"$RXPATH" run -w 0 --ctl none >/dev/null 2>"$TMP/e2"; rc=$?
check workers_bad_count sh -c "[ $rc -eq 2 ] && grep -q -- '--workers 0: expected 1 to' '$TMP/e2'"
