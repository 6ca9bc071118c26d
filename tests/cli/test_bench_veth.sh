#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rxpath bench veth: kernel, afxdp (also coalesced) and afpacket forwarding,
# and kernel, afxdp and afpacket with masquerade, measured in one namespace lab,
# ratios taken against the kernel (the NAT paths' against the kernel's NAT),
# and the lab removed after.
set -u
. "$(dirname "$0")/lib.sh"

need_veth_lab bench_veth

# the kernel-nat path needs nft: without it the bench says so at once, and
# the paths without NAT are measured alone
paths=
if ! command -v nft >/dev/null 2>&1 && ! [ -x /usr/sbin/nft ]; then
	echo "NOTE bench_veth: no nft (apt-get install nftables): the NAT paths are not measured"
	"$RXPATH" bench veth --duration 1 --reps 1 >/dev/null 2>"$TMP/nonft.err"; rc=$?
	if [ "$rc" -eq 1 ] && grep -q "apt-get install nftables" "$TMP/nonft.err"; then
		pass bench_veth_no_nft_said
	else
		fail bench_veth_no_nft_said "exit status $rc (expected 1):" "$(tail -n 2 "$TMP/nonft.err")"
	fi
	paths="--paths kernel,afxdp,afxdp-coalesce,afpacket"
fi
"$RXPATH" bench veth --paths afxdp,nope >/dev/null 2>"$TMP/badpath.err"; rc=$?
if [ "$rc" -eq 2 ] && grep -q "'nope': no such path" "$TMP/badpath.err"; then
	pass bench_veth_bad_path_refused
else
	fail bench_veth_bad_path_refused "exit status $rc (expected 2):" "$(cat "$TMP/badpath.err")"
fi

# shellcheck disable=SC2086
"$RXPATH" bench veth --duration 1 --reps 1 --json $paths >"$TMP/v.json" 2>"$TMP/v.err" &
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
check bench_veth_json python3 - "$TMP/v.json" "${paths:+plain}" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
plain = {"kernel", "afxdp", "afxdp-coalesce", "afpacket"}
nat = {"kernel-nat", "afxdp-nat", "afpacket-nat"}
want = plain if sys.argv[2] else plain | nat
assert isinstance(rows, list) and len(rows) == len(want), rows
by = {r["path"]: r for r in rows}
assert set(by) == want, by
assert all(r["sink"] == "xdp" for r in rows), rows
for r in rows:
    for key in ("pps", "ratio_to_kernel", "ratio_to", "nat", "pps_min", "pps_max", "reps",
                "frame_size", "flows"):
        assert key in r, (key, r)
    assert r["pps"] > 0, r
    assert r["frame_size"] == 64 and r["reps"] == 1, r
    assert r["pps_min"] <= r["pps"] <= r["pps_max"], r
    # the NAT paths' ratios are to the kernel's NAT, the others' to the kernel
    assert r["nat"] == (r["path"] in nat), r
    assert r["ratio_to"] == ("kernel-nat" if r["nat"] else "kernel"), r
    # every flow is a connection: far fewer than the tables hold
    assert 1 <= r["flows"] < 65536 // 2, r
    k = by[r["ratio_to"]]["pps"]
    assert abs(r["ratio_to_kernel"] - r["pps"] / k) < 1e-3 * max(1, r["ratio_to_kernel"]), r
assert by["kernel"]["ratio_to_kernel"] == 1.0, by["kernel"]
if "kernel-nat" in by:
    assert by["kernel-nat"]["ratio_to_kernel"] == 1.0, by["kernel-nat"]
    for n, p in (("afxdp-nat", "afxdp"), ("afpacket-nat", "afpacket")):
        assert by[n]["plain_path"] == p, by[n]
        assert abs(by[n]["plain_ratio_to_kernel"] - by[p]["ratio_to_kernel"]) < 1e-3, (by[n], by[p])
PY
# the NAT paths against the plain ones, in the same run (stderr: stdout is the JSON)
if [ -z "$paths" ]; then
	check bench_veth_nat_comparison grep -q "^afxdp-nat/kernel-nat .* vs afxdp/kernel " "$TMP/v.err"
fi
# its namespaces are named after its pid
left=$(ip netns list | grep "^rxp-$pid-")
check bench_veth_lab_removed [ -z "$left" ]
[ -n "$left" ] && echo "  left behind: $left"

# SIGINT in the middle of a run still removes the lab.
# shellcheck disable=SC2086
"$RXPATH" bench veth --duration 5 --reps 1 $paths >/dev/null 2>"$TMP/int.err" &
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
