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
