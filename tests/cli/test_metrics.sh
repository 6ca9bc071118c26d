#!/usr/bin/env bash
# rxpath run --metrics: Prometheus text exposition over HTTP. The page parses,
# has every drop reason for every port, only grows, agrees with the JSON
# summary printed at exit (exactly, for a run that has gone quiet), and bad
# addresses or a port in use are refused with a clear message.
set -u
. "$(dirname "$0")/lib.sh"

PY=${PYTHON:-python3}
RX_PID=

stop_rxpath() {
	[ -n "$RX_PID" ] && kill -TERM "$RX_PID" 2>/dev/null && wait "$RX_PID"
	local rc=$?
	RX_PID=
	return $rc
}
trap 'stop_rxpath >/dev/null 2>&1; [ -n "${NS:-}" ] && ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT

# wait_address ERRFILE: prints host:port once rxpath has announced it (10 s at most)
wait_address() {
	local addr
	for _ in $(seq 100); do
		addr=$(sed -n 's|^rxpath run: metrics at http://\(.*\)/metrics$|\1|p' "$1")
		if [ -n "$addr" ]; then echo "$addr"; return 0; fi
		kill -0 "$RX_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# The checks, in Python: validate PAGE, grows OLD NEW, below PAGE SUMMARY, equal PAGE SUMMARY,
# quiet OLD NEW (the counters that stop when traffic stops are unchanged).
cat >"$TMP/prom.py" <<'PY'
import json, re, sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(%s)(\{(?:%s(?:,%s)*,?)?\})? (\S+)( -?\d+)?$' % (NAME, LABEL, LABEL))
HELP = re.compile(r'^# HELP (%s) (.*)$' % NAME)
TYPE = re.compile(r'^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$' % NAME)
VALUE = re.compile(r'^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$')
LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
# counters that move while the datapath only polls (no traffic)
BUSY = ("rxpath_rx_polls_total", "rxpath_pool_buffers_free", "rxpath_start_time_seconds")

def parse(path):
    """Returns ({(name, labels): value}, {name: type}); raises on any bad line."""
    types, helps, series, done, last = {}, {}, {}, set(), None
    text = open(path, encoding="utf-8").read()
    assert text.endswith("\n"), "page does not end with a newline"
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d: %r" % (n, line)
        if not line:
            continue
        m = HELP.match(line)
        if m:
            assert m.group(1) not in helps, "second HELP, " + where
            helps[m.group(1)] = m.group(2)
            continue
        m = TYPE.match(line)
        if m:
            assert m.group(1) not in types, "second TYPE, " + where
            assert m.group(1) not in done, "TYPE after samples, " + where
            types[m.group(1)] = m.group(2)
            continue
        assert not line.startswith("#") or line.startswith("# "), where
        if line.startswith("# "):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample, " + where
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        assert VALUE.match(value), "bad value, " + where
        assert name in types, "sample without a TYPE, " + where
        if name != last:
            assert name not in done, "family not contiguous, " + where
            done.add(name)
            last = name
        key = (name, tuple(LABEL_PAIR.findall(labels)))
        assert key not in series, "duplicate series, " + where
        series[key] = float(value)
    for name, t in types.items():
        assert name.startswith("rxpath_"), name
        assert name in helps, "no HELP for " + name
        assert (t == "counter") == name.endswith("_total"), "counter naming: " + name
    return series, types

def labels(key):
    return dict(key[1])

def validate(page):
    series, types = parse(page)
    ports = [labels(k)["port"] for k in series if k[0] == "rxpath_port_info"]
    assert ports, "no rxpath_port_info"
    reasons = {}
    for k in series:
        if k[0] == "rxpath_drops_total":
            reasons.setdefault(labels(k)["port"], set()).add(labels(k)["reason"])
    for p in ports:
        assert len(reasons.get(p, ())) >= 40, (p, sorted(reasons.get(p, ())))
        assert reasons[p] == reasons[ports[0]], p
        for m in ("rxpath_rx_packets_total", "rxpath_tx_packets_total", "rxpath_rx_dropped_total"):
            assert any(k[0] == m and labels(k).get("port") == p and "queue" in labels(k)
                       for k in series), (m, p)
    for m in ("rxpath_forwarded_packets_total", "rxpath_polls_total", "rxpath_icmp_errors_total",
              "rxpath_pool_buffers", "rxpath_pool_alloc_fast_total", "rxpath_delivered_packets_total"):
        assert any(k[0] == m for k in series), m
    print("%d series, %d families, ports %s" % (len(series), len(types), ",".join(ports)))

def grows(old, new):
    a, ta = parse(old)
    b, _ = parse(new)
    assert set(a) == set(b), set(a) ^ set(b)
    for k, v in a.items():
        if ta[k[0]] == "counter":
            assert b[k] >= v, (k, v, b[k])

def quiet(old, new):
    a, _ = parse(old)
    b, _ = parse(new)
    changed = [k for k in a if k[0] not in BUSY and a[k] != b[k]]
    assert not changed, changed[:5]

def from_page(series):
    """The page in the summary's shape: per-port sums over queues, and the globals."""
    out = {"ports": {}, "drops": {}, "delivered": {}, "pool": {}}
    def port(p):
        return out["ports"].setdefault(p, {"drops": {}})
    for (name, lab), v in series.items():
        lab = dict(lab)
        if name.startswith(("rxpath_rx_", "rxpath_tx_")) and "queue" in lab:
            f = name[len("rxpath_"):-len("_total")]
            d = port(lab["port"])
            d[f] = d.get(f, 0) + v
        elif name == "rxpath_drops_total":
            port(lab["port"])["drops"][lab["reason"]] = v
            out["drops"][lab["reason"]] = out["drops"].get(lab["reason"], 0) + v
        elif name == "rxpath_delivered_packets_total":
            out["delivered"][lab["class"]] = v
        elif name.startswith("rxpath_pool_") and name.endswith("_total"):
            out["pool"][name[len("rxpath_pool_"):-len("_total")]] = v
        elif name.endswith("_total"):
            out[name[len("rxpath_"):-len("_total")].replace("_packets", "")] = v
    return out

def pairs(page, summary_path):
    """Yields (what, scraped, at exit) for every counter the summary has."""
    m = from_page(parse(page)[0])
    s = [json.loads(l) for l in open(summary_path) if '"event":"summary"' in l][-1]
    for p in s["ports"]:
        mp = m["ports"][p["port"]]
        for f in ("rx_packets", "rx_bytes", "rx_dropped", "rx_no_buffer", "tx_packets", "tx_bytes"):
            yield "%s %s" % (p["port"], f), mp[f], p[f]
        for r in mp["drops"]:
            yield "%s drop %s" % (p["port"], r), mp["drops"][r], p["drops"].get(r, 0)
    for group in ("drops", "delivered", "pool"):
        assert set(s[group]) == set(m[group]), (group, set(s[group]) ^ set(m[group]))
        for k, v in s[group].items():
            yield "%s %s" % (group, k), m[group][k], v
    for f in ("forwarded", "fragments", "local_out", "local_out_dropped", "icmp_errors",
              "icmp_ratelimited", "neigh_requests"):
        yield f, m[f], s[f]

def below(page, summary):
    bad = [(w, a, b) for w, a, b in pairs(page, summary) if a > b]
    assert not bad, bad[:5]

def equal(page, summary):
    n, bad = 0, []
    for w, a, b in pairs(page, summary):
        n += 1
        if a != b:
            bad.append((w, a, b))
    assert not bad, bad[:5]
    print("%d counters equal" % n)

{"validate": validate, "grows": grows, "below": below, "equal": equal,
 "quiet": quiet}[sys.argv[1]](*sys.argv[2:])
PY

# py NAME ARGS...: one check run by the helper; its message on failure
py() {
	local name=$1 out; shift
	if out=$("$PY" "$TMP/prom.py" "$@" 2>&1); then pass "$name"; else fail "$name" "$(tail -n 3 <<<"$out")"; fi
}

# scrape URL FILE [HEADERS]: HTTP status on stdout
scrape() {
	curl -sS -m 10 -o "$2" -D "${3:-/dev/null}" -w '%{http_code}' "$1"
}

# ---- a live router: format, stable series, growth, agreement with the summary ----

"$RXPATH" run -c examples/router.conf --metrics 127.0.0.1:0 --json -i 0 --ctl none \
	>"$TMP/run.out" 2>"$TMP/run.err" &
RX_PID=$!
if ! addr=$(wait_address "$TMP/run.err"); then
	fail metrics_starts "no 'metrics at' line:" "$(cat "$TMP/run.err")"
	exit 1
fi
pass metrics_starts
check metrics_loopback_by_default grep -q '^127\.0\.0\.1:[1-9][0-9]*$' <<<"$addr"

code=$(scrape "http://$addr/metrics" "$TMP/page1" "$TMP/hdr1")
check metrics_http_200 [ "$code" = 200 ]
check metrics_content_type grep -qi '^content-type: text/plain; version=0\.0\.4; charset=utf-8' "$TMP/hdr1"
py metrics_page_parses validate "$TMP/page1"
check metrics_drop_reason_series grep -q '^rxpath_drops_total{port="sim0",reason="ip4_bad_checksum"} [0-9]' "$TMP/page1"
check metrics_drop_reason_zeros grep -q '^rxpath_drops_total{port="sim1",reason="nd_not_for_us"} 0$' "$TMP/page1"
check metrics_queue_labels grep -q '^rxpath_rx_packets_total{port="sim0",queue="0"} [1-9]' "$TMP/page1"
check metrics_forwarding_counted grep -Eq '^rxpath_forwarded_packets_total [1-9]' "$TMP/page1"
sleep 0.3
code=$(scrape "http://$addr/metrics" "$TMP/page2")
check metrics_second_scrape [ "$code" = 200 ]
py metrics_counters_grow grows "$TMP/page1" "$TMP/page2"

code=$(scrape "http://$addr/" "$TMP/root")
check metrics_root_points_to_metrics bash -c '[ "$1" = 200 ] && grep -q /metrics "$2"' _ "$code" "$TMP/root"
check metrics_404 [ "$(scrape "http://$addr/nothing" /dev/null)" = 404 ]
check metrics_405 [ "$(curl -sS -m 10 -o /dev/null -w '%{http_code}' -X POST -d x=1 "http://$addr/metrics")" = 405 ]
check metrics_head [ "$(curl -sS -m 10 -o /dev/null -w '%{http_code}' -I "http://$addr/metrics")" = 200 ]

# a second rxpath on the same address is refused, named, with a fix
out=$("$RXPATH" run -i 0 --duration 5 --ctl none --metrics "$addr" 2>&1); rc=$?
check metrics_in_use_exit_1 [ "$rc" -eq 1 ]
check metrics_in_use_message grep -q -- "--metrics $addr: address already in use.*choose another port" <<<"$out"
check metrics_in_use_nothing_ran bash -c '! grep -q summary <<<"$1"' _ "$out"

stop_rxpath; rc=$?
check metrics_run_stops_clean [ "$rc" -eq 0 ]
check metrics_server_gone bash -c '! curl -s -m 2 -o /dev/null "http://$1/metrics"' _ "$addr"
py metrics_scrape_below_summary below "$TMP/page2" "$TMP/run.out"
# sim1 only transmits: its receive side is as quiet in the scrape as at exit
check metrics_quiet_port_matches bash -c 'grep -q "^rxpath_rx_packets_total{port=\"sim1\",queue=\"0\"} 0$" "$1" &&
	grep -q "\"port\":\"sim1\",\"rx_packets\":0," "$2"' _ "$TMP/page2" "$TMP/run.out"

# ---- bad addresses ----
out=$("$RXPATH" run --metrics 1.2.3.4.5 --duration 1 2>&1); rc=$?
check metrics_bad_address_exit_2 [ "$rc" -eq 2 ]
check metrics_bad_address_message grep -q -- '--metrics 1.2.3.4.5: expected PORT, IPV4:PORT, \[IPV6\]:PORT or localhost:PORT' <<<"$out"
out=$("$RXPATH" run --metrics 127.0.0.1:99999 --duration 1 2>&1); rc=$?
check metrics_bad_port_exit_2 [ "$rc" -eq 2 ]
out=$("$RXPATH" run --metrics 192.0.2.1:9417 -i 0 --duration 1 2>&1); rc=$?
check metrics_foreign_address_refused bash -c '[ "$1" -eq 1 ] && grep -q "no interface here has that address" <<<"$2"' _ "$rc" "$out"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	cp "$RXPATH" "$TMP/rxpath" && chmod 755 "$TMP" "$TMP/rxpath"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$TMP/rxpath" run --metrics 127.0.0.1:80 -i 0 --ctl none --duration 1 2>&1); rc=$?
	if grep -q 'AddressSanitizer\|cannot' <<<"$out" && ! grep -q 'permission denied' <<<"$out"; then
		echo "SKIP metrics_low_port_unprivileged: rxpath does not start as nobody here"
	else
		check metrics_low_port_unprivileged bash -c '[ "$1" -eq 1 ] && grep -q "permission denied.*choose a port above 1023" <<<"$2"' _ "$rc" "$out"
	fi
fi
out=$("$RXPATH" run --metrics '[::1]:0' -i 0 --ctl none --duration 0.5 2>&1); rc=$?
if grep -q 'no interface here has that address' <<<"$out"; then
	echo "SKIP metrics_ipv6_loopback: no ::1 here"
else
	check metrics_ipv6_loopback bash -c '[ "$1" -eq 0 ] && grep -q "metrics at http://\[::1\]:[1-9]" <<<"$2"' _ "$rc" "$out"
fi

# ---- a run gone quiet: the scrape equals the summary printed at exit ----
# A finite sim source routed out of an AF_PACKET port on a veth that answers
# nothing: the AF_PACKET port never ends, so the run outlives its traffic.
NS="rxp-met-$$"
if [ "$(id -u)" -ne 0 ] || ! ip netns add "$NS" 2>/dev/null; then
	NS=
	echo "SKIP metrics_quiet_run_equals_summary: needs root and network namespaces"
	exit 0
fi
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link set v0 up && ip -n "$NS" link set v1 up
cat >"$TMP/quiet.conf" <<'EOF'
port add p0 sim:proto=udp4+tcp4,count=20000,bad=3,dst4=16.0.0.0/4
port add p1 afpacket:dev=v0
addr add 198.18.255.254/16 dev p0
addr add 10.0.1.1/24 dev p1
neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1
route add 16.0.0.0/5 via 10.0.1.2
EOF
ip netns exec "$NS" "$RXPATH" run -c "$TMP/quiet.conf" --metrics 0 --json -i 0 --ctl none \
	>"$TMP/quiet.out" 2>"$TMP/quiet.err" &
RX_PID=$!
if ! addr=$(wait_address "$TMP/quiet.err"); then
	fail metrics_quiet_starts "$(cat "$TMP/quiet.err")"
	exit 1
fi
# scrape until two scrapes 0.3 s apart agree on everything traffic moves
settled=0
ip netns exec "$NS" curl -sS -m 10 -o "$TMP/q0" "http://$addr/metrics"
for _ in $(seq 50); do
	sleep 0.3
	ip netns exec "$NS" curl -sS -m 10 -o "$TMP/q1" "http://$addr/metrics"
	if grep -q '^rxpath_rx_packets_total{port="p0",queue="0"} 20000$' "$TMP/q1" &&
	   "$PY" "$TMP/prom.py" quiet "$TMP/q0" "$TMP/q1" 2>/dev/null; then
		settled=1
		break
	fi
	mv "$TMP/q1" "$TMP/q0"
done
check metrics_quiet_settles [ "$settled" -eq 1 ]
py metrics_quiet_page_parses validate "$TMP/q1"
stop_rxpath; rc=$?
check metrics_quiet_run_stops_clean [ "$rc" -eq 0 ]
py metrics_quiet_run_equals_summary equal "$TMP/q1" "$TMP/quiet.out"
check metrics_quiet_run_forwarded grep -Eq '"forwarded":[1-9]' "$TMP/quiet.out"
