# SPDX-License-Identifier: MIT
# The end-to-end lab, sourced by tests/e2e/test_*.sh:
#
#   h1 (10.0.1.2/24, 2001:db8:1::2/64)              h2 (10.0.2.2/24, 2001:db8:2::2/64)
#     eth0 --- veth --- r0 [ rxpath in ns r ] r1 --- veth --- eth0
#
# Namespaces are named rxp-<pid>-{h1,r,h2} so runs never collide; the veth
# pairs are created straight inside them, so nothing ever sits in the
# caller's namespace. lab_down (run by the EXIT trap too) stops what the lab
# started and deletes the namespaces, which deletes the veths with them.
#
#   lab_init                 SKIP (exit 0) unless namespaces can be made
#   lab_up                   builds the lab
#   lab_rxpath_start DRIVER [RUN-OPTIONS...]   rxpath on r0/r1 as p0/p1, waits until up
#                            (LAB_QUEUES=N adds queues=N, LAB_PORT_OPTS=",k=v" more port options,
#                            LAB_CONF_EXTRA="lines" more config lines)
#   lab_rxpath_stop          SIGTERM; returns rxpath's exit status
#   lab_summary              prints rxpath's JSON summary line (after the stop)
#   lab_json 'EXPR' < JSON   evaluates a Python expression over the parsed JSON `j`
#   lab_bg NS CMD...         runs CMD in NS in the background; stopped by lab_down
#   lab_eui64 PREFIX MAC     PREFIX + MAC's EUI-64 interface identifier
#   lab_g_up                 a router g behind h2 (10.9.9.9, 2001:db8:9::9): h2 becomes a hop
#   lab_ecmp_up              two ways to one server: h3 (10.0.4.2) on r2, and s (10.9.0.1 on lo)
#                            behind both h2 (via 10.0.5.0/24) and h3 (10.0.6.0/24); s answers
#                            by h2 (its default route) and takes packets by either link
#   lab_down                 tears everything down
#   pass/fail/skip/check     one "PASS name" / "FAIL name" / "SKIP name" line each

RXPATH=${RXPATH:-${BUILD:-build}/rxpath}
PYTHON=${PYTHON:-python3}
LAB_PREFIX="rxp-$$"
LAB_H1="$LAB_PREFIX-h1"
LAB_R="$LAB_PREFIX-r"
LAB_H2="$LAB_PREFIX-h2"
LAB_G="$LAB_PREFIX-g"
LAB_G_UP=0
LAB_H3="$LAB_PREFIX-h3"
LAB_S="$LAB_PREFIX-s"
LAB_ECMP_UP=0
LAB_DIR=
LAB_RXPATH_PID=
LAB_PIDS=()
LAB_IS_UP=0

pass() { echo "PASS $1"; }
# every line of every detail indented: tests/run.sh shows only indented lines under a FAIL
fail() { echo "FAIL $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/  /'; done; }
skip() { echo "SKIP $1"; }

# lab_ping_quiet NS ADDR [N] : N (2) pings from NS all answered; prints nothing (for check)
lab_ping_quiet() { lab_in "$1" ping -n -q -c "${3:-2}" -i 0.2 -w 3 "$2" >/dev/null 2>&1; }

# check NAME COMMAND... : PASS when the command succeeds (its own output not redirected: it
# is check's, PASS line too)
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "failed: $*"; fi
}

lab_skip_all() {
	echo "SKIP e2e: $*"
	exit 0
}

# Exits 0 with a SKIP line when this machine cannot build the lab; never a silent pass.
lab_init() {
	local t out
	[ "$(id -u)" -eq 0 ] ||
		lab_skip_all "needs root to create network namespaces and veth pairs; run as root (sudo make test)"
	command -v ip >/dev/null ||
		lab_skip_all "no 'ip' command; install iproute2 (apt-get install iproute2)"
	[ -x "$RXPATH" ] || { echo "FAIL e2e: $RXPATH not built; run make"; exit 1; }
	t="$LAB_PREFIX-probe"
	if ! out=$(ip netns add "$t" 2>&1); then
		lab_skip_all "cannot create a network namespace ($out); run as root on a kernel with network namespaces, outside a container that forbids them"
	fi
	if ! out=$(ip -n "$t" link add name probe0 type veth peer name probe1 2>&1); then
		ip netns del "$t" 2>/dev/null
		lab_skip_all "cannot create a veth pair ($out); load the veth module (modprobe veth)"
	fi
	ip netns del "$t"
	LAB_DIR=$(mktemp -d "/tmp/$LAB_PREFIX.XXXXXX")
	trap lab_down EXIT
	trap 'exit 130' INT TERM
}

