# fault_lib.sh - helpers of the fault matrix (tests/integration/test_fault_*.sh,
# test_soak.sh, bench/goodput.sh); sourced after nothing else, it sources lib.sh.
#
# Every test has its own id FID (fault_id N): its devices are 127.0.50.(2N+1)
# (server, softrnic0) and 127.0.50.(2N+2) (client, softrnic1), its fabric
# listens on 127.0.50.250:(4850+N). So the tests can run side by side and
# never meet the other integration tests (127.0.X.1/.2, port 4791).
#
# The fabric's seed is SRN_FAULT_SEED if set, else 1000+N: a run is
# repeatable (the loss/dup/corrupt/path decisions depend only on the seed and
# the packet order of each link) and the seed is printed. SRN_FAULT_PCAP=FILE
# makes the fabric write every packet it switches and drops to FILE.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAB_IP=127.0.50.250

fault_id() {
	FID=$1
	SIP=127.0.50.$((2 * FID + 1))
	CIP=127.0.50.$((2 * FID + 2))
	FPORT=$((4850 + FID))
	SEED=${SRN_FAULT_SEED:-$((1000 + FID))}
}

# fab_start STATEMENT... : start `softrnic fabric` with these statements
fab_start() {
	FAB_STMTS="$*"
	"$SOFTRNIC" fabric --listen "$FAB_IP:$FPORT" --seed "$SEED" \
		${SRN_FAULT_PCAP:+--pcap "$SRN_FAULT_PCAP" --pcap-drops} "$@" >"$TMP/fabric.log" 2>&1 &
	FABPID=$!
	for _ in $(seq 50); do grep -q "listening on" "$TMP/fabric.log" && break; sleep 0.1; done
	echo "fabric: seed $SEED, listening on $FAB_IP:$FPORT: $FAB_STMTS"
	echo "  (repeat: SRN_FAULT_SEED=$SEED; softrnic fabric --seed $SEED $FAB_STMTS)"
	grep -q "listening on" "$TMP/fabric.log"
}

# fab_stop: SIGINT (the fabric prints its counters and exits 0)
fab_stop() {
	kill -INT "$FABPID" 2>/dev/null
	wait "$FABPID"
	local rc=$?
	sed -n '/^fabric counters/,$p' "$TMP/fabric.log"
	return $rc
}

# fab_ctr NAME: the sum of counter NAME over every port and direction in the
# fabric's final counters
fab_ctr() {
	sed -n '/^fabric counters/,$p' "$TMP/fabric.log" | grep -o " $1=[0-9]*" |
		awk -F= '{s += $2} END {print s + 0}'
}

# dev_ctr LOG NAME: a device counter from fault_mix's "counters:" line
dev_ctr() {
	grep -o " $2=[0-9]*" "$1" | tail -n 1 | cut -d= -f2 | awk '{print $1 + 0} END {if (!NR) print 0}' | head -n 1
}

# run_mix NAME TIMEOUT SERVER_ARGS... -- CLIENT_ARGS...
# fault_mix server (softrnic0 on $SIP) and client (softrnic1 on $CIP) behind
# the fabric, each bounded by TIMEOUT s. Logs $TMP/NAME.{server,client}.log;
# SPID is the server's pid while it runs. Returns 0 when both exit 0.
run_mix() {
	local name=$1 to=$2; shift 2
	local sargs=() cargs=() p
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	p=$(port)
	timeout -k 5 "$to" "$SOFTRNIC" run --name softrnic0 --ip "$SIP" --fabric "$FAB_IP:$FPORT" -- \
		"$BUILD/tests/fault_mix" -d softrnic0 -p "$p" "${sargs[@]}" >"$TMP/$name.server.log" 2>&1 &
	SPID=$!
	timeout -k 5 "$to" "$SOFTRNIC" run --name softrnic1 --ip "$CIP" --fabric "$FAB_IP:$FPORT" -- \
		"$BUILD/tests/fault_mix" -d softrnic1 -p "$p" "${cargs[@]}" "$SIP" >"$TMP/$name.client.log" 2>&1
	local crc=$?
	wait "$SPID"
	local src=$?
	SRC=$src CRC=$crc
	cat "$TMP/$name.server.log" "$TMP/$name.client.log"
	if [ $src -ne 0 ] || [ $crc -ne 0 ]; then
		echo "--- $name: server exit $src, client exit $crc"
		return 1
	fi
	return 0
}

# fault_rc NAME TIMEOUT "STATEMENTS" -- FAULT_MIX_ARGS...
# The standard recoverable profile: every byte right, every WR exactly once,
# exact atomics (fault_mix checks them), within TIMEOUT s.
fault_rc() {
	local name=$1 to=$2 stmts=$3; shift 3
	[ "${1:-}" = "--" ] && shift
	local t0 t1
	# shellcheck disable=SC2086
	check "fabric started" fab_start $stmts
	t0=$(date +%s.%N)
	if run_mix "$name" "$to" "$@" -- "$@"; then ok "$name: server and client exit 0"; else fail "$name: run"; fi
	t1=$(date +%s.%N)
	check "$name: fabric exits cleanly" fab_stop
	check "$name: server: every check passed" grep -q "server: [1-9][0-9]* passed, 0 failed" "$TMP/$name.server.log"
	check "$name: client: every check passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/$name.client.log"
	check "$name: atomic counter exact" grep -q "FETCH_ADD counter [0-9]* = sum of" "$TMP/$name.server.log"
	echo "$name: $(echo "$t1 - $t0" | bc) s; client retransmit_pkts=$(dev_ctr "$TMP/$name.client.log" retransmit_pkts)" \
		"server retransmit_pkts=$(dev_ctr "$TMP/$name.server.log" retransmit_pkts)"
}
