# IPv6 router conformance through pcap ports: RFC 8200 forwarding, RFC 4443 ICMPv6, RFC 4861 ND.
import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxlab  # noqa: E402
from rxlab import check, done  # noqa: E402
from scapy.all import (  # noqa: E402
    TCP, UDP, Dot1Q, Ether, ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
    ICMPv6ND_RS, ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6, IPv6ExtHdrDestOpt,
    IPv6ExtHdrHopByHop, Raw, HBHOptUnknown, RouterAlert, ICMPv6EchoReply, IPv6ExtHdrFragment, IPv6ExtHdrRouting,
    ICMPv6MLQuery, ICMPv6MLQuery2, defragment6, fragment6,
)
from scapy.all import checksum as inet_cksum  # noqa: E402

R0, R1 = "02:00:00:00:00:01", "02:00:00:00:00:02"
H1, GW = "02:00:00:00:00:11", "02:00:00:00:00:22"
A0, A1 = "2001:db8:1::1", "2001:db8:2::1"      # the router's addresses on p0, p1
HOST = "2001:db8:1::2"                         # a host on p0
LL0, LL1 = "fe80::ff:fe00:1", "fe80::ff:fe00:2"  # EUI-64 link-local of p0, p1 (RFC 4291 A)
LLH = "fe80::11"
BASE = [
    "addr add %s/64 dev p0" % A0,
    "addr add %s/64 dev p1" % A1,
    "neigh add 2001:db8:2::2 lladdr %s dev p1" % GW,
    "route add 2001:db8:9::/48 via 2001:db8:2::2",
    "icmp ratelimit 100000 burst 1000",
]
ICMP6_ERRORS = (1, 2, 3, 4)
bad_exits = []


def run(config, inputs, **kw):
    """rxlab.run, remembering any run that did not exit cleanly (a sanitizer report, a crash)."""
    res = rxlab.run(config, inputs, **kw)
    if res.rc != 0:
        bad_exits.append((res.rc, res.stderr[-2000:]))
    return res


def udp(dst, hlim=64, src=HOST, payload=b"rxpath-v6-payload", l2dst=R0, **kw):
    return Ether(dst=l2dst, src=H1) / IPv6(src=src, dst=dst, hlim=hlim, **kw) / UDP(sport=1234, dport=5678) / Raw(payload)


def sn_group(addr):
    """The solicited-node group of @addr and its Ethernet address (RFC 4291 2.7.1, RFC 2464 7)."""
    low = socket.inet_pton(socket.AF_INET6, addr)[13:]
    group = socket.inet_ntop(socket.AF_INET6, bytes([0xff, 0x02] + [0] * 9 + [0x01, 0xff]) + low)
    return group, "33:33:ff:%02x:%02x:%02x" % tuple(low)


def ns(target, src=HOST, dst=None, hlim=255, lladdr=H1, l2dst=None, vlan=None):
    group, gmac = sn_group(target)
    dst = dst or group
    l2dst = l2dst or (gmac if dst == group else R0)
    p = Ether(dst=l2dst, src=H1)
    if vlan:
        p = p / Dot1Q(vlan=vlan)
    p = p / IPv6(src=src, dst=dst, hlim=hlim) / ICMPv6ND_NS(tgt=target)
    if lladdr:
        p = p / ICMPv6NDOptSrcLLAddr(lladdr=lladdr)
    return p


def echo(dst, src=HOST, l2dst=R0, data=b"ping6-data-123", ident=0x4242, seq=7):
    return Ether(dst=l2dst, src=H1) / IPv6(src=src, dst=dst) / ICMPv6EchoRequest(id=ident, seq=seq, data=data)


def l3(p):
    """The IPv6 packet of a frame, as bytes, bounded by its payload length."""
    raw = bytes(p[IPv6])
    return raw[: 40 + struct.unpack("!H", raw[4:6])[0]]


def icmp6(p):
    """The ICMPv6 message right after the IPv6 header, or None."""
    if IPv6 not in p or p[IPv6].nh != 58:
        return None
    return l3(p)[40:]


def icmp6_ok(p):
    """True when the ICMPv6 checksum verifies over the pseudo-header (RFC 4443 2.3)."""
    ip = l3(p)
    msg = ip[40:]
    pseudo = ip[8:40] + struct.pack("!I", len(msg)) + b"\0\0\0\x3a"
    return inet_cksum(pseudo + msg) == 0


def of_type(res, port, *types):
    return [p for p in res.sent(port) if icmp6(p) is not None and icmp6(p)[0] in types]


def errors(res, port="p0"):
    return of_type(res, port, *ICMP6_ERRORS)


def fwd(res, port="p1"):
    return [p for p in res.sent(port) if IPv6 in p and icmp6(p) is None]


def nas(res, port="p0"):
    return of_type(res, port, 136)


def raw_icmp6(src, dst, msg, hlim=255):
    """A frame carrying the ICMPv6 message @msg (checksum field zero) as given, its checksum filled in."""
    pseudo = socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + \
        struct.pack("!I", len(msg)) + b"\0\0\0\x3a"
    c = inet_cksum(pseudo + msg)
    msg = msg[:2] + struct.pack("!H", c) + msg[4:]
    return Ether(dst=R0, src=H1) / IPv6(src=src, dst=dst, hlim=hlim, nh=58) / Raw(msg)


def tlla(msg):
    """The Target Link-Layer Address option of an NA (after the 24-byte fixed part), or None."""
    opts = msg[24:]
    while len(opts) >= 8 and opts[1]:
        if opts[0] == 2:
            return ":".join("%02x" % b for b in opts[2:8])
        opts = opts[opts[1] * 8:]
    return None


# --- forwarding: hop limit, MACs, payload ---
orig = udp("2001:db8:9::5")
res = run(BASE, {"p0": [orig]})
out = fwd(res)
check("forward_exit_0", res.rc == 0, res.stderr)
check("forward_one_frame_out_p1", len(out) == 1, res.sent("p1"))
if out:
    f = out[0]
    check("forward_rewrites_macs", f[Ether].dst == GW and f[Ether].src == R1, f.summary())
    check("forward_decrements_hop_limit", f[IPv6].hlim == 63, f[IPv6].hlim)
    check("forward_rest_of_header_intact", l3(f)[:7] == l3(orig)[:7] and l3(f)[8:40] == l3(orig)[8:40])
    check("forward_payload_intact", l3(f)[40:] == l3(orig)[40:])
check("forward_counted", res.summary.get("forwarded") == 1 and not res.drops(), (res.summary.get("forwarded"), res.drops()))

# --- extension headers go through untouched (RFC 8200 4) ---
ext = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst="2001:db8:9::6", hlim=10) / IPv6ExtHdrHopByHop() / \
    IPv6ExtHdrDestOpt() / UDP(sport=7, dport=9) / Raw(b"ext-payload")
res = run(BASE, {"p0": [ext]})
out = [p for p in res.sent("p1") if IPv6 in p]
check("ext_headers_forwarded_intact", len(out) == 1 and out[0][IPv6].hlim == 9 and out[0][IPv6].nh == 0
      and l3(out[0])[40:] == l3(ext)[40:], out)

# --- hop limit 1: Time Exceeded 3/0 from the ingress address, quoting the packet ---
expired = udp("2001:db8:9::5", hlim=1)
res = run(BASE, {"p0": [expired]})
errs = errors(res)
check("hop_limit_no_forward", not fwd(res))
check("hop_limit_error_sent", len(errs) == 1, res.sent("p0"))
if errs:
    e = errs[0]
    m = icmp6(e)
    check("hop_limit_type_code", (m[0], m[1]) == (3, 0), (m[0], m[1]))
    check("hop_limit_addresses", e[IPv6].src == A0 and e[IPv6].dst == HOST, e[IPv6].summary())
    check("hop_limit_l2", e[Ether].dst == H1 and e[Ether].src == R0, e[Ether].summary())
    check("hop_limit_checksum", icmp6_ok(e))
    check("hop_limit_quotes_packet", m[4:8] == b"\0\0\0\0" and m[8:] == l3(expired), m[8:48].hex())
check("hop_limit_drop_reason", res.drops("p0").get("ttl_exceeded") == 1, res.drops("p0"))

# --- no route: Destination Unreachable 1/0 ---
res = run(BASE, {"p0": [udp("2001:db8:77::1")]})
errs = errors(res)
check("no_route_unreachable", len(errs) == 1 and icmp6(errs[0])[:2] == b"\x01\x00" and icmp6_ok(errs[0]), errs)
check("no_route_drop_reason", res.drops().get("no_route") == 1, res.drops())

# --- too big: Packet Too Big 2/0 with the MTU; never fragmented; the error fits in 1280 ---
cfg = BASE + ["port set p1 mtu 1280"]
payload = (bytes(range(256)) * 6)[:1400 - 48]
big = udp("2001:db8:9::5", payload=payload)
fits = udp("2001:db8:9::5", payload=payload[:1280 - 48])
res = run(cfg, {"p0": [big, fits]})
errs = errors(res)
check("too_big_error", len(errs) == 1 and icmp6(errs[0])[:2] == b"\x02\x00", errs)
if errs:
    m = icmp6(errs[0])
    check("too_big_reports_mtu", m[4:8] == (1280).to_bytes(4, "big"), m[4:8].hex())
    check("too_big_error_within_1280", len(l3(errs[0])) == 1280 and m[8:] == l3(big)[:1280 - 48], len(l3(errs[0])))
    check("too_big_checksum", icmp6_ok(errs[0]))
out = fwd(res)
check("too_big_not_fragmented", len(out) == 1 and len(l3(out[0])) == 1280, [len(l3(p)) for p in out])
check("too_big_drop_reason", res.drops().get("packet_too_big") == 1, res.drops())

