# SPDX-License-Identifier: MIT
# Redirects with real peers: a second router g shares h1's link, and the
# route to g's networks sends h1's packets into rxpath and back out of the
# same port. rxpath forwards them and tells h1 of the better first hop; the
# Linux kernel in h1 must take the Redirect (ICMP for IPv4, ND for IPv6) and
# send the next packets to g directly.
#
#   h1 eth0 -- br0 (in h1) -- r0 [ rxpath ]        g: 10.0.1.254, fe80::254,
#                 `-- gw0 --- veth --- g eth0           10.8.1.1 and 2001:db8:8::1 on lo
#
# Run as root: BUILD=build bash tests/e2e/test_redirect.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_redirect
G="$LAB_PREFIX-g"
G_UP=0

cleanup_g() {
	[ "$G_UP" = 1 ] && ip netns del "$G" 2>/dev/null
	G_UP=0
	lab_down
}

lab_init
trap cleanup_g EXIT
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

# h1's link becomes a bridge, so that a third node can join it
build_g() {
	ip netns add "$G" && G_UP=1 &&
	ip -n "$LAB_H1" link add br0 type bridge &&
	ip -n "$LAB_H1" link set br0 address 02:00:00:00:01:02 &&
	ip -n "$LAB_H1" link add gw0 type veth peer name eth0 netns "$G" &&
	ip -n "$LAB_H1" link set eth0 master br0 &&
	ip -n "$LAB_H1" link set gw0 master br0 &&
	ip -n "$LAB_H1" addr flush dev eth0 &&
	lab_in "$LAB_H1" sysctl -qw net.ipv6.conf.br0.accept_dad=0 net.ipv6.conf.gw0.disable_ipv6=1 \
		net.ipv6.conf.eth0.disable_ipv6=1 &&
	ip -n "$LAB_H1" link set gw0 up &&
	ip -n "$LAB_H1" link set br0 up &&
	ip -n "$LAB_H1" addr add 10.0.1.2/24 dev br0 &&
	ip -n "$LAB_H1" -6 addr add 2001:db8:1::2/64 dev br0 nodad &&
	ip -n "$LAB_H1" route replace default via 10.0.1.1 &&
	lab_offloads_off "$LAB_H1" gw0 &&
	lab_offloads_off "$G" eth0 &&
	lab_in "$G" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 &&
	ip -n "$G" link set lo up &&
	ip -n "$G" link set eth0 up &&
	ip -n "$G" addr add 10.0.1.254/24 dev eth0 &&
	ip -n "$G" -6 addr add fe80::254/64 dev eth0 nodad &&
	ip -n "$G" -6 addr add 2001:db8:1::254/64 dev eth0 nodad &&
	ip -n "$G" addr add 10.8.1.1/32 dev lo &&
	ip -n "$G" -6 addr add 2001:db8:8::1/128 dev lo
}
if ! build_g; then
	fail "${T}_lab_up" "could not add the second router g on h1's link"
	exit 1
fi

LAB_CONF_EXTRA="route add 10.8.0.0/16 via 10.0.1.254
route add 2001:db8:8::/48 via fe80::254 dev p0" lab_rxpath_start afpacket
if [ -z "$LAB_RXPATH_PID" ]; then
	fail "${T}_start" "rxpath did not start"
	exit 1
fi
pass "${T}_start"

# h1 sends IPv6 for g's network to rxpath by its link-local address, as a
# host that learned its router from Router Advertisements does: RFC 4861 8.1
# has it take Redirects only from that address.
r0_mac=$(ip -n "$LAB_R" -j link show r0 | lab_json 'j[0]["address"]')
r0_ll=$(lab_eui64 fe80:: "$r0_mac")
ip -n "$LAB_H1" -6 route add 2001:db8:8::/48 via "$r0_ll" dev br0

out4=$(lab_in "$LAB_H1" ping -n -c 3 -i 0.3 -w 5 10.8.1.1 2>&1)
check "${T}_ping4_through_hairpin" grep -q ' 0% packet loss' <<<"$out4"
route4=$(lab_in "$LAB_H1" ip route get 10.8.1.1 2>&1)
if grep -q 'via 10.0.1.254' <<<"$route4"; then
	pass "${T}_h1_takes_icmp_redirect"
else
	fail "${T}_h1_takes_icmp_redirect" "h1's route to 10.8.1.1 after the ping (expected via 10.0.1.254):" \
		"$route4" "$out4"
fi

out6=$(lab_in "$LAB_H1" ping -6 -n -c 3 -i 0.3 -w 5 2001:db8:8::1 2>&1)
check "${T}_ping6_through_hairpin" grep -q ' 0% packet loss' <<<"$out6"
route6=$(lab_in "$LAB_H1" ip -6 route get 2001:db8:8::1 2>&1)
if grep -q 'via fe80::254' <<<"$route6"; then
	pass "${T}_h1_takes_nd_redirect"
else
	fail "${T}_h1_takes_nd_redirect" "h1's route to 2001:db8:8::1 after the ping (expected via fe80::254, rxpath is $r0_ll):" \
		"$route6" "$out6"
fi

lab_rxpath_stop
rc=$?
summary=$(lab_summary)
check "${T}_exit_0" [ "$rc" -eq 0 ]
redirects=$(lab_json 'j["redirects"]' <<<"$summary" 2>/dev/null)
# one for each family at least: the first packet of each earns one; once h1
# took it, the next go to g directly
if [ -n "$redirects" ] && [ "$redirects" -ge 2 ]; then
	pass "${T}_counted"
else
	fail "${T}_counted" "redirects in the summary: '${redirects}' (expected 2 or more)" "$summary"
fi