# lab_in NS CMD... : runs CMD in namespace NS
lab_in() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# Host side of the lab: address, default routes, and settings a userspace datapath needs.
lab_host() {
	local ns=$1 v4=$2 gw4=$3 v6=$4 gw6=$5
	# DAD off before the address exists: usable at once, no 1-2 s "tentative" wait.
	lab_in "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.eth0.accept_dad=0 || return 1
	ip -n "$ns" link set lo up &&
	ip -n "$ns" link set eth0 up &&
	ip -n "$ns" addr add "$v4" dev eth0 &&
	ip -n "$ns" -6 addr add "$v6" dev eth0 nodad &&
	ip -n "$ns" route add default via "$gw4" &&
	ip -n "$ns" -6 route add default via "$gw6"
}

# Offloads off on one veth end. A veth hands its peer the sender's skb as it
# is: TCP/UDP checksums only partly computed (CHECKSUM_PARTIAL, "tx on") and
# TSO/GSO super-packets of up to 64 KiB, with GRO building more of them on
# receive. The kernel finishes those later on its own path; a userspace
# datapath receives them raw (AF_PACKET, AF_XDP) and would forward frames
# with wrong checksums or drop frames larger than the MTU. Real NICs finish
# both in hardware, so this is a veth (and tap) matter: a user running
# rxpath on veth must do the same.
lab_offloads_off() {
	local ns=$1 dev=$2
	lab_in "$ns" ethtool -K "$dev" tx off tso off gso off gro off >/dev/null 2>&1 ||
		lab_in "$ns" ethtool -K "$dev" tx off >/dev/null 2>&1
}

lab_up() {
	local ns
	for ns in "$LAB_H1" "$LAB_R" "$LAB_H2"; do
		ip netns add "$ns" || return 1
	done
	LAB_IS_UP=1
	# LAB_QUEUES=N: veths with N queue pairs (multi-queue AF_XDP, --workers N)
	local q="numtxqueues ${LAB_QUEUES:-1} numrxqueues ${LAB_QUEUES:-1}"
	# shellcheck disable=SC2086
	ip link add name r0 netns "$LAB_R" $q type veth peer name eth0 netns "$LAB_H1" $q || return 1
	# shellcheck disable=SC2086
	ip link add name r1 netns "$LAB_R" $q type veth peer name eth0 netns "$LAB_H2" $q || return 1
	command -v ethtool >/dev/null ||
		{ echo "lab: no ethtool (apt-get install ethtool): offloads stay on and TCP will fail"; }
	lab_offloads_off "$LAB_H1" eth0
	lab_offloads_off "$LAB_H2" eth0
	lab_offloads_off "$LAB_R" r0
	lab_offloads_off "$LAB_R" r1
	lab_host "$LAB_H1" 10.0.1.2/24 10.0.1.1 2001:db8:1::2/64 2001:db8:1::1 || return 1
	lab_host "$LAB_H2" 10.0.2.2/24 10.0.2.1 2001:db8:2::2/64 2001:db8:2::1 || return 1
	# r0 and r1 belong to rxpath: the kernel in r must not answer on them
	# (no IPv4 addresses, no forwarding, no IPv6 link-local addresses or ND).
	lab_in "$LAB_R" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0 \
		net.ipv6.conf.r0.disable_ipv6=1 net.ipv6.conf.r1.disable_ipv6=1 || return 1
	ip -n "$LAB_R" link set lo up &&
	ip -n "$LAB_R" link set r0 up &&
	ip -n "$LAB_R" link set r1 up
}

# lab_bg NS CMD... : background command in NS; its pid is in $! and stopped by lab_down.
lab_bg() {
	local ns=$1; shift
	ip netns exec "$ns" "$@" &
	LAB_PIDS+=("$!")
}

