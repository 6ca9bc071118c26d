# SPDX-License-Identifier: MIT
# rxpath's host path: `port set p0 host on` gives the kernel in rxpath's
# namespace a TAP twin of p0 (same MAC, addresses, MTU). From h1: a TCP
# connection to rxpath's own address works through the TAP (an echo server,
# IPv4 and IPv6, bytes compared), ping to that address is still answered by
# the datapath, routing h1 <-> h2 still works; iperf3 to rxpath's address
# completes with GRO on and with GRO off, the counters show merged segments
# only when on, iperf3 -R exercises GSO (the kernel's TSO super-packets cut
# in software), and the TAP is gone after SIGTERM. Prints the GRO on/off
# throughput; HOST_BENCH_REPS=N runs N interleaved on/off pairs and prints
# the medians with their spread (default 1).
# Run as root: BUILD=build bash tests/e2e/test_host.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

DRIVER=afpacket
T=e2e_host
REPS=${HOST_BENCH_REPS:-1}
IPERF_S=${HOST_IPERF_SECONDS:-3}

lab_init
HAVE_IPERF3=1
command -v iperf3 >/dev/null || HAVE_IPERF3=0
command -v "$PYTHON" >/dev/null || lab_skip_all "no $PYTHON for the TCP echo"
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

# AF_PACKET only copies what arrives on r0/r1: the kernel in r still
# receives it. Once the TAP gives that namespace addresses, the kernel
# (a weak host) would answer on r0 too: ARP replies, duplicate pings,
# every TCP segment twice. Keep it deaf there: no ARP, and strict reverse
# path filtering (the peers are reached through the TAP, not r0/r1);
# IPv6 is already off on them (lab_up). A user running rxpath on afpacket
# ports with a host path does the same.
for dev in r0 r1; do
	ip -n "$LAB_R" link set "$dev" arp off &&
	lab_in "$LAB_R" sysctl -qw "net.ipv4.conf.$dev.rp_filter=1" ||
		{ fail "${T}_lab_up" "cannot quiet the kernel on $dev"; exit 1; }
done

# start_host GRO : rxpath on afpacket ports with p0's host path, GRO on|off
start_host() {
	lab_rxpath_start "$DRIVER" --ctl "$LAB_DIR/ctl.sock" -e "port set p0 host on gro $1"
}

# ping_ok NAME NS ARGS... : all of 3 echo requests answered, none twice
ping_ok() {
	local name=$1 ns=$2 out; shift 2
	if out=$(lab_in "$ns" ping -n -c 3 -i 0.2 -w 5 "$@" 2>&1) && ! echo "$out" | grep -q DUP; then
		pass "$name"
	else
		fail "$name" "ping $*:" "$(echo "$out" | tail -n 3)"
	fi
}

ECHO_SERVER='import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
s.settimeout(20)
c, _ = s.accept()
while True:
    d = c.recv(65536)
    if not d:
        break
    c.sendall(d)
c.close()'

ECHO_CLIENT='import hashlib, os, socket, sys
data = os.urandom(int(sys.argv[3]))
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
got = bytearray()
while True:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(len(got), hashlib.sha256(got).hexdigest() == hashlib.sha256(data).hexdigest())'

# echo_ok NAME ADDR PORT : a TCP echo server on rxpath's ADDR (in r), a client in h1
echo_ok() {
	local name=$1 addr=$2 port=$3 out i
	lab_bg "$LAB_R" timeout 30 "$PYTHON" -c "$ECHO_SERVER" "$addr" "$port"
	for i in $(seq 50); do
		lab_in "$LAB_R" ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	out=$(lab_in "$LAB_H1" timeout 20 "$PYTHON" -c "$ECHO_CLIENT" "$addr" "$port" 300000 2>&1)
	if [ "$out" = "300000 True" ]; then
		pass "$name"
	else
		fail "$name" "300000 bytes through a TCP echo at $addr:$port came back as: $out"
		lab_show_log
	fi
}

