#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NAT44 with real hosts: h1 (p0, 10.0.1.0/24) is inside, h2 (p1) outside and
# has NO route back to 10.0.1.0/24 (its default route is deleted), so only
# translation brings answers back. A router g behind h2 makes h2 a hop of its
# own for traceroute (ICMP errors about translated packets, RFC 5508):
#
#   h1 (10.0.1.2, 10.0.1.3) --- p0 [ rxpath, masquerade out p1 ] p1 --- h2 (forwards) --- g (10.9.9.9 on lo)
#
# Masquerade from inside (ping, UDP with its port kept, iperf3, curl,
# traceroute), a port forward 10.0.2.1:8080 -> h1:80 from outside and
# hairpinned from inside, address-and-port-dependent filtering, what
# `show nat` and `show conntrack` show; the basics again with two workers;
# nothing with an inside source address ever reaches h2; clean exits.
#
# Run as root: BUILD=build bash tests/e2e/test_nat.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_nat
# two queue pairs on the veths for the two-worker run; the one-worker run asks for no queues
LAB_QUEUES=2

lab_init
command -v iperf3 >/dev/null || lab_skip_all "iperf3 not installed (apt-get install iperf3)"
command -v curl >/dev/null || lab_skip_all "curl not installed (apt-get install curl)"
trap lab_down EXIT
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

# the outside: h2's IPv4 default route (via 10.0.2.1) would carry answers to
# 10.0.1.0/24 untranslated; without it only 10.0.2.0/24 and g are reachable
nat_lab() {
	ip -n "$LAB_H2" route del default via 10.0.2.1 &&
	! ip -n "$LAB_H2" route get 10.0.1.2 >/dev/null 2>&1 &&
	# a second inside address: the hairpin client
	ip -n "$LAB_H1" addr add 10.0.1.3/24 dev eth0
}
if ! lab_g_up || ! nat_lab; then
	fail "${T}_lab_up" "could not add the router g behind h2, take h2's route to the inside away or give h1 10.0.1.3" \
		"$(ip -n "$LAB_H2" route 2>&1)"
	exit 1
fi