# lab_rxpath_start DRIVER [RUN-OPTIONS...]: rxpath routes between r0 (p0) and r1 (p1).
lab_rxpath_start() {
	local driver=$1; shift
	local conf="$LAB_DIR/rxpath.conf" i
	cat >"$conf" <<-EOF
	port add p0 $driver:dev=r0${LAB_QUEUES:+,queues=$LAB_QUEUES}${LAB_PORT_OPTS:-}
	port add p1 $driver:dev=r1${LAB_QUEUES:+,queues=$LAB_QUEUES}${LAB_PORT_OPTS:-}
	addr add 10.0.1.1/24 dev p0
	addr add 10.0.2.1/24 dev p1
	addr add 2001:db8:1::1/64 dev p0
	addr add 2001:db8:2::1/64 dev p1
	${LAB_CONF_EXTRA:-}
	EOF
	: >"$LAB_DIR/rxpath.log"
	# `ip netns exec` execs the program itself, so $! is rxpath's pid.
	ip netns exec "$LAB_R" "$RXPATH" run -c "$conf" --json -i 1 "$@" \
		>"$LAB_DIR/rxpath.log" 2>"$LAB_DIR/rxpath.err" &
	LAB_RXPATH_PID=$!
	for i in $(seq 100); do
		if grep -q '"event":"start"' "$LAB_DIR/rxpath.log" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$LAB_RXPATH_PID" 2>/dev/null; then
			wait "$LAB_RXPATH_PID"
			echo "lab: rxpath exited with status $? at start:"
			sed 's/^/  | /' "$LAB_DIR/rxpath.err"
			LAB_RXPATH_PID=
			return 1
		fi
		sleep 0.05
	done
	echo "lab: rxpath did not start within 5 s"
	sed 's/^/  | /' "$LAB_DIR/rxpath.err"
	return 1
}

# SIGTERM, then waits (10 s at most); returns rxpath's exit status (124: it hung).
lab_rxpath_stop() {
	local pid=$LAB_RXPATH_PID i
	[ -n "$pid" ] || return 1
	LAB_RXPATH_PID=
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# Prints rxpath's JSON summary line (empty when there is none).
lab_summary() {
	grep '"event":"summary"' "$LAB_DIR/rxpath.log" | tail -n 1
}

# lab_json 'EXPR' < JSON : prints the Python expression EXPR over the parsed JSON `j`.
lab_json() {
	"$PYTHON" -c 'import json, sys
j = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$1"
}

# lab_eui64 PREFIX MAC : PREFIX (like fe80:: or 2001:db8:1::) with MAC's EUI-64
# interface identifier (RFC 4291 2.5.1): rxpath's link-local, a host's SLAAC address.
lab_eui64() {
	"$PYTHON" -c 'import ipaddress, sys
m = bytes.fromhex(sys.argv[2].replace(":", ""))
iid = bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:]
print(ipaddress.IPv6Address(ipaddress.IPv6Address(sys.argv[1]).packed[:8] + iid))' "$1" "$2"
}

# Shows rxpath's log lines on a failure.
lab_show_log() {
	sed 's/^/  | /' "$LAB_DIR/rxpath.err" 2>/dev/null | tail -n 20
	tail -n 5 "$LAB_DIR/rxpath.log" 2>/dev/null | sed 's/^/  | /'
}

# A router g behind h2 (h2 forwards to it): 10.9.9.9 and 2001:db8:9::9 on its
# lo, so that h2 is a hop of its own (traceroute through rxpath sees it).
# lab_down removes it.
# lab_ecmp_hop NS ADDR S-DEV S-ADDR : a link from router NS to s, NS forwarding 10.9.0.0/24 to s
lab_ecmp_hop() {
	ip -n "$1" link add s0 type veth peer name "$3" netns "$LAB_S" &&
	lab_offloads_off "$1" s0 && lab_offloads_off "$LAB_S" "$3" &&
	lab_in "$1" sysctl -qw net.ipv4.ip_forward=1 &&
	ip -n "$1" addr add "$2/24" dev s0 && ip -n "$1" link set s0 up &&
	ip -n "$LAB_S" addr add "$4/24" dev "$3" && ip -n "$LAB_S" link set "$3" up &&
	ip -n "$1" route add 10.9.0.0/24 via "$4"
}

