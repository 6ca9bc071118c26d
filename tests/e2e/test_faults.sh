# SPDX-License-Identifier: MIT
# An interface deleted while rxpath runs, on afpacket and afxdp ports: with
# traffic flowing h1 -> h2, r1 (port p1) is deleted. rxpath must say so in
# one line naming the port and the interface, keep answering on p0, not
# crash or spin on failing system calls, pick the interface up (afpacket) or
# report it (afxdp) when one named r1 comes back, and exit cleanly on
# SIGTERM with every buffer accounted for.
# Run as root: BUILD=build bash tests/e2e/test_faults.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

T=e2e_faults

observed() { echo "  observed: $*"; }

# ping_ok NAME NS ARGS... : 3 echo replies within 5 s
ping_ok() {
	local name=$1 ns=$2 out; shift 2
	if out=$(lab_in "$ns" ping -n -c 3 -i 0.2 -w 5 "$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "ping $*:" "$(echo "$out" | tail -n 3)"
	fi
}

# no_error_spin NAME WHAT : no spinning on errors: rxpath ($pid) makes at most 50 failing
# system calls, and 1000 in all, in a second (strace counts them) while WHAT
no_error_spin() {
	local name=$1 what=$2 out="$LAB_DIR/strace-$1" calls errors
	if ! command -v strace >/dev/null; then
		skip "${name}: strace not installed (apt-get install strace)"
		return
	fi
	timeout -s INT 1 strace -f -c -p "$pid" -o "$out" >/dev/null 2>&1
	read -r calls errors <<<"$(awk '$NF == "total" { print ($5 == "total" ? $4 " 0" : $4 " " $5) }' "$out")"
	observed "$DRIVER: system calls in 1 s with $what: ${calls:-?}, failing ${errors:-?}"
	if [ -n "${calls:-}" ] && [ "${errors:-0}" -le 50 ] && [ "$calls" -le 1000 ]; then
		pass "$name"
	else
		fail "$name" "$(cat "$out")"
	fi
}

# wait_err PATTERN : waits up to 3 s for a line of rxpath's stderr; prints it
wait_err() {
	local i
	for i in $(seq 150); do
		grep -m 1 -- "$1" "$LAB_DIR/rxpath.err" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# p1_down SOCK : prints True or False, p1's state as `rxpath ctl show ports` gives it
p1_down() {
	"$RXPATH" ctl --socket "$1" --json show ports 2>/dev/null |
		lab_json '[p["down"] for p in j["ports"] if p["name"] == "p1"][0]' 2>/dev/null
}

# A new r1 and a new h2 eth0, set up as lab_up did.
r1_again() {
	ip link add name r1 netns "$LAB_R" type veth peer name eth0 netns "$LAB_H2" || return 1
	lab_offloads_off "$LAB_H2" eth0
	lab_offloads_off "$LAB_R" r1
	lab_in "$LAB_R" sysctl -qw net.ipv6.conf.r1.disable_ipv6=1 &&
	ip -n "$LAB_R" link set r1 up &&
	lab_host "$LAB_H2" 10.0.2.2/24 10.0.2.1 2001:db8:2::2/64 2001:db8:2::1
}

lab_init
if ! lab_up; then
	fail "${T}_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi

# An afpacket port is opened again on a device that comes back, which takes
# CAP_NET_RAW: rxpath gives up what it does not need after set-up.
KEEP=()
"$RXPATH" run --help 2>&1 | grep -q -- '--keep-caps' && KEEP=(--keep-caps net_raw)

for DRIVER in afpacket afxdp; do
	D=${T}_$DRIVER
	sock=$LAB_DIR/ctl-$DRIVER.sock
	extra=()
	[ "$DRIVER" = afpacket ] && extra=("${KEEP[@]}")
	if ! lab_rxpath_start "$DRIVER" --ctl "$sock" "${extra[@]}"; then
		fail "${D}_start" "rxpath did not start on $DRIVER ports"
		continue
	fi
	pid=$LAB_RXPATH_PID
	ping_ok "${D}_forwards_before" "$LAB_H1" 10.0.2.2

	# traffic toward the port about to go, 200 packets a second
	lab_bg "$LAB_H1" ping -q -n -i 0.005 10.0.2.2 >/dev/null 2>&1
	flood=$!
	sleep 0.5

	# first only down: said once, no system call per poll while the frames wait, and
	# forwarding again once it is up
	ip -n "$LAB_R" link set r1 down
	if line=$(wait_err 'port p1: interface r1 is down'); then
		pass "${D}_down_reported"
		observed "$DRIVER: $line"
	else
		fail "${D}_down_reported" "no 'port p1: interface r1 is down' line within 3 s:" \
			"$(tail -n 5 "$LAB_DIR/rxpath.err")"
	fi
	no_error_spin "${D}_down_no_error_spin" "p1 set down"
	ip -n "$LAB_R" link set r1 up
	ping_ok "${D}_forwards_after_up" "$LAB_H1" 10.0.2.2
	lines_before=$(grep -c 'port p1' "$LAB_DIR/rxpath.err")

	t0=$(date +%s%N)
	ip -n "$LAB_R" link del r1
	if line=$(wait_err 'port p1: interface r1 is gone'); then
		ms=$((($(date +%s%N) - t0) / 1000000))
		pass "${D}_gone_reported"
		observed "$DRIVER: within $ms ms of 'ip link del r1': $line"
	else
		fail "${D}_gone_reported" "no 'port p1: interface r1 is gone' line within 3 s:" \
			"$(tail -n 5 "$LAB_DIR/rxpath.err")"
	fi
	check "${D}_alive" kill -0 "$pid"
	check "${D}_ctl_shows_p1_down" [ "$(p1_down "$sock")" = True ]
	ping_ok "${D}_p0_still_answers" "$LAB_H1" 10.0.1.1

	no_error_spin "${D}_no_error_spin" "p1 down"
	n_lines=$(($(grep -c 'port p1' "$LAB_DIR/rxpath.err") - lines_before))
	if [ "$n_lines" -eq 1 ]; then
		pass "${D}_said_once"
	else
		fail "${D}_said_once" "$n_lines lines about p1:" "$(grep 'port p1' "$LAB_DIR/rxpath.err")"
	fi
	drops=$("$RXPATH" ctl --socket "$sock" --json show drops 2>/dev/null |
		lab_json 'sum(r["packets"] for r in j["reasons"] if r["reason"] == "port_down")' 2>/dev/null)
	observed "$DRIVER: packets for the dead port dropped as port_down so far: ${drops:-?}"
	check "${D}_drops_named_port_down" [ "${drops:-0}" -gt 0 ]
	kill "$flood" 2>/dev/null

	# an interface named r1 again: picked up (afpacket) or reported (afxdp)
	if ! r1_again; then
		fail "${D}_r1_again" "could not create r1 again"
	elif line=$(wait_err 'port p1: interface r1 is back'); then
		observed "$DRIVER: $line"
		if [ "$DRIVER" = afpacket ] && grep -q 'reopened' <<<"$line"; then
			pass "${D}_back_picked_up"
			check "${D}_ctl_shows_p1_up" [ "$(p1_down "$sock")" = False ]
			ping_ok "${D}_p1_answers_again" "$LAB_H2" 10.0.2.1
			ping_ok "${D}_forwards_again" "$LAB_H1" 10.0.2.2
		elif grep -q 'restart rxpath' <<<"$line"; then
			pass "${D}_back_reported"
		else
			fail "${D}_back_picked_up_or_reported" "$line"
		fi
	else
		fail "${D}_back_picked_up_or_reported" "no 'port p1: interface r1 is back' line within 3 s:" \
			"$(tail -n 5 "$LAB_DIR/rxpath.err")"
	fi

	# SIGTERM: exit 0 (a buffer missing at the audit makes it 1) with a summary
	lab_rxpath_stop
	rc=$?
	summary=$(lab_summary)
	if [ $rc -eq 0 ] && [ -n "$summary" ] && ! grep -q 'not accounted' "$LAB_DIR/rxpath.err"; then
		pass "${D}_sigterm_clean"
		observed "$DRIVER: exit 0, every buffer accounted for;" \
			"$(echo "$summary" | lab_json '"p0 rx %d, p1 rx %d tx %d, port_down %d" % (j["ports"][0]["rx_packets"], j["ports"][1]["rx_packets"], j["ports"][1]["tx_packets"], j["drops"]["port_down"])')"
	else
		fail "${D}_sigterm_clean" "exit status $rc, summary: ${summary:-none}"
		lab_show_log
	fi
done