# host_iperf3 NAME ARGS... : iperf3 server on rxpath's 10.0.1.1 (in r), client in h1.
# Prints the receiver's bits per second; returns the client's status.
host_iperf3() {
	local name=$1 i; shift
	lab_bg "$LAB_R" timeout $((IPERF_S + 20)) iperf3 -s -1 -B 10.0.1.1 >/dev/null 2>&1
	for i in $(seq 50); do
		lab_in "$LAB_R" ss -Hltn 'sport = :5201' 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	lab_in "$LAB_H1" timeout $((IPERF_S + 15)) iperf3 -c 10.0.1.1 -t "$IPERF_S" "$@" -J \
		>"$LAB_DIR/$name.json" 2>&1 || return 1
	lab_json 'j["end"]["sum_received"]["bits_per_second"]' <"$LAB_DIR/$name.json"
}

# positive BPS : true when BPS is a number above zero
positive() { "$PYTHON" -c "import sys; sys.exit(not float(sys.argv[1]) > 0)" "$1" 2>/dev/null; }
mbit() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1e6 }'; }

# host_stat FIELD : FIELD of p0's host path in the last summary
host_stat() { lab_summary | lab_json "j.get('host', [{}])[0].get('$1', -1)"; }

# stop_check NAME : SIGTERM, exit 0 with a summary, and the TAP removed
stop_check() {
	local name=$1 rc
	lab_rxpath_stop
	rc=$?
	if [ $rc -eq 0 ] && [ -n "$(lab_summary)" ]; then
		pass "${name}_sigterm_exit0"
	else
		fail "${name}_sigterm_exit0" "exit status $rc"
		lab_show_log
	fi
	if ip -n "$LAB_R" link show p0 >/dev/null 2>&1; then
		fail "${name}_tap_removed" "TAP p0 still there after rxpath stopped"
	else
		pass "${name}_tap_removed"
	fi
}

# ---- GRO on: the functional checks ----
if ! start_host on; then
	fail "${T}_start" "rxpath did not start with a host path"
	exit 1
fi
pass "${T}_start"

tap=$(ip -n "$LAB_R" -j addr show p0 2>/dev/null)
r0_mac=$(ip -n "$LAB_R" -j link show r0 | lab_json 'j[0]["address"]')
if echo "$tap" | lab_json '" ".join(sorted(a["local"] + "/" + str(a["prefixlen"]) for a in j[0]["addr_info"])) + " " + j[0]["address"] + " " + ("UP" if "UP" in j[0]["flags"] else "DOWN")' |
   grep -q "10.0.1.1/24 2001:db8:1::1/64 fe80::.*/64 $r0_mac UP"; then
	pass "${T}_tap_has_port_mac_and_addresses"
else
	fail "${T}_tap_has_port_mac_and_addresses" "TAP p0 in r (port mac $r0_mac):" "$tap"
fi

ping_ok "${T}_ping4_router_by_datapath" "$LAB_H1" 10.0.1.1
ping_ok "${T}_ping6_router_by_datapath" "$LAB_H1" -6 2001:db8:1::1
ping_ok "${T}_ping4_h1_h2_routed" "$LAB_H1" 10.0.2.2
ping_ok "${T}_ping6_h1_h2_routed" "$LAB_H1" -6 2001:db8:2::2
echo_ok "${T}_tcp4_echo_through_tap" 10.0.1.1 7001
echo_ok "${T}_tcp6_echo_through_tap" 2001:db8:1::1 7002
# what is addressed to another port's address is not this TAP's kernel's (it has not that
# address): rxpath answers it, a refused connection, not silence
if out=$(lab_in "$LAB_H1" "$PYTHON" -c 'import socket
try:
    socket.create_connection(("10.0.2.1", 22), timeout=3)
    print("connected")
except ConnectionRefusedError:
    print("refused")
except OSError as e:
    print(e)' 2>&1) && [ "$out" = refused ]; then
	pass "${T}_other_ports_address_answered"
else
	fail "${T}_other_ports_address_answered" "TCP to 10.0.2.1:22 from h1: $out"
fi
# Broadcast and link-local multicast reach the kernel behind the TAP (DHCP, RIP, OSPF need
# them): a listener there, joined to 224.0.0.9 and ff02::9 on the TAP, hears h1's directed and
# limited broadcasts (one from 0.0.0.0, as a DHCP client sends) and its multicast. (r0 itself is
# deaf: rp_filter, no IPv6.)
LISTEN='import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 5520))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.9") + socket.inet_aton("10.0.1.1"))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.bind(("", 5521))
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
              socket.inet_pton(socket.AF_INET6, "ff02::9") + struct.pack("@I", socket.if_nametoindex("p0")))