# --- echo: to a global address, another interface's, the link-local one, the subnet-router anycast ---
for name, dst, src, want_src in (("global", A0, HOST, A0), ("other_if", A1, HOST, A1),
                                  ("link_local", LL0, LLH, LL0), ("anycast", "2001:db8:1::", HOST, A0)):
    req = echo(dst, src=src)
    res = run(BASE, {"p0": [req]})
    rep = of_type(res, "p0", 129)
    ok = len(rep) == 1 and icmp6(rep[0])[4:] == bytes(req[ICMPv6EchoRequest])[4:]
    check("echo_reply_" + name, ok, res.sent("p0"))
    if rep:
        r = rep[0]
        check("echo_reply_addresses_" + name, r[IPv6].src == want_src and r[IPv6].dst == src and r[IPv6].hlim == 64
              and r[Ether].dst == H1 and r[Ether].src == R0, r.summary())
        check("echo_reply_checksum_" + name, icmp6_ok(r))
    check("echo_counted_" + name, res.summary["delivered"].get("echo6") == 1, res.summary["delivered"])
# the reply's code is 0 (RFC 4443 4.2), whatever the request's
req = echo(A0, src=HOST)
req[ICMPv6EchoRequest].code = 3
req[ICMPv6EchoRequest].cksum = None
rep = of_type(run(BASE, {"p0": [Ether(bytes(req))]}), "p0", 129)
check("echo_reply_code_0", len(rep) == 1 and icmp6(rep[0])[1] == 0 and icmp6_ok(rep[0]), rep)

# --- echo to all-nodes: answered from the interface (link-local to a link-local sender) ---
res = run(BASE, {"p0": [echo("ff02::1", src=LLH, l2dst="33:33:00:00:00:01"),
                        echo("ff02::1", src=HOST, l2dst="33:33:00:00:00:01", seq=8)]})
rep = of_type(res, "p0", 129)
check("echo_multicast_replies", len(rep) == 2 and all(icmp6_ok(r) for r in rep), res.sent("p0"))
if len(rep) == 2:
    check("echo_multicast_sources", rep[0][IPv6].src == LL0 and rep[1][IPv6].src == A0
          and rep[0][IPv6].dst == LLH and rep[1][IPv6].dst == HOST, [r[IPv6].summary() for r in rep])

# an interface with no global address answers from its link-local one, never another interface's (RFC 4443 4.2)
res = run(["addr add %s/64 dev p1" % A1, "route add 2001:db8:5::/48 dev p0"],
          {"p0": [echo("ff02::1", src="2001:db8:5::9", l2dst="33:33:00:00:00:01")]})
rep = of_type(res, "p0", 129)
check("echo_multicast_source_own_interface", len(rep) == 1 and rep[0][IPv6].src == LL0 and icmp6_ok(rep[0]),
      [r[IPv6].summary() for r in rep] or res.sent("p0"))

# errors about packets to the Subnet-Router anycast address come from a unicast one (RFC 4443 2.2 (b))
closed = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst="2001:db8:1::") / UDP(sport=4000, dport=33434) / Raw(b"t")
unknown = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst="2001:db8:1::", nh=253) / Raw(b"x" * 8)
res = run(BASE, {"p0": [closed, unknown]})
errs = errors(res)
check("anycast_errors_from_unicast", len(errs) == 2 and all(e[IPv6].src == A0 and icmp6_ok(e) for e in errs) and
      [icmp6(e)[:2] for e in errs] == [b"\x01\x04", b"\x04\x01"], [e.summary() for e in errs])
# and no error goes to a source that is one of our anycast addresses (RFC 4443 2.4 (e.6))
res = run(BASE, {"p0": [udp("2001:db8:4::1", src="2001:db8:1::")]})
check("anycast_source_no_error", not errors(res) and res.drops().get("no_route") == 1, (res.sent("p0"), res.drops()))
# ... and from the interface the packet came in on, not the one the error leaves by: here the
# route back to 2001:db8:9::9 is through p1, the anycast and all-nodes packets came in on p0
far = "2001:db8:9::9"
closed = Ether(dst=R0, src=H1) / IPv6(src=far, dst="2001:db8:1::") / UDP(sport=4000, dport=33434) / Raw(b"t")
group = Ether(dst="33:33:00:00:00:01", src=H1) / IPv6(src=far, dst="ff02::1") / \
    IPv6ExtHdrHopByHop(options=[HBHOptUnknown(otype=0x9e, optdata=b"\0" * 4)]) / UDP(sport=4000, dport=9)
res = run(BASE, {"p0": [closed, group]})
errs = [p for p in res.sent("p1") if IPv6 in p and p[IPv6].nh == 58 and icmp6(p)[0] in ICMP6_ERRORS]
check("anycast_and_group_errors_from_ingress_interface", len(errs) == 2 and all(e[IPv6].src == A0 and
      e[IPv6].dst == far and icmp6_ok(e) for e in errs), [e.summary() for e in errs] or (res.sent("p1"), res.drops()))

# ... unless that interface has only its link-local address and the sender is off-link: then from a
# global address of the way out, which the sender can reach (RFC 4291 2.5.6: link-local stays on its link)
cfg = ["addr add %s/64 dev p1" % A1, "neigh add fe80::11 lladdr %s dev p0" % H1, "route add 2001:db8:9::/64 via fe80::11 dev p0",
       "icmp ratelimit 100000 burst 1000"]
res = run(cfg, {"p0": [Ether(dst=R0, src=H1) / IPv6(src=far, dst="2001:db8:2::") / UDP(sport=4000, dport=33434)]})
errs = [p for p in res.sent("p0") if IPv6 in p and p[IPv6].nh == 58 and icmp6(p)[0] in ICMP6_ERRORS]
check("anycast_error_not_from_link_local_off_link", len(errs) == 1 and errs[0][IPv6].src == A1 and icmp6_ok(errs[0]),
      [e.summary() for e in errs] or (res.sent("p0"), res.drops()))

# the Subnet-Router anycast address of a prefix longer than /96 is the router's too (RFC 4291 2.6.1):
# 2001:db8:1::4 on a /126, 2001:db8:1::1:0 on a /112
for plen, addr, anycast in ((126, "2001:db8:1::5", "2001:db8:1::4"), (112, "2001:db8:1::1:5", "2001:db8:1::1:0")):
    res = run(["addr add %s/%d dev p0" % (addr, plen)], {"p0": [echo(anycast, src=addr[:-1] + "6")]})
    rep = of_type(res, "p0", 129)
    check("echo_reply_anycast_/%d" % plen, len(rep) == 1 and rep[0][IPv6].src == addr and icmp6_ok(rep[0]),
          (res.sent("p0"), res.drops()))

bad = echo(A0)
bad[ICMPv6EchoRequest].cksum = 0x1234
res = run(BASE, {"p0": [bad]})
check("echo_bad_checksum_dropped", not res.sent("p0") and res.drops().get("icmp_malformed") == 1, res.drops())

# --- Neighbor Solicitation for our address: NA with R, S, O and our MAC (RFC 4861 7.2.4) ---
for name, frame in (("multicast", ns(A0)), ("unicast", ns(A0, dst=A0, lladdr=None)),
                    ("link_local", ns(LL0, src=LLH))):
    res = run(BASE, {"p0": [frame]})
    na = nas(res)
    check("ns_%s_answered" % name, len(na) == 1, res.sent("p0"))
    if na:
        a, m = na[0], icmp6(na[0])
        target = frame[ICMPv6ND_NS].tgt
        check("ns_%s_na_fields" % name, m[1] == 0 and m[4] & 0xe0 == 0xe0 and
              socket.inet_ntop(socket.AF_INET6, m[8:24]) == target and tlla(m) == R0, m.hex())
        check("ns_%s_na_addresses" % name, a[IPv6].src == target and a[IPv6].dst == frame[IPv6].src and a[IPv6].hlim == 255
              and a[Ether].dst == H1 and a[Ether].src == R0, a.summary())
        check("ns_%s_na_checksum" % name, icmp6_ok(a))
    check("ns_%s_counted" % name, res.summary["delivered"].get("nd") == 1 and not res.drops(), (res.summary["delivered"], res.drops()))

# an address probe (source ::): the answer goes to all-nodes, not marked solicited
res = run(BASE, {"p0": [ns(A0, src="::", lladdr=None)]})
na = nas(res)
check("ns_dad_answered_to_all_nodes", len(na) == 1 and na[0][IPv6].dst == "ff02::1" and na[0][Ether].dst == "33:33:00:00:00:01"
      and icmp6(na[0])[4] & 0xe0 == 0xa0 and icmp6_ok(na[0]), res.sent("p0"))

# the solicitation's sender is learned: traffic to it goes out without asking
res = run(BASE, {"p0": [ns(A0)], "p1": [udp(HOST, src="2001:db8:2::7", l2dst=R1)]})
out = fwd(res, "p0")
check("ns_source_learned", len(out) == 1 and out[0][Ether].dst == H1 and not of_type(res, "p0", 135), res.sent("p0"))

# invalid solicitations are ignored (RFC 4861 7.1.1)
zero_opt = ns(A0, lladdr=None) / Raw(b"\x01\x00\x00\x00\x00\x00\x00\x00")
long_opt = ns(A0, lladdr=None) / Raw(b"\x01\x02\x00\x00\x00\x00\x00\x00")
dad_with_lla = ns(A0, src="::")
short = raw_icmp6(HOST, A0, bytes([135, 0, 0, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, A0)[:12])
mtarget = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0, hlim=255) / ICMPv6ND_NS(tgt="ff02::1")
cases = [("ns_hop_limit_64_ignored", ns(A0, hlim=64), "nd_malformed"),
         ("ns_zero_length_option", zero_opt, "nd_malformed"),
         ("ns_option_past_end", long_opt, "nd_malformed"),
         ("ns_dad_with_source_lla", dad_with_lla, "nd_malformed"),
         ("ns_truncated", short, "nd_malformed"),
         ("ns_multicast_target", mtarget, "nd_malformed"),
         ("ns_other_target", ns("2001:db8:1::99", dst=A0), "nd_not_for_us")]
