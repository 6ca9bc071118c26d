# The firewall through a pcap port: stateless rules, sets, connection tracking (nftables'
# and nf_conntrack's semantics), reject (RFC 9293 3.10.7.1, RFC 792, RFC 4443), fragments.
#
# One pcap port carries both sides, so every frame of a conversation is in one file in
# order: h1 (inside) untagged on p0, h2 (outside) on the VLAN sub-port p0.2. Conversations
# run with --budget 1: a reply can never share a poll with what it answers.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxlab  # noqa: E402
from rxlab import RXPATH, check, done  # noqa: E402
from scapy.all import (  # noqa: E402
    ICMP, IP, TCP, UDP, Dot1Q, Ether, ICMPv6DestUnreach, ICMPv6EchoReply, ICMPv6EchoRequest,
    ICMPv6TimeExceeded, IPerror, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
    Raw, UDPerror, defragment, fragment, fragment6, wrpcap,
)
from scapy.all import checksum as inet_cksum  # noqa: E402

R0 = "02:00:00:00:00:01"
H1, H2 = "02:00:00:00:00:11", "02:00:00:00:00:22"
IN4, OUT4, FAR4 = "10.0.1.2", "10.0.2.2", "10.9.1.1"          # inside host, outside host, beyond it
IN6, OUT6, FAR6 = "2001:db8:1::2", "2001:db8:2::2", "2001:db8:9::1"
BASE = [
    "port add p0.2 vlan:parent=p0,id=2",
    "addr add 10.0.1.1/24 dev p0",
    "addr add 10.0.2.1/24 dev p0.2",
    "addr add 2001:db8:1::1/64 dev p0",
    "addr add 2001:db8:2::1/64 dev p0.2",
    "neigh add %s lladdr %s dev p0" % (IN4, H1),
    "neigh add %s lladdr %s dev p0.2" % (OUT4, H2),
    "neigh add %s lladdr %s dev p0" % (IN6, H1),
    "neigh add %s lladdr %s dev p0.2" % (OUT6, H2),
    "route add 10.9.0.0/16 via %s" % OUT4,
    "route add 2001:db8:9::/48 via %s" % OUT6,
    "icmp ratelimit 100000 burst 1000",
]
# connections from the inside only
STATEFUL = [
    "filter add forward ct-state established,related accept",
    "filter add forward in p0 ct-state new accept",
    "filter policy forward drop",
]
bad_exits = []


def fw(rules, frames, seq=True, args=()):
    """Runs BASE + @rules over @frames on p0 (one frame per poll with @seq)."""
    res = rxlab.run(BASE + rules, {"p0": frames}, ports=("p0",),
                    args=(("--budget", "1") if seq else ()) + tuple(args))
    if res.rc != 0:
        bad_exits.append((res.rc, res.stderr[-2000:]))
    return res


def live(rules, frames, commands):
    """
    As fw(), with rxpath kept running (an endless sim port whose traffic a blackhole
    takes) so that `rxpath ctl` can be asked @commands once every frame is in.
    Returns (summary drops, [outputs]).
    """
    tmp = tempfile.mkdtemp(prefix="rxfw-")
    wrpcap(os.path.join(tmp, "in.pcap"), frames, linktype=1)
    sock = os.path.join(tmp, "ctl.sock")
    lines = ["port add p0 pcap:in=%s/in.pcap,out=%s/out.pcap,mac=%s" % (tmp, tmp, R0),
             "port add p9 sim:proto=udp4,flows=1,count=0", "route add 198.19.0.0/16 blackhole"] + BASE + rules
    with open(os.path.join(tmp, "rxpath.conf"), "w") as f:
        f.write("\n".join(lines) + "\n")
    proc = subprocess.Popen([RXPATH, "run", "-c", os.path.join(tmp, "rxpath.conf"), "--json", "-i", "0", "-d", "20",
                             "--budget", "1", "--ctl", sock], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outs = []
    try:
        for _ in range(250):
            r = subprocess.run([RXPATH, "ctl", "--socket", sock, "--json", "show", "ports"], capture_output=True, text=True)
            if r.returncode == 0 and [q["rx_packets"] for q in json.loads(r.stdout)["ports"] if q["name"] == "p0"] == [len(frames)]:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.02)
        time.sleep(0.05)
        for c in commands:
            outs.append(subprocess.run([RXPATH, "ctl", "--socket", sock] + c.split(), capture_output=True, text=True).stdout)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    shutil.rmtree(tmp, ignore_errors=True)
    summary = {}
    for line in out.splitlines():
        if '"event":"summary"' in line:
            summary = json.loads(line)
    if proc.returncode != 0:
        bad_exits.append((proc.returncode, err[-2000:]))
    return {k: v for k, v in summary.get("drops", {}).items() if v}, outs


def inside(l3):
    return Ether(dst=R0, src=H1) / l3


def outside(l3):
    return Ether(dst=R0, src=H2) / Dot1Q(vlan=2) / l3


def ip_of(p):
    return p[IP] if IP in p else p[IPv6] if IPv6 in p else None


def to_out(res):
    """What rxpath sent toward the outside (VLAN 2)."""
    return [p for p in res.sent("p0") if Dot1Q in p and p[Dot1Q].vlan == 2 and ip_of(p) is not None]


def to_in(res):
    return [p for p in res.sent("p0") if Dot1Q not in p and ip_of(p) is not None]


def is_error(p):
    return (ICMP in p and p[ICMP].type in (3, 4, 5, 11, 12)) or \
        (IPv6 in p and p[IPv6].nh == 58 and bytes(p[IPv6].payload)[:1] in (b"\x01", b"\x02", b"\x03", b"\x04"))


def tag(t):
    return Raw(b"T:" + (t if isinstance(t, bytes) else t.encode()) + b";")


def tags(pkts):
    """The tags in what was forwarded, ICMP errors (which quote them) left out."""
    found = (re.search(rb"T:([^;]*);", p.original or bytes(p)) for p in pkts if not is_error(p))
    return sorted(m.group(1).decode() for m in found if m)