lab_ecmp_up() {
	ip netns add "$LAB_H3" && ip netns add "$LAB_S" && LAB_ECMP_UP=1 &&
	ip link add name r2 netns "$LAB_R" numtxqueues 2 numrxqueues 2 type veth peer name eth0 \
		netns "$LAB_H3" numtxqueues 2 numrxqueues 2 &&
	lab_offloads_off "$LAB_H3" eth0 && lab_offloads_off "$LAB_R" r2 &&
	lab_host "$LAB_H3" 10.0.4.2/24 10.0.4.1 2001:db8:4::2/64 2001:db8:4::1 &&
	lab_in "$LAB_R" sysctl -qw net.ipv6.conf.r2.disable_ipv6=1 &&
	ip -n "$LAB_R" link set r2 up &&
	ip -n "$LAB_S" link set lo up && ip -n "$LAB_S" addr add 10.9.0.1/32 dev lo &&
	# s answers by either link, whichever a packet came in by
	lab_in "$LAB_S" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 &&
	lab_ecmp_hop "$LAB_H2" 10.0.5.1 e2 10.0.5.2 && lab_ecmp_hop "$LAB_H3" 10.0.6.1 e3 10.0.6.2 &&
	lab_in "$LAB_S" sysctl -qw net.ipv4.conf.e2.rp_filter=0 net.ipv4.conf.e3.rp_filter=0 &&
	ip -n "$LAB_S" route add default via 10.0.5.1
}

# lab_ecmp_path_pkts SOCK GW : packets rxpath (ctl socket SOCK) sent to 10.9.0.0/24 by next hop GW
lab_ecmp_path_pkts() {
	"$RXPATH" ctl --socket "$1" --json show routes 10.9.0.0/24 2>/dev/null |
		lab_json "sum(n['packets'] for r in j['routes'] for n in r.get('nexthops', []) if n.get('via') == '$2')"
}

# bytes router $1 (h2 or h3) forwarded to s
lab_ecmp_fwd_bytes() { ip -n "$1" -s -j link show s0 | lab_json 'j[0]["stats64"]["tx"]["bytes"]'; }

# lab_ecmp_spread NAME SOCK [DETAIL-CMD] : iperf3 -P 16 (TCP) from h1 to s; PASS NAME when the
# streams went both ways, by h2 (10.0.2.2) and h3 (10.0.4.2), as the routers' counters and
# rxpath's per next hop packets say; DETAIL-CMD's output joins a failure's lines
lab_ecmp_spread() {
	local name=$1 sock=$2 detail=${3:-} b2 b3 a2 a3 p2 p3 bps why
	lab_bg "$LAB_S" iperf3 -s -1 -B 10.9.0.1 >/dev/null 2>&1
	for _ in $(seq 50); do
		lab_in "$LAB_S" ss -Hltn 'sport = :5201' | grep -q . && break
		sleep 0.05
	done
	b2=$(lab_ecmp_fwd_bytes "$LAB_H2") b3=$(lab_ecmp_fwd_bytes "$LAB_H3")
	p2=$(lab_ecmp_path_pkts "$sock" 10.0.2.2) p3=$(lab_ecmp_path_pkts "$sock" 10.0.4.2)
	lab_in "$LAB_H1" timeout 15 iperf3 -c 10.9.0.1 -P 16 -t 2 -J >"$LAB_DIR/$name.json" 2>&1
	a2=$(lab_ecmp_fwd_bytes "$LAB_H2") a3=$(lab_ecmp_fwd_bytes "$LAB_H3")
	p2=$(($(lab_ecmp_path_pkts "$sock" 10.0.2.2) - p2)) p3=$(($(lab_ecmp_path_pkts "$sock" 10.0.4.2) - p3))
	bps=$(lab_json 'int(j["end"]["sum_received"]["bits_per_second"])' <"$LAB_DIR/$name.json" 2>/dev/null)
	echo "  observed: $name: iperf3 -P 16 $((${bps:-0} / 1000000)) Mbit/s; via h2 $(((a2 - b2) / 1000000)) MB," \
		"via h3 $(((a3 - b3) / 1000000)) MB; show routes: $p2 and $p3 packets"
	if [ "${bps:-0}" -gt 0 ] && [ $((a2 - b2)) -gt 1000000 ] && [ $((a3 - b3)) -gt 1000000 ] &&
	   [ "$p2" -gt 1000 ] && [ "$p3" -gt 1000 ]; then
		pass "$name"
		return 0
	fi
	why="$([ -n "$detail" ] && $detail)"
	fail "$name" "via h2 +$((a2 - b2)) bytes, via h3 +$((a3 - b3)) bytes, next hops $p2/$p3 packets" \
		${why:+"$why"} "$(tail -n 5 "$LAB_DIR/$name.json")"
	return 1
}

