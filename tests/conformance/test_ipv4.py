# IPv4 router conformance through pcap ports: RFC 1812 forwarding, RFC 792 ICMP, RFC 826 ARP.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rxlab import check, done, run  # noqa: E402
from scapy.all import ARP, ICMP, IP, IPerror, UDP, Dot1Q, Ether, IPOption, IPOption_NOP, Raw, TCP  # noqa: E402
from scapy.all import checksum as inet_cksum  # noqa: E402
from scapy.all import defragment, fragment  # noqa: E402

R0, R1 = "02:00:00:00:00:01", "02:00:00:00:00:02"
H1, GW = "02:00:00:00:00:11", "02:00:00:00:00:22"
BASE = [
    "addr add 10.0.1.1/24 dev p0",
    "addr add 10.0.2.1/24 dev p1",
    "neigh add 10.0.2.2 lladdr %s dev p1" % GW,
    "route add 10.9.0.0/16 via 10.0.2.2",
    "icmp ratelimit 100000 burst 1000",
]


def udp(dst, ttl=64, src="10.0.1.2", payload=b"rxpath-test-payload", **kw):
    return Ether(dst=R0, src=H1) / IP(src=src, dst=dst, ttl=ttl, **kw) / UDP(sport=1234, dport=5678) / Raw(payload)


def ip_ok(pkt):
    """True when the IPv4 header checksum verifies."""
    raw = bytes(pkt[IP])[: pkt[IP].ihl * 4]
    return inet_cksum(raw) == 0


def icmp_ok(pkt):
    return inet_cksum(bytes(pkt[ICMP])) == 0


def icmp_errors(res, port="p0"):
    return [p for p in res.sent(port) if ICMP in p and p[ICMP].type in (3, 11)]


# --- forwarding: TTL, checksum, MACs, payload ---
orig = udp("10.9.1.1")
res = run(BASE, {"p0": [orig]})
out = [p for p in res.sent("p1") if IP in p]
check("forward_exit_0", res.rc == 0, res.stderr)
check("forward_one_frame_out_p1", len(out) == 1, res.sent("p1"))
if out:
    f = out[0]
    check("forward_rewrites_macs", f[Ether].dst == GW and f[Ether].src == R1, f.summary())
    check("forward_decrements_ttl", f[IP].ttl == 63, f[IP].ttl)
    check("forward_header_checksum_valid", ip_ok(f), f[IP].chksum)
    again = f[IP].copy()
    again.chksum = None
    check("forward_checksum_matches_recompute", f[IP].chksum == IP(bytes(again)).chksum, hex(f[IP].chksum))
    check("forward_payload_intact", bytes(f[UDP]) == bytes(orig[UDP]))
check("forward_counted", res.summary.get("forwarded") == 1, res.summary.get("forwarded"))

# --- Ethernet padding is trimmed: a short packet in a 60-byte frame goes on without the pad ---
small = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", ttl=9) / UDP(sport=1, dport=2)
padded = Ether(bytes(small) + b"\x00" * (60 - len(small)))
res = run(BASE, {"p0": [padded]})
out = [p for p in res.sent("p1") if IP in p]
check("padding_trimmed", len(out) == 1 and len(bytes(out[0])) == 14 + 28, [len(bytes(p)) for p in out])

# --- options (IHL > 5) are forwarded intact ---
opt = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", ttl=20, options=[IPOption_NOP()] * 4) / UDP() / Raw(b"x" * 10)
res = run(BASE, {"p0": [opt]})
out = [p for p in res.sent("p1") if IP in p]
check("options_forwarded", len(out) == 1 and out[0][IP].ihl == 6 and bytes(out[0][IP])[20:24] == b"\x01" * 4 and ip_ok(out[0]), out)

# well-formed options that carry data are forwarded intact too (not acted on)
rr = bytes([7, 11, 4]) + bytes(8) + bytes([0])    # Record Route with two empty slots, then End of Options
ts = bytes([68, 12, 5, 0]) + bytes(8)                # Timestamp, room for two
opts = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", options=[IPOption(rr), IPOption(ts)]) / UDP() / Raw(b"o")
res = run(BASE, {"p0": [opts]})
out = [p for p in res.sent("p1") if IP in p]
check("options_rr_ts_forwarded_intact", len(out) == 1 and bytes(out[0][IP])[20:44] == bytes(opts[IP])[20:44] and ip_ok(out[0]), out)


# --- malformed options: dropped with Parameter Problem pointing at the octet in error (RFC 1812 4.3.3.5) ---
def with_options(raw, dst="10.9.1.1"):
    """A UDP packet whose options are @raw as given (padded to 32 bits with End of Options)."""
    raw = raw + bytes(-len(raw) % 4)
    return Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst=dst, ihl=5 + len(raw) // 4, options=[IPOption(raw)]) / UDP() / Raw(b"p")


bad_opts = [
    (bytes([1, 7, 2, 0]), 22),                 # (after a No Operation) Record Route 2 long: its length octet
    (bytes([7, 7, 3]) + bytes(4) + bytes(1), 22),  # Record Route pointer 3: its pointer octet
    (bytes([68, 4, 4, 0]), 22),                # Timestamp pointer 4
    (bytes([1, 1, 0x94, 9, 0, 0, 0, 0]), 22),  # Router Alert whose length runs past the header: its type octet
    (bytes([0x82, 0, 0, 0]), 20),              # length 0
    (bytes([1, 1, 1, 68]), 23),                # a type octet with no length after it
    (bytes([7, 11, 10]) + bytes(8), 22),       # Record Route pointer with room for half an address (RFC 791: in error)
    (bytes([68, 12, 9, 1]) + bytes(8), 22),    # Timestamp with addresses: room for the address, not the time
    (bytes([68, 8, 5, 2]) + bytes(4), 23),     # Timestamp flag 2, a format RFC 791 does not define: its flags octet
    (bytes([7, 7, 8]) + bytes(4) + bytes([7, 3, 4]), 27),  # a second Record Route ("at most once"): its type octet
    (bytes([68, 4, 5, 0, 68, 4, 5, 0]), 24),   # a second Timestamp
    (bytes([0x83, 7, 8]) + bytes(4) + bytes([0x89, 3, 4]), 27),  # a loose and a strict source route: two routes
    (bytes([136, 4, 0, 1, 136, 4, 0, 2]), 24),  # a second Stream Identifier
]
res = run(BASE, {"p0": [with_options(raw) for raw, _ in bad_opts] + [with_options(bytes([1, 7, 2, 0]), dst="10.0.1.1")]})
errs = icmp_errors(res) + [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 12]
pp = [e for e in errs if e[ICMP].type == 12]
check("bad_options_not_forwarded", not [p for p in res.sent("p1") if IP in p], res.sent("p1"))
check("bad_options_parameter_problem", len(pp) == len(bad_opts) + 1 and all(e[ICMP].code == 0 and icmp_ok(e) and ip_ok(e) for e in pp),
      [e.summary() for e in errs])
check("bad_options_pointers", [e[ICMP].ptr for e in pp] == [want for _, want in bad_opts] + [22], [e[ICMP].ptr for e in pp])
check("bad_options_quote_header", all(bytes(e[ICMP].payload)[:20] == bytes(with_options(raw)[IP])[:20]
                                      for e, (raw, _) in zip(pp, bad_opts)))
check("bad_options_counted", res.drops().get("ip4_bad_option") == len(bad_opts) + 1, res.drops())

# --- TTL exceeded: ICMP 11/0 from the ingress address, quoting header + at least 8 bytes ---
expired = udp("10.9.1.1", ttl=1)
res = run(BASE, {"p0": [expired]})
errs = icmp_errors(res)
check("ttl_exceeded_no_forward", not [p for p in res.sent("p1") if IP in p])
check("ttl_exceeded_icmp_sent", len(errs) == 1, res.sent("p0"))
if errs:
    e = errs[0]
    check("ttl_exceeded_type_code", (e[ICMP].type, e[ICMP].code) == (11, 0), (e[ICMP].type, e[ICMP].code))
    check("ttl_exceeded_addresses", e[IP].src == "10.0.1.1" and e[IP].dst == "10.0.1.2", e[IP].summary())
    check("ttl_exceeded_l2", e[Ether].dst == H1 and e[Ether].src == R0, e[Ether].summary())
    check("ttl_exceeded_checksums", ip_ok(e) and icmp_ok(e))
    quoted = bytes(e[ICMP])[8:]
    check("ttl_exceeded_quotes_header_and_8_bytes", quoted[:28] == bytes(expired[IP])[:28], quoted[:28].hex())