for name, frame, reason in cases:
    res = run(BASE, {"p0": [frame]})
    check(name, not res.sent("p0") and res.drops().get(reason) == 1, (res.drops(), res.sent("p0")))

# other groups are not ours: a solicitation for another node is not taken
res = run(BASE, {"p0": [ns("2001:db8:1::99")]})
check("ns_foreign_group_not_taken", not res.sent("p0") and res.drops().get("ip6_multicast") == 1, res.drops())

# a Router Solicitation is taken (counted), and not answered where advertisements are off (the default)
rs = Ether(dst="33:33:00:00:00:02", src=H1) / IPv6(src=LLH, dst="ff02::2", hlim=255) / ICMPv6ND_RS() / ICMPv6NDOptSrcLLAddr(lladdr=H1)
res = run(BASE, {"p0": [rs]})
check("rs_taken", not res.sent("p0") and res.summary["delivered"].get("nd") == 1 and not res.drops(), (res.drops(), res.summary["delivered"]))
# RFC 4861 6.2.6: the soliciting host's link-layer address is learned: traffic to it needs no NS
rs_global = Ether(dst="33:33:00:00:00:02", src=H1) / IPv6(src=HOST, dst="ff02::2", hlim=255) / ICMPv6ND_RS() / \
    ICMPv6NDOptSrcLLAddr(lladdr=H1)
res = run(BASE, {"p0": [rs_global], "p1": [udp(HOST, src="2001:db8:2::8", l2dst=R1)]})
out = fwd(res, "p0")
check("rs_source_learned", len(out) == 1 and out[0][Ether].dst == H1 and not of_type(res, "p0", 135),
      res.sent("p0"))
# RFC 4861 6.1.1: from the unspecified address a solicitation carries no link-layer address
bad_rs = Ether(dst="33:33:00:00:00:02", src=H1) / IPv6(src="::", dst="ff02::2", hlim=255) / ICMPv6ND_RS() / ICMPv6NDOptSrcLLAddr(lladdr=H1)
res = run(BASE, {"p0": [bad_rs]})
check("rs_unspecified_with_lla_dropped", res.drops().get("nd_malformed") == 1, res.drops())

# --- Router Advertisements (RFC 4861 6.2, 4.2, 4.6): `port set p0 ra on` ---
from scapy.all import ICMPv6ND_RA, ICMPv6NDOptMTU, ICMPv6NDOptPrefixInfo  # noqa: E402

res = run(BASE + ["addr add 2001:db8:77::1/48 dev p0", "port set p0 ra on"], {"p0": [rs]})
ras = [p for p in res.sent("p0") if ICMPv6ND_RA in p]
check("ra_sent_first_and_last", len(ras) >= 2 and ras[0][ICMPv6ND_RA].routerlifetime == 1800 and ras[-1][ICMPv6ND_RA].routerlifetime == 0,
      [(p[ICMPv6ND_RA].routerlifetime) for p in ras])
check("ra_only_where_on", not [p for p in res.sent("p1") if ICMPv6ND_RA in p], res.sent("p1"))
if ras:
    a = ras[0]
    check("ra_from_link_local_to_all_nodes", a[IPv6].src == LL0 and a[IPv6].dst == "ff02::1" and a[IPv6].hlim == 255 and
          a[Ether].dst == "33:33:00:00:00:01" and a[Ether].src == R0, a.summary())
    raw = bytes(a[IPv6])
    check("ra_checksum_valid", inet_cksum(raw[8:40] + struct.pack("!I", len(raw) - 40) + b"\0\0\0\x3a" + raw[40:]) == 0)
    check("ra_fields", a[ICMPv6ND_RA].chlim == 64 and a[ICMPv6ND_RA].M == 0 and a[ICMPv6ND_RA].O == 0 and
          a[ICMPv6ND_RA].reachabletime == 0 and a[ICMPv6ND_RA].retranstimer == 0, a[ICMPv6ND_RA].show(dump=True))
    check("ra_source_lladdr", ICMPv6NDOptSrcLLAddr in a and a[ICMPv6NDOptSrcLLAddr].lladdr == R0)
    check("ra_mtu", ICMPv6NDOptMTU in a and a[ICMPv6NDOptMTU].mtu == 1500)
    pis, o = [], a[ICMPv6ND_RA].payload
    while o and not isinstance(o, Raw) and o.name != "NoPayload":
        if isinstance(o, ICMPv6NDOptPrefixInfo):
            pis.append((o.prefix, o.prefixlen, o.L, o.A, o.validlifetime, o.preferredlifetime))
        o = o.payload
    check("ra_prefixes", sorted(pis) == sorted([("2001:db8:1::", 64, 1, 1, 2592000, 604800), ("2001:db8:77::", 48, 1, 0, 2592000, 604800)]), pis)
check("ra_counted", res.summary.get("router_adverts") == len(ras), (res.summary.get("router_adverts"), len(ras)))

# --- resolution: an unknown gateway gets a multicast NS; the NA releases the held packet ---
cfg = BASE + ["route add 2001:db8:8::/48 via 2001:db8:2::3"]
group, gmac = sn_group("2001:db8:2::3")
na_in = Ether(dst=R1, src="02:00:00:00:00:33") / IPv6(src="2001:db8:2::3", dst=LL1, hlim=255) / \
    ICMPv6ND_NA(tgt="2001:db8:2::3", R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:33")
res = run(cfg, {"p0": [udp("2001:db8:8::5")], "p1": [na_in]})
reqs = of_type(res, "p1", 135)
check("resolve_sends_ns", len(reqs) >= 1, res.sent("p1"))
if reqs:
    q, m = reqs[0], icmp6(reqs[0])
    check("resolve_ns_addresses", q[Ether].dst == gmac and q[Ether].src == R1 and q[IPv6].dst == group
          and q[IPv6].src == LL1 and q[IPv6].hlim == 255, q.summary())
    check("resolve_ns_target_and_slla", socket.inet_ntop(socket.AF_INET6, m[8:24]) == "2001:db8:2::3"
          and m[24:26] == b"\x01\x01" and m[26:32] == bytes.fromhex(R1.replace(":", "")), m.hex())
    check("resolve_ns_checksum", icmp6_ok(q))
out = fwd(res)
check("resolve_na_releases_held_packet", len(out) == 1 and out[0][Ether].dst == "02:00:00:00:00:33" and out[0][IPv6].hlim == 63, res.sent("p1"))
check("resolve_counted", res.summary.get("neigh_requests", 0) >= 1 and res.summary["delivered"].get("nd") == 1, res.summary)

# a later NA without Override leaves the learned address alone; with Override it replaces it (RFC 4861 7.2.5)
for flag, want in ((0, "02:00:00:00:00:33"), (1, "02:00:00:00:00:44")):
    na2 = Ether(dst=R1, src="02:00:00:00:00:44") / IPv6(src="2001:db8:2::3", dst=LL1, hlim=255) / \
        ICMPv6ND_NA(tgt="2001:db8:2::3", R=0, S=0, O=flag) / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:44")
    res = run(cfg, {"p0": [udp("2001:db8:8::5")], "p1": [na_in, na2, udp("2001:db8:8::6", src="2001:db8:2::8", l2dst=R1)]})
    out = fwd(res)
    check("na_override_%d" % flag, len(out) == 2 and out[0][Ether].dst == "02:00:00:00:00:33" and out[1][Ether].dst == want,
          [p[Ether].dst for p in out])

# an NA nobody asked for creates nothing: traffic to that address still has to ask
res = run(cfg, {"p1": [na_in, udp("2001:db8:2::3", src="2001:db8:2::8", l2dst=R1)]})
check("unsolicited_na_not_learned", len(of_type(res, "p1", 135)) >= 1, res.sent("p1"))

# a full hold queue makes room: the newest packet replaces the oldest (RFC 4861 7.2.2)
burst = [udp("2001:db8:8::5", payload=b"pkt-%d" % i) for i in range(6)]
res = run(cfg, {"p0": burst, "p1": [na_in]})
out = fwd(res)
check("hold_queue_newest_replace_oldest", [bytes(p[Raw]) for p in out] == [b"pkt-%d" % i for i in range(2, 6)] and
      res.drops().get("neigh_hold_full") == 2, ([bytes(p[Raw]) for p in out if Raw in p], res.drops()))

# --- unresolved: held packets dropped, Address Unreachable 1/3 to each sender ---
sent = [udp("2001:db8:7::1", hlim=30), udp("2001:db8:7::2")]
res = run(BASE + ["route add 2001:db8:7::/48 via 2001:db8:2::4"], {"p0": sent})
errs = errors(res)
check("unresolved_address_unreachable", len(errs) == 2 and all(icmp6(e)[:2] == b"\x01\x03" and icmp6_ok(e) for e in errs), errs)
# the quote is the packet as it came in: its hop limit not yet taken down
check("unresolved_quote_as_received", len(errs) == 2 and all(icmp6(e)[8:8 + len(l3(o))] == l3(o) for e, o in zip(errs, sent)),
      [icmp6(e)[8:48].hex() for e in errs])
check("unresolved_drop_reason", res.drops().get("neigh_unresolved") == 2, res.drops())
check("unresolved_solicited", len(of_type(res, "p1", 135)) == 3, len(of_type(res, "p1", 135)))

# --- scope and martians: never forwarded, never answered ---
cases = [
    ("link_local_destination", udp("fe80::99"), "ip6_link_local"),
    ("multicast_global_scope", udp("ff0e::1", l2dst="33:33:00:00:00:01"), "ip6_multicast"),
    ("multicast_link_scope_other_group", udp("ff02::fb", l2dst="33:33:00:00:00:fb"), "ip6_multicast"),
    ("martian_source_multicast", udp("2001:db8:9::5", src="ff02::1"), "ip6_martian_source"),
    ("martian_source_loopback", udp("2001:db8:9::5", src="::1"), "ip6_martian_source"),
    ("martian_source_unspecified", udp("2001:db8:9::5", src="::"), "ip6_martian_source"),
    ("martian_destination_loopback", udp("::1"), "ip6_martian_destination"),
    ("martian_destination_unspecified", udp("::"), "ip6_martian_destination"),
    # IPv4-mapped addresses are a socket's notation, never on a wire (RFC 4942 2.2): not even echo is answered
    ("martian_source_v4mapped", udp("2001:db8:9::5", src="::ffff:10.0.1.2"), "ip6_martian_source"),
    ("martian_source_v4mapped_echo", echo(A0, src="::ffff:10.0.1.2"), "ip6_martian_source"),
    ("martian_destination_v4mapped", udp("::ffff:10.9.1.1"), "ip6_martian_destination"),
    ("l2_multicast_not_forwarded", udp("2001:db8:9::5", l2dst="33:33:00:00:00:01"), "l2_broadcast_forward"),
]
for name, frame, reason in cases:
    res = run(BASE, {"p0": [frame]})
    check(name, not res.sent("p1") and not res.sent("p0") and res.drops().get(reason) == 1, (res.drops(), res.sent("p0")))

# a link-local source does not leave its link: Destination Unreachable 1/2 (RFC 4443 3.1)
res = run(BASE, {"p0": [udp("2001:db8:9::5", src=LLH)]})
errs = errors(res)
check("link_local_source_beyond_scope", not res.sent("p1") and len(errs) == 1 and icmp6(errs[0])[:2] == b"\x01\x02"
      and errs[0][IPv6].src == LL0 and errs[0][IPv6].dst == LLH and res.drops().get("ip6_beyond_scope") == 1, (errs, res.drops()))

# --- never an error about an ICMPv6 error (even behind an extension header); echo is fine ---
inner = bytes(IPv6(src="2001:db8:9::5", dst=HOST) / UDP())
err_in = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst="2001:db8:9::5", hlim=1) / ICMPv6DestUnreach(code=1) / Raw(inner)
err_ext = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst="2001:db8:9::5", hlim=1) / IPv6ExtHdrDestOpt() / ICMPv6DestUnreach() / Raw(inner)
ping = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst="2001:db8:9::5", hlim=1) / ICMPv6EchoRequest()
res = run(BASE, {"p0": [err_in, err_ext]})
check("no_error_about_error", not errors(res) and res.drops().get("ttl_exceeded") == 2, (res.sent("p0"), res.drops()))
res = run(BASE, {"p0": [ping]})
check("error_about_echo", len(errors(res)) == 1, res.sent("p0"))

