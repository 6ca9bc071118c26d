# SPDX-License-Identifier: MIT
# Kernel route sync: a route added with `ip route` in rxpath's namespace is
# used by rxpath within a second, and removed when deleted there (IPv4 here;
# IPv6 and the rest of the translation in tests/unit/test_ksync.c).
# Run as root: BUILD=build bash tests/e2e/test_ksync.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_ksync
lab_init
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
SOCK=$LAB_DIR/ctl.sock
if ! lab_rxpath_start afpacket --ctl "$SOCK"; then
	fail "${T}_start" "rxpath did not start"
	exit 1
fi
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@"; }

# within_1s CMD... : true once CMD succeeds, polling for one second
within_1s() {
	for _ in $(seq 10); do "$@" && return 0; sleep 0.1; done
	return 1
}
has_route() { ctl show routes "$1" 2>/dev/null | grep -q "$2"; }
no_route() { ctl show routes "$1" 2>/dev/null | grep -q "^no route"; }

# h2 gets a subnet that only a kernel route in rxpath's namespace leads to.
lab_in "$LAB_H2" ip addr add 10.9.0.2/24 dev eth0
out=$(ctl sync kernel 2>&1)
check "${T}_sync_on" grep -q 'mirroring kernel table 254 on 2 ports' <<<"$out"

lab_in "$LAB_R" ip route add 10.9.0.0/24 via 10.0.2.2 dev r1 onlink
check "${T}_route4_added_within_1s" within_1s has_route 10.9.0.7 '^10.9.0.0/24 via 10.0.2.2 dev p1 proto kernel$'
check "${T}_route4_used" sh -c "ip netns exec $LAB_H1 ping -n -c 2 -i 0.2 -w 5 10.9.0.2 >/dev/null"
# (IPv6 routes are mirrored the same way; the lab keeps IPv6 off on rxpath's
# kernel interfaces, so the kernel there takes none: tests/unit/test_ksync.c covers them)
check "${T}_show_routes_kernel" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show routes kernel | grep -q '^10.9.0.0/24 via 10.0.2.2 dev p1 (kernel r1, metric 0): installed'"

lab_in "$LAB_R" ip route replace 10.9.0.0/24 via 10.0.2.3 dev r1 onlink
check "${T}_route4_replaced" within_1s has_route 10.9.0.7 '^10.9.0.0/24 via 10.0.2.3 dev p1 proto kernel$'
lab_in "$LAB_R" ip route del 10.9.0.0/24
check "${T}_route4_deleted_within_1s" within_1s no_route 10.9.0.7
# a blackhole route in the kernel is one in rxpath too: h1's packets to it go nowhere
lab_in "$LAB_R" ip route add blackhole 10.66.0.0/16
check "${T}_blackhole_mirrored" within_1s has_route 10.66.1.1 '^10.66.0.0/16 blackhole proto kernel$'
lab_in "$LAB_R" ip route del blackhole 10.66.0.0/16
check "${T}_blackhole_withdrawn" within_1s no_route 10.66.1.1
if lab_in "$LAB_H1" ping -n -c 1 -w 2 10.9.0.2 >/dev/null 2>&1; then
	fail "${T}_route4_gone_unreachable" "10.9.0.2 still answers after the route was deleted"
else
	pass "${T}_route4_gone_unreachable"
fi

# A multipath route is one in rxpath, each next hop with its weight. (IPv6 multipath,
# and the kernel's ways of announcing it, are in tests/unit/test_ksync.c: the kernel
# here has IPv6 off on rxpath's interfaces.)
# has_lines ADDRESS LINE... : show routes ADDRESS has every LINE (patterns, tabs as \t)
has_lines() {
	local out l; out=$(ctl show routes "$1" 2>/dev/null); shift
	for l in "$@"; do grep -qP "$l" <<<"$out" || return 1; done
}
kernel_has() { ctl show routes kernel 2>/dev/null | grep -q "$1"; }
lab_in "$LAB_R" ip route add 10.70.0.0/24 nexthop via 10.0.2.2 dev r1 onlink weight 1 nexthop via 10.0.1.2 dev r0 onlink weight 3
check "${T}_multipath_mirrored" within_1s has_lines 10.70.0.1 '^10.70.0.0/24 multipath proto kernel$' \
	'^\tnexthop via 10.0.1.2 dev p0 weight 3 ' '^\tnexthop via 10.0.2.2 dev p1 weight 1 '
