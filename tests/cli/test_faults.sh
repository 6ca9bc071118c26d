#!/usr/bin/env bash
# Overload and faults on sim ports, each check with the figures it saw:
# pool exhaustion and recovery, a TX ring that does not drain, a flood to
# neighbours that never answer, a flood of ICMP errors against the rate
# limit, SIGTERM under full load. (An interface deleted while running is
# in tests/e2e/test_faults.sh.)
set -u
. "$(dirname "$0")/lib.sh"

observed() { echo "  observed: $*"; }

# ok NAME 'CONDITION' : PASS when the shell condition holds; values are
# expanded by the caller, so a FAIL line shows the figures compared.
ok() {
	local name=$1; shift
	if eval "$*"; then pass "$name"; else fail "$name" "failed: $*"; fi
}

# py 'EXPR' JSON... : prints the Python expression over the parsed JSON arguments j[0], j[1], ...
py() {
	python3 -c 'import json, sys
j = [json.loads(a) for a in sys.argv[2:]]
print(eval(sys.argv[1]))' "$@"
}

# ctl SOCK ARGS... : the control socket's JSON answer
ctl() { local s=$1; shift; "$RXPATH" ctl --socket "$s" --json "$@"; }

# Waits up to 10 s for the control socket of a starting rxpath to answer.
wait_ctl() {
	for _ in $(seq 100); do
		ctl "$1" show pool >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# router_conf SIM1-ARGS : sim0's frames are routed to sim1, a port that only
# transmits (SIM1-ARGS adds to it, e.g. ",txstall=2").
router_conf() {
	cat <<-EOF
	port add sim0 sim:proto=udp4,flows=4096,dst4=16.0.0.0/8
	port add sim1 sim:rx=off$1
	addr add 198.18.255.254/16 dev sim0
	addr add 10.0.1.1/24 dev sim1
	neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev sim1
	route add 16.0.0.0/8 via 10.0.1.2
	EOF
}

# ---- pool exhaustion: fewer buffers (768) than sim0's RX ring (1024) and
# sim1's TX ring (1024) want. While sim1 does not drain, its ring holds every
# buffer: refills fail, and are counted; then forwarding resumes. In copy mode
# each frame also needs a fresh buffer: those frames are dropped as no_buffer.
pool_case() {
	local name=$1 opt=$2 sock="$TMP/pool$1.sock" pid rc s1 s2 out
	router_conf ",txstall=2" >"$TMP/pool.conf"
	"$RXPATH" run -c "$TMP/pool.conf" --pool 768 $opt -i 0 -d 3 --ctl "$sock" \
		>"$TMP/pool$name.out" 2>"$TMP/pool$name.err" &
	pid=$!
	if ! wait_ctl "$sock"; then
		fail "fault_pool_${name}_runs" "rxpath did not answer on its control socket" \
			"$(cat "$TMP/pool$name.err")"
		kill "$pid" 2>/dev/null; wait "$pid"
		return
	fi
	sleep 0.2
	s1=$(ctl "$sock" show stats)
	sleep 0.3
	s2=$(ctl "$sock" show stats)
	wait "$pid"; rc=$?
	out=$(cat "$TMP/pool$name.out")
	# the summary's figures (text: "forwarded 1,234 packets", "no_buffer  1,234")
	local fwd_end nobuf_end
	fwd_end=$(grep -o 'forwarded [0-9,]* packets' <<<"$out" | tr -dc 0-9)
	nobuf_end=$(awk '$1 == "no_buffer" { gsub(",", "", $2); print $2; exit }' <<<"$out")
	local extra=${nobuf_end:+, dropped as no_buffer $nobuf_end}
	read -r nb1 nb2 free2 fwd1 fwd2 held2 done2 drop2 <<<"$(py '" ".join(str(x) for x in (
		j[0]["queues"][0]["rx_no_buffer"], j[1]["queues"][0]["rx_no_buffer"],
		j[1]["pool"]["free_in_ring"] + j[1]["pool"]["in_cache"],
		j[0]["stack"]["forwarded"], j[1]["stack"]["forwarded"],
		j[1]["queues"][1]["tx_packets"] - j[1]["queues"][1]["tx_completed"],
		j[1]["queues"][1]["tx_completed"], j[1]["stack"]["dropped"]))' "$s1" "$s2")"
	observed "$name: during the stall: refills cut short $nb1 -> $nb2 in 0.3 s," \
		"pool free $free2 of 768, buffers held by sim1's TX ring $held2," \
		"forwarded $fwd1 -> $fwd2, dropped $drop2; at exit: forwarded ${fwd_end:-?}$extra"
	ok "fault_pool_${name}_sampled_during_stall" "[ $done2 -eq 0 ]"
	ok "fault_pool_${name}_refills_fail_counted" "[ $nb2 -gt $nb1 ]"
	ok "fault_pool_${name}_pool_exhausted" "[ $free2 -le 64 ] && [ $held2 -ge 640 ]"
	ok "fault_pool_${name}_forwarding_stops" "[ $fwd2 -eq $fwd1 ]"
	ok "fault_pool_${name}_forwarding_recovers" "[ ${fwd_end:-0} -gt $((fwd2 + 100000)) ]"
	check "fault_pool_${name}_exit_0" [ "$rc" -eq 0 ]
	check "fault_pool_${name}_all_buffers" grep -q 'buffers: all 768 accounted for' "$TMP/pool$name.out"
	if [ "$name" = copy ]; then
		ok fault_pool_copy_drops_named_no_buffer "[ $drop2 -gt 0 ] && [ ${nobuf_end:-0} -ge $drop2 ]"
	fi
}
pool_case zerocopy ""
pool_case copy "--copy"

