#!/usr/bin/env bash
# rxpath run: the main job, finite sources, JSON output, config errors.
set -u
. "$(dirname "$0")/lib.sh"

# The README's main job: two sim ports, live lines, a summary, every buffer back.
out=$("$RXPATH" run --duration 1.2 --interval 0.5 2>&1); rc=$?
check run_default_exits_0 [ "$rc" -eq 0 ]
check run_default_live_lines [ "$(grep -c ' s  sim[01] .*rx .*pps.*bit/s.*drop' <<<"$out")" -ge 4 ]
check run_default_summary_drops grep -q 'ip4_bad_checksum' <<<"$out"
check run_default_buffers_accounted grep -q 'buffers: all [0-9]* accounted for' <<<"$out"

# A finite source ends the run by itself; the counters add up.
json=$("$RXPATH" run --json -i 0 -e 'port add p0 sim:proto=udp4+tcp6,count=100000,bad=2'); rc=$?
check run_finite_exits_0 [ "$rc" -eq 0 ]
summary=$(grep '"event":"summary"' <<<"$json")
check run_json_buffers_line grep -qE '^\{"event":"buffers","total":[1-9][0-9]*,"unaccounted":0\}$' <<<"$json"
check run_finite_counts python3 - "$summary" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
p = s["ports"][0]
delivered = sum(s["delivered"].values())
dropped = sum(s["drops"].values())
assert p["rx_packets"] == 100000, p
assert delivered + dropped == 100000, (delivered, dropped)
assert p["rx_dropped"] == dropped
assert s["delivered"]["udp4"] > 0 and s["delivered"]["tcp6"] > 0
# 2% malformed, spread over 15 kinds: each kind shows up under its reason
kinds = ["eth_truncated", "eth_not_for_us", "eth_unknown_type", "vlan_unknown", "ip4_truncated",
         "ip4_bad_version", "ip4_bad_ihl", "ip4_bad_checksum", "ip4_bad_length", "ip6_truncated",
         "ip6_bad_version", "ip6_bad_length", "l4_truncated", "udp_bad_length", "tcp_bad_offset"]
assert all(s["drops"][k] > 0 for k in kinds), s["drops"]
assert p["drops"] == {k: v for k, v in s["drops"].items() if v}, p["drops"]
assert abs(dropped - 2000) <= 40, dropped  # within 2% of the share asked for
PY

# A run ended by --duration counts what still waited for a neighbour (a
# gateway nobody answers) as stopped, unanswered: per port, frames in =
# forwarded + delivered + dropped.
json=$("$RXPATH" run --json -i 0 -d 0.5 --ctl none -e 'port add p0 sim:proto=udp4,dst4=10.9.0.0/16,flows=16' \
	-e "port add p1 pcap:out=$TMP/held.pcap" -e 'addr add 198.18.255.254/16 dev p0' \
	-e 'addr add 10.0.2.1/24 dev p1' -e 'route add 10.9.0.0/16 via 10.0.2.2' 2>/dev/null)
summary=$(grep '"event":"summary"' <<<"$json")
check run_duration_end_counts_held python3 - "$summary" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
p = s["ports"][0]
assert p["rx_packets"] > 0, p
assert p["rx_dropped"] == p["rx_packets"] == sum(p["drops"].values()), p
assert p["drops"].get("stopped", 0) >= 1, p["drops"]
assert s["icmp_errors"] == 0, s["icmp_errors"]  # the neighbour did not fail: the run stopped
PY

# Every technique off still delivers the same traffic.
out=$("$RXPATH" run -i 0 --handoff packet --copy --prefetch 0 --rx-offset 0 --buffers page \
	-e 'port add p0 sim:count=50000,size=1500' 2>&1); rc=$?
check run_all_off_works [ "$rc" -eq 0 ]
check run_all_off_delivers grep -q 'delivered 50,000 packets' <<<"$out"
check run_all_off_reports_settings grep -q 'per-packet handoff, copy mode, prefetch 0 lines' <<<"$out"

