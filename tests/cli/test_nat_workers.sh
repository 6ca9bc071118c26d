#!/usr/bin/env bash
# NAT with two workers on sim ports: 70,000 inside flows (source ports wrap at
# 60,000, so 10,000 pairs of inside hosts want the same port) are mapped by
# whichever worker RSS gives them, at once; no outside endpoint may be handed
# out twice, and every connection keeps one mapping.
set -u
. "$(dirname "$0")/lib.sh"

SOCK=$TMP/ctl.sock
cat >"$TMP/nat.conf" <<'EOF'
port add sim0 sim:proto=udp4,size=64,flows=70000,src4=172.16.0.0/16,dst4=16.0.0.0/8,queues=2
port add sim1 sim:rx=off,queues=2
addr add 198.18.255.254/16 dev sim0
addr add 10.0.1.1/24 dev sim1
neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev sim1
neigh add 198.18.0.2 lladdr 02:00:00:00:00:02 dev sim0
route add 172.16.0.0/16 via 198.18.0.2
route add 16.0.0.0/8 via 10.0.1.2
conntrack max 262144
nat add snat out sim1 to 10.0.1.100-10.0.1.101
EOF
"$RXPATH" run -c "$TMP/nat.conf" --workers 2 --ctl "$SOCK" --interval 0 --duration 60 >"$TMP/run.out" 2>&1 &
PID=$!
for _ in $(seq 100); do
	"$RXPATH" ctl --socket "$SOCK" show nat >"$TMP/nat.txt" 2>/dev/null &&
		grep -q "mappings: 70000 of" "$TMP/nat.txt" && break
	sleep 0.1
done
check nat_workers_every_flow_mapped grep -q "mappings: 70000 of" "$TMP/nat.txt"
"$RXPATH" ctl --socket "$SOCK" show conntrack >"$TMP/ct.txt" 2>/dev/null
check nat_workers_one_connection_per_flow [ "$(grep -c '^udp' "$TMP/ct.txt")" -eq 70000 ]
# the reply tuple's destination is the outside endpoint: each once
check nat_workers_no_outside_endpoint_twice python3 - "$TMP/ct.txt" <<'PY'
import re, sys
seen, n = set(), 0
for line in open(sys.argv[1]):
    f = re.findall(r"(src|dst|sport|dport)=(\S+)", line)
    if len(f) < 8:
        continue
    reply = dict(f[4:8])
    key = (reply["dst"], reply["dport"])
    assert key not in seen, ("outside endpoint twice", key)
    assert reply["dst"] in ("10.0.1.100", "10.0.1.101"), reply
    seen.add(key)
    n += 1
assert n == 70000, n
PY
kill -TERM "$PID" 2>/dev/null
wait "$PID"
rc=$?
PID=
check nat_workers_exit_0 [ "$rc" -eq 0 ]
check nat_workers_buffers_accounted grep -q "all [0-9]* accounted for" "$TMP/run.out"
