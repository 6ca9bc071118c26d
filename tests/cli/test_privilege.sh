#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Least privilege: once set up, `rxpath run` keeps only the capabilities it
# still needs, in every thread and in the bounding set, sets no_new_privs,
# and says so in one line on stderr. Each configuration's line is checked
# against /proc/PID/task/*/status, and the run must still work with what is
# left: the control socket and metrics answer, a host path's TAP follows a
# new address, SIGTERM ends it with status 0, the XDP programs and the TAP
# are gone afterwards.
set -u
. "$(dirname "$0")/lib.sh"

# cap_mask NAMES... : the mask of capability names as /proc prints it (16 hex digits)
cap_mask() {
	python3 - "$@" <<-'EOF'
	import re, sys
	text = open("/usr/include/linux/capability.h").read()
	bits = {m.group(1).lower(): int(m.group(2))
	        for m in re.finditer(r"#define\s+(CAP_[A-Z_]+)\s+(\d+)\b", text)}
	print("%016x" % sum(1 << bits[n] for n in sys.argv[1:]))
	EOF
}

# start NS RUN-ARGS... : rxpath run in namespace NS ("" = here); waits for its start
start() {
	local ns=$1; shift
	: >"$TMP/err"
	: >"$TMP/out"
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$RXPATH" run -i 0 "$@" >"$TMP/out" 2>"$TMP/err" &
	else
		"$RXPATH" run -i 0 "$@" >"$TMP/out" 2>"$TMP/err" &
	fi
	PID=$!
	for _ in $(seq 300); do
		grep -q '^rxpath: [0-9]* ports\?;' "$TMP/out" && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "  rxpath did not start:"
	sed 's/^/  | /' "$TMP/err" | tail -n 8
	return 1
}

# stop : SIGTERM; returns rxpath's exit status
stop() {
	local pid=$PID
	PID=
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
}

# kept : the capability names the start line says were kept, sorted, one line
kept() {
	sed -n 's/^rxpath run: capabilities kept: \(.*\); dropped: .*/\1/p' "$TMP/err" |
		grep -o 'cap_[a-z_]*' | sort | tr '\n' ' ' | sed 's/ $//'
}