check "${T}_multipath_show_kernel" kernel_has \
	'^10.70.0.0/24 nexthop via 10.0.1.2 dev p0 weight 3 nexthop via 10.0.2.2 dev p1 weight 1 (kernel r0 r1, metric 0): installed'
lab_in "$LAB_R" ip route replace 10.70.0.0/24 nexthop via 10.0.2.2 dev r1 onlink weight 2 nexthop via 10.0.1.2 dev r0 onlink weight 3
check "${T}_multipath_weight_followed" within_1s has_lines 10.70.0.1 '^\tnexthop via 10.0.2.2 dev p1 weight 2 '
lab_in "$LAB_R" ip route del 10.70.0.0/24
check "${T}_multipath_deleted" within_1s no_route 10.70.0.1

# Kernel nexthop objects (ip nexthop, FRR's way): a route through a group is the group's
# members, and follows the objects when they are replaced and deleted.
lab_in "$LAB_R" ip nexthop add id 10 via 10.0.2.2 dev r1 onlink
lab_in "$LAB_R" ip nexthop add id 11 via 10.0.1.2 dev r0 onlink
lab_in "$LAB_R" ip nexthop add id 20 group 10/11
lab_in "$LAB_R" ip route add 10.71.0.0/24 nhid 20
check "${T}_nhid_group_mirrored" within_1s has_lines 10.71.0.1 '^10.71.0.0/24 multipath proto kernel$' \
	'^\tnexthop via 10.0.1.2 dev p0 weight 1 ' '^\tnexthop via 10.0.2.2 dev p1 weight 1 '
check "${T}_nhid_show_kernel" kernel_has '^10.71.0.0/24 nexthop .*(kernel r0 r1, nhid 20, metric 0): installed'
kernel_json() { [ "$(ctl --json show routes kernel 2>/dev/null | lab_json "$1" 2>/dev/null)" = True ]; }
check "${T}_nhid_show_kernel_json" kernel_json \
	'[(r["nhid"], [(n["via"], n["dev"], n["weight"]) for n in r["nexthops"]]) for r in j["routes"]
	  if r["prefix"] == "10.71.0.0/24"] == [(20, [("10.0.1.2", "p0", 1), ("10.0.2.2", "p1", 1)])]'
lab_in "$LAB_R" ip nexthop replace id 11 via 10.0.1.3 dev r0 onlink
check "${T}_nhid_replace_followed" within_1s has_lines 10.71.0.1 \
	'^\tnexthop via 10.0.1.3 dev p0 weight 1 ' '^\tnexthop via 10.0.2.2 dev p1 weight 1 '
lab_in "$LAB_R" ip nexthop del id 20
check "${T}_nhid_group_deleted" within_1s no_route 10.71.0.1
# ... and the traffic goes where the object says
lab_in "$LAB_R" ip route add 10.9.0.0/24 nhid 10
h1_pings() { lab_in "$LAB_H1" ping -n -c 1 -w 1 "$1" >/dev/null 2>&1; }
check "${T}_nhid_route_used" within_1s h1_pings 10.9.0.2
lab_in "$LAB_R" ip nexthop del id 10
check "${T}_nhid_route_gone_with_object" within_1s no_route 10.9.0.7
lab_in "$LAB_R" ip nexthop flush >/dev/null

