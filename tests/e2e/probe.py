# SPDX-License-Identifier: MIT
# The end-to-end tests' socket probes, run inside a namespace as
#   python3 tests/e2e/probe.py FUNCTION ARGS...
# each printing what it saw as lines the scripts read (flushed: some run in
# the background with their output in a log).
import ctypes, select, socket, struct, sys, time


def out(*a):
    print(*a, flush=True)


# a TCP connect: "connected", "refused SECONDS", "timeout" or "error WHY"
def tcp(host, port, wait):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(float(wait))
    t = time.monotonic()
    try:
        s.connect((host, int(port)))
        out("connected")
    except ConnectionRefusedError:
        out("refused %.3f" % (time.monotonic() - t))
    except (socket.timeout, TimeoutError):
        out("timeout")
    except OSError as e:
        out("error %s" % e.strerror)
# UDP with IP_RECVERR (IPV6_RECVERR), as traceroute reads it: "icmp TYPE CODE OFFENDER" or "none"
def udp(host, port, ttl, wait):
    v6 = ":" in host
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, 25, 1)                     # IPV6_RECVERR
        if int(ttl):
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, int(ttl))
    else:
        s.setsockopt(socket.IPPROTO_IP, 11, 1)                       # IP_RECVERR
        if int(ttl):
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, int(ttl))
    s.connect((host, int(port)))
    s.send(b"probe")
    p = select.poll()
    p.register(s, select.POLLERR | select.POLLIN)
    if not p.poll(float(wait) * 1000):
        out("none")
        return
    try:
        _, anc, _, _ = s.recvmsg(512, 512, socket.MSG_ERRQUEUE)
    except OSError:
        out("none")
        return
    for _, _, data in anc:
        errno_, origin, typ, code = struct.unpack_from("=IBBB", data)
        off = data[16:]
        if v6:
            addr = socket.inet_ntop(socket.AF_INET6, off[8:24])
        else:
            addr = socket.inet_ntop(socket.AF_INET, off[4:8])
        out("icmp %d %d %s" % (typ, code, addr))
        return
    out("none")
# TCP listeners on each port, both families, taking and closing what comes
def listen(*ports):
    socks = []
    for port in ports:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.bind(("::", int(port)))
        s.listen(16)
        socks.append(s)
    while True:
        r, _, _ = select.select(socks, [], [])
        for s in r:
            c, _ = s.accept()
            c.close()
# a minimal HTTP/1.0 GET; prints the body, or what went wrong
def tcpget(host, port, wait, src=""):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(float(wait))
    try:
        if src:
            s.bind((src, 0))
        s.connect((host, int(port)))
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
        body = data.split(b"\r\n\r\n", 1)[-1].decode(errors="replace").strip()
        out("body %s" % body)
    except ConnectionRefusedError:
        out("refused")
    except (socket.timeout, TimeoutError):
        out("timeout")
    except OSError as e:
        out("error %s" % e.strerror)
# a TCP server speaking just enough HTTP: one line "peer ADDR PORT" per connection
def tcpserve(port, text):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(port)))
    s.listen(16)
    while True:
        c, peer = s.accept()
        out("peer %s %d" % peer)
        c.settimeout(1)
        try:
            req = b""
            while b"\r\n\r\n" not in req:
                b = c.recv(4096)
                if not b:
                    break
                req += b
        except OSError:
            pass
        body = (text + "\n").encode()
        try:
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n" % len(body) + body)
            c.shutdown(socket.SHUT_WR)
            while c.recv(4096):
                pass
        except OSError:
            pass
        c.close()
# UDP echo: one line "peer ADDR PORT" per datagram
def udpserve(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # udpsend may send from its port too
    s.bind((addr, int(port)))
    while True:
        data, peer = s.recvfrom(65535)
        out("peer %s %d" % peer)
        try:
            s.sendto(data, peer)
        except OSError as e:                                 # no route back: say so, keep serving
            out("sendto %s %d: %s" % (peer + (e.strerror,)))
# from a fixed source port: one datagram, its echo
def udpecho(host, port, sport, wait):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(sport)))
    s.settimeout(float(wait))
    s.sendto(b"nat-echo", (host, int(port)))
    try:
        data, peer = s.recvfrom(65535)
        out("echo %s from %s %d" % ((data.decode(errors="replace"),) + peer))
    except (socket.timeout, TimeoutError):
        out("timeout")
# one datagram from sport to host:port, no answer awaited
def udpsend(host, port, sport):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(sport)))
    s.sendto(b"unsolicited", (host, int(port)))
# what arrives on port within wait seconds
def udprecv(port, wait):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(port)))
    s.settimeout(float(wait))
    out("ready")
    try:
        data, peer = s.recvfrom(65535)
        out("got %s from %s %d" % ((data.decode(errors="replace"),) + peer))
    except (socket.timeout, TimeoutError):
        out("none")
# ICMP as it arrives: "icmp SRC DST TYPE" per packet, for wait seconds
def icmpsniff(wait):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    out("ready")
    end = time.monotonic() + float(wait)
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        s.settimeout(left)
        try:
            p = s.recv(65535)
        except (socket.timeout, TimeoutError):
            return
        ihl = (p[0] & 15) * 4
        out("icmp %s %s %d" % (socket.inet_ntoa(p[12:16]), socket.inet_ntoa(p[16:20]), p[ihl]))
# every IPv4 frame arriving on dev with a source in 10.0.1.0/24 (a leak: it
# was not translated), picked by a classic BPF filter so the rest costs nothing
class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
def leaks(dev):
    prog = [(0x28, 0, 0, 12),                 # ldh [12]          ethertype
            (0x15, 0, 4, 0x0800),             # jne #IPv4 -> drop
            (0x20, 0, 0, 26),                 # ld [26]           source address
            (0x54, 0, 0, 0xffffff00),         # and #/24
            (0x15, 0, 1, 0x0a000100),         # jne #10.0.1.0 -> drop
            (0x06, 0, 0, 0xffff),             # ret all
            (0x06, 0, 0, 0)]                  # drop
    arr = (SockFilter * len(prog))(*[SockFilter(*i) for i in prog])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, 26, struct.pack("HL", len(prog), ctypes.addressof(arr)))  # SO_ATTACH_FILTER
    s.bind((dev, 0x0003))                     # ETH_P_ALL, only once filtered
    out("ready")
    n = 0
    while True:
        p, addr = s.recvfrom(65535)
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        n += 1
        if n <= 20:
            ip = p[14:]
            out("leak %s -> %s proto %d len %d" % (socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20]), ip[9], len(ip)))
globals()[sys.argv[1]](*sys.argv[2:])