print("ready", flush=True)
got, end = set(), time.time() + 6
for k in (s, s6):
    k.settimeout(0.1)
while time.time() < end and len(got) < 5:
    for k in (s, s6):
        try:
            got.add(k.recv(100).decode())
        except socket.timeout:
            pass
print(" ".join(sorted(got)), flush=True)'
SEND='import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"eth0")
s.sendto(b"directed", ("10.0.1.255", 5520))
s.sendto(b"limited", ("255.255.255.255", 5520))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("10.0.1.2"))
s.sendto(b"group4", ("224.0.0.9", 5520))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.sendto(b"group6", ("ff02::9", 5521, 0, socket.if_nametoindex("eth0")))
# as a DHCP client with no address yet: from 0.0.0.0 to 255.255.255.255, a frame made by hand
def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    t = (t >> 16) + (t & 0xffff)
    return ~(t + (t >> 16)) & 0xffff
udp = struct.pack("!HHHH", 68, 5520, 12, 0) + b"dhcp"
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, bytes(4), b"\xff" * 4)
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
mac = bytes.fromhex(open("/sys/class/net/eth0/address").read().strip().replace(":", ""))
raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
raw.bind(("eth0", 0))
raw.send(b"\xff" * 6 + mac + b"\x08\x00" + ip + udp)'
lab_in "$LAB_R" "$PYTHON" -c "$LISTEN" >"$LAB_DIR/listen.out" 2>&1 &
lpid=$!
for _ in $(seq 50); do grep -q ready "$LAB_DIR/listen.out" && break; sleep 0.1; done
lab_in "$LAB_H1" "$PYTHON" -c "$SEND"
wait $lpid
check "${T}_broadcast_and_link_multicast_to_kernel" grep -q '^dhcp directed group4 group6 limited$' "$LAB_DIR/listen.out"
# Kernel sync takes the TAP as its port: a route a daemon in rxpath's namespace adds through it
# (a BGP next hop on the TAP's subnet) is the port's, IPv4 and IPv6
hctl0() { "$RXPATH" ctl --socket "$LAB_DIR/ctl.sock" "$@"; }
hctl0 sync kernel >/dev/null
lab_in "$LAB_R" ip route add 10.77.0.0/16 via 10.0.1.2
lab_in "$LAB_R" ip -6 route add 2001:db8:77::/48 via 2001:db8:1::2
sleep 0.5
check "${T}_sync_route_through_tap" sh -c "\"$RXPATH\" ctl --socket \"$LAB_DIR/ctl.sock\" show routes 10.77.1.1 | grep -q '^10.77.0.0/16 via 10.0.1.2 dev p0 proto kernel$'"
check "${T}_sync_route6_through_tap" sh -c "\"$RXPATH\" ctl --socket \"$LAB_DIR/ctl.sock\" show routes 2001:db8:77::1 | grep -q '^2001:db8:77::/48 via 2001:db8:1::2 dev p0 proto kernel$'"
lab_in "$LAB_R" ip route del 10.77.0.0/16
lab_in "$LAB_R" ip -6 route del 2001:db8:77::/48
hctl0 sync off >/dev/null
# an address deleted from the TAP does not take the others of its subnet along
hctl() { "$RXPATH" ctl --socket "$LAB_DIR/ctl.sock" "$@" >/dev/null; }
hctl addr add 10.0.1.5/24 dev p0 && hctl addr del 10.0.1.1 dev p0
check "${T}_tap_keeps_secondary" sh -c "ip -n $LAB_R addr show p0 | grep -q 'inet 10.0.1.5/24'"
hctl addr add 10.0.1.1/24 dev p0; hctl addr del 10.0.1.5 dev p0
# below an MTU of 1280 the kernel keeps no IPv6 address on the TAP; they come back with the MTU
hctl port set p0 mtu 1200 2>/dev/null; hctl port set p0 mtu 1500
check "${T}_tap_ipv6_back_after_small_mtu" sh -c "ip -n $LAB_R addr show p0 | grep -q 'inet6 2001:db8:1::1/64'"
# a host path that cannot be renamed (the name is taken) stays as it was
if ! hctl port set p0 host on name r1 2>/dev/null && ip -n "$LAB_R" link show p0 >/dev/null 2>&1; then
	pass "${T}_failed_rename_keeps_tap"