def udp4(name, src=IN4, dst=FAR4, sport=1000, dport=2000, **kw):
    return IP(src=src, dst=dst, **kw) / UDP(sport=sport, dport=dport) / tag(name)


def udp6(name, src=IN6, dst=FAR6, sport=1000, dport=2000, **kw):
    return IPv6(src=src, dst=dst, **kw) / UDP(sport=sport, dport=dport) / tag(name)


def tcp4(name, src=IN4, dst=FAR4, sport=1000, dport=2000, flags="S", **kw):
    return IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, **kw) / tag(name)


def tcp6(name, src=IN6, dst=FAR6, sport=1000, dport=2000, flags="S", **kw):
    return IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, **kw) / tag(name)


def expect(name, res, want, pkts=None):
    """The forwarded tags are exactly @want."""
    got = tags(pkts if pkts is not None else to_out(res) + to_in(res))
    check(name, got == sorted(want), "forwarded %s, expected %s; drops %s" % (got, sorted(want), res.drops()))


# ================= stateless rules =================

# --- source and destination prefixes ---
res = fw(["filter add forward src 10.0.1.128/25 drop", "filter add forward src 2001:db8:1::80/121 drop"],
         [inside(udp4("s4-in")), inside(udp4("s4-out", src="10.0.1.200")),
          inside(udp6("s6-in")), inside(udp6("s6-out", src="2001:db8:1::ff"))], seq=False)
expect("src_prefix", res, ["s4-in", "s6-in"])
check("src_prefix_counted", res.drops().get("filter_drop") == 2, res.drops())

res = fw(["filter add forward dst 10.9.1.0/24 drop", "filter add forward dst 2001:db8:9:1::/64 drop"],
         [inside(udp4("d4-hit", dst="10.9.1.5")), inside(udp4("d4-miss", dst="10.9.2.5")),
          inside(udp6("d6-hit", dst="2001:db8:9:1::5")), inside(udp6("d6-miss", dst="2001:db8:9:2::5"))], seq=False)
expect("dst_prefix", res, ["d4-miss", "d6-miss"])

# --- protocols ---
res = fw(["filter add forward proto udp drop", "filter add forward proto 47 drop"],
         [inside(udp4("p-udp4")), inside(udp6("p-udp6")), inside(tcp4("p-tcp4")), inside(tcp6("p-tcp6")),
          inside(IP(src=IN4, dst=FAR4) / ICMP(type=8, id=1) / tag("p-icmp")),
          inside(IP(src=IN4, dst=FAR4, proto=47) / tag("p-gre4")), inside(IPv6(src=IN6, dst=FAR6, nh=47) / tag("p-gre6")),
          inside(IP(src=IN4, dst=FAR4, proto=48) / tag("p-48"))], seq=False)
expect("proto_match", res, ["p-tcp4", "p-tcp6", "p-icmp", "p-48"])

# --- port ranges, sport and dport ---
res = fw(["filter add forward proto tcp dport 1000-2000 drop", "filter add forward proto udp sport 53 drop"],
         [inside(tcp4("dp999", dport=999)), inside(tcp4("dp1000", dport=1000)), inside(tcp4("dp2000", dport=2000)),
          inside(tcp4("dp2001", dport=2001)), inside(tcp6("dp6-1500", dport=1500)), inside(udp4("udp-dp1500", dport=1500)),
          inside(udp4("sp53", sport=53)), inside(udp4("sp54", sport=54)), inside(tcp4("tcp-sp53", sport=53, dport=80))],
         seq=False)
expect("port_ranges", res, ["dp999", "dp2001", "udp-dp1500", "sp54", "tcp-sp53"])

# --- ICMP types by name and number ---
res = fw(["filter add forward proto icmp icmp-type echo-request drop", "filter add forward proto icmpv6 icmp-type 128 drop"],
         [inside(IP(src=IN4, dst=FAR4) / ICMP(type=8, id=2) / tag("i-req4")),
          inside(IP(src=IN4, dst=FAR4) / ICMP(type=0, id=2) / tag("i-rep4")),
          inside(IP(src=IN4, dst=FAR4) / ICMP(type=13, id=2) / tag("i-ts4")),
          inside(IPv6(src=IN6, dst=FAR6) / ICMPv6EchoRequest(id=2, data=b"T:i-req6;")),
          inside(IPv6(src=IN6, dst=FAR6) / ICMPv6EchoReply(id=2, data=b"T:i-rep6;"))], seq=False)
expect("icmp_type", res, ["i-rep4", "i-rep6", "i-ts4"])

# --- in and out ports ---
res = fw(["filter add forward in p0.2 proto udp drop", "filter add forward out p0 proto tcp drop"],
         [inside(udp4("io-udp-in")), outside(udp4("io-udp-out", src=FAR4, dst=IN4)),
          inside(tcp4("io-tcp-in")), outside(tcp4("io-tcp-out", src=FAR4, dst=IN4))], seq=False)
expect("in_out_ports", res, ["io-udp-in", "io-tcp-in"])

# --- the first rule that matches decides ---
res = fw(["filter add forward proto udp dport 53 accept", "filter add forward proto udp drop",
          "filter add forward proto udp dport 123 accept"],
         [inside(udp4("fm-53", dport=53)), inside(udp4("fm-123", dport=123)), inside(tcp4("fm-tcp", dport=123))], seq=False)
expect("first_match_wins", res, ["fm-53", "fm-tcp"])

# --- policy: drop what no rule accepts; accept without rules ---
res = fw(["filter add forward proto icmp accept", "filter policy forward drop"],
         [inside(IP(src=IN4, dst=FAR4) / ICMP(type=8, id=3) / tag("pol-icmp")), inside(udp4("pol-udp")),
          inside(IPv6(src=IN6, dst=FAR6) / ICMPv6EchoRequest(id=3, data=b"T:pol-icmp6;"))], seq=False)