# Bad input: named, non-zero exit, nothing runs.
out=$("$RXPATH" run -e 'port add p0 sim:size=10' 2>&1); rc=$?
check run_bad_arg_exit [ "$rc" -ne 0 ]
check run_bad_arg_names_key grep -q 'size=10' <<<"$out"
check run_bad_arg_nothing_ran bash -c '! grep -q summary <<<"$1"' _ "$out"

printf 'port add p0 sim:count=10\n# comment\nport ad p1 sim\n' >"$TMP/bad.conf"
out=$("$RXPATH" run -c "$TMP/bad.conf" 2>&1); rc=$?
check run_bad_config_exit [ "$rc" -eq 2 ]
check run_bad_config_line_number grep -q 'bad.conf:3: .ad.: expected .add.' <<<"$out"

out=$("$RXPATH" run -e 'port add p0 nic:dev=eth0' 2>&1); rc=$?
check run_unknown_driver [ "$rc" -eq 2 ]
check run_unknown_driver_lists_drivers grep -q 'unknown driver (built in: sim' <<<"$out"

out=$("$RXPATH" run --prefetch 3 2>&1); rc=$?
check run_bad_option [ "$rc" -eq 2 ]
check run_bad_option_says_range grep -q -- '--prefetch 3: expected 0, 1 or 2' <<<"$out"

out=$("$RXPATH" run -e 'port add p0 sim:colour=red' 2>&1); rc=$?
check run_unknown_key [ "$rc" -ne 0 ]
check run_unknown_key_named grep -q "unknown argument 'colour'" <<<"$out"

# A pool too small for the ring (256): refills fall short and are counted; no buffer is lost.
out=$("$RXPATH" run -i 0 --pool 200 -e 'port add p0 sim:count=20000' 2>&1); rc=$?
check run_small_pool_exit_0 [ "$rc" -eq 0 ]
check run_small_pool_counts_short_refills grep -Eq 'refills short of buffers [1-9]' <<<"$out"
check run_small_pool_delivers_all grep -q 'delivered 20,000 packets' <<<"$out"

# The README's main job: routing between two sim ports from the shipped example.
out=$("$RXPATH" run -c examples/router.conf --duration 1 --interval 0.5 2>&1); rc=$?
check main_job_exits_0 [ "$rc" -eq 0 ]
check main_job_live_tx grep -Eq 'sim1 +rx +0 pps .* tx +[0-9.]+ [kM]pps' <<<"$out"
check main_job_forwards grep -Eq 'forwarded [0-9,]{9,} packets' <<<"$out"
check main_job_buffers_accounted grep -q 'buffers: all [0-9]* accounted for' <<<"$out"

# Router commands: errors name the line and the word; nothing runs.
printf 'port add p0 sim:count=10\naddr add 10.0.0.1/24 dev p0\nroute add 10.9.0.0/16 via 192.168.5.5\n' >"$TMP/gw.conf"
out=$("$RXPATH" run -c "$TMP/gw.conf" 2>&1); rc=$?
check router_unreachable_gateway_fails [ "$rc" -ne 0 ]
check router_unreachable_gateway_line grep -q 'gw.conf:3: no interface has an address on the gateway' <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'addr add 10.0.0.1/24 dev p9' 2>&1); rc=$?
check router_unknown_dev [ "$rc" -eq 2 ]
check router_unknown_dev_named grep -q "\-e 2: 'p9': no such port" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'addr add 10.0.0.300/24 dev p0' 2>&1); rc=$?
check router_bad_address grep -q "'10.0.0.300/24': expected an address with a prefix length" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'route add 10.9.0.0/16 gateway 10.0.0.2' 2>&1); rc=$?
check router_bad_route_word grep -q "'gateway': expected 'via GATEWAY' or 'dev PORT'" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'neigh add 10.0.0.2 lladdr ff:ff:ff:ff:ff:ff dev p0' 2>&1); rc=$?
check router_multicast_lladdr_refused grep -q "expected a unicast MAC address" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'neigh ageing 3' 2>&1); rc=$?
check router_neigh_ageing_range_exit [ "$rc" -eq 2 ]
check router_neigh_ageing_range grep -q "\-e 2: '3': expected seconds from 5 to 86400" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'route add 10.9.0.0/16 blackhole dev p0' 2>&1); rc=$?
check router_route_type_alone grep -q "\-e 2: 'blackhole': expected 'via GATEWAY' or 'dev PORT' (or alone, a type" <<<"$out"
printf 'port add p0 sim:count=10\naddr add 10.0.0.1/24 dev p0\nroute add 10.9.0.0/16 via 10.0.0.2\nroute del 10.9.0.0/16 via 10.0.0.3\n' >"$TMP/del.conf"
out=$("$RXPATH" run -c "$TMP/del.conf" 2>&1); rc=$?
check router_route_del_other_gateway_fails [ "$rc" -ne 0 ]
check router_route_del_other_gateway_line grep -q 'del.conf:4: the route to that prefix is via 10.0.0.2 dev p0; nothing deleted' <<<"$out"
out=$("$RXPATH" run -i 0 -e 'port add p0 sim:count=10' -e 'addr add 10.0.0.1/24 dev p0' \
	-e 'route add 10.9.0.0/16 via 10.0.0.2' -e 'route del 10.9.0.0/16 via 10.0.0.2 dev p0' 2>&1); rc=$?
