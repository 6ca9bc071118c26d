# Multipath (ECMP) routes through pcap ports: flows spread over the next hops and keep theirs,
# fragments and ICMP errors follow their flow, weights, the IPv6 side, and what is refused.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rxlab import check, done, run as rxlab_run  # noqa: E402
from scapy.all import ARP, ICMP, IP, IPerror, IPv6, ICMPv6PacketTooBig, UDP, UDPerror, Ether, Raw, TCP  # noqa: E402
from scapy.all import fragment  # noqa: E402

R0 = "02:00:00:00:00:01"
H1 = "02:00:00:00:00:11"
GW = {"p1": "02:00:00:00:00:21", "p2": "02:00:00:00:00:22", "p3": "02:00:00:00:00:23"}
PORTS = ("p0", "p1", "p2", "p3")
BASE = [
    "addr add 10.0.0.1/24 dev p0",
    "addr add 10.1.0.1/24 dev p1",
    "addr add 10.2.0.1/24 dev p2",
    "addr add 10.3.0.1/24 dev p3",
    "addr add 2001:db8:1::1/64 dev p1",
    "addr add 2001:db8:2::1/64 dev p2",
    "addr add 2001:db8::1/64 dev p0",
    "neigh add 10.1.0.2 lladdr %s dev p1" % GW["p1"],
    "neigh add 10.2.0.2 lladdr %s dev p2" % GW["p2"],
    "neigh add 10.3.0.2 lladdr %s dev p3" % GW["p3"],
    "neigh add 2001:db8:1::2 lladdr %s dev p1" % GW["p1"],
    "neigh add 2001:db8:2::2 lladdr %s dev p2" % GW["p2"],
]
LINE = len(PORTS) + len(BASE) + 1   # the config line after BASE
ECMP2 = ["route add 10.9.0.0/16 nexthop via 10.1.0.2 nexthop via 10.2.0.2"]


def run(config, inputs):
    return rxlab_run(config, inputs, ports=PORTS)