else
	fail "${T}_failed_rename_keeps_tap" "TAP p0 gone after a refused 'host on name r1'"
fi
# the host path's counters are in show stats too, not only in the summary
stats=$("$RXPATH" ctl --socket "$LAB_DIR/ctl.sock" --json show stats 2>&1)
if echo "$stats" | lab_json 'j["hosts"][0]["port"] == "p0" and j["hosts"][0]["counters"]["to_host_packets"] > 0' | grep -q True &&
   "$RXPATH" ctl --socket "$LAB_DIR/ctl.sock" show stats | grep -q '^port p0 host: tap p0 gro on to_host_packets [1-9]'; then
	pass "${T}_show_stats_host"
else
	fail "${T}_show_stats_host" "$stats"
fi

on_bps=()
off_bps=()
if [ $HAVE_IPERF3 = 0 ]; then
	skip "${T}_iperf3: iperf3 not installed (apt-get install iperf3)"
elif bps=$(host_iperf3 gro_on) && positive "$bps"; then
	pass "${T}_iperf3_gro_on"
	on_bps+=("$bps")
else
	fail "${T}_iperf3_gro_on" "$(tail -n 5 "$LAB_DIR/gro_on.json")"
fi
if [ $HAVE_IPERF3 = 0 ]; then
	: # skipped above
elif bps=$(host_iperf3 gso -R) && positive "$bps"; then
	pass "${T}_iperf3_reverse_gso"
	echo "  iperf3 -R (rxpath's kernel -> h1, TSO cut by rxpath): $(mbit "$bps") Mbit/s"
else
	fail "${T}_iperf3_reverse_gso" "$(tail -n 5 "$LAB_DIR/gso.json")"
fi
stop_check "${T}_gro_on"
summary=$(lab_summary)
merged=$(host_stat gro_merged)
supers=$(host_stat gro_super)
gso=$(host_stat gso_segments)
echo "  GRO on: $(host_stat to_host_packets) packets to the host in $(host_stat writes) writes," \
     "$supers super-packets of $merged merged segments; GSO cut $(host_stat gso_frames) into $gso segments"
if [ "$merged" -gt 0 ] && [ "$supers" -gt 0 ]; then
	pass "${T}_gro_on_merges"
else
	fail "${T}_gro_on_merges" "gro_merged $merged, gro_super $supers" "$summary"
fi
if [ $HAVE_IPERF3 = 1 ] && [ "$gso" -gt 0 ] && [ "$(host_stat bad_frames)" -eq 0 ] ||
   [ $HAVE_IPERF3 = 0 ] && [ "$(host_stat bad_frames)" -eq 0 ]; then
	pass "${T}_gso_segments"
else
	fail "${T}_gso_segments" "gso_segments $gso, bad_frames $(host_stat bad_frames)" "$summary"
fi
# received = forwarded + delivered (the host's packets among them) + dropped
# and pings to rxpath were answered by the datapath, not the kernel behind the TAP
if echo "$summary" | lab_json 'sum(p["rx_packets"] for p in j["ports"]) == j["forwarded"] + sum(j["delivered"].values()) + sum(j["drops"].values()) and j["host"][0]["to_host_packets"] <= sum(j["delivered"].values()) and j["delivered"]["echo4"] >= 3 and j["delivered"]["echo6"] >= 3' | grep -q True; then
	pass "${T}_counters_add_up"
else
	fail "${T}_counters_add_up" "$summary"
fi

# ---- GRO off ----
if [ $HAVE_IPERF3 = 0 ]; then
	:
elif ! start_host off; then
	fail "${T}_start_gro_off" "rxpath did not start again"
else
	if bps=$(host_iperf3 gro_off) && positive "$bps"; then
		pass "${T}_iperf3_gro_off"
		off_bps+=("$bps")
	else
		fail "${T}_iperf3_gro_off" "$(tail -n 5 "$LAB_DIR/gro_off.json")"
	fi
	stop_check "${T}_gro_off"
	merged=$(host_stat gro_merged)
	to_host=$(host_stat to_host_packets)
	if [ "$merged" -eq 0 ] && [ "$to_host" -gt 0 ] && [ "$(host_stat writes)" -eq "$to_host" ]; then
		pass "${T}_gro_off_no_merges"
	else
		fail "${T}_gro_off_no_merges" "gro_merged $merged, to_host $to_host, writes $(host_stat writes)"
	fi