# A configured route wins over the kernel's for the same prefix, and stays when the kernel's goes.
ctl route add 10.7.0.0/24 via 10.0.2.9 >/dev/null
lab_in "$LAB_R" ip route add 10.7.0.0/24 via 10.0.2.2 dev r1 onlink
check "${T}_static_route_refused" within_1s sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show routes kernel | grep -q '^10.7.0.0/24 via 10.0.2.2 dev p1 .*refused'"
check "${T}_static_route_kept" has_route 10.7.0.1 '^10.7.0.0/24 via 10.0.2.9 dev p1$'
lab_in "$LAB_R" ip route del 10.7.0.0/24
sleep 0.3
check "${T}_static_route_survives_kernel_del" has_route 10.7.0.1 '^10.7.0.0/24 via 10.0.2.9 dev p1$'
# ... and when the configured one goes after it, nothing of the kernel's comes back
ctl route del 10.7.0.0/24 >/dev/null
check "${T}_gone_kernel_route_not_restored" no_route 10.7.0.1
# The kernel's route a configured one replaced comes back when the configured one goes.
lab_in "$LAB_R" ip route add 10.60.0.0/16 via 10.0.2.7 dev r1 onlink
within_1s has_route 10.60.1.1 '^10.60.0.0/16 via 10.0.2.7 dev p1 proto kernel$' >/dev/null
ctl route add 10.60.0.0/16 via 10.0.2.8 >/dev/null
ctl route del 10.60.0.0/16 >/dev/null
check "${T}_kernel_route_back_after_configured" has_route 10.60.1.1 '^10.60.0.0/16 via 10.0.2.7 dev p1 proto kernel$'
# (the same when the kernel's came second, refused: kernel sync then knows it is in use again,
# and a lower-metric kernel route coming and going leaves it there)
ctl route add 10.63.0.0/16 via 10.0.2.9 >/dev/null
lab_in "$LAB_R" ip route add 10.63.0.0/16 via 10.0.2.7 dev r1 onlink metric 100
sleep 0.3
ctl route del 10.63.0.0/16 >/dev/null
check "${T}_refused_kernel_route_back" has_route 10.63.1.1 '^10.63.0.0/16 via 10.0.2.7 dev p1 proto kernel$'
check "${T}_refused_kernel_route_back_shown_installed" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show routes kernel | grep -q '^10.63.0.0/16 via 10.0.2.7 dev p1 .*: installed'"
lab_in "$LAB_R" ip route add 10.63.0.0/16 via 10.0.2.5 dev r1 onlink metric 50
sleep 0.3
lab_in "$LAB_R" ip route del 10.63.0.0/16 via 10.0.2.5 dev r1 metric 50
check "${T}_refused_kernel_route_survives_better_one" within_1s has_route 10.63.1.1 '^10.63.0.0/16 via 10.0.2.7 dev p1 proto kernel$'
lab_in "$LAB_R" ip route del 10.63.0.0/16
# ... with what the kernel changed meanwhile
ctl route add 10.60.0.0/16 via 10.0.2.8 >/dev/null
lab_in "$LAB_R" ip route replace 10.60.0.0/16 via 10.0.2.6 dev r1 onlink
sleep 0.3
ctl route del 10.60.0.0/16 >/dev/null
check "${T}_kernel_route_changed_under_configured_back" has_route 10.60.1.1 '^10.60.0.0/16 via 10.0.2.6 dev p1 proto kernel$'
lab_in "$LAB_R" ip route del 10.60.0.0/16
# A reload that puts a route over the kernel's and then fails takes it back: the kernel's stays.
lab_in "$LAB_R" ip route add 10.61.0.0/16 via 10.0.2.7 dev r1 onlink
within_1s has_route 10.61.1.1 '^10.61.0.0/16 via 10.0.2.7 dev p1 proto kernel$' >/dev/null
cp "$LAB_DIR/rxpath.conf" "$LAB_DIR/rxpath.conf.keep"
printf 'route add 10.61.0.0/16 via 10.0.2.8\nroute add 10.62.0.0/16 via 10.0.99.1\n' >>"$LAB_DIR/rxpath.conf"
kill -HUP "$LAB_RXPATH_PID"
sleep 0.5
check "${T}_failed_reload_keeps_kernel_route" has_route 10.61.1.1 '^10.61.0.0/16 via 10.0.2.7 dev p1 proto kernel$'
cp "$LAB_DIR/rxpath.conf.keep" "$LAB_DIR/rxpath.conf"
lab_in "$LAB_R" ip route del 10.61.0.0/16

