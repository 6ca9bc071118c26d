#!/usr/bin/env bash
# rxpath bench: every variant measured; JSON, table and SVG tell the same story.
set -u
. "$(dirname "$0")/lib.sh"

"$RXPATH" bench --duration 0.02 --reps 3 --sizes 64,1500 --json --svg "$TMP/b.svg" \
	>"$TMP/b.json" 2>"$TMP/b.err"; rc=$?
check bench_json_exit_0 [ "$rc" -eq 0 ]
check bench_json_shape python3 - "$TMP/b.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
fams = {"handoff": {"list", "per-packet"}, "copy": {"copy", "zero-copy"},
        "prefetch": {"none", "1-line", "2-lines"}, "rx_offset": {"0", "2"},
        "buffer_size": {"page", "precise"}, "all": {"all-on", "all-off"}}
for size in (64, 1500):
    got = {}
    for r in rows:
        if r["frame_size"] == size:
            got.setdefault(r["family"], set()).add(r["variant"])
    assert got == fams, (size, got)
for r in rows:
    for k in ("family", "variant", "frame_size", "mpps", "ns_per_packet", "ratio"):
        assert k in r, (k, r)
    assert r["mpps"] > 0
    assert abs(r["ns_per_packet"] - 1000 / r["mpps"]) < 0.01 * r["ns_per_packet"]
    assert r["mpps_min"] <= r["mpps"] <= r["mpps_max"]
# ratios are against the family baseline at the same size
for r in rows:
    base = [b for b in rows if b["family"] == r["family"] and b["frame_size"] == r["frame_size"] and b["baseline"]]
    assert len(base) == 1
    assert abs(r["ratio"] - r["mpps"] / base[0]["mpps"]) < 1e-3, r
PY
check bench_svg_is_xml python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$TMP/b.svg"
check bench_svg_matches_json python3 - "$TMP/b.json" "$TMP/b.svg" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
svg = open(sys.argv[2]).read()
for r in rows:
    assert "%.1f Mpps" % r["mpps"] in svg, r
PY

"$RXPATH" bench --duration 0.02 --reps 1 --sizes 64 >"$TMP/t.txt" 2>/dev/null; rc=$?
check bench_table_exit_0 [ "$rc" -eq 0 ]
check bench_table_rows [ "$(grep -cE '^ +64  [a-z_]+ +[a-z0-9-]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x' "$TMP/t.txt")" -eq 13 ]

out=$("$RXPATH" bench --sizes 10 2>&1); rc=$?
check bench_bad_size [ "$rc" -eq 2 ]
check bench_bad_size_message grep -q -- '--sizes 10: expected' <<<"$out"

# bench l3fwd and bench lpm: every case measured, the JSON fields scripts rely on.
"$RXPATH" bench l3fwd --duration 0.02 --reps 1 --budget 256 --json >"$TMP/l3.json" 2>/dev/null; rc=$?
check bench_l3fwd_exit_0 [ "$rc" -eq 0 ]
check bench_l3fwd_json python3 - "$TMP/l3.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["case"] for r in rows] == ["ipv4", "ipv6", "ipv4-1m-routes", "ipv4-ecmp", "ipv4-filter-10",
                                     "ipv4-filter-10k", "ipv4-1m-flows", "ipv4-ct-1m", "ipv4-ct-new",
                                     "ipv4-nat", "ipv4-edge", "ipv4-nat-new"], rows
for r in rows:
    assert r["frame_size"] == 64 and r["workers"] == 1 and r["mpps"] > 0, r
    assert r["budget"] == 256, r
    assert abs(r["ns_per_packet"] - 1000 / r["mpps"]) < 0.01 * r["ns_per_packet"], r
