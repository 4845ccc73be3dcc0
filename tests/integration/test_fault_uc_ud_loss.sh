#!/bin/bash
# Fault matrix, unreliable transports under 5% loss: UC (SEND and RDMA WRITE
# with immediate, up to 16 KiB = several packets) and UD (SEND up to the MTU)
# lose whole messages but never deliver a corrupt, misplaced or duplicated
# one. Every message carries (magic, sequence number, length, checksum) and a
# payload derived from its sequence number; the receiver checks each
# delivered one and requires that most arrive (fault_mix -u).
. "$(dirname "$0")/fault_lib.sh"
fault_id 13
check "fabric started" fab_start default loss=5%
for m in uc ud; do
	if run_mix "$m" 60 -u "$m" -n 1000 -- -u "$m" -n 1000; then ok "$m: server and client exit 0"; else fail "$m: run"; fi
	check "$m: server: every check passed" grep -q "server: [1-9][0-9]* passed, 0 failed" "$TMP/$m.server.log"
	check "$m: client: every check passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/$m.client.log"
	check "$m: no corrupt/misplaced/duplicated message" grep -q "lost; 0 corrupt, 0 misplaced, 0 duplicated" "$TMP/$m.server.log"
done
check "fabric exits cleanly" fab_stop
check "fabric dropped packets ($(fab_ctr drop_loss))" [ "$(fab_ctr drop_loss)" -gt 0 ]
check "UC receiver dropped incomplete messages ($(dev_ctr "$TMP/uc.server.log" uc_msg_dropped))" [ "$(dev_ctr "$TMP/uc.server.log" uc_msg_dropped)" -gt 0 ]
finish
