# NAT44 through a pcap port: masquerade, port forwards, static mappings, checked field by
# field (RFC 4787 mapping and filtering, RFC 5382 TCP, RFC 5508 ICMP, RFC 1624 checksums).
#
# One pcap port carries both sides, in order: inside hosts untagged on p0 (10.0.1.0/24),
# the outside on the VLAN sub-port p0.2 (10.0.2.1 is the router's outside address).
# Conversations run with --budget 1: a reply never shares a poll with what it answers.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxlab  # noqa: E402
from rxlab import check, done  # noqa: E402
from scapy.all import ICMP, IP, TCP, UDP, Dot1Q, Ether, IPerror, Raw, UDPerror, checksum, fragment, in4_chksum  # noqa: E402

R0 = "02:00:00:00:00:01"
H1, H3, H2 = "02:00:00:00:00:11", "02:00:00:00:00:13", "02:00:00:00:00:22"
IN1, IN3, PUB, GW, FAR, FAR2 = "10.0.1.2", "10.0.1.3", "10.0.2.1", "10.0.2.2", "10.9.1.1", "10.9.1.7"
BASE = [
    "port add p0.2 vlan:parent=p0,id=2",
    "addr add 10.0.1.1/24 dev p0",
    "addr add 10.0.2.1/24 dev p0.2",
    "neigh add %s lladdr %s dev p0" % (IN1, H1),
    "neigh add %s lladdr %s dev p0" % (IN3, H3),
    "neigh add %s lladdr %s dev p0.2" % (GW, H2),
    "route add 10.9.0.0/16 via %s" % GW,
    "icmp ratelimit 100000 burst 1000",
]
MASQ = ["nat add masquerade out p0.2 src 10.0.1.0/24"]
bad_exits = []


def inside(pkt, mac=H1):
    return Ether(src=mac, dst=R0) / pkt


def outside(pkt):
    return Ether(src=H2, dst=R0) / Dot1Q(vlan=2) / pkt


def run(rules, frames, args=(), port_args=""):
    res = rxlab.run(BASE + rules, {"p0": frames}, ports=("p0",), args=("--budget", "1") + tuple(args),
                    port_args=port_args)
    if res.rc != 0:
        bad_exits.append((res.rc, res.stderr[-2000:]))
    return res


def sent(res, out=None):
    """The IP packets the router sent: to the outside (out=True), the inside (False) or all."""
    got = []
    for f in res.sent("p0"):
        tagged = f.haslayer(Dot1Q)
        if IP in f and (out is None or out == tagged):
            got.append(f[IP])
    return got


def inet_ok(ip):
    """The IPv4 header checksum of @ip holds."""
    return checksum(bytes(ip)[:ip.ihl * 4]) == 0


def csum_ok(ip):
    """Every checksum of @ip holds: IP, TCP or UDP (a UDP 0 is none), ICMP and an ICMP error's quoted IP header."""
    raw = bytes(ip)
    p = IP(raw)
    l4 = raw[p.ihl * 4:p.len]
    if not inet_ok(p):
        return False
    if p.proto in (6, 17):
        return (p.proto == 17 and l4[6:8] == b"\0\0") or in4_chksum(p.proto, p, l4) == 0
    if p.proto == 1:
        if checksum(l4) != 0:
            return False
        if IPerror in p:
            q = bytes(p[IPerror])
            return checksum(q[:(q[0] & 15) * 4]) == 0
    return True


# ---- masquerade: UDP out and back, the port kept (RFC 4787 REQ-1, port preservation) ----
udp_out = inside(IP(src=IN1, dst=FAR, ttl=64) / UDP(sport=5000, dport=53) / Raw(b"q" * 20))
udp_back = outside(IP(src=FAR, dst=PUB, ttl=60) / UDP(sport=53, dport=5000) / Raw(b"a" * 20))
res = run(MASQ, [udp_out, udp_back])
out, back = sent(res, True), sent(res, False)
check("masq_udp_out_translated", len(out) == 1 and out[0].src == PUB and out[0][UDP].sport == 5000 and
      out[0].dst == FAR and out[0][UDP].dport == 53 and out[0].ttl == 63, [p.summary() for p in out])