# Neighbours follow too.
lab_in "$LAB_R" ip neigh add 10.0.2.44 lladdr 02:00:00:00:00:44 dev r1 nud permanent
check "${T}_neigh_added" within_1s sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show neigh | grep -q '^10.0.2.44 dev p1 lladdr 02:00:00:00:00:44 static'"
# ... but a configured neighbour wins over the kernel's, and stays when sync stops.
ctl neigh add 10.0.2.45 lladdr 02:00:00:00:00:45 dev p1 >/dev/null
lab_in "$LAB_R" ip neigh add 10.0.2.45 lladdr 02:00:00:00:00:99 dev r1 nud permanent
sleep 0.5
check "${T}_configured_neigh_kept" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show neigh | grep -q '^10.0.2.45 dev p1 lladdr 02:00:00:00:00:45 static'"
# The kernel's neighbour a configured one replaced comes back when the configured one goes;
# one the kernel deleted meanwhile does not.
has_neigh() { ctl show neigh 2>/dev/null | grep -q "$1"; }
lab_in "$LAB_R" ip neigh add 10.0.2.46 lladdr 02:00:00:00:00:46 dev r1 nud permanent
within_1s has_neigh '^10.0.2.46 dev p1 lladdr 02:00:00:00:00:46' >/dev/null
ctl neigh add 10.0.2.46 lladdr 02:00:00:00:01:46 dev p1 >/dev/null
check "${T}_configured_neigh_over_kernel" has_neigh '^10.0.2.46 dev p1 lladdr 02:00:00:00:01:46'
ctl neigh del 10.0.2.46 dev p1 >/dev/null
check "${T}_kernel_neigh_back_after_configured" has_neigh '^10.0.2.46 dev p1 lladdr 02:00:00:00:00:46'
ctl neigh add 10.0.2.46 lladdr 02:00:00:00:01:46 dev p1 >/dev/null
lab_in "$LAB_R" ip neigh replace 10.0.2.46 lladdr 02:00:00:00:02:46 dev r1 nud permanent
sleep 0.3
ctl neigh del 10.0.2.46 dev p1 >/dev/null
check "${T}_kernel_neigh_changed_under_configured_back" has_neigh '^10.0.2.46 dev p1 lladdr 02:00:00:00:02:46'
ctl neigh add 10.0.2.47 lladdr 02:00:00:00:01:47 dev p1 >/dev/null
lab_in "$LAB_R" ip neigh add 10.0.2.47 lladdr 02:00:00:00:00:47 dev r1 nud permanent
sleep 0.3
lab_in "$LAB_R" ip neigh del 10.0.2.47 dev r1
sleep 0.3
ctl neigh del 10.0.2.47 dev p1 >/dev/null
check "${T}_gone_kernel_neigh_not_restored" sh -c "! \"$RXPATH\" ctl --socket \"$SOCK\" show neigh | grep -q '^10.0.2.47 '"

# A VRF's kernel table is mirrored into it (kernel table 10 is VRF red's), apart from the
# main table's; the VRF made while sync runs joins what it mirrors.
has_vrf_route() { ctl show routes "$1" vrf red 2>/dev/null | grep -q "$2"; }
no_vrf_route() { ctl show routes "$1" vrf red 2>/dev/null | grep -q "^no route"; }
check "${T}_vrf_add" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" vrf add red table 10 >/dev/null"
lab_in "$LAB_R" ip route add blackhole 10.77.0.0/16 table 10
lab_in "$LAB_R" ip route add 10.78.0.0/16 via 10.0.2.2 dev r1 onlink table 10
check "${T}_vrf_table_mirrored" within_1s has_vrf_route 10.77.1.1 '^10.77.0.0/16 blackhole proto kernel$'
check "${T}_vrf_table_gateway_route" within_1s has_vrf_route 10.78.1.1 '^10.78.0.0/16 via 10.0.2.2 dev p1 proto kernel$'
check "${T}_vrf_table_not_main" no_route 10.77.1.1
check "${T}_vrf_show_routes_kernel" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show routes kernel | grep -q '^10.77.0.0/16 vrf red blackhole'"
lab_in "$LAB_R" ip route del blackhole 10.77.0.0/16 table 10
check "${T}_vrf_table_withdrawn" within_1s no_vrf_route 10.77.1.1
lab_in "$LAB_R" ip route del 10.78.0.0/16 table 10

# Turning sync off withdraws what it installed; config routes stay.
lab_in "$LAB_R" ip route add 10.8.0.0/24 via 10.0.2.2 dev r1 onlink
within_1s has_route 10.8.0.1 '^10.8.0.0/24' >/dev/null
check "${T}_sync_off" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" sync off >/dev/null"
check "${T}_sync_off_withdraws" no_route 10.8.0.1
check "${T}_sync_off_keeps_configured_neigh" sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show neigh | grep -q '^10.0.2.45 dev p1 lladdr 02:00:00:00:00:45 static'"
check "${T}_sync_off_withdraws_kernel_neigh" sh -c "! \"$RXPATH\" ctl --socket \"$SOCK\" show neigh | grep -q '^10.0.2.44 '"
check "${T}_connected_stays" has_route 10.0.2.9 '^10.0.2.0/24 dev p1 connected'

