# SPDX-License-Identifier: MIT
# The stateful filter with real hosts: h1 (p0) is inside, h2 (p1) outside.
# Connections from inside pass both ways, nothing from outside starts one,
# Linux's ICMP errors about inside connections come back as related, and
# the reject rules answer real clients with a reset or ICMP administratively
# prohibited. A router g behind h2 makes h2 a hop of its own for traceroute:
#
#   h1 --- p0 [ rxpath ] p1 --- h2 (forwards) --- g (10.9.9.9, 2001:db8:9::9 on lo)
#
# Run as root: BUILD=build bash tests/e2e/test_firewall.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_firewall

lab_init
trap lab_down EXIT
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

if ! lab_g_up; then
	fail "${T}_lab_up" "could not add the router g behind h2"
	exit 1
fi

# probes as a user's tools see them: connect(), and UDP with IP_RECVERR (what traceroute reads)
PROBE=$PWD/tests/e2e/probe.py
probe() { local ns=$1; shift; lab_in "$ns" "$PYTHON" "$PROBE" "$@" 2>&1; }

# h1 listens on 5555 (rejected from outside) and 7777 (dropped from outside)
lab_bg "$LAB_H1" "$PYTHON" "$PROBE" listen 5555 7777
for _ in $(seq 50); do
	lab_in "$LAB_H1" ss -Hltn 'sport = :7777' 2>/dev/null | grep -q . && break
	sleep 0.05
done

SOCK=$LAB_DIR/ctl.sock
LAB_CONF_EXTRA="route add 10.9.9.0/24 via 10.0.2.2
route add 2001:db8:9::/48 via 2001:db8:2::2
filter add forward ct-state established,related accept
filter add forward in p1 proto tcp dport 5555 reject
filter add forward in p1 proto udp dport 5556 reject
filter add forward in p0 ct-state new accept
filter policy forward drop
filter add input ct-state established,related accept
filter add input in p0 proto icmp accept
filter add input in p0 proto icmpv6 accept
filter policy input drop" lab_rxpath_start afpacket --ctl "$SOCK"
if [ -z "$LAB_RXPATH_PID" ]; then
	fail "${T}_start" "rxpath did not start with the filter"
	exit 1
fi
pass "${T}_start"
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@" 2>&1; }