check("ttl_exceeded_drop_reason", res.drops("p0").get("ttl_exceeded") == 1, res.drops("p0"))

# an error never exceeds the link it leaves by: 576 bytes at most (RFC 1812 4.3.2.3), less on a
# narrower link, in one piece (the quote is cut, the error not fragmented)
for mtu in (300, 68):
    big = udp("10.9.1.1", ttl=1, payload=b"a" * 900)
    res = run(BASE + ["port set p0 mtu %d" % mtu], {"p0": [big]})
    errs = icmp_errors(res)
    check("error_fits_mtu_%d" % mtu, len(errs) == 1 and len(errs[0][IP]) == mtu and errs[0][IP].flags == 0 and
          errs[0][IP].frag == 0 and icmp_ok(errs[0]) and bytes(errs[0][ICMP])[8:] == bytes(big[IP])[:mtu - 28],
          [p.summary() for p in res.sent("p0")])

# ... but the header and 8 bytes are always quoted (RFC 792): on a 68-byte link, a 60-byte header's
# error goes in fragments instead of being cut inside the header
opts = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", ttl=1, options=[IPOption_NOP()] * 40) / UDP(sport=1111, dport=2222)
res = run(BASE + ["port set p0 mtu 68"], {"p0": [opts]})
pieces = [p for p in res.sent("p0") if IP in p]
whole = [p for p in defragment([p[IP] for p in pieces]) if ICMP in p]
check("error_quotes_header_and_8_on_narrow_link", len(pieces) > 1 and all(len(p[IP]) <= 68 for p in pieces) and len(whole) == 1 and
      bytes(whole[0][ICMP])[8:] == bytes(opts[IP])[:68], [p.summary() for p in pieces])

# an interface without an IPv4 address still gets its errors, from another of the router's addresses
# (RFC 1812 4.3.2.4: the router-id)
cfg = ["addr add 2001:db8:1::1/64 dev p0", "route add 10.0.1.0/24 dev p0"] + BASE[1:]
res = run(cfg, {"p0": [udp("10.9.1.1", ttl=1), udp("10.77.1.1")]})
errs = icmp_errors(res)
check("error_from_router_id_without_address", [(e[ICMP].type, e[ICMP].code, e[IP].src) for e in errs] ==
      [(11, 0, "10.0.2.1"), (3, 0, "10.0.2.1")] and all(icmp_ok(e) for e in errs), [p.summary() for p in res.sent("p0")])
# ... also once its last address is deleted: the error does not come from the address it had
cfg = BASE + ["addr del 10.0.1.1 dev p0", "route add 10.0.1.0/24 dev p0"]
res = run(cfg, {"p0": [udp("10.9.1.1", ttl=1)]})
errs = icmp_errors(res)
check("error_from_router_id_after_address_deleted", [(e[ICMP].type, e[IP].src) for e in errs] == [(11, "10.0.2.1")],
      [p.summary() for p in res.sent("p0")])

# an echo reply is a datagram of the router's own: its own identification, not the request's (RFC 6864
# 4.1): two requests with one identification get replies with two
req = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", id=0x1234) / ICMP(type=8, id=1, seq=1)
res = run(BASE, {"p0": [req, req]})
ids = [p[IP].id for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
check("echo_reply_own_ip_id", len(ids) == 2 and ids[0] != ids[1], ids)

# a route whose gateway's subnet went with its address answers as absent (Linux drops such routes):
# net unreachable at once instead of waiting on a neighbour no subnet reaches; the address back, it works
res = run(BASE + ["addr del 10.0.2.1 dev p1"], {"p0": [udp("10.9.1.1")]})
errs = icmp_errors(res)
check("gateway_subnet_gone_net_unreachable", [(e[ICMP].type, e[ICMP].code) for e in errs] == [(3, 0)] and
      res.drops().get("no_route") == 1 and not [p for p in res.sent("p1") if IP in p or ARP in p], (res.sent("p0"), res.drops()))
# ... and a covering route takes over meanwhile, as when Linux drops the route
res = run(BASE + ["addr add 10.0.3.1/24 dev p1", "neigh add 10.0.3.9 lladdr 02:00:00:00:00:39 dev p1",
                  "route add 10.0.0.0/8 via 10.0.3.9", "addr del 10.0.2.1 dev p1"], {"p0": [udp("10.9.1.1")]})
out = [p for p in res.sent("p1") if IP in p]
check("gateway_subnet_gone_covering_route", len(out) == 1 and out[0][Ether].dst == "02:00:00:00:00:39" and not res.drops(),
      (res.sent("p1"), res.drops()))
res = run(BASE + ["addr del 10.0.2.1 dev p1", "addr add 10.0.2.1/24 dev p1"], {"p0": [udp("10.9.1.1")]})
check("gateway_subnet_back_forwards", len([p for p in res.sent("p1") if IP in p]) == 1 and not res.drops(), (res.sent("p1"), res.drops()))

# --- no route: ICMP 3/0 ---
res = run(BASE, {"p0": [udp("192.0.2.77")]})
errs = icmp_errors(res)
check("no_route_unreachable_net", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (3, 0), errs)
check("no_route_drop_reason", res.drops().get("no_route") == 1, res.drops())

# --- echo: reply with the same id, sequence and data; on either interface's address ---
for dst in ("10.0.1.1", "10.0.2.1"):
    req = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst=dst) / ICMP(type=8, id=0x4242, seq=7) / Raw(b"ping-data-123")
    res = run(BASE, {"p0": [req]})
    rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
    ok = len(rep) == 1 and rep[0][ICMP].id == 0x4242 and rep[0][ICMP].seq == 7 and bytes(rep[0][Raw]) == b"ping-data-123"
    check("echo_reply_" + dst, ok, res.sent("p0"))
    check("echo_counted_with_bytes_" + dst, res.summary["delivered"]["echo4"] == 1 and
          res.summary.get("delivered_bytes") == len(req) and res.summary.get("in_packets") == 1, res.summary)
    if rep:
        check("echo_reply_addresses_" + dst, rep[0][IP].src == dst and rep[0][IP].dst == "10.0.1.2" and rep[0][Ether].dst == H1)
        check("echo_reply_checksums_" + dst, ip_ok(rep[0]) and icmp_ok(rep[0]))

# the reply's code is 0 (RFC 792), whatever the request's
req = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8, code=5, id=9, seq=9) / Raw(b"x" * 9)
rep = [p for p in run(BASE, {"p0": [req]}).sent("p0") if ICMP in p and p[ICMP].type == 0]
check("echo_reply_code_0", len(rep) == 1 and rep[0][ICMP].code == 0 and icmp_ok(rep[0]), rep)

# a frame from a group source MAC (no station has one, IEEE 802) is dropped, not answered to that
# group nor forwarded: unicast to the router (the fast path) and broadcast (the general path)
grp = [Ether(dst=R0, src="ff:ff:ff:ff:ff:ff") / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8, id=1, seq=1),
       Ether(dst=R0, src="01:00:5e:00:00:01") / IP(src="10.0.1.2", dst="10.9.1.1", ttl=1) / UDP(),
       Ether(dst="ff:ff:ff:ff:ff:ff", src="33:33:00:00:00:01") / IP(src="10.0.1.2", dst="10.0.1.255") / ICMP(type=8)]
res = run(BASE, {"p0": grp})
check("group_source_mac_dropped", res.drops().get("eth_group_source") == 3 and not res.sent("p0") and
      not res.sent("p1"), (res.drops(), res.sent("p0")))

# Record Route and Timestamp in an echo request get the router's entry in the reply (RFC 1812 4.3.3.6)
import struct  # noqa: E402
import time  # noqa: E402


def echo_with(opts):
    return Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(o) for o in opts]) / \
        ICMP(type=8, id=9, seq=9) / Raw(b"opts")


def ms_now():
    return int(time.time() * 1000) % 86400000