got = [p for p in to_out(res)]
check("policy_drop", len(got) == 1 and ICMP in got[0] and res.drops().get("filter_drop") == 2,
      ([p.summary() for p in got], res.drops()))
res = fw(["filter policy forward accept"], [inside(udp4("pa-udp")), outside(udp4("pa-back", src=FAR4, dst=IN4))], seq=False)
expect("policy_accept", res, ["pa-udp", "pa-back"])

# --- filter del N takes rule N out, as show filter numbers them ---
res = fw(["filter add forward proto udp drop", "filter add forward proto tcp drop", "filter del forward 1"],
         [inside(udp4("del-udp")), inside(tcp4("del-tcp"))], seq=False)
expect("filter_del", res, ["del-udp"])
res = fw(["filter add forward proto udp drop", "filter policy forward drop", "filter flush forward", "filter policy forward accept"],
         [inside(udp4("flush-udp"))], seq=False)
expect("filter_flush", res, ["flush-udp"])

# ================= sets =================
res = fw(["filter set add bad 10.9.1.0/24 10.9.2.7 2001:db8:9:1::/64 2001:db8:9:2::7", "filter add forward dst @bad drop"],
         [inside(udp4("set-d-net", dst="10.9.1.5")), inside(udp4("set-d-host", dst="10.9.2.7")),
          inside(udp4("set-d-miss", dst="10.9.2.8")), inside(udp6("set-d6-net", dst="2001:db8:9:1::5")),
          inside(udp6("set-d6-host", dst="2001:db8:9:2::7")), inside(udp6("set-d6-miss", dst="2001:db8:9:2::8"))], seq=False)
expect("set_dst_v4_v6", res, ["set-d-miss", "set-d6-miss"])

res = fw(["filter set add ins 10.0.1.0/28 2001:db8:1::/124", "filter add forward src @ins accept", "filter policy forward drop"],
         [inside(udp4("set-s-in")), inside(udp4("set-s-out", src="10.0.1.100")),
          inside(udp6("set-s6-in")), inside(udp6("set-s6-out", src="2001:db8:1::100"))], seq=False)
expect("set_src_v4_v6", res, ["set-s-in", "set-s6-in"])

res = fw(["filter set add bad 10.9.1.0/24 10.9.2.7", "filter set del bad 10.9.2.7", "filter add forward dst @bad drop"],
         [inside(udp4("setdel-gone", dst="10.9.2.7")), inside(udp4("setdel-kept", dst="10.9.1.9"))], seq=False)
expect("set_del", res, ["setdel-gone"])

# ================= connection tracking: TCP =================
C, S = 1000, 50000     # the client's and server's initial sequence numbers


def seg(side, flags, seq, ack=0, data=b"", v6=False, sport=40000, dport=80, win=65535, **kw):
    """A segment of the connection IN:40000 <-> FAR:80 from @side ('in' or 'out')."""
    a, b = (IN6, FAR6) if v6 else (IN4, FAR4)
    ipl = IPv6 if v6 else IP
    if side == "in":
        l3 = ipl(src=a, dst=b) / TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack, window=win, **kw)
        return inside(l3 / tag(data) if data else l3)
    l3 = ipl(src=b, dst=a) / TCP(sport=dport, dport=sport, flags=flags, seq=seq, ack=ack, window=win, **kw)
    return outside(l3 / tag(data) if data else l3)


def handshake(v6=False, sport=40000):
    return [seg("in", "S", C, v6=v6, sport=sport, options=[("MSS", 1460)]),
            seg("out", "SA", S, C + 1, v6=v6, sport=sport, options=[("MSS", 1460)]),
            seg("in", "A", C + 1, S + 1, v6=v6, sport=sport)]


def talk(v6=False, sport=40000):
    return handshake(v6, sport) + [
        seg("in", "PA", C + 1, S + 1, b"request", v6=v6, sport=sport),
        seg("out", "PA", S + 1, C + 8, b"response", v6=v6, sport=sport),
        seg("in", "A", C + 8, S + 9, v6=v6, sport=sport),
        seg("in", "FA", C + 8, S + 9, v6=v6, sport=sport),
        seg("out", "FA", S + 9, C + 9, v6=v6, sport=sport),
        seg("in", "A", C + 9, S + 10, v6=v6, sport=sport)]


for v6 in (False, True):
    fam = "6" if v6 else "4"
    frames = talk(v6) + [seg("out", "S", 777, v6=v6, sport=22, dport=5999)]   # a SYN from outside
    res = fw(STATEFUL, frames)
    o, i = to_out(res), to_in(res)
    check("tcp%s_connection_from_inside_both_ways" % fam, len(o) == 6 and len(i) == 3 and
          tags(o) == ["request"] and tags(i) == ["response"],
          ("out %s" % [p.summary() for p in o], "in %s" % [p.summary() for p in i], res.drops()))
    check("tcp%s_syn_from_outside_dropped" % fam, not [p for p in i if p[TCP].dport == 22] and
          res.drops().get("filter_drop") == 1, res.drops())

# the connection's state as conntrack -L shows it
drops, (lst, stats) = live(STATEFUL, talk()[:6] + [seg("out", "S", 777, sport=22, dport=5999)],
                           ["show conntrack proto tcp", "--json show conntrack stats"])
check("tcp_established_listed", " ESTABLISHED src=10.0.1.2 dst=10.9.1.1 sport=40000 dport=80 " in lst and
      "[ASSURED]" in lst and "[UNREPLIED]" not in lst, lst)
check("tcp_dropped_syn_not_tracked", "dport=22" not in lst and "sport=5999" not in lst, lst)