# --- rate limit holds ---
res = run(BASE[:-1] + ["icmp ratelimit 1 burst 5"], {"p0": [udp("2001:db8:9::5", hlim=1) for _ in range(20)]})
check("icmp_rate_limited", len(errors(res)) == 5 and res.summary.get("icmp_ratelimited") == 15
      and res.summary.get("icmp_errors") == 5, (len(errors(res)), res.summary.get("icmp_ratelimited")))

# --- VLAN sub-port: solicitation and echo answered tagged ---
cfg = ["port add p0.100 vlan:parent=p0,id=100", "addr add 2001:db8:3::1/64 dev p0.100"] + BASE
vping = Ether(dst=R0, src=H1) / Dot1Q(vlan=100) / IPv6(src="2001:db8:3::2", dst="2001:db8:3::1") / ICMPv6EchoRequest(id=3, seq=4)
res = run(cfg, {"p0": [ns("2001:db8:3::1", src="2001:db8:3::2", vlan=100), vping]})
na = nas(res)
rep = of_type(res, "p0", 129)
check("vlan_na_tagged", len(na) == 1 and Dot1Q in na[0] and na[0][Dot1Q].vlan == 100 and icmp6_ok(na[0]), res.sent("p0"))
check("vlan_echo_tagged", len(rep) == 1 and Dot1Q in rep[0] and rep[0][Dot1Q].vlan == 100 and rep[0][IPv6].src == "2001:db8:3::1", res.sent("p0"))
res = run(cfg, {"p0": [ns("2001:db8:1::1", src="2001:db8:3::2", vlan=100)]})
check("vlan_ns_other_if_address_not_ours", not res.sent("p0") and res.drops().get("nd_not_for_us") == 1, res.drops())

# --- transport to the router with no host path: answered as a host with nothing listening ---
def tcp_ok(p):
    """True when the TCP checksum of an IPv6 packet without extension headers verifies."""
    ip = l3(p)
    seg = ip[40:]
    return inet_cksum(ip[8:40] + struct.pack("!I", len(seg)) + b"\0\0\0\x06" + seg) == 0


# traceroute6's last probe, to the router's far address: Port Unreachable from that address (RFC 4443 3.1, 2.2)
probe = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A1, hlim=1) / UDP(sport=50000, dport=33434) / Raw(b"traceroute6")
res = run(BASE, {"p0": [probe]})
errs = errors(res)
check("udp_to_router_port_unreachable", len(errs) == 1 and icmp6(errs[0])[:2] == bytes([1, 4]), res.sent("p0"))
if errs:
    e = errs[0]
    check("port_unreachable_from_address_probed", e[IPv6].src == A1 and e[IPv6].dst == HOST, e[IPv6].summary())
    check("port_unreachable_checksum", icmp6_ok(e))
    check("port_unreachable_quotes_probe", icmp6(e)[8:] == l3(probe), icmp6(e)[8:48])
check("port_unreachable_counted", res.drops().get("port_unreachable") == 1, res.drops())

# TCP behind a Destination Options header: RST+ACK; a reset is never answered (RFC 9293 3.10.7.1)
syn = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrDestOpt() / TCP(sport=40000, dport=22, flags="S", seq=7)
rst = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / TCP(sport=40000, dport=22, flags="R", seq=8)
res = run(BASE, {"p0": [syn, rst]})
out = [p for p in res.sent("p0") if TCP in p]
check("tcp_to_router_one_reset", len(out) == 1, res.sent("p0"))
if out:
    r = out[0]
    check("tcp_syn_answered_rst_ack", r[TCP].flags == "RA" and r[TCP].seq == 0 and r[TCP].ack == 8, (r[TCP].flags, r[TCP].ack))
    check("tcp_reset_addresses_ports", r[IPv6].src == A0 and r[IPv6].dst == HOST and r[TCP].sport == 22 and r[TCP].dport == 40000, r.summary())
    check("tcp_reset_checksum", tcp_ok(r))
check("tcp_reset_counted", res.drops().get("tcp_reset") == 2, res.drops())

# an unrecognized Next Header: Parameter Problem code 1 pointing at the field that named it (RFC 8200 4)
plain = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0, nh=253) / Raw(b"\0" * 8)
behind = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrHopByHop(nh=253) / Raw(b"\0" * 8)
nothing = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrHopByHop(nh=59)
zero = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / UDP(sport=1, dport=2, chksum=0) / Raw(b"no checksum")
res = run(BASE, {"p0": [plain, behind, nothing, zero]})
pp = of_type(res, "p0", 4)
check("unknown_next_header_parameter_problem", len(pp) == 2 and all(icmp6(p)[1] == 1 and icmp6_ok(p) for p in pp), res.sent("p0"))
check("parameter_problem_pointers", [struct.unpack("!I", icmp6(p)[4:8])[0] for p in pp] == [6, 40],
      [icmp6(p)[4:8] for p in pp])
check("no_next_header_and_zero_udp_checksum_unanswered", len(res.sent("p0")) == 2 and res.drops().get("l4_bad_checksum") == 1,
      (res.sent("p0"), res.drops()))

# an echo request behind extension headers is answered by the message alone: the request's
# headers (options for us, a Router Alert, an atomic fragment's header) are not the reply's
for name, hdrs in (("destopts", IPv6ExtHdrDestOpt()),
                  ("router_alert", IPv6ExtHdrHopByHop(options=[RouterAlert()])),
                  ("atomic_fragment", IPv6ExtHdrFragment(id=77, m=0, offset=0)),
                  ("destopts_atomic_fragment", IPv6ExtHdrDestOpt() / IPv6ExtHdrFragment(id=78, m=0, offset=0))):
    behind = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / hdrs / ICMPv6EchoRequest(id=9, seq=2, data=b"ext")
    res = run(BASE, {"p0": [behind]})
    reps = [p for p in res.sent("p0") if ICMPv6EchoReply in p]
    if reps:
        r = reps[0]
        again = r.copy()
        del again[ICMPv6EchoReply].cksum
        check("echo_behind_%s_answered_without_them" % name,
              r[IPv6].src == A0 and r[IPv6].dst == HOST and r[IPv6].nh == 58 and r[IPv6].plen == 8 + 3 and
              (r[ICMPv6EchoReply].id, r[ICMPv6EchoReply].seq, r[ICMPv6EchoReply].data) == (9, 2, b"ext") and
              IPv6(bytes(again[IPv6]))[ICMPv6EchoReply].cksum == r[ICMPv6EchoReply].cksum, r.show2(dump=True))
    else:
        check("echo_behind_%s_answered_without_them" % name, False, res.sent("p0"))

# options it does not know, on the way to the router, act as their type says (RFC 8200 4.2)
def dst_opt(otype, hdr=IPv6ExtHdrDestOpt):
    return Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / hdr(options=[HBHOptUnknown(otype=otype, optdata=b"\0\0")]) / \
        UDP(sport=5, dport=6) / Raw(b"opt")


res = run(BASE, {"p0": [dst_opt(0x80), dst_opt(0xC0, IPv6ExtHdrHopByHop), dst_opt(0x40), dst_opt(0x1E),
                         Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrHopByHop(options=[RouterAlert()]) / UDP()]})