check("masq_udp_out_checksums", out and csum_ok(out[0]), out and out[0].show(dump=True))
check("masq_udp_back_translated", len(back) == 1 and back[0].dst == IN1 and back[0][UDP].dport == 5000 and
      back[0].src == FAR and back[0][UDP].sport == 53, [p.summary() for p in back])
check("masq_udp_back_checksums", back and csum_ok(back[0]), back and back[0].show(dump=True))

# a UDP checksum of zero stays zero (RFC 768: none computed)
z = inside(IP(src=IN1, dst=FAR) / UDP(sport=5001, dport=53, chksum=0) / Raw(b"z" * 8))
res = run(MASQ, [z])
out = sent(res, True)
check("masq_udp_zero_checksum_stays_zero", len(out) == 1 and out[0].src == PUB and
      bytes(out[0][UDP])[6:8] == b"\0\0", [p.summary() for p in out])

# ---- two inside hosts on one source port: the second gets another port (no overloading) ----
a = inside(IP(src=IN1, dst=FAR) / UDP(sport=6000, dport=53))
b = inside(IP(src=IN3, dst=FAR) / UDP(sport=6000, dport=53), mac=H3)
a2 = inside(IP(src=IN1, dst=FAR2) / UDP(sport=6000, dport=53))     # same inside endpoint, elsewhere
res = run(MASQ, [a, b, a2])
out = sent(res, True)
ports = [p[UDP].sport for p in out]
check("masq_collision_other_port", len(out) == 3 and ports[0] == 6000 and ports[1] != 6000 and
      1024 <= ports[1] <= 65535, ports)
check("masq_endpoint_independent_mapping", len(out) == 3 and ports[2] == 6000 and out[2].dst == FAR2, ports)

# ---- TCP: SYN out, SYN-ACK back, ACK out ----
syn = inside(IP(src=IN1, dst=FAR) / TCP(sport=40000, dport=80, flags="S", seq=1000))
synack = outside(IP(src=FAR, dst=PUB) / TCP(sport=80, dport=40000, flags="SA", seq=5000, ack=1001))
ack = inside(IP(src=IN1, dst=FAR) / TCP(sport=40000, dport=80, flags="A", seq=1001, ack=5001))
res = run(MASQ + ["filter add forward ct-state established,related accept",
                  "filter add forward in p0 ct-state new accept", "filter policy forward drop"],
          [syn, synack, ack])
out, back = sent(res, True), sent(res, False)
check("masq_tcp_handshake", len(out) == 2 and len(back) == 1 and all(p.src == PUB for p in out) and
      back[0].dst == IN1 and back[0][TCP].dport == 40000 and back[0][TCP].flags == "SA",
      ([p.summary() for p in out], [p.summary() for p in back]))
check("masq_tcp_checksums", out and back and all(csum_ok(p) for p in out + back))

# simultaneous open (RFC 5382 REQ-2 ... as RFC 9293's): both SYNs cross, then both SYN-ACKs
s_in = inside(IP(src=IN1, dst=FAR) / TCP(sport=40200, dport=7000, flags="S", seq=100))
s_out = outside(IP(src=FAR, dst=PUB) / TCP(sport=7000, dport=40200, flags="S", seq=900))
sa_in = inside(IP(src=IN1, dst=FAR) / TCP(sport=40200, dport=7000, flags="SA", seq=100, ack=901))
sa_out = outside(IP(src=FAR, dst=PUB) / TCP(sport=7000, dport=40200, flags="SA", seq=900, ack=101))
res = run(MASQ + ["filter add forward ct-state established,related accept",
                  "filter add forward in p0 ct-state new accept", "filter policy forward drop"],
          [s_in, s_out, sa_in, sa_out])
