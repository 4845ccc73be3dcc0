#!/bin/bash
# Fault matrix, profile "reorder_2": 2% of the packets held back 200 us (reordering).
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 5
fault_rc reorder_2 90 "default reorder=0.02,200us" -- -q 4 -D 5
check "fabric reordered packets ($(fab_ctr reorders))" [ "$(fab_ctr reorders)" -gt 0 ]
check "no packet lost by the fabric" [ "$(fab_ctr drop_loss)" -eq 0 ]
finish
