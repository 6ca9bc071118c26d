# Helpers for the command-line tests: each check prints one PASS or FAIL line.
RXPATH=${RXPATH:-${BUILD:-build}/rxpath}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; shift; for l in "$@"; do echo "  $l"; done; }

# check NAME CONDITION-COMMAND... : PASS when the command succeeds
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "failed: $*"; fi
}