out, back = [p for p in sent(res, True) if TCP in p], [p for p in sent(res, False) if TCP in p]
check("masq_tcp_simultaneous_open", len(out) == 2 and len(back) == 2 and all(p.src == PUB for p in out) and
      [str(p[TCP].flags) for p in back] == ["S", "SA"] and all(p.dst == IN1 for p in back),
      ([p.summary() for p in out], [p.summary() for p in back], res.drops()))

# ---- ICMP echo: the identifier is the port (RFC 5508) ----
ping = inside(IP(src=IN1, dst=FAR) / ICMP(type=8, id=77, seq=1) / Raw(b"p" * 16))
pong = outside(IP(src=FAR, dst=PUB) / ICMP(type=0, id=77, seq=1) / Raw(b"p" * 16))
res = run(MASQ, [ping, pong])
out, back = sent(res, True), sent(res, False)
check("masq_icmp_echo", len(out) == 1 and out[0].src == PUB and out[0][ICMP].id == 77 and
      len(back) == 1 and back[0].dst == IN1 and back[0][ICMP].type == 0 and csum_ok(out[0]) and csum_ok(back[0]),
      ([p.summary() for p in out], [p.summary() for p in back]))

# ---- an ICMP error about a translated packet: outer and quoted headers translated back ----
probe = inside(IP(src=IN1, dst=FAR, ttl=5) / UDP(sport=33434, dport=33435) / Raw(b"t" * 12))
quoted = IP(src=PUB, dst=FAR, ttl=1) / UDP(sport=33434, dport=33435) / Raw(b"t" * 12)
te = outside(IP(src="10.9.0.254", dst=PUB) / ICMP(type=11, code=0) / bytes(IP(bytes(quoted)))[:28])
res = run(MASQ, [probe, te])
back = sent(res, False)
ok = len(back) == 1 and back[0].dst == IN1 and back[0].src == "10.9.0.254" and IPerror in back[0] and \
    back[0][IPerror].src == IN1 and back[0][UDPerror].sport == 33434
check("masq_icmp_error_translated", ok, [p.show(dump=True) for p in back])
check("masq_icmp_error_checksums", back and csum_ok(back[0]), back and back[0].show(dump=True))

# ---- filtering: address-and-port-dependent by default; endpoint-independent as configured ----
stranger = outside(IP(src=FAR2, dst=PUB) / UDP(sport=999, dport=5000))
res = run(MASQ, [udp_out, stranger])
check("masq_apdf_refuses_stranger", not sent(res, False) and res.drops().get("nat_no_mapping") == 1, res.drops())
res = run(MASQ + ["nat filtering endpoint-independent"], [udp_out, stranger])
back = sent(res, False)
check("masq_eif_takes_stranger", len(back) == 1 and back[0].dst == IN1 and back[0][UDP].dport == 5000 and
      back[0].src == FAR2, [p.summary() for p in back])

# address-dependent: the remote's address the mapping talks to, from any of its ports, not another address
other_port = outside(IP(src=FAR, dst=PUB) / UDP(sport=5353, dport=5000) / Raw(b"o"))
res = run(MASQ, [udp_out, other_port])
check("masq_apdf_refuses_other_port", not sent(res, False) and res.drops().get("nat_no_mapping") == 1, res.drops())
res = run(MASQ + ["nat filtering address-dependent"], [udp_out, other_port, stranger])
back = sent(res, False)
check("masq_adf_takes_known_address", len(back) == 1 and back[0].src == FAR and back[0][UDP].sport == 5353 and
      back[0].dst == IN1 and back[0][UDP].dport == 5000, [p.summary() for p in back])
check("masq_adf_refuses_other_address", res.drops().get("nat_no_mapping") == 1, res.drops())