# ---- TX ring full: sim1 (256 descriptors) never drains; sim2 -> sim3 must
# keep forwarding in the same run at the rate it has without the stall.
txfull_conf() {
	router_conf ",txring=256$1"
	cat <<-EOF
	port add sim2 sim:proto=udp4,flows=4096,dst4=32.0.0.0/8
	port add sim3 sim:rx=off
	addr add 198.20.255.254/16 dev sim2
	addr add 10.0.3.1/24 dev sim3
	neigh add 10.0.3.2 lladdr 02:00:00:00:03:02 dev sim3
	route add 32.0.0.0/8 via 10.0.3.2
	EOF
}
txfull_conf "" >"$TMP/txbase.conf"
txfull_conf ",txstall=1e9" >"$TMP/txfull.conf"
"$RXPATH" run -c "$TMP/txbase.conf" --json -i 0 -d 1 --ctl none >"$TMP/txbase.out" 2>&1
base=$(grep '"event":"summary"' "$TMP/txbase.out")
sock=$TMP/txfull.sock
"$RXPATH" run -c "$TMP/txfull.conf" --json -i 0.25 -d 2 --ctl "$sock" >"$TMP/txfull.out" 2>"$TMP/txfull.err" &
pid=$!
rss=()
if wait_ctl "$sock"; then
	for _ in 1 2 3 4; do
		sleep 0.25
		rss+=("$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null)")
	done
	mid=$(ctl "$sock" show stats)
fi
wait "$pid"; rc=$?
summary=$(grep '"event":"summary"' "$TMP/txfull.out")
if [ -z "$base" ] || [ -z "$summary" ] || [ -z "${mid:-}" ]; then
	fail fault_txfull_runs "no summary or no control socket" "$(tail -n 3 "$TMP/txfull.err")"
