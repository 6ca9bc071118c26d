# Deliberately broken frames: every header field at and beyond its limits, truncated at
# every length. Nothing crashes; frames in = forwarded + answered/delivered + dropped by reason.
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rxlab import check, done, run  # noqa: E402
from scapy.all import ARP, ICMP, IP, UDP, TCP, Dot1Q, Ether, IPv6, ICMPv6EchoRequest, Raw  # noqa: E402
from scapy.all import IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting  # noqa: E402

R0, H1 = "02:00:00:00:00:01", "02:00:00:00:00:11"
CONFIG = [
    "addr add 10.0.1.1/24 dev p0",
    "addr add 10.0.2.1/24 dev p1",
    "addr add 2001:db8:1::1/64 dev p0",
    "addr add 2001:db8:2::1/64 dev p1",
    "neigh add 10.0.2.2 lladdr 02:00:00:00:00:22 dev p1",
    "neigh add 2001:db8:2::2 lladdr 02:00:00:00:00:22 dev p1",
    "route add 10.9.0.0/16 via 10.0.2.2",
    "route add 2001:db8:9::/48 via 2001:db8:2::2",
    "port add p0.7 vlan:parent=p0,id=7",
    "addr add 10.0.7.1/24 dev p0.7",
    "icmp ratelimit 1000000 burst 100000",
]

rnd = random.Random(1234)
bases = [
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1") / UDP(sport=1, dport=2) / Raw(b"a" * 20),
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8) / Raw(b"b" * 20),
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / TCP() / Raw(b"c" * 8),
    Ether(dst="ff:ff:ff:ff:ff:ff", src=H1) / ARP(op=1, hwsrc=H1, psrc="10.0.1.2", pdst="10.0.1.1"),
    Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:9::1") / UDP() / Raw(b"d" * 20),
    Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:1::1") / ICMPv6EchoRequest() / Raw(b"e" * 8),
    Ether(dst=R0, src=H1) / Dot1Q(vlan=7) / IP(src="10.0.7.2", dst="10.9.1.1") / UDP() / Raw(b"f" * 20),
    # to the router's own addresses, where nothing listens: answered as a host answers
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.2.1") / UDP(sport=7, dport=33434) / Raw(b"k" * 12),
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", proto=47) / Raw(b"l" * 8),
    Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:1::1") / IPv6ExtHdrHopByHop() /
    IPv6ExtHdrDestOpt() / TCP(flags="S") / Raw(b"m" * 4),
    Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:2::1") / IPv6ExtHdrRouting(addresses=[]) /
    UDP() / Raw(b"n" * 8),
    # fragments to the router, which reassembles them
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", id=5, flags="MF", proto=1) / ICMP(type=8) / Raw(b"q" * 16),
    Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", id=5, frag=3, proto=1) / Raw(b"r" * 20),
    Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:1::1") / IPv6ExtHdrFragment(id=6, m=1, nh=58) /
    ICMPv6EchoRequest() / Raw(b"s" * 16),
    Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:1::1") / IPv6ExtHdrFragment(id=6, offset=3, nh=58) /
    Raw(b"t" * 20),
]

frames = []
for base in bases:
    raw = bytes(base)
    # truncated at every length
    for n in range(0, len(raw)):
        frames.append(raw[:n])
    # every byte of the headers set to its limits and to random values
    for i in range(min(len(raw), 14 + 48)):
        for v in (0x00, 0xff, 0x7f, 0x80, rnd.randrange(256)):
            b = bytearray(raw)
            b[i] = v
            frames.append(bytes(b))
    # random multi-byte damage
    for _ in range(200):
        b = bytearray(raw)
        for _ in range(rnd.randrange(1, 6)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        frames.append(bytes(b[: rnd.randrange(1, len(b) + 1)]))
# the IPv4 length fields beyond the frame in both directions, with valid checksums
for tl in (0, 19, 20, 27, 28, 47, 48, 49, 1500, 65535):
    frames.append(bytes(Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", len=tl) / UDP() / Raw(b"g" * 20)))
for ihl in range(0, 16):
    frames.append(bytes(Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", ihl=ihl) / Raw(b"h" * 60)))
for plen in (0, 7, 8, 27, 28, 29, 1000, 65535):
    frames.append(bytes(Ether(dst=R0, src=H1) / IPv6(src="2001:db8:1::2", dst="2001:db8:9::1", plen=plen) / UDP() / Raw(b"i" * 20)))
# options that lie about their length, on a packet to be fragmented and on one to us
for opt in (b"\x07\x00\x00\x00", b"\x07\xff\x04\x00", b"\x83\x03\x04\x00", b"\x01\x01\x01\x00", b"\x44\x28\x05\x00"):
    frames.append(bytes(Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", options=[]) / Raw(b"j" * 8))[:14] +
                  bytes(IP(src="10.0.1.2", dst="10.9.1.1", ihl=6, options=opt) / UDP() / Raw(b"k" * 1200))[:1300])

# longer than the largest frame a buffer takes (1518 bytes): received, and dropped as frame_too_long
for n in (1519, 9000):
    frames.append(bytes(Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8))
                  .ljust(n, b"z"))
frames = [Ether(f) if len(f) >= 14 else Raw(f) for f in frames if len(f) > 0]
res = run(CONFIG, {"p0": frames})
s = res.summary
check("broken_run_exits_0", res.rc == 0, res.stderr[-2000:])
if s:
    rx = s["ports"][0]["rx_packets"]
    delivered = sum(s["delivered"].values())
    dropped = sum(s["drops"].values())
    check("broken_all_received", rx == len(frames), (rx, len(frames)))
    check("broken_counters_add_up", rx == s["forwarded"] + delivered + dropped,
          (rx, s["forwarded"], delivered, dropped))
    check("broken_too_long_named", s["drops"].get("frame_too_long") == 2, s["drops"].get("frame_too_long"))
    check("broken_many_reasons", len([k for k, v in s["drops"].items() if v]) >= 20, s["drops"])
    check("broken_no_buffer_lost", "buffers" not in res.stderr, res.stderr[-500:])
done()
