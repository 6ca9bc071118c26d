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
assert [r["case"] for r in rows] == ["ipv4", "ipv6", "ipv4-1m-routes"], rows
for r in rows:
    assert r["frame_size"] == 64 and r["workers"] == 1 and r["mpps"] > 0, r
    assert r["budget"] == 256, r
    assert abs(r["ns_per_packet"] - 1000 / r["mpps"]) < 0.01 * r["ns_per_packet"], r
assert rows[2]["routes"] >= 1000000, rows[2]
# each case's own family's FIB: the 16 routes, two connected subnets and two local addresses
assert rows[0]["routes"] == 20 and rows[1]["routes"] == 20, rows[:2]
PY
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
