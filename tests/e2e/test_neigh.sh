# SPDX-License-Identifier: MIT
# Neighbours that traffic uses are renewed before they age out, by a request
# to their own MAC, so a one-way stream never waits for a broadcast request:
# h1 sends UDP to h2 (which never answers, so nothing else renews rxpath's
# entry for h2) for longer than two lifetimes of `neigh ageing 5`, and h2
# counts what reaches it and the ARP requests and solicitations it sees.
# Without the renewal, each lifetime ends in a broadcast round during which
# the stream's bursts overflow what the entry holds (neigh_hold_full).
# Run as root: BUILD=build bash tests/e2e/test_neigh.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_neigh
SECONDS_SENT=13

lab_init
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
LAB_CONF_EXTRA="neigh ageing 5" lab_rxpath_start afpacket
if [ -z "$LAB_RXPATH_PID" ]; then
	fail "${T}_start" "rxpath did not start"
	exit 1
fi
pass "${T}_start"

h2_mac=$(ip -n "$LAB_H2" -j link show eth0 | lab_json 'j[0]["address"]')
# h2: sockets that take the stream (no Port Unreachable goes back) and a raw
# socket that sorts what arrives; prints one JSON line at the end
lab_bg "$LAB_H2" "$PYTHON" -c '
import json, select, socket, sys, time
mine = bytes.fromhex(sys.argv[1].replace(":", ""))
end = time.time() + float(sys.argv[2])
u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u4.bind(("0.0.0.0", 9999))
u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1); u6.bind(("::", 9999))
raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)); raw.bind(("eth0", 0))
c = dict(udp4=0, udp6=0, arp_bcast=0, arp_unicast=0, ns_mcast=0, ns_unicast=0)
while time.time() < end:
    for s in select.select([u4, u6, raw], [], [], 0.2)[0]:
        if s is u4: s.recv(2048); c["udp4"] += 1
        elif s is u6: s.recv(2048); c["udp6"] += 1
        else:
            f, addr = s.recvfrom(2048)
            if len(f) < 14 or addr[2] == socket.PACKET_OUTGOING: continue
            to_me = f[:6] == mine
            if f[12:14] == b"\x08\x06" and len(f) >= 22 and f[20:22] == b"\x00\x01":
                c["arp_unicast" if to_me else "arp_bcast"] += 1
            elif f[12:14] == b"\x86\xdd" and len(f) >= 55 and f[20] == 58 and f[54] == 135:
                c["ns_unicast" if to_me else "ns_mcast"] += 1
print(json.dumps(c), flush=True)
' "$h2_mac" $((SECONDS_SENT + 2)) >"$LAB_DIR/h2.json"
sleep 0.5
# h1: bursts of 16 datagrams of IPv4 and of IPv6 every 10 ms: more than the
# 4 packets a neighbour being resolved holds, so a broadcast round would lose some
sent=$(lab_in "$LAB_H1" "$PYTHON" -c '
import socket, sys, time
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
# one of each first, so that rxpath learns h2 before the bursts come
s4.sendto(b"x" * 32, ("10.0.2.2", 9999)); s6.sendto(b"x" * 32, ("2001:db8:2::2", 9999))
time.sleep(0.5)
n, end = 1, time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(16):
        s4.sendto(b"x" * 32, ("10.0.2.2", 9999)); s6.sendto(b"x" * 32, ("2001:db8:2::2", 9999)); n += 1
    time.sleep(0.01)
print(n)' "$SECONDS_SENT")
wait "${LAB_PIDS[@]}" 2>/dev/null
LAB_PIDS=()
h2=$(cat "$LAB_DIR/h2.json")
lab_rxpath_stop
summary=$(lab_summary)

get() { lab_json "$1" <<<"$h2" 2>/dev/null; }
detail="h1 sent $sent of each; h2 counted $h2"
if [ -n "$h2" ] && [ "$(get 'j["udp4"]')" = "$sent" ] && [ "$(get 'j["udp6"]')" = "$sent" ]; then
	pass "${T}_stream_never_waits"
else
	fail "${T}_stream_never_waits" "$detail" "rxpath drops: $(lab_json 'j["drops"]' <<<"$summary" 2>/dev/null)"
fi
# one broadcast request / multicast solicitation to learn h2, renewals to its MAC after
if [ -n "$h2" ] && [ "$(get 'j["arp_bcast"]')" -le 1 ] && [ "$(get 'j["arp_unicast"]')" -ge 2 ]; then
	pass "${T}_arp_renewed_unicast"
else
	fail "${T}_arp_renewed_unicast" "$detail"
fi
if [ -n "$h2" ] && [ "$(get 'j["ns_mcast"]')" -le 1 ] && [ "$(get 'j["ns_unicast"]')" -ge 2 ]; then
	pass "${T}_nd_renewed_unicast"
else
	fail "${T}_nd_renewed_unicast" "$detail"
fi