else
	pass fault_txfull_runs
	read -r rx0 txfull tx1 rate_base rate_stall held full_q <<<"$(py '" ".join(str(x) for x in (
		j[1]["ports"][0]["rx_packets"], j[1]["drops"]["tx_full"], j[1]["ports"][1]["tx_packets"],
		int(j[0]["ports"][3]["tx_packets"] / j[0]["seconds"]),
		int(j[1]["ports"][3]["tx_packets"] / j[1]["seconds"]),
		j[2]["queues"][1]["tx_packets"] - j[2]["queues"][1]["tx_completed"],
		j[2]["queues"][1]["tx_ring_full"]))' "$base" "$summary" "$mid")"
	min_iv=$(grep '"event":"interval"' "$TMP/txfull.out" | grep '"port":"sim3"' |
		python3 -c 'import json, sys; print(min(int(json.loads(l)["tx_pps"]) for l in sys.stdin))')
	rss_min=$(printf '%s\n' "${rss[@]}" | sort -n | head -n 1)
	rss_max=$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)
	observed "stalled sim1: received on sim0 $rx0, sent into sim1's ring $tx1 (ring 256)," \
		"tx_full drops $txfull (queue tx_ring_full $full_q at the sample), buffers held $held"
	observed "healthy sim2->sim3: $rate_stall pps with the stall vs $rate_base pps without;" \
		"slowest 0.25 s interval $min_iv pps; VmRSS ${rss[*]} kB"
	ok fault_txfull_drops_counted "[ $txfull -eq $((rx0 - tx1)) ] && [ $txfull -gt 0 ] && [ $full_q -gt 0 ]"
	ok fault_txfull_bounded_by_ring "[ $tx1 -eq 256 ] && [ $held -eq 256 ]"
	ok fault_txfull_other_pair_keeps_rate "[ $((rate_stall * 2)) -ge $rate_base ] && [ $((min_iv * 10)) -ge $rate_base ]"
	ok fault_txfull_memory_flat "[ $((rss_max - rss_min)) -le 2048 ]"
	check fault_txfull_exit_0 [ "$rc" -eq 0 ]
fi

