#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Who can reach rxpath: the control socket only root and rxpath's own user
# (mode 0600, and SO_PEERCRED should the mode be loosened), the metrics
# endpoint only loopback unless another address is asked for. (The mode
# itself and the loopback address printed are checked in test_ctl.sh and
# test_metrics.sh.)
set -u
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP access: needs root and setpriv to act as another user"
	exit 0
fi
chmod 755 "$TMP"	# so that only the socket's own mode stands in the way

# as_nobody CMD... : runs CMD as user and group nobody, no capabilities
as_nobody() {
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@")
}

# ctl_as_nobody SOCKET : what a client running as nobody gets, or "connect: ERROR"
ctl_as_nobody() {
	as_nobody /usr/bin/python3 - "$1" <<-'EOF'
	import socket, sys
	s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	try:
	    s.connect(sys.argv[1])
	except OSError as e:
	    print("connect:", e.strerror)
	    sys.exit(0)
	try:
	    s.sendall(b"text show ports\n")
	except OSError:
	    pass  # refused before the request was read: the answer is waiting all the same
	s.settimeout(5)
	print(s.recv(4096).replace(b"\0", b"<NUL>").decode(errors="replace"))
	EOF
}

# ---- the control socket ----
SOCK=$TMP/ctl.sock
"$RXPATH" run -c examples/router.conf --ctl "$SOCK" -i 0 -d 30 >"$TMP/run.out" 2>"$TMP/run.err" &
PID=$!
for _ in $(seq 100); do
	"$RXPATH" ctl --socket "$SOCK" show pool >/dev/null 2>&1 && break
	sleep 0.05
done
out=$(ctl_as_nobody "$SOCK")
check ctl_other_user_cannot_connect grep -q '^connect: Permission denied' <<<"$out"
# loosened by hand: the server still asks the kernel who is calling
chmod 0666 "$SOCK"
out=$(ctl_as_nobody "$SOCK")
check ctl_other_user_refused_by_peercred grep -q 'permission denied: only root and rxpath' <<<"$out"
check ctl_other_user_got_nothing bash -c '! grep -q "^sim0:\|<NUL>" <<<"$1"' _ "$out"
check ctl_root_still_answered bash -c '"$1" ctl --socket "$2" show ports | grep -q "^sim0:"' _ "$RXPATH" "$SOCK"
kill -TERM "$PID"
wait "$PID"; rc=$?
PID=
check ctl_access_run_exit_0 [ "$rc" -eq 0 ]

# ---- the metrics endpoint, in a namespace with an address besides loopback ----
NS="rxp-acc-$$"
if ! ip netns add "$NS" 2>/dev/null; then
	NS=
	echo "SKIP metrics_other_address: cannot create a network namespace here"
	exit 0
fi
ip -n "$NS" link set lo up
ip -n "$NS" link add v0 type veth peer name v1 && ip -n "$NS" addr add 192.0.2.1/24 dev v0 &&
	ip -n "$NS" link set v0 up && ip -n "$NS" link set v1 up

# metrics_start LISTEN : rxpath in the namespace serving metrics at LISTEN; sets PORT
metrics_start() {
	: >"$TMP/m.err"
	ip netns exec "$NS" "$RXPATH" run -c examples/router.conf --ctl none -i 0 -d 30 \
		--metrics "$1" >/dev/null 2>"$TMP/m.err" &
	PID=$!
	for _ in $(seq 100); do
		PORT=$(sed -n 's|^rxpath run: metrics at http://.*:\([0-9]*\)/metrics$|\1|p' "$TMP/m.err")
		[ -n "$PORT" ] && return 0
		sleep 0.05
	done
	return 1
}
# code URL : the HTTP status from inside the namespace, 000 when nothing answers
code() { ip netns exec "$NS" curl -s -m 3 -o /dev/null -w '%{http_code}' "$1"; }

if metrics_start 0; then
	check metrics_default_on_loopback [ "$(code "http://127.0.0.1:$PORT/metrics")" = 200 ]
	check metrics_default_not_on_other_address [ "$(code "http://192.0.2.1:$PORT/metrics")" = 000 ]
	kill -TERM "$PID"; wait "$PID"; PID=
else
	fail metrics_default_start "$(cat "$TMP/m.err")"
fi
if metrics_start 0.0.0.0:0; then
	check metrics_other_address_when_asked [ "$(code "http://192.0.2.1:$PORT/metrics")" = 200 ]
	kill -TERM "$PID"; wait "$PID"; PID=
else
	fail metrics_any_start "$(cat "$TMP/m.err")"
fi
