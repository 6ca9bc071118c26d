# SPDX-License-Identifier: MIT
# BGP daemons in the lab, sourced after tests/e2e/lab.sh: FRR (zebra + bgpd) in
# rxpath's namespace r, BIRD 2 in the hosts, each with private configs,
# sockets, pid files and logs in the lab's dir, never the system's.
#
#   bgp_lab_need             SKIP (exit 0) unless FRR and BIRD are installed
#   bgp_frr_dir              makes $FRR_DIR, FRR's own (the daemons run as its user)
#   frr_start                zebra then bgpd from $FRR_DIR/zebra.conf, bgpd.conf (zebra.conf
#                            is written when missing); waits for their sockets
#   vty ARGS...              vtysh on FRR's sockets
#   bird_start NS TAG        BIRD in NS from $LAB_DIR/bird-TAG.conf
#   birdc_ NS TAG ARGS...    birdc on its socket
#   bgp_down                 lab_down, then what FRR leaves in /var/tmp/frr (for an EXIT trap)

ZEBRA=${ZEBRA:-/usr/lib/frr/zebra}
BGPD=${BGPD:-/usr/lib/frr/bgpd}
BIRD=${BIRD:-bird}
FRR_USER=${FRR_USER:-frr}
FRR_GROUP=${FRR_GROUP:-frr}
FRR_DIR=
ZEBRA_PID='' BGPD_PID='' FRR_LEFT=''
[ -d /var/tmp/frr ] && FRR_TMP_WAS=1 || FRR_TMP_WAS=0

bgp_lab_need() {
	if [ ! -x "$ZEBRA" ] || [ ! -x "$BGPD" ] || ! command -v vtysh >/dev/null ||
	   ! id "$FRR_USER" >/dev/null 2>&1 || ! command -v "$BIRD" >/dev/null || ! command -v birdc >/dev/null; then
		lab_skip_all "frr or bird2 not installed (apt-get install frr bird2)"
	fi
}

# The daemons run as FRR's own user (frr, in the vty group frrvty: FRR refuses a user outside
# it, root included), keeping the capabilities they need; their dir is theirs.
bgp_frr_dir() {
	FRR_DIR=$LAB_DIR/frr
	mkdir -p "$FRR_DIR" && chmod 711 "$LAB_DIR" && chown "$FRR_USER:$FRR_GROUP" "$FRR_DIR"
}

# FRR runs in the foreground under lab_bg (its pid is the daemon's: lab_down stops it)
frr_start() {
	local i
	[ -f "$FRR_DIR/zebra.conf" ] ||
		printf 'hostname r\nlog file %s/zebra.log informational\n' "$FRR_DIR" >"$FRR_DIR/zebra.conf"
	lab_bg "$LAB_R" "$ZEBRA" -f "$FRR_DIR/zebra.conf" -i "$FRR_DIR/zebra.pid" \
		-z "$FRR_DIR/zserv.api" --vty_socket "$FRR_DIR" -u "$FRR_USER" -g "$FRR_GROUP" \
		>"$FRR_DIR/zebra.out" 2>&1
	ZEBRA_PID=$!
	for i in $(seq 100); do
		[ -S "$FRR_DIR/zserv.api" ] && break
		sleep 0.05
	done
	lab_bg "$LAB_R" "$BGPD" -f "$FRR_DIR/bgpd.conf" -i "$FRR_DIR/bgpd.pid" \
		-z "$FRR_DIR/zserv.api" --vty_socket "$FRR_DIR" -u "$FRR_USER" -g "$FRR_GROUP" \
		>"$FRR_DIR/bgpd.out" 2>&1
	BGPD_PID=$!
	for i in $(seq 100); do
		[ -S "$FRR_DIR/bgpd.vty" ] && return 0
		kill -0 "$BGPD_PID" 2>/dev/null || break
		sleep 0.05
	done
	return 1
}
vty() { lab_in "$LAB_R" vtysh --vty_socket "$FRR_DIR" "$@" 2>&1; }

bird_start() {	# NS TAG
	lab_bg "$1" "$BIRD" -f -c "$LAB_DIR/bird-$2.conf" -s "$LAB_DIR/bird-$2.ctl" \
		-P "$LAB_DIR/bird-$2.pid" >"$LAB_DIR/bird-$2.out" 2>&1
}
birdc_() { local ns=$1 tag=$2; shift 2; lab_in "$ns" birdc -s "$LAB_DIR/bird-$tag.ctl" "$@" 2>&1; }

# Everything goes: the lab's processes (FRR and BIRD among them, started with lab_bg) and
# namespaces, then FRR's crash-log dirs: it removes its own at a clean exit, not after a
# crash or a SIGKILL.
bgp_down() {
	local pid d
	lab_down
	for pid in $ZEBRA_PID $BGPD_PID; do
		for d in /var/tmp/frr/zebra."$pid" /var/tmp/frr/bgpd."$pid"; do
			[ -e "$d" ] && FRR_LEFT="$FRR_LEFT $d"
			rm -rf "$d"
		done
	done
	[ "$FRR_TMP_WAS" = 0 ] && rmdir /var/tmp/frr 2>/dev/null
}
