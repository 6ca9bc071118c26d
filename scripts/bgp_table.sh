#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A full table through BGP into rxpath, timed: BIRD 2 in h2 announces N4 IPv4
# /24s (and N6 IPv6 /48s) over eBGP to FRR in rxpath's namespace r, through
# p1's host path; zebra installs them into r's kernel, rxpath's kernel sync
# mirrors them. Prints how long each stage took to hold them all, then the
# same for a session reset (BIRD's protocol disabled: all withdrawn; enabled:
# all learned again), while h1 pings h2 (a connected prefix the reset does not
# touch) every 10 ms and counts what is lost.
#
# A measurement, not a test: run it by hand as root, on a quiet machine.
#   bash scripts/bgp_table.sh [N4 [N6]]      (default 1000000 200000)
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/e2e/lab.sh
. tests/e2e/bgp_lab.sh

N4=${1:-1000000}
N6=${2:-200000}
T=bgp_table
lab_init
bgp_lab_need
trap bgp_down EXIT
lab_up || { echo "cannot build the lab"; exit 1; }
for dev in r0 r1; do
	ip -n "$LAB_R" link set "$dev" arp off
	lab_in "$LAB_R" sysctl -qw "net.ipv4.conf.$dev.rp_filter=1"
done
bgp_frr_dir || { echo "cannot make $FRR_DIR"; exit 1; }

# ---- BIRD in h2: N4 + N6 static routes, exported over one eBGP session (IPv6 over it too) ----
{
	echo "log \"$LAB_DIR/bird-h2.log\" { warning, error };"
	echo "router id 10.0.2.2;"
	echo "protocol device { }"
	echo "protocol static routes4 {"
	echo "	ipv4;"
	awk -v n="$N4" 'BEGIN { for (i = 0; i < n; i++)
		printf "\troute %d.%d.%d.0/24 blackhole;\n", 11 + int(i / 65536), int(i / 256) % 256, i % 256 }'
	echo "}"
	echo "protocol static routes6 {"
	echo "	ipv6;"
	awk -v n="$N6" 'BEGIN { for (i = 0; i < n; i++)
		printf "\troute 2a00:%x:%x::/48 blackhole;\n", int(i / 65536) + 1, i % 65536 }'
	echo "}"
	echo "protocol bgp up {"
	echo "	local 10.0.2.2 as 65002;"
	echo "	neighbor 10.0.2.1 as 65000;"
	echo "	hold time 90; connect retry time 1; start delay time 1;"
	echo "	ipv4 { import none; export where source = RTS_STATIC; };"
	echo "	ipv6 { import none; export where source = RTS_STATIC; next hop address 2001:db8:2::2; };"
	echo "}"
} >"$LAB_DIR/bird-h2.conf"

cat >"$FRR_DIR/bgpd.conf" <<-EOF
	hostname r
	log file $FRR_DIR/bgpd.log warnings
	router bgp 65000
	 bgp router-id 10.0.1.1
	 no bgp ebgp-requires-policy
	 neighbor 10.0.2.2 remote-as 65002
	 address-family ipv6 unicast
	  neighbor 10.0.2.2 activate
	 exit-address-family
EOF

SOCK=$LAB_DIR/ctl.sock
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@" 2>/dev/null; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# how many of the announced routes FRR, the kernel and rxpath hold
frr_count() {	# FAMILY
	vty -c "show bgp $1 unicast summary json" | lab_json 'sum(p.get("pfxRcd", 0) for p in j.get("peers", {}).values())' 2>/dev/null
}
frr4_count() { frr_count ipv4; }
frr6_count() { frr_count ipv6; }
kernel_count() { lab_in "$LAB_R" ip -4 route show proto bgp | wc -l; }
kernel6_count() { lab_in "$LAB_R" ip -6 route show proto bgp | wc -l; }
rx_count() { ctl --json show routes kernel summary | lab_json 'j["installed"]' 2>/dev/null; }
# wait_for WHAT COUNT-FN WANT LIMIT-S T0: seconds from T0 until COUNT-FN says WANT (or the limit)
wait_for() {
	local what=$1 fn=$2 want=$3 limit=$4 t0=$5 end got
	end=$(($(date +%s) + limit))
	while [ "$(date +%s)" -lt "$end" ]; do
		got=$($fn)
		if [ "${got:-0}" -eq "$want" ] 2>/dev/null; then
			printf '  %-32s %8s s\n' "$what ($want)" "$(since "$t0")"
			return 0
		fi
		sleep 0.5
	done
	printf '  %-32s   not within %s s (%s)\n' "$what ($want)" "$limit" "${got:-?}"
	return 1
}

LAB_CONF_EXTRA="port set p1 host on
sync kernel" lab_rxpath_start afpacket --ctl "$SOCK" || { echo "rxpath did not start"; exit 1; }
frr_start || { echo "FRR did not start: $(tail -n 3 "$FRR_DIR"/*.out)"; exit 1; }

echo "rxpath bgp_table: $N4 IPv4 and $N6 IPv6 prefixes, BIRD (h2) -> FRR (r) -> kernel -> rxpath"
t0=$(now)
bird_start "$LAB_H2" h2
wait_for "FRR holds the IPv4 ones" frr4_count "$N4" 900 "$t0" &&
wait_for "FRR holds the IPv6 ones" frr6_count "$N6" 900 "$t0" &&
wait_for "the kernel holds the IPv4 ones" kernel_count "$N4" 900 "$t0" &&
wait_for "the kernel holds the IPv6 ones" kernel6_count "$N6" 900 "$t0" &&
wait_for "rxpath holds them all" rx_count $((N4 + N6)) 900 "$t0" || exit 1

# ---- a session reset while h1 pings h2 (its connected subnet: untouched by the reset) ----
# `ip netns exec` execs ping: its pid is ping's, which SIGINT makes print its counts
ip netns exec "$LAB_H1" ping -n -q -i 0.01 -W 1 10.0.2.2 >"$LAB_DIR/ping.txt" 2>&1 &
ping_pid=$!
sleep 1
t0=$(now)
birdc_ "$LAB_H2" h2 disable up >/dev/null
wait_for "withdrawn from rxpath" rx_count 0 900 "$t0"
t0=$(now)
birdc_ "$LAB_H2" h2 enable up >/dev/null
wait_for "learned again by rxpath" rx_count $((N4 + N6)) 900 "$t0"
sleep 1
kill -INT "$ping_pid"
wait "$ping_pid" 2>/dev/null
echo "  ping h1 -> h2 meanwhile: $(grep 'packets transmitted' "$LAB_DIR/ping.txt")"
rss=$(awk '/VmHWM/ { print $2 }' "/proc/$LAB_RXPATH_PID/status" 2>/dev/null)
echo "  rxpath's peak resident memory: $((${rss:-0} / 1024)) MiB"
lab_rxpath_stop >/dev/null
echo "  rxpath exit: $?"