rr = bytes([7, 11, 8]) + bytes([10, 0, 1, 2]) + bytes(4) + bytes([1])     # one slot used (h1's), one free, NOP
ts = bytes([68, 12, 5, 0]) + bytes(8)                                     # timestamps only, room for two
before = ms_now()
res = run(BASE, {"p0": [echo_with([rr, ts])]})
rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
check("echo_options_reply", len(rep) == 1 and ip_ok(rep[0]) and icmp_ok(rep[0]), res.sent("p0"))
if rep:
    o = bytes(rep[0][IP])[20:rep[0][IP].ihl * 4]
    check("echo_record_route_filled", o[:11] == bytes([7, 11, 12, 10, 0, 1, 2, 10, 0, 1, 1]), o[:11].hex())
    stamp = struct.unpack("!I", o[16:20])[0]
    check("echo_timestamp_filled", o[12:16] == bytes([68, 12, 9, 0]) and abs(stamp - before) < 5000, (o[12:16].hex(), stamp, before))
    check("echo_payload_same", bytes(rep[0][ICMP].payload) == b"opts")
full = bytes([68, 8, 9, 0x20]) + bytes(4)                                 # full, overflow already 2
pre = bytes([68, 20, 5, 3]) + bytes([10, 0, 1, 1]) + bytes(4) + bytes([10, 9, 9, 9]) + bytes(4)  # prespecified: us, then another
# (one Timestamp a datagram: RFC 791 3.1 says it appears at most once)
res = run(BASE, {"p0": [echo_with([full]), echo_with([pre])]})
rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
if len(rep) == 2:
    o = bytes(rep[0][IP])[20:rep[0][IP].ihl * 4]
    check("echo_timestamp_full_counts_overflow", o[:4] == bytes([68, 8, 9, 0x30]), o[:4].hex())
    o = bytes(rep[1][IP])[20:rep[1][IP].ihl * 4]
    check("echo_timestamp_prespecified", o[0:4] == bytes([68, 20, 13, 3]) and o[4:8] == bytes([10, 0, 1, 1]) and o[8:12] != bytes(4) and
          o[12:20] == bytes([10, 9, 9, 9]) + bytes(4), o[0:20].hex())
else:
    check("echo_timestamp_full_counts_overflow", False, res.sent("p0"))

bad = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8, id=1, seq=1, chksum=0x1234) / Raw(b"x")
res = run(BASE, {"p0": [bad]})
check("echo_bad_checksum_dropped", not res.sent("p0") and res.drops().get("icmp_malformed") == 1, res.drops())

# --- ARP: answer for our address, not for others ---
who = Ether(dst="ff:ff:ff:ff:ff:ff", src=H1) / ARP(op=1, hwsrc=H1, psrc="10.0.1.2", pdst="10.0.1.1")
other = Ether(dst="ff:ff:ff:ff:ff:ff", src=H1) / ARP(op=1, hwsrc=H1, psrc="10.0.1.2", pdst="10.0.1.99")
res = run(BASE, {"p0": [who, other]})
rep = [p for p in res.sent("p0") if ARP in p]
check("arp_reply_one", len(rep) == 1, res.sent("p0"))
if rep:
    a = rep[0][ARP]
    check("arp_reply_fields", a.op == 2 and a.hwsrc == R0 and a.psrc == "10.0.1.1" and a.hwdst == H1 and a.pdst == "10.0.1.2"
          and rep[0][Ether].dst == H1 and rep[0][Ether].src == R0, rep[0].summary())
check("arp_other_target_dropped", res.drops().get("arp_not_for_us") == 1, res.drops())

# --- resolution: unknown next hop gets an ARP request; the reply releases the held packet ---
cfg = BASE + ["route add 10.8.0.0/16 via 10.0.2.3"]
pkt = udp("10.8.0.5")
reply = Ether(dst=R1, src="02:00:00:00:00:33") / ARP(op=2, hwsrc="02:00:00:00:00:33", psrc="10.0.2.3", hwdst=R1, pdst="10.0.2.1")
res = run(cfg, {"p0": [pkt], "p1": [reply]})
reqs = [p for p in res.sent("p1") if ARP in p and p[ARP].op == 1]
fwd = [p for p in res.sent("p1") if IP in p]
check("resolve_sends_arp_request", len(reqs) >= 1 and reqs[0][ARP].pdst == "10.0.2.3" and reqs[0][ARP].psrc == "10.0.2.1"
      and reqs[0][Ether].dst == "ff:ff:ff:ff:ff:ff", res.sent("p1"))
check("resolve_releases_held_packet", len(fwd) == 1 and fwd[0][Ether].dst == "02:00:00:00:00:33" and fwd[0][IP].ttl == 63, res.sent("p1"))

# --- unresolved: held packets dropped with a reason and answered with host unreachable ---
sent = [udp("10.7.0.1", ttl=30), udp("10.7.0.2")]
res = run(BASE + ["route add 10.7.0.0/16 via 10.0.2.4"], {"p0": sent})
errs = icmp_errors(res)
check("unresolved_host_unreachable", len(errs) == 2 and all((e[ICMP].type, e[ICMP].code) == (3, 1) for e in errs), errs)
# the quote is the header as it came in (RFC 1812 4.3.2.3): its TTL and checksum not yet taken down
check("unresolved_quote_as_received", len(errs) == 2 and all(bytes(e[ICMP].payload)[:28] == bytes(o[IP])[:28]
                                                              for e, o in zip(errs, sent)),
      [bytes(e[ICMP].payload)[:28].hex() for e in errs])
check("unresolved_drop_reason", res.drops().get("neigh_unresolved") == 2, res.drops())
check("unresolved_run_ends", res.rc == 0, res.stderr)
# asked a bounded number of times first: 3 requests, then the failure
asked = [p for p in res.sent("p1") if ARP in p and p[ARP].op == 1 and p[ARP].pdst == "10.0.2.4"]
check("unresolved_retried_3_times", len(asked) == 3, len(asked))

# --- hold queue is bounded ---
many = [udp("10.7.0.%d" % (i % 4 + 1)) for i in range(4)] + [udp("10.6.0.1") for _ in range(10)]
res = run(BASE + ["route add 10.6.0.0/16 via 10.0.2.6"], {"p0": many})
check("hold_queue_bounded", res.drops().get("neigh_hold_full", 0) == 10 - 4, res.drops())

# --- MTU: DF set -> 3/4 with the next-hop MTU; DF clear -> fragments that reassemble ---
cfg = BASE + ["port set p1 mtu 1280"]
big = udp("10.9.1.1", payload=(bytes(range(256)) * 6)[:1400], flags="DF")
res = run(cfg, {"p0": [big]})
errs = icmp_errors(res)
check("df_frag_needed", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (3, 4)
      and bytes(errs[0][ICMP])[6:8] == (1280).to_bytes(2, "big"), errs)
check("df_drop_reason", res.drops().get("frag_needed") == 1, res.drops())
big = udp("10.9.1.1", payload=(bytes(range(256)) * 6)[:1400])
res = run(cfg, {"p0": [big]})
frags = [p for p in res.sent("p1") if IP in p]
check("fragments_made", len(frags) == 2, [p.summary() for p in frags])
if len(frags) == 2:
    check("fragments_fit_mtu", all(p[IP].len <= 1280 for p in frags), [p[IP].len for p in frags])
    check("fragments_offsets", frags[0][IP].frag == 0 and frags[0][IP].flags.MF and not frags[1][IP].flags.MF
          and frags[1][IP].frag * 8 == frags[0][IP].len - 20, [(p[IP].frag, p[IP].flags) for p in frags])
    data = bytes(frags[0][IP].payload) + bytes(frags[1][IP].payload)
    check("fragments_reassemble", data == bytes(big[UDP]), len(data))
    check("fragments_checksums", all(ip_ok(p) for p in frags) and all(p[IP].ttl == 63 for p in frags))

# --- fragments whose next hop never answers: one error, to the sender ---
res = run(cfg + ["route add 10.5.0.0/16 via 10.0.2.5"], {"p0": [udp("10.5.0.1", payload=(bytes(range(256)) * 6)[:1400])]})
errs = icmp_errors(res)
check("fragments_unresolved_one_error_to_sender", len(errs) == 1 and errs[0][Ether].dst == H1 and errs[0][IP].dst == "10.0.1.2"
      and (errs[0][ICMP].type, errs[0][ICMP].code) == (3, 1), [e.summary() for e in errs])

