#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rxpath bench veth --forwarder: a command of the user's as one more path in
# the lab's turns. Bad names and unknown {words} are refused before any lab;
# a forwarder that needs only the kernel is measured against it; one that
# exits at once, and one that never forwards, end the run with their reason,
# and nothing of theirs or of the lab is left behind.
set -u
. "$(dirname "$0")/lib.sh"

need_veth_lab bench_veth_forwarder

# refused: exit 2 and the problem named, before any lab is built
refused() {
	local name=$1 want=$2; shift 2
	"$RXPATH" bench veth --paths kernel "$@" >/dev/null 2>"$TMP/$name.err"; local rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$want" "$TMP/$name.err" &&
	   ! grep -q "building the lab" "$TMP/$name.err"; then
		pass "bench_veth_forwarder_$name"
	else
		fail "bench_veth_forwarder_$name" "exit status $rc (expected 2 and '$want'):" \
			"$(cat "$TMP/$name.err")"
	fi
}
refused bad_name "a forwarder's name is 1 to 32 letters, digits" --forwarder 'my fwd=true'
refused no_command "expected NAME='COMMAND'" --forwarder 'fwd'
refused builtin_name "'afxdp' is a built-in path" --forwarder 'afxdp=true'
refused duplicate "the name is given twice" --forwarder 'a=true' --forwarder 'a=true'
refused unknown_word "'{r2}': not a name the bench substitutes (it knows {r0} {r1}" \
	--forwarder 'a=echo {r0} {r2}'
refused unknown_path "'nope': no such path (kernel, " --forwarder 'a=true' --paths kernel,nope
# '{{' is a literal '{': ${x} reaches the shell
"$RXPATH" bench veth --forwarder 'a=x=1; echo ${{x}' --help >/dev/null 2>&1
check bench_veth_forwarder_literal_brace [ $? -eq 0 ]

# run the bench with a watchdog: SIGTERM makes it remove the lab and exit
bench() {
	local out=$1 errf=$2; shift 2
	"$RXPATH" bench veth --paths kernel --reps 1 --duration 1 "$@" >"$out" 2>"$errf" &
	local pid=$!
	( sleep 60; kill -TERM "$pid" 2>/dev/null ) &
	local dog=$!
	wait "$pid"; rc=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	bench_pid=$pid
}
# the lab's namespaces are named after the bench's pid
lab_left() { ip netns list | grep "^rxp-$1-"; }

# {cpu} when rxpath would not be pinned (one CPU to use): said before the lab
if command -v taskset >/dev/null 2>&1; then
	taskset -c 0 "$RXPATH" bench veth --paths kernel --forwarder 'a=echo {cpu}' \
		>/dev/null 2>"$TMP/cpu.err"; rc=$?
	if [ "$rc" -eq 1 ] && grep -q "{cpu}: rxpath is not pinned" "$TMP/cpu.err" &&
	   ! grep -q "building the lab" "$TMP/cpu.err"; then
		pass bench_veth_forwarder_no_cpu_said
	else
		fail bench_veth_forwarder_no_cpu_said "exit status $rc (expected 1):" "$(cat "$TMP/cpu.err")"
	fi
fi
cpu='{cpu}'
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null 2>&1; then
	cpu=-1
fi

# the kernel in r as a forwarder of the user's: addresses and ip_forward by
# hand, then a process to hold the turn; the bench undoes the rest after
# (a sleep with a length of its own, for pgrep; sh is dash: no exec -a)
marker="sleep 86$$"
bench "$TMP/k.json" "$TMP/k.err" --json \
	--forwarder "kfwd=echo {ns} $cpu {h1ip} {r1mac} \$(ip netns identify) \$(readlink /proc/self/fd/0) \
\$([ -d {dir} ] && echo dir) >$TMP/subst; \
ip addr add {r0ip}/24 dev {r0} && ip addr add {r1ip}/24 dev {r1} && \
sysctl -qw net.ipv4.ip_forward=1 && exec $marker"
if [ "$rc" -eq 0 ]; then
	pass bench_veth_forwarder_exit_0
else
	fail bench_veth_forwarder_exit_0 "exit status $rc:" "$(tail -n 5 "$TMP/k.err")"
fi
check bench_veth_forwarder_json python3 - "$TMP/k.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
by = {r["path"]: r for r in rows}
assert set(by) == {"kernel", "kfwd"}, by
k, f = by["kernel"], by["kfwd"]
assert f["forwarder"] is True and k["forwarder"] is False, rows
assert "ip addr add {r0ip}/24 dev {r0}" in f["command"], f
assert f["pps"] > 0 and f["ratio_to"] == "kernel" and f["reps"] == 1, f
assert abs(f["ratio_to_kernel"] - f["pps"] / k["pps"]) < 1e-3 * max(1, f["ratio_to_kernel"]), f
PY
# the names put in, run in r's namespace, stdin closed, the lab's directory there
read -r ns cpu ip mac ns2 stdin dir <"$TMP/subst"
if [ "$ns" = "rxp-$bench_pid-r" ] && [ "$ns2" = "$ns" ] && [ "$cpu" -ge -1 ] &&
   [ "$ip" = 10.0.1.2 ] && [[ "$mac" =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] &&
   [ "$stdin" = /dev/null ] && [ "$dir" = dir ]; then
	pass bench_veth_forwarder_substituted
else
	fail bench_veth_forwarder_substituted "got: $(cat "$TMP/subst")"
fi
left=$(lab_left "$bench_pid")
check bench_veth_forwarder_lab_removed [ -z "$left" ]
check bench_veth_forwarder_killed [ -z "$(pgrep -f "$marker")" ]

# a forwarder that exits at once: its status and its output
bench "$TMP/x.out" "$TMP/x.err" --forwarder 'quits=echo cannot open {r0} >&2; exit 3'
if [ "$rc" -eq 1 ] && grep -q "forwarder quits exited at start (status 3)" "$TMP/x.err" &&
   grep -q "| cannot open r0" "$TMP/x.err" && [ -z "$(lab_left "$bench_pid")" ]; then
	pass bench_veth_forwarder_exits_said
else
	fail bench_veth_forwarder_exits_said "exit status $rc (expected 1); left: $(lab_left "$bench_pid")" \
		"$(tail -n 4 "$TMP/x.err")"
fi

# a forwarder that never forwards: the ping's error, and it is killed
marker="sleep 87$$"
bench "$TMP/i.out" "$TMP/i.err" --forwarder-timeout 2 \
	--forwarder "idle=echo idling; exec $marker"
if [ "$rc" -eq 1 ] && grep -q "forwarder idle did not pass h1's ping to h2 (10.0.2.2) within 2 s" \
	"$TMP/i.err" && grep -q "| idling" "$TMP/i.err" && [ -z "$(lab_left "$bench_pid")" ]; then
	pass bench_veth_forwarder_silent_said
else
	fail bench_veth_forwarder_silent_said "exit status $rc (expected 1); left: $(lab_left "$bench_pid")" \
		"$(tail -n 4 "$TMP/i.err")"
fi
check bench_veth_forwarder_silent_killed [ -z "$(pgrep -f "$marker")" ]
