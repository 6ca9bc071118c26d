#!/usr/bin/python3
# Writes the seed corpora of the fuzzers: tests/fuzz/corpus/rx (frames in the
# input format of fuzz_rx.c, for the router that harness sets up) and
# tests/fuzz/corpus/config (lines of the command language). The output is
# committed; run this again after changing the harness's router or format:
#   /usr/bin/python3 tests/fuzz/make_corpus.py
import os
import shutil
import struct
import sys

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, IPv6ExtHdrFragment,  # noqa: E402
                       IPv6ExtHdrHopByHop, ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                       ICMPv6ND_RA, ICMPv6ND_Redirect, ICMPv6ND_RS, ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, Raw)
from scapy.layers.inet import IPOption_NOP, IPOption_RR, IPOption_LSRR  # noqa: E402
from scapy.layers.inet import fragment  # noqa: E402
from scapy.layers.inet6 import fragment6  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
P = ["02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03"]  # sim ports p0, p1, p2
H = "02:00:00:00:00:11"  # a host on every link
BCAST = "ff:ff:ff:ff:ff:ff"

# ---- the input format of fuzz_rx.c ----

LIST, PER_PACKET, COPY = 0, 1, 2
BUDGET_1, BUDGET_3, BUDGET_256 = 1 << 2, 2 << 2, 3 << 2
COPYBREAK_128 = 16
SINK = 32  # no router: the stack as a receive sink
CAPTURE, CAPTURE_3 = 64, 128 | 64  # packet capture; of 3 packets of p0 only
# clock steps (index into clock_steps[] of fuzz_rx.c)
MS1, MS50, MS100, S1, S3, S10, S301 = range(1, 8)
GW_ADD, GW_DEL, KNOWN_DEL = 1, 2, 3


def rec(frame, port=0, end=False, clock=0, neigh=0):
    raw = bytes(frame)
    ctl = port | (4 if end else 0) | (clock << 3) | (neigh << 6)
    return bytes([ctl]) + struct.pack(">H", len(raw)) + raw


def inp(*records, mode=LIST):
    return bytes([mode]) + b"".join(records)


def e(port=0, dst=None):
    return Ether(dst=dst or P[port], src=H)


def ip4(port, src, dst, **kw):
    return e(port) / IP(src=src, dst=dst, **kw)


def ip6(port, src, dst, **kw):
    return e(port) / IPv6(src=src, dst=dst, **kw)


def payload(n, c=b"x"):
    return Raw(c * n)


rx = {}

# -- IPv4: forwarding, local delivery, errors --
udp_fwd = ip4(0, "10.0.1.2", "10.9.1.1") / UDP(sport=1000, dport=2000) / payload(18)
rx["ip4_udp_forward_known_gw"] = inp(rec(udp_fwd))
rx["ip4_tcp_forward_known_gw"] = inp(rec(ip4(0, "10.0.1.2", "10.9.1.1") / TCP(flags="S") / payload(8)))
rx["ip4_udp_to_router"] = inp(rec(ip4(0, "10.0.1.2", "10.0.1.1") / UDP(dport=53) / payload(12)))
rx["ip4_tcp_to_router"] = inp(rec(ip4(0, "10.0.1.2", "10.0.1.1") / TCP(dport=22, flags="S")))
rx["ip4_icmp_echo"] = inp(rec(ip4(0, "10.0.1.2", "10.0.1.1") / ICMP(type=8, id=1, seq=1) / payload(32)))
rx["ip4_icmp_echo_reply_to_router"] = inp(rec(ip4(0, "10.0.1.2", "10.0.1.1") / ICMP(type=0) / payload(8)))
rx["ip4_icmp_echo_options"] = inp(rec(ip4(0, "10.0.1.2", "10.0.1.1", options=[IPOption_NOP(), IPOption_RR(routers=["0.0.0.0"])])
                                      / ICMP(type=8) / payload(16)))