# A reload whose `sync kernel` cannot start (here: no file descriptor left for its netlink
# sockets) takes back the file's other changes, as a file that does not parse changes nothing;
# a route ctl moved meanwhile is put back as it ran.
ctl route add 10.64.0.0/16 via 10.0.2.5 >/dev/null
cp "$LAB_DIR/rxpath.conf" "$LAB_DIR/rxpath.conf.keep"
printf 'addr add 10.0.9.1/24 dev p0\nroute add 10.64.0.0/16 via 10.0.2.6\nsync kernel\n' >>"$LAB_DIR/rxpath.conf"
nofile=$(prlimit --pid "$LAB_RXPATH_PID" --nofile --output SOFT,HARD --noheadings | tr -s ' ' | sed 's/^ //')
# the soft limit at the second free descriptor number: one new descriptor at a time (the file
# is read), not two (kernel sync's sockets)
free2=$(ls /proc/"$LAB_RXPATH_PID"/fd | sort -n |
	awk 'BEGIN { n = 0; k = 0 } { while (n < $1 && k < 2) { k++; if (k == 2) { print n; exit } n++ } n = $1 + 1 }
	     END { if (k < 2) print n + 1 - k }')
prlimit --pid "$LAB_RXPATH_PID" --nofile="$free2:${nofile#* }"
n=$(grep -c 'taken back; nothing changed' "$LAB_DIR/rxpath.err")
kill -HUP "$LAB_RXPATH_PID"
for _ in $(seq 30); do [ "$(grep -c 'taken back; nothing changed' "$LAB_DIR/rxpath.err")" -gt "$n" ] && break; sleep 0.1; done
prlimit --pid "$LAB_RXPATH_PID" --nofile="$(tr ' ' ':' <<<"$nofile")"
check "${T}_failed_sync_reload_taken_back" grep -q 'taken back; nothing changed' "$LAB_DIR/rxpath.err"
check "${T}_failed_sync_reload_no_address" sh -c "! \"$RXPATH\" ctl --socket \"$SOCK\" show ports | grep -q 10.0.9.1"
check "${T}_failed_sync_reload_ctl_route_kept" has_route 10.64.1.1 '^10.64.0.0/16 via 10.0.2.5 dev p1$'
cp "$LAB_DIR/rxpath.conf.keep" "$LAB_DIR/rxpath.conf"
ctl route del 10.64.0.0/16 >/dev/null

# `sync kernel` written into the config file takes effect at a reload (SIGHUP), and so does its removal.
echo 'sync kernel' >>"$LAB_DIR/rxpath.conf"
kill -HUP "$LAB_RXPATH_PID"
check "${T}_reload_sync_on" within_1s has_route 10.8.0.1 '^10.8.0.0/24 via 10.0.2.2 dev p1 proto kernel$'
sed -i '/^sync kernel$/d' "$LAB_DIR/rxpath.conf"
kill -HUP "$LAB_RXPATH_PID"
check "${T}_reload_sync_off" within_1s no_route 10.8.0.1
check "${T}_reload_sync_reported" grep -q 'reload: kernel sync stopped' "$LAB_DIR/rxpath.err"

lab_rxpath_stop; rc=$?
check "${T}_exit_0" [ "$rc" -eq 0 ]

# `sync kernel` in the config rxpath starts with: the first sync, run before the
# datapath threads, mirrors the kernel's routes (10.8.0.0/24 is still there), and
# rxpath goes on to run (it used to wait for itself, for good).
if LAB_CONF_EXTRA='sync kernel' lab_rxpath_start afpacket --ctl "$SOCK"; then
	pass "${T}_startup_sync_starts"
	check "${T}_startup_sync_mirrors" within_1s has_route 10.8.0.1 '^10.8.0.0/24 via 10.0.2.2 dev p1 proto kernel$'
	lab_rxpath_stop; rc=$?
	check "${T}_startup_sync_exit_0" [ "$rc" -eq 0 ]
else
	fail "${T}_startup_sync_starts" "rxpath with 'sync kernel' in its config did not start"
fi
lab_down
