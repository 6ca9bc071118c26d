#!/usr/bin/env bash
# rxpath doctor: checks named, problems explained with a fix, exit status 1 on a problem.
set -u
. "$(dirname "$0")/lib.sh"

out=$("$RXPATH" doctor 2>&1); rc=$?
# as root nothing needed is missing here (without root the capabilities are the problem)
[ "$(id -u)" -eq 0 ] && check doctor_runs_clean [ "$rc" -eq 0 ]
check doctor_kernel grep -q "kernel .*need_wakeup" <<<"$out"
check doctor_caps grep -q "CAP_NET_ADMIN" <<<"$out"
check doctor_memlock grep -q "memlock limit" <<<"$out"
check doctor_summary grep -Eq "^ok: [0-9]+, warnings: [0-9]+, problems: [0-9]+$" <<<"$out"

out=$("$RXPATH" doctor nosuch0 2>&1); rc=$?
check doctor_missing_iface_fails [ "$rc" -eq 1 ]
check doctor_missing_iface_says_fix grep -A1 "interface nosuch0: does not exist" <<<"$out" | grep -q "fix: ip link show"

if [ "$(id -u)" -ne 0 ] || ! ip netns add "rxp-doc-$$" 2>/dev/null; then
	echo "SKIP doctor_veth: needs root and network namespaces (run the tests as root)"
	exit 0
fi
NS="rxp-doc-$$"	# lib.sh's exit removes it
ip -n "$NS" link add d0 type veth peer name d1
ip -n "$NS" link set d0 up
ip netns exec "$NS" ethtool -K d0 tx off tso off gso off >/dev/null 2>&1
ip -n "$NS" link set d1 up
ip -n "$NS" link set dev d1 xdpgeneric obj /usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o sec xdp 2>/dev/null
out=$(ip netns exec "$NS" "$RXPATH" doctor d0 2>&1)
check doctor_veth_driver grep -q "interface d0: driver veth" <<<"$out"
check doctor_veth_native grep -q "interface d0: native XDP with redirect to AF_XDP (driver veth" <<<"$out"
# the offloads that matter are the sending peer's: d1's (on), not d0's (off)
check doctor_veth_peer_offload_fix grep -q "fix: ethtool -K d1 tso off" <<<"$out"
check doctor_veth_own_offloads_not_blamed bash -c '! grep -q "fix: ethtool -K d0" <<<"$1"' _ "$out"
check doctor_veth_coalesce_fix grep -q "fix: port add p0 afxdp:dev=d0,coalesce=200" <<<"$out"
check doctor_no_prog_on_d0 grep -q "interface d0: no XDP program attached" <<<"$out"
out=$(ip netns exec "$NS" "$RXPATH" doctor d1 2>&1)
check doctor_veth_peer_offloads_off grep -q "interface d1: its veth peer d0 sends no GSO packets" <<<"$out"
if ip -n "$NS" link show d1 | grep -q xdp; then
	check doctor_sees_attached_prog grep -q "interface d1: an XDP program is attached" <<<"$out"
	check doctor_generic_prog_fix grep -q "fix: if nothing else needs it: ip link set dev d1 xdpgeneric off" <<<"$out"
fi
