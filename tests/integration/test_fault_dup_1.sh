#!/bin/bash
# Fault matrix, profile "dup_1": 1% of the packets duplicated.
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 7
fault_rc dup_1 90 "default dup=1%" -- -q 4 -D 5
check "fabric duplicated packets ($(fab_ctr dups))" [ "$(fab_ctr dups)" -gt 0 ]
check "duplicates reached the responder ($(dev_ctr "$TMP/dup_1.server.log" dup_requests))" [ "$(dev_ctr "$TMP/dup_1.server.log" dup_requests)" -gt 0 ]
finish
