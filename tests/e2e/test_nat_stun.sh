#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NAT44 as a real STUN client classifies it (stun-client against stund,
# RFC 3489's tests): h1 inside, h2 outside with two addresses for the
# server. Endpoint-independent mapping, the ports kept, hairpinning, and
# each `nat filtering` mode as configured.
#
# Run as root: BUILD=build bash tests/e2e/test_nat_stun.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_nat_stun
lab_init
command -v stun >/dev/null && command -v stund >/dev/null ||
	lab_skip_all "no STUN client and server (apt-get install stun-client stun-server)"
trap lab_down EXIT
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
# only translation brings answers back; the server needs a second address
if ! ip -n "$LAB_H2" route del default via 10.0.2.1 || ! ip -n "$LAB_H2" addr add 10.0.2.3/24 dev eth0; then
	fail "${T}_lab_up" "could not take h2's default route away or give it 10.0.2.3"
	exit 1
fi
lab_bg "$LAB_H2" stund -h 10.0.2.2 -a 10.0.2.3
for _ in $(seq 50); do
	lab_in "$LAB_H2" ss -Hlun 'sport = :3478' 2>/dev/null | grep -q . && break
	sleep 0.05
done

# mode, what the client must say of the filter
for want in "address-and-port-dependent:Port Dependent Filter" "address-dependent:Address Dependent Filter" \
	    "endpoint-independent:Independent Filter"; do
	mode=${want%%:*}
	filter=${want#*:}
	name=${T}_${mode//-/_}
	if ! LAB_QUEUES= LAB_CONF_EXTRA="nat add masquerade out p1 src 10.0.1.0/24
nat filtering $mode" lab_rxpath_start afpacket; then
		fail "${name}_start" "rxpath did not start with nat filtering $mode"
		continue
	fi
	out=$(lab_in "$LAB_H1" timeout 20 stun 10.0.2.2 2>&1 | grep '^Primary:')
	echo "  observed: $mode: $out"
	check "${name}_mapping_independent" grep -q "Independent Mapping" <<<"$out"
	check "${name}_filter" grep -q "Primary: Independent Mapping, $filter," <<<"$out"
	check "${name}_ports_kept" grep -q "preserves ports" <<<"$out"
	check "${name}_hairpin" grep -q "will hairpin" <<<"$out"
	lab_rxpath_stop
	check "${name}_exit_0" [ "$?" -eq 0 ]
done