# the router answers a ping to its outside address even when an inside host's echo holds that identifier
res = run(MASQ, [ping, outside(IP(src=FAR2, dst=PUB) / ICMP(type=8, id=77, seq=9) / Raw(b"r"))])
got = [p for p in sent(res, True) if ICMP in p and p[ICMP].type == 0]
check("masq_router_answers_ping_on_mapped_id", len(got) == 1 and got[0].src == PUB and got[0].dst == FAR2,
      ([p.summary() for p in sent(res)], res.drops()))

# what the router takes itself is not source-translated, whatever port the rule names
res = run(["nat add masquerade out p0"], [inside(IP(src=IN1, dst="10.0.1.1") / ICMP(type=8, id=5, seq=1))])
got = [p for p in sent(res, False) if ICMP in p]
check("nat_input_not_translated", len(got) == 1 and got[0].src == "10.0.1.1" and got[0].dst == IN1 and
      got[0][ICMP].type == 0 and got[0][ICMP].id == 5, ([p.summary() for p in sent(res)], res.drops()))

# ---- a port forward (dnat): outside in, the answer out with the outside address ----
FWD = ["nat add dnat in p0.2 proto tcp dport 8080 to %s:80" % IN1]
c_syn = outside(IP(src=FAR, dst=PUB) / TCP(sport=50000, dport=8080, flags="S", seq=1))
s_synack = inside(IP(src=IN1, dst=FAR) / TCP(sport=80, dport=50000, flags="SA", seq=9, ack=2))
res = run(MASQ + FWD, [c_syn, s_synack])
back, out = sent(res, False), sent(res, True)
check("dnat_in_translated", len(back) == 1 and back[0].dst == IN1 and back[0][TCP].dport == 80 and
      back[0].src == FAR and csum_ok(back[0]), [p.summary() for p in back])
check("dnat_answer_translated", len(out) == 1 and out[0].src == PUB and out[0][TCP].sport == 8080 and
      out[0].dst == FAR and csum_ok(out[0]), [p.summary() for p in out])

# ---- static 1:1 ----
res = run(["nat add static %s 10.0.2.50" % IN1],
          [inside(IP(src=IN1, dst=FAR) / UDP(sport=7000, dport=7)),
           outside(IP(src=FAR2, dst="10.0.2.50") / UDP(sport=8, dport=9))])
out, back = sent(res, True), sent(res, False)
check("static_both_ways", len(out) == 1 and out[0].src == "10.0.2.50" and out[0][UDP].sport == 7000 and
      len(back) == 1 and back[0].dst == IN1 and back[0][UDP].dport == 9,
      ([p.summary() for p in out], [p.summary() for p in back]))

# ---- hairpin (RFC 4787 REQ-9): an inside client to the forward's outside address ----
h_syn = inside(IP(src=IN3, dst=PUB) / TCP(sport=41000, dport=8080, flags="S", seq=7), mac=H3)
res = run(MASQ + FWD, [h_syn])
got = [p for p in sent(res, False) if TCP in p]
check("hairpin_forward_seen_from_outside_address", len(got) == 1 and got[0].dst == IN1 and got[0][TCP].dport == 80 and
      got[0].src == PUB and csum_ok(got[0]), [p.summary() for p in got])

# hairpin to a mapping (REQ-9): an inside host reaches another's mapping through the outside address,
# and is seen with its own mapping as the source; filtering does not stand between inside hosts
to_map = inside(IP(src=IN3, dst=PUB) / UDP(sport=6100, dport=5000) / Raw(b"h"), mac=H3)
res = run(MASQ, [udp_out, to_map])
got = [p for p in sent(res, False) if UDP in p and p.dst == IN1]
check("hairpin_to_mapping", len(got) == 1 and got[0][UDP].dport == 5000 and got[0].src == PUB and
      got[0][UDP].sport == 6100 and csum_ok(got[0]), ([p.summary() for p in sent(res)], res.drops()))
