#!/bin/bash
# Issue 3 "done when": a 1 GiB transfer of mixed RDMA WRITE / READ / SEND
# between two processes over one RC QP, both start PSNs 0xFFFF00 (the PSN
# space wraps at once and keeps wrapping), every byte checked on both sides.
# Bounded by 600 s; prints the time and throughput.
# Requirements: PSN-01, PSN-02, PSN-03, PSN-17, V-04.
. "$(dirname "$0")/lib.sh"
p=$(port)
t0=$(date +%s.%N)
if run_pair bulk_xfer 600 \
	"$BUILD/tests/bulk_xfer" -d softrnic0 -p "$p" -- \
	"$BUILD/tests/bulk_xfer" -d softrnic1 -p "$p" "$SIP"; then
	ok "bulk_xfer server and client"
else
	fail "bulk_xfer"
fi
t1=$(date +%s.%N)
cat "$TMP/bulk_xfer.server.log" "$TMP/bulk_xfer.client.log"
echo "1 GiB mixed transfer: $(echo "$t1 - $t0" | bc) s wall time (incl. process start)"
check "server checks all passed" grep -q "server: [1-9][0-9]* passed, 0 failed" "$TMP/bulk_xfer.server.log"
check "client checks all passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/bulk_xfer.client.log"
check "1073741824 bytes moved" grep -q "client: 1073741824 bytes" "$TMP/bulk_xfer.client.log"
finish
