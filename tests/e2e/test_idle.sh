# SPDX-License-Identifier: MIT
# An idle router does not burn a CPU: with no traffic rxpath sleeps in poll()
# on its sockets (--idle sleep, the default) and still forwards at once when
# frames come; --idle spin polls on at full speed. CPU time is read from
# /proc over two idle seconds, as top would show it.
# Run as root: BUILD=build bash tests/e2e/test_idle.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lab.sh

lab_init
if ! lab_up; then
	fail "idle_lab_up" "could not build the namespaces and veth pairs"
	exit 1
fi
HZ=$(getconf CLK_TCK)

# cpu_percent PID SECONDS : CPU time PID used over SECONDS of wall time, in percent
cpu_percent() {
	local t0 t1
	t0=$(awk '{ print $14 + $15 }' "/proc/$1/stat")
	sleep "$2"
	t1=$(awk '{ print $14 + $15 }' "/proc/$1/stat")
	echo $(((t1 - t0) * 100 / (HZ * $2)))
}

for DRIVER in afpacket afxdp; do
	for MODE in sleep spin; do
		D=idle_${DRIVER}_$MODE
		sock=$LAB_DIR/ctl-$DRIVER-$MODE.sock
		if ! lab_rxpath_start "$DRIVER" --idle "$MODE" --ctl "$sock"; then
			fail "${D}_start" "rxpath did not start"
			continue
		fi
		check "${D}_forwards" lab_in "$LAB_H1" sh -c 'ping -n -q -c 2 -i 0.2 -w 5 10.0.2.2 >/dev/null'
		sleep 0.5
		cpu=$(cpu_percent "$LAB_RXPATH_PID" 2)
		echo "  observed: $DRIVER --idle $MODE: ${cpu}% of a CPU over 2 idle seconds"
		if [ "$MODE" = sleep ]; then
			check "${D}_idle_cpu_low" [ "$cpu" -le 20 ]
		else
			check "${D}_idle_cpu_spins" [ "$cpu" -ge 50 ]
		fi
		# woken by the first frame: answered at once, not after a sleep's worth
		out=$(lab_in "$LAB_H1" ping -n -c 5 -i 0.3 -w 5 10.0.2.2 2>&1)
		avg=$(sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p' <<<"$out")
		echo "  observed: $DRIVER --idle $MODE: ping h1 -> h2 through rxpath, average ${avg:-?} ms"
		# a sleep left to run out would add 5 ms on average
		check "${D}_wakes_for_traffic" python3 -c 'import sys; sys.exit(not (0 < float(sys.argv[1] or 0) < 3))' "${avg:-0}"
		# a control request, which the datapath answers, wakes it too: the median of 20
		# round trips on the control socket (a sleep left to run out would add 5 ms)
		sleep 0.5
		ms=$("$PYTHON" - "$sock" <<-'PY'
		import socket, statistics, sys, time
		rtt = []
		for _ in range(20):
		    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		    s.connect(sys.argv[1])
		    t0 = time.monotonic()
		    s.sendall(b"text show pool\n")
		    s.shutdown(socket.SHUT_WR)
		    while s.recv(4096):
		        pass
		    rtt.append((time.monotonic() - t0) * 1000)
		    s.close()
		    time.sleep(0.02)
		print("%.2f" % statistics.median(rtt))
		PY
		)
		echo "  observed: $DRIVER --idle $MODE: a control request answered in ${ms:-?} ms (median of 20)"
		check "${D}_ctl_answered_at_once" python3 -c 'import sys; sys.exit(not (0 < float(sys.argv[1] or 0) < 4))' "${ms:-0}"
		lab_rxpath_stop
		check "${D}_clean_exit" [ "$?" -eq 0 ]
	done
done
lab_down