# a host to its own mapping (STUN's hairpin test): it comes back, from another port of the outside address
self_hp = inside(IP(src=IN1, dst=PUB) / UDP(sport=5000, dport=5000) / Raw(b"s"))
res = run(MASQ, [udp_out, self_hp])
got = [p for p in sent(res, False) if UDP in p and bytes(p[UDP].payload) == b"s"]
check("hairpin_to_own_mapping", len(got) == 1 and got[0].dst == IN1 and got[0][UDP].dport == 5000 and
      got[0].src == PUB and got[0][UDP].sport != 5000, ([p.summary() for p in sent(res)], res.drops()))

# ---- fragments of a translated datagram: every one translated, whichever comes first ----
big = IP(src=IN1, dst=FAR, id=4242) / UDP(sport=5300, dport=53) / Raw(bytes(range(256)) * 6)
frags = [inside(f) for f in fragment(big, fragsize=512)]
for name, order in (("in_order", frags), ("first_last", frags[1:] + frags[:1])):
    res = run(MASQ, order)
    out = sent(res, True)
    ok = len(out) == len(frags) and all(p.src == PUB and p.dst == FAR for p in out)
    firsts = [p for p in out if p.frag == 0]
    ok = ok and len(firsts) == 1 and firsts[0][UDP].sport == 5300
    # the reassembled datagram's UDP checksum holds for the translated addresses
    whole = b"".join(bytes(p[IP].payload)[:p.len - p.ihl * 4] for p in sorted(out, key=lambda p: p.frag))
    ok = ok and in4_chksum(17, IP(src=PUB, dst=FAR), whole) == 0
    ip_ok = all(inet_ok(p) for p in out)
    check("nat_fragments_" + name, ok and ip_ok,
          ([p.summary() for p in out], res.drops()))

# ---- the router's own error about a translated packet: translated back (RFC 5508 REQ-4) ----
dying = outside(IP(src=FAR, dst=PUB, ttl=1) / UDP(sport=53, dport=5000) / Raw(b"d" * 8))
res = run(MASQ, [udp_out, dying])
errs = [p for p in sent(res, True) if ICMP in p and p[ICMP].type == 11]
check("nat_router_error_translated_back", len(errs) == 1 and errs[0].dst == FAR and IPerror in errs[0] and
      errs[0][IPerror].dst == PUB and errs[0][UDPerror].dport == 5000 and csum_ok(errs[0]),
      [p.show(dump=True) for p in errs])

# ---- timeouts in the capture's time (clock=packets): a mapping lives 300 s past its last packet ----
def at(t, frame):
    frame.time = 1700000000 + t
    return frame


def answer(n):
    return outside(IP(src=FAR, dst=PUB) / UDP(sport=53, dport=5000) / Raw(b"%03d" % n))


timeline = [at(0, udp_out.copy()), at(200, answer(1)), at(250, udp_out.copy()), at(540, answer(2)),
            at(900, answer(3))]
res = run(MASQ, timeline, port_args=",clock=packets")
back = [bytes(p[UDP].payload) for p in sent(res, False) if UDP in p]
unreach = [p for p in sent(res, True) if ICMP in p and p[ICMP].type == 3]
check("nat_udp_mapping_kept_by_traffic", back == [b"001", b"002"], back)
# gone with its connection: the outside address's port is the router's own again (port unreachable, as Linux)
check("nat_udp_mapping_gone_after_300s_idle", len(unreach) == 1 and res.drops().get("port_unreachable") == 1,
      (back, res.drops()))
# the timeout is the configured one, in the capture's time too
res = run(MASQ + ["nat timeout udp 120"], [at(0, udp_out.copy()), at(110, answer(1)), at(235, answer(2))],
          port_args=",clock=packets")
back = [bytes(p[UDP].payload) for p in sent(res, False) if UDP in p]
check("nat_udp_timeout_configured", back == [b"001"] and res.drops().get("port_unreachable") == 1,
      (back, res.drops()))