# --- a datagram to fragment waits for its next hop whole: all its pieces go once it answers, in order ---
big = udp("10.8.0.1", payload=(bytes(range(256)) * 6)[:1352])    # six pieces: more than a neighbour holds
res = run(BASE + ["route add 10.8.0.0/16 via 10.0.2.3", "port set p1 mtu 256"], {"p0": [big], "p1": [reply]})
pieces = [p for p in res.sent("p1") if IP in p]
check("held_datagram_fragmented_whole", len(pieces) == 6 and all(p[Ether].dst == "02:00:00:00:00:33" for p in pieces) and
      [p[IP].frag * 8 for p in pieces] == [0, 232, 464, 696, 928, 1160] and not res.drops(),
      ([p.summary() for p in pieces], res.drops()))

# --- a piece of a non-first fragment is a non-first fragment too: no error about it ---
late = udp("10.5.0.1", payload=(bytes(range(256)) * 6)[:1400], frag=100, flags="MF")
res = run(cfg + ["route add 10.5.0.0/16 via 10.0.2.5"], {"p0": [late]})
check("fragment_of_fragment_no_error", not icmp_errors(res) and res.drops().get("neigh_unresolved", 0) == 1, (res.sent("p0"), res.drops()))
# --- a fragment whose data would end past 65535 bytes is malformed ---
res = run(BASE, {"p0": [udp("10.9.1.1", payload=b"z" * 1000, frag=8100, flags="MF")]})
check("fragment_past_65535_dropped", not res.sent("p1") and res.drops().get("ip4_bad_length") == 1, res.drops())
# ... its header counted: offset 65512 with 8 bytes of UDP data and a 20-byte header ends at 65540
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", frag=8189, proto=17) / Raw(b"z" * 8)]})
check("fragment_past_65535_with_header_dropped", not res.sent("p1") and res.drops().get("ip4_bad_length") == 1, res.drops())

# --- directed broadcasts: not forwarded, not answered, not a source ---
res = run(BASE, {"p0": [udp("10.0.2.255"), udp("10.0.1.255", ttl=1), udp("1.2.3.4", src="10.0.1.255")]})
check("directed_broadcast_not_forwarded", not res.sent("p1") and not icmp_errors(res), (res.sent("p1"), res.sent("p0")))
check("directed_broadcast_reasons", res.drops().get("ip4_broadcast") == 2 and res.drops().get("ip4_martian_source") == 1, res.drops())
# a packet from the wire with one of the router's own addresses as source forged it: a martian, on the
# fast path too (the first packet caches the next hop), and no error goes to us
res = run(BASE, {"p0": [udp("10.9.1.1"), udp("10.9.1.2", src="10.0.2.1"), udp("10.9.1.3", src="10.0.1.1", ttl=1),
                        udp("10.77.0.1", src="10.0.2.1"), udp("10.0.1.1", src="10.0.1.1")]})
check("own_address_source_martian", len(res.sent("p1")) == 1 and not res.sent("p0") and
      res.drops().get("ip4_martian_source") == 4, (res.sent("p1"), res.sent("p0"), res.drops()))

# ARP from a sender no host can be is neither answered nor learned (RFC 1812 5.3.7)
res = run(BASE, {"p0": [Ether(dst="ff:ff:ff:ff:ff:ff", src=H1) / ARP(op=1, hwsrc=H1, psrc=a, pdst="10.0.1.1")
                        for a in ("10.0.1.255", "10.0.1.0", "127.0.0.1", "224.0.0.5", "240.0.0.1")]})
check("arp_martian_sender_ignored", not res.sent("p0") and res.drops().get("arp_martian_sender") == 5,
      (res.sent("p0"), res.drops()))
# ARP from a sender MAC no neighbour has (a group, all zeros, the router's own) is dropped, not learned
res = run(BASE, {"p0": [Ether(dst="ff:ff:ff:ff:ff:ff", src=H1) / ARP(op=1, hwsrc=m, psrc="10.0.1.2", pdst="10.0.1.1")
                        for m in ("00:00:00:00:00:00", R0, R1)] + [udp("10.0.1.2", src="10.0.2.5")]})
check("arp_bad_sender_mac_dropped", not [p for p in res.sent("p0") if ARP in p and p[ARP].op == 2] and
      res.drops().get("arp_malformed") == 3, (res.sent("p0"), res.drops()))
check("arp_bad_sender_mac_not_learned", any(ARP in p and p[ARP].op == 1 and p[ARP].pdst == "10.0.1.2" for p in res.sent("p0")),
      [p.summary() for p in res.sent("p0")])
# a sweep of ARP requests (4,200 senders, more than the 4,096 entries of the table) leaves room for the
# neighbours traffic needs: a new gateway is still asked for, and the packet waits for it
SWEEP = ["addr add 10.0.0.1/16 dev p0", "addr add 10.1.0.1/24 dev p1", "route add 10.50.0.0/16 via 10.1.0.2"]
sweep = [Ether(dst="ff:ff:ff:ff:ff:ff", src=m) / ARP(op=1, hwsrc=m, psrc="10.0.%d.%d" % (10 + i // 250, 1 + i % 250), pdst="10.0.0.1")
         for i in range(4200) for m in ["02:11:00:00:%02x:%02x" % (i >> 8, i & 255)]]
res = run(SWEEP, {"p0": sweep + [Ether(dst=R0, src=H1) / IP(src="10.0.0.5", dst="10.50.0.9") / UDP(),
                                 Ether(dst=R0, src=H1) / IP(src="10.0.0.5", dst="10.0.200.200") / UDP()]})
asked = {p[ARP].pdst for port in ("p0", "p1") for p in res.sent(port) if ARP in p and p[ARP].op == 1}
check("arp_sweep_leaves_room", {"10.1.0.2", "10.0.200.200"} <= asked and not res.drops().get("neigh_table_full") and
      len([p for p in res.sent("p0") if ARP in p and p[ARP].op == 2]) == 4200, (sorted(asked), res.drops()))
# /31 and /32 addresses (RFC 3021): no broadcast and no subnet number; both ends of a /31 are hosts
P2P = BASE + ["addr add 10.0.6.0/31 dev p1", "addr add 10.0.5.1/32 dev p1"]
res = run(P2P, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst=d) / ICMP(type=8, id=6, seq=1)
                       for d in ("10.0.6.0", "10.0.5.1")] + [udp("10.0.6.1")]})
check("p2p_addresses_answer", len([p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]) == 2, res.sent("p0"))
check("p2p_peer_resolved_not_broadcast", any(ARP in p and p[ARP].pdst == "10.0.6.1" for p in res.sent("p1")) and
      not res.drops().get("ip4_broadcast"), (res.sent("p1"), res.drops()))

# the router's answers go the way the routing table says: to the MAC the neighbour table holds for the
# sender (configured here), and out the interface the route back leaves by (an asymmetric path)
KNOWN = "02:00:00:00:00:77"
res = run(BASE + ["neigh add 10.0.1.2 lladdr %s dev p0" % KNOWN],
          {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / ICMP(type=8, id=7, seq=1),
                  Ether(dst=R0, src=H1) / IP(src="10.9.1.1", dst="10.0.1.1") / ICMP(type=8, id=7, seq=2),
                  udp("10.77.0.1", src="10.9.1.1")]})
back = [p for p in res.sent("p0") if ICMP in p]
there = [p for p in res.sent("p1") if ICMP in p]
check("reply_to_neighbour_table_mac", len(back) == 1 and back[0][Ether].dst == KNOWN and back[0][ICMP].seq == 1,
      [p.summary() for p in res.sent("p0")])
check("reply_by_route_back", len(there) == 2 and all(p[Ether].dst == GW and p[IP].dst == "10.9.1.1" for p in there) and
      {(p[ICMP].type, p[ICMP].code) for p in there} == {(0, 0), (3, 0)}, [p.summary() for p in res.sent("p1")])