pp = of_type(res, "p0", 4)
check("unknown_option_parameter_problem", len(pp) == 2 and all(icmp6(p)[1] == 2 and icmp6_ok(p) for p in pp), res.sent("p0"))
check("unknown_option_pointer", [struct.unpack("!I", icmp6(p)[4:8])[0] for p in pp] == [42, 42], [icmp6(p)[4:8] for p in pp])
check("unknown_option_discard_silently", res.drops().get("ip6_unknown_option") == 3, res.drops())
check("skippable_option_and_router_alert_stepped_over", res.drops().get("port_unreachable") == 2 and len(errors(res)) == 4,
      (res.drops(), [e.summary() for e in errors(res)]))

# to a group: an option of type 10 still gets Parameter Problem, one of type 11 does not (RFC 8200 4.2,
# RFC 4443 2.4 (e.3)); an echo request to the site-scope all-routers group is answered (RFC 4291 2.8)
def group_echo(otype, dst="ff02::1", l2dst="33:33:00:00:00:01"):
    return Ether(dst=l2dst, src=H1) / IPv6(src=HOST, dst=dst) / \
        IPv6ExtHdrHopByHop(options=[HBHOptUnknown(otype=otype, optdata=b"\0\0")]) / ICMPv6EchoRequest(id=5, seq=1)


res = run(BASE, {"p0": [group_echo(0x80), group_echo(0xC0), echo("ff05::2", l2dst="33:33:00:00:00:02")]})
pp = of_type(res, "p0", 4)
check("group_option_10_parameter_problem", len(pp) == 1 and icmp6(pp[0])[1] == 2 and icmp6_ok(pp[0]) and
      struct.unpack("!I", icmp6(pp[0])[4:8])[0] == 42 and pp[0][IPv6].dst == HOST, res.sent("p0"))
check("group_option_11_silent", res.drops().get("ip6_unknown_option") == 2, res.drops())
check("site_all_routers_echo_answered", len(of_type(res, "p0", 129)) == 1, res.sent("p0"))

# a routing header with segments left, to the router: Parameter Problem code 0 at its Routing Type
# (RFC 8200 4.4; type 0 is never followed, RFC 5095); with none left it is stepped over
def routed(rtype, segleft, dst=A0, l2dst=R0):
    return Ether(dst=l2dst, src=H1) / IPv6(src=HOST, dst=dst) / \
        IPv6ExtHdrRouting(type=rtype, segleft=segleft, addresses=["2001:db8:9::5"]) / UDP(sport=7, dport=8) / Raw(b"rh")


res = run(BASE, {"p0": [routed(0, 1), routed(4, 1), routed(0, 0), routed(4, 1, dst="ff02::1", l2dst="33:33:00:00:00:01")]})
pp = of_type(res, "p0", 4)
check("routing_header_segments_left_parameter_problem",
      [(icmp6(p)[1], struct.unpack("!I", icmp6(p)[4:8])[0]) for p in pp] == [(0, 42), (0, 42)] and all(icmp6_ok(p) for p in pp),
      res.sent("p0"))
check("routing_header_counted", res.drops().get("ip6_routing_header") == 3 and res.drops().get("port_unreachable") == 1,
      res.drops())

# RFC 8200 4.1: a Hop-by-Hop header anywhere but first is an unrecognized Next Header (code 1, at the
# field that names it); a fragment header that is the whole datagram is stepped over wherever it sits
res = run(BASE, {"p0": [
    Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrDestOpt() / IPv6ExtHdrHopByHop() / UDP(sport=1, dport=2),
    Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop() / UDP(sport=1, dport=2),
    Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=1, m=0, offset=0) / IPv6ExtHdrHopByHop() / UDP(),
    Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrDestOpt() / IPv6ExtHdrFragment(id=2, m=0, offset=0) /
    UDP(sport=1, dport=2) / Raw(b"x"),
    Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=3, m=0, offset=0) / IPv6ExtHdrDestOpt() /
    UDP(sport=1, dport=2) / Raw(b"y")]})
pp = of_type(res, "p0", 4)
check("misplaced_hop_by_hop_parameter_problem",
      [(icmp6(p)[1], struct.unpack("!I", icmp6(p)[4:8])[0]) for p in pp] == [(1, 40), (1, 40), (1, 40)], res.sent("p0"))
unreach = of_type(res, "p0", 1)
check("atomic_fragment_in_chain_port_unreachable", len(unreach) == 2 and
      all(icmp6(p)[1] == 4 and IPv6ExtHdrFragment in p for p in unreach), res.sent("p0"))

# ... also when the routing header follows a fragment header: the datagram is reassembled, then refused
big_rh = IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=0x77) / \
    IPv6ExtHdrRouting(type=0, segleft=1, addresses=["2001:db8:9::5"]) / UDP(sport=7, dport=8) / Raw(b"r" * 1600)
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / f for f in fragment6(big_rh, 1280)]})
pp = of_type(res, "p0", 4)
check("fragmented_routing_header_parameter_problem",
      [(icmp6(p)[1], struct.unpack("!I", icmp6(p)[4:8])[0]) for p in pp] == [(0, 50)] and
      res.drops().get("ip6_routing_header") == 2, (res.sent("p0"), res.drops()))

# RFC 7112: a first fragment without the whole header chain is refused at once (code 3, pointer 0)
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=9, m=1, offset=0, nh=60) /
                        Raw(bytes([17, 0, 1, 4, 0, 0, 0, 0]))]})
pp = of_type(res, "p0", 4)
check("first_fragment_without_chain_parameter_problem",
      [(icmp6(p)[1], struct.unpack("!I", icmp6(p)[4:8])[0]) for p in pp] == [(3, 0)] and not res.drops().get("reasm_timeout"),
      (res.sent("p0"), res.drops()))

# a packet from the wire with one of the router's own addresses as source forged it: no error goes to us
res = run(BASE, {"p0": [udp("2001:db8:9::5", src=A0, hlim=1), udp("2001:db8:77::1", src=A1), udp(A0, src=LL0)]})
check("no_error_to_own_address", not res.sent("p0") and res.drops().get("ttl_exceeded") == 1 and
      res.drops().get("no_route") == 1 and res.drops().get("port_unreachable") == 1, (res.sent("p0"), res.drops()))

# the router's answers go the way the routing table says: to the MAC Neighbor Discovery learned for the
# sender (its NS names another than the frame's), and out the interface the route back leaves by
NEW_MAC = "02:00:00:00:00:aa"
res = run(BASE, {"p0": [ns(A0, lladdr=NEW_MAC), echo(A0, seq=1), echo(A0, src="2001:db8:9::5", seq=2),
                        udp(A0, src="2001:db8:9::5")]})
back = [p for p in res.sent("p0") if ICMPv6EchoReply in p]
there = [p for p in res.sent("p1") if icmp6(p) is not None]
check("reply6_to_learned_mac", len(back) == 1 and back[0][Ether].dst == NEW_MAC, [p.summary() for p in res.sent("p0")])
check("reply6_by_route_back", len(there) == 2 and all(p[Ether].dst == GW and p[IPv6].dst == "2001:db8:9::5" for p in there) and
      sorted(icmp6(p)[0] for p in there) == [1, 129], [p.summary() for p in res.sent("p1")])
# both answer a packet sent to A0: both come from it (RFC 4443 2.2 (b))
check("reply6_by_route_back_sources", sorted((icmp6(p)[0], p[IPv6].src) for p in there) == [(1, A0), (129, A0)],
      [p.summary() for p in there])
# an error about a packet passing through comes from the interface it leaves by
res = run(BASE, {"p0": [udp("2001:db8:77::1", src="2001:db8:9::5")]})
there = [p for p in res.sent("p1") if icmp6(p) is not None]
check("error6_from_egress_interface", [(icmp6(p)[0], p[IPv6].src) for p in there] == [(1, A1)], [p.summary() for p in there])
# an answer from a link-local address stays on its link (RFC 4007 9), whatever the table says
res = run(BASE, {"p0": [echo(LL0, src="2001:db8:9::5", seq=4)]})
check("reply6_from_link_local_stays_on_link", len([p for p in res.sent("p0") if ICMPv6EchoReply in p]) == 1 and
      not [p for p in res.sent("p1") if icmp6(p) is not None], ([p.summary() for p in res.sent("p0")], res.sent("p1")))

# Neighbor Discovery behind extension headers is taken as without them (but not in a fragment, RFC 6980)
nsx = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0, hlim=255) / IPv6ExtHdrDestOpt() / ICMPv6ND_NS(tgt=A0) / \
    ICMPv6NDOptSrcLLAddr(lladdr=H1)
nsf = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0, hlim=255) / IPv6ExtHdrFragment(id=5, m=0, offset=0) / \
    ICMPv6ND_NS(tgt=A0) / ICMPv6NDOptSrcLLAddr(lladdr=H1)
res = run(BASE, {"p0": [nsx, nsf]})
check("ns_behind_extension_header_answered", len(nas(res)) == 1 and icmp6(nas(res)[0])[8:24] == socket.inet_pton(socket.AF_INET6, A0),
      [p.summary() for p in res.sent("p0")])

