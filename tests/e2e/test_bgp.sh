#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# BGP drives the datapath: FRR (zebra + bgpd, AS 65000) runs in rxpath's
# namespace r and speaks eBGP through the host paths (TAPs) of p1 and p2 to
# two BIRD 2 routers, h2 (AS 65002) and h3 (AS 65003). Both announce the
# server s's 10.9.0.0/24 and 100 /24s of 10.100.0.0/16; with maximum-paths 2
# and as-path multipath-relax FRR makes them ECMP routes, zebra installs
# them into r's kernel (as nexthop group objects, its default), and rxpath's
# kernel sync mirrors them:
#
#                                             p1 --- h2 (BIRD, 10.0.2.2) --- 10.0.5.0/24 ---.
#   h1 (10.0.1.2) --- p0 [ rxpath, sync kernel ] <                                         s (10.9.0.1 on lo)
#                      [ FRR behind p1's, p2's TAPs ] p2 --- h3 (BIRD, 10.0.4.2) --- 10.0.6.0/24 ---'
#
# Checks: both sessions Established; the kernel route has two nexthops (a
# nexthop group); rxpath has both next hops and all 100 other prefixes;
# ping and iperf3 -P 16 from h1 to s, the streams over both links; h3's
# session disabled: one path in FRR, the kernel and rxpath within 5 s, ping
# still answered; enabled again: two paths; the same with h2's. Then rxpath again with two
# workers (FRR and BIRD go on running): sessions back, both next hops,
# iperf3 over both links. Clean exits and nothing left behind.
#
# Run as root: BUILD=build bash tests/e2e/test_bgp.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh
. tests/e2e/bgp_lab.sh

T=e2e_bgp
LAB_QUEUES=2	# the veths: two queue pairs, for the run with two workers
PREFIX=$LAB_PREFIX

lab_init
command -v iperf3 >/dev/null || lab_skip_all "iperf3 not installed (apt-get install iperf3)"
bgp_lab_need

trap bgp_down EXIT
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

lab_more_up() {
	local dev
	lab_ecmp_up || return 1
	# r0..r2 belong to rxpath; the kernel in r speaks through the TAPs only: no ARP on the
	# veths and strict reverse path filtering there (as test_host.sh explains)
	for dev in r0 r1 r2; do
		ip -n "$LAB_R" link set "$dev" arp off &&
		lab_in "$LAB_R" sysctl -qw "net.ipv4.conf.$dev.rp_filter=1" || return 1
	done
}
if ! lab_more_up; then
	fail "${T}_lab_up" "could not add h3 on r2, the server s behind h2 and h3, or quiet r's veths"
	exit 1
fi

# ---- FRR in r, BIRD in h2 and h3: private configs, sockets and pid files in the lab's dir ----
if ! bgp_frr_dir; then
	fail "${T}_frr_dir" "cannot make $FRR_DIR for user $FRR_USER"
	exit 1
fi
cat >"$FRR_DIR/bgpd.conf" <<-EOF
	hostname r
	log file $FRR_DIR/bgpd.log informational
	router bgp 65000
	 bgp router-id 10.0.1.1
	 no bgp ebgp-requires-policy
	 bgp bestpath as-path multipath-relax
	 neighbor 10.0.2.2 remote-as 65002
	 neighbor 10.0.2.2 timers 3 9
	 neighbor 10.0.2.2 timers connect 1
	 neighbor 10.0.4.2 remote-as 65003
	 neighbor 10.0.4.2 timers 3 9
	 neighbor 10.0.4.2 timers connect 1
	 address-family ipv4 unicast
	  maximum-paths 2
	 exit-address-family
