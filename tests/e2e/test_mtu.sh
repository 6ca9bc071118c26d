# SPDX-License-Identifier: MIT
# A link narrower than Ethernet's 1500: r1 and h2 at MTU 1400. rxpath's p1
# takes its interface's MTU, so path MTU discovery works through it (IPv4
# Fragmentation Needed and IPv6 Packet Too Big naming 1400) instead of the
# kernel dropping the larger frames unseen; a configured MTU above the
# interface's is refused with the command that fixes it.
# Run as root: BUILD=build bash tests/e2e/test_mtu.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

lab_init
if ! lab_up; then
	fail "mtu_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
ip -n "$LAB_R" link set r1 mtu 1400 && ip -n "$LAB_H2" link set eth0 mtu 1400 ||
	{ fail "mtu_lab_narrow_link" "could not set MTU 1400 on r1 and h2's eth0"; exit 1; }

for DRIVER in afpacket afxdp; do
	D=mtu_$DRIVER
	sock=$LAB_DIR/ctl-$DRIVER.sock
	if ! lab_rxpath_start "$DRIVER" --ctl "$sock"; then
		fail "${D}_start" "rxpath did not start on $DRIVER ports"
		continue
	fi
	p1_mtu() { port_mtu p1; }
	port_mtu() {
		"$RXPATH" ctl --socket "$sock" --json show ports 2>&1 |
			lab_json "[p['mtu'] for p in j['ports'] if p['name'] == '$1'][0]" 2>&1
	}
	check "${D}_p1_takes_interface_mtu" [ "$(p1_mtu)" = 1400 ]
	check "${D}_p0_keeps_1500" [ "$(port_mtu p0)" = 1500 ]

	# a 1400-byte packet fits the narrow link; 1478 bytes get Fragmentation Needed with 1400
	out=$(lab_in "$LAB_H1" ping -n -c 1 -W 2 -M do -s 1372 10.0.2.2 2>&1)
	check "${D}_ping4_at_link_mtu" grep -q " 0% packet loss" <<<"$out"
	# flush what an earlier run may have learned, so that the error is what ping sees
	lab_in "$LAB_H1" ip route flush cache >/dev/null 2>&1
	out=$(lab_in "$LAB_H1" ping -n -c 1 -W 2 -M do -s 1450 10.0.2.2 2>&1)
	if grep -q "From 10.0.1.1 .*Frag needed and DF set (mtu = 1400)" <<<"$out"; then
		pass "${D}_ping4_frag_needed_1400"
	else
		fail "${D}_ping4_frag_needed_1400" "expected 'From 10.0.1.1 ... Frag needed and DF set (mtu = 1400)':" "$out"
	fi
	out=$(lab_in "$LAB_H1" ping -6 -n -c 1 -W 2 -s 1352 2001:db8:2::2 2>&1)
	check "${D}_ping6_at_link_mtu" grep -q " 0% packet loss" <<<"$out"
	out=$(lab_in "$LAB_H1" ping -6 -n -c 1 -W 2 -M do -s 1450 2001:db8:2::2 2>&1)
	if grep -qi "From 2001:db8:1::1 .*Packet too big: mtu=1400" <<<"$out"; then
		pass "${D}_ping6_packet_too_big_1400"
	else
		fail "${D}_ping6_packet_too_big_1400" "expected 'From 2001:db8:1::1 ... Packet too big: mtu=1400':" "$out"
	fi
	# the host learned the path MTU: its next large ping goes in fragments and arrives
	out=$(lab_in "$LAB_H1" ping -n -c 2 -i 0.3 -W 2 -s 1450 10.0.2.2 2>&1)
	check "${D}_ping4_after_pmtu" grep -q " 0% packet loss" <<<"$out"

	# the device's MTU changed under rxpath: p1, at its default, follows within a port check
	ip -n "$LAB_R" link set r1 mtu 1300
	sleep 0.5
	check "${D}_follows_device_mtu" [ "$(p1_mtu)" = 1300 ]
	check "${D}_follow_said" grep -q "port p1: the MTU of r1 went from 1400 to 1300; p1 follows: mtu 1300" "$LAB_DIR/rxpath.err"
	ip -n "$LAB_R" link set r1 mtu 1400
	sleep 0.5
	check "${D}_follows_device_mtu_back" [ "$(p1_mtu)" = 1400 ]

	out=$("$RXPATH" ctl --socket "$sock" port set p1 mtu 1500 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "larger than the 1400-byte MTU of p1's interface r1" <<<"$out" &&
		grep -q "ip link set dev r1 mtu 1500" <<<"$out"; then
		pass "${D}_mtu_above_interface_refused"
	else
		fail "${D}_mtu_above_interface_refused" "exit $rc:" "$out"
	fi
	check "${D}_mtu_below_interface_taken" "$RXPATH" ctl --socket "$sock" port set p1 mtu 1300
	# once the device's MTU is raised as the message says, the same command is taken
	ip -n "$LAB_R" link set r1 mtu 1500
	check "${D}_mtu_taken_after_device_raised" "$RXPATH" ctl --socket "$sock" port set p1 mtu 1500
	ip -n "$LAB_R" link set r1 mtu 1400

	lab_rxpath_stop
	check "${D}_clean_exit" [ "$?" -eq 0 ]
	# the hosts' learned path MTUs must not carry over to the next driver
	lab_in "$LAB_H1" ip route flush cache >/dev/null 2>&1
	lab_in "$LAB_H1" ip -6 route flush cache >/dev/null 2>&1
done
lab_down