# the echo reply is from the address asked; the error from the interface it leaves by (RFC 1812 4.3.2.4)
check("reply_by_route_back_sources", sorted((p[ICMP].type, p[IP].src) for p in there) == [(0, "10.0.1.1"), (3, "10.0.2.1")],
      [p.summary() for p in there])
# a link-local sender (RFC 3927) is answered on its link, whatever the table says (here a default route via p1)
res = run(BASE + ["route add 0.0.0.0/0 via 10.0.2.2"],
          {"p0": [Ether(dst=R0, src=H1) / IP(src="169.254.7.7", dst="10.0.1.1") / ICMP(type=8, id=7, seq=3)]})
check("reply_to_link_local_stays_on_link", len([p for p in res.sent("p0") if ICMP in p]) == 1 and
      not [p for p in res.sent("p1") if ICMP in p], ([p.summary() for p in res.sent("p0")], [p.summary() for p in res.sent("p1")]))

# frames are taken in the order they came: an ARP update applies to the packets after it, not before
def arp_from(mac, ip="10.0.2.3"):
    return Ether(dst="ff:ff:ff:ff:ff:ff", src=mac) / ARP(op=1, hwsrc=mac, psrc=ip, pdst="10.0.2.1")


res = run(BASE + ["route add 10.8.0.0/16 via 10.0.2.3"],
          {"p1": [arp_from("02:00:00:00:00:33"), Ether(dst=R1, src=GW) / IP(src="10.0.2.9", dst="10.8.0.1") / UDP(),
                  arp_from("02:00:00:00:00:44"), Ether(dst=R1, src=GW) / IP(src="10.0.2.9", dst="10.8.0.2") / UDP()]})
fwd = [p for p in res.sent("p1") if UDP in p]
check("arp_update_in_arrival_order", [(p[IP].dst, p[Ether].dst) for p in fwd] ==
      [("10.8.0.1", "02:00:00:00:00:33"), ("10.8.0.2", "02:00:00:00:00:44")], [p.summary() for p in fwd])

# an answer larger than the link it leaves by goes in fragments: an echo reply on a 576-byte link
req = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", flags="DF") / ICMP(type=8, id=8, seq=8) / Raw(bytes(range(250)) * 4)
res = run(BASE + ["port set p0 mtu 576"], {"p0": [req]})
pieces = [p for p in res.sent("p0") if IP in p]
whole = defragment(pieces) if pieces else []
check("echo_reply_fragmented_to_link", len(pieces) == 2 and all(len(p[IP]) <= 576 and ip_ok(p) for p in pieces) and
      len(whole) == 1 and ICMP in whole[0] and whole[0][ICMP].type == 0 and bytes(whole[0][ICMP].payload) == bytes(req[Raw]),
      [p.summary() for p in pieces])

# a connected subnet's own number is its obsolete broadcast (RFC 1812 4.2.3.1): discarded, no ARP, redirect or error
res = run(BASE, {"p0": [udp("10.0.2.0"), udp("10.0.1.0"), udp("10.0.1.0", ttl=1)]})
check("subnet_number_silently_discarded", not res.sent("p1") and not res.sent("p0")
      and res.drops().get("ip4_broadcast") == 3, (res.sent("p1"), res.sent("p0"), res.drops()))

# --- martians, broadcast, multicast, bad checksum: never forwarded ---
cases = [
    ("martian_source_0", udp("10.9.1.1", src="0.1.2.3"), "ip4_martian_source"),
    ("martian_source_127", udp("10.9.1.1", src="127.0.0.1"), "ip4_martian_source"),
    ("martian_source_multicast", udp("10.9.1.1", src="224.0.0.5"), "ip4_martian_source"),
    ("martian_source_broadcast", udp("10.9.1.1", src="255.255.255.255"), "ip4_martian_source"),
    ("martian_destination_127", udp("127.0.0.1"), "ip4_martian_destination"),
    ("martian_destination_0", udp("0.0.0.1"), "ip4_martian_destination"),
    ("martian_source_class_e", udp("10.9.1.1", src="240.0.0.1"), "ip4_martian_source"),
    ("martian_destination_class_e", udp("250.1.2.3"), "ip4_martian_destination"),
    ("limited_broadcast", udp("255.255.255.255"), "ip4_broadcast"),
    ("multicast_not_forwarded", udp("239.1.1.1"), "ip4_multicast"),
]
for name, frame, reason in cases:
    res = run(BASE, {"p0": [frame]})
    check(name, not res.sent("p1") and not icmp_errors(res) and res.drops().get(reason) == 1, (res.drops(), res.sent("p0")))
# IPv4 link-local stays on its link whatever the routes say (RFC 3927 2.7); 169.1/16 is not link-local
cfg = BASE + ["route add 169.254.0.0/16 via 10.0.2.2", "route add 169.1.0.0/16 via 10.0.2.2",
              "addr add 169.254.7.1/24 dev p0"]
res = run(cfg, {"p0": [udp("169.254.1.1"), udp("10.9.1.1", src="169.254.9.9"), udp("169.1.2.3"),
                       Ether(dst=R0, src=H1) / IP(src="169.254.7.9", dst="169.254.7.1") / ICMP(type=8, id=1, seq=1)]})
fwd = [p for p in res.sent("p1") if IP in p]
check("ip4_link_local_not_forwarded", [p[IP].dst for p in fwd] == ["169.1.2.3"] and
      res.drops().get("ip4_link_local") == 2 and not icmp_errors(res), ([p.summary() for p in fwd], res.drops()))
check("ip4_link_local_own_address_answered", any(ICMP in p and p[ICMP].type == 0 and p[IP].src == "169.254.7.1"
                                                 for p in res.sent("p0")), res.sent("p0"))
badsum = udp("10.9.1.1")
badsum[IP].chksum = 0x1234
res = run(BASE, {"p0": [badsum]})
check("bad_checksum_dropped", not res.sent("p1") and res.drops().get("ip4_bad_checksum") == 1, res.drops())
l2b = udp("10.9.1.1")
l2b[Ether].dst = "ff:ff:ff:ff:ff:ff"
res = run(BASE, {"p0": [l2b]})
check("l2_broadcast_not_forwarded", not res.sent("p1") and res.drops().get("l2_broadcast_forward") == 1, res.drops())

# --- never an error about an ICMP error, a non-first fragment, or a multicast destination ---
err_in = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", ttl=1) / ICMP(type=3, code=1) / Raw(bytes(IP(dst="1.2.3.4") / UDP()))
frag2 = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.9.1.1", ttl=1, frag=100) / Raw(b"y" * 16)
res = run(BASE, {"p0": [err_in, frag2]})
check("no_error_about_error_or_fragment", not icmp_errors(res) and res.drops().get("ttl_exceeded") == 2, (res.sent("p0"), res.drops()))

# --- rate limit holds ---
res = run(BASE[:-1] + ["icmp ratelimit 1 burst 5"], {"p0": [udp("10.9.1.1", ttl=1) for _ in range(20)]})
check("icmp_rate_limited", len(icmp_errors(res)) == 5 and res.summary.get("icmp_ratelimited") == 15,
      (len(icmp_errors(res)), res.summary.get("icmp_ratelimited")))

# --- VLAN sub-port: tagged in, routed out untagged; echo answered tagged ---
cfg = ["port add p0.100 vlan:parent=p0,id=100", "addr add 10.0.3.1/24 dev p0.100"] + BASE
tagged = Ether(dst=R0, src=H1) / Dot1Q(vlan=100) / IP(src="10.0.3.2", dst="10.9.1.1", ttl=30) / UDP() / Raw(b"v")
ping = Ether(dst=R0, src=H1) / Dot1Q(vlan=100) / IP(src="10.0.3.2", dst="10.0.3.1") / ICMP(type=8, id=3, seq=4)
unknown = Ether(dst=R0, src=H1) / Dot1Q(vlan=200) / IP(src="10.0.3.2", dst="10.9.1.1") / UDP()
res = run(cfg, {"p0": [tagged, ping, unknown]})
fwd = [p for p in res.sent("p1") if IP in p]
check("vlan_routed_untagged", len(fwd) == 1 and Dot1Q not in fwd[0] and fwd[0][IP].ttl == 29, res.sent("p1"))
rep = [p for p in res.sent("p0") if ICMP in p]
check("vlan_echo_reply_tagged", len(rep) == 1 and Dot1Q in rep[0] and rep[0][Dot1Q].vlan == 100 and rep[0][IP].src == "10.0.3.1", res.sent("p0"))
check("vlan_unknown_dropped", res.drops().get("vlan_unknown") == 1, res.drops())
# a sub-port's MTU stays within its port's (as a Linux VLAN device's): 1400 on p1 is p1.200's too
cfg = ["port add p1.200 vlan:parent=p1,id=200", "addr add 10.0.4.1/24 dev p1.200",
       "neigh add 10.0.4.2 lladdr %s dev p1.200" % GW, "route add 10.8.0.0/16 via 10.0.4.2",
       "port set p1 mtu 1400"] + BASE