EOF
bird_conf() {	# NS-TAG AS ROUTER-ID
	local tag=$1 as=$2 id=$3 i
	{
		echo "log \"$LAB_DIR/bird-$tag.log\" all;"
		echo "router id $id;"
		echo "protocol device { }"
		echo "protocol static routes4 {"
		echo "	ipv4;"
		echo "	route 10.9.0.0/24 blackhole;"
		for i in $(seq 0 99); do echo "	route 10.100.$i.0/24 blackhole;"; done
		echo "}"
		echo "protocol bgp up {"
		echo "	local $id as $as;"
		echo "	neighbor ${id%.2}.1 as 65000;"
		echo "	hold time 9; keepalive time 3;"
		echo "	start delay time 1; connect delay time 1; connect retry time 1;"
		echo "	error wait time 1, 2;"
		echo "	ipv4 { import none; export where source = RTS_STATIC; };"
		echo "}"
	} >"$LAB_DIR/bird-$tag.conf"
}
bird_conf h2 65002 10.0.2.2
bird_conf h3 65003 10.0.4.2
# ---- rxpath: p1's and p2's host paths, the kernel's routes mirrored ----
SOCK=$LAB_DIR/ctl.sock
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@" 2>&1; }
bgp_conf() {	# the extra config lines; queues=N on p2 as on p0 and p1
	printf '%s\n' "port add p2 afpacket:dev=r2${LAB_QUEUES:+,queues=$LAB_QUEUES}" \
		"addr add 10.0.4.1/24 dev p2" "port set p1 host on" "port set p2 host on" "sync kernel"
}
rxpath_start() {	# RUN-OPTIONS...
	LAB_CONF_EXTRA=$(bgp_conf) lab_rxpath_start afpacket --ctl "$SOCK" "$@"
}

# poll SECONDS CMD... : true once CMD succeeds, polling every 0.2 s
poll() {
	local n=$(($1 * 5)); shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
# each neighbour's state and prefixes received, "10.0.2.2=Established/101 10.0.4.2=Active/0"
bgp_states() {
	vty -c 'show bgp ipv4 unicast summary json' | lab_json '" ".join(
		"%s=%s/%s" % (a, p.get("state"), p.get("pfxRcd", 0))
		for a, p in sorted(j.get("peers", j.get("ipv4Unicast", {}).get("peers", {})).items()))' 2>/dev/null
}
both_established() {
	local s; s=$(bgp_states)
	[[ "$s" == *"10.0.2.2=Established/101"* && "$s" == *"10.0.4.2=Established/101"* ]]
}
# the kernel's route 10.9.0.0/24 in r, on one line
kroute() { ip -n "$LAB_R" route show 10.9.0.0/24 | tr -s ' \t\n' ' '; }
kernel_two() { [[ "$(kroute)" == *"nexthop via 10.0.2.2 dev p1"*"nexthop via 10.0.4.2 dev p2"* ]]; }
# one_path GW DEV GONE: FRR, the kernel and rxpath all have 10.9.0.0/24 via GW only, and
# rxpath the 100 too
one_path() {
	local k; k=$(kroute)
	[ "$(frr_nexthops)" = "$1" ] && [[ "$k" == *"via $1 dev $2"* && "$k" != *"$3"* ]] || return 1
	k=$(rx_route)
	echo "$k" | grep -q "^10.9.0.0/24 .*via $1 dev $2\|nexthop via $1 dev $2" && ! echo "$k" | grep -q "$3" &&
	[ "$(rx_100_hops)" = "$1:100" ]
}
# FRR's selected next hops for 10.9.0.0/24: "10.0.2.2 10.0.4.2"
frr_nexthops() {
	vty -c 'show ip route 10.9.0.0/24 json' | lab_json '" ".join(sorted(
		n.get("ip", "?") for r in j.get("10.9.0.0/24", []) if r.get("selected")
		for n in r.get("nexthops", []) if n.get("active")))' 2>/dev/null
}
frr_two() { [ "$(frr_nexthops)" = "10.0.2.2 10.0.4.2" ]; }
rx_route() { ctl show routes 10.9.0.0/24; }
# the next hops (up) of rxpath's kernel routes within 10.100.0.0/16, as "GW+GW:COUNT ..."
rx_100_hops() {
	ctl --json show routes 10.100.0.0/16 | lab_json '" ".join("%s:%d" % kv for kv in sorted(
		__import__("collections").Counter("+".join(sorted(
			[n.get("via", "-") for n in r["nexthops"] if n.get("state") == "up"] if "nexthops" in r
			else [r.get("via", "-")])) for r in j["routes"] if r.get("origin") == "kernel").items()))' 2>/dev/null
}
# rxpath has 10.9.0.0/24 over both next hops, and the 100 other prefixes too
rx_two() {
	local out; out=$(rx_route)
	echo "$out" | grep -q "nexthop via 10.0.2.2 dev p1 weight 1 up" &&
	echo "$out" | grep -q "nexthop via 10.0.4.2 dev p2 weight 1 up" &&
	[ "$(rx_100_hops)" = "10.0.2.2+10.0.4.2:100" ]
}
# the routes rxpath has within 10.100.0.0/16 that came from the kernel
rx_count100() {
	ctl --json show routes 10.100.0.0/16 |
		lab_json 'sum(1 for r in j["routes"] if r.get("origin") == "kernel" and r["prefix"].endswith("/24"))' 2>/dev/null
}
rx_has100() { [ "$(rx_count100)" = 100 ]; }