# impossible flags are invalid (Linux's tcp_valid_flags): SYN+FIN, SYN+RST, none, FIN alone, FIN+PSH+URG
bad = [("SF", "SF"), ("SR", "SR"), ("", "none"), ("F", "F"), ("FPU", "FPU")]
res = fw(["filter add forward ct-state invalid drop"],
         [inside(tcp4("bad-" + n, flags=f, sport=41000 + k)) for k, (f, n) in enumerate(bad)] +
         [inside(tcp4("good-syn", flags="S", sport=42000)), inside(tcp6("bad6-SF", flags="SF"))])
expect("tcp_bad_flags_invalid_dropped", res, ["good-syn"])
check("tcp_bad_flags_counted_ct_invalid", res.drops().get("ct_invalid") == 6, res.drops())
drops, (lst,) = live(["filter add forward ct-state invalid drop"] + STATEFUL[:2],
                     [inside(tcp4("bad-SF", flags="SF", sport=41000))], ["show conntrack"])
check("tcp_invalid_not_tracked", "sport=41000" not in lst, lst)

# data far outside the receiver's window is invalid; `conntrack tcp liberal on` takes it
far = seg("in", "PA", C + 1 + 5000000, S + 1, b"far-ahead")
res = fw(["filter add forward ct-state invalid drop"] + STATEFUL, handshake() + [far])
check("tcp_out_of_window_invalid", not tags(to_out(res)) and res.drops().get("ct_invalid") == 1, res.drops())
res = fw(["conntrack tcp liberal on", "filter add forward ct-state invalid drop"] + STATEFUL, handshake() + [far])
expect("tcp_out_of_window_liberal_accepted", res, ["far-ahead"])

# a reset in the window ends the connection; one outside it is invalid
rst_far = seg("out", "R", S + 1 + 5000000)
rst_in = seg("out", "R", S + 1)
res = fw(["filter add forward ct-state invalid drop"] + STATEFUL, handshake() + [rst_far, rst_in])
i = [p for p in to_in(res) if TCP in p and "R" in p[TCP].flags]
check("tcp_rst_out_of_window_invalid", res.drops().get("ct_invalid") == 1, res.drops())
check("tcp_rst_in_window_forwarded", len(i) == 1 and i[0][TCP].seq == S + 1, [p.summary() for p in to_in(res)])
drops, (lst,) = live(STATEFUL, handshake() + [rst_in], ["show conntrack proto tcp"])
check("tcp_rst_closes", " CLOSE src=10.0.1.2 " in lst, lst)

# after the close, the same ports open a new connection (RFC 9293 3.6.1, Linux: reopen from TIME_WAIT)
C2, S2 = C + 900000, S + 900000
again = [seg("in", "S", C2), seg("out", "SA", S2, C2 + 1), seg("in", "A", C2 + 1, S2 + 1),
         seg("in", "PA", C2 + 1, S2 + 1, b"again"), seg("out", "PA", S2 + 1, C2 + 8, b"again-reply")]
res = fw(["filter add forward ct-state invalid drop"] + STATEFUL, talk() + again)
check("tcp_reopen_after_close", sorted(tags(to_out(res) + to_in(res))) == ["again", "again-reply", "request", "response"] and
      len(to_out(res)) == 9 and len(to_in(res)) == 5, (tags(to_out(res) + to_in(res)), res.drops()))

# a SYN/ACK acknowledging what the SYN never sent is invalid (nf_conntrack_tcp: ACK over the upper bound)
res = fw(["filter add forward ct-state invalid drop"] + STATEFUL, [seg("in", "S", C), seg("out", "SA", S, C + 100000)])
check("tcp_synack_bad_ack_invalid", not to_in(res) and res.drops().get("ct_invalid") == 1, res.drops())

# a mid-stream ACK from inside with no entry (a connection from before a restart): Linux's default
# nf_conntrack_tcp_loose=1 picks it up as new
res = fw(STATEFUL, [seg("in", "PA", 9000, 7000, b"mid-in", sport=43000), seg("out", "PA", 7000, 9006, b"mid-out", sport=43000)])
expect("tcp_midstream_pickup_from_inside", res, ["mid-in", "mid-out"])

# established traffic in one vector: the window follows segment by segment (four frames per poll)
filler = Ether(dst=R0, src=H2) / Dot1Q(vlan=99) / IP(src=OUT4, dst=IN4) / UDP()   # unknown VLAN: dropped before routing
hs = handshake()
burst = [hs[0], filler, filler, filler, hs[1], filler, filler, filler, hs[2]] + \
    [seg("in", "PA", C + 1 + 1000 * k, S + 1, b"b%d" % k + b"." * 998) for k in range(3)] + \
    [seg("out", "PA", S + 1 + 1000 * k, C + 3001, b"r%d" % k + b"." * 998) for k in range(4)]
res = fw(["filter add forward ct-state invalid drop"] + STATEFUL, burst, seq=False, args=("--budget", "4"))
check("tcp_burst_in_one_poll", len([t for t in tags(to_out(res)) if t[0] == "b"]) == 3 and
      len([t for t in tags(to_in(res)) if t[0] == "r"]) == 4, (tags(to_out(res) + to_in(res)), res.drops()))

# ================= UDP and ICMP =================
q = inside(udp4("u-query", dport=53, sport=3333))
a = outside(udp4("u-answer", src=FAR4, dst=IN4, sport=53, dport=3333))
stray = outside(udp4("u-stray", src=FAR4, dst=IN4, sport=53, dport=3334))
q6 = inside(udp6("u6-query", dport=53, sport=3333))
a6 = outside(udp6("u6-answer", src=FAR6, dst=IN6, sport=53, dport=3333))
res = fw(STATEFUL, [q, a, stray, q6, a6])
expect("udp_reply_passes", res, ["u-query", "u-answer", "u6-query", "u6-answer"])