rx["ip4_ttl1"] = inp(rec(ip4(0, "10.0.1.2", "10.9.1.1", ttl=1) / UDP() / payload(10)))
rx["ip4_no_route"] = inp(rec(ip4(0, "10.0.1.2", "192.0.2.1") / UDP() / payload(10)))
rx["ip4_on_link_route"] = inp(rec(ip4(1, "10.0.2.5", "10.6.0.9") / UDP() / payload(10), port=1))
rx["ip4_connected_unresolved"] = inp(rec(ip4(1, "10.0.2.5", "10.0.1.77") / UDP() / payload(10), port=1))
rx["ip4_martians"] = inp(
    rec(ip4(0, "127.0.0.1", "10.9.1.1") / UDP()),
    rec(ip4(0, "10.0.1.2", "0.1.2.3") / UDP()),
    rec(ip4(0, "224.0.0.5", "10.9.1.1") / UDP()),
    rec(ip4(0, "10.0.2.255", "10.9.1.1") / UDP()),
    rec(ip4(0, "10.0.1.2", "255.255.255.255") / UDP()),
    rec(ip4(0, "10.0.1.2", "10.0.2.255") / UDP()),
    rec(ip4(0, "10.0.1.2", "239.1.1.1") / UDP()),
    rec(ip4(0, "10.0.1.2", "240.0.0.1") / UDP()))
rx["ip4_l2_broadcast_unicast_ip"] = inp(rec(e(0, BCAST) / IP(src="10.0.1.2", dst="10.9.1.1") / UDP() / payload(4)),
                                        rec(e(0, "01:00:5e:00:00:01") / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8)))
# fragmentation on p2 (MTU 576), with and without DF, with options copied or not
big = payload(1400, b"f")
rx["ip4_fragment_to_known"] = inp(rec(ip4(0, "10.0.1.2", "10.5.1.1", flags=0) / UDP() / big))
rx["ip4_frag_needed"] = inp(rec(ip4(0, "10.0.1.2", "10.5.1.1", flags="DF") / UDP() / big))
rx["ip4_fragment_options"] = inp(rec(ip4(0, "10.0.1.2", "10.5.1.1", flags=0,
                                         options=[IPOption_LSRR(routers=["10.0.4.3"]), IPOption_NOP(), IPOption_RR(routers=["0.0.0.0"] * 2)])
                                     / UDP() / payload(1000, b"o")))
rx["ip4_fragment_bad_options"] = inp(rec(ip4(0, "10.0.1.2", "10.5.1.1", flags=0, options=[IPOption_NOP()]) / UDP() / payload(900)),
                                     rec((ip4(0, "10.0.1.2", "10.5.1.1", flags=0, ihl=6) / UDP() / payload(900)).build()[:34]
                                         + b"\x83\x07\x04\x00" + b"u" * 900))
rx["ip4_fragment_to_unresolved"] = inp(rec(ip4(0, "10.0.1.2", "10.8.1.1", flags=0) / UDP() / big),
                                       rec(e(2, BCAST) / ARP(op=2, hwsrc="02:00:00:00:00:42", psrc="10.0.4.2", hwdst=P[2], pdst="10.0.4.1"), port=2))
rx["ip4_received_fragments"] = inp(
    rec(ip4(0, "10.0.1.2", "10.9.1.1", flags="MF", frag=0, id=7) / UDP(len=1000) / payload(40)),
    rec(ip4(0, "10.0.1.2", "10.9.1.1", flags=0, frag=6, id=7) / payload(40)),
    rec(ip4(0, "10.0.1.2", "10.0.1.1", flags="MF", frag=0, id=8) / ICMP(type=8) / payload(40)),
    rec(ip4(0, "10.0.1.2", "10.0.1.1", flags=0, frag=6, id=8) / payload(40)),
    rec(ip4(0, "10.0.1.2", "10.5.1.1", flags="MF", frag=100, id=9) / payload(1200)),
    rec(ip4(0, "10.0.1.2", "10.9.1.1", flags=0, frag=8190, id=10) / payload(100)))
# datagrams to the router in fragments: reassembled, answered as a whole
rx["reasm_ip4_echo"] = inp(*[rec(e(0) / f) for f in reversed(fragment(
    IP(src="10.0.1.2", dst="10.0.1.1", id=11) / ICMP(type=8) / payload(1100), fragsize=400))])
