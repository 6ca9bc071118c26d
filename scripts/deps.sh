#!/usr/bin/env bash
# Installs the Debian packages rxpath needs to build and test, when missing
# (python3-scapy builds and checks the frames of the conformance tests;
# libxdp/libbpf serve the AF_XDP driver; iproute2, ping, iperf3 and ethtool
# are the peers of the end-to-end tests; libmnl
# speaks netlink for kernel route sync, libmicrohttpd serves the metrics,
# tshark and curl read captures and metrics back in the tests; nftables
# is the kernel NAT that bench veth measures beside rxpath's; a STUN client
# and server classify the NAT; FRR and BIRD are the BGP peers rxpath's
# kernel sync follows).
# Run by `make` before the first build; as root it installs with apt-get,
# otherwise it names the command that does.
set -euo pipefail

need=(libpcap-dev pkg-config python3-scapy libxdp-dev libbpf-dev
      libmnl-dev libmicrohttpd-dev
      iproute2 iputils-ping iperf3 ethtool tshark curl nftables stun-client stun-server
      frr bird2)
[ "${RXP_NEED_CLANG:-0}" = 1 ] && need+=(clang)
# the fuzzers (make fuzz): clang and its libFuzzer runtime
[ "${RXP_NEED_FUZZ:-0}" = 1 ] && need+=(clang libclang-rt-dev)

missing=()
for pkg in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "rxpath needs these Debian packages: ${missing[*]}" >&2
	echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
	{ apt-get update -qq && apt-get install -y -qq "${missing[@]}"; }