ping = inside(IP(src=IN4, dst=FAR4) / ICMP(type=8, id=0x77, seq=1) / Raw(b"echo"))
pong = outside(IP(src=FAR4, dst=IN4) / ICMP(type=0, id=0x77, seq=1) / Raw(b"echo"))
pong_other = outside(IP(src=FAR4, dst=IN4) / ICMP(type=0, id=0x78, seq=1) / Raw(b"echo"))
ping6 = inside(IPv6(src=IN6, dst=FAR6) / ICMPv6EchoRequest(id=0x77, seq=1, data=b"echo6"))
pong6 = outside(IPv6(src=FAR6, dst=IN6) / ICMPv6EchoReply(id=0x77, seq=1, data=b"echo6"))
pong6_other = outside(IPv6(src=FAR6, dst=IN6) / ICMPv6EchoReply(id=0x78, seq=1, data=b"echo6"))
res = fw(STATEFUL, [ping, pong, pong_other, ping6, pong6, pong6_other])
i = to_in(res)
check("icmp_echo_reply_same_id_passes", [p[ICMP].id for p in i if ICMP in p] == [0x77] and
      [p[ICMPv6EchoReply].id for p in i if ICMPv6EchoReply in p] == [0x77], [p.summary() for p in i])
check("icmp_echo_reply_other_id_dropped", len(i) == 2, [p.summary() for p in i])

# ICMP errors from outside about an inside connection are related; about none, they are not
fwd_q = q[IP].copy()
fwd_q.ttl -= 1
unreach = outside(IP(src=FAR4, dst=IN4) / ICMP(type=3, code=3) / IPerror(bytes(fwd_q)[:28]))
bogus_inner = udp4("x", dport=54, sport=3333)
bogus = outside(IP(src=FAR4, dst=IN4) / ICMP(type=3, code=3) / IPerror(bytes(bogus_inner)[:28]))
fwd_q6 = q6[IPv6].copy()
fwd_q6.hlim -= 1
unreach6 = outside(IPv6(src=FAR6, dst=IN6) / ICMPv6DestUnreach(code=4) / bytes(fwd_q6)[:48])
texc = outside(IP(src=OUT4, dst=IN4) / ICMP(type=11, code=0) / IPerror(bytes(fwd_q)[:28]))
res = fw(STATEFUL, [q, unreach, bogus, texc, q6, unreach6])
i = [p for p in to_in(res) if is_error(p)]
check("icmp_error_related_passes", len([p for p in i if ICMP in p and p[ICMP].type == 3]) == 1 and
      len([p for p in i if ICMP in p and p[ICMP].type == 11]) == 1 and
      len([p for p in i if ICMPv6DestUnreach in p]) == 1, [p.summary() for p in to_in(res)])
check("icmp_error_unrelated_dropped", len(i) == 3, [p.summary() for p in i])

# a hop's Fragmentation Needed about a TCP connection from inside is related (path MTU discovery)
hs = handshake()
big = seg("in", "PA", C + 1, S + 1, b"x" * 1400)
fwd_big = big[IP].copy()
fwd_big.ttl -= 1
pmtu = outside(IP(src=OUT4, dst=IN4) / ICMP(type=3, code=4, nexthopmtu=1280) / IPerror(bytes(fwd_big)[:48]))
res = fw(STATEFUL, hs + [big, pmtu])
check("icmp_frag_needed_tcp_related", len([p for p in to_in(res) if ICMP in p and p[ICMP].type == 3 and p[ICMP].code == 4]) == 1,
      ([p.summary() for p in to_in(res)], res.drops()))

# the router's own answers pass output: established (echo reply) and related (its errors)
OUTPUT = ["filter add output ct-state established,related accept", "filter policy output drop"]
res = fw(STATEFUL + OUTPUT, [inside(udp4("ttl1", ttl=1)), inside(IP(src=IN4, dst="10.0.1.1") / ICMP(type=8, id=5)),
                             inside(udp6("hl1", hlim=1)), inside(IPv6(src=IN6, dst="2001:db8:1::1") / ICMPv6EchoRequest(id=5))])
i = to_in(res)
check("output_time_exceeded_related", len([p for p in i if ICMP in p and p[ICMP].type == 11]) == 1 and
      len([p for p in i if ICMPv6TimeExceeded in p]) == 1, ([p.summary() for p in i], res.drops()))
check("output_echo_reply_established", len([p for p in i if ICMP in p and p[ICMP].type == 0]) == 1 and
      len([p for p in i if ICMPv6EchoReply in p]) == 1, ([p.summary() for p in i], res.drops()))

# errors for what was never forwarded (no route) quote a packet whose connection was never
# confirmed: Linux attaches it to the error all the same (nf_ct_attach() in icmp_glue_bits()), so related
res = fw(STATEFUL + OUTPUT, [inside(udp4("noroute", dst="192.0.2.1")), inside(udp6("noroute6", dst="2001:db8:77::1"))])
i = [p for p in to_in(res) if is_error(p)]
check("output_unreachable_related", len(i) == 2, ([p.summary() for p in to_in(res)], res.drops()))

# TTL and MTU are checked before the forward chain (Linux: ip_forward(), ip6_forward()): a packet
# from outside that expires at the router, or is too big with DF, gets its error even when the chain
# would drop it
res = fw(STATEFUL, [outside(udp4("ttl-out", src=FAR4, dst=IN4, ttl=1)), outside(udp6("hl-out", src=FAR6, dst=IN6, hlim=1))])
o = [p for p in to_out(res) if is_error(p)]
check("ttl1_from_outside_time_exceeded", len(o) == 2, ([p.summary() for p in o], res.drops()))
res = fw(STATEFUL + ["port set p0 mtu 1280"],
         [outside(udp4("b" * 1400, src=FAR4, dst=IN4, flags="DF")), outside(udp6("b" * 1400, src=FAR6, dst=IN6))])
o = [p for p in to_out(res) if is_error(p)]
check("too_big_from_outside_gets_error", len(o) == 2, ([p.summary() for p in o], res.drops()))

# ================= reject =================
REJ = ["filter add forward in p0.2 proto tcp dport 5555 reject", "filter add forward in p0.2 proto udp dport 5556 reject",
       "filter add forward in p0.2 proto icmp reject"] + STATEFUL