check router_route_del_via_dev [ "$rc" -eq 0 ]
out=$("$RXPATH" run -e 'port add p0 sim' -e 'ip source-route maybe' 2>&1); rc=$?
check router_source_route_bad_word grep -q "\-e 2: 'maybe': expected 'ip source-route on|off'" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'port set p0 redirects of' 2>&1); rc=$?
check router_redirects_bad_word_exit [ "$rc" -eq 2 ]
check router_redirects_bad_word grep -q "\-e 2: 'of': expected 'on' or 'off' after 'redirects'" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'port add p0.5 vlan:parent=p9,id=5' 2>&1); rc=$?
check router_vlan_parent_unknown grep -q "parent=p9: no such port" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'port add p1 sim' -e 'addr add 2001:db8::1/64 dev p0' -e 'route add 2001:db8:9::/48 via fe80::1' 2>&1); rc=$?
check router_link_local_gateway_needs_dev grep -q -- "-e 4: a link-local gateway needs 'dev PORT'" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'port add p1 sim' -e 'addr add 10.0.1.1/24 dev p0' -e 'addr add 10.0.1.1/24 dev p1' 2>&1); rc=$?
check router_address_on_one_port_only grep -q -- "-e 4: already there" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 sim' -e 'addr add 224.0.0.1/24 dev p0' 2>&1); rc=$?
check router_multicast_address_refused grep -q -- "-e 2: not a unicast address" <<<"$out"
out=$("$RXPATH" run -e 'port add p0 vlanx' 2>&1); rc=$?
check port_vlanx_unknown_driver grep -q "'vlanx': unknown driver" <<<"$out"
printf '# ports\nport add p0 sim:bogus=1\n' >"$TMP/bogus.conf"
out=$("$RXPATH" run -c "$TMP/bogus.conf" 2>&1); rc=$?
check port_bad_driver_arg_has_line grep -q "bogus.conf:2: port p0: unknown argument 'bogus'" <<<"$out"
out=$("$RXPATH" run --max-frame 64 -e 'port add p0 sim' -e 'addr add 10.0.1.1/24 dev p0' 2>&1); rc=$?
check router_small_max_frame_refused grep -q -- "--max-frame 64 is too small for routing" <<<"$out"

# pcap ports: one port's out= never empties a file another port has open, and
# a write that fails (a full disk, a file size limit) fails the run.
"$RXPATH" run -e 'port add g sim:proto=udp4,count=300,dst4=10.9.0.0/16' -e 'port add c pcap:out='"$TMP/in.pcap" \
	-e 'addr add 10.0.1.1/24 dev c' -e 'neigh add 10.0.1.2 lladdr 02:00:00:00:00:22 dev c' \
	-e 'route add 10.9.0.0/16 via 10.0.1.2' --ctl none -i 0 >/dev/null 2>&1