fi

# ---- two workers: the TAP has a queue per worker; either worker's traffic reaches the host ----
if ! LAB_QUEUES=2 lab_rxpath_start "$DRIVER" --workers 2 --ctl "$LAB_DIR/ctl.sock" -e "port set p0 host on gro on"; then
	fail "${T}_workers_start" "rxpath did not start with a host path and two workers"
else
	if lab_in "$LAB_R" ip -d link show p0 2>&1 | grep -q multi_queue; then
		pass "${T}_workers_tap_multi_queue"
	else
		fail "${T}_workers_tap_multi_queue" "$(lab_in "$LAB_R" ip -d link show p0 2>&1)"
	fi
	ping_ok "${T}_workers_ping_datapath" "$LAB_H1" 10.0.1.1
	echo_ok "${T}_workers_tcp_echo_v4" 10.0.1.1 7101
	echo_ok "${T}_workers_tcp_echo_v6" 2001:db8:1::1 7102
	if [ $HAVE_IPERF3 = 1 ]; then
		if bps=$(host_iperf3 workers -P 4) && positive "$bps"; then
			pass "${T}_workers_iperf3"
			echo "  observed: iperf3 -P 4 h1 -> rxpath's address through the TAP, two workers: $(mbit "$bps") Mbit/s"
		else
			fail "${T}_workers_iperf3" "$(tail -n 5 "$LAB_DIR/workers.json")"
		fi
	fi
	ping_ok "${T}_workers_routing_still" "$LAB_H1" 10.0.2.2
	stop_check "${T}_workers"
	if [ "$(host_stat to_host_packets)" -gt 0 ] && [ "$(host_stat from_host_packets)" -gt 0 ] &&
	   [ "$(host_stat write_errors)" -eq 0 ]; then
		pass "${T}_workers_host_counters"
	else
		fail "${T}_workers_host_counters" "$(lab_summary | lab_json 'j["host"]')"
	fi
fi

# ---- more interleaved pairs for the figure (HOST_BENCH_REPS) ----
for ((rep = 2; rep <= REPS && HAVE_IPERF3; rep++)); do
	for gro in $([ $((rep % 2)) -eq 0 ] && echo "off on" || echo "on off"); do
		start_host "$gro" || break
		bps=$(host_iperf3 "rep_$gro") && positive "$bps" &&
			{ if [ "$gro" = on ]; then on_bps+=("$bps"); else off_bps+=("$bps"); fi; }
		lab_rxpath_stop >/dev/null
	done
done

if [ ${#on_bps[@]} -gt 0 ] && [ ${#off_bps[@]} -gt 0 ]; then
	"$PYTHON" - "$IPERF_S" "${#on_bps[@]}" "${on_bps[@]}" "${off_bps[@]}" <<-'EOF'
	import statistics, sys
	n = int(sys.argv[2])
	on = [float(x) / 1e6 for x in sys.argv[3:3 + n]]
	off = [float(x) / 1e6 for x in sys.argv[3 + n:]]
	def fig(v):
	    return "%.0f Mbit/s (median of %d, %.0f..%.0f)" % (statistics.median(v), len(v),
	                                                       min(v), max(v))
	print("  iperf3 h1 -> rxpath's own address through the TAP, %s s each: GRO on %s, "
	      "GRO off %s; on/off %.2fx" % (sys.argv[1], fig(on), fig(off),
	                                    statistics.median(on) / statistics.median(off)))
	EOF
fi

# Teardown leaves nothing: no namespace, no veth, no TAP, no rxpath.
prefix=$LAB_PREFIX
lab_down
left=$(ip netns list | grep "^$prefix-")
links=$(ip -o link show | grep -- "$prefix-")
if [ -z "$left" ] && [ -z "$links" ]; then
	pass "${T}_teardown_clean"
else
	fail "${T}_teardown_clean" "left behind:" "$left" "$links"
fi