# threads_hold MASK [MIN_THREADS] : every thread of $PID holds exactly MASK as
# permitted, effective and bounding set, nothing inheritable or ambient, and
# has no_new_privs
threads_hold() {
	local want=$1 min=${2:-1} t line n=0 bad=()
	local zero=0000000000000000
	for t in /proc/"$PID"/task/*; do
		line=$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):|^NoNewPrivs:/ { printf "%s%s ", $1, $2 }' \
			"$t/status" 2>/dev/null) || continue
		[ -n "$line" ] || continue
		n=$((n + 1))
		[ "$line" = "CapInh:$zero CapPrm:$want CapEff:$want CapBnd:$want CapAmb:$zero NoNewPrivs:1 " ] ||
			bad+=("thread $(cat "$t/comm" 2>/dev/null): $line")
	done
	echo "  $n threads, each: permitted = effective = bounding = $want, no_new_privs"
	if [ ${#bad[@]} -gt 0 ]; then
		printf '  %s\n' "${bad[@]}"
		return 1
	fi
	[ "$n" -ge "$min" ]
}

# ---- without capabilities: nothing to drop, nothing said ----
if [ "$(id -u)" -ne 0 ]; then
	out=$("$RXPATH" run -d 0.3 -i 0 --ctl none 2>&1); rc=$?
	check priv_unprivileged_runs [ "$rc" -eq 0 ]
	check priv_unprivileged_silent bash -c '! grep -q capabilities <<<"$1"' _ "$out"
	echo "SKIP priv_dropped: needs root (rxpath drops capabilities only when it holds some)"
	exit 0
fi
if command -v setpriv >/dev/null; then
	cp "$RXPATH" "$TMP/rxpath" && chmod 755 "$TMP" "$TMP/rxpath"
	out=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$TMP/rxpath" run -d 0.3 -i 0 --ctl none 2>&1); rc=$?
	if grep -q 'Sanitizer' <<<"$out"; then
		echo "SKIP priv_unprivileged: the sanitizer build does not run as nobody here"
	else
		check priv_unprivileged_runs [ "$rc" -eq 0 ]
		check priv_unprivileged_silent bash -c '! grep -q capabilities <<<"$1"' _ "$out"
	fi
fi

# ---- sim ports, control socket, metrics, a device thread started before the drop ----
SOCK=$TMP/ctl.sock
if start "" -c examples/router.conf --ctl "$SOCK" --metrics 127.0.0.1:0 \
	-e 'port add s2 sim:rx=off,device=thread'; then
	sed -n 's/^rxpath run: capabilities/  capabilities/p' "$TMP/err"
	check priv_sim_line grep -q '^rxpath run: capabilities kept: none; dropped: all [0-9]*, from the bounding set too; no_new_privs set$' "$TMP/err"
	# main, device, control and metrics threads
	check priv_sim_every_thread threads_hold 0000000000000000 4
	check priv_sim_ctl_answers bash -c '"$1" ctl --socket "$2" show ports | grep -q "^sim0: "' _ "$RXPATH" "$SOCK"
	addr=$(sed -n 's|^rxpath run: metrics at http://\(.*\)/metrics$|\1|p' "$TMP/err")
	check priv_sim_metrics_answer bash -c '[ "$(curl -s -m 5 -o /dev/null -w "%{http_code}" "http://$1/metrics")" = 200 ]' _ "$addr"
	if [ -c /dev/net/tun ]; then
		out=$("$RXPATH" ctl --socket "$SOCK" port set sim0 host on 2>&1); rc=$?
		check priv_sim_host_later_refused_with_hint bash -c '[ "$1" -ne 0 ] && grep -q "gave up CAP_NET_ADMIN.*--keep-caps net_admin" <<<"$2"' _ "$rc" "$out"
	fi
	stop; rc=$?
	check priv_sim_sigterm_exit_0 [ "$rc" -eq 0 ]
	check priv_sim_socket_removed [ ! -e "$SOCK" ]
else
	fail priv_sim_start
fi

# ---- --keep-caps ----
if start "" -c examples/router.conf --ctl none --keep-caps net_raw; then
	check priv_keep_caps_line [ "$(kept)" = cap_net_raw ]
	check priv_keep_caps_threads threads_hold "$(cap_mask cap_net_raw)"
	stop; rc=$?
	check priv_keep_caps_exit_0 [ "$rc" -eq 0 ]
else
	fail priv_keep_caps_start
fi
out=$("$RXPATH" run --keep-caps net_wizardry -d 1 2>&1); rc=$?
check priv_keep_caps_bad_name bash -c '[ "$1" -eq 2 ] && grep -q "net_wizardry.*is not a capability" <<<"$2"' _ "$rc" "$out"

# ---- kernel interfaces, in a namespace of our own ----
NS="rxp-priv-$$"
if ! ip netns add "$NS" 2>/dev/null; then
	NS=
	echo "SKIP priv_host_afpacket_afxdp: cannot create a network namespace here"
	exit 0
fi
ip -n "$NS" link set lo up
for i in 0 2; do
	ip -n "$NS" link add "v$i" type veth peer name "v$((i + 1))"
	ip -n "$NS" link set "v$i" up && ip -n "$NS" link set "v$((i + 1))" up
done

# a host path from the start keeps CAP_NET_ADMIN: its TAP follows the port's addresses
if [ ! -c /dev/net/tun ]; then
	echo "SKIP priv_host: no /dev/net/tun"
elif start "$NS" --ctl "$TMP/h.sock" -e 'port add p0 sim' \
	-e 'addr add 10.7.0.1/24 dev p0' -e 'port set p0 host on'; then
	sed -n 's/^rxpath run: capabilities/  capabilities/p' "$TMP/err"
	check priv_host_keeps_net_admin [ "$(kept)" = cap_net_admin ]
	check priv_host_every_thread threads_hold "$(cap_mask cap_net_admin)"
	"$RXPATH" ctl --socket "$TMP/h.sock" addr add 10.7.1.1/24 dev p0 >/dev/null
	check priv_host_tap_follows_new_address bash -c 'for _ in $(seq 20); do
		ip -n "$1" addr show dev p0 | grep -q "inet 10.7.1.1/24" && exit 0; sleep 0.05; done; exit 1' _ "$NS"
	stop; rc=$?
	check priv_host_sigterm_exit_0 [ "$rc" -eq 0 ]
	check priv_host_tap_removed bash -c '! ip -n "$1" link show dev p0 >/dev/null 2>&1' _ "$NS"
else
	fail priv_host_start
fi

# AF_PACKET needs nothing once its sockets are open
cat >"$TMP/afp.conf" <<'EOF'
port add p0 afpacket:dev=v0
port add p1 afpacket:dev=v2
addr add 10.0.1.1/24 dev p0
addr add 10.0.2.1/24 dev p1
EOF
if start "$NS" -c "$TMP/afp.conf" --ctl none; then
	sed -n 's/^rxpath run: capabilities/  capabilities/p' "$TMP/err"
	check priv_afpacket_keeps_none grep -q '^rxpath run: capabilities kept: none;' "$TMP/err"
	check priv_afpacket_every_thread threads_hold 0000000000000000
	stop; rc=$?
	check priv_afpacket_sigterm_exit_0 [ "$rc" -eq 0 ]
else
	fail priv_afpacket_start
fi

# AF_XDP keeps what removing the XDP program at exit needs
if ! python3 -c 'import socket; socket.socket(44, socket.SOCK_RAW, 0).close()' 2>/dev/null; then
	echo "SKIP priv_afxdp: the kernel has no AF_XDP sockets"
else
	sed 's/afpacket:/afxdp:/' "$TMP/afp.conf" >"$TMP/xdp.conf"
	if start "$NS" -c "$TMP/xdp.conf" --ctl none; then
		sed -n 's/^rxpath run: capabilities/  capabilities/p' "$TMP/err"
		check priv_afxdp_keeps_net_admin_sys_admin [ "$(kept)" = "cap_net_admin cap_sys_admin" ]
		check priv_afxdp_every_thread threads_hold "$(cap_mask cap_net_admin cap_sys_admin)"
		check priv_afxdp_programs_attached [ "$(ip -n "$NS" -d link show | grep -c 'prog/xdp')" -eq 2 ]
		stop; rc=$?
		check priv_afxdp_sigterm_exit_0 [ "$rc" -eq 0 ]
		check priv_afxdp_programs_removed bash -c '! ip -n "$1" -d link show | grep -q prog/xdp' _ "$NS"
	else
		fail priv_afxdp_start
	fi
fi