res = run(cfg, {"p0": [udp("10.8.1.1", payload=bytes(1450), flags="DF")]})
errs = icmp_errors(res)
check("vlan_mtu_within_parent", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (3, 4)
      and bytes(errs[0][ICMP])[6:8] == (1400).to_bytes(2, "big") and not res.sent("p1"), (errs, res.sent("p1")))
# configured above its port's, it is held to it (a reload's order must not matter) and says so
res = run(cfg + ["port set p1.200 mtu 1500"], {"p0": [udp("10.8.1.1", payload=bytes(1450), flags="DF")]})
errs = icmp_errors(res)
check("vlan_mtu_above_parent_held", res.rc == 0 and "mtu 1500 held to 1400, the MTU of p1" in res.stderr and
      len(errs) == 1 and bytes(errs[0][ICMP])[6:8] == (1400).to_bytes(2, "big"), (res.stderr[-300:], errs))

# --- transport to the router with no host path: answered as a host with nothing listening ---
def tcp_to(dst, **kw):
    return Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst=dst) / TCP(sport=40000, dport=22, **kw)


def tcp_ok(pkt):
    """True when the TCP checksum verifies over the IPv4 pseudo-header."""
    seg = bytes(pkt[IP])[pkt[IP].ihl * 4: pkt[IP].len]
    pseudo = bytes(IP(src=pkt[IP].src, dst=pkt[IP].dst))[12:20] + bytes([0, 6]) + len(seg).to_bytes(2, "big")
    return inet_cksum(pseudo + seg) == 0


# traceroute's last probe, to the router's far address: Port Unreachable from that address (RFC 1122 3.2.2.1)
probe = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.2.1", ttl=1, id=777) / UDP(sport=50000, dport=33434) / Raw(b"traceroute")
res = run(BASE, {"p0": [probe]})
errs = icmp_errors(res)
check("udp_to_router_port_unreachable", len(errs) == 1 and errs[0][ICMP].type == 3 and errs[0][ICMP].code == 3, res.sent("p0"))
if errs:
    e = errs[0]
    check("port_unreachable_from_address_probed", e[IP].src == "10.0.2.1" and e[IP].dst == "10.0.1.2", e[IP].summary())
    check("port_unreachable_checksums", ip_ok(e) and icmp_ok(e))
    check("port_unreachable_quotes_probe", bytes(e[ICMP].payload)[:28] == bytes(probe[IP])[:28])
    check("port_unreachable_to_sender_mac", e[Ether].dst == H1 and e[Ether].src == R0, e[Ether].summary())
check("port_unreachable_counted", res.drops().get("port_unreachable") == 1 and res.summary["icmp_errors"] == 1,
      (res.drops(), res.summary.get("icmp_errors")))

# TCP: a SYN gets RST+ACK acknowledging it, a segment with ACK a RST from its ack number (RFC 9293 3.10.7.1)
syn = tcp_to("10.0.1.1", flags="S", seq=1000)
data = tcp_to("10.0.1.1", flags="PA", seq=5000, ack=777) / Raw(b"hello")
fin = tcp_to("10.0.1.1", flags="F", seq=42) / Raw(b"abc")
rst = tcp_to("10.0.1.1", flags="R", seq=1)
res = run(BASE, {"p0": [syn, data, fin, rst]})
rsts = [p for p in res.sent("p0") if TCP in p]
check("tcp_to_router_three_resets", len(rsts) == 3, res.sent("p0"))
if len(rsts) == 3:
    a, b, c = rsts
    check("tcp_syn_answered_rst_ack", a[TCP].flags == "RA" and a[TCP].seq == 0 and a[TCP].ack == 1001, (a[TCP].flags, a[TCP].seq, a[TCP].ack))
    check("tcp_ack_answered_rst_from_ack", b[TCP].flags == "R" and b[TCP].seq == 777, (b[TCP].flags, b[TCP].seq))
    check("tcp_fin_acknowledged_with_data", c[TCP].flags == "RA" and c[TCP].ack == 42 + 3 + 1, (c[TCP].flags, c[TCP].ack))
    check("tcp_reset_ports_swapped", a[TCP].sport == 22 and a[TCP].dport == 40000, a.summary())
    check("tcp_reset_addresses", a[IP].src == "10.0.1.1" and a[IP].dst == "10.0.1.2" and a[Ether].dst == H1, a.summary())
    check("tcp_reset_checksums", all(ip_ok(p) and tcp_ok(p) for p in rsts))
check("tcp_reset_never_answers_reset", res.drops().get("tcp_reset") == 4, res.drops())

# other protocols: Protocol Unreachable; corrupted UDP dropped unanswered; broadcast frames not answered
gre = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", proto=47) / Raw(b"\x00\x00\x08\x00")
bad = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / UDP(sport=1, dport=2, chksum=0x1234) / Raw(b"corrupt")
nosum = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / UDP(sport=1, dport=2, chksum=0) / Raw(b"no checksum")
bcast = Ether(dst="ff:ff:ff:ff:ff:ff", src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / UDP(sport=1, dport=2)
res = run(BASE, {"p0": [gre, bad, nosum, bcast]})
errs = icmp_errors(res)
codes = sorted(e[ICMP].code for e in errs)
check("other_protocol_unreachable_and_zero_udp_checksum_answered", codes == [2, 3], [e.summary() for e in errs])
check("protocol_unreachable_from_router", all(e[IP].src == "10.0.1.1" for e in errs), [e[IP].src for e in errs])
d = res.drops()
check("local_l4_drops_named", d.get("protocol_unreachable") == 1 and d.get("l4_bad_checksum") == 1 and d.get("port_unreachable") == 1, d)
check("broadcast_not_answered", sum(res.summary.get("delivered", {}).values()) == 1, res.summary.get("delivered"))

# --- datagrams to the router in fragments are reassembled (RFC 1122 3.3.2) ---
big = IP(src="10.0.1.2", dst="10.0.1.1", id=4242) / ICMP(id=7, seq=9) / Raw(bytes(range(256)) * 12)
pieces = [Ether(dst=R0, src=H1) / f for f in fragment(big, fragsize=1200)]
res = run(BASE, {"p0": [pieces[1], pieces[2], pieces[0]]})    # out of order
out = [p for p in res.sent("p0") if IP in p]
check("fragmented_echo_answered_in_fragments", len(out) == 3 and all(ip_ok(p) and len(p) <= 1234 for p in out), [p.summary() for p in out])
whole = [p for p in defragment([p[IP] for p in out]) if ICMP in p]
if whole:
    w = whole[0]
    check("fragmented_echo_reply_fields", w[ICMP].type == 0 and (w[ICMP].id, w[ICMP].seq) == (7, 9) and
          w[IP].src == "10.0.1.1" and w[IP].dst == "10.0.1.2", w.summary())
    check("fragmented_echo_reply_data_and_checksum", bytes(w[ICMP].payload) == bytes(big[ICMP].payload) and inet_cksum(bytes(w[ICMP])) == 0)
else:
    check("fragmented_echo_reply_reassembles", False, [p.summary() for p in out])
check("fragmented_echo_counted", res.summary["delivered"].get("echo4") == 3 and not res.drops(), (res.summary["delivered"], res.drops()))

# a piece missing: given up at the end of the input, Time Exceeded code 1 when the first piece came
res = run(BASE, {"p0": [pieces[0], pieces[2]]})
errs = icmp_errors(res)
check("reassembly_timeout_time_exceeded", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (11, 1) and
      errs[0][IP].src == "10.0.1.1" and icmp_ok(errs[0]), [e.summary() for e in errs])
check("reassembly_timeout_counted", res.drops().get("reasm_timeout") == 2, res.drops())
res = run(BASE, {"p0": [pieces[1], pieces[2]]})
check("reassembly_timeout_no_first_no_error", not icmp_errors(res) and res.drops().get("reasm_timeout") == 2, (res.sent("p0"), res.drops()))

# overlapping pieces abandon the datagram, the pieces still to come included (RFC 5722 4);
# an exact duplicate is dropped alone
lap = Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", id=4242, frag=148, flags="MF", proto=1) / Raw(b"o" * 16)
res = run(BASE, {"p0": [pieces[0], lap, pieces[1], pieces[2]]})
check("overlap_abandons_datagram", not res.sent("p0") and res.drops().get("reasm_overlap") == 4 and not res.drops().get("reasm_timeout") and
      not icmp_errors(res), (res.sent("p0"), res.drops()))
# ... but abandoned datagrams do not hold the table: after 16 of them (as many as it has slots), a
# good datagram is still reassembled, in the slot of one
laps = []
for i in range(16):
    laps += [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", id=5000 + i, flags="MF", proto=17) / Raw(b"a" * 16),
             Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", id=5000 + i, frag=1, flags="MF", proto=17) / Raw(b"b" * 16)]
res = run(BASE, {"p0": laps + pieces})
check("abandoned_datagrams_make_room", len([p for p in res.sent("p0") if IP in p]) == 3 and res.drops().get("reasm_overlap") == 32 and
      not res.drops().get("reasm_full"), res.drops())
res = run(BASE, {"p0": [pieces[0], pieces[1], pieces[1], pieces[2]]})
check("duplicate_dropped_alone", len([p for p in res.sent("p0") if IP in p]) == 3 and res.drops().get("reasm_overlap") == 1,
      (res.sent("p0"), res.drops()))

# UDP in fragments to a closed port: one Port Unreachable, for the whole datagram
dgram = IP(src="10.0.1.2", dst="10.0.1.1", id=77) / UDP(sport=9, dport=33434) / Raw(b"u" * 3000)
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / f for f in fragment(dgram, fragsize=1200)]})
errs = icmp_errors(res)
check("fragmented_udp_port_unreachable", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (3, 3), [e.summary() for e in errs])
check("fragmented_udp_counted", res.drops().get("port_unreachable") == 3, res.drops())