assert rows[2]["routes"] >= 1000000, rows[2]
# each case's own family's FIB: the 16 routes, two connected subnets and two local addresses
assert rows[0]["routes"] == 20 and rows[1]["routes"] == 20, rows[:2]
# ipv4-ecmp: the same 16 routes, each a group of 4 next hops
assert rows[3]["routes"] == 20 and rows[3]["mpps"] > 0, rows[3]
PY
# --cases picks some, in the table's order; an unknown name is refused
"$RXPATH" bench l3fwd --duration 0.02 --reps 1 --cases ipv4-filter-10,ipv4 --json >"$TMP/l3c.json" 2>/dev/null
check bench_l3fwd_cases python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["case"] for r in rows] == ["ipv4", "ipv4-filter-10"], rows
assert all(r["mpps"] > 0 for r in rows), rows
' "$TMP/l3c.json"
err=$("$RXPATH" bench l3fwd --cases ipv5 2>&1); rc=$?
check bench_l3fwd_cases_unknown sh -c '[ "$1" -eq 2 ] && printf %s "$2" | grep -q "'"'ipv5': no such case"'"' _ "$rc" "$err"

# bench filter: the classifier alone, on rules and a trace as the anchors write them
cat >"$TMP/rules.conf" <<'RULES'
# a comment, then rules as a config file has them
filter add forward src 10.0.0.0/8 proto tcp dport 22 accept
filter add forward dst 192.0.2.0/24 proto udp dport 53-54 drop
filter add forward src 10.1.0.0/16 dst 10.2.0.0/16 drop
filter add forward proto udp accept
RULES
printf '10.1.2.3 10.2.0.1 1000 22 6\n10.9.9.9 192.0.2.7 5 53 17\n10.1.2.3 10.2.3.4 5 6 17\n1.1.1.1 2.2.2.2 5 6 6\n' >"$TMP/trace.txt"
"$RXPATH" bench filter --rules "$TMP/rules.conf" --trace "$TMP/trace.txt" --reps 1 --json >"$TMP/bf.json" 2>/dev/null; rc=$?
check bench_filter_exit_0 [ "$rc" -eq 0 ]
check bench_filter_json python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["rules"] == 4 and j["ns_per_packet"] > 0 and j["mismatches"] == 0, j
assert j["matched"] == 3, j   # the last tuple (TCP to port 6) matches nothing
' "$TMP/bf.json"
# RXPATH_SIMD: scalar lookups on any CPU, the same answers; a word it does not know refused at once
RXPATH_SIMD=scalar "$RXPATH" bench filter --rules "$TMP/rules.conf" --trace "$TMP/trace.txt" --reps 1 --json \
	>"$TMP/bfs.json" 2>/dev/null
check bench_filter_simd_scalar python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert b["impl"] == "scalar" and b["mismatches"] == 0 and b["checksum"] == a["checksum"], (a, b)
' "$TMP/bf.json" "$TMP/bfs.json"
err=$(RXPATH_SIMD=sse9 "$RXPATH" bench filter --rules "$TMP/rules.conf" 2>&1); rc=$?
check bench_filter_simd_unknown sh -c '[ "$1" -eq 2 ] && printf %s "$2" | grep -q "RXPATH_SIMD=sse9: expected scalar, avx512 or auto"' \
	_ "$rc" "$err"
echo "filter add forward src @blocked drop" >"$TMP/bad.conf"
err=$("$RXPATH" bench filter --rules "$TMP/bad.conf" 2>&1); rc=$?
check bench_filter_bad_rule sh -c '[ "$1" -ne 0 ] && printf %s "$2" | grep -q "bad.conf:1: sets and ports"' _ "$rc" "$err"

err=$("$RXPATH" bench l3fwd --budget 257 2>&1); rc=$?
if [ "$rc" -eq 2 ] && grep -q 'expected 1 to 256' <<<"$err"; then
	pass bench_l3fwd_budget_bounded
else
	fail bench_l3fwd_budget_bounded "exit $rc: $err"
fi
"$RXPATH" bench lpm --prefixes4 10000 --prefixes6 1000 --lookups 65536 --reps 1 --json >"$TMP/lpm.json" 2>/dev/null; rc=$?
check bench_lpm_exit_0 [ "$rc" -eq 0 ]
check bench_lpm_json python3 - "$TMP/lpm.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
fams = {r["family"] for r in rows}
assert {"ipv4", "ipv6"} <= fams, fams
for r in rows:
    if r["family"] in ("ipv4", "ipv6"):
        assert r["prefixes"] == (10000 if r["family"] == "ipv4" else 1000), r
        assert r["ns_per_lookup"] > 0 and r["bytes"] > 0, r
PY
