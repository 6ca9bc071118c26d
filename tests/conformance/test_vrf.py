# VRFs through pcap ports: two tables with the same addresses and prefixes kept apart,
# connected and static routes, ICMP errors and echo per table, route leaking, and what is refused.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rxlab import check, done, run as rxlab_run  # noqa: E402
from scapy.all import ICMP, IP, IPv6, ICMPv6EchoRequest, ICMPv6EchoReply, UDP, Ether, Raw  # noqa: E402

PORTS = ("p0", "p1", "p2", "p3")
MAC = {p: "02:00:00:00:00:%02x" % (i + 1) for i, p in enumerate(PORTS)}
H = "02:00:00:00:00:aa"
GW = {"p1": "02:00:00:00:00:b1", "p3": "02:00:00:00:00:b3"}
# p0, p1 in VRF red; p2, p3 in the default table; p0 and p2 have the same address and subnet
BASE = [
    "vrf add red table 10",
    "port set p0 vrf red",
    "port set p1 vrf red",
    "addr add 10.0.0.1/24 dev p0",
    "addr add 10.1.0.1/24 dev p1",
    "addr add 10.0.0.1/24 dev p2",
    "addr add 10.2.0.1/24 dev p3",
    "addr add 2001:db8::1/64 dev p0",
    "addr add 2001:db8::1/64 dev p2",
    "addr add 2001:db8:1::1/64 dev p1",
    "addr add 2001:db8:2::1/64 dev p3",
    "neigh add 10.1.0.2 lladdr %s dev p1" % GW["p1"],
    "neigh add 10.2.0.2 lladdr %s dev p3" % GW["p3"],
    "neigh add 2001:db8:1::2 lladdr %s dev p1" % GW["p1"],
    "neigh add 2001:db8:2::2 lladdr %s dev p3" % GW["p3"],
    "route add 10.9.0.0/16 vrf red via 10.1.0.2",
    "route add 10.9.0.0/16 via 10.2.0.2",
    "route add 2001:db8:9::/48 vrf red via 2001:db8:1::2",
    "route add 2001:db8:9::/48 via 2001:db8:2::2",
    "icmp ratelimit 100000 burst 1000",
]
LINE = len(PORTS) + len(BASE) + 1


def run(config, inputs):
    return rxlab_run(config, inputs, ports=PORTS)


def udp(port, dst, src="10.0.0.2", ttl=64):
    return Ether(dst=MAC[port], src=H) / IP(src=src, dst=dst, ttl=ttl) / UDP(sport=1000, dport=2000) / Raw(b"vrf")


def udp6(port, dst):
    return Ether(dst=MAC[port], src=H) / IPv6(src="2001:db8::2", dst=dst) / UDP(sport=1000, dport=2000)


# --- overlapping prefixes, one per table: each packet leaves by its own table's route ---
res = run(BASE, {"p0": [udp("p0", "10.9.1.1")], "p2": [udp("p2", "10.9.1.1"), udp("p2", "10.9.1.2")]})
check("vrf_exit_0", res.rc == 0, res.stderr)
out1 = [f for f in res.sent("p1") if UDP in f]
out3 = [f for f in res.sent("p3") if UDP in f]
check("vrf_red_route_used", len(out1) == 1 and out1[0][Ether].dst == GW["p1"], [f.summary() for f in res.sent("p1")])
check("vrf_default_route_used", len(out3) == 2 and all(f[Ether].dst == GW["p3"] for f in out3),
      [f.summary() for f in res.sent("p3")])
res = run(BASE, {"p0": [udp6("p0", "2001:db8:9::5")], "p2": [udp6("p2", "2001:db8:9::5")]})
check("vrf6_each_table", len([f for f in res.sent("p1") if UDP in f]) == 1 and
      len([f for f in res.sent("p3") if UDP in f]) == 1, (res.sent("p1"), res.sent("p3")))

# --- no leak: red has no route to the default table's 10.2.0.0/24 ---
res = run(BASE, {"p0": [udp("p0", "10.2.0.5")]})
unreach = [f for f in res.sent("p0") if ICMP in f and f[ICMP].type == 3]
check("vrf_no_route_across", not [f for f in res.sent("p3") if UDP in f] and len(unreach) == 1 and
      unreach[0][IP].src == "10.0.0.1", ([f.summary() for f in res.sent("p0")], res.sent("p3")))

