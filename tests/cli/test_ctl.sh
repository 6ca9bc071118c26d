#!/usr/bin/env bash
# rxpath ctl: the control socket, changes while forwarding, reports, errors, SIGHUP reload.
set -u
. "$(dirname "$0")/lib.sh"

SOCK=$TMP/ctl.sock
ctl() { "$RXPATH" ctl --socket "$SOCK" "$@"; }

# reload [LOG]: SIGHUP, then wait (5 s at most) for rxpath to say how the reload went in LOG
# (its stderr, run.err by default), so that a check after it never sees the state before it
reload() {
	local log=${1:-$TMP/run.err} n
	n=$(grep -c 'rxpath: reload' "$log")
	kill -HUP $pid
	for _ in $(seq 50); do
		[ "$(grep -c 'rxpath: reload' "$log")" -gt "$n" ] && break
		sleep 0.1
	done
	sleep 0.1	# the last lines of the reload's report
}

# Waits up to 5 s for the socket to answer.
wait_ctl() {
	for _ in $(seq 50); do
		ctl show pool >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# The example router, with the config in a file we can edit for the reload.
cp examples/router.conf "$TMP/router.conf"
"$RXPATH" run -c "$TMP/router.conf" --ctl "$SOCK" --interval 0 --duration 300 \
	>"$TMP/run.out" 2>"$TMP/run.err" &
pid=$!
check ctl_socket_answers wait_ctl
check ctl_socket_mode_0600 [ "$(stat -c %a "$SOCK")" = 600 ]

out=$(ctl show ports)
check ctl_show_ports grep -q '^sim1: sim:rx=off' <<<"$out"
check ctl_show_ports_addresses grep -q 'inet 10.0.1.1/24' <<<"$out"
check ctl_show_ports_json sh -c "ctl() { \"$RXPATH\" ctl --socket \"$SOCK\" \"\$@\"; }; ctl --json show ports | python3 -c 'import json,sys; d=json.load(sys.stdin); assert [p[\"name\"] for p in d[\"ports\"]]==[\"sim0\",\"sim1\"]'"

# A route added while forwarding is used at once: traffic to 16.5/16 now
# waits for a gateway that nobody answers, so that neighbour shows up.
check ctl_route_add ctl route add 16.5.0.0/16 via 10.0.1.3
check ctl_show_route_of_address grep -q '^16.5.0.0/16 via 10.0.1.3 dev sim1$' <<<"$(ctl show routes 16.5.7.7)"
sleep 0.3
check ctl_new_route_used grep -q '^10.0.1.3 dev sim1 .*incomplete' <<<"$(ctl show neigh)"
check ctl_route_del ctl route del 16.5.0.0/16
check ctl_route_del_falls_back grep -q '^16.0.0.0/8 via 10.0.1.2' <<<"$(ctl show routes 16.5.7.7)"
check ctl_routes_within_prefix [ "$(ctl show routes 16.0.0.0/7 | wc -l)" -eq 2 ]
# a word longer than the report's argument is refused, not read as two
long=2001:db8:0000:0000:0000:0000:0000:0001/128-$(printf 'x%.0s' $(seq 60))
out=$(ctl show routes "$long" 2>&1); rc=$?
check ctl_show_long_argument_refused [ $rc -ne 0 ]
check ctl_show_long_argument_says_so grep -q "too long" <<<"$out"

# Forwarding goes on while the tables change: 80 changes, and the
# forwarded counter keeps growing.
f0=$(ctl --json show stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["stack"]["forwarded"])')
for i in $(seq 40); do
	ctl route add 40.$i.0.0/16 via 10.0.1.2 && ctl route del 40.$i.0.0/16
done >/dev/null 2>&1
f1=$(ctl --json show stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["stack"]["forwarded"])')
check ctl_forwarding_during_changes [ "$f1" -gt "$f0" ]
check ctl_changes_left_nothing [ "$(ctl show routes 40.0.0.0/8 | grep -c via)" -eq 0 ]

# Addresses and neighbours.
check ctl_addr_add ctl addr add 10.0.9.1/24 dev sim1
check ctl_addr_connected grep -q '^10.0.9.0/24 dev sim1 connected' <<<"$(ctl show routes 10.0.9.0/24)"
check ctl_addr_del ctl addr del 10.0.9.1/24 dev sim1
check ctl_addr_del_routes_gone grep -q 'no routes within' <<<"$(ctl show routes 10.0.9.0/24)"
# One subnet, one port: a second port's address there would take the route from the first.
err=$(ctl addr add 10.0.1.9/24 dev sim0 2>&1); rc=$?
check ctl_addr_other_ports_subnet_refused [ "$rc" -eq 1 ]
check ctl_addr_other_ports_subnet_msg grep -q "another port is on that subnet already" <<<"$err"
check ctl_addr_other_ports_subnet_route_kept grep -q '^10.0.1.0/24 dev sim1 connected' <<<"$(ctl show routes 10.0.1.0/24)"
# A configured route is not taken over by an address (it would be gone when the address goes).
ctl route add 10.0.8.0/24 via 10.0.1.2 >/dev/null
err=$(ctl addr add 10.0.8.1/24 dev sim1 2>&1); rc=$?
check ctl_addr_over_configured_route_refused [ "$rc" -eq 1 ]
check ctl_addr_over_configured_route_msg grep -q "a configured route has the subnet's prefix or the address's own" <<<"$err"
check ctl_addr_over_configured_route_kept grep -q '^10.0.8.0/24 via 10.0.1.2' <<<"$(ctl show routes 10.0.8.0/24)"
ctl route del 10.0.8.0/24 >/dev/null
# A gateway whose port was found from its subnet follows the subnet to another port.
ctl addr add 10.0.6.1/24 dev sim1 >/dev/null
ctl route add 45.0.0.0/8 via 10.0.6.2 >/dev/null
ctl addr del 10.0.6.1 dev sim1 >/dev/null
ctl addr add 10.0.6.1/24 dev sim0 >/dev/null
check ctl_gateway_follows_subnet grep -q '^45.0.0.0/8 via 10.0.6.2 dev sim0' <<<"$(ctl show routes 45.1.1.1)"
ctl route del 45.0.0.0/8 >/dev/null
ctl addr del 10.0.6.1 dev sim0 >/dev/null
# ... to the longest subnet that holds it, as the FIB would: a wider one on another port does not take it
ctl route add 45.0.0.0/8 via 10.0.1.9 >/dev/null
ctl addr add 10.200.0.1/8 dev sim0 >/dev/null
check ctl_gateway_longest_subnet grep -q '^45.0.0.0/8 via 10.0.1.9 dev sim1' <<<"$(ctl show routes 45.1.1.1)"
ctl route del 45.0.0.0/8 >/dev/null
ctl addr del 10.200.0.1 dev sim0 >/dev/null
# ... nor one for the address itself, in a subnet the port already has
ctl route add 10.0.1.5/32 via 10.0.1.2 >/dev/null
err=$(ctl addr add 10.0.1.5/24 dev sim1 2>&1); rc=$?
check ctl_addr_over_configured_host_route_refused [ "$rc" -eq 1 ]
check ctl_addr_over_configured_host_route_kept grep -q '^10.0.1.5/32 via 10.0.1.2' <<<"$(ctl show routes 10.0.1.5/32)"
ctl route del 10.0.1.5/32 >/dev/null
check ctl_neigh_add ctl neigh add 10.0.1.7 lladdr 02:00:00:00:01:07 dev sim1
check ctl_neigh_static grep -q '^10.0.1.7 dev sim1 lladdr 02:00:00:00:01:07 static' <<<"$(ctl show neigh)"
check ctl_neigh_del ctl neigh del 10.0.1.7 dev sim1
check ctl_neigh_gone sh -c "! \"$RXPATH\" ctl --socket \"$SOCK\" show neigh | grep -q 10.0.1.7"
# An address's own host route is the address's: no route add or del replaces it.
err=$(ctl route del 10.0.1.1/32 2>&1)
check ctl_local_route_not_deleted grep -q "host route of one of the router's own addresses" <<<"$err"
err=$(ctl route add 10.0.1.1/32 blackhole 2>&1)
check ctl_local_route_not_replaced grep -q "host route of one of the router's own addresses" <<<"$err"
check ctl_local_route_kept grep -q '^10.0.1.1/32 local' <<<"$(ctl show routes 10.0.1.1/32)"
# ... and its connected route too: refused, unless said again as it is (Linux: File exists)
err=$(ctl route add 10.0.1.0/24 via 198.18.0.1 2>&1)
check ctl_connected_route_not_replaced grep -q "connected route of one of the router's addresses" <<<"$err"
err=$(ctl route del 10.0.1.0/24 2>&1)
check ctl_connected_route_not_deleted grep -q "connected route of one of the router's addresses" <<<"$err"
check ctl_connected_route_said_again ctl route add 10.0.1.0/24 dev sim1
check ctl_connected_route_kept grep -q '^10.0.1.0/24 dev sim1 connected' <<<"$(ctl show routes 10.0.1.0/24)"
# "default", as ip route says it
check ctl_route_default ctl route add default via 10.0.1.2
check ctl_route_default_shown grep -q '^0.0.0.0/0 via 10.0.1.2' <<<"$(ctl show routes 0.0.0.0/0)"
check ctl_route_default_del ctl route del default
# route del with via/dev, as ip route takes it: only the route that has them goes
ctl route add 42.0.0.0/8 via 10.0.1.2 >/dev/null
err=$(ctl route del 42.0.0.0/8 via 10.0.1.9 2>&1); rc=$?
check ctl_route_del_other_gateway_refused [ $rc -ne 0 ]
check ctl_route_del_other_gateway_says_which grep -q 'is via 10.0.1.2 dev sim1; nothing deleted' <<<"$err"
check ctl_route_del_other_gateway_kept grep -q '^42.0.0.0/8 via 10.0.1.2' <<<"$(ctl show routes 42.0.0.0/8)"
check ctl_route_del_via_dev ctl route del 42.0.0.0/8 via 10.0.1.2 dev sim1
check ctl_route_del_via_dev_gone [ -z "$(ctl show routes 42.0.0.0/8 | grep '^42.0.0.0/8')" ]
# A prefix names its route: the host bits of 41.7.0.0/8 are not part of it.
check ctl_route_host_bits ctl route add 41.7.0.0/8 via 10.0.1.2
check ctl_route_host_bits_masked grep -q '^41.0.0.0/8 via 10.0.1.2' <<<"$(ctl show routes 41.0.0.0/8)"
check ctl_route_host_bits_del ctl route del 41.0.0.0/8

# Reports.
check ctl_show_drops grep -q '^  ip4_bad_checksum' <<<"$(ctl show drops)"
check ctl_show_stats_batch grep -q 'port sim0 queue 0: .*avg_batch' <<<"$(ctl show stats)"
check ctl_show_pool grep -q 'buffers x 1664 B' <<<"$(ctl show pool)"
check ctl_json_all sh -c "for w in ports stats drops routes neigh pool; do \"$RXPATH\" ctl --socket \"$SOCK\" --json show \$w | python3 -c 'import json,sys; json.load(sys.stdin)' || exit 1; done"

# Clients that connect and stall hold up the others little: 4 of them cost one request
# 1 s at most (each had 2 s of the control thread).
python3 - "$SOCK" <<'PY' &
import socket, sys, time
held = []
for _ in range(4):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(b"text sh")
    held.append(s)
time.sleep(4)
PY
stall_pid=$!
sleep 0.2
t0=$(date +%s%N); ctl show pool >/dev/null; t1=$(date +%s%N)
check ctl_stalled_clients_cost_little [ $(( (t1 - t0) / 1000000 )) -lt 1500 ]
kill $stall_pid 2>/dev/null; wait $stall_pid 2>/dev/null

# Errors: exit status 1, the word and what was expected; nothing changes.
err=$(ctl route add 16.6.0.0/16 via 10.7.2.2 2>&1); rc=$?
check ctl_err_unreachable_gw [ "$rc" -eq 1 ]
check ctl_err_unreachable_gw_msg grep -q "no interface has an address on the gateway's subnet" <<<"$err"
check ctl_err_not_added grep -q '^16.0.0.0/8' <<<"$(ctl show routes 16.6.0.1)"
# a gateway the router would ask the link for itself or for everyone: refused, as Linux does
for gw in 10.0.1.1 10.0.1.255 10.0.1.0 224.0.0.5 127.0.0.1; do
	err=$(ctl route add 16.6.0.0/16 via $gw 2>&1)
	check ctl_err_gateway_$gw grep -q "not an address a next hop can have" <<<"$err"
done
# "default" is IPv6's when the gateway is, whichever word comes first
check ctl_route_default6_dev_first ctl route add default dev sim1 via fe80::1
check ctl_route_default6_shown grep -q '^::/0 via fe80::1 dev sim1' <<<"$(ctl show routes ::/0)"
check ctl_route_default6_del ctl route del ::/0
err=$(ctl route add 16.6.0.0/33 via 10.0.1.2 2>&1)
check ctl_err_bad_prefix grep -q "'16.6.0.0/33': expected a prefix" <<<"$err"
err=$(ctl bogus 2>&1); rc=$?
check ctl_err_unknown_command_status [ "$rc" -eq 1 ]
check ctl_err_unknown_command grep -q "'bogus': expected a command" <<<"$err"
err=$(ctl port add p9 sim 2>&1)
check ctl_err_port_add grep -q 'ports are set up when rxpath starts' <<<"$err"
err=$(ctl show nonsense 2>&1)
check ctl_err_show grep -q "'nonsense': expected ports, stats" <<<"$err"
err=$(ctl --json route del 99.0.0.0/8)
check ctl_err_json grep -q '"error":' <<<"$err"
err=$("$RXPATH" ctl --socket "$TMP/none.sock" show stats 2>&1); rc=$?
check ctl_err_no_socket_status [ "$rc" -eq 1 ]
check ctl_err_no_socket grep -q 'no rxpath is answering' <<<"$err"

# SIGHUP: the file is read again and only the difference applied.
sed -i 's|^route add 17.0.0.0/8 via 10.0.1.2|route add 17.0.0.0/8 via 10.0.1.9|; /^route add 18.0.0.0\/8/d' "$TMP/router.conf"
echo 'route add 41.0.0.0/8 via 10.0.1.2' >>"$TMP/router.conf"
reload
check reload_changed_route grep -q '^17.0.0.0/8 via 10.0.1.9' <<<"$(ctl show routes 17.1.1.1)"
check reload_removed_route grep -q 'no route to 18.1.1.1' <<<"$(ctl show routes 18.1.1.1)"
check reload_added_route grep -q '^41.0.0.0/8 via 10.0.1.2' <<<"$(ctl show routes 41.1.1.1)"
check reload_kept_other grep -q '^19.0.0.0/8 via 10.0.1.2' <<<"$(ctl show routes 19.1.1.1)"
check reload_reported grep -q 'reload: 3 changes applied' "$TMP/run.err"
# a setting: taken at runtime, shown, and back to its default when it leaves the file
check redirects_set_ctl ctl port set sim0 redirects off
check redirects_off_shown grep -q 'mtu [0-9]*, redirects off' <<<"$(ctl show ports)"
echo 'port set sim0 redirects off' >>"$TMP/router.conf"
reload
check redirects_off_after_reload grep -q 'redirects off' <<<"$(ctl show ports)"
sed -i '/^port set sim0 redirects off/d' "$TMP/router.conf"
reload
check redirects_default_when_gone_from_file bash -c '! grep -q "redirects off" <<<"$1"' _ "$(ctl show ports)"
# so does an MTU: the port's default again (1500), not the last value set
echo 'port set sim0 mtu 1400' >>"$TMP/router.conf"
reload
check mtu_after_reload grep -q 'mtu 1400' <<<"$(ctl show ports | grep -A1 '^sim0:')"
sed -i '/^port set sim0 mtu 1400/d' "$TMP/router.conf"
reload
check mtu_default_when_gone_from_file grep -q 'mtu 1500' <<<"$(ctl show ports | grep -A1 '^sim0:')"
# an address's connected route said again in the file, then gone from it: the route stays, nothing fails
echo 'route add 10.0.1.0/24 dev sim1' >>"$TMP/router.conf"
reload
sed -i '/^route add 10.0.1.0\/24 dev sim1/d' "$TMP/router.conf"
reload
check reload_connected_route_stays grep -q '^10.0.1.0/24 dev sim1 connected' <<<"$(ctl show routes 10.0.1.0/24)"
check reload_connected_route_no_failure bash -c '! grep -q "reload: .*failed" "$1"' _ "$TMP/run.err"
check ra_set_ctl ctl port set sim1 ra on
check ra_on_shown grep -q 'router advertisements on' <<<"$(ctl show ports)"
check ra_off_ctl ctl port set sim1 ra off
check ra_off_not_shown bash -c '! grep -q "router advertisements on" <<<"$1"' _ "$(ctl show ports)"
err=$(ctl port set sim0 redirects maybe 2>&1)
check redirects_bad_value grep -q "'maybe': expected 'on' or 'off' after 'redirects'" <<<"$err"
# A route the file no longer has goes at reload even when ctl changed its gateway since
echo 'route add 46.0.0.0/8 via 10.0.1.2' >>"$TMP/router.conf"
reload
ctl route add 46.0.0.0/8 via 10.0.1.9 >/dev/null
sed -i '/^route add 46.0.0.0/d' "$TMP/router.conf"
reload
check reload_route_changed_by_ctl_removed bash -c '! grep -q "^46.0.0.0/8" <<<"$1"' _ "$(ctl show routes 46.0.0.0/8)"
# A line that parses but cannot be applied yet (its gateway's subnet is not there) is
# reported, nothing changes, and the next reload, when the address it needs has come, takes both.
echo 'route add 43.0.0.0/8 via 10.0.77.1' >>"$TMP/router.conf"
reload
check reload_failed_reported grep -q "no interface has an address on the gateway's subnet" "$TMP/run.err"
echo 'addr add 10.0.77.254/24 dev sim1' >>"$TMP/router.conf"
reload
check reload_failed_retried grep -q '^43.0.0.0/8 via 10.0.77.1' <<<"$(ctl show routes 43.1.1.1)"
sed -i '/^route add 43.0.0.0\/8/d; /^addr add 10.0.77.254/d' "$TMP/router.conf"
reload
# A file that cannot be applied whole changes nothing: an address added before the line that
# fails is taken back, and the log says so.
printf 'addr add 10.0.78.1/24 dev sim1\nroute add 44.0.0.0/8 via 10.0.79.1\n' >>"$TMP/router.conf"
reload
check reload_apply_error_nothing_changed grep -q 'reload: nothing changed' "$TMP/run.err"
check reload_apply_error_address_taken_back bash -c '! grep -q 10.0.78.1 <<<"$1"' _ "$(ctl show ports)"
sed -i '/^addr add 10.0.78.1/d; /^route add 44.0.0.0/d' "$TMP/router.conf"
reload
# The same for a `sync kernel` that cannot start (these sim ports have no kernel interface).
n_nothing=$(grep -c 'nothing changed' "$TMP/run.err")
printf 'addr add 10.0.78.1/24 dev sim1\nsync kernel\n' >>"$TMP/router.conf"
reload
check reload_sync_error_nothing_changed [ "$(grep -c 'nothing changed' "$TMP/run.err")" -gt "$n_nothing" ]
check reload_sync_error_says_why grep -q 'sync kernel: no port is on a kernel interface' "$TMP/run.err"
check reload_sync_error_address_not_added bash -c '! grep -q 10.0.78.1 <<<"$1"' _ "$(ctl show ports)"
sed -i '/^addr add 10.0.78.1/d; /^sync kernel$/d' "$TMP/router.conf"
reload
# What a failed reload takes back is put back as it ran, ctl's changes included, not as the
# previous file said: 16/8 was moved to 10.0.1.5 by ctl, and stays there.
ctl route add 16.0.0.0/8 via 10.0.1.5 >/dev/null
sed -i 's|^route add 16.0.0.0/8 via 10.0.1.2|route add 16.0.0.0/8 via 10.0.1.4|' "$TMP/router.conf"
echo 'route add 44.0.0.0/8 via 10.0.79.1' >>"$TMP/router.conf"
reload
check reload_failed_puts_back_running grep -q '^16.0.0.0/8 via 10.0.1.5' <<<"$(ctl show routes 16.1.1.1)"
sed -i 's|^route add 16.0.0.0/8 via 10.0.1.4|route add 16.0.0.0/8 via 10.0.1.2|; /^route add 44.0.0.0/d' "$TMP/router.conf"
ctl route add 16.0.0.0/8 via 10.0.1.2 >/dev/null
# What ctl did already is as the file wants: a route ctl deleted leaving the file, an address
# ctl added coming into it, and the reload goes through.
ctl route del 19.0.0.0/8 >/dev/null
sed -i '/^route add 19.0.0.0\/8/d' "$TMP/router.conf"
ctl addr add 10.0.88.1/24 dev sim1 >/dev/null
echo 'addr add 10.0.88.1/24 dev sim1' >>"$TMP/router.conf"
cp "$TMP/run.err" "$TMP/run.err.before"
reload
check reload_after_ctl_goes_through bash -c 'diff "$1" "$2" | grep -q "reload: 2 changes applied"' _ "$TMP/run.err.before" "$TMP/run.err"
check reload_after_ctl_address_kept grep -q 'inet 10.0.88.1/24' <<<"$(ctl show ports)"
# A changed line that fails leaves the route as it was, and removing the line later removes it.
sed -i 's|^route add 17.0.0.0/8 via 10.0.1.9|route add 17.0.0.0/8 via 10.0.77.1|' "$TMP/router.conf"
reload
check reload_failed_change_keeps_old grep -q '^17.0.0.0/8 via 10.0.1.9' <<<"$(ctl show routes 17.1.1.1)"
sed -i '/^route add 17.0.0.0\/8/d' "$TMP/router.conf"
reload
check reload_failed_change_then_removed grep -q 'no route to 17.1.1.1' <<<"$(ctl show routes 17.1.1.1)"
# A bad line: rejected with its line number, nothing changes.
echo 'route add 42.0.0.0/8 bogus' >>"$TMP/router.conf"
reload
line=$(wc -l <"$TMP/router.conf")
check reload_bad_line grep -q "router.conf:$line: 'bogus'.*nothing changed" "$TMP/run.err"
check reload_bad_line_changes_nothing grep -q 'no route to 42.1.1.1' <<<"$(ctl show routes 42.1.1.1)"

kill -TERM $pid
wait $pid; rc=$?
check ctl_run_exits_0 [ "$rc" -eq 0 ]
check ctl_socket_removed [ ! -e "$SOCK" ]

# --ctl naming a file that is not a socket: refused, the file left alone
echo precious >"$TMP/notes.txt"
err=$("$RXPATH" run -e 'port add p0 sim:count=1' --ctl "$TMP/notes.txt" 2>&1)
check ctl_path_not_a_socket grep -q 'a file that is not a socket is there' <<<"$err"
check ctl_path_file_kept grep -q precious "$TMP/notes.txt"
# port names are plain: they go into JSON, metrics labels and shell commands
err=$("$RXPATH" run -e 'port add x"y sim' 2>&1)
check port_name_plain grep -q "only letters, digits" <<<"$err"
check ctl_run_buffers_accounted grep -q 'buffers: all [0-9]* accounted for' "$TMP/run.out"

# An explicit socket that cannot be made is an error; a live one is not taken over.
"$RXPATH" run --ctl "$TMP/no/such/dir/x.sock" -e 'port add p0 sim:count=10' -i 0 >/dev/null 2>"$TMP/e1"; rc=$?
check ctl_bad_path_fails sh -c "[ $rc -eq 1 ] && grep -q 'control socket' '$TMP/e1'"
"$RXPATH" run --ctl "$SOCK" -e 'port add p0 sim' -i 0 -d 5 >/dev/null 2>&1 &
pid=$!
wait_ctl
"$RXPATH" run --ctl "$SOCK" -e 'port add p0 sim:count=10' -i 0 >/dev/null 2>"$TMP/e2"; rc=$?
check ctl_live_socket_kept sh -c "[ $rc -eq 1 ] && grep -q 'another rxpath is answering' '$TMP/e2'"
check ctl_first_still_answers sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show pool >/dev/null"
kill -TERM $pid; wait $pid

# The metrics endpoint and show stats read the same counters: a scrape taken
# between two 'show stats' lies between them, counter by counter.
"$RXPATH" run -c examples/router.conf --ctl "$SOCK" --metrics 127.0.0.1:0 -i 0 -d 120 \
	>/dev/null 2>"$TMP/m.err" &
pid=$!
wait_ctl
url=$(grep -o 'http://[^ ]*/metrics' "$TMP/m.err")
ctl --json show stats >"$TMP/a.json"
curl -s "$url" >"$TMP/m.txt"
ctl --json show stats >"$TMP/b.json"
check ctl_metrics_match_show_stats python3 - "$TMP/a.json" "$TMP/m.txt" "$TMP/b.json" <<'PY'
import json, re, sys
a, b = (json.load(open(p)) for p in (sys.argv[1], sys.argv[3]))
m = {}
for line in open(sys.argv[2]):
    if line.startswith("#") or not line.strip():
        continue
    name, value = line.rsplit(" ", 1)
    m[name] = float(value)
def between(metric, x, y):
    v = m[metric]
    assert x <= v <= y, (metric, x, v, y)
checked = 0
for qa, qb in zip(a["queues"], b["queues"]):
    lab = '{port="%s",queue="%d"}' % (qa["port"], qa["queue"])
    for f in ("rx_packets", "rx_bytes", "rx_dropped", "tx_packets", "tx_bytes"):
        between("rxpath_%s_total%s" % (f, lab), qa[f], qb[f])
        checked += 1
for f, metric in (("forwarded", "forwarded_packets"), ("icmp_errors", "icmp_errors")):
    between("rxpath_%s_total" % metric, a["stack"][f], b["stack"][f])
    checked += 1
assert checked == 12, checked
PY
kill -TERM $pid; wait $pid

# Capture of drops: pcapng that tshark reads, each packet's drop reason in its comment.
"$RXPATH" run -c examples/router.conf --ctl "$SOCK" -i 0 -d 120 >/dev/null 2>"$TMP/cap.err" &
pid=$!
wait_ctl
check capture_start ctl capture start drop "$TMP/drops.pcapng" count 300
err=$(ctl capture start rx "$TMP/other.pcapng" 2>&1)
check capture_one_at_a_time grep -q 'is running' <<<"$err"
sleep 0.5
out=$(ctl capture stop)
check capture_stop_counts grep -q '^capture stopped: 300 packets written' <<<"$out"
err=$(ctl capture start sideways "$TMP/x.pcapng" 2>&1)
check capture_bad_point grep -q "'sideways': expected rx, tx, drop" <<<"$err"
err=$(ctl capture start rx "$TMP/x.pcapng" filter 'udp port' 2>&1)
check capture_bad_filter grep -qi 'filter' <<<"$err"
err=$(ctl capture start rx "$TMP/x.pcapng" count 0 2>&1)
check capture_bad_count grep -q "count '0': expected a number of packets, 1 or more" <<<"$err"
check capture_filtered ctl capture start rx "$TMP/rx.pcapng" dev sim0 count 50 filter tcp
sleep 0.3
ctl capture stop >/dev/null
# Out of file descriptors (its soft limit at the lowest free one): a client is turned away with
# the reason (and the log says it once), and it serves again once there is room.
if command -v prlimit >/dev/null; then
	nofile=$(prlimit --pid $pid --nofile --output SOFT,HARD --noheadings | tr -s ' ' | sed 's/^ //')
	free_fd=$(ls /proc/$pid/fd | sort -n | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
	prlimit --pid $pid --nofile="$free_fd:${nofile#* }"
	err=$(timeout 5 "$RXPATH" ctl --socket "$SOCK" show pool 2>&1); rc=$?
	check ctl_no_fds_turned_away [ $rc -eq 1 ]
	check ctl_no_fds_says_why grep -q 'out of file descriptors' <<<"$err"
	check ctl_no_fds_logged grep -q 'control socket: cannot accept a client: Too many open files' "$TMP/cap.err"
	prlimit --pid $pid --nofile="$(tr ' ' ':' <<<"$nofile")"
	check ctl_serves_again sh -c "\"$RXPATH\" ctl --socket \"$SOCK\" show pool >/dev/null"
fi
kill -TERM $pid; wait $pid
if [ -x /usr/bin/tshark ]; then
	reasons=$(tshark -r "$TMP/drops.pcapng" -T fields -e frame.comment 2>/dev/null | sort -u)
	check capture_tshark_reads [ "$(tshark -r "$TMP/drops.pcapng" 2>/dev/null | wc -l)" -eq 300 ]
	check capture_reason_checksum grep -qx 'ip4_bad_checksum' <<<"$reasons"
	check capture_reason_no_route grep -qx 'no_route' <<<"$reasons"
	# a frame under ip4_bad_checksum really has a bad IPv4 header checksum
	bad=$(tshark -r "$TMP/drops.pcapng" -o ip.check_checksum:TRUE -Y 'frame.comment == "ip4_bad_checksum"' \
		-T fields -e ip.checksum.status 2>/dev/null | sort -u)
	check capture_checksum_really_bad [ "$bad" = 0 ]
	check capture_filter_tcp_only [ "$(tshark -r "$TMP/rx.pcapng" -Y '!tcp' 2>/dev/null | wc -l)" -eq 0 ]
	check capture_count_50 [ "$(tshark -r "$TMP/rx.pcapng" 2>/dev/null | wc -l)" -eq 50 ]
else
	echo "SKIP capture_tshark: tshark is not installed (apt-get install tshark)"
fi

# An MTU lowered while forwarding holds at once, for packets already on the
# fast path too: 1000-byte frames with DF set through a link cut to 576
# bytes are all dropped as frag_needed from then on.
sed 's/^port add sim0 .*/port add sim0 sim:proto=udp4,size=1000,flows=64,dst4=16.0.0.0\/4/' \
	examples/router.conf >"$TMP/mtu.conf"
"$RXPATH" run -c "$TMP/mtu.conf" --ctl "$SOCK" --interval 0 --duration 300 >/dev/null 2>&1 &
pid=$!
wait_ctl
stats() {
	echo "$(ctl --json show stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["stack"]["forwarded"])')" \
	     "$(ctl --json show drops | python3 -c 'import json,sys; print(sum(r["packets"] for r in json.load(sys.stdin)["reasons"] if r["reason"] == "frag_needed"))')"
}
out=$(ctl port set sim1 mtu 576 2>&1); rc=$?
check mtu_set_while_forwarding [ "$rc" -eq 0 ]
# taken, and the warning reaches whoever asked, not only the log
check mtu_below_1280_warns_the_asker grep -q "warning: ctl: mtu 576 is below the 1280 bytes every IPv6 link carries" <<<"$out"
check mtu_below_1280_warns_in_json grep -q '"ok":true,"warning":"warning: ctl: mtu 577' <<<"$(ctl --json port set sim1 mtu 577)"
ctl port set sim1 mtu 576 >/dev/null
read -r f0 d0 <<<"$(stats)"
sleep 0.5
read -r f1 d1 <<<"$(stats)"
kill -TERM $pid; wait $pid
if [ "$f1" -eq "$f0" ] && [ "$d1" -gt "$d0" ]; then
	pass mtu_lowered_holds_on_the_fast_path
else
	fail mtu_lowered_holds_on_the_fast_path "after 'port set sim1 mtu 576': forwarded $f0 -> $f1, frag_needed $d0 -> $d1"
fi

# A VLAN sub-port's addresses are shown with it, as a port's are.
"$RXPATH" run --ctl "$SOCK" -e 'port add p0 sim' -e 'port add p0.7 vlan:parent=p0,id=7' \
	-e 'addr add 10.0.7.1/24 dev p0.7' -i 0 -d 30 >/dev/null 2>&1 &
pid=$!
wait_ctl
out=$(ctl show ports)
check ctl_show_ports_vlan_addresses grep -A1 -q '^p0.7: vlan 7 on p0' <<<"$out"
check ctl_show_ports_vlan_inet grep -q '^    inet 10.0.7.1/24' <<<"$(sed -n '/^p0.7:/,$p' <<<"$out")"
# its MTU is held to its port's while that is lower, and comes back with it
ctl port set p0.7 mtu 1500 >/dev/null
ctl port set p0 mtu 1400 >/dev/null
check ctl_vlan_mtu_held grep -q '^p0.7: vlan 7 on p0, mtu 1400' <<<"$(ctl show ports)"
ctl port set p0 mtu 1500 >/dev/null
check ctl_vlan_mtu_back grep -q '^p0.7: vlan 7 on p0, mtu 1500' <<<"$(ctl show ports)"
kill -TERM $pid; wait $pid

# A receive sink whose file gains an address and settings becomes a router with all of them
# at the reload (the settings used to turn the whole reload down, and silently) ...
for lines in 'addr add 10.0.1.1/24 dev p0\nicmp ratelimit 100\nport set p0 mtu 1400\n' \
	     'port set p0 mtu 1400\naddr add 10.0.1.1/24 dev p0\nroute add 10.9.0.0/16 via 10.7.7.7\n'; do
	printf 'port add p0 sim:rx=off\nport add p1 sim:proto=udp4\n' >"$TMP/sink.conf"
	"$RXPATH" run -c "$TMP/sink.conf" --ctl "$SOCK" -i 0 -d 30 >/dev/null 2>"$TMP/sink.err" &
	pid=$!
	wait_ctl
	printf "$lines" >>"$TMP/sink.conf"
	reload "$TMP/sink.err"
	if grep -q 10.7.7.7 "$TMP/sink.conf"; then
		# ... and one whose reload fails stays a sink
		check reload_failed_sink_stays_sink grep -q 'runs as a receive sink' <<<"$(ctl show routes)"
	else
		check reload_sink_becomes_router grep -q '^10.0.1.0/24 dev p0 connected' <<<"$(ctl show routes 10.0.1.0/24)"
		check reload_sink_settings_applied grep -q 'mtu 1400' <<<"$(ctl show ports | grep -A1 '^p0:')"
	fi
	kill -TERM $pid; wait $pid
done

# A receive sink stays one when the change that would have made it a router fails.
SINK_SOCK=$TMP/sink.sock
"$RXPATH" run -e 'port add p0 sim' --ctl "$SINK_SOCK" --interval 0 --duration 30 >/dev/null 2>&1 &
sink_pid=$!
for _ in $(seq 50); do "$RXPATH" ctl --socket "$SINK_SOCK" show pool >/dev/null 2>&1 && break; sleep 0.1; done
sink_stats() { "$RXPATH" ctl --socket "$SINK_SOCK" --json show stats | python3 -c 'import json,sys; s=json.load(sys.stdin)["stack"]; print(sum(s["delivered"].values()), s["dropped"])'; }
check sink_bad_addr_refused sh -c "! \"$RXPATH\" ctl --socket \"$SINK_SOCK\" addr add 127.0.0.1/8 dev p0 2>/dev/null"
read -r d0 _ <<<"$(sink_stats)"
sleep 0.3
read -r d1 x1 <<<"$(sink_stats)"
check sink_still_delivers [ "$d1" -gt "$d0" -a "$x1" -eq 0 ]
kill -TERM $sink_pid
wait $sink_pid
check sink_exits_0 [ $? -eq 0 ]

# A pcap record captured short (its frame is not all there) is received and dropped as
# capture_truncated, by port; nothing is "not received".
python3 - "$TMP/short.pcap" <<'PY'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 0, 0, 60, 100) + bytes(60))
PY
LOST_SOCK=$TMP/lost.sock
"$RXPATH" run -e "port add p0 pcap:in=$TMP/short.pcap" -e 'port add p1 sim' -e 'addr add 10.0.0.1/24 dev p0' \
	--ctl "$LOST_SOCK" --interval 0 --duration 30 >/dev/null 2>&1 &
lost_pid=$!
for _ in $(seq 50); do "$RXPATH" ctl --socket "$LOST_SOCK" show pool >/dev/null 2>&1 && break; sleep 0.1; done
out=$("$RXPATH" ctl --socket "$LOST_SOCK" show drops)
check drops_capture_truncated_listed grep -Eq '^  capture_truncated +1 ' <<<"$out"
check drops_capture_truncated_json python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["not_received"] == [], j["not_received"]
r = [d for d in j["reasons"] if d["reason"] == "capture_truncated"]
assert r and r[0]["ports"] == {"p0": 1}, j["reasons"]
' "$("$RXPATH" ctl --socket "$LOST_SOCK" --json show drops)"
kill -TERM $lost_pid
wait $lost_pid