# ---- a flood to neighbours that never answer: 65536 destinations on-link
# behind sim1, nobody there. The table fills (4096 entries), each holds 4
# packets at most and all together 1/8 of the pool (2112 of 16896), so the
# receive rings keep their buffers: sim2 -> sim3 forwards all along.
cat >"$TMP/neigh.conf" <<-EOF
port add sim0 sim:proto=udp4,flows=65536,dst4=16.0.0.0/8
port add sim1 sim:rx=off
port add sim2 sim:proto=udp4,flows=256,dst4=32.0.0.0/8
port add sim3 sim:rx=off
addr add 198.18.255.254/16 dev sim0
addr add 10.0.1.1/24 dev sim1
addr add 198.20.255.254/16 dev sim2
addr add 10.0.3.1/24 dev sim3
route add 16.0.0.0/8 dev sim1
neigh add 10.0.3.2 lladdr 02:00:00:00:03:02 dev sim3
route add 32.0.0.0/8 via 10.0.3.2
EOF
sock=$TMP/neigh.sock
"$RXPATH" run -c "$TMP/neigh.conf" --json -i 0 --ctl "$sock" >"$TMP/neigh.out" 2>"$TMP/neigh.err" &
pid=$!
t_start=$SECONDS
samples=()
rss=()
if wait_ctl "$sock"; then
	# memory first, with nothing else asked of rxpath (a control reply is memory too)
	for _ in 1 2 3 4 5 6; do
		sleep 0.25
		rss+=("$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null)")
	done
	for _ in 1 2 3 4; do
		sleep 0.3
		ctl "$sock" show stats >"$TMP/st.json" || break
		ctl "$sock" show neigh >"$TMP/nb.json" || break
		samples+=("$(python3 -c 'import json, sys
st, nb = (json.load(open(f)) for f in sys.argv[1:])
n = nb["neighbours"]
print(len(n), sum(e["held"] for e in n), st["pool"]["free_in_ring"] + st["pool"]["in_cache"],
      st["pool"]["buffers"], st["queues"][3]["tx_packets"])' "$TMP/st.json" "$TMP/nb.json")")
	done
	# three unanswered requests a second apart: by 4 s the first entries have failed
	while [ $((SECONDS - t_start)) -lt 4 ]; do sleep 0.2; done
fi
kill -TERM "$pid" 2>/dev/null
wait "$pid"; rc=$?
summary=$(grep '"event":"summary"' "$TMP/neigh.out")
if [ ${#samples[@]} -lt 3 ] || [ ${#rss[@]} -lt 6 ] || [ -z "$summary" ]; then
	fail fault_neigh_flood_runs "got ${#samples[@]} samples" "$(tail -n 3 "$TMP/neigh.err")"
else
	pass fault_neigh_flood_runs
	# each sample: rss_kB neighbours held pool_free pool_buffers sim3_tx
	# each sample: neighbours held pool_free pool_buffers sim3_tx_packets
	verdict=$(printf '%s\n' "${samples[@]}" | python3 -c '
import sys
rows = [list(map(int, l.split())) for l in sys.stdin if l.strip()]
ok_held = all(r[1] <= r[3] // 8 for r in rows)
ok_entries = all(r[0] <= 4096 for r in rows)
ok_free = all(r[2] >= r[3] // 4 for r in rows)
ok_fwd = all(b[4] > a[4] for a, b in zip(rows, rows[1:]))
print(int(ok_held), int(ok_entries), int(ok_free), int(ok_fwd), max(r[1] for r in rows),
      max(r[0] for r in rows), min(r[2] for r in rows), rows[0][3])')
	read -r ok_held ok_entries ok_free ok_fwd held_max nb_max free_min n_bufs <<<"$verdict"
	rss_min=$(printf '%s\n' "${rss[@]}" | sort -n | head -n 1)
	rss_max=$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)
	rss_delta=$((rss_max - rss_min))
	rss_list="${rss[*]}"
	read -r hold_full table_full unresolved requests icmp_err fwd <<<"$(py '" ".join(str(x) for x in (
		j[0]["drops"]["neigh_hold_full"], j[0]["drops"]["neigh_table_full"],
		j[0]["drops"]["neigh_unresolved"], j[0]["neigh_requests"], j[0]["icmp_errors"],
		j[0]["forwarded"]))' "$summary")"
	observed "VmRSS every 0.25 s: $rss_list kB (spread $rss_delta kB); then ${#samples[@]} samples:" \
		"neighbours at most $nb_max, held packets at most $held_max (cap $((n_bufs / 8)) of" \
		"$n_bufs buffers), pool free at least $free_min"
	observed "drops: neigh_hold_full $hold_full, neigh_table_full $table_full, neigh_unresolved" \
		"$unresolved; ARP requests $requests, ICMP errors $icmp_err; sim2->sim3 forwarded $fwd"
	ok fault_neigh_flood_held_bounded "[ $ok_held -eq 1 ] && [ $ok_entries -eq 1 ] && [ $held_max -gt 0 ]"
	ok fault_neigh_flood_pool_not_starved "[ $ok_free -eq 1 ]"
	ok fault_neigh_flood_other_traffic_forwarded "[ $ok_fwd -eq 1 ]"
	ok fault_neigh_flood_memory_flat "[ $rss_delta -le 2048 ]"
	ok fault_neigh_flood_drops_counted "[ $hold_full -gt 0 ] && [ $table_full -gt 0 ] && [ $unresolved -gt 0 ]"
	check fault_neigh_flood_exit_0 [ "$rc" -eq 0 ]
fi

# ---- ICMP error flood: nothing routes 198.19/16, every frame asks for a
# Destination Unreachable; the token bucket allows rate * seconds + burst at
# most (a little less when the machine is busy: a bucket that is full while
# rxpath is not running overflows).
json=$("$RXPATH" run --json -i 0 -d 2 --ctl none -e 'port add sim0 sim:proto=udp4,flows=4096' \
	-e 'addr add 198.18.255.254/16 dev sim0' -e 'icmp ratelimit 500 burst 50' 2>"$TMP/icmp.err"); rc=$?
summary=$(grep '"event":"summary"' <<<"$json")
if [ "$rc" -ne 0 ] || [ -z "$summary" ]; then
	fail fault_icmp_flood_runs "exit status $rc" "$(tail -n 3 "$TMP/icmp.err")"
else
	read -r secs errs limited noroute sent <<<"$(py '" ".join(str(x) for x in (j[0]["seconds"],
		j[0]["icmp_errors"], j[0]["icmp_ratelimited"], j[0]["drops"]["no_route"],
		j[0]["ports"][0]["tx_packets"]))' "$summary")"
	expect=$(python3 -c "print(round(500 * $secs + 50))")
	observed "icmp_errors $errs in $secs s at rate 500 burst 50 (at most about $expect);" \
		"held back by the rate limit $limited; no_route drops $noroute; sent on sim0 $sent"
	ok fault_icmp_flood_rate_holds "[ $errs -le $((expect + expect / 50 + 5)) ]"
	ok fault_icmp_flood_errors_flow "[ $errs -ge $((expect * 6 / 10)) ]"
	ok fault_icmp_flood_rest_counted "[ $((errs + limited)) -eq $noroute ] && [ $limited -gt 0 ]"
	ok fault_icmp_flood_errors_sent "[ $sent -eq $errs ]"
fi

# ---- SIGTERM under full load: the main job (routing at full speed), the
# receive sink with device threads, and the JSON summary's books.
# sigterm_run NAME ARGS... : SIGTERM after 1 s; exit 0 within 3 s, summary, every buffer back.
sigterm_run() {
	local name=$1 pid rc t0 t1 ms out n_bufs; shift
	"$RXPATH" run -i 0 --ctl none "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	pid=$!
	sleep 1
	t0=$(date +%s%N)
	kill -TERM "$pid"
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	t1=$(date +%s%N)
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"; wait "$pid"
		fail "fault_sigterm_${name}" "still running 3 s after SIGTERM"
		return
	fi
	wait "$pid"; rc=$?
	ms=$(((t1 - t0) / 1000000))
	out=$(cat "$TMP/$name.out")
	n_bufs=$(grep -o 'pool [0-9]* buffers' <<<"$out" | tr -dc 0-9)
	observed "$name: exit $rc ${ms} ms after SIGTERM;" \
		"$(grep -o 'forwarded [0-9,]* packets' <<<"$out" || grep -o 'delivered [0-9,]* packets' <<<"$out");" \
		"$(grep -o 'buffers: all [0-9]* accounted for' <<<"$out")"
	check "fault_sigterm_${name}_exit_0" [ "$rc" -eq 0 ]
	check "fault_sigterm_${name}_summary" grep -q '^summary over' <<<"$out"
	check "fault_sigterm_${name}_all_buffers" grep -q "buffers: all $n_bufs accounted for" <<<"$out"
}
sigterm_run main_job -c examples/router.conf
sigterm_run sink_threads -e 'port add sim0 sim:proto=udp4+tcp6,device=thread' \
	-e 'port add sim1 sim:proto=udp6,size=1500,device=thread'

"$RXPATH" run --json -i 0 --ctl none -c examples/router.conf >"$TMP/term.json" 2>/dev/null &
pid=$!
sleep 1
kill -TERM "$pid"; wait "$pid"; rc=$?
summary=$(grep '"event":"summary"' "$TMP/term.json")
if [ "$rc" -ne 0 ] || [ -z "$summary" ]; then
	fail fault_sigterm_books "exit status $rc, summary: ${summary:-none}"
else
	read -r rx fwd drp dlv <<<"$(py '" ".join(str(x) for x in (sum(p["rx_packets"] for p in j[0]["ports"]),
		j[0]["forwarded"], sum(j[0]["drops"].values()), sum(j[0]["delivered"].values())))' "$summary")"
	observed "JSON summary at SIGTERM: received $rx = forwarded $fwd + dropped $drp + delivered $dlv"
	ok fault_sigterm_books_balance "[ $rx -eq $((fwd + drp + dlv)) ] && [ $fwd -gt 0 ]"
fi