syn = outside(IP(src=FAR4, dst=IN4) / TCP(sport=4444, dport=5555, flags="S", seq=777))
synd = outside(IP(src=FAR4, dst=IN4) / TCP(sport=4445, dport=5555, flags="S", seq=1000) / Raw(b"x" * 10))
ackd = outside(IP(src=FAR4, dst=IN4) / TCP(sport=4446, dport=5555, flags="PA", seq=900, ack=123456) / Raw(b"y" * 10))
finn = outside(IP(src=FAR4, dst=IN4) / TCP(sport=4447, dport=5555, flags="F", seq=300))
rst = outside(IP(src=FAR4, dst=IN4) / TCP(sport=4448, dport=5555, flags="R", seq=5))
u = outside(udp4("rej-udp", src=FAR4, dst=IN4, sport=4449, dport=5556))
echo = outside(IP(src=FAR4, dst=IN4) / ICMP(type=8, id=9) / Raw(b"rej-echo"))
syn6 = outside(IPv6(src=FAR6, dst=IN6) / TCP(sport=4444, dport=5555, flags="S", seq=777))
syn6x = outside(IPv6(src=FAR6, dst=IN6) / IPv6ExtHdrDestOpt() / TCP(sport=4450, dport=5555, flags="S", seq=888))
syn6h = outside(IPv6(src=FAR6, dst=IN6) / IPv6ExtHdrHopByHop() / TCP(sport=4451, dport=5555, flags="S", seq=999))
u6 = outside(udp6("rej-udp6", src=FAR6, dst=IN6, sport=4449, dport=5556))
res = fw(REJ, [syn, synd, ackd, finn, rst, u, echo, syn6, syn6x, syn6h, u6])
o = to_out(res)
rsts = {p[TCP].dport: p for p in o if IP in p and TCP in p}
check("reject_nothing_forwarded_inside", not to_in(res), [p.summary() for p in to_in(res)])


def rst_ok(p, src, dst, sport, seq, ack, flags):
    ip = ip_of(p)
    raw = bytes(ip)
    l4ok = True
    if IP in p:
        l4ok = inet_cksum(raw[:ip.ihl * 4]) == 0
    again = p.copy()
    again[TCP].chksum = None
    return (ip.src, ip.dst, p[TCP].sport, p[TCP].dport, p[TCP].seq, p[TCP].ack, str(p[TCP].flags)) == \
        (src, dst, 5555, sport, seq, ack, flags) and l4ok and p[TCP].chksum == again.__class__(bytes(again))[TCP].chksum \
        and not p[TCP].payload


# RFC 9293 3.10.7.1: no ACK in the segment: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; with an ACK: <SEQ=SEG.ACK><CTL=RST>
check("reject_tcp_syn_rst", 4444 in rsts and rst_ok(rsts[4444], IN4, FAR4, 4444, 0, 778, "RA"),
      rsts[4444].show(dump=True) if 4444 in rsts else [p.summary() for p in o])
check("reject_tcp_syn_data_rst_acks_all", 4445 in rsts and rst_ok(rsts[4445], IN4, FAR4, 4445, 0, 1011, "RA"),
      rsts[4445].show(dump=True) if 4445 in rsts else "")
check("reject_tcp_ack_rst_seq_from_ack", 4446 in rsts and rst_ok(rsts[4446], IN4, FAR4, 4446, 123456, 0, "R"),
      rsts[4446].show(dump=True) if 4446 in rsts else "")
check("reject_tcp_fin_rst", 4447 in rsts and rst_ok(rsts[4447], IN4, FAR4, 4447, 0, 301, "RA"),
      rsts[4447].show(dump=True) if 4447 in rsts else "")
check("reject_never_answers_rst", 4448 not in rsts, [p.summary() for p in o])
errs = [p for p in o if ICMP in p and p[ICMP].type == 3]
check("reject_udp_admin_prohibited", any(p[ICMP].code == 13 and p[IP].src == "10.0.2.1" and p[IP].dst == FAR4 and
                                         UDPerror in p and p[UDPerror].dport == 5556 and inet_cksum(bytes(p[ICMP])) == 0
                                         for p in errs), [p.summary() for p in o])
check("reject_icmp_admin_prohibited", any(p[ICMP].code == 13 and IPerror in p and p[IPerror].proto == 1 for p in errs),
      [p.summary() for p in o])
v6r = [p for p in o if IPv6 in p and TCP in p]
check("reject_tcp6_rst", any(rst_ok(p, IN6, FAR6, 4444, 0, 778, "RA") for p in v6r), [p.summary() for p in o])
check("reject_tcp6_past_dest_options", any(rst_ok(p, IN6, FAR6, 4450, 0, 889, "RA") for p in v6r), [p.summary() for p in o])
check("reject_tcp6_past_hop_by_hop", any(rst_ok(p, IN6, FAR6, 4451, 0, 1000, "RA") for p in v6r), [p.summary() for p in o])
u6e = [p for p in o if ICMPv6DestUnreach in p]
check("reject_udp6_admin_prohibited", len(u6e) == 1 and u6e[0][ICMPv6DestUnreach].code == 1 and
      u6e[0][IPv6].src == "2001:db8:2::1" and u6e[0][IPv6].dst == FAR6, [p.summary() for p in o])
check("reject_counted", res.drops().get("filter_reject") == 11, res.drops())

# the router's rejects are the refused connection's own: they pass an output chain that takes only tracked traffic
res = fw(REJ + OUTPUT, [syn, u, syn6, u6])
check("reject_answers_pass_output", len(to_out(res)) == 4, ([p.summary() for p in to_out(res)], res.drops()))

