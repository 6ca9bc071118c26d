# Helpers for the command-line tests: each check prints one PASS or FAIL line.
RXPATH=${RXPATH:-${BUILD:-build}/rxpath}
TMP=$(mktemp -d)
# A test that starts rxpath in the background or makes a namespace names them
# here, and whatever happens the exit removes them with the scratch folder.
PID=
NS=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	[ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

pass() { echo "PASS $1"; }
# every line of every detail indented: tests/run.sh shows only indented lines under a FAIL
fail() { echo "FAIL $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/  /'; done; }

# check NAME CONDITION-COMMAND... : PASS when the command succeeds
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "failed: $*"; fi
}

# need_veth_lab NAME: exits the test with a SKIP line unless it runs as root where network
# namespaces and veth pairs can be made (what the bench veth lab needs)
need_veth_lab() {
	local probe="rxp-$$-probe" out
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP $1: needs root to create network namespaces and veth pairs"
		exit 0
	fi
	if ! out=$(ip netns add "$probe" 2>&1); then
		echo "SKIP $1: cannot create a network namespace ($out)"
		exit 0
	fi
	if ! out=$(ip -n "$probe" link add name probe0 type veth peer name probe1 2>&1); then
		ip netns del "$probe" 2>/dev/null
		echo "SKIP $1: cannot create a veth pair ($out)"
		exit 0
	fi
	ip netns del "$probe"
}