PROBE=$PWD/tests/e2e/probe.py
probe() { local ns=$1; shift; lab_in "$ns" "$PYTHON" "$PROBE" "$@" 2>&1; }
# bgprobe NS LOG ARGS... : a probe in the background, its lines in LOG
bgprobe() { local ns=$1 log=$2; shift 2; lab_bg "$ns" "$PYTHON" -u "$PROBE" "$@" >"$log" 2>&1; }
wait_ready() {
	for _ in $(seq 100); do
		grep -q '^ready' "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
wait_listen() {
	local ns=$1 flags=$2 port=$3
	for _ in $(seq 100); do
		lab_in "$ns" ss "-Hn$flags" "sport = :$port" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	return 1
}
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@" 2>&1; }
EMPTY_JSON="{}"
nonzero() { [ -n "${1:-}" ] && [ "$1" -gt 0 ] 2>/dev/null; }

# --- the servers, up for both runs ---
mkdir -p "$LAB_DIR/www"
head -c 200000 /dev/urandom | base64 >"$LAB_DIR/www/file.txt"
bgprobe "$LAB_H2" "$LAB_DIR/leaks.log" leaks eth0
lab_bg "$LAB_H2" "$PYTHON" -u -m http.server 8000 --bind 10.0.2.2 --directory "$LAB_DIR/www" \
	>"$LAB_DIR/http.log" 2>&1
bgprobe "$LAB_H2" "$LAB_DIR/udpserve.log" udpserve 10.0.2.2 7000
bgprobe "$LAB_H1" "$LAB_DIR/fwd.log" tcpserve 80 hello-from-h1
bgprobe "$LAB_H1" "$LAB_DIR/h1_9999.log" tcpserve 9999 h1-9999-must-not-be-reached
if wait_ready "$LAB_DIR/leaks.log" && wait_listen "$LAB_H2" lt 8000 && wait_listen "$LAB_H2" lu 7000 &&
   wait_listen "$LAB_H1" lt 80 && wait_listen "$LAB_H1" lt 9999; then
	pass "${T}_servers_up"
else
	fail "${T}_servers_up" "a server did not come up:" "$(tail -n 3 "$LAB_DIR"/*.log)"
	exit 1
fi

SOCK=$LAB_DIR/ctl.sock
NAT_CONF="route add 10.9.9.0/24 via 10.0.2.2
nat add masquerade out p1 src 10.0.1.0/24
nat add dnat in p1 proto tcp dport 8080 to 10.0.1.2:80
filter add forward ct-state established,related accept
filter add forward in p0 ct-state new accept
filter add forward ct-state new proto tcp dport 80 accept
filter policy forward drop"

# --- the basics, run by both the one-worker and the two-worker rxpath; W is the name's prefix ---
ping_ok() {
	local name=$1 ns=$2 out; shift 2
	if out=$(lab_in "$ns" ping -n -c 2 -i 0.2 -w 3 "$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "ping $*:" "$(echo "$out" | tail -n 3)"
	fi
}
iperf_ok() {
	local name=$1; shift
	if lab_iperf3 "$name" "$@" && grep -q '"bits_per_second"' "$LAB_DIR/$name.json"; then
		pass "$name"
		return 0
	fi
	fail "$name" "iperf3 -c 10.0.2.2 $*:" "$(tail -n 5 "$LAB_DIR/$name.json")"
	return 1
}
basics() {
	local W=$1 P=$2 out n bps lost sent

	# ping: through, and h2 sees the echo requests from 10.0.2.1
	bgprobe "$LAB_H2" "$LAB_DIR/icmp.log" icmpsniff 2.5
	wait_ready "$LAB_DIR/icmp.log"
	ping_ok "${W}_ping_inside_out" "$LAB_H1" -c 3 10.0.2.2
	sleep 0.1
	if grep -q '^icmp 10.0.2.1 10.0.2.2 8$' "$LAB_DIR/icmp.log" &&
	   ! grep -q '^icmp 10.0.1' "$LAB_DIR/icmp.log"; then
		pass "${W}_ping_source_is_outside_address"
	else
		fail "${W}_ping_source_is_outside_address" \
			"expected h2 to see echo requests (type 8) from 10.0.2.1 only; h2 saw (icmp SRC DST TYPE):" \
			"$(grep -v ready "$LAB_DIR/icmp.log" | sort | uniq -c | head -n 10)"
	fi

	# UDP: the echo comes back; the server saw 10.0.2.1 and h1's source port kept
	n=$(grep -c '^peer' "$LAB_DIR/udpserve.log")
	out=$(probe "$LAB_H1" udpecho 10.0.2.2 7000 40001 2)
	if [ "$out" = "echo nat-echo from 10.0.2.2 7000" ]; then
		pass "${W}_udp_echo"
	else
		fail "${W}_udp_echo" "h1 (port 40001) to 10.0.2.2:7000: expected 'echo nat-echo from 10.0.2.2 7000', got: $out"
	fi
	out=$(grep "^peer" "$LAB_DIR/udpserve.log" | tail -n +$((n + 1)))
	if [ "$out" = "peer 10.0.2.1 40001" ]; then
		pass "${W}_udp_source_outside_port_kept"
	else
		fail "${W}_udp_source_outside_port_kept" "the UDP server on h2 saw (expected 'peer 10.0.2.1 40001' once):" "${out:-nothing}"
	fi

	# iperf3: TCP both ways and UDP ($P: more flows, split into words)
	# shellcheck disable=SC2086
	iperf_ok "${W}_iperf3_tcp" -t 1 $P &&
		bps=$(lab_json 'int(j["end"]["sum_received"]["bits_per_second"])' <"$LAB_DIR/${W}_iperf3_tcp.json") &&
		echo "  observed: iperf3 TCP h1 -> h2 through NAT: $((bps / 1000000)) Mbit/s"
	# shellcheck disable=SC2086
	iperf_ok "${W}_iperf3_tcp_reverse" -t 1 -R $P
	if iperf_ok "${W}_iperf3_udp" -u -b 10M -t 1; then
		sent=$(lab_json 'j["end"]["sum"]["packets"]' <"$LAB_DIR/${W}_iperf3_udp.json")
		lost=$(lab_json 'j["end"]["sum"]["lost_packets"]' <"$LAB_DIR/${W}_iperf3_udp.json")
		echo "  observed: iperf3 UDP 10 Mbit/s: $sent datagrams, $lost lost"
		if nonzero "$sent" && [ "$lost" -lt "$sent" ]; then
			pass "${W}_iperf3_udp_received"
		else
			fail "${W}_iperf3_udp_received" "iperf3 -u: $sent sent, $lost lost"
		fi
	fi

	# curl a file from h2's http.server; its log names 10.0.2.1 as the client
	n=$(grep -c 'GET /file.txt' "$LAB_DIR/http.log")
	if lab_in "$LAB_H1" curl -sS --max-time 5 -o "$LAB_DIR/got.txt" http://10.0.2.2:8000/file.txt 2>"$LAB_DIR/curl.err" &&
	   cmp -s "$LAB_DIR/got.txt" "$LAB_DIR/www/file.txt"; then
		pass "${W}_curl_file"
	else
		fail "${W}_curl_file" "curl http://10.0.2.2:8000/file.txt from h1: $(cat "$LAB_DIR/curl.err")" \
			"got $(wc -c 2>/dev/null <"$LAB_DIR/got.txt" || echo 0) bytes of $(wc -c <"$LAB_DIR/www/file.txt")"
	fi
	out=$(grep 'GET /file.txt' "$LAB_DIR/http.log" | tail -n +$((n + 1)))
	if [ -n "$out" ] && ! grep -qv '^10\.0\.2\.1 ' <<<"$out"; then
		pass "${W}_curl_client_is_outside_address"
	else
		fail "${W}_curl_client_is_outside_address" "h2's http.server log (expected client 10.0.2.1):" "${out:-nothing}"
	fi

	# the port forward from outside: h2 -> 10.0.2.1:8080 reaches h1:80, which sees h2 as the peer
	n=$(grep -c '^peer' "$LAB_DIR/fwd.log")
	out=$(probe "$LAB_H2" tcpget 10.0.2.1 8080 3)
	check "${W}_port_forward" [ "$out" = "body hello-from-h1" ]
	[ "$out" = "body hello-from-h1" ] || echo "  h2 GET 10.0.2.1:8080: expected 'body hello-from-h1', got: $out"
	out=$(tail -n +$((n + 1)) "$LAB_DIR/fwd.log" | cut -d' ' -f1-2)
	if [ "$out" = "peer 10.0.2.2" ]; then
		pass "${W}_port_forward_peer_is_h2"
	else
		fail "${W}_port_forward_peer_is_h2" "the server on h1:80 saw (expected 'peer 10.0.2.2' once):" "${out:-nothing}"
	fi
}

# summary_check W : after the stop; exit status, buffer audit, counters
summary_check() {
	local W=$1 rc=$2 summary bufs
	check "${W}_exit_0" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || lab_show_log
	summary=$(lab_summary)
	bufs=$(grep '"event":"buffers"' "$LAB_DIR/rxpath.log" | tail -n 1)
	if [ -n "$summary" ] && [ "$(lab_json 'j["unaccounted"]' <<<"${bufs:-null}" 2>/dev/null)" = 0 ] &&
	   ! grep -q 'not accounted' "$LAB_DIR/rxpath.err"; then
		pass "${W}_buffers_accounted"
	else
		fail "${W}_buffers_accounted" "buffers: ${bufs:-no buffers line}" "summary: ${summary:-none}" \
			"$(grep 'accounted' "$LAB_DIR/rxpath.err")"
	fi
	check "${W}_counts_add_up" "$PYTHON" -c '
import json, sys
s = json.loads(sys.argv[1])
rx = sum(p["rx_packets"] for p in s["ports"])
done = s["forwarded"] + sum(s["delivered"].values()) + sum(s["drops"].values())
print("  observed: received %d, forwarded %d, delivered %d, dropped %s" % (rx, s["forwarded"],
      sum(s["delivered"].values()), {k: v for k, v in s["drops"].items() if v}))
assert rx == done, (rx, done)
' "${summary:-$EMPTY_JSON}"
	SUMMARY=$summary
}

# ================= one worker =================
W=${T}_1w
if ! LAB_QUEUES='' LAB_CONF_EXTRA="$NAT_CONF" lab_rxpath_start afpacket --ctl "$SOCK"; then
	fail "${W}_start" "rxpath did not start with the NAT configuration"
	exit 1
fi
pass "${W}_start"
basics "$W" ""

# traceroute: the router's own Time Exceeded (not translated: the probe expired before NAT),
# h2's Time Exceeded and port unreachables about translated probes, translated back
hop() {
	local name=$1 dst=$2 port=$3 ttl=$4 want=$5 out
	out=$(probe "$LAB_H1" udp "$dst" "$port" "$ttl" 2)
	if [ "$out" = "$want" ]; then
		pass "${T}_$name"
	else
		fail "${T}_$name" "h1 UDP to $dst:$port with TTL $ttl: expected '$want', got: $out"
	fi
}
hop traceroute_hop1_router 10.9.9.9 33434 1 "icmp 11 0 10.0.1.1"
hop traceroute_hop2_h2_time_exceeded 10.9.9.9 33435 2 "icmp 11 0 10.0.2.2"
hop traceroute_hop3_g_port_unreachable 10.9.9.9 33436 3 "icmp 3 3 10.9.9.9"
hop udp_port_unreachable_from_h2 10.0.2.2 33437 0 "icmp 3 3 10.0.2.2"
out=$(lab_in "$LAB_H1" ping -n -c 1 -t 2 -W 2 10.9.9.9 2>&1)
if grep -q 'From 10.0.2.2 .*Time to live exceeded' <<<"$out"; then
	pass "${T}_ping_ttl2_time_exceeded_from_h2"
else
	fail "${T}_ping_ttl2_time_exceeded_from_h2" "h1: ping -t 2 10.9.9.9: expected 'From 10.0.2.2 ... Time to live exceeded' (an ICMP error quoting a translated echo request):" "$out"
fi
ping_ok "${T}_ping_beyond_h2" "$LAB_H1" 10.9.9.9

# from outside, nothing but the forwarded port gets in: h1 listens on 9999 too
out=$(probe "$LAB_H2" tcp 10.0.2.1 9999 1.5)
if [ "$out" != connected ] && ! grep -q '^peer' "$LAB_DIR/h1_9999.log"; then
	pass "${T}_outside_unforwarded_port_not_in"
	echo "  observed: h2 connect to 10.0.2.1:9999 (not forwarded): $out"
else
	fail "${T}_outside_unforwarded_port_not_in" "h2 connect to 10.0.2.1:9999: $out; h1's listener on 9999 saw:" \
		"$(cat "$LAB_DIR/h1_9999.log")"
fi
out=$(probe "$LAB_H2" tcp 10.0.2.1 80 1.5)
if [ "$out" != connected ]; then
	pass "${T}_outside_inside_port_not_in"
	echo "  observed: h2 connect to 10.0.2.1:80 (h1's port, forwarded only from 8080): $out"
else
	fail "${T}_outside_inside_port_not_in" "h2 connected to 10.0.2.1:80: only 8080 is forwarded"
fi
# address-and-port-dependent filtering: h1's UDP mapping 10.0.2.1:40001 (to 10.0.2.2:7000)
# takes no datagram from another port of h2 (nat_no_mapping), but does from 7000
drops_before=$(ctl --json show drops | lab_json 'sum(r["packets"] for r in j["reasons"] if r["reason"] == "nat_no_mapping")' 2>/dev/null)
bgprobe "$LAB_H1" "$LAB_DIR/unsol.log" udprecv 40001 1.5
wait_ready "$LAB_DIR/unsol.log"
out=$(probe "$LAB_H2" udpsend 10.0.2.1 40001 7001)
[ -z "$out" ] || echo "  h2 udpsend from port 7001: $out"
sleep 1.7
drops_after=$(ctl --json show drops | lab_json 'sum(r["packets"] for r in j["reasons"] if r["reason"] == "nat_no_mapping")' 2>/dev/null)
out=$(grep -v ready "$LAB_DIR/unsol.log")
if [ "$out" = none ]; then
	pass "${T}_filtering_other_port_not_in"
else
	fail "${T}_filtering_other_port_not_in" "h2 (port 7001) to h1's mapping 10.0.2.1:40001: h1 got: ${out:-nothing (probe died?)}"
fi
if nonzero "${drops_after:-}" && [ "$drops_after" -gt "${drops_before:-0}" ] 2>/dev/null; then
	pass "${T}_filtering_counted_nat_no_mapping"
else
	fail "${T}_filtering_counted_nat_no_mapping" \
		"drops.nat_no_mapping before '${drops_before:-}', after '${drops_after:-}' (expected one more; from ctl --json show drops)"
fi
bgprobe "$LAB_H1" "$LAB_DIR/sol.log" udprecv 40001 1.5
wait_ready "$LAB_DIR/sol.log"
out=$(probe "$LAB_H2" udpsend 10.0.2.1 40001 7000)
[ -z "$out" ] || echo "  h2 udpsend from port 7000: $out"
sleep 0.3
out=$(grep -v ready "$LAB_DIR/sol.log")
if [ "$out" = "got unsolicited from 10.0.2.2 7000" ]; then
	pass "${T}_filtering_mapped_endpoint_in"
else
	fail "${T}_filtering_mapped_endpoint_in" \
		"h2 (port 7000, the endpoint h1 talked to) to 10.0.2.1:40001: expected 'got unsolicited from 10.0.2.2 7000', h1 got: ${out:-nothing yet}"
fi

# hairpin: from inside to the port forward's outside address; h1:80 sees 10.0.2.1 as the peer
for src in 10.0.1.3 10.0.1.2; do
	n=$(grep -c '^peer' "$LAB_DIR/fwd.log")
	if [ $src = 10.0.1.3 ]; then
		out=$(lab_in "$LAB_H1" curl -sS --max-time 3 --interface $src http://10.0.2.1:8080/ 2>&1)
		how="curl --interface $src http://10.0.2.1:8080/"
	else
		out=$(probe "$LAB_H1" tcpget 10.0.2.1 8080 3 $src)
		out=${out#body }
		how="GET 10.0.2.1:8080 from $src (h1 to its own forward)"
	fi
	if [ "$out" = hello-from-h1 ]; then
		pass "${T}_hairpin_from_$src"
	else
		fail "${T}_hairpin_from_$src" "$how: expected 'hello-from-h1', got: $out"
	fi
	out=$(tail -n +$((n + 1)) "$LAB_DIR/fwd.log" | cut -d' ' -f1-2)
	if [ "$out" = "peer 10.0.2.1" ]; then
		pass "${T}_hairpin_from_${src}_peer_is_outside_address"
	else
		fail "${T}_hairpin_from_${src}_peer_is_outside_address" \
			"the server on h1:80 saw (expected 'peer 10.0.2.1' once):" "${out:-nothing}"
	fi
done

# what rxpath shows
nat=$(ctl --json show nat)
if counts=$(lab_json '" ".join("%s=%d" % ("masquerade" if "masquerade" in r["rule"] else "dnat" if "dnat" in r["rule"] else "other", r["connections"]) for r in j["rules"])' <<<"$nat" 2>/dev/null) &&
   [[ " $counts" =~ \ masquerade=[1-9] ]] && [[ " $counts" =~ \ dnat=[1-9] ]] && [ "$(wc -w <<<"$counts")" -eq 2 ]; then
	pass "${T}_show_nat_rules_used"
	echo "  observed: show nat connections per rule: $counts"
else
	fail "${T}_show_nat_rules_used" "expected the masquerade and the dnat rule, each with connections > 0:" \
		"$nat" "$(ctl show nat)"
fi
ct=$(ctl --json show conntrack)
ct_has() {
	"$PYTHON" -c '
import json, sys
j = json.loads(sys.argv[1])
want = json.loads(sys.argv[2])
for e in j["entries"]:
    if all(e[d].get(k) == v for d in ("orig", "reply") for k, v in want.get(d, {}).items()):
        print("  observed: " + e["text"])
        sys.exit(0)
sys.exit(1)
' "$ct" "$1"
}
if ct_has '{"orig": {"src": "10.0.1.2", "dst": "10.0.2.2", "sport": 40001, "dport": 7000},
            "reply": {"src": "10.0.2.2", "dst": "10.0.2.1", "sport": 7000, "dport": 40001}}'; then
	pass "${T}_show_conntrack_masquerade_tuples"
else
	fail "${T}_show_conntrack_masquerade_tuples" \
		"expected orig 10.0.1.2:40001 -> 10.0.2.2:7000, reply 10.0.2.2:7000 -> 10.0.2.1:40001; UDP entries:" \
		"$(ctl show conntrack proto udp | head -n 10)"
fi
if ct_has '{"orig": {"src": "10.0.2.2", "dst": "10.0.2.1", "dport": 8080},
            "reply": {"src": "10.0.1.2", "sport": 80, "dst": "10.0.2.2"}}'; then
	pass "${T}_show_conntrack_port_forward_tuples"
else
	fail "${T}_show_conntrack_port_forward_tuples" \
		"expected orig 10.0.2.2 -> 10.0.2.1:8080, reply 10.0.1.2:80 -> 10.0.2.2; TCP entries:" \
		"$(ctl show conntrack proto tcp | head -n 10)"
fi
if ct_has '{"orig": {"src": "10.0.1.3", "dst": "10.0.2.1", "dport": 8080},
            "reply": {"src": "10.0.1.2", "sport": 80, "dst": "10.0.2.1"}}'; then
	pass "${T}_show_conntrack_hairpin_tuples"
else
	fail "${T}_show_conntrack_hairpin_tuples" \
		"expected orig 10.0.1.3 -> 10.0.2.1:8080, reply 10.0.1.2:80 -> 10.0.2.1; TCP entries:" \
		"$(ctl show conntrack proto tcp | head -n 10)"
fi
text=$(ctl show conntrack proto udp)
check "${T}_show_conntrack_text_both_tuples" \
	grep -q 'src=10.0.1.2 dst=10.0.2.2 sport=40001 dport=7000 .*src=10.0.2.2 dst=10.0.2.1 sport=7000 dport=40001' <<<"$text"

lab_rxpath_stop
summary_check "$W" $?
n=$(lab_json 'j["drops"].get("nat_no_mapping", 0)' <<<"${SUMMARY:-$EMPTY_JSON}" 2>/dev/null)
echo "  observed: one worker: drops.nat_no_mapping ${n:-?} in the summary"

# ================= two workers =================
W=${T}_2w
if ! LAB_QUEUES=2 LAB_CONF_EXTRA="$NAT_CONF" lab_rxpath_start afpacket --workers 2 --ctl "$SOCK"; then
	fail "${W}_start" "rxpath did not start with 2 workers and the NAT configuration"
else
	pass "${W}_start"
	check "${W}_two_workers" grep -q '"event":"start","workers":2' "$LAB_DIR/rxpath.log"
	basics "$W" "-P 4"
	stats=$(ctl --json show stats)
	# RSS may put every flow on one queue by chance: that is no failure of rxpath's, only a weaker test
	if "$PYTHON" -c '
import json, sys
q = [x for x in json.loads(sys.argv[1])["queues"] if x["port"] == "p1"]
print("  observed: p1 rx per queue", [x["rx_packets"] for x in q])
assert len(q) == 2 and all(x["rx_packets"] > 0 for x in q), q
' "$stats"; then
		pass "${W}_both_queues_used"
	else
		skip "${W}_both_queues_used (every flow hashed to one queue this time)"
	fi
	lab_rxpath_stop
	summary_check "$W" $?
fi

# nothing untranslated ever left rxpath toward the outside
sleep 0.1
if grep -q '^leak' "$LAB_DIR/leaks.log"; then
	fail "${T}_h2_never_saw_inside_source" "frames from 10.0.1.0/24 arrived on h2's eth0:" \
		"$(grep '^leak' "$LAB_DIR/leaks.log" | head -n 10)"
elif grep -q '^ready' "$LAB_DIR/leaks.log"; then
	pass "${T}_h2_never_saw_inside_source"
else
	fail "${T}_h2_never_saw_inside_source" "the sniffer on h2 did not run:" "$(cat "$LAB_DIR/leaks.log")"
fi
