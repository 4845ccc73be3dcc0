#!/bin/bash
# Fault matrix, profile "peer_killed": a clean fabric, and the server process
# is killed (SIGKILL) 2 s into the run, in the middle of its rounds. The
# client (fault_mix -e) requires on every one of its 4 RC QPs: the rounds
# before all SUCCESS, then exactly one RETRY_EXC_ERR, then WR_FLUSH_ERR for
# every remaining WR (each exactly once), the QP in ERR, a WR posted
# afterwards flushed - within seconds, never a hang.
. "$(dirname "$0")/fault_lib.sh"
fault_id 12
check "fabric started" fab_start default delay=10us
p=$(port)
timeout -k 5 60 "$SOFTRNIC" run --name softrnic0 --ip "$SIP" --fabric "$FAB_IP:$FPORT" -- \
	"$BUILD/tests/fault_mix" -d softrnic0 -p "$p" -q 4 -D 30 -e >"$TMP/peer.server.log" 2>&1 &
spid=$!
t0=$(date +%s.%N)
timeout -k 5 60 "$SOFTRNIC" run --name softrnic1 --ip "$CIP" --fabric "$FAB_IP:$FPORT" -- \
	"$BUILD/tests/fault_mix" -d softrnic1 -p "$p" -q 4 -D 30 -e "$SIP" >"$TMP/peer.client.log" 2>&1 &
cpid=$!
sleep 2
# the server program is the child of its `timeout` (softrnic run exec'ed it)
victim=$(pgrep -P "$spid" | head -n 1)
check "server running at the kill ($victim)" [ -n "$victim" ]
[ -n "$victim" ] && kill -KILL "$victim"
tk=$(date +%s.%N)
wait "$cpid"; crc=$?
t1=$(date +%s.%N)
wait "$spid"; src=$?
cat "$TMP/peer.server.log" "$TMP/peer.client.log"
check "peer_killed: fabric exits cleanly" fab_stop
check "server was killed (exit $src)" [ "$src" -eq 137 ] || [ "$src" -eq 124 ]
check "client exits 0 (exit $crc)" [ "$crc" -eq 0 ]
check "client saw the expected error completions" grep -q "client: error after [1-9][0-9]* good rounds" "$TMP/peer.client.log"
check "client: every check passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/peer.client.log"
dt=$(echo "$t1 - $tk" | bc)
check "bounded: client done $dt s after the kill (< 10 s)" [ "$(echo "$dt < 10" | bc)" -eq 1 ]
finish
