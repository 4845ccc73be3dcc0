#!/bin/bash
# Issue 2 "done when": our own two-process integration test of WRITE, READ,
# SEND/RECV with immediate and both ATOMICs (every byte and every completion
# field checked), a WRITE to an MR without remote-write access
# (REM_ACCESS_ERR, memory unchanged) and a SEND with no receive posted
# (RNR retries, then RNR_RETRY_EXC_ERR).
# Requirements: V-03, V-04, PSN-01 (start PSNs just below the wrap), PSN-16, PSN-21.
. "$(dirname "$0")/lib.sh"
p=$(port)
if run_pair rdma_ops 120 \
	"$BUILD/tests/rdma_ops" -d softrnic0 -p "$p" -- \
	"$BUILD/tests/rdma_ops" -d softrnic1 -p "$p" "$SIP"; then
	ok "rdma_ops server and client"
else
	fail "rdma_ops"
fi
cat "$TMP/rdma_ops.server.log" "$TMP/rdma_ops.client.log"
check "server checks all passed" grep -q "server: [1-9][0-9]* passed, 0 failed" "$TMP/rdma_ops.server.log"
check "client checks all passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/rdma_ops.client.log"
finish