def flow(i, proto="udp", payload=b"x" * 16):
    """Flow @i: its own source port and destination in 10.9/16."""
    ip = IP(src="10.0.0.%d" % (2 + i % 200), dst="10.9.%d.%d" % (i // 250 % 250, i % 250 + 1))
    l4 = UDP(sport=1024 + i, dport=53) if proto == "udp" else TCP(sport=1024 + i, dport=80, flags="S")
    return Ether(dst=R0, src=H1) / ip / l4 / Raw(payload)


def out_port(res, match):
    """The ports by which the frames @match picks left."""
    return {p for p in PORTS[1:] for f in res.sent(p) if match(f)}


def key(f):
    return (f[IP].src, f[IP].dst, f[IP].payload.sport) if IP in f and (UDP in f or TCP in f) else None


# --- 2,000 flows over two equal next hops, each frame of a flow the same way ---
N = 2000
frames = [flow(i, "udp" if i % 2 else "tcp") for i in range(N)]
res = run(BASE + ECMP2, {"p0": frames + frames[:500]})
check("ecmp_exit_0", res.rc == 0, res.stderr)
c1, c2 = len(res.sent("p1")), len(res.sent("p2"))
check("ecmp_all_forwarded", c1 + c2 == N + 500, (c1, c2, res.drops()))
first = {}
for p in ("p1", "p2"):
    for f in res.sent(p):
        first.setdefault(key(f), set()).add(p)
check("ecmp_flow_keeps_its_next_hop", len(first) == N and all(len(v) == 1 for v in first.values()),
      [k for k, v in first.items() if len(v) > 1][:5])
a = sum(1 for v in first.values() if v == {"p1"})
check("ecmp_spread_even_within_10pct", abs(a - N / 2) <= N / 2 * 0.1, (a, N - a))
check("ecmp_gateway_macs", all(f[Ether].dst == GW[p] for p in ("p1", "p2") for f in res.sent(p)))
check("ecmp_ttl_decremented", all(f[IP].ttl == 63 for p in ("p1", "p2") for f in res.sent(p)))

# --- weights 1:3, and three next hops: more flows, as a smaller share varies more (the seed is random) ---
M = 8000
res = run(BASE + ["route add 10.9.0.0/16 nexthop via 10.1.0.2 weight 1 nexthop via 10.2.0.2 weight 3"],
          {"p0": [flow(i) for i in range(M)]})
c1, c2 = len(res.sent("p1")), len(res.sent("p2"))
check("ecmp_weighted_1_3", c1 + c2 == M and abs(c1 - M / 4) <= M / 4 * 0.1, (c1, c2))
res = run(BASE + ["route add 10.9.0.0/16 nexthop via 10.1.0.2 nexthop via 10.2.0.2 nexthop via 10.3.0.2"],
          {"p0": [flow(i) for i in range(M)]})
counts = [len(res.sent(p)) for p in ("p1", "p2", "p3")]
check("ecmp_three_even", sum(counts) == M and all(abs(c - M / 3) <= M / 3 * 0.1 for c in counts), counts)

# --- a datagram's fragments all go one way, with the unfragmented packets of its addresses' flows ---
big = Ether(dst=R0, src=H1) / IP(src="10.0.0.7", dst="10.9.7.7", id=77) / UDP(sport=4000, dport=53) / Raw(b"f" * 3000)
frags = [Ether(dst=R0, src=H1) / f for f in fragment(big[IP], fragsize=1000)]
many = []
for i in range(40):   # 40 datagrams of 40 flows between one pair of addresses: one way for all their pieces
    d = Ether(dst=R0, src=H1) / IP(src="10.0.0.7", dst="10.9.7.7", id=100 + i) / UDP(sport=5000 + i, dport=53) / Raw(b"g" * 3000)
    many += [Ether(dst=R0, src=H1) / f for f in fragment(d[IP], fragsize=1000)]
res = run(BASE + ECMP2, {"p0": frags + many})
ports_of = {}
for p in ("p1", "p2"):
    for f in res.sent(p):
        ports_of.setdefault(f[IP].id, set()).add(p)
check("ecmp_fragments_one_way", len(ports_of) == 41 and all(len(v) == 1 for v in ports_of.values()), ports_of)
check("ecmp_fragments_all_sent", len(res.sent("p1")) + len(res.sent("p2")) == len(frags) + len(many))

# --- an ICMP error follows the flow it is about ---
# 10.9.x.y sent a packet back to 10.0.0.z; a router on the inside says Time Exceeded about it,
# to 10.9.x.y: it must leave by the way that flow's packets toward 10.9.x.y do
flows = [flow(i) for i in range(64)]
errs = []
for f in flows:
    quoted = IP(src=f[IP].dst, dst=f[IP].src, ttl=1) / UDP(sport=f[UDP].dport, dport=f[UDP].sport)
    errs.append(Ether(dst=R0, src=H1) / IP(src="10.0.0.254", dst=f[IP].dst) / ICMP(type=11, code=0) / quoted)
res = run(BASE + ECMP2, {"p0": flows + errs})
way = {}
for p in ("p1", "p2"):
    for f in res.sent(p):
        if UDP in f and ICMP not in f:
            way[(f[IP].dst, f[UDP].sport)] = p
err_ok = []
for p in ("p1", "p2"):
    for f in res.sent(p):
        if ICMP in f and IPerror in f:
            err_ok.append(way.get((f[IPerror].src, f[UDPerror].dport)) == p)
check("ecmp_icmp_error_follows_flow", len(err_ok) == 64 and all(err_ok), (len(err_ok), err_ok.count(False)))

# --- IPv6 ---
v6 = [Ether(dst=R0, src=H1) / IPv6(src="2001:db8::%x" % (i + 2), dst="2001:db8:9::%x" % (i + 1)) / UDP(sport=2000 + i, dport=53)
      for i in range(N)]
res = run(BASE + ["route add 2001:db8:9::/48 nexthop via 2001:db8:1::2 nexthop via 2001:db8:2::2"], {"p0": v6 + v6[:200]})
c1, c2 = len(res.sent("p1")), len(res.sent("p2"))
check("ecmp6_all_forwarded", c1 + c2 == N + 200, (c1, c2, res.drops()))
seen = {}
for p in ("p1", "p2"):
    for f in res.sent(p):
        seen.setdefault((f[IPv6].src, f[UDP].sport), set()).add(p)
check("ecmp6_flow_keeps", len(seen) == N and all(len(v) == 1 for v in seen.values()))
check("ecmp6_spread_even", abs(sum(1 for v in seen.values() if v == {"p1"}) - N / 2) <= N / 20)
quoted = IPv6(src="2001:db8:9::5", dst="2001:db8::6") / UDP(sport=53, dport=2004)
e6 = Ether(dst=R0, src=H1) / IPv6(src="2001:db8::fe", dst="2001:db8:9::5") / ICMPv6PacketTooBig(mtu=1280) / quoted
res = run(BASE + ["route add 2001:db8:9::/48 nexthop via 2001:db8:1::2 nexthop via 2001:db8:2::2"], {"p0": [v6[4], e6]})
ports = [p for p in ("p1", "p2") for _ in res.sent(p)]
check("ecmp6_icmp_error_follows_flow", len(ports) == 2 and ports[0] == ports[1], ports)

# --- what is refused, with the next hop at fault; nothing changes ---
for name, line, want in [
    ("refused_gateway_on_no_subnet", "route add 10.9.0.0/16 nexthop via 10.1.0.2 nexthop via 10.77.0.2", "next hop 2 (via 10.77.0.2)"),
    ("refused_weight_0", "route add 10.9.0.0/16 nexthop via 10.1.0.2 weight 0", "weight from 1 to 256"),
    ("refused_weight_257", "route add 10.9.0.0/16 nexthop via 10.1.0.2 nexthop via 10.2.0.2 weight 257", "weight from 1 to 256"),
    ("refused_nexthop_without_way", "route add 10.9.0.0/16 nexthop via 10.1.0.2 nexthop weight 2", "needs 'via GATEWAY'"),
    ("refused_wrong_family", "route add 10.9.0.0/16 nexthop via 2001:db8:1::2", "IPv4 gateway"),
]:
    res = run(BASE + [line], {"p0": [flow(1)]})
    check(name, res.rc != 0 and want in res.stderr and ":%d:" % LINE in res.stderr, res.stderr)
res = run(BASE + ["route add 10.9.0.0/16 " + " ".join("nexthop via 10.1.0.%d" % (i + 2) for i in range(65))], {})
check("refused_65_next_hops", res.rc != 0 and "at most 64 next hops" in res.stderr, res.stderr)
res = run(BASE + ["route add 10.9.0.0/16 " + " ".join("nexthop via 10.1.0.%d weight 256" % (i + 2) for i in range(64))],
          {"p0": [flow(i) for i in range(400)]})
# only 10.1.0.2 is a known neighbour: the flows of the other 63 ask for theirs, nearly every one of them
asked = {f[ARP].pdst for f in res.sent("p1") if ARP in f and f[ARP].op == 1}
check("accepts_64_next_hops", res.rc == 0 and len(asked) >= 55, (res.rc, len(asked), res.stderr))

done()
