#!/bin/bash
# Issue 5 "done when": Debian's unmodified perftest binaries run on softrnic
# between two processes on loopback (server softrnic0 on $SIP, client
# softrnic1 on $CIP, see lib.sh) with their default options, -a (all message sizes),
# -q 4 (four QPs) and --report_gbits. Small iteration counts: this proves
# compatibility, it measures nothing (bench/perf_compare.sh does).
#
# perftest loads libmlx5, libefa and librdmacm, which bind to libibverbs'
# provider interface (IBVERBS_PRIVATE_34): the programs start only if
# softrnic's library exports all of it.
#
# Per run: both sides exit 0 and the client prints its result table (the
# server too where perftest prints one: not for the passive side of
# ib_read_lat/ib_atomic_lat). Results are verified where perftest offers it:
# the bandwidth tests run with perftest's verifier (-w, --limit_bw) at a
# floor far below any real result, so perftest itself fails the run if the
# measured bandwidth is missing or zero; the latency ping-pongs of
# ib_write_lat/ib_send_lat only advance when the peer's data arrived.
# perftest itself rejects -a for the atomic tests ("Message size cannot be
# changed") and -q for the latency tests ("Multiple QPs only available on bw
# tests") - on any device; those combinations are checked to be rejected by
# perftest's parser, not by softrnic.
. "$(dirname "$0")/lib.sh"

row='^ *[0-9]+ +[0-9]+ '   # a result line: "#bytes #iterations ..."

# run NAME PROGRAM EXPECT_SERVER_TABLE MIN_CLIENT_ROWS ARGS...
run() {
	local name=$1 prog=$2 stab=$3 rows=$4; shift 4
	local p
	p=$(port)
	if run_pair "$name" 120 "$prog" -p "$p" "$@" -- "$prog" -p "$p" "$@" "$SIP"; then
		ok "$name: both sides exit 0"
	else
		fail "$name: both sides exit 0"
		return
	fi
	local n
	n=$(grep -cE "$row" "$TMP/$name.client.log")
	if grep -q '#bytes' "$TMP/$name.client.log" && [ "$n" -ge "$rows" ]; then
		ok "$name: client result table ($n rows)"
	else
		fail "$name: client result table ($n rows, want >= $rows)"
		cat "$TMP/$name.client.log"
	fi
	if [ "$stab" = yes ]; then
		check "$name: server result table" grep -qE "$row" "$TMP/$name.server.log"
	fi
}

# rejected NAME PROGRAM MESSAGE ARGS...: perftest's own parser refuses ARGS
rejected() {
	local name=$1 prog=$2 msg=$3; shift 3
	timeout 30 "$SOFTRNIC" run --name softrnic1 --ip "$CIP" -- "$prog" "$@" "$SIP" \
		>"$TMP/$name.log" 2>&1
	local rc=$?
	if [ $rc -ne 0 ] && grep -q "$msg" "$TMP/$name.log"; then
		ok "$name: perftest rejects '$*' itself ($msg)"
	else
		fail "$name: expected perftest's parser to reject '$*' (exit $rc)"
		cat "$TMP/$name.log"
	fi
}

ALL_SIZES=23     # -a: 2 B .. 8 MiB

for t in ib_write_bw ib_read_bw ib_send_bw; do
	run "$t" "$t" yes 1 -n 50 -w 0.001
	run "$t-a" "$t" yes $ALL_SIZES -a -n 5
	run "$t-q4" "$t" yes 1 -q 4 -n 20 -w 0.001
	run "$t-gbits" "$t" yes 1 --report_gbits -n 50 -w 0.000001
done

run ib_atomic_bw ib_atomic_bw yes 1 -n 50 -w 0.00001
run ib_atomic_bw-q4 ib_atomic_bw yes 1 -q 4 -n 20
run ib_atomic_bw-gbits ib_atomic_bw yes 1 --report_gbits -n 50
rejected ib_atomic_bw-a ib_atomic_bw "Message size cannot be changed" -a

for t in ib_write_lat ib_send_lat ib_read_lat; do
	srv=yes
	[ "$t" = ib_read_lat ] && srv=no
	run "$t" "$t" $srv 1 -n 50
	run "$t-a" "$t" $srv $ALL_SIZES -a -n 5
	run "$t-gbits" "$t" $srv 1 --report_gbits -n 50
	rejected "$t-q4" "$t" "Multiple QPs only available on bw tests" -q 4
done

run ib_atomic_lat ib_atomic_lat no 1 -n 50
run ib_atomic_lat-gbits ib_atomic_lat no 1 --report_gbits -n 50
rejected ib_atomic_lat-a ib_atomic_lat "Message size cannot be changed" -a
rejected ib_atomic_lat-q4 ib_atomic_lat "Multiple QPs only available on bw tests" -q 4

finish