# --- the same address in each table: each answers on its own port ---
echo = [Ether(dst=MAC[p], src=H) / IP(src="10.0.0.2", dst="10.0.0.1") / ICMP(id=i + 1) for i, p in enumerate(("p0", "p2"))]
res = run(BASE, {"p0": [echo[0]], "p2": [echo[1]]})
r0 = [f for f in res.sent("p0") if ICMP in f and f[ICMP].type == 0]
r2 = [f for f in res.sent("p2") if ICMP in f and f[ICMP].type == 0]
check("vrf_same_address_both_answer", len(r0) == 1 and len(r2) == 1 and r0[0][ICMP].id == 1 and r2[0][ICMP].id == 2,
      (res.sent("p0"), res.sent("p2")))
e6 = Ether(dst=MAC["p0"], src=H) / IPv6(src="2001:db8::2", dst="2001:db8::1") / ICMPv6EchoRequest(id=7)
res = run(BASE, {"p0": [e6]})
check("vrf6_echo_answered", any(ICMPv6EchoReply in f and f[ICMPv6EchoReply].id == 7 for f in res.sent("p0")),
      res.sent("p0"))

# --- ICMP errors per table: Time Exceeded from red's own address, back by the port it came in on ---
res = run(BASE, {"p0": [udp("p0", "10.9.1.1", ttl=1)]})
te = [f for f in res.sent("p0") if ICMP in f and f[ICMP].type == 11]
check("vrf_time_exceeded_from_its_table", len(te) == 1 and te[0][IP].src == "10.0.0.1" and not res.sent("p1"),
      [f.summary() for f in res.sent("p0")])

# --- route leaking: red's 10.2.0.0/24 through the default table's gateway ---
res = run(BASE + ["route add 10.2.0.0/24 vrf red via 10.2.0.2 vrf default"], {"p0": [udp("p0", "10.2.0.5")]})
leaked = [f for f in res.sent("p3") if UDP in f]
check("vrf_route_leak", res.rc == 0 and len(leaked) == 1 and leaked[0][Ether].dst == GW["p3"] and
      leaked[0][IP].ttl == 63, (res.stderr, [f.summary() for f in res.sent("p3")]))
res = run(BASE + ["route add 10.2.0.0/24 vrf red nexthop via 10.2.0.2 vrf default nexthop via 10.1.0.2"],
          {"p0": [udp("p0", "10.2.0.%d" % i, src="10.0.0.%d" % i) for i in range(2, 202)]})
a, b = len([f for f in res.sent("p3") if UDP in f]), len([f for f in res.sent("p1") if UDP in f])
check("vrf_multipath_leak", res.rc == 0 and a + b == 200 and a > 50 and b > 50, (res.stderr, a, b))

# --- moving a port back to the default table once its addresses are gone ---
res = run(BASE + ["addr del 10.1.0.1/24 dev p1", "addr del 2001:db8:1::1/64 dev p1", "port set p1 vrf default",
                  "addr add 10.1.0.1/24 dev p1"],
          {"p2": [udp("p2", "10.1.0.9")]})
check("vrf_port_moved_back", res.rc == 0 and any(f.haslayer("ARP") for f in res.sent("p1")), (res.stderr, res.sent("p1")))

# --- what is refused, with the line and the reason; nothing changes ---
for name, line, want in [
    ("refused_table_taken", "vrf add blue table 10", "table 10 is red's already"),
    ("refused_table_main", "vrf add blue table 254", "expected a kernel table number"),
    ("refused_port_with_addresses", "port set p2 vrf red", "has addresses"),
    ("refused_unknown_vrf_route", "route add 10.8.0.0/16 vrf green via 10.2.0.2", "no such VRF"),
    ("refused_unknown_vrf_port", "port set p3 vrf green", "no such VRF"),
    ("refused_gateway_not_in_vrf", "route add 10.8.0.0/16 vrf red via 10.2.0.2", "no interface has an address on the gateway's subnet"),
    ("refused_vrf_del_busy", "vrf del red", "port p0 is in VRF red"),
    ("refused_vrf_named_default", "vrf add default table 20", "the default table is there already"),
]:
    res = run(BASE + [line], {})
    check(name, res.rc != 0 and want in res.stderr and ":%d:" % LINE in res.stderr, res.stderr)
res = run(BASE + ["vrf add red table 10"], {})
check("vrf_add_again_same_is_no_change", res.rc == 0, res.stderr)

done()
