#!/bin/bash
# Fault matrix, profile "corrupt_0_5": 0.5% of the packets get 1-3 flipped bits (the ICRC must catch each: the devices' drop_bad_icrc must equal the fabric's corrupts).
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 8
fault_rc corrupt_0_5 90 "default corrupt=0.5%" -- -q 4 -D 5
c=$(fab_ctr corrupts); i=$(( $(dev_ctr "$TMP/corrupt_0_5.client.log" drop_bad_icrc) + $(dev_ctr "$TMP/corrupt_0_5.server.log" drop_bad_icrc) ))
check "fabric corrupted packets ($c)" [ "$c" -gt 0 ]
check "the ICRC caught every corrupted packet: $i of $c" [ "$i" -eq "$c" ]
finish
