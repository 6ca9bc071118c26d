#!/usr/bin/env bash
# make install / uninstall into a DESTDIR: the binary, the man page (which
# renders without warnings and documents every run option), the systemd unit
# (which systemd-analyze accepts) and the example config, never overwritten.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

# a make run from a test must not inherit the jobserver of the make running the tests
mk() {
	local san=
	[ "${BUILD:-build}" = build-san ] && san=SAN=1
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s $san "$@"
}

D="$TMP/root"
out=$(mk install DESTDIR="$D" 2>&1); rc=$?
check install_exit_0 [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { fail install_output "$(tail -n 5 <<<"$out")"; exit 1; }

BIN="$D/usr/local/bin/rxpath"
MAN="$D/usr/local/share/man/man8/rxpath.8"
UNIT="$D/usr/local/lib/systemd/system/rxpath.service"
CONF="$D/etc/rxpath/rxpath.conf"
check install_binary [ -x "$BIN" ]
check install_binary_runs bash -c '"$1" version | grep -q "^rxpath [0-9]"' _ "$BIN"
check install_man_page [ -f "$MAN" ]
check install_unit [ -f "$UNIT" ]
check install_config [ -f "$CONF" ]
check install_modes bash -c '[ "$(stat -c %a "$1")" = 755 ] && [ "$(stat -c %a "$2")" = 644 ] &&
	[ "$(stat -c %a "$3")" = 644 ]' _ "$BIN" "$MAN" "$UNIT"
check install_unit_paths grep -q '^ExecStart=/usr/local/bin/rxpath run -c /etc/rxpath/rxpath.conf --interval 0$' "$UNIT"

# the man page renders, without a warning, and knows every option of 'rxpath run'
out=$(groff -man -Tutf8 -ww "$MAN" 2>&1 >/dev/null)
check install_man_no_warnings [ -z "$out" ]
if command -v man >/dev/null; then
	check install_man_renders bash -c 'MANWIDTH=80 man -l "$1" 2>/dev/null | grep -q "^SYNOPSIS"' _ "$MAN"
else
	echo "SKIP install_man_renders: no man here"
fi
missing=
for opt in $("$BIN" run --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$(sed 's/-/\\\\-/g' <<<"$opt")" "$MAN" || missing="$missing $opt"
done
check install_man_documents_run_options [ -z "$missing" ]
[ -n "$missing" ] && echo "  not in the man page:$missing"
for word in "show stats" "capture start" "sync kernel" "SIGHUP" "SIGTERM" "EXIT STATUS"; do
	grep -q "$word" "$MAN" || missing="$missing '$word'"
done
check install_man_sections [ -z "$missing" ]

# systemd accepts the unit (verified offline, with ExecStart on the installed binary)
if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=/usr/local/bin/rxpath|ExecStart=$BIN|" "$UNIT" >"$TMP/rxpath.service"
	out=$(systemd-analyze verify --man=no "$TMP/rxpath.service" 2>&1); rc=$?
	check install_unit_verifies bash -c '[ "$1" -eq 0 ] && [ -z "$2" ]' _ "$rc" "$out"
	[ "$rc" -eq 0 ] || echo "  $out"
else
	echo "SKIP install_unit_verifies: no systemd-analyze here"
fi
check install_unit_reload grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$UNIT"
check install_unit_runtime_dir grep -q '^RuntimeDirectory=rxpath$' "$UNIT"
check install_unit_caps grep -q '^CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN CAP_BPF CAP_SYS_ADMIN CAP_IPC_LOCK$' "$UNIT"

# the example config parses (its AF_XDP ports swapped for ports that only transmit)
sed 's/afxdp:dev=eth[0-9]*/sim:rx=off/' "$CONF" >"$TMP/example.conf"
out=$("$RXPATH" run -c "$TMP/example.conf" -i 0 --ctl none --duration 0.2 2>&1); rc=$?
check install_example_config_parses [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || echo "  $(tail -n 2 <<<"$out")"

# an operator's config survives a second install
echo "# mine" >>"$CONF"
out=$(mk install DESTDIR="$D" 2>&1); rc=$?
check install_again_exit_0 [ "$rc" -eq 0 ]
check install_keeps_config grep -q '^# mine$' "$CONF"
check install_says_kept grep -q "keeping .*rxpath.conf" <<<"$out"

# uninstall removes what install put there, and leaves the config
out=$(mk uninstall DESTDIR="$D" 2>&1); rc=$?
check uninstall_exit_0 [ "$rc" -eq 0 ]
check uninstall_removes bash -c '[ ! -e "$1" ] && [ ! -e "$2" ] && [ ! -e "$3" ]' _ "$BIN" "$MAN" "$UNIT"
check uninstall_keeps_config [ -f "$CONF" ]

# another prefix: the unit names the binary where it went
D2="$TMP/root2"
out=$(mk install DESTDIR="$D2" PREFIX=/usr 2>&1); rc=$?
check install_prefix_usr bash -c '[ "$1" -eq 0 ] && [ -x "$2/usr/bin/rxpath" ] &&
	[ -f "$2/usr/share/man/man8/rxpath.8" ]' _ "$rc" "$D2"
check install_prefix_usr_unit grep -q '^ExecStart=/usr/bin/rxpath ' "$D2/usr/lib/systemd/system/rxpath.service"