lab_g_up() {
	ip netns add "$LAB_G" && LAB_G_UP=1 &&
	ip -n "$LAB_H2" link add gw0 type veth peer name eth0 netns "$LAB_G" &&
	lab_offloads_off "$LAB_H2" gw0 && lab_offloads_off "$LAB_G" eth0 &&
	lab_in "$LAB_H2" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.gw0.accept_dad=0 net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0 &&
	ip -n "$LAB_H2" link set gw0 up &&
	ip -n "$LAB_H2" addr add 10.0.3.1/24 dev gw0 &&
	ip -n "$LAB_H2" -6 addr add 2001:db8:3::1/64 dev gw0 nodad &&
	ip -n "$LAB_H2" route add 10.9.9.9/32 via 10.0.3.2 &&
	ip -n "$LAB_H2" -6 route add 2001:db8:9::9/128 via 2001:db8:3::2 &&
	lab_in "$LAB_G" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0 &&
	ip -n "$LAB_G" link set lo up && ip -n "$LAB_G" link set eth0 up &&
	ip -n "$LAB_G" addr add 10.0.3.2/24 dev eth0 &&
	ip -n "$LAB_G" -6 addr add 2001:db8:3::2/64 dev eth0 nodad &&
	ip -n "$LAB_G" addr add 10.9.9.9/32 dev lo &&
	ip -n "$LAB_G" -6 addr add 2001:db8:9::9/128 dev lo &&
	ip -n "$LAB_G" route add default via 10.0.3.1 &&
	ip -n "$LAB_G" -6 route add default via 2001:db8:3::1
}

# lab_ns_del NS... : deletes the namespaces, killing first what still runs in them
# (anything the lab started and missed would keep a namespace alive)
lab_ns_del() {
	local ns pid
	for ns in "$@"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
}

lab_down() {
	local ns pid
	if [ -n "$LAB_RXPATH_PID" ]; then
		lab_rxpath_stop >/dev/null 2>&1
	fi
	for pid in "${LAB_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${LAB_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	LAB_PIDS=()
	if [ "$LAB_IS_UP" = 1 ]; then
		lab_ns_del "$LAB_H1" "$LAB_R" "$LAB_H2"
		LAB_IS_UP=0
	fi
	[ "$LAB_G_UP" = 1 ] && ip netns del "$LAB_G" 2>/dev/null
	LAB_G_UP=0
	if [ "$LAB_ECMP_UP" = 1 ]; then
		lab_ns_del "$LAB_H3" "$LAB_S"
		LAB_ECMP_UP=0
	fi
	[ -n "$LAB_DIR" ] && rm -rf "$LAB_DIR"
	LAB_DIR=
	return 0
}

# lab_iperf3 NAME IPERF3-CLIENT-ARGS... : one test against a fresh one-shot server in h2.
# Leaves the client's JSON in $LAB_DIR/NAME.json. Returns the client's status.
lab_iperf3() {
	local name=$1 i; shift
	lab_bg "$LAB_H2" iperf3 -s -1 -B 10.0.2.2 >/dev/null 2>&1
	for i in $(seq 50); do
		lab_in "$LAB_H2" ss -Hltn 'sport = :5201' 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	lab_in "$LAB_H1" timeout 15 iperf3 -c 10.0.2.2 "$@" -J >"$LAB_DIR/$name.json" 2>&1
}

# lab_h2_rx : frames h2's eth0 has received
lab_h2_rx() { ip -n "$LAB_H2" -s -j link show eth0 | lab_json 'j[0]["stats64"]["rx"]["packets"]'; }

# lab_udp_flood_check T DRIVER : a UDP flood h1 -> h2 through a fresh rxpath
# on DRIVER; its counters must add up, and h2 cannot have received more than
# rxpath sent it. Prints T_udp_flood, T_counters_add_up, T_h2_count_within_forwarded.
lab_udp_flood_check() {
	local T=$1 DRIVER=$2 h2_before h2_after udp_rc rc summary rx fwd dlv drp tx1
	local udp_sent udp_lost udp_rcvd h2_delta

	if ! command -v iperf3 >/dev/null; then
		skip "${T}_udp_flood: iperf3 not installed (apt-get install iperf3)"
	elif ! lab_rxpath_start "$DRIVER"; then
		fail "${T}_udp_flood" "rxpath did not start again"
	else
		h2_before=$(lab_h2_rx)
		lab_iperf3 udp -u -b 200M -l 256 -t 2
		udp_rc=$?
		sleep 0.2	# let the last frames drain
		lab_rxpath_stop
		rc=$?
		h2_after=$(lab_h2_rx)
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
}