rx["reasm_ip6_echo"] = inp(*[rec(e(0) / f) for f in fragment6(
    IPv6(src="2001:db8:1::2", dst="2001:db8:1::1") / IPv6ExtHdrFragment(id=12) /
    ICMPv6EchoRequest(data=b"e" * 1400), 1280)])
rx["reasm_ip4_overlap_udp"] = inp(
    rec(ip4(0, "10.0.1.2", "10.0.1.1", flags="MF", frag=0, id=13) / UDP(len=48) / payload(32)),
    rec(ip4(0, "10.0.1.2", "10.0.1.1", flags=0, frag=4, id=13, proto=17) / payload(16)),
    rec(ip4(0, "10.0.1.2", "10.0.1.1", flags="MF", frag=0, id=14) / UDP(len=48) / payload(32)),
    rec(ip4(0, "10.0.1.2", "10.0.1.1", flags=0, frag=5, id=14, proto=17) / payload(8), clock=S10))
rx["ip4_to_vlan_gateway"] = inp(rec(ip4(0, "10.0.1.2", "10.7.1.1") / UDP() / payload(20)))

# -- ARP --
rx["arp_request"] = inp(rec(e(0, BCAST) / ARP(op=1, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.1")))
rx["arp_probe"] = inp(rec(e(0, BCAST) / ARP(op=1, hwsrc=H, psrc="0.0.0.0", pdst="10.0.1.1")))
rx["arp_not_for_us"] = inp(rec(e(0, BCAST) / ARP(op=1, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.99")))
rx["arp_reply_resolves"] = inp(
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(20)),
    rec(ip4(0, "10.0.1.2", "10.8.2.2") / TCP() / payload(20), end=True),
    rec(e(2) / ARP(op=2, hwsrc="02:00:00:00:00:42", psrc="10.0.4.2", hwdst=P[2], pdst="10.0.4.1"), port=2, end=True),
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(20)))
rx["arp_bad"] = inp(rec(e(0, BCAST) / ARP(op=3, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.1")),
                    rec(e(0, BCAST) / ARP(op=1, hwsrc="01:00:00:00:00:01", psrc="10.0.1.2", pdst="10.0.1.1")),
                    rec((e(0, BCAST) / ARP(op=1, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.1")).build()[:30]),
                    rec(e(0, BCAST) / ARP(hwlen=8, op=1, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.1")))
# a neighbour that never answers: requests, then failure and Destination Unreachable
rx["neigh_timeout"] = inp(
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(20), end=True),
    rec(ip4(0, "10.0.1.2", "10.8.1.2") / UDP() / payload(20), clock=S1),
    rec(ip4(0, "10.0.1.2", "10.8.1.3") / UDP() / payload(20), clock=S1),
    rec(ip4(0, "10.0.1.2", "10.8.1.4") / UDP() / payload(20), clock=S1),
    rec(ip4(0, "10.0.1.2", "10.8.1.5") / UDP() / payload(20), clock=S1),
    rec(ip4(0, "10.0.1.2", "10.8.1.6") / UDP() / payload(20), clock=S3),
    rec(ip4(0, "10.0.1.2", "10.8.1.7") / UDP() / payload(20), clock=S10))
rx["neigh_hold_full"] = inp(*[rec(ip4(0, "10.0.1.2", "10.8.1.%d" % i) / UDP() / payload(8)) for i in range(1, 8)])
rx["neigh_table_full"] = inp(*[rec(ip4(1, "10.0.2.9", "10.0.1.%d" % i) / UDP() / payload(8), port=1) for i in range(2, 24)])
rx["neigh_learn_and_age"] = inp(
    rec(e(0) / ARP(op=1, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.1")),
    rec(ip4(1, "10.0.2.9", "10.0.1.2") / UDP() / payload(8), port=1, clock=MS100),
    rec(ip4(1, "10.0.2.9", "10.0.1.2") / UDP() / payload(8), port=1, clock=S301))
rx["neigh_ops"] = inp(
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(8)),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::1") / UDP() / payload(8), end=True),
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(8), neigh=GW_ADD),
    rec(ip4(0, "10.0.1.2", "10.9.1.1") / UDP() / payload(8), neigh=KNOWN_DEL),
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(8), neigh=GW_DEL))

# -- VLAN --
rx["vlan_echo"] = inp(rec(e(1) / Dot1Q(vlan=100) / IP(src="10.0.3.2", dst="10.0.3.1") / ICMP(type=8) / payload(16), port=1))
rx["vlan_forward"] = inp(rec(e(1) / Dot1Q(vlan=100) / IP(src="10.0.3.2", dst="10.9.1.1") / UDP() / payload(16), port=1),
                         rec(ip4(0, "10.0.1.2", "10.0.3.9") / UDP() / payload(16)))
rx["vlan_arp"] = inp(rec(Ether(dst=BCAST, src=H) / Dot1Q(vlan=100) / ARP(op=1, hwsrc=H, psrc="10.0.3.2", pdst="10.0.3.1"), port=1))
rx["vlan_unknown_and_priority"] = inp(
    rec(e(1) / Dot1Q(vlan=200) / IP(src="10.0.2.2", dst="10.0.2.1") / ICMP(type=8), port=1),
    rec(e(1) / Dot1Q(vlan=0) / IP(src="10.0.2.2", dst="10.0.2.1") / ICMP(type=8), port=1),
    rec(Ether(dst=P[1], src=H, type=0x88a8) / Dot1Q(vlan=100) / IP(src="10.0.3.2", dst="10.0.3.1"), port=1),
    rec(e(0) / Dot1Q(vlan=100) / IP(src="10.0.3.2", dst="10.0.3.1") / ICMP(type=8)))
rx["vlan_mtu_ip6_too_big"] = inp(rec(ip6(0, "2001:db8:1::2", "2001:db8:3::9") / UDP() / payload(1300)))

# -- IPv6 --
rx["ip6_udp_forward_known_gw"] = inp(rec(ip6(0, "2001:db8:1::2", "2001:db8:9::1") / UDP() / payload(18)))
rx["ip6_tcp_to_router"] = inp(rec(ip6(0, "2001:db8:1::2", "2001:db8:1::1") / TCP(flags="S")))
rx["ip6_echo"] = inp(rec(ip6(0, "2001:db8:1::2", "2001:db8:1::1") / ICMPv6EchoRequest(id=1, seq=1) / payload(32)))
rx["ip6_echo_anycast_and_group"] = inp(rec(ip6(0, "2001:db8:1::2", "2001:db8:1::") / ICMPv6EchoRequest()),
                                       rec(Ether(dst="33:33:00:00:00:01", src=H) / IPv6(src="fe80::11", dst="ff02::1") / ICMPv6EchoRequest()))
rx["ip6_ns"] = inp(rec(Ether(dst="33:33:ff:00:00:01", src=H) / IPv6(src="2001:db8:1::2", dst="ff02::1:ff00:1", hlim=255)
                       / ICMPv6ND_NS(tgt="2001:db8:1::1") / ICMPv6NDOptSrcLLAddr(lladdr=H)))
rx["ip6_ns_dad"] = inp(rec(Ether(dst="33:33:ff:00:00:01", src=H) / IPv6(src="::", dst="ff02::1:ff00:1", hlim=255)
                           / ICMPv6ND_NS(tgt="2001:db8:1::1")))
rx["ip6_na_resolves"] = inp(
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::1") / UDP() / payload(20), end=True),
    rec(ip6(2, "2001:db8:4::2", "2001:db8:4::1", hlim=255) / ICMPv6ND_NA(tgt="2001:db8:4::2", R=0, S=1, O=1)
        / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:42"), port=2))
rx["ip6_rs"] = inp(rec(Ether(dst="33:33:00:00:00:02", src=H) / IPv6(src="::", dst="ff02::2", hlim=255) / ICMPv6ND_RS()))
rx["ip6_errors"] = inp(
    rec(ip6(0, "2001:db8:1::2", "2001:db8:9::1", hlim=1) / UDP() / payload(8)),
    rec(ip6(0, "2001:db8:1::2", "3fff::1") / UDP() / payload(8)),
    rec(ip6(0, "fe80::11", "2001:db8:9::1") / UDP() / payload(8)),
    rec(ip6(0, "2001:db8:1::2", "fe80::99") / UDP() / payload(8)),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:4::9") / UDP() / payload(1000)),
    rec(ip6(0, "ff02::1", "2001:db8:9::1") / UDP()),
    rec(ip6(0, "::", "2001:db8:9::1") / UDP()),
    rec(ip6(0, "2001:db8:1::2", "::1") / UDP()),
    rec(ip6(0, "2001:db8:1::2", "ff05::1") / UDP()))
rx["ip6_ext_headers_error"] = inp(
    rec(ip6(0, "2001:db8:1::2", "3fff::1") / IPv6ExtHdrHopByHop() / IPv6ExtHdrFragment(offset=0, m=1) / UDP() / payload(16)),
    rec(ip6(0, "2001:db8:1::2", "3fff::1") / IPv6ExtHdrFragment(offset=8, m=0, nh=58) / payload(16)),
    rec(ip6(0, "2001:db8:1::2", "3fff::1") / IPv6ExtHdrHopByHop() / ICMPv6EchoRequest()))
rx["ip6_link_local_gateway"] = inp(rec(ip6(1, "2001:db8:2::5", "2001:db8:7::1") / UDP() / payload(8), port=1),
                                   rec(ip6(0, "fe80::2", "fe80::200:ff:fe00:1") / ICMPv6EchoRequest()))

# -- malformed frames, one per drop reason of the receive checks --
good4 = (ip4(0, "10.0.1.2", "10.0.1.1") / UDP(dport=9) / payload(18)).build()
good6 = (ip6(0, "2001:db8:1::2", "2001:db8:1::1") / UDP(dport=9) / payload(18)).build()


def patch(b, off, val):
    b = bytearray(b)
    b[off:off + len(val)] = val
    return bytes(b)


def fix4(b):
    # recompute the IPv4 header checksum after a patch
    ihl = (b[14] & 15) * 4
    b = bytearray(b)
    b[24:26] = b"\0\0"
    s = sum(struct.unpack(">%dH" % (ihl // 2), bytes(b[14:14 + ihl]))) if ihl >= 20 and 14 + ihl <= len(b) else 0
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    b[24:26] = struct.pack(">H", ~s & 0xffff)
    return bytes(b)


bad = [
    good4[:10], good4[:13], b"",
    patch(good4, 0, bytes.fromhex("020000000099")),
    patch(good4, 12, b"\x88\xb5"), patch(good4, 12, b"\x00\x2e"),
    good4[:14 + 19], patch(good4, 14, b"\x65"), fix4(patch(good4, 14, b"\x44")),
    patch(good4, 24, b"\x00\x00"), fix4(patch(good4, 16, b"\x05\xdc")), fix4(patch(good4, 16, b"\x00\x10")),
    fix4(patch(good4, 16, b"\x00\x1a"))[:14 + 26],
    fix4(patch(good4, 38, b"\x00\x04")), fix4(patch(good4, 38, b"\x04\x00")),
    good6[:14 + 39], patch(good6, 14, b"\x40"), patch(good6, 18, b"\x05\xdc"),
    fix4(patch((ip4(0, "10.0.1.2", "10.0.1.1") / TCP() / payload(4)).build(), 46, b"\x20")),
    fix4(patch((ip4(0, "10.0.1.2", "10.0.1.1") / TCP() / payload(4)).build(), 46, b"\xf0")),
    (ip4(0, "10.0.1.2", "10.0.1.1") / ICMP(type=8, chksum=1) / payload(8)).build(),
    (ip6(0, "2001:db8:1::2", "2001:db8:1::1") / ICMPv6EchoRequest(cksum=1)).build(),
]
rx["malformed_list"] = inp(*[rec(b) for b in bad])
rx["malformed_per_packet"] = inp(*[rec(b) for b in bad], mode=PER_PACKET)

# -- receive modes over a mixed poll --
mixed = [udp_fwd, ip4(0, "10.0.1.2", "10.0.1.1") / ICMP(type=8) / payload(8),
         e(0, BCAST) / ARP(op=1, hwsrc=H, psrc="10.0.1.2", pdst="10.0.1.1"),
         ip6(0, "2001:db8:1::2", "2001:db8:9::1") / UDP() / payload(8),
         ip4(0, "10.0.1.2", "10.5.1.1", flags=0) / UDP() / payload(700)]
rx["mode_per_packet"] = inp(*[rec(f) for f in mixed], mode=PER_PACKET)
rx["mode_copy"] = inp(*[rec(f) for f in mixed], mode=COPY | COPYBREAK_128)
rx["mode_budget_1"] = inp(*[rec(f) for f in mixed], mode=BUDGET_1)
rx["mode_budget_256_tx_full"] = inp(*[rec(ip4(0, "10.0.1.2", "10.5.1.%d" % i, flags=0) / UDP() / payload(1200))
                                      for i in range(1, 40)], mode=BUDGET_256)
# more than a TX ring (64 on p2) and more than a transmit vector (128) forwarded in one poll
rx["tx_full_forwarded"] = inp(*[rec(ip4(0, "10.0.1.2", "10.5.%d.%d" % (i // 200, i % 200 + 1)) / UDP())
                                for i in range(140)], mode=BUDGET_256)
rx["vlan_gateway_learned"] = inp(
    rec(e(1, BCAST) / Dot1Q(vlan=100) / ARP(op=2, hwsrc="02:00:00:00:00:32", psrc="10.0.3.2", hwdst=P[1], pdst="10.0.3.1"), port=1),
    rec(e(1) / Dot1Q(vlan=100) / ARP(op=1, hwsrc="02:00:00:00:00:32", psrc="10.0.3.2", pdst="10.0.3.1"), port=1, end=True),
    rec(ip4(0, "10.0.1.2", "10.7.1.1") / UDP() / payload(20)),
    rec(ip4(0, "10.0.1.2", "10.7.1.2") / UDP() / payload(20), end=True),
    rec(ip4(0, "10.0.1.2", "10.7.1.3") / UDP() / payload(20)))
rx["neigh_failed_ip6"] = inp(
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::1") / UDP() / payload(8), end=True),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::2") / UDP() / payload(8), clock=S1),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::3") / UDP() / payload(8), clock=S1),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::4") / UDP() / payload(8), clock=S1),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::5") / UDP() / payload(8), clock=S1),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::6") / UDP() / payload(8), clock=MS100))
rx["neigh_del_with_held"] = inp(
    rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP() / payload(8)),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:8::1") / UDP() / payload(8), end=True),
    rec(ip4(0, "10.0.1.2", "10.9.1.1") / UDP() / payload(8), neigh=GW_DEL))
rx["ip6_ah_error"] = inp(
    rec(ip6(0, "2001:db8:1::2", "3fff::1", nh=51) / Raw(bytes([58, 1, 0, 0]) + b"\0" * 8) / ICMPv6EchoRequest()),
    rec(ip6(0, "2001:db8:1::2", "3fff::1", nh=51) / Raw(bytes([17, 1, 0, 0]) + b"\0" * 8) / UDP()))
rx["mode_sink"] = inp(*[rec(f) for f in mixed] + [rec(b) for b in bad], mode=SINK)
rx["mode_sink_per_packet"] = inp(*[rec(f) for f in mixed] + [rec(b) for b in bad], mode=SINK | PER_PACKET)
rx["capture"] = inp(*[rec(f) for f in mixed] + [rec(b) for b in bad] +
                    [rec(ip6(0, "2001:db8:1::2", "2001:db8:1::1") / ICMPv6EchoRequest()),
                     rec(ip4(0, "10.0.1.2", "10.8.1.1") / UDP(), clock=S10)], mode=CAPTURE)
rx["capture_count"] = inp(*[rec(f) for f in mixed] + [rec(ip4(1, "10.0.2.5", "10.9.1.1") / UDP(), port=1)],
                          mode=CAPTURE_3 | PER_PACKET)
rx["ip6_ra_redirect"] = inp(
    rec(ip6(0, "fe80::11", "ff02::1", hlim=255) / ICMPv6ND_RA() / ICMPv6NDOptSrcLLAddr(lladdr=H)),
    rec(ip6(0, "fe80::11", "fe80::200:ff:fe00:1", hlim=255) / ICMPv6ND_Redirect(tgt="fe80::12", dst="2001:db8:9::1")),
    rec(ip6(0, "fe80::11", "ff02::1", hlim=255) / ICMPv6ND_RA() / Raw(b"\x01\x00" + b"\0" * 6)),
    rec(ip6(0, "2001:db8:1::2", "2001:db8:1::1", hlim=255) / ICMPv6ND_NA(tgt="2001:db8:1::2") / Raw(b"\x02\x02" + b"\0" * 6)))
rx["vlan_ip6"] = inp(rec(e(1) / Dot1Q(vlan=100) / IPv6(src="2001:db8:3::2", dst="2001:db8:3::1") / ICMPv6EchoRequest(), port=1),
                     rec(e(1) / Dot1Q(vlan=100) / IPv6(src="2001:db8:3::2", dst="2001:db8:9::1") / UDP(), port=1))
rx["ports_interleaved"] = inp(rec(udp_fwd), rec(ip4(1, "10.0.2.5", "10.0.1.2") / UDP(), port=1),
                              rec(ip4(2, "10.0.4.3", "10.9.1.1") / UDP(), port=2),
                              rec(ip4(0, "10.0.1.2", "10.0.4.9") / UDP(), port=3))

# ---- the command language ----
config = {
    "port_add_sim": "port add p0 sim:proto=udp4+tcp6,size=64,flows=16,bad=0.5\n",
    "port_add_pcap": "port add p1 pcap:in=in.pcap,out=out.pcap,mac=02:00:00:00:00:01\n",
    "port_add_afxdp": "port add p0 afxdp:dev=eth1,queues=2,mode=native,zerocopy=off\n",
    "port_add_afpacket": "port add p0 afpacket:dev=eth1\n",
    "port_add_tap": "port add t0 tap:name=rxp0\n",
    "port_add_vlan": "port add p0 sim:rx=off\nport add p0.100 vlan:parent=p0,id=100\n",
    "port_set_mtu": "port add p0 sim\nport set p0 mtu 9000\n",
    "port_set_host": "port add p0 sim\nport set p0 host on gro off name tap7\nport set p0 host off\n",
    "addr": "port add p0 sim\naddr add 10.0.1.1/24 dev p0\naddr add 2001:db8:1::1/64 dev p0\n"
            "addr del 10.0.1.1/24 dev p0\naddr del 2001:db8:1::1 dev p0\n",
    "route": "port add p1 sim\nroute add 10.9.0.0/16 via 10.0.2.2\nroute add 10.8.0.0/16 dev p1\n"
             "route add 2001:db8:9::/48 via fe80::1 dev p1\nroute add 0.0.0.0/0 via 10.0.2.254\nroute del 10.9.0.0/16\n",
    "neigh": "port add p1 sim\nneigh add 10.0.2.2 lladdr 02:00:00:00:00:22 dev p1\n"
             "neigh add 2001:db8:2::2 lladdr 02:00:00:00:00:22 dev p1\nneigh del 10.0.2.2 dev p1\n",
    "icmp": "icmp ratelimit 100 burst 50\nicmp ratelimit 0\n",
    "sync": "sync kernel table 254 interval 30\nsync kernel\nsync off\n",
    "comments": "# a comment\n\n   \t# indented\nport add p0 sim   # trailing\r\n",
    "errors": "port\nport add\nport del p0\naddr add 10.0.0.1/33 dev p0\nroute add 10.0.0.0/8\n"
              "neigh add 10.0.0.1 lladdr ff:ff:ff:ff:ff:ff dev p0\nicmp ratelimit x\nsync kernel table 0\n"
              "frobnicate\nw w w w w w w w w w w w w\n",
}
with open(os.path.join(ROOT, "examples", "router.conf")) as f:
    config["example_router_conf"] = f.read()
with open(os.path.join(ROOT, "dist", "rxpath.conf")) as f:
    config["dist_rxpath_conf"] = f.read()


def write(kind, items, mode):
    d = os.path.join(HERE, "corpus", kind)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in sorted(items.items()):
        with open(os.path.join(d, name), mode) as f:
            f.write(data)
    total = sum(len(v) for v in items.values())
    print("%s: %d files, %d bytes" % (d, len(items), total))
    return total


total = write("rx", rx, "wb") + write("config", config, "w")
if total > 200 * 1024:
    sys.exit("the corpora are over 200 KB: keep them small")