# RFC 4861 6.1.2, 8.1: advertisements and redirects from a global address, a redirect about a group, and a
# link-layer address option of the wrong length (RFC 2464 8) are malformed
ra_glob = raw_icmp6(HOST, "ff02::1", bytes([134, 0, 0, 0, 64, 0, 7, 8]) + bytes(8))
rd_glob = raw_icmp6(HOST, A0, bytes([137, 0, 0, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, "fe80::9") +
                    socket.inet_pton(socket.AF_INET6, "2001:db8:9::5"))
rd_group = raw_icmp6(LLH, A0, bytes([137, 0, 0, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, "fe80::9") +
                     socket.inet_pton(socket.AF_INET6, "ff0e::1"))
long_lla = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0, hlim=255) / ICMPv6ND_NS(tgt=A0) / \
    Raw(bytes([1, 2]) + bytes.fromhex("020000000099") + bytes(8))
res = run(BASE, {"p0": [ra_glob, rd_glob, rd_group, long_lla]})
check("nd_bad_sources_and_options_dropped", res.drops().get("nd_malformed") == 4 and not nas(res), (res.drops(), res.sent("p0")))

# an NA for the Subnet-Router anycast address comes from a unicast address of ours (RFC 4861 7.2.4)
res = run(BASE, {"p0": [ns("2001:db8:1::")]})
check("anycast_na_from_unicast", len(nas(res)) == 1 and nas(res)[0][IPv6].src == A0 and
      not icmp6(nas(res)[0])[4] & 0x20, [p.summary() for p in res.sent("p0")])
# ... on a prefix longer than /104 too: its anycast address's solicited-node group is taken (it was
# dropped as a group the router is not in, while MLD said it was)
res = run(BASE + ["addr add 2001:db8:5::1:1/120 dev p0"], {"p0": [ns("2001:db8:5::1:0", src="2001:db8:5::1:2")]})
check("anycast_long_prefix_ns_answered", len(nas(res)) == 1, ([p.summary() for p in res.sent("p0")], res.drops()))

# no Redirect to a packet that carries one of our own addresses as source
res = run(BASE + ["neigh add 2001:db8:1::3 lladdr 02:00:00:00:00:03 dev p0"], {"p0": [udp("2001:db8:1::3", src=LL0)]})
check("no_redirect_to_own_address", not of_type(res, "p0", 137), [p.summary() for p in res.sent("p0")])

# --- datagrams to the router in fragments are reassembled (RFC 8200 4.5) ---
big = IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=0x1234) / ICMPv6EchoRequest(id=3, seq=4, data=bytes(range(256)) * 12)
pieces = [Ether(dst=R0, src=H1) / f for f in fragment6(big, 1280)]
res = run(BASE, {"p0": [pieces[2], pieces[0], pieces[1]]})
out = [p for p in res.sent("p0") if IPv6ExtHdrFragment in p]
check("fragmented_echo_answered_in_fragments", len(out) == 3 and all(len(p) <= 14 + 1280 for p in out), [p.summary() for p in out])
whole = IPv6(bytes(defragment6([p[IPv6] for p in out]))) if len(out) == 3 else None
if whole is not None and ICMPv6EchoReply in whole:
    msg = bytes(whole[ICMPv6EchoReply])
    pseudo = socket.inet_pton(socket.AF_INET6, A0) + socket.inet_pton(socket.AF_INET6, HOST) + struct.pack("!I", len(msg)) + b"\0\0\0\x3a"
    check("fragmented_echo_reply_fields", whole[ICMPv6EchoReply].id == 3 and whole[ICMPv6EchoReply].seq == 4 and
          whole[IPv6].src == A0 and whole[IPv6].dst == HOST, whole.summary())
    check("fragmented_echo_reply_data_and_checksum", whole[ICMPv6EchoReply].data == bytes(range(256)) * 12 and inet_cksum(pseudo + msg) == 0)
else:
    check("fragmented_echo_reply_reassembles", False, [p.summary() for p in out])
check("fragmented_echo_counted", res.summary["delivered"].get("echo6") == 3 and not res.drops(), (res.summary["delivered"], res.drops()))

# ... with other extension headers before the Fragment header (the unfragmentable part) or after it
# (in the first fragment): reassembled and answered all the same (RFC 8200 4.5)
def frag_echo(before, after, ident):
    dg = IPv6(src=HOST, dst=A0)
    for h in before:
        dg = dg / h
    dg = dg / IPv6ExtHdrFragment(id=ident)
    for h in after:
        dg = dg / h
    return [Ether(dst=R0, src=H1) / f for f in fragment6(dg / ICMPv6EchoRequest(id=ident, seq=1, data=b"q" * 600), 300)]


for name, before, after in (("dest_opts_after", [], [IPv6ExtHdrDestOpt()]),
                            ("dest_opts_before", [IPv6ExtHdrDestOpt()], []),
                            ("hop_by_hop_before_dest_opts_after", [IPv6ExtHdrHopByHop()], [IPv6ExtHdrDestOpt()]),
                            ("routing_done_after", [], [IPv6ExtHdrRouting(segleft=0, addresses=["2001:db8:9::5"])]),
                            ("routing_done_before", [IPv6ExtHdrRouting(segleft=0, addresses=["2001:db8:9::5"])], [])):
    fpieces = frag_echo(before, after, 0x400 + len(name))
    res = run(BASE, {"p0": fpieces})
    out = [p for p in res.sent("p0") if IPv6ExtHdrFragment in p]
    # the reply carries its Fragment header and nothing else (RFC 4443 4.2; RFC 5095 3: no type 0
    # routing header); looked at before defragment6(), which takes the headers off in place
    check("fragmented_echo_reply_headers_" + name, len(out) == len(fpieces) and
          all(p[IPv6].nh == 44 and p[IPv6ExtHdrFragment].nh == 58 for p in out), [p.summary() for p in out])
    whole = IPv6(bytes(defragment6([p[IPv6].copy() for p in out]))) if len(out) == len(fpieces) else None
    ok = whole is not None and ICMPv6EchoReply in whole and whole[ICMPv6EchoReply].data == b"q" * 600
    if ok:
        msg = bytes(whole[ICMPv6EchoReply])
        pseudo = socket.inet_pton(socket.AF_INET6, A0) + socket.inet_pton(socket.AF_INET6, HOST) + \
            struct.pack("!I", len(msg)) + b"\0\0\0\x3a"
        ok = inet_cksum(pseudo + msg) == 0
    check("fragmented_echo_answered_" + name, ok and res.summary["delivered"].get("echo6") == len(fpieces),
          ([p.summary() for p in res.sent("p0")], res.drops()))
# to the Subnet-Router anycast address: the reply comes from a unicast address (RFC 4443 2.2 (b)), as a
# whole request's; reserved bits set in the request's Fragment headers go back zero (RFC 8200 4.5)
fpieces = [Ether(dst=R0, src=H1) / f for f in
           fragment6(IPv6(src=HOST, dst="2001:db8:1::") / IPv6ExtHdrFragment(id=0x504) / ICMPv6EchoRequest(data=b"w" * 600), 300)]
for f in fpieces:
    f[IPv6ExtHdrFragment].res1 = 0x5a
    f[IPv6ExtHdrFragment].res2 = 3
res = run(BASE, {"p0": fpieces})
out = [p for p in res.sent("p0") if IPv6ExtHdrFragment in p]
check("fragmented_echo_to_anycast_from_unicast", len(out) == len(fpieces) and all(p[IPv6].src == A0 for p in out) and
      all(p[IPv6ExtHdrFragment].res1 == 0 and p[IPv6ExtHdrFragment].res2 == 0 for p in out), [p.summary() for p in out])
whole = IPv6(bytes(defragment6([p[IPv6].copy() for p in out]))) if len(out) == len(fpieces) else None
check("fragmented_echo_to_anycast_checksum", whole is not None and ICMPv6EchoReply in whole and
      inet_cksum(socket.inet_pton(socket.AF_INET6, A0) + socket.inet_pton(socket.AF_INET6, HOST) +
                 struct.pack("!I", len(bytes(whole[ICMPv6EchoReply]))) + b"\0\0\0\x3a" + bytes(whole[ICMPv6EchoReply])) == 0,
      whole.summary() if whole is not None else None)
# an option that says discard, in a Destination Options header after the Fragment header: the
# datagram is dropped with its Parameter Problem, pointing into the first fragment (RFC 8200 4.2)
fpieces = frag_echo([], [IPv6ExtHdrDestOpt(options=[HBHOptUnknown(otype=0x9e, optdata=b"\0\0\0\0")])], 0x501)
res = run(BASE, {"p0": fpieces})
pp = of_type(res, "p0", 4)
check("fragmented_unknown_option_parameter_problem",
      [(icmp6(p)[1], struct.unpack("!I", icmp6(p)[4:8])[0]) for p in pp] == [(2, 50)] and
      res.drops().get("ip6_unknown_option") == len(fpieces), (res.sent("p0"), res.drops()))
# a fragment whose datagram would pass 65535 bytes of payload once reassembled, the unfragmentable
# Destination Options header counted: Parameter Problem at its Fragment Offset (RFC 8200 4.5)
late = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrDestOpt() / \
    IPv6ExtHdrFragment(id=0x503, offset=8189, m=0, nh=17) / Raw(b"z" * 20)
res = run(BASE, {"p0": [late]})
pp = of_type(res, "p0", 4)
check("fragment_past_65535_with_unfragmentable_part", [(icmp6(p)[1], struct.unpack("!I", icmp6(p)[4:8])[0]) for p in pp] == [(0, 50)] and
      res.drops().get("reasm_bad_fragment") == 1, (res.sent("p0"), res.drops()))
# UDP in fragments behind a Destination Options header: Port Unreachable, the checksum checked
# over the datagram without the header
dg = IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=0x502) / IPv6ExtHdrDestOpt() / UDP(sport=5, dport=33434) / Raw(b"u" * 700)
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / f for f in fragment6(dg, 400)]})
unreach = of_type(res, "p0", 1)
check("fragmented_udp_behind_dest_opts_port_unreachable", len(unreach) == 1 and icmp6(unreach[0])[1] == 4 and
      res.drops().get("port_unreachable") and not res.drops().get("l4_bad_checksum"), (res.sent("p0"), res.drops()))

# an echo reply that leaves by a narrower link than its request came in on: the router is its
# source, and a source fragments (RFC 8200 4.5); never a frame over the link's MTU
cfg = BASE + ["port set p0 mtu 1280", "neigh add 2001:db8:1::7 lladdr 02:00:00:00:00:07 dev p0",
              "route add 2001:db8:7::/48 via 2001:db8:1::7"]
