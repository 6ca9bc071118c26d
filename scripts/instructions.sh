#!/usr/bin/env bash
# Instructions per forwarded packet, as callgrind counts them, for each
# binary given (default: build/rxpath): the bench l3fwd cases ipv4 and ipv6
# (16 routes, 64-byte UDP over 4096 flows, sim0 -> sim1) run by `rxpath run`
# on finite inputs of 100,000 and 300,000 frames; the difference of the two
# counts over the 200,000 frames between them leaves set-up out. The clock
# reads and idle rounds make a count vary by about 0.3%: each figure is the
# median of --reps runs (default 3), with the spread. Needs valgrind.
#   scripts/instructions.sh [--reps N] [BINARY...]
set -eu
reps=3
if [ "${1:-}" = --reps ]; then reps=$2; shift 2; fi
[ $# -gt 0 ] || set -- build/rxpath
command -v valgrind >/dev/null || { echo "needs valgrind: apt-get install valgrind" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

conf() {	# FAMILY FRAMES
	if [ "$1" = 4 ]; then
		echo "port add sim0 sim:proto=udp4,size=64,flows=4096,dst4=16.0.0.0/4,count=$2"
		echo "port add sim1 sim:rx=off"
		echo "addr add 198.18.255.254/16 dev sim0"
		echo "addr add 10.0.1.1/24 dev sim1"
		echo "neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev sim1"
		for i in $(seq 16 31); do echo "route add $i.0.0.0/8 via 10.0.1.2"; done
	else
		echo "port add sim0 sim:proto=udp6,size=64,flows=4096,dst6=2000::/12,count=$2"
		echo "port add sim1 sim:rx=off"
		echo "addr add 2001:db8:1::1/64 dev sim0"
		echo "addr add 2001:db8:ff::1/64 dev sim1"
		echo "neigh add 2001:db8:ff::2 lladdr 02:00:00:00:01:02 dev sim1"
		for i in $(seq 0 15); do printf 'route add 20%02x::/16 via 2001:db8:ff::2\n' "$i"; done
	fi
}

# Prints "INSTRUCTIONS FORWARDED" of one run.
count() {	# BINARY FAMILY FRAMES
	conf "$2" "$3" >"$tmp/c.conf"
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$1" run -c "$tmp/c.conf" \
		--interval 0 --ctl none >"$tmp/run.log" 2>&1
	echo "$(awk '/^summary:/ { print $2; exit }' "$tmp/cg.out") \
$(grep -o 'forwarded [0-9,]*' "$tmp/run.log" | head -n 1 | tr -d , | awk '{ print $2 }')"
}

for bin in "$@"; do
	for fam in 4 6; do
		samples=""
		for _ in $(seq "$reps"); do
			read -r i1 f1 <<<"$(count "$bin" "$fam" 100000)"
			read -r i3 f3 <<<"$(count "$bin" "$fam" 300000)"
			samples="$samples $(awk -v a="$i1" -v b="$i3" -v c="$f1" -v d="$f3" \
				'BEGIN { printf "%.2f", (b - a) / (d - c) }')"
		done
		tr ' ' '\n' <<<"$samples" | sed '/^$/d' | sort -n | awk -v b="$bin" -v f="$fam" \
			'{ v[NR] = $1 } END { printf "%s ipv%s: %.2f instructions per forwarded packet (median of %d, %.2f..%.2f)\n", b, f, v[int((NR + 1) / 2)], NR, v[1], v[NR] }'
	done
done