# --- ping: from inside through, from outside not ---
ping_ok() {
	local name=$1 ns=$2 out; shift 2
	if out=$(lab_in "$ns" ping -n -c 2 -i 0.2 -w 3 "$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "ping $*:" "$(echo "$out" | tail -n 3)"
	fi
}
ping_blocked() {
	local name=$1 ns=$2 out; shift 2
	out=$(lab_in "$ns" ping -n -c 2 -i 0.2 -W 1 "$@" 2>&1)
	if grep -q ' 0 received' <<<"$out"; then
		pass "$name"
	else
		fail "$name" "expected no answer to ping $*:" "$(echo "$out" | tail -n 3)"
	fi
}
ping_ok "${T}_ping4_inside_out" "$LAB_H1" 10.0.2.2
ping_ok "${T}_ping6_inside_out" "$LAB_H1" -6 2001:db8:2::2
ping_blocked "${T}_ping4_outside_in_dropped" "$LAB_H2" 10.0.1.2
ping_blocked "${T}_ping6_outside_in_dropped" "$LAB_H2" -6 2001:db8:1::2
# input: the router answers ping from inside only; Neighbor Discovery passes its policy (the ping6s above need it)
ping_ok "${T}_input_ping4_router_from_inside" "$LAB_H1" 10.0.1.1
ping_ok "${T}_input_ping6_router_from_inside" "$LAB_H1" -6 2001:db8:1::1
ping_blocked "${T}_input_ping4_router_from_outside_dropped" "$LAB_H2" 10.0.2.1
ping_blocked "${T}_input_ping6_router_from_outside_dropped" "$LAB_H2" -6 2001:db8:2::1

# --- TCP from inside: iperf3 both ways ---
iperf_ok() {
	local name=$1; shift
	if lab_iperf3 "$name" "$@" && grep -q '"bits_per_second"' "$LAB_DIR/$name.json"; then
		pass "${T}_$name"
	else
		fail "${T}_$name" "iperf3 -c 10.0.2.2 $*:" "$(tail -n 5 "$LAB_DIR/$name.json")"
	fi
}
iperf_ok iperf3_tcp_inside_out -t 1
iperf_ok iperf3_tcp_inside_out_reverse -t 1 -R
# IPv6: a one-shot server on h2's v6 address
lab_bg "$LAB_H2" iperf3 -s -1 -B 2001:db8:2::2 -p 5202 >/dev/null 2>&1
for _ in $(seq 50); do
	lab_in "$LAB_H2" ss -Hltn 'sport = :5202' 2>/dev/null | grep -q . && break
	sleep 0.05
done
if lab_in "$LAB_H1" timeout 10 iperf3 -c 2001:db8:2::2 -p 5202 -n 1M -J >"$LAB_DIR/v6.json" 2>&1; then
	pass "${T}_iperf3_tcp6_inside_out"
else
	fail "${T}_iperf3_tcp6_inside_out" "iperf3 -c 2001:db8:2::2 -n 1M:" "$(tail -n 5 "$LAB_DIR/v6.json")"
fi

# --- TCP from outside: no answer at all (dropped), or a reset from the router (rejected) ---
for dst in 10.0.1.2 2001:db8:1::2; do
	v=4; [[ $dst == *:* ]] && v=6
	out=$(probe "$LAB_H2" tcp "$dst" 7777 1.5)
	check "${T}_tcp${v}_outside_in_dropped" [ "$out" = timeout ]
	[ "$out" = timeout ] || echo "  h2 connect to [$dst]:7777 (h1 listens there): $out"
	out=$(probe "$LAB_H2" tcp "$dst" 5555 3)
	if [[ $out == refused* ]] && awk '{exit !($2 < 1)}' <<<"$out"; then
		pass "${T}_tcp${v}_reject_connection_refused"
	else
		fail "${T}_tcp${v}_reject_connection_refused" \
			"h2 connect to [$dst]:5555 (h1 listens there; the router resets it): expected 'refused' within 1 s, got: $out"
	fi
done

# --- UDP reject: ICMP administratively prohibited from the router, as the client's error queue sees it ---
out=$(probe "$LAB_H2" udp 10.0.1.2 5556 0 2)
check "${T}_udp4_reject_admin_prohibited" [ "$out" = "icmp 3 13 10.0.2.1" ]
[ "$out" = "icmp 3 13 10.0.2.1" ] || echo "  h2 UDP to 10.0.1.2:5556: expected 'icmp 3 13 10.0.2.1', got: $out"
out=$(probe "$LAB_H2" udp 2001:db8:1::2 5556 0 2)
check "${T}_udp6_reject_admin_prohibited" [ "$out" = "icmp 1 1 2001:db8:2::1" ]
[ "$out" = "icmp 1 1 2001:db8:2::1" ] || echo "  h2 UDP to [2001:db8:1::2]:5556: expected 'icmp 1 1 2001:db8:2::1', got: $out"
out=$(probe "$LAB_H2" udp 10.0.1.2 5557 0 1)
check "${T}_udp4_outside_in_dropped_silently" [ "$out" = none ]

# --- traceroute through: the router's own Time Exceeded, Linux's (h2) as related, g's port unreachable ---
hop() {
	local name=$1 dst=$2 ttl=$3 want=$4 out
	out=$(probe "$LAB_H1" udp "$dst" 33434 "$ttl" 2)
	if [ "$out" = "$want" ]; then
		pass "${T}_$name"
	else
		fail "${T}_$name" "h1 UDP to [$dst]:33434 with TTL $ttl: expected '$want', got: $out"
	fi
}
hop traceroute4_hop1_router 10.9.9.9 1 "icmp 11 0 10.0.1.1"
hop traceroute4_hop2_linux_related 10.9.9.9 2 "icmp 11 0 10.0.2.2"
hop traceroute4_hop3_port_unreachable_related 10.9.9.9 3 "icmp 3 3 10.9.9.9"
hop traceroute6_hop1_router 2001:db8:9::9 1 "icmp 3 0 2001:db8:1::1"
hop traceroute6_hop2_linux_related 2001:db8:9::9 2 "icmp 3 0 2001:db8:2::2"
hop traceroute6_hop3_port_unreachable_related 2001:db8:9::9 3 "icmp 1 4 2001:db8:9::9"
out=$(lab_in "$LAB_H1" ping -n -c 1 -t 2 -W 2 10.9.9.9 2>&1)
check "${T}_ping_ttl2_time_exceeded_from_h2" grep -q 'From 10.0.2.2 .*Time to live exceeded' <<<"$out"
out=$(lab_in "$LAB_H1" ping -n -c 1 -W 2 10.9.9.9 2>&1)
check "${T}_ping_beyond_h2" grep -q ' 1 received' <<<"$out"
# TTL and hop limit are checked before the forward chain (Linux: ip_forward(), ip6_forward()),
# so a packet from outside that expires at the router still gets Time Exceeded
out=$(lab_in "$LAB_H2" ping -n -c 1 -t 1 -W 2 10.0.1.2 2>&1)
if grep -q 'From 10.0.2.1 .*Time to live exceeded' <<<"$out"; then
	pass "${T}_ttl1_from_outside_time_exceeded4"
else
	fail "${T}_ttl1_from_outside_time_exceeded4" "h2: ping -t 1 10.0.1.2: expected 'From 10.0.2.1 ... Time to live exceeded':" "$out"
fi
out=$(lab_in "$LAB_H2" ping -6 -n -c 1 -t 1 -W 2 2001:db8:1::2 2>&1)
if grep -qi 'From 2001:db8:2::1 .*Time exceeded' <<<"$out"; then
	pass "${T}_ttl1_from_outside_time_exceeded6"
else
	fail "${T}_ttl1_from_outside_time_exceeded6" "h2: ping -6 -t 1 2001:db8:1::2: expected 'From 2001:db8:2::1 ... Time exceeded':" "$out"
fi

# --- what rxpath shows ---
text=$(ctl show filter)
json=$(ctl --json show filter)
if counts=$(lab_json '" ".join(str(r["packets"]) for c in j["chains"] if c["chain"] == "forward" for r in c["rules"]) + " " + str([c for c in j["chains"] if c["chain"] == "forward"][0]["policy_packets"])' <<<"$json" 2>/dev/null); then
	pass "${T}_show_filter_json_parses"
else
	fail "${T}_show_filter_json_parses" "$json"
	counts=""
fi
read -r c_est c_rst c_icmp c_new c_pol <<<"$counts"
nonzero() { [ -n "${1:-}" ] && [ "$1" -gt 0 ]; }
for pair in "established_related:${c_est:-}" "tcp_reject:${c_rst:-}" "udp_reject:${c_icmp:-}" \
	"new_from_inside:${c_new:-}" "policy_drop:${c_pol:-}"; do
	if nonzero "${pair#*:}"; then
		pass "${T}_show_filter_counts_${pair%%:*}"
	else
		fail "${T}_show_filter_counts_${pair%%:*}" "packets '${pair#*:}' (expected > 0):" "$text"
	fi
done
check "${T}_show_filter_text_lists_rules" grep -q 'proto tcp dport 5555 reject' <<<"$text"

ctall=$(ctl show conntrack)
cttcp=$(ctl show conntrack proto tcp)
if grep -q 'src=10.0.1.2 dst=10.0.2.2 sport=[0-9]* dport=5201' <<<"$ctall" &&
   grep -q 'src=2001:db8:1::2 dst=2001:db8:2::2 sport=[0-9]* dport=5202' <<<"$ctall"; then
	pass "${T}_show_conntrack_lists_iperf3"
else
	fail "${T}_show_conntrack_lists_iperf3" "$(head -n 20 <<<"$ctall")"
fi
check "${T}_show_conntrack_lists_ping" grep -q '^icmp .*src=10.0.1.2 dst=10.0.2.2 type=8' <<<"$ctall"
# a probe that expired at the router never left it: no connection (Linux confirms an entry only on the way out)
n=$(grep -c '^udp .*src=10.0.1.2 dst=10.9.9.9 ' <<<"$ctall")
if [ "$n" -eq 2 ]; then
	pass "${T}_expired_probe_not_tracked"
else
	fail "${T}_expired_probe_not_tracked" "UDP entries to 10.9.9.9: $n (expected 2: the TTL 2 and 3 probes; the TTL 1 one died at the router)" \
		"$(grep '^udp .*dst=10.9.9.9 ' <<<"$ctall")"
fi
if grep -q '^tcp ' <<<"$cttcp" && ! grep -qv -e '^tcp ' -e 'flow entr' <<<"$cttcp"; then
	pass "${T}_show_conntrack_proto_tcp_filters"
else
	fail "${T}_show_conntrack_proto_tcp_filters" "$(head -n 20 <<<"$cttcp")"
fi
stats=$(ctl --json show conntrack stats)
if [ "$(lab_json 'j["entries"] > 0 and j["inserted"] > 0' <<<"$stats" 2>/dev/null)" = True ]; then
	pass "${T}_show_conntrack_stats"
else
	fail "${T}_show_conntrack_stats" "$stats"
fi

# a rule taken out while running: the next rules move up with their counters
before=$(lab_json '[r["packets"] for c in j["chains"] if c["chain"] == "forward" for r in c["rules"] if r["rule"] == "in p0 ct-state new accept"][0]' <<<"$(ctl --json show filter)" 2>/dev/null)
if ctl filter del forward 3 >/dev/null; then
	after=$(ctl --json show filter)
	n=$(lab_json '[c for c in j["chains"] if c["chain"] == "forward"][0]["rules"][2]' <<<"$after" 2>/dev/null)
	if grep -q "'rule': 'in p0 ct-state new accept'" <<<"$n" && grep -q "'packets': ${before:-x}," <<<"$n"; then
		pass "${T}_ctl_del_counters_follow"
	else
		fail "${T}_ctl_del_counters_follow" "rule 3 after 'filter del forward 3' (rule 4 had ${before:-?} packets):" "$n"
	fi
	out=$(probe "$LAB_H2" udp 10.0.1.2 5556 0 1)
	check "${T}_ctl_del_udp_reject_gone" [ "$out" = none ]
else
	fail "${T}_ctl_del_counters_follow" "rxpath ctl filter del forward 3 failed"
fi

lab_rxpath_stop
rc=$?
check "${T}_exit_0" [ "$rc" -eq 0 ]
summary=$(lab_summary)
for reason in filter_drop filter_reject; do
	n=$(lab_json "j['drops']['$reason']" <<<"$summary" 2>/dev/null)
	if nonzero "$n"; then
		pass "${T}_summary_${reason}"
	else
		fail "${T}_summary_${reason}" "drops.$reason '$n' (expected > 0)"
	fi
done