req = Ether(dst=R1, src=GW) / IPv6(src="2001:db8:7::5", dst=A1) / ICMPv6EchoRequest(id=5, seq=6, data=b"w" * 1400)
res = run(cfg, {"p1": [req]})
out = res.sent("p0")
check("local_reply_fragmented_to_mtu", len(out) == 2 and all(IPv6ExtHdrFragment in p and len(p) <= 14 + 1280 for p in out),
      [(p.summary(), len(p)) for p in out])
whole = IPv6(bytes(defragment6([p[IPv6] for p in out]))) if len(out) == 2 else None
check("local_reply_fragments_reassemble", whole is not None and ICMPv6EchoReply in whole and
      whole[ICMPv6EchoReply].data == b"w" * 1400 and whole[IPv6].src == A1 and whole[IPv6].dst == "2001:db8:7::5" and
      icmp6_ok(Ether() / whole) and
      out[0][Ether].dst == "02:00:00:00:00:07", whole.summary() if whole is not None else out)
# the same for a request that came in fragments: each piece of the reply, turned around from one of the
# request, is cut again within the one datagram (its identification, offsets from its own)
big = IPv6(src="2001:db8:7::5", dst=A1) / IPv6ExtHdrFragment(id=0x4321) / ICMPv6EchoRequest(id=9, seq=9, data=b"v" * 2800)
res = run(cfg, {"p1": [Ether(dst=R1, src=GW) / f for f in fragment6(big, 1500)]})
out = res.sent("p0")
check("local_reply_fragments_cut_again", len(out) >= 3 and all(len(p) <= 14 + 1280 and l3(p)[6] == 44 and l3(p)[40] == 58
                                                                and l3(p)[44:48] == b"\0\0\x43\x21" for p in out),
      [(p.summary(), len(p)) for p in out])
whole = IPv6(bytes(defragment6([p[IPv6] for p in out]))) if out else None
check("local_reply_fragments_cut_again_reassemble", whole is not None and ICMPv6EchoReply in whole and
      whole[ICMPv6EchoReply].data == b"v" * 2800 and icmp6_ok(Ether() / whole), whole.summary() if whole is not None else out)

# a piece missing: Time Exceeded code 1 at the end of the input (the first piece came)
res = run(BASE, {"p0": [pieces[0], pieces[1]]})
errs = errors(res)
check("reassembly_timeout_time_exceeded", len(errs) == 1 and icmp6(errs[0])[:2] == bytes([3, 1]) and errs[0][IPv6].src == A0 and
      icmp6_ok(errs[0]), [e.summary() for e in errs])
check("reassembly_timeout_counted", res.drops().get("reasm_timeout") == 2, res.drops())

# RFC 8200 4.5: more to come but not a multiple of 8 bytes: Parameter Problem at the Payload Length
odd = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=5, m=1, nh=17) / Raw(b"x" * 13)
res = run(BASE, {"p0": [odd]})
pp = of_type(res, "p0", 4)
check("odd_fragment_parameter_problem", len(pp) == 1 and icmp6(pp[0])[1] == 0 and struct.unpack("!I", icmp6(pp[0])[4:8])[0] == 4,
      res.sent("p0"))
check("odd_fragment_counted", res.drops().get("reasm_bad_fragment") == 1, res.drops())
# RFC 8200 4.5: a first fragment without the whole upper-layer header: Parameter Problem code 3
short = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=7, m=1, nh=6) / Raw(b"y" * 8)
res = run(BASE, {"p0": [short]})
pp = of_type(res, "p0", 4)
check("first_fragment_short_parameter_problem", len(pp) == 1 and icmp6(pp[0])[1] == 3 and res.drops().get("reasm_bad_fragment") == 1,
      (res.sent("p0"), res.drops()))

# an atomic fragment is processed alone (RFC 6946); overlapping pieces abandon the datagram (RFC 5722)
atomic = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=0x1234) / ICMPv6EchoRequest(id=1, seq=1)
lap = Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / IPv6ExtHdrFragment(id=0x1234, offset=100, m=1, nh=58) / Raw(b"o" * 16)
res = run(BASE, {"p0": [pieces[0], atomic, lap, pieces[1], pieces[2]]})
reps = [p for p in res.sent("p0") if ICMPv6EchoReply in p]
check("atomic_fragment_answered_alone", len(reps) == 1 and reps[0][ICMPv6EchoReply].seq == 1, res.sent("p0"))
check("overlap_abandons_datagram", res.drops().get("reasm_overlap") == 4 and len(res.sent("p0")) == 1 and not res.drops().get("reasm_timeout"),
      (res.sent("p0"), res.drops()))

# --- frames in = forwarded + delivered + dropped; what the router sent adds up ---
mix = [udp("2001:db8:9::5"), udp(A0), Ether(dst=R0, src=H1) / IPv6(src=HOST, dst=A0) / TCP(), udp("2001:db8:9::5", hlim=1),
       echo(A0), ns(A0), ns(A0, hlim=1), udp("fe80::99"), udp("2001:db8:77::1")]
res = run(BASE, {"p0": mix})
s = res.summary
delivered = sum(s.get("delivered", {}).values())
check("local_udp6_tcp6_answered", res.drops().get("port_unreachable") == 1 and res.drops().get("tcp_reset") == 1, res.drops())
check("accounting_adds_up", s["ports"][0]["rx_packets"] == len(mix) == s["forwarded"] + delivered + sum(s["drops"].values()),
      (s["ports"][0]["rx_packets"], s["forwarded"], delivered, s["drops"]))
check("accounting_output", s["local_out"] == s["icmp_errors"] + 3 + s["neigh_requests"] and s["icmp_errors"] == 3,
      (s["local_out"], s["icmp_errors"], s["neigh_requests"]))

# --- hostile input: mutated and truncated ND, ICMPv6 and extension-header frames ---
rng = random.Random(6)
seeds = [ns(A0), ns(A0, src="::", lladdr=None), Ether(dst=R0) / na_in[IPv6], rs, echo(A0), echo("ff02::1", l2dst="33:33:00:00:00:01"),
         err_in, err_ext, ext, udp("2001:db8:9::5", hlim=1), ns(LL0, src=LLH)]
frames = []
for i in range(600):
    raw = bytearray(bytes(seeds[i % len(seeds)]))
    for _ in range(rng.randint(1, 4)):
        raw[rng.randrange(14 + 6, len(raw))] = rng.randrange(256)    # keep the IPv6 version
    if rng.random() < 0.5:
        raw = raw[: rng.randint(14, len(raw))]
        if rng.random() < 0.7 and len(raw) >= 54:
            raw[18:20] = struct.pack("!H", len(raw) - 54)              # payload length that fits
    plen = struct.unpack("!H", raw[18:20])[0] if len(raw) >= 54 else -1
    if raw[20:21] == b"\x3a" and 4 <= plen <= len(raw) - 54 and rng.random() < 0.8:
        # a correct checksum, so that the ND and ICMPv6 parsers see the damage
        raw[56:58] = b"\0\0"
        pseudo = bytes(raw[22:54]) + struct.pack("!I", plen) + b"\0\0\0\x3a"
        raw[56:58] = struct.pack("!H", inet_cksum(pseudo + bytes(raw[54:54 + plen])))
    frames.append(Ether(bytes(raw)))
res = run(BASE + ["route add 2001:db8:8::/48 via 2001:db8:2::3"], {"p0": frames})
s = res.summary
check("hostile_input_survived", res.rc == 0 and s["ports"][0]["rx_packets"] == len(frames), res.stderr[-2000:])
check("hostile_input_accounted", s["ports"][0]["rx_packets"] == s["forwarded"] + sum(s["delivered"].values()) + sum(s["drops"].values()),
      (s["forwarded"], s["delivered"], s["drops"]))

# --- routes that lead nowhere: blackhole silent, unreachable 1/0, prohibit 1/1 (RFC 4443 3.1) ---
res = run(BASE + ["route add 2001:db8:61::/48 blackhole", "route add 2001:db8:62::/48 unreachable", "route add 2001:db8:63::/48 prohibit"],
          {"p0": [udp("2001:db8:61::1"), udp("2001:db8:62::1"), udp("2001:db8:63::1")]})
errs = [p for p in res.sent("p0") if ICMPv6DestUnreach in p]
check("route6_reject_answers", [e[ICMPv6DestUnreach].code for e in errs] == [0, 1], [e.summary() for e in errs])
check("route6_reject_counted", res.drops().get("blackhole") == 1 and res.drops().get("route_reject") == 2, res.drops())

# --- Redirect (RFC 4861 8.2): a packet leaving by the port it came in on ---
from scapy.all import ICMPv6ND_Redirect, ICMPv6NDOptDstLLAddr as TLLA, ICMPv6NDOptRedirectedHdr  # noqa: E402

GW0, GW0_LL = "02:00:00:00:00:33", "fe80::33"
HAIRPIN6 = BASE + [
    "neigh add %s lladdr %s dev p0" % (GW0_LL, GW0),
    "route add 2001:db8:8::/48 via %s dev p0" % GW0_LL,
    "route add 2001:db8:7::/48 via 2001:db8:1::254",
    "neigh add 2001:db8:1::254 lladdr 02:00:00:00:00:44 dev p0",
    "neigh add 2001:db8:1::3 lladdr 02:00:00:00:00:13 dev p0",
]


def redirects6(res):
    return [p for p in res.sent("p0") if ICMPv6ND_Redirect in p]