# --- routes that lead nowhere (iproute2's types): blackhole silent, unreachable 3/1, prohibit 3/13 ---
REJECTS = BASE + ["route add 10.61.0.0/16 blackhole", "route add 10.62.0.0/16 unreachable", "route add 10.63.0.0/16 prohibit",
                  "route add 10.61.7.0/24 via 10.0.2.2"]
res = run(REJECTS, {"p0": [udp("10.61.1.1"), udp("10.62.1.1"), udp("10.63.1.1"), udp("10.61.7.7")]})
errs = icmp_errors(res)
check("route_blackhole_silent", res.drops().get("blackhole") == 1, res.drops())
check("route_reject_answers", [(e[ICMP].type, e[ICMP].code, e[IPerror].dst) for e in errs] == [(3, 1, "10.62.1.1"), (3, 13, "10.63.1.1")],
      [e.summary() for e in errs])
check("route_reject_counted", res.drops().get("route_reject") == 2, res.drops())
check("route_blackhole_longer_prefix_wins", len([p for p in res.sent("p1") if UDP in p and p[IP].dst == "10.61.7.7"]) == 1, res.sent("p1"))

# --- source routes through the router (RFC 791 3.1, RFC 1812 5.2.4.5): followed, recorded ---
def srr(kind, route, ptr=4, dst="10.0.1.1"):
    body = b"".join(bytes(int(x) for x in a.split(".")) for a in route)
    opt = bytes([kind, 3 + len(body), ptr]) + body + bytes([0])
    return Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst=dst, ttl=30, options=[IPOption(opt)]) / UDP(sport=7, dport=9) / Raw(b"sr")


res = run(BASE, {"p0": [srr(131, ["10.9.1.1"])]})
out = [p for p in res.sent("p1") if UDP in p]
check("lsrr_followed", len(out) == 1 and out[0][IP].dst == "10.9.1.1" and out[0][IP].ttl == 29 and ip_ok(out[0]) and
      out[0][Ether].dst == GW, res.sent("p1"))
if out:
    o = bytes(out[0][IP])[20:28]
    check("lsrr_records_egress_address", o[:7] == bytes([131, 7, 8, 10, 0, 2, 1]), o.hex())
res = run(BASE, {"p0": [srr(131, ["10.0.1.1", "10.9.1.1"])]})
out = [p for p in res.sent("p1") if UDP in p]
check("lsrr_through_us_twice", len(out) == 1 and out[0][IP].dst == "10.9.1.1" and bytes(out[0][IP])[22] == 12, res.sent("p1"))
# with a TTL that ends here: Time Exceeded quoting the header as it came, not as the route rewrote it
late = srr(131, ["10.9.1.1"])
late[IP].ttl = 1
res = run(BASE, {"p0": [late]})
errs = icmp_errors(res)
check("lsrr_ttl_exceeded_quotes_as_received", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (11, 0) and
      bytes(errs[0][ICMP].payload)[:28] == bytes(late[IP])[:28] and not res.sent("p1"),
      [bytes(e[ICMP].payload)[:28].hex() for e in errs])
res = run(BASE, {"p0": [srr(131, ["192.0.2.99"])]})
errs = icmp_errors(res)
check("lsrr_no_route_source_route_failed", len(errs) == 1 and (errs[0][ICMP].type, errs[0][ICMP].code) == (3, 5) and
      res.drops().get("ip4_source_route") == 1, (res.sent("p0"), res.drops()))
res = run(BASE, {"p0": [srr(137, ["10.9.1.1"])]})
errs = icmp_errors(res)
check("ssrr_next_not_neighbour_fails", len(errs) == 1 and errs[0][ICMP].code == 5 and not [p for p in res.sent("p1") if UDP in p],
      (res.sent("p0"), res.sent("p1")))
res = run(BASE, {"p0": [srr(137, ["10.0.2.2"])]})
out = [p for p in res.sent("p1") if UDP in p]
check("ssrr_to_neighbour_followed", len(out) == 1 and out[0][IP].dst == "10.0.2.2" and out[0][Ether].dst == GW, res.sent("p1"))
# a completed route ends here: the packet is the router's; the echo reply goes back the way it
# came, the route reversed (RFC 1122 3.2.2.6): first to the last hop, then the others, then the source
done_route = bytes([131, 11, 12, 10, 5, 5, 5, 10, 0, 0, 9, 0])
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(done_route)]) / ICMP(id=5, seq=5)]})
rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
check("lsrr_complete_is_ours", len(rep) == 1 and rep[0][IP].src == "10.0.1.1", (res.sent("p0"), res.drops()))
if rep:
    o = bytes(rep[0][IP])[20:32]
    check("echo_source_route_reversed", rep[0][IP].dst == "10.0.0.9" and o[:11] == bytes([131, 11, 4, 10, 5, 5, 5, 10, 0, 1, 2]) and
          ip_ok(rep[0]) and icmp_ok(rep[0]), (rep[0][IP].dst, o.hex()))
three = bytes([137, 15, 16, 10, 5, 5, 1, 10, 5, 5, 2, 10, 5, 5, 3, 0])   # strict, completed through A, B, C
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(three)]) / ICMP(id=6, seq=6)]})
rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
check("echo_source_route_reversed_three", len(rep) == 1 and rep[0][IP].dst == "10.5.5.3" and
      bytes(rep[0][IP])[20:35] == bytes([137, 15, 4, 10, 5, 5, 2, 10, 5, 5, 1, 10, 0, 1, 2]), res.sent("p0"))