# the state of things, for a failure
bgp_show() {
	echo "bgp: $(bgp_states)"
	echo "frr: $(frr_nexthops)"
	echo "kernel: $(kroute)"
	echo "rxpath: $(rx_route)"
	echo "rxpath, next hops of the 100 /24s of 10.100.0.0/16: $(rx_100_hops)"
	ctl show routes kernel | grep '^10.9.0.0/24'
}

# sessions_check NAME SECONDS: both sessions Established with all 101 prefixes
sessions_check() {
	if poll "$2" both_established; then
		pass "$1"
	else
		fail "$1" "$(bgp_states)" "$(tail -n 5 "$FRR_DIR/bgpd.log" 2>/dev/null)" \
			"h2: $(birdc_ "$LAB_H2" h2 show protocols up | tail -n 1)" \
			"h3: $(birdc_ "$LAB_H3" h3 show protocols up | tail -n 1)"
	fi
}
# rx_two_check NAME [SECONDS]: rxpath has both next hops for 10.9.0.0/24 and the 100
# (within SECONDS, 3 by default)
rx_two_check() {
	if poll "${2:-3}" rx_two; then
		pass "$1"
	else
		fail "$1" "$(bgp_show)"
	fi
}

START=$SECONDS
if ! LAB_QUEUES='' rxpath_start; then
	fail "${T}_rxpath_start" "$(cat "$LAB_DIR/rxpath.err")"
	exit 1
fi
if ! ip -n "$LAB_R" link show p1 >/dev/null 2>&1 || ! ip -n "$LAB_R" link show p2 >/dev/null 2>&1; then
	fail "${T}_host_paths" "no TAP p1 or p2 in r:" "$(ip -n "$LAB_R" -br link)"
	exit 1
fi
bird_start "$LAB_H2" h2
bird_start "$LAB_H3" h3
if ! frr_start; then
	fail "${T}_frr_start" "$(cat "$FRR_DIR/zebra.out" "$FRR_DIR/bgpd.out" 2>/dev/null | tail -n 10)"
	exit 1
fi

# 1. both sessions up, 101 prefixes from each
sessions_check "${T}_sessions_established" 20

# 2. zebra's kernel route has both next hops, in a nexthop group object
if poll 3 kernel_two; then
	pass "${T}_kernel_route_two_nexthops"
else
	fail "${T}_kernel_route_two_nexthops" "$(ip -n "$LAB_R" route show 10.9.0.0/24)" "frr: $(frr_nexthops)"
fi
nhid=$(ip -n "$LAB_R" -j route show 10.9.0.0/24 | lab_json 'j[0].get("nhid", "") if j else ""' 2>/dev/null)
grp=$([ -n "$nhid" ] && ip -n "$LAB_R" nexthop show id "$nhid" 2>&1)
echo "  observed: kernel: $(kroute); nexthop $nhid: $grp"
if [[ "$grp" == *group* ]]; then
	pass "${T}_kernel_route_nexthop_group"
else
	fail "${T}_kernel_route_nexthop_group" "the route uses no nexthop group object (nhid '$nhid'): $grp"
fi

# 3. rxpath mirrors them: both next hops, and the 100 other prefixes
rx_two_check "${T}_rxpath_two_nexthops"
if poll 3 rx_has100; then
	pass "${T}_rxpath_100_prefixes"
else
	fail "${T}_rxpath_100_prefixes" "$(rx_count100) of the 100 /24s of 10.100.0.0/16 in rxpath" \
		"$(ctl show routes kernel | tail -n 3)"
fi