# the same rejects with nothing tracked, the IPv4 ones in one vector (the stateless way)
res = fw(REJ[:3], [syn, ackd, rst, u, echo], seq=False)
o = to_out(res)
rsts = {p[TCP].dport: p for p in o if IP in p and TCP in p}
check("reject_stateless_tcp_rst", sorted(rsts) == [4444, 4446] and rst_ok(rsts[4444], IN4, FAR4, 4444, 0, 778, "RA") and
      rst_ok(rsts[4446], IN4, FAR4, 4446, 123456, 0, "R"), [p.summary() for p in o])
errs = [p for p in o if ICMP in p and p[ICMP].type == 3 and p[ICMP].code == 13 and p[IP].dst == FAR4]
check("reject_stateless_udp_icmp_prohibited", len(errs) == 2 and any(UDPerror in p and p[UDPerror].dport == 5556 for p in errs),
      [p.summary() for p in o])
check("reject_stateless_counted", res.drops().get("filter_reject") == 5 and not to_in(res), res.drops())

# per-rule counters of a stateless chain, packets and IP bytes, the policy's too
frames = [inside(udp4("c-u%d" % k, dport=2000)) for k in range(3)] + \
    [inside(tcp4("c-t%d" % k)) for k in range(2)] + [inside(udp4("c-p", dport=3000))]
drops, (shown,) = live(["filter add forward proto udp dport 2000 drop", "filter add forward proto tcp accept"],
                       frames, ["--json show filter"])
fwd = [c for c in json.loads(shown)["chains"] if c["chain"] == "forward"][0]
l3 = [len(ip_of(p)) for p in frames]
check("stateless_rule_counters", [(r["packets"], r["bytes"]) for r in fwd["rules"]] == [(3, sum(l3[:3])), (2, sum(l3[3:5]))] and
      (fwd["policy_packets"], fwd["policy_bytes"]) == (1, l3[5]) and drops.get("filter_drop") == 3, (fwd, drops))

# a stateless chain on the router's fast path: a gateway on the untagged side, a whole vector
# of packets that all take it (decided together), then one that does not (TTL 1) among them
FAST = ["route add 10.8.0.0/16 via %s" % IN4, "filter add forward proto udp dport 7 drop",
        "filter add forward proto tcp dport 5555 reject", "filter add forward proto udp dport 8 accept",
        "filter policy forward drop"]
burst = [outside(udp4("f-u7-%d" % k, src=FAR4, dst="10.8.0.%d" % k, dport=7)) for k in range(3)] + \
    [outside(udp4("f-u8-%d" % k, src=FAR4, dst="10.8.1.%d" % k, dport=8)) for k in range(4)] + \
    [outside(IP(src=FAR4, dst="10.8.2.1") / TCP(sport=4460, dport=5555, flags="S", seq=41)),
     outside(udp4("f-u9", src=FAR4, dst="10.8.3.1", dport=9))]
for name, frames in (("fast", burst), ("fast_mixed", burst + [outside(udp4("f-ttl1", src=FAR4, dst="10.8.1.9", dport=8, ttl=1))])):
    drops, (shown,) = live(FAST, frames, ["--json show filter"]) if name == "fast" else ({}, ("",))
    res = fw(FAST, frames, seq=False)
    fwd_in = to_in(res)
    check(name + "_forwarded", tags(fwd_in) == sorted("f-u8-%d" % k for k in range(4)) and
          all(p[Ether].dst == H1 and p[IP].ttl == 63 and inet_cksum(bytes(p[IP])[:20]) == 0 for p in fwd_in),
          ([p.summary() for p in fwd_in], res.drops()))
    rst = [p for p in to_out(res) if TCP in p]
    check(name + "_reject_rst", len(rst) == 1 and rst_ok(rst[0], "10.8.2.1", FAR4, 4460, 0, 42, "RA"),
          [p.summary() for p in to_out(res)])
    check(name + "_drops", res.drops().get("filter_drop") == 4 and res.drops().get("filter_reject") == 1 and
          res.drops().get("ttl_exceeded", 0) == (name == "fast_mixed"), res.drops())
    if shown:
        fwd = [c for c in json.loads(shown)["chains"] if c["chain"] == "forward"][0]
        check("fast_rule_counters", [r["packets"] for r in fwd["rules"]] == [3, 1, 4] and fwd["policy_packets"] == 1 and
              fwd["rules"][2]["bytes"] == sum(len(ip_of(p)) for p in burst[3:7]), fwd)