# a route that recorded the source host first (RFC 1122 3.2.1.8 case (B)) names it once on the way back:
# the option loses that slot and No Operations fill the four bytes it leaves
case_b = bytes([131, 15, 16, 10, 0, 1, 2, 10, 5, 5, 1, 10, 5, 5, 2, 0])
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(case_b)]) / ICMP(id=7, seq=7)]})
rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
check("echo_source_route_case_b", len(rep) == 1 and rep[0][IP].dst == "10.5.5.2" and
      bytes(rep[0][IP])[20:36] == bytes([131, 11, 4, 10, 5, 5, 1, 10, 0, 1, 2, 1, 1, 1, 1, 0]) and ip_ok(rep[0]) and icmp_ok(rep[0]),
      [bytes(p[IP])[20:36].hex() for p in rep] or res.sent("p0"))
only_source = bytes([131, 7, 8, 10, 0, 1, 2, 0])
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(only_source)]) / ICMP(id=8, seq=8)]})
rep = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0]
check("echo_source_route_only_source", len(rep) == 1 and rep[0][IP].dst == "10.0.1.2" and
      bytes(rep[0][IP])[20:28] == bytes([131, 3, 4, 1, 1, 1, 1, 0]) and ip_ok(rep[0]), [bytes(p[IP])[20:28].hex() for p in rep])
# the sender wrote the way back: no reply to our own address, a broadcast or a martian (RFC 1812 5.3.7)
bad_back = ["127.0.0.1", "255.255.255.255", "224.0.0.1", "0.0.0.0", "10.0.1.255", "10.0.2.1"]
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1",
                                                    options=[IPOption(bytes([131, 7, 8]) + bytes(int(x) for x in a.split(".")) + bytes(1))]) /
                        ICMP(id=9, seq=i) for i, a in enumerate(bad_back)]})
check("echo_source_route_bad_way_back", not [p for p in res.sent("p0") if ICMP in p] and
      res.drops().get("ip4_source_route") == len(bad_back), (res.sent("p0"), res.drops()))
# an echo request in fragments gets the same options back as a whole one: the route reversed in each
frag_req = IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(done_route)]) / ICMP(id=10, seq=10) / Raw(b"f" * 120)
res = run(BASE, {"p0": [Ether(dst=R0, src=H1) / f for f in fragment(frag_req, fragsize=64)]})
rep = [p for p in res.sent("p0") if IP in p]
check("echo_fragments_source_route_reversed", len(rep) >= 2 and all(p[IP].dst == "10.0.0.9" and ip_ok(p) and
      bytes(p[IP])[20:31] == bytes([131, 11, 4, 10, 5, 5, 5, 10, 0, 1, 2]) for p in rep), [p.summary() for p in rep] or res.drops())
# a full timestamp whose overflow count is at 15 would wrap: in error (RFC 791), Parameter Problem at its flags octet
res = run(BASE, {"p0": [echo_with([bytes([68, 8, 9, 0xf0]) + bytes(4)])]})
pp = [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 12]
check("echo_timestamp_overflow_wraps", not [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 0] and
      len(pp) == 1 and pp[0][ICMP].ptr == 23 and res.drops().get("ip4_bad_option") == 1, (res.sent("p0"), res.drops()))
# `ip source-route off` (RFC 7126 4.3, 4.4): dropped quietly instead
res = run(BASE + ["ip source-route off"], {"p0": [srr(131, ["10.9.1.1"])]})
check("source_route_off_drops", not res.sent("p1") and not icmp_errors(res) and res.drops().get("ip4_source_route") == 1,
      (res.sent("p0"), res.sent("p1"), res.drops()))
# ... and at the end of a completed route too: no echo reply goes back along it
res = run(BASE + ["ip source-route off"], {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1", options=[IPOption(done_route)]) /
                                                 ICMP(id=11, seq=11)]})
check("source_route_off_no_reversed_reply", not res.sent("p0") and res.drops().get("ip4_source_route") == 1, (res.sent("p0"), res.drops()))
# to another destination, the option goes on intact
res = run(BASE, {"p0": [srr(131, ["10.8.8.8"], dst="10.9.1.1")]})
out = [p for p in res.sent("p1") if UDP in p]
check("lsrr_elsewhere_forwarded_intact", len(out) == 1 and out[0][IP].dst == "10.9.1.1" and bytes(out[0][IP])[20:28] == bytes([131, 7, 4, 10, 8, 8, 8, 0]),
      res.sent("p1"))

# --- Redirect (RFC 1812 4.3.3.2, 5.2.7.2): a packet that leaves by the port it came in on ---
GW0 = "02:00:00:00:00:33"
HAIRPIN = BASE + [
    "neigh add 10.0.1.254 lladdr %s dev p0" % GW0,
    "route add 10.8.0.0/16 via 10.0.1.254",
    "neigh add 10.0.1.3 lladdr 02:00:00:00:00:13 dev p0",
]


def redirects(res):
    return [p for p in res.sent("p0") if ICMP in p and p[ICMP].type == 5]


orig = udp("10.8.1.1", ttl=9)
res = run(HAIRPIN, {"p0": [orig]})
fwd = [p for p in res.sent("p0") if UDP in p and ICMP not in p]
red = redirects(res)
check("redirect_packet_still_forwarded", len(fwd) == 1 and fwd[0][Ether].dst == GW0 and fwd[0][IP].ttl == 8, res.sent("p0"))
check("redirect_sent", len(red) == 1, res.sent("p0"))
if red:
    r = red[0]
    check("redirect_host_code_1", r[ICMP].code == 1, r[ICMP].code)
    check("redirect_names_gateway", r[ICMP].gw == "10.0.1.254", r[ICMP].gw)
    check("redirect_from_ingress_address", r[IP].src == "10.0.1.1" and r[IP].dst == "10.0.1.2" and r[Ether].dst == H1,
          r.summary())
    check("redirect_checksums_valid", ip_ok(r) and icmp_ok(r))
    check("redirect_quotes_header_as_received", bytes(r[ICMP])[8:8 + 28] == bytes(orig[IP])[:28], bytes(r[ICMP])[8:40])
check("redirect_counted", res.summary.get("redirects") == 1 and res.summary.get("forwarded") == 1,
      (res.summary.get("redirects"), res.summary.get("forwarded")))

# to a host on the same subnet: the redirect names the destination itself
res = run(HAIRPIN, {"p0": [udp("10.0.1.3")]})
red = redirects(res)
check("redirect_onlink_names_destination", len(red) == 1 and red[0][ICMP].gw == "10.0.1.3", res.sent("p0"))

# not when switched off, not to a source off the subnet, not about a source-routed packet
res = run(HAIRPIN + ["port set p0 redirects off"], {"p0": [udp("10.8.1.1")]})
check("redirect_off_forwards_silently", not redirects(res) and len([p for p in res.sent("p0") if UDP in p]) == 1, res.sent("p0"))
res = run(HAIRPIN + ["route add 10.7.0.0/16 via 10.0.1.254"], {"p0": [udp("10.8.1.1", src="10.7.0.5")]})
check("redirect_not_to_off_subnet_source", not redirects(res) and res.summary.get("forwarded") == 1, res.sent("p0"))
lsrr = bytes([131, 7, 4]) + bytes([10, 8, 1, 1]) + bytes([0])
res = run(HAIRPIN, {"p0": [Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.8.1.1", options=[IPOption(lsrr)]) / UDP() / Raw(b"s")]})
check("redirect_not_for_source_route", not redirects(res), res.sent("p0"))
# a packet that goes out by another port gets none
res = run(HAIRPIN, {"p0": [udp("10.9.1.1")]})
check("no_redirect_across_ports", not redirects(res) and res.summary.get("forwarded") == 1, res.sent("p0"))

# --- frames in = forwarded + delivered + dropped; what the router sent adds up ---
mix = [udp("10.9.1.1"), udp("10.0.1.1"), Ether(dst=R0, src=H1) / IP(src="10.0.1.2", dst="10.0.1.1") / TCP(), udp("10.9.1.1", ttl=1)]
res = run(BASE, {"p0": mix})
s = res.summary
delivered = sum(s.get("delivered", {}).values())
check("accounting_adds_up", s["ports"][0]["rx_packets"] == len(mix) == s["forwarded"] + delivered + sum(s["drops"].values()),
      (s["ports"][0]["rx_packets"], s["forwarded"], delivered, s["drops"]))
check("accounting_output", s["local_out"] == s["icmp_errors"] + 1 and s["icmp_errors"] == 2,
      (s["local_out"], s["icmp_errors"]))

done()