orig = udp("2001:db8:8::5", hlim=9, payload=b"r" * 1400)
res = run(HAIRPIN6, {"p0": [orig]})
fwd = [p for p in res.sent("p0") if UDP in p and ICMPv6ND_Redirect not in p]
red = redirects6(res)
check("redirect6_packet_still_forwarded", len(fwd) == 1 and fwd[0][Ether].dst == GW0 and fwd[0][IPv6].hlim == 8, res.sent("p0"))
check("redirect6_sent", len(red) == 1, res.sent("p0"))
if red:
    r = red[0]
    check("redirect6_from_link_local_hlim_255", r[IPv6].src == LL0 and r[IPv6].dst == HOST and r[IPv6].hlim == 255 and r[Ether].dst == H1,
          r.summary())
    check("redirect6_target_and_destination", r[ICMPv6ND_Redirect].tgt == GW0_LL and r[ICMPv6ND_Redirect].dst == "2001:db8:8::5",
          (r[ICMPv6ND_Redirect].tgt, r[ICMPv6ND_Redirect].dst))
    check("redirect6_target_lladdr", TLLA in r and r[TLLA].lladdr == GW0, r.show(dump=True))
    rh = bytes(r[ICMPv6NDOptRedirectedHdr])
    check("redirect6_redirected_header_fits_1280", len(bytes(r[IPv6])) <= 1280 and rh[1] * 8 == len(rh) and rh[8:48] == bytes(orig[IPv6])[:40],
          (len(bytes(r[IPv6])), rh[:2]))
    raw = bytes(r[IPv6])
    check("redirect6_checksum_valid", inet_cksum(raw[8:40] + struct.pack("!I", len(raw) - 40) + b"\0\0\0\x3a" + raw[40:]) == 0)
check("redirect6_counted", res.summary.get("redirects") == 1, res.summary.get("redirects"))

# on-link destination: the target is the destination itself
res = run(HAIRPIN6, {"p0": [udp("2001:db8:1::3")]})
red = redirects6(res)
check("redirect6_onlink_target_is_destination", len(red) == 1 and red[0][ICMPv6ND_Redirect].tgt == "2001:db8:1::3", res.sent("p0"))
# a gateway known only by a global address cannot be named (RFC 4861 8.1): none
res = run(HAIRPIN6, {"p0": [udp("2001:db8:7::5")]})
check("redirect6_not_to_global_gateway", not redirects6(res) and res.summary.get("forwarded") == 1, res.sent("p0"))
res = run(HAIRPIN6 + ["port set p0 redirects off"], {"p0": [udp("2001:db8:8::5")]})
check("redirect6_off_forwards_silently", not redirects6(res) and res.summary.get("forwarded") == 1, res.sent("p0"))
# a source off the link (not a neighbour) gets none
res = run(HAIRPIN6 + ["route add 2001:db8:6::/48 via %s dev p0" % GW0_LL], {"p0": [udp("2001:db8:8::5", src="2001:db8:6::9")]})
check("redirect6_not_to_off_link_source", not redirects6(res) and res.summary.get("forwarded") == 1, res.sent("p0"))

# --- MLD: a querier on the link learns the router's groups (RFC 3810 6, RFC 2710 4) ---
def mld_query(version=2, group="::", src="fe80::99", hlim=1, dst="ff02::1", l2dst="33:33:00:00:00:01"):
    q = ICMPv6MLQuery2(mladdr=group) if version == 2 else ICMPv6MLQuery(mladdr=group)
    return Ether(dst=l2dst, src=H1) / IPv6(src=src, dst=dst, hlim=hlim) / \
        IPv6ExtHdrHopByHop(options=[RouterAlert()]) / q


def mld_reports(res, port="p0"):
    """(IPv6 header, Hop-by-Hop header, MLD message, frame) of each report the router sent."""
    out = []
    for p in res.sent(port):
        raw = l3(p) if IPv6 in p else b""
        if len(raw) >= 56 and raw[6] == 0 and raw[40] == 58 and raw[48] in (131, 143):
            out.append((raw[:40], raw[40:48], raw[48:], p))
    return out


def mld_ok(ip, msg):
    pseudo = ip[8:40] + struct.pack("!I", len(msg)) + b"\0\0\0\x3a"
    return inet_cksum(pseudo + msg) == 0


def sn(addr):
    return socket.inet_pton(socket.AF_INET6, sn_group(addr)[0])


def a6(addr):
    return socket.inet_pton(socket.AF_INET6, addr)


# the groups the router takes on p0: all-routers (link, site), and the solicited-node groups of
# its addresses and of its Subnet-Router anycast address (A0 and LL0 share one: ::1 at the end)
p0_groups = {a6("ff02::2"), a6("ff05::2"), sn(A0), sn(LL0), sn("2001:db8:1::")}
res = run(BASE, {"p0": [mld_query()]})
reps = mld_reports(res)
check("mld2_general_query_one_report", len(reps) == 1 and reps[0][2][0] == 143, [p.summary() for p in res.sent("p0")])
if len(reps) == 1:
    ip, hbh, msg, frame = reps[0]
    recs = [msg[8 + 20 * i: 28 + 20 * i] for i in range(struct.unpack("!H", msg[6:8])[0])]
    check("mld2_report_addressing", ip[7] == 1 and ip[8:24] == a6(LL0) and ip[24:40] == a6("ff02::16") and
          frame[Ether].dst == "33:33:00:00:00:16" and frame[Ether].src == R0, frame.summary())
    check("mld2_report_router_alert", hbh[2:6] == b"\x05\x02\x00\x00", hbh.hex())
    check("mld2_report_checksum", mld_ok(ip, msg))
    check("mld2_report_groups", {r[4:20] for r in recs} == p0_groups and len(recs) == len(p0_groups) and
          all(r[0] == 2 and r[1:4] == b"\0\0\0" for r in recs),
          [socket.inet_ntop(socket.AF_INET6, r[4:20]) for r in recs])
# a group's own query: that group alone; a group the router is not in: nothing
res = run(BASE, {"p0": [mld_query(group="ff02::2", dst="ff02::2", l2dst="33:33:00:00:00:02")]})
reps = mld_reports(res)
check("mld2_group_query_that_group", len(reps) == 1 and struct.unpack("!H", reps[0][2][6:8])[0] == 1 and
      reps[0][2][12:28] == a6("ff02::2"), [p.summary() for p in res.sent("p0")])
res = run(BASE, {"p0": [mld_query(group="ff02::fb", dst="ff02::1")]})
check("mld2_group_query_not_ours", not mld_reports(res), [p.summary() for p in res.sent("p0")])
# an MLDv1 querier gets MLDv1 reports, each to its group
res = run(BASE, {"p0": [mld_query(version=1)]})
reps = mld_reports(res)
check("mld1_reports_per_group", len(reps) == len(p0_groups) and
      {r[2][8:24] for r in reps} == p0_groups and all(r[2][0] == 131 and r[0][24:40] == r[2][8:24] and
                                                     mld_ok(r[0], r[2]) and r[0][7] == 1 for r in reps),
      [p.summary() for p in res.sent("p0")])
# queries not from a router on the link are not answered
res = run(BASE, {"p0": [mld_query(src=HOST), mld_query(hlim=2)]})
check("mld_query_not_link_local_ignored", not mld_reports(res), [p.summary() for p in res.sent("p0")])
# a query about some sources of a group of ours: the router wants them all (RFC 3810 6.3: IS_IN)
srcs = ["2001:db8:77::1", "2001:db8:77::2"]
q = Ether(dst="33:33:00:00:00:02", src=H1) / IPv6(src="fe80::99", dst="ff02::2", hlim=1) / \
    IPv6ExtHdrHopByHop(options=[RouterAlert()]) / ICMPv6MLQuery2(mladdr="ff02::2", sources_number=2, sources=srcs)
res = run(BASE, {"p0": [q]})
reps = mld_reports(res)
check("mld2_source_query_is_include", len(reps) == 1 and reps[0][2][8] == 1 and reps[0][2][10:12] == b"\0\x02" and
      reps[0][2][12:28] == a6("ff02::2") and reps[0][2][28:60] == a6(srcs[0]) + a6(srcs[1]) and mld_ok(reps[0][0], reps[0][2]),
      [r[2].hex() for r in reps])
# a burst of general queries is answered once (a second's quiet per interface); lengths between the
# two versions' (25-27 bytes) are no query
def mld_raw(msg, src="fe80::99", dst="ff02::1"):
    pseudo = a6(src) + a6(dst) + struct.pack("!I", len(msg)) + b"\0\0\0\x3a"
    msg = msg[:2] + struct.pack("!H", inet_cksum(pseudo + msg)) + msg[4:]
    return Ether(dst="33:33:00:00:00:01", src=H1) / IPv6(src=src, dst=dst, hlim=1) / \
        IPv6ExtHdrHopByHop(nh=58, options=[RouterAlert()]) / Raw(msg)


bad = [mld_raw(bytes([130, 0, 0, 0, 0x27, 0x10]) + bytes(18 + k)) for k in (1, 2, 3)]
res = run(BASE, {"p0": bad})
check("mld_query_odd_length_ignored", not mld_reports(res) and res.summary["delivered"].get("other6") == 3,
      ([p.summary() for p in res.sent("p0")], res.summary["delivered"], res.drops()))
res = run(BASE, {"p0": [mld_raw(bytes([130, 0, 0, 0, 0x27, 0x10]) + bytes(18))] + [mld_query() for _ in range(5)]})
check("mld_query_burst_answered_once", len(mld_reports(res)) == len(p0_groups) and
      all(r[2][0] == 131 for r in mld_reports(res)), [p.summary() for p in res.sent("p0")])
# a group's own queries back to back (a router leaving both all-routers groups) are each answered
res = run(BASE, {"p0": [mld_query(group="ff02::2", dst="ff02::2", l2dst="33:33:00:00:00:02"),
                        mld_query(group="ff05::2", dst="ff05::2", l2dst="33:33:00:00:00:02")]})
check("mld_group_queries_each_answered", sorted(r[2][12:28] for r in mld_reports(res)) == sorted([a6("ff02::2"), a6("ff05::2")]),
      [p.summary() for p in res.sent("p0")])

check("all_runs_exit_0", not bad_exits, "\n".join("rc %d: %s" % e for e in bad_exits[:3]))

done()