# 4. traffic through it
check "${T}_ping_server" lab_ping_quiet "$LAB_H1" 10.9.0.1
lab_ecmp_spread "${T}_one_worker_iperf3_uses_both_links" "$SOCK" rx_route

# 5. a peer withdraws (its session disabled in BIRD): one path in FRR, the kernel and rxpath
# (10.9.0.0/24 and the 100) within 5 s, the server still answers; enabled again: two paths
# again. h3 first, then h2 (the lower next hop, the one a mirror keeping a single next hop
# of a multipath route would have kept: so its withdrawal must change rxpath's route).
withdraw_check() {	# NAME NS TAG GONE-GW KEPT-GW KEPT-DEV
	local W=$1 ns=$2 tag=$3 gone=$4 gw=$5 dev=$6 t0
	birdc_ "$ns" "$tag" disable up >/dev/null
	t0=$SECONDS
	if poll 5 one_path "$gw" "$dev" "$gone"; then
		pass "${T}_${W}_withdrawn_one_path_within_5s"
		echo "  observed: $gone withdrawn: only $gw in FRR, the kernel and rxpath after $((SECONDS - t0)) s"
	else
		fail "${T}_${W}_withdrawn_one_path_within_5s" "$(bgp_show)"
	fi
	check "${T}_${W}_withdrawn_ping_server" lab_ping_quiet "$LAB_H1" 10.9.0.1 3
	birdc_ "$ns" "$tag" enable up >/dev/null
	t0=$SECONDS
	if poll 10 both_established && poll 5 frr_two && poll 5 kernel_two; then
		pass "${T}_${W}_back_two_paths"
		echo "  observed: $gone back: two paths in FRR and the kernel after $((SECONDS - t0)) s"
	else
		fail "${T}_${W}_back_two_paths" "$(bgp_show)"
	fi
	rx_two_check "${T}_${W}_back_rxpath_two_nexthops"
}
withdraw_check h3 "$LAB_H3" h3 10.0.4.2 10.0.2.2 p1
withdraw_check h2 "$LAB_H2" h2 10.0.2.2 10.0.4.2 p2

lab_rxpath_stop
check "${T}_clean_exit" test $? -eq 0

# 6. rxpath again, two workers; FRR and BIRD go on (the TAPs come back, the sessions with them)
if ! rxpath_start --workers 2; then
	fail "${T}_workers_rxpath_start" "$(cat "$LAB_DIR/rxpath.err")"
	exit 1
fi
t0=$SECONDS
# the daemons' own recovery sets the pace here: a session that came up on a TAP before
# zebra knew it is reset (bgpd: "nexthop_set failed ... intf (Unknown)") and the peer's
# BIRD may sit out its error wait; 20 s was seen to be too short once under the sanitizers
sessions_check "${T}_workers_sessions_established" 90
echo "  observed: sessions back after $((SECONDS - t0)) s"
# the TAPs came back new: zebra installs the routes again through them
poll 5 kernel_two
rx_two_check "${T}_workers_rxpath_two_nexthops" 5
if poll 3 rx_has100; then
	pass "${T}_workers_rxpath_100_prefixes"
else
	fail "${T}_workers_rxpath_100_prefixes" "$(rx_count100) of the 100 /24s of 10.100.0.0/16 in rxpath"
fi
check "${T}_workers_ping_server" lab_ping_quiet "$LAB_H1" 10.9.0.1
lab_ecmp_spread "${T}_two_workers_iperf3_uses_both_links" "$SOCK" rx_route
lab_rxpath_stop
check "${T}_workers_clean_exit" test $? -eq 0
echo "  observed: run time $((SECONDS - START)) s"

# 7. teardown leaves nothing: no namespace, no FRR or BIRD, nothing of the lab's dir in use
dir=$LAB_DIR
bgp_down
left=$(ip netns list | grep "^$PREFIX-")
procs=$(pgrep -a -f -- "$dir/")
if [ -z "$left" ] && [ -z "$procs" ] && [ ! -e "$dir" ] && [ -z "$FRR_LEFT" ]; then
	pass "${T}_teardown_clean"
else
	fail "${T}_teardown_clean" "left behind:" "$left" "$procs" "$(ls -d "$dir" 2>/dev/null)" \
		"${FRR_LEFT:+FRR did not exit cleanly (its crash-log dirs, now removed):$FRR_LEFT}"
fi