# IPv6 extension headers before the transport header: the rule sees its ports
res = fw(["filter add forward proto tcp dport 80 drop", "filter add forward proto udp dport 53 drop"],
         [inside(IPv6(src=IN6, dst=FAR6) / IPv6ExtHdrDestOpt() / TCP(sport=1, dport=80) / tag("x-80")),
          inside(IPv6(src=IN6, dst=FAR6) / IPv6ExtHdrDestOpt() / TCP(sport=1, dport=81) / tag("x-81")),
          inside(IPv6(src=IN6, dst=FAR6) / IPv6ExtHdrHopByHop() / UDP(sport=1, dport=53) / tag("x-53")),
          inside(IPv6(src=IN6, dst=FAR6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / UDP(sport=1, dport=54) / tag("x-54"))],
         seq=False)
expect("ip6_ext_headers_ports", res, ["x-81", "x-54"])

# ================= fragments: the first decides for the datagram =================


def frags4(dport, ident, reverse=False):
    d = IP(src=IN4, dst=FAR4, id=ident) / UDP(sport=7000, dport=dport) / Raw(bytes([ident & 0xff]) * 2000)
    fs = [inside(f) for f in fragment(d, fragsize=800)]
    return (fs[::-1] if reverse else fs), bytes(d[UDP])


def frags6(dport, ident, reverse=False):
    d = IPv6(src=IN6, dst=FAR6) / IPv6ExtHdrFragment(id=ident) / UDP(sport=7000, dport=dport) / Raw(bytes([ident & 0xff]) * 2000)
    fs = [inside(f) for f in fragment6(d, 800)]
    return (fs[::-1] if reverse else fs), bytes(d[UDP])


def whole(res, ident):
    pieces = [p[IP] for p in to_out(res) if IP in p and p[IP].id == ident]
    d = [p for p in defragment(pieces) if UDP in p]
    return len(pieces), bytes(d[0][UDP]) if d else b""


for seq in (False, True):
    mode = "one_poll" if not seq else "one_per_poll"
    ok, ok_udp = frags4(5001, 0x101)
    ok_rev, ok_rev_udp = frags4(5001, 0x102, reverse=True)
    bad4, _ = frags4(5000, 0x103)
    bad_rev, _ = frags4(5000, 0x104, reverse=True)
    res = fw(["filter add forward proto udp dport 5001 accept", "filter policy forward drop"], ok + ok_rev + bad4 + bad_rev, seq=seq)
    check("frag4_accepted_whole_%s" % mode, whole(res, 0x101) == (3, ok_udp), (whole(res, 0x101)[0], res.drops()))
    check("frag4_accepted_whole_first_last_%s" % mode, whole(res, 0x102) == (3, ok_rev_udp), (whole(res, 0x102)[0], res.drops()))
    check("frag4_dropped_whole_%s" % mode, whole(res, 0x103)[0] == 0 and whole(res, 0x104)[0] == 0 and
          res.drops().get("filter_drop") == 6, (whole(res, 0x103)[0], whole(res, 0x104)[0], res.drops()))
    ok6, _ = frags6(5001, 0x201, reverse=True)
    bad6, _ = frags6(5000, 0x202, reverse=True)
    res = fw(["filter add forward proto udp dport 5001 accept", "filter policy forward drop"], ok6 + bad6, seq=seq)
    got6 = [p for p in to_out(res) if IPv6ExtHdrFragment in p]
    check("frag6_decided_by_first_%s" % mode, len(got6) == len(ok6) and all(p[IPv6ExtHdrFragment].id == 0x201 for p in got6) and
          res.drops().get("filter_drop") == len(bad6), (len(got6), len(ok6), res.drops()))

# a datagram that also matches a drop rule by its first fragment, under policy accept
ok, ok_udp = frags4(5001, 0x301, reverse=True)
bad4, _ = frags4(5000, 0x302, reverse=True)
res = fw(["filter add forward proto udp dport 5000 drop"], ok + bad4)
check("frag4_drop_rule_policy_accept", whole(res, 0x301) == (3, ok_udp) and whole(res, 0x302)[0] == 0,
      (whole(res, 0x301)[0], whole(res, 0x302)[0], res.drops()))

# later fragments with no first: 16 wait, the 17th is dropped; the run's end gives up on the rest (as the 30 s would)
later = [inside(IP(src=IN4, dst=FAR4, id=0x401, flags="MF", frag=100 + k, proto=17) / Raw(b"z" * 8)) for k in range(17)]
res = fw(["filter add forward proto udp dport 5001 accept", "filter policy forward drop"], later)
check("frag_held_limit_filter_fragment", not to_out(res) and res.drops().get("filter_fragment") == 17, res.drops())

# ================= bad rule lines =================


def refused(name, lines, want_line, words):
    tmp = tempfile.mkdtemp(prefix="rxfw-")
    conf = os.path.join(tmp, "bad.conf")
    with open(conf, "w") as f:
        f.write("\n".join(["port add p0 sim:count=1", "# a comment"] + lines) + "\n")
    p = subprocess.run([RXPATH, "run", "-c", conf, "-i", "0"], capture_output=True, text=True, timeout=20)
    shutil.rmtree(tmp, ignore_errors=True)
    msg = p.stderr.strip()
    check("bad_rule_" + name, p.returncode != 0 and ("bad.conf:%d:" % want_line) in msg and
          all(w in msg for w in words), "status %d: %s" % (p.returncode, msg))


refused("v4_src_v6_dst", ["filter add forward src 10.0.0.0/8 dst 2001:db8::/32 drop"], 3, ["2001:db8::/32", "never match"])
refused("v6_src_v4_dst", ["filter add forward src 2001:db8::/32 dst 10.0.0.0/8 drop"], 3, ["10.0.0.0/8", "never match"])
refused("icmp_with_v6", ["filter policy forward drop", "filter add forward proto icmp dst 2001:db8::1 accept"], 4, ["never match"])
refused("unknown_word", ["filter add forward prot tcp drop"], 3, ["'prot'"])
refused("missing_verdict", ["filter add forward proto tcp dport 80"], 3, ["verdict"])
refused("missing_verdict_even", ["filter add forward proto tcp"], 3, ["verdict"])
refused("bad_verdict", ["filter add forward proto tcp dport 80 allow"], 3, ["'allow'", "accept, drop or reject"])
refused("sport_without_proto", ["filter add forward sport 53 accept"], 3, ["'sport'", "proto tcp"])
refused("dport_with_icmp", ["filter add forward proto icmp dport 53 accept"], 3, ["'dport'"])
refused("icmp_type_without_proto", ["filter add forward icmp-type 8 drop"], 3, ["'icmp-type'"])
refused("bad_port_range", ["filter add forward proto tcp dport 2000-1000 drop"], 3, ["2000-1000"])
refused("bad_ct_state", ["filter add forward ct-state bogus drop"], 3, ["'bogus'"])
refused("policy_reject", ["filter policy forward reject"], 3, ["accept|drop"])
refused("unknown_chain", ["filter add prerouting drop"], 3, ["'prerouting'"])
refused("no_such_set", ["filter add forward src @nosuch drop"], 3, ["nosuch"])
refused("no_such_port", ["filter add forward in p7 drop"], 3, ["p7"])
refused("in_on_output", ["filter add output in p0 drop"], 3, ["'in'"])

for rc, err in bad_exits:
    check("rxpath_exit_0", False, "status %d: %s" % (rc, err))
if not bad_exits:
    check("rxpath_exit_0", True)
done()
