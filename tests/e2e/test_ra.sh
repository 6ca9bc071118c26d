# SPDX-License-Identifier: MIT
# Router Advertisements with a real host: h1 has no IPv6 default route and
# only its static address; rxpath advertises on p0 (`port set p0 ra on`).
# The Linux kernel in h1 must take rxpath as its default router, make an
# address from the advertised /64 (RFC 4862) and reach h2 from it; when
# rxpath stops, its last advertisement (lifetime 0) must remove the route.
# Run as root: BUILD=build bash tests/e2e/test_ra.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_ra

lab_init
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
ip -n "$LAB_H1" -6 route del default
lab_in "$LAB_H1" sysctl -qw net.ipv6.conf.eth0.accept_ra=1 net.ipv6.conf.eth0.autoconf=1
LAB_CONF_EXTRA="port set p0 ra on" lab_rxpath_start afpacket
if [ -z "$LAB_RXPATH_PID" ]; then
	fail "${T}_start" "rxpath did not start"
	exit 1
fi
pass "${T}_start"

r0_mac=$(ip -n "$LAB_R" -j link show r0 | lab_json 'j[0]["address"]')
h1_mac=$(ip -n "$LAB_H1" -j link show eth0 | lab_json 'j[0]["address"]')
r0_ll=$(lab_eui64 fe80:: "$r0_mac")
slaac=$(lab_eui64 2001:db8:1:: "$h1_mac")

# h1's default routes learned from advertisements, by gateway
ra_routers() {
	ip -n "$LAB_H1" -j -6 route show default 2>/dev/null |
		lab_json '" ".join(str(__import__("ipaddress").ip_address(r["gateway"])) for r in j if r.get("protocol") == "ra")'
}
routers=
for _ in $(seq 50); do
	routers=$(ra_routers)
	[ "$routers" = "$r0_ll" ] && break
	sleep 0.1
done
route=$(ip -n "$LAB_H1" -6 route show default 2>&1)
if [ "$routers" = "$r0_ll" ]; then
	pass "${T}_h1_default_router"
else
	fail "${T}_h1_default_router" "h1's IPv6 default route (expected via $r0_ll, proto ra):" "$route"
fi
addrs=$(ip -n "$LAB_H1" -j -6 addr show dev eth0 2>&1)
made=$(lab_json '[a["local"] for a in j[0]["addr_info"] if a.get("dynamic") and a["prefixlen"] == 64]' <<<"$addrs" 2>&1)
if "$PYTHON" -c 'import ipaddress, sys
sys.exit(not any(ipaddress.ip_address(a) == ipaddress.ip_address(sys.argv[1]) for a in eval(sys.argv[2])))' "$slaac" "$made" 2>/dev/null; then
	pass "${T}_h1_slaac_address"
else
	fail "${T}_h1_slaac_address" "expected $slaac/64 among h1's autoconfigured addresses: $made"
fi
out=$(lab_in "$LAB_H1" ping -6 -n -c 3 -i 0.2 -w 5 -I "$slaac" 2001:db8:2::2 2>&1)
check "${T}_ping6_from_slaac_address" grep -q ' 0% packet loss' <<<"$out"

lab_rxpath_stop
rc=$?
check "${T}_exit_0" [ "$rc" -eq 0 ]
for _ in $(seq 20); do
	routers=$(ra_routers)
	[ -z "$routers" ] && break
	sleep 0.1
done
route=$(ip -n "$LAB_H1" -6 route show default 2>&1)
if [ -n "$routers" ]; then
	fail "${T}_final_advert_removes_router" "h1 still routes by rxpath after it stopped:" "$route"
else
	pass "${T}_final_advert_removes_router"
fi
adverts=$(lab_summary | lab_json 'j["router_adverts"]' 2>/dev/null)
if [ -n "$adverts" ] && [ "$adverts" -ge 2 ]; then
	pass "${T}_counted"
else
	fail "${T}_counted" "router_adverts in the summary: '$adverts' (expected 2 or more: the first and the last)"
fi
