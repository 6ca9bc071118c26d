#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rxpath bench veth: kernel, afxdp (also busy polling) and afpacket forwarding
# measured in one namespace lab, ratios taken against the kernel, and the lab
# removed after.
set -u
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP bench_veth: needs root to create network namespaces and veth pairs"
	exit 0
fi
probe="rxp-$$-probe"
if ! out=$(ip netns add "$probe" 2>&1); then
	echo "SKIP bench_veth: cannot create a network namespace ($out)"
	exit 0
fi
if ! out=$(ip -n "$probe" link add name probe0 type veth peer name probe1 2>&1); then
	ip netns del "$probe" 2>/dev/null
	echo "SKIP bench_veth: cannot create a veth pair ($out)"
	exit 0
fi
ip netns del "$probe"

"$RXPATH" bench veth --duration 1 --reps 1 --json >"$TMP/v.json" 2>"$TMP/v.err" &
pid=$!
# a watchdog: SIGTERM makes it remove the lab and exit, never a hung test
( sleep 90; kill -TERM "$pid" 2>/dev/null ) &
dog=$!
wait "$pid"; rc=$?
kill "$dog" 2>/dev/null
wait "$dog" 2>/dev/null
if [ "$rc" -eq 0 ]; then
	pass bench_veth_exit_0
else
	fail bench_veth_exit_0 "exit status $rc:" "$(tail -n 5 "$TMP/v.err")"
fi
check bench_veth_json python3 - "$TMP/v.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert isinstance(rows, list) and len(rows) == 4, rows
by = {r["path"]: r for r in rows}
assert set(by) == {"kernel", "afxdp", "afxdp-coalesce", "afpacket"}, by
assert all(r["sink"] == "xdp" for r in rows), rows
k = by["kernel"]["pps"]
for r in rows:
    for key in ("pps", "ratio_to_kernel", "pps_min", "pps_max", "reps", "frame_size"):
        assert key in r, (key, r)
    assert r["pps"] > 0, r
    assert r["frame_size"] == 64 and r["reps"] == 1, r
    assert r["pps_min"] <= r["pps"] <= r["pps_max"], r
    assert abs(r["ratio_to_kernel"] - r["pps"] / k) < 1e-3 * max(1, r["ratio_to_kernel"]), r
assert by["kernel"]["ratio_to_kernel"] == 1.0, by["kernel"]
PY
# its namespaces are named after its pid
left=$(ip netns list | grep "^rxp-$pid-")
check bench_veth_lab_removed [ -z "$left" ]
[ -n "$left" ] && echo "  left behind: $left"

# SIGINT in the middle of a run still removes the lab.
"$RXPATH" bench veth --duration 5 --reps 1 >/dev/null 2>"$TMP/int.err" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"; rc=$?
left=$(ip netns list | grep "^rxp-$pid-")
if [ "$rc" -eq 130 ] && [ -z "$left" ]; then
	pass bench_veth_sigint_removes_lab
else
	fail bench_veth_sigint_removes_lab "exit status $rc (expected 130); left: ${left:-nothing}" \
		"$(tail -n 3 "$TMP/int.err")"
fi
