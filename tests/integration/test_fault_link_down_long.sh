#!/bin/bash
# Fault matrix, profile "link_down_long": from 1.5 s on every link is down
# for 30 s, longer than the retry budget (timeout 14 = 67 ms x (retry_cnt 7
# + 1) = 537 ms). Unrecoverable: the client (fault_mix -e) requires on every
# one of its 4 RC QPs the rounds before the fault all SUCCESS, then exactly
# one RETRY_EXC_ERR, then WR_FLUSH_ERR for every remaining WR of the round
# (each WR completes exactly once), the QP in ERR, and a WR posted afterwards
# flushed - within seconds, never a hang.
. "$(dirname "$0")/fault_lib.sh"
fault_id 11
check "fabric started" fab_start default down=1500ms+30s
t0=$(date +%s.%N)
if run_mix link_down_long 60 -q 4 -D 30 -e -- -q 4 -D 30 -e; then
	ok "link_down_long: server and client exit 0"
else
	fail "link_down_long: run"
fi
t1=$(date +%s.%N)
check "link_down_long: fabric exits cleanly" fab_stop
dt=$(echo "$t1 - $t0" | bc)
check "client saw the expected error completions" grep -q "client: error after [1-9][0-9]* good rounds" "$TMP/link_down_long.client.log"
check "client: every check passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/link_down_long.client.log"
check "server: told of the fault, every check passed" grep -q "server: [1-9][0-9]* passed, 0 failed" "$TMP/link_down_long.server.log"
check "packets dropped while down ($(fab_ctr drop_down))" [ "$(fab_ctr drop_down)" -gt 0 ]
check "RETRY_EXC_ERR counted by the device" [ "$(dev_ctr "$TMP/link_down_long.client.log" retry_timeouts)" -gt 0 ]
check "bounded: done in $dt s (< 15 s, long before the link comes back)" [ "$(echo "$dt < 15" | bc)" -eq 1 ]
finish