# TCP: established mappings outlive 2 h (RFC 5382 REQ-5: at least 2 h 4 min)
t_syn = inside(IP(src=IN1, dst=FAR) / TCP(sport=40100, dport=80, flags="S", seq=100))
t_synack = outside(IP(src=FAR, dst=PUB) / TCP(sport=80, dport=40100, flags="SA", seq=500, ack=101))
t_ack = inside(IP(src=IN1, dst=FAR) / TCP(sport=40100, dport=80, flags="A", seq=101, ack=501))
t_data = outside(IP(src=FAR, dst=PUB) / TCP(sport=80, dport=40100, flags="PA", seq=501, ack=101) / Raw(b"late"))
res = run(MASQ, [at(0, t_syn), at(1, t_synack), at(2, t_ack), at(2 * 3600, t_data)], port_args=",clock=packets")
back = [p for p in sent(res, False) if TCP in p]
check("nat_tcp_established_outlives_2h", len(back) == 2 and bytes(back[-1][TCP].payload) == b"late",
      ([p.summary() for p in back], res.drops()))

res = run(MASQ, [at(0, t_syn), at(1, t_synack), at(2, t_ack), at(7500, t_data)], port_args=",clock=packets")
back = [p for p in sent(res, False) if TCP in p]
check("nat_tcp_established_ends_after_its_timeout", len(back) == 1, ([p.summary() for p in back], res.drops()))

# ---- ARP for a NAT's outside addresses that no interface has: a static mapping's, a pool's ----
from scapy.all import ARP  # noqa: E402


def who_has(ip):
    return Ether(src=H2, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=2) / ARP(op=1, hwsrc=H2, psrc=GW, pdst=ip)


res = run(["nat add static %s 10.0.2.50" % IN1, "nat add snat out p0.2 src 10.0.1.3 to 10.0.2.60-10.0.2.61"],
          [who_has("10.0.2.50"), who_has("10.0.2.61"), who_has("10.0.2.70")])
said = [p[ARP].psrc for p in res.sent("p0") if ARP in p and p[ARP].op == 2 and p[ARP].hwsrc == R0]
check("nat_arp_for_outside_addresses", sorted(said) == ["10.0.2.50", "10.0.2.61"], said)

# ---- bad lines: named, nothing applied ----
res = rxlab.run(BASE + ["nat add masquerade out nosuch"], {}, ports=("p0",))
check("nat_unknown_port_refused", res.rc != 0 and "nosuch" in res.stderr, res.stderr[-500:])
res = rxlab.run(BASE + FWD + ["nat add dnat in p0.2 proto tcp dport 8000-8100 to 10.0.1.3"], {}, ports=("p0",))
check("nat_forward_clash_refused", res.rc != 0 and "already forwarded" in res.stderr, res.stderr[-500:])
res = rxlab.run(BASE + FWD + ["nat add dnat in p0.2 dst %s proto tcp dport 8080 to 10.0.1.3:8080" % PUB], {},
                ports=("p0",))
check("nat_forward_clash_by_address_refused", res.rc != 0 and "already forwarded" in res.stderr, res.stderr[-500:])
res = rxlab.run(BASE + ["nat timeout udp 60"], {}, ports=("p0",))
check("nat_udp_timeout_floor", res.rc != 0 and "120" in res.stderr and "4787" in res.stderr, res.stderr[-500:])
res = rxlab.run(BASE + ["nat add snat out p0.2 to 10.0.1.1"], {}, ports=("p0",))
check("nat_pool_with_router_address_refused", res.rc != 0 and "10.0.1.1" in res.stderr, res.stderr[-500:])

res = rxlab.run(BASE, {}, ports=("p0",), port_args=",clock=banana")
check("pcap_clock_bad_value_refused", res.rc != 0 and "clock=packets" in res.stderr, res.stderr[-500:])

check("runs_exit_0", not bad_exits, bad_exits[:3])
done()
