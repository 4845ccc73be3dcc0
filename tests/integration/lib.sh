# lib.sh - shell helpers of the integration tests (sourced, not run).
#
# Every test script is run by ctest as `bash SCRIPT BUILD_DIR`. It counts its
# checks with ok/fail and ends with `finish`, which prints the plain
# "N passed, N failed" line and exits non-zero on any failure.

set -u
BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
SOFTRNIC="$BUILD/bin/softrnic"
TMP=$(mktemp -d /tmp/srn-itest.XXXXXX)
PASSED=0
FAILED=0
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT

ok()   { PASSED=$((PASSED + 1)); echo "ok   $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }
check() { # check "description" command...
	local d=$1; shift
	if "$@"; then ok "$d"; else fail "$d"; fi
}
finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
	exit $?
}

# Each test script gets its own pair of loopback addresses, so scripts can
# run at the same time (ctest -j, or several developers' runs on one host):
# the server (softrnic0) is $SIP = 127.0.X.1, the client (softrnic1) $CIP =
# 127.0.X.2, X derived from the script's name. All of 127/8 is loopback.
_net=$(( $(basename "$0" | cksum | cut -d' ' -f1) % 200 + 20 ))
SIP=127.0.$_net.1
CIP=127.0.$_net.2

# A free TCP port for out-of-band exchanges (pingpong's -p).
NEXT_PORT=$(( 20000 + (RANDOM % 20000) ))
port() { NEXT_PORT=$((NEXT_PORT + 1)); echo $NEXT_PORT; }

# run_pair NAME TIMEOUT SERVER_CMD... -- CLIENT_CMD...
# Runs the server under `softrnic run` as softrnic0 on $SIP and the
# client as softrnic1 on $CIP, both bounded by TIMEOUT seconds. Output goes
# to $TMP/NAME.{server,client}.log. Succeeds when both exit 0.
run_pair() {
	local name=$1 to=$2; shift 2
	local scmd=() ccmd=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	timeout -k 5 "$to" "$SOFTRNIC" run --name softrnic0 --ip "$SIP" -- "${scmd[@]}" \
		>"$TMP/$name.server.log" 2>&1 &
	local spid=$!
	sleep 0.3
	local crc=1 tries=0
	while :; do
		timeout -k 5 "$to" "$SOFTRNIC" run --name softrnic1 --ip "$CIP" -- "${ccmd[@]}" \
			>"$TMP/$name.client.log" 2>&1
		crc=$?
		# the server may not listen yet: retry a refused out-of-band connect
		if [ $crc -ne 0 ] && [ $tries -lt 20 ] && grep -q "Couldn't connect" "$TMP/$name.client.log"; then
			tries=$((tries + 1)); sleep 0.2; continue
		fi
		break
	done
	wait $spid
	local src=$?
	if [ $src -ne 0 ] || [ $crc -ne 0 ]; then
		echo "--- $name: server exit $src, client exit $crc"
		tail -n 15 "$TMP/$name.server.log" | sed 's/^/server: /'
		tail -n 15 "$TMP/$name.client.log" | sed 's/^/client: /'
		return 1
	fi
	return 0
}