size=$(stat -c %s "$TMP/in.pcap")
out=$("$RXPATH" run -e "port add p0 pcap:in=$TMP/in.pcap" -e "port add p1 pcap:out=$TMP/in.pcap" --ctl none -i 0 2>&1); rc=$?
check pcap_out_over_other_ports_file_refused grep -q "is a file port p0 has open; writing would destroy it" <<<"$out"
check pcap_other_ports_file_kept [ "$(stat -c %s "$TMP/in.pcap")" -eq "$size" ]
# a burst of 0 at a rate above 0 would let no error through: refused, naming the way to send none
out=$("$RXPATH" run -i 0 --ctl none -e 'port add p0 sim:count=1' -e 'icmp ratelimit 10 burst 0' 2>&1); rc=$?
check icmp_burst_0_refused grep -q "a burst of 0 lets no error through; 'icmp ratelimit 0' sends none" <<<"$out"
# a port's own MAC is one station's; two ports with one MAC are said
out=$("$RXPATH" run -i 0 --ctl none -e "port add p0 pcap:in=$TMP/in.pcap,mac=01:00:5e:00:00:01" 2>&1); rc=$?
check port_multicast_mac_refused grep -q "mac=01:00:5e:00:00:01: expected a unicast MAC address" <<<"$out"
out=$("$RXPATH" run -i 0 --ctl none -e "port add p0 pcap:in=$TMP/in.pcap" \
	-e "port add p1 pcap:in=$TMP/in.pcap,mac=02:00:00:00:00:01" 2>&1); rc=$?
check port_same_mac_warned grep -q "warning: ports p0 and p1 have the same MAC 02:00:00:00:00:01" <<<"$out"
# an in= file cut short mid-record: what came before is received, and the run says it did not read it all
python3 - "$TMP/cut.pcap" <<'PY'
import struct, sys
frame = bytes.fromhex("020000000001" "020000000011" "0800") + bytes(46)
rec = struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame
open(sys.argv[1], "wb").write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1) + rec + rec[:30])
PY
out=$("$RXPATH" run -i 0 --ctl none -e "port add p0 pcap:in=$TMP/cut.pcap" 2>&1); rc=$?
check pcap_in_read_error_exit_1 [ "$rc" -eq 1 ]
check pcap_in_read_error_said grep -q "a pcap in= file was not read to its end" <<<"$out"
check pcap_in_read_error_counted grep -q "rx_read_error 1" <<<"$out"
check pcap_in_read_error_frames_before_received grep -q "port p0 *rx 1 packets" <<<"$out"
# a command that cannot be applied stops the run before it starts: out= files as they were
rm -f "$TMP/never.pcap"
out=$("$RXPATH" run -e "port add p0 pcap:out=$TMP/in.pcap" -e "port add p1 pcap:out=$TMP/never.pcap" \
	-e 'port set p0 mtu 9000' --ctl none -i 0 2>&1); rc=$?
check pcap_out_failed_command_exit_1 [ "$rc" -eq 1 ]
check pcap_out_kept_on_failed_command [ "$(stat -c %s "$TMP/in.pcap")" -eq "$size" ]
check pcap_out_not_made_on_failed_command [ ! -e "$TMP/never.pcap" ]
cat >"$TMP/fwd.conf" <<EOT
port add p0 pcap:in=$TMP/in.pcap,mac=02:00:00:00:00:22
port add p1 pcap:out=$TMP/out.pcap,mac=02:00:00:00:00:02
addr add 10.0.1.1/24 dev p0
addr add 10.0.2.1/24 dev p1
neigh add 10.0.2.2 lladdr 02:00:00:00:00:33 dev p1
route add 10.9.0.0/16 via 10.0.2.2
EOT
out=$(trap '' XFSZ; ulimit -f 8; "$RXPATH" run -c "$TMP/fwd.conf" --ctl none -i 0 2>&1); rc=$?
check pcap_write_failure_said grep -q "pcap out=$TMP/out.pcap: write failed: File too large" <<<"$out"
check pcap_write_failure_exit_1 [ "$rc" -eq 1 ]
